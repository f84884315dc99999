//! Rewrites of CSA loop markers into OpenMP directives or ivdep assertions
//! (REWRITES.md). Every marker yields one [`MarkerRewrite`]: an unsafe fix
//! that converts it, or a display-only fix whose title says why it cannot.
//!
//! The rewrites work on the tree-sitter tree of the preprocessed text
//! (inactive `#if` branches and conditional directive lines blanked, every
//! offset kept), so a marker wrapped in `#ifdef __CSA__` and the loop after
//! it are siblings. The loop a marker converts is the one CLIE attaches it
//! to.
//!
//! Invariants: edits only delete the marker statement (and an `#ifdef
//! __CSA__` wrapper that holds nothing else) and insert whole directive
//! lines at the loop's indentation with the file's line ending; a
//! converted file has no markers left, so rewriting again changes nothing.

pub mod canonical;
pub mod ivdep;
pub mod openmp;
pub mod regions;
pub mod scalars;
pub mod sharing;
mod syntax;

use crate::analysis::{Analysis, FunctionAnalysis};
use crate::clie::MarkerStatus;
use crate::diag::{Applicability, Edit, Fix};
use crate::graph::loops::LoopId;
use crate::ir::{BuiltinCall, BuiltinId, SourceLoop};
use crate::source::Span;
use csa_grammars::SourceKind;
use tree_sitter::{Node, Tree};

use crate::config::IvdepStyle;

/// What to convert markers into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    OpenMp,
    Ivdep(IvdepStyle),
}

impl Target {
    pub fn from_name(name: &str, style: IvdepStyle) -> Option<Target> {
        match name {
            "openmp" => Some(Target::OpenMp),
            "ivdep" => Some(Target::Ivdep(style)),
            _ => None,
        }
    }
}

/// The rewrite of one marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerRewrite {
    /// The marker call.
    pub marker: Span,
    /// Unsafe (converts) or display-only (cannot; the title says why).
    pub fix: Fix,
}

impl MarkerRewrite {
    pub fn converts(&self) -> bool {
        self.fix.applicability != Applicability::DisplayOnly
    }
}

/// What a target-specific rewrite gets for one marker.
pub(crate) struct MarkerSite<'a> {
    pub text: &'a str,
    pub fortran: bool,
    pub builtin: &'a BuiltinCall,
    pub source_loop: &'a SourceLoop,
    /// The loop statement in the tree of the preprocessed text.
    pub loop_node: Node<'a>,
    /// Deletes the marker (and a wrapper holding nothing else).
    pub removal: Vec<Edit>,
    /// The scalar clauses from the IR (`rewrite::scalars`), or why the
    /// loop cannot be an OpenMP loop.
    pub scalars: Result<sharing::Sharing, sharing::Refusal>,
    /// The arrays the loop writes and what an OpenMP loop must make of
    /// them (`dependence::arrays`; OpenMP target only).
    pub arrays: Vec<LoopArray>,
    /// The data the loop accesses that is declared in another file
    /// (`Function::declared_elsewhere`), by name: its module may make it
    /// `threadprivate`, which an OpenMP conversion assumes it is not.
    pub elsewhere: Vec<String>,
}

/// An array a converted loop writes, as the clause printer needs it.
#[derive(Clone, Debug)]
pub(crate) struct LoopArray {
    pub name: String,
    pub class: crate::dependence::arrays::ArrayClass,
    /// The line of `class`'s statement (unproven arrays), 1-based.
    pub line: u32,
    /// C: the extent of each dimension, when all are constants.
    pub extents: Option<Vec<i64>>,
}

pub(crate) fn refused(marker: Span, what: &str, reason: &str) -> MarkerRewrite {
    MarkerRewrite {
        marker,
        fix: Fix {
            kind: crate::diag::FixKind::RefusedConversion,
            title: format!("Cannot convert to {what}: {reason}"),
            applicability: Applicability::DisplayOnly,
            edits: Vec::new(),
        },
    }
}

/// Parses the preprocessed text of a file for the rewrites.
pub(crate) fn parse(fa: &Analysis) -> Option<Tree> {
    let grammar = match fa.kind {
        SourceKind::C => csa_grammars::Grammar::C,
        SourceKind::FortranFree => csa_grammars::Grammar::Fortran,
        SourceKind::FortranFixed => return None,
    };
    let text = &fa.preprocessed.text;
    if fa.kind == SourceKind::FortranFree {
        let input = crate::frontend::fortran::free_form_parser_input(text);
        return csa_grammars::parse(grammar, &input);
    }
    csa_grammars::parse(grammar, text)
}

/// The edits that remove a marker statement, and its `#ifdef __CSA__`
/// wrapper when the wrapper holds nothing else and has no `#else`.
pub(crate) fn marker_removal(fa: &Analysis, span: Span) -> Vec<Edit> {
    crate::fix::marker_removal(
        fa.source.text(),
        &fa.preprocessed,
        span,
        fa.kind == SourceKind::FortranFixed,
    )
}

fn loop_kinds(fortran: bool) -> &'static [&'static str] {
    if fortran {
        &["do_loop"]
    } else {
        &["for_statement", "while_statement", "do_statement"]
    }
}

/// The loop statement node that starts at `span.start`: the innermost
/// loop holding its first byte. (Found going down with a cursor:
/// `Node::parent` searches from the root each time, so climbing from the
/// smallest node was quadratic in the nesting depth, per marker; a deeply
/// nested file took 16 s to rewrite, fuzz seed 4242 input 1371.)
pub(crate) fn loop_node<'t>(tree: &'t Tree, span: Span, fortran: bool) -> Option<Node<'t>> {
    let start = span.start as usize;
    let mut cursor = tree.root_node().walk();
    let mut innermost = None;
    loop {
        let n = cursor.node();
        if n.start_byte() > start {
            break;
        }
        if loop_kinds(fortran).contains(&n.kind()) {
            innermost = Some(n);
        }
        if cursor.goto_first_child_for_byte(start).is_none() {
            break;
        }
    }
    innermost
}

/// The source loop a marker is attached to, or why there is none.
fn attached_loop(f: &FunctionAnalysis, id: BuiltinId) -> Result<&SourceLoop, &'static str> {
    let info = f
        .clie
        .markers
        .iter()
        .find(|m| m.builtin == id)
        .ok_or("the compiler does not treat this call as a marker")?;
    match &info.status {
        MarkerStatus::Attached(loops) => {
            if loops.len() != 1 {
                return Err("the marker reaches more than one loop");
            }
            let header = f
                .forest
                .loops
                .get(loops[0].0 as usize)
                .ok_or("the marked loop is not a loop statement")?
                .header;
            f.func
                .source_loop_with_header(header)
                .ok_or("the marked loop is not a loop statement")
        }
        MarkerStatus::Shadowed { .. } => {
            Err("a nearer marker wins for its loop, so this one does nothing (CSA106)")
        }
        MarkerStatus::Unattached(_) => Err("no loop picks the marker up (CSA105)"),
        MarkerStatus::NotAMarker => {
            Err("the compiler does not accept this call as a marker (CSA107)")
        }
    }
}

/// Rewrites every loop marker of the file for `target`, in file order.
pub fn rewrite_markers(fa: &Analysis, target: Target) -> Vec<MarkerRewrite> {
    let what = match target {
        Target::OpenMp => "OpenMP",
        Target::Ivdep(_) => "ivdep",
    };
    let fortran = fa.kind != SourceKind::C;
    let tree = parse(fa);
    let mut out = Vec::new();
    for f in &fa.functions {
        for (i, b) in f.func.builtins.iter().enumerate() {
            if !b.kind.is_marker() {
                continue;
            }
            let Some(tree) = &tree else {
                out.push(refused(
                    b.span,
                    what,
                    "rewrites of fixed-form Fortran are not supported",
                ));
                continue;
            };
            if !b.statement {
                out.push(refused(
                    b.span,
                    what,
                    "the marker is part of a larger expression; make it a statement of its own",
                ));
                continue;
            }
            let sl = match attached_loop(f, BuiltinId(i as u32)) {
                Ok(sl) => sl,
                Err(why) => {
                    out.push(refused(b.span, what, why));
                    continue;
                }
            };
            let Some(node) = loop_node(tree, sl.span, fortran) else {
                out.push(refused(b.span, what, "the loop statement was not found"));
                continue;
            };
            if node.has_error() {
                out.push(refused(b.span, what, "the loop has syntax errors"));
                continue;
            }
            let ir_loop = f.forest.loop_with_header(sl.header.0);
            let scalars = match (target, ir_loop) {
                (Target::OpenMp, Some(l)) => scalars::scalar_sharing(f, l, sl, &fa.source),
                (Target::OpenMp, None) => Err(sharing::Refusal {
                    reason: "the loop is not a natural loop in the control-flow graph".into(),
                }),
                _ => Ok(sharing::Sharing::default()),
            };
            let arrays = match (target, ir_loop) {
                (Target::OpenMp, Some(l)) => loop_arrays(fa, f, l),
                _ => Vec::new(),
            };
            let elsewhere = ir_loop.map_or_else(Vec::new, |l| accessed_elsewhere(f, l));
            let site = MarkerSite {
                text: fa.source.text(),
                fortran,
                builtin: b,
                source_loop: sl,
                loop_node: node,
                removal: marker_removal(fa, b.span),
                scalars,
                arrays,
                elsewhere,
            };
            let pre = &fa.preprocessed.text;
            let r = match target {
                Target::OpenMp => openmp::rewrite(&site, pre),
                Target::Ivdep(style) => ivdep::rewrite(&site, style),
            };
            out.push(refuse_conflicts(fa, f, BuiltinId(i as u32), r, what));
        }
    }
    if target == Target::OpenMp && fa.kind == SourceKind::C {
        if let Some(tree) = &tree {
            // the data sharing of a region's loop, from the IR
            let sharing_of = |for_node: Node| -> Result<sharing::Sharing, sharing::Refusal> {
                let found = fa.functions.iter().find_map(|f| {
                    let sl = f
                        .func
                        .source_loops
                        .iter()
                        .find(|sl| sl.span.start as usize == for_node.start_byte())?;
                    Some((f, sl, f.forest.loop_with_header(sl.header.0)?))
                });
                let Some((f, sl, l)) = found else {
                    return Err(sharing::Refusal {
                        reason: "the loop is not a natural loop in the control-flow graph".into(),
                    });
                };
                let mut sh = scalars::scalar_sharing(f, l, sl, &fa.source)?;
                openmp::add_arrays(&mut sh, &loop_arrays(fa, f, l), false)?;
                Ok(sh)
            };
            out.extend(regions::rewrite(
                fa.source.text(),
                &fa.preprocessed,
                tree,
                &sharing_of,
            ));
        }
    }
    out.sort_by_key(|r| r.marker.start);
    out
}

/// The names of the variables declared in another file that loop `l`
/// accesses itself (a callee's accesses are not looked at), in the order
/// the function first names them.
fn accessed_elsewhere(f: &FunctionAnalysis, l: LoopId) -> Vec<String> {
    let func = &f.func;
    if func.declared_elsewhere.is_empty() {
        return Vec::new();
    }
    let mut seen = vec![false; func.declared_elsewhere.len()];
    for (bi, b) in func.blocks.iter().enumerate() {
        if !f.forest.contains(l, bi as u32) {
            continue;
        }
        for inst in &b.insts {
            if let crate::ir::InstKind::Access(a) = &inst.kind {
                if let crate::ir::AccessTarget::Var(v) = a.target {
                    if let Some(k) = func.declared_elsewhere.iter().position(|&d| d == v) {
                        seen[k] = true;
                    }
                }
            }
        }
    }
    func.declared_elsewhere
        .iter()
        .zip(seen)
        .filter(|(_, s)| *s)
        .map(|(&v, _)| func.var(v).name.clone())
        .collect()
}

/// The arrays loop `l` writes, with their data sharing, as the clause
/// printer needs them.
fn loop_arrays(fa: &Analysis, f: &FunctionAnalysis, l: LoopId) -> Vec<LoopArray> {
    f.array_sharing(l)
        .into_iter()
        .map(|u| {
            let var = f.func.var(u.var);
            let at = match &u.class {
                crate::dependence::arrays::ArrayClass::Unproven { at, .. } => at.start,
                _ => var.span.start,
            };
            LoopArray {
                name: var.name.clone(),
                line: fa.source.line_col(at as usize).line,
                extents: (!var.ty.is_vla)
                    .then(|| var.ty.dims.iter().map(|d| d.extent).collect())
                    .flatten()
                    .filter(|e: &Vec<i64>| !e.is_empty()),
                class: u.class,
            }
        })
        .collect()
}

/// A conversion of a marker whose loop has a proven conflict (CSA501)
/// stands only when the directive it writes gives the conflicting variable
/// a clause that makes each iteration's copy its own (a scalar that the
/// compiler keeps in memory, a Fortran dummy `total = total + t`:
/// `reduction(+:total)`). ivdep asserts no loop-carried dependence through
/// memory elements; the compiler still follows a scalar's data flow, so
/// only conflicts on elements refuse it. Otherwise the conversion is
/// refused.
fn refuse_conflicts(
    fa: &Analysis,
    f: &crate::analysis::FunctionAnalysis,
    marker: BuiltinId,
    r: MarkerRewrite,
    what: &str,
) -> MarkerRewrite {
    if !r.converts() {
        return r;
    }
    let lang = crate::omp::OmpLang::from(f.func.lang);
    let directive = r
        .fix
        .edits
        .iter()
        .find_map(|e| crate::omp::parse_directive(e.new_text.trim(), lang));
    for d in f
        .deps
        .iter()
        .filter(|d| d.asserted == crate::dependence::Asserted::Marker(marker))
    {
        for x in &d.findings {
            let crate::dependence::Finding::Conflict {
                object,
                first,
                scalar,
                ..
            } = x
            else {
                continue;
            };
            // OpenMP: a clause gives each thread its copy; ivdep asserts
            // nothing about scalars (the compiler keeps their data flow)
            let fixed = match &directive {
                Some(dir) => dir.clauses_for(object).next().is_some(),
                None => *scalar && what == "ivdep",
            };
            if !fixed {
                let line = fa.source.line_col(first.span.start as usize).line;
                return refused(
                    r.marker,
                    what,
                    &format!("iterations of the loop conflict on `{object}` at line {line} (CSA501), so they are not independent"),
                );
            }
        }
    }
    r
}

/// Applies every converting rewrite; returns the new text (unchanged when
/// nothing converts).
#[cfg(test)]
pub fn apply_rewrites(text: &str, rewrites: &[MarkerRewrite]) -> String {
    let fixes: Vec<&Fix> = rewrites
        .iter()
        .filter(|r| r.converts())
        .map(|r| &r.fix)
        .collect();
    crate::fix::apply_fixes(text, &fixes).0
}

/// What [`fix_all`] applies.
#[derive(Clone, Debug, Default)]
pub struct FixAllOptions {
    /// Apply diagnostics' safe fixes.
    pub fix: bool,
    /// Also their unsafe fixes, and the rewrite (an unsafe fix too).
    pub unsafe_fixes: bool,
    /// Convert markers first (only with `unsafe_fixes`; otherwise they are
    /// counted in [`FixAllResult::withheld`]).
    pub rewrite: Option<Target>,
    /// Codes whose fixes are not applied (rules the configuration turns
    /// off).
    pub disabled: Vec<crate::diag::Code>,
}

/// The result of [`fix_all`].
#[derive(Clone, Debug, Default)]
pub struct FixAllResult {
    pub text: String,
    /// Fixes and rewrites applied.
    pub applied: usize,
    /// Markers left unconverted, with why, at their place in the text
    /// given (not the text after earlier conversions).
    pub refusals: Vec<(Span, String)>,
    /// Markers a rewrite would convert but did not, because rewrites are
    /// unsafe fixes and `unsafe_fixes` was not set.
    pub withheld: usize,
    /// Fixes not applied because the analysis of the fixed text finds an
    /// error the text did not have (a fix another finding contradicts),
    /// with why, at their place in the text given.
    pub rejected: Vec<(Span, String)>,
}

/// Rounds of apply-and-reanalyse before giving up on conflicting edits.
const MAX_ROUNDS: usize = 8;

/// Everything `csa-lint --fix/--rewrite` does to one file's text: marker
/// rewrites, then diagnostics' fixes (never suppressions), each repeated
/// on the re-analysed text until nothing changes, so edits that met
/// another's are applied in a later round. No I/O.
pub fn fix_all(
    kind: SourceKind,
    text: &str,
    analysis: &crate::analysis::AnalysisOptions,
    opts: &FixAllOptions,
) -> FixAllResult {
    use crate::analysis::analyze;
    let mut out = FixAllResult {
        text: text.to_string(),
        ..FixAllResult::default()
    };
    let mut fa = analyze(kind, text, analysis);
    // the edits of each round, to map positions back to `text`
    let mut history: Vec<Vec<crate::fix::Edit>> = Vec::new();
    let refusals = |fa: &crate::analysis::Analysis, target| -> Vec<(Span, String)> {
        rewrite_markers(fa, target)
            .iter()
            .filter(|r| !r.converts())
            .map(|r| (r.marker, r.fix.title.clone()))
            .collect()
    };
    // a rewrite is an unsafe fix: it asserts, for every compiler, what the
    // marker asserted for CSA's
    if let Some(target) = opts.rewrite.filter(|_| !opts.unsafe_fixes) {
        out.withheld = rewrite_markers(&fa, target)
            .iter()
            .filter(|r| r.converts())
            .count();
    }
    // A fix can make a rewrite possible (and a rewrite a fix): both phases
    // again until the text stays the same, so applying everything a second
    // time changes nothing.
    for _ in 0..MAX_ROUNDS {
        let round_start = out.text.clone();
        if let Some(target) = opts.rewrite.filter(|_| opts.unsafe_fixes) {
            for _ in 0..MAX_ROUNDS {
                let rewrites = rewrite_markers(&fa, target);
                let fixes: Vec<&Fix> = rewrites
                    .iter()
                    .filter(|r| r.converts())
                    .map(|r| &r.fix)
                    .collect();
                let (next, applied, _, edits) = crate::fix::apply_fixes_logged(&out.text, &fixes);
                if applied == 0 || next == out.text {
                    break;
                }
                out.applied += applied;
                out.text = next;
                history.push(edits);
                fa = analyze(kind, &out.text, analysis);
            }
        }
        if opts.fix {
            // fixes found to add an error, in the current text (cleared when
            // the text changes: their spans move)
            let mut rejected: Vec<(Span, String)> = Vec::new();
            for _ in 0..MAX_ROUNDS * 2 {
                let chosen = fixes_for_round(&fa, opts, &rejected);
                if chosen.is_empty() {
                    break;
                }
                let fixes: Vec<&Fix> = chosen.iter().map(|(_, f)| *f).collect();
                let (next, applied, _, edits) = crate::fix::apply_fixes_logged(&out.text, &fixes);
                if applied == 0 || next == out.text {
                    break;
                }
                let after = analyze(kind, &next, analysis);
                if new_errors(&fa, &after).is_empty() {
                    out.applied += applied;
                    out.text = next;
                    history.push(edits);
                    fa = after;
                    rejected.clear();
                    continue;
                }
                // some fix contradicts another finding: find which, alone
                let mut any = false;
                for (d, f) in &chosen {
                    let (alone, n, _, _) = crate::fix::apply_fixes_logged(&out.text, &[*f]);
                    if n == 0 {
                        continue;
                    }
                    let added = new_errors(&fa, &analyze(kind, &alone, analysis));
                    if !added.is_empty() {
                        any = true;
                        rejected.push((d.span, f.title.clone()));
                        // reported at its place in the text given
                        let back = |pos: u32| position_in_given(&history, pos);
                        let why = format!(
                            "Not applied: {} ({}): the fixed code would have {}",
                            f.title,
                            d.code,
                            added.join(", ")
                        );
                        let at = Span::new(back(d.span.start) as usize, back(d.span.end) as usize);
                        if !out.rejected.iter().any(|(s, w)| *s == at && *w == why) {
                            out.rejected.push((at, why));
                        }
                    }
                }
                if !any {
                    // they add an error only together: the first goes alone in
                    // the next round, the others wait (not reported)
                    for (d, f) in chosen.iter().skip(1) {
                        rejected.push((d.span, f.title.clone()));
                    }
                }
            }
        }
        if out.text == round_start {
            break;
        }
    }
    if let Some(target) = opts.rewrite {
        // what is left unconverted in the final text, placed in the original
        let back = |pos: u32| position_in_given(&history, pos);
        let now = crate::source::SourceText::new(out.text.clone());
        let before = crate::source::SourceText::new(text.to_string());
        // a line the reason names, in the final text, as a line of `text`
        let line_back = |n: u32| -> u32 {
            if n == 0 || n as usize > now.line_count() {
                return n;
            }
            let start = now.line_start(n as usize - 1);
            before.line_col(back(start as u32) as usize).line
        };
        out.refusals = refusals(&fa, target)
            .into_iter()
            .map(|(span, why)| {
                (
                    Span::new(back(span.start) as usize, back(span.end) as usize),
                    map_line_numbers(&why, &line_back),
                )
            })
            .collect();
    }
    out
}

/// A position in the text after the rounds of `history`, in the text
/// before them.
fn position_in_given(history: &[Vec<crate::fix::Edit>], pos: u32) -> u32 {
    history
        .iter()
        .rev()
        .fold(pos, |p, edits| crate::fix::position_before(p, edits))
}

/// The fixes of one round of `--fix`: each diagnostic's first applicable
/// fix not `rejected`, at most one per loop (a loop's fixes interact: one
/// is applied and the loop re-analysed before the next), and in the
/// order of the diagnostics. The exception is the removal of markers the
/// compiler deletes: unattached (CSA105) and shadowed (CSA106) ones. An
/// unattached marker wins no loop and a shadowed one loses to the first
/// marker of the nearest block whatever else precedes the loop, so
/// removing them changes no other marker's fate: all of them go in the
/// first round, however many there are, next to the loop's one other fix.
/// (Should that fix remove the winner, no marker is left, which is a fixed
/// point too.)
fn fixes_for_round<'a>(
    fa: &'a crate::analysis::Analysis,
    opts: &FixAllOptions,
    rejected: &[(Span, String)],
) -> Vec<(&'a crate::diag::Diagnostic, &'a Fix)> {
    // CSA105 unattached, CSA106 shadowed
    const DELETED: [crate::diag::Code; 2] = [crate::diag::Code(105), crate::diag::Code(106)];
    // each loop with a fix this round
    let mut loops_taken: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    for d in fa
        .diagnostics
        .iter()
        .filter(|d| !opts.disabled.contains(&d.code))
    {
        let fix = d.fixes.iter().find(|f| {
            crate::fix::bulk_fix_applies(f, opts.unsafe_fixes)
                && !rejected.iter().any(|(s, t)| *s == d.span && *t == f.title)
        });
        let Some(fix) = fix else { continue };
        let deleted = DELETED.contains(&d.code) && fix.kind == crate::diag::FixKind::RemoveMarker;
        if let Some(l) = loop_of(fa, d.span).filter(|_| !deleted) {
            if loops_taken.contains(&l) {
                continue;
            }
            loops_taken.push(l);
        }
        out.push((d, fix));
    }
    out
}

/// The outermost loop statement that holds `span`, or that the marker at
/// `span` attaches to: its start.
fn loop_of(fa: &crate::analysis::Analysis, span: Span) -> Option<u32> {
    let shift = |i: usize| fa.function_shifts.get(i).copied().unwrap_or(0);
    let mut best: Option<Span> = None;
    for (i, f) in fa.functions.iter().enumerate() {
        let k = shift(i);
        let moved = |s: Span| Span::new((s.start as i64 + k) as usize, (s.end as i64 + k) as usize);
        for sl in &f.func.source_loops {
            let s = moved(sl.span);
            if s.start <= span.start && span.end <= s.end && best.is_none_or(|b| s.start < b.start)
            {
                best = Some(s);
            }
        }
        if best.is_none() {
            for (j, b) in f.func.builtins.iter().enumerate() {
                if moved(b.span) == span {
                    if let Ok(sl) = attached_loop(f, BuiltinId(j as u32)) {
                        best = Some(moved(sl.span));
                    }
                }
            }
        }
    }
    best.map(|s| s.start)
}

/// The errors `after` has that `before` does not (by code, counted), as
/// `CSA501 at line N`.
fn new_errors(
    before: &crate::analysis::Analysis,
    after: &crate::analysis::Analysis,
) -> Vec<String> {
    use crate::diag::Severity;
    fn errors(fa: &crate::analysis::Analysis) -> Vec<&crate::diag::Diagnostic> {
        fa.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect()
    }
    let old = errors(before);
    let mut out = Vec::new();
    let new = errors(after);
    for d in &new {
        let was = old.iter().filter(|x| x.code == d.code).count();
        let now = new.iter().filter(|x| x.code == d.code).count();
        let line = after.source.line_col(d.span.start as usize).line;
        let item = format!("{} at line {line}", d.code);
        if now > was && !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// `why` with every `line N` replaced by `line f(N)`.
fn map_line_numbers(why: &str, f: &dyn Fn(u32) -> u32) -> String {
    let mut out = String::with_capacity(why.len());
    let mut rest = why;
    while let Some(k) = rest.find("line ") {
        let (head, tail) = rest.split_at(k + "line ".len());
        out.push_str(head);
        let digits = tail.bytes().take_while(|b| b.is_ascii_digit()).count();
        match tail[..digits].parse::<u32>() {
            Ok(n) => out.push_str(&f(n).to_string()),
            Err(_) => out.push_str(&tail[..digits]),
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;
