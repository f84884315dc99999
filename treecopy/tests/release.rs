//! `treecopy::release` frees what `tree_sitter::Tree`'s drop frees, no more
//! and no less: tree-sitter's allocator is replaced by one counting the
//! blocks alive, and each scenario is run twice from the same state, once
//! dropping the trees as the library does and once releasing them, and
//! must leave the same number of blocks alive. (Its own test binary:
//! tree-sitter's allocator is a global setting.)

#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::atomic::{AtomicIsize, Ordering};
use tree_sitter::{InputEdit, Parser, Point, Tree};

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn calloc(count: usize, size: usize) -> *mut c_void;
    fn realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

unsafe extern "C" fn counting_malloc(size: usize) -> *mut c_void {
    // SAFETY: C's malloc.
    let p = unsafe { malloc(size) };
    if !p.is_null() {
        LIVE.fetch_add(1, Ordering::SeqCst);
    }
    p
}

unsafe extern "C" fn counting_calloc(count: usize, size: usize) -> *mut c_void {
    // SAFETY: C's calloc.
    let p = unsafe { calloc(count, size) };
    if !p.is_null() {
        LIVE.fetch_add(1, Ordering::SeqCst);
    }
    p
}

unsafe extern "C" fn counting_realloc(p: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: C's realloc, of a block this allocator made (or null).
    let q = unsafe { realloc(p, size) };
    if p.is_null() && !q.is_null() {
        LIVE.fetch_add(1, Ordering::SeqCst);
    }
    q
}

unsafe extern "C" fn counting_free(p: *mut c_void) {
    if !p.is_null() {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
    // SAFETY: C's free, of a block this allocator made.
    unsafe { free(p) }
}

fn live() -> isize {
    LIVE.load(Ordering::SeqCst)
}

const FORTRAN: &str = "program p\n  implicit none\n  integer :: i, a(10)\n  !$omp parallel do\n  do i = 1, 10\n    a(i) = i * 2 &\n      + 1\n  end do\n  if (a(1) > 0) then\n    print *, 'x', \"y\"\n  end if\ncontains\n  subroutine s(x)\n    real :: x\n    x = x + 1.0\n  end subroutine s\nend program p\n";
const C: &str = "int f(int *a, int n) {\n  for (int i = 0; i < n; i++) {\n    a[i] = (i ? 1 : 2) + n;\n  }\n  return a[0];\n}\n";
const BROKEN: &str = "int f( {\n  for (;; { x = ; }\n";

/// How a scenario gets rid of its trees.
#[derive(Clone, Copy)]
enum Drop {
    Library,
    Release,
}

fn drop_tree(tree: Tree, how: Drop) {
    match how {
        Drop::Library => drop(tree),
        Drop::Release => treecopy::release(tree),
    }
}

/// Every node's kind and range, to check that a tree is intact.
fn summary(tree: &Tree) -> Vec<(u16, usize, usize)> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    loop {
        let n = cursor.node();
        out.push((n.kind_id(), n.start_byte(), n.end_byte()));
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                return out;
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
}

/// A parse of `text`, one clone of its tree released while the tree is
/// walked, an incremental reparse after an edit (a tree sharing most of
/// the first one's subtrees), released in the other order than made.
fn scenario(parser: &mut Parser, text: &str, how: Drop) {
    let tree = parser.parse(text, None).unwrap();
    let before = summary(&tree);
    drop_tree(tree.clone(), how);
    assert_eq!(summary(&tree), before);
    let mut edited = tree.clone();
    let at = text.len() / 2;
    let position = Point::new(0, at);
    edited.edit(&InputEdit {
        start_byte: at,
        old_end_byte: at,
        new_end_byte: at + 1,
        start_position: position,
        old_end_position: position,
        new_end_position: Point::new(0, at + 1),
    });
    let new_text = format!("{} {}", &text[..at], &text[at..]);
    let reparsed = parser.parse(&new_text, Some(&edited)).unwrap();
    drop_tree(edited, how);
    assert_eq!(summary(&tree), before);
    let reparsed_summary = summary(&reparsed);
    drop_tree(tree, how);
    assert_eq!(summary(&reparsed), reparsed_summary);
    drop_tree(reparsed, how);
}

#[test]
fn release_frees_what_the_library_frees() {
    // SAFETY: set before any tree-sitter object of this process exists
    // (this binary's one test); the functions allocate as C's do.
    unsafe {
        tree_sitter::set_allocator(
            Some(counting_malloc),
            Some(counting_calloc),
            Some(counting_realloc),
            Some(counting_free),
        );
    }
    let cases = [
        (csa_grammars::fortran_language(), FORTRAN),
        (csa_grammars::c_language(), C),
        (csa_grammars::c_language(), BROKEN),
    ];
    for (language, text) in cases {
        let mut parser = Parser::new();
        parser.set_language(&language).unwrap();
        // (a first run, so that the parser's own buffers have grown)
        scenario(&mut parser, text, Drop::Library);
        let start = live();
        scenario(&mut parser, text, Drop::Library);
        let by_library = live() - start;
        scenario(&mut parser, text, Drop::Release);
        let by_release = live() - start - by_library;
        assert_eq!(by_release, by_library, "{text}");
        assert!(by_library >= 0);
        // (and the counting allocator is the one in use: a tree's blocks
        // are counted, and go with it)
        let tree = parser.parse(text, None).unwrap();
        let with_tree = live();
        treecopy::release(tree);
        assert!(live() < with_tree, "{text}");
    }
}
