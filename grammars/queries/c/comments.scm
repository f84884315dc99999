; Every comment, `/* ... */` and `// ...` (suppressions live here).
(comment) @comment
