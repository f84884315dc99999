//! Statements to blocks, in the shape gfortran/DragonEgg produces:
//!
//! * counted `DO`: bounds, step and the loop variable's initial value in
//!   the block before the loop (the preheader); `do.cond` tests the trip
//!   count only (no accesses); `do.body`; `do.inc` (the latch: the loop
//!   variable's update, the `CYCLE` target); `do.end` (the `EXIT` target);
//! * `DO WHILE`: `do.cond` evaluates the condition; the body jumps back;
//! * `DO` without control: `do.body` is the header;
//! * block and logical `IF`: `if.then`, `if.else`, `if.end` (ELSE IF chains
//!   nest); `.and.`/`.or.` do not short-circuit;
//! * `SELECT CASE`/`TYPE`/`RANK`, arithmetic `IF`, computed `GOTO`: a
//!   `Switch`;
//! * every statement label starts a `label` block entered by fallthrough.

use super::scope::{DeclEntry, Implicit, ProcKind, Scope, ScopeKind, Scopes, TypeSpec};
use super::{all_kids, is_preproc_container, named_kids, preproc_body, Cx};
use crate::ir::builder::FunctionBuilder;
use crate::ir::*;
use crate::source::Span;
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

/// Nesting depth (statements and expressions together) beyond which a
/// subtree is lowered as one opaque call and the function is marked with a
/// syntax error.
pub const MAX_DEPTH: usize = 400;

/// What a name means in the current scope.
#[derive(Clone, Debug)]
pub(super) enum Binding {
    Var(VarId),
    Proc(ProcKind),
    /// A Cray pointee: accessed through its pointer.
    Cray {
        ptr: VarId,
        ty: ScalarTy,
        is_array: bool,
    },
    /// An ASSOCIATE / SELECT TYPE associate name.
    Alias(Place),
}

/// An accessed location: the result of evaluating a designator's address.
#[derive(Clone, Debug)]
pub(super) struct Place {
    pub target: AccessTarget,
    pub index: IndexKind,
    pub addr_vars: Vec<VarId>,
    pub ty: ScalarTy,
    /// The object is still array-valued (whole array, section, array
    /// component).
    pub is_array: bool,
    /// Derived type of the object (for component lookup).
    pub derived: Option<String>,
    /// The named variable the designator starts from (what escapes when it
    /// is an actual argument).
    pub base_var: Option<VarId>,
    /// Set when the place is a whole scalar variable (for value tracking).
    pub whole_var: Option<VarId>,
}

#[derive(Clone, Copy, Debug)]
enum ConstructKind {
    Loop { cycle: BlockId, exit: BlockId },
    Other { end: Option<BlockId>, origin: Span },
}

#[derive(Clone, Debug)]
struct Construct {
    name: Option<String>,
    kind: ConstructKind,
}

/// Specification statements: nothing to execute.
fn is_spec_kind(kind: &str) -> bool {
    matches!(
        kind,
        "implicit_statement"
            | "use_statement"
            | "variable_declaration"
            | "variable_modification"
            | "parameter_statement"
            | "common_statement"
            | "save_statement"
            | "data_statement"
            | "equivalence_statement"
            | "cray_pointer_declaration"
            | "interface"
            | "derived_type_definition"
            | "enum"
            | "enumeration_type"
            | "namelist_statement"
            | "public_statement"
            | "private_statement"
            | "bind_statement"
            | "import_statement"
            | "format_statement"
            | "entry_statement"
            | "include_statement"
            | "internal_procedures"
            | "contains_statement"
            | "preproc_include"
            | "preproc_def"
            | "preproc_function_def"
            | "preproc_call"
            | "comment"
    )
}

/// What `lower_unit` needs to know about a program unit.
pub(super) struct UnitInput<'u, 't> {
    pub name: String,
    pub span: Span,
    pub name_span: Span,
    pub header: Option<Node<'t>>,
    pub items: &'u [Node<'t>],
}

/// Lowers one program unit. Also returns the names of host variables it
/// references by host association (the host keeps them in memory).
pub(super) fn lower_unit(
    cx: &Cx,
    scopes: &Scopes,
    scope: usize,
    unit: UnitInput,
) -> (Function, HashSet<String>) {
    let mut l = Lowerer {
        cx,
        scopes,
        scope,
        b: FunctionBuilder::new(unit.name, Lang::Fortran, unit.span, unit.name_span),
        names: vec![HashMap::new()],
        labels: HashMap::new(),
        defined_labels: HashSet::new(),
        constructs: Vec::new(),
        depth: 0,
        host_refs: HashSet::new(),
        shared_terminal: None,
        error: None,
        collectors: Vec::new(),
        entry_decls: 0,
        result_var: None,
        derived: HashMap::new(),
        implicit: scopes.implicit(scope),
        assume_external: scopes.assumes_external_names(scope),
    };
    let header_span = unit.header.map(|h| cx.span(h)).unwrap_or(unit.span);
    l.declare_unit(header_span);
    l.lower_items(unit.items);
    let error = l.error;
    let host_refs = std::mem::take(&mut l.host_refs);
    let mut f = l.b.finish();
    f.syntax_error = error;
    (f, host_refs)
}

pub(super) struct Lowerer<'a, 't> {
    pub cx: &'a Cx<'a>,
    pub scopes: &'a Scopes,
    pub scope: usize,
    pub b: FunctionBuilder,
    /// Name bindings, innermost last; `names[0]` is the unit's.
    pub names: Vec<HashMap<String, Binding>>,
    labels: HashMap<u64, BlockId>,
    defined_labels: HashSet<u64>,
    constructs: Vec<Construct>,
    pub depth: usize,
    /// Host variables referenced by host association (lower case).
    pub host_refs: HashSet<String>,
    /// The terminal statement of a shared-label DO nest, handed from an
    /// outer DO to the inner DO that executes it.
    shared_terminal: Option<Node<'t>>,
    /// A subtree too deep to lower.
    pub error: Option<Span>,
    /// Variables read while evaluating subscripts (address dependencies).
    pub collectors: Vec<Vec<VarId>>,
    /// Number of `Decl`s at the top of the entry block.
    entry_decls: usize,
    pub result_var: Option<VarId>,
    /// Derived type name of variables of derived type.
    pub derived: HashMap<VarId, String>,
    implicit: Implicit,
    /// IMPLICIT NONE or USE in scope: undeclared names are module/host data.
    assume_external: bool,
}

impl<'a, 't> Lowerer<'a, 't> {
    // -----------------------------------------------------------------
    // Helpers

    pub fn span(&self, n: Node) -> Span {
        self.cx.span(n)
    }

    fn unit_scope(&self) -> &'a Scope {
        &self.scopes.scopes[self.scope]
    }

    /// Enters a nesting level; past `MAX_DEPTH` lowers `n` as an opaque call
    /// and returns false.
    pub fn enter(&mut self, n: Node) -> bool {
        if self.depth >= MAX_DEPTH {
            let s = self.span(n);
            self.b.push(
                InstKind::Call(Call {
                    callee: None,
                    name_span: s,
                    escapes: Vec::new(),
                }),
                s,
            );
            if self.error.is_none() {
                self.error = Some(s);
            }
            return false;
        }
        self.depth += 1;
        true
    }

    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Element type class of a variable.
    pub fn elem_ty(&self, v: VarId) -> ScalarTy {
        let var = self.b.func().var(v);
        if var.ty.is_pointer {
            var.ty.pointee
        } else {
            var.ty.scalar
        }
    }

    // -----------------------------------------------------------------
    // Variables

    /// Builds a variable from a declaration.
    fn make_var(&mut self, d: &DeclEntry, kind: VarKind, implicit: &Implicit) -> VarId {
        let ty = d
            .ty
            .clone()
            .or_else(|| implicit.type_of(&d.name))
            .unwrap_or(TypeSpec::Unknown);
        let elem = ty.scalar();
        let mut vt = VarType {
            scalar: elem,
            ..VarType::default()
        };
        if d.pointer {
            vt.is_pointer = true;
            vt.scalar = ScalarTy::Pointer;
            vt.pointee = elem;
        }
        vt.is_array = d.is_array();
        vt.is_vla = d.is_vla() && kind != VarKind::Constant;
        vt.is_aggregate = matches!(ty, TypeSpec::Derived(_)) && !d.is_array() && !d.pointer;
        vt.pointer_or_target = d.pointer || d.target;
        if kind == VarKind::Constant {
            vt.const_value = d.const_value;
        }
        let v = self.b.add_var(Var {
            name: d.name.clone(),
            span: d.span,
            decl_span: d.decl_span,
            kind,
            ty: vt,
            address_taken: d.target || d.equivalenced,
        });
        if let TypeSpec::Derived(n) = ty {
            self.derived.insert(v, n);
        }
        v
    }

    fn push_decl(&mut self, v: VarId, span: Span) {
        self.b.push(InstKind::Decl(v), span);
    }

    /// Creates the unit's variables: dummies, the function result, then
    /// every other declared name in declaration order. Locals get a `Decl`
    /// in the entry block.
    fn declare_unit(&mut self, header_span: Span) {
        let sc = self.unit_scope();
        let implicit = self.implicit.clone();
        for (lname, spelled, span) in &sc.dummies {
            if let Some(&k) = sc.procs.get(lname) {
                self.names[0].insert(lname.clone(), Binding::Proc(k));
                continue;
            }
            let v = match sc.get(lname) {
                Some(d) => self.make_var(d, VarKind::Dummy, &implicit),
                None => {
                    let d = implicit_entry(spelled, *span, header_span);
                    self.make_var(&d, VarKind::Dummy, &implicit)
                }
            };
            self.names[0].insert(lname.clone(), Binding::Var(v));
        }
        if let Some((lname, spelled, span, ty)) = &sc.result {
            if !self.names[0].contains_key(lname) {
                let mut d = match sc.get(lname) {
                    Some(d) => d.clone(),
                    None => implicit_entry(spelled, *span, header_span),
                };
                if d.ty.is_none() {
                    d.ty = ty.clone();
                }
                let v = self.make_var(&d, VarKind::Local, &implicit);
                self.names[0].insert(lname.clone(), Binding::Var(v));
                self.result_var = Some(v);
                self.push_decl(v, d.span);
                self.entry_decls += 1;
            }
        }
        for d in &sc.decls {
            let lname = d.name.to_ascii_lowercase();
            if self.names[0].contains_key(&lname) {
                continue;
            }
            if let Some(k) = d.proc_kind {
                self.names[0].insert(lname, Binding::Proc(k));
                continue;
            }
            if let Some(p) = &d.cray_pointer {
                let ptr = match self.names[0].get(p) {
                    Some(Binding::Var(v)) => Some(*v),
                    _ => None,
                };
                if let Some(ptr) = ptr {
                    let ty = d
                        .ty
                        .clone()
                        .or_else(|| implicit.type_of(&d.name))
                        .unwrap_or(TypeSpec::Unknown)
                        .scalar();
                    self.names[0].insert(
                        lname,
                        Binding::Cray {
                            ptr,
                            ty,
                            is_array: d.is_array(),
                        },
                    );
                    continue;
                }
            }
            if sc.procs.contains_key(&lname) && !d.has_type_decl && !d.is_array() {
                // an INTERFACE or internal procedure with an attribute statement
                continue;
            }
            let kind = decl_kind(d, sc.save_all);
            let v = self.make_var(d, kind, &implicit);
            self.names[0].insert(lname, Binding::Var(v));
            if kind == VarKind::Local {
                self.push_decl(v, d.span);
                self.entry_decls += 1;
            }
        }
    }

    /// Declares the entities of a BLOCK construct's specification part in a
    /// new innermost binding scope; locals get a `Decl` at the current point.
    fn declare_block(&mut self, spec: &[Node<'t>], stmts: &[Node<'t>]) {
        let mut bs = Scope::new(ScopeKind::Block, None);
        {
            let outer = |n: &str| self.const_of(n);
            let outer_is_array = |n: &str| self.name_is_array(n);
            let col = super::scope::Collector {
                cx: self.cx,
                outer: &outer,
                outer_is_array: &outer_is_array,
            };
            col.collect(&mut bs, spec);
            super::prepass(self.cx, stmts, &mut bs);
            col.finish(&mut bs);
        }
        let implicit = self.implicit.clone();
        self.names.push(HashMap::new());
        let top = self.names.len() - 1;
        for d in &bs.decls {
            let lname = d.name.to_ascii_lowercase();
            if let Some(k) = d.proc_kind {
                self.names[top].insert(lname, Binding::Proc(k));
                continue;
            }
            // an attribute statement for an outer entity (`save x`, `dimension`)
            // without a type declaration still declares a new local here
            let kind = decl_kind(d, bs.save_all);
            let v = self.make_var(d, kind, &implicit);
            self.names[top].insert(lname, Binding::Var(v));
            if kind == VarKind::Local {
                self.push_decl(v, d.span);
            }
        }
        for (k, p) in bs.procs {
            self.names[top].entry(k).or_insert(Binding::Proc(p));
        }
    }

    /// The value of a named constant visible here.
    pub fn const_of(&self, name: &str) -> Option<i64> {
        for scope in self.names.iter().rev() {
            if let Some(b) = scope.get(name) {
                return match b {
                    Binding::Var(v) => {
                        let var = self.b.func().var(*v);
                        if var.kind == VarKind::Constant {
                            var.ty.const_value
                        } else {
                            None
                        }
                    }
                    _ => None,
                };
            }
        }
        if let Some(d) = self.unit_scope().get(name) {
            return if d.parameter { d.const_value } else { None };
        }
        self.scopes.outer_const(self.scope, name)
    }

    fn name_is_array(&self, name: &str) -> bool {
        for scope in self.names.iter().rev() {
            if let Some(b) = scope.get(name) {
                return match b {
                    Binding::Var(v) => self.b.func().var(*v).ty.is_array,
                    Binding::Cray { is_array, .. } => *is_array,
                    Binding::Alias(p) => p.is_array,
                    Binding::Proc(_) => false,
                };
            }
        }
        self.scopes.outer_is_array(self.scope, name)
    }

    /// Looks a name up in the binding scopes only.
    pub fn lookup(&self, name: &str) -> Option<&Binding> {
        self.names.iter().rev().find_map(|s| s.get(name))
    }

    /// What a plain name means, creating the variable on first use for
    /// host/module entities and implicitly typed names.
    pub fn resolve(&mut self, ident: Node) -> Binding {
        let name = self.cx.lname(ident);
        if let Some(b) = self.lookup(&name) {
            return b.clone();
        }
        if let Some(b) = self.resolve_outer(&name) {
            return b;
        }
        if let Some(k) = self.scopes.find_proc(self.scope, &name) {
            return Binding::Proc(k);
        }
        let span = self.span(ident);
        let spelled = self.cx.text(ident).trim().to_string();
        let v = if self.assume_external {
            let mut vt = VarType {
                scalar: ScalarTy::Unknown,
                ..VarType::default()
            };
            vt.const_value = None;
            self.b.add_var(Var {
                name: spelled,
                span,
                decl_span: span,
                kind: VarKind::Saved,
                ty: vt,
                address_taken: false,
            })
        } else {
            let d = implicit_entry(&spelled, span, span);
            let implicit = self.implicit.clone();
            let v = self.make_var(&d, VarKind::Local, &implicit);
            // storage of every local comes alive at entry
            let entry = &mut self.b.func_mut().blocks[Function::ENTRY.index()];
            let at = self.entry_decls.min(entry.insts.len());
            entry.insts.insert(
                at,
                Inst {
                    kind: InstKind::Decl(v),
                    span,
                },
            );
            self.entry_decls += 1;
            v
        };
        self.names[0].insert(name, Binding::Var(v));
        Binding::Var(v)
    }

    /// A host- or use-associated entity, as a variable of this function.
    pub fn resolve_outer(&mut self, name: &str) -> Option<Binding> {
        let found = self.scopes.find_outer(self.scope, name)?;
        let sc = &self.scopes.scopes[found.scope];
        let d = &sc.decls[found.decl];
        if let Some(k) = d.proc_kind {
            return Some(Binding::Proc(k));
        }
        if sc.procs.contains_key(name) && !d.has_type_decl && !d.is_array() {
            return Some(Binding::Proc(sc.procs[name]));
        }
        let kind = if d.parameter {
            VarKind::Constant
        } else {
            VarKind::Saved
        };
        let implicit = self.scopes.implicit(found.scope);
        let d = d.clone();
        let v = self.make_var(&d, kind, &implicit);
        if found.from_host_procedure {
            self.host_refs.insert(name.to_string());
        }
        self.names[0].insert(name.to_string(), Binding::Var(v));
        Some(Binding::Var(v))
    }

    // -----------------------------------------------------------------
    // Labels and constructs

    fn label_value(&self, n: Node) -> Option<u64> {
        let t = self.cx.text(n).trim();
        if t.is_empty() {
            return None;
        }
        t.parse::<u64>().ok()
    }

    fn label_block(&mut self, label: u64) -> BlockId {
        if let Some(&b) = self.labels.get(&label) {
            return b;
        }
        let b = self.b.new_block("label", None);
        self.labels.insert(label, b);
        b
    }

    /// A statement label: starts a new block entered by fallthrough.
    fn define_label(&mut self, n: Node) {
        let Some(value) = self.label_value(n) else {
            return;
        };
        let span = self.span(n);
        let b = match self.labels.get(&value) {
            Some(&b) if !self.defined_labels.contains(&value) => b,
            _ => {
                let b = self.b.new_block("label", Some(span));
                self.labels.insert(value, b);
                b
            }
        };
        self.defined_labels.insert(value);
        self.b.func_mut().blocks[b.index()].origin = Some(span);
        self.b.enter(b);
    }

    fn construct_name(&self, n: Node) -> Option<String> {
        named_kids(n)
            .into_iter()
            .find(|k| k.kind() == "block_label_start_expression")
            .and_then(|k| k.child(0))
            .map(|k| self.cx.lname(k))
    }

    // -----------------------------------------------------------------
    // Statement lists

    pub fn lower_items(&mut self, items: &[Node<'t>]) {
        let mut i = 0;
        while i < items.len() {
            let n = items[i];
            match n.kind() {
                "statement_label" => {
                    // a FORMAT statement's label is not a branch target
                    let next_is_format = items
                        .get(i + 1)
                        .is_some_and(|m| m.kind() == "format_statement");
                    if !next_is_format {
                        self.define_label(n);
                    }
                }
                k if is_preproc_container(k) => {
                    if self.enter(n) {
                        let body = preproc_body(n);
                        self.lower_items(&body);
                        self.leave();
                    }
                }
                k if is_spec_kind(k) => {}
                _ => self.lower_stmt(n),
            }
            i += 1;
        }
    }

    fn lower_stmt(&mut self, n: Node<'t>) {
        if !self.enter(n) {
            return;
        }
        match n.kind() {
            "assignment_statement" => self.assignment(n),
            "pointer_association_statement" => self.pointer_assoc(n),
            "subroutine_call" => self.call_stmt(n),
            "keyword_statement" => self.keyword_stmt(n),
            "if_statement" => self.if_stmt(n),
            "arithmetic_if_statement" => self.arith_if(n),
            "where_statement" => self.where_stmt(n),
            "forall_statement" => self.forall_stmt(n),
            "select_case_statement" | "select_type_statement" | "select_rank_statement" => {
                self.select(n)
            }
            "do_loop" => self.do_loop(n),
            "print_statement" | "write_statement" | "read_statement" | "open_statement"
            | "close_statement" | "inquire_statement" | "file_position_statement" => {
                self.io_stmt(n)
            }
            "stop_statement" => self.stop_stmt(n),
            "block_construct" => self.block_construct(n),
            "associate_statement" => self.associate(n),
            "allocate_statement" | "deallocate_statement" => self.alloc_stmt(n),
            "nullify_statement" => {
                for k in named_kids(n) {
                    if k.kind() != "comment" {
                        self.store_pointer(k);
                    }
                }
            }
            "coarray_statement" => {
                for k in named_kids(n) {
                    self.eval_children(k);
                }
                let s = self.span(n);
                let name_span = n.child(0).map_or(s, |c| self.span(c));
                self.b.push(
                    InstKind::Call(Call {
                        callee: Some("sync".into()),
                        name_span,
                        escapes: Vec::new(),
                    }),
                    s,
                );
            }
            "coarray_team_statement" | "coarray_critical_statement" => self.simple_construct(n),
            "assign_statement" => {
                if let Some(id) = named_kids(n).into_iter().find(|k| k.kind() == "identifier") {
                    self.store(id, super::expr::Val::Other);
                }
            }
            "call_expression" => {
                self.eval(n);
            }
            "ERROR" => self.error_node(n),
            k if is_preproc_container(k) => {
                let body = preproc_body(n);
                self.lower_items(&body);
            }
            _ => {}
        }
        self.leave();
    }

    /// Lowers what can be recognised inside an ERROR node: complete
    /// statements and labels, up to a nested program unit.
    fn error_node(&mut self, n: Node<'t>) {
        for k in named_kids(n) {
            let kind = k.kind();
            if super::is_unit_header(kind) || super::is_unit_node(kind) {
                break;
            }
            match kind {
                "statement_label" => self.define_label(k),
                "ERROR" => self.lower_stmt(k),
                "assignment_statement"
                | "pointer_association_statement"
                | "subroutine_call"
                | "keyword_statement"
                | "if_statement"
                | "arithmetic_if_statement"
                | "where_statement"
                | "forall_statement"
                | "select_case_statement"
                | "select_type_statement"
                | "select_rank_statement"
                | "do_loop"
                | "print_statement"
                | "write_statement"
                | "read_statement"
                | "stop_statement"
                | "block_construct"
                | "associate_statement"
                | "allocate_statement"
                | "deallocate_statement" => self.lower_stmt(k),
                "call_expression" | "derived_type_member_expression" => {
                    self.eval(k);
                }
                _ => {}
            }
        }
    }

    // -----------------------------------------------------------------
    // Simple statements

    fn assignment(&mut self, n: Node<'t>) {
        let (Some(left), Some(right)) = (
            n.child_by_field_name("left"),
            n.child_by_field_name("right"),
        ) else {
            self.eval_children(n);
            return;
        };
        if self.is_statement_function_def(left) {
            return;
        }
        let v = self.eval(right);
        let builtin = match v {
            super::expr::Val::Builtin(id) => Some(id),
            _ => None,
        };
        let written = self.store(left, v);
        if let (Some(id), Some(var)) = (builtin, written) {
            self.b.func_mut().builtins[id.index()].result = Some(var);
        }
    }

    fn is_statement_function_def(&self, left: Node) -> bool {
        if left.kind() != "call_expression" {
            return false;
        }
        let Some(f) = left.named_child(0) else {
            return false;
        };
        if f.kind() != "identifier" {
            return false;
        }
        let name = self.cx.lname(f);
        match self.lookup(&name) {
            Some(b) => matches!(b, Binding::Proc(ProcKind::StatementFunction)),
            None => self.unit_scope().procs.get(&name) == Some(&ProcKind::StatementFunction),
        }
    }

    fn pointer_assoc(&mut self, n: Node<'t>) {
        let kids: Vec<Node> = named_kids(n)
            .into_iter()
            .filter(|k| k.kind() != "comment")
            .collect();
        let (Some(&lhs), Some(&rhs)) = (kids.first(), kids.get(1)) else {
            self.eval_children(n);
            return;
        };
        if super::expr::is_designator(rhs.kind()) {
            if let super::expr::Desig::Place(p) = self.place(rhs) {
                if let Some(v) = p.base_var {
                    let var = &mut self.b.func_mut().vars[v.index()];
                    if !var.ty.is_pointer {
                        var.address_taken = true;
                    }
                }
            }
        } else {
            self.eval(rhs);
        }
        self.store_pointer(lhs);
    }

    /// Writes a pointer itself (`p => x`, `nullify(p)`), not its target.
    fn store_pointer(&mut self, lhs: Node<'t>) {
        let span = self.span(lhs);
        if lhs.kind() == "identifier" {
            if let Binding::Var(v) = self.resolve(lhs) {
                let ty = self.b.func().var(v).ty.scalar;
                self.b.push(
                    InstKind::Access(Access {
                        write: true,
                        target: AccessTarget::Var(v),
                        index: IndexKind::Whole,
                        addr_vars: Vec::new(),
                        ty,
                        value: Some(ValueSrc::Other),
                    }),
                    span,
                );
            }
            return;
        }
        // a pointer component: the write goes to the object holding it
        let object = if lhs.kind() == "derived_type_member_expression" {
            lhs.named_child(0)
        } else {
            Some(lhs)
        };
        let Some(object) = object else { return };
        if let super::expr::Desig::Place(mut p) = self.place(object) {
            if p.index == IndexKind::Whole {
                p.index = IndexKind::Const;
            }
            p.ty = ScalarTy::Pointer;
            self.emit_access(&p, true, None, span);
        }
    }

    fn call_stmt(&mut self, n: Node<'t>) {
        let span = self.span(n);
        let arglist = named_kids(n)
            .into_iter()
            .find(|k| k.kind() == "argument_list");
        let Some(sub) = n.child_by_field_name("subroutine") else {
            self.eval_children(n);
            return;
        };
        match sub.kind() {
            "identifier" => {
                let name = self.cx.lname(sub);
                if super::intrinsics::is_builtin_name(&name) {
                    self.builtin(sub, arglist, span);
                    return;
                }
                let mut escapes = Vec::new();
                if let Some(al) = arglist {
                    self.call_args(al, &mut escapes);
                }
                self.push_call(Some(name), self.span(sub), escapes, span);
            }
            "derived_type_member_expression" => {
                // a type-bound procedure: dispatched at run time
                let mut escapes = Vec::new();
                if let Some(obj) = sub.named_child(0) {
                    self.actual_arg(obj, Some(&mut escapes));
                }
                if let Some(al) = arglist {
                    self.call_args(al, &mut escapes);
                }
                let name_span = named_kids(sub)
                    .into_iter()
                    .find(|k| k.kind() == "type_member")
                    .map_or(self.span(sub), |m| self.span(m));
                self.push_call(None, name_span, escapes, span);
            }
            _ => {
                self.eval(sub);
                let mut escapes = Vec::new();
                if let Some(al) = arglist {
                    self.call_args(al, &mut escapes);
                }
                self.push_call(None, self.span(sub), escapes, span);
            }
        }
    }

    /// Emits a call; marks every escaping variable address-taken.
    pub fn push_call(
        &mut self,
        callee: Option<String>,
        name_span: Span,
        mut escapes: Vec<VarId>,
        span: Span,
    ) {
        let mut seen = HashSet::new();
        escapes.retain(|v| seen.insert(*v));
        for v in &escapes {
            self.b.func_mut().vars[v.index()].address_taken = true;
        }
        self.b.push(
            InstKind::Call(Call {
                callee,
                name_span,
                escapes,
            }),
            span,
        );
    }

    fn keyword_stmt(&mut self, n: Node<'t>) {
        let span = self.span(n);
        let word = n.child(0).map(|c| c.kind().to_ascii_lowercase()).unwrap_or_default();
        match word.as_str() {
            "continue" => {}
            "exit" | "cycle" => {
                let name = named_kids(n)
                    .into_iter()
                    .find(|k| k.kind() == "identifier")
                    .map(|k| self.cx.lname(k));
                let exit = word == "exit";
                let mut target = None;
                for i in (0..self.constructs.len()).rev() {
                    let c = &self.constructs[i];
                    let matches = match &name {
                        Some(nm) => c.name.as_deref() == Some(nm.as_str()),
                        None => matches!(c.kind, ConstructKind::Loop { .. }),
                    };
                    if !matches {
                        continue;
                    }
                    target = match c.kind {
                        ConstructKind::Loop { cycle, exit: ex } => Some(if exit { ex } else { cycle }),
                        ConstructKind::Other { end, origin } if exit => Some(match end {
                            Some(e) => e,
                            None => {
                                let e = self.b.new_block("block.end", Some(origin));
                                self.constructs[i].kind = ConstructKind::Other {
                                    end: Some(e),
                                    origin,
                                };
                                e
                            }
                        }),
                        ConstructKind::Other { .. } => None,
                    };
                    break;
                }
                if let Some(t) = target {
                    self.b.terminate(TermKind::Goto(t), Some(span));
                }
            }
            "goto" | "go" => self.goto_stmt(n, span),
            "return" => {
                for k in named_kids(n) {
                    if k.kind() != "comment" {
                        self.eval(k);
                    }
                }
                let r = self.b.return_block();
                self.b.terminate(TermKind::Goto(r), Some(span));
            }
            _ => self.eval_children(n),
        }
    }

    fn goto_stmt(&mut self, n: Node<'t>, span: Span) {
        let kids: Vec<Node> = named_kids(n)
            .into_iter()
            .filter(|k| k.kind() != "comment")
            .collect();
        let refs: Vec<Node> = kids
            .iter()
            .copied()
            .filter(|k| k.kind() == "statement_label_reference")
            .collect();
        let expr = kids
            .iter()
            .copied()
            .find(|k| k.kind() != "statement_label_reference");
        let values: Vec<u64> = refs.iter().filter_map(|r| self.label_value(*r)).collect();
        let targets: Vec<BlockId> = values.into_iter().map(|v| self.label_block(v)).collect();
        match expr {
            None => {
                if let Some(&t) = targets.first() {
                    self.b.terminate(TermKind::Goto(t), Some(span));
                }
            }
            Some(e) => {
                self.eval(e);
                let assigned = refs.first().is_some_and(|r| e.start_byte() < r.start_byte());
                if targets.is_empty() {
                    return;
                }
                if assigned {
                    self.b.terminate(TermKind::Switch { targets }, Some(span));
                } else {
                    // computed GOTO: out-of-range values fall through
                    let next = self.b.new_block("sw.epilog", Some(span));
                    let mut t = targets;
                    t.push(next);
                    self.b.terminate(TermKind::Switch { targets: t }, Some(span));
                    self.b.set_current(Some(next));
                }
            }
        }
    }

    fn stop_stmt(&mut self, n: Node<'t>) {
        let span = self.span(n);
        for k in named_kids(n) {
            if k.kind() != "comment" {
                self.eval(k);
            }
        }
        let name_span = all_kids(n)
            .into_iter()
            .find(|k| k.kind() == "stop")
            .map_or(span, |k| self.span(k));
        self.push_call(Some("stop".into()), name_span, Vec::new(), span);
        self.b.terminate(TermKind::Unreachable, Some(span));
    }

    fn io_stmt(&mut self, n: Node<'t>) {
        let span = self.span(n);
        let kw = n.child(0);
        let callee = kw
            .map(|k| k.kind().to_ascii_lowercase())
            .filter(|k| k.chars().all(|c| c.is_ascii_alphabetic()))
            .unwrap_or_else(|| "io".into());
        let name_span = kw.map_or(span, |k| self.span(k));
        let is_read = n.kind() == "read_statement";
        let mut escapes = Vec::new();
        let mut written: Vec<Node<'t>> = Vec::new();
        for k in named_kids(n) {
            match k.kind() {
                "unit_identifier" | "format_identifier" => {
                    for e in named_kids(k) {
                        if e.kind() != "statement_label_reference" && e.kind() != "comment" {
                            self.actual_arg(e, Some(&mut escapes));
                        }
                    }
                }
                "keyword_argument" => {
                    if let Some(v) = k.child_by_field_name("value") {
                        self.actual_arg(v, Some(&mut escapes));
                    }
                }
                "input_item_list" | "output_item_list" => {
                    for item in named_kids(k) {
                        if item.kind() == "comment" {
                            continue;
                        }
                        if is_read && item.kind() == "implied_do_loop_expression" {
                            self.implied_do_items(item, &mut escapes, &mut written);
                        } else {
                            if is_read && super::expr::is_designator(item.kind()) {
                                written.push(item);
                            }
                            self.actual_arg(item, Some(&mut escapes));
                        }
                    }
                }
                "comment" | "statement_label_reference" | "string_literal" => {}
                _ => self.actual_arg(k, Some(&mut escapes)),
            }
        }
        self.push_call(Some(callee), name_span, escapes, span);
        for w in written {
            self.store(w, super::expr::Val::Other);
        }
    }

    /// `(a(i), i = 1, n)` in a READ list: bounds, the index, the items (all
    /// written by the library).
    fn implied_do_items(
        &mut self,
        n: Node<'t>,
        escapes: &mut Vec<VarId>,
        written: &mut Vec<Node<'t>>,
    ) {
        if !self.enter(n) {
            return;
        }
        // the index and its bounds first, then the items
        let mut kids = named_kids(n);
        kids.sort_by_key(|k| k.kind() != "loop_control_expression");
        for k in kids {
            match k.kind() {
                "loop_control_expression" => {
                    let parts = named_kids(k);
                    for p in parts.iter().skip(1) {
                        self.eval(*p);
                    }
                    if let Some(i) = parts.first() {
                        self.store(*i, super::expr::Val::Other);
                    }
                }
                "implied_do_loop_expression" => self.implied_do_items(k, escapes, written),
                "comment" | "intrinsic_type" | "derived_type" => {}
                _ => {
                    if super::expr::is_designator(k.kind()) {
                        written.push(k);
                    }
                    self.actual_arg(k, Some(escapes));
                }
            }
        }
        self.leave();
    }

    fn alloc_stmt(&mut self, n: Node<'t>) {
        let span = self.span(n);
        let mut escapes = Vec::new();
        for k in named_kids(n) {
            match k.kind() {
                "sized_allocation" | "coarray_allocation" => {
                    for part in named_kids(k) {
                        match part.kind() {
                            "size" | "coarray_size" => self.eval_children(part),
                            "comment" => {}
                            _ => self.actual_arg(part, Some(&mut escapes)),
                        }
                    }
                }
                "keyword_argument" => {
                    let name = k
                        .child_by_field_name("name")
                        .map(|x| self.cx.lname(x))
                        .unwrap_or_default();
                    if let Some(v) = k.child_by_field_name("value") {
                        if name == "source" || name == "mold" {
                            self.eval(v);
                        } else {
                            self.actual_arg(v, Some(&mut escapes));
                        }
                    }
                }
                "intrinsic_type" | "comment" => {}
                _ => self.actual_arg(k, Some(&mut escapes)),
            }
        }
        let callee = if n.kind() == "allocate_statement" {
            "allocate"
        } else {
            "deallocate"
        };
        let name_span = n.child(0).map_or(span, |c| self.span(c));
        self.push_call(Some(callee.into()), name_span, escapes, span);
    }

    // -----------------------------------------------------------------
    // IF

    fn if_stmt(&mut self, n: Node<'t>) {
        let origin = self.span(n);
        let kids = all_kids(n);
        let has_then = kids.iter().any(|k| k.kind() == "then");
        let Some(cond_paren) = kids
            .iter()
            .copied()
            .find(|k| k.kind() == "parenthesized_expression")
        else {
            self.eval_children(n);
            return;
        };
        let cond = first_expr(cond_paren).unwrap_or(cond_paren);
        if !has_then {
            // logical IF: `if (c) stmt`
            let stmt = kids
                .iter()
                .copied()
                .filter(|k| k.is_named() && k.start_byte() >= cond_paren.end_byte())
                .find(|k| k.kind() != "comment");
            self.eval(cond);
            let then_b = self.b.new_block("if.then", Some(origin));
            let end_b = self.b.new_block("if.end", Some(origin));
            self.b.terminate(
                TermKind::Branch {
                    then: then_b,
                    else_: end_b,
                },
                Some(self.span(cond)),
            );
            self.b.set_current(Some(then_b));
            if let Some(s) = stmt {
                self.lower_stmt(s);
            }
            self.b.goto_if_open(end_b);
            self.b.set_current(Some(end_b));
            return;
        }
        let name = self.construct_name(n);
        let mut after_then = false;
        let mut then_items = Vec::new();
        let mut elseifs = Vec::new();
        let mut else_clause = None;
        let mut end_label = None;
        for k in kids.iter().copied() {
            if !k.is_named() {
                if k.kind() == "then" {
                    after_then = true;
                }
                continue;
            }
            match k.kind() {
                "elseif_clause" => elseifs.push(k),
                "else_clause" => else_clause = Some(k),
                "end_if_statement" | "block_label_start_expression" | "block_label"
                | "comment" => {}
                "parenthesized_expression" if !after_then => {}
                "statement_label" if !elseifs.is_empty() || else_clause.is_some() => {
                    end_label = Some(k)
                }
                _ if after_then && elseifs.is_empty() && else_clause.is_none() => {
                    then_items.push(k)
                }
                _ => {}
            }
        }
        if end_label.is_none()
            && elseifs.is_empty()
            && else_clause.is_none()
            && then_items.last().is_some_and(|k| k.kind() == "statement_label")
        {
            end_label = then_items.pop();
        }
        self.eval(cond);
        let then_b = self.b.new_block("if.then", Some(origin));
        let has_else = !elseifs.is_empty() || else_clause.is_some();
        let else_b = has_else.then(|| self.b.new_block("if.else", Some(origin)));
        let end_b = self.b.new_block("if.end", Some(origin));
        self.b.terminate(
            TermKind::Branch {
                then: then_b,
                else_: else_b.unwrap_or(end_b),
            },
            Some(self.span(cond)),
        );
        self.constructs.push(Construct {
            name,
            kind: ConstructKind::Other {
                end: Some(end_b),
                origin,
            },
        });
        self.b.set_current(Some(then_b));
        self.lower_items(&then_items);
        self.b.goto_if_open(end_b);
        let mut ends = vec![end_b];
        let mut cur_else = else_b;
        for (i, ei) in elseifs.iter().copied().enumerate() {
            let eorigin = self.span(ei);
            self.b.set_current(cur_else);
            let ekids = all_kids(ei);
            let paren = ekids
                .iter()
                .copied()
                .find(|k| k.kind() == "parenthesized_expression");
            let econd = paren.map(|p| first_expr(p).unwrap_or(p));
            if let Some(c) = econd {
                self.eval(c);
            }
            let items: Vec<Node> = ekids
                .iter()
                .copied()
                .filter(|k| {
                    k.is_named()
                        && Some(*k) != paren
                        && !matches!(k.kind(), "comment" | "block_label")
                })
                .collect();
            let then_i = self.b.new_block("if.then", Some(eorigin));
            let more = i + 1 < elseifs.len() || else_clause.is_some();
            let else_i = more.then(|| self.b.new_block("if.else", Some(eorigin)));
            let end_i = self.b.new_block("if.end", Some(eorigin));
            self.b.terminate(
                TermKind::Branch {
                    then: then_i,
                    else_: else_i.unwrap_or(end_i),
                },
                econd.map(|c| self.span(c)),
            );
            self.b.set_current(Some(then_i));
            self.lower_items(&items);
            self.b.goto_if_open(end_i);
            ends.push(end_i);
            cur_else = else_i;
        }
        if let Some(ec) = else_clause {
            self.b.set_current(cur_else);
            let items: Vec<Node> = named_kids(ec)
                .into_iter()
                .filter(|k| !matches!(k.kind(), "comment" | "block_label"))
                .collect();
            self.lower_items(&items);
            if let Some(&last) = ends.last() {
                self.b.goto_if_open(last);
            }
        }
        while ends.len() > 1 {
            let inner = ends.pop().unwrap_or(end_b);
            let outer = *ends.last().unwrap_or(&end_b);
            self.b.set_current(Some(inner));
            self.b.goto_if_open(outer);
        }
        self.constructs.pop();
        self.b.set_current(Some(end_b));
        if let Some(l) = end_label {
            self.define_label(l);
        }
    }

    fn arith_if(&mut self, n: Node<'t>) {
        let kids = named_kids(n);
        let paren = kids
            .iter()
            .copied()
            .find(|k| k.kind() == "parenthesized_expression");
        let cond = paren.map(|p| first_expr(p).unwrap_or(p));
        if let Some(c) = cond {
            self.eval(c);
        }
        let values: Vec<u64> = kids
            .iter()
            .copied()
            .filter(|k| k.kind() == "statement_label_reference")
            .filter_map(|r| self.label_value(r))
            .collect();
        let targets: Vec<BlockId> = values.into_iter().map(|v| self.label_block(v)).collect();
        if targets.is_empty() {
            return;
        }
        let span = cond.map_or(self.span(n), |c| self.span(c));
        self.b.terminate(TermKind::Switch { targets }, Some(span));
    }

    // -----------------------------------------------------------------
    // SELECT

    fn select(&mut self, n: Node<'t>) {
        let origin = self.span(n);
        let name = self.construct_name(n);
        let kids = named_kids(n);
        let selector = kids.iter().copied().find(|k| k.kind() == "selector");
        let mut alias: Option<(String, Place)> = None;
        let mut sel_span = selector.map_or(origin, |s| self.span(s));
        if let Some(s) = selector {
            let inner = named_kids(s).into_iter().find(|k| k.kind() != "comment");
            match inner {
                Some(pa) if pa.kind() == "pointer_association_statement" => {
                    let parts: Vec<Node> = named_kids(pa)
                        .into_iter()
                        .filter(|k| k.kind() != "comment")
                        .collect();
                    if let (Some(an), Some(obj)) = (parts.first(), parts.get(1)) {
                        sel_span = self.span(*obj);
                        if let Some(p) = self.alias_place(*obj) {
                            alias = Some((self.cx.lname(*an), p));
                        }
                    }
                }
                Some(e) => {
                    sel_span = self.span(e);
                    if n.kind() == "select_case_statement" {
                        self.eval(e);
                    } else if super::expr::is_designator(e.kind()) {
                        // SELECT TYPE (x): x keeps its name
                        self.place(e);
                    } else {
                        self.eval(e);
                    }
                }
                None => {}
            }
        }
        let mut cases: Vec<Node<'t>> = Vec::new();
        let mut stack: Vec<Node<'t>> = kids.iter().rev().copied().collect();
        let mut end_label = None;
        while let Some(k) = stack.pop() {
            match k.kind() {
                "case_statement" | "type_statement" | "rank_statement" => cases.push(k),
                "statement_label" => end_label = Some(k),
                c if is_preproc_container(c) => {
                    for x in preproc_body(k).into_iter().rev() {
                        stack.push(x);
                    }
                }
                _ => {}
            }
        }
        let blocks: Vec<BlockId> = cases
            .iter()
            .map(|c| {
                let s = self.span(*c);
                self.b.new_block("sw.bb", Some(s))
            })
            .collect();
        let epilog = self.b.new_block("sw.epilog", Some(origin));
        let is_default = |c: &Node| named_kids(*c).iter().any(|k| k.kind() == "default");
        let mut targets: Vec<BlockId> = Vec::new();
        let mut default = None;
        for (c, &bb) in cases.iter().zip(&blocks) {
            if is_default(c) {
                default.get_or_insert(bb);
            } else {
                targets.push(bb);
            }
        }
        targets.push(default.unwrap_or(epilog));
        self.b
            .terminate(TermKind::Switch { targets }, Some(sel_span));
        self.constructs.push(Construct {
            name,
            kind: ConstructKind::Other {
                end: Some(epilog),
                origin,
            },
        });
        if let Some((an, p)) = alias {
            let mut m = HashMap::new();
            m.insert(an, Binding::Alias(p));
            self.names.push(m);
        } else {
            self.names.push(HashMap::new());
        }
        for (c, &bb) in cases.iter().zip(&blocks) {
            self.b.set_current(Some(bb));
            let mut cursor = c.walk();
            let items: Vec<Node> = c
                .children(&mut cursor)
                .enumerate()
                .filter(|(i, k)| {
                    k.is_named()
                        && c.field_name_for_child(*i as u32).is_none()
                        && !matches!(
                            k.kind(),
                            "case_value_range_list"
                                | "default"
                                | "block_label"
                                | "comment"
                                | "assumed_size"
                        )
                })
                .map(|(_, k)| k)
                .collect();
            self.lower_items(&items);
            self.b.goto_if_open(epilog);
        }
        self.names.pop();
        self.constructs.pop();
        self.b.set_current(Some(epilog));
        if let Some(l) = end_label {
            self.define_label(l);
        }
    }

    // -----------------------------------------------------------------
    // DO

    fn do_loop(&mut self, n: Node<'t>) {
        let inherited = self.shared_terminal.take();
        let mut name = None;
        let mut do_stmt = None;
        let mut body: Vec<Node<'t>> = Vec::new();
        let mut end = None;
        for k in named_kids(n) {
            match k.kind() {
                "block_label_start_expression" if do_stmt.is_none() => {
                    name = k.child(0).map(|c| self.cx.lname(c))
                }
                "do_statement" if do_stmt.is_none() => do_stmt = Some(k),
                "end_do_loop_statement" | "end_do_label_loop_statement" => end = Some(k),
                "comment" => {}
                _ if end.is_none() => body.push(k),
                _ => {}
            }
        }
        let Some(ds) = do_stmt else {
            self.lower_items(&body);
            return;
        };

        // The terminal statement of a labelled DO. With a shared label the
        // parser attaches it to the outermost DO of the nest; it belongs to
        // the innermost one.
        let own_virtual = end.is_some_and(ends_virtually_end);
        let last_is_shared = body.last().is_some_and(|b| ends_virtually(*b));
        let mut pass_down: Option<Node<'t>> = None;
        let mut terminal: Option<(Option<Node<'t>>, Option<Node<'t>>)> = None;
        if let Some(e) = end.filter(|e| e.kind() == "end_do_label_loop_statement") {
            let source = if own_virtual { inherited } else { Some(e) };
            if last_is_shared {
                pass_down = source;
            } else {
                let label = if own_virtual {
                    e.child_by_field_name("do_label")
                } else {
                    source.and_then(|t| t.child_by_field_name("do_label"))
                };
                terminal = Some((label, source.and_then(terminal_statement)));
            }
        }
        let mut span = self.span(n);
        if own_virtual {
            if let Some((_, Some(stmt))) = terminal {
                span = span.cover(self.span(stmt));
            }
        }
        let keyword_span = ds
            .child(0)
            .filter(|c| c.kind() == "do")
            .map_or(self.span(ds), |c| self.span(c));
        let (omp, ivdep) = self.directives_before(n);
        let control = named_kids(ds).into_iter().find(|k| {
            matches!(
                k.kind(),
                "loop_control_expression" | "while_statement" | "concurrent_statement"
            )
        });

        // reserve the loop's slot now: source loops are listed outer first
        let slot = self.b.add_source_loop(SourceLoop {
            kind: LoopKind::FortranDoForever,
            span,
            keyword_span,
            header: Function::ENTRY,
            body_entry: None,
            unrolled: false,
            omp,
            ivdep,
        });
        let lower_body = |me: &mut Self| {
            if let Some((last, rest)) = body.split_last() {
                me.lower_items(rest);
                me.shared_terminal = pass_down;
                me.lower_items(std::slice::from_ref(last));
                me.shared_terminal = None;
            }
            if let Some((label, stmt)) = terminal {
                if let Some(l) = label {
                    me.define_label(l);
                }
                if let Some(s) = stmt {
                    me.lower_stmt(s);
                }
            }
        };

        let (kind, header, body_entry) = match control {
            Some(c) if c.kind() == "loop_control_expression" => {
                let parts: Vec<Node> = named_kids(c)
                    .into_iter()
                    .filter(|k| k.kind() != "comment")
                    .collect();
                let mut first_val = super::expr::Val::Other;
                for (i, p) in parts.iter().enumerate().skip(1) {
                    let v = self.eval(*p);
                    if i == 1 {
                        first_val = v;
                    }
                }
                let var = parts.first().copied();
                if let Some(v) = var {
                    self.store(v, first_val);
                }
                let cond = self.b.new_block("do.cond", Some(span));
                let body_b = self.b.new_block("do.body", Some(span));
                let inc = self.b.new_block("do.inc", Some(span));
                let end_b = self.b.new_block("do.end", Some(span));
                self.b.enter(cond);
                self.b.terminate(
                    TermKind::Branch {
                        then: body_b,
                        else_: end_b,
                    },
                    Some(self.span(ds)),
                );
                self.b.set_current(Some(body_b));
                self.constructs.push(Construct {
                    name,
                    kind: ConstructKind::Loop {
                        cycle: inc,
                        exit: end_b,
                    },
                });
                lower_body(self);
                self.constructs.pop();
                self.b.goto_if_open(inc);
                self.b.set_current(Some(inc));
                if let Some(v) = var {
                    self.eval(v);
                    self.store(v, super::expr::Val::Other);
                }
                self.b.terminate(TermKind::Goto(cond), None);
                self.b.set_current(Some(end_b));
                (LoopKind::FortranDo, cond, Some(body_b))
            }
            Some(c) if c.kind() == "while_statement" => {
                let cond = self.b.new_block("do.cond", Some(span));
                self.b.enter(cond);
                let paren = named_kids(c)
                    .into_iter()
                    .find(|k| k.kind() == "parenthesized_expression");
                let expr = paren.map(|p| first_expr(p).unwrap_or(p));
                if let Some(e) = expr {
                    self.eval(e);
                }
                let body_b = self.b.new_block("do.body", Some(span));
                let end_b = self.b.new_block("do.end", Some(span));
                self.b.terminate(
                    TermKind::Branch {
                        then: body_b,
                        else_: end_b,
                    },
                    Some(expr.map_or(self.span(ds), |e| self.span(e))),
                );
                self.b.set_current(Some(body_b));
                self.constructs.push(Construct {
                    name,
                    kind: ConstructKind::Loop {
                        cycle: cond,
                        exit: end_b,
                    },
                });
                lower_body(self);
                self.constructs.pop();
                self.b.goto_if_open(cond);
                self.b.set_current(Some(end_b));
                (LoopKind::FortranDoWhile, cond, Some(body_b))
            }
            Some(c) if c.kind() == "concurrent_statement" => {
                self.do_concurrent(c, ds, span, name, lower_body)
            }
            _ => {
                let body_b = self.b.new_block("do.body", Some(span));
                let end_b = self.b.new_block("do.end", Some(span));
                self.b.enter(body_b);
                self.constructs.push(Construct {
                    name,
                    kind: ConstructKind::Loop {
                        cycle: body_b,
                        exit: end_b,
                    },
                });
                lower_body(self);
                self.constructs.pop();
                self.b.goto_if_open(body_b);
                self.b.set_current(Some(end_b));
                (LoopKind::FortranDoForever, body_b, Some(body_b))
            }
        };
        if let Some(l) = self.b.func_mut().source_loops.get_mut(slot) {
            l.kind = kind;
            l.header = header;
            l.body_entry = body_entry;
        }
    }

    /// `do concurrent (i = a:b[:s], j = ..., mask)`: one nested loop per
    /// index (as gfortran emits it); every bound evaluated before the nest.
    fn do_concurrent(
        &mut self,
        c: Node<'t>,
        ds: Node<'t>,
        span: Span,
        name: Option<String>,
        lower_body: impl FnOnce(&mut Self),
    ) -> (LoopKind, BlockId, Option<BlockId>) {
        let header = named_kids(c)
            .into_iter()
            .find(|k| k.kind() == "concurrent_header");
        let hk = header.map(named_kids).unwrap_or_default();
        let controls: Vec<Node> = hk
            .iter()
            .copied()
            .filter(|k| k.kind() == "concurrent_control")
            .collect();
        let mask = hk.iter().copied().find(|k| k.kind() == "concurrent_mask");
        // index variables have construct scope
        self.names.push(HashMap::new());
        let mut vars = Vec::new();
        let mut firsts = Vec::new();
        for ctl in &controls {
            let first = ctl.child_by_field_name("initial").map(|e| self.eval(e));
            for f in ["final", "step"] {
                if let Some(e) = ctl.child_by_field_name(f) {
                    self.eval(e);
                }
            }
            firsts.push(first.unwrap_or(super::expr::Val::Other));
            let id = named_kids(*ctl).into_iter().find(|k| k.kind() == "identifier");
            let v = id.map(|id| {
                let sp = self.span(id);
                let v = self.b.add_var(Var {
                    name: self.cx.text(id).trim().to_string(),
                    span: sp,
                    decl_span: self.span(*ctl),
                    kind: VarKind::Local,
                    ty: VarType::default(),
                    address_taken: false,
                });
                let top = self.names.len() - 1;
                self.names[top].insert(self.cx.lname(id), Binding::Var(v));
                (v, sp)
            });
            vars.push(v);
        }
        let mut levels: Vec<Level> = Vec::new();
        for (i, v) in vars.iter().enumerate() {
            if let Some((var, sp)) = v {
                let val = std::mem::replace(&mut firsts[i], super::expr::Val::Other);
                self.write_var(*var, val, *sp);
            }
            let cond = self.b.new_block("do.cond", Some(span));
            let body_b = self.b.new_block("do.body", Some(span));
            let inc = self.b.new_block("do.inc", Some(span));
            let end_b = self.b.new_block("do.end", Some(span));
            self.b.enter(cond);
            self.b.terminate(
                TermKind::Branch {
                    then: body_b,
                    else_: end_b,
                },
                Some(self.span(ds)),
            );
            self.b.set_current(Some(body_b));
            levels.push(Level {
                cond,
                body: body_b,
                inc,
                var: *v,
                end: end_b,
            });
        }
        if levels.is_empty() {
            // no control parsed: treat as DO without control
            let body_b = self.b.new_block("do.body", Some(span));
            let end_b = self.b.new_block("do.end", Some(span));
            self.b.enter(body_b);
            self.constructs.push(Construct {
                name,
                kind: ConstructKind::Loop {
                    cycle: body_b,
                    exit: end_b,
                },
            });
            lower_body(self);
            self.constructs.pop();
            self.b.goto_if_open(body_b);
            self.b.set_current(Some(end_b));
            self.names.pop();
            return (LoopKind::FortranDoConcurrent, body_b, Some(body_b));
        }
        let outer_cond = levels[0].cond;
        let outer_end = levels[0].end;
        let inner_body = levels[levels.len() - 1].body;
        let inner_inc = levels[levels.len() - 1].inc;
        if let Some(m) = mask {
            let me = first_expr(m).unwrap_or(m);
            self.eval(me);
            let masked = self.b.new_block("if.then", Some(self.span(m)));
            self.b.terminate(
                TermKind::Branch {
                    then: masked,
                    else_: inner_inc,
                },
                Some(self.span(me)),
            );
            self.b.set_current(Some(masked));
        }
        self.constructs.push(Construct {
            name,
            kind: ConstructKind::Loop {
                cycle: inner_inc,
                exit: outer_end,
            },
        });
        lower_body(self);
        self.constructs.pop();
        for lvl in levels.iter().rev() {
            self.b.goto_if_open(lvl.inc);
            self.b.set_current(Some(lvl.inc));
            if let Some((var, sp)) = lvl.var {
                self.read_var(var, sp);
                self.write_var(var, super::expr::Val::Other, sp);
            }
            self.b.terminate(TermKind::Goto(lvl.cond), None);
            self.b.set_current(Some(lvl.end));
        }
        self.names.pop();
        (LoopKind::FortranDoConcurrent, outer_cond, Some(inner_body))
    }

    /// OpenMP and ivdep directive comments right before a DO (only blank
    /// lines and other comments in between), found in the text.
    fn directives_before(&self, n: Node) -> (Option<Span>, Option<Span>) {
        let text = self.cx.text;
        let start = n.start_byte().min(text.len());
        let Some(before) = text.get(..start) else {
            return (None, None);
        };
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let prefix = &before[line_start..];
        if !prefix
            .chars()
            .all(|c| c.is_whitespace() || c.is_ascii_digit() || c == ';')
        {
            return (None, None);
        }
        let mut omp = None;
        let mut ivdep = None;
        let mut pos = line_start;
        for _ in 0..1000 {
            if pos == 0 {
                break;
            }
            let prev_end = pos - 1;
            let prev_start = text[..prev_end].rfind('\n').map_or(0, |i| i + 1);
            let line = text[prev_start..prev_end].trim_end_matches('\r');
            pos = prev_start;
            let trimmed = line.trim_start();
            if trimmed.trim().is_empty() {
                continue;
            }
            if !trimmed.starts_with('!') {
                break;
            }
            let cstart = prev_start + (line.len() - trimmed.len());
            let cend = prev_start + line.trim_end().len();
            let span = self.cx.span_bytes(cstart, cend);
            let lower = trimmed.to_ascii_lowercase();
            if is_omp_loop_directive(&lower) {
                omp.get_or_insert(span);
            } else if is_ivdep_directive(&lower) {
                ivdep.get_or_insert(span);
            }
        }
        (omp, ivdep)
    }

    // -----------------------------------------------------------------
    // Other constructs

    fn block_construct(&mut self, n: Node<'t>) {
        let name = self.construct_name(n);
        let origin = self.span(n);
        let mut spec = Vec::new();
        let mut stmts = Vec::new();
        for k in named_kids(n) {
            match k.kind() {
                "block_label_start_expression" | "end_block_construct_statement" | "comment" => {}
                kind if is_spec_kind(kind) => spec.push(k),
                _ => stmts.push(k),
            }
        }
        self.declare_block(&spec, &stmts);
        self.constructs.push(Construct {
            name,
            kind: ConstructKind::Other { end: None, origin },
        });
        self.lower_items(&stmts);
        self.finish_simple_construct();
        self.names.pop();
    }

    fn finish_simple_construct(&mut self) {
        if let Some(Construct {
            kind: ConstructKind::Other { end: Some(e), .. },
            ..
        }) = self.constructs.pop()
        {
            self.b.enter(e);
        }
    }

    /// CRITICAL, CHANGE TEAM: straight-line bodies.
    fn simple_construct(&mut self, n: Node<'t>) {
        let name = self.construct_name(n);
        let origin = self.span(n);
        let items: Vec<Node> = named_kids(n)
            .into_iter()
            .filter(|k| {
                !matches!(
                    k.kind(),
                    "block_label_start_expression"
                        | "argument_list"
                        | "end_coarray_team_statement"
                        | "end_coarray_critical_statement"
                        | "comment"
                )
            })
            .collect();
        self.constructs.push(Construct {
            name,
            kind: ConstructKind::Other { end: None, origin },
        });
        self.lower_items(&items);
        self.finish_simple_construct();
    }

    fn associate(&mut self, n: Node<'t>) {
        let name = self.construct_name(n);
        let origin = self.span(n);
        let mut bindings = HashMap::new();
        let mut items = Vec::new();
        for k in named_kids(n) {
            match k.kind() {
                "association_list" => {
                    for a in named_kids(k) {
                        if a.kind() != "association" {
                            continue;
                        }
                        let (Some(an), Some(sel)) =
                            (a.child_by_field_name("name"), a.child_by_field_name("selector"))
                        else {
                            continue;
                        };
                        let b = match self.alias_place(sel) {
                            Some(p) => Binding::Alias(p),
                            None => {
                                let val = self.eval(sel);
                                let sp = self.span(an);
                                let v = self.b.add_var(Var {
                                    name: self.cx.text(an).trim().to_string(),
                                    span: sp,
                                    decl_span: self.span(a),
                                    kind: VarKind::Local,
                                    ty: VarType {
                                        scalar: ScalarTy::Unknown,
                                        ..VarType::default()
                                    },
                                    address_taken: false,
                                });
                                self.write_var(v, val, sp);
                                Binding::Var(v)
                            }
                        };
                        bindings.insert(self.cx.lname(an), b);
                    }
                }
                "block_label_start_expression" | "end_associate_statement" | "comment" => {}
                _ => items.push(k),
            }
        }
        self.names.push(bindings);
        self.constructs.push(Construct {
            name,
            kind: ConstructKind::Other { end: None, origin },
        });
        self.lower_items(&items);
        self.finish_simple_construct();
        self.names.pop();
    }

    /// WHERE: masked array assignments (the element loops the compiler
    /// generates are not modelled; the accesses are).
    fn where_stmt(&mut self, n: Node<'t>) {
        for k in named_kids(n) {
            match k.kind() {
                "parenthesized_expression" => {
                    if let Some(e) = first_expr(k) {
                        self.eval(e);
                    }
                }
                "elsewhere_clause" => {
                    for c in named_kids(k) {
                        match c.kind() {
                            "parenthesized_expression" => {
                                if let Some(e) = first_expr(c) {
                                    self.eval(e);
                                }
                            }
                            "block_label" | "comment" => {}
                            _ => self.lower_items(std::slice::from_ref(&c)),
                        }
                    }
                }
                "end_where_statement" | "block_label_start_expression" | "comment" => {}
                _ => self.lower_items(std::slice::from_ref(&k)),
            }
        }
    }

    /// FORALL: index bounds, mask and the assignments (no loop modelled).
    fn forall_stmt(&mut self, n: Node<'t>) {
        self.names.push(HashMap::new());
        let mut body = Vec::new();
        for k in named_kids(n) {
            match k.kind() {
                "triplet_spec" => {
                    let parts = named_kids(k);
                    for p in parts.iter().skip(1) {
                        if p.kind() != "comment" {
                            self.eval(*p);
                        }
                    }
                    if let Some(id) = parts.first().filter(|p| p.kind() == "identifier") {
                        let v = self.b.add_var(Var {
                            name: self.cx.text(*id).trim().to_string(),
                            span: self.span(*id),
                            decl_span: self.span(k),
                            kind: VarKind::Local,
                            ty: VarType::default(),
                            address_taken: false,
                        });
                        let top = self.names.len() - 1;
                        self.names[top].insert(self.cx.lname(*id), Binding::Var(v));
                    }
                }
                "logical_expression" | "relational_expression" => {
                    self.eval(k);
                }
                "end_forall_statement" | "block_label_start_expression" | "comment" => {}
                _ => body.push(k),
            }
        }
        self.lower_items(&body);
        self.names.pop();
    }

    // -----------------------------------------------------------------
    // Scalar variable helpers

    /// Writes a whole scalar variable.
    pub fn write_var(&mut self, v: VarId, val: super::expr::Val, span: Span) {
        let ty = self.elem_ty(v);
        self.b.push(
            InstKind::Access(Access {
                write: true,
                target: AccessTarget::Var(v),
                index: IndexKind::Whole,
                addr_vars: Vec::new(),
                ty,
                value: Some(val.to_value_src()),
            }),
            span,
        );
    }

    pub fn read_var(&mut self, v: VarId, span: Span) {
        let ty = self.elem_ty(v);
        self.b.push(
            InstKind::Access(Access {
                write: false,
                target: AccessTarget::Var(v),
                index: IndexKind::Whole,
                addr_vars: Vec::new(),
                ty,
                value: None,
            }),
            span,
        );
    }
}

/// A level of a DO CONCURRENT nest.
struct Level {
    cond: BlockId,
    body: BlockId,
    inc: BlockId,
    var: Option<(VarId, Span)>,
    end: BlockId,
}

/// The kind of an entity declared in a scope.
fn decl_kind(d: &DeclEntry, save_all: bool) -> VarKind {
    if d.parameter {
        VarKind::Constant
    } else if d.common || d.save || d.initialized || save_all {
        VarKind::Saved
    } else {
        VarKind::Local
    }
}

/// A declaration entry for an implicitly typed name.
fn implicit_entry(name: &str, span: Span, decl_span: Span) -> DeclEntry {
    DeclEntry {
        name: name.to_string(),
        span,
        decl_span,
        has_type_decl: false,
        ty: None,
        dims: None,
        parameter: false,
        const_value: None,
        save: false,
        initialized: false,
        common: false,
        pointer: false,
        target: false,
        allocatable: false,
        external: false,
        intrinsic: false,
        equivalenced: false,
        cray_pointer: None,
        proc_kind: None,
    }
}

/// The expression inside parentheses.
pub(super) fn first_expr(n: Node) -> Option<Node> {
    named_kids(n).into_iter().find(|k| k.kind() != "comment")
}

/// Whether a DO construct ends on a shared label that an enclosing DO's
/// terminal statement closes.
fn ends_virtually(n: Node) -> bool {
    if n.kind() != "do_loop" {
        return false;
    }
    named_kids(n)
        .into_iter()
        .rev()
        .find(|k| k.kind() != "comment")
        .is_some_and(ends_virtually_end)
}

fn ends_virtually_end(e: Node) -> bool {
    e.kind() == "end_do_label_loop_statement"
        && e.child_by_field_name("do_label")
            .is_some_and(|l| l.kind() == "do_label_virtual")
}

/// The statement of a labelled DO's terminal line (None for `END DO`).
fn terminal_statement(e: Node) -> Option<Node> {
    let mut cursor = e.walk();
    let kids: Vec<(Option<&str>, Node)> = e
        .children(&mut cursor)
        .enumerate()
        .map(|(i, k)| (e.field_name_for_child(i as u32), k))
        .collect();
    kids.into_iter()
        .filter(|(f, k)| {
            f.is_none() && k.is_named() && !matches!(k.kind(), "comment" | "block_label")
        })
        .map(|(_, k)| k)
        .next()
}

/// `!$omp parallel do ...` / `!$omp do ...` (lower-cased comment text).
fn is_omp_loop_directive(lower: &str) -> bool {
    let Some(rest) = lower.strip_prefix("!$omp") else {
        return false;
    };
    if !rest.starts_with(|c: char| c.is_whitespace()) {
        return false;
    }
    let words: Vec<&str> = rest
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    match words.as_slice() {
        ["do", ..] => true,
        ["parallel", "do", ..] => true,
        _ => false,
    }
}

/// `!DIR$ IVDEP`, `!DEC$ IVDEP`, `!GCC$ ivdep` (lower-cased comment text).
fn is_ivdep_directive(lower: &str) -> bool {
    ["!dir$", "!dec$", "!gcc$"].iter().any(|s| {
        lower.strip_prefix(s).is_some_and(|rest| {
            let w = rest.trim_start();
            w.starts_with("ivdep") && !w[5..].starts_with(|c: char| c.is_ascii_alphanumeric())
        })
    })
}
