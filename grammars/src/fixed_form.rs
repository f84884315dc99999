//! Fixed-form Fortran normalisation (stub; see issue brief).

/// Normalised free-form text plus a map back to original byte offsets.
#[derive(Clone, Debug)]
pub struct Normalized {
    pub text: String,
}

impl Normalized {
    /// Original byte offset of byte `offset` of the normalised text.
    pub fn original_offset(&self, offset: usize) -> usize {
        offset
    }
}

/// Converts fixed-form source to free form.
pub fn normalize(original: &str) -> Normalized {
    Normalized {
        text: original.to_string(),
    }
}
