//! # CSA201 bad-parallel-section-intrinsics
//!
//! ## What it does
//! Reports region/section intrinsics that break the rules the memory
//! ordering pass relies on, naming the rule:
//! * **ambiguous region membership**: a point is inside a region on one path
//!   and outside it on another (the last region entry/exit before it, or the
//!   next one after it, differs between paths);
//! * **ambiguous section membership**: the same for the sections of a
//!   region;
//! * **region or section open at function exit**: a path leaves the function
//!   while inside a region or one of its sections.
//!
//! Every point of the function must be either inside or outside each region
//! and each region's sections, whatever path leads to it or away from it.
//! The compiler prints `!! WARNING: BAD PARALLEL SECTION INTRINSICS !!` when
//! it notices and then ignores **every** region and section of the function;
//! some of these cases it does not notice and silently orders the code in a
//! way that depends on the path taken.
//!
//! ## Why it matters
//! The loop or sections you marked run sequentially (the warning case), or
//! ordering edges are dropped on some paths only (the silent case), which
//! can break memory ordering.
//!
//! ## Example
//! ```c
//! int r = __builtin_csa_parallel_region_entry(0);
//! if (c)
//!   __builtin_csa_parallel_region_exit(r);
//! *p = 1;   // inside region 0 on one path, outside on the other
//! ```
//!
//! ## How to fix
//! Pair every entry with exits on every path: an entry must dominate what it
//! covers and the exits must post-dominate it. Close sections before
//! leaving the region and before returning.
//!
//! ## Fix safety
//! No automatic fix.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::ir::BlockId;
use crate::regions::events::{Item, RegionKey};
use crate::regions::membership::{Broken, State};
use crate::source::Span;

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for p in &cx.membership.problems {
        if matches!(p.region, RegionKey::User(_)) && cx.tokens.fatal() {
            continue; // the compiler stopped already (CSA202/CSA204)
        }
        let region = cx.region_name(p.region);
        let anchor = match p.broken {
            Broken::RegionOpenAtExit | Broken::SectionOpenAtExit => exit_span(cx, p.block),
            _ => point_span(cx, p.block, p.before),
        };
        let what = match p.broken {
            Broken::AmbiguousRegion => format!(
                "ambiguous region membership: this point is inside {region} on some paths and outside it on others"
            ),
            Broken::AmbiguousSection => format!(
                "ambiguous section membership: this point is inside a section of {region} on some paths and outside every section on others"
            ),
            Broken::RegionOpenAtExit => {
                format!("{region} is still open when the function returns here")
            }
            Broken::SectionOpenAtExit => {
                format!("a section of {region} is still open when the function returns here")
            }
        };
        let mut d = Diagnostic::new(
            Code(201),
            anchor,
            format!(
                "BAD PARALLEL SECTION INTRINSICS: {what}; the compiler then ignores every region and section in `{}`",
                cx.func.name
            ),
        );
        let section = matches!(p.broken, Broken::AmbiguousSection | Broken::SectionOpenAtExit);
        for &(b, s) in &p.witnesses {
            let label = match (s, section) {
                (State::Inside, false) => "inside the region on this path",
                (State::Outside, false) => "outside the region on this path",
                (State::Inside, true) => "inside a section on this path",
                (State::Outside, true) => "outside every section on this path",
                _ => continue,
            };
            d = d.with_related(block_span(cx, b), label);
        }
        for e in cx.events.events.iter().filter(|e| e.region == p.region) {
            if e.kind.is_section() == section {
                d = d.with_related(e.span, format!("{} of {region}", e.kind.describe()));
            }
        }
        out.push(d.with_help(
            "Every point must be inside or outside each region and section whatever the path: pair each entry with exits on every path.",
        ));
    }
}

/// A span for the point before `item` in `block` (or at its end).
fn point_span(cx: &FunctionContext, block: BlockId, item: Option<Item>) -> Span {
    match item {
        Some(Item::Mem(i)) => cx.memory.ops[i].span,
        Some(Item::Event(e)) => cx.events.events[e].span,
        None => block_span(cx, block),
    }
}

/// Where the function is left through `exit`: a `return` statement that
/// jumps there, else the end of the function.
fn exit_span(cx: &FunctionContext, exit: BlockId) -> Span {
    let preds = cx.succs.iter().enumerate().filter(|(_, s)| s.contains(&exit.0));
    for (p, _) in preds {
        if let Some(span) = cx.func.block(BlockId(p as u32)).term.span {
            return span;
        }
    }
    let end = cx.func.span.end.max(1) as usize;
    Span::new(end - 1, end)
}

/// Something in `block` to point at.
pub(super) fn block_span(cx: &FunctionContext, b: BlockId) -> Span {
    let block = cx.func.block(b);
    block
        .term
        .span
        .or_else(|| block.insts.last().map(|i| i.span))
        .or(block.origin)
        .unwrap_or(cx.func.name_span)
}
