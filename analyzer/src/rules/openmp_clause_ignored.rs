//! # CSA403 openmp-clause-ignored
//!
//! ## What it does
//! Reports OpenMP clauses and constructs that the CSA compiler's OpenMP lowering (the
//! VPO Paropt CSA path: `VPOParoptTransform::isSupportedOnCSA`,
//! `genCSALoop`, `getNumWorkers`, `getSPMDMode` in
//! VPOParoptTransformCSA.cpp) ignores or replaces, and says what it does
//! instead. A CSA build of an OpenMP loop is one parallel region with a
//! section per iteration, split into workers (LoopSPMDization) when the
//! loop has more than one:
//! * `schedule(dynamic|guided|runtime)`: it warns "ignoring unsupported
//!   schedule type" and distributes the iterations in blocks, as
//!   `schedule(static)` does;
//! * a `schedule` chunk that is not a compile-time constant: it warns
//!   "schedule chunk must be a compile time constant" and distributes in
//!   blocks;
//! * `num_threads` that is not a compile-time constant: it warns
//!   "num_threads must be a compile time constant" and the loop runs with
//!   one worker;
//! * `num_threads` on a `parallel` construct that is not a combined
//!   `parallel for`/`parallel do` (or on `parallel sections`): only a
//!   combined loop takes its worker count from it; the loops inside run
//!   with one worker (unless a combined directive says otherwise);
//! * `proc_bind`: it warns "ignoring unsupported proc_bind clause";
//! * `if(...)`, `linear`, `copyin` and the `ordered` clause: silently
//!   ignored (the loop is parallel whatever the condition; a linear
//!   variable gets no linear value per iteration).
//! * constructs it does not support at all (`isSupportedOnCSA` accepts
//!   `parallel`, worksharing loops, `sections`, `single`, `master`,
//!   `critical`, `barrier`, `atomic` and `target`): it warns `ignoring
//!   unsupported "omp <name>"` and drops them: `task`, `taskloop`,
//!   `taskgroup`, `taskwait`, `taskyield`, `simd` (also the `simd` part of
//!   `parallel for simd`), `ordered` (the block is then not ordered),
//!   `flush`, `cancel`, `teams`, `distribute`, `workshare`, `loop`,
//!   `target data`/`update`/`enter data`/`exit data`. The clauses of a
//!   construct that is dropped whole are not reported on their own.
//!
//! An expression is taken as a compile-time constant when it is made of
//! literals and named constants (enumerators, `#define`s, `const` locals
//! with a literal initializer, PARAMETERs); one that names a variable or
//! calls a function is not; a name csa-lint cannot see (a macro from a
//! header) is given the benefit of the doubt.
//!
//! ## Why it matters
//! The loop runs differently on CSA than the directive says (fewer
//! workers, another distribution, parallel where `if` said serial),
//! usually with a warning only in the build log, or silently.
//!
//! ## Example
//! ```c
//! #pragma omp parallel for schedule(dynamic, 4) num_threads(nt)
//! for (int i = 0; i < n; i++) a[i] = f(i);
//! ```
//!
//! ## How to fix
//! Use `schedule(static[, K])` with a constant `K`, a constant
//! `num_threads` on the combined `parallel for`/`parallel do`, and drop
//! the clauses the CSA build does not honour (or keep them for other
//! compilers and suppress this warning).
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::*;
use crate::omp::{self, ClauseKind, OmpLang};
use crate::source::Span;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(403),
    name: "openmp-clause-ignored",
    severity: Severity::Warning,
    fixable: false,
    summary: "An OpenMP clause or construct the CSA compiler's OpenMP lowering ignores or replaces",
    source: include_str!("openmp_clause_ignored.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    let func = cx.func;
    let text = cx.src.text();
    let lang = OmpLang::from(func.lang);
    // every directive of the function (the loops' and the regions' too)
    let mut spans: Vec<Span> = func.omp_directives.clone();
    spans.sort_by_key(|s| (s.start, s.end));
    spans.dedup();
    for span in spans {
        let Some(t) = text.get(span.start as usize..span.end as usize) else {
            continue;
        };
        let Some(d) = omp::parse_directive(t, lang) else {
            continue;
        };
        let words: Vec<&str> = d.words.iter().map(|w| w.as_str()).collect();
        let name_span = Span {
            start: span.start + d.name_range.start as u32,
            end: span.start + d.name_range.end as u32,
        };
        let (unsupported, any_supported) = constructs(&words);
        for (name, what) in &unsupported {
            out.push(
                Diagnostic::new(
                    &RULE,
                    name_span,
                    format!(
                        "`omp {name}` is not supported by the CSA OpenMP lowering: the CSA compiler warns `ignoring unsupported \"omp {name}\"` and {what}"
                    ),
                )
                .with_help("Keep the directive out of CSA builds (a preprocessor conditional on __CSA__), or suppress this warning where it is meant for other compilers."),
            );
        }
        if !any_supported {
            continue; // the whole directive is dropped: its clauses too
        }
        let combined_loop = matches!(
            words.as_slice(),
            ["parallel", "for", ..] | ["parallel", "do", ..]
        );
        let at = |r: &std::ops::Range<usize>| Span {
            start: span.start + r.start as u32,
            end: span.start + r.end as u32,
        };
        for c in &d.clauses {
            let clause = at(&c.range);
            let written = text
                .get(clause.start as usize..clause.end as usize)
                .unwrap_or_default()
                .trim();
            let why = match &c.kind {
                ClauseKind::Schedule { kind, .. }
                    if matches!(kind.to_ascii_lowercase().as_str(), "dynamic" | "guided" | "runtime") =>
                {
                    Some("the CSA compiler warns \"ignoring unsupported schedule type\" and distributes the iterations in blocks, as schedule(static) does".to_string())
                }
                ClauseKind::Schedule { chunk: Some(k), .. } if !constant(func, k) => Some(
                    "the chunk is not a compile-time constant: the CSA compiler warns \"schedule chunk must be a compile time constant\" and distributes the iterations in blocks".to_string(),
                ),
                ClauseKind::NumThreads(e) if !constant(func, e) => Some(
                    "the CSA compiler warns \"num_threads must be a compile time constant\" and runs the loop with one worker".to_string(),
                ),
                ClauseKind::NumThreads(_) if !combined_loop => Some(
                    "the CSA compiler takes a worker count from num_threads only on a combined parallel loop directive (a parallel construct's body runs once, and worksharing loops inside it run with one worker)".to_string(),
                ),
                ClauseKind::Other(n) if n.eq_ignore_ascii_case("proc_bind") => Some(
                    "the CSA compiler warns \"ignoring unsupported proc_bind clause\"".to_string(),
                ),
                ClauseKind::Other(n) if n.eq_ignore_ascii_case("copyin") => {
                    Some("the CSA compiler ignores it without a message".to_string())
                }
                ClauseKind::If(_) => Some(
                    "the CSA compiler ignores it without a message: the construct is parallel whatever the condition".to_string(),
                ),
                ClauseKind::Linear { .. } => Some(
                    "the CSA compiler ignores it without a message: the variable gets no linear value per iteration".to_string(),
                ),
                ClauseKind::Ordered => {
                    Some("the CSA compiler ignores it without a message".to_string())
                }
                _ => None,
            };
            if let Some(why) = why {
                out.push(
                    Diagnostic::new(
                        &RULE,
                        clause,
                        format!("`{written}` is not honoured by the CSA OpenMP lowering: {why}"),
                    )
                    .with_help("Use schedule(static[, K]) with a constant K and a constant num_threads on the combined parallel loop directive, or suppress this warning where the clause is meant for other compilers."),
                );
            }
        }
    }
}

/// The OpenMP constructs a directive name stands for in the CSA OpenMP
/// lowering (VPO Paropt's work regions, `VPOParoptTransform::
/// isSupportedOnCSA`): the unsupported ones, with the name the compiler's
/// warning gives them (`WRNName`) and what happens instead, and whether any
/// part is supported (parallel, worksharing loops, sections, single,
/// master, critical, barrier, atomic, target). Composite directives are
/// several work regions (`parallel for simd` is a parallel loop and a
/// `simd`). Declarative directives and names csa-lint does not know are
/// neither.
fn constructs(words: &[&str]) -> (Vec<(&'static str, &'static str)>, bool) {
    const SEQUENTIAL: &str = "its code runs once, sequentially";
    const NOTHING: &str = "the directive does nothing";
    let mut bad = Vec::new();
    let mut supported = false;
    if words.first() == Some(&"end") {
        return (bad, true);
    }
    let mut i = 0;
    while i < words.len() {
        let next = words.get(i + 1).copied();
        let mut step = 1;
        match words[i] {
            "parallel" if next == Some("workshare") => {
                bad.push(("parallel workshare", SEQUENTIAL));
                step = 2;
            }
            "parallel" | "for" | "do" | "sections" | "section" | "single" | "master" | "critical"
            | "barrier" | "atomic" => supported = true,
            "target" => {
                // the data-movement forms (`target enter data` is three words)
                const DATA: [(&str, &str, usize); 4] = [
                    ("data", "target data", 2),
                    ("update", "target update", 2),
                    ("enter", "target enter data", 3),
                    ("exit", "target exit data", 3),
                ];
                match DATA.iter().find(|d| next == Some(d.0)) {
                    Some(&(_, name, words)) => {
                        bad.push((name, NOTHING));
                        step = words;
                    }
                    None => supported = true,
                }
            }
            "distribute"
                if next == Some("parallel")
                    && matches!(words.get(i + 2).copied(), Some("for" | "do")) =>
            {
                bad.push(("distribute parallel loop", SEQUENTIAL));
                step = 3;
            }
            "distribute" => bad.push(("distribute", SEQUENTIAL)),
            "teams" => bad.push(("teams", SEQUENTIAL)),
            "simd" => bad.push((
                "simd",
                "drops it: it asserts nothing to the CSA compiler (a CSA build needs a parallel_loop marker or a worksharing loop)",
            )),
            "task" => bad.push(("task", "its code runs where the directive is, as ordinary code")),
            "taskloop" => bad.push(("taskloop", "the loop runs sequentially")),
            "taskgroup" => bad.push(("taskgroup", "its code runs as ordinary code")),
            "taskwait" => bad.push(("taskwait", NOTHING)),
            "taskyield" => bad.push(("taskyield", NOTHING)),
            "flush" => bad.push(("flush", NOTHING)),
            "ordered" => bad.push((
                "ordered",
                "the block is not ordered: in a loop the CSA build runs in parallel, iterations run it in any order and at the same time",
            )),
            "cancel" => bad.push(("cancel", "nothing is cancelled: the construct runs to its end")),
            "cancellation" if next == Some("point") => {
                bad.push(("cancel", NOTHING));
                step = 2;
            }
            "workshare" => bad.push(("workshare", SEQUENTIAL)),
            "loop" => bad.push(("generic loop", "the loop runs sequentially")),
            _ => return (Vec::new(), true), // not a construct csa-lint knows
        }
        i += step;
    }
    (bad, supported)
}

/// Whether an OpenMP clause argument is a compile-time constant, as far as
/// the function shows: literals, named constants, arithmetic; an unknown
/// name (a macro from a header) counts as one.
fn constant(func: &Function, e: &str) -> bool {
    let bytes = e.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let name = &e[start..i];
            // a call
            if e[i..].trim_start().starts_with('(') {
                return false;
            }
            let var = func.vars.iter().find(|v| {
                if func.lang == Lang::Fortran {
                    v.name.eq_ignore_ascii_case(name)
                } else {
                    v.name == name
                }
            });
            if let Some(v) = var {
                if v.kind != VarKind::Constant && v.ty.const_value.is_none() {
                    return false;
                }
            }
        } else {
            i += 1;
        }
    }
    true
}
