//! # CSA207 memory-outside-section
//!
//! ## What it does
//! Reports a memory operation that is inside a parallel region but outside
//! every section of that region. Only what the compiler's ordering pass
//! orders counts: inline assembly does not (`needsOrderingEdges` in
//! CSAMemopOrdering.cpp never orders it), nor do declarations.
//!
//! ## Why it matters
//! Ordering edges are only dropped between operations that are both in
//! sections of the same region. An operation in the gap keeps full ordering
//! with everything, as if it were outside the region, and because ordering
//! is transitive it can serialise the sections on either side of it. This is
//! usually a section boundary placed one statement too early or too late.
//!
//! ## Example
//! ```c
//! int reg = __builtin_csa_parallel_region_entry(0);
//! *a = 2;                                   // in the region, in no section
//! int sec = __builtin_csa_parallel_section_entry(reg);
//! *b = 3;
//! __builtin_csa_parallel_section_exit(sec);
//! __builtin_csa_parallel_region_exit(reg);
//! ```
//!
//! ## How to fix
//! Move the operation into a section, or out of the region.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::regions::events::{MemopCfg, RegionKey};
use crate::regions::membership::Membership;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(207),
    name: "memory-outside-section",
    severity: Severity::Info,
    fixable: false,
    summary: "A memory operation inside a region but in no section keeps full ordering",
    source: include_str!("memory_outside_section.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for &region in &cx.events.regions {
        // CLIE's regions put every memory operation of the loop in the
        // section by construction; only solved regions can have a gap.
        if !cx.membership.solved(region) {
            continue;
        }
        if matches!(region, RegionKey::User(_)) && cx.tokens.fatal() {
            continue;
        }
        if cx.membership.problems.iter().any(|p| p.region == region) {
            continue; // CSA201 already: membership is not well defined
        }
        // (outside its extent, no point is inside the region)
        for block in cx.membership.extent(region, false) {
            let Some(items) = cx.events.items.get(block.index()) else {
                continue;
            };
            if !items
                .iter()
                .any(|&i| MemopCfg::is_ordering_memop(cx.memory, i).is_some())
            {
                continue;
            }
            // (a block wholly outside the region, or wholly in a section,
            // has nothing to report)
            let uniform = |section| cx.membership.uniform(region, section, block);
            if uniform(false).is_some_and(|m| m != Membership::Inside)
                || uniform(true).is_some_and(|m| m != Membership::Outside)
            {
                continue;
            }
            let in_region = cx.membership.points(cx.events, region, false, block);
            let in_section = cx.membership.points(cx.events, region, true, block);
            for (k, &item) in items.iter().enumerate() {
                let Some(op) = MemopCfg::is_ordering_memop(cx.memory, item) else {
                    continue;
                };
                if in_region[k] != Membership::Inside || in_section[k] != Membership::Outside {
                    continue;
                }
                out.push(
                    Diagnostic::new(
                        &RULE,
                        cx.memory.ops[op].span,
                        format!(
                            "this memory operation is inside {} but outside every section of it, so it keeps full ordering with everything",
                            cx.region_name(region)
                        ),
                    )
                    .with_help("Move it into a section, or out of the region."),
                );
            }
        }
    }
}
