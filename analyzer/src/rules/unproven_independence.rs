//! # CSA502 unproven-independence
//!
//! ## What it does
//! Reports an access in a loop asserted parallel (a CSA marker the compiler
//! acts on, or an OpenMP worksharing loop) whose independence from the
//! other iterations csa-lint cannot prove, and says why: an indirect
//! subscript (`a[idx[i]]`), a subscript that is not an affine function of
//! the loop indices, a distance that depends on a variable's value
//! (`a[i + k]`), pointers that may point to the same memory, a call to a
//! function whose effects are unknown (in Fortran, `name(args)` with a
//! name the file does not declare under IMPLICIT NONE or a USE may be an
//! array of a module in another file as well: the message says both),
//! inline assembly, an access that
//! conflicts only on some iterations, a conflict on data of an OpenMP loop
//! that a module in another file declares (and may make `threadprivate`),
//! or a loop too large to analyse.
//! Calls to functions defined in the same file are not unknown: their
//! effects (globals, `static` locals, what the arguments reach) are checked
//! at the call like the loop's own accesses, unless the callee itself calls
//! something unknown, recurses or computes the pointers it writes through;
//! the message then says which.
//!
//! ## Why it matters
//! The compiler trusts the assertion. If the iterations do conflict, the
//! parallel loop computes wrong results. This is not an error: the
//! assertion may well be true (an index array holding a permutation, a
//! callee that touches only its own data); it is the part of the assertion
//! that only you can vouch for.
//!
//! ## Example
//! ```c
//! __builtin_csa_parallel_loop();
//! for (int i = 0; i < n; i++)
//!     x[idx[i]] += y[i];   // independent only if idx holds no repeats
//! ```
//!
//! ## How to fix
//! Check the reason given. Make what is unknown visible: `restrict` on
//! pointer parameters that never overlap (a pointer declared with a macro
//! from a header csa-lint does not read, `double * RESTRICT a`, is not
//! taken for `restrict`: the message names the macro, and `-D
//! RESTRICT=restrict` says what it stands for), a loop-invariant offset as
//! a constant, a callee defined in the same file. When you know the loop is
//! independent, suppress the diagnostic on that line with
//! `// csa-lint: ignore[CSA502]` and a comment saying why.
//!
//! ## Fix safety
//! No fix is offered.

use super::FunctionContext;
use crate::dependence::{Asserted, Finding, Unproven};
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(502),
    name: "unproven-independence",
    severity: Severity::Warning,
    fixable: false,
    summary: "The iterations of a loop asserted parallel cannot be proven independent",
    source: include_str!("unproven_independence.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    for d in cx.deps {
        for f in &d.findings {
            let Finding::Unproven { object, at, why } = f else {
                continue;
            };
            let text = |s: crate::source::Span| {
                cx.src
                    .text()
                    .get(s.start as usize..s.end as usize)
                    .unwrap_or("")
                    .to_string()
            };
            let mut related = Vec::new();
            let reason = match why {
                Unproven::Indirect(s) => {
                    related.push((*s, "the subscript reads memory".to_string()));
                    format!("its subscript depends on the value read from `{}`", text(*s))
                }
                Unproven::NotAffine => "its subscript is not an affine function of the loop indices".to_string(),
                Unproven::MovingSection => "it is a section whose bounds change with the iteration, and the sections of different iterations are not shown to be disjoint".to_string(),
                Unproven::Varies(v) => format!("its subscript uses `{v}`, which the loop changes by other than a constant step"),
                Unproven::SomePaths(v) => format!("its subscript uses `{v}`, which is set on some paths only"),
                Unproven::Clobbered(v) => format!("its subscript uses `{v}`, which a call or a store through a pointer in the loop may change"),
                Unproven::SymbolicOffset(vs) => format!(
                    "the distance between the iterations that touch the same element depends on the value of {}",
                    vs.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
                ),
                Unproven::Coupled => "its subscripts are coupled in a way the tests do not decide (an element may be reached from two different iterations)".to_string(),
                Unproven::NonLinear => "its subscript multiplies a loop index by a variable".to_string(),
                Unproven::SearchLimit => "no conflict was found in the first 256 iterations, and none can be excluded".to_string(),
                Unproven::MayAlias { other, other_span } => {
                    related.push((*other_span, format!("`{other}` may point to the same memory")));
                    let hint = [object.as_str(), other.as_str()]
                        .iter()
                        .find_map(|n| unread_qualifier(cx, n))
                        .map_or_else(
                            || "add `restrict` to pointer parameters that never overlap".to_string(),
                            |(var, mac)| format!("`{var}` is declared with `{mac}`, a macro csa-lint does not read as `restrict`; if it stands for it, `-D {mac}=restrict` or `defines = [\"{mac}=restrict\"]` says so"),
                        );
                    format!("`{object}` and `{other}` may be the same memory ({hint})")
                }
                Unproven::UnknownCall(name) => format!("the call to `{name}` has effects csa-lint cannot see (define it in this file, or list it in `pure-functions` if it has none)"),
                Unproven::UndeclaredReference(name) => format!("`{name}` is not declared in this file: it may be an array of a module in another file, or a function there whose effects csa-lint cannot see (if it is an array, or a function without effects, list it in `pure-functions`)"),
                Unproven::OpaqueCallee { name, why } => format!("`{name}` is defined in this file, but its effects cannot be summarised: {why}"),
                Unproven::Asm => "inline assembly may touch any memory".to_string(),
                Unproven::LeavesDimension => "one of its subscripts leaves its dimension's bounds on some iteration, so it reaches elements of a neighbouring row and the subscripts cannot be compared one by one".to_string(),
                Unproven::LoadedPointer(s) if s == at => "it goes through a pointer loaded from memory, which may point to the same place in different iterations".to_string(),
                Unproven::LoadedPointer(s) => {
                    related.push((*s, "the pointer is loaded here".to_string()));
                    format!("it goes through a pointer loaded from `{}`, which may point to the same place in different iterations", text(*s))
                }
                Unproven::Conditional { other, distance } => {
                    related.push((*other, "the other access".to_string()));
                    let d = distance.map(|d| format!(" at distance {}", d.abs())).unwrap_or_default();
                    format!("two iterations may access the same element{d}, but the accesses run only on some iterations")
                }
                Unproven::Budget => "the loop nest is too large for the analysis budget".to_string(),
                Unproven::DeclaredElsewhere => format!("two iterations access the same element of `{object}`, which is declared in another file: the module there may make it `threadprivate` (each thread's own copy); if it is shared, a `shared({object})` clause says so, and this becomes an error"),
            };
            let subject = match why {
                Unproven::UnknownCall(_)
                | Unproven::UndeclaredReference(_)
                | Unproven::OpaqueCallee { .. }
                | Unproven::Asm => {
                    "this loop".to_string()
                }
                _ => format!("the access `{}` to `{object}`", text(*at)),
            };
            let anchor = match &d.asserted {
                Asserted::Marker(b) => cx.func.builtin(*b).span,
                Asserted::Omp { directive, .. } => *directive,
            };
            let mut diag = Diagnostic::new(
                &RULE,
                *at,
                format!("cannot prove that the iterations of {subject} are independent: {reason}"),
            );
            for (s, m) in related {
                diag = diag.with_related(s, m);
            }
            out.push(diag.with_related(anchor, "the loop is asserted parallel here"));
        }
    }
}

/// When the pointer `name` (`*a` or `a`) of a C function is declared with
/// a name between its `*` and itself (`double * RESTRICT a`: a qualifier
/// macro csa-lint cannot see, read as nothing), the pointer and the macro.
fn unread_qualifier(cx: &FunctionContext, name: &str) -> Option<(String, String)> {
    if cx.func.lang != crate::ir::Lang::C {
        return None;
    }
    let name = name.trim_start_matches('*');
    let var = cx.func.vars.iter().find(|v| v.name == name)?;
    let text = cx.src.text().get(..var.span.start as usize)?;
    let before = text.trim_end_matches([' ', '\t']);
    // (after the last character that is not a word's, whatever its width)
    let word_start = before
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c == '_' || c.is_ascii_alphanumeric()))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = &before[word_start..];
    let star = before[..word_start].trim_end_matches([' ', '\t']).ends_with('*');
    let qualifier = matches!(
        word,
        "const" | "volatile" | "restrict" | "__restrict" | "__restrict__" | "_Atomic"
    );
    (star && !qualifier && word.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic()))
        .then(|| (name.to_string(), word.to_string()))
}
