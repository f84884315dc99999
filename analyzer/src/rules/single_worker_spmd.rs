//! # CSA111 single-worker-spmd
//!
//! ## What it does
//! Reports `spmd(1, C)` or `spmdization(1, kind)`: with one worker there is
//! nothing to split, and the marker acts exactly like `parallel_loop`.
//!
//! ## Why it matters
//! Usually a leftover from tuning, or a worker count that was meant to be a
//! parameter.
//!
//! ## Example
//! ```c
//! __builtin_csa_spmd(1, 0);
//! for (int i = 0; i < n; i++) a[i] = b[i];
//! ```
//!
//! ## How to fix
//! Use `__builtin_csa_parallel_loop()` to say what happens, or raise the
//! worker count.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::clie::MarkerStatus;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::*;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(111),
    name: "single-worker-spmd",
    severity: Severity::Info,
    fixable: false,
    summary: "spmd with one worker is just parallel_loop",
    source: include_str!("single_worker_spmd.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for m in &cx.clie.markers {
        // Only markers a loop takes are ever examined by the compiler; a
        // deleted one is CSA105/CSA106's business.
        if !matches!(m.status, MarkerStatus::Attached(_)) {
            continue;
        }
        let b = cx.func.builtin(m.builtin);
        if !matches!(b.kind, BuiltinKind::Spmd | BuiltinKind::Spmdization) {
            continue;
        }
        if let Some(BuiltinArg {
            value: ArgValue::Int(1),
            span,
        }) = b.args.first()
        {
            out.push(
                Diagnostic::new(
                    &RULE,
                    b.span,
                    format!(
                        "{} with a single worker is equivalent to parallel_loop",
                        cx.builtin_name(b)
                    ),
                )
                .with_related(*span, "one worker")
                .with_help("Use parallel_loop, or raise the worker count."),
            );
        }
    }
}
