//! Language detection by file extension.

use std::path::Path;

/// What kind of source a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceKind {
    C,
    FortranFree,
    FortranFixed,
}

/// The source kind of `path` by its extension, or `None` when csa-lint does
/// not handle it.
pub fn detect(path: &Path) -> Option<SourceKind> {
    let ext = path.extension()?.to_str()?;
    match ext {
        "c" | "h" => Some(SourceKind::C),
        _ => None,
    }
}
