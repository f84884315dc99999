//! # CSA102 no-memory-operations
//!
//! ## What it does
//! Reports a loop marked with `parallel_loop` that contains no memory
//! operation and no inner loop once the compiler has optimised it: scalar
//! locals live in registers, local arrays indexed only by constants are
//! split into registers, and loads whose address does not change are hoisted
//! out of the loop. The compiler prints
//! `!! WARNING: NO MEMORY OPERATIONS IN LOOP !!`.
//!
//! ## Why it matters
//! `parallel_loop` only relaxes the ordering of memory operations between
//! iterations. Without any, the marker does nothing, which usually means
//! the loop is not the one you meant to mark or its work was optimised into
//! registers.
//!
//! ## Example
//! ```c
//! int sum = 0;
//! __builtin_csa_parallel_loop();
//! for (int i = 0; i < n; i++) sum += i * i;   // registers only
//! ```
//!
//! ## How to fix
//! Remove the marker, or mark the loop that does the memory work. To split
//! a register-only loop across workers, use `__builtin_csa_spmd(W, C)`,
//! which does not warn here.
//!
//! ## Fix safety
//! The fix removes the marker. It is unsafe: it drops what the marker
//! asserts, which matters again if the loop later gains memory operations.

use super::FunctionContext;
use crate::clie::Outcome;
use crate::diag::{Applicability, Code, Diagnostic};
use crate::diag::{Rule, Severity};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(102),
    name: "no-memory-operations",
    severity: Severity::Warning,
    fixable: true,
    summary: "A loop marked parallel has no memory operations, so the marker does nothing",
    source: include_str!("no_memory_operations.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for v in &cx.clie.verdicts {
        if v.outcome != Outcome::NoMemoryOperations {
            continue;
        }
        let marker = cx.func.builtin(v.marker);
        let loop_span = cx.loop_span(v.loop_id);
        let mut d = Diagnostic::new(
            &RULE,
            marker.span,
            format!(
                "NO MEMORY OPERATIONS IN LOOP: the loop at {} has no memory operation after optimisation (its scalars live in registers and invariant loads are hoisted), so parallel_loop has no effect",
                cx.line(loop_span)
            ),
        )
        .with_related(loop_span, "the marked loop");
        for op in &cx.memory.ops {
            if op.orig_block != op.block && cx.forest.contains(v.loop_id, op.orig_block.0) {
                d = d.with_related(op.span, "this load is hoisted out of the loop");
            }
        }
        out.push(
            d.with_help(
                "Remove the marker, or use __builtin_csa_spmd(W, C) to spread a register-only loop over workers.",
            )
            .with_fixes(cx.remove_marker_fix(marker, Applicability::Unsafe)),
        );
    }
}
