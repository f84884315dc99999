//! Loop pragmas: OpenMP worksharing, ivdep and unroll directives.

use super::consts::{eval_tokens, tokenize};
use super::{node_text, FileCtx};
use crate::frontend::fields::{CFields, F};
use crate::source::Span;
use crate::frontend::flat::FNode as Node;

/// What a `#pragma` line says about the loop that follows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pragma {
    /// `omp parallel for`, `omp for`, `omp parallel for simd` (any clauses).
    Omp(Span),
    /// `omp parallel` (any clauses): a parallel region around the statement
    /// that follows.
    OmpParallel(Span),
    /// `omp sections`, `omp parallel sections` (any clauses): the statement
    /// that follows holds the sections.
    OmpSections(Span),
    /// `omp section`: a section of the enclosing `sections` starts here.
    OmpSection(Span),
    /// `omp atomic` (any clauses) or `omp critical [(name)]`: the
    /// statement that follows runs under that lock.
    OmpSync(Span, crate::ir::OmpLock),
    /// Any other OpenMP directive (`omp task`, `omp barrier`, ...).
    OmpOther(Span),
    /// `ivdep`, `GCC ivdep`.
    Ivdep(Span),
    /// `unroll`, `unroll N`, `unroll(N)`, `GCC unroll N`,
    /// `clang loop unroll(full)`, `clang loop unroll_count(N)`, `nounroll`.
    Unroll(UnrollCount),
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnrollCount {
    /// No count, or `full`: unroll completely when the trip count is known.
    Full,
    /// A constant count.
    Count(i64),
    /// A count we cannot evaluate, or a request that is not full unrolling.
    Unknown,
}

/// The span of a pragma line without its line terminator.
fn pragma_span(n: Node<'_>, file: &FileCtx<'_>) -> Span {
    let text = node_text(n, file.src);
    let trimmed = text.trim_end();
    let start = n.start_byte();
    Span::new(file.pos(start), file.pos(start + trimmed.len()))
}

impl Pragma {
    /// The directive's span when it is an OpenMP directive.
    pub(crate) fn omp_span(&self) -> Option<Span> {
        match self {
            Pragma::Omp(s)
            | Pragma::OmpParallel(s)
            | Pragma::OmpSections(s)
            | Pragma::OmpSection(s)
            | Pragma::OmpSync(s, _)
            | Pragma::OmpOther(s) => Some(*s),
            Pragma::Ivdep(_) | Pragma::Unroll(_) | Pragma::Other => None,
        }
    }
}

/// Splits a pragma's text into words, with parentheses and commas as
/// separate tokens.
fn words(text: &str) -> Vec<String> {
    let text = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c.is_whitespace() || matches!(c, '(' | ')' | ',') {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Classifies a `preproc_call` node that is a `#pragma`.
pub(crate) fn parse(n: Node<'_>, file: &FileCtx<'_>) -> Pragma {
    let arg = n.field(F::Argument).map(|a| file.text(a)).unwrap_or("");
    parse_text(arg, pragma_span(n, file), file, n.start_byte())
}

/// Classifies the text of a pragma (after `#pragma`, or the string of a
/// `_Pragma("...")`); `sp` is the span to report.
pub(crate) fn parse_text(arg: &str, sp: Span, file: &FileCtx<'_>, offset: usize) -> Pragma {
    let w = words(arg);
    let w: Vec<&str> = w.iter().map(|s| s.as_str()).collect();
    match w.as_slice() {
        ["omp", rest @ ..] => {
            let is_for = matches!(rest, ["parallel", "for", ..] | ["for", ..]);
            let directive = crate::omp::parse_directive(arg, crate::omp::OmpLang::C);
            let words = directive
                .as_ref()
                .map(|d| d.words.clone())
                .unwrap_or_default();
            if is_for {
                Pragma::Omp(sp)
            } else if words == ["parallel"] {
                Pragma::OmpParallel(sp)
            } else if words == ["sections"] || words == ["parallel", "sections"] {
                Pragma::OmpSections(sp)
            } else if words == ["section"] {
                Pragma::OmpSection(sp)
            } else if words == ["atomic"] {
                Pragma::OmpSync(sp, crate::ir::OmpLock::Atomic)
            } else if words == ["critical"] {
                let name = directive
                    .as_ref()
                    .and_then(|d| d.argument.clone())
                    .and_then(|r| arg.get(r))
                    .map_or("", str::trim);
                Pragma::OmpSync(sp, crate::ir::OmpLock::Critical(name.into()))
            } else {
                Pragma::OmpOther(sp)
            }
        }
        ["ivdep", ..] | ["GCC", "ivdep", ..] => Pragma::Ivdep(sp),
        ["unroll", rest @ ..] | ["GCC", "unroll", rest @ ..] => {
            Pragma::Unroll(count(rest, file, offset))
        }
        ["nounroll", ..] => Pragma::Unroll(UnrollCount::Count(1)),
        ["clang", "loop", rest @ ..] => {
            // options: unroll(full|enable|disable), unroll_count(N)
            let mut i = 0;
            let mut out = Pragma::Other;
            while i < rest.len() {
                match rest[i] {
                    "unroll" if rest.get(i + 1) == Some(&"(") => {
                        out = Pragma::Unroll(match rest.get(i + 2) {
                            Some(&"full") => UnrollCount::Full,
                            Some(&"disable") => UnrollCount::Count(1),
                            _ => UnrollCount::Unknown,
                        });
                    }
                    "unroll_count" if rest.get(i + 1) == Some(&"(") => {
                        let end = rest[i..]
                            .iter()
                            .position(|t| *t == ")")
                            .map(|p| i + p + 1)
                            .unwrap_or(rest.len());
                        out = Pragma::Unroll(count(&rest[i + 1..end], file, offset));
                    }
                    _ => {}
                }
                i += 1;
            }
            out
        }
        _ => Pragma::Other,
    }
}

/// The count of an unroll pragma from the words after `unroll`.
fn count(rest: &[&str], file: &FileCtx<'_>, offset: usize) -> UnrollCount {
    let inner: &[&str] = match rest {
        [] => return UnrollCount::Full,
        ["(", inner @ .., ")"] => inner,
        other => other,
    };
    if inner.is_empty() || inner == ["full"] {
        return UnrollCount::Full;
    }
    let text = inner.join(" ");
    match eval_tokens(&tokenize(&text), file, offset, 0) {
        Some(n) => UnrollCount::Count(n),
        None => UnrollCount::Unknown,
    }
}

/// The number of iterations of `for (i = c1; i OP c2; i += step)`.
pub(crate) fn trip_count(init: i64, op: &str, bound: i64, step: i64) -> Option<i64> {
    let (a, b, s) = (init as i128, bound as i128, step as i128);
    if s == 0 {
        return None;
    }
    let n: i128 = match op {
        "<" if s > 0 => {
            if a >= b {
                0
            } else {
                (b - a + s - 1) / s
            }
        }
        "<=" if s > 0 => {
            if a > b {
                0
            } else {
                (b - a) / s + 1
            }
        }
        ">" if s < 0 => {
            if a <= b {
                0
            } else {
                (a - b + (-s) - 1) / (-s)
            }
        }
        ">=" if s < 0 => {
            if a < b {
                0
            } else {
                (a - b) / (-s) + 1
            }
        }
        "!=" => {
            let d = b - a;
            if d % s != 0 || (d != 0 && (d > 0) != (s > 0)) {
                return None;
            }
            d / s
        }
        _ => return None,
    };
    i64::try_from(n).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trip_counts() {
        assert_eq!(trip_count(0, "<", 4, 1), Some(4));
        assert_eq!(trip_count(0, "<=", 4, 1), Some(5));
        assert_eq!(trip_count(0, "<", 10, 3), Some(4));
        assert_eq!(trip_count(10, ">", 0, -1), Some(10));
        assert_eq!(trip_count(10, ">=", 0, -2), Some(6));
        assert_eq!(trip_count(0, "!=", 8, 2), Some(4));
        assert_eq!(trip_count(0, "!=", 7, 2), None);
        assert_eq!(trip_count(0, "<", 4, -1), None);
        assert_eq!(trip_count(5, "<", 4, 1), Some(0));
    }

    #[test]
    fn pragma_words() {
        assert_eq!(words("unroll(4)"), vec!["unroll", "(", "4", ")"]);
        assert_eq!(
            words("omp parallel \\\n for private(i)"),
            vec!["omp", "parallel", "for", "private", "(", "i", ")"]
        );
    }
}
