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
//!   while inside a region or one of its sections;
//! * **path-dependent ordering between two named operations**: walking back
//!   from the later operation as the compiler's ordering pass does (one
//!   state per region: none seen, not in section, outside of section,
//!   crossed sections, left region), two paths that take the same loop
//!   backedges disagree on whether the region drops the ordering edge, or
//!   reach a block in states the compiler cannot merge, or meet an intrinsic
//!   the state machine does not allow there (a section entry before a region
//!   exit, two section entries in a row). At most one per region, and none
//!   for a region whose membership is already reported.
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
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::ir::BlockId;
use crate::regions::events::{Item, RegionKey};
use crate::regions::membership::{Broken, State};
use crate::source::Span;

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    check_ordering(cx, out);
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
        let section = matches!(
            p.broken,
            Broken::AmbiguousSection | Broken::SectionOpenAtExit
        );
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
    let preds = cx
        .succs
        .iter()
        .enumerate()
        .filter(|(_, s)| s.contains(&exit.0));
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

/// Ordering inconsistencies (SEMANTICS.md §6.3), one per region at most.
fn check_ordering(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    use super::could_not_parallelize::describe_op;
    use crate::regions::ordering::{ProblemKind, RegionState};
    for p in &cx.ordering.problems {
        if cx.membership.problems.iter().any(|m| m.region == p.region) {
            continue; // reported above as a membership problem
        }
        if matches!(p.region, RegionKey::User(_)) && cx.tokens.fatal() {
            continue; // the compiler stopped already (CSA202/CSA204)
        }
        let Some(b) = cx.memory.ops.get(p.b) else {
            continue;
        };
        let region = cx.region_name(p.region);
        let a = p.a.and_then(|a| cx.memory.ops.get(a));
        let pair = match a {
            Some(a) => format!(
                "path-dependent ordering between {} at {} and {} at {}",
                describe_op(cx, a),
                cx.line(a.span),
                describe_op(cx, b),
                cx.line(b.span)
            ),
            None => format!(
                "path-dependent ordering before {} at {}",
                describe_op(cx, b),
                cx.line(b.span)
            ),
        };
        let carried = p
            .carried_by
            .map(|l| format!(" around the loop at {}", cx.line(cx.loop_span(l))))
            .unwrap_or_default();
        let state = |s: RegionState| s.describe();
        let detail = match p.kind {
            ProblemKind::PathDependent => format!(
                "some paths{carried} between them cross a section boundary of {region} (the ordering edge is dropped) and others through the same loop backedges do not (the edge is kept)"
            ),
            ProblemKind::ConflictingMerge => {
                let states: Vec<String> = p.paths.iter().map(|w| format!("`{}`", state(w.state))).collect();
                format!(
                    "walking back{carried}, the paths that join at {} bring {region} in states the compiler's ordering pass cannot merge ({})",
                    cx.line(block_span(cx, p.block)),
                    states.join(" against ")
                )
            }
            ProblemKind::FailedTransition { event, state: s } => {
                let kind = cx
                    .events
                    .events
                    .get(event)
                    .map_or("intrinsic", |e| e.kind.describe());
                format!(
                    "walking back{carried}, a {kind} of {region} is met in state `{}`, which the compiler's ordering pass does not allow",
                    state(s)
                )
            }
        };
        let consequence = if p.compiler_notices {
            format!(
                "the compiler then ignores every region and section in `{}`",
                cx.func.name
            )
        } else {
            format!(
                "by the documents' rule the compiler then ignores every region and section in `{}`, but it does not notice this case and silently drops the edge on every path",
                cx.func.name
            )
        };
        let mut d = Diagnostic::new(
            Code(201),
            b.span,
            format!("BAD PARALLEL SECTION INTRINSICS: {pair}: {detail}; {consequence}"),
        );
        if let Some(a) = a {
            d = d.with_related(a.span, "the earlier operation");
        }
        if let ProblemKind::FailedTransition { event, .. } = p.kind {
            if let Some(e) = cx.events.events.get(event) {
                d = d.with_related(
                    e.span,
                    format!("this {} of {region} is not allowed here", e.kind.describe()),
                );
            }
        }
        let summary: Vec<String> = p
            .paths
            .iter()
            .enumerate()
            .map(|(n, w)| {
                if w.events.is_empty() {
                    format!("path {}: no intrinsic of {region}", n + 1)
                } else {
                    format!("path {}: {}", n + 1, w.state.describe())
                }
            })
            .collect();
        if let Some(split) = p.split {
            d = d.with_related(
                block_span(cx, split),
                format!("the paths part here ({})", summary.join("; ")),
            );
        }
        let several = p.paths.len() > 1;
        for (n, w) in p.paths.iter().enumerate() {
            for &e in &w.events {
                if let Some(ev) = cx.events.events.get(e) {
                    let label = if several {
                        format!("path {}: {} of {region}", n + 1, ev.kind.describe())
                    } else {
                        format!("{} of {region} on the way", ev.kind.describe())
                    };
                    d = d.with_related(ev.span, label);
                }
            }
        }
        out.push(d.with_help(
            "Every path between two memory operations that takes the same loop backedges must cross the same section and region boundaries: put section exits and entries on all branches or on none, and keep sections inside their region.",
        ));
    }
}
