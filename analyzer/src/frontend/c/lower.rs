//! Lowering of one C function: declarations, scopes and statements, with
//! clang's block naming and CFG shape (SEMANTICS.md §3).

use super::consts::{eval_node, node_text, strip_parens, ConstEnv};
use super::pragma::{self, Pragma, UnrollCount};
use super::types::{CType, Layer};
use super::{
    children, first_error, first_named_non_comment, has_const_qualifier, is_alternative_of,
    is_missing_stmt, is_pragma, named_children, span, FileCtx,
};
use crate::frontend::fields::{CFields, F};
use crate::ir::builder::FunctionBuilder;
use crate::ir::*;
use crate::source::Span;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use crate::frontend::flat::FNode as Node;

/// Nesting bound of the statement/expression lowering (statements,
/// expressions and conditions together). Deeper subtrees are opaque: an
/// expression becomes an indirect call, a statement is skipped and the
/// function is marked with a syntax error.
pub(crate) const MAX_DEPTH: u32 = 400;

/// Bound on the stack the recursive lowering of one function may use, in
/// bytes. Frame sizes vary a lot with the optimisation level (an
/// unoptimised build needs several KiB per nesting level), so the nesting
/// is also bounded by the stack actually used: this keeps a 2 MiB thread
/// safe in every build.
const STACK_BUDGET: usize = 1 << 20;

/// An address on the current stack (for measuring stack use; never
/// dereferenced).
#[inline(never)]
fn stack_position() -> usize {
    let probe = 0u8;
    std::hint::black_box(std::ptr::addr_of!(probe)) as usize
}

/// A loop or switch: where `break` and `continue` go.
struct Jump {
    brk: BlockId,
    cont: Option<BlockId>,
}

#[derive(Default)]
struct SwitchCtx {
    cases: Vec<BlockId>,
    default: Option<BlockId>,
}

/// A statement that a `#pragma` line split off from the loop/if above it
/// (`for (...)\n#pragma unroll\nfor (...)`): tree-sitter gives the outer
/// statement a MISSING empty body and makes the inner one a sibling.
pub(crate) type Chain<'n> = [(Vec<Pragma>, Node<'n>)];

/// What an identifier names.
pub(crate) enum Ident {
    Var(VarId),
    Const(i64),
    Func,
    /// A macro whose body is not an integer constant or a name.
    Opaque,
}

/// Functions that do not return (their calls end the block).
const NORETURN: &[&str] = &[
    "exit",
    "_Exit",
    "quick_exit",
    "abort",
    "__builtin_unreachable",
    "__builtin_trap",
    "__assert_fail",
    "longjmp",
    "siglongjmp",
    "err",
    "errx",
];

pub(crate) fn is_noreturn(name: &str) -> bool {
    NORETURN.contains(&name)
}

pub(crate) struct FnLowerer<'f, 't> {
    pub file: &'f FileCtx<'t>,
    pub b: FunctionBuilder,
    /// Full C type of every variable, indexed by `VarId`.
    pub ctypes: Vec<CType>,
    scope: Vec<(String, VarId)>,
    scope_marks: Vec<usize>,
    globals_in_fn: HashMap<String, VarId>,
    pub(super) local_functions: HashSet<String>,
    jumps: Vec<Jump>,
    switches: Vec<SwitchCtx>,
    labels: HashMap<String, BlockId>,
    /// Induction variables of enclosing fully unrolled loops.
    pub unrolled_ivs: Vec<VarId>,
    /// Every variable read so far (for `addr_vars`).
    pub read_log: Vec<VarId>,
    /// Every variable whose address was used as a value (for `escapes`).
    pub escape_log: Vec<VarId>,
    pub depth: u32,
    /// Stack position when the lowering started.
    stack_base: usize,
    /// A call expression (by node id) that is a whole expression statement,
    /// with the statement's span.
    pub call_stmt: Option<(usize, Span)>,
    depth_error: Option<Span>,
    /// The value of the last condition `cond_value` branched on (for a
    /// `for` header's control).
    pub last_cond: Option<ExprId>,
    /// How many conditions `cond_value` branched on so far.
    pub cond_count: u32,
}

/// Lowers one `function_definition`.
pub(crate) fn lower_function(file: &FileCtx<'_>, n: Node<'_>) -> Function {
    let (name, name_span, fdecl) = definition_name(file, n);
    let b = FunctionBuilder::new(name, Lang::C, file.span(n), name_span);
    let mut l = FnLowerer {
        file,
        b,
        ctypes: Vec::new(),
        scope: Vec::new(),
        scope_marks: Vec::new(),
        globals_in_fn: HashMap::default(),
        local_functions: HashSet::default(),
        jumps: Vec::new(),
        switches: Vec::new(),
        labels: HashMap::default(),
        unrolled_ivs: Vec::new(),
        read_log: Vec::new(),
        escape_log: Vec::new(),
        depth: 0,
        stack_base: stack_position(),
        call_stmt: None,
        last_cond: None,
        cond_count: 0,
        depth_error: None,
    };
    l.push_scope();
    if let Some(fd) = fdecl {
        l.params(n, fd);
    }
    if let Some(body) = n.field(F::Body) {
        l.stmt(body);
    }
    l.pop_scope();
    let err = first_error(n, file.src)
        .map(|s| Span::new(file.pos(s.start as usize), file.pos(s.end as usize)))
        .or(l.depth_error);
    let mut f = l.b.finish();
    crate::frontend::fold_builtin_constants(&mut f, crate::frontend::StoredConstant::SameConstant);
    f.syntax_error = err;
    f
}

/// A function definition whose body is not lowered: its name and spans
/// (see `frontend::relevance`).
pub(crate) fn outline_function(file: &FileCtx<'_>, n: Node<'_>) -> Function {
    let (name, name_span, _) = definition_name(file, n);
    Function::outline(name, Lang::C, file.span(n), name_span)
}

/// Where the name a function definition defines is written (without a
/// file context).
pub(crate) fn defined_name_range(n: Node<'_>) -> Option<std::ops::Range<usize>> {
    let d = n.field(F::Declarator)?;
    Some(function_name(d).0?.byte_range())
}

/// The name a function definition defines, when it has one.
pub(crate) fn defined_name<'t>(file: &FileCtx<'t>, n: Node<'_>) -> Option<&'t str> {
    let d = n.field(F::Declarator)?;
    function_name(d).0.map(|i| file.text(i))
}

/// A function definition's name (`<anonymous>` without one), where it is
/// written, and its function declarator.
fn definition_name<'n>(file: &FileCtx<'_>, n: Node<'n>) -> (String, Span, Option<Node<'n>>) {
    let (name_node, fdecl) = match n.field(F::Declarator) {
        Some(d) => function_name(d),
        None => (None, None),
    };
    let name = name_node
        .map(|x| file.text(x).to_string())
        .unwrap_or_else(|| "<anonymous>".to_string());
    let name_span = name_node
        .map(|x| file.span(x))
        .unwrap_or_else(|| Span::empty_at(file.pos(n.start_byte())));
    (name, name_span, fdecl)
}

/// The declared name of a function definition and the function declarator
/// that holds its parameters (the one closest to the name).
fn function_name(d: Node<'_>) -> (Option<Node<'_>>, Option<Node<'_>>) {
    let mut cur = d;
    let mut fdecl = None;
    for _ in 0..256 {
        match cur.node_kind() {
            "identifier" => return ((!cur.is_missing()).then_some(cur), fdecl),
            "function_declarator" => fdecl = Some(cur),
            "parenthesized_declarator" | "attributed_declarator" => {
                match named_children(cur).into_iter().find(|c| {
                    !matches!(c.node_kind(), "attribute_declaration" | "ms_call_modifier")
                }) {
                    Some(c) => {
                        cur = c;
                        continue;
                    }
                    None => break,
                }
            }
            "pointer_declarator" => {}
            _ => break,
        }
        match cur.field(F::Declarator) {
            Some(c) => cur = c,
            None => break,
        }
    }
    (None, fdecl)
}

/// Whether a statement subtree holds a label (or a `case` of a switch
/// outside it): clang keeps the dead arm of a constant `if` then.
fn contains_label(n: Node<'_>) -> bool {
    let mut stack = vec![(n, false)];
    while let Some((x, in_switch)) = stack.pop() {
        match x.node_kind() {
            "labeled_statement" => return true,
            "case_statement" if !in_switch => return true,
            _ => {}
        }
        let sw = in_switch || x.node_kind() == "switch_statement";
        for c in children(x) {
            if c.is_named() {
                stack.push((c, sw));
            }
        }
    }
    false
}

pub(crate) fn is_expression_kind(kind: &str) -> bool {
    matches!(
        kind,
        "alignof_expression"
            | "assignment_expression"
            | "binary_expression"
            | "call_expression"
            | "cast_expression"
            | "char_literal"
            | "compound_literal_expression"
            | "concatenated_string"
            | "conditional_expression"
            | "extension_expression"
            | "false"
            | "field_expression"
            | "generic_expression"
            | "gnu_asm_expression"
            | "identifier"
            | "null"
            | "number_literal"
            | "offsetof_expression"
            | "parenthesized_expression"
            | "pointer_expression"
            | "sizeof_expression"
            | "string_literal"
            | "subscript_expression"
            | "true"
            | "unary_expression"
            | "update_expression"
            | "comma_expression"
            | "initializer_list"
    )
}

/// A statement whose body slot is a MISSING empty statement.
fn missing_body(n: Node<'_>) -> bool {
    // (the body may itself be a statement whose body is missing: `for
    // (...) if (...)` then the `#pragma` line)
    let missing = |b: Node<'_>| is_missing_stmt(b) || missing_body(b);
    match n.node_kind() {
        "for_statement" | "while_statement" => n.field(F::Body).is_some_and(missing),
        "if_statement" => {
            n.field(F::Alternative).is_none() && n.field(F::Consequence).is_some_and(missing)
        }
        _ => false,
    }
}

impl<'f, 't> FnLowerer<'f, 't> {
    /// A node's place in the source.
    pub(crate) fn sp(&self, n: Node<'_>) -> Span {
        self.file.span(n)
    }

    pub fn text(&self, n: Node<'_>) -> &'t str {
        node_text(n, self.file.src)
    }

    /// Whether the recursive lowering must stop descending: beyond
    /// [`MAX_DEPTH`] levels or [`STACK_BUDGET`] bytes of stack.
    pub fn too_deep(&self) -> bool {
        self.depth >= MAX_DEPTH || stack_position().abs_diff(self.stack_base) > STACK_BUDGET
    }

    // ----- scopes and names -------------------------------------------------

    fn push_scope(&mut self) {
        self.scope_marks.push(self.scope.len());
    }

    fn pop_scope(&mut self) {
        if let Some(m) = self.scope_marks.pop() {
            self.scope.truncate(m);
        }
    }

    /// A variable visible in the current scope (locals, parameters,
    /// block-scope externs).
    pub fn lookup(&self, name: &str) -> Option<VarId> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    pub fn add_var(&mut self, var: Var, ty: CType) -> VarId {
        let v = self.b.add_var(var);
        self.ctypes.push(ty);
        v
    }

    pub fn var_const(&self, v: VarId) -> Option<i64> {
        self.b
            .func()
            .vars
            .get(v.index())
            .and_then(|x| x.ty.const_value)
    }

    pub fn ctype(&self, v: VarId) -> CType {
        self.ctypes
            .get(v.index())
            .cloned()
            .unwrap_or_else(CType::unknown)
    }

    pub fn mark_addr(&mut self, v: VarId) {
        if let Some(x) = self.b.func_mut().vars.get_mut(v.index()) {
            x.address_taken = true;
        }
    }

    /// The function's variable for a file-scope name (created on first use).
    fn global_var(&mut self, name: &str, at: Node<'_>) -> VarId {
        if let Some(&v) = self.globals_in_fn.get(name) {
            return v;
        }
        let (ty, sp, cv) = match self.file.globals.get(name) {
            Some(g) => (g.ctype.clone(), g.span, g.const_value),
            None => (CType::unknown(), self.sp(at), None),
        };
        let mut vt = ty.var_type();
        vt.const_value = cv;
        let v = self.add_var(
            Var {
                name: name.to_string(),
                span: sp,
                kind: VarKind::Global,
                ty: vt,
                address_taken: false,
                only_passed: false,
            },
            ty,
        );
        self.globals_in_fn.insert(name.to_string(), v);
        v
    }

    /// Resolves an identifier used as a value at node `at`.
    pub fn resolve_ident(&mut self, name: &str, at: Node<'_>) -> Ident {
        let offset = at.start_byte();
        let mut name = std::borrow::Cow::Borrowed(name);
        if self.file.is_object_macro(&name, offset) {
            if let Some(c) = self.file.macro_value(&name, offset, 0) {
                return Ident::Const(c);
            }
            match self.file.macro_alias(&name, offset) {
                // the chain ends at a macro that is not a value (say, a
                // builtin call)
                Some(alias) if self.file.is_object_macro(&alias, offset) => return Ident::Opaque,
                Some(alias) => name = std::borrow::Cow::Owned(alias),
                None => return Ident::Opaque,
            }
        }
        let name: &str = &name;
        if let Some(v) = self.lookup(name) {
            return match self.var_const(v) {
                Some(c) => Ident::Const(c),
                None => Ident::Var(v),
            };
        }
        if let Some(c) = self.file.enums.get(name) {
            return Ident::Const(*c);
        }
        if self.globals_in_fn.contains_key(name) || self.file.globals.contains_key(name) {
            let v = self.global_var(name, at);
            return match self.var_const(v) {
                Some(c) => Ident::Const(c),
                None => Ident::Var(v),
            };
        }
        if self.file.functions.contains_key(name)
            || self.local_functions.contains(name)
            || name.starts_with("__builtin")
        {
            return Ident::Func;
        }
        match super::standard_macro(name) {
            Some(Some(c)) => Ident::Const(c),
            Some(None) => Ident::Opaque,
            None => Ident::Var(self.global_var(name, at)),
        }
    }

    /// Integer value of a constant expression (literals, macros,
    /// enumerators, `const` variables, constant arithmetic).
    pub fn const_value(&self, e: Node<'_>) -> Option<i64> {
        eval_node(e, self.file.src, self, 0)
    }

    // ----- parameters and declarations ---------------------------------------

    #[inline(never)]
    fn params(&mut self, def: Node<'_>, fdecl: Node<'_>) {
        let Some(list) = fdecl.field(F::Parameters) else {
            return;
        };
        // K&R definitions: `int f(a, b) int a; double *b; { ... }`
        let mut kr: HashMap<String, CType> = HashMap::default();
        for d in children(def) {
            if d.node_kind() != "declaration" {
                continue;
            }
            let Some(spec) = d.field(F::Type) else {
                continue;
            };
            let base = self.file.spec_type(spec);
            for x in d.fields(F::Declarator) {
                let (ty, name) = self.file.apply_declarator(x, base.clone());
                if let Some(name) = name {
                    kr.insert(self.text(name).to_string(), ty);
                }
            }
        }
        for p in named_children(list) {
            match p.node_kind() {
                "parameter_declaration" => {
                    let Some(spec) = p.field(F::Type) else {
                        continue;
                    };
                    let base = self.file.spec_type(spec);
                    let Some(d) = p.field(F::Declarator) else {
                        continue;
                    };
                    let (ty, name) = self.file.apply_declarator(d, base);
                    let Some(name) = name else { continue };
                    let ty = adjust_param(ty, d, self.file);
                    self.add_param(self.text(name).to_string(), self.sp(name), ty);
                }
                "identifier" => {
                    let name = self.text(p).to_string();
                    let ty = kr.get(&name).cloned().unwrap_or_else(CType::int);
                    let ty = adjust_param(ty, p, self.file);
                    self.add_param(name, self.sp(p), ty);
                }
                _ => {}
            }
        }
    }

    fn add_param(&mut self, name: String, sp: Span, ty: CType) {
        let v = self.add_var(
            Var {
                name: name.clone(),
                span: sp,
                kind: VarKind::Param,
                ty: ty.var_type(),
                address_taken: false,
                only_passed: false,
            },
            ty,
        );
        self.b.func_mut().params.push(Some(v));
        self.scope.push((name, v));
    }

    #[inline(never)]
    pub fn declaration(&mut self, n: Node<'_>) {
        let mut is_static = false;
        let mut is_extern = false;
        for c in children(n) {
            if c.node_kind() == "storage_class_specifier" {
                match self.text(c).trim() {
                    "static" | "_Thread_local" | "__thread" | "thread_local" => is_static = true,
                    "extern" => is_extern = true,
                    _ => {}
                }
            }
        }
        let Some(spec) = n.field(F::Type) else {
            return;
        };
        let base = self.file.spec_type(spec);
        let is_const = has_const_qualifier(n, self.file);
        for d in n.fields(F::Declarator) {
            let (decl, init) = if d.node_kind() == "init_declarator" {
                (d.field(F::Declarator).unwrap_or(d), d.field(F::Value))
            } else {
                (d, None)
            };
            let (ty, name) = self.file.apply_declarator(decl, base.clone());
            let Some(name) = name else {
                if let Some(i) = init {
                    let _ = self.value(i);
                }
                continue;
            };
            let name_s = self.text(name).to_string();
            if ty.is_func() {
                self.local_functions.insert(name_s);
                continue;
            }
            if is_extern {
                let v = match self.globals_in_fn.get(&name_s) {
                    Some(&v) => v,
                    None if self.file.globals.contains_key(&name_s) => {
                        self.global_var(&name_s, name)
                    }
                    None => {
                        // a block-scope declaration of a global
                        let v = self.add_var(
                            Var {
                                name: name_s.clone(),
                                span: self.sp(name),
                                kind: VarKind::Global,
                                ty: ty.var_type(),
                                address_taken: false,
                                only_passed: false,
                            },
                            ty.clone(),
                        );
                        self.globals_in_fn.insert(name_s.clone(), v);
                        v
                    }
                };
                self.scope.push((name_s, v));
                continue;
            }
            // run-time array sizes are evaluated before the storage exists
            if !is_static {
                self.vla_sizes(decl);
            }
            let const_value = if is_const && ty.layers.is_empty() {
                init.filter(|i| i.node_kind() != "initializer_list")
                    .and_then(|i| self.const_value(i))
            } else {
                None
            };
            let mut vt = ty.var_type();
            vt.const_value = const_value;
            let v = self.add_var(
                Var {
                    name: name_s.clone(),
                    span: self.sp(name),
                    kind: if is_static {
                        VarKind::Static
                    } else {
                        VarKind::Local
                    },
                    ty: vt,
                    address_taken: false,
                    only_passed: false,
                },
                ty.clone(),
            );
            self.scope.push((name_s, v));
            self.b.push(InstKind::Decl(v), self.sp(name));
            if is_static {
                // static storage is initialised before the program runs
                continue;
            }
            let Some(init) = init else { continue };
            let place = super::expr::Place::whole(v, ty.clone());
            if init.node_kind() == "initializer_list" || ty.is_array() {
                let _ = self.value(init);
                let mut p = place;
                if ty.is_array() || ty.is_struct() {
                    p.index = IndexKind::Const;
                }
                self.emit_access(true, &p, None, self.sp(d));
            } else {
                let rv = self.rvalue(init);
                let expr = rv.expr;
                let val = self.consume(rv);
                self.store_whole(&place, val, expr, self.sp(d));
            }
        }
    }

    /// Evaluates the non-constant array sizes of a declarator.
    fn vla_sizes(&mut self, decl: Node<'_>) {
        let mut cur = decl;
        let mut sizes = Vec::new();
        for _ in 0..256 {
            if cur.node_kind() == "array_declarator" {
                if let Some(s) = cur.field(F::Size) {
                    if s.is_named() && self.const_value(s).is_none() {
                        sizes.push(s);
                    }
                }
            }
            match cur.field(F::Declarator) {
                Some(c) => cur = c,
                None => match cur.node_kind() {
                    "parenthesized_declarator" | "attributed_declarator" => {
                        match cur.named_child(0) {
                            Some(c) => cur = c,
                            None => break,
                        }
                    }
                    _ => break,
                },
            }
        }
        // outermost dimension first, as written
        for s in sizes.into_iter().rev() {
            let _ = self.value(s);
        }
    }

    // ----- statements ----------------------------------------------------------

    pub fn stmt(&mut self, n: Node<'_>) {
        self.stmt_ex(n, Vec::new(), &[]);
    }

    /// Lowers a sequence of block items (compound statement contents, case
    /// bodies): `#pragma` lines attach to the statement that follows.
    #[inline(never)]
    fn block_items(&mut self, items: &[Node<'_>]) {
        let mut pending: Vec<Pragma> = Vec::new();
        let mut i = 0;
        while i < items.len() {
            let n = items[i];
            if is_pragma(n, self.file.src) {
                let p = pragma::parse(n, self.file);
                self.note_omp(&p);
                pending.push(p);
                i += 1;
                continue;
            }
            if let Some(p) = self.pragma_operator(n) {
                self.note_omp(&p);
                pending.push(p);
                i += 1;
                continue;
            }
            if !n.is_named() || n.node_kind() == "comment" {
                i += 1;
                continue;
            }
            // statements split off by a pragma line become this one's body
            let mut chain: Vec<(Vec<Pragma>, Node)> = Vec::new();
            let mut j = i + 1;
            let mut cur = n;
            while missing_body(cur) {
                let mut ps = Vec::new();
                let mut k = j;
                while k < items.len()
                    && (is_pragma(items[k], self.file.src) || items[k].node_kind() == "comment")
                {
                    if is_pragma(items[k], self.file.src) {
                        let p = pragma::parse(items[k], self.file);
                        self.note_omp(&p);
                        ps.push(p);
                    }
                    k += 1;
                }
                if ps.is_empty() || k >= items.len() || !items[k].is_named() {
                    break;
                }
                chain.push((ps, items[k]));
                cur = items[k];
                j = k + 1;
            }
            let pragmas = std::mem::take(&mut pending);
            self.stmt_ex(n, pragmas, &chain);
            i = j;
        }
    }

    /// `_Pragma("...");` as a statement: a pragma for what follows.
    fn pragma_operator(&self, n: Node<'_>) -> Option<Pragma> {
        if n.node_kind() != "expression_statement" {
            return None;
        }
        let call = n.named_child(0)?;
        if call.node_kind() != "call_expression" {
            return None;
        }
        let f = call.field(F::Function)?;
        if !matches!(self.text(f), "_Pragma" | "__pragma") {
            return None;
        }
        let arg = call.field(F::Arguments)?.named_child(0)?;
        let text = match strip_parens(arg).node_kind() {
            "string_literal" | "concatenated_string" => {
                super::consts::string_literal_value(self.text(strip_parens(arg)))
            }
            // `__pragma(omp parallel for)` (MSVC): the tokens themselves
            _ => self.text(arg).to_string(),
        };
        Some(pragma::parse_text(
            &text,
            self.sp(call),
            self.file,
            n.start_byte(),
        ))
    }

    pub fn stmt_ex(&mut self, n: Node<'_>, pragmas: Vec<Pragma>, chain: &Chain<'_>) {
        if self.too_deep() {
            self.depth_error.get_or_insert(self.sp(n));
            return;
        }
        self.depth += 1;
        for p in &pragmas {
            match p {
                Pragma::OmpParallel(d) => {
                    let body = self.sp(n);
                    self.b.func_mut().omp_regions.push(OmpRegion {
                        directive: *d,
                        body,
                    });
                }
                Pragma::OmpSync(d, lock) => {
                    let body = self.sp(n);
                    self.b.func_mut().omp_sync.push(OmpSync {
                        lock: lock.clone(),
                        directive: *d,
                        body,
                    });
                }
                _ => {}
            }
        }
        let sections = pragmas.iter().find_map(|p| match p {
            Pragma::OmpSections(d) => Some(*d),
            _ => None,
        });
        match sections {
            Some(d) => self.omp_sections(n, d),
            None => self.stmt_inner(n, pragmas, chain),
        }
        self.depth -= 1;
    }

    /// Records an OpenMP directive of the function (`Function::omp_directives`).
    fn note_omp(&mut self, p: &Pragma) {
        if let Some(s) = p.omp_span() {
            self.b.func_mut().omp_directives.push(s);
        }
    }

    /// An OpenMP `sections` construct: its statement, split into sections
    /// at its `omp section` directives (the first section's may be left
    /// out), between empty blocks for the region and section intrinsics
    /// the CSA compiler places there (`Function::omp_sections`).
    #[inline(never)]
    fn omp_sections(&mut self, n: Node<'_>, directive: Span) {
        let sp = self.sp(n);
        let entry = self
            .b
            .fall_into_new_block("omp.sections.entry", Some(directive));
        let mut sections = Vec::new();
        if n.node_kind() == "compound_statement" {
            self.push_scope();
            let mut groups: Vec<(Option<Span>, Vec<Node<'_>>)> = vec![(None, Vec::new())];
            for it in children(n) {
                let p = if is_pragma(it, self.file.src) {
                    Some(pragma::parse(it, self.file))
                } else {
                    self.pragma_operator(it)
                };
                match (p, groups.last_mut()) {
                    (Some(Pragma::OmpSection(s)), _) => {
                        self.b.func_mut().omp_directives.push(s);
                        groups.push((Some(s), Vec::new()))
                    }
                    (_, Some(g)) => g.1.push(it),
                    (_, None) => {}
                }
            }
            for (k, (dir, items)) in groups.iter().enumerate() {
                let first = items.iter().find(|i| {
                    i.is_named() && i.node_kind() != "comment" && !is_pragma(**i, self.file.src)
                });
                if k == 0 && first.is_none() {
                    // only braces, comments or other pragmas before the
                    // first `omp section`
                    self.block_items(items);
                    continue;
                }
                let at = dir.or(first.map(|f| self.sp(*f))).unwrap_or(sp);
                sections.push(self.omp_section(at, items));
            }
            self.pop_scope();
        } else {
            sections.push(self.omp_section(sp, &[n]));
        }
        let exit = self.b.fall_into_new_block("omp.sections.end", Some(sp));
        self.b.func_mut().omp_sections.push(OmpSections {
            directive,
            entry,
            exit,
            sections,
        });
    }

    /// One section: an empty entry block, its statements, the block they
    /// fall into.
    fn omp_section(&mut self, at: Span, items: &[Node<'_>]) -> OmpSection {
        let entry = self.b.fall_into_new_block("omp.section.entry", Some(at));
        self.b.fall_into_new_block("omp.section.body", Some(at));
        self.block_items(items);
        let exit = self.b.fall_into_new_block("omp.section.end", Some(at));
        OmpSection {
            span: at,
            entry,
            exit,
        }
    }

    /// Dispatches on the statement kind; every arm is its own function so
    /// that the frames on a deep recursion stay small.
    fn stmt_inner(&mut self, n: Node<'_>, pragmas: Vec<Pragma>, chain: &Chain<'_>) {
        match n.node_kind() {
            "compound_statement" => self.compound(n),
            "expression_statement" => self.expression_stmt(n),
            "declaration" => self.declaration(n),
            "if_statement" => self.if_stmt(n, chain),
            "while_statement" => self.while_stmt(n, pragmas, chain),
            "do_statement" => self.do_stmt(n, pragmas),
            "for_statement" => self.for_stmt(n, pragmas, chain),
            "switch_statement" => self.switch_stmt(n),
            "case_statement" => self.case_stmt(n),
            "labeled_statement" => self.labeled_stmt(n, pragmas, chain),
            "goto_statement" | "break_statement" | "continue_statement" | "return_statement" => {
                self.jump_stmt(n)
            }
            "attributed_statement" => self.attributed_stmt(n, pragmas, chain),
            "preproc_if" | "preproc_ifdef" | "ERROR" | "seh_try_statement" => {
                self.container_stmt(n)
            }
            // `foo(x)` before a missing `;` parses as a macro type
            // specifier inside an ERROR node: lower it as the call it is
            "macro_type_specifier" => self.macro_type_call(n),
            k if is_expression_kind(k) => {
                let _ = self.value(n);
            }
            _ => {}
        }
    }

    #[inline(never)]
    fn compound(&mut self, n: Node<'_>) {
        self.push_scope();
        let items = children(n);
        self.block_items(&items);
        self.pop_scope();
    }

    #[inline(never)]
    fn expression_stmt(&mut self, n: Node<'_>) {
        if let Some(e) = first_named_non_comment(n) {
            if self.unknown_macro_statement(e) {
                return;
            }
            self.call_stmt = Some((self.statement_call(e).id(), self.sp(n)));
            let _ = self.value(e);
            self.call_stmt = None;
        }
    }

    /// `NAME;` with a name nothing declares (not a variable, function,
    /// enumerator or macro of this file): only a macro from a header can
    /// make that compile, and what it expands to is unknown. It is lowered
    /// as a call of that name with effects csa-lint cannot see, as a
    /// function-like macro's use `NAME();` is. (`frontend::c::repair` adds
    /// the `;` after such a name used alone before a statement.)
    fn unknown_macro_statement(&mut self, e: Node<'_>) -> bool {
        if e.node_kind() != "identifier" || e.is_missing() {
            return false;
        }
        let name = self.text(e);
        let declared = self.lookup(name).is_some()
            || self.file.enums.contains_key(name)
            || self.globals_in_fn.contains_key(name)
            || self.file.globals.contains_key(name)
            || self.file.functions.contains_key(name)
            || self.local_functions.contains(name)
            || self.file.is_object_macro(name, e.start_byte())
            || self.file.is_fn_macro(name, e.start_byte())
            || super::standard_macro(name).is_some()
            || name.starts_with("__builtin");
        if declared {
            return false;
        }
        let name = name.to_string();
        let sp = self.sp(e);
        self.b.push(
            InstKind::Call(Call {
                callee: Some(name),
                name_span: sp,
                escapes: Vec::new(),
                args: Vec::new(),
            }),
            sp,
        );
        true
    }

    /// What an expression statement's value `e` is once parentheses and
    /// casts to `void` are looked through: `(void)__builtin_csa_...();`
    /// is as much the call's own statement as the bare call.
    fn statement_call<'n>(&self, mut e: Node<'n>) -> Node<'n> {
        for _ in 0..MAX_DEPTH {
            let stripped = strip_parens(e);
            let next = if stripped.id() != e.id() {
                Some(stripped)
            } else if e.node_kind() == "cast_expression"
                && e.field(F::Type).is_some_and(|t| self.text(t).trim() == "void")
            {
                e.field(F::Value)
            } else {
                None
            };
            match next {
                Some(x) => e = x,
                None => break,
            }
        }
        e
    }

    /// `goto`, `break`, `continue`, `return`.
    #[inline(never)]
    fn jump_stmt(&mut self, n: Node<'_>) {
        let target = match n.node_kind() {
            "goto_statement" => n.field(F::Label).map(|l| {
                let name = self.text(l).to_string();
                self.label_block(&name)
            }),
            "break_statement" => self.jumps.last().map(|j| j.brk),
            "continue_statement" => self.jumps.iter().rev().find_map(|j| j.cont),
            _ => {
                if let Some(e) = first_named_non_comment(n) {
                    let _ = self.value(e);
                }
                Some(self.b.return_block())
            }
        };
        if let Some(t) = target {
            self.b.terminate(TermKind::Goto(t), Some(self.sp(n)));
        }
    }

    /// `[[intel::ivdep]] for (...)`: attributes become pragmas.
    #[inline(never)]
    fn attributed_stmt(&mut self, n: Node<'_>, pragmas: Vec<Pragma>, chain: &Chain<'_>) {
        let mut pragmas = pragmas;
        let mut inner = None;
        for c in named_children(n) {
            if c.node_kind() == "attribute_declaration" {
                let ivdep = named_children(c).into_iter().any(|a| {
                    a.node_kind() == "attribute"
                        && a.field(F::Name).is_some_and(|x| self.text(x) == "ivdep")
                });
                if ivdep {
                    pragmas.push(Pragma::Ivdep(self.sp(c)));
                }
            } else if c.node_kind() != "comment" {
                inner = Some(c);
            }
        }
        if let Some(s) = inner {
            self.stmt_ex(s, pragmas, chain);
        }
    }

    /// Preprocessor conditionals (first branch), ERROR nodes and SEH
    /// blocks: their contents in order.
    #[inline(never)]
    fn container_stmt(&mut self, n: Node<'_>) {
        match n.node_kind() {
            "seh_try_statement" => {
                for c in named_children(n) {
                    match c.node_kind() {
                        "compound_statement" => self.stmt(c),
                        "seh_except_clause" | "seh_finally_clause" => {
                            if let Some(b) = c.field(F::Body) {
                                self.stmt(b);
                            }
                        }
                        _ => {}
                    }
                }
            }
            "ERROR" => {
                let items = named_children(n);
                self.block_items(&items);
            }
            _ => {
                let items: Vec<Node> = children(n)
                    .into_iter()
                    .filter(|c| c.is_named() && !is_alternative_of(n, *c))
                    .collect();
                self.block_items(&items);
            }
        }
    }

    fn label_block(&mut self, name: &str) -> BlockId {
        if let Some(&b) = self.labels.get(name) {
            return b;
        }
        let b = self.b.new_block("label", None);
        self.labels.insert(name.to_string(), b);
        b
    }

    #[inline(never)]
    fn labeled_stmt(&mut self, n: Node<'_>, pragmas: Vec<Pragma>, chain: &Chain<'_>) {
        let Some(l) = n.field(F::Label) else {
            return;
        };
        let name = self.text(l).to_string();
        let blk = self.label_block(&name);
        let origin = self.sp(l);
        if let Some(b) = self.b.func_mut().blocks.get_mut(blk.index()) {
            b.origin = Some(origin);
        }
        self.b.enter(blk);
        let label_id = l.id();
        let rest: Vec<Node> = named_children(n)
            .into_iter()
            .filter(|c| c.id() != label_id && c.node_kind() != "comment")
            .collect();
        let mut pragmas = Some(pragmas);
        for c in rest {
            let p = pragmas.take().unwrap_or_default();
            self.stmt_ex(c, p, chain);
        }
    }

    /// The body of a statement, or the statement a pragma line split off.
    fn body_or_chain<'n>(
        &self,
        body: Option<Node<'n>>,
        chain: &'n Chain<'n>,
    ) -> (Option<Node<'n>>, Vec<Pragma>, &'n Chain<'n>) {
        match (body, chain.split_first()) {
            (Some(b), Some(((ps, next), rest))) if is_missing_stmt(b) => {
                (Some(*next), ps.clone(), rest)
            }
            // a body whose own body is missing takes the chain along
            (Some(b), Some(_)) if missing_body(b) => (Some(b), Vec::new(), chain),
            (b, _) => (b, Vec::new(), &[]),
        }
    }

    /// `if` statements; `else if` chains are lowered iteratively.
    #[inline(never)]
    fn if_stmt(&mut self, n: Node<'_>, chain: &Chain<'_>) {
        let mut ends: Vec<BlockId> = Vec::new();
        let mut cur = n;
        let mut chain: &Chain<'_> = chain;
        loop {
            let sp = self.sp(cur);
            let cond = cur.field(F::Condition).map(|c| strip_parens(c));
            let (cons, cons_pragmas, rest) = self.body_or_chain(cur.field(F::Consequence), chain);
            let alt = cur.field(F::Alternative).and_then(first_named_non_comment);
            // clang elides a constant `if` and its dead arm (unless the dead
            // arm holds a label)
            if let Some(c) = cond.and_then(|c| self.const_value(c)) {
                let (exec, skip) = if c != 0 { (cons, alt) } else { (alt, cons) };
                if !skip.is_some_and(contains_label) {
                    if let Some(e) = exec {
                        if c != 0 {
                            self.stmt_ex(e, cons_pragmas, rest);
                        } else {
                            self.stmt(e);
                        }
                    }
                    break;
                }
            }
            let then_b = self.b.new_block("if.then", Some(sp));
            let else_b = alt.map(|_| self.b.new_block("if.else", Some(sp)));
            let end_b = self.b.new_block("if.end", Some(sp));
            let csp = cond.map(span).unwrap_or(sp);
            self.cond(cond, then_b, else_b.unwrap_or(end_b), csp, true);
            self.b.set_current(Some(then_b));
            if let Some(c) = cons {
                self.stmt_ex(c, cons_pragmas, rest);
            }
            self.b.goto_if_open(end_b);
            if let (Some(a), Some(eb)) = (alt, else_b) {
                self.b.set_current(Some(eb));
                if a.node_kind() == "if_statement" {
                    ends.push(end_b);
                    cur = a;
                    chain = &[];
                    continue;
                }
                self.stmt(a);
                self.b.goto_if_open(end_b);
            }
            self.b.set_current(Some(end_b));
            break;
        }
        for end in ends.into_iter().rev() {
            self.b.goto_if_open(end);
            self.b.set_current(Some(end));
        }
    }

    fn loop_attrs(pragmas: &[Pragma]) -> (Option<Span>, Option<Span>, Option<UnrollCount>) {
        let mut omp = None;
        let mut ivdep = None;
        let mut unroll = None;
        for p in pragmas {
            match p {
                Pragma::Omp(s) => omp = Some(*s),
                Pragma::Ivdep(s) => ivdep = Some(*s),
                Pragma::Unroll(c) => unroll = Some(*c),
                Pragma::Other
                | Pragma::OmpParallel(_)
                | Pragma::OmpSections(_)
                | Pragma::OmpSection(_)
                | Pragma::OmpSync(..)
                | Pragma::OmpOther(_) => {}
            }
        }
        (omp, ivdep, unroll)
    }

    fn keyword_span(&self, n: Node<'_>) -> Span {
        n.child(0)
            .filter(|c| !c.is_named())
            .map(|c| self.sp(c))
            .unwrap_or_else(|| Span::empty_at(self.file.pos(n.start_byte())))
    }

    #[inline(never)]
    fn while_stmt(&mut self, n: Node<'_>, pragmas: Vec<Pragma>, chain: &Chain<'_>) {
        let sp = self.sp(n);
        let (_, ivdep, _) = Self::loop_attrs(&pragmas);
        let cond = n.field(F::Condition).map(|c| strip_parens(c));
        let (body, body_pragmas, rest) = self.body_or_chain(n.field(F::Body), chain);
        let cond_b = self.b.new_block("while.cond", Some(sp));
        self.b.enter(cond_b);
        let body_b = self.b.new_block("while.body", Some(sp));
        let end_b = self.b.new_block("while.end", Some(sp));
        self.b.add_source_loop(SourceLoop {
            kind: LoopKind::While,
            span: sp,
            keyword_span: self.keyword_span(n),
            header: cond_b,
            body_entry: Some(body_b),
            unrolled: false,
            omp: None,
            ivdep,
            control: None,
        });
        let csp = cond.map(span).unwrap_or(sp);
        self.cond_as_value(cond, body_b, end_b, csp);
        self.jumps.push(Jump {
            brk: end_b,
            cont: Some(cond_b),
        });
        self.b.set_current(Some(body_b));
        if let Some(body) = body {
            self.stmt_ex(body, body_pragmas, rest);
        }
        self.b.goto_if_open(cond_b);
        self.jumps.pop();
        self.b.set_current(Some(end_b));
    }

    #[inline(never)]
    fn do_stmt(&mut self, n: Node<'_>, pragmas: Vec<Pragma>) {
        let sp = self.sp(n);
        let (_, ivdep, _) = Self::loop_attrs(&pragmas);
        let cond = n.field(F::Condition).map(|c| strip_parens(c));
        let body_b = self.b.new_block("do.body", Some(sp));
        let cond_b = self.b.new_block("do.cond", Some(sp));
        let end_b = self.b.new_block("do.end", Some(sp));
        self.b.enter(body_b);
        self.b.add_source_loop(SourceLoop {
            kind: LoopKind::DoWhile,
            span: sp,
            keyword_span: self.keyword_span(n),
            header: body_b,
            body_entry: Some(body_b),
            unrolled: false,
            omp: None,
            ivdep,
            control: None,
        });
        self.jumps.push(Jump {
            brk: end_b,
            cont: Some(cond_b),
        });
        if let Some(body) = n.field(F::Body) {
            self.stmt(body);
        }
        self.jumps.pop();
        self.b.enter(cond_b);
        let csp = cond.map(span).unwrap_or(sp);
        self.cond_as_value(cond, body_b, end_b, csp);
        self.b.set_current(Some(end_b));
    }

    #[inline(never)]
    fn for_stmt(&mut self, n: Node<'_>, pragmas: Vec<Pragma>, chain: &Chain<'_>) {
        let sp = self.sp(n);
        let (omp, ivdep, unroll) = Self::loop_attrs(&pragmas);
        self.push_scope();
        let [init, cond, update, body] =
            n.fields_of([F::Initializer, F::Condition, F::Update, F::Body]);
        let (body, body_pragmas, rest) = self.body_or_chain(body, chain);
        let init_from = self
            .b
            .current()
            .map(|b| (b, self.b.func().block(b).insts.len()));
        if let Some(i) = init {
            if i.node_kind() == "declaration" {
                self.declaration(i);
            } else {
                let _ = self.value(i);
            }
        }
        let init_at = self.b.current().map(|b| {
            let start = match init_from {
                Some((ib, n)) if ib == b => n,
                _ => 0,
            };
            (b, start, self.b.func().block(b).insts.len())
        });
        let cond_b = self.b.new_block("for.cond", Some(sp));
        self.b.enter(cond_b);
        let body_b = self.b.new_block("for.body", Some(sp));
        let inc_b = update.map(|_| self.b.new_block("for.inc", Some(sp)));
        let end_b = self.b.new_block("for.end", Some(sp));
        self.last_cond = None;
        let conds_before = self.cond_count;
        match cond {
            Some(c) => self.cond(Some(c), body_b, end_b, self.sp(c), true),
            None => self.b.terminate(TermKind::Goto(body_b), None),
        }
        // one comparison, not a chain of `&&`/`||` operands
        let cond_expr = self
            .last_cond
            .take()
            .filter(|_| self.cond_count == conds_before + 1);
        let iv = unroll.and_then(|u| self.unrolled_iv(init, cond, update, u));
        let slot = self.b.add_source_loop(SourceLoop {
            kind: LoopKind::For,
            span: sp,
            keyword_span: self.keyword_span(n),
            header: cond_b,
            body_entry: Some(body_b),
            unrolled: iv.is_some(),
            omp,
            ivdep,
            control: None,
        });
        self.jumps.push(Jump {
            brk: end_b,
            cont: Some(inc_b.unwrap_or(cond_b)),
        });
        self.b.set_current(Some(body_b));
        if let Some(v) = iv {
            self.unrolled_ivs.push(v);
        }
        if let Some(body) = body {
            self.stmt_ex(body, body_pragmas, rest);
        }
        if iv.is_some() {
            self.unrolled_ivs.pop();
        }
        self.jumps.pop();
        if let (Some(inc), Some(u)) = (inc_b, update) {
            self.b.enter(inc);
            let _ = self.value(u);
        }
        let control = self.for_control(init_at, cond_expr, inc_b);
        if let Some(sl) = self.b.func_mut().source_loops.get_mut(slot) {
            sl.control = control;
        }
        self.b.goto_if_open(cond_b);
        self.b.set_current(Some(end_b));
        self.pop_scope();
    }

    /// The control of a `for (v = a; v CMP b; v += s)`, from what its
    /// lowering emitted: the header condition's value, the last whole
    /// write of `v` in the init, and the increment block's write of `v`.
    fn for_control(
        &mut self,
        init_at: Option<(BlockId, usize, usize)>,
        cond: Option<ExprId>,
        inc: Option<BlockId>,
    ) -> Option<LoopControl> {
        let f = self.b.func();
        let read_var = |e: ExprId| match f.expr(e) {
            Expr::Read(at) => f.read_var(*at),
            _ => None,
        };
        let (cmp, var, limit) = match f.expr(cond?) {
            Expr::Bin(BinOp::Cmp(c), l, r) => match (read_var(*l), read_var(*r)) {
                (Some(v), _) => (*c, v, *r),
                (None, Some(v)) => (c.swapped(), v, *l),
                _ => return None,
            },
            _ => return None,
        };
        let whole_write = |b: BlockId, range: std::ops::Range<usize>| {
            f.block(b).insts[range]
                .iter()
                .rev()
                .find_map(|i| match &i.kind {
                    InstKind::Access(a)
                        if a.write && a.target == AccessTarget::Var(var) && a.path.is_empty() =>
                    {
                        Some(a.rhs)
                    }
                    _ => None,
                })
        };
        let (ib, from, to) = init_at?;
        let init = whole_write(ib, from..to)??;
        let inc = inc?;
        let n = f.block(inc).insts.len();
        let next = whole_write(inc, 0..n)??;
        let step = match f.expr(next) {
            Expr::Bin(op @ (BinOp::Add | BinOp::Sub), l, r) if read_var(*l) == Some(var) => {
                (*op, *r)
            }
            Expr::Bin(BinOp::Add, l, r) if read_var(*r) == Some(var) => (BinOp::Add, *l),
            _ => return None,
        };
        let step = match step {
            (BinOp::Sub, r) => self.b.expr(Expr::Neg(r)),
            (_, r) => r,
        };
        Some(LoopControl {
            var,
            init,
            limit,
            cmp,
            step,
            bounds_once: false,
        })
    }

    /// The induction variable of a `for` that a pragma fully unrolls: a
    /// constant trip count and an unroll count that is absent, `full` or at
    /// least the trip count.
    #[inline(never)]
    fn unrolled_iv(
        &mut self,
        init: Option<Node<'_>>,
        cond: Option<Node<'_>>,
        update: Option<Node<'_>>,
        unroll: UnrollCount,
    ) -> Option<VarId> {
        let (name, start) = {
            let init = init?;
            match init.node_kind() {
                "declaration" => {
                    let ds = init.fields(F::Declarator);
                    let [d] = ds.as_slice() else { return None };
                    if d.node_kind() != "init_declarator" {
                        return None;
                    }
                    let id = d.field(F::Declarator)?;
                    if id.node_kind() != "identifier" {
                        return None;
                    }
                    (self.text(id), self.const_value(d.field(F::Value)?)?)
                }
                "assignment_expression" => {
                    let op = init.field(F::Operator)?;
                    let l = strip_parens(init.field(F::Left)?);
                    if self.text(op) != "=" || l.node_kind() != "identifier" {
                        return None;
                    }
                    (self.text(l), self.const_value(init.field(F::Right)?)?)
                }
                _ => return None,
            }
        };
        let (op, bound) = {
            let c = strip_parens(cond?);
            if c.node_kind() != "binary_expression" {
                return None;
            }
            let op = self.text(c.field(F::Operator)?);
            let l = strip_parens(c.field(F::Left)?);
            let r = strip_parens(c.field(F::Right)?);
            if l.node_kind() == "identifier" && self.text(l) == name {
                (op.to_string(), self.const_value(r)?)
            } else if r.node_kind() == "identifier" && self.text(r) == name {
                let flipped = match op {
                    "<" => ">",
                    "<=" => ">=",
                    ">" => "<",
                    ">=" => "<=",
                    "!=" => "!=",
                    _ => return None,
                };
                (flipped.to_string(), self.const_value(l)?)
            } else {
                return None;
            }
        };
        let step = {
            let u = strip_parens(update?);
            let is_iv = |x: Node<'_>| {
                let x = strip_parens(x);
                x.node_kind() == "identifier" && self.text(x) == name
            };
            match u.node_kind() {
                "update_expression" => {
                    if !is_iv(u.field(F::Argument)?) {
                        return None;
                    }
                    match self.text(u.field(F::Operator)?) {
                        "++" => 1,
                        "--" => -1,
                        _ => return None,
                    }
                }
                "assignment_expression" => {
                    if !is_iv(u.field(F::Left)?) {
                        return None;
                    }
                    let r = u.field(F::Right)?;
                    match self.text(u.field(F::Operator)?) {
                        "+=" => self.const_value(r)?,
                        "-=" => self.const_value(r)?.checked_neg()?,
                        "=" => {
                            let r = strip_parens(r);
                            if r.node_kind() != "binary_expression" {
                                return None;
                            }
                            let bop = self.text(r.field(F::Operator)?);
                            let bl = r.field(F::Left)?;
                            let br = r.field(F::Right)?;
                            match bop {
                                "+" if is_iv(bl) => self.const_value(br)?,
                                "+" if is_iv(br) => self.const_value(bl)?,
                                "-" if is_iv(bl) => self.const_value(br)?.checked_neg()?,
                                _ => return None,
                            }
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        };
        let trips = pragma::trip_count(start, &op, bound, step)?;
        match unroll {
            UnrollCount::Full => {}
            UnrollCount::Count(k) if k >= trips => {}
            _ => return None,
        }
        let name = name.to_string();
        match self.lookup(&name) {
            Some(v) => Some(v),
            None => match self.resolve_ident(&name, init?) {
                Ident::Var(v) => Some(v),
                _ => None,
            },
        }
    }

    #[inline(never)]
    fn switch_stmt(&mut self, n: Node<'_>) {
        let sp = self.sp(n);
        let cond = n.field(F::Condition);
        if let Some(c) = cond {
            let _ = self.value(strip_parens(c));
        }
        let sw_block = self.b.ensure_block();
        let epilog = self.b.new_block("sw.epilog", Some(sp));
        let csp = cond.map(|c| self.sp(strip_parens(c))).unwrap_or(sp);
        self.b.terminate(
            TermKind::Switch {
                targets: Vec::new(),
            },
            Some(csp),
        );
        self.switches.push(SwitchCtx::default());
        self.jumps.push(Jump {
            brk: epilog,
            cont: None,
        });
        if let Some(body) = n.field(F::Body) {
            self.stmt(body);
        }
        self.jumps.pop();
        let ctx = self.switches.pop().unwrap_or_default();
        let mut targets = ctx.cases;
        targets.push(ctx.default.unwrap_or(epilog));
        if let Some(b) = self.b.func_mut().blocks.get_mut(sw_block.index()) {
            b.term.kind = TermKind::Switch { targets };
        }
        self.b.enter(epilog);
    }

    #[inline(never)]
    fn case_stmt(&mut self, n: Node<'_>) {
        let value = n.field(F::Value);
        let kids = children(n);
        let colon = kids
            .iter()
            .position(|c| !c.is_named() && c.node_kind() == ":");
        if !self.switches.is_empty() {
            let label_end = colon.map(|i| kids[i].end_byte()).unwrap_or(n.start_byte());
            let lsp = Span::new(self.file.pos(n.start_byte()), self.file.pos(label_end));
            let is_default = value.is_none();
            let blk = self
                .b
                .new_block(if is_default { "sw.default" } else { "sw.bb" }, Some(lsp));
            self.b.enter(blk);
            if let Some(sw) = self.switches.last_mut() {
                if is_default {
                    sw.default.get_or_insert(blk);
                } else {
                    sw.cases.push(blk);
                }
            }
        }
        let start = colon.map(|i| i + 1).unwrap_or(kids.len());
        let items: Vec<Node> = kids[start.min(kids.len())..].to_vec();
        self.block_items(&items);
    }
}

/// Parameter type adjustment: arrays and functions become pointers
/// (`double b[]` is `double *b`; `double b[restrict]` is restrict).
fn adjust_param(ty: CType, decl: Node<'_>, file: &FileCtx<'_>) -> CType {
    match ty.outer() {
        Some(Layer::Array { .. }) => {
            // qualifiers inside the outermost brackets
            // (the array declarator closest to the name)
            let mut restrict = false;
            let mut cur = decl;
            for _ in 0..256 {
                if cur.node_kind() == "array_declarator" {
                    restrict = children(cur)
                        .iter()
                        .any(|c| super::is_restrict_qualifier(*c, file));
                }
                match cur.node_kind() {
                    "parenthesized_declarator" | "attributed_declarator" => {
                        match cur.named_child(0) {
                            Some(c) => cur = c,
                            None => break,
                        }
                    }
                    _ => match cur.field(F::Declarator) {
                        Some(c) => cur = c,
                        None => break,
                    },
                }
            }
            ty.peel().wrap(Layer::Ptr { restrict })
        }
        Some(Layer::Func) => ty.wrap(Layer::Ptr { restrict: false }),
        _ => ty,
    }
}

impl ConstEnv for FnLowerer<'_, '_> {
    fn ident_value(&self, name: &str, offset: usize, depth: u32) -> Option<i64> {
        if self.file.macro_at(name, offset).is_some() {
            return self.file.macro_value(name, offset, depth);
        }
        if let Some(v) = self.lookup(name) {
            return self.var_const(v);
        }
        if let Some(&v) = self.globals_in_fn.get(name) {
            return self.var_const(v);
        }
        self.file.ident_value(name, offset, depth)
    }

    fn is_type_name(&self, name: &str) -> bool {
        self.file.is_type_name(name)
    }
}
