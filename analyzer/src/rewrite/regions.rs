//! Region/section patterns to OpenMP (REWRITES.md, C only):
//!
//! * loop pattern: `int r = region_entry(ID);` right before a canonical
//!   `for` whose body starts with `int s = section_entry(r);` and ends with
//!   `section_exit(s);`, and `region_exit(r);` right after it: the four
//!   calls go and the loop gets `#pragma omp parallel for` with the clauses
//!   of the data-sharing analysis;
//! * straight-line pattern: `int r = region_entry(ID);`, then consecutive
//!   `int sK = section_entry(r); ... section_exit(sK);` groups, then
//!   `region_exit(r);`: `#pragma omp parallel sections` with one
//!   `#pragma omp section` block per group.
//!
//! Only these exact shapes are converted; tokens used anywhere else, other
//! region intrinsics inside, declarations inside a section (their scope
//! would shrink to the block) or a scalar local written in one section and
//! used in another refuse the conversion.

use super::sharing;
use super::{refused, MarkerRewrite};
use crate::diag::{Applicability, Edit, Fix};
use crate::fix::{indentation, line_end_with_newline, line_ending, line_start};
use crate::ir::BuiltinKind;
use crate::source::Span;
use csa_grammars::preproc::Preprocessed;
use tree_sitter::{Node, Tree};

const WHAT: &str = "OpenMP";

fn text<'a>(n: Node, src: &'a str) -> &'a str {
    src.get(n.byte_range()).unwrap_or("")
}

fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|c| c.kind() != "comment")
        .collect()
}

/// The intrinsic called by a statement: `int v = NAME(ARG);`,
/// `NAME(ARG);`. Returns (kind, declared variable, argument text).
fn intrinsic_call<'a>(stmt: Node, src: &'a str) -> Option<(BuiltinKind, Option<&'a str>, &'a str)> {
    let (call, var) = match stmt.kind() {
        "declaration" => {
            let decls = {
                let mut c = stmt.walk();
                stmt.children_by_field_name("declarator", &mut c)
                    .collect::<Vec<_>>()
            };
            let [d] = decls.as_slice() else {
                return None;
            };
            let id = d.child_by_field_name("declarator")?;
            if id.kind() != "identifier" {
                return None;
            }
            (d.child_by_field_name("value")?, Some(text(id, src)))
        }
        "expression_statement" => (stmt.named_child(0)?, None),
        _ => return None,
    };
    if call.kind() != "call_expression" {
        return None;
    }
    let kind = BuiltinKind::from_name(text(call.child_by_field_name("function")?, src))?;
    let args = named_children(call.child_by_field_name("arguments")?);
    let [arg] = args.as_slice() else {
        return None;
    };
    Some((kind, var, text(*arg, src)))
}

/// How many times `name` occurs as an identifier under `n`.
fn occurrences(n: Node, src: &str, name: &str) -> usize {
    let mut count = 0;
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if x.kind() == "identifier" && text(x, src) == name {
            count += 1;
        }
        let mut c = x.walk();
        stack.extend(x.children(&mut c));
    }
    count
}

fn has_region_intrinsic(n: Node, src: &str) -> bool {
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if x.kind() == "call_expression" {
            if let Some(f) = x.child_by_field_name("function") {
                if BuiltinKind::from_name(text(f, src)).is_some_and(|k| k.is_region_intrinsic()) {
                    return true;
                }
            }
        }
        let mut c = x.walk();
        stack.extend(x.children(&mut c));
    }
    false
}

/// Rewrites every region entry of a C file that starts one of the two
/// patterns; region entries that start neither are left alone (no entry in
/// the result), ones that start a pattern but cannot convert are refused.
/// `sharing_of` gives the data sharing of a loop statement (from the IR).
pub(crate) fn rewrite(
    text: &str,
    pre: &Preprocessed,
    tree: &Tree,
    sharing_of: LoopSharing,
) -> Vec<MarkerRewrite> {
    let src = pre.text.as_str();
    let mut out = Vec::new();
    // each node with the function definition around it (climbing with
    // `Node::parent` costs the depth squared)
    let mut stack = vec![(tree.root_node(), None)];
    while let Some((n, func)) = stack.pop() {
        let func = if n.kind() == "function_definition" {
            Some(n)
        } else {
            func
        };
        let mut c = n.walk();
        stack.extend(n.children(&mut c).map(|k| (k, func)));
        let Some(func) = func.filter(|_| n.kind() == "compound_statement") else {
            continue;
        };
        let stmts = named_children(n);
        for (i, s) in stmts.iter().enumerate() {
            let Some((BuiltinKind::RegionEntry, Some(reg), _)) = intrinsic_call(*s, src) else {
                continue;
            };
            if let Some(r) = try_pattern(text, pre, src, func, &stmts, i, reg, sharing_of) {
                out.push(r);
            }
        }
    }
    out
}

/// What gives the data sharing of a loop statement.
pub(crate) type LoopSharing<'a> = &'a dyn Fn(Node) -> Result<sharing::Sharing, sharing::Refusal>;

#[allow(clippy::too_many_arguments)]
fn try_pattern(
    text: &str,
    pre: &Preprocessed,
    src: &str,
    func: Node,
    stmts: &[Node],
    i: usize,
    reg: &str,
    sharing_of: LoopSharing,
) -> Option<MarkerRewrite> {
    let entry = stmts[i];
    let span = Span::new(entry.start_byte(), entry.end_byte());
    let next = stmts.get(i + 1)?;
    if next.kind() == "for_statement" {
        let exit = stmts.get(i + 2)?;
        match intrinsic_call(*exit, src) {
            Some((BuiltinKind::RegionExit, None, arg)) if arg == reg => {}
            _ => return None,
        }
        return Some(loop_pattern(
            text, pre, src, func, entry, *next, *exit, reg, sharing_of,
        ));
    }
    // Straight-line: groups of entry ... exit until the region exit.
    let mut groups: Vec<(Node, Vec<Node>, Node)> = Vec::new();
    let mut j = i + 1;
    let exit = loop {
        let s = *stmts.get(j)?;
        match intrinsic_call(s, src) {
            Some((BuiltinKind::RegionExit, None, arg)) if arg == reg => break s,
            Some((BuiltinKind::SectionEntry, Some(sec), arg)) if arg == reg => {
                let mut body = Vec::new();
                let mut k = j + 1;
                let close = loop {
                    let t = *stmts.get(k)?;
                    match intrinsic_call(t, src) {
                        Some((BuiltinKind::SectionExit, None, a)) if a == sec => break t,
                        _ => {
                            if has_region_intrinsic(t, src) {
                                return Some(refused(
                                    span,
                                    WHAT,
                                    "the sections pattern has other region or section intrinsics inside a section",
                                ));
                            }
                            body.push(t);
                        }
                    }
                    k += 1;
                };
                if occurrences(func, src, sec) != 2 {
                    return Some(refused(
                        span,
                        WHAT,
                        &format!("the section token `{sec}` is used elsewhere"),
                    ));
                }
                groups.push((s, body, close));
                j = k + 1;
            }
            _ => return None,
        }
    };
    if groups.is_empty() {
        return None;
    }
    Some(sections_pattern(
        text, pre, src, func, entry, &groups, exit, reg,
    ))
}

#[allow(clippy::too_many_arguments)]
fn loop_pattern(
    text: &str,
    pre: &Preprocessed,
    src: &str,
    func: Node,
    entry: Node,
    for_node: Node,
    exit: Node,
    reg: &str,
    sharing_of: LoopSharing,
) -> MarkerRewrite {
    let span = Span::new(entry.start_byte(), entry.end_byte());
    let Some(body) = for_node
        .child_by_field_name("body")
        .filter(|b| b.kind() == "compound_statement")
    else {
        return refused(span, WHAT, "the loop body is not a block");
    };
    let inner = named_children(body);
    let (Some(first), Some(last)) = (inner.first(), inner.last()) else {
        return refused(span, WHAT, "the loop body is empty");
    };
    let sec = match (intrinsic_call(*first, src), intrinsic_call(*last, src)) {
        (
            Some((BuiltinKind::SectionEntry, Some(sec), a)),
            Some((BuiltinKind::SectionExit, None, b)),
        ) if a == reg && b == sec && first != last => sec,
        _ => {
            return refused(
                span,
                WHAT,
                "the loop body does not start with the section entry and end with its exit",
            )
        }
    };
    if inner[1..inner.len() - 1]
        .iter()
        .any(|s| has_region_intrinsic(*s, src))
    {
        return refused(
            span,
            WHAT,
            "the loop body has other region or section intrinsics",
        );
    }
    if occurrences(func, src, reg) != 3 || occurrences(func, src, sec) != 2 {
        return refused(span, WHAT, "the region or section token is used elsewhere");
    }
    let sh = super::canonical::c_canonical(for_node, src).and_then(|_| sharing_of(for_node));
    let sh = match sh {
        Ok(s) => s,
        Err(r) => return refused(span, WHAT, &r.reason),
    };
    let clauses = super::openmp::clauses(None, &sh, false);
    let directive = format!("#pragma omp parallel for{clauses}");
    let mut edits = Vec::new();
    for s in [entry, *first, *last, exit] {
        // (C only: the region/section intrinsics do not exist in Fortran.)
        edits.extend(crate::fix::marker_removal(
            text,
            pre,
            Span::new(s.start_byte(), s.end_byte()),
            false,
        ));
    }
    edits.extend(crate::fix::insert_directive_before(
        text, for_node, &directive,
    ));
    MarkerRewrite {
        marker: span,
        fix: Fix {
            kind: crate::diag::FixKind::Convert,
            title: format!(
                "Convert the region and section around the loop to `{directive}` (asserts the iterations are independent)"
            ),
            applicability: Applicability::Unsafe,
            edits,
        },
    }
}

/// `text[from..to]` without the ranges of `cut` (sorted, not overlapping)
/// that lie inside it.
fn without(text: &str, from: usize, to: usize, cut: &[(usize, usize)]) -> String {
    let mut out = String::new();
    let mut at = from;
    for &(s, e) in cut.iter().filter(|c| c.0 >= from && c.1 <= to) {
        if s < at {
            continue; // a duplicate of the range before
        }
        out.push_str(text.get(at..s).unwrap_or(""));
        at = e;
    }
    out.push_str(text.get(at.min(to)..to).unwrap_or(""));
    out
}

#[allow(clippy::too_many_arguments)]
fn sections_pattern(
    text: &str,
    pre: &Preprocessed,
    src: &str,
    func: Node,
    entry: Node,
    groups: &[(Node, Vec<Node>, Node)],
    exit: Node,
    reg: &str,
) -> MarkerRewrite {
    let span = Span::new(entry.start_byte(), entry.end_byte());
    if occurrences(func, src, reg) != 2 + groups.len() {
        return refused(
            span,
            WHAT,
            &format!("the region token `{reg}` is used elsewhere"),
        );
    }
    // Each statement of the pattern must stand alone on its lines, and
    // nothing but blanks may sit between a section's exit and the next
    // entry.
    let starts_alone = |n: Node| crate::fix::starts_line(text, n.start_byte());
    let ends_alone = |n: Node| {
        let e = n.end_byte();
        let le = line_end_with_newline(text, e);
        text.get(e..le).is_some_and(|t| t.trim().is_empty())
    };
    let mut pieces = vec![entry, exit];
    for (a, _, b) in groups {
        pieces.push(*a);
        pieces.push(*b);
    }
    if !pieces.iter().all(|p| starts_alone(*p) && ends_alone(*p)) {
        return refused(
            span,
            WHAT,
            "a region or section call shares its line with other code",
        );
    }
    // `#ifdef __CSA__` wrappers around the calls go with them (the OpenMP
    // must reach builds without __CSA__ too); a wrapper must hold nothing
    // but calls of the pattern
    let mut pieces_lines: Vec<(usize, usize)> = pieces
        .iter()
        .map(|p| {
            (
                line_start(text, p.start_byte()),
                line_end_with_newline(text, p.end_byte()),
            )
        })
        .collect();
    pieces_lines.sort_unstable();
    let mut guards: Vec<(usize, usize)> = Vec::new();
    let mut wrapper_of = |p: Node| -> Result<Option<(usize, usize)>, MarkerRewrite> {
        let Some((cond, branch)) = pre.enclosing_branch(p.start_byte()) else {
            return Ok(None);
        };
        // a wrapper of the calls, not a conditional around the function
        let (c0, c1) = cond.extent();
        if !branch.asserts_csa || c0 < func.start_byte() || c1 > func.end_byte() {
            return Ok(None);
        }
        let Some(endif) = cond.endif.filter(|_| cond.branches.len() == 1) else {
            return Err(refused(
                span,
                WHAT,
                "a region or section call is in an `#ifdef __CSA__` with an `#else`",
            ));
        };
        let (b0, b1) = branch.body;
        if !without(text, b0, b1, &pieces_lines).trim().is_empty() {
            return Err(refused(
                span,
                WHAT,
                "a region or section call shares its `#ifdef __CSA__` block with other code",
            ));
        }
        let open = (
            line_start(text, branch.directive.0),
            line_end_with_newline(text, branch.directive.1),
        );
        let close = (
            line_start(text, endif.0),
            line_end_with_newline(text, endif.0),
        );
        for g in [open, close] {
            if !guards.contains(&g) {
                guards.push(g);
            }
        }
        Ok(Some((open.0, close.1)))
    };
    let mut entry_wrapper = None;
    let mut exit_wrapper = None;
    for p in &pieces {
        match wrapper_of(*p) {
            Ok(w) => {
                if p.id() == entry.id() {
                    entry_wrapper = w;
                }
                if p.id() == exit.id() {
                    exit_wrapper = w;
                }
            }
            Err(r) => return r,
        }
    }
    guards.sort_unstable();
    // the text of a range without the wrappers' lines
    let unguarded = |from: usize, to: usize| without(text, from, to, &guards);
    for w in groups.windows(2) {
        let (a, b) = (
            line_end_with_newline(text, w[0].2.end_byte()),
            line_start(text, w[1].0.start_byte()),
        );
        if a > b || !unguarded(a, b).trim().is_empty() {
            return refused(span, WHAT, "there is code between two sections");
        }
    }
    let scalars = super::canonical::c_scalar_locals(func, entry, src);
    let mut writers: Vec<(String, usize)> = Vec::new();
    for (k, (_, body, _)) in groups.iter().enumerate() {
        for s in body {
            if s.kind() == "declaration" {
                return refused(
                    span,
                    WHAT,
                    "a section declares a variable, whose scope would shrink to the section's block",
                );
            }
            for w in super::canonical::c_written_in(*s, src) {
                if scalars.contains(&w) {
                    writers.push((w, k));
                }
            }
        }
    }
    for (name, k) in &writers {
        for (j, (_, body, _)) in groups.iter().enumerate() {
            if j != *k && body.iter().any(|s| occurrences(*s, src, name) > 0) {
                return refused(
                    span,
                    WHAT,
                    &format!("`{name}` is written in one section and used in another"),
                );
            }
        }
    }
    let eol = line_ending(text);
    let indent = indentation(text, entry.start_byte()).to_string();
    let mut new = String::new();
    new.push_str(&format!(
        "{indent}#pragma omp parallel sections{eol}{indent}{{{eol}"
    ));
    for (open, _, close) in groups {
        new.push_str(&format!("{indent}#pragma omp section{eol}{indent}{{{eol}"));
        // Everything between the entry's line and the exit's line, comments
        // included.
        let from = line_end_with_newline(text, open.end_byte());
        let to = line_start(text, close.start_byte());
        if from < to {
            new.push_str(&unguarded(from, to));
        }
        new.push_str(&format!("{indent}}}{eol}"));
    }
    new.push_str(&format!("{indent}}}{eol}"));
    let from = entry_wrapper.map_or(line_start(text, entry.start_byte()), |w| w.0);
    let to = exit_wrapper.map_or(line_end_with_newline(text, exit.end_byte()), |w| w.1);
    MarkerRewrite {
        marker: span,
        fix: Fix {
            kind: crate::diag::FixKind::Convert,
            title: format!(
                "Convert the region's {} sections to `#pragma omp parallel sections` (asserts the sections are independent)",
                groups.len()
            ),
            applicability: Applicability::Unsafe,
            edits: vec![Edit {
                span: Span::new(from, to),
                new_text: new,
            }],
        },
    }
}
