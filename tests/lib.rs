//! Shared helpers for the fixture and end-to-end tests.
//!
//! Fixture format (DIAGNOSTICS.md): `//~ CSA101` (C) or `!~ CSA101`
//! (Fortran) at the end of a line expects that code anchored on that line;
//! `//~^ CSA101` on the line above (`^^` two above). Several codes may
//! follow one marker. Text after `--` is a comment. Header lines `//@ define
//! NAME` / `!@ define NAME`, `//@ pure NAME` and
//! `//@ disable-loop-storage-check` set analysis options. Every
//! diagnostic must be annotated and every annotation matched.

use analyzer::analysis::{analyze, AnalysisOptions, FileAnalysis};
use analyzer::diag::Code;
use csa_grammars::SourceKind;
use std::path::{Path, PathBuf};

/// One expected diagnostic.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Expectation {
    /// 1-based line.
    pub line: u32,
    pub code: Code,
}

/// Expectations and options written in a fixture.
#[derive(Debug, Default)]
pub struct Annotations {
    pub expected: Vec<Expectation>,
    pub options: AnalysisOptions,
    /// Annotation syntax errors (a test fails on them).
    pub errors: Vec<String>,
}

/// Parses the annotations of a fixture.
pub fn parse_annotations(text: &str, fortran: bool) -> Annotations {
    let marker = if fortran { "!~" } else { "//~" };
    let header = if fortran { "!@" } else { "//@" };
    let mut ann = Annotations::default();
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
        let rest = rest.split("--").next().unwrap_or("");
        let target = lineno.saturating_sub(up);
        let mut any = false;
        for word in rest.split(|c: char| c.is_whitespace() || c == ',') {
            if word.is_empty() {
                continue;
            }
            any = true;
            match Code::parse(word) {
                Some(code) => {
                    ann.expected.push(Expectation { line: target, code });
                }
                None => ann
                    .errors
                    .push(format!("line {lineno}: `{word}` is not a diagnostic code")),
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
    csa_grammars::detect(path)
}

/// Analyses a fixture and compares diagnostics with its annotations.
/// Returns a human-readable report of every mismatch.
pub fn check_fixture(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let kind = kind_of(path).ok_or_else(|| format!("{}: unknown extension", path.display()))?;
    let fortran = kind != SourceKind::C;
    let ann = parse_annotations(&text, fortran);
    let fa = analyze(kind, &text, &ann.options);
    compare(path, &fa, &ann)
}

fn compare(path: &Path, fa: &FileAnalysis, ann: &Annotations) -> Result<(), String> {
    let mut actual: Vec<(Expectation, String)> = fa
        .diagnostics
        .iter()
        .map(|d| {
            let lc = fa.source.line_col(d.span.start as usize);
            (
                Expectation {
                    line: lc.line,
                    code: d.code,
                },
                format!("{}:{}: {} {}", lc.line, lc.column, d.code, d.message),
            )
        })
        .collect();
    actual.sort();
    let mut report = String::new();
    for e in &ann.errors {
        report.push_str(&format!("  annotation error: {e}\n"));
    }
    let mut expected = ann.expected.clone();
    let mut unexpected = Vec::new();
    for (a, text) in &actual {
        if let Some(i) = expected.iter().position(|e| e == a) {
            expected.remove(i);
        } else {
            unexpected.push(text.clone());
        }
    }
    for u in &unexpected {
        report.push_str(&format!("  unexpected diagnostic: {u}\n"));
    }
    for e in &expected {
        report.push_str(&format!(
            "  missing diagnostic: {} on line {}\n",
            e.code, e.line
        ));
    }
    if report.is_empty() {
        Ok(())
    } else {
        let mut all = String::new();
        for (_, t) in &actual {
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

    #[test]
    fn annotations_parse() {
        let a = parse_annotations(
            "//@ define FOO\nx(); //~ CSA105\n//~^ CSA101, CSA103 -- comment CSA999\n//~^^ XYZ\n",
            false,
        );
        assert_eq!(a.options.defines, vec!["FOO".to_string()]);
        assert_eq!(
            a.expected,
            vec![
                Expectation {
                    line: 2,
                    code: Code(101)
                },
                Expectation {
                    line: 2,
                    code: Code(103)
                },
                Expectation {
                    line: 2,
                    code: Code(105)
                },
            ]
        );
        assert_eq!(a.errors.len(), 1, "{:?}", a.errors);
    }
}
