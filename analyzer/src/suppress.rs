//! Suppression comments (DIAGNOSTICS.md "Suppression").
//!
//! * `// csa-lint: ignore[CSA101]` (C; also in a `/* */` comment) or
//!   `! csa-lint: ignore[CSA101]` (Fortran) at the end of the anchor line,
//!   or alone on the line above it; several codes comma-separated; a bare
//!   `ignore` suppresses every code.
//! * `csa-lint: ignore-file[CODES]` anywhere in the file (bare: every code).
//!
//! A suppression (or one code of it) that suppresses nothing is reported as
//! CSA402. CSA402 itself can only be suppressed file-wide.

use crate::diag::{Applicability, Code, Diagnostic, Edit, Fix, FixKind};
use crate::ir::Lang;
use crate::source::{SourceText, Span};

/// One suppression comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppression {
    /// The `csa-lint: ...` text.
    pub span: Span,
    /// 0-based line whose diagnostics it covers (`None`: the whole file).
    pub line: Option<usize>,
    /// The codes it names (`None`: every code), each with its text span.
    pub codes: Option<Vec<(Code, Span)>>,
    /// Words in the brackets that are not diagnostic codes.
    pub invalid: Vec<(String, Span)>,
}

const MARKER: &str = "csa-lint:";

/// Whether `line` holds nothing but a comment with a line suppression
/// (`// csa-lint: ignore...`, `/* csa-lint: ignore... */`, Fortran `!`),
/// not a file-wide one: text whose line goes when the line it covers goes.
pub fn is_line_suppression(line: &str) -> bool {
    let t = line.trim();
    let body = if let Some(b) = t.strip_prefix("//") {
        b
    } else if let Some(b) = t.strip_prefix("/*").and_then(|b| b.strip_suffix("*/")) {
        b
    } else if let Some(b) = t.strip_prefix('!') {
        b
    } else {
        return false;
    };
    body.trim_start()
        .strip_prefix(MARKER)
        .map(str::trim_start)
        .is_some_and(|r| r.starts_with("ignore") && !r.starts_with("ignore-file"))
}

/// Finds every suppression comment in the file; `known` says which codes
/// exist (others are kept as invalid words, for CSA402).
pub fn parse(src: &SourceText, lang: Lang, known: &dyn Fn(Code) -> bool) -> Vec<Suppression> {
    let mut out = Vec::new();
    // Visit only the lines that hold the marker: one search over the text.
    let text = src.text();
    let mut lines = Vec::new();
    for i in memchr::memmem::find_iter(text.as_bytes(), MARKER.as_bytes()) {
        let line_no = src.line_of(i);
        if lines.last() != Some(&line_no) {
            lines.push(line_no);
        }
    }
    // where each suppression's comment opens
    let mut openers: Vec<usize> = Vec::new();
    for line_no in lines {
        let line = src.line_text(line_no);
        let Some(at) = line.find(MARKER) else {
            continue;
        };
        // It must sit in a comment: the comment opener comes right before it.
        let before = &line[..at];
        let opener = match lang {
            Lang::C => ["//", "/*"]
                .iter()
                .filter_map(|o| before.rfind(o).map(|i| (i, o.len())))
                .max(),
            Lang::Fortran => before.rfind('!').map(|i| (i, 1)),
        };
        let Some((open_at, open_len)) = opener else {
            continue;
        };
        if !before[open_at + open_len..].trim().is_empty() {
            continue;
        }
        let code_before = before[..open_at].trim();
        let line_start = src.line_start(line_no);
        let rest_at = at + MARKER.len();
        let rest = &line[rest_at..];
        let trimmed = rest.trim_start();
        let mut pos = rest_at + (rest.len() - trimmed.len());
        let (file_wide, word_len) = if trimmed.starts_with("ignore-file") {
            (true, "ignore-file".len())
        } else if trimmed.starts_with("ignore") {
            (false, "ignore".len())
        } else {
            continue;
        };
        pos += word_len;
        let after = &line[pos..];
        let mut codes = None;
        let mut invalid = Vec::new();
        let mut end = pos;
        if let Some(inner) = after.strip_prefix('[') {
            // the list ends at `]`, or unclosed where its comment does
            let comment_end = if open_len == 2 && before[open_at..].starts_with("/*") {
                inner.find("*/")
            } else {
                None
            };
            let (close, closed) = match (inner.find(']'), comment_end) {
                (Some(c), Some(e)) if e < c => (e, false),
                (Some(c), _) => (c, true),
                (None, e) => (e.unwrap_or(inner.len()), false),
            };
            let mut list = Vec::new();
            let mut offset = pos + 1;
            for part in inner[..close].split(',') {
                let word = part.trim();
                let lead = part.len() - part.trim_start().len();
                let span = Span::new(
                    line_start + offset + lead,
                    line_start + offset + lead + word.len(),
                );
                if !word.is_empty() {
                    match Code::parse(word) {
                        Some(c) if known(c) => list.push((c, span)),
                        _ => invalid.push((word.to_string(), span)),
                    }
                }
                offset += part.len() + 1;
            }
            codes = Some(list);
            end = pos + 1 + close + usize::from(closed);
        }
        let target = if file_wide {
            None
        } else if code_before.is_empty() {
            // Alone on its line: it covers the next line.
            Some(line_no + 1)
        } else {
            Some(line_no)
        };
        openers.push(line_start + open_at);
        out.push(Suppression {
            span: Span::new(line_start + at, line_start + end),
            line: target,
            codes,
            invalid,
        });
    }
    // In C, the opener must open a comment: a `/*` or `//` inside a block
    // comment opened on an earlier line (or inside a literal) does not, and
    // removing such a "suppression" would take the real comment's `*/`.
    if lang == Lang::C && !out.is_empty() {
        let in_code = csa_grammars::preproc::in_c_code(text, &openers);
        let mut keep = in_code.into_iter();
        out.retain(|_| keep.next().unwrap_or(false));
    }
    out
}

/// Which codes of which suppressions suppressed something:
/// `used[s][k]` for code `k` of suppression `s` (`k = 0` for a bare
/// suppression).
pub type Used = Vec<Vec<bool>>;

/// Removes suppressed diagnostics; says which suppressions were used (for
/// CSA402, `rules::check_suppressions`). `diags` stays in its order.
pub fn apply(
    diags: Vec<Diagnostic>,
    sups: &[Suppression],
    src: &SourceText,
) -> (Vec<Diagnostic>, Used) {
    let mut used: Used = sups
        .iter()
        .map(|s| vec![false; s.codes.as_ref().map_or(1, |c| c.len().max(1))])
        .collect();
    if sups.is_empty() {
        return (diags, used);
    }
    let mut kept = Vec::with_capacity(diags.len());
    for d in diags {
        let line = src.line_of(d.span.start as usize);
        let mut suppressed = false;
        for (i, s) in sups.iter().enumerate() {
            if s.line.is_some_and(|l| l != line) {
                continue;
            }
            match &s.codes {
                None => {
                    suppressed = true;
                    used[i][0] = true;
                }
                Some(codes) => {
                    for (k, (c, _)) in codes.iter().enumerate() {
                        if *c == d.code {
                            suppressed = true;
                            used[i][k] = true;
                        }
                    }
                }
            }
        }
        if !suppressed {
            kept.push(d);
        }
    }
    (kept, used)
}

/// The safe fix that appends `csa-lint: ignore[CODE]` to the anchor line
/// of `d`: none for CSA402 (only a file-wide comment silences it) or when
/// that line already holds a suppression, ends in a line continuation or
/// opens a block comment.
pub fn suppression_fix(d: &Diagnostic, src: &SourceText, lang: Lang) -> Option<Fix> {
    if d.code == Code(402) {
        return None;
    }
    let line_no = src.line_of(d.span.start as usize);
    let line = src.line_text(line_no);
    if line.contains(MARKER)
        || line.trim_end().ends_with('\\')
        || (lang == Lang::C && line.rfind("/*").is_some_and(|o| !line[o..].contains("*/")))
    {
        return None;
    }
    let end = src.line_start(line_no) + line.len();
    let opener = if lang == Lang::C { "//" } else { "!" };
    let sep = if line.ends_with([' ', '\t']) || line.is_empty() {
        ""
    } else {
        " "
    };
    Some(Fix {
        kind: FixKind::Suppress,
        title: format!("Suppress {} on this line", d.code),
        applicability: Applicability::Safe,
        edits: vec![Edit {
            span: Span::empty_at(end),
            new_text: format!("{sep}{opener} csa-lint: ignore[{}]", d.code),
        }],
    })
}

/// Every fix of `d`: its rule's, then the suppression fix.
pub fn all_fixes(d: &Diagnostic, src: &SourceText, lang: Lang) -> Vec<Fix> {
    let mut fixes = d.fixes.to_vec();
    fixes.extend(suppression_fix(d, src, lang));
    fixes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(c: Code) -> bool {
        crate::rules::lookup(c).is_some()
    }

    fn sups(text: &str, lang: Lang) -> Vec<Suppression> {
        parse(&SourceText::new(text.to_string()), lang, &known)
    }

    #[test]
    fn end_of_line_and_line_above() {
        let s = sups(
            "x(); // csa-lint: ignore[CSA101, csa105]\n  // csa-lint: ignore\ny();\n",
            Lang::C,
        );
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].line, Some(0));
        let codes: Vec<Code> = s[0].codes.as_ref().unwrap().iter().map(|c| c.0).collect();
        assert_eq!(codes, vec![Code(101), Code(105)]);
        // The code spans point at the codes themselves.
        let text = "x(); // csa-lint: ignore[CSA101, csa105]";
        let span = s[0].codes.as_ref().unwrap()[1].1;
        assert_eq!(&text[span.range()], "csa105");
        assert_eq!(s[1].line, Some(2));
        assert_eq!(s[1].codes, None);
    }

    #[test]
    fn file_wide_block_comments_and_fortran() {
        let s = sups("/* csa-lint: ignore-file[CSA401] */\n", Lang::C);
        assert_eq!(s[0].line, None);
        let s = sups("call f() ! csa-lint: ignore[CSA107]\n", Lang::Fortran);
        assert_eq!(s[0].line, Some(0));
        // Not in a comment.
        assert!(sups("const char *t = \"csa-lint: ignore\";\n", Lang::C).is_empty());
        assert!(sups("x = 1 // csa-lint: nothing\n", Lang::C).is_empty());
    }

    #[test]
    fn invalid_codes_are_kept_for_csa402() {
        let s = sups("x(); // csa-lint: ignore[CSA10l, CSA999]\n", Lang::C);
        assert_eq!(s[0].codes.as_ref().unwrap().len(), 0);
        assert_eq!(s[0].invalid.len(), 2);
    }

    #[test]
    fn never_panics_on_odd_text() {
        for t in [
            "// csa-lint: ignore[",
            "// csa-lint: ignore[,,]",
            "é // csa-lint: ignore[é]",
            "!csa-lint:ignore-file",
        ] {
            let src = SourceText::new(t.to_string());
            let s = parse(&src, Lang::C, &known);
            let _ = apply(Vec::new(), &s, &src);
            let s = parse(&src, Lang::Fortran, &known);
            let _ = apply(Vec::new(), &s, &src);
        }
    }
}
