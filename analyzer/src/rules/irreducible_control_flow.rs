//! # CSA002 irreducible-control-flow
//!
//! ## What it does
//! Reports a cycle with more than one entry: a `goto` (C) or `GO TO`
//! (Fortran) that jumps into the middle of a loop, or a C `switch` whose
//! `case` labels sit inside a loop (Duff's device; one diagnostic on the
//! `switch`, with every label that enters the loop). Such a cycle is not a
//! natural loop; the CSA compiler stops with the fatal error
//! "Irreducible CFG located". csa-lint skips the loops involved.
//!
//! ## Why it matters
//! The file does not compile for CSA.
//!
//! ## Example
//! ```c
//! if (n > 10) goto middle;
//! for (int i = 0; i < n; i++) {
//!   a[i] = 0;
//! middle:
//!   b[i] = 1;
//! }
//! ```
//!
//! ## How to fix
//! Restructure the code so that every loop is entered only through its
//! start (duplicate the code before the jump target, or use a flag).
//!
//! ## Fix safety
//! No fix.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::BlockId;
use crate::source::Span;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(2),
    name: "irreducible-control-flow",
    severity: Severity::Error,
    fixable: false,
    summary: "A loop with two entries (goto into a loop): the compiler stops with a fatal error",
    source: include_str!("irreducible_control_flow.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    if cx.irreducible_edges.is_empty() {
        return;
    }
    // The jumps that enter an irreducible region from outside: the ones that
    // are statements (a goto, not a fall-through) give the region its extra
    // entry.
    let region = cx.forest.irreducible_blocks();
    let mut entries: Vec<(Span, BlockId)> = Vec::new();
    for (u, succs) in cx.succs.iter().enumerate() {
        if region.binary_search(&(u as u32)).is_ok()
            || !cx.reachable.get(u).copied().unwrap_or(false)
        {
            continue;
        }
        for &v in succs {
            if region.binary_search(&v).is_ok() {
                if let Some(span) = cx.func.block(BlockId(u as u32)).term.span {
                    entries.push((span, BlockId(v)));
                }
            }
        }
    }
    entries.sort();
    entries.dedup();
    if entries.is_empty() {
        // No jump statement enters the region: anchor on its first
        // retreating edge's target.
        let (src, dst) = cx.irreducible_edges[0];
        let anchor = cx
            .func
            .block(BlockId(dst))
            .origin
            .or(cx.func.block(BlockId(src)).term.span)
            .unwrap_or(cx.func.name_span);
        entries.push((anchor, BlockId(dst)));
    }
    // One diagnostic per jump: a `switch` that enters a loop at several
    // `case` labels (Duff's device) lists every target.
    for group in entries.chunk_by(|a, b| a.0 == b.0) {
        let anchor = group[0].0;
        let mut d = Diagnostic::new(
            &RULE,
            anchor,
            "Irreducible CFG located: this jump enters a loop in the middle, so the loop has two entries and is not a natural loop; the CSA compiler stops with a fatal error",
        );
        for &(_, target) in group {
            if let Some(o) = cx.func.block(target).origin {
                if o != anchor {
                    d = d.with_related(o, "the jump target, inside the loop");
                }
            }
        }
        out.push(d.with_help("Enter every loop only through its start."));
    }
}
