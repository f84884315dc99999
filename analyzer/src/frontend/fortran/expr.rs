//! Expressions to accesses, calls and builtins.
//!
//! A designator (`x`, `a(i, j)`, `t%c`, `a(i)%c(2)`, `s(1:3)`) is resolved to
//! a [`Place`]: which named object (or pointer) it reaches, how the element
//! is selected (whole, constant or dynamic subscripts), which variables the
//! address depends on. `name(args)` is an array element, a CSA builtin, an
//! intrinsic (not a call), a statement function (inlined) or a function
//! reference (a call), decided from the declarations.

use super::intrinsics::{intrinsic_function, is_builtin_name, IntrinsicClass};
use super::lower::{Binding, Lowerer, Place};
use super::named_kids;
use super::scope::{self, ProcKind};
use crate::frontend::fields::{FortranFields, F};
use crate::frontend::flat::FNode;
use crate::ir::builder::FunctionBuilder;
use crate::ir::*;
use crate::source::Span;

/// What an evaluated expression is, for value tracking of scalar writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val {
    /// A plain read of a whole scalar variable.
    Var(VarId),
    Const(i64),
    /// The result of a CSA builtin.
    Builtin(BuiltinId),
    Other,
}

impl Val {
    pub fn to_value_src(self) -> ValueSrc {
        match self {
            Val::Var(v) => ValueSrc::Copy(v),
            Val::Const(c) => ValueSrc::Const(c),
            Val::Builtin(b) => ValueSrc::Builtin(b),
            Val::Other => ValueSrc::Other,
        }
    }
}

/// A designator's meaning: a place in memory, or a value already computed
/// (a function reference, a constant, an expression).
pub enum Desig {
    Place(Place),
    Value(Val),
}

/// Node kinds that may be designators.
pub fn is_designator(kind: &str) -> bool {
    matches!(
        kind,
        "identifier" | "call_expression" | "derived_type_member_expression" | "coarray_expression"
    )
}

/// One selector after the base name of a designator.
#[derive(Clone, Copy)]
enum Sel<'t> {
    /// `(...)`: subscripts, a substring, or actual arguments.
    Args(FNode<'t>),
    /// `%name`
    Comp(FNode<'t>),
    /// `[...]`
    Coarray(FNode<'t>),
}

/// Splits a designator into its base and its selectors (innermost first),
/// iteratively. Each selector comes with the node that holds it.
#[inline(never)]
#[allow(clippy::type_complexity)]
fn decompose(n: FNode) -> (FNode, Vec<(Sel, FNode)>) {
    let mut sels = Vec::new();
    let mut cur = n;
    for _ in 0..1_000_000 {
        match cur.node_kind() {
            "call_expression" => {
                let kids: super::Kids = cur
                    .named_children()
                    .filter(|k| k.node_kind() != "comment")
                    .collect();
                let Some(first) = kids.first().copied() else {
                    break;
                };
                for al in kids[1..].iter().rev() {
                    if al.node_kind() == "argument_list" {
                        sels.push((Sel::Args(*al), cur));
                    }
                }
                cur = first;
            }
            "derived_type_member_expression" => {
                let kids: super::Kids = cur
                    .named_children()
                    .filter(|k| k.node_kind() != "comment")
                    .collect();
                if kids.len() < 2 {
                    break;
                }
                sels.push((Sel::Comp(kids[kids.len() - 1]), cur));
                cur = kids[0];
            }
            "coarray_expression" => {
                let kids = named_kids(cur);
                let Some(first) = kids.first().copied() else {
                    break;
                };
                if let Some(ci) = kids.iter().find(|k| k.node_kind() == "coarray_index") {
                    sels.push((Sel::Coarray(*ci), cur));
                }
                cur = first;
            }
            _ => break,
        }
    }
    sels.reverse();
    (cur, sels)
}

/// What `name(...)` is.
enum ParenKind {
    Element(Binding),
    Builtin,
    Intrinsic(IntrinsicClass),
    /// Statement function or structure constructor: evaluates its arguments.
    Pure,
    Call,
}

fn max_index(a: IndexKind, b: IndexKind) -> IndexKind {
    let rank = |k: IndexKind| match k {
        IndexKind::Whole => 0,
        IndexKind::Const => 1,
        IndexKind::Dynamic => 2,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

fn keyword_value(n: FNode) -> FNode {
    if n.node_kind() == "keyword_argument" {
        n.field(F::Value).unwrap_or(n)
    } else {
        n
    }
}

fn is_binary(kind: &str) -> bool {
    matches!(
        kind,
        "math_expression"
            | "logical_expression"
            | "relational_expression"
            | "concatenation_expression"
    )
}

impl<'t> Lowerer<'_, 't> {
    // -----------------------------------------------------------------
    // Evaluation

    /// Evaluates an expression for its value: emits its reads, calls and
    /// builtins in evaluation order.
    pub fn eval(&mut self, n: FNode<'t>) -> Val {
        if !self.enter(n) {
            self.last_expr = FunctionBuilder::UNKNOWN;
            return Val::Other;
        }
        self.result_expr = None;
        let v = self.eval_inner(n);
        self.last_expr = match (v, self.result_expr.take()) {
            (Val::Const(c), _) => self.b.expr(Expr::Int(c)),
            (_, Some(e)) => e,
            _ => FunctionBuilder::UNKNOWN,
        };
        self.leave();
        v
    }

    /// Evaluates an expression and returns its symbolic value too.
    pub fn eval_expr(&mut self, n: FNode<'t>) -> (Val, ExprId) {
        let v = self.eval(n);
        (v, self.last_expr)
    }

    fn eval_inner(&mut self, n: FNode<'t>) -> Val {
        match n.node_kind() {
            "number_literal" => match scope::int_literal(self.cx.text(n)) {
                Some(i) => Val::Const(i),
                None => Val::Other,
            },
            "string_literal" | "boolean_literal" | "null_literal" | "hollerith_constant"
            | "nil_literal" | "comment" | "assumed_size" | "assumed_shape" | "assumed_rank"
            | "intrinsic_type" | "derived_type" | "type_member" => Val::Other,
            k if is_designator(k) => self.read(n),
            "parenthesized_expression" => match super::lower::first_expr(n) {
                Some(c) => {
                    let v = self.eval(c);
                    self.result_expr = Some(self.last_expr);
                    v
                }
                None => Val::Other,
            },
            k if is_binary(k) => {
                let e = self.eval_binary(n);
                self.result_expr = e;
                self.folded(n)
            }
            "unary_expression" => {
                let mut arg = None;
                if let Some(a) = n.field(F::Argument) {
                    self.eval(a);
                    arg = Some(self.last_expr);
                }
                let op = n.field(F::Operator);
                if op.is_some_and(|o| o.node_kind() == "user_defined_operator") {
                    self.defined_operator(n);
                } else if let Some(a) = arg {
                    let op_text = op.map(|o| self.cx.text(o).trim()).unwrap_or("");
                    self.result_expr = match op_text {
                        "-" => Some(self.b.expr(Expr::Neg(a))),
                        "+" => Some(a),
                        _ => None,
                    };
                }
                self.folded(n)
            }
            "keyword_argument" => match n.field(F::Value) {
                Some(v) => {
                    let r = self.eval(v);
                    self.result_expr = Some(self.last_expr);
                    r
                }
                None => Val::Other,
            },
            _ => {
                self.eval_children(n);
                Val::Other
            }
        }
    }

    /// A folded integer constant, or `Other`.
    fn folded(&self, n: FNode) -> Val {
        let lookup = |s: &str| self.const_of(s);
        match scope::fold(self.cx, n, &lookup) {
            Some(c) => Val::Const(c),
            None => Val::Other,
        }
    }

    /// Evaluates every named child that is an expression.
    pub fn eval_children(&mut self, n: FNode<'t>) {
        for k in n.children() {
            if !k.is_named()
                || k.is_fortran_field(F::Type)
                || k.is_fortran_field(F::Name)
                || k.is_fortran_field(F::Operator)
            {
                continue;
            }
            match k.node_kind() {
                "comment" | "intrinsic_type" | "derived_type" | "type_member" => {}
                "loop_control_expression" => {
                    // an implied DO: bounds are read, the index is set
                    let parts = named_kids(k);
                    for p in parts.iter().skip(1) {
                        self.eval(*p);
                    }
                }
                _ => {
                    self.eval(k);
                }
            }
        }
    }

    /// A chain of binary operators, evaluated left to right without
    /// recursing down the (left-deep) spine. Returns the chain's symbolic
    /// value when every operator is one [`BinOp`] models.
    fn eval_binary(&mut self, n: FNode<'t>) -> Option<ExprId> {
        let mut rights: Vec<(FNode<'t>, FNode<'t>)> = Vec::new();
        let mut cur = n;
        while is_binary(cur.node_kind()) && rights.len() < 1_000_000 {
            let (Some(l), Some(r)) = (cur.field(F::Left), cur.field(F::Right)) else {
                break;
            };
            rights.push((r, cur));
            cur = l;
        }
        if cur == n {
            // `.not. x` and other unary forms of the binary kinds
            for k in named_kids(n) {
                if k.node_kind() != "comment" && k.node_kind() != "user_defined_operator" {
                    self.eval(k);
                }
            }
            return None;
        }
        self.eval(cur);
        let mut acc = Some(self.last_expr);
        for (r, node) in rights.into_iter().rev() {
            self.eval(r);
            let re = self.last_expr;
            let op = node.field(F::Operator);
            if op.is_some_and(|o| o.node_kind() == "user_defined_operator") {
                self.defined_operator(node);
                acc = None;
                continue;
            }
            let bop = op.and_then(|o| fortran_binop(&self.cx.lname_ref(o)));
            acc = match (acc, bop) {
                (Some(a), Some(b)) => Some(self.b.expr(Expr::Bin(b, a, re))),
                _ => None,
            };
        }
        acc
    }

    /// A user-defined operator (`a .op. b`) is a call to its procedure.
    fn defined_operator(&mut self, n: FNode<'t>) {
        let Some(op) = n.field(F::Operator) else {
            return;
        };
        let name = self.cx.lname(op).replace(char::is_whitespace, "");
        let span = self.span(n);
        self.push_call(Some(name), self.span(op), Vec::new(), span);
    }

    /// Reads a designator's value.
    fn read(&mut self, n: FNode<'t>) -> Val {
        self.ref_expr = None;
        match self.place(n) {
            Desig::Place(p) => {
                let span = self.span(n);
                let whole = p.whole_var;
                let array = p.is_array || p.section;
                let at = self.emit_access(p, false, None, span);
                if array {
                    // an array value (whole array, section, vector
                    // subscript): no integer
                    self.array_read = true;
                } else {
                    self.result_expr = Some(self.b.expr(Expr::Read(at)));
                }
                match whole {
                    Some(v) => Val::Var(v),
                    None => Val::Other,
                }
            }
            Desig::Value(v) => {
                // an intrinsic the expressions model (`mod`, `min`, ...)
                self.result_expr = self.ref_expr.take();
                v
            }
        }
    }

    /// Writes `val` to a designator. Returns the variable when the write is
    /// to a whole scalar variable.
    pub fn store(&mut self, n: FNode<'t>, val: Val) -> Option<VarId> {
        self.store_expr(n, val, FunctionBuilder::UNKNOWN)
    }

    /// [`Self::store`] with the symbolic value written (kept for a whole
    /// scalar variable).
    pub fn store_expr(&mut self, n: FNode<'t>, val: Val, rhs: ExprId) -> Option<VarId> {
        match self.place(n) {
            Desig::Place(p) => {
                let span = self.span(n);
                let value = p.whole_var.map(|_| val.to_value_src());
                let whole = p.whole_var;
                self.emit_access_rhs(p, true, value, Some(rhs), span);
                whole
            }
            Desig::Value(_) => None,
        }
    }

    pub fn emit_access(
        &mut self,
        p: Place,
        write: bool,
        value: Option<ValueSrc>,
        span: Span,
    ) -> InstRef {
        self.emit_access_rhs(p, write, value, None, span)
    }

    /// Emits an access; `rhs` is the value a write of a whole scalar
    /// variable or of one array element stores. Returns where the access went.
    pub fn emit_access_rhs(
        &mut self,
        p: Place,
        write: bool,
        value: Option<ValueSrc>,
        rhs: Option<ExprId>,
        span: Span,
    ) -> InstRef {
        if !write {
            let touched = match p.target {
                AccessTarget::Var(v) => Some(v),
                AccessTarget::Deref { ptr } => ptr,
            };
            if let (Some(v), Some(top)) = (touched, self.collectors.last_mut()) {
                top.push(v);
            }
            for v in &p.addr_vars {
                if let Some(top) = self.collectors.last_mut() {
                    top.push(*v);
                }
            }
        }
        let whole_var = p.index == IndexKind::Whole && matches!(p.target, AccessTarget::Var(_));
        let value = if write && whole_var { value } else { None };
        // the value stored: in a whole scalar, or in an element of an array
        let element = matches!(p.target, AccessTarget::Var(v) if self.b.func().var(v).ty.is_array)
            && !p.path.is_empty()
            && p.path.iter().all(|s| matches!(s, crate::ir::Sel::Index(_)));
        let rhs = if write && ((whole_var && p.path.is_empty()) || element) {
            Some(rhs.unwrap_or(FunctionBuilder::UNKNOWN))
        } else {
            None
        };
        // a non-`Whole` access always describes its selection
        let mut path = p.path;
        if p.is_array {
            whole_array(&mut path, p.rank);
        }
        if path.is_empty() && p.index != IndexKind::Whole {
            path.push(crate::ir::Sel::Unknown);
        }
        self.b.push_at(
            InstKind::Access(Access {
                write,
                target: p.target,
                index: p.index,
                addr_vars: p.addr_vars,
                ty: p.ty,
                value,
                path,
                rhs,
            }),
            span,
        )
    }

    // -----------------------------------------------------------------
    // Designators

    /// The place a name denotes (no access emitted).
    fn name_place(&mut self, b: &Binding) -> Desig {
        match b {
            Binding::Var(v) => {
                let v = *v;
                let var = self.b.func().var(v);
                if var.kind == VarKind::Constant && !var.ty.is_array {
                    return Desig::Value(match var.ty.const_value {
                        Some(c) => Val::Const(c),
                        None => Val::Other,
                    });
                }
                let is_array = var.ty.is_array;
                let var_rank = var.ty.dims.len();
                let is_pointer = var.ty.is_pointer;
                let ty = self.elem_ty(v);
                let derived = self.derived.get(&v).cloned();
                let scalar_whole = !is_array && !is_pointer;
                Desig::Place(Place {
                    target: if is_pointer {
                        AccessTarget::Deref { ptr: Some(v) }
                    } else {
                        AccessTarget::Var(v)
                    },
                    index: IndexKind::Whole,
                    addr_vars: if is_pointer { vec![v] } else { Vec::new() },
                    ty,
                    is_array,
                    derived,
                    base_var: Some(v),
                    whole_var: scalar_whole.then_some(v),
                    path: Vec::new(),
                    section: false,
                    rank: var_rank,
                })
            }
            Binding::Cray { ptr, ty, is_array } => Desig::Place(Place {
                target: AccessTarget::Deref { ptr: Some(*ptr) },
                index: IndexKind::Whole,
                addr_vars: vec![*ptr],
                ty: *ty,
                is_array: *is_array,
                derived: None,
                base_var: None,
                whole_var: None,
                path: Vec::new(),
                section: false,
                rank: 0,
            }),
            Binding::Alias(p) => Desig::Place(p.clone()),
            Binding::Proc(_) => Desig::Value(Val::Other),
        }
    }

    /// Resolves a designator to a place, evaluating its subscripts (their
    /// reads are emitted); a function reference inside it is evaluated.
    pub fn place(&mut self, n: FNode<'t>) -> Desig {
        if !self.enter(n) {
            return Desig::Value(Val::Other);
        }
        let d = self.place_inner(n);
        self.leave();
        d
    }

    fn place_inner(&mut self, n: FNode<'t>) -> Desig {
        let (base, sels) = decompose(n);
        if base.node_kind() != "identifier" {
            return self.place_of_expression(n, base, &sels);
        }
        let binding = match sels.first() {
            Some((Sel::Args(al), call)) => match self.classify_paren(base, *al) {
                ParenKind::Element(b) => b,
                other => return self.place_of_reference(base, *al, *call, other, &sels),
            },
            _ => self.resolve(base),
        };
        let mut p = match self.name_place(&binding) {
            Desig::Place(p) => p,
            Desig::Value(v) => return self.place_of_value(v, &sels),
        };
        for (s, _) in &sels {
            self.apply_sel(&mut p, *s);
        }
        if p.is_array {
            // the whole array (or every element of an array component):
            // its path gets the full ranges when an access is emitted
            p.index = IndexKind::Dynamic;
            p.whole_var = None;
        }
        Desig::Place(p)
    }

    /// A designator whose base is an expression (`(x)%c`, `f()(1:2)`).
    #[inline(never)]
    fn place_of_expression(
        &mut self,
        n: FNode<'t>,
        base: FNode<'t>,
        sels: &[(Sel<'t>, FNode<'t>)],
    ) -> Desig {
        if base != n {
            self.eval(base);
        }
        for (s, _) in sels {
            self.eval_sel(*s);
        }
        Desig::Value(Val::Other)
    }

    /// `name(args)...` that is not an array element.
    #[inline(never)]
    fn place_of_reference(
        &mut self,
        base: FNode<'t>,
        al: FNode<'t>,
        call: FNode<'t>,
        kind: ParenKind,
        sels: &[(Sel<'t>, FNode<'t>)],
    ) -> Desig {
        let span = self.cx.span_bytes(base.start_byte(), al.end_byte());
        let v = self.reference(base, al, call, kind, span);
        for (s, _) in sels.iter().skip(1) {
            self.eval_sel(*s);
        }
        Desig::Value(if sels.len() == 1 { v } else { Val::Other })
    }

    /// A name that is a value (named constant, procedure) with selectors.
    #[inline(never)]
    fn place_of_value(&mut self, v: Val, sels: &[(Sel<'t>, FNode<'t>)]) -> Desig {
        for (s, _) in sels {
            self.eval_sel(*s);
        }
        Desig::Value(if sels.is_empty() { v } else { Val::Other })
    }

    /// Evaluates the expressions inside a selector (when the designator is
    /// not a variable).
    fn eval_sel(&mut self, s: Sel<'t>) {
        match s {
            Sel::Args(n) | Sel::Coarray(n) => self.eval_children(n),
            Sel::Comp(_) => {}
        }
    }

    /// Applies one selector to a place, evaluating subscripts.
    fn apply_sel(&mut self, p: &mut Place, s: Sel<'t>) {
        p.whole_var = None;
        match s {
            Sel::Args(al) => self.apply_args(p, al),
            Sel::Comp(m) => self.apply_comp(p, m),
            Sel::Coarray(ci) => {
                self.eval_children(ci);
                p.index = IndexKind::Dynamic;
                p.path.push(crate::ir::Sel::Unknown);
            }
        }
    }

    /// `(...)` on a place: one selector per subscript, in order.
    #[inline(never)]
    fn apply_args(&mut self, p: &mut Place, al: FNode<'t>) {
        // subscripts of a section (an associate name for `a(1, :)`) select
        // within its ranges: which elements is not followed
        let within = (p.section && !p.is_array).then(|| {
            let from = p
                .path
                .iter()
                .rposition(|s| matches!(s, crate::ir::Sel::Field(_)))
                .map_or(0, |i| i + 1);
            for s in &mut p.path[from..] {
                if matches!(s, crate::ir::Sel::Range { .. }) {
                    *s = crate::ir::Sel::Unknown;
                }
            }
            p.path.len()
        });
        self.collectors.push(Vec::new());
        let mut dynamic = false;
        for a in named_kids(al) {
            let sel = match a.node_kind() {
                "comment" => continue,
                "extent_specifier" => {
                    p.section = true;
                    self.section_triplet(a)
                }
                "assumed_size" | "assumed_shape" | "assumed_rank" => {
                    p.section = true;
                    crate::ir::Sel::Range {
                        lo: None,
                        hi: None,
                        step: None,
                    }
                }
                "multiple_subscript_triplet" | "multiple_subscript" | "keyword_argument" => {
                    self.eval_children(a);
                    crate::ir::Sel::Unknown
                }
                _ => {
                    let lookup = |s: &str| self.const_of(s);
                    let constant = scope::fold(self.cx, a, &lookup).is_some();
                    let sel = self.subscript(p, a);
                    if constant && matches!(sel, crate::ir::Sel::Index(_)) {
                        p.path.push(sel);
                        continue;
                    }
                    sel
                }
            };
            dynamic = true;
            p.path.push(sel);
        }
        if let Some(len) = within {
            p.path.truncate(len);
        }
        let addr = self.collectors.pop().unwrap_or_default();
        for v in addr {
            if !p.addr_vars.contains(&v) {
                p.addr_vars.push(v);
            }
        }
        p.index = max_index(
            p.index,
            if dynamic {
                IndexKind::Dynamic
            } else {
                IndexKind::Const
            },
        );
        // an element, or a section (`section` says which)
        p.is_array = false;
    }

    /// A section subscript `lo:hi:step`: each part evaluated, in order.
    fn section_triplet(&mut self, a: FNode<'t>) -> crate::ir::Sel {
        let parts = scope::triplet(a);
        let mut es = [None, None, None];
        for (k, part) in parts.iter().enumerate() {
            if let Some(x) = part {
                self.eval(*x);
                es[k] = Some(self.last_expr);
            }
        }
        let [lo, hi, step] = es;
        crate::ir::Sel::Range { lo, hi, step }
    }

    /// A subscript that is not a constant: its value, or `Sel::Unknown` for
    /// an array-valued one (a vector subscript selects any elements).
    fn subscript(&mut self, p: &mut Place, a: FNode<'t>) -> crate::ir::Sel {
        let outer = std::mem::replace(&mut self.array_read, false);
        self.eval(a);
        let vector = std::mem::replace(&mut self.array_read, outer);
        if vector {
            p.section = true;
            crate::ir::Sel::Unknown
        } else {
            crate::ir::Sel::Index(self.last_expr)
        }
    }

    /// `%name` on a place.
    #[inline(never)]
    fn apply_comp(&mut self, p: &mut Place, m: FNode<'t>) {
        if p.is_array {
            // a component of every element of an array
            p.index = IndexKind::Dynamic;
            whole_array(&mut p.path, p.rank);
            p.section = true;
        }
        let name = self.cx.lname(m);
        let comp = p.derived.as_deref().and_then(|t| {
            self.scopes
                .find_type(self.scope, t)
                .and_then(|td| td.components.get(&name))
                .cloned()
        });
        p.path.push(crate::ir::Sel::Field(name.into_boxed_str()));
        p.index = max_index(p.index, IndexKind::Const);
        match comp {
            Some(c) => {
                p.ty = c.ty.scalar();
                p.is_array = c.is_array;
                p.rank = c.rank;
                p.derived = c.ty.derived_name().map(str::to_string);
                if c.pointer {
                    // the selection goes on in the memory it points to
                    p.target = AccessTarget::Deref { ptr: None };
                    p.path.clear();
                }
            }
            None => {
                p.ty = ScalarTy::Unknown;
                p.is_array = false;
                p.derived = None;
            }
        }
    }

    /// `name(...)` with a name the file does not declare, taken to come
    /// from a module in another file (`Function::undeclared_references`),
    /// when it has arguments (`f()` is no array element).
    fn undeclared_reference(&mut self, name: &str, al: FNode<'t>) {
        if !al.named_children().any(|a| a.node_kind() != "comment") {
            return;
        }
        let refs = &mut self.b.func_mut().undeclared_references;
        if let Err(k) = refs.binary_search_by(|n| n.as_str().cmp(name)) {
            refs.insert(k, name.to_string());
        }
    }

    /// What `name(...)` is (`al`: its argument list), from the
    /// declarations.
    fn classify_paren(&mut self, base: FNode<'t>, al: FNode<'t>) -> ParenKind {
        let name = self.cx.lname_ref(base);
        if is_builtin_name(&name) {
            return ParenKind::Builtin;
        }
        let binding = match self.lookup(&name).cloned() {
            Some(b) => Some(b),
            None => {
                // host/module entity: only an array (or character) one makes
                // this an element
                match self.scopes.find_outer(self.scope, &name) {
                    Some(f) => {
                        let d = &self.scopes.scopes[f.scope].decls[f.decl];
                        if d.proc_kind.is_none()
                            && (d.is_array()
                                || matches!(
                                    d.ty,
                                    Some(scope::TypeSpec::Char) | Some(scope::TypeSpec::Derived(_))
                                ))
                        {
                            self.resolve_outer(&name)
                        } else {
                            d.proc_kind.map(Binding::Proc)
                        }
                    }
                    None => None,
                }
            }
        };
        match binding {
            Some(Binding::Var(v)) => {
                let var = self.b.func().var(v);
                if var.ty.is_array
                    || var.ty.scalar == ScalarTy::Char
                    || var.ty.pointee == ScalarTy::Char && var.ty.is_pointer
                    || self.derived.contains_key(&v)
                    || var.kind == VarKind::Constant
                {
                    ParenKind::Element(Binding::Var(v))
                } else if intrinsic_function(&name).is_some() && Some(v) != self.result_var {
                    ParenKind::Intrinsic(intrinsic_function(&name).unwrap_or(IntrinsicClass::Value))
                } else {
                    if self.b.func().declared_elsewhere.contains(&v) {
                        self.undeclared_reference(&name, al);
                    }
                    ParenKind::Call
                }
            }
            Some(b @ (Binding::Cray { .. } | Binding::Alias(_))) => ParenKind::Element(b),
            Some(Binding::Proc(k)) => match k {
                ProcKind::External => ParenKind::Call,
                ProcKind::Intrinsic => {
                    ParenKind::Intrinsic(intrinsic_function(&name).unwrap_or(IntrinsicClass::Value))
                }
                ProcKind::StatementFunction | ProcKind::Constructor => ParenKind::Pure,
            },
            None => match self.scopes.find_proc(self.scope, &name) {
                Some(ProcKind::External) => ParenKind::Call,
                Some(ProcKind::StatementFunction | ProcKind::Constructor) => ParenKind::Pure,
                Some(ProcKind::Intrinsic) | None => match intrinsic_function(&name) {
                    Some(c) => ParenKind::Intrinsic(c),
                    // module data from another file that the file shows
                    // to be an array (assigned to, or given a section)
                    None if self.assume_external && self.scopes.array_used.contains(&*name) => {
                        ParenKind::Element(self.resolve(base))
                    }
                    // an array of such a module, or a function: a call
                    // whose findings say both
                    None if self.assume_external => {
                        self.undeclared_reference(&name, al);
                        ParenKind::Call
                    }
                    None => ParenKind::Call,
                },
            },
        }
    }

    /// A procedure reference `name(args)` in an expression.
    fn reference(
        &mut self,
        base: FNode<'t>,
        al: FNode<'t>,
        call: FNode<'t>,
        kind: ParenKind,
        span: Span,
    ) -> Val {
        let args: Vec<FNode<'t>> = al
            .named_children()
            .filter(|a| a.node_kind() != "comment")
            .collect();
        match kind {
            ParenKind::Builtin => Val::Builtin(self.builtin(base, Some(al), span, false)),
            ParenKind::Intrinsic(class) => {
                let mut exprs = Vec::new();
                for a in &args {
                    let e = keyword_value(*a);
                    match class {
                        IntrinsicClass::Value => {
                            self.eval(e);
                            exprs.push(self.last_expr);
                        }
                        IntrinsicClass::Inquiry => {
                            if is_designator(e.node_kind()) {
                                self.place(e);
                            } else {
                                self.eval(e);
                            }
                        }
                        IntrinsicClass::Address => {
                            if is_designator(e.node_kind()) {
                                if let Desig::Place(p) = self.place(e) {
                                    if let Some(v) = p.base_var {
                                        let var = &mut self.b.func_mut().vars[v.index()];
                                        var.address_taken = true;
                                        var.only_passed = false;
                                    }
                                }
                            } else {
                                self.eval(e);
                            }
                        }
                    }
                }
                let name = self.cx.lname_ref(base);
                if !positional(self.cx, &args, &name) {
                    exprs.clear();
                }
                self.ref_expr = intrinsic_expr(&name, &exprs).map(|(op, a, rest)| {
                    rest.iter()
                        .fold(a, |acc, r| self.b.expr(Expr::Bin(op, acc, *r)))
                });
                self.folded(call)
            }
            ParenKind::Pure => {
                for a in &args {
                    self.eval(keyword_value(*a));
                }
                Val::Other
            }
            ParenKind::Call | ParenKind::Element(_) => {
                let mut escapes = Vec::new();
                self.call_args(al, &mut escapes);
                let name = self.cx.lname(base);
                self.push_call(Some(name), self.span(base), escapes, span);
                Val::Other
            }
        }
    }

    /// Actual arguments of a call: variables (and elements, sections,
    /// components) are passed by reference and escape; other expressions are
    /// evaluated into temporaries.
    pub fn call_args(&mut self, al: FNode<'t>, escapes: &mut Vec<VarId>) {
        for a in named_kids(al) {
            if a.node_kind() == "comment" {
                continue;
            }
            self.actual_arg(keyword_value(a), Some(escapes));
        }
    }

    /// [`Self::call_args`], also describing each argument as a
    /// [`CallArg`] (for the effect summaries of same-file callees).
    pub fn call_args_described(
        &mut self,
        al: FNode<'t>,
        escapes: &mut Vec<VarId>,
        args: &mut Vec<CallArg>,
    ) {
        for a in named_kids(al) {
            if a.node_kind() == "comment" {
                continue;
            }
            let keyword = (a.node_kind() == "keyword_argument")
                .then(|| a.field(F::Name).map(|k| self.cx.lname(k).into_boxed_str()))
                .flatten();
            let e = keyword_value(a);
            let arg = match self.actual_arg(e, Some(escapes)) {
                Some(p) => match (p.target, p.base_var) {
                    (AccessTarget::Var(v), Some(b)) if v == b => CallArg::Ref {
                        var: v,
                        path: p.path.to_vec(),
                        keyword,
                    },
                    _ => CallArg::Other {
                        keyword,
                        value: None,
                    },
                },
                None => CallArg::Other {
                    keyword,
                    // (`actual_arg` evaluated it)
                    value: (!is_designator(e.node_kind())).then_some(self.last_expr),
                },
            };
            args.push(arg);
        }
    }

    /// One actual argument (see [`Self::call_args`]); the place it names,
    /// when it is a designator.
    pub fn actual_arg(&mut self, e: FNode<'t>, escapes: Option<&mut Vec<VarId>>) -> Option<Place> {
        if is_designator(e.node_kind()) {
            if !self.enter(e) {
                return None;
            }
            let mut out = None;
            if let Desig::Place(p) = self.place(e) {
                if let (Some(v), Some(esc)) = (p.base_var, escapes) {
                    if self.b.func().var(v).kind != VarKind::Constant {
                        esc.push(v);
                    }
                }
                out = Some(p);
            }
            self.leave();
            out
        } else {
            self.eval(e);
            None
        }
    }

    /// The place an associate name stands for, when the selector is a
    /// variable (subscripts evaluated now).
    pub fn alias_place(&mut self, sel: FNode<'t>) -> Option<Place> {
        if !is_designator(sel.node_kind()) {
            return None;
        }
        match self.place(sel) {
            Desig::Place(p) => Some(p),
            Desig::Value(_) => None,
        }
    }

    // -----------------------------------------------------------------
    // CSA builtins

    /// A call to `builtin_csa_*`: recorded as a builtin (never also as a
    /// call). `span` is the whole CALL statement (`statement`) or the
    /// function reference.
    pub fn builtin(
        &mut self,
        name: FNode<'t>,
        al: Option<FNode<'t>>,
        span: Span,
        statement: bool,
    ) -> BuiltinId {
        let mut args = Vec::new();
        for a in al.map(named_kids).unwrap_or_default() {
            if a.node_kind() == "comment" {
                continue;
            }
            let e = keyword_value(a);
            let value = self.builtin_arg(e);
            if value == ArgValue::Other {
                self.actual_arg(e, None);
            }
            args.push(BuiltinArg {
                value,
                span: self.span(a),
            });
        }
        let written = self.cx.text(name).trim().to_string();
        self.b.add_builtin(BuiltinCall {
            kind: BuiltinKind::from_name(&written).unwrap_or(BuiltinKind::Other),
            name: written,
            span,
            statement,
            name_span: self.span(name),
            args,
            block: Function::ENTRY,
            result: None,
        })
    }

    fn builtin_arg(&mut self, e: FNode<'t>) -> ArgValue {
        let lookup = |s: &str| self.const_of(s);
        if let Some(c) = scope::fold(self.cx, e, &lookup) {
            return ArgValue::Int(c);
        }
        match e.node_kind() {
            "string_literal" => ArgValue::Str(unquote(self.cx.text(e))),
            "identifier" => match self.resolve(e) {
                Binding::Var(v) if self.b.func().var(v).kind != VarKind::Constant => {
                    ArgValue::Var(v)
                }
                _ => ArgValue::Other,
            },
            _ => ArgValue::Other,
        }
    }
}

/// Whether the operands of a modelled intrinsic are in the order it takes
/// them: `mod(p=n, a=i)` is `i % n` (the other modelled intrinsics
/// commute).
fn positional(cx: &super::Cx, args: &[FNode], name: &str) -> bool {
    if name != "mod" {
        return true;
    }
    args.iter().zip(["a", "p"]).all(|(a, kw)| {
        a.node_kind() != "keyword_argument" || a.field(F::Name).is_some_and(|n| cx.lname(n) == kw)
    })
}

/// Appends the selection of every element of an array of rank `rank`
/// (0: not known): one full range per dimension, or `Sel::Unknown`.
fn whole_array(path: &mut Path, rank: usize) {
    if rank == 0 {
        path.push(crate::ir::Sel::Unknown);
    }
    for _ in 0..rank {
        path.push(crate::ir::Sel::Range {
            lo: None,
            hi: None,
            step: None,
        });
    }
}

/// A Fortran binary operator (lower case, `.lt.` or `<` spelling) as a
/// [`BinOp`]; `**` and `//` are not modelled.
fn fortran_binop(op: &str) -> Option<BinOp> {
    Some(match op.trim() {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        ".and." => BinOp::LogAnd,
        ".or." => BinOp::LogOr,
        "<" | ".lt." => BinOp::Cmp(Cmp::Lt),
        "<=" | ".le." => BinOp::Cmp(Cmp::Le),
        ">" | ".gt." => BinOp::Cmp(Cmp::Gt),
        ">=" | ".ge." => BinOp::Cmp(Cmp::Ge),
        "/=" | ".ne." => BinOp::Cmp(Cmp::Ne),
        "==" | ".eq." => BinOp::Eq,
        _ => return None,
    })
}

/// The operator of an elemental integer intrinsic the expressions model,
/// with its first argument and the others: `mod(a, b)` is `a % b`,
/// `max(a, b, c)` is `max(max(a, b), c)`.
fn intrinsic_expr(name: &str, args: &[ExprId]) -> Option<(BinOp, ExprId, Vec<ExprId>)> {
    let op = match name {
        "mod" => BinOp::Rem,
        "min" | "min0" | "amin1" | "dmin1" => BinOp::Min,
        "max" | "max0" | "amax1" | "dmax1" => BinOp::Max,
        "iand" => BinOp::BitAnd,
        "ior" => BinOp::BitOr,
        "ieor" => BinOp::BitXor,
        _ => return None,
    };
    let (first, rest) = args.split_first()?;
    if rest.is_empty() || op == BinOp::Rem && rest.len() != 1 {
        return None;
    }
    Some((op, *first, rest.to_vec()))
}

/// The contents of a Fortran character literal (`'it''s'` -> `it's`), with
/// an optional kind prefix (`c_"x"`).
fn unquote(text: &str) -> String {
    let Some(start) = text.find(['\'', '"']) else {
        return text.to_string();
    };
    let q = text[start..].chars().next().unwrap_or('\'');
    let body = &text[start + 1..];
    let body = body.strip_suffix(q).unwrap_or(body);
    let doubled: String = [q, q].iter().collect();
    body.replace(&doubled, &q.to_string())
}

#[cfg(test)]
mod tests {
    use super::unquote;

    #[test]
    fn unquotes() {
        assert_eq!(unquote("'abc'"), "abc");
        assert_eq!(unquote("'it''s'"), "it's");
        assert_eq!(unquote("\"a\"\"b\""), "a\"b");
        assert_eq!(unquote("c_'x'"), "x");
    }
}
