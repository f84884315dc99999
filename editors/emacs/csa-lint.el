;;; csa-lint.el --- csa-lsp with eglot  -*- lexical-binding: t; -*-

;; Load from your init file: (load "/path/to/editors/emacs/csa-lint.el")
;; Works with Emacs 29+ (eglot built in) and with Emacs 28 plus the eglot
;; package (1.9 or later, e.g. Debian 12's elpa-eglot).
;;
;; Eglot runs one server per major mode: this makes csa-lsp the server of
;; C and Fortran buffers (use `M-x eglot' in them, or `eglot-ensure' from a
;; mode hook). To keep clangd for C, drop the C modes from the list below.
;; Modes your Emacs does not have (c-ts-mode before Emacs 29) are ignored.
;;
;; The server is `csa-lint-server-program' ("csa-lsp", looked up on
;; `exec-path'); set it to an absolute path before loading this file to
;; use another binary.

(require 'eglot)

(defvar csa-lint-server-program "csa-lsp"
  "The csa-lsp executable: a name looked up on `exec-path', or a path.")

(defvar csa-lint-server-args nil
  "Extra command-line arguments for csa-lsp.")

;; The language ids are the ones VS Code uses; csa-lsp decides by the file's
;; extension first, so they matter only for files without a known one.
(add-to-list 'eglot-server-programs
             `(((c-mode :language-id "c")
                (c-ts-mode :language-id "c")
                (f90-mode :language-id "fortran")
                (fortran-mode :language-id "FortranFixedForm"))
               . (,csa-lint-server-program ,@csa-lint-server-args)))

;; Settings, as in the VS Code extension (all optional):
;; (setq-default eglot-workspace-configuration
;;               '(:csa-lint (:select ["CSA1" "CSA2" "CSA5"])))

(provide 'csa-lint)
;;; csa-lint.el ends here
