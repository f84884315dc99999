//! Natural loops, their nesting, and irreducible regions.
//!
//! Algorithm: natural loops of dominance back edges (Aho, Lam, Sethi,
//! Ullman, "Compilers: Principles, Techniques, and Tools", 2nd ed., §9.6),
//! discovered and nested the way LLVM's `LoopInfoBase::analyze` does it:
//! headers are visited dominated-first, and the backward walk from a
//! header's latches jumps over already discovered subloops
//! (`discoverAndMapSubloop`), which makes the discovery linear apart from the
//! walk to the outermost discovered loop.
//!
//! Irreducibility: retreating edges of a DFS (Tarjan, "Testing flow graph
//! reducibility", JCSS 1974) whose target does not dominate their source.
//! The *irreducible region* of such an edge `u -> v` is the strongly
//! connected component of `v` in the innermost natural loop containing both
//! `u` and `v`, minus that loop's header (the whole reachable CFG when no
//! loop contains both). Loops that overlap a region without containing all
//! of it (below their header) are reported by
//! [`LoopForest::touches_irreducible`].

use rustc_hash::FxHashSet as HashSet;
use std::ops::Index;

use super::dom::DomTree;
#[cfg(test)]
use super::Csr;
use super::{reverse_post_order, valid_succs, Graph, NONE};

/// Index of a loop in [`LoopForest::loops`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LoopId(pub u32);

impl LoopId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One natural loop (all back edges to one header).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopData {
    pub header: u32,
    /// Sources of back edges, in block order.
    pub latches: Vec<u32>,
    /// All blocks including those of subloops: the header first, then in the
    /// function's reverse post-order.
    pub blocks: Vec<u32>,
    pub parent: Option<LoopId>,
    /// Direct subloops, in the order of their headers in reverse post-order.
    pub children: Vec<LoopId>,
    /// 1 for top-level loops.
    pub depth: u32,
    /// Blocks outside the loop with a predecessor inside, deduplicated, in
    /// order of discovery (loop blocks in `blocks` order, successors in
    /// listed order).
    pub exit_blocks: Vec<u32>,
    /// Blocks inside the loop with a successor outside, in `blocks` order.
    pub exiting_blocks: Vec<u32>,
}

/// All natural loops of a function.
#[derive(Clone, Debug, Default)]
pub struct LoopForest {
    /// Ordered by the reverse post-order position of their headers (so a
    /// parent always comes before its children).
    pub loops: Vec<LoopData>,
    /// Loops without a parent, in the order of `loops`.
    pub top_level: Vec<LoopId>,
    /// Innermost loop of each block, `NONE` outside loops.
    block_loop: Vec<u32>,
    /// Reachable from the entry and in the dominator tree.
    reachable: Vec<bool>,
    irreducible_edges: Vec<(u32, u32)>,
    irreducible_blocks: Vec<u32>,
    irreducible_loops: Vec<bool>,
}

impl Index<LoopId> for LoopForest {
    type Output = LoopData;
    fn index(&self, id: LoopId) -> &LoopData {
        &self.loops[id.index()]
    }
}

/// Finds the natural loops of `succs`. `dom` must be the dominator tree of
/// `succs` (its root is taken as the entry); a post-dominator tree or a
/// tree of another graph gives meaningless (but well-formed) results.
#[cfg(test)]
pub fn find_loops<G: Graph + ?Sized>(succs: &G, dom: &DomTree) -> LoopForest {
    find_loops_with_preds(succs, &Csr::reversed(succs), dom)
}

/// [`find_loops`] for a caller that has the predecessor lists of `succs`
/// (with or without repeated edges: the forest is the same).
pub fn find_loops_with_preds<G: Graph + ?Sized, P: Graph + ?Sized>(
    succs: &G,
    preds: &P,
    dom: &DomTree,
) -> LoopForest {
    let n = succs.num_blocks();
    let entry = dom.root();
    // A dominator tree holds the reverse post-order this needs.
    let rpo: Vec<u32> = if dom.is_post_dom() {
        reverse_post_order(succs, entry)
            .into_iter()
            .filter(|&b| dom.contains(b))
            .collect()
    } else {
        dom.rpo()
            .iter()
            .copied()
            .filter(|&b| (b as usize) < n)
            .collect()
    };
    let mut reachable = vec![false; n];
    for &b in &rpo {
        reachable[b as usize] = true;
    }

    // Headers and their latches, in RPO.
    let mut headers: Vec<u32> = Vec::new();
    let mut latches: Vec<Vec<u32>> = Vec::new();
    for &h in &rpo {
        let mut l: Vec<u32> = Vec::new();
        for &p in preds.succs_of(h) {
            // Predecessor lists are ascending: a repeated edge is adjacent.
            if l.last() != Some(&p)
                && reachable.get(p as usize) == Some(&true)
                && dom.dominates(h, p)
            {
                l.push(p);
            }
        }
        if !l.is_empty() {
            headers.push(h);
            latches.push(l);
        }
    }
    let num = headers.len();

    // Discover loop bodies, dominated headers (later in RPO) first.
    let mut block_loop = vec![NONE; n];
    let mut parent = vec![NONE; num];
    let mut work: Vec<u32> = Vec::new();
    for l in (0..num).rev() {
        let h = headers[l];
        let l = l as u32;
        work.clear();
        work.extend_from_slice(&latches[l as usize]);
        while let Some(b) = work.pop() {
            let Some(&sub) = block_loop.get(b as usize) else {
                continue; // predecessor lists of another graph
            };
            if sub == NONE {
                if !reachable[b as usize] {
                    continue;
                }
                block_loop[b as usize] = l;
                if b != h {
                    work.extend_from_slice(preds.succs_of(b));
                }
            } else {
                let mut sub = sub;
                while parent[sub as usize] != NONE {
                    sub = parent[sub as usize];
                }
                if sub == l {
                    continue;
                }
                parent[sub as usize] = l;
                let sh = headers[sub as usize];
                for &p in preds.succs_of(sh) {
                    if block_loop.get(p as usize) != Some(&sub) {
                        work.push(p);
                    }
                }
            }
        }
    }

    let mut loops: Vec<LoopData> = headers
        .iter()
        .zip(latches)
        .zip(&parent)
        .map(|((&header, latches), &p)| LoopData {
            header,
            latches,
            blocks: Vec::new(),
            parent: (p != NONE).then_some(LoopId(p)),
            children: Vec::new(),
            depth: 1,
            exit_blocks: Vec::new(),
            exiting_blocks: Vec::new(),
        })
        .collect();
    let mut top_level = Vec::new();
    for l in 0..num {
        match loops[l].parent {
            // A parent's header dominates the child's, so it comes first.
            Some(p) => {
                loops[l].depth = loops[p.index()].depth + 1;
                loops[p.index()].children.push(LoopId(l as u32));
            }
            None => top_level.push(LoopId(l as u32)),
        }
    }
    for &b in &rpo {
        let mut c = block_loop[b as usize];
        while c != NONE {
            loops[c as usize].blocks.push(b);
            c = parent[c as usize];
        }
    }

    // Exits, with per-loop stamps to stay linear in the output size.
    let mut inside = vec![NONE; n];
    let mut seen = vec![NONE; n];
    for (l, data) in loops.iter_mut().enumerate() {
        let l = l as u32;
        for &b in &data.blocks {
            inside[b as usize] = l;
        }
        for &b in &data.blocks {
            let mut exiting = false;
            for s in valid_succs(succs, b) {
                if inside[s as usize] == l {
                    continue;
                }
                exiting = true;
                if seen[s as usize] != l {
                    seen[s as usize] = l;
                    data.exit_blocks.push(s);
                }
            }
            if exiting {
                data.exiting_blocks.push(b);
            }
        }
    }

    let mut forest = LoopForest {
        loops,
        top_level,
        block_loop,
        reachable,
        irreducible_edges: Vec::new(),
        irreducible_blocks: Vec::new(),
        irreducible_loops: vec![false; num],
    };
    forest.irreducible_edges = find_irreducible(succs, entry, dom);
    forest.find_irreducible_regions(succs, preds);
    forest
}

/// Retreating edges `(source, target)` of a DFS from `entry` (successors in
/// listed order) whose target does not dominate their source: the edges
/// that make the CFG irreducible. Each edge once, in DFS order.
pub fn find_irreducible<G: Graph + ?Sized>(
    succs: &G,
    entry: u32,
    dom: &DomTree,
) -> Vec<(u32, u32)> {
    let n = succs.num_blocks();
    let mut out = Vec::new();
    if entry as usize >= n {
        return out;
    }
    let mut seen_edges = HashSet::default();
    let mut visited = vec![false; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<(u32, usize)> = vec![(entry, 0)];
    visited[entry as usize] = true;
    on_stack[entry as usize] = true;
    while let Some(top) = stack.last_mut() {
        let (b, i) = *top;
        let ss = succs.succs_of(b);
        if i < ss.len() {
            top.1 += 1;
            let s = ss[i];
            if s as usize >= n {
                continue;
            }
            if on_stack[s as usize] {
                if !dom.dominates(s, b) && seen_edges.insert((b, s)) {
                    out.push((b, s));
                }
            } else if !visited[s as usize] {
                visited[s as usize] = true;
                on_stack[s as usize] = true;
                stack.push((s, 0));
            }
        } else {
            on_stack[b as usize] = false;
            stack.pop();
        }
    }
    out
}

impl LoopForest {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.loops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.loops.is_empty()
    }

    pub fn get(&self, id: LoopId) -> Option<&LoopData> {
        self.loops.get(id.index())
    }

    /// Loop ids in `loops` order.
    pub fn ids(&self) -> impl Iterator<Item = LoopId> {
        (0..self.loops.len() as u32).map(LoopId)
    }

    /// The innermost loop containing `block`.
    pub fn loop_for(&self, block: u32) -> Option<LoopId> {
        match self.block_loop.get(block as usize) {
            Some(&l) if l != NONE => Some(LoopId(l)),
            _ => None,
        }
    }

    /// The loop whose header is `block`.
    pub fn loop_with_header(&self, block: u32) -> Option<LoopId> {
        self.loop_for(block)
            .filter(|&l| self.loops[l.index()].header == block)
    }

    /// `block` is in `lp` (or one of its subloops). O(depth).
    pub fn contains(&self, lp: LoopId, block: u32) -> bool {
        let Some(target) = self.get(lp) else {
            return false;
        };
        let mut c = self.loop_for(block);
        while let Some(l) = c {
            if l == lp {
                return true;
            }
            let data = &self.loops[l.index()];
            if data.depth <= target.depth {
                return false;
            }
            c = data.parent;
        }
        false
    }

    /// Loop nesting depth of `block`: 0 outside loops.
    #[cfg(test)]
    pub fn depth_of(&self, block: u32) -> u32 {
        self.loop_for(block)
            .map_or(0, |l| self.loops[l.index()].depth)
    }

    /// Whether `block` is reachable from the entry.
    pub fn is_reachable(&self, block: u32) -> bool {
        self.reachable.get(block as usize).copied().unwrap_or(false)
    }

    /// LLVM `Loop::getLoopPreheader`: the unique predecessor of the header
    /// outside the loop, provided its only successor edge goes to the
    /// header. Unreachable predecessors are ignored. `succs`/`preds` are the
    /// current successor and predecessor lists (see
    /// [`super::predecessors`]).
    pub fn preheader<G: Graph + ?Sized, P: Graph + ?Sized>(
        &self,
        lp: LoopId,
        succs: &G,
        preds: &P,
    ) -> Option<u32> {
        let h = self.get(lp)?.header;
        let mut out = None;
        for &p in preds.succs_of(h) {
            if !self.is_reachable(p) || self.contains(lp, p) {
                continue;
            }
            match out {
                None => out = Some(p),
                Some(o) if o != p => return None,
                Some(_) => {}
            }
        }
        let o = out?;
        let mut ss = valid_succs(succs, o);
        (ss.next() == Some(h) && ss.next().is_none()).then_some(o)
    }

    /// The latch if the loop has exactly one.
    pub fn single_latch(&self, lp: LoopId) -> Option<u32> {
        match self.get(lp)?.latches.as_slice() {
            [l] => Some(*l),
            _ => None,
        }
    }

    /// Retreating edges whose target does not dominate their source (see
    /// [`find_irreducible`]).
    pub fn irreducible_edges(&self) -> &[(u32, u32)] {
        &self.irreducible_edges
    }

    /// Blocks of all irreducible regions, ascending.
    pub fn irreducible_blocks(&self) -> Vec<u32> {
        self.irreducible_blocks.clone()
    }

    /// The loop overlaps an irreducible region without containing all of it
    /// below its header: its shape is not that of a natural loop in
    /// LoopSimplify's sense, callers skip it.
    pub fn touches_irreducible(&self, lp: LoopId) -> bool {
        self.irreducible_loops
            .get(lp.index())
            .copied()
            .unwrap_or(false)
    }

    /// Loops in LLVM's `LoopSimplify` processing order: top-level loops in
    /// reverse order (LoopInfo stores them that way), and within each nest
    /// the reverse of a breadth-first listing, so inner loops come before
    /// the loops containing them.
    pub fn simplify_order(&self) -> Vec<LoopId> {
        let mut out = Vec::with_capacity(self.loops.len());
        let mut work: Vec<LoopId> = Vec::new();
        for &top in self.top_level.iter().rev() {
            work.clear();
            work.push(top);
            let mut i = 0;
            while i < work.len() {
                let l = work[i];
                work.extend_from_slice(&self.loops[l.index()].children);
                i += 1;
            }
            out.extend(work.iter().rev());
        }
        out
    }

    fn find_irreducible_regions<G: Graph + ?Sized, P: Graph + ?Sized>(
        &mut self,
        succs: &G,
        preds: &P,
    ) {
        if self.irreducible_edges.is_empty() {
            return;
        }
        let n = succs.num_blocks();
        // Group edge targets by the innermost loop containing both ends.
        let mut groups: Vec<(u32, u32)> = Vec::new();
        for &(u, v) in &self.irreducible_edges {
            let mut l = self.loop_for(u);
            while let Some(x) = l {
                if self.contains(x, v) {
                    break;
                }
                l = self.loops[x.index()].parent;
            }
            groups.push((l.map_or(NONE, |x| x.0), v));
        }
        groups.sort_by_key(|&(l, _)| l);

        let mut member = vec![NONE; n]; // set S of the current group
        let mut covered = vec![NONE; n]; // in a region of the current group
        let mut fmark = vec![NONE; n];
        let mut bmark = vec![NONE; n];
        let mut in_any = vec![false; n];
        let mut count = vec![0u32; self.loops.len()];
        let mut counted: Vec<u32> = Vec::new();
        let mut work: Vec<u32> = Vec::new();
        let mut fwd: Vec<u32> = Vec::new();
        let mut token = 0u32;
        let mut g = 0usize;
        while g < groups.len() {
            let l = groups[g].0;
            let gid = g as u32;
            let mut end = g;
            while end < groups.len() && groups[end].0 == l {
                end += 1;
            }
            if l != NONE {
                let data = &self.loops[l as usize];
                for &b in &data.blocks {
                    member[b as usize] = gid;
                }
                member[data.header as usize] = NONE;
            }
            let in_set = |x: u32, member: &[u32], reachable: &[bool]| {
                if l == NONE {
                    reachable[x as usize]
                } else {
                    member[x as usize] == gid
                }
            };
            for &(_, v) in &groups[g..end] {
                if covered[v as usize] == gid || !in_set(v, &member, &self.reachable) {
                    continue;
                }
                token += 1;
                // Forward reach from v within S.
                fwd.clear();
                fwd.push(v);
                fmark[v as usize] = token;
                work.clear();
                work.push(v);
                while let Some(x) = work.pop() {
                    for s in valid_succs(succs, x) {
                        if fmark[s as usize] != token && in_set(s, &member, &self.reachable) {
                            fmark[s as usize] = token;
                            fwd.push(s);
                            work.push(s);
                        }
                    }
                }
                // Backward reach to v within S.
                bmark[v as usize] = token;
                work.push(v);
                while let Some(x) = work.pop() {
                    for &p in preds.succs_of(x) {
                        if bmark[p as usize] != token && in_set(p, &member, &self.reachable) {
                            bmark[p as usize] = token;
                            work.push(p);
                        }
                    }
                }
                let region: Vec<u32> = fwd
                    .iter()
                    .copied()
                    .filter(|&x| bmark[x as usize] == token)
                    .collect();
                // Loops overlapping the region.
                for &x in &region {
                    covered[x as usize] = gid;
                    in_any[x as usize] = true;
                    let mut c = self.block_loop[x as usize];
                    while c != NONE {
                        if count[c as usize] == 0 {
                            counted.push(c);
                        }
                        count[c as usize] += 1;
                        c = self.loops[c as usize].parent.map_or(NONE, |p| p.0);
                    }
                }
                for &c in &counted {
                    let h = self.loops[c as usize].header;
                    let header_in = fmark[h as usize] == token && bmark[h as usize] == token;
                    if count[c as usize] as usize != region.len() || header_in {
                        self.irreducible_loops[c as usize] = true;
                    }
                    count[c as usize] = 0;
                }
                counted.clear();
            }
            g = end;
        }
        self.irreducible_blocks = (0..n as u32).filter(|&b| in_any[b as usize]).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{predecessors, reachable};
    use proptest::prelude::*;

    fn forest(succs: &[Vec<u32>]) -> LoopForest {
        find_loops(succs, &DomTree::dominators(succs, 0))
    }

    fn preheader_of(f: &LoopForest, l: LoopId, succs: &[Vec<u32>]) -> Option<u32> {
        f.preheader(l, succs, &predecessors(succs))
    }

    #[test]
    fn for_loop() {
        // 0 entry -> 1
        // 1 for.cond -> 2 (body), 4 (end)
        // 2 for.body -> 3
        // 3 for.inc -> 1
        // 4 end
        let succs = vec![vec![1], vec![2, 4], vec![3], vec![1], vec![]];
        let f = forest(&succs);
        assert_eq!(f.len(), 1);
        let l = &f.loops[0];
        assert_eq!(l.header, 1);
        assert_eq!(l.latches, vec![3]);
        assert_eq!(l.blocks, vec![1, 2, 3]);
        assert_eq!(l.exit_blocks, vec![4]);
        assert_eq!(l.exiting_blocks, vec![1]);
        assert_eq!(l.depth, 1);
        assert_eq!(l.parent, None);
        assert_eq!(f.top_level, vec![LoopId(0)]);
        assert_eq!(preheader_of(&f, LoopId(0), &succs), Some(0));
        assert_eq!(f.single_latch(LoopId(0)), Some(3));
        assert_eq!(f.depth_of(2), 1);
        assert_eq!(f.depth_of(4), 0);
        assert_eq!(f.loop_for(0), None);
        assert!(f.irreducible_edges().is_empty());
    }

    #[test]
    fn while_with_break() {
        // 0 -> 1
        // 1 while.cond -> 2, 5
        // 2 body: if (x) break -> 5 else -> 3
        // 3 -> 4
        // 4 -> 1
        // 5 end
        let succs = vec![vec![1], vec![2, 5], vec![5, 3], vec![4], vec![1], vec![]];
        let f = forest(&succs);
        assert_eq!(f.len(), 1);
        let l = &f.loops[0];
        assert_eq!(l.blocks, vec![1, 2, 3, 4]);
        assert_eq!(l.latches, vec![4]);
        assert_eq!(l.exit_blocks, vec![5]);
        assert_eq!(l.exiting_blocks, vec![1, 2]);
    }

    #[test]
    fn do_while() {
        // 0 -> 1 do.body -> 2 do.cond -> 1 | 3
        let succs = vec![vec![1], vec![2], vec![1, 3], vec![]];
        let f = forest(&succs);
        let l = &f.loops[0];
        assert_eq!((l.header, l.latches.clone()), (1, vec![2]));
        assert_eq!(l.blocks, vec![1, 2]);
        assert_eq!(l.exit_blocks, vec![3]);
        assert_eq!(l.exiting_blocks, vec![2]);
        assert_eq!(preheader_of(&f, LoopId(0), &succs), Some(0));
    }

    #[test]
    fn nested_loops() {
        // 0 -> 1
        // 1 outer cond -> 2, 6
        // 2 -> 3
        // 3 inner cond -> 4, 5
        // 4 -> 3 (inner latch)
        // 5 -> 1 (outer latch)
        // 6 end
        // RPO: 0 1 6 2 3 5 4
        let succs = vec![
            vec![1],
            vec![2, 6],
            vec![3],
            vec![4, 5],
            vec![3],
            vec![1],
            vec![],
        ];
        let f = forest(&succs);
        assert_eq!(f.len(), 2);
        let (o, i) = (&f.loops[0], &f.loops[1]);
        assert_eq!(o.header, 1);
        assert_eq!(o.blocks, vec![1, 2, 3, 5, 4]);
        assert_eq!(o.children, vec![LoopId(1)]);
        assert_eq!(o.exit_blocks, vec![6]);
        assert_eq!(i.header, 3);
        assert_eq!(i.blocks, vec![3, 4]);
        assert_eq!(i.parent, Some(LoopId(0)));
        assert_eq!(i.depth, 2);
        assert_eq!(i.exit_blocks, vec![5]);
        assert_eq!(i.exiting_blocks, vec![3]);
        assert_eq!(f.loop_for(4), Some(LoopId(1)));
        assert_eq!(f.loop_for(5), Some(LoopId(0)));
        assert_eq!(f.depth_of(4), 2);
        assert!(f.contains(LoopId(0), 4));
        assert!(!f.contains(LoopId(1), 5));
        assert_eq!(preheader_of(&f, LoopId(1), &succs), Some(2));
        assert_eq!(f.simplify_order(), vec![LoopId(1), LoopId(0)]);
        assert_eq!(f.loop_with_header(3), Some(LoopId(1)));
        assert_eq!(f.loop_with_header(4), None);
    }

    #[test]
    fn two_backedges_one_loop() {
        // 0 -> 1; 1 -> 2, 5; 2 -> 3, 4; 3 -> 1; 4 -> 1; 5 end
        let succs = vec![vec![1], vec![2, 5], vec![3, 4], vec![1], vec![1], vec![]];
        let f = forest(&succs);
        assert_eq!(f.len(), 1);
        assert_eq!(f.loops[0].latches, vec![3, 4]);
        assert_eq!(f.single_latch(LoopId(0)), None);
    }

    #[test]
    fn goto_formed_loop() {
        // L: (1) if (a) goto L (via 2); (3) if (b) goto L; (5) end
        // 0 -> 1; 1 -> 2, 3; 2 -> 1; 3 -> 4; 4 -> 1, 5; 5 end
        let succs = vec![vec![1], vec![2, 3], vec![1], vec![4], vec![1, 5], vec![]];
        let f = forest(&succs);
        assert_eq!(f.len(), 1);
        let l = &f.loops[0];
        assert_eq!(l.header, 1);
        assert_eq!(l.latches, vec![2, 4]);
        assert_eq!(l.exit_blocks, vec![5]);
        assert_eq!(l.exiting_blocks, vec![4]);
    }

    #[test]
    fn preheader_rules() {
        // 0 -> 1, 2; 1 -> 2; 2 -> 2, 3: two outside preds, no preheader.
        let succs = vec![vec![1, 2], vec![2], vec![2, 3], vec![]];
        let f = forest(&succs);
        assert_eq!(f.loops[0].header, 2);
        assert_eq!(preheader_of(&f, LoopId(0), &succs), None);
        // 0 -> 1 | 3; 1 -> 1 | 2: the outside pred has two successors.
        let succs = vec![vec![1, 3], vec![1, 2], vec![], vec![]];
        let f = forest(&succs);
        assert_eq!(preheader_of(&f, LoopId(0), &succs), None);
        // Duplicate edge from the only outside pred: two successor edges.
        let succs = vec![vec![1, 1], vec![1, 2], vec![]];
        let f = forest(&succs);
        assert_eq!(preheader_of(&f, LoopId(0), &succs), None);
        // An unreachable outside pred does not count.
        let succs = vec![vec![1], vec![1, 2], vec![], vec![1]];
        let f = forest(&succs);
        assert_eq!(preheader_of(&f, LoopId(0), &succs), Some(0));
        assert!(!f.is_reachable(3));
    }

    #[test]
    fn irreducible_two_entry_cycle() {
        // 0 -> 1, 2; 1 -> 2, 3; 2 -> 1; 3 end
        let succs = vec![vec![1, 2], vec![2, 3], vec![1], vec![]];
        let dom = DomTree::dominators(&succs, 0);
        assert_eq!(find_irreducible(&succs, 0, &dom), vec![(2, 1)]);
        let f = find_loops(&succs, &dom);
        assert!(f.is_empty());
        assert_eq!(f.irreducible_edges(), &[(2, 1)]);
        assert_eq!(f.irreducible_blocks(), vec![1, 2]);
    }

    #[test]
    fn irreducible_inside_natural_loop() {
        // 0 -> 1
        // 1 outer header -> 2, 3, 6
        // 2 -> 3, 2 (self loop: a natural loop inside the region)
        // 3 -> 2, 5
        // 5 -> 1 (outer latch)
        // 6 end
        let succs = vec![
            vec![1],
            vec![2, 3, 6],
            vec![3, 2],
            vec![2, 5],
            vec![],
            vec![1],
            vec![],
        ];
        let f = forest(&succs);
        assert_eq!(f.irreducible_edges(), &[(3, 2)]);
        assert_eq!(f.irreducible_blocks(), vec![2, 3]);
        let outer = f.loop_with_header(1).unwrap();
        let inner = f.loop_with_header(2).unwrap();
        assert_eq!(f.loops[outer.index()].blocks.len(), 4);
        assert!(!f.touches_irreducible(outer));
        assert!(f.touches_irreducible(inner));
    }

    #[test]
    fn loop_inside_irreducible_cycle_and_header_target() {
        // 0 -> 1, 2; 1 -> 2; 2 -> 1, 2 (2 is a header of a self loop and
        // on the two-entry cycle 1 <-> 2)
        let succs = vec![vec![1, 2], vec![2], vec![1, 2]];
        let f = forest(&succs);
        assert_eq!(f.len(), 1);
        assert_eq!(f.irreducible_blocks(), vec![1, 2]);
        assert!(f.touches_irreducible(LoopId(0)));
    }

    #[test]
    fn unreachable_and_out_of_range() {
        // 3 is unreachable and jumps into the loop; 7 is out of range.
        let succs = vec![vec![1], vec![1, 2, 7], vec![], vec![1]];
        let f = forest(&succs);
        assert_eq!(f.loops[0].blocks, vec![1]);
        assert_eq!(f.loops[0].exit_blocks, vec![2]);
        assert!(!f.contains(LoopId(0), 3));
        assert!(!f.contains(LoopId(9), 1));
        assert_eq!(f.loop_for(99), None);
        let f = find_loops(&succs, &DomTree::post_dominators(&succs));
        assert!(f.is_empty());
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        // n nested self-contained loops: block i -> i+1 (and back edge
        // from the mirror block), like n nested do-whiles.
        let n = 2_000u32;
        let total = 2 * n + 1;
        let mut succs: Vec<Vec<u32>> = vec![Vec::new(); total as usize];
        for i in 0..n {
            succs[i as usize] = vec![i + 1];
        }
        // block n is the innermost body; blocks n+1.. are latches going
        // outward: latch for header (n - k) is block n + k.
        succs[n as usize] = vec![n, n + 1];
        for k in 1..n {
            let b = n + k;
            succs[b as usize] = vec![n - k, b + 1];
        }
        let f = forest(&succs);
        assert_eq!(f.len(), n as usize);
        assert_eq!(f.depth_of(n), n);
    }

    /// Natural loop of header h: h plus everything reaching a latch
    /// without passing through h (reachable blocks only).
    fn naive_loop(succs: &[Vec<u32>], h: u32, latches: &[u32]) -> Vec<u32> {
        let reach = reachable(succs, 0);
        let preds = predecessors(succs);
        let mut inl = vec![false; succs.len()];
        inl[h as usize] = true;
        let mut work: Vec<u32> = latches.to_vec();
        while let Some(b) = work.pop() {
            if inl[b as usize] || !reach[b as usize] {
                continue;
            }
            inl[b as usize] = true;
            work.extend(&preds[b as usize]);
        }
        (0..succs.len() as u32)
            .filter(|&b| inl[b as usize])
            .collect()
    }

    fn graph() -> impl Strategy<Value = Vec<Vec<u32>>> {
        (1usize..40).prop_flat_map(|n| {
            prop::collection::vec(prop::collection::vec(0..(n as u32 + 1), 0..4), n)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 400,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn loop_properties(succs in graph()) {
            let dom = DomTree::dominators(&succs, 0);
            let f = find_loops(&succs, &dom);
            let n = succs.len() as u32;
            let rpo = dom.rpo();
            let pos = |b: u32| rpo.iter().position(|&x| x == b).unwrap();
            for (i, l) in f.loops.iter().enumerate() {
                let id = LoopId(i as u32);
                // Header first, blocks in RPO, all dominated by the header.
                prop_assert_eq!(l.blocks[0], l.header);
                for w in l.blocks.windows(2) {
                    prop_assert!(pos(w[0]) < pos(w[1]));
                }
                for &b in &l.blocks {
                    prop_assert!(dom.dominates(l.header, b));
                    prop_assert!(f.contains(id, b));
                }
                // Same blocks as the textbook natural loop.
                let mut sorted = l.blocks.clone();
                sorted.sort_unstable();
                prop_assert_eq!(sorted, naive_loop(&succs, l.header, &l.latches));
                // Children are subsets; depth consistent.
                for &c in &l.children {
                    let cd = &f.loops[c.index()];
                    prop_assert_eq!(cd.parent, Some(id));
                    prop_assert_eq!(cd.depth, l.depth + 1);
                    for &b in &cd.blocks {
                        prop_assert!(l.blocks.contains(&b));
                    }
                    prop_assert!(!cd.blocks.contains(&l.header));
                }
                if i > 0 {
                    prop_assert!(pos(f.loops[i - 1].header) < pos(l.header));
                }
                // Exits.
                for &e in &l.exit_blocks {
                    prop_assert!(!f.contains(id, e));
                }
                for &b in &l.exiting_blocks {
                    prop_assert!(valid_succs(&succs, b).any(|s| !f.contains(id, s)));
                }
                let _ = preheader_of(&f, id, &succs);
            }
            // loop_for is the innermost loop containing the block.
            for b in 0..n {
                let innermost = f.ids()
                    .filter(|&l| f.loops[l.index()].blocks.contains(&b))
                    .max_by_key(|&l| f.loops[l.index()].depth);
                prop_assert_eq!(f.loop_for(b), innermost);
                for l in f.ids() {
                    prop_assert_eq!(f.contains(l, b), f.loops[l.index()].blocks.contains(&b));
                }
            }
            // Irreducible edges are retreating edges between blocks of
            // one region.
            let irr = f.irreducible_blocks();
            for &(u, v) in f.irreducible_edges() {
                prop_assert!(!dom.dominates(v, u));
                prop_assert!(irr.contains(&u) && irr.contains(&v));
            }
            prop_assert_eq!(irr.is_empty(), f.irreducible_edges().is_empty());
            // Every loop appears once in the simplify order, children
            // before parents.
            let order = f.simplify_order();
            prop_assert_eq!(order.len(), f.len());
            for (i, &l) in order.iter().enumerate() {
                if let Some(p) = f.loops[l.index()].parent {
                    prop_assert!(order[i..].contains(&p));
                }
            }
        }
    }
}
