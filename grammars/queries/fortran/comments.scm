; Every `!` comment. OpenMP (`!$omp parallel do`), `!DIR$ IVDEP`,
; `!GCC$ ivdep` directives and csa-lint suppressions are comments to
; tree-sitter-fortran: read their text.
(comment) @comment
