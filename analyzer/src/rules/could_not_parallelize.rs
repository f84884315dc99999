//! # CSA101 could-not-parallelize
//!
//! ## What it does
//! Reports a loop marked with `parallel_loop`, `spmd` or `spmdization` for
//! which the compiler's loop-intrinsic expander (CLIE) cannot place a
//! parallel section, and says which statements are responsible. The
//! compiler prints `!! WARNING: COULD NOT PARALLELIZE LOOP !!` and ignores
//! the marker.
//!
//! CLIE looks for the smallest single-entry, single-exit piece of the loop
//! body that holds every memory operation and every inner loop. It grows it
//! with dominators and post-dominators, with the loop's back edge cut. When
//! two memory-holding blocks have no common post-dominator inside the loop
//! (because the loop can be left between them: a `break`, `return`, `goto`,
//! `exit`, or the loop condition itself reading memory), there is no such
//! piece.
//!
//! ## Why it matters
//! The loop runs sequentially although you asked for parallel iterations,
//! and nothing fails: the only trace is a banner in the build log.
//!
//! ## Example
//! ```c
//! __builtin_csa_parallel_loop();
//! for (int i = 0; i < n; i++) {
//!   if (a[i] < 0) break;      // memory read, then a way out of the loop
//!   b[i] = a[i] * 2;          // memory write after it
//! }
//! ```
//! A loop bound that stays a memory read also does it:
//! `for (i = 0; i < *n; i++) a[i] = 0;` with `int *a, *n` (the store to
//! `a[i]` may change `*n`, so the load of `*n` cannot leave the loop).
//!
//! ## How to fix
//! * Move the test out of the body or make it not read memory (compute a
//!   trip count first).
//! * Copy a loop bound that is read through a pointer or a global into a
//!   local before the loop, or declare pointers `restrict`.
//! * Or mark the region and its sections yourself with
//!   `__builtin_csa_parallel_{region,section}_{entry,exit}`.
//!
//! ## Fix safety
//! No automatic fix yet.

use super::FunctionContext;
use crate::clie::{Outcome, PlacementFailure};
use crate::diag::{Code, Diagnostic};
use crate::graph::loops::LoopId;
use crate::ir::*;
use crate::memory::BlockReason;
use crate::source::Span;

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for v in &cx.clie.verdicts {
        let marker = cx.func.builtin(v.marker);
        match &v.outcome {
            Outcome::CouldNotParallelize(f) => out.push(failure(cx, v.loop_id, marker, f)),
            Outcome::BadSpmdizationKind(_) => {
                let loop_line = cx.line(cx.loop_span(v.loop_id));
                out.push(
                    Diagnostic::new(
                        Code(101),
                        marker.span,
                        format!(
                            "COULD NOT PARALLELIZE LOOP: the loop at {loop_line} is not expanded because the spmdization kind is not one of cyclic, block, blocked, blocking or hybrid; the marker is ignored"
                        ),
                    )
                    .with_related(cx.loop_span(v.loop_id), "the marked loop")
                    .with_help("Use a valid kind string, or __builtin_csa_spmd(W, C) with an explicit chunk size."),
                );
            }
            _ => {}
        }
    }
}

fn failure(
    cx: &FunctionContext,
    l: LoopId,
    marker: &BuiltinCall,
    f: &PlacementFailure,
) -> Diagnostic {
    let loop_span = cx.loop_span(l);
    let loop_line = cx.line(loop_span);
    let name = cx.builtin_name(marker);
    let what = |b: BlockId| -> Option<(Span, String)> {
        let op = cx.memory.first_op(b)?;
        Some((op.span, describe_op(cx, op)))
    };
    let mut diag;
    if let Some(sub) = f.subloop {
        let sub_span = cx.loop_span(sub);
        diag = Diagnostic::new(
            Code(101),
            marker.span,
            format!(
                "COULD NOT PARALLELIZE LOOP: the inner loop at {} can leave the loop at {} directly, so no single section of the body contains it; the {} marker is ignored",
                cx.line(sub_span),
                loop_line,
                name
            ),
        )
        .with_related(sub_span, "this inner loop must be inside the section, but one of its exits leaves the outer loop");
        for e in exiting_spans(cx, sub) {
            diag = diag.with_related(e, "leaves the inner loop here");
        }
    } else {
        let failing = what(f.block);
        let earlier = f.included.iter().find_map(|&b| what(b));
        let message = match (&earlier, &failing) {
            (Some((s1, d1)), Some((s2, d2))) => format!(
                "COULD NOT PARALLELIZE LOOP: {} at {} and {} at {} have no common point after them inside the loop at {}, because the loop can be left in between; the {} marker is ignored",
                d1,
                cx.line(*s1),
                d2,
                cx.line(*s2),
                loop_line,
                name
            ),
            _ => format!(
                "COULD NOT PARALLELIZE LOOP: the memory operations of the loop at {} do not fit in one single-entry, single-exit section; the {} marker is ignored",
                loop_line, name
            ),
        };
        diag = Diagnostic::new(Code(101), marker.span, message);
        if let Some((s, d)) = &earlier {
            diag = diag.with_related(*s, format!("{d}: must be inside the parallel section"));
        }
        for &b in &f.included {
            if let Some(sub) = subloop_of(cx, l, b) {
                diag = diag.with_related(
                    cx.loop_span(sub),
                    "this inner loop must be inside the parallel section",
                );
            }
        }
        if let Some((s, d)) = &failing {
            diag = diag.with_related(*s, format!("{d}: must be inside the same section"));
        }
    }
    for e in exiting_spans(cx, l) {
        diag = diag.with_related(e, "the loop can be left here");
    }
    // Explain loads that LICM could not hoist.
    for &b in f.included.iter().chain(std::iter::once(&f.block)) {
        for &i in cx
            .memory
            .block_ops
            .get(b.index())
            .map(|v| v.as_slice())
            .unwrap_or(&[])
        {
            let op = &cx.memory.ops[i];
            if let Some(blk) = &op.licm_blocker {
                let why = match blk.reason {
                    BlockReason::AliasingStore => "this store may write the same memory",
                    BlockReason::Call => "this call may write it",
                    BlockReason::Asm => "this inline assembly may write it",
                };
                diag = diag.with_related(
                    blk.span,
                    format!(
                        "{why}, so the read at {} cannot be hoisted out of the loop",
                        cx.line(op.span)
                    ),
                );
            }
        }
    }
    diag.with_help(
        "Keep memory reads out of the loop control and exits (copy loop bounds into locals before the loop, declare pointers restrict), or mark the region and sections explicitly with __builtin_csa_parallel_{region,section}_{entry,exit}.",
    )
}

/// The inner loop (direct child of `l`) whose preheader or exit is `b`.
fn subloop_of(cx: &FunctionContext, l: LoopId, b: BlockId) -> Option<LoopId> {
    let data = cx.forest.loops.get(l.0 as usize)?;
    data.children.iter().copied().find(|&c| {
        cx.preheaders.get(c.0 as usize).copied().flatten() == Some(b)
            || cx.forest.loops[c.0 as usize].exit_blocks.contains(&b.0)
    })
}

/// The spans of the statements/conditions through which `l` can be left.
pub(super) fn exiting_spans(cx: &FunctionContext, l: LoopId) -> Vec<Span> {
    let Some(data) = cx.forest.loops.get(l.0 as usize) else {
        return Vec::new();
    };
    let mut spans: Vec<Span> = data
        .exiting_blocks
        .iter()
        .filter_map(|&b| cx.func.block(BlockId(b)).term.span)
        .collect();
    spans.sort();
    spans.dedup();
    spans
}

pub(super) fn describe_op(cx: &FunctionContext, op: &crate::memory::MemOp) -> String {
    use crate::memory::MemOpKind::*;
    let text = |s: Span| -> String {
        let t = cx.src.text().get(s.range()).unwrap_or("");
        let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
        if t.chars().count() > 40 {
            let short: String = t.chars().take(37).collect();
            format!("{short}...")
        } else {
            t
        }
    };
    match op.kind {
        Read => format!("the read of `{}`", text(op.span)),
        Write => format!("the write to `{}`", text(op.span)),
        Call => format!("the call `{}`", text(op.span)),
        Asm => "inline assembly".to_string(),
        LifetimeStart => format!("the declaration `{}`", text(op.span)),
        Intrinsic => format!("the builtin call `{}`", text(op.span)),
        Prefetch => format!("the prefetch `{}`", text(op.span)),
    }
}
