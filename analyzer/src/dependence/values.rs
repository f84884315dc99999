//! Symbolic values of subscripts: the front ends' expression trees turned
//! into polynomials over loop iteration counters and loop-invariant
//! symbols.
//!
//! A scalar read is followed through its reaching definitions (a backward
//! walk on the CFG, stopped at the header of the innermost loop that holds
//! the read): one definition in the same iteration gives its assigned value
//! (recursively, with a bounded budget); reaching the loop header gives the
//! value the variable has there, which is
//! * the value on entry when no instruction of the loop writes it, or
//! * `entry + c * Iter(loop)` when the loop's only write is `v = v + c`
//!   with a constant `c`, executed once on every iteration: a basic or
//!   derived induction variable (Allen & Kennedy §4.3; C `for` indices,
//!   Fortran `DO` variables and counters such as `j++` alike).
//!
//! Anything else is not affine and says why ([`Why`]): an indirect
//! subscript, a value set on some paths only, a variable changed by a call
//! or through a pointer, a non-linear operator, the budget.

use super::poly::{Atom, Poly};
use crate::graph::dom::DomTree;
use crate::graph::loops::{LoopForest, LoopId};
use crate::graph::{Csr, Graph};
use crate::ir::*;
use crate::source::Span;
use rustc_hash::FxHashMap as HashMap;
use std::cell::Cell;

/// Why a subscript is not an affine function the tests can use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// It reads memory (`a[idx[i]]`): the read of `idx[i]`.
    Indirect(Span),
    /// An operator the tests do not model (`i * j`, `i / 2`, `i % n`, a
    /// call's result, a floating-point value).
    NotAffine(Span),
    /// The variable is written in the loop in a way that is not a constant
    /// step per iteration.
    Varies(VarId),
    /// The variable is set on some paths only before the read.
    SomePaths(VarId),
    /// A memory variable that a call or a store through a pointer in the
    /// loop may change.
    Clobbered(VarId),
    /// The access goes through a pointer loaded from memory (the load, or
    /// the access itself when the pointer expression is not described).
    LoadedPointer(Span),
    /// A subscript leaves its dimension's bounds (the access).
    LeavesDimension(Span),
    /// A section whose bounds move with the iteration in a way the tests
    /// do not decide (the access).
    MovingSection(Span),
    /// The analysis budget ran out.
    Budget,
}

/// Steps of evaluation one loop nest may take.
pub const EVAL_BUDGET: u32 = 20_000;

/// The writes of each variable in a function, by position (built once per
/// function, shared by its loops).
#[derive(Default)]
pub struct Defs(HashMap<VarId, Vec<InstRef>>);

impl Defs {
    /// The whole writes of each variable, and the calls that may assign
    /// it: `may_write(call, v)` for each variable the call is passed by
    /// reference or address ([`Call::passed_vars`]). A call is a definition
    /// whose value is unknown.
    pub fn new(func: &Function, may_write: &dyn Fn(&Call, &Inst, VarId) -> bool) -> Defs {
        let mut defs: HashMap<VarId, Vec<InstRef>> = HashMap::default();
        for (bi, b) in func.blocks.iter().enumerate() {
            for (ii, inst) in b.insts.iter().enumerate() {
                let at = InstRef {
                    block: BlockId(bi as u32),
                    index: ii as u32,
                };
                match &inst.kind {
                    InstKind::Access(a) => {
                        if let (true, AccessTarget::Var(v)) = (a.write, &a.target) {
                            defs.entry(*v).or_default().push(at);
                        }
                    }
                    InstKind::Call(c) => {
                        let mut passed: Vec<VarId> = c.passed_vars().collect();
                        passed.sort_unstable();
                        passed.dedup();
                        for v in passed {
                            if may_write(c, inst, v) {
                                defs.entry(v).or_default().push(at);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        Defs(defs)
    }

    fn get(&self, v: &VarId) -> Option<&Vec<InstRef>> {
        self.0.get(v)
    }

    /// The last whole write of `v` in `block` before instruction `upto`
    /// (the lists are in block and instruction order: a binary search, not
    /// a scan of the block).
    fn last_before(&self, v: VarId, block: BlockId, upto: usize) -> Option<InstRef> {
        let ds = self.0.get(&v)?;
        let key = (block.0, upto.min(u32::MAX as usize) as u32);
        let i = ds.partition_point(|d| (d.block.0, d.index) < key);
        ds[..i].last().copied().filter(|d| d.block == block)
    }
}

/// The evaluation context: one function and the outermost loop analysed.
pub struct Values<'a> {
    pub func: &'a Function,
    pub preds: &'a Csr,
    pub dom: &'a DomTree,
    pub forest: &'a LoopForest,
    pub preheaders: &'a [Option<BlockId>],
    /// The loop whose iterations are compared.
    pub outer: LoopId,
    /// Whole writes of each scalar variable, anywhere in the function.
    defs: &'a Defs,
    /// Variables that a call, asm or store through a pointer inside
    /// `outer` may change (memory variables only).
    clobbered: Vec<bool>,
    budget: Cell<u32>,
    depth: Cell<u32>,
    /// Walks from the entry of a block (variable, block, loop header the
    /// walk stops at): many reads of one variable in a loop share them.
    entry_walks: std::cell::RefCell<HashMap<(VarId, u32, u32), Walk>>,
    /// `header_value` per variable and loop.
    header_values: std::cell::RefCell<HashMap<(VarId, LoopId), Result<Poly, Why>>>,
    /// Scratch "seen" marks of the walks: `seen[b] == generation`.
    seen: std::cell::RefCell<(Vec<u32>, u32)>,
}

impl<'a> Values<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        func: &'a Function,
        preds: &'a Csr,
        dom: &'a DomTree,
        forest: &'a LoopForest,
        preheaders: &'a [Option<BlockId>],
        outer: LoopId,
        clobbered: Vec<bool>,
        defs: &'a Defs,
    ) -> Values<'a> {
        Values {
            func,
            preds,
            dom,
            forest,
            preheaders,
            outer,
            defs,
            clobbered,
            budget: Cell::new(EVAL_BUDGET),
            depth: Cell::new(0),
            entry_walks: Default::default(),
            header_values: Default::default(),
            seen: std::cell::RefCell::new((vec![0; func.blocks.len()], 0)),
        }
    }

    /// Every whole write of `v` in the function.
    pub fn defs_of(&self, v: VarId) -> &[InstRef] {
        self.defs.get(&v).map_or(&[], |d| d.as_slice())
    }

    /// The value the one definition of `v` in the function assigns, when
    /// it is made of constants, addresses of named objects and variables
    /// that the function writes at most once (so the value is the same
    /// wherever `v` is read after it): `p = a + 1` with `a` a parameter.
    pub fn single_def_value(&self, v: VarId) -> Option<Poly> {
        let [d] = self.defs_of(v) else { return None };
        let rhs = self.access(*d)?.rhs?;
        let val = self.eval(rhs).ok()?;
        let stable = val.terms.keys().flatten().all(|a| match a {
            Atom::Addr(_) => true,
            // at most one definition: `q` has the same value wherever
            // it is read after it (this definition reads it, so it comes
            // after `q`'s)
            Atom::Sym(q) => match self.defs_of(*q) {
                [] => true,
                [d] => !self.forest.contains(self.outer, d.block.0),
                _ => false,
            },
            Atom::Iter(_) => false,
        });
        stable.then_some(val)
    }

    /// Whether the budget ran out.
    pub fn exhausted(&self) -> bool {
        self.budget.get() == 0
    }

    fn spend(&self) -> Result<(), Why> {
        let b = self.budget.get();
        if b == 0 {
            return Err(Why::Budget);
        }
        self.budget.set(b - 1);
        Ok(())
    }

    fn access(&self, at: InstRef) -> Option<&'a Access> {
        match &self.func.inst_at(at)?.kind {
            InstKind::Access(a) => Some(a),
            _ => None,
        }
    }

    fn span_of(&self, at: InstRef) -> Span {
        self.func
            .inst_at(at)
            .map(|i| i.span)
            .unwrap_or(self.func.name_span)
    }

    /// The innermost loop holding `b`, when it is `outer` or nested in it.
    pub fn context_loop(&self, b: BlockId) -> Option<LoopId> {
        let inner = self.forest.loop_for(b.0)?;
        let mut l = Some(inner);
        while let Some(m) = l {
            if m == self.outer {
                return Some(inner);
            }
            l = self.forest.loops.get(m.index())?.parent;
        }
        None
    }

    /// Evaluates an expression used by the instruction at `at`.
    pub fn eval(&self, e: ExprId) -> Result<Poly, Why> {
        self.spend()?;
        let d = self.depth.get();
        if d > 64 {
            return Err(Why::Budget);
        }
        self.depth.set(d + 1);
        let r = self.eval_inner(e);
        self.depth.set(d);
        r
    }

    fn eval_inner(&self, e: ExprId) -> Result<Poly, Why> {
        let not_affine = || Why::NotAffine(self.func.name_span);
        match self.func.expr(e) {
            Expr::Int(c) => Ok(Poly::constant(*c)),
            Expr::Read(at) => self.read(*at),
            Expr::Neg(a) => self.eval(*a)?.scale(-1).ok_or_else(not_affine),
            Expr::Bin(op, a, b) => {
                let (pa, pb) = (self.eval(*a)?, self.eval(*b)?);
                let r = match op {
                    BinOp::Add => pa.add(&pb),
                    BinOp::Sub => pa.sub(&pb),
                    BinOp::Mul => pa.mul(&pb),
                    BinOp::Div | BinOp::Rem => match (pa.as_constant(), pb.as_constant()) {
                        (Some(x), Some(y)) if y != 0 => {
                            Some(Poly::constant(if *op == BinOp::Div {
                                x.checked_div(y).ok_or_else(not_affine)?
                            } else {
                                x.checked_rem(y).ok_or_else(not_affine)?
                            }))
                        }
                        _ => None,
                    },
                    _ => None,
                };
                r.ok_or_else(not_affine)
            }
            Expr::AddrOf(v) => Ok(Poly::atom(Atom::Addr(*v))),
            Expr::Select { .. } | Expr::Str(_) | Expr::Unknown => Err(not_affine()),
        }
    }

    /// The value read by the access at `at`.
    fn read(&self, at: InstRef) -> Result<Poly, Why> {
        let span = self.span_of(at);
        let Some(a) = self.access(at) else {
            return Err(Why::NotAffine(span));
        };
        let v = match (&a.target, a.index, a.path.is_empty()) {
            (AccessTarget::Var(v), IndexKind::Whole, true) => *v,
            _ => return Err(Why::Indirect(span)),
        };
        let var = self.func.var(v);
        if var.kind == VarKind::Constant {
            if let Some(c) = var.ty.const_value {
                return Ok(Poly::constant(c));
            }
        }
        if !matches!(
            var.ty.scalar,
            ScalarTy::Int | ScalarTy::Char | ScalarTy::Pointer
        ) || var.ty.is_array
        {
            return Err(Why::NotAffine(span));
        }
        self.value_at(v, at)
    }

    /// The value of scalar `v` just before the instruction at `at`.
    pub fn value_at(&self, v: VarId, at: InstRef) -> Result<Poly, Why> {
        self.spend()?;
        // never written in the function, nor by the loop's calls and
        // pointer stores: the same value everywhere
        if self.defs_of(v).is_empty() && !self.clobbered.get(v.index()).copied().unwrap_or(false) {
            return Ok(self.outside_value(v));
        }
        let Some(x) = self.context_loop(at.block) else {
            return Ok(self.outside_value(v));
        };
        let walk = self.walk(v, at, x);
        match (walk.defs.as_slice(), walk.hit_header) {
            ([d], false) => self.def_value(v, *d, at),
            ([], true) => self.header_value(v, x),
            ([], false) => Ok(self.outside_value(v)),
            _ => Err(Why::SomePaths(v)),
        }
    }

    /// A value defined outside the loops analysed: a symbol, the same for
    /// every iteration compared.
    fn outside_value(&self, v: VarId) -> Poly {
        if let Some(c) = self.func.var(v).ty.const_value {
            if self.func.var(v).kind == VarKind::Constant {
                return Poly::constant(c);
            }
        }
        Poly::atom(Atom::Sym(v))
    }

    /// The value a definition assigns, seen at `at` in the same iteration
    /// of every loop that holds the definition.
    fn def_value(&self, v: VarId, d: InstRef, at: InstRef) -> Result<Poly, Why> {
        // every loop (inside `outer`) holding the definition must hold the
        // use: otherwise the use sees the last iteration's value
        let mut l = self.context_loop(d.block);
        while let Some(m) = l {
            if !self.forest.contains(m, at.block.0) {
                return Err(Why::Varies(v));
            }
            if m == self.outer {
                break;
            }
            l = self.forest.loops[m.index()].parent;
        }
        if matches!(self.func.inst_at(d).map(|i| &i.kind), Some(InstKind::Call(_))) {
            // a call that may assign it
            return Err(Why::Clobbered(v));
        }
        match self.access(d).and_then(|a| a.rhs) {
            Some(rhs) => self.eval(rhs),
            None => Err(Why::Varies(v)),
        }
    }

    /// The value of `v` at the top of loop `x`'s header (memoized: every
    /// read of an index asks for it).
    fn header_value(&self, v: VarId, x: LoopId) -> Result<Poly, Why> {
        if let Some(r) = self.header_values.borrow().get(&(v, x)) {
            return r.clone();
        }
        let r = self.header_value_uncached(v, x);
        // a budget failure is not a fact about the variable
        if !matches!(r, Err(Why::Budget)) {
            self.header_values.borrow_mut().insert((v, x), r.clone());
        }
        r
    }

    fn header_value_uncached(&self, v: VarId, x: LoopId) -> Result<Poly, Why> {
        if self.clobbered.get(v.index()).copied().unwrap_or(false)
            && !crate::scalars::classify::active_do_index(self.func, self.forest, x, self.outer, v)
        {
            return Err(Why::Clobbered(v));
        }
        let lp = &self.forest.loops[x.index()];
        let inside: Vec<InstRef> = self
            .defs
            .get(&v)
            .map(|ds| {
                ds.iter()
                    .copied()
                    .filter(|d| self.forest.contains(x, d.block.0))
                    .collect()
            })
            .unwrap_or_default();
        let entry = || -> Result<Poly, Why> {
            match self.preheaders.get(x.index()).copied().flatten() {
                Some(pre) if x != self.outer => {
                    let n = self.func.block(pre).insts.len() as u32;
                    self.value_at(
                        v,
                        InstRef {
                            block: pre,
                            index: n,
                        },
                    )
                }
                _ => Ok(self.entry_value(v, x)),
            }
        };
        match inside.as_slice() {
            [] => entry(),
            [d] => {
                let step = self.step_of(v, *d).ok_or(Why::Varies(v))?;
                // executed once per iteration: not in an inner loop, and
                // on every path from the header to the latch
                let inner = self.forest.loop_for(d.block.0) != Some(x);
                let latch = lp.latches.first().copied();
                let every = latch.is_some_and(|l| self.dom.dominates(d.block.0, l));
                if inner || !every || lp.latches.len() != 1 {
                    return Err(Why::Varies(v));
                }
                entry()?
                    .add_scaled(&Poly::atom(Atom::Iter(x)), step)
                    .ok_or(Why::Varies(v))
            }
            _ => Err(Why::Varies(v)),
        }
    }

    /// The value of `v` when the outermost loop is entered: the assigned
    /// constant when one definition reaches the preheader and assigns a
    /// value made of constants, a symbol otherwise.
    fn entry_value(&self, v: VarId, x: LoopId) -> Poly {
        let Some(pre) = self.preheaders.get(x.index()).copied().flatten() else {
            return self.outside_value(v);
        };
        // no definition at all (a parameter, a global): nothing to walk
        let ds = self.defs_of(v);
        if ds.is_empty() {
            return self.outside_value(v);
        }
        // one definition that dominates the loop: its value, without a walk
        let walk = match ds {
            [d] if d.block != pre && self.dom.dominates(d.block.0, pre.0) => Walk {
                defs: vec![*d],
                ..Walk::default()
            },
            _ => {
                let n = self.func.block(pre).insts.len() as u32;
                self.walk_outside(
                    v,
                    InstRef {
                        block: pre,
                        index: n,
                    },
                )
            }
        };
        if let ([d], false) = (walk.defs.as_slice(), walk.hit_header) {
            if let Some(rhs) = self.access(*d).and_then(|a| a.rhs) {
                if let Some(c) = self.constant_expr(rhs, 0) {
                    return Poly::constant(c);
                }
            }
        }
        self.outside_value(v)
    }

    /// An expression made only of integer constants and named constants.
    fn constant_expr(&self, e: ExprId, depth: u32) -> Option<i64> {
        if depth > 16 {
            return None;
        }
        match self.func.expr(e) {
            Expr::Int(c) => Some(*c),
            Expr::Neg(a) => self.constant_expr(*a, depth + 1)?.checked_neg(),
            Expr::Bin(op, a, b) => {
                let (x, y) = (
                    self.constant_expr(*a, depth + 1)?,
                    self.constant_expr(*b, depth + 1)?,
                );
                match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::Div if y != 0 => x.checked_div(y),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `Some(c)` when the definition at `d` is `v = v + c` (or `v - c`)
    /// with a constant `c`.
    fn step_of(&self, v: VarId, d: InstRef) -> Option<i64> {
        let rhs = self.access(d)?.rhs?;
        let is_v = |e: ExprId| match self.func.expr(e) {
            Expr::Read(r) => self.func.read_var(*r) == Some(v),
            _ => false,
        };
        match self.func.expr(rhs) {
            Expr::Bin(BinOp::Add, a, b) if is_v(*a) => self.constant_expr(*b, 0),
            Expr::Bin(BinOp::Add, a, b) if is_v(*b) => self.constant_expr(*a, 0),
            Expr::Bin(BinOp::Sub, a, b) if is_v(*a) => self.constant_expr(*b, 0)?.checked_neg(),
            _ => None,
        }
    }

    /// Definitions of `v` that reach `at` without leaving loop `x` through
    /// its header.
    fn walk(&self, v: VarId, at: InstRef, x: LoopId) -> Walk {
        let header = self.forest.loops[x.index()].header;
        self.walk_from(v, at, Some((x, header)))
    }

    fn walk_outside(&self, v: VarId, at: InstRef) -> Walk {
        self.walk_from(v, at, None)
    }

    fn walk_from(&self, v: VarId, at: InstRef, within: Option<(LoopId, u32)>) -> Walk {
        // the definition before `at` in its own block, if any
        if let Some(d) = self.defs.last_before(v, at.block, at.index as usize) {
            return Walk {
                defs: vec![d],
                ..Walk::default()
            };
        }
        let key = (v, at.block.0, within.map_or(u32::MAX, |(_, h)| h));
        if let Some(w) = self.entry_walks.borrow().get(&key) {
            return w.clone();
        }
        let w = self.entry_walk(v, at, within);
        self.entry_walks.borrow_mut().insert(key, w.clone());
        w
    }

    /// The definitions that reach the entry of `at.block` (`at` itself
    /// stands for "several" when the walk is too long).
    fn entry_walk(&self, v: VarId, at: InstRef, within: Option<(LoopId, u32)>) -> Walk {
        let mut out = Walk::default();
        let mut guard = self.seen.borrow_mut();
        let (seen, generation) = &mut *guard;
        *generation = generation.wrapping_add(1);
        if *generation == 0 {
            seen.iter_mut().for_each(|s| *s = 0);
            *generation = 1;
        }
        let g = *generation;
        let mut stack = vec![(at.block, 0usize)];
        let mut steps = 0u32;
        let mut first = true;
        while let Some((b, _)) = stack.pop() {
            steps += 1;
            if steps > 4096 || self.spend().is_err() {
                // too far to tell: behave as if set on several paths
                out.defs.push(at);
                out.defs.push(at);
                return out;
            }
            if !first {
                if let Some(d) = self.defs.last_before(v, b, usize::MAX) {
                    if !out.defs.contains(&d) {
                        out.defs.push(d);
                    }
                    continue;
                }
                if let Some((_, h)) = within {
                    if b.0 == h {
                        out.hit_header = true;
                        continue;
                    }
                }
            } else if let Some((_, h)) = within {
                first = false;
                if b.0 == h {
                    out.hit_header = true;
                    continue;
                }
            }
            first = false;
            let preds = self.preds.succs_of(b.0);
            if preds.is_empty() {
                out.hit_entry = true;
            }
            for &p in preds {
                if let Some(m) = seen.get_mut(p as usize) {
                    if *m != g {
                        *m = g;
                        stack.push((BlockId(p), 0));
                    }
                }
            }
        }
        out
    }
}

#[derive(Default, Debug, Clone)]
struct Walk {
    defs: Vec<InstRef>,
    hit_header: bool,
    hit_entry: bool,
}

