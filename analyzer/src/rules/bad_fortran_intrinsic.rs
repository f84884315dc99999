//! # CSA107 bad-fortran-intrinsic
//!
//! ## What it does
//! Reports a Fortran call to `builtin_csa_parallel_loop`, `builtin_csa_spmd`,
//! `builtin_csa_pipeline_loop` or `builtin_csa_spmd_worker_num` whose
//! arguments are not all integer constants or whose argument count is
//! wrong (0, 2, 1 and 0). The compiler's Fortran intrinsic converter
//! (`CSAFortranIntrinsics::runOnFunction`, CSAFortranIntrinsics.cpp) runs
//! before any constant propagation and accepts a literal, a PARAMETER, or
//! a local variable stored exactly once in the whole function, with a
//! constant (`nw = 4`; the store may be anywhere, in any order). Anything
//! else, a variable assigned twice or from an expression, an initialized
//! or SAVE variable (a global that is not constant), a dummy argument,
//! makes it print `!! WARNING: BAD CSA FORTRAN INTRINSIC !!` and leave the
//! call alone: it stays a call to an external procedure, marks no loop,
//! and fails to link unless such a procedure exists.
//!
//! ## Why it matters
//! The loop is not parallelized, and the leftover call is itself a memory
//! operation that can stop CLIE from parallelizing an enclosing marked loop.
//!
//! ## Example
//! ```fortran
//! integer :: nw
//! nw = 4
//! if (n > 1000) nw = 8              ! two stores: not a constant to it
//! call builtin_csa_spmd(nw, 0)
//! do i = 1, n
//!   a(i) = b(i)
//! end do
//! ```
//!
//! ## How to fix
//! Pass integer literals, PARAMETER constants or a local variable assigned
//! once from a constant, and the right number of them: `integer,
//! parameter :: nw = 4`.
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
    code: Code(107),
    name: "bad-fortran-intrinsic",
    severity: Severity::Warning,
    fixable: false,
    summary: "A Fortran builtin call has non-constant arguments or the wrong number of them and is ignored",
    source: include_str!("bad_fortran_intrinsic.rs"),
};

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
                &RULE,
                b.span,
                format!(
                    "BAD CSA FORTRAN INTRINSIC: a call to builtin_csa_{name} was found with non-constant arguments; this call will be ignored and stays an external call"
                ),
            )
            .with_related(a.span, "not an integer constant (use a literal, a PARAMETER or a local variable assigned once from a constant)")
        } else if b.args.len() != expected {
            Diagnostic::new(
                &RULE,
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
