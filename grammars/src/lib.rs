//! Languages for csa-lint: tree-sitter grammars, language detection, preprocessor-conditional blanking, fixed-form Fortran
//! normalisation, and the semantics of C integer constants that every
//! constant evaluator shares (`cint`).
//!
//! Invariant: nothing here knows about CSA semantics or the IR; every
//! transformation of text keeps a way back to original byte offsets
//! (preprocessor blanking keeps every offset, fixed-form normalisation comes
//! with a position map). Nothing here panics on any input or recurses on
//! input depth.

pub mod cint;
pub mod compact;
pub mod detect;
pub mod edit;
pub mod fixed_form;
pub mod preproc;

pub use compact::Compacted;
pub use detect::{cpp_header, detect, detect_with_content, SourceKind};
pub use edit::TextEdit;

/// The tree-sitter C language.
pub fn c_language() -> tree_sitter::Language {
    tree_sitter_c::LANGUAGE.into()
}

/// The tree-sitter Fortran language (free form).
pub fn fortran_language() -> tree_sitter::Language {
    tree_sitter_fortran::LANGUAGE.into()
}

/// The grammars [`parse`] knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grammar {
    /// tree-sitter-c ([`c_language`]).
    C,
    /// tree-sitter-fortran ([`fortran_language`]), free form.
    Fortran,
}

impl Grammar {
    /// Its tree-sitter language.
    pub fn language(self) -> tree_sitter::Language {
        match self {
            Grammar::C => c_language(),
            Grammar::Fortran => fortran_language(),
        }
    }
}

thread_local! {
    /// One parser per grammar and thread, kept between files: creating a
    /// parser and releasing its parse stack (which makes glibc merge the
    /// blocks freed so far) was about 1% of the analysis of a 100 KB file.
    static PARSERS: std::cell::RefCell<[Option<tree_sitter::Parser>; 2]> =
        const { std::cell::RefCell::new([None, None]) };
}

/// Parses the whole of `text` with this thread's parser for `grammar`
/// (made on first use). `None` only if the grammar cannot be loaded, or on
/// a reentrant call from inside another parse on this thread, which
/// nothing does. Each call starts from a reset parser, whatever an earlier
/// one left behind.
pub fn parse(grammar: Grammar, text: &str) -> Option<tree_sitter::Tree> {
    parse_from(grammar, text, None)
}

/// [`parse`], reusing what `old` (a tree of an earlier text of the same
/// grammar, edited with `Tree::edit` to match `text`) holds of unchanged
/// regions, as tree-sitter's incremental parsing does.
pub fn reparse(grammar: Grammar, text: &str, old: &tree_sitter::Tree) -> Option<tree_sitter::Tree> {
    parse_from(grammar, text, Some(old))
}

/// Parses a [`Compacted`] text whole, with this thread's parser for
/// `grammar` (see [`parse`]): a compacted text has no comment lines to
/// leave out, and the tree's offsets are the compacted text's.
pub fn parse_compacted(grammar: Grammar, compacted: &Compacted) -> Option<tree_sitter::Tree> {
    with_parser(grammar, |parser| {
        parser.set_included_ranges(&[]).ok()?;
        parse_bounded(parser, &compacted.text, None)
    })
}

fn parse_from(
    grammar: Grammar,
    text: &str,
    old: Option<&tree_sitter::Tree>,
) -> Option<tree_sitter::Tree> {
    with_parser(grammar, |parser| parse_code(parser, grammar, text, old))
}

/// `f` of this thread's parser for `grammar`, reset.
fn with_parser(
    grammar: Grammar,
    f: impl FnOnce(&mut tree_sitter::Parser) -> Option<tree_sitter::Tree>,
) -> Option<tree_sitter::Tree> {
    PARSERS.with(|cell| {
        let mut parsers = cell.try_borrow_mut().ok()?;
        let slot = &mut parsers[grammar as usize];
        if slot.is_none() {
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&grammar.language()).ok()?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        parser.reset();
        f(parser)
    })
}

/// [`parse_bounded`] of the code of `text` ([`code_ranges`]) with `parser`
/// (set to `grammar`'s language): how every parse of a whole text is made,
/// so that an editor's incremental parse and the command line's agree.
pub fn parse_code(
    parser: &mut tree_sitter::Parser,
    grammar: Grammar,
    text: &str,
    old: Option<&tree_sitter::Tree>,
) -> Option<tree_sitter::Tree> {
    parser
        .set_included_ranges(&code_ranges(grammar, text))
        .ok()?;
    parse_bounded(parser, text, old)
}

/// The ranges of `text` a parse in `grammar` reads: all but its comment
/// lines ([`fortran_code_ranges`], [`c_code_ranges`]).
pub fn code_ranges(grammar: Grammar, text: &str) -> Vec<tree_sitter::Range> {
    match grammar {
        Grammar::Fortran => fortran_code_ranges(text),
        Grammar::C => c_code_ranges(text),
    }
}

/// How long a parse of `len` bytes may take: 1 s, and 5 us per byte
/// (about 50 times what tree-sitter takes on ordinary code). Only error
/// recovery on pathological input comes near it: tree-sitter's recovery
/// takes time quadratic in the length of an erroneous run of tokens (a
/// 100 kB line of `a+a+...` in a parameter list took 32 s).
pub fn parse_budget(len: usize) -> std::time::Duration {
    std::time::Duration::from_secs(1) + std::time::Duration::from_micros(5 * len as u64)
}

thread_local! {
    /// The stop flag of [`with_stop`], if one is set on this thread.
    static STOP: std::cell::RefCell<Option<std::sync::Arc<std::sync::atomic::AtomicBool>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` with `stop` watched by every parse on this thread: once it is
/// set, a parse in progress gives up (`None`) as it does past its time
/// budget, so an analysis that is no longer wanted (an editor's outdated
/// version) stops inside a long parse, not after it. The caller tells the
/// two apart by looking at `stop`.
pub fn with_stop<R>(
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore(Option<std::sync::Arc<std::sync::atomic::AtomicBool>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            STOP.with(|s| *s.borrow_mut() = previous);
        }
    }
    let _restore = Restore(STOP.with(|s| s.replace(Some(stop.clone()))));
    f()
}

/// The ranges of free-form Fortran `text` that a parse reads: all of it
/// but its plain comment lines (first non-blank character `!`, no
/// directive sentinel after it or no `section` in the directive:
/// `is_plain_comment`), newline included. Such a line is
/// one the parser would read as one `comment` extra that no analysis
/// looks at; leaving it out saves lexing a third of a typical file's
/// bytes (NPB: 2.4% of a whole run's instructions) and keeps every other
/// node's position. Directive lines (`!$omp`, `!$`, `!DIR$`, `!DEC$`)
/// with the word `section` stay: the lowering reads `sections`
/// directives from the tree.
///
/// A comment line cannot be part of a statement: inside a continued
/// character context the next line must start with `&` (Fortran 2018
/// 6.3.2.4), and the continuation of a statement skips comment lines.
/// `#` lines and code lines with a trailing comment are kept whole. The
/// tree's root starts at the first line read, and an `ERROR` node after
/// a left-out line can start where the line does (see
/// [`past_comment_lines`]).
pub fn fortran_code_ranges(text: &str) -> Vec<tree_sitter::Range> {
    let b = text.as_bytes();
    let mut gaps: Vec<(usize, usize)> = Vec::new();
    let mut i = 0usize;
    while i < b.len() {
        let line_end = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |p| i + p);
        let next = (line_end + 1).min(b.len());
        let first = b[i..line_end]
            .iter()
            .position(|&c| c != b' ' && c != b'\t')
            .map(|p| i + p);
        if first.is_some_and(|f| is_plain_comment(&b[f..line_end])) {
            match gaps.last_mut() {
                Some(g) if g.1 == i => g.1 = next,
                _ => gaps.push((i, next)),
            }
        }
        i = next;
    }
    ranges_between(b, &gaps)
}

/// The ranges of C `text` that a parse reads: all of it but its comment
/// lines, whole lines (newline included) that hold comments and blanks
/// only: a `/* ... */` comment that starts a line (blanks before it) and
/// ends one (blanks after it), with all the lines between, and a `//`
/// comment that starts a line. The parser would read each as a `comment`
/// extra that no analysis looks at; licence headers and documentation
/// blocks are a quarter to two fifths of C code's bytes.
///
/// Comments are found as a C lexer finds them: not in string or
/// character literals, a `//` comment going on past a line splice
/// (backslash-newline). A line after a splice is never left out (a
/// macro's definition may go on there), nor is a comment that shares a
/// line with code. The tree's root starts at the first line read.
pub fn c_code_ranges(text: &str) -> Vec<tree_sitter::Range> {
    let b = text.as_bytes();
    let mut gaps: Vec<(usize, usize)> = Vec::new();
    let line_start = |i: usize| memchr::memrchr(b'\n', &b[..i]).map_or(0, |p| p + 1);
    let blank = |r: &[u8]| {
        r.iter()
            .all(|&c| matches!(c, b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b'))
    };
    // a line start that follows a splice
    let spliced = |ls: usize| {
        ls >= 2 && b[ls - 2] == b'\\' || ls >= 3 && b[ls - 3] == b'\\' && b[ls - 2] == b'\r'
    };
    let mut i = 0;
    while let Some(p) = memchr::memchr3(b'"', b'\'', b'/', b.get(i..).unwrap_or_default()) {
        i += p;
        match b[i] {
            b'"' | b'\'' => {
                // a literal: to its closing quote or the line's end
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end =
                    memchr::memmem::find(&b[i + 2..], b"*/").map_or(b.len(), |p| i + 2 + p + 2);
                let ls = line_start(i);
                let le = memchr::memchr(b'\n', &b[end..]).map_or(b.len(), |p| end + p);
                if blank(&b[ls..i]) && blank(&b[end..le]) && !spliced(ls) {
                    gaps.push((ls, (le + 1).min(b.len())));
                }
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                // to the end of the line, past splices
                let mut le = i;
                loop {
                    le = memchr::memchr(b'\n', &b[le..]).map_or(b.len(), |p| le + p);
                    let before = &b[..le];
                    let splice = before.ends_with(b"\\") || before.ends_with(b"\\\r");
                    if !splice || le >= b.len() {
                        break;
                    }
                    le += 1;
                }
                let ls = line_start(i);
                if blank(&b[ls..i]) && !spliced(ls) {
                    gaps.push((ls, (le + 1).min(b.len())));
                }
                i = le;
            }
            _ => i += 1,
        }
    }
    ranges_between(b, &gaps)
}

/// Where the code of an `ERROR` node that spans `start..end` of C `text`
/// starts: past the blanks, comments and line splices at its start. The
/// comment lines [`c_code_ranges`] leaves out can be the padding such a
/// node starts with; a comment is no code to point at anyway.
pub fn c_code_start(text: &str, start: usize, end: usize) -> usize {
    let b = text.as_bytes();
    let end = end.min(b.len());
    let mut i = start.min(end);
    while i < end {
        match b[i] {
            b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\x0b' => i += 1,
            b'\\' if b.get(i + 1) == Some(&b'\n') => i += 2,
            b'/' if b.get(i + 1) == Some(&b'*') => {
                match memchr::memmem::find(&b[i + 2..end], b"*/") {
                    Some(p) => i += 2 + p + 2,
                    None => return start.min(end),
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => match memchr::memchr(b'\n', &b[i..end]) {
                Some(p) => i += p,
                None => return start.min(end),
            },
            _ => return i,
        }
    }
    start.min(end)
}

/// How many gaps a parse's ranges leave at most: tree-sitter's lexer
/// looks for its position from the first range on at every token it
/// restarts at (`ts_lexer_goto`), so a range costs every token a few
/// instructions; the largest gaps are the ones worth it.
const MAX_GAPS: usize = 64;

/// The ranges of `b` outside `gaps` (whole lines, in order; adjacent and
/// overlapping ones merge; the [`MAX_GAPS`] largest), the last one
/// reaching past the end as the default range does.
fn ranges_between(b: &[u8], gaps: &[(usize, usize)]) -> Vec<tree_sitter::Range> {
    let mut out = Vec::new();
    let (mut start, mut start_row) = (0usize, 0usize);
    let mut row = 0usize; // the row of `at`
    let mut at = 0usize;
    let rows_to = |to: usize, at: &mut usize, row: &mut usize| {
        *row += memchr::memchr_iter(b'\n', &b[*at..to]).count();
        *at = to;
    };
    let mut sorted = gaps.to_vec();
    sorted.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in sorted {
        match merged.last_mut() {
            Some(m) if s <= m.1 => m.1 = m.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    if merged.len() > MAX_GAPS {
        // the largest ones, in order
        let mut by_size: Vec<usize> = merged.iter().map(|g| g.1 - g.0).collect();
        by_size.sort_unstable_by(|a, b| b.cmp(a));
        let cut = by_size[MAX_GAPS - 1];
        let mut larger = merged.iter().filter(|g| g.1 - g.0 > cut).count();
        merged.retain(|g| {
            let size = g.1 - g.0;
            let keep = size > cut || (size == cut && larger < MAX_GAPS);
            larger += usize::from(size == cut && keep);
            keep
        });
    }
    for (s, e) in merged {
        rows_to(s, &mut at, &mut row);
        if s > start {
            out.push(tree_sitter::Range {
                start_byte: start,
                end_byte: s,
                start_point: tree_sitter::Point::new(start_row, 0),
                end_point: tree_sitter::Point::new(row, 0),
            });
        }
        rows_to(e, &mut at, &mut row);
        start = e;
        // (a gap ends after a newline, or at the end of the text)
        start_row = row;
    }
    out.push(tree_sitter::Range {
        start_byte: start,
        end_byte: usize::MAX,
        start_point: tree_sitter::Point::new(start_row, 0),
        end_point: tree_sitter::Point::new(usize::MAX, usize::MAX),
    });
    out
}

/// Whether `line` (from its first non-blank byte) is a `!` comment that
/// a parse leaves out: one that is no directive
/// ([`fixed_form::is_directive_comment`]: `!$omp`, `!$`, `!DIR$`,
/// `!DEC$`, `!GCC$`, `!$acc`), or a directive without the word `section`
/// (in any case). The lowering reads OpenMP directives from the text, but
/// for the `sections`, `section` and `end sections` that it reads among
/// a construct's statements, from the tree (a directive's words are its
/// own line's there, so a line without the word is none of them).
fn is_plain_comment(line: &[u8]) -> bool {
    line.first() == Some(&b'!')
        && (!fixed_form::is_directive_comment(line)
            || !line.windows(7).any(|w| w.eq_ignore_ascii_case(b"section")))
}

/// The first byte at or after `pos` that is not in a plain comment line
/// of `text` (the lines [`fortran_code_ranges`] and [`Compacted::fortran`]
/// leave out) or a blank line, when `pos` is in one (anywhere, its newline
/// included) or in the leading blanks of a line; else `pos`. A node after
/// a left-out line can start in it (an `ERROR` node's first token takes
/// the gap as its padding: where the line starts with included ranges, at
/// its newline in a compacted text): this is where its code starts.
pub fn past_comment_lines(text: &str, pos: usize) -> usize {
    let b = text.as_bytes();
    let mut pos = pos.min(b.len());
    loop {
        let line_start = memchr::memrchr(b'\n', &b[..pos]).map_or(0, |p| p + 1);
        let line_end = memchr::memchr(b'\n', &b[pos..]).map_or(b.len(), |p| pos + p);
        let first = b[line_start..line_end]
            .iter()
            .position(|&c| c != b' ' && c != b'\t')
            .map(|f| line_start + f);
        let left_out = match first {
            Some(f) => is_plain_comment(&b[f..line_end]),
            None => true,
        };
        if !left_out || line_end >= b.len() {
            return pos;
        }
        pos = line_end + 1;
    }
}

/// `parser.parse(text, old)` that gives up (`None`) when the parse takes
/// longer than [`parse_budget`] (no input may hang the analysis), or when
/// the flag of an enclosing [`with_stop`] is set.
pub fn parse_bounded(
    parser: &mut tree_sitter::Parser,
    text: &str,
    old: Option<&tree_sitter::Tree>,
) -> Option<tree_sitter::Tree> {
    let deadline = std::time::Instant::now() + parse_budget(text.len());
    let stop = STOP.with(|s| s.borrow().clone());
    let mut past_deadline = |_: &tree_sitter::ParseState| {
        stop.as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
            || std::time::Instant::now() > deadline
    };
    let bytes = text.as_bytes();
    let tree = parser.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        old,
        Some(tree_sitter::ParseOptions::new().progress_callback(&mut past_deadline)),
    );
    if tree.is_none() {
        // a cancelled parse leaves its state for a resumption: drop it
        parser.reset();
    }
    tree
}

/// Byte ranges of the syntax errors under `root`: every `ERROR` node (its
/// descendants are not searched further) and every `MISSING` node, in
/// document order. Iterative, so deep trees are fine.
pub fn syntax_errors(root: tree_sitter::Node<'_>) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    if !root.has_error() {
        return out;
    }
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let is_error = node.is_error() || node.is_missing();
        if is_error {
            out.push(node.byte_range());
        }
        // Only descend into subtrees that contain an error.
        if !is_error && node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == root {
                return out;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lang: tree_sitter::Language, text: &str) -> tree_sitter::Tree {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&lang).unwrap();
        p.parse(text, None).unwrap()
    }

    #[test]
    fn a_set_stop_flag_stops_a_parse() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let text = "int f(int x) { return x + 1; }\n".repeat(20_000);
        let stop = Arc::new(AtomicBool::new(false));
        assert!(with_stop(&stop, || crate::parse(Grammar::C, &text)).is_some());
        stop.store(true, Ordering::Relaxed);
        assert!(with_stop(&stop, || crate::parse(Grammar::C, &text)).is_none());
        // Outside `with_stop` the flag is not watched, and the parser
        // works again after a stopped parse.
        assert!(crate::parse(Grammar::C, &text).is_some());
        // Nested: the inner flag, then the outer one again.
        let other = Arc::new(AtomicBool::new(false));
        with_stop(&stop, || {
            assert!(with_stop(&other, || crate::parse(Grammar::C, &text)).is_some());
            assert!(crate::parse(Grammar::C, &text).is_none());
        });
    }

    #[test]
    fn languages_load() {
        let t = parse(c_language(), "int main(void) { return 0; }\n");
        assert!(syntax_errors(t.root_node()).is_empty());
        let t = parse(fortran_language(), "program p\nend program p\n");
        assert!(syntax_errors(t.root_node()).is_empty());
    }

    #[test]
    fn shared_parsers_parse_like_fresh_ones() {
        let c = "int f(int *a) { for (int i = 0; i < 4; i++) a[i] = 0; }\n";
        let f = "subroutine s\n  call builtin_csa_parallel_loop()\nend subroutine\n";
        for _ in 0..2 {
            for (g, lang, text) in [
                (Grammar::C, c_language(), c),
                (Grammar::Fortran, fortran_language(), f),
                (Grammar::C, c_language(), "int x = (;\n"),
            ] {
                let shared = super::parse(g, text).unwrap();
                let fresh = parse(lang, text);
                assert_eq!(
                    shared.root_node().to_sexp(),
                    fresh.root_node().to_sexp(),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn syntax_errors_found() {
        let text = "int f(void) { return (1; }\nint g(void) { @@@ }\n";
        let t = parse(c_language(), text);
        let errs = syntax_errors(t.root_node());
        assert!(!errs.is_empty());
        assert!(errs.iter().all(|r| r.end <= text.len()));
    }

    #[test]
    fn syntax_errors_on_deep_nesting() {
        let text = format!("int x = {}1{};\n", "(".repeat(5000), ")".repeat(4999));
        let t = parse(c_language(), &text);
        assert!(!syntax_errors(t.root_node()).is_empty());
    }

    #[test]
    fn syntax_errors_on_subtree() {
        let text = "int f(void) { return 1; }\nint g(void) { return (; }\n";
        let t = parse(c_language(), text);
        let first = t.root_node().child(0).unwrap();
        assert!(syntax_errors(first).is_empty());
    }

    /// Preorder (kind, byte range, points) of every node of `tree`, those
    /// `skip` rejects left out.
    fn nodes(
        tree: &tree_sitter::Tree,
        skip: &dyn Fn(tree_sitter::Node) -> bool,
    ) -> Vec<(
        &'static str,
        std::ops::Range<usize>,
        tree_sitter::Point,
        tree_sitter::Point,
    )> {
        let mut out = Vec::new();
        let mut cursor = tree.walk();
        'walk: loop {
            let n = cursor.node();
            if !skip(n) {
                out.push((
                    n.kind(),
                    n.byte_range(),
                    n.start_position(),
                    n.end_position(),
                ));
            }
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        out
    }

    /// A parse without the comment lines is the whole text's parse without
    /// their `comment` nodes, node for node and position for position (the
    /// root aside: it starts at the first line read), on every fixture
    /// the whole parse reads without a syntax error (C, free-form Fortran,
    /// fixed form normalised).
    #[test]
    fn leaving_comment_lines_out_loses_only_their_nodes() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let mut checked = [0; 2];
        let mut left_out = [0; 2];
        for e in ["c", "fortran"]
            .iter()
            .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap().flatten())
        {
            let path = e.path();
            let Some(kind) = detect(&path) else { continue };
            let raw = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            let (grammar, text) = match kind {
                SourceKind::C => (Grammar::C, raw),
                SourceKind::FortranFree => (Grammar::Fortran, raw),
                SourceKind::FortranFixed => (Grammar::Fortran, fixed_form::normalize(&raw).text),
            };
            let whole = parse(grammar.language(), &text);
            if whole.root_node().has_error() {
                continue;
            }
            let ranges = code_ranges(grammar, &text);
            let kept = |at: usize| ranges.iter().any(|r| r.start_byte <= at && at < r.end_byte);
            let code = crate::parse(grammar, &text).unwrap();
            let gone = |n: tree_sitter::Node| n.kind() == "comment" && !kept(n.start_byte());
            let g = grammar as usize;
            left_out[g] += nodes(&whole, &|n| !gone(n)).len();
            let is_root = |n: tree_sitter::Node| n.parent().is_none();
            assert_eq!(
                nodes(&code, &is_root),
                nodes(&whole, &|n| gone(n) || is_root(n)),
                "{}",
                path.display()
            );
            checked[g] += 1;
        }
        assert!(
            checked[0] > 50 && left_out[0] > 200,
            "C: {checked:?} fixtures, {left_out:?} comments"
        );
        assert!(
            checked[1] > 50 && left_out[1] > 200,
            "Fortran: {checked:?}, {left_out:?}"
        );
    }

    #[test]
    fn c_code_ranges_leave_out_whole_comment_lines_only() {
        let text = concat!(
            "/* licence\n * header */\n",          // gone
            "int a; /* after code */\n",           // kept
            "  // a line comment \\\n  spliced\n", // gone, with its splice
            "/* before */ int b;\n",               // kept
            "char *s = \"/* not a comment\";\n",   // kept (and no comment starts)
            "char c = '\\'';  // after code\n",    // kept
            "#define M(x) \\\n",                   // kept
            "/* in a macro */ x\n",                // kept: after a splice
            "  /* a */ /* b */\n",                 // gone? no: two comments share it
            "\t// tab\r\n",                        // gone
            "int z; /* open at the end",           // kept
        );
        let ranges = c_code_ranges(text);
        let gone: Vec<&str> = {
            let mut out = Vec::new();
            let mut prev = 0;
            for r in &ranges {
                out.push(&text[prev..r.start_byte]);
                prev = r.end_byte.min(text.len());
            }
            out.into_iter().filter(|g| !g.is_empty()).collect()
        };
        assert_eq!(
            gone,
            [
                "/* licence\n * header */\n",
                "  // a line comment \\\n  spliced\n",
                "\t// tab\r\n",
            ]
        );
        // every range starts a line, at its row
        for r in &ranges[..ranges.len() - 1] {
            let row = text[..r.start_byte].matches('\n').count();
            assert_eq!(r.start_point, tree_sitter::Point::new(row, 0));
            let row = text[..r.end_byte].matches('\n').count();
            assert_eq!(r.end_point, tree_sitter::Point::new(row, 0));
        }
    }

    /// At most [`MAX_GAPS`] gaps, the largest ones, in order.
    #[test]
    fn only_the_largest_gaps_are_left_out() {
        let mut text = String::new();
        for i in 0..3 * MAX_GAPS {
            // every third comment two lines long
            text.push_str(if i % 3 == 0 { "! a\n! b\n" } else { "! c\n" });
            text.push_str("x = 1\n");
        }
        let ranges = fortran_code_ranges(&text);
        // (the first gap starts the text: no range before it)
        assert_eq!(ranges.len(), MAX_GAPS);
        assert!(ranges.windows(2).all(|w| w[0].end_byte < w[1].start_byte));
        assert!(ranges
            .iter()
            .all(|r| text[..r.start_byte].ends_with("! b\n")));
    }

    #[test]
    fn c_code_start_skips_blanks_and_comments() {
        let text = "  /* a */\n// b\n \\\n  int x;";
        assert_eq!(c_code_start(text, 0, text.len()), text.find("int").unwrap());
        assert_eq!(c_code_start(text, 5, text.len()), 5);
        // not past the node's end; an unclosed comment: where it was
        assert_eq!(c_code_start(text, 0, 2), 0);
        assert_eq!(c_code_start("  /* open", 0, 9), 0);
    }

    #[test]
    fn code_ranges_leave_out_plain_comment_lines_only() {
        let text = "x = 1\n! plain\n  ! indented\n  !$omp SECTION\n!DIR$ IVDEP\n!$ y = 2\ny = 2 ! trailing\n!\n";
        let ranges = fortran_code_ranges(text);
        let spans: Vec<(usize, usize, usize)> = ranges
            .iter()
            .map(|r| (r.start_byte, r.end_byte, r.start_point.row))
            .collect();
        let at = |s: &str| text.find(s).unwrap();
        assert_eq!(
            spans,
            [
                (0, at("! plain"), 0),
                (at("  !$omp"), at("!DIR$"), 3),
                (at("y = 2 !"), at("!\n"), 6),
                (text.len(), usize::MAX, 8)
            ]
        );
        assert_eq!(ranges[0].end_point, tree_sitter::Point::new(1, 0));
        // CRLF lines, a last line without a newline, a file of comments
        let crlf = "! a\r\nx = 1\r\n! b";
        let r = fortran_code_ranges(crlf);
        assert_eq!((r[0].start_byte, r[0].end_byte), (5, 12));
        assert_eq!((r[0].start_point.row, r[1].start_byte), (1, crlf.len()));
        let r = fortran_code_ranges("! only\n! comments\n");
        assert_eq!((r.len(), r[0].start_byte), (1, 18));
        assert_eq!(fortran_code_ranges("").len(), 1);
    }

    /// A statement continued over a comment line parses as when the line
    /// is read; a character literal continued past one parses, as the
    /// standard has it (Fortran 2018 6.3.2.4: the literal goes on at the
    /// next line that is not a comment), where tree-sitter-fortran reading
    /// the line finds a syntax error.
    #[test]
    fn continuations_skip_left_out_lines() {
        for text in [
            "program p\nx = 1 + &\n! between\n    2\nend program\n",
            "program p\ncall f(1, &\n   ! between\n\n  2)\nend program\n",
        ] {
            let code = crate::parse(Grammar::Fortran, text).unwrap();
            let whole = parse(fortran_language(), text);
            assert!(!code.root_node().has_error(), "{text}");
            assert_eq!(
                nodes(&code, &|_| false),
                nodes(&whole, &|n| n.kind() == "comment"),
                "{text}"
            );
        }
        let text = "program p\nc = 'ab&\n! between\n&cd'\nend program\n";
        let code = crate::parse(Grammar::Fortran, text).unwrap();
        assert!(!code.root_node().has_error());
        let literal = nodes(&code, &|n| n.kind() != "string_literal");
        assert_eq!(
            literal[0].1,
            text.find('\'').unwrap()..text.rfind('\'').unwrap() + 1
        );
    }

    #[test]
    fn past_comment_lines_stops_at_code() {
        let text = "x = 1\n\n! a\n   ! b\n  !$omp do\n  y = 2\n";
        let at = |s: &str| text.find(s).unwrap();
        // from the start of a blank or comment line, or a directive line
        // no lowering reads from the tree: the next code line
        assert_eq!(past_comment_lines(text, at("\n\n") + 1), at("  y"));
        assert_eq!(past_comment_lines(text, at("! a")), at("  y"));
        assert_eq!(past_comment_lines(text, at("! b")), at("  y"));
        // ... from anywhere in it (its newline: where an error starts in
        // a compacted text)
        assert_eq!(past_comment_lines(text, at("! b") + 3), at("  y"));
        // inside a line's code, or at a directive it reads: where it is
        assert_eq!(past_comment_lines(text, 2), 2);
        let sections = "x = 1\n! a\n!$omp sections\n";
        assert_eq!(
            past_comment_lines(sections, 6),
            sections.find("!$omp").unwrap()
        );
        assert_eq!(past_comment_lines(text, at("  y")), at("  y"));
        // a last comment line without a newline, past the end
        assert_eq!(past_comment_lines("x\n! c", 2), 2);
        assert_eq!(past_comment_lines("x", 9), 1);
    }
}
