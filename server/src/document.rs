//! Open documents: the text as a rope, its version, its language, and the
//! latest analysis.

use crate::position::{self, Encoding};
use analyzer::config::Resolved;
use analyzer::Incremental;
use analyzer::MarkerRewrite;
use analyzer::{Analysis, AnalysisOptions, Cancel};
use csa_grammars::SourceKind;
use ropey::Rope;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use tower_lsp_server::lsp_types::{TextDocumentContentChangeEvent, Uri};
use tower_lsp_server::UriExt;

/// An analysis of one version of a document: an immutable snapshot of its
/// text and what the analyzer said of it.
#[derive(Debug)]
pub struct Analysed {
    pub version: i32,
    /// The text that was analysed (ropes share structure: cheap to keep).
    pub rope: Rope,
    /// The language it was analysed as.
    pub kind: SourceKind,
    /// The settings it was analysed with.
    pub resolved: Arc<Resolved>,
    /// The headers read for it (Fortran's `#include`s).
    pub headers: analyzer::Headers,
    /// Its includer's text before the `#include`, when it was read in
    /// that context (`includers`); else empty.
    pub prelude: String,
    /// The analysis, or the message of the internal error that stopped it.
    pub result: Result<Analysis, String>,
    /// The marker rewrites of this version, computed the first time a code
    /// action asks for them.
    pub rewrites: OnceLock<Vec<MarkerRewrite>>,
}

impl Analysed {
    /// Byte offsets of the analysed text to LSP positions.
    pub fn positions(&self) -> position::Positions<'_> {
        position::Positions::new(&self.rope, self.result.as_ref().ok().map(|fa| fa.source()))
    }
}

/// The incremental analyser of a document, with the options it was made
/// for.
pub type Engine = Arc<Mutex<(AnalysisOptions, Incremental)>>;

/// An open document. The handlers change it under the server's state lock;
/// analyses work on [`Analysed`] snapshots of it.
#[derive(Debug)]
pub struct Document {
    pub rope: Rope,
    pub version: i32,
    /// The language it is analysed as: `per-file-languages` of its
    /// settings, else `detected`.
    pub kind: SourceKind,
    /// The language by extension, content or the client's language id.
    pub detected: SourceKind,
    /// The file on disk, for configuration discovery.
    pub path: Option<PathBuf>,
    /// Which opening of the URI this is (a document closed and opened again
    /// is a new one; an analysis of the old one must not touch it).
    pub open_id: u64,
    /// The settings that apply, with the configuration generation they were
    /// resolved in (`None`: not resolved yet, or the configuration changed).
    pub settings: Option<(u64, Arc<Resolved>)>,
    /// The newest finished analysis (never replaced by an older version's).
    pub latest: Option<Arc<Analysed>>,
    /// An analysis task is running for this document.
    pub analysing: bool,
    /// The token of the running analysis: set when a newer version
    /// supersedes the one it analyses.
    pub cancel: Option<Cancel>,
    /// A hash of the diagnostics last published (identical sets are not
    /// published again).
    pub published: Option<u64>,
    pub engine: Option<Engine>,
    /// The file near it that includes it, whose context it is read in
    /// (`includers`): `None` until an analysis with syntax errors asked,
    /// `Some(None)` when none gives fewer.
    pub context: Option<Option<crate::includers::Found>>,
}

/// The language of a document: by file extension when it has a known one
/// (a `.h` holding Fortran is Fortran by its content, as on the command
/// line), else by the client's language id, else C. The configuration's
/// `per-file-languages` overrides this (`Backend::did_open`).
pub fn kind_of(uri: &Uri, language_id: &str, text: &str) -> SourceKind {
    if let Some(kind) = uri
        .to_file_path()
        .and_then(|p| csa_grammars::detect_with_content(p.as_ref(), text))
    {
        return kind;
    }
    let id = language_id.to_ascii_lowercase();
    if id.contains("fixed") {
        SourceKind::FortranFixed
    } else if id.starts_with("fortran") {
        SourceKind::FortranFree
    } else {
        SourceKind::C
    }
}

impl Document {
    pub fn new(uri: &Uri, language_id: &str, text: &str, version: i32, open_id: u64) -> Document {
        let detected = kind_of(uri, language_id, text);
        Document {
            rope: Rope::from_str(text),
            version,
            kind: detected,
            detected,
            path: uri.to_file_path().map(|p| p.into_owned()),
            open_id,
            settings: None,
            latest: None,
            analysing: false,
            cancel: None,
            published: None,
            engine: None,
            context: None,
        }
    }

    /// Applies content changes in order. Returns a note for each change
    /// whose range was out of the document (it is applied clamped).
    pub fn apply(
        &mut self,
        changes: Vec<TextDocumentContentChangeEvent>,
        version: i32,
        enc: Encoding,
    ) -> Vec<String> {
        let mut notes = Vec::new();
        for change in changes {
            match change.range {
                None => self.rope = Rope::from_str(&change.text),
                Some(range) => {
                    let start = position::char_index(&self.rope, range.start, enc);
                    let end = position::char_index(&self.rope, range.end, enc);
                    if start.is_err() || end.is_err() {
                        notes.push(format!(
                            "edit range {}:{}-{}:{} is outside the document; applied at the nearest valid position",
                            range.start.line, range.start.character, range.end.line, range.end.character
                        ));
                    }
                    let start = start.unwrap_or_else(|c| c);
                    let end = end.unwrap_or_else(|c| c).max(start);
                    self.rope.remove(start..end);
                    self.rope.insert(start, &change.text);
                }
            }
        }
        self.version = version;
        notes
    }

    /// The incremental analyser for these options and language (a new one
    /// when either changed).
    pub fn engine(&mut self, kind: SourceKind, opts: &AnalysisOptions) -> Engine {
        if let Some(e) = &self.engine {
            let same = e
                .lock()
                .map(|g| g.0 == *opts && g.1.kind() == kind)
                .unwrap_or(false);
            if same {
                return e.clone();
            }
        }
        let e = Arc::new(Mutex::new((
            opts.clone(),
            Incremental::new(kind, opts.clone()),
        )));
        self.engine = Some(e.clone());
        e
    }

    /// The analysis of the current version, if it is done.
    pub fn current(&self) -> Option<Arc<Analysed>> {
        self.latest
            .as_ref()
            .filter(|a| a.version == self.version)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::lsp_types::{Position, Range};

    fn change(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(l0, c0), Position::new(l1, c1))),
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn incremental_changes_apply_in_order() {
        let uri: Uri = "file:///tmp/a.c".parse().unwrap();
        let mut d = Document::new(&uri, "c", "int a;\nint b;\n", 1, 0);
        assert_eq!(d.kind, SourceKind::C);
        let notes = d.apply(
            vec![change(0, 4, 0, 5, "xy"), change(1, 0, 1, 0, "// \u{e9}\n")],
            2,
            Encoding::Utf16,
        );
        assert!(notes.is_empty());
        assert_eq!(d.rope.to_string(), "int xy;\n// \u{e9}\nint b;\n");
        // After the `é`, UTF-16 column 4 is the end of line 1.
        d.apply(vec![change(1, 4, 1, 4, "!")], 3, Encoding::Utf16);
        assert_eq!(d.rope.to_string(), "int xy;\n// \u{e9}!\nint b;\n");
        let notes = d.apply(vec![change(40, 0, 41, 0, "z")], 4, Encoding::Utf16);
        assert_eq!(notes.len(), 1);
        assert!(d.rope.to_string().ends_with("int b;\nz"));
        assert_eq!(d.version, 4);
    }

    #[test]
    fn language_from_extension_then_language_id() {
        let f: Uri = "file:///x/m.f90".parse().unwrap();
        assert_eq!(kind_of(&f, "c", ""), SourceKind::FortranFree);
        let u: Uri = "untitled:Untitled-1".parse().unwrap();
        assert_eq!(kind_of(&u, "fortran", ""), SourceKind::FortranFree);
        assert_eq!(
            kind_of(&u, "FortranFixedForm", ""),
            SourceKind::FortranFixed
        );
        assert_eq!(kind_of(&u, "c", ""), SourceKind::C);
        // a header of Fortran declarations
        let h: Uri = "file:///x/blk.h".parse().unwrap();
        let fortran = "      integer n\n      common /blk/ n\n";
        assert!(kind_of(&h, "c", fortran).is_fortran());
        assert_eq!(kind_of(&h, "c", "int n;\n"), SourceKind::C);
    }
}
