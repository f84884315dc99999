//! Declarations of Fortran scoping units: what every name of a program unit,
//! module or BLOCK construct is (type, attributes, dimensions, PARAMETER
//! value), implicit typing rules, USE and host association, procedure names.
//!
//! Scopes are collected before lowering, from the specification part, so
//! that attributes spread over several statements (`integer a` /
//! `dimension a(10)` / `save a`) are merged.

use super::intrinsics::{intrinsic_function, intrinsic_module_constant};
use super::{is_preproc_container, Cx};
use crate::frontend::fields::{FortranFields, F};
use crate::frontend::flat::FNode;
use crate::ir::ScalarTy;
use crate::source::Span;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Nesting depth beyond which constant folding gives up.
const FOLD_DEPTH: usize = 64;

/// A declared or implied type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeSpec {
    Int,
    /// `real` with its kind when known (`None`: a kind we cannot evaluate).
    Real(Option<i64>),
    Complex,
    Char,
    /// A derived type (lower-case type name).
    Derived(String),
    Unknown,
}

impl TypeSpec {
    pub fn scalar(&self) -> ScalarTy {
        match self {
            TypeSpec::Int => ScalarTy::Int,
            TypeSpec::Real(Some(4)) => ScalarTy::Float,
            TypeSpec::Real(Some(8)) => ScalarTy::Double,
            TypeSpec::Real(Some(10 | 16)) => ScalarTy::LongDouble,
            TypeSpec::Real(_) => ScalarTy::Unknown,
            TypeSpec::Complex => ScalarTy::Double,
            TypeSpec::Char => ScalarTy::Char,
            TypeSpec::Derived(_) => ScalarTy::Aggregate,
            TypeSpec::Unknown => ScalarTy::Unknown,
        }
    }

    pub fn derived_name(&self) -> Option<&str> {
        match self {
            TypeSpec::Derived(n) => Some(n),
            _ => None,
        }
    }
}

/// What the procedure behind a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcKind {
    /// An external, internal, module or dummy procedure: references are calls.
    External,
    /// An intrinsic procedure (declared INTRINSIC or by a typed declaration).
    Intrinsic,
    /// A statement function (inlined by the compiler).
    StatementFunction,
    /// A derived type name used as a structure constructor.
    Constructor,
}

/// Array shape information of a declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dims {
    /// Every bound is a compile-time constant.
    pub constant: bool,
    /// Each dimension's lower bound and extent, where they are constants.
    pub bounds: Vec<crate::ir::Dim>,
    /// Assumed shape (`:` or `lo:` in every dimension).
    pub assumed_shape: bool,
    /// Assumed size (`*` as the last upper bound).
    pub assumed_size: bool,
}

/// The parts of a section triplet or a bounds specifier `lo:hi:step`, by
/// position (`:n` has no `lo`; `:` has none).
pub fn triplet(n: FNode) -> [Option<FNode>; 3] {
    let mut out = [None, None, None];
    let mut slot = 0usize;
    for c in n.children() {
        if c.node_kind() == ":" {
            slot += 1;
        } else if c.is_named() && c.node_kind() != "comment" && slot < 3 {
            out[slot] = Some(c);
        }
    }
    out
}

/// Everything known about one name declared in a scope.
#[derive(Clone, Debug)]
pub struct DeclEntry {
    /// Spelling at the first declaration.
    pub name: String,
    /// The first declaring identifier.
    pub span: Span,
    pub has_type_decl: bool,
    pub ty: Option<TypeSpec>,
    pub dims: Option<Dims>,
    pub parameter: bool,
    pub const_value: Option<i64>,
    pub save: bool,
    /// An initialiser in a type declaration or a DATA statement (implies SAVE).
    pub initialized: bool,
    pub common: bool,
    pub pointer: bool,
    pub target: bool,
    pub allocatable: bool,
    pub external: bool,
    pub intrinsic: bool,
    pub equivalenced: bool,
    /// The INTENT of a dummy argument.
    pub intent: crate::ir::Intent,
    /// Cray pointee: the (lower-case) name of its pointer.
    pub cray_pointer: Option<String>,
    /// Not a variable: a procedure (decided after collection).
    pub proc_kind: Option<ProcKind>,
}

impl DeclEntry {
    /// An entry with nothing declared yet (also used for implicitly typed
    /// names).
    pub(super) fn new(name: &str, span: Span) -> DeclEntry {
        DeclEntry {
            name: name.to_string(),
            span,
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
            intent: crate::ir::Intent::Unspecified,
            cray_pointer: None,
            proc_kind: None,
        }
    }

    pub fn is_array(&self) -> bool {
        self.dims.is_some()
    }

    /// Run-time bounds, deferred/assumed shape, or allocatable.
    pub fn is_vla(&self) -> bool {
        self.dims.as_ref().is_some_and(|d| !d.constant) || self.allocatable
    }
}

/// A component of a derived type.
#[derive(Clone, Debug)]
pub struct Component {
    pub ty: TypeSpec,
    pub is_array: bool,
    /// The number of dimensions declared (0 for a scalar).
    pub rank: usize,
    pub pointer: bool,
}

#[derive(Clone, Debug, Default)]
pub struct TypeDef {
    pub components: HashMap<String, Component>,
}

/// IMPLICIT rules of a scope.
#[derive(Clone, Debug)]
pub struct Implicit {
    pub none: bool,
    pub letters: [Option<TypeSpec>; 26],
}

impl Implicit {
    /// The default rules: I-N integer, everything else real.
    pub fn default_rules() -> Implicit {
        let letters: [Option<TypeSpec>; 26] = std::array::from_fn(|i| {
            if (8..=13).contains(&i) {
                Some(TypeSpec::Int)
            } else {
                Some(TypeSpec::Real(Some(4)))
            }
        });
        Implicit {
            none: false,
            letters,
        }
    }

    pub fn type_of(&self, name: &str) -> Option<TypeSpec> {
        if self.none {
            return None;
        }
        let c = name.bytes().next()?.to_ascii_lowercase();
        if c.is_ascii_lowercase() {
            self.letters[(c - b'a') as usize].clone()
        } else {
            Some(TypeSpec::Real(Some(4)))
        }
    }
}

/// One USE statement.
#[derive(Clone, Debug)]
pub struct UseSpec {
    pub module: String,
    /// `only:` list present: only the listed names are visible.
    pub only: bool,
    /// Visible (local, remote) names: the `only:` list, or the renames.
    pub items: Vec<(String, String)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    Module,
    Program,
    Subroutine,
    Function,
    Block,
}

/// The declarations of one scoping unit.
#[derive(Clone, Debug)]
pub struct Scope {
    pub kind: ScopeKind,
    pub parent: Option<usize>,
    /// Declared names in order of first appearance in a specification
    /// statement.
    pub decls: Vec<DeclEntry>,
    /// Lower-case name to index in `decls`.
    pub index: HashMap<String, usize>,
    /// The scope's own IMPLICIT rules (None: inherited from the host).
    pub implicit: Option<Implicit>,
    pub uses: Vec<UseSpec>,
    pub procs: HashMap<String, ProcKind>,
    pub types: HashMap<String, TypeDef>,
    pub save_all: bool,
    /// Dummy arguments in order: (lower-case name, spelling, identifier span).
    pub dummies: Vec<(String, String, Span)>,
    /// The dummy list holds something else than names (an alternate
    /// return `*`): positions in `dummies` are not argument positions.
    pub odd_dummies: bool,
    /// The function result variable: (lower-case name, spelling, span, the
    /// type given on the FUNCTION statement).
    pub result: Option<(String, String, Span, Option<TypeSpec>)>,
    /// Names given in `call NAME` or referenced as `NAME(...)` in the
    /// executable part.
    pub called: HashSet<String>,
    pub paren_used: HashSet<String>,
    /// Names whose `NAME(...)` in the executable part can only be an
    /// array's element or section: the target of an assignment, or with a
    /// section subscript (`NAME(:, j)`).
    pub array_used: HashSet<String>,
}

impl Scope {
    pub fn new(kind: ScopeKind, parent: Option<usize>) -> Scope {
        Scope {
            kind,
            parent,
            decls: Vec::new(),
            index: HashMap::default(),
            implicit: None,
            uses: Vec::new(),
            procs: HashMap::default(),
            types: HashMap::default(),
            save_all: false,
            dummies: Vec::new(),
            odd_dummies: false,
            result: None,
            called: HashSet::default(),
            paren_used: HashSet::default(),
            array_used: HashSet::default(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&DeclEntry> {
        self.index.get(name).map(|&i| &self.decls[i])
    }

    fn entry(&mut self, name: &str, span: Span) -> &mut DeclEntry {
        let key = name.to_ascii_lowercase();
        let i = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                self.decls.push(DeclEntry::new(name, span));
                self.index.insert(key, self.decls.len() - 1);
                self.decls.len() - 1
            }
        };
        &mut self.decls[i]
    }
}

/// All scopes of a file, plus module names.
#[derive(Default)]
pub struct Scopes {
    pub scopes: Vec<Scope>,
    pub modules: HashMap<String, usize>,
    /// Every scope's `array_used`: names the file shows to be arrays where
    /// nothing in it declares them (module data from another file).
    pub array_used: HashSet<String>,
}

/// A declaration found outside the current scope.
#[derive(Clone, Copy, Debug)]
pub struct Found {
    pub scope: usize,
    pub decl: usize,
    /// Reached through host association from a non-module host (the host's
    /// local, dummy or saved variable).
    pub from_host_procedure: bool,
}

impl Scopes {
    /// Looks `name` up in a module's own declarations and in the modules it
    /// uses.
    fn find_in_module(&self, m: usize, name: &str, depth: usize) -> Option<(usize, usize)> {
        let s = self.scopes.get(m)?;
        if let Some(&d) = s.index.get(name) {
            return Some((m, d));
        }
        self.find_via_uses(&s.uses, name, depth + 1)
    }

    fn find_via_uses(&self, uses: &[UseSpec], name: &str, depth: usize) -> Option<(usize, usize)> {
        if depth > 16 {
            return None;
        }
        for u in uses {
            let Some(&m) = self.modules.get(&u.module) else {
                continue;
            };
            let remote = match u.items.iter().find(|(l, _)| l == name) {
                Some((_, r)) => r.as_str(),
                None if u.only => continue,
                None => {
                    // a renamed entity is not visible under its remote name
                    if u.items.iter().any(|(_, r)| r == name) {
                        continue;
                    }
                    name
                }
            };
            if let Some(f) = self.find_in_module(m, remote, depth) {
                return Some(f);
            }
        }
        None
    }

    /// Finds `name` outside scope `s`'s own declarations: USE association
    /// of `s`, then host association (the host's declarations and USEs,
    /// outwards).
    pub fn find_outer(&self, s: usize, name: &str) -> Option<Found> {
        let scope = self.scopes.get(s)?;
        if let Some((sc, d)) = self.find_via_uses(&scope.uses, name, 0) {
            return Some(Found {
                scope: sc,
                decl: d,
                from_host_procedure: false,
            });
        }
        let mut cur = scope.parent;
        let mut guard = 0;
        while let Some(p) = cur {
            guard += 1;
            if guard > 64 {
                break;
            }
            let ps = self.scopes.get(p)?;
            if let Some(&d) = ps.index.get(name) {
                return Some(Found {
                    scope: p,
                    decl: d,
                    from_host_procedure: ps.kind != ScopeKind::Module,
                });
            }
            if let Some((sc, d)) = self.find_via_uses(&ps.uses, name, 0) {
                return Some(Found {
                    scope: sc,
                    decl: d,
                    from_host_procedure: false,
                });
            }
            cur = ps.parent;
        }
        None
    }

    /// A procedure name visible from scope `s` (own, host, used modules).
    pub fn find_proc(&self, s: usize, name: &str) -> Option<ProcKind> {
        let mut cur = Some(s);
        let mut guard = 0;
        while let Some(c) = cur {
            guard += 1;
            if guard > 64 {
                break;
            }
            let sc = self.scopes.get(c)?;
            if let Some(&k) = sc.procs.get(name) {
                return Some(k);
            }
            if let Some(k) = self.find_proc_via_uses(&sc.uses, name, 0) {
                return Some(k);
            }
            cur = sc.parent;
        }
        None
    }

    fn find_proc_via_uses(&self, uses: &[UseSpec], name: &str, depth: usize) -> Option<ProcKind> {
        if depth > 16 {
            return None;
        }
        for u in uses {
            let Some(&m) = self.modules.get(&u.module) else {
                continue;
            };
            let remote = match u.items.iter().find(|(l, _)| l == name) {
                Some((_, r)) => r.as_str(),
                None if u.only => continue,
                None => name,
            };
            let ms = self.scopes.get(m)?;
            if let Some(&k) = ms.procs.get(remote) {
                return Some(k);
            }
            if let Some(k) = self.find_proc_via_uses(&ms.uses, remote, depth + 1) {
                return Some(k);
            }
        }
        None
    }

    /// A derived type definition visible from scope `s`.
    pub fn find_type(&self, s: usize, name: &str) -> Option<&TypeDef> {
        let mut cur = Some(s);
        let mut guard = 0;
        while let Some(c) = cur {
            guard += 1;
            if guard > 64 {
                break;
            }
            let sc = self.scopes.get(c)?;
            if let Some(t) = sc.types.get(name) {
                return Some(t);
            }
            for u in &sc.uses {
                if let Some(&m) = self.modules.get(&u.module) {
                    if let Some(t) = self.scopes.get(m).and_then(|ms| ms.types.get(name)) {
                        return Some(t);
                    }
                }
            }
            cur = sc.parent;
        }
        None
    }

    /// The implicit rules in force in scope `s` (its own, else its host's).
    pub fn implicit(&self, s: usize) -> Implicit {
        let mut cur = Some(s);
        let mut guard = 0;
        while let Some(c) = cur {
            guard += 1;
            if guard > 64 {
                break;
            }
            let Some(sc) = self.scopes.get(c) else { break };
            if let Some(i) = &sc.implicit {
                return i.clone();
            }
            cur = sc.parent;
        }
        Implicit::default_rules()
    }

    /// Whether an undeclared name in scope `s` is taken to come from a
    /// module or host: the scope or a host has IMPLICIT NONE or a USE.
    pub fn assumes_external_names(&self, s: usize) -> bool {
        let mut cur = Some(s);
        let mut guard = 0;
        while let Some(c) = cur {
            guard += 1;
            if guard > 64 {
                break;
            }
            let Some(sc) = self.scopes.get(c) else { break };
            if !sc.uses.is_empty() || sc.implicit.as_ref().is_some_and(|i| i.none) {
                return true;
            }
            cur = sc.parent;
        }
        false
    }

    /// The PARAMETER value of `name` visible from scope `s` (outside its own
    /// declarations), or an intrinsic-module kind constant.
    pub fn outer_const(&self, s: usize, name: &str) -> Option<i64> {
        match self.find_outer(s, name) {
            Some(f) => {
                let d = &self.scopes[f.scope].decls[f.decl];
                if d.parameter {
                    d.const_value
                } else {
                    None
                }
            }
            None => intrinsic_module_constant(name),
        }
    }

    /// Whether `name` is an array visible from scope `s` (outside its own
    /// declarations).
    pub fn outer_is_array(&self, s: usize, name: &str) -> bool {
        self.find_outer(s, name)
            .is_some_and(|f| self.scopes[f.scope].decls[f.decl].is_array())
    }
}

// ---------------------------------------------------------------------------
// Constant folding

/// Parses an integer literal (`42`, `4_8`, `4_ik`, `z'ff'`, `b'101'`).
/// (Without an allocation: every number literal a unit lowers comes here,
/// most of them real, `1.0d0`.)
pub fn int_literal(text: &str) -> Option<i64> {
    let t = text.trim();
    let radix = match t.as_bytes().first()?.to_ascii_lowercase() {
        b'z' | b'x' => Some(16),
        b'o' => Some(8),
        b'b' => Some(2),
        _ => None,
    };
    if let Some(radix) = radix {
        let rest = &t[1..];
        let body = rest.trim_matches(|c| c == '\'' || c == '"');
        if body.len() + 2 == rest.len() && !body.is_empty() {
            return i64::from_str_radix(body, radix).ok();
        }
    }
    let digits = match t.find('_') {
        Some(i) => &t[..i],
        None => t,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<i64>().ok()
}

/// Folds an integer constant expression. `lookup` gives the value of a named
/// constant (lower-case name).
pub fn fold(cx: &Cx, n: FNode, lookup: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
    fold_depth(cx, n, lookup, 0)
}

fn fold_depth(
    cx: &Cx,
    n: FNode,
    lookup: &dyn Fn(&str) -> Option<i64>,
    depth: usize,
) -> Option<i64> {
    if depth > FOLD_DEPTH {
        return None;
    }
    let rec = |m: FNode| fold_depth(cx, m, lookup, depth + 1);
    match n.node_kind() {
        "number_literal" => int_literal(cx.text(n)),
        "identifier" => lookup(&cx.lname_ref(n)),
        "parenthesized_expression" => rec(n.named_child(0)?),
        "unary_expression" => {
            let arg = rec(n.field(F::Argument)?)?;
            match cx.text(n.field(F::Operator)?) {
                "-" => arg.checked_neg(),
                "+" => Some(arg),
                _ => None,
            }
        }
        "math_expression" => {
            let l = rec(n.field(F::Left)?)?;
            let r = rec(n.field(F::Right)?)?;
            match cx.text(n.field(F::Operator)?) {
                "+" => l.checked_add(r),
                "-" => l.checked_sub(r),
                "*" => l.checked_mul(r),
                "/" => l.checked_div(r),
                "**" => {
                    let e = u32::try_from(r).ok()?;
                    l.checked_pow(e)
                }
                _ => None,
            }
        }
        "call_expression" => fold_call(cx, n, lookup, depth),
        _ => None,
    }
}

/// Folds `kind(...)`, `selected_real_kind(...)`, `max(...)` and friends.
#[inline(never)]
fn fold_call(cx: &Cx, n: FNode, lookup: &dyn Fn(&str) -> Option<i64>, depth: usize) -> Option<i64> {
    let rec = |m: FNode| fold_depth(cx, m, lookup, depth + 1);
    let f = n.named_child(0)?;
    if f.node_kind() != "identifier" || n.named_child_count() != 2 {
        return None;
    }
    let args: Vec<FNode> = n
        .named_child(1)?
        .named_children()
        .filter(|c| c.node_kind() != "comment")
        .collect();
    let name = cx.lname_ref(f);
    match &*name {
        "kind" => {
            let a = args.first()?;
            literal_kind(cx, *a)
        }
        "selected_real_kind" => {
            let p = match args.first() {
                Some(a) => rec(keyword_value(*a))?,
                None => 0,
            };
            Some(match p {
                i64::MIN..=6 => 4,
                7..=15 => 8,
                16..=18 => 10,
                _ => 16,
            })
        }
        "selected_int_kind" => {
            let r = rec(keyword_value(*args.first()?))?;
            Some(match r {
                i64::MIN..=2 => 1,
                3..=4 => 2,
                5..=9 => 4,
                _ => 8,
            })
        }
        "abs" if args.len() == 1 => rec(args[0])?.checked_abs(),
        "max" | "min" if !args.is_empty() => {
            let mut vals = Vec::new();
            for a in &args {
                vals.push(rec(*a)?);
            }
            if name == "max" {
                vals.into_iter().max()
            } else {
                vals.into_iter().min()
            }
        }
        "mod" if args.len() == 2 => rec(args[0])?.checked_rem(rec(args[1])?),
        "int" if args.len() == 1 => rec(args[0]),
        _ => None,
    }
}

fn keyword_value(n: FNode) -> FNode {
    if n.node_kind() == "keyword_argument" {
        n.field(F::Value).unwrap_or(n)
    } else {
        n
    }
}

/// The kind of a literal (`kind(1.0d0)` = 8, `kind(1.0)` = 4, `kind(0)` = 4).
fn literal_kind(cx: &Cx, n: FNode) -> Option<i64> {
    let n = keyword_value(n);
    let t = cx.text(n).to_ascii_lowercase();
    match n.node_kind() {
        "number_literal" => {
            if let Some(i) = t.find('_') {
                return int_literal(&t[i + 1..]);
            }
            if t.contains('d') {
                Some(8)
            } else if t.contains('q') {
                Some(16)
            } else {
                Some(4)
            }
        }
        "boolean_literal" => Some(4),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Collection

/// Reads a type (`intrinsic_type`, `derived_type`) node.
pub fn type_spec(cx: &Cx, n: FNode, lookup: &dyn Fn(&str) -> Option<i64>) -> TypeSpec {
    match n.node_kind() {
        "intrinsic_type" => {
            let text = cx.text(n).to_ascii_lowercase();
            let word: String = text
                .chars()
                .take_while(|c| c.is_ascii_alphabetic() || c.is_whitespace())
                .filter(|c| !c.is_whitespace())
                .collect();
            let kind = n.field(F::Kind).and_then(|k| kind_value(cx, k, lookup));
            let has_kind = n.field(F::Kind).is_some();
            if word.starts_with("doubleprecision") {
                return TypeSpec::Real(Some(8));
            }
            if word.starts_with("doublecomplex") || word.starts_with("complex") {
                return TypeSpec::Complex;
            }
            if word.starts_with("real") {
                return match (has_kind, kind) {
                    (false, _) => TypeSpec::Real(Some(4)),
                    (true, k) => TypeSpec::Real(k),
                };
            }
            if word.starts_with("integer")
                || word.starts_with("logical")
                || word.starts_with("byte")
            {
                return TypeSpec::Int;
            }
            if word.starts_with("character") {
                return TypeSpec::Char;
            }
            TypeSpec::Unknown
        }
        "derived_type" => {
            let Some(name) = n.field(F::Name) else {
                return TypeSpec::Unknown;
            };
            if name.node_kind() == "intrinsic_type" {
                // type(integer) etc.
                return type_spec(cx, name, lookup);
            }
            if cx.text(n).to_ascii_lowercase().starts_with("class") {
                // polymorphic: dynamic type unknown
                return TypeSpec::Derived(cx.lname(name));
            }
            TypeSpec::Derived(cx.lname(name))
        }
        _ => TypeSpec::Unknown,
    }
}

/// The value of a `kind` node: `(8)`, `(kind=8)`, `*8`, `(dp)`.
fn kind_value(cx: &Cx, k: FNode, lookup: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
    let first = &k.named_children().find(|c| c.node_kind() != "comment")?;
    match first.node_kind() {
        "keyword_argument" => {
            let name = first.field(F::Name).map(|n| cx.lname(n));
            if name.as_deref() == Some("len") {
                return None;
            }
            fold(cx, keyword_value(*first), lookup)
        }
        _ => fold(cx, *first, lookup),
    }
}

/// Dimensions from an array spec (`size` / `argument_list` node).
pub fn dims_of(cx: &Cx, spec: FNode, lookup: &dyn Fn(&str) -> Option<i64>) -> Dims {
    let mut constant = true;
    let mut bounds = Vec::new();
    let mut assumed = 0usize;
    let mut assumed_size = false;
    for d in super::named_kids(spec) {
        match d.node_kind() {
            "comment" => {}
            "extent_specifier" => {
                let [lo, hi, _] = triplet(d);
                let lower = match lo {
                    Some(l) => fold(cx, l, lookup),
                    None => Some(1),
                };
                let upper = hi.and_then(|h| fold(cx, h, lookup));
                if hi.is_none() {
                    // `lo:`
                    assumed += 1;
                }
                if hi.is_some_and(|h| h.node_kind() == "assumed_size" || cx.text(h).trim() == "*") {
                    // `lo:*`
                    assumed_size = true;
                }
                if lo.is_some_and(|l| fold(cx, l, lookup).is_none()) || upper.is_none() {
                    constant = false;
                }
                let extent = match (lower, upper) {
                    (Some(l), Some(u)) => u.checked_sub(l).and_then(|x| x.checked_add(1)),
                    _ => None,
                };
                bounds.push(crate::ir::Dim { lower, extent });
            }
            // assumed rank (`..`): no dimension is known
            "assumed_rank" => constant = false,
            // `*` and `:` start at 1 (a deferred shape's bounds are the
            // allocation's: see `Lowerer::make_var`)
            "assumed_size" | "assumed_shape" => {
                constant = false;
                if d.node_kind() == "assumed_shape" {
                    assumed += 1;
                } else {
                    assumed_size = true;
                }
                bounds.push(crate::ir::Dim {
                    lower: Some(1),
                    extent: None,
                });
            }
            _ => {
                let extent = fold(cx, d, lookup);
                if extent.is_none() {
                    constant = false;
                }
                bounds.push(crate::ir::Dim {
                    lower: Some(1),
                    extent,
                });
            }
        }
    }
    let assumed_shape = assumed > 0 && assumed == bounds.len();
    Dims {
        constant,
        bounds,
        assumed_shape,
        assumed_size,
    }
}

/// Collects the declarations of a scoping unit (a program unit, a module or
/// a BLOCK construct) into a [`Scope`]. `outer` gives the value of named
/// constants declared outside the scope, `outer_is_array` whether an outer
/// name is an array.
pub struct Collector<'c, 'a> {
    pub cx: &'c Cx<'a>,
    pub outer: &'c dyn Fn(&str) -> Option<i64>,
    pub outer_is_array: &'c dyn Fn(&str) -> bool,
}

impl Collector<'_, '_> {
    fn lookup_in(&self, scope: &Scope, name: &str) -> Option<i64> {
        match scope.get(name) {
            Some(d) if d.parameter => d.const_value,
            Some(_) => None,
            None => (self.outer)(name),
        }
    }

    /// Reads the header statement of a unit: dummies, function result.
    pub fn header(&self, scope: &mut Scope, stmt: FNode) {
        let cx = self.cx;
        if let Some(params) = stmt.field(F::Parameters) {
            for p in super::named_kids(params) {
                if p.node_kind() == "identifier" {
                    scope
                        .dummies
                        .push((cx.lname(p), cx.text(p).to_string(), cx.span(p)));
                } else if p.node_kind() != "comment" {
                    scope.odd_dummies = true;
                }
            }
        }
        if stmt.node_kind() == "function_statement" {
            let Some(name) = stmt.field(F::Name) else {
                return;
            };
            let lookup = |s: &str| self.lookup_in(scope, s);
            let ty = stmt.field(F::Type).map(|t| type_spec(cx, t, &lookup));
            let mut result = (cx.lname(name), cx.text(name).to_string(), cx.span(name));
            for c in super::named_kids(stmt) {
                if c.node_kind() == "function_result" {
                    if let Some(id) = c.named_children().find(|x| x.node_kind() == "identifier") {
                        result = (cx.lname(id), cx.text(id).to_string(), cx.span(id));
                        // the function name itself is then a procedure
                        scope.procs.insert(cx.lname(name), ProcKind::External);
                    }
                }
            }
            scope.result = Some((result.0, result.1, result.2, ty));
        }
    }

    /// Collects the specification statements among `items` (DATA
    /// statements anywhere; statement functions only before the first
    /// executable statement).
    pub fn collect(&self, scope: &mut Scope, items: &[FNode]) {
        let mut spec_region = true;
        let mut stack: Vec<FNode> = items.iter().rev().copied().collect();
        let mut guard = 0usize;
        while let Some(n) = stack.pop() {
            guard += 1;
            if guard > 1_000_000 {
                break;
            }
            if is_preproc_container(n.node_kind()) {
                for c in super::named_kids(n).into_iter().rev() {
                    stack.push(c);
                }
                continue;
            }
            match n.node_kind() {
                "comment"
                | "statement_label"
                | "preproc_include"
                | "preproc_def"
                | "preproc_function_def"
                | "preproc_call"
                | "include_statement" => {}
                "implicit_statement" => self.implicit(scope, n),
                "use_statement" => self.use_stmt(scope, n),
                "variable_declaration" => self.var_decl(scope, n),
                "variable_modification" => self.var_mod(scope, n),
                "parameter_statement" => self.parameter_stmt(scope, n),
                "common_statement" => self.common_stmt(scope, n),
                "save_statement" => self.save_stmt(scope, n),
                "data_statement" => self.data_stmt(scope, n),
                "equivalence_statement" => self.equivalence_stmt(scope, n),
                "cray_pointer_declaration" => self.cray_stmt(scope, n),
                "interface" => self.interface(scope, n),
                "derived_type_definition" => self.type_def(scope, n),
                "enum" | "enumeration_type" => self.enum_def(scope, n),
                "internal_procedures" => self.internal_procs(scope, n),
                "assignment_statement" if spec_region => {
                    if !self.statement_function(scope, n) {
                        spec_region = false;
                    }
                }
                "namelist_statement" | "public_statement" | "private_statement"
                | "bind_statement" | "import_statement" | "format_statement"
                | "entry_statement" | ";" => {}
                _ => spec_region = false,
            }
        }
    }

    fn implicit(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        let imp = scope.implicit.get_or_insert_with(Implicit::default_rules);
        let kids = super::named_kids(n);
        if kids.iter().any(|k| k.node_kind() == "none") {
            imp.none = true;
            return;
        }
        let mut current: Option<TypeSpec> = None;
        for k in kids {
            match k.node_kind() {
                "intrinsic_type" | "derived_type" => {
                    let lookup = |s: &str| (self.outer)(s);
                    current = Some(type_spec(cx, k, &lookup));
                }
                "implicit_range" => {
                    let Some(ty) = &current else { continue };
                    let t: Vec<u8> = cx
                        .text(k)
                        .bytes()
                        .filter(|b| b.is_ascii_alphabetic())
                        .map(|b| b.to_ascii_lowercase())
                        .collect();
                    let (a, b) = match t.as_slice() {
                        [a] => (*a, *a),
                        [a, b] => (*a, *b),
                        _ => continue,
                    };
                    for c in a.min(b)..=a.max(b) {
                        imp.letters[(c - b'a') as usize] = Some(ty.clone());
                    }
                }
                _ => {}
            }
        }
    }

    fn use_stmt(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        let mut module = String::new();
        let mut only = false;
        let mut items = Vec::new();
        for k in super::named_kids(n) {
            match k.node_kind() {
                "module_name" => module = cx.lname(k),
                "use_alias" => {
                    if let Some(pair) = alias_pair(cx, k) {
                        items.push(pair);
                    }
                }
                "included_items" => {
                    only = true;
                    for it in super::named_kids(k) {
                        match it.node_kind() {
                            "use_alias" => {
                                if let Some(pair) = alias_pair(cx, it) {
                                    items.push(pair);
                                }
                            }
                            "identifier" => items.push((cx.lname(it), cx.lname(it))),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        if !module.is_empty() {
            scope.uses.push(UseSpec {
                module,
                only,
                items,
            });
        }
    }

    fn var_decl(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        let ty_node = n.field(F::Type);
        let is_procedure = ty_node.is_some_and(|t| t.node_kind() == "procedure");
        let ty = {
            let lookup = |s: &str| self.lookup_in(scope, s);
            ty_node.map(|t| type_spec(cx, t, &lookup))
        };
        let mut attr_dims: Option<FNode> = None;
        let mut flags = AttrFlags::default();
        let attrs: Vec<FNode> = n.fields(F::Attribute).into_iter().collect();
        for a in attrs {
            if a.node_kind() == "type_qualifier" {
                flags.apply(cx, a, &mut attr_dims);
            }
        }
        let decls: Vec<FNode> = n.fields(F::Declarator).into_iter().collect();
        for d in decls {
            let (ident, size, init) = split_declarator(d);
            let Some(ident) = ident else { continue };
            let name = cx.text(ident).to_string();
            let dims = {
                let lookup = |s: &str| self.lookup_in(scope, s);
                size.or(attr_dims).map(|s| dims_of(cx, s, &lookup))
            };
            let value = if flags.parameter {
                init.and_then(|e| {
                    let lookup = |s: &str| self.lookup_in(scope, s);
                    fold(cx, e, &lookup)
                })
            } else {
                None
            };
            let e = scope.entry(&name, cx.span(ident));
            if !e.has_type_decl {
                e.has_type_decl = true;
                e.span = cx.span(ident);
                e.name = name.clone();
            }
            if is_procedure {
                e.external = true;
            } else if ty.is_some() {
                e.ty = ty.clone();
            }
            if dims.is_some() {
                e.dims = dims;
            }
            flags.merge_into(e);
            if init.is_some() {
                if flags.parameter {
                    e.const_value = value;
                } else if d.node_kind() != "pointer_init_declarator" {
                    e.initialized = true;
                }
            }
        }
    }

    fn var_mod(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        let mut attr_dims: Option<FNode> = None;
        let mut flags = AttrFlags::default();
        for k in super::named_kids(n) {
            if k.node_kind() == "type_qualifier" {
                flags.apply(cx, k, &mut attr_dims);
            }
        }
        let decls: Vec<FNode> = n.fields(F::Declarator).into_iter().collect();
        for d in decls {
            let (ident, size, _) = split_declarator(d);
            let Some(ident) = ident else { continue };
            let dims = {
                let lookup = |s: &str| self.lookup_in(scope, s);
                size.or(attr_dims).map(|s| dims_of(cx, s, &lookup))
            };
            let e = scope.entry(cx.text(ident), cx.span(ident));
            if dims.is_some() {
                e.dims = dims;
            }
            flags.merge_into(e);
        }
    }

    fn parameter_stmt(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        for pa in super::named_kids(n) {
            if pa.node_kind() != "parameter_assignment" {
                continue;
            }
            let kids: Vec<FNode> = pa
                .named_children()
                .filter(|k| k.node_kind() != "comment")
                .collect();
            let (Some(id), Some(e)) = (kids.first(), kids.get(1)) else {
                continue;
            };
            let value = {
                let lookup = |s: &str| self.lookup_in(scope, s);
                fold(cx, *e, &lookup)
            };
            let entry = scope.entry(cx.text(*id), cx.span(*id));
            entry.parameter = true;
            entry.const_value = value;
        }
    }

    fn common_stmt(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        let mut decls = Vec::new();
        for k in super::named_kids(n) {
            match k.node_kind() {
                "variable_group" => {
                    for d in super::named_kids(k) {
                        if d.node_kind() != "name" {
                            decls.push(d);
                        }
                    }
                }
                _ => decls.push(k),
            }
        }
        for d in decls {
            let (ident, size, _) = split_declarator(d);
            let Some(ident) = ident else { continue };
            let dims = {
                let lookup = |s: &str| self.lookup_in(scope, s);
                size.map(|s| dims_of(cx, s, &lookup))
            };
            let e = scope.entry(cx.text(ident), cx.span(ident));
            e.common = true;
            if dims.is_some() {
                e.dims = dims;
            }
        }
    }

    fn save_stmt(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        let ids: Vec<FNode> = n
            .named_children()
            .filter(|k| k.node_kind() == "identifier" || k.node_kind() == "common_block")
            .collect();
        if ids.is_empty() {
            scope.save_all = true;
        }
        for id in ids {
            if id.node_kind() == "identifier" {
                scope.entry(cx.text(id), cx.span(id)).save = true;
            }
        }
    }

    fn data_stmt(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        for set in super::named_kids(n) {
            if set.node_kind() != "data_set" {
                continue;
            }
            for obj in super::named_kids(set) {
                if let Some(base) = designator_base(obj) {
                    scope
                        .entry(cx.text(base), cx.span(base))
                        .initialized = true;
                }
            }
        }
    }

    fn equivalence_stmt(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        for set in super::named_kids(n) {
            for obj in super::named_kids(set) {
                if let Some(base) = designator_base(obj) {
                    scope
                        .entry(cx.text(base), cx.span(base))
                        .equivalenced = true;
                }
            }
        }
    }

    fn cray_stmt(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        for pair in super::named_kids(n) {
            if pair.node_kind() != "cray_pointer_pair" {
                continue;
            }
            let (Some(p), Some(t)) = (pair.field(F::Pointer), pair.field(F::Target)) else {
                continue;
            };
            let pname = cx.lname(p);
            scope.entry(cx.text(p), cx.span(p));
            let (ident, size, _) = split_declarator(t);
            let Some(ident) = ident else { continue };
            let dims = {
                let lookup = |s: &str| self.lookup_in(scope, s);
                size.map(|s| dims_of(cx, s, &lookup))
            };
            let e = scope.entry(cx.text(ident), cx.span(ident));
            e.cray_pointer = Some(pname);
            if dims.is_some() {
                e.dims = dims;
            }
        }
    }

    fn interface(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        for k in super::named_kids(n) {
            match k.node_kind() {
                "interface_statement" => {
                    for c in super::named_kids(k) {
                        if c.node_kind() == "name" {
                            scope.procs.insert(cx.lname(c), ProcKind::External);
                        }
                    }
                }
                "function" | "subroutine" => {
                    if let Some(name) = unit_name(k) {
                        scope.procs.insert(cx.lname(name), ProcKind::External);
                    }
                }
                "procedure_statement" => {
                    for d in k.fields(F::Declarator).into_iter() {
                        scope.procs.insert(cx.lname(d), ProcKind::External);
                    }
                }
                _ => {}
            }
        }
    }

    fn type_def(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        let mut name = None;
        let mut def = TypeDef::default();
        for k in super::named_kids(n) {
            match k.node_kind() {
                "derived_type_statement" => {
                    name = k
                        .named_children()
                        .find(|c| c.node_kind() == "type_name")
                        .map(|c| cx.lname(c));
                }
                "variable_declaration" => {
                    let ty = {
                        let lookup = |s: &str| self.lookup_in(scope, s);
                        k.field(F::Type)
                            .map(|t| type_spec(cx, t, &lookup))
                            .unwrap_or(TypeSpec::Unknown)
                    };
                    let mut flags = AttrFlags::default();
                    let mut attr_dims = None;
                    let attrs: Vec<FNode> = k.fields(F::Attribute).into_iter().collect();
                    for a in attrs {
                        if a.node_kind() == "type_qualifier" {
                            flags.apply(cx, a, &mut attr_dims);
                        }
                    }
                    let decls: Vec<FNode> = k.fields(F::Declarator).into_iter().collect();
                    for d in decls {
                        let (ident, size, _) = split_declarator(d);
                        let Some(ident) = ident else { continue };
                        let shape = size.or(attr_dims);
                        def.components.insert(
                            cx.lname(ident),
                            Component {
                                ty: ty.clone(),
                                is_array: shape.is_some(),
                                rank: shape.map_or(0, |s| dims_of(cx, s, &|_| None).bounds.len()),
                                pointer: flags.pointer,
                            },
                        );
                    }
                }
                _ => {}
            }
        }
        if let Some(name) = name {
            scope.procs.insert(name.clone(), ProcKind::Constructor);
            scope.types.insert(name, def);
        }
    }

    fn enum_def(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        let mut next: Option<i64> = Some(0);
        for st in super::named_kids(n) {
            if st.node_kind() != "enumerator_statement" {
                continue;
            }
            let decls: Vec<FNode> = st.fields(F::Declarator).into_iter().collect();
            for d in decls {
                let (ident, _, init) = split_declarator(d);
                let Some(ident) = ident else { continue };
                let value = match init {
                    Some(e) => {
                        let lookup = |s: &str| self.lookup_in(scope, s);
                        fold(cx, e, &lookup)
                    }
                    None => next,
                };
                let e = scope.entry(cx.text(ident), cx.span(ident));
                e.parameter = true;
                e.ty = Some(TypeSpec::Int);
                e.const_value = value;
                next = value.and_then(|v| v.checked_add(1));
            }
        }
    }

    fn internal_procs(&self, scope: &mut Scope, n: FNode) {
        let cx = self.cx;
        let mut stack = super::named_kids(n);
        let mut guard = 0;
        while let Some(k) = stack.pop() {
            guard += 1;
            if guard > 100_000 {
                break;
            }
            if is_preproc_container(k.node_kind()) {
                stack.extend(super::named_kids(k));
                continue;
            }
            if matches!(
                k.node_kind(),
                "function" | "subroutine" | "module_procedure"
            ) {
                if let Some(name) = unit_name(k) {
                    scope.procs.insert(cx.lname(name), ProcKind::External);
                }
            }
        }
    }

    /// `f(x, y) = expr` in the specification part, where `f` is not an
    /// array: a statement function. Returns whether it was one.
    fn statement_function(&self, scope: &mut Scope, n: FNode) -> bool {
        let cx = self.cx;
        let Some(left) = n.field(F::Left) else {
            return false;
        };
        if left.node_kind() != "call_expression" || left.named_child_count() != 2 {
            return false;
        }
        let (Some(f), Some(args)) = (left.named_child(0), left.named_child(1)) else {
            return false;
        };
        if f.node_kind() != "identifier" || args.node_kind() != "argument_list" {
            return false;
        }
        if !super::named_kids(args)
            .iter()
            .all(|a| a.node_kind() == "identifier" || a.node_kind() == "comment")
        {
            return false;
        }
        let name = cx.lname(f);
        if scope.get(&name).is_some_and(|d| d.is_array()) || (self.outer_is_array)(&name) {
            return false;
        }
        if scope
            .get(&name)
            .is_some_and(|d| d.ty == Some(TypeSpec::Char))
        {
            // a substring assignment is not a statement function
            return false;
        }
        scope.procs.insert(name, ProcKind::StatementFunction);
        true
    }

    /// After collection: names declared as variables that are really
    /// procedures (EXTERNAL, INTRINSIC, or a typed scalar referenced with an
    /// argument list / in a CALL).
    pub fn finish(&self, scope: &mut Scope) {
        let result = scope.result.as_ref().map(|r| r.0.clone());
        let dummies: HashSet<String> = scope.dummies.iter().map(|d| d.0.clone()).collect();
        let mut procs = Vec::new();
        for (name, &i) in &scope.index {
            let d = &scope.decls[i];
            if Some(name) == result.as_ref() {
                continue;
            }
            let kind = if d.intrinsic {
                Some(ProcKind::Intrinsic)
            } else if d.external || (scope.called.contains(name) && !d.is_array()) {
                Some(ProcKind::External)
            } else if scope.paren_used.contains(name)
                && !d.is_array()
                && !d.parameter
                && d.cray_pointer.is_none()
                && !matches!(d.ty, Some(TypeSpec::Char) | Some(TypeSpec::Derived(_)))
                && (d.has_type_decl || dummies.contains(name))
            {
                if intrinsic_function(name).is_some() {
                    Some(ProcKind::Intrinsic)
                } else {
                    Some(ProcKind::External)
                }
            } else {
                None
            };
            if let Some(k) = kind {
                procs.push((name.clone(), i, k));
            }
        }
        for (name, i, k) in procs {
            // a statement function keeps its kind
            let k = *scope.procs.entry(name).or_insert(k);
            scope.decls[i].proc_kind = Some(k);
        }
        for d in &scope.dummies {
            let used = scope.called.contains(&d.0) || scope.paren_used.contains(&d.0);
            if used && !scope.index.contains_key(&d.0) {
                scope.procs.insert(d.0.clone(), ProcKind::External);
            }
        }
    }
}

fn alias_pair(cx: &Cx, n: FNode) -> Option<(String, String)> {
    let kids = super::named_kids(n);
    let local = kids.iter().find(|k| k.node_kind() == "local_name")?;
    let remote = kids.iter().find(|k| k.node_kind() == "identifier")?;
    Some((cx.lname(*local), cx.lname(*remote)))
}

/// Attribute flags of a declaration statement.
#[derive(Default)]
struct AttrFlags {
    parameter: bool,
    save: bool,
    pointer: bool,
    target: bool,
    allocatable: bool,
    external: bool,
    intrinsic: bool,
    intent: crate::ir::Intent,
}

impl AttrFlags {
    fn apply<'t>(&mut self, cx: &Cx, q: FNode<'t>, dims: &mut Option<FNode<'t>>) {
        let word = q
            .child(0)
            .map(|c| c.node_kind().to_ascii_lowercase())
            .unwrap_or_default();
        let word = if word.is_empty() {
            cx.text(q).to_ascii_lowercase()
        } else {
            word
        };
        match word.as_str() {
            "parameter" => self.parameter = true,
            "save" => self.save = true,
            "pointer" => self.pointer = true,
            "target" => self.target = true,
            "allocatable" => self.allocatable = true,
            "external" => self.external = true,
            "intrinsic" => self.intrinsic = true,
            "intent" => {
                use crate::ir::Intent;
                let kinds: Vec<String> = q
                    .children()
                    .map(|c| c.node_kind().to_ascii_lowercase())
                    .collect();
                let has = |k: &str| kinds.iter().any(|x| x == k);
                self.intent = match (has("in"), has("out") || has("inout")) {
                    (_, true) if has("inout") || has("in") => Intent::InOut,
                    (false, true) => Intent::Out,
                    (true, false) => Intent::In,
                    _ => Intent::Unspecified,
                };
            }
            "dimension" => {
                *dims = q
                    .named_children()
                    .find(|c| c.node_kind() == "argument_list");
            }
            _ => {}
        }
    }

    fn merge_into(&self, e: &mut DeclEntry) {
        e.parameter |= self.parameter;
        e.save |= self.save;
        e.pointer |= self.pointer;
        e.target |= self.target;
        e.allocatable |= self.allocatable;
        e.external |= self.external;
        e.intrinsic |= self.intrinsic;
        if self.intent != crate::ir::Intent::Unspecified {
            e.intent = self.intent;
        }
    }
}

/// (identifier, array spec, initialiser) of a declarator.
pub fn split_declarator(d: FNode) -> (Option<FNode>, Option<FNode>, Option<FNode>) {
    match d.node_kind() {
        "identifier" => (Some(d), None, None),
        "sized_declarator" => {
            let kids = super::named_kids(d);
            let id = kids.iter().find(|k| k.node_kind() == "identifier").copied();
            let size = kids.iter().find(|k| k.node_kind() == "size").copied();
            (id, size, None)
        }
        "coarray_declarator" => match d.named_child(0) {
            Some(inner) if inner.node_kind() != "coarray_declarator" => {
                let (id, size, _) = split_declarator(inner);
                (id, size, None)
            }
            _ => (None, None, None),
        },
        "init_declarator" | "pointer_init_declarator" | "data_declarator" => {
            let left = d.field(F::Left);
            let right = d.field(F::Right);
            let (id, size, _) = match left {
                Some(l) if l.node_kind() != d.node_kind() => split_declarator(l),
                _ => (None, None, None),
            };
            (id, size, right)
        }
        _ => (None, None, None),
    }
}

/// The base identifier of a designator (`a`, `a(i)`, `t%x`, `a(i)%y(2)`),
/// found iteratively.
pub fn designator_base(n: FNode) -> Option<FNode> {
    let mut cur = n;
    for _ in 0..10_000 {
        match cur.node_kind() {
            "identifier" => return Some(cur),
            "call_expression" | "derived_type_member_expression" | "coarray_expression" => {
                cur = cur.named_child(0)?;
            }
            _ => return None,
        }
    }
    None
}

/// The name node of a program unit node.
pub fn unit_name(n: FNode) -> Option<FNode> {
    let stmt = n.named_child(0)?;
    stmt.field(F::Name)
}
