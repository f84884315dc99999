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
//! Every position stored in the IR goes through [`Cx::span`], which maps the
//! parser's offsets (for fixed form: offsets in the normalised text) back to
//! the original text.
//!
//! Robustness: every walk over the tree whose depth follows the input's
//! nesting is either iterative or guarded by `lower::MAX_DEPTH`; past the
//! guard a subtree becomes one opaque call and the function is marked with a
//! syntax error.

mod expr;
mod intrinsics;
mod lower;
mod scope;
mod segment;

#[cfg(test)]
mod tests;

use super::{relevance, FrontendOptions, LoweredFile, PosMap};
use crate::frontend::fields::{FortranFields, F};
use crate::ir::Function;
use crate::source::Span;
use scope::{Collector, Scope, ScopeKind, Scopes};
use tree_sitter::Node;

/// The text the parser saw and the map back to the original.
pub(crate) struct Cx<'a> {
    pub text: &'a str,
    pub map: &'a dyn PosMap,
}

impl<'a> Cx<'a> {
    /// A node's span in original-source coordinates.
    pub fn span(&self, n: Node) -> Span {
        self.span_bytes(n.start_byte(), n.end_byte())
    }

    /// Parser byte range to an original-source span.
    pub fn span_bytes(&self, start: usize, end: usize) -> Span {
        Span::new(self.map.to_original(start), self.map.to_original(end))
    }

    /// A node's text (empty when the range is not valid UTF-8 boundaries).
    pub fn text(&self, n: Node) -> &'a str {
        self.text.get(n.byte_range()).unwrap_or("")
    }

    /// A node's text in lower case (Fortran names are case-insensitive).
    pub fn lname(&self, n: Node) -> String {
        self.text(n).trim().to_ascii_lowercase()
    }
}

/// The named children of a node.
pub(crate) fn named_kids(n: Node) -> Vec<Node> {
    let mut cursor = n.walk();
    n.named_children(&mut cursor).collect()
}

/// All children of a node (named and anonymous).
pub(crate) fn all_kids(n: Node) -> Vec<Node> {
    let mut cursor = n.walk();
    n.children(&mut cursor).collect()
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
pub(crate) fn preproc_body(n: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut cursor = n.walk();
    for (i, c) in n.children(&mut cursor).enumerate() {
        if !c.is_named() {
            continue;
        }
        if matches!(n.field_name_for_child(i as u32), Some("name" | "condition")) {
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
    header: Option<Node<'t>>,
    /// The unit's children after the header (specification and executable
    /// parts, `contains`), without the end statement.
    items: Vec<Node<'t>>,
    host: Option<usize>,
    /// Byte range in the parser's text.
    start: usize,
    end: usize,
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
}

fn make_unit<'t>(cx: &Cx, n: Node<'t>, host: Option<usize>) -> Unit<'t> {
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
    let items: Vec<Node> = kids
        .iter()
        .copied()
        .filter(|k| Some(*k) != header && !is_unit_end(k.node_kind()))
        .collect();
    let name_node = header.and_then(|h| h.field(F::Name)).or_else(|| {
        header.and_then(|h| named_kids(h).into_iter().find(|c| c.node_kind() == "name"))
    });
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
    Unit {
        kind,
        header,
        items,
        host,
        start: n.start_byte(),
        end: n.end_byte(),
        span: cx.span(n),
        name,
        name_span,
        recovered_error: None,
        wrapper: None,
        lowered: kind != ScopeKind::Module && !phantom,
        ancestor,
    }
}

/// Finds every program unit, hosts before their internal procedures, in
/// source order. Iterative: the tree may be arbitrarily deep.
fn discover<'t>(cx: &Cx, roots: &[Node<'t>]) -> Vec<Unit<'t>> {
    let mut units: Vec<Unit<'t>> = Vec::new();
    let mut stack: Vec<(Node<'t>, Option<usize>)> =
        roots.iter().rev().map(|r| (*r, None)).collect();
    let mut guard = 0usize;
    while let Some((n, host)) = stack.pop() {
        guard += 1;
        if guard > 1_000_000 {
            break;
        }
        let kind = n.node_kind();
        let mut push: Vec<(Node<'t>, Option<usize>)> = Vec::new();
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
                    let error_span = broke.map_or(cx.span(n), |b| cx.span(*b));
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
                        span: cx.span_bytes(k.start_byte(), last_end),
                        name,
                        name_span,
                        recovered_error: Some(error_span),
                        wrapper: Some((n.start_byte(), n.end_byte())),
                        lowered: true,
                        ancestor: None,
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
            let uses: Vec<Node> = u
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
    let scope_of = scope_of.into_iter().map(|s| s.unwrap_or(0)).collect();
    (scopes, scope_of)
}

/// Records names referenced as `name(...)` and `call name` in the unit's
/// own statements (not in contained procedures). Iterative.
fn prepass(cx: &Cx, items: &[Node], scope: &mut Scope) {
    let mut stack: Vec<Node> = items.to_vec();
    // One cursor for the whole walk (`named_children` resets it to each
    // node): this walk visits every node of the unit's statements.
    let Some(mut cursor) = items.first().map(|n| n.walk()) else {
        return;
    };
    let mut guard = 0usize;
    while let Some(n) = stack.pop() {
        guard += 1;
        if guard > 5_000_000 {
            break;
        }
        match n.node_kind() {
            "internal_procedures" | "interface" | "derived_type_definition" => continue,
            k if is_unit_node(k) => continue,
            "call_expression" => {
                if let Some(f) = n.named_child(0) {
                    if f.node_kind() == "identifier" {
                        scope.paren_used.insert(cx.lname(f));
                    }
                }
            }
            "subroutine_call" => {
                if let Some(s) = n.field(F::Subroutine) {
                    if s.node_kind() == "identifier" {
                        scope.called.insert(cx.lname(s));
                    }
                }
            }
            _ => {}
        }
        // leaves (names, literals, operators) hold no call
        stack.extend(
            n.named_children(&mut cursor)
                .filter(|c| c.child_count() > 0),
        );
    }
}

/// Every ERROR and MISSING node, in document order. Iterative.
fn collect_errors(root: Node) -> Vec<Node> {
    let mut out = Vec::new();
    if !root.has_error() {
        return out;
    }
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            out.push(n);
        }
        let mut cursor = n.walk();
        let kids: Vec<Node> = n
            .children(&mut cursor)
            .filter(|c| c.has_error() || c.is_missing())
            .collect();
        for c in kids.into_iter().rev() {
            stack.push(c);
        }
        if out.len() > 100_000 {
            break;
        }
    }
    out
}

/// Lowers every program unit of a Fortran file. `text` is the parser's input
/// (for fixed form: the normalised text); `map` maps its offsets back to the
/// original text.
pub fn lower(text: &str, map: &dyn PosMap, opts: &FrontendOptions) -> LoweredFile {
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&csa_grammars::fortran_language())
        .is_err()
    {
        return LoweredFile::default();
    }
    let Some(tree) = parser.parse(text, None) else {
        return LoweredFile::default();
    };
    lower_tree(text, tree, map, None, opts)
}

/// Lowers the program units of an already parsed `tree` of `text`: all of
/// them, or (for incremental analysis) only those whose span overlaps
/// `only`. Every unit still contributes its declarations to the scopes.
pub fn lower_tree(
    text: &str,
    tree: tree_sitter::Tree,
    map: &dyn PosMap,
    only: Option<Span>,
    opts: &FrontendOptions,
) -> LoweredFile {
    let mut out = LoweredFile::default();
    let trees = recover_units(text, tree);
    let roots: Vec<Node> = trees.iter().map(|t| t.root_node()).collect();
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
        let errors: Vec<usize> = roots
            .iter()
            .flat_map(|r| collect_errors(*r))
            .map(|e| e.start_byte())
            .collect();
        let mut outline = vec![false; units.len()];
        for (i, u) in units.iter().enumerate() {
            let host_ok = match u.host {
                None => true,
                Some(h) => units[h].kind == ScopeKind::Module || (h < i && outline[h]),
            };
            outline[i] = u.lowered
                && u.kind != ScopeKind::Module
                && u.recovered_error.is_none()
                && host_ok
                && !relevance::fortran_needs_lowering(
                    text.get(u.start..u.end).unwrap_or(""),
                    errors.iter().any(|&p| u.start <= p && p <= u.end),
                );
        }
        outline
    };
    let (scopes, scope_of) = build_scopes(&cx, &units, &outline);
    if let Some(o) = only {
        for u in &mut units {
            if !(u.start < o.end as usize && o.start as usize <= u.end) {
                u.lowered = false;
            }
        }
    }

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
            },
        );
        if let Some(e) = u.recovered_error {
            set_error(&mut f, e);
        }
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
                }
            }
        }
        func_of[i] = Some(out.functions.len());
        out.functions.push(f);
    }

    // syntax errors: the innermost unit containing the error's start
    let mut toplevel: Vec<Span> = Vec::new();
    let errors = roots
        .iter()
        .enumerate()
        .flat_map(|(ri, r)| collect_errors(*r).into_iter().map(move |e| (ri, e)));
    for (ri, e) in errors {
        let pos = e.start_byte();
        let range = (e.start_byte(), e.end_byte());
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
        let span = cx.span(e);
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
    out
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
    let mut trees = Vec::new();
    for (a, b) in regions {
        let mut parser = tree_sitter::Parser::new();
        if parser
            .set_language(&csa_grammars::fortran_language())
            .is_err()
        {
            return vec![tree];
        }
        let range = tree_sitter::Range {
            start_byte: a,
            end_byte: b,
            start_point: point(a),
            end_point: point(b),
        };
        if parser.set_included_ranges(&[range]).is_err() {
            return vec![tree];
        }
        match parser.parse(text, None) {
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
