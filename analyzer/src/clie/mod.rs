//! CLIE, the CSALoopIntrinsicExpander (SEMANTICS.md §5): which loop each
//! marker belongs to, where the parallel region and section go, and whether
//! the expansion succeeds.
//!
//! Attachment (§5.1): for every loop, inner loops first, scan from the
//! preheader: the first marker in program order in a block wins; with none,
//! move to the block's single predecessor while it sits in the same loop as
//! the preheader. A marker may be found by several loops (a branch before two
//! loops) or by none (then the compiler deletes it silently).
//!
//! Section placement (§5.2): with the loop's latch-to-header edge rerouted to
//! a dummy exit block, grow [begin, end] by nearest common dominator /
//! post-dominator over the subloops' preheaders and exit blocks and every
//! loop block holding a memory operation (`crate::memory`) that is not yet
//! inside; fail when either bound leaves the loop. Post-dominators are
//! recomputed per marked loop (O(blocks) each).

pub mod spmdization;

use crate::graph::dom::DomTree;
use crate::graph::loops::{LoopForest, LoopId};
use crate::ir::*;
use crate::memory::MemoryInfo;
use crate::source::Span;

/// Why a marker reached no loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unattached {
    /// The marker is in code that never runs.
    Unreachable,
    /// No loop follows the marker in its function.
    NoLoopFollows,
    /// The loop that follows could not be analysed (irreducible control flow).
    LoopNotAnalysable { loop_span: Span },
    /// The search from the following loop stopped at a block where control
    /// flow merges.
    Join {
        loop_span: Span,
        /// The statement that creates the merge (the `if`, `switch`, label).
        at: Option<Span>,
        /// Where the merging edges come from.
        preds: Vec<Span>,
    },
    /// The search stopped because the predecessor belongs to another loop.
    OtherLoop {
        loop_span: Span,
        other_loop: Option<Span>,
    },
    /// The search reached the function entry without meeting the marker.
    NotBefore { loop_span: Span },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkerStatus {
    /// Found by these loops.
    Attached(Vec<LoopId>),
    /// A nearer marker on the same straight-line run won.
    Shadowed {
        by: BuiltinId,
        loop_id: LoopId,
    },
    Unattached(Unattached),
    /// A Fortran call CSAFortranIntrinsics rejects (bad arguments) or does not
    /// know: it stays an external call and marks nothing.
    NotAMarker,
}

#[derive(Clone, Debug)]
pub struct MarkerInfo {
    pub builtin: BuiltinId,
    pub status: MarkerStatus,
}

/// A placed region and section for a parallelized loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The region entry goes at the end of this block (the preheader).
    pub region_entry: BlockId,
    /// A region exit goes at the top of each of these blocks (the exits).
    pub region_exits: Vec<BlockId>,
    pub section_begin: BlockId,
    pub section_end: BlockId,
    /// The section entry goes before this memory operation (None: before the
    /// terminator of `section_begin`).
    pub section_entry_before: Option<Span>,
    /// The section exit goes after this memory operation (None: at the top
    /// of `section_end`).
    pub section_exit_after: Option<Span>,
}

/// Why section placement failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementFailure {
    /// The block that could not be included.
    pub block: BlockId,
    /// The blocks included so far (their memory operations or subloops
    /// explain what the section had to contain).
    pub included: Vec<BlockId>,
    /// The dominator side failed (`true`) or the post-dominator side.
    pub dominator_side: bool,
    /// The subloop whose preheader/exit this was, if any.
    pub subloop: Option<LoopId>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Region and section placed.
    Parallelized(Placement),
    /// `parallel_loop` on a loop without memory operations or subloops.
    NoMemoryOperations,
    /// `spmd` on a loop without memory operations: SPMDized, no section.
    SpmdWithoutMemory,
    CouldNotParallelize(PlacementFailure),
    /// `spmdization` with a kind CLIE does not accept: section found but the
    /// expansion is abandoned.
    BadSpmdizationKind(Placement),
    /// `pipeline_loop` with depth >= 0.
    Pipelined {
        depth: i64,
    },
    /// `pipeline_loop` with a negative or non-constant depth.
    BadPipelineDepth,
}

#[derive(Clone, Debug)]
pub struct LoopVerdict {
    pub loop_id: LoopId,
    pub marker: BuiltinId,
    pub outcome: Outcome,
    /// What LoopSPMDization then does with the loop (`spmdization`), for
    /// `spmd`/`spmdization` markers.
    pub spmd: Option<spmdization::Spmdization>,
}

#[derive(Clone, Debug, Default)]
pub struct ClieResult {
    pub markers: Vec<MarkerInfo>,
    pub verdicts: Vec<LoopVerdict>,
}

impl ClieResult {
    pub fn verdict_for(&self, l: LoopId) -> Option<&LoopVerdict> {
        self.verdicts.iter().find(|v| v.loop_id == l)
    }
}

/// Whether `b` acts as a loop marker for CLIE.
pub fn is_active_marker(func: &Function, b: &BuiltinCall) -> bool {
    b.kind.is_marker() && (func.lang == Lang::C || b.fortran_accepted())
}

/// Chunk size of an spmdization kind string, case-insensitively.
pub fn spmdization_chunk(kind: &str) -> Option<i64> {
    match kind.to_ascii_lowercase().as_str() {
        "cyclic" => Some(1),
        "block" | "blocked" | "blocking" => Some(0),
        "hybrid" => Some(8),
        _ => None,
    }
}

/// The per-function inputs CLIE needs.
pub struct ClieInput<'a> {
    pub func: &'a Function,
    pub succs: &'a crate::graph::Csr,
    pub preds: &'a crate::graph::Csr,
    pub dom: &'a DomTree,
    pub forest: &'a LoopForest,
    pub preheaders: &'a [Option<BlockId>],
    pub memory: &'a MemoryInfo,
    pub reachable: &'a [bool],
    /// Loops CLIE must skip (not in LoopSimplify form, irreducible).
    pub skipped: &'a [bool],
}

/// Where one loop's marker search went.
struct Search {
    /// Blocks scanned, nearest first.
    chain: Vec<BlockId>,
    found: Option<BuiltinId>,
    /// The last block of the walk: its predecessors ended it.
    stop: Option<BlockId>,
}

fn search_marker(inp: &ClieInput, l: LoopId) -> Option<Search> {
    let pre = inp.preheaders.get(l.0 as usize).copied().flatten()?;
    let pre_loop = inp.forest.loop_for(pre.0);
    let mut chain = Vec::new();
    let mut found = None;
    let mut cur = Some(pre);
    let mut stop = None;
    // The compiler stops at the first marker; we walk on to the end of the
    // straight-line run so that markers further back can be reported as
    // shadowed.
    while let Some(b) = cur {
        if inp.forest.loop_for(b.0) != pre_loop || chain.contains(&b) {
            break;
        }
        chain.push(b);
        if found.is_none() {
            found = inp
                .func
                .block(b)
                .insts
                .iter()
                .find_map(|inst| match inst.kind {
                    InstKind::Builtin(id) if is_active_marker(inp.func, inp.func.builtin(id)) => {
                        Some(id)
                    }
                    _ => None,
                });
        }
        let preds = reachable_preds(inp, b);
        stop = Some(b);
        cur = if preds.len() == 1 {
            Some(BlockId(preds[0]))
        } else {
            None
        };
    }
    Some(Search { chain, found, stop })
}

/// Reachable predecessors of `b`, one entry per edge.
fn reachable_preds(inp: &ClieInput, b: BlockId) -> Vec<u32> {
    inp.preds
        .get(b.index())
        .map(|p| {
            p.iter()
                .copied()
                .filter(|&p| inp.reachable.get(p as usize).copied().unwrap_or(false))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs CLIE on one function.
pub fn run(inp: &ClieInput) -> ClieResult {
    let func = inp.func;
    let nloops = inp.forest.loops.len();
    // Inner loops first (post-order of the loop tree), like recurseLoops.
    let mut order: Vec<LoopId> = Vec::with_capacity(nloops);
    {
        let mut stack: Vec<(LoopId, bool)> = inp
            .forest
            .top_level
            .iter()
            .rev()
            .map(|&l| (l, false))
            .collect();
        while let Some((l, expanded)) = stack.pop() {
            if expanded {
                order.push(l);
                continue;
            }
            stack.push((l, true));
            for &c in inp.forest.loops[l.0 as usize].children.iter().rev() {
                stack.push((c, false));
            }
        }
    }

    let mut searches: Vec<Option<Search>> = (0..nloops).map(|_| None).collect();
    let mut verdicts = Vec::new();
    for &l in &order {
        if inp.skipped.get(l.0 as usize).copied().unwrap_or(true) {
            continue;
        }
        let Some(search) = search_marker(inp, l) else {
            continue;
        };
        if let Some(m) = search.found {
            let outcome = expand(inp, l, func.builtin(m));
            let spmd = spmdization::spmdization(
                &spmdization::SpmdInput {
                    func,
                    preds: inp.preds,
                    forest: inp.forest,
                    memory: inp.memory,
                },
                l,
                func.builtin(m),
                &outcome,
            );
            verdicts.push(LoopVerdict {
                loop_id: l,
                marker: m,
                outcome,
                spmd,
            });
        }
        searches[l.0 as usize] = Some(search);
    }

    let mut markers = Vec::new();
    for (i, b) in func.builtins.iter().enumerate() {
        let id = BuiltinId(i as u32);
        if !b.kind.is_marker() {
            continue;
        }
        let status = if !is_active_marker(func, b) {
            MarkerStatus::NotAMarker
        } else {
            let attached: Vec<LoopId> = verdicts
                .iter()
                .filter(|v| v.marker == id)
                .map(|v| v.loop_id)
                .collect();
            if !attached.is_empty() {
                MarkerStatus::Attached(attached)
            } else {
                why_unattached(inp, id, b, &searches)
            }
        };
        markers.push(MarkerInfo {
            builtin: id,
            status,
        });
    }
    ClieResult { markers, verdicts }
}

fn why_unattached(
    inp: &ClieInput,
    id: BuiltinId,
    b: &BuiltinCall,
    searches: &[Option<Search>],
) -> MarkerStatus {
    if !inp.reachable.get(b.block.index()).copied().unwrap_or(false) {
        return MarkerStatus::Unattached(Unattached::Unreachable);
    }
    // A search that passed through the marker's block but took another marker.
    for (li, s) in searches.iter().enumerate() {
        let Some(s) = s else { continue };
        if let Some(w) = s.found {
            if w != id && s.chain.contains(&b.block) {
                return MarkerStatus::Shadowed {
                    by: w,
                    loop_id: LoopId(li as u32),
                };
            }
        }
    }
    // The loop the programmer most likely meant: the first loop statement
    // after the marker.
    let func = inp.func;
    let Some(sl) = func
        .source_loops
        .iter()
        .filter(|sl| sl.span.start >= b.span.end)
        .min_by_key(|sl| sl.span.start)
    else {
        return MarkerStatus::Unattached(Unattached::NoLoopFollows);
    };
    let loop_span = sl.span;
    let Some(l) = inp
        .forest
        .loops
        .iter()
        .position(|d| d.header == sl.header.0)
        .map(|i| LoopId(i as u32))
    else {
        return MarkerStatus::Unattached(Unattached::LoopNotAnalysable { loop_span });
    };
    let Some(Some(search)) = searches.get(l.0 as usize) else {
        return MarkerStatus::Unattached(Unattached::LoopNotAnalysable { loop_span });
    };
    let Some(stop) = search.stop else {
        return MarkerStatus::Unattached(Unattached::NotBefore { loop_span });
    };
    let preds = reachable_preds(inp, stop);
    match preds.len() {
        0 => MarkerStatus::Unattached(Unattached::NotBefore { loop_span }),
        1 => {
            let other = inp.forest.loop_for(preds[0]);
            let other_loop = other.and_then(|o| {
                let header = inp.forest.loops[o.0 as usize].header;
                func.source_loops
                    .iter()
                    .find(|sl| sl.header.0 == header)
                    .map(|sl| sl.span)
            });
            MarkerStatus::Unattached(Unattached::OtherLoop {
                loop_span,
                other_loop,
            })
        }
        _ => {
            let block = func.block(stop);
            let pred_spans = preds
                .iter()
                .filter_map(|&p| func.block(BlockId(p)).term.span)
                .collect();
            MarkerStatus::Unattached(Unattached::Join {
                loop_span,
                at: block.origin,
                preds: pred_spans,
            })
        }
    }
}

fn expand(inp: &ClieInput, l: LoopId, marker: &BuiltinCall) -> Outcome {
    let int_arg = |i: usize| match marker.args.get(i).map(|a| &a.value) {
        Some(ArgValue::Int(v)) => Some(*v),
        _ => None,
    };
    match marker.kind {
        BuiltinKind::PipelineLoop => match int_arg(0) {
            Some(d) if d >= 0 => Outcome::Pipelined { depth: d },
            _ => Outcome::BadPipelineDepth,
        },
        BuiltinKind::ParallelLoop | BuiltinKind::Spmd | BuiltinKind::Spmdization => {
            let placed = place_section(inp, l);
            match placed {
                Err(f) => Outcome::CouldNotParallelize(f),
                Ok(None) => {
                    if marker.kind == BuiltinKind::ParallelLoop {
                        Outcome::NoMemoryOperations
                    } else if marker.kind == BuiltinKind::Spmdization
                        && !spmdization_kind_ok(marker)
                    {
                        Outcome::BadSpmdizationKind(empty_placement(inp, l))
                    } else {
                        Outcome::SpmdWithoutMemory
                    }
                }
                Ok(Some(p)) => {
                    if marker.kind == BuiltinKind::Spmdization && !spmdization_kind_ok(marker) {
                        Outcome::BadSpmdizationKind(p)
                    } else {
                        Outcome::Parallelized(p)
                    }
                }
            }
        }
        _ => Outcome::NoMemoryOperations,
    }
}

/// Whether the second argument of `spmdization` is a kind CLIE accepts.
pub fn spmdization_kind_ok(marker: &BuiltinCall) -> bool {
    matches!(marker.args.get(1).map(|a| &a.value), Some(ArgValue::Str(s)) if spmdization_chunk(s).is_some())
}

fn empty_placement(inp: &ClieInput, l: LoopId) -> Placement {
    let data = &inp.forest.loops[l.0 as usize];
    let pre = inp.preheaders[l.0 as usize].unwrap_or(BlockId(data.header));
    Placement {
        region_entry: pre,
        region_exits: data.exit_blocks.iter().map(|&b| BlockId(b)).collect(),
        section_begin: BlockId(data.header),
        section_end: BlockId(data.header),
        section_entry_before: None,
        section_exit_after: None,
    }
}

/// Post-dominators for placing the section of loop `l`, with its latch's
/// edges to the header rerouted to a dummy exit.
///
/// Computed on the outermost loop `T` that contains `l`, with every edge
/// leaving `T` sent to one sink: a path that leaves `T` can never come back
/// into `l` (only a loop containing `l` could bring it back, and `T` is the
/// outermost), so it can never pass through a block of `l` again. For two
/// blocks of `l`, the nearest common post-dominator is therefore the same as
/// over the whole function when it lies in `l`, and lies outside `l` in both
/// graphs otherwise. This keeps the cost per marked loop at the size of its
/// loop nest instead of the whole function.
struct LocalPostDom {
    tree: DomTree,
    /// Function block -> local id.
    local: rustc_hash::FxHashMap<u32, u32>,
    /// Local id -> function block (sink and dummy excluded).
    blocks: Vec<u32>,
}

impl LocalPostDom {
    fn new(inp: &ClieInput, l: LoopId) -> LocalPostDom {
        let mut top = l;
        while let Some(p) = inp.forest.loops[top.0 as usize].parent {
            top = p;
        }
        let data = &inp.forest.loops[l.0 as usize];
        let blocks: Vec<u32> = inp.forest.loops[top.0 as usize].blocks.clone();
        let local: rustc_hash::FxHashMap<u32, u32> = blocks
            .iter()
            .enumerate()
            .map(|(i, &b)| (b, i as u32))
            .collect();
        let sink = blocks.len() as u32;
        let dummy = sink + 1;
        let inner = blocks.iter().map(|&b| {
            let is_latch = data.latches.contains(&b);
            let local = &local;
            inp.succs
                .get(b as usize)
                .unwrap_or(&[])
                .iter()
                .map(move |&s| {
                    if is_latch && s == data.header {
                        dummy
                    } else {
                        local.get(&s).copied().unwrap_or(sink)
                    }
                })
        });
        // Then the sink and the dummy, without successors.
        let succs = crate::graph::Csr::from_lists(
            inner
                .map(Some)
                .chain([None, None])
                .map(|it| it.into_iter().flatten()),
        );
        LocalPostDom {
            tree: DomTree::post_dominators(&succs),
            local,
            blocks,
        }
    }

    fn nearest_common_dominator(&self, a: u32, b: u32) -> Option<u32> {
        let (la, lb) = (*self.local.get(&a)?, *self.local.get(&b)?);
        let x = self.tree.nearest_common_dominator(la, lb)?;
        self.blocks.get(x as usize).copied()
    }

    fn dominates(&self, a: u32, b: u32) -> bool {
        match (self.local.get(&a), self.local.get(&b)) {
            (Some(&la), Some(&lb)) => self.tree.dominates(la, lb),
            _ => false,
        }
    }
}

/// §5.2. `Ok(None)`: nothing to include (no memory operation, no subloop).
fn place_section(inp: &ClieInput, l: LoopId) -> Result<Option<Placement>, PlacementFailure> {
    let data = &inp.forest.loops[l.0 as usize];
    let header = data.header;
    let pdt = LocalPostDom::new(inp, l);
    let in_loop = |b: u32| inp.forest.contains(l, b);

    let mut begin: Option<u32> = None;
    let mut end: Option<u32> = None;
    let mut included: Vec<BlockId> = Vec::new();
    let include = |b: u32,
                   subloop: Option<LoopId>,
                   begin: &mut Option<u32>,
                   end: &mut Option<u32>,
                   included: &mut Vec<BlockId>|
     -> Result<(), PlacementFailure> {
        let fail = |dominator_side: bool, included: &Vec<BlockId>| PlacementFailure {
            block: BlockId(b),
            included: included.clone(),
            dominator_side,
            subloop,
        };
        match (*begin, *end) {
            (Some(bg), Some(en)) => {
                let nb = inp.dom.nearest_common_dominator(bg, b);
                match nb {
                    Some(x) if in_loop(x) => *begin = Some(x),
                    _ => return Err(fail(true, included)),
                }
                match pdt.nearest_common_dominator(en, b) {
                    Some(x) if in_loop(x) => *end = Some(x),
                    _ => return Err(fail(false, included)),
                }
            }
            _ => {
                *begin = Some(b);
                *end = Some(b);
            }
        }
        included.push(BlockId(b));
        Ok(())
    };

    for &sub in &data.children {
        let sd = &inp.forest.loops[sub.0 as usize];
        if let Some(pre) = inp.preheaders.get(sub.0 as usize).copied().flatten() {
            include(pre.0, Some(sub), &mut begin, &mut end, &mut included)?;
        }
        for &e in &sd.exit_blocks {
            include(e, Some(sub), &mut begin, &mut end, &mut included)?;
        }
    }
    for &b in &data.blocks {
        if let (Some(bg), Some(en)) = (begin, end) {
            if inp.dom.dominates(bg, b) && pdt.dominates(en, b) {
                continue;
            }
        }
        if inp.memory.block_has_memop(BlockId(b)) {
            include(b, None, &mut begin, &mut end, &mut included)?;
        }
    }
    let (Some(begin), Some(end)) = (begin, end) else {
        return Ok(None);
    };
    let pre = inp.preheaders[l.0 as usize].unwrap_or(BlockId(header));
    Ok(Some(Placement {
        region_entry: pre,
        region_exits: data.exit_blocks.iter().map(|&b| BlockId(b)).collect(),
        section_begin: BlockId(begin),
        section_end: BlockId(end),
        section_entry_before: inp.memory.first_op(BlockId(begin)).map(|o| o.span),
        section_exit_after: inp.memory.last_op(BlockId(end)).map(|o| o.span),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyze, AnalysisOptions, FunctionAnalysis};

    /// The nearest common post-dominator over the whole function with the
    /// latch rerouted (the direct reading of §5.2), `None` when it is not a
    /// block of loop `l`.
    fn global_ncd_in_loop(fa: &FunctionAnalysis, l: LoopId, a: u32, b: u32) -> Option<u32> {
        let data = &fa.forest.loops[l.0 as usize];
        let n = fa.succs.len() as u32;
        let mut succs = fa.succs.to_lists();
        for &latch in &data.latches {
            for t in succs[latch as usize].iter_mut() {
                if *t == data.header {
                    *t = n;
                }
            }
        }
        succs.push(Vec::new());
        let pdt = DomTree::post_dominators(&succs);
        pdt.nearest_common_dominator(a, b)
            .filter(|&x| x < n && fa.forest.contains(l, x))
    }

    fn check_function(fa: &FunctionAnalysis) -> usize {
        let inp = ClieInput {
            func: &fa.func,
            succs: &fa.succs,
            preds: &fa.preds,
            dom: &fa.dom,
            forest: &fa.forest,
            preheaders: &fa.preheaders,
            memory: &fa.memory,
            reachable: &fa.reachable,
            skipped: &fa.skipped,
        };
        let mut pairs = 0;
        for l in fa.forest.ids() {
            if fa.skipped[l.index()] {
                continue;
            }
            let local = LocalPostDom::new(&inp, l);
            let blocks = &fa.forest.loops[l.index()].blocks;
            for &a in blocks {
                for &b in blocks {
                    let mine = local
                        .nearest_common_dominator(a, b)
                        .filter(|&x| fa.forest.contains(l, x));
                    assert_eq!(
                        mine,
                        global_ncd_in_loop(fa, l, a, b),
                        "{}: loop {:?}, blocks {a} {b}",
                        fa.func.name,
                        l
                    );
                    pairs += 1;
                }
            }
        }
        pairs
    }

    #[test]
    fn local_post_dominators_agree_with_whole_function_on_fixtures() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures");
        let mut pairs = 0;
        for sub in ["c", "fortran"] {
            let dir = std::path::Path::new(root).join(sub);
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let Some(kind) = csa_grammars::detect(&path) else {
                    continue;
                };
                let text = std::fs::read_to_string(&path).unwrap();
                let fa = analyze(kind, &text, &AnalysisOptions::default());
                for f in &fa.functions {
                    pairs += check_function(f);
                }
            }
        }
        assert!(pairs > 1000, "only {pairs} block pairs compared");
    }

    #[test]
    fn local_post_dominators_agree_in_an_infinite_outer_loop() {
        // The outer loop never exits: paths leaving the inner loop come back
        // to it, the case where a purely loop-local view would go wrong.
        let src = "void f(int *a, int *b, int n) {\n  for (;;) {\n    for (int i = 0; i < n; i++) {\n      if (a[i]) break;\n      b[i] = 0;\n    }\n    n--;\n  }\n}\n";
        let fa = analyze(
            csa_grammars::SourceKind::C,
            src,
            &AnalysisOptions {
                every_body: true,
                ..AnalysisOptions::default()
            },
        );
        assert!(check_function(&fa.functions[0]) > 0);
    }
}
