! expect: !$omp parallel do private(c)
! expect: !$omp parallel do private(j, s, w)
! expect: !$omp parallel do private(z)
! expect-ivdep-refused: c
! Local arrays that several writes fill together before each iteration
! reads them: two elements read as a section, two halves written by two
! inner loops, a section and an element, two rows written whole.
program array_unions
  implicit none
  integer, parameter :: n = 300
  integer :: k, j
  double precision :: u(2, n), x(n), v(n), c(2), w(8), s(5), z(2, 3)
  do k = 1, n
    u(1, k) = dble(mod(k * 13, 17))
    u(2, k) = dble(mod(k * 5, 11))
    x(k) = dble(mod(k * 7, 23))
  end do
  call builtin_csa_parallel_loop()
  do k = 1, n
    c(1) = u(1, k)
    c(2) = u(2, k) * 2
    v(k) = sum(c(1:2))
  end do
  call builtin_csa_parallel_loop()
  do k = 1, n
    do j = 1, 4
      w(j) = x(k) * j
    end do
    do j = 5, 8
      w(j) = x(k) - j
    end do
    s(1:4) = x(k)
    s(5) = 1
    do j = 1, 8
      v(k) = v(k) + w(j)
    end do
    v(k) = v(k) + sum(s(1:5))
  end do
  call builtin_csa_parallel_loop()
  do k = 1, n
    z(1, :) = x(k)
    z(2, :) = 2 * x(k)
    v(k) = v(k) + sum(z(1:2, 3))
  end do
  print '(f14.4)', sum(v)
end program array_unions
