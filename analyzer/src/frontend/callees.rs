//! The same-file callees of lowered functions ([`crate::ir::Function::callees`]),
//! for the dependence analysis's effect summaries (`dependence::summary`).
//!
//! A function the front end lowers and that holds a loop gets, lowered in
//! full (never as an outline), every function defined in the same file that
//! it calls, directly or through them, up to [`MAX_CALLEES`]. A name
//! defined twice (two `#if` branches) is left out: its calls stay unknown.
//! Each callee is lowered once per file, however many functions call it,
//! and not at all when the front end lowered it in full for itself (C,
//! [`attach_reusing`]).

use crate::ir::{Function, InstKind};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Most callees attached to one function (the rest stay unknown calls).
pub const MAX_CALLEES: usize = 64;

/// Fills `callees` of every lowered function of `funcs` that holds a loop.
/// `defined` maps a name as calls spell it (C: as written; Fortran: lower
/// case) to the definition's index, `None` when defined more than once;
/// `lower(i)` lowers definition `i` in full (it is asked at most once for
/// each `i`).
///
/// `local(k)`: names only `funcs[k]` sees, which take precedence (Fortran:
/// its internal procedures).
pub(crate) fn attach(
    funcs: &mut [Function],
    defined: &FxHashMap<String, Option<usize>>,
    local: &dyn Fn(usize) -> Option<FxHashMap<String, Option<usize>>>,
    lower: &mut dyn FnMut(usize) -> Option<Function>,
) {
    attach_with(funcs, defined, local, lower, false);
}

/// [`attach`] when `funcs[i]` is definition `i` (every definition of the
/// file lowered, some as outlines): a callee `funcs` holds lowered in full
/// is copied rather than lowered again. `lower(i)` must give what lowering
/// `funcs[i]` in full gave.
pub(crate) fn attach_reusing(
    funcs: &mut [Function],
    defined: &FxHashMap<String, Option<usize>>,
    lower: &mut dyn FnMut(usize) -> Option<Function>,
) {
    attach_with(funcs, defined, &|_| None, lower, true);
}

fn attach_with(
    funcs: &mut [Function],
    defined: &FxHashMap<String, Option<usize>>,
    local: &dyn Fn(usize) -> Option<FxHashMap<String, Option<usize>>>,
    lower: &mut dyn FnMut(usize) -> Option<Function>,
    reuse: bool,
) {
    let mut cache: FxHashMap<usize, Option<Arc<Function>>> = FxHashMap::default();
    for k in 0..funcs.len() {
        let f = &funcs[k];
        if f.outline || f.source_loops.is_empty() {
            continue;
        }
        let mut out: Vec<Arc<Function>> = Vec::new();
        let mut seen: Vec<usize> = Vec::new();
        let mut queue: Vec<usize> = match local(k) {
            Some(mut names) => {
                for (n, i) in defined {
                    names.entry(n.clone()).or_insert(*i);
                }
                called(f, &names)
            }
            None if defined.is_empty() => continue,
            None => called(f, defined),
        };
        while let Some(i) = queue.pop() {
            if seen.contains(&i) || out.len() >= MAX_CALLEES {
                continue;
            }
            seen.push(i);
            let got = cache
                .entry(i)
                .or_insert_with(|| match funcs.get(i) {
                    Some(g) if reuse && !g.outline => {
                        // as lowered for itself, without its own callees
                        let mut g = g.clone();
                        g.callees = Vec::new();
                        Some(Arc::new(g))
                    }
                    _ => lower(i).map(Arc::new),
                })
                .clone();
            if let Some(g) = got {
                queue.extend(called(&g, defined));
                out.push(g);
            }
        }
        funcs[k].callees = out;
    }
}

/// The definitions `f` calls by name.
fn called(f: &Function, defined: &FxHashMap<String, Option<usize>>) -> Vec<usize> {
    let mut out = Vec::new();
    for b in &f.blocks {
        for inst in &b.insts {
            if let InstKind::Call(c) = &inst.kind {
                if let Some(Some(i)) = c.callee.as_deref().and_then(|n| defined.get(n)) {
                    if !out.contains(i) {
                        out.push(*i);
                    }
                }
            }
        }
    }
    out
}
