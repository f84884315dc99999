//! The rule registry: one file per rule, whose `//!` documentation is the
//! text of `csa-lint --explain CODE` (What it does / Why it matters /
//! Example / How to fix / Fix safety). Rules turn the facts computed by the
//! passes (`clie`, `memory`, the front ends) into diagnostics; they do not
//! analyse on their own.

mod ambiguous_region_id;
mod bad_fortran_intrinsic;
mod bad_parallel_section_intrinsics;
mod bad_spmd_intrinsic;
mod could_not_parallelize;
mod could_not_pipeline;
mod irreducible_control_flow;
mod iteration_local_storage;
mod loop_carried_conflict;
mod memory_outside_section;
mod no_memory_operations;
mod non_constant_region_id;
mod not_available_in_fortran;
mod openmp_clause_ignored;
mod pipeline_has_no_effect;
mod redundant_parallel_loop;
mod reserved_region_id;
mod reused_region_id;
mod shadowed_loop_marker;
mod shared_scalar_in_openmp_loop;
mod single_worker_spmd;
mod spmdization_not_performed;
mod syntax_error;
mod token_not_connected;
mod unattached_loop_marker;
mod unguarded_builtin;
mod unproven_independence;
mod unused_suppression;
mod worker_num_outside_spmd;

use crate::clie::ClieResult;
use crate::diag::{Code, Diagnostic, Rule};
use crate::graph::loops::{LoopForest, LoopId};
use crate::ir::*;
use crate::memory::MemoryInfo;
use crate::source::{SourceText, Span};

/// Every rule, by code.
pub static RULES: &[&Rule] = &[
    &syntax_error::RULE,
    &irreducible_control_flow::RULE,
    &could_not_parallelize::RULE,
    &no_memory_operations::RULE,
    &bad_spmd_intrinsic::RULE,
    &could_not_pipeline::RULE,
    &unattached_loop_marker::RULE,
    &shadowed_loop_marker::RULE,
    &bad_fortran_intrinsic::RULE,
    &not_available_in_fortran::RULE,
    &pipeline_has_no_effect::RULE,
    &worker_num_outside_spmd::RULE,
    &single_worker_spmd::RULE,
    &spmdization_not_performed::RULE,
    &bad_parallel_section_intrinsics::RULE,
    &token_not_connected::RULE,
    &ambiguous_region_id::RULE,
    &non_constant_region_id::RULE,
    &reserved_region_id::RULE,
    &reused_region_id::RULE,
    &memory_outside_section::RULE,
    &redundant_parallel_loop::RULE,
    &iteration_local_storage::RULE,
    &unguarded_builtin::RULE,
    &unused_suppression::RULE,
    &openmp_clause_ignored::RULE,
    &loop_carried_conflict::RULE,
    &unproven_independence::RULE,
    &shared_scalar_in_openmp_loop::RULE,
];

/// The rule with this code.
pub fn lookup(code: Code) -> Option<&'static Rule> {
    RULES.iter().copied().find(|r| r.code == code)
}

/// The rule with this name (`could-not-parallelize`) or code (`CSA101`).
pub fn find(name_or_code: &str) -> Option<&'static Rule> {
    match Code::parse(name_or_code) {
        Some(c) => lookup(c),
        None => RULES.iter().copied().find(|r| r.name == name_or_code),
    }
}

/// The rule reference (`docs/rules.md`): a table of every rule, then each
/// rule's documentation with its headings one level down.
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "# Rules\n\n<!-- Generated from the `//!` documentation of analyzer/src/rules/*.rs; do not edit.\n     Regenerate with `CSA_LINT_BLESS=1 cargo test -p csa-analyzer --test rules_doc`. -->\n\n",
    );
    out.push_str(
        "Every rule `csa-lint` reports; `csa-lint --explain CODE` prints the same text.\n\n",
    );
    out.push_str("| Code | Name | Severity | Fixable | Summary |\n|---|---|---|---|---|\n");
    for r in RULES {
        out.push_str(&format!(
            "| [{code}](#{anchor}) | `{name}` | {sev} | {fix} | {summary} |\n",
            code = r.code,
            anchor = format!("{}-{}", r.code, r.name).to_ascii_lowercase(),
            name = r.name,
            sev = r.severity.as_str(),
            fix = if r.fixable { "yes" } else { "no" },
            summary = r.summary.replace('|', "\\|"),
        ));
    }
    for r in RULES {
        out.push('\n');
        let mut in_code = false;
        for line in r.doc().lines() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
            }
            if !in_code && line.starts_with('#') {
                out.push('#');
            }
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Everything a rule may look at for one function.
pub struct FunctionContext<'a> {
    pub func: &'a Function,
    pub succs: &'a crate::graph::Csr,
    pub src: &'a SourceText,
    pub forest: &'a LoopForest,
    pub preheaders: &'a [Option<BlockId>],
    pub memory: &'a MemoryInfo,
    pub clie: &'a ClieResult,
    pub reachable: &'a [bool],
    /// Retreating edges whose target does not dominate their source.
    pub irreducible_edges: &'a [(u32, u32)],
    /// Region/section token resolution.
    pub tokens: &'a crate::regions::tokens::TokenInfo,
    pub events: &'a crate::regions::events::MemopCfg,
    pub membership: &'a crate::regions::membership::MembershipInfo,
    pub ordering: &'a crate::regions::ordering::OrderingInfo,
    /// Dependence facts of the loops asserted parallel.
    pub deps: &'a [crate::dependence::LoopDeps],
    /// Functions known to touch no memory beyond the built-in list: the
    /// configured ones and those the file declares `readnone`.
    pub pure_functions: &'a [String],
    /// The file is fixed-form Fortran (columns 73 on are a comment).
    pub fixed_form: bool,
    /// CSA301 is off (`disable-loop-storage-check`).
    pub disable_loop_storage_check: bool,
    /// The preprocessor's conditionals (for fixes that remove an
    /// `#ifdef __CSA__` wrapper).
    pub pre: &'a csa_grammars::preproc::Preprocessed,
    /// Whether a cpp macro has a definition the analysis was given (a
    /// define, or a `#define` in the file, its prelude or a header).
    pub macro_defined: &'a dyn Fn(&str) -> bool,
}

impl FunctionContext<'_> {
    /// An unsafe or safe fix that removes a marker (and an `#ifdef __CSA__`
    /// wrapper holding nothing else); none when the marker is part of a
    /// larger expression (removing the call would break it).
    pub fn remove_marker_fix(
        &self,
        b: &BuiltinCall,
        applicability: crate::diag::Applicability,
    ) -> Option<crate::diag::Fix> {
        if !b.statement {
            return None;
        }
        Some(crate::diag::Fix {
            kind: crate::diag::FixKind::RemoveMarker,
            title: format!("Remove the {} marker", self.builtin_name(b)),
            applicability,
            edits: crate::fix::marker_removal(
                self.src.text(),
                self.pre,
                b.span,
                self.fixed_form,
            ),
        })
    }

    /// `line N` for a span, in a message: a line reference that moves
    /// with the text (see `diag::LineRef`).
    pub fn line(&self, span: Span) -> crate::diag::LineRef {
        crate::diag::LineRef(span.start)
    }

    /// The source loop statement of a natural loop, if the loop came from one.
    pub fn source_loop(&self, l: LoopId) -> Option<&SourceLoop> {
        let header = self.forest.loops.get(l.0 as usize)?.header;
        self.func.source_loop_with_header(header)
    }

    /// A span that stands for the loop: its statement, or its header's
    /// first instruction/terminator.
    pub fn loop_span(&self, l: LoopId) -> Span {
        if let Some(sl) = self.source_loop(l) {
            return sl.keyword_span;
        }
        let header = BlockId(self.forest.loops[l.0 as usize].header);
        let b = self.func.block(header);
        b.insts
            .first()
            .map(|i| i.span)
            .or(b.term.span)
            .or(b.origin)
            .unwrap_or(self.func.name_span)
    }

    /// A region, for messages: `region 3`, `the region CLIE places for the
    /// loop at line 7`, `the OpenMP loop at line 9`.
    pub fn region_name(&self, r: crate::regions::events::RegionKey) -> String {
        use crate::regions::events::RegionKey;
        match r {
            RegionKey::User(id) => format!("region {id}"),
            RegionKey::Clie(l) => format!(
                "the region CLIE places for the loop at {}",
                self.line(self.loop_span(l))
            ),
            RegionKey::Omp(i) => match self.func.source_loops.get(i) {
                Some(sl) => format!("the OpenMP loop at {}", self.line(sl.span)),
                None => "an OpenMP loop".to_string(),
            },
            RegionKey::OmpSections(i) => match self.func.omp_sections.get(i) {
                Some(s) => format!("the OpenMP sections at {}", self.line(s.directive)),
                None => "OpenMP sections".to_string(),
            },
        }
    }

    /// The builtin's name without prefix, for messages (`parallel_loop`).
    pub fn builtin_name(&self, b: &BuiltinCall) -> String {
        b.short_name()
    }
}

/// Everything a file-level rule may look at.
pub struct FileContext<'a> {
    pub lang: Lang,
    pub src: &'a SourceText,
    pub functions: &'a [&'a Function],
    pub toplevel_errors: &'a [Span],
    /// The parser gave up on the file (`csa_grammars::parse_budget`).
    pub parse_gave_up: bool,
    /// True at offsets guarded by `#ifdef __CSA__` (C only).
    pub csa_guarded: &'a dyn Fn(usize) -> bool,
    /// Whether a cpp macro has a definition the analysis was given (a
    /// define, or a `#define` in the file, its prelude or a header).
    pub macro_defined: &'a dyn Fn(&str) -> bool,
}

/// Runs every per-function rule.
pub fn check_function(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    syntax_error::check(cx, out);
    irreducible_control_flow::check(cx, out);
    could_not_parallelize::check(cx, out);
    no_memory_operations::check(cx, out);
    bad_spmd_intrinsic::check(cx, out);
    could_not_pipeline::check(cx, out);
    unattached_loop_marker::check(cx, out);
    shadowed_loop_marker::check(cx, out);
    bad_fortran_intrinsic::check(cx, out);
    not_available_in_fortran::check(cx, out);
    pipeline_has_no_effect::check(cx, out);
    worker_num_outside_spmd::check(cx, out);
    single_worker_spmd::check(cx, out);
    spmdization_not_performed::check(cx, out);
    token_not_connected::check(cx, out);
    ambiguous_region_id::check(cx, out);
    non_constant_region_id::check(cx, out);
    reserved_region_id::check(cx, out);
    reused_region_id::check(cx, out);
    bad_parallel_section_intrinsics::check(cx, out);
    memory_outside_section::check(cx, out);
    redundant_parallel_loop::check(cx, out);
    iteration_local_storage::check(cx, out);
    loop_carried_conflict::check(cx, out);
    unproven_independence::check(cx, out);
    shared_scalar_in_openmp_loop::check(cx, out);
    openmp_clause_ignored::check(cx, out);
}

/// Reports unused suppressions (CSA402); `used` from `suppress::apply`.
pub(crate) fn check_suppressions(
    sups: &[crate::suppress::Suppression],
    used: &crate::suppress::Used,
    src: &SourceText,
    out: &mut Vec<Diagnostic>,
) {
    unused_suppression::check(sups, used, src, out);
}

/// Runs every file-level rule.
pub fn check_file(cx: &FileContext, out: &mut Vec<Diagnostic>) {
    syntax_error::check_toplevel(cx, out);
    unguarded_builtin::check(cx, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_complete_documentation() {
        for r in RULES {
            let doc = r.doc();
            for heading in [
                "## What it does",
                "## Why it matters",
                "## Example",
                "## How to fix",
                "## Fix safety",
            ] {
                assert!(doc.contains(heading), "{} lacks {heading}:\n{doc}", r.code);
            }
            assert!(
                doc.starts_with(&format!("# {} {}", r.code, r.name)),
                "{}",
                r.code
            );
        }
    }

    #[test]
    fn codes_and_names_are_unique() {
        for (i, a) in RULES.iter().enumerate() {
            for b in &RULES[i + 1..] {
                assert_ne!(a.code, b.code);
                assert_ne!(a.name, b.name);
            }
        }
    }
}
