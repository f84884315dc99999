//! # CSA001 syntax-error
//!
//! ## What it does
//! Reports the first place in a function (or at file level) where the
//! parser could not read the code. csa-lint still analyses everything the
//! parser recovered, so other functions are unaffected; the diagnostics of
//! this function may be incomplete.
//!
//! ## Why it matters
//! Verdicts about loops in a function with a syntax error rest on a guess of
//! what the code means. Code that the preprocessor would change can also
//! look like a syntax error: csa-lint blanks inactive `#if` branches and,
//! in free-form Fortran (`.F90`), expands the macros the file and the
//! headers it `#include`s define, but it does not expand macros in fixed
//! form, follow `#include`s it cannot read, or join `#if` branches that
//! only balance together.
//!
//! ## Example
//! ```c
//! void f(int *a, int n) {
//!   for (int i = 0; i < n; i++ {   // missing ')'
//!     a[i] = 0;
//! }
//! ```
//!
//! When the parser's error recovery runs past its time budget (1 s and
//! 5 us per byte, some 50 times an ordinary parse: only a long run of
//! erroneous code, such as a 100 kB line with a syntax error, comes near
//! it), the file is reported at its first line and not analysed at all,
//! rather than holding up the run.
//!
//! ## How to fix
//! Fix the syntax, or keep preprocessor conditionals around whole
//! statements.
//!
//! ## Fix safety
//! No fix.

use super::{FileContext, FunctionContext};
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(1),
    name: "syntax-error",
    severity: Severity::Info,
    fixable: false,
    summary: "The parser found a syntax error; analysis of that function may be partial",
    source: include_str!("syntax_error.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    if let Some(span) = cx.func.syntax_error {
        out.push(Diagnostic::new(
            &RULE,
            span,
            format!(
                "syntax error: the code here could not be parsed; the analysis of `{}` may be partial",
                cx.func.name
            ),
        ));
    }
}

pub(super) fn check_toplevel(cx: &FileContext, out: &mut Vec<Diagnostic>) {
    if cx.parse_gave_up {
        let len = cx.src.text().len();
        out.push(Diagnostic::new(
            &RULE,
            cx.toplevel_errors.first().copied().unwrap_or_default(),
            format!(
                "the parser gave up on this file: its error recovery took longer than {:.1} s (tree-sitter's recovery is slow on a long run of code with a syntax error, such as a very long line); nothing in the file is analysed",
                csa_grammars::parse_budget(len).as_secs_f64()
            ),
        ));
        return;
    }
    if let Some(&span) = cx.toplevel_errors.first() {
        out.push(Diagnostic::new(
            &RULE,
            span,
            "syntax error: the code here could not be parsed; it is skipped",
        ));
    }
}
