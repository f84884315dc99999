! expect: !$omp parallel do private(t) reduction(+:s)
! expect: !$omp end parallel do
program sum_private
  implicit none
  integer :: i, a(1000), s, t
  do i = 1, 1000
    a(i) = mod(i * 7919, 1009)
  end do
  s = 0
  call builtin_csa_parallel_loop()
  do i = 1, 1000
    t = a(i) * 3 + 1
    s = s + t
  end do
  print *, s
end program
