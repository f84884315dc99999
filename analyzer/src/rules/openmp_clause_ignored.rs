//! # CSA403 openmp-clause-ignored
//!
//! ## What it does
//! Reports OpenMP clauses that the CSA compiler's OpenMP lowering (the
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
use crate::ir::*;
use crate::omp::{self, ClauseKind, OmpLang};
use crate::source::Span;

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    let func = cx.func;
    let text = cx.src.text();
    let lang = OmpLang::from(func.lang);
    // every directive: the loops' and the `parallel` constructs'
    let mut spans: Vec<Span> = func.source_loops.iter().filter_map(|sl| sl.omp).collect();
    spans.extend(func.omp_regions.iter().map(|r| r.directive));
    spans.sort_by_key(|s| s.start);
    spans.dedup();
    for span in spans {
        let Some(t) = text.get(span.start as usize..span.end as usize) else {
            continue;
        };
        let Some(d) = omp::parse_directive(t, lang) else {
            continue;
        };
        let words: Vec<&str> = d.words.iter().map(|w| w.as_str()).collect();
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
                        Code(403),
                        clause,
                        format!("`{written}` is not honoured by the CSA OpenMP lowering: {why}"),
                    )
                    .with_help("Use schedule(static[, K]) with a constant K and a constant num_threads on the combined parallel loop directive, or suppress this warning where the clause is meant for other compilers."),
                );
            }
        }
    }
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
