//! # CSA110 worker-num-outside-spmd
//!
//! ## What it does
//! Reports `__builtin_csa_spmd_worker_num()` (Fortran
//! `builtin_csa_spmd_worker_num()`) outside a loop that LoopSPMDization
//! splits into workers under an `spmd` or `spmdization` marker: outside
//! such loops, in a loop CLIE does not expand, with one worker, or where
//! the split is not performed (CSA103, CSA111, CSA112).
//! `CSAIntrinsicCleaner` deletes the call there, and everything computed
//! from it, without a message (it is never replaced by 0).
//!
//! ## Why it matters
//! Code you wrote silently disappears from the program.
//!
//! ## Example
//! ```c
//! __builtin_csa_parallel_loop();           // not spmd
//! for (int i = 0; i < n; i++)
//!   owner[i] = __builtin_csa_spmd_worker_num();
//! ```
//!
//! ## How to fix
//! Use the worker number only inside a loop marked with
//! `__builtin_csa_spmd(W, C)` or `__builtin_csa_spmdization(W, kind)` that
//! the compiler can expand.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::clie::spmdization::Spmdization;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::*;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(110),
    name: "worker-num-outside-spmd",
    severity: Severity::Warning,
    fixable: false,
    summary:
        "spmd_worker_num() outside an SPMDized loop is deleted with everything computed from it",
    source: include_str!("worker_num_outside_spmd.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for b in &cx.func.builtins {
        if b.kind != BuiltinKind::WorkerNum {
            continue;
        }
        if cx.func.lang == Lang::Fortran && !b.fortran_accepted() {
            continue; // CSA107: it is not the intrinsic at all
        }
        if cx.func.lang == Lang::Fortran && !b.statement {
            continue; // CSA108: its value never arrives anyway
        }
        let in_spmd = cx.clie.verdicts.iter().any(|v| {
            cx.forest.contains(v.loop_id, b.block.0) && v.spmd == Some(Spmdization::Performed)
        });
        if in_spmd {
            continue;
        }
        out.push(
            Diagnostic::new(
                &RULE,
                b.span,
                "spmd_worker_num() is not in a loop the compiler splits into workers: it deletes this call and everything computed from it",
            )
            .with_help("Use it only inside a loop marked with spmd/spmdization that the compiler expands."),
        );
    }
}
