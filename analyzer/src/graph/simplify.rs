//! LoopSimplify normal form on the IR.
//!
//! Algorithm: LLVM's `LoopSimplify` pass (`llvm/lib/Transforms/Utils/
//! LoopSimplify.cpp`, `simplifyOneLoop`), restricted to its CFG part: for
//! each loop, inner loops before the loops containing them,
//! (a) insert a preheader (`InsertPreheaderForLoop`),
//! (b) give every exit block only in-loop predecessors
//!     (`formDedicatedExitBlocks`),
//! (c) merge several back edges into one latch block
//!     (`insertUniqueBackedgeBlock`).
//! New blocks are appended (existing block ids never change) and put into
//! the loop LLVM's `SplitBlockPredecessors` would put them in, so the loop
//! nest is updated incrementally instead of being recomputed: splitting
//! edges never creates or destroys a cycle.
//!
//! Not modelled (they need values, not just the CFG): `separateNestedLoop`
//! (splitting a multi-latch loop into two nested loops when a header PHI
//! has itself as an incoming value), the folding of exiting branches to a
//! common exit, and PHI simplification. Loops that touch an irreducible
//! region ([`LoopForest::touches_irreducible`]) are left alone. Unreachable
//! blocks are neither counted as predecessors nor rewritten.

#[cfg(test)]
use super::dom::DomTree;
#[cfg(test)]
use super::loops::find_loops;
use super::loops::LoopForest;
use super::{predecessors, Csr, Graph, NONE};
use crate::ir::{Block, BlockId, Function, TermKind, Terminator};

/// Why a block was added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddedKind {
    /// Named "preheader": jumps to the loop header; the header's outside
    /// predecessors jump to it instead.
    Preheader,
    /// Named "loopexit": a dedicated exit block in front of an exit block
    /// that was also reached from outside the loop.
    LoopExit,
    /// Named "backedge": the single latch of a loop that had several.
    Backedge,
}

/// One block added by [`loop_simplify`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedBlock {
    pub block: BlockId,
    pub kind: AddedKind,
    /// Header of the loop being simplified when the block was added.
    pub header: BlockId,
    /// The block's only successor.
    pub target: BlockId,
}

/// What [`loop_simplify`] changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimplifyReport {
    /// Added blocks, in creation (= block id) order.
    pub added: Vec<AddedBlock>,
    /// Headers of loops left alone because they touch an irreducible
    /// region, in reverse post-order of the headers.
    pub skipped_irreducible: Vec<BlockId>,
    /// The function has a branch to a block id that does not exist (a
    /// front-end bug). Appending blocks would give such a branch a target,
    /// so the function was left unchanged.
    pub invalid_targets: bool,
}

impl SimplifyReport {
    /// Nothing was added.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
    }
}

/// Brings every reducible loop of `func` into LoopSimplify form (see the
/// module documentation). Idempotent. A function with a branch to a
/// non-existent block is left unchanged ([`SimplifyReport::invalid_targets`]).
#[cfg(test)]
pub fn loop_simplify(func: &mut Function) -> SimplifyReport {
    let succs = func.successors();
    if has_invalid_targets(&succs) {
        return SimplifyReport {
            invalid_targets: true,
            ..SimplifyReport::default()
        };
    }
    let dom = DomTree::dominators(&succs, 0);
    let forest = find_loops(&succs, &dom);
    loop_simplify_with(func, &succs, &forest)
}

fn has_invalid_targets<G: Graph + ?Sized>(succs: &G) -> bool {
    let n = succs.num_blocks();
    (0..n as u32).any(|b| succs.succs_of(b).iter().any(|&s| s as usize >= n))
}

/// [`loop_simplify`] with the successor lists and the loop nest of `func`
/// as it is (`find_loops` on the dominator tree of `succs` from block 0),
/// for a caller that already has them.
pub fn loop_simplify_with<G: Graph + ?Sized>(
    func: &mut Function,
    succs: &G,
    forest: &LoopForest,
) -> SimplifyReport {
    if has_invalid_targets(succs) {
        return SimplifyReport {
            invalid_targets: true,
            ..SimplifyReport::default()
        };
    }
    let mut report = SimplifyReport {
        skipped_irreducible: forest
            .ids()
            .filter(|&l| forest.touches_irreducible(l))
            .map(|l| BlockId(forest[l].header))
            .collect(),
        ..SimplifyReport::default()
    };
    if forest.is_empty() {
        return report;
    }
    let mut st = State::new(forest, succs);
    for l in forest.simplify_order() {
        if !forest.touches_irreducible(l) {
            st.simplify_one(func, l.0, &mut report);
        }
    }
    report
}

/// The loop nest and predecessor lists, kept up to date while blocks are
/// added.
struct State<'f> {
    forest: &'f LoopForest,
    /// Innermost loop of every block (`NONE` outside loops), new blocks
    /// included.
    loop_of: Vec<u32>,
    parent: Vec<u32>,
    depth: Vec<u32>,
    header: Vec<u32>,
    /// Blocks of each loop (subloops included): the forest's order, then
    /// added blocks in creation order, like LLVM's `addBasicBlockToLoop`.
    blocks: Vec<Vec<u32>>,
    /// Predecessors of every block, each once, before any block was added
    /// (the reachable ones count)...
    preds: Csr,
    /// ...and the reachable predecessors of the blocks whose list changed
    /// since, or that were added.
    changed_preds: rustc_hash::FxHashMap<u32, Vec<u32>>,
}

impl<'f> State<'f> {
    fn new<G: Graph + ?Sized>(forest: &'f LoopForest, succs: &G) -> State<'f> {
        let n = succs.num_blocks();
        let loop_of = (0..n as u32)
            .map(|b| forest.loop_for(b).map_or(NONE, |l| l.0))
            .collect();
        let preds = predecessors(succs);
        State {
            forest,
            loop_of,
            parent: forest
                .loops
                .iter()
                .map(|l| l.parent.map_or(NONE, |p| p.0))
                .collect(),
            depth: forest.loops.iter().map(|l| l.depth).collect(),
            header: forest.loops.iter().map(|l| l.header).collect(),
            blocks: forest.loops.iter().map(|l| l.blocks.clone()).collect(),
            preds,
            changed_preds: Default::default(),
        }
    }

    /// `block` is in loop `l` (or one of its subloops).
    fn contains(&self, l: u32, block: u32) -> bool {
        let d = self.depth[l as usize];
        let mut c = self.loop_of.get(block as usize).copied().unwrap_or(NONE);
        while c != NONE {
            if c == l {
                return true;
            }
            if self.depth[c as usize] <= d {
                return false;
            }
            c = self.parent[c as usize];
        }
        false
    }

    /// Appends a block named `name` that jumps to `target`, makes
    /// `redirect` jump to it instead of `target`, and records it in loop
    /// `in_loop` (and its ancestors). `keep` are the predecessors of
    /// `target` that stay.
    #[allow(clippy::too_many_arguments)]
    fn split(
        &mut self,
        func: &mut Function,
        name: &'static str,
        target: u32,
        redirect: &[u32],
        keep: Vec<u32>,
        in_loop: u32,
        kind: AddedKind,
        header: u32,
        report: &mut SimplifyReport,
    ) {
        let new = func.blocks.len() as u32;
        let mut block = Block::new(name, None);
        block.term = Terminator {
            kind: TermKind::Goto(BlockId(target)),
            span: None,
            cond: None,
        };
        func.blocks.push(block);
        for &p in redirect {
            if let Some(b) = func.blocks.get_mut(p as usize) {
                b.term.kind.retarget(BlockId(target), BlockId(new));
            }
        }
        let mut keep = keep;
        keep.push(new);
        self.changed_preds.insert(target, keep);
        self.changed_preds.insert(new, redirect.to_vec());
        self.loop_of.resize(new as usize, NONE);
        self.loop_of.push(in_loop);
        let mut c = in_loop;
        while c != NONE {
            self.blocks[c as usize].push(new);
            c = self.parent[c as usize];
        }
        report.added.push(AddedBlock {
            block: BlockId(new),
            kind,
            header: BlockId(header),
            target: BlockId(target),
        });
    }

    fn simplify_one(&mut self, func: &mut Function, l: u32, report: &mut SimplifyReport) {
        let h = self.header[l as usize];

        // (a) Preheader.
        let (inside, outside) = self.partition(l, h);
        if !outside.is_empty() {
            let is_preheader = match outside.as_slice() {
                [o] => {
                    let mut ss = valid_succs(func, *o);
                    ss.next() == Some(h) && ss.next().is_none()
                }
                _ => false,
            };
            if !is_preheader {
                let parent = self.parent[l as usize];
                self.split(
                    func,
                    "preheader",
                    h,
                    &outside,
                    inside,
                    parent,
                    AddedKind::Preheader,
                    h,
                    report,
                );
            }
        }
        // The header has no reachable outside predecessor only when it is
        // the entry block; LLVM IR cannot express that (the entry has no
        // predecessors), and a preheader would be unreachable: skip it.

        // (b) Dedicated exits.
        let mut visited: Vec<u32> = Vec::new();
        // The loop's own block list does not change while its exits are
        // split (new blocks go to the loops around it), but it is put back
        // with anything added to it behind it anyway.
        let body = std::mem::take(&mut self.blocks[l as usize]);
        let mut ss: Vec<u32> = Vec::new();
        for &b in &body {
            ss.clear();
            ss.extend(valid_succs(func, b));
            for &s in &ss {
                if self.contains(l, s) || visited.contains(&s) {
                    continue;
                }
                visited.push(s);
                let (inside, outside) = self.partition(l, s);
                if outside.is_empty() || inside.is_empty() {
                    continue;
                }
                // The innermost loop containing both the exit and the loop.
                let mut m = self.parent[l as usize];
                while m != NONE && !self.contains(m, s) {
                    m = self.parent[m as usize];
                }
                self.split(
                    func,
                    "loopexit",
                    s,
                    &inside,
                    outside,
                    m,
                    AddedKind::LoopExit,
                    h,
                    report,
                );
            }
        }

        let added = std::mem::replace(&mut self.blocks[l as usize], body);
        self.blocks[l as usize].extend(added);

        // (c) Single latch.
        let (latches, others) = self.partition(l, h);
        if latches.len() > 1 {
            self.split(
                func,
                "backedge",
                h,
                &latches,
                others,
                l,
                AddedKind::Backedge,
                h,
                report,
            );
        }
    }

    /// Reachable predecessors of `b`: (inside loop `l`, outside).
    fn partition(&self, l: u32, b: u32) -> (Vec<u32>, Vec<u32>) {
        match self.changed_preds.get(&b) {
            Some(p) => p.iter().partition(|&&p| self.contains(l, p)),
            None => self
                .preds
                .succs_of(b)
                .iter()
                .filter(|&&p| self.forest.is_reachable(p))
                .partition(|&&p| self.contains(l, p)),
        }
    }
}

/// In-range successors of `b`, in terminator order.
fn valid_succs(func: &Function, b: u32) -> impl Iterator<Item = u32> + '_ {
    let n = func.blocks.len();
    func.blocks
        .get(b as usize)
        .into_iter()
        .flat_map(|blk| blk.term.kind.successors())
        .map(|s| s.0)
        .filter(move |&s| (s as usize) < n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::loops::find_loops;
    use crate::ir::Lang;
    use crate::source::Span;
    use proptest::prelude::*;

    /// A function whose block `b` has the successors `succs[b]`: none is a
    /// return, one a goto, two a branch, more a switch.
    fn func(succs: &[Vec<u32>]) -> Function {
        let blocks = succs
            .iter()
            .enumerate()
            .map(|(i, ss)| {
                let mut b = Block::new(if i == 0 { "entry" } else { "bb" }, None);
                let ids: Vec<BlockId> = ss.iter().map(|&s| BlockId(s)).collect();
                b.term.kind = match ids.as_slice() {
                    [] => TermKind::Return,
                    [t] => TermKind::Goto(*t),
                    [t, e] => TermKind::Branch {
                        then: *t,
                        else_: *e,
                    },
                    _ => TermKind::Switch { targets: ids },
                };
                b
            })
            .collect();
        Function {
            name: "f".into(),
            lang: Lang::C,
            span: Span::new(0, 0),
            name_span: Span::new(0, 0),
            blocks,
            vars: Vec::new(),
            builtins: Vec::new(),
            source_loops: Vec::new(),
            exprs: Vec::new(),
            omp_regions: Vec::new(),
            omp_sections: Vec::new(),
            omp_directives: Vec::new(),
            omp_sync: Vec::new(),
            params: Vec::new(),
            callees: Vec::new(),
            readnone_callees: Vec::new(),
            declared_elsewhere: Vec::new(),
            undeclared_references: Vec::new(),
            syntax_error: None,
            outline: false,
            skeleton: false,
        }
    }

    fn kinds(r: &SimplifyReport) -> Vec<(u32, AddedKind, u32, u32)> {
        r.added
            .iter()
            .map(|a| (a.block.0, a.kind, a.header.0, a.target.0))
            .collect()
    }

    /// Checks the LoopSimplify form of every loop that is not skipped.
    fn assert_simplified(f: &Function) {
        let succs = f.successors();
        let dom = DomTree::dominators(&succs, 0);
        let forest = find_loops(&succs, &dom);
        let preds = predecessors(&succs);
        for l in forest.ids() {
            if forest.touches_irreducible(l) {
                continue;
            }
            let data = &forest[l];
            let has_outside = preds[data.header as usize]
                .iter()
                .any(|&p| forest.is_reachable(p) && !forest.contains(l, p));
            if has_outside {
                assert!(
                    forest.preheader(l, &succs, &preds).is_some(),
                    "no preheader for loop at {}",
                    data.header
                );
            }
            assert_eq!(data.latches.len(), 1, "latches of loop at {}", data.header);
            for &e in &data.exit_blocks {
                for &p in &preds[e as usize] {
                    assert!(
                        !forest.is_reachable(p) || forest.contains(l, p),
                        "exit {e} of loop at {} has outside pred {p}",
                        data.header
                    );
                }
            }
        }
    }

    #[test]
    fn simplified_for_loop_is_left_alone() {
        let mut f = func(&[vec![1], vec![2, 4], vec![3], vec![1], vec![]]);
        let r = loop_simplify(&mut f);
        assert!(r.is_empty());
        assert_eq!(f.blocks.len(), 5);
    }

    #[test]
    fn preheader_for_two_entries() {
        // 0 -> 1 | 2; 1 -> 2; 2 (header) -> 2 | 3; 3 end
        let mut f = func(&[vec![1, 2], vec![2], vec![2, 3], vec![]]);
        let r = loop_simplify(&mut f);
        // 4: preheader of 2, reached from 0 and 1.
        assert_eq!(kinds(&r), vec![(4, AddedKind::Preheader, 2, 2)]);
        assert_eq!(
            f.successors(),
            vec![vec![1, 4], vec![4], vec![2, 3], vec![], vec![2]]
        );
        let pre = &f.blocks[4];
        assert_eq!(pre.name, "preheader");
        assert!(pre.origin.is_none() && pre.insts.is_empty() && pre.term.span.is_none());
        assert_simplified(&f);
        assert!(loop_simplify(&mut f).is_empty());
    }

    #[test]
    fn preheader_when_entry_branches_to_header() {
        // 0 -> 1 | 2; 1 (header) -> 1 | 2; 2 end. 0 has two successors.
        let mut f = func(&[vec![1, 2], vec![1, 2], vec![]]);
        let r = loop_simplify(&mut f);
        // Preheader 3; then exit 2 is reached from 0 (outside) and 1
        // (inside): loopexit 4.
        assert_eq!(
            kinds(&r),
            vec![
                (3, AddedKind::Preheader, 1, 1),
                (4, AddedKind::LoopExit, 1, 2)
            ]
        );
        assert_eq!(
            f.successors(),
            vec![vec![3, 2], vec![1, 4], vec![], vec![1], vec![2]]
        );
        assert_simplified(&f);
        assert!(loop_simplify(&mut f).is_empty());
    }

    #[test]
    fn backedge_for_two_latches() {
        // 0 -> 1; 1 -> 2 | 5; 2 -> 3 | 4; 3 -> 1; 4 -> 1; 5 end
        let mut f = func(&[vec![1], vec![2, 5], vec![3, 4], vec![1], vec![1], vec![]]);
        let r = loop_simplify(&mut f);
        assert_eq!(kinds(&r), vec![(6, AddedKind::Backedge, 1, 1)]);
        assert_eq!(f.blocks[6].name, "backedge");
        assert_eq!(f.successors()[3], vec![6]);
        assert_eq!(f.successors()[4], vec![6]);
        assert_simplified(&f);
        assert!(loop_simplify(&mut f).is_empty());
    }

    #[test]
    fn nested_loops_inner_first() {
        // Inner loop exits straight to the outer header (like `continue`
        // of the outer loop from the inner one), and has a `break` target
        // shared with the outer loop's exit.
        // 0 -> 1
        // 1 outer header -> 2 | 6
        // 2 -> 3
        // 3 inner header -> 4 | 1   (exit to outer header)
        // 4 -> 3 | 6                (break out of both)
        // 6 end (also the outer exit)
        // 5 unused (unreachable, jumps into the inner loop)
        let mut f = func(&[
            vec![1],
            vec![2, 6],
            vec![3],
            vec![4, 1],
            vec![3, 6],
            vec![3],
            vec![],
        ]);
        let r = loop_simplify(&mut f);
        // Inner (header 3): preheader 2 exists. Exits 1 (preds 0 outside,
        // 3 inside) -> loopexit 7 (in the outer loop); 6 (preds 1 outside,
        // 4 inside) -> loopexit 8 (outside both). Single latch 4.
        // Outer (header 1): no preheader needed (0). Exits: 6 (preds 1
        // and 8; 8 is outside the outer loop) -> loopexit 9 for 1; 8 is
        // dedicated. Latches of 1: 7 only.
        assert_eq!(
            kinds(&r),
            vec![
                (7, AddedKind::LoopExit, 3, 1),
                (8, AddedKind::LoopExit, 3, 6),
                (9, AddedKind::LoopExit, 1, 6),
            ]
        );
        assert_eq!(
            f.successors(),
            vec![
                vec![1],
                vec![2, 9],
                vec![3],
                vec![4, 7],
                vec![3, 8],
                vec![3],
                vec![],
                vec![1],
                vec![6],
                vec![6],
            ]
        );
        assert_simplified(&f);
        assert!(loop_simplify(&mut f).is_empty());
    }

    #[test]
    fn sibling_loops_share_a_block() {
        // Loop A (1) exits directly into loop B's header (3), which is also
        // reached from 0.
        // 0 -> 1 | 3; 1 -> 1 | 3; 3 -> 3 | 4; 4 end
        let mut f = func(&[vec![1, 3], vec![1, 3], vec![], vec![3, 4], vec![]]);
        let r = loop_simplify(&mut f);
        // Top level loops are processed last-first: B (3) gets a
        // preheader 5 for {0, 1}; A (1) gets a preheader 6 for 0; A's exit
        // 5 has preds 0 and 1 -> loopexit 7... but 0 now jumps to 6 and 5.
        assert_eq!(
            kinds(&r),
            vec![
                (5, AddedKind::Preheader, 3, 3),
                (6, AddedKind::Preheader, 1, 1),
                (7, AddedKind::LoopExit, 1, 5),
            ]
        );
        assert_simplified(&f);
        assert!(loop_simplify(&mut f).is_empty());
    }

    #[test]
    fn irreducible_loops_are_skipped() {
        // 0 -> 1 | 2; 1 -> 2; 2 -> 1 | 2 | 3: the self loop on 2 sits in
        // the irreducible cycle 1 <-> 2.
        let mut f = func(&[vec![1, 2], vec![2], vec![1, 2, 3], vec![]]);
        let before = f.successors();
        let r = loop_simplify(&mut f);
        assert!(r.is_empty());
        assert_eq!(r.skipped_irreducible, vec![BlockId(2)]);
        assert_eq!(f.successors(), before);
    }

    #[test]
    fn header_is_entry() {
        // 0 -> 0 | 1; 1 end: no outside predecessor, no preheader.
        let mut f = func(&[vec![0, 1], vec![]]);
        assert!(loop_simplify(&mut f).is_empty());
        let mut f = func(&[]);
        assert!(loop_simplify(&mut f).is_empty());
    }

    #[test]
    fn out_of_range_targets_do_not_panic() {
        let mut f = func(&[vec![1, 9], vec![1, 2, 40], vec![7]]);
        let before = f.successors();
        let r = loop_simplify(&mut f);
        assert!(r.is_empty() && r.invalid_targets);
        assert_eq!(f.successors(), before);
    }

    #[test]
    fn many_loops_scale() {
        // 25k consecutive while loops, each with two latches and a body
        // that also jumps straight to the next loop's header (shared exit).
        // Block 4k: header -> 4k+1 | 4k+4; 4k+1 -> 4k+2 | 4k+3 | 4k+4;
        // 4k+2 -> 4k; 4k+3 -> 4k.
        let k = 25_000u32;
        let mut succs: Vec<Vec<u32>> = Vec::new();
        for i in 0..k {
            let h = 4 * i;
            succs.push(vec![h + 1, h + 4]);
            succs.push(vec![h + 2, h + 3, h + 4]);
            succs.push(vec![h]);
            succs.push(vec![h]);
        }
        succs.push(vec![]);
        let mut f = func(&succs);
        let r = loop_simplify(&mut f);
        // Last loop first: a preheader (the header is entered from the
        // previous loop's header and body) and a backedge; that preheader
        // is then a dedicated exit of the previous loop. Loop 0's header is
        // the entry: no preheader.
        assert_eq!(r.added.len(), 2 * k as usize - 1);
        let pre = r.added.iter().filter(|a| a.kind == AddedKind::Preheader);
        assert_eq!(pre.count(), k as usize - 1);
        assert!(loop_simplify(&mut f).is_empty());
    }

    fn graph() -> impl Strategy<Value = Vec<Vec<u32>>> {
        (1usize..30)
            .prop_flat_map(|n| prop::collection::vec(prop::collection::vec(0..n as u32, 0..4), n))
    }

    fn loop_sets(f: &Function, old: usize) -> Vec<(u32, Vec<u32>, bool)> {
        let succs = f.successors();
        let forest = find_loops(&succs, &DomTree::dominators(&succs, 0));
        let mut v: Vec<(u32, Vec<u32>, bool)> = forest
            .ids()
            .map(|l| {
                let mut b: Vec<u32> = forest[l]
                    .blocks
                    .iter()
                    .copied()
                    .filter(|&b| (b as usize) < old)
                    .collect();
                b.sort_unstable();
                (forest[l].header, b, forest.touches_irreducible(l))
            })
            .collect();
        v.sort();
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 400,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn simplify_is_complete_and_idempotent(succs in graph()) {
            let mut f = func(&succs);
            let old = f.blocks.len();
            let before = loop_sets(&f, old);
            let r = loop_simplify(&mut f);
            prop_assert_eq!(f.blocks.len(), old + r.added.len());
            for (i, a) in r.added.iter().enumerate() {
                prop_assert_eq!(a.block.index(), old + i);
            }
            // Same loops over the original blocks.
            prop_assert_eq!(loop_sets(&f, old), before);
            assert_simplified(&f);
            let after = f.successors();
            let r2 = loop_simplify(&mut f);
            prop_assert!(r2.is_empty(), "second run added {:?}", r2.added);
            prop_assert_eq!(f.successors(), after);
            prop_assert_eq!(r2.skipped_irreducible, r.skipped_irreducible);
        }
    }
}
