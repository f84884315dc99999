//! Expressions and conditions: accesses in evaluation order, calls,
//! builtins, and the short-circuit branching of `&&`, `||`, `!` and `?:`.

use super::consts::{
    binop, parse_char_literal, parse_int_literal, string_literal_value, strip_parens, unop,
};
use super::lower::{is_expression_kind, is_noreturn, FnLowerer, Ident};
use super::types::{CType, Layer};
use super::{named_children, span, MacroKind};
use crate::frontend::fields::{CFields, F};
use crate::ir::builder::FunctionBuilder;
use crate::ir::*;
use crate::source::Span;
use crate::frontend::flat::FNode as Node;

/// An lvalue: what an access reads or writes.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub target: AccessTarget,
    pub index: IndexKind,
    pub addr_vars: Vec<VarId>,
    /// The type of the designated object.
    pub ctype: CType,
    /// The selectors from the root (`Access::path`).
    pub path: Path,
    /// For a place reached through a pointer: the pointer's value as read
    /// (`Read` of the root pointer variable), for the address `&p[k]`.
    pub root_expr: Option<ExprId>,
}

impl Place {
    pub fn whole(v: VarId, ctype: CType) -> Place {
        Place {
            target: AccessTarget::Var(v),
            index: IndexKind::Whole,
            addr_vars: Vec::new(),
            ctype,
            path: Vec::new(),
            root_expr: None,
        }
    }
}

/// What a value is, as far as token flow and builtin arguments care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    Const(i64),
    /// The unchanged value of a plain variable.
    Var(VarId),
    Builtin(BuiltinId),
    Other,
}

/// An rvalue with what we know about where it points.
#[derive(Clone, Debug)]
pub(crate) struct Rv {
    pub val: Val,
    pub ty: Option<CType>,
    /// A pointer value derived from this pointer variable (`p`, `p + i`,
    /// `p++`, `(T *)p`).
    pub ptr_root: Option<VarId>,
    /// A pointer value that is the address of (an element of) this object
    /// (`&x`, an array name, `&a[i]`, `a + 1`).
    pub addr_of: Option<Place>,
    /// Variables in the pointer arithmetic applied to the root.
    pub off_vars: Vec<VarId>,
    /// Every offset applied so far is a compile-time constant.
    pub off_static: bool,
    pub has_offset: bool,
    /// The value as a symbolic expression (an integer, or for a pointer
    /// its address: `AddrOf(a) + k`, `Read(p) + k`).
    pub expr: ExprId,
    /// For a pointer derived from `ptr_root` or an address of `addr_of`:
    /// the element offset added so far (`None`: nothing added).
    pub off_expr: Option<ExprId>,
    /// The value of `ptr_root` as read (its `Read` expression).
    pub root_expr: Option<ExprId>,
}

impl Rv {
    /// The address of a place reached through pointer `ptr` (`&p[i]`, an
    /// array member of `*p` decaying): `ptr` plus the place's offset.
    pub fn pointer_into(place: &Place, ptr: Option<VarId>, ty: CType) -> Rv {
        let mut off_vars = place.addr_vars.clone();
        off_vars.retain(|v| Some(*v) != ptr);
        // `&p[k]`: the offset is the place's one subscript
        let off_expr = match place.path.as_slice() {
            [Sel::Index(k)] => Some(*k),
            [] => None,
            _ => Some(FunctionBuilder::UNKNOWN),
        };
        Rv {
            ptr_root: ptr,
            root_expr: place.root_expr,
            off_vars,
            off_expr,
            off_static: place.index != IndexKind::Dynamic,
            has_offset: place.index != IndexKind::Whole,
            ..Rv::new(Val::Other, Some(ty))
        }
    }

    pub fn new(val: Val, ty: Option<CType>) -> Rv {
        Rv {
            val,
            ty,
            ptr_root: None,
            addr_of: None,
            off_vars: Vec::new(),
            off_static: true,
            has_offset: false,
            expr: FunctionBuilder::UNKNOWN,
            off_expr: None,
            root_expr: None,
        }
    }

    /// An integer constant.
    pub fn int(c: i64, ty: Option<CType>, expr: ExprId) -> Rv {
        Rv {
            expr,
            ..Rv::new(Val::Const(c), ty)
        }
    }

    pub fn other() -> Rv {
        Rv::new(Val::Other, None)
    }

    fn is_ptrish(&self) -> bool {
        self.addr_of.is_some()
            || self.ptr_root.is_some()
            || self
                .ty
                .as_ref()
                .is_some_and(|t| t.is_pointer() || t.is_array())
    }
}

pub(crate) enum Operand {
    Lv(Place),
    Rv(Rv),
}

fn combine(index: IndexKind, is_static: bool) -> IndexKind {
    match (index, is_static) {
        (IndexKind::Dynamic, _) | (_, false) => IndexKind::Dynamic,
        _ => IndexKind::Const,
    }
}

fn dedup(v: &mut Vec<VarId>) {
    if v.len() <= 32 {
        // The usual handful: a linear check beats building a hash set.
        let mut kept = 0;
        for i in 0..v.len() {
            let x = v[i];
            if !v[..kept].contains(&x) {
                v[kept] = x;
                kept += 1;
            }
        }
        v.truncate(kept);
        return;
    }
    let mut seen = std::collections::HashSet::new();
    v.retain(|x| seen.insert(*x));
}

/// An evaluated subscript or pointer offset.
pub(crate) struct Index {
    /// Constant, or an unrolled induction variable.
    pub is_static: bool,
    /// The variables it reads.
    pub vars: Vec<VarId>,
    pub expr: ExprId,
}

/// Builtins that only pass their first argument through.
fn is_transparent_builtin(name: &str) -> bool {
    matches!(
        name,
        "__builtin_expect"
            | "__builtin_expect_with_probability"
            | "__builtin_assume_aligned"
            | "__builtin_unpredictable"
    )
}

/// Builtins clang answers at compile time without evaluating their
/// arguments (a constant, or `llvm.objectsize`): no code, no memory.
fn is_unevaluated_builtin(name: &str) -> bool {
    matches!(
        name,
        "__builtin_constant_p"
            | "__builtin_classify_type"
            | "__builtin_object_size"
            | "__builtin_dynamic_object_size"
    )
}

impl<'t> FnLowerer<'_, 't> {
    /// Evaluates an expression for its value and uses it.
    pub fn value(&mut self, e: Node<'_>) -> Val {
        let rv = self.rvalue(e);
        self.consume(rv)
    }

    /// Evaluates an expression to an rvalue (loads lvalues, decays arrays)
    /// without using it yet.
    pub fn rvalue(&mut self, e: Node<'_>) -> Rv {
        let op = self.operand(e);
        self.load(op, e)
    }

    /// Uses a value: an object whose address it is becomes address-taken
    /// and is logged as escaping.
    pub fn consume(&mut self, rv: Rv) -> Val {
        if let Some(Place {
            target: AccessTarget::Var(v),
            ..
        }) = rv.addr_of
        {
            self.mark_addr(v);
            self.escape_log.push(v);
        }
        rv.val
    }

    /// Loads an operand: reads an lvalue (arrays decay without an access).
    #[inline(never)]
    fn load(&mut self, op: Operand, at: Node<'_>) -> Rv {
        let place = match op {
            Operand::Rv(rv) => return rv,
            Operand::Lv(p) => p,
        };
        if place.ctype.is_array() {
            let elem = place.ctype.clone().peel();
            let ty = elem.clone().wrap(Layer::Ptr { restrict: false });
            // the array decays to the address of its element 0
            let zero = self.b.expr(Expr::Int(0));
            return match place.target {
                AccessTarget::Var(v) => {
                    let mut p = place;
                    p.index = combine(p.index, true);
                    p.ctype = elem;
                    p.path.push(Sel::Index(zero));
                    let expr = if p.path.len() == 1 {
                        self.b.expr(Expr::AddrOf(v))
                    } else {
                        FunctionBuilder::UNKNOWN
                    };
                    Rv {
                        addr_of: Some(p),
                        expr,
                        ..Rv::new(Val::Other, Some(ty))
                    }
                }
                AccessTarget::Deref { ptr } => {
                    let mut p = place;
                    p.path.push(Sel::Index(zero));
                    let mut rv = Rv::pointer_into(&p, ptr, ty);
                    rv.expr = self.pointer_expr(&rv);
                    rv
                }
            };
        }
        if place.ctype.is_func() {
            return Rv::new(Val::Other, Some(place.ctype));
        }
        let at_ref = self.emit_access(false, &place, None, self.sp(at));
        let expr = self.b.expr(Expr::Read(at_ref));
        let (val, ptr_root) = match (&place.target, place.index) {
            (AccessTarget::Var(v), IndexKind::Whole) => {
                let ptr = (place.ctype.is_pointer() || place.ctype.is_unknown()).then_some(*v);
                (Val::Var(*v), ptr)
            }
            _ => (Val::Other, None),
        };
        Rv {
            ptr_root,
            root_expr: ptr_root.map(|_| expr),
            expr,
            ..Rv::new(val, Some(place.ctype))
        }
    }

    /// Emits an access; returns where it went.
    pub fn emit_access(
        &mut self,
        write: bool,
        place: &Place,
        value: Option<ValueSrc>,
        sp: Span,
    ) -> InstRef {
        self.emit_access_rhs(write, place, value, None, sp)
    }

    /// Emits an access with the value a whole-variable (or array element)
    /// write stores.
    pub fn emit_access_rhs(
        &mut self,
        write: bool,
        place: &Place,
        value: Option<ValueSrc>,
        rhs: Option<ExprId>,
        sp: Span,
    ) -> InstRef {
        let mut addr_vars = place.addr_vars.clone();
        dedup(&mut addr_vars);
        let whole_var =
            matches!(place.target, AccessTarget::Var(_)) && place.index == IndexKind::Whole;
        let value = if write && whole_var {
            Some(value.unwrap_or(ValueSrc::Other))
        } else {
            None
        };
        let ty = place.ctype.class();
        // the value stored: in a whole variable, or in an element of a
        // named array
        let element = matches!(place.target, AccessTarget::Var(v) if self.b.func().var(v).ty.is_array)
            && !place.path.is_empty()
            && place
                .path
                .iter()
                .all(|s| matches!(s, crate::ir::Sel::Index(_)));
        let rhs = if write && (whole_var || element) {
            Some(rhs.unwrap_or(FunctionBuilder::UNKNOWN))
        } else {
            None
        };
        let at = self.b.push_at(
            InstKind::Access(Access {
                write,
                target: place.target.clone(),
                index: place.index,
                addr_vars,
                ty,
                value,
                path: place.path.clone(),
                rhs,
            }),
            sp,
        );
        if !write {
            if let AccessTarget::Var(v) = place.target {
                self.read_log.push(v);
            }
        }
        at
    }

    /// A whole-place store of a value (with its source for token flow and
    /// its symbolic value).
    pub fn store_whole(&mut self, place: &Place, val: Val, rhs: ExprId, sp: Span) {
        let src = match val {
            Val::Const(c) => ValueSrc::Const(c),
            Val::Var(u) => ValueSrc::Copy(u),
            Val::Builtin(id) => ValueSrc::Builtin(id),
            Val::Other => ValueSrc::Other,
        };
        self.emit_access_rhs(true, place, Some(src), Some(rhs), sp);
        if let (Val::Builtin(id), AccessTarget::Var(v), IndexKind::Whole) =
            (val, &place.target, place.index)
        {
            if let Some(b) = self.b.func_mut().builtins.get_mut(id.index()) {
                b.result.get_or_insert(*v);
            }
        }
    }

    /// An expression beyond the nesting bound: an opaque call.
    fn opaque(&mut self, e: Node<'_>) {
        self.b.push(
            InstKind::Call(Call {
                callee: None,
                name_span: self.sp(e),
                escapes: Vec::new(),
                args: Vec::new(),
            }),
            self.sp(e),
        );
    }

    /// Evaluates an expression to an lvalue or rvalue (depth-bounded).
    pub fn operand(&mut self, e: Node<'_>) -> Operand {
        if self.too_deep() {
            self.opaque(e);
            return Operand::Rv(Rv::other());
        }
        self.depth += 1;
        let r = self.operand_inner(e);
        self.depth -= 1;
        r
    }

    /// Dispatches on the expression kind. Every arm is its own function so
    /// that the frames on a deep recursion stay small (also unoptimised).
    fn operand_inner(&mut self, e: Node<'_>) -> Operand {
        match e.node_kind() {
            "identifier" => self.ident_operand(e),
            "number_literal"
            | "char_literal"
            | "true"
            | "false"
            | "null"
            | "string_literal"
            | "concatenated_string" => Operand::Rv(self.literal(e)),
            "parenthesized_expression" => self.paren_operand(e),
            "subscript_expression" => self.subscript(e),
            "field_expression" => self.field(e),
            "pointer_expression" => self.pointer_operand(e),
            "unary_expression" => Operand::Rv(self.unary(e)),
            "binary_expression" => self.binary(e),
            "assignment_expression" => Operand::Rv(self.assignment(e)),
            "update_expression" => Operand::Rv(self.update(e)),
            "call_expression" => Operand::Rv(self.call(e)),
            "cast_expression" => Operand::Rv(self.cast(e)),
            "sizeof_expression" | "alignof_expression" | "offsetof_expression" => {
                Operand::Rv(Rv::new(Val::Other, Some(CType::int())))
            }
            "conditional_expression" => Operand::Rv(self.conditional_value(e)),
            "comma_expression" => self.comma_operand(e),
            "compound_literal_expression" => Operand::Rv(self.compound_literal(e)),
            "initializer_list" => Operand::Rv(self.init_list(e)),
            "gnu_asm_expression" => Operand::Rv(self.asm(e)),
            "extension_expression" => self.extension_operand(e),
            "generic_expression" | "preproc_defined" => Operand::Rv(Rv::other()),
            _ => Operand::Rv(self.unknown_expr(e)),
        }
    }

    #[inline(never)]
    fn ident_operand(&mut self, e: Node<'_>) -> Operand {
        if e.is_missing() || e.start_byte() == e.end_byte() {
            return Operand::Rv(Rv::other());
        }
        let name = self.text(e);
        match self.resolve_ident(name, e) {
            Ident::Var(v) => Operand::Lv(Place::whole(v, self.ctype(v))),
            Ident::Const(c) => {
                let expr = self.b.expr(Expr::Int(c));
                Operand::Rv(Rv::int(c, Some(CType::int()), expr))
            }
            Ident::Func => {
                let ty = self.file.functions.get(name).cloned();
                Operand::Rv(Rv::new(Val::Other, ty))
            }
            Ident::Opaque => {
                Operand::Rv(self.macro_builtin(e, name, None).unwrap_or_else(Rv::other))
            }
        }
    }

    #[inline(never)]
    fn literal(&mut self, e: Node<'_>) -> Rv {
        let c = match e.node_kind() {
            "number_literal" => match parse_int_literal(self.text(e)) {
                Some(c) => Some(c),
                None => return Rv::new(Val::Other, Some(CType::scalar(ScalarTy::Double))),
            },
            "char_literal" => match parse_char_literal(self.text(e)) {
                Some(c) => Some(c),
                None => return Rv::other(),
            },
            "true" => Some(1),
            "false" | "null" => Some(0),
            _ => None,
        };
        match c {
            Some(c) => {
                let expr = self.b.expr(Expr::Int(c));
                Rv::int(c, Some(CType::int()), expr)
            }
            None => {
                let mut rv = Rv::new(
                    Val::Other,
                    Some(CType::scalar(ScalarTy::Char).wrap(Layer::Ptr { restrict: false })),
                );
                if let Some(s) = self.string_value(e) {
                    rv.expr = self.b.expr(Expr::Str(s.into()));
                }
                rv
            }
        }
    }

    #[inline(never)]
    fn paren_operand(&mut self, e: Node<'_>) -> Operand {
        let kids: Vec<Node> = named_children(e)
            .into_iter()
            .filter(|c| c.node_kind() != "comment")
            .collect();
        match kids.as_slice() {
            [c] if c.node_kind() == "compound_statement" => {
                // GNU statement expression
                self.stmt(*c);
                Operand::Rv(Rv::other())
            }
            [c] => self.operand(*c),
            _ => {
                for c in kids {
                    let _ = self.value(c);
                }
                Operand::Rv(Rv::other())
            }
        }
    }

    #[inline(never)]
    fn pointer_operand(&mut self, e: Node<'_>) -> Operand {
        let Some(arg) = e.field(F::Argument) else {
            return Operand::Rv(Rv::other());
        };
        if self.op_text(e) == "&" {
            Operand::Rv(self.address_of(arg))
        } else {
            let p = self.rvalue(arg);
            Operand::Lv(self.deref(p, None))
        }
    }

    #[inline(never)]
    fn unary(&mut self, e: Node<'_>) -> Rv {
        let op = self.op_text(e);
        let Some(arg) = e.field(F::Argument) else {
            return Rv::other();
        };
        let rv = self.rvalue(arg);
        let (ty, aexpr) = (rv.ty.clone(), rv.expr);
        match self.consume(rv) {
            Val::Const(c) => match unop(op, c) {
                Some(r) => {
                    let expr = self.b.expr(Expr::Int(r));
                    Rv::int(r, Some(CType::int()), expr)
                }
                None => Rv::other(),
            },
            _ => match op {
                "-" => {
                    let expr = self.b.expr(Expr::Neg(aexpr));
                    Rv {
                        expr,
                        ..Rv::new(Val::Other, ty)
                    }
                }
                "+" => Rv {
                    expr: aexpr,
                    ..Rv::new(Val::Other, ty)
                },
                _ => Rv::other(),
            },
        }
    }

    #[inline(never)]
    fn cast(&mut self, e: Node<'_>) -> Rv {
        let ty = e.field(F::Type).map(|t| self.descriptor_type(t));
        let Some(v) = e.field(F::Value) else {
            return Rv::other();
        };
        let mut r = self.rvalue(v);
        if let Some(ty) = ty {
            if !matches!(
                ty.class(),
                ScalarTy::Int | ScalarTy::Char | ScalarTy::Pointer
            ) {
                if matches!(r.val, Val::Const(_)) {
                    r.val = Val::Other;
                }
                // a conversion to floating point: not an integer any more
                // (the value still matters to reductions: keep reads)
                if !matches!(self.b.func().expr(r.expr), Expr::Read(_)) {
                    r.expr = FunctionBuilder::UNKNOWN;
                }
            }
            r.ty = Some(ty);
        }
        r
    }

    #[inline(never)]
    fn comma_operand(&mut self, e: Node<'_>) -> Operand {
        if let Some(l) = e.field(F::Left) {
            let _ = self.value(l);
        }
        match e.field(F::Right) {
            Some(r) => self.operand(r),
            None => Operand::Rv(Rv::other()),
        }
    }

    #[inline(never)]
    fn compound_literal(&mut self, e: Node<'_>) -> Rv {
        if let Some(v) = e.field(F::Value) {
            let _ = self.value(v);
        }
        let ty = e.field(F::Type).map(|t| self.descriptor_type(t));
        Rv::new(Val::Other, ty)
    }

    #[inline(never)]
    fn init_list(&mut self, e: Node<'_>) -> Rv {
        for c in named_children(e) {
            match c.node_kind() {
                "initializer_pair" => {
                    if let Some(v) = c.field(F::Value) {
                        let _ = self.value(v);
                    }
                }
                "comment" => {}
                _ => {
                    let _ = self.value(c);
                }
            }
        }
        Rv::other()
    }

    #[inline(never)]
    fn extension_operand(&mut self, e: Node<'_>) -> Operand {
        match named_children(e).into_iter().next() {
            Some(c) => self.operand(c),
            None => Operand::Rv(Rv::other()),
        }
    }

    /// ERROR nodes and anything unexpected: evaluate what looks like an
    /// expression or a statement.
    #[inline(never)]
    fn unknown_expr(&mut self, e: Node<'_>) -> Rv {
        for c in named_children(e) {
            if is_expression_kind(c.node_kind()) {
                let _ = self.value(c);
            } else if matches!(c.node_kind(), "compound_statement" | "ERROR") {
                self.stmt(c);
            }
        }
        Rv::other()
    }

    /// The type named by a `type_descriptor` (casts, compound literals).
    fn descriptor_type(&self, t: Node<'_>) -> CType {
        let base = t
            .field(F::Type)
            .map(|s| self.file.spec_type(s))
            .unwrap_or_else(CType::unknown);
        match t.field(F::Declarator) {
            Some(d) => self.file.apply_declarator(d, base).0,
            None => base,
        }
    }

    /// Evaluates an index expression: whether it is static (constant or an
    /// unrolled induction variable) and the variables it reads.
    fn index_expr(&mut self, idx: Node<'_>) -> Index {
        let is_static = self.is_static_index(idx, 0);
        let mark = self.read_log.len();
        let rv = self.rvalue(idx);
        let expr = rv.expr;
        let _ = self.consume(rv);
        let mut vars = self.read_log[mark.min(self.read_log.len())..].to_vec();
        dedup(&mut vars);
        Index {
            is_static,
            vars,
            expr,
        }
    }

    /// `a + b` (or `a - b`) as an expression, folding zeros.
    /// The address of an element of named object `v` (`&a`, `&a[k]`) as an
    /// expression; multi-dimensional and field paths are not described.
    fn address_expr(&mut self, v: VarId, path: &[Sel]) -> ExprId {
        let base = self.b.expr(Expr::AddrOf(v));
        match path {
            [] => base,
            [Sel::Index(k)] => self.add_expr(base, *k, false),
            _ => FunctionBuilder::UNKNOWN,
        }
    }

    /// A pointer into the memory behind a pointer variable (`&p[k]`): the
    /// variable's value as read plus the offset.
    fn pointer_expr(&mut self, rv: &Rv) -> ExprId {
        match (rv.root_expr, rv.off_expr) {
            (Some(r), None) => r,
            (Some(r), Some(k)) if self.b.func().expr(k) != &Expr::Unknown => {
                self.add_expr(r, k, false)
            }
            _ => FunctionBuilder::UNKNOWN,
        }
    }

    pub fn add_expr(&mut self, a: ExprId, b: ExprId, sub: bool) -> ExprId {
        if self.b.func().expr(b) == &Expr::Int(0) {
            return a;
        }
        if !sub && self.b.func().expr(a) == &Expr::Int(0) {
            return b;
        }
        let op = if sub { BinOp::Sub } else { BinOp::Add };
        self.b.expr(Expr::Bin(op, a, b))
    }

    /// Adds `off` to the last subscript of a path (pointer arithmetic on
    /// the address of an element).
    fn offset_path(&mut self, path: &mut Path, off: ExprId, sub: bool) {
        match path.last().cloned() {
            Some(Sel::Index(e)) => {
                let n = self.add_expr(e, off, sub);
                if let Some(last) = path.last_mut() {
                    *last = Sel::Index(n);
                }
            }
            _ => path.push(Sel::Unknown),
        }
    }

    /// Whether an index is known at compile time after full unrolling.
    fn is_static_index(&self, e: Node<'_>, depth: u32) -> bool {
        if depth > 200 {
            return false;
        }
        let d = depth + 1;
        match e.node_kind() {
            "number_literal"
            | "char_literal"
            | "true"
            | "false"
            | "sizeof_expression"
            | "alignof_expression"
            | "offsetof_expression" => true,
            "identifier" => {
                if self.const_value(e).is_some() {
                    return true;
                }
                let name = self.text(e);
                !self.file.is_object_macro(name, e.start_byte())
                    && self
                        .lookup(name)
                        .is_some_and(|v| self.unrolled_ivs.contains(&v))
            }
            "parenthesized_expression" => {
                e.named_child_count() == 1
                    && e.named_child(0).is_some_and(|c| self.is_static_index(c, d))
            }
            "unary_expression" => e
                .field(F::Argument)
                .is_some_and(|c| self.is_static_index(c, d)),
            "binary_expression" => {
                e.field(F::Left).is_some_and(|c| self.is_static_index(c, d))
                    && e.field(F::Right)
                        .is_some_and(|c| self.is_static_index(c, d))
            }
            "conditional_expression" => [F::Condition, F::Consequence, F::Alternative]
                .iter()
                .all(|&f| e.field(f).is_none_or(|c| self.is_static_index(c, d))),
            "cast_expression" => e
                .field(F::Value)
                .is_some_and(|c| self.is_static_index(c, d)),
            _ => false,
        }
    }

    /// Dereferences a pointer value, optionally at an index.
    #[inline(never)]
    fn deref(&mut self, rv: Rv, index: Option<Index>) -> Place {
        let pointee = match &rv.ty {
            Some(t) if t.is_pointer() || t.is_array() => t.clone().peel(),
            _ => CType::unknown(),
        };
        let (has_index, idx_static, idx_vars, idx_expr) = match index {
            Some(ix) => (true, ix.is_static, ix.vars, Some(ix.expr)),
            None => (false, true, Vec::new(), None),
        };
        let has_offset = rv.has_offset || has_index;
        let off_static = rv.off_static && idx_static;
        if let Some(mut p) = rv.addr_of {
            if has_offset {
                p.index = combine(p.index, off_static);
            }
            if let Some(ix) = idx_expr {
                if p.path.is_empty() {
                    p.path.push(Sel::Index(ix));
                } else {
                    self.offset_path(&mut p.path, ix, false);
                }
            }
            p.addr_vars.extend(rv.off_vars);
            p.addr_vars.extend(idx_vars);
            dedup(&mut p.addr_vars);
            if rv.ty.is_some() {
                p.ctype = pointee;
            }
            return p;
        }
        let mut addr_vars: Vec<VarId> = rv.ptr_root.into_iter().collect();
        addr_vars.extend(rv.off_vars);
        addr_vars.extend(idx_vars);
        dedup(&mut addr_vars);
        let zero = self.b.expr(Expr::Int(0));
        let sub = match (rv.off_expr, idx_expr) {
            (Some(o), Some(i)) => self.add_expr(o, i, false),
            (Some(o), None) => o,
            (None, Some(i)) => i,
            (None, None) => zero,
        };
        Place {
            path: vec![Sel::Index(sub)],
            root_expr: rv.root_expr,
            target: AccessTarget::Deref { ptr: rv.ptr_root },
            index: if !has_offset {
                IndexKind::Whole
            } else if off_static {
                IndexKind::Const
            } else {
                IndexKind::Dynamic
            },
            addr_vars,
            ctype: pointee,
        }
    }

    #[inline(never)]
    fn subscript(&mut self, e: Node<'_>) -> Operand {
        let [Some(base_e), Some(idx_e)] = e.fields_of([F::Argument, F::Index]) else {
            for c in named_children(e) {
                let _ = self.value(c);
            }
            return Operand::Rv(Rv::other());
        };
        match self.operand(base_e) {
            Operand::Lv(mut place) if place.ctype.is_array() || place.ctype.is_unknown() => {
                let ix = self.index_expr(idx_e);
                place.index = combine(place.index, ix.is_static);
                place.addr_vars.extend(ix.vars);
                place.path.push(Sel::Index(ix.expr));
                place.ctype = if place.ctype.is_array() {
                    place.ctype.peel()
                } else {
                    CType::unknown()
                };
                Operand::Lv(place)
            }
            other => {
                let rv = self.load(other, base_e);
                let idx = self.index_expr(idx_e);
                Operand::Lv(self.deref(rv, Some(idx)))
            }
        }
    }

    #[inline(never)]
    fn field(&mut self, e: Node<'_>) -> Operand {
        let [arg, fname, op] = e.fields_of([F::Argument, F::Field, F::Operator]);
        let Some(arg) = arg else {
            return Operand::Rv(Rv::other());
        };
        let fname = fname.map(|f| self.text(f)).unwrap_or("");
        let arrow = op.is_some_and(|o| self.text(o) == "->");
        let mut place = if arrow {
            let rv = self.rvalue(arg);
            self.deref(rv, None)
        } else {
            match self.operand(arg) {
                Operand::Lv(p) => p,
                Operand::Rv(r) => {
                    let ty = r.ty.and_then(|t| self.file.field_type(&t, fname));
                    return Operand::Rv(Rv::new(Val::Other, ty));
                }
            }
        };
        place.index = combine(place.index, true);
        place.path.push(Sel::Field(fname.into()));
        place.ctype = self
            .file
            .field_type(&place.ctype, fname)
            .unwrap_or_else(CType::unknown);
        Operand::Lv(place)
    }

    #[inline(never)]
    fn address_of(&mut self, arg: Node<'_>) -> Rv {
        match self.operand(arg) {
            Operand::Lv(place) => {
                let ty = place.ctype.clone().wrap(Layer::Ptr { restrict: false });
                match place.target {
                    AccessTarget::Var(v) => {
                        self.mark_addr(v);
                        let expr = self.address_expr(v, &place.path);
                        Rv {
                            addr_of: Some(place),
                            expr,
                            ..Rv::new(Val::Other, Some(ty))
                        }
                    }
                    AccessTarget::Deref { ptr } => {
                        let mut rv = Rv::pointer_into(&place, ptr, ty);
                        rv.expr = self.pointer_expr(&rv);
                        rv
                    }
                }
            }
            Operand::Rv(r) => Rv::new(
                Val::Other,
                r.ty.map(|t| t.wrap(Layer::Ptr { restrict: false })),
            ),
        }
    }

    fn op_text(&self, e: Node<'_>) -> &'t str {
        e.field(F::Operator).map(|o| self.text(o)).unwrap_or("")
    }

    /// Binary operators. A left-deep chain of arithmetic (`a + b + c + ...`)
    /// is evaluated iteratively, left to right.
    #[inline(never)]
    fn binary(&mut self, e: Node<'_>) -> Operand {
        let [l, op, r] = e.fields_of([F::Left, F::Operator, F::Right]);
        let op = op.map_or("", |o| self.text(o));
        let (Some(l), Some(r)) = (l, r) else {
            for c in named_children(e) {
                let _ = self.value(c);
            }
            return Operand::Rv(Rv::other());
        };
        if op == "&&" || op == "||" {
            return Operand::Rv(self.logical_value(e, l, r, op == "&&"));
        }
        // the left spine: (left, operator, right) of each binary expression
        let mut spine = vec![(l, op, r)];
        let mut innermost_left = l;
        while innermost_left.node_kind() == "binary_expression" {
            let [xl, xop, xr] = innermost_left.fields_of([F::Left, F::Operator, F::Right]);
            let xop = xop.map_or("", |o| self.text(o));
            let (Some(xl), Some(xr)) = (xl, xr) else {
                break;
            };
            if matches!(xop, "&&" | "||" | "") {
                break;
            }
            spine.push((xl, xop, xr));
            innermost_left = xl;
        }
        let mark = self.read_log.len();
        let mut acc = self.rvalue(innermost_left);
        for (xl, op, xr) in spine.into_iter().rev() {
            let lvars = self.read_log[mark.min(self.read_log.len())..].to_vec();
            acc = self.binary_step(acc, lvars, xl, xr, op);
        }
        Operand::Rv(acc)
    }

    /// `lv OP r`, where `lv` (the value of `l`, which read `lvars`) is
    /// already evaluated.
    #[inline(never)]
    fn binary_step(&mut self, lv: Rv, lvars: Vec<VarId>, l: Node<'_>, r: Node<'_>, op: &str) -> Rv {
        let rm = self.read_log.len();
        let rv = self.rvalue(r);
        let rvars = self.read_log[rm.min(self.read_log.len())..].to_vec();
        if op == "+" || op == "-" {
            let (lp, rp) = (lv.is_ptrish(), rv.is_ptrish());
            if lp && !rp {
                let st = self.is_static_index(r, 0);
                let off = rv.expr;
                let _ = self.consume(rv);
                let mut out = lv;
                self.offset_pointer(&mut out, off, op == "-");
                out.val = Val::Other;
                out.has_offset = true;
                out.off_static &= st;
                out.off_vars.extend(rvars);
                if let Some(t) = out.ty.take() {
                    out.ty = Some(t.decay());
                }
                return out;
            }
            if rp && !lp && op == "+" {
                let st = self.is_static_index(l, 0);
                let off = lv.expr;
                let _ = self.consume(lv);
                let mut out = rv;
                self.offset_pointer(&mut out, off, false);
                out.val = Val::Other;
                out.has_offset = true;
                out.off_static &= st;
                out.off_vars.extend(lvars);
                if let Some(t) = out.ty.take() {
                    out.ty = Some(t.decay());
                }
                return out;
            }
        }
        let (le, re) = (lv.expr, rv.expr);
        let a = self.consume(lv);
        let b = self.consume(rv);
        let val = match (a, b) {
            (Val::Const(x), Val::Const(y)) => binop(op, x, y).map_or(Val::Other, Val::Const),
            _ => Val::Other,
        };
        let expr = match (val, BinOp::from_c(op).or_else(|| BinOp::from_c_cmp(op))) {
            (Val::Const(c), _) => self.b.expr(Expr::Int(c)),
            (_, Some(bop)) => self.b.expr(Expr::Bin(bop, le, re)),
            _ => FunctionBuilder::UNKNOWN,
        };
        Rv {
            expr,
            ..Rv::new(val, Some(CType::int()))
        }
    }

    /// Pointer arithmetic `p + off` / `p - off`: the value, and the offset
    /// into the object or from the root pointer.
    fn offset_pointer(&mut self, out: &mut Rv, off: ExprId, sub: bool) {
        out.expr = match self.b.func().expr(out.expr) {
            Expr::Unknown => FunctionBuilder::UNKNOWN,
            _ => self.add_expr(out.expr, off, sub),
        };
        if let Some(p) = out.addr_of.as_mut() {
            let mut path = std::mem::take(&mut p.path);
            self.offset_path(&mut path, off, sub);
            if let Some(p) = out.addr_of.as_mut() {
                p.path = path;
            }
        } else {
            let base = out.off_expr.unwrap_or_else(|| self.b.expr(Expr::Int(0)));
            out.off_expr = Some(self.add_expr(base, off, sub));
        }
    }

    /// `a && b` / `a || b` as a value: `land.rhs`/`land.end`
    /// (`lor.rhs`/`lor.end`), branching unless the left operand is a
    /// constant: clang's `VisitBinLAnd`/`VisitBinLOr` emit `1 && X` and
    /// `0 || X` as X alone, and `0 && X` / `1 || X` as the constant without
    /// X.
    #[inline(never)]
    fn logical_value(&mut self, e: Node<'_>, l: Node<'_>, r: Node<'_>, is_and: bool) -> Rv {
        let sp = self.sp(e);
        if let Some(c) = self.const_value(l) {
            if (c != 0) == is_and {
                let rv = self.rvalue(r);
                let _ = self.consume(rv);
                return Rv::new(Val::Other, Some(CType::int()));
            }
            let v = i64::from(!is_and);
            let expr = self.b.expr(Expr::Int(v));
            return Rv::int(v, Some(CType::int()), expr);
        }
        let (rhs_name, end_name) = if is_and {
            ("land.rhs", "land.end")
        } else {
            ("lor.rhs", "lor.end")
        };
        let rhs_b = self.b.new_block(rhs_name, Some(sp));
        let end_b = self.b.new_block(end_name, Some(sp));
        self.last_cond = None;
        let conds_before = self.cond_count;
        if is_and {
            self.cond(Some(l), rhs_b, end_b, self.sp(l), false);
        } else {
            self.cond(Some(l), end_b, rhs_b, self.sp(l), false);
        }
        // the left operand's value, when one branch tested it
        let left = self
            .last_cond
            .filter(|_| self.cond_count == conds_before + 1);
        self.b.set_current(Some(rhs_b));
        let rv = self.rvalue(r);
        let right = rv.expr;
        let _ = self.consume(rv);
        self.b.goto_if_open(end_b);
        self.b.set_current(Some(end_b));
        let mut out = Rv::new(Val::Other, Some(CType::int()));
        // its symbolic value (evaluation order is the CFG's)
        if let Some(left) = left.filter(|e| *e != FunctionBuilder::UNKNOWN) {
            if right != FunctionBuilder::UNKNOWN {
                let op = if is_and { BinOp::LogAnd } else { BinOp::LogOr };
                out.expr = self.b.expr(Expr::Bin(op, left, right));
            }
        }
        out
    }

    /// `c ? x : y` as a value: `cond.true`/`cond.false`/`cond.end`, as
    /// clang's `VisitAbstractConditionalOperator` emits it: a constant
    /// condition emits the chosen arm alone, and arms that are both
    /// constant expressions (`isCheapEnoughToEvaluateUnconditionally`:
    /// `c ? 4 : 5`) make a `select` instead of branches. Any other arm, a
    /// variable included, branches.
    #[inline(never)]
    fn conditional_value(&mut self, e: Node<'_>) -> Rv {
        let sp = self.sp(e);
        let c = e.field(F::Condition);
        let (x, y) = (e.field(F::Consequence), e.field(F::Alternative));
        if let (Some(c), Some(x), Some(y)) = (c, x, y) {
            if let Some(v) = self.const_value(c) {
                let rv = self.rvalue(if v != 0 { x } else { y });
                return rv;
            }
            if self.evaluatable(x) && self.evaluatable(y) {
                let rv = self.rvalue(c);
                let cond = rv.expr;
                let _ = self.consume(rv);
                let (tv, fv) = (self.rvalue(x), self.rvalue(y));
                let (then, else_) = (tv.expr, fv.expr);
                let _ = self.consume(tv);
                let _ = self.consume(fv);
                let mut rv = Rv::other();
                if ![cond, then, else_].contains(&FunctionBuilder::UNKNOWN) {
                    rv.expr = self.b.expr(Expr::Select { cond, then, else_ });
                }
                return rv;
            }
        }
        let t = self.b.new_block("cond.true", Some(sp));
        let f = self.b.new_block("cond.false", Some(sp));
        let end = self.b.new_block("cond.end", Some(sp));
        let csp = c.map(span).unwrap_or(sp);
        let entry = self.b.current();
        self.cond(c, t, f, csp, false);
        self.b.set_current(Some(t));
        let x = e.field(F::Consequence).map(|x| {
            let rv = self.rvalue(x);
            let id = rv.expr;
            let _ = self.consume(rv);
            id
        });
        self.b.goto_if_open(end);
        self.b.set_current(Some(f));
        let y = e.field(F::Alternative).map(|y| {
            let rv = self.rvalue(y);
            let id = rv.expr;
            let _ = self.consume(rv);
            id
        });
        self.b.goto_if_open(end);
        self.b.set_current(Some(end));
        // the value of a `?:` whose condition is one branch between its
        // arms (not `&&`/`||`, which branch several times)
        let test = entry
            .and_then(|b| self.b.func().blocks.get(b.index()))
            .and_then(|b| match b.term.kind {
                TermKind::Branch { then, else_ } if then == t && else_ == f => Some(b.term.cond),
                _ => None,
            });
        let mut rv = Rv::other();
        if let (Some(Some(cond)), Some(then), Some(else_)) = (test, x, y) {
            if then != FunctionBuilder::UNKNOWN && else_ != FunctionBuilder::UNKNOWN {
                rv.expr = self.b.expr(Expr::Select { cond, then, else_ });
            }
        }
        rv
    }

    /// Whether clang can evaluate `e` as a constant (`Expr::isEvaluatable`):
    /// literals (numbers, characters, strings) and operators, casts and
    /// `sizeof` over them, named constants.
    fn evaluatable(&self, e: Node<'_>) -> bool {
        // A constant folds whole (`3 + (1 ? 2 : y)`); below the top, the
        // operators are followed down to their leaves, each a constant:
        // folding every subexpression again at every level cost time
        // quadratic in the expression (DataRaceBench's nested `?:` loop
        // bounds).
        self.const_value(e).is_some() || self.evaluatable_at(e, 0)
    }

    /// Whether `e` is made of evaluatable leaves by the operators that keep
    /// an expression evaluatable.
    fn evaluatable_at(&self, e: Node<'_>, depth: u32) -> bool {
        if depth > 64 {
            return false;
        }
        let sub = |f: F| {
            e.field(f)
                .is_some_and(|n| self.evaluatable_at(n, depth + 1))
        };
        match e.node_kind() {
            "number_literal"
            | "char_literal"
            | "string_literal"
            | "concatenated_string"
            | "true"
            | "false"
            | "sizeof_expression" => true,
            "parenthesized_expression" => e
                .named_child(0)
                .is_some_and(|n| self.evaluatable_at(n, depth + 1)),
            "unary_expression" => {
                matches!(self.op_text(e), "-" | "+" | "~" | "!") && sub(F::Argument)
            }
            "cast_expression" => sub(F::Value),
            "binary_expression" => sub(F::Left) && sub(F::Right),
            "conditional_expression" => {
                sub(F::Condition) && sub(F::Consequence) && sub(F::Alternative)
            }
            // a name (a macro, an enumerator, a `const`), a builtin call
            _ => self.const_value(e).is_some(),
        }
    }

    /// Branches on a condition like clang's `EmitBranchOnBoolExpr`.
    /// `fold`: a constant condition becomes an unconditional jump.
    pub fn cond(&mut self, e: Option<Node<'_>>, t: BlockId, f: BlockId, sp: Span, fold: bool) {
        let Some(e) = e else {
            self.b
                .terminate(TermKind::Branch { then: t, else_: f }, Some(sp));
            return;
        };
        if self.too_deep() {
            self.opaque(e);
            self.b
                .terminate(TermKind::Branch { then: t, else_: f }, Some(sp));
            return;
        }
        self.depth += 1;
        self.cond_inner(e, t, f, sp, fold);
        self.depth -= 1;
    }

    /// A `while` or `do` condition. Unlike `for` and `if` (clang's
    /// `EmitBranchOnBoolExpr`), clang's `EmitWhileStmt`/`EmitDoStmt` evaluate
    /// the condition as a value (`EvaluateExprAsBool`: `&&`/`||` become
    /// `land.rhs`/`land.end` blocks that merge) and branch once from the
    /// merge block. A constant condition folds to a jump.
    pub fn cond_as_value(&mut self, e: Option<Node<'_>>, t: BlockId, f: BlockId, sp: Span) {
        if let Some(e) = e.map(strip_parens) {
            if let Some(c) = self.const_value(e) {
                let target = if c != 0 { t } else { f };
                self.b.terminate(TermKind::Goto(target), Some(sp));
                return;
            }
            let _ = self.value(e);
        }
        self.b
            .terminate(TermKind::Branch { then: t, else_: f }, Some(sp));
    }

    #[inline(never)]
    fn cond_inner(&mut self, e: Node<'_>, t: BlockId, f: BlockId, sp: Span, fold: bool) {
        let e = strip_parens(e);
        if fold {
            if let Some(c) = self.const_value(e) {
                let target = if c != 0 { t } else { f };
                self.b.terminate(TermKind::Goto(target), Some(sp));
                return;
            }
        }
        let done = match e.node_kind() {
            "binary_expression" => self.cond_logical(e, t, f, sp),
            "unary_expression" => self.cond_not(e, t, f, sp),
            "conditional_expression" => self.cond_ternary(e, t, f, sp),
            _ => false,
        };
        if !done {
            self.cond_value(e, t, f, sp);
        }
    }

    #[inline(never)]
    fn cond_value(&mut self, e: Node<'_>, t: BlockId, f: BlockId, sp: Span) {
        let rv = self.rvalue(e);
        self.last_cond = Some(rv.expr);
        self.cond_count += 1;
        let cond = rv.expr;
        let _ = self.consume(rv);
        self.b.branch(t, f, Some(cond), Some(sp));
    }

    #[inline(never)]
    fn cond_logical(&mut self, e: Node<'_>, t: BlockId, f: BlockId, sp: Span) -> bool {
        let op = self.op_text(e);
        let (l, r) = (e.field(F::Left), e.field(F::Right));
        if let (Some(l), Some(r), "&&" | "||") = (l, r, op) {
            self.cond_chain(e, l, r, op == "&&", t, f, sp);
            return true;
        }
        false
    }

    #[inline(never)]
    fn cond_not(&mut self, e: Node<'_>, t: BlockId, f: BlockId, sp: Span) -> bool {
        if self.op_text(e) != "!" {
            return false;
        }
        match e.field(F::Argument) {
            Some(a) => {
                self.cond(Some(a), f, t, sp, true);
                true
            }
            None => false,
        }
    }

    #[inline(never)]
    fn cond_ternary(&mut self, e: Node<'_>, t: BlockId, f: BlockId, sp: Span) -> bool {
        let c = e.field(F::Condition);
        let x = e.field(F::Consequence);
        let y = e.field(F::Alternative);
        let (Some(c), Some(x), Some(y)) = (c, x, y) else {
            return false;
        };
        let ct = self.b.new_block("cond.true", Some(self.sp(e)));
        let cf = self.b.new_block("cond.false", Some(self.sp(e)));
        self.cond(Some(c), ct, cf, sp, true);
        self.b.set_current(Some(ct));
        self.cond(Some(x), t, f, sp, true);
        self.b.set_current(Some(cf));
        self.cond(Some(y), t, f, sp, true);
        true
    }

    /// `a && b && c ...` (or `||`) as a condition: the left-deep spine of
    /// the same operator is flattened, each operand branching on its own
    /// (`land.lhs.true` / `lor.lhs.false` in between). Constant operands
    /// that cannot decide the result are dropped, like clang's
    /// `br(1 && X) -> br(X)`.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn cond_chain(
        &mut self,
        e: Node<'_>,
        l: Node<'_>,
        r: Node<'_>,
        is_and: bool,
        t: BlockId,
        f: BlockId,
        sp: Span,
    ) {
        let op = if is_and { "&&" } else { "||" };
        // operands in evaluation order
        let mut rights = vec![r];
        let mut cur = l;
        loop {
            let s = strip_parens(cur);
            if s.node_kind() != "binary_expression" || self.op_text(s) != op {
                break;
            }
            match (s.field(F::Left), s.field(F::Right)) {
                (Some(sl), Some(sr)) => {
                    rights.push(sr);
                    cur = sl;
                }
                _ => break,
            }
        }
        rights.push(cur);
        rights.reverse();
        // `(x != 0) == is_and`: the operand cannot decide the result
        let neutral = |v: Option<i64>| v.is_some_and(|v| (v != 0) == is_and);
        let kept: Vec<Node> = rights
            .into_iter()
            .filter(|x| !neutral(self.const_value(*x)))
            .collect();
        let Some((last, init)) = kept.split_last() else {
            // every operand is neutral: so is the whole condition
            let target = if is_and { t } else { f };
            self.b.terminate(TermKind::Goto(target), Some(sp));
            return;
        };
        for x in init {
            let name = if is_and {
                "land.lhs.true"
            } else {
                "lor.lhs.false"
            };
            let mid = self.b.new_block(name, Some(self.sp(e)));
            if is_and {
                self.cond(Some(*x), mid, f, sp, true);
            } else {
                self.cond(Some(*x), t, mid, sp, true);
            }
            self.b.set_current(Some(mid));
        }
        self.cond(Some(*last), t, f, sp, true);
    }

    #[inline(never)]
    fn assignment(&mut self, e: Node<'_>) -> Rv {
        let [l, op, r] = e.fields_of([F::Left, F::Operator, F::Right]);
        let op = op.map(|o| self.text(o)).unwrap_or("=");
        let (Some(l), Some(r)) = (l, r) else {
            for c in named_children(e) {
                let _ = self.value(c);
            }
            return Rv::other();
        };
        // the right-hand side first, then the address of the left
        let rv = self.rvalue(r);
        let ptr_root = rv.ptr_root;
        let rexpr = rv.expr;
        let val = self.consume(rv);
        let lhs = self.operand(l);
        let Operand::Lv(place) = lhs else {
            return Rv::other();
        };
        if op == "=" {
            self.store_whole(&place, val, rexpr, self.sp(l));
            Rv {
                ptr_root,
                expr: rexpr,
                ..Rv::new(val, Some(place.ctype))
            }
        } else {
            let old = self.emit_access(false, &place, None, self.sp(l));
            let expr = match BinOp::from_c(op) {
                Some(bop) => {
                    let old = self.b.expr(Expr::Read(old));
                    self.b.expr(Expr::Bin(bop, old, rexpr))
                }
                None => FunctionBuilder::UNKNOWN,
            };
            self.emit_access_rhs(true, &place, Some(ValueSrc::Other), Some(expr), self.sp(l));
            Rv {
                expr,
                ..Rv::new(Val::Other, Some(place.ctype))
            }
        }
    }

    #[inline(never)]
    fn update(&mut self, e: Node<'_>) -> Rv {
        let Some(arg) = e.field(F::Argument) else {
            return Rv::other();
        };
        let op = self.op_text(e);
        let prefix = e.child(0).is_some_and(|c| !c.is_named());
        match self.operand(arg) {
            Operand::Lv(place) => {
                let at = self.emit_access(false, &place, None, self.sp(arg));
                let old = self.b.expr(Expr::Read(at));
                let one = self.b.expr(Expr::Int(1));
                let bop = if op == "--" { BinOp::Sub } else { BinOp::Add };
                let new = self.b.expr(Expr::Bin(bop, old, one));
                self.emit_access_rhs(true, &place, Some(ValueSrc::Other), Some(new), self.sp(arg));
                let expr = if prefix { new } else { old };
                let ptr_root = match (&place.target, place.index) {
                    (AccessTarget::Var(v), IndexKind::Whole) if place.ctype.is_pointer() => {
                        Some(*v)
                    }
                    _ => None,
                };
                Rv {
                    ptr_root,
                    expr,
                    ..Rv::new(Val::Other, Some(place.ctype))
                }
            }
            Operand::Rv(_) => Rv::other(),
        }
    }

    /// The span a call's statement-level instruction gets: the expression
    /// statement when the call is the whole statement.
    fn call_span(&self, e: Node<'_>) -> Span {
        match self.call_stmt {
            Some((id, sp)) if id == e.id() => sp,
            _ => self.sp(e),
        }
    }

    /// Whether the call `e` is the whole of its expression statement.
    fn is_call_stmt(&self, e: Node<'_>) -> bool {
        self.call_stmt.is_some_and(|(id, _)| id == e.id())
    }

    /// Arguments in order; returns the variables whose address escapes.
    fn call_args(&mut self, args: Option<Node<'_>>) -> Vec<VarId> {
        self.call_args_with_values(args, false).0
    }

    /// Evaluates a call's arguments: the variables whose address escapes
    /// and each argument as a [`CallArg`].
    /// The variable an argument names when it is a bare name of a scalar
    /// variable (not an array, a function or a constant).
    fn named_scalar(&mut self, a: Node<'_>) -> Option<VarId> {
        let a = strip_parens(a);
        if a.node_kind() != "identifier" || a.is_missing() {
            return None;
        }
        let Ident::Var(v) = self.resolve_ident(self.text(a), a) else {
            return None;
        };
        let var = self.b.func().var(v);
        (!var.ty.is_array && !var.ty.is_aggregate && var.kind != VarKind::Constant).then_some(v)
    }

    /// The escapes and the arguments of a call. `by_name`: the callee may
    /// be a function-like macro (`library::may_be_macro`), which can assign
    /// a variable it is given by name: such an argument is passed by
    /// reference (`CallArg::Ref`, read as well) rather than by value; its
    /// address is not taken.
    fn call_args_with_values(
        &mut self,
        args: Option<Node<'_>>,
        by_name: bool,
    ) -> (Vec<VarId>, Vec<CallArg>) {
        let mut escapes = Vec::new();
        let mut values = Vec::new();
        let Some(args) = args else {
            return (escapes, values);
        };
        for a in named_children(args) {
            if a.node_kind() == "comment" {
                continue;
            }
            let mark = self.escape_log.len();
            if let Some(var) = by_name.then(|| self.named_scalar(a)).flatten() {
                // (no read here: what the expansion does with it is unknown,
                // and the call counts as reading and assigning it)
                values.push(CallArg::Ref {
                    var,
                    path: Vec::new(),
                    keyword: None,
                });
                continue;
            }
            let rv = self.rvalue(a);
            values.push(match &rv.addr_of {
                Some(Place {
                    target: AccessTarget::Var(v),
                    path,
                    ..
                }) => CallArg::Ref {
                    var: *v,
                    path: path.clone(),
                    keyword: None,
                },
                _ => CallArg::Value(rv.expr),
            });
            let _ = self.consume(rv);
            escapes.extend_from_slice(&self.escape_log[mark.min(self.escape_log.len())..]);
        }
        dedup(&mut escapes);
        (escapes, values)
    }

    #[inline(never)]
    fn call(&mut self, e: Node<'_>) -> Rv {
        let [f, args] = e.fields_of([F::Function, F::Arguments]);
        let Some(f) = f else {
            let _ = self.call_args(args);
            return Rv::other();
        };
        let callee = strip_parens(f);
        if callee.node_kind() == "identifier" && !callee.is_missing() {
            let offset = callee.start_byte();
            let mut name = self.text(callee).to_string();
            let shadowed = self.lookup(&name).is_some();
            if !shadowed && self.file.is_object_macro(&name, offset) {
                // `#define P SPMD` then `P(4)`: the call is one of `SPMD`
                if let Some(alias) = self.file.macro_alias(&name, offset) {
                    name = alias;
                }
            }
            if !shadowed && self.file.is_fn_macro(&name, offset) {
                if let Some(rv) = self.macro_builtin(e, &name, Some((callee, args))) {
                    return rv;
                }
                // a maximum or minimum macro: the value `Max(x, y)`
                if let Some(op) = self.file.extreme_macro(&name, offset) {
                    let vals: Vec<ExprId> = args
                        .map(named_children)
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|a| a.node_kind() != "comment")
                        .map(|a| {
                            let rv = self.rvalue(a);
                            let id = rv.expr;
                            let _ = self.consume(rv);
                            id
                        })
                        .collect();
                    let mut rv = Rv::other();
                    if let [x, y] = vals.as_slice() {
                        if *x != FunctionBuilder::UNKNOWN && *y != FunctionBuilder::UNKNOWN {
                            rv.expr = self.b.expr(Expr::Bin(op, *x, *y));
                        }
                    }
                    return rv;
                }
                // a function-like macro: its arguments are evaluated where
                // the expansion puts them; nothing is called
                let _ = self.call_args(args);
                return Rv::other();
            }
            if name == "_Pragma" || name == "__pragma" {
                // a pragma operator elsewhere than before a loop: no code
                return Rv::other();
            }
            if name.starts_with("__builtin_csa_") {
                return self.builtin_call(e, &name, callee, args);
            }
            if name == "__builtin_prefetch" {
                let _ = self.call_args(args);
                self.b.push(InstKind::Prefetch, self.sp(e));
                return Rv::other();
            }
            if is_unevaluated_builtin(&name) {
                return Rv::other();
            }
            if is_transparent_builtin(&name) {
                let mut first = None;
                if let Some(args) = args {
                    for (i, a) in named_children(args)
                        .into_iter()
                        .filter(|a| a.node_kind() != "comment")
                        .enumerate()
                    {
                        if i == 0 {
                            first = Some(self.rvalue(a));
                        } else {
                            let _ = self.value(a);
                        }
                    }
                }
                return first.unwrap_or_else(Rv::other);
            }
            // a function pointer variable (local, parameter or global)
            let is_var = match self.lookup(&name) {
                Some(v) => self.var_const(v).is_none(),
                None => self
                    .file
                    .globals
                    .get(&name)
                    .is_some_and(|g| g.const_value.is_none() && !g.ctype.is_func()),
            };
            if !is_var {
                let declared = self.file.functions.get(&name).cloned();
                let by_name = declared.is_none()
                    && !self.local_functions.contains(&name)
                    && super::library::may_be_macro(&name);
                let ret = declared.map(|t| t.peel());
                let (escapes, args) = self.call_args_with_values(args, by_name);
                // `fmax(x, y)`: the value `Max(x, y)`
                let extreme = BinOp::of_c_function(&name);
                let value = match (extreme, args.as_slice()) {
                    (Some(op), [CallArg::Value(x), CallArg::Value(y)])
                        if *x != FunctionBuilder::UNKNOWN && *y != FunctionBuilder::UNKNOWN =>
                    {
                        Some(self.b.expr(Expr::Bin(op, *x, *y)))
                    }
                    _ => None,
                };
                self.b.push(
                    InstKind::Call(Call {
                        callee: Some(name.clone()),
                        name_span: self.sp(callee),
                        escapes,
                        args,
                    }),
                    self.sp(e),
                );
                if is_noreturn(&name) {
                    let sp = self.call_span(e);
                    self.b.terminate(TermKind::Unreachable, Some(sp));
                }
                let mut rv = Rv::new(Val::Other, ret);
                if let Some(v) = value {
                    rv.expr = v;
                }
                return rv;
            }
        }
        // a call through a function pointer
        let fv = self.rvalue(f);
        let ret = fv.ty.clone().map(|t| {
            let t = if t.is_pointer() { t.peel() } else { t };
            t.peel()
        });
        let _ = self.consume(fv);
        let escapes = self.call_args(args);
        self.b.push(
            InstKind::Call(Call {
                callee: None,
                name_span: self.sp(f),
                escapes,
                args: Vec::new(),
            }),
            self.sp(e),
        );
        Rv::new(Val::Other, ret)
    }

    #[inline(never)]
    fn builtin_call(
        &mut self,
        e: Node<'_>,
        name: &str,
        name_node: Node<'_>,
        args: Option<Node<'_>>,
    ) -> Rv {
        let mut bargs = Vec::new();
        if let Some(args) = args {
            for a in named_children(args) {
                if a.node_kind() == "comment" {
                    continue;
                }
                let value = self.builtin_arg(a);
                bargs.push(BuiltinArg {
                    value,
                    span: self.sp(a),
                });
            }
        }
        let kind = BuiltinKind::from_name(name).unwrap_or(BuiltinKind::Other);
        let id = self.b.add_builtin(BuiltinCall {
            kind,
            name: name.to_string(),
            span: self.call_span(e),
            statement: self.is_call_stmt(e),
            name_span: self.sp(name_node),
            args: bargs,
            block: BlockId(0),
            result: None,
        });
        Rv::new(Val::Builtin(id), Some(CType::int()))
    }

    #[inline(never)]
    /// A macro whose body is one CSA builtin call, used at `use_node` (an
    /// identifier, or a call of a function-like macro with its name node and
    /// arguments): lowered as that builtin at the use site. Arguments that
    /// are macro parameters take the actual arguments' values.
    fn macro_builtin(
        &mut self,
        use_node: Node<'_>,
        name: &str,
        call: Option<(Node<'_>, Option<Node<'_>>)>,
    ) -> Option<Rv> {
        let offset = use_node.start_byte();
        // `#define MY_PAR PAR` and `#define PAR __builtin_csa_...()`
        let alias = match call {
            None => self.file.macro_alias(name, offset),
            Some(_) => None,
        };
        let name = alias.as_deref().unwrap_or(name);
        let (params, body) = match &self.file.macro_at(name, offset)?.kind {
            MacroKind::Object { body } if call.is_none() => (Vec::new(), body.clone()),
            MacroKind::Function { params, body } if call.is_some() => {
                (params.clone(), body.clone())
            }
            _ => return None,
        };
        let (builtin, arg_texts) = super::builtin_in_macro(&body)?;
        let actuals: Vec<Node> = call
            .and_then(|(_, a)| a)
            .map(|a| {
                named_children(a)
                    .into_iter()
                    .filter(|c| c.node_kind() != "comment")
                    .collect()
            })
            .unwrap_or_default();
        let name_span = call.map(|(n, _)| self.sp(n)).unwrap_or_else(|| self.sp(use_node));
        let mut args = Vec::new();
        for t in &arg_texts {
            let mut t = t.as_str();
            while let Some(inner) = t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
                if !super::balanced(inner) {
                    break;
                }
                t = inner.trim();
            }
            let actual = params
                .iter()
                .position(|p| p == t)
                .and_then(|i| actuals.get(i).copied());
            let arg = match actual {
                Some(a) => BuiltinArg {
                    value: self.builtin_arg(a),
                    span: self.sp(a),
                },
                None => BuiltinArg {
                    value: self.macro_arg_text(t, use_node),
                    span: self.sp(use_node),
                },
            };
            args.push(arg);
        }
        let kind = BuiltinKind::from_name(&builtin).unwrap_or(BuiltinKind::Other);
        let id = self.b.add_builtin(BuiltinCall {
            kind,
            name: builtin,
            span: self.call_span(use_node),
            statement: self.is_call_stmt(use_node),
            name_span,
            args,
            block: BlockId(0),
            result: None,
        });
        Some(Rv::new(Val::Builtin(id), Some(CType::int())))
    }

    /// A builtin argument written inside a macro body.
    fn macro_arg_text(&mut self, t: &str, at: Node<'_>) -> ArgValue {
        let toks = super::consts::tokenize(t);
        if let Some(c) = super::consts::eval_tokens(&toks, self, at.start_byte(), 0) {
            return ArgValue::Int(c);
        }
        if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
            return ArgValue::Str(string_literal_value(t));
        }
        if let [super::consts::Tok::Ident(id)] = toks.as_slice() {
            if let Ident::Var(v) = self.resolve_ident(id, at) {
                let place = Place::whole(v, self.ctype(v));
                if !place.ctype.is_array() {
                    self.emit_access(false, &place, None, self.sp(at));
                    return ArgValue::Var(v);
                }
            }
        }
        ArgValue::Other
    }

    /// The value of a string literal (adjacent literals concatenated).
    fn string_value(&self, s: Node<'_>) -> Option<String> {
        match s.node_kind() {
            "string_literal" => Some(string_literal_value(self.text(s))),
            "concatenated_string" => {
                let mut out = String::new();
                for c in named_children(s) {
                    if c.node_kind() == "string_literal" {
                        out.push_str(&string_literal_value(self.text(c)));
                    }
                }
                Some(out)
            }
            _ => None,
        }
    }

    #[inline(never)]
    fn builtin_arg(&mut self, a: Node<'_>) -> ArgValue {
        if let Some(c) = self.const_value(a) {
            return ArgValue::Int(c);
        }
        let s = strip_parens(a);
        if let Some(v) = self.string_value(s) {
            return ArgValue::Str(v);
        }
        if s.node_kind() == "identifier" {
            // a macro that expands to a string literal
            let name = self.text(s);
            if let Some(super::MacroDef {
                kind: MacroKind::Object { body },
                ..
            }) = self.file.macro_at(name, s.start_byte())
            {
                let b = body.trim();
                if b.len() >= 2 && b.starts_with('"') && b.ends_with('"') {
                    return ArgValue::Str(string_literal_value(b));
                }
            }
        }
        let rv = self.rvalue(a);
        match self.consume(rv) {
            Val::Var(v) if s.node_kind() == "identifier" => ArgValue::Var(v),
            _ => ArgValue::Other,
        }
    }

    /// `name(x)` that tree-sitter read as a macro type specifier (error
    /// recovery): a call with one identifier (or type) argument.
    pub fn macro_type_call(&mut self, n: Node<'_>) {
        let Some(name_node) = n.field(F::Name) else {
            return;
        };
        let name = self.text(name_node).to_string();
        let arg = n
            .field(F::Type)
            .filter(|t| t.field(F::Declarator).is_none())
            .and_then(|t| t.field(F::Type))
            .filter(|t| t.node_kind() == "type_identifier" && !self.file.is_typedef(self.text(*t)));
        let mut arg_val = None;
        if let Some(a) = arg {
            let an = self.text(a);
            if let Ident::Var(v) = self.resolve_ident(an, a) {
                let place = Place::whole(v, self.ctype(v));
                if !place.ctype.is_array() {
                    self.emit_access(false, &place, None, self.sp(a));
                    arg_val = Some((ArgValue::Var(v), self.sp(a)));
                }
            }
        }
        if name.starts_with("__builtin_csa_") {
            let kind = BuiltinKind::from_name(&name).unwrap_or(BuiltinKind::Other);
            let args = arg_val
                .map(|(value, span)| vec![BuiltinArg { value, span }])
                .unwrap_or_default();
            self.b.add_builtin(BuiltinCall {
                kind,
                name,
                span: self.sp(n),
                statement: true,
                name_span: self.sp(name_node),
                args,
                block: BlockId(0),
                result: None,
            });
        } else if !self.file.is_fn_macro(&name, n.start_byte()) {
            self.b.push(
                InstKind::Call(Call {
                    callee: Some(name),
                    name_span: self.sp(name_node),
                    escapes: Vec::new(),
                    args: Vec::new(),
                }),
                self.sp(n),
            );
        }
    }

    #[inline(never)]
    fn asm(&mut self, e: Node<'_>) -> Rv {
        if let Some(inputs) = e.field(F::InputOperands) {
            for op in inputs.fields(F::Operand) {
                if let Some(v) = op.field(F::Value) {
                    let _ = self.value(v);
                }
            }
        }
        self.b.push(InstKind::Asm, self.sp(e));
        if let Some(outputs) = e.field(F::OutputOperands) {
            for op in outputs.fields(F::Operand) {
                if let Some(v) = op.field(F::Value) {
                    if let Operand::Lv(p) = self.operand(v) {
                        self.emit_access(true, &p, Some(ValueSrc::Other), self.sp(v));
                    }
                }
            }
        }
        Rv::other()
    }
}
