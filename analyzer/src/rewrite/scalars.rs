//! The scalar clauses of a marker's OpenMP conversion, from the IR
//! (`dependence::classify`), and the loop shapes an OpenMP loop may not
//! have (jumps out of it, inline assembly, READ, STOP), with refusals that
//! name the variable, the statement and why.

use super::sharing::{Refusal, Sharing};
use crate::analysis::FunctionAnalysis;
use crate::scalars::classify::{self, Clause, NoClause};
use crate::scalars;
use crate::graph::loops::LoopId;
use crate::ir::*;
use crate::source::{SourceText, Span};

/// The scalar data sharing of loop `l` (the source loop `sl`) for an OpenMP
/// loop, or why the loop cannot be one. `source` gives lines for messages.
pub(crate) fn scalar_sharing(
    f: &FunctionAnalysis,
    l: LoopId,
    sl: &SourceLoop,
    source: &SourceText,
) -> Result<Sharing, Refusal> {
    let func = &f.func;
    let line = |s: Span| source.line_col(s.start as usize).line;
    let refuse = |reason: String| Err(Refusal { reason });
    let lp = &f.forest.loops[l.index()];
    let inside = crate::dependence::declared_inside(func, &f.forest, l);
    let declared_in = |v: VarId| inside.binary_search(&v).is_ok();
    let fortran = func.lang == Lang::Fortran;
    let sums = crate::dependence::summary::Summaries::new(&func.callees, &f.pure_functions);
    // shapes an OpenMP loop may not have
    for &b in &lp.blocks {
        let block = func.block(BlockId(b));
        if b != lp.header
            && block
                .term
                .kind
                .successors()
                .any(|s| !f.forest.contains(l, s.0))
        {
            let at = block
                .term
                .span
                .map(|s| format!(" (line {})", line(s)))
                .unwrap_or_default();
            return refuse(if fortran {
                format!("an EXIT, RETURN, GO TO or CYCLE of an outer loop leaves the loop{at}, which OpenMP loops do not allow")
            } else {
                format!("a `break`, `return` or `goto` leaves the loop{at}, which OpenMP loops do not allow")
            });
        }
        if fortran && block.term.kind == TermKind::Unreachable {
            let at = block
                .term
                .span
                .map(|s| format!(" (line {})", line(s)))
                .unwrap_or_default();
            return refuse(format!("the loop may stop the program{at}"));
        }
        for inst in &block.insts {
            match &inst.kind {
                InstKind::Asm => {
                    return refuse(format!(
                        "the loop body contains inline assembly (line {})",
                        line(inst.span)
                    ))
                }
                InstKind::Call(c) if fortran && c.callee.as_deref() == Some("READ") => {
                    return refuse(format!(
                        "a READ statement in the loop (line {}) would read its records in another order",
                        line(inst.span)
                    ))
                }
                InstKind::Call(c)
                    if c.callee
                        .as_deref()
                        .and_then(|n| sums.get(n))
                        .is_some_and(|s| s.may_stop) =>
                {
                    return refuse(format!(
                        "`{}` (line {}) may stop the program, and a parallel loop would stop it after other iterations than the sequential loop ran",
                        c.callee.as_deref().unwrap_or_default(),
                        line(inst.span)
                    ))
                }
                InstKind::Access(a) if a.write => {
                    if let AccessTarget::Var(v) = a.target {
                        let var = func.var(v);
                        if var.ty.is_aggregate
                            && !var.ty.is_array
                            && matches!(var.kind, VarKind::Local | VarKind::Param)
                            && !declared_in(v)
                        {
                            return refuse(format!(
                                "a part of the local `{}` is written in the loop (line {}); iterations would have to share the rest of it",
                                var.name,
                                line(inst.span)
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let own = sl.control.as_ref().map(|c| c.var);
    let known = |n: &str| crate::dependence::harmless_call(n, &f.pure_functions, func.lang);
    let uses = scalars::scalar_uses(func, &f.preds, &f.forest, l, own, &known, &|c, v| {
        crate::dependence::call_reads_only(&sums, func, c, v)
    });
    let mut out = Sharing::default();
    let mut private: Vec<String> = Vec::new();
    let mut lastprivate: Vec<String> = Vec::new();
    for u in &uses {
        if declared_in(u.var) {
            continue;
        }
        let name = &func.var(u.var).name;
        let clause = classify::scalar_clause(func, u, true);
        match clause {
            Ok(Clause::Shared) => {}
            Ok(Clause::Private) => private.push(name.clone()),
            Ok(Clause::Lastprivate) => lastprivate.push(name.clone()),
            Ok(Clause::Reduction(op)) => out.reductions.push((op, name.clone())),
            Ok(Clause::Linear(step)) => out.linear.push((name.clone(), step)),
            Err(why) => {
                return refuse(match why {
                    NoClause::Carried(r) => format!(
                        "`{name}` carries a value from one iteration to the next (read at line {} before the iteration writes it) and is neither a reduction nor an induction variable",
                        line(r)
                    ),
                    NoClause::AddressTaken => format!(
                        "the address of `{name}` is taken, so iterations may share it through a pointer (written at line {})",
                        u.first_write.map_or(0, line)
                    ),
                    NoClause::SomePaths => format!(
                        "`{name}` is read after the loop but written only on some paths through the body (line {}), so its final value may come from an earlier iteration",
                        u.first_write.map_or(0, line)
                    ),
                    NoClause::Passed { callee, at } => format!(
                        "`{name}` is passed to `{callee}` (line {}) before the iteration sets it, or while it is updated, and `{callee}` may read or change it",
                        line(at)
                    ),
                    NoClause::SteppedPointer => {
                        format!("the pointer `{name}` is stepped in every iteration, which is not a reduction")
                    }
                })
            }
        }
    }
    let key = |s: &String| s.to_ascii_lowercase();
    private.sort_by_key(key);
    lastprivate.sort_by_key(key);
    // the loop's own index first: the value after the loop, when it is read
    if let Some(i) = own {
        let var = func.var(i);
        if matches!(var.kind, VarKind::Local | VarKind::Param | VarKind::Dummy)
            && !declared_in(i)
            && (var.kind == VarKind::Dummy || scalars::live_after_var(func, &f.forest, l, i))
        {
            lastprivate.insert(0, var.name.clone());
        }
    }
    out.private = private;
    out.lastprivate = lastprivate;
    out.reductions.sort_by_key(|r| key(&r.1));
    out.linear.sort_by_key(|r| key(&r.0));
    Ok(out)
}

#[cfg(test)]
mod tests;
