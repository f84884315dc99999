! expect: !$omp parallel do private(t)
! expect: !$omp parallel do private(m, u)
! expect: !$omp parallel do private(w)
! Local arrays that a called subroutine fills on every call before the
! iteration reads them become private: a fill loop over a dummy of the
! actual's shape (its size passed as a literal), a fixed-size fill, an
! assumed-shape INTENT(OUT) dummy the callee also reads.
module fills
  implicit none
contains
  subroutine fill(a, k, c)
    integer :: k, j
    double precision :: a(k), c
    do j = 1, k
      a(j) = c + j
    end do
  end subroutine fill

  subroutine exact5(i, v)
    integer :: i, m
    double precision :: v(5)
    do m = 1, 5
      v(m) = dble(i * m)
    end do
  end subroutine exact5

  subroutine ramp(a, c)
    double precision, intent(out) :: a(:)
    double precision :: c
    integer :: j
    do j = 1, size(a)
      a(j) = c * j
    end do
    a(1) = a(2) - 1
  end subroutine ramp
end module fills

program callee_covers
  use fills
  implicit none
  integer, parameter :: n = 200
  integer :: i, m
  double precision :: x(n), y(n), z(n), q(n), t(16), u(5), w(8)
  do i = 1, n
    x(i) = dble(mod(i * 7, 13))
  end do
  call builtin_csa_parallel_loop()
  do i = 1, n
    call fill(t, 16, x(i))
    t(3) = t(3) * 2
    y(i) = t(1) + t(16) + t(3)
  end do
  call builtin_csa_parallel_loop()
  do i = 1, n
    call exact5(i, u)
    z(i) = 0
    do m = 1, 5
      z(i) = z(i) + u(m)
    end do
  end do
  call builtin_csa_parallel_loop()
  do i = 1, n
    call ramp(w, x(i))
    q(i) = w(1) * w(8)
  end do
  print '(f14.4)', sum(y), sum(z), sum(q)
end program callee_covers
