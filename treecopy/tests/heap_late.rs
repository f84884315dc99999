//! Heaps installed after tree-sitter allocated (`treecopy::install`
//! called late): what tree-sitter allocated before is freed by the
//! allocator that made it. This binary does not use mimalloc as its
//! `malloc` unless the workspace's build links mimalloc's override, so
//! the check of whose block is freed runs here (a block freed by the
//! wrong allocator crashes the test).

use treecopy::ParsedTree;

const C: &str =
    "int f(int *a, int n) {\n  for (int i = 0; i < n; i++) { a[i] = i; }\n  return a[0];\n}\n";

#[test]
fn trees_made_before_the_heaps_are_installed_are_freed_as_before() {
    let language = csa_grammars::c_language();
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&language).unwrap();
    let before = parser.parse(C, None).unwrap();
    treecopy::install();
    // the old parser grows and frees its blocks after the switch
    let again = parser.parse(C, Some(&before)).unwrap();
    let mut edited = before.clone();
    edited.edit(&tree_sitter::InputEdit {
        start_byte: 0,
        old_end_byte: 0,
        new_end_byte: 1,
        start_position: tree_sitter::Point::new(0, 0),
        old_end_position: tree_sitter::Point::new(0, 0),
        new_end_position: tree_sitter::Point::new(0, 1),
    });
    let fresh = ParsedTree::parse(&language, C.as_bytes(), None, None, &mut |_| false).unwrap();
    assert!(fresh.in_own_heap());
    assert_eq!(fresh.root_node().to_sexp(), again.root_node().to_sexp());
    drop(before);
    drop(edited);
    drop(parser);
    drop(fresh);
    assert!(!again.root_node().has_error());
}
