//! The per-function IR: a control-flow graph shaped like the one the C and
//! Fortran front ends of the CSA compiler emit before optimisation
//! (SEMANTICS.md §3).
//!
//! Front ends (`crate::frontend`) lower syntax trees into [`Function`]s. They
//! record *facts* (every read and write of a variable or through a pointer,
//! every call, every declaration, every CSA builtin) and leave *decisions*
//! (which accesses survive SROA/mem2reg/LICM as memory operations, which
//! calls are pure) to `crate::memory`.
//!
//! Invariants:
//! * `blocks[0]` is the entry block; block ids are dense indices.
//! * Every `Span` is in original-source coordinates (see `crate::source`).
//! * Blocks are never removed; unreachable blocks may exist and are ignored by
//!   the graph analyses.
//! * The IR holds no tree-sitter types: it outlives the syntax tree.

pub mod builder;
pub mod dump;
pub mod expr;

pub use expr::{BinOp, Cmp, Expr, ExprId, InstRef, LoopControl, Path, Sel};

use crate::source::Span;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// Index of a block in [`Function::blocks`].
    BlockId
);
id_type!(
    /// Index of a variable in [`Function::vars`].
    VarId
);
id_type!(
    /// Index of a CSA builtin call in [`Function::builtins`].
    BuiltinId
);

/// Source language of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    C,
    Fortran,
}

impl From<csa_grammars::SourceKind> for Lang {
    fn from(kind: csa_grammars::SourceKind) -> Lang {
        if kind.is_fortran() {
            Lang::Fortran
        } else {
            Lang::C
        }
    }
}

/// One lowered function (C function, Fortran subroutine/function/program).
#[derive(Clone, Debug)]
pub struct Function {
    /// The name as written (Fortran keeps the source spelling; compare
    /// case-insensitively there, `Call::callee` is lower-cased).
    pub name: String,
    pub lang: Lang,
    /// The whole definition.
    pub span: Span,
    /// The function's name where it is defined.
    pub name_span: Span,
    pub blocks: Vec<Block>,
    pub vars: Vec<Var>,
    pub builtins: Vec<BuiltinCall>,
    /// Loop statements as written in the source, in source order.
    pub source_loops: Vec<SourceLoop>,
    /// Symbolic expressions (subscripts, assigned values, loop bounds):
    /// see [`expr`].
    pub exprs: Vec<Expr>,
    /// OpenMP `parallel` constructs that are not worksharing loops (their
    /// directive and the code they enclose), for the data sharing of the
    /// worksharing loops inside them.
    pub omp_regions: Vec<OmpRegion>,
    /// OpenMP `sections` / `parallel sections` constructs, with the empty
    /// blocks the front end puts around the construct and each section
    /// for the region and section intrinsics the CSA compiler places there.
    pub omp_sections: Vec<OmpSections>,
    /// Every OpenMP directive in the function (its text, continuation lines
    /// included), in source order.
    pub omp_directives: Vec<Span>,
    /// Code OpenMP runs under mutual exclusion (`atomic` statements,
    /// `critical` constructs), in source order.
    pub omp_sync: Vec<OmpSync>,
    /// The parameters (C) or dummy arguments (Fortran) in order; `None`
    /// for a dummy procedure or an alternate return (`*`).
    pub params: Vec<Option<VarId>>,
    /// The functions defined in the same file that this one calls,
    /// directly or through them, lowered in full (filled by the front ends
    /// for the functions they lower, when any call is in a loop; the
    /// dependence analysis summarises their effects, see
    /// `dependence::summary`). Empty for the callees themselves.
    pub callees: Vec<std::sync::Arc<Function>>,
    /// Functions this one calls that the file declares `readnone` (C:
    /// GNU `__attribute__((const))`, `[[gnu::const]]`): clang marks their
    /// calls `readnone`, so they touch no memory (sorted, unique).
    pub readnone_callees: Vec<String>,
    /// Variables the file does not declare (Fortran: names taken to be data
    /// of a module in another file, with IMPLICIT NONE or a USE in scope).
    /// What that file says of them (`threadprivate`, a pointer) is unknown.
    pub declared_elsewhere: Vec<VarId>,
    /// Names referenced as `name(args)` that the file does not declare,
    /// where undeclared names are taken to come from a module in another
    /// file (Fortran: IMPLICIT NONE or a USE in scope): an array of that
    /// module or a function, lowered as calls (sorted, unique).
    pub undeclared_references: Vec<String>,
    /// Byte span of the first ERROR/MISSING node inside the function, if any.
    pub syntax_error: Option<Span>,
    /// The body was not lowered: it holds nothing any rule looks at (no CSA
    /// builtin, directive, jump into a loop or syntax error; see
    /// `frontend::relevance`), so the function is its name and spans and
    /// one empty entry block that returns. `FrontendOptions::every_body`
    /// lowers such bodies too (for dumps).
    pub outline: bool,
    /// Only the control flow was lowered (`frontend::relevance::FortranNeed::
    /// Control`): a Fortran unit whose only interest to any rule is its
    /// jumps (CSA002). Its blocks, edges, loops and labels are those of the
    /// whole lowering, but the statements that cannot jump (assignments,
    /// calls, I/O, declarations) are not lowered: no instruction, no
    /// variable. `FrontendOptions::every_body` lowers such bodies whole.
    pub skeleton: bool,
}

impl Function {
    /// What the function's control flow is: each block's name, origin and
    /// terminator (kind, targets, span). Tests compare two lowerings of a
    /// function by it.
    #[cfg(any(test, feature = "internals"))]
    pub fn control_flow(&self) -> Vec<String> {
        self.blocks
            .iter()
            .map(|b| {
                format!(
                    "{} {:?} {:?} {:?}",
                    b.name, b.origin, b.term.kind, b.term.span
                )
            })
            .collect()
    }

    pub const ENTRY: BlockId = BlockId(0);

    /// A function whose body is not lowered (see [`Function::outline`]).
    pub fn outline(name: String, lang: Lang, span: Span, name_span: Span) -> Function {
        let mut entry = Block::new("entry", None);
        entry.term.kind = TermKind::Return;
        Function {
            name,
            lang,
            span,
            name_span,
            blocks: vec![entry],
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
            outline: true,
            skeleton: false,
        }
    }

    pub fn block(&self, id: BlockId) -> &Block {
        &self.blocks[id.index()]
    }

    pub fn var(&self, id: VarId) -> &Var {
        &self.vars[id.index()]
    }

    pub fn builtin(&self, id: BuiltinId) -> &BuiltinCall {
        &self.builtins[id.index()]
    }

    /// Successor lists of all blocks, indexed by block id.
    #[cfg(test)]
    pub fn successors(&self) -> Vec<Vec<u32>> {
        self.blocks
            .iter()
            .map(|b| b.term.kind.successors().map(|s| s.0).collect())
            .collect()
    }
}

/// A basic block: straight-line instructions and one terminator.
#[derive(Clone, Debug)]
pub struct Block {
    pub insts: Vec<Inst>,
    pub term: Terminator,
    /// Why the block exists, in clang's block naming (`for.cond`, `if.end`,
    /// `do.body`, `sw.bb`, `return`, `dummy`...). Used by dumps and messages.
    pub name: &'static str,
    /// The statement whose lowering created this block (for a join block,
    /// the `if`/`switch`; for a label block, the label), if any.
    pub origin: Option<Span>,
}

impl Block {
    pub fn new(name: &'static str, origin: Option<Span>) -> Block {
        Block {
            insts: Vec::new(),
            term: Terminator {
                kind: TermKind::Unreachable,
                span: None,
                cond: None,
            },
            name,
            origin,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Terminator {
    pub kind: TermKind,
    /// The statement or expression that decides where control goes: the loop
    /// condition, the `break`/`goto`/`exit`/`return` statement, the `if`
    /// condition. `None` for implicit fallthrough.
    pub span: Option<Span>,
    /// For a `Branch`: the condition's value as a symbolic expression, when
    /// the front end knows it (`then` is taken when it is non-zero).
    pub cond: Option<ExprId>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TermKind {
    /// Unconditional jump.
    Goto(BlockId),
    /// Two-way branch: `then` when the condition holds.
    Branch { then: BlockId, else_: BlockId },
    /// Multi-way branch (C `switch`, Fortran `SELECT CASE`, arithmetic `IF`,
    /// computed `GOTO`). Targets may repeat; order is source order, default last.
    Switch { targets: Vec<BlockId> },
    /// Leaves the function normally (the unified return block).
    Return,
    /// No successor: after a call to a no-return function (`exit`, `abort`,
    /// Fortran `STOP`), or a block that was never terminated.
    Unreachable,
}

impl TermKind {
    pub fn successors(&self) -> impl Iterator<Item = BlockId> + '_ {
        let (a, b, rest): (Option<BlockId>, Option<BlockId>, &[BlockId]) = match self {
            TermKind::Goto(t) => (Some(*t), None, &[]),
            TermKind::Branch { then, else_ } => (Some(*then), Some(*else_), &[]),
            TermKind::Switch { targets } => (None, None, targets.as_slice()),
            TermKind::Return | TermKind::Unreachable => (None, None, &[]),
        };
        a.into_iter().chain(b).chain(rest.iter().copied())
    }

    /// Replace every edge to `from` by an edge to `to`.
    pub fn retarget(&mut self, from: BlockId, to: BlockId) {
        let fix = |b: &mut BlockId| {
            if *b == from {
                *b = to
            }
        };
        match self {
            TermKind::Goto(t) => fix(t),
            TermKind::Branch { then, else_ } => {
                fix(then);
                fix(else_)
            }
            TermKind::Switch { targets } => targets.iter_mut().for_each(fix),
            TermKind::Return | TermKind::Unreachable => {}
        }
    }
}

/// One instruction with the source range it came from.
#[derive(Clone, Debug)]
pub struct Inst {
    pub kind: InstKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum InstKind {
    /// A read or write of a variable (or an element/field of it) or of memory
    /// through a pointer. Whether it is a memory operation is decided later
    /// by `crate::memory` (registers for promotable scalars, SROA, LICM).
    Access(Access),
    /// A call to a function that is not a CSA builtin.
    Call(Call),
    /// A call to a CSA builtin (`__builtin_csa_*` / `builtin_csa_*`).
    Builtin(BuiltinId),
    /// The declaration of a local variable, at the point where its storage
    /// comes alive (C: the declaration statement; Fortran: function entry or
    /// the start of a BLOCK construct). Becomes a lifetime start when the
    /// variable stays in memory.
    Decl(VarId),
    /// Inline assembly: always needs ordering.
    Asm,
    /// A `__builtin_prefetch` (C) call: a memory operation that ignores
    /// regions and sections.
    Prefetch,
}

#[derive(Clone, Debug)]
pub struct Access {
    pub write: bool,
    pub target: AccessTarget,
    /// How the accessed element is selected within a named variable.
    pub index: IndexKind,
    /// Register-candidate variables whose values the address depends on
    /// (array indices, the pointer variable). Used for loop invariance.
    pub addr_vars: Vec<VarId>,
    /// The scalar type accessed (for the type-based alias rule).
    pub ty: ScalarTy,
    /// For a write of a whole scalar variable: where the value comes from
    /// (used to follow region/section tokens through locals).
    pub value: Option<ValueSrc>,
    /// How the element is selected within the root (see [`Sel`]); empty
    /// for a whole variable or a plain `*p`-less whole access. A front end
    /// that cannot describe a selector puts [`Sel::Unknown`] there, so an
    /// empty path on a non-`Whole` access means "not described".
    pub path: Path,
    /// For a write of a whole scalar variable or of one element of a named
    /// array (subscripts only): the value written, as a symbolic
    /// expression (`k = i + 1`, `s += a[i]` is `s + a[i]`, `a(m) = a(m) +
    /// t` is `a(m) + t`).
    pub rhs: Option<ExprId>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccessTarget {
    /// The named variable itself, an element or a field of it.
    Var(VarId),
    /// Memory reached through a pointer. `ptr` is the pointer variable when
    /// the pointer is a plain variable (`*p`, `p[i]`, `p->f`), `None` when it
    /// is computed by a more complex expression.
    Deref { ptr: Option<VarId> },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    /// The whole variable (a scalar, or an aggregate copied as a whole).
    Whole,
    /// Every index and field is a compile-time constant, or an induction
    /// variable of a fully unrolled inner loop (`#pragma unroll` with a
    /// constant trip count): SROA can split the access.
    Const,
    /// Some index is not constant.
    Dynamic,
}

/// Where the value written by a whole-variable write comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueSrc {
    /// A plain copy of another variable (`t = reg;`).
    Copy(VarId),
    /// The result of a CSA builtin call (`int reg = __builtin_csa_parallel_region_entry(0);`).
    Builtin(BuiltinId),
    /// An integer constant.
    Const(i64),
    /// Anything else (arithmetic, memory, a call, a parameter...).
    Other,
}

#[derive(Clone, Debug)]
pub struct Call {
    /// The callee's name when it is a plain identifier (lower-cased in
    /// Fortran); `None` for calls through function pointers. A Fortran I/O
    /// statement is a call named by its keyword in upper case (`PRINT`,
    /// `WRITE`, `READ`, `OPEN`, ...), which no procedure name can be.
    pub callee: Option<String>,
    pub name_span: Span,
    /// Variables whose address is passed to the callee (`&x`, an array name,
    /// any Fortran actual argument that is a variable).
    pub escapes: Vec<VarId>,
    /// The actual arguments in order, for the effect summaries of callees
    /// defined in the same file (`dependence::summary`); empty for calls through
    /// function pointers, I/O statements and calls the front end gave up on.
    pub args: Vec<CallArg>,
}

impl Call {
    /// The variables the call is passed by reference or by address (its
    /// escapes and Fortran by-reference arguments; may repeat).
    pub fn passed_vars(&self) -> impl Iterator<Item = VarId> + '_ {
        self.escapes
            .iter()
            .copied()
            .chain(self.args.iter().filter_map(|a| match a {
                CallArg::Ref { var, .. } => Some(*var),
                _ => None,
            }))
    }
}

/// One actual argument of a [`Call`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallArg {
    /// C: the argument's value (a pointer's is its address, `AddrOf(a) + i`
    /// for `&a[i]`).
    Value(ExprId),
    /// Fortran: a variable, or an element, section or component of one,
    /// passed by reference (subscripts evaluated before the call).
    /// `keyword`: the dummy's name for `name = actual`.
    Ref {
        var: VarId,
        path: Vec<Sel>,
        keyword: Option<Box<str>>,
    },
    /// Anything else (Fortran: an expression, passed as a temporary the
    /// callee cannot change for the caller); `value`: the expression, when
    /// it is not a designator (`16`, `n - 1`).
    Other {
        keyword: Option<Box<str>>,
        value: Option<ExprId>,
    },
}

/// Scalar type classes for the type-based alias rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarTy {
    /// `char`, `signed/unsigned char`, Fortran `character`: aliases everything.
    Char,
    /// Integer types of any width and sign, `_Bool`, enums, Fortran
    /// `integer`/`logical`.
    Int,
    Float,
    Double,
    LongDouble,
    Pointer,
    /// Struct/union copied as a whole.
    Aggregate,
    /// Not known (typedef we cannot see through, `void *` deref...): aliases
    /// everything.
    Unknown,
}

#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    /// The declaring identifier (or the first use for implicit declarations).
    pub span: Span,
    pub kind: VarKind,
    pub ty: VarType,
    /// C: `&x` taken, or an array/aggregate passed to a call by address.
    /// Fortran: passed as an actual argument, TARGET, or pointed to.
    pub address_taken: bool,
    /// Fortran: `address_taken` only because the variable is passed as an
    /// actual argument (no TARGET, EQUIVALENCE, host association, pointer
    /// association or LOC). Such a variable is read and written only where
    /// the code names it, directly or as an argument of a call.
    pub only_passed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// Function-local automatic variable (C), Fortran local without SAVE.
    Local,
    /// C parameter (by value).
    Param,
    /// File-scope or `extern` variable, or an undeclared identifier that is
    /// not a macro (assumed to be a global from a header).
    Global,
    /// C `static` local.
    Static,
    /// Fortran dummy argument (passed by reference: every access is memory).
    Dummy,
    /// Fortran module, COMMON or SAVE variable.
    Saved,
    /// A named constant: C enumerator or `#define`, Fortran PARAMETER.
    Constant,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarType {
    /// The element type (for arrays), the type itself for scalars, the
    /// pointer type `Pointer` for pointers.
    pub scalar: ScalarTy,
    /// For pointers: the pointee's scalar type class.
    pub pointee: ScalarTy,
    pub is_array: bool,
    /// Variable-length array (C) or automatic/allocatable array with
    /// run-time bounds (Fortran).
    pub is_vla: bool,
    /// A C pointer, or a Fortran POINTER variable; `pointee` is then the
    /// pointed-to element type and `scalar` is `Pointer`.
    pub is_pointer: bool,
    /// C `restrict`-qualified pointer.
    pub restrict: bool,
    /// Struct/union value.
    pub is_aggregate: bool,
    /// Fortran POINTER or TARGET attribute.
    pub pointer_or_target: bool,
    /// Integer value of a constant (`Constant` vars, C `const` with a literal
    /// initialiser, Fortran PARAMETER).
    pub const_value: Option<i64>,
    /// Array dimensions in declaration order (C: outermost first; Fortran:
    /// the first varies fastest), where the front end knows them.
    pub dims: Vec<Dim>,
    /// Fortran: the INTENT of a dummy argument.
    pub intent: Intent,
    /// Fortran: an assumed-shape dummy (`a(:)`, `a(0:, :)`): it has the
    /// shape of its actual argument.
    pub assumed_shape: bool,
    /// Fortran: an assumed-size dummy (`a(*)`, `a(n, *)`): its size is
    /// unknown, also to OpenMP (no REDUCTION or PRIVATE clause may name it).
    pub assumed_size: bool,
}

/// The INTENT attribute of a Fortran dummy argument (F2018 8.5.10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Intent {
    /// No INTENT (or not a Fortran dummy).
    #[default]
    Unspecified,
    /// `intent(in)`: the procedure does not redefine it.
    In,
    /// `intent(out)`: undefined on entry, so the procedure writes every
    /// part of it that it reads before reading it.
    Out,
    /// `intent(inout)`.
    InOut,
}

/// One array dimension's bounds, when they are compile-time constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Dim {
    /// The lowest index (C: 0; Fortran: 1 unless declared).
    pub lower: Option<i64>,
    /// The number of elements.
    pub extent: Option<i64>,
}

impl Default for VarType {
    fn default() -> VarType {
        VarType {
            scalar: ScalarTy::Int,
            pointee: ScalarTy::Unknown,
            is_array: false,
            is_vla: false,
            is_pointer: false,
            restrict: false,
            is_aggregate: false,
            pointer_or_target: false,
            const_value: None,
            dims: Vec::new(),
            intent: Intent::Unspecified,
            assumed_shape: false,
            assumed_size: false,
        }
    }
}

/// A call to a CSA builtin, with everything the rules need to know about it.
#[derive(Clone, Debug)]
pub struct BuiltinCall {
    pub kind: BuiltinKind,
    /// The name as written (`__builtin_csa_parallel_loop`, `BUILTIN_CSA_SPMD`).
    pub name: String,
    /// The whole call statement (C expression statement / Fortran CALL),
    /// or the call expression when it is part of a larger one.
    pub span: Span,
    /// The call is a statement of its own (`span` is the statement): it
    /// can be removed or replaced without breaking the code around it.
    /// Not so for a call inside an expression (`x + __builtin_csa_...()`,
    /// a Fortran function reference).
    pub statement: bool,
    pub name_span: Span,
    pub args: Vec<BuiltinArg>,
    /// The block that holds the call.
    pub block: BlockId,
    /// The variable that receives the result (`int reg = ...entry(0)`), for
    /// region/section entries.
    pub result: Option<VarId>,
}

impl Function {
    /// The loop statement whose lowering made `header` its header.
    pub fn source_loop_with_header(&self, header: u32) -> Option<&SourceLoop> {
        self.source_loops.iter().find(|sl| sl.header.0 == header)
    }

    /// The OpenMP locks (`omp_sync`) the code at `span` runs under.
    pub fn locks_at(&self, span: Span) -> impl Iterator<Item = &OmpLock> + '_ {
        self.omp_sync
            .iter()
            .filter(move |s| s.body.start <= span.start && span.end <= s.body.end)
            .map(|s| &s.lock)
    }

    /// Whether the call `c` at `at` is passed `v`, the control variable of
    /// a counted loop around it, in a way that cannot assign it: a Fortran
    /// `DO` index (no procedure may change it), or in C a variable given
    /// by name to a possible macro (`CallArg::Ref` without its address
    /// taken: a macro assigning the index of the loop around it would make
    /// the loop something else; taken as not).
    pub fn passes_loop_index(&self, c: &Call, at: Span, v: VarId) -> bool {
        let by_name = match self.lang {
            Lang::Fortran => true,
            Lang::C => !c.escapes.contains(&v),
        };
        by_name
            && self.source_loops.iter().any(|sl| {
                (self.lang == Lang::C || sl.kind == LoopKind::FortranDo)
                    && sl.control.as_ref().is_some_and(|ctl| ctl.var == v)
                    && sl.span.start <= at.start
                    && at.end <= sl.span.end
            })
    }
}

impl BuiltinCall {
    /// Whether CSAFortranIntrinsics turns this call, made in Fortran, into
    /// an intrinsic: a name it maps, the argument count it expects, every
    /// argument an integer constant. Otherwise the call stays an external
    /// call (a memory operation that marks no loop).
    pub fn fortran_accepted(&self) -> bool {
        match self.kind.fortran_arity() {
            Some(n) => {
                self.args.len() == n
                    && self
                        .args
                        .iter()
                        .all(|a| matches!(a.value, ArgValue::Int(_)))
            }
            None => false,
        }
    }

    /// The name without prefix, lower-case (`parallel_loop`).
    pub fn short_name(&self) -> String {
        let lower = self.name.to_ascii_lowercase();
        lower
            .strip_prefix("__builtin_csa_")
            .or_else(|| lower.strip_prefix("builtin_csa_"))
            .unwrap_or(&lower)
            .to_string()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinKind {
    ParallelLoop,
    Spmd,
    Spmdization,
    PipelineLoop,
    RegionEntry,
    RegionExit,
    SectionEntry,
    SectionExit,
    WorkerNum,
    /// Any other `__builtin_csa_*` name.
    Other,
}

impl BuiltinKind {
    /// Loop markers: placed before a loop, consumed by CLIE.
    pub fn is_marker(self) -> bool {
        matches!(
            self,
            BuiltinKind::ParallelLoop
                | BuiltinKind::Spmd
                | BuiltinKind::Spmdization
                | BuiltinKind::PipelineLoop
        )
    }

    /// The argument count CSAFortranIntrinsics expects, for the builtins
    /// it maps (`None`: it leaves the call alone).
    fn fortran_arity(self) -> Option<usize> {
        match self {
            BuiltinKind::ParallelLoop | BuiltinKind::WorkerNum => Some(0),
            BuiltinKind::Spmd => Some(2),
            BuiltinKind::PipelineLoop => Some(1),
            _ => None,
        }
    }

    /// Region/section intrinsics.
    pub fn is_region_intrinsic(self) -> bool {
        matches!(
            self,
            BuiltinKind::RegionEntry
                | BuiltinKind::RegionExit
                | BuiltinKind::SectionEntry
                | BuiltinKind::SectionExit
        )
    }

    /// Recognise a builtin by its name without the `__builtin_csa_` (C) or
    /// `builtin_csa_` (Fortran) prefix, case-insensitively.
    pub fn from_suffix(suffix: &str) -> BuiltinKind {
        match suffix.to_ascii_lowercase().as_str() {
            "parallel_loop" => BuiltinKind::ParallelLoop,
            "spmd" => BuiltinKind::Spmd,
            "spmdization" => BuiltinKind::Spmdization,
            "pipeline_loop" => BuiltinKind::PipelineLoop,
            "parallel_region_entry" => BuiltinKind::RegionEntry,
            "parallel_region_exit" => BuiltinKind::RegionExit,
            "parallel_section_entry" => BuiltinKind::SectionEntry,
            "parallel_section_exit" => BuiltinKind::SectionExit,
            "spmd_worker_num" => BuiltinKind::WorkerNum,
            _ => BuiltinKind::Other,
        }
    }

    /// Recognise a full builtin name (`__builtin_csa_spmd`, `BUILTIN_CSA_SPMD`).
    pub fn from_name(name: &str) -> Option<BuiltinKind> {
        let lower = name.to_ascii_lowercase();
        let suffix = lower
            .strip_prefix("__builtin_csa_")
            .or_else(|| lower.strip_prefix("builtin_csa_"))?;
        Some(BuiltinKind::from_suffix(suffix))
    }
}

#[derive(Clone, Debug)]
pub struct BuiltinArg {
    pub value: ArgValue,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgValue {
    /// An integer constant: a literal, a constant expression, a `#define`, an
    /// enumerator, a Fortran PARAMETER.
    Int(i64),
    /// A string literal (its contents, unescaped).
    Str(String),
    /// A plain variable (a region/section token).
    Var(VarId),
    /// Anything else.
    Other,
}

/// A loop statement as written in the source.
#[derive(Clone, Debug)]
pub struct SourceLoop {
    pub kind: LoopKind,
    /// The whole statement.
    pub span: Span,
    /// The loop keyword (`for`, `while`, `do`) for anchoring.
    pub keyword_span: Span,
    /// The block that the lowering made the loop header (condition block for
    /// `for`/`while`/`DO`, body entry for `do ... while`).
    pub header: BlockId,
    /// The source-level body: the block it starts in (OpenMP sections go
    /// around it).
    pub body_entry: Option<BlockId>,
    /// `#pragma unroll` with a constant count, or full unroll (C only).
    pub unrolled: bool,
    /// An OpenMP worksharing directive attached to this loop.
    pub omp: Option<Span>,
    /// An ivdep assertion attached to this loop.
    pub ivdep: Option<Span>,
    /// The counted-loop control as written, when the loop has that shape.
    pub control: Option<LoopControl>,
}

/// An OpenMP `parallel` construct (C `#pragma omp parallel` and the
/// statement after it; Fortran `!$omp parallel` to `!$omp end parallel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OmpRegion {
    /// The directive (continuation lines included).
    pub directive: Span,
    /// The enclosed code.
    pub body: Span,
}

/// Code that OpenMP runs under mutual exclusion: the statement after an
/// `atomic` directive, or the code of a `critical` construct. Two accesses
/// in code under the same lock never run at the same time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmpSync {
    pub lock: OmpLock,
    /// The directive (continuation lines included).
    pub directive: Span,
    /// The code under the lock.
    pub body: Span,
}

/// The lock of an [`OmpSync`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OmpLock {
    /// Every `atomic` construct (its statement's storage location is
    /// accessed atomically).
    Atomic,
    /// The `critical` constructs with this name (empty: unnamed; Fortran
    /// names in lower case).
    Critical(Box<str>),
}

/// An OpenMP `sections` construct as the CSA compiler lowers it (VPO
/// Paropt's `genCSASections`): a parallel region from the end of `entry`
/// to the top of `exit`, and a parallel section around each `section`
/// (the first one's directive may be left out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmpSections {
    /// The `sections` or `parallel sections` directive.
    pub directive: Span,
    /// An empty block before the construct's body.
    pub entry: BlockId,
    /// The block the construct's body falls into.
    pub exit: BlockId,
    pub sections: Vec<OmpSection>,
}

/// One section of an [`OmpSections`]: from the end of `entry` (an empty
/// block) to the top of `exit` (the block its code falls into).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmpSection {
    /// The `section` directive, or the first statement when it has none.
    pub span: Span,
    pub entry: BlockId,
    pub exit: BlockId,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    For,
    While,
    DoWhile,
    /// Fortran counted `DO` (bounds evaluated once before the loop).
    FortranDo,
    /// Fortran `DO WHILE`.
    FortranDoWhile,
    /// Fortran `DO` with no control (infinite until EXIT).
    FortranDoForever,
    FortranDoConcurrent,
}
