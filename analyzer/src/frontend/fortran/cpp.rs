//! C preprocessor macros in Fortran (`.F90` and `.F` files go through cpp
//! before the compiler sees them): `#define`d names used in the code,
//! in the file itself or in a header it `#include`s (PolyBench/Fortran's
//! `POLYBENCH_2D_ARRAY_DECL(x, DATA_TYPE, n, n)`, a `DATA_TYPE` in a
//! declaration). Without expansion such a statement is a syntax error to
//! tree-sitter-fortran.
//!
//! [`expand`] replaces each use of a macro in the code (not in comments or
//! string literals) by its expansion, as cpp does: arguments expanded
//! before they are substituted, the result rescanned with the macro's own
//! name switched off, `#define`/`#undef` taking effect where they stand.
//! The directives of the file itself are read in the branches the
//! preprocessor pass left active; a header's conditionals are evaluated as
//! cpp evaluates them (a name nobody defined is not defined: config
//! `defines` stand for `-D`). Headers are text the caller read
//! ([`Headers`]; the analyzer does no I/O); a missing one defines nothing.
//!
//! Positions: an expansion stays on its line (cpp joins a macro body's
//! continuation lines), and [`ExpansionMap`] takes every offset of the
//! expanded text back to the source: inside an expansion, to the start of
//! the macro use it came from. A use whose arguments run onto a later line
//! is left as written, and so are `#` and `##` in bodies (stringizing and
//! pasting, which Fortran code hardly uses).
//!
//! C files use the same table of macros in [`expand_c`], with C's
//! literals and comments, `#` and `##`, variadic macros and uses over
//! several lines: the analysis reads a C file whose text as written has
//! syntax errors again with its function-like macros expanded.

use crate::frontend::PosMap;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Included files, by the name written in `#include "name"` or
/// `#include <name>` (the binary reads them: see [`Headers::read_beside`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Headers(pub Vec<(String, String)>);

/// A line that includes another file ([`Headers::include_lines`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncludeLine {
    /// Where the line starts.
    pub offset: usize,
    /// The name as written.
    pub name: String,
    /// Written `<name>` (searched in the include directories only).
    pub angled: bool,
    /// A cpp `#include` (else a Fortran `INCLUDE` statement).
    pub cpp: bool,
}

/// What [`Headers::read`] reads a header with: `(name, includer, angled)`.
pub type ReadHeader<'a> = dyn FnMut(&str, Option<&str>, bool) -> Option<String> + 'a;

/// The most headers [`Headers::read`] reads for one file.
const MAX_HEADERS: usize = 64;

impl Headers {
    /// The files `text` `#include`s, and those they include, as
    /// `read(name, includer, angled)` gives them (`includer`: `None` for
    /// `text` itself, else the name of the header that holds the
    /// `#include`; `angled`: written `<name>`); each name once, at most 64.
    /// The caller does the I/O and the search (cpp's: a quoted name
    /// relative to its includer's directory, then the include directories;
    /// an angled one in the include directories).
    pub fn read(
        text: &str,
        read: &mut ReadHeader<'_>,
    ) -> Headers {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut queue: Vec<(String, Option<String>, bool)> = include_names(text)
            .into_iter()
            .map(|(n, angled)| (n, None, angled))
            .collect();
        queue.reverse();
        while let Some((name, includer, angled)) = queue.pop() {
            if out.len() >= MAX_HEADERS || out.iter().any(|(n, _)| *n == name) {
                continue;
            }
            let Some(body) = read(&name, includer.as_deref(), angled) else {
                continue;
            };
            let mut nested: Vec<(String, Option<String>, bool)> = include_names(&body)
                .into_iter()
                .map(|(n, angled)| (n, Some(name.clone()), angled))
                .collect();
            nested.reverse();
            out.push((name, body));
            queue.extend(nested);
        }
        Headers(out)
    }

    /// [`Headers::read`] for the file at `path`, searched as cpp searches
    /// with `-I` for each of `dirs`: `#include "name"` relative to the
    /// directory of the header that includes it, then to `path`'s, then in
    /// `dirs` in order; `#include <name>` in `dirs` only (system headers
    /// are no one's macros here). `read_file` does the reading.
    pub fn read_beside(
        path: &std::path::Path,
        text: &str,
        dirs: &[std::path::PathBuf],
        read_file: &mut dyn FnMut(&std::path::Path) -> Option<String>,
    ) -> Headers {
        let base = path.parent().unwrap_or(std::path::Path::new("."));
        Headers::read(text, &mut |name, includer, angled| {
            let beside = (!angled).then(|| {
                includer
                    .and_then(|i| base.join(i).parent().map(|d| d.join(name)))
                    .into_iter()
                    .chain(std::iter::once(base.join(name)))
            });
            beside
                .into_iter()
                .flatten()
                .chain(dirs.iter().map(|d| d.join(name)))
                .find_map(|p| read_file(&p))
        })
    }

    /// Whether a file's text may include headers whose macros the
    /// analysis uses (a quick look: a file that says `include`; Fortran
    /// code expands them ([`expand`]), C code reads their object-like
    /// macros, `analysis::header_macros`).
    pub fn wanted(text: &str) -> bool {
        text.contains("include")
    }

    /// The lines of `text` that include another file, in order: cpp's
    /// `#include "name"` and `#include <name>` (`cpp`), and Fortran's
    /// `INCLUDE 'name'` statement (any case, either quote; its file is
    /// read by the compiler after cpp has run, so no macro reaches it).
    /// The caller resolves the names (a file linted on its own is read in
    /// the context of one that includes it).
    pub fn include_lines(text: &str) -> Vec<IncludeLine> {
        let mut out = Vec::new();
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            let start = offset;
            offset += line.len();
            let t = line.trim_start();
            if let Some(rest) = t.strip_prefix('#') {
                let (name, rest) = directive_name(rest);
                if name != "include" {
                    continue;
                }
                if let Some((n, angled)) = include_target(rest) {
                    out.push(IncludeLine {
                        offset: start,
                        name: n.to_string(),
                        angled,
                        cpp: true,
                    });
                }
                continue;
            }
            let Some(head) = t.get(..7).filter(|h| h.eq_ignore_ascii_case("include")) else {
                continue;
            };
            let rest = t[head.len()..].trim_start();
            let Some(q) = rest.chars().next().filter(|c| matches!(c, '\'' | '"')) else {
                continue;
            };
            if let Some((n, _)) = rest[1..].split_once(q).filter(|(n, _)| !n.trim().is_empty()) {
                out.push(IncludeLine {
                    offset: start,
                    name: n.trim().to_string(),
                    angled: false,
                    cpp: false,
                });
            }
        }
        out
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_str())
    }
}

/// A macro: its parameters (function-like) and body.
#[derive(Clone, Debug)]
struct Macro {
    params: Option<Vec<String>>,
    body: String,
}

/// The most nested `#include`s followed, and rescans of one expansion.
const MAX_DEPTH: usize = 32;

/// The expanded text may grow to this many times the source (and 1 MB
/// more) before expansion is abandoned (a macro bomb).
const MAX_GROWTH: usize = 4;

/// The longest expansion of one use (and of every text rescanned while it
/// is made) before it is abandoned: `#define A(x) x x` nested 32 deep.
const MAX_USE_EXPANSION: usize = 1 << 20;

impl PosMap for ExpansionMap {
    fn to_original(&self, offset: usize) -> usize {
        ExpansionMap::to_original(self, offset)
    }
}

/// Expanded text and the way back.
pub(crate) struct Expanded {
    pub text: String,
    pub map: ExpansionMap,
}

impl Expanded {
    /// Whether an expansion makes a line longer than `column` bytes that
    /// was not before.
    pub(crate) fn past_column(&self, column: usize) -> bool {
        let b = self.text.as_bytes();
        let mut k = 0;
        let pieces = &self.map.pieces;
        while k < pieces.len() {
            let (es, _, _, _) = pieces[k];
            let start = memchr::memrchr(b'\n', &b[..es]).map_or(0, |p| p + 1);
            let end = memchr::memchr(b'\n', &b[es..]).map_or(b.len(), |p| es + p);
            // every expansion on this line, and how much it grew (one
            // that expands to nothing at the line's end starts at its
            // newline: it is this line's)
            let mut grown = 0isize;
            while k < pieces.len() && pieces[k].0 <= end {
                let (es, ee, os, oe) = pieces[k];
                grown += (ee - es) as isize - (oe - os) as isize;
                k += 1;
            }
            let len = (end - start) as isize;
            if len > column as isize && len - grown <= column as isize {
                return true;
            }
        }
        false
    }
}

/// Offsets of an expanded text to the source's: each expansion's place in
/// both, in order.
#[derive(Clone, Debug, Default)]
pub(crate) struct ExpansionMap {
    /// (expanded start, expanded end, source start, source end).
    pieces: Vec<(usize, usize, usize, usize)>,
}

impl ExpansionMap {
    pub(crate) fn to_original(&self, offset: usize) -> usize {
        let i = self.pieces.partition_point(|p| p.0 <= offset);
        let Some(&(_, ee, os, oe)) = i.checked_sub(1).and_then(|i| self.pieces.get(i)) else {
            return offset;
        };
        if offset < ee {
            // inside an expansion (or at its start): where the use starts
            os
        } else {
            offset - ee + oe
        }
    }
}

/// Where an expansion's macros come from: the file as written (`source`:
/// its `#define`s and `#include`s), its preprocessor pass (`pre`: which
/// directives are active), the headers it includes, the text cpp reads
/// before it (`prelude`) and the command line's `defines`.
#[derive(Clone, Copy)]
pub(crate) struct Macros<'a> {
    pub source: &'a str,
    pub pre: &'a csa_grammars::preproc::Preprocessed,
    pub headers: &'a Headers,
    pub prelude: &'a str,
    pub defines: &'a [String],
}

/// Whether [`expand`] may change anything: some macro is defined (on the
/// command line, by a `#define` or by an `#include`d file, in the file or
/// in its `prelude`).
fn may_expand(m: &Macros<'_>) -> bool {
    let Macros {
        source,
        pre,
        prelude,
        defines,
        ..
    } = *m;
    prelude.contains('#')
        || defines.iter().any(|d| {
        let name = d.split_once('=').map_or(d.as_str(), |(n, _)| n).trim();
        !name.is_empty() && source.contains(name)
    }) || pre.directives().iter().any(|&(s, e)| {
            let (name, _) = directive_name(source.get(s..e).unwrap_or(""));
            matches!(name, "define" | "include")
        })
}

/// `text` (the preprocessor pass's output for Fortran: directives and
/// inactive branches blanked, offsets kept) with the macros that
/// `source`'s directives define expanded; `None` when nothing is. The
/// directives of `prelude` (text cpp reads before the file, as with
/// `-include`: an includer's text before its `#include` of this file, see
/// `AnalysisOptions::prelude`) take effect first, its conditionals
/// evaluated as a header's. In fixed form (`fixed`) comment lines (`C`,
/// `c`, `*` or `!` in column 1) are left as they are.
pub(crate) fn expand(text: &str, macros: &Macros<'_>, fixed: bool) -> Option<Expanded> {
    // (no pass over the code of a file that defines nothing)
    if !may_expand(macros) {
        return None;
    }
    let code = if fixed {
        Code::FixedForm
    } else {
        Code::FreeForm
    };
    expand_in(text, macros, code)
}

/// What [`expand_in`] reads: Fortran (fixed form: comment lines left as
/// they are), or C ([`expand_c`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Code {
    FreeForm,
    FixedForm,
    C,
}

/// [`expand`] and [`expand_c`]: the macro table from `defines`, `prelude`
/// and `headers`, then the file's directives as the code reaches them, its
/// uses expanded.
fn expand_in(text: &str, macros: &Macros<'_>, code: Code) -> Option<Expanded> {
    let Macros {
        source,
        pre,
        headers,
        prelude,
        defines,
    } = *macros;
    let c = code == Code::C;
    let mut table = Table::new(defines, c);
    if !prelude.is_empty() {
        table.header(prelude, headers, 0);
    }
    // the file's own directives, in order, where they take effect
    let mut events: Vec<(usize, String)> = Vec::new();
    for &(s, e) in pre.directives() {
        if pre.is_active(s) {
            if let Some(line) = source.get(s..e) {
                events.push((e, logical_lines(line).join("\n")));
            }
        }
    }
    // (C: no pass over a file that can use no function-like macro)
    if c && !table.macros.values().any(|m| m.params.is_some())
        && !events
            .iter()
            .any(|(_, l)| matches!(directive_name(l).0, "define" | "include"))
    {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut map = ExpansionMap::default();
    let limit = text.len() * MAX_GROWTH + (1 << 20);
    let mut next_event = 0;
    let mut copied = 0;
    let b = text.as_bytes();
    let mut i = 0;
    let mut changed = false;
    // (C: directive lines are kept in the text, and left as written)
    let directive_lines = pre.directives();
    let mut next_directive = 0;
    loop {
        let lex = if c { Lex::C } else { Lex::Fortran };
        let Some((start, name_end)) = next_ident(b, i, lex) else {
            break;
        };
        if c {
            while directive_lines
                .get(next_directive)
                .is_some_and(|&(_, e)| e <= start)
            {
                next_directive += 1;
            }
            if let Some(&(_, e)) = directive_lines.get(next_directive).filter(|d| d.0 <= start) {
                i = e;
                continue;
            }
        }
        while next_event < events.len() && events[next_event].0 <= start {
            table.directive(&events[next_event].1, headers, 0);
            next_event += 1;
        }
        i = name_end;
        if code == Code::FixedForm {
            let line = memchr::memrchr(b'\n', &b[..start]).map_or(0, |k| k + 1);
            if matches!(b[line], b'c' | b'C' | b'*' | b'!') {
                i = line_end(b, start);
                continue;
            }
        }
        let name = &text[start..name_end];
        // (C: function-like macros only; an object-like one is a name to
        // the C front end)
        let Some(m) = table.get(name).filter(|m| !c || m.params.is_some()) else {
            continue;
        };
        let use_ = if c {
            c_invocation(text, name_end, m)
        } else {
            invocation(text, name_end, m)
        };
        let Some((end, args)) = use_ else {
            continue;
        };
        let mut off = HashSet::default();
        let Some(replacement) = table.substitute(name, m, &args, &mut off, 0) else {
            if c {
                // (a macro bomb: this use stays as written, and what it
                // holds)
                i = end;
                continue;
            }
            // (a macro bomb: nothing expanded rather than a guess)
            return None;
        };
        out.push_str(&text[copied..start]);
        let es = out.len();
        if c {
            // on the use's line, and its line ends after it
            out.extend(
                replacement
                    .chars()
                    .map(|c| if c == '\n' || c == '\r' { ' ' } else { c }),
            );
            for _ in memchr::memchr_iter(b'\n', &b[start..end]) {
                out.push('\n');
            }
        } else {
            out.push_str(&replacement);
        }
        map.pieces.push((es, out.len(), start, end));
        copied = end;
        i = end;
        changed = true;
        if out.len() > limit {
            return None;
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(Expanded { text: out, map })
}

/// The macro table while the file is read.
struct Table {
    macros: HashMap<String, Macro>,
    /// C code: C's literals and comments, `#` and `##` in bodies,
    /// variadic macros, uses whose arguments run over lines.
    c: bool,
}

impl Table {
    /// The names the command line (config `defines`) defines.
    fn new(defines: &[String], c: bool) -> Self {
        let mut t = Table {
            macros: HashMap::default(),
            c,
        };
        // the CSA compiler defines it (and so does the preprocessor pass)
        t.macros.insert(
            "__CSA__".to_string(),
            Macro {
                params: None,
                body: "1".to_string(),
            },
        );
        for d in defines {
            let (name, value) = d.split_once('=').unwrap_or((d, "1"));
            t.macros.insert(
                name.trim().to_string(),
                Macro {
                    params: None,
                    body: value.trim().to_string(),
                },
            );
        }
        t
    }

    fn get(&self, name: &str) -> Option<&Macro> {
        self.macros.get(name)
    }

    /// Applies one directive (`#define`, `#undef`, `#include`); others are
    /// the caller's.
    fn directive(&mut self, line: &str, headers: &Headers, depth: usize) {
        let (name, rest) = directive_name(line);
        match name {
            "define" => {
                let rest = rest.trim_start();
                let n = ident_end(rest.as_bytes(), 0);
                if n == 0 {
                    return;
                }
                let (mname, after) = rest.split_at(n);
                let (params, body) = match after.strip_prefix('(') {
                    Some(p) => {
                        let Some(close) = p.find(')') else { return };
                        let params = p[..close]
                            .split(',')
                            .map(|s| s.trim().to_string())
                            .filter(|s| !s.is_empty())
                            .collect();
                        (Some(params), &p[close + 1..])
                    }
                    None => (None, after),
                };
                self.macros.insert(
                    mname.to_string(),
                    Macro {
                        params,
                        body: strip_c_comments(body).trim().to_string(),
                    },
                );
            }
            "undef" => {
                let rest = rest.trim_start();
                let n = ident_end(rest.as_bytes(), 0);
                self.macros.remove(&rest[..n]);
            }
            "include" => {
                let Some((name, _)) = include_target(rest) else {
                    return;
                };
                if depth >= MAX_DEPTH {
                    return;
                }
                if let Some(h) = headers.get(name) {
                    self.header(h, headers, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// Reads a header's directives as cpp does (its code is not the
    /// file's: only its macros count).
    fn header(&mut self, text: &str, headers: &Headers, depth: usize) {
        // each open conditional: (this branch is active, a branch was taken,
        // the enclosing one is active)
        let mut stack: Vec<(bool, bool, bool)> = Vec::new();
        let lines = logical_lines(text);
        for line in lines {
            let t = line.trim_start();
            if !t.starts_with('#') {
                continue;
            }
            let (name, rest) = directive_name(&line);
            let active = stack.last().is_none_or(|s| s.0);
            match name {
                "ifdef" | "ifndef" | "if" => {
                    let truth = active && self.condition(name, rest);
                    stack.push((truth, truth, active));
                }
                "elif" => {
                    let cond = self.condition("if", rest);
                    if let Some(top) = stack.last_mut() {
                        let now = top.2 && !top.1 && cond;
                        top.0 = now;
                        top.1 |= now;
                    }
                }
                "else" => {
                    if let Some(top) = stack.last_mut() {
                        top.0 = top.2 && !top.1;
                        top.1 = true;
                    }
                }
                "endif" => {
                    stack.pop();
                }
                _ if active => self.directive(&line, headers, depth),
                _ => {}
            }
        }
    }

    fn condition(&self, kind: &str, rest: &str) -> bool {
        let defined = |n: &str| self.macros.contains_key(n);
        match kind {
            "ifdef" | "ifndef" => {
                let r = rest.trim_start();
                let n = ident_end(r.as_bytes(), 0);
                defined(&r[..n]) == (kind == "ifdef")
            }
            _ => {
                let value = |id: &str| {
                    Some(
                        self.macros
                            .get(id)
                            .and_then(|m| csa_grammars::cint::literal_i64(m.body.trim()))
                            .unwrap_or(0),
                    )
                };
                let expr = strip_c_comments(rest);
                csa_grammars::preproc::eval_if(&expr, &value, &|n| Some(defined(n)))
                    .unwrap_or(false)
            }
        }
    }

    /// The expansion of a use of `m` with `args`, rescanned with the
    /// names in `off` switched off.
    /// (`name` is switched off while the result is rescanned; in C, not
    /// while the arguments are expanded, which cpp expands as if they stood
    /// outside the use.)
    fn substitute(
        &self,
        name: &str,
        m: &Macro,
        args: &[String],
        off: &mut HashSet<String>,
        depth: usize,
    ) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        let Some(params) = &m.params else {
            return self.rescan_without(name, &m.body, off, depth);
        };
        let body = if self.c {
            self.substitute_c(&m.body, params, args, off, depth)?
        } else {
            // (Fortran, as it always read them: the arguments expanded with
            // `name` already off)
            let fresh = off.insert(name.to_string());
            let expanded = args
                .iter()
                .map(|a| self.rescan(a.trim(), off, depth + 1))
                .collect::<Option<Vec<String>>>();
            if fresh {
                off.remove(name);
            }
            replace_params(&m.body, params, &expanded?)
        };
        self.rescan_without(name, &body, off, depth)
    }

    /// [`Table::rescan`] of `text` with `name` switched off too.
    fn rescan_without(
        &self,
        name: &str,
        text: &str,
        off: &mut HashSet<String>,
        depth: usize,
    ) -> Option<String> {
        let fresh = off.insert(name.to_string());
        let out = self.rescan(text, off, depth + 1);
        if fresh {
            off.remove(name);
        }
        out
    }

    /// `text` with the macros in it expanded (not those in `off`).
    fn rescan(&self, text: &str, off: &mut HashSet<String>, depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        let b = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        let mut i = 0;
        loop {
            let next = if self.c {
                next_ident(b, i, Lex::C)
            } else {
                next_ident(b, i, Lex::FortranText)
            };
            let Some((start, name_end)) = next else { break };
            i = name_end;
            let name = &text[start..name_end];
            if off.contains(name) {
                continue;
            }
            let Some(m) = self.get(name) else { continue };
            let use_ = if self.c {
                c_invocation(text, name_end, m)
            } else {
                invocation(text, name_end, m)
            };
            let Some((end, args)) = use_ else {
                continue;
            };
            let r = self.substitute(name, m, &args, off, depth + 1);
            out.push_str(&text[copied..start]);
            out.push_str(&r?);
            copied = end;
            i = end;
            if out.len() > MAX_USE_EXPANSION {
                // (a macro bomb within one use)
                return None;
            }
        }
        out.push_str(&text[copied..]);
        Some(out)
    }
}

impl Table {
    /// The body of a C function-like macro with `args` put in, as cpp puts
    /// them: a parameter after `#` becomes a string literal of its argument
    /// as written, one beside `##` its argument as written, pasted to the
    /// token on the other side; any other its argument macro-expanded.
    /// `...` (or GNU's `name...`) takes the arguments left, with their
    /// commas, as `__VA_ARGS__` (or `name`); GNU's `, ## __VA_ARGS__` drops
    /// the comma when there are none. The caller rescans the result.
    fn substitute_c(
        &self,
        body: &str,
        params: &[String],
        args: &[String],
        off: &mut HashSet<String>,
        depth: usize,
    ) -> Option<String> {
        // the parameters' names, and the argument each takes
        let mut names: Vec<&str> = params.iter().map(String::as_str).collect();
        let variadic = names.last().is_some_and(|p| p.ends_with("..."));
        if let Some(last) = names.last_mut().filter(|_| variadic) {
            let named = last.trim_end_matches("...").trim();
            *last = if named.is_empty() { "__VA_ARGS__" } else { named };
        }
        let mut given: Vec<String> = args.iter().map(|a| a.trim().to_string()).collect();
        if variadic {
            let fixed = names.len() - 1;
            if given.len() > fixed {
                // (as written between them: `1, 2`)
                given.truncate(fixed);
                given.push(args[fixed..].join(",").trim().to_string());
            }
        }
        let arg = |k: usize| given.get(k).map_or("", String::as_str);
        let tokens = c_tokens(body);
        let param = |t: &CToken<'_>| match t {
            CToken::Ident(n) => names.iter().position(|p| p == n),
            _ => None,
        };
        // the token that is not a blank before `k`, after `k` (and where)
        let prev = |k: usize| tokens[..k].iter().rev().find(|t| **t != CToken::Blank).copied();
        let next_at = |k: usize| {
            (k + 1..tokens.len()).find(|&j| tokens[j] != CToken::Blank)
        };
        let next = |k: usize| next_at(k).map(|j| tokens[j]);
        // pieces of the result; a paste joins the next one to the last
        let mut out: Vec<String> = Vec::new();
        let mut paste = false;
        let mut k = 0;
        while k < tokens.len() {
            let t = tokens[k];
            let piece: String = match t {
                CToken::Blank => {
                    if !paste {
                        out.push(" ".to_string());
                    }
                    k += 1;
                    continue;
                }
                CToken::PastePaste => {
                    // (the blanks before it go)
                    while out.last().is_some_and(|p| p == " ") {
                        out.pop();
                    }
                    // GNU: `, ## __VA_ARGS__` with no variadic argument
                    let empty_va = variadic
                        && next(k).and_then(|t| param(&t)) == Some(names.len() - 1)
                        && arg(names.len() - 1).is_empty();
                    if empty_va && out.last().is_some_and(|p| p == ",") {
                        out.pop();
                    }
                    paste = true;
                    k += 1;
                    continue;
                }
                CToken::Hash => {
                    let operand = next_at(k).and_then(|j| param(&tokens[j]).map(|p| (j, p)));
                    match operand {
                        Some((j, p)) => {
                            k = j;
                            stringized(arg(p))
                        }
                        None => "#".to_string(),
                    }
                }
                CToken::Ident(_) => match param(&t) {
                    Some(p) => {
                        let beside_paste = matches!(prev(k), Some(CToken::PastePaste))
                            || matches!(next(k), Some(CToken::PastePaste));
                        if beside_paste {
                            arg(p).to_string()
                        } else {
                            self.rescan(arg(p), off, depth + 1)?
                        }
                    }
                    None => t.text().to_string(),
                },
                CToken::Other(text) => text.to_string(),
            };
            k += 1;
            match out.last_mut() {
                Some(last) if paste => last.push_str(&piece),
                _ => out.push(piece),
            }
            paste = false;
        }
        Some(out.concat())
    }
}

/// A token of a C macro body ([`c_tokens`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CToken<'a> {
    Ident(&'a str),
    /// `#`.
    Hash,
    /// `##`.
    PastePaste,
    /// Blanks (spaces, tabs).
    Blank,
    /// A literal, a number, a punctuator.
    Other(&'a str),
}

impl<'a> CToken<'a> {
    fn text(&self) -> &'a str {
        match self {
            CToken::Ident(t) | CToken::Other(t) => t,
            CToken::Hash => "#",
            CToken::PastePaste => "##",
            CToken::Blank => " ",
        }
    }
}

/// The tokens of a C macro body.
fn c_tokens(body: &str) -> Vec<CToken<'_>> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            out.push(CToken::Blank);
        } else if c == b'#' {
            if b.get(i + 1) == Some(&b'#') {
                out.push(CToken::PastePaste);
                i += 2;
            } else {
                out.push(CToken::Hash);
                i += 1;
            }
        } else if c == b'_' || c.is_ascii_alphabetic() {
            i = ident_end(b, i);
            out.push(CToken::Ident(&body[start..i]));
        } else if c == b'"' || c == b'\'' {
            i = c_literal_end(b, i);
            out.push(CToken::Other(&body[start..i]));
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            out.push(CToken::Other(&body[start..i]));
        } else {
            // one character (a multi-byte one whole)
            i += body[i..].chars().next().map_or(1, char::len_utf8);
            out.push(CToken::Other(&body[start..i]));
        }
    }
    out
}

/// `#arg`: a string literal of the argument as written, its blanks
/// folded, `"` and `\` escaped inside its literals.
fn stringized(arg: &str) -> String {
    let mut out = String::with_capacity(arg.len() + 2);
    out.push('"');
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut blank = false;
    for ch in arg.trim().chars() {
        if quote.is_none() && ch.is_whitespace() {
            blank = true;
            continue;
        }
        if blank {
            out.push(' ');
            blank = false;
        }
        match quote {
            Some(q) => {
                if ch == '"' || ch == '\\' {
                    out.push('\\');
                }
                out.push(ch);
                if escaped {
                    escaped = false;
                } else if ch == '\\' {
                    escaped = true;
                } else if ch == q {
                    quote = None;
                }
            }
            None => {
                if ch == '"' || ch == '\'' {
                    quote = Some(ch);
                    if ch == '"' {
                        out.push('\\');
                    }
                }
                out.push(ch);
            }
        }
    }
    out.push('"');
    out
}

/// The end of the C string or character literal at `i` (escapes skipped;
/// unterminated: the line's end).
fn c_literal_end(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() && b[j] != b'\n' {
        if b[j] == b'\\' {
            j += 2;
            continue;
        }
        if b[j] == q {
            return j + 1;
        }
        j += 1;
    }
    j.min(b.len())
}

/// The end of the C comment starting at `i` (`/*` or `//`), or `None`
/// when none starts there.
fn c_comment_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'/') {
        return None;
    }
    match b.get(i + 1) {
        Some(b'*') => Some(memchr::memmem::find(&b[i + 2..], b"*/").map_or(b.len(), |e| i + 2 + e + 2)),
        Some(b'/') => Some(line_end(b, i)),
        _ => None,
    }
}

/// [`invocation`] in C code: the arguments may run over lines and hold
/// comments (each read as a blank) and C literals; a directive line among
/// them ends the search (not a use).
fn c_invocation(text: &str, at: usize, m: &Macro) -> Option<(usize, Vec<String>)> {
    if m.params.is_none() {
        return Some((at, Vec::new()));
    }
    let b = text.as_bytes();
    let mut i = at;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        match c_comment_end(b, i) {
            Some(e) => i = e,
            None => break,
        }
    }
    if b.get(i) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut arg = String::new();
    let mut from = i + 1;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                i = c_literal_end(b, i);
                continue;
            }
            b'/' => {
                if let Some(e) = c_comment_end(b, i) {
                    arg.push_str(&text[from..i]);
                    arg.push(' ');
                    i = e;
                    from = e;
                    continue;
                }
            }
            b'\n' if text[i + 1..].trim_start_matches([' ', '\t']).starts_with('#') => {
                return None
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    arg.push_str(&text[from..i]);
                    if !(args.is_empty() && arg.trim().is_empty()) {
                        args.push(std::mem::take(&mut arg));
                    }
                    return Some((i + 1, args));
                }
            }
            b',' if depth == 1 => {
                arg.push_str(&text[from..i]);
                args.push(std::mem::take(&mut arg));
                from = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// C code (the preprocessor pass's output: inactive branches blanked,
/// directives kept, offsets kept) with the uses of function-like macros
/// expanded as cpp expands them, where the macro is defined (by the file's
/// `#define`s where they take effect, by `prelude` and by the headers they
/// and the file include, `headers`); `None` when nothing is. An object-like
/// macro is left as written outside those expansions (the C front end
/// reads it as a name), and so are directive lines. The analysis reads a C
/// file so when its text as written has syntax errors, and keeps that
/// reading when it has fewer (a template source's `FUNCTION(vec, set)(...)`
/// or `NAME(vec) "_set"`, which only the pasting of names or their making
/// into strings turns into C).
///
/// Positions: an expansion is written on one line (its line ends made
/// blanks), followed by as many line ends as the use spanned, so every line
/// stays where it was; [`ExpansionMap`] takes an offset inside it to the
/// start of the use.
pub(crate) fn expand_c(text: &str, macros: &Macros<'_>) -> Option<Expanded> {
    expand_in(text, macros, Code::C)
}

/// A use of `m` whose name ends at `at`: where the use ends and its
/// arguments. An object-like macro is used by its name; a function-like
/// one only when `(` follows on the same line.
fn invocation(text: &str, at: usize, m: &Macro) -> Option<(usize, Vec<String>)> {
    if m.params.is_none() {
        return Some((at, Vec::new()));
    }
    let b = text.as_bytes();
    let mut i = at;
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    if b.get(i) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut arg_start = i + 1;
    while i < b.len() {
        match b[i] {
            b'\n' => return None,
            b'\'' | b'"' => {
                i = string_end(b, i);
                continue;
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    let last = &text[arg_start..i];
                    if !(args.is_empty() && last.trim().is_empty()) {
                        args.push(last.to_string());
                    }
                    return Some((i + 1, args));
                }
            }
            b',' if depth == 1 => {
                args.push(text[arg_start..i].to_string());
                arg_start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `body` with each parameter name replaced by its argument (missing
/// arguments are empty).
fn replace_params(body: &str, params: &[String], args: &[String]) -> String {
    let b = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut copied = 0;
    let mut i = 0;
    while let Some((start, end)) = next_ident(b, i, Lex::FortranText) {
        i = end;
        if let Some(k) = params.iter().position(|p| p == &body[start..end]) {
            out.push_str(&body[copied..start]);
            out.push_str(args.get(k).map_or("", |a| a.trim()));
            copied = end;
        }
    }
    out.push_str(&body[copied..]);
    out
}

/// The next identifier of C text at or after `i` (start, end), skipping
/// literals, numbers and comments.
pub(crate) fn next_c_ident(b: &[u8], i: usize) -> Option<(usize, usize)> {
    next_ident(b, i, Lex::C)
}

/// How [`next_ident`] reads text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lex {
    /// Fortran code: `!` comments, Fortran strings.
    Fortran,
    /// A macro body or argument for Fortran: Fortran strings.
    FortranText,
    /// C: C literals and comments.
    C,
}

/// The next identifier at or after `i` (start, end), skipping literals,
/// numbers (`1.0d0`, `2_8`, `0x1fu`) and the comments of `lex`.
fn next_ident(b: &[u8], mut i: usize, lex: Lex) -> Option<(usize, usize)> {
    while i < b.len() {
        match b[i] {
            b'!' if lex == Lex::Fortran => i = line_end(b, i),
            b'/' if lex == Lex::C => i = c_comment_end(b, i).unwrap_or(i + 1),
            b'\'' | b'"' if lex == Lex::C => i = c_literal_end(b, i),
            b'\'' | b'"' => i = string_end(b, i),
            b'0'..=b'9' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.')
                {
                    i += 1;
                }
            }
            c if c == b'_' || c.is_ascii_alphabetic() => return Some((i, ident_end(b, i))),
            _ => i += 1,
        }
    }
    None
}

fn ident_end(b: &[u8], mut i: usize) -> usize {
    if i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphabetic()) {
        i += 1;
        while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
            i += 1;
        }
    }
    i
}

fn line_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        i += 1;
    }
    i
}

/// The end of the Fortran string literal at `i` (a doubled quote stays
/// inside it; unterminated: the line's end).
fn string_end(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() && b[j] != b'\n' {
        if b[j] == q {
            if b.get(j + 1) == Some(&q) {
                j += 2;
                continue;
            }
            return j + 1;
        }
        j += 1;
    }
    j
}

/// The names of `text`'s `#include "name"` lines, in order (a quick scan:
/// lines starting with `#`, whatever branch they are in).
/// The names `text` `#include`s, in order, each once, and whether each is
/// written `<name>`.
fn include_names(text: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    if !text.contains("include") {
        return out;
    }
    let b = text.as_bytes();
    // (only the lines that start with `#`, found by their `#`: headers are
    // mostly comments and declarations, and a run reads each one for every
    // file that includes it)
    let mut line_end = 0;
    for hash in memchr::memchr_iter(b'#', b) {
        if hash < line_end {
            // not the first `#` of its line
            continue;
        }
        let start = memchr::memrchr(b'\n', &b[..hash]).map_or(0, |p| p + 1);
        let end = memchr::memchr(b'\n', &b[hash..]).map_or(b.len(), |p| hash + p);
        line_end = end;
        if !b[start..hash].iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let t = text.get(hash..end).unwrap_or("").trim_end_matches('\r');
        let (name, rest) = directive_name(t);
        if name != "include" {
            continue;
        }
        if let Some((n, angled)) = include_target(rest) {
            if !out.iter().any(|(x, _)| x == n) {
                out.push((n.to_string(), angled));
            }
        }
    }
    out
}

/// What an `#include` names (`rest`: the line after `include`): the name
/// and whether it is written `<name>`; `None` when it is neither a quoted
/// nor an angled name (`#include MACRO`) or is empty.
fn include_target(rest: &str) -> Option<(&str, bool)> {
    let rest = rest.trim();
    let quoted = rest
        .strip_prefix('"')
        .and_then(|r| r.split('"').next())
        .map(|n| (n, false));
    let angled = || {
        rest.strip_prefix('<')
            .and_then(|r| r.split('>').next())
            .map(|n| (n, true))
    };
    quoted.or_else(angled).filter(|(n, _)| !n.is_empty())
}

/// A directive's name and the rest of its line.
fn directive_name(line: &str) -> (&str, &str) {
    let s = line.trim_start();
    let s = s.strip_prefix('#').unwrap_or(s).trim_start();
    let n = ident_end(s.as_bytes(), 0);
    s.split_at(n)
}

/// The logical lines of a header or a directive (continuations joined).
fn logical_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.split('\n') {
        let l = line.trim_end_matches('\r');
        match l.trim_end().strip_suffix('\\') {
            Some(head) => {
                cur.push_str(head);
                cur.push(' ');
            }
            None => {
                cur.push_str(l);
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `s` without `/* ... */` and `// ...` comments (in a directive).
fn strip_c_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                match rest[b + 2..].find("*/") {
                    Some(e) => rest = &rest[b + 2 + e + 2..],
                    None => return out,
                }
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                return out;
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, headers: &[(&str, &str)]) -> Option<Expanded> {
        let pre = csa_grammars::preproc::preprocess(text, &[], true);
        let headers = Headers(
            headers
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
        );
        expand(&pre.text, &Macros { source: text, pre: &pre, headers: &headers, prelude: "", defines: &[] }, false)
    }

    fn run_c(text: &str, headers: &[(&str, &str)], prelude: &str) -> Option<Expanded> {
        let pre = csa_grammars::preproc::preprocess(text, &[], false);
        let headers = Headers(
            headers
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
        );
        expand_c(&pre.text, &Macros { source: text, pre: &pre, headers: &headers, prelude, defines: &[] })
    }

    /// The code lines of C text expanded (its directive lines left out).
    fn code_c(text: &str) -> String {
        let e = run_c(text, &[], "").expect("expanded");
        e.text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn c_names_are_pasted_and_arguments_made_strings() {
        let text = "#define CAT2x(a, b) a ## _ ## b\n#define CAT2(a, b) CAT2x(a, b)\n\
                    #define SHORT float\n#define FN(a, c) CAT2(a, CAT2(SHORT, c))\n\
                    #define NAME(x) #x\n#define Q(x) # x\n\
                    void FN(vec, set)(void) { puts(NAME( vec ) \"_set\"); }\n\
                    char *s = Q(say  \"hi\\n\"  'q');\n";
        assert_eq!(
            code_c(text),
            "void vec_float_set(void) { puts(\"vec\" \"_set\"); }\n\
             char *s = \"say \\\"hi\\\\n\\\" 'q'\";"
        );
    }

    #[test]
    fn c_variadic_macros_take_the_arguments_left() {
        let text = "#define LOG(fmt, ...) printf(fmt, ##__VA_ARGS__)\n\
                    #define CALL(f, args...) f(args)\n#define DECL(t, ...) t __VA_ARGS__\n\
                    LOG(\"a\"); LOG(\"%d %d\", 1, 2); CALL(g, 1, (2, 3)); DECL(int, i, j);\n";
        assert_eq!(
            code_c(text),
            "printf(\"a\"); printf(\"%d %d\",1, 2); g(1, (2, 3)); int i, j;"
        );
    }

    #[test]
    fn c_uses_over_lines_keep_every_line_and_map_to_the_use() {
        let text = "#define PAIR(a, b) a + b\nint x = PAIR(1, /* one */\n  2); int y = 3;\n";
        let e = run_c(text, &[], "").expect("expanded");
        // the expansion on the use's line, the line end after it
        assert_eq!(e.text.lines().nth(1), Some("int x = 1 + 2"));
        assert_eq!(e.text.lines().count(), text.lines().count());
        let y = e.text.find("int y").unwrap();
        assert_eq!(e.map.to_original(y), text.find("int y").unwrap());
        let inside = e.text.find("1 + 2").unwrap() + 2;
        assert_eq!(e.map.to_original(inside), text.find("PAIR(1").unwrap());
    }

    #[test]
    fn c_object_macros_stay_outside_expansions_and_comments_strings_directives_are_code_no_more() {
        let text = "#define N 4\n#define F(x) (x * N)\n#define G(x) x\n\
                    int a = N; /* F(1) */ char *s = \"F(2)\"; // F(3)\n\
                    #pragma omp parallel for num_threads(F(2))\nint b = F(2) + G(N);\n\
                    #undef F\nint c = F(5);\n";
        assert_eq!(
            code_c(text),
            "int a = N; /* F(1) */ char *s = \"F(2)\"; // F(3)\n\
             int b = (2 * 4) + 4;\nint c = F(5);"
        );
    }

    #[test]
    fn a_macro_bomb_in_one_use_is_left_as_written() {
        // too deep (40 uses), too long (4^12 copies of `x`)
        for depth in [40, 12] {
            let nested = "A(".repeat(depth) + "x" + &")".repeat(depth);
            let text = format!("#define A(x) x x x x\nint y = {nested}; int z = A(1);\n");
            let e = run_c(&text, &[], "").expect("expanded");
            assert!(e.text.contains(&nested), "{}", &e.text[..200]);
            assert!(e.text.contains("int z = 1 1 1 1;"));
        }
        let nested = "A(".repeat(40) + "x" + &")".repeat(40);
        let ftext = format!("#define A(x) x x x x\n      y = {nested}\n");
        assert!(run(&ftext, &[]).is_none_or(|e| e.text.len() < 1 << 22));
    }

    #[test]
    fn c_macros_come_from_the_prelude_and_headers_and_recursion_stops() {
        let header = "#if defined(BASE_FLOAT)\n#define SHORT float\n#endif\n\
                      #define CAT(a, b) a ## _ ## b\n#define XCAT(a, b) CAT(a, b)\n\
                      #define TYPE(d) XCAT(d, SHORT)\n";
        let prelude = "#define BASE_FLOAT\n#include \"t.h\"\n";
        let text = "#define SELF(x) SELF(x + 1)\nTYPE(vec) *v; int k = SELF(0);\n";
        let e = run_c(text, &[("t.h", header)], prelude).expect("expanded");
        assert_eq!(e.text.lines().nth(1), Some("vec_float *v; int k = SELF(0 + 1);"));
        // no function-like macro anywhere: nothing to do
        assert!(run_c("#define N 1\nint f(int x) { return x; }\n", &[], "").is_none());
    }

    #[test]
    fn include_lines_are_cpp_and_fortran_includes_with_their_offsets() {
        let text = "#include \"a.h\"\n  # include <sys/b.h>\n      INCLUDE 'SIZE.h'\n\
                    C     include 'not.h'\n  include \"c.inc\" ! why\n#include MACRO\n\
                    #include \"\"\nincludes = 'x'\n";
        let lines = Headers::include_lines(text);
        let got: Vec<(usize, &str, bool, bool)> = lines
            .iter()
            .map(|l| (l.offset, l.name.as_str(), l.angled, l.cpp))
            .collect();
        let at = |s: &str| text.find(s).unwrap();
        assert_eq!(
            got,
            vec![
                (0, "a.h", false, true),
                (at("  # include"), "sys/b.h", true, true),
                (at("      INCLUDE"), "SIZE.h", false, false),
                (at("  include \""), "c.inc", false, false),
            ]
        );
    }

    #[test]
    fn fixed_form_comment_lines_stay_and_long_expansions_are_seen() {
        let text = "#define RL real*8\n\
                    C     RL in a comment line\n      RL x\n*     RL\n      x = 1\n";
        let pre = csa_grammars::preproc::preprocess(text, &[], true);
        let e = expand(&pre.text, &Macros { source: text, pre: &pre, headers: &Headers::default(), prelude: "", defines: &[] }, true).unwrap();
        let lines: Vec<&str> = e.text.lines().skip(1).collect();
        assert_eq!(
            lines,
            ["C     RL in a comment line", "      real*8 x", "*     RL", "      x = 1"]
        );
        assert!(!e.past_column(72));
        // 70 columns before, 74 after: only a longer line length reads it
        let long = format!("#define RL real*8\n      RL {}\n", "y".repeat(61));
        let pre = csa_grammars::preproc::preprocess(&long, &[], true);
        let e = expand(&pre.text, &Macros { source: &long, pre: &pre, headers: &Headers::default(), prelude: "", defines: &[] }, true).unwrap();
        assert!(e.past_column(72));
        assert!(!e.past_column(80));
    }

    /// An expansion to nothing at a line's end starts at its newline:
    /// the line's, and the search goes on (it never ended).
    #[test]
    fn empty_expansions_at_line_ends_are_their_line_s() {
        let text = "#define MARK\n      MARK\n      x = 1 MARK\n#define RL real*8\n      RL y\n";
        let pre = csa_grammars::preproc::preprocess(text, &[], true);
        let e = expand(&pre.text, &Macros { source: text, pre: &pre, headers: &Headers::default(), prelude: "", defines: &[] }, true).unwrap();
        assert!(e.map.pieces.iter().any(|p| e.text.as_bytes().get(p.0) == Some(&b'\n')));
        assert!(!e.past_column(72));
        assert!(e.past_column(10));
    }

    #[test]
    fn object_and_function_macros_expand_in_code_only() {
        let text = "#define DT double precision\n\
                    #define ZERO(x) x = 0\n\
                    DT :: a(n) ! DT in a comment\n\
                    ZERO(a(i))\n\
                    print *, 'DT'\n";
        let e = run(text, &[]).unwrap();
        let lines: Vec<&str> = e.text.lines().skip(2).collect();
        assert_eq!(
            lines,
            [
                "double precision :: a(n) ! DT in a comment",
                "a(i) = 0",
                "print *, 'DT'"
            ]
        );
    }

    #[test]
    fn headers_are_read_as_cpp_reads_them() {
        let header = "#ifndef H\n# define H\n#ifdef NOT_SET\n#define T integer\n#else\n\
                      #define T real\n#endif\n\
                      #if !defined(N) && 1\n#define N 4\n#endif\n\
                      #define DECL(NAME, TYPE) TYPE, dimension(N) :: NAME\n\
                      #define TWO call a();\\\n   call b()\n#endif\n";
        let text = "#include \"h.h\"\nDECL(x, T)\nTWO\n#undef T\nT\n";
        let e = run(text, &[("h.h", header)]).unwrap();
        let lines: Vec<&str> = e.text.lines().collect();
        assert_eq!(lines[1], "real, dimension(4) :: x");
        assert_eq!(lines[2], "call a();    call b()");
        assert_eq!(lines[4], "T");
        // a missing header defines nothing
        assert!(run("#include \"gone.h\"\nT\n", &[]).is_none());
    }

    #[test]
    fn self_reference_and_recursion_stop() {
        let text = "#define A A + B\n#define B A\nx = A\n";
        let e = run(text, &[]).unwrap();
        assert_eq!(e.text.lines().nth(2), Some("x = A + A"));
    }

    #[test]
    fn offsets_go_back_to_the_use() {
        let text = "#define DT double precision\nDT :: a\nx = 1\n";
        let e = run(text, &[]).unwrap();
        let use_at = text.find("DT ::").unwrap();
        let exp_at = e.text.find("double").unwrap();
        assert_eq!(e.map.to_original(exp_at), use_at);
        assert_eq!(e.map.to_original(exp_at + 3), use_at);
        // the end of the expansion is the end of the use
        assert_eq!(e.map.to_original(exp_at + "double precision".len()), use_at + 2);
        let x = e.text.find("x = 1").unwrap();
        assert_eq!(e.map.to_original(x), text.find("x = 1").unwrap());
        assert_eq!(e.map.to_original(2), 2);
    }

    #[test]
    fn macros_of_inactive_branches_are_not_defined() {
        let text = "#ifdef __CSA__\n#define T real\n#else\n#define T integer\n#endif\nT :: x\n";
        let e = run(text, &[]).unwrap();
        assert_eq!(e.text.lines().nth(5), Some("real :: x"));
    }
}
