//! Incremental analysis for editors: after an edit, only the functions
//! whose text (or whose file context) changed are lowered and analysed
//! again; the results of the others are reused, moved to where their text
//! now is.
//!
//! How (C files):
//! 1. The change from the previous text (common prefix and suffix) moves
//!    the previous line index (`SourceText::edited`) and preprocessing
//!    (`preproc::preprocess_edit`: patched when the edited lines hold no
//!    directive) over the edit; the previous tree-sitter tree is edited
//!    with the change of the parser input the preprocessor reports and
//!    re-parsed incrementally. When the result has a syntax error the text
//!    is parsed afresh instead, because error recovery may differ between
//!    the two.
//! 2. The top level is split into function definitions and *context*: every
//!    other top-level node except comments, the signature of every function
//!    (its text up to the body), and the preprocessor directive lines inside
//!    bodies. A function's cache key hashes its own text, the context's text
//!    and how many context items come before it, so a result is reused
//!    exactly when the front end would see the same function in the same
//!    file-wide facts. A function's text hash and whether its body defines
//!    file-wide facts are kept from the previous update when its text lies
//!    outside the change.
//! 3. A function that misses is lowered from the shared tree alone
//!    (`frontend::c::lower_tree_cached` with `only`) and analysed; its diagnostics,
//!    with file-level ones (unguarded builtins) restricted to it, are cached.
//! 4. Diagnostics are assembled, sorted, and suppressions applied over the
//!    whole text, as `analysis::analyze` does.
//!
//! Fortran works the same way with top-level program units (programs,
//! modules with their procedures, external subprograms) as the units, every
//! module and every other top-level item as the context, and
//! `frontend::fortran::lower_tree` for a miss. Fixed form is normalised to
//! free form (the whole text, each update) and the normalised text parsed
//! incrementally; a unit's key also holds its original text (normalisation
//! drops columns 73+, so one normalised text can come from several
//! originals), and unit positions are mapped back to the original.
//!
//! The result equals `analysis::analyze` on the same text; tests check that
//! over every C, free-form and fixed-form Fortran fixture and random edits.
//! Where that could not hold, the whole file is analysed instead: Fortran
//! with any syntax error (the front end then re-parses unit by unit), a
//! fixed-form unit the front end gave up on, and C files where a syntax
//! error sits outside any function or a function with a syntax error may
//! have swallowed the next one (the error recovery of
//! `frontend::lower_recovering` re-parses such files in chunks).
//!
//! Reused `FunctionAnalysis` values keep the positions they were computed
//! at; `Analysis::function_shifts` says how far each has moved.

use crate::analysis::{self, AnalysisOptions, Analysis, FunctionAnalysis};
use crate::diag::Diagnostic;
use crate::ir::Lang;
use crate::memory::MemoryOptions;
use crate::source::{SourceText, Span};
use csa_grammars::preproc::Preprocessed;
use csa_grammars::{SourceKind, TextEdit};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use tree_sitter::{InputEdit, Node, Parser, Tree};

/// The names a function's text calls.
type CalledNames = Arc<[Box<str>]>;

/// Counters of the last update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Functions whose results were reused.
    pub reused: usize,
    /// Functions lowered and analysed.
    pub analysed: usize,
    /// The whole file was analysed (no reuse possible).
    pub full: bool,
}

struct Entry {
    /// Where the function started when it was analysed.
    start: u32,
    /// Hash of the context items' positions then.
    positions: u64,
    /// Some diagnostic points outside the function: reuse only when
    /// nothing has moved.
    outside: bool,
    diagnostics: Vec<Diagnostic>,
    /// The unit's functions (a Fortran unit may hold several).
    analyses: Vec<Arc<FunctionAnalysis>>,
    /// Update counter when it was last used.
    used: u64,
}

/// The incremental analyser of one document.
pub struct Incremental {
    kind: SourceKind,
    opts: AnalysisOptions,
    parser: Option<Parser>,
    tree: Option<Tree>,
    /// The text of the last incremental update and its preprocessing,
    /// whose text (C, free-form Fortran) is the input `tree` belongs to.
    /// Set exactly when `tree` is.
    prev: Option<(SourceText, Preprocessed)>,
    /// Facts about each function of the last update (C), sorted by their
    /// place in the parser input then.
    fn_facts: Vec<FnFacts>,
    /// Fixed form: the normalised parser input of the last update, with
    /// its line index.
    prev_norm: Option<SourceText>,
    /// C: what the signatures of skipped bodies declare, for the file
    /// context (and directives) whose hash is beside it.
    signatures: (crate::frontend::c::SignatureCache, u64),
    cache: HashMap<u64, Entry>,
    /// Hash of a function's text to whether its body defines file-wide
    /// facts (`frontend::c::body_defines_file_facts`).
    defines: HashMap<u64, (bool, u64)>,
    /// Hash of a C function's text to the names it calls (`name(`), and
    /// the generation that last used it: a function's key holds the texts
    /// of the same-file functions it calls, whose effects its dependence
    /// analysis reads (`frontend::callees`).
    calls: HashMap<u64, (CalledNames, u64)>,
    generation: u64,
    stats: Stats,
    /// The token of the update running now (a fresh one between updates),
    /// and whether it stopped the update.
    cancel: analysis::Cancel,
    cancelled: bool,
}

/// A fast 64-bit hash of byte strings (FxHash): cache keys only, where a
/// collision is astronomically unlikely for the handful of functions a
/// file has.
fn hash_of(parts: &[&[u8]]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    for p in parts {
        p.hash(&mut h);
    }
    h.finish()
}

/// The row and byte column of `offset` (the parser input has the same line
/// ends as the source text: preprocessing keeps every `\n`).
/// The identifiers followed by `(` in a function's text: the names it may
/// call.
fn called_names(text: &str) -> Vec<Box<str>> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out: Vec<Box<str>> = Vec::new();
    for p in memchr::memchr_iter(b'(', b) {
        let mut end = p;
        while end > 0 && b[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && ident(b[start - 1]) {
            start -= 1;
        }
        if start < end && !b[start].is_ascii_digit() {
            let w = &text[start..end];
            if !out.iter().any(|x| &**x == w) {
                out.push(w.into());
            }
        }
    }
    out
}

/// For each function, a hash of the texts of the same-file functions it
/// calls, directly or through them (0 when none).
fn callee_hashes(names: &[Option<&str>], calls: &[Arc<[Box<str>]>], hashes: &[u64]) -> Vec<u64> {
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, n) in names.iter().enumerate() {
        if let Some(n) = n {
            by_name.entry(n).or_default().push(i);
        }
    }
    (0..names.len())
        .map(|i| {
            let mut seen: Vec<usize> = Vec::new();
            let mut queue: Vec<usize> = vec![i];
            while let Some(k) = queue.pop() {
                for c in calls[k].iter() {
                    for &j in by_name.get(&**c).map(|v| v.as_slice()).unwrap_or(&[]) {
                        if j != i
                            && !seen.contains(&j)
                            && seen.len() < 4 * crate::frontend::callees::MAX_CALLEES
                        {
                            seen.push(j);
                            queue.push(j);
                        }
                    }
                }
            }
            if seen.is_empty() {
                return 0;
            }
            seen.sort_unstable();
            let bytes: Vec<u8> = seen.iter().flat_map(|&j| hashes[j].to_le_bytes()).collect();
            hash_of(&[&bytes])
        })
        .collect()
}

/// The tree-sitter edit for `e`, a change of the parser input between the
/// texts `old` and `new` (whose line ends it shares).
fn input_edit(e: TextEdit, old: &SourceText, new: &SourceText) -> InputEdit {
    InputEdit {
        start_byte: e.start,
        old_end_byte: e.old_end,
        new_end_byte: e.new_end,
        start_position: old.point(e.start),
        old_end_position: old.point(e.old_end),
        new_end_position: new.point(e.new_end),
    }
}

/// Whether `d` refers to a position outside `[start, end]` (a span, a
/// line reference or a fix edit).
fn points_outside(d: &Diagnostic, start: u32, end: u32) -> bool {
    d.positions().any(|p| p < start || p > end)
}

/// Whether `frontend::lower_recovering` would cut a unit with a syntax
/// error spanning `start..end` into chunks (the parser input is the
/// original text here: C and free-form Fortran).
fn recovery_cut_inside(text: &str, start: usize, end: usize, unit_end: fn(&str) -> bool) -> bool {
    let cuts =
        crate::frontend::recovery_cuts(text, &crate::frontend::Identity, unit_end, &[(start, end)]);
    !cuts.is_empty()
}

/// `n.kind()` of a C node (from the front end's table by symbol id).
fn c_kind(n: Node<'_>) -> &'static str {
    use crate::frontend::fields::CFields;
    n.node_kind()
}

/// The top level of a C tree.
struct TopLevel<'t> {
    functions: Vec<Node<'t>>,
    /// (byte range, number of context items before it) of context items.
    context: Vec<(usize, usize)>,
    /// For each function, how many context items precede it.
    before: Vec<usize>,
    /// A syntax error the chunked recovery would act on.
    needs_recovery: bool,
    /// Blocks (`compound_statement`) right under the root: the body of an
    /// old-style definition tree-sitter-c did not read as one.
    blocks: usize,
}

fn top_level<'t>(
    root: Node<'t>,
    text: &str,
    facts: &mut dyn FnMut(Node<'t>) -> FnFacts,
) -> TopLevel<'t> {
    let mut t = TopLevel {
        functions: Vec::new(),
        context: Vec::new(),
        before: Vec::new(),
        needs_recovery: false,
        blocks: 0,
    };
    if c_kind(root) != "translation_unit" {
        t.needs_recovery = root.is_error() || root.is_missing() || root.has_error();
        t.context.push((root.start_byte(), root.end_byte()));
        return t;
    }
    // Pre-order, in document order, through one cursor (no recursion).
    let mut cursor = root.walk();
    if !cursor.goto_first_child() {
        return t;
    }
    loop {
        let n = cursor.node();
        let mut descend = false;
        match c_kind(n) {
            "function_definition" => {
                let range = n.byte_range();
                let f = facts(n);
                if f.defining {
                    // Its body adds file-wide facts: all of it is context.
                    t.context.push((range.start, range.end));
                } else {
                    t.context
                        .push((range.start, range.start + f.signature as usize));
                }
                if n.has_error()
                    && recovery_cut_inside(
                        text,
                        range.start,
                        range.end,
                        crate::frontend::c_unit_end,
                    )
                {
                    t.needs_recovery = true;
                }
                t.before.push(t.context.len());
                t.functions.push(n);
            }
            "linkage_specification" | "declaration_list" => descend = true,
            "comment" => {}
            kind => {
                if kind == "compound_statement" && cursor.depth() == 1 {
                    t.blocks += 1;
                }
                if n.is_error() || n.is_missing() || n.has_error() {
                    t.needs_recovery = true;
                }
                t.context.push((n.start_byte(), n.end_byte()));
            }
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        // The next node: a sibling of this one or of an ancestor (the
        // cursor cannot leave `root`).
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return t;
            }
        }
    }
}

/// Above this many units to lower, the whole file is lowered at once.
const BATCH_MISSES: usize = 4;

/// A top-level unit (C function definition, Fortran program unit) and its
/// cache key.
struct UnitKey {
    start: u32,
    end: u32,
    key: u64,
}

/// A text ready to parse: its line index, its preprocessing, and the
/// previous update's text with the change of the parser input since.
struct Prepared {
    source: SourceText,
    pre: Preprocessed,
    old: Option<SourceText>,
    /// `None`: the parser input is unchanged (or there is no previous).
    change: Option<TextEdit>,
}

/// How the parser input changed since the input of the kept tree.
enum InputChange {
    /// No tree to reuse.
    Fresh,
    Same,
    Edit(InputEdit),
}

/// The units' results put together.
struct Assembled {
    diagnostics: Vec<Diagnostic>,
    functions: Vec<Arc<FunctionAnalysis>>,
    shifts: Vec<i64>,
}

/// What [`Incremental`] remembers of each C function between updates: its
/// byte range in the parser input, the hash of its text there and whether
/// its body defines file-wide facts.
#[derive(Clone, Copy)]
struct FnFacts {
    start: u32,
    end: u32,
    hash: u64,
    defining: bool,
    /// Length of its signature (its text before the body).
    signature: u32,
    /// Where the name it defines is (offset from its start, length).
    name: Option<(u32, u32)>,
}

/// Preprocessor directives of the original text (as the preprocessor reads
/// them, continuation lines included). They decide which code is guarded
/// by `#ifdef __CSA__` (CSA401) but conditional ones are blanked in the
/// parser input, so a unit's key holds them all and how many precede it.
struct Directives {
    starts: Vec<usize>,
    hash: u64,
}

impl Directives {
    fn of(text: &str, pre: &Preprocessed) -> Directives {
        let bytes = text.as_bytes();
        let lines: Vec<&[u8]> = pre
            .directives()
            .iter()
            .map(|&(s, e)| bytes.get(s..e).unwrap_or(&[]))
            .collect();
        Directives {
            starts: pre.directives().iter().map(|d| d.0).collect(),
            hash: hash_of(&lines),
        }
    }

    fn before(&self, offset: usize) -> usize {
        self.starts.partition_point(|&d| d < offset)
    }
}

impl std::fmt::Debug for Incremental {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Incremental")
            .field("kind", &self.kind)
            .field("cached_functions", &self.cache.len())
            .field("stats", &self.stats)
            .finish()
    }
}

impl Incremental {
    pub fn new(kind: SourceKind, opts: AnalysisOptions) -> Incremental {
        // a C file's header macros read once, as `analysis::lower` reads
        // them for each analysis
        let opts = analysis::header_macros(kind, &opts).unwrap_or(opts);
        Incremental {
            kind,
            opts,
            parser: None,
            tree: None,
            prev: None,
            fn_facts: Vec::new(),
            prev_norm: None,
            signatures: Default::default(),
            cache: HashMap::new(),
            defines: HashMap::new(),
            calls: HashMap::new(),
            generation: 0,
            stats: Stats::default(),
            cancel: analysis::Cancel::new(),
            cancelled: false,
        }
    }

    /// The language it analyses.
    pub fn kind(&self) -> SourceKind {
        self.kind
    }

    /// What the last update did.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    fn full(&mut self, text: &str) -> Analysis {
        self.tree = None;
        self.prev = None;
        self.fn_facts.clear();
        self.prev_norm = None;
        self.signatures.0.clear();
        self.cache.clear();
        let fa = match analysis::analyze_cancellable(self.kind, text, &self.opts, &self.cancel) {
            Ok(fa) => fa,
            Err(analysis::Cancelled) => {
                self.cancelled = true;
                return analysis::empty(self.kind);
            }
        };
        self.stats = Stats {
            reused: 0,
            analysed: fa.functions.len(),
            full: true,
        };
        fa
    }

    /// Reuses or computes the results of every unit and assembles the
    /// file's analysis. `lower` lowers the functions of one unit. `None`:
    /// the whole file must be analysed (a function the front end gave up
    /// on, which the chunked recovery would re-parse).
    fn assemble(
        &mut self,
        source: &SourceText,
        pre: &Preprocessed,
        units: &[UnitKey],
        positions: u64,
        lang: Lang,
        lower: &mut dyn FnMut(Option<Span>) -> Vec<crate::ir::Function>,
    ) -> Option<Assembled> {
        let generation = self.generation;
        let mopts = MemoryOptions {
            pure_functions: self.opts.pure_functions.clone(),
        };
        let mut diagnostics = Vec::new();
        let mut functions = Vec::with_capacity(units.len());
        let mut shifts = Vec::with_capacity(units.len());
        let mut stats = Stats::default();
        // Many misses (opening a file, a context change): lower the whole
        // file once rather than each unit with its own file-wide scan.
        let misses = units
            .iter()
            .filter(|u| {
                self.cache
                    .get(&u.key)
                    .is_none_or(|e| e.outside && !(e.start == u.start && e.positions == positions))
            })
            .count();
        // In source order, like the units: taken from the front as the
        // units are visited.
        let mut lowered_all: Option<std::collections::VecDeque<crate::ir::Function>> =
            (misses > BATCH_MISSES).then(|| {
                let mut all = lower(None);
                all.sort_by_key(|f| f.span.start);
                all.into()
            });
        for u in units {
            let (start, end) = (u.start, u.end);
            if let Some(e) = self.cache.get_mut(&u.key) {
                let still = !e.outside || (e.start == start && e.positions == positions);
                if still && e.used != generation {
                    e.used = generation;
                    let delta = start as i64 - e.start as i64;
                    diagnostics.extend(e.diagnostics.iter().map(|d| {
                        let mut d = d.clone();
                        d.shift(delta);
                        d
                    }));
                    // The analyses keep the positions they were computed at.
                    for a in &e.analyses {
                        shifts.push(delta);
                        functions.push(a.clone());
                    }
                    stats.reused += 1;
                    continue;
                }
            }
            if self.cancel.is_cancelled() {
                // What is in the cache stays valid (entries are keyed by
                // content); `update_cancellable` forgets the rest.
                self.cancelled = true;
                return Some(Assembled {
                    diagnostics: Vec::new(),
                    functions: Vec::new(),
                    shifts: Vec::new(),
                });
            }
            let span = Span::new(start as usize, end as usize);
            // A unit holds the functions that start in it. Units can touch
            // (a node may end with the newline the next one follows), and
            // a function at the end of one is the next unit's (a unit
            // outside the span that others call is lowered too).
            let owns = |f: u32| f == start || (start <= f && f < end);
            let mut analyses = Vec::new();
            let mut own = Vec::new();
            let funcs = match &mut lowered_all {
                Some(all) => {
                    while all.front().is_some_and(|f| f.span.start < start) {
                        all.pop_front();
                    }
                    let mut inside = Vec::new();
                    while all.front().is_some_and(|f| owns(f.span.start)) {
                        inside.extend(all.pop_front());
                    }
                    inside
                }
                None => lower(Some(span)),
            };
            for func in funcs {
                if !owns(func.span.start) {
                    continue;
                }
                // A function the front end gave up on (too deep) counts as a
                // syntax error for the chunked recovery too.
                let unit_end = match lang {
                    Lang::C => crate::frontend::c_unit_end,
                    Lang::Fortran => crate::frontend::fortran_unit_end,
                };
                // (Fixed form: the recovery works on the normalised text;
                // analyse the whole file.)
                if func.syntax_error.is_some()
                    && (self.kind == SourceKind::FortranFixed
                        || recovery_cut_inside(&pre.text, start as usize, end as usize, unit_end))
                {
                    return None;
                }
                let fa = analysis::analyze_function(func, &mopts, source.text());
                analysis::function_diagnostics(&fa, self.kind, source, pre, &self.opts, &mut own);
                analyses.push(Arc::new(fa));
            }
            {
                let funcs: Vec<&crate::ir::Function> = analyses.iter().map(|a| &a.func).collect();
                analysis::file_diagnostics(lang, source, pre, &self.opts, &funcs, &[], false, &mut own);
            }
            let outside = own.iter().any(|d| points_outside(d, start, end));
            diagnostics.extend(own.iter().cloned());
            for a in &analyses {
                functions.push(a.clone());
                shifts.push(0);
            }
            stats.analysed += 1;
            self.cache.insert(
                u.key,
                Entry {
                    start,
                    positions,
                    outside,
                    diagnostics: own,
                    analyses,
                    used: generation,
                },
            );
        }
        // Forget units that are gone.
        self.cache.retain(|_, e| e.used == generation);
        self.stats = stats;
        let diagnostics = analysis::finish_diagnostics(diagnostics, source, lang);
        Some(Assembled {
            diagnostics,
            functions,
            shifts,
        })
    }

    /// The file's analysis from what `assemble` gave; remembers the text,
    /// its preprocessing and the tree for the next update.
    fn finish(
        &mut self,
        source: SourceText,
        pre: Preprocessed,
        tree: Tree,
        lang: Lang,
        a: Assembled,
    ) -> Analysis {
        self.tree = Some(tree);
        self.prev = Some((source.clone(), pre.clone()));
        Analysis {
            kind: self.kind,
            lang,
            source,
            preprocessed: pre,
            functions: a.functions,
            function_shifts: a.shifts,
            toplevel_errors: Vec::new(),
            diagnostics: a.diagnostics,
        }
    }

    /// The text's line index and preprocessing, from the previous update's
    /// where there is one.
    fn prepare(&mut self, text: String, fortran: bool) -> Prepared {
        let defines = &self.opts.defines;
        match self.prev.take() {
            Some((old, old_pre)) => match TextEdit::between(old.text(), &text) {
                None => Prepared {
                    source: old.clone(),
                    pre: old_pre,
                    old: Some(old),
                    change: None,
                },
                Some(e) => {
                    let source = old.edited(text, e);
                    let (pre, change) = csa_grammars::preproc::preprocess_edit(
                        old_pre,
                        old.text(),
                        source.text(),
                        e,
                        defines,
                        fortran,
                    );
                    Prepared {
                        source,
                        pre,
                        old: Some(old),
                        change,
                    }
                }
            },
            None => {
                let pre = csa_grammars::preproc::preprocess(&text, defines, fortran);
                Prepared {
                    source: SourceText::new(text),
                    pre,
                    old: None,
                    change: None,
                }
            }
        }
    }

    /// The parser for this document's language, and the tree for the
    /// parser input `p.pre.text` (the old tree edited and re-parsed; afresh
    /// when that has an error).
    fn parse(&mut self, p: &Prepared, grammar: csa_grammars::Grammar) -> Option<Tree> {
        let change = match (&self.tree, &p.old, p.change) {
            (Some(_), Some(_), None) => InputChange::Same,
            (Some(_), Some(old), Some(e)) => InputChange::Edit(input_edit(e, old, &p.source)),
            _ => InputChange::Fresh,
        };
        self.parse_input(&p.pre.text, change, grammar)
    }

    /// The tree for `input`, given how it changed since the input of
    /// `self.tree`.
    fn parse_input(
        &mut self,
        input: &str,
        change: InputChange,
        grammar: csa_grammars::Grammar,
    ) -> Option<Tree> {
        if self.parser.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&grammar.language()).ok()?;
            self.parser = Some(parser);
        }
        let old = match (self.tree.take(), change) {
            // The same input: the same tree.
            (Some(tree), InputChange::Same) => return Some(tree),
            (Some(mut tree), InputChange::Edit(e)) => {
                tree.edit(&e);
                Some(tree)
            }
            _ => None,
        };
        let parser = self.parser.as_mut()?;
        let mut tree = csa_grammars::parse_code(parser, grammar, input, old.as_ref())?;
        // Error recovery after an incremental parse can differ from a fresh
        // parse; the command line parses fresh, so do the same.
        if old.is_some() && tree.root_node().has_error() {
            tree = csa_grammars::parse_code(parser, grammar, input, None)?;
        }
        Some(tree)
    }

    /// Free-form Fortran: the units are the top-level program units
    /// (programs, modules with their procedures, external subprograms).
    /// Their context is every module (any unit may `use` one) and every
    /// other top-level item; a file with a syntax error is analysed whole
    /// (the front end then re-parses unit by unit).
    ///
    /// Fixed form is normalised to free form first (the whole text, each
    /// update), and the normalised text is parsed incrementally. Units and
    /// context are taken from its tree; a unit's key holds its normalised
    /// and its original text (normalisation drops columns 73+, so equal
    /// normalised text can come from different original text), and unit
    /// positions are mapped back to the original.
    fn update_fortran(&mut self, text: String, fixed: bool) -> Analysis {
        let p = self.prepare(text, true);
        if crate::frontend::fortran::is_include_fragment(&p.pre.text) {
            // parsed with an `end` after it (`analysis::lower`)
            return self.full_of(p);
        }
        let norm = fixed.then(|| csa_grammars::fixed_form::normalize(&p.pre.text));
        let parser_input = norm
            .as_ref()
            .map_or(p.pre.text.as_str(), |n| n.text.as_str());
        if crate::frontend::fortran::repair_for_parser(parser_input).is_some()
            || (!fixed && !crate::frontend::fortran::overlong_lines(parser_input).is_empty())
        {
            // parsed masked (`frontend::fortran::lower`) or with long lines
            // blanked (`analysis::lower`): not incrementally
            return self.full_of(p);
        }
        let tree = match &norm {
            None => self.parse(&p, csa_grammars::Grammar::Fortran),
            Some(n) => {
                let input = SourceText::new(n.text.clone());
                let change = match (&self.tree, self.prev_norm.take()) {
                    (Some(_), Some(old)) => match TextEdit::between(old.text(), input.text()) {
                        None => InputChange::Same,
                        Some(e) => InputChange::Edit(input_edit(e, &old, &input)),
                    },
                    _ => InputChange::Fresh,
                };
                let tree = self.parse_input(input.text(), change, csa_grammars::Grammar::Fortran);
                self.prev_norm = Some(input);
                tree
            }
        };
        let Some(tree) = tree else {
            return self.full_of(p);
        };
        // (cpp macros the code uses are expanded before a whole-file
        // parse; a file whose `#include`s and `#define`s change nothing in
        // its code stays incremental)
        if tree.root_node().has_error()
            || crate::frontend::fortran::cpp::expand(
                &p.pre.text,
                &self.macros(&p.source, &p.pre),
                fixed,
            )
            .is_some()
        {
            return self.full_of(p);
        }
        let Prepared { source, pre, .. } = p;
        let identity = crate::frontend::Identity;
        let map: &dyn crate::frontend::PosMap = match &norm {
            Some(n) => n,
            None => &identity,
        };
        let parsed: &str = norm.as_ref().map_or(pre.text.as_str(), |n| n.text.as_str());
        // Original offsets of the parser input's.
        let original = |o: usize| norm.as_ref().map_or(o, |n| n.original_offset(o));
        let (keys, positions) = {
            let bytes = parsed.as_bytes();
            let source_bytes = source.text().as_bytes();
            let root = tree.root_node();
            let mut units = Vec::new();
            let mut context: Vec<&[u8]> = Vec::new();
            let mut context_starts: Vec<u8> = Vec::new();
            let mut c = root.walk();
            for n in root.children(&mut c) {
                let kind = n.kind();
                let piece = bytes.get(n.byte_range()).unwrap_or(&[]);
                match kind {
                    "comment" => continue,
                    "program" | "subroutine" | "function" => units.push(n),
                    "module" | "submodule" => {
                        units.push(n);
                        context.push(piece);
                        context_starts.extend((original(n.start_byte()) as u64).to_le_bytes());
                    }
                    _ => {
                        context.push(piece);
                        context_starts.extend((original(n.start_byte()) as u64).to_le_bytes());
                    }
                }
            }
            let context_hash = hash_of(&context);
            let positions = hash_of(&[&context_starts]);
            let directives = Directives::of(source.text(), &pre);
            // The texts of the units others call (their effects go into the
            // callers' dependence analysis, `frontend::callees`): in every
            // unit's key. (Modules are context already.)
            let calls = crate::frontend::relevance::FortranCalls::scan(parsed);
            let called: Vec<&[u8]> = units
                .iter()
                .filter(|n| !matches!(n.kind(), "module" | "submodule"))
                .filter(|n| {
                    let (s, e) = (n.start_byte(), n.end_byte());
                    parsed
                        .get(s..e)
                        .and_then(crate::frontend::relevance::FortranCalls::unit_name)
                        .is_some_and(|name| calls.called_outside(&name, s, e))
                })
                .map(|n| bytes.get(n.byte_range()).unwrap_or(&[]))
                .collect();
            let callee_hash = hash_of(&called);
            let keys: Vec<UnitKey> = units
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let (start, end) = (original(n.start_byte()), original(n.end_byte()));
                    UnitKey {
                        start: start as u32,
                        end: end as u32,
                        key: hash_of(&[
                            &context_hash.to_le_bytes(),
                            &directives.hash.to_le_bytes(),
                            &(directives.before(start) as u64).to_le_bytes(),
                            &(i as u64).to_le_bytes(),
                            &callee_hash.to_le_bytes(),
                            bytes.get(n.byte_range()).unwrap_or(&[]),
                            // Fixed form: the original text too.
                            if norm.is_some() {
                                source_bytes.get(start..end).unwrap_or(&[])
                            } else {
                                &[]
                            },
                        ]),
                    }
                })
                .collect();
            (keys, positions)
        };
        let fopts = self.opts.frontend();
        // `assemble` speaks original offsets; the front end's `only` is in
        // the parser input's.
        let mut lower = |span: Option<Span>| {
            let span = span.map(|s| match &norm {
                Some(n) => Span::new(
                    n.normalized_offset(s.start as usize),
                    n.normalized_offset(s.end as usize),
                ),
                None => s,
            });
            crate::frontend::fortran::lower_tree(parsed, tree.clone(), map, span, &fopts).functions
        };
        match self.assemble(&source, &pre, &keys, positions, Lang::Fortran, &mut lower) {
            Some(a) => self.finish(source, pre, tree, Lang::Fortran, a),
            None => self.full(source.text()),
        }
    }

    /// Where the cpp expansion of `source` (preprocessed: `pre`) finds its
    /// macros: this analyser's options.
    fn macros<'a>(
        &'a self,
        source: &'a SourceText,
        pre: &'a Preprocessed,
    ) -> crate::frontend::fortran::cpp::Macros<'a> {
        crate::frontend::fortran::cpp::Macros {
            source: source.text(),
            pre,
            headers: &self.opts.headers,
            prelude: &self.opts.prelude,
            defines: &self.opts.defines,
        }
    }

    /// The whole-file analysis of a prepared text.
    fn full_of(&mut self, p: Prepared) -> Analysis {
        self.full(p.source.text())
    }

    /// Analyses the new text of the document, reusing what it can.
    pub fn update(&mut self, text: &str) -> Analysis {
        self.update_owned(text.to_string())
    }

    /// [`Incremental::update_owned`] that stops inside a parse or between
    /// functions once `cancel` is set. A stopped update leaves the analyser consistent:
    /// stopped in the whole-file analysis, it has forgotten everything;
    /// stopped while assembling units, it keeps the stopped text's tree and
    /// the units analysed so far (cache entries are keyed by content, and
    /// units not reached are simply missing), so the next update reuses
    /// them.
    pub fn update_cancellable(
        &mut self,
        text: String,
        cancel: &analysis::Cancel,
    ) -> Result<Analysis, analysis::Cancelled> {
        self.cancel = cancel.clone();
        self.cancelled = false;
        // A parse stopped by `cancel` falls back to the whole-file
        // analysis, which sees `cancel` and forgets everything.
        let fa = cancel.watching(|| self.update_owned(text));
        self.cancel = analysis::Cancel::new();
        if std::mem::take(&mut self.cancelled) {
            return Err(analysis::Cancelled);
        }
        Ok(fa)
    }

    /// [`Incremental::update`] taking the text (saves a copy of it).
    pub fn update_owned(&mut self, text: String) -> Analysis {
        self.generation += 1;
        match self.kind {
            SourceKind::C => self.update_c(text),
            SourceKind::FortranFree => self.update_fortran(text, false),
            SourceKind::FortranFixed => self.update_fortran(text, true),
        }
    }

    fn update_c(&mut self, text: String) -> Analysis {
        let p = self.prepare(text, false);
        let Some(tree) = self.parse(&p, csa_grammars::Grammar::C) else {
            return self.full_of(p);
        };
        // Each function's hash and defining flag: the previous update's
        // when its text lies outside the change (so it is the same text).
        let prev_facts = std::mem::take(&mut self.fn_facts);
        let have_prev = p.old.is_some();
        let change = p.change;
        let Prepared { source, pre, .. } = p;
        let generation = self.generation;
        let defines_map = &mut self.defines;
        let pre_text = pre.text.as_str();
        let mut facts = Vec::with_capacity(prev_facts.len());
        let mut function_facts = |n: Node<'_>| {
            let (s, e) = (n.start_byte(), n.end_byte());
            let old_range = match change {
                _ if !have_prev => None,
                None => Some((s, e)),
                Some(c) if e <= c.start => Some((s, e)),
                Some(c) if s >= c.new_end => Some((
                    (s as isize - c.delta()) as usize,
                    (e as isize - c.delta()) as usize,
                )),
                Some(_) => None,
            };
            let known = old_range.and_then(|(os, oe)| {
                let i = prev_facts.partition_point(|f| (f.start as usize) < os);
                prev_facts
                    .get(i)
                    .filter(|f| f.start as usize == os && f.end as usize == oe)
            });
            let f = match known {
                Some(&f) => FnFacts {
                    start: s as u32,
                    end: e as u32,
                    ..f
                },
                None => {
                    let h = hash_of(&[pre_text.as_bytes().get(s..e).unwrap_or(&[])]);
                    let entry = defines_map.entry(h).or_insert_with(|| {
                        (crate::frontend::c::body_defines_file_facts(pre_text, n), 0)
                    });
                    entry.1 = generation;
                    // The body is the last child (cheaper than a field
                    // lookup).
                    let body = n
                        .child(n.child_count().saturating_sub(1))
                        .filter(|b| c_kind(*b) == "compound_statement");
                    let name = crate::frontend::c::defined_name_range(n)
                        .and_then(|r| Some((u32::try_from(r.start.checked_sub(s)?).ok()?, u32::try_from(r.len()).ok()?)));
                    FnFacts {
                        start: s as u32,
                        end: e as u32,
                        hash: h,
                        defining: entry.0,
                        signature: (body.map_or(e, |b| b.start_byte()) - s) as u32,
                        name,
                    }
                }
            };
            facts.push(f);
            f
        };
        let top = top_level(tree.root_node(), &pre.text, &mut function_facts);
        // each function's text hash, in the order of `top.functions`
        let hashes: Vec<u64> = facts.iter().map(|f| f.hash).collect();
        // Keep the flags of the texts seen in this update and the last.
        self.defines.retain(|_, e| e.1 + 1 >= generation);
        // the same-file callees of each function (their texts go into its key)
        let callee_hashes = {
            let calls_map = &mut self.calls;
            let calls: Vec<Arc<[Box<str>]>> = top
                .functions
                .iter()
                .zip(&hashes)
                .map(|(n, h)| {
                    let e = calls_map.entry(*h).or_insert_with(|| {
                        let t = pre_text.get(n.byte_range()).unwrap_or("");
                        (called_names(t).into(), 0)
                    });
                    e.1 = generation;
                    e.0.clone()
                })
                .collect();
            calls_map.retain(|_, e| e.1 + 1 >= generation);
            let names: Vec<Option<&str>> = facts
                .iter()
                .map(|f| {
                    let (at, len) = f.name?;
                    let start = f.start as usize + at as usize;
                    pre_text.get(start..start + len as usize)
                })
                .collect();
            callee_hashes(&names, &calls, &hashes)
        };
        // A misread text (as `frontend::c::misreadings` counts: a syntax
        // error, or a block at the top level) that a repair may read
        // better is analysed whole: a repaired text is parsed again, its
        // positions those of a different text (`frontend::c::repair`).
        let misread = tree.root_node().has_error() || top.blocks > 0;
        // A syntax error with a branch taken because its condition is
        // unknown: the whole-file analysis may read those conditions as a
        // compiler given no `-D` would (`analysis::lower`), and keep that
        // reading. So is this one.
        let unknown_branch = || {
            pre.conditionals
                .iter()
                .flat_map(|c| &c.branches)
                .any(|b| b.unknown && b.active)
        };
        // A syntax error with function-like macros the file can use: the
        // whole-file analysis reads it again with them expanded
        // (`analysis::lower`), and may keep that reading.
        let expandable = || {
            crate::frontend::fortran::cpp::expand_c(pre_text, &self.macros(&source, &pre)).is_some()
        };
        if top.needs_recovery
            || (misread && crate::frontend::c::may_need_repair(pre_text))
            || (tree.root_node().has_error() && (unknown_branch() || expandable()))
        {
            self.fn_facts = facts;
            return self.full(source.text());
        }
        self.fn_facts = facts;
        let bytes = pre.text.as_bytes();
        let context: Vec<&[u8]> = top
            .context
            .iter()
            .map(|&(s, e)| bytes.get(s..e).unwrap_or(&[]))
            .collect();
        let context_hash = hash_of(&context);
        let directives = Directives::of(source.text(), &pre);
        let starts: Vec<u8> = top
            .context
            .iter()
            .flat_map(|&(s, _)| (s as u64).to_le_bytes())
            .collect();
        let positions = hash_of(&[&starts]);

        // Bodies the front end need not scan: those that define nothing
        // file-wide (the function being lowered is scanned regardless, as
        // it is lowered).
        let skip: Vec<(Span, u64)> = self
            .fn_facts
            .iter()
            .filter(|f| !f.defining)
            .map(|f| (Span::new(f.start as usize, f.end as usize), f.hash))
            .collect();
        let units: Vec<UnitKey> = top
            .functions
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let start = n.start_byte();
                let directives_before = directives.before(start);
                UnitKey {
                    start: start as u32,
                    end: n.end_byte() as u32,
                    key: hash_of(&[
                        &context_hash.to_le_bytes(),
                        &directives.hash.to_le_bytes(),
                        &(directives_before as u64).to_le_bytes(),
                        &(top.before[i] as u64).to_le_bytes(),
                        &hashes[i].to_le_bytes(),
                        &callee_hashes[i].to_le_bytes(),
                    ]),
                }
            })
            .collect();
        let fopts = self.opts.frontend();
        // Signature facts hold while the file context and the directives do.
        let signatures_context =
            hash_of(&[&context_hash.to_le_bytes(), &directives.hash.to_le_bytes()]);
        let (mut signatures, known) = std::mem::take(&mut self.signatures);
        if known != signatures_context {
            signatures.clear();
        }
        let mut lower = |span: Option<Span>| {
            crate::frontend::c::lower_tree_cached(
                &pre.text,
                &tree,
                span,
                &skip,
                &fopts,
                &mut signatures,
            )
            .functions
        };
        let assembled = self.assemble(&source, &pre, &units, positions, Lang::C, &mut lower);
        self.signatures = (signatures, signatures_context);
        drop(top);
        match assembled {
            Some(a) => self.finish(source, pre, tree, Lang::C, a),
            None => self.full(source.text()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;

    fn fixtures() -> Vec<(String, String)> {
        fixtures_in("c", "c")
    }

    fn fixtures_in(dir: &str, ext: &str) -> Vec<(String, String)> {
        fixtures_where(dir, |p| p.extension().is_some_and(|x| x == ext))
    }

    /// `(file name, text)` of the fixtures in `tests/fixtures/DIR` that
    /// `keep` accepts, sorted.
    fn fixtures_where(dir: &str, keep: impl Fn(&std::path::Path) -> bool) -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures")
            .join(dir);
        let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| keep(p))
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned(),
                )
            })
            .collect();
        out.sort();
        out
    }

    /// Updates `inc` to `current`, checks that the result equals the full
    /// analysis (diagnostics, functions, preprocessing, text and line
    /// index) and returns how many results were reused.
    /// A `diag::LineRef` formatted into text that is not a message (a fix
    /// title, an edit) would show its placeholder characters.
    fn no_placeholders(ds: &[Diagnostic]) {
        let bad = |t: &str| t.contains(['\u{FDD0}', '\u{FDD1}']);
        for d in ds {
            let texts = std::iter::once(&d.message)
                .chain(d.related.iter().map(|r| &r.message))
                .chain(d.help.iter())
                .flat_map(|m| m.parts())
                .filter_map(|p| match p {
                    crate::diag::Part::Text(t) => Some(t),
                    crate::diag::Part::Line(_) => None,
                })
                .chain(d.fixes.iter().map(|f| f.title.as_str()))
                .chain(
                    d.fixes
                        .iter()
                        .flat_map(|f| &f.edits)
                        .map(|e| e.new_text.as_str()),
                );
            for t in texts {
                assert!(!bad(t), "{} at {:?}: placeholder in `{t}`", d.code, d.span);
            }
        }
    }

    fn check_update(
        inc: &mut Incremental,
        kind: SourceKind,
        opts: &AnalysisOptions,
        current: &str,
        what: &str,
    ) -> usize {
        let got = inc.update(current);
        let want = analyze(kind, current, opts);
        no_placeholders(&want.diagnostics);
        if got.diagnostics != want.diagnostics {
            let brief = |ds: &[Diagnostic]| {
                ds.iter()
                    .map(|d| format!("{} {:?} {}", d.code, d.span, d.message.render_with(|o| o)))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let fresh = Incremental::new(kind, opts.clone()).update(current);
            let _ = std::fs::write(
                std::env::temp_dir().join("csa-incremental-failure.txt"),
                current,
            );
            panic!(
                "{what} (fresh incremental equal: {}, stats {:?}):\n--- incremental\n{}\n--- full\n{}\n--- text\n{current}",
                fresh.diagnostics == want.diagnostics,
                inc.stats(),
                brief(&got.diagnostics),
                brief(&want.diagnostics)
            );
        }
        assert_eq!(got.functions.len(), want.functions.len(), "{what}");
        assert!(got.preprocessed == want.preprocessed, "{what}");
        assert_eq!(got.source.text(), want.source.text(), "{what}");
        let lines = got.source.line_count();
        assert_eq!(lines, want.source.line_count(), "{what}");
        assert!(
            (0..lines).all(|l| got.source.line_start(l) == want.source.line_start(l)),
            "{what}"
        );
        inc.stats().reused
    }

    /// Options from the fixture's `//@` headers.
    fn options(text: &str) -> AnalysisOptions {
        let mut o = AnalysisOptions::default();
        for line in text.lines() {
            let mut w = line
                .trim()
                .strip_prefix("//@")
                .unwrap_or("")
                .split_whitespace();
            match (w.next(), w.next()) {
                (Some("define"), Some(n)) => o.defines.push(n.to_string()),
                (Some("pure"), Some(n)) => o.pure_functions.push(n.to_string()),
                (Some("disable-loop-storage-check"), None) => o.disable_loop_storage_check = true,
                _ => {}
            }
        }
        o
    }

    /// A small deterministic generator.
    struct Rng(u64);
    impl Rng {
        /// The generator of one fixture's edits: from the test's seed and
        /// the fixture's name, so that adding a fixture leaves every other
        /// fixture's edits as they were.
        fn for_fixture(seed: u64, name: &str) -> Rng {
            let h = name
                .bytes()
                .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                });
            // (xorshift must not start at zero)
            Rng((seed ^ h) | 1)
        }
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    fn edit(text: &str, rng: &mut Rng) -> String {
        edit_with(text, rng, "  /* typed */\n", "int g_added;\n")
    }

    fn edit_with(text: &str, rng: &mut Rng, comment: &str, decl: &str) -> String {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        if lines.is_empty() {
            return "int x;\n".to_string();
        }
        let i = rng.below(lines.len());
        let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        match rng.below(6) {
            0 => out.insert(i, "\n".to_string()),
            1 => out.insert(i, comment.to_string()),
            2 => {
                out.remove(i);
            }
            3 => {
                let l = out[i].clone();
                out.insert(i, l);
            }
            4 => out.insert(i, decl.to_string()),
            _ => {
                // Move a line elsewhere.
                let l = out.remove(i);
                let j = rng.below(out.len() + 1);
                out.insert(j, l);
            }
        }
        out.concat()
    }

    #[test]
    fn incremental_equals_full_analysis_over_edits() {
        let mut reused = 0;
        for (name, text) in fixtures() {
            let mut rng = Rng::for_fixture(0x2545_f491_4f6c_dd1d, &name);
            let opts = options(&text);
            let mut inc = Incremental::new(SourceKind::C, opts.clone());
            let mut current = text.clone();
            for step in 0..30 {
                reused += check_update(
                    &mut inc,
                    SourceKind::C,
                    &opts,
                    &current,
                    &format!("{name}, step {step}"),
                );
                current = edit(&current, &mut rng);
            }
        }
        assert!(reused > 100, "results were reused {reused} times");
    }

    #[test]
    fn a_syntax_error_with_an_unknown_branch_is_read_as_the_full_analysis_reads_it() {
        // The first reading (`NOT_DEFINED_HERE` unknown: its first branch)
        // leaves `pick` without its `}`; the whole-file analysis reads the
        // name as undefined, as a compiler given no `-D` would, and that
        // reading parses. The incremental analyser read the first.
        let text = "#ifdef __CSA__\nvoid pick(int *a, int n) {\n\
                    \x20 __builtin_csa_parallel_loop();\n\
                    \x20 for (int i = 0; i < n; i++) a[i] = 0;\n\
                    #ifdef NOT_DEFINED_HERE\n  __builtin_csa_parallel_loop();\n#else\n\
                    void never_seen(void) {\n}\n}\n#endif\n#endif\n";
        let opts = AnalysisOptions::default();
        let want = analyze(SourceKind::C, text, &opts);
        assert!(want.diagnostics.iter().all(|d| d.code.0 != 1), "{:?}", want.diagnostics);
        let got = Incremental::new(SourceKind::C, opts).update(text);
        assert_eq!(got.diagnostics, want.diagnostics);
    }

    #[test]
    fn a_c_file_s_header_macros_are_read_as_the_full_analysis_reads_them() {
        // (no syntax error: the incremental path analyses it itself)
        let header = "#ifndef CONF_H\n#define CONF_H\n#define WIDTH 3\n#endif\n";
        let text = "#include \"conf.h\"\n\
                    void f(int *a, int n) {\n\
                    #if WIDTH != 3\n\
                    \x20 __builtin_csa_parallel_loop();\n\
                    #endif\n\
                    \x20 for (int i = 0; i < n; i++) { a[i] = a[i + 1]; }\n}\n\
                    void g(int *a, int n) {\n\
                    \x20 __builtin_csa_parallel_loop();\n\
                    \x20 for (int i = 0; i < n; i++) { a[i] = a[i + 1]; }\n}\n";
        let opts = AnalysisOptions {
            headers: crate::frontend::fortran::cpp::Headers(vec![(
                "conf.h".to_string(),
                header.to_string(),
            )]),
            ..Default::default()
        };
        let full = analyze(SourceKind::C, text, &opts);
        let g = text.find("void g").unwrap();
        // the marker in `f` is compiled out: only `g`'s loop is reported
        assert!(!full.diagnostics.is_empty());
        assert!(
            full.diagnostics.iter().all(|d| d.span.start as usize > g),
            "{:?}",
            full.diagnostics
        );
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let mut inc = Incremental::new(SourceKind::C, opts.clone());
        let mut current = text.to_string();
        for step in 0..20 {
            check_update(&mut inc, SourceKind::C, &opts, &current, &format!("step {step}"));
            current = edit(&current, &mut rng);
        }
    }

    #[test]
    fn incremental_equals_full_analysis_over_edits_in_fortran() {
        let mut reused = 0;
        for (name, text) in fixtures_in("fortran", "f90") {
            let mut rng = Rng::for_fixture(0x9e37_79b9_7f4a_7c15, &name);
            let opts = options(&text);
            let mut inc = Incremental::new(SourceKind::FortranFree, opts.clone());
            let mut current = text.clone();
            for step in 0..30 {
                reused += check_update(
                    &mut inc,
                    SourceKind::FortranFree,
                    &opts,
                    &current,
                    &format!("{name}, step {step}"),
                );
                current = edit_with(&current, &mut rng, "  ! typed\n", "  integer :: g_added\n");
            }
        }
        assert!(reused > 50, "results were reused {reused} times");
    }

    #[test]
    fn a_called_unit_right_after_another_is_lowered_once() {
        // `first` ends with the newline `second` starts after, and `run`
        // calls `second`: lowering `first`'s span alone lowers `second`
        // too (for its callers' summaries). It belongs to its own unit.
        let text = "module m\n  integer :: g\nend module\n\n\
                    subroutine first(i)\n  use m\n  g = g + i\n  integer :: i\nend subroutine\n\
                    subroutine second(i)\n  use m\n  integer :: i\n  g = g + i\nend subroutine\n\n\
                    subroutine run(n)\n  integer :: n, i\n!$omp parallel do\n  do i = 1, n\n\
                    \x20   call second(i)\n  end do\nend subroutine\n";
        let opts = AnalysisOptions::default();
        let mut inc = Incremental::new(SourceKind::FortranFree, opts.clone());
        let mut current = text.to_string();
        for step in 0..3 {
            let got = inc.update(&current);
            let want = analyze(SourceKind::FortranFree, &current, &opts);
            let names = |a: &Analysis| {
                a.functions
                    .iter()
                    .map(|f| f.func.name.clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(names(&got), names(&want), "step {step}");
            assert_eq!(got.diagnostics, want.diagnostics, "step {step}");
            // an edit in `second` alone: the other units are reused
            current = current.replacen("  g = g + i\nend", "  g = g + i\n  ! typed\nend", 1);
        }
        assert!(inc.stats().reused > 0, "{:?}", inc.stats());
    }

    /// Every other update is cancelled before it starts (an open, which is
    /// a whole-file analysis, and edits, which go through the per-unit
    /// assembly): each is `Err`, and the updates after it equal the full
    /// analysis.
    #[test]
    fn cancelled_updates_leave_the_analyser_consistent() {
        let cancelled = crate::analysis::Cancel::new();
        cancelled.cancel();
        let cases = fixtures()
            .into_iter()
            .map(|f| (f, SourceKind::C, "  /* typed */\n", "int g_added;\n"))
            .chain(fixtures_in("fortran", "f90").into_iter().map(|f| {
                (
                    f,
                    SourceKind::FortranFree,
                    "  ! typed\n",
                    "  integer :: g_added\n",
                )
            }));
        let mut stopped = 0;
        for ((name, text), kind, comment, decl) in cases {
            let mut rng = Rng::for_fixture(0x51f1_5eed_0bad_cafe, &name);
            let opts = options(&text);
            let mut inc = Incremental::new(kind, opts.clone());
            let mut current = text.clone();
            for step in 0..6 {
                if step % 2 == 0 {
                    let r = inc.update_cancellable(current.clone(), &cancelled);
                    // A file without functions has nothing to stop between.
                    if r.is_err() {
                        stopped += 1;
                    }
                }
                check_update(
                    &mut inc,
                    kind,
                    &opts,
                    &current,
                    &format!("{name}, step {step}"),
                );
                current = edit_with(&current, &mut rng, comment, decl);
            }
        }
        assert!(stopped > 100, "only {stopped} updates were stopped");
    }

    /// Row and byte column by counting, for the test below.
    fn point_at(text: &str, offset: usize) -> tree_sitter::Point {
        let before = &text.as_bytes()[..offset];
        let row = before.iter().filter(|&&b| b == b'\n').count();
        let column = offset
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
        tree_sitter::Point { row, column }
    }

    /// Fixed-form Fortran fixtures (by the extensions `detect` knows).
    fn fixed_form_fixtures() -> Vec<(String, String)> {
        fixtures_where("fortran", |p| {
            csa_grammars::detect(p) == Some(SourceKind::FortranFixed)
        })
    }

    #[test]
    fn incremental_equals_full_analysis_over_edits_in_fixed_form() {
        let mut reused = 0;
        let fixtures = fixed_form_fixtures();
        assert!(
            fixtures.len() >= 4,
            "{} fixed-form fixtures",
            fixtures.len()
        );
        for (name, text) in fixtures {
            let mut rng = Rng::for_fixture(0x853c_49e6_748f_ea9b, &name);
            let opts = options(&text);
            let mut inc = Incremental::new(SourceKind::FortranFixed, opts.clone());
            let mut current = text.clone();
            for step in 0..60 {
                reused += check_update(
                    &mut inc,
                    SourceKind::FortranFixed,
                    &opts,
                    &current,
                    &format!("{name}, step {step}"),
                );
                // Moved and removed lines soon break these small programs
                // (continuation lines, labels) for good: after a whole-file
                // analysis, go on from the fixture again.
                if inc.stats().full && step % 4 == 3 {
                    current = text.clone();
                }
                // Fixed-form lines: a comment line, a declaration in the
                // statement field.
                current = edit_with(&current, &mut rng, "C typed\n", "      INTEGER GADDED\n");
            }
        }
        assert!(reused > 20, "results were reused {reused} times");
    }

    #[test]
    fn fixed_form_with_cpp_macros_is_incremental_unless_the_code_uses_them() {
        let unit = |k: usize| {
            format!(
                "      SUBROUTINE S{k}(A, N)\n      INTEGER N, I\n      RL A(N)\n      DO 10 I = 1, N\n         A(I) = 0.0\n   10 CONTINUE\n      END\n"
            )
        };
        let body: String = (0..10).map(unit).collect();
        let opts = AnalysisOptions::default();
        // a macro is defined but the code reads none: units are reused
        let unused = format!("#define WIDTH 8\n{}", body.replace("RL A(N)", "REAL A(N)"));
        let mut inc = Incremental::new(SourceKind::FortranFixed, opts.clone());
        inc.update(&unused);
        let edited = unused.replacen("A(I) = 0.0", "A(I) = 1.0", 1);
        let got = inc.update(&edited);
        assert!(!inc.stats().full);
        assert_eq!(inc.stats().analysed, 1);
        assert!(got.diagnostics == analyze(SourceKind::FortranFixed, &edited, &opts).diagnostics);
        // a macro the code uses: the whole file, expanded
        let used = format!("#define RL REAL\n{body}");
        let mut inc = Incremental::new(SourceKind::FortranFixed, opts.clone());
        inc.update(&used);
        let edited = used.replacen("A(I) = 0.0", "A(I) = 1.0", 1);
        let got = inc.update(&edited);
        assert!(inc.stats().full);
        let want = analyze(SourceKind::FortranFixed, &edited, &opts);
        assert!(want.diagnostics.iter().all(|d| d.code.0 != 1));
        assert!(got.diagnostics == want.diagnostics);
    }

    #[test]
    fn an_edit_in_one_fixed_form_unit_reanalyses_only_it() {
        let unit = |k: usize| {
            format!(
                "      SUBROUTINE S{k}(A, N)\n      INTEGER N, I\n      REAL A(N)\n      CALL BUILTIN_CSA_PARALLEL_LOOP()\n      DO 10 I = 1, N\n         A(I) = 0.0\n   10 CONTINUE\n      END\n"
            )
        };
        let text: String = (0..20).map(unit).collect();
        let opts = AnalysisOptions::default();
        let mut inc = Incremental::new(SourceKind::FortranFixed, opts.clone());
        inc.update(&text);
        assert_eq!(inc.stats().analysed, 20);
        let edited = text.replacen("A(I) = 0.0", "A(I) = 1.0", 1);
        let got = inc.update(&edited);
        assert_eq!((inc.stats().reused, inc.stats().analysed), (19, 1));
        assert!(got.diagnostics == analyze(SourceKind::FortranFixed, &edited, &opts).diagnostics);
        // Columns 73 and beyond are not code, but they move what follows.
        let long = edited.replacen(
            "      INTEGER N, I\n",
            &format!("      INTEGER N, I{}X\n", " ".repeat(60)),
            1,
        );
        let got = inc.update(&long);
        assert_eq!(inc.stats().analysed, 1);
        assert!(got.diagnostics == analyze(SourceKind::FortranFixed, &long, &opts).diagnostics);
    }

    #[test]
    fn input_edit_points() {
        for (old, new) in [("ab\ncd\nef", "ab\ncXY\nZd\nef"), ("x\ny\nz", "x\nz")] {
            let e = TextEdit::between(old, new).unwrap();
            let (a, b) = (
                SourceText::new(old.to_string()),
                SourceText::new(new.to_string()),
            );
            let ie = input_edit(e, &a, &b);
            assert_eq!(ie.start_position, point_at(old, e.start));
            assert_eq!(ie.old_end_position, point_at(old, e.old_end));
            assert_eq!(ie.new_end_position, point_at(new, e.new_end));
        }
    }

    #[test]
    fn an_edit_in_one_fortran_unit_reanalyses_only_it() {
        let unit = |k: usize| {
            format!(
                "subroutine s{k}(a, n)\n  integer :: n, i\n  real :: a(n)\n  call builtin_csa_parallel_loop()\n  do i = 1, n\n    a(i) = 0.0\n  end do\nend subroutine s{k}\n\n"
            )
        };
        let module = "module m\n  integer :: shared\ncontains\n  subroutine t(b)\n    real :: b(:)\n    b(1) = 1.0\n  end subroutine t\nend module m\n\n";
        let text = format!("{module}{}", (0..20).map(unit).collect::<String>());
        let opts = AnalysisOptions::default();
        let mut inc = Incremental::new(SourceKind::FortranFree, opts.clone());
        inc.update(&text);
        assert_eq!(inc.stats().analysed, 21);
        let edited = text.replacen("a(i) = 0.0", "a(i) = 1.0", 1);
        let got = inc.update(&edited);
        assert_eq!((inc.stats().reused, inc.stats().analysed), (20, 1));
        assert!(got.diagnostics == analyze(SourceKind::FortranFree, &edited, &opts).diagnostics);
        // Editing the module changes every unit's context.
        let module_edit = edited.replacen("integer :: shared", "integer :: shared, other", 1);
        inc.update(&module_edit);
        assert_eq!(inc.stats().analysed, 21);
    }

    #[test]
    fn an_edit_in_a_callee_reanalyses_its_callers() {
        let opts = AnalysisOptions::default();
        let c = "static void set(double *p, int k) { p[k] = 0; }\n\
                 static void mid(double *p, int k) { set(p, k); }\n\
                 void other(double *a) { a[0] = 1; }\n\
                 void user(double *a) {\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < 9; i++) mid(a, i);\n}\n";
        let mut inc = Incremental::new(SourceKind::C, opts.clone());
        check_update(&mut inc, SourceKind::C, &opts, c, "c");
        let edited = c.replacen("p[k] = 0;", "p[k + 1] = p[k];", 1);
        check_update(&mut inc, SourceKind::C, &opts, &edited, "c callee");
        assert!(inc
            .update(&edited)
            .diagnostics
            .iter()
            .any(|d| d.code.0 == 501));
        let f = "subroutine setx(a, k)\n  real :: a(10)\n  integer :: k\n  a(k) = 0\nend subroutine\n\
                 subroutine user(a)\n  real :: a(10)\n  integer :: i\n  call builtin_csa_parallel_loop()\n  do i = 1, 9\n    call setx(a, i)\n  end do\nend subroutine\n";
        let mut inc = Incremental::new(SourceKind::FortranFree, opts.clone());
        check_update(&mut inc, SourceKind::FortranFree, &opts, f, "fortran");
        let edited = f.replacen("a(k) = 0", "a(k + 1) = a(k)", 1);
        check_update(
            &mut inc,
            SourceKind::FortranFree,
            &opts,
            &edited,
            "fortran callee",
        );
        assert!(inc
            .update(&edited)
            .diagnostics
            .iter()
            .any(|d| d.code.0 == 501));
    }

    #[test]
    fn an_edit_in_one_function_reanalyses_only_it() {
        let f = |k: usize| {
            format!(
                "void f{k}(int *a, int *n) {{\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < *n; i++) a[i] = 0;\n}}\n"
            )
        };
        let text: String = (0..50).map(f).collect();
        let mut inc = Incremental::new(SourceKind::C, AnalysisOptions::default());
        let first = inc.update(&text);
        assert_eq!(inc.stats().analysed, 50);
        let edited = text.replacen("a[i] = 0;", "a[i] = 1;", 1);
        let second = inc.update(&edited);
        assert_eq!(
            inc.stats(),
            Stats {
                reused: 49,
                analysed: 1,
                full: false
            }
        );
        assert_eq!(first.diagnostics.len(), second.diagnostics.len());
        // Insert a line at the top: everything moves, nothing is analysed.
        let moved = format!("// header\n{edited}");
        let third = inc.update(&moved);
        assert_eq!(inc.stats().analysed, 0);
        assert!(
            third.diagnostics
                == analyze(SourceKind::C, &moved, &AnalysisOptions::default()).diagnostics
        );
        // Hover positions follow the shift.
        let at = moved.rfind("parallel_loop").unwrap();
        let h = crate::ide::hover(&third, at).unwrap();
        assert_eq!(&moved[h.span.range()], "__builtin_csa_parallel_loop");
        // A context change (new global) re-analyses everything.
        let ctx = format!("int g;\n{moved}");
        inc.update(&ctx);
        assert_eq!(inc.stats().analysed, 50);
    }

    /// The signature facts kept between updates are those of the file's
    /// functions now: typing in a body (a new text, hence a new key, on
    /// every keystroke) does not make them grow.
    #[test]
    fn signature_facts_kept_do_not_grow_with_edits() {
        let f = |k: usize| {
            format!(
                "void f{k}(int *a, int n) {{\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < n; i++) a[i] = 0;\n}}\n"
            )
        };
        let mut text: String = (0..10).map(f).collect();
        let mut inc = Incremental::new(SourceKind::C, AnalysisOptions::default());
        inc.update(&text);
        for k in 0..30 {
            text = text.replacen("a[i] = ", &format!("a[i] = {k} + "), 1);
            inc.update(&text);
            assert_eq!(inc.stats().analysed, 1);
            assert!(inc.signatures.0.kept() <= 10, "{} after {k}", inc.signatures.0.kept());
        }
    }
}
