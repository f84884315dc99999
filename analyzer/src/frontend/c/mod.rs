//! C front end: tree-sitter-c trees to IR (SEMANTICS.md §3, clang's CFG shape).
//!
//! Two passes over the tree:
//! 1. `FileCtx::scan` collects file-wide facts in document order: object-
//!    and function-like macros, enumerators, typedefs, struct/union layouts,
//!    file-scope variables and function prototypes.
//! 2. Every `function_definition` is lowered by `lower::FnLowerer`
//!    (statements in `lower.rs`, expressions and conditions in `expr.rs`).
//!
//! Nothing here recurses without a bound: tree walks use explicit stacks or
//! cursors, `else if` chains and left-deep `a + b + ...`/`a && b && ...`
//! chains are lowered iteratively, and the remaining statement/expression
//! recursion stops at `lower::MAX_DEPTH` levels or a stack budget
//! (`FnLowerer::too_deep`): deeper expressions become an opaque indirect
//! call, deeper statements are skipped and mark the function as having a
//! syntax error. Constant evaluation is bounded separately.
//!
//! Conventions beyond the IR's contract (see `ir/mod.rs`):
//! * every read of a variable is an access, including the pointer variable
//!   read before `*p`/`p[i]`/`p->f` (a register read unless the pointer is
//!   in memory: the memory model decides);
//! * `#define`d integer constants, enumerators, `const` variables with a
//!   constant initialiser and common standard-header constants (`INT_MAX`,
//!   `EOF`...) are folded: their uses produce no access;
//! * a constant `if` condition elides the dead arm like clang (unless it
//!   holds a label); constant loop conditions become unconditional jumps;
//! * an object- or function-like macro whose body is a single
//!   `__builtin_csa_*` call is lowered as that builtin at the use site;
//! * `static` locals get a `Decl` but no initialising write (static data).

mod consts;
mod expr;
mod repair;
mod library;
mod lower;
mod pragma;
mod types;

#[cfg(test)]
mod tests;

use crate::frontend::fortran::cpp::ExpansionMap;
use super::{relevance, FrontendOptions, LoweredFile};
use crate::frontend::fields::{CFields, F};
use crate::frontend::flat::FlatTree;
use crate::ir::BinOp;
use crate::source::Span;
use consts::{eval_node, eval_tokens, node_text, tokenize, ConstEnv};
use rustc_hash::FxHashMap as HashMap;
use std::cell::{Cell, RefCell};
use crate::frontend::flat::FNode as Node;
use types::{Base, CType, Layer, StructDef, StructRef};

/// Lowers every function definition of a C file. `text` is the parser's
/// input (inactive preprocessor branches blanked, same byte offsets as the
/// original).
pub fn lower(text: &str, opts: &FrontendOptions) -> LoweredFile {
    lower_mapped(text, None, opts)
}

/// [`lower`] of a text whose function-like macros were expanded
/// (`fortran::cpp::expand_c`): `expansion` takes its offsets back to the
/// source's.
pub(crate) fn lower_expanded(
    text: &str,
    expansion: &ExpansionMap,
    opts: &FrontendOptions,
) -> LoweredFile {
    lower_mapped(text, Some(expansion), opts)
}

fn lower_mapped(text: &str, outer: Option<&ExpansionMap>, opts: &FrontendOptions) -> LoweredFile {
    let Some(tree) = csa_grammars::parse(csa_grammars::Grammar::C, text) else {
        return LoweredFile::gave_up(text);
    };
    let misread = misreadings(&tree);
    let repaired = if misread > 0 {
        lower_repaired(text, &tree, misread, opts, outer)
    } else {
        None
    };
    let lowered = repaired.unwrap_or_else(|| {
        let parts = FileParts {
            outer: outer.cloned(),
            ..FileParts::default()
        };
        lower_parsed(text, &tree, None, &[], opts, &mut SignatureCache::default(), parts)
    });
    treecopy::release(tree);
    lowered
}

/// The syntax errors and top-level blocks of a parse: code tree-sitter-c
/// could not read (a block at the top level is the body of an old-style
/// definition whose declarator it did not take for a function's, see
/// [`repair`]). Non-zero exactly when the root has an error or a block is
/// among its children (incremental analysis tests that way).
fn misreadings(tree: &tree_sitter::Tree) -> usize {
    let root = tree.root_node();
    let errors = if root.has_error() {
        csa_grammars::syntax_errors(root).len()
    } else {
        0
    };
    let mut cursor = root.walk();
    let blocks = root
        .children(&mut cursor)
        .filter(|c| c.kind() == "compound_statement")
        .count();
    errors + blocks
}

/// Whether a text whose parse has errors may parse better repaired (see
/// [`repair`]; incremental analysis then lowers the whole file with
/// [`lower`]).
pub fn may_need_repair(text: &str) -> bool {
    !repair::repairs(text, &[]).is_empty()
}

/// `text` lowered from a repaired parse (see [`repair`]: implicit-`int`
/// types written out, `;` after macros used as statements, qualifier
/// macros spelt out or blanked...), when that parse has fewer syntax errors
/// and top-level blocks than the original's `misread`; positions are the
/// source's.
///
/// The repaired text is parsed incrementally from `tree` (the original's
/// parse) edited with the repairs: only the regions they touch are parsed
/// again (a repair of one line in a 100 KB file reparsed it whole). A test
/// holds that tree to a parse from scratch when it has no syntax error
/// (with an error left, the text is parsed from scratch).
fn lower_repaired(
    text: &str,
    tree: &tree_sitter::Tree,
    misread: usize,
    opts: &FrontendOptions,
    outer: Option<&ExpansionMap>,
) -> Option<LoweredFile> {
    let repairs = repair::repairs(text, &opts.defines);
    if repairs.is_empty() {
        return None;
    }
    let (typed, inserted, edits) = repairs.apply_with_edits(text);
    let incremental = edits.and_then(|edits| {
        let mut old = tree.clone();
        for e in &edits {
            old.edit(e);
        }
        csa_grammars::reparse(csa_grammars::Grammar::C, &typed, &old)
    });
    // Only a tree without syntax errors is kept: tree-sitter's recovery
    // may read an erroneous text otherwise when it reuses tokens lexed in
    // another context (`]]` for `] ]`); a parse from scratch then decides.
    let typed_tree = match incremental {
        Some(t) if misreadings(&t) == 0 => t,
        _ => csa_grammars::parse(csa_grammars::Grammar::C, &typed)?,
    };
    if misreadings(&typed_tree) >= misread {
        treecopy::release(typed_tree);
        return None;
    }
    let lowered = lower_parsed(
        &typed,
        &typed_tree,
        None,
        &[],
        opts,
        &mut SignatureCache::default(),
        FileParts {
            inserted,
            outer: outer.cloned(),
        },
    );
    treecopy::release(typed_tree);
    Some(lowered)
}

/// How the parser's offsets go back to the source's (see
/// [`FileCtx::pos`]): the repair's insertions, then the expansion of
/// function-like macros the text was made with.
#[derive(Default)]
struct FileParts {
    inserted: repair::Inserted,
    outer: Option<ExpansionMap>,
}

/// [`lower_tree_cached`] with a cache of its own (the benchmarks').
#[cfg(any(test, feature = "internals"))]
pub fn lower_tree(
    text: &str,
    tree: &tree_sitter::Tree,
    only: Option<Span>,
    skip_bodies: &[(Span, u64)],
    opts: &FrontendOptions,
) -> LoweredFile {
    lower_tree_cached(
        text,
        tree,
        only,
        skip_bodies,
        opts,
        &mut SignatureCache::default(),
    )
}

/// What the signatures of functions in `skip_bodies` declare (name and
/// type), kept between calls of [`lower_tree_cached`] by incremental
/// analysis, by the hash of the function's text (which the caller gives
/// with its span: nothing of the tree is read to find it) and its
/// function's place among the functions. It holds the functions the last
/// scan met, no others (so it does not grow with the edits of a body).
/// Valid while everything the scan reads before it is the same: the caller
/// clears it when the file context (top-level declarations, signatures,
/// bodies that define file-wide facts, directives) changes.
#[derive(Default)]
pub struct SignatureCache(HashMap<(u64, u32), Option<SignatureFacts>>);

/// What a function definition's signature declares: its name, its type,
/// and whether it is declared `readnone` (see [`readnone_attribute`]).
type SignatureFacts = (String, CType, bool);

impl SignatureCache {
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The number of signatures kept.
    #[cfg(test)]
    pub(crate) fn kept(&self) -> usize {
        self.0.len()
    }
}

/// Lowers the function definitions of an already parsed `tree` of `text`:
/// all of them, or only those that overlap `only` (for incremental
/// analysis). The bodies of the function definitions spanning exactly one
/// of `skip_bodies` are not scanned for file-wide facts: the caller knows
/// they define none (see [`body_defines_file_facts`]); beside each span,
/// a hash of the definition's text (the key of its signature's facts in
/// [`SignatureCache`]). With a syntax error anywhere, everything is
/// scanned, as `lower` does.
///
/// The signature facts of skipped bodies come from `cache` (and the new
/// ones are added to it).
pub fn lower_tree_cached(
    text: &str,
    tree: &tree_sitter::Tree,
    only: Option<Span>,
    skip_bodies: &[(Span, u64)],
    opts: &FrontendOptions,
    cache: &mut SignatureCache,
) -> LoweredFile {
    lower_parsed(text, tree, only, skip_bodies, opts, cache, FileParts::default())
}

/// [`lower_tree_cached`] of a text with `parts` (repair insertions, an
/// expansion).
fn lower_parsed(
    text: &str,
    tree: &tree_sitter::Tree,
    only: Option<Span>,
    skip_bodies: &[(Span, u64)],
    opts: &FrontendOptions,
    cache: &mut SignatureCache,
    parts: FileParts,
) -> LoweredFile {
    let mut file = FileCtx::new(text);
    file.inserted = parts.inserted;
    file.outer = parts.outer;
    let tree_root = tree.root_node();
    if !tree_root.has_error() {
        file.skip_bodies = skip_bodies.to_vec();
        file.skip_bodies.sort_by_key(|&(s, _)| s);
        file.skip_plain_bodies = !opts.every_body;
        file.known_signatures = std::mem::take(&mut cache.0);
    }
    // The front end reads a flat copy of the tree (`frontend::flat`):
    // tree-sitter's node API costs an FFI call, and for fields and
    // children a walk of the parent's children, on every question. The
    // bodies the scan skips (see `FileCtx::scan_node`) are left out of it;
    // a function among them that is lowered gets a copy of its own
    // (`whole`).
    let ids = c_ids();
    let mut definition_nodes: Vec<(u32, tree_sitter::Node<'_>)> = Vec::new();
    // the start of the body to leave out, asked about next
    let mut leave_out: Option<usize> = None;
    let flat = FlatTree::pruned_at_kinds(
        tree_root,
        &[ids.function_definition, ids.compound_statement],
        |n, _, index| {
            if n.kind_id() == ids.function_definition {
                definition_nodes.push((index, n));
                leave_out = n
                    .child_by_field_id(ids.body)
                    .filter(|b| file.scan_skips_body(Span::new(n.start_byte(), n.end_byte()), b.byte_range()))
                    .map(|b| b.start_byte());
                return true;
            }
            if leave_out == Some(n.start_byte()) {
                leave_out = None;
                return false;
            }
            true
        },
    );
    let root = flat.root();
    // A copy of a definition whose body was left out (`None` when it
    // was copied).
    let whole = |n: Node<'_>| -> Option<FlatTree> {
        if !n.field(F::Body).is_some_and(|b| b.is_pruned()) {
            return None;
        }
        let i = definition_nodes
            .binary_search_by_key(&u32::try_from(n.id()).ok()?, |&(i, _)| i)
            .ok()?;
        Some(FlatTree::new(definition_nodes.get(i)?.1))
    };
    file.scan(root);
    // What this scan met: the cache holds no function that is gone (a
    // function edited on every keystroke has a new text each time).
    cache.0 = std::mem::take(&mut file.signatures);
    let wanted = |n: Node<'_>| {
        only.is_none_or(|o| n.start_byte() < o.end as usize && o.start as usize <= n.end_byte())
    };
    // Which bodies to lower (see `frontend::relevance`); `None`: all.
    let csa_macros = if opts.every_body {
        None
    } else {
        file.csa_macros()
    };
    let lower_function = |n: Node<'_>| {
        let needs = csa_macros.as_ref().map_or(Some(true), |macros| {
            relevance::c_needs_lowering_by_text(n.has_error(), file.text(n), macros)
        });
        if needs == Some(false) {
            return lower::outline_function(&file, n);
        }
        let copy = whole(n);
        let n = copy.as_ref().map_or(n, |t| t.root());
        if needs.is_none() && !relevance::c_case_inside_loop(n, file.text(n)) {
            return lower::outline_function(&file, n);
        }
        lower::lower_function(&file, n)
    };

    let mut out = LoweredFile::default();
    // every definition, for the callees of the lowered ones
    let mut definitions: Vec<Node<'_>> = Vec::new();
    // Top level: find function definitions (also inside preprocessor
    // conditionals, `extern "C"` blocks and ERROR nodes) and the syntax
    // errors outside them.
    let mut stack: Vec<(Node, bool)> = vec![(root, false)];
    while let Some((n, in_error)) = stack.pop() {
        if n.node_kind() == "function_definition" {
            definitions.push(n);
            if wanted(n) {
                out.functions.push(lower_function(n));
            }
            continue;
        }
        let is_err = n.is_error() || n.is_missing();
        if is_err && !in_error {
            let start = csa_grammars::c_code_start(file.src, n.start_byte(), n.end_byte());
            out.toplevel_errors
                .push(Span::new(file.pos(start), file.pos(n.end_byte())));
        }
        if is_inactive_branch(n.node_kind()) {
            continue;
        }
        let container = matches!(
            n.node_kind(),
            "translation_unit"
                | "preproc_if"
                | "preproc_ifdef"
                | "linkage_specification"
                | "declaration_list"
                | "ERROR"
        );
        if !(container || n.has_error()) {
            continue;
        }
        let kids = children(n);
        for c in kids.into_iter().rev() {
            if is_alternative_of(n, c) {
                continue;
            }
            stack.push((c, in_error || is_err));
        }
    }
    let mut defined: rustc_hash::FxHashMap<String, Option<usize>> = Default::default();
    for (i, n) in definitions.iter().enumerate() {
        if let Some(name) = lower::defined_name(&file, *n) {
            defined
                .entry(name.to_string())
                .and_modify(|e| *e = None)
                .or_insert(Some(i));
        }
    }
    let readnone: Vec<String> = file.readnone.iter().cloned().collect();
    let with_readnone = |mut f: crate::ir::Function| {
        f.readnone_callees.clone_from(&readnone);
        f
    };
    if !readnone.is_empty() {
        for f in &mut out.functions {
            f.readnone_callees.clone_from(&readnone);
        }
    }
    let mut lower_callee = |i: usize| {
        definitions.get(i).map(|&n| {
            let copy = whole(n);
            let n = copy.as_ref().map_or(n, |t| t.root());
            with_readnone(lower::lower_function(&file, n))
        })
    };
    if only.is_none() {
        // every definition lowered, in order: those lowered in full are
        // the callees' lowering already
        super::callees::attach_reusing(&mut out.functions, &defined, &mut lower_callee);
    } else {
        super::callees::attach(&mut out.functions, &defined, &|_| None, &mut lower_callee);
    }
    out
}

/// The longest declarator chain followed for attributes.
const MAX_DECLARATOR_CHAIN: usize = 64;

/// Whether `n` (with text `text`) is a GNU `const` function attribute:
/// `__attribute__((const))` (also `__const__`, among others in the list)
/// or `[[gnu::const]]`. Clang gives such a function `readnone` (memory:
/// none), so CLIE's `mayNeedOrdering` does not count its calls. (`pure`
/// is `readonly`: its calls still read memory.)
pub(crate) fn readnone_attribute(n: Node<'_>, text: &str) -> bool {
    let is_const = |w: &str| matches!(w.trim(), "const" | "__const__");
    match n.node_kind() {
        "attribute_specifier" => {
            // `__attribute__((a, b(x), const))`: the names at the top level
            // of the inner parentheses.
            let inner = text
                .trim_start_matches("__attribute__")
                .trim_start_matches("__attribute")
                .trim();
            let inner = inner
                .strip_prefix("((")
                .and_then(|s| s.strip_suffix("))"))
                .unwrap_or("");
            let mut depth = 0i32;
            let mut start = 0;
            let mut found = false;
            for (i, ch) in inner.char_indices() {
                match ch {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    ',' if depth == 0 => {
                        found |= is_const(&inner[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            found || is_const(&inner[start..])
        }
        "attribute_declaration" => {
            // `[[gnu::const]]`, `[[gnu::__const__, gnu::nothrow]]`
            let body = text
                .trim()
                .strip_prefix("[[")
                .and_then(|s| s.strip_suffix("]]"))
                .unwrap_or("");
            body.split(',').any(|a| {
                let a = a.trim();
                a.strip_prefix("gnu::")
                    .or_else(|| a.strip_prefix("__gnu__::"))
                    .is_some_and(is_const)
            })
        }
        _ => false,
    }
}

/// Whether the body of a function definition adds anything to the
/// file-wide facts `lower` collects: a macro definition or `#undef`, an
/// enum, struct or union with a body, a typedef, or a nested function
/// definition. Such facts are not scoped by the scan, so a function that
/// defines them affects the lowering of every other function.
pub fn body_defines_file_facts(text: &str, function: tree_sitter::Node<'_>) -> bool {
    // (the text usually settles it, without a copy)
    let Some(body) = function.child_by_field_id(c_ids().body) else {
        return false;
    };
    if !function.has_error()
        && !relevance::c_body_may_define_facts(text.as_bytes().get(body.byte_range()).unwrap_or(&[]))
    {
        return false;
    }
    body_defines_facts(text, FlatTree::new(function).root())
}

/// [`body_defines_file_facts`] of a copied function definition.
fn body_defines_facts(text: &str, function: Node<'_>) -> bool {
    let Some(body) = function.field(F::Body) else {
        return false;
    };
    // The text usually settles it without a walk.
    if !function.has_error()
        && !relevance::c_body_may_define_facts(
            text.as_bytes().get(body.byte_range()).unwrap_or(&[]),
        )
    {
        return false;
    }
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        let defines = match n.kind() {
            "preproc_def" | "preproc_function_def" | "type_definition" | "function_definition" => {
                true
            }
            "preproc_call" => n
                .field(F::Directive)
                .and_then(|d| text.get(d.byte_range()))
                .is_some_and(|d| {
                    d.chars()
                        .filter(|c| !c.is_whitespace())
                        .eq("#undef".chars())
                }),
            "enum_specifier" | "struct_specifier" | "union_specifier" => {
                n.field(F::Body).is_some()
            }
            _ => false,
        };
        if defines {
            return true;
        }
        stack.extend(n.children());
    }
    false
}

/// The kind and field ids [`lower_parsed`]'s copy asks about.
struct CIds {
    function_definition: u16,
    compound_statement: u16,
    body: u16,
}

fn c_ids() -> &'static CIds {
    static IDS: std::sync::OnceLock<CIds> = std::sync::OnceLock::new();
    IDS.get_or_init(|| {
        let lang = csa_grammars::c_language();
        CIds {
            function_definition: lang.id_for_node_kind("function_definition", true),
            compound_statement: lang.id_for_node_kind("compound_statement", true),
            body: lang.field_id_for_name("body").map_or(0, |f| f.get()),
        }
    })
}

/// Where the name a function definition defines is written (without a
/// file context).
pub(crate) fn defined_name_range(function: tree_sitter::Node<'_>) -> Option<std::ops::Range<usize>> {
    // the definition without its body (or any block)
    let flat = FlatTree::pruned_at_kinds(function, &[c_ids().compound_statement], |_, _, _| false);
    lower::defined_name_range(flat.root())
}

/// A node's span in the parser's text (the source's unless a type was
/// inserted: see [`FileCtx::span`]).
pub(crate) fn span(n: Node<'_>) -> Span {
    Span::new(n.start_byte(), n.end_byte())
}

/// All children.
pub(crate) fn children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    n.children().collect()
}

/// The first named child that is not a comment (no child vector).
pub(crate) fn first_named_non_comment<'t>(n: Node<'t>) -> Option<Node<'t>> {
    n.named_children().find(|k| k.node_kind() != "comment")
}

/// Named children.
pub(crate) fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    n.named_children().collect()
}

/// `#else`/`#elif` branches: never the active (first) branch.
pub(crate) fn is_inactive_branch(kind: &str) -> bool {
    matches!(kind, "preproc_else" | "preproc_elif" | "preproc_elifdef")
}

/// Whether `child` is the `alternative` (or condition) of a preprocessor
/// conditional `parent`, i.e. not part of its first branch's contents.
/// The children of `body` of kind `kind`, also inside preprocessor
/// conditionals (their first branch), in source order. Iterative.
fn kids_through_preproc<'t>(body: Node<'t>, kind: &str) -> Vec<Node<'t>> {
    let mut stack = vec![body];
    let mut out = Vec::new();
    while let Some(x) = stack.pop() {
        for c in children(x) {
            if is_alternative_of(x, c) {
                continue;
            }
            if c.node_kind() == kind {
                out.push(c);
            } else if matches!(c.node_kind(), "preproc_if" | "preproc_ifdef") {
                stack.push(c);
            }
        }
    }
    out.sort_by_key(|c| c.start_byte());
    out
}

/// A preprocessor conditional (the parents [`is_alternative_of`] looks at).
fn is_preproc_conditional(kind: &str) -> bool {
    matches!(
        kind,
        "preproc_if" | "preproc_ifdef" | "preproc_elif" | "preproc_elifdef"
    )
}

pub(crate) fn is_alternative_of(parent: Node<'_>, child: Node<'_>) -> bool {
    if !is_preproc_conditional(parent.node_kind()) {
        return false;
    }
    is_inactive_branch(child.node_kind())
        || parent
            .field(F::Condition)
            .is_some_and(|c| c.id() == child.id())
        || parent.field(F::Name).is_some_and(|c| c.id() == child.id())
}

/// The first ERROR or MISSING node inside `n` in document order, ignoring
/// the empty statement tree-sitter invents for a loop whose body follows a
/// `#pragma` line (`for (...)\n#pragma unroll\nfor (...)`).
pub(crate) fn first_error(n: Node<'_>, src: &str) -> Option<Span> {
    if !n.has_error() {
        return None;
    }
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if x.is_error() {
            let start = csa_grammars::c_code_start(src, x.start_byte(), x.end_byte());
            return Some(Span::new(start, x.end_byte()));
        }
        if x.is_missing() {
            return Some(span(x));
        }
        if !x.has_error() {
            continue;
        }
        let kids = children(x);
        for c in kids.into_iter().rev() {
            if is_pragma_split_body(x, c, src) {
                continue;
            }
            stack.push(c);
        }
    }
    None
}

/// `parent` is a loop/if whose body `child` is a MISSING `;` statement
/// followed (in the enclosing block) by a `#pragma`, also when `parent` is
/// itself the body of a loop or `if` that ends there (`for (...) if (...)`
/// then the pragma line).
pub(crate) fn is_pragma_split_body(parent: Node<'_>, child: Node<'_>, src: &str) -> bool {
    if !matches!(
        parent.node_kind(),
        "for_statement" | "while_statement" | "if_statement" | "else_clause"
    ) {
        return false;
    }
    if !is_missing_stmt(child) {
        return false;
    }
    let mut anchor = if parent.node_kind() == "else_clause" {
        parent.parent()
    } else {
        Some(parent)
    };
    // the statement the missing body ends: a loop or `if` whose own body
    // this one is ends there too (`for (...) if (...)` then the pragma)
    while let Some(a) = anchor {
        // (an empty sibling is a MISSING node, not a statement)
        let mut next = a.next_named_sibling();
        while let Some(s) = next.filter(|s| s.start_byte() == s.end_byte()) {
            next = s.next_named_sibling();
        }
        if let Some(s) = next {
            return is_pragma(s, src);
        }
        anchor = a
            .parent()
            .filter(|p| p.end_byte() == child.end_byte() && p.kind() != "compound_statement");
    }
    false
}

/// An expression statement that consists only of a MISSING `;`.
pub(crate) fn is_missing_stmt(n: Node<'_>) -> bool {
    n.node_kind() == "expression_statement"
        && n.named_child_count() == 0
        && n.start_byte() == n.end_byte()
}

/// A `#pragma` line (also written `# pragma`).
pub(crate) fn is_pragma(n: Node<'_>, src: &str) -> bool {
    n.node_kind() == "preproc_call"
        && n.field(F::Directive).is_some_and(|d| {
            node_text(d, src)
                .chars()
                .filter(|c| !c.is_whitespace())
                .eq("#pragma".chars())
        })
}

/// What an object-like or function-like macro is, at a position.
#[derive(Clone, Debug)]
pub(crate) enum MacroKind {
    Object { body: String },
    Function { params: Vec<String>, body: String },
    Undef,
}

#[derive(Clone, Debug)]
pub(crate) struct MacroDef {
    pub offset: usize,
    pub kind: MacroKind,
}

/// A file-scope variable.
#[derive(Clone, Debug)]
pub(crate) struct GlobalDecl {
    pub ctype: CType,
    pub span: Span,
    pub const_value: Option<i64>,
}

/// Bound on chains of alias macros (`#define A B`).
const MAX_MACRO_DEPTH: u32 = 32;
/// Uncached macro evaluations per file.
const MACRO_BUDGET: u32 = 200_000;
/// Bound on struct-in-struct definitions.
const MAX_STRUCT_DEPTH: u32 = 64;

/// File-wide facts collected before functions are lowered.
pub(crate) struct FileCtx<'t> {
    pub src: &'t str,
    macros: HashMap<String, Vec<MacroDef>>,
    pub enums: HashMap<String, i64>,
    typedefs: HashMap<String, CType>,
    structs: Vec<StructDef>,
    struct_tags: HashMap<String, usize>,
    struct_by_node: HashMap<usize, usize>,
    pub globals: HashMap<String, GlobalDecl>,
    /// Functions defined or declared at file scope, with their types.
    pub functions: HashMap<String, CType>,
    macro_cache: RefCell<HashMap<(String, usize), Option<i64>>>,
    /// Macro expansions left for the whole file (uncached evaluations).
    macro_budget: Cell<u32>,
    /// Set when an evaluation hit the nesting bound or the budget.
    macro_limited: Cell<bool>,
    /// Incremental lowering: function definitions (exact spans, sorted;
    /// with the hash of their text) whose bodies are not scanned.
    skip_bodies: Vec<(Span, u64)>,
    /// Signature facts of skipped bodies (see [`SignatureCache`]), and how
    /// many function definitions the scan has met.
    signatures: HashMap<(u64, u32), Option<SignatureFacts>>,
    /// The signature facts the caller kept from earlier scans (moved to
    /// `signatures` when met again).
    known_signatures: HashMap<(u64, u32), Option<SignatureFacts>>,
    functions_seen: u32,
    /// Functions declared `readnone` anywhere at file scope.
    readnone: std::collections::BTreeSet<String>,
    /// Bodies whose text shows they define nothing are not scanned
    /// (`relevance::c_body_may_define_facts`); off with syntax errors.
    skip_plain_bodies: bool,
    /// Where the parser's text (`src`) has types the source does not
    /// (see [`repair`]: implicit `int`, `;` after a macro): parser offsets are mapped
    /// back to the source's by [`FileCtx::span`] and [`FileCtx::pos`].
    inserted: repair::Inserted,
    /// Where the text the repairs read has function-like macros expanded
    /// (`fortran::cpp::expand_c`): mapped back after `inserted`.
    outer: Option<ExpansionMap>,
}

impl<'t> FileCtx<'t> {
    fn new(src: &'t str) -> FileCtx<'t> {
        FileCtx {
            src,
            macros: HashMap::default(),
            enums: HashMap::default(),
            typedefs: HashMap::default(),
            structs: Vec::new(),
            struct_tags: HashMap::default(),
            struct_by_node: HashMap::default(),
            globals: HashMap::default(),
            functions: HashMap::default(),
            macro_cache: RefCell::new(HashMap::default()),
            skip_bodies: Vec::new(),
            signatures: HashMap::default(),
            known_signatures: HashMap::default(),
            functions_seen: 0,
            readnone: Default::default(),
            skip_plain_bodies: false,
            macro_budget: Cell::new(MACRO_BUDGET),
            macro_limited: Cell::new(false),
            inserted: repair::Inserted::default(),
            outer: None,
        }
    }

    pub fn text(&self, n: Node<'_>) -> &'t str {
        node_text(n, self.src)
    }

    /// A node's place in the source (what the IR and diagnostics hold).
    pub fn span(&self, n: Node<'_>) -> Span {
        Span::new(self.pos(n.start_byte()), self.pos(n.end_byte()))
    }

    /// A parser offset as a source offset.
    pub fn pos(&self, offset: usize) -> usize {
        let typed = self.inserted.to_original(offset);
        self.outer.as_ref().map_or(typed, |m| m.to_original(typed))
    }

    /// Pass 1: one pre-order walk in document order (this walk visits
    /// every node of the file).
    fn scan(&mut self, root: Node<'_>) {
        let mut n = root;
        // The current node's ancestors: (node, its children are inside a
        // function body, it is a preprocessor conditional).
        let mut path: Vec<(Node, bool, bool)> = Vec::new();
        loop {
            let (in_fn, skip) = match path.last() {
                Some(&(p, in_fn, preproc)) => (in_fn, preproc && is_alternative_of(p, n)),
                None => (false, false),
            };
            let skip = skip || (in_fn && self.defines_nothing(n));
            if !skip {
                if let Some(kids_in_fn) = self.scan_node(n, in_fn) {
                    if let Some(first) = n.children().next() {
                        path.push((n, kids_in_fn, is_preproc_conditional(n.node_kind())));
                        n = first;
                        continue;
                    }
                }
            }
            // The next node: a sibling of this node or of an ancestor.
            loop {
                if n == root {
                    return;
                }
                if let Some(s) = n.next_sibling() {
                    n = s;
                    break;
                }
                match (n.parent(), path.pop()) {
                    (Some(p), Some(_)) => n = p,
                    _ => return,
                }
            }
        }
    }

    /// A statement or expression inside a function body whose subtree
    /// provably holds nothing [`FileCtx::scan_node`] records, so the walk
    /// (which otherwise visits every node of every body) skips it. Inside a
    /// function the scan records only preprocessor lines (`#`),
    /// struct/union/enum bodies, nested function bodies and statement
    /// expressions (`{`), and typedefs, which are block items (of a
    /// compound statement or a `case`), never inside these nodes except
    /// through a `{`. A node with a syntax error is walked.
    fn defines_nothing(&self, n: Node<'_>) -> bool {
        let kind = n.node_kind();
        (kind.ends_with("_expression")
            || matches!(
                kind,
                "expression_statement"
                    | "return_statement"
                    | "declaration"
                    | "if_statement"
                    | "for_statement"
                    | "while_statement"
                    | "do_statement"
                    | "goto_statement"
                    | "break_statement"
                    | "continue_statement"
            ))
            && !n.has_error()
            && !self
                .src
                .as_bytes()
                .get(n.start_byte()..n.end_byte())
                .is_none_or(|t| t.iter().any(|&b| b == b'{' || b == b'#'))
    }

    /// Records what `n` defines. Returns whether its children are inside a
    /// function body, or `None` when they are not to be visited.
    fn scan_node(&mut self, n: Node<'_>, in_fn: bool) -> Option<bool> {
        let mut in_fn_kids = in_fn;
        match n.node_kind() {
            k if is_inactive_branch(k) => return None,
            "preproc_def" => self.scan_define(n),
            "preproc_function_def" => {
                if let Some(name) = n.field(F::Name) {
                    let params = n
                        .field(F::Parameters)
                        .map(|p| {
                            named_children(p)
                                .into_iter()
                                .filter(|c| c.node_kind() == "identifier")
                                .map(|c| self.text(c).to_string())
                                .collect()
                        })
                        .unwrap_or_default();
                    let body = n
                        .field(F::Value)
                        .map(|v| self.text(v).to_string())
                        .unwrap_or_default();
                    self.add_macro(self.text(name), n, MacroKind::Function { params, body });
                }
            }
            "preproc_call" => {
                let dir = n.field(F::Directive).map(|d| self.text(d)).unwrap_or("");
                let dir: String = dir.chars().filter(|c| !c.is_whitespace()).collect();
                if dir == "#undef" {
                    if let Some(arg) = n.field(F::Argument) {
                        if let Some(name) = self.text(arg).split_whitespace().next() {
                            self.add_macro(name, n, MacroKind::Undef);
                        }
                    }
                }
            }
            "enum_specifier" => self.scan_enum(n),
            "struct_specifier" | "union_specifier" if n.field(F::Body).is_some() => {
                self.register_struct(n, 0);
            }
            "type_definition" => self.scan_typedef(n),
            "declaration" if !in_fn => self.scan_global(n),
            "declaration" => {
                // block-scope function prototypes
                self.register_specifier_structs(n);
            }
            "function_definition" => {
                let skipped = self.skipped_body_hash(span(n));
                self.scan_function(n, skipped);
                in_fn_kids = true;
                // (`lower_parsed`'s copy left out the bodies the scan skips:
                // `scan_skips_body`)
                if skipped.is_some() || n.field(F::Body).is_some_and(|b| b.is_pruned()) {
                    return None;
                }
            }
            _ => {}
        }
        Some(in_fn_kids)
    }

    /// The hash of the function at `at` when its body is one of the
    /// skipped ones (`skip_bodies`).
    fn skipped_body_hash(&self, at: Span) -> Option<u64> {
        self.skip_bodies
            .binary_search_by_key(&at, |&(s, _)| s)
            .ok()
            .and_then(|i| self.skip_bodies.get(i))
            .map(|&(_, hash)| hash)
    }

    /// Whether the scan skips the body at `body` of the function
    /// definition at `at` (see [`FileCtx::scan_node`]): an unchanged one
    /// (`skip_bodies`), or one whose text cannot define file facts
    /// (`skip_plain_bodies`).
    fn scan_skips_body(&self, at: Span, body: std::ops::Range<usize>) -> bool {
        self.skipped_body_hash(at).is_some()
            || self.skip_plain_bodies
                && self
                    .src
                    .as_bytes()
                    .get(body)
                    .is_some_and(|b| !relevance::c_body_may_define_facts(b))
    }

    fn scan_define(&mut self, n: Node<'_>) {
        let Some(name) = n.field(F::Name) else {
            return;
        };
        let body = n
            .field(F::Value)
            .map(|v| self.text(v).to_string())
            .unwrap_or_default();
        self.add_macro(self.text(name), n, MacroKind::Object { body });
    }

    /// Records a macro definition (or `#undef`) made by the directive `at`.
    fn add_macro(&mut self, name: &str, at: Node<'_>, kind: MacroKind) {
        self.macros
            .entry(name.to_string())
            .or_default()
            .push(MacroDef {
                offset: at.start_byte(),
                kind,
            });
    }

    fn scan_enum(&mut self, n: Node<'_>) {
        let Some(body) = n.field(F::Body) else {
            return;
        };
        let mut next: Option<i64> = Some(0);
        // enumerators, also inside preprocessor conditionals (first branch)
        for e in kids_through_preproc(body, "enumerator") {
            let Some(name) = e.field(F::Name) else {
                continue;
            };
            let v = match e.field(F::Value) {
                Some(v) => eval_node(v, self.src, self, 0),
                None => next,
            };
            if let Some(v) = v {
                self.enums.insert(self.text(name).to_string(), v);
            }
            next = v.and_then(|v| v.checked_add(1));
        }
    }

    /// Registers struct bodies that appear in a declaration's type.
    fn register_specifier_structs(&mut self, decl: Node<'_>) {
        if let Some(spec) = decl.field(F::Type) {
            if matches!(spec.node_kind(), "struct_specifier" | "union_specifier")
                && spec.field(F::Body).is_some()
            {
                self.register_struct(spec, 0);
            }
        }
    }

    fn scan_typedef(&mut self, n: Node<'_>) {
        self.register_specifier_structs(n);
        let Some(spec) = n.field(F::Type) else {
            return;
        };
        let base = self.spec_type(spec);
        for d in n.fields(F::Declarator) {
            let (ty, name) = self.apply_declarator(d, base.clone());
            if let Some(name) = name {
                self.typedefs.insert(self.text(name).to_string(), ty);
            }
        }
    }

    fn scan_global(&mut self, n: Node<'_>) {
        self.register_specifier_structs(n);
        let Some(spec) = n.field(F::Type) else {
            return;
        };
        let base = self.spec_type(spec);
        let is_const = has_const_qualifier(n, self);
        for d in n.fields(F::Declarator) {
            let (decl, init) = if d.node_kind() == "init_declarator" {
                (d.field(F::Declarator).unwrap_or(d), d.field(F::Value))
            } else {
                (d, None)
            };
            let (ty, name) = self.apply_declarator(decl, base.clone());
            let Some(name) = name else { continue };
            let name_s = self.text(name).to_string();
            if ty.is_func() {
                if self.declares_readnone(n, decl) {
                    self.readnone.insert(name_s.clone());
                }
                self.functions.entry(name_s).or_insert(ty);
                continue;
            }
            let const_value = if is_const && ty.layers.is_empty() {
                init.filter(|v| v.node_kind() != "initializer_list")
                    .and_then(|v| eval_node(v, self.src, self, 0))
            } else {
                None
            };
            let g = GlobalDecl {
                ctype: ty,
                span: self.span(name),
                const_value,
            };
            match self.globals.get(&name_s) {
                // keep the first declaration's position, but prefer a
                // complete type (`extern int a[];` then `int a[10];`)
                Some(old) => {
                    let g = GlobalDecl {
                        span: old.span,
                        ..g
                    };
                    self.globals.insert(name_s, g);
                }
                None => {
                    self.globals.insert(name_s, g);
                }
            }
        }
    }

    /// Whether the declarator `d` of the declaration or definition `n`
    /// declares a `readnone` function: a GNU `const` attribute before the
    /// type (it applies to every declarator) or on the function declarator
    /// itself.
    fn declares_readnone(&self, n: Node<'_>, d: Node<'_>) -> bool {
        let attrs = |m: Node<'_>| {
            children(m)
                .into_iter()
                .any(|c| readnone_attribute(c, self.text(c)))
        };
        if attrs(n) {
            return true;
        }
        // Down the declarator chain (`*f(int) __attribute__((const))`).
        let mut cur = Some(d);
        let mut depth = 0;
        while let Some(c) = cur {
            if depth > MAX_DECLARATOR_CHAIN {
                break;
            }
            depth += 1;
            if attrs(c) {
                return true;
            }
            cur = c.field(F::Declarator).or_else(|| {
                (c.node_kind() == "parenthesized_declarator")
                    .then(|| c.named_child(0))
                    .flatten()
            });
        }
        false
    }

    /// Records what a function definition's signature declares. `skipped`:
    /// its body is not scanned, and this is the hash of its text.
    fn scan_function(&mut self, n: Node<'_>, skipped: Option<u64>) {
        let ordinal = self.functions_seen;
        self.functions_seen += 1;
        // A skipped body's signature declares what it did last time (see
        // `SignatureCache`): asked before reading the tree. Only signatures
        // whose type defines no struct or union are kept (those are
        // registered by node).
        let key = skipped.map(|hash| (hash, ordinal));
        if let Some((k, known)) = key.and_then(|k| Some((k, self.known_signatures.remove(&k)?))) {
            if let Some((name, ty, readnone)) = &known {
                if *readnone {
                    self.readnone.insert(name.clone());
                }
                self.functions.insert(name.clone(), ty.clone());
            }
            self.signatures.insert(k, known);
            return;
        }
        let spec = n.field(F::Type);
        let d = n.field(F::Declarator);
        let key = key.filter(|_| {
            spec.is_some_and(|s| !matches!(s.node_kind(), "struct_specifier" | "union_specifier"))
                && d.is_some()
        });
        self.register_specifier_structs(n);
        let (Some(spec), Some(d)) = (spec, d) else {
            return;
        };
        let base = self.spec_type(spec);
        let (ty, name) = self.apply_declarator(d, base);
        let name = name.map(|name| self.text(name).to_string());
        let readnone = self.declares_readnone(n, d);
        if let Some(k) = key {
            self.signatures
                .insert(k, name.clone().map(|name| (name, ty.clone(), readnone)));
        }
        if let Some(name) = name {
            if readnone {
                self.readnone.insert(name.clone());
            }
            self.functions.insert(name, ty);
        }
    }

    fn register_struct(&mut self, n: Node<'_>, depth: u32) -> Option<usize> {
        if let Some(&i) = self.struct_by_node.get(&n.start_byte()) {
            return Some(i);
        }
        if depth > MAX_STRUCT_DEPTH {
            return None;
        }
        let body = n.field(F::Body)?;
        let idx = self.structs.len();
        self.structs.push(StructDef::default());
        self.struct_by_node.insert(n.start_byte(), idx);
        if let Some(name) = n.field(F::Name) {
            self.struct_tags.insert(self.text(name).to_string(), idx);
        }
        let mut fields = Vec::new();
        for fd in kids_through_preproc(body, "field_declaration") {
            let Some(spec) = fd.field(F::Type) else {
                continue;
            };
            let mut inner = None;
            if matches!(spec.node_kind(), "struct_specifier" | "union_specifier")
                && spec.field(F::Body).is_some()
            {
                inner = self.register_struct(spec, depth + 1);
            }
            let base = self.spec_type(spec);
            let decls = fd.fields(F::Declarator);
            if decls.is_empty() {
                // anonymous struct/union member: its fields are ours
                if let Some(i) = inner {
                    let f = self.structs.get(i).map(|s| s.fields.clone());
                    fields.extend(f.unwrap_or_default());
                }
                continue;
            }
            for d in decls {
                let (ty, name) = self.apply_declarator(d, base.clone());
                if let Some(name) = name {
                    fields.push((self.text(name).to_string(), ty));
                }
            }
        }
        if let Some(s) = self.structs.get_mut(idx) {
            s.fields = fields;
        }
        Some(idx)
    }

    /// The type named by a type specifier (before declarators).
    pub fn spec_type(&self, spec: Node<'_>) -> CType {
        use crate::ir::ScalarTy;
        match spec.node_kind() {
            "primitive_type" => types::primitive(self.text(spec)).unwrap_or_else(CType::unknown),
            "sized_type_specifier" => {
                let longs = children(spec)
                    .iter()
                    .filter(|c| self.text(**c) == "long")
                    .count();
                let t = spec.field(F::Type).map(|t| self.text(t));
                CType::scalar(match t {
                    Some("double") if longs > 0 => ScalarTy::LongDouble,
                    Some("double") => ScalarTy::Double,
                    Some("float") => ScalarTy::Float,
                    Some("char") => ScalarTy::Char,
                    _ => ScalarTy::Int,
                })
            }
            "type_identifier" => {
                let name = self.text(spec);
                self.typedefs
                    .get(name)
                    .cloned()
                    .or_else(|| types::primitive(name))
                    .unwrap_or_else(CType::unknown)
            }
            "struct_specifier" | "union_specifier" => {
                if let Some(&i) = self.struct_by_node.get(&spec.start_byte()) {
                    return CType {
                        base: Base::Struct(StructRef::Id(i)),
                        layers: Vec::new(),
                    };
                }
                match spec.field(F::Name) {
                    Some(name) => CType {
                        base: Base::Struct(StructRef::Named(self.text(name).to_string())),
                        layers: Vec::new(),
                    },
                    None => CType::unknown(),
                }
            }
            "enum_specifier" => CType::int(),
            _ => CType::unknown(),
        }
    }

    /// Applies a declarator to a base type: returns the declared type and
    /// the declared name (identifier, field or type identifier), if any.
    pub fn apply_declarator<'n>(&self, decl: Node<'n>, base: CType) -> (CType, Option<Node<'n>>) {
        let mut ty = base;
        let mut cur = decl;
        for _ in 0..256 {
            match cur.node_kind() {
                "identifier" | "field_identifier" | "type_identifier" | "primitive_type" => {
                    if cur.is_missing() {
                        return (ty, None);
                    }
                    return (ty, Some(cur));
                }
                "pointer_declarator" | "abstract_pointer_declarator" => {
                    let restrict = children(cur)
                        .iter()
                        .any(|c| is_restrict_qualifier(*c, self));
                    ty = ty.wrap(Layer::Ptr { restrict });
                }
                "array_declarator" | "abstract_array_declarator" => {
                    let (vla, len) = match cur.field(F::Size) {
                        Some(s) if s.node_kind() == "*" || !s.is_named() => (true, None),
                        Some(s) => match eval_node(s, self.src, self, 0) {
                            Some(n) => (false, Some(n)),
                            None => (true, None),
                        },
                        None => (false, None),
                    };
                    ty = ty.wrap(Layer::Array { vla, len });
                }
                "function_declarator" | "abstract_function_declarator" => {
                    ty = ty.wrap(Layer::Func);
                }
                "init_declarator" => {}
                "parenthesized_declarator"
                | "abstract_parenthesized_declarator"
                | "attributed_declarator" => {
                    match named_children(cur).into_iter().find(|c| {
                        !matches!(
                            c.node_kind(),
                            "attribute_declaration" | "ms_call_modifier" | "comment"
                        )
                    }) {
                        Some(c) => {
                            cur = c;
                            continue;
                        }
                        None => return (ty, None),
                    }
                }
                _ => return (ty, None),
            }
            match cur.field(F::Declarator) {
                Some(c) => cur = c,
                None => return (ty, None),
            }
        }
        (CType::unknown(), None)
    }

    /// The fields of a struct type.
    pub fn field_type(&self, ty: &CType, field: &str) -> Option<CType> {
        if !ty.layers.is_empty() {
            return None;
        }
        let Base::Struct(r) = &ty.base else {
            return None;
        };
        let idx = match r {
            StructRef::Id(i) => *i,
            StructRef::Named(n) => *self.struct_tags.get(n)?,
        };
        self.structs
            .get(idx)?
            .fields
            .iter()
            .rev()
            .find(|(n, _)| n == field)
            .map(|(_, t)| t.clone())
    }

    /// The macro definition in force for `name` at byte `offset`.
    pub fn macro_at(&self, name: &str, offset: usize) -> Option<&MacroDef> {
        let defs = self.macros.get(name)?;
        let d = defs.iter().rev().find(|d| d.offset < offset)?;
        match d.kind {
            MacroKind::Undef => None,
            _ => Some(d),
        }
    }

    /// The integer value of an object-like macro at `offset`. Values are
    /// cached per definition, except when an evaluation ran into the nesting
    /// bound or the file's expansion budget (then it may succeed elsewhere).
    pub fn macro_value(&self, name: &str, offset: usize, depth: u32) -> Option<i64> {
        let def = self.macro_at(name, offset)?;
        let MacroKind::Object { body } = &def.kind else {
            return None;
        };
        let key = (name.to_string(), def.offset);
        if let Some(v) = self.macro_cache.borrow().get(&key) {
            return *v;
        }
        let budget = self.macro_budget.get();
        if depth > consts::MAX_EVAL_DEPTH || budget == 0 {
            self.macro_limited.set(true);
            return None;
        }
        self.macro_budget.set(budget - 1);
        let outer_limited = self.macro_limited.replace(false);
        // provisional entry: cuts cycles
        self.macro_cache.borrow_mut().insert(key.clone(), None);
        let v = eval_tokens(&tokenize(body), self, offset, depth + 1);
        let limited = self.macro_limited.get();
        if limited {
            self.macro_cache.borrow_mut().remove(&key);
        } else {
            self.macro_cache.borrow_mut().insert(key, v);
        }
        self.macro_limited.set(outer_limited || limited);
        v
    }

    /// For an object-like macro whose body is a single identifier: that
    /// identifier (followed through further aliases).
    pub fn macro_alias(&self, name: &str, offset: usize) -> Option<String> {
        let mut cur = name.to_string();
        let mut out = None;
        for _ in 0..MAX_MACRO_DEPTH {
            let Some(MacroDef {
                kind: MacroKind::Object { body },
                ..
            }) = self.macro_at(&cur, offset)
            else {
                break;
            };
            let toks = tokenize(body);
            match toks.as_slice() {
                [consts::Tok::Ident(id)] if *id != cur => {
                    cur = id.clone();
                    out = Some(cur.clone());
                }
                _ => break,
            }
        }
        out
    }

    /// The names of the macros that can expand to a CSA builtin or a
    /// pragma (see [`relevance::csa_macro_names`]).
    fn csa_macros(&self) -> Option<Vec<&str>> {
        relevance::csa_macro_names(self.macros.iter().map(|(name, defs)| {
            let bodies = defs
                .iter()
                .filter_map(|d| match &d.kind {
                    MacroKind::Object { body } | MacroKind::Function { body, .. } => {
                        Some(body.as_str())
                    }
                    MacroKind::Undef => None,
                })
                .collect();
            (name.as_str(), bodies)
        }))
    }

    pub fn is_fn_macro(&self, name: &str, offset: usize) -> bool {
        matches!(
            self.macro_at(name, offset),
            Some(MacroDef {
                kind: MacroKind::Function { .. },
                ..
            })
        )
    }

    /// A function-like macro of two parameters whose body is a maximum or
    /// minimum of them written with `?:` (`#define MAX(a, b) ((a) > (b) ?
    /// (a) : (b))`, any of `<`, `<=`, `>`, `>=`, either arm order): that
    /// operator.
    pub fn extreme_macro(&self, name: &str, offset: usize) -> Option<BinOp> {
        let Some(MacroDef {
            kind: MacroKind::Function { params, body },
            ..
        }) = self.macro_at(name, offset)
        else {
            return None;
        };
        let [p, q] = params.as_slice() else {
            return None;
        };
        // the body without blanks and parentheses: `a>b?a:b`
        let flat: String = body
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '(' && *c != ')')
            .collect();
        let (cond, arms) = flat.split_once('?')?;
        let (then, else_) = arms.split_once(':')?;
        let (x, cmp, y) = ["<=", ">=", "<", ">"]
            .iter()
            .find_map(|op| cond.split_once(op).map(|(x, y)| (x, *op, y)))?;
        let param = |t: &str| {
            if t == p {
                Some(0)
            } else if t == q {
                Some(1)
            } else {
                None
            }
        };
        let (x, y, then, else_) = (param(x)?, param(y)?, param(then)?, param(else_)?);
        if x == y || then == else_ || !((then == x && else_ == y) || (then == y && else_ == x)) {
            return None;
        }
        // `x CMP y ? x : y`: `>` picks the larger
        let larger = matches!(cmp, ">" | ">=") == (then == x);
        Some(if larger { BinOp::Max } else { BinOp::Min })
    }

    pub fn is_object_macro(&self, name: &str, offset: usize) -> bool {
        matches!(
            self.macro_at(name, offset),
            Some(MacroDef {
                kind: MacroKind::Object { .. },
                ..
            })
        )
    }

    pub fn is_typedef(&self, name: &str) -> bool {
        self.typedefs.contains_key(name)
    }
}

impl ConstEnv for FileCtx<'_> {
    fn ident_value(&self, name: &str, offset: usize, depth: u32) -> Option<i64> {
        if self.macro_at(name, offset).is_some() {
            return self.macro_value(name, offset, depth);
        }
        if let Some(v) = self.enums.get(name) {
            return Some(*v);
        }
        match self.globals.get(name) {
            Some(g) => g.const_value,
            None if !self.functions.contains_key(name) => standard_macro(name).flatten(),
            None => None,
        }
    }

    fn is_type_name(&self, name: &str) -> bool {
        types::primitive(name).is_some()
            || matches!(
                name,
                "unsigned" | "signed" | "long" | "short" | "const" | "volatile"
            )
            || self.is_typedef(name)
    }
}

/// Object-like macros of the standard headers (which the front end never
/// sees): `Some(Some(v))` an integer constant, `Some(None)` a non-integer
/// constant (no access either), `None` not a standard macro.
pub(crate) fn standard_macro(name: &str) -> Option<Option<i64>> {
    let v = match name {
        "EOF" => -1,
        "EXIT_SUCCESS" => 0,
        "EXIT_FAILURE" => 1,
        "CHAR_BIT" => 8,
        "SCHAR_MAX" | "INT8_MAX" => i8::MAX as i64,
        "SCHAR_MIN" | "INT8_MIN" => i8::MIN as i64,
        "UCHAR_MAX" | "UINT8_MAX" => u8::MAX as i64,
        "SHRT_MAX" | "INT16_MAX" => i16::MAX as i64,
        "SHRT_MIN" | "INT16_MIN" => i16::MIN as i64,
        "USHRT_MAX" | "UINT16_MAX" => u16::MAX as i64,
        "INT_MAX" | "INT32_MAX" | "RAND_MAX" => i32::MAX as i64,
        "INT_MIN" | "INT32_MIN" => i32::MIN as i64,
        "UINT_MAX" | "UINT32_MAX" => u32::MAX as i64,
        "LONG_MAX" | "LLONG_MAX" | "INT64_MAX" | "SSIZE_MAX" | "PTRDIFF_MAX" | "INTMAX_MAX" => {
            i64::MAX
        }
        "LONG_MIN" | "LLONG_MIN" | "INT64_MIN" | "PTRDIFF_MIN" | "INTMAX_MIN" => i64::MIN,
        "ULONG_MAX" | "ULLONG_MAX" | "UINT64_MAX" | "SIZE_MAX" | "UINTMAX_MAX" => -1,
        "FLT_MAX" | "FLT_MIN" | "FLT_EPSILON" | "DBL_MAX" | "DBL_MIN" | "DBL_EPSILON"
        | "LDBL_MAX" | "LDBL_MIN" | "LDBL_EPSILON" | "HUGE_VAL" | "HUGE_VALF" | "HUGE_VALL"
        | "INFINITY" | "NAN" | "M_PI" | "M_PI_2" | "M_PI_4" | "M_1_PI" | "M_2_PI" | "M_E"
        | "M_LN2" | "M_LN10" | "M_LOG2E" | "M_LOG10E" | "M_SQRT2" | "M_SQRT1_2" => {
            return Some(None)
        }
        _ => return None,
    };
    Some(Some(v))
}

/// A macro body that is one CSA builtin call (`__builtin_csa_spmd(w, 0)`,
/// optionally parenthesised or followed by `;`): the builtin's name and its
/// argument texts.
pub(crate) fn builtin_in_macro(body: &str) -> Option<(String, Vec<String>)> {
    let mut t = body.trim();
    for _ in 0..16 {
        let stripped = t.strip_suffix(';').map(str::trim_end).unwrap_or(t);
        t = stripped;
        match t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
            Some(inner) if balanced(inner) => t = inner.trim(),
            _ => break,
        }
    }
    if !t.starts_with("__builtin_csa_") {
        return None;
    }
    let name_end = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    let name = &t[..name_end];
    let rest = t[name_end..].trim_start();
    let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
    if !balanced(inner) {
        return None;
    }
    let mut args = Vec::new();
    let mut level = 0i32;
    let mut in_str: Option<char> = None;
    let mut escaped = false;
    let mut cur = String::new();
    for c in inner.chars() {
        if let Some(q) = in_str {
            cur.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                in_str = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                in_str = Some(c);
                cur.push(c);
            }
            '(' | '[' | '{' => {
                level += 1;
                cur.push(c);
            }
            ')' | ']' | '}' => {
                level -= 1;
                cur.push(c);
            }
            ',' if level == 0 => args.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() || !args.is_empty() {
        args.push(cur.trim().to_string());
    }
    Some((name.to_string(), args))
}

/// Parentheses outside string literals balance (and never go negative).
pub(crate) fn balanced(s: &str) -> bool {
    let mut level = 0i32;
    let mut in_str: Option<char> = None;
    let mut escaped = false;
    for c in s.chars() {
        if let Some(q) = in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                in_str = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => in_str = Some(c),
            '(' => level += 1,
            ')' => {
                level -= 1;
                if level < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    level == 0 && in_str.is_none()
}

/// `const` among a declaration's own qualifiers (`const int N`).
pub(crate) fn has_const_qualifier(decl: Node<'_>, file: &FileCtx<'_>) -> bool {
    children(decl)
        .iter()
        .any(|c| c.node_kind() == "type_qualifier" && file.text(*c) == "const")
}

/// `restrict`, `__restrict`, `__restrict__` among a declarator's qualifiers.
pub(crate) fn is_restrict_qualifier(c: Node<'_>, file: &FileCtx<'_>) -> bool {
    match c.node_kind() {
        "type_qualifier" | "ms_pointer_modifier" => matches!(
            file.text(c).trim(),
            "restrict" | "__restrict" | "__restrict__"
        ),
        _ => false,
    }
}
