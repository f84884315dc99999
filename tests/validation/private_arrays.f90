! expect: !$omp parallel do private(i1, j1, t, w)
! expect: !$omp parallel do private(i1, j1, y2, x1)
! expect: !$omp parallel do private(m) reduction(+:rms)
! expect: !$omp parallel do private(c)
! expect: !$omp parallel do private(w, z)
! Local arrays each iteration fills before it reads them (an inner loop, a
! stride-2 inner loop, constant subscripts) become private; element
! updates of a small array become an array reduction.
program private_arrays
  implicit none
  integer, parameter :: n = 64, m1 = 40
  integer :: i, j1, i1, m, k
  double precision :: r(m1, n), s(m1, n), w(8), x1(m1), y2, t
  double precision :: rms(5), u(5, n), c(2), out(n), z(4, 8)
  do i = 1, n
    do i1 = 1, m1
      r(i1, i) = dble(mod(i1 * 7 + i * 3, 11))
    end do
    do m = 1, 5
      u(m, i) = dble(mod(m * i, 7)) - 3.0d0
    end do
  end do
  s = 0.0d0
  call builtin_csa_parallel_loop()
  do i = 1, n
    do j1 = 1, 8
      w(j1) = r(j1, i) * j1
    end do
    t = 0.0d0
    do i1 = 1, 8
      t = t + w(i1) * w(9 - i1)
    end do
    s(1, i) = t
  end do
  call builtin_csa_parallel_loop()
  do i = 2, n - 1
    do j1 = 2, m1 / 2
      i1 = 2 * j1 - 1
      x1(i1 - 1) = r(i1 - 1, i - 1) + r(i1 - 1, i + 1)
    end do
    do j1 = 2, m1 / 2 - 1
      i1 = 2 * j1 - 1
      y2 = r(i1, i)
      s(j1, i) = s(j1, i) + 0.5d0 * (x1(i1 - 1) + x1(i1 + 1)) + y2
    end do
  end do
  rms = 0.0d0
  call builtin_csa_parallel_loop()
  do i = 1, n
    do m = 1, 5
      rms(m) = rms(m) + u(m, i) * u(m, i)
    end do
  end do
  call builtin_csa_parallel_loop()
  do k = 1, n
    c(1) = u(1, k) + u(2, k)
    c(2) = u(3, k) * 2.0d0
    out(k) = c(1) * c(2)
  end do
  call builtin_csa_parallel_loop()
  do k = 1, n
    w = u(1, k) * k
    z(:, 3) = u(2, k)
    out(k) = out(k) + w(1) * w(8) - z(4, 3)
  end do
  print '(f14.4)', sum(s), sum(rms), sum(out)
end program private_arrays
