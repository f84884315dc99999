//! # CSA103 bad-spmd-intrinsic
//!
//! ## What it does
//! Reports, on a marker that a loop takes (a marker no loop takes is
//! deleted first: CSA105, CSA106):
//! * `__builtin_csa_spmdization(W, kind)` whose kind is not a string
//!   literal naming `cyclic`, `block`, `blocked`, `blocking` or `hybrid`
//!   (any case). CLIE (`CSALoopIntrinsicExpander.cpp`,
//!   `expandParLoopIntrinsic`) checks the kind after it has placed the
//!   loop's section: it prints `!! WARNING: BAD CSA SPMD INTRINSIC !!` and
//!   then gives up on the loop (`COULD NOT PARALLELIZE LOOP`, CSA101). When
//!   the section cannot be placed, only CSA101 is printed, so CSA103 is not
//!   reported then.
//! * `__builtin_csa_spmd(W, C)` / `spmdization(W, kind)` with an integer
//!   constant worker count `W` below 1, or an spmd chunk size `C` below 0,
//!   on a loop CLIE parallelized: `LoopSPMDization::runOnLoop` prints the
//!   banner and leaves the loop unsplit. CLIE never checks `W` or `C`, and
//!   a `W` or `C` that is not a constant by then is skipped without a
//!   banner (no SPMDization: CSA112), so neither is reported here.
//!
//! ## Why it matters
//! The loop is not split into workers the way the marker says, and the
//! build only prints a banner.
//!
//! ## Example
//! ```c
//! __builtin_csa_spmdization(4, "blocks");   // not a known kind
//! for (int i = 0; i < n; i++) a[i] = b[i];
//! ```
//!
//! ## How to fix
//! Use a worker count of at least 1 and a chunk size of at least 0
//! (0 blocked, 1 cyclic, more than 1 block-cyclic), or one of the listed
//! kind strings.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::clie::{spmdization_chunk, MarkerStatus, Outcome};
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::*;
use crate::source::Span;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(103),
    name: "bad-spmd-intrinsic",
    severity: Severity::Warning,
    fixable: false,
    summary: "An spmd/spmdization marker has an invalid worker count, chunk size or kind",
    source: include_str!("bad_spmd_intrinsic.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for m in &cx.clie.markers {
        // Only markers a loop takes are ever examined by the compiler; a
        // deleted one is CSA105/CSA106's business.
        let MarkerStatus::Attached(loops) = &m.status else {
            continue;
        };
        // CLIE places the section before it looks at any argument: a loop
        // it cannot parallelize gets CSA101 alone
        let examined = loops.iter().any(|l| {
            let outcome = cx.clie.verdict_for(*l).map(|v| &v.outcome);
            !matches!(outcome, None | Some(Outcome::CouldNotParallelize(_)))
        });
        if !examined {
            continue;
        }
        let b = cx.func.builtin(m.builtin);
        let name = cx.builtin_name(b);
        let mut bad = |span: Span, msg: String| {
            out.push(
                Diagnostic::new(&RULE, span, format!("BAD CSA SPMD INTRINSIC: {msg}"))
                    .with_related(b.span, "in this marker"),
            );
        };
        match b.kind {
            BuiltinKind::Spmd | BuiltinKind::Spmdization => {
                let whole = b.span;
                match b.args.first() {
                    Some(BuiltinArg {
                        value: ArgValue::Int(w),
                        span,
                    }) if *w < 1 => {
                        bad(*span, format!("{name} needs at least one worker, got {w}"))
                    }
                    // (not a constant: no banner, CSA112)
                    Some(_) => {}
                    None => bad(whole, format!("{name} needs a worker count")),
                }
                if b.kind == BuiltinKind::Spmd {
                    match b.args.get(1) {
                        Some(BuiltinArg { value: ArgValue::Int(c), span }) if *c < 0 => bad(
                            *span,
                            format!("the chunk size of spmd must be 0 (blocked), 1 (cyclic) or more (block-cyclic), got {c}"),
                        ),
                        Some(_) => {}
                        None => bad(whole, "spmd needs a chunk size".to_string()),
                    }
                } else {
                    match b.args.get(1) {
                        Some(BuiltinArg { value: ArgValue::Str(s), .. })
                            if spmdization_chunk(s).is_some() => {}
                        Some(BuiltinArg { value: ArgValue::Str(s), span }) => bad(
                            *span,
                            format!("\"{s}\" is not a spmdization kind (cyclic, block, blocked, blocking or hybrid); the loop is not parallelized"),
                        ),
                        Some(a) => bad(
                            a.span,
                            "the spmdization kind must be a string literal (cyclic, block, blocked, blocking or hybrid), or a local variable every assignment of which stores the same literal; the loop is not parallelized".to_string(),
                        ),
                        None => bad(whole, "spmdization needs a kind string".to_string()),
                    }
                }
            }
            _ => {}
        }
    }
}
