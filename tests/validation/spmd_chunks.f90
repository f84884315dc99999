! expect: !$omp parallel do num_threads(4) schedule(static) reduction(+:s0)
! expect: !$omp parallel do num_threads(4) schedule(static, 1) reduction(+:s1)
! expect: !$omp parallel do num_threads(4) schedule(static, 8) private(t) reduction(*:p)
program spmd_chunks
  implicit none
  integer :: i, a(777), s0, s1, t
  integer(kind=8) :: p
  do i = 1, 777
    a(i) = mod(i, 13)
  end do
  s0 = 0
  s1 = 0
  p = 1
  call builtin_csa_spmd(4, 0)
  do i = 1, 777
    s0 = s0 + a(i)
  end do
  call builtin_csa_spmd(4, 1)
  do i = 1, 777
    s1 = s1 + a(i) * i
  end do
  call builtin_csa_spmd(4, 8)
  do i = 1, 60
    t = mod(i, 3)
    if (t == 0) t = 2
    p = p * t
  end do
  print *, s0, s1, p
end program
