//! # CSA301 iteration-local-storage
//!
//! ## What it does
//! Reports a local that lives in memory (an array not split into registers,
//! a variable whose address is taken) declared inside a loop that runs in
//! parallel: a loop with a parallel section entry
//! of its own (outside its inner loops), whether CLIE placed it for a
//! `parallel_loop`/`spmd` marker, you wrote
//! `__builtin_csa_parallel_section_entry`, the loop is an OpenMP
//! worksharing loop, or it holds an OpenMP `sections` construct (the CSA
//! lowering makes each `section` a parallel section: `genCSASections`).
//! The compiler prints
//! `!! WARNING: ITERATION-LOCAL STORAGE DETECTED IN A PARALLELIZED LOOP !!`
//! for the first such loop of a function; csa-lint reports every
//! (loop, declaration) pair. The check
//! (`CSAIntrinsicCleaner::check_for_problematic_iter_storage`) looks for
//! `lifetime.start` markers only: a C variable-length array, which clang
//! allocates between `stacksave` and `stackrestore` without one, is not
//! reported, nor is storage SROA splits into registers; `lifetime.end`
//! plays no part.
//!
//! ## Why it matters
//! The compiler allocates such storage once per function, not once per
//! iteration. Parallel iterations then share one copy and overwrite each
//! other's data: wrong results, with only a warning in the build log.
//!
//! ## Example
//! ```c
//! __builtin_csa_parallel_loop();
//! for (int i = 0; i < n; i++) {
//!   double tmp[8];          // shared by all iterations
//!   for (int k = 0; k < 8; k++) tmp[k] = a[i * 8 + k];
//!   out[i] = sum(tmp, 8);
//! }
//! ```
//!
//! ## How to fix
//! Declare the storage before the loop and give every iteration its own part
//! of it (index it by the iteration), make it fit in registers (constant
//! indices only, no address taken), or remove the parallel marking. If you
//! know the storage is optimised away, disable the check with
//! `--disable-loop-storage-check` (the compiler's
//! `-csa-disable-loop-storage-check`).
//!
//! ## Fix safety
//! Two unsafe fixes are offered. *Move the declaration before the loop*
//! (C; a declaration alone on its line, with one declarator, whose
//! initializer, if any, becomes an assignment in place, of a name the
//! function declares once: moved, it could otherwise change which variable
//! a use means, or declare a name twice in one scope): all iterations
//! then share the storage explicitly, which is only right if each iteration
//! writes it before reading it and no two iterations use it at once; index
//! it by the iteration otherwise. *Remove the parallel marking* (the
//! marker, when CLIE's section makes the loop parallel): the loop then runs
//! sequentially.

use super::FunctionContext;
use crate::diag::{Applicability, Code, Diagnostic, Edit, Fix};
use crate::diag::{Rule, Severity};
use crate::fix::{delete_statement, insert_line_before, line_end, line_start};
use crate::ir::Lang;
use crate::memory::alias::LocBase;
use crate::memory::MemOpKind;
use crate::regions::events::{EventKind, EventOrigin};
use crate::source::Span;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(301),
    name: "iteration-local-storage",
    severity: Severity::Warning,
    fixable: true,
    summary: "Storage declared inside a parallelized loop is shared by all iterations",
    source: include_str!("iteration_local_storage.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    if cx.disable_loop_storage_check {
        return;
    }
    for l in cx.forest.ids() {
        // Section entries of this loop itself, not of its subloops.
        let sections: Vec<&crate::regions::events::RegionEvent> = cx
            .events
            .events
            .iter()
            .filter(|e| {
                e.kind == EventKind::SectionEntry && cx.forest.loop_for(e.block.0) == Some(l)
            })
            .collect();
        let Some(first) = sections.first() else {
            continue;
        };
        let loop_span = cx.loop_span(l);
        let why = match first.origin {
            EventOrigin::Clie { marker, .. } => format!(
                "it is marked with {} at {}",
                cx.builtin_name(cx.func.builtin(marker)),
                cx.line(first.span)
            ),
            EventOrigin::Omp { .. } => format!("it is an OpenMP loop ({})", cx.line(first.span)),
            EventOrigin::OmpSections { .. } => String::new(),
            EventOrigin::User(_) => format!(
                "it holds a parallel section entry at {}",
                cx.line(first.span)
            ),
        };
        for op in &cx.memory.ops {
            if op.kind != MemOpKind::LifetimeStart || !cx.forest.contains(l, op.block.0) {
                continue;
            }
            // clang gives a C variable-length array a dynamic alloca between
            // stacksave/stackrestore, never a `lifetime.start`, which is all
            // the compiler's check looks for
            if let Some(LocBase::Var(v)) = op.loc.map(|loc| loc.base) {
                if cx.func.lang == Lang::C && cx.func.var(v).ty.is_vla {
                    continue;
                }
            }
            let name = match op.loc.map(|loc| loc.base) {
                Some(LocBase::Var(v)) => format!("`{}`", cx.func.var(v).name),
                _ => "this local".to_string(),
            };
            let message = match first.origin {
                // The loop itself need not run in parallel: the check flags
                // any loop with a section entry of its own.
                EventOrigin::OmpSections { .. } => format!(
                    "ITERATION-LOCAL STORAGE DETECTED IN A PARALLELIZED LOOP: {name} lives in memory and is declared inside the loop at {}, which holds a parallel section of its own (the OpenMP section at {}); the compiler allocates it once per function and warns about every such loop, and sections that run at the same time share it",
                    cx.line(loop_span),
                    cx.line(first.span)
                ),
                _ => format!(
                    "ITERATION-LOCAL STORAGE DETECTED IN A PARALLELIZED LOOP: {name} lives in memory and is declared inside the loop at {}, which runs in parallel because {why}; the compiler allocates it once, so parallel iterations share and overwrite it",
                    cx.line(loop_span)
                ),
            };
            let mut d = Diagnostic::new(&RULE, op.span, message)
                .with_related(first.span, "this makes the loop parallel")
                .with_related(loop_span, "the parallel loop");
            if let Some(l2) = cx.forest.loop_for(op.block.0).filter(|&x| x != l) {
                d = d.with_related(cx.loop_span(l2), "declared in this inner loop");
            }
            let var_name = match op.loc.map(|loc| loc.base) {
                Some(LocBase::Var(v)) => Some(cx.func.var(v).name.as_str()),
                _ => None,
            };
            let mut fixes = Vec::new();
            // Not when the function declares another variable of the name:
            // moved, the declaration could change which one a use means, or
            // declare the name twice in one scope.
            let unique_name = var_name.is_none_or(|n| {
                cx.func.vars.iter().filter(|v| v.name == n).count() == 1
            });
            if cx.func.lang == Lang::C && unique_name {
                // Before the loop statement and any pragma or attribute on it.
                let sl = cx.source_loop(l);
                let before = [
                    Some(loop_span.start),
                    sl.map(|sl| sl.span.start),
                    sl.and_then(|sl| sl.omp).map(|s| s.start),
                    sl.and_then(|sl| sl.ivdep).map(|s| s.start),
                ]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(loop_span.start);
                fixes.extend(move_declaration_fix(
                    cx.src.text(),
                    op.span,
                    Span::new(before as usize, loop_span.end as usize),
                    var_name,
                ));
            }
            if let EventOrigin::Clie { marker, .. } = first.origin {
                if let Some(mut f) =
                    cx.remove_marker_fix(cx.func.builtin(marker), Applicability::Unsafe)
                {
                    f.title.push_str(" (the loop then runs sequentially)");
                    fixes.push(f);
                }
            }
            out.push(
                d.with_help(
                    "Declare it before the loop and give each iteration its own part, keep it in registers, or remove the parallel marking.",
                )
                .with_fixes(fixes),
            );
        }
    }
}

/// Moves a declaration alone on its line to the line before the loop:
/// `T x;` moves as is; `T x = e;` leaves `x = e;` in place (not for arrays,
/// several declarators or brace initializers).
fn move_declaration_fix(
    text: &str,
    decl: Span,
    loop_span: Span,
    name: Option<&str>,
) -> Option<Fix> {
    let ls = line_start(text, decl.start as usize);
    let le = line_end(text, decl.start as usize);
    let line = text.get(ls..le)?;
    // The code before a trailing `//` comment (which stays where it is).
    let code = line.split("//").next().unwrap_or(line);
    let stmt = code.trim();
    if !stmt.ends_with(';') || stmt.contains("/*") || stmt.contains(',') {
        return None;
    }
    if (loop_span.start as usize) <= le && (loop_span.start as usize) >= ls {
        return None;
    }
    let start = ls + (code.len() - code.trim_start().len());
    let stmt_span = Span::new(start, start + stmt.len());
    // A variable-length array may depend on the iteration.
    if let Some((_, size)) = stmt.split_once('[') {
        if !size
            .split(']')
            .next()
            .is_some_and(|n| !n.trim().is_empty() && n.trim().bytes().all(|b| b.is_ascii_digit()))
        {
            return None;
        }
    }
    let (moved, in_place) = match stmt.split_once('=') {
        None => (stmt.to_string(), None),
        Some((head, init)) => {
            let name = name?;
            if head.contains('[')
                || init.trim_start().starts_with('{')
                || !head.trim_end().ends_with(name)
            {
                return None;
            }
            (
                format!("{};", head.trim_end()),
                Some(format!("{name} ={init}")),
            )
        }
    };
    let mut edits = vec![insert_line_before(text, loop_span.start as usize, &moved)];
    match in_place {
        // (C: declarations inside loops)
        None => edits.push(delete_statement(text, stmt_span, false)),
        Some(assign) => edits.push(Edit {
            span: stmt_span,
            new_text: assign,
        }),
    }
    Some(Fix {
        kind: crate::diag::FixKind::MoveDeclaration,
        title: "Move the declaration before the loop (all iterations then share it)".to_string(),
        applicability: Applicability::Unsafe,
        edits,
    })
}
