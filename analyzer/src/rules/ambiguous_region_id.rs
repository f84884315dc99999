//! # CSA203 ambiguous-region-id
//!
//! ## What it does
//! Reports a region exit, section entry or section exit whose token comes
//! from region entries with different region ids (through a variable
//! assigned on several paths, or, for a section exit, through section
//! entries of different regions). The related locations list every
//! region entry with its id, and say which one the compiler uses.
//!
//! The documents call this an error ("region ID ambiguous"). The compiler
//! does not check it: it follows the token depth-first through its
//! incoming values and silently takes the first region entry it finds.
//! The ambiguity is reported once, where it arises: a section exit whose
//! section entry is already ambiguous is not reported again.
//!
//! ## Why it matters
//! The intrinsic belongs to one region on some paths and to another on the
//! others, but the compiler puts it in a single region, chosen by the
//! order of the incoming values. On the paths that came from the other
//! region, its memory operations get ordering edges dropped (or kept) as
//! if they were in the first one.
//!
//! ## Example
//! ```c
//! int p;
//! if (c) {
//!   p = __builtin_csa_parallel_region_entry(0);
//! } else {
//!   p = __builtin_csa_parallel_region_entry(1);
//! }
//! int s = __builtin_csa_parallel_section_entry(p); // region 0 or 1?
//! ```
//!
//! ## How to fix
//! Give all the entries of one region the same id, or keep the tokens of
//! different regions in different variables and give each region its own
//! sections and exits.
//!
//! ## Fix safety
//! No fix changes the code. As for every diagnostic, a safe fix appends
//! a `csa-lint: ignore[CODE]` comment to the line.

use super::FunctionContext;
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::{BuiltinId, BuiltinKind};
use crate::regions::tokens::{kind_words, TokenInfo};

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(203),
    name: "ambiguous-region-id",
    severity: Severity::Warning,
    fixable: false,
    summary: "A token comes from region entries with different ids; the compiler silently takes the first",
    source: include_str!("ambiguous_region_id.rs"),
};

/// The distinct ids of `entries`, in order.
fn distinct_ids(tokens: &TokenInfo, entries: &[BuiltinId]) -> Vec<i64> {
    let mut ids = Vec::new();
    for &e in entries {
        if let Some(id) = tokens.entry(e).and_then(|x| x.id) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    ids
}

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    let tokens = cx.tokens;
    for info in &tokens.intrinsics {
        if info.kind == BuiltinKind::RegionEntry {
            continue;
        }
        let ids = distinct_ids(tokens, &info.region_entries);
        if ids.len() < 2 {
            continue;
        }
        // Inherited from a source intrinsic that is ambiguous already?
        let inherited = info.sources.iter().any(|&s| {
            tokens.info(s).is_some_and(|si| {
                si.kind != BuiltinKind::RegionEntry && {
                    let mut a = distinct_ids(tokens, &si.region_entries);
                    let mut b = ids.clone();
                    a.sort_unstable();
                    b.sort_unstable();
                    a == b
                }
            })
        });
        if inherited {
            continue;
        }
        let Some(call) = cx.func.builtins.get(info.builtin.index()) else {
            continue;
        };
        let token = match info.token.and_then(|v| cx.func.vars.get(v.index())) {
            Some(v) => format!("the token `{}`", v.name),
            None => "the token".to_string(),
        };
        let list = ids
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let first = info
            .region_entries
            .first()
            .and_then(|b| cx.func.builtins.get(b.index()));
        let chosen = match (first, info.region_id) {
            (Some(b), Some(id)) => format!("the region entry at {} (id {id})", cx.line(b.span)),
            _ => "the first region entry".to_string(),
        };
        let mut diag = Diagnostic::new(
            &RULE,
            call.span,
            format!(
                "ambiguous region id: {token} of this {} comes from region entries with different ids ({list}); the compiler reports nothing and takes the first it finds, {chosen}, for every path",
                kind_words(info.kind)
            ),
        );
        for (k, &e) in info.region_entries.iter().enumerate() {
            let Some(b) = cx.func.builtins.get(e.index()) else {
                continue;
            };
            let id = tokens
                .entry(e)
                .and_then(|x| x.id)
                .map(|i| format!("region entry with id {i}"))
                .unwrap_or_else(|| "region entry with a non-constant id".to_string());
            let note = if k == 0 {
                format!("{id} (the compiler uses this one)")
            } else {
                id
            };
            diag = diag.with_related(b.span, note);
        }
        out.push(diag.with_help(
            "Give every entry of one region the same id, or keep the tokens of different regions in different variables.",
        ));
    }
}
