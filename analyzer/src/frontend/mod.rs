//! Front ends: syntax trees to IR.
//!
//! `c` lowers tree-sitter-c trees, `fortran` lowers tree-sitter-fortran trees
//! (free form directly, fixed form after `csa_grammars::fixed_form`
//! normalisation). Both receive text in which inactive preprocessor branches
//! are already blanked (`csa_grammars::preproc`), and both map every position
//! back to the original text before it enters the IR.
//!
//! Invariant: lowering never fails and never panics. A function with syntax
//! errors is lowered as far as its tree allows and carries
//! `Function::syntax_error`.

pub mod c;
pub mod fortran;

use crate::ir::Function;
use crate::source::Span;

/// Options that change what the front ends see.
#[derive(Clone, Debug, Default)]
pub struct FrontendOptions {
    /// Extra preprocessor names treated as defined (`__CSA__` always is).
    pub defines: Vec<String>,
}

/// The result of lowering one file.
#[derive(Clone, Debug, Default)]
pub struct LoweredFile {
    pub functions: Vec<Function>,
    /// Syntax errors outside any function (ERROR/MISSING nodes at top level).
    pub toplevel_errors: Vec<Span>,
}

/// Maps byte offsets of the text the parser saw back to the original text.
/// Identity for C and free-form Fortran.
pub trait PosMap {
    fn to_original(&self, offset: usize) -> usize;
}

/// The identity map.
pub struct Identity;

impl PosMap for Identity {
    fn to_original(&self, offset: usize) -> usize {
        offset
    }
}

impl PosMap for csa_grammars::fixed_form::Normalized {
    fn to_original(&self, offset: usize) -> usize {
        self.original_offset(offset)
    }
}
