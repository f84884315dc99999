//! Effect summaries of functions defined in the same file (interprocedural
//! side-effect analysis in the manner of Allen & Kennedy, "Optimizing
//! Compilers for Modern Architectures", ch. 11: MOD/REF sets of globals and
//! formal parameters, with the regular sections of the accesses where their
//! subscripts are affine in the formals).
//!
//! A summary lists the memory a call may read or write that its caller can
//! see:
//!
//! * globals: C file-scope and `extern` variables, Fortran module, COMMON,
//!   SAVE and host variables, by name;
//! * the callee's own persistent variables (C `static` locals): one object
//!   shared by every call;
//! * what the parameters reach: C, the memory a pointer parameter points to
//!   (the pointer itself is a copy); Fortran, the actual argument itself
//!   (passed by reference).
//!
//! Subscripts are kept as polynomials over the callee's integer parameters
//! that it never changes ([`Atom::Sym`] of the parameter), so that at a call
//! they become the caller's actual values: `set(a, i)` writing `p[k]`
//! writes `a[i]`. A subscript that depends on anything else (a loop of the
//! callee, a value read from memory) is [`ESel::Unknown`]: at the call it is
//! an unproven access, never an independent one. Calls inside a callee to
//! other same-file functions are mapped through their arguments the same
//! way. Locals of the callee (C parameters included) are private to one call
//! and never appear.
//!
//! A callee is *unknown* (its calls stay "unknown call" findings) when it
//! calls a function that is neither pure nor summarised, holds inline
//! assembly, accesses memory through a pointer it computes or loads, or is
//! recursive.

use super::poly::{Atom, Poly};
use crate::ir::*;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// What one function may do to memory its callers see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub effects: Vec<Effect>,
    /// Why the effects are not known, when they are not ("calls `f`").
    pub unknown: Option<String>,
    /// A call may end the program (Fortran STOP, C `exit`/`abort`, a
    /// no-return call, here or in a callee): nothing the caller does after
    /// it runs then, which no effect describes.
    pub may_stop: bool,
}

/// One read or write of a summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effect {
    pub target: Target,
    pub write: bool,
    /// The selection within the target, root outwards, in the callee's
    /// terms (C: relative to where the pointer parameter points; Fortran:
    /// the dummy's own subscripts).
    pub path: Vec<ESel>,
    /// The scalar type accessed (type-based alias rule).
    pub ty: ScalarTy,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A variable every function of the file names alike (lower case in
    /// Fortran).
    Global(String),
    /// A C `static` local of function `function`.
    Own { function: String, var: String },
    /// Parameter `index` (0-based). `dims`: Fortran, the declared
    /// dimensions of the accessed dummy.
    /// bound of each dimension of the dummy (`None`: not a constant).
    Param { index: usize, dims: Vec<Dim> },
}

/// One selector of an effect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ESel {
    /// A subscript affine in the callee's parameters (atoms are
    /// `Atom::Sym` of the parameters' variables in the callee).
    Index(Poly),
    /// A subscript that depends on something else.
    Unknown,
    /// A whole section: any element.
    Any,
    Field(Box<str>),
}

/// Most effects one summary keeps before it gives up (unknown).
const MAX_EFFECTS: usize = 256;

/// The summaries of a function's same-file callees, computed on first use.
pub struct Summaries<'a> {
    callees: &'a [Arc<Function>],
    pure: &'a [String],
    memo: RefCell<FxHashMap<String, Rc<Summary>>>,
    covers: RefCell<FxHashMap<String, Rc<Vec<super::cover::Cover>>>>,
    /// Names being summarised (recursion).
    active: RefCell<Vec<String>>,
}

impl<'a> Summaries<'a> {
    pub fn new(callees: &'a [Arc<Function>], pure: &'a [String]) -> Summaries<'a> {
        Summaries {
            callees,
            pure,
            memo: RefCell::default(),
            covers: RefCell::default(),
            active: RefCell::default(),
        }
    }

    /// The callee of that name (as `Call::callee` spells it).
    pub fn function(&self, name: &str) -> Option<&'a Function> {
        self.callees
            .iter()
            .find(|f| callee_name(f) == name)
            .map(|f| &**f)
    }

    /// What every call of the same-file function `name` writes of its
    /// dummy arrays (`cover`), computed on first use.
    pub fn covers(&self, name: &str) -> Rc<Vec<super::cover::Cover>> {
        if let Some(c) = self.covers.borrow().get(name) {
            return c.clone();
        }
        let c = Rc::new(
            self.function(name)
                .map(super::cover::covers)
                .unwrap_or_default(),
        );
        self.covers.borrow_mut().insert(name.to_string(), c.clone());
        c
    }

    /// The summary of the same-file function `name`; `None` when the file
    /// defines no such function (or it was not lowered).
    pub fn get(&self, name: &str) -> Option<Rc<Summary>> {
        if let Some(s) = self.memo.borrow().get(name) {
            return Some(s.clone());
        }
        let f = self.function(name)?;
        if self.active.borrow().iter().any(|a| a == name) {
            return Some(Rc::new(Summary {
                effects: Vec::new(),
                unknown: Some(format!("`{name}` is recursive")),
                may_stop: false,
            }));
        }
        self.active.borrow_mut().push(name.to_string());
        let s = Rc::new(summarize(f, self));
        self.active.borrow_mut().pop();
        self.memo.borrow_mut().insert(name.to_string(), s.clone());
        Some(s)
    }
}

/// A function's name as calls spell it.
fn callee_name(f: &Function) -> std::borrow::Cow<'_, str> {
    match f.lang {
        Lang::C => std::borrow::Cow::Borrowed(&f.name),
        Lang::Fortran => std::borrow::Cow::Owned(f.name.to_ascii_lowercase()),
    }
}

/// The variables `f` may change: whole-variable writes, and variables whose
/// address a call receives.
pub(super) fn written_vars(f: &Function) -> Vec<bool> {
    let mut w = vec![false; f.vars.len()];
    for b in &f.blocks {
        for inst in &b.insts {
            match &inst.kind {
                InstKind::Access(a) if a.write => {
                    if let AccessTarget::Var(v) = a.target {
                        if let Some(x) = w.get_mut(v.index()) {
                            *x = true;
                        }
                    }
                }
                InstKind::Call(c) => {
                    for v in &c.escapes {
                        if let Some(x) = w.get_mut(v.index()) {
                            *x = true;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    w
}

/// Where a variable of the callee lives, for its callers.
enum Place {
    /// Private to one call.
    Private,
    Global(String),
    Own(String),
    Param(usize),
    /// Cannot be described.
    Unknown,
}

fn place_of(f: &Function, v: VarId) -> Place {
    let Some(var) = f.vars.get(v.index()) else {
        return Place::Unknown;
    };
    let param = || f.params.iter().position(|p| *p == Some(v));
    match (f.lang, var.kind) {
        (_, VarKind::Constant) => Place::Private,
        (Lang::C, VarKind::Local | VarKind::Param) => Place::Private,
        (Lang::Fortran, VarKind::Local) => Place::Private,
        (Lang::C, VarKind::Static) => Place::Own(var.name.clone()),
        (Lang::C, _) => Place::Global(var.name.clone()),
        (Lang::Fortran, VarKind::Dummy) => match param() {
            Some(k) => Place::Param(k),
            None => Place::Unknown,
        },
        (Lang::Fortran, _) => Place::Global(var.name.to_ascii_lowercase()),
    }
}

/// The value of an integer expression of `f` over its unchanged
/// parameters (and addresses of named objects), when it is affine.
pub fn param_value(f: &Function, written: &[bool], e: ExprId) -> Option<Poly> {
    value_with(f, written, e, &|_, _| None)
}

/// [`param_value`], where `other(at, v)` gives the value of a read of
/// scalar `v` at `at` that is not an unchanged parameter (a loop counter,
/// for [`super::cover`]).
pub fn value_with(
    f: &Function,
    written: &[bool],
    e: ExprId,
    other: &dyn Fn(InstRef, VarId) -> Option<Poly>,
) -> Option<Poly> {
    fn go(
        f: &Function,
        written: &[bool],
        e: ExprId,
        other: &dyn Fn(InstRef, VarId) -> Option<Poly>,
        depth: u32,
    ) -> Option<Poly> {
        if depth > 64 {
            return None;
        }
        match f.exprs.get(e.index())? {
            Expr::Int(c) => Some(Poly::constant(*c)),
            Expr::AddrOf(v) => Some(Poly::atom(Atom::Addr(*v))),
            Expr::Read(at) => {
                let inst = f
                    .blocks
                    .get(at.block.index())?
                    .insts
                    .get(at.index as usize)?;
                let InstKind::Access(a) = &inst.kind else {
                    return None;
                };
                let AccessTarget::Var(v) = a.target else {
                    return None;
                };
                let var = f.vars.get(v.index())?;
                let is_param = f.params.contains(&Some(v));
                let scalar = !var.ty.is_array && !var.ty.is_aggregate && a.path.is_empty();
                if !scalar {
                    return None;
                }
                if is_param && !written.get(v.index()).copied().unwrap_or(true) {
                    Some(Poly::atom(Atom::Sym(v)))
                } else {
                    other(*at, v)
                }
            }
            Expr::Bin(op, x, y) => {
                let a = go(f, written, *x, other, depth + 1)?;
                let b = go(f, written, *y, other, depth + 1)?;
                match op {
                    BinOp::Add => a.add(&b),
                    BinOp::Sub => a.sub(&b),
                    BinOp::Mul => a.mul(&b),
                    _ => None,
                }
            }
            Expr::Neg(x) => go(f, written, *x, other, depth + 1)?.scale(-1),
            Expr::Select { .. } | Expr::Str(_) | Expr::Unknown => None,
        }
    }
    go(f, written, e, other, 0)
}

/// The effects of `f`.
fn summarize(f: &Function, all: &Summaries) -> Summary {
    let written = written_vars(f);
    let mut s = Summary {
        effects: Vec::new(),
        unknown: None,
        may_stop: false,
    };
    let sel_path = |path: &[Sel], index: IndexKind| -> Vec<ESel> {
        let mut out: Vec<ESel> = path
            .iter()
            .map(|sel| match sel {
                Sel::Index(e) => param_value(f, &written, *e).map_or(ESel::Unknown, ESel::Index),
                Sel::Range { .. } => ESel::Any,
                Sel::Field(n) => ESel::Field(n.clone()),
                Sel::Unknown => ESel::Unknown,
            })
            .collect();
        if path.is_empty() && index != IndexKind::Whole {
            out.push(ESel::Unknown);
        }
        out
    };
    'insts: for b in &f.blocks {
        // a call the block ends the program with (no-return)
        let stops = b.term.kind == TermKind::Unreachable;
        let last = b.insts.len().wrapping_sub(1);
        for (k, inst) in b.insts.iter().enumerate() {
            if s.unknown.is_some() {
                break 'insts;
            }
            if stops && k == last && matches!(inst.kind, InstKind::Call(_)) {
                s.may_stop = true;
                continue;
            }
            match &inst.kind {
                InstKind::Access(a) => {
                    let (place, deref) = match a.target {
                        AccessTarget::Var(v) => (place_of(f, v), false),
                        AccessTarget::Deref { ptr: Some(p) } => {
                            let var = f.var(p);
                            let pos = f.params.iter().position(|q| *q == Some(p));
                            match pos {
                                Some(k)
                                    if f.lang == Lang::C
                                        && var.kind == VarKind::Param
                                        && !written[p.index()] =>
                                {
                                    (Place::Param(k), true)
                                }
                                _ => {
                                    s.unknown =
                                        Some(format!("it accesses memory through `{}`", var.name));
                                    continue;
                                }
                            }
                        }
                        AccessTarget::Deref { ptr: None } => {
                            s.unknown = Some("it accesses memory through a loaded pointer".into());
                            continue;
                        }
                    };
                    let target = match place {
                        Place::Private => continue,
                        Place::Unknown => {
                            s.unknown = Some("its arguments cannot be matched".into());
                            continue;
                        }
                        Place::Global(n) => Target::Global(n),
                        Place::Own(n) => Target::Own {
                            function: f.name.clone(),
                            var: n,
                        },
                        Place::Param(k) => Target::Param {
                            index: k,
                            dims: dummy_dims(f, a, deref),
                        },
                    };
                    s.effects.push(Effect {
                        target,
                        write: a.write,
                        path: sel_path(&a.path, a.index),
                        ty: a.ty,
                    });
                }
                InstKind::Call(c) => {
                    let Some(name) = c.callee.as_deref() else {
                        s.unknown = Some("it calls through a function pointer".into());
                        continue;
                    };
                    if super::harmless_call(name, all.pure, f.lang) {
                        continue;
                    }
                    let Some(sub) = all.get(name) else {
                        s.unknown = Some(format!("it calls `{name}`"));
                        continue;
                    };
                    if let Some(why) = &sub.unknown {
                        s.unknown = Some(why.clone());
                        continue;
                    }
                    s.may_stop |= sub.may_stop;
                    let Some(g) = all.function(name) else {
                        continue;
                    };
                    for e in &sub.effects {
                        match through_call(f, &written, g, c, e) {
                            Ok(Some(x)) => s.effects.push(x),
                            Ok(None) => {}
                            Err(why) => {
                                s.unknown = Some(why);
                                break;
                            }
                        }
                    }
                }
                InstKind::Asm => s.unknown = Some("it holds inline assembly".into()),
                _ => {}
            }
            if s.effects.len() > MAX_EFFECTS {
                s.unknown = Some("it has too many effects to follow".into());
            }
        }
    }
    if s.unknown.is_some() {
        s.effects.clear();
    }
    s.effects.dedup();
    s
}

/// Fortran: the declared dimensions of an accessed dummy.
fn dummy_dims(f: &Function, a: &Access, deref: bool) -> Vec<Dim> {
    match (f.lang, &a.target, deref) {
        (Lang::Fortran, AccessTarget::Var(v), false) => f.var(*v).ty.dims.clone(),
        _ => Vec::new(),
    }
}

/// The position of the dummy an actual argument is associated with.
pub fn arg_for<'c>(callee: &Function, call: &'c Call, index: usize) -> Option<&'c CallArg> {
    let keyword = |a: &CallArg| match a {
        CallArg::Ref { keyword, .. } | CallArg::Other { keyword, .. } => keyword.clone(),
        CallArg::Value(_) => None,
    };
    if call.args.iter().all(|a| keyword(a).is_none()) {
        return call.args.get(index);
    }
    // keyword arguments: positional ones first, then by name
    let name = callee
        .params
        .get(index)
        .copied()
        .flatten()
        .map(|v| callee.var(v).name.to_ascii_lowercase())?;
    call.args
        .iter()
        .enumerate()
        .find_map(|(i, a)| match keyword(a) {
            Some(k) if *k == *name => Some(a),
            None if i == index => Some(a),
            _ => None,
        })
}

/// An effect of callee `g` at call `c` inside `f`, as an effect of `f`
/// (`None`: it touches only `f`'s private data).
fn through_call(
    f: &Function,
    written: &[bool],
    g: &Function,
    c: &Call,
    e: &Effect,
) -> Result<Option<Effect>, String> {
    let unknown = || {
        format!(
            "the arguments of its call to `{}` cannot be followed",
            g.name
        )
    };
    let (index, dims) = match &e.target {
        Target::Global(_) | Target::Own { .. } => return Ok(Some(e.clone())),
        Target::Param { index, dims } => (*index, dims),
    };
    // the callee's parameters in f's terms
    let actual = |v: VarId| -> Option<Poly> {
        let k = g.params.iter().position(|p| *p == Some(v))?;
        match arg_for(g, c, k)? {
            CallArg::Value(x) | CallArg::Other { value: Some(x), .. } => {
                param_value(f, written, *x)
            }
            CallArg::Ref { var, path, .. } if path.is_empty() => {
                let is_param = f.params.contains(&Some(*var));
                (is_param && !written[var.index()]).then(|| Poly::atom(Atom::Sym(*var)))
            }
            _ => None,
        }
    };
    let path: Vec<ESel> = e
        .path
        .iter()
        .map(|s| match s {
            ESel::Index(p) => substitute(p, &actual).map_or(ESel::Unknown, ESel::Index),
            x => x.clone(),
        })
        .collect();
    let Some(arg) = arg_for(g, c, index) else {
        return Err(unknown());
    };
    let (var, base): (VarId, Vec<ESel>) = match arg {
        CallArg::Other { .. } => return Ok(None),
        CallArg::Ref { var, path, .. } => (
            *var,
            path.iter()
                .map(|sel| match sel {
                    Sel::Index(x) => param_value(f, written, *x).map_or(ESel::Unknown, ESel::Index),
                    Sel::Range { .. } => ESel::Any,
                    Sel::Field(n) => ESel::Field(n.clone()),
                    Sel::Unknown => ESel::Unknown,
                })
                .collect(),
        ),
        CallArg::Value(x) => {
            // a C pointer: `AddrOf(v) + off` or `Sym(p) + off`
            let Some(val) = param_value(f, written, *x) else {
                return Err(unknown());
            };
            let Some((atom, off)) = split_base(&val) else {
                return Err(unknown());
            };
            match atom {
                Atom::Addr(v) => (v, vec![ESel::Index(off)]),
                Atom::Sym(p) => {
                    let k = f.params.iter().position(|q| *q == Some(p));
                    return match k {
                        Some(k) => Ok(Some(Effect {
                            target: Target::Param {
                                index: k,
                                dims: Vec::new(),
                            },
                            write: e.write,
                            path: compose_c(&[ESel::Index(off)], &path),
                            ty: e.ty,
                        })),
                        None => Err(unknown()),
                    };
                }
                Atom::Iter(_) => return Err(unknown()),
            }
        }
    };
    let path = match f.lang {
        Lang::C => compose_c(&base, &path),
        Lang::Fortran => compose_fortran(&base, &path, dims, &f.var(var).ty.dims),
    };
    let target = match place_of(f, var) {
        Place::Private => return Ok(None),
        Place::Unknown => return Err(unknown()),
        Place::Global(n) => Target::Global(n),
        Place::Own(n) => Target::Own {
            function: f.name.clone(),
            var: n,
        },
        Place::Param(k) => Target::Param {
            index: k,
            dims: f.var(var).ty.dims.clone(),
        },
    };
    Ok(Some(Effect {
        target,
        write: e.write,
        path,
        ty: e.ty,
    }))
}

/// Replaces the callee's parameter symbols by their values.
pub fn substitute(p: &Poly, value: &dyn Fn(VarId) -> Option<Poly>) -> Option<Poly> {
    let mut out = Poly::default();
    for (m, k) in &p.terms {
        let mut term = Poly::constant(*k);
        for a in m {
            let v = match a {
                Atom::Sym(v) => value(*v)?,
                _ => return None,
            };
            term = term.mul(&v)?;
        }
        out = out.add(&term)?;
    }
    Some(out)
}

/// `Addr(v) + off` or `Sym(p) + off`: the base atom and the offset.
pub fn split_base(val: &Poly) -> Option<(Atom, Poly)> {
    let mut base = None;
    for (m, k) in &val.terms {
        if m.iter().any(|a| matches!(a, Atom::Addr(_) | Atom::Sym(_))) {
            match m.as_slice() {
                [a @ (Atom::Addr(_) | Atom::Sym(_))] if *k == 1 && base.is_none() => {
                    base = Some(*a)
                }
                _ => return None,
            }
        }
    }
    let base = base?;
    let off = val.sub(&Poly::atom(base))?;
    if off.terms.keys().flatten().next().is_some() {
        return None;
    }
    Some((base, off))
}

/// C: a pointer to the element `base` selects, then `path` from it: the
/// first subscript of `path` is added to the last of `base`.
pub fn compose_c(base: &[ESel], path: &[ESel]) -> Vec<ESel> {
    let Some((first, rest)) = path.split_first() else {
        return base.to_vec();
    };
    let Some((last, before)) = base.split_last() else {
        return path.to_vec();
    };
    let joined = match (last, first) {
        (ESel::Index(a), ESel::Index(b)) => a.add(b).map_or(ESel::Unknown, ESel::Index),
        _ => ESel::Unknown,
    };
    let mut out = before.to_vec();
    out.push(joined);
    out.extend(rest.iter().cloned());
    out
}

/// Fortran: the actual argument `base` (a whole variable, an element, a
/// section) and the dummy's selection `path`. A scalar dummy is the actual
/// itself; a whole array actual of the same shape ([`same_shape`]) is
/// subscripted alike; anything else (sequence association of an element,
/// reshaped dummies) is an unknown subscript.
pub fn compose_fortran(base: &[ESel], path: &[ESel], dummy: &[Dim], actual: &[Dim]) -> Vec<ESel> {
    if path.is_empty() {
        return base.to_vec();
    }
    if base.is_empty() && same_shape(dummy, actual) {
        return path.to_vec();
    }
    vec![ESel::Unknown]
}

/// Fortran: a dummy array declared `dummy` names every element of a whole
/// actual array declared `actual` by the same subscripts: the same rank,
/// the same constant lower bounds and the same constant extents in every
/// dimension but the last (array element sequence association, F2018
/// 15.5.2.11: with other leading extents, `a(i, j)` of the dummy is
/// another element of the actual).
pub fn same_shape(dummy: &[Dim], actual: &[Dim]) -> bool {
    let n = dummy.len();
    n == actual.len()
        && dummy.iter().zip(actual).enumerate().all(|(k, (d, a))| {
            d.lower.is_some()
                && d.lower == a.lower
                && (k + 1 == n || (d.extent.is_some() && d.extent == a.extent))
        })
}
