//! Preprocessor conditionals (stub; see issue brief).

/// The text the parser sees, with inactive branches blanked.
#[derive(Clone, Debug, Default)]
pub struct Preprocessed {
    pub text: String,
}

/// Blanks inactive conditional branches, keeping byte offsets.
pub fn preprocess(text: &str, defines: &[String], fortran: bool) -> Preprocessed {
    let _ = (defines, fortran);
    Preprocessed {
        text: text.to_string(),
    }
}
