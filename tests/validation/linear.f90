! expect: !$omp parallel do linear(j:2)
! An induction variable stepped by a constant on every iteration becomes
! linear with that step; its value after the loop is the sequential one.
program linear_step
  implicit none
  integer :: i, j, k, c(700), a(300)
  do i = 1, 300
    a(i) = mod(i * 13, 17)
  end do
  c = 0
  j = 3
  call builtin_csa_parallel_loop()
  do i = 1, 300
    c(j) = c(j) + a(i)
    j = j + 2
  end do
  print *, j, sum(c * (/ (mod(k, 5), k = 1, 700) /))
end program linear_step
