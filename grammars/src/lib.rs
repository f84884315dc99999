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
pub mod detect;
pub mod edit;
pub mod fixed_form;
pub mod preproc;

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

fn parse_from(
    grammar: Grammar,
    text: &str,
    old: Option<&tree_sitter::Tree>,
) -> Option<tree_sitter::Tree> {
    PARSERS.with(|cell| {
        let mut parsers = cell.try_borrow_mut().ok()?;
        let slot = &mut parsers[grammar as usize];
        if slot.is_none() {
            let mut parser = tree_sitter::Parser::new();
            let language = match grammar {
                Grammar::C => c_language(),
                Grammar::Fortran => fortran_language(),
            };
            parser.set_language(&language).ok()?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        parser.reset();
        let ranges = match grammar {
            Grammar::Fortran => fortran_code_ranges(text),
            Grammar::C => Vec::new(), // the whole text
        };
        parser.set_included_ranges(&ranges).ok()?;
        parse_bounded(parser, text, old)
    })
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
/// but its plain comment lines (first non-blank character `!`, no `$`
/// in the five characters after it), newline included. Such a line is
/// one the parser would read as one `comment` extra that no analysis
/// looks at; leaving it out saves lexing a third of a typical file's
/// bytes (NPB: 2.4% of a whole run's instructions) and keeps every other
/// node's position. Directive lines (`!$omp`, `!$`, `!DIR$`, `!DEC$`)
/// stay: the lowering reads `sections` directives from the tree.
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
    let mut out = Vec::new();
    // the included run being built
    let mut start = 0usize;
    let mut start_row = 0usize;
    let mut row = 0usize;
    let mut i = 0usize;
    while i < b.len() {
        let line_end = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |p| i + p);
        let next = (line_end + 1).min(b.len());
        let first = b[i..line_end]
            .iter()
            .position(|&c| c != b' ' && c != b'\t')
            .map(|p| i + p);
        if first.is_some_and(|f| is_plain_comment(&b[f..line_end])) {
            if i > start {
                out.push(tree_sitter::Range {
                    start_byte: start,
                    end_byte: i,
                    start_point: tree_sitter::Point::new(start_row, 0),
                    end_point: tree_sitter::Point::new(row, 0),
                });
            }
            start = next;
            start_row = row + 1;
        }
        row += 1;
        i = next;
    }
    // the last run reaches past the end, as the default range does
    out.push(tree_sitter::Range {
        start_byte: start,
        end_byte: usize::MAX,
        start_point: tree_sitter::Point::new(start_row, 0),
        end_point: tree_sitter::Point::new(usize::MAX, usize::MAX),
    });
    out
}

/// Whether `line` (from its first non-blank byte) is a `!` comment that
/// is no directive: no `$` in the five bytes after the `!` (`!$omp`,
/// `!$`, `!DIR$`, `!DEC$`, `!GCC$`, `!$acc`).
fn is_plain_comment(line: &[u8]) -> bool {
    line.first() == Some(&b'!') && !line[1..line.len().min(6)].contains(&b'$')
}

/// The first byte at or after `pos` that is not in a plain comment line
/// of `text` (the lines [`fortran_code_ranges`] leaves out) or a blank line,
/// when `pos` is at the start or in the leading blanks of one; else `pos`. A node after a
/// left-out line can start where the line does (an `ERROR` node's first
/// token takes the gap as its padding): this is where its code starts.
pub fn past_comment_lines(text: &str, pos: usize) -> usize {
    let b = text.as_bytes();
    let mut pos = pos.min(b.len());
    loop {
        let line_start = memchr::memrchr(b'\n', &b[..pos]).map_or(0, |p| p + 1);
        if !b[line_start..pos].iter().all(|&c| c == b' ' || c == b'\t') {
            return pos;
        }
        let Some(line_end) = memchr::memchr(b'\n', &b[pos..]).map(|p| pos + p) else {
            return pos;
        };
        match b[pos..line_end]
            .iter()
            .position(|&c| c != b' ' && c != b'\t')
        {
            Some(f) if !is_plain_comment(&b[pos + f..line_end]) => return pos,
            _ => pos = line_end + 1,
        }
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

    /// A parse without the plain comment lines is the whole text's parse
    /// without their `comment` nodes, node for node and position for
    /// position (the root aside: it starts at the first line read), on
    /// every Fortran fixture the whole parse reads without a syntax error
    /// (free form, and fixed form normalised).
    #[test]
    fn leaving_comment_lines_out_loses_only_their_nodes() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/fortran");
        let (mut checked, mut left_out) = (0, 0);
        for e in std::fs::read_dir(root).unwrap().flatten() {
            let path = e.path();
            let Some(kind) = detect(&path) else { continue };
            let raw = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            let text = match kind {
                SourceKind::C => continue,
                SourceKind::FortranFree => raw,
                SourceKind::FortranFixed => fixed_form::normalize(&raw).text,
            };
            let whole = parse(fortran_language(), &text);
            if whole.root_node().has_error() {
                continue;
            }
            let ranges = fortran_code_ranges(&text);
            let kept = |at: usize| ranges.iter().any(|r| r.start_byte <= at && at < r.end_byte);
            let code = crate::parse(Grammar::Fortran, &text).unwrap();
            let gone = |n: tree_sitter::Node| n.kind() == "comment" && !kept(n.start_byte());
            left_out += nodes(&whole, &|n| !gone(n)).len();
            let is_root = |n: tree_sitter::Node| n.parent().is_none();
            assert_eq!(
                nodes(&code, &is_root),
                nodes(&whole, &|n| gone(n) || is_root(n)),
                "{}",
                path.display()
            );
            checked += 1;
        }
        assert!(
            checked > 50 && left_out > 200,
            "{checked} fixtures, {left_out} comments"
        );
    }

    #[test]
    fn code_ranges_leave_out_plain_comment_lines_only() {
        let text = "x = 1\n! plain\n  ! indented\n  !$omp do\n!DIR$ IVDEP\n!$ y = 2\ny = 2 ! trailing\n!\n";
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
                (at("  !$omp"), at("!\n"), 3),
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
        assert!(parse(fortran_language(), text).root_node().has_error());
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
        // from the start of a blank or comment line: the next code line
        assert_eq!(past_comment_lines(text, at("\n\n") + 1), at("  !$omp"));
        assert_eq!(past_comment_lines(text, at("! a")), at("  !$omp"));
        assert_eq!(past_comment_lines(text, at("! b")), at("  !$omp"));
        // inside a line's code, or at a directive: where it is
        assert_eq!(past_comment_lines(text, 2), 2);
        assert_eq!(past_comment_lines(text, at("  y")), at("  y"));
        // a last comment line without a newline, past the end
        assert_eq!(past_comment_lines("x\n! c", 2), 2);
        assert_eq!(past_comment_lines("x", 9), 1);
    }
}
