//! # CSA202 token-not-connected
//!
//! ## What it does
//! Reports a region exit, section entry or section exit whose token does
//! not come from an entry of the right kind on every path. A section
//! entry's and a region exit's token must hold the result of
//! `__builtin_csa_parallel_region_entry`, a section exit's the result of
//! `__builtin_csa_parallel_section_entry`, kept in a plain local variable
//! (copies into other locals are fine). The token is followed through
//! every assignment that can reach the call; each one that is not such a
//! result is shown with the reason:
//! * a parameter (tokens cannot be passed between functions), a global, a
//!   static or a local whose address is taken (the token then lives in
//!   memory, and the compiler does not follow tokens through memory);
//! * arithmetic (`r + 1`), a conditional expression (`c ? r : s`), a cast,
//!   a call result or a value loaded through a pointer;
//! * a constant, or no value at all on some path (the variable may be
//!   uninitialised there);
//! * an entry of the wrong kind (a region token given to a section exit,
//!   a section token given to a region exit or section entry).
//!
//! What the compiler does depends on how bad it is:
//! * no assignment leads to any entry: it stops with the fatal error
//!   "Parallel intrinsic not connected to entry?";
//! * some paths are good: it says nothing, uses the first good entry it
//!   finds and ignores the other paths;
//! * the token only comes from an entry of the wrong kind: it does not
//!   check kinds and silently attaches the call to that entry's region,
//!   which is not the region/section structure you wrote.
//!
//! ## Why it matters
//! The fatal case stops the build. The other two compile, but the paths
//! the compiler ignores (or the kind it does not check) mean the memory
//! ordering pass works on sections you did not write, and the rules of
//! parallel regions (SEMANTICS.md §6) say such a token is not connected.
//!
//! ## Example
//! ```c
//! void body(int *a, int reg) {
//!   int sec = __builtin_csa_parallel_section_entry(reg); // reg is a parameter
//!   *a = 0;
//!   __builtin_csa_parallel_section_exit(sec);
//! }
//! ```
//! ```c
//! int reg = __builtin_csa_parallel_region_entry(0);
//! int tok;
//! if (c) tok = reg; else tok = 0;          // the else path has no token
//! __builtin_csa_parallel_region_exit(tok);
//! ```
//!
//! ## How to fix
//! Keep every token in a local `int` assigned directly from the entry's
//! result, in the function that calls the entry, on every path to its
//! uses: no parameters, globals, `&tok`, arithmetic or `?:`. Give each exit
//! the token of its own entry (a section exit the section entry's token, a
//! region exit the region entry's).
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::regions::tokens::{expected_source, kind_words, TokenStatus};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(202),
    name: "token-not-connected",
    severity: Severity::Error,
    fixable: false,
    summary: "A region/section intrinsic's token does not come from an entry of the right kind on every path",
    source: include_str!("token_not_connected.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for info in &cx.tokens.intrinsics {
        let bad = info.status.bad();
        if bad.is_empty() {
            continue;
        }
        let Some(call) = cx.func.builtins.get(info.builtin.index()) else {
            continue;
        };
        let what = kind_words(info.kind);
        let expected = expected_source(info.kind)
            .map(kind_words)
            .unwrap_or("entry");
        let token = match info.token.and_then(|v| cx.func.vars.get(v.index())) {
            Some(v) => format!("the token `{}`", v.name),
            None => "the token argument".to_string(),
        };
        let used = info
            .sources
            .first()
            .and_then(|b| cx.func.builtins.get(b.index()))
            .map(|b| {
                let region = info
                    .region_id
                    .map(|id| format!(" (region {id})"))
                    .unwrap_or_default();
                format!(
                    "the {} at {}{}",
                    kind_words(b.kind),
                    cx.line(b.span),
                    region
                )
            })
            .unwrap_or_else(|| "another entry".to_string());
        let message = if info.compiler_stops() {
            format!(
                "Parallel intrinsic not connected to entry?: {token} of this {what} does not come from a {expected} on any path, so the compiler stops with this fatal error"
            )
        } else if matches!(info.status, TokenStatus::NotConnected { .. }) {
            format!(
                "token of the wrong kind: {token} of this {what} does not come from a {expected}; the compiler does not check token kinds and silently attaches this {what} to {used}, which is not the region/section structure written here"
            )
        } else {
            format!(
                "token not connected on every path: {token} of this {what} does not come from a {expected} on every path; the compiler does not stop: it silently uses {used} and ignores the other paths"
            )
        };
        let mut diag = Diagnostic::new(&RULE, call.span, message);
        for (span, why) in bad {
            diag = diag.with_related(*span, why.clone());
        }
        out.push(diag.with_help(format!(
            "Keep the token in a local int assigned directly from the {expected}'s result (copies into other locals are fine) on every path to this call; never pass it through a parameter, a global, `&`, arithmetic or `?:`."
        )));
    }
}
