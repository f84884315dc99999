; `#pragma` lines (also `# pragma`), wherever they sit: file scope or inside
; a function body. tree-sitter-c parses them as preproc_call.
; @directive: `#pragma`; @argument: the text after it (absent for a bare
; `#pragma`); @pragma: the whole line including its newline.
(preproc_call
  directive: (preproc_directive) @directive
  argument: (preproc_arg)? @argument
  (#match? @directive "^#[ \t]*pragma$")) @pragma
