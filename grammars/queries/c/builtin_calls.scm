; Calls of CSA compiler builtins: `__builtin_csa_parallel_loop()`,
; `__builtin_csa_spmd(W, C)`, `__builtin_csa_parallel_region_entry(id)`, ...
; @name: the callee identifier; @call: the whole call_expression.
(call_expression
  function: (identifier) @name
  (#match? @name "^__builtin_csa_")) @call
