//! Graph algorithms on CFGs given as successor lists (`succs[b]` lists the
//! successors of block `b`): dominators, post-dominators with a virtual exit,
//! natural loops and their nesting, irreducibility, and LoopSimplify.
//!
//! Conventions shared by every algorithm in this module:
//! * blocks are dense `u32` ids indexing `succs`; block 0 is the function
//!   entry unless an entry is passed explicitly;
//! * successor ids that are out of range (`>= succs.len()`) are ignored;
//! * blocks unreachable from the entry are normal and take part in nothing;
//! * nothing recurses (CFGs can have 100k blocks) and nothing panics.
//!
//! The algorithms take any [`Graph`]: a [`Csr`] (what the analysis builds:
//! two allocations per graph instead of one per block) or plain
//! `Vec<Vec<u32>>` lists (tests, small local graphs).

pub mod dom;
pub mod loops;
pub mod simplify;

use std::ops::Index;

/// "No value" marker in dense `u32` tables.
pub(crate) const NONE: u32 = u32::MAX;

/// Successor lists indexed by dense block ids.
pub trait Graph {
    /// Number of blocks (`succs.len()`).
    fn num_blocks(&self) -> usize;
    /// The successors of `b` as listed (out-of-range ids included); empty
    /// when `b` itself is out of range.
    fn succs_of(&self, b: u32) -> &[u32];
}

impl Graph for [Vec<u32>] {
    fn num_blocks(&self) -> usize {
        self.len()
    }
    fn succs_of(&self, b: u32) -> &[u32] {
        self.get(b as usize).map_or(&[], |v| v.as_slice())
    }
}

impl Graph for Vec<Vec<u32>> {
    fn num_blocks(&self) -> usize {
        self.as_slice().num_blocks()
    }
    fn succs_of(&self, b: u32) -> &[u32] {
        self.as_slice().succs_of(b)
    }
}

impl<const N: usize> Graph for [Vec<u32>; N] {
    fn num_blocks(&self) -> usize {
        self.as_slice().num_blocks()
    }
    fn succs_of(&self, b: u32) -> &[u32] {
        self.as_slice().succs_of(b)
    }
}

impl Graph for Csr {
    fn num_blocks(&self) -> usize {
        self.len()
    }
    fn succs_of(&self, b: u32) -> &[u32] {
        self.get(b as usize).unwrap_or(&[])
    }
}

/// Adjacency lists in compressed sparse row form: the lists of all blocks
/// one after the other in one vector, and where each starts. Indexing
/// (`csr[b]`) gives block `b`'s list as a slice, like `Vec<Vec<u32>>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Csr {
    /// `targets[start[b]..start[b + 1]]` is the list of block `b`; one
    /// more entry than blocks (empty for a graph with no block).
    start: Vec<u32>,
    targets: Vec<u32>,
}

impl Csr {
    /// The lists given one per block, in order.
    pub fn from_lists<I, J>(lists: I) -> Csr
    where
        I: IntoIterator<Item = J>,
        J: IntoIterator<Item = u32>,
    {
        let lists = lists.into_iter();
        let mut start = Vec::with_capacity(lists.size_hint().0 + 1);
        let mut targets = Vec::with_capacity(lists.size_hint().0 * 2);
        start.push(0);
        for l in lists {
            targets.extend(l);
            start.push(targets.len() as u32);
        }
        Csr { start, targets }
    }

    /// `n` lists from `(block, entry)` pairs: each block's list holds its
    /// entries in the order given. Pairs with `block >= n` are ignored.
    pub fn from_pairs(n: usize, pairs: &[(u32, u32)]) -> Csr {
        let mut start = vec![0u32; n + 1];
        for &(b, _) in pairs {
            if let Some(c) = start.get_mut(b as usize + 1).filter(|_| (b as usize) < n) {
                *c += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill: Vec<u32> = start[..n].to_vec();
        let mut targets = vec![0u32; start[n] as usize];
        for &(b, t) in pairs {
            if let Some(f) = fill.get_mut(b as usize) {
                targets[*f as usize] = t;
                *f += 1;
            }
        }
        Csr { start, targets }
    }

    /// Number of blocks.
    pub(crate) fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    /// The list of block `b`, `None` when `b` is out of range.
    pub fn get(&self, b: usize) -> Option<&[u32]> {
        let (&s, &e) = (self.start.get(b)?, self.start.get(b + 1)?);
        self.targets.get(s as usize..e as usize)
    }

    /// The lists of all blocks, in block order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &[u32]> + ExactSizeIterator + '_ {
        self.start.windows(2).map(|w| {
            self.targets
                .get(w[0] as usize..w[1] as usize)
                .unwrap_or(&[])
        })
    }

    /// The reversed graph with one entry per edge: a block reached twice
    /// from one block lists it twice (as LLVM's predecessor lists do).
    /// Each list is in ascending order. Out-of-range targets are ignored.
    pub fn reversed<G: Graph + ?Sized>(g: &G) -> Csr {
        reverse(g, false)
    }

    /// The reversed graph with each predecessor once per block (see
    /// [`predecessors`]).
    pub fn reversed_dedup<G: Graph + ?Sized>(g: &G) -> Csr {
        reverse(g, true)
    }

    /// The lists as vectors.
    #[cfg(test)]
    pub fn to_lists(&self) -> Vec<Vec<u32>> {
        self.iter().map(|l| l.to_vec()).collect()
    }
}

impl Index<usize> for Csr {
    type Output = [u32];
    /// Panics when `b` is out of range, like indexing a `Vec<Vec<u32>>`.
    fn index(&self, b: usize) -> &[u32] {
        let (s, e) = (self.start[b] as usize, self.start[b + 1] as usize);
        &self.targets[s..e]
    }
}

/// Counting sort of the edges by target; sources come out ascending.
fn reverse<G: Graph + ?Sized>(g: &G, dedup: bool) -> Csr {
    let n = g.num_blocks();
    let mut count = vec![0u32; n + 1];
    for b in 0..n as u32 {
        for &s in g.succs_of(b) {
            if (s as usize) < n {
                count[s as usize + 1] += 1;
            }
        }
    }
    for i in 0..n {
        count[i + 1] += count[i];
    }
    let mut fill: Vec<u32> = count[..n].to_vec();
    let mut targets = vec![0u32; count[n] as usize];
    for b in 0..n as u32 {
        for &s in g.succs_of(b) {
            if let Some(f) = fill.get_mut(s as usize) {
                targets[*f as usize] = b;
                *f += 1;
            }
        }
    }
    let mut csr = Csr {
        start: count,
        targets,
    };
    if dedup {
        // Blocks are visited in ascending order, so the duplicates of an
        // edge are adjacent in its target's list: squeeze them out.
        let mut w = 0usize;
        let mut begin = 0usize;
        for b in 0..n {
            let end = csr.start[b + 1] as usize;
            let mut last = NONE;
            for r in begin..end {
                let p = csr.targets[r];
                if p != last {
                    csr.targets[w] = p;
                    w += 1;
                    last = p;
                }
            }
            begin = end;
            csr.start[b + 1] = w as u32;
        }
        csr.targets.truncate(w);
    }
    csr
}

/// Predecessor lists of all blocks, indexed by block id. Each list is in
/// ascending block order and holds each predecessor once, however many edges
/// it has to the block. Out-of-range successor ids are ignored.
pub fn predecessors<G: Graph + ?Sized>(succs: &G) -> Csr {
    Csr::reversed_dedup(succs)
}

/// Depth-first post-order of the blocks reachable from `entry`, successors
/// visited in listed order. Empty when `entry` is out of range. Iterative.
pub fn post_order<G: Graph + ?Sized>(succs: &G, entry: u32) -> Vec<u32> {
    let n = succs.num_blocks();
    let mut order = Vec::new();
    if entry as usize >= n {
        return order;
    }
    let mut visited = vec![false; n];
    // (block, index of the next successor to look at)
    let mut stack: Vec<(u32, usize)> = vec![(entry, 0)];
    visited[entry as usize] = true;
    while let Some(top) = stack.last_mut() {
        let (b, i) = *top;
        let ss = succs.succs_of(b);
        if i < ss.len() {
            top.1 += 1;
            let s = ss[i];
            if let Some(v) = visited.get_mut(s as usize) {
                if !*v {
                    *v = true;
                    stack.push((s, 0));
                }
            }
        } else {
            order.push(b);
            stack.pop();
        }
    }
    order
}

/// Reverse post-order of the blocks reachable from `entry` (successors
/// visited in listed order). `entry` comes first; every block comes after
/// its DFS-tree parent, and after each of its dominators.
pub fn reverse_post_order<G: Graph + ?Sized>(succs: &G, entry: u32) -> Vec<u32> {
    let mut order = post_order(succs, entry);
    order.reverse();
    order
}

/// `reachable[b]`: block `b` can be reached from `entry`.
pub fn reachable<G: Graph + ?Sized>(succs: &G, entry: u32) -> Vec<bool> {
    let n = succs.num_blocks();
    let mut seen = vec![false; n];
    if entry as usize >= n {
        return seen;
    }
    seen[entry as usize] = true;
    let mut work = vec![entry];
    while let Some(b) = work.pop() {
        for &s in succs.succs_of(b) {
            if let Some(v) = seen.get_mut(s as usize) {
                if !*v {
                    *v = true;
                    work.push(s);
                }
            }
        }
    }
    seen
}

/// Successors of `b` that are in range, in listed order (duplicates kept).
pub(crate) fn valid_succs<G: Graph + ?Sized>(succs: &G, b: u32) -> impl Iterator<Item = u32> + '_ {
    let n = succs.num_blocks();
    succs
        .succs_of(b)
        .iter()
        .copied()
        .filter(move |&s| (s as usize) < n)
}


/// The successor lists of the blocks of `func`.
pub(crate) fn successor_graph(func: &crate::ir::Function) -> Csr {
    Csr::from_lists(
        func.blocks
            .iter()
            .map(|b| b.term.kind.successors().map(|s| s.0)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preds_dedup_and_ignore_out_of_range() {
        let succs = vec![vec![1, 1, 2, 7], vec![2], vec![0, 2], vec![]];
        assert_eq!(
            predecessors(&succs).to_lists(),
            vec![vec![2], vec![0], vec![0, 1, 2], vec![]]
        );
        assert_eq!(
            Csr::reversed(&succs).to_lists(),
            vec![vec![2], vec![0, 0], vec![0, 1, 2], vec![]]
        );
        let csr = Csr::from_lists(succs.iter().map(|l| l.iter().copied()));
        assert_eq!(csr.to_lists(), succs);
        assert_eq!(csr.len(), 4);
        assert_eq!(&csr[2], &[0, 2]);
        assert_eq!(csr.get(4), None);
        assert_eq!(Csr::default().len(), 0);
        let pairs = Csr::from_pairs(3, &[(2, 7), (0, 1), (2, 5), (9, 9), (0, 4)]);
        assert_eq!(pairs.to_lists(), vec![vec![1, 4], vec![], vec![7, 5]]);
        assert!(Csr::default().get(0).is_none());
    }

    #[test]
    fn rpo_lists_entry_first_and_skips_unreachable() {
        // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3; 4 unreachable
        let succs = vec![vec![1, 2], vec![3], vec![3], vec![], vec![0]];
        assert_eq!(post_order(&succs, 0), vec![3, 1, 2, 0]);
        assert_eq!(reverse_post_order(&succs, 0), vec![0, 2, 1, 3]);
        assert_eq!(reachable(&succs, 0), vec![true, true, true, true, false]);
        assert!(reverse_post_order(&succs, 9).is_empty());
        assert!(reverse_post_order(&[], 0).is_empty());
    }

    #[test]
    fn deep_chain_does_not_overflow() {
        let n = 200_000u32;
        let succs: Vec<Vec<u32>> = (0..n)
            .map(|b| if b + 1 < n { vec![b + 1] } else { vec![] })
            .collect();
        let rpo = reverse_post_order(&succs, 0);
        assert_eq!(rpo.len(), n as usize);
        assert_eq!(rpo[0], 0);
        assert_eq!(*rpo.last().unwrap(), n - 1);
    }
}
