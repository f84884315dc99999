//! # CSA106 shadowed-loop-marker
//!
//! ## What it does
//! Reports a loop marker that loses to another marker on the same
//! straight-line run before a loop. The compiler's search takes the first
//! marker in program order within a block, and the block nearest to the
//! loop first; the other marker is deleted without a message.
//!
//! ## Why it matters
//! Only one marker acts on a loop: `spmd` and `parallel_loop` imply each
//! other and `pipeline_loop` cannot be combined with `spmd`, so the second
//! marker is either redundant or silently ignored.
//!
//! ## Example
//! ```c
//! __builtin_csa_parallel_loop();
//! __builtin_csa_spmd(8, 0);      // ignored: the first marker wins
//! for (int i = 0; i < n; i++) a[i] = b[i];
//! ```
//!
//! ## How to fix
//! Keep the one marker you mean.
//!
//! ## Fix safety
//! The fix removes the ignored marker (and an `#ifdef __CSA__` wrapper that
//! holds nothing else). It is safe: the compiler deletes it anyway.

use super::FunctionContext;
use crate::clie::MarkerStatus;
use crate::diag::{Applicability, Code, Diagnostic};
use crate::diag::{Rule, Severity};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(106),
    name: "shadowed-loop-marker",
    severity: Severity::Warning,
    fixable: true,
    summary: "A loop marker loses to a nearer marker on the same loop and is silently deleted",
    source: include_str!("shadowed_loop_marker.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for m in &cx.clie.markers {
        let MarkerStatus::Shadowed { by, loop_id } = m.status else {
            continue;
        };
        let b = cx.func.builtin(m.builtin);
        let winner = cx.func.builtin(by);
        let loop_span = cx.loop_span(loop_id);
        out.push(
            Diagnostic::new(
                &RULE,
                b.span,
                format!(
                    "the {} marker is ignored: the loop at {} takes the {} marker at {} instead, and the compiler deletes this one",
                    cx.builtin_name(b),
                    cx.line(loop_span),
                    cx.builtin_name(winner),
                    cx.line(winner.span)
                ),
            )
            .with_related(winner.span, "this marker wins")
            .with_related(loop_span, "the loop both markers precede")
            .with_help("Keep only the marker you mean.")
            .with_fixes(cx.remove_marker_fix(b, Applicability::Safe)),
        );
    }
}
