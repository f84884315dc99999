//! Dependence analysis of loops asserted parallel (DIAGNOSTICS.md, CSA5xx).
//!
//! A CSA `parallel_loop`/`spmd`/`spmdization` marker that CLIE acts on, and
//! an OpenMP worksharing loop, assert that no two iterations touch the same
//! memory location when one of them writes it. This module checks the
//! assertion on the IR:
//!
//! 1. the accesses of the loop (inner loops included) are grouped by the
//!    object they reach: a named variable, or the memory behind a pointer
//!    variable. For a CSA marker only memory operations count: scalars and
//!    constant-indexed arrays that live in registers may carry values from
//!    one iteration to the next (SEMANTICS.md §4); for an OpenMP loop every
//!    shared variable counts;
//! 2. each subscript becomes a polynomial in the loops' iteration counters
//!    ([`values`], [`poly`]);
//! 3. each pair of accesses to one object, one of them a write, is tested
//!    ([`pair`]): independent, a proven conflict between two iterations
//!    (CSA501) or unproven with a reason (CSA502);
//! 4. what cannot be reasoned about is unproven too: calls to functions
//!    that are not known to be pure, inline assembly, pointers that may
//!    point to the same memory, indirect and non-affine subscripts, the
//!    work budget.
//!
//! A conflict is *proven* only when both accesses run on every iteration
//! (their blocks are on every path through the loop body); otherwise the
//! finding is unproven ("only on some iterations").

pub mod arrays;
pub mod cover;
pub mod openmp;
pub mod pair;
pub mod poly;
pub mod summary;
pub mod values;

#[cfg(test)]
mod tests;

use crate::scalars;
use crate::clie::{ClieResult, Outcome};
use crate::graph::dom::DomTree;
use crate::graph::loops::{LoopForest, LoopId};
use crate::graph::{Csr, Graph};
use crate::ir::*;
use crate::memory::{self, MemoryInfo, Storage};
use crate::source::Span;
use pair::{prime, Bounds, PairResult, Reason};
use poly::{Atom, Poly};
use values::{Values, Why};

/// What asserts that a loop's iterations are independent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Asserted {
    /// A CSA marker that CLIE parallelizes the loop for.
    Marker(BuiltinId),
    /// An OpenMP worksharing directive (`Function::source_loops[i]`).
    Omp { source_loop: usize, directive: Span },
}

/// One access, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessRef {
    pub span: Span,
    pub write: bool,
}

/// A finding about one object (or one call) of an asserted loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// Two iterations touch the same element and one writes it.
    Conflict {
        /// The object's name as written (`a`, `*p`).
        object: String,
        first: AccessRef,
        second: AccessRef,
        /// Iterations of the witness (counted from 0).
        x: i64,
        x2: i64,
        /// `x2 - x` for every conflicting pair, when fixed.
        distance: Option<i64>,
        /// The trip count the witness needs, when the trip count is not
        /// known.
        needs_trip: Option<i64>,
        /// The object is a whole scalar variable (in memory: a global, a
        /// Fortran dummy, an address-taken local), not array elements.
        scalar: bool,
    },
    /// Independence cannot be proven.
    Unproven {
        object: String,
        at: Span,
        why: Unproven,
    },
}

/// Why independence is not proven.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unproven {
    /// A subscript reads memory (`a[idx[i]]`); the span is that read.
    Indirect(Span),
    NotAffine,
    /// A section whose bounds move with the iteration, not shown disjoint
    /// between iterations.
    MovingSection,
    /// The subscript uses a variable the loop changes irregularly.
    Varies(String),
    SomePaths(String),
    /// A memory variable a call or a pointer store may change.
    Clobbered(String),
    /// The distance depends on these variables' values.
    SymbolicOffset(Vec<String>),
    Coupled,
    NonLinear,
    SearchLimit,
    /// Two different pointers (or a pointer and a named object) may point
    /// to the same memory.
    MayAlias {
        other: String,
        other_span: Span,
    },
    /// A call to a function with unknown effects.
    UnknownCall(String),
    /// `name(args)` with a name the file does not declare, taken to come
    /// from a module in another file: an array of it (read, nothing to
    /// fear) or a function with unknown effects
    /// (`Function::undeclared_references`).
    UndeclaredReference(String),
    /// A call to a function defined in the file whose effects cannot be
    /// summarised (`why`: "it calls `rand`").
    OpaqueCallee {
        name: String,
        why: String,
    },
    Asm,
    /// The access goes through a pointer loaded from memory (the span is
    /// the load, or the access).
    LoadedPointer(Span),
    /// A subscript leaves its dimension (`b[i][j - 1]` with `j` from 0), so
    /// the access may reach another row's elements.
    LeavesDimension,
    /// A conflict exists, but the accesses do not run on every iteration.
    Conditional {
        other: Span,
        distance: Option<i64>,
    },
    /// The loop nest is too large to analyse within the budget.
    Budget,
    /// The object of an OpenMP loop is declared in another file (a module
    /// this one uses), which may make it `threadprivate`.
    DeclaredElsewhere,
}

/// The dependence facts of one asserted loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopDeps {
    pub loop_id: LoopId,
    pub asserted: Asserted,
    pub findings: Vec<Finding>,
    /// Objects proven independent across iterations (for hover).
    pub independent: Vec<String>,
    /// OpenMP loops: the whole scalar variables the loop accesses (not its
    /// index); empty for CSA markers (`scalars::scalar_uses` computes them
    /// on demand).
    pub scalars: Vec<scalars::ScalarUse>,
    /// OpenMP loops: what the directive makes of each of `scalars`
    /// (same order); empty for CSA markers.
    pub sharing: Vec<openmp::Sharing>,
}

/// Everything the analysis reads.
pub struct DepInput<'a> {
    pub func: &'a Function,
    pub preds: &'a Csr,
    pub dom: &'a DomTree,
    pub forest: &'a LoopForest,
    pub preheaders: &'a [Option<BlockId>],
    pub memory: &'a MemoryInfo,
    pub clie: &'a ClieResult,
    /// Functions known to be pure besides the built-in list.
    pub pure_functions: &'a [String],
    /// The original source text (OpenMP clauses are read from it).
    pub src: &'a str,
}

/// Most access pairs tested in one loop before giving up.
const PAIR_BUDGET: usize = 4000;

/// Analyses every asserted loop of a function.
pub fn analyze(inp: &DepInput) -> Vec<LoopDeps> {
    let mut out = Vec::new();
    // (one memo of callee summaries for the definitions and every loop)
    let sums = summary::Summaries::new(&inp.func.callees, inp.pure_functions);
    let shared = Shared {
        sums: &sums,
        threadprivate: std::cell::OnceCell::new(),
    };
    let defs: std::cell::OnceCell<values::Defs> = std::cell::OnceCell::new();
    for v in &inp.clie.verdicts {
        if !matches!(v.outcome, Outcome::Parallelized(_)) {
            continue;
        }
        let kind = inp.func.builtin(v.marker).kind;
        if !matches!(
            kind,
            BuiltinKind::ParallelLoop | BuiltinKind::Spmd | BuiltinKind::Spmdization
        ) {
            continue;
        }
        if out.iter().any(|d: &LoopDeps| d.loop_id == v.loop_id) {
            continue;
        }
        out.push(analyze_loop(
            inp,
            &shared,
            defs.get_or_init(|| definitions(inp, &sums)),
            v.loop_id,
            Asserted::Marker(v.marker),
        ));
    }
    for (i, sl) in inp.func.source_loops.iter().enumerate() {
        let Some(directive) = sl.omp else { continue };
        let Some(l) = inp.forest.loop_with_header(sl.header.0) else {
            continue;
        };
        out.push(analyze_loop(
            inp,
            &shared,
            defs.get_or_init(|| definitions(inp, &sums)),
            l,
            Asserted::Omp {
                source_loop: i,
                directive,
            },
        ));
    }
    out
}

/// One access in the loop, with its evaluated subscripts.
struct Acc {
    span: Span,
    /// The instruction (the call, for a callee's effect).
    at: InstRef,
    /// A callee's effect, not an access the loop makes itself.
    from_call: bool,
    write: bool,
    root: Root,
    path: Vec<Sub>,
    /// Runs on every iteration of the asserted loop.
    every: bool,
    /// The scalar type accessed (type-based alias rule).
    ty: ScalarTy,
    /// A subscript other than the slowest-varying one leaves its
    /// dimension on some iteration (`b[i][j - 1]` with `j` from 0): the
    /// access reaches into a neighbouring row, so subscripts cannot be
    /// compared dimension by dimension.
    wraps: bool,
    /// The OpenMP locks the access runs under (`Function::omp_sync`,
    /// by index): two accesses under one lock never race.
    locks: Vec<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Root {
    Var(VarId),
    /// Memory behind a pointer variable (or a computed pointer: `None`).
    Ptr(Option<VarId>),
    /// A named object only callees touch (a global the function does not
    /// name, a callee's `static` local): index into the loop's `externs`.
    Extern(u32),
}

#[derive(PartialEq)]
enum Sub {
    Index(Result<Poly, Why>),
    /// A section `lo:hi` with unit step whose bounds are known: the
    /// elements in between (any element for the pair tests; the range for
    /// the array privatization of `arrays`).
    Range(Poly, Poly),
    /// A section with invariant bounds that is not a unit-step range
    /// (`a(1:n:2)`), or a section of a dimension whose bounds are not
    /// declared: any element (the same ones in every iteration).
    Any,
    /// Elements the analysis cannot describe: a section whose bounds it
    /// cannot evaluate or that moves with the iteration in a way a range
    /// does not describe, a vector subscript, an undescribed selector. It
    /// decides no pair: another dimension may, else the pair is unproven
    /// (never a proven conflict).
    Unknown(Why),
    Field(Box<str>),
}

/// The OpenMP locks the code at `span` runs under: the indexes in
/// `locks` (distinct locks of `func.omp_sync`) of the sync constructs whose
/// code holds it.
fn locks_at(func: &Function, locks: &[&OmpLock], span: Span) -> Vec<u32> {
    func.locks_at(span)
        .filter_map(|lock| locks.iter().position(|l| *l == lock).map(|i| i as u32))
        .collect()
}

/// Whether two accesses run under a common OpenMP lock.
fn same_lock(a: &Acc, b: &Acc) -> bool {
    a.locks.iter().any(|l| b.locks.contains(l))
}

/// The definitions of the function's variables ([`values::Defs`]): their
/// whole writes, and the calls that may assign a variable they are passed
/// by reference or address (not a pure or output function, not a
/// same-file callee whose summary leaves it unwritten, not the index of a
/// loop around the call: `Function::passes_loop_index`).
fn definitions(inp: &DepInput, sums: &summary::Summaries) -> values::Defs {
    let func = inp.func;
    values::Defs::new(func, &|c, inst, v| {
        if c.callee
            .as_deref()
            .is_some_and(|n| harmless_call(n, inp.pure_functions, func.lang))
            || call_reads_only(sums, func, c, v)
        {
            return false;
        }
        !func.passes_loop_index(c, inst.span, v)
    })
}

/// The arrays loop `l` writes, with the data sharing an OpenMP loop
/// without clauses would need for each ([`arrays`]; for the rewrite).
pub fn array_sharing(inp: &DepInput, l: LoopId) -> Vec<arrays::ArrayUse> {
    let sums = summary::Summaries::new(&inp.func.callees, inp.pure_functions);
    let defs = definitions(inp, &sums);
    let shared = Shared {
        sums: &sums,
        threadprivate: std::cell::OnceCell::new(),
    };
    let mut out = Vec::new();
    analyze_loop_as(inp, &shared, &defs, l, None, Some(&mut out));
    out
}

/// What the loops of one function share: the callee summaries and the
/// file's `threadprivate` names (each found on first use).
struct Shared<'s> {
    sums: &'s summary::Summaries<'s>,
    threadprivate: std::cell::OnceCell<Vec<String>>,
}

fn analyze_loop(
    inp: &DepInput,
    shared: &Shared,
    defs: &values::Defs,
    l: LoopId,
    asserted: Asserted,
) -> LoopDeps {
    let facts = analyze_loop_as(inp, shared, defs, l, Some(&asserted), None);
    LoopDeps {
        loop_id: l,
        asserted,
        findings: facts.findings,
        independent: facts.independent,
        scalars: facts.scalars,
        sharing: facts.sharing,
    }
}

/// What [`analyze_loop_as`] finds ([`LoopDeps`] without the assertion).
struct LoopFacts {
    findings: Vec<Finding>,
    independent: Vec<String>,
    scalars: Vec<scalars::ScalarUse>,
    sharing: Vec<openmp::Sharing>,
}

/// Analyses loop `l` as `asserted` asserts it parallel; or, for the
/// OpenMP rewrite's array data sharing (`asserted` is `None`, `arrays`
/// receives it), as an OpenMP loop without clauses (every array counts,
/// the iterations share what the loop does not declare).
fn analyze_loop_as(
    inp: &DepInput,
    shared: &Shared,
    defs: &values::Defs,
    l: LoopId,
    asserted: Option<&Asserted>,
    arrays: Option<&mut Vec<arrays::ArrayUse>>,
) -> LoopFacts {
    let func = inp.func;
    let omp = matches!(asserted, Some(Asserted::Omp { .. })) || arrays.is_some();
    let omp_loop = match asserted {
        Some(Asserted::Omp { directive, .. }) => {
            openmp::OmpLoop::new(
                func,
                inp.forest,
                inp.src,
                l,
                *directive,
                &shared.threadprivate,
            )
        }
        _ => None,
    };
    // what the directive makes of each variable, on first use
    let mut sharing_cache: rustc_hash::FxHashMap<VarId, bool> = Default::default();
    let mut is_private = |v: VarId| match &omp_loop {
        Some(o) => *sharing_cache
            .entry(v)
            .or_insert_with(|| o.sharing(func, inp.forest, v).is_private()),
        None => false,
    };
    let sums = shared.sums;
    let lp = &inp.forest.loops[l.index()];
    let mut findings = Vec::new();
    // what calls and pointer stores in the loop may change
    let mut clobbered = vec![false; func.vars.len()];
    let mut accs: Vec<Acc> = Vec::new();
    let latch = lp.latches.first().copied();
    // the types stored through pointers in the loop
    let mut store_types: Vec<ScalarTy> = Vec::new();
    // variables that calls with known effects write
    let mut call_writes: Vec<VarId> = Vec::new();
    let vals_clobber = {
        let mut any_call = false;
        for &b in &lp.blocks {
            for inst in &func.block(BlockId(b)).insts {
                match &inst.kind {
                    InstKind::Call(c) => {
                        let pure = c
                            .callee
                            .as_deref()
                            .is_some_and(|n| harmless_call(n, inp.pure_functions, func.lang));
                        let summary = c.callee.as_deref().and_then(|n| sums.get(n));
                        if let Some(why) = summary.as_ref().and_then(|s| s.unknown.clone()) {
                            any_call = true;
                            let name = c.callee.clone().unwrap_or_default();
                            if !findings.iter().any(|f| matches!(f, Finding::Unproven { why: Unproven::OpaqueCallee { name: n, .. }, .. } if *n == name)) {
                                findings.push(Finding::Unproven {
                                    object: name.clone(),
                                    at: c.name_span,
                                    why: Unproven::OpaqueCallee { name, why },
                                });
                            }
                        } else if let Some(s) = summary {
                            // what the callee writes
                            for e in s.effects.iter().filter(|e| e.write) {
                                match &e.target {
                                    summary::Target::Global(n) => {
                                        if let Some(v) = var_named(func, n) {
                                            call_writes.push(v);
                                        }
                                    }
                                    summary::Target::Own { .. } => {}
                                    summary::Target::Param { index, .. } => {
                                        let g = c.callee.as_deref().and_then(|n| sums.function(n));
                                        match g.and_then(|g| summary::arg_for(g, c, *index)) {
                                            Some(CallArg::Ref { var, .. }) => {
                                                call_writes.push(*var)
                                            }
                                            Some(CallArg::Other { .. }) => {}
                                            // a pointer: what it may reach
                                            _ => {
                                                if !store_types.contains(&e.ty) {
                                                    store_types.push(e.ty);
                                                }
                                                call_writes.extend(c.escapes.iter().copied());
                                            }
                                        }
                                    }
                                }
                            }
                        } else if !pure {
                            any_call = true;
                            let name = c
                                .callee
                                .clone()
                                .unwrap_or_else(|| "a function pointer".into());
                            if !findings.iter().any(|f| matches!(f, Finding::Unproven { why: Unproven::UnknownCall(n) | Unproven::UndeclaredReference(n), .. } if *n == name)) {
                                let undeclared =
                                    func.undeclared_references.binary_search(&name).is_ok();
                                findings.push(Finding::Unproven {
                                    object: name.clone(),
                                    at: c.name_span,
                                    why: if undeclared {
                                        Unproven::UndeclaredReference(name)
                                    } else {
                                        Unproven::UnknownCall(name)
                                    },
                                });
                            }
                        }
                    }
                    InstKind::Asm => {
                        any_call = true;
                        findings.push(Finding::Unproven {
                            object: "asm".into(),
                            at: inst.span,
                            why: Unproven::Asm,
                        });
                    }
                    InstKind::Access(a)
                        if a.write
                            && matches!(a.target, AccessTarget::Deref { .. })
                            && !store_types.contains(&a.ty) =>
                    {
                        store_types.push(a.ty);
                    }
                    _ => {}
                }
            }
        }
        any_call
    };
    for (i, v) in func.vars.iter().enumerate() {
        let mem = inp.memory.vars.storage(VarId(i as u32)) == Some(Storage::Memory);
        // a store through a pointer may change what a pointer reaches, of
        // a compatible type (a Fortran POINTER's association is not data:
        // only `=>`, ALLOCATE, NULLIFY or a call change it)
        let fortran_pointer = func.lang == Lang::Fortran && v.ty.scalar == ScalarTy::Pointer;
        let by_pointer = !fortran_pointer
            && reachable_by_pointer(func, VarId(i as u32))
            && store_types
                .iter()
                .any(|t| memory::alias::types_compatible(*t, v.ty.scalar));
        let by_call = call_writes.contains(&VarId(i as u32));
        if mem && (vals_clobber || by_pointer || by_call) && !matches!(v.kind, VarKind::Constant) {
            clobbered[i] = true;
        }
    }
    let vals = Values::new(
        func,
        inp.preds,
        inp.dom,
        inp.forest,
        inp.preheaders,
        l,
        clobbered,
        defs,
    );
    // the loops' own induction variables: each iteration has its value
    let ivs: Vec<Root> = func
        .source_loops
        .iter()
        .filter(|sl| inp.forest.contains(l, sl.header.0))
        .filter_map(|sl| sl.control.as_ref().map(|c| Root::Var(c.var)))
        .collect();
    let bounds = loop_bounds(inp, &vals, l);
    let sym_trips = symbolic_trip_counts(inp, &vals, l);
    let inside = declared_inside(func, inp.forest, l);
    // objects only callees name (`Root::Extern`)
    let mut externs: Vec<String> = Vec::new();
    // the loops a `collapse` clause adds to the worksharing loop
    let collapsed: Vec<LoopId> = omp_loop
        .as_ref()
        .map(|o| o.loops[1..].to_vec())
        .unwrap_or_default();
    // calls that write sections of whole arrays (the rewrite's array
    // privatization only)
    let want_covers = arrays.is_some();
    let mut call_covers: Vec<arrays::CallCover> = Vec::new();
    // the distinct locks of the function's sync constructs (OpenMP loops
    // only: a CSA marker knows no locks)
    let mut locks: Vec<&OmpLock> = Vec::new();
    if matches!(asserted, Some(Asserted::Omp { .. })) {
        for s in &func.omp_sync {
            if !locks.contains(&&s.lock) {
                locks.push(&s.lock);
            }
        }
    }
    let locks_of = |span: Span| {
        if locks.is_empty() {
            Vec::new()
        } else {
            locks_at(func, &locks, span)
        }
    };
    for &b in &lp.blocks {
        let bid = BlockId(b);
        let every = every_iteration(inp, l, b, latch);
        for (k, inst) in func.block(bid).insts.iter().enumerate() {
            let at = InstRef {
                block: bid,
                index: k as u32,
            };
            if let InstKind::Call(c) = &inst.kind {
                // the effects of a same-file callee, as accesses of the call
                let Some(name) = c.callee.as_deref() else {
                    continue;
                };
                let (Some(s), Some(g)) = (sums.get(name), sums.function(name)) else {
                    continue;
                };
                if want_covers {
                    call_covers.extend(sums.covers(name).iter().filter_map(|cv| {
                        call_cover(func, &vals, g, c, cv, at, s.unknown.is_some())
                    }));
                }
                if s.unknown.is_some() {
                    continue;
                }
                for e in &s.effects {
                    let Some((root, path)) =
                        effect_access(func, &vals, g, c, e, at, inst.span, &mut externs)
                    else {
                        continue;
                    };
                    // a `threadprivate` object only the callee names
                    if let (Root::Extern(k), Some(o)) = (root, &omp_loop) {
                        if externs
                            .get(k as usize)
                            .is_some_and(|n| o.is_threadprivate(func.lang, n))
                        {
                            continue;
                        }
                    }
                    // (a callee's access of a whole scalar is not CSA503's,
                    // which sees the loop's own accesses only)
                    if !counts(inp, omp, &mut is_private, &inside, root, false)
                        || ivs.contains(&root)
                    {
                        continue;
                    }
                    let wraps = leaves_dimension(func, root, &path, &bounds);
                    accs.push(Acc {
                        wraps,
                        locks: locks_of(inst.span),
                        span: inst.span,
                        at,
                        from_call: true,
                        write: e.write,
                        root,
                        path,
                        every,
                        ty: e.ty,
                    });
                }
                continue;
            }
            let InstKind::Access(a) = &inst.kind else {
                continue;
            };
            // where the pointer points, when the loop sets it
            let (root, base) = match a.target {
                AccessTarget::Var(v) => (Root::Var(v), Ok(Poly::default())),
                AccessTarget::Deref { ptr: Some(p) } => match pointer_base(func, &vals, p, at) {
                    Ok((r, off)) => (r, Ok(off)),
                    Err(Why::Indirect(s)) => (Root::Ptr(Some(p)), Err(Why::LoadedPointer(s))),
                    Err(w) => (Root::Ptr(Some(p)), Err(w)),
                },
                // a pointer computed from memory (`u[k][i]`, `s->next->x`):
                // no two such accesses can be compared
                AccessTarget::Deref { ptr: None } => {
                    (Root::Ptr(None), Err(Why::LoadedPointer(inst.span)))
                }
            };
            if !counts(inp, omp, &mut is_private, &inside, root, a.path.is_empty()) {
                continue;
            }
            if ivs.contains(&root) {
                continue;
            }
            let dims: &[Dim] = match root {
                Root::Var(v) => &func.var(v).ty.dims,
                _ => &[],
            };
            let mut path = subscripts(&a.path, a.index, dims, inst.span, &|e| vals.eval(e));
            match base {
                Ok(off) if off.is_zero() => {}
                Ok(off) => match path.first_mut() {
                    Some(Sub::Index(r @ Ok(_))) => {
                        let sum = r.as_ref().ok().and_then(|p| p.add(&off));
                        *r = sum.ok_or(Why::NotAffine(inst.span));
                    }
                    Some(Sub::Index(Err(_))) | Some(Sub::Any) | Some(Sub::Unknown(_)) => {}
                    _ => path.insert(0, Sub::Index(Err(Why::NotAffine(inst.span)))),
                },
                Err(w) => path.insert(0, Sub::Index(Err(w))),
            }
            let wraps = leaves_dimension(func, root, &path, &bounds);
            accs.push(Acc {
                wraps,
                locks: locks_of(inst.span),
                span: inst.span,
                at,
                from_call: false,
                write: a.write,
                root,
                path,
                every,
                ty: a.ty,
            });
        }
    }
    let mut independent: Vec<String> = Vec::new();
    let mut counts = PairCounts::default();
    // group by root, in order of first access
    let mut roots: Vec<Root> = Vec::new();
    for a in &accs {
        if !roots.contains(&a.root) {
            roots.push(a.root);
        }
    }
    // pointers that reach only memory allocated for them (once per loop)
    let fresh: Vec<VarId> = roots
        .iter()
        .filter_map(|r| match r {
            Root::Ptr(Some(p)) if fresh_pointer(inp, l, *p) => Some(*p),
            _ => None,
        })
        .collect();
    for &r in &roots {
        let mine: Vec<&Acc> = accs.iter().filter(|a| a.root == r).collect();
        if !mine.iter().any(|a| a.write) {
            continue;
        }
        let name = root_name(func, &externs, r);
        // a write through a pointer may reach other objects
        if let Some(f) = alias_finding(inp, &roots, &fresh, &accs, &externs, r, &name) {
            findings.push(f);
            continue;
        }
        // an OpenMP loop's object declared in another file, which may
        // make it `threadprivate` (a data-sharing clause naming it says
        // it is not): a conflict on it is unproven
        let elsewhere = match (&omp_loop, r) {
            (Some(o), Root::Var(v)) => {
                func.declared_elsewhere.contains(&v) && !o.names_in_clause(&func.var(v).name)
            }
            _ => false,
        };
        let cx = PairCx {
            func,
            vals: &vals,
            l,
            collapsed: &collapsed,
            bounds: &bounds,
            sym_trips: &sym_trips,
            elsewhere,
        };
        let result = root_finding(&cx, &mine, &name, &mut counts);
        match result {
            Some(f) => findings.push(f),
            None => independent.push(name),
        }
    }
    let own_index = func
        .source_loop_with_header(lp.header)
        .and_then(|sl| sl.control.as_ref())
        .map(|c| c.var);
    // CSA503's facts; for markers (registers may carry values) nobody
    // reads them during linting, so they are not computed
    // (not for the rewrite's array classification either: the rewrite
    // computes the scalars' clauses itself)
    let scalars = if matches!(asserted, Some(Asserted::Omp { .. })) {
        scalars::scalar_uses(
            func,
            inp.preds,
            inp.forest,
            l,
            own_index,
            &|n: &str| harmless_call(n, inp.pure_functions, func.lang),
            &|c, v| call_reads_only(sums, func, c, v),
        )
    } else {
        Vec::new()
    };
    let sharing = match &omp_loop {
        Some(o) => scalars
            .iter()
            .map(|u| o.sharing(func, inp.forest, u.var))
            .collect(),
        None => Vec::new(),
    };
    if let Some(out) = arrays {
        let mut trips = sym_trips.clone();
        for (m, max) in &bounds {
            if let (Some(max), false) = (max, trips.iter().any(|(x, _)| x == m)) {
                trips.push((*m, Poly::constant(max.saturating_add(1))));
            }
        }
        *out = arrays::classify(&arrays::ArrayInput {
            func,
            dom: inp.dom,
            forest: inp.forest,
            l,
            accs: &accs,
            findings: &findings,
            trips: &trips,
            call_covers: &call_covers,
        });
    }
    LoopFacts {
        findings,
        independent,
        scalars,
        sharing,
    }
}

/// What the pair tests of one root share (the loop's facts).
struct PairCx<'a> {
    func: &'a Function,
    vals: &'a Values<'a>,
    l: LoopId,
    collapsed: &'a [LoopId],
    bounds: &'a Bounds,
    sym_trips: &'a [(LoopId, Poly)],
    /// The root is declared in another file, which may make it
    /// `threadprivate`: a conflict on it is unproven.
    elsewhere: bool,
}

/// The pairs of one loop seen so far (for [`PAIR_BUDGET`]).
#[derive(Default)]
struct PairCounts {
    /// Pairs tested.
    tested: usize,
    /// Pairs looked at, tested or not.
    seen: usize,
}

/// Accesses of one root given a class for the memo of [`root_finding`]
/// (the first ones; the others are tested pair by pair): bounds the
/// classification's comparisons and the memo's size.
const CLASSED: usize = 256;

#[cfg(test)]
thread_local! {
    /// Tests: every pair tested, without the memo or the skip of pairs
    /// that cannot change the result (both are checked against this).
    static EXHAUSTIVE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn exhaustive() -> bool {
    #[cfg(test)]
    {
        EXHAUSTIVE.with(|e| e.get())
    }
    #[cfg(not(test))]
    {
        false
    }
}

/// The finding of one root's accesses `mine` (`None`: independent): the
/// first conflict of two accesses in different iterations, else the first
/// pair that is not proven independent, in the order of the pairs. Every
/// pair with a write is tested, except under a shared lock, and except
/// pairs whose answer is already known: accesses alike (the same
/// subscripts, the same `wraps`: [`test`] is a function of those but for
/// the spans a finding names) whose classes were found independent, and,
/// once the result is a "cannot prove", pairs that cannot be a conflict.
fn root_finding(cx: &PairCx, mine: &[&Acc], name: &str, counts: &mut PairCounts) -> Option<Finding> {
    let shortcuts = !exhaustive();
    // each access's class, by its first member (the first `CLASSED`)
    let mut firsts: Vec<usize> = Vec::new();
    let class: Vec<usize> = mine
        .iter()
        .take(if shortcuts { CLASSED } else { 0 })
        .enumerate()
        .map(|(i, a)| {
            let alike = |&f: &usize| mine[f].wraps == a.wraps && mine[f].path == a.path;
            firsts.iter().position(alike).unwrap_or_else(|| {
                firsts.push(i);
                firsts.len() - 1
            })
        })
        .collect();
    let classes = firsts.len();
    let mut independent_classes = vec![false; classes * classes];
    // each access's subscripts in another iteration of every loop (the
    // second access of a pair's, for the test of `l` alone), made once
    let primed: Vec<Vec<Option<Poly>>> = mine
        .iter()
        .map(|a| {
            a.path
                .iter()
                .map(|s| match s {
                    Sub::Index(Ok(p)) => primed(p, &[]),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let budget = |at: Span| {
        Some(Finding::Unproven {
            object: name.to_string(),
            at,
            why: Unproven::Budget,
        })
    };
    let mut result: Option<Finding> = None;
    for (i, a) in mine.iter().enumerate() {
        for (j, b) in mine.iter().enumerate().skip(i) {
            if (!a.write && !b.write) || same_lock(a, b) {
                continue;
            }
            counts.seen += 1;
            if counts.seen > PAIR_BUDGET * 16 || cx.vals.exhausted() {
                return budget(a.span);
            }
            let memo = match (class.get(i), class.get(j)) {
                (Some(ci), Some(cj)) => Some(ci * classes + cj),
                _ => None,
            };
            if memo.is_some_and(|m| independent_classes[m]) {
                continue;
            }
            // once a pair is unproven, only a proven conflict changes the
            // result (an error instead of a warning)
            if shortcuts && result.is_some() && never_conflicts(a, b) {
                continue;
            }
            counts.tested += 1;
            if counts.tested > PAIR_BUDGET {
                return budget(a.span);
            }
            let b_primed = primed.get(j).map_or(&[][..], |v| v.as_slice());
            match test(a, b, b_primed, cx.l, cx.collapsed, cx.bounds, cx.sym_trips) {
                Ok(PairResult::Independent) => {
                    if let Some(m) = memo {
                        independent_classes[m] = true;
                    }
                }
                Ok(PairResult::Conflict {
                    x,
                    x2,
                    distance,
                    needs_trip,
                }) => {
                    let (first, second) = if b.write && !a.write {
                        (*b, *a)
                    } else {
                        (*a, *b)
                    };
                    if cx.elsewhere {
                        return Some(Finding::Unproven {
                            object: name.to_string(),
                            at: first.span,
                            why: Unproven::DeclaredElsewhere,
                        });
                    }
                    if a.every && b.every {
                        let scalar =
                            matches!(a.root, Root::Var(_)) && a.path.is_empty() && b.path.is_empty();
                        return Some(Finding::Conflict {
                            scalar,
                            object: name.to_string(),
                            first: AccessRef {
                                span: first.span,
                                write: first.write,
                            },
                            second: AccessRef {
                                span: second.span,
                                write: second.write,
                            },
                            x,
                            x2,
                            distance,
                            needs_trip,
                        });
                    }
                    if result.is_none() {
                        result = Some(Finding::Unproven {
                            object: name.to_string(),
                            at: first.span,
                            why: Unproven::Conditional {
                                other: second.span,
                                distance,
                            },
                        });
                    }
                }
                Ok(PairResult::Unproven(reason)) => {
                    if result.is_none() {
                        result = Some(Finding::Unproven {
                            object: name.to_string(),
                            at: a.span,
                            why: reason_to_unproven(cx.func, reason),
                        });
                    }
                }
                Err((at, why)) => {
                    if result.is_none() {
                        result = Some(Finding::Unproven {
                            object: name.to_string(),
                            at,
                            why: why_to_unproven(cx.func, why),
                        });
                    }
                }
            }
        }
    }
    result
}

/// The variable of `func` a summary's global names (Fortran: any case;
/// host-associated variables are the host's own).
fn var_named(func: &Function, name: &str) -> Option<VarId> {
    let found = func.vars.iter().position(|v| {
        v.kind != VarKind::Constant
            && match func.lang {
                Lang::C => matches!(v.kind, VarKind::Global | VarKind::Static) && v.name == name,
                Lang::Fortran => v.name.eq_ignore_ascii_case(name),
            }
    });
    found.map(|i| VarId(i as u32))
}

/// An effect of callee `g` at call `c` (instruction `at`) as an access of
/// the loop: its root and selection in the caller's terms. `None`: the
/// effect touches a temporary.
#[allow(clippy::too_many_arguments)]
fn effect_access(
    func: &Function,
    vals: &Values,
    g: &Function,
    c: &Call,
    e: &summary::Effect,
    at: InstRef,
    span: Span,
    externs: &mut Vec<String>,
) -> Option<(Root, Vec<Sub>)> {
    use summary::{ESel, Target};
    let actual = |v: VarId| actual_value(vals, g, c, at, v);
    let epath: Vec<Sub> = e
        .path
        .iter()
        .map(|s| match s {
            ESel::Index(p) => {
                Sub::Index(summary::substitute(p, &actual).ok_or(Why::NotAffine(span)))
            }
            ESel::Unknown => Sub::Index(Err(Why::NotAffine(span))),
            ESel::Any => Sub::Any,
            ESel::Field(f) => Sub::Field(f.clone()),
        })
        .collect();
    let mut intern = |n: String| -> Root {
        let k = match externs.iter().position(|x| *x == n) {
            Some(k) => k,
            None => {
                externs.push(n);
                externs.len() - 1
            }
        };
        Root::Extern(k as u32)
    };
    let (index, dummy) = match &e.target {
        Target::Global(n) => {
            let root = var_named(func, n).map_or_else(|| intern(n.clone()), Root::Var);
            return Some((root, epath));
        }
        Target::Own { function, var } => {
            return Some((intern(format!("{var} (static in `{function}`)")), epath));
        }
        Target::Param { index, dims } => (*index, dims),
    };
    let (root, base): (Root, Vec<Sub>) = match summary::arg_for(g, c, index)? {
        CallArg::Other { .. } => return None,
        // (an actual argument's selection is always described)
        CallArg::Ref { var, path, .. } => (
            Root::Var(*var),
            subscripts(
                path,
                IndexKind::Whole,
                &func.var(*var).ty.dims,
                span,
                &|e| vals.eval(e),
            ),
        ),
        CallArg::Value(x) => match vals.eval(*x).and_then(|v| base_of_value(func, vals, v)) {
            Ok((r, off)) => (r, vec![Sub::Index(Ok(off))]),
            Err(Why::Indirect(s)) => (
                Root::Ptr(None),
                vec![Sub::Index(Err(Why::LoadedPointer(s)))],
            ),
            Err(w) => (Root::Ptr(None), vec![Sub::Index(Err(w))]),
        },
    };
    let path = match func.lang {
        Lang::C => compose_c(base, epath, span),
        Lang::Fortran => {
            let dims: &[Dim] = match root {
                Root::Var(v) => &func.var(v).ty.dims,
                _ => &[],
            };
            if epath.is_empty() {
                base
            } else if base.is_empty() && summary::same_shape(dummy, dims) {
                epath
            } else {
                vec![Sub::Index(Err(Why::NotAffine(span)))]
            }
        }
    };
    Some((root, path))
}

/// The selection `path` of an access (`index`: how it selects; `dims`:
/// the root's declared dimensions) as subscripts, each index valued by
/// `eval`. A section `lo:hi:step` with step 1 and both bounds known (a
/// missing one is the declared bound) is a range; another section selects
/// any element when its bounds and step are the same in every iteration,
/// and unknown elements otherwise (as do a section whose bounds cannot be
/// evaluated and an undescribed selector); a non-whole access the front
/// end did not describe gets an unknown subscript at `span`.
fn subscripts(
    path: &[Sel],
    index: IndexKind,
    dims: &[Dim],
    span: Span,
    eval: &dyn Fn(ExprId) -> Result<Poly, Why>,
) -> Vec<Sub> {
    let section = |k: usize, lo: Option<ExprId>, hi: Option<ExprId>, step: Option<ExprId>| {
        let dim = dims.get(k).filter(|_| path.len() == dims.len());
        let lower = dim.and_then(|d| d.lower);
        let upper = dim.and_then(|d| Some(d.lower? + d.extent? - 1));
        // a bound written (evaluated), or the declared one (`None`: not
        // declared, the dimension's own: the same in every iteration)
        let bound = |e: Option<ExprId>, declared: Option<i64>| match e {
            Some(e) => eval(e).map(Some),
            None => Ok(declared.map(Poly::constant)),
        };
        let (lo, hi, step) = match (bound(lo, lower), bound(hi, upper), bound(step, Some(1))) {
            (Ok(lo), Ok(hi), Ok(step)) => (lo, hi, step),
            (Err(w), _, _) | (_, Err(w), _) | (_, _, Err(w)) => return Sub::Unknown(w),
        };
        let unit = step.as_ref().and_then(|p| p.as_constant()) == Some(1);
        let moves = [&lo, &hi, &step]
            .into_iter()
            .any(|p| p.as_ref().is_some_and(|p| p.has_iter()));
        match (unit, lo, hi) {
            (true, Some(lo), Some(hi)) => Sub::Range(lo, hi),
            _ if moves => Sub::Unknown(Why::MovingSection(span)),
            _ => Sub::Any,
        }
    };
    let mut out: Vec<Sub> = path
        .iter()
        .enumerate()
        .map(|(k, s)| match s {
            Sel::Index(e) => Sub::Index(eval(*e)),
            Sel::Field(f) => Sub::Field(f.clone()),
            Sel::Range { lo, hi, step } => section(k, *lo, *hi, *step),
            Sel::Unknown => Sub::Unknown(Why::NotAffine(span)),
        })
        .collect();
    if path.is_empty() && index != IndexKind::Whole {
        // the front end did not describe the selection
        out.push(Sub::Index(Err(Why::NotAffine(span))));
    }
    out
}

/// The value at the call `c` (at `at`) of the callee `g`'s parameter `v`.
fn actual_value(vals: &Values, g: &Function, c: &Call, at: InstRef, v: VarId) -> Option<Poly> {
    let k = g.params.iter().position(|p| *p == Some(v))?;
    match summary::arg_for(g, c, k)? {
        CallArg::Value(x) | CallArg::Other { value: Some(x), .. } => vals.eval(*x).ok(),
        CallArg::Ref { var, path, .. } if path.is_empty() => vals.value_at(*var, at).ok(),
        _ => None,
    }
}

/// Cover `cv` of callee `g` at the call `c` (at `at`), when its actual is
/// a whole array the cover describes: an assumed-shape dummy covered
/// whole, or a dummy of the actual's shape. `opaque`: the callee's other
/// effects are unknown.
fn call_cover(
    func: &Function,
    vals: &Values,
    g: &Function,
    c: &Call,
    cv: &cover::Cover,
    at: InstRef,
    opaque: bool,
) -> Option<arrays::CallCover> {
    let CallArg::Ref { var, path, .. } = summary::arg_for(g, c, cv.index)? else {
        return None;
    };
    let ty = &func.var(*var).ty;
    let shaped = if cv.dims.is_empty() {
        cv.section.len() == ty.dims.len()
    } else {
        summary::same_shape(&cv.dims, &ty.dims)
    };
    if !path.is_empty() || !ty.is_array || !shaped {
        return None;
    }
    let actual = |v: VarId| actual_value(vals, g, c, at, v);
    let section = cv
        .section
        .iter()
        .map(|s| match s {
            None => Some(None),
            Some((lo, hi)) => Some(Some((
                summary::substitute(lo, &actual)?,
                summary::substitute(hi, &actual)?,
            ))),
        })
        .collect::<Option<Vec<_>>>()?;
    Some(arrays::CallCover {
        at,
        var: *var,
        section,
        reads_covered: cv.reads_covered,
        opaque,
    })
}

/// C: a pointer to the element `base` selects, then `path` from it (the
/// first subscript of `path` is added to the last of `base`).
fn compose_c(base: Vec<Sub>, path: Vec<Sub>, span: Span) -> Vec<Sub> {
    let mut path = path.into_iter();
    let Some(first) = path.next() else {
        return base;
    };
    let mut out = base;
    let Some(last) = out.pop() else {
        out.push(first);
        out.extend(path);
        return out;
    };
    let joined = match (last, first) {
        (Sub::Index(Ok(a)), Sub::Index(Ok(b))) => Sub::Index(a.add(&b).ok_or(Why::NotAffine(span))),
        (Sub::Index(Err(w)), _) | (_, Sub::Index(Err(w))) => Sub::Index(Err(w)),
        _ => Sub::Index(Err(Why::NotAffine(span))),
    };
    out.push(joined);
    out.extend(path);
    out
}

/// `p` in another iteration: every loop counter but those of `same`
/// renamed to its primed one; `None` when that fails.
fn primed(p: &Poly, same: &[LoopId]) -> Option<Poly> {
    let mut out = p.clone();
    for c in p.iters() {
        if !same.contains(&c) {
            out = out.rename_iter(c, prime(c))?;
        }
    }
    Some(out)
}

/// Tests one pair of accesses to the same root. `b_primed`: [`primed`]
/// (no loop the same) of each of `b`'s subscripts, by path position
/// (empty: not made).
fn test(
    a: &Acc,
    b: &Acc,
    b_primed: &[Option<Poly>],
    l: LoopId,
    collapsed: &[LoopId],
    bounds: &Bounds,
    sym_trips: &[(LoopId, Poly)],
) -> Result<PairResult, (Span, Why)> {
    for x in [a, b] {
        if x.wraps {
            return Err((x.span, Why::LeavesDimension(x.span)));
        }
    }
    let mut subs = Vec::new();
    // The first dimension that cannot decide the pair (an unknown
    // subscript or set of elements, a section moving with the iteration):
    // the pair is independent when another dimension says so, unproven
    // otherwise, never a proven conflict.
    let mut undecided: Option<(Span, Why)> = None;
    let moving = |p: &Poly| p.has_iter();
    for (k, (sa, sb)) in a.path.iter().zip(b.path.iter()).enumerate() {
        match (sa, sb) {
            (Sub::Field(x), Sub::Field(y)) if x != y => return Ok(PairResult::Independent),
            (Sub::Field(_), Sub::Field(_)) => {}
            // every element on one side: no constraint
            (Sub::Any, _) | (_, Sub::Any) => {}
            (Sub::Index(Ok(pa)), Sub::Index(Ok(pb))) => subs.push((pa, pb, k)),
            (Sub::Index(Err(w)) | Sub::Unknown(w), _) => {
                undecided.get_or_insert_with(|| (a.span, w.clone()));
            }
            (_, Sub::Index(Err(w)) | Sub::Unknown(w)) => {
                undecided.get_or_insert_with(|| (b.span, w.clone()));
            }
            (Sub::Range(la, ha), Sub::Range(lb, hb))
                if [la, ha, lb, hb].into_iter().any(moving) =>
            {
                if collapsed.is_empty() && blocks_disjoint((la, ha), (lb, hb), l) {
                    return Ok(PairResult::Independent);
                }
                undecided.get_or_insert((a.span, Why::MovingSection(a.span)));
            }
            (Sub::Range(la, ha), _) if moving(la) || moving(ha) => {
                undecided.get_or_insert((a.span, Why::MovingSection(a.span)));
            }
            (_, Sub::Range(lb, hb)) if moving(lb) || moving(hb) => {
                undecided.get_or_insert((b.span, Why::MovingSection(b.span)));
            }
            // a range the same in every iteration against an element or
            // another such range, or mismatched shapes: no constraint
            _ => {}
        }
    }
    let decided = |r: PairResult| match (&r, undecided.clone()) {
        (PairResult::Independent, _) | (_, None) => Ok(r),
        (_, Some(u)) => Err(u),
    };
    // a row-major subscript with a symbolic row length, `i*m + j` on both
    // sides with `0 <= j < m` (the inner loop runs `m` times from 0): equal
    // only when the rows are, so in the same iteration of `l`
    if collapsed.is_empty()
        && subs.iter().any(|(pa, pb, _)| {
            symbolic_rows(pa, l, sym_trips) && symbolic_rows(pb, l, sym_trips) && pa == pb
        })
    {
        return Ok(PairResult::Independent);
    }
    // different iterations of `l`; then, for each loop `collapse` adds,
    // the same iteration of the loops outside it and different ones of it
    let mut same: Vec<LoopId> = Vec::new();
    for &m in std::iter::once(&l).chain(collapsed) {
        // the common case, decided without building the primed equations:
        // one subscript is the same function `c + k*x` (k != 0) of `m`'s
        // counter (and of loops already the same) on both sides, so both
        // accesses run in the same iteration of `m`: no pair of this stage
        if subs.iter().any(|(pa, pb, _)| {
            pa == pb
                && pa.terms.contains_key(&[Atom::Iter(m)])
                && pa.terms.iter().all(|(mono, _)| match mono.as_slice() {
                    [] => true,
                    [Atom::Iter(c)] => *c == m || same.contains(c),
                    _ => false,
                })
        }) {
            same.push(m);
            continue;
        }
        let mut diffs = Vec::new();
        for &(pa, pb, k) in &subs {
            let made;
            let pb2 = match b_primed.get(k) {
                Some(Some(p)) if same.is_empty() => p,
                _ => match primed(pb, &same) {
                    Some(p) => {
                        made = p;
                        &made
                    }
                    None => return Err((a.span, Why::NotAffine(a.span))),
                },
            };
            match pa.sub(pb2) {
                Some(d) => diffs.push(d),
                None => return Err((a.span, Why::NotAffine(a.span))),
            }
        }
        let r = pair::test_pair(&diffs, m, bounds);
        if r != PairResult::Independent {
            return decided(r);
        }
        same.push(m);
    }
    Ok(PairResult::Independent)
}

/// Whether [`test`] can only find the pair independent or unproven,
/// never a conflict: an access that leaves its dimension, or a dimension
/// where one subscript is unknown and the other is not every element.
fn never_conflicts(a: &Acc, b: &Acc) -> bool {
    let unknown = |s: &Sub| matches!(s, Sub::Index(Err(_)) | Sub::Unknown(_));
    a.wraps
        || b.wraps
        || a.path.iter().zip(&b.path).any(|(x, y)| {
            !matches!(x, Sub::Any) && !matches!(y, Sub::Any) && (unknown(x) || unknown(y))
        })
}

/// Whether the sections `a` and `b` (`lo..=hi` each) of two different
/// iterations of `l` never overlap: blocks that move by the same step with
/// the iteration (`(i-1)*m+1 : i*m`), each narrower than the step. Every
/// bound is `c*x + r` with the same constant `c != 0` and rests `r` free
/// of counters, and `hi_a - lo_b` and `hi_b - lo_a` are constants below
/// `|c|`: then for `x' > x` (or `x' < x` when `c < 0`) one block ends
/// before the other starts.
fn blocks_disjoint(a: (&Poly, &Poly), b: (&Poly, &Poly), l: LoopId) -> bool {
    let parts = |p: &Poly| -> Option<(i64, Poly)> {
        let (coef, rest) = p.split_linear(l)?;
        let c = coef.as_constant().filter(|c| *c != 0)?;
        (!rest.has_iter()).then_some((c, rest))
    };
    let (Some((c1, lo_a)), Some((c2, hi_a)), Some((c3, lo_b)), Some((c4, hi_b))) =
        (parts(a.0), parts(a.1), parts(b.0), parts(b.1))
    else {
        return false;
    };
    if c1 != c2 || c1 != c3 || c1 != c4 {
        return false;
    }
    let below = |x: &Poly, y: &Poly| {
        x.sub(y)
            .and_then(|d| d.as_constant())
            .is_some_and(|d| d < c1.saturating_abs())
    };
    below(&hi_a, &lo_b) && below(&hi_b, &lo_a)
}

/// Whether the access takes part in the check.
fn counts(
    inp: &DepInput,
    omp: bool,
    is_private: &mut dyn FnMut(VarId) -> bool,
    inside: &[VarId],
    root: Root,
    path_empty: bool,
) -> bool {
    match root {
        Root::Var(v) => {
            let var = inp.func.var(v);
            if var.kind == VarKind::Constant {
                return false;
            }
            if omp {
                // scalars are CSA503's; private copies never conflict
                let scalar = !var.ty.is_array && !var.ty.is_aggregate && path_empty;
                !scalar && !is_private(v) && inside.binary_search(&v).is_err()
            } else {
                inp.memory.vars.storage(v) == Some(Storage::Memory)
                    && inside.binary_search(&v).is_err()
            }
        }
        Root::Ptr(_) | Root::Extern(_) => true,
    }
}

/// The variables whose declaration is inside the loop: each iteration has
/// its own (for CSA, the storage is shared: CSA301 reports that). Not
/// those of static storage (`static`, `_Thread_local` in C): one object
/// whose value outlives the iteration, shared by every iteration as a
/// file-scope variable is. Sorted.
pub fn declared_inside(func: &Function, forest: &LoopForest, l: LoopId) -> Vec<VarId> {
    let mut out: Vec<VarId> = declarations_in(func, forest, l)
        .filter(|&d| {
            !matches!(
                func.var(d).kind,
                VarKind::Static | VarKind::Saved | VarKind::Global
            )
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The variables whose declaration is inside loop `l`, static storage
/// included, in block order (repeats possible).
pub fn declarations_in<'f>(
    func: &'f Function,
    forest: &'f LoopForest,
    l: LoopId,
) -> impl Iterator<Item = VarId> + 'f {
    forest.loops[l.index()]
        .blocks
        .iter()
        .flat_map(|&b| &func.block(BlockId(b)).insts)
        .filter_map(|i| match i.kind {
            InstKind::Decl(d) => Some(d),
            _ => None,
        })
}

/// Whether block `b` runs on every iteration of loop `l`: it dominates the
/// latch (so every completed iteration passes it), or it sits in an inner
/// loop whose header does.
fn every_iteration(inp: &DepInput, l: LoopId, b: u32, latch: Option<u32>) -> bool {
    let Some(latch) = latch else { return false };
    // climb to the block that represents `b` at `l`'s level
    let mut rep = b;
    let mut inner = inp.forest.loop_for(b);
    while let Some(m) = inner {
        if m == l {
            break;
        }
        let ml = &inp.forest.loops[m.index()];
        // inside the inner loop, `b` must run on each of its iterations too
        if let Some(&ilatch) = ml.latches.first() {
            if !inp.dom.dominates(rep, ilatch) {
                return false;
            }
        }
        rep = ml.header;
        inner = ml.parent;
    }
    inp.dom.dominates(rep, latch)
}

/// The trip counts of `l`'s inner loops that are symbolic: `v` from 0 (or
/// any start) while `v < limit`, step 1 (`limit - init` iterations), as
/// polynomials over invariant symbols.
fn symbolic_trip_counts(inp: &DepInput, vals: &Values, l: LoopId) -> Vec<(LoopId, Poly)> {
    let mut out = Vec::new();
    let mut stack: Vec<LoopId> = inp.forest.loops[l.index()].children.clone();
    while let Some(m) = stack.pop() {
        stack.extend(inp.forest.loops[m.index()].children.iter().copied());
        let header = inp.forest.loops[m.index()].header;
        let Some(c) = inp
            .func
            .source_loop_with_header(header)
            .and_then(|sl| sl.control.as_ref())
        else {
            continue;
        };
        let (Ok(init), Ok(limit), Ok(step)) =
            (vals.eval(c.init), vals.eval(c.limit), vals.eval(c.step))
        else {
            continue;
        };
        if step.as_constant() != Some(1) || init.has_iter() || limit.has_iter() {
            continue;
        }
        if let Some(t) = counted_trips(c.cmp, &init, &limit) {
            out.push((m, t));
        }
    }
    out
}

/// The iterations of a loop whose counter steps by +1 from `init` while
/// it compares `cmp` with `limit` (`<` or `<=`): `limit - init (+ 1)`,
/// zero or less when the loop does not run.
pub(super) fn counted_trips(cmp: Cmp, init: &Poly, limit: &Poly) -> Option<Poly> {
    match cmp {
        Cmp::Lt => limit.sub(init),
        Cmp::Le => limit.sub(init).and_then(|x| x.add(&Poly::constant(1))),
        _ => None,
    }
}

/// `p` is `c*s*x + y` for the asserted loop's counter `x`, a symbol `s`,
/// a constant `c != 0` and an inner counter `y` whose loop runs exactly
/// `s` times from 0: `y` never reaches the next row.
fn symbolic_rows(p: &Poly, l: LoopId, sym_trips: &[(LoopId, Poly)]) -> bool {
    let mut row = None;
    let mut col = None;
    for (m, k) in &p.terms {
        match m.as_slice() {
            [Atom::Iter(x), Atom::Sym(s)] | [Atom::Sym(s), Atom::Iter(x)] if *x == l => {
                if row.is_some() {
                    return false;
                }
                row = Some((*s, *k));
            }
            [Atom::Iter(y)] if *k == 1 && *y != l && col.is_none() => col = Some(*y),
            _ => return false,
        }
    }
    match (row, col) {
        (Some((s, k)), Some(y)) if k != 0 => sym_trips
            .iter()
            .any(|(m, t)| *m == y && *t == Poly::atom(Atom::Sym(s))),
        _ => false,
    }
}

/// The range of every iteration counter of `l` and its inner loops.
fn loop_bounds(inp: &DepInput, vals: &Values, l: LoopId) -> Bounds {
    let mut out = Bounds::new();
    let mut stack = vec![l];
    while let Some(m) = stack.pop() {
        let max = trip_count(inp, vals, m).map(|t| t - 1);
        out.insert(m, max);
        out.insert(prime(m), max);
        stack.extend(inp.forest.loops[m.index()].children.iter().copied());
    }
    out
}

/// The number of iterations of loop `m` when it is a constant.
fn trip_count(inp: &DepInput, vals: &Values, m: LoopId) -> Option<i64> {
    let header = inp.forest.loops[m.index()].header;
    let sl = inp.func.source_loop_with_header(header)?;
    let c = sl.control.as_ref()?;
    let init = vals.eval(c.init).ok()?.as_constant()?;
    let limit = vals.eval(c.limit).ok()?.as_constant()?;
    let step = vals.eval(c.step).ok()?.as_constant()?;
    if step == 0 {
        return None;
    }
    let span = match c.cmp {
        Cmp::Lt if step > 0 => limit - init,
        Cmp::Le if step > 0 => limit - init + 1,
        Cmp::Gt if step < 0 => init - limit,
        Cmp::Ge if step < 0 => init - limit + 1,
        _ => return None,
    };
    let s = step.abs();
    Some(if span <= 0 { 0 } else { (span + s - 1) / s })
}

/// Where pointer `p` points at `at`: a named object or the value of a
/// pointer variable on loop entry, plus an element offset. `p = &a[i]`
/// gives `a` and `i`; a pointer stepped by a constant each iteration
/// (`p++`) gives its entry value plus a multiple of the iteration.
fn pointer_base(
    func: &Function,
    vals: &Values,
    p: VarId,
    at: InstRef,
) -> Result<(Root, Poly), Why> {
    base_of_value(func, vals, vals.value_at(p, at)?)
}

/// [`pointer_base`] of a pointer value.
fn base_of_value(func: &Function, vals: &Values, mut val: Poly) -> Result<(Root, Poly), Why> {
    // a local pointer set once before the loop (`p = a + 1`): its value
    for _ in 0..8 {
        let Some((q, k)) = val.terms.iter().find_map(|(m, k)| match m.as_slice() {
            [Atom::Sym(q)] if func.var(*q).ty.scalar == ScalarTy::Pointer => Some((*q, *k)),
            _ => None,
        }) else {
            break;
        };
        let local = matches!(func.var(q).kind, VarKind::Local) && !func.var(q).address_taken;
        match vals.single_def_value(q).filter(|_| local && k == 1) {
            Some(def) => {
                let rest = val.sub(&Poly::atom(Atom::Sym(q)));
                match rest.and_then(|r| r.add(&def)) {
                    Some(v) => val = v,
                    None => break,
                }
            }
            None => break,
        }
    }
    let is_base = |a: &Atom| match a {
        Atom::Addr(_) => true,
        Atom::Sym(q) => func.var(*q).ty.scalar == ScalarTy::Pointer,
        Atom::Iter(_) => false,
    };
    let mut base = None;
    for (m, k) in &val.terms {
        if m.iter().any(is_base) {
            if m.len() != 1 || *k != 1 || base.is_some() {
                return Err(Why::NotAffine(func.name_span));
            }
            base = Some(m[0]);
        }
    }
    let base = base.ok_or(Why::NotAffine(func.name_span))?;
    let off = val
        .sub(&Poly::atom(base))
        .ok_or(Why::NotAffine(func.name_span))?;
    match base {
        Atom::Addr(v) => Ok((Root::Var(v), off)),
        Atom::Sym(q) => Ok((Root::Ptr(Some(q)), off)),
        Atom::Iter(_) => Err(Why::NotAffine(func.name_span)),
    }
}

/// Input/output that touches no program memory but its items: C library
/// output functions read their arguments and write only the stream, which
/// the C library locks (POSIX: stdio functions are thread-safe); Fortran
/// I/O statements (`print`, `write`, `read`) are lowered with their items'
/// reads and writes (READ items, an internal file) as accesses of their
/// own, and the runtime serialises the units. Calls from different
/// iterations do not race on program memory; only the order of the
/// records changes.
/// A callee that reads what it is passed and writes no program memory: a
/// pure function (built in or configured) or an output statement.
pub fn harmless_call(name: &str, pure_functions: &[String], lang: Lang) -> bool {
    memory::is_pure_function(name, pure_functions) || output_only(name, lang)
}

/// Whether the Fortran call `c` leaves the scalar `v` it is passed
/// unchanged: its callee, defined in the file, has known effects
/// (`summary`), every actual argument naming `v` is matched to a dummy, and
/// no effect writes one of those dummies (or `v` itself, by its global
/// name).
pub fn call_reads_only(sums: &summary::Summaries, func: &Function, c: &Call, v: VarId) -> bool {
    if func.lang != Lang::Fortran {
        return false;
    }
    let Some(name) = c.callee.as_deref() else {
        return false;
    };
    let (Some(s), Some(g)) = (sums.get(name), sums.function(name)) else {
        return false;
    };
    if s.unknown.is_some() {
        return false;
    }
    let is_v = |a: &CallArg| matches!(a, CallArg::Ref { var, .. } if *var == v);
    let dummies: Vec<usize> = (0..g.params.len())
        .filter(|&k| summary::arg_for(g, c, k).is_some_and(is_v))
        .collect();
    if dummies.len() != c.args.iter().filter(|a| is_v(a)).count() {
        return false;
    }
    let global = func.var(v).name.to_ascii_lowercase();
    !s.effects.iter().any(|e| {
        e.write
            && match &e.target {
                summary::Target::Param { index, .. } => dummies.contains(index),
                summary::Target::Global(n) => *n == global,
                summary::Target::Own { .. } => false,
            }
    })
}

/// Output statements and functions: they read their items (accesses of
/// the loop already) and touch no other program memory. (`assert` too:
/// it reads its condition, and on failure writes to `stderr` and ends
/// the program.)
pub fn output_only(name: &str, lang: Lang) -> bool {
    match lang {
        Lang::C => matches!(
            name,
            "assert"
                | "printf"
                | "fprintf"
                | "puts"
                | "fputs"
                | "putchar"
                | "fputc"
                | "putc"
                | "perror"
                | "fflush"
        ),
        Lang::Fortran => matches!(name, "PRINT" | "WRITE" | "READ"),
    }
}

/// Allocation functions that return new memory no other pointer reaches.
fn allocates(name: &str) -> bool {
    matches!(
        name,
        "malloc" | "calloc" | "aligned_alloc" | "valloc" | "pvalloc" | "memalign" | "_mm_malloc"
    )
}

/// A local pointer every assignment of which stores the result of an
/// allocation call (`p = malloc(...)`, casts allowed): it points only to
/// memory that it alone was given, so it aliases no other object or
/// pointer of that kind.
fn fresh_pointer(inp: &DepInput, l: LoopId, p: VarId) -> bool {
    let func = inp.func;
    if func.lang == Lang::Fortran {
        return fresh_fortran_pointer(inp, l, p);
    }
    let var = func.var(p);
    if var.kind != VarKind::Local || var.address_taken || var.ty.scalar != ScalarTy::Pointer {
        return false;
    }
    let mut any = false;
    for b in &func.blocks {
        for (k, inst) in b.insts.iter().enumerate() {
            let InstKind::Access(a) = &inst.kind else {
                continue;
            };
            if !a.write || a.target != AccessTarget::Var(p) {
                continue;
            }
            any = true;
            let from_alloc = a.rhs.is_some_and(|e| func.expr(e) == &Expr::Unknown)
                && k > 0
                && matches!(&b.insts[k - 1].kind, InstKind::Call(c)
                    if c.callee.as_deref().is_some_and(allocates));
            if !from_alloc {
                return false;
            }
        }
    }
    any
}

/// A Fortran POINTER that this procedure only ever ALLOCATEs (no `=>`, not
/// passed to any other procedure), with an ALLOCATE before the loop on
/// every path: at the loop it points to memory allocated for it alone.
/// When other procedures could see it (a dummy, a module variable), the
/// procedure must call no procedure that could re-associate it either.
fn fresh_fortran_pointer(inp: &DepInput, l: LoopId, p: VarId) -> bool {
    let func = inp.func;
    let var = func.var(p);
    if var.ty.scalar != ScalarTy::Pointer {
        return false;
    }
    let header = inp.forest.loops[l.index()].header;
    let mut allocated_before = false;
    // blocks from which the loop can be reached (the loop's own included)
    let mut reaches = vec![false; func.blocks.len()];
    let mut stack = vec![header];
    reaches[header as usize] = true;
    while let Some(b) = stack.pop() {
        for &q in inp.preds.succs_of(b) {
            if !reaches[q as usize] {
                reaches[q as usize] = true;
                stack.push(q);
            }
        }
    }
    for (bi, b) in func.blocks.iter().enumerate() {
        if !reaches[bi] {
            continue;
        }
        for inst in &b.insts {
            match &inst.kind {
                InstKind::Access(a) if a.write && a.target == AccessTarget::Var(p) => {
                    return false;
                }
                InstKind::Call(c) => {
                    let name = c.callee.as_deref().unwrap_or("");
                    let io = output_only(name, Lang::Fortran);
                    let pure = memory::is_pure_function(name, inp.pure_functions);
                    match name {
                        "allocate"
                            if c.escapes.contains(&p)
                                && bi as u32 != header
                                && inp.dom.dominates(bi as u32, header) =>
                        {
                            allocated_before = true;
                        }
                        "allocate" | "deallocate" => {}
                        _ if c.escapes.contains(&p) => return false,
                        _ if var.kind != VarKind::Local && !io && !pure => return false,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }
    allocated_before
}

/// Whether an element access of a multi-dimensional named array has a
/// subscript, other than the slowest-varying one (C: the first; Fortran:
/// the last), that provably leaves the dimension's bounds on some
/// iteration of the loops analysed (`b[i][j - 1]` with `j` from 0).
fn leaves_dimension(func: &Function, root: Root, path: &[Sub], bounds: &Bounds) -> bool {
    let Root::Var(v) = root else { return false };
    let idx: Vec<&Poly> = path
        .iter()
        .filter_map(|s| match s {
            Sub::Index(Ok(p)) => Some(p),
            _ => None,
        })
        .collect();
    if idx.len() < 2 || idx.len() != path.len() {
        return false;
    }
    let dims = &func.var(v).ty.dims;
    let (default_lower, inner) = match func.lang {
        Lang::C => (0, 1..idx.len()),
        Lang::Fortran => (1, 0..idx.len() - 1),
    };
    for k in inner {
        let d = dims.get(k).copied().unwrap_or_default();
        let lower = d.lower.unwrap_or(default_lower);
        let (min, max) = value_range(idx[k], bounds);
        if min.is_some_and(|m| m < lower) {
            return true;
        }
        if let (Some(max), Some(ext)) = (max, d.extent) {
            if max > lower.saturating_add(ext - 1) {
                return true;
            }
        }
    }
    false
}

/// The least and greatest value of a linear polynomial over the counters'
/// ranges, when known (every atom must be a counter with a range).
fn value_range(p: &Poly, bounds: &Bounds) -> (Option<i64>, Option<i64>) {
    let mut lo = Some(0i64);
    let mut hi = Some(0i64);
    for (m, k) in &p.terms {
        match m.as_slice() {
            [] => {
                lo = lo.and_then(|x| x.checked_add(*k));
                hi = hi.and_then(|x| x.checked_add(*k));
            }
            [Atom::Iter(c)] => {
                let Some(max) = bounds.get(c) else {
                    return (None, None);
                };
                let top = max.and_then(|t| t.checked_mul(*k));
                if *k > 0 {
                    hi = hi.and_then(|x| top.and_then(|t| x.checked_add(t)));
                } else {
                    lo = lo.and_then(|x| top.and_then(|t| x.checked_add(t)));
                }
            }
            _ => return (None, None),
        }
    }
    (lo, hi)
}

/// A write through one root that may reach another root of the loop.
fn alias_finding(
    inp: &DepInput,
    roots: &[Root],
    fresh: &[VarId],
    accs: &[Acc],
    externs: &[String],
    r: Root,
    name: &str,
) -> Option<Finding> {
    let func = inp.func;
    let restrict = |p: Option<VarId>| p.is_some_and(|p| func.var(p).ty.restrict);
    let fresh = |p: Option<VarId>| p.is_some_and(|p| fresh.contains(&p));
    for &s in roots.iter().filter(|&&s| s != r) {
        // whether the two objects may be the same memory at all
        let may = match (r, s) {
            (Root::Ptr(p), Root::Ptr(q)) => !(restrict(p) || restrict(q) || fresh(p) && fresh(q)),
            (Root::Ptr(p), Root::Var(v)) | (Root::Var(v), Root::Ptr(p)) => {
                !restrict(p) && !fresh(p) && reachable_by_pointer(func, v)
            }
            // a global only a callee names (C: any global may be pointed to)
            (Root::Ptr(p), Root::Extern(_)) | (Root::Extern(_), Root::Ptr(p)) => {
                func.lang == Lang::C && !restrict(p) && !fresh(p)
            }
            _ => false,
        };
        if !may {
            continue;
        }
        for a in accs.iter().filter(|a| a.root == r) {
            for b in accs.iter().filter(|b| b.root == s) {
                if (a.write || b.write) && memory::alias::types_compatible(a.ty, b.ty) {
                    return Some(Finding::Unproven {
                        object: name.to_string(),
                        at: a.span,
                        why: Unproven::MayAlias {
                            other: root_name(func, externs, b.root),
                            other_span: b.span,
                        },
                    });
                }
            }
        }
    }
    None
}

pub(super) fn reachable_by_pointer(func: &Function, v: VarId) -> bool {
    let var = func.var(v);
    match func.lang {
        Lang::C => matches!(var.kind, VarKind::Global | VarKind::Static) || var.address_taken,
        Lang::Fortran => var.ty.pointer_or_target,
    }
}

fn root_name(func: &Function, externs: &[String], r: Root) -> String {
    match r {
        Root::Extern(k) => externs.get(k as usize).cloned().unwrap_or_default(),
        Root::Var(v) => func.var(v).name.clone(),
        Root::Ptr(Some(p)) => format!("*{}", func.var(p).name),
        Root::Ptr(None) => "memory behind a loaded pointer".to_string(),
    }
}

fn var_name(func: &Function, v: VarId) -> String {
    func.vars
        .get(v.index())
        .map(|x| x.name.clone())
        .unwrap_or_default()
}

fn why_to_unproven(func: &Function, w: Why) -> Unproven {
    match w {
        Why::Indirect(s) => Unproven::Indirect(s),
        Why::NotAffine(_) => Unproven::NotAffine,
        Why::Varies(v) => Unproven::Varies(var_name(func, v)),
        Why::SomePaths(v) => Unproven::SomePaths(var_name(func, v)),
        Why::Clobbered(v) => Unproven::Clobbered(var_name(func, v)),
        Why::LoadedPointer(s) => Unproven::LoadedPointer(s),
        Why::LeavesDimension(_) => Unproven::LeavesDimension,
        Why::MovingSection(_) => Unproven::MovingSection,
        Why::Budget => Unproven::Budget,
    }
}

fn reason_to_unproven(func: &Function, r: Reason) -> Unproven {
    match r {
        Reason::SymbolicOffset(atoms) => Unproven::SymbolicOffset(
            atoms
                .iter()
                .filter_map(|a| match a {
                    Atom::Sym(v) => Some(var_name(func, *v)),
                    Atom::Addr(v) => Some(format!("&{}", var_name(func, *v))),
                    Atom::Iter(_) => None,
                })
                .collect(),
        ),
        Reason::NonLinear => Unproven::NonLinear,
        Reason::Coupled => Unproven::Coupled,
        Reason::SearchLimit => Unproven::SearchLimit,
    }
}
