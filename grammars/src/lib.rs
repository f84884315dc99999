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
}
