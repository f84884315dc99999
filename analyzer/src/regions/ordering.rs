//! Memory ordering under parallel regions and sections (SEMANTICS.md §6.3),
//! computed the way CSAMemopOrdering does it (docs/compiler-notes.md §3).
//!
//! For every pair of ordering memory operations A (earlier) and B (later on
//! some path, possibly around one loop backedge) this module says whether
//! the ordering edge A -> B is kept, dropped because of a region, or not
//! needed at all, and it finds the inconsistencies that make the compiler
//! print `!! WARNING: BAD PARALLEL SECTION INTRINSICS !!`.
//!
//! # The walk
//! For each memory operation B the compiler walks backwards over the memop
//! CFG with one state per region: none seen (N), not in section (NS),
//! outside of section (OS), crossed sections (CS), left region (LR). Each
//! region/section intrinsic met on the way changes the state of its region:
//!
//! | state | region entry | region exit | section entry | section exit |
//! |-------|--------------|-------------|---------------|--------------|
//! | N     | LR           | NS          | OS            | NS           |
//! | OS    | LR           | fail        | fail          | CS           |
//! | CS    | fail         | fail        | OS            | fail         |
//! | NS, LR| stay         | stay        | stay          | stay         |
//!
//! Blocks are visited in decreasing reverse-post-order number, so a block's
//! state is the merge of the states its successors bring (the compiler's
//! rule: equal states stay; N against anything but OS gives the other
//! state; anything else is a conflict). A memory operation A met while some
//! region is in CS is dropped; otherwise A -> B needs an edge unless neither
//! writes, the alias model says they never alias (`alias::may_alias`, calls
//! through `alias::call_may_touch`), or A is a prefetch.
//!
//! Loop contexts are as in the compiler: the function, and each loop L with
//! at most one backedge crossed, the backedge of the child of L that holds
//! B. We run the equivalent walks: one walk without backedges over the whole
//! function (its states inside any loop are the ones the loop's own context
//! computes, because a path between two blocks of a loop that takes no
//! backedge never leaves the loop), then one walk per loop H containing B,
//! started at H's latches with the state at the top of H's header and
//! restricted to H ("carried by H": the compiler's context of H's parent).
//! States before and after a crossing never merge.
//!
//! So, like the compiler's walk, we never pair A and B when every path
//! from A to B takes the backedge of a loop that does not hold B, or more
//! than one backedge: an operation in a `for` body and one after the loop
//! (the header leaves the loop), or one in an inner `for` loop and the next
//! iteration of the outer loop. The compiler orders those through the loop
//! header's ordering phi (notes §3, §10), not by a direct decision, so no
//! region drops them and they are not listed. Loops that leave from the
//! latch (`do ... while`) are walked through.
//!
//! # Inconsistencies
//! Recorded, with B, the block where it shows, the region and the paths
//! that disagree (found afterwards by a search over (block, state) pairs):
//! * a failed transition (compiler: warning and retry);
//! * a merge the compiler's rule rejects (compiler: warning and retry);
//! * **SEMANTICS.md only**: a pair A, B whose paths with the same
//!   backedges disagree on whether the region drops the edge (some paths in
//!   CS, others not). The compiler merges N with CS into CS and silently
//!   drops the edge on every path (the documents' own error example). Next
//!   to the compiler's merged state we therefore keep, per region, the set
//!   of states over all paths; the same set also catches a transition that
//!   fails on one path only.
//!
//! The compiler also walks back from the function's return (every memory
//! operation is ordered before it), which finds what no memory operation
//! after a problem would, e.g. a section opened on one path just before
//! returning; those walks list nothing.
//!
//! SEMANTICS.md makes any inconsistency (§6.2 membership or §6.3 ordering)
//! BAD PARALLEL SECTION INTRINSICS after which every region and section of
//! the function is ignored. We follow the compiler instead: only a failed
//! transition or a rejected merge, in any walk of any region (regions with
//! a §6.2 membership problem included: the compiler knows nothing of
//! membership), makes `regions_ignored` true, and then the final verdicts
//! are computed without regions, as the compiler's retry does;
//! `first_attempt` keeps the verdict with regions. The path-dependent
//! problems the compiler does not notice keep the regions, and their edge
//! is dropped as the compiler's merged state says.
//!
//! # Where we follow SEMANTICS.md rather than the compiler
//! * Prefetches ignore regions and sections always (the compiler: only
//!   inside a loop holding operations a prefetch of its kind orders against,
//!   notes §7); a prefetch is never ordered before anything, and a prefetch
//!   B is ordered after A like a read (our IR has no read/write prefetch
//!   flag, so a read before a prefetch needs no edge).
//! * "Needs an edge" is the alias model of §4: the compiler also orders
//!   every pair involving a call, volatile pairs and more (notes §2, §7).
//! * Pairs are judged one by one. The compiler builds a transitive
//!   reduction and lets a kept chain through a third operation order a pair
//!   that is dropped here (notes §10), and it never lists an operation with
//!   its own previous iteration (an implicit self dependency), so neither do
//!   we.
//! * When an edge is both unneeded and dropped we report it as not needed
//!   (the compiler tests dropping first; either way there is no edge).
//!
//! # Complexity
//! Memory operations of a block that no intrinsic separates start their
//! walks in the same state, so they share one walk per loop context: at most
//! (blocks + intrinsics) × (1 + loop depth) walks, each visiting at most the
//! blocks of its context once, with O(live regions) work per block and per
//! predecessor merge. A region is live for a walk only if B may be inside
//! it or one of its sections (forward reachability from its entries, linear
//! per region); the others provably stay in N/NS, which can neither fail,
//! conflict nor drop anything. A walk stops checking once every path has
//! funnelled into one block whose states are final (NS/LR on every path) or
//! that an earlier walk already explored in the same states (memoised), so
//! straight-line sequences of regions and long runs of sections cost
//! linear, not quadratic, time in practice. Such a walk went on to the
//! headers of the loops holding B (the tops its once-around walks start
//! from): it now takes them from the walk that added the memo key, which
//! found them after the same block in the same states (a deep nest cost
//! its size squared: a 253 KB tiled loop nest of DataRaceBench spent 17%
//! of its analysis there); the worst case is of the
//! compiler's order, O(W × (N + E) × R) for W walks over N blocks and E
//! edges with R regions (the compiler: one walk per memory operation and
//! loop context, M × (1 + depth)). The result lists pairs, so it is O(M²)
//! in output size: with more than [`FULL_LISTING_LIMIT`] ordering
//! operations only pairs inside the same outermost loop are listed, and no
//! more than [`MAX_LISTED_EDGES`] edges are (`listing_truncated` says when
//! something was left out). The inconsistency check always runs on
//! everything.

use super::events::{EventKind, Item, MemopCfg, RegionKey};
use crate::graph::loops::{LoopForest, LoopId};
use crate::graph::Csr;
use crate::ir::{BlockId, Function};
use crate::memory::alias;
use crate::memory::{MemOp, MemOpKind, MemoryInfo, VarFacts};
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BinaryHeap, VecDeque};

/// With at most this many ordering memory operations every pair is listed.
pub const FULL_LISTING_LIMIT: usize = 2_000;
/// The most edges listed for one function.
pub const MAX_LISTED_EDGES: usize = 1_000_000;

const NONE: u32 = u32::MAX;
/// B of the walk from the function's return (not a memory operation).
const RETURN: usize = usize::MAX;

// Compiler states (`SectionStates`), plus POISON after a failure/conflict.
const N: u8 = 0;
const NS: u8 = 1;
const OS: u8 = 2;
const CS: u8 = 3;
const LR: u8 = 4;
const POISON: u8 = 5;

const fn bit(s: u8) -> u8 {
    1 << s
}

/// The per-region state of the backward walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegionState {
    /// No intrinsic of the region between here and B.
    NoneSeen,
    /// A section exit or region exit came first: B is not in a section.
    NotInSection,
    /// B is in a section and this point is before that section's entry.
    OutsideOfSection,
    /// A section exit and entry lie between here and B (edges dropped).
    CrossedSections,
    /// The region entry lies between here and B.
    LeftRegion,
}

impl RegionState {
    fn from_code(c: u8) -> RegionState {
        match c {
            N => RegionState::NoneSeen,
            NS => RegionState::NotInSection,
            OS => RegionState::OutsideOfSection,
            CS => RegionState::CrossedSections,
            _ => RegionState::LeftRegion,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            RegionState::NoneSeen => "no intrinsic of the region",
            RegionState::NotInSection => "not in a section",
            RegionState::OutsideOfSection => "outside of the section",
            RegionState::CrossedSections => "crossed sections",
            RegionState::LeftRegion => "left the region",
        }
    }
}

/// Why an edge is not needed whatever the regions say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NotNeededReason {
    /// Neither operation writes.
    NeitherWrites,
    /// The alias model says they never touch the same memory.
    NoAlias,
    /// A is a prefetch: prefetches are never ordered before anything.
    PrefetchFirst,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The compiler puts an ordering edge A -> B.
    Kept,
    /// The edge would be needed, but the region's sections drop it.
    Dropped {
        region: RegionKey,
    },
    NotNeeded {
        reason: NotNeededReason,
    },
}

/// One pair of ordering memory operations A (`from`) and B (`to`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderingEdge {
    /// Index into `MemoryInfo::ops` of the earlier operation.
    pub from: usize,
    /// Index into `MemoryInfo::ops` of the later operation.
    pub to: usize,
    /// A is reached across a backedge (from an earlier iteration).
    pub loop_carried: bool,
    /// The loop whose backedge is crossed.
    pub carried_by: Option<LoopId>,
    /// The result: without regions when `OrderingInfo::regions_ignored`.
    pub verdict: Verdict,
    /// The verdict with every region and section in place (the compiler's
    /// first attempt, before any retry).
    pub first_attempt: Verdict,
}

/// What kind of inconsistency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// Walking back, an intrinsic the state machine does not allow in
    /// `state` (index into `MemopCfg::events`).
    FailedTransition { event: usize, state: RegionState },
    /// Two successors of `block` bring states the merge rule rejects.
    ConflictingMerge,
    /// Some paths from A to B cross sections of the region and others do
    /// not, through the same backedges (SEMANTICS.md §6.3).
    PathDependent,
}

/// One path of a witness: from the problem's point towards B.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathWitness {
    /// The region's state at the problem's point along this path.
    pub state: RegionState,
    /// The successor of `OrderingProblem::split` this path takes.
    pub via: Option<BlockId>,
    /// Blocks from the point to B's block.
    pub blocks: Vec<BlockId>,
    /// The region's intrinsics on the path, in execution order (indices
    /// into `MemopCfg::events`).
    pub events: Vec<usize>,
}

/// An inconsistency found walking back from B (at most one per region).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderingProblem {
    pub kind: ProblemKind,
    pub region: RegionKey,
    /// The later operation (index into `MemoryInfo::ops`); `None` for the
    /// function's return (the compiler orders every memory operation
    /// before it and walks back from it too).
    pub b: Option<usize>,
    /// B's block (the return block for the return).
    pub b_block: BlockId,
    /// An earlier operation whose ordering with B is affected, if any.
    pub a: Option<usize>,
    /// Where it shows: the merge block, the block of the failing
    /// intrinsic, or A's block.
    pub block: BlockId,
    /// Where the witness paths part.
    pub split: Option<BlockId>,
    /// The backedge crossed, if the walk crossed one.
    pub carried_by: Option<LoopId>,
    /// The compiler notices it (warning and retry without regions);
    /// otherwise only SEMANTICS.md's rule is broken and the compiler
    /// silently drops the edge on every path.
    pub compiler_notices: bool,
    pub paths: Vec<PathWitness>,
}

#[derive(Clone, Debug, Default)]
pub struct OrderingInfo {
    /// Sorted by (to, from, carried_by).
    pub edges: Vec<OrderingEdge>,
    /// At most one per region, in region order.
    pub problems: Vec<OrderingProblem>,
    /// Every region and section of the function is ignored (the compiler
    /// noticed an inconsistency: a problem with `compiler_notices`):
    /// `verdict` is computed without them.
    pub regions_ignored: bool,
    /// Some pairs were not listed (see the module documentation).
    pub listing_truncated: bool,
}

impl OrderingInfo {
    /// The edge A -> B carried by `carried_by` (None: same iteration).
    #[cfg(test)]
    pub fn edge(
        &self,
        from: usize,
        to: usize,
        carried_by: Option<LoopId>,
    ) -> Option<&OrderingEdge> {
        self.edges
            .iter()
            .find(|e| e.from == from && e.to == to && e.carried_by == carried_by)
    }
}

/// What the ordering analysis reads.
pub struct OrderingInput<'a> {
    pub func: &'a Function,
    pub succs: &'a crate::graph::Csr,
    /// Predecessor lists (duplicates allowed).
    pub preds: &'a crate::graph::Csr,
    pub reachable: &'a [bool],
    /// Reverse post-order of the reachable blocks from the entry,
    /// successors in listed order (the dominator tree's
    /// [`crate::graph::dom::DomTree::rpo`]).
    pub rpo: &'a [u32],
    pub forest: &'a LoopForest,
    pub memory: &'a MemoryInfo,
    pub events: &'a MemopCfg,
    /// List the ordering edges (`OrderingInfo::edges`). The listing is
    /// O(M²) and only the memop graph dump reads it; without it only the
    /// walks that can find an inconsistency run (the problems and
    /// `regions_ignored` are the same either way).
    pub list_edges: bool,
}

/// Computes the ordering edges and inconsistencies of one function.
pub fn analyze(inp: &OrderingInput) -> OrderingInfo {
    if !inp.list_edges && inp.events.regions.is_empty() {
        // No walk can find an inconsistency, and nothing is listed.
        return OrderingInfo::default();
    }
    let mut cx = Ctx::new(inp);
    cx.run();
    cx.finish()
}

/// The compiler's transition (`None`: fail). POISON absorbs.
fn transition(s: u8, k: EventKind) -> Option<u8> {
    use EventKind::*;
    match (s, k) {
        (N, RegionEntry) => Some(LR),
        (N, RegionExit) | (N, SectionExit) => Some(NS),
        (N, SectionEntry) => Some(OS),
        (OS, RegionEntry) => Some(LR),
        (OS, SectionExit) => Some(CS),
        (OS, _) => None,
        (CS, SectionEntry) => Some(OS),
        (CS, _) => None,
        (s, _) => Some(s),
    }
}

/// The compiler's merge (`None`: conflict). POISON absorbs.
fn merge(a: u8, b: u8) -> Option<u8> {
    if a == POISON || b == POISON {
        Some(POISON)
    } else if a == b {
        Some(a)
    } else if a == N && b != OS {
        Some(b)
    } else if b == N && a != OS {
        Some(a)
    } else {
        None
    }
}

/// One region's state at a point of a walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RS {
    /// The compiler's merged state.
    comp: u8,
    /// The states over all paths (bit per state).
    paths: u8,
    /// The successor that brought `comp` to this block (for witnesses).
    src: u32,
}

const RS_START: RS = RS {
    comp: N,
    paths: bit(N),
    src: NONE,
};

fn settled(rs: &RS) -> bool {
    rs.comp == POISON || ((rs.comp == NS || rs.comp == LR) && rs.paths == bit(rs.comp))
}

#[derive(Clone, Debug)]
enum RawKind {
    Failed {
        event: usize,
        item: usize,
        state: u8,
    },
    Conflict {
        s1: u32,
        c1: u8,
        s2: u32,
        c2: u8,
    },
    PathDep {
        item: usize,
    },
}

#[derive(Clone, Debug)]
struct RawProblem {
    id: u32,
    kind: RawKind,
    region: u32,
    b: usize,
    /// B's block and item index (the walk's start).
    x: u32,
    b_item: usize,
    h: Option<LoopId>,
    block: u32,
    a: Option<usize>,
    compiler: bool,
}

#[derive(Clone, Copy, Debug)]
struct RawEdge {
    from: u32,
    to: u32,
    carried: u32,
    drop: u32,
}

/// A walk's fixed parameters.
struct Walk<'w> {
    x: u32,
    b: usize,
    b_item: usize,
    h: Option<LoopId>,
    rel: &'w [u32],
}

#[derive(Default)]
struct WalkOut {
    /// (memop, dropping region or NONE).
    cands: Vec<(usize, u32)>,
    header_tops: Vec<(LoopId, Vec<RS>)>,
}

/// A set of `u32` strings stored one after the other in one vector (no
/// allocation per key).
#[derive(Default)]
struct Memo {
    /// Hash of a key -> the last key with that hash.
    heads: HashMap<u64, u32>,
    /// (start in `arena`, length, previous key with the same hash or NONE).
    keys: Vec<(u32, u32, u32)>,
    arena: Vec<u32>,
}

impl Memo {
    /// Adds `key`: its index, and whether it is new.
    fn insert(&mut self, key: &[u32]) -> (u32, bool) {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        key.hash(&mut h);
        let h = h.finish();
        let mut i = self.heads.get(&h).copied().unwrap_or(NONE);
        while let Some(&(start, len, prev)) = self.keys.get(i as usize) {
            if self
                .arena
                .get(start as usize..start as usize + len as usize)
                == Some(key)
            {
                return (i, false);
            }
            i = prev;
        }
        let index = self.keys.len() as u32;
        let prev = self.heads.insert(h, index).unwrap_or(NONE);
        self.keys
            .push((self.arena.len() as u32, key.len() as u32, prev));
        self.arena.extend_from_slice(key);
        (index, true)
    }
}

struct Ctx<'a> {
    inp: &'a OrderingInput<'a>,
    facts: &'a VarFacts,
    rpo_num: Vec<u32>,
    rpo: Vec<u32>,
    event_region: Vec<u32>,
    outermost: Vec<u32>,
    open_at_start: Csr,
    full_listing: bool,
    // Walk scratch.
    slot_of: Vec<u32>,
    touched: Vec<u32>,
    arena: Vec<RS>,
    heap: BinaryHeap<(u32, u32)>,
    memo: Memo,
    /// Scratch for the memo's keys.
    key: Vec<u32>,
    /// The header tops of the walks without a backedge, in the order they
    /// were found, walk after walk; `walk_ends[w]`: where walk `w`'s end;
    /// `key_tops[k]`: (walk, start in `tops`) of the walk that added memo
    /// key `k` (`NONE` for a key of another kind of walk). A key is added
    /// where every path of the walk funnels into one block: everything the
    /// walk finds after it, header tops included, follows from that block
    /// and its states alone, so a later walk meeting the key finds the
    /// same tops after it.
    tops: Vec<(LoopId, Vec<RS>)>,
    walk_ends: Vec<u32>,
    key_tops: Vec<(u32, u32)>,
    /// Whether walks may take header tops from the memo (tests compare).
    memo_tops: bool,
    /// Every (B, loop, top) a once-around walk started from (tests).
    #[cfg(test)]
    carried_log: Vec<(usize, LoopId, Vec<RS>)>,
    /// Conflicts recorded while merging, waiting for their A.
    conflicts: Vec<(usize, u32)>,
    // Results.
    best: Vec<Option<RawProblem>>,
    next_id: u32,
    raw_edges: Vec<RawEdge>,
    /// Something was left out of the listing.
    truncated: bool,
    /// `MAX_LISTED_EDGES` reached: nothing more is listed.
    capped: bool,
}

impl<'a> Ctx<'a> {
    fn new(inp: &'a OrderingInput<'a>) -> Ctx<'a> {
        let n = inp.func.blocks.len().min(inp.succs.len());
        let live = |b: u32| inp.reachable.get(b as usize).copied().unwrap_or(false);
        let rpo: Vec<u32> = inp
            .rpo
            .iter()
            .copied()
            .filter(|&b| (b as usize) < n && live(b))
            .collect();
        let mut rpo_num = vec![NONE; n];
        for (i, &b) in rpo.iter().enumerate() {
            rpo_num[b as usize] = i as u32;
        }
        let cfg = inp.events;
        let event_region: Vec<u32> = cfg
            .events
            .iter()
            .map(|e| {
                cfg.regions
                    .binary_search(&e.region)
                    .map_or(NONE, |i| i as u32)
            })
            .collect();
        // Outermost loop of every block (parents come before children).
        let forest = inp.forest;
        let mut top = vec![NONE; forest.loops.len()];
        for (i, l) in forest.loops.iter().enumerate() {
            top[i] = match l.parent {
                Some(p) if p.index() < i => top[p.index()],
                Some(p) => p.0,
                None => i as u32,
            };
        }
        let outermost: Vec<u32> = (0..n as u32)
            .map(|b| forest.loop_for(b).map_or(NONE, |l| top[l.index()]))
            .collect();
        let memops = rpo
            .iter()
            .map(|&b| {
                cfg.items.get(b as usize).map_or(0, |items| {
                    items
                        .iter()
                        .filter(|&&it| MemopCfg::is_ordering_memop(inp.memory, it).is_some())
                        .count()
                })
            })
            .sum::<usize>();
        let mut cx = Ctx {
            inp,
            facts: &inp.memory.vars,
            rpo_num,
            rpo,
            event_region,
            outermost,
            open_at_start: Csr::default(),
            full_listing: memops <= FULL_LISTING_LIMIT,
            slot_of: vec![NONE; n],
            touched: Vec::new(),
            arena: Vec::new(),
            heap: BinaryHeap::new(),
            memo: Memo::default(),
            tops: Vec::new(),
            walk_ends: Vec::new(),
            key_tops: Vec::new(),
            memo_tops: true,
            #[cfg(test)]
            carried_log: Vec::new(),
            key: Vec::new(),
            conflicts: Vec::new(),
            best: vec![None; cfg.regions.len()],
            next_id: 0,
            raw_edges: Vec::new(),
            truncated: false,
            capped: false,
        };
        cx.open_at_start = open_regions(inp, &cx.event_region, &cx.rpo_num);
        cx
    }

    fn n(&self) -> usize {
        self.rpo_num.len()
    }
    fn items(&self, b: u32) -> &'a [Item] {
        self.inp
            .events
            .items
            .get(b as usize)
            .map_or(&[][..], |v| v.as_slice())
    }

    fn preds(&self, b: u32) -> &'a [u32] {
        self.inp.preds.get(b as usize).unwrap_or(&[])
    }

    fn ordering_memop(&self, item: Item) -> Option<usize> {
        MemopCfg::is_ordering_memop(self.inp.memory, item)
    }

    /// The predecessors of `x` a walk without backedges goes to.
    fn forward_preds(&self, x: u32) -> Vec<u32> {
        self.preds(x)
            .iter()
            .copied()
            .filter(|&p| self.allowed(None, p, x))
            .collect()
    }

    /// `p -> y` may be walked backwards in a walk restricted to `h`.
    fn allowed(&self, h: Option<LoopId>, p: u32, y: u32) -> bool {
        let (Some(&rp), Some(&ry)) = (self.rpo_num.get(p as usize), self.rpo_num.get(y as usize))
        else {
            return false;
        };
        rp != NONE && ry != NONE && rp < ry && h.is_none_or(|h| self.inp.forest.contains(h, p))
    }

    fn run(&mut self) {
        let rpo = std::mem::take(&mut self.rpo);
        for &x in &rpo {
            let items = self.items(x);
            let mut k = 0;
            while k < items.len() {
                if self.ordering_memop(items[k]).is_none() {
                    k += 1;
                    continue;
                }
                // A group: ordering memops with no event between them.
                let start = k;
                let mut members: Vec<(usize, usize)> = Vec::new();
                while k < items.len() {
                    match items[k] {
                        Item::Event(_) => break,
                        it => {
                            if let Some(op) = self.ordering_memop(it) {
                                members.push((k, op));
                            }
                        }
                    }
                    k += 1;
                }
                self.group(x, start, &members);
            }
        }
        for &x in &rpo {
            let block = self.inp.func.block(BlockId(x));
            if matches!(block.term.kind, crate::ir::TermKind::Return) {
                self.return_walk(x);
            }
        }
        self.rpo = rpo;
    }

    /// The compiler's walk from the function's `ret` (an ordering memop
    /// that every earlier one is ordered before): it finds the failures
    /// and conflicts no memory operation after them would, e.g. a section
    /// left open on some paths only. Nothing is listed.
    fn return_walk(&mut self, x: u32) {
        let items = self.items(x);
        let rel = self.live_regions(x, items.len());
        if rel.is_empty() {
            return;
        }
        let w = Walk {
            x,
            b: RETURN,
            b_item: items.len(),
            h: None,
            rel: &rel,
        };
        let mut cur = vec![RS_START; rel.len()];
        let mut out = WalkOut::default();
        let mut pending: Vec<(usize, u32)> = Vec::new();
        for j in (0..items.len()).rev() {
            self.step_item(&w, x, j, items[j], &mut cur, true, &mut pending, &mut out);
        }
        let seeds = self.forward_preds(x);
        self.walk(&w, &seeds, &cur, x, true, &[], &mut out);
    }

    /// The regions live for B at item `upto` of block `x`.
    fn live_regions(&self, x: u32, upto: usize) -> Vec<u32> {
        let mut rel: Vec<u32> = self.open_at_start.get(x as usize).unwrap_or(&[]).to_vec();
        for &it in &self.items(x)[..upto] {
            if let Item::Event(e) = it {
                let r = self.event_region[e];
                if r != NONE {
                    rel.push(r);
                }
            }
        }
        rel.sort_unstable();
        rel.dedup();
        rel
    }

    fn group(&mut self, x: u32, start: usize, members: &[(usize, usize)]) {
        let Some(&(b_item, b)) = members.first() else {
            return;
        };
        let memory = self.inp.memory;
        let all_prefetch = members
            .iter()
            .all(|&(_, op)| memory.ops[op].kind == MemOpKind::Prefetch);
        let rel = self.live_regions(x, start);
        let check = !all_prefetch && !rel.is_empty();
        if !check && !self.inp.list_edges {
            // Nothing to check and nothing to list: the walks would only
            // collect candidates for the listing.
            return;
        }
        let w = Walk {
            x,
            b,
            b_item,
            h: None,
            rel: &rel,
        };
        // B's own block, before the group.
        let mut cur = vec![RS_START; rel.len()];
        let mut prefix = WalkOut::default();
        let mut pending: Vec<(usize, u32)> = Vec::new();
        let items = self.items(x);
        for j in (0..start).rev() {
            self.step_item(
                &w,
                x,
                j,
                items[j],
                &mut cur,
                check,
                &mut pending,
                &mut prefix,
            );
        }
        // Phase 1: no backedge, the whole function.
        let loops: Vec<LoopId> = {
            let mut v = Vec::new();
            let mut c = self.inp.forest.loop_for(x);
            while let Some(l) = c {
                if v.len() > self.inp.forest.loops.len() {
                    break;
                }
                v.push(l);
                c = self.inp.forest.loops[l.index()].parent;
            }
            v
        };
        let mut out1 = WalkOut::default();
        for &l in &loops {
            if self.inp.forest.loops[l.index()].header == x {
                out1.header_tops.push((l, cur.clone()));
            }
        }
        let seeds = self.forward_preds(x);
        self.walk(&w, &seeds, &cur, x, check, &loops, &mut out1);
        // Phase 2: once around each loop holding B.
        let mut carried: Vec<(LoopId, WalkOut)> = Vec::new();
        for &l in &loops {
            let Some(top) = out1
                .header_tops
                .iter()
                .find(|(h, _)| *h == l)
                .map(|(_, t)| t.clone())
            else {
                continue;
            };
            #[cfg(test)]
            self.carried_log.push((b, l, top.clone()));
            let data = &self.inp.forest.loops[l.index()];
            let header = data.header;
            let latches: Vec<u32> = data
                .latches
                .iter()
                .copied()
                .filter(|&p| self.rpo_num.get(p as usize).is_some_and(|&r| r != NONE))
                .collect();
            let w2 = Walk {
                x,
                b,
                b_item,
                h: Some(l),
                rel: &rel,
            };
            let check2 = check && !top.iter().all(settled);
            let mut out2 = WalkOut::default();
            self.walk(&w2, &latches, &top, header, check2, &[], &mut out2);
            carried.push((l, out2));
        }
        // Listing.
        if self.capped || !self.inp.list_edges {
            return;
        }
        let x_top = self.outermost[x as usize];
        let in_scope = |cx: &Ctx, a: usize| {
            cx.full_listing
                || (x_top != NONE && cx.outermost.get(memory.ops[a].block.index()) == Some(&x_top))
        };
        for (j, &(_, bop)) in members.iter().enumerate() {
            let push = |cx: &mut Ctx, a: usize, carried: u32, drop: u32| {
                if cx.raw_edges.len() >= MAX_LISTED_EDGES {
                    cx.truncated = true;
                    cx.capped = true;
                    return;
                }
                cx.raw_edges.push(RawEdge {
                    from: a as u32,
                    to: bop as u32,
                    carried,
                    drop,
                });
            };
            for &(_, a) in &members[..j] {
                push(self, a, NONE, NONE);
            }
            for &(a, drop) in prefix.cands.iter().chain(out1.cands.iter()) {
                if in_scope(self, a) {
                    push(self, a, NONE, drop);
                } else {
                    self.truncated = true;
                }
            }
            for (l, out) in &carried {
                for &(a, drop) in &out.cands {
                    if a != bop {
                        push(self, a, l.0, drop);
                    }
                }
            }
            if self.capped {
                return;
            }
        }
    }

    /// Applies one item walking backwards; records memop candidates and
    /// problems.
    #[allow(clippy::too_many_arguments)]
    fn step_item(
        &mut self,
        w: &Walk,
        y: u32,
        j: usize,
        item: Item,
        cur: &mut [RS],
        check: bool,
        pending: &mut Vec<(usize, u32)>,
        out: &mut WalkOut,
    ) {
        match item {
            Item::Event(e) => {
                let r = self.event_region.get(e).copied().unwrap_or(NONE);
                let Ok(k) = w.rel.binary_search(&r) else {
                    return;
                };
                let Some(kind) = self.inp.events.events.get(e).map(|ev| ev.kind) else {
                    return;
                };
                let rs = &mut cur[k];
                let mut paths = 0u8;
                let mut path_fail = None;
                for s in N..=LR {
                    if rs.paths & bit(s) != 0 {
                        match transition(s, kind) {
                            Some(t) => paths |= bit(t),
                            None => path_fail = Some(s),
                        }
                    }
                }
                rs.paths = paths;
                let mut comp_fail = None;
                if rs.comp != POISON {
                    match transition(rs.comp, kind) {
                        Some(t) => rs.comp = t,
                        None => {
                            comp_fail = Some(rs.comp);
                            rs.comp = POISON;
                        }
                    }
                }
                if check {
                    let (state, compiler) = match (comp_fail, path_fail) {
                        (Some(s), _) => (s, true),
                        (None, Some(s)) => (s, false),
                        (None, None) => return,
                    };
                    let id = self.record(RawProblem {
                        id: 0,
                        kind: RawKind::Failed {
                            event: e,
                            item: j,
                            state,
                        },
                        region: r,
                        b: w.b,
                        x: w.x,
                        b_item: w.b_item,
                        h: w.h,
                        block: y,
                        a: None,
                        compiler,
                    });
                    if let Some(id) = id {
                        pending.push((k, id));
                    }
                }
            }
            Item::Mem(_) => {
                let Some(a) = self.ordering_memop(item) else {
                    return;
                };
                let drop = cur
                    .iter()
                    .position(|rs| rs.comp == CS)
                    .map_or(NONE, |k| w.rel[k]);
                out.cands.push((a, drop));
                // The affected operation of earlier problems: the first one
                // behind the failure or conflict (poisoned for the compiler,
                // in the same block for a failure on some paths only).
                pending.retain(|&(k, id)| {
                    let r = w.rel[k] as usize;
                    match self.best[r].as_mut() {
                        Some(p) if p.id == id => {
                            let behind = if p.compiler {
                                cur[k].comp == POISON
                            } else {
                                p.block == y
                            };
                            if behind && p.a.is_none() {
                                p.a = Some(a);
                            }
                            !behind && p.compiler
                        }
                        _ => false,
                    }
                });
                // The documents' rule is about two memory operations: the
                // return is not one.
                if !check || w.b == RETURN || self.inp.memory.ops[a].kind == MemOpKind::Prefetch {
                    return;
                }
                for (k, rs) in cur.iter().enumerate() {
                    if rs.paths & bit(CS) != 0 && rs.paths & !bit(CS) != 0 {
                        self.record(RawProblem {
                            id: 0,
                            kind: RawKind::PathDep { item: j },
                            region: w.rel[k],
                            b: w.b,
                            x: w.x,
                            b_item: w.b_item,
                            h: w.h,
                            block: y,
                            a: Some(a),
                            compiler: false,
                        });
                    }
                }
            }
        }
    }

    /// Keeps the first problem per region, preferring one the compiler
    /// notices. Returns the id if stored.
    fn record(&mut self, mut p: RawProblem) -> Option<u32> {
        let slot = self.best.get_mut(p.region as usize)?;
        let store = match slot {
            None => true,
            Some(old) => !old.compiler && p.compiler,
        };
        if !store {
            return None;
        }
        self.next_id += 1;
        p.id = self.next_id;
        *slot = Some(p);
        Some(self.next_id)
    }

    /// Brings `state` from successor `from` to block `p`.
    fn reach(&mut self, w: &Walk, p: u32, state: &[RS], from: u32, check: bool) {
        let k = state.len();
        let slot = self.slot_of[p as usize];
        if slot == NONE {
            let at = (self.arena.len() / k.max(1)) as u32;
            self.slot_of[p as usize] = if k == 0 { 0 } else { at };
            self.touched.push(p);
            for rs in state {
                let mut rs = *rs;
                rs.src = from;
                self.arena.push(rs);
            }
            self.heap.push((self.rpo_num[p as usize], p));
            return;
        }
        let base = slot as usize * k;
        for (i, new) in state.iter().enumerate() {
            let old = self.arena[base + i];
            let mut merged = old;
            merged.paths |= new.paths;
            match merge(old.comp, new.comp) {
                Some(c) => {
                    if c != old.comp {
                        merged.src = from;
                    }
                    merged.comp = c;
                }
                None => {
                    merged.comp = POISON;
                    if check {
                        let id = self.record(RawProblem {
                            id: 0,
                            kind: RawKind::Conflict {
                                s1: old.src,
                                c1: old.comp,
                                s2: from,
                                c2: new.comp,
                            },
                            region: w.rel[i],
                            b: w.b,
                            x: w.x,
                            b_item: w.b_item,
                            h: w.h,
                            block: p,
                            a: None,
                            compiler: true,
                        });
                        if let Some(id) = id {
                            self.conflicts.push((i, id));
                        }
                    }
                }
            }
            self.arena[base + i] = merged;
        }
    }

    /// One backward walk from `seeds` (all in `seed_state`, coming from
    /// `seed_from`), restricted to `w.h` when set.
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &mut self,
        w: &Walk,
        seeds: &[u32],
        seed_state: &[RS],
        seed_from: u32,
        check: bool,
        want_headers: &[LoopId],
        out: &mut WalkOut,
    ) {
        let k = w.rel.len();
        let mut check_on = check;
        for &s in seeds {
            self.reach(w, s, seed_state, seed_from, check_on);
        }
        let mut pending: Vec<(usize, u32)> = std::mem::take(&mut self.conflicts);
        let mut pending_headers = want_headers
            .iter()
            .filter(|l| !out.header_tops.iter().any(|(h, _)| h == *l))
            .count();
        let x_top = self.outermost[w.x as usize];
        let mut cur: Vec<RS> = Vec::with_capacity(k);
        // (this walk's number, for the header tops it finds)
        let walk = self.walk_ends.len() as u32;
        let phase1 = w.h.is_none();
        if phase1 {
            self.walk_ends.push(NONE);
        }
        while let Some((_, y)) = self.heap.pop() {
            let single = self.heap.is_empty();
            let base = self.slot_of[y as usize] as usize * k;
            cur.clear();
            cur.extend_from_slice(&self.arena[base..base + k]);
            if check_on && single {
                if cur.iter().all(settled) {
                    check_on = false;
                } else {
                    let key = &mut self.key;
                    key.clear();
                    key.push(w.h.map_or(0, |h| h.0 + 1));
                    key.push(y);
                    for (i, rs) in cur.iter().enumerate() {
                        key.push(w.rel[i]);
                        key.push(u32::from(rs.comp) | (u32::from(rs.paths) << 8));
                    }
                    let (index, new) = self.memo.insert(&self.key);
                    if new {
                        let at = if phase1 {
                            (walk, self.tops.len() as u32)
                        } else {
                            (NONE, NONE)
                        };
                        self.key_tops.push(at);
                    } else {
                        check_on = false;
                        // Nothing left to check: when nothing is listed
                        // and no problem waits for its operation, the rest
                        // of the walk would only find the header tops the
                        // walk that added the key found after it.
                        if phase1
                            && self.memo_tops
                            && pending_headers > 0
                            && pending.is_empty()
                            && !self.inp.list_edges
                            && self.tops_after(index, want_headers, out, &mut pending_headers)
                        {
                            #[cfg(test)]
                            SHORTCUTS.with(|c| c.set(c.get() + 1));
                            self.heap.clear();
                            break;
                        }
                    }
                }
            }
            if !check_on {
                let same_nest = x_top != NONE && self.outermost[y as usize] == x_top;
                let listing =
                    self.inp.list_edges && !self.capped && (self.full_listing || same_nest);
                let crossing = w.h.is_none() && pending_headers > 0 && same_nest;
                if !listing && !crossing && pending.is_empty() {
                    continue;
                }
            }
            let items = self.items(y);
            for j in (0..items.len()).rev() {
                self.step_item(w, y, j, items[j], &mut cur, check_on, &mut pending, out);
            }
            if w.h.is_none() && pending_headers > 0 {
                if let Some(l) = self.inp.forest.loop_with_header(y) {
                    if want_headers.contains(&l) && !out.header_tops.iter().any(|(h, _)| *h == l) {
                        out.header_tops.push((l, cur.clone()));
                        self.tops.push((l, cur.clone()));
                        pending_headers -= 1;
                    }
                }
            }
            for &p in self.preds(y) {
                if self.allowed(w.h, p, y) {
                    self.reach(w, p, &cur, y, check_on);
                }
            }
            pending.append(&mut self.conflicts);
        }
        if phase1 {
            if let Some(end) = self.walk_ends.get_mut(walk as usize) {
                *end = self.tops.len() as u32;
            }
        }
        for &t in &self.touched {
            self.slot_of[t as usize] = NONE;
        }
        self.touched.clear();
        self.arena.clear();
    }

    /// Adds to `out` the tops of `want_headers` that the walk which added
    /// memo key `index` found after it (and to this walk's own record, for
    /// the walks that meet its keys); true when none is left to find.
    fn tops_after(
        &mut self,
        index: u32,
        want_headers: &[LoopId],
        out: &mut WalkOut,
        pending_headers: &mut usize,
    ) -> bool {
        let Some(&(walk, start)) = self.key_tops.get(index as usize) else {
            return false;
        };
        let Some(&end) = self.walk_ends.get(walk as usize) else {
            return false;
        };
        if start > end || end as usize > self.tops.len() {
            return false;
        }
        for i in start as usize..end as usize {
            let l = self.tops[i].0;
            if *pending_headers > 0
                && want_headers.contains(&l)
                && !out.header_tops.iter().any(|(h, _)| *h == l)
            {
                let top = self.tops[i].1.clone();
                out.header_tops.push((l, top.clone()));
                self.tops.push((l, top));
                *pending_headers -= 1;
            }
        }
        *pending_headers == 0
    }

    fn finish(mut self) -> OrderingInfo {
        let cfg = self.inp.events;
        let best = std::mem::take(&mut self.best);
        let problems: Vec<OrderingProblem> = best
            .into_iter()
            .flatten()
            .map(|raw| self.build_problem(&raw))
            .collect();
        let regions_ignored = problems.iter().any(|p| p.compiler_notices);
        let mut edges: Vec<OrderingEdge> = self
            .raw_edges
            .iter()
            .map(|e| {
                let (a, b) = (e.from as usize, e.to as usize);
                let base = self.base_verdict(a, b);
                let first = match base {
                    Verdict::Kept
                        if e.drop != NONE && self.inp.memory.ops[b].kind != MemOpKind::Prefetch =>
                    {
                        Verdict::Dropped {
                            region: cfg.regions[e.drop as usize],
                        }
                    }
                    v => v,
                };
                let carried_by = (e.carried != NONE).then_some(LoopId(e.carried));
                OrderingEdge {
                    from: a,
                    to: b,
                    loop_carried: carried_by.is_some(),
                    carried_by,
                    verdict: if regions_ignored { base } else { first },
                    first_attempt: first,
                }
            })
            .collect();
        edges.sort_by_key(|e| (e.to, e.from, e.carried_by));
        OrderingInfo {
            edges,
            problems,
            regions_ignored,
            listing_truncated: self.truncated,
        }
    }

    /// The verdict without regions.
    fn base_verdict(&self, a: usize, b: usize) -> Verdict {
        let ops = &self.inp.memory.ops;
        let (oa, ob) = (&ops[a], &ops[b]);
        if oa.kind == MemOpKind::Prefetch {
            return Verdict::NotNeeded {
                reason: NotNeededReason::PrefetchFirst,
            };
        }
        if !writes(oa.kind) && !writes(ob.kind) {
            return Verdict::NotNeeded {
                reason: NotNeededReason::NeitherWrites,
            };
        }
        if !self.may_touch(oa, ob) {
            return Verdict::NotNeeded {
                reason: NotNeededReason::NoAlias,
            };
        }
        Verdict::Kept
    }

    fn may_touch(&self, a: &MemOp, b: &MemOp) -> bool {
        use MemOpKind::*;
        let func = self.inp.func;
        let located = |o: &MemOp| match o.kind {
            Read | Write => o.loc,
            _ => None,
        };
        match (a.kind, located(a), b.kind, located(b)) {
            (_, Some(la), _, Some(lb)) => alias::may_alias(func, &la, &lb),
            (Call, _, _, Some(l)) | (_, Some(l), Call, _) => {
                alias::call_may_touch(func, self.facts, &l)
            }
            _ => true,
        }
    }

    fn build_problem(&self, raw: &RawProblem) -> OrderingProblem {
        let cfg = self.inp.events;
        let region = cfg.regions[raw.region as usize];
        let mut paths = Vec::new();
        let mut split = None;
        let kind = match raw.kind {
            RawKind::Failed { event, item, state } => {
                let phase2 = raw.h.is_some();
                if let Some((s, blocks)) =
                    self.find_path(raw, phase2, raw.block, item + 1, |s| s == state)
                {
                    paths.push(self.witness(raw, s, None, blocks, item + 1));
                }
                ProblemKind::FailedTransition {
                    event,
                    state: RegionState::from_code(state),
                }
            }
            RawKind::Conflict { s1, c1, s2, c2 } => {
                split = Some(BlockId(raw.block));
                for (succ, c) in [(s1, c1), (s2, c2)] {
                    if succ == NONE {
                        continue;
                    }
                    // In a carried walk the header's state comes from the
                    // crossing, i.e. from the walk before it.
                    let phase2 = raw
                        .h
                        .is_some_and(|h| self.inp.forest.loops[h.index()].header != succ);
                    let found = self.find_path(raw, phase2, succ, 0, |s| s == c);
                    let (s, blocks) = found.unwrap_or((c, vec![succ]));
                    let mut wit = self.witness(raw, s, None, blocks, 0);
                    wit.blocks.insert(0, BlockId(raw.block));
                    wit.via = Some(BlockId(succ));
                    paths.push(wit);
                }
                ProblemKind::ConflictingMerge
            }
            RawKind::PathDep { item } => {
                let phase2 = raw.h.is_some();
                let crossed = self.find_path(raw, phase2, raw.block, item + 1, |s| s == CS);
                let other = self.find_path(raw, phase2, raw.block, item + 1, |s| s != CS);
                if let (Some((s1, b1)), Some((s2, b2))) = (crossed, other) {
                    let common = b1.iter().zip(&b2).take_while(|(p, q)| p == q).count();
                    if common > 0 {
                        split = Some(BlockId(b1[common - 1]));
                    }
                    let via1 = b1.get(common).map(|&b| BlockId(b));
                    let via2 = b2.get(common).map(|&b| BlockId(b));
                    paths.push(self.witness(raw, s1, via1, b1, item + 1));
                    paths.push(self.witness(raw, s2, via2, b2, item + 1));
                }
                ProblemKind::PathDependent
            }
        };
        OrderingProblem {
            kind,
            region,
            b: (raw.b != RETURN).then_some(raw.b),
            b_block: BlockId(raw.x),
            a: raw.a,
            block: BlockId(raw.block),
            split,
            carried_by: raw.h,
            compiler_notices: raw.compiler,
            paths,
        }
    }

    /// A witness path: `blocks` runs from the point (cut `cut` of the first
    /// block) to B's block.
    fn witness(
        &self,
        raw: &RawProblem,
        state: u8,
        via: Option<BlockId>,
        blocks: Vec<u32>,
        cut: usize,
    ) -> PathWitness {
        let mut events = Vec::new();
        let last = blocks.len().saturating_sub(1);
        for (i, &b) in blocks.iter().enumerate() {
            let items = self.items(b);
            let from = if i == 0 { cut.min(items.len()) } else { 0 };
            let to = if i == last {
                raw.b_item.min(items.len())
            } else {
                items.len()
            };
            for &it in items.get(from..to.max(from)).unwrap_or(&[]) {
                if let Item::Event(e) = it {
                    if self.event_region.get(e) == Some(&raw.region) {
                        events.push(e);
                    }
                }
            }
        }
        PathWitness {
            state: RegionState::from_code(state),
            via,
            blocks: blocks.into_iter().map(BlockId).collect(),
            events,
        }
    }

    /// One region's state at a cut of a block walking back from `s`.
    fn step_region(&self, r: u32, mut s: u8, items: &[Item]) -> Option<u8> {
        for &it in items.iter().rev() {
            if let Item::Event(e) = it {
                if self.event_region.get(e) == Some(&r) {
                    s = transition(s, self.inp.events.events[e].kind)?;
                }
            }
        }
        Some(s)
    }

    /// A path from the point just before item `cut` of `target` (in the
    /// problem's walk) back to B along which the region's state satisfies
    /// `want`: (state, blocks from the target to B's block).
    fn find_path(
        &self,
        raw: &RawProblem,
        phase2: bool,
        target: u32,
        cut: usize,
        want: impl Fn(u8) -> bool,
    ) -> Option<(u8, Vec<u32>)> {
        let r = raw.region;
        let x = raw.x;
        let xi = self.items(x);
        let bi = raw.b_item.min(xi.len());
        if !phase2 && target == x {
            let s = self.step_region(r, N, xi.get(cut.min(bi)..bi).unwrap_or(&[]))?;
            return want(s).then(|| (s, vec![x]));
        }
        let s0 = self.step_region(r, N, &xi[..bi])?;
        type Key = (bool, u32, u8);
        let mut parent: HashMap<Key, Option<Key>> = HashMap::default();
        let mut queue: VecDeque<Key> = VecDeque::new();
        let seed = |key: Key,
                    par: Option<Key>,
                    parent: &mut HashMap<Key, Option<Key>>,
                    queue: &mut VecDeque<Key>| {
            if let std::collections::hash_map::Entry::Vacant(v) = parent.entry(key) {
                v.insert(par);
                queue.push_back(key);
            }
        };
        let h = raw.h;
        let latches = |l: LoopId| -> Vec<u32> {
            self.inp.forest.loops[l.index()]
                .latches
                .iter()
                .copied()
                .filter(|&p| self.rpo_num.get(p as usize).is_some_and(|&q| q != NONE))
                .collect()
        };
        for &p in self.preds(x) {
            if self.allowed(None, p, x) {
                seed((false, p, s0), None, &mut parent, &mut queue);
            }
        }
        if let Some(l) = h {
            if self.inp.forest.loops[l.index()].header == x {
                for p in latches(l) {
                    seed((true, p, s0), None, &mut parent, &mut queue);
                }
            }
        }
        while let Some(key) = queue.pop_front() {
            let (ph, y, s) = key;
            let items = self.items(y);
            if ph == phase2 && y == target {
                if let Some(t) =
                    self.step_region(r, s, items.get(cut.min(items.len())..).unwrap_or(&[]))
                {
                    if want(t) {
                        let mut blocks = vec![y];
                        let mut k = key;
                        while let Some(Some(pk)) = parent.get(&k) {
                            blocks.push(pk.1);
                            k = *pk;
                            if blocks.len() > 2 * self.n() + 2 {
                                break;
                            }
                        }
                        blocks.push(x);
                        return Some((t, blocks));
                    }
                }
            }
            let Some(top) = self.step_region(r, s, items) else {
                continue;
            };
            let restrict = if ph { h } else { None };
            for &p in self.preds(y) {
                if self.allowed(restrict, p, y) {
                    seed((ph, p, top), Some(key), &mut parent, &mut queue);
                }
            }
            if !ph {
                if let Some(l) = h {
                    if self.inp.forest.loops[l.index()].header == y {
                        for p in latches(l) {
                            seed((true, p, top), Some(key), &mut parent, &mut queue);
                        }
                    }
                }
            }
        }
        None
    }
}

/// Regions that may be open (the region or one of its sections) at the
/// start of each block: forward reachability from each region's entries,
/// stopping at its exits of the same kind. Linear per region in the blocks
/// it reaches.
fn open_regions(inp: &OrderingInput, event_region: &[u32], rpo_num: &[u32]) -> Csr {
    let cfg = inp.events;
    let n = rpo_num.len();
    // (block, region) in the order found: regions ascending per block.
    let mut open: Vec<(u32, u32)> = Vec::new();
    let mut by_region: Vec<Vec<usize>> = vec![Vec::new(); cfg.regions.len()];
    for (e, &r) in event_region.iter().enumerate() {
        if let Some(v) = by_region.get_mut(r as usize) {
            v.push(e);
        }
    }
    let block_events = Csr::from_lists(cfg.items.iter().take(n).map(|items| {
        items.iter().filter_map(|&it| match it {
            Item::Event(e) => Some(e as u32),
            Item::Mem(_) => None,
        })
    }));
    let live = |b: usize| rpo_num.get(b).is_some_and(|&r| r != NONE);
    let mut stamp = vec![0u32; n];
    let mut added = vec![NONE; n];
    let mut cur = 0u32;
    for (r, evs) in by_region.iter().enumerate() {
        for section in [false, true] {
            cur += 1;
            let kind_ok = |e: usize| {
                event_region[e] == r as u32 && cfg.events[e].kind.is_section() == section
            };
            // Open at the end of block b given its state at the start.
            let scan = |b: usize, mut open: bool| {
                for &e in block_events.get(b).unwrap_or(&[]) {
                    if kind_ok(e as usize) {
                        open = cfg.events[e as usize].kind.is_entry();
                    }
                }
                open
            };
            let mut work: Vec<usize> = Vec::new();
            for &e in evs {
                let b = cfg.events[e].block.index();
                if kind_ok(e) && cfg.events[e].kind.is_entry() && live(b) && scan(b, false) {
                    work.push(b);
                }
            }
            while let Some(b) = work.pop() {
                for &s in inp.succs.get(b).unwrap_or(&[]) {
                    let s = s as usize;
                    if !live(s) || stamp[s] == cur {
                        continue;
                    }
                    stamp[s] = cur;
                    if added[s] != r as u32 {
                        added[s] = r as u32;
                        open.push((s as u32, r as u32));
                    }
                    if scan(s, true) {
                        work.push(s);
                    }
                }
            }
        }
    }
    Csr::from_pairs(n, &open)
}

#[cfg(test)]
thread_local! {
    /// How many walks took their header tops from the memo (tests).
    static SHORTCUTS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn writes(k: MemOpKind) -> bool {
    matches!(k, MemOpKind::Write | MemOpKind::Call | MemOpKind::Asm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyze as analyze_file, AnalysisOptions, Analysis};
    use csa_grammars::SourceKind;

    /// The analysis runs without the listing; the inconsistencies must be
    /// exactly those of the listed run, on every fixture function. (The
    /// run without the listing also takes header tops from the memo,
    /// `Ctx::tops_after`, which the listed run never does: this compares
    /// the two ways too, and checks that the memo was used.)
    #[test]
    fn listing_does_not_change_problems_on_fixtures() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let (mut functions, mut with_problems) = (0, 0);
        SHORTCUTS.with(|c| c.set(0));
        for sub in ["c", "fortran"] {
            for entry in std::fs::read_dir(root.join(sub)).unwrap() {
                let path = entry.unwrap().path();
                let Some(kind) = csa_grammars::detect(&path) else {
                    continue;
                };
                let text = std::fs::read_to_string(&path).unwrap();
                let fa = analyze_file(kind, &text, &AnalysisOptions::default());
                for f in &fa.functions {
                    let listed = f.ordering_listing();
                    assert!(f.ordering.edges.is_empty());
                    assert_eq!(
                        (&f.ordering.problems, f.ordering.regions_ignored),
                        (&listed.problems, listed.regions_ignored),
                        "{}: {}",
                        path.display(),
                        f.func.name
                    );
                    functions += 1;
                    with_problems += usize::from(!listed.problems.is_empty());
                }
            }
        }
        assert!(
            functions > 100 && with_problems >= 4,
            "{functions} {with_problems}"
        );
        assert!(SHORTCUTS.with(|c| c.get()) > 0);
    }

    /// A function whose `depth` nested loops in a region hold six
    /// sections one after the other; with `bad`, the fourth is left open
    /// on one path.
    fn region_nest(depth: usize, bad: bool) -> String {
        let mut src = String::from(
            "void f(double *a, int n, int c) {\n int r = __builtin_csa_parallel_region_entry(0);\n",
        );
        for d in 0..depth {
            src.push_str(&format!(" for (int i{d} = 0; i{d} < n; i{d}++) {{\n"));
        }
        for k in 0..6 {
            src.push_str(&format!(
                "  {{ int s = __builtin_csa_parallel_section_entry(r); a[{k}] = a[{k} + 1] * (c ? 2.0 : 3.0); a[n] = {k}.0;"
            ));
            if bad && k == 3 {
                src.push_str(" if (c) { a[0] = 1.0; } else __builtin_csa_parallel_section_exit(s); }\n");
            } else {
                src.push_str(" __builtin_csa_parallel_section_exit(s); }\n");
            }
        }
        for _ in 0..depth {
            src.push_str(" }\n");
        }
        src.push_str(" __builtin_csa_parallel_region_exit(r);\n}\n");
        src
    }

    /// The once-around walks of `f` (B, loop, the state they start from),
    /// with header tops taken from the memo or not.
    fn carried_starts(f: &crate::analysis::FunctionAnalysis, memo: bool) -> Vec<(usize, LoopId, Vec<RS>)> {
        let inp = OrderingInput {
            func: &f.func,
            succs: &f.succs,
            preds: &f.preds,
            reachable: &f.reachable,
            rpo: f.dom.rpo(),
            forest: &f.forest,
            memory: &f.memory,
            events: &f.events,
            list_edges: false,
        };
        if inp.events.regions.is_empty() {
            return Vec::new();
        }
        let mut cx = Ctx::new(&inp);
        cx.memo_tops = memo;
        cx.run();
        cx.carried_log
    }

    /// Header tops taken from the memo are those a walk finds: every
    /// once-around walk starts from the same states either way, on every
    /// fixture function and on nests of loops in a region (with and
    /// without a section left open on one path). The problems alone would
    /// not show a wrong top: the walk that added the key finds them first.
    #[test]
    fn header_tops_from_the_memo_are_the_walked_ones() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let mut sources: Vec<(SourceKind, String)> = Vec::new();
        for sub in ["c", "fortran"] {
            for entry in std::fs::read_dir(root.join(sub)).unwrap() {
                let path = entry.unwrap().path();
                if let Some(kind) = csa_grammars::detect(&path) {
                    sources.push((kind, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        let fixtures = sources.len();
        for depth in 1..5 {
            for bad in [false, true] {
                sources.push((SourceKind::C, region_nest(depth, bad)));
            }
        }
        let (mut starts, mut from_memo) = (0, 0);
        for (i, (kind, text)) in sources.iter().enumerate() {
            let opts = AnalysisOptions {
                every_body: true,
                ..AnalysisOptions::default()
            };
            let fa = analyze_file(*kind, text, &opts);
            for f in &fa.functions {
                SHORTCUTS.with(|c| c.set(0));
                let with = carried_starts(f, true);
                from_memo += SHORTCUTS.with(|c| c.get());
                let without = carried_starts(f, false);
                assert_eq!(with, without, "{}", f.func.name);
                starts += with.len();
                if i >= fixtures {
                    // (the nests with a section left open have a problem
                    // for the walks to find)
                    let bad = (i - fixtures) % 2 == 1;
                    assert_eq!(f.ordering.problems.is_empty(), !bad, "{text}");
                }
            }
        }
        assert!(starts > 100 && from_memo > 10, "{starts} {from_memo}");
    }

    struct Case {
        fa: Analysis,
        fi: usize,
        cfg: MemopCfg,
        info: OrderingInfo,
    }

    fn run(src: &str, name: &str) -> Case {
        let opts = AnalysisOptions {
            every_body: true,
            ..AnalysisOptions::default()
        };
        let fa = analyze_file(SourceKind::C, src, &opts);
        let fi = fa
            .functions
            .iter()
            .position(|f| f.func.name == name)
            .expect("function");
        let f = &fa.functions[fi];
        let (cfg, info) = (f.events.clone(), f.ordering_listing().clone());
        Case { fa, fi, cfg, info }
    }

    fn fixture(name: &str) -> &'static str {
        match name {
            "reference" => include_str!("../../../tests/fixtures/c/ordering_reference_loops.c"),
            "backedges" => include_str!("../../../tests/fixtures/c/ordering_same_backedges.c"),
            "patterns" => include_str!("../../../tests/fixtures/c/ordering_patterns.c"),
            "gap" => include_str!("../../../tests/fixtures/c/ordering_gap_in_loop.c"),
            _ => "",
        }
    }

    impl Case {
        /// The ordering memop whose source text is `text`.
        fn op(&self, text: &str) -> usize {
            let f = &self.fa.functions[self.fi];
            let found: Vec<usize> = f
                .memory
                .ops
                .iter()
                .enumerate()
                .filter(|(i, o)| {
                    MemopCfg::is_ordering_memop(&f.memory, Item::Mem(*i)).is_some()
                        && self.fa.source.text().get(o.span.range()) == Some(text)
                })
                .map(|(i, _)| i)
                .collect();
            assert_eq!(found.len(), 1, "`{text}`: {found:?}");
            found[0]
        }

        /// The loop whose header is the first block of `nth` source loop.
        fn source_loop(&self, nth: usize) -> LoopId {
            let f = &self.fa.functions[self.fi];
            let h = f.func.source_loops[nth].header;
            f.forest.loop_for(h.0).expect("loop")
        }

        fn verdict(&self, from: &str, to: &str, carried: Option<LoopId>) -> Verdict {
            let (a, b) = (self.op(from), self.op(to));
            match self.info.edge(a, b, carried) {
                Some(e) => e.verdict,
                None => panic!(
                    "no edge {from} -> {to} ({carried:?}): {:#?}",
                    self.info.edges
                ),
            }
        }

        fn region(&self, id: i64) -> RegionKey {
            let _ = &self.cfg;
            RegionKey::User(id)
        }
    }

    const KEPT: Verdict = Verdict::Kept;

    fn dropped(r: RegionKey) -> Verdict {
        Verdict::Dropped { region: r }
    }

    #[test]
    fn openmp_sections_drop_edges_between_sections() {
        // genCSASections: one region around the construct, a section
        // around each `section` (the first one without its directive).
        for src in [
            "void f(int *p, int i, int j, int k, int m) {
              p[i] = 0;
              #pragma omp parallel sections
              {
                p[j] = 1;
                #pragma omp section
                p[k] = 2;
              }
              p[m] = 3;
            }",
            "void f(int *p, int i, int j, int k, int m) {
              p[i] = 0;
              #pragma omp sections nowait
              {
                #pragma omp section
                { p[j] = 1; }
                _Pragma(\"omp section\")
                { p[k] = 2; }
              }
              p[m] = 3;
            }",
        ] {
            let c = run(src, "f");
            assert!(c.info.problems.is_empty(), "{:#?}", c.info.problems);
            let r = RegionKey::OmpSections(0);
            assert_eq!(c.verdict("p[j]", "p[k]", None), dropped(r));
            assert_eq!(c.verdict("p[i]", "p[j]", None), KEPT);
            assert_eq!(c.verdict("p[i]", "p[k]", None), KEPT);
            assert_eq!(c.verdict("p[j]", "p[m]", None), KEPT);
            assert_eq!(c.verdict("p[k]", "p[m]", None), KEPT);
            let kinds: Vec<EventKind> = c.cfg.events.iter().map(|e| e.kind).collect();
            assert_eq!(
                kinds,
                [
                    EventKind::RegionEntry,
                    EventKind::SectionEntry,
                    EventKind::SectionExit,
                    EventKind::SectionEntry,
                    EventKind::SectionExit,
                    EventKind::RegionExit
                ]
            );
        }
    }

    #[test]
    fn reference_example_verdicts() {
        let c = run(fixture("reference"), "reference_loops");
        assert!(c.info.problems.is_empty(), "{:#?}", c.info.problems);
        assert!(!c.info.regions_ignored);
        let lp1 = c.source_loop(0);
        let lp2 = c.source_loop(1);
        assert_ne!(lp1, lp2);
        let r0 = c.region(0);
        let (st1, st2, st3) = ("p[1]", "p[2]", "p[3]");
        // st2 <- st1 preserved (st1 is not in a section of region 0)
        assert_eq!(c.verdict(st1, st2, None), KEPT);
        // st2 <- lp2 <- st3 ignored (section crossing around lp2)
        assert_eq!(c.verdict(st3, st2, Some(lp2)), dropped(r0));
        // st2 <- lp1 <- st3 preserved (section and region crossing around lp1)
        assert_eq!(c.verdict(st3, st2, Some(lp1)), KEPT);
        // st3 <- st1 preserved
        assert_eq!(c.verdict(st1, st3, None), KEPT);
        // st3 <- st2 preserved (no section crossing on the straight-line path)
        assert_eq!(c.verdict(st2, st3, None), KEPT);
        // st3 <- lp2 <- st2 ignored
        assert_eq!(c.verdict(st2, st3, Some(lp2)), dropped(r0));
        // st3 <- lp1 <- st2 preserved
        assert_eq!(c.verdict(st2, st3, Some(lp1)), KEPT);
        // Nothing else: st1 has no predecessor, self pairs are not listed.
        assert_eq!(c.info.edges.len(), 7, "{:#?}", c.info.edges);
    }

    #[test]
    fn same_backedges_example_is_path_dependent() {
        let c = run(fixture("backedges"), "same_backedges");
        let (st1, st2) = (c.op("p[1]"), c.op("p[2]"));
        // The compiler does not notice: it keeps the regions.
        assert!(!c.info.regions_ignored);
        let [p] = c.info.problems.as_slice() else {
            panic!("{:#?}", c.info.problems)
        };
        assert_eq!(p.kind, ProblemKind::PathDependent);
        assert_eq!(p.region, c.region(0));
        assert_eq!((p.a, p.b), (Some(st1), Some(st2)));
        assert!(!p.compiler_notices);
        assert_eq!(p.carried_by, None);
        // One path crosses the section exit and entry, the other nothing.
        let states: Vec<RegionState> = p.paths.iter().map(|w| w.state).collect();
        assert_eq!(
            states,
            [RegionState::CrossedSections, RegionState::NoneSeen]
        );
        let kinds: Vec<EventKind> = p.paths[0]
            .events
            .iter()
            .map(|&e| c.cfg.events[e].kind)
            .collect();
        assert_eq!(kinds, [EventKind::SectionExit, EventKind::SectionEntry]);
        assert!(p.paths[1].events.is_empty());
        assert!(p.split.is_some());
        assert_ne!(p.paths[0].via, p.paths[1].via);
        // The compiler drops the edge on every path (SEMANTICS.md would
        // ignore the regions and keep it; we follow the compiler).
        let e = c.info.edge(st1, st2, None).expect("edge");
        assert_eq!(e.first_attempt, dropped(c.region(0)));
        assert_eq!(e.verdict, dropped(c.region(0)));
    }

    #[test]
    fn same_backedges_in_a_loop_body() {
        let c = run(fixture("backedges"), "same_backedges_in_loop");
        let [p] = c.info.problems.as_slice() else {
            panic!("{:#?}", c.info.problems)
        };
        assert_eq!(p.kind, ProblemKind::PathDependent);
        assert_eq!((p.a, p.b), (Some(c.op("p[i]")), Some(c.op("p[i + 1]"))));
        // Around the backedge every path crosses the sections: consistent.
        let l = c.source_loop(0);
        let e = c
            .info
            .edge(c.op("p[i]"), c.op("p[i + 1]"), Some(l))
            .unwrap();
        assert_eq!(e.first_attempt, dropped(c.region(1)));
    }

    #[test]
    fn loop_pattern_drops_loop_carried_edges_only() {
        let c = run(fixture("patterns"), "ordering_loop_pattern");
        assert!(c.info.problems.is_empty() && !c.info.regions_ignored);
        let l = c.source_loop(0);
        let r0 = c.region(0);
        assert_eq!(c.verdict("B[i]", "A[i]", None), KEPT);
        assert_eq!(c.verdict("B[i]", "A[i]", Some(l)), dropped(r0));
        assert_eq!(c.verdict("A[i]", "B[i]", Some(l)), dropped(r0));
        // An operation and its own previous iteration: implicit, not listed.
        assert!(c.info.edges.iter().all(|e| e.from != e.to));
        assert_eq!(c.info.edges.len(), 3);
    }

    #[test]
    fn sections_pattern_drops_cross_section_edges_only() {
        let c = run(fixture("patterns"), "ordering_sections_pattern");
        assert!(c.info.problems.is_empty() && !c.info.regions_ignored);
        let r0 = c.region(0);
        assert_eq!(c.verdict("*b", "*a", None), KEPT);
        assert_eq!(c.verdict("*d", "*c", None), KEPT);
        assert_eq!(c.verdict("*a", "*c", None), dropped(r0));
        assert_eq!(c.verdict("*b", "*c", None), dropped(r0));
        assert_eq!(c.verdict("*a", "*d", None), dropped(r0));
        assert_eq!(
            c.verdict("*b", "*d", None),
            Verdict::NotNeeded {
                reason: NotNeededReason::NeitherWrites
            }
        );
        assert!(c.info.edges.iter().all(|e| !e.loop_carried));
    }

    #[test]
    fn marked_loop_drops_its_carried_edges() {
        let c = run(fixture("patterns"), "ordering_marked_loop");
        assert!(c.info.problems.is_empty() && !c.info.regions_ignored);
        let l = c.source_loop(0);
        let clie = RegionKey::Clie(l);
        assert_eq!(c.verdict("B[i]", "A[i]", None), KEPT);
        assert_eq!(c.verdict("A[i]", "B[i]", Some(l)), dropped(clie));
        assert_eq!(c.verdict("A[0]", "A[i]", None), KEPT);
        assert_eq!(c.verdict("A[0]", "A[N]", None), KEPT);
        // Every path from the body to after the loop takes the backedge of
        // a loop that does not hold A[N]: the compiler orders that pair
        // through the header's ordering phi, not by the walk.
        assert!(c.info.edge(c.op("A[i]"), c.op("A[N]"), None).is_none());
    }

    #[test]
    fn memory_outside_the_section_keeps_ordering() {
        let c = run(fixture("gap"), "gap_in_loop");
        assert!(c.info.problems.is_empty() && !c.info.regions_ignored);
        let l = c.source_loop(0);
        assert_eq!(c.verdict("q[i]", "a[i]", None), KEPT);
        assert_eq!(c.verdict("q[i]", "a[i]", Some(l)), KEPT);
        assert_eq!(c.verdict("a[i]", "q[i]", Some(l)), KEPT);
        // Only the section's own carried pair would be dropped, and it is a
        // self pair: nothing is dropped.
        assert!(c
            .info
            .edges
            .iter()
            .all(|e| !matches!(e.verdict, Verdict::Dropped { .. })));
    }

    #[test]
    fn failed_transition_is_noticed_by_the_compiler() {
        // A section opened after its region was left: walking back from
        // p[0] the section entry (OS) is followed by a region exit.
        let src = "void f(int *p, int *q) {
          int r = __builtin_csa_parallel_region_entry(0);
          *q = 0;
          __builtin_csa_parallel_region_exit(r);
          int s = __builtin_csa_parallel_section_entry(r);
          p[0] = 1;
          __builtin_csa_parallel_section_exit(s);
        }";
        let c = run(src, "f");
        let [p] = c.info.problems.as_slice() else {
            panic!("{:#?}", c.info.problems)
        };
        let ProblemKind::FailedTransition { event, state } = p.kind else {
            panic!("{p:#?}")
        };
        assert_eq!(c.cfg.events[event].kind, EventKind::RegionExit);
        assert_eq!(state, RegionState::OutsideOfSection);
        assert!(p.compiler_notices);
        assert_eq!(p.b, Some(c.op("p[0]")));
        assert_eq!(p.a, Some(c.op("*q")));
        assert_eq!(p.paths.len(), 1);
        let kinds: Vec<EventKind> = p.paths[0]
            .events
            .iter()
            .map(|&e| c.cfg.events[e].kind)
            .collect();
        assert_eq!(kinds, [EventKind::SectionEntry]);
        assert!(c.info.regions_ignored);
        // Retried without regions: everything that aliases is kept.
        assert_eq!(c.verdict("*q", "p[0]", None), KEPT);
    }

    #[test]
    fn conflicting_merge_is_noticed_by_the_compiler() {
        // A second section entry on one branch only: "none seen" meets
        // "outside of section" at the branch (§6.2 fails too; the compiler
        // knows nothing of it and walks the region all the same).
        let src = "void f(int *p, int c) {
          int r = __builtin_csa_parallel_region_entry(0);
          int s = __builtin_csa_parallel_section_entry(r);
          p[0] = 0;
          if (c)
            s = __builtin_csa_parallel_section_entry(r);
          p[1] = 1;
          __builtin_csa_parallel_section_exit(s);
          __builtin_csa_parallel_region_exit(r);
        }";
        let c = run(src, "f");
        let [p] = c.info.problems.as_slice() else {
            panic!("{:#?}", c.info.problems)
        };
        assert_eq!(p.kind, ProblemKind::ConflictingMerge);
        assert!(p.compiler_notices);
        assert_eq!(p.b, Some(c.op("p[1]")));
        assert_eq!(p.a, Some(c.op("p[0]")));
        assert_eq!(p.split, Some(p.block));
        let mut states: Vec<RegionState> = p.paths.iter().map(|w| w.state).collect();
        states.sort_by_key(|s| *s as u8);
        assert_eq!(
            states,
            [RegionState::NoneSeen, RegionState::OutsideOfSection]
        );
        for w in &p.paths {
            assert_eq!(w.blocks.first(), Some(&p.block));
            assert_eq!(w.via, w.blocks.get(1).copied());
        }
        assert!(c.info.regions_ignored);
    }

    #[test]
    fn prefetches_ignore_regions() {
        let src = "void f(int *A, int N) {
          int reg = __builtin_csa_parallel_region_entry(0);
          for (int i = 0; i < N; ++i) {
            int sec = __builtin_csa_parallel_section_entry(reg);
            A[i] = 1;
            __builtin_prefetch(&A[i + 8]);
            __builtin_csa_parallel_section_exit(sec);
          }
          __builtin_csa_parallel_region_exit(reg);
        }";
        let c = run(src, "f");
        assert!(c.info.problems.is_empty());
        let l = c.source_loop(0);
        let pf = "__builtin_prefetch(&A[i + 8])";
        assert_eq!(c.verdict("A[i]", pf, None), KEPT);
        // Across the backedge a normal operation would be dropped.
        assert_eq!(c.verdict("A[i]", pf, Some(l)), KEPT);
        assert_eq!(
            c.verdict(pf, "A[i]", Some(l)),
            Verdict::NotNeeded {
                reason: NotNeededReason::PrefetchFirst
            }
        );
    }

    #[test]
    fn calls_and_restrict_use_the_alias_model() {
        let src = "int g; void h(void);
        void f(int *restrict a, int *restrict b, double *d) {
          a[0] = 1;
          b[0] = 2;
          d[0] = 3.0;
          h();
          g = 4;
        }";
        let c = run(src, "f");
        let no_alias = Verdict::NotNeeded {
            reason: NotNeededReason::NoAlias,
        };
        assert_eq!(c.verdict("a[0]", "b[0]", None), no_alias);
        assert_eq!(c.verdict("a[0]", "d[0]", None), no_alias);
        assert_eq!(c.verdict("b[0]", "h()", None), KEPT);
        assert_eq!(c.verdict("h()", "g", None), KEPT);
        assert_eq!(c.verdict("a[0]", "g", None), KEPT);
        assert_eq!(c.verdict("d[0]", "g", None), no_alias);
    }

    #[test]
    fn long_runs_of_sections_are_fast() {
        // One region, many sections one after the other: every walk would
        // cross all earlier sections; memoisation keeps it linear.
        let mut src =
            String::from("void f(int *p) {\n int r = __builtin_csa_parallel_region_entry(0);\n");
        for k in 0..4000 {
            src.push_str(&format!(
                " {{ int s = __builtin_csa_parallel_section_entry(r); p[{k}] = {k}; __builtin_csa_parallel_section_exit(s); }}\n"
            ));
        }
        src.push_str(" __builtin_csa_parallel_region_exit(r);\n}\n");
        let start = std::time::Instant::now();
        let c = run(&src, "f");
        assert!(c.info.problems.is_empty());
        // More than FULL_LISTING_LIMIT operations, none in a loop: only
        // pairs inside a loop nest would be listed.
        assert!(c.info.listing_truncated);
        assert!(c.info.edges.is_empty());
        assert!(start.elapsed().as_secs() < 60);
    }

    #[test]
    fn many_marked_loops_and_deep_nests() {
        let mut src = String::from("void f(double *a, int n) {\n");
        for k in 0..1000 {
            src.push_str(&format!(
                "  __builtin_csa_parallel_loop();\n  for (int i = 0; i < n; i++) a[i] = {k}.0;\n"
            ));
        }
        src.push_str("}\n");
        let c = run(&src, "f");
        assert!(c.info.problems.is_empty());
        assert!(!c.info.listing_truncated);
        let mut src = String::from(
            "void g(int *a, int n) {\n int r = __builtin_csa_parallel_region_entry(0);\n",
        );
        for _ in 0..60 {
            src.push_str(" { int i = 0; do {\n");
        }
        src.push_str(" int s = __builtin_csa_parallel_section_entry(r); a[n] = a[n + 1]; __builtin_csa_parallel_section_exit(s);\n");
        for _ in 0..60 {
            src.push_str(" } while (++i < n); }\n");
        }
        src.push_str(" __builtin_csa_parallel_region_exit(r);\n}\n");
        let c = run(&src, "g");
        assert!(c.info.problems.is_empty());

        // Carried by each of the 60 loops (do-while loops leave from the
        // latch, so no other backedge lies on the way), both directions,
        // plus the pair in the iteration. Only the innermost loop's section
        // boundary is crossed without leaving... every loop's: the section
        // is the whole innermost body, so every carried pair is dropped.
        assert_eq!(c.info.edges.len(), 1 + 2 * 60);
        let dropped = c
            .info
            .edges
            .iter()
            .filter(|e| matches!(e.verdict, Verdict::Dropped { .. }))
            .count();
        assert_eq!(dropped, 2 * 60);
        // With `for` loops the header leaves the loop: from an outer loop's
        // latch back to the inner body every path takes the inner backedge
        // too, and the compiler crosses one backedge at most (the ordering
        // comes through the inner header's phi instead).
        let nested_for = "void h(int *a, int n) {
          int r = __builtin_csa_parallel_region_entry(0);
          for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
              int s = __builtin_csa_parallel_section_entry(r);
              a[n] = a[n + 1];
              __builtin_csa_parallel_section_exit(s);
            }
          __builtin_csa_parallel_region_exit(r);
        }";
        let c = run(nested_for, "h");
        let inner = c.source_loop(1);
        assert_eq!(c.info.edges.len(), 3);
        assert!(c
            .info
            .edges
            .iter()
            .all(|e| e.carried_by.is_none_or(|l| l == inner)));
    }

    #[test]
    fn unreachable_and_irreducible_code_do_not_break_the_walk() {
        // A `goto` into the loop body makes the loop irreducible (no
        // natural loop, so nothing is loop-carried); the region exit after
        // the `return` is unreachable.
        let src = "void f(int *p, int c) {
          int r = __builtin_csa_parallel_region_entry(0);
          p[c] = 0;
          if (c) goto inside;
          for (int i = 0; i < 10; i++) {
          inside:
            p[i] = 1;
          }
          p[c + 1] = 3;
          return;
          p[0] = 2;
          __builtin_csa_parallel_region_exit(r);
        }";
        let c = run(src, "f");
        let f = &c.fa.functions[c.fi];
        assert!(f.forest.loops.is_empty(), "{:?}", f.forest);
        assert!(!f.forest.irreducible_edges().is_empty(), "{:?}", f.forest);
        assert!(f.reachable.contains(&false));
        // The walk ends without an inconsistency and lists every pair.
        assert!(c.info.problems.is_empty(), "{:#?}", c.info.problems);
        assert!(!c.info.regions_ignored);
        assert!(!c.info.listing_truncated);
        // Nothing of the unreachable code takes part: only the region
        // entry is an event, and `p[0]` is no ordering memory operation.
        let kinds: Vec<EventKind> = c.cfg.events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [EventKind::RegionEntry]);
        assert!(f
            .memory
            .ops
            .iter()
            .all(|o| c.fa.source.text().get(o.span.range()) != Some("p[0]")));
        // Every reachable pair is ordered in the same iteration: the walk
        // goes through the irreducible part but never across its retreating
        // edge.
        let (a, b, d) = (c.op("p[c]"), c.op("p[i]"), c.op("p[c + 1]"));
        let edges: Vec<(usize, usize, Option<LoopId>, Verdict)> = c
            .info
            .edges
            .iter()
            .map(|e| (e.from, e.to, e.carried_by, e.verdict))
            .collect();
        assert_eq!(
            edges,
            [(a, b, None, KEPT), (a, d, None, KEPT), (b, d, None, KEPT)]
        );
        assert!(c.info.edges.iter().all(|e| !e.loop_carried));
    }
}
