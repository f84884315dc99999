//! Data sharing of the arrays a loop writes, for the OpenMP rewrite
//! (REWRITES.md "Arrays and other memory objects").
//!
//! The loop is analysed as an OpenMP loop without clauses would be: every
//! array counts, also the local ones a CSA loop keeps in registers. Then,
//! for each array the loop writes (or passes to a call):
//! * no pair of iterations conflicts on it (the pair tests): **shared**;
//! * every access is an element update `a(s) = a(s) op e` (also
//!   `a[s] op= e`, Fortran `max`/`min`), one operator, `e` never reading
//!   `a`: **reduction(op:a)** — the partial results combine as the
//!   sequential loop's updates do, whatever the subscripts;
//! * a local array (automatic storage, not visible outside the function,
//!   never passed to a call) of which every element an iteration reads was
//!   written earlier in the same iteration, and that no path from the loop
//!   reads before the function ends or writes it: **private**. "Written
//!   earlier" is proven one read at a time against one write: the write
//!   runs before the read on every path through the iteration (its block,
//!   or the outermost inner loop that holds it only, dominates the read),
//!   runs on every iteration of the inner loops that hold it only (which
//!   have one way out, so none is left early), and the
//!   box of elements it writes holds the box the read may touch. A box is
//!   per dimension `[lo, hi]` from the subscript's polynomial (a dimension
//!   the write selects whole, `w = 0` or `w(:, k)`, holds any read): each inner
//!   loop that holds only the write must step one dimension by +1 or -1
//!   (so the box is exact), loops that hold both accesses are the same
//!   iteration for both, and the bounds are compared as polynomials whose
//!   difference must be a constant of the right sign (Allen & Kennedy,
//!   "Optimizing Compilers for Modern Architectures", 5.5 on array
//!   privatization by upward-exposed reads; here with single-write
//!   coverage and no union of sections);
//!   A write stepping a dimension by `k` (`x(2*j - 1)`) covers a lattice:
//!   a read is inside when `k` divides its offset and it steps by the same
//!   `k` within the write's trip count;
//! * an array that is not local to the function, with a finding:
//!   **asserted** — a CSA loop shares it too, so the marker's assertion is
//!   all that makes the loop parallel under either model (shared; CSA501
//!   and CSA502 say what was found);
//! * otherwise **unproven**: the conversion would share an array whose
//!   elements the iterations may both use, and is refused.

use super::poly::{Atom, Poly};
use crate::scalars::RedOp;
use super::{Acc, Finding, Root, Sub, Unproven};
use crate::graph::dom::DomTree;
use crate::graph::loops::{LoopForest, LoopId};
use crate::ir::*;
use crate::source::Span;

/// What an OpenMP loop must make of an array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArrayClass {
    /// The iterations use different elements.
    Shared,
    /// Each iteration writes what it reads first: `private(a)`.
    Private,
    /// Every access is an element update with this operator.
    Reduction(RedOp),
    /// The iterations may use the same elements of an array that is not
    /// local to the function (a dummy, a global, memory behind a pointer):
    /// a CSA loop shares it too, so the marker's assertion that they do
    /// not is all that makes the loop parallel, under either model. Shared;
    /// CSA501/CSA502 report what the analysis found.
    Asserted,
    /// None of the above can be proven: why, and where.
    Unproven { why: String, at: Span },
}

/// One array the loop writes, and its class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayUse {
    pub var: VarId,
    pub class: ArrayClass,
}

/// What the classification reads.
pub(super) struct ArrayInput<'a> {
    pub func: &'a Function,
    pub dom: &'a DomTree,
    pub forest: &'a LoopForest,
    pub l: LoopId,
    pub accs: &'a [Acc],
    pub findings: &'a [Finding],
    /// Trip counts of the inner loops (constant or symbolic).
    pub trips: &'a [(LoopId, Poly)],
    /// The calls in the loop that write a section of an array on every
    /// call.
    pub call_covers: &'a [CallCover],
}

/// A call in the loop that writes a section of a whole array on every call
/// (a `cover::Cover` at the call, in the caller's terms).
#[derive(Clone, Debug)]
pub(super) struct CallCover {
    pub at: InstRef,
    pub var: VarId,
    /// Per subscript: `None` for the whole dimension, or `[lo, hi]`.
    pub section: Vec<Extent>,
    /// The callee reads only elements it wrote first.
    pub reads_covered: bool,
    /// The callee's other effects are unknown: none of its accesses are
    /// in the loop's.
    pub opaque: bool,
}

/// The arrays loop `inp.l` writes or passes to calls, in order of first
/// access, with their classes.
pub(super) fn classify(inp: &ArrayInput) -> Vec<ArrayUse> {
    let func = inp.func;
    let lp = &inp.forest.loops[inp.l.index()];
    let mut blocks = lp.blocks.clone();
    blocks.sort_unstable();
    let mut out: Vec<ArrayUse> = Vec::new();
    let mut seen: Vec<VarId> = Vec::new();
    // callees whose effects are unknown
    let opaque: Vec<&str> = inp
        .findings
        .iter()
        .filter_map(|f| match f {
            Finding::Unproven {
                why:
                    Unproven::UnknownCall(n)
                    | Unproven::UndeclaredReference(n)
                    | Unproven::OpaqueCallee { name: n, .. },
                ..
            } => Some(n.as_str()),
            _ => None,
        })
        .collect();
    // arrays the loop accesses, then arrays only unknown callees write
    let candidates = inp
        .accs
        .iter()
        .filter_map(|a| match a.root {
            Root::Var(v) => Some(v),
            _ => None,
        })
        .chain(inp.call_covers.iter().map(|c| c.var));
    for v in candidates {
        if seen.contains(&v) || !func.var(v).ty.is_array {
            continue;
        }
        seen.push(v);
        let mine: Vec<&Acc> = inp.accs.iter().filter(|x| x.root == Root::Var(v)).collect();
        let passed = passed_to_call(func, &blocks, v, &opaque, inp.call_covers);
        // written by a callee csa-lint sees no accesses of
        let opaque_write = inp.call_covers.iter().any(|c| c.var == v && c.opaque);
        if !mine.iter().any(|x| x.write) && passed.is_none() && !opaque_write {
            continue;
        }
        let name = &func.var(v).name;
        let finding = inp.findings.iter().find(|f| {
            let o = match f {
                Finding::Conflict { object, .. } | Finding::Unproven { object, .. } => object,
            };
            o == name || (func.lang == Lang::Fortran && o.eq_ignore_ascii_case(name))
        });
        let class = match finding {
            None if passed.is_none() && !opaque_write => ArrayClass::Shared,
            _ => {
                let var = func.var(v);
                let local = var.kind == VarKind::Local;
                // a pointer access in the loop may reach the shared copy
                // of an array whose address is taken
                let by_pointer = super::reachable_by_pointer(func, v)
                    && inp.accs.iter().any(|a| matches!(a.root, Root::Ptr(_)));
                // a callee that reads or writes a global array would see
                // the shared copy, not the partial results
                let by_callee = mine.iter().any(|a| a.from_call);
                // (OpenMP cannot make copies of an array of unknown size)
                let sized = !var.ty.assumed_size;
                if let Some(op) = reduction(func, &blocks, v).filter(|_| {
                    sized && passed.is_none() && !opaque_write && !by_pointer && !by_callee
                }) {
                    ArrayClass::Reduction(op)
                } else if !local {
                    ArrayClass::Asserted
                } else if let Some(why) = not_private(inp, &blocks, v, &mine, passed) {
                    why
                } else {
                    ArrayClass::Private
                }
            }
        };
        out.push(ArrayUse { var: v, class });
    }
    out
}

/// The first call in the loop to a procedure with unknown effects (one of
/// `opaque`, or through a pointer) that is passed `v` (by reference or as
/// a pointer), with its callee's name. Calls with known effects are
/// accesses of the loop already; a call that covers what it reads of `v`
/// (`covers`) writes it as the cover says and reads nothing of the caller's.
fn passed_to_call(
    func: &Function,
    blocks: &[u32],
    v: VarId,
    opaque: &[&str],
    covers: &[CallCover],
) -> Option<(String, Span)> {
    for &b in blocks {
        for (k, inst) in func.block(BlockId(b)).insts.iter().enumerate() {
            let InstKind::Call(c) = &inst.kind else {
                continue;
            };
            let at = InstRef {
                block: BlockId(b),
                index: k as u32,
            };
            if covers
                .iter()
                .any(|x| x.at == at && x.var == v && x.reads_covered)
            {
                continue;
            }
            let passes = c.passed_vars().any(|x| x == v);
            let unknown = c.callee.as_deref().is_none_or(|n| {
                opaque
                    .iter()
                    .any(|o| *o == n || (func.lang == Lang::Fortran && o.eq_ignore_ascii_case(n)))
            });
            if passes && unknown {
                let name = c
                    .callee
                    .clone()
                    .unwrap_or_else(|| "a function pointer".into());
                return Some((name, c.name_span));
            }
        }
    }
    None
}

/// Why `v` cannot be private, or `None` when it can.
fn not_private(
    inp: &ArrayInput,
    blocks: &[u32],
    v: VarId,
    mine: &[&Acc],
    passed: Option<(String, Span)>,
) -> Option<ArrayClass> {
    let func = inp.func;
    let var = func.var(v);
    let first_write = mine
        .iter()
        .find(|a| a.write)
        .map(|a| a.span)
        .or(passed.as_ref().map(|p| p.1))
        .unwrap_or(var.span);
    let unproven = |why: String, at: Span| Some(ArrayClass::Unproven { why, at });
    let shared_why = "the iterations may use the same elements of it";
    if var.address_taken && !var.only_passed {
        return unproven(
            format!(
                "{shared_why}, and its address is taken, so code csa-lint cannot see may use it"
            ),
            first_write,
        );
    }
    if let Some((callee, at)) = passed {
        return unproven(
            format!("{shared_why}, and it is passed to `{callee}`, whose reads and writes of it csa-lint cannot follow"),
            at,
        );
    }
    let unit = Unit {
        func,
        dom: inp.dom,
        forest: inp.forest,
        l: Some(inp.l),
        trips: inp.trips,
    };
    for r in mine.iter().filter(|a| !a.write) {
        let calls = inp.call_covers.iter().filter(|c| c.var == v);
        // a callee's read of what it wrote itself
        if r.from_call && calls.clone().any(|c| c.at == r.at && c.reads_covered) {
            continue;
        }
        let by_access = mine.iter().any(|w| {
            w.write
                && !w.from_call
                && unit.covers(
                    &Writer::Access {
                        at: w.at,
                        path: &w.path,
                    },
                    r.at,
                    &r.path,
                )
        });
        let by_call = || {
            calls.clone().any(|c| {
                unit.covers(
                    &Writer::Call {
                        at: c.at,
                        section: &c.section,
                    },
                    r.at,
                    &r.path,
                )
            })
        };
        // several writes, each before the read, whose boxes together hold it
        let by_union = || {
            let writers: Vec<Writer> = mine
                .iter()
                .filter(|w| w.write && !w.from_call)
                .map(|w| Writer::Access {
                    at: w.at,
                    path: &w.path,
                })
                .chain(calls.clone().map(|c| Writer::Call {
                    at: c.at,
                    section: &c.section,
                }))
                .collect();
            unit.union_covers(&writers, r.at, &r.path)
        };
        if !by_access && !by_call() && !by_union() {
            return unproven(
                format!("{shared_why}, and csa-lint cannot prove that each iteration writes the elements this read uses before reading them"),
                r.span,
            );
        }
    }
    if crate::scalars::live_after(func, blocks, v) {
        return unproven(
            format!("{shared_why}, and it is read after the loop, so it cannot be private"),
            first_write,
        );
    }
    None
}

/// What a write covers of one dimension: `None` for the whole dimension,
/// or the elements `[lo, hi]`.
pub type Extent = Option<(Poly, Poly)>;

/// Where coverage is proven: a function, and the unit whose runs are
/// compared, one iteration of loop `l` or (`l` is `None`) one call of the
/// function.
pub(super) struct Unit<'a> {
    pub func: &'a Function,
    pub dom: &'a DomTree,
    pub forest: &'a LoopForest,
    pub l: Option<LoopId>,
    /// Trip counts of loops inside the unit (constant or symbolic).
    pub trips: &'a [(LoopId, Poly)],
}

/// A write, as the coverage test sees it.
pub(super) enum Writer<'a> {
    /// An access of the unit with its evaluated subscripts.
    Access { at: InstRef, path: &'a [Sub] },
    /// A call that writes a section on every call (per subscript: `None`
    /// for the whole dimension, or `[lo, hi]`), `cover::Cover` at a call.
    Call { at: InstRef, section: &'a [Extent] },
}

impl Unit<'_> {
    /// The loops inside the unit that hold block `b`, innermost first.
    fn chain(&self, b: u32) -> Vec<LoopId> {
        let mut out = Vec::new();
        let mut cur = self.forest.loop_for(b);
        while let Some(m) = cur {
            if Some(m) == self.l {
                return out;
            }
            out.push(m);
            cur = self.forest.loops[m.index()].parent;
        }
        if self.l.is_some() {
            // `b` is not inside `l`
            return Vec::new();
        }
        out
    }

    fn trip(&self, m: LoopId) -> Option<Poly> {
        self.trips
            .iter()
            .find(|(x, _)| *x == m)
            .map(|(_, t)| t.clone())
    }

    /// When the instruction at `w` runs before the one at `r` on every
    /// path through the unit, and on every iteration of the loops that
    /// hold it and not `r` (each with one way out, so none is left early:
    /// a loop left by `exit`, `break`, `return` or `goto` writes only a
    /// prefix of its box): those loops and the loops that hold `r` only.
    fn before(&self, w: InstRef, r: InstRef) -> Option<(Vec<LoopId>, Vec<LoopId>)> {
        let forest = self.forest;
        let wc = self.chain(w.block.0);
        let rc = self.chain(r.block.0);
        let wonly: Vec<LoopId> = wc.iter().copied().filter(|m| !rc.contains(m)).collect();
        let ronly: Vec<LoopId> = rc.iter().copied().filter(|m| !wc.contains(m)).collect();
        match wonly.last() {
            None => {
                let before = if w.block == r.block {
                    w.index < r.index
                } else {
                    self.dom.dominates(w.block.0, r.block.0)
                };
                if !before {
                    return None;
                }
            }
            Some(top) => {
                if !self
                    .dom
                    .dominates(forest.loops[top.index()].header, r.block.0)
                {
                    return None;
                }
                let mut rep = w.block.0;
                for m in &wonly {
                    let ml = &forest.loops[m.index()];
                    if ml.latches.len() != 1
                        || ml.exiting_blocks.len() != 1
                        || !self.dom.dominates(rep, ml.latches[0])
                    {
                        return None;
                    }
                    rep = ml.header;
                }
            }
        }
        Some((wonly, ronly))
    }

    /// Whether write `w` writes, earlier in every run of the unit, every
    /// element the read at `r` with subscripts `rpath` may touch.
    pub(super) fn covers(&self, w: &Writer, r: InstRef, rpath: &[Sub]) -> bool {
        match w {
            Writer::Access { at, path } => self.access_covers(*at, path, r, rpath),
            Writer::Call { at, section } => {
                let Some((wonly, ronly)) = self.before(*at, r) else {
                    return false;
                };
                // (a call in a loop the read is not in may not run at all)
                wonly.is_empty()
                    && section.len() == rpath.len()
                    && section.iter().zip(rpath).all(|(s, sr)| match (s, sr) {
                        (None, _) => true,
                        (Some((lo, hi)), Sub::Index(Ok(pr))) => {
                            read_box(pr, &ronly, &|m| self.trip(m))
                                .is_some_and(|(rlo, rhi)| le(lo, &rlo) && le(&rhi, hi))
                        }
                        _ => false,
                    })
            }
        }
    }

    /// Whether writes `ws` together write, earlier in every run of the
    /// unit, every element the read at `r` may touch: the boxes of the
    /// writes that run before the read, in one dimension, chain from the
    /// read's lower bound to its upper one (each starting at or below the
    /// first element not yet covered), while in every other dimension they
    /// hold the read's range (`c(1) = ...; c(2) = ...; ... c(1:2)`).
    pub(super) fn union_covers(&self, ws: &[Writer], r: InstRef, rpath: &[Sub]) -> bool {
        let mut boxes: Vec<(Vec<Extent>, Vec<LoopId>)> =
            ws.iter().filter_map(|w| self.written_box(w, r)).collect();
        let Some(ronly) = boxes.first().map(|b| b.1.clone()) else {
            return false;
        };
        // writes in the same loops relative to the read: one read box
        boxes.retain(|b| b.1 == ronly);
        let ronly = &ronly;
        let trip = |m: LoopId| self.trip(m);
        // the read's box (`ronly` is the same for every write)
        let Some(read): Option<Vec<(Poly, Poly)>> = rpath
            .iter()
            .map(|s| match s {
                Sub::Index(Ok(p)) => read_box(p, ronly, &trip),
                Sub::Range(lo, hi) => {
                    Some((read_box(lo, ronly, &trip)?.0, read_box(hi, ronly, &trip)?.1))
                }
                _ => None,
            })
            .collect()
        else {
            return false;
        };
        let holds = |b: &Extent, (rlo, rhi): &(Poly, Poly)| match b {
            None => true,
            Some((lo, hi)) => le(lo, rlo) && le(rhi, hi),
        };
        (0..read.len()).any(|d| {
            let mut pieces: Vec<(Poly, Poly)> = boxes
                .iter()
                .filter(|(b, _)| b.len() == read.len())
                .filter(|(b, _)| (0..read.len()).all(|e| e == d || holds(&b[e], &read[e])))
                .map(|(b, _)| b[d].clone().unwrap_or_else(|| read[d].clone()))
                .collect();
            let (rlo, rhi) = &read[d];
            let mut cur = rlo.clone();
            loop {
                // covered up to `rhi`
                if cur.add(&Poly::constant(-1)).is_some_and(|c| le(rhi, &c)) {
                    return true;
                }
                let Some(k) = pieces
                    .iter()
                    .position(|(lo, hi)| le(lo, &cur) && le(&cur, hi))
                else {
                    return false;
                };
                let (_, hi) = pieces.swap_remove(k);
                match hi.add(&Poly::constant(1)) {
                    Some(next) => cur = next,
                    None => return false,
                }
            }
        })
    }

    /// The box writer `w` writes on every run of the unit before the read
    /// at `r` (per dimension `None` for the whole dimension, or `[lo,
    /// hi]`), and the loops that hold the read only; `None` when it may
    /// not run before the read or its box is not exact.
    fn written_box(&self, w: &Writer, r: InstRef) -> Option<(Vec<Extent>, Vec<LoopId>)> {
        match w {
            Writer::Call { at, section } => {
                let (wonly, ronly) = self.before(*at, r)?;
                wonly.is_empty().then(|| (section.to_vec(), ronly))
            }
            Writer::Access { at, path } => {
                let (wonly, ronly) = self.before(*at, r)?;
                let whole = self.whole_dims(*at, path.len());
                let trip = |m: LoopId| self.trip(m);
                let mut stepped = Vec::new();
                let mut out = Vec::new();
                for (s, all) in path.iter().zip(&whole) {
                    out.push(match s {
                        _ if *all => None,
                        Sub::Index(Ok(p)) => Some(write_box(p, &wonly, &mut stepped, &trip)?),
                        Sub::Range(lo, hi) => {
                            let fixed =
                                |p: &Poly| split(p, &wonly).is_some_and(|(_, t)| t.is_empty());
                            if !fixed(lo) || !fixed(hi) {
                                return None;
                            }
                            Some((lo.clone(), hi.clone()))
                        }
                        _ => return None,
                    });
                }
                (!out.is_empty() && wonly.iter().all(|m| stepped.contains(m)))
                    .then_some((out, ronly))
            }
        }
    }

    /// The dimensions the access at `at` selects whole (`w = 0`,
    /// `w(:, k) = ...`).
    fn whole_dims(&self, at: InstRef, n: usize) -> Vec<bool> {
        match self.func.inst_at(at).map(|i| &i.kind) {
            Some(InstKind::Access(a)) if a.path.len() == n => a
                .path
                .iter()
                .map(|s| {
                    matches!(
                        s,
                        Sel::Range {
                            lo: None,
                            hi: None,
                            step: None
                        }
                    )
                })
                .collect(),
            _ => vec![false; n],
        }
    }

    fn access_covers(&self, w: InstRef, wpath: &[Sub], r: InstRef, rpath: &[Sub]) -> bool {
        if wpath.len() != rpath.len() || wpath.is_empty() {
            return false;
        }
        let Some((wonly, ronly)) = self.before(w, r) else {
            return false;
        };
        let whole = self.whole_dims(w, wpath.len());
        let trip = |m: LoopId| self.trip(m);
        let mut stepped: Vec<LoopId> = Vec::new();
        for ((sw, sr), all) in wpath.iter().zip(rpath).zip(&whole) {
            if *all {
                // every element of the dimension is written
                continue;
            }
            match (sw, sr) {
                (Sub::Field(a), Sub::Field(b)) if a == b => {}
                (Sub::Index(Ok(pw)), Sub::Index(Ok(pr))) => {
                    if let Some(ok) = strided(pw, pr, &wonly, &ronly, &mut stepped, &trip) {
                        if !ok {
                            return false;
                        }
                        continue;
                    }
                    let Some((wlo, whi)) = write_box(pw, &wonly, &mut stepped, &trip) else {
                        return false;
                    };
                    let Some((rlo, rhi)) = read_box(pr, &ronly, &trip) else {
                        return false;
                    };
                    if !le(&wlo, &rlo) || !le(&rhi, &whi) {
                        return false;
                    }
                }
                _ => return false,
            }
        }
        // a loop that holds only the write and steps no dimension: the
        // write may not run at all (zero trips)
        wonly.iter().all(|m| stepped.contains(m))
    }
}

/// `small <= big`: their difference is a constant of that sign.
fn le(small: &Poly, big: &Poly) -> bool {
    big.sub(small)
        .and_then(|d| d.as_constant())
        .is_some_and(|d| d >= 0)
}

/// The section a write at `at` (subscripts `path`) writes on every run of
/// a unit that is one call of its function (`u.l` is `None`), over what
/// does not change during the call: per subscript `None` for a whole
/// dimension or `[lo, hi]`. `None` when the write may not run on some
/// call (it does not run before `exit`, the return block, on every path),
/// or its box is not exact.
pub(super) fn exit_section(
    u: &Unit,
    at: InstRef,
    path: &[Sub],
    exit: BlockId,
) -> Option<Vec<Extent>> {
    let (section, _) = u.written_box(
        &Writer::Access { at, path },
        InstRef {
            block: exit,
            index: 0,
        },
    )?;
    let varies = |b: &Extent| {
        b.as_ref()
            .is_some_and(|(lo, hi)| lo.has_iter() || hi.has_iter())
    };
    (!section.iter().any(varies)).then_some(section)
}

/// `p` split into the part without `ranged` counters and the terms with
/// them, each `(loop, coefficient)`; `None` when a counter of `ranged` is
/// multiplied by anything but a constant.
fn split(p: &Poly, ranged: &[LoopId]) -> Option<(Poly, Vec<(LoopId, i64)>)> {
    let mut fixed = p.clone();
    let mut terms = Vec::new();
    for (m, k) in &p.terms {
        let atoms = m.as_slice();
        let hits = atoms
            .iter()
            .filter(|a| matches!(a, Atom::Iter(x) if ranged.contains(x)))
            .count();
        if hits == 0 {
            continue;
        }
        match atoms {
            [Atom::Iter(x)] => {
                terms.push((*x, *k));
                fixed = fixed.sub(&Poly::atom(Atom::Iter(*x)).scale(*k)?)?;
            }
            _ => return None,
        }
    }
    Some((fixed, terms))
}

/// The elements a write's subscript covers over the loops that hold only
/// the write: exact, so at most one such loop per dimension, stepping it
/// by +1 or -1.
fn write_box(
    p: &Poly,
    wonly: &[LoopId],
    stepped: &mut Vec<LoopId>,
    trip: &dyn Fn(LoopId) -> Option<Poly>,
) -> Option<(Poly, Poly)> {
    let (fixed, terms) = split(p, wonly)?;
    match terms.as_slice() {
        [] => Some((fixed.clone(), fixed)),
        [(m, k)] if k.abs() == 1 && !stepped.contains(m) => {
            stepped.push(*m);
            let span = trip(*m)?.sub(&Poly::constant(1))?;
            let far = fixed.add_scaled(&span, *k)?;
            Some(if *k > 0 { (fixed, far) } else { (far, fixed) })
        }
        _ => None,
    }
}

/// A write that steps a dimension by `k` (`|k| > 1`: `x(2*j - 1)` for
/// `j` in `[0, T)`) covers the elements `fixed + k*t`, a lattice: a read
/// is inside it when it has no counter of its own there and its offset
/// from `fixed` is a multiple `q` of `k` with `0 <= q < T`, or steps by the
/// same `k` over `T'` iterations from such an offset with `q + T' <= T`.
/// `None` when the write does not step the dimension by more than one
/// (the box test applies); `Some(covered)` otherwise.
fn strided(
    pw: &Poly,
    pr: &Poly,
    wonly: &[LoopId],
    ronly: &[LoopId],
    stepped: &mut Vec<LoopId>,
    trip: &dyn Fn(LoopId) -> Option<Poly>,
) -> Option<bool> {
    let (wfixed, wterms) = split(pw, wonly)?;
    let [(m, k)] = wterms.as_slice() else {
        return None;
    };
    if k.abs() <= 1 || stepped.contains(m) {
        return None;
    }
    stepped.push(*m);
    let Some((rfixed, rterms)) = split(pr, ronly) else {
        return Some(false);
    };
    let Some(d) = rfixed.sub(&wfixed).and_then(|d| d.as_constant()) else {
        return Some(false);
    };
    if d % k != 0 || d / k < 0 {
        return Some(false);
    }
    let q = d / k;
    let Some(tw) = trip(*m) else {
        return Some(false);
    };
    // the iterations of the write the read needs: q .. q + tr
    let tr = match rterms.as_slice() {
        [] => Poly::constant(1),
        [(mr, kr)] if kr == k => match trip(*mr) {
            Some(t) => t,
            None => return Some(false),
        },
        _ => return Some(false),
    };
    Some(
        tw.sub(&tr)
            .and_then(|x| x.add(&Poly::constant(-q)))
            .and_then(|x| x.as_constant())
            .is_some_and(|x| x >= 0),
    )
}

/// The elements a read's subscript may touch over the loops that hold
/// only the read (a superset is fine; those loops run at least once when
/// the read runs).
fn read_box(
    p: &Poly,
    ronly: &[LoopId],
    trip: &dyn Fn(LoopId) -> Option<Poly>,
) -> Option<(Poly, Poly)> {
    let (fixed, terms) = split(p, ronly)?;
    let (mut lo, mut hi) = (fixed.clone(), fixed);
    for (m, k) in terms {
        let span = trip(m)?.sub(&Poly::constant(1))?;
        if k > 0 {
            hi = hi.add_scaled(&span, k)?;
        } else {
            lo = lo.add_scaled(&span, k)?;
        }
    }
    Some((lo, hi))
}

/// The operator when every access of array `v` in the loop is an element
/// update `v(s) = v(s) op e` whose read is the same element (same
/// subscript expressions) and `e` does not read `v`.
fn reduction(func: &Function, blocks: &[u32], v: VarId) -> Option<RedOp> {
    let mut op: Option<RedOp> = None;
    let mut operands: Vec<InstRef> = Vec::new();
    let mut reads: Vec<InstRef> = Vec::new();
    for &b in blocks {
        for (k, inst) in func.block(BlockId(b)).insts.iter().enumerate() {
            let InstKind::Access(a) = &inst.kind else {
                continue;
            };
            if a.target != AccessTarget::Var(v) {
                continue;
            }
            let at = InstRef {
                block: BlockId(b),
                index: k as u32,
            };
            if !a.write {
                reads.push(at);
                continue;
            }
            if a.path.is_empty() || a.path.iter().any(|s| !matches!(s, Sel::Index(_))) {
                return None;
            }
            let same_element = |r: InstRef| match func.inst_at(r).map(|i| &i.kind) {
                Some(InstKind::Access(x)) => {
                    x.target == AccessTarget::Var(v) && !x.write && func.same_path(&x.path, &a.path)
                }
                _ => false,
            };
            let (this, operand) = crate::scalars::update_by(func, a.rhs?, &same_element, &|e| {
                crate::scalars::mentions(func, e, v)
            })?;
            // the subscripts must not read the array
            for s in &a.path {
                if let Sel::Index(e) = s {
                    if crate::scalars::mentions(func, *e, v) {
                        return None;
                    }
                }
            }
            op = match op {
                None => Some(this),
                Some(o) if !o.fits(this) => return None,
                Some(RedOp::Sub) if this == RedOp::Add => Some(RedOp::Add),
                Some(o) => Some(o),
            };
            operands.push(operand);
        }
    }
    if reads
        .iter()
        .all(|r| operands.contains(r) && crate::scalars::used_once(func, *r))
    {
        op
    } else {
        None
    }
}
