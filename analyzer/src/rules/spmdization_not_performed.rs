//! # CSA112 spmdization-not-performed
//!
//! ## What it does
//! Reports an `spmd(W, C)` or `spmdization(W, kind)` marker whose loop CLIE
//! expands but LoopSPMDization (`LoopSPMDization::runOnLoop`) does not
//! split into workers, and says why:
//! * the worker count or chunk size is not a constant once the optimiser
//!   has run (a variable that is not always the same constant, a
//!   parameter): the pass skips the loop without a message;
//! * the loop leaves through several exit blocks (`break`, `return`,
//!   `goto` out of it);
//! * a scalar carries a value from one iteration to the next and is
//!   neither a reduction nor an induction variable;
//! * cyclic or hybrid distribution (`C >= 1`, `"cyclic"`, `"hybrid"`)
//!   and no induction variable;
//! * blocked distribution (`C == 0`, `"block"`) and no trip count the
//!   compiler can compute (no induction variable, or a bound the loop
//!   changes).
//!
//! In all but the first case the compiler prints `!! WARNING: COULD NOT
//! PERFORM SPMDization !!` (or an `ERROR` banner that is still only a
//! warning) at build time. The loop then runs as CLIE expanded it: one
//! parallel loop, one worker, as `parallel_loop` would; every
//! `spmd_worker_num()` in it is deleted with everything computed from it
//! (CSA110). A worker count of 1 is CSA111, one below 1 or a negative
//! chunk CSA103.
//!
//! ## Why it matters
//! The loop gets none of the workers the marker asks for, and code that
//! uses the worker number silently disappears.
//!
//! ## Example
//! ```c
//! __builtin_csa_spmd(4, 0);
//! for (int i = 0; i < n; i++) {
//!   if (a[i] < 0) break;          // a second exit
//!   a[i] = sqrt(a[i]);
//! }
//! ```
//!
//! ## How to fix
//! Give the loop one exit, keep values that cross iterations to
//! reductions and induction variables, use constant arguments, or use
//! `parallel_loop` if one worker is what the loop can have.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::clie::spmdization::{NotPerformed, Spmdization};
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(112),
    name: "spmdization-not-performed",
    severity: Severity::Warning,
    fixable: false,
    summary: "The compiler does not split an spmd loop into workers; it runs as one, and worker_num code is deleted",
    source: include_str!("spmdization_not_performed.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for v in &cx.clie.verdicts {
        let Some(Spmdization::NotPerformed(why)) = &v.spmd else {
            continue;
        };
        if !why.is_failure() {
            continue;
        }
        let b = cx.func.builtin(v.marker);
        let name = cx.builtin_name(b);
        let line = |s: crate::source::Span| cx.line(s);
        let (msg, related) = match why {
            NotPerformed::NotConstant { what, at } => (
                format!("the {what} of {name} is not a constant, so the compiler does not split the loop into workers (no message)"),
                Some((*at, "not a constant")),
            ),
            NotPerformed::SeveralExits { count } => (
                format!("COULD NOT PERFORM SPMDization: the loop leaves through {count} exits, and only a loop with one exit is split into workers"),
                None,
            ),
            NotPerformed::Carried { var, at } => (
                format!("COULD NOT PERFORM SPMDization: `{var}` carries a value from one iteration to the next (read at {}) and is neither a reduction nor an induction variable", line(*at)),
                Some((*at, "read before the iteration writes it")),
            ),
            NotPerformed::NoInduction { kind } => (
                format!("COULD NOT PERFORM SPMDization: {kind} distribution needs an induction variable, and the loop has none"),
                None,
            ),
            NotPerformed::NoTripCount => (
                "COULD NOT PERFORM SPMDization: blocked distribution needs a trip count the compiler can compute, and the loop's is not".to_string(),
                None,
            ),
            NotPerformed::NotExpanded | NotPerformed::SingleWorker | NotPerformed::BadArgument => continue,
        };
        let mut d = Diagnostic::new(
            &RULE,
            b.span,
            format!("{msg}; the loop runs as one worker, like parallel_loop, and spmd_worker_num() in it is deleted"),
        )
        .with_help("Give the loop one exit, carry values only in reductions and induction variables, and pass constant arguments; or use parallel_loop.");
        if let Some((at, label)) = related {
            d = d.with_related(at, label);
        }
        out.push(d);
    }
}
