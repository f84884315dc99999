//! # CSA503 shared-scalar-in-openmp-loop
//!
//! ## What it does
//! Checks the data sharing of the scalar variables of an OpenMP
//! worksharing loop (C `#pragma omp parallel for` / `for`, Fortran
//! `!$omp parallel do` / `do`) and reports:
//! * a **shared** scalar written in the loop: no clause names it, so all
//!   iterations use one copy and race on it. The message says which clause
//!   fits, from how the variable is used: `private(x)` when every
//!   iteration sets it before reading it, `lastprivate(x)` when it is also
//!   read after the loop (and set on every path), `reduction(op:x)` when
//!   every access is an update `x = x op e` with one operator (also a
//!   compare-and-assign `if (a[i] > m) m = a[i];`: `reduction(max:m)`),
//!   `linear(x)` for an induction variable stepped once per iteration; or
//!   that no clause fits, when an iteration reads the value an earlier one
//!   left or a procedure it is passed to may change it. The clause is
//!   decided where the OpenMP rewrite decides it (`dependence::classify`);
//! * a **private** (or `lastprivate`) scalar read before the iteration
//!   writes it: each thread's copy starts undefined;
//! * a **reduction** variable accessed other than by its update, or
//!   updated with another operator than the clause's: the value read is a
//!   thread's partial result.
//!
//! A shared scalar every access of which in the loop runs under one
//! OpenMP lock (all in `atomic` statements, or all in `critical`
//! constructs of one name; a call it is passed to as well) is not
//! reported: the iterations update it one at a time.
//!
//! Variables that are private without a clause are not reported: the loop
//! index (all `collapse`d indices), in C a variable declared inside the
//! loop or inside the enclosing `parallel` region, in Fortran the index of
//! a sequential `DO` inside the construct. A `static` local declared inside
//! the loop is not private (one object for all iterations): it is reported
//! when written, without a clause to add (none can name it there).
//!
//! CSA markers are not checked here: under CSA semantics scalars in
//! registers may carry values from one iteration to the next (SEMANTICS.md
//! §4); memory scalars there are CSA501/CSA502's.
//!
//! ## Why it matters
//! A data race on a scalar gives wrong, irreproducible results: two
//! iterations on different threads overwrite each other's temporaries, or
//! lose updates of a sum.
//!
//! ## Example
//! ```c
//! double t;
//! #pragma omp parallel for          // t is shared: add private(t)
//! for (int i = 0; i < n; i++) {
//!     t = a[i] * 2;
//!     b[i] = t + 1;
//! }
//! ```
//!
//! ## How to fix
//! Add the clause the message names. When the variable carries a value
//! from one iteration to the next, the loop is not parallel as written.
//!
//! ## Fix safety
//! The fix adding the clause is unsafe: it changes which copy of the
//! variable the code after the loop sees, and the analysis decides from the
//! code it can see (a callee may read the variable). A directive with a
//! clause that cannot be read gets no fix (that clause may name the
//! variable already).

use super::FunctionContext;
use crate::scalars::classify::{self, Clause, NoClause};
use crate::dependence::openmp::{red_op, Sharing};
use crate::scalars::{RedOp, ScalarUse};
use crate::dependence::Asserted;
use crate::diag::{Applicability, Code, Diagnostic, Edit, Fix};
use crate::diag::{Rule, Severity};
use crate::omp::{self, ClauseKind, OmpLang};
use crate::graph::loops::LoopId;
use crate::source::Span;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(503),
    name: "shared-scalar-in-openmp-loop",
    severity: Severity::Warning,
    fixable: true,
    summary:
        "A shared scalar written in an OpenMP loop, or a private/reduction clause that does not fit",
    source: include_str!("shared_scalar_in_openmp_loop.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for d in cx.deps {
        let Asserted::Omp { directive, .. } = &d.asserted else {
            continue;
        };
        for (u, sh) in d.scalars.iter().zip(&d.sharing) {
            let name = &cx.func.var(u.var).name;
            let diag = match sh {
                // (one lock around every access: no race)
                Sharing::Shared { .. } if u.locked => None,
                Sharing::Shared { explicit } => {
                    shared(cx, *directive, u, name, *explicit, d.loop_id)
                }
                Sharing::Private | Sharing::Lastprivate => undefined_read(u, name, sh),
                Sharing::Reduction(op) => bad_reduction(cx, u, name, red_op(op)),
                _ => None,
            };
            if let Some(diag) = diag {
                out.push(diag.with_related(*directive, "the OpenMP directive"));
            }
        }
    }
}

/// The clause that fits a shared scalar written in the loop, or why none.
enum Suggest {
    Clause(&'static str, Option<RedOp>),
    None(String),
}

/// The clause `dependence::classify` decides, as CSA503 words it.
fn suggestion(cx: &FunctionContext, u: &ScalarUse) -> Suggest {
    match classify::scalar_clause(cx.func, u, false) {
        Ok(Clause::Reduction(op)) => Suggest::Clause("reduction", Some(op)),
        Ok(Clause::Private | Clause::Shared) => Suggest::Clause("private", None),
        Ok(Clause::Lastprivate) => Suggest::Clause("lastprivate", None),
        Ok(Clause::Linear(1)) => Suggest::Clause("linear", None),
        Ok(Clause::Linear(step)) => Suggest::None(format!(
            "it is an induction variable stepped by {step} on every iteration, which `linear(...:{step})` describes"
        )),
        Err(NoClause::Carried(r)) => Suggest::None(format!(
            "it carries a value from one iteration to the next (read at {} before the iteration writes it), which no clause makes parallel",
            cx.line(r)
        )),
        Err(NoClause::AddressTaken) => Suggest::None(
            "its address is taken, so code csa-lint cannot see may use it through a pointer"
                .to_string(),
        ),
        Err(NoClause::SomePaths) => Suggest::None(
            "it is read after the loop but written on some iterations only, so no clause keeps the value the sequential loop leaves"
                .to_string(),
        ),
        Err(NoClause::Passed { callee, at }) => Suggest::None(format!(
            "it is passed to `{callee}` at {}, which may read or change it, so no clause can be chosen",
            cx.line(at)
        )),
        Err(NoClause::SteppedPointer) => Suggest::None(
            "it is a pointer stepped on every iteration, which no clause makes parallel"
                .to_string(),
        ),
    }
}

fn shared(
    cx: &FunctionContext,
    directive: Span,
    u: &ScalarUse,
    name: &str,
    explicit: bool,
    l: LoopId,
) -> Option<Diagnostic> {
    let at = u.first_write?;
    let how = if explicit {
        "is `shared` by the OpenMP directive"
    } else if cx.func.declared_elsewhere.contains(&u.var) {
        // (what its module says of it is not seen)
        "is shared by the OpenMP loop (no clause names it) unless the module that declares it, in another file, makes it `threadprivate`"
    } else {
        "is shared by the OpenMP loop (no clause names it)"
    };
    let what = if u.inner_index {
        ", the index of an inner loop,"
    } else {
        ""
    };
    // (a `static` local: one object for every iteration, and out of scope
    // at the directive; automatic ones are private and not reported)
    let static_inside = crate::dependence::declarations_in(cx.func, cx.forest, l).any(|d| d == u.var);
    let suggest = if static_inside {
        // No clause can name it: the directive comes before its scope.
        Suggest::None(
            "it is declared `static` inside the loop, so every iteration shares one object and no clause on the directive can name it; without `static`, each iteration has its own"
                .to_string(),
        )
    } else {
        suggestion(cx, u)
    };
    let (tail, fix) = match suggest {
        Suggest::Clause(kind, op) => {
            let clause = match op {
                Some(op) => format!("{kind}({}:{name})", op.spelling(cx.func.lang)),
                None => format!("{kind}({name})"),
            };
            let why = match kind {
                "reduction" => "every access is an update of one kind".to_string(),
                "linear" => {
                    "it is an induction variable stepped by one on every iteration".to_string()
                }
                "lastprivate" => {
                    "each iteration sets it before reading it, and it is read after the loop"
                        .to_string()
                }
                _ => "each iteration sets it before reading it".to_string(),
            };
            (
                format!("; {why}, so it can be `{clause}`"),
                add_clause_fix(cx, directive, kind, op, name, explicit),
            )
        }
        Suggest::None(why) => (format!("; {why}"), None),
    };
    let diag = Diagnostic::new(
        &RULE,
        at,
        format!("`{name}`{what} {how} and written in it: the iterations race on it{tail}"),
    )
    .with_help(if static_inside {
        "Drop `static` if each iteration needs its own copy; otherwise the iterations must not write it."
    } else {
        "Give the variable a data-sharing clause, or declare it inside the loop body."
    });
    Some(match fix {
        Some(f) => diag.with_fix(f),
        None => diag,
    })
}

fn undefined_read(u: &ScalarUse, name: &str, sh: &Sharing) -> Option<Diagnostic> {
    let at = u.exposed_read?;
    let clause = if *sh == Sharing::Private {
        "private"
    } else {
        "lastprivate"
    };
    let help = if u.first_write.is_none() {
        format!("The loop only reads `{name}`: make it `firstprivate({name})` or `shared`.")
    } else {
        "Set the variable before reading it in each iteration, or use `firstprivate` if the value from before the loop is meant.".to_string()
    };
    // "may": the read sees a value from before the iteration on some path
    // through it (`s = s + x` first, or a read after a write made on some
    // paths only: `if (j == i) d = ...;` in an inner loop, then `d`)
    let message = format!(
        "`{name}` is `{clause}`, but this read may come before the iteration writes it: each thread's copy starts undefined"
    );
    Some(Diagnostic::new(&RULE, at, message).with_help(help))
}

fn bad_reduction(
    cx: &FunctionContext,
    u: &ScalarUse,
    name: &str,
    clause: Option<RedOp>,
) -> Option<Diagnostic> {
    let lang = cx.func.lang;
    let (at, msg) = match u.reduction {
        Err(at) => (
            at,
            format!("`{name}` is a reduction variable, but it is accessed here other than by its update `{name} = {name} op ...`: this sees a thread's partial result"),
        ),
        Ok(None) => (
            u.first_read?,
            format!("`{name}` is a reduction variable but the loop never updates it: this read sees the reduction's initial value, not `{name}`"),
        ),
        Ok(Some(op)) => {
            let clause = clause?;
            if op.fits(clause) {
                return None;
            }
            (
                u.first_write?,
                format!(
                    "`{name}` is updated with `{}` but the reduction clause combines with `{}`",
                    op.spelling(lang),
                    clause.spelling(lang)
                ),
            )
        }
    };
    Some(Diagnostic::new(&RULE, at, msg).with_help(
        "A reduction variable may only be updated with the clause's operator inside the loop; read it after the loop.",
    ))
}

/// Adds `kind(name)` to the directive: into an existing clause of that
/// kind (and operator), or as a new clause at the directive's end. An
/// explicit `shared(name)` is left for the user to remove: no fix then.
fn add_clause_fix(
    cx: &FunctionContext,
    directive: Span,
    kind: &str,
    op: Option<RedOp>,
    name: &str,
    explicit: bool,
) -> Option<Fix> {
    if explicit {
        return None;
    }
    let lang = cx.func.lang;
    let text = cx
        .src
        .text()
        .get(directive.start as usize..directive.end as usize)?;
    let d = omp::parse_directive(text, OmpLang::from(lang))?;
    if !d.problems.is_empty() {
        // a clause we could not read may name the variable already
        // (`reducti(n(+:s)`): adding one would not be seen either, and
        // every round of `--fix` would add it again
        return None;
    }
    let existing = d.clauses.iter().find(|c| match (&c.kind, kind) {
        (ClauseKind::Private, "private") | (ClauseKind::Lastprivate, "lastprivate") => true,
        (ClauseKind::Reduction(r), "reduction") => red_op(r) == op,
        _ => false,
    });
    let (pos, new_text) = match existing {
        Some(c) if text[..c.range.end].ends_with(')') => (
            directive.start as usize + c.range.end - 1,
            format!(", {name}"),
        ),
        _ => {
            let clause = match op {
                Some(op) => format!("{kind}({}:{name})", op.spelling(lang)),
                None => format!("{kind}({name})"),
            };
            // after the last word or clause: a trailing comment stays last
            let end = d
                .clauses
                .iter()
                .map(|c| c.range.end)
                .chain([d.name_range.end])
                .max()
                .filter(|&e| e > 0)
                .unwrap_or(text.len());
            (directive.start as usize + end, format!(" {clause}"))
        }
    };
    Some(Fix {
        kind: crate::diag::FixKind::DataSharing,
        title: format!("Make `{name}` {kind}"),
        applicability: Applicability::Unsafe,
        edits: vec![Edit {
            span: Span::new(pos, pos),
            new_text,
        }],
    })
}
