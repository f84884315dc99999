//! Markers to ivdep (REWRITES.md "Markers to ivdep"): `parallel_loop`,
//! `spmd` and `spmdization` assert that iterations are independent, which
//! implies ivdep's weaker "no loop-carried memory dependence". C styles:
//! `[[intel::ivdep]]` (default), `#pragma ivdep`, `#pragma GCC ivdep`;
//! Fortran `!DIR$ IVDEP` (Intel) or `!GCC$ ivdep` (GCC).

use super::{refused, MarkerRewrite, MarkerSite};
use crate::diag::{Applicability, Fix};
use crate::fix::insert_line_before;
use crate::ir::BuiltinKind;

/// How ivdep is spelled (config `ivdep-style`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IvdepStyle {
    /// `[[intel::ivdep]]` on the loop statement; Fortran `!DIR$ IVDEP`.
    #[default]
    Attribute,
    /// `#pragma ivdep`; Fortran `!DIR$ IVDEP`.
    IntelPragma,
    /// `#pragma GCC ivdep`; Fortran `!GCC$ ivdep`.
    GccPragma,
}

impl IvdepStyle {
    /// `attribute`, `intel-pragma`, `gcc-pragma`.
    pub fn from_name(name: &str) -> Option<IvdepStyle> {
        match name {
            "attribute" => Some(IvdepStyle::Attribute),
            "intel-pragma" => Some(IvdepStyle::IntelPragma),
            "gcc-pragma" => Some(IvdepStyle::GccPragma),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            IvdepStyle::Attribute => "attribute",
            IvdepStyle::IntelPragma => "intel-pragma",
            IvdepStyle::GccPragma => "gcc-pragma",
        }
    }

    /// The line that goes before the loop.
    pub fn spelling(self, fortran: bool) -> &'static str {
        match (self, fortran) {
            (IvdepStyle::Attribute, false) => "[[intel::ivdep]]",
            (IvdepStyle::IntelPragma, false) => "#pragma ivdep",
            (IvdepStyle::GccPragma, false) => "#pragma GCC ivdep",
            (IvdepStyle::GccPragma, true) => "!GCC$ ivdep",
            (_, true) => "!DIR$ IVDEP",
        }
    }
}

pub(crate) fn rewrite(site: &MarkerSite, style: IvdepStyle) -> MarkerRewrite {
    let b = site.builtin;
    if b.kind == BuiltinKind::PipelineLoop {
        return refused(
            b.span,
            "ivdep",
            "pipeline_loop asserts nothing about dependences; remove it and build with -csa-ilpl-selection=automatic",
        );
    }
    let line = style.spelling(site.fortran);
    let mut edits = site.removal.clone();
    if site.source_loop.ivdep.is_none() {
        edits.push(insert_line_before(
            site.text,
            site.loop_node.start_byte(),
            line,
        ));
    }
    MarkerRewrite {
        marker: b.span,
        fix: Fix {
            title: format!(
                "Convert the marker to `{line}` (asserts no loop-carried memory dependence)"
            ),
            applicability: Applicability::Unsafe,
            edits,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styles_parse_and_spell() {
        for s in [
            IvdepStyle::Attribute,
            IvdepStyle::IntelPragma,
            IvdepStyle::GccPragma,
        ] {
            assert_eq!(IvdepStyle::from_name(s.name()), Some(s));
        }
        assert_eq!(IvdepStyle::from_name("nope"), None);
        assert_eq!(IvdepStyle::IntelPragma.spelling(true), "!DIR$ IVDEP");
        assert_eq!(IvdepStyle::GccPragma.spelling(true), "!GCC$ ivdep");
    }
}
