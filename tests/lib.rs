//! Shared helpers for the fixture and end-to-end tests.
//!
//! Fixture format (DIAGNOSTICS.md): `//~ CSA101` (C) or `!~ CSA101`
//! (Fortran) at the end of a line expects that code anchored on that line;
//! `//~^ CSA101` on the line above (`^^` two above). Several codes may
//! follow one marker. An annotation may also pin the message, which must
//! then contain the given text (case-sensitive; see [`message_text`]):
//! `//~ CSA101: could not parallelize`, a colon right after the code and
//! the rest of the line as the text (so it comes last), or a
//! double-quoted string after a code, `//~ CSA201 "does not notice"` (with
//! `\"` for a quote and `\\` for a backslash), which other codes may follow.
//! Otherwise text after `--` is a comment. Header lines `//@ define
//! NAME` / `!@ define NAME`, `//@ pure NAME` and
//! `//@ disable-loop-storage-check` set analysis options. Every
//! diagnostic must be annotated and every annotation matched.
//!
//! Fixes and rewrites (DIAGNOSTICS.md: "Fix and rewrite expectations live
//! in a sibling `.fixed` file"): when `foo.c.fixed` sits next to `foo.c`,
//! the harness applies to `foo.c` what its headers select, exactly as
//! `csa-lint --fix/--rewrite` does (`analyzer::fix_all`):
//! `//@ fix safe` (the default) or `//@ fix unsafe` (diagnostics' fixes,
//! never suppressions), `//@ rewrite openmp` / `//@ rewrite ivdep` (marker
//! rewrites only, unless a `fix` header is also given), `//@ ivdep-style
//! attribute|intel-pragma|gcc-pragma`. The result must equal the `.fixed`
//! text byte for byte (line endings included), applying the same again to
//! the result must change nothing, and the result must not have more
//! syntax errors than the original.

use analyzer::diag::{Code, Diagnostic};
use analyzer::source::SourceText;
use analyzer::{analyze, Analysis, AnalysisOptions};
use analyzer::{fix_all, FixAllOptions, IvdepStyle, Target};
use csa_grammars::SourceKind;
use std::path::{Path, PathBuf};

/// One expected diagnostic.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Expectation {
    /// 1-based line.
    pub line: u32,
    pub code: Code,
    /// Text the message must contain.
    pub message: Option<String>,
}

/// The text of a diagnostic's message that pinned messages are compared
/// with (its line references shown as lines of `src`): the one place that
/// knows how a message becomes text.
pub fn message_text(d: &Diagnostic, src: &SourceText) -> String {
    d.message.render(src)
}

impl Expectation {
    fn matches(&self, line: u32, code: Code, message: &str) -> bool {
        self.line == line
            && self.code == code
            && self.message.as_deref().is_none_or(|m| message.contains(m))
    }
}

/// Expectations and options written in a fixture.
#[derive(Debug, Default)]
pub struct Annotations {
    pub expected: Vec<Expectation>,
    pub options: AnalysisOptions,
    /// Annotation syntax errors (a test fails on them).
    pub errors: Vec<String>,
    /// `//@ fix safe|unsafe`: Some(unsafe allowed).
    pub fix: Option<bool>,
    /// `//@ rewrite openmp|ivdep`.
    pub rewrite: Option<String>,
    /// `//@ ivdep-style NAME`.
    pub ivdep_style: Option<String>,
    /// `//@ c-standard NAME` (as the configuration's `c-standard`).
    pub c_standard: Option<String>,
    /// A Fortran fixture.
    pub fortran: bool,
}

/// Parses the annotations of a fixture.
pub fn parse_annotations(text: &str, fortran: bool) -> Annotations {
    let marker = if fortran { "!~" } else { "//~" };
    let header = if fortran { "!@" } else { "//@" };
    let mut ann = Annotations {
        fortran,
        ..Annotations::default()
    };
    for (i, line) in text.lines().enumerate() {
        let lineno = i as u32 + 1;
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(header) {
            let mut words = rest.split_whitespace();
            match (words.next(), words.next()) {
                (Some("define"), Some(name)) => ann.options.defines.push(name.to_string()),
                (Some("pure"), Some(name)) => ann.options.pure_functions.push(name.to_string()),
                (Some("disable-loop-storage-check"), None) => {
                    ann.options.disable_loop_storage_check = true
                }
                (Some("fix"), Some(w @ ("safe" | "unsafe"))) => ann.fix = Some(w == "unsafe"),
                (Some("rewrite"), Some(w @ ("openmp" | "ivdep"))) => {
                    ann.rewrite = Some(w.to_string())
                }
                (Some("ivdep-style"), Some(w)) if analyzer::IvdepStyle::from_name(w).is_some() => {
                    ann.ivdep_style = Some(w.to_string())
                }
                (Some("c-standard"), Some(w))
                    if analyzer::config::CStandard::from_name(w).is_some() =>
                {
                    ann.c_standard = Some(w.to_string())
                }
                _ => ann
                    .errors
                    .push(format!("line {lineno}: bad header `{trimmed}`")),
            }
            continue;
        }
        let Some(pos) = line.find(marker) else {
            continue;
        };
        let mut rest = &line[pos + marker.len()..];
        let mut up = 0;
        while let Some(r) = rest.strip_prefix('^') {
            up += 1;
            rest = r;
        }
        let target = lineno.saturating_sub(up);
        let mut any = false;
        loop {
            rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
            if rest.is_empty() || rest.starts_with("--") {
                break;
            }
            if let Some(quoted) = rest.strip_prefix('"') {
                // `\"` and `\\` stand for `"` and `\`
                let mut text = String::new();
                let mut end = None;
                let mut chars = quoted.char_indices();
                while let Some((k, ch)) = chars.next() {
                    match ch {
                        '\\' => {
                            if let Some((_, c)) = chars.next() {
                                text.push(c);
                            }
                        }
                        '"' => {
                            end = Some(k);
                            break;
                        }
                        c => text.push(c),
                    }
                }
                let Some(end) = end else {
                    ann.errors
                        .push(format!("line {lineno}: unterminated message text"));
                    break;
                };
                match ann.expected.last_mut() {
                    Some(e) if any && e.line == target && e.message.is_none() => {
                        e.message = Some(text)
                    }
                    _ => ann.errors.push(format!(
                        "line {lineno}: message text without a code before it"
                    )),
                }
                rest = &quoted[end + 1..];
                continue;
            }
            let end = rest
                .find(|c: char| c.is_whitespace() || c == ',' || c == '"' || c == ':')
                .unwrap_or(rest.len());
            let word = &rest[..end];
            rest = &rest[end..];
            any = true;
            // `CSA101: text`: the rest of the line is the message text
            let pinned = rest.strip_prefix(':').map(str::trim);
            match Code::parse(word) {
                Some(code) => {
                    ann.expected.push(Expectation {
                        line: target,
                        code,
                        message: pinned.filter(|t| !t.is_empty()).map(str::to_string),
                    });
                }
                None => ann
                    .errors
                    .push(format!("line {lineno}: `{word}` is not a diagnostic code")),
            }
            if let Some(text) = pinned {
                if text.is_empty() {
                    ann.errors
                        .push(format!("line {lineno}: no message text after `{word}:`"));
                }
                break;
            }
        }
        if !any {
            ann.errors
                .push(format!("line {lineno}: annotation without a code"));
        }
    }
    ann.expected.sort();
    ann
}

/// The source kind of a fixture file.
pub fn kind_of(path: &Path) -> Option<SourceKind> {
    // as csa-lint decides: a `.h` holding Fortran is Fortran
    let text = std::fs::read_to_string(path).unwrap_or_default();
    csa_grammars::detect_with_content(path, &text)
}

/// Analyses a fixture and compares diagnostics with its annotations.
/// Returns a human-readable report of every mismatch.
pub fn check_fixture(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let kind = kind_of(path).ok_or_else(|| format!("{}: unknown extension", path.display()))?;
    let ann = check_annotated(path, kind, &text)?;
    let mut fixed_path = path.as_os_str().to_owned();
    fixed_path.push(".fixed");
    let fixed_path = PathBuf::from(fixed_path);
    if fixed_path.exists() {
        check_fixed(path, &fixed_path, kind, &text, &ann)?;
    } else if ann.fix.is_some() || ann.rewrite.is_some() {
        // a header asks for a fix check that has nothing to compare with
        return Err(format!(
            "{}: a `fix` or `rewrite` header but no `{}` beside it",
            path.display(),
            fixed_path.display()
        ));
    }
    Ok(())
}

/// Analyses `text`, annotated as a fixture of `kind`, and compares the
/// diagnostics with its annotations (`path` names it in the report).
/// Returns the annotations for the `.fixed` check.
pub fn check_annotated(path: &Path, kind: SourceKind, text: &str) -> Result<Annotations, String> {
    let ann = parse_annotations(text, kind != SourceKind::C);
    let fa = analyze(kind, text, &ann.options);
    compare(path, &fa, &ann)?;
    Ok(ann)
}

/// What the headers of a fixture select for its `.fixed` check.
pub fn fix_options(ann: &Annotations) -> FixAllOptions {
    let std = ann
        .c_standard
        .as_deref()
        .and_then(analyzer::config::CStandard::from_name)
        .unwrap_or_default();
    let style = ann
        .ivdep_style
        .as_deref()
        .and_then(IvdepStyle::from_name)
        .unwrap_or_else(|| IvdepStyle::default_for(ann.fortran, std));
    let rewrite = ann
        .rewrite
        .as_deref()
        .and_then(|r| Target::from_name(r, style));
    let fix = ann.fix.is_some() || rewrite.is_none();
    FixAllOptions {
        fix,
        // a rewrite is an unsafe fix: a `rewrite` header alone allows it
        unsafe_fixes: ann.fix == Some(true) || (rewrite.is_some() && ann.fix.is_none()),
        rewrite,
        disabled: Vec::new(),
    }
}

/// Syntax errors of a text as the front ends parse it.
pub fn syntax_error_count(kind: SourceKind, text: &str, opts: &AnalysisOptions) -> usize {
    analyze(kind, text, opts).syntax_error_count()
}

fn check_fixed(
    path: &Path,
    fixed_path: &Path,
    kind: SourceKind,
    text: &str,
    ann: &Annotations,
) -> Result<(), String> {
    let expected = std::fs::read_to_string(fixed_path)
        .map_err(|e| format!("{}: {e}", fixed_path.display()))?;
    let opts = fix_options(ann);
    let got = fix_all(kind, text, &ann.options, &opts);
    if got.text != expected {
        return Err(format!(
            "{}: applying the fixes does not give {}:\n--- got ---\n{}\n--- refusals ---\n{}",
            path.display(),
            fixed_path.display(),
            got.text,
            got.refusals
                .iter()
                .map(|(_, r)| r.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    let again = fix_all(kind, &got.text, &ann.options, &opts);
    if again.text != got.text {
        return Err(format!(
            "{}: applying the fixes to the .fixed text changes it again:\n{}",
            path.display(),
            again.text
        ));
    }
    let before = syntax_error_count(kind, text, &ann.options);
    let after = syntax_error_count(kind, &got.text, &ann.options);
    if after > before {
        return Err(format!(
            "{}: the fixed text has {after} syntax errors, the original {before}",
            path.display()
        ));
    }
    Ok(())
}

fn compare(path: &Path, fa: &Analysis, ann: &Annotations) -> Result<(), String> {
    let mut actual: Vec<(u32, Code, String, String)> = fa
        .diagnostics()
        .iter()
        .map(|d| {
            let lc = fa.source().line_col(d.span.start as usize);
            let message = message_text(d, fa.source());
            let shown = format!("{}:{}: {} {}", lc.line, lc.column, d.code, message);
            (lc.line, d.code, message, shown)
        })
        .collect();
    actual.sort();
    let mut report = String::new();
    for e in &ann.errors {
        report.push_str(&format!("  annotation error: {e}\n"));
    }
    let mut expected = ann.expected.clone();
    // Expectations with message text first, so that a bare one does not
    // take the diagnostic a more precise one needs.
    expected.sort_by_key(|e| e.message.is_none());
    let mut unexpected = Vec::new();
    for (line, code, message, text) in &actual {
        if let Some(i) = expected
            .iter()
            .position(|e| e.matches(*line, *code, message))
        {
            expected.remove(i);
        } else {
            unexpected.push(text.clone());
        }
    }
    for u in &unexpected {
        report.push_str(&format!("  unexpected diagnostic: {u}\n"));
    }
    for e in &expected {
        match &e.message {
            Some(m) => report.push_str(&format!(
                "  missing diagnostic: {} on line {} with \"{m}\" in its message\n",
                e.code, e.line
            )),
            None => report.push_str(&format!(
                "  missing diagnostic: {} on line {}\n",
                e.code, e.line
            )),
        }
    }
    if report.is_empty() {
        Ok(())
    } else {
        let mut all = String::new();
        for (.., t) in &actual {
            all.push_str(&format!("    {t}\n"));
        }
        Err(format!(
            "{}:\n{report}  all diagnostics produced:\n{all}",
            path.display()
        ))
    }
}

/// Every fixture file below `dir`, sorted.
pub fn fixtures_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && kind_of(p).is_some())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The workspace's `tests/` directory.
pub fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(line: u32, code: u16, message: Option<&str>) -> Expectation {
        Expectation {
            line,
            code: Code(code),
            message: message.map(str::to_string),
        }
    }

    #[test]
    fn annotations_parse() {
        let a = parse_annotations(
            "//@ define FOO\nx(); //~ CSA105\n//~^ CSA101, CSA103 -- comment CSA999\n//~^^ XYZ\n",
            false,
        );
        assert_eq!(a.options.defines, vec!["FOO".to_string()]);
        assert_eq!(
            a.expected,
            vec![exp(2, 101, None), exp(2, 103, None), exp(2, 105, None)]
        );
        assert_eq!(a.errors.len(), 1, "{:?}", a.errors);
    }

    #[test]
    fn annotations_with_message_text() {
        let a = parse_annotations(
            "x(); !~ CSA201 \"does not, \\\"notice\\\"\" CSA207 -- \"not this\"\ny(); !~ \"alone\"\nz(); !~ CSA101 \"open\n",
            true,
        );
        assert_eq!(
            a.expected,
            vec![
                exp(1, 201, Some("does not, \"notice\"")),
                exp(1, 207, None),
                exp(3, 101, None)
            ]
        );
        assert_eq!(a.errors.len(), 3, "{:?}", a.errors);
        assert!(exp(1, 201, Some("notice")).matches(1, Code(201), "it does not notice"));
        assert!(!exp(1, 201, Some("notice")).matches(1, Code(201), "it ignores"));
        assert!(exp(1, 201, None).matches(1, Code(201), "anything"));
    }

    #[test]
    fn annotations_with_a_pinned_message_after_a_colon() {
        let a = parse_annotations(
            "x(); //~ CSA105, CSA101: could not -- \"all\" of it, CSA999\n//~^ CSA102:no space\ny(); //~ CSA103:\nz(); //~ XYZ: text\n",
            false,
        );
        assert_eq!(
            a.expected,
            vec![
                exp(1, 101, Some("could not -- \"all\" of it, CSA999")),
                exp(1, 102, Some("no space")),
                exp(1, 105, None),
                exp(3, 103, None),
            ]
        );
        assert_eq!(a.errors.len(), 2, "{:?}", a.errors);
        assert!(a.errors[0].contains("no message text"), "{:?}", a.errors);
        assert!(a.errors[1].contains("`XYZ`"), "{:?}", a.errors);
        let a = parse_annotations("call s() !~^^ CSA107: wrong number\n", true);
        assert_eq!(a.expected, vec![exp(0, 107, Some("wrong number"))]);
    }

    /// The harness itself: a pinned message that the diagnostic's message
    /// does not contain fails the fixture, the right one passes.
    #[test]
    fn a_wrong_pinned_message_fails_the_fixture() {
        let fixture = |annotation: &str| {
            format!(
                "#ifdef __CSA__\nvoid f(void) {{\n  __builtin_csa_parallel_loop(); {annotation}\n}}\n#endif\n"
            )
        };
        let path = Path::new("self_test.c");
        let check = |text: &str| check_annotated(path, SourceKind::C, text);
        for good in [
            "//~ CSA105",
            "//~ CSA105: no loop follows it",
            "//~ CSA105 \"no loop follows it\"",
        ] {
            assert!(
                check(&fixture(good)).is_ok(),
                "{good}: {:?}",
                check(&fixture(good))
            );
        }
        for (bad, why) in [
            (
                "//~ CSA105: no loop follows her",
                "with \"no loop follows her\"",
            ),
            (
                "//~ CSA105: No loop follows it",
                "with \"No loop follows it\"",
            ),
            (
                "//~ CSA105 \"could not parallelize\"",
                "with \"could not parallelize\"",
            ),
            (
                "//~ CSA101: no loop follows it",
                "missing diagnostic: CSA101",
            ),
        ] {
            let err = check(&fixture(bad)).expect_err(bad);
            assert!(err.contains(why), "{bad}: {err}");
            assert!(
                err.contains("unexpected diagnostic: 3:3: CSA105"),
                "{bad}: {err}"
            );
        }
    }
}
