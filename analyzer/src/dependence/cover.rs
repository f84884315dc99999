//! The sections of its parameters' memory that a same-file function writes
//! on every call: must-write summaries (the MUST-DEF counterpart of the
//! MOD sets in `summary`; Allen & Kennedy, "Optimizing Compilers for
//! Modern Architectures", 11.2, with the regular-section description of
//! 11.3 restricted to boxes). A call then covers, for the array
//! privatization of `arrays`, the reads of its caller's array that come
//! after it: `call fill(w, n)` that writes `w(1:n)` on every call makes `w`
//! private to an iteration that reads `w(1:n)` after the call.
//!
//! A parameter's write is a must-write when it runs on every call (its
//! block, or the outermost loop that holds it, dominates the return
//! block) and on every iteration of the loops that hold it, each loop being
//! a counted loop (`DO i = lo, hi` or `for (i = lo; i < hi; i++)`, step +1,
//! bounds over unchanged parameters, a counter only the loop's increment
//! changes, one way out) that steps one dimension of the subscript by +1 or
//! -1. Its section is then a box over the parameters, which a call
//! instantiates with its actual arguments.
//!
//! A call whose callee may read the parameter before writing it is a read
//! of its caller's array too, so a cover also says whether every read the
//! callee makes of that memory is covered by its own earlier writes (the
//! same box test). A Fortran dummy declared `intent(out)` is covered whole
//! with no read of its own (F2018 8.5.10: it becomes undefined on entry, so
//! a conforming callee defines what it references, and the caller may then
//! reference only what the callee defined): its reads never read the
//! caller's values, and an assumed-shape one (`a(:)`, the shape of its
//! actual) is covered whole.
//!
//! Only Fortran dummy arrays without POINTER or TARGET get covers, and only
//! when the dummy is not passed on to another call; the callee's other
//! effects may be unknown, since nothing else can reach the actual while
//! the call runs (F2018 15.5.2.13). C is not covered: an array passed to a
//! call has its address taken, and nothing tells where the callee's copy
//! of the pointer goes.

use super::arrays::{exit_section, Extent, Unit};
use super::poly::{Atom, Poly};
use super::summary::{value_with, written_vars};
use super::Sub;
use crate::graph::dom::DomTree;
use crate::graph::loops::{find_loops_with_preds, LoopForest, LoopId};
use crate::graph::Csr;
use crate::ir::*;
use crate::source::Span;

/// A section of what a parameter reaches that every call writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cover {
    /// The parameter (0-based).
    pub index: usize,
    /// The dummy's declared dimensions: an actual array of the same shape
    /// (`summary::same_shape`) is covered alike. Empty for an assumed-shape
    /// dummy covered whole: any whole actual array is.
    pub dims: Vec<Dim>,
    /// Per subscript of the parameter's memory (Fortran: dimension; C: the
    /// pointer's index, then the pointed-to array's): `None` for a whole
    /// dimension, or the range `[lo, hi]` over the callee's unchanged
    /// parameters (atoms `Atom::Sym` of its parameter variables).
    pub section: Vec<Extent>,
    /// Every read the callee makes of the parameter's memory reads an
    /// element the same call wrote before: the call reads nothing of its
    /// caller's array.
    pub reads_covered: bool,
}

/// The covers of the Fortran function `f`'s dummy arrays.
pub fn covers(f: &Function) -> Vec<Cover> {
    let mut out = Vec::new();
    if f.lang != Lang::Fortran {
        return out;
    }
    // the dummies whose writes are worth a look, and whether INTENT(OUT)
    let mut targets: Vec<(usize, VarId, bool)> = Vec::new();
    let written = written_vars(f);
    for (k, p) in f.params.iter().enumerate() {
        let Some(p) = *p else { continue };
        let var = f.var(p);
        if var.kind != VarKind::Dummy || !var.ty.is_array || var.ty.pointer_or_target {
            continue;
        }
        let out_intent = var.ty.intent == Intent::Out;
        if out_intent && var.ty.assumed_shape {
            // the whole actual, whatever its shape
            out.push(Cover {
                index: k,
                dims: Vec::new(),
                section: vec![None; var.ty.dims.len()],
                reads_covered: true,
            });
        }
        targets.push((k, p, out_intent));
    }
    if targets.is_empty() {
        return out;
    }
    let succs = crate::graph::successor_graph(f);
    let preds = Csr::reversed(&succs);
    let dom = DomTree::dominators_with_preds(&succs, &preds, 0);
    let forest = find_loops_with_preds(&succs, &preds, &dom);
    let Some(exit) = f
        .blocks
        .iter()
        .position(|b| matches!(b.term.kind, TermKind::Return))
        .filter(|&b| dom.contains(b as u32))
    else {
        return out;
    };
    let counted = counted_loops(f, &forest, &written);
    let trips: Vec<(LoopId, Poly)> = counted.iter().map(|c| (c.id, c.trip.clone())).collect();
    let unit = Unit {
        func: f,
        dom: &dom,
        forest: &forest,
        l: None,
        trips: &trips,
    };
    for (k, target, out_intent) in targets {
        // the accesses of the parameter's memory, with their subscripts
        let mut writes: Vec<(InstRef, Vec<Sub>)> = Vec::new();
        let mut reads: Vec<(InstRef, Vec<Sub>)> = Vec::new();
        let mut passed = false;
        for (bi, b) in f.blocks.iter().enumerate() {
            if !dom.contains(bi as u32) {
                continue;
            }
            for (ii, inst) in b.insts.iter().enumerate() {
                let at = InstRef {
                    block: BlockId(bi as u32),
                    index: ii as u32,
                };
                match &inst.kind {
                    InstKind::Access(a) if a.target == AccessTarget::Var(target) => {
                        let path = subscripts(f, &written, &forest, &counted, inst.span, a);
                        if a.write {
                            writes.push((at, path));
                        } else {
                            reads.push((at, path));
                        }
                    }
                    InstKind::Call(c) => {
                        passed |= c.passed_vars().any(|x| x == target);
                    }
                    _ => {}
                }
            }
        }
        if passed {
            continue;
        }
        let reads_covered = out_intent
            || reads.iter().all(|(r, rp)| {
                writes.iter().any(|(w, wp)| {
                    unit.covers(&super::arrays::Writer::Access { at: *w, path: wp }, *r, rp)
                })
            });
        let dims = f.var(target).ty.dims.clone();
        for (w, wp) in &writes {
            if let Some(section) = exit_section(&unit, *w, wp, BlockId(exit as u32)) {
                let c = Cover {
                    index: k,
                    dims: dims.clone(),
                    section,
                    reads_covered,
                };
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
    }
    out
}

/// A counted loop of the callee: its counter is `init + t` on iteration
/// `t` (`Atom::Iter`), for `trip` iterations.
struct Counted {
    id: LoopId,
    var: VarId,
    init: Poly,
    trip: Poly,
}

/// The loops of `f` whose counter and trip count are known over its
/// unchanged parameters (step +1, a counter only the loop's increment
/// writes and no call receives).
fn counted_loops(f: &Function, forest: &LoopForest, written: &[bool]) -> Vec<Counted> {
    let mut out = Vec::new();
    for id in forest.ids() {
        let lp = &forest[id];
        let [latch] = lp.latches.as_slice() else {
            continue;
        };
        let Some(c) = f
            .source_loop_with_header(lp.header)
            .and_then(|sl| sl.control.as_ref())
        else {
            continue;
        };
        let value = |e| value_with(f, written, e, &|_, _| None);
        let (Some(init), Some(limit), Some(step)) = (value(c.init), value(c.limit), value(c.step))
        else {
            continue;
        };
        if step.as_constant() != Some(1) {
            continue;
        }
        let Some(trip) = super::counted_trips(c.cmp, &init, &limit) else {
            continue;
        };
        // the counter changes only in the latch, and no call sees it
        let alone = lp.blocks.iter().all(|&b| {
            f.block(BlockId(b))
                .insts
                .iter()
                .all(|inst| match &inst.kind {
                    InstKind::Access(a) => {
                        !(a.write && a.target == AccessTarget::Var(c.var)) || b == *latch
                    }
                    InstKind::Call(call) => !call.passed_vars().any(|x| x == c.var),
                    _ => true,
                })
        });
        if alone && f.var(c.var).kind != VarKind::Dummy {
            out.push(Counted {
                id,
                var: c.var,
                init,
                trip,
            });
        }
    }
    out
}

/// The subscripts of access `a` at `at`, counters of `counted` loops as
/// `init + Atom::Iter(loop)`.
fn subscripts(
    f: &Function,
    written: &[bool],
    forest: &LoopForest,
    counted: &[Counted],
    span: Span,
    a: &Access,
) -> Vec<Sub> {
    // the value of a counter read at `r`: the loop's current one, unless
    // the read follows the increment in the latch
    let counter = |r: InstRef, v: VarId| -> Option<Poly> {
        let c = counted
            .iter()
            .filter(|c| c.var == v && forest.contains(c.id, r.block.0))
            // the innermost loop of that counter holding the read
            .max_by_key(|c| forest[c.id].depth)?;
        let latch = forest[c.id].latches[0];
        if r.block.0 == latch {
            let first_write = f.block(r.block).insts.iter().position(
                |i| matches!(&i.kind, InstKind::Access(x) if x.write && x.target == AccessTarget::Var(v)),
            );
            if first_write.is_some_and(|w| w < r.index as usize) {
                return None;
            }
        }
        c.init.add(&Poly::atom(Atom::Iter(c.id)))
    };
    let dims = match a.target {
        AccessTarget::Var(v) => f.var(v).ty.dims.as_slice(),
        _ => &[],
    };
    super::subscripts(&a.path, a.index, dims, span, &|e| {
        value_with(f, written, e, &counter).ok_or(super::Why::NotAffine(span))
    })
}
