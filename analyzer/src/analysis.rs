//! The analysis of one file, as plain data (SEMANTICS.md §8): the lowered
//! functions after LoopSimplify, their dominator trees and loops, the memory
//! operations that survive to CLIE, marker attachment and placed sections,
//! and the diagnostics. This is the API the command line and the language
//! server call.

use crate::clie::{self, ClieInput, ClieResult};
use crate::diag::Diagnostic;
use crate::frontend::{self, FrontendOptions, Identity, LoweredFile};
use crate::graph::dom::DomTree;
use crate::graph::loops::{self, LoopForest, LoopId};
use crate::graph::simplify::loop_simplify_with;
use crate::graph::Csr;
use crate::ir::{BlockId, Function, Lang};
use crate::memory::{self, MemoryInfo, MemoryOptions};
use crate::regions::events::{self, EventInput, MemopCfg};
use crate::regions::membership::{self, MembershipInfo};
use crate::regions::ordering::{self, OrderingInfo, OrderingInput};
use crate::regions::tokens::TokenInfo;
use crate::rules::{self, FileContext, FunctionContext};
use crate::source::{SourceText, Span};
use csa_grammars::preproc::Preprocessed;
use csa_grammars::SourceKind;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// A request to stop an analysis early: the language server sets it when a
/// newer version of the document supersedes the one being analysed. The
/// analysis looks at it between functions, and a parse in progress gives
/// up when it is set.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Asks every analysis holding this token (or a clone) to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Runs `f` with parses on this thread watching this token
    /// (`csa_grammars::with_stop`): a long parse stops when it is set.
    pub(crate) fn watching<R>(&self, f: impl FnOnce() -> R) -> R {
        csa_grammars::with_stop(&self.0, f)
    }
}

/// An analysis stopped by its [`Cancel`] token; it has no result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

/// What the analysis can be told.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnalysisOptions {
    /// Preprocessor names treated as defined (config `defines`, `--define`).
    pub defines: Vec<String>,
    /// Functions known to have no side effects (config `pure-functions`).
    pub pure_functions: Vec<String>,
    /// Turn off CSA301 (config `disable-loop-storage-check`, the compiler's
    /// `-csa-disable-loop-storage-check`).
    pub disable_loop_storage_check: bool,
    /// Files `#include`d by the file, read by the caller: the cpp macros
    /// they define are expanded in Fortran code (free and fixed form); a C
    /// file's conditions and repairs read their object-like macros.
    pub headers: crate::frontend::fortran::cpp::Headers,
    /// Text the preprocessor reads before the file, as cpp's `-include`
    /// does: for a file another one `#include`s, that includer's text
    /// before the `#include` line (the caller finds it). Its directives
    /// take effect first (its conditionals evaluated as a header's; the
    /// files it `#include`s must be in `headers`): the macros a header uses
    /// but leaves to its includer to define (MITgcm's `_RL`, zlib's `FAR`
    /// in `inftrees.h`) are known. Empty: none.
    pub prelude: String,
    /// Lower and analyse every function body, also those that hold nothing
    /// any rule looks at (which are outlines otherwise: only their name,
    /// spans and calls are kept): the diagnostics are the same, the IR is
    /// complete (`--dump`).
    pub every_body: bool,
}

impl AnalysisOptions {
    /// What the front ends are told.
    pub(crate) fn frontend(&self) -> FrontendOptions {
        FrontendOptions {
            every_body: self.every_body,
            defines: self.defines.clone(),
        }
    }
}

/// Everything computed for one function.
#[derive(Debug)]
pub struct FunctionAnalysis {
    /// The IR after LoopSimplify.
    pub func: Function,
    /// Successor lists of the blocks of `func`.
    pub succs: Csr,
    /// Predecessor lists with one entry per edge (a block reached twice
    /// from one `switch` lists it twice, as LLVM does), each ascending.
    pub preds: Csr,
    pub reachable: Vec<bool>,
    pub dom: DomTree,
    pub forest: LoopForest,
    pub preheaders: Vec<Option<BlockId>>,
    /// Loops CLIE skips (irreducible, not in LoopSimplify form).
    pub skipped: Vec<bool>,
    /// Retreating edges whose target does not dominate the source, found on
    /// the CFG before LoopSimplify.
    pub irreducible_edges: Vec<(u32, u32)>,
    pub memory: MemoryInfo,
    pub clie: ClieResult,
    /// Region/section token resolution (SEMANTICS.md §6.1).
    pub tokens: TokenInfo,
    /// Memory operations and region/section intrinsics (user, OpenMP,
    /// CLIE) per block, in order.
    pub events: MemopCfg,
    /// Region and section membership (§6.2).
    pub membership: MembershipInfo,
    /// The ordering inconsistencies (§6.3) and whether the function's
    /// regions are ignored. `edges` is empty here: listing every pair is
    /// O(M²) in time and memory and only the memop graph needs it, so
    /// [`FunctionAnalysis::ordering_listing`] computes it on first use.
    pub ordering: OrderingInfo,
    ordering_listing: OnceLock<OrderingInfo>,
    /// Dependence facts of the loops asserted parallel (CSA5xx).
    pub deps: Vec<crate::dependence::LoopDeps>,
    /// Functions the options declare pure (the dependence analysis of the
    /// rewrite needs them again).
    pub pure_functions: Vec<String>,
}

impl FunctionAnalysis {
    /// The source loop statement of a natural loop, if the loop came from
    /// one.
    pub fn source_loop(&self, l: LoopId) -> Option<&crate::ir::SourceLoop> {
        let header = self.forest.loops.get(l.index())?.header;
        self.func.source_loop_with_header(header)
    }
}

/// Everything computed for one file.
#[derive(Debug)]
pub struct Analysis {
    pub(crate) kind: SourceKind,
    pub(crate) lang: Lang,
    pub(crate) source: SourceText,
    pub(crate) preprocessed: Preprocessed,
    pub(crate) functions: Vec<Arc<FunctionAnalysis>>,
    /// For each function, how far its text has moved since it was analysed
    /// (non-zero only for results an incremental analysis reused): add it
    /// to the function's spans to get positions in `source`.
    pub(crate) function_shifts: Vec<i64>,
    pub(crate) toplevel_errors: Vec<Span>,
    /// Sorted by position, then code.
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// The queries of the front door (see the crate documentation).
impl Analysis {
    /// The diagnostics, sorted by position, then code.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The diagnostics, taken out of the analysis.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diagnostics
    }

    /// The diagnostics and the analysed text with its line index, taken
    /// out of the analysis.
    pub fn into_parts(self) -> (Vec<Diagnostic>, SourceText) {
        (self.diagnostics, self.source)
    }

    /// The analysed text with its line index.
    pub fn source(&self) -> &SourceText {
        &self.source
    }

    pub fn kind(&self) -> SourceKind {
        self.kind
    }

    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// Every fix of `d` (a diagnostic of this analysis): its rule's, then
    /// the one that suppresses it on its line.
    pub fn fixes(&self, d: &Diagnostic) -> Vec<crate::diag::Fix> {
        crate::suppress::all_fixes(d, &self.source, self.lang)
    }

    /// The names of the analysed functions, in source order.
    pub fn function_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.functions.iter().map(|f| f.func.name.as_str())
    }

    /// The stable text dump of function `name` (`--dump cfg`): the IR after
    /// LoopSimplify, loops, markers and CLIE's verdicts.
    pub fn cfg_dump(&self, name: &str) -> Option<String> {
        Some(self.function(name)?.dump(&self.source))
    }

    /// The Graphviz memop graph of function `name` (`--dump memop-graph`).
    pub fn memop_graph(&self, name: &str) -> Option<String> {
        Some(self.function(name)?.memop_graph(&self.source))
    }

    /// The analysed functions (tests and benchmarks).
    #[cfg(feature = "internals")]
    pub fn functions(&self) -> &[Arc<FunctionAnalysis>] {
        &self.functions
    }

    /// How many places the front ends could not read: syntax errors
    /// outside any function, and functions with one.
    pub fn syntax_error_count(&self) -> usize {
        self.toplevel_errors.len()
            + self
                .functions
                .iter()
                .filter(|f| f.func.syntax_error.is_some())
                .count()
    }

    /// The function named `name` (exactly, else ignoring ASCII case).
    pub(crate) fn function(&self, name: &str) -> Option<&FunctionAnalysis> {
        self.functions
            .iter()
            .find(|f| f.func.name == name)
            .or_else(|| {
                self.functions
                    .iter()
                    .find(|f| f.func.name.eq_ignore_ascii_case(name))
            })
            .map(|f| &**f)
    }
}

/// Lowers a file to IR without analysing it (for `--dump cfg` of the front
/// end's output).
pub fn lower(kind: SourceKind, text: &str, opts: &AnalysisOptions) -> (Preprocessed, LoweredFile) {
    let fortran = kind != SourceKind::C;
    let with_macros;
    // (the headers and the prelude, which the header macros replace, for
    // the expansion of function-like macros)
    let cpp = Cpp {
        headers: &opts.headers,
        prelude: &opts.prelude,
    };
    let opts = match header_macros(kind, opts) {
        Some(o) => {
            with_macros = o;
            &with_macros
        }
        None => opts,
    };
    let pre = csa_grammars::preproc::preprocess(text, &opts.defines, fortran);
    let lowered = lower_preprocessed(kind, text, opts, cpp, &pre);
    // A conditional whose condition is unknown takes its first branch; when
    // that reading does not parse because of such a branch (C++ in a
    // `#ifdef DEBUG` block, a `#if X` opening a brace that a `#if !X`
    // closes), the names of those branches' conditions are read as a
    // compiler given no `-D` reads them (undefined), and that reading is
    // kept if it has fewer syntax errors. Other unknown names keep their
    // first branch (a `#ifdef USE_CSA` block stays analysed).
    let errors = syntax_errors;
    let before = errors(&lowered);
    if before == 0 || lowered.parse_gave_up {
        return (pre, lowered);
    }
    // (a few rounds: once a branch is passed over, the error of another
    // may show, `#ifdef A` and `#ifdef B` prototypes without their `;`)
    // Each round reads the names found so far as undefined; the reading
    // with the fewest errors is kept, the first on a tie.
    let mut names = names_in_the_way(&pre, text, &lowered, fortran);
    let mut best = (pre, lowered, before);
    for _ in 0..AS_COMPILED_ROUNDS {
        if names.is_empty() {
            break;
        }
        let other =
            csa_grammars::preproc::preprocess_as_compiled(text, &opts.defines, fortran, &names);
        let other_lowered = lower_preprocessed(kind, text, opts, cpp, &other);
        if other_lowered.parse_gave_up {
            break;
        }
        let n = errors(&other_lowered);
        let more: Vec<String> = names_in_the_way(&other, text, &other_lowered, fortran)
            .into_iter()
            .filter(|m| !names.contains(m))
            .collect();
        if n < best.2 {
            best = (other, other_lowered, n);
        }
        if n == 0 || more.is_empty() {
            break;
        }
        names.extend(more);
    }
    (best.0, best.1)
}

/// The syntax errors of a lowered file: those outside functions, and the
/// functions that hold one.
fn syntax_errors(l: &LoweredFile) -> usize {
    l.toplevel_errors.len() + l.functions.iter().filter(|f| f.syntax_error.is_some()).count()
}

/// For a C file that includes headers (`opts.headers`, read by the
/// caller) or has a prelude (`opts.prelude`, read after the headers):
/// `opts` with the object-like macros they define added to its
/// `defines`, as `NAME=BODY` (a macro the user defines keeps the user's
/// definition). Each header is read as a compiler given no `-D` but those
/// and `_OPENMP` reads it, in the order they were found, each seeing what
/// the ones before defined (`csa_grammars::preproc::header_macros`). So the file's
/// conditions on them are decided (`#if MIN_MATCH != 3` with `MIN_MATCH`
/// defined as 3 in a header), and the C repair knows the qualifier macros
/// they define (`FAR`, `ZEXPORT`, `local`: see `frontend::c::repair`).
/// `None` when there is nothing to add.
pub(crate) fn header_macros(kind: SourceKind, opts: &AnalysisOptions) -> Option<AnalysisOptions> {
    if kind != SourceKind::C || (opts.headers.0.is_empty() && opts.prelude.is_empty()) {
        return None;
    }
    let name_of = |d: &str| d.split_once('=').map_or(d, |(n, _)| n).trim().to_string();
    let user: rustc_hash::FxHashSet<String> = opts.defines.iter().map(|d| name_of(d)).collect();
    let mut defines = opts.defines.clone();
    // The headers are read with OpenMP on, as csa-lint reads the code's
    // OpenMP directives (`#ifndef _OPENMP` / `#define omp_off` in a header
    // would otherwise hide the file's `#ifndef omp_off` OpenMP code); the
    // file itself is read as before (an unknown `_OPENMP` takes its first
    // branch). Taken out of the result below.
    let openmp = !user.contains("_OPENMP");
    if openmp {
        defines.insert(0, "_OPENMP=201511".to_string());
    }
    // where each header macro's definition is in `defines`
    let mut at: rustc_hash::FxHashMap<String, usize> = Default::default();
    // (the prelude after the headers: those it includes come first, and
    // those of the file itself seldom define what it does)
    let prelude = (!opts.prelude.is_empty()).then_some(opts.prelude.as_str());
    for text in opts.headers.0.iter().map(|(_, t)| t.as_str()).chain(prelude) {
        for (name, body) in header_macros_memo(text, &defines).iter() {
            if user.contains(name) {
                continue;
            }
            let d = format!("{name}={body}");
            match at.get(name) {
                Some(&i) => defines[i] = d,
                None => {
                    at.insert(name.clone(), defines.len());
                    defines.push(d);
                }
            }
        }
    }
    if openmp {
        defines.remove(0);
    }
    (!at.is_empty()).then(|| AnalysisOptions {
        defines,
        pure_functions: opts.pure_functions.clone(),
        disable_loop_storage_check: opts.disable_loop_storage_check,
        headers: Default::default(),
        prelude: String::new(),
        every_body: opts.every_body,
    })
}

/// `csa_grammars::preproc::header_macros(text, defines)`, remembered:
/// the files of a tree include the same headers in the same order, so a
/// run reads each header once per set of definitions before it instead of
/// once per file including it (a tenth of a run over LLNL AMG). At most
/// [`HEADER_MEMO`] results are kept (all are dropped when it is full).
fn header_macros_memo(text: &str, defines: &[String]) -> std::sync::Arc<Vec<(String, String)>> {
    use std::hash::{Hash, Hasher};
    type Memo = rustc_hash::FxHashMap<(u64, u64, usize), std::sync::Arc<Vec<(String, String)>>>;
    static MEMO: std::sync::Mutex<Option<Memo>> = std::sync::Mutex::new(None);
    let hash = |f: &dyn Fn(&mut rustc_hash::FxHasher)| {
        let mut h = rustc_hash::FxHasher::default();
        f(&mut h);
        h.finish()
    };
    let key = (
        hash(&|h| text.hash(h)),
        hash(&|h| defines.hash(h)),
        text.len(),
    );
    if let Some(found) = MEMO
        .lock()
        .ok()
        .and_then(|m| m.as_ref().and_then(|m| m.get(&key).cloned()))
    {
        return found;
    }
    let macros = std::sync::Arc::new(csa_grammars::preproc::header_macros(text, defines));
    if let Ok(mut memo) = MEMO.lock() {
        let memo = memo.get_or_insert_with(Default::default);
        if memo.len() >= HEADER_MEMO {
            memo.clear();
        }
        memo.insert(key, macros.clone());
    }
    macros
}

/// The most results [`header_macros_memo`] keeps.
const HEADER_MEMO: usize = 1024;

/// Most readings [`lower`] tries after the first.
const AS_COMPILED_ROUNDS: usize = 4;

/// The names of the conditions of the active branches taken because
/// their condition is unknown that may be why `lowered` has syntax errors:
/// one overlaps an error, or its code opens brackets (in
/// Fortran, modules and programs) it does not close (or closes ones it did
/// not open).
fn names_in_the_way(
    pre: &Preprocessed,
    text: &str,
    lowered: &LoweredFile,
    fortran: bool,
) -> Vec<String> {
    use csa_grammars::preproc::{bracket_balance, condition_names, fortran_unit_balance};
    let balance = |body| {
        if fortran {
            fortran_unit_balance(text, body)
        } else {
            bracket_balance(text, body)
        }
    };
    // (whole spans: the parser's recovery may start an error a little
    // before the branch that causes it, after a directive line a rewrite
    // added)
    let errors: Vec<(usize, usize)> = lowered
        .toplevel_errors
        .iter()
        .chain(lowered.functions.iter().filter_map(|f| f.syntax_error.as_ref()))
        .map(|s| (s.start as usize, (s.end as usize).max(s.start as usize + 1)))
        .collect();
    let mut names: Vec<String> = Vec::new();
    for c in &pre.conditionals {
        for b in &c.branches {
            if !(b.unknown && b.active) {
                continue;
            }
            let (start, end) = b.body;
            let holds_error = errors.iter().any(|&(s, e)| s < end && start < e);
            // (an alternative that opens or closes what this branch does
            // not: GSL's `#ifdef DIRECT` branch, balanced, whose `#else`
            // leaves a block open that a `}` after the `#endif` closes)
            let own = balance(b.body);
            let unlike = || c.branches.iter().any(|o| o.body != b.body && balance(o.body) != own);
            if holds_error || own != 0 || unlike() {
                for n in condition_names(text, b.directive) {
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
            }
        }
    }
    names
}

/// [`lower`] of the text `pre` made of `text`.
/// The headers a file includes and its prelude, as the caller gave them
/// (`header_macros` turns them into definitions for C).
#[derive(Clone, Copy)]
struct Cpp<'a> {
    headers: &'a crate::Headers,
    prelude: &'a str,
}

fn lower_preprocessed(
    kind: SourceKind,
    text: &str,
    opts: &AnalysisOptions,
    cpp: Cpp<'_>,
    pre: &Preprocessed,
) -> LoweredFile {
    let fortran = kind != SourceKind::C;
    // An INCLUDE file: statements without a program unit. As the body of an
    // (implicit) main program they parse; the `end` goes after everything,
    // so every position in the file stays where it is.
    let fragment;
    let parsed: &str = if fortran && frontend::fortran::is_include_fragment(&pre.text) {
        fragment = format!("{}{}", pre.text, frontend::fortran::FRAGMENT_END);
        &fragment
    } else {
        &pre.text
    };
    let macros = frontend::fortran::cpp::Macros {
        source: text,
        pre,
        headers: cpp.headers,
        prelude: cpp.prelude,
        defines: &opts.defines,
    };
    // cpp macros used in Fortran code (`.F90`, `.F`), expanded as the
    // compiler's preprocessor would; positions map back to the uses
    let expanded = match kind {
        SourceKind::C => None,
        _ => frontend::fortran::cpp::expand(parsed, &macros, kind == SourceKind::FortranFixed),
    };
    let parsed: &str = expanded.as_ref().map_or(parsed, |e| &e.text);
    let identity = Identity;
    let cpp_map: &dyn frontend::PosMap = match &expanded {
        Some(e) => &e.map,
        None => &identity,
    };
    // Free-form lines longer than the standard allows are not parsed:
    // tree-sitter-fortran's scanner takes time quadratic in a token's
    // length (a 40 kB line: seconds). They are blanked (positions kept)
    // and reported as syntax errors.
    let blanked = if kind == SourceKind::FortranFree {
        frontend::fortran::blank_overlong_lines(parsed)
    } else {
        None
    };
    let (parsed, long_lines): (&str, &[Span]) = match &blanked {
        Some((text, lines)) => (text, lines),
        None => (parsed, &[]),
    };
    let fopts = opts.frontend();
    let lowered = match kind {
        SourceKind::C => {
            let plain = frontend::lower_recovering(parsed, &Identity, frontend::c_unit_end, &|t| {
                frontend::c::lower(t, &fopts)
            });
            // A file with syntax errors is read again with its function-like
            // macros expanded (`fortran::cpp::expand_c`: a template's
            // `FUNCTION(vec, set)(...)`), and that reading kept when it has
            // fewer.
            let errors = syntax_errors(&plain);
            let expanded = (errors > 0 && !plain.parse_gave_up)
                .then(|| frontend::fortran::cpp::expand_c(parsed, &macros))
                .flatten()
                .map(|e| {
                    frontend::lower_recovering(&e.text, &e.map, frontend::c_unit_end, &|t| {
                        frontend::c::lower_expanded(t, &e.map, &fopts)
                    })
                })
                .filter(|l| !l.parse_gave_up && syntax_errors(l) < errors);
            expanded.unwrap_or(plain)
        }
        SourceKind::FortranFree => {
            frontend::lower_recovering(parsed, cpp_map, frontend::fortran_unit_end, &|t| {
                frontend::fortran::lower(t, cpp_map, &fopts)
            })
        }
        SourceKind::FortranFixed => {
            let norm = match &expanded {
                None => csa_grammars::fixed_form::normalize(parsed),
                // (an expansion that runs past column 72 builds only with
                // longer lines: `-ffixed-line-length-132`)
                Some(e) => csa_grammars::fixed_form::normalize_with(
                    parsed,
                    &csa_grammars::fixed_form::FixedFormOptions {
                        line_length: Some(if e.past_column(72) {
                            132
                        } else {
                            csa_grammars::fixed_form::DEFAULT_LINE_LENGTH
                        }),
                    },
                ),
            };
            let map = frontend::Composed(&norm, cpp_map);
            frontend::lower_recovering(&norm.text, &map, frontend::fortran_unit_end, &|t| {
                frontend::fortran::lower(t, &map, &fopts)
            })
        }
    };
    let mut lowered = lowered;
    lowered.toplevel_errors.extend(long_lines.iter().map(|s| {
        Span::new(
            cpp_map.to_original(s.start as usize),
            cpp_map.to_original(s.end as usize),
        )
    }));
    lowered
}

/// Analyses one file. Never panics on any text.
pub fn analyze(kind: SourceKind, text: &str, opts: &AnalysisOptions) -> Analysis {
    match analyze_cancellable(kind, text, opts, &Cancel::new()) {
        Ok(fa) => fa,
        // Nothing can cancel a token no one else holds.
        Err(Cancelled) => empty(kind),
    }
}

/// The analysis of an empty file of this language.
pub(crate) fn empty(kind: SourceKind) -> Analysis {
    let lang = if kind == SourceKind::C {
        Lang::C
    } else {
        Lang::Fortran
    };
    let source = SourceText::new(String::new());
    let preprocessed = csa_grammars::preproc::preprocess("", &[], kind.is_fortran());
    Analysis {
        kind,
        lang,
        source,
        preprocessed,
        functions: Vec::new(),
        function_shifts: Vec::new(),
        toplevel_errors: Vec::new(),
        diagnostics: Vec::new(),
    }
}

/// [`analyze`], stopping inside the parse or between functions once
/// `cancel` is set.
pub fn analyze_cancellable(
    kind: SourceKind,
    text: &str,
    opts: &AnalysisOptions,
    cancel: &Cancel,
) -> Result<Analysis, Cancelled> {
    let (preprocessed, lowered) = cancel.watching(|| lower(kind, text, opts));
    // (A parse stopped by `cancel` looks like one that gave up.)
    if cancel.is_cancelled() {
        return Err(Cancelled);
    }
    let source = SourceText::new(text.to_string());
    let lang = if kind == SourceKind::C {
        Lang::C
    } else {
        Lang::Fortran
    };
    let mopts = MemoryOptions {
        pure_functions: opts.pure_functions.clone(),
    };
    let mut diagnostics = Vec::new();
    let mut functions = Vec::with_capacity(lowered.functions.len());
    for func in lowered.functions {
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        let fa = analyze_function(func, &mopts, text);
        function_diagnostics(&fa, kind, &source, &preprocessed, opts, &mut diagnostics);
        functions.push(Arc::new(fa));
    }
    {
        let all: Vec<&Function> = functions.iter().map(|f| &f.func).collect();
        file_diagnostics(
            lang,
            &source,
            &preprocessed,
            opts,
            &all,
            &lowered.toplevel_errors,
            lowered.parse_gave_up,
            &mut diagnostics,
        );
    }
    let diagnostics = finish_diagnostics(diagnostics, &source, lang);
    let function_shifts = vec![0; functions.len()];
    Ok(Analysis {
        kind,
        lang,
        source,
        preprocessed,
        functions,
        function_shifts,
        toplevel_errors: lowered.toplevel_errors,
        diagnostics,
    })
}

/// The diagnostics of one analysed function.
pub(crate) fn function_diagnostics(
    fa: &FunctionAnalysis,
    kind: SourceKind,
    source: &SourceText,
    pre: &Preprocessed,
    opts: &AnalysisOptions,
    out: &mut Vec<Diagnostic>,
) {
    let cx = FunctionContext {
        func: &fa.func,
        succs: &fa.succs,
        src: source,
        forest: &fa.forest,
        preheaders: &fa.preheaders,
        memory: &fa.memory,
        clie: &fa.clie,
        reachable: &fa.reachable,
        irreducible_edges: &fa.irreducible_edges,
        tokens: &fa.tokens,
        events: &fa.events,
        membership: &fa.membership,
        ordering: &fa.ordering,
        deps: &fa.deps,
        pure_functions: &fa.pure_functions,
        disable_loop_storage_check: opts.disable_loop_storage_check,
        fixed_form: kind == SourceKind::FortranFixed,
        pre,
        macro_defined: &|name| macro_defined(name, source.text(), opts),
    };
    rules::check_function(&cx, out);
}

/// File-level diagnostics (syntax errors outside functions, unguarded
/// builtins) of some functions.
#[allow(clippy::too_many_arguments)]
pub(crate) fn file_diagnostics(
    lang: Lang,
    source: &SourceText,
    preprocessed: &Preprocessed,
    opts: &AnalysisOptions,
    functions: &[&Function],
    toplevel_errors: &[Span],
    parse_gave_up: bool,
    out: &mut Vec<Diagnostic>,
) {
    let guarded = |offset: usize| preprocessed.is_csa_guarded(offset);
    let cx = FileContext {
        lang,
        src: source,
        functions,
        toplevel_errors,
        parse_gave_up,
        csa_guarded: &guarded,
        macro_defined: &|name| macro_defined(name, source.text(), opts),
    };
    rules::check_file(&cx, out);
}

/// Whether cpp macro `name` is given a definition (for CSA001's advice):
/// by `opts.defines`, or by a `#define` line in `text`, the prelude or a
/// header (wherever it stands: a definition in a branch cpp leaves out
/// still silences the advice).
pub(crate) fn macro_defined(name: &str, text: &str, opts: &AnalysisOptions) -> bool {
    let given = opts
        .defines
        .iter()
        .any(|d| d.split_once('=').map_or(d.as_str(), |(n, _)| n).trim() == name);
    given
        || std::iter::once(text)
            .chain(std::iter::once(opts.prelude.as_str()))
            .chain(opts.headers.0.iter().map(|(_, t)| t.as_str()))
            .any(|t| defines_macro(t, name))
}

/// Whether a line of `text` is `#define name` (spaces allowed around `#`).
fn defines_macro(text: &str, name: &str) -> bool {
    let b = text.as_bytes();
    memchr::memmem::find_iter(b, name.as_bytes()).any(|at| {
        let end = at + name.len();
        let after_ok = b.get(end).is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
        let line = memchr::memrchr(b'\n', &b[..at]).map_or(0, |k| k + 1);
        // `#`, `define`, then only blanks before the name
        let directive = text
            .get(line..at)
            .and_then(|h| h.trim_start().strip_prefix('#'))
            .and_then(|r| r.trim_start().strip_prefix("define"))
            .is_some_and(|r| !r.is_empty() && r.trim().is_empty());
        after_ok && directive
    })
}

/// Sorts, deduplicates and applies suppression comments.
pub(crate) fn finish_diagnostics(
    mut diagnostics: Vec<Diagnostic>,
    source: &SourceText,
    lang: Lang,
) -> Vec<Diagnostic> {
    // Nothing points past the text (the `end` a Fortran INCLUDE file is
    // parsed with lies there): spans and line references are clamped, fixes that would edit
    // there are dropped.
    let len = source.text().len() as u32;
    let clamp = |s: &mut crate::source::Span| {
        s.start = s.start.min(len);
        s.end = s.end.min(len).max(s.start);
    };
    for d in &mut diagnostics {
        clamp(&mut d.span);
        d.message.clamp(len);
        // (shared with the incremental analyser's copies: changed only
        // when something lies past the end)
        if d
            .related
            .iter()
            .any(|r| r.span.end > len || r.message.offsets().any(|o| o > len))
        {
            for r in std::sync::Arc::make_mut(&mut d.related) {
                clamp(&mut r.span);
                r.message.clamp(len);
            }
        }
        if let Some(h) = &mut d.help {
            h.clamp(len);
        }
        if d.fixes.iter().any(|f| f.edits.iter().any(|e| e.span.end > len)) {
            std::sync::Arc::make_mut(&mut d.fixes)
                .retain(|f| f.edits.iter().all(|e| e.span.end <= len));
        }
    }
    diagnostics.sort_by(|a, b| {
        (a.span.start, a.span.end, a.code).cmp(&(b.span.start, b.span.end, b.code))
    });
    diagnostics.dedup();
    let suppressions =
        crate::suppress::parse(source, lang, &|c| rules::lookup(c).is_some());
    if suppressions.is_empty() {
        return diagnostics;
    }
    let (mut kept, used) = crate::suppress::apply(diagnostics, &suppressions, source);
    let before = kept.len();
    rules::check_suppressions(&suppressions, &used, source, &mut kept);
    if kept.len() > before {
        kept.sort_by(|a, b| {
            (a.span.start, a.span.end, a.code).cmp(&(b.span.start, b.span.end, b.code))
        });
    }
    kept
}

/// Analyses one lowered function; `src` is the file's original text (its
/// spans point into it).
pub(crate) fn analyze_function(
    mut func: Function,
    mopts: &MemoryOptions,
    src: &str,
) -> FunctionAnalysis {
    // Functions the file declares readnone are pure for this one.
    let extended;
    let mopts = if func.readnone_callees.is_empty() {
        mopts
    } else {
        let mut pure_functions = mopts.pure_functions.clone();
        pure_functions.extend(func.readnone_callees.iter().cloned());
        extended = MemoryOptions { pure_functions };
        &extended
    };
    // Irreducibility is a property of the CFG the front end built.
    let succs0 = crate::graph::successor_graph(&func);
    let preds0 = Csr::reversed(&succs0);
    let dom0 = DomTree::dominators_with_preds(&succs0, &preds0, 0);
    let forest0 = loops::find_loops_with_preds(&succs0, &preds0, &dom0);
    // `find_irreducible` on this CFG from block 0, which the loop forest
    // holds.
    let irreducible_edges = forest0.irreducible_edges().to_vec();

    let report = loop_simplify_with(&mut func, &succs0, &forest0);

    // LoopSimplify changes edges only to reach the blocks it adds, and
    // dominators and loops depend on the CFG alone: most functions leave
    // LoopSimplify unchanged and keep the ones computed before it.
    let (succs, preds, dom, forest) = if report.added.is_empty() {
        (succs0, preds0, dom0, forest0)
    } else {
        let succs = crate::graph::successor_graph(&func);
        let preds = Csr::reversed(&succs);
        let dom = DomTree::dominators_with_preds(&succs, &preds, 0);
        let forest = loops::find_loops_with_preds(&succs, &preds, &dom);
        (succs, preds, dom, forest)
    };
    let reachable: Vec<bool> = (0..succs.len()).map(|b| dom.contains(b as u32)).collect();
    let preheaders: Vec<Option<BlockId>> = forest
        .ids()
        .map(|l| forest.preheader(l, &succs, &preds).map(BlockId))
        .collect();
    let skipped: Vec<bool> = forest
        .ids()
        .map(|l| {
            preheaders[l.index()].is_none()
                || forest.single_latch(l).is_none()
                || forest.touches_irreducible(l)
        })
        .collect();
    let memory = memory::analyze(&func, &forest, &preheaders, &reachable, mopts);
    let tokens = TokenInfo::compute(&func, &succs, dom.rpo(), &reachable, &memory);
    let clie = clie::run(&ClieInput {
        func: &func,
        succs: &succs,
        preds: &preds,
        dom: &dom,
        forest: &forest,
        preheaders: &preheaders,
        memory: &memory,
        reachable: &reachable,
        skipped: &skipped,
    });
    let events = events::build(&EventInput {
        func: &func,
        forest: &forest,
        preheaders: &preheaders,
        memory: &memory,
        clie: &clie,
        region_of: &|b| tokens.region_of(b),
    });
    let membership = membership::analyze(&func, &succs, &preds, &reachable, &events);
    let ordering = ordering::analyze(&OrderingInput {
        func: &func,
        succs: &succs,
        preds: &preds,
        reachable: &reachable,
        rpo: dom.rpo(),
        forest: &forest,
        memory: &memory,
        events: &events,
        list_edges: false,
    });
    let deps = crate::dependence::analyze(&crate::dependence::DepInput {
        func: &func,
        preds: &preds,
        dom: &dom,
        forest: &forest,
        preheaders: &preheaders,
        memory: &memory,
        clie: &clie,
        pure_functions: &mopts.pure_functions,
        src,
    });
    FunctionAnalysis {
        func,
        succs,
        preds,
        reachable,
        dom,
        forest,
        preheaders,
        skipped,
        irreducible_edges,
        memory,
        clie,
        tokens,
        events,
        membership,
        ordering,
        ordering_listing: OnceLock::new(),
        deps,
        pure_functions: mopts.pure_functions.clone(),
    }
}

impl FunctionAnalysis {
    /// The data sharing of the arrays loop `l` writes,
    /// as an OpenMP loop needs it (`dependence::arrays`).
    pub fn array_sharing(&self, l: LoopId) -> Vec<crate::dependence::arrays::ArrayUse> {
        crate::dependence::array_sharing(
            &crate::dependence::DepInput {
                func: &self.func,
                preds: &self.preds,
                dom: &self.dom,
                forest: &self.forest,
                preheaders: &self.preheaders,
                memory: &self.memory,
                clie: &self.clie,
                pure_functions: &self.pure_functions,
                src: "",
            },
            l,
        )
    }

    /// The ordering analysis with every ordering edge listed (§6.3; see
    /// `regions::ordering` for which pairs are listed). Computed on first
    /// use: its problems and `regions_ignored` are those of `ordering`.
    pub fn ordering_listing(&self) -> &OrderingInfo {
        self.ordering_listing.get_or_init(|| {
            ordering::analyze(&OrderingInput {
                func: &self.func,
                succs: &self.succs,
                preds: &self.preds,
                reachable: &self.reachable,
                rpo: self.dom.rpo(),
                forest: &self.forest,
                memory: &self.memory,
                events: &self.events,
                list_edges: true,
            })
        })
    }

    /// The Graphviz memop graph behind `csa-lint --dump memop-graph`
    /// (`regions::dot`).
    pub fn memop_graph(&self, src: &SourceText) -> String {
        crate::regions::dot::memop_graph(&crate::regions::dot::DotInput {
            func: &self.func,
            succs: &self.succs,
            reachable: &self.reachable,
            rpo: self.dom.rpo(),
            forest: &self.forest,
            memory: &self.memory,
            events: &self.events,
            ordering: self.ordering_listing(),
            src,
        })
    }

    /// The stable text dump behind `csa-lint --dump cfg`: the IR after
    /// LoopSimplify, then loops, markers and CLIE's verdicts.
    pub fn dump(&self, src: &SourceText) -> String {
        use std::fmt::Write;
        let mut out = crate::ir::dump::dump_function(&self.func, Some(src));
        let pos = |s: Span| {
            let lc = src.line_col(s.start as usize);
            format!("@{}:{}", lc.line, lc.column)
        };
        let bbs = |v: &[u32]| {
            v.iter()
                .map(|b| format!("bb{b}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = writeln!(out, "loops:");
        for (i, l) in self.forest.loops.iter().enumerate() {
            let pre = self.preheaders[i]
                .map(|b| format!("bb{}", b.0))
                .unwrap_or_else(|| "none".to_string());
            let _ = writeln!(
                out,
                "  loop{} header bb{} latch {} preheader {} depth {} parent {} blocks {} exits {}{}",
                i,
                l.header,
                bbs(&l.latches),
                pre,
                l.depth,
                l.parent
                    .map(|p| format!("loop{}", p.0))
                    .unwrap_or_else(|| "none".to_string()),
                bbs(&l.blocks),
                bbs(&l.exit_blocks),
                if self.skipped[i] { " skipped" } else { "" }
            );
        }
        let _ = writeln!(out, "memory operations:");
        for op in &self.memory.ops {
            let hoisted = if op.hoisted_from.is_empty() {
                String::new()
            } else {
                format!(" (hoisted from bb{})", op.orig_block.0)
            };
            let _ = writeln!(
                out,
                "  bb{} {:?} {}{}",
                op.block.0,
                op.kind,
                pos(op.span),
                hoisted
            );
        }
        let _ = writeln!(out, "markers:");
        for m in &self.clie.markers {
            let b = self.func.builtin(m.builtin);
            let _ = writeln!(
                out,
                "  builtin#{} {} {:?}",
                m.builtin.0,
                pos(b.span),
                m.status
            );
        }
        let _ = writeln!(out, "verdicts:");
        for v in &self.clie.verdicts {
            let _ = writeln!(
                out,
                "  loop{} builtin#{} {:?}",
                v.loop_id.0, v.marker.0, v.outcome
            );
        }
        for &(a, b) in &self.irreducible_edges {
            let _ = writeln!(out, "irreducible edge bb{a} -> bb{b}");
        }
        out.push_str(&self.tokens.dump(&self.func, src));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_reads_the_pasting_macros_of_its_includer_s_headers() {
        // GSL's `*_source.c`: included after `#define BASE_FLOAT` and a
        // header of pasting macros, which decide what its names are
        let header = "#if defined(BASE_FLOAT)\n#define SHORT float\n#endif\n\
                      #define CAT3x(a, b, c) a ## _ ## b ## _ ## c\n\
                      #define CAT3(a, b, c) CAT3x(a, b, c)\n\
                      #define FUNCTION(a, c) CAT3(a, SHORT, c)\n#define NAME(x) #x\n";
        let text = "void\nFUNCTION (test, func) (int *a, int n)\n{\n\
                    \x20 for (int i = 0; i < n; i++) a[i] = 0;\n\
                    \x20 check (n == 0, NAME (vec) \"_alloc\");\n}\n";
        let alone = analyze(SourceKind::C, text, &AnalysisOptions::default());
        assert_eq!(alone.syntax_error_count(), 1, "{:?}", alone.diagnostics());
        let opts = AnalysisOptions {
            prelude: "#include <stdio.h>\n#define BASE_FLOAT\n#include \"on.h\"\n".to_string(),
            headers: crate::Headers(vec![("on.h".to_string(), header.to_string())]),
            ..Default::default()
        };
        let fa = analyze(SourceKind::C, text, &opts);
        assert_eq!(fa.syntax_error_count(), 0, "{:?}", fa.diagnostics());
        assert_eq!(fa.function_names().collect::<Vec<_>>(), ["test_float_func"]);
        // its span is the source's: from `void` to the last `}`
        let f = &fa.functions()[0].func;
        assert_eq!((f.span.start as usize, f.span.end as usize), (0, text.len() - 1));
    }

    #[test]
    fn header_macros_are_read_with_openmp_on_and_the_user_s_definitions_win() {
        let header = "#ifndef _OPENMP\n#define NO_OMP\n#endif\n#define W 3\n#define USER 1\n";
        let opts = AnalysisOptions {
            defines: vec!["USER=2".to_string()],
            headers: crate::frontend::fortran::cpp::Headers(vec![(
                "h.h".to_string(),
                header.to_string(),
            )]),
            ..Default::default()
        };
        let with = header_macros(SourceKind::C, &opts).expect("a header macro");
        assert_eq!(with.defines, vec!["USER=2".to_string(), "W=3".to_string()]);
        assert!(with.headers.0.is_empty());
        // told that OpenMP is off, the header defines NO_OMP
        let off = AnalysisOptions {
            defines: vec!["_OPENMP=0".to_string()],
            ..opts.clone()
        };
        let header_off = "#if !_OPENMP\n#define NO_OMP\n#endif\n";
        let off = AnalysisOptions {
            headers: crate::frontend::fortran::cpp::Headers(vec![(
                "h.h".to_string(),
                header_off.to_string(),
            )]),
            ..off
        };
        let with = header_macros(SourceKind::C, &off).expect("a header macro");
        assert!(with.defines.contains(&"NO_OMP=".to_string()), "{:?}", with.defines);
        // nothing for Fortran (its headers are expanded by `cpp`)
        assert!(header_macros(SourceKind::FortranFree, &opts).is_none());
    }
}
