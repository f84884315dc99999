//! How the scalar variables of a loop carry values between iterations.
//!
//! For each whole scalar variable the loop body accesses (not the loop's
//! own index), on the IR:
//! * the *exposed reads*: reads that may see a value from before the
//!   iteration, because on some path from the loop header to the read the
//!   variable is not written (a forward must-analysis of "written since the
//!   iteration began" over the loop's blocks; inner loops may run zero
//!   times, so their writes do not count after them);
//! * whether the variable is written on every path through an iteration
//!   (it is in the must-set at every latch);
//! * whether every access is one *reduction update* `x = x op e` (also
//!   `x op= e`, `x++`, `x = e op x` for commutative `op`, Fortran
//!   `x = max(x, e)`), all with the same operator and with `e` never
//!   reading `x`;
//! * whether the variable is *live after the loop*: read on some path from
//!   a loop exit before being written (a forward search), or visible
//!   outside the function (globals, statics, Fortran dummies and saved
//!   variables, address-taken locals).
//!
//! The OpenMP data-sharing check (CSA503) and the OpenMP rewrite read these
//! facts; for a CSA marker they say nothing about races (scalars in
//! registers may carry values).

pub mod classify;

use crate::graph::loops::{LoopForest, LoopId};
use crate::graph::Csr;
use crate::ir::*;
use crate::source::Span;

/// A reduction operator recognised in an update (ordered as clauses are
/// printed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RedOp {
    Add,
    /// `x = x - e`: combined with `+` (OpenMP's `-` reduction).
    Sub,
    Mul,
    BitAnd,
    BitOr,
    BitXor,
    LogAnd,
    LogOr,
    Max,
    Min,
}

impl RedOp {
    fn of(op: BinOp) -> Option<RedOp> {
        Some(match op {
            BinOp::Add => RedOp::Add,
            BinOp::Sub => RedOp::Sub,
            BinOp::Mul => RedOp::Mul,
            BinOp::BitAnd => RedOp::BitAnd,
            BinOp::BitOr => RedOp::BitOr,
            BinOp::BitXor => RedOp::BitXor,
            BinOp::LogAnd => RedOp::LogAnd,
            BinOp::LogOr => RedOp::LogOr,
            BinOp::Min => RedOp::Min,
            BinOp::Max => RedOp::Max,
            _ => return None,
        })
    }

    /// The reduction identifier in a clause of `lang`.
    pub fn spelling(self, lang: Lang) -> &'static str {
        match (self, lang) {
            (RedOp::Add, _) => "+",
            (RedOp::Sub, _) => "-",
            (RedOp::Mul, _) => "*",
            (RedOp::Min, _) => "min",
            (RedOp::Max, _) => "max",
            (RedOp::BitAnd, Lang::C) => "&",
            (RedOp::BitOr, Lang::C) => "|",
            (RedOp::BitXor, Lang::C) => "^",
            (RedOp::LogAnd, Lang::C) => "&&",
            (RedOp::LogOr, Lang::C) => "||",
            (RedOp::BitAnd, Lang::Fortran) => "iand",
            (RedOp::BitOr, Lang::Fortran) => "ior",
            (RedOp::BitXor, Lang::Fortran) => "ieor",
            (RedOp::LogAnd, Lang::Fortran) => ".and.",
            (RedOp::LogOr, Lang::Fortran) => ".or.",
        }
    }

    /// Whether a clause operator combines partial results the way this
    /// update does (`x = x - e` is a `+` or `-` reduction).
    pub fn fits(self, clause: RedOp) -> bool {
        self == clause
            || matches!(
                (self, clause),
                (RedOp::Sub, RedOp::Add) | (RedOp::Add, RedOp::Sub)
            )
    }
}

/// The facts about one scalar variable of a loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalarUse {
    pub var: VarId,
    /// The first write in the loop (by source position), if any.
    pub first_write: Option<Span>,
    /// The first read in the loop, if any.
    pub first_read: Option<Span>,
    /// The first read that may see a value from before the iteration.
    pub exposed_read: Option<Span>,
    /// Written on every path through an iteration.
    pub written_every: bool,
    /// Every access is an update with this operator (`Err`: the first
    /// access that is not; `Ok(None)`: not written).
    pub reduction: Result<Option<RedOp>, Span>,
    /// Read after the loop, or visible outside the function.
    pub live_after: bool,
    /// The loop index of a loop inside this one (`control.var`).
    pub inner_index: bool,
    /// An induction variable: its one write in the loop is `x = x + c`
    /// (`x++`, `x -= c`) with a constant `c`, once on every iteration (not
    /// in an inner loop, on every path): the step `c`.
    pub linear: Option<i64>,
    /// The first call with unknown effects the variable is passed to (by
    /// reference or address): the callee may read it and write it.
    pub passed: Option<Passed>,
    /// Every access in the loop (and the call it is passed to, if any)
    /// runs under one OpenMP lock (`Function::omp_sync`: `atomic`
    /// statements, `critical` constructs of one name): iterations never
    /// access it at the same time.
    pub locked: bool,
}

/// A call that is passed a scalar and may read and change it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passed {
    pub callee: String,
    pub at: Span,
    /// The iteration may not have written the variable before the call
    /// (the callee may read a value from an earlier iteration).
    pub unset: bool,
}

/// Most variables whose liveness after the loop is searched; the others
/// are taken as live (the safe answer).
const LIVE_BUDGET: usize = 64;
// (searched together: one bit each in a `u64`, [`live_after_each`])
const _: () = assert!(LIVE_BUDGET <= 64);

/// The scalar facts of loop `l`, in order of first access. `own_index` is
/// the loop's own index (left out).
/// `known` tells which callees have no effects on the scalars passed to
/// them besides reading them (pure functions, output statements);
/// `reads_only(c, v)` whether call `c` (to a callee with known effects,
/// `summary`) does not change scalar `v` it is passed: such a call does
/// not count as passing `v` when the loop never writes `v` (then the loop
/// only reads it).
pub fn scalar_uses(
    func: &Function,
    preds: &Csr,
    forest: &LoopForest,
    l: LoopId,
    own_index: Option<VarId>,
    known: &dyn Fn(&str) -> bool,
    reads_only: &dyn Fn(&Call, VarId) -> bool,
) -> Vec<ScalarUse> {
    let lp = &forest.loops[l.index()];
    let mut blocks: Vec<u32> = lp.blocks.clone();
    blocks.sort_unstable();
    let in_loop = |b: u32| blocks.binary_search(&b).is_ok();
    // the scalars a call with unknown effects is passed (by reference, by
    // address), but not the index of a DO that holds the call
    // the index of each loop that is a Fortran DO, found on first use
    // (`classify::active_do_index`, without a search of the source loops
    // per variable and call)
    let do_index: std::cell::RefCell<Vec<Option<Option<VarId>>>> =
        std::cell::RefCell::new(vec![None; forest.loops.len()]);
    let index_of_do = |m: LoopId| -> Option<VarId> {
        let mut memo = do_index.borrow_mut();
        *memo[m.index()].get_or_insert_with(|| {
            func.source_loop_with_header(forest.loops[m.index()].header)
                .filter(|sl| sl.kind == LoopKind::FortranDo)
                .and_then(|sl| sl.control.as_ref())
                .map(|c| c.var)
        })
    };
    // `classify::active_do_index(func, forest, from, l, v)`
    let active_do_index = |from: LoopId, v: VarId| -> bool {
        if func.lang != Lang::Fortran {
            return false;
        }
        let mut cur = Some(from);
        while let Some(m) = cur {
            if index_of_do(m) == Some(v) {
                return true;
            }
            if m == l {
                break;
            }
            cur = forest.loops[m.index()].parent;
        }
        false
    };
    let passed_at = |b: u32, inst: &Inst| -> Vec<VarId> {
        let InstKind::Call(c) = &inst.kind else {
            return Vec::new();
        };
        if c.callee.as_deref().is_some_and(known) {
            return Vec::new();
        }
        let mut out: Vec<VarId> = c.passed_vars().collect();
        out.sort_unstable();
        out.dedup();
        out.retain(|&v| {
            let var = func.var(v);
            !var.ty.is_array
                && !var.ty.is_aggregate
                && var.kind != VarKind::Constant
                && !forest.loop_for(b).is_some_and(|m| active_do_index(m, v))
                && (func.lang != Lang::C || !func.passes_loop_index(c, inst.span, v))
        });
        out
    };
    // the candidates, in order of first access
    let mut cands: Vec<VarId> = Vec::new();
    let mut slots: rustc_hash::FxHashMap<VarId, usize> = rustc_hash::FxHashMap::default();
    for &b in &blocks {
        for inst in &func.block(BlockId(b)).insts {
            let mut add = |v: VarId| {
                if Some(v) != own_index && !slots.contains_key(&v) {
                    slots.insert(v, cands.len());
                    cands.push(v);
                }
            };
            match whole_scalar(func, inst) {
                Some((v, _)) => add(v),
                None => passed_at(b, inst).into_iter().for_each(add),
            }
        }
    }
    if cands.is_empty() {
        return Vec::new();
    }
    let slot = |v: VarId| slots.get(&v).copied().unwrap_or(usize::MAX);
    // every access of each candidate in the loop, in block order
    let mut by_var: Vec<Vec<(InstRef, &Inst)>> = vec![Vec::new(); cands.len()];
    for &b in &blocks {
        for (k, inst) in func.block(BlockId(b)).insts.iter().enumerate() {
            if let InstKind::Access(Access {
                target: AccessTarget::Var(v),
                ..
            }) = &inst.kind
            {
                if let Some(&i) = slots.get(v) {
                    let at = InstRef {
                        block: BlockId(b),
                        index: k as u32,
                    };
                    by_var[i].push((at, inst));
                }
            }
        }
    }
    let words = cands.len().div_ceil(64);
    let full = vec![u64::MAX; words];
    let empty = vec![0u64; words];
    let set = |s: &mut [u64], i: usize| s[i / 64] |= 1 << (i % 64);
    let has = |s: &[u64], i: usize| s[i / 64] & (1 << (i % 64)) != 0;
    // must-written at block exit; the header starts each iteration empty
    let index_of = |b: u32| blocks.binary_search(&b).ok();
    let mut out: Vec<Vec<u64>> = vec![full.clone(); blocks.len()];
    // the predecessors of each loop block inside the loop, by index in
    // `blocks` (`pred_at[i]..pred_at[i + 1]` of `pred_in`)
    let mut pred_at: Vec<usize> = Vec::with_capacity(blocks.len() + 1);
    let mut pred_in: Vec<usize> = Vec::new();
    pred_at.push(0);
    for &b in &blocks {
        pred_in.extend(
            preds
                .get(b as usize)
                .unwrap_or(&[])
                .iter()
                .filter_map(|&p| index_of(p)),
        );
        pred_at.push(pred_in.len());
    }
    // the must-written set at the entry of `blocks[bi]`, into `acc`
    let block_in = |out: &Vec<Vec<u64>>, bi: usize, acc: &mut Vec<u64>| {
        acc.clear();
        let ps = &pred_in[pred_at[bi]..pred_at[bi + 1]];
        if blocks[bi] == lp.header || ps.is_empty() {
            acc.extend_from_slice(&empty);
            return;
        }
        acc.extend_from_slice(&full);
        for &pi in ps {
            for (a, o) in acc.iter_mut().zip(&out[pi]) {
                *a &= o;
            }
        }
    };
    let mut cur: Vec<u64> = Vec::with_capacity(words);
    // the loop's blocks in reverse post-order from the header (edges back
    // to the header left out: the header starts each iteration afresh), so
    // that the fixed point takes a round per nesting level, not per block
    let order: Vec<usize> = {
        let mut seen = vec![false; blocks.len()];
        let mut post: Vec<usize> = Vec::with_capacity(blocks.len());
        // (block index, next successor to look at)
        let mut stack: Vec<(usize, usize)> = Vec::new();
        if let Some(h) = index_of(lp.header) {
            seen[h] = true;
            stack.push((h, 0));
        }
        while let Some(&mut (bi, ref mut next)) = stack.last_mut() {
            let succ = func
                .block(BlockId(blocks[bi]))
                .term
                .kind
                .successors()
                .nth(*next);
            *next += 1;
            match succ {
                Some(t) => {
                    if let Some(ti) = index_of(t.0) {
                        if !seen[ti] {
                            seen[ti] = true;
                            stack.push((ti, 0));
                        }
                    }
                }
                None => {
                    post.push(bi);
                    stack.pop();
                }
            }
        }
        post.reverse();
        // blocks not reached from the header (none in a natural loop) last
        post.extend((0..blocks.len()).filter(|&i| !seen[i]));
        post
    };
    // iterate to the fixed point (the must-sets only shrink, so this
    // terminates)
    for _round in 0..blocks.len() + 2 {
        let mut changed = false;
        for &bi in &order {
            let b = blocks[bi];
            block_in(&out, bi, &mut cur);
            for inst in &func.block(BlockId(b)).insts {
                if let Some((v, true)) = whole_scalar(func, inst) {
                    if slot(v) != usize::MAX {
                        set(&mut cur, slot(v));
                    }
                }
            }
            if cur != out[bi] {
                out[bi].clone_from(&cur);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut uses: Vec<ScalarUse> = cands
        .iter()
        .map(|&v| ScalarUse {
            var: v,
            first_write: None,
            first_read: None,
            exposed_read: None,
            written_every: false,
            reduction: Ok(None),
            live_after: false,
            inner_index: false,
            linear: None,
            passed: None,
            locked: false,
        })
        .collect();
    let first = |cur: &mut Option<Span>, s: Span| {
        if cur.is_none_or(|c| s.start < c.start) {
            *cur = Some(s);
        }
    };
    // calls that only read what they are passed, kept aside until the
    // loop's writes are known
    let mut read_passes = uses.clone();
    for (bi, &b) in blocks.iter().enumerate() {
        block_in(&out, bi, &mut cur);
        for inst in &func.block(BlockId(b)).insts {
            if let InstKind::Call(c) = &inst.kind {
                for v in passed_at(b, inst) {
                    let i = slot(v);
                    let readers = if reads_only(c, v) {
                        &mut read_passes
                    } else {
                        &mut uses
                    };
                    if let Some(u) = readers.get_mut(i).filter(|u| u.passed.is_none()) {
                        u.passed = Some(Passed {
                            callee: c
                                .callee
                                .clone()
                                .unwrap_or_else(|| "a function pointer".into()),
                            at: c.name_span,
                            unset: !has(&cur, i),
                        });
                    }
                }
                continue;
            }
            let Some((v, write)) = whole_scalar(func, inst) else {
                continue;
            };
            let i = slot(v);
            if i == usize::MAX {
                continue;
            }
            let u = &mut uses[i];
            if write {
                first(&mut u.first_write, inst.span);
                set(&mut cur, i);
            } else {
                first(&mut u.first_read, inst.span);
                if !has(&cur, i) {
                    first(&mut u.exposed_read, inst.span);
                }
            }
        }
    }
    for (u, r) in uses.iter_mut().zip(read_passes) {
        // a variable the loop writes is read by those calls at points the
        // analysis does not follow: passed, as to any call
        if u.passed.is_none() && u.first_write.is_some() {
            u.passed = r.passed;
        }
    }
    for u in uses.iter_mut() {
        let i = slot(u.var);
        u.written_every = !lp.latches.is_empty()
            && lp
                .latches
                .iter()
                .all(|&lt| index_of(lt).is_some_and(|li| has(&out[li], i)));
        u.reduction = reduction_form(func, preds, &by_var[i], u.var);
        if u.written_every {
            let mut writes = by_var[i]
                .iter()
                .filter(|(_, inst)| matches!(&inst.kind, InstKind::Access(a) if a.write));
            if let (Some((at, inst)), None) = (writes.next(), writes.next()) {
                if forest.loop_for(at.block.0) == Some(l) {
                    u.linear = match &inst.kind {
                        InstKind::Access(a) => a.rhs.and_then(|e| step_of(func, e, u.var)),
                        _ => None,
                    };
                }
            }
        }
    }
    if !func.omp_sync.is_empty() {
        for u in uses.iter_mut() {
            let spans = by_var[slot(u.var)]
                .iter()
                .map(|(_, inst)| inst.span)
                .chain(u.passed.as_ref().map(|p| p.at));
            u.locked = common_lock(func, spans);
        }
    }
    // inner loop indices
    for sl in &func.source_loops {
        if sl.header.0 != lp.header && in_loop(sl.header.0) {
            if let Some(c) = &sl.control {
                if let Some(u) = uses.iter_mut().find(|u| u.var == c.var) {
                    u.inner_index = true;
                }
            }
        }
    }
    // the liveness of the variables the cheap tests leave undecided, in
    // one search
    let mut searched: Vec<VarId> = Vec::new();
    for (k, u) in uses.iter_mut().enumerate() {
        let var = func.var(u.var);
        u.live_after = k >= LIVE_BUDGET
            || (var.address_taken && !var.only_passed)
            || matches!(
                var.kind,
                VarKind::Global | VarKind::Static | VarKind::Dummy | VarKind::Saved
            );
        if !u.live_after {
            searched.push(u.var);
        }
    }
    // (`searched` holds those variables in this order, at most
    // LIVE_BUDGET of them)
    let live = live_after_each(func, &blocks, &searched);
    for (i, u) in uses.iter_mut().filter(|u| !u.live_after).enumerate() {
        u.live_after = live & (1 << i) != 0;
    }
    uses
}

/// Whether some OpenMP lock (`Function::omp_sync`) holds every one of
/// `spans` (at least one).
fn common_lock(func: &Function, spans: impl Iterator<Item = Span>) -> bool {
    let mut common: Option<Vec<&OmpLock>> = None;
    for span in spans {
        let here: Vec<&OmpLock> = func.locks_at(span).collect();
        common = Some(match common {
            None => here,
            Some(c) => c.into_iter().filter(|l| here.contains(l)).collect(),
        });
        if common.as_ref().is_some_and(|c| c.is_empty()) {
            return false;
        }
    }
    common.is_some_and(|c| !c.is_empty())
}

/// The variable of a whole-scalar access, and whether it writes.
fn whole_scalar(func: &Function, inst: &Inst) -> Option<(VarId, bool)> {
    let InstKind::Access(a) = &inst.kind else {
        return None;
    };
    let AccessTarget::Var(v) = a.target else {
        return None;
    };
    let var = func.var(v);
    if a.index != IndexKind::Whole
        || !a.path.is_empty()
        || var.ty.is_array
        || var.ty.is_aggregate
        || var.kind == VarKind::Constant
    {
        return None;
    }
    Some((v, a.write))
}

/// Whether the value loop `l` leaves in `v` can be read after it (some
/// path from an exit reads `v` before writing it; a call passed `v`
/// counts as a read).
pub fn live_after_var(func: &Function, forest: &LoopForest, l: LoopId, v: VarId) -> bool {
    let Some(lp) = forest.loops.get(l.index()) else {
        return true;
    };
    let mut blocks = lp.blocks.clone();
    blocks.sort_unstable();
    live_after(func, &blocks, v)
}

/// Whether some path from an exit of the loop reads `v` before writing it.
/// `loop_blocks` is sorted. A call that is passed `v` (by reference, a
/// Fortran actual argument) counts as a read.
pub(super) fn live_after(func: &Function, loop_blocks: &[u32], v: VarId) -> bool {
    live_after_each(func, loop_blocks, &[v]) & 1 != 0
}

/// [`live_after`] of each of `vars` (at most 64) in one search: bit `i`
/// of the result is `vars[i]`'s. A block is searched for the variables
/// that reach it and have not reached it before, so each block is
/// looked at once per variable at most, as many searches of one
/// variable each would, but each block's instructions once for all.
pub(super) fn live_after_each(func: &Function, loop_blocks: &[u32], vars: &[VarId]) -> u64 {
    let vars = &vars[..vars.len().min(64)];
    if vars.is_empty() {
        return 0;
    }
    let all = if vars.len() == 64 {
        u64::MAX
    } else {
        (1u64 << vars.len()) - 1
    };
    let bit = |v: VarId| vars.iter().position(|&x| x == v).map_or(0, |i| 1u64 << i);
    // the variables that reached each block (searched there)
    let mut reached: Vec<u64> = vec![0; func.blocks.len()];
    let mut live = 0u64;
    let mut stack: Vec<(u32, u64)> = Vec::new();
    for &b in loop_blocks {
        for s in func.block(BlockId(b)).term.kind.successors() {
            if loop_blocks.binary_search(&s.0).is_err() {
                stack.push((s.0, all));
            }
        }
    }
    while let Some((b, incoming)) = stack.pop() {
        let Some(seen) = reached.get_mut(b as usize) else {
            continue;
        };
        // (a variable found live needs no more search)
        let mut pending = incoming & !*seen & !live;
        if pending == 0 {
            continue;
        }
        *seen |= pending;
        for inst in &func.block(BlockId(b)).insts {
            if pending == 0 {
                break;
            }
            // in the order of the checks for one variable: a whole read,
            // a whole write, a write of the whole array, then a partial
            // read or a call passed the variable
            let (whole_read, whole_write) = match whole_scalar(func, inst) {
                Some((w, false)) => (bit(w), 0),
                Some((w, true)) => (0, bit(w)),
                None => (0, 0),
            };
            live |= pending & whole_read;
            pending &= !whole_read & !whole_write;
            let (array_write, partial_read) = match &inst.kind {
                InstKind::Access(a) => match a.target {
                    AccessTarget::Var(w) if a.write && !a.path.is_empty() && a.path.iter().all(|s| {
                        matches!(
                            s,
                            Sel::Range {
                                lo: None,
                                hi: None,
                                step: None
                            }
                        )
                    }) =>
                    {
                        (bit(w), 0)
                    }
                    AccessTarget::Var(w) if !a.write => (0, bit(w)),
                    _ => (0, 0),
                },
                InstKind::Call(c) => (0, c.passed_vars().fold(0, |m, x| m | bit(x))),
                _ => (0, 0),
            };
            pending &= !array_write;
            live |= pending & partial_read;
            pending &= !partial_read;
        }
        if live == all {
            break;
        }
        if pending != 0 {
            for s in func.block(BlockId(b)).term.kind.successors() {
                stack.push((s.0, pending));
            }
        }
    }
    live
}

/// Whether every access of `v` in the loop is a reduction update with one
/// operator: `Ok(Some(op))`; `Ok(None)` when `v` is not written; `Err` with
/// the first access that breaks the pattern.
fn reduction_form(
    func: &Function,
    preds: &Csr,
    accesses: &[(InstRef, &Inst)],
    v: VarId,
) -> Result<Option<RedOp>, Span> {
    let mut op: Option<RedOp> = None;
    let mut operands: Vec<InstRef> = Vec::new();
    let mut reads: Vec<(InstRef, Span)> = Vec::new();
    for &(at, inst) in accesses {
        let InstKind::Access(a) = &inst.kind else {
            continue;
        };
        if !a.write {
            reads.push((at, inst.span));
            continue;
        }
        let update = a.rhs.and_then(|e| {
            update_of(func, e, v)
                .or_else(|| compare_and_assign(func, preds, at, e, v))
                .map(|(op, r)| (op, r, None))
                .or_else(|| select_min_max(func, e, v))
        });
        let Some((this, operand, also)) = update else {
            return Err(inst.span);
        };
        operands.extend(also);
        match op {
            Some(o) if !o.fits(this) => return Err(inst.span),
            Some(RedOp::Add) if this == RedOp::Sub => {}
            Some(RedOp::Sub) if this == RedOp::Add => op = Some(RedOp::Add),
            _ => op = Some(this),
        }
        operands.push(operand);
    }
    if op.is_none() {
        return Ok(None);
    }
    // every read of the variable is the operand of an update, and its
    // value flows nowhere else (`b[k++] = x` also uses the old `k`)
    for (at, span) in reads {
        if !operands.contains(&at) || !used_once(func, at) {
            return Err(span);
        }
    }
    Ok(op)
}

/// A write `v = e` at `at` that runs only when `e` compares above (below)
/// `v`: the branch into its block tests `e > v`, `v < e` (or their
/// negation on the else side), with `e` the same expression as the value
/// written: a `max` (`min`) update whose operand is the condition's read
/// of `v`. (`if (a[i] > m) m = a[i];`)
fn compare_and_assign(
    func: &Function,
    preds: &Csr,
    at: InstRef,
    e: ExprId,
    v: VarId,
) -> Option<(RedOp, InstRef)> {
    // the write opens its block, which one branch enters
    let [p] = preds.get(at.block.0 as usize)? else {
        return None;
    };
    if func.block(at.block).insts[..at.index as usize].iter().any(
        |i| matches!(&i.kind, InstKind::Access(a) if a.write || a.target == AccessTarget::Var(v)),
    ) {
        return None;
    }
    let term = &func.block(BlockId(*p)).term;
    let TermKind::Branch { then, else_ } = term.kind else {
        return None;
    };
    if then == else_ {
        return None;
    }
    let taken_when_true = then == at.block;
    let (other, cmp, read) = compared_with(func, term.cond?, v)?;
    if mentions(func, e, v) || !func.same_expr(other, e) {
        return None;
    }
    // the write happens when `other CMP v` holds (then side) or fails
    Some((extreme(cmp, taken_when_true)?, read))
}

/// The read `z` is when it is a plain read of the whole variable `v`.
fn whole_read_of(func: &Function, z: ExprId, v: VarId) -> Option<InstRef> {
    match func.expr(z) {
        Expr::Read(r) if func.read_var(*r) == Some(v) => Some(*r),
        _ => None,
    }
}

/// Condition `c` as `other CMP v`: `other`, the comparison and the read of
/// `v` (either operand order).
fn compared_with(func: &Function, c: ExprId, v: VarId) -> Option<(ExprId, Cmp, InstRef)> {
    let Expr::Bin(BinOp::Cmp(cmp), x, y) = func.expr(c) else {
        return None;
    };
    let reads_v = |z: ExprId| whole_read_of(func, z, v);
    match (reads_v(*x), reads_v(*y)) {
        (None, Some(r)) => Some((*x, *cmp, r)),
        (Some(r), None) => Some((*y, cmp.swapped(), r)),
        _ => None,
    }
}

/// The update `v` gets when it takes `other` exactly when `other CMP v`
/// holds (`when_true`) or fails: max when that is when `other` is larger.
fn extreme(cmp: Cmp, when_true: bool) -> Option<RedOp> {
    match (cmp, when_true) {
        (Cmp::Gt | Cmp::Ge, true) | (Cmp::Lt | Cmp::Le, false) => Some(RedOp::Max),
        (Cmp::Lt | Cmp::Le, true) | (Cmp::Gt | Cmp::Ge, false) => Some(RedOp::Min),
        _ => None,
    }
}

/// `v = o CMP v ? o : v` (either operand order, either arm): a `max`
/// (`min`) update when the arm taken is `o` while `o` compares above
/// (below) `v`; its operands are the condition's read of `v` and the other
/// arm's. (`m = a[i] > m ? a[i] : m;`)
fn select_min_max(
    func: &Function,
    e: ExprId,
    v: VarId,
) -> Option<(RedOp, InstRef, Option<InstRef>)> {
    let Expr::Select { cond, then, else_ } = func.expr(e) else {
        return None;
    };
    let (other, cmp, read) = compared_with(func, *cond, v)?;
    if mentions(func, other, v) {
        return None;
    }
    let reads_v = |z: ExprId| whole_read_of(func, z, v);
    // which arm is `other`, which keeps `v`
    let (takes_other, kept) = match (reads_v(*then), reads_v(*else_)) {
        (None, Some(r)) if func.same_expr(*then, other) => (true, r),
        (Some(r), None) if func.same_expr(*else_, other) => (false, r),
        _ => return None,
    };
    Some((extreme(cmp, takes_other)?, read, Some(kept)))
}

/// Whether the value read at `at` is used by exactly one expression: one
/// `Read` node refers to it, and one place refers to that node (the
/// update it is the operand of). C's `k++` inside a subscript or a
/// condition also hands the old value to that expression.
pub(super) fn used_once(func: &Function, at: InstRef) -> bool {
    let mut node = None;
    for (i, e) in func.exprs.iter().enumerate() {
        if matches!(e, Expr::Read(r) if *r == at) {
            if node.is_some() {
                return false;
            }
            node = Some(ExprId(i as u32));
        }
    }
    let Some(id) = node else {
        return false;
    };
    let mut refs = 0usize;
    for e in &func.exprs {
        match e {
            Expr::Bin(_, l, r) => refs += usize::from(*l == id) + usize::from(*r == id),
            Expr::Neg(x) => refs += usize::from(*x == id),
            Expr::Select { cond, then, else_ } => {
                refs += [cond, then, else_].iter().filter(|x| ***x == id).count()
            }
            _ => {}
        }
    }
    let in_path = |path: &[Sel]| {
        path.iter()
            .map(|s| match s {
                Sel::Index(e) => usize::from(*e == id),
                Sel::Range { lo, hi, step } => [lo, hi, step]
                    .into_iter()
                    .flatten()
                    .filter(|e| **e == id)
                    .count(),
                _ => 0,
            })
            .sum::<usize>()
    };
    for b in &func.blocks {
        for inst in &b.insts {
            match &inst.kind {
                InstKind::Access(a) => {
                    refs += in_path(&a.path) + usize::from(a.rhs == Some(id));
                }
                InstKind::Call(c) => {
                    // `fmax(x, y)`'s value `Max(x, y)` counts its arguments
                    let valued = func.lang == Lang::C
                        && c.callee.as_deref().and_then(BinOp::of_c_function).is_some();
                    for arg in &c.args {
                        match arg {
                            CallArg::Value(_) if valued => {}
                            CallArg::Value(e) => refs += usize::from(*e == id),
                            CallArg::Ref { path, .. } => refs += in_path(path),
                            CallArg::Other { .. } => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
    refs == 1
}

/// `e` as an update of `v`: its operator and the read of `v` it combines.
fn update_of(func: &Function, e: ExprId, v: VarId) -> Option<(RedOp, InstRef)> {
    update_by(func, e, &|at| func.read_var(at) == Some(v), &|x| {
        mentions(func, x, v)
    })
}

/// `e` as an update: its operator and the read it combines, a read that
/// `is_target` accepts; `mentions` tells whether an operand reads the
/// updated object anywhere (then `e` is no update).
pub(super) fn update_by(
    func: &Function,
    e: ExprId,
    is_target: &dyn Fn(InstRef) -> bool,
    mentions: &dyn Fn(ExprId) -> bool,
) -> Option<(RedOp, InstRef)> {
    let reads_v = |x: ExprId| match func.expr(x) {
        Expr::Read(at) if is_target(*at) => Some(*at),
        _ => None,
    };
    match func.expr(e) {
        Expr::Bin(BinOp::Sub, _, _) => {
            // x - e1 - e2 ...: the left spine ends in `x`
            let mut cur = e;
            while let Expr::Bin(BinOp::Sub, l, r) = func.expr(cur) {
                if mentions(*r) {
                    return None;
                }
                cur = *l;
            }
            reads_v(cur).map(|at| (RedOp::Sub, at))
        }
        Expr::Bin(bop, _, _) => {
            let op = RedOp::of(*bop)?;
            // the operands of a chain of the same associative operator
            let mut leaves = Vec::new();
            let mut stack = vec![e];
            while let Some(x) = stack.pop() {
                match func.expr(x) {
                    Expr::Bin(o, l, r) if o == bop => {
                        stack.push(*r);
                        stack.push(*l);
                    }
                    _ => leaves.push(x),
                }
                if leaves.len() + stack.len() > 4096 {
                    return None;
                }
            }
            let mut found = None;
            for x in leaves {
                match reads_v(x) {
                    Some(at) if found.is_none() => found = Some(at),
                    _ if mentions(x) => return None,
                    _ => {}
                }
            }
            found.map(|at| (op, at))
        }
        _ => None,
    }
}

/// `e` as `v + c` / `c + v` / `v - c` with a constant `c`: the step.
fn step_of(func: &Function, e: ExprId, v: VarId) -> Option<i64> {
    let is_v = |x: ExprId| matches!(func.expr(x), Expr::Read(at) if func.read_var(*at) == Some(v));
    let int = |x: ExprId| match func.expr(x) {
        Expr::Int(c) => Some(*c),
        _ => None,
    };
    match func.expr(e) {
        Expr::Bin(BinOp::Add, l, r) if is_v(*l) => int(*r),
        Expr::Bin(BinOp::Add, l, r) if is_v(*r) => int(*l),
        Expr::Bin(BinOp::Sub, l, r) if is_v(*l) => int(*r).and_then(|c| c.checked_neg()),
        _ => None,
    }
    .filter(|c| *c != 0)
}

/// Whether expression `e` reads `v` anywhere (the whole variable, or an
/// element of it).
pub(crate) fn mentions(func: &Function, e: ExprId, v: VarId) -> bool {
    let mut stack = vec![e];
    let mut steps = 0usize;
    while let Some(x) = stack.pop() {
        steps += 1;
        if steps > 100_000 {
            return true;
        }
        match func.expr(x) {
            Expr::Read(at) => {
                if func.read_var(*at) == Some(v) {
                    return true;
                }
                // an element read whose subscripts read `v`
                if let Some(Inst {
                    kind: InstKind::Access(a),
                    ..
                }) = func.inst_at(*at)
                {
                    if a.target == AccessTarget::Var(v) {
                        return true;
                    }
                    for s in &a.path {
                        match s {
                            Sel::Index(i) => stack.push(*i),
                            Sel::Range { lo, hi, step } => {
                                stack.extend([lo, hi, step].into_iter().flatten().copied())
                            }
                            _ => {}
                        }
                    }
                }
            }
            Expr::Bin(_, l, r) => {
                stack.push(*l);
                stack.push(*r);
            }
            Expr::Neg(x) => stack.push(*x),
            Expr::Select { cond, then, else_ } => stack.extend([*cond, *then, *else_]),
            Expr::Int(_) | Expr::AddrOf(_) | Expr::Str(_) | Expr::Unknown => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The liveness of many variables searched at once is each one's
    /// searched alone, for every loop of every fixture and every scalar
    /// the loop accesses (the batch is where one variable's search could
    /// stop another's).
    #[test]
    fn live_after_each_is_each_variable_s_own_search() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let (mut loops, mut live, mut dead) = (0, 0, 0);
        for dir in ["c", "fortran"] {
            let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect();
            paths.sort();
            for path in paths {
                let Some(kind) = csa_grammars::detect(&path) else {
                    continue;
                };
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                let analysis =
                    crate::analysis::analyze(kind, &text, &crate::AnalysisOptions::default());
                for fa in analysis.functions() {
                    let func = &fa.func;
                    for lp in &fa.forest.loops {
                        let mut blocks = lp.blocks.clone();
                        blocks.sort_unstable();
                        let mut vars: Vec<VarId> = Vec::new();
                        for &b in &blocks {
                            for inst in &func.block(BlockId(b)).insts {
                                if let InstKind::Access(Access {
                                    target: AccessTarget::Var(v),
                                    ..
                                }) = &inst.kind
                                {
                                    if !vars.contains(v) && vars.len() < 64 {
                                        vars.push(*v);
                                    }
                                }
                            }
                        }
                        let each = live_after_each(func, &blocks, &vars);
                        for (i, &v) in vars.iter().enumerate() {
                            let alone = live_after_each(func, &blocks, &[v]) & 1 != 0;
                            assert_eq!(each & (1 << i) != 0, alone, "{}", path.display());
                            if alone {
                                live += 1;
                            } else {
                                dead += 1;
                            }
                        }
                        loops += 1;
                    }
                }
            }
        }
        assert!(loops > 100 && live > 50 && dead > 50, "{loops} {live} {dead}");
    }
}
