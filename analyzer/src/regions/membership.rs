//! Region and section membership (SEMANTICS.md §6.2).
//!
//! For each region R and each program point: the point is inside R when,
//! on every path to it, the last region entry/exit of R is an entry, and on
//! every path from it the next one is an exit; outside when both are the
//! other way (no event at all counts as outside); anything else is
//! ambiguous. The same rule over R's section entries/exits decides whether
//! the point is inside some section of R. Reaching a function exit inside a
//! region or section is ambiguous too.
//!
//! Two dataflow problems per region and per kind (region, section): a
//! forward one ("last event was an entry / an exit / both") and a backward
//! one ("next event is an exit / an entry or the function exit / both").
//! Each is a four-value lattice (unreached < inside, outside < mixed) solved
//! by a worklist. A block holding an event of the region sets the state it
//! passes on, so the worklists cover only the blocks the region's events
//! can reach (forwards) or be reached from (backwards) without crossing
//! another of its events; everywhere else the state is the one with no
//! event (outside). A region around one loop of a long function costs the
//! loop plus a clear of one byte per block, not a pass over the function.
//! A property test checks the result against the textbook round-robin
//! solution over all blocks.
//!
//! The compiler itself checks less (see `docs/compiler-notes.md` §4); the
//! documents state these rules, so we check them all.
//!
//! Regions CLIE places are well formed by construction (entry at the end of
//! the preheader, an exit at the top of every exit block, the section
//! around every memory-holding block of the loop, single entry and single
//! exit): they are not solved here, which keeps a function with thousands
//! of marked loops linear. User-written and OpenMP regions are solved.

use super::events::{Item, MemopCfg, RegionKey};
use crate::ir::*;

/// A lattice value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Unreached,
    Outside,
    Inside,
    Mixed,
}

impl State {
    fn join(self, other: State) -> State {
        match (self, other) {
            (State::Unreached, x) | (x, State::Unreached) => x,
            (a, b) if a == b => a,
            _ => State::Mixed,
        }
    }
}

/// What a point is with respect to one region (or its sections).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Membership {
    Inside,
    Outside,
    Ambiguous,
    /// Not reachable from the function entry.
    Unreachable,
}

fn classify(fwd: State, bwd: State) -> Membership {
    match (fwd, bwd) {
        (State::Unreached, _) => Membership::Unreachable,
        // No path from here reaches a function exit (an endless loop): the
        // condition on the paths from the point holds vacuously.
        (State::Inside, State::Unreached) => Membership::Inside,
        (State::Outside, State::Unreached) => Membership::Outside,
        (State::Inside, State::Inside) => Membership::Inside,
        (State::Outside, State::Outside) => Membership::Outside,
        _ => Membership::Ambiguous,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    ForwardJoin,
    Any,
}

/// Which rule a membership problem breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    AmbiguousRegion,
    AmbiguousSection,
    RegionOpenAtExit,
    SectionOpenAtExit,
}

/// The first place where a region's membership is ambiguous.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub region: RegionKey,
    pub broken: Broken,
    pub block: BlockId,
    /// The item before which the point lies (`None`: the end of the block).
    pub before: Option<Item>,
    /// Predecessors (for forward ambiguity) or successors (backward) whose
    /// states disagree, with the state each brings.
    pub witnesses: Vec<(BlockId, State)>,
}

/// Forward and backward states at every block boundary, per region, for
/// the region itself and for its sections: where they differ from a
/// function-wide default ([`Defaults`]), which only the blocks a region's
/// events reach do. Sparse, so that a function with many regions costs
/// each region its own extent, not the function's size.
#[derive(Clone, Debug)]
struct Solution {
    /// State at the start of each block (forward), by block, ascending.
    fwd_in: Vec<(u32, State)>,
    /// State at the end of each block (backward: what comes next), by
    /// block, ascending.
    bwd_out: Vec<(u32, State)>,
}

/// A block's state in one of [`Solution`]'s lists, else `default`.
fn state_at(list: &[(u32, State)], block: usize, default: &[State]) -> State {
    match list.binary_search_by_key(&(block as u32), |&(b, _)| b) {
        Ok(i) => list[i].1,
        Err(_) => default.get(block).copied().unwrap_or(State::Unreached),
    }
}

/// The states of a block no region event reaches: forwards outside where
/// the entry reaches, backwards outside where a function exit is reachable,
/// unreached elsewhere (see [`propagate`]).
#[derive(Clone, Debug, Default)]
struct Defaults {
    fwd_in: Vec<State>,
    bwd_out: Vec<State>,
}

impl Solution {
    fn fwd_in(&self, d: &Defaults, block: usize) -> State {
        state_at(&self.fwd_in, block, &d.fwd_in)
    }

    fn bwd_out(&self, d: &Defaults, block: usize) -> State {
        state_at(&self.bwd_out, block, &d.bwd_out)
    }
}

#[derive(Clone, Debug, Default)]
pub struct MembershipInfo {
    pub regions: Vec<RegionKey>,
    /// The index of each of `regions`.
    index: rustc_hash::FxHashMap<RegionKey, usize>,
    solutions: Vec<[Solution; 2]>,
    defaults: Defaults,
    /// The blocks holding each region's events, per kind (region,
    /// section), ascending.
    event_blocks: Vec<[Vec<u32>; 2]>,
    pub problems: Vec<Problem>,
}

impl MembershipInfo {
    /// Whether `region` was solved (user-written and OpenMP regions; CLIE's
    /// are well formed by construction).
    pub fn solved(&self, region: RegionKey) -> bool {
        self.index.contains_key(&region)
    }

    /// The membership of every point of `block` when it is one (no event
    /// of `region` (or of its sections) in the block); `None` when it may
    /// change inside the block ([`MembershipInfo::points`] tells).
    pub fn uniform(&self, region: RegionKey, section: bool, block: BlockId) -> Option<Membership> {
        let Some(&r) = self.index.get(&region) else {
            return Some(Membership::Outside);
        };
        if self.event_blocks[r][section as usize]
            .binary_search(&block.0)
            .is_ok()
        {
            return None;
        }
        let sol = &self.solutions[r][section as usize];
        let d = &self.defaults;
        Some(classify(
            sol.fwd_in(d, block.index()),
            sol.bwd_out(d, block.index()),
        ))
    }

    /// The blocks, ascending, where a point may be inside `region` (or its
    /// sections): those its events are in or reach. Everywhere else every
    /// point is outside or unreachable.
    pub fn extent(&self, region: RegionKey, section: bool) -> Vec<BlockId> {
        let Some(&r) = self.index.get(&region) else {
            return Vec::new();
        };
        let k = section as usize;
        let sol = &self.solutions[r][k];
        let mut out: Vec<u32> = sol
            .fwd_in
            .iter()
            .chain(&sol.bwd_out)
            .map(|&(b, _)| b)
            .chain(self.event_blocks[r][k].iter().copied())
            .collect();
        out.sort_unstable();
        out.dedup();
        out.into_iter().map(BlockId).collect()
    }

    /// Membership at every point of `block`: before each item, then at the
    /// end (`items.len() + 1` values), in one pass over the block.
    pub fn points(
        &self,
        cfg: &MemopCfg,
        region: RegionKey,
        section: bool,
        block: BlockId,
    ) -> Vec<Membership> {
        let items = &cfg.items[block.index()];
        if let Some(m) = self.uniform(region, section, block) {
            // Nothing in the block changes the states.
            return vec![m; items.len() + 1];
        }
        let Some(&r) = self.index.get(&region) else {
            return vec![Membership::Outside; items.len() + 1];
        };
        let sol = &self.solutions[r][section as usize];
        let mut bwd = vec![State::Unreached; items.len() + 1];
        let mut s = sol.bwd_out(&self.defaults, block.index());
        bwd[items.len()] = s;
        for (k, &item) in items.iter().enumerate().rev() {
            s = step(cfg, region, section, item, s, false);
            bwd[k] = s;
        }
        let mut out = Vec::with_capacity(items.len() + 1);
        let mut f = sol.fwd_in(&self.defaults, block.index());
        out.push(classify(f, bwd[0]));
        for (k, &item) in items.iter().enumerate() {
            f = step(cfg, region, section, item, f, true);
            out.push(classify(f, bwd[k + 1]));
        }
        out
    }

    /// Membership of the point just before item `at` of `block` (or at the
    /// end of the block), for `region` (`section == false`) or for its
    /// sections.
    #[cfg(test)]
    pub fn at(
        &self,
        cfg: &MemopCfg,
        region: RegionKey,
        section: bool,
        block: BlockId,
        at: Option<usize>,
    ) -> Membership {
        let points = self.points(cfg, region, section, block);
        let last = points.len() - 1;
        points[at.unwrap_or(last).min(last)]
    }
}

/// The effect of one item on a state, forwards or backwards.
fn step(
    cfg: &MemopCfg,
    region: RegionKey,
    section: bool,
    item: Item,
    s: State,
    forward: bool,
) -> State {
    let Item::Event(e) = item else { return s };
    let ev = cfg.event(e);
    if ev.region != region || ev.kind.is_section() != section {
        return s;
    }
    if s == State::Unreached {
        return s;
    }
    // Forwards, an entry puts us inside; backwards, an exit ahead means we
    // are inside.
    let inside = if forward {
        ev.kind.is_entry()
    } else {
        !ev.kind.is_entry()
    };
    if inside {
        State::Inside
    } else {
        State::Outside
    }
}

/// Solves membership for every region of `cfg`.
pub fn analyze(
    func: &Function,
    succs: &crate::graph::Csr,
    preds: &crate::graph::Csr,
    reachable: &[bool],
    cfg: &MemopCfg,
) -> MembershipInfo {
    let n = func.blocks.len();
    let mut info = MembershipInfo {
        regions: cfg
            .regions
            .iter()
            .copied()
            .filter(|r| !matches!(r, RegionKey::Clie(_)))
            .collect(),
        ..MembershipInfo::default()
    };
    if info.regions.is_empty() {
        return info;
    }
    for (i, &r) in info.regions.iter().enumerate() {
        info.index.entry(r).or_insert(i);
    }
    let order = crate::graph::reverse_post_order(succs, 0);
    // each block's place in `order` (u32::MAX: not in it, unreachable)
    let mut rank = vec![u32::MAX; n];
    for (i, &b) in order.iter().enumerate() {
        if let Some(r) = rank.get_mut(b as usize) {
            *r = i as u32;
        }
    }
    // Memory operations do not change membership: the dataflow steps over
    // the events alone.
    let events = BlockEvents::new(cfg);
    let scratch = Scratch::new(n, succs, preds, reachable);
    let mut work = Work::new(n);
    // The blocks holding each region's events, per kind (region, section).
    let mut event_blocks: Vec<[Vec<u32>; 2]> = vec![Default::default(); info.regions.len()];
    for b in 0..n.min(cfg.items.len()) {
        for item in events.of(b) {
            let Item::Event(e) = item else { continue };
            let ev = cfg.event(e);
            if let Some(&r) = info.index.get(&ev.region) {
                let list = &mut event_blocks[r][ev.kind.is_section() as usize];
                if list.last() != Some(&(b as u32)) {
                    list.push(b as u32);
                }
            }
        }
    }
    for (r, region) in info.regions.clone().into_iter().enumerate() {
        let mut pair: Vec<Solution> = Vec::with_capacity(2);
        let mut affected: Vec<Vec<u32>> = Vec::with_capacity(2);
        for section in [false, true] {
            let (sol, mut blocks) = solve(
                &scratch,
                &mut work,
                &events,
                region,
                section,
                &event_blocks[r][section as usize],
            );
            // in `order`'s order, the unreachable left out
            blocks.retain(|&b| rank.get(b as usize).is_some_and(|&r| r != u32::MAX));
            blocks.sort_unstable_by_key(|&b| rank[b as usize]);
            pair.push(sol);
            affected.push(blocks);
        }
        let sols = [pair.remove(0), pair.remove(0)];
        // Report the first problem per region: the compiler ignores every
        // region of the function after the first one anyway.
        let problem = find_problem(
            func,
            succs,
            preds,
            reachable,
            &events,
            region,
            &sols,
            &scratch.defaults,
            [&affected[0], &affected[1]],
        );
        info.solutions.push(sols);
        if let Some(p) = problem {
            info.problems.push(p);
        }
    }
    info.event_blocks = event_blocks;
    info.defaults = scratch.defaults;
    info
}

/// What every region's problems share: the graph, and which blocks can
/// reach a function exit.
struct Scratch<'g> {
    n: usize,
    succs: &'g crate::graph::Csr,
    preds: &'g crate::graph::Csr,
    reachable: &'g [bool],
    /// Reachable from the entry, and a function exit reachable from here.
    reaches_exit: Vec<bool>,
    /// The states of the blocks no event reaches.
    defaults: Defaults,
}

impl<'g> Scratch<'g> {
    fn new(
        n: usize,
        succs: &'g crate::graph::Csr,
        preds: &'g crate::graph::Csr,
        reachable: &'g [bool],
    ) -> Scratch<'g> {
        let mut s = Scratch {
            n,
            succs,
            preds,
            reachable,
            reaches_exit: vec![false; n],
            defaults: Defaults::default(),
        };
        let mut stack: Vec<usize> = (0..n).filter(|&b| s.live(b) && s.is_exit(b)).collect();
        while let Some(b) = stack.pop() {
            if s.reaches_exit[b] {
                continue;
            }
            s.reaches_exit[b] = true;
            for &p in preds.get(b).unwrap_or(&[]) {
                let p = p as usize;
                if p < n && s.live(p) && !s.reaches_exit[p] {
                    stack.push(p);
                }
            }
        }
        let state = |yes: bool| if yes { State::Outside } else { State::Unreached };
        s.defaults = Defaults {
            fwd_in: (0..n).map(|b| state(s.live(b))).collect(),
            bwd_out: s.reaches_exit.iter().map(|&r| state(r)).collect(),
        };
        s
    }

    fn live(&self, b: usize) -> bool {
        self.reachable.get(b).copied().unwrap_or(false)
    }

    fn is_exit(&self, b: usize) -> bool {
        self.succs.get(b).is_none_or(|s| s.is_empty())
    }

    /// The live blocks that `seeds`' `next` neighbours lead to, following
    /// `next` through blocks that are not in `stop` (the seeds' neighbours
    /// themselves always count): the blocks whose state one direction of a
    /// problem can change, since a block holding an event sets the state it
    /// passes on whatever reaches it.
    /// They are marked in `inside` (all false before), which the caller
    /// clears.
    fn spread(
        &self,
        seeds: &[u32],
        stop: &[bool],
        next: &crate::graph::Csr,
        inside: &mut [bool],
    ) -> Vec<usize> {
        let mut list = Vec::new();
        let mut stack: Vec<u32> = Vec::new();
        for &b in seeds {
            stack.extend_from_slice(next.get(b as usize).unwrap_or(&[]));
        }
        while let Some(t) = stack.pop() {
            let t = t as usize;
            if t >= self.n || !self.live(t) || inside[t] {
                continue;
            }
            inside[t] = true;
            list.push(t);
            if !stop[t] {
                stack.extend_from_slice(next.get(t).unwrap_or(&[]));
            }
        }
        list
    }
}

/// Per-block working space of [`solve`] and [`propagate`], made once per
/// function and handed from region to region: each use sets what it reads
/// of the blocks it touches and leaves the flags false, so a region costs
/// its own extent, not the function's size.
struct Work {
    has_event: Vec<bool>,
    solved: Vec<bool>,
    queued: Vec<bool>,
    entering: Vec<State>,
    leaving: Vec<State>,
}

impl Work {
    fn new(n: usize) -> Work {
        Work {
            has_event: vec![false; n],
            solved: vec![false; n],
            queued: vec![false; n],
            entering: vec![State::Unreached; n],
            leaving: vec![State::Unreached; n],
        }
    }
}

/// The positions of the region/section events among each block's items.
struct BlockEvents<'c> {
    cfg: &'c MemopCfg,
    at: crate::graph::Csr,
}

impl<'c> BlockEvents<'c> {
    fn new(cfg: &'c MemopCfg) -> BlockEvents<'c> {
        let at = crate::graph::Csr::from_lists(cfg.items.iter().map(|items| {
            items
                .iter()
                .enumerate()
                .filter(|(_, i)| matches!(i, Item::Event(_)))
                .map(|(k, _)| k as u32)
        }));
        BlockEvents { cfg, at }
    }

    /// The event items of block `b`, in order.
    fn of(&self, b: usize) -> impl DoubleEndedIterator<Item = Item> + '_ {
        let items = &self.cfg.items[b];
        self.at[b].iter().map(move |&k| items[k as usize])
    }
}

/// Solves one region's (`section == false`) or its sections' problem. The
/// state everywhere a block of `event_blocks` cannot influence is what it
/// would be with no event at all (forwards: outside; backwards: outside
/// where a function exit is reachable), so the worklists run over the
/// blocks the events can reach only: a region around one loop of a long
/// function costs the loop, not the function. Also returns which blocks'
/// points may be other than outside (the only ones `find_problem` needs to
/// look at).
fn solve(
    g: &Scratch,
    work: &mut Work,
    events: &BlockEvents,
    region: RegionKey,
    section: bool,
    event_blocks: &[u32],
) -> (Solution, Vec<u32>) {
    let n = g.n;
    let cfg = events.cfg;
    let live_events: Vec<usize> = event_blocks
        .iter()
        .map(|&b| b as usize)
        .filter(|&b| b < n && g.live(b))
        .collect();
    for &b in &live_events {
        work.has_event[b] = true;
    }
    let forward = |b: usize, s: State| {
        events
            .of(b)
            .fold(s, |s, item| step(cfg, region, section, item, s, true))
    };
    let backward = |b: usize, s: State| {
        events
            .of(b)
            .rev()
            .fold(s, |s, item| step(cfg, region, section, item, s, false))
    };
    // A live block holding an event passes on a state fixed by its events
    // alone: forwards, inside after an entry, outside (the state with no
    // event) after an exit; backwards, inside before an exit and outside
    // before an entry, where an exit is reachable at all. Only the blocks
    // that pass on "inside" start a spread.
    let fwd_seeds: Vec<u32> = live_events
        .iter()
        .copied()
        .filter(|&b| forward(b, State::Outside) == State::Inside)
        .map(|b| b as u32)
        .collect();
    let bwd_seeds: Vec<u32> = live_events
        .iter()
        .copied()
        .filter(|&b| g.reaches_exit[b] && backward(b, State::Outside) == State::Inside)
        .map(|b| b as u32)
        .collect();

    let fwd_in = propagate(g, work, true, &fwd_seeds, forward);
    let bwd_out = propagate(g, work, false, &bwd_seeds, backward);
    for &b in &live_events {
        work.has_event[b] = false;
    }
    let mut affected: Vec<u32> = live_events.iter().map(|&b| b as u32).collect();
    affected.extend(fwd_in.iter().chain(&bwd_out).map(|&(b, _)| b));
    affected.sort_unstable();
    affected.dedup();
    (Solution { fwd_in, bwd_out }, affected)
}

/// One direction of a problem: the state where the direction enters each
/// block (forwards the block's start, backwards its end), and the blocks
/// `seeds` can influence. `through` is a block's effect in the direction.
/// With no event, the entering state is outside wherever the direction can
/// come from (forwards: a live block; backwards: one from which a function
/// exit is reachable; the others, endless loops, are unreached), so only
/// the blocks `seeds` spread to (stopping at the other event blocks) are
/// solved, from unreached, with what the other blocks pass on as fixed
/// inputs, and the graph's own boundary (forwards the entry, backwards a
/// function exit: nothing comes next) as outside.
fn propagate(
    g: &Scratch,
    work: &mut Work,
    forwards: bool,
    seeds: &[u32],
    through: impl Fn(usize, State) -> State,
) -> Vec<(u32, State)> {
    let n = g.n;
    let (ahead, behind) = if forwards {
        (g.succs, g.preds)
    } else {
        (g.preds, g.succs)
    };
    let outside_or_unreached = |yes: bool| {
        if yes {
            State::Outside
        } else {
            State::Unreached
        }
    };
    // where a block the seeds do not reach is entered from
    let default = if forwards {
        &g.defaults.fwd_in
    } else {
        &g.defaults.bwd_out
    };
    let spread = g.spread(seeds, &work.has_event, ahead, &mut work.solved);
    let Work {
        solved,
        queued,
        entering,
        leaving,
        ..
    } = work;
    for &t in &spread {
        entering[t] = outside_or_unreached(if forwards { t == 0 } else { g.is_exit(t) });
        leaving[t] = State::Unreached;
    }
    // What comes in from the blocks the seeds do not reach (final).
    for &t in &spread {
        for &p in behind.get(t).unwrap_or(&[]) {
            let p = p as usize;
            if p < n && g.live(p) && !solved[p] {
                entering[t] = entering[t].join(through(p, default[p]));
            }
        }
    }
    let mut queue: Vec<usize> = spread.iter().rev().copied().collect();
    for &b in &queue {
        queued[b] = true;
    }
    while let Some(b) = queue.pop() {
        queued[b] = false;
        let s = through(b, entering[b]);
        if s == leaving[b] {
            continue;
        }
        leaving[b] = s;
        for &t in ahead.get(b).unwrap_or(&[]) {
            let t = t as usize;
            if t >= n || !solved[t] {
                continue;
            }
            let joined = entering[t].join(s);
            if joined != entering[t] {
                entering[t] = joined;
                if !queued[t] {
                    queued[t] = true;
                    queue.push(t);
                }
            }
        }
    }
    let mut out: Vec<(u32, State)> = spread.iter().map(|&t| (t as u32, entering[t])).collect();
    for &t in &spread {
        solved[t] = false;
    }
    out.sort_unstable_by_key(|&(b, _)| b);
    out
}

#[allow(clippy::too_many_arguments)]
fn find_problem(
    func: &Function,
    succs: &crate::graph::Csr,
    preds: &crate::graph::Csr,
    reachable: &[bool],
    events: &BlockEvents,
    region: RegionKey,
    sols: &[Solution; 2],
    d: &Defaults,
    affected: [&[u32]; 2],
) -> Option<Problem> {
    let cfg = events.cfg;
    let n = func.blocks.len();
    let live = |b: usize| reachable.get(b).copied().unwrap_or(false);
    let mut fwd: Vec<State> = Vec::new();
    let mut bwd: Vec<State> = Vec::new();
    let mut points: Vec<usize> = Vec::new();
    // Open at a function exit first: it is the cause of the ambiguity it
    // produces everywhere before the exit.
    // Elsewhere every point is outside (see `solve`): only the affected
    // blocks are looked at, in reverse post-order.
    for section in [false, true] {
        let sol = &sols[section as usize];
        for &b in affected[section as usize] {
            let b = b as usize;
            if b >= n || !live(b) || !succs.get(b).is_none_or(|s| s.is_empty()) {
                continue;
            }
            let mut f = sol.fwd_in(d, b);
            for item in events.of(b) {
                f = step(cfg, region, section, item, f, true);
            }
            if f == State::Inside {
                return Some(Problem {
                    region,
                    broken: if section {
                        Broken::SectionOpenAtExit
                    } else {
                        Broken::RegionOpenAtExit
                    },
                    block: BlockId(b as u32),
                    before: None,
                    witnesses: Vec::new(),
                });
            }
        }
    }
    // Then the first point where the paths disagree: a join where the last
    // event differs between incoming paths is the clearest witness; any
    // other ambiguous point after that.
    for pass in [Pass::ForwardJoin, Pass::Any] {
        for section in [false, true] {
            let sol = &sols[section as usize];
            for &b in affected[section as usize] {
                let b = b as usize;
                if b >= n || !live(b) {
                    continue;
                }
                let items = &cfg.items[b];
                // The problem at point `k` (before item `k`) of `b`, with
                // the forward state `f` and the backward one `w` there.
                let at_point = |k: usize, f: State, w: State| -> Option<Problem> {
                    if classify(f, w) != Membership::Ambiguous
                        || (pass == Pass::ForwardJoin && f != State::Mixed)
                    {
                        return None;
                    }
                    let broken = if section {
                        Broken::AmbiguousSection
                    } else {
                        Broken::AmbiguousRegion
                    };
                    // Witnesses: where the disagreeing states come from.
                    let mut witnesses = Vec::new();
                    if f == State::Mixed && k == 0 {
                        for &p in preds.get(b).unwrap_or(&[]) {
                            let p = p as usize;
                            if live(p) {
                                let mut s = sol.fwd_in(d, p);
                                for item in events.of(p) {
                                    s = step(cfg, region, section, item, s, true);
                                }
                                witnesses.push((BlockId(p as u32), s));
                            }
                        }
                    } else if w == State::Mixed && k == items.len() {
                        for &t in succs.get(b).unwrap_or(&[]) {
                            let t = t as usize;
                            if live(t) {
                                let mut s = sol.bwd_out(d, t);
                                for item in events.of(t).rev() {
                                    s = step(cfg, region, section, item, s, false);
                                }
                                witnesses.push((BlockId(t as u32), s));
                            }
                        }
                    }
                    Some(Problem {
                        region,
                        broken,
                        block: BlockId(b as u32),
                        before: items.get(k).copied(),
                        witnesses,
                    })
                };
                // The states change only across events: the points to look
                // at are the block's start and the point after each event
                // (`points[j]`), with the forward state there and the
                // backward one.
                let at = &events.at[b];
                if at.is_empty() {
                    // Only the block's start.
                    if let Some(p) = at_point(0, sol.fwd_in(d, b), sol.bwd_out(d, b)) {
                        return Some(p);
                    }
                    continue;
                }
                points.clear();
                points.push(0);
                points.extend(at.iter().map(|&e| e as usize + 1));
                fwd.clear();
                let mut s = sol.fwd_in(d, b);
                fwd.push(s);
                for &e in at {
                    s = step(cfg, region, section, items[e as usize], s, true);
                    fwd.push(s);
                }
                bwd.clear();
                bwd.resize(points.len(), State::Unreached);
                let mut s = sol.bwd_out(d, b);
                bwd[at.len()] = s;
                for (j, &e) in at.iter().enumerate().rev() {
                    s = step(cfg, region, section, items[e as usize], s, false);
                    bwd[j] = s;
                }
                for (j, &k) in points.iter().enumerate() {
                    if let Some(p) = at_point(k, fwd[j], bwd[j]) {
                        return Some(p);
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Csr;
    use crate::ir::builder::FunctionBuilder;
    use crate::regions::events::{EventKind, EventOrigin, RegionEvent};
    use crate::source::Span;

    const R: RegionKey = RegionKey::User(0);

    /// A CFG of `edges` over `n` blocks, with `events[b]` the region/section
    /// events of block `b` in order (`E`/`X` region entry/exit, `e`/`x`
    /// section entry/exit) and `M` memory placeholders (events of another
    /// region, which membership of R ignores).
    fn build(n: usize, edges: &[(u32, u32)], events: &[&str]) -> (Function, Csr, Csr, MemopCfg) {
        let mut b = FunctionBuilder::new("t".into(), Lang::C, Span::default(), Span::default());
        for _ in 1..n {
            b.new_block("b", None);
        }
        let mut func = b.finish();
        func.blocks.truncate(n);
        let mut succs = vec![Vec::new(); n];
        for &(a, c) in edges {
            succs[a as usize].push(c);
        }
        for (i, s) in succs.iter().enumerate() {
            func.blocks[i].term.kind = match s.as_slice() {
                [] => TermKind::Return,
                [t] => TermKind::Goto(BlockId(*t)),
                ts => TermKind::Switch {
                    targets: ts.iter().map(|&t| BlockId(t)).collect(),
                },
            };
        }
        let succs = Csr::from_lists(succs.iter().map(|l| l.iter().copied()));
        let preds = Csr::reversed(&succs);
        let mut cfg = MemopCfg {
            events: Vec::new(),
            items: vec![Vec::new(); n],
            regions: vec![R, RegionKey::User(9)],
        };
        for (blk, s) in events.iter().enumerate() {
            for c in s.chars() {
                let (kind, region) = match c {
                    'E' => (EventKind::RegionEntry, R),
                    'X' => (EventKind::RegionExit, R),
                    'e' => (EventKind::SectionEntry, R),
                    'x' => (EventKind::SectionExit, R),
                    _ => (EventKind::RegionEntry, RegionKey::User(9)),
                };
                cfg.events.push(RegionEvent {
                    kind,
                    region,
                    origin: EventOrigin::User(BuiltinId(0)),
                    span: Span::default(),
                    block: BlockId(blk as u32),
                });
                cfg.items[blk].push(Item::Event(cfg.events.len() - 1));
            }
        }
        (func, succs, preds, cfg)
    }

    fn run(n: usize, edges: &[(u32, u32)], events: &[&str]) -> (MembershipInfo, MemopCfg) {
        let (func, succs, preds, cfg) = build(n, edges, events);
        let reachable = vec![true; n];
        (analyze(&func, &succs, &preds, &reachable, &cfg), cfg)
    }

    fn at_end(info: &MembershipInfo, cfg: &MemopCfg, b: u32, section: bool) -> Membership {
        info.at(cfg, R, section, BlockId(b), None)
    }

    /// The textbook solution: every live block recomputed from all its
    /// neighbours, round after round, from unreached until nothing changes.
    fn dense_solution(
        g: &Scratch,
        events: &BlockEvents,
        region: RegionKey,
        section: bool,
    ) -> Solution {
        let cfg = events.cfg;
        let fold = |b: usize, s: State, fwd: bool| {
            let mut s = s;
            let evs: Vec<Item> = events.of(b).collect();
            let evs: Vec<Item> = if fwd {
                evs
            } else {
                evs.into_iter().rev().collect()
            };
            for item in evs {
                s = step(cfg, region, section, item, s, fwd);
            }
            s
        };
        let n = g.n;
        let mut fwd_in = vec![State::Unreached; n];
        let mut bwd_out = vec![State::Unreached; n];
        loop {
            let mut changed = false;
            for b in (0..n).filter(|&b| g.live(b)) {
                let mut f = if b == 0 {
                    State::Outside
                } else {
                    State::Unreached
                };
                for &p in g.preds.get(b).unwrap_or(&[]) {
                    if g.live(p as usize) {
                        f = f.join(fold(p as usize, fwd_in[p as usize], true));
                    }
                }
                let mut w = if g.is_exit(b) {
                    State::Outside
                } else {
                    State::Unreached
                };
                for &t in g.succs.get(b).unwrap_or(&[]) {
                    if g.live(t as usize) {
                        w = w.join(fold(t as usize, bwd_out[t as usize], false));
                    }
                }
                changed |= f != fwd_in[b] || w != bwd_out[b];
                fwd_in[b] = f;
                bwd_out[b] = w;
            }
            if !changed {
                let all = |v: Vec<State>| v.into_iter().enumerate().map(|(b, s)| (b as u32, s)).collect();
                return Solution {
                    fwd_in: all(fwd_in),
                    bwd_out: all(bwd_out),
                };
            }
        }
    }

    proptest::proptest! {
        /// The sparse worklists give the textbook solution, and the first
        /// problem found among the affected blocks is the first among all.
        #[test]
        fn sparse_solve_matches_the_dense_one(
            n in 1usize..10,
            edges in proptest::collection::vec((0u32..10, 0u32..10), 0..20),
            events in proptest::collection::vec("[EXexM]{0,3}", 10),
        ) {
            let edges: Vec<(u32, u32)> = edges
                .into_iter()
                .filter(|&(a, b)| (a as usize) < n && (b as usize) < n)
                .collect();
            let evs: Vec<&str> = events.iter().take(n).map(String::as_str).collect();
            let (func, succs, preds, cfg) = build(n, &edges, &evs);
            let reachable = crate::graph::reachable(&succs, 0);
            let info = analyze(&func, &succs, &preds, &reachable, &cfg);
            let g = Scratch::new(n, &succs, &preds, &reachable);
            let events = BlockEvents::new(&cfg);
            let order = crate::graph::reverse_post_order(&succs, 0);
            let d = &info.defaults;
            for (r, &region) in info.regions.iter().enumerate() {
                let dense = [false, true].map(|section| dense_solution(&g, &events, region, section));
                for section in [0, 1] {
                    let sparse = &info.solutions[r][section];
                    let extent = info.extent(region, section == 1);
                    for b in 0..n {
                        proptest::prop_assert_eq!(sparse.fwd_in(d, b), dense[section].fwd_in(d, b));
                        proptest::prop_assert_eq!(sparse.bwd_out(d, b), dense[section].bwd_out(d, b));
                        // outside the extent, no point is inside
                        let block = BlockId(b as u32);
                        if !extent.contains(&block) {
                            let points = info.points(&cfg, region, section == 1, block);
                            proptest::prop_assert!(!points.contains(&Membership::Inside));
                        }
                    }
                }
                let expected = find_problem(
                    &func, &succs, &preds, &reachable, &events, region, &dense, d, [&order, &order],
                );
                let found = info.problems.iter().find(|p| p.region == region).cloned();
                proptest::prop_assert_eq!(found, expected);
            }
        }
    }

    #[test]
    fn straight_line_region_and_section() {
        // bb0: E e | bb1: (work) | bb2: x X
        let (info, cfg) = run(3, &[(0, 1), (1, 2)], &["Ee", "", "xX"]);
        assert!(info.problems.is_empty(), "{:?}", info.problems);
        assert_eq!(at_end(&info, &cfg, 1, false), Membership::Inside);
        assert_eq!(at_end(&info, &cfg, 1, true), Membership::Inside);
        assert_eq!(
            info.at(&cfg, R, false, BlockId(0), Some(0)),
            Membership::Outside
        );
        assert_eq!(at_end(&info, &cfg, 2, false), Membership::Outside);
    }

    #[test]
    fn loop_pattern_header_is_in_region_not_in_section() {
        // bb0: E | bb1 header -> bb2 body (e ... x) -> bb1; bb1 -> bb3: X
        let (info, cfg) = run(4, &[(0, 1), (1, 2), (2, 1), (1, 3)], &["E", "", "ex", "X"]);
        assert!(info.problems.is_empty(), "{:?}", info.problems);
        assert_eq!(at_end(&info, &cfg, 1, false), Membership::Inside);
        assert_eq!(at_end(&info, &cfg, 1, true), Membership::Outside);
        assert_eq!(
            info.at(&cfg, R, true, BlockId(2), Some(1)),
            Membership::Inside
        );
    }

    #[test]
    fn exit_on_one_branch_is_ambiguous_at_the_join() {
        // bb0: E -> bb1 | bb2: X ; both -> bb3 (ERROR) -> bb4: X
        let (info, _) = run(
            5,
            &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)],
            &["E", "", "X", "", "X"],
        );
        assert_eq!(info.problems.len(), 1);
        let p = &info.problems[0];
        assert_eq!(p.broken, Broken::AmbiguousRegion);
        assert_eq!(p.block, BlockId(3));
        let mut w = p.witnesses.clone();
        w.sort_by_key(|x| x.0);
        assert_eq!(
            w,
            vec![(BlockId(1), State::Inside), (BlockId(2), State::Outside)]
        );
    }

    #[test]
    fn section_closed_on_one_branch_only() {
        // bb0: E e -> bb1: x | bb2 ; both -> bb3 -> bb4: X
        let (info, _) = run(
            5,
            &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)],
            &["Ee", "x", "", "", "X"],
        );
        assert_eq!(info.problems.len(), 1);
        assert_eq!(info.problems[0].broken, Broken::AmbiguousSection);
        assert_eq!(info.problems[0].block, BlockId(3));
    }

    #[test]
    fn open_at_function_exit() {
        let (info, _) = run(2, &[(0, 1)], &["E", ""]);
        assert_eq!(info.problems[0].broken, Broken::RegionOpenAtExit);
        let (info, _) = run(2, &[(0, 1)], &["Ee", "X"]);
        assert_eq!(info.problems[0].broken, Broken::SectionOpenAtExit);
    }

    #[test]
    fn endless_loop_inside_region_is_not_ambiguous() {
        // bb0: E -> bb1 -> bb1 (never leaves)
        let (info, cfg) = run(2, &[(0, 1), (1, 1)], &["E", ""]);
        assert!(info.problems.is_empty(), "{:?}", info.problems);
        assert_eq!(at_end(&info, &cfg, 1, false), Membership::Inside);
    }

    #[test]
    fn other_regions_do_not_interfere() {
        let (info, cfg) = run(3, &[(0, 1), (1, 2)], &["EM", "M", "X"]);
        assert!(
            info.problems.iter().all(|p| p.region != R),
            "{:?}",
            info.problems
        );
        assert_eq!(at_end(&info, &cfg, 1, false), Membership::Inside);
    }

    #[test]
    fn unreachable_blocks_are_ignored() {
        // bb2 is unreachable and holds a stray exit.
        let (func, succs, preds, cfg) = build(3, &[(0, 1), (2, 1)], &["E", "X", "X"]);
        let reachable = vec![true, true, false];
        let info = analyze(&func, &succs, &preds, &reachable, &cfg);
        assert!(info.problems.is_empty(), "{:?}", info.problems);
    }
}
