//! Byte spans into the original source text and their conversion to 1-based
//! line/column positions (columns count Unicode scalar values).
//!
//! Invariant: every `Span` stored anywhere in the analyzer points into the
//! *original* text the user wrote, never into a normalised copy (fixed-form
//! Fortran, preprocessor blanking). Front ends map positions back before they
//! build IR.

use csa_grammars::TextEdit;
use serde::Serialize;
use std::sync::Arc;

/// A half-open byte range `[start, end)` in the original source text.
/// (`Serialize` because `diag::Diagnostic` derives it.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        let start = start.min(u32::MAX as usize) as u32;
        let end = (end.min(u32::MAX as usize) as u32).max(start);
        Span { start, end }
    }

    pub fn empty_at(offset: usize) -> Span {
        Span::new(offset, offset)
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// An offset moved by `delta` bytes (not below 0).
    pub fn shift_offset(offset: u32, delta: i64) -> u32 {
        (offset as i64 + delta).clamp(0, u32::MAX as i64) as u32
    }

    /// The span moved by `delta` bytes (text inserted or removed before it).
    pub fn shifted(self, delta: i64) -> Span {
        Span {
            start: Span::shift_offset(self.start, delta),
            end: Span::shift_offset(self.end, delta),
        }
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest span covering both.
    pub fn cover(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn contains(self, offset: usize) -> bool {
        (self.start as usize) <= offset && offset < (self.end as usize)
    }
}

/// A 1-based line and column (column in Unicode scalar values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

/// The text of one file with a line index. Cloning is cheap (shared).
#[derive(Clone, Debug)]
pub struct SourceText {
    text: Arc<String>,
    line_starts: Arc<Vec<u32>>,
}

/// Offsets of the line starts after each `\n` of `text`, plus `base`.
fn push_line_starts(out: &mut Vec<u32>, text: &str, base: usize) {
    out.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| (base + i + 1) as u32));
}

impl SourceText {
    pub fn new(text: String) -> SourceText {
        let mut line_starts = vec![0u32];
        push_line_starts(&mut line_starts, &text, 0);
        SourceText {
            text: Arc::new(text),
            line_starts: Arc::new(line_starts),
        }
    }

    /// The source after `edit` (the change from this text to `text`): the
    /// line index is this one's with the lines of the changed bytes
    /// recounted and those after them moved, in time proportional to the
    /// number of lines rather than bytes. Equal to `SourceText::new(text)`.
    pub fn edited(&self, text: String, edit: TextEdit) -> SourceText {
        if !edit.fits(self.text.len(), text.len()) {
            return SourceText::new(text);
        }
        let old = &self.line_starts;
        // A line start `p > 0` follows the `\n` at `p - 1`: kept when that
        // byte is before the edit, moved when after it, recounted inside.
        let kept = old.partition_point(|&p| p as usize <= edit.start);
        let after = old.partition_point(|&p| (p as usize) <= edit.old_end);
        let mut line_starts = Vec::with_capacity(old.len() + 16);
        line_starts.extend_from_slice(&old[..kept]);
        let changed = &text.as_bytes()[edit.start..edit.new_end];
        line_starts.extend(
            (0..changed.len())
                .filter(|&i| changed[i] == b'\n')
                .map(|i| (edit.start + i + 1) as u32),
        );
        let delta = edit.delta() as i64;
        line_starts.extend(old[after..].iter().map(|&p| (p as i64 + delta) as u32));
        SourceText {
            text: Arc::new(text),
            line_starts: Arc::new(line_starts),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset where 0-based line `line` starts (clamped).
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len() as u32) as usize
    }

    /// Byte `offset` (clamped) as tree-sitter's row and byte column.
    pub fn point(&self, offset: usize) -> tree_sitter::Point {
        let row = self.line_of(offset);
        tree_sitter::Point {
            row,
            column: offset.min(self.text.len()) - self.line_start(row),
        }
    }

    /// 0-based line that holds byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len()) as u32;
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// [`SourceText::line_of`], looking first at line `hint` and the few
    /// after it: cheap for positions visited in text order.
    pub fn line_of_from(&self, offset: usize, hint: usize) -> usize {
        let offset_u = offset.min(self.text.len()) as u32;
        let starts = &self.line_starts;
        if hint >= starts.len() || starts[hint] > offset_u {
            return self.line_of(offset);
        }
        let mut l = hint;
        for _ in 0..8 {
            if l + 1 >= starts.len() || starts[l + 1] > offset_u {
                return l;
            }
            l += 1;
        }
        match starts[l..].binary_search(&offset_u) {
            Ok(i) => l + i,
            Err(i) => l + i - 1,
        }
    }

    /// The text of 0-based line `line` without its line terminator.
    pub fn line_text(&self, line: usize) -> &str {
        let start = self.line_start(line);
        let end = if line + 1 < self.line_starts.len() {
            self.line_start(line + 1)
        } else {
            self.text.len()
        };
        let s = &self.text[start..end];
        s.trim_end_matches(['\n', '\r'])
    }

    /// 1-based line and column (Unicode scalar values) of a byte offset.
    /// Offsets inside a multi-byte character count as that character.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        let line = self.line_of(offset);
        let start = self.line_start(line);
        let mut end = offset;
        while end > start && !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[start..end].chars().count() as u32 + 1;
        LineCol {
            line: line as u32 + 1,
            column,
        }
    }

    /// Byte offset of a 1-based line and column (clamped to the line's end).
    pub fn offset_of(&self, pos: LineCol) -> usize {
        let line = (pos.line.max(1) - 1) as usize;
        if line >= self.line_starts.len() {
            return self.text.len();
        }
        let start = self.line_start(line);
        let text = self.line_text(line);
        let mut remaining = pos.column.max(1) - 1;
        for (i, _) in text.char_indices() {
            if remaining == 0 {
                return start + i;
            }
            remaining -= 1;
        }
        start + text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_from_any_hint_equals_line_of() {
        let text = "a\nbb\n\nccc\r\nd".repeat(5);
        let src = SourceText::new(text.clone());
        for offset in 0..=text.len() + 2 {
            for hint in 0..src.line_count() + 2 {
                assert_eq!(
                    src.line_of_from(offset, hint),
                    src.line_of(offset),
                    "{offset} {hint}"
                );
            }
        }
    }

    #[test]
    fn line_col_counts_scalars() {
        let s = SourceText::new("ab\nñx = 1\n".to_string());
        assert_eq!(s.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(s.line_col(3), LineCol { line: 2, column: 1 });
        // 'x' sits after the two-byte 'ñ'
        assert_eq!(s.line_col(5), LineCol { line: 2, column: 2 });
        assert_eq!(s.offset_of(LineCol { line: 2, column: 2 }), 5);
        assert_eq!(s.line_text(1), "ñx = 1");
    }

    #[test]
    fn edited_index_equals_a_fresh_one() {
        let texts = [
            "",
            "\n",
            "a\nb\n",
            "a\nb",
            "one\ntwo\r\nthree\n\nfive",
            "x\n\n\ny\n",
            "ñ\n€\n",
            "è\n€\n",
        ];
        for old in texts {
            for new in texts {
                let a = SourceText::new(old.to_string());
                let Some(e) = TextEdit::between(old, new) else {
                    continue;
                };
                let got = a.edited(new.to_string(), e);
                let want = SourceText::new(new.to_string());
                assert_eq!(got.line_starts, want.line_starts, "{old:?} -> {new:?}");
                assert_eq!(got.text(), new);
            }
        }
        // An edit that does not fit the texts is ignored.
        let a = SourceText::new("abc".to_string());
        let bad = TextEdit {
            start: 2,
            old_end: 9,
            new_end: 1,
        };
        assert_eq!(a.edited("x\ny".to_string(), bad).line_count(), 2);
    }
}
