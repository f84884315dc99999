//! Output formats of csa-lint: `full` (codespan-reporting snippets),
//! `concise` (`file:line:col: severity[CODE] message`) and `json` (the
//! PRODUCT.md contract).

use analyzer::analysis::FileAnalysis;
use analyzer::diag::{Applicability, Code, Diagnostic, Severity};
use analyzer::source::SourceText;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term;
use codespan_reporting::term::termcolor::{Buffer, ColorChoice};
use serde::Serialize;

/// Diagnostics of all files, sorted by file, line, column.
fn sorted(results: &[(String, FileAnalysis)]) -> Vec<(usize, &Diagnostic)> {
    let mut all: Vec<(usize, &Diagnostic)> = results
        .iter()
        .enumerate()
        .flat_map(|(i, (_, fa))| fa.diagnostics.iter().map(move |d| (i, d)))
        .collect();
    all.sort_by(|a, b| {
        (&results[a.0].0, a.1.span.start, a.1.code).cmp(&(
            &results[b.0].0,
            b.1.span.start,
            b.1.code,
        ))
    });
    all
}

/// `s` with control characters other than tab and newline written as
/// escapes (`\x1b`, `\u{9b}`), for anything echoed to a terminal.
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() && c != '\t' && c != '\n') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\t' | '\n' => out.push(c),
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Source text for snippets: every control character other than tab,
/// newline and carriage return becomes `?` bytes of the same length, so
/// spans stay where they are and nothing reaches the terminal raw.
fn displayable(text: &str) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && !matches!(c, '\t' | '\n' | '\r') {
            out.extend(std::iter::repeat_n('?', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    out
}

/// The summary line of the text formats.
fn summary_line(results: &[(String, FileAnalysis)]) -> String {
    let mut count = [0usize; 3];
    for (_, fa) in results {
        for d in &fa.diagnostics {
            count[d.severity as usize] += 1;
        }
    }
    if count.iter().sum::<usize>() == 0 {
        return format!("All checks passed ({} file(s)).\n", results.len());
    }
    format!(
        "Found {} error(s), {} warning(s), {} info(s) in {} file(s).\n",
        count[Severity::Error as usize],
        count[Severity::Warning as usize],
        count[Severity::Info as usize],
        results.len()
    )
}

/// FNV-1a, 64 bits: a stable hash for SARIF fingerprints (no dependence
/// on the platform or the Rust version, unlike `DefaultHasher`).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A relative URI reference for a path: forward slashes, reserved and
/// non-ASCII bytes percent-encoded.
fn uri(path: &str) -> String {
    let mut out = String::new();
    for b in path.replace('\\', "/").bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// SARIF 2.1.0: one run, a rule per code (with its documentation as help
/// and its default level), results with physical locations (columns in
/// Unicode code points, declared with `columnKind`), related locations and
/// fingerprints that survive edits elsewhere in the file (code, file, the
/// anchor line's text, and the occurrence number of that triple).
pub fn sarif(results: &[(String, FileAnalysis)]) -> String {
    use serde_json::json;
    let level = |s: Severity| match s {
        Severity::Info => "note",
        Severity::Warning => "warning",
        Severity::Error => "error",
    };
    let rules: Vec<serde_json::Value> = analyzer::rules::RULES
        .iter()
        .map(|r| {
            let doc = r.doc();
            json!({
                "id": r.code.to_string(),
                "name": r.name,
                "shortDescription": { "text": r.summary },
                "fullDescription": { "text": r.summary },
                "help": { "text": doc, "markdown": doc },
                "defaultConfiguration": { "level": level(r.severity) },
                "properties": { "tags": ["csa"] }
            })
        })
        .collect();
    let rule_index =
        |code: analyzer::diag::Code| analyzer::rules::RULES.iter().position(|r| r.code == code);
    let mut seen: std::collections::HashMap<(String, String, String), usize> =
        std::collections::HashMap::new();
    let mut out = Vec::new();
    for (i, d) in sorted(results) {
        let (file, fa) = &results[i];
        let src = &fa.source;
        let region = |span: analyzer::source::Span| {
            let s = src.line_col(span.start as usize);
            let e = src.line_col(span.end as usize);
            json!({
                "startLine": s.line, "startColumn": s.column,
                "endLine": e.line, "endColumn": e.column
            })
        };
        let location = |span| {
            json!({
                "physicalLocation": {
                    "artifactLocation": { "uri": uri(file) },
                    "region": region(span)
                }
            })
        };
        let line_text = src
            .line_text(src.line_of(d.span.start as usize))
            .trim()
            .to_string();
        let key = (d.code.to_string(), file.clone(), line_text.clone());
        let n = seen.entry(key).or_insert(0);
        *n += 1;
        let fingerprint = fnv1a(format!("{}\0{}\0{}\0{}", d.code, file, line_text, n).as_bytes());
        let mut message = d.message.clone();
        if let Some(h) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(h);
        }
        let related: Vec<serde_json::Value> = d
            .related
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let mut l = location(r.span);
                l["id"] = json!(k + 1);
                l["message"] = json!({ "text": r.message });
                l
            })
            .collect();
        let mut result = json!({
            "ruleId": d.code.to_string(),
            "level": level(d.severity),
            "message": { "text": message },
            "locations": [location(d.span)],
            "partialFingerprints": { "csaLint/v1": format!("{fingerprint:016x}") }
        });
        if let Some(idx) = rule_index(d.code) {
            result["ruleIndex"] = json!(idx);
        }
        if !related.is_empty() {
            result["relatedLocations"] = json!(related);
        }
        // SARIF 2.1.0 §3.55 fix objects, for the fixes that edit something.
        let fixes: Vec<serde_json::Value> = d
            .fixes
            .iter()
            .filter(|f| !f.edits.is_empty() && f.applicability != Applicability::DisplayOnly)
            .map(|f| {
                let replacements: Vec<serde_json::Value> = f
                    .edits
                    .iter()
                    .map(|e| {
                        json!({
                            "deletedRegion": region(e.span),
                            "insertedContent": { "text": e.new_text }
                        })
                    })
                    .collect();
                json!({
                    "description": { "text": f.title },
                    "artifactChanges": [{
                        "artifactLocation": { "uri": uri(file) },
                        "replacements": replacements
                    }],
                    "properties": { "applicability": match f.applicability {
                        Applicability::Safe => "safe",
                        Applicability::Unsafe => "unsafe",
                        Applicability::DisplayOnly => "display-only",
                    }}
                })
            })
            .collect();
        if !fixes.is_empty() {
            result["fixes"] = json!(fixes);
        }
        out.push(result);
    }
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "csa-lint",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules
            }},
            "columnKind": "unicodeCodePoints",
            "results": out
        }]
    });
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_else(|_| "{}".to_string());
    s.push('\n');
    s
}

/// GitHub Actions workflow commands: one `::notice`/`::warning`/`::error`
/// line per diagnostic, with the message's `%`, `\r` and `\n` escaped and
/// the property values' `,` and `:` too.
pub fn github(results: &[(String, FileAnalysis)]) -> String {
    fn data(s: &str) -> String {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    }
    fn property(s: &str) -> String {
        data(s).replace(':', "%3A").replace(',', "%2C")
    }
    let mut out = String::new();
    for (i, d) in sorted(results) {
        let (file, fa) = &results[i];
        let start = fa.source.line_col(d.span.start as usize);
        let end = fa.source.line_col(d.span.end as usize);
        let level = match d.severity {
            Severity::Info => "notice",
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        let mut message = d.message.clone();
        if let Some(h) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(h);
        }
        out.push_str(&format!(
            "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
            property(file),
            start.line,
            start.column,
            end.line,
            end.column,
            property(&format!("{} {}", d.code, d.rule)),
            data(&message)
        ));
    }
    out
}

pub fn concise(results: &[(String, FileAnalysis)], summary: bool) -> String {
    let mut out = String::new();
    for (i, d) in sorted(results) {
        let (file, fa) = &results[i];
        let lc = fa.source.line_col(d.span.start as usize);
        out.push_str(&format!(
            "{}:{}:{}: {}[{}] {}\n",
            escape_controls(file),
            lc.line,
            lc.column,
            d.severity,
            d.code,
            escape_controls(&d.message)
        ));
    }
    if summary {
        out.push_str(&summary_line(results));
    }
    out
}

#[derive(Serialize)]
struct JsonDiag<'a> {
    code: String,
    rule: &'a str,
    severity: &'a str,
    file: &'a str,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    message: &'a str,
    related: Vec<JsonRelated<'a>>,
    fixes: Vec<JsonFix<'a>>,
}

#[derive(Serialize)]
struct JsonRelated<'a> {
    file: &'a str,
    line: u32,
    column: u32,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    title: &'a str,
    applicability: &'a str,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    new_text: &'a str,
}

pub fn json(results: &[(String, FileAnalysis)]) -> String {
    let mut items = Vec::new();
    for (i, d) in sorted(results) {
        let (file, fa) = &results[i];
        let src: &SourceText = &fa.source;
        let start = src.line_col(d.span.start as usize);
        let end = src.line_col(d.span.end as usize);
        items.push(JsonDiag {
            code: d.code.to_string(),
            rule: d.rule,
            severity: d.severity.as_str(),
            file,
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
            message: &d.message,
            related: d
                .related
                .iter()
                .map(|r| {
                    let lc = src.line_col(r.span.start as usize);
                    JsonRelated {
                        file,
                        line: lc.line,
                        column: lc.column,
                        message: &r.message,
                    }
                })
                .collect(),
            fixes: d
                .fixes
                .iter()
                .map(|f| JsonFix {
                    title: &f.title,
                    applicability: match f.applicability {
                        Applicability::Safe => "safe",
                        Applicability::Unsafe => "unsafe",
                        Applicability::DisplayOnly => "display-only",
                    },
                    edits: f
                        .edits
                        .iter()
                        .map(|e| {
                            let s = src.line_col(e.span.start as usize);
                            let t = src.line_col(e.span.end as usize);
                            JsonEdit {
                                line: s.line,
                                column: s.column,
                                end_line: t.line,
                                end_column: t.column,
                                new_text: &e.new_text,
                            }
                        })
                        .collect(),
                })
                .collect(),
        });
    }
    let mut s = serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".to_string());
    s.push('\n');
    s
}

/// `--statistics`: how many diagnostics each rule produced, most first
/// (a JSON array of `{"code","rule","severity","count"}` with `json`).
pub fn statistics(results: &[(String, FileAnalysis)], json: bool) -> String {
    let mut counts: std::collections::BTreeMap<Code, (usize, &Diagnostic)> = Default::default();
    for (_, fa) in results {
        for d in &fa.diagnostics {
            counts.entry(d.code).or_insert((0, d)).0 += 1;
        }
    }
    let mut rows: Vec<(Code, usize, &Diagnostic)> =
        counts.into_iter().map(|(c, (n, d))| (c, n, d)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if json {
        let items: Vec<serde_json::Value> = rows
            .iter()
            .map(|(code, n, d)| {
                serde_json::json!({
                    "code": code.to_string(),
                    "rule": d.rule,
                    "severity": d.severity.as_str(),
                    "count": n,
                })
            })
            .collect();
        return serde_json::to_string_pretty(&items).unwrap_or_default() + "\n";
    }
    let mut out = String::new();
    for (code, n, d) in &rows {
        out.push_str(&format!(
            "{n:>6}  {code}  {:<8} {}\n",
            d.severity.as_str(),
            d.rule
        ));
    }
    let total: usize = rows.iter().map(|r| r.1).sum();
    out.push_str(&format!(
        "Found {total} diagnostic(s) in {} file(s).\n",
        results.len()
    ));
    out
}

pub fn full(results: &[(String, FileAnalysis)], color: bool, summary: bool) -> String {
    let mut files = SimpleFiles::new();
    let ids: Vec<usize> = results
        .iter()
        .map(|(name, fa)| {
            files.add(
                escape_controls(name).into_owned(),
                displayable(fa.source.text()),
            )
        })
        .collect();
    let mut buffer = if color {
        Buffer::ansi()
    } else {
        let _ = ColorChoice::Never;
        Buffer::no_color()
    };
    let config = term::Config::default();
    let mut count = [0usize; 3];
    for (i, d) in sorted(results) {
        let file = ids[i];
        let severity = match d.severity {
            Severity::Info => cs::Severity::Note,
            Severity::Warning => cs::Severity::Warning,
            Severity::Error => cs::Severity::Error,
        };
        count[d.severity as usize] += 1;
        let mut labels = vec![cs::Label::primary(file, d.span.range())];
        for r in &d.related {
            labels.push(
                cs::Label::secondary(file, r.span.range())
                    .with_message(escape_controls(&r.message).into_owned()),
            );
        }
        let mut notes = Vec::new();
        if let Some(h) = &d.help {
            notes.push(format!("help: {}", escape_controls(h)));
        }
        notes.push(format!(
            "`csa-lint --explain {}` ({}) tells more",
            d.code, d.rule
        ));
        let diag = cs::Diagnostic::new(severity)
            .with_code(d.code.to_string())
            .with_message(escape_controls(&d.message).into_owned())
            .with_labels(labels)
            .with_notes(notes);
        let _ = term::emit_to_write_style(&mut buffer, &config, &files, &diag);
    }
    let mut out = String::from_utf8_lossy(buffer.as_slice()).into_owned();
    if summary {
        out.push_str(&summary_line(results));
    }
    out
}
