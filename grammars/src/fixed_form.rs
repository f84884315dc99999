//! Fixed-form Fortran to free form, with a map back to original offsets.
//!
//! tree-sitter-fortran parses free form only (SEMANTICS.md §1). This module
//! rewrites fixed-form text into free-form text that keeps the line
//! structure (one output line per input line) and almost every byte offset:
//!
//! * column-1 `C c * D d` comment and debug lines become `!` comments (only
//!   the column-1 byte changes, so `C$OMP PARALLEL DO` reads `!$OMP PARALLEL
//!   DO` and `CDIR$ IVDEP` reads `!DIR$ IVDEP`); `!` lines and blank lines are
//!   kept as they are, and so are lines starting with `#` (directives);
//! * a label in columns 1-5 is kept where it is (free form accepts a label at
//!   the start of a line); a `0` in column 6 becomes a blank;
//! * a non-blank, non-`0` column-6 character marks a continuation: it becomes
//!   `&`, and an `&` is *inserted* after the last code character of the
//!   previous statement line (before its trailing `!` comment; at the end of
//!   the statement field when that line ends inside a character literal);
//!   comment and blank lines may sit in between;
//! * columns 73 and beyond are dropped from statement lines (trailing `!`
//!   comments included) and from directive comment lines (`C$OMP`, `!$OMP`,
//!   `CDIR$`: a `$` in columns 2-6 after letters or digits), as compilers
//!   do; other comment lines are kept whole;
//! * DEC tab form: a tab in columns 1-6 starts the statement field (column 7);
//!   a tab followed by a digit 1-9 is a continuation line (the digit plays the
//!   column-6 role);
//! * `!` starts a comment outside character literals (`'` and `"`, with the
//!   literal state carried across continuation lines);
//! * `\r\n` line ends and a missing final newline are kept as they are.
//!
//! Columns count characters (not bytes); every character, a tab inside the
//! statement field included, is one column. Case is never changed.
//!
//! The only edits that change lengths are the inserted `&` bytes, the
//! dropped columns 73+, and a multi-byte character in column 6 replaced by
//! one byte. [`Normalized::original_offset`] maps every normalised byte
//! offset back exactly; the map is a sorted list of
//! `(normalized_start, original_start)` segments searched by bisection.
//!
//! Known limits: Hollerith constants (`5HHELLO`) are not recognised (a `!`
//! or quote inside one confuses the comment scan); an identifier or keyword
//! split across a continuation with blanks around the split (legal in fixed
//! form, where blanks are insignificant) reads as two tokens in free form;
//! blank-insensitive spellings such as `DO10I=1,N` are left as they are.

/// Where fixed form stops reading a statement line by default.
pub const DEFAULT_LINE_LENGTH: usize = 72;

/// Options for [`normalize_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedFormOptions {
    /// Last column of the statement field (72 by default; 132 for
    /// `-ffixed-line-length-132` / `-extend-source`; `None` for no limit).
    /// Values below 6 are treated as 6.
    pub line_length: Option<usize>,
}

impl Default for FixedFormOptions {
    fn default() -> Self {
        FixedFormOptions {
            line_length: Some(DEFAULT_LINE_LENGTH),
        }
    }
}

/// Normalised free-form text plus a map back to original byte offsets.
#[derive(Clone, Debug)]
pub struct Normalized {
    /// The free-form text to parse.
    pub text: String,
    /// `(normalized_start, original_start)`, sorted by both components; the
    /// first segment starts at normalised offset 0. Within a segment offsets
    /// advance together, never past the next segment's original start.
    segments: Vec<(usize, usize)>,
    original_len: usize,
}

impl Normalized {
    /// Original byte offset of byte `normalized_offset` of the normalised
    /// text. Offsets inside inserted text map to the original position where
    /// the text was inserted; offsets at or past the end map to the end of
    /// the original. Monotone non-decreasing, never above the original
    /// length, and a char boundary of the normalised text maps to a char
    /// boundary of the original.
    pub fn original_offset(&self, normalized_offset: usize) -> usize {
        if normalized_offset >= self.text.len() {
            return self.original_len;
        }
        let i = self
            .segments
            .partition_point(|&(n, _)| n <= normalized_offset);
        if i == 0 {
            return 0;
        }
        let (n, o) = self.segments[i - 1];
        let limit = self
            .segments
            .get(i)
            .map_or(self.original_len, |&(_, next_o)| next_o);
        o.saturating_add(normalized_offset - n).min(limit)
    }

    /// Normalised byte offset of original byte `original_offset`: the inverse
    /// of [`Normalized::original_offset`] where one exists. Offsets inside
    /// dropped text (columns 73+) map to where the dropped text would have
    /// been; offsets at or past the original end map to the normalised end.
    pub fn normalized_offset(&self, original_offset: usize) -> usize {
        if original_offset >= self.original_len {
            return self.text.len();
        }
        let i = self
            .segments
            .partition_point(|&(_, o)| o <= original_offset);
        if i == 0 {
            return 0;
        }
        let (n, o) = self.segments[i - 1];
        let limit = self
            .segments
            .get(i)
            .map_or(self.text.len(), |&(next_n, _)| next_n);
        n.saturating_add(original_offset - o).min(limit)
    }

    /// Byte length of the original text.
    pub fn original_len(&self) -> usize {
        self.original_len
    }
}

/// Converts fixed-form source to free form (72-column statement field).
pub fn normalize(original: &str) -> Normalized {
    normalize_with(original, &FixedFormOptions::default())
}

/// Converts fixed-form source to free form with explicit options.
pub fn normalize_with(original: &str, options: &FixedFormOptions) -> Normalized {
    let line_length = options.line_length.map(|l| l.max(6));
    let lines = classify_lines(original, line_length);
    let needs_amp = continued_lines(&lines);

    let mut b = Builder::new(original);
    for (line, amp) in lines.iter().zip(needs_amp) {
        emit_line(&mut b, line, amp);
    }
    b.finish()
}

/// One physical line: `start..content_end` is the text, `content_end..end`
/// the line terminator (`\n`, `\r\n`, a lone final `\r`, or nothing).
#[derive(Debug)]
struct Line {
    start: usize,
    content_end: usize,
    end: usize,
    kind: LineKind,
}

#[derive(Debug)]
enum LineKind {
    /// Blank, `!` comment or `#` directive: copied up to `keep_end`.
    Verbatim { keep_end: usize },
    /// Column-1 `C c * D d`: that byte becomes `!`; text from `keep_end` on
    /// is dropped (directive lines only).
    FixedComment { keep_end: usize },
    /// A statement line (with or without code).
    Statement(Statement),
}

#[derive(Debug)]
struct Statement {
    /// Byte range of the column-6 character (or the digit after a DEC tab)
    /// and what replaces it: `&` on continuations, a blank for `0` or a
    /// continuation mark with nothing to continue.
    col6: Option<(usize, usize, &'static str)>,
    is_continuation: bool,
    /// False for a line with nothing to parse (only a comment after column
    /// 6, a lone continuation mark, text past the line length): it neither
    /// continues nor is continued.
    has_code: bool,
    /// End of the text kept from this line: the statement field and its
    /// trailing `!` comment, cut at the line length.
    keep_end: usize,
    /// Where an `&` goes when the next statement line continues this one.
    amp_at: usize,
    /// Blanks between two digits outside literals (`1 000 000`): left out,
    /// since blanks are no separators in fixed form.
    squeeze: Vec<(usize, usize)>,
    /// Where a blank goes between a `GOTO` and its label written together
    /// (`GOTO10`: one name in free form), for a statement on one line.
    split: Option<usize>,
}

const BOM: char = '\u{feff}';

fn is_blank_byte(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// Physical lines as `(start, content_end, end)`. A byte-order mark is a
/// line of its own, so that the first real line starts in column 1.
fn split_lines(src: &str) -> Vec<(usize, usize, usize)> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    if src.starts_with(BOM) {
        start = BOM.len_utf8();
        out.push((0, start, start));
    }
    while start < bytes.len() {
        let (line_end, end) = match memchr_newline(&bytes[start..]) {
            Some(i) => (start + i, start + i + 1),
            None => (bytes.len(), bytes.len()),
        };
        let content_end = if line_end > start && bytes[line_end - 1] == b'\r' {
            line_end - 1
        } else {
            line_end
        };
        out.push((start, content_end, end));
        start = end;
    }
    out
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// Pass 1: what each line is, with the character-literal state carried from
/// a statement line to its continuations.
fn classify_lines(src: &str, line_length: Option<usize>) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut have_statement = false;
    let mut quote: Option<u8> = None;
    for (start, content_end, end) in split_lines(src) {
        let content = &src[start..content_end];
        if start == 0 && content.starts_with(BOM) {
            lines.push(Line {
                start,
                content_end,
                end,
                kind: LineKind::Verbatim { keep_end: end },
            });
            continue;
        }
        let kind = classify(
            content,
            start,
            line_length,
            have_statement,
            &mut quote,
            &mut have_statement,
        );
        lines.push(Line {
            start,
            content_end,
            end,
            kind,
        });
    }
    lines
}

fn classify(
    content: &str,
    start: usize,
    line_length: Option<usize>,
    continuable: bool,
    quote: &mut Option<u8>,
    have_statement: &mut bool,
) -> LineKind {
    let bytes = content.as_bytes();
    if bytes.iter().all(|&b| is_blank_byte(b)) {
        return LineKind::Verbatim {
            keep_end: start + content.len(),
        };
    }
    match bytes[0] {
        b'C' | b'c' | b'*' | b'D' | b'd' | b'!' => {
            // Directive lines (`C$OMP`, `!$OMP`, `CDIR$`, `c$`) obey the
            // line length like statements; other comments are kept whole.
            let keep_end = if is_directive_comment(bytes) {
                start + cut_at_column(content, line_length)
            } else {
                start + content.len()
            };
            return if bytes[0] == b'!' {
                LineKind::Verbatim { keep_end }
            } else {
                LineKind::FixedComment { keep_end }
            };
        }
        b'#' => {
            return LineKind::Verbatim {
                keep_end: start + content.len(),
            }
        }
        _ => {}
    }

    // Columns 1-5 (label field) and column 6, or a DEC tab.
    let mut chars = content.char_indices().peekable();
    let mut col = 0usize;
    let mut label_blank = true;
    let mut col6: Option<(usize, usize)> = None;
    let mut field_start = content.len();
    let mut zero_col6 = false;
    let mut tab_form = false;
    while let Some(&(i, c)) = chars.peek() {
        if col == 5 {
            // Column 6.
            if c == '\t' {
                tab_form = true;
            } else {
                chars.next();
                let end = i + c.len_utf8();
                if c == '0' {
                    zero_col6 = true;
                    col6 = Some((i, end));
                } else if c != ' ' {
                    col6 = Some((i, end));
                }
                field_start = end;
                col = 6;
                break;
            }
        }
        if c == '\t' {
            tab_form = true;
        }
        if tab_form {
            chars.next();
            let after_tab = i + 1;
            field_start = after_tab;
            if let Some(&(j, d)) = chars.peek() {
                if matches!(d, '1'..='9') {
                    chars.next();
                    col6 = Some((j, j + 1));
                    field_start = j + 1;
                }
            }
            col = 6;
            break;
        }
        if c == '!' && label_blank {
            // `!` before column 6 with only blanks before it: a comment line.
            return LineKind::Verbatim {
                keep_end: start + content.len(),
            };
        }
        if c != ' ' {
            label_blank = false;
        }
        chars.next();
        col += 1;
    }
    let label_end = col6.map_or(field_start, |(s, _)| s);
    let label = &content.as_bytes()[..label_end.min(content.len())];
    let label_has_code = label.iter().any(|&b| !is_blank_byte(b));

    let is_continuation = col6.is_some() && !zero_col6 && continuable;
    let mut q = if is_continuation { *quote } else { None };
    let quote_at_start = q.is_some();

    // Statement field: columns 7..=line_length, `!` comments, literals.
    let mut field_end = content.len();
    let mut comment_start: Option<usize> = None;
    let mut cut = content.len();
    let mut last_code_end: Option<usize> = None;
    // blanks after a digit outside literals: where they start
    let mut after_digit: Option<usize> = None;
    // the digits before are a number's (not the end of a name's)
    let mut in_number = false;
    // a real constant's exponent written apart from its mantissa (`1. D 0`,
    // `2.5 e - 3`; cpp leaves MITgcm's `1. _d 0` so, `_d` defined as `D`):
    // where the mantissa ends, whether it has its point (an integer is no
    // mantissa: `DO 10 D0 = 1, 2` is a loop over `D0`), and the exponent
    // letter and sign seen since
    let mut mantissa_end: Option<usize> = None;
    let mut mantissa_point = false;
    let mut exponent_ok = false;
    // the character before `prev`, and the last non-blank one before `c`
    let mut prev2 = ' ';
    let mut last_code = ' ';
    let mut exponent: Option<(usize, Option<usize>)> = None;
    let mut prev = ' ';
    let mut squeeze = Vec::new();
    for (i, c) in chars.by_ref() {
        col += 1;
        if line_length.is_some_and(|l| col > l) {
            field_end = i;
            cut = i;
            break;
        }
        let was_quoted = q.is_some();
        match (q, c) {
            (Some(open), _) if c as u32 == u32::from(open) => q = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => q = Some(c as u8),
            (None, '!') => {
                comment_start = Some(i);
                break;
            }
            _ => {}
        }
        let blank = c == ' ' || c == '\t' || c == '\r' || c == '\u{b}' || c == '\u{c}';
        if !blank {
            last_code_end = Some(i + c.len_utf8());
        }
        if was_quoted || q.is_some() {
            after_digit = None;
            mantissa_end = None;
            exponent = None;
        } else if let (true, Some((letter, sign)), Some(m)) =
            (c.is_ascii_digit(), exponent, mantissa_end)
        {
            // the exponent's first digit: the blanks around its letter and
            // sign are no separators
            let mut from = m;
            for at in [Some(letter), sign, Some(i)].into_iter().flatten() {
                if from < at {
                    squeeze.push((start + from, start + at));
                }
                from = at + 1;
            }
            exponent = None;
            mantissa_end = None;
            in_number = true;
            after_digit = Some(i + 1);
        } else if c.is_ascii_digit() {
            match after_digit {
                // blanks inside a number (`1 000 000`; a name keeps them:
                // the tree's names are the source's)
                Some(b) if b < i => {
                    if in_number {
                        squeeze.push((start + b, start + i));
                    }
                }
                Some(_) => {}
                None => in_number = !(prev.is_ascii_alphanumeric() || prev == '_' || prev == '$'),
            }
            after_digit = Some(i + 1);
            exponent = None;
            if mantissa_end.is_none() {
                // a number that may take an exponent: `.9`, or an integer
                // that starts a value (`x = 0 _d 0`; not `real*8 d0`)
                mantissa_point = prev == '.' && !(prev2.is_ascii_alphanumeric() || prev2 == '.');
                exponent_ok = mantissa_point || last_code == '=';
            }
            mantissa_end = in_number.then_some(i + 1);
        } else if !blank {
            after_digit = None;
            match (c, exponent) {
                // `1.`: the mantissa goes on
                ('.', None) if mantissa_end == Some(i) && !mantissa_point => {
                    mantissa_end = Some(i + 1);
                    mantissa_point = true;
                    exponent_ok = true;
                }
                ('e' | 'E' | 'd' | 'D' | 'q' | 'Q', None)
                    if mantissa_end.is_some() && exponent_ok =>
                {
                    exponent = Some((i, None));
                }
                ('+' | '-', Some((letter, None))) => exponent = Some((letter, Some(i))),
                _ => {
                    mantissa_end = None;
                    exponent = None;
                }
            }
        }
        prev2 = prev;
        prev = c;
        if !blank {
            last_code = c;
        }
    }
    if let Some(cs) = comment_start {
        field_end = cs;
        // The comment runs to the end of the line or the line length.
        if let Some(l) = line_length {
            for (i, _) in chars {
                col += 1;
                if col > l {
                    cut = i;
                    break;
                }
            }
        }
    }
    let field_end = field_end.max(field_start);
    let keep_end = cut.max(field_end);

    let field_has_code = last_code_end.is_some();
    let effective = if is_continuation {
        field_has_code || quote_at_start
    } else {
        field_has_code || label_has_code
    };
    if !effective {
        // Nothing to parse: keep the comment, blank column 6, cut the rest.
        return LineKind::Statement(Statement {
            col6: col6.map(|(s, e)| (start + s, start + e, " ")),
            is_continuation: false,
            has_code: false,
            keep_end: start + keep_end,
            amp_at: start + keep_end,
            squeeze: Vec::new(),
            split: None,
        });
    }

    let amp_at = if q.is_some() {
        field_end
    } else {
        last_code_end.unwrap_or_else(|| {
            // Code only in the label field (a short line such as `  END`).
            content[..label_end]
                .bytes()
                .rposition(|b| !is_blank_byte(b))
                .map_or(label_end, |p| p + 1)
        })
    };
    *have_statement = true;
    *quote = q;
    let replacement = if is_continuation { "&" } else { " " };
    // (a label is digits; other code in columns 1-5 is a statement
    // written from column 1, left as it is)
    let label_is_code = label
        .iter()
        .any(|&b| !is_blank_byte(b) && !b.is_ascii_digit());
    let split = if is_continuation || q.is_some() || label_is_code {
        None
    } else {
        content
            .get(field_start..field_end)
            .and_then(|f| joined_goto_label(f.as_bytes()))
            .map(|k| start + field_start + k)
    };
    LineKind::Statement(Statement {
        col6: col6.map(|(s, e)| (start + s, start + e, replacement)),
        is_continuation,
        has_code: true,
        keep_end: start + keep_end,
        amp_at: start + amp_at,
        squeeze,
        split,
    })
}

/// Where the label starts in a statement field that is a `GOTO` followed
/// by its label with no blank between (`GOTO10`; `GO TO 10` is read
/// already), alone or after a logical IF's condition (`IF (X) GOTO10`),
/// blanks anywhere else: tree-sitter reads free-form text, where
/// `goto10` is one name. A name such as `GOTO1` is no statement of its
/// own (an assignment has its `=`, a call its `CALL`), so such a field is
/// a jump.
fn joined_goto_label(field: &[u8]) -> Option<usize> {
    // the field's non-blank bytes, with their offsets
    let code: Vec<(usize, u8)> = field
        .iter()
        .enumerate()
        .filter(|&(_, &b)| !is_blank_byte(b))
        .map(|(k, &b)| (k, b.to_ascii_lowercase()))
        .collect();
    let digits = code
        .iter()
        .rev()
        .take_while(|(_, b)| b.is_ascii_digit())
        .count();
    let label = code.len().checked_sub(digits).filter(|_| digits > 0)?;
    let keyword = label.checked_sub(4)?;
    if code[keyword..label].iter().map(|&(_, b)| b).ne(*b"goto") {
        return None;
    }
    // the label must follow the `O` at once
    let (at, _) = code[label];
    if at == 0 || is_blank_byte(field[at - 1]) {
        return None;
    }
    // before `GOTO`: nothing, or `IF (...)` whose `(` closes there
    let before = &code[..keyword];
    if !before.is_empty() {
        let starts_if =
            before.len() >= 4 && before[0].1 == b'i' && before[1].1 == b'f' && before[2].1 == b'(';
        if !starts_if {
            return None;
        }
        let mut depth = 0usize;
        for (k, &(_, b)) in before.iter().enumerate().skip(2) {
            match b {
                b'(' => depth += 1,
                b')' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 && k + 1 != before.len() {
                        return None;
                    }
                }
                b'\'' | b'"' => return None,
                _ => {}
            }
        }
        if depth != 0 {
            return None;
        }
    }
    Some(at)
}

/// True for a comment line holding a directive sentinel: column 1 `C c * !`
/// followed by letters or digits and a `$` in columns 2-6 (`C$OMP`, `!$ACC`,
/// `CDIR$`, `!DEC$`, `c$` conditional compilation).
pub(crate) fn is_directive_comment(bytes: &[u8]) -> bool {
    if !matches!(bytes.first(), Some(b'C' | b'c' | b'*' | b'!')) {
        return false;
    }
    for &b in bytes.iter().skip(1).take(5) {
        if b == b'$' {
            return true;
        }
        if !b.is_ascii_alphanumeric() {
            return false;
        }
    }
    false
}

/// Byte offset in `content` of the first character past `line_length`
/// columns.
fn cut_at_column(content: &str, line_length: Option<usize>) -> usize {
    match line_length {
        Some(l) => content
            .char_indices()
            .nth(l)
            .map_or(content.len(), |(i, _)| i),
        None => content.len(),
    }
}

/// Pass 2: which statement lines are continued by a later line.
fn continued_lines(lines: &[Line]) -> Vec<bool> {
    let mut out = vec![false; lines.len()];
    let mut previous: Option<usize> = None;
    for (i, line) in lines.iter().enumerate() {
        if let LineKind::Statement(s) = &line.kind {
            if !s.has_code {
                continue;
            }
            if s.is_continuation {
                if let Some(p) = previous {
                    out[p] = true;
                }
            }
            previous = Some(i);
        }
    }
    out
}

fn emit_line(b: &mut Builder<'_>, line: &Line, amp: bool) {
    match &line.kind {
        LineKind::Verbatim { keep_end } => {
            b.copy(line.start, *keep_end);
            b.copy(line.content_end, line.end);
        }
        LineKind::FixedComment { keep_end } => {
            b.replace(line.start, "!");
            b.copy(line.start + 1, *keep_end);
            b.copy(line.content_end, line.end);
        }
        LineKind::Statement(s) => {
            let mut pos = line.start;
            if let Some((cs, ce, with)) = s.col6 {
                b.copy(pos, cs);
                b.replace(cs, with);
                pos = ce;
            }
            if amp {
                let at = s.amp_at.clamp(pos, s.keep_end.max(pos));
                b.copy_squeezed(pos, at, &s.squeeze);
                b.insert(at, "&");
                pos = at;
            } else if let Some(at) = s.split.filter(|&at| at >= pos) {
                b.copy_squeezed(pos, at, &s.squeeze);
                b.insert(at, " ");
                pos = at;
            }
            b.copy_squeezed(pos, s.keep_end.max(pos), &s.squeeze);
            b.copy(line.content_end, line.end);
        }
    }
}

/// Appends to the normalised text while recording the position map.
struct Builder<'a> {
    src: &'a str,
    out: String,
    segments: Vec<(usize, usize)>,
}

impl<'a> Builder<'a> {
    fn new(src: &'a str) -> Self {
        Builder {
            src,
            out: String::with_capacity(src.len() + src.len() / 16),
            segments: vec![(0, 0)],
        }
    }

    /// Makes normalised offset `out.len()` map to original `orig`.
    fn mark(&mut self, orig: usize) {
        let n = self.out.len();
        if let Some(&(ln, lo)) = self.segments.last() {
            if lo + (n - ln) == orig {
                return;
            }
            if ln == n {
                self.segments.pop();
            }
        }
        self.segments.push((n, orig));
    }

    /// Copies original bytes `start..end` (char boundaries).
    fn copy(&mut self, start: usize, end: usize) {
        if start >= end {
            return;
        }
        if let Some(s) = self.src.get(start..end) {
            self.mark(start);
            self.out.push_str(s);
        }
    }

    /// Copies original bytes `start..end` but the ranges of `leave_out`
    /// (increasing, blanks) that lie inside it.
    fn copy_squeezed(&mut self, start: usize, end: usize, leave_out: &[(usize, usize)]) {
        let mut pos = start;
        for &(s, e) in leave_out {
            if s >= pos && e <= end {
                self.copy(pos, s);
                pos = e;
            }
        }
        self.copy(pos, end);
    }

    /// Writes `with` in place of the original character at `at`.
    fn replace(&mut self, at: usize, with: &str) {
        self.mark(at);
        self.out.push_str(with);
    }

    /// Inserts `text` before original offset `at`.
    fn insert(&mut self, at: usize, text: &str) {
        self.mark(at);
        self.out.push_str(text);
    }

    fn finish(self) -> Normalized {
        Normalized {
            text: self.out,
            segments: self.segments,
            original_len: self.src.len(),
        }
    }
}

#[cfg(test)]
mod tests;
