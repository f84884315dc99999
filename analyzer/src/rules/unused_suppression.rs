//! # CSA402 unused-suppression
//!
//! ## What it does
//! Reports a suppression comment, or one code in it, that suppresses
//! nothing: no diagnostic with that code is anchored on the line it covers
//! (or anywhere in the file, for `ignore-file`), or the code is not a
//! csa-lint code at all.
//!
//! Suppressions are written `// csa-lint: ignore[CSA101]` in C (also inside
//! `/* */`) and `! csa-lint: ignore[CSA101]` in Fortran, at the end of the
//! line a diagnostic is anchored on or alone on the line above it; several
//! codes are comma-separated and a bare `ignore` covers every code.
//! `csa-lint: ignore-file[CODES]` anywhere covers the whole file. The
//! matching is done in `analyzer::suppress`; this file holds the rule's
//! documentation.
//!
//! ## Why it matters
//! A stale suppression hides the next real problem on that line, and a
//! misspelt code suppresses nothing while looking like it does.
//!
//! ## Example
//! ```c
//! __builtin_csa_parallel_loop(); // csa-lint: ignore[CSA101]
//! for (int i = 0; i < n; i++) a[i] = b[i];   // parallelizes: nothing to ignore
//! ```
//!
//! ## How to fix
//! Remove the suppression or the code that no longer applies, or fix the
//! code's spelling. CSA402 itself can only be silenced file-wide
//! (`csa-lint: ignore-file[CSA402]`).
//!
//! ## Fix safety
//! The fix removes the suppression comment (or, when other codes of it
//! are used, just the unused code). It is safe: the comment suppresses
//! nothing.
