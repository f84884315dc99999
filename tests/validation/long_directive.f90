! expect: !$omp parallel do num_threads(4) schedule(static) &
! expect: !$omp& private(temporary_alpha, temporary_beta, temporary_delta, temporary_epsilon, temporary_gamma) &
! expect: !$omp& reduction(+:accumulated_sum)
program long_directive
  implicit none
  integer :: i, a(500)
  integer :: temporary_alpha, temporary_beta, temporary_gamma, temporary_delta
  integer :: temporary_epsilon, accumulated_sum
  do i = 1, 500
    a(i) = mod(i * 37, 101)
  end do
  accumulated_sum = 0
  call builtin_csa_spmd(4, 0)
  do i = 1, 500
    temporary_alpha = a(i) + 1
    temporary_beta = temporary_alpha * 2
    temporary_gamma = temporary_beta - 3
    temporary_delta = temporary_gamma * temporary_alpha
    temporary_epsilon = mod(temporary_delta, 17)
    accumulated_sum = accumulated_sum + temporary_epsilon
  end do
  print *, accumulated_sum
end program
