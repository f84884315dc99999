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
//! When the loop is a C `for` whose bound reads memory
//! (`i < *n`, `i < v->n`), an unsafe fix copies the bound into
//! `const int bound = *n;` (the type of the index declared in the loop's
//! initializer) before the loop and compares with `bound`: it asserts that
//! the loop does not change the bound. Otherwise
//! the fix is display-only guidance: mark the region and section yourself.

use super::FunctionContext;
use crate::clie::{Outcome, PlacementFailure};
use crate::diag::{Applicability, Code, Diagnostic, Edit, Fix};
use crate::diag::{Rule, Severity};
use crate::fix::insert_line_before;
use crate::graph::loops::LoopId;
use crate::ir::*;
use crate::memory::BlockReason;
use crate::source::Span;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(101),
    name: "could-not-parallelize",
    severity: Severity::Warning,
    fixable: true,
    summary: "CLIE finds no parallel section for a marked loop and ignores the marker",
    source: include_str!("could_not_parallelize.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for v in &cx.clie.verdicts {
        let marker = cx.func.builtin(v.marker);
        match &v.outcome {
            Outcome::CouldNotParallelize(f) => out.push(failure(cx, v.loop_id, marker, f)),
            Outcome::BadSpmdizationKind(_) => {
                let loop_line = cx.line(cx.loop_span(v.loop_id));
                out.push(
                    Diagnostic::new(
                        &RULE,
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
            &RULE,
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
        diag = Diagnostic::new(&RULE, marker.span, message);
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
    let fix = hoist_bound_fix(cx, l).unwrap_or_else(|| Fix {
        kind: crate::diag::FixKind::MarkRegion,
        title: "Mark the region and section yourself: __builtin_csa_parallel_region_entry before the loop, a section entry/exit around the part of the body that holds the memory operations, the region exit after the loop".to_string(),
        applicability: Applicability::DisplayOnly,
        edits: Vec::new(),
    });
    diag.with_help(
        "Keep memory reads out of the loop control and exits (copy loop bounds into locals before the loop, declare pointers restrict), or mark the region and sections explicitly with __builtin_csa_parallel_{region,section}_{entry,exit}.",
    )
    .with_fix(fix)
}

/// `for (...; i < EXPR; ...)` where `EXPR` reads memory: copy it into a
/// `const` local before the loop and compare with that. Unsafe: asserts the
/// loop does not change the bound.
fn hoist_bound_fix(cx: &FunctionContext, l: LoopId) -> Option<Fix> {
    if cx.func.lang != Lang::C {
        return None;
    }
    let sl = cx.source_loop(l)?;
    if sl.kind != LoopKind::For {
        return None;
    }
    let pre = cx.pre.text.as_str();
    // Parse just the loop's header, `for (...)` with an empty body: its
    // offsets are shifted by the loop's start.
    let base = sl.span.start as usize;
    let stmt = format!("{};", for_header(pre.get(base..sl.span.end as usize)?)?);
    let stmt = stmt.as_str();
    let tree = csa_grammars::parse(csa_grammars::Grammar::C, stmt)?;
    let mut n = tree.root_node().named_child(0)?;
    if n.kind() != "for_statement" {
        n = n.named_child(0).filter(|c| c.kind() == "for_statement")?;
    }
    let mut cond = n.child_by_field_name("condition")?;
    while cond.kind() == "parenthesized_expression" {
        cond = cond.named_child(0)?;
    }
    if cond.kind() != "binary_expression" {
        return None;
    }
    let op = cond
        .child_by_field_name("operator")?
        .utf8_text(stmt.as_bytes())
        .ok()?;
    if !matches!(op, "<" | "<=" | ">" | ">=" | "!=") {
        return None;
    }
    let (a, b) = (
        cond.child_by_field_name("left")?,
        cond.child_by_field_name("right")?,
    );
    let reads_memory = |x: tree_sitter::Node| {
        let (s, e) = (base + x.start_byte(), base + x.end_byte());
        cx.memory.ops.iter().any(|op| {
            op.kind == crate::memory::MemOpKind::Read
                && (op.span.start as usize) >= s
                && (op.span.end as usize) <= e
        })
    };
    let bound = match (a.kind() == "identifier", b.kind() == "identifier") {
        (true, _) if reads_memory(b) && !reads_memory(a) => b,
        (_, true) if reads_memory(a) && !reads_memory(b) => a,
        _ => return None,
    };
    let expr = bound.utf8_text(stmt.as_bytes()).ok()?;
    // The bound gets the type of the index declared in the initializer
    // (tree-sitter and older compilers do not all know `__typeof__`).
    let init = n.child_by_field_name("initializer")?;
    if init.kind() != "declaration" {
        return None;
    }
    let ty = init
        .child_by_field_name("type")?
        .utf8_text(stmt.as_bytes())
        .ok()?;
    if expr.contains('(') && !expr.starts_with('(') {
        return None; // a call: it may have side effects
    }
    let text = cx.src.text();
    let func_text = text.get(cx.func.span.range()).unwrap_or("");
    let name = (0..100)
        .map(|k| {
            if k == 0 {
                "bound".to_string()
            } else {
                format!("bound{k}")
            }
        })
        .find(|c| {
            // A word equal to `c` needs `c` in the text: most functions
            // settle on the first candidate without splitting their text.
            !func_text.contains(c.as_str())
                || !func_text
                    .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                    .any(|w| w == c)
        })?;
    let start = base + bound.start_byte();
    let end = base + bound.end_byte();
    Some(Fix {
        kind: crate::diag::FixKind::HoistLoopBound,
        title: format!(
            "Copy the loop bound `{expr}` into a const {ty} local before the loop (asserts the loop does not change it)"
        ),
        applicability: Applicability::Unsafe,
        edits: vec![
            insert_line_before(
                text,
                sl.span.start as usize,
                &format!("const {ty} {name} = {expr};"),
            ),
            Edit {
                span: Span::new(start, end),
                new_text: name,
            },
        ],
    })
}

/// `for (...)` at the start of a `for` statement's text, up to the
/// parenthesis that closes the header (outside string and character
/// literals).
fn for_header(stmt: &str) -> Option<&str> {
    let open = stmt.find('(')?;
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for (i, &c) in stmt.as_bytes().iter().enumerate().skip(open) {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            b'"' | b'\'' => quote = Some(c),
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return stmt.get(..=i);
                }
            }
            _ => {}
        }
    }
    None
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
