//! Diagnostics as plain data: code, severity, primary span, message, related
//! locations and fixes. Rendering (codespan, JSON, SARIF, LSP) lives in the
//! binaries.

use crate::source::Span;
use smallvec::SmallVec;
use std::fmt;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A diagnostic code (`CSA101`). Codes are never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Code(pub u16);

impl Code {
    /// Parses `CSA101` (case-insensitive).
    pub fn parse(s: &str) -> Option<Code> {
        let s = s.trim();
        let digits = s.get(..3)?.eq_ignore_ascii_case("csa").then(|| &s[3..])?;
        if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok().map(Code)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CSA{:03}", self.0)
    }
}

/// A rule's identity and documentation. Each rule file declares one as
/// `RULE`; `rules::RULES` lists them.
#[derive(Debug)]
pub struct Rule {
    pub code: Code,
    /// The rule's name (`could-not-parallelize`).
    pub name: &'static str,
    /// The severity of its diagnostics unless configured otherwise.
    pub severity: Severity,
    /// One line: what the rule reports.
    pub summary: &'static str,
    /// Whether the rule offers a fix (other than a suppression).
    pub fixable: bool,
    /// The rule file's source; its leading `//!` lines are the
    /// documentation (`--explain`).
    pub source: &'static str,
}

impl Rule {
    /// The rule's documentation (Markdown): the leading `//!` lines of its
    /// file.
    pub fn doc(&self) -> String {
        let mut out = String::new();
        for line in self.source.lines() {
            let Some(rest) = line.strip_prefix("//!") else {
                if line.trim().is_empty() && !out.is_empty() {
                    continue;
                }
                break;
            };
            out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            out.push('\n');
        }
        out
    }
}

/// Opens and closes a line reference inside text being formatted (Unicode
/// noncharacters, reserved for internal use: never in source text a
/// message quotes).
const REF_OPEN: char = '\u{FDD0}';
const REF_CLOSE: char = '\u{FDD1}';

/// A reference to the line of a source position, for messages:
/// `format!("... at {}", LineRef(span.start))` writes a placeholder that
/// [`Message::from`] turns into a line reference, shown as `line N`. The
/// message keeps the position, not the number, so moving the diagnostic
/// (an edit above it) moves the reference with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRef(pub u32);

impl fmt::Display for LineRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{REF_OPEN}{}{REF_CLOSE}", self.0)
    }
}

/// A part of a [`Message`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part<'a> {
    Text(&'a str),
    /// `line N`, N the line of this byte offset of the source.
    Line(u32),
}

/// Message text with line references: text parts and source positions
/// shown as `line N`. Cheap to clone (the text is shared).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Message {
    /// The text without the references.
    text: Arc<str>,
    /// (where in `text`, source byte offset), in text order.
    lines: SmallVec<[(u32, u32); 2]>,
}

impl Message {
    /// The parts, in order.
    pub fn parts(&self) -> impl Iterator<Item = Part<'_>> + '_ {
        let mut at = 0usize;
        let mut refs = self.lines.iter();
        let mut pending: Option<u32> = None;
        std::iter::from_fn(move || {
            if let Some(offset) = pending.take() {
                return Some(Part::Line(offset));
            }
            match refs.next() {
                Some(&(pos, offset)) => {
                    let pos = pos as usize;
                    let text = &self.text[at..pos];
                    at = pos;
                    if text.is_empty() {
                        Some(Part::Line(offset))
                    } else {
                        pending = Some(offset);
                        Some(Part::Text(text))
                    }
                }
                None if at < self.text.len() => {
                    let text = &self.text[at..];
                    at = self.text.len();
                    Some(Part::Text(text))
                }
                None => None,
            }
        })
    }

    /// The text, each reference shown as `line N` with N from `line_of`
    /// (1-based line of a byte offset).
    pub fn render_with(&self, line_of: impl Fn(u32) -> u32) -> String {
        if self.lines.is_empty() {
            return self.text.to_string();
        }
        let mut out = String::with_capacity(self.text.len() + 12 * self.lines.len());
        for p in self.parts() {
            match p {
                Part::Text(t) => out.push_str(t),
                Part::Line(o) => {
                    use fmt::Write;
                    let _ = write!(out, "line {}", line_of(o));
                }
            }
        }
        out
    }

    /// The text with the lines of `src`.
    pub fn render(&self, src: &crate::source::SourceText) -> String {
        self.render_with(|o| src.line_of(o as usize) as u32 + 1)
    }

    /// The text when it holds no line reference.
    pub fn as_plain(&self) -> Option<&str> {
        self.lines.is_empty().then_some(&*self.text)
    }

    /// The source offsets the message refers to.
    pub fn offsets(&self) -> impl Iterator<Item = u32> + '_ {
        self.lines.iter().map(|&(_, o)| o)
    }

    /// Moves every reference by `delta` bytes.
    pub fn shift(&mut self, delta: i64) {
        for (_, o) in &mut self.lines {
            *o = (*o as i64 + delta).clamp(0, u32::MAX as i64) as u32;
        }
    }

    /// Limits every reference to `len` (the text's length).
    pub fn clamp(&mut self, len: u32) {
        for (_, o) in &mut self.lines {
            *o = (*o).min(len);
        }
    }

    /// The text with each reference as the placeholder a [`LineRef`]
    /// formats to: `Message::from(m.encode()) == m` (for storing).
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(self.text.len() + 8 * self.lines.len());
        for p in self.parts() {
            match p {
                Part::Text(t) => out.push_str(t),
                Part::Line(o) => {
                    use fmt::Write;
                    let _ = write!(out, "{}", LineRef(o));
                }
            }
        }
        out
    }
}

impl From<String> for Message {
    /// Text formatted with [`LineRef`]s; a malformed placeholder stays text.
    fn from(s: String) -> Message {
        if !s.contains(REF_OPEN) {
            return Message {
                text: s.into(),
                lines: SmallVec::new(),
            };
        }
        let mut text = String::with_capacity(s.len());
        let mut lines = SmallVec::new();
        let mut rest = s.as_str();
        while let Some(i) = rest.find(REF_OPEN) {
            text.push_str(&rest[..i]);
            let after = &rest[i + REF_OPEN.len_utf8()..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let offset = after[..digits].parse::<u32>().ok();
            match (offset, after[digits..].strip_prefix(REF_CLOSE)) {
                (Some(o), Some(tail)) => {
                    lines.push((text.len() as u32, o));
                    rest = tail;
                }
                _ => {
                    text.push(REF_OPEN);
                    rest = after;
                }
            }
        }
        text.push_str(rest);
        Message {
            text: text.into(),
            lines,
        }
    }
}

impl From<&str> for Message {
    fn from(s: &str) -> Message {
        Message::from(s.to_string())
    }
}

/// A secondary location that explains the diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub span: Span,
    pub message: Message,
}

/// How safe a fix is to apply (as in ruff).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applicability {
    Safe,
    Unsafe,
    DisplayOnly,
}

/// What a fix does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixKind {
    /// Appends a `csa-lint: ignore[CODE]` comment to the diagnostic's line
    /// (`suppress::suppression_fix`; every diagnostic but CSA402 has one).
    Suppress,
    /// Removes a suppression, or the unused code in it (CSA402).
    RemoveSuppression,
    /// Removes a loop marker (and an `#ifdef __CSA__` left empty).
    RemoveMarker,
    /// Wraps a builtin call in `#ifdef __CSA__ ... #endif`.
    GuardBuiltin,
    /// Inserts region and section intrinsics around a loop by hand.
    MarkRegion,
    /// Copies a loop bound into a `const` local before the loop.
    HoistLoopBound,
    /// Moves a declaration out of a loop.
    MoveDeclaration,
    /// Adds or changes an OpenMP data-sharing clause.
    DataSharing,
    /// Converts CSA markers to OpenMP or `ivdep`.
    Convert,
    /// A conversion that is refused; the title says why (display only).
    RefusedConversion,
}

impl FixKind {
    /// Every kind.
    pub const ALL: [FixKind; 10] = [
        FixKind::Suppress,
        FixKind::RemoveSuppression,
        FixKind::RemoveMarker,
        FixKind::GuardBuiltin,
        FixKind::MarkRegion,
        FixKind::HoistLoopBound,
        FixKind::MoveDeclaration,
        FixKind::DataSharing,
        FixKind::Convert,
        FixKind::RefusedConversion,
    ];

    /// The kind's name (`remove-marker`).
    pub fn name(self) -> &'static str {
        match self {
            FixKind::Suppress => "suppress",
            FixKind::RemoveSuppression => "remove-suppression",
            FixKind::RemoveMarker => "remove-marker",
            FixKind::GuardBuiltin => "guard-builtin",
            FixKind::MarkRegion => "mark-region",
            FixKind::HoistLoopBound => "hoist-loop-bound",
            FixKind::MoveDeclaration => "move-declaration",
            FixKind::DataSharing => "data-sharing",
            FixKind::Convert => "convert",
            FixKind::RefusedConversion => "refused-conversion",
        }
    }

    /// The kind with this name.
    pub fn from_name(name: &str) -> Option<FixKind> {
        FixKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// One text replacement in the original source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub new_text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub kind: FixKind,
    pub title: String,
    pub applicability: Applicability,
    pub edits: Vec<Edit>,
}

/// A finding: spans, message parts and fixes; no text with line numbers in
/// it (messages refer to positions, see [`Message`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    /// The rule name (`could-not-parallelize`).
    pub rule: &'static str,
    pub severity: Severity,
    pub span: Span,
    pub message: Message,
    /// Shared between clones (an incremental update copies the findings of
    /// the functions it reuses; only a moved one copies these, to shift
    /// them): change them through `Arc::make_mut`.
    pub related: Arc<Vec<Related>>,
    /// Short advice shown as a note.
    pub help: Option<Message>,
    /// The fixes the rule offers (the suppression fix is derived on demand:
    /// `suppress::fixes`). Shared between clones, as `related`.
    pub fixes: Arc<Vec<Fix>>,
}

impl Diagnostic {
    /// A diagnostic of `rule`, with its default severity.
    pub fn new(rule: &'static Rule, span: Span, message: impl Into<Message>) -> Diagnostic {
        Diagnostic {
            code: rule.code,
            rule: rule.name,
            severity: rule.severity,
            span,
            message: message.into(),
            related: Arc::default(),
            help: None,
            fixes: Arc::default(),
        }
    }

    pub fn with_related(mut self, span: Span, message: impl Into<Message>) -> Diagnostic {
        let message = message.into();
        if !self
            .related
            .iter()
            .any(|r| r.span == span && r.message == message)
        {
            Arc::make_mut(&mut self.related).push(Related { span, message });
        }
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Diagnostic {
        Arc::make_mut(&mut self.fixes).push(fix);
        self
    }

    pub fn with_fixes(mut self, fixes: impl IntoIterator<Item = Fix>) -> Diagnostic {
        Arc::make_mut(&mut self.fixes).extend(fixes);
        self
    }

    pub fn with_help(mut self, help: impl Into<Message>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Moves every position (spans, line references, fix edits) by
    /// `delta` bytes.
    pub fn shift(&mut self, delta: i64) {
        if delta == 0 {
            return;
        }
        self.span = self.span.shifted(delta);
        self.message.shift(delta);
        if !self.related.is_empty() {
            for r in Arc::make_mut(&mut self.related) {
                r.span = r.span.shifted(delta);
                r.message.shift(delta);
            }
        }
        if let Some(h) = &mut self.help {
            h.shift(delta);
        }
        if !self.fixes.is_empty() {
            for f in Arc::make_mut(&mut self.fixes) {
                for e in &mut f.edits {
                    e.span = e.span.shifted(delta);
                }
            }
        }
    }

    /// Every source position the diagnostic refers to: spans' ends, line
    /// references and fix edits.
    pub fn positions(&self) -> impl Iterator<Item = u32> + '_ {
        let span = |s: Span| [s.start, s.end];
        span(self.span)
            .into_iter()
            .chain(self.message.offsets())
            .chain(
                self.related
                    .iter()
                    .flat_map(move |r| span(r.span).into_iter().chain(r.message.offsets())),
            )
            .chain(self.help.iter().flat_map(Message::offsets))
            .chain(
                self.fixes
                    .iter()
                    .flat_map(|f| &f.edits)
                    .flat_map(move |e| span(e.span)),
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_and_print() {
        assert_eq!(Code::parse("CSA101"), Some(Code(101)));
        assert_eq!(Code::parse("csa002"), Some(Code(2)));
        assert_eq!(Code::parse("CSA10"), None);
        assert_eq!(Code::parse("XYZ101"), None);
        assert_eq!(Code::parse("CSA1é1"), None);
        assert_eq!(Code(2).to_string(), "CSA002");
    }

    #[test]
    fn fix_kinds_have_distinct_names() {
        for k in FixKind::ALL {
            assert_eq!(FixKind::from_name(k.name()), Some(k));
        }
    }

    #[test]
    fn messages_keep_positions_and_render_lines() {
        let m = Message::from(format!("from {} to {}.", LineRef(3), LineRef(10)));
        assert_eq!(
            m.parts().collect::<Vec<_>>(),
            [
                Part::Text("from "),
                Part::Line(3),
                Part::Text(" to "),
                Part::Line(10),
                Part::Text("."),
            ]
        );
        let line_of = |o: u32| o / 4 + 1;
        assert_eq!(m.render_with(line_of), "from line 1 to line 3.");
        let mut moved = m.clone();
        moved.shift(8);
        assert_eq!(moved.render_with(line_of), "from line 3 to line 5.");
        assert_eq!(Message::from(m.encode()), m);
        // A reference at either end, and none.
        let m = Message::from(format!("{}", LineRef(0)));
        assert_eq!(m.parts().collect::<Vec<_>>(), [Part::Line(0)]);
        assert_eq!(Message::from("plain").as_plain(), Some("plain"));
        assert_eq!(Message::from("").parts().count(), 0);
        // A malformed placeholder stays text.
        let odd = format!("a{REF_OPEN}12 b{REF_OPEN}");
        assert_eq!(Message::from(odd.clone()).as_plain(), Some(odd.as_str()));
    }
}
