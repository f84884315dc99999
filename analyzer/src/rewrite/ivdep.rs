//! Markers to ivdep (REWRITES.md "Markers to ivdep"): `parallel_loop`,
//! `spmd` and `spmdization` assert that iterations are independent, which
//! implies ivdep's weaker "no loop-carried memory dependence". C styles:
//! `[[intel::ivdep]]` (default), `#pragma ivdep`, `#pragma GCC ivdep`;
//! Fortran `!DIR$ IVDEP` (Intel) or `!GCC$ ivdep` (GCC).

use super::{refused, MarkerRewrite, MarkerSite};
use crate::diag::{Applicability, Fix};
use crate::fix::insert_line_before;
use crate::ir::BuiltinKind;

use crate::config::IvdepStyle;

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
        if site.fortran {
            edits.push(insert_line_before(
                site.text,
                site.loop_node.start_byte(),
                line,
            ));
        } else {
            edits.extend(crate::fix::insert_directive_before(
                site.text,
                site.loop_node,
                line,
            ));
        }
    }
    MarkerRewrite {
        marker: b.span,
        fix: Fix {
            kind: crate::diag::FixKind::Convert,
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
            assert_eq!(IvdepStyle::from_name(s.as_str()), Some(s));
        }
        assert_eq!(IvdepStyle::from_name("nope"), None);
        assert_eq!(IvdepStyle::IntelPragma.spelling(true), "!DIR$ IVDEP");
        assert_eq!(IvdepStyle::GccPragma.spelling(true), "!GCC$ ivdep");
    }
}
