//! Trees whose memory is dropped in one step: tree-sitter parses into a
//! heap of its own, released whole when the tree is dropped.
//!
//! Dropping a `tree_sitter::Tree` walks every node to release it (each
//! subtree reference-counted, each freed on its own): on NPB that walk was
//! 1.8% of a whole `csa-lint` run's instructions, more of its time (it
//! waits on memory). A [`ParsedTree`] is parsed by a parser made for it,
//! while every allocation tree-sitter makes goes to a mimalloc heap made
//! for it (`mi_heap_new`); dropping the tree forgets the tree and the
//! parser and destroys the heap (`mi_heap_destroy`), which returns its
//! pages without visiting a block. Trees made from one another
//! ([`ParsedTree::edited`], a reparse with `old`) share the heap, released
//! with the last of them.
//!
//! This needs tree-sitter's allocator to be this module's
//! ([`install`]). Without it (the tests, the benchmark's parse-only
//! figure), a [`ParsedTree`] is a plain tree, dropped as one.
//!
//! Why it is sound:
//! * Only a [`ParsedTree`]'s own objects live in its heap. The heap is
//!   the thread's *active* one only while a method of this module runs
//!   tree-sitter on them (a parse, a clone, an edit), and the parse's
//!   progress callback, the one outside code that runs meanwhile, runs
//!   with no active heap. Anything else tree-sitter allocates, during the
//!   tree's life or not (a cursor on it, another parser, another tree), is
//!   allocated as before.
//! * Nothing of the heap outlives it: the tree and the parser are owned
//!   by the [`ParsedTree`]s sharing the heap, which hand out only borrows
//!   (`Node<'_>`, whose cursors borrow the tree in turn), never the
//!   `tree_sitter::Tree` (its `clone` would share the heap's subtrees).
//! * A heap is used by the thread that made it only (mimalloc's rule):
//!   a [`ParsedTree`] is not `Send`.
//! * Blocks from another allocator are never given to mimalloc: the free
//!   function asks mimalloc whether a block is its own unless the
//!   process's `malloc` is mimalloc's (checked once, by [`install`]).

use libmimalloc_sys as mi;
use std::cell::Cell;
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::rc::Rc;
use std::sync::Once;
use tree_sitter::{InputEdit, Language, Node, ParseOptions, ParseState, Parser, Range, Tree};

thread_local! {
    /// The heap tree-sitter allocates in on this thread; null: the
    /// default (mimalloc's heap of the thread).
    static ACTIVE: Cell<*mut mi::mi_heap_t> = const { Cell::new(std::ptr::null_mut()) };
}

/// Whether [`install`] has run: parses then use heaps of their own.
static INSTALLED: Once = Once::new();

/// Makes tree-sitter allocate through this module, so that a
/// [`ParsedTree`] parses into a heap of its own. Call it at the start of
/// `main`, before any thread uses tree-sitter (tree-sitter keeps its
/// allocator in plain global variables); later calls do nothing.
/// Allocations tree-sitter made before stay valid: they are freed by the
/// allocator that made them.
pub fn install() {
    INSTALLED.call_once(|| {
        // SAFETY: a `malloc` of one byte, freed just after, by the same
        // allocator; `mi_is_in_heap_region` reads no memory of the block.
        let malloc_is_mimalloc = unsafe {
            let p = libc_malloc(1);
            let ours = !p.is_null() && mi::mi_is_in_heap_region(p);
            libc_free(p);
            ours
        };
        let free: unsafe extern "C" fn(*mut c_void) = if malloc_is_mimalloc {
            ts_free_mimalloc
        } else {
            ts_free_any
        };
        let realloc: unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void = if malloc_is_mimalloc
        {
            ts_realloc_mimalloc
        } else {
            ts_realloc_any
        };
        // SAFETY: the functions allocate and free as C's `malloc` family
        // does; the blocks tree-sitter holds from its earlier allocator
        // (`malloc`) are freed or resized by that allocator (`ts_free_any`
        // and `ts_realloc_any` ask mimalloc whether a block is its own,
        // unless `malloc` is mimalloc's). `main` calls this before other
        // threads use tree-sitter.
        unsafe {
            tree_sitter::set_allocator(Some(ts_malloc), Some(ts_calloc), Some(realloc), Some(free));
        }
    });
}

unsafe extern "C" {
    #[link_name = "malloc"]
    fn libc_malloc(size: usize) -> *mut c_void;
    #[link_name = "realloc"]
    fn libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    #[link_name = "free"]
    fn libc_free(p: *mut c_void);
}

fn active() -> *mut mi::mi_heap_t {
    ACTIVE.with(Cell::get)
}

unsafe extern "C" fn ts_malloc(size: usize) -> *mut c_void {
    let heap = active();
    // SAFETY: `heap` is null or a live heap of this thread (`Active`).
    unsafe {
        if heap.is_null() {
            mi::mi_malloc(size)
        } else {
            mi::mi_heap_malloc(heap, size)
        }
    }
}

unsafe extern "C" fn ts_calloc(count: usize, size: usize) -> *mut c_void {
    let heap = active();
    // SAFETY: as `ts_malloc`.
    unsafe {
        if heap.is_null() {
            mi::mi_calloc(count, size)
        } else {
            mi::mi_heap_calloc(heap, count, size)
        }
    }
}

/// `realloc` when every block tree-sitter holds is mimalloc's.
unsafe extern "C" fn ts_realloc_mimalloc(p: *mut c_void, size: usize) -> *mut c_void {
    let heap = active();
    // SAFETY: `p` is null or a block of mimalloc's; `heap` as `ts_malloc`.
    unsafe {
        if heap.is_null() {
            mi::mi_realloc(p, size)
        } else {
            mi::mi_heap_realloc(heap, p, size)
        }
    }
}

/// `realloc` when some blocks may be another allocator's.
unsafe extern "C" fn ts_realloc_any(p: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: a block that is not mimalloc's is the system allocator's,
    // resized by it; else as `ts_realloc_mimalloc`.
    unsafe {
        if !p.is_null() && !mi::mi_is_in_heap_region(p) {
            libc_realloc(p, size)
        } else {
            ts_realloc_mimalloc(p, size)
        }
    }
}

/// `free` when every block tree-sitter holds is mimalloc's.
unsafe extern "C" fn ts_free_mimalloc(p: *mut c_void) {
    // SAFETY: `p` is null or a live block of mimalloc's (of any heap).
    unsafe { mi::mi_free(p) }
}

/// `free` when some blocks may be another allocator's.
unsafe extern "C" fn ts_free_any(p: *mut c_void) {
    // SAFETY: as `ts_realloc_any`.
    unsafe {
        if !p.is_null() && !mi::mi_is_in_heap_region(p) {
            libc_free(p)
        } else {
            mi::mi_free(p)
        }
    }
}

/// Makes `heap` the active one until dropped (then the previous one is).
struct Active(*mut mi::mi_heap_t);

impl Active {
    fn set(heap: *mut mi::mi_heap_t) -> Active {
        Active(ACTIVE.with(|a| a.replace(heap)))
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(self.0));
    }
}

/// A heap and the parser that parses into it, shared by the trees made in
/// it; destroyed (the parser forgotten) with the last of them.
struct Heap {
    heap: *mut mi::mi_heap_t,
    parser: ManuallyDrop<std::cell::RefCell<Parser>>,
}

impl Drop for Heap {
    fn drop(&mut self) {
        // The parser's memory is the heap's: it goes with it, unvisited.
        // SAFETY: the last owner of the heap drops it on its thread
        // (`ParsedTree` is not `Send`); nothing made in it is left (the
        // trees that share it are forgotten before they release it).
        unsafe { mi::mi_heap_destroy(self.heap) };
    }
}

/// A tree parsed by tree-sitter, whose memory is released in one step
/// when heaps are installed (see the module's documentation); otherwise
/// a plain tree. Its nodes are borrowed from it ([`ParsedTree::root_node`]).
pub struct ParsedTree {
    tree: ManuallyDrop<Tree>,
    /// `None`: a plain tree (dropped as `Tree` drops).
    heap: Option<Rc<Heap>>,
}

impl Drop for ParsedTree {
    fn drop(&mut self) {
        if self.heap.is_none() {
            // SAFETY: dropped once, here.
            unsafe { ManuallyDrop::drop(&mut self.tree) };
        }
        // else: the tree's memory is the heap's, released with it when
        // `self.heap` is the last owner.
    }
}

impl ParsedTree {
    /// Parses `text` with a parser for `language` made for this tree (the
    /// whole text, or the `ranges` of it), reusing what `old` (a tree of
    /// an earlier text, edited to match: [`ParsedTree::edited`]) holds of
    /// unchanged regions. `progress` may stop the parse (true: stop);
    /// `None` when it did, or when the language or the ranges are refused.
    pub fn parse(
        language: &Language,
        text: &[u8],
        old: Option<&ParsedTree>,
        ranges: Option<&[Range]>,
        progress: &mut dyn FnMut(&ParseState) -> bool,
    ) -> Option<ParsedTree> {
        let heap = match old {
            Some(old) => old.heap.clone(),
            None if INSTALLED.is_completed() => Some(Rc::new(Heap::new(language)?)),
            None => None,
        };
        let tree = match &heap {
            Some(h) => {
                let mut parser = h.parser.try_borrow_mut().ok()?;
                let _active = Active::set(h.heap);
                parse_with(&mut parser, text, old, ranges, progress)
            }
            None => {
                let mut parser = Parser::new();
                parser.set_language(language).ok()?;
                parse_with(&mut parser, text, old, ranges, progress)
            }
        }?;
        Some(ParsedTree {
            tree: ManuallyDrop::new(tree),
            heap,
        })
    }

    /// A plain tree (a parse made elsewhere), dropped as `Tree` drops.
    pub fn from_tree(tree: Tree) -> ParsedTree {
        ParsedTree {
            tree: ManuallyDrop::new(tree),
            heap: None,
        }
    }

    /// The root node.
    pub fn root_node(&self) -> Node<'_> {
        self.tree.root_node()
    }

    /// A copy of this tree with `edits` applied (`Tree::edit`), for a
    /// reparse of the edited text.
    pub fn edited(&self, edits: &[InputEdit]) -> ParsedTree {
        let _active = self.heap.as_ref().map(|h| Active::set(h.heap));
        let mut tree = Tree::clone(&self.tree);
        for e in edits {
            tree.edit(e);
        }
        ParsedTree {
            tree: ManuallyDrop::new(tree),
            heap: self.heap.clone(),
        }
    }

    /// Whether the tree lives in a heap of its own (heaps installed).
    pub fn in_own_heap(&self) -> bool {
        self.heap.is_some()
    }
}

/// `parser.parse_with_options` of `text` (or its `ranges`), from `old`;
/// `progress` runs with no active heap.
fn parse_with(
    parser: &mut Parser,
    text: &[u8],
    old: Option<&ParsedTree>,
    ranges: Option<&[Range]>,
    progress: &mut dyn FnMut(&ParseState) -> bool,
) -> Option<Tree> {
    parser.set_included_ranges(ranges.unwrap_or(&[])).ok()?;
    let mut outside = |state: &ParseState| {
        let _default = Active::set(std::ptr::null_mut());
        progress(state)
    };
    let tree = parser.parse_with_options(
        &mut |i, _| text.get(i..).unwrap_or_default(),
        old.map(|o| &*o.tree),
        Some(ParseOptions::new().progress_callback(&mut outside)),
    );
    if tree.is_none() {
        // a cancelled parse keeps its state for a resumption: drop it
        parser.reset();
    }
    tree
}

impl Heap {
    /// A new heap, and a parser for `language` made in it.
    fn new(language: &Language) -> Option<Heap> {
        // SAFETY: makes a heap owned by this thread (null when out of
        // memory).
        let heap = unsafe { mi::mi_heap_new() };
        if heap.is_null() {
            return None;
        }
        let parser = {
            let _active = Active::set(heap);
            let mut parser = Parser::new();
            let ok = parser.set_language(language).is_ok();
            (ok, parser)
        };
        let heap = Heap {
            heap,
            parser: ManuallyDrop::new(std::cell::RefCell::new(parser.1)),
        };
        // (on failure the heap is destroyed with the parser unvisited)
        parser.0.then_some(heap)
    }
}
