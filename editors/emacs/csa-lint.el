;;; csa-lint.el --- csa-lsp with eglot  -*- lexical-binding: t; -*-

;; Load from your init file: (load "/path/to/editors/emacs/csa-lint.el")
;; Eglot runs one server per major mode: this makes csa-lsp the server of
;; C and Fortran buffers (use `M-x eglot' in them). To keep clangd for C,
;; drop the C modes from the list below.

(require 'eglot)

(add-to-list 'eglot-server-programs
             '((c-mode c-ts-mode f90-mode fortran-mode) . ("csa-lsp")))

;; Settings, as in the VS Code extension (all optional):
;; (setq-default eglot-workspace-configuration
;;               '(:csa-lint (:select ["CSA1" "CSA2" "CSA5"])))

(provide 'csa-lint)
;;; csa-lint.el ends here
