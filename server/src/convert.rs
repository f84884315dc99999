//! Analyzer data to LSP objects.

use crate::document::Analysed;
use crate::position::Encoding;
use analyzer::diag::{Applicability, Code, Diagnostic, Fix, Message, Part, Severity};
use analyzer::source::SourceText;
use analyzer::{HintSide, SymbolKind as IdeSymbolKind};
use std::borrow::Cow;
use std::collections::HashMap;
use tower_lsp_server::lsp_types::{
    self as lsp, CodeAction, CodeActionKind, CodeDescription, DiagnosticRelatedInformation,
    DiagnosticSeverity, DiagnosticTag, DocumentSymbol, InlayHint, InlayHintLabel, InlayHintTooltip,
    Location, NumberOrString, TextEdit, Uri, WorkspaceEdit,
};

/// Where rule documentation lives; `#csa101-could-not-parallelize` is
/// appended. Overridable with the `rulesUrl` initialization option.
pub const DEFAULT_RULES_URL: &str = "https://github.com/csa-lint/csa-lint/blob/main/docs/rules.md";

/// Codes whose marker or comment has no effect: editors fade them.
fn unnecessary(code: Code) -> bool {
    matches!(code.0, 102 | 105 | 106 | 208 | 402)
}

fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

/// `d` is a diagnostic of the analysis of `src`, in the form pull reports
/// and code actions carry. [`write_diagnostics_json`] writes the same value
/// for publication (tested against this form's serialisation).
pub fn diagnostic(
    a: &Analysed,
    src: &SourceText,
    uri: &Uri,
    d: &Diagnostic,
    enc: Encoding,
    rules_url: &str,
) -> lsp::Diagnostic {
    let positions = a.positions();
    let range =
        |span: analyzer::source::Span| positions.range(span.start as usize, span.end as usize, enc);
    lsp::Diagnostic {
        range: range(d.span),
        severity: Some(severity(d.severity)),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: rule_href(rules_url, d)
            .parse()
            .ok()
            .map(|href| CodeDescription { href }),
        source: Some("csa-lint".to_string()),
        message: full_message(d, src).into_owned(),
        related_information: (!d.related.is_empty()).then(|| {
            d.related
                .iter()
                .map(|r| DiagnosticRelatedInformation {
                    location: Location::new(uri.clone(), range(r.span)),
                    message: text(&r.message, src).into_owned(),
                })
                .collect()
        }),
        tags: unnecessary(d.code).then(|| vec![DiagnosticTag::UNNECESSARY]),
        data: None,
    }
}

/// A JSON string, escaped as serde_json escapes it.
fn json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    json_str_contents(out, s);
    out.push(b'"');
}

/// Whether JSON needs an escape for some byte of `s` (a control
/// character, `"` or `\`). Blocks of 64 bytes are tested without
/// branching inside them, which the compiler turns into vector code:
/// several times faster than a test per byte on messages of a few
/// hundred bytes.
fn needs_escape(s: &[u8]) -> bool {
    let bad = |b: u8| (b < 0x20) | (b == b'"') | (b == b'\\');
    let mut blocks = s.chunks_exact(64);
    for block in &mut blocks {
        if block.iter().fold(false, |acc, &b| acc | bad(b)) {
            return true;
        }
    }
    blocks
        .remainder()
        .iter()
        .fold(false, |acc, &b| acc | bad(b))
}

/// The inside of a JSON string (no quotes), escaped as serde_json escapes
/// it; most text needs no escape and is copied as it is.
fn json_str_contents(out: &mut Vec<u8>, s: &str) {
    if needs_escape(s.as_bytes()) {
        // serde_json's escaping, without its quotes (writing to a `Vec`
        // cannot fail)
        let at = out.len();
        if serde_json::to_writer(&mut *out, s).is_ok() && out.len() >= at + 2 {
            out.pop();
            out.remove(at);
        }
    } else {
        out.extend_from_slice(s.as_bytes());
    }
}

/// A message as a JSON string's contents, its line references shown as in
/// `src` (what [`text`] gives, without building it).
fn json_message_contents(out: &mut Vec<u8>, m: &Message, src: &SourceText) {
    if let Some(t) = m.as_plain() {
        json_str_contents(out, t);
        return;
    }
    for p in m.parts() {
        match p {
            Part::Text(t) => json_str_contents(out, t),
            Part::Line(o) => {
                out.extend_from_slice(b"line ");
                json_num(out, src.line_of(o as usize) as u32 + 1);
            }
        }
    }
}

fn json_num(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn json_range(out: &mut Vec<u8>, r: &lsp::Range) {
    out.extend_from_slice(b"{\"start\":{\"line\":");
    json_num(out, r.start.line);
    out.extend_from_slice(b",\"character\":");
    json_num(out, r.start.character);
    out.extend_from_slice(b"},\"end\":{\"line\":");
    json_num(out, r.end.line);
    out.extend_from_slice(b",\"character\":");
    json_num(out, r.end.character);
    out.extend_from_slice(b"}}");
}

/// Where a rule is documented.
fn rule_href(rules_url: &str, d: &Diagnostic) -> String {
    format!("{rules_url}#{}-{}", d.code, d.rule).to_ascii_lowercase()
}

/// A message's text, its line references shown as in `src`.
fn text<'a>(m: &'a Message, src: &SourceText) -> Cow<'a, str> {
    match m.as_plain() {
        Some(t) => Cow::Borrowed(t),
        None => Cow::Owned(m.render(src)),
    }
}

/// The message shown: the diagnostic's, and its help after a line break.
fn full_message<'a>(d: &'a Diagnostic, src: &SourceText) -> Cow<'a, str> {
    match &d.help {
        None => text(&d.message, src),
        Some(h) => Cow::Owned(format!("{}\nhelp: {}", text(&d.message, src), text(h, src))),
    }
}

/// A fingerprint of what [`diagnostics_json`] would publish: the hash of
/// that JSON (a pull report's `resultId`; the server hashes the array it
/// has just written the same way before deciding to publish it).
pub fn diagnostics_fingerprint(a: &Analysed, uri: &Uri, enc: Encoding, rules_url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&diagnostics_json(a, uri, enc, rules_url))
}

/// The diagnostics of an analysis as the JSON array that is published.
pub fn diagnostics_json(a: &Analysed, uri: &Uri, enc: Encoding, rules_url: &str) -> Vec<u8> {
    let mut out = Vec::new();
    write_diagnostics_json(a, uri, enc, rules_url, &mut out);
    out
}

/// [`diagnostics_json`], appended to `out` (the publication's body: the
/// largest message is not copied again).
pub fn write_diagnostics_json(
    a: &Analysed,
    uri: &Uri,
    enc: Encoding,
    rules_url: &str,
    out: &mut Vec<u8>,
) {
    let start = out.len();
    let Ok(fa) = &a.result else {
        if serde_json::to_writer(&mut *out, &diagnostics(a, uri, enc, rules_url)).is_err() {
            out.truncate(start);
            out.extend_from_slice(b"[]");
        }
        return;
    };
    let src = fa.source();
    // What is the same in every diagnostic of a rule (its code and link,
    // the link checked to be a URI as `diagnostic` does), and the URI,
    // written once.
    let mut rules: HashMap<Code, Vec<u8>> = HashMap::new();
    for d in fa.diagnostics() {
        rules.entry(d.code).or_insert_with(|| {
            let mut head = b",\"code\":".to_vec();
            json_str(&mut head, &d.code.to_string());
            let h = rule_href(rules_url, d);
            if h.parse::<Uri>().is_ok() {
                head.extend_from_slice(b",\"codeDescription\":{\"href\":");
                json_str(&mut head, &h);
                head.push(b'}');
            }
            head.extend_from_slice(b",\"source\":\"csa-lint\",\"message\":\"");
            head
        });
    }
    let mut uri_json = Vec::new();
    json_str(&mut uri_json, uri.as_str());
    let positions = a.positions();
    out.push(b'[');
    for (i, d) in fa.diagnostics().iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_diagnostic(out, d, &positions, &rules, &uri_json, src, enc);
    }
    out.push(b']');
}

/// One diagnostic as the JSON object that is published; `rules` holds
/// what every diagnostic of a code shares (see `write_diagnostics_json`),
/// `uri_json` the document's URI as a JSON string.
fn write_diagnostic(
    out: &mut Vec<u8>,
    d: &Diagnostic,
    positions: &crate::position::Positions<'_>,
    rules: &HashMap<Code, Vec<u8>>,
    uri_json: &[u8],
    src: &SourceText,
    enc: Encoding,
) {
    // The same value as `wire(..).write_json` (tested), without
    // building the published form.
    out.extend_from_slice(b"{\"range\":");
    json_range(
        out,
        &positions.range(d.span.start as usize, d.span.end as usize, enc),
    );
    out.extend_from_slice(b",\"severity\":");
    json_num(out, severity_number(severity(d.severity)));
    match rules.get(&d.code) {
        Some(head) => out.extend_from_slice(head),
        None => out.extend_from_slice(b",\"code\":\"\",\"source\":\"csa-lint\",\"message\":\""),
    }
    json_message_contents(out, &d.message, src);
    if let Some(h) = &d.help {
        out.extend_from_slice(b"\\nhelp: ");
        json_message_contents(out, h, src);
    }
    out.push(b'"');
    if !d.related.is_empty() {
        out.extend_from_slice(b",\"relatedInformation\":[");
        for (i, r) in d.related.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"location\":{\"uri\":");
            out.extend_from_slice(uri_json);
            out.extend_from_slice(b",\"range\":");
            json_range(
                out,
                &positions.range(r.span.start as usize, r.span.end as usize, enc),
            );
            out.extend_from_slice(b"},\"message\":\"");
            json_message_contents(out, &r.message, src);
            out.extend_from_slice(b"\"}");
        }
        out.push(b']');
    }
    if unnecessary(d.code) {
        // DiagnosticTag::UNNECESSARY
        out.extend_from_slice(b",\"tags\":[1]");
    }
    out.push(b'}');
}

fn severity_number(s: DiagnosticSeverity) -> u32 {
    match s {
        DiagnosticSeverity::ERROR => 1,
        DiagnosticSeverity::WARNING => 2,
        DiagnosticSeverity::INFORMATION => 3,
        _ => 4,
    }
}

/// The diagnostics of an analysis; an internal error becomes a single
/// error at the top of the document.
pub fn diagnostics(
    a: &Analysed,
    uri: &Uri,
    enc: Encoding,
    rules_url: &str,
) -> Vec<lsp::Diagnostic> {
    match &a.result {
        Ok(fa) => fa
            .diagnostics()
            .iter()
            .map(|d| diagnostic(a, fa.source(), uri, d, enc, rules_url))
            .collect(),
        Err(msg) => vec![lsp::Diagnostic {
            range: lsp::Range::default(),
            severity: Some(DiagnosticSeverity::ERROR),
            source: Some("csa-lint".to_string()),
            message: format!(
                "csa-lint could not analyse this document (internal error: {msg}); the rest of the workspace is unaffected. Please report it with the file attached."
            ),
            ..Default::default()
        }],
    }
}

/// A fix's edits as a workspace edit on `uri`.
pub fn workspace_edit(a: &Analysed, uri: &Uri, fixes: &[&Fix], enc: Encoding) -> WorkspaceEdit {
    let mut edits: Vec<TextEdit> = Vec::new();
    for fix in fixes {
        for e in &fix.edits {
            edits.push(TextEdit::new(
                a.positions()
                    .range(e.span.start as usize, e.span.end as usize, enc),
                e.new_text.clone(),
            ));
        }
    }
    let mut changes = HashMap::new();
    changes.insert(uri.clone(), edits);
    WorkspaceEdit {
        changes: Some(changes),
        ..Default::default()
    }
}

/// The code action of one fix of one diagnostic.
pub fn fix_action(
    a: &Analysed,
    uri: &Uri,
    d: &Diagnostic,
    lsp_diag: Option<lsp::Diagnostic>,
    fix: &Fix,
    preferred: bool,
    enc: Encoding,
) -> Option<CodeAction> {
    let edit = (fix.applicability != Applicability::DisplayOnly)
        .then(|| workspace_edit(a, uri, &[fix], enc));
    let title = match fix.applicability {
        Applicability::Safe => format!("{} ({})", fix.title, d.code),
        Applicability::Unsafe => format!("{} ({}, unsafe)", fix.title, d.code),
        Applicability::DisplayOnly => {
            format!("{} ({}, not applied automatically)", fix.title, d.code)
        }
    };
    Some(CodeAction {
        title,
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: lsp_diag.map(|d| vec![d]),
        edit,
        disabled: (fix.applicability == Applicability::DisplayOnly).then(|| {
            lsp::CodeActionDisabled {
                reason: fix.title.clone(),
            }
        }),
        is_preferred: preferred.then_some(true),
        ..Default::default()
    })
}

pub fn hover(a: &Analysed, h: &analyzer::Hover, enc: Encoding) -> lsp::Hover {
    lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: h.markdown.clone(),
        }),
        range: Some(
            a.positions()
                .range(h.span.start as usize, h.span.end as usize, enc),
        ),
    }
}

pub fn inlay_hint(a: &Analysed, h: &analyzer::PlacementHint, enc: Encoding) -> InlayHint {
    InlayHint {
        position: a.positions().position(h.offset, enc),
        label: InlayHintLabel::String(h.label.clone()),
        // Placement hints are neither types nor parameters.
        kind: None,
        text_edits: None,
        tooltip: Some(InlayHintTooltip::String(h.tooltip.clone())),
        padding_left: Some(h.side == HintSide::After),
        padding_right: Some(h.side == HintSide::Before),
        data: None,
    }
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must still be written.
pub fn symbol(a: &Analysed, s: &analyzer::Symbol, enc: Encoding) -> DocumentSymbol {
    let range = a
        .positions()
        .range(s.span.start as usize, s.span.end as usize, enc);
    let mut selection =
        a.positions()
            .range(s.selection.start as usize, s.selection.end as usize, enc);
    // The selection range must lie inside the range.
    if selection.start < range.start || selection.end > range.end {
        selection = range;
    }
    DocumentSymbol {
        name: if s.name.is_empty() {
            "(anonymous)".to_string()
        } else {
            s.name.clone()
        },
        detail: Some(s.detail.clone()),
        kind: match s.kind {
            IdeSymbolKind::Function => lsp::SymbolKind::FUNCTION,
            IdeSymbolKind::Loop => lsp::SymbolKind::EVENT,
        },
        tags: None,
        deprecated: None,
        range,
        selection_range: selection,
        children: (!s.children.is_empty())
            .then(|| s.children.iter().map(|c| symbol(a, c, enc)).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer::{analyze, AnalysisOptions};
    use csa_grammars::SourceKind;

    /// The published JSON equals the `lsp_types` diagnostics serialised, on
    /// every fixture (help texts, related locations, faded codes, non-ASCII
    /// text in both encodings).
    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        for s in [
            "plain `a[i]`",
            "a \"quoted\" name",
            "back\\slash",
            "tab\there\nline",
            "\u{1}\u{1f}",
            "caf\u{e9} \u{1d11e}",
            "",
        ] {
            let mut out = b"x".to_vec();
            json_str(&mut out, s);
            let expected = format!("x{}", serde_json::to_string(s).unwrap());
            assert_eq!(String::from_utf8(out).unwrap(), expected);
        }
    }

    /// The escape test reads 64-byte blocks: a character needing an escape
    /// is found wherever it sits, in a block or in the rest after them.
    #[test]
    fn an_escape_is_found_at_every_position_of_a_long_string() {
        for len in [63, 64, 65, 130, 200] {
            for at in 0..len {
                for c in ['"', '\\', '\n', '\u{1f}'] {
                    let mut s: String = "a".repeat(len);
                    s.replace_range(at..at + 1, &c.to_string());
                    let mut out = Vec::new();
                    json_str(&mut out, &s);
                    assert_eq!(
                        String::from_utf8(out).unwrap(),
                        serde_json::to_string(&s).unwrap(),
                        "{len} {at} {c:?}"
                    );
                }
            }
            let plain = "b".repeat(len);
            assert!(!needs_escape(plain.as_bytes()));
        }
    }

    #[test]
    fn published_json_equals_the_lsp_types_form() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let uri: Uri = "file:///tmp/x%20y/f.c".parse().unwrap();
        let mut checked = 0;
        for (dir, kind) in [("c", SourceKind::C), ("fortran", SourceKind::FortranFree)] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                panic!("no fixtures in {}", root.join(dir).display());
            };
            for e in entries.flatten() {
                let path = e.path();
                let ext = path.extension().and_then(|x| x.to_str()).unwrap_or("");
                if !matches!(ext, "c" | "f90") {
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let analysed = |text: &str| Analysed {
                    version: 1,
                    rope: ropey::Rope::from_str(text),
                    kind,
                    resolved: analyzer::config::Resolver::discovering(Default::default())
                        .defaults(),
                    headers: Default::default(),
                    prelude: String::new(),
                    result: Ok(analyze(kind, text, &AnalysisOptions::default())),
                    rewrites: Default::default(),
                };
                let a = analysed(&text);
                // Every later line moves; the same diagnostics at the end.
                let moved = analysed(&format!("\n{text}"));
                let longer = analysed(&format!("{text}\n"));
                for enc in [Encoding::Utf16, Encoding::Utf8] {
                    let json = |a: &Analysed| diagnostics_json(a, &uri, enc, DEFAULT_RULES_URL);
                    let wire: serde_json::Value = serde_json::from_slice(&json(&a)).unwrap();
                    let typed = serde_json::to_value(diagnostics(&a, &uri, enc, DEFAULT_RULES_URL))
                        .unwrap();
                    assert_eq!(wire, typed, "{}", path.display());
                    // The fingerprint changes exactly when the JSON does.
                    let print =
                        |a: &Analysed| diagnostics_fingerprint(a, &uri, enc, DEFAULT_RULES_URL);
                    for other in [&moved, &longer] {
                        assert_eq!(
                            json(&a) == json(other),
                            print(&a) == print(other),
                            "{}",
                            path.display()
                        );
                    }
                    // (the links are in it; an empty set has none)
                    let some = a
                        .result
                        .as_ref()
                        .is_ok_and(|fa| !fa.diagnostics().is_empty());
                    assert_eq!(
                        print(&a) != diagnostics_fingerprint(&a, &uri, enc, "https://elsewhere"),
                        some,
                        "{}",
                        path.display()
                    );
                }
                checked += a.result.as_ref().map_or(0, |fa| fa.diagnostics().len());
            }
        }
        assert!(checked > 300, "only {checked} diagnostics compared");
    }
}
