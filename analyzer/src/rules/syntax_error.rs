//! # CSA001 syntax-error
//!
//! ## What it does
//! Reports the first place in a function (or at file level) where the
//! parser could not read the code. csa-lint still analyses everything the
//! parser recovered, so other functions are unaffected; the diagnostics of
//! this function may be incomplete.
//!
//! ## Why it matters
//! Verdicts about loops in a function with a syntax error rest on a guess of
//! what the code means. Code that the preprocessor would change can also
//! look like a syntax error: csa-lint blanks inactive `#if` branches and,
//! in Fortran that goes through cpp (`.F90`, `.F`), expands the macros the
//! file and the headers it `#include`s define (a header is read as the
//! file of the run that includes it gives it), but it does not follow
//! `#include`s it cannot find, or join `#if` branches that only balance
//! together. A C file with syntax errors is read again with its
//! function-like macros expanded, when their definitions are found. When
//! the code holds a word that starts with `_`, which no Fortran name does
//! (MITgcm's `_RL`, `_d`), or, in C, a name in capitals used with
//! arguments on the line of the error (GSL's `FUNCTION(vec, set)`,
//! `NAME(vec) "_set"`), that nothing defines, the diagnostic says it is a
//! macro csa-lint has no definition of, and how to give it one.
//!
//! ## Example
//! ```c
//! void f(int *a, int n) {
//!   for (int i = 0; i < n; i++ {   // missing ')'
//!     a[i] = 0;
//! }
//! ```
//!
//! When the parser's error recovery runs past its time budget (1 s and
//! 5 us per byte, some 50 times an ordinary parse: only a long run of
//! erroneous code, such as a 100 kB line with a syntax error, comes near
//! it), the file is reported at its first line and not analysed at all,
//! rather than holding up the run.
//!
//! ## How to fix
//! Fix the syntax, or keep preprocessor conditionals around whole
//! statements. For a macro from a header csa-lint did not find, give the
//! header's directory (`--include-dir`, `include-dirs`) or define the
//! macro (`--define NAME=VALUE`, `defines`).
//!
//! ## Fix safety
//! No fix.

use super::{FileContext, FunctionContext};
use crate::diag::{Code, Diagnostic};
use crate::diag::{Rule, Severity};
use crate::ir::Lang;

/// The rule; its documentation is this file's `//!` text.
pub(super) static RULE: Rule = Rule {
    code: Code(1),
    name: "syntax-error",
    severity: Severity::Info,
    fixable: false,
    summary: "The parser found a syntax error; analysis of that function may be partial",
    source: include_str!("syntax_error.rs"),
};

pub(super) fn check(cx: &FunctionContext, out: &mut Vec<Diagnostic>) {
    if let Some(span) = cx.func.syntax_error {
        let d = Diagnostic::new(
            &RULE,
            span,
            format!(
                "syntax error: the code here could not be parsed; the analysis of `{}` may be partial",
                cx.func.name
            ),
        );
        out.push(with_macro_help(d, cx.func.lang, cx.src.text(), cx.macro_defined));
    }
}

/// `d` with advice when its code holds a Fortran word that starts with
/// `_`, or a C name in capitals used with arguments on its line, that no
/// definition csa-lint was given names: a cpp macro it cannot expand.
fn with_macro_help(
    d: Diagnostic,
    lang: Lang,
    text: &str,
    defined: &dyn Fn(&str) -> bool,
) -> Diagnostic {
    let span = d.span;
    if lang == Lang::C {
        let Some(name) = capital_macro_use(text, span.start as usize, span.end as usize, defined)
        else {
            return d;
        };
        let help = format!(
            "`{name}(...)` looks like a use of a function-like macro (a name in capitals with arguments) that csa-lint has no definition of: give the directory of the header that defines it (`--include-dir`, `include-dirs`); csa-lint then expands it as cpp does"
        );
        return d.with_help(help);
    }
    let Some(name) = text
        .get(span.start as usize..span.end as usize)
        .and_then(underscore_word)
        .filter(|name| !defined(name))
    else {
        return d;
    };
    let help = format!(
        "`{name}` is a cpp macro (no Fortran name starts with `_`) that csa-lint has no definition of: give the directory of the header that defines it (`--include-dir`, `include-dirs`), or define it (`--define {name}=...`)"
    );
    d.with_help(help)
}

/// The first C name in capitals (two characters or more, a letter among
/// them) followed by `(` on the line of `start`, from its beginning up to
/// `end`, that `defined` does not know (comments and literals left out):
/// a function-like macro with no definition, the likely cause of a syntax
/// error there.
fn capital_macro_use<'t>(
    text: &'t str,
    start: usize,
    end: usize,
    defined: &dyn Fn(&str) -> bool,
) -> Option<&'t str> {
    let b = text.as_bytes();
    let from = memchr::memrchr(b'\n', b.get(..start)?).map_or(0, |k| k + 1);
    let to = memchr::memchr(b'\n', b.get(start..)?).map_or(b.len(), |k| start + k);
    let line = &b[..to];
    let end = end.clamp(start + 1, to.max(start + 1));
    let mut i = from;
    while let Some((s, e)) = crate::frontend::fortran::cpp::next_c_ident(line, i).filter(|w| w.0 < end) {
        i = e;
        let word = &text[s..e];
        let capitals = word.len() >= 2
            && word.bytes().any(|c| c.is_ascii_uppercase())
            && !word.bytes().any(|c| c.is_ascii_lowercase());
        let called = line[e..].iter().find(|c| !matches!(c, b' ' | b'\t')) == Some(&b'(');
        if capitals && called && !defined(word) {
            return Some(word);
        }
    }
    None
}

/// The first word that starts with `_` in the code of `text` (Fortran;
/// comment lines, `!` comments and strings left out), among its first
/// lines.
fn underscore_word(text: &str) -> Option<&str> {
    const LINES: usize = 64;
    for line in text.lines().take(LINES) {
        let t = line.trim_start();
        // a fixed-form comment line, a free-form one, a directive
        if matches!(line.as_bytes().first(), Some(b'c' | b'C' | b'*'))
            || t.starts_with('!')
            || t.starts_with('#')
        {
            continue;
        }
        let b = line.as_bytes();
        let mut quote: Option<u8> = None;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == b'\'' || c == b'"' => quote = Some(c),
                None if c == b'!' => break,
                None if c == b'_'
                    && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
                    && b.get(i + 1).is_some_and(|n| n.is_ascii_alphabetic()) =>
                {
                    let end = b[i..]
                        .iter()
                        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                        .map_or(b.len(), |k| i + k);
                    return line.get(i..end);
                }
                None => {}
            }
            i += 1;
        }
    }
    None
}

pub(super) fn check_toplevel(cx: &FileContext, out: &mut Vec<Diagnostic>) {
    if cx.parse_gave_up {
        let len = cx.src.text().len();
        out.push(Diagnostic::new(
            &RULE,
            cx.toplevel_errors.first().copied().unwrap_or_default(),
            format!(
                "the parser gave up on this file: its error recovery took longer than {:.1} s (tree-sitter's recovery is slow on a long run of code with a syntax error, such as a very long line); nothing in the file is analysed",
                csa_grammars::parse_budget(len).as_secs_f64()
            ),
        ));
        return;
    }
    if let Some(&span) = cx.toplevel_errors.first() {
        let d = Diagnostic::new(
            &RULE,
            span,
            "syntax error: the code here could not be parsed; it is skipped",
        );
        out.push(with_macro_help(d, cx.lang, cx.src.text(), cx.macro_defined));
    }
}

#[cfg(test)]
mod tests {
    use crate::{analyze, AnalysisOptions, SourceKind};

    /// The help of the first CSA001 of `text` (fixed form) with `opts`.
    fn help(text: &str, opts: &AnalysisOptions) -> Option<Option<String>> {
        analyze(SourceKind::FortranFixed, text, opts)
            .diagnostics()
            .iter()
            .find(|d| d.code.0 == 1)
            .map(|d| d.help.as_ref().map(|h| h.render_with(|o| o)))
    }

    const DECL: &str = "      SUBROUTINE S(n)\n      INTEGER n\nC     _XX in a comment\n      _RL w(n)\n      _RS v(n)\n      END\n";

    #[test]
    fn a_word_starting_with_underscore_is_named_as_an_unknown_macro() {
        let h = help(DECL, &AnalysisOptions::default()).flatten().unwrap();
        assert!(h.starts_with("`_RL` is a cpp macro"), "{h}");
        assert!(h.contains("--define _RL=..."), "{h}");
        // defined on the command line: no syntax error left there, and
        // the next word is named
        let opts = AnalysisOptions {
            defines: vec!["_RL=REAL*8".to_string()],
            ..AnalysisOptions::default()
        };
        let h = help(DECL, &opts).flatten().unwrap();
        assert!(h.starts_with("`_RS` is a cpp macro"), "{h}");
    }

    #[test]
    fn a_macro_with_a_definition_is_not_named() {
        // a `#define` in the file, the prelude or a header counts, even
        // one cpp leaves out
        for opts in [
            AnalysisOptions {
                prelude: "#  define _RL\n".to_string(),
                ..AnalysisOptions::default()
            },
            AnalysisOptions {
                headers: crate::Headers(vec![(
                    "h".to_string(),
                    "#ifdef NEVER\n#define _RL Real*8\n#endif\n".to_string(),
                )]),
                ..AnalysisOptions::default()
            },
        ] {
            let d = analyze(SourceKind::FortranFixed, "      SUBROUTINE S\n      _RL w(\n      END\n", &opts);
            let e = d.diagnostics().iter().find(|d| d.code.0 == 1).cloned();
            assert!(e.as_ref().is_some_and(|e| e.help.is_none()), "{e:?}");
        }
        // `_Bool` in C is C's
        let c = analyze(SourceKind::C, "void f(void) { _Bool b = ; }\n", &AnalysisOptions::default());
        let e = c.diagnostics().iter().find(|d| d.code.0 == 1).cloned();
        assert!(e.as_ref().is_some_and(|e| e.help.is_none()), "{e:?}");
    }

    /// The help of the first CSA001 of C `text`.
    fn c_help(text: &str, opts: &AnalysisOptions) -> Option<String> {
        analyze(SourceKind::C, text, opts)
            .diagnostics()
            .iter()
            .find(|d| d.code.0 == 1)
            .and_then(|d| d.help.as_ref().map(|h| h.render_with(|o| o)))
    }

    #[test]
    fn a_c_name_in_capitals_with_arguments_is_named_as_an_unknown_macro() {
        // a template source read without the header of its macros
        let text = "void f(int n) {\n  check(n, /* VIEW(x) */ \"NAME(\" NAME (vec) \"_set\");\n}\n";
        let h = c_help(text, &AnalysisOptions::default()).unwrap();
        assert!(h.starts_with("`NAME(...)` looks like a use of a function-like macro"), "{h}");
        // its definition given: expanded, no syntax error
        let opts = AnalysisOptions {
            headers: crate::Headers(vec![("t.h".to_string(), "#define NAME(x) #x\n".to_string())]),
            prelude: "#include \"t.h\"\n".to_string(),
            ..AnalysisOptions::default()
        };
        let fa = analyze(SourceKind::C, text, &opts);
        assert_eq!(fa.syntax_error_count(), 0, "{:?}", fa.diagnostics());
        // a syntax error with no such name: no advice; a lower-case call,
        // or one the file defines (a macro it could not expand), neither
        for text in [
            "void f(int n) { for (;;) n++ }\n",
            "void f(int n) {\n  check(n, name (vec) \"_set\");\n}\n",
            "#define NAME(x, y) x y\nvoid f(int n) {\n  check(n, NAME (vec) \"_set\");\n}\n",
        ] {
            assert_eq!(c_help(text, &AnalysisOptions::default()), None, "{text}");
        }
    }
}
