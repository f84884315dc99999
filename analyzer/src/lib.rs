//! csa-analyzer: the I/O-free core of csa-lint.
//!
//! Pipeline: `frontend` (syntax trees to IR) -> `graph` (dominators, loops,
//! LoopSimplify) -> `memory` (which accesses are memory operations after
//! SROA/mem2reg/LICM) -> `clie` (marker attachment and section placement) ->
//! `rules` (diagnostics). `analysis` drives it for one file and returns plain
//! data. See `docs/architecture.md`.
//!
//! Invariant: no I/O, no async, no LSP types; nothing in here panics on any
//! input text.

pub mod analysis;
pub mod clie;
pub mod config;
pub mod dependence;
pub mod diag;
pub mod fix;
pub mod frontend;
pub mod graph;
pub mod ide;
pub mod incremental;
pub mod ir;
pub mod memory;
pub mod omp;
pub mod regions;
pub mod rewrite;
pub mod rules;
pub mod source;
pub mod suppress;
