//! A fast pre-order copy of a tree-sitter subtree into an array.
//!
//! The analyzer's front ends read every node of the functions they lower,
//! several times, so they work on a flat copy of the tree
//! (`analyzer::frontend::flat`). Made with tree-sitter's cursor, that copy
//! cost about a tenth of a whole run on annotated code (NPB): the cursor
//! recomputes each node from its stack at every step, and each answer
//! (kind, range, field) is a call of its own. [`copy`] makes the same copy
//! with one walk over tree-sitter's subtrees in C (`csrc/flat_copy.c`,
//! compiled against the internal headers of the tree-sitter library this
//! crate links; `Cargo.lock` pins its version), several times faster.
//!
//! [`release`] drops a tree faster than `tree_sitter::Tree`'s drop
//! (`csrc/release.c`), for the front ends, which are done with a tree once
//! it is lowered.
//!
//! This is the workspace's one crate with unsafe code: the FFI to that
//! walker and that release. Its API is safe; the analyzer's tests check the copy against
//! the cursor's on every fixture.

#![allow(unsafe_code)]

use tree_sitter::{Node, Tree};

/// No node (a parent or a next sibling).
pub const NONE: u32 = u32::MAX;
/// [`RawNode::flags`]: the node is named.
pub const NAMED: u8 = 1;
/// [`RawNode::flags`]: the node is an ERROR node.
pub const ERROR: u8 = 2;
/// [`RawNode::flags`]: the node is MISSING.
pub const MISSING: u8 = 4;
/// [`RawNode::flags`]: the node has children that were not copied.
pub const PRUNED: u8 = 8;
/// [`RawNode::flags`]: the node is or holds an ERROR or MISSING node
/// (`Node::has_error`), also below a pruned node.
pub const HAS_ERROR: u8 = 16;

/// One copied node: what `tree_sitter::Node` answers of it, and its
/// place in the copy. `#[repr(C)]`: the C walker writes these
/// (`CsaFlatNode`, the same fields in the same order; the sizes are
/// checked by a test).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct RawNode {
    pub start: u32,
    pub end: u32,
    /// Index of the parent in the copy, or [`NONE`] (the root).
    pub parent: u32,
    /// Index of the next sibling, or [`NONE`].
    pub next: u32,
    /// Number of children copied.
    pub count: u32,
    /// `Node::kind_id`.
    pub kind: u16,
    /// Field id in the parent (`TreeCursor::field_id`); 0: none (always
    /// for the root).
    pub field: u16,
    /// [`NAMED`], [`ERROR`], [`MISSING`], [`PRUNED`], [`HAS_ERROR`].
    pub flags: u8,
}

/// Copies `root` and its descendants into `out` (emptied first), in
/// pre-order, except the children of the nodes for which
/// `descend(node, depth)` is false (the root has depth 0): those are
/// copied as leaves, flagged [`PRUNED`] when they had children. `descend`
/// is asked about every node copied, in pre-order. Node `i`'s first
/// child is `i + 1`. Returns false when the copy could not be made
/// (memory ran out); `out` is then empty, and `descend` may have been
/// asked about some nodes.
pub fn copy(
    root: Node<'_>,
    out: &mut Vec<RawNode>,
    descend: &mut dyn FnMut(Node<'_>, usize) -> bool,
) -> bool {
    copy_with(
        root,
        out,
        Some(&mut |n, depth, _| Answer::from(descend(n, depth))),
        None,
    )
}

/// What `descend` answers about a node: whether to copy its children.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Answer {
    /// Copy the node as a leaf ([`PRUNED`] when it has children).
    Prune = 0,
    /// Copy its children, asking about each.
    Descend = 1,
    /// Copy its whole subtree without asking about any node in it (the
    /// walker makes no `Node` for them).
    DescendUnasked = 2,
}

impl From<bool> for Answer {
    fn from(descend: bool) -> Answer {
        if descend {
            Answer::Descend
        } else {
            Answer::Prune
        }
    }
}

/// [`copy`] with a three-way [`Answer`] (`descend(node, depth, index)`,
/// `index`: the node's in the copy).
pub fn copy_planned<'t>(
    root: Node<'t>,
    out: &mut Vec<RawNode>,
    descend: &mut DescendFn<'_, 't>,
) -> bool {
    copy_with(root, out, Some(descend), None)
}

/// [`copy`] of every node: no question asked per node (the walker makes
/// no `Node` for one), so faster.
pub fn copy_all(root: Node<'_>, out: &mut Vec<RawNode>) -> bool {
    copy_with(root, out, None, None)
}

/// [`copy`] asking `descend(node, depth, index)` (`index`: the node's in
/// the copy) only about the nodes whose `Node::kind_id` is in `kinds`; the
/// children of the others are copied. The walker makes a `Node` only for
/// the nodes it asks about, so this costs nearly what [`copy_all`] does.
pub fn copy_asking<'t>(
    root: Node<'t>,
    out: &mut Vec<RawNode>,
    kinds: &[u16],
    descend: &mut DescendFn<'_, 't>,
) -> bool {
    copy_with(root, out, Some(descend), Some(kinds))
}

fn copy_with<'t>(
    root: Node<'t>,
    out: &mut Vec<RawNode>,
    descend: Option<&mut DescendFn<'_, 't>>,
    kinds: Option<&[u16]>,
) -> bool {
    out.clear();
    let Ok(capacity) = u32::try_from(root.descendant_count()) else {
        return false;
    };
    if capacity == NONE {
        return false;
    }
    out.reserve(capacity as usize);
    let mut always = |_: Node<'t>, _: usize, _: u32| Answer::Descend;
    let (descend, callback): (&mut DescendFn<'_, 't>, Callback) = match descend {
        Some(d) => (d, Some(trampoline)),
        None => (&mut always, None),
    };
    let mut ctx = Descend {
        descend,
        panic: None,
    };
    // SAFETY: `out` has room for `capacity` nodes, the most the walker
    // writes (`descendant_count` counts a subtree's visible descendants
    // and itself, and the walker copies no other node); `RawNode` is
    // `CsaFlatNode` (field for field, `repr(C)`); `ctx` outlives the call,
    // and `trampoline` reads it as the `Descend` it is; the node belongs
    // to a tree that outlives the call (`root`'s); `kinds` is NULL or
    // points at `kind_count` kinds, alive during the call.
    let len = unsafe {
        csa_flat_copy(
            root.into_raw(),
            out.as_mut_ptr(),
            capacity,
            callback,
            (&raw mut ctx).cast(),
            kinds.map_or(std::ptr::null(), |k| k.as_ptr()),
            kinds.map_or(0, |k| u32::try_from(k.len()).unwrap_or(u32::MAX)),
        )
    };
    if let Some(payload) = ctx.panic.take() {
        std::panic::resume_unwind(payload);
    }
    if len > capacity {
        return false;
    }
    // SAFETY: the walker initialised the first `len` nodes (`len` is at
    // most the capacity).
    unsafe { out.set_len(len as usize) };
    true
}

/// Drops `tree` as `tree_sitter::Tree`'s drop does, faster
/// (`csrc/release.c`): a subtree held only by its parent is freed without
/// the atomic decrement of its reference count that the library makes for
/// every subtree, and the counts of a node's children are loaded together.
/// On NPB the release of the trees was 3.5% of a whole run's time.
pub fn release(tree: Tree) {
    let raw = tree.into_raw();
    // SAFETY: `raw` is the tree `into_raw` gave up, deleted once, here;
    // the C side frees exactly what `ts_tree_delete` frees, and subtrees
    // another tree shares (a count above 1) only lose this tree's
    // reference, atomically.
    unsafe { csa_tree_delete(raw) };
}

/// A caller's question: copy the children of this node (of the tree
/// `'t`, at this depth, with this index in the copy)?
pub type DescendFn<'f, 't> = dyn FnMut(Node<'t>, usize, u32) -> Answer + 'f;

/// `CsaDescend`, nullable: `None` is C's NULL (copy every node).
type Callback =
    Option<extern "C" fn(*mut std::ffi::c_void, tree_sitter::ffi::TSNode, u32, u32) -> u8>;

/// What `csa_flat_copy` calls back with: the caller's `descend`, and the
/// panic it raised (kept, not unwound through C; [`copy`] resumes it).
struct Descend<'f, 't> {
    descend: &'f mut DescendFn<'f, 't>,
    panic: Option<Box<dyn std::any::Any + Send>>,
}

/// `CsaDescend`: asks the caller's `descend` about a node.
extern "C" fn trampoline(
    ctx: *mut std::ffi::c_void,
    node: tree_sitter::ffi::TSNode,
    depth: u32,
    index: u32,
) -> u8 {
    // SAFETY: `ctx` is the `Descend` that `copy` passed, alive and not
    // otherwise borrowed while the walker runs.
    let ctx = unsafe { &mut *ctx.cast::<Descend<'_, '_>>() };
    if ctx.panic.is_some() {
        return Answer::Prune as u8;
    }
    // SAFETY: the walker passes nodes of the tree being copied, made by
    // `ts_node_new` as the library's own functions make them.
    let node = unsafe { Node::from_raw(node) };
    let descend = &mut ctx.descend;
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        descend(node, depth as usize, index)
    })) {
        Ok(answer) => answer as u8,
        Err(payload) => {
            ctx.panic = Some(payload);
            Answer::Prune as u8
        }
    }
}

unsafe extern "C" {
    /// `csrc/flat_copy.c`: copies `root` into `out` (room for `capacity`
    /// nodes); the number copied, or `u32::MAX` when memory ran out.
    fn csa_flat_copy(
        root: tree_sitter::ffi::TSNode,
        out: *mut RawNode,
        capacity: u32,
        descend: Callback,
        ctx: *mut std::ffi::c_void,
        kinds: *const u16,
        kind_count: u32,
    ) -> u32;
    /// `csrc/release.c`: deletes a tree as `ts_tree_delete` does.
    fn csa_tree_delete(tree: *mut tree_sitter::ffi::TSTree);
    /// `sizeof(CsaFlatNode)`.
    #[cfg(test)]
    fn csa_flat_node_size() -> u32;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_node_is_the_rust_node() {
        // SAFETY: a function of no arguments returning a constant.
        let c = unsafe { csa_flat_node_size() } as usize;
        assert_eq!(c, std::mem::size_of::<RawNode>());
        assert_eq!(std::mem::align_of::<RawNode>(), 4);
    }

    // (That the copy equals a cursor's is tested on every fixture by the
    // analyzer: `frontend::flat`'s `the_native_copy_is_the_cursor_s`.)

    #[test]
    fn a_panic_in_descend_reaches_the_caller() {
        const C: &str = "int f(int *a) {\n  for (int i = 0; i < 4; i++) { a[i] = (i ? 1 : 2); }\n  return a[0];\n}\n";
        let tree = csa_grammars::parse(csa_grammars::Grammar::C, C).unwrap();
        let r = std::panic::catch_unwind(|| {
            let mut out = Vec::new();
            copy(tree.root_node(), &mut out, &mut |_, d| {
                assert!(d < 2, "deep");
                true
            })
        });
        assert!(r.is_err());
    }
}
