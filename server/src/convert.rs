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

/// `d` is a diagnostic of the analysis of `src`.
pub fn diagnostic(
    a: &Analysed,
    src: &SourceText,
    uri: &Uri,
    d: &Diagnostic,
    enc: Encoding,
    rules_url: &str,
) -> lsp::Diagnostic {
    let code = d.code.to_string();
    let href = rule_href(rules_url, d);
    let href = href.parse::<Uri>().is_ok().then_some(href.as_str());
    wire(&a.positions(), src, uri.as_str(), d, &code, href, enc).to_lsp(uri)
}

/// The published form of one diagnostic; `href` is its rule's link.
fn wire<'a>(
    positions: &crate::position::Positions<'_>,
    src: &SourceText,
    uri: &'a str,
    d: &'a Diagnostic,
    code: &'a str,
    href: Option<&'a str>,
    enc: Encoding,
) -> Wire<'a> {
    Wire {
        range: positions.range(d.span.start as usize, d.span.end as usize, enc),
        severity: severity(d.severity),
        code,
        code_description: href.map(|href| WireHref { href }),
        source: "csa-lint",
        message: full_message(d, src),
        related_information: (!d.related.is_empty()).then(|| {
            d.related
                .iter()
                .map(|r| WireRelated {
                    location: WireLocation {
                        uri,
                        range: positions.range(r.span.start as usize, r.span.end as usize, enc),
                    },
                    message: text(&r.message, src),
                })
                .collect()
        }),
        tags: unnecessary(d.code).then_some([DiagnosticTag::UNNECESSARY]),
    }
}

impl Wire<'_> {
    /// The owned `lsp_types` form (pull reports, code actions).
    fn to_lsp(&self, uri: &Uri) -> lsp::Diagnostic {
        lsp::Diagnostic {
            range: self.range,
            severity: Some(self.severity),
            code: Some(NumberOrString::String(self.code.to_string())),
            code_description: self.code_description.as_ref().and_then(|h| {
                Some(CodeDescription {
                    href: h.href.parse().ok()?,
                })
            }),
            source: Some(self.source.to_string()),
            message: self.message.to_string(),
            related_information: self.related_information.as_ref().map(|rs| {
                rs.iter()
                    .map(|r| DiagnosticRelatedInformation {
                        location: Location::new(uri.clone(), r.location.range),
                        message: r.message.to_string(),
                    })
                    .collect()
            }),
            tags: self.tags.as_ref().map(|t| t.to_vec()),
            data: None,
        }
    }
}

/// A JSON string, escaped as serde_json escapes it.
fn json_str(out: &mut Vec<u8>, s: &str) {
    // (Writing a `str` to a `Vec` cannot fail.)
    let _ = serde_json::to_writer(&mut *out, s);
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

impl Wire<'_> {
    /// The JSON of the published diagnostic, written by hand: the same
    /// value as its `Serialize` form (tested), at half the cost on a
    /// 1.5 MB publication.
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"range\":");
        json_range(out, &self.range);
        out.extend_from_slice(b",\"severity\":");
        json_num(
            out,
            match self.severity {
                DiagnosticSeverity::ERROR => 1,
                DiagnosticSeverity::WARNING => 2,
                DiagnosticSeverity::INFORMATION => 3,
                _ => 4,
            },
        );
        out.extend_from_slice(b",\"code\":");
        json_str(out, self.code);
        if let Some(h) = &self.code_description {
            out.extend_from_slice(b",\"codeDescription\":{\"href\":");
            json_str(out, h.href);
            out.push(b'}');
        }
        out.extend_from_slice(b",\"source\":");
        json_str(out, self.source);
        out.extend_from_slice(b",\"message\":");
        json_str(out, &self.message);
        if let Some(related) = &self.related_information {
            out.extend_from_slice(b",\"relatedInformation\":[");
            for (i, r) in related.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"location\":{\"uri\":");
                json_str(out, r.location.uri);
                out.extend_from_slice(b",\"range\":");
                json_range(out, &r.location.range);
                out.extend_from_slice(b"},\"message\":");
                json_str(out, &r.message);
                out.push(b'}');
            }
            out.push(b']');
        }
        if self.tags.is_some() {
            // DiagnosticTag::UNNECESSARY
            out.extend_from_slice(b",\"tags\":[1]");
        }
        out.push(b'}');
    }
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

/// An LSP diagnostic as it is published, borrowing the analysis's strings
/// (publishing thousands of findings on each keystroke built and dropped
/// an owned `lsp_types::Diagnostic`, its URIs parsed, per finding). The
/// one place the fields are decided: [`diagnostic`] is its `to_lsp`, and
/// its JSON (`write_json`) is the value lsp_types serialises (tested).
struct Wire<'a> {
    range: lsp::Range,
    severity: DiagnosticSeverity,
    code: &'a str,
    code_description: Option<WireHref<'a>>,
    source: &'static str,
    message: Cow<'a, str>,
    related_information: Option<Vec<WireRelated<'a>>>,
    tags: Option<[DiagnosticTag; 1]>,
}

struct WireHref<'a> {
    href: &'a str,
}

struct WireRelated<'a> {
    location: WireLocation<'a>,
    message: Cow<'a, str>,
}

struct WireLocation<'a> {
    uri: &'a str,
    range: lsp::Range,
}

/// A fingerprint of what [`diagnostics_json`] would publish (the same
/// ranges, codes, severities, messages with their line numbers, related
/// locations, rule links), computed without building the JSON: a keystroke
/// that changes no published diagnostic costs a hash, not a serialisation.
pub fn diagnostics_fingerprint(a: &Analysed, uri: &Uri, enc: Encoding, rules_url: &str) -> u64 {
    use xxhash_rust::xxh3::Xxh3;
    let Ok(fa) = &a.result else {
        return xxhash_rust::xxh3::xxh3_64(&diagnostics_json(a, uri, enc, rules_url));
    };
    let positions = a.positions();
    let src = &fa.source();
    let mut h = Xxh3::new();
    let text = |h: &mut Xxh3, t: &str| {
        h.update(&(t.len() as u64).to_le_bytes());
        h.update(t.as_bytes());
    };
    // (The four numbers of a range in one update: the hasher's per-call
    // cost is most of hashing a number.)
    let range = |h: &mut Xxh3, span: analyzer::source::Span| {
        let r = positions.range(span.start as usize, span.end as usize, enc);
        let mut buf = [0u8; 16];
        for (k, n) in [r.start.line, r.start.character, r.end.line, r.end.character]
            .into_iter()
            .enumerate()
        {
            buf[4 * k..4 * k + 4].copy_from_slice(&n.to_le_bytes());
        }
        h.update(&buf);
    };
    let message = |h: &mut Xxh3, m: &Message| {
        for p in m.parts() {
            match p {
                Part::Text(t) => text(h, t),
                Part::Line(o) => h.update(&(src.line_of(o as usize) as u32).to_le_bytes()),
            }
        }
        h.update(&[0xff]);
    };
    text(&mut h, uri.as_str());
    text(&mut h, rules_url);
    h.update(&(fa.diagnostics().len() as u64).to_le_bytes());
    for d in fa.diagnostics() {
        h.update(&d.code.0.to_le_bytes());
        h.update(&[d.severity as u8]);
        text(&mut h, d.rule);
        range(&mut h, d.span);
        message(&mut h, &d.message);
        if let Some(help) = &d.help {
            message(&mut h, help);
        }
        h.update(&(d.related.len() as u64).to_le_bytes());
        for r in &d.related {
            range(&mut h, r.span);
            message(&mut h, &r.message);
        }
    }
    h.digest()
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
    let positions = a.positions();
    // One code string and one link per rule, the link checked to be a URI
    // as `diagnostic` does.
    let mut rules: HashMap<Code, (String, Option<String>)> = HashMap::new();
    for d in fa.diagnostics() {
        rules.entry(d.code).or_insert_with(|| {
            let h = rule_href(rules_url, d);
            (d.code.to_string(), h.parse::<Uri>().is_ok().then_some(h))
        });
    }
    out.push(b'[');
    for (i, d) in fa.diagnostics().iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let (code, href) = rules
            .get(&d.code)
            .map_or(("", None), |(c, h)| (c.as_str(), h.as_deref()));
        wire(&positions, fa.source(), uri.as_str(), d, code, href, enc).write_json(out);
    }
    out.push(b']');
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
                    assert_ne!(
                        print(&a),
                        diagnostics_fingerprint(&a, &uri, enc, "https://elsewhere"),
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
