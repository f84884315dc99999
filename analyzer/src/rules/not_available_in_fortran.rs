//! # CSA108 not-available-in-fortran
//!
//! ## What it does
//! Reports Fortran calls to CSA builtins that exist only in C: the region
//! and section intrinsics (`builtin_csa_parallel_region_entry` and the other
//! three), `builtin_csa_spmdization`, and any other `builtin_csa_` name the
//! compiler's Fortran converter does not know. Only `parallel_loop`, `spmd`,
//! `pipeline_loop` and `spmd_worker_num` are converted.
//!
//! It also reports `builtin_csa_spmd_worker_num()` used for its value
//! (`w = builtin_csa_spmd_worker_num()`): `CSAFortranIntrinsics::
//! runOnFunction` creates the intrinsic call and erases the original call
//! without replacing its uses, so the value never reaches its users; the
//! compiler fails an assertion, or, without assertions, keeps uses of a
//! deleted instruction (undefined behaviour).
//!
//! ## Why it matters
//! The call is not turned into an intrinsic: it stays a call to an external
//! procedure that does not exist, so the program fails to link, and until
//! then it counts as a memory operation.
//!
//! ## Example
//! ```fortran
//! call builtin_csa_spmdization(4, 'cyclic')
//! do i = 1, n
//!   a(i) = b(i)
//! end do
//! ```
//!
//! ## How to fix
//! Use `call builtin_csa_spmd(4, 1)` (cyclic is chunk 1, blocked chunk 0,
//! hybrid chunk 8). Region and section markings are not available in
//! Fortran; use `builtin_csa_parallel_loop` on the loop instead.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::*;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(108),
    name: "not-available-in-fortran",
    severity: Severity::Error,
    fixable: false,
    summary: "Region/section intrinsics and spmdization do not exist in Fortran",
    source: include_str!("not_available_in_fortran.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    if cx.func.lang != Lang::Fortran {
        return;
    }
    for b in &cx.func.builtins {
        let name = cx.builtin_name(b);
        let (msg, help) = match b.kind {
            BuiltinKind::Spmdization => (
                "builtin_csa_spmdization is only available in C; in Fortran it stays a call to an external procedure that does not exist".to_string(),
                "Use call builtin_csa_spmd(workers, chunk): cyclic is chunk 1, blocked chunk 0, hybrid chunk 8.",
            ),
            k if k.is_region_intrinsic() => (
                format!("builtin_csa_{name} is only available in C; in Fortran it stays a call to an external procedure that does not exist"),
                "Mark the loop with call builtin_csa_parallel_loop() instead.",
            ),
            // referenced as a function whose value is used, not CALLed
            BuiltinKind::WorkerNum if !b.statement => (
                "builtin_csa_spmd_worker_num() cannot give its value in Fortran: the compiler's Fortran converter replaces the call by the intrinsic but does not hand the intrinsic's result to the code that uses the call's value, so a compiler built with assertions stops (\"Uses remain when a value is destroyed\") and a release build goes on with a deleted value".to_string(),
                "Compute what the worker needs from the loop index instead (with spmd(W, 0) each worker runs one contiguous block of iterations), or write this loop in C, where __builtin_csa_spmd_worker_num() works.",
            ),
            BuiltinKind::Other => (
                format!("builtin_csa_{name} is not a CSA builtin the Fortran compiler knows; it stays a call to an external procedure"),
                "The Fortran builtins are builtin_csa_parallel_loop, builtin_csa_spmd, builtin_csa_pipeline_loop and builtin_csa_spmd_worker_num.",
            ),
            _ => continue,
        };
        out.push(Diagnostic::new(&RULE, b.span, msg).with_help(help));
    }
}
