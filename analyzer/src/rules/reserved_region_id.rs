//! # CSA205 reserved-region-id
//!
//! ## What it does
//! Reports a `__builtin_csa_parallel_region_entry` whose constant region id
//! is 1000 or more. Ids below 1000 belong to users; from 1000 up they
//! belong to the compiler, which numbers the regions it inserts itself
//! (for `parallel_loop`, `spmd`, OpenMP loops and inlined regions) as
//! 1000 + n.
//!
//! ## Why it matters
//! The compiler identifies regions by id only. A user region whose id
//! equals one the compiler picks for a region it inserts in the same
//! function becomes one region with it, and ordering edges between the two
//! are dropped or kept by rules meant for two separate regions. The
//! compiler does not check the split, so nothing tells you.
//!
//! ## Example
//! ```c
//! int reg = __builtin_csa_parallel_region_entry(1000);
//! ```
//!
//! ## How to fix
//! Use an id below 1000 that no other region of the function uses.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(205),
    name: "reserved-region-id",
    severity: Severity::Warning,
    fixable: false,
    summary: "Region ids from 1000 up are reserved for the compiler",
    source: include_str!("reserved_region_id.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for e in &cx.tokens.entries {
        let Some(id) = e.id else { continue };
        if id < 1000 {
            continue;
        }
        let Some(call) = cx.func.builtins.get(e.builtin.index()) else {
            continue;
        };
        let span = call.args.first().map(|a| a.span).unwrap_or(call.span);
        out.push(
            Diagnostic::new(
                &RULE,
                span,
                format!(
                    "reserved region id: region id {id} is reserved for the compiler (ids from 1000 up are the compiler's, which numbers the regions it inserts 1000 + n), so this region can be merged with one the compiler inserts"
                ),
            )
            .with_help("Use an id below 1000 that no other region of the function uses."),
        );
    }
}
