//! # CSA501 loop-carried-conflict
//!
//! ## What it does
//! Reports a loop asserted parallel (a CSA `parallel_loop`, `spmd` or
//! `spmdization` marker that the compiler acts on, or an OpenMP
//! worksharing loop) in which two different iterations provably access the
//! same memory element and at least one of them writes it. The diagnostic
//! sits on one access and names the other, with the distance between the
//! iterations when it is fixed (`a[i]` written, `a[i+1]` read: distance 1).
//!
//! ## Why it matters
//! The compiler trusts the assertion. Iterations run concurrently, in any
//! order: a read may see the value before or after another iteration's
//! write, and two writes may land in either order. The program then
//! computes wrong results, silently and not reproducibly. The compiler
//! prints nothing.
//!
//! For a CSA marker only memory counts: scalar locals and arrays indexed
//! by constants live in registers, and the compiler keeps their values
//! flowing from one iteration to the next (`sum = sum + a[i]` is a valid
//! `parallel_loop`). Globals, statics, arrays indexed by variables, memory
//! behind pointers and Fortran dummy arguments are memory, and so is a
//! local whose address escapes (in Fortran, a variable passed to a
//! procedure or to an I/O statement after the loop).
//!
//! In an OpenMP loop, two accesses that both run under one lock never
//! run at the same time and are not a conflict: both in `atomic`
//! statements, or both in `critical` constructs of the same name (the
//! unnamed ones are one lock), a callee called there included. An access
//! outside the lock, or under another lock (`atomic` and `critical` do not
//! exclude each other), still conflicts with them. The whole statement
//! after `atomic` counts as under the lock, not only the location it
//! updates (an `atomic capture`'s `v = x++` puts `v` under it too).
//!
//! ## Example
//! ```c
//! __builtin_csa_parallel_loop();
//! for (int i = 0; i < n - 1; i++)
//!     a[i] = a[i + 1] + 1;   // iteration i reads what iteration i+1 writes
//! ```
//!
//! ## How to fix
//! Remove the parallel assertion, or restructure the loop so iterations
//! touch disjoint elements (write into a second array, split the loop).
//! A conflict carried only by an inner loop is not reported: the inner loop
//! runs sequentially within one iteration.
//!
//! ## Fix safety
//! No fix is offered: the right restructuring depends on what the loop
//! computes.

use super::FunctionContext;
use crate::dependence::{Asserted, Finding};
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(501),
    name: "loop-carried-conflict",
    severity: Severity::Error,
    fixable: false,
    summary: "Two iterations of a loop asserted parallel access the same element, one writing it",
    source: include_str!("loop_carried_conflict.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for d in cx.deps {
        for f in &d.findings {
            let Finding::Conflict {
                object,
                first,
                second,
                x,
                x2,
                distance,
                needs_trip,
                scalar,
            } = f
            else {
                continue;
            };
            let what = |w: bool| if w { "writes" } else { "reads" };
            let text = |s: crate::source::Span| {
                cx.src
                    .text()
                    .get(s.start as usize..s.end as usize)
                    .unwrap_or("")
                    .to_string()
            };
            let iters = match distance {
                Some(1) | Some(-1) => "iterations k and k+1".to_string(),
                Some(dd) => format!("iterations k and k+{}", dd.abs()),
                None if *x == 0 || *x2 == 0 => {
                    format!("iterations {} and {}", x.min(x2), x.max(x2))
                }
                None => "two different iterations".to_string(),
            };
            let same = first.span == second.span;
            let msg = if *scalar {
                let how = if first.write && second.write {
                    "writes"
                } else {
                    "reads and writes"
                };
                match d.asserted {
                    // (in an OpenMP loop only a callee's accesses of a
                    // scalar come here; the loop's own are CSA503's)
                    crate::dependence::Asserted::Omp { .. } => format!(
                        "loop-carried conflict on `{object}`: it is shared, and every iteration {how} it through `{}` at {}",
                        text(first.span),
                        cx.line(first.span)
                    ),
                    crate::dependence::Asserted::Marker(_) => format!(
                        "loop-carried conflict on `{object}`: it is a scalar in memory (not a register the compiler carries between iterations), and every iteration {how} it"
                    ),
                }
            } else if same {
                format!(
                    "loop-carried conflict on `{object}`: {iters} both {} `{}` at {}",
                    if first.write { "write" } else { "read" },
                    text(first.span),
                    cx.line(first.span)
                )
            } else {
                let (wa, wb) = if *x <= *x2 {
                    (first, second)
                } else {
                    (second, first)
                };
                format!(
                    "loop-carried conflict on `{object}`: {iters} access the same element: one {} `{}` and the other {} `{}`",
                    what(wa.write),
                    text(wa.span),
                    what(wb.write),
                    text(wb.span)
                )
            };
            let dir = match distance {
                Some(dd) => format!(
                    " (distance {}, direction {})",
                    dd.abs(),
                    if *dd > 0 { "<" } else { ">" }
                ),
                None => String::new(),
            };
            let needs = needs_trip
                .filter(|t| *t > 2)
                .map(|t| format!(" whenever the loop runs at least {t} iterations"))
                .unwrap_or_default();
            let by = match &d.asserted {
                Asserted::Marker(b) => format!("the {} marker", cx.func.builtin(*b).short_name()),
                Asserted::Omp { .. } => "the OpenMP directive".to_string(),
            };
            let anchor = match &d.asserted {
                Asserted::Marker(b) => cx.func.builtin(*b).span,
                Asserted::Omp { directive, .. } => *directive,
            };
            let mut diag = Diagnostic::new(
                &RULE,
                first.span,
                format!("{msg}{dir}{needs}; {by} asserts that no two iterations conflict, so the parallel loop computes wrong results"),
            );
            if !same {
                diag = diag.with_related(
                    second.span,
                    format!("the other access ({})", what(second.write)),
                );
            }
            out.push(
                diag.with_related(anchor, "the loop is asserted parallel here")
                    .with_help("Remove the parallel assertion, or make the iterations touch disjoint elements."),
            );
        }
    }
}
