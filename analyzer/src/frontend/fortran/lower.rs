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
use crate::frontend::fields::{FortranFields, F};
use crate::frontend::flat::FNode;
use crate::ir::builder::FunctionBuilder;
use crate::ir::*;
use crate::source::Span;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

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
    /// The object is a whole array (an array variable, an array component)
    /// no subscript has selected from yet.
    pub is_array: bool,
    /// Derived type of the object (for component lookup).
    pub derived: Option<String>,
    /// The named variable the designator starts from (what escapes when it
    /// is an actual argument).
    pub base_var: Option<VarId>,
    /// Set when the place is a whole scalar variable (for value tracking).
    pub whole_var: Option<VarId>,
    /// The selectors from the root (`Access::path`); a whole array's full
    /// ranges are added when its access is emitted.
    pub path: Path,
    /// A selector made the object array-valued: a section, a vector
    /// subscript, a component of every element.
    pub section: bool,
    /// The rank of the array an `is_array` place names whole (0: not
    /// known).
    pub rank: usize,
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
pub(super) fn is_spec_kind(kind: &str) -> bool {
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
    pub header: Option<FNode<'t>>,
    pub items: &'u [FNode<'t>],
    /// Where the unit's code ends in the parser's text: its end statement's
    /// start (the unit's end without one). The directive lines before it
    /// are the unit's too, and no node in the tree when left out of the
    /// parse (`csa_grammars::code_ranges`).
    pub code_end: usize,
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
        names: vec![HashMap::default()],
        labels: HashMap::default(),
        defined_labels: HashSet::default(),
        constructs: Vec::new(),
        depth: 0,
        host_refs: HashSet::default(),
        shared_terminal: None,
        error: None,
        collectors: Vec::new(),
        entry_decls: 0,
        decl_inserts: Vec::new(),
        result_var: None,
        derived: HashMap::default(),
        implicit: scopes.implicit(scope),
        assume_external: scopes.assumes_external_names(scope),
        last_expr: FunctionBuilder::UNKNOWN,
        result_expr: None,
        ref_expr: None,
        array_read: false,
        sections: Vec::new(),
        items_level: 0,
    };
    l.declare_unit();
    l.lower_items(unit.items);
    l.omp_regions(unit.header, unit.items, unit.code_end);
    let error = l.error;
    let host_refs = std::mem::take(&mut l.host_refs);
    let inserts = std::mem::take(&mut l.decl_inserts);
    let mut f = l.b.finish();
    f.syntax_error = error;
    shift_entry_reads(&mut f, &inserts);
    crate::frontend::fold_builtin_constants(&mut f, crate::frontend::StoredConstant::OneStore);
    (f, host_refs)
}

/// How a DO variable compares with its limit while the loop runs: `Ge`
/// for a negative constant step, `Le` otherwise. A step that is not a
/// constant is taken to be positive here: the dependence analysis only
/// counts trips for constant steps.
fn step_cmp(f: &Function, step: ExprId) -> Cmp {
    match f.expr(step) {
        Expr::Int(c) if *c < 0 => Cmp::Ge,
        _ => Cmp::Le,
    }
}

/// Re-aims the `Expr::Read`s of the entry block past the `Decl`s inserted
/// at its top after they were made (`inserts`: the arena's length at each
/// insertion, in order). Reads name access instructions, which all follow
/// the `Decl`s, so each insertion moves every earlier read's instruction
/// down by one.
fn shift_entry_reads(f: &mut Function, inserts: &[u32]) {
    if inserts.is_empty() {
        return;
    }
    for (id, e) in f.exprs.iter_mut().enumerate() {
        if let Expr::Read(at) = e {
            if at.block == Function::ENTRY {
                let later = inserts.len() - inserts.partition_point(|&t| t as usize <= id);
                at.index = at.index.saturating_add(later as u32);
            }
        }
    }
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
    shared_terminal: Option<FNode<'t>>,
    /// A subtree too deep to lower.
    pub error: Option<Span>,
    /// Variables read while evaluating subscripts (address dependencies).
    pub collectors: Vec<Vec<VarId>>,
    /// Number of `Decl`s at the top of the entry block.
    entry_decls: usize,
    /// For each `Decl` inserted at the top of the entry block after
    /// lowering began (an implicitly typed local): the length of the
    /// expression arena then. The `Expr::Read`s made before it point one
    /// instruction too early (see [`shift_entry_reads`]).
    decl_inserts: Vec<u32>,
    pub result_var: Option<VarId>,
    /// Derived type name of variables of derived type.
    pub derived: HashMap<VarId, String>,
    implicit: Implicit,
    /// IMPLICIT NONE or USE in scope: undeclared names are module/host data.
    pub(super) assume_external: bool,
    /// The symbolic value of the expression `eval` last evaluated.
    pub last_expr: ExprId,
    /// Set by an `eval_inner` branch that knows its expression.
    pub result_expr: Option<ExprId>,
    /// The symbolic value of the intrinsic reference `reference` last
    /// evaluated (`mod`, `min`, `max`, `iand`, ...).
    pub ref_expr: Option<ExprId>,
    /// An array-valued designator was read since this was last cleared
    /// (how a vector subscript is recognised).
    pub array_read: bool,
    /// Open `!$omp sections` constructs, innermost last.
    sections: Vec<OpenSections>,
    /// How deep `lower_items` is nested (sections close at their level).
    items_level: u32,
}

/// A `!$omp sections` construct being lowered.
struct OpenSections {
    level: u32,
    directive: Span,
    entry: BlockId,
    sections: Vec<OmpSection>,
    /// The open section: its span and entry block.
    open: Option<(Span, BlockId)>,
}

/// What an OpenMP directive comment does to `sections` constructs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SectionsDirective {
    Open,
    Section,
    End,
}

impl<'a, 't> Lowerer<'a, 't> {
    // -----------------------------------------------------------------
    // Helpers

    pub fn span(&self, n: FNode) -> Span {
        self.cx.span(n)
    }

    fn unit_scope(&self) -> &'a Scope {
        &self.scopes.scopes[self.scope]
    }

    /// Enters a nesting level; past `MAX_DEPTH` lowers `n` as an opaque call
    /// and returns false.
    pub fn enter(&mut self, n: FNode) -> bool {
        if self.depth >= MAX_DEPTH {
            let s = self.span(n);
            self.b.push(
                InstKind::Call(Call {
                    callee: None,
                    name_span: s,
                    escapes: Vec::new(),
                    args: Vec::new(),
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
        let ty =
            d.ty.clone()
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
        vt.dims = d
            .dims
            .as_ref()
            .map(|x| x.bounds.clone())
            .unwrap_or_default();
        if d.allocatable || d.pointer {
            // deferred shape: the bounds are those of the allocation or
            // the target
            vt.dims.iter_mut().for_each(|x| *x = Dim::default());
        }
        vt.is_vla = d.is_vla() && kind != VarKind::Constant;
        vt.is_aggregate = matches!(ty, TypeSpec::Derived(_)) && !d.is_array() && !d.pointer;
        vt.pointer_or_target = d.pointer || d.target;
        vt.intent = d.intent;
        vt.assumed_shape =
            !d.allocatable && !d.pointer && d.dims.as_ref().is_some_and(|x| x.assumed_shape);
        vt.assumed_size = d.dims.as_ref().is_some_and(|x| x.assumed_size);
        if kind == VarKind::Constant {
            vt.const_value = d.const_value;
        }
        let v = self.b.add_var(Var {
            name: d.name.clone(),
            span: d.span,
            kind,
            ty: vt,
            address_taken: d.target || d.equivalenced,
            only_passed: false,
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
    fn declare_unit(&mut self) {
        let sc = self.unit_scope();
        let implicit = self.implicit.clone();
        let mut params = Vec::new();
        for (lname, spelled, span) in &sc.dummies {
            if let Some(&k) = sc.procs.get(lname) {
                self.names[0].insert(lname.clone(), Binding::Proc(k));
                params.push(None);
                continue;
            }
            let v = match sc.get(lname) {
                Some(d) => self.make_var(d, VarKind::Dummy, &implicit),
                None => {
                    let d = implicit_entry(spelled, *span);
                    self.make_var(&d, VarKind::Dummy, &implicit)
                }
            };
            self.names[0].insert(lname.clone(), Binding::Var(v));
            params.push(Some(v));
        }
        if !sc.odd_dummies {
            self.b.func_mut().params = params;
        }
        if let Some((lname, spelled, span, ty)) = &sc.result {
            if !self.names[0].contains_key(lname) {
                let mut d = match sc.get(lname) {
                    Some(d) => d.clone(),
                    None => implicit_entry(spelled, *span),
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
                    let ty =
                        d.ty.clone()
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
    fn declare_block(&mut self, spec: &[FNode<'t>], stmts: &[FNode<'t>]) {
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
        self.names.push(HashMap::default());
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
    pub fn resolve(&mut self, ident: FNode) -> Binding {
        let name = self.cx.lname_ref(ident);
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
            // IMPLICIT NONE or USE in scope: module (or host) data (an
            // array when the file shows it is one)
            let v = self.b.add_var(Var {
                name: spelled,
                span,
                kind: VarKind::Saved,
                ty: VarType {
                    scalar: ScalarTy::Unknown,
                    is_array: self.scopes.array_used.contains(&*name),
                    ..VarType::default()
                },
                address_taken: false,
                only_passed: false,
            });
            self.b.func_mut().declared_elsewhere.push(v);
            v
        } else if self.unit_scope().save_all {
            // a bare SAVE statement saves implicitly typed names too
            let d = implicit_entry(&spelled, span);
            let implicit = self.implicit.clone();
            self.make_var(&d, VarKind::Saved, &implicit)
        } else {
            let d = implicit_entry(&spelled, span);
            let implicit = self.implicit.clone();
            let v = self.make_var(&d, VarKind::Local, &implicit);
            // storage of every local comes alive at entry
            let made = self.b.func().exprs.len() as u32;
            self.decl_inserts.push(made);
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
        self.names[0].insert(name.into_owned(), Binding::Var(v));
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

    fn label_value(&self, n: FNode) -> Option<u64> {
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
    fn define_label(&mut self, n: FNode) {
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

    fn construct_name(&self, n: FNode) -> Option<String> {
        n.named_children()
            .find(|k| k.node_kind() == "block_label_start_expression")
            .and_then(|k| k.child(0))
            .map(|k| self.cx.lname(k))
    }

    // -----------------------------------------------------------------
    // Statement lists

    pub fn lower_items(&mut self, items: &[FNode<'t>]) {
        self.items_level += 1;
        self.lower_items_inner(items);
        // a `sections` without its `end sections` ends with the list
        while self
            .sections
            .last()
            .is_some_and(|s| s.level == self.items_level)
        {
            self.close_sections();
        }
        self.items_level -= 1;
    }

    fn lower_items_inner(&mut self, items: &[FNode<'t>]) {
        let mut i = 0;
        while i < items.len() {
            let n = items[i];
            if n.node_kind() == "comment" {
                if let Some(d) = self.sections_directive(n) {
                    self.on_sections_directive(d, self.span(n));
                }
                i += 1;
                continue;
            }
            if !matches!(n.node_kind(), "statement_label") && !is_spec_kind(n.node_kind()) {
                self.open_section_if_none(self.span(n));
            }
            match n.node_kind() {
                "statement_label" => {
                    // a FORMAT statement's label is not a branch target
                    let next_is_format = items
                        .get(i + 1)
                        .is_some_and(|m| m.node_kind() == "format_statement");
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

    /// The comment `n` as a directive of OpenMP `sections` constructs.
    fn sections_directive(&self, n: FNode) -> Option<SectionsDirective> {
        let text = self.cx.text.get(n.start_byte()..n.end_byte())?;
        let t = text.trim_start();
        let sentinel = t.get(..5).is_some_and(|h| {
            h.eq_ignore_ascii_case("!$omp")
                || h.eq_ignore_ascii_case("c$omp")
                || h.eq_ignore_ascii_case("*$omp")
        });
        // (the directive's words are this line's: one without the word
        // is none of these, and most are `do`, `parallel do`...)
        if !sentinel
            || !t
                .as_bytes()
                .windows(7)
                .any(|w| w.eq_ignore_ascii_case(b"section"))
        {
            return None;
        }
        let words = crate::omp::directive_words(t, crate::omp::OmpLang::Fortran)?;
        let w: Vec<&str> = words.iter().map(|w| w.as_str()).collect();
        match w.as_slice() {
            ["sections"] | ["parallel", "sections"] => Some(SectionsDirective::Open),
            ["section"] => Some(SectionsDirective::Section),
            ["end", "sections"] | ["end", "parallel", "sections"] => Some(SectionsDirective::End),
            _ => None,
        }
    }

    /// Whether a comment in a construct's body is a `sections` directive,
    /// which `lower_items` needs to see.
    fn keeps_comment(&self, n: FNode) -> bool {
        self.sections_directive(n).is_some()
    }

    fn on_sections_directive(&mut self, d: SectionsDirective, at: Span) {
        let level = self.items_level;
        let here = self.sections.last().is_some_and(|s| s.level == level);
        match d {
            SectionsDirective::Open => {
                let entry = self.b.fall_into_new_block("omp.sections.entry", Some(at));
                self.sections.push(OpenSections {
                    level,
                    directive: at,
                    entry,
                    sections: Vec::new(),
                    open: None,
                });
            }
            SectionsDirective::Section if here => {
                self.close_section();
                self.open_section(at);
            }
            SectionsDirective::End if here => self.close_sections(),
            _ => {}
        }
    }

    /// The first statement of a `sections` construct opens its first
    /// section when no `section` directive came before it.
    fn open_section_if_none(&mut self, at: Span) {
        let level = self.items_level;
        if self
            .sections
            .last()
            .is_some_and(|s| s.level == level && s.open.is_none())
        {
            self.open_section(at);
        }
    }

    fn open_section(&mut self, at: Span) {
        let entry = self.b.fall_into_new_block("omp.section.entry", Some(at));
        self.b.fall_into_new_block("omp.section.body", Some(at));
        if let Some(s) = self.sections.last_mut() {
            s.open = Some((at, entry));
        }
    }

    fn close_section(&mut self) {
        let Some((span, entry)) = self.sections.last_mut().and_then(|s| s.open.take()) else {
            return;
        };
        let exit = self.b.fall_into_new_block("omp.section.end", Some(span));
        if let Some(s) = self.sections.last_mut() {
            s.sections.push(OmpSection { span, entry, exit });
        }
    }

    fn close_sections(&mut self) {
        self.close_section();
        let Some(s) = self.sections.pop() else {
            return;
        };
        let exit = self
            .b
            .fall_into_new_block("omp.sections.end", Some(s.directive));
        self.b.func_mut().omp_sections.push(OmpSections {
            directive: s.directive,
            entry: s.entry,
            exit,
            sections: s.sections,
        });
    }

    fn lower_stmt(&mut self, n: FNode<'t>) {
        if !self.enter(n) {
            return;
        }
        if n.is_pruned() {
            // a statement of a skeleton (`Function::skeleton`) that cannot
            // jump: lowered whole, it would add instructions to the
            // current block, or to a new one after a jump (dead code)
            self.b.ensure_block();
            self.leave();
            return;
        }
        match n.node_kind() {
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
            "print_statement"
            | "write_statement"
            | "read_statement"
            | "open_statement"
            | "close_statement"
            | "inquire_statement"
            | "file_position_statement" => self.io_stmt(n),
            "stop_statement" => self.stop_stmt(n),
            "block_construct" => self.block_construct(n),
            "associate_statement" => self.associate(n),
            "allocate_statement" | "deallocate_statement" => self.alloc_stmt(n),
            "nullify_statement" => self.nullify(n),
            "coarray_statement" => self.coarray_stmt(n),
            "coarray_team_statement" | "coarray_critical_statement" => self.simple_construct(n),
            "assign_statement" => self.assign_stmt(n),
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

    #[inline(never)]
    fn nullify(&mut self, n: FNode<'t>) {
        for k in named_kids(n) {
            if k.node_kind() != "comment" {
                self.store_pointer(k);
            }
        }
    }

    #[inline(never)]
    fn coarray_stmt(&mut self, n: FNode<'t>) {
        for k in named_kids(n) {
            self.eval_children(k);
        }
        let s = self.span(n);
        let name_span = n.child(0).map_or(s, |c| self.span(c));
        self.push_call(Some("sync".into()), name_span, Vec::new(), s);
    }

    /// ASSIGN 10 TO k
    #[inline(never)]
    fn assign_stmt(&mut self, n: FNode<'t>) {
        if let Some(id) = n.named_children().find(|k| k.node_kind() == "identifier") {
            self.store(id, super::expr::Val::Other);
        }
    }

    /// Lowers what can be recognised inside an ERROR node: complete
    /// statements and labels, up to a nested program unit.
    fn error_node(&mut self, n: FNode<'t>) {
        for k in named_kids(n) {
            let kind = k.node_kind();
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

    fn assignment(&mut self, n: FNode<'t>) {
        let (Some(left), Some(right)) = (n.field(F::Left), n.field(F::Right)) else {
            self.eval_children(n);
            return;
        };
        if self.is_statement_function_def(left) {
            return;
        }
        let (v, rhs) = self.eval_expr(right);
        let builtin = match v {
            super::expr::Val::Builtin(id) => Some(id),
            _ => None,
        };
        let written = self.store_expr(left, v, rhs);
        if let (Some(id), Some(var)) = (builtin, written) {
            self.b.func_mut().builtins[id.index()].result = Some(var);
        }
    }

    fn is_statement_function_def(&self, left: FNode) -> bool {
        if left.node_kind() != "call_expression" {
            return false;
        }
        let Some(f) = left.named_child(0) else {
            return false;
        };
        if f.node_kind() != "identifier" {
            return false;
        }
        let name = self.cx.lname(f);
        match self.lookup(&name) {
            Some(b) => matches!(b, Binding::Proc(ProcKind::StatementFunction)),
            None => self.unit_scope().procs.get(&name) == Some(&ProcKind::StatementFunction),
        }
    }

    fn pointer_assoc(&mut self, n: FNode<'t>) {
        let kids: Vec<FNode> = n
            .named_children()
            .filter(|k| k.node_kind() != "comment")
            .collect();
        let (Some(&lhs), Some(&rhs)) = (kids.first(), kids.get(1)) else {
            self.eval_children(n);
            return;
        };
        if super::expr::is_designator(rhs.node_kind()) {
            if let super::expr::Desig::Place(p) = self.place(rhs) {
                if let Some(v) = p.base_var {
                    let var = &mut self.b.func_mut().vars[v.index()];
                    if !var.ty.is_pointer {
                        var.address_taken = true;
                        var.only_passed = false;
                    }
                }
            }
        } else {
            self.eval(rhs);
        }
        self.store_pointer(lhs);
    }

    /// Writes a pointer itself (`p => x`, `nullify(p)`), not its target.
    fn store_pointer(&mut self, lhs: FNode<'t>) {
        let span = self.span(lhs);
        if lhs.node_kind() == "identifier" {
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
                        path: Vec::new(),
                        rhs: None,
                    }),
                    span,
                );
            }
            return;
        }
        // a pointer component: the write goes to the object holding it
        let object = if lhs.node_kind() == "derived_type_member_expression" {
            lhs.named_child(0)
        } else {
            Some(lhs)
        };
        let Some(object) = object else { return };
        if let super::expr::Desig::Place(mut p) = self.place(object) {
            if p.index == IndexKind::Whole {
                p.index = IndexKind::Const;
            }
            if let Some(comp) = lhs
                .named_children()
                .filter(|k| k.node_kind() != "comment")
                .last()
            {
                if object != lhs && !p.is_array {
                    p.path
                        .push(Sel::Field(self.cx.lname(comp).into_boxed_str()));
                }
            }
            p.ty = ScalarTy::Pointer;
            self.emit_access(p, true, None, span);
        }
    }

    fn call_stmt(&mut self, n: FNode<'t>) {
        let span = self.span(n);
        let arglist = n
            .named_children()
            .find(|k| k.node_kind() == "argument_list");
        let Some(sub) = n.field(F::Subroutine) else {
            self.eval_children(n);
            return;
        };
        match sub.node_kind() {
            "identifier" => {
                let name = self.cx.lname(sub);
                if super::intrinsics::is_builtin_name(&name) {
                    self.builtin(sub, arglist, span, true);
                    return;
                }
                let mut escapes = Vec::new();
                let mut args = Vec::new();
                if let Some(al) = arglist {
                    self.call_args_described(al, &mut escapes, &mut args);
                }
                self.push_call_with_args(Some(name), self.span(sub), escapes, args, span);
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
                let name_span = sub
                    .named_children()
                    .find(|k| k.node_kind() == "type_member")
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
        escapes: Vec<VarId>,
        span: Span,
    ) {
        self.push_call_with_args(callee, name_span, escapes, Vec::new(), span);
    }

    /// [`Self::push_call`] with the actual arguments described.
    pub fn push_call_with_args(
        &mut self,
        callee: Option<String>,
        name_span: Span,
        mut escapes: Vec<VarId>,
        args: Vec<CallArg>,
        span: Span,
    ) {
        let mut seen = HashSet::default();
        escapes.retain(|v| seen.insert(*v));
        for v in &escapes {
            let var = &mut self.b.func_mut().vars[v.index()];
            if !var.address_taken {
                var.only_passed = true;
            }
            var.address_taken = true;
        }
        self.b.push(
            InstKind::Call(Call {
                callee,
                name_span,
                escapes,
                args,
            }),
            span,
        );
    }

    fn keyword_stmt(&mut self, n: FNode<'t>) {
        let span = self.span(n);
        let word = n
            .child(0)
            .map(|c| c.node_kind().to_ascii_lowercase())
            .unwrap_or_default();
        match word.as_str() {
            "continue" => {}
            "exit" | "cycle" => {
                let name = n
                    .named_children()
                    .find(|k| k.node_kind() == "identifier")
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
                        ConstructKind::Loop { cycle, exit: ex } => {
                            Some(if exit { ex } else { cycle })
                        }
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
                    if k.node_kind() != "comment" {
                        self.eval(k);
                    }
                }
                let r = self.b.return_block();
                self.b.terminate(TermKind::Goto(r), Some(span));
            }
            _ => self.eval_children(n),
        }
    }

    fn goto_stmt(&mut self, n: FNode<'t>, span: Span) {
        let kids: Vec<FNode> = n
            .named_children()
            .filter(|k| k.node_kind() != "comment")
            .collect();
        let refs: Vec<FNode> = kids
            .iter()
            .copied()
            .filter(|k| k.node_kind() == "statement_label_reference")
            .collect();
        let expr = kids
            .iter()
            .copied()
            .find(|k| k.node_kind() != "statement_label_reference");
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
                let assigned = refs
                    .first()
                    .is_some_and(|r| e.start_byte() < r.start_byte());
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
                    self.b
                        .terminate(TermKind::Switch { targets: t }, Some(span));
                    self.b.set_current(Some(next));
                }
            }
        }
    }

    fn stop_stmt(&mut self, n: FNode<'t>) {
        let span = self.span(n);
        for k in named_kids(n) {
            if k.node_kind() != "comment" {
                self.eval(k);
            }
        }
        let name_span = n
            .children()
            .find(|k| k.node_kind() == "stop")
            .map_or(span, |k| self.span(k));
        self.push_call(Some("stop".into()), name_span, Vec::new(), span);
        self.b.terminate(TermKind::Unreachable, Some(span));
    }

    fn io_stmt(&mut self, n: FNode<'t>) {
        let span = self.span(n);
        let kw = n.child(0);
        // upper case: procedure names are lower-cased, so no procedure can
        // be mistaken for an I/O statement (`call read(x)`)
        let callee = kw
            .map(|k| k.node_kind().to_ascii_uppercase())
            .filter(|k| k.chars().all(|c| c.is_ascii_alphabetic()))
            .unwrap_or_else(|| "IO".into());
        let name_span = kw.map_or(span, |k| self.span(k));
        let is_read = n.node_kind() == "read_statement";
        let mut escapes = Vec::new();
        let mut written: Vec<FNode<'t>> = Vec::new();
        for k in named_kids(n) {
            match k.node_kind() {
                "unit_identifier" | "format_identifier" => {
                    for e in named_kids(k) {
                        if e.node_kind() != "statement_label_reference"
                            && e.node_kind() != "comment"
                        {
                            // WRITE to an internal file: the character
                            // variable is written
                            if !is_read
                                && k.node_kind() == "unit_identifier"
                                && self.is_character_designator(e)
                            {
                                written.push(e);
                            }
                            self.actual_arg(e, Some(&mut escapes));
                        }
                    }
                }
                "keyword_argument" => {
                    if let Some(v) = k.field(F::Value) {
                        self.actual_arg(v, Some(&mut escapes));
                    }
                }
                "input_item_list" | "output_item_list" => {
                    for item in named_kids(k) {
                        if item.node_kind() == "comment" {
                            continue;
                        }
                        if is_read && item.node_kind() == "implied_do_loop_expression" {
                            self.implied_do_items(item, &mut escapes, &mut written);
                        } else {
                            if is_read && super::expr::is_designator(item.node_kind()) {
                                written.push(item);
                            }
                            self.actual_arg(item, Some(&mut escapes));
                        }
                    }
                }
                "comment" | "statement_label_reference" | "string_literal" => {}
                _ => {
                    self.actual_arg(k, Some(&mut escapes));
                }
            }
        }
        self.push_call(Some(callee), name_span, escapes, span);
        for w in written {
            self.store(w, super::expr::Val::Other);
        }
    }

    /// Whether `e` designates a CHARACTER variable (or an element of one):
    /// as the unit of a WRITE, an internal file.
    fn is_character_designator(&mut self, e: FNode<'t>) -> bool {
        if !super::expr::is_designator(e.node_kind()) {
            return false;
        }
        let mut base = e;
        while let Some(first) = base.named_children().find(|k| k.node_kind() != "comment") {
            if base.node_kind() == "identifier" || !super::expr::is_designator(base.node_kind()) {
                break;
            }
            base = first;
        }
        if base.node_kind() != "identifier" {
            return false;
        }
        match self.lookup(&self.cx.lname_ref(base)) {
            Some(Binding::Var(v)) => self.b.func().var(*v).ty.scalar == ScalarTy::Char,
            _ => false,
        }
    }

    /// `(a(i), i = 1, n)` in a READ list: bounds, the index, the items (all
    /// written by the library).
    fn implied_do_items(
        &mut self,
        n: FNode<'t>,
        escapes: &mut Vec<VarId>,
        written: &mut Vec<FNode<'t>>,
    ) {
        if !self.enter(n) {
            return;
        }
        // the index and its bounds first, then the items
        let mut kids = named_kids(n);
        kids.sort_by_key(|k| k.node_kind() != "loop_control_expression");
        for k in kids {
            match k.node_kind() {
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
                    if super::expr::is_designator(k.node_kind()) {
                        written.push(k);
                    }
                    self.actual_arg(k, Some(escapes));
                }
            }
        }
        self.leave();
    }

    fn alloc_stmt(&mut self, n: FNode<'t>) {
        let span = self.span(n);
        let mut escapes = Vec::new();
        for k in named_kids(n) {
            match k.node_kind() {
                "sized_allocation" | "coarray_allocation" => {
                    for part in named_kids(k) {
                        match part.node_kind() {
                            "size" | "coarray_size" => self.eval_children(part),
                            "comment" => {}
                            _ => {
                                self.actual_arg(part, Some(&mut escapes));
                            }
                        }
                    }
                }
                "keyword_argument" => {
                    let name = k
                        .field(F::Name)
                        .map(|x| self.cx.lname(x))
                        .unwrap_or_default();
                    if let Some(v) = k.field(F::Value) {
                        if name == "source" || name == "mold" {
                            self.eval(v);
                        } else {
                            self.actual_arg(v, Some(&mut escapes));
                        }
                    }
                }
                "intrinsic_type" | "comment" => {}
                _ => {
                    self.actual_arg(k, Some(&mut escapes));
                }
            }
        }
        let callee = if n.node_kind() == "allocate_statement" {
            "allocate"
        } else {
            "deallocate"
        };
        let name_span = n.child(0).map_or(span, |c| self.span(c));
        self.push_call(Some(callee.into()), name_span, escapes, span);
    }

    // -----------------------------------------------------------------
    // IF

    fn if_stmt(&mut self, n: FNode<'t>) {
        let p = self.if_parts(n);
        let Some(cond) = p.cond else {
            self.eval_children(n);
            return;
        };
        if p.logical {
            self.logical_if(&p, cond);
        } else {
            self.block_if(&p, cond);
        }
    }

    /// Splits an IF statement or construct into its parts.
    #[inline(never)]
    fn if_parts(&mut self, n: FNode<'t>) -> Box<IfParts<'t>> {
        let kids = all_kids(n);
        let mut p = Box::new(IfParts {
            origin: self.span(n),
            name: None,
            logical: !kids.iter().any(|k| k.node_kind() == "then"),
            cond: None,
            then_items: Vec::new(),
            elseifs: Vec::new(),
            else_items: None,
            end_label: None,
        });
        let paren = kids
            .iter()
            .copied()
            .find(|k| k.node_kind() == "parenthesized_expression");
        p.cond = paren.map(|c| first_expr(c).unwrap_or(c));
        let Some(paren) = paren else {
            return p;
        };
        if p.logical {
            // `if (c) stmt`
            p.then_items = kids
                .iter()
                .copied()
                .filter(|k| k.is_named() && k.start_byte() >= paren.end_byte())
                .filter(|k| k.node_kind() != "comment")
                .take(1)
                .collect();
            return p;
        }
        p.name = self.construct_name(n);
        let mut after_then = false;
        let mut has_else = false;
        for k in kids.iter().copied() {
            if !k.is_named() {
                if k.node_kind() == "then" {
                    after_then = true;
                }
                continue;
            }
            match k.node_kind() {
                "elseif_clause" => {
                    let ekids = all_kids(k);
                    let eparen = ekids
                        .iter()
                        .copied()
                        .find(|x| x.node_kind() == "parenthesized_expression");
                    let items = ekids
                        .iter()
                        .copied()
                        .filter(|x| {
                            x.is_named()
                                && Some(*x) != eparen
                                && x.node_kind() != "block_label"
                                && (x.node_kind() != "comment" || self.keeps_comment(*x))
                        })
                        .collect();
                    p.elseifs.push(ElseIf {
                        origin: self.span(k),
                        cond: eparen.map(|c| first_expr(c).unwrap_or(c)),
                        items,
                    });
                }
                "else_clause" => {
                    has_else = true;
                    p.else_items = Some(
                        k.named_children()
                            .filter(|x| {
                                x.node_kind() != "block_label"
                                    && (x.node_kind() != "comment" || self.keeps_comment(*x))
                            })
                            .collect(),
                    );
                }
                "end_if_statement" | "block_label_start_expression" | "block_label" => {}
                "comment" if !self.keeps_comment(k) => {}
                "parenthesized_expression" if !after_then => {}
                "statement_label" if !p.elseifs.is_empty() || has_else => p.end_label = Some(k),
                _ if after_then && p.elseifs.is_empty() && !has_else => p.then_items.push(k),
                _ => {}
            }
        }
        if p.end_label.is_none()
            && p.elseifs.is_empty()
            && !has_else
            && p.then_items
                .last()
                .is_some_and(|k| k.node_kind() == "statement_label")
        {
            p.end_label = p.then_items.pop();
        }
        p
    }

    /// Evaluates a condition and branches to a new `if.then` block (made
    /// current) or to `else_` (a new `if.else` when `has_else`, else the
    /// join). Returns (else block, join block).
    #[inline(never)]
    fn if_branch(&mut self, cond: Option<FNode<'t>>, origin: Span, has_else: bool) -> [BlockId; 2] {
        let (cspan, cexpr) = match cond {
            Some(c) => {
                self.eval(c);
                (self.span(c), Some(self.last_expr))
            }
            None => (origin, None),
        };
        let then_b = self.b.new_block("if.then", Some(origin));
        let else_b = has_else.then(|| self.b.new_block("if.else", Some(origin)));
        let end_b = self.b.new_block("if.end", Some(origin));
        let else_target = else_b.unwrap_or(end_b);
        self.b.branch(then_b, else_target, cexpr, Some(cspan));
        self.b.set_current(Some(then_b));
        [else_target, end_b]
    }

    fn logical_if(&mut self, p: &IfParts<'t>, cond: FNode<'t>) {
        let [_, end_b] = self.if_branch(Some(cond), p.origin, false);
        if let Some(s) = p.then_items.first() {
            self.lower_stmt(*s);
        }
        self.b.goto_if_open(end_b);
        self.b.set_current(Some(end_b));
    }

    fn block_if(&mut self, p: &IfParts<'t>, cond: FNode<'t>) {
        let has_else = !p.elseifs.is_empty() || p.else_items.is_some();
        let [mut cur_else, end_b] = self.if_branch(Some(cond), p.origin, has_else);
        self.constructs.push(Construct {
            name: p.name.clone(),
            kind: ConstructKind::Other {
                end: Some(end_b),
                origin: p.origin,
            },
        });
        self.lower_items(&p.then_items);
        self.b.goto_if_open(end_b);
        // ELSE IF chains nest: each has its own join, jumping to the outer one
        let mut ends = vec![end_b];
        for (i, ei) in p.elseifs.iter().enumerate() {
            self.b.set_current(Some(cur_else));
            let more = i + 1 < p.elseifs.len() || p.else_items.is_some();
            let [else_i, end_i] = self.if_branch(ei.cond, ei.origin, more);
            self.lower_items(&ei.items);
            self.b.goto_if_open(end_i);
            ends.push(end_i);
            cur_else = else_i;
        }
        if let Some(items) = &p.else_items {
            self.b.set_current(Some(cur_else));
            self.lower_items(items);
            if let Some(&last) = ends.last() {
                self.b.goto_if_open(last);
            }
        }
        for w in ends.windows(2).rev() {
            self.b.set_current(Some(w[1]));
            self.b.goto_if_open(w[0]);
        }
        self.constructs.pop();
        self.b.set_current(Some(end_b));
        if let Some(l) = p.end_label {
            self.define_label(l);
        }
    }

    fn arith_if(&mut self, n: FNode<'t>) {
        let kids = named_kids(n);
        let paren = kids
            .iter()
            .copied()
            .find(|k| k.node_kind() == "parenthesized_expression");
        let cond = paren.map(|p| first_expr(p).unwrap_or(p));
        if let Some(c) = cond {
            self.eval(c);
        }
        let values: Vec<u64> = kids
            .iter()
            .copied()
            .filter(|k| k.node_kind() == "statement_label_reference")
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

    fn select(&mut self, n: FNode<'t>) {
        let p = self.select_parts(n);
        let [epilog] = self.select_switch(&p);
        self.constructs.push(Construct {
            name: p.name.clone(),
            kind: ConstructKind::Other {
                end: Some(epilog),
                origin: p.origin,
            },
        });
        let mut scope = HashMap::default();
        if let Some((an, pl)) = &p.alias {
            scope.insert(an.clone(), Binding::Alias(pl.clone()));
        }
        self.names.push(scope);
        for (items, bb) in p.cases.iter().zip(&p.blocks) {
            self.b.set_current(Some(*bb));
            self.lower_items(items);
            self.b.goto_if_open(epilog);
        }
        self.names.pop();
        self.constructs.pop();
        self.b.set_current(Some(epilog));
        if let Some(l) = p.end_label {
            self.define_label(l);
        }
    }

    /// Splits a SELECT construct into its cases and evaluates the selector.
    #[inline(never)]
    fn select_parts(&mut self, n: FNode<'t>) -> Box<SelectParts<'t>> {
        let origin = self.span(n);
        let kids = named_kids(n);
        let mut p = Box::new(SelectParts {
            origin,
            name: self.construct_name(n),
            sel_span: origin,
            alias: None,
            cases: Vec::new(),
            defaults: Vec::new(),
            blocks: Vec::new(),
            end_label: None,
        });
        if let Some(s) = kids.iter().copied().find(|k| k.node_kind() == "selector") {
            p.sel_span = self.span(s);
            match s.named_children().find(|k| k.node_kind() != "comment") {
                Some(pa) if pa.node_kind() == "pointer_association_statement" => {
                    // SELECT TYPE (a => obj): `a` names the selector
                    let parts: Vec<FNode> = pa
                        .named_children()
                        .filter(|k| k.node_kind() != "comment")
                        .collect();
                    if let (Some(an), Some(obj)) = (parts.first(), parts.get(1)) {
                        p.sel_span = self.span(*obj);
                        if let Some(pl) = self.alias_place(*obj) {
                            p.alias = Some((self.cx.lname(*an), pl));
                        }
                    }
                }
                Some(e) => {
                    p.sel_span = self.span(e);
                    if n.node_kind() != "select_case_statement"
                        && super::expr::is_designator(e.node_kind())
                    {
                        // SELECT TYPE (x): the dynamic type is inspected
                        self.place(e);
                    } else {
                        self.eval(e);
                    }
                }
                None => {}
            }
        }
        let mut stack: Vec<FNode<'t>> = kids.iter().rev().copied().collect();
        while let Some(k) = stack.pop() {
            match k.node_kind() {
                "case_statement" | "type_statement" | "rank_statement" => {
                    p.defaults
                        .push(named_kids(k).iter().any(|x| x.node_kind() == "default"));
                    let s = self.span(k);
                    p.blocks.push(self.b.new_block("sw.bb", Some(s)));
                    p.cases.push(case_items(k));
                }
                "statement_label" => p.end_label = Some(k),
                c if is_preproc_container(c) => {
                    for x in preproc_body(k).into_iter().rev() {
                        stack.push(x);
                    }
                }
                _ => {}
            }
        }
        p
    }

    /// Ends the block with the switch: one target per case in order, the
    /// default (or the epilog) last. Returns the epilog.
    #[inline(never)]
    fn select_switch(&mut self, p: &SelectParts<'t>) -> [BlockId; 1] {
        let epilog = self.b.new_block("sw.epilog", Some(p.origin));
        let mut targets: Vec<BlockId> = Vec::new();
        let mut default = None;
        for (&is_default, &bb) in p.defaults.iter().zip(&p.blocks) {
            if is_default {
                default.get_or_insert(bb);
            } else {
                targets.push(bb);
            }
        }
        targets.push(default.unwrap_or(epilog));
        self.b
            .terminate(TermKind::Switch { targets }, Some(p.sel_span));
        [epilog]
    }

    // -----------------------------------------------------------------
    // DO

    fn do_loop(&mut self, n: FNode<'t>) {
        let parts = self.do_parts(n);
        if parts.ds.is_none() {
            self.lower_items(&parts.body);
            return;
        }
        let (kind, header, body_entry) = match parts.control.map(|c| c.node_kind()) {
            Some("loop_control_expression") => self.do_counted(&parts),
            Some("while_statement") => self.do_while(&parts),
            Some("concurrent_statement") => self.do_concurrent(&parts),
            _ => self.do_forever(&parts),
        };
        if let Some(l) = self.b.func_mut().source_loops.get_mut(parts.slot) {
            l.kind = kind;
            l.header = header;
            l.body_entry = body_entry;
        }
    }

    /// Splits a DO construct into its parts and reserves its source-loop
    /// slot (source loops are listed outer first). Kept out of the
    /// recursive path so that deep nests use little stack.
    #[inline(never)]
    fn do_parts(&mut self, n: FNode<'t>) -> Box<DoParts<'t>> {
        let inherited = self.shared_terminal.take();
        let mut parts = Box::new(DoParts {
            name: None,
            ds: None,
            control: None,
            body: Vec::new(),
            pass_down: None,
            terminal: None,
            span: self.span(n),
            slot: 0,
        });
        let mut end = None;
        for k in named_kids(n) {
            match k.node_kind() {
                "block_label_start_expression" if parts.ds.is_none() => {
                    parts.name = k.child(0).map(|c| self.cx.lname(c))
                }
                "do_statement" if parts.ds.is_none() => parts.ds = Some(k),
                "end_do_loop_statement" | "end_do_label_loop_statement" => end = Some(k),
                "comment" if !self.keeps_comment(k) => {}
                _ if end.is_none() => parts.body.push(k),
                _ => {}
            }
        }
        let Some(ds) = parts.ds else {
            return parts;
        };
        // The terminal statement of a labelled DO. With a shared label the
        // parser attaches it to the outermost DO of the nest; it belongs to
        // the innermost one.
        let own_virtual = end.is_some_and(ends_virtually_end);
        let last_is_shared = parts.body.last().is_some_and(|b| ends_virtually(*b));
        if let Some(e) = end.filter(|e| e.node_kind() == "end_do_label_loop_statement") {
            let source = if own_virtual { inherited } else { Some(e) };
            if last_is_shared {
                parts.pass_down = source;
            } else {
                let label = if own_virtual {
                    e.field(F::DoLabel)
                } else {
                    source.and_then(|t| t.field(F::DoLabel))
                };
                parts.terminal = Some((label, source.and_then(terminal_statement)));
            }
        }
        if own_virtual {
            if let Some((_, Some(stmt))) = parts.terminal {
                parts.span = parts.span.cover(self.span(stmt));
            }
        }
        let keyword_span = ds
            .child(0)
            .filter(|c| c.node_kind() == "do")
            .map_or(self.span(ds), |c| self.span(c));
        let (omp, ivdep) = self.directives_before(n);
        parts.control = ds.named_children().find(|k| {
            matches!(
                k.node_kind(),
                "loop_control_expression" | "while_statement" | "concurrent_statement"
            )
        });
        parts.slot = self.b.add_source_loop(SourceLoop {
            kind: LoopKind::FortranDoForever,
            span: parts.span,
            keyword_span,
            header: Function::ENTRY,
            body_entry: None,
            unrolled: false,
            omp,
            ivdep,
            control: None,
        });
        parts
    }

    /// The body of a DO and its labelled terminal statement.
    fn do_body(&mut self, p: &DoParts<'t>) {
        if let Some((last, rest)) = p.body.split_last() {
            self.lower_items(rest);
            self.shared_terminal = p.pass_down;
            self.lower_items(std::slice::from_ref(last));
            self.shared_terminal = None;
        }
        if let Some((label, stmt)) = p.terminal {
            if let Some(l) = label {
                self.define_label(l);
            }
            if let Some(s) = stmt {
                self.lower_stmt(s);
            }
        }
    }

    fn push_loop(&mut self, name: &Option<String>, cycle: BlockId, exit: BlockId) {
        self.constructs.push(Construct {
            name: name.clone(),
            kind: ConstructKind::Loop { cycle, exit },
        });
    }

    /// `do.cond`, `do.body`, `do.inc`, `do.end` of a counted loop; enters
    /// the header (which only tests the trip count) and leaves the body
    /// current.
    #[inline(never)]
    fn counted_blocks(&mut self, span: Span, ds: Option<FNode>) -> [BlockId; 4] {
        let cond = self.b.new_block("do.cond", Some(span));
        let body = self.b.new_block("do.body", Some(span));
        let inc = self.b.new_block("do.inc", Some(span));
        let end = self.b.new_block("do.end", Some(span));
        self.b.enter(cond);
        let cspan = ds.map_or(span, |d| self.span(d));
        self.b.terminate(
            TermKind::Branch {
                then: body,
                else_: end,
            },
            Some(cspan),
        );
        self.b.set_current(Some(body));
        [cond, body, inc, end]
    }

    /// Preheader of a counted DO: bounds and step, then the loop variable's
    /// initial value. Returns the loop variable's node and the control's
    /// expressions (first value, limit, step; the step is 1 when absent).
    #[inline(never)]
    fn counted_init(&mut self, control: Option<FNode<'t>>) -> (Option<FNode<'t>>, [ExprId; 3]) {
        let parts: Vec<FNode> = control
            .map(named_kids)
            .unwrap_or_default()
            .into_iter()
            .filter(|k| k.node_kind() != "comment")
            .collect();
        let mut first_val = super::expr::Val::Other;
        let mut es = [FunctionBuilder::UNKNOWN; 3];
        for (i, p) in parts.iter().enumerate().skip(1) {
            let (v, e) = self.eval_expr(*p);
            if i == 1 {
                first_val = v;
            }
            if let Some(slot) = es.get_mut(i - 1) {
                *slot = e;
            }
        }
        if parts.len() < 4 {
            es[2] = self.b.expr(Expr::Int(1));
        }
        let var = parts.first().copied();
        if let Some(v) = var {
            self.store_expr(v, first_val, es[0]);
        }
        (var, es)
    }

    /// The latch of a counted DO: the loop variable's update `v = v + step`
    /// (the step as evaluated in the preheader).
    #[inline(never)]
    fn counted_latch(&mut self, inc: BlockId, cond: BlockId, var: Option<FNode<'t>>, step: ExprId) {
        self.b.goto_if_open(inc);
        self.b.set_current(Some(inc));
        if let Some(v) = var {
            let (_, cur) = self.eval_expr(v);
            let next = self.b.expr(Expr::Bin(BinOp::Add, cur, step));
            self.store_expr(v, super::expr::Val::Other, next);
        }
        self.b.terminate(TermKind::Goto(cond), None);
    }

    fn do_counted(&mut self, p: &DoParts<'t>) -> (LoopKind, BlockId, Option<BlockId>) {
        let (var, [init, limit, step]) = self.counted_init(p.control);
        let [cond, body, inc, end] = self.counted_blocks(p.span, p.ds);
        self.push_loop(&p.name, inc, end);
        self.do_body(p);
        self.constructs.pop();
        self.counted_latch(inc, cond, var, step);
        self.b.set_current(Some(end));
        // the control, when the variable is a plain scalar
        let var = var.and_then(|v| match self.lookup(&self.cx.lname_ref(v)) {
            Some(Binding::Var(x)) if v.node_kind() == "identifier" => Some(*x),
            _ => None,
        });
        if let Some(var) = var {
            let cmp = step_cmp(self.b.func(), step);
            if let Some(sl) = self.b.func_mut().source_loops.get_mut(p.slot) {
                sl.control = Some(LoopControl {
                    var,
                    init,
                    limit,
                    cmp,
                    step,
                    bounds_once: true,
                });
            }
        }
        (LoopKind::FortranDo, cond, Some(body))
    }

    /// The header of a DO WHILE: evaluates the condition.
    #[inline(never)]
    fn while_header(&mut self, p: &DoParts<'t>) -> [BlockId; 3] {
        let cond = self.b.new_block("do.cond", Some(p.span));
        self.b.enter(cond);
        let paren = p.control.and_then(|c| {
            c.named_children()
                .find(|k| k.node_kind() == "parenthesized_expression")
        });
        let expr = paren.map(|e| first_expr(e).unwrap_or(e));
        if let Some(e) = expr {
            self.eval(e);
        }
        let body = self.b.new_block("do.body", Some(p.span));
        let end = self.b.new_block("do.end", Some(p.span));
        let cspan = match (expr, p.ds) {
            (Some(e), _) | (None, Some(e)) => self.span(e),
            (None, None) => p.span,
        };
        self.b.terminate(
            TermKind::Branch {
                then: body,
                else_: end,
            },
            Some(cspan),
        );
        self.b.set_current(Some(body));
        [cond, body, end]
    }

    fn do_while(&mut self, p: &DoParts<'t>) -> (LoopKind, BlockId, Option<BlockId>) {
        let [cond, body, end] = self.while_header(p);
        self.push_loop(&p.name, cond, end);
        self.do_body(p);
        self.constructs.pop();
        self.b.goto_if_open(cond);
        self.b.set_current(Some(end));
        (LoopKind::FortranDoWhile, cond, Some(body))
    }

    fn do_forever(&mut self, p: &DoParts<'t>) -> (LoopKind, BlockId, Option<BlockId>) {
        let body = self.b.new_block("do.body", Some(p.span));
        let end = self.b.new_block("do.end", Some(p.span));
        self.b.enter(body);
        self.push_loop(&p.name, body, end);
        self.do_body(p);
        self.constructs.pop();
        self.b.goto_if_open(body);
        self.b.set_current(Some(end));
        let kind = if p
            .control
            .is_some_and(|c| c.node_kind() == "concurrent_statement")
        {
            LoopKind::FortranDoConcurrent
        } else {
            LoopKind::FortranDoForever
        };
        (kind, body, Some(body))
    }

    /// `do concurrent (i = a:b[:s], j = ..., mask)`: one nested loop per
    /// index (as gfortran emits it); every bound evaluated before the nest.
    fn do_concurrent(&mut self, p: &DoParts<'t>) -> (LoopKind, BlockId, Option<BlockId>) {
        let levels = self.concurrent_open(p);
        if levels.is_empty() {
            let r = self.do_forever(p);
            self.names.pop();
            return r;
        }
        let (outer_cond, outer_end) = (levels[0].cond, levels[0].end);
        let (inner_body, inner_inc) = (levels[levels.len() - 1].body, levels[levels.len() - 1].inc);
        self.concurrent_mask(p, inner_inc);
        self.push_loop(&p.name, inner_inc, outer_end);
        self.do_body(p);
        self.constructs.pop();
        self.concurrent_close(&levels);
        self.names.pop();
        (LoopKind::FortranDoConcurrent, outer_cond, Some(inner_body))
    }

    /// Evaluates the bounds of every index, declares the (construct-scoped)
    /// index variables in a new binding scope and opens the loop nest.
    #[inline(never)]
    fn concurrent_open(&mut self, p: &DoParts<'t>) -> Vec<Level> {
        let header = p.control.and_then(|c| {
            c.named_children()
                .find(|k| k.node_kind() == "concurrent_header")
        });
        let controls: Vec<FNode> = header
            .map(named_kids)
            .unwrap_or_default()
            .into_iter()
            .filter(|k| k.node_kind() == "concurrent_control")
            .collect();
        self.names.push(HashMap::default());
        let mut vars = Vec::new();
        let mut firsts = Vec::new();
        let mut controls_e = Vec::new();
        for ctl in &controls {
            let first = ctl.field(F::Initial).map(|e| self.eval_expr(e));
            let mut es = [FunctionBuilder::UNKNOWN, FunctionBuilder::UNKNOWN];
            for (k, f) in [F::Final, F::Step].into_iter().enumerate() {
                if let Some(e) = ctl.field(f) {
                    es[k] = self.eval_expr(e).1;
                } else if f == F::Step {
                    es[k] = self.b.expr(Expr::Int(1));
                }
            }
            controls_e.push((
                first.map_or(FunctionBuilder::UNKNOWN, |f| f.1),
                es[0],
                es[1],
            ));
            firsts.push(first.map_or(super::expr::Val::Other, |f| f.0));
            let id = (*ctl)
                .named_children()
                .find(|k| k.node_kind() == "identifier");
            let v = id.map(|id| {
                let sp = self.span(id);
                let v = self.b.add_var(Var {
                    name: self.cx.text(id).trim().to_string(),
                    span: sp,
                    kind: VarKind::Local,
                    ty: VarType::default(),
                    address_taken: false,
                    only_passed: false,
                });
                let top = self.names.len() - 1;
                self.names[top].insert(self.cx.lname(id), Binding::Var(v));
                (v, sp)
            });
            vars.push(v);
        }
        let mut levels = Vec::new();
        for (i, v) in vars.iter().enumerate() {
            let (init, limit, step) = controls_e[i];
            if let Some((var, sp)) = v {
                let val = std::mem::replace(&mut firsts[i], super::expr::Val::Other);
                self.write_var_rhs(*var, val, init, *sp);
            }
            let [cond, body, inc, end] = self.counted_blocks(p.span, p.ds);
            levels.push(Level {
                cond,
                body,
                inc,
                var: *v,
                end,
                step,
            });
            // the outermost index is the source loop's control
            if let (0, Some((var, _))) = (i, v) {
                let cmp = step_cmp(self.b.func(), step);
                if let Some(sl) = self.b.func_mut().source_loops.get_mut(p.slot) {
                    sl.control = Some(LoopControl {
                        var: *var,
                        init,
                        limit,
                        cmp,
                        step,
                        bounds_once: true,
                    });
                }
            }
        }
        levels
    }

    /// The mask of a DO CONCURRENT: false skips to the latch.
    #[inline(never)]
    fn concurrent_mask(&mut self, p: &DoParts<'t>, inner_inc: BlockId) {
        let mask = p
            .control
            .and_then(|c| {
                c.named_children()
                    .find(|k| k.node_kind() == "concurrent_header")
            })
            .and_then(|h| {
                h.named_children()
                    .find(|k| k.node_kind() == "concurrent_mask")
            });
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
    }

    #[inline(never)]
    fn concurrent_close(&mut self, levels: &[Level]) {
        for lvl in levels.iter().rev() {
            self.b.goto_if_open(lvl.inc);
            self.b.set_current(Some(lvl.inc));
            if let Some((var, sp)) = lvl.var {
                let at = self.read_var(var, sp);
                let cur = self.b.expr(Expr::Read(at));
                let next = self.b.expr(Expr::Bin(BinOp::Add, cur, lvl.step));
                self.write_var_rhs(var, super::expr::Val::Other, next, sp);
            }
            self.b.terminate(TermKind::Goto(lvl.cond), None);
            self.b.set_current(Some(lvl.end));
        }
    }

    /// The unit's `!$omp parallel` regions (those of its internal
    /// procedures too; they hold none of its loops), read from its text up
    /// to `end` (its end statement's start).
    fn omp_regions(&mut self, header: Option<FNode>, items: &[FNode], end: usize) {
        let Some(start) = header
            .or_else(|| items.first().copied())
            .map(|n| n.start_byte())
        else {
            return;
        };
        let directives = super::directives::omp_directives(self.cx.text, start, end);
        let names = super::directives::directive_names(self.cx.text, &directives);
        for r in super::directives::parallel_regions_of(self.cx.text, end, &directives, &names) {
            let region = OmpRegion {
                directive: self.cx.span_bytes(r.directive.0, r.directive.1),
                body: self.cx.span_bytes(r.body.0, r.body.1),
            };
            self.b.func_mut().omp_regions.push(region);
        }
        for r in super::directives::sync_regions_of(self.cx.text, end, &directives, &names) {
            let sync = OmpSync {
                lock: r.lock,
                directive: self.cx.span_bytes(r.directive.0, r.directive.1),
                body: self.cx.span_bytes(r.body.0, r.body.1),
            };
            self.b.func_mut().omp_sync.push(sync);
        }
        // the unit's own directives: not those of its internal procedures
        let own_end = items
            .iter()
            .find(|n| matches!(n.node_kind(), "internal_procedures" | "contains_statement"))
            .map_or(end, |n| n.start_byte());
        // (a directive is comment lines: one that starts before `own_end`,
        // the start of a statement, ends before it)
        for &(s, e) in directives.iter().filter(|d| d.0 < own_end) {
            let span = self.cx.span_bytes(s, e);
            self.b.func_mut().omp_directives.push(span);
        }
    }

    /// OpenMP and ivdep directive comments right before a DO (only blank
    /// lines and other comments in between), found in the text.
    fn directives_before(&self, n: FNode) -> (Option<Span>, Option<Span>) {
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
        let (omp, ivdep) = super::directives::before_loop(text, line_start);
        let span = |(s, e)| self.cx.span_bytes(s, e);
        (omp.map(span), ivdep.map(span))
    }

    // -----------------------------------------------------------------
    // Other constructs

    fn block_construct(&mut self, n: FNode<'t>) {
        let name = self.construct_name(n);
        let origin = self.span(n);
        let mut spec = Vec::new();
        let mut stmts = Vec::new();
        for k in named_kids(n) {
            match k.node_kind() {
                "block_label_start_expression" | "end_block_construct_statement" => {}
                "comment" => {
                    if self.keeps_comment(k) {
                        stmts.push(k);
                    }
                }
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
    fn simple_construct(&mut self, n: FNode<'t>) {
        let name = self.construct_name(n);
        let origin = self.span(n);
        let items: Vec<FNode> = n
            .named_children()
            .filter(|k| {
                !matches!(
                    k.node_kind(),
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

    fn associate(&mut self, n: FNode<'t>) {
        let name = self.construct_name(n);
        let origin = self.span(n);
        let mut bindings = HashMap::default();
        let mut items = Vec::new();
        for k in named_kids(n) {
            match k.node_kind() {
                "association_list" => {
                    for a in named_kids(k) {
                        if a.node_kind() != "association" {
                            continue;
                        }
                        let (Some(an), Some(sel)) = (a.field(F::Name), a.field(F::Selector)) else {
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
                                    kind: VarKind::Local,
                                    ty: VarType {
                                        scalar: ScalarTy::Unknown,
                                        ..VarType::default()
                                    },
                                    address_taken: false,
                                    only_passed: false,
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
    fn where_stmt(&mut self, n: FNode<'t>) {
        for k in named_kids(n) {
            match k.node_kind() {
                "parenthesized_expression" => {
                    if let Some(e) = first_expr(k) {
                        self.eval(e);
                    }
                }
                "elsewhere_clause" => {
                    for c in named_kids(k) {
                        match c.node_kind() {
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
    fn forall_stmt(&mut self, n: FNode<'t>) {
        self.names.push(HashMap::default());
        let mut body = Vec::new();
        for k in named_kids(n) {
            match k.node_kind() {
                "triplet_spec" => {
                    let parts = named_kids(k);
                    for p in parts.iter().skip(1) {
                        if p.node_kind() != "comment" {
                            self.eval(*p);
                        }
                    }
                    if let Some(id) = parts.first().filter(|p| p.node_kind() == "identifier") {
                        let v = self.b.add_var(Var {
                            name: self.cx.text(*id).trim().to_string(),
                            span: self.span(*id),
                            kind: VarKind::Local,
                            ty: VarType::default(),
                            address_taken: false,
                            only_passed: false,
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
        self.write_var_rhs(v, val, FunctionBuilder::UNKNOWN, span);
    }

    /// Writes a whole scalar variable with the symbolic value `rhs`.
    pub fn write_var_rhs(&mut self, v: VarId, val: super::expr::Val, rhs: ExprId, span: Span) {
        let ty = self.elem_ty(v);
        self.b.push(
            InstKind::Access(Access {
                write: true,
                target: AccessTarget::Var(v),
                index: IndexKind::Whole,
                addr_vars: Vec::new(),
                ty,
                value: Some(val.to_value_src()),
                path: Vec::new(),
                rhs: Some(rhs),
            }),
            span,
        );
    }

    pub fn read_var(&mut self, v: VarId, span: Span) -> InstRef {
        let ty = self.elem_ty(v);
        self.b.push_at(
            InstKind::Access(Access {
                write: false,
                target: AccessTarget::Var(v),
                index: IndexKind::Whole,
                addr_vars: Vec::new(),
                ty,
                value: None,
                path: Vec::new(),
                rhs: None,
            }),
            span,
        )
    }
}

/// The parts of an IF statement or construct.
struct IfParts<'t> {
    origin: Span,
    name: Option<String>,
    /// `if (c) stmt` (the statement is the only `then_items` entry).
    logical: bool,
    cond: Option<FNode<'t>>,
    then_items: Vec<FNode<'t>>,
    elseifs: Vec<ElseIf<'t>>,
    else_items: Option<Vec<FNode<'t>>>,
    /// A label on END IF: defined at the join.
    end_label: Option<FNode<'t>>,
}

struct ElseIf<'t> {
    origin: Span,
    cond: Option<FNode<'t>>,
    items: Vec<FNode<'t>>,
}

/// The parts of a SELECT construct.
struct SelectParts<'t> {
    origin: Span,
    name: Option<String>,
    sel_span: Span,
    /// SELECT TYPE (a => obj).
    alias: Option<(String, Place)>,
    /// Statements of each case, in source order.
    cases: Vec<Vec<FNode<'t>>>,
    defaults: Vec<bool>,
    blocks: Vec<BlockId>,
    end_label: Option<FNode<'t>>,
}

/// The statements of a CASE / TYPE IS / RANK block.
fn case_items(c: FNode) -> Vec<FNode> {
    c.children()
        .filter(|k| {
            k.is_named()
                && k.field_id() == 0
                && !matches!(
                    k.node_kind(),
                    "case_value_range_list"
                        | "default"
                        | "block_label"
                        | "comment"
                        | "assumed_size"
                )
        })
        .collect()
}

/// The parts of a DO construct.
struct DoParts<'t> {
    name: Option<String>,
    ds: Option<FNode<'t>>,
    control: Option<FNode<'t>>,
    body: Vec<FNode<'t>>,
    /// The terminal statement to hand to the last (inner, shared-label) DO.
    pass_down: Option<FNode<'t>>,
    /// (label, statement) this DO executes last in its body.
    terminal: Option<(Option<FNode<'t>>, Option<FNode<'t>>)>,
    span: Span,
    slot: usize,
}

/// A level of a DO CONCURRENT nest.
struct Level {
    cond: BlockId,
    body: BlockId,
    inc: BlockId,
    var: Option<(VarId, Span)>,
    end: BlockId,
    /// The index's step (1 when absent).
    step: ExprId,
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
fn implicit_entry(name: &str, span: Span) -> DeclEntry {
    DeclEntry::new(name, span)
}

/// The expression inside parentheses.
pub(super) fn first_expr(n: FNode) -> Option<FNode> {
    n.named_children().find(|k| k.node_kind() != "comment")
}

/// Whether a DO construct ends on a shared label that an enclosing DO's
/// terminal statement closes.
fn ends_virtually(n: FNode) -> bool {
    if n.node_kind() != "do_loop" {
        return false;
    }
    n.named_children()
        .filter(|k| k.node_kind() != "comment")
        .last()
        .is_some_and(ends_virtually_end)
}

fn ends_virtually_end(e: FNode) -> bool {
    e.node_kind() == "end_do_label_loop_statement"
        && e.field(F::DoLabel)
            .is_some_and(|l| l.node_kind() == "do_label_virtual")
}

/// The statement of a labelled DO's terminal line (None for `END DO`).
fn terminal_statement(e: FNode) -> Option<FNode> {
    e.children().find(|k| {
        k.field_id() == 0 && k.is_named() && !matches!(k.node_kind(), "comment" | "block_label")
    })
}
