//! Editor views of a [`Analysis`], as plain data (no LSP types): what
//! to show on hover, where CLIE puts the region and section it creates for
//! each marked loop (for inlay hints), and an outline of functions and
//! marked loops. The language server turns these into protocol objects.
//!
//! Invariants: every offset returned lies in the analysed text and on a
//! character boundary; nothing here panics on any analysis.

use crate::analysis::{Analysis, FunctionAnalysis};
use crate::clie::{MarkerStatus, Outcome, Placement};
use crate::graph::loops::LoopId;
use crate::ir::{BlockId, BuiltinCall, BuiltinId, BuiltinKind, Function, Lang};
use crate::regions::tokens::TokenStatus;
use crate::source::Span;

/// Markdown to show for a range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    pub span: Span,
    pub markdown: String,
}

/// Where a hint goes relative to its offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HintSide {
    /// Shown before the text at `offset`.
    Before,
    /// Shown after the text ending at `offset`.
    After,
}

/// One place where CLIE inserts a region or section intrinsic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementHint {
    pub offset: usize,
    pub side: HintSide,
    /// Short label (`region▸`).
    pub label: String,
    /// What it is and for which loop.
    pub tooltip: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    Function,
    /// A loop with a marker (or an OpenMP/ivdep directive).
    Loop,
}

/// An outline entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub detail: String,
    pub kind: SymbolKind,
    pub span: Span,
    pub selection: Span,
    pub children: Vec<Symbol>,
}

fn line(fa: &Analysis, offset: u32) -> u32 {
    fa.source.line_col(offset as usize).line
}

/// An offset of a function's analysis moved by the function's shift (see
/// [`Analysis::function_shifts`]).
fn mv(sh: i64, o: u32) -> u32 {
    Span::shift_offset(o, sh)
}

fn mvs(sh: i64, s: Span) -> Span {
    s.shifted(sh)
}

/// Each function with its shift.
fn functions(fa: &Analysis) -> impl Iterator<Item = (&FunctionAnalysis, i64)> {
    fa.functions
        .iter()
        .enumerate()
        .map(|(i, f)| (&**f, fa.function_shifts.get(i).copied().unwrap_or(0)))
}

/// Whether a loop marker (whose rewrites a code action would offer) lies
/// within `from..=to` of the analysed text.
pub fn has_marker_in(fa: &Analysis, from: usize, to: usize) -> bool {
    functions(fa).any(|(f, sh)| {
        f.func.builtins.iter().any(|b| {
            let s = mvs(sh, b.span);
            b.kind.is_marker() && s.start as usize <= to && from <= s.end as usize
        })
    })
}

fn short_name(b: &BuiltinCall) -> String {
    b.short_name()
}

/// The first lines of a builtin's hover: its name as a code block in the
/// file's language (as clangd and rust-analyzer do). Not `**bold**`: the
/// builtins' names begin with `__`, which Neovim 0.7's markdown reads as
/// emphasis, leaving the asterisks on screen.
fn title(b: &BuiltinCall, lang: Lang) -> String {
    let fence = match lang {
        Lang::C => "c",
        Lang::Fortran => "fortran",
    };
    format!("```{fence}\n{}\n```\n\n", b.name)
}

/// What a builtin does, in a paragraph.
pub fn builtin_doc(kind: BuiltinKind, lang: Lang) -> &'static str {
    match (kind, lang) {
        (BuiltinKind::ParallelLoop, _) => {
            "Asserts that the memory operations of different iterations of the next loop do not depend on each other. The compiler's loop-intrinsic expander (CLIE) turns it into a parallel region around the loop and a parallel section around the body; when no section can hold every memory operation of an iteration it prints `COULD NOT PARALLELIZE LOOP` and ignores the marker. Values carried in registers (a scalar sum) are allowed. OpenMP equivalent: `#pragma omp parallel for`."
        }
        (BuiltinKind::Spmd, _) => {
            "`spmd(W, C)`: runs the next loop on `W` workers (SPMDization) with the parallel_loop assertion for each worker. `C` is the chunk size: 0 gives each worker one contiguous block of iterations, `C >= 1` deals out chunks of `C` iterations in turn. OpenMP equivalent: `#pragma omp parallel for num_threads(W) schedule(static[, C])`."
        }
        (BuiltinKind::Spmdization, _) => {
            "`spmdization(W, \"kind\")`: the older form of `spmd`, with the chunk size named: `cyclic` (1), `blocking` (0) or `hybrid` (8). C only."
        }
        (BuiltinKind::PipelineLoop, _) => {
            "`pipeline_loop(D)`: lets up to `D` iterations of the next (inner) loop be in flight at once; 0 lets the compiler choose. It only acts on a loop nested in another loop. No OpenMP equivalent; `-csa-ilpl-selection=automatic` finds most such loops by itself."
        }
        (BuiltinKind::RegionEntry, _) => {
            "`parallel_region_entry(id)`: opens a parallel region and returns its token. Sections of one region, each opened with the token, may run their memory operations in any order relative to each other. The id must be an integer constant below 1000 (higher ids are the compiler's)."
        }
        (BuiltinKind::RegionExit, _) => {
            "`parallel_region_exit(token)`: closes the region whose entry returned `token`."
        }
        (BuiltinKind::SectionEntry, _) => {
            "`parallel_section_entry(region)`: opens a section of the region whose entry returned `region`, and returns the section's token. Memory operations between a section's entry and exit are unordered with those of the region's other sections (or other iterations of the same section)."
        }
        (BuiltinKind::SectionExit, _) => {
            "`parallel_section_exit(section)`: closes the section whose entry returned `section`."
        }
        (BuiltinKind::WorkerNum, _) => {
            "`spmd_worker_num()`: the number of the worker running this iteration of an SPMDized loop. Outside such a loop the compiler deletes it and everything computed from it."
        }
        (BuiltinKind::Other, _) => "A CSA builtin csa-lint does not model.",
    }
}

/// What a directive on `line_text` means, if it is one.
fn directive_doc(line_text: &str) -> Option<&'static str> {
    let t = line_text.trim_start().to_ascii_lowercase();
    let words: Vec<&str> = t.split_whitespace().collect();
    let joined = words.join(" ");
    if joined.starts_with("#pragma omp") || joined.starts_with("# pragma omp") {
        return Some(
            "OpenMP directive. The CSA compiler lowers `omp parallel for` / `omp for` loops to a parallel region around the loop and a parallel section around the body (the same intrinsics parallel_loop produces), so their memory operations are ordered only within an iteration.",
        );
    }
    if joined.starts_with("!$omp") {
        return Some(
            "OpenMP directive (Fortran). `!$omp parallel do` / `!$omp do` loops become a parallel region around the loop and a parallel section around the body in the CSA compiler.",
        );
    }
    if joined.starts_with("#pragma ivdep") || joined.starts_with("#pragma gcc ivdep") {
        return Some(
            "ivdep: asserts that the next loop has no loop-carried memory data dependence. Weaker than parallel_loop: it lets the compiler vectorize but does not parallelize the loop for CSA.",
        );
    }
    if joined.contains("[[intel::ivdep") {
        return Some(
            "`[[intel::ivdep]]`: asserts that the loop has no loop-carried memory data dependence (optionally only below a distance). It allows vectorization; CSA does not parallelize on it.",
        );
    }
    if joined.starts_with("!dir$ ivdep") || joined.starts_with("!gcc$ ivdep") {
        return Some(
            "ivdep (Fortran): asserts that the next DO loop has no loop-carried memory data dependence.",
        );
    }
    if joined.starts_with("#pragma unroll") {
        return Some(
            "`#pragma unroll`: unrolls the next loop. With a constant count, a local array indexed by the loop variable becomes scalars (registers), so its accesses are not memory operations.",
        );
    }
    None
}

/// The function containing `offset` and the builtin under it, if any.
fn builtin_at(fa: &Analysis, offset: usize) -> Option<(&FunctionAnalysis, i64, BuiltinId)> {
    for (f, sh) in functions(fa) {
        let span = mvs(sh, f.func.span);
        if !(span.start as usize..=span.end as usize).contains(&offset) {
            continue;
        }
        for (i, b) in f.func.builtins.iter().enumerate() {
            let span = mvs(sh, b.span);
            if span.start as usize <= offset && offset <= span.end as usize {
                return Some((f, sh, BuiltinId(i as u32)));
            }
        }
    }
    None
}

/// Describes where a placement puts the region and section, in words.
fn describe_placement(fa: &Analysis, f: &FunctionAnalysis, sh: i64, p: &Placement) -> String {
    let hints = placement_hints_for(fa, f, sh, p, "");
    let mut parts = Vec::new();
    for h in hints {
        parts.push(format!(
            "{} at line {}",
            h.tooltip,
            fa.source.line_col(h.offset).line
        ));
    }
    parts.join("; ")
}

fn loop_line(fa: &Analysis, f: &FunctionAnalysis, sh: i64, l: LoopId) -> String {
    match f.source_loop(l) {
        Some(sl) => format!(
            "the loop at line {}",
            line(fa, mv(sh, sl.keyword_span.start))
        ),
        None => "a loop".to_string(),
    }
}

fn marker_hover(fa: &Analysis, f: &FunctionAnalysis, sh: i64, id: BuiltinId) -> String {
    let b = f.func.builtin(id);
    let mut md = format!(
        "{}{}\n",
        title(b, f.func.lang),
        builtin_doc(b.kind, f.func.lang)
    );
    let Some(info) = f.clie.markers.iter().find(|m| m.builtin == id) else {
        return md;
    };
    md.push_str("\n---\n\n");
    match &info.status {
        MarkerStatus::Attached(loops) => {
            for &l in loops {
                md.push_str(&format!("Attaches to {}. ", loop_line(fa, f, sh, l)));
                let outcome = f
                    .clie
                    .verdicts
                    .iter()
                    .find(|v| v.loop_id == l && v.marker == id)
                    .map(|v| &v.outcome);
                let text = match outcome {
                    Some(Outcome::Parallelized(p)) => {
                        format!("CLIE parallelizes it: {}.", describe_placement(fa, f, sh, p))
                    }
                    Some(Outcome::BadSpmdizationKind(_)) => {
                        "CLIE finds a section but abandons the expansion: the spmdization kind is not one it accepts.".to_string()
                    }
                    Some(Outcome::NoMemoryOperations) => {
                        "The loop has no memory operations after optimisation: the marker has no effect.".to_string()
                    }
                    Some(Outcome::SpmdWithoutMemory) => {
                        "SPMDized without a section (the loop has no memory operations).".to_string()
                    }
                    Some(Outcome::CouldNotParallelize(_)) => {
                        "CLIE cannot place a section: COULD NOT PARALLELIZE LOOP, the marker is ignored.".to_string()
                    }
                    Some(Outcome::Pipelined { depth }) => {
                        format!("Pipelined with depth {depth}.")
                    }
                    Some(Outcome::BadPipelineDepth) => {
                        "The depth is negative or not a constant: COULD NOT PIPELINE.".to_string()
                    }
                    None => String::new(),
                };
                md.push_str(&text);
                md.push('\n');
            }
        }
        MarkerStatus::Shadowed { by, loop_id } => md.push_str(&format!(
            "Shadowed: the marker at line {} is nearer to {} and wins; the compiler deletes this one.\n",
            line(fa, mv(sh, f.func.builtin(*by).span.start)),
            loop_line(fa, f, sh, *loop_id)
        )),
        MarkerStatus::Unattached(_) => {
            md.push_str("Not attached to any loop: the compiler deletes it without a message.\n")
        }
        MarkerStatus::NotAMarker => md.push_str(
            "The compiler does not accept this call as a marker (wrong arguments); it stays an ordinary call.\n",
        ),
    }
    if let Some(d) = f
        .deps
        .iter()
        .find(|d| d.asserted == crate::dependence::Asserted::Marker(id))
    {
        md.push('\n');
        md.push_str(&dependence_summary(fa, f, sh, d));
    }
    // The diagnostics anchored here say why, with the compiler's words.
    for d in &fa.diagnostics {
        let b_span = mvs(sh, b.span);
        if d.span.start >= b_span.start && d.span.end <= b_span.end {
            md.push_str(&format!(
                "\n{} {}: {}\n",
                d.code,
                d.rule,
                d.message.render(&fa.source)
            ));
        }
    }
    md
}

fn token_hover(fa: &Analysis, f: &FunctionAnalysis, sh: i64, id: BuiltinId) -> String {
    let b = f.func.builtin(id);
    let mut md = format!(
        "{}{}\n\n---\n\n",
        title(b, f.func.lang),
        builtin_doc(b.kind, f.func.lang)
    );
    if let Some(e) = f.tokens.entry(id) {
        match e.id {
            Some(rid) => md.push_str(&format!("Opens region {rid}.\n")),
            None => md.push_str("The region id is not a constant: the compiler stops.\n"),
        }
    }
    if let Some(info) = f.tokens.info(id) {
        let sources: Vec<String> = info
            .sources
            .iter()
            .map(|s| {
                let sb = f.func.builtin(*s);
                format!(
                    "`{}` at line {}",
                    short_name(sb),
                    line(fa, mv(sh, sb.span.start))
                )
            })
            .collect();
        if !sources.is_empty() && b.kind != BuiltinKind::RegionEntry {
            md.push_str(&format!("Its token comes from {}.", sources.join(", ")));
            if let Some(rid) = info.region_id {
                md.push_str(&format!(" Region {rid}."));
            }
            md.push('\n');
        }
        match &info.status {
            TokenStatus::Connected => {}
            TokenStatus::PartlyConnected { bad } | TokenStatus::NotConnected { bad } => {
                for (span, why) in bad {
                    md.push_str(&format!("\nLine {}: {why}\n", line(fa, mv(sh, span.start))));
                }
            }
        }
    }
    md
}

/// What to show when hovering at `offset`.
pub fn hover(fa: &Analysis, offset: usize) -> Option<Hover> {
    if let Some((f, sh, id)) = builtin_at(fa, offset) {
        let b = f.func.builtin(id);
        let markdown = if b.kind.is_marker() {
            marker_hover(fa, f, sh, id)
        } else if matches!(
            b.kind,
            BuiltinKind::RegionEntry
                | BuiltinKind::RegionExit
                | BuiltinKind::SectionEntry
                | BuiltinKind::SectionExit
        ) {
            token_hover(fa, f, sh, id)
        } else {
            format!(
                "{}{}\n",
                title(b, f.func.lang),
                builtin_doc(b.kind, f.func.lang)
            )
        };
        return Some(Hover {
            span: mvs(sh, b.name_span),
            markdown,
        });
    }
    let text = fa.source.text();
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let start = text[..offset].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let end = text[offset..]
        .find('\n')
        .map(|i| offset + i)
        .unwrap_or(text.len());
    let doc = directive_doc(&text[start..end])?;
    let trimmed = text[start..end].trim_end_matches('\r');
    let lead = trimmed.len() - trimmed.trim_start().len();
    let mut markdown = doc.to_string();
    // an OpenMP loop directive: what the dependence analysis found
    for (f, sh) in functions(fa) {
        for d in &f.deps {
            if let crate::dependence::Asserted::Omp { directive, .. } = &d.asserted {
                let ds = mvs(sh, *directive);
                if ds.start as usize <= offset && offset <= ds.end as usize {
                    markdown.push_str("\n\n---\n\n");
                    markdown.push_str(&dependence_summary(fa, f, sh, d));
                }
            }
        }
    }
    Some(Hover {
        span: Span::new(start + lead, start + trimmed.len()),
        markdown,
    })
}

/// The dependence facts of an asserted loop, in words: which objects are
/// proven independent, which conflict, what cannot be proven, and (OpenMP)
/// the scalars' data sharing.
fn dependence_summary(
    fa: &Analysis,
    f: &FunctionAnalysis,
    sh: i64,
    d: &crate::dependence::LoopDeps,
) -> String {
    use crate::dependence::{openmp::Sharing, Finding};
    let mut md = String::from("**Dependence analysis**\n\n");
    let code = |names: &[String]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !d.independent.is_empty() {
        md.push_str(&format!(
            "- independent across iterations (proven): {}\n",
            code(&d.independent)
        ));
    }
    for finding in &d.findings {
        match finding {
            Finding::Conflict {
                object,
                first,
                distance,
                ..
            } => md.push_str(&format!(
                "- **conflict** on `{object}` at line {}{} (CSA501)\n",
                line(fa, mv(sh, first.span.start)),
                distance
                    .map(|x| format!(", distance {}", x.abs()))
                    .unwrap_or_default()
            )),
            Finding::Unproven { object, at, .. } => md.push_str(&format!(
                "- cannot prove `{object}` independent (line {}, CSA502)\n",
                line(fa, mv(sh, at.start))
            )),
        }
    }
    if d.findings.is_empty() && d.independent.is_empty() {
        md.push_str("- no memory that iterations could share is written\n");
    }
    let mut scalars = Vec::new();
    for (u, sh_kind) in d.scalars.iter().zip(&d.sharing) {
        let name = &f.func.var(u.var).name;
        let what = match sh_kind {
            Sharing::Shared { .. } if u.first_write.is_some() && u.locked => {
                "shared, every access under one OpenMP lock".to_string()
            }
            Sharing::Shared { .. } if u.first_write.is_some() => {
                "shared and written (CSA503)".to_string()
            }
            Sharing::Shared { .. } => continue,
            Sharing::Private => "private".to_string(),
            Sharing::Firstprivate => "firstprivate".to_string(),
            Sharing::Lastprivate => "lastprivate".to_string(),
            Sharing::Reduction(_) => "reduction".to_string(),
            Sharing::Linear => "linear".to_string(),
            Sharing::Implicit(why) => format!("private ({why})"),
        };
        scalars.push(format!("`{name}` {what}"));
    }
    if !scalars.is_empty() {
        md.push_str(&format!("- scalars: {}\n", scalars.join("; ")));
    }
    md
}

/// A position in `b` for a hint: its first statement, else its terminator,
/// else the statement that made it.
fn block_start(func: &Function, b: BlockId) -> Option<u32> {
    let block = func.blocks.get(b.index())?;
    block
        .insts
        .first()
        .map(|i| i.span.start)
        .or(block.term.span.map(|s| s.start))
        .or(block.origin.map(|s| s.start))
}

fn placement_hints_for(
    fa: &Analysis,
    f: &FunctionAnalysis,
    sh: i64,
    p: &Placement,
    what: &str,
) -> Vec<PlacementHint> {
    let func = &f.func;
    let mut out = Vec::new();
    // The region entry ends the preheader: just before the loop statement.
    let loop_stmt = f
        .forest
        .ids()
        .find(|l| f.preheaders.get(l.index()).copied().flatten() == Some(p.region_entry))
        .and_then(|l| f.source_loop(l));
    let entry_at = loop_stmt
        .map(|sl| sl.span.start)
        .or_else(|| block_start(func, p.region_entry));
    if let Some(o) = entry_at {
        out.push(PlacementHint {
            offset: mv(sh, o) as usize,
            side: HintSide::Before,
            label: "region▸".to_string(),
            tooltip: format!("region entry{what}"),
        });
    }
    // Sections are shown per line: CLIE puts the entry before the first
    // memory operation of an iteration and the exit after the last, which
    // may sit in the middle of an expression.
    let text = fa.source.text();
    let line_bounds = |o: usize| {
        let o = o.min(text.len());
        let start = text[..o].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let end = text[o..].find('\n').map(|i| o + i).unwrap_or(text.len());
        let content = &text[start..end];
        let lead = content.len() - content.trim_start().len();
        (start + lead, start + content.trim_end().len())
    };
    let section_entry = p
        .section_entry_before
        .map(|s| s.start)
        .or_else(|| {
            func.blocks
                .get(p.section_begin.index())?
                .term
                .span
                .map(|s| s.start)
        })
        .or_else(|| block_start(func, p.section_begin));
    if let Some(o) = section_entry {
        out.push(PlacementHint {
            offset: line_bounds(mv(sh, o) as usize).0,
            side: HintSide::Before,
            label: "section▸".to_string(),
            tooltip: format!("section entry{what}"),
        });
    }
    let section_exit = p
        .section_exit_after
        .map(|s| s.end.saturating_sub(1))
        .or_else(|| block_start(func, p.section_end));
    if let Some(o) = section_exit {
        out.push(PlacementHint {
            offset: line_bounds(mv(sh, o) as usize).1,
            side: HintSide::After,
            label: "◂section".to_string(),
            tooltip: format!("section exit{what}"),
        });
    }
    for &exit in &p.region_exits {
        // A dedicated exit block holds no statement of its own: the exit is
        // where the loop statement ends (or the statement it runs, such as
        // a `return`).
        let block = func.blocks.get(exit.index());
        let own = block.and_then(|b| {
            b.insts
                .first()
                .map(|i| i.span.start)
                .or(b.term.span.map(|s| s.start))
        });
        let at = own
            .filter(|o| loop_stmt.is_none_or(|sl| !sl.span.range().contains(&(*o as usize))))
            .map(|o| (o, HintSide::Before))
            .or_else(|| loop_stmt.map(|sl| (sl.span.end, HintSide::After)));
        if let Some((o, side)) = at {
            out.push(PlacementHint {
                offset: mv(sh, o) as usize,
                side,
                label: "◂region".to_string(),
                tooltip: format!("region exit{what}"),
            });
        }
    }
    // Offsets inside the text, on character boundaries.
    for h in &mut out {
        h.offset = h.offset.min(text.len());
        while !text.is_char_boundary(h.offset) {
            h.offset -= 1;
        }
    }
    out
}

/// Where CLIE inserts region and section entries and exits, for every loop
/// it parallelizes, in source order.
pub fn placement_hints(fa: &Analysis) -> Vec<PlacementHint> {
    let mut out = Vec::new();
    for (f, sh) in functions(fa) {
        for v in &f.clie.verdicts {
            let (Outcome::Parallelized(p) | Outcome::BadSpmdizationKind(p)) = &v.outcome else {
                continue;
            };
            let marker = f.func.builtin(v.marker);
            let what = format!(
                " CLIE inserts for `{}` at line {}",
                short_name(marker),
                line(fa, mv(sh, marker.span.start))
            );
            out.extend(placement_hints_for(fa, f, sh, p, &what));
        }
    }
    out.sort_by_key(|h| (h.offset, h.side == HintSide::Before));
    out.dedup_by(|a, b| a.offset == b.offset && a.label == b.label);
    out
}

/// Functions, and in each the loops that carry a marker or a directive.
pub fn symbols(fa: &Analysis) -> Vec<Symbol> {
    let mut out = Vec::new();
    for (f, sh) in functions(fa) {
        let mut children = Vec::new();
        for sl in &f.func.source_loops {
            let l = f.forest.loop_with_header(sl.header.0);
            let marker = l
                .and_then(|l| f.clie.verdict_for(l))
                .map(|v| short_name(f.func.builtin(v.marker)));
            let detail = match (&marker, sl.omp, sl.ivdep) {
                (Some(m), _, _) => m.clone(),
                (None, Some(_), _) => "omp".to_string(),
                (None, None, Some(_)) => "ivdep".to_string(),
                (None, None, None) => continue,
            };
            children.push(Symbol {
                name: format!("loop at line {}", line(fa, mv(sh, sl.keyword_span.start))),
                detail,
                kind: SymbolKind::Loop,
                span: mvs(sh, sl.span),
                selection: mvs(sh, sl.keyword_span),
                children: Vec::new(),
            });
        }
        out.push(Symbol {
            name: f.func.name.clone(),
            detail: if f.func.lang == Lang::C {
                "function".to_string()
            } else {
                "procedure".to_string()
            },
            kind: SymbolKind::Function,
            span: mvs(sh, f.func.span),
            selection: mvs(sh, f.func.name_span),
            children,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyze, AnalysisOptions};
    use csa_grammars::SourceKind;

    const C: &str = "void f(double *a, double *b, int n) {\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  for (int i = 0; i < n; i++) {\n    a[i] = b[i] * 2.0;\n  }\n}\n";

    fn fa(text: &str) -> Analysis {
        analyze(SourceKind::C, text, &AnalysisOptions::default())
    }

    #[test]
    fn marker_hover_names_the_loop_and_the_placement() {
        let fa = fa(C);
        let at = C.find("parallel_loop").unwrap();
        let h = hover(&fa, at).unwrap();
        assert_eq!(&C[h.span.range()], "__builtin_csa_parallel_loop");
        assert!(
            h.markdown.contains("Attaches to the loop at line 5"),
            "{}",
            h.markdown
        );
        assert!(
            h.markdown.contains("CLIE parallelizes it"),
            "{}",
            h.markdown
        );
        assert!(
            h.markdown.contains("section entry at line 6"),
            "{}",
            h.markdown
        );
    }

    #[test]
    fn hints_bracket_the_loop_and_the_body() {
        let fa = fa(C);
        let hints = placement_hints(&fa);
        let labels: Vec<(u32, &str)> = hints
            .iter()
            .map(|h| (fa.source.line_col(h.offset).line, h.label.as_str()))
            .collect();
        assert_eq!(
            labels,
            [
                (5, "region▸"),
                (6, "section▸"),
                (6, "◂section"),
                (7, "◂region")
            ],
            "{hints:?}"
        );
    }

    #[test]
    fn unattached_marker_and_directives() {
        let text = "void g(int *a, int n) {\n  __builtin_csa_parallel_loop();\n  if (n) a[0] = 1; else a[1] = 2;\n#pragma omp parallel for\n  for (int i = 0; i < n; i++) a[i] = 0;\n}\n";
        let fa = fa(text);
        let h = hover(&fa, text.find("parallel_loop").unwrap()).unwrap();
        assert!(h.markdown.contains("Not attached"), "{}", h.markdown);
        assert!(h.markdown.contains("CSA105"), "{}", h.markdown);
        let h = hover(&fa, text.find("omp").unwrap()).unwrap();
        assert!(h.markdown.contains("OpenMP"));
        assert_eq!(&text[h.span.range()], "#pragma omp parallel for");
        assert!(hover(&fa, text.find("if (n)").unwrap()).is_none());
        let s = symbols(&fa);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].name, "g");
        assert_eq!(s[0].children.len(), 1);
        assert_eq!(s[0].children[0].detail, "omp");
    }

    #[test]
    fn token_hover_names_the_region() {
        let text = "void h(int *a, int *b) {\n  int r = __builtin_csa_parallel_region_entry(7);\n  int s = __builtin_csa_parallel_section_entry(r);\n  a[0] = 1;\n  __builtin_csa_parallel_section_exit(s);\n  __builtin_csa_parallel_region_exit(r);\n}\n";
        let fa = fa(text);
        let h = hover(&fa, text.find("section_entry").unwrap()).unwrap();
        assert!(h.markdown.contains("Region 7"), "{}", h.markdown);
        assert!(h.markdown.contains("line 2"), "{}", h.markdown);
        let h = hover(&fa, text.find("region_entry").unwrap()).unwrap();
        assert!(h.markdown.contains("Opens region 7"), "{}", h.markdown);
    }

    #[test]
    fn nothing_panics_on_garbage() {
        for text in [
            "",
            "}}}{{",
            "void f( { __builtin_csa_parallel_loop(",
            "\u{e9}\u{e9}",
        ] {
            let fa = fa(text);
            for o in 0..=text.len() + 2 {
                let _ = hover(&fa, o);
            }
            let _ = placement_hints(&fa);
            let _ = symbols(&fa);
        }
    }

    #[test]
    fn marker_hover_summarises_the_dependences() {
        let src = "double A[100], B[100];\nvoid f(void) {\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < 99; i++) {\n    A[i] = A[i + 1];\n    B[i] = 0;\n  }\n}\n";
        let fa = fa(src);
        let h = hover(&fa, src.find("parallel_loop").unwrap()).unwrap();
        assert!(
            h.markdown
                .contains("**conflict** on `A` at line 5, distance 1"),
            "{}",
            h.markdown
        );
        assert!(
            h.markdown
                .contains("independent across iterations (proven): `B`"),
            "{}",
            h.markdown
        );
    }

    #[test]
    fn openmp_directive_hover_shows_scalar_sharing() {
        let src = "double A[100];\nvoid f(int n) {\n  double t, s = 0;\n#pragma omp parallel for reduction(+:s)\n  for (int i = 0; i < n; i++) {\n    t = A[i];\n    s += t;\n  }\n}\n";
        let fa = fa(src);
        let h = hover(&fa, src.find("omp parallel").unwrap()).unwrap();
        assert!(
            h.markdown.contains("`t` shared and written (CSA503)"),
            "{}",
            h.markdown
        );
        assert!(h.markdown.contains("`s` reduction"), "{}", h.markdown);
        assert!(
            h.markdown
                .contains("no memory that iterations could share is written"),
            "{}",
            h.markdown
        );
    }
}
