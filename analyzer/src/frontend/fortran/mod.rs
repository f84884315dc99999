//! Fortran front end: tree-sitter-fortran trees to IR (SEMANTICS.md §3,
//! gfortran's CFG shape).
//!
//! Every program unit with executable code (main program, subroutine,
//! function, module procedure, internal procedure) becomes one [`Function`].
//! Modules are not functions; their variables are `Saved` variables of the
//! procedures that reference them.
//!
//! Layout: `scope` collects declarations (types, attributes, PARAMETER
//! values, implicit rules, USE/host association) before lowering; `lower`
//! turns statements into blocks and `expr` turns expressions into accesses,
//! calls and builtins.
//!
//! Symbolic expressions (`ir::expr`): evaluating an expression also gives
//! its value in `Function::exprs` (`Lowerer::eval_expr`): integer constants
//! and PARAMETERs, reads of scalars and elements (the read instruction),
//! `+ - * /`, negation, comparisons, `.and.`/`.or.`, `MOD`, `MIN`, `MAX`,
//! `IAND`, `IOR`, `IEOR`; anything else, and every array value, is
//! `Expr::Unknown`. Accesses carry their path (a subscript per dimension in
//! source order, sections as ranges, `%comp` by name, a whole array as one
//! full range per dimension, `Sel::Unknown` for coarray selectors and
//! vector subscripts); whole scalar writes the value assigned; a counted DO
//! (and DO CONCURRENT, its first index) its `LoopControl`; array variables
//! their declared bounds (`VarType::dims`). None of it adds, removes or
//! moves an instruction.
//!
//! Everything reads a flat copy of the tree (`FNode`, see
//! `frontend::flat`), made once per tree by [`lower_tree`]; the statements
//! of outlines are not copied (see `CopyPlan`).
//!
//! Every position stored in the IR goes through [`Cx::span`], which maps the
//! parser's offsets (for fixed form: offsets in the normalised text) back to
//! the original text.
//!
//! Robustness: every walk over the tree whose depth follows the input's
//! nesting is either iterative or guarded by `lower::MAX_DEPTH`; past the
//! guard a subtree becomes one opaque call and the function is marked with a
//! syntax error.

pub(crate) mod cpp;
mod directives;
mod expr;
mod intrinsics;
mod lower;
mod scope;
mod segment;

#[cfg(test)]
mod tests;

use super::{relevance, FrontendOptions, LoweredFile, PosMap};
use crate::frontend::fields::{FortranFields, F};
use crate::frontend::flat::{Answer, FNode, FlatTree};
use crate::ir::Function;
use crate::source::Span;
use rustc_hash::FxHashMap as HashMap;
use scope::{Collector, Scope, ScopeKind, Scopes};

/// The text the parser saw and the map back to the original.
pub(crate) struct Cx<'a> {
    pub text: &'a str,
    pub map: &'a dyn PosMap,
}

impl<'a> Cx<'a> {
    /// A node's span in original-source coordinates.
    pub fn span(&self, n: FNode) -> Span {
        self.span_bytes(n.start_byte(), n.end_byte())
    }

    /// Where the code of an `ERROR` or `MISSING` node starts (a parser
    /// offset): the comment lines the parse leaves out can be the padding
    /// an `ERROR` node starts with, and a `MISSING` node sits before them
    /// ([`csa_grammars::past_comment_lines`]).
    pub fn error_start(&self, n: FNode) -> usize {
        let start = csa_grammars::past_comment_lines(self.text, n.start_byte());
        if n.is_missing() {
            start
        } else {
            start.min(n.end_byte())
        }
    }

    /// The span of an `ERROR` or `MISSING` node from [`Cx::error_start`].
    pub fn error_span(&self, n: FNode) -> Span {
        let start = self.error_start(n);
        self.span_bytes(start, n.end_byte().max(start))
    }

    /// Parser byte range to an original-source span.
    pub fn span_bytes(&self, start: usize, end: usize) -> Span {
        Span::new(self.map.to_original(start), self.map.to_original(end))
    }

    /// A node's text (empty when the range is not valid UTF-8 boundaries).
    pub fn text(&self, n: FNode) -> &'a str {
        self.text.get(n.byte_range()).unwrap_or("")
    }

    /// A node's text in lower case (Fortran names are case-insensitive).
    pub fn lname(&self, n: FNode) -> String {
        self.text(n).trim().to_ascii_lowercase()
    }

    /// [`Cx::lname`], borrowed from the text when it is lower case
    /// already (most names are).
    pub fn lname_ref(&self, n: FNode) -> std::borrow::Cow<'a, str> {
        let t = self.text(n).trim();
        if t.bytes().any(|b| b.is_ascii_uppercase()) {
            std::borrow::Cow::Owned(t.to_ascii_lowercase())
        } else {
            std::borrow::Cow::Borrowed(t)
        }
    }
}

/// A node's children, on the stack when there are few (most nodes).
pub(crate) type Kids<'t> = smallvec::SmallVec<[FNode<'t>; 6]>;

/// The named children of a node.
/// The longest free-form line parsed: Fortran 2023's limit (10,000
/// characters; earlier standards allow 132).
pub const MAX_FREE_LINE: usize = 10_000;

/// The byte spans of the lines of `text` longer than [`MAX_FREE_LINE`].
pub fn overlong_lines(text: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let mut start = 0;
    // each line without its `\n`; the last one unless the text ends
    // with `\n`
    let ends = memchr::memchr_iter(b'\n', text.as_bytes())
        .chain((!text.is_empty() && !text.ends_with('\n')).then_some(text.len()));
    for end in ends {
        // (no content is longer than its line)
        if end - start > MAX_FREE_LINE {
            let content = text
                .get(start..end)
                .unwrap_or("")
                .trim_end_matches(['\n', '\r']);
            if content.len() > MAX_FREE_LINE {
                // whole characters only
                out.push(Span::new(start, start + content.len()));
            }
        }
        start = end + 1;
    }
    out
}

/// `text` with the lines [`overlong_lines`] finds blanked (every byte a
/// space, positions kept), and those lines; `None` when there are none.
pub fn blank_overlong_lines(text: &str) -> Option<(String, Vec<Span>)> {
    let long = overlong_lines(text);
    if long.is_empty() {
        return None;
    }
    let mut bytes = text.as_bytes().to_vec();
    for s in &long {
        bytes[s.start as usize..s.end as usize].fill(b' ');
    }
    // whole lines of whole characters become spaces: still UTF-8
    let blanked = String::from_utf8(bytes).ok()?;
    Some((blanked, long))
}

/// What tree-sitter-fortran is given for the free-form `text`, as the
/// analysis parses it (`analysis::lower`, [`lower`]): an INCLUDE file with
/// [`FRAGMENT_END`] after it, overlong lines blanked, keyword-named
/// variables masked. Every position of `text` stays where it is.
pub fn free_form_parser_input(text: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let mut input = Cow::Borrowed(text);
    if is_include_fragment(text) {
        input = Cow::Owned(format!("{text}{FRAGMENT_END}"));
    }
    if let Some((blanked, _)) = blank_overlong_lines(&input) {
        input = Cow::Owned(blanked);
    }
    if let Some(masked) = repair_for_parser(&input) {
        input = Cow::Owned(masked);
    }
    input
}

/// What an INCLUDE file is parsed with after its text (see
/// [`is_include_fragment`]): valid in both source forms.
pub const FRAGMENT_END: &str = "\n      end\n";

/// Whether `text` is a Fortran INCLUDE file rather than a source file: it
/// has code, but no program unit (no `program`, `subroutine`, `function`,
/// `module`, `submodule` or `block data` word in its code) and no bare
/// `end` statement. Such a file is statements for the body of whatever
/// includes it (declarations, COMMON blocks, PARAMETERs).
pub fn is_include_fragment(text: &str) -> bool {
    let mut code = false;
    for line in text.lines() {
        let t = line.trim_start();
        let first = line.chars().next().unwrap_or(' ');
        let fixed_comment = matches!(first, 'c' | 'C' | '*' | 'd' | 'D')
            && line
                .chars()
                .nth(1)
                .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_' && c != '=');
        if t.is_empty() || t.starts_with('!') || t.starts_with('#') || fixed_comment {
            continue;
        }
        code = true;
        let lower = crate::omp::fortran_code(t).to_ascii_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        let unit = words.iter().any(|w| {
            matches!(
                *w,
                "program" | "subroutine" | "function" | "module" | "submodule" | "blockdata"
            )
        }) || words.windows(2).any(|p| p == ["block", "data"]);
        // `end`, `end program ...`: a unit ends here (not `end do`)
        let ends = words.first() == Some(&"end")
            && words.get(1).is_none_or(|w| {
                matches!(
                    *w,
                    "program" | "subroutine" | "function" | "module" | "submodule" | "block"
                )
            });
        if unit || ends {
            return false;
        }
    }
    code
}

pub(crate) fn named_kids(n: FNode) -> Kids {
    n.named_children().collect()
}

/// All children of a node (named and anonymous).
pub(crate) fn all_kids(n: FNode) -> Kids {
    n.children().collect()
}

/// Preprocessor conditionals whose content belongs to the enclosing context.
pub(crate) fn is_preproc_container(kind: &str) -> bool {
    matches!(
        kind,
        "preproc_if" | "preproc_ifdef" | "preproc_else" | "preproc_elif" | "preproc_elifdef"
    )
}

/// The content of a preprocessor conditional: its children without the
/// condition, the directive tokens and preprocessor comments (inactive
/// branches arrive blanked, so their content is empty).
pub(crate) fn preproc_body(n: FNode) -> Vec<FNode> {
    let mut out = Vec::new();
    for c in n.children() {
        if !c.is_named() {
            continue;
        }
        if c.is_fortran_field(F::Name) || c.is_fortran_field(F::Condition) {
            continue;
        }
        if matches!(
            c.node_kind(),
            "preproc_directive"
                | "preproc_arg"
                | "inline_preproc_comment"
                | "multiline_preproc_comment"
                | "comment"
        ) {
            continue;
        }
        out.push(c);
    }
    out
}

fn is_unit_node(kind: &str) -> bool {
    matches!(
        kind,
        "program" | "subroutine" | "function" | "module_procedure" | "module" | "submodule"
    )
}

fn is_unit_header(kind: &str) -> bool {
    matches!(
        kind,
        "program_statement" | "subroutine_statement" | "function_statement"
    )
}

fn is_unit_end(kind: &str) -> bool {
    matches!(
        kind,
        "end_program_statement"
            | "end_subroutine_statement"
            | "end_function_statement"
            | "end_module_procedure_statement"
            | "end_module_statement"
            | "end_submodule_statement"
    )
}

/// A program unit found in the tree.
struct Unit<'t> {
    kind: ScopeKind,
    /// The `*_statement` that opens the unit.
    header: Option<FNode<'t>>,
    /// The unit's children after the header (specification and executable
    /// parts, `contains`), without the end statement.
    items: Vec<FNode<'t>>,
    host: Option<usize>,
    /// Byte range in the parser's text.
    start: usize,
    end: usize,
    /// Where its end statement starts (`end` without one).
    code_end: usize,
    span: Span,
    name: String,
    name_span: Span,
    /// For a unit recovered from an ERROR node: where the parse broke.
    recovered_error: Option<Span>,
    /// For a unit recovered from an ERROR node: that node's byte range.
    wrapper: Option<(usize, usize)>,
    /// Whether it is lowered to a function.
    lowered: bool,
    /// `submodule (ancestor)`: the ancestor module name.
    ancestor: Option<String>,
    /// The copy of the tree lacks some of it (see [`CopyPlan`]).
    pruned: bool,
}

fn make_unit<'t>(cx: &Cx, n: FNode<'t>, host: Option<usize>) -> Unit<'t> {
    let kind = match n.node_kind() {
        "module" | "submodule" => ScopeKind::Module,
        "program" => ScopeKind::Program,
        "function" => ScopeKind::Function,
        _ => ScopeKind::Subroutine,
    };
    let kids = named_kids(n);
    let header = kids
        .first()
        .copied()
        .filter(|k| k.node_kind().ends_with("_statement") && !is_unit_end(k.node_kind()));
    let items: Vec<FNode> = kids
        .iter()
        .copied()
        .filter(|k| Some(*k) != header && !is_unit_end(k.node_kind()))
        .collect();
    let name_node = header
        .and_then(|h| h.field(F::Name))
        .or_else(|| header.and_then(|h| h.named_children().find(|c| c.node_kind() == "name")));
    let (name, name_span) = match name_node {
        Some(nn) => (cx.text(nn).trim().to_string(), cx.span(nn)),
        None => (
            "main".to_string(),
            cx.span_bytes(n.start_byte(), n.start_byte()),
        ),
    };
    let ancestor = if n.node_kind() == "submodule" {
        header
            .and_then(|h| h.field(F::Ancestor))
            .map(|a| cx.lname(a))
    } else {
        None
    };
    // error recovery can leave a header-less main program made of an END
    // and ERROR nodes only: not a program unit the user wrote
    let phantom = kind == ScopeKind::Program
        && header.is_none()
        && items
            .iter()
            .all(|k| k.is_error() || k.is_missing() || k.node_kind() == "comment");
    let pruned = n.is_pruned() || items.iter().any(|k| k.is_pruned());
    Unit {
        kind,
        header,
        items,
        host,
        start: n.start_byte(),
        end: n.end_byte(),
        code_end: kids
            .iter()
            .find(|k| is_unit_end(k.node_kind()))
            .map_or(n.end_byte(), |k| k.start_byte()),
        span: cx.span(n),
        name,
        name_span,
        recovered_error: None,
        wrapper: None,
        lowered: kind != ScopeKind::Module && !phantom,
        ancestor,
        pruned,
    }
}

/// Finds every program unit, hosts before their internal procedures, in
/// source order. Iterative: the tree may be arbitrarily deep.
fn discover<'t>(cx: &Cx, roots: &[FNode<'t>]) -> Vec<Unit<'t>> {
    let mut units: Vec<Unit<'t>> = Vec::new();
    let mut stack: Vec<(FNode<'t>, Option<usize>)> =
        roots.iter().rev().map(|r| (*r, None)).collect();
    let mut guard = 0usize;
    while let Some((n, host)) = stack.pop() {
        guard += 1;
        if guard > 1_000_000 {
            break;
        }
        let kind = n.node_kind();
        let mut push: Vec<(FNode<'t>, Option<usize>)> = Vec::new();
        if is_unit_node(kind) {
            let idx = units.len();
            units.push(make_unit(cx, n, host));
            for c in named_kids(n) {
                match c.node_kind() {
                    "internal_procedures" => {
                        for p in named_kids(c) {
                            push.push((p, Some(idx)));
                        }
                    }
                    "ERROR" => push.push((c, Some(idx))),
                    _ => {}
                }
            }
        } else if kind == "translation_unit" || kind == "internal_procedures" {
            for c in named_kids(n) {
                push.push((c, host));
            }
        } else if is_preproc_container(kind) {
            for c in preproc_body(n) {
                push.push((c, host));
            }
        } else if n.is_error() {
            let kids = named_kids(n);
            let mut i = 0;
            while i < kids.len() {
                let k = kids[i];
                if is_unit_header(k.node_kind()) {
                    let mut items = Vec::new();
                    let mut j = i + 1;
                    while j < kids.len() {
                        let kj = kids[j].node_kind();
                        if is_unit_header(kj) || is_unit_node(kj) || kj == "module_statement" {
                            break;
                        }
                        j += 1;
                        if is_unit_end(kj) {
                            break;
                        }
                        items.push(kids[j - 1]);
                    }
                    let last_end = items.last().map_or(k.end_byte(), |l| l.end_byte());
                    // where the parse broke: the first fragment that is not
                    // a whole statement (an open DO or IF header is not one)
                    let broke = items.iter().find(|c| {
                        let kind = c.node_kind();
                        !(kind.ends_with("_statement")
                            || kind.ends_with("_declaration")
                            || kind.ends_with("_modification")
                            || matches!(
                                kind,
                                "comment"
                                    | "statement_label"
                                    | "do_loop"
                                    | "interface"
                                    | "derived_type_definition"
                                    | "internal_procedures"
                            ))
                    });
                    let error_span = broke.map_or(cx.error_span(n), |b| cx.error_span(*b));
                    let pruned = items.iter().any(|k| k.is_pruned());
                    let name_node = k.field(F::Name);
                    let (name, name_span) = match name_node {
                        Some(nn) => (cx.text(nn).trim().to_string(), cx.span(nn)),
                        None => (
                            "main".to_string(),
                            cx.span_bytes(k.start_byte(), k.start_byte()),
                        ),
                    };
                    units.push(Unit {
                        kind: match k.node_kind() {
                            "program_statement" => ScopeKind::Program,
                            "function_statement" => ScopeKind::Function,
                            _ => ScopeKind::Subroutine,
                        },
                        header: Some(k),
                        items,
                        host,
                        start: k.start_byte(),
                        end: last_end,
                        code_end: last_end,
                        span: cx.span_bytes(k.start_byte(), last_end),
                        name,
                        name_span,
                        recovered_error: Some(error_span),
                        wrapper: Some((n.start_byte(), n.end_byte())),
                        lowered: true,
                        ancestor: None,
                        pruned,
                    });
                    i = j;
                    continue;
                }
                if is_unit_node(k.node_kind())
                    || k.is_error()
                    || is_preproc_container(k.node_kind())
                    || k.node_kind() == "internal_procedures"
                {
                    push.push((k, host));
                }
                i += 1;
            }
        }
        for p in push.into_iter().rev() {
            stack.push(p);
        }
    }
    // source order, hosts first (a host starts before its procedures)
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by_key(|&i| (units[i].start, std::cmp::Reverse(units[i].end)));
    let mut new_index = vec![0usize; units.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    let mut slots: Vec<Option<Unit<'t>>> = units.into_iter().map(Some).collect();
    let mut sorted = Vec::with_capacity(slots.len());
    for &old in &order {
        if let Some(mut u) = slots[old].take() {
            u.host = u.host.map(|h| new_index[h]);
            sorted.push(u);
        }
    }
    sorted
}

/// Collects the scopes of all units: modules first (so that procedures can
/// see them), then the other units in order (hosts before internal
/// procedures). Returns the scope index of each unit.
fn build_scopes(cx: &Cx, units: &[Unit], outline: &[bool]) -> (Scopes, Vec<usize>) {
    let mut scopes = Scopes::default();
    let mut scope_of: Vec<Option<usize>> = vec![None; units.len()];
    let order: Vec<usize> = (0..units.len())
        .filter(|&i| units[i].kind == ScopeKind::Module)
        .chain((0..units.len()).filter(|&i| units[i].kind != ScopeKind::Module))
        .collect();
    for i in order {
        let u = &units[i];
        let parent = match (u.host, &u.ancestor) {
            (Some(h), _) => scope_of[h],
            (None, Some(a)) => scopes.modules.get(a).copied(),
            (None, None) => None,
        };
        let idx = scopes.scopes.len();
        if outline.get(i).copied().unwrap_or(false) {
            scopes.scopes.push(Scope::new(u.kind, parent));
            scope_of[i] = Some(idx);
            continue;
        }
        // a placeholder with the USE statements so that outer lookups made
        // while collecting can see used modules
        let mut placeholder = Scope::new(u.kind, parent);
        {
            let none = |_: &str| None;
            let no = |_: &str| false;
            let col = Collector {
                cx,
                outer: &none,
                outer_is_array: &no,
            };
            let uses: Vec<FNode> = u
                .items
                .iter()
                .copied()
                .filter(|k| k.node_kind() == "use_statement")
                .collect();
            col.collect(&mut placeholder, &uses);
        }
        scopes.scopes.push(placeholder);
        let mut sc = Scope::new(u.kind, parent);
        {
            let outer = |n: &str| scopes.outer_const(idx, n);
            let outer_is_array = |n: &str| scopes.outer_is_array(idx, n);
            let col = Collector {
                cx,
                outer: &outer,
                outer_is_array: &outer_is_array,
            };
            if let Some(h) = u.header {
                col.header(&mut sc, h);
            }
            col.collect(&mut sc, &u.items);
            prepass(cx, &u.items, &mut sc);
            col.finish(&mut sc);
        }
        scopes.scopes[idx] = sc;
        if u.kind == ScopeKind::Module {
            scopes.modules.insert(u.name.to_ascii_lowercase(), idx);
        }
        scope_of[i] = Some(idx);
    }
    scopes.array_used = scopes
        .scopes
        .iter()
        .flat_map(|s| s.array_used.iter().cloned())
        .collect();
    let scope_of = scope_of.into_iter().map(|s| s.unwrap_or(0)).collect();
    (scopes, scope_of)
}

/// Records names referenced as `name(...)` and `call name` in the unit's
/// own statements (not in contained procedures, interfaces or type
/// definitions). One pass over each item's run of the flat copy; like a
/// walk through named children, it does not enter anonymous nodes.
fn prepass(cx: &Cx, items: &[FNode], scope: &mut Scope) {
    for item in items {
        let mut walk = item.descendants();
        while let Some(n) = walk.next() {
            if n != *item && !n.is_named() {
                walk.skip_below(n);
                continue;
            }
            match n.node_kind() {
                "internal_procedures" | "interface" | "derived_type_definition" => {
                    walk.skip_below(n)
                }
                k if is_unit_node(k) => walk.skip_below(n),
                "call_expression" => {
                    if let Some(f) = n.named_child(0) {
                        if f.node_kind() == "identifier" {
                            let name = cx.lname_ref(f);
                            if !scope.array_used.contains(&*name) && only_an_array(n) {
                                scope.array_used.insert(name.to_string());
                            }
                            if !scope.paren_used.contains(&*name) {
                                scope.paren_used.insert(name.into_owned());
                            }
                        }
                    }
                }
                "subroutine_call" => {
                    if let Some(s) = n.field(F::Subroutine) {
                        if s.node_kind() == "identifier" {
                            let name = cx.lname_ref(s);
                            if !scope.called.contains(&*name) {
                                scope.called.insert(name.into_owned());
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Whether `NAME(...)` (a `call_expression`) can only be an array's
/// element or section: the target of an assignment (a statement function
/// is declared before, and found first), or with a section subscript
/// (`NAME(:, j)`, `NAME(1:n)`), which no function reference has.
fn only_an_array(n: FNode) -> bool {
    n.parent().is_some_and(|p| {
        p.node_kind() == "assignment_statement" && p.field(F::Left) == Some(n)
    }) || n.named_children().any(|al| {
        al.node_kind() == "argument_list"
            && al.named_children().any(|a| a.node_kind() == "extent_specifier")
    })
}

/// Every ERROR and MISSING node, in document order.
fn collect_errors<'t>(tree: &'t FlatTree) -> impl Iterator<Item = FNode<'t>> + 't {
    tree.errors().take(100_001)
}

/// Lowers every program unit of a Fortran file. `text` is the parser's input
/// (for fixed form: the normalised text); `map` maps its offsets back to the
/// original text.
pub fn lower(text: &str, map: &dyn PosMap, opts: &FrontendOptions) -> LoweredFile {
    // Keywords tree-sitter-fortran cannot take as variables are parsed as
    // another name of the same length, and read back from `text`.
    let masked = repair_for_parser(text);
    let parsed = masked.as_deref().unwrap_or(text);
    // parsed without the blanks that indent lines and the comment lines
    // (`Compacted`): a tenth of the parse's instructions on NPB
    let compacted = csa_grammars::Compacted::fortran(parsed);
    let tree = match &compacted {
        Some(c) => csa_grammars::parse_compacted(csa_grammars::Grammar::Fortran, c),
        None => csa_grammars::parse(csa_grammars::Grammar::Fortran, parsed),
    };
    let Some(tree) = tree else {
        return LoweredFile::gave_up(text);
    };
    lower_tree_of(text, parsed, tree, compacted.as_ref(), map, None, opts)
}

/// `text` as tree-sitter-fortran is given it: the same length, every
/// position where it was, with what the grammar cannot parse but Fortran
/// allows rewritten in place (keyword-named variables,
/// [`mask_keyword_line`]; `name*(len)` in a CHARACTER declaration,
/// [`mask_char_length_line`]; a legacy comma before a `READ` or `WRITE`
/// item list, [`mask_io_comma_line`]); `None` when nothing is. The
/// front end reads names from `text`.
///
/// The three are made in one pass over the lines, each reading the text
/// as it was: they touch different statements (an assignment's first
/// word, a CHARACTER declaration's lengths, a `READ`/`WRITE` statement's
/// comma), so the order they are made in changes nothing (a property test
/// checks this against the three made one after another).
pub fn repair_for_parser(text: &str) -> Option<String> {
    let mut continued = false;
    masked_lines(text, |m, line, at| {
        mask_keyword_line(m, line, at);
        mask_char_length_line(m, line, at, &mut continued);
        mask_io_comma_line(m, line, at);
    })
}

/// The copy of a text's bytes that maskings write into, made at the
/// first change.
struct Masked<'a> {
    bytes: &'a [u8],
    out: Option<Vec<u8>>,
}

impl Masked<'_> {
    /// The bytes to write into (a copy of the text's).
    fn out(&mut self) -> &mut [u8] {
        self.out.get_or_insert_with(|| self.bytes.to_vec())
    }
}

/// `text` with `mask` applied to each of its lines (the line without its
/// `\n`, and its offset); `None` when nothing was changed. A masking
/// changes ASCII bytes into ASCII bytes only.
fn masked_lines(text: &str, mut mask: impl FnMut(&mut Masked<'_>, &[u8], usize)) -> Option<String> {
    let bytes = text.as_bytes();
    let mut m = Masked { bytes, out: None };
    let mut line_start = 0;
    while line_start < bytes.len() {
        let line_end =
            memchr::memchr(b'\n', &bytes[line_start..]).map_or(bytes.len(), |k| line_start + k);
        mask(&mut m, &bytes[line_start..line_end], line_start);
        line_start = line_end + 1;
    }
    m.out.and_then(|o| String::from_utf8(o).ok())
}

/// The text-wide form of [`mask_io_comma_line`] (for tests).
#[cfg(test)]
pub fn mask_io_list_commas(text: &str) -> Option<String> {
    masked_lines(text, mask_io_comma_line)
}

/// Makes a blank of the comma that legacy code writes between a `READ` or
/// `WRITE` statement's control list and its item list (`READ(u, REC=1),
/// x`, `WRITE(6,*), a`: an extension gfortran and ifort accept, which
/// tree-sitter-fortran does not parse) in `line` (at offset `at` in the
/// text). Only a statement that starts its line (after a label) is looked
/// at, and only a comma right after the control list's closing
/// parenthesis (on the same line): no valid statement has one there (an
/// element of an array named `read` is assigned with `=`).
///
/// Applied to every line by [`repair_for_parser`].
fn mask_io_comma_line(m: &mut Masked<'_>, line: &[u8], at: usize) {
    let (k, word_end) = first_word(line);
    let word = &line[k..word_end];
    let open = skip_blanks(line, word_end);
    if (word.eq_ignore_ascii_case(b"read") || word.eq_ignore_ascii_case(b"write"))
        && line.get(open) == Some(&b'(')
    {
        if let Some(close) = closing_paren(line, open) {
            let comma = skip_blanks(line, close + 1);
            if line.get(comma) == Some(&b',') {
                m.out()[at + comma] = b' ';
            }
        }
    }
}

/// The `)` that closes the `(` at `open` in `line`; `None` when the line
/// ends first. Unlike [`after_balanced`], quoted strings are skipped (a
/// control list's format holds parentheses: `'(a, ")")'`).
fn closing_paren(line: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    for (i, &c) in line.iter().enumerate().skip(open) {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'(' => depth += 1,
                b')' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                b'!' => return None,
                _ => {}
            },
        }
    }
    None
}

/// The text-wide form of [`mask_char_length_line`] (for tests).
#[cfg(test)]
pub fn mask_char_lengths(text: &str) -> Option<String> {
    // inside a CHARACTER declaration continued from the line before
    let mut continued = false;
    masked_lines(text, |m, line, at| {
        mask_char_length_line(m, line, at, &mut continued)
    })
}

/// Writes the length of each entity of a CHARACTER declaration in `line`
/// (at offset `at` in the text) written `name*(len)` (`character s*(n),
/// t(5)*(n+1)`: Fortran 77's length of one entity, which
/// tree-sitter-fortran does not parse; it takes `name*10` and `name*(*)`)
/// as `name*(*)` and blanks, so that every position stays. The length of a
/// character entity is nothing the front end reads. The declaration's own
/// type length (`character*(n) s`) and its initialisers are left alone;
/// a declaration continued with `&` is followed onto its next lines
/// (`continued`: the line before ended one with `&`; set for the next).
///
/// Applied to every line by [`repair_for_parser`].
fn mask_char_length_line(m: &mut Masked<'_>, line: &[u8], at: usize, continued: &mut bool) {
    let start = if *continued {
        let k = skip_blanks(line, 0);
        if line.get(k) == Some(&b'&') {
            k + 1
        } else {
            k
        }
    } else {
        // a statement starting with the word `character` (after a label)
        let (k, word_end) = first_word(line);
        if !line[k..word_end].eq_ignore_ascii_case(b"character") {
            return;
        }
        word_end
    };
    *continued = false;
    let mut depth = 0usize;
    let mut in_init = false;
    let mut k = start;
    while k < line.len() {
        let b = line[k];
        match b {
            b'!' => break,
            b'\'' | b'"' => {
                k = match line[k + 1..].iter().position(|&c| c == b) {
                    Some(q) => k + 2 + q,
                    None => line.len(),
                };
                continue;
            }
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b';' if depth == 0 => break,
            b',' if depth == 0 => in_init = false,
            b'=' if depth == 0 && !matches!(line.get(k + 1), Some(b'=' | b'>')) => in_init = true,
            b'&' if depth == 0 => {
                // continued when only blanks or a comment follow
                let rest = skip_blanks(line, k + 1);
                if rest == line.len() || line[rest] == b'!' {
                    *continued = true;
                    break;
                }
            }
            _ if depth == 0 && !in_init && (b.is_ascii_alphabetic() || b == b'_') => {
                let name_end = k + line[k..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                let (next, length) = entity_length(line, name_end);
                if let Some((open, close)) = length {
                    let o = m.out();
                    o[at + open..at + close].fill(b' ');
                    o[at + open..at + open + 3].copy_from_slice(b"(*)");
                }
                k = next;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
}

/// After an entity's name (ending at `name_end`) in a CHARACTER
/// declaration's `line`: where the scan goes on, and the span of its
/// length `(len)` when it is written `*(len)`, after an optional array
/// spec, closed on the line and not `(*)`.
fn entity_length(line: &[u8], name_end: usize) -> (usize, Option<(usize, usize)>) {
    let mut p = skip_blanks(line, name_end);
    if line.get(p) == Some(&b'(') {
        p = skip_blanks(line, after_balanced(line, p, &b'(', &b')'));
    }
    if line.get(p) != Some(&b'*') {
        return (name_end, None);
    }
    let open = skip_blanks(line, p + 1);
    if line.get(open) != Some(&b'(') {
        return (p + 1, None);
    }
    let close = after_balanced(line, open, &b'(', &b')');
    let closed = close - open >= 3 && line.get(close - 1) == Some(&b')');
    let length = (closed && line[open + 1..close - 1].trim_ascii() != b"*").then_some((open, close));
    (close, length)
}

/// Where the first word of a statement line starts and ends, after its
/// blanks and its label (empty when the line starts otherwise).
fn first_word(line: &[u8]) -> (usize, usize) {
    let mut k = skip_blanks(line, 0);
    let digits = line[k..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits > 0 {
        k = skip_blanks(line, k + digits);
    }
    let end = k + line[k..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    (k, end)
}

/// The index of the first byte at or after `k` that is not a blank or a
/// tab (`line.len()` when none is).
fn skip_blanks(line: &[u8], mut k: usize) -> usize {
    while k < line.len() && matches!(line[k], b' ' | b'\t') {
        k += 1;
    }
    k
}

/// Statement keywords that tree-sitter-fortran cannot take as the name
/// being assigned (`class = 'U'`, as NPB writes): Fortran has no reserved
/// words, so each is a valid variable name there.
const KEYWORD_VARIABLES: &[&str] = &[
    "class",
    "procedure",
    "use",
    "integer",
    "common",
    "implicit",
    "goto",
];

/// The text-wide form of [`mask_keyword_line`] (for tests).
#[cfg(test)]
pub fn mask_keyword_variables(text: &str) -> Option<String> {
    masked_lines(text, mask_keyword_line)
}

/// Gives every statement of `line` (at offset `at` in the text) that
/// assigns to a variable named like a statement keyword
/// ([`KEYWORD_VARIABLES`]: `class = 1`, `class(2) = 1`) another name of the
/// same length for the parser (`q` letters), so that every position
/// stays. The front end
/// reads names from the unmasked text.
///
/// Applied to every line by [`repair_for_parser`].
fn mask_keyword_line(m: &mut Masked<'_>, line: &[u8], at: usize) {
    // statement starts: the line's first word and each word after `;`
    let mut k = 0;
    let mut at_start = true;
    while k < line.len() {
        if !at_start {
            // inside a statement only a `;` starts another; a comment
            // or a string ends the scan
            if memchr::memchr(b';', &line[k..]).is_none() {
                break;
            }
            match line[k..]
                .iter()
                .position(|&b| matches!(b, b'!' | b'\'' | b'"' | b';'))
            {
                Some(p) if line[k + p] == b';' => {
                    at_start = true;
                    k += p + 1;
                    continue;
                }
                _ => break,
            }
        }
        let b = line[k];
        if b == b'!' || b == b'\'' || b == b'"' {
            break; // a comment or a string: nothing more on this line
        }
        if b == b';' {
            at_start = true;
            k += 1;
            continue;
        }
        if b.is_ascii_alphabetic() && at_start {
            let w_end = line[k..]
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                .map_or(line.len(), |e| k + e);
            let word = &line[k..w_end];
            if KEYWORD_VARIABLES
                .iter()
                .any(|kw| kw.as_bytes().eq_ignore_ascii_case(word))
                && assigns(&line[w_end..])
            {
                m.out()[at + k..at + w_end].fill(b'q');
            }
            at_start = false;
            k = w_end;
            continue;
        }
        if !b.is_ascii_whitespace() && !b.is_ascii_digit() {
            at_start = false;
        }
        k += 1;
    }
}

/// The index after the parenthesis that closes the one at `items[i]`
/// (the end when none does).
pub(crate) fn after_balanced<T: PartialEq>(
    items: &[T],
    mut i: usize,
    open: &T,
    close: &T,
) -> usize {
    let mut depth = 0usize;
    while i < items.len() {
        if items[i] == *open {
            depth += 1;
        } else if items[i] == *close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return i + 1;
            }
        }
        i += 1;
    }
    i
}

/// Whether `rest` (what follows a statement's first word) makes it an
/// assignment to that word: optional subscripts in balanced parentheses,
/// then `=` that is not `==` or `=>`.
fn assigns(rest: &[u8]) -> bool {
    let mut i = 0;
    while i < rest.len() && rest[i].is_ascii_whitespace() {
        i += 1;
    }
    if rest.get(i) == Some(&b'(') {
        i = after_balanced(rest, i, &b'(', &b')');
        while i < rest.len() && rest[i].is_ascii_whitespace() {
            i += 1;
        }
    }
    rest.get(i) == Some(&b'=') && !matches!(rest.get(i + 1), Some(b'=') | Some(b'>'))
}

/// Lowers the program units of an already parsed `tree` of `text`: all of
/// them, or (for incremental analysis) only those whose span overlaps
/// `only`. The declarations those read (their own, their hosts', every
/// module's) are collected whatever `only` is.
///
/// The tree is copied once into a `FlatTree` that the rest of the front
/// end reads. A tree without syntax errors is copied pruned (see
/// `CopyPlan`): the statements of outlines and, with `only`, the
/// top-level units outside it that are not modules are not copied, as
/// nothing reads them.
pub fn lower_tree(
    text: &str,
    tree: tree_sitter::Tree,
    map: &dyn PosMap,
    only: Option<Span>,
    opts: &FrontendOptions,
) -> LoweredFile {
    lower_tree_of(text, text, tree, None, map, only, opts)
}

/// [`lower_tree`] of a `tree` parsed from `parsed`, a text of the same
/// length as `text` ([`repair_for_parser`]), or from its `compacted`
/// form (the tree's offsets are then the compacted text's, and the flat
/// copies' are mapped back); names are read from `text`.
fn lower_tree_of(
    text: &str,
    parsed: &str,
    tree: tree_sitter::Tree,
    compacted: Option<&csa_grammars::Compacted>,
    map: &dyn PosMap,
    only: Option<Span>,
    opts: &FrontendOptions,
) -> LoweredFile {
    let trees = recover_units(compacted.map_or(parsed, |c| c.text.as_str()), tree);
    // (one scan, for the pruned copy and for the whole one it may fall
    // back to)
    let calls = relevance::FortranCalls::scan(text);
    let pruned = match trees.as_slice() {
        [tree] => lower_pruned(text, tree, compacted, map, only, opts, &calls),
        _ => None,
    };
    let out = pruned.unwrap_or_else(|| {
        let flats: Vec<FlatTree> = trees
            .iter()
            .map(|t| FlatTree::new(t.root_node()).remap(compacted))
            .collect();
        lower_flat(text, &flats, map, only, opts, None, &calls).unwrap_or_default()
    });
    trees.into_iter().for_each(treecopy::release);
    out
}

/// [`lower_tree`] over a pruned copy of `tree`; None when `tree` has a
/// syntax error or the copy lacks something to lower.
fn lower_pruned(
    text: &str,
    tree: &tree_sitter::Tree,
    compacted: Option<&csa_grammars::Compacted>,
    map: &dyn PosMap,
    only: Option<Span>,
    opts: &FrontendOptions,
    calls: &relevance::FortranCalls,
) -> Option<LoweredFile> {
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let mut plan = CopyPlan::new(text, compacted, only, !opts.every_body, calls);
    let flat = FlatTree::planned(root, |n, depth| plan.descend(n, depth)).remap(compacted);
    lower_flat(text, &[flat], map, only, opts, Some(&plan), calls)
}

/// Statements that cannot jump, whose children a [`Host::Control`] unit's
/// copy leaves out: lowering them adds instructions to the current block
/// and never a block or an edge (the Fortran lowering models no jump in
/// an I/O statement's `ERR=` or a call's alternate return, and no call
/// ends a block), so the control flow of the unit is the whole lowering's;
/// and the specification statements, which the lowering of statements
/// skips (but not `internal_procedures`, which holds units).
fn opaque_in_skeleton(kind: &str) -> bool {
    (lower::is_spec_kind(kind) && kind != "internal_procedures")
        || matches!(
            kind,
            "assignment_statement"
                | "pointer_association_statement"
                | "subroutine_call"
                | "print_statement"
                | "write_statement"
                | "read_statement"
                | "open_statement"
                | "close_statement"
                | "inquire_statement"
                | "file_position_statement"
                | "allocate_statement"
                | "deallocate_statement"
                | "nullify_statement"
        )
}

/// What a node is to [`CopyPlan`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// Inside a statement or a declaration: nothing to decide.
    Inside,
    /// The translation unit, `internal_procedures` or a preprocessor
    /// conditional among them: its unit children are program units that
    /// `discover` finds, with this host.
    Units(Host),
    /// A program unit (as a host) whose first named child was (`true`) or
    /// was not yet copied.
    Unit(Host, bool),
    /// Inside a [`Host::Control`] unit, outside any statement
    /// [`opaque_in_skeleton`].
    Control,
}

/// A program unit as the host of the units in it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Host {
    /// Top level: no host.
    None,
    Module,
    /// An outline: its statements are not copied.
    Outline,
    /// Lowered as a skeleton ([`crate::ir::Function::skeleton`]): the
    /// children of its statements [`opaque_in_skeleton`] are not copied.
    /// Its internal procedures are skeletons too (their text has no more
    /// than the host's).
    Control,
    Lowered,
}

/// Decides, during the copy of a tree without syntax errors, which nodes'
/// children are not copied: those of an outline (all but its header and its
/// internal procedures; the same outlines as `lower_flat` decides, which
/// checks that it lowers nothing pruned) and, with `only`, every top-level
/// unit but modules outside it; in a unit whose jumps are all any rule
/// reads (`relevance::FortranNeed::Control`), the children of its
/// statements that cannot jump. Also remembers
/// `relevance::fortran_needs_lowering` of the units it saw.
struct CopyPlan<'a> {
    text: &'a str,
    only: Option<Span>,
    outlines: bool,
    /// What the node at each depth of the current path is.
    path: Vec<Walk>,
    /// `fortran_needs_lowering` of units by byte range.
    needs_lowering: HashMap<(usize, usize), bool>,
    /// The [`Host::Control`] units by byte range: lowered as skeletons.
    control: rustc_hash::FxHashSet<(usize, usize)>,
    /// Where names are called (a called unit is lowered for its callers'
    /// summaries).
    calls: &'a relevance::FortranCalls,
    /// The text parsed, when compacted: the nodes' offsets are its.
    compacted: Option<&'a csa_grammars::Compacted>,
}

impl<'a> CopyPlan<'a> {
    fn new(
        text: &'a str,
        compacted: Option<&'a csa_grammars::Compacted>,
        only: Option<Span>,
        outlines: bool,
        calls: &'a relevance::FortranCalls,
    ) -> CopyPlan<'a> {
        CopyPlan {
            text,
            only,
            outlines,
            path: Vec::new(),
            needs_lowering: HashMap::default(),
            control: Default::default(),
            calls,
            compacted,
        }
    }

    /// Whether the unit at `start..end` is called from outside itself.
    fn called(&self, start: usize, end: usize) -> bool {
        self.text
            .get(start..end)
            .and_then(relevance::FortranCalls::unit_name)
            .is_some_and(|n| self.calls.called_outside(&n, start, end))
    }

    /// Whether the children of `n` (at `depth` below the root) are copied:
    /// everything inside a unit that is copied is, unasked.
    fn descend(&mut self, n: tree_sitter::Node<'_>, depth: usize) -> Answer {
        self.path.truncate(depth);
        let parent = match depth.checked_sub(1).and_then(|d| self.path.get_mut(d)) {
            Some(p) => p,
            None => {
                self.path.push(Walk::Units(Host::None));
                return Answer::Descend;
            }
        };
        let (walk, descend) = match *parent {
            Walk::Inside => (Walk::Inside, true),
            Walk::Units(host) => {
                let kind = FortranFields::node_kind(&n);
                if kind == "module" || kind == "submodule" {
                    (Walk::Unit(Host::Module, false), true)
                } else if is_unit_node(kind) {
                    let (start, end) = match self.compacted {
                        Some(c) => c.range(n.start_byte(), n.end_byte()),
                        None => (n.start_byte(), n.end_byte()),
                    };
                    let outside = self
                        .only
                        .is_some_and(|o| !(start < o.end as usize && o.start as usize <= end));
                    if outside && host == Host::None && !self.called(start, end) {
                        (Walk::Inside, false)
                    } else {
                        let host_ok = matches!(host, Host::None | Host::Module | Host::Outline);
                        // (internal procedures are lowered with their host)
                        let callable = matches!(host, Host::None | Host::Module);
                        // a called unit is lowered whole whatever its text
                        // holds (`lower_flat` asks `needs_lowering` only
                        // of units it finds not called)
                        let called = callable && self.called(start, end);
                        let need = if self.outlines && host_ok && !called {
                            self.need(start, end)
                        } else {
                            relevance::FortranNeed::Full
                        };
                        let shortcut = need != relevance::FortranNeed::Full && !called;
                        let as_host = if host == Host::Control {
                            Host::Control
                        } else if shortcut && need == relevance::FortranNeed::Outline {
                            Host::Outline
                        } else if shortcut {
                            Host::Control
                        } else {
                            Host::Lowered
                        };
                        if as_host == Host::Control {
                            self.control.insert((start, end));
                        }
                        (Walk::Unit(as_host, false), true)
                    }
                } else if is_preproc_container(kind) {
                    (Walk::Units(host), true)
                } else {
                    (Walk::Inside, true)
                }
            }
            Walk::Unit(host, ref mut first_named_seen) => {
                let kind = FortranFields::node_kind(&n);
                if kind == "internal_procedures" {
                    (Walk::Units(host), true)
                } else if host == Host::Control {
                    (Walk::Control, !opaque_in_skeleton(kind))
                } else if host != Host::Outline {
                    (Walk::Inside, true)
                } else if n.is_named() && !*first_named_seen {
                    // the header, if any
                    *first_named_seen = true;
                    (Walk::Inside, true)
                } else {
                    (Walk::Inside, false)
                }
            }
            Walk::Control => {
                let kind = FortranFields::node_kind(&n);
                if kind == "internal_procedures" {
                    (Walk::Units(Host::Control), true)
                } else {
                    (Walk::Control, !opaque_in_skeleton(kind))
                }
            }
        };
        let answer = match (walk, descend) {
            (_, false) => Answer::Prune,
            // (below an `Inside` node everything is `Inside` and copied)
            (Walk::Inside, true) => Answer::DescendUnasked,
            (_, true) => Answer::Descend,
        };
        self.path.push(walk);
        answer
    }

    /// How much of the unit at `start..end` must be lowered (remembered in
    /// `needs_lowering` for `lower_flat`).
    fn need(&mut self, start: usize, end: usize) -> relevance::FortranNeed {
        let need = relevance::fortran_lowering_need(self.text.get(start..end).unwrap_or(""), false);
        self.needs_lowering
            .insert((start, end), need != relevance::FortranNeed::Outline);
        need
    }
}

/// [`lower_tree`] over the flat copies of its trees (one per top-level unit
/// after error recovery). `plan`: the [`CopyPlan`] the copy was made with,
/// if any (the units' `relevance::fortran_needs_lowering` by byte range,
/// the skeleton units). None when a unit to lower whole or the host of one
/// was pruned from the copy.
fn lower_flat(
    text: &str,
    flats: &[FlatTree],
    map: &dyn PosMap,
    only: Option<Span>,
    opts: &FrontendOptions,
    plan: Option<&CopyPlan>,
    calls: &relevance::FortranCalls,
) -> Option<LoweredFile> {
    let known_need = |u: &Unit| plan.and_then(|p| p.needs_lowering.get(&(u.start, u.end)).copied());
    let skeleton = |u: &Unit| plan.is_some_and(|p| p.control.contains(&(u.start, u.end)));
    let mut out = LoweredFile::default();
    let roots: Vec<FNode> = flats.iter().map(|t| t.root()).collect();
    let cx = Cx { text, map };
    // units of each tree (one tree per top-level unit after recovery)
    let mut units = Vec::new();
    let mut unit_root = Vec::new();
    for (ri, r) in roots.iter().enumerate() {
        let mut found = discover(&cx, &[*r]);
        let base = units.len();
        for u in &mut found {
            u.host = u.host.map(|h| h + base);
        }
        unit_root.extend(std::iter::repeat_n(ri, found.len()));
        units.extend(found);
    }
    // Which units are outlines (see `frontend::relevance`): not after
    // error recovery, not units with an error, and internal procedures only
    // when their host is one too (a lowered host records which of its
    // variables its internal procedures use). Nothing reads an outline's
    // scope: what is inside a lowered unit's text is lowered, and modules
    // are never outlines.
    let outline: Vec<bool> = if opts.every_body || roots.len() > 1 {
        vec![false; units.len()]
    } else {
        let errors: Vec<usize> = flats
            .iter()
            .flat_map(collect_errors)
            .map(|e| e.start_byte())
            .collect();
        let mut outline = vec![false; units.len()];
        for (i, u) in units.iter().enumerate() {
            let host_ok = match u.host {
                None => true,
                Some(h) => units[h].kind == ScopeKind::Module || (h < i && outline[h]),
            };
            let has_error = errors.iter().any(|&p| u.start <= p && p <= u.end);
            // internal procedures are lowered with their host
            let callable = u.host.is_none_or(|h| units[h].kind == ScopeKind::Module);
            outline[i] = u.lowered
                && u.kind != ScopeKind::Module
                && !(callable && calls.called_outside(&u.name, u.start, u.end))
                && u.recovered_error.is_none()
                && host_ok
                && !match known_need(u) {
                    Some(needs) if !has_error => needs,
                    _ => relevance::fortran_needs_lowering(
                        text.get(u.start..u.end).unwrap_or(""),
                        has_error,
                    ),
                };
        }
        outline
    };
    if let Some(o) = only {
        // (a unit outside that others call is lowered for their summaries)
        let callable: Vec<bool> = units
            .iter()
            .map(|u| u.host.is_none_or(|h| units[h].kind == ScopeKind::Module))
            .collect();
        for (i, u) in units.iter_mut().enumerate() {
            let inside = u.start < o.end as usize && o.start as usize <= u.end;
            let called = callable[i] && calls.called_outside(&u.name, u.start, u.end);
            if !(inside || called) {
                u.lowered = false;
            }
        }
    }
    // What is lowered and the scopes it reads (its own, its hosts', the
    // modules') must be whole in the copy.
    for (i, u) in units.iter().enumerate() {
        if u.kind == ScopeKind::Module && u.pruned {
            return None;
        }
        if u.lowered && !outline[i] && !skeleton(u) {
            let mut at = Some(i);
            while let Some(k) = at {
                if units[k].pruned {
                    return None;
                }
                // hosts come first
                at = units[k].host.filter(|&h| h < k);
            }
        }
    }
    let (scopes, scope_of) = build_scopes(&cx, &units, &outline);

    let mut func_of: Vec<Option<usize>> = vec![None; units.len()];
    for (i, u) in units.iter().enumerate() {
        if !u.lowered {
            continue;
        }
        if outline[i] {
            func_of[i] = Some(out.functions.len());
            out.functions.push(Function::outline(
                u.name.clone(),
                crate::ir::Lang::Fortran,
                u.span,
                u.name_span,
            ));
            continue;
        }
        let (mut f, host_refs) = lower::lower_unit(
            &cx,
            &scopes,
            scope_of[i],
            lower::UnitInput {
                name: u.name.clone(),
                span: u.span,
                name_span: u.name_span,
                header: u.header,
                items: &u.items,
                code_end: u.code_end,
            },
        );
        if let Some(e) = u.recovered_error {
            set_error(&mut f, e);
        }
        f.skeleton = skeleton(u);
        if let Some(hf) = u.host.and_then(|h| func_of[h]) {
            let host: &mut Function = &mut out.functions[hf];
            for v in host.vars.iter_mut() {
                if host_refs.contains(&v.name.to_ascii_lowercase())
                    && matches!(
                        v.kind,
                        crate::ir::VarKind::Local | crate::ir::VarKind::Dummy
                    )
                {
                    v.address_taken = true;
                    v.only_passed = false;
                }
            }
        }
        func_of[i] = Some(out.functions.len());
        out.functions.push(f);
    }

    // the same-file callees of the lowered units
    // (external and module procedures by name, a name defined twice left
    // unknown; internal procedures only for their host)
    let mut defined: rustc_hash::FxHashMap<String, Option<usize>> = Default::default();
    let mut internal: HashMap<usize, rustc_hash::FxHashMap<String, Option<usize>>> =
        HashMap::default();
    for (i, u) in units.iter().enumerate() {
        let usable = func_of[i].filter(|&fi| {
            !out.functions[fi].outline
                && !out.functions[fi].skeleton
                && calls.called_outside(&u.name, u.start, u.end)
        });
        let name = u.name.to_ascii_lowercase();
        let table = match u.host {
            Some(h) if units[h].kind != ScopeKind::Module => match func_of[h] {
                Some(hf) => internal.entry(hf).or_default(),
                None => continue,
            },
            _ => &mut defined,
        };
        table
            .entry(name)
            .and_modify(|e| *e = None)
            .or_insert(usable);
    }
    let wanted: Vec<usize> = defined
        .values()
        .chain(internal.values().flat_map(|t| t.values()))
        .flatten()
        .copied()
        .collect();
    if !wanted.is_empty() {
        let mut copies: HashMap<usize, Function> = wanted
            .into_iter()
            .map(|fi| (fi, out.functions[fi].clone()))
            .collect();
        // (`attach` asks for each callee once)
        super::callees::attach(
            &mut out.functions,
            &defined,
            &|k| internal.get(&k).cloned(),
            &mut |fi| copies.remove(&fi),
        );
    }

    // syntax errors: the innermost unit containing the error's start
    let mut toplevel: Vec<Span> = Vec::new();
    let errors = flats
        .iter()
        .enumerate()
        .flat_map(|(ri, t)| collect_errors(t).map(move |e| (ri, e)));
    for (ri, e) in errors {
        let range = (e.start_byte(), e.end_byte());
        let span = cx.error_span(e);
        // (a unit after comment lines holds an ERROR node starting in
        // them; a MISSING node at a unit's end is that unit's)
        let pos = if e.is_missing() {
            e.start_byte()
        } else {
            cx.error_start(e)
        };
        if units.iter().any(|u| u.wrapper == Some(range)) {
            // the ERROR node a unit was recovered from: reported as the
            // place where that unit's parse broke
            continue;
        }
        let containing = units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.start <= pos && (pos < u.end || (e.is_missing() && pos == u.end)))
            .max_by_key(|(_, u)| u.start)
            .map(|(i, _)| i);
        let unit = match containing {
            Some(i) if units[i].lowered || units[i].kind == ScopeKind::Module => Some(i),
            _ if roots.len() > 1 => {
                // after recovery a tree holds one top-level unit: an error
                // outside its node (or in a phantom unit) is still that unit's
                (0..units.len())
                    .find(|&i| unit_root[i] == ri && units[i].host.is_none() && units[i].lowered)
            }
            other => other,
        };
        match unit.and_then(|u| func_of[u]) {
            Some(fi) => set_error(&mut out.functions[fi], span),
            None => {
                if !toplevel
                    .iter()
                    .any(|t| t.start <= span.start && span.end <= t.end)
                {
                    toplevel.push(span);
                }
            }
        }
    }
    out.toplevel_errors = toplevel;
    Some(out)
}

/// When the parse has errors, parses every top-level unit on its own (with
/// included ranges, so offsets stay those of `text`): tree-sitter's error
/// recovery can otherwise swallow the units after a broken one.
fn recover_units(text: &str, tree: tree_sitter::Tree) -> Vec<tree_sitter::Tree> {
    if !tree.root_node().has_error() {
        return vec![tree];
    }
    let regions = segment::top_level_regions(text);
    if regions.len() < 2 {
        return vec![tree];
    }
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    let point = |offset: usize| {
        let row = line_starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        tree_sitter::Point::new(row, offset - line_starts[row])
    };
    // each region's code lines, as the whole parse read them
    let code = tree.included_ranges();
    let mut trees = Vec::new();
    for (a, b) in regions {
        let mut parser = tree_sitter::Parser::new();
        if parser
            .set_language(&csa_grammars::fortran_language())
            .is_err()
        {
            return vec![tree];
        }
        let mut ranges: Vec<tree_sitter::Range> = code
            .iter()
            .filter(|r| r.start_byte < b && a < r.end_byte)
            .map(|r| {
                let (start, end) = (r.start_byte.max(a), r.end_byte.min(b));
                tree_sitter::Range {
                    start_byte: start,
                    end_byte: end,
                    start_point: point(start),
                    end_point: point(end),
                }
            })
            .collect();
        if ranges.is_empty() {
            // only comment lines (no ranges would be the whole text)
            ranges.push(tree_sitter::Range {
                start_byte: a,
                end_byte: b,
                start_point: point(a),
                end_point: point(b),
            });
        }
        if parser.set_included_ranges(&ranges).is_err() {
            return vec![tree];
        }
        match csa_grammars::parse_bounded(&mut parser, text, None) {
            Some(t) => trees.push(t),
            None => return vec![tree],
        }
    }
    trees
}

/// Keeps the earliest syntax error of a function.
fn set_error(f: &mut Function, span: Span) {
    match f.syntax_error {
        Some(s) if s.start <= span.start => {}
        _ => f.syntax_error = Some(span),
    }
}
