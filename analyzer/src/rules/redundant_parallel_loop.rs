//! # CSA208 redundant-parallel-loop
//!
//! ## What it does
//! Reports a `parallel_loop` marker on a loop (that CLIE parallelizes) where
//! every alias set of the loop's memory operations holds only loads or a
//! single store. The memory ordering pass then finds no loop-carried
//! ordering edge on its own: the marker changes nothing.
//!
//! Alias sets group the loop's memory operations that may touch the same
//! memory under the alias model (distinct named objects, incompatible types
//! and `restrict` pointers do not alias; calls alias everything they can
//! reach). A call in the loop is neither a load nor a store and always
//! needs ordering across iterations (`RequireOrdering` orders every
//! non-intrinsic call), so its loop is never reported; that holds for calls
//! to functions that touch no memory too (a `const` function, or a math
//! function clang does not turn into an LLVM intrinsic, such as `tanh`),
//! which CLIE does not count. Inline assembly is
//! not a memory operation to the ordering pass at all
//! (`needsOrderingEdges`: the compiler warns that memory instructions in
//! inline asm are not ordered), so it takes no part in the alias sets; a
//! loop holding it is still not reported, because the dependence analysis
//! cannot see what it touches (CSA502). Neither is any other loop in which
//! the dependence analysis (CSA501/CSA502) finds iterations that may touch
//! the same memory: pointer offsets (`p = a + 1`) that the alias sets keep
//! apart would make this note contradict that finding.
//!
//! ## Why it matters
//! Nothing breaks; the marker is noise, and it may hide that the loop's
//! parallelism comes from `restrict` or from distinct arrays rather than from
//! the assertion you meant to make.
//!
//! ## Example
//! ```c
//! void scale(double *restrict out, const double *restrict in, int n) {
//!   __builtin_csa_parallel_loop();   // redundant: loads of `in`, one store
//!   for (int i = 0; i < n; i++) out[i] = 2.0 * in[i];
//! }
//! ```
//!
//! ## How to fix
//! Remove the marker, or keep it as documentation and suppress this note.
//!
//! ## Fix safety
//! The fix removes the marker. It is unsafe: it drops what the marker
//! asserts, which matters again if the loop changes.

use super::FunctionContext;
use crate::clie::Outcome;
use crate::diag::{Applicability, Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::BuiltinKind;
use crate::memory::alias::{self, Loc};
use crate::memory::{MemOpKind, VarFacts};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(208),
    name: "redundant-parallel-loop",
    severity: Severity::Info,
    fixable: true,
    summary:
        "parallel_loop on a loop whose alias sets hold only loads or one store changes nothing",
    source: include_str!("redundant_parallel_loop.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    let facts = &cx.memory.vars;
    for v in &cx.clie.verdicts {
        if !matches!(v.outcome, Outcome::Parallelized(_))
            || cx.func.builtin(v.marker).kind != BuiltinKind::ParallelLoop
        {
            continue;
        }
        // the dependence analysis sees iterations that may touch the same
        // memory (pointers the alias sets below keep apart, say): then the
        // marker is not redundant, whatever the alias sets say
        if cx
            .deps
            .iter()
            .any(|d| d.loop_id == v.loop_id && !d.findings.is_empty())
        {
            continue;
        }
        // The loop's memory operations that the ordering pass orders.
        let ops: Vec<usize> = cx
            .memory
            .ops
            .iter()
            .enumerate()
            .filter(|(_, op)| {
                cx.forest.contains(v.loop_id, op.block.0)
                    && !matches!(
                        op.kind,
                        MemOpKind::Intrinsic | MemOpKind::LifetimeStart | MemOpKind::Asm
                    )
            })
            .map(|(i, _)| i)
            .collect();
        if ops.is_empty() || calls_ordered_pure_function(cx, v.loop_id) {
            continue;
        }
        // Union-find over "may touch the same memory".
        let mut parent: Vec<usize> = (0..ops.len()).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for i in 0..ops.len() {
            for j in i + 1..ops.len() {
                if may_overlap(cx, facts, ops[i], ops[j]) {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                    parent[a] = b;
                }
            }
        }
        let mut writes = vec![0usize; ops.len()];
        let mut members = vec![0usize; ops.len()];
        let mut opaque = vec![false; ops.len()];
        for (i, &op) in ops.iter().enumerate() {
            let root = find(&mut parent, i);
            members[root] += 1;
            let kind = cx.memory.ops[op].kind;
            if kind == MemOpKind::Write {
                writes[root] += 1;
            }
            // A call is neither a load nor a store, and is not ordered with
            // its own previous iteration: it always needs a loop-carried
            // edge.
            if kind == MemOpKind::Call {
                opaque[root] = true;
            }
        }
        let redundant = (0..ops.len())
            .filter(|&r| members[r] > 0)
            .all(|r| !opaque[r] && (writes[r] == 0 || (writes[r] == 1 && members[r] == 1)));
        if !redundant {
            continue;
        }
        let loop_span = cx.loop_span(v.loop_id);
        out.push(
            Diagnostic::new(
                &RULE,
                cx.func.builtin(v.marker).span,
                format!(
                    "parallel_loop is redundant here: every alias set of the loop at {} holds only loads or a single store, so the memory ordering pass needs no help to run its iterations in parallel",
                    cx.line(loop_span)
                ),
            )
            .with_related(loop_span, "the marked loop")
            .with_help("Remove the marker, or keep it as documentation and suppress this note.")
            .with_fixes(cx.remove_marker_fix(cx.func.builtin(v.marker), Applicability::Unsafe)),
        );
    }
}

/// Whether the loop calls a function that touches no memory but stays a
/// call after clang (a `readnone` library or declared function, not an
/// LLVM intrinsic): CLIE does not count it, but the ordering pass orders
/// it across iterations like any call.
fn calls_ordered_pure_function(cx: &FunctionContext, l: crate::graph::loops::LoopId) -> bool {
    cx.func.blocks.iter().enumerate().any(|(b, block)| {
        cx.forest.contains(l, b as u32)
            && block.insts.iter().any(|i| match &i.kind {
                crate::ir::InstKind::Call(c) => c
                    .callee
                    .as_deref()
                    .is_some_and(|n| crate::memory::pure_call_stays_call(n, cx.pure_functions)),
                _ => false,
            })
    })
}

/// Whether two memory operations may touch the same memory.
fn may_overlap(cx: &FunctionContext, facts: &VarFacts, a: usize, b: usize) -> bool {
    let (x, y) = (&cx.memory.ops[a], &cx.memory.ops[b]);
    let opaque = |k: MemOpKind| matches!(k, MemOpKind::Call | MemOpKind::Asm);
    match (x.loc, y.loc) {
        (Some(l1), Some(l2)) => alias::may_alias(cx.func, &l1, &l2),
        (Some(l), None) | (None, Some(l)) => {
            let other = if x.loc.is_none() { x } else { y };
            match other.kind {
                MemOpKind::Asm => true,
                MemOpKind::Call => alias::call_may_touch(cx.func, facts, &l),
                _ => may_alias_unknown(&l),
            }
        }
        (None, None) => opaque(x.kind) || opaque(y.kind),
    }
}

/// A prefetch has no location: treat it as touching anything of its type.
fn may_alias_unknown(_l: &Loc) -> bool {
    true
}
