//! Languages for csa-lint: tree-sitter grammars, `.scm` queries, language
//! detection, preprocessor-conditional blanking and fixed-form Fortran
//! normalisation.
//!
//! Invariant: nothing here knows about CSA semantics or the IR; every
//! transformation of text keeps a way back to original byte offsets
//! (preprocessor blanking keeps every offset, fixed-form normalisation comes
//! with a position map). Nothing here panics on any input or recurses on
//! input depth.

pub mod detect;
pub mod edit;
pub mod fixed_form;
pub mod preproc;
pub mod queries;

pub use detect::{detect, SourceKind};
pub use edit::TextEdit;

/// The tree-sitter C language.
pub fn c_language() -> tree_sitter::Language {
    tree_sitter_c::LANGUAGE.into()
}

/// The tree-sitter Fortran language (free form).
pub fn fortran_language() -> tree_sitter::Language {
    tree_sitter_fortran::LANGUAGE.into()
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
    fn languages_load() {
        let t = parse(c_language(), "int main(void) { return 0; }\n");
        assert!(syntax_errors(t.root_node()).is_empty());
        let t = parse(fortran_language(), "program p\nend program p\n");
        assert!(syntax_errors(t.root_node()).is_empty());
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
