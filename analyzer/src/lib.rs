//! csa-analyzer: the I/O-free core of csa-lint.
//!
//! # The front door
//!
//! [`analyze`] takes a file's text, its language ([`SourceKind`]) and the
//! [`AnalysisOptions`] and gives an [`Analysis`], which answers every
//! question the command line and the language server ask:
//! [`Analysis::diagnostics`], [`Analysis::fixes`], [`Analysis::hover`],
//! [`Analysis::placement_hints`] (inlay hints), [`Analysis::symbols`],
//! [`Analysis::rewrites`] (OpenMP/ivdep conversions),
//! [`Analysis::memop_graph`] and [`Analysis::cfg_dump`]. [`Incremental`]
//! gives the same `Analysis` after an edit, reusing what the edit did not
//! touch (editors); [`fix_all`] applies fixes and rewrites to a text
//! (`--fix`, `--rewrite`). Diagnostics are data ([`diag`]): spans, message
//! parts with line references, fixes of a [`diag::FixKind`]. Settings
//! files are read by the binaries and resolved by [`config`]; the rules are
//! listed by [`RULES`] ([`rule`], [`find_rule`]).
//!
//! Everything else is private to the crate. The pipeline behind the door:
//! `frontend` (syntax trees to IR) -> `graph` (dominators, loops,
//! LoopSimplify) -> `memory` (which accesses are memory operations after
//! SROA/mem2reg/LICM) -> `clie` (marker attachment and section placement)
//! -> `regions`, `dependence` -> `rules` (diagnostics). See
//! `docs/architecture.md`.
//!
//! Invariant: no I/O, no async, no LSP types; nothing in here panics on any
//! input text.
//!
//! The `internals` feature makes the pipeline's modules public for this
//! repository's own tests and benchmarks; nothing else may use it.

pub mod config;
pub mod diag;
pub mod includers;
pub mod source;

/// Modules public only with the `internals` feature (tests, benchmarks).
macro_rules! internal {
    ($($m:ident),* $(,)?) => {
        $(
            #[cfg(feature = "internals")]
            pub mod $m;
            #[cfg(not(feature = "internals"))]
            mod $m;
        )*
    };
}

internal!(
    analysis,
    clie,
    dependence,
    fix,
    frontend,
    graph,
    ide,
    incremental,
    ir,
    memory,
    omp,
    regions,
    rewrite,
    rules,
    scalars,
    suppress,
);

pub use analysis::{analyze, analyze_cancellable, Analysis, AnalysisOptions, Cancel, Cancelled};
pub use config::IvdepStyle;
pub use csa_grammars::SourceKind;
pub use fix::{bulk_fix, compatible_fixes};
pub use frontend::fortran::cpp::{Headers, IncludeLine};
pub use ide::{HintSide, Hover, PlacementHint, Symbol, SymbolKind};
pub use incremental::{Incremental, Stats as IncrementalStats};
pub use ir::Lang;
pub use rewrite::{fix_all, FixAllOptions, FixAllResult, MarkerRewrite, Target};
pub use rules::{find as find_rule, lookup as rule, reference_markdown as rules_reference, RULES};
pub use suppress::all_fixes as fixes_of;

/// The queries of the front door that go beyond the analysis's own data
/// (editor views, conversions, selection by settings); the rest are in
/// `analysis.rs`.
impl Analysis {
    /// Keeps only the diagnostics `settings` report for the file at
    /// `relative` (its selection and per-file ignores).
    pub fn select(&mut self, settings: &config::Settings, relative: &std::path::Path) {
        settings.filter(relative, &mut self.diagnostics);
    }

    /// What to show when hovering at byte `offset`: a marker's outcome, a
    /// loop's verdict.
    pub fn hover(&self, offset: usize) -> Option<ide::Hover> {
        ide::hover(self, offset)
    }

    /// Where CLIE places region and section intrinsics (inlay hints).
    pub fn placement_hints(&self) -> Vec<ide::PlacementHint> {
        ide::placement_hints(self)
    }

    /// Functions and their marked loops (document outline).
    pub fn symbols(&self) -> Vec<ide::Symbol> {
        ide::symbols(self)
    }

    /// Whether a CSA marker lies in `from..=to` (bytes).
    pub fn has_marker_in(&self, from: usize, to: usize) -> bool {
        ide::has_marker_in(self, from, to)
    }

    /// The conversions of every marker to `target`, or why one is refused.
    /// Needs an analysis made by [`analyze`] (an incremental one keeps
    /// reused functions at the positions they were analysed at).
    pub fn rewrites(&self, target: rewrite::Target) -> Vec<rewrite::MarkerRewrite> {
        rewrite::rewrite_markers(self, target)
    }
}
