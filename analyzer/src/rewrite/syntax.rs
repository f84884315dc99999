//! Small helpers over tree-sitter nodes for the rewrite's syntactic parts
//! (`canonical.rs`).

use tree_sitter::Node;

pub(super) fn text<'a>(n: Node, src: &'a str) -> &'a str {
    src.get(n.byte_range()).unwrap_or("")
}

pub(super) fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

pub(super) fn unparen(mut n: Node) -> Node {
    while n.kind() == "parenthesized_expression" {
        match n.named_child(0) {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}

/// Every identifier under `n` (iterative), filtered by `keep`.
pub(super) fn identifiers_under<'t>(n: Node<'t>, kinds: &[&str]) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if kinds.contains(&x.kind()) {
            out.push(x);
        }
        let mut c = x.walk();
        for ch in x.children(&mut c) {
            stack.push(ch);
        }
    }
    out
}
