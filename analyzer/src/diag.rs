//! Diagnostics as plain data: code, severity, primary span, message, related
//! locations and fixes. Rendering (codespan, JSON, SARIF, LSP) lives in the
//! binaries.

use crate::source::Span;
use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
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

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// A secondary location that explains the diagnostic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Related {
    pub span: Span,
    pub message: String,
}

/// How safe a fix is to apply (as in ruff).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    Safe,
    Unsafe,
    DisplayOnly,
}

/// One text replacement in the original source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub span: Span,
    pub new_text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fix {
    pub title: String,
    pub applicability: Applicability,
    pub edits: Vec<Edit>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub code: Code,
    /// The rule name (`could-not-parallelize`).
    pub rule: &'static str,
    pub severity: Severity,
    pub span: Span,
    pub message: String,
    pub related: Vec<Related>,
    /// Short advice shown as a note.
    pub help: Option<String>,
    pub fixes: Vec<Fix>,
}

impl Diagnostic {
    /// A diagnostic with the rule's name and default severity.
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        let rule = crate::rules::lookup(code);
        Diagnostic {
            code,
            rule: rule.map(|r| r.name).unwrap_or("unknown"),
            severity: rule.map(|r| r.severity).unwrap_or(Severity::Warning),
            span,
            message: message.into(),
            related: Vec::new(),
            help: None,
            fixes: Vec::new(),
        }
    }

    pub fn with_related(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        let message = message.into();
        if !self
            .related
            .iter()
            .any(|r| r.span == span && r.message == message)
        {
            self.related.push(Related { span, message });
        }
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Diagnostic {
        self.fixes.push(fix);
        self
    }

    pub fn with_fixes(mut self, fixes: impl IntoIterator<Item = Fix>) -> Diagnostic {
        self.fixes.extend(fixes);
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
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
}
