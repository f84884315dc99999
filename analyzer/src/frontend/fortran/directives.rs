//! OpenMP and ivdep directives in Fortran comment lines, found in the
//! text: the loop directive right before a `DO` and the `!$omp parallel`
//! ... `!$omp end parallel` regions of a program unit.
//!
//! A directive is a free-form `!$omp` line and its continuation lines: a
//! line continues the one before when that line ends with `&` (before a
//! trailing `!` comment) or when its own sentinel is followed by `&`
//! (`!$omp& ...`, OpenMP 5.2 §3.1.1). Its name words come from
//! [`omp::parse_directive`], which joins the lines the same way.

use crate::omp::{self, OmpLang};

/// The text after the `!$omp` sentinel of a (whole) line, when the line is
/// a free-form OpenMP directive or continuation line.
fn omp_content(line: &str) -> Option<&str> {
    let (end, _, fixed_only) = omp::sentinel(line)?;
    let rest = &line[end..];
    let ok = !fixed_only
        && (rest.is_empty() || rest.starts_with(|c: char| c.is_whitespace() || c == '&'));
    ok.then_some(rest)
}

/// Whether directive content (after the sentinel) ends with `&`, outside
/// a trailing `!` comment and character literals.
fn ends_with_ampersand(content: &str) -> bool {
    omp::fortran_code(content).trim_end().ends_with('&')
}

/// A byte range of the text, `(start, end)`.
pub(super) type Bytes = (usize, usize);

/// A line of the text: its byte range without the line break.
#[derive(Clone, Copy, Debug)]
struct Line {
    start: usize,
    end: usize,
}

fn line_text(text: &str, l: Line) -> &str {
    text.get(l.start..l.end).unwrap_or("")
}

/// Whether line `next` continues the directive line `prev`.
fn continues(text: &str, prev: Line, next: Line) -> bool {
    let (Some(p), Some(n)) = (
        omp_content(line_text(text, prev)),
        omp_content(line_text(text, next)),
    ) else {
        return false;
    };
    ends_with_ampersand(p) || n.starts_with('&')
}

/// The lines of `text[start..end]`, trailing `\r` and indentation removed.
#[cfg(test)]
fn lines_in(text: &str, start: usize, end: usize) -> impl Iterator<Item = Line> + '_ {
    let mut pos = start;
    std::iter::from_fn(move || {
        if pos >= end || pos >= text.len() {
            return None;
        }
        let stop = text[pos..end.min(text.len())]
            .find('\n')
            .map_or(end.min(text.len()), |k| pos + k);
        let raw = &text[pos..stop];
        let body = raw.trim_end_matches('\r').trim_end();
        let indent = body.len() - body.trim_start().len();
        let l = Line {
            start: pos + indent,
            end: pos + body.len(),
        };
        pos = stop + 1;
        Some(l)
    })
}

/// The name words of the directive in `text[start..end]` (continuation
/// lines included); empty when it does not parse.
fn words(text: &str, start: usize, end: usize) -> Vec<String> {
    text.get(start..end)
        .and_then(|t| omp::directive_words(t, OmpLang::Fortran))
        .unwrap_or_default()
}

/// Directives found in a block of comment lines: `(start, end)` byte
/// ranges of each whole directive (first line to last continuation line).
fn directives_in(text: &str, lines: &[Line]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let first = lines[k];
        if omp_content(line_text(text, first)).is_none() {
            k += 1;
            continue;
        }
        let mut last = first;
        k += 1;
        while k < lines.len() && continues(text, last, lines[k]) {
            last = lines[k];
            k += 1;
        }
        out.push((first.start, last.end));
    }
    out
}

/// The directives right before a `DO` whose line starts at `line_start`
/// (only blank and comment lines in between): the byte range of the
/// nearest OpenMP loop directive (`do`, `parallel do`, with their
/// combined forms, continuation lines included) and of the nearest ivdep
/// directive.
pub(super) fn before_loop(text: &str, line_start: usize) -> (Option<Bytes>, Option<Bytes>) {
    // the comment lines above, nearest first
    let mut above = Vec::new();
    let mut pos = line_start.min(text.len());
    for _ in 0..1000 {
        if pos == 0 {
            break;
        }
        let prev_end = pos - 1;
        let prev_start = text[..prev_end].rfind('\n').map_or(0, |i| i + 1);
        let line = text[prev_start..prev_end].trim_end_matches('\r');
        pos = prev_start;
        let trimmed = line.trim_start();
        if trimmed.trim().is_empty() {
            continue;
        }
        if !trimmed.starts_with('!') {
            break;
        }
        above.push(Line {
            start: prev_start + (line.len() - trimmed.len()),
            end: prev_start + line.trim_end().len(),
        });
    }
    above.reverse();
    let mut omp = None;
    for (s, e) in directives_in(text, &above) {
        let w = words(text, s, e);
        let is_loop = match w.as_slice() {
            [d, ..] if d == "do" => true,
            [p, d, ..] => p == "parallel" && d == "do",
            _ => false,
        };
        if is_loop {
            omp = Some((s, e));
        }
    }
    let ivdep = above
        .iter()
        .rev()
        .find(|l| is_ivdep_directive(line_text(text, **l)))
        .map(|l| (l.start, l.end));
    (omp, ivdep)
}

/// `!DIR$ IVDEP`, `!DEC$ IVDEP`, `!GCC$ ivdep` (comment text, any case).
fn is_ivdep_directive(line: &str) -> bool {
    let starts = |s: &str, p: &str| s.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
    ["!dir$", "!dec$", "!gcc$"].iter().any(|p| {
        starts(line, p) && {
            let w = line[p.len()..].trim_start();
            starts(w, "ivdep") && !w[5..].starts_with(|c: char| c.is_ascii_alphanumeric())
        }
    })
}

/// An `!$omp parallel` region of a program unit, in bytes of the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Region {
    /// The `!$omp parallel` directive, continuation lines included.
    pub directive: (usize, usize),
    /// From the end of the directive to the start of its `!$omp end
    /// parallel` (to the end of the unit when there is none).
    pub body: (usize, usize),
}

/// The OpenMP directives in `text[start..end]`: each one's first line and
/// the continuation lines right after it, as byte ranges.
pub(super) fn omp_directives(text: &str, start: usize, end: usize) -> Vec<(usize, usize)> {
    let end = end.min(text.len());
    let Some(range) = text.get(start..end) else {
        return Vec::new();
    };
    // Only a line holding `$omp` (any case) can be a directive line: the
    // lines of [`lines_in`] found from each `$`.
    let bytes = range.as_bytes();
    let mut lines: Vec<Line> = Vec::new();
    let mut last_start = usize::MAX;
    for i in memchr::memchr_iter(b'$', bytes) {
        if !bytes
            .get(i + 1..i + 4)
            .is_some_and(|w| w.eq_ignore_ascii_case(b"omp"))
        {
            continue;
        }
        let ls = memchr::memrchr(b'\n', &bytes[..i]).map_or(0, |k| k + 1);
        if ls == last_start {
            continue;
        }
        last_start = ls;
        let le = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |k| i + k);
        let body = range[ls..le].trim_end_matches('\r').trim_end();
        let indent = body.len() - body.trim_start().len();
        let l = Line {
            start: start + ls + indent,
            end: start + ls + body.len(),
        };
        if omp_content(line_text(text, l)).is_some() {
            lines.push(l);
        }
    }
    group_continued(text, &lines)
}

/// The directive lines `lines` (in order) grouped with their continuation
/// lines: the range of each directive.
fn group_continued(text: &str, lines: &[Line]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let first = lines[k];
        let mut last = first;
        k += 1;
        while k < lines.len()
            && text[last.end..lines[k].start].trim().is_empty()
            && continues(text, last, lines[k])
        {
            last = lines[k];
            k += 1;
        }
        out.push((first.start, last.end));
    }
    out
}

/// The `!$omp parallel` ... `!$omp end parallel` regions in
/// `text[start..end]`, nested ones included. Combined constructs
/// (`parallel do`, `parallel sections`, ...) are not regions here: their
/// loop directive is the region.
#[cfg(test)]
fn parallel_regions(text: &str, start: usize, end: usize) -> Vec<Region> {
    let ds = omp_directives(text, start, end);
    parallel_regions_of(text, end, &ds, &directive_names(text, &ds))
}

/// The name words of each of `directives` (read once for
/// [`parallel_regions_of`] and [`sync_regions_of`]).
pub(super) fn directive_names(text: &str, directives: &[(usize, usize)]) -> Vec<Vec<String>> {
    directives
        .iter()
        .map(|&(d0, d1)| words(text, d0, d1))
        .collect()
}

/// [`parallel_regions`] from the [`omp_directives`] of a range ending at
/// `end` and their [`directive_names`].
pub(super) fn parallel_regions_of(
    text: &str,
    end: usize,
    directives: &[(usize, usize)],
    names: &[Vec<String>],
) -> Vec<Region> {
    let end = end.min(text.len());
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut out = Vec::new();
    for (&(d0, d1), name) in directives.iter().zip(names) {
        match name.as_slice() {
            [p] if p == "parallel" => open.push((d0, d1)),
            [e, p] if e == "end" && p == "parallel" => {
                if let Some(d) = open.pop() {
                    out.push(Region {
                        directive: d,
                        body: (d.1, d0),
                    });
                }
            }
            _ => {}
        }
    }
    for d in open {
        out.push(Region {
            directive: d,
            body: (d.1, end),
        });
    }
    out
}

/// Code under an OpenMP lock ([`crate::ir::OmpSync`]).
pub(super) struct SyncRegion {
    pub lock: crate::ir::OmpLock,
    pub directive: (usize, usize),
    pub body: (usize, usize),
}

/// The `!$omp atomic` statements and `!$omp critical` constructs among
/// `directives` (the [`omp_directives`] of a range ending at `end`). An
/// `atomic` directive protects up to its `!$omp end atomic` when that is
/// the next directive, else the statement after it (its continuation lines
/// included); a `critical` one up to the matching `!$omp end critical`
/// (to `end` when there is none). `names`: the [`directive_names`] of
/// `directives`.
pub(super) fn sync_regions_of(
    text: &str,
    end: usize,
    directives: &[(usize, usize)],
    names: &[Vec<String>],
) -> Vec<SyncRegion> {
    let end = end.min(text.len());
    let mut out = Vec::new();
    let mut open: Vec<((usize, usize), Box<str>)> = Vec::new();
    for (k, &(d0, d1)) in directives.iter().enumerate() {
        // (the clauses are read for these only)
        let named = |n: &[&str]| names.get(k).is_some_and(|w| w.iter().eq(n.iter()));
        if !(named(&["atomic"]) || named(&["critical"]) || named(&["end", "critical"])) {
            continue;
        }
        let Some(d) = text
            .get(d0..d1)
            .and_then(|t| omp::parse_directive(t, OmpLang::Fortran))
        else {
            continue;
        };
        let name = || -> Box<str> {
            d.argument
                .clone()
                .and_then(|r| text.get(d0 + r.start..d0 + r.end))
                .map_or(String::new(), |n| n.trim().to_ascii_lowercase())
                .into()
        };
        match d.words.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            ["atomic"] => {
                let next_is_end = names.get(k + 1).is_some_and(|w| w == &["end", "atomic"]);
                let body_end = if next_is_end {
                    directives[k + 1].0
                } else {
                    next_statement_end(text, d1, end)
                };
                out.push(SyncRegion {
                    lock: crate::ir::OmpLock::Atomic,
                    directive: (d0, d1),
                    body: (d1, body_end),
                });
            }
            ["critical"] => open.push(((d0, d1), name())),
            ["end", "critical"] => {
                let n = name();
                // the innermost open construct of that name (names nest
                // only when they differ)
                if let Some(i) = open.iter().rposition(|(_, o)| *o == n) {
                    let (dir, lock) = open.remove(i);
                    out.push(SyncRegion {
                        lock: crate::ir::OmpLock::Critical(lock),
                        directive: dir,
                        body: (dir.1, d0),
                    });
                }
            }
            _ => {}
        }
    }
    for (dir, lock) in open {
        out.push(SyncRegion {
            lock: crate::ir::OmpLock::Critical(lock),
            directive: dir,
            body: (dir.1, end),
        });
    }
    out.sort_by_key(|r| r.directive.0);
    out
}

/// The end of the first statement after `from` (blank and comment lines
/// skipped, continuation lines included), at most `end`.
fn next_statement_end(text: &str, from: usize, end: usize) -> usize {
    let mut at = from.min(end);
    // the rest of the directive's own line
    at = text[at..end].find('\n').map_or(end, |k| at + k + 1);
    let mut started = false;
    while at < end {
        let le = text[at..end].find('\n').map_or(end, |k| at + k);
        let line = text[at..le].trim();
        let code = match line.find('!') {
            // (a `!` inside a character literal ends the search early: the
            // statement then looks shorter, never longer)
            Some(k) => line[..k].trim_end(),
            None => line,
        };
        if !code.is_empty() {
            started = true;
            if !code.ends_with('&') {
                return le;
            }
        } else if started && line.is_empty() {
            return le;
        }
        at = le + 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snippet(text: &str, r: (usize, usize)) -> &str {
        &text[r.0..r.1]
    }

    #[test]
    fn locks_cover_their_statement_or_construct() {
        let text = "!$omp atomic\n! why\n  s = s + &\n    x(i)\n  t = 1\n\
                    !$omp atomic capture\n  v = c\n  c = c + 1\n!$omp end atomic\n\
                    !$omp critical (Lock)\n  a = 1\n!$omp critical\n  b = 2\n\
                    !$omp end critical\n!$omp end critical (lock)\n  z = 0\n";
        let ds = omp_directives(text, 0, text.len());
        let rs = sync_regions_of(text, text.len(), &ds, &directive_names(text, &ds));
        let got: Vec<(crate::ir::OmpLock, &str)> = rs
            .iter()
            .map(|r| (r.lock.clone(), snippet(text, r.body).trim()))
            .collect();
        use crate::ir::OmpLock::*;
        assert_eq!(
            got,
            vec![
                (Atomic, "! why\n  s = s + &\n    x(i)"),
                (Atomic, "v = c\n  c = c + 1"),
                (Critical("lock".into()), "a = 1\n!$omp critical\n  b = 2\n!$omp end critical"),
                (Critical("".into()), "b = 2"),
            ]
        );
        // a critical construct left open runs to the end
        let text = "!$omp critical\n  a = 1\n";
        let ds = omp_directives(text, 0, text.len());
        let rs = sync_regions_of(text, text.len(), &ds, &directive_names(text, &ds));
        assert_eq!(snippet(text, rs[0].body).trim(), "a = 1");
    }

    #[test]
    fn a_loop_directive_takes_its_continuation_lines() {
        let text = "x = 1\n!$omp parallel do &\n  !$omp& private(t) ! why\n! note\n  do i = 1, n\n";
        let at = text.find("  do").unwrap();
        let (omp, ivdep) = before_loop(text, at);
        assert_eq!(
            snippet(text, omp.unwrap()),
            "!$omp parallel do &\n  !$omp& private(t) ! why"
        );
        assert!(ivdep.is_none());
        // `&` on the continuation line alone also continues
        let text = "!$omp do\n!$omp& private(t)\ndo i = 1, n\n";
        let (omp, _) = before_loop(text, text.find("do i").unwrap());
        assert_eq!(snippet(text, omp.unwrap()), "!$omp do\n!$omp& private(t)");
    }

    #[test]
    fn a_non_loop_directive_is_not_the_loop_s() {
        let text = "!$omp parallel\n!$dir$ ivdep\ndo i = 1, n\n";
        let (omp, _) = before_loop(text, text.find("do i").unwrap());
        assert!(omp.is_none());
        let text = "!$omp barrier\n!DIR$ IVDEP\ndo i = 1, n\n";
        let (omp, ivdep) = before_loop(text, text.find("do i").unwrap());
        assert!(omp.is_none());
        assert_eq!(snippet(text, ivdep.unwrap()), "!DIR$ IVDEP");
    }

    #[test]
    fn parallel_regions_pair_with_their_end_and_nest() {
        let text = "!$OMP PARALLEL &\n!$OMP& PRIVATE(t)\n!$omp do\ndo\nend do\n!$omp parallel\n!$omp end parallel\n!$omp end parallel\n!$omp parallel do\n";
        let rs = parallel_regions(text, 0, text.len());
        assert_eq!(rs.len(), 2);
        let inner = rs[0];
        assert_eq!(snippet(text, inner.directive), "!$omp parallel");
        let outer = rs[1];
        assert_eq!(
            snippet(text, outer.directive),
            "!$OMP PARALLEL &\n!$OMP& PRIVATE(t)"
        );
        assert!(snippet(text, outer.body).contains("!$omp do"));
        assert!(snippet(text, outer.body).ends_with("!$omp end parallel\n"));
        // without an end, the region runs to the end of the range
        let text = "!$omp parallel\ndo\nend do\n";
        let rs = parallel_regions(text, 0, text.len());
        assert_eq!(rs[0].body, (14, text.len()));
        assert!(parallel_regions("do\nend do\n", 0, 10).is_empty());
    }

    /// [`omp_directives`] as first written: every line of the range tested.
    fn omp_directives_reference(text: &str, start: usize, end: usize) -> Vec<(usize, usize)> {
        let end = end.min(text.len());
        if text.get(start..end).is_none() {
            return Vec::new();
        }
        let lines: Vec<Line> = lines_in(text, start, end)
            .filter(|l| omp_content(line_text(text, *l)).is_some())
            .collect();
        // (the grouping is shared: the scan of lines is what was rewritten)
        group_continued(text, &lines)
    }

    use proptest::prelude::*;

    fn soup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("!$omp".to_string()),
            Just("!$OMP".to_string()),
            Just("c$omp".to_string()),
            Just("$omp".to_string()),
            Just(" parallel".to_string()),
            Just(" do".to_string()),
            Just(" &".to_string()),
            Just("&".to_string()),
            Just("!".to_string()),
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just("  ".to_string()),
            Just("\t".to_string()),
            Just("é".to_string()),
            Just("\u{a0}".to_string()),
            "[a-z0-9 !$&'\n\r]{0,6}",
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn omp_directives_answer_as_before(text in soup(), a in 0usize..64, b in 0usize..200) {
            let (start, end) = (a.min(text.len()), (a + b).min(text.len()));
            prop_assert_eq!(
                omp_directives(&text, start, end),
                omp_directives_reference(&text, start, end)
            );
            prop_assert_eq!(
                omp_directives(&text, 0, text.len()),
                omp_directives_reference(&text, 0, text.len())
            );
        }
    }
}
