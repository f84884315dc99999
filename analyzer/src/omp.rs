//! OpenMP directives as data: the directive name and its clauses, with byte
//! ranges into the directive's text.
//!
//! [`parse_directive`] takes one directive exactly as it is written in the
//! source file (from its first character to its end, continuation lines
//! included) and returns its name words (`["parallel", "for"]`,
//! `["end", "parallel", "do"]`, ...) and its clauses. The clauses the loop
//! analyses read are modelled: the data-sharing attribute clauses
//! (`private`, `firstprivate`, `lastprivate`, `shared`, `linear`, and
//! `default`), `reduction`, and the loop-shaping ones (`collapse`,
//! `schedule`, `ordered`, `nowait`, `num_threads`, `if`). Every other clause
//! is [`ClauseKind::Other`] with its parenthesised argument skipped.
//!
//! What it reads:
//! * C: `#pragma omp ...` (blanks allowed around `pragma`), or the text after
//!   `#pragma` (from `omp`); `\` line splices (LF or CRLF) are removed as the
//!   preprocessor removes them; `/* */` and `//` comments count as a blank.
//! * Fortran: `!$omp` sentinels (anywhere on the first line in free form),
//!   `c$omp` and `*$omp` in column 1 (fixed form, where columns 73 and on
//!   are ignored), any case. A free-form continuation is a line ending in
//!   `&` (before any `!` comment) followed by a sentinel line, optionally
//!   with `&` after the sentinel; a fixed-form continuation has a character
//!   other than blank or `0` right after its column-1 sentinel (column 6).
//!   Blank and comment lines between continuation lines are skipped, and so
//!   is a sentinel line whose first non-blank after the sentinel is `!`.
//!   Keywords are case-insensitive and words are lower-cased; in directive
//!   names the blanks between keywords are optional (`enddo`, `paralleldo`).
//!
//! What it does not do: it decides nothing about sharing. Which variables
//! end up private, shared or reduced (implicit rules, loop indices,
//! `default(none)` checks, which clause a directive allows) is the
//! dependence analysis's business; this module only says what the directive
//! wrote. It does not evaluate expressions (a chunk size, a `num_threads`
//! or `if` argument, a linear step are kept as text; `collapse` is read
//! only when its argument is an integer literal) and does not expand macros.
//!
//! The model follows OpenMP 5.2.
//! * Directive and clause syntax (sections 3.1 and 3.2): a directive is its
//!   name followed by clauses separated by blanks and optional commas; a
//!   clause name may take a parenthesised argument, and lists inside it are
//!   comma-separated; array sections (3.2.5) are kept as text.
//! * Data-sharing attribute clauses (section 5.4): `private`,
//!   `firstprivate`, `lastprivate` (an optional `conditional:` modifier is
//!   accepted and dropped), `shared` and `linear` (a list, then optionally
//!   `:` and a step; the 5.2 form `: step(s), val` and the older
//!   `val(x)`/`ref(x)`/`uval(x)` list modifiers are accepted, the modifiers
//!   dropped) name list items: variables, C array sections `a[lo:len]`,
//!   Fortran array sections `a(1:n)`, members, Fortran common blocks
//!   `/blk/`. `default(shared|none|private|firstprivate)` gives the rule for
//!   the variables no clause names.
//! * Reduction clauses (section 5.5): `reduction([modifier,] identifier :
//!   list)`, where the modifier (`inscan`, `task`, `default`) is accepted and
//!   dropped, and the identifier is one of the base language's operators or
//!   intrinsic procedures (C: `+ * - & | ^ && || min max`; Fortran: `+ * -
//!   .and. .or. .eqv. .neqv. max min iand ior ieor`) or else the name of a
//!   user-defined reduction.
//!
//! Nothing here panics or does I/O. What cannot be read becomes a
//! [`Problem`] (a byte range and a message) and parsing goes on after it.

use std::ops::Range;

#[cfg(test)]
mod tests;

/// The base language of a directive: decides the syntax of the sentinel and
/// continuations, and whether names compare with case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OmpLang {
    C,
    Fortran,
}

impl From<crate::ir::Lang> for OmpLang {
    fn from(l: crate::ir::Lang) -> OmpLang {
        match l {
            crate::ir::Lang::C => OmpLang::C,
            crate::ir::Lang::Fortran => OmpLang::Fortran,
        }
    }
}

impl OmpLang {
    /// Whether two names denote the same variable: exact in C, ASCII
    /// case-insensitive in Fortran.
    pub fn same_name(self, a: &str, b: &str) -> bool {
        match self {
            OmpLang::C => a == b,
            OmpLang::Fortran => a.eq_ignore_ascii_case(b),
        }
    }
}

/// One parsed directive. Every range is a byte range into the text given to
/// [`parse_directive`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    pub lang: OmpLang,
    /// The directive name, one word per keyword: `["parallel", "for"]`,
    /// `["parallel", "do", "simd"]`, `["end", "parallel", "do"]`. Lower case
    /// in Fortran; as written in C (where valid names are lower case).
    pub words: Vec<String>,
    /// The range of the name words (empty when there is none).
    pub name_range: Range<usize>,
    /// The text inside the parentheses after a name that takes one:
    /// `critical(name)`, `flush(list)`, `threadprivate(list)`,
    /// `declare reduction(...)`, ...
    pub argument: Option<Range<usize>>,
    pub clauses: Vec<Clause>,
    /// What could not be read (unknown directive or clause names, malformed
    /// arguments, unbalanced parentheses, broken continuations).
    pub problems: Vec<Problem>,
}

/// Something in the directive that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub range: Range<usize>,
    pub message: String,
}

/// One clause: its kind, its range (name to closing parenthesis) and the
/// list items it names (data-sharing and reduction clauses only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clause {
    pub kind: ClauseKind,
    pub range: Range<usize>,
    pub vars: Vec<ClauseVar>,
}

/// One list item of a clause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClauseVar {
    /// The name as written (blanks removed): `sum`, `SUM`, `s.x`, `p->n`,
    /// `t%a`, `/blk/` (a Fortran common block).
    pub name: String,
    /// The range of the name (not of the section).
    pub range: Range<usize>,
    /// An array section after the name, as written: `[:n]`, `[0:n][1:m]`
    /// in C, `(1:n)` in Fortran.
    pub section: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClauseKind {
    Private,
    Firstprivate,
    Lastprivate,
    Shared,
    Reduction(ReductionOp),
    /// `step: None` is the default step, 1.
    Linear {
        step: Option<String>,
    },
    /// `None` when the argument is not an integer literal.
    Collapse(Option<u32>),
    Default(DefaultKind),
    /// `kind` in lower case in Fortran; modifiers (`monotonic:`, ...)
    /// dropped.
    Schedule {
        kind: String,
        chunk: Option<String>,
    },
    NumThreads(String),
    /// `ordered` or `ordered(n)` (the count is not kept).
    Ordered,
    Nowait,
    /// The condition, without a directive-name modifier (`parallel:`).
    If(String),
    /// Any other clause, by name (lower case in Fortran).
    Other(String),
}

impl ClauseKind {
    /// Private, firstprivate, lastprivate, shared, linear or reduction: the
    /// clauses that give the variables they name a data-sharing attribute.
    pub fn is_data_sharing(&self) -> bool {
        matches!(
            self,
            ClauseKind::Private
                | ClauseKind::Firstprivate
                | ClauseKind::Lastprivate
                | ClauseKind::Shared
                | ClauseKind::Reduction(_)
                | ClauseKind::Linear { .. }
        )
    }
}

/// A reduction identifier.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReductionOp {
    Add,
    Mul,
    Sub,
    /// C `&`, Fortran `iand`.
    And,
    /// C `|`, Fortran `ior`.
    Or,
    /// C `^`, Fortran `ieor`.
    Xor,
    /// C `&&`, Fortran `.and.`.
    LogAnd,
    /// C `||`, Fortran `.or.`.
    LogOr,
    /// Fortran `.eqv.`.
    Eqv,
    /// Fortran `.neqv.`.
    Neqv,
    Min,
    Max,
    /// A user-defined reduction (`declare reduction`), as written (empty when
    /// the clause has no identifier, with a problem).
    User(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DefaultKind {
    None,
    Shared,
    Private,
    Firstprivate,
}

impl Directive {
    /// `for` / `do` (C / Fortran), with or without `parallel` before and
    /// `simd` after: the worksharing-loop constructs.
    #[cfg(test)]
    pub fn is_worksharing_loop(&self) -> bool {
        let w: Vec<&str> = self.words.iter().map(String::as_str).collect();
        let rest = match w.as_slice() {
            ["parallel", rest @ ..] => rest,
            rest => rest,
        };
        let lw = match self.lang {
            OmpLang::C => "for",
            OmpLang::Fortran => "do",
        };
        match rest {
            [l] | [l, "simd"] => *l == lw,
            _ => false,
        }
    }

    /// How many loops the directive associates: `Some(1)` without a
    /// `collapse` clause, `Some(n)` for `collapse(n)`, `None` when the
    /// argument is not an integer literal (a macro, an expression).
    pub fn collapse(&self) -> Option<u32> {
        self.clauses
            .iter()
            .find_map(|c| match c.kind {
                ClauseKind::Collapse(n) => Some(n),
                _ => None,
            })
            .unwrap_or(Some(1))
    }

    /// The `default` clause's kind, if there is one (the last one).
    pub fn default_kind(&self) -> Option<DefaultKind> {
        self.clauses.iter().rev().find_map(|c| match c.kind {
            ClauseKind::Default(k) => Some(k),
            _ => None,
        })
    }

    /// The data-sharing and reduction clauses naming `name` (exact in C,
    /// case-insensitive in Fortran), with the list item. Usually one; a
    /// variable may be both `firstprivate` and `lastprivate`, and an invalid
    /// directive may name it more often.
    pub fn clauses_for<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = (&'a Clause, &'a ClauseVar)> + 'a {
        let lang = self.lang;
        self.clauses
            .iter()
            .filter(|c| c.kind.is_data_sharing())
            .flat_map(move |c| {
                c.vars
                    .iter()
                    .filter(move |v| lang.same_name(&v.name, name))
                    .map(move |v| (c, v))
            })
    }
}

/// Parses one OpenMP directive. `None` when the text is not an OpenMP
/// directive at all (no `#pragma omp` in C, no `!$omp`/`c$omp`/`*$omp`
/// sentinel in Fortran); anything wrong after that is a [`Problem`].
pub fn parse_directive(text: &str, lang: OmpLang) -> Option<Directive> {
    let (mut p, body) = Parser::new(text, lang)?;
    Some(p.directive(body))
}

/// The name words of the directive in `text` ([`Directive::words`] of
/// [`parse_directive`]) without reading its clauses.
pub fn directive_words(text: &str, lang: OmpLang) -> Option<Vec<String>> {
    let (mut p, body) = Parser::new(text, lang)?;
    Some(p.name(body).words)
}

// ---------------------------------------------------------------------------
// Logical text: the directive's characters with splices, sentinels,
// continuation marks and comments removed, each with its original range.

#[derive(Clone, Copy, Debug)]
struct Lc {
    ch: char,
    start: usize,
    end: usize,
}

fn push_str(out: &mut Vec<Lc>, s: &str, offset: usize) {
    out.reserve(s.len());
    for (k, ch) in s.char_indices() {
        out.push(Lc {
            ch,
            start: offset + k,
            end: offset + k + ch.len_utf8(),
        });
    }
}

/// A blank standing for a comment or a line join.
fn blank(start: usize, end: usize) -> Lc {
    Lc {
        ch: ' ',
        start,
        end,
    }
}

/// C: removes `\`-newline splices (blanks allowed before the newline),
/// replaces comments by a blank, and stops at the first unspliced newline.
fn clean_c(text: &str, problems: &mut Vec<Problem>) -> Vec<Lc> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut quote: Option<char> = None;
    while let Some(ch) = text.get(i..).and_then(|r| r.chars().next()) {
        let rest = &text[i..];
        if ch == '\\' {
            let after = rest[1..].trim_start_matches([' ', '\t']);
            let nl = if after.starts_with("\r\n") {
                Some(2)
            } else if after.starts_with('\n') {
                Some(1)
            } else {
                None
            };
            if let Some(nl) = nl {
                i = text.len() - after.len() + nl;
                continue;
            }
            if after.is_empty() {
                break;
            }
        }
        if ch == '\n' || rest.starts_with("\r\n") {
            let tail = rest.trim_start();
            if !tail.is_empty() {
                let start = text.len() - tail.len();
                problems.push(Problem {
                    range: start..text.trim_end().len().max(start),
                    message:
                        "text after the end of the directive (the line is not continued with `\\`)"
                            .into(),
                });
            }
            break;
        }
        if let Some(q) = quote {
            if ch == '\\' {
                // an escape: keep the next character with it
                let n = rest[1..]
                    .chars()
                    .next()
                    .filter(|c| *c != '\n' && *c != '\r');
                let len = 1 + n.map_or(0, char::len_utf8);
                push_str(&mut out, &rest[..len], i);
                i += len;
                continue;
            }
            if ch == q {
                quote = None;
            }
        } else if let Some(body) = rest.strip_prefix("/*") {
            let end = match body.find("*/") {
                Some(k) => i + 2 + k + 2,
                None => {
                    problems.push(Problem {
                        range: i..text.len(),
                        message: "unterminated comment".into(),
                    });
                    text.len()
                }
            };
            out.push(blank(i, end));
            i = end;
            continue;
        } else if rest.starts_with("//") {
            // to the end of the line, splices included
            let mut end = text.len();
            let mut from = i;
            while let Some(k) = text[from..].find('\n') {
                let nl = from + k;
                let before = text[..nl].trim_end_matches(['\r', ' ', '\t']);
                if before.ends_with('\\') {
                    from = nl + 1;
                } else {
                    end = if text[..nl].ends_with('\r') {
                        nl - 1
                    } else {
                        nl
                    };
                    break;
                }
            }
            out.push(blank(i, end));
            i = end;
            continue;
        } else if ch == '"' || ch == '\'' {
            quote = Some(ch);
        }
        out.push(Lc {
            ch,
            start: i,
            end: i + ch.len_utf8(),
        });
        i += ch.len_utf8();
    }
    out
}

/// C: the index after `#pragma omp` / `omp`, or `None` when the text is not
/// an OpenMP pragma.
fn c_prefix(lc: &[Lc]) -> Option<usize> {
    let ws = |mut i: usize| {
        while lc.get(i).is_some_and(|c| c.ch.is_whitespace()) {
            i += 1;
        }
        i
    };
    let word = |i: usize| {
        let mut j = i;
        while lc.get(j).is_some_and(|c| is_ident_char(c.ch)) {
            j += 1;
        }
        lc[i..j].iter().map(|c| c.ch).collect::<String>()
    };
    let mut i = ws(0);
    if lc.get(i).is_some_and(|c| c.ch == '#') {
        i = ws(i + 1);
        if word(i) != "pragma" {
            return None;
        }
        i += "pragma".len();
        let j = ws(i);
        if j == i {
            return None;
        }
        i = j;
    }
    if word(i) != "omp" {
        return None;
    }
    Some(i + 3)
}

/// Fortran: the sentinel of a line: (byte end of the sentinel, whether it is
/// in column 1, whether it is a fixed-form-only sentinel).
pub(crate) fn sentinel(line: &str) -> Option<(usize, bool, bool)> {
    let is = |s: &str, p: &str| s.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
    if is(line, "c$omp") || is(line, "*$omp") {
        return Some((5, true, true));
    }
    let t = line.trim_start_matches([' ', '\t']);
    is(t, "!$omp").then(|| (line.len() - t.len() + 5, t.len() == line.len(), false))
}

/// Fortran: `content` without a trailing comment (a `!` outside a
/// character literal starts one).
pub(crate) fn fortran_code(content: &str) -> &str {
    let mut quote = None;
    for (k, ch) in content.char_indices() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => {}
            None if ch == '\'' || ch == '"' => quote = Some(ch),
            None if ch == '!' => return &content[..k],
            None => {}
        }
    }
    content
}

/// Fortran: joins the directive's lines. `None` when the first line has no
/// OpenMP sentinel.
fn clean_fortran(text: &str, problems: &mut Vec<Problem>) -> Option<Vec<Lc>> {
    let mut out = Vec::new();
    let mut pending: Option<usize> = None; // byte offset of a trailing `&`
    let mut first = true;
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let line_off = offset;
        offset += raw.len();
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let content_start;
        let fixed;
        match sentinel(line) {
            Some((end, col1, fixed_only)) if first => {
                let after = line[end..].chars().next();
                content_start = match after {
                    Some('0') if col1 => end + 1,
                    Some(c) if is_ident_char(c) => return None,
                    _ => end,
                };
                fixed = fixed_only;
                first = false;
            }
            Some((end, _, _)) if line[end..].trim_start().starts_with('!') => {
                continue; // `!` first after the sentinel: the line is ignored
            }
            Some((end, col1, fixed_only)) => {
                let after = &line[end..];
                let c = after.chars().next();
                let marker =
                    c == Some('&') || (col1 && c.is_some_and(|c| !c.is_whitespace() && c != '0'));
                if marker {
                    content_start = end + c.map_or(0, char::len_utf8);
                } else if pending.is_some() {
                    let t = after.trim_start_matches([' ', '\t']);
                    content_start = if t.starts_with('&') {
                        line.len() - t.len() + 1
                    } else {
                        end
                    };
                } else {
                    problems.push(Problem {
                        range: line_off..line_off + line.trim_end().len(),
                        message: "a new directive: the previous line does not end with `&`".into(),
                    });
                    pending = None;
                    break;
                }
                fixed = fixed_only;
                pending = None;
            }
            None if first => return None,
            None => {
                let t = line.trim_start();
                if t.is_empty() || t.starts_with('!') {
                    continue; // blank or comment line
                }
                let start = line_off + line.len() - t.len();
                problems.push(Problem {
                    range: start..line_off + line.trim_end().len(),
                    message: if pending.is_some() {
                        "expected a continuation line starting with `!$omp`".into()
                    } else {
                        "text after the end of the directive".into()
                    },
                });
                pending = None;
                break;
            }
        }
        // columns 73 and on are not part of a fixed-form line
        let limit = if fixed {
            line.char_indices().nth(72).map_or(line.len(), |(k, _)| k)
        } else {
            line.len()
        };
        let content = line.get(content_start..limit).unwrap_or("");
        let kept = fortran_code(content).trim_end();
        let abs = line_off + content_start;
        if let Some(body) = kept.strip_suffix('&') {
            push_str(&mut out, body, abs);
            pending = Some(abs + body.len());
        } else {
            push_str(&mut out, kept, abs);
            // the line ends: a blank separates it from a continuation
            let e = line_off + line.len();
            out.push(blank(e, e));
        }
    }
    if first {
        return None; // empty text
    }
    if let Some(amp) = pending {
        problems.push(Problem {
            range: amp..amp + 1,
            message: "`&` continues the directive but no continuation line follows".into(),
        });
    }
    Some(out)
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

// ---------------------------------------------------------------------------
// Directive names.

/// Words a directive name can start with (OpenMP 5.2, plus `master`).
const FIRST_WORDS: &[&str] = &[
    "allocate",
    "allocators",
    "assume",
    "assumes",
    "atomic",
    "barrier",
    "begin",
    "cancel",
    "cancellation",
    "critical",
    "declare",
    "depobj",
    "dispatch",
    "distribute",
    "do",
    "end",
    "error",
    "flush",
    "for",
    "groupprivate",
    "interop",
    "loop",
    "masked",
    "master",
    "metadirective",
    "nothing",
    "ordered",
    "parallel",
    "requires",
    "scan",
    "scope",
    "section",
    "sections",
    "simd",
    "single",
    "target",
    "task",
    "taskgroup",
    "taskloop",
    "taskwait",
    "taskyield",
    "teams",
    "threadprivate",
    "tile",
    "unroll",
    "workshare",
];

/// Words that only continue a name.
const NEXT_WORDS: &[&str] = &[
    "data",
    "enter",
    "exit",
    "induction",
    "mapper",
    "point",
    "reduction",
    "update",
    "variant",
];

fn is_name_word(w: &str) -> bool {
    FIRST_WORDS.contains(&w) || NEXT_WORDS.contains(&w)
}

/// Whether `next` continues a directive name ending in `prev`.
fn continues(prev: &str, next: &str) -> bool {
    match prev {
        "end" => FIRST_WORDS.contains(&next) && next != "end",
        "begin" => matches!(next, "declare" | "metadirective" | "assumes"),
        "declare" => matches!(
            next,
            "simd" | "reduction" | "mapper" | "target" | "variant" | "induction"
        ),
        "cancellation" => next == "point",
        "cancel" | "point" => matches!(next, "parallel" | "for" | "do" | "sections" | "taskgroup"),
        "target" => matches!(
            next,
            "parallel" | "teams" | "simd" | "loop" | "data" | "enter" | "exit" | "update"
        ),
        "enter" | "exit" => next == "data",
        "parallel" => matches!(
            next,
            "for" | "do" | "sections" | "workshare" | "loop" | "masked" | "master"
        ),
        "teams" => matches!(next, "distribute" | "loop"),
        "distribute" => matches!(next, "parallel" | "simd"),
        "for" | "do" => next == "simd",
        "masked" | "master" => next == "taskloop",
        "taskloop" => next == "simd",
        _ => false,
    }
}

/// Whether a directive with this name takes a parenthesised argument.
fn takes_argument(words: &[String]) -> bool {
    let n = words.len();
    let last = words.last().map_or("", String::as_str);
    let declared = n >= 2 && words[n - 2] == "declare";
    matches!(
        last,
        "critical" | "flush" | "threadprivate" | "allocate" | "depobj" | "groupprivate"
    ) || (declared
        && matches!(
            last,
            "simd" | "reduction" | "mapper" | "variant" | "target" | "induction"
        ))
}

/// Fortran: a keyword run written without blanks (`enddo`, `paralleldo`),
/// split into the fewest name words; `None` when it is not one.
fn split_words(w: &str) -> Option<Vec<&str>> {
    const ALL: [&[&str]; 2] = [FIRST_WORDS, NEXT_WORDS];
    let n = w.len();
    // best[k]: fewest words spelling w[..k], with the last word's length
    let mut best: Vec<Option<(usize, usize)>> = vec![None; n + 1];
    best[0] = Some((0, 0));
    for k in 0..n {
        let Some((count, _)) = best[k] else {
            continue;
        };
        for word in ALL.iter().flat_map(|l| l.iter()) {
            if w[k..].starts_with(word) {
                let e = k + word.len();
                if best[e].is_none_or(|(c, _)| c > count + 1) {
                    best[e] = Some((count + 1, word.len()));
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut e = n;
    while e > 0 {
        let (_, len) = best[e]?;
        out.push(&w[e - len..e]);
        e -= len;
    }
    out.reverse();
    (out.len() > 1).then_some(out)
}

// ---------------------------------------------------------------------------
// Clauses.

/// Clause names of OpenMP 5.2 (and a few of 6.0); others are reported.
const KNOWN_CLAUSES: &[&str] = &[
    "absent",
    "acq_rel",
    "acquire",
    "adjust_args",
    "affinity",
    "align",
    "aligned",
    "allocate",
    "allocator",
    "append_args",
    "at",
    "atomic_default_mem_order",
    "bind",
    "capture",
    "collapse",
    "compare",
    "contains",
    "copyin",
    "copyprivate",
    "default",
    "defaultmap",
    "depend",
    "destroy",
    "detach",
    "device",
    "device_type",
    "dist_schedule",
    "doacross",
    "dynamic_allocators",
    "enter",
    "exclusive",
    "fail",
    "filter",
    "final",
    "firstprivate",
    "from",
    "full",
    "grainsize",
    "has_device_addr",
    "hint",
    "holds",
    "if",
    "in_reduction",
    "inbranch",
    "inclusive",
    "indirect",
    "init",
    "interop",
    "is_device_ptr",
    "lastprivate",
    "linear",
    "link",
    "map",
    "match",
    "mergeable",
    "message",
    "no_openmp",
    "no_openmp_routines",
    "no_parallelism",
    "nocontext",
    "nogroup",
    "nontemporal",
    "notinbranch",
    "novariants",
    "nowait",
    "num_tasks",
    "num_teams",
    "num_threads",
    "order",
    "ordered",
    "otherwise",
    "partial",
    "priority",
    "private",
    "proc_bind",
    "read",
    "reduction",
    "relaxed",
    "release",
    "reverse_offload",
    "safelen",
    "schedule",
    "seq_cst",
    "severity",
    "shared",
    "simd",
    "simdlen",
    "sizes",
    "task_reduction",
    "thread_limit",
    "threads",
    "to",
    "unified_address",
    "unified_shared_memory",
    "uniform",
    "untied",
    "update",
    "use",
    "use_device_addr",
    "use_device_ptr",
    "uses_allocators",
    "weak",
    "when",
    "write",
];

const SCHEDULE_KINDS: &[&str] = &["static", "dynamic", "guided", "auto", "runtime"];

/// Half-open range of logical characters.
type Seg = (usize, usize);

struct Parser {
    lc: Vec<Lc>,
    lang: OmpLang,
    problems: Vec<Problem>,
    /// The text's length (where an empty range at the end points).
    end: usize,
}

/// What [`Parser::name`] reads: the directive name and what follows it.
struct Name {
    words: Vec<String>,
    name_range: Range<usize>,
    argument: Option<Range<usize>>,
    /// Where the clauses start.
    next: usize,
}

impl Parser {
    /// The parser of the directive `text` and where its name starts.
    fn new(text: &str, lang: OmpLang) -> Option<(Parser, usize)> {
        let mut problems = Vec::new();
        let (lc, body) = match lang {
            OmpLang::C => {
                let lc = clean_c(text, &mut problems);
                let body = c_prefix(&lc)?;
                (lc, body)
            }
            OmpLang::Fortran => (clean_fortran(text, &mut problems)?, 0),
        };
        let p = Parser {
            lc,
            lang,
            problems,
            end: text.len(),
        };
        Some((p, body))
    }

    fn ch(&self, i: usize) -> Option<char> {
        self.lc.get(i).map(|c| c.ch)
    }

    fn at(&self, i: usize, ch: char) -> bool {
        self.ch(i) == Some(ch)
    }

    /// The byte range of logical characters `i..j`.
    fn range(&self, (i, j): Seg) -> Range<usize> {
        if i < j && j <= self.lc.len() {
            self.lc[i].start..self.lc[j - 1].end
        } else {
            let p = self.lc.get(i).map_or(self.end, |c| c.start);
            p..p
        }
    }

    fn string(&self, (i, j): Seg) -> String {
        self.lc
            .get(i..j.min(self.lc.len()))
            .unwrap_or(&[])
            .iter()
            .map(|c| c.ch)
            .collect()
    }

    /// The string, lower-cased in Fortran (keywords).
    fn keyword(&self, s: Seg) -> String {
        let w = self.string(s);
        match self.lang {
            OmpLang::C => w,
            OmpLang::Fortran => w.to_ascii_lowercase(),
        }
    }

    fn problem(&mut self, s: Seg, message: impl Into<String>) {
        let range = self.range(s);
        self.problems.push(Problem {
            range,
            message: message.into(),
        });
    }

    fn skip_ws(&self, mut i: usize) -> usize {
        while self.ch(i).is_some_and(char::is_whitespace) {
            i += 1;
        }
        i
    }

    fn trim(&self, (mut i, mut j): Seg) -> Seg {
        while i < j && self.ch(i).is_some_and(char::is_whitespace) {
            i += 1;
        }
        while j > i && self.ch(j - 1).is_some_and(char::is_whitespace) {
            j -= 1;
        }
        (i, j)
    }

    /// The end of an identifier starting at `i`.
    fn ident(&self, i: usize) -> Option<usize> {
        if !self.ch(i).is_some_and(is_ident_start) {
            return None;
        }
        let mut j = i + 1;
        while self.ch(j).is_some_and(is_ident_char) {
            j += 1;
        }
        Some(j)
    }

    /// The index of the bracket closing the one at `i` (`(` or `[`, either
    /// closer counts), skipping character literals; `None` if unclosed.
    fn close(&self, i: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut quote = None;
        for k in i..self.lc.len() {
            let ch = self.lc[k].ch;
            match quote {
                Some(q) if ch == q => quote = None,
                Some(_) => {}
                None => match ch {
                    '"' | '\'' => quote = Some(ch),
                    '(' | '[' => depth += 1,
                    ')' | ']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return Some(k);
                        }
                    }
                    _ => {}
                },
            }
        }
        None
    }

    /// Positions of `sep` outside brackets and character literals in `s`.
    fn top_level(&self, (i, j): Seg, sep: char) -> Vec<usize> {
        let mut out = Vec::new();
        let mut depth = 0usize;
        let mut quote = None;
        for k in i..j.min(self.lc.len()) {
            let ch = self.lc[k].ch;
            match quote {
                Some(q) if ch == q => quote = None,
                Some(_) => {}
                None => match ch {
                    '"' | '\'' => quote = Some(ch),
                    '(' | '[' => depth += 1,
                    ')' | ']' => depth = depth.saturating_sub(1),
                    c if c == sep && depth == 0 => out.push(k),
                    _ => {}
                },
            }
        }
        out
    }

    /// `s` split at its top-level `sep`s.
    fn split(&self, s: Seg, sep: char) -> Vec<Seg> {
        let mut out = Vec::new();
        let mut from = s.0;
        for k in self.top_level(s, sep) {
            out.push((from, k));
            from = k + 1;
        }
        out.push((from, s.1));
        out
    }

    /// `s` split at its first top-level `sep`.
    fn split_once(&self, s: Seg, sep: char) -> Option<(Seg, Seg)> {
        let k = *self.top_level(s, sep).first()?;
        Some(((s.0, k), (k + 1, s.1)))
    }

    fn directive(&mut self, body: usize) -> Directive {
        let Name {
            words,
            name_range,
            argument,
            next,
        } = self.name(body);
        let clauses = self.clauses(next, &words);
        Directive {
            lang: self.lang,
            words,
            name_range,
            argument,
            clauses,
            problems: std::mem::take(&mut self.problems),
        }
    }

    /// The directive's name words (and argument) from `body` on.
    fn name(&mut self, body: usize) -> Name {
        let mut words: Vec<String> = Vec::new();
        let mut argument = None;
        let name_start = self.skip_ws(body);
        let mut name_end = name_start;
        let mut i = name_start;
        while let Some(j) = self.ident(i) {
            let w = self.keyword((i, j));
            let split = match self.lang {
                OmpLang::Fortran if !is_name_word(&w) => split_words(&w)
                    .filter(|p| p.windows(2).all(|x| continues(x[0], x[1])))
                    .filter(|p| !words.is_empty() || FIRST_WORDS.contains(&p[0])),
                _ => None,
            };
            let pieces: Vec<String> = match split {
                Some(p) => p.into_iter().map(String::from).collect(),
                None => vec![w.clone()],
            };
            let k = self.skip_ws(j);
            let paren = self.at(k, '(');
            let mut taken = words.clone();
            let mut ok = true;
            for p in &pieces {
                if let Some(prev) = taken.last() {
                    ok &= continues(prev, p);
                }
                taken.push(p.clone());
            }
            if !words.is_empty() && (!ok || (paren && !takes_argument(&taken))) {
                break; // a clause
            }
            if words.is_empty() && !FIRST_WORDS.contains(&pieces[0].as_str()) {
                self.problem((i, j), format!("unknown OpenMP directive `{w}`"));
            }
            words = taken;
            name_end = j;
            i = k;
            if paren {
                if takes_argument(&words) {
                    let close = self.close(k);
                    if close.is_none() {
                        self.problem((k, k + 1), "unclosed `(`");
                    }
                    let c = close.unwrap_or(self.lc.len());
                    argument = Some(self.range(self.trim((k + 1, c))));
                    i = (c + 1).min(self.lc.len());
                }
                break;
            }
        }
        if words.is_empty() {
            let e = self.skip_ws(i);
            self.problem((e, e + 1), "expected a directive name");
        } else if words.len() == 1 && words[0] == "end" {
            self.problem(
                (name_start, name_end),
                "expected a directive name after `end`",
            );
        }
        let name_range = self.range((name_start, name_end));
        Name {
            words,
            name_range,
            argument,
            next: i,
        }
    }

    fn clauses(&mut self, mut i: usize, words: &[String]) -> Vec<Clause> {
        let mut out = Vec::new();
        loop {
            i = self.skip_ws(i);
            if self.at(i, ',') {
                i += 1;
                continue;
            }
            if i >= self.lc.len() {
                break;
            }
            match self.ident(i) {
                Some(j) => {
                    let (clause, next) = self.clause(i, j, words);
                    out.extend(clause);
                    i = next;
                }
                None => {
                    // skip to the next blank or comma outside brackets
                    let start = i;
                    while let Some(ch) = self.ch(i) {
                        if ch.is_whitespace() || ch == ',' {
                            break;
                        }
                        i = match ch {
                            '(' | '[' => self.close(i).map_or(self.lc.len(), |c| c + 1),
                            _ => i + 1,
                        };
                    }
                    self.problem((start, i), "expected a clause name");
                }
            }
        }
        out
    }

    /// The clause whose name is `i..j`, and where the next one starts.
    fn clause(&mut self, i: usize, j: usize, words: &[String]) -> (Option<Clause>, usize) {
        let written = self.string((i, j));
        let name = self.keyword((i, j));
        let k = self.skip_ws(j);
        let (args, end) = if self.at(k, '(') {
            match self.close(k) {
                Some(c) => (Some((k + 1, c)), c + 1),
                None => {
                    self.problem((k, k + 1), "unclosed `(`");
                    (Some((k + 1, self.lc.len())), self.lc.len())
                }
            }
        } else {
            (None, j)
        };
        let range = self.range((i, end));
        let needs_args = matches!(
            name.as_str(),
            "private"
                | "firstprivate"
                | "lastprivate"
                | "shared"
                | "reduction"
                | "linear"
                | "collapse"
                | "default"
                | "schedule"
                | "num_threads"
                | "if"
        );
        let Some(args) = args.filter(|_| needs_args) else {
            if needs_args {
                self.problem(
                    (i, j),
                    format!("`{written}` needs a parenthesised argument"),
                );
                return (None, end);
            }
            let kind = match name.as_str() {
                "ordered" => ClauseKind::Ordered,
                "nowait" => ClauseKind::Nowait,
                _ => {
                    if !KNOWN_CLAUSES.contains(&name.as_str()) && !name.starts_with("ompx_") {
                        self.problem((i, j), format!("unknown clause `{written}`"));
                    }
                    ClauseKind::Other(name)
                }
            };
            let clause = Clause {
                kind,
                range,
                vars: Vec::new(),
            };
            return (Some(clause), end);
        };
        let mut vars = Vec::new();
        let kind = match name.as_str() {
            "private" => {
                vars = self.vars(args);
                ClauseKind::Private
            }
            "firstprivate" => {
                vars = self.vars(args);
                ClauseKind::Firstprivate
            }
            "shared" => {
                vars = self.vars(args);
                ClauseKind::Shared
            }
            "lastprivate" => {
                let list = match self.split_once(args, ':') {
                    Some((m, rest)) if self.keyword(self.trim(m)) == "conditional" => rest,
                    _ => args,
                };
                vars = self.vars(list);
                ClauseKind::Lastprivate
            }
            "reduction" => {
                let (op, list) = self.reduction(args);
                vars = list;
                ClauseKind::Reduction(op)
            }
            "linear" => {
                let (step, list) = self.linear(args);
                vars = list;
                ClauseKind::Linear { step }
            }
            "collapse" => {
                let t = self.trim(args);
                let n = int_literal(&self.string(t), self.lang);
                if n == Some(0) {
                    self.problem(t, "`collapse` needs a positive count");
                } else if t.0 == t.1 {
                    self.problem(t, "`collapse` needs a count");
                }
                ClauseKind::Collapse(n)
            }
            "default" => {
                let t = self.trim(args);
                let metadirective = words.iter().any(|w| w == "metadirective");
                match self.keyword(t).as_str() {
                    _ if metadirective => ClauseKind::Other(name),
                    "none" => ClauseKind::Default(DefaultKind::None),
                    "shared" => ClauseKind::Default(DefaultKind::Shared),
                    "private" => ClauseKind::Default(DefaultKind::Private),
                    "firstprivate" => ClauseKind::Default(DefaultKind::Firstprivate),
                    other => {
                        self.problem(t, format!("unknown default kind `{other}`"));
                        ClauseKind::Other(name)
                    }
                }
            }
            "schedule" => self.schedule(args),
            "num_threads" => {
                let t = self.trim(args);
                if t.0 == t.1 {
                    self.problem(t, "`num_threads` needs an expression");
                }
                ClauseKind::NumThreads(self.string(t))
            }
            "if" => {
                let cond = match self.split_once(args, ':') {
                    Some((m, rest)) if self.is_name_modifier(m) => rest,
                    _ => args,
                };
                let t = self.trim(cond);
                if t.0 == t.1 {
                    self.problem(t, "`if` needs a condition");
                }
                ClauseKind::If(self.string(t))
            }
            _ => ClauseKind::Other(name),
        };
        (Some(Clause { kind, range, vars }), end)
    }

    /// `parallel`, `target update`, ...: the directive-name modifier of `if`.
    fn is_name_modifier(&self, s: Seg) -> bool {
        let m = self.keyword(s);
        let mut it = m.split_whitespace().peekable();
        it.peek().is_some()
            && it.all(|w| {
                matches!(
                    w,
                    "parallel"
                        | "simd"
                        | "task"
                        | "taskloop"
                        | "target"
                        | "data"
                        | "enter"
                        | "exit"
                        | "update"
                        | "teams"
                        | "cancel"
                )
            })
    }

    fn reduction(&mut self, args: Seg) -> (ReductionOp, Vec<ClauseVar>) {
        let Some((head, list)) = self.split_once(args, ':') else {
            self.problem(
                self.trim(args),
                "expected `identifier:` before the reduction list",
            );
            return (ReductionOp::User(String::new()), Vec::new());
        };
        let parts = self.split(head, ',');
        let op_seg = self.trim(parts[parts.len() - 1]);
        for &m in &parts[..parts.len() - 1] {
            let m = self.trim(m);
            let w = self.keyword(m);
            if !matches!(w.as_str(), "inscan" | "task" | "default") {
                self.problem(m, format!("unknown reduction modifier `{w}`"));
            }
        }
        let op_text = self.string(op_seg);
        let op = reduction_op(&op_text, self.lang);
        if op.is_none() {
            self.problem(
                op_seg,
                if op_text.is_empty() {
                    "expected a reduction identifier".to_string()
                } else {
                    format!("unknown reduction identifier `{op_text}`")
                },
            );
        }
        let vars = self.vars(list);
        (op.unwrap_or(ReductionOp::User(op_text)), vars)
    }

    fn linear(&mut self, args: Seg) -> (Option<String>, Vec<ClauseVar>) {
        let (list, tail) = match self.split_once(args, ':') {
            Some((l, t)) => (l, Some(t)),
            None => (args, None),
        };
        // OpenMP 4.5 list modifiers: val(x), ref(x), uval(x)
        let mut vars = Vec::new();
        let mut plain = Vec::new();
        for item in self.split(list, ',') {
            let t = self.trim(item);
            let modified = self.ident(t.0).and_then(|e| {
                let w = self.keyword((t.0, e));
                let k = self.skip_ws(e);
                if !matches!(w.as_str(), "val" | "ref" | "uval") || !self.at(k, '(') {
                    return None;
                }
                let c = self.close(k)?;
                (self.skip_ws(c + 1) >= t.1).then_some((k + 1, c))
            });
            match modified {
                Some(inner) => vars.extend(self.vars(inner)),
                None => plain.push(item),
            }
        }
        for item in plain {
            vars.extend(self.vars(item));
        }
        vars.sort_by_key(|v| v.range.start);
        let mut step = None;
        for part in tail.map(|t| self.split(t, ',')).unwrap_or_default() {
            let t = self.trim(part);
            let word = self.ident(t.0).map(|e| (e, self.keyword((t.0, e))));
            match word {
                Some((e, w)) if e == t.1 && matches!(w.as_str(), "val" | "ref" | "uval") => {}
                Some((e, w)) if w == "step" && self.at(self.skip_ws(e), '(') => {
                    let k = self.skip_ws(e);
                    let c = self.close(k).unwrap_or(t.1);
                    step = Some(self.string(self.trim((k + 1, c))));
                }
                _ if t.0 == t.1 => self.problem(t, "expected a linear step"),
                _ => {
                    if step.is_some() {
                        self.problem(t, "a second linear step");
                    }
                    step = Some(self.string(t));
                }
            }
        }
        (step, vars)
    }

    fn schedule(&mut self, args: Seg) -> ClauseKind {
        let rest = match self.split_once(args, ':') {
            Some((mods, rest))
                if self.split(mods, ',').iter().all(|&m| {
                    matches!(
                        self.keyword(self.trim(m)).as_str(),
                        "monotonic" | "nonmonotonic" | "simd"
                    )
                }) =>
            {
                rest
            }
            _ => args,
        };
        let parts = self.split(rest, ',');
        let kind_seg = self.trim(parts[0]);
        let kind = self.keyword(kind_seg);
        if !SCHEDULE_KINDS.contains(&kind.as_str()) {
            self.problem(kind_seg, format!("unknown schedule kind `{kind}`"));
        }
        let chunk = parts.get(1).map(|&c| {
            let t = self.trim(c);
            if t.0 == t.1 {
                self.problem(t, "expected a chunk size");
            }
            self.string(t)
        });
        if let Some(&(s, _)) = parts.get(2) {
            self.problem((s, rest.1), "unexpected text after the chunk size");
        }
        ClauseKind::Schedule { kind, chunk }
    }

    /// A comma-separated list of variables, array sections, members or
    /// (Fortran) common blocks.
    fn vars(&mut self, list: Seg) -> Vec<ClauseVar> {
        let items = self.split(list, ',');
        if items.len() == 1 && self.trim(items[0]).0 == self.trim(items[0]).1 {
            self.problem(self.trim(list), "empty list");
            return Vec::new();
        }
        let mut out = Vec::new();
        for item in items {
            let t = self.trim(item);
            if t.0 == t.1 {
                self.problem(t, "empty list item");
                continue;
            }
            match self.var(t) {
                Some(v) => out.push(v),
                None => self.problem(t, "expected a variable name"),
            }
        }
        out
    }

    fn var(&self, (i, j): Seg) -> Option<ClauseVar> {
        let fortran = self.lang == OmpLang::Fortran;
        if fortran && self.at(i, '/') {
            // a common block: /name/
            let e = self.ident(self.skip_ws(i + 1))?;
            let k = self.skip_ws(e);
            if !self.at(k, '/') || self.skip_ws(k + 1) < j {
                return None;
            }
            let name: String = self.string((i, k + 1)).split_whitespace().collect();
            return Some(ClauseVar {
                name,
                range: self.range((i, k + 1)),
                section: None,
            });
        }
        let mut e = self.ident(i)?;
        let mut name = self.string((i, e));
        // members: s.x, p->x (C), t%x (Fortran)
        loop {
            let k = self.skip_ws(e);
            let sep = match self.ch(k) {
                Some('.') if !fortran => 1,
                Some('-') if !fortran && self.at(k + 1, '>') => 2,
                Some('%') if fortran => 1,
                _ => break,
            };
            let s = self.skip_ws(k + sep);
            let Some(f) = self.ident(s) else { break };
            name.push_str(&self.string((k, k + sep)));
            name.push_str(&self.string((s, f)));
            e = f;
        }
        let open = if fortran { '(' } else { '[' };
        let sec_start = self.skip_ws(e);
        let mut k = sec_start;
        while self.at(k, open) {
            let c = self.close(k)?;
            if c >= j {
                return None;
            }
            k = self.skip_ws(c + 1);
        }
        if k < j {
            return None;
        }
        let section = (k > sec_start).then(|| self.string(self.trim((sec_start, k))));
        Some(ClauseVar {
            name,
            range: self.range((i, e)),
            section,
        })
    }
}

/// A reduction identifier (`None`: not an operator, intrinsic or name).
fn reduction_op(s: &str, lang: OmpLang) -> Option<ReductionOp> {
    use ReductionOp::*;
    let ident = s.starts_with(is_ident_start) && s.chars().all(is_ident_char);
    match lang {
        OmpLang::C => Some(match s {
            "+" => Add,
            "*" => Mul,
            "-" => Sub,
            "&" => And,
            "|" => Or,
            "^" => Xor,
            "&&" => LogAnd,
            "||" => LogOr,
            "min" => Min,
            "max" => Max,
            _ if ident => User(s.to_string()),
            _ => return None,
        }),
        OmpLang::Fortran => {
            let l = s.to_ascii_lowercase();
            Some(match l.as_str() {
                "+" => Add,
                "*" => Mul,
                "-" => Sub,
                ".and." => LogAnd,
                ".or." => LogOr,
                ".eqv." => Eqv,
                ".neqv." => Neqv,
                "max" => Max,
                "min" => Min,
                "iand" => And,
                "ior" => Or,
                "ieor" => Xor,
                _ if ident => User(s.to_string()),
                _ => {
                    // a defined operator: .name.
                    let inner = l.strip_prefix('.')?.strip_suffix('.')?;
                    let ok = !inner.is_empty() && inner.chars().all(|c| c.is_ascii_alphabetic());
                    return ok.then(|| User(s.to_string()));
                }
            })
        }
    }
}

/// An integer literal: C as `csa_grammars::cint::parse_literal` reads it;
/// Fortran decimal with an optional `_kind`.
fn int_literal(s: &str, lang: OmpLang) -> Option<u32> {
    match lang {
        OmpLang::C => u32::try_from(csa_grammars::cint::parse_literal(s)?).ok(),
        OmpLang::Fortran => {
            let digits = match s.split_once('_') {
                Some((d, kind)) if !kind.is_empty() && kind.chars().all(is_ident_char) => d,
                Some(_) => return None,
                None => s,
            };
            if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            digits.parse().ok()
        }
    }
}
