! expect: !$omp parallel do reduction(ior:bits) reduction(max:mx) reduction(min:mn)
program max_min_bits
  implicit none
  integer :: i, a(5000), mx, mn, bits
  do i = 1, 5000
    a(i) = mod(i * 104729, 50021)
  end do
  mx = -1
  mn = 1000000
  bits = 0
  call builtin_csa_parallel_loop()
  do i = 1, 5000
    mx = max(mx, a(i))
    if (a(i) < mn) mn = a(i)
    bits = ior(bits, iand(a(i), 255))
  end do
  print *, mx, mn, bits
end program
