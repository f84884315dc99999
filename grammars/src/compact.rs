//! A parser input without what tree-sitter would only skip, and the way
//! back to the original's offsets.
//!
//! tree-sitter reads every byte of its input through its lexer, a call per
//! byte, including the blanks that indent each line (a quarter of NPB's
//! code bytes), the runs of blanks that align code, and the comment lines
//! it only turns into `comment` extras that no analysis reads. Leaving
//! them out with included ranges ([`crate::code_ranges`]) costs every
//! token a walk over the ranges (`ts_lexer_goto` scans them from the
//! first), and one range per line cost more than it saved. A [`Compacted`]
//! text leaves them out of the text itself instead, and keeps every
//! newline (rows stay those of the original). It is made of pieces of the
//! original, each starting where something was left out; an offset comes
//! back through its piece ([`Compacted::start`], [`Compacted::end`],
//! [`Compacted::ranges`]).
//!
//! What may be left out is the grammar's business, never a token's:
//! blanks next to other blanks or at a line's ends, and a comment line
//! where a comment can only be an extra (see [`Compacted::fortran`] and
//! [`Compacted::c`]). So no token starts or ends in what was left out: a
//! start is mapped by the piece it is in, an end by the piece of the byte
//! before it (an end at a piece's start was before what the piece left
//! out).

/// A text with what tree-sitter would only skip left out, and the way
/// back to the original's offsets.
#[derive(Clone, Debug, Default)]
pub struct Compacted {
    /// The text to parse.
    pub text: String,
    /// Where each piece starts in `text` (the first at 0).
    starts: Vec<u32>,
    /// Per piece: the original offset of its bytes minus their offset in
    /// `text`.
    add: Vec<u32>,
}

/// Blanks between tokens: what a line may lose.
fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

impl Compacted {
    /// `text` (free-form Fortran, or fixed form normalised) compacted:
    ///
    /// * a line whose first non-blank byte starts a comment that the
    ///   lowering does not read from the tree (`!` and no directive, or a
    ///   directive without the word `section`: see `code_ranges`) keeps
    ///   only its newline;
    /// * every other line loses its leading blanks, a run of blanks in it
    ///   that starts with two spaces is cut to its first byte, and left
    ///   out at the line's end (other runs, with tabs, are rare and kept:
    ///   runs are found with a vector search for two spaces). Free-form Fortran's
    ///   blanks only separate tokens, and one is as good as many, outside a
    ///   character literal, whose length no analysis reads (its text is
    ///   read from the original); a continued character context goes on
    ///   after the `&` that starts the next line, or takes the blanks as
    ///   part of such a literal;
    /// * but a line with a digit before an `H` (a Hollerith constant such
    ///   as `5Ha  bc`, whose length the grammar counts) keeps its blanks
    ///   after the leading ones, and the line after it keeps its leading
    ///   ones when it ends with `&`.
    ///
    /// `None` for a text of 4 GiB or more.
    pub fn fortran(text: &str) -> Option<Compacted> {
        let b = text.as_bytes();
        let mut out = Builder::new(b)?;
        let mut at = 0usize;
        let mut keep_lead = false;
        loop {
            let line_end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |p| at + p);
            let line = &b[at..line_end];
            let first = line
                .iter()
                .position(|&c| !is_blank(c))
                .unwrap_or(line.len());
            if crate::is_plain_comment(&line[first..]) {
                out.drop_to(line_end);
                keep_lead = false;
            } else {
                if keep_lead {
                    out.keep_to(at + first);
                } else {
                    out.drop_to(at + first);
                }
                let hollerith = memchr::memchr2_iter(b'h', b'H', line)
                    .any(|i| i > 0 && line[i - 1].is_ascii_digit());
                if hollerith {
                    out.keep_to(line_end);
                } else {
                    out.keep_words(line_end);
                }
                keep_lead = hollerith && line.trim_ascii_end().ends_with(b"&");
            }
            if line_end >= b.len() {
                break;
            }
            out.keep_to(line_end + 1);
            at = line_end + 1;
        }
        out.finish()
    }

    /// `text` (C) compacted: every line loses its leading blanks, but for
    /// a line after a splice (backslash-newline: its blanks may be inside
    /// a literal or between two tokens the splice joins). `None` for a
    /// text of 4 GiB or more.
    pub fn c(text: &str) -> Option<Compacted> {
        let b = text.as_bytes();
        let mut out = Builder::new(b)?;
        let mut at = 0usize;
        loop {
            let line_end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |p| at + p);
            let spliced = at >= 2 && b[at - 2] == b'\\'
                || at >= 3 && b[at - 3] == b'\\' && b[at - 2] == b'\r';
            if !spliced {
                let first = b[at..line_end].iter().position(|&c| !is_blank(c));
                out.drop_to(at + first.unwrap_or(line_end - at));
            }
            if line_end >= b.len() {
                out.keep_to(line_end);
                break;
            }
            out.keep_to(line_end + 1);
            at = line_end + 1;
        }
        out.finish()
    }

    /// The piece of `text` that holds offset `b`.
    fn piece(&self, b: u32) -> usize {
        self.starts.partition_point(|&s| s <= b).saturating_sub(1)
    }

    /// The original offset of a node or token that starts at `b` in
    /// [`Compacted::text`]: nothing starts in what was left out, so a
    /// start at a piece's first byte was after what the piece left out.
    fn start(&self, b: usize) -> usize {
        let b = clamp(b);
        (b + self.add.get(self.piece(b)).copied().unwrap_or(0)) as usize
    }

    /// The original offset of a node or token that ends at `b` in
    /// [`Compacted::text`]: its last byte's end, which was before what the
    /// next piece left out.
    fn end(&self, b: usize) -> usize {
        let b = clamp(b);
        match b.checked_sub(1) {
            Some(last) => (b + self.add.get(self.piece(last)).copied().unwrap_or(0)) as usize,
            None => self.start(0),
        }
    }

    /// `start..end` of [`Compacted::text`] in the original: an empty range
    /// stays empty (at its start's place). A lookup per offset: what
    /// [`Compacted::ranges`] does faster over many ranges in order, and
    /// what the tests hold it to.
    pub fn range(&self, start: usize, end: usize) -> (usize, usize) {
        let s = self.start(start);
        if end <= start {
            (s, s)
        } else {
            (s, self.end(end).max(s))
        }
    }

    /// A cursor for [`Compacted::range`] over ranges whose starts mostly
    /// come in order (a tree's nodes in pre-order): it finds pieces from
    /// the last one it found.
    pub fn ranges(&self) -> Ranges<'_> {
        Ranges {
            c: self,
            piece: 0,
            lo: 0,
            hi: 0,
            add: 0,
        }
    }
}

/// Makes a [`Compacted`] text from left to right.
struct Builder<'a> {
    b: &'a [u8],
    /// The original's offset up to which it was read.
    at: usize,
    out: Compacted,
    kept: Vec<u8>,
    /// Finds two spaces.
    spaces: memchr::memmem::Finder<'static>,
}

impl<'a> Builder<'a> {
    fn new(b: &'a [u8]) -> Option<Builder<'a>> {
        u32::try_from(b.len()).ok()?;
        Some(Builder {
            b,
            at: 0,
            out: Compacted {
                text: String::new(),
                starts: vec![0],
                add: vec![0],
            },
            kept: Vec::with_capacity(b.len()),
            spaces: memchr::memmem::Finder::new(b"  "),
        })
    }

    /// Keeps the original up to `to`.
    fn keep_to(&mut self, to: usize) {
        if to > self.at {
            self.kept.extend_from_slice(&self.b[self.at..to]);
            self.at = to;
        }
    }

    /// Leaves the original out up to `to`: a new piece starts.
    fn drop_to(&mut self, to: usize) {
        if to <= self.at {
            return;
        }
        self.at = to;
        let start = self.kept.len() as u32;
        let add = (to - self.kept.len()) as u32;
        if self.out.starts.last() == Some(&start) {
            // nothing kept since the last piece started: it starts here
            *self.out.add.last_mut().unwrap_or(&mut 0) = add;
        } else {
            self.out.starts.push(start);
            self.out.add.push(add);
        }
    }

    /// Keeps the original up to `to` (a line's end), but for the second
    /// and later blanks of each run that starts with two spaces, and such
    /// a run before `to` (found with a vector search: most lines have
    /// none; a run that starts otherwise is kept, which is only slower).
    fn keep_words(&mut self, to: usize) {
        let b = self.b;
        let mut i = self.at;
        while let Some(p) = self.spaces.find(&b[i..to]) {
            let s = i + p;
            let mut j = s + 2;
            while j < to && is_blank(b[j]) {
                j += 1;
            }
            if j == to {
                self.keep_to(s);
                self.drop_to(to);
                return;
            }
            self.keep_to(s + 1);
            self.drop_to(j);
            i = j;
        }
        self.keep_to(to);
    }

    fn finish(mut self) -> Option<Compacted> {
        self.keep_to(self.b.len());
        // only ASCII blanks and whole comment texts (to their line's end)
        // are left out, so what is kept is UTF-8 still
        self.out.text = String::from_utf8(self.kept).ok()?;
        Some(self.out)
    }
}

/// See [`Compacted::ranges`].
pub struct Ranges<'a> {
    c: &'a Compacted,
    /// The piece of the last start, its first byte, the next piece's, its
    /// `add`.
    piece: usize,
    lo: u32,
    hi: u32,
    add: u32,
}

impl Ranges<'_> {
    /// The piece holding `b`, looked for from piece `from` on (`b` at or
    /// after its start): the next few one by one, then a binary search.
    fn piece_from(&self, from: usize, b: u32) -> usize {
        let starts = &self.c.starts;
        let mut p = from;
        for _ in 0..4 {
            match starts.get(p + 1) {
                Some(&s) if s <= b => p += 1,
                _ => return p,
            }
        }
        p + starts[p..].partition_point(|&s| s <= b).saturating_sub(1)
    }

    /// [`Compacted::range`] of `start..end`. Starts in pre-order come in
    /// order, so the piece of a start is looked for from the last one; an
    /// end, from its start's.
    pub fn range(&mut self, start: u32, end: u32) -> (u32, u32) {
        let c = self.c;
        if !(self.lo <= start && start < self.hi) {
            let p = if self.lo <= start {
                self.piece_from(self.piece, start)
            } else {
                c.piece(start)
            };
            self.piece = p;
            self.lo = c.starts.get(p).copied().unwrap_or(0);
            self.hi = c.starts.get(p + 1).copied().unwrap_or(u32::MAX);
            self.add = c.add.get(p).copied().unwrap_or(0);
        }
        let s = start.saturating_add(self.add);
        if end <= start {
            return (s, s);
        }
        let last = end - 1;
        let add = if last < self.hi {
            self.add
        } else {
            c.add
                .get(self.piece_from(self.piece, last))
                .copied()
                .unwrap_or(0)
        };
        (s, end.saturating_add(add).max(s))
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
    fn runs_of_spaces_are_cut_to_one_but_where_a_hollerith_may_count_them() {
        let t = "  x  =   a(1,  2)   \n  y = 'a    b'\t\t! c  d\n  write(*, 100)  5Ha  bc, &\n   d\n\t z =\t\t1\n";
        let c = Compacted::fortran(t).unwrap();
        assert_eq!(
            c.text,
            "x = a(1, 2)\ny = 'a b'\t\t! c d\nwrite(*, 100)  5Ha  bc, &\n   d\nz =\t\t1\n"
        );
        check_bytes(t, &c);
        // ends before a cut run, starts after it
        let a = c.text.find("a(").unwrap();
        assert_eq!(c.start(a), t.find("a(").unwrap());
        assert_eq!(
            c.end(c.text.find(" a(").unwrap() + 1),
            t.find("  a(").unwrap()
        );
        // a line's end, after its trailing blanks were cut
        let nl = c.text.find('\n').unwrap();
        assert_eq!(c.end(nl + 1), t.find('\n').unwrap() + 1);
        assert_eq!(c.end(nl), t.find(")   ").unwrap() + 1);
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
