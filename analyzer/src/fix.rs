//! The fix engine: applying non-overlapping text edits, and the text helpers
//! every fix uses so that edits keep indentation and line endings.
//!
//! A [`Fix`] (defined with the diagnostics in `diag.rs`) is a title, an
//! [`Applicability`] and edits in original-source byte offsets.
//!
//! Invariants:
//! * edits of one fix never overlap; [`apply_fixes_logged`] applies whole fixes
//!   only, skipping a fix that overlaps one already taken (a second run
//!   picks it up);
//! * inserted lines use the file's line ending (`\r\n` when the file's first
//!   line ends so) and the indentation of the line they go before;
//! * nothing here panics: out-of-range or non-boundary offsets reject the
//!   fix.

pub use crate::diag::{Applicability, Edit, Fix};
use crate::source::Span;

/// Why edits could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApplyError {
    /// Two edits overlap.
    Overlap,
    /// An edit lies outside the text or splits a character.
    OutOfRange,
}

/// Applies the edits of one fix (in any order) to `text`.
pub fn apply_edits(text: &str, edits: &[Edit]) -> Result<String, ApplyError> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0usize;
    for e in sorted {
        let (s, t) = (e.span.start as usize, e.span.end as usize);
        if s < at {
            return Err(ApplyError::Overlap);
        }
        if t > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(t) {
            return Err(ApplyError::OutOfRange);
        }
        out.push_str(&text[at..s]);
        out.push_str(&e.new_text);
        at = t;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// Whether edits of two different fixes touch the same text: overlapping
/// ranges, or an insertion at the start of the other's range (two
/// insertions at one offset, or text inserted right where another fix
/// deletes: their combination is rarely what either meant, e.g. a guard
/// around a marker that another fix removes). The skipped fix is
/// reconsidered on the re-analysed text.
fn edits_conflict(a: &Edit, b: &Edit) -> bool {
    let (a0, a1, b0, b1) = (a.span.start, a.span.end, b.span.start, b.span.end);
    a0 == b0 || (a0 < b1 && b0 < a1)
}

/// Applies as many whole fixes as possible, in the order given, skipping a
/// fix that conflicts with one already taken or is itself malformed.
/// Returns the new text and how many fixes were applied and skipped.
#[cfg(test)]
pub fn apply_fixes(text: &str, fixes: &[&Fix]) -> (String, usize, usize) {
    let (s, applied, skipped, _) = apply_fixes_logged(text, fixes);
    (s, applied, skipped)
}

/// Applies whole fixes, skipping one that conflicts with a fix already
/// taken or is itself malformed; returns the new text, how many fixes
/// were applied and skipped, and the edits applied (to map positions of
/// the new text back with [`position_before`]).
pub fn apply_fixes_logged(text: &str, fixes: &[&Fix]) -> (String, usize, usize, Vec<Edit>) {
    let chosen = compatible_fixes(text, fixes);
    let considered = fixes.iter().filter(|f| !f.edits.is_empty()).count();
    let (applied, skipped) = (chosen.len(), considered - chosen.len());
    let edits: Vec<Edit> = chosen
        .iter()
        .flat_map(|f| f.edits.iter().cloned())
        .collect();
    match apply_edits(text, &edits) {
        Ok(s) => (s, applied, skipped, edits),
        Err(_) => (text.to_string(), 0, applied + skipped, Vec::new()),
    }
}

/// The byte offset in the text before `edits` (non-overlapping, as
/// applied by [`apply_edits`]) of offset `pos` of the text after them. A
/// position inside inserted or replacing text maps to the start of the
/// edit.
pub fn position_before(pos: u32, edits: &[Edit]) -> u32 {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.span.start, e.span.end));
    // `delta`: how far the text after the edits so far has moved
    let mut delta: i64 = 0;
    for e in sorted {
        let new_start = e.span.start as i64 + delta;
        let new_end = new_start + e.new_text.len() as i64;
        if (pos as i64) < new_start {
            break;
        }
        if (pos as i64) < new_end {
            return e.span.start;
        }
        delta += e.new_text.len() as i64 - (e.span.end as i64 - e.span.start as i64);
    }
    (pos as i64 - delta).max(0) as u32
}

/// The fixes that can be applied together, in order: a fix whose edits
/// conflict with one taken earlier (or do not apply to `text`) is left out.
pub fn compatible_fixes<'a>(text: &str, fixes: &[&'a Fix]) -> Vec<&'a Fix> {
    let mut taken: Vec<&Edit> = Vec::new();
    let mut chosen = Vec::new();
    for &f in fixes {
        if f.edits.is_empty() {
            continue;
        }
        let conflict = f
            .edits
            .iter()
            .any(|e| taken.iter().any(|t| edits_conflict(e, t)));
        if conflict || apply_edits(text, &f.edits).is_err() {
            continue;
        }
        taken.extend(f.edits.iter());
        chosen.push(f);
    }
    chosen
}

/// The fix `--fix` (or an editor's fix-all) takes for a diagnostic: the
/// first safe one (or unsafe too when `unsafe_ok`), never a suppression.
pub fn bulk_fix(d: &crate::diag::Diagnostic, unsafe_ok: bool) -> Option<&Fix> {
    d.fixes.iter().find(|f| bulk_fix_applies(f, unsafe_ok))
}

/// Whether `--fix` takes fix `f` (never a suppression).
pub fn bulk_fix_applies(f: &Fix, unsafe_ok: bool) -> bool {
    !f.edits.is_empty()
        && f.kind != crate::diag::FixKind::Suppress
        && match f.applicability {
            Applicability::Safe => true,
            Applicability::Unsafe => unsafe_ok,
            Applicability::DisplayOnly => false,
        }
}

/// The file's line ending: `\r\n` when its first line ends with one.
pub fn line_ending(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// Byte offset where the line holding `offset` starts.
pub fn line_start(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text[..floor_boundary(text, offset)]
        .rfind('\n')
        .map_or(0, |i| i + 1)
}

/// Byte offset just past the line terminator of the line holding `offset`
/// (the text's end on the last line).
pub fn line_end_with_newline(text: &str, offset: usize) -> usize {
    let offset = floor_boundary(text, offset.min(text.len()));
    text[offset..]
        .find('\n')
        .map_or(text.len(), |i| offset + i + 1)
}

/// Byte offset of the line terminator of the line holding `offset`.
pub fn line_end(text: &str, offset: usize) -> usize {
    let e = line_end_with_newline(text, offset);
    let bytes = text.as_bytes();
    let mut e2 = e;
    if e2 > 0 && bytes.get(e2 - 1) == Some(&b'\n') {
        e2 -= 1;
        if e2 > 0 && bytes.get(e2 - 1) == Some(&b'\r') {
            e2 -= 1;
        }
    }
    e2.max(line_start(text, offset))
}

fn floor_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// The leading spaces and tabs of the line holding `offset`.
pub fn indentation(text: &str, offset: usize) -> &str {
    let s = line_start(text, offset);
    let rest = &text[s..];
    let n = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..n]
}

/// Whether only spaces and tabs come before `offset` on its line.
pub fn starts_line(text: &str, offset: usize) -> bool {
    let s = line_start(text, offset);
    text[s..floor_boundary(text, offset)]
        .chars()
        .all(|c| c == ' ' || c == '\t')
}

/// An edit that deletes `span`: the whole line(s) when nothing but blanks
/// shares them, else the span and the blanks after it.
///
/// In fixed-form Fortran (`fixed_form`) columns 73 on are a comment (card
/// sequence numbers): only the statement field counts for "nothing shares
/// the line", and a one-line span that does share its line is blanked
/// instead of deleted, so no text moves into or out of the field.
pub fn delete_statement(text: &str, span: Span, fixed_form: bool) -> Edit {
    let (s, e) = (span.start as usize, (span.end as usize).min(text.len()));
    let ls = line_start(text, s);
    let le = line_end(text, e);
    let blank = |t: &str| t.chars().all(|c| c == ' ' || c == '\t');
    // where what counts as the line's text ends: column 73 in fixed form
    let field_end = if fixed_form {
        let last = line_start(text, e);
        text[last..le]
            .char_indices()
            .nth(72)
            .map_or(le, |(i, _)| last + i)
    } else {
        le
    };
    if blank(&text[ls..s]) && blank(&text[e.min(field_end)..field_end]) {
        return Edit {
            span: Span::new(ls, line_end_with_newline(text, e)),
            new_text: String::new(),
        };
    }
    if fixed_form && !text[s..e].contains('\n') {
        return Edit {
            span: Span::new(s, e),
            new_text: " ".repeat(text[s..e].chars().count()),
        };
    }
    let mut end = e;
    while end < le && matches!(text.as_bytes()[end], b' ' | b'\t') {
        end += 1;
    }
    Edit {
        span: Span::new(s, end),
        new_text: String::new(),
    }
}

/// An edit that inserts `line` (no terminator) as a new line before the line
/// holding `offset`, indented like that line. When `offset` does not start
/// its line, the text before it stays on its own line.
pub fn insert_line_before(text: &str, offset: usize, line: &str) -> Edit {
    let eol = line_ending(text);
    if starts_line(text, offset) {
        let ls = line_start(text, offset);
        let indent = indentation(text, offset);
        return Edit {
            span: Span::empty_at(ls),
            new_text: format!("{indent}{line}{eol}"),
        };
    }
    let indent = indentation(text, offset);
    Edit {
        span: Span::empty_at(offset),
        new_text: format!("{eol}{indent}{line}{eol}{indent}"),
    }
}

/// C: the edits that put the directive `line` (a `#pragma`, an attribute)
/// on its own line before the statement `stmt`. When `stmt` is the
/// statement of a label (`here: for (...)`), the label first gets a null
/// statement (`here:;`): a label must be followed by a statement, and a
/// `#pragma` line is not one. Jumps to the label still reach `stmt`.
pub fn insert_directive_before(text: &str, stmt: tree_sitter::Node<'_>, line: &str) -> Vec<Edit> {
    let mut edits: Vec<Edit> = label_null_statement(stmt).into_iter().collect();
    edits.push(insert_line_before(text, stmt.start_byte(), line));
    edits
}

fn label_null_statement(stmt: tree_sitter::Node<'_>) -> Option<Edit> {
    let parent = stmt.parent()?;
    if parent.kind() != "labeled_statement" {
        return None;
    }
    let mut cursor = parent.walk();
    let colon = parent
        .children(&mut cursor)
        .find(|c| !c.is_named() && c.kind() == ":")?;
    if colon.end_byte() > stmt.start_byte() {
        return None;
    }
    Some(Edit {
        span: Span::empty_at(colon.end_byte()),
        new_text: ";".to_string(),
    })
}

/// An edit that inserts `line` as a new line after the line holding
/// `offset`, with the given indentation.
pub fn insert_line_after(text: &str, offset: usize, indent: &str, line: &str) -> Edit {
    let eol = line_ending(text);
    let end = line_end_with_newline(text, offset);
    if end == text.len() && !text.ends_with('\n') {
        return Edit {
            span: Span::empty_at(end),
            new_text: format!("{eol}{indent}{line}"),
        };
    }
    Edit {
        span: Span::empty_at(end),
        new_text: format!("{indent}{line}{eol}"),
    }
}

/// The edits that remove a marker statement, and its `#ifdef __CSA__`
/// wrapper when the wrapper holds nothing else and has no `#else`
/// (`text` and the preprocessor's conditionals of it). Line suppressions of the
/// marker's line (`// csa-lint: ignore[...]` at its end or alone on the line
/// above) go with it: the line they cover is gone, so they would suppress
/// nothing (CSA402). In fixed-form Fortran the statement field ends at
/// column 72 ([`delete_statement`]).
pub(crate) fn marker_removal(
    text: &str,
    pre: &csa_grammars::preproc::Preprocessed,
    span: Span,
    fixed_form: bool,
) -> Vec<Edit> {
    use crate::suppress::is_line_suppression;
    let at = span.start as usize;
    if let Some((cond, branch)) = pre.enclosing_branch(at) {
        let only_marker = cond.branches.len() == 1
            && branch.asserts_csa
            && cond.endif.is_some()
            && text
                .get(branch.body.0..span.start as usize)
                .is_some_and(blank_or_suppressions)
            && text
                .get(span.end as usize..branch.body.1)
                .is_some_and(blank_or_suppressions);
        if only_marker {
            let (s, e) = cond.extent();
            let start = line_start(text, s);
            let end = line_end_with_newline(text, e.saturating_sub(1).max(s));
            return vec![Edit {
                span: Span::new(start, end),
                new_text: String::new(),
            }];
        }
    }
    // a suppression at the end of the line goes with the statement, and
    // when the whole line goes, so does one alone on the line above
    let e = (span.end as usize).min(text.len());
    let le = line_end(text, e);
    let to = if is_line_suppression(&text[e..le]) {
        le
    } else {
        e
    };
    let mut edit = delete_statement(text, Span::new(at, to), fixed_form);
    let ls = edit.span.start as usize;
    if ls > 0 && ls == line_start(text, at) {
        let prev = line_start(text, ls - 1);
        if is_line_suppression(&text[prev..ls]) {
            edit.span = Span::new(prev, edit.span.end as usize);
        }
    }
    vec![edit]
}

/// Whether every line of `s` is blank or a line suppression comment.
fn blank_or_suppressions(s: &str) -> bool {
    s.lines()
        .all(|l| l.trim().is_empty() || crate::suppress::is_line_suppression(l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_form_marker_removal_keeps_columns() {
        let card = |stmt: &str, seq: &str| format!("{stmt:<72}{seq}\n");
        let marker = "CALL BUILTIN_CSA_PARALLEL_LOOP()";
        let remove = |text: &str| {
            let pre = csa_grammars::preproc::preprocess(text, &[], true);
            let at = text.find(marker).unwrap();
            let span = Span::new(at, at + marker.len());
            let edits = marker_removal(text, &pre, span, true);
            apply_edits(text, &edits).unwrap()
        };
        // Alone in columns 1-72: the line goes, sequence number and all.
        let text = card("      X = 1", "00000100")
            + &card(&format!("      {marker}"), "00000200")
            + &card("      END", "00000300");
        assert_eq!(
            remove(&text),
            card("      X = 1", "00000100") + &card("      END", "00000300")
        );
        // Sharing its line (a label): blanked, every column kept.
        let text = card(&format!("   30 {marker}"), "00000200");
        let out = remove(&text);
        assert_eq!(out, card("   30", "00000200"));
        assert_eq!(out.len(), text.len());
        // Free form is unchanged: the statement is deleted.
        let text = format!("  {marker} ! note\n");
        let pre = csa_grammars::preproc::preprocess(&text, &[], true);
        let at = text.find(marker).unwrap();
        let edits = marker_removal(&text, &pre, Span::new(at, at + marker.len()), false);
        assert_eq!(apply_edits(&text, &edits).unwrap(), "  ! note\n");
    }

    fn edit(s: usize, e: usize, t: &str) -> Edit {
        Edit {
            span: Span::new(s, e),
            new_text: t.to_string(),
        }
    }

    #[test]
    fn positions_map_back_over_edits() {
        let text = "abcdefgh";
        let edits = vec![edit(1, 3, "XYZW"), edit(5, 5, "++"), edit(6, 8, "")];
        let after = apply_edits(text, &edits).unwrap();
        assert_eq!(after, "aXYZWde++f");
        // every character that survived maps to itself
        for (old, c) in [(0, 'a'), (3, 'd'), (4, 'e'), (5, 'f')] {
            let new = after.find(c).unwrap() as u32;
            assert_eq!(position_before(new, &edits), old, "{c}");
        }
        // inside inserted text: the edit's start; the end maps to the end
        assert_eq!(position_before(2, &edits), 1);
        assert_eq!(position_before(7, &edits), 5);
        assert_eq!(position_before(after.len() as u32, &edits), 8);
    }

    #[test]
    fn edits_apply_in_any_order() {
        let r = apply_edits("abcdef", &[edit(4, 5, "X"), edit(0, 1, "")]).unwrap();
        assert_eq!(r, "bcdXf");
        assert_eq!(
            apply_edits("abc", &[edit(0, 2, ""), edit(1, 3, "")]),
            Err(ApplyError::Overlap)
        );
        assert_eq!(
            apply_edits("abc", &[edit(0, 9, "")]),
            Err(ApplyError::OutOfRange)
        );
        assert_eq!(
            apply_edits("ñ", &[edit(1, 2, "")]),
            Err(ApplyError::OutOfRange)
        );
    }

    #[test]
    fn conflicting_fixes_are_skipped() {
        let f = |s, e| Fix {
            kind: crate::diag::FixKind::Convert,
            title: "t".into(),
            applicability: Applicability::Safe,
            edits: vec![edit(s, e, "")],
        };
        let (a, b, c) = (f(0, 2), f(1, 3), f(4, 5));
        let (text, applied, skipped) = apply_fixes("abcdef", &[&a, &b, &c]);
        assert_eq!((text.as_str(), applied, skipped), ("cdf", 2, 1));
        // An insertion where another fix's deletion starts conflicts; one
        // where it ends does not.
        let ins = |at| Fix {
            kind: crate::diag::FixKind::Convert,
            title: "i".into(),
            applicability: Applicability::Safe,
            edits: vec![edit(at, at, "X")],
        };
        let (text, applied, _) = apply_fixes("abcdef", &[&ins(2), &f(2, 4)]);
        assert_eq!((text.as_str(), applied), ("abXcdef", 1));
        let (text, applied, _) = apply_fixes("abcdef", &[&ins(4), &f(2, 4)]);
        assert_eq!((text.as_str(), applied), ("abXef", 2));
    }

    #[test]
    fn line_helpers_keep_crlf_and_tabs() {
        let t = "a\r\n\tx();\r\n\tfor\r\n";
        assert_eq!(line_ending(t), "\r\n");
        let x = t.find("x").unwrap();
        let d = delete_statement(t, Span::new(x, x + 4), false);
        assert_eq!(apply_edits(t, &[d]).unwrap(), "a\r\n\tfor\r\n");
        let f = t.find("for").unwrap();
        let i = insert_line_before(t, f, "#pragma p");
        assert_eq!(
            apply_edits(t, &[i]).unwrap(),
            "a\r\n\tx();\r\n\t#pragma p\r\n\tfor\r\n"
        );
        let j = insert_line_after("do\nend do", 5, "", "!$omp end");
        assert_eq!(
            apply_edits("do\nend do", &[j]).unwrap(),
            "do\nend do\n!$omp end"
        );
    }

    #[test]
    fn statement_sharing_a_line_is_cut_alone() {
        let t = "  x(); y();\n";
        let d = delete_statement(t, Span::new(2, 6), false);
        assert_eq!(apply_edits(t, &[d]).unwrap(), "  y();\n");
        let i = insert_line_before(t, 7, "#p");
        assert_eq!(apply_edits(t, &[i]).unwrap(), "  x(); \n  #p\n  y();\n");
    }
}
