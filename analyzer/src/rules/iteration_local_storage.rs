//! # CSA301 iteration-local-storage
//!
//! ## What it does
//! Reports a local that lives in memory (an array not split into registers,
//! a variable whose address is taken, a variable-length array) declared
//! inside a loop that runs in parallel: a loop with a parallel section entry
//! of its own (outside its inner loops), whether CLIE placed it for a
//! `parallel_loop`/`spmd` marker, you wrote
//! `__builtin_csa_parallel_section_entry`, or the loop is an OpenMP
//! worksharing loop. The compiler prints
//! `!! WARNING: ITERATION-LOCAL STORAGE DETECTED IN A PARALLELIZED LOOP !!`
//! for the first such loop of a function; csa-lint reports every
//! (loop, declaration) pair.
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
//! No automatic fix yet.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::memory::alias::LocBase;
use crate::memory::MemOpKind;
use crate::regions::events::{EventKind, EventOrigin};

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
            EventOrigin::User(_) => format!(
                "it holds a parallel section entry at {}",
                cx.line(first.span)
            ),
        };
        for op in &cx.memory.ops {
            if op.kind != MemOpKind::LifetimeStart || !cx.forest.contains(l, op.block.0) {
                continue;
            }
            let name = match op.loc.map(|loc| loc.base) {
                Some(LocBase::Var(v)) => format!("`{}`", cx.func.var(v).name),
                _ => "this local".to_string(),
            };
            let mut d = Diagnostic::new(
                Code(301),
                op.span,
                format!(
                    "ITERATION-LOCAL STORAGE DETECTED IN A PARALLELIZED LOOP: {name} lives in memory and is declared inside the loop at {}, which runs in parallel because {why}; the compiler allocates it once, so parallel iterations share and overwrite it",
                    cx.line(loop_span)
                ),
            )
            .with_related(first.span, "this makes the loop parallel")
            .with_related(loop_span, "the parallel loop");
            if let Some(l2) = cx.forest.loop_for(op.block.0).filter(|&x| x != l) {
                d = d.with_related(cx.loop_span(l2), "declared in this inner loop");
            }
            out.push(d.with_help(
                "Declare it before the loop and give each iteration its own part, keep it in registers, or remove the parallel marking.",
            ));
        }
    }
}
