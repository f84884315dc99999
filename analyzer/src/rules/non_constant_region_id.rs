//! # CSA204 non-constant-region-id
//!
//! ## What it does
//! Reports a `__builtin_csa_parallel_region_entry` whose region id is not
//! an integer constant (a literal, a constant expression, an enumerator, a
//! `#define` or a `const` variable with a literal value). The compiler
//! stops with the fatal error "Parallel intrinsic with non-constant region
//! id".
//!
//! ## Why it matters
//! Region ids identify regions at compile time: all entries with one id
//! form one region. An id computed at run time cannot do that, and the
//! build fails.
//!
//! ## Example
//! ```c
//! int reg = __builtin_csa_parallel_region_entry(n);   // n is a parameter
//! ```
//!
//! ## How to fix
//! Pass an integer constant below 1000 that no other region of the
//! function uses: `__builtin_csa_parallel_region_entry(0)`, or a
//! `#define`/enumerator for it.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::BuiltinKind;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(204),
    name: "non-constant-region-id",
    severity: Severity::Error,
    fixable: false,
    summary:
        "A region entry's id is not an integer constant: the compiler stops with a fatal error",
    source: include_str!("non_constant_region_id.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for e in &cx.tokens.entries {
        if e.id.is_some() {
            continue;
        }
        let Some(call) = cx.func.builtins.get(e.builtin.index()) else {
            continue;
        };
        if call.kind != BuiltinKind::RegionEntry {
            continue;
        }
        // A call without an argument is a C error clang reports itself.
        let Some(arg) = call.args.first() else {
            continue;
        };
        let text = cx.src.text().get(arg.span.range()).unwrap_or("");
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let shown = if text.chars().count() > 40 {
            format!("{}...", text.chars().take(37).collect::<String>())
        } else {
            text
        };
        out.push(
            Diagnostic::new(
                &RULE,
                arg.span,
                format!(
                    "Parallel intrinsic with non-constant region id: the region id `{shown}` of this region entry is not an integer constant, so the compiler stops with this fatal error"
                ),
            )
            .with_help("Pass an integer constant below 1000 (a literal, #define or enumerator) that no other region of the function uses."),
        );
    }
}
