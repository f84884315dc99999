//! # CSA206 reused-region-id
//!
//! ## What it does
//! Reports a region entry that starts a region unrelated to an earlier one
//! (no token connects their entries) but uses the same region id. The
//! diagnostic sits on the first entry of the later region (in source
//! order) and points at the earlier region's entry.
//!
//! Several entries of *one* region may share an id: entries whose tokens
//! meet in one variable (for example one entry on each branch of an `if`,
//! both assigned to the same token) are one region and are not reported.
//!
//! ## Why it matters
//! The compiler identifies regions by id only: all entries with one id are
//! one region, whatever their tokens say. Two regions that reuse an id
//! are treated as a single region, so the rules that decide which ordering
//! edges to drop (sections of the same region, no region crossing in
//! between) apply across both, and the compiler says nothing.
//!
//! ## Example
//! ```c
//! int r1 = __builtin_csa_parallel_region_entry(0);
//! /* ... sections ... */
//! __builtin_csa_parallel_region_exit(r1);
//! int r2 = __builtin_csa_parallel_region_entry(0);   // same id again
//! /* ... sections ... */
//! __builtin_csa_parallel_region_exit(r2);
//! ```
//!
//! ## How to fix
//! Give every region of a function its own id below 1000.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::BuiltinId;
use std::collections::HashMap;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(206),
    name: "reused-region-id",
    severity: Severity::Warning,
    fixable: false,
    summary: "Two unrelated regions use the same id, so the compiler treats them as one region",
    source: include_str!("reused_region_id.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    // Per id: (group, its first entry with that id), in source order
    // (`entries` is sorted by position).
    let mut by_id: HashMap<i64, Vec<(usize, BuiltinId)>> = HashMap::new();
    let mut order: Vec<i64> = Vec::new();
    for e in &cx.tokens.entries {
        let Some(id) = e.id else { continue };
        let list = by_id.entry(id).or_insert_with(|| {
            order.push(id);
            Vec::new()
        });
        if !list.iter().any(|&(g, _)| g == e.group) {
            list.push((e.group, e.builtin));
        }
    }
    for id in order {
        let Some(list) = by_id.get(&id) else { continue };
        let Some(&(_, first)) = list.first() else {
            continue;
        };
        let Some(first_call) = cx.func.builtins.get(first.index()) else {
            continue;
        };
        for &(_, later) in &list[1..] {
            let Some(call) = cx.func.builtins.get(later.index()) else {
                continue;
            };
            out.push(
                Diagnostic::new(
                    &RULE,
                    call.span,
                    format!(
                        "reused region id: this region entry uses id {id}, like the unrelated region entered at {}; no token connects them, but the compiler identifies regions by id only and treats both as one region",
                        cx.line(first_call.span)
                    ),
                )
                .with_related(first_call.span, format!("the first region with id {id}"))
                .with_help("Give every region of the function its own id below 1000."),
            );
        }
    }
}
