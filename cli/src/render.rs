//! Output formats of csa-lint: `full` (codespan-reporting snippets),
//! `concise` (`file:line:col: severity[CODE] message`), `json` (the
//! PRODUCT.md contract), `github` and `sarif`.
//!
//! Every format is written a file at a time ([`FileView`]), so a run
//! prints each file's report as soon as it (and every file before it) is
//! done and keeps no analysis alive: `json` and `sarif` are one document,
//! written as a frame ([`json_frame`], [`sarif_frame`]) around items
//! rendered per file ([`json_items`], [`sarif_items`]), byte for byte what
//! serialising the whole document at once would give.

use analyzer::diag::{Applicability, Code, Diagnostic, Fix, Message, Severity};
use analyzer::source::SourceText;
use analyzer::Lang;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term;
use codespan_reporting::term::termcolor::{Buffer, ColorChoice};
use serde::Serialize;

/// One file's report: its name as shown, its text, and its diagnostics
/// sorted by position and code ([`sort`]).
pub struct FileView<'a> {
    pub name: &'a str,
    pub source: &'a SourceText,
    pub lang: Lang,
    pub diagnostics: &'a [Diagnostic],
}

impl FileView<'_> {
    /// A message's text, its line references shown as lines of the file.
    fn text(&self, m: &Message) -> String {
        m.render(self.source)
    }

    /// The message with its help after a line break.
    fn message_and_help(&self, d: &Diagnostic) -> String {
        let mut message = self.text(&d.message);
        if let Some(h) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(&self.text(h));
        }
        message
    }

    /// Every fix of `d`, the suppression fix last.
    fn fixes(&self, d: &Diagnostic) -> Vec<Fix> {
        analyzer::fixes_of(d, self.source, self.lang)
    }
}

/// Sorts one file's diagnostics as every format prints them: by position,
/// then code (stable: equal keys keep the analysis's order).
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| (d.span.start, d.code));
}

/// Diagnostics counted per severity, and per rule for `--statistics`.
#[derive(Default)]
pub struct Totals {
    pub files: usize,
    pub by_severity: [usize; 3],
    /// code -> (count, rule name, severity of the first one)
    pub by_rule: std::collections::BTreeMap<Code, (usize, &'static str, Severity)>,
}

impl Totals {
    pub fn add(&mut self, diagnostics: &[Diagnostic]) {
        self.files += 1;
        for d in diagnostics {
            self.by_severity[d.severity as usize] += 1;
            self.by_rule
                .entry(d.code)
                .or_insert((0, d.rule, d.severity))
                .0 += 1;
        }
    }
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
pub fn summary_line(totals: &Totals) -> String {
    let count = totals.by_severity;
    if count.iter().sum::<usize>() == 0 {
        return format!("All checks passed ({} file(s)).\n", totals.files);
    }
    format!(
        "Found {} error(s), {} warning(s), {} info(s) in {} file(s).\n",
        count[Severity::Error as usize],
        count[Severity::Warning as usize],
        count[Severity::Info as usize],
        totals.files
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

/// The SARIF result level of a severity.
fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Info => "note",
        Severity::Warning => "warning",
        Severity::Error => "error",
    }
}

/// Stands for the items of the array a frame is cut around.
const ITEMS: &str = "\u{1}csa-lint items\u{1}";

/// A frame for a pretty-printed JSON document with one array of items
/// inside: the text before the items, the text after them, and the
/// indentation of the array's line. `doc` holds [`ITEMS`] where the array
/// goes.
pub struct Frame {
    before: String,
    after: String,
    indent: usize,
    items: usize,
}

impl Frame {
    fn around(doc: &serde_json::Value) -> Frame {
        let text = serde_json::to_string_pretty(doc).unwrap_or_default();
        let quoted = serde_json::to_string(ITEMS).unwrap_or_default();
        let at = text.find(&quoted).unwrap_or(text.len());
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let indent = text[line_start..]
            .bytes()
            .take_while(|&b| b == b' ')
            .count();
        Frame {
            before: text[..at].to_string(),
            after: text.get(at + quoted.len()..).unwrap_or("").to_string() + "\n",
            indent,
            items: 0,
        }
    }

    /// The text that goes before an item (the opening of the document and
    /// of the array for the first one, a comma otherwise) and the item,
    /// `body` ([`pretty`]), indented to its depth.
    pub fn item(&mut self, body: &str) -> String {
        let pad = " ".repeat(self.indent + 2);
        let mut out = String::with_capacity(body.len() + 64);
        if self.items == 0 {
            out.push_str(&std::mem::take(&mut self.before));
            out.push_str("[\n");
        } else {
            out.push_str(",\n");
        }
        for (k, line) in body.split('\n').enumerate() {
            if k > 0 {
                out.push('\n');
            }
            out.push_str(&pad);
            out.push_str(line);
        }
        self.items += 1;
        out
    }

    /// What closes the document.
    pub fn finish(self) -> String {
        if self.items == 0 {
            return format!("{}[]{}", self.before, self.after);
        }
        format!("\n{}]{}", " ".repeat(self.indent), self.after)
    }
}

/// A JSON item pretty-printed as serialising the whole document would
/// print it at depth 0 (`Frame::item` indents it).
pub fn pretty(value: &impl Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".to_string())
}

/// The JSON format's document: an array of diagnostics.
pub fn json_frame() -> Frame {
    Frame::around(&serde_json::json!(ITEMS))
}

/// SARIF 2.1.0: one run, a rule per code (with its documentation as help
/// and its default level), results with physical locations (columns in
/// Unicode code points, declared with `columnKind`), related locations and
/// fingerprints that survive edits elsewhere in the file (code, file, the
/// anchor line's text, and the occurrence number of that triple). This is
/// the document around the results ([`sarif_items`]).
pub fn sarif_frame() -> Frame {
    use serde_json::json;
    let rules: Vec<serde_json::Value> = analyzer::RULES
        .iter()
        .map(|r| {
            let doc = r.doc();
            json!({
                "id": r.code.to_string(),
                "name": r.name,
                "shortDescription": { "text": r.summary },
                "fullDescription": { "text": r.summary },
                "help": { "text": doc, "markdown": doc },
                "defaultConfiguration": { "level": sarif_level(r.severity) },
                "properties": { "tags": ["csa"] }
            })
        })
        .collect();
    Frame::around(&json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "csa-lint",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules
            }},
            "columnKind": "unicodeCodePoints",
            "results": ITEMS
        }]
    }))
}

/// The SARIF results of one file.
pub fn sarif_items(v: &FileView) -> Vec<serde_json::Value> {
    use serde_json::json;
    let rule_index =
        |code: analyzer::diag::Code| analyzer::RULES.iter().position(|r| r.code == code);
    let file = v.name;
    let src = v.source;
    let mut out = Vec::new();
    for (d, fingerprint) in v.diagnostics.iter().zip(fingerprints(v)) {
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
        let message = v.message_and_help(d);
        let related: Vec<serde_json::Value> = d
            .related
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let mut l = location(r.span);
                l["id"] = json!(k + 1);
                l["message"] = json!({ "text": v.text(&r.message) });
                l
            })
            .collect();
        let mut result = json!({
            "ruleId": d.code.to_string(),
            "level": sarif_level(d.severity),
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
        let fixes: Vec<serde_json::Value> = v
            .fixes(d)
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
                    "properties": { "applicability": applicability(f.applicability) }
                })
            })
            .collect();
        if !fixes.is_empty() {
            result["fixes"] = json!(fixes);
        }
        out.push(result);
    }
    out
}

/// The SARIF fingerprints of one file's diagnostics, in order: code, file,
/// the anchor line's trimmed text and the occurrence number of that
/// triple, so they survive edits elsewhere in the file.
fn fingerprints(v: &FileView) -> Vec<u64> {
    let mut seen: std::collections::HashMap<(Code, String), usize> =
        std::collections::HashMap::new();
    v.diagnostics
        .iter()
        .map(|d| {
            let src = v.source;
            let line_text = src
                .line_text(src.line_of(d.span.start as usize))
                .trim()
                .to_string();
            let n = seen.entry((d.code, line_text.clone())).or_insert(0);
            *n += 1;
            fnv1a(format!("{}\0{}\0{}\0{}", d.code, v.name, line_text, n).as_bytes())
        })
        .collect()
}

/// GitLab Code Quality: CodeClimate issues (`description`, `check_name`,
/// `fingerprint`, `severity`, `location.path` and `location.lines`). The
/// path is the file's name as shown without a leading `./`: run csa-lint
/// from the repository's root so that GitLab finds the files.
pub fn gitlab_items(v: &FileView) -> Vec<serde_json::Value> {
    let path = v.name.strip_prefix("./").unwrap_or(v.name);
    v.diagnostics
        .iter()
        .zip(fingerprints(v))
        .map(|(d, fingerprint)| {
            let start = v.source.line_col(d.span.start as usize);
            let end = v.source.line_col(d.span.end as usize);
            serde_json::json!({
                "description": format!("{}: {}", d.code, v.text(&d.message)),
                "check_name": format!("{} {}", d.code, d.rule),
                "fingerprint": format!("{fingerprint:016x}"),
                "severity": match d.severity {
                    Severity::Info => "info",
                    Severity::Warning => "minor",
                    Severity::Error => "major",
                },
                "location": {
                    "path": path,
                    "lines": { "begin": start.line, "end": end.line }
                }
            })
        })
        .collect()
}

fn applicability(a: Applicability) -> &'static str {
    match a {
        Applicability::Safe => "safe",
        Applicability::Unsafe => "unsafe",
        Applicability::DisplayOnly => "display-only",
    }
}

/// GitHub Actions workflow commands: one `::notice`/`::warning`/`::error`
/// line per diagnostic, with the message's `%`, `\r` and `\n` escaped and
/// the property values' `,` and `:` too.
pub fn github(v: &FileView) -> String {
    fn data(s: &str) -> String {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    }
    fn property(s: &str) -> String {
        data(s).replace(':', "%3A").replace(',', "%2C")
    }
    let mut out = String::new();
    for d in v.diagnostics {
        let start = v.source.line_col(d.span.start as usize);
        let end = v.source.line_col(d.span.end as usize);
        let level = match d.severity {
            Severity::Info => "notice",
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        let message = v.message_and_help(d);
        out.push_str(&format!(
            "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
            property(v.name),
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

/// One line per diagnostic: `file:line:col: severity[CODE] message`.
pub fn concise(v: &FileView) -> String {
    let mut out = String::new();
    for d in v.diagnostics {
        let lc = v.source.line_col(d.span.start as usize);
        out.push_str(&format!(
            "{}:{}:{}: {}[{}] {}\n",
            escape_controls(v.name),
            lc.line,
            lc.column,
            d.severity,
            d.code,
            escape_controls(&v.text(&d.message))
        ));
    }
    out
}

#[derive(Serialize)]
pub struct JsonDiag<'a> {
    code: String,
    rule: &'a str,
    severity: &'a str,
    file: &'a str,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    message: String,
    /// Advice beside the message (how to fix, what csa-lint needs), when
    /// the rule gives some.
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<String>,
    related: Vec<JsonRelated<'a>>,
    fixes: Vec<JsonFix>,
}

#[derive(Serialize)]
struct JsonRelated<'a> {
    file: &'a str,
    line: u32,
    column: u32,
    message: String,
}

#[derive(Serialize)]
struct JsonFix {
    kind: &'static str,
    title: String,
    applicability: &'static str,
    edits: Vec<JsonEdit>,
}

#[derive(Serialize)]
struct JsonEdit {
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    new_text: String,
}

/// The JSON items of one file (see [`json_frame`]).
pub fn json_items<'a>(v: &FileView<'a>) -> Vec<JsonDiag<'a>> {
    let file = v.name;
    let src: &SourceText = v.source;
    v.diagnostics
        .iter()
        .map(|d| {
            let start = src.line_col(d.span.start as usize);
            let end = src.line_col(d.span.end as usize);
            JsonDiag {
                code: d.code.to_string(),
                rule: d.rule,
                severity: d.severity.as_str(),
                file,
                line: start.line,
                column: start.column,
                end_line: end.line,
                end_column: end.column,
                message: v.text(&d.message),
                help: d.help.as_ref().map(|h| v.text(h)),
                related: d
                    .related
                    .iter()
                    .map(|r| {
                        let lc = src.line_col(r.span.start as usize);
                        JsonRelated {
                            file,
                            line: lc.line,
                            column: lc.column,
                            message: v.text(&r.message),
                        }
                    })
                    .collect(),
                fixes: v
                    .fixes(d)
                    .into_iter()
                    .map(|f| JsonFix {
                        kind: f.kind.name(),
                        title: f.title,
                        applicability: applicability(f.applicability),
                        edits: f
                            .edits
                            .into_iter()
                            .map(|e| {
                                let s = src.line_col(e.span.start as usize);
                                let t = src.line_col(e.span.end as usize);
                                JsonEdit {
                                    line: s.line,
                                    column: s.column,
                                    end_line: t.line,
                                    end_column: t.column,
                                    new_text: e.new_text,
                                }
                            })
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// `--statistics`: how many diagnostics each rule produced, most first
/// (a JSON array of `{"code","rule","severity","count"}` with `json`).
pub fn statistics(totals: &Totals, json: bool) -> String {
    let mut rows: Vec<(Code, usize, &'static str, Severity)> = totals
        .by_rule
        .iter()
        .map(|(c, (n, rule, sev))| (*c, *n, *rule, *sev))
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if json {
        let items: Vec<serde_json::Value> = rows
            .iter()
            .map(|(code, n, rule, severity)| {
                serde_json::json!({
                    "code": code.to_string(),
                    "rule": rule,
                    "severity": severity.as_str(),
                    "count": n,
                })
            })
            .collect();
        return serde_json::to_string_pretty(&items).unwrap_or_default() + "\n";
    }
    let mut out = String::new();
    for (code, n, rule, severity) in &rows {
        out.push_str(&format!(
            "{n:>6}  {code}  {:<8} {rule}\n",
            severity.as_str()
        ));
    }
    let total: usize = rows.iter().map(|r| r.1).sum();
    out.push_str(&format!(
        "Found {total} diagnostic(s) in {} file(s).\n",
        totals.files
    ));
    out
}

/// Source snippets with labels and notes (codespan-reporting).
pub fn full(v: &FileView, color: bool) -> String {
    if v.diagnostics.is_empty() {
        return String::new();
    }
    let mut files = SimpleFiles::new();
    let file = files.add(
        escape_controls(v.name).into_owned(),
        displayable(v.source.text()),
    );
    let mut buffer = if color {
        Buffer::ansi()
    } else {
        let _ = ColorChoice::Never;
        Buffer::no_color()
    };
    let config = term::Config::default();
    for d in v.diagnostics {
        let severity = match d.severity {
            Severity::Info => cs::Severity::Note,
            Severity::Warning => cs::Severity::Warning,
            Severity::Error => cs::Severity::Error,
        };
        let mut labels = vec![cs::Label::primary(file, d.span.range())];
        for r in d.related.iter() {
            labels.push(
                cs::Label::secondary(file, r.span.range())
                    .with_message(escape_controls(&v.text(&r.message)).into_owned()),
            );
        }
        let mut notes = Vec::new();
        if let Some(h) = &d.help {
            notes.push(format!("help: {}", escape_controls(&v.text(h))));
        }
        notes.push(format!(
            "`csa-lint --explain {}` ({}) tells more",
            d.code, d.rule
        ));
        let diag = cs::Diagnostic::new(severity)
            .with_code(d.code.to_string())
            .with_message(escape_controls(&v.text(&d.message)).into_owned())
            .with_labels(labels)
            .with_notes(notes);
        let _ = term::emit_to_write_style(&mut buffer, &config, &files, &diag);
    }
    String::from_utf8_lossy(buffer.as_slice()).into_owned()
}
