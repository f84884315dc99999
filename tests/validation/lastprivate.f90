! expect: !$omp parallel do lastprivate(i, last)
program lastprivate_prog
  implicit none
  integer :: i, a(300), b(300), last, s
  do i = 1, 300
    a(i) = mod(i * i, 97)
  end do
  last = -1
  call builtin_csa_parallel_loop()
  do i = 1, 300
    last = a(i) + i
    b(i) = last * 2
  end do
  s = sum(b)
  print *, i, last, s
end program
