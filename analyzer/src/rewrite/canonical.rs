//! OpenMP canonical loop forms (a C `for` stepping an index by an
//! invariant amount, a Fortran counted `DO`) and the C scope facts the
//! sections pattern needs, read from the tree-sitter tree.

use super::sharing::Refusal;
use super::syntax::{identifiers_under, named_children, text, unparen};
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// Checks that a C `for` statement is in OpenMP canonical form: `init`
/// assigns or declares the index, the test compares it, the update steps it
/// by an invariant amount, and the body writes neither the index nor what
/// the test and step read.
pub fn c_canonical(for_node: Node, src: &str) -> Result<(), Refusal> {
    if for_node.kind() != "for_statement" {
        return Err(Refusal::new(
            "only `for` loops can become OpenMP loops (this is a while or do loop)",
        ));
    }
    let init = for_node.child_by_field_name("initializer");
    let index = match init {
        Some(d) if d.kind() == "declaration" => {
            let decls: Vec<Node> = {
                let mut c = d.walk();
                d.children_by_field_name("declarator", &mut c).collect()
            };
            match decls.as_slice() {
                [one] if one.kind() == "init_declarator" => match one
                    .child_by_field_name("declarator")
                    .filter(|x| x.kind() == "identifier")
                {
                    Some(id) => text(id, src).to_string(),
                    None => return Err(Refusal::new("the loop's index is not a plain variable")),
                },
                _ => {
                    return Err(Refusal::new(
                        "the loop's initializer does not declare exactly one index",
                    ))
                }
            }
        }
        Some(a) if a.kind() == "assignment_expression" => {
            let left = a.child_by_field_name("left").map(unparen);
            let op = a.child_by_field_name("operator").map(|o| text(o, src));
            match (left, op) {
                (Some(l), Some("=")) if l.kind() == "identifier" => text(l, src).to_string(),
                _ => {
                    return Err(Refusal::new(
                        "the loop's initializer is not `index = start`",
                    ))
                }
            }
        }
        _ => return Err(Refusal::new(
            "the loop has no `index = start` initializer, so it is not an OpenMP canonical loop",
        )),
    };
    let cond = for_node
        .child_by_field_name("condition")
        .map(unparen)
        .ok_or_else(|| Refusal::new("the loop has no test"))?;
    let cmp = cond
        .child_by_field_name("operator")
        .map(|o| text(o, src))
        .unwrap_or("");
    if cond.kind() != "binary_expression" || !matches!(cmp, "<" | "<=" | ">" | ">=" | "!=") {
        return Err(Refusal::new(
            "the loop's test is not a comparison of the index with a bound",
        ));
    }
    let (l, r) = (
        cond.child_by_field_name("left").map(unparen),
        cond.child_by_field_name("right").map(unparen),
    );
    let is_index =
        |n: Option<Node>| n.is_some_and(|n| n.kind() == "identifier" && text(n, src) == index);
    let bound = if is_index(l) {
        r
    } else if is_index(r) {
        l
    } else {
        return Err(Refusal::new("the loop's test does not compare the index"));
    };
    let update = for_node
        .child_by_field_name("update")
        .map(unparen)
        .ok_or_else(|| Refusal::new("the loop has no update"))?;
    let step: Option<Node> = match update.kind() {
        "update_expression" if is_index(update.child_by_field_name("argument").map(unparen)) => {
            None
        }
        "assignment_expression" if is_index(update.child_by_field_name("left").map(unparen)) => {
            let op = update
                .child_by_field_name("operator")
                .map(|o| text(o, src))
                .unwrap_or("");
            let right = update.child_by_field_name("right").map(unparen);
            match (op, right) {
                ("+=" | "-=", Some(r)) => Some(r),
                ("=", Some(r)) if r.kind() == "binary_expression" => {
                    let bop = r
                        .child_by_field_name("operator")
                        .map(|o| text(o, src))
                        .unwrap_or("");
                    let (a, b) = (
                        r.child_by_field_name("left").map(unparen),
                        r.child_by_field_name("right").map(unparen),
                    );
                    if bop == "+" && is_index(a) {
                        b
                    } else if bop == "+" && is_index(b) {
                        a
                    } else if bop == "-" && is_index(a) {
                        b
                    } else {
                        return Err(Refusal::new("the loop's update does not step the index"));
                    }
                }
                _ => return Err(Refusal::new("the loop's update does not step the index")),
            }
        }
        _ => return Err(Refusal::new("the loop's update does not step the index")),
    };
    let body = for_node
        .child_by_field_name("body")
        .ok_or_else(|| Refusal::new("the loop has no body"))?;
    let written = c_written_names(body, src);
    if written.contains(&index) {
        return Err(Refusal::new(format!(
            "the body writes the loop index `{index}`"
        )));
    }
    for n in bound.into_iter().chain(step) {
        for id in identifiers_under(n, &["identifier"]) {
            let name = text(id, src);
            if written.contains(name) {
                return Err(Refusal::new(format!(
                    "the body writes `{name}`, which the loop's bound or step reads"
                )));
            }
        }
        if !identifiers_under(
            n,
            &[
                "call_expression",
                "assignment_expression",
                "update_expression",
            ],
        )
        .is_empty()
        {
            return Err(Refusal::new(
                "the loop's bound or step calls a function or has side effects",
            ));
        }
    }
    Ok(())
}

/// Names assigned (`x = `, `x op= `, `x++`) anywhere under `n`.
pub(crate) fn c_written_in(n: Node, src: &str) -> BTreeSet<String> {
    c_written_names(n, src)
}

fn c_written_names(n: Node, src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for x in identifiers_under(n, &["assignment_expression", "update_expression"]) {
        let target = if x.kind() == "assignment_expression" {
            x.child_by_field_name("left")
        } else {
            x.child_by_field_name("argument")
        };
        if let Some(t) = target.map(unparen) {
            if t.kind() == "identifier" {
                out.insert(text(t, src).to_string());
            }
        }
    }
    out
}

/// Scalars local to a C function: parameters and non-`static`/`extern`
/// block-scope declarations outside `exclude` whose scope holds it, that
/// are not arrays.
fn c_locals(func: Node, exclude: Node, src: &str) -> BTreeSet<String> {
    let mut scalars = BTreeMap::new();
    let range = exclude.byte_range();
    for d in identifiers_under(func, &["declaration", "parameter_declaration"]) {
        let in_loop = range.contains(&d.start_byte());
        // A declaration outside the loop matters only when its scope (the
        // enclosing block, `for` statement or function) holds the loop.
        if !in_loop {
            let scope = {
                let mut p = d.parent();
                while let Some(x) = p {
                    if matches!(
                        x.kind(),
                        "compound_statement" | "for_statement" | "function_definition"
                    ) {
                        break;
                    }
                    p = x.parent();
                }
                p
            };
            if scope.is_some_and(|sc| !sc.byte_range().contains(&range.start)) {
                continue;
            }
        }
        let storage_static = named_children(d).iter().any(|c| {
            c.kind() == "storage_class_specifier" && matches!(text(*c, src), "static" | "extern")
        });
        let mut c = d.walk();
        for decl in d.children_by_field_name("declarator", &mut c) {
            let mut x = decl;
            let mut array = false;
            loop {
                match x.kind() {
                    "init_declarator"
                    | "pointer_declarator"
                    | "parenthesized_declarator"
                    | "attributed_declarator" => {
                        if x.kind() == "parenthesized_declarator" {
                            match x.named_child(0) {
                                Some(c) => x = c,
                                None => break,
                            }
                            continue;
                        }
                        match x.child_by_field_name("declarator") {
                            Some(c) => x = c,
                            None => break,
                        }
                    }
                    "array_declarator" => {
                        array = true;
                        match x.child_by_field_name("declarator") {
                            Some(c) => x = c,
                            None => break,
                        }
                    }
                    "function_declarator" => break,
                    _ => break,
                }
            }
            if x.kind() != "identifier" {
                continue;
            }
            let name = text(x, src).to_string();
            if in_loop {
                continue;
            }
            scalars.insert(name, !storage_static && !array);
        }
    }
    // `false` entries (arrays, statics) are not scalars.
    scalars.retain(|_, v| *v);
    scalars.into_keys().collect()
}

/// Scalars local to a C function that are visible at `at` (a statement of
/// its body).
pub(crate) fn c_scalar_locals(func: Node, at: Node, src: &str) -> BTreeSet<String> {
    c_locals(func, at, src)
}

// ---------------------------------------------------------- Fortran ----

fn fkey(s: &str) -> String {
    s.to_ascii_lowercase()
}

/// The statements of a `do_loop` node (between its `do` and `end do`).
fn do_body<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    named_children(n)
        .into_iter()
        .filter(|c| {
            !matches!(
                c.kind(),
                "do_statement"
                    | "end_do_loop_statement"
                    | "end_do_label_loop_statement"
                    | "block_label_start_expression"
                    | "comment"
            )
        })
        .collect()
}

/// Checks a Fortran `DO` for the OpenMP rewrite: counted, no `EXIT` out of
/// it, the body writes neither the index nor the bounds.
pub fn fortran_canonical(do_loop: Node, src: &str) -> Result<(), Refusal> {
    let stmt = named_children(do_loop)
        .into_iter()
        .find(|c| c.kind() == "do_statement")
        .ok_or_else(|| Refusal::new("not a DO loop"))?;
    let control = named_children(stmt)
        .into_iter()
        .find(|c| c.kind() == "loop_control_expression")
        .ok_or_else(|| {
            Refusal::new("only counted DO loops (`do i = a, b`) can become OpenMP loops")
        })?;
    let parts = named_children(control);
    let index = parts
        .first()
        .filter(|p| p.kind() == "identifier")
        .ok_or_else(|| Refusal::new("the DO loop's index is not a plain variable"))?;
    let index_name = text(*index, src).to_string();
    let written = fortran_written_names(do_loop, src);
    if written.contains(&fkey(&index_name)) {
        return Err(Refusal::new(format!(
            "the body writes the loop index `{index_name}`"
        )));
    }
    for p in parts.iter().skip(1) {
        for id in identifiers_under(*p, &["identifier"]) {
            if written.contains(&fkey(text(id, src))) {
                return Err(Refusal::new(format!(
                    "the body writes `{}`, which the loop's bounds read",
                    text(id, src)
                )));
            }
        }
    }
    Ok(())
}

/// Names assigned (`x = `) in statements under `n`, excluding the loop's
/// own control.
fn fortran_written_names(n: Node, src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for body in do_body(n) {
        for a in identifiers_under(body, &["assignment_statement", "loop_control_expression"]) {
            let target = if a.kind() == "assignment_statement" {
                a.child_by_field_name("left")
            } else {
                a.named_child(0)
            };
            if let Some(t) = target.filter(|t| t.kind() == "identifier") {
                out.insert(fkey(text(t, src)));
            }
        }
    }
    out
}
