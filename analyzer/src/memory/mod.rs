//! What survives to CLIE as a memory operation (SEMANTICS.md §4).
//!
//! CLIE runs after SROA, mem2reg, LoopSimplify and LICM. This module replays
//! their effect on the front ends' facts:
//! * `storage`: which variables live in registers (promotable scalars,
//!   aggregates whose every access has constant indices) and which in memory;
//! * `ops`: every instruction that may touch memory, with the block it sits
//!   in *after* LICM (invariant loads that no store or call in the loop may
//!   clobber move to the loop's preheader, repeatedly outwards);
//! * for loads that LICM could not hoist although their address is
//!   invariant, the instruction that blocked it (to explain CSA101).
//!
//! The alias model lives in `alias`. Everything is linear in the size of the
//! function times the loop depth: per-loop summaries of written locations are
//! built once, inner to outer.

pub mod alias;

use crate::graph::loops::{LoopForest, LoopId};
use crate::ir::*;
use crate::source::Span;
use alias::{Loc, LocBase};
use rustc_hash::FxHashSet as HashSet;

/// Options of the memory model.
#[derive(Clone, Debug, Default)]
pub struct MemoryOptions {
    /// Extra functions known to be pure (config `pure-functions`).
    pub pure_functions: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Promoted to SSA values by mem2reg/SROA: accesses are not memory
    /// operations.
    Register,
    /// Stays in memory.
    Memory,
    /// A named constant: accesses fold away.
    Constant,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemOpKind {
    Read,
    Write,
    /// A call to a function not known to be pure (may read and write).
    Call,
    Asm,
    /// Lifetime start of a local that stays in memory.
    LifetimeStart,
    /// A CSA builtin the compiler treats as touching memory (markers and
    /// region/section intrinsics are `IntrArgMemOnly` /
    /// `IntrInaccessibleMemOrArgMemOnly`, so `mayReadOrWriteMemory` holds).
    Intrinsic,
    Prefetch,
}

/// Why LICM left an invariant load in its loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LicmBlocker {
    /// The loop the load could not leave.
    pub loop_id: LoopId,
    /// The store, call or asm that may clobber the loaded location, or the
    /// definition that makes the address vary.
    pub span: Span,
    pub reason: BlockReason,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockReason {
    AliasingStore,
    Call,
    Asm,
}

#[derive(Clone, Debug)]
pub struct MemOp {
    /// The block holding the operation after LICM.
    pub block: BlockId,
    /// Where the front end put it.
    pub orig_block: BlockId,
    /// Index of the instruction in `orig_block`.
    pub inst: u32,
    pub span: Span,
    pub kind: MemOpKind,
    /// The location read or written (reads and writes only).
    pub loc: Option<Loc>,
    /// Hoisted out of these loops by LICM (innermost first).
    pub hoisted_from: Vec<LoopId>,
    /// Set when the address is invariant in the innermost loop that still
    /// holds the load but something in that loop may clobber it.
    pub licm_blocker: Option<LicmBlocker>,
}

#[derive(Clone, Debug, Default)]
pub struct MemoryInfo {
    /// Storage class and escape of every variable.
    pub vars: VarFacts,
    pub ops: Vec<MemOp>,
    /// Per block (after LICM): indices into `ops` in execution order.
    pub block_ops: Vec<Vec<usize>>,
}

impl MemoryInfo {
    pub fn block_has_memop(&self, b: BlockId) -> bool {
        self.block_ops.get(b.index()).is_some_and(|v| !v.is_empty())
    }

    pub fn first_op(&self, b: BlockId) -> Option<&MemOp> {
        self.block_ops
            .get(b.index())
            .and_then(|v| v.first())
            .map(|&i| &self.ops[i])
    }

    pub fn last_op(&self, b: BlockId) -> Option<&MemOp> {
        self.block_ops
            .get(b.index())
            .and_then(|v| v.last())
            .map(|&i| &self.ops[i])
    }
}

/// The default list of pure functions: the C math library (all precisions)
/// and the `__builtin_` spellings of the same.
const PURE_MATH: &[&str] = &[
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "logb",
    "pow",
    "sqrt",
    "cbrt",
    "hypot",
    "fabs",
    "fmin",
    "fmax",
    "fmod",
    "fdim",
    "fma",
    "floor",
    "ceil",
    "round",
    "trunc",
    "rint",
    "nearbyint",
    "lround",
    "llround",
    "lrint",
    "llrint",
    "copysign",
    "erf",
    "erfc",
    "tgamma",
    "lgamma",
    "ldexp",
    "scalbn",
    "ilogb",
    "remainder",
    "abs",
    "labs",
    "llabs",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
];

/// Clang builtins (spelled with `__builtin_`) that clang emits as LLVM
/// intrinsics touching no memory (`llvm.ctlz`, `llvm.cttz`, `llvm.ctpop`,
/// `llvm.bswap`, `llvm.bitreverse`, `llvm.fshl`/`fshr`, `llvm.assume`):
/// CLIE's `mayNeedOrdering` (mayReadOrWriteMemory) and the memop ordering
/// pass (intrinsics other than prefetch and trap) count none of them, in
/// any width.
const CLANG_BIT_BUILTINS: &[&str] = &[
    "clz",
    "ctz",
    "popcount",
    "parity",
    "ffs",
    "clrsb",
    "bswap",
    "bitreverse",
    "rotateleft",
    "rotateright",
    "assume",
];

/// C math functions that clang emits as LLVM intrinsics when `errno` is
/// not set (`-fno-math-errno`, the CSA driver's default; CGBuiltin), in
/// every precision and `__builtin_` spelling. The other pure functions stay
/// calls (marked `readnone`), which the memory ordering pass still orders
/// (`RequireOrdering` orders every non-intrinsic call), although CLIE does
/// not count them.
const MATH_INTRINSICS: &[&str] = &[
    "fabs",
    "sqrt",
    "floor",
    "ceil",
    "trunc",
    "rint",
    "nearbyint",
    "round",
    "copysign",
    "fmin",
    "fmax",
    "pow",
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "sin",
    "cos",
    "fma",
];

/// Whether a call to `name`, pure under the default list plus `extra`, is
/// still a call after clang (not an LLVM intrinsic, nor folded into plain
/// arithmetic): the memory ordering pass orders it with everything.
pub fn pure_call_stays_call(name: &str, extra: &[String]) -> bool {
    if !is_pure_function(name, extra) {
        return false;
    }
    if extra.iter().any(|e| e == name) {
        // configured or declared `readnone`: a call to that function
        return true;
    }
    if is_clang_no_memory_builtin(name) {
        return false;
    }
    let base = name.strip_prefix("__builtin_").unwrap_or(name);
    let intrinsic = |n: &str| MATH_INTRINSICS.contains(&n);
    let folded = |n: &str| {
        matches!(
            n,
            "abs" | "labs" | "llabs" | "isnan" | "isinf" | "isfinite" | "signbit"
        )
    };
    let stem = base.strip_suffix('f').or_else(|| base.strip_suffix('l'));
    !(intrinsic(base) || folded(base) || stem.is_some_and(|s| intrinsic(s) || folded(s)))
}

/// Clang builtins that become constants or LLVM intrinsics touching no
/// memory (`llvm.frameaddress`, `llvm.returnaddress`), exact names.
const CLANG_NO_MEMORY_BUILTINS: &[&str] = &[
    "__builtin_frame_address",
    "__builtin_return_address",
    "__builtin_huge_val",
    "__builtin_huge_valf",
    "__builtin_huge_vall",
    "__builtin_inf",
    "__builtin_inff",
    "__builtin_infl",
    "__builtin_nan",
    "__builtin_nanf",
    "__builtin_nanl",
    "__builtin_nans",
    "__builtin_nansf",
    "__builtin_nansl",
];

/// Whether `name` is a clang builtin that touches no memory: one of
/// [`CLANG_NO_MEMORY_BUILTINS`], or of [`CLANG_BIT_BUILTINS`] in some width
/// (`__builtin_popcountll`, `__builtin_bswap32`, `__builtin_clzs`).
fn is_clang_no_memory_builtin(name: &str) -> bool {
    if CLANG_NO_MEMORY_BUILTINS.contains(&name) {
        return true;
    }
    let Some(b) = name.strip_prefix("__builtin_") else {
        return false;
    };
    let stem = b.trim_end_matches(|c: char| c.is_ascii_digit());
    let stem = stem
        .strip_suffix("ll")
        .or_else(|| stem.strip_suffix('l'))
        .or_else(|| stem.strip_suffix('s'))
        .filter(|s| CLANG_BIT_BUILTINS.contains(s))
        .unwrap_or(stem);
    CLANG_BIT_BUILTINS.contains(&stem)
}

/// Whether `name` is pure under the default list plus `extra`.
pub fn is_pure_function(name: &str, extra: &[String]) -> bool {
    if extra.iter().any(|e| e == name) || is_clang_no_memory_builtin(name) {
        return true;
    }
    let base = name.strip_prefix("__builtin_").unwrap_or(name);
    static SET: std::sync::OnceLock<HashSet<&'static str>> = std::sync::OnceLock::new();
    let set = SET.get_or_init(|| PURE_MATH.iter().copied().collect());
    let matches = |n: &str| set.contains(n);
    if matches(base) {
        return true;
    }
    // float (`sinf`) and long double (`sinl`) variants
    if let Some(stem) = base.strip_suffix('f').or_else(|| base.strip_suffix('l')) {
        if matches(stem) {
            return true;
        }
    }
    false
}

/// Per-variable facts the memory model decides once per function.
#[derive(Clone, Debug, Default)]
pub struct VarFacts {
    pub storage: Vec<Storage>,
    /// The variable's address reaches code we cannot see: `&x` / passed to a
    /// call (`Var::address_taken`), or passed by reference to a Fortran
    /// builtin call that CSAFortranIntrinsics rejects (it stays an external
    /// call).
    pub escaped: Vec<bool>,
}

impl VarFacts {
    pub fn storage(&self, v: VarId) -> Option<Storage> {
        self.storage.get(v.index()).copied()
    }

    pub fn escaped(&self, v: VarId) -> bool {
        self.escaped.get(v.index()).copied().unwrap_or(false)
    }
}

/// The storage class of every variable (SROA and mem2reg, SEMANTICS.md §4).
pub fn compute_storage(func: &Function) -> VarFacts {
    let mut escaped: Vec<bool> = func.vars.iter().map(|v| v.address_taken).collect();
    for b in &func.builtins {
        if builtin_effect(func, b) == Some(MemOpKind::Call) {
            for a in &b.args {
                if let ArgValue::Var(v) = a.value {
                    if let Some(e) = escaped.get_mut(v.index()) {
                        *e = true;
                    }
                }
            }
        }
    }
    let mut dynamic = vec![false; func.vars.len()];
    for b in &func.blocks {
        for inst in &b.insts {
            if let InstKind::Access(a) = &inst.kind {
                if let AccessTarget::Var(v) = a.target {
                    if a.index == IndexKind::Dynamic {
                        if let Some(d) = dynamic.get_mut(v.index()) {
                            *d = true;
                        }
                    }
                }
            }
        }
    }
    let storage = func
        .vars
        .iter()
        .enumerate()
        .map(|(i, v)| match v.kind {
            VarKind::Constant => Storage::Constant,
            // A `const` scalar global with a constant initialiser folds away.
            VarKind::Global | VarKind::Static
                if v.ty.const_value.is_some() && !v.ty.is_array && !v.address_taken =>
            {
                Storage::Constant
            }
            VarKind::Global | VarKind::Static | VarKind::Saved | VarKind::Dummy => Storage::Memory,
            VarKind::Local | VarKind::Param => {
                let split_by_sroa = !((v.ty.is_array || v.ty.is_aggregate) && dynamic[i]);
                if escaped[i] || v.ty.is_vla || v.ty.pointer_or_target || !split_by_sroa {
                    Storage::Memory
                } else {
                    Storage::Register
                }
            }
        })
        .collect();
    VarFacts { storage, escaped }
}

/// Whether a builtin survives as an intrinsic that may touch memory, as a
/// plain external call (Fortran calls CSAFortranIntrinsics rejects or does
/// not know), or as nothing.
pub fn builtin_effect(func: &Function, b: &BuiltinCall) -> Option<MemOpKind> {
    match func.lang {
        Lang::C => match b.kind {
            BuiltinKind::WorkerNum | BuiltinKind::Other => None,
            _ => Some(MemOpKind::Intrinsic),
        },
        Lang::Fortran => {
            if b.fortran_accepted() {
                match b.kind {
                    BuiltinKind::WorkerNum => None,
                    _ => Some(MemOpKind::Intrinsic),
                }
            } else {
                Some(MemOpKind::Call)
            }
        }
    }
}

/// Builds the memory-operation view of `func` (after SROA/mem2reg and LICM).
/// `forest` must describe `func` after LoopSimplify; `preheaders[l]` is the
/// preheader of loop `l` (None for loops LoopSimplify could not normalise).
pub fn analyze(
    func: &Function,
    forest: &LoopForest,
    preheaders: &[Option<BlockId>],
    reachable: &[bool],
    opts: &MemoryOptions,
) -> MemoryInfo {
    let facts = compute_storage(func);
    let storage = &facts.storage;
    // At most one operation per instruction: one allocation up front, the
    // unused part given back at the end.
    let mut ops: Vec<MemOp> = Vec::with_capacity(func.blocks.iter().map(|b| b.insts.len()).sum());
    for (bi, block) in func.blocks.iter().enumerate() {
        if !reachable.get(bi).copied().unwrap_or(false) {
            continue;
        }
        for (ii, inst) in block.insts.iter().enumerate() {
            let (kind, loc) = match &inst.kind {
                InstKind::Access(a) => match classify_access(storage, a) {
                    Some(loc) => (
                        if a.write {
                            MemOpKind::Write
                        } else {
                            MemOpKind::Read
                        },
                        Some(loc),
                    ),
                    None => continue,
                },
                InstKind::Call(c) => {
                    if c.callee
                        .as_deref()
                        .is_some_and(|n| is_pure_function(n, &opts.pure_functions))
                    {
                        continue;
                    }
                    (MemOpKind::Call, None)
                }
                InstKind::Builtin(id) => match builtin_effect(func, func.builtin(*id)) {
                    Some(k) => (k, None),
                    None => continue,
                },
                InstKind::Decl(v) => {
                    let var = func.var(*v);
                    if storage.get(v.index()) == Some(&Storage::Memory)
                        && matches!(var.kind, VarKind::Local)
                    {
                        (MemOpKind::LifetimeStart, Some(Loc::var(*v, var.ty.scalar)))
                    } else {
                        continue;
                    }
                }
                InstKind::Asm => (MemOpKind::Asm, None),
                InstKind::Prefetch => (MemOpKind::Prefetch, None),
            };
            ops.push(MemOp {
                block: BlockId(bi as u32),
                orig_block: BlockId(bi as u32),
                inst: ii as u32,
                span: inst.span,
                kind,
                loc,
                hoisted_from: Vec::new(),
                licm_blocker: None,
            });
        }
    }

    ops.shrink_to_fit();
    licm(func, &facts, forest, preheaders, &mut ops);

    // Order per block: ops that stayed come in program order; loads hoisted
    // into a preheader go at its end (before the terminator), in program
    // order among themselves.
    let mut block_ops: Vec<Vec<usize>> = vec![Vec::new(); func.blocks.len()];
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by_key(|&i| {
        let o = &ops[i];
        (o.block, !o.hoisted_from.is_empty(), o.orig_block, o.inst)
    });
    for i in order {
        block_ops[ops[i].block.index()].push(i);
    }
    MemoryInfo {
        vars: facts,
        ops,
        block_ops,
    }
}

/// The location an access touches if it is a memory operation.
fn classify_access(storage: &[Storage], a: &Access) -> Option<Loc> {
    match a.target {
        AccessTarget::Var(v) => {
            if storage.get(v.index()) == Some(&Storage::Memory) {
                Some(Loc {
                    base: LocBase::Var(v),
                    ty: a.ty,
                })
            } else {
                None
            }
        }
        AccessTarget::Deref { ptr } => Some(Loc {
            base: LocBase::Deref(ptr),
            ty: a.ty,
        }),
    }
}

/// What a loop (subloops included) may write.
#[derive(Default)]
struct LoopSummary {
    /// Register variables written in the loop.
    written_vars: HashSet<VarId>,
    /// Distinct memory locations written, with the first writing span.
    writes: Vec<(Loc, Span)>,
    write_set: HashSet<Loc>,
    /// First non-pure call and asm.
    call: Option<Span>,
    asm: Option<Span>,
}

fn licm(
    func: &Function,
    facts: &VarFacts,
    forest: &LoopForest,
    preheaders: &[Option<BlockId>],
    ops: &mut [MemOp],
) {
    if forest.loops.is_empty() {
        return;
    }
    // Summaries per loop: each block's effects go to its innermost loop, then
    // children are merged into parents (children come after parents in no
    // particular order, so walk loops by decreasing depth).
    let mut summaries: Vec<LoopSummary> = (0..forest.loops.len())
        .map(|_| LoopSummary::default())
        .collect();
    for (bi, block) in func.blocks.iter().enumerate() {
        let Some(l) = forest.loop_for(bi as u32) else {
            continue;
        };
        let s = &mut summaries[l.0 as usize];
        for inst in &block.insts {
            match &inst.kind {
                InstKind::Access(a) if a.write => {
                    if let AccessTarget::Var(v) = a.target {
                        if facts.storage(v) != Some(Storage::Memory) {
                            s.written_vars.insert(v);
                            continue;
                        }
                    }
                    if let Some(loc) = classify_access(&facts.storage, a) {
                        if s.write_set.insert(loc) {
                            s.writes.push((loc, inst.span));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for op in ops.iter() {
        let Some(l) = forest.loop_for(op.orig_block.0) else {
            continue;
        };
        let s = &mut summaries[l.0 as usize];
        match op.kind {
            MemOpKind::Call => {
                s.call.get_or_insert(op.span);
            }
            MemOpKind::Asm => {
                s.asm.get_or_insert(op.span);
            }
            _ => {}
        }
    }
    let mut by_depth: Vec<usize> = (0..forest.loops.len()).collect();
    by_depth.sort_by_key(|&l| std::cmp::Reverse(forest.loops[l].depth));
    for l in by_depth {
        let Some(parent) = forest.loops[l].parent else {
            continue;
        };
        let child = std::mem::take(&mut summaries[l]);
        let p = &mut summaries[parent.0 as usize];
        p.written_vars.extend(child.written_vars.iter().copied());
        for (loc, span) in &child.writes {
            if p.write_set.insert(*loc) {
                p.writes.push((*loc, *span));
            }
        }
        if p.call.is_none() {
            p.call = child.call;
        }
        if p.asm.is_none() {
            p.asm = child.asm;
        }
        summaries[l] = child;
    }

    // The access behind a read (its address variables).
    let access_of =
        |b: BlockId, i: u32| match &func.blocks.get(b.index())?.insts.get(i as usize)?.kind {
            InstKind::Access(a) if !a.write => Some(a),
            _ => None,
        };

    for op in ops.iter_mut() {
        if op.kind != MemOpKind::Read {
            continue;
        }
        let (Some(loc), Some(access)) = (op.loc, access_of(op.orig_block, op.inst)) else {
            continue;
        };
        let mut cur = forest.loop_for(op.orig_block.0);
        while let Some(l) = cur {
            let s = &summaries[l.0 as usize];
            let Some(pre) = preheaders.get(l.0 as usize).copied().flatten() else {
                break;
            };
            if !address_invariant(func, facts, access, &loc, s) {
                break;
            }
            if let Some(blocker) = clobber(func, facts, &loc, s) {
                op.licm_blocker = Some(LicmBlocker {
                    loop_id: l,
                    span: blocker.0,
                    reason: blocker.1,
                });
                break;
            }
            op.hoisted_from.push(l);
            op.block = pre;
            cur = forest.loops[l.0 as usize].parent;
        }
    }
}

/// The address of `access` does not change inside the loop summarised by `s`.
fn address_invariant(
    func: &Function,
    facts: &VarFacts,
    access: &Access,
    loc: &Loc,
    s: &LoopSummary,
) -> bool {
    if let LocBase::Deref(None) = loc.base {
        return false;
    }
    access.addr_vars.iter().all(|v| {
        match facts.storage(*v) {
            Some(Storage::Constant) => true,
            Some(Storage::Register) => !s.written_vars.contains(v),
            // A pointer or index that itself lives in memory: invariant when
            // nothing in the loop may write it.
            Some(Storage::Memory) => {
                let vloc = Loc::var(*v, func.var(*v).ty.scalar);
                clobber(func, facts, &vloc, s).is_none()
            }
            None => false,
        }
    })
}

/// The first thing in the loop that may write `loc`.
fn clobber(
    func: &Function,
    facts: &VarFacts,
    loc: &Loc,
    s: &LoopSummary,
) -> Option<(Span, BlockReason)> {
    for (w, span) in &s.writes {
        if alias::may_alias(func, loc, w) {
            return Some((*span, BlockReason::AliasingStore));
        }
    }
    if let Some(span) = s.asm {
        return Some((span, BlockReason::Asm));
    }
    if let Some(span) = s.call {
        if alias::call_may_touch(func, facts, loc) {
            return Some((span, BlockReason::Call));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pure_calls_that_stay_calls() {
        let extra = vec!["sq".to_string()];
        // intrinsics or plain arithmetic after clang
        for n in [
            "sqrt",
            "sqrtf",
            "__builtin_sqrt",
            "fabsl",
            "fmax",
            "abs",
            "isnan",
        ] {
            assert!(is_pure_function(n, &[]), "{n}");
            assert!(!pure_call_stays_call(n, &[]), "{n}");
        }
        for n in [
            "__builtin_popcountll",
            "__builtin_bswap32",
            "__builtin_clzs",
            "__builtin_frame_address",
            "__builtin_huge_valf",
        ] {
            assert!(is_pure_function(n, &[]), "{n}");
            assert!(!pure_call_stays_call(n, &[]), "{n}");
        }
        // readnone library calls, and configured/declared functions
        for n in ["tanh", "tanhf", "__builtin_atan2", "cbrt", "erfl", "sq"] {
            assert!(pure_call_stays_call(n, &extra), "{n}");
        }
        // not pure at all
        assert!(!pure_call_stays_call("printf", &extra));
    }
}
