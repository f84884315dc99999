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
//!
//! The message says what the compiler really does, which depends on the
//! case. Its memory ordering pass (`MemopCFG::construct_chains` in
//! `Intel_CSA/MemopOrdering/CSAMemopOrdering.cpp`) is the only place that
//! looks at these intrinsics: it walks back from every memory operation
//! and from the return with one state per region, and notices only an
//! intrinsic its state machine does not allow (`SectionStates::transition`)
//! and two paths bringing states it cannot merge (`merge_from`). Then it
//! prints `!! WARNING: BAD PARALLEL SECTION INTRINSICS !!` and ignores
//! **every** region and section of the function (`CSAMemopOrdering::order`
//! orders it again without them); the message starts with that banner.
//! Everything else it accepts silently and keeps the regions: a region or
//! section left on one branch only (the path that left wins the merge, and
//! the point keeps every ordering edge), a region or section still open at
//! the return, and the documents' path-dependent ordering (it drops the
//! edge on every path). The message then says "the compiler does not
//! notice" and what it does instead; when another inconsistency of the same
//! function is noticed, the regions are ignored anyway and the message says
//! so.
//!
//! ## Why it matters
//! The loop or sections you marked run sequentially (the warning case), or
//! the compiler orders the code in a way the intrinsics do not say (the
//! silent cases: edges dropped on every path, or kept where a section was
//! meant), which can break memory ordering or lose parallelism without a
//! word at build time.
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
use crate::diag::{Rule, Severity};
use crate::ir::BlockId;
use crate::regions::events::{Item, RegionKey};
use crate::regions::membership::{Broken, State};
use crate::regions::ordering::{OrderingProblem, ProblemKind};
use crate::source::Span;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(201),
    name: "bad-parallel-section-intrinsics",
    severity: Severity::Warning,
    fixable: false,
    summary: "Region/section intrinsics whose meaning depends on the path: the compiler ignores every region of the function, or silently orders it its own way",
    source: include_str!("bad_parallel_section_intrinsics.rs"),
};

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
        // What the compiler's ordering pass makes of it when its walks
        // never fail on this region (N merged with NS or LR is accepted).
        let silently = match p.broken {
            Broken::AmbiguousRegion | Broken::AmbiguousSection => {
                "where the paths join it takes the path that left, so this point keeps every ordering edge, as outside every section"
            }
            Broken::RegionOpenAtExit | Broken::SectionOpenAtExit => {
                "nothing is ordered differently for it"
            }
        };
        let noticed = noticed_in(cx, p.region);
        let mut d = Diagnostic::new(
            &RULE,
            anchor,
            message(cx, &what, noticed.is_some(), silently),
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
        if let Some(o) = noticed {
            let (span, label) = where_noticed(cx, o);
            d = d.with_related(span, label);
        }
        out.push(d.with_help(
            "Every point must be inside or outside each region and section whatever the path: pair each entry with exits on every path.",
        ));
    }
}

/// The problem in `region` that the compiler's ordering pass notices, if
/// any (a failed transition or a merge it rejects).
fn noticed_in<'a>(cx: &FunctionContext<'a>, region: RegionKey) -> Option<&'a OrderingProblem> {
    cx.ordering
        .problems
        .iter()
        .find(|o| o.region == region && o.compiler_notices)
}

/// The message: `what` is broken; then what the compiler does about it.
/// `silently` says what its ordering makes of it when it notices nothing.
fn message(cx: &FunctionContext, what: &str, noticed: bool, silently: &str) -> String {
    let name = &cx.func.name;
    if noticed {
        format!(
            "BAD PARALLEL SECTION INTRINSICS: {what}; the compiler's ordering pass notices, warns and then ignores every region and section in `{name}`"
        )
    } else if cx.ordering.regions_ignored {
        format!(
            "inconsistent parallel section intrinsics: {what}; the compiler does not notice this one, but it ignores every region and section in `{name}` anyway because of another inconsistency it does notice"
        )
    } else {
        format!(
            "inconsistent parallel section intrinsics: {what}; the compiler does not notice (no BAD PARALLEL SECTION INTRINSICS warning) and keeps every region and section in `{name}`: {silently}"
        )
    }
}

/// Where the compiler's walk fails, and why, for a related location.
fn where_noticed(cx: &FunctionContext, o: &OrderingProblem) -> (Span, String) {
    let region = cx.region_name(o.region);
    let from = match o.b.and_then(|b| cx.memory.ops.get(b)) {
        Some(b) => format!("walking back from {}", cx.line(b.span)),
        None => "walking back from the return".to_string(),
    };
    match o.kind {
        ProblemKind::FailedTransition { event, state } => {
            let e = cx.events.events.get(event);
            let kind = e.map_or("intrinsic", |e| e.kind.describe());
            let span = e.map_or_else(|| block_span(cx, o.block), |e| e.span);
            (
                span,
                format!(
                    "the compiler's ordering pass fails here, {from}: a {kind} of {region} in state `{}`",
                    state.describe()
                ),
            )
        }
        _ => (
            block_span(cx, o.block),
            format!(
                "the compiler's ordering pass fails here, {from}: the paths that join bring {region} in states it cannot merge"
            ),
        ),
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
    use crate::regions::ordering::RegionState;
    for p in &cx.ordering.problems {
        if cx.membership.problems.iter().any(|m| m.region == p.region) {
            continue; // reported above as a membership problem
        }
        if matches!(p.region, RegionKey::User(_)) && cx.tokens.fatal() {
            continue; // the compiler stopped already (CSA202/CSA204)
        }
        let b = match p.b {
            Some(b) => match cx.memory.ops.get(b) {
                Some(op) => Some(op),
                None => continue,
            },
            None => None,
        };
        let region = cx.region_name(p.region);
        let a = p.a.and_then(|a| cx.memory.ops.get(a));
        let later = match b {
            Some(b) => format!("{} at {}", describe_op(cx, b), cx.line(b.span)),
            None => "the function's return".to_string(),
        };
        let anchor = b.map_or_else(|| exit_span(cx, p.b_block), |b| b.span);
        let pair = match a {
            Some(a) => format!(
                "path-dependent ordering between {} at {} and {later}",
                describe_op(cx, a),
                cx.line(a.span),
            ),
            None => format!("path-dependent ordering before {later}"),
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
        let mut d = Diagnostic::new(
            &RULE,
            anchor,
            message(
                cx,
                &format!("{pair}: {detail}"),
                p.compiler_notices,
                "it merges the paths and drops the edge on every path",
            ),
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
