//! Dominator and post-dominator trees.
//!
//! Algorithm: Keith D. Cooper, Timothy J. Harvey, Ken Kennedy, "A Simple,
//! Fast Dominance Algorithm" (Software Practice and Experience, 2001): the
//! iterative data-flow formulation over reverse post-order, with the
//! two-finger `intersect` walking the partially built tree, repeated until a
//! fixpoint.
//!
//! Post-dominators run the same algorithm on the reversed CFG rooted at a
//! *virtual exit* node (id `succs.len()`), the way LLVM's
//! `PostDominatorTree` does: every reachable block without successors gets
//! an edge to the virtual exit, and regions that cannot reach any exit
//! (infinite loops) get an extra edge from a "furthest away" block, see
//! [`DomTree::post_dominators`].
//!
//! Only blocks reachable from the entry take part in either tree.

use super::{predecessors, reachable, reverse_post_order, valid_succs, Csr, Graph, NONE};

/// A dominator or post-dominator tree over dense `u32` block ids.
#[derive(Clone, Debug, Default)]
pub struct DomTree {
    /// Immediate dominator; `NONE` for the root and for nodes not in the tree.
    idom: Vec<u32>,
    /// Depth in the tree (root 0); `NONE` for nodes not in the tree.
    depth: Vec<u32>,
    /// Pre-order entry / exit numbers of the tree, for O(1) `dominates`.
    tin: Vec<u32>,
    tout: Vec<u32>,
    /// The children of every node, in the order of `rpo`.
    children: Csr,
    root: u32,
    virtual_exit: Option<u32>,
    rpo: Vec<u32>,
    exit_edges: Vec<u32>,
    extra_exit_edges: Vec<u32>,
}

impl DomTree {
    #[cfg(test)]
    /// The dominator tree of the blocks reachable from `entry`. An `entry`
    /// out of range gives an empty tree.
    pub fn dominators<G: Graph + ?Sized>(succs: &G, entry: u32) -> DomTree {
        DomTree::dominators_with_preds(succs, &Csr::reversed(succs), entry)
    }

    /// [`DomTree::dominators`] for a caller that has the predecessor lists
    /// of `succs` (with or without repeated edges: the tree is the same).
    pub fn dominators_with_preds<G: Graph + ?Sized, P: Graph + ?Sized>(
        succs: &G,
        preds: &P,
        entry: u32,
    ) -> DomTree {
        let rpo = reverse_post_order(succs, entry);
        build(succs.num_blocks(), entry, rpo, preds, None)
    }

    /// The post-dominator tree of the blocks reachable from block 0, rooted
    /// at a virtual exit with id `succs.len()`.
    ///
    /// Edges to the virtual exit ([`DomTree::exit_edges`]): first every
    /// reachable block with no (in-range) successor, in block order; then,
    /// as long as some reachable block cannot reach the virtual exit, take
    /// the lowest-numbered such block, run a forward DFS from it (successors
    /// in listed order, not entering blocks that already reach the exit) and
    /// connect the last block that DFS *discovers* — LLVM's "furthest away"
    /// node, which is the highest DFS number in LLVM's `runDFS` — to the
    /// virtual exit ([`DomTree::extra_exit_edges`]).
    pub fn post_dominators<G: Graph + ?Sized>(succs: &G) -> DomTree {
        let n = succs.num_blocks();
        let exit = n as u32;
        let reach = reachable(succs, 0);
        // The reachable subgraph, out-of-range successors dropped.
        let fwd = Csr::from_lists((0..n).map(|b| {
            let keep = reach[b];
            valid_succs(succs, b as u32).filter(move |_| keep)
        }));
        let fpreds = predecessors(&fwd);

        let mut exit_edges: Vec<u32> = (0..n)
            .filter(|&b| reach[b] && fwd[b].is_empty())
            .map(|b| b as u32)
            .collect();
        let mut reaches = vec![false; n];
        let mut work: Vec<u32> = Vec::new();
        for &e in &exit_edges {
            mark_reaching(e, &fpreds, &mut reaches, &mut work);
        }

        let mut extra = Vec::new();
        let mut stamp = vec![NONE; n];
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for start in 0..n {
            if !reach[start] || reaches[start] {
                continue;
            }
            // Forward DFS from `start` over blocks that do not reach the exit
            // yet; remember the last block discovered.
            let start = start as u32;
            let mut furthest = start;
            stamp[start as usize] = start;
            stack.clear();
            stack.push((start, 0));
            while let Some(top) = stack.last_mut() {
                let (b, i) = *top;
                let ss = &fwd[b as usize];
                if i < ss.len() {
                    top.1 += 1;
                    let s = ss[i] as usize;
                    if stamp[s] != start && !reaches[s] {
                        stamp[s] = start;
                        furthest = s as u32;
                        stack.push((s as u32, 0));
                    }
                } else {
                    stack.pop();
                }
            }
            extra.push(furthest);
            exit_edges.push(furthest);
            mark_reaching(furthest, &fpreds, &mut reaches, &mut work);
        }

        // The reversed graph with the virtual exit as node `n`. A block has
        // at most one edge to the exit (`reaches` is set once per block).
        let rsuccs = WithExit {
            preds: &fpreds,
            exit_edges: &exit_edges,
        };
        let mut to_exit = stamp;
        to_exit.fill(0);
        for &e in &exit_edges {
            to_exit[e as usize] = 1;
        }
        let rpreds = Csr::from_lists(
            fwd.iter()
                .zip(&to_exit)
                .map(|(l, &x)| (l, x))
                .chain(std::iter::once((&[][..], 0)))
                .map(|(l, x)| l.iter().copied().chain((x != 0).then_some(exit))),
        );
        let rpo = reverse_post_order(&rsuccs, exit);
        let mut tree = build(n + 1, exit, rpo, &rpreds, Some(exit));
        tree.exit_edges = exit_edges;
        tree.extra_exit_edges = extra;
        tree
    }

    #[cfg(test)]
    /// The immediate dominator of `b`; `None` for the root and for blocks
    /// that are not in the tree.
    pub fn idom(&self, b: u32) -> Option<u32> {
        match self.idom.get(b as usize) {
            Some(&d) if d != NONE => Some(d),
            _ => None,
        }
    }

    /// Whether `b` is in the tree (reachable; for post-dominator trees also
    /// the virtual exit).
    pub fn contains(&self, b: u32) -> bool {
        matches!(self.depth.get(b as usize), Some(&d) if d != NONE)
    }

    /// Depth of `b` in the tree (the root has depth 0).
    pub fn depth(&self, b: u32) -> Option<u32> {
        match self.depth.get(b as usize) {
            Some(&d) if d != NONE => Some(d),
            _ => None,
        }
    }

    /// `a` dominates `b` (reflexive). False when either is not in the tree.
    /// O(1).
    pub fn dominates(&self, a: u32, b: u32) -> bool {
        if !self.contains(a) || !self.contains(b) {
            return false;
        }
        let (a, b) = (a as usize, b as usize);
        self.tin[a] <= self.tin[b] && self.tout[b] <= self.tout[a]
    }

    /// The deepest node that dominates both `a` and `b`; may be the virtual
    /// exit in a post-dominator tree. `None` if either is not in the tree.
    /// O(depth).
    pub fn nearest_common_dominator(&self, a: u32, b: u32) -> Option<u32> {
        let (mut a, mut b) = (a, b);
        let mut da = self.depth(a)?;
        let mut db = self.depth(b)?;
        while da > db {
            a = self.idom[a as usize];
            da -= 1;
        }
        while db > da {
            b = self.idom[b as usize];
            db -= 1;
        }
        while a != b {
            a = self.idom[a as usize];
            b = self.idom[b as usize];
        }
        Some(a)
    }

    /// The root: the entry, or the virtual exit for post-dominator trees.
    pub fn root(&self) -> u32 {
        self.root
    }

    #[cfg(test)]
    /// `Some(succs.len())` for post-dominator trees, `None` otherwise.
    pub fn virtual_exit(&self) -> Option<u32> {
        self.virtual_exit
    }

    /// Whether this is a post-dominator tree.
    pub fn is_post_dom(&self) -> bool {
        self.virtual_exit.is_some()
    }

    #[cfg(test)]
    /// The children of `b` in the tree, in the order of [`DomTree::rpo`].
    /// Empty for leaves and for blocks not in the tree.
    pub fn children(&self, b: u32) -> &[u32] {
        self.children.get(b as usize).unwrap_or(&[])
    }

    /// Reverse post-order of the graph the tree was computed on: for a
    /// dominator tree the forward CFG from the entry (successors in listed
    /// order); for a post-dominator tree the reversed CFG from the virtual
    /// exit. Holds exactly the nodes in the tree, root first.
    pub fn rpo(&self) -> &[u32] {
        &self.rpo
    }

    /// Post-dominator trees: every block with an edge to the virtual exit —
    /// the reachable blocks without successors (block order), then
    /// [`DomTree::extra_exit_edges`]. Empty for dominator trees.
    #[cfg(test)]
    pub fn exit_edges(&self) -> &[u32] {
        &self.exit_edges
    }

    #[cfg(test)]
    /// Post-dominator trees: the blocks given an artificial edge to the
    /// virtual exit because they could not reach one (infinite loops), in
    /// the order they were chosen. Empty for dominator trees.
    pub fn extra_exit_edges(&self) -> &[u32] {
        &self.extra_exit_edges
    }
}

/// The reversed CFG with the virtual exit as its last node, whose
/// successors are the blocks with an edge to it.
struct WithExit<'a> {
    preds: &'a Csr,
    exit_edges: &'a [u32],
}

impl Graph for WithExit<'_> {
    fn num_blocks(&self) -> usize {
        self.preds.len() + 1
    }
    fn succs_of(&self, b: u32) -> &[u32] {
        if b as usize == self.preds.len() {
            self.exit_edges
        } else {
            self.preds.succs_of(b)
        }
    }
}

/// Marks `from` and every block that reaches it (through `preds`) as
/// reaching the exit; stops at blocks already marked.
fn mark_reaching(from: u32, preds: &Csr, reaches: &mut [bool], work: &mut Vec<u32>) {
    if reaches[from as usize] {
        return;
    }
    reaches[from as usize] = true;
    work.clear();
    work.push(from);
    while let Some(b) = work.pop() {
        for &p in &preds[b as usize] {
            if !reaches[p as usize] {
                reaches[p as usize] = true;
                work.push(p);
            }
        }
    }
}

/// Cooper–Harvey–Kennedy on a graph with `num` nodes given by its reverse
/// post-order from `root` (`rpo[0] == root`) and in-range predecessor lists.
fn build<P: Graph + ?Sized>(
    num: usize,
    root: u32,
    rpo: Vec<u32>,
    preds: &P,
    vexit: Option<u32>,
) -> DomTree {
    let mut tree = DomTree {
        idom: vec![NONE; num],
        depth: vec![NONE; num],
        tin: vec![NONE; num],
        tout: vec![NONE; num],
        children: Csr::default(),
        root,
        virtual_exit: vexit,
        rpo: Vec::new(),
        exit_edges: Vec::new(),
        extra_exit_edges: Vec::new(),
    };
    if rpo.first() != Some(&root) {
        return tree;
    }
    // RPO numbers, kept in `tout` until the tree numbering overwrites it.
    let mut order = std::mem::take(&mut tree.tout);
    for (i, &b) in rpo.iter().enumerate() {
        order[b as usize] = i as u32;
    }
    let idom = &mut tree.idom;
    idom[root as usize] = root;
    // Invariant: for every node x != root with an idom, order[idom[x]] <
    // order[x] (the DFS parent, earlier in RPO, always takes part in the
    // intersection), so the finger walks below terminate at the root.
    let intersect = |idom: &[u32], mut a: u32, mut b: u32| -> u32 {
        while a != b {
            while order[a as usize] > order[b as usize] {
                a = idom[a as usize];
            }
            while order[b as usize] > order[a as usize] {
                b = idom[b as usize];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &rpo[1..] {
            let mut new = NONE;
            for &p in preds.succs_of(b) {
                if idom.get(p as usize).is_none_or(|&d| d == NONE) {
                    continue; // unreachable, or not processed yet
                }
                new = if new == NONE {
                    p
                } else {
                    intersect(idom, p, new)
                };
            }
            if new != NONE && idom[b as usize] != new {
                idom[b as usize] = new;
                changed = true;
            }
        }
    }
    idom[root as usize] = NONE;

    // Children lists by a counting sort of the nodes on their idom, in
    // RPO.
    tree.depth[root as usize] = 0;
    let mut start = vec![0u32; num + 1];
    for &b in &rpo[1..] {
        let d = tree.idom[b as usize];
        tree.depth[b as usize] = tree.depth[d as usize] + 1;
        start[d as usize + 1] += 1;
    }
    for i in 0..num {
        start[i + 1] += start[i];
    }
    let mut list = vec![0u32; rpo.len() - 1];
    // `order` is free again: it becomes the fill cursor.
    order[..num].copy_from_slice(&start[..num]);
    for &b in &rpo[1..] {
        let d = tree.idom[b as usize] as usize;
        list[order[d] as usize] = b;
        order[d] += 1;
    }
    tree.children = Csr {
        start,
        targets: list,
    };
    order.fill(NONE);
    tree.tout = order;
    // Pre-order interval numbering of the tree.
    let mut clock = 0u32;
    let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
    tree.tin[root as usize] = clock;
    while let Some(top) = stack.last_mut() {
        let (b, i) = *top;
        if let Some(&c) = tree.children[b as usize].get(i) {
            top.1 += 1;
            clock += 1;
            tree.tin[c as usize] = clock;
            stack.push((c, 0));
        } else {
            tree.tout[b as usize] = clock;
            stack.pop();
        }
    }
    tree.rpo = rpo;
    tree
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reference: iterative set-intersection data flow.
    /// `dom[b][a]`: a dominates b. Only nodes reachable from `entry` get sets.
    fn reference(succs: &[Vec<u32>], entry: usize) -> Vec<Option<Vec<bool>>> {
        let n = succs.len();
        let mut reach = vec![false; n];
        reach[entry] = true;
        let mut work = vec![entry];
        while let Some(b) = work.pop() {
            for &s in &succs[b] {
                let s = s as usize;
                if s < n && !reach[s] {
                    reach[s] = true;
                    work.push(s);
                }
            }
        }
        let mut preds = vec![Vec::new(); n];
        for b in 0..n {
            if !reach[b] {
                continue;
            }
            for &s in &succs[b] {
                if (s as usize) < n {
                    preds[s as usize].push(b);
                }
            }
        }
        let mut dom: Vec<Option<Vec<bool>>> =
            (0..n).map(|b| reach[b].then(|| vec![true; n])).collect();
        let mut e = vec![false; n];
        e[entry] = true;
        dom[entry] = Some(e);
        let mut changed = true;
        while changed {
            changed = false;
            for b in 0..n {
                if !reach[b] || b == entry {
                    continue;
                }
                let mut set = vec![true; n];
                for &p in &preds[b] {
                    let dp = dom[p].as_ref().unwrap();
                    for (x, &y) in set.iter_mut().zip(dp) {
                        *x &= y;
                    }
                }
                set[b] = true;
                if dom[b].as_ref() != Some(&set) {
                    dom[b] = Some(set);
                    changed = true;
                }
            }
        }
        dom
    }

    /// Checks `tree` against reference sets over `num` node ids.
    fn check(tree: &DomTree, dom: &[Option<Vec<bool>>]) {
        let n = dom.len();
        for b in 0..n {
            assert_eq!(tree.contains(b as u32), dom[b].is_some(), "contains {b}");
            let Some(db) = &dom[b] else {
                assert_eq!(tree.idom(b as u32), None);
                continue;
            };
            for (a, &da) in db.iter().enumerate() {
                assert_eq!(
                    tree.dominates(a as u32, b as u32),
                    da,
                    "dominates({a}, {b})"
                );
            }
            // idom: the strict dominator with the largest dominator set.
            let expect = (0..n)
                .filter(|&a| a != b && db[a])
                .max_by_key(|&a| dom[a].as_ref().unwrap().iter().filter(|&&x| x).count())
                .map(|a| a as u32);
            assert_eq!(tree.idom(b as u32), expect, "idom({b})");
        }
        for a in 0..n {
            for b in 0..n {
                let (Some(da), Some(db)) = (&dom[a], &dom[b]) else {
                    assert_eq!(tree.nearest_common_dominator(a as u32, b as u32), None);
                    continue;
                };
                let expect = (0..n)
                    .filter(|&c| da[c] && db[c])
                    .max_by_key(|&c| dom[c].as_ref().unwrap().iter().filter(|&&x| x).count())
                    .map(|c| c as u32);
                assert_eq!(
                    tree.nearest_common_dominator(a as u32, b as u32),
                    expect,
                    "ncd({a}, {b})"
                );
            }
        }
    }

    /// The reversed graph plus the virtual exit `n`, for the reference.
    fn reversed_with_exit(succs: &[Vec<u32>], tree: &DomTree) -> Vec<Vec<u32>> {
        let n = succs.len();
        let reach = reachable(succs, 0);
        let mut rev = vec![Vec::new(); n + 1];
        for b in 0..n {
            if !reach[b] {
                continue;
            }
            for &s in &succs[b] {
                if (s as usize) < n {
                    rev[s as usize].push(b as u32);
                }
            }
        }
        rev[n] = tree.exit_edges().to_vec();
        rev
    }

    fn graph() -> impl Strategy<Value = Vec<Vec<u32>>> {
        (1usize..40).prop_flat_map(|n| {
            // ids n and n+1 are out of range on purpose
            prop::collection::vec(prop::collection::vec(0..(n as u32 + 2), 0..4), n)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 300,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn dominators_match_reference(succs in graph()) {
            let tree = DomTree::dominators(&succs, 0);
            check(&tree, &reference(&succs, 0));
            let rpo = reverse_post_order(&succs, 0);
            prop_assert_eq!(tree.rpo(), rpo.as_slice());
            prop_assert_eq!(tree.root(), 0);
            prop_assert_eq!(tree.virtual_exit(), None);
        }

        #[test]
        fn dominators_from_other_entry(succs in graph(), e in 0u32..45) {
            let tree = DomTree::dominators(&succs, e);
            if (e as usize) < succs.len() {
                check(&tree, &reference(&succs, e as usize));
            } else {
                prop_assert!((0..succs.len() as u32 + 2).all(|b| !tree.contains(b)));
            }
        }

        #[test]
        fn post_dominators_match_reference(succs in graph()) {
            let n = succs.len();
            let tree = DomTree::post_dominators(&succs);
            prop_assert_eq!(tree.virtual_exit(), Some(n as u32));
            prop_assert_eq!(tree.root(), n as u32);
            let reference = reference(&reversed_with_exit(&succs, &tree), n);
            // Every forward-reachable block reaches the exit, nothing else is in.
            let reach = reachable(&succs, 0);
            for b in 0..n {
                prop_assert_eq!(reference[b].is_some(), reach[b]);
            }
            check(&tree, &reference);
            // Extra edges only from blocks that have successors.
            for &e in tree.extra_exit_edges() {
                prop_assert!(succs[e as usize].iter().any(|&s| (s as usize) < n));
            }
        }
    }

    fn tree_idoms(t: &DomTree, n: u32) -> Vec<Option<u32>> {
        (0..n).map(|b| t.idom(b)).collect()
    }

    #[test]
    fn diamond() {
        //    0
        //   / \
        //  1   2
        //   \ /
        //    3
        let succs = vec![vec![1, 2], vec![3], vec![3], vec![]];
        let d = DomTree::dominators(&succs, 0);
        assert_eq!(tree_idoms(&d, 4), vec![None, Some(0), Some(0), Some(0)]);
        assert_eq!(d.children(0), &[2, 1, 3]);
        assert_eq!(d.nearest_common_dominator(1, 2), Some(0));
        let p = DomTree::post_dominators(&succs);
        // exit = 4; 3 -> exit
        assert_eq!(
            tree_idoms(&p, 5),
            vec![Some(3), Some(3), Some(3), Some(4), None]
        );
        assert_eq!(p.exit_edges(), &[3]);
        assert!(p.extra_exit_edges().is_empty());
        assert!(p.dominates(4, 0));
        assert_eq!(p.nearest_common_dominator(1, 2), Some(3));
    }

    #[test]
    fn while_loop() {
        // 0: entry -> 1
        // 1: cond -> 2 (body), 3 (end)
        // 2: body -> 1
        // 3: end (return)
        let succs = vec![vec![1], vec![2, 3], vec![1], vec![]];
        let d = DomTree::dominators(&succs, 0);
        assert_eq!(tree_idoms(&d, 4), vec![None, Some(0), Some(1), Some(1)]);
        assert_eq!(d.rpo(), &[0, 1, 3, 2]);
        let p = DomTree::post_dominators(&succs);
        assert_eq!(
            tree_idoms(&p, 5),
            vec![Some(1), Some(3), Some(1), Some(4), None]
        );
    }

    #[test]
    fn loop_with_break() {
        // 0 -> 1
        // 1: cond -> 2, 4
        // 2: body: if (x) break -> 4, else -> 3
        // 3: inc -> 1
        // 4: end
        let succs = vec![vec![1], vec![2, 4], vec![4, 3], vec![1], vec![]];
        let d = DomTree::dominators(&succs, 0);
        assert_eq!(
            tree_idoms(&d, 5),
            vec![None, Some(0), Some(1), Some(2), Some(1)]
        );
        let p = DomTree::post_dominators(&succs);
        assert_eq!(
            tree_idoms(&p, 6),
            vec![Some(1), Some(4), Some(4), Some(1), Some(5), None]
        );
    }

    #[test]
    fn infinite_loop_without_exit() {
        // 0 -> 1, 1 -> 2, 2 -> 1: nothing returns.
        // DFS from 0 discovers 0, 1, 2: 2 is the furthest, 2 -> exit(3).
        let succs = vec![vec![1], vec![2], vec![1]];
        let p = DomTree::post_dominators(&succs);
        assert_eq!(p.extra_exit_edges(), &[2]);
        assert_eq!(p.exit_edges(), &[2]);
        assert_eq!(tree_idoms(&p, 4), vec![Some(1), Some(2), Some(3), None]);
        let d = DomTree::dominators(&succs, 0);
        assert_eq!(tree_idoms(&d, 3), vec![None, Some(0), Some(1)]);
    }

    #[test]
    fn infinite_loop_beside_a_return() {
        // 0 -> 1, 4
        // 1 -> 2; 2 -> 3; 3 -> 1 (infinite loop)
        // 4: return
        // 5: unreachable -> 1
        let succs = vec![vec![1, 4], vec![2], vec![3], vec![1], vec![], vec![1]];
        let p = DomTree::post_dominators(&succs);
        assert_eq!(p.exit_edges(), &[4, 3]);
        assert_eq!(p.extra_exit_edges(), &[3]);
        // exit = 6
        assert_eq!(
            tree_idoms(&p, 7),
            vec![Some(6), Some(2), Some(3), Some(6), Some(6), None, None]
        );
        assert!(!p.contains(5));
        assert!(p.contains(6));
        assert!(!p.dominates(5, 5));
    }

    #[test]
    fn two_infinite_loops_in_sequence() {
        // 0 -> 1; 1 -> 1, 2; 2 -> 2 (second loop never exits)
        // DFS from 0: 0, 1, 2 -> furthest 2. Then everything reaches.
        let succs = vec![vec![1], vec![1, 2], vec![2]];
        let p = DomTree::post_dominators(&succs);
        assert_eq!(p.extra_exit_edges(), &[2]);
        assert_eq!(tree_idoms(&p, 4), vec![Some(1), Some(2), Some(3), None]);
    }

    #[test]
    fn self_loop_and_out_of_range() {
        let succs = vec![vec![0, 99]];
        let d = DomTree::dominators(&succs, 0);
        assert!(d.contains(0));
        assert_eq!(d.idom(0), None);
        assert!(d.dominates(0, 0));
        assert!(!d.dominates(0, 99));
        let p = DomTree::post_dominators(&succs);
        assert_eq!(p.extra_exit_edges(), &[0]);
        assert_eq!(p.idom(0), Some(1));
    }

    #[test]
    fn empty_graph() {
        let d = DomTree::dominators(&[], 0);
        assert!(!d.contains(0));
        assert!(d.rpo().is_empty());
        let p = DomTree::post_dominators(&[]);
        assert!(p.contains(0));
        assert_eq!(p.virtual_exit(), Some(0));
        assert_eq!(p.idom(0), None);
    }

    #[test]
    fn deep_chain() {
        // A 100k-block ladder of diamonds: 3k -> 3k+1 | 3k+2 -> 3k+3.
        let k = 33_000u32;
        let n = 3 * k + 1;
        let succs: Vec<Vec<u32>> = (0..n)
            .map(|b| match b % 3 {
                _ if b + 1 == n => vec![],
                0 => vec![b + 1, b + 2],
                _ => vec![b + 3 - b % 3],
            })
            .collect();
        let d = DomTree::dominators(&succs, 0);
        assert_eq!(d.idom(n - 1), Some(n - 4));
        assert_eq!(d.idom(n - 2), Some(n - 4));
        assert!(d.dominates(0, n - 1));
        assert_eq!(d.depth(n - 1), Some(k));
        assert_eq!(d.nearest_common_dominator(5, n - 1), Some(3));
        let p = DomTree::post_dominators(&succs);
        assert_eq!(p.idom(1), Some(3));
        assert_eq!(p.idom(0), Some(3));
        assert!(p.dominates(n - 1, 0));
    }

    #[test]
    fn chain_with_back_edges_to_entry() {
        // Every block may jump back to 0: CHK's worst case for the
        // post-dominator fingers (quadratic), kept small.
        let n = 5_000u32;
        let succs: Vec<Vec<u32>> = (0..n)
            .map(|b| if b + 1 < n { vec![b + 1, 0] } else { vec![] })
            .collect();
        let d = DomTree::dominators(&succs, 0);
        assert_eq!(d.idom(n - 1), Some(n - 2));
        let p = DomTree::post_dominators(&succs);
        assert_eq!(p.idom(0), Some(1));
        assert!(p.dominates(n - 1, 0));
    }
}
