//! # CSA402 unused-suppression
//!
//! ## What it does
//! Reports a suppression comment, or one code in it, that suppresses
//! nothing: no diagnostic with that code is anchored on the line it covers
//! (or anywhere in the file, for `ignore-file`), or the code is not a
//! csa-lint code at all.
//!
//! Suppressions are written `// csa-lint: ignore[CSA101]` in C (also inside
//! `/* */`) and `! csa-lint: ignore[CSA101]` in Fortran, at the end of the
//! line a diagnostic is anchored on or alone on the line above it; several
//! codes are comma-separated and a bare `ignore` covers every code.
//! `csa-lint: ignore-file[CODES]` anywhere covers the whole file. The
//! matching is done in `analyzer::suppress`; this file holds the rule's
//! documentation.
//!
//! ## Why it matters
//! A stale suppression hides the next real problem on that line, and a
//! misspelt code suppresses nothing while looking like it does.
//!
//! ## Example
//! ```c
//! __builtin_csa_parallel_loop(); // csa-lint: ignore[CSA101]
//! for (int i = 0; i < n; i++) a[i] = b[i];   // parallelizes: nothing to ignore
//! ```
//!
//! ## How to fix
//! Remove the suppression or the code that no longer applies, or fix the
//! code's spelling. CSA402 itself can only be silenced file-wide
//! (`csa-lint: ignore-file[CSA402]`).
//!
//! ## Fix safety
//! The fix removes the suppression comment (or, when other codes of it
//! are used, just the unused code). It is safe: the comment suppresses
//! nothing.

use crate::diag::{Applicability, Code, Diagnostic, Edit, Fix, FixKind, Rule, Severity};
use crate::source::{SourceText, Span};
use crate::suppress::{Suppression, Used};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(402),
    name: "unused-suppression",
    severity: Severity::Warning,
    fixable: true,
    summary: "A csa-lint suppression comment that suppresses nothing",
    source: include_str!("unused_suppression.rs"),
};

/// Reports each suppression, or code in one, that suppressed nothing
/// (`used` from `suppress::apply`), with a fix that removes it: the whole
/// comment when nothing in it was used, else the word. Nothing when a
/// file-wide suppression names CSA402 (the only way to silence it).
pub(crate) fn check(
    sups: &[Suppression],
    used: &Used,
    src: &SourceText,
    out: &mut Vec<Diagnostic>,
) {
    let file_wide_402 = sups.iter().any(|s| {
        s.line.is_none()
            && s.codes
                .as_ref()
                .is_none_or(|c| c.iter().any(|(code, _)| *code == RULE.code))
    });
    if file_wide_402 {
        return;
    }
    for (i, s) in sups.iter().enumerate() {
        let Some(used) = used.get(i) else { continue };
        let first = out.len();
        for (word, span) in &s.invalid {
            out.push(Diagnostic::new(
                &RULE,
                *span,
                format!("`{word}` is not a csa-lint diagnostic code, so this suppresses nothing"),
            ));
        }
        match &s.codes {
            None if !used.first().copied().unwrap_or(true) => out.push(Diagnostic::new(
                &RULE,
                s.span,
                "this suppression suppresses nothing: no diagnostic is reported on the line it covers",
            )),
            Some(codes) if codes.is_empty() && s.invalid.is_empty() => {
                out.push(Diagnostic::new(&RULE, s.span, "this suppression names no code"))
            }
            Some(codes) => {
                for (k, (c, span)) in codes.iter().enumerate() {
                    if !used.get(k).copied().unwrap_or(true) {
                        out.push(Diagnostic::new(
                            &RULE,
                            *span,
                            format!(
                                "{c} is not reported {}, so suppressing it does nothing",
                                if s.line.is_some() { "on the line this covers" } else { "in this file" }
                            ),
                        ));
                    }
                }
            }
            None => {}
        }
        let nothing_used = !used.iter().any(|u| *u);
        for d in &mut out[first..] {
            let edit = if nothing_used {
                remove_comment(src.text(), s.span)
            } else {
                Some(remove_list_word(src.text(), d.span))
            };
            std::sync::Arc::make_mut(&mut d.fixes).extend(edit.map(|edit| Fix {
                kind: FixKind::RemoveSuppression,
                title: "Remove the unused suppression".to_string(),
                applicability: Applicability::Safe,
                edits: vec![edit],
            }));
        }
    }
}

/// Deletes the comment that holds the suppression at `at`: the whole
/// line(s) when the comment is alone on them. A block comment goes to its
/// `*/`, on a later line too; none when it is never closed.
fn remove_comment(text: &str, at: Span) -> Option<Edit> {
    use crate::fix::{line_end, line_end_with_newline, line_start};
    let s = at.start as usize;
    let ls = line_start(text, s);
    let before = text[ls..s].trim_end();
    let (open, block) = if before.ends_with("/*") {
        (ls + before.len() - 2, true)
    } else if before.ends_with("//") {
        (ls + before.len() - 2, false)
    } else if before.ends_with('!') {
        (ls + before.len() - 1, false)
    } else {
        (s, false)
    };
    let end = if block {
        s + text[s..].find("*/")? + 2
    } else {
        line_end(text, s)
    };
    // the end of the comment's last line
    let le = line_end(text, end);
    if text[ls..open].trim().is_empty() && text[end..le].trim().is_empty() {
        return Some(Edit {
            span: Span::new(ls, line_end_with_newline(text, end)),
            new_text: String::new(),
        });
    }
    let mut start = open;
    while start > ls && matches!(text.as_bytes()[start - 1], b' ' | b'\t') {
        start -= 1;
    }
    Some(Edit {
        span: Span::new(start, end),
        new_text: String::new(),
    })
}

/// Deletes one word of a `[A, B]` list with its comma.
fn remove_list_word(text: &str, word: Span) -> Edit {
    let (s, e) = (word.start as usize, word.end as usize);
    let after = &text[e..];
    let blanks = after.len() - after.trim_start_matches([' ', '\t']).len();
    if after[blanks..].starts_with(',') {
        let rest = &after[blanks + 1..];
        let more = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        return Edit {
            span: Span::new(s, e + blanks + 1 + more),
            new_text: String::new(),
        };
    }
    let before = &text[..s];
    let trimmed = before.trim_end_matches([' ', '\t']);
    if trimmed.ends_with(',') {
        return Edit {
            span: Span::new(trimmed.len() - 1, e),
            new_text: String::new(),
        };
    }
    Edit {
        span: Span::new(s, e),
        new_text: String::new(),
    }
}
