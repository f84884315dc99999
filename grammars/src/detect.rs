//! Language detection by file extension, and the names of the `--language`
//! flag.
//!
//! Extensions follow SEMANTICS.md §1. Case matters where compilers give it a
//! meaning (`.f` and `.F` are both fixed form; `.F` only asks for the
//! preprocessor, which csa-lint never runs anyway), so only the spellings
//! listed below are accepted.

use std::path::Path;

/// What kind of source a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// C (`.c`, `.h`).
    C,
    /// Free-form Fortran (`.f90`, `.F90`, `.f95`, ...).
    FortranFree,
    /// Fixed-form Fortran (`.f`, `.F`, `.for`, `.f77`, ...): normalise with
    /// [`crate::fixed_form::normalize`] before parsing.
    FortranFixed,
}

impl SourceKind {
    /// Every kind, in a stable order.
    pub const ALL: [SourceKind; 3] = [
        SourceKind::C,
        SourceKind::FortranFree,
        SourceKind::FortranFixed,
    ];

    /// The kind named by a `--language` value: `c`, `fortran` or
    /// `fortran-free` (free form), `fortran-fixed`. ASCII case is ignored.
    pub fn from_name(name: &str) -> Option<SourceKind> {
        let name = name.trim();
        if name.eq_ignore_ascii_case("c") {
            Some(SourceKind::C)
        } else if name.eq_ignore_ascii_case("fortran") || name.eq_ignore_ascii_case("fortran-free")
        {
            Some(SourceKind::FortranFree)
        } else if name.eq_ignore_ascii_case("fortran-fixed") {
            Some(SourceKind::FortranFixed)
        } else {
            None
        }
    }

    /// The canonical `--language` name; [`SourceKind::from_name`] accepts it.
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::C => "c",
            SourceKind::FortranFree => "fortran",
            SourceKind::FortranFixed => "fortran-fixed",
        }
    }

    /// True for both Fortran source forms.
    pub fn is_fortran(self) -> bool {
        matches!(self, SourceKind::FortranFree | SourceKind::FortranFixed)
    }

    /// The tree-sitter language that parses this kind (fixed form only after
    /// normalisation).
    pub fn language(self) -> tree_sitter::Language {
        match self {
            SourceKind::C => crate::c_language(),
            SourceKind::FortranFree | SourceKind::FortranFixed => crate::fortran_language(),
        }
    }
}

impl std::fmt::Display for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The source kind of `path` by its extension, or `None` when csa-lint does
/// not handle it.
pub fn detect(path: &Path) -> Option<SourceKind> {
    let ext = path.extension()?.to_str()?;
    match ext {
        "c" | "h" => Some(SourceKind::C),
        "f90" | "F90" | "f95" | "F95" | "f03" | "F03" | "f08" | "F08" => {
            Some(SourceKind::FortranFree)
        }
        "f" | "F" | "for" | "FOR" | "f77" | "F77" | "ftn" | "FTN" => Some(SourceKind::FortranFixed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(p: &str) -> Option<SourceKind> {
        detect(Path::new(p))
    }

    #[test]
    fn c_extensions() {
        assert_eq!(kind("a.c"), Some(SourceKind::C));
        assert_eq!(kind("dir/x.y/a.h"), Some(SourceKind::C));
        assert_eq!(kind("a.cc"), None);
        assert_eq!(kind("a.cpp"), None);
        assert_eq!(kind("a.C"), None);
    }

    #[test]
    fn free_form_extensions() {
        for e in ["f90", "F90", "f95", "F95", "f03", "F03", "f08", "F08"] {
            assert_eq!(
                kind(&format!("m.{e}")),
                Some(SourceKind::FortranFree),
                "{e}"
            );
        }
    }

    #[test]
    fn fixed_form_extensions() {
        for e in ["f", "F", "for", "FOR", "f77", "ftn", "F77", "FTN"] {
            assert_eq!(
                kind(&format!("dgemm.{e}")),
                Some(SourceKind::FortranFixed),
                "{e}"
            );
        }
    }

    #[test]
    fn no_extension_or_unknown() {
        assert_eq!(kind("Makefile"), None);
        assert_eq!(kind(".c"), None); // a dotfile named ".c" has no extension
        assert_eq!(kind("a.txt"), None);
        assert_eq!(kind("a.f90.bak"), None);
        assert_eq!(kind(""), None);
    }

    #[test]
    fn names_round_trip() {
        for k in SourceKind::ALL {
            assert_eq!(SourceKind::from_name(k.name()), Some(k));
            assert_eq!(k.to_string(), k.name());
        }
        assert_eq!(
            SourceKind::from_name("fortran-free"),
            Some(SourceKind::FortranFree)
        );
        assert_eq!(
            SourceKind::from_name("Fortran-Fixed"),
            Some(SourceKind::FortranFixed)
        );
        assert_eq!(SourceKind::from_name("C"), Some(SourceKind::C));
        assert_eq!(SourceKind::from_name("cpp"), None);
        assert_eq!(SourceKind::from_name(""), None);
    }

    #[test]
    fn is_fortran() {
        assert!(!SourceKind::C.is_fortran());
        assert!(SourceKind::FortranFree.is_fortran());
        assert!(SourceKind::FortranFixed.is_fortran());
    }
}
