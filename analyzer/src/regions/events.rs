//! The memory-operation CFG: for every block, its memory operations and
//! region/section intrinsics in execution order, whichever way the
//! intrinsics came to be (SEMANTICS.md §6, §2.4):
//!
//! * written by the user (`__builtin_csa_parallel_{region,section}_*`), at
//!   their statement;
//! * lowered from an OpenMP worksharing loop by the front end, before CLIE:
//!   region entry at the end of the preheader, region exit at the top of
//!   every exit block, the section around the source-level body (entry at
//!   the top of the body's first block, exit where the body ends: the top
//!   of the latch when it is a separate increment/condition block, else the
//!   end of the latch);
//! * placed by CLIE for a parallelized marked loop, in CLIE's order (inner
//!   loops first), exactly where CLIE puts them: region entry at the end of
//!   the preheader, region exits at the top of the exit blocks, the section
//!   entry before the first instruction of the section's first block that
//!   may touch memory (intrinsics inserted before count, as in the
//!   compiler) and the section exit after the last one of its last block.
//!
//! Built once per function in O(blocks + operations + placements × block
//! length).

use crate::clie::{ClieResult, Outcome};
use crate::graph::loops::{LoopForest, LoopId};
use crate::ir::*;
use crate::memory::{MemOpKind, MemoryInfo};
use crate::source::Span;

/// Identifies a region. User regions are identified by their id (all
/// entries with one id are one region, as in the compiler); regions the
/// compiler inserts have ids of their own that never collide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RegionKey {
    User(i64),
    /// CLIE's region for the marked loop.
    Clie(LoopId),
    /// An OpenMP worksharing loop (index into `Function::source_loops`).
    Omp(usize),
    /// An OpenMP `sections` construct (index into `Function::omp_sections`).
    OmpSections(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    RegionEntry,
    RegionExit,
    SectionEntry,
    SectionExit,
}

impl EventKind {
    pub fn from_builtin(kind: BuiltinKind) -> Option<EventKind> {
        match kind {
            BuiltinKind::RegionEntry => Some(EventKind::RegionEntry),
            BuiltinKind::RegionExit => Some(EventKind::RegionExit),
            BuiltinKind::SectionEntry => Some(EventKind::SectionEntry),
            BuiltinKind::SectionExit => Some(EventKind::SectionExit),
            _ => None,
        }
    }

    pub fn is_section(self) -> bool {
        matches!(self, EventKind::SectionEntry | EventKind::SectionExit)
    }

    pub fn is_entry(self) -> bool {
        matches!(self, EventKind::RegionEntry | EventKind::SectionEntry)
    }

    pub fn describe(self) -> &'static str {
        match self {
            EventKind::RegionEntry => "region entry",
            EventKind::RegionExit => "region exit",
            EventKind::SectionEntry => "section entry",
            EventKind::SectionExit => "section exit",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventOrigin {
    User(BuiltinId),
    Clie { loop_id: LoopId, marker: BuiltinId },
    Omp { source_loop: usize },
    OmpSections { index: usize },
}

/// One region/section intrinsic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionEvent {
    pub kind: EventKind,
    pub region: RegionKey,
    pub origin: EventOrigin,
    /// Where to point: the user's call, the marker or pragma that caused it.
    pub span: Span,
    pub block: BlockId,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// An index into `MemoryInfo::ops`.
    Mem(usize),
    /// An index into `MemopCfg::events`.
    Event(usize),
}

/// Per block, memory operations and region/section intrinsics in order.
#[derive(Clone, Debug, Default)]
pub struct MemopCfg {
    pub events: Vec<RegionEvent>,
    pub items: Vec<Vec<Item>>,
    /// Every region key that has at least one event, sorted.
    pub regions: Vec<RegionKey>,
}

impl MemopCfg {
    pub fn event(&self, i: usize) -> &RegionEvent {
        &self.events[i]
    }

    /// Whether the item is a memory operation for ordering: everything the
    /// memory model lists except intrinsics (markers vanish after CLIE,
    /// region/section intrinsics are events), lifetime starts and inline
    /// assembly, which the compiler's ordering pass never orders
    /// (`needsOrderingEdges` in CSAMemopOrdering: an asm call is not a
    /// memop, although CLIE counts it when it places its section).
    pub fn is_ordering_memop(memory: &MemoryInfo, item: Item) -> Option<usize> {
        match item {
            Item::Mem(i) => match memory.ops[i].kind {
                MemOpKind::Intrinsic | MemOpKind::LifetimeStart | MemOpKind::Asm => None,
                _ => Some(i),
            },
            Item::Event(_) => None,
        }
    }
}

/// The inputs the memop CFG is built from.
pub struct EventInput<'a> {
    pub func: &'a Function,
    pub forest: &'a LoopForest,
    pub preheaders: &'a [Option<BlockId>],
    pub memory: &'a MemoryInfo,
    pub clie: &'a ClieResult,
    /// The region id each user region/section intrinsic belongs to, `None`
    /// when its token does not resolve (the compiler stops there).
    pub region_of: &'a dyn Fn(BuiltinId) -> Option<i64>,
}

pub fn build(inp: &EventInput) -> MemopCfg {
    let func = inp.func;
    let mut cfg = MemopCfg {
        events: Vec::new(),
        items: vec![Vec::new(); func.blocks.len()],
        regions: Vec::new(),
    };
    // Memory operations in their post-LICM order; user intrinsics (which
    // the memory model lists as intrinsic operations) become events in place.
    for (b, ops) in inp.memory.block_ops.iter().enumerate() {
        for &i in ops {
            let op = &inp.memory.ops[i];
            let user_event = match func.block(op.orig_block).insts.get(op.inst as usize) {
                Some(Inst {
                    kind: InstKind::Builtin(id),
                    ..
                }) if func.lang == Lang::C => {
                    let bc = func.builtin(*id);
                    EventKind::from_builtin(bc.kind).map(|k| (k, *id, bc.span))
                }
                _ => None,
            };
            match user_event {
                Some((kind, id, span)) => {
                    if let Some(r) = (inp.region_of)(id) {
                        let e = push_event(
                            &mut cfg,
                            RegionEvent {
                                kind,
                                region: RegionKey::User(r),
                                origin: EventOrigin::User(id),
                                span,
                                block: BlockId(b as u32),
                            },
                        );
                        cfg.items[b].push(Item::Event(e));
                    }
                }
                None => cfg.items[b].push(Item::Mem(i)),
            }
        }
    }

    // OpenMP loops: lowered by the front end, so present before CLIE.
    for (si, sl) in func.source_loops.iter().enumerate() {
        let Some(pragma) = sl.omp else { continue };
        let Some(l) = inp.forest.loop_with_header(sl.header.0) else {
            continue;
        };
        let Some(pre) = inp.preheaders.get(l.index()).copied().flatten() else {
            continue;
        };
        let data = &inp.forest.loops[l.index()];
        let region = RegionKey::Omp(si);
        let origin = EventOrigin::Omp { source_loop: si };
        let ev = |kind, block: BlockId| RegionEvent {
            kind,
            region,
            origin,
            span: pragma,
            block,
        };
        let e = push_event(&mut cfg, ev(EventKind::RegionEntry, pre));
        cfg.items[pre.index()].push(Item::Event(e));
        for &x in &data.exit_blocks {
            let e = push_event(&mut cfg, ev(EventKind::RegionExit, BlockId(x)));
            cfg.items[x as usize].insert(0, Item::Event(e));
        }
        let body = sl.body_entry.unwrap_or(BlockId(data.header));
        let e = push_event(&mut cfg, ev(EventKind::SectionEntry, body));
        cfg.items[body.index()].insert(0, Item::Event(e));
        if let [latch] = data.latches.as_slice() {
            let latch = BlockId(*latch);
            let e = push_event(&mut cfg, ev(EventKind::SectionExit, latch));
            if latch != body && latch.0 != data.header && is_loop_control_block(func, latch) {
                cfg.items[latch.index()].insert(0, Item::Event(e));
            } else {
                cfg.items[latch.index()].push(Item::Event(e));
            }
        }
    }

    // OpenMP sections (genCSASections): the region from the end of the
    // construct's entry block to the top of the block it falls into, a
    // section from the end of each section's entry block to the top of the
    // block it falls into.
    for (i, s) in func.omp_sections.iter().enumerate() {
        let region = RegionKey::OmpSections(i);
        let origin = EventOrigin::OmpSections { index: i };
        let ev = |kind, block: BlockId, span| RegionEvent {
            kind,
            region,
            origin,
            span,
            block,
        };
        let live = |b: BlockId| b.index() < cfg.items.len();
        if !live(s.entry)
            || !live(s.exit)
            || s.sections.iter().any(|x| !live(x.entry) || !live(x.exit))
        {
            continue;
        }
        let e = push_event(&mut cfg, ev(EventKind::RegionEntry, s.entry, s.directive));
        cfg.items[s.entry.index()].push(Item::Event(e));
        for x in &s.sections {
            let e = push_event(&mut cfg, ev(EventKind::SectionEntry, x.entry, x.span));
            cfg.items[x.entry.index()].push(Item::Event(e));
            let e = push_event(&mut cfg, ev(EventKind::SectionExit, x.exit, x.span));
            cfg.items[x.exit.index()].insert(0, Item::Event(e));
        }
        // the construct's exit block is its own (no section exit in it)
        let e = push_event(&mut cfg, ev(EventKind::RegionExit, s.exit, s.directive));
        cfg.items[s.exit.index()].insert(0, Item::Event(e));
    }

    // CLIE expansions, in CLIE's order (inner loops first).
    for v in &inp.clie.verdicts {
        let Outcome::Parallelized(p) = &v.outcome else {
            continue;
        };
        let marker = func.builtin(v.marker);
        let region = RegionKey::Clie(v.loop_id);
        let origin = EventOrigin::Clie {
            loop_id: v.loop_id,
            marker: v.marker,
        };
        let ev = |kind, block: BlockId| RegionEvent {
            kind,
            region,
            origin,
            span: marker.span,
            block,
        };
        let e = push_event(&mut cfg, ev(EventKind::RegionEntry, p.region_entry));
        cfg.items[p.region_entry.index()].push(Item::Event(e));
        for &x in &p.region_exits {
            let e = push_event(&mut cfg, ev(EventKind::RegionExit, x));
            cfg.items[x.index()].insert(0, Item::Event(e));
        }
        // The section entry goes before the first instruction that may touch
        // memory (or the terminator): every item listed may (intrinsics
        // placed earlier too), so it goes first. The exit goes after the
        // last one, or at the top of an empty block: last.
        let e = push_event(&mut cfg, ev(EventKind::SectionEntry, p.section_begin));
        cfg.items[p.section_begin.index()].insert(0, Item::Event(e));
        let e = push_event(&mut cfg, ev(EventKind::SectionExit, p.section_end));
        cfg.items[p.section_end.index()].push(Item::Event(e));
    }
    let mut regions: Vec<RegionKey> = cfg.events.iter().map(|e| e.region).collect();
    regions.sort();
    regions.dedup();
    cfg.regions = regions;
    cfg
}

fn push_event(cfg: &mut MemopCfg, e: RegionEvent) -> usize {
    cfg.events.push(e);
    cfg.events.len() - 1
}

/// Blocks the front ends and LoopSimplify create for the loop's own control
/// (increment, `do ... while` condition, merged latch), as opposed to blocks
/// of the source-level body.
fn is_loop_control_block(func: &Function, b: BlockId) -> bool {
    matches!(
        func.block(b).name,
        "for.inc" | "do.inc" | "do.cond" | "backedge"
    )
}
