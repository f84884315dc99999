//! Trees parsed into heaps of their own (`treecopy::heap`), with the
//! heaps installed as the binaries install them: every tree must be the
//! tree a plain parse makes, whatever order trees sharing a heap are
//! dropped in, after cancelled parses, beside plain trees and on several
//! threads at once. (A tree read after its heap was destroyed, or a block
//! given to the wrong allocator, crashes these tests or makes the copies
//! differ.)

use std::sync::Once;
use tree_sitter::{InputEdit, Language, Node, Point};
use treecopy::{ParsedTree, RawNode};

/// Installs the heaps before this binary's first parse.
fn setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(treecopy::install);
}

const C: &str = "int g;\nstruct s { int a; };\nint f(int *a, int n) {\n  for (int i = 0; i < n; i++) { a[i] = (i ? g : 2) + sizeof(struct s); }\n  return a[0];\n}\n";
const FORTRAN: &str = "subroutine s(a, n)\n  integer :: n, i\n  real :: a(n)\n  !$omp parallel do\n  do i = 1, n\n    a(i) = a(i) * 2.0 ! twice\n  end do\nend subroutine\n";

fn c() -> Language {
    csa_grammars::c_language()
}

fn fortran() -> Language {
    csa_grammars::fortran_language()
}

fn copy(root: Node<'_>) -> Vec<RawNode> {
    let mut out = Vec::new();
    assert!(treecopy::copy_all(root, &mut out));
    out
}

/// A plain parse's copy (the parser and tree made and dropped as usual).
fn plain(language: &Language, text: &str) -> Vec<RawNode> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(language).unwrap();
    let tree = parser.parse(text, None).unwrap();
    copy(tree.root_node())
}

/// Parses made to reuse the memory freed so far (mimalloc gives freed
/// pages to the next heaps): a tree still reading memory of a destroyed
/// heap then reads these trees' nodes.
fn overwrite_freed() -> Vec<ParsedTree> {
    let other = "double h(double x) { while (x > 1.0) { x = x / 2.0 - 1.0; } return x * x; }\n";
    (0..8)
        .map(|_| parse(&c(), &other.repeat(4), None))
        .collect()
}

fn parse(language: &Language, text: &str, old: Option<&ParsedTree>) -> ParsedTree {
    ParsedTree::parse(language, text.as_bytes(), old, None, &mut |_| false).unwrap()
}

#[test]
fn a_tree_in_its_own_heap_is_the_plain_tree() {
    setup();
    for (language, text) in [(c(), C), (fortran(), FORTRAN)] {
        let want = plain(&language, text);
        for _ in 0..200 {
            let tree = parse(&language, text, None);
            assert!(tree.in_own_heap());
            assert_eq!(copy(tree.root_node()), want);
            // a cursor allocates outside the heap, and is freed before it
            let mut cursor = tree.root_node().walk();
            assert!(cursor.goto_first_child());
            assert!(!tree.root_node().to_sexp().is_empty());
        }
    }
}

/// An edit inserting `what` at `at` (on the first line).
fn insertion(text: &str, at: usize, what: &str) -> (String, InputEdit) {
    let mut new = text.to_string();
    new.insert_str(at, what);
    let edit = InputEdit {
        start_byte: at,
        old_end_byte: at,
        new_end_byte: at + what.len(),
        start_position: Point::new(0, at),
        old_end_position: Point::new(0, at),
        new_end_position: Point::new(0, at + what.len()),
    };
    (new, edit)
}

#[test]
fn trees_sharing_a_heap_can_be_dropped_in_any_order() {
    setup();
    let (typed, edit) = insertion(C, 4, "x, ");
    let want_old = plain(&c(), C);
    let want_new = plain(&c(), &typed);
    for order in 0..3 {
        let old = parse(&c(), C, None);
        let edited = old.edited(&[edit]);
        let new = parse(&c(), &typed, Some(&edited));
        assert_eq!(copy(new.root_node()), want_new);
        match order {
            0 => {
                drop(old);
                drop(edited);
                let _noise = overwrite_freed();
                assert_eq!(copy(new.root_node()), want_new);
            }
            1 => {
                drop(new);
                drop(edited);
                let _noise = overwrite_freed();
                assert_eq!(copy(old.root_node()), want_old);
            }
            _ => {
                drop(old);
                drop(new);
                let _noise = overwrite_freed();
                assert_eq!(copy(edited.root_node()).len(), want_old.len());
            }
        }
    }
}

#[test]
fn a_cancelled_parse_leaves_the_heap_usable() {
    setup();
    let text = "int f(int x) { return x + 1; }\n".repeat(2_000);
    let want = plain(&c(), &text);
    let mut calls = 0;
    let cancelled = ParsedTree::parse(&c(), text.as_bytes(), None, None, &mut |_| {
        calls += 1;
        true
    });
    assert!(cancelled.is_none());
    assert!(calls > 0);
    // a parse from a tree whose parser was cancelled once
    let first = parse(&c(), &text, None);
    let stopped = ParsedTree::parse(&c(), text.as_bytes(), Some(&first), None, &mut |_| true);
    assert!(stopped.is_none());
    let again = parse(&c(), &text, Some(&first.edited(&[])));
    assert_eq!(copy(again.root_node()), want);
    assert_eq!(copy(first.root_node()), want);
}

#[test]
fn ranges_are_parsed_alone() {
    setup();
    let text = format!("{FORTRAN}{FORTRAN}");
    let half = FORTRAN.len();
    let lines = FORTRAN.lines().count();
    let range = tree_sitter::Range {
        start_byte: half,
        end_byte: text.len(),
        start_point: Point::new(lines, 0),
        end_point: Point::new(2 * lines, 0),
    };
    let tree = ParsedTree::parse(
        &fortran(),
        text.as_bytes(),
        None,
        Some(&[range]),
        &mut |_| false,
    )
    .unwrap();
    let root = tree.root_node();
    assert_eq!(root.named_child_count(), 1);
    assert_eq!(root.named_child(0).unwrap().start_byte(), half);
}

#[test]
fn plain_trees_and_heap_trees_mix() {
    setup();
    let want = plain(&fortran(), FORTRAN);
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&fortran()).unwrap();
    let outside = parser.parse(FORTRAN, None).unwrap();
    let wrapped = ParsedTree::from_tree(parser.parse(FORTRAN, None).unwrap());
    assert!(!wrapped.in_own_heap());
    let inside = parse(&fortran(), FORTRAN, None);
    // the plain parser keeps working between heap parses
    let again = parser.parse(FORTRAN, Some(&outside)).unwrap();
    drop(inside);
    let _noise = overwrite_freed();
    assert_eq!(copy(again.root_node()), want);
    assert_eq!(copy(outside.root_node()), want);
    assert_eq!(copy(wrapped.root_node()), want);
}

#[test]
fn threads_parse_into_heaps_of_their_own() {
    setup();
    let want_c = plain(&c(), C);
    let want_f = plain(&fortran(), FORTRAN);
    std::thread::scope(|s| {
        for t in 0..4 {
            let (want_c, want_f) = (&want_c, &want_f);
            s.spawn(move || {
                for i in 0..100 {
                    let (language, text, want) = if (i + t) % 2 == 0 {
                        (c(), C, want_c)
                    } else {
                        (fortran(), FORTRAN, want_f)
                    };
                    let tree = parse(&language, text, None);
                    // nodes may be read on another thread
                    let root = tree.root_node();
                    let copied = std::thread::scope(|s2| s2.spawn(move || copy(root)).join());
                    assert_eq!(&copied.unwrap(), want);
                }
            });
        }
    });
}
