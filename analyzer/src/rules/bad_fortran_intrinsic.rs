//! # CSA107 bad-fortran-intrinsic
//!
//! ## What it does
//! Reports a Fortran call to `builtin_csa_parallel_loop`, `builtin_csa_spmd`,
//! `builtin_csa_pipeline_loop` or `builtin_csa_spmd_worker_num` whose
//! arguments are not all integer constants (literals or PARAMETERs) or whose
//! argument count is wrong (0, 2, 1 and 0). The compiler's Fortran
//! intrinsic converter prints `!! WARNING: BAD CSA FORTRAN INTRINSIC !!`
//! and leaves the call alone: it stays a call to an external procedure,
//! marks no loop, and fails to link unless such a procedure exists.
//!
//! ## Why it matters
//! The loop is not parallelized, and the leftover call is itself a memory
//! operation that can stop CLIE from parallelizing an enclosing marked loop.
//!
//! ## Example
//! ```fortran
//! integer :: nw
//! nw = 4
//! call builtin_csa_spmd(nw, 0)     ! nw is a variable, not a constant
//! do i = 1, n
//!   a(i) = b(i)
//! end do
//! ```
//!
//! ## How to fix
//! Pass integer literals or PARAMETER constants, and the right number of
//! them: `integer, parameter :: nw = 4`.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::ir::*;

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    if cx.func.lang != Lang::Fortran {
        return;
    }
    for b in &cx.func.builtins {
        let expected = match b.kind {
            BuiltinKind::ParallelLoop | BuiltinKind::WorkerNum => 0,
            BuiltinKind::Spmd => 2,
            BuiltinKind::PipelineLoop => 1,
            _ => continue,
        };
        let name = cx.builtin_name(b);
        let d = if let Some(a) = b.args.iter().find(|a| !matches!(a.value, ArgValue::Int(_))) {
            Diagnostic::new(
                Code(107),
                b.span,
                format!(
                    "BAD CSA FORTRAN INTRINSIC: a call to builtin_csa_{name} was found with non-constant arguments; this call will be ignored and stays an external call"
                ),
            )
            .with_related(a.span, "not an integer constant (use a literal or a PARAMETER)")
        } else if b.args.len() != expected {
            Diagnostic::new(
                Code(107),
                b.span,
                format!(
                    "BAD CSA FORTRAN INTRINSIC: a call to builtin_csa_{name} was found with the wrong number of arguments (expected {expected}, got {}); this call will be ignored and stays an external call",
                    b.args.len()
                ),
            )
        } else {
            continue;
        };
        out.push(d.with_help(
            "Pass integer literals or PARAMETER constants, as many as the builtin takes.",
        ));
    }
}
