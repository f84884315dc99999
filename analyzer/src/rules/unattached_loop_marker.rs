//! # CSA105 unattached-loop-marker
//!
//! ## What it does
//! Reports a loop marker (`parallel_loop`, `spmd`, `spmdization`,
//! `pipeline_loop`) that no loop picks up. For each loop the compiler
//! searches backwards from the loop's preheader: it scans a block's
//! statements for the first marker and, if there is none, moves to the
//! block's single predecessor as long as that block is at the same loop
//! level. The search stops where control flow merges (after an `if`/`else`,
//! a `switch`, a label that is jumped to) or where another loop sits in
//! between. A marker no search reaches is deleted without any message.
//!
//! ## Why it matters
//! The loop you meant to parallelize runs sequentially, silently.
//!
//! ## Example
//! ```c
//! __builtin_csa_parallel_loop();
//! if (n > 100) scale = 2; else scale = 1;   // control flow merges here
//! for (int i = 0; i < n; i++) a[i] *= scale;
//! ```
//! Straight-line statements and early-exit guards such as
//! `if (n <= 0) return;` between the marker and the loop are fine.
//!
//! ## How to fix
//! Put the marker immediately before the loop it is meant for.
//!
//! ## Fix safety
//! The fix removes the marker (and an `#ifdef __CSA__` wrapper that holds
//! nothing else). It is safe: the compiler deletes the marker anyway.

use super::FunctionContext;
use crate::clie::{MarkerStatus, Unattached};
use crate::diag::{Applicability, Code, Diagnostic};
use crate::diag::{Rule, Severity};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(105),
    name: "unattached-loop-marker",
    severity: Severity::Warning,
    fixable: true,
    summary: "A loop marker that no loop finds is silently deleted",
    source: include_str!("unattached_loop_marker.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for m in &cx.clie.markers {
        let MarkerStatus::Unattached(why) = &m.status else {
            continue;
        };
        let b = cx.func.builtin(m.builtin);
        let name = cx.builtin_name(b);
        let head =
            format!("the {name} marker is not attached to any loop and the compiler deletes it");
        let d = match why {
            Unattached::Unreachable => Diagnostic::new(
                &RULE,
                b.span,
                format!("{head}: it is in code that never runs"),
            ),
            Unattached::NoLoopFollows => Diagnostic::new(
                &RULE,
                b.span,
                format!("{head}: no loop follows it in this function"),
            ),
            Unattached::LoopNotAnalysable { loop_span } => Diagnostic::new(
                &RULE,
                b.span,
                format!(
                    "{head}: the loop at {} is not a natural loop the compiler can expand",
                    cx.line(*loop_span)
                ),
            )
            .with_related(*loop_span, "this loop is not in normal form"),
            Unattached::Join {
                loop_span,
                at,
                preds,
            } => {
                let mut d = Diagnostic::new(
                    &RULE,
                    b.span,
                    format!(
                        "{head}: the search from the loop at {} stops where control flow merges{}",
                        cx.line(*loop_span),
                        at.map(|s| format!(" after the statement at {}", cx.line(s)))
                            .unwrap_or_default()
                    ),
                )
                .with_related(*loop_span, "the loop that follows the marker");
                if let Some(at) = at {
                    d = d.with_related(*at, "control flow merges after this statement, so the search for a marker stops here");
                }
                for p in preds {
                    d = d.with_related(*p, "one of the paths that merge");
                }
                d
            }
            Unattached::OtherLoop {
                loop_span,
                other_loop,
            } => {
                let mut d = Diagnostic::new(
                    &RULE,
                    b.span,
                    format!(
                        "{head}: the search from the loop at {} stops at {}",
                        cx.line(*loop_span),
                        match other_loop {
                            Some(o) => format!("the loop at {} in between", cx.line(*o)),
                            None => "a block at another loop level".to_string(),
                        }
                    ),
                )
                .with_related(*loop_span, "the loop that follows the marker");
                if let Some(o) = other_loop {
                    d = d.with_related(*o, "this loop sits between the marker and the loop");
                }
                d
            }
            Unattached::NotBefore { loop_span } => Diagnostic::new(
                &RULE,
                b.span,
                format!(
                    "{head}: it is not on the straight-line path that leads into the loop at {}",
                    cx.line(*loop_span)
                ),
            )
            .with_related(*loop_span, "the loop that follows the marker"),
        };
        out.push(
            d.with_help("Put the marker immediately before the loop it is meant for.")
                .with_fixes(cx.remove_marker_fix(b, Applicability::Safe)),
        );
    }
}
