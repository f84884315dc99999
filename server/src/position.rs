//! Converting between LSP positions (line and character in the negotiated
//! encoding) and byte offsets of the document text, over a rope.
//!
//! Lines end at `\n`, `\r\n` or `\r`, as LSP says (ropey is built with
//! `cr_lines` and without `unicode_lines` for that). Positions past the end
//! of a line clamp to the line's end, and lines past the end of the
//! document clamp to its end; the caller learns that a position was out of
//! range so it can log it.

use analyzer::source::SourceText;
use ropey::Rope;
use tower_lsp_server::lsp_types::{Position, PositionEncodingKind, Range};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

impl Encoding {
    /// utf-8 when the client offers it, utf-16 (the LSP default) otherwise.
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        match offered {
            Some(kinds) if kinds.contains(&PositionEncodingKind::UTF8) => Encoding::Utf8,
            _ => Encoding::Utf16,
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }
    }
}

/// The char index where `line` ends, before its line break.
fn line_end_char(rope: &Rope, line: usize) -> usize {
    let start = rope.line_to_char(line);
    let slice = rope.line(line);
    let mut len = slice.len_chars();
    // Strip the line break (`\n`, `\r\n` or `\r`).
    if len > 0 && slice.char(len - 1) == '\n' {
        len -= 1;
    }
    if len > 0 && slice.char(len - 1) == '\r' {
        len -= 1;
    }
    start + len
}

/// The char index of a position; `Err` carries the clamped index when the
/// position was out of range.
pub fn char_index(rope: &Rope, pos: Position, enc: Encoding) -> Result<usize, usize> {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return Err(rope.len_chars());
    }
    let start = rope.line_to_char(line);
    let end = line_end_char(rope, line);
    let col = pos.character as usize;
    let target = match enc {
        Encoding::Utf8 => {
            let byte = rope.char_to_byte(start) + col;
            if byte > rope.char_to_byte(end) {
                return Err(end);
            }
            // A position inside a character counts as that character's start.
            rope.byte_to_char(byte)
        }
        Encoding::Utf16 => {
            let cu = rope.char_to_utf16_cu(start) + col;
            if cu > rope.char_to_utf16_cu(end) {
                return Err(end);
            }
            rope.utf16_cu_to_char(cu)
        }
    };
    Ok(target.min(end))
}

/// The LSP position of a char index.
pub fn position_of_char(rope: &Rope, char_idx: usize, enc: Encoding) -> Position {
    let char_idx = char_idx.min(rope.len_chars());
    let line = rope.char_to_line(char_idx);
    let start = rope.line_to_char(line);
    let character = match enc {
        Encoding::Utf8 => rope.char_to_byte(char_idx) - rope.char_to_byte(start),
        Encoding::Utf16 => rope.char_to_utf16_cu(char_idx) - rope.char_to_utf16_cu(start),
    };
    Position::new(line as u32, character as u32)
}

/// The LSP position of a byte offset of the text.
pub fn position(rope: &Rope, byte: usize, enc: Encoding) -> Position {
    let byte = byte.min(rope.len_bytes());
    position_of_char(rope, rope.byte_to_char(byte), enc)
}

/// Byte offsets of one analysed text to LSP positions: through the
/// analysis's line index when its lines are LSP's (no lone `\r`, which
/// ends a line for LSP but not for the index; then the rope has more
/// lines), else through the rope. The same positions either way; the index
/// needs no tree walks.
pub struct Positions<'a> {
    rope: &'a Rope,
    lines: Option<&'a SourceText>,
    /// The line of the last position asked for (they come in text order).
    hint: std::cell::Cell<usize>,
}

impl<'a> Positions<'a> {
    /// `source` is the text of `rope` with its line index.
    pub fn new(rope: &'a Rope, source: Option<&'a SourceText>) -> Positions<'a> {
        let lines = source
            .filter(|s| s.text().len() == rope.len_bytes() && s.line_count() == rope.len_lines());
        Positions {
            rope,
            lines,
            hint: std::cell::Cell::new(0),
        }
    }

    pub fn position(&self, byte: usize, enc: Encoding) -> Position {
        let Some(src) = self.lines else {
            return position(self.rope, byte, enc);
        };
        let text = src.text();
        // Inside a character counts as that character.
        let mut byte = byte.min(text.len());
        while !text.is_char_boundary(byte) {
            byte -= 1;
        }
        let line = src.line_of_from(byte, self.hint.get());
        self.hint.set(line);
        let start = src.line_start(line);
        let before = &text[start..byte];
        let character = match enc {
            Encoding::Utf8 => byte - start,
            // (ASCII: one UTF-16 unit per byte, checked a word at a time)
            Encoding::Utf16 if before.is_ascii() => before.len(),
            Encoding::Utf16 => before.chars().map(char::len_utf16).sum(),
        };
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, start: usize, end: usize, enc: Encoding) -> Range {
        Range::new(
            self.position(start, enc),
            self.position(end.max(start), enc),
        )
    }
}

/// The byte offset of a position (clamped).
pub fn byte_offset(rope: &Rope, pos: Position, enc: Encoding) -> usize {
    let c = char_index(rope, pos, enc).unwrap_or_else(|c| c);
    rope.char_to_byte(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_and_utf8_columns_after_non_ascii_text() {
        // `é` is 2 bytes and 1 UTF-16 unit; `𝄞` is 4 bytes and 2 units.
        let rope = Rope::from_str("a\u{e9}\u{1d11e}b\nx");
        let b = "a\u{e9}\u{1d11e}".len();
        assert_eq!(position(&rope, b, Encoding::Utf16), Position::new(0, 4));
        assert_eq!(position(&rope, b, Encoding::Utf8), Position::new(0, 7));
        assert_eq!(byte_offset(&rope, Position::new(0, 4), Encoding::Utf16), b);
        assert_eq!(byte_offset(&rope, Position::new(0, 7), Encoding::Utf8), b);
        assert_eq!(position(&rope, b + 2, Encoding::Utf16), Position::new(1, 0));
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let rope = Rope::from_str("ab\r\ncd");
        assert_eq!(
            char_index(&rope, Position::new(0, 9), Encoding::Utf16),
            Err(2)
        );
        assert_eq!(
            char_index(&rope, Position::new(7, 0), Encoding::Utf16),
            Err(6)
        );
        assert_eq!(
            char_index(&rope, Position::new(1, 2), Encoding::Utf16),
            Ok(6)
        );
        // `\r` alone ends a line too.
        let rope = Rope::from_str("a\rb");
        assert_eq!(position(&rope, 2, Encoding::Utf8), Position::new(1, 0));
    }

    #[test]
    fn positions_through_the_line_index_equal_the_rope_s() {
        for text in [
            "",
            "a\n",
            "ab\r\ncd\n\u{e9}\u{1d11e}b\nx",
            "a\rb\nc",
            "\r\n\r\n",
            "x\u{e9}\n\u{1d11e}",
        ] {
            let rope = Rope::from_str(text);
            let src = SourceText::new(text.to_string());
            let p = Positions::new(&rope, Some(&src));
            // The index is used exactly when there is no lone `\r`.
            assert_eq!(p.lines.is_some(), !text.replace("\r\n", "").contains('\r'));
            for enc in [Encoding::Utf8, Encoding::Utf16] {
                for b in 0..=text.len() + 1 {
                    assert_eq!(p.position(b, enc), position(&rope, b, enc), "{text:?} {b}");
                }
            }
        }
    }

    #[test]
    fn negotiation_prefers_utf8() {
        let both = [PositionEncodingKind::UTF16, PositionEncodingKind::UTF8];
        assert_eq!(Encoding::negotiate(Some(&both)), Encoding::Utf8);
        assert_eq!(
            Encoding::negotiate(Some(&[PositionEncodingKind::UTF16])),
            Encoding::Utf16
        );
        assert_eq!(Encoding::negotiate(None), Encoding::Utf16);
    }
}
