;;; csa-lint-test.el --- batch test of csa-lint.el with eglot  -*- lexical-binding: t; -*-

;; Run (from anywhere):
;;   CSA_LSP=/path/to/csa-lsp emacs --batch -l editors/emacs/test/csa-lint-test.el
;; or through scripts/editor_e2e.sh --emacs, which builds csa-lsp first.
;;
;; Loads editors/emacs/csa-lint.el, opens a C file with a CSA105 finding in
;; a temporary directory, runs `M-x eglot' (csa-lsp from $CSA_LSP), waits
;; for the flymake diagnostic, asks the server for quick fixes on it,
;; applies "Remove the parallel_loop marker" and checks the buffer, then
;; shuts the server down.
;;
;; Exit status: 0 passed (last line "PASS: ..."), or skipped (last line
;; "SKIP: ...": eglot is not installed); 1 failed ("FAIL: ...").
;; CSA_E2E_TIMEOUT (seconds, default 60) bounds each wait.

(require 'cl-lib)

(defvar csa-test--dir nil "The temporary directory holding the C file.")

(defun csa-test--say (fmt &rest args)
  (princ (concat "emacs: " (apply #'format fmt args) "\n")))

(defun csa-test--cleanup ()
  (ignore-errors
    (when (fboundp 'eglot-shutdown-all)
      (eglot-shutdown-all)))
  (when (and csa-test--dir (file-directory-p csa-test--dir))
    (ignore-errors (delete-directory csa-test--dir t))))

(defun csa-test--finish (status fmt &rest args)
  "Print STATUS (PASS, FAIL or SKIP) and the message, clean up, exit."
  (princ (format "%s: %s\n" status (apply #'format fmt args)))
  (unless (equal status "PASS")
    (let ((events (and (fboundp 'eglot-current-server)
                       (ignore-errors (eglot-current-server)))))
      (when events
        (with-current-buffer (jsonrpc-events-buffer events)
          (princ "---- last eglot events ----\n")
          (princ (buffer-substring-no-properties
                  (max (point-min) (- (point-max) 4000)) (point-max)))
          (princ "\n")))))
  (csa-test--cleanup)
  (kill-emacs (if (equal status "FAIL") 1 0)))

(defun csa-test--timeout ()
  (let ((s (getenv "CSA_E2E_TIMEOUT")))
    (if (and s (> (string-to-number s) 0)) (string-to-number s) 60)))

(defun csa-test--wait (what pred)
  "Run the event loop until PRED returns non-nil; fail naming WHAT on timeout."
  (let ((deadline (+ (float-time) (csa-test--timeout)))
        value)
    (while (and (not (setq value (funcall pred)))
                (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value
        (csa-test--finish "FAIL" "timed out after %ss waiting for %s"
                          (csa-test--timeout) what))))

(defconst csa-test--source
  "/* csa-lint editor test: the marker below has no loop to attach to. */
void scale(int *a, int n, int k) {
#ifdef __CSA__
  __builtin_csa_parallel_loop();
#endif
  a[0] = n * k;
}
"
  "A C file whose only finding is CSA105 on line 4.")

(defconst csa-test--fortran
  "subroutine s(a, n)
  integer :: n, i
  real :: a(n)
  call builtin_csa_spmdization(4, 'cyclic')
  do i = 1, n
    a(i) = 0.0
  end do
end subroutine s
"
  "A Fortran file with CSA108 (spmdization does not exist in Fortran).")

(defun csa-test--main ()
  (unless (require 'eglot nil t)
    (csa-test--finish "SKIP" "eglot is not installed (Emacs %s; apt-get install elpa-eglot, or use Emacs 29+)"
                      emacs-version))
  (let ((lsp (getenv "CSA_LSP")))
    (unless (and lsp (file-executable-p lsp))
      (csa-test--finish "FAIL" "CSA_LSP must name the csa-lsp binary (got %S)" lsp))
    ;; csa-lint.el reads this when loaded.
    (defvar csa-lint-server-program)
    (setq csa-lint-server-program (expand-file-name lsp)))
  (setq csa-test--dir (file-name-as-directory (make-temp-file "csa-emacs-" t)))
  (setq user-emacs-directory (expand-file-name "emacs.d/" csa-test--dir))
  (let* ((here (file-name-directory (or load-file-name buffer-file-name)))
         (config (expand-file-name "../csa-lint.el" here))
         (file (expand-file-name "scale.c" csa-test--dir))
         (eglot-version (or (ignore-errors
                              (require 'lisp-mnt)
                              (lm-version (locate-library "eglot.el" t)))
                            "?")))
    (load config nil t)
    (csa-test--say "Emacs %s, eglot %s (%s), config %s"
                   emacs-version eglot-version (locate-library "eglot") config)
    (with-temp-file file (insert csa-test--source))
    (find-file file)
    (unless (eq major-mode 'c-mode)
      (csa-test--finish "FAIL" "%s opened in %s, not c-mode" file major-mode))
    ;; What `M-x eglot' does, without a prompt: csa-lint.el's entry decides
    ;; the server for c-mode.
    (call-interactively #'eglot)
    (let ((server (csa-test--wait "eglot to connect to csa-lsp"
                                  (lambda () (and (bound-and-true-p eglot--managed-mode)
                                                  (eglot-current-server))))))
      (csa-test--say "eglot manages %s with %S"
                     (file-name-nondirectory file)
                     (process-command (jsonrpc--process server)))
      ;; In batch there is no command loop to run flymake's deferred start.
      (flymake-start nil t)
      (let* ((diag (csa-test--wait
                    "a flymake diagnostic with CSA105"
                    (lambda ()
                      (cl-find-if (lambda (d) (string-match-p "\\[CSA105\\]" (flymake-diagnostic-text d)))
                                  (flymake-diagnostics)))))
             (line (line-number-at-pos (flymake-diagnostic-beg diag)))
             (text (flymake-diagnostic-text diag)))
        (csa-test--say "flymake: line %d, %s: %s" line (flymake-diagnostic-type diag) text)
        (unless (= line 4)
          (csa-test--finish "FAIL" "CSA105 on line %d, expected line 4" line))
        (unless (string-match-p "^csa-lint \\[CSA105\\]: the parallel_loop marker is not attached to any loop" text)
          (csa-test--finish "FAIL" "unexpected message: %s" text))
        (unless (memq (flymake-diagnostic-type diag) '(eglot-warning :warning))
          (csa-test--finish "FAIL" "CSA105 has type %s, expected a warning" (flymake-diagnostic-type diag)))
        ;; The quick fixes offered on the diagnostic (what `M-x eglot-code-actions'
        ;; lists there), and the removal applied as choosing it would.
        (let* ((actions (eglot-code-actions (flymake-diagnostic-beg diag)
                                            (flymake-diagnostic-end diag)
                                            "quickfix"))
               (titles (mapcar (lambda (a) (plist-get a :title)) actions))
               (remove (cl-find-if (lambda (a) (string-prefix-p "Remove the parallel_loop marker"
                                                               (plist-get a :title)))
                                   actions)))
          (csa-test--say "quick fixes: %S" titles)
          (unless remove
            (csa-test--finish "FAIL" "no \"Remove the parallel_loop marker\" quick fix among %S" titles))
          (if (fboundp 'eglot-execute)
              (eglot-execute server remove)
            (eglot--apply-workspace-edit (plist-get remove :edit)))
          (let ((after (buffer-substring-no-properties (point-min) (point-max))))
            (when (or (string-match-p "parallel_loop()" after)
                      (string-match-p "#ifdef __CSA__" after)
                      (not (string-match-p "  a\\[0\\] = n \\* k;" after)))
              (csa-test--finish "FAIL" "the buffer after %S is:\n%s" (plist-get remove :title) after))
            (csa-test--say "applied %S; the marker and its #ifdef are gone" (plist-get remove :title))))
        ;; A Fortran buffer goes to the same server (f90-mode is in the list).
        (set-buffer-modified-p nil)
        (let ((ffile (expand-file-name "sum.f90" csa-test--dir)))
          (with-temp-file ffile (insert csa-test--fortran))
          (find-file ffile)
          (unless (eq major-mode 'f90-mode)
            (csa-test--finish "FAIL" "%s opened in %s, not f90-mode" ffile major-mode))
          (eglot-ensure)
          ;; `eglot-ensure' connects from `post-command-hook'; run it by hand.
          (run-hooks 'post-command-hook)
          (csa-test--wait "eglot to manage sum.f90"
                          (lambda () (bound-and-true-p eglot--managed-mode)))
          (unless (eq (eglot-current-server) server)
            (csa-test--finish "FAIL" "sum.f90 got another server than scale.c"))
          (flymake-start nil t)
          (let ((fdiag (csa-test--wait
                        "a flymake diagnostic with CSA108 in sum.f90"
                        (lambda ()
                          (cl-find-if (lambda (d) (string-match-p "\\[CSA108\\]" (flymake-diagnostic-text d)))
                                      (flymake-diagnostics))))))
            (csa-test--say "flymake: sum.f90 line %d: %s"
                           (line-number-at-pos (flymake-diagnostic-beg fdiag))
                           (car (split-string (flymake-diagnostic-text fdiag) "\n")))))
        ;; The server answers the shutdown and ends.
        (let ((proc (jsonrpc--process server)))
          (eglot-shutdown server)
          (csa-test--wait "csa-lsp to end after shutdown"
                          (lambda () (not (process-live-p proc))))
          (csa-test--say "eglot shut csa-lsp down (process %s, %s)"
                         (process-status proc) (process-exit-status proc)))
        (csa-test--finish "PASS" "Emacs %s + eglot %s: CSA105 and CSA108 shown by flymake, quick fix applied"
                          emacs-version eglot-version)))))

(condition-case err
    (csa-test--main)
  (error (csa-test--finish "FAIL" "error: %S" err)))

;;; csa-lint-test.el ends here
