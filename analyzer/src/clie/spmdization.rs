//! What LoopSPMDization (`LoopSPMDization::runOnLoop`, LoopSPMDization.cpp
//! in the compiler's scalar transforms) does with a loop CLIE expanded
//! under an `spmd`/`spmdization` marker: split it into W workers, or give
//! up. It runs after CLIE, late in the function simplification pipeline
//! (after loop unrolling, at -O1 and above), on the IR after SROA,
//! mem2reg, SCCP and InstCombine. Its checks, in order:
//!
//! 1. `W` or `C` is not a constant by then: skipped, no message.
//! 2. `W == 1`: the loop is only marked parallel (a remark; CSA111).
//! 3. `W < 1` or `C < 0`: `BAD CSA SPMD INTRINSIC` (CSA103).
//! 4. More than one exit block: `COULD NOT PERFORM SPMDization`.
//! 5. A value carried from one iteration to the next (a header phi) that
//!    is neither a reduction nor an induction: `COULD NOT PERFORM
//!    SPMDization` (printed as an ERROR banner, still only a warning).
//! 6. Cyclic or hybrid distribution (`C >= 1`) without an induction
//!    variable, 7. blocked distribution (`C == 0`) without a trip count
//!    scalar evolution can compute: `COULD NOT PERFORM SPMDization`.
//!
//! On every give-up the loop stays as CLIE expanded it (one parallel loop,
//! one worker) and `CSAIntrinsicCleaner` deletes the leftover
//! `spmd_worker_num()` calls with everything computed from them.
//!
//! Approximations (never a warning the compiler would not give): a
//! floating-point update counts as a reduction (LLVM recognises one only
//! with reassociation allowed); the trip count is taken as computable
//! whenever the loop has an induction variable and its bound is not
//! written in the loop.

use super::{spmdization_chunk, Outcome};
use crate::scalars::classify::{scalar_clause, NoClause};
use crate::scalars::{mentions, scalar_uses};
use crate::graph::loops::{LoopForest, LoopId};
use crate::graph::Csr;
use crate::ir::*;
use crate::memory::{MemoryInfo, Storage};
use crate::source::Span;

/// LoopSPMDization's verdict on one loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spmdization {
    /// Split into workers: `spmd_worker_num()` in it is each worker's
    /// number.
    Performed,
    /// Not split, silently or with a message: why.
    NotPerformed(NotPerformed),
}

/// Why a loop is not split into workers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotPerformed {
    /// CLIE did not expand the loop (CSA101, CSA103 on the kind, no loop).
    NotExpanded,
    /// The worker count or chunk size is not a constant (no message).
    NotConstant { what: &'static str, at: Span },
    /// One worker (CSA111).
    SingleWorker,
    /// `W < 1` or `C < 0` (CSA103).
    BadArgument,
    /// The loop leaves through several exit blocks.
    SeveralExits { count: usize },
    /// A scalar carries a value between iterations and is neither a
    /// reduction nor an induction variable.
    Carried { var: String, at: Span },
    /// Cyclic or hybrid distribution needs an induction variable.
    NoInduction { kind: &'static str },
    /// Blocked distribution needs a computable trip count.
    NoTripCount,
}

impl NotPerformed {
    /// Whether the compiler prints `COULD NOT PERFORM SPMDization` or skips
    /// the loop without a banner for the reason (CSA112's cases).
    pub fn is_failure(&self) -> bool {
        !matches!(
            self,
            NotPerformed::NotExpanded | NotPerformed::SingleWorker | NotPerformed::BadArgument
        )
    }
}

/// What one function needs for the verdicts.
pub(super) struct SpmdInput<'a> {
    pub func: &'a Function,
    pub preds: &'a Csr,
    pub forest: &'a LoopForest,
    pub memory: &'a MemoryInfo,
}

/// LoopSPMDization's verdict on loop `l`, which CLIE gave `outcome` under
/// `marker`, when that is an `spmd` or `spmdization` marker; `None` for
/// other markers. Computed once per loop by `clie::run`
/// (`LoopVerdict::spmd`).
pub(super) fn spmdization(
    inp: &SpmdInput,
    l: LoopId,
    marker: &BuiltinCall,
    outcome: &Outcome,
) -> Option<Spmdization> {
    let func = inp.func;
    if !matches!(marker.kind, BuiltinKind::Spmd | BuiltinKind::Spmdization) {
        return None;
    }
    let not = |why| Some(Spmdization::NotPerformed(why));
    if !matches!(
        outcome,
        Outcome::Parallelized(_) | Outcome::SpmdWithoutMemory
    ) {
        return not(NotPerformed::NotExpanded);
    }
    let arg = |i: usize| marker.args.get(i);
    let int = |i: usize| match arg(i).map(|a| &a.value) {
        Some(ArgValue::Int(x)) => Some(*x),
        _ => None,
    };
    let w = match int(0) {
        Some(w) => w,
        None => {
            return not(NotPerformed::NotConstant {
                what: "worker count",
                at: arg(0).map_or(marker.span, |a| a.span),
            })
        }
    };
    let chunk = match marker.kind {
        BuiltinKind::Spmd => match int(1) {
            Some(c) => c,
            None => {
                return not(NotPerformed::NotConstant {
                    what: "chunk size",
                    at: arg(1).map_or(marker.span, |a| a.span),
                })
            }
        },
        // CLIE accepted the kind (else the outcome is BadSpmdizationKind)
        _ => match arg(1).map(|a| &a.value) {
            Some(ArgValue::Str(s)) => spmdization_chunk(s).unwrap_or(0),
            _ => 0,
        },
    };
    if w == 1 {
        return not(NotPerformed::SingleWorker);
    }
    if w < 1 || chunk < 0 {
        return not(NotPerformed::BadArgument);
    }
    let lp = &inp.forest.loops[l.index()];
    // exit blocks as SimplifyCFG leaves them: a block that only jumps on is
    // merged into where it jumps (`if (c) break;`, the dedicated exit
    // LoopSimplify adds)
    let mut exits: Vec<u32> = lp
        .exit_blocks
        .iter()
        .map(|&b| forwarded(func, inp.memory, BlockId(b)).0)
        .collect();
    exits.sort_unstable();
    exits.dedup();
    if exits.len() > 1 {
        return not(NotPerformed::SeveralExits { count: exits.len() });
    }
    let sl = func.source_loop_with_header(lp.header);
    let own = sl.and_then(|s| s.control.as_ref()).map(|c| c.var);
    let uses = scalar_uses(func, inp.preds, inp.forest, l, own, &|_| false, &|_, _| {
        false
    });
    let register = |v: VarId| inp.memory.vars.storage(v) == Some(Storage::Register);
    for u in uses.iter().filter(|u| register(u.var)) {
        if let Err(NoClause::Carried(at)) = scalar_clause(func, u, true) {
            return not(NotPerformed::Carried {
                var: func.var(u.var).name.clone(),
                at,
            });
        }
    }
    // an induction variable: the loop's counter, or a scalar stepped by a
    // constant once per iteration
    let counter = sl
        .and_then(|s| s.control.as_ref())
        .filter(|c| matches!(func.expr(c.step), Expr::Int(k) if *k != 0));
    let induction = counter.is_some() || uses.iter().any(|u| u.linear.is_some());
    if chunk >= 1 && !induction {
        return not(NotPerformed::NoInduction {
            kind: if chunk == 1 { "cyclic" } else { "hybrid" },
        });
    }
    if chunk == 0 {
        // the bound of a counted loop must not change in it
        let bound_changes = counter.filter(|c| !c.bounds_once).is_some_and(|c| {
            lp.blocks.iter().any(|&blk| {
                func.block(BlockId(blk))
                    .insts
                    .iter()
                    .any(|i| match &i.kind {
                        InstKind::Access(a) if a.write => match a.target {
                            AccessTarget::Var(v) => mentions(func, c.limit, v),
                            _ => false,
                        },
                        _ => false,
                    })
            })
        });
        if !induction || bound_changes {
            return not(NotPerformed::NoTripCount);
        }
    }
    Some(Spmdization::Performed)
}

/// Where a chain of blocks that only jump on ends: blocks whose
/// instructions are all declarations and accesses of variables mem2reg
/// turns into values (a `return 1;` setting the return value becomes a
/// phi where the paths meet).
fn forwarded(func: &Function, memory: &MemoryInfo, mut b: BlockId) -> BlockId {
    let empty = |blk: &Block| {
        blk.insts.iter().all(|i| match &i.kind {
            InstKind::Decl(_) => true,
            InstKind::Access(a) => match a.target {
                AccessTarget::Var(v) => memory.vars.storage(v) == Some(Storage::Register),
                _ => false,
            },
            _ => false,
        })
    };
    for _ in 0..64 {
        let block = func.block(b);
        match block.term.kind {
            TermKind::Goto(t) if t != b && empty(block) => b = t,
            _ => break,
        }
    }
    b
}
