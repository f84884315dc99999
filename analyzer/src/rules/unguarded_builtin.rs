//! # CSA401 unguarded-builtin
//!
//! ## What it does
//! Reports a `__builtin_csa_*` call in C that is not inside an
//! `#ifdef __CSA__` (or `#if defined(__CSA__)`) block.
//!
//! ## Why it matters
//! Builds for other targets (x86 hosts, offload builds) lack most CSA
//! builtins, so the file stops compiling there.
//!
//! ## Example
//! ```c
//! __builtin_csa_parallel_loop();
//! for (int i = 0; i < n; i++) a[i] = b[i];
//! ```
//! Guarded:
//! ```c
//! #ifdef __CSA__
//! __builtin_csa_parallel_loop();
//! #endif
//! for (int i = 0; i < n; i++) a[i] = b[i];
//! ```
//!
//! ## How to fix
//! Wrap the call in `#ifdef __CSA__` ... `#endif`.
//!
//! ## Fix safety
//! No automatic fix yet.

use super::FileContext;
use crate::diag::{Code, Diagnostic};
use crate::ir::Lang;

pub(super) fn check(cx: &FileContext, out: &mut Vec<Diagnostic>) {
    if cx.lang != Lang::C {
        return;
    }
    for f in cx.functions {
        for b in &f.builtins {
            if (cx.csa_guarded)(b.span.start as usize) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    Code(401),
                    b.span,
                    format!(
                        "`{}` is not guarded by #ifdef __CSA__: builds for other targets lack most CSA builtins",
                        b.name
                    ),
                )
                .with_help("Wrap the call in #ifdef __CSA__ ... #endif."),
            );
        }
    }
}
