//! The OpenMP data-sharing clause each scalar of a loop needs, decided from
//! the IR facts of [`super`] (REWRITES.md "Data sharing is the
//! hard part"). This is the one place that decides it: CSA503 suggests the
//! clause for an OpenMP loop, the rewrite writes it for a CSA marker.
//! Arrays are `dependence::arrays`'s.
//!
//! For a scalar the loop accesses (not the loop's own index, not one
//! declared inside the loop), in this order:
//! * passed by reference to a procedure whose effects are unknown (a
//!   Fortran actual argument) before the iteration sets it, or while it is
//!   updated as a reduction or induction: no clause can be chosen, the
//!   callee may read or change it (the index of a `DO` the call is inside
//!   is not passed in this sense: no call may redefine it). A private
//!   variable set before the call is passed as each thread's copy;
//! * every access one update `x = x op e` with one operator: `reduction`;
//! * not written: shared;
//! * its address taken: no clause (code elsewhere may use it);
//! * an induction variable (one `x = x + c` on every iteration) read
//!   before the update: `linear(x:c)`;
//! * read before the iteration writes it: carried, no clause;
//! * for a CSA marker, a global, static or saved variable: shared, as the
//!   marker asserted (CSA501 reports the conflict when every iteration
//!   writes it);
//! * read after the loop: `lastprivate` when written on every path, else no
//!   clause;
//! * otherwise `private`.

use super::{RedOp, ScalarUse};
use crate::graph::loops::{LoopForest, LoopId};
use crate::ir::*;
use crate::source::Span;

/// A clause a scalar can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clause {
    Shared,
    Private,
    Lastprivate,
    Reduction(RedOp),
    /// `linear(x:step)`.
    Linear(i64),
}

/// Why no clause fits a scalar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoClause {
    /// Read (at this span) before the iteration writes it, and neither a
    /// reduction nor an induction variable.
    Carried(Span),
    /// `&x` is taken in the function.
    AddressTaken,
    /// Read after the loop but written on some paths only.
    SomePaths,
    /// Passed by reference to a procedure with unknown effects.
    Passed { callee: String, at: Span },
    /// A pointer stepped on every iteration.
    SteppedPointer,
}

/// The clause scalar `u` needs in an OpenMP loop. `marker`: the loop is a
/// CSA marker's, whose globals are memory all iterations share anyway (in
/// an OpenMP loop a clause may privatize them).
pub fn scalar_clause(func: &Function, u: &ScalarUse, marker: bool) -> Result<Clause, NoClause> {
    let var = func.var(u.var);
    // passed to a procedure that may read it before the iteration sets it,
    // or change it between updates: no clause keeps the sequential values
    // (a global or saved variable is the same object for the callee under
    // either model: shared, as the marker asserted)
    let own_storage = matches!(var.kind, VarKind::Local | VarKind::Param | VarKind::Dummy);
    if let Some(p) = u.passed.as_ref().filter(|_| own_storage) {
        let update = matches!(u.reduction, Ok(Some(_))) || u.linear.is_some();
        if p.unset || u.exposed_read.is_some() || update {
            return Err(NoClause::Passed {
                callee: p.callee.clone(),
                at: p.at,
            });
        }
    }
    let pointer = var.ty.scalar == ScalarTy::Pointer;
    if let Ok(Some(op)) = u.reduction {
        return if pointer {
            Err(NoClause::SteppedPointer)
        } else {
            Ok(Clause::Reduction(op))
        };
    }
    if u.first_write.is_none() {
        return Ok(Clause::Shared);
    }
    if var.address_taken && !var.only_passed {
        return Err(NoClause::AddressTaken);
    }
    if let (Some(step), Some(_)) = (u.linear, u.exposed_read) {
        return if pointer {
            Err(NoClause::SteppedPointer)
        } else {
            Ok(Clause::Linear(step))
        };
    }
    if let Some(r) = u.exposed_read {
        return Err(NoClause::Carried(r));
    }
    if marker && matches!(var.kind, VarKind::Global | VarKind::Static | VarKind::Saved) {
        return Ok(Clause::Shared);
    }
    if u.live_after {
        return if u.written_every {
            Ok(Clause::Lastprivate)
        } else {
            Err(NoClause::SomePaths)
        };
    }
    Ok(Clause::Private)
}

/// Whether `v` is the index of a Fortran counted `DO` that holds loop
/// `from` (or is `from`), looking outwards up to `outer`: while that `DO`
/// is active no call may redefine its index (Fortran 2018 11.1.7.4.3). A
/// non-conforming program that does is not modelled.
pub(crate) fn active_do_index(
    func: &Function,
    forest: &LoopForest,
    from: LoopId,
    outer: LoopId,
    v: VarId,
) -> bool {
    if func.lang != Lang::Fortran {
        return false;
    }
    let mut cur = Some(from);
    while let Some(m) = cur {
        let header = forest.loops[m.index()].header;
        if func.source_loop_with_header(header).is_some_and(|sl| {
            sl.kind == LoopKind::FortranDo && sl.control.as_ref().is_some_and(|c| c.var == v)
        }) {
            return true;
        }
        if m == outer {
            break;
        }
        cur = forest.loops[m.index()].parent;
    }
    false
}
