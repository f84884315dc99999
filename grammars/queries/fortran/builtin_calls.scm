; Calls of CSA builtins in Fortran, case-insensitive:
; `call builtin_csa_parallel_loop()` (subroutine_call) and
; `w = builtin_csa_spmd_worker_num()` (call_expression).
; @name: the callee identifier; @call: the subroutine_call or call_expression.
(subroutine_call
  subroutine: (identifier) @name
  (#match? @name "(?i)^builtin_csa_")) @call

(call_expression
  .
  (identifier) @name
  (#match? @name "(?i)^builtin_csa_")) @call
