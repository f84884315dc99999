//! # CSA401 unguarded-builtin
//!
//! ## What it does
//! Reports a `__builtin_csa_*` call in C that is not inside an
//! `#ifdef __CSA__` (or `#if defined(__CSA__)`) block.
//!
//! ## Why it matters
//! Builds for other targets (x86 hosts, offload builds) lack most CSA
//! builtins, so the file stops compiling there.
//!
//! ## Example
//! ```c
//! __builtin_csa_parallel_loop();
//! for (int i = 0; i < n; i++) a[i] = b[i];
//! ```
//! Guarded:
//! ```c
//! #ifdef __CSA__
//! __builtin_csa_parallel_loop();
//! #endif
//! for (int i = 0; i < n; i++) a[i] = b[i];
//! ```
//!
//! ## How to fix
//! Wrap the call in `#ifdef __CSA__` ... `#endif`.
//!
//! ## Fix safety
//! The fix wraps the statement in `#ifdef __CSA__` ... `#endif`. It is
//! safe: CSA builds see the same code. It is offered for statements that
//! stand alone on their lines and define nothing (not for
//! `int r = __builtin_csa_parallel_region_entry(0);`, whose variable other
//! code uses).

use super::FileContext;
use crate::diag::{Applicability, Code, Diagnostic, Edit, Fix};
use crate::diag::{Rule, Severity};
use crate::fix::{line_end_with_newline, line_ending, line_start, starts_line};
use crate::ir::Lang;
use crate::source::Span;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(401),
    name: "unguarded-builtin",
    severity: Severity::Info,
    fixable: true,
    summary: "A __builtin_csa_* call outside #ifdef __CSA__ breaks non-CSA builds",
    source: include_str!("unguarded_builtin.rs"),
};

pub(super) fn check(cx: &FileContext, out: &mut Vec<Diagnostic>) {
    if cx.lang != Lang::C {
        return;
    }
    let unguarded: Vec<&crate::ir::BuiltinCall> = cx
        .functions
        .iter()
        .flat_map(|f| &f.builtins)
        .filter(|b| !(cx.csa_guarded)(b.span.start as usize))
        .collect();
    if unguarded.is_empty() {
        return;
    }
    // the guard's `#ifdef` line must be read as a directive where it goes
    // (not inside a block comment the parser recovered from)
    let mut starts: Vec<usize> = unguarded.iter().map(|b| b.span.start as usize).collect();
    starts.sort_unstable();
    let visible = csa_grammars::preproc::directive_visible(cx.src.text(), &starts);
    let fixable = |at: usize| {
        starts
            .binary_search(&at)
            .is_ok_and(|i| visible.get(i).copied().unwrap_or(false))
    };
    for b in unguarded {
            out.push(
                Diagnostic::new(
                    &RULE,
                    b.span,
                    format!(
                        "`{}` is not guarded by #ifdef __CSA__: builds for other targets lack most CSA builtins",
                        b.name
                    ),
                )
                .with_help("Wrap the call in #ifdef __CSA__ ... #endif.")
                .with_fixes(
                    guard_fix(cx.src.text(), b.span).filter(|_| fixable(b.span.start as usize)),
                ),
        );
    }
}

/// `#ifdef __CSA__` / `#endif` lines around a statement that stands alone.
fn guard_fix(text: &str, span: Span) -> Option<Fix> {
    let (s, e) = (span.start as usize, span.end as usize);
    let stmt = text.get(s..e)?;
    if !stmt.trim_end().ends_with(';') || !starts_line(text, s) {
        return None;
    }
    let end = line_end_with_newline(text, e.saturating_sub(1).max(s));
    if !text.get(e..end)?.trim().is_empty() {
        return None;
    }
    let eol = line_ending(text);
    let tail = if end == text.len() && !text.ends_with('\n') {
        format!("{eol}#endif")
    } else {
        format!("#endif{eol}")
    };
    Some(Fix {
        kind: crate::diag::FixKind::GuardBuiltin,
        title: "Wrap the call in #ifdef __CSA__ ... #endif".to_string(),
        applicability: Applicability::Safe,
        edits: vec![
            Edit {
                span: Span::empty_at(line_start(text, s)),
                new_text: format!("#ifdef __CSA__{eol}"),
            },
            Edit {
                span: Span::empty_at(end),
                new_text: tail,
            },
        ],
    })
}
