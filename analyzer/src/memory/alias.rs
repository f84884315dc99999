//! The documented alias model (SEMANTICS.md §4), shared by LICM and the
//! ordering analysis. Conservative where the source does not say more:
//!
//! * distinct named objects never alias; the same named object always may
//!   (element indices are not compared);
//! * accesses of incompatible scalar types do not alias (`int` vs `double`);
//!   `char` and unknown types alias everything, aggregates alias everything;
//! * C: a dereference may alias every escaped object (globals, statics,
//!   address-taken locals) and every other dereference of a compatible type,
//!   unless one of two *different* pointers is `restrict`;
//! * Fortran: dummies, module data and locals are named objects; only
//!   POINTER/TARGET objects may be reached through a POINTER;
//! * a call to a function that is not pure may read and write every
//!   location except locals whose address never escapes.

use super::{Storage, VarFacts};
use crate::ir::*;

/// A memory location class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Loc {
    pub base: LocBase,
    pub ty: ScalarTy,
}

impl Loc {
    pub fn var(v: VarId, ty: ScalarTy) -> Loc {
        Loc {
            base: LocBase::Var(v),
            ty,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LocBase {
    /// A named object.
    Var(VarId),
    /// Through a pointer variable (`None`: a computed pointer).
    Deref(Option<VarId>),
}

/// Type-based compatibility: may two accesses of these types overlap?
pub fn types_compatible(a: ScalarTy, b: ScalarTy) -> bool {
    use ScalarTy::*;
    match (a, b) {
        (Char | Unknown | Aggregate, _) | (_, Char | Unknown | Aggregate) => true,
        _ => a == b,
    }
}

/// Whether a named variable can be reached through a pointer.
fn reachable_by_pointer(func: &Function, v: VarId) -> bool {
    let var = func.var(v);
    match func.lang {
        Lang::C => matches!(var.kind, VarKind::Global | VarKind::Static) || var.address_taken,
        Lang::Fortran => var.ty.pointer_or_target,
    }
}

fn is_restrict(func: &Function, p: Option<VarId>) -> bool {
    p.is_some_and(|p| func.var(p).ty.restrict)
}

/// May the two locations overlap?
pub fn may_alias(func: &Function, a: &Loc, b: &Loc) -> bool {
    match (a.base, b.base) {
        (LocBase::Var(x), LocBase::Var(y)) => x == y,
        (LocBase::Var(v), LocBase::Deref(_)) | (LocBase::Deref(_), LocBase::Var(v)) => {
            reachable_by_pointer(func, v) && types_compatible(a.ty, b.ty)
        }
        (LocBase::Deref(p), LocBase::Deref(q)) => {
            if !types_compatible(a.ty, b.ty) {
                return false;
            }
            if p.is_some() && p == q {
                return true;
            }
            !(is_restrict(func, p) || is_restrict(func, q))
        }
    }
}

/// May a call to a function that is not pure read or write `loc`?
pub fn call_may_touch(func: &Function, facts: &VarFacts, loc: &Loc) -> bool {
    match loc.base {
        LocBase::Deref(_) => true,
        LocBase::Var(v) => {
            let var = func.var(v);
            match var.kind {
                VarKind::Local | VarKind::Param => {
                    facts.escaped(v) && facts.storage(v) == Some(Storage::Memory)
                }
                VarKind::Constant => false,
                _ => true,
            }
        }
    }
}
