//! # CSA104 could-not-pipeline
//!
//! ## What it does
//! Reports `__builtin_csa_pipeline_loop(D)` with a negative depth `D`: CLIE
//! (`CSALoopIntrinsicExpander.cpp`) prints `!! WARNING: COULD NOT PIPELINE
//! INNER LOOP !!` and does not pipeline the loop. A depth that is not an
//! integer constant once SROA has run (a local set once from a constant is
//! one) is worse: clang accepts it, and CLIE, which expects a constant,
//! fails an assertion (or dereferences null in a release build), so the
//! compiler crashes; that is reported here too, as an error of the build.
//!
//! ## Why it matters
//! The inner loop runs one iteration at a time, although you asked for
//! pipelining.
//!
//! ## Example
//! ```c
//! for (int i = 0; i < n; i++) {
//!   __builtin_csa_pipeline_loop(-1);
//!   for (int j = 0; j < m; j++) s[i] += a[i * m + j];
//! }
//! ```
//!
//! ## How to fix
//! Use 0 to let the compiler choose the number of concurrent iterations, or
//! a positive maximum.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::clie::Outcome;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::*;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(104),
    name: "could-not-pipeline",
    severity: Severity::Warning,
    fixable: false,
    summary: "A pipeline_loop marker has a negative depth",
    source: include_str!("could_not_pipeline.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for v in &cx.clie.verdicts {
        if v.outcome != Outcome::BadPipelineDepth {
            continue;
        }
        let b = cx.func.builtin(v.marker);
        let (span, msg) = match b.args.first() {
            Some(BuiltinArg {
                value: ArgValue::Int(d),
                span,
            }) => (
                *span,
                format!("COULD NOT PIPELINE INNER LOOP: the pipelining depth must be 0 (compiler's choice) or positive, got {d}"),
            ),
            Some(a) => (
                a.span,
                "the pipelining depth is not an integer constant: the compiler does not check it, and CLIE, which expects one, crashes (an assertion, or a null dereference in a release build)".to_string(),
            ),
            None => (
                b.span,
                "COULD NOT PIPELINE INNER LOOP: pipeline_loop needs a depth".to_string(),
            ),
        };
        out.push(
            Diagnostic::new(&RULE, span, msg)
                .with_related(cx.loop_span(v.loop_id), "the loop that is not pipelined"),
        );
    }
}
