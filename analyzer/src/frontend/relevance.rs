//! Which function bodies the front ends lower.
//!
//! Every function-level rule starts from one of these: a CSA builtin call
//! (written out or through a macro), a pragma or directive (OpenMP, ivdep,
//! unroll), a jump that can give a loop a second entry (CSA002), or a
//! syntax error (CSA001). A function whose text holds none of them cannot
//! produce a diagnostic, and no other function's analysis reads its IR
//! (functions are analysed one by one; file-wide facts such as macros and
//! types come from the front ends' scans, which still see every body). So
//! the front ends give such a function an outline
//! ([`crate::ir::Function::outline`]) instead of lowering it: on typical
//! files most functions hold no builtin, and lowering and analysing them
//! was most of the time spent after parsing.
//!
//! The tests are textual and err on the side of lowering: a keyword in a
//! comment or a string lowers the function anyway.
//!
//! Invariant (tested over every fixture and the benchmark's generated
//! files): the diagnostics are the same with and without
//! [`super::FrontendOptions::every_body`].

use memchr::memmem;
use crate::frontend::flat::FNode as Node;

/// Substrings of a C function's text that make it worth lowering: CSA
/// builtins (also misspelt ones), `#pragma`/`_Pragma`/`__pragma` and
/// `[[intel::ivdep]]`.
const C_MARKS: [&str; 4] = ["builtin_csa", "pragma", "Pragma", "ivdep"];

/// Whether a C `function_definition` must be lowered. `text` is the
/// function's text; `csa_macros` are the names of the macros that can
/// expand to a builtin or a pragma (see [`csa_macro_names`]).
/// (The front end asks the two parts itself: the text first, then, only
/// when that does not settle it, the tree.)
#[cfg(test)]
pub(crate) fn c_needs_lowering(function: Node<'_>, text: &str, csa_macros: &[&str]) -> bool {
    c_needs_lowering_by_text(function.has_error(), text, csa_macros)
        .unwrap_or_else(|| c_case_inside_loop(function, text))
}

/// What a C function's text (and whether its tree holds an error) settles
/// of [`c_needs_lowering`]: `None` when only its `switch` statements can
/// tell ([`c_case_inside_loop`] on its tree).
pub(crate) fn c_needs_lowering_by_text(
    has_error: bool,
    text: &str,
    csa_macros: &[&str],
) -> Option<bool> {
    let t = text.as_bytes();
    if has_error
        || C_MARKS
            .iter()
            .any(|m| memmem::find(t, m.as_bytes()).is_some())
        || contains_word(t, b"goto")
        || csa_macros.iter().any(|m| contains_word(t, m.as_bytes()))
    {
        return Some(true);
    }
    (!contains_word(t, b"switch")).then_some(false)
}

/// Whether a C function (with text `text`) has a `case` label inside a
/// loop inside the label's `switch`.
pub(crate) fn c_case_inside_loop(function: Node<'_>, text: &str) -> bool {
    switches(function, text.as_bytes()).any(case_inside_loop)
}

/// Whether a C function body's text may define file-wide facts (what
/// `FileCtx::scan` records inside bodies): false only when it provably
/// cannot, so the scan can skip the body without walking it. That needs no
/// `#`, no `struct`, `union`, `enum` or `typedef`, and every `{` but the
/// body's own opening a statement block, an initialiser or a statement
/// expression, not a nested function's body (after `)` only the parentheses
/// of `if`, `for`, `while` or `switch` qualify).
pub(crate) fn c_body_may_define_facts(body: &[u8]) -> bool {
    if memchr::memchr(b'#', body).is_some()
        || [&b"struct"[..], b"union", b"enum", b"typedef"]
            .iter()
            .any(|w| contains_word(body, w))
    {
        return true;
    }
    let trim = |t: &[u8]| -> usize {
        t.iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(0, |i| i + 1)
    };
    let last_word = |t: &[u8]| -> std::ops::Range<usize> {
        let end = trim(t);
        let start = t[..end]
            .iter()
            .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .map_or(0, |i| i + 1);
        start..end
    };
    for i in memchr::memchr_iter(b'{', body).skip(1) {
        let end = trim(&body[..i]);
        match body[..end].last() {
            Some(b'=' | b',' | b'(' | b'{' | b'}' | b';' | b':') => {}
            Some(b')') => {
                // the matching `(` (no quotes in between), then its keyword
                let Some(open) = matching_open(body, end - 1, b"\"'") else {
                    return true;
                };
                let w = last_word(&body[..open]);
                if !matches!(&body[w], b"if" | b"for" | b"while" | b"switch") {
                    return true;
                }
            }
            Some(_) => {
                let w = last_word(&body[..end]);
                if !matches!(&body[w], b"else" | b"do") {
                    return true;
                }
            }
            None => return true,
        }
    }
    false
}

/// The `(` matching the `)` at `close` in `b`, searching back; `None` when
/// a byte of `stops` comes first or the parentheses do not balance.
pub(crate) fn matching_open(b: &[u8], close: usize, stops: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    for j in (0..=close.min(b.len().checked_sub(1)?)).rev() {
        match b[j] {
            b')' => depth += 1,
            b'(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(j);
                }
            }
            c if stops.contains(&c) => return None,
            _ => {}
        }
    }
    None
}

/// Whether a macro body can expand to something [`c_needs_lowering`] looks
/// for by itself.
pub(crate) fn c_macro_body_is_relevant(body: &str) -> bool {
    let b = body.as_bytes();
    C_MARKS
        .iter()
        .any(|m| memmem::find(b, m.as_bytes()).is_some())
}

/// The names of the macros that can expand to a builtin or a pragma,
/// directly or through other such macros. `macros` yields each macro's
/// name and the bodies of its definitions. `None` when the chains are too
/// long to follow: then every function is lowered.
pub(crate) fn csa_macro_names<'m>(
    macros: impl Iterator<Item = (&'m str, Vec<&'m str>)> + Clone,
) -> Option<Vec<&'m str>> {
    const MAX_ROUNDS: usize = 64;
    let mut found: Vec<&str> = macros
        .clone()
        .filter(|(_, bodies)| bodies.iter().any(|b| c_macro_body_is_relevant(b)))
        .map(|(name, _)| name)
        .collect();
    for _ in 0..MAX_ROUNDS {
        let before = found.len();
        for (name, bodies) in macros.clone() {
            if found.contains(&name) {
                continue;
            }
            if bodies.iter().any(|b| {
                found
                    .iter()
                    .any(|f| contains_word(b.as_bytes(), f.as_bytes()))
            }) {
                found.push(name);
            }
        }
        if found.len() == before {
            return Some(found);
        }
    }
    None
}

/// The `switch` statements of a function whose text is `t`, found from
/// their keywords (walking the whole function would cost as much as
/// lowering it).
fn switches<'t>(function: Node<'t>, t: &'t [u8]) -> impl Iterator<Item = Node<'t>> + 't {
    let base = function.start_byte();
    word_positions(t, b"switch").filter_map(move |i| {
        let keyword = function.descendant_for_byte_range(base + i, base + i + 6)?;
        keyword.parent().filter(|p| p.kind() == "switch_statement")
    })
}

/// A `case` or `default` label inside a loop that is inside the label's
/// `switch` (Duff's device): the switch jumps into the loop's middle.
fn case_inside_loop(switch: Node<'_>) -> bool {
    // (node, inside a switch, inside a loop inside the innermost switch)
    let mut stack = vec![(switch, false, false)];
    while let Some((n, in_switch, loop_in_switch)) = stack.pop() {
        let (s, l) = match n.kind() {
            "case_statement" if loop_in_switch => return true,
            "switch_statement" => (true, false),
            "for_statement" | "while_statement" | "do_statement" => (in_switch, in_switch),
            // statements that hold statements (expressions and
            // declarations hold none, short of GNU statement expressions)
            "function_definition"
            | "compound_statement"
            | "case_statement"
            | "if_statement"
            | "else_clause"
            | "labeled_statement"
            | "attributed_statement"
            | "preproc_if"
            | "preproc_ifdef"
            | "preproc_else"
            | "preproc_elif"
            | "preproc_elifdef" => (in_switch, loop_in_switch),
            _ => continue,
        };
        stack.extend(n.children().map(|k| (k, s, l)));
    }
    false
}

/// How much of a Fortran program unit must be lowered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum FortranNeed {
    /// Nothing: an outline.
    Outline,
    /// Its control flow only: the unit holds jumps (which CSA002 looks at)
    /// and nothing else any rule reads, so the statements that cannot jump
    /// may be opaque (see `fortran::CopyPlan` and
    /// [`crate::ir::Function::skeleton`]).
    Control,
    /// Everything.
    Full,
}

/// How much of a Fortran program unit must be lowered. `text` is the
/// unit's text as the parser saw it; `has_error`: the unit holds a syntax
/// error.
///
/// Jumps in Fortran go to statement labels: `GO TO` (every form),
/// arithmetic `IF (x) 10, 20, 30`, `ERR=`/`END=`/`EOR=` in I/O statements
/// and alternate returns (`CALL S(*10)`); a unit with jumps and nothing
/// else is [`FortranNeed::Control`]. `ENTRY` adds entry points, a CSA
/// builtin or a directive (a `$` anywhere: `!$OMP`, `!DIR$`, `!GCC$`,
/// `C$OMP`) or a syntax error needs everything. Blanks are insignificant in
/// fixed form, so the text is compared without whitespace, continuation
/// marks and case.
pub(crate) fn fortran_lowering_need(text: &str, has_error: bool) -> FortranNeed {
    if has_error {
        return FortranNeed::Full;
    }
    let Some(squeezed) = fortran_code_squeezed(text) else {
        // a directive
        return FortranNeed::Full;
    };
    let s = squeezed.as_slice();
    let has = |m: &str| memmem::find(s, m.as_bytes()).is_some();
    if ["builtin_csa", "$", "entry"].iter().any(|m| has(m)) {
        return FortranNeed::Full;
    }
    const JUMPS: [&str; 7] = ["goto", ",err=", "(err=", ",end=", "(end=", ",eor=", "(eor="];
    let jumps = JUMPS.iter().any(|m| has(m))
        || s.windows(2).enumerate().any(|(i, w)| {
            // `IF (x) 10, 20, 30`
            (w[0] == b')' && w[1].is_ascii_digit())
            // `CALL S(A, *10)`
            || (w[0] == b'*'
                && w[1].is_ascii_digit()
                && i > 0
                && matches!(s[i - 1], b'(' | b','))
        });
    if jumps {
        FortranNeed::Control
    } else {
        FortranNeed::Outline
    }
}

/// The code of a Fortran unit's text, lower-cased, without blanks, `&` and
/// comments ([`fortran_code_blanked`]): a word in a comment (`the (i,j)
/// entry`, `go to the next column`) is no jump, and most units of a
/// documented code base have such words. `None` when a comment is a
/// directive.
fn fortran_code_squeezed(text: &str) -> Option<Vec<u8>> {
    let (mut code, directive) = fortran_code_blanked(text);
    if directive {
        return None;
    }
    code.retain(|b| !b.is_ascii_whitespace() && *b != b'&');
    code.make_ascii_lowercase();
    Some(code)
}

/// Whether the comment whose `!` is at `i` is a directive: at most five
/// letters, then `$`.
fn directive_sentinel(bytes: &[u8], i: usize) -> bool {
    let letters = bytes[i + 1..]
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_alphabetic())
        .count();
    letters <= 5 && bytes.get(i + 1 + letters) == Some(&b'$')
}

/// Fortran text (free form, as the parser sees it: fixed form normalised)
/// with its `!` comments blanked (each byte a space, line ends kept), and
/// whether some comment is a directive: `!` followed by at most five letters
/// and a `$` (`!$OMP`, `!$` conditional code, `!DIR$`, `!GCC$`), which the
/// analysis reads; other comments (`! the (i,j) entry`, a `$` in
/// documentation) are prose. Character literals are code (a `!` in one
/// starts no comment); one continued onto the next line (`&` at the end of
/// the line inside it) goes on there. Each line is read from one quote or
/// `!` to the next (memchr), not byte by byte.
fn fortran_code_blanked(text: &str) -> (Vec<u8>, bool) {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut directive = false;
    let mut quote: Option<u8> = None;
    let mut start = 0;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |k| start + k);
        // from one byte that matters to the next: a quote, or a `!`
        // outside a character literal
        let mut i = start;
        loop {
            match quote {
                Some(q) => match memchr::memchr(q, &bytes[i..end]) {
                    Some(k) => {
                        quote = None;
                        i += k + 1;
                    }
                    None => break,
                },
                None => match memchr::memchr3(b'!', b'\'', b'"', &bytes[i..end]) {
                    Some(k) if bytes[i + k] == b'!' => {
                        directive |= directive_sentinel(bytes, i + k);
                        out[i + k..end].fill(b' ');
                        break;
                    }
                    Some(k) => {
                        quote = Some(bytes[i + k]);
                        i += k + 1;
                    }
                    None => break,
                },
            }
        }
        // a literal open at the end of the line goes on only after `&`
        if quote.is_some()
            && bytes[start..end]
                .iter()
                .rev()
                .find(|b| !b.is_ascii_whitespace())
                != Some(&b'&')
        {
            quote = None;
        }
        start = end + 1;
    }
    (out, directive)
}

/// Whether a Fortran program unit must be lowered at all
/// ([`fortran_lowering_need`] is not [`FortranNeed::Outline`]).
pub(crate) fn fortran_needs_lowering(text: &str, has_error: bool) -> bool {
    fortran_lowering_need(text, has_error) != FortranNeed::Outline
}

/// Where each unit the file defines (`subroutine name`, `function name`)
/// is called in a Fortran file (`CALL name`, and `name(`,
/// which may also be an array element or a function reference), by
/// lower-cased name: a unit called from outside itself is lowered in full
/// for the effect summaries of its callers (`frontend::callees`). Empty
/// when the file holds no CSA builtin and no directive (no caller then
/// needs a summary).
#[derive(Default)]
pub(crate) struct FortranCalls(rustc_hash::FxHashMap<String, Vec<usize>>);

impl FortranCalls {
    /// Whether a file may hold a CSA builtin or a directive at all (a
    /// quick look before [`FortranCalls::scan`] reads it).
    fn worth_scanning(raw: &[u8]) -> bool {
        let has = |m: &str| memmem::find(raw, m.as_bytes()).is_some();
        has("builtin_csa")
            || has("BUILTIN_CSA")
            || has("Builtin_Csa")
            || memchr::memchr(b'$', raw).is_some()
    }

    pub(crate) fn scan(text: &str) -> FortranCalls {
        if !Self::worth_scanning(text.as_bytes()) {
            return FortranCalls::default();
        }
        // the code, comments blanked (a name in a comment calls nothing),
        // lower-cased
        let (mut code, directive) = fortran_code_blanked(text);
        code.make_ascii_lowercase();
        let b = code.as_slice();
        if !(directive || memmem::find(b, b"builtin_csa").is_some()) {
            return FortranCalls::default();
        }
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        // a word: a letter not after a letter, digit or `_`, and what
        // follows of those
        let word_at = |i: usize| b[i].is_ascii_alphabetic() && (i == 0 || !ident(b[i - 1]));
        let word_end = |i: usize| i + b[i..].iter().take_while(|&&c| ident(c)).count();
        // the names the file defines its units with: the word after each
        // word `subroutine` or `function`
        let mut out: rustc_hash::FxHashMap<String, Vec<usize>> = Default::default();
        for keyword in [&b"subroutine"[..], b"function"] {
            for k in memmem::find_iter(b, keyword) {
                if !word_at(k) || word_end(k) != k + keyword.len() {
                    continue;
                }
                let Some(next) = (k + keyword.len()..b.len()).find(|&i| word_at(i)) else {
                    continue;
                };
                let name = &b[next..word_end(next)];
                if let Ok(name) = std::str::from_utf8(name) {
                    out.entry(name.to_string()).or_default();
                }
            }
        }
        // where each is called: the word followed by `(` (after blanks),
        // or after the word `call` (blanks, line ends and `&` between)
        for (name, at) in out.iter_mut() {
            let n = name.as_bytes();
            for p in memmem::find_iter(b, n) {
                if !word_at(p) || word_end(p) != p + n.len() {
                    continue;
                }
                let after = b[p + n.len()..].iter().find(|&&c| c != b' ' && c != b'\t');
                let mut q = p;
                while q > 0 && (b[q - 1].is_ascii_whitespace() || b[q - 1] == b'&') {
                    q -= 1;
                }
                let after_call =
                    q >= 4 && &b[q - 4..q] == b"call" && (q == 4 || !ident(b[q - 5]));
                if after == Some(&b'(') || after_call {
                    at.push(p);
                }
            }
        }
        FortranCalls(out)
    }

    /// Whether `name` is called outside `start..end` (its own unit).
    pub(crate) fn called_outside(&self, name: &str, start: usize, end: usize) -> bool {
        if self.0.is_empty() {
            return false;
        }
        self.0
            .get(&name.to_ascii_lowercase())
            .is_some_and(|ps| ps.iter().any(|&p| p < start || p >= end))
    }

    /// The name a unit's text defines (`subroutine s`, `real function f`).
    pub(crate) fn unit_name(text: &str) -> Option<String> {
        let mut words = text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .take(12);
        while let Some(w) = words.next() {
            if w.eq_ignore_ascii_case("subroutine") || w.eq_ignore_ascii_case("function") {
                return words.next().map(|n| n.to_ascii_lowercase());
            }
        }
        None
    }
}

/// Whether `word` occurs in `hay` as a whole C identifier.
fn contains_word(hay: &[u8], word: &[u8]) -> bool {
    word_positions(hay, word).next().is_some()
}

/// Where `word` occurs in `hay` as a whole C identifier.
fn word_positions<'h>(hay: &'h [u8], word: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    memmem::find_iter(hay, word).filter(move |&i| {
        let before = i.checked_sub(1).map(|j| hay[j]);
        let after = hay.get(i + word.len()).copied();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn c_function(src: &str) -> bool {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&csa_grammars::c_language()).unwrap();
        let tree = p.parse(src, None).unwrap();
        let flat = crate::frontend::flat::FlatTree::new(tree.root_node());
        let f = flat.root().child(0).unwrap();
        assert_eq!(f.kind(), "function_definition", "{src}");
        c_needs_lowering(f, &src[f.byte_range()], &["PAR"])
    }

    #[test]
    fn c_functions_with_nothing_for_csa_are_outlines() {
        assert!(!c_function(
            "void f(int *a, int n) { for (int i = 0; i < n; i++) a[i] = 0; }"
        ));
        assert!(!c_function(
            "int f(int c) { switch (c) { case 1: return 2; default: for (;;) break; } return 0; }"
        ));
        assert!(!c_function("void f(void) { int gotox = 1; PARX(); }"));
    }

    #[test]
    fn c_functions_with_builtins_directives_jumps_or_errors_are_lowered() {
        for src in [
            "void f(int n) { __builtin_csa_parallel_loop(); for (int i = 0; i < n; i++) ; }",
            "void f(int n) { __builtin_csa_paralel_loop(); }",
            "void f(int n) {\n#pragma omp parallel for\n for (int i = 0; i < n; i++) ; }",
            "void f(int n) { _Pragma(\"ivdep\") for (int i = 0; i < n; i++) ; }",
            "void f(int n) { [[intel::ivdep]] for (int i = 0; i < n; i++) ; }",
            "void f(int n) { if (n) goto l; l: ; }",
            "void f(int n) { PAR(); }",
            "void f(int n) { int x = ; }",
            "void f(int n, int *a) { switch (n % 2) { case 0: do { *a++ = 0; case 1: *a++ = 1; } while (--n > 0); } }",
        ] {
            assert!(c_function(src), "{src}");
        }
    }

    #[test]
    fn bodies_that_cannot_define_file_facts() {
        for body in [
            "{ int x = 1; for (int i = 0; i < n; i++) { if (a[i]) { x++; } else { x--; } } }",
            "{ int v[2] = {1, 2}; do { n--; } while (n); switch (n) { case 1: { break; } } }",
            "{ while (f(g(x))) { x = ({ int y = 2; y; }); } }",
        ] {
            assert!(!c_body_may_define_facts(body.as_bytes()), "{body}");
        }
        for body in [
            "{ struct s { int a; } v; }",
            "{ typedef int T; }",
            "{\n#define N 4\n}",
            "{ enum { A, B } e; }",
            "{ int g(int x) { return x; } g(1); }",
            "{ FOREACH(x) { use(x); } }",
            "{ if (c == ')') { } }",
            "{ int x; /* c */ { } }",
        ] {
            assert!(c_body_may_define_facts(body.as_bytes()), "{body}");
        }
    }

    #[test]
    fn macro_names_follow_chains() {
        let macros = [
            ("A", vec!["B()"]),
            ("B", vec!["__builtin_csa_parallel_loop()"]),
            ("C", vec!["42"]),
            ("D", vec!["_Pragma(\"omp parallel for\")"]),
            ("E", vec!["A"]),
        ];
        let mut names = csa_macro_names(macros.iter().map(|(n, b)| (*n, b.clone()))).unwrap();
        names.sort();
        assert_eq!(names, ["A", "B", "D", "E"]);
    }

    #[test]
    fn fortran_calls_ignore_comments() {
        let file = "! documentation: call t(x)\n!      $   t(y)\nsubroutine s\n  call builtin_csa_parallel_loop()\nend\nsubroutine t(x)\nend\n";
        let calls = FortranCalls::scan(file);
        let at = file.find("subroutine t").unwrap();
        assert!(!calls.called_outside("t", at, file.len()));
        let called = file.replace("end\nsubroutine t", "  call t(1)\nend\nsubroutine t");
        let at = called.find("subroutine t").unwrap();
        assert!(FortranCalls::scan(&called).called_outside("t", at, called.len()));
        // no builtin and no directive in the code: nothing to summarise
        let prose = "! call builtin_csa_parallel_loop() was here\n!  $ t(1)\nsubroutine s\n  call t(1)\nend\nsubroutine t(x)\nend\n";
        let at = prose.find("subroutine t").unwrap();
        assert!(!FortranCalls::scan(prose).called_outside("t", at, prose.len()));
    }

    #[test]
    fn fortran_units() {
        let plain = "subroutine s(a, n)\n  integer :: n, i\n  real :: a(n)\n  do i = 1, n\n    a(i) = 0\n  end do\n  if (n > 0) a(1) = 1\n  iend = 5\nend subroutine\n";
        assert!(!fortran_needs_lowering(plain, false));
        assert!(fortran_needs_lowering(plain, true));
        for unit in [
            "subroutine s\n  call builtin_csa_parallel_loop()\nend\n",
            "subroutine s\n  CALL BUILTIN_CSA_SPMD(4, 0)\nend\n",
            "subroutine s\n!$omp parallel do\n  do i = 1, 2\n  end do\nend\n",
            "subroutine s\n  go to 10\n10 continue\nend\n",
            "      SUBROUTINE S\n      G O T O 10\n10    CONTINUE\n      END\n",
            "subroutine s(x)\n  if (x) 10, 20, 30\n10 continue\n20 continue\n30 continue\nend\n",
            "subroutine s\n  read (5, *, end = 10) x\n10 continue\nend\n",
            "subroutine s\n  call t(x, * 10)\n10 continue\nend\n",
            "subroutine s\n  entry t\nend\n",
        ] {
            assert!(fortran_needs_lowering(unit, false), "{unit}");
        }
        // jumps alone: the control flow; anything else for CSA: everything
        let jumps = "subroutine s\n  go to 10\n10 continue\nend\n";
        assert_eq!(fortran_lowering_need(jumps, false), FortranNeed::Control);
        assert_eq!(fortran_lowering_need(jumps, true), FortranNeed::Full);
        assert_eq!(fortran_lowering_need(plain, false), FortranNeed::Outline);
        for unit in [
            "subroutine s\n  go to 10\n10 call builtin_csa_parallel_loop()\nend\n",
            "subroutine s\n  go to 10\n!$omp barrier\n10 continue\nend\n",
            "subroutine s\n  go to 10\n  entry t\n10 continue\nend\n",
            "subroutine s\n!$ x = omp_get_thread_num()\nend\n",
            "subroutine s\n!DIR$ IVDEP\n  do i = 1, 2\n  end do\nend\n",
            "subroutine s\n  print *, 'a!b'; call builtin_csa_parallel_loop()\nend\n",
            "subroutine s\n  print *, 'a&\n  &!b'; call builtin_csa_parallel_loop()\nend\n",
        ] {
            assert_eq!(
                fortran_lowering_need(unit, false),
                FortranNeed::Full,
                "{unit}"
            );
        }
        // words in comments are not code
        for unit in [
            "subroutine s\n! go to the (i,j) entry; call builtin_csa_spmd\n  x = 1 ! err=10\nend\n",
            "subroutine s\n  x = '!' ! if (x) 10, 20, 30\nend\n",
            "subroutine s\n  x = 1 ! costs $5 (not a directive)\n!      $   continued(*)\nend\n",
        ] {
            assert_eq!(
                fortran_lowering_need(unit, false),
                FortranNeed::Outline,
                "{unit}"
            );
        }
        // a `!` in a literal starts no comment
        let quoted = "subroutine s\n  print *, \"!\"; go to 10\n10 continue\nend\n";
        assert_eq!(fortran_lowering_need(quoted, false), FortranNeed::Control);
    }

    // The byte-by-byte readings the fast ones replaced (the references of
    // the property tests below).

    /// Walks Fortran text (free form, as the parser sees it: fixed form
    /// normalised) byte by byte, telling `on` each byte's offset and whether it
    /// is code (true) or in a `!` comment (false). Character literals are code
    /// (a `!` in one starts no comment); one continued onto the next line (`&`
    /// at the end of the line inside it) goes on there. Returns whether some
    /// comment is a directive: `!` followed by at most five letters and a `$`
    /// (`!$OMP`, `!$` conditional code, `!DIR$`, `!GCC$`), which the analysis
    /// reads; other comments (`! the (i,j) entry`, a `$` in documentation) are
    /// prose.
    fn walk_fortran_code(text: &str, mut on: impl FnMut(usize, u8, bool)) -> bool {
        let bytes = text.as_bytes();
        let mut directive = false;
        let mut quote: Option<u8> = None;
        let mut comment = false;
        // the last byte other than a blank on this line
        let mut last = b'\n';
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' {
                comment = false;
                if last != b'&' {
                    quote = None;
                }
                last = b'\n';
                on(i, b, true);
                continue;
            }
            if comment {
                on(i, b, false);
                continue;
            }
            if !b.is_ascii_whitespace() {
                last = b;
            }
            match quote {
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None if b == b'!' => {
                    comment = true;
                    directive |= directive_sentinel(bytes, i);
                    on(i, b, false);
                    continue;
                }
                None if b == b'\'' || b == b'"' => quote = Some(b),
                None => {}
            }
            on(i, b, true);
        }
        directive
    }

    fn scan_reference(text: &str) -> FortranCalls {
        let raw = text.as_bytes();
        if !FortranCalls::worth_scanning(raw) {
            return FortranCalls::default();
        }
        // the code, comments blanked (a name in a comment calls nothing)
        let mut code = raw.to_vec();
        let directive = walk_fortran_code(text, |i, _, is_code| {
            if !is_code {
                code[i] = b' ';
            }
        });
        let builtin = memchr::memchr2_iter(b'b', b'B', &code).any(|i| {
            code.get(i..i + 11)
                .is_some_and(|w| w.eq_ignore_ascii_case(b"builtin_csa"))
        });
        if !(directive || builtin) {
            return FortranCalls::default();
        }
        let Ok(text) = std::str::from_utf8(&code) else {
            return FortranCalls::default();
        };
        let b = text.as_bytes();
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        // the words of the text, each with its position and whether `call`
        // or `(` marks it as a call
        let words = {
            let mut i = 0;
            let mut prev_call = false;
            std::iter::from_fn(move || {
                while i < b.len() {
                    if !(b[i].is_ascii_alphabetic()) || (i > 0 && ident(b[i - 1])) {
                        if !b[i].is_ascii_whitespace() && b[i] != b'&' {
                            prev_call = false;
                        }
                        i += 1;
                        continue;
                    }
                    let start = i;
                    while i < b.len() && ident(b[i]) {
                        i += 1;
                    }
                    let word = &text[start..i];
                    let mut j = i;
                    while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                        j += 1;
                    }
                    let called = prev_call || b.get(j) == Some(&b'(');
                    prev_call = word.eq_ignore_ascii_case("call");
                    return Some((start, word, called));
                }
                None
            })
        };
        // one pass: the names the file defines its units with, and the
        // words that may call; then only the defined names are kept
        let mut out: rustc_hash::FxHashMap<String, Vec<usize>> = Default::default();
        let mut after_keyword = false;
        let mut calls: Vec<(usize, usize)> = Vec::new();
        for (start, word, called) in words {
            if after_keyword {
                out.entry(word.to_ascii_lowercase()).or_default();
            }
            after_keyword =
                word.eq_ignore_ascii_case("subroutine") || word.eq_ignore_ascii_case("function");
            if called {
                calls.push((start, start + word.len()));
            }
        }
        let mut lower = String::new();
        if !out.is_empty() {
            for (start, end) in calls {
                lower.clear();
                lower.extend(text[start..end].chars().map(|c| c.to_ascii_lowercase()));
                if let Some(ps) = out.get_mut(lower.as_str()) {
                    ps.push(start);
                }
            }
        }
        FortranCalls(out)
    }

    fn fortran_like() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("call ".to_string()),
            Just("CALL".to_string()),
            Just("subroutine ".to_string()),
            Just("Function".to_string()),
            Just("s".to_string()),
            Just("t1".to_string()),
            Just("(".to_string()),
            Just("!".to_string()),
            Just("!$omp ".to_string()),
            Just("!dir$".to_string()),
            Just("'".to_string()),
            Just("\"".to_string()),
            Just("&".to_string()),
            Just("\n".to_string()),
            Just("é".to_string()),
            "[a-z_0-9 \t\r(),=$]{0,4}",
        ];
        prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        #[test]
        fn blanking_agrees_with_the_byte_walk(text in fortran_like()) {
            let mut walked = text.as_bytes().to_vec();
            let directive = walk_fortran_code(&text, |i, _, code| {
                if !code {
                    walked[i] = b' ';
                }
            });
            prop_assert_eq!(fortran_code_blanked(&text), (walked, directive));
        }

        #[test]
        fn call_scan_agrees_with_the_word_walk(text in fortran_like()) {
            let mut fast: Vec<_> = FortranCalls::scan(&text).0.into_iter().collect();
            let mut slow: Vec<_> = scan_reference(&text).0.into_iter().collect();
            fast.sort();
            slow.sort();
            prop_assert_eq!(fast, slow);
        }
    }
}
