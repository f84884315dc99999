//! Token resolution for region/section intrinsics (SEMANTICS.md §6.1).
//!
//! A region entry returns a token; a section entry, section exit and region
//! exit name their token through a local variable. After mem2reg that
//! variable is an SSA value, and the compiler (`find_intr_def` in the memory
//! ordering pass, see `docs/compiler-notes.md` §1) follows phis depth-first
//! to the intrinsic that produced it. We model the phis with reaching
//! definitions over the CFG: every whole-variable write of the token
//! variable that reaches the intrinsic is one incoming value, a copy
//! `t = r` is followed into `r`'s reaching definitions at the copy, and a
//! parameter or a local that may be used before it is assigned has an
//! implicit definition at function entry (an argument or `undef`).
//!
//! What we compute, for every region/section intrinsic in a block reachable
//! from the entry (C only; in Fortran these calls are CSA108 and stay
//! external calls, so Fortran functions get an empty [`TokenInfo`]):
//! * the *leaves* of its token: the intrinsics the definitions end in, and
//!   every definition that is not a token (a constant, arithmetic, a call,
//!   a load from memory, a parameter, no value at all), with a reason;
//! * its status: [`TokenStatus::Connected`] when every leaf is an
//!   intrinsic of the right kind (a region entry for a region exit's or
//!   section entry's token, a section entry for a section exit's),
//!   [`TokenStatus::PartlyConnected`] when some are (the compiler silently
//!   uses the first good one; SEMANTICS.md calls it not connected),
//!   [`TokenStatus::NotConnected`] when none is;
//! * the region entries it belongs to, in the order the compiler's
//!   depth-first search meets them (through section entries for a section
//!   exit, and through intrinsics of the wrong kind, which the compiler
//!   does not check), and so the region id the compiler gives it: the id of
//!   the first one;
//! * per region entry its constant id, and the *groups* of region entries
//!   that one token connects (union-find over every intrinsic's entries).
//!
//! The order of incoming values: LLVM's mem2reg adds a phi's incoming
//! values in the order its renaming walk (first successor first) reaches
//! the join, which for structured code is source order. We therefore visit
//! a token's reaching definitions in source order (the implicit entry
//! definition first) and call the first intrinsic found "the first the
//! compiler finds". This is a model, not a guarantee, once SimplifyCFG has
//! reshaped the code.
//!
//! Complexity: reaching definitions are computed once per token variable
//! (and per variable a token is copied from), by an iterative bit-set
//! dataflow over the reachable blocks whose universe is the function entry
//! plus the *last* definition of each block that defines the variable
//! (earlier ones never leave their block): O((B + E) · ⌈D / 64⌉) per pass
//! over B blocks and E edges with D defining blocks, and a few passes for
//! structured code (the worklist starts in reverse post-order). Resolving
//! one intrinsic visits each definition of each variable in its copy chain
//! at most once. Collecting region entries through section entries walks
//! the graph of intrinsics once per intrinsic, which is quadratic only in
//! the number of region/section intrinsics of the function. Nothing
//! recurses: every walk uses an explicit stack or work list.

use crate::ir::*;
use crate::memory::{MemoryInfo, Storage};
use crate::source::{SourceText, Span};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::VecDeque;

/// Whether an intrinsic's token resolves to entries of the right kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenStatus {
    /// Every definition reaching the token comes from an entry of the right
    /// kind (always the case for a region entry, which takes no token).
    Connected,
    /// Some definitions do, others do not: the compiler silently uses the
    /// first good one and ignores the others. `bad` holds each bad
    /// definition (or the argument itself) with the reason, in source
    /// order.
    PartlyConnected { bad: Vec<(Span, String)> },
    /// No definition comes from an entry of the right kind. Unless the
    /// token reaches an entry of the wrong kind (see
    /// [`IntrinsicInfo::wrong_kind`]), the compiler stops with the fatal
    /// error "Parallel intrinsic not connected to entry?".
    NotConnected { bad: Vec<(Span, String)> },
}

impl TokenStatus {
    /// The bad definitions (empty when connected).
    pub fn bad(&self) -> &[(Span, String)] {
        match self {
            TokenStatus::Connected => &[],
            TokenStatus::PartlyConnected { bad } | TokenStatus::NotConnected { bad } => bad,
        }
    }
}

/// The resolution of one region/section intrinsic.
#[derive(Clone, Debug)]
pub struct IntrinsicInfo {
    pub builtin: BuiltinId,
    pub kind: BuiltinKind,
    /// The variable that holds its token, when the argument is a plain
    /// variable (`None` for region entries and for other arguments).
    pub token: Option<VarId>,
    pub status: TokenStatus,
    /// The intrinsics the token's definitions come from directly (right and
    /// wrong kind), in the order the compiler finds them: the first is the
    /// one it uses.
    pub sources: Vec<BuiltinId>,
    /// The region entries it belongs to, in the order the compiler finds
    /// them (the first is the one it uses). A region entry lists itself.
    /// Empty when no definition leads to any entry (the compiler stops).
    pub region_entries: Vec<BuiltinId>,
    /// For a section exit: the section entries its token comes from, in
    /// the order the compiler finds them.
    pub section_entries: Vec<BuiltinId>,
    /// Entries of the wrong kind the token comes from (a section exit given
    /// a region token, a region exit given a section token). The compiler
    /// does not check kinds: it follows them like good ones.
    pub wrong_kind: Vec<BuiltinId>,
    /// The id of its region: for a region entry its own constant id, else
    /// the id of the first entry in `region_entries`.
    pub region_id: Option<i64>,
}

impl TokenInfo {
    /// Whether the compiler stops with a fatal error before ordering this
    /// function: a token no definition connects, or a non-constant region
    /// id. Region/section checks that come after are moot then.
    pub fn fatal(&self) -> bool {
        self.intrinsics.iter().any(|i| i.compiler_stops())
            || self.entries.iter().any(|e| e.id.is_none())
    }
}

impl IntrinsicInfo {
    /// Whether the compiler stops with "Parallel intrinsic not connected to
    /// entry?" here: no definition of the token leads to any entry.
    pub fn compiler_stops(&self) -> bool {
        matches!(self.status, TokenStatus::NotConnected { .. }) && self.wrong_kind.is_empty()
    }
}

/// A region entry, its id and its connected region.
#[derive(Clone, Debug)]
pub struct RegionEntryInfo {
    pub builtin: BuiltinId,
    /// The constant id (an integer constant argument, as the compiler
    /// passes it: converted to a 32-bit `int`), `None` when the argument is
    /// not an integer constant.
    pub id: Option<i64>,
    /// Index into [`TokenInfo::groups`].
    pub group: usize,
}

/// Token resolution for one function.
#[derive(Clone, Debug, Default)]
pub struct TokenInfo {
    /// One per region/section intrinsic in a reachable block, in builtin id
    /// order. Intrinsics in unreachable blocks are ignored, as by the
    /// compiler.
    pub intrinsics: Vec<IntrinsicInfo>,
    /// Every reachable region entry, in source order.
    pub entries: Vec<RegionEntryInfo>,
    /// Connected regions: region entries that some token joins
    /// (transitively), each group in source order, groups ordered by their
    /// first entry.
    pub groups: Vec<Vec<BuiltinId>>,
    /// Index into `intrinsics` per builtin id.
    by_builtin: Vec<Option<usize>>,
    /// Index into `entries` per builtin id.
    entry_by_builtin: Vec<Option<usize>>,
}

impl TokenInfo {
    /// The resolution of a region/section intrinsic (`None` for other
    /// builtins, unreachable intrinsics and Fortran).
    pub fn info(&self, b: BuiltinId) -> Option<&IntrinsicInfo> {
        let i = (*self.by_builtin.get(b.index())?)?;
        self.intrinsics.get(i)
    }

    /// The region id an intrinsic belongs to: a region entry's own constant
    /// id, the id of the first region entry (as the compiler takes it) for
    /// the others; `None` when it does not resolve.
    pub fn region_of(&self, b: BuiltinId) -> Option<i64> {
        self.info(b)?.region_id
    }

    /// The entry record of a region entry.
    pub fn entry(&self, b: BuiltinId) -> Option<&RegionEntryInfo> {
        let i = (*self.entry_by_builtin.get(b.index())?)?;
        self.entries.get(i)
    }

    /// Resolves every region/section intrinsic of `func` (after
    /// LoopSimplify, with successor lists `succs`, `rpo` the reverse
    /// post-order of the blocks reachable from the entry and `reachable`
    /// that set) with the storage decisions of `memory`.
    pub fn compute(
        func: &Function,
        succs: &crate::graph::Csr,
        rpo: &[u32],
        reachable: &[bool],
        memory: &MemoryInfo,
    ) -> TokenInfo {
        if func.lang != Lang::C
            || func.blocks.is_empty()
            || !func.builtins.iter().any(|c| c.kind.is_region_intrinsic())
        {
            return TokenInfo::default();
        }
        let positions = builtin_positions(func, reachable);
        let ids: Vec<BuiltinId> = (0..func.builtins.len())
            .map(|i| BuiltinId(i as u32))
            .filter(|&b| {
                func.builtin(b).kind.is_region_intrinsic()
                    && positions.get(b.index()).copied().flatten().is_some()
            })
            .collect();
        if ids.is_empty() {
            return TokenInfo::default();
        }
        let mut r = Resolver {
            func,
            storage: &memory.vars.storage,
            succs,
            rpo,
            reachable,
            defs: HashMap::default(),
            writes: None,
        };

        // Stage 1: the leaves of every token.
        let mut by_builtin = vec![None; func.builtins.len()];
        let mut stage1: Vec<Stage1> = Vec::with_capacity(ids.len());
        for &b in &ids {
            by_builtin[b.index()] = Some(stage1.len());
            let call = func.builtin(b);
            let pos = positions[b.index()].unwrap_or((0, 0));
            stage1.push(r.stage1(call, pos));
        }

        // Stage 2: region entries through section entries (and wrong kinds).
        let kind_of = |b: BuiltinId| func.builtins.get(b.index()).map(|c| c.kind);
        let mut intrinsics = Vec::with_capacity(ids.len());
        for (k, &b) in ids.iter().enumerate() {
            let s = &stage1[k];
            let call = func.builtin(b);
            let region_entries = if call.kind == BuiltinKind::RegionEntry {
                vec![b]
            } else {
                let mut out = Vec::new();
                let mut seen = HashSet::default();
                let mut stack: Vec<BuiltinId> = s.leaves.iter().rev().copied().collect();
                while let Some(y) = stack.pop() {
                    if !seen.insert(y) {
                        continue;
                    }
                    if kind_of(y) == Some(BuiltinKind::RegionEntry) {
                        out.push(y);
                    } else if let Some(j) = by_builtin.get(y.index()).copied().flatten() {
                        stack.extend(stage1[j].leaves.iter().rev().copied());
                    }
                }
                out
            };
            let section_entries = if call.kind == BuiltinKind::SectionExit {
                s.good.clone()
            } else {
                Vec::new()
            };
            let region_id = if call.kind == BuiltinKind::RegionEntry {
                s.id
            } else {
                region_entries
                    .first()
                    .and_then(|e| by_builtin.get(e.index()).copied().flatten())
                    .and_then(|j| stage1[j].id)
            };
            let status = if s.bad.is_empty() {
                TokenStatus::Connected
            } else if !s.good.is_empty() {
                TokenStatus::PartlyConnected { bad: s.bad.clone() }
            } else {
                TokenStatus::NotConnected { bad: s.bad.clone() }
            };
            intrinsics.push(IntrinsicInfo {
                builtin: b,
                kind: call.kind,
                token: s.token,
                status,
                sources: s.leaves.clone(),
                region_entries,
                section_entries,
                wrong_kind: s.wrong.clone(),
                region_id,
            });
        }

        // Region entries and their groups.
        let mut entry_ids: Vec<BuiltinId> = ids
            .iter()
            .copied()
            .filter(|&b| kind_of(b) == Some(BuiltinKind::RegionEntry))
            .collect();
        entry_ids.sort_by_key(|&b| (func.builtin(b).span.start, b));
        let slot: HashMap<BuiltinId, usize> =
            entry_ids.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let mut uf = UnionFind::new(entry_ids.len());
        for info in &intrinsics {
            let mut it = info.region_entries.iter().filter_map(|e| slot.get(e));
            if let Some(&first) = it.next() {
                for &other in it {
                    uf.union(first, other);
                }
            }
        }
        let mut group_of_root: HashMap<usize, usize> = HashMap::default();
        let mut groups: Vec<Vec<BuiltinId>> = Vec::new();
        let mut entries = Vec::with_capacity(entry_ids.len());
        for (i, &b) in entry_ids.iter().enumerate() {
            let root = uf.find(i);
            let g = *group_of_root.entry(root).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(b);
            let id = by_builtin[b.index()].and_then(|j| stage1[j].id);
            entries.push(RegionEntryInfo {
                builtin: b,
                id,
                group: g,
            });
        }

        let mut entry_by_builtin = vec![None; func.builtins.len()];
        for (i, e) in entries.iter().enumerate() {
            entry_by_builtin[e.builtin.index()] = Some(i);
        }
        TokenInfo {
            intrinsics,
            entries,
            groups,
            by_builtin,
            entry_by_builtin,
        }
    }

    /// The `tokens:` section of `csa-lint --dump cfg`.
    pub fn dump(&self, func: &Function, src: &SourceText) -> String {
        use std::fmt::Write;
        let pos = |s: Span| {
            let lc = src.line_col(s.start as usize);
            format!("@{}:{}", lc.line, lc.column)
        };
        let list = |v: &[BuiltinId]| {
            v.iter()
                .map(|b| format!("builtin#{}", b.0))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut out = String::from("tokens:\n");
        for info in &self.intrinsics {
            let Some(call) = func.builtins.get(info.builtin.index()) else {
                continue;
            };
            let mut line = format!(
                "  builtin#{} {} {}",
                info.builtin.0,
                kind_name(info.kind),
                pos(call.span)
            );
            if info.kind == BuiltinKind::RegionEntry {
                match info.region_id {
                    Some(id) => {
                        let _ = write!(line, " id {id}");
                    }
                    None => line.push_str(" id non-constant"),
                }
                if let Some(e) = self.entry(info.builtin) {
                    let _ = write!(line, " group {}", e.group);
                }
            } else {
                if let Some(v) = info.token.and_then(|v| func.vars.get(v.index())) {
                    let _ = write!(line, " token {}", v.name);
                }
                line.push_str(match info.status {
                    TokenStatus::Connected => " connected",
                    TokenStatus::PartlyConnected { .. } => " partly-connected",
                    TokenStatus::NotConnected { .. } => " not-connected",
                });
                if let Some(id) = info.region_id {
                    let _ = write!(line, " region {id}");
                }
                if !info.region_entries.is_empty() {
                    let _ = write!(line, " entries {}", list(&info.region_entries));
                }
                if !info.section_entries.is_empty() {
                    let _ = write!(line, " sections {}", list(&info.section_entries));
                }
                if !info.wrong_kind.is_empty() {
                    let _ = write!(line, " wrong-kind {}", list(&info.wrong_kind));
                }
            }
            let _ = writeln!(out, "{line}");
            for (span, why) in info.status.bad() {
                let _ = writeln!(out, "    bad {}: {}", pos(*span), why);
            }
        }
        for (g, members) in self.groups.iter().enumerate() {
            let _ = writeln!(out, "  group {g}: {}", list(members));
        }
        out
    }
}

/// The builtin's kind as the dump spells it.
pub fn kind_name(kind: BuiltinKind) -> &'static str {
    match kind {
        BuiltinKind::RegionEntry => "region_entry",
        BuiltinKind::RegionExit => "region_exit",
        BuiltinKind::SectionEntry => "section_entry",
        BuiltinKind::SectionExit => "section_exit",
        _ => "builtin",
    }
}

/// Plain words for an intrinsic kind (`region entry`).
pub fn kind_words(kind: BuiltinKind) -> &'static str {
    match kind {
        BuiltinKind::RegionEntry => "region entry",
        BuiltinKind::RegionExit => "region exit",
        BuiltinKind::SectionEntry => "section entry",
        BuiltinKind::SectionExit => "section exit",
        _ => "builtin",
    }
}

/// The kind of entry an intrinsic's token must come from.
pub fn expected_source(kind: BuiltinKind) -> Option<BuiltinKind> {
    match kind {
        BuiltinKind::RegionExit | BuiltinKind::SectionEntry => Some(BuiltinKind::RegionEntry),
        BuiltinKind::SectionExit => Some(BuiltinKind::SectionEntry),
        _ => None,
    }
}

/// (block, instruction index) of every builtin call in a block reachable
/// from the entry.
fn builtin_positions(func: &Function, reachable: &[bool]) -> Vec<Option<(u32, u32)>> {
    let mut pos = vec![None; func.builtins.len()];
    for (bi, block) in func.blocks.iter().enumerate() {
        if !reachable.get(bi).copied().unwrap_or(false) {
            continue;
        }
        for (ii, inst) in block.insts.iter().enumerate() {
            if let InstKind::Builtin(id) = inst.kind {
                if let Some(p) = pos.get_mut(id.index()) {
                    p.get_or_insert((bi as u32, ii as u32));
                }
            }
        }
    }
    pos
}

struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            // keep the smaller index (earlier in source) as the root
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent[hi] = lo;
        }
    }
}

/// One definition of a variable.
struct Def {
    /// (block, instruction) of the write; `None` for the implicit
    /// definition at function entry.
    pos: Option<(u32, u32)>,
    /// Where to point at: the write, or the variable's declaration.
    span: Span,
}

/// Reaching definitions of one variable.
struct VarDefs {
    /// `defs[0]` is the implicit entry definition.
    defs: Vec<Def>,
    /// Per block: the definitions in it, as (instruction, def index).
    in_block: HashMap<u32, Vec<(u32, usize)>>,
    /// The bit-set universe: def index per bit (the entry definition and
    /// the last definition of every defining block).
    bits: Vec<usize>,
    /// Per block: the bits reaching its top.
    live_in: Vec<u64>,
    /// Words per block in `live_in`.
    words: usize,
}

impl VarDefs {
    /// `writes`: the writes of `v` in reverse post-order of their blocks,
    /// then instruction order (see [`writes_by_var`]).
    fn build(
        func: &Function,
        succs: &crate::graph::Csr,
        rpo: &[u32],
        reachable: &[bool],
        v: VarId,
        writes: &[Def],
    ) -> VarDefs {
        let var_span = func
            .vars
            .get(v.index())
            .map(|x| x.span)
            .unwrap_or(func.name_span);
        let mut defs = vec![Def {
            pos: None,
            span: var_span,
        }];
        let mut in_block: HashMap<u32, Vec<(u32, usize)>> = HashMap::default();
        for w in writes {
            if let Some((b, i)) = w.pos {
                in_block.entry(b).or_default().push((i, defs.len()));
                defs.push(Def {
                    pos: w.pos,
                    span: w.span,
                });
            }
        }
        let n = func.blocks.len();
        let mut bits = vec![0usize];
        // The bit of the definition leaving each block, if the block has one.
        let mut out_bit: Vec<usize> = vec![usize::MAX; n];
        for &b in rpo {
            if let Some(&(_, d)) = in_block.get(&b).and_then(|l| l.last()) {
                if let Some(o) = out_bit.get_mut(b as usize) {
                    *o = bits.len();
                }
                bits.push(d);
            }
        }
        let words = bits.len().div_ceil(64);
        // One flat bit matrix (blocks x words): unreachable blocks keep no
        // definition.
        let mut live_in = vec![0u64; n * words];
        if rpo.contains(&0) {
            if let Some(w) = live_in.first_mut() {
                *w |= 1;
            }
        }
        let mut queued = vec![false; n];
        let mut work: VecDeque<u32> = VecDeque::with_capacity(rpo.len());
        for &b in rpo {
            queued[b as usize] = true;
            work.push_back(b);
        }
        let mut out = vec![0u64; words];
        while let Some(b) = work.pop_front() {
            queued[b as usize] = false;
            match out_bit.get(b as usize).filter(|&&bit| bit != usize::MAX) {
                Some(&bit) => {
                    out.iter_mut().for_each(|w| *w = 0);
                    out[bit / 64] |= 1u64 << (bit % 64);
                }
                None => {
                    let at = b as usize * words;
                    out.copy_from_slice(&live_in[at..at + words]);
                }
            }
            for &s in succs.get(b as usize).unwrap_or(&[]) {
                if !reachable.get(s as usize).copied().unwrap_or(false) {
                    continue;
                }
                let at = s as usize * words;
                let target = &mut live_in[at..at + words];
                let mut changed = false;
                for (t, o) in target.iter_mut().zip(&out) {
                    let new = *t | *o;
                    if new != *t {
                        *t = new;
                        changed = true;
                    }
                }
                if changed && !queued[s as usize] {
                    queued[s as usize] = true;
                    work.push_back(s);
                }
            }
        }
        VarDefs {
            defs,
            in_block,
            bits,
            live_in,
            words,
        }
    }

    /// The definitions reaching instruction `inst` of block `b` (before it),
    /// in source order, the entry definition first.
    fn reaching(&self, b: u32, inst: u32) -> Vec<usize> {
        if let Some(list) = self.in_block.get(&b) {
            if let Some(&(_, d)) = list.iter().rev().find(|(i, _)| *i < inst) {
                return vec![d];
            }
        }
        let mut out = Vec::new();
        let at = b as usize * self.words;
        if let Some(words) = self.live_in.get(at..at + self.words) {
            for (wi, &w) in words.iter().enumerate() {
                let mut w = w;
                while w != 0 {
                    let bit = wi * 64 + w.trailing_zeros() as usize;
                    w &= w - 1;
                    if let Some(&d) = self.bits.get(bit) {
                        out.push(d);
                    }
                }
            }
        }
        out.sort_by_key(|&d| {
            let def = &self.defs[d];
            (def.pos.is_some(), def.span.start, d)
        });
        out
    }
}

/// What stage 1 finds for one intrinsic.
struct Stage1 {
    token: Option<VarId>,
    /// Intrinsics the token comes from, good and wrong kind, in the order
    /// the compiler meets them.
    leaves: Vec<BuiltinId>,
    good: Vec<BuiltinId>,
    wrong: Vec<BuiltinId>,
    bad: Vec<(Span, String)>,
    /// For a region entry: its constant id.
    id: Option<i64>,
}

struct Resolver<'a> {
    func: &'a Function,
    storage: &'a [Storage],
    succs: &'a crate::graph::Csr,
    rpo: &'a [u32],
    reachable: &'a [bool],
    defs: HashMap<VarId, VarDefs>,
    /// Whole-variable writes per variable, built on first use (one pass
    /// over the function instead of one per token variable).
    writes: Option<Vec<Vec<Def>>>,
}

/// The writes of every variable (`AccessTarget::Var`) in reachable blocks,
/// in reverse post-order of their blocks, then instruction order.
fn writes_by_var(func: &Function, rpo: &[u32]) -> Vec<Vec<Def>> {
    let mut out: Vec<Vec<Def>> = Vec::new();
    out.resize_with(func.vars.len(), Vec::new);
    for &b in rpo {
        let Some(block) = func.blocks.get(b as usize) else {
            continue;
        };
        for (i, inst) in block.insts.iter().enumerate() {
            if let InstKind::Access(a) = &inst.kind {
                if let (true, AccessTarget::Var(v)) = (a.write, &a.target) {
                    if v.index() >= out.len() {
                        out.resize_with(v.index() + 1, Vec::new);
                    }
                    out[v.index()].push(Def {
                        pos: Some((b, i as u32)),
                        span: inst.span,
                    });
                }
            }
        }
    }
    out
}

impl<'a> Resolver<'a> {
    fn storage(&self, v: VarId) -> Option<Storage> {
        self.storage.get(v.index()).copied()
    }

    fn name(&self, v: VarId) -> &str {
        self.func
            .vars
            .get(v.index())
            .map(|x| x.name.as_str())
            .unwrap_or("?")
    }

    fn reaching(&mut self, v: VarId, b: u32, inst: u32) -> Vec<usize> {
        if !self.defs.contains_key(&v) {
            let writes = self
                .writes
                .get_or_insert_with(|| writes_by_var(self.func, self.rpo));
            let w = writes.get(v.index()).map_or(&[][..], |w| w.as_slice());
            let d = VarDefs::build(self.func, self.succs, self.rpo, self.reachable, v, w);
            self.defs.insert(v, d);
        }
        self.defs
            .get(&v)
            .map(|d| d.reaching(b, inst))
            .unwrap_or_default()
    }

    fn stage1(&mut self, call: &BuiltinCall, pos: (u32, u32)) -> Stage1 {
        let mut s = Stage1 {
            token: None,
            leaves: Vec::new(),
            good: Vec::new(),
            wrong: Vec::new(),
            bad: Vec::new(),
            id: None,
        };
        let arg = call.args.first();
        let Some(expected) = expected_source(call.kind) else {
            // A region entry: its id.
            if let Some(BuiltinArg {
                value: ArgValue::Int(v),
                ..
            }) = arg
            {
                // The intrinsic takes an `int`: clang converts the argument.
                s.id = Some(*v as i32 as i64);
            }
            return s;
        };
        let Some(arg) = arg else {
            s.bad
                .push((call.span, "the call has no token argument".to_string()));
            return s;
        };
        let v = match &arg.value {
            ArgValue::Var(v) => *v,
            ArgValue::Int(c) => {
                s.bad.push((
                    arg.span,
                    format!("the token is the constant {c}, not a variable that holds an entry's result"),
                ));
                return s;
            }
            ArgValue::Str(_) => {
                s.bad
                    .push((arg.span, "a string literal is not a token".to_string()));
                return s;
            }
            ArgValue::Other => {
                s.bad.push((
                    arg.span,
                    "the token is an expression (arithmetic, a cast, a call or a memory access), not a plain local variable".to_string(),
                ));
                return s;
            }
        };
        s.token = Some(v);
        if let Some(what) = self.not_register(v) {
            // point at the declaration: that is what to change
            let decl = self.func.vars.get(v.index()).map(|x| x.span);
            s.bad.push((
                decl.unwrap_or(arg.span),
                format!(
                    "`{}` is {what}: the compiler does not follow tokens through memory",
                    self.name(v)
                ),
            ));
            return s;
        }

        // Depth-first over the reaching definitions, following copies.
        let mut visited: HashSet<(VarId, usize)> = HashSet::default();
        let mut stack: Vec<(VarId, usize)> = Vec::new();
        let first = self.reaching(v, pos.0, pos.1);
        stack.extend(first.into_iter().rev().map(|d| (v, d)));
        while let Some((var, d)) = stack.pop() {
            if !visited.insert((var, d)) {
                continue;
            }
            let Some((def_pos, def_span)) = self
                .defs
                .get(&var)
                .and_then(|x| x.defs.get(d))
                .map(|x| (x.pos, x.span))
            else {
                continue;
            };
            let Some((b, i)) = def_pos else {
                s.bad.push((def_span, self.entry_reason(var)));
                continue;
            };
            let access = self
                .func
                .blocks
                .get(b as usize)
                .and_then(|blk| blk.insts.get(i as usize))
                .and_then(|inst| match &inst.kind {
                    InstKind::Access(a) => Some(a),
                    _ => None,
                });
            let Some(a) = access else {
                continue;
            };
            let name = self.name(var).to_string();
            if a.index != IndexKind::Whole {
                s.bad
                    .push((def_span, format!("only part of `{name}` is written here")));
                continue;
            }
            match &a.value {
                Some(ValueSrc::Builtin(id)) => {
                    let kind = self.func.builtins.get(id.index()).map(|c| c.kind);
                    match kind {
                        Some(k) if k == expected => {
                            push_unique(&mut s.good, *id);
                            push_unique(&mut s.leaves, *id);
                        }
                        Some(k @ (BuiltinKind::RegionEntry | BuiltinKind::SectionEntry)) => {
                            push_unique(&mut s.wrong, *id);
                            push_unique(&mut s.leaves, *id);
                            s.bad.push((
                                def_span,
                                format!(
                                    "`{name}` holds the token of a {}, not of a {}",
                                    kind_words(k),
                                    kind_words(expected)
                                ),
                            ));
                        }
                        _ => {
                            let what = self
                                .func
                                .builtins
                                .get(id.index())
                                .map(|c| c.name.clone())
                                .unwrap_or_default();
                            s.bad.push((
                                def_span,
                                format!(
                                    "`{name}` holds the result of `{what}`, which is not a token"
                                ),
                            ));
                        }
                    }
                }
                Some(ValueSrc::Copy(u)) => {
                    if let Some(what) = self.not_register(*u) {
                        s.bad.push((
                            def_span,
                            format!(
                                "`{name}` is assigned from `{}`, {what}: the compiler does not follow tokens through memory",
                                self.name(*u)
                            ),
                        ));
                    } else {
                        let more = self.reaching(*u, b, i);
                        stack.extend(more.into_iter().rev().map(|d2| (*u, d2)));
                    }
                }
                Some(ValueSrc::Const(c)) => {
                    s.bad
                        .push((def_span, format!("`{name}` is assigned the constant {c}")));
                }
                Some(ValueSrc::Other) | None => {
                    s.bad
                        .push((def_span, self.other_reason(&name, b, i, def_span)));
                }
            }
        }
        s.bad.sort_by_key(|(sp, _)| (sp.start, sp.end));
        s.bad.dedup();
        s
    }

    /// Why `v` is not a register variable (`None` when it is one).
    fn not_register(&self, v: VarId) -> Option<String> {
        let var = self.func.vars.get(v.index())?;
        match self.storage(v) {
            Some(Storage::Register) => None,
            Some(Storage::Constant) => Some("a named constant".to_string()),
            _ => Some(
                match var.kind {
                    VarKind::Global => "a global variable (it lives in memory)",
                    VarKind::Static => "a static variable (it lives in memory)",
                    _ if var.address_taken => "a local whose address is taken (it lives in memory)",
                    _ => "a variable that lives in memory",
                }
                .to_string(),
            ),
        }
    }

    /// The reason for the implicit definition at function entry.
    fn entry_reason(&self, v: VarId) -> String {
        let name = self.name(v);
        match self.func.vars.get(v.index()).map(|x| x.kind) {
            Some(VarKind::Param) => format!(
                "`{name}` comes from the parameter `{name}`: a token cannot be passed into a function"
            ),
            _ => format!(
                "`{name}` may be uninitialised: on some path from the function entry nothing is assigned to it"
            ),
        }
    }

    /// The reason for a write whose value is computed: looks at the
    /// instructions of the right-hand side (those before the write, in its
    /// block, that start after the assigned name).
    fn other_reason(&self, name: &str, b: u32, i: u32, span: Span) -> String {
        let Some(block) = self.func.blocks.get(b as usize) else {
            return format!("`{name}` is assigned a computed value, not a copy of a token");
        };
        let mut call: Option<Option<String>> = None;
        let mut load: Option<String> = None;
        for inst in block.insts[..(i as usize).min(block.insts.len())]
            .iter()
            .rev()
        {
            if inst.span.start <= span.start {
                break;
            }
            match &inst.kind {
                InstKind::Call(c) => call = Some(c.callee.clone()),
                InstKind::Access(a) if !a.write => match a.target {
                    AccessTarget::Deref { ptr } => {
                        load = Some(match ptr {
                            Some(p) => format!("through `{}`", self.name(p)),
                            None => "through a pointer".to_string(),
                        })
                    }
                    AccessTarget::Var(u) => {
                        if self.storage(u) == Some(Storage::Memory) {
                            load = Some(format!("from `{}`", self.name(u)));
                        }
                    }
                },
                _ => {}
            }
        }
        match (call, load) {
            (Some(Some(callee)), _) => {
                format!("`{name}` is assigned the result of a call to `{callee}`")
            }
            (Some(None), _) => format!("`{name}` is assigned the result of a call"),
            (None, Some(l)) => format!("`{name}` is assigned a value loaded from memory ({l})"),
            (None, None) => format!(
                "`{name}` is assigned a computed value (arithmetic, a conditional expression or a cast), not a copy of a token"
            ),
        }
    }
}

fn push_unique(v: &mut Vec<BuiltinId>, b: BuiltinId) {
    if !v.contains(&b) {
        v.push(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyze, AnalysisOptions, Analysis};
    use csa_grammars::SourceKind;
    use expect_test::expect;

    fn run(src: &str) -> Analysis {
        analyze(SourceKind::C, src, &AnalysisOptions::default())
    }

    /// The intrinsics of function `f` of kind `k`, in builtin order.
    fn of_kind(fa: &Analysis, k: BuiltinKind) -> Vec<IntrinsicInfo> {
        let f = fa.function("f").expect("function f");
        f.tokens
            .intrinsics
            .iter()
            .filter(|i| i.kind == k)
            .cloned()
            .collect()
    }

    fn codes(fa: &Analysis) -> Vec<u16> {
        // CSA401 (unguarded builtin) is not what these tests are about
        fa.diagnostics
            .iter()
            .map(|d| d.code.0)
            .filter(|&c| c != 401)
            .collect()
    }

    const LOOP: &str = r#"
void f(int *A, int *B, int N) {
  int reg = __builtin_csa_parallel_region_entry(0);
  for (int i = 0; i < N; ++i) {
    int sec = __builtin_csa_parallel_section_entry(reg);
    A[i] = B[i];
    __builtin_csa_parallel_section_exit(sec);
  }
  __builtin_csa_parallel_region_exit(reg);
}
"#;

    #[test]
    fn canonical_loop_resolves() {
        let fa = run(LOOP);
        let f = fa.function("f").unwrap();
        let t = &f.tokens;
        assert_eq!(t.intrinsics.len(), 4);
        assert_eq!(t.entries.len(), 1);
        assert_eq!(t.groups.len(), 1);
        let entry = t.entries[0].builtin;
        for info in &t.intrinsics {
            assert_eq!(info.status, TokenStatus::Connected, "{info:?}");
            assert_eq!(info.region_entries, vec![entry]);
            assert_eq!(info.region_id, Some(0));
            assert_eq!(t.region_of(info.builtin), Some(0));
        }
        let exit = &of_kind(&fa, BuiltinKind::SectionExit)[0];
        let sentry = &of_kind(&fa, BuiltinKind::SectionEntry)[0];
        assert_eq!(exit.section_entries, vec![sentry.builtin]);
        assert!(
            !codes(&fa).iter().any(|c| (202..=206).contains(c)),
            "{:?}",
            fa.diagnostics
        );
        // the `tokens:` section of `--dump cfg` (`UPDATE_EXPECT=1` rewrites
        // the expected text)
        let tokens = t.dump(&f.func, &fa.source);
        expect![[r#"
            tokens:
              builtin#0 region_entry @3:13 id 0 group 0
              builtin#1 section_entry @5:15 token reg connected region 0 entries builtin#0
              builtin#2 section_exit @7:5 token sec connected region 0 entries builtin#0 sections builtin#1
              builtin#3 region_exit @9:3 token reg connected region 0 entries builtin#0
              group 0: builtin#0
        "#]].assert_eq(&tokens);
        let dump = f.dump(&fa.source);
        assert!(dump.contains(&tokens), "{dump}");
    }

    #[test]
    fn copies_through_locals_are_followed() {
        let fa = run(r#"
void f(int *a, int c) {
  int r = __builtin_csa_parallel_region_entry(3);
  int t = r;
  int u;
  u = t;
  int s = __builtin_csa_parallel_section_entry(u);
  int s2 = s;
  *a = 1;
  __builtin_csa_parallel_section_exit(s2);
  __builtin_csa_parallel_region_exit(t);
}
"#);
        for info in &fa.function("f").unwrap().tokens.intrinsics {
            assert_eq!(info.status, TokenStatus::Connected, "{info:?}");
            assert_eq!(info.region_id, Some(3));
        }
        assert!(
            !codes(&fa).iter().any(|c| (202..=206).contains(c)),
            "{:?}",
            fa.diagnostics
        );
    }

    #[test]
    fn parameter_global_address_taken_and_arithmetic_are_not_connected() {
        let fa = run(r#"
int g;
void use(int *);
void f(int p, int c) {
  int r = __builtin_csa_parallel_region_entry(1);
  int m = r;
  use(&m);
  __builtin_csa_parallel_region_exit(p);
  __builtin_csa_parallel_region_exit(g);
  __builtin_csa_parallel_region_exit(m);
  __builtin_csa_parallel_region_exit(r + 1);
  int k = r + 1;
  __builtin_csa_parallel_region_exit(k);
  int q = c;
  __builtin_csa_parallel_region_exit(q);
  __builtin_csa_parallel_region_exit(r);
}
"#);
        let exits = of_kind(&fa, BuiltinKind::RegionExit);
        assert_eq!(exits.len(), 7);
        for (i, e) in exits.iter().take(6).enumerate() {
            assert!(
                matches!(e.status, TokenStatus::NotConnected { .. }),
                "{i}: {e:?}"
            );
            assert!(e.compiler_stops());
            assert_eq!(e.region_id, None);
            assert!(e.region_entries.is_empty());
        }
        let reasons: Vec<String> = exits
            .iter()
            .take(6)
            .map(|e| e.status.bad()[0].1.clone())
            .collect();
        assert!(reasons[0].contains("parameter `p`"), "{reasons:?}");
        assert!(reasons[1].contains("global"), "{reasons:?}");
        assert!(reasons[2].contains("address is taken"), "{reasons:?}");
        assert!(reasons[3].contains("expression"), "{reasons:?}");
        assert!(reasons[4].contains("computed value"), "{reasons:?}");
        assert!(reasons[5].contains("parameter `c`"), "{reasons:?}");
        assert_eq!(exits[6].status, TokenStatus::Connected);
        assert_eq!(codes(&fa).iter().filter(|&&c| c == 202).count(), 6);
    }

    #[test]
    fn call_result_and_memory_load_are_named() {
        let fa = run(r#"
int get(void);
void f(int *A) {
  int r = __builtin_csa_parallel_region_entry(1);
  int k = get();
  __builtin_csa_parallel_region_exit(k);
  int l = *A;
  __builtin_csa_parallel_region_exit(l);
  __builtin_csa_parallel_region_exit(r);
}
"#);
        let exits = of_kind(&fa, BuiltinKind::RegionExit);
        assert!(
            exits[0].status.bad()[0].1.contains("call to `get`"),
            "{exits:?}"
        );
        assert!(exits[1].status.bad()[0].1.contains("memory"), "{exits:?}");
    }

    #[test]
    fn partly_connected_token_keeps_the_good_entry() {
        let fa = run(r#"
void f(int *a, int c) {
  int r = __builtin_csa_parallel_region_entry(2);
  int t;
  if (c) t = r; else t = 5;
  int s = __builtin_csa_parallel_section_entry(t);
  *a = 0;
  __builtin_csa_parallel_section_exit(s);
  __builtin_csa_parallel_region_exit(r);
}
"#);
        let se = &of_kind(&fa, BuiltinKind::SectionEntry)[0];
        match &se.status {
            TokenStatus::PartlyConnected { bad } => {
                assert_eq!(bad.len(), 1);
                assert!(bad[0].1.contains("constant 5"), "{bad:?}");
            }
            other => panic!("{other:?}"),
        }
        assert!(!se.compiler_stops());
        assert_eq!(se.region_id, Some(2));
        assert!(codes(&fa).contains(&202));
    }

    #[test]
    fn uninitialised_path_is_reported() {
        let fa = run(r#"
void f(int *a, int c) {
  int r;
  if (c) r = __builtin_csa_parallel_region_entry(2);
  *a = 0;
  __builtin_csa_parallel_region_exit(r);
}
"#);
        let ex = &of_kind(&fa, BuiltinKind::RegionExit)[0];
        assert!(matches!(ex.status, TokenStatus::PartlyConnected { .. }));
        assert!(ex.status.bad()[0].1.contains("uninitialised"), "{ex:?}");
    }

    #[test]
    fn wrong_kind_is_followed_like_the_compiler() {
        let fa = run(r#"
void f(int *a) {
  int r = __builtin_csa_parallel_region_entry(4);
  int s = __builtin_csa_parallel_section_entry(r);
  *a = 0;
  __builtin_csa_parallel_section_exit(r);
  __builtin_csa_parallel_region_exit(s);
}
"#);
        let sx = &of_kind(&fa, BuiltinKind::SectionExit)[0];
        assert!(matches!(sx.status, TokenStatus::NotConnected { .. }));
        assert!(!sx.compiler_stops());
        assert_eq!(sx.region_id, Some(4));
        assert!(sx.section_entries.is_empty());
        let rx = &of_kind(&fa, BuiltinKind::RegionExit)[0];
        assert_eq!(rx.wrong_kind.len(), 1);
        assert_eq!(rx.region_id, Some(4));
        assert!(rx.status.bad()[0].1.contains("section entry"), "{rx:?}");
    }

    #[test]
    fn phi_with_different_ids_is_ambiguous_and_first_wins() {
        let fa = run(r#"
void f(int *a, int c) {
  int p1, p2;
  if (c) {
    int r0 = __builtin_csa_parallel_region_entry(0);
    p1 = r0;
    p2 = r0;
  } else {
    int r1 = __builtin_csa_parallel_region_entry(0);
    int r2 = __builtin_csa_parallel_region_entry(1);
    p1 = r1;
    p2 = r2;
  }
  int s3 = __builtin_csa_parallel_section_entry(p1);
  *a = 0;
  __builtin_csa_parallel_section_exit(s3);
  int s4 = __builtin_csa_parallel_section_entry(p2);
  *a = 1;
  __builtin_csa_parallel_section_exit(s4);
}
"#);
        let t = &fa.function("f").unwrap().tokens;
        assert_eq!(t.entries.len(), 3);
        assert_eq!(t.groups.len(), 1, "{t:?}");
        let ses = of_kind(&fa, BuiltinKind::SectionEntry);
        assert_eq!(ses[0].region_entries.len(), 2);
        assert_eq!(ses[1].region_entries.len(), 2);
        assert_eq!(ses[1].region_id, Some(0));
        let ambiguous: Vec<_> = fa.diagnostics.iter().filter(|d| d.code.0 == 203).collect();
        // reported where the ambiguity arises, not again at its section exit
        assert_eq!(ambiguous.len(), 1, "{:?}", fa.diagnostics);
    }

    #[test]
    fn reused_id_in_unrelated_regions() {
        let fa = run(r#"
void f(int *a) {
  int r = __builtin_csa_parallel_region_entry(5);
  *a = 0;
  __builtin_csa_parallel_region_exit(r);
  int q = __builtin_csa_parallel_region_entry(5);
  *a = 1;
  __builtin_csa_parallel_region_exit(q);
}
"#);
        let t = &fa.function("f").unwrap().tokens;
        assert_eq!(t.groups.len(), 2);
        assert_eq!(codes(&fa).iter().filter(|&&c| c == 206).count(), 1);
    }

    #[test]
    fn ids_non_constant_and_reserved() {
        let fa = run(r#"
void f(int n) {
  int a = __builtin_csa_parallel_region_entry(n);
  int b = __builtin_csa_parallel_region_entry(1000);
  int c = __builtin_csa_parallel_region_entry(999);
  __builtin_csa_parallel_region_exit(a);
  __builtin_csa_parallel_region_exit(b);
  __builtin_csa_parallel_region_exit(c);
}
"#);
        let t = &fa.function("f").unwrap().tokens;
        let ids: Vec<Option<i64>> = t.entries.iter().map(|e| e.id).collect();
        assert_eq!(ids, vec![None, Some(1000), Some(999)]);
        let mut c = codes(&fa);
        c.sort();
        assert_eq!(c, vec![204, 205]);
    }

    #[test]
    fn loop_carried_token_copy_cycle_terminates() {
        let fa = run(r#"
void f(int *a, int n) {
  int r = __builtin_csa_parallel_region_entry(1);
  int t = r, u = r;
  for (int i = 0; i < n; i++) {
    int x = t; t = u; u = x;
    int s = __builtin_csa_parallel_section_entry(t);
    a[i] = 0;
    __builtin_csa_parallel_section_exit(s);
  }
  __builtin_csa_parallel_region_exit(r);
}
"#);
        for info in &fa.function("f").unwrap().tokens.intrinsics {
            assert_eq!(info.status, TokenStatus::Connected, "{info:?}");
        }
    }

    #[test]
    fn long_copy_chains_and_many_regions_do_not_recurse() {
        let mut src = String::from(
            "void f(int *a, int c) {\n  int t0 = __builtin_csa_parallel_region_entry(1);\n",
        );
        for i in 1..3000 {
            src.push_str(&format!("  int t{i} = t{};\n", i - 1));
        }
        src.push_str("  int s = __builtin_csa_parallel_section_entry(t2999);\n  *a = 0;\n");
        src.push_str("  __builtin_csa_parallel_section_exit(s);\n  __builtin_csa_parallel_region_exit(t0);\n");
        for i in 0..500 {
            src.push_str(&format!(
                "  int r{i} = __builtin_csa_parallel_region_entry({});\n  if (c) r{i} = t0;\n  __builtin_csa_parallel_region_exit(r{i});\n",
                i + 2
            ));
        }
        src.push_str("}\n");
        let fa = run(&src);
        let t = &fa.function("f").unwrap().tokens;
        assert_eq!(t.entries.len(), 501);
        for info in &t.intrinsics {
            assert_eq!(info.status, TokenStatus::Connected, "{info:?}");
        }
        // every `if (c) r = t0` joins region 1 with region i + 2
        assert_eq!(t.groups.len(), 1);
        assert_eq!(codes(&fa).iter().filter(|&&c| c == 203).count(), 500);
    }

    #[test]
    fn unreachable_intrinsics_are_ignored_and_fortran_is_skipped() {
        let fa = run(r#"
void f(int *a) {
  return;
  __builtin_csa_parallel_region_exit(7);
}
"#);
        assert!(fa.function("f").unwrap().tokens.intrinsics.is_empty());
        let ff = analyze(
            SourceKind::FortranFree,
            "subroutine f(a)\n  integer :: a, r\n  r = builtin_csa_parallel_region_entry(0)\n  call builtin_csa_parallel_region_exit(r)\nend subroutine\n",
            &AnalysisOptions::default(),
        );
        for f in &ff.functions {
            assert!(f.tokens.intrinsics.is_empty());
        }
    }
}
