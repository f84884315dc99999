//! A parser input without what tree-sitter would only skip, and the way
//! back to the original's offsets.
//!
//! tree-sitter reads every byte of its input through its lexer, a call per
//! byte, including the blanks that indent each line (a quarter of NPB's
//! code bytes) and the comment lines it only turns into `comment` extras
//! that no analysis reads. Leaving them out with included ranges
//! ([`crate::code_ranges`]) costs every token a walk over the ranges
//! (`ts_lexer_goto` scans them from the first), and one range per line
//! cost more than it saved. A [`Compacted`] text leaves them out of the
//! text itself instead: every line keeps its newline (rows stay those of
//! the original), loses its leading blanks, and a comment line loses all
//! of its text. Offsets come back through [`Compacted::start`] and
//! [`Compacted::end`], which need the row only: a line loses bytes at its
//! start and nowhere else.
//!
//! What may be left out is the grammar's business, never a token's: the
//! blanks before a line's first token, and a comment line where a comment
//! can only be an extra (see [`Compacted::fortran`] and [`Compacted::c`]).

/// A text with each line's leading blanks (and comment lines' text) left
/// out, and the offsets of its rows in the original.
#[derive(Clone, Debug, Default)]
pub struct Compacted {
    /// The text to parse.
    pub text: String,
    /// Where each row starts in `text`.
    starts: Vec<u32>,
    /// Per row: the original offset of a byte of the row minus its offset
    /// in `text`.
    add: Vec<u32>,
    /// Per row: the bytes left out at its start.
    lead: Vec<u32>,
}

impl Compacted {
    /// `text` (free-form Fortran, or fixed form normalised) compacted: a
    /// line whose first non-blank byte starts a comment that the lowering
    /// does not read from the tree (`!` and no directive, or a directive
    /// without the word `section`: see `code_ranges`) keeps only its newline;
    /// every other line loses its leading blanks. Free-form Fortran has
    /// no significant leading blank: a continued character context goes
    /// on after the `&` that starts the next line, or takes the blanks as
    /// part of a literal whose length no analysis reads. `None` for a
    /// text of 4 GiB or more.
    pub fn fortran(text: &str) -> Option<Compacted> {
        Compacted::build(text, |line, _| {
            let first = line
                .iter()
                .position(|&c| c != b' ' && c != b'\t')
                .unwrap_or(line.len());
            if crate::is_plain_comment(&line[first..]) {
                line.len()
            } else {
                first
            }
        })
    }

    /// `text` (C) compacted: every line loses its leading blanks, but for
    /// a line after a splice (backslash-newline: its blanks may be inside
    /// a literal or between two tokens the splice joins). `None` for a
    /// text of 4 GiB or more.
    pub fn c(text: &str) -> Option<Compacted> {
        let b = text.as_bytes();
        Compacted::build(text, |line, at| {
            let spliced = at >= 2 && b[at - 2] == b'\\'
                || at >= 3 && b[at - 3] == b'\\' && b[at - 2] == b'\r';
            if spliced {
                0
            } else {
                line.iter()
                    .position(|&c| !matches!(c, b' ' | b'\t'))
                    .unwrap_or(line.len())
            }
        })
    }

    /// Compacts `text`, leaving out the first `drop(line, offset)` bytes
    /// of each line (`line`: without its newline).
    fn build(text: &str, mut drop: impl FnMut(&[u8], usize) -> usize) -> Option<Compacted> {
        let b = text.as_bytes();
        u32::try_from(b.len()).ok()?;
        let rows = memchr::memchr_iter(b'\n', b).count() + 1;
        let mut out = Compacted {
            text: String::with_capacity(b.len()),
            starts: Vec::with_capacity(rows),
            add: Vec::with_capacity(rows),
            lead: Vec::with_capacity(rows),
        };
        let mut kept: Vec<u8> = Vec::with_capacity(b.len());
        let mut at = 0usize;
        loop {
            let line_end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |p| at + p);
            let n = drop(&b[at..line_end], at).min(line_end - at);
            out.starts.push(kept.len() as u32);
            out.add.push((at + n - kept.len()) as u32);
            out.lead.push(n as u32);
            let next = (line_end + 1).min(b.len());
            kept.extend_from_slice(&b[at + n..next]);
            if line_end >= b.len() {
                break;
            }
            at = next;
        }
        // only whole runs of ASCII blanks and whole lines are left out, so
        // what is kept is UTF-8 still
        out.text = String::from_utf8(kept).ok()?;
        Some(out)
    }

    /// The row of `text` that holds offset `b` (a row's end, its newline's
    /// offset + 1, is the next row's start).
    fn row(&self, b: u32) -> usize {
        self.starts.partition_point(|&s| s <= b).saturating_sub(1)
    }

    /// The original offset of a node or token that starts at `b` in
    /// [`Compacted::text`]: nothing starts in what was left out, so a
    /// start at a row's first byte was after the row's leading blanks.
    pub fn start(&self, b: usize) -> usize {
        let b = clamp(b);
        let r = self.row(b);
        (b + self.add.get(r).copied().unwrap_or(0)) as usize
    }

    /// The original offset of a node or token that ends at `b` in
    /// [`Compacted::text`], after its first byte: an end at a row's first
    /// byte is the previous line's newline's end, before what the row left
    /// out.
    pub fn end(&self, b: usize) -> usize {
        let b = clamp(b);
        let r = self.row(b);
        let add = self.add.get(r).copied().unwrap_or(0);
        if r > 0 && self.starts[r] == b {
            (b + add - self.lead[r]) as usize
        } else {
            (b + add) as usize
        }
    }

    /// `start..end` of [`Compacted::text`] in the original: an empty range
    /// stays empty (at [`Compacted::start`]).
    pub fn range(&self, start: usize, end: usize) -> (usize, usize) {
        let s = self.start(start);
        if end <= start {
            (s, s)
        } else {
            (s, self.end(end).max(s))
        }
    }

    /// A cursor for [`Compacted::range`] over ranges whose starts mostly
    /// come in order (a tree's nodes in pre-order): it finds rows from the
    /// last one it found.
    pub fn ranges(&self) -> Ranges<'_> {
        Ranges {
            c: self,
            row: 0,
            lo: 0,
            hi: 0,
            add: 0,
        }
    }
}

/// See [`Compacted::ranges`].
pub struct Ranges<'a> {
    c: &'a Compacted,
    /// The row last found, its first byte, the next row's, and its `add`.
    row: usize,
    lo: u32,
    hi: u32,
    add: u32,
}

impl Ranges<'_> {
    /// `add` of the row holding `b`, made the current row.
    fn add_at(&mut self, b: u32) -> u32 {
        if self.lo <= b && b < self.hi {
            return self.add;
        }
        let starts = &self.c.starts;
        let r = if self.lo <= b {
            // the next few rows one by one, then a binary search
            let mut r = self.row;
            let mut steps = 0;
            while steps < 4 && starts.get(r + 1).is_some_and(|&s| s <= b) {
                r += 1;
                steps += 1;
            }
            if starts.get(r + 1).is_some_and(|&s| s <= b) {
                r + starts[r..].partition_point(|&s| s <= b).saturating_sub(1)
            } else {
                r
            }
        } else {
            self.c.row(b)
        };
        self.row = r;
        self.lo = starts.get(r).copied().unwrap_or(0);
        self.hi = starts.get(r + 1).copied().unwrap_or(u32::MAX);
        self.add = self.c.add.get(r).copied().unwrap_or(0);
        self.add
    }

    /// [`Compacted::range`] of `start..end`. A range's end is its last
    /// byte's end, so it moves as that byte does: an end at a row's first
    /// byte stays before what the row left out.
    pub fn range(&mut self, start: u32, end: u32) -> (u32, u32) {
        let s = start.saturating_add(self.add_at(start));
        if end <= start {
            return (s, s);
        }
        (s, end.saturating_add(self.add_at(end - 1)))
    }
}

fn clamp(b: usize) -> u32 {
    u32::try_from(b).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte kept maps back to itself in the original.
    fn check_bytes(original: &str, c: &Compacted) {
        for (i, ch) in c.text.bytes().enumerate() {
            let o = c.start(i);
            assert_eq!(original.as_bytes()[o], ch, "byte {i} of {:?}", c.text);
        }
    }

    #[test]
    fn fortran_lines_lose_their_blanks_and_comment_lines_their_text() {
        let t = "program p\n  ! note\n   x = 1 ! trailing\n!$omp parallel\n !$omp section\n\t  y = 2\n\n  end";
        let c = Compacted::fortran(t).unwrap();
        // (a directive stays when it may be a `sections` one)
        assert_eq!(
            c.text,
            "program p\n\nx = 1 ! trailing\n\n!$omp section\ny = 2\n\nend"
        );
        check_bytes(t, &c);
        // a token at a row's start is after the blanks
        let x = c.text.find("x =").unwrap();
        assert_eq!(c.start(x), t.find("x =").unwrap());
        // a range that ends at a row's start ends where the row starts
        let nl = c.text.find("1 ! trailing\n").unwrap() + "1 ! trailing\n".len();
        assert_eq!(c.end(nl), t.find("!$omp parallel").unwrap());
        // ... and one that ends in the row, where it ends there
        assert_eq!(c.end(x + 1), t.find("x =").unwrap() + 1);
        // an empty range stays empty
        assert_eq!(
            c.range(x, x),
            (t.find("x =").unwrap(), t.find("x =").unwrap())
        );
        // the end of the text
        assert_eq!(c.end(c.text.len()), t.len());
    }

    #[test]
    fn c_lines_after_a_splice_keep_their_blanks() {
        let t = "  int a; \\\n   b\n #define X \\\n   1\n\n";
        let c = Compacted::c(t).unwrap();
        assert_eq!(c.text, "int a; \\\n   b\n#define X \\\n   1\n\n");
        check_bytes(t, &c);
    }

    #[test]
    fn the_cursor_maps_as_the_lookups_do() {
        let t = "a\n  b c\n\n    d\n e\n  ! c\nf\n  g\n    h\n i\n";
        let c = Compacted::fortran(t).unwrap();
        let n = c.text.len();
        let mut pairs = Vec::new();
        for s in 0..=n {
            for e in s..=n {
                pairs.push((s, e));
            }
        }
        // in order, and out of order
        let mut cur = c.ranges();
        for &(s, e) in pairs.iter().chain(pairs.iter().rev()) {
            assert_eq!(
                cur.range(s as u32, e as u32),
                {
                    let (a, b) = c.range(s, e);
                    (a as u32, b as u32)
                },
                "{s}..{e}"
            );
        }
    }

    #[test]
    fn crlf_and_unicode_survive() {
        let t = "  x = 'é'\r\n  ! ü\r\n\ty\r\n";
        let c = Compacted::fortran(t).unwrap();
        assert_eq!(c.text, "x = 'é'\r\n\ny\r\n");
        check_bytes(t, &c);
        let c = Compacted::c("").unwrap();
        assert_eq!(c.text, "");
        assert_eq!(c.range(0, 0), (0, 0));
    }
}
