//! Languages for csa-lint: tree-sitter grammars, `.scm` queries, language
//! detection, preprocessor-conditional blanking and fixed-form Fortran
//! normalisation.
//!
//! Invariant: nothing here knows about CSA semantics or the IR; every
//! transformation of text keeps a way back to original byte offsets.

pub mod detect;
pub mod fixed_form;
pub mod preproc;
pub mod queries;

pub use detect::{detect, SourceKind};

/// The tree-sitter C language.
pub fn c_language() -> tree_sitter::Language {
    tree_sitter_c::LANGUAGE.into()
}

/// The tree-sitter Fortran language (free form).
pub fn fortran_language() -> tree_sitter::Language {
    tree_sitter_fortran::LANGUAGE.into()
}
