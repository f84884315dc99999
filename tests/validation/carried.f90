! expect-refused: prev
program carried
  implicit none
  integer :: i, a(100), b(100), prev
  do i = 1, 100
    a(i) = i * 3
  end do
  prev = 0
  call builtin_csa_parallel_loop()
  do i = 1, 100
    b(i) = a(i) + prev
    prev = a(i)
  end do
  print *, sum(b), prev
end program
