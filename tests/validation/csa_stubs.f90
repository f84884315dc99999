! Empty CSA builtins for building the Fortran validation programs.
subroutine builtin_csa_parallel_loop()
end subroutine
subroutine builtin_csa_spmd(w, c)
  integer :: w, c
end subroutine
subroutine builtin_csa_pipeline_loop(d)
  integer :: d
end subroutine
