//! Markers to OpenMP (REWRITES.md "Markers to OpenMP"): `parallel_loop` to
//! `parallel for` / `parallel do`, `spmd(W, C)` and `spmdization(W, kind)`
//! with `num_threads(W) schedule(static[, C])`, and the data-sharing
//! clauses from [`super::sharing`]. `pipeline_loop` has no OpenMP
//! equivalent and is display-only.

use super::sharing::{Refusal, Sharing};
use super::{refused, LoopArray, MarkerRewrite, MarkerSite};
use crate::dependence::arrays::ArrayClass;
use crate::diag::{Applicability, Fix};
use crate::fix::{indentation, insert_line_after, insert_line_before};
use crate::ir::{ArgValue, BuiltinKind};

const WHAT: &str = "OpenMP";

/// `num_threads(W) schedule(static[, C])` for spmd/spmdization, or an error.
fn schedule(site: &MarkerSite) -> Result<Option<(i64, i64)>, String> {
    let b = site.builtin;
    let int = |i: usize| match b.args.get(i).map(|a| &a.value) {
        Some(ArgValue::Int(v)) => Some(*v),
        _ => None,
    };
    match b.kind {
        BuiltinKind::ParallelLoop => Ok(None),
        BuiltinKind::Spmd => {
            let (Some(w), Some(c)) = (int(0), int(1)) else {
                return Err("the spmd arguments are not integer constants".into());
            };
            if w < 1 || c < 0 {
                return Err(format!(
                    "spmd({w}, {c}) is invalid (CSA103): workers must be >= 1 and chunk >= 0"
                ));
            }
            Ok(Some((w, c)))
        }
        BuiltinKind::Spmdization => {
            let Some(w) = int(0).filter(|w| *w >= 1) else {
                return Err("the spmdization worker count is not a constant >= 1".into());
            };
            let kind = match b.args.get(1).map(|a| &a.value) {
                Some(ArgValue::Str(s)) => s.clone(),
                _ => return Err("the spmdization kind is not a string".into()),
            };
            // SEMANTICS.md: case-insensitive; block/blocked/blocking.
            let chunk = match kind.to_ascii_lowercase().as_str() {
                "cyclic" => 1,
                "block" | "blocked" | "blocking" => 0,
                "hybrid" => 8,
                other => {
                    return Err(format!(
                        "the spmdization kind `{other}` is not cyclic, block(ed/ing) or hybrid (CSA103)"
                    ))
                }
            };
            Ok(Some((w, chunk)))
        }
        _ => Err("not a parallel loop marker".into()),
    }
}

/// The clauses, one string each (`num_threads(4)`, `private(t)`, ...).
pub(crate) fn clause_list(
    sched: Option<(i64, i64)>,
    sharing: &Sharing,
    fortran: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((w, c)) = sched {
        out.push(format!("num_threads({w})"));
        if c == 0 {
            out.push("schedule(static)".to_string());
        } else {
            out.push(format!("schedule(static, {c})"));
        }
    }
    if !sharing.private.is_empty() {
        out.push(format!("private({})", sharing.private.join(", ")));
    }
    if !sharing.lastprivate.is_empty() {
        out.push(format!("lastprivate({})", sharing.lastprivate.join(", ")));
    }
    for (name, step) in &sharing.linear {
        if *step == 1 {
            out.push(format!("linear({name})"));
        } else {
            out.push(format!("linear({name}:{step})"));
        }
    }
    let mut ops: Vec<_> = sharing.reductions.iter().map(|(op, _)| *op).collect();
    ops.sort();
    ops.dedup();
    for op in ops {
        let names: Vec<&str> = sharing
            .reductions
            .iter()
            .filter(|(o, _)| *o == op)
            .map(|(_, n)| n.as_str())
            .collect();
        let spelled = if fortran {
            op.spelling(crate::ir::Lang::Fortran)
        } else {
            op.spelling(crate::ir::Lang::C)
        };
        out.push(format!("reduction({spelled}:{})", names.join(", ")));
    }
    out
}

/// The clauses as they follow the directive name (` private(t) ...`).
pub(crate) fn clauses(sched: Option<(i64, i64)>, sharing: &Sharing, fortran: bool) -> String {
    clause_list(sched, sharing, fortran)
        .iter()
        .map(|c| format!(" {c}"))
        .collect()
}

/// Free-form Fortran lines stop at 132 characters: a long `!$omp` directive
/// continues on `!$omp&` lines (each at `indent`). Returns the lines joined
/// for `insert_line_before`.
fn fortran_directive(head: &str, clauses: &[String], indent: &str, eol: &str) -> String {
    const LIMIT: usize = 100;
    let mut lines = vec![head.to_string()];
    for c in clauses {
        let Some(last) = lines.last_mut() else {
            break;
        };
        if indent.len() + last.len() + 1 + c.len() + 2 > LIMIT {
            last.push_str(" &");
            lines.push(format!("!$omp& {c}"));
        } else {
            last.push(' ');
            last.push_str(c);
        }
    }
    lines.join(&format!("{eol}{indent}"))
}

/// Adds the clauses the loop's arrays need (`private(a)`,
/// `reduction(op:a)`; C array sections `a[:n]` for reductions), or refuses
/// when an array can be none of shared, private or a reduction.
pub(crate) fn add_arrays(
    sh: &mut Sharing,
    arrays: &[LoopArray],
    fortran: bool,
) -> Result<(), Refusal> {
    for a in arrays {
        let name = &a.name;
        match &a.class {
            ArrayClass::Shared | ArrayClass::Asserted => {}
            ArrayClass::Unproven { why, .. } => {
                return Err(Refusal {
                    reason: format!(
                        "the local array `{name}` is written in the loop: {why} (line {}); OpenMP iterations would share it",
                        a.line
                    ),
                })
            }
            ArrayClass::Private => {
                if !fortran && a.extents.is_none() {
                    return Err(Refusal {
                        reason: format!(
                            "the local array `{name}` needs its own copy in each iteration (`private({name})`), but its size is not a constant"
                        ),
                    });
                }
                if !sh.private.iter().any(|p| p == name) {
                    sh.private.push(name.clone());
                }
            }
            ArrayClass::Reduction(op) => {
                let item = if fortran {
                    name.clone()
                } else {
                    let Some(ext) = &a.extents else {
                        return Err(Refusal {
                            reason: format!(
                                "the iterations update elements of `{name}` as a reduction, but its size is not a constant, which `reduction({}:{name}[:n])` needs",
                                op.spelling(crate::ir::Lang::C)
                            ),
                        });
                    };
                    let dims: String = ext.iter().map(|e| format!("[:{e}]")).collect();
                    format!("{name}{dims}")
                };
                sh.reductions.push((*op, item));
            }
        }
    }
    Ok(())
}

pub(crate) fn rewrite(site: &MarkerSite, pre: &str) -> MarkerRewrite {
    let b = site.builtin;
    if b.kind == BuiltinKind::PipelineLoop {
        return refused(
            b.span,
            WHAT,
            "pipeline_loop has no OpenMP equivalent; remove it and build with -csa-ilpl-selection=automatic to let the compiler pipeline loops",
        );
    }
    if site.source_loop.omp.is_some() {
        return refused(b.span, WHAT, "the loop already has an OpenMP directive");
    }
    let sched = match schedule(site) {
        Ok(s) => s,
        Err(why) => return refused(b.span, WHAT, &why),
    };
    let node = site.loop_node;
    if pre.get(node.byte_range()).is_some_and(|t| {
        t.to_ascii_lowercase()
            .contains("builtin_csa_spmd_worker_num")
    }) {
        return refused(
            b.span,
            WHAT,
            "the loop uses spmd_worker_num(); replace it with omp_get_thread_num() (and #include <omp.h>) by hand",
        );
    }
    let canonical = if site.fortran {
        super::canonical::fortran_canonical(node, pre).map(|_| ())
    } else {
        super::canonical::c_canonical(node, pre).map(|_| ())
    };
    let sharing: Result<Sharing, Refusal> = canonical.and_then(|()| site.scalars.clone());
    let sharing = sharing.and_then(|mut sh| {
        add_arrays(&mut sh, &site.arrays, site.fortran)?;
        Ok(sh)
    });
    let text = site.text;
    let start = node.start_byte();
    match sharing {
        Ok(sh) => {
            let cl = clauses(sched, &sh, site.fortran);
            let mut edits = site.removal.clone();
            let directive = if site.fortran {
                let indent = indentation(text, start).to_string();
                let list = clause_list(sched, &sh, true);
                let eol = crate::fix::line_ending(text);
                let lines = fortran_directive("!$omp parallel do", &list, &indent, eol);
                edits.push(insert_line_before(text, start, &lines));
                edits.push(insert_line_after(
                    text,
                    node.end_byte().saturating_sub(1).max(start),
                    &indent,
                    "!$omp end parallel do",
                ));
                format!("!$omp parallel do{cl}")
            } else {
                let d = format!("#pragma omp parallel for{cl}");
                edits.extend(crate::fix::insert_directive_before(text, node, &d));
                d
            };
            // (a threadprivate object is each thread's own: what the
            // other threads write does not reach the thread after the
            // loop, and what they read may not be the values set before)
            let elsewhere: Vec<String> =
                site.elsewhere.iter().map(|n| format!("`{n}`")).collect();
            let assumes = if elsewhere.is_empty() {
                String::new()
            } else {
                format!(
                    "; assumes that {} (declared in another file) {} not `threadprivate`",
                    elsewhere.join(", "),
                    if elsewhere.len() == 1 { "is" } else { "are" }
                )
            };
            MarkerRewrite {
                marker: b.span,
                fix: Fix {
                    kind: crate::diag::FixKind::Convert,
                    title: format!(
                        "Convert the marker to `{directive}` (asserts the iterations are independent{assumes})"
                    ),
                    applicability: Applicability::Unsafe,
                    edits,
                },
            }
        }
        Err(r) => refused(b.span, WHAT, &r.reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_fortran_directives_continue() {
        let clauses: Vec<String> = (0..12).map(|k| format!("private(variable_{k})")).collect();
        let d = fortran_directive("!$omp parallel do", &clauses, "  ", "\n");
        for line in d.lines() {
            assert!(line.len() <= 100, "{line}");
        }
        assert!(d.contains(" &\n  !$omp& private("), "{d}");
        assert_eq!(
            fortran_directive("!$omp parallel do", &["private(t)".into()], "", "\n"),
            "!$omp parallel do private(t)"
        );
    }
}
