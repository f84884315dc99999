//! Analyzer data to LSP objects.

use crate::document::Analysed;
use crate::position::Encoding;
use analyzer::diag::{Applicability, Code, Diagnostic, Fix, Severity};
use analyzer::ide::{self, HintSide, SymbolKind as IdeSymbolKind};
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

pub fn diagnostic(
    a: &Analysed,
    uri: &Uri,
    d: &Diagnostic,
    enc: Encoding,
    rules_url: &str,
) -> lsp::Diagnostic {
    let positions = a.positions();
    let mut message = d.message.clone();
    if let Some(h) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(h);
    }
    let href = format!("{rules_url}#{}-{}", d.code, d.rule)
        .to_ascii_lowercase()
        .parse()
        .ok();
    lsp::Diagnostic {
        range: positions.range(d.span.start as usize, d.span.end as usize, enc),
        severity: Some(severity(d.severity)),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: href.map(|href| CodeDescription { href }),
        source: Some("csa-lint".to_string()),
        message,
        related_information: (!d.related.is_empty()).then(|| {
            d.related
                .iter()
                .map(|r| DiagnosticRelatedInformation {
                    location: Location::new(
                        uri.clone(),
                        positions.range(r.span.start as usize, r.span.end as usize, enc),
                    ),
                    message: r.message.clone(),
                })
                .collect()
        }),
        tags: unnecessary(d.code).then(|| vec![DiagnosticTag::UNNECESSARY]),
        data: None,
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
            .diagnostics
            .iter()
            .map(|d| diagnostic(a, uri, d, enc, rules_url))
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

pub fn hover(a: &Analysed, h: &ide::Hover, enc: Encoding) -> lsp::Hover {
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

pub fn inlay_hint(a: &Analysed, h: &ide::PlacementHint, enc: Encoding) -> InlayHint {
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
pub fn symbol(a: &Analysed, s: &ide::Symbol, enc: Encoding) -> DocumentSymbol {
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
