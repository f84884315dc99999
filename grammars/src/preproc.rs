//! Preprocessor conditionals without running the preprocessor.
//!
//! [`preprocess`] decides which branch of every `#if`/`#ifdef`/`#ifndef`
//! conditional is active (SEMANTICS.md §1) and blanks what the parser must
//! not see, keeping every byte offset:
//!
//! * every byte of an inactive line and of every conditional directive line
//!   (`#if`, `#ifdef`, `#ifndef`, `#elif`, `#elifdef`, `#elifndef`, `#else`,
//!   `#endif`, spaces after `#` allowed, backslash continuations and a block
//!   comment opened on the line included) becomes a space, except `\n` and
//!   `\r`; a multi-byte character becomes as many spaces as it has bytes;
//! * other directives (`#include`, `#define`, `#pragma`, ...) are kept in C
//!   (with the `/` of a `/*` inside a string literal made a space, which
//!   tree-sitter-c would take for a comment), and blanked in Fortran
//!   (`fortran == true`); an `#include` inside an initializer or a
//!   parenthesised expression (a list of elements read from another file,
//!   where tree-sitter-c has no place for a directive) is blanked in C too.
//!   What a `#define` means is the front end's business: it reads the kept
//!   directive from the tree.
//!
//! Activity: `__CSA__` and every name in `defines` (`NAME` or `NAME=VALUE`)
//! are defined; `#ifdef NAME`, `#if defined(NAME)`, `#if defined NAME`,
//! `#if NAME` are active, their `#else` inactive; `#ifndef NAME` and
//! `#if !defined(NAME)` the reverse; `#if 0` is inactive, `#if 1` active.
//! `__cplusplus` is known to be undefined (unless in `defines`): the
//! `#ifdef __cplusplus` block of a C header is inactive, its `#else` active;
//! in C, `__STDC__` is 1.
//! Conditions are evaluated over integer literals, those names, `defined`,
//! and the C operators, with three-valued logic: a condition that depends on
//! anything else (other macros, including ones `#define`d in the file) is
//! *unknown*, as is one that [`crate::cint`] cannot evaluate (a division by
//! zero, a shift by 64; an overflow wraps, as in clang), and an unknown conditional takes its first possible branch:
//! the first branch when it is unknown, otherwise the first `#elif` that is
//! not known false; the remaining branches are inactive. Everything inside
//! an inactive branch is inactive. [`preprocess_as_compiled`] reads some
//! names as a compiler given no `-D` would instead: undefined, unless
//! `defines` or the file's own `#define`s define them (the analysis uses
//! that reading for the names of the unknown branches in the way of the
//! first reading's parse, when it has fewer syntax errors).
//!
//! Unbalanced input never fails: an unterminated conditional runs to the end
//! of the file; a stray `#elif`, `#else` or `#endif` is blanked and ignored.
//! Lines inside C block comments and lines continuing a backslash-ended line
//! are never directives (C only; Fortran has no block comments).
//!
//! Guards: a conditional whose first condition asserts that `__CSA__` (or a
//! name in `defines`, which "behaves like `__CSA__`") is defined has
//! [`CsaGuard::Positive`]; one that asserts it is not, [`CsaGuard::Negative`].
//! [`Branch::asserts_csa`] says whether being in a branch implies the name is
//! defined: the first branch of a positive guard, the branches after a
//! negative condition, and any branch whose own condition is positive.

use crate::cint::{self, BinOp, UnOp};
use std::collections::HashMap;

/// The text the parser sees, with inactive branches blanked, plus what the
/// conditionals were.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preprocessed {
    /// Same byte length as the input; every byte is either the input byte or
    /// a space standing for a blanked byte (never `\n` or `\r`) or for the
    /// `/` of a `/*` in a literal of a C directive, except on the C
    /// directive lines [`close_directive_line`] rearranges (`#define X `:
    /// the blanks at the end moved before the name, line ends in place).
    pub text: String,
    /// Every conditional, in the order of its opening directive (so an
    /// enclosing conditional comes before the ones nested in it).
    pub conditionals: Vec<Conditional>,
    /// Byte ranges guarded by `__CSA__` (see [`Preprocessed::is_csa_guarded`]),
    /// sorted and merged, for logarithmic look-ups.
    guarded: Vec<(usize, usize)>,
    /// Byte range of every directive (see [`Preprocessed::directives`]).
    directives: Vec<(usize, usize)>,
}

/// One `#if ... #endif` conditional.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conditional {
    /// The opening branch, then one per `#elif`/`#else`.
    pub branches: Vec<Branch>,
    /// Byte range of the `#endif` line (excluding the newline), or `None`
    /// when the conditional runs to the end of the file.
    pub endif: Option<(usize, usize)>,
    /// What the opening condition says about `__CSA__`.
    pub csa_guard: CsaGuard,
}

/// What a conditional's opening condition asserts about `__CSA__`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CsaGuard {
    /// `#ifdef __CSA__`, `#if defined(__CSA__)`, `#if defined __CSA__`,
    /// `#if __CSA__` (also as one `&&` operand).
    Positive,
    /// `#ifndef __CSA__`, `#if !defined(__CSA__)`, `#if !__CSA__`.
    Negative,
    /// Anything else.
    None,
}

/// Which directive opens a branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DirectiveKind {
    If,
    Ifdef,
    Ifndef,
    Elif,
    Elifdef,
    Elifndef,
    Else,
}

/// One branch of a conditional.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Branch {
    /// Byte range of the directive line, continuations included, excluding
    /// the final line terminator.
    pub directive: (usize, usize),
    /// Byte range of the lines between this directive and the next one of
    /// the same conditional (or the end of the file).
    pub body: (usize, usize),
    /// Whether the body is kept (the enclosing branches are active too).
    pub active: bool,
    /// The directive that opens the branch.
    pub kind: DirectiveKind,
    /// Whether being in this branch implies that `__CSA__` (or a name in
    /// `defines`) is defined.
    pub asserts_csa: bool,
    /// Whether its condition is unknown (an `#else` never is): an active
    /// such branch was chosen by the first-possible-branch rule.
    pub unknown: bool,
}

impl Conditional {
    /// Byte range from the opening directive to the end of the `#endif`
    /// line (or of the last body, when unterminated).
    pub fn extent(&self) -> (usize, usize) {
        let start = self.branches.first().map_or(0, |b| b.directive.0);
        let end = match self.endif {
            Some((_, e)) => e,
            None => self.branches.last().map_or(start, |b| b.body.1),
        };
        (start, end.max(start))
    }
}

impl Preprocessed {
    /// Byte range of every directive, active or not, conditional or not, in
    /// file order: from the line's start (blanks before the `#` included)
    /// to the end of its last line (continuations and the lines of a block
    /// comment opened on it included), excluding the final line terminator.
    pub fn directives(&self) -> &[(usize, usize)] {
        &self.directives
    }

    /// True when `offset` lies in the body of an active branch that asserts
    /// `__CSA__` is defined, at any nesting level.
    pub fn is_csa_guarded(&self, offset: usize) -> bool {
        let i = self.guarded.partition_point(|&(start, _)| start <= offset);
        i > 0 && offset < self.guarded[i - 1].1
    }

    /// The merged, sorted ranges that [`Preprocessed::is_csa_guarded`] answers from.
    fn guarded_ranges(conditionals: &[Conditional]) -> Vec<(usize, usize)> {
        let mut ranges: Vec<(usize, usize)> = conditionals
            .iter()
            .flat_map(|c| c.branches.iter())
            .filter(|b| b.active && b.asserts_csa && b.body.0 < b.body.1)
            .map(|b| b.body)
            .collect();
        ranges.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
        for (s, e) in ranges {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        merged
    }

    /// The innermost conditional whose extent holds `offset`.
    pub fn enclosing_conditional(&self, offset: usize) -> Option<&Conditional> {
        self.conditionals.iter().rev().find(|c| {
            let (s, e) = c.extent();
            s <= offset && offset < e
        })
    }

    /// The innermost branch whose body holds `offset`, with its conditional.
    pub fn enclosing_branch(&self, offset: usize) -> Option<(&Conditional, &Branch)> {
        self.conditionals.iter().rev().find_map(|c| {
            c.branches
                .iter()
                .find(|b| b.body.0 <= offset && offset < b.body.1)
                .map(|b| (c, b))
        })
    }

    /// False when `offset` lies in the body of an inactive branch (the
    /// conditional directive lines themselves are blanked too, but count as
    /// active here).
    pub fn is_active(&self, offset: usize) -> bool {
        !self.conditionals.iter().any(|c| {
            c.branches
                .iter()
                .any(|b| !b.active && b.body.0 <= offset && offset < b.body.1)
        })
    }
}

/// For each of `offsets` (ascending), whether a directive written on a new
/// line just before the line holding it would be read as one by
/// [`preprocess`] of C `text`: not when that line starts inside a block
/// comment, after a backslash continuation, or inside a directive's
/// logical line. (A fix that adds `#ifdef __CSA__` there would change
/// nothing otherwise.)
pub fn directive_visible(text: &str, offsets: &[usize]) -> Vec<bool> {
    let lines = split_lines(text);
    let mut out = Vec::with_capacity(offsets.len());
    let mut next = offsets.iter().peekable();
    let mut in_comment = false;
    let mut continued = false;
    let mut i = 0;
    while i < lines.len() && next.peek().is_some() {
        let line = lines[i];
        let content = &text[line.start..line.content_end];
        let visible = !in_comment && !continued;
        let mut j = i;
        if visible && first_non_blank(content) == Some(b'#') {
            // a directive's logical line: its continuations and the lines
            // of a block comment opened on it
            let mut open_comment = scan_c(content, false);
            while j + 1 < lines.len()
                && (ends_with_backslash(&text[lines[j].start..lines[j].content_end])
                    || open_comment)
            {
                j += 1;
                open_comment = scan_c(&text[lines[j].start..lines[j].content_end], open_comment);
            }
        } else {
            in_comment = scan_c(content, in_comment);
            continued = ends_with_backslash(content);
        }
        // offsets on lines i..=j: only line i's start is a directive's place
        let end = lines[j].end.max(lines[j].content_end);
        while let Some(&&o) = next.peek() {
            if o >= end && j + 1 < lines.len() {
                break;
            }
            out.push(visible && o < lines[i].end.max(lines[i].content_end));
            next.next();
        }
        i = j + 1;
    }
    out.resize(offsets.len(), false);
    out
}

/// For each of `offsets` (ascending), whether it is in C code of `text`:
/// not inside a comment or a string or character literal, lexing from the
/// start of the text (a `/*` inside a block comment opens nothing).
pub fn in_c_code(text: &str, offsets: &[usize]) -> Vec<bool> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Code,
        Line,
        Block,
        Literal(u8),
    }
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(offsets.len());
    let mut next = offsets.iter().copied().peekable();
    let mut state = State::Code;
    let mut i = 0;
    while let Some(&o) = next.peek() {
        // advance the lexer to `o`
        while i < o.min(b.len()) {
            let c = b[i];
            match state {
                State::Code => match c {
                    b'/' if b.get(i + 1) == Some(&b'/') => {
                        state = State::Line;
                        i += 1;
                    }
                    b'/' if b.get(i + 1) == Some(&b'*') => {
                        state = State::Block;
                        i += 1;
                    }
                    b'"' | b'\'' => state = State::Literal(c),
                    _ => {}
                },
                State::Line => {
                    if c == b'\n' {
                        state = State::Code;
                    }
                }
                State::Block => {
                    if c == b'*' && b.get(i + 1) == Some(&b'/') {
                        state = State::Code;
                        i += 1;
                    }
                }
                State::Literal(q) => {
                    if c == b'\\' {
                        i += 1;
                    } else if c == q || c == b'\n' {
                        state = State::Code;
                    }
                }
            }
            i += 1;
        }
        // (an offset inside a two-byte opener it skipped is not code)
        out.push(state == State::Code && i == o.min(b.len()));
        next.next();
    }
    out
}

/// Blanks inactive conditional branches, keeping byte offsets.
pub fn preprocess(text: &str, defines: &[String], fortran: bool) -> Preprocessed {
    preprocess_with(text, defines, fortran, None)
}

/// [`preprocess`], with the names in `undefined` read as a compiler given
/// no `-D` reads them: undefined (0 in a condition) instead of unknown,
/// unless `defines` or the file's own `#define`s define them. So `#ifdef
/// DEBUG` is inactive and `#if FAST` / `#if !FAST` take one branch each,
/// consistently. A name the file defines is read, from an active
/// `#define` of it as a number on, as that number, and from an `#undef`
/// on as undefined (`#ifndef UNSIGNED` / `#define UNSIGNED 0` then `#if
/// UNSIGNED`). For a text whose first reading (unknown conditions take
/// their first branch) does not parse because of the branches those names
/// chose: C++ in a `#ifdef DEBUG` block, a `#if X` opening a brace a `#if
/// !X` closes.
pub fn preprocess_as_compiled(
    text: &str,
    defines: &[String],
    fortran: bool,
    undefined: &[String],
) -> Preprocessed {
    preprocess_with(text, defines, fortran, Some(undefined))
}

/// [`header_macros`]: the object-like macros `text` (a C header) defines
/// where a compiler given no `-D` but `defines` reads it: every
/// conditional's unknown name is undefined (`#ifndef FAR` then `#define
/// FAR` defines it; `#ifdef MSDOS` is inactive), and `#undef` removes a
/// macro. `(name, body)` in the order of their last definition, the body
/// on one line (continuations joined, comments dropped).
pub fn header_macros(text: &str, defines: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    preprocess_inner(text, defines, false, None, Some(&mut out));
    out
}

fn preprocess_with(
    text: &str,
    defines: &[String],
    fortran: bool,
    as_compiled: Option<&[String]>,
) -> Preprocessed {
    preprocess_inner(text, defines, fortran, as_compiled, None)
}

fn preprocess_inner(
    text: &str,
    defines: &[String],
    fortran: bool,
    as_compiled: Option<&[String]>,
    // [`header_macros`]: every unknown name undefined, and the active
    // object-like `#define`s collected here
    mut macros: Option<&mut Vec<(String, String)>>,
) -> Preprocessed {
    if fortran && !text.as_bytes().contains(&b'#') {
        // no directive line: nothing to blank (most Fortran files)
        return Preprocessed {
            text: text.to_string(),
            conditionals: Vec::new(),
            guarded: Vec::new(),
            directives: Vec::new(),
        };
    }
    let mut env = Env::new(defines);
    env.all_undefined = macros.is_some();
    if !fortran {
        // every C compiler defines it (`#if defined __STDC__ && __STDC__`
        // guards ANSI prototypes in code that also served K&R compilers)
        env.names.entry("__STDC__".to_string()).or_insert(1);
    }
    if let Some(names) = as_compiled {
        let defined = file_defines(text);
        env.undefined = names
            .iter()
            .filter(|n| !defined.contains(n.as_str()))
            .cloned()
            .collect();
        // the others the file defines: with the number it gives them
        // where it does (`#ifndef UNSIGNED` / `#define UNSIGNED 0` then
        // `#if UNSIGNED`)
        env.valued = names
            .iter()
            .filter(|n| defined.contains(n.as_str()))
            .cloned()
            .collect();
    }
    let lines = split_lines(text);
    let mut out: Vec<u8> = text.as_bytes().to_vec();
    let mut conditionals: Vec<Conditional> = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut directives: Vec<(usize, usize)> = Vec::new();
    let mut nest = Nesting::default();

    let mut in_comment = false;
    let mut continued = false;
    let mut i = 0;
    while i < lines.len() {
        let mut line = lines[i];
        if line.start == 0 && text.starts_with('\u{feff}') {
            // Leave a byte-order mark alone.
            line.start = '\u{feff}'.len_utf8().min(line.content_end);
        }
        let content = &text[line.start..line.content_end];
        let active = stack.last().is_none_or(|o| o.active);
        let is_directive = !in_comment
            && !continued
            && first_non_blank(content) == Some(b'#')
            && (!fortran || fortran_directive(content));
        if !is_directive {
            if !fortran {
                if active {
                    nest.scan(content, in_comment);
                }
                in_comment = scan_c(content, in_comment);
                continued = ends_with_backslash(content);
            }
            if !active {
                blank(&mut out, line.start, line.content_end);
            }
            i += 1;
            continue;
        }

        // The logical directive: backslash continuations, and in C the lines
        // of a block comment opened on it.
        let mut j = i;
        let mut open_comment = !fortran && scan_c(content, false);
        while j + 1 < lines.len()
            && (ends_with_backslash(&text[lines[j].start..lines[j].content_end]) || open_comment)
        {
            j += 1;
            if !fortran {
                open_comment = scan_c(&text[lines[j].start..lines[j].content_end], open_comment);
            }
        }
        let range = (line.start, lines[j].content_end);
        directives.push(range);
        let logical = join_logical(text, &lines[i..=j]);
        let directive = parse_directive(&logical);
        let body_start = lines[j].end;
        i = j + 1;

        let kind = match directive.name {
            "if" => Some(DirectiveKind::If),
            "ifdef" => Some(DirectiveKind::Ifdef),
            "ifndef" => Some(DirectiveKind::Ifndef),
            "elif" => Some(DirectiveKind::Elif),
            "elifdef" => Some(DirectiveKind::Elifdef),
            "elifndef" => Some(DirectiveKind::Elifndef),
            "else" => Some(DirectiveKind::Else),
            _ => None,
        };
        match (kind, directive.name) {
            (
                Some(kind @ (DirectiveKind::If | DirectiveKind::Ifdef | DirectiveKind::Ifndef)),
                _,
            ) => {
                blank(&mut out, range.0, range.1);
                let cond = env.condition(kind, directive.rest);
                let unknown = cond.truth.is_none();
                let branch_active = active && cond.truth != Some(false);
                conditionals.push(Conditional {
                    branches: vec![Branch {
                        directive: range,
                        body: (body_start, text.len()),
                        active: branch_active,
                        kind,
                        asserts_csa: cond.guard == CsaGuard::Positive,
                        unknown,
                    }],
                    endif: None,
                    csa_guard: cond.guard,
                });
                stack.push(Open {
                    index: conditionals.len() - 1,
                    parent_active: active,
                    active: branch_active,
                    taken: cond.truth != Some(false),
                    negated_csa: cond.guard == CsaGuard::Negative,
                });
            }
            (Some(kind), _) => {
                blank(&mut out, range.0, range.1);
                let Some(open) = stack.last_mut() else {
                    continue; // stray #elif/#else
                };
                let (truth, guard) = if kind == DirectiveKind::Else {
                    (Some(true), CsaGuard::None)
                } else {
                    let c = env.condition(kind, directive.rest);
                    (c.truth, c.guard)
                };
                let unknown = truth.is_none();
                let branch_active = open.parent_active && !open.taken && truth != Some(false);
                if branch_active {
                    open.taken = true;
                }
                let asserts_csa = guard == CsaGuard::Positive || open.negated_csa;
                if guard == CsaGuard::Negative {
                    open.negated_csa = true;
                }
                open.active = branch_active;
                let cond = &mut conditionals[open.index];
                if let Some(last) = cond.branches.last_mut() {
                    last.body.1 = range.0;
                }
                cond.branches.push(Branch {
                    directive: range,
                    body: (body_start, text.len()),
                    active: branch_active,
                    kind,
                    asserts_csa,
                    unknown,
                });
            }
            (None, "endif") => {
                blank(&mut out, range.0, range.1);
                if let Some(open) = stack.pop() {
                    let cond = &mut conditionals[open.index];
                    if let Some(last) = cond.branches.last_mut() {
                        last.body.1 = range.0;
                    }
                    cond.endif = Some(range);
                }
            }
            (None, name) => {
                if active && !env.valued.is_empty() && matches!(name, "define" | "undef") {
                    let (macro_name, body) = take_ident(directive.rest.trim_start());
                    if env.valued.contains(macro_name) {
                        env.names.remove(macro_name);
                        if name == "undef" {
                            env.undefined.insert(macro_name.to_string());
                        } else {
                            // (a body that is not a number: unknown again)
                            env.undefined.remove(macro_name);
                            if let Some(v) = cint::literal_i64(body.trim()) {
                                env.names.insert(macro_name.to_string(), v);
                            }
                        }
                    }
                }
                if let Some(macros) = macros.as_deref_mut().filter(|_| active) {
                    // a header read for its macros: what it defines counts
                    // in its own later conditions
                    let (macro_name, body) = take_ident(directive.rest.trim_start());
                    let object_like = name == "define"
                        && directive.rest.starts_with([' ', '\t'])
                        && !macro_name.is_empty()
                        && !body.starts_with('(');
                    if object_like || name == "undef" {
                        macros.retain(|(n, _)| n != macro_name);
                        env.names.remove(macro_name);
                    }
                    if object_like {
                        env.define(macro_name, body);
                        macros.push((macro_name.to_string(), body.trim().to_string()));
                    }
                }
                if !active || fortran {
                    blank(&mut out, range.0, range.1);
                } else if name == "include" && nest.in_expression() {
                    // `= {` ... `#include "list.def"` ... `}`: the list is
                    // code csa-lint does not read, and tree-sitter-c has no
                    // place for a directive inside an initializer
                    blank(&mut out, range.0, range.1);
                } else {
                    hide_comment_openers_in_literals(&mut out, range.0, range.1);
                    // (a one-line macro's comment parses)
                    if name == "define" && text[range.0..range.1].contains('\n') {
                        blank_comments_in_define(&mut out, range.0, range.1);
                    }
                    if name == "define" || name == "include" {
                        close_directive_line(&mut out, range.0, range.1, name);
                    }
                }
            }
        }
    }

    let text = match String::from_utf8(out) {
        Ok(s) => s,
        // Unreachable: whole lines are blanked and line ends are ASCII.
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    let guarded = Preprocessed::guarded_ranges(&conditionals);
    Preprocessed {
        text,
        conditionals,
        guarded,
        directives,
    }
}

/// The brackets open at the end of the C code read so far, for
/// [`preprocess`]'s `#include` inside an initializer.
#[derive(Default)]
struct Nesting {
    /// Each open bracket: whether it opens an expression (`(`, `[`, a `{`
    /// after `=`, `(`, `[`, or after `,` or `{` inside an expression: an
    /// initializer) rather than a body (a function's, a block's, a
    /// struct's or an enum's).
    open: Vec<bool>,
    /// The last byte of code other than a blank.
    last: u8,
}

impl Nesting {
    fn in_expression(&self) -> bool {
        self.open.last().copied().unwrap_or(false)
    }

    /// Reads one line of active C code (not a directive); `in_comment`: a
    /// block comment is open at its start.
    fn scan(&mut self, line: &str, in_comment: bool) {
        lex_c_line(line, in_comment, |_, c, literal| self.code(c, literal));
    }

    /// One byte of code, or of a literal.
    fn code(&mut self, c: u8, literal: bool) {
        if literal {
            self.last = b'"';
            return;
        }
        match c {
            b'(' | b'[' => self.open.push(true),
            b'{' => {
                let inside = self.in_expression();
                let expression = matches!(self.last, b'=' | b'(' | b'[')
                    || (inside && matches!(self.last, b',' | b'{'));
                self.open.push(expression);
            }
            b')' | b']' | b'}' => {
                self.open.pop();
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            self.last = c;
        }
    }
}

/// [`preprocess`] of `text`, given `prev`, the result of [`preprocess`] on
/// `old` with the same `defines` and `fortran`, and `edit`, the change from
/// `old` to `text`. Always equal to `preprocess(text, defines, fortran)`.
///
/// When the lines the edit touches hold no directive before or after it,
/// and they leave the state the next line is read in (inside a C block
/// comment or not, after a backslash-continued line or not) as it was, no
/// conditional can change: `prev` is patched (those lines copied, or
/// blanked in an inactive branch, and the offsets after them moved) in
/// time proportional to the edit and the number of directives, instead of
/// another pass over the whole text.
///
/// Also returns the change of the output text (`None`: unchanged), for an
/// incremental parse of it.
pub fn preprocess_edit(
    prev: Preprocessed,
    old: &str,
    text: &str,
    edit: crate::TextEdit,
    defines: &[String],
    fortran: bool,
) -> (Preprocessed, Option<crate::TextEdit>) {
    match patch(prev, old, text, edit, fortran) {
        Ok(p) => p,
        Err(prev) => {
            let p = preprocess(text, defines, fortran);
            let change = crate::TextEdit::between(&prev.text, &p.text);
            (p, change)
        }
    }
}

/// The patch described at [`preprocess_edit`], with the change of the
/// output; `Err(prev)` when it does not apply.
fn patch(
    mut prev: Preprocessed,
    old: &str,
    text: &str,
    edit: crate::TextEdit,
    fortran: bool,
) -> Result<(Preprocessed, Option<crate::TextEdit>), Preprocessed> {
    if !edit.fits(old.len(), text.len()) || prev.text.len() != old.len() {
        return Err(prev);
    }
    // The whole lines the edit touches: from the start of the line holding
    // `edit.start` to the end of the line holding `edit.old_end`.
    let ls = old.as_bytes()[..edit.start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let le_old = old.as_bytes()[edit.old_end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(old.len(), |i| edit.old_end + i + 1);
    let le_new = le_old + text.len() - old.len();
    if ls == 0 && (old.starts_with('\u{feff}') || text.starts_with('\u{feff}')) {
        return Err(prev);
    }
    // No `#include` after the edit start: whether it sits inside an
    // initializer (and is blanked) depends on the brackets before it.
    let is_include = |d: &(usize, usize)| {
        old.get(d.0..d.1).is_some_and(|t| {
            let t = t.trim_start().trim_start_matches('#').trim_start();
            t.starts_with("include")
        })
    };
    if !fortran
        && prev
            .directives
            .iter()
            .rev()
            .take_while(|d| d.1 >= ls)
            .any(is_include)
    {
        return Err(prev);
    }
    // No directive (with its continuation lines) on those lines before.
    let after = prev.directives.partition_point(|d| d.0 < le_old);
    if after > 0 && prev.directives[after - 1].1 >= ls {
        return Err(prev);
    }
    // Appending after the last line: a directive ending there would take
    // a new line as its continuation when it ends with `\` or an open
    // comment.
    if ls == le_old && ls > 0 {
        let last_line = old.as_bytes()[..ls - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        if prev.directives.last().is_some_and(|d| d.1 >= last_line) {
            return Err(prev);
        }
    }
    let old_lines = &old[ls..le_old];
    let new_lines = &text[ls..le_new];
    let contents = |s: &str| -> Vec<(usize, usize)> {
        split_lines(s)
            .into_iter()
            .map(|l| (l.start, l.content_end))
            .collect()
    };
    let (old_spans, new_spans) = (contents(old_lines), contents(new_lines));
    // No directive after either (a `#` line that is not one, in a comment or
    // after a continued line, counts too: the patch is only ever cautious).
    let has_hash = |s: &str, spans: &[(usize, usize)]| {
        spans
            .iter()
            .any(|&(a, b)| first_non_blank(&s[a..b]) == Some(b'#'))
    };
    if has_hash(old_lines, &old_spans) || has_hash(new_lines, &new_spans) {
        return Err(prev);
    }
    // The state after the lines, for either state before them, is the same
    // in both versions (it only matters when lines follow).
    if !fortran && le_old < old.len() {
        let end_state = |s: &str, spans: &[(usize, usize)], in_comment: bool| {
            let comment = spans
                .iter()
                .fold(in_comment, |c, &(a, b)| scan_c(&s[a..b], c));
            let continued = spans
                .last()
                .is_some_and(|&(a, b)| ends_with_backslash(&s[a..b]));
            (comment, continued)
        };
        for start_in_comment in [false, true] {
            if end_state(old_lines, &old_spans, start_in_comment)
                != end_state(new_lines, &new_spans, start_in_comment)
            {
                return Err(prev);
            }
        }
    }
    // The lines are in one branch (no directive among them): inactive when
    // an inactive branch's body holds them. A body that runs to the end of
    // the file (an unterminated conditional) holds lines appended there.
    let inactive = prev
        .conditionals
        .iter()
        .flat_map(|c| &c.branches)
        .any(|b| !b.active && b.body.0 <= ls && (ls < b.body.1 || b.body.1 == old.len()));
    let replacement: std::borrow::Cow<'_, str> = if inactive {
        new_lines
            .chars()
            .map(|c| match c {
                '\n' | '\r' => c.to_string(),
                c => " ".repeat(c.len_utf8()),
            })
            .collect::<String>()
            .into()
    } else {
        new_lines.into()
    };
    // `ls` and `le_old` follow a line end (or are the text's ends): char
    // boundaries of the previous output, whose line ends are the input's.
    if !prev.text.is_char_boundary(ls) || !prev.text.is_char_boundary(le_old) {
        return Err(prev);
    }
    let change =
        crate::TextEdit::between(&prev.text[ls..le_old], &replacement).map(|e| crate::TextEdit {
            start: ls + e.start,
            old_end: ls + e.old_end,
            new_end: ls + e.new_end,
        });
    prev.text.replace_range(ls..le_old, &replacement);

    // Offsets after the lines move; nothing recorded lies inside them.
    let delta = text.len() as isize - old.len() as isize;
    let (old_len, new_len) = (old.len(), text.len());
    let mv = |x: &mut usize| {
        if *x > ls {
            *x = (*x as isize + delta) as usize;
        }
    };
    for c in &mut prev.conditionals {
        for b in &mut c.branches {
            mv(&mut b.directive.0);
            mv(&mut b.directive.1);
            mv(&mut b.body.0);
            if b.body.1 == old_len {
                b.body.1 = new_len;
            } else {
                mv(&mut b.body.1);
            }
        }
        if let Some((s, e)) = &mut c.endif {
            mv(s);
            mv(e);
        }
    }
    for d in &mut prev.directives {
        mv(&mut d.0);
        mv(&mut d.1);
    }
    prev.guarded = Preprocessed::guarded_ranges(&prev.conditionals);
    Ok((prev, change))
}

/// A conditional still open at the current line.
struct Open {
    index: usize,
    parent_active: bool,
    /// The current branch is active.
    active: bool,
    /// Some branch was (or would have been) taken: later ones are inactive.
    taken: bool,
    /// An earlier condition asserted `__CSA__` undefined, so reaching a later
    /// branch implies it is defined.
    negated_csa: bool,
}

#[derive(Clone, Copy, Debug)]
struct LineSpan {
    start: usize,
    /// End of the text, before `\n` / `\r\n`.
    content_end: usize,
    /// After the line terminator.
    end: usize,
}

fn split_lines(text: &str) -> Vec<LineSpan> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let (line_end, end) = match bytes[start..].iter().position(|&b| b == b'\n') {
            Some(i) => (start + i, start + i + 1),
            None => (bytes.len(), bytes.len()),
        };
        let content_end = if line_end > start && bytes[line_end - 1] == b'\r' {
            line_end - 1
        } else {
            line_end
        };
        out.push(LineSpan {
            start,
            content_end,
            end,
        });
        start = end;
    }
    out
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | 0x0b | 0x0c | b'\r')
}

/// Whether a Fortran line whose first non-blank byte is `#` is a
/// directive: the `#` in column 1, or a directive's name after it. A `#`
/// after blanks before anything else is fixed form's continuation mark
/// in column 6 (`     #  x, y`): cpp reads directives in traditional mode
/// for Fortran, where only a `#` in column 1 starts one; an indented one
/// is kept when a directive's name follows, as other preprocessors
/// (fpp) read it.
fn fortran_directive(content: &str) -> bool {
    const NAMES: [&str; 13] = [
        "if", "ifdef", "ifndef", "elif", "else", "endif", "define", "undef", "include", "line",
        "error", "warning", "pragma",
    ];
    if content.starts_with('#') || content.starts_with("\u{feff}#") {
        return true;
    }
    let name = parse_directive(content).name;
    NAMES.contains(&name)
}

fn first_non_blank(s: &str) -> Option<u8> {
    s.bytes().find(|&b| !is_blank(b))
}

/// A backslash as the last non-blank byte continues the line.
fn ends_with_backslash(s: &str) -> bool {
    s.bytes().rev().find(|&b| !is_blank(b)) == Some(b'\\')
}

/// Every byte of `start..end` except `\n` and `\r` becomes a space.
fn blank(out: &mut [u8], start: usize, end: usize) {
    let end = end.min(out.len());
    if start >= end {
        return;
    }
    for b in &mut out[start..end] {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

/// A one-line `#define` with no value or an `#include`, at
/// `out[start..end]`, whose last token is followed by blanks before the
/// line end: the blanks are moved before the macro's name (or the
/// included path), so the line end follows at once. tree-sitter-c wants
/// the line end right after a `#define`'s name (or parameters) or an
/// `#include`'s path; after blanks it skips the line end as white space,
/// takes the next line for the macro's value (`#define GUARD_H ` then
/// `int table[4];`: the declaration is lost, without a syntax error) or
/// reports a missing token (`#include`). The name reads the same from its
/// new place; offsets elsewhere and line ends do not move.
fn close_directive_line(out: &mut [u8], start: usize, end: usize, directive: &str) {
    let Some(Ok(text)) = out.get(start..end.min(out.len())).map(std::str::from_utf8) else {
        return;
    };
    // one line, without its line end, then without its blanks
    let line = text.trim_end_matches(['\n', '\r']);
    let code = line.trim_end_matches([' ', '\t']);
    if line.contains('\n') || code.len() == line.len() {
        return;
    }
    let rest = parse_directive(code).rest.trim_start_matches([' ', '\t']);
    let ends_at_once = match directive {
        // a name, and its parameters if a `(` follows at once, and nothing
        // after them
        "define" => {
            let (name, after) = take_ident(rest);
            !name.is_empty()
                && (after.is_empty()
                    || after.starts_with('(') && after.find(')') == Some(after.len() - 1))
        }
        "include" => !rest.is_empty(),
        _ => false,
    };
    if !ends_at_once {
        return;
    }
    let (from, to, blanks) = (
        start + code.len() - rest.len(),
        start + line.len(),
        line.len() - code.len(),
    );
    out[from..to].rotate_right(blanks);
}

/// Blanks the comments of the multi-line `#define` at `out[start..end]`
/// (its continuation lines included): tree-sitter-c ends a macro's body at a
/// comment, so `x = 1; /* note */ \` in a multi-line macro made the rest
/// of the macro code at the top level. A comment that runs past a line
/// end leaves a `\` there, so the directive still continues.
fn blank_comments_in_define(out: &mut [u8], start: usize, end: usize) {
    let end = end.min(out.len());
    let mut code = vec![false; end - start];
    let mut ends: Vec<(usize, bool)> = Vec::new();
    let mut in_comment = false;
    let mut line_start = 0;
    for line in out[start..end].split(|&b| b == b'\n') {
        if let Ok(l) = std::str::from_utf8(line) {
            in_comment = lex_c_line(l, in_comment, |i, _, _| {
                if let Some(c) = code.get_mut(line_start + i) {
                    *c = true;
                }
            });
        } else {
            code[line_start..line_start + line.len()].fill(true);
        }
        ends.push((line_start + line.len(), in_comment));
        line_start += line.len() + 1;
    }
    for (i, is_code) in code.iter().enumerate() {
        let b = out[start + i];
        if !is_code && !matches!(b, b'\n' | b'\r') {
            out[start + i] = b' ';
        }
    }
    for (line_end, open) in ends {
        // the last byte of a line a comment runs past
        let mut k = line_end;
        while k > 0 && matches!(out[start + k - 1], b'\r') {
            k -= 1;
        }
        if open && k > 0 && !code[k - 1] {
            out[start + k - 1] = b'\\';
        }
    }
}

/// In a kept C directive `start..end`, the `/` of every `/*` inside a string
/// or character literal becomes a space: tree-sitter-c reads a directive's
/// argument as one token that ends at `/*` (a comment after it), so
/// `#define FMT "/* %c */"` would not parse. The literal's other bytes and
/// every offset stay; macro values are read from the original text.
fn hide_comment_openers_in_literals(out: &mut [u8], start: usize, end: usize) {
    let end = end.min(out.len());
    let mut hidden = Vec::new();
    let mut in_comment = false;
    let mut line_start = start;
    // the directive's lines (continuations, an open comment's lines)
    for line in out[start..end].split(|&b| b == b'\n') {
        let bytes = line;
        if let Ok(l) = std::str::from_utf8(line) {
            in_comment = lex_c_line(l, in_comment, |i, b, literal| {
                if literal && b == b'/' && bytes.get(i + 1) == Some(&b'*') {
                    hidden.push(line_start + i);
                }
            });
        }
        line_start += line.len() + 1;
    }
    for i in hidden {
        out[i] = b' ';
    }
}

/// Whether a C block comment is open at the end of `line`, given whether one
/// was open at its start. String and character literals end at the line end.
fn scan_c(line: &str, in_comment: bool) -> bool {
    lex_c_line(line, in_comment, |_, _, _| {})
}

/// The brackets (`(`, `[`, `{`) the C code of `text[range]` opens minus
/// those it closes, outside comments and literals (the range starts
/// outside a block comment); 0 for balanced code.
pub fn bracket_balance(text: &str, range: (usize, usize)) -> i64 {
    let Some(code) = text.get(range.0..range.1.min(text.len())) else {
        return 0;
    };
    let mut balance = 0i64;
    let mut in_comment = false;
    for line in code.lines() {
        in_comment = lex_c_line(line, in_comment, |_, c, literal| {
            if !literal {
                match c {
                    b'(' | b'[' | b'{' => balance += 1,
                    b')' | b']' | b'}' => balance -= 1,
                    _ => {}
                }
            }
        });
    }
    balance
}

/// The modules and main programs the Fortran code of `text[range]` opens
/// (`module m`, `submodule (p) s`, `program p`) minus those it ends (`end
/// module`, `end submodule`, `end program`, each word case-insensitive):
/// 0 for a branch that holds whole units or none. (A branch opening a unit
/// that another closes reads as compiled only with one of the two.)
pub fn fortran_unit_balance(text: &str, range: (usize, usize)) -> i64 {
    let Some(code) = text.get(range.0..range.1.min(text.len())) else {
        return 0;
    };
    let mut balance = 0i64;
    let name = |w: &str| {
        w.starts_with(|c: char| c.is_ascii_alphabetic())
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    for line in code.lines() {
        let code = line
            .split('!')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let words: Vec<&str> = code.split_whitespace().collect();
        balance += match words.as_slice() {
            // (`module procedure f` names procedures of an interface)
            ["module", "procedure", ..] => 0,
            ["module" | "program", n] if name(n) => 1,
            [w, ..] if w.starts_with("submodule") && code[9..].trim_start().starts_with('(') => 1,
            ["end", "module" | "submodule" | "program", rest @ ..] if rest.len() <= 1 => -1,
            ["endmodule" | "endsubmodule" | "endprogram", rest @ ..] if rest.len() <= 1 => -1,
            _ => 0,
        };
    }
    balance
}

/// The identifiers of the condition of the directive `text[range]` (`#if
/// A && !defined(B)`: `A`, `B`), without the directive's own word and
/// `defined`.
pub fn condition_names(text: &str, range: (usize, usize)) -> Vec<String> {
    let Some(line) = text.get(range.0..range.1.min(text.len())) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for t in tokenize(parse_directive(line).rest) {
        if let Tok::Ident(name) = t {
            if name != "defined" && !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// The names `text` `#define`s anywhere (also in inactive code).
fn file_defines(text: &str) -> std::collections::HashSet<String> {
    text.lines()
        .filter(|l| l.trim_start().starts_with('#'))
        .map(parse_directive)
        .filter(|d| d.name == "define")
        .map(|d| take_ident(d.rest.trim_start()).0.to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// Reads one line of C: `on(offset, byte, in_literal)` gets every byte
/// outside comments, with whether it belongs to a string or character
/// literal (its quotes included); the result says whether a block comment
/// is open at the end (`in_comment`: at the start). Literals end at the
/// line end.
fn lex_c_line(line: &str, in_comment: bool, mut on: impl FnMut(usize, u8, bool)) -> bool {
    let b = line.as_bytes();
    let mut in_comment = in_comment;
    let mut i = 0;
    while i < b.len() {
        if in_comment {
            if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                in_comment = false;
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'*') => {
                in_comment = true;
                i += 2;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => return false,
            q @ (b'"' | b'\'') => {
                on(i, q, true);
                i += 1;
                while i < b.len() {
                    on(i, b[i], true);
                    if b[i] == b'\\' {
                        if let Some(&e) = b.get(i + 1) {
                            on(i + 1, e, true);
                        }
                        i += 2;
                        continue;
                    }
                    i += 1;
                    if b[i - 1] == q {
                        break;
                    }
                }
            }
            c => {
                on(i, c, false);
                i += 1;
            }
        }
    }
    in_comment
}

/// The text of a logical directive line: backslash-newlines removed,
/// comments replaced by a space.
fn join_logical(text: &str, lines: &[LineSpan]) -> String {
    let mut joined = String::new();
    for (k, l) in lines.iter().enumerate() {
        let content = &text[l.start..l.content_end];
        if k + 1 < lines.len() && ends_with_backslash(content) {
            let trimmed = content.trim_end_matches([' ', '\t', '\x0b', '\x0c', '\r']);
            joined.push_str(trimmed.strip_suffix('\\').unwrap_or(trimmed));
        } else {
            joined.push_str(content);
            joined.push('\n');
        }
    }
    strip_comments(&joined)
}

/// C text without its comments: a `/* */` becomes one space, a `//`
/// comment is dropped up to its line end; literals are kept whole.
pub fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = '\0';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
                out.push(' ');
            }
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' | '\'' => {
                out.push(c);
                while let Some(d) = chars.next() {
                    out.push(d);
                    if d == '\\' {
                        if let Some(e) = chars.next() {
                            out.push(e);
                        }
                    } else if d == c || d == '\n' {
                        break;
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

struct Directive<'a> {
    name: &'a str,
    rest: &'a str,
}

fn parse_directive(logical: &str) -> Directive<'_> {
    let s = logical.trim_start_matches([' ', '\t', '\x0b', '\x0c', '\r', '\u{feff}']);
    let s = s.strip_prefix('#').unwrap_or(s);
    let s = s.trim_start_matches([' ', '\t', '\x0b', '\x0c', '\r']);
    let (name, rest) = take_ident(s);
    Directive { name, rest }
}

/// Splits a leading identifier (`[A-Za-z0-9_]*`) off `s`.
fn take_ident(s: &str) -> (&str, &str) {
    let n = s
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
        .unwrap_or(s.len());
    s.split_at(n)
}

fn is_ident(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

// ------------------------------------------------------------ conditions

/// The names treated as defined and their values.
struct Env {
    names: HashMap<String, i64>,
    /// [`preprocess_as_compiled`]: names read as undefined.
    undefined: std::collections::HashSet<String>,
    /// [`preprocess_as_compiled`]: names the file defines, read with the
    /// number its active `#define` gives them from there on.
    valued: std::collections::HashSet<String>,
    /// [`header_macros`]: every name not in `names` read as undefined.
    all_undefined: bool,
}

/// What a condition evaluates to and what it says about `__CSA__`.
struct Condition {
    /// `None` when unknown.
    truth: Option<bool>,
    guard: CsaGuard,
}

impl Env {
    fn new(defines: &[String]) -> Self {
        let mut names = HashMap::new();
        names.insert("__CSA__".to_string(), 1);
        let mut env = Env {
            names,
            undefined: std::collections::HashSet::new(),
            valued: std::collections::HashSet::new(),
            all_undefined: false,
        };
        for d in defines {
            let (name, value) = d.split_once('=').unwrap_or((d, "1"));
            env.define(name.trim(), value);
        }
        env
    }

    /// `name` defined as `value` (its number, else 1).
    fn define(&mut self, name: &str, value: &str) {
        if is_ident(name) {
            self.names.insert(
                name.to_string(),
                cint::literal_i64(value.trim()).unwrap_or(1),
            );
        }
    }

    /// Undefined as the text is compiled ([`preprocess_as_compiled`]).
    fn undefined_as_compiled(&self, name: &str) -> bool {
        (self.all_undefined || self.undefined.contains(name)) && !self.names.contains_key(name)
    }

    /// Defined for this analysis: `__CSA__` and the user's defines.
    fn is_csa_name(&self, name: &str) -> bool {
        self.names.contains_key(name)
    }

    /// Known not to be defined: `__cplusplus` (csa-lint reads C and Fortran,
    /// which no C++ compiler builds), unless the user defines it. The
    /// `#ifdef __cplusplus` of a C header (`extern "C" {`) is inactive.
    fn is_known_undefined(&self, name: &str) -> bool {
        (name == "__cplusplus" && !self.is_csa_name(name)) || self.undefined_as_compiled(name)
    }

    /// Only `__CSA__` guards a builtin: a user define may be set in builds
    /// for other targets too, where the builtins do not exist.
    fn is_guard_name(name: &str) -> bool {
        name == "__CSA__"
    }

    fn condition(&self, kind: DirectiveKind, rest: &str) -> Condition {
        match kind {
            DirectiveKind::Ifdef
            | DirectiveKind::Elifdef
            | DirectiveKind::Ifndef
            | DirectiveKind::Elifndef => {
                let (name, _) = take_ident(rest.trim_start());
                let positive = matches!(kind, DirectiveKind::Ifdef | DirectiveKind::Elifdef);
                if self.is_csa_name(name) {
                    Condition {
                        truth: Some(positive),
                        guard: if !Self::is_guard_name(name) {
                            CsaGuard::None
                        } else if positive {
                            CsaGuard::Positive
                        } else {
                            CsaGuard::Negative
                        },
                    }
                } else if self.is_known_undefined(name) {
                    Condition {
                        truth: Some(!positive),
                        guard: CsaGuard::None,
                    }
                } else {
                    Condition {
                        truth: None,
                        guard: CsaGuard::None,
                    }
                }
            }
            DirectiveKind::Else => Condition {
                truth: Some(true),
                guard: CsaGuard::None,
            },
            DirectiveKind::If | DirectiveKind::Elif => {
                let toks = tokenize(rest);
                let truth = eval(
                    &toks,
                    &|id: &str| match id {
                        "true" => Some(1),
                        "false" => Some(0),
                        // an undefined name is 0 in a condition
                        _ if self.is_known_undefined(id) => Some(0),
                        _ => self.names.get(id).copied(),
                    },
                    &|id: &str| {
                        if self.is_known_undefined(id) {
                            Some(false)
                        } else {
                            self.is_csa_name(id).then_some(true)
                        }
                    },
                )
                .map(|v| v != 0);
                Condition {
                    truth,
                    guard: self.guard(&toks),
                }
            }
        }
    }

    /// Positive for an assertion that a CSA name is defined (possibly one
    /// operand of a top-level `&&`), Negative for its negation.
    fn guard(&self, toks: &[Tok<'_>]) -> CsaGuard {
        let toks = strip_parens(toks);
        if self.is_assertion(toks) {
            return CsaGuard::Positive;
        }
        if let Some((Tok::Op(Op::Un(UnOp::Not)), rest)) = toks.split_first() {
            if self.is_assertion(strip_parens(rest)) {
                return CsaGuard::Negative;
            }
        }
        // `A && B && ...` with no `||` or `?:` at the top level.
        let mut depth = 0i64;
        let mut operands: Vec<&[Tok<'_>]> = Vec::new();
        let mut start = 0;
        for (k, t) in toks.iter().enumerate() {
            match t {
                Tok::LParen => depth += 1,
                Tok::RParen => depth -= 1,
                Tok::Op(Op::Bin(BinOp::LogOr) | Op::Question | Op::Colon) if depth == 0 => {
                    return CsaGuard::None
                }
                Tok::Op(Op::Bin(BinOp::LogAnd)) if depth == 0 => {
                    operands.push(&toks[start..k]);
                    start = k + 1;
                }
                _ => {}
            }
        }
        operands.push(&toks[start..]);
        if operands.len() > 1 && operands.iter().any(|o| self.is_assertion(strip_parens(o))) {
            CsaGuard::Positive
        } else {
            CsaGuard::None
        }
    }

    /// `defined(N)`, `defined N` or `N` for a CSA name `N`.
    fn is_assertion(&self, toks: &[Tok<'_>]) -> bool {
        match toks {
            [Tok::Ident("defined"), Tok::LParen, Tok::Ident(n), Tok::RParen]
            | [Tok::Ident("defined"), Tok::Ident(n)]
            | [Tok::Ident(n)] => Self::is_guard_name(n),
            _ => false,
        }
    }
}

/// Removes parentheses around the whole token list, repeatedly.
fn strip_parens<'t, 'a>(mut toks: &'t [Tok<'a>]) -> &'t [Tok<'a>] {
    while toks.len() >= 2 && toks[0] == Tok::LParen && toks[toks.len() - 1] == Tok::RParen {
        // The first paren must close at the very end.
        let mut depth = 0i64;
        let mut closes_at_end = true;
        for (k, t) in toks.iter().enumerate() {
            match t {
                Tok::LParen => depth += 1,
                Tok::RParen => depth -= 1,
                _ => {}
            }
            if depth == 0 && k + 1 < toks.len() {
                closes_at_end = false;
                break;
            }
        }
        if !closes_at_end {
            break;
        }
        toks = &toks[1..toks.len() - 1];
    }
    toks
}

/// An operator token of a `#if` expression: the C operators of
/// `cint` (`+` and `-` are read as binary, then as unary where an operand
/// is expected), and the two halves of `?:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Un(UnOp),
    Bin(BinOp),
    Question,
    Colon,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'a> {
    /// An integer literal; `None` when it is not one we can read (a float,
    /// a character literal, an out-of-range value).
    Num(Option<i64>),
    Ident(&'a str),
    Op(Op),
    LParen,
    RParen,
    /// Anything else: makes the expression unknown.
    Other,
}

fn tokenize(s: &str) -> Vec<Tok<'_>> {
    let b = s.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let start = i;
            while i < b.len() {
                let d = b[i];
                let exp_sign = (d == b'+' || d == b'-')
                    && i > start
                    && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P')
                    && !b[start..i].starts_with(b"0x")
                    && !b[start..i].starts_with(b"0X");
                let separator = d == b'\'' && b.get(i + 1).is_some_and(u8::is_ascii_alphanumeric);
                if d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || exp_sign || separator {
                    i += 1;
                } else {
                    break;
                }
            }
            toks.push(Tok::Num(cint::literal_i64(&s[start..i])));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            toks.push(Tok::Ident(&s[start..i]));
            continue;
        }
        if c == b'\'' {
            // A character literal: its value is not worked out.
            i += 1;
            while i < b.len() {
                if b[i] == b'\\' {
                    i += 2;
                    continue;
                }
                i += 1;
                if b[i - 1] == b'\'' {
                    break;
                }
            }
            toks.push(Tok::Num(None));
            continue;
        }
        let two = if i + 1 < b.len() {
            &b[i..i + 2]
        } else {
            &b[i..i + 1]
        };
        let op = |t: &[u8]| {
            let t = std::str::from_utf8(t).unwrap_or("");
            BinOp::from_token(t)
                .map(Op::Bin)
                .or_else(|| UnOp::from_token(t).map(Op::Un))
        };
        let (tok, len) = match (two.len() == 2).then(|| op(two)).flatten() {
            Some(o) => (Tok::Op(o), 2),
            None => match c {
                b'(' => (Tok::LParen, 1),
                b')' => (Tok::RParen, 1),
                b'?' => (Tok::Op(Op::Question), 1),
                b':' => (Tok::Op(Op::Colon), 1),
                _ => match op(&b[i..i + 1]) {
                    Some(o) => (Tok::Op(o), 1),
                    None => (Tok::Other, s[i..].chars().next().map_or(1, char::len_utf8)),
                },
            },
        };
        toks.push(tok);
        i += len;
    }
    toks
}

fn precedence(op: Op) -> u8 {
    match op {
        Op::Un(_) => 14,
        Op::Bin(b) => match b {
            BinOp::Mul | BinOp::Div | BinOp::Rem => 13,
            BinOp::Add | BinOp::Sub => 12,
            BinOp::Shl | BinOp::Shr => 11,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 10,
            BinOp::Eq | BinOp::Ne => 9,
            BinOp::BitAnd => 8,
            BinOp::BitXor => 7,
            BinOp::BitOr => 6,
            BinOp::LogAnd => 5,
            BinOp::LogOr => 4,
        },
        Op::Question | Op::Colon => 3,
    }
}

fn right_assoc(op: Op) -> bool {
    matches!(op, Op::Un(_) | Op::Question | Op::Colon)
}

/// Operator-stack entries: an operator or an open parenthesis.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stacked {
    Op(Op),
    Paren,
}

/// Evaluates a preprocessor expression with three-valued results (`None`:
/// unknown), by shunting-yard: no recursion, whatever the nesting. `ident`
/// gives identifiers' values, `defined` whether a name is defined (`None`:
/// unknown). Any syntax error makes the whole expression unknown.
/// The truth of a `#if` expression when `ident` gives each identifier's
/// value and `defined` answers `defined(NAME)`; `None` when it is not a
/// valid expression or uses a value `ident` does not give.
pub fn eval_if(
    expr: &str,
    ident: &dyn Fn(&str) -> Option<i64>,
    defined: &dyn Fn(&str) -> Option<bool>,
) -> Option<bool> {
    eval(&tokenize(expr), ident, defined).map(|v| v != 0)
}

fn eval(
    toks: &[Tok<'_>],
    ident: &dyn Fn(&str) -> Option<i64>,
    defined: &dyn Fn(&str) -> Option<bool>,
) -> Option<i64> {
    // `None` in the outer Option: syntax error.
    fn run(
        toks: &[Tok<'_>],
        ident: &dyn Fn(&str) -> Option<i64>,
        defined: &dyn Fn(&str) -> Option<bool>,
    ) -> Option<Option<i64>> {
        let mut values: Vec<Option<i64>> = Vec::new();
        let mut ops: Vec<Stacked> = Vec::new();
        let mut expect_operand = true;
        let mut k = 0;
        while k < toks.len() {
            let t = toks[k];
            k += 1;
            match t {
                Tok::Num(v) => {
                    if !expect_operand {
                        return None;
                    }
                    values.push(v);
                    expect_operand = false;
                }
                Tok::Ident("defined") => {
                    if !expect_operand {
                        return None;
                    }
                    let name = match (toks.get(k), toks.get(k + 1), toks.get(k + 2)) {
                        (Some(Tok::LParen), Some(Tok::Ident(n)), Some(Tok::RParen)) => {
                            k += 3;
                            *n
                        }
                        (Some(Tok::Ident(n)), _, _) => {
                            k += 1;
                            *n
                        }
                        _ => return None,
                    };
                    values.push(defined(name).map(i64::from));
                    expect_operand = false;
                }
                Tok::Ident(name) => {
                    if !expect_operand {
                        return None;
                    }
                    // A function-like macro call: unknown value.
                    if toks.get(k) == Some(&Tok::LParen) {
                        let mut depth = 0i64;
                        while k < toks.len() {
                            match toks[k] {
                                Tok::LParen => depth += 1,
                                Tok::RParen => depth -= 1,
                                _ => {}
                            }
                            k += 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        if depth != 0 {
                            return None;
                        }
                        values.push(None);
                    } else {
                        values.push(ident(name));
                    }
                    expect_operand = false;
                }
                Tok::LParen => {
                    if !expect_operand {
                        return None;
                    }
                    ops.push(Stacked::Paren);
                }
                Tok::RParen => {
                    if expect_operand {
                        return None;
                    }
                    loop {
                        match ops.pop() {
                            Some(Stacked::Paren) => break,
                            Some(Stacked::Op(op)) => apply(op, &mut values)?,
                            None => return None,
                        }
                    }
                }
                Tok::Op(op) => {
                    let op = if expect_operand {
                        match op {
                            Op::Bin(BinOp::Sub) => Op::Un(UnOp::Neg),
                            Op::Bin(BinOp::Add) => Op::Un(UnOp::Plus),
                            Op::Un(_) => op,
                            _ => return None,
                        }
                    } else if matches!(op, Op::Un(_)) {
                        return None;
                    } else {
                        op
                    };
                    if matches!(op, Op::Un(_)) {
                        ops.push(Stacked::Op(op));
                        continue;
                    }
                    if op == Op::Colon {
                        // Close the operators of the `?` branch.
                        loop {
                            match ops.last() {
                                Some(Stacked::Op(Op::Question)) => break,
                                Some(Stacked::Op(o)) => {
                                    let o = *o;
                                    ops.pop();
                                    apply(o, &mut values)?;
                                }
                                _ => return None,
                            }
                        }
                        ops.pop();
                        ops.push(Stacked::Op(Op::Colon));
                        expect_operand = true;
                        continue;
                    }
                    let p = precedence(op);
                    while let Some(Stacked::Op(top)) = ops.last() {
                        let top = *top;
                        let tp = precedence(top);
                        let pops = if right_assoc(op) { tp > p } else { tp >= p };
                        if !pops || top == Op::Question {
                            break;
                        }
                        ops.pop();
                        apply(top, &mut values)?;
                    }
                    ops.push(Stacked::Op(op));
                    expect_operand = true;
                }
                Tok::Other => return None,
            }
        }
        if expect_operand {
            return None;
        }
        while let Some(s) = ops.pop() {
            match s {
                Stacked::Op(op) => apply(op, &mut values)?,
                Stacked::Paren => return None,
            }
        }
        if values.len() == 1 {
            values.pop()
        } else {
            None
        }
    }
    run(toks, ident, defined).flatten()
}

/// Applies `op` to the top of `values`; `None` on a syntax error (missing
/// operands, a `?` without `:`).
fn apply(op: Op, values: &mut Vec<Option<i64>>) -> Option<()> {
    let op = match op {
        Op::Un(u) => {
            let a = values.pop()?;
            values.push(a.map(|a| cint::unop(u, a)));
            return Some(());
        }
        Op::Question => return None,
        Op::Colon => {
            let else_v = values.pop()?;
            let then_v = values.pop()?;
            let cond = values.pop()?;
            values.push(match cond {
                Some(0) => else_v,
                Some(_) => then_v,
                None if then_v == else_v => then_v,
                None => None,
            });
            return Some(());
        }
        Op::Bin(b) => b,
    };
    let b = values.pop()?;
    let a = values.pop()?;
    // What is known without both operands (`0 && x`, `1 || x`, `0 * x`);
    // the rest as `cint::binop` says.
    let r = match op {
        BinOp::LogAnd => match (a, b) {
            (Some(0), _) | (_, Some(0)) => Some(0),
            (Some(_), Some(_)) => Some(1),
            _ => None,
        },
        BinOp::LogOr => match (a, b) {
            (Some(x), _) | (_, Some(x)) if x != 0 => Some(1),
            (Some(_), Some(_)) => Some(0),
            _ => None,
        },
        BinOp::Mul if a == Some(0) || b == Some(0) => Some(0),
        _ => match (a, b) {
            (Some(a), Some(b)) => cint::binop(op, a, b),
            _ => None,
        },
    };
    values.push(r);
    Some(())
}

#[cfg(test)]
mod tests;
