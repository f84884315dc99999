//! Symbolic integer expressions: the values of subscripts, of scalar
//! assignments and of loop bounds, as the front ends saw them.
//!
//! Front ends record *what an expression computes* in a per-function arena
//! ([`Function::exprs`](super::Function::exprs)); they decide nothing. The
//! dependence analysis (`crate::dependence`) turns these trees into affine
//! forms in the loop indices, following scalar values through their
//! definitions with reaching definitions on the CFG.
//!
//! Leaves that read a variable name the *read instruction* ([`InstRef`]),
//! not just the variable: `a[i++]` reads `i` before it is incremented, and
//! only the instruction's position says which definition the read sees.
//! Positions are stable: blocks are only appended (LoopSimplify) and
//! instructions never move.

use super::{AccessTarget, BlockId, Function, InstKind, VarId};

/// Index of an expression in [`Function::exprs`](super::Function::exprs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExprId(pub u32);

impl ExprId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The position of an instruction: its block and its index in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstRef {
    pub block: BlockId,
    pub index: u32,
}

/// Operators of the expressions the front ends record. The dependence
/// analysis reads the integer ones; the others are kept for recognising
/// reductions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Integer division (truncating, C and Fortran alike).
    Div,
    /// C `%`, Fortran `MOD`.
    Rem,
    /// Fortran `MIN`/`MAX` (any type), C `fmin`/`fmax`.
    Min,
    Max,
    /// Bitwise `&`, `|`, `^` (Fortran `IAND`, `IOR`, `IEOR`).
    BitAnd,
    BitOr,
    BitXor,
    /// Logical `&&`, `||` (Fortran `.AND.`, `.OR.`).
    LogAnd,
    LogOr,
    /// A comparison (its value is 0 or 1).
    Cmp(Cmp),
    Eq,
}

impl BinOp {
    /// The operator a C math function computes on its two arguments:
    /// `fmax`/`fmin` and their `f`/`l` forms (names the C standard
    /// reserves, 7.1.3). The front end gives such a call the value
    /// `Bin(op, x, y)` over its arguments' values.
    pub fn of_c_function(name: &str) -> Option<BinOp> {
        match name {
            "fmax" | "fmaxf" | "fmaxl" => Some(BinOp::Max),
            "fmin" | "fminf" | "fminl" => Some(BinOp::Min),
            _ => None,
        }
    }

    /// The operator of a C binary or compound-assignment operator
    /// (`+`, `+=`).
    pub fn from_c(op: &str) -> Option<BinOp> {
        Some(match op.strip_suffix('=').unwrap_or(op) {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Rem,
            "&" => BinOp::BitAnd,
            "|" => BinOp::BitOr,
            "^" => BinOp::BitXor,
            "&&" => BinOp::LogAnd,
            "||" => BinOp::LogOr,
            _ => return None,
        })
    }

    /// A C comparison operator.
    pub fn from_c_cmp(op: &str) -> Option<BinOp> {
        Some(match op {
            "<" => BinOp::Cmp(Cmp::Lt),
            "<=" => BinOp::Cmp(Cmp::Le),
            ">" => BinOp::Cmp(Cmp::Gt),
            ">=" => BinOp::Cmp(Cmp::Ge),
            "!=" => BinOp::Cmp(Cmp::Ne),
            "==" => BinOp::Eq,
            _ => return None,
        })
    }
}

/// One node of a symbolic expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// An integer constant (literals, enumerators, `#define`s, PARAMETERs
    /// the front end folded).
    Int(i64),
    /// The value produced by the read access at `at`: a whole scalar
    /// variable, or an element or field of memory (an indirect value such
    /// as `idx[i]`).
    Read(InstRef),
    /// The address of a named object (an array name decaying, `&x`), for
    /// pointer arithmetic (`p = a + 1`).
    AddrOf(VarId),
    Bin(BinOp, ExprId, ExprId),
    Neg(ExprId),
    /// C `c ? x : y`: the values of its arms, and the condition the
    /// branch between them tests (`cond` is the branch's
    /// `Terminator::cond`; the arms' reads are in their own blocks).
    Select {
        cond: ExprId,
        then: ExprId,
        else_: ExprId,
    },
    /// C: a string literal (the address of a constant array holding it),
    /// its value with escapes resolved.
    Str(Box<str>),
    /// Anything else: a call's result, a floating-point or logical value,
    /// a comparison, a value the front end did not follow.
    Unknown,
}

/// How an access selects what it touches within its root object (a named
/// variable, or the memory a pointer points to).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sel {
    /// One subscript. C: one per `[]` (and the offset of `*(p + k)`, `*p`
    /// is index 0); Fortran: one per dimension, in source order (the first
    /// varies fastest in memory).
    Index(ExprId),
    /// A Fortran section subscript `lo:hi:step` (missing parts are the
    /// dimension's bounds and 1).
    Range {
        lo: Option<ExprId>,
        hi: Option<ExprId>,
        step: Option<ExprId>,
    },
    /// A named field or component (`.f`, `->f`, `%c`).
    Field(Box<str>),
    /// A selector the front end could not describe (a coarray index, a
    /// subscript it gave up on).
    Unknown,
}

/// The selection of an access: root outwards.
pub type Path = Vec<Sel>;

/// The control of a counted loop, as written (`for (i = a; i < b; i += s)`,
/// Fortran `DO i = a, b, s`). The analysis checks that `var` really is an
/// induction variable of the loop before using any of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopControl {
    pub var: VarId,
    /// The first value.
    pub init: ExprId,
    /// The bound the variable is compared with.
    pub limit: ExprId,
    /// How the variable compares with `limit` while the loop runs (`i <
    /// n`: `Lt`). Fortran DO: `Le` for a positive step, `Ge` for a
    /// negative one (the last value is `limit`).
    pub cmp: Cmp,
    /// The step added each iteration.
    pub step: ExprId,
    /// The bounds are evaluated once before the loop (Fortran DO), not on
    /// every iteration.
    pub bounds_once: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Ne,
}

impl Cmp {
    /// `a op b` turned around as `b op' a`.
    pub fn swapped(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            Cmp::Ne => Cmp::Ne,
        }
    }
}

impl Function {
    pub fn expr(&self, id: ExprId) -> &Expr {
        self.exprs.get(id.index()).unwrap_or(&Expr::Unknown)
    }

    /// The instruction at `at`, if it exists.
    pub fn inst_at(&self, at: InstRef) -> Option<&super::Inst> {
        self.blocks
            .get(at.block.index())
            .and_then(|b| b.insts.get(at.index as usize))
    }

    /// The variable a `Read` leaf reads as a whole scalar, if it does.
    pub fn read_var(&self, at: InstRef) -> Option<VarId> {
        match &self.inst_at(at)?.kind {
            InstKind::Access(a) if !a.write && a.path.is_empty() => match a.target {
                super::AccessTarget::Var(v) if a.index == super::IndexKind::Whole => Some(v),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Structural equality of expressions, for recognising updates.
impl Function {
    /// Whether two paths select the same element: the same fields and
    /// subscript expressions of the same shape over the same variables.
    pub fn same_path(&self, a: &[Sel], b: &[Sel]) -> bool {
        self.same_path_at(a, b, 0)
    }

    fn same_path_at(&self, a: &[Sel], b: &[Sel], depth: u32) -> bool {
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| match (x, y) {
                (Sel::Index(e), Sel::Index(f)) => self.same_expr_at(*e, *f, depth),
                (Sel::Field(f), Sel::Field(g)) => f == g,
                _ => false,
            })
    }

    /// Whether two expressions compute the same value: the same shape over
    /// the same variables, element reads of the same array (or through the
    /// same pointer) at the same subscripts. No write between them is
    /// checked: the callers compare a statement's parts, or a condition
    /// with the assignment it guards.
    pub fn same_expr(&self, a: ExprId, b: ExprId) -> bool {
        self.same_expr_at(a, b, 0)
    }

    fn same_expr_at(&self, a: ExprId, b: ExprId, depth: u32) -> bool {
        if a == b {
            // one evaluation (`a[idx[i]] += e` reads and writes one element)
            return true;
        }
        if depth > 64 {
            return false;
        }
        match (self.expr(a), self.expr(b)) {
            (Expr::Int(x), Expr::Int(y)) => x == y,
            (Expr::Read(x), Expr::Read(y)) => {
                match (self.read_var(*x), self.read_var(*y)) {
                    // whole reads of one scalar
                    (Some(p), Some(q)) => p == q,
                    (None, None) => match (
                        self.inst_at(*x).map(|i| &i.kind),
                        self.inst_at(*y).map(|i| &i.kind),
                    ) {
                        // element reads of one named array at the same place
                        (Some(InstKind::Access(p)), Some(InstKind::Access(q))) => {
                            matches!(
                                p.target,
                                AccessTarget::Var(_) | AccessTarget::Deref { ptr: Some(_) }
                            ) && p.target == q.target
                                && !p.path.is_empty()
                                && self.same_path_at(&p.path, &q.path, depth + 1)
                        }
                        _ => false,
                    },
                    _ => false,
                }
            }
            (Expr::Bin(o, l, r), Expr::Bin(p, m, s)) => {
                o == p
                    && self.same_expr_at(*l, *m, depth + 1)
                    && self.same_expr_at(*r, *s, depth + 1)
            }
            (Expr::Neg(x), Expr::Neg(y)) => self.same_expr_at(*x, *y, depth + 1),
            (
                Expr::Select {
                    cond: c1,
                    then: t1,
                    else_: e1,
                },
                Expr::Select {
                    cond: c2,
                    then: t2,
                    else_: e2,
                },
            ) => {
                self.same_expr_at(*c1, *c2, depth + 1)
                    && self.same_expr_at(*t1, *t2, depth + 1)
                    && self.same_expr_at(*e1, *e2, depth + 1)
            }
            _ => false,
        }
    }
}
