! Annotated Fortran loops that show what csa-lint reports.
module stencil
  implicit none
contains
  subroutine smooth(a, b, n)
    integer :: n, i
    real :: a(n), b(n)
    call builtin_csa_parallel_loop()
    do i = 2, n - 1
      b(i) = (a(i - 1) + a(i) + a(i + 1)) / 3.0
    end do
  end subroutine smooth

  ! CSA101: EXIT between the read and the write.
  subroutine smooth_until_negative(a, b, n)
    integer :: n, i
    real :: a(n), b(n)
    call builtin_csa_parallel_loop()
    do i = 2, n - 1
      if (a(i) < 0.0) exit
      b(i) = (a(i - 1) + a(i) + a(i + 1)) / 3.0
    end do
  end subroutine smooth_until_negative

  ! CSA107: a variable argument; CSA108: spmdization is C only.
  subroutine workers(b, n, nw)
    integer :: n, nw, i
    real :: b(n)
    call builtin_csa_spmd(nw, 0)
    do i = 1, n
      b(i) = 0.0
    end do
    call builtin_csa_spmdization(4, 'cyclic')
    do i = 1, n
      b(i) = 1.0
    end do
  end subroutine workers
end module stencil
