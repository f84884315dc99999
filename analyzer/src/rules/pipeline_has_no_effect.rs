//! # CSA109 pipeline-has-no-effect
//!
//! ## What it does
//! Reports `pipeline_loop(D)` on a loop that is not nested inside another
//! loop, or with depth 1. Pipelining (ILPL) overlaps iterations of an inner
//! loop; an outermost loop is not pipelined, and a depth of 1 allows one
//! iteration at a time, which is no pipelining.
//!
//! ## Why it matters
//! The marker suggests an optimisation that does not happen.
//!
//! ## Example
//! ```c
//! __builtin_csa_pipeline_loop(0);
//! for (int j = 0; j < m; j++) s += a[j];   // not inside another loop
//! ```
//!
//! ## How to fix
//! Put the marker on an inner loop and use depth 0 (compiler's choice) or
//! more than 1; or remove it.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::clie::Outcome;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(109),
    name: "pipeline-has-no-effect",
    severity: Severity::Info,
    fixable: false,
    summary: "pipeline_loop on a loop that is not nested in a loop, or with depth 1, does nothing",
    source: include_str!("pipeline_has_no_effect.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for v in &cx.clie.verdicts {
        let Outcome::Pipelined { depth } = v.outcome else {
            continue;
        };
        let b = cx.func.builtin(v.marker);
        let loop_span = cx.loop_span(v.loop_id);
        let nested = cx.forest.loops[v.loop_id.0 as usize].parent.is_some();
        let msg = if !nested {
            format!(
                "pipeline_loop has no effect: the loop at {} is not nested inside another loop, and only inner loops are pipelined",
                cx.line(loop_span)
            )
        } else if depth == 1 {
            "pipeline_loop(1) has no effect: a depth of 1 allows one iteration at a time"
                .to_string()
        } else {
            continue;
        };
        out.push(
            Diagnostic::new(&RULE, b.span, msg)
                .with_related(loop_span, "the marked loop")
                .with_help("Mark an inner loop, with depth 0 (compiler's choice) or more than 1."),
        );
    }
}
