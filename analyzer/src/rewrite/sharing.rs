//! The clauses a converted loop gets ([`Sharing`]) and why a loop cannot
//! be converted ([`Refusal`]), the types the OpenMP rewrite's parts pass
//! around. The data sharing itself is decided on the IR: scalars by
//! `dependence::classify` (via `rewrite::scalars`), arrays by
//! `dependence::arrays`; `openmp.rs` prints the clauses. The tree-sitter
//! side is `canonical.rs` (OpenMP canonical loop forms, C scopes).

pub use crate::scalars::RedOp;

/// The clauses a loop needs. Names as first spelled in the loop.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sharing {
    pub private: Vec<String>,
    pub lastprivate: Vec<String>,
    pub reductions: Vec<(RedOp, String)>,
    /// Induction variables and their steps: `linear(x:step)`.
    pub linear: Vec<(String, i64)>,
}

/// Why a loop cannot become an OpenMP loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub reason: String,
}

impl Refusal {
    pub(crate) fn new(reason: impl Into<String>) -> Refusal {
        Refusal {
            reason: reason.into(),
        }
    }
}
