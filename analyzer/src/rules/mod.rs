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
use crate::diag::{Code, Diagnostic, Severity};
use crate::graph::loops::{LoopForest, LoopId};
use crate::ir::*;
use crate::memory::MemoryInfo;
use crate::source::{SourceText, Span};

/// A rule's identity and documentation.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub code: Code,
    pub name: &'static str,
    pub severity: Severity,
    /// One line: what the rule reports.
    pub summary: &'static str,
    /// Whether the rule offers a fix.
    pub fixable: bool,
    /// The rule file's source; its leading `//!` lines are the documentation.
    source: &'static str,
}

impl Rule {
    /// The rule's documentation (Markdown).
    pub fn doc(&self) -> String {
        let mut out = String::new();
        for line in self.source.lines() {
            let Some(rest) = line.strip_prefix("//!") else {
                if line.trim().is_empty() && !out.is_empty() {
                    continue;
                }
                break;
            };
            out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            out.push('\n');
        }
        out
    }
}

macro_rules! rule {
    ($code:expr, $name:expr, $sev:ident, $fixable:expr, $file:literal, $summary:expr) => {
        Rule {
            code: Code($code),
            name: $name,
            severity: Severity::$sev,
            summary: $summary,
            fixable: $fixable,
            source: include_str!($file),
        }
    };
}

/// Every rule, by code.
pub static RULES: &[Rule] = &[
    rule!(1, "syntax-error", Info, false, "syntax_error.rs", "The parser found a syntax error; analysis of that function may be partial"),
    rule!(2, "irreducible-control-flow", Error, false, "irreducible_control_flow.rs", "A loop with two entries (goto into a loop): the compiler stops with a fatal error"),
    rule!(101, "could-not-parallelize", Warning, true, "could_not_parallelize.rs", "CLIE finds no parallel section for a marked loop and ignores the marker"),
    rule!(102, "no-memory-operations", Warning, true, "no_memory_operations.rs", "A loop marked parallel has no memory operations, so the marker does nothing"),
    rule!(103, "bad-spmd-intrinsic", Warning, false, "bad_spmd_intrinsic.rs", "An spmd/spmdization marker has an invalid worker count, chunk size or kind"),
    rule!(104, "could-not-pipeline", Warning, false, "could_not_pipeline.rs", "A pipeline_loop marker has a negative depth"),
    rule!(105, "unattached-loop-marker", Warning, true, "unattached_loop_marker.rs", "A loop marker that no loop finds is silently deleted"),
    rule!(106, "shadowed-loop-marker", Warning, true, "shadowed_loop_marker.rs", "A loop marker loses to a nearer marker on the same loop and is silently deleted"),
    rule!(107, "bad-fortran-intrinsic", Warning, false, "bad_fortran_intrinsic.rs", "A Fortran builtin call has non-constant arguments or the wrong number of them and is ignored"),
    rule!(108, "not-available-in-fortran", Error, false, "not_available_in_fortran.rs", "Region/section intrinsics and spmdization do not exist in Fortran"),
    rule!(109, "pipeline-has-no-effect", Info, false, "pipeline_has_no_effect.rs", "pipeline_loop on a loop that is not nested in a loop, or with depth 1, does nothing"),
    rule!(110, "worker-num-outside-spmd", Warning, false, "worker_num_outside_spmd.rs", "spmd_worker_num() outside an SPMDized loop is deleted with everything computed from it"),
    rule!(111, "single-worker-spmd", Info, false, "single_worker_spmd.rs", "spmd with one worker is just parallel_loop"),
    rule!(112, "spmdization-not-performed", Warning, false, "spmdization_not_performed.rs", "The compiler does not split an spmd loop into workers; it runs as one, and worker_num code is deleted"),
    rule!(201, "bad-parallel-section-intrinsics", Warning, false, "bad_parallel_section_intrinsics.rs", "Region/section intrinsics whose meaning depends on the path: the compiler ignores every region of the function, or silently orders it its own way"),
    rule!(202, "token-not-connected", Error, false, "token_not_connected.rs", "A region/section intrinsic's token does not come from an entry of the right kind on every path"),
    rule!(203, "ambiguous-region-id", Warning, false, "ambiguous_region_id.rs", "A token comes from region entries with different ids; the compiler silently takes the first"),
    rule!(204, "non-constant-region-id", Error, false, "non_constant_region_id.rs", "A region entry's id is not an integer constant: the compiler stops with a fatal error"),
    rule!(205, "reserved-region-id", Warning, false, "reserved_region_id.rs", "Region ids from 1000 up are reserved for the compiler"),
    rule!(206, "reused-region-id", Warning, false, "reused_region_id.rs", "Two unrelated regions use the same id, so the compiler treats them as one region"),
    rule!(207, "memory-outside-section", Info, false, "memory_outside_section.rs", "A memory operation inside a region but in no section keeps full ordering"),
    rule!(208, "redundant-parallel-loop", Info, true, "redundant_parallel_loop.rs", "parallel_loop on a loop whose alias sets hold only loads or one store changes nothing"),
    rule!(301, "iteration-local-storage", Warning, true, "iteration_local_storage.rs", "Storage declared inside a parallelized loop is shared by all iterations"),
    rule!(401, "unguarded-builtin", Info, true, "unguarded_builtin.rs", "A __builtin_csa_* call outside #ifdef __CSA__ breaks non-CSA builds"),
    rule!(402, "unused-suppression", Warning, true, "unused_suppression.rs", "A csa-lint suppression comment that suppresses nothing"),
    rule!(403, "openmp-clause-ignored", Warning, false, "openmp_clause_ignored.rs", "An OpenMP clause or construct the CSA compiler's OpenMP lowering ignores or replaces"),
    rule!(501, "loop-carried-conflict", Error, false, "loop_carried_conflict.rs", "Two iterations of a loop asserted parallel access the same element, one writing it"),
    rule!(502, "unproven-independence", Warning, false, "unproven_independence.rs", "The iterations of a loop asserted parallel cannot be proven independent"),
    rule!(503, "shared-scalar-in-openmp-loop", Warning, true, "shared_scalar_in_openmp_loop.rs", "A shared scalar written in an OpenMP loop, or a private/reduction clause that does not fit"),
];

/// The rule with this code.
pub fn lookup(code: Code) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code == code)
}

/// The rule with this name (`could-not-parallelize`) or code (`CSA101`).
pub fn find(name_or_code: &str) -> Option<&'static Rule> {
    match Code::parse(name_or_code) {
        Some(c) => lookup(c),
        None => RULES.iter().find(|r| r.name == name_or_code),
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
    /// CSA301 is off (`disable-loop-storage-check`).
    pub disable_loop_storage_check: bool,
    /// The preprocessor's conditionals (for fixes that remove an
    /// `#ifdef __CSA__` wrapper).
    pub pre: &'a csa_grammars::preproc::Preprocessed,
}

impl FunctionContext<'_> {
    /// An unsafe or safe fix that removes a marker (and an `#ifdef __CSA__`
    /// wrapper holding nothing else).
    pub fn remove_marker_fix(
        &self,
        b: &BuiltinCall,
        applicability: crate::diag::Applicability,
    ) -> crate::diag::Fix {
        crate::diag::Fix {
            title: format!("Remove the {} marker", self.builtin_name(b)),
            applicability,
            edits: crate::rewrite::marker_removal_in(self.src.text(), self.pre, b.span),
        }
    }

    /// `line N` for a span.
    pub fn line(&self, span: Span) -> String {
        format!("line {}", self.src.line_col(span.start as usize).line)
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
