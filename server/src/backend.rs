//! The LSP handlers.
//!
//! Invariants:
//! * Document state lives behind one `std::sync::Mutex` that is never held
//!   across an `.await`. Notification handlers mutate it before their first
//!   `.await`, so changes apply in arrival order even though the transport
//!   runs handlers concurrently.
//! * Analysis runs under `catch_unwind`: the push analysis task in place on
//!   its worker thread (`block_in_place`), analyses for requests on tokio's
//!   blocking pool. A panic becomes one error diagnostic on that document
//!   and a log line.
//! * With push diagnostics, at most one analysis task runs per document; it
//!   re-runs until it has analysed the latest version, and publishes each
//!   result with the version it was computed for. Results for versions
//!   that were superseded before they finished are not published.
//! * With pull diagnostics (the client declares `textDocument.diagnostic`),
//!   nothing is pushed and requests compute what they need.

use crate::convert;
use crate::document::{Analysed, Document};
use crate::position::{self, Encoding};
use crate::transport::Output;
use analyzer::analysis::FileAnalysis;
use analyzer::config::{IvdepStyle, Overrides, Resolved, Resolver, Selector};
use analyzer::incremental::Incremental;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::*;
use tower_lsp_server::{Client, LanguageServer};

/// Code action kind for fix-all.
pub const FIX_ALL: &str = "source.fixAll.csa";

/// Settings from initialization options and `didChangeConfiguration`.
#[derive(Clone, Debug, Default)]
struct ClientSettings {
    overrides: Overrides,
    config_path: Option<PathBuf>,
    rules_url: Option<String>,
}

struct State {
    docs: HashMap<Uri, Document>,
    enc: Encoding,
    /// Push diagnostics (the client cannot pull them).
    push: bool,
    settings: ClientSettings,
    resolver: Resolver,
    /// The configuration error last shown to the user, to show each once.
    last_config_error: Option<String>,
}

#[derive(Clone)]
pub struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
    /// Where published diagnostics are written (see `transport::Output`).
    output: Output,
}

/// A JSON-RPC notification, serialised straight from its parameters.
#[derive(serde::Serialize)]
struct Notification<P> {
    jsonrpc: &'static str,
    method: &'static str,
    params: P,
}

/// Parses settings, accepting them at the top level or under `csa-lint`
/// / `csaLint`. Returns the settings and a note per ignored value.
fn parse_settings(value: Option<&serde_json::Value>) -> (ClientSettings, Vec<String>) {
    let mut s = ClientSettings::default();
    let mut notes = Vec::new();
    let Some(mut v) = value else {
        return (s, notes);
    };
    for key in ["csa-lint", "csaLint"] {
        if let Some(inner) = v.get(key) {
            v = inner;
        }
    }
    let strings = |key: &str, notes: &mut Vec<String>| -> Vec<String> {
        match v.get(key) {
            None | Some(serde_json::Value::Null) => Vec::new(),
            Some(serde_json::Value::Array(items)) => items
                .iter()
                .filter_map(|i| match i.as_str() {
                    Some(s) => Some(s.to_string()),
                    None => {
                        notes.push(format!("setting `{key}`: {i} is not a string; ignored"));
                        None
                    }
                })
                .collect(),
            Some(other) => {
                notes.push(format!(
                    "setting `{key}`: expected a list of strings, got {other}; ignored"
                ));
                Vec::new()
            }
        }
    };
    let selectors = |key: &str, notes: &mut Vec<String>| -> Vec<Selector> {
        strings(key, notes)
            .iter()
            .filter_map(|t| match Selector::parse(t) {
                Ok(sel) => Some(sel),
                Err(e) => {
                    notes.push(format!("setting `{key}`: {e}; ignored"));
                    None
                }
            })
            .collect()
    };
    if v.get("select").is_some_and(|x| !x.is_null()) {
        s.overrides.select = Some(selectors("select", &mut notes));
    }
    s.overrides.extend_select = selectors("extendSelect", &mut notes);
    s.overrides.ignore = selectors("ignore", &mut notes);
    s.overrides.defines = strings("defines", &mut notes);
    s.overrides.pure_functions = strings("pureFunctions", &mut notes);
    s.overrides.disable_loop_storage_check = v
        .get("disableLoopStorageCheck")
        .and_then(|b| b.as_bool())
        .unwrap_or(false);
    if let Some(style) = v.get("ivdepStyle").and_then(|x| x.as_str()) {
        match IvdepStyle::from_name(style) {
            Some(st) => s.overrides.ivdep_style = Some(st),
            None => notes.push(format!(
                "setting `ivdepStyle`: unknown style `{style}`; use one of {}",
                IvdepStyle::NAMES.join(", ")
            )),
        }
    }
    s.config_path = v
        .get("configPath")
        .and_then(|x| x.as_str())
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    s.rules_url = v
        .get("rulesUrl")
        .and_then(|x| x.as_str())
        .map(str::to_string);
    (s, notes)
}

/// Builds the configuration resolver for client settings; an unreadable
/// or invalid `configPath` is reported and discovery is used instead.
fn make_resolver(s: &ClientSettings) -> (Resolver, Option<String>) {
    let mut error = None;
    if let Some(path) = &s.config_path {
        match std::fs::read_to_string(path) {
            Ok(text) => match Resolver::new(Some((path, &text)), s.overrides.clone()) {
                Ok(r) => return (r, None),
                Err(e) => error = Some(e),
            },
            Err(e) => {
                error = Some(format!(
                    "{}: cannot read the configuration: {e}",
                    path.display()
                ))
            }
        }
    }
    (Resolver::discovering(s.overrides.clone()), error)
}

fn read_config(path: &Path) -> Option<std::result::Result<String, String>> {
    if !path.is_file() {
        return None;
    }
    Some(std::fs::read_to_string(path).map_err(|e| e.to_string()))
}

/// Where an analysis runs: on the blocking pool, or on the current worker
/// thread (`block_in_place`: its other tasks move to another thread), which
/// saves two thread hand-offs. Only the push analysis task runs in place:
/// it is spawned, so always on a worker thread.
#[derive(Clone, Copy)]
enum Run {
    Blocking,
    InPlace,
}

type Engine = Arc<Mutex<(analyzer::analysis::AnalysisOptions, Incremental)>>;

/// Analyses one text with the document's incremental analyser; a panic
/// becomes `Err(message)` (and the analyser is reset).
fn run_analysis(
    engine: &Engine,
    text: String,
    resolved: &Resolved,
    path: Option<&Path>,
) -> std::result::Result<FileAnalysis, String> {
    let mut guard = engine.lock().unwrap_or_else(|p| p.into_inner());
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // The protocol tests check that a panic is contained; they set this
        // variable and put the trigger in a document.
        if std::env::var_os("CSA_LSP_TEST_PANIC").is_some() && text.contains("CSA_LSP_TEST_PANIC") {
            panic!("test panic requested by the document");
        }
        guard.1.update_owned(text)
    }));
    match outcome {
        Ok(mut fa) => {
            let rel = path.map(|p| resolved.relative(p)).unwrap_or(Path::new(""));
            resolved.settings.filter(rel, &mut fa.diagnostics);
            Ok(fa)
        }
        Err(payload) => {
            // Its state may be half updated: start afresh next time.
            let opts = guard.0.clone();
            let kind = guard.1.kind();
            guard.1 = Incremental::new(kind, opts);
            Err(payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string()))
        }
    }
}

impl Backend {
    pub fn new(client: Client, output: Output) -> Backend {
        let settings = ClientSettings::default();
        let (resolver, _) = make_resolver(&settings);
        Backend {
            client,
            state: Arc::new(Mutex::new(State {
                docs: HashMap::new(),
                enc: Encoding::Utf16,
                push: true,
                settings,
                resolver,
                last_config_error: None,
            })),
            output,
        }
    }

    /// Sends `textDocument/publishDiagnostics`, written to the output at
    /// once (not through tower-lsp-server's client queue).
    fn publish(&self, uri: Uri, diagnostics: Vec<Diagnostic>, version: Option<i32>) {
        let note = Notification {
            jsonrpc: "2.0",
            method: "textDocument/publishDiagnostics",
            params: PublishDiagnosticsParams::new(uri, diagnostics, version),
        };
        if let Ok(body) = serde_json::to_vec(&note) {
            // A closed output: the client has gone.
            let _ = self.output.send(&body);
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic never happens while the lock is held (analysis runs
        // outside it), but a poisoned lock must not stop the server.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn log(&self, typ: MessageType, msg: impl std::fmt::Display) {
        self.client.log_message(typ, msg).await;
    }

    /// The settings for a document (with the error to show, if the
    /// configuration is broken).
    fn resolve(st: &mut State, path: Option<&Path>) -> (Arc<Resolved>, Option<String>) {
        let shown = |p: &Path| p.display().to_string();
        let anchor = path
            .map(Path::to_path_buf)
            .or_else(|| std::env::current_dir().ok().map(|d| d.join("untitled")));
        let result = match &anchor {
            Some(p) => st.resolver.for_file(p, &mut read_config, &shown),
            None => Err("no directory".to_string()),
        };
        match result {
            Ok(r) => (r, None),
            Err(e) => {
                let fallback = st.resolver.defaults();
                (fallback, Some(e))
            }
        }
    }

    /// Analyses the current version of `uri` now (for requests).
    async fn ensure_current(&self, uri: &Uri) -> Option<Arc<Analysed>> {
        let (rope, version, engine, path, resolved, error) = {
            let mut st = self.lock();
            let doc = st.docs.get(uri)?;
            if let Some(a) = doc.current() {
                return Some(a);
            }
            let (rope, version, path) = (doc.rope.clone(), doc.version, doc.path.clone());
            let (resolved, error) = Self::resolve(&mut st, path.as_deref());
            let engine = st.docs.get_mut(uri)?.engine(&resolved.settings.options);
            (rope, version, engine, path, resolved, error)
        };
        self.report_config_error(error).await;
        let analysed = self
            .analyse(rope, version, engine, path, resolved, Run::Blocking)
            .await;
        let mut st = self.lock();
        let doc = st.docs.get_mut(uri)?;
        if doc.analysis.as_ref().is_none_or(|a| a.version <= version) {
            doc.analysis = Some(analysed.clone());
        }
        Some(analysed)
    }

    async fn report_config_error(&self, error: Option<String>) {
        let Some(e) = error else {
            return;
        };
        let new = {
            let mut st = self.lock();
            let new = st.last_config_error.as_deref() != Some(e.as_str());
            st.last_config_error = Some(e.clone());
            new
        };
        self.log(MessageType::ERROR, format!("csa-lint: {e}")).await;
        if new {
            self.client
                .show_message(
                    MessageType::ERROR,
                    format!("csa-lint configuration error (default settings used): {e}"),
                )
                .await;
        }
    }

    async fn analyse(
        &self,
        rope: ropey::Rope,
        version: i32,
        engine: Engine,
        path: Option<PathBuf>,
        resolved: Arc<Resolved>,
        run: Run,
    ) -> Arc<Analysed> {
        // One allocation (`to_string` grows the string as it formats).
        let mut text = String::with_capacity(rope.len_bytes());
        for chunk in rope.chunks() {
            text.push_str(chunk);
        }
        let analysis = move || run_analysis(&engine, text, &resolved, path.as_deref());
        let result = match run {
            Run::InPlace => tokio::task::block_in_place(analysis),
            Run::Blocking => tokio::task::spawn_blocking(analysis)
                .await
                .unwrap_or_else(|e| Err(format!("analysis task failed: {e}"))),
        };
        if let Err(msg) = &result {
            self.log(
                MessageType::ERROR,
                format!("csa-lint: internal error while analysing a document (version {version}): {msg}"),
            )
            .await;
        }
        Arc::new(Analysed {
            version,
            rope,
            result,
        })
    }

    /// Starts (or lets the running task pick up) the analysis of `uri`,
    /// pushing diagnostics when it finishes.
    fn schedule(&self, uri: Uri) {
        {
            let mut st = self.lock();
            if !st.push {
                return;
            }
            let Some(doc) = st.docs.get_mut(&uri) else {
                return;
            };
            if doc.analysing {
                return;
            }
            doc.analysing = true;
        }
        let this = self.clone();
        tokio::spawn(async move { this.analysis_loop(uri).await });
    }

    async fn analysis_loop(&self, uri: Uri) {
        loop {
            let (rope, version, engine, path, resolved, error) = {
                let mut st = self.lock();
                let Some(doc) = st.docs.get(&uri) else {
                    return;
                };
                let (rope, version, path) = (doc.rope.clone(), doc.version, doc.path.clone());
                let (resolved, error) = Self::resolve(&mut st, path.as_deref());
                let Some(doc) = st.docs.get_mut(&uri) else {
                    return;
                };
                let engine = doc.engine(&resolved.settings.options);
                (rope, version, engine, path, resolved, error)
            };
            self.report_config_error(error).await;
            let analysed = self
                .analyse(rope, version, engine, path, resolved, Run::InPlace)
                .await;
            let (diags, current, previous) = {
                let mut st = self.lock();
                let enc = st.enc;
                let url = st
                    .settings
                    .rules_url
                    .clone()
                    .unwrap_or_else(|| convert::DEFAULT_RULES_URL.to_string());
                let Some(doc) = st.docs.get_mut(&uri) else {
                    return;
                };
                // The previous analysis is dropped after publishing.
                let previous = doc.analysis.replace(analysed.clone());
                let current = doc.version == version;
                if current {
                    doc.analysing = false;
                }
                (
                    convert::diagnostics(&analysed, &uri, enc, &url),
                    current,
                    previous,
                )
            };
            if current {
                self.publish(uri.clone(), diags, Some(version));
                // Dropped once the diagnostics are out.
                drop(previous);
                return;
            }
        }
    }

    /// Re-reads configuration and re-analyses every open document.
    async fn reconfigure(&self) {
        let (error, uris, push) = {
            let mut st = self.lock();
            let (resolver, error) = make_resolver(&st.settings);
            st.resolver = resolver;
            st.last_config_error = None;
            for doc in st.docs.values_mut() {
                doc.analysis = None;
            }
            (error, st.docs.keys().cloned().collect::<Vec<_>>(), st.push)
        };
        self.report_config_error(error).await;
        if push {
            for uri in uris {
                self.schedule(uri);
            }
        } else {
            let _ = self.client.workspace_diagnostic_refresh().await;
        }
    }

    /// Conversions of the markers in `from..to` to OpenMP and ivdep.
    async fn rewrite_actions(
        &self,
        uri: &Uri,
        a: &Arc<Analysed>,
        from: usize,
        to: usize,
    ) -> Vec<CodeActionOrCommand> {
        let (kind, resolved) = {
            let mut st = self.lock();
            let Some(doc) = st.docs.get(uri) else {
                return Vec::new();
            };
            let (kind, path) = (doc.kind, doc.path.clone());
            (kind, Self::resolve(&mut st, path.as_deref()).0)
        };
        let enc = self.encoding();
        let text = a.rope.to_string();
        let rewrites = tokio::task::spawn_blocking(move || {
            std::panic::catch_unwind(|| {
                use analyzer::rewrite::{rewrite_markers, Target};
                let fa = analyzer::analysis::analyze(kind, &text, &resolved.settings.options);
                let mut out = rewrite_markers(&fa, Target::OpenMp);
                out.extend(rewrite_markers(
                    &fa,
                    Target::Ivdep(resolved.settings.ivdep_style_for(kind.is_fortran())),
                ));
                out
            })
            .unwrap_or_default()
        })
        .await
        .unwrap_or_default();
        rewrites
            .iter()
            .filter(|r| (r.marker.start as usize) <= to && from <= r.marker.end as usize)
            .map(|r| {
                let converts = r.converts();
                CodeActionOrCommand::CodeAction(CodeAction {
                    title: if converts {
                        format!("{} (unsafe)", r.fix.title)
                    } else {
                        r.fix.title.clone()
                    },
                    kind: Some(CodeActionKind::REFACTOR_REWRITE),
                    edit: converts.then(|| convert::workspace_edit(a, uri, &[&r.fix], enc)),
                    disabled: (!converts).then(|| CodeActionDisabled {
                        reason: r.fix.title.clone(),
                    }),
                    ..Default::default()
                })
            })
            .collect()
    }

    fn encoding(&self) -> Encoding {
        self.lock().enc
    }

    fn rules_url(&self) -> String {
        self.lock()
            .settings
            .rules_url
            .clone()
            .unwrap_or_else(|| convert::DEFAULT_RULES_URL.to_string())
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let caps = &params.capabilities;
        let enc = Encoding::negotiate(
            caps.general
                .as_ref()
                .and_then(|g| g.position_encodings.as_deref()),
        );
        let pull = caps
            .text_document
            .as_ref()
            .and_then(|t| t.diagnostic.as_ref())
            .is_some();
        let (settings, notes) = parse_settings(params.initialization_options.as_ref());
        {
            let mut st = self.lock();
            st.enc = enc;
            st.push = !pull;
            let (resolver, error) = make_resolver(&settings);
            st.resolver = resolver;
            st.settings = settings;
            st.last_config_error = error;
        }
        for n in notes {
            self.log(MessageType::WARNING, format!("csa-lint: {n}"))
                .await;
        }
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "csa-lsp".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            capabilities: ServerCapabilities {
                position_encoding: Some(enc.kind()),
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::INCREMENTAL),
                        ..Default::default()
                    },
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(vec![
                            CodeActionKind::QUICKFIX,
                            CodeActionKind::REFACTOR_REWRITE,
                            CodeActionKind::new(FIX_ALL),
                        ]),
                        resolve_provider: Some(false),
                        work_done_progress_options: Default::default(),
                    },
                )),
                inlay_hint_provider: Some(OneOf::Left(true)),
                document_symbol_provider: Some(OneOf::Left(true)),
                diagnostic_provider: pull.then(|| {
                    DiagnosticServerCapabilities::Options(DiagnosticOptions {
                        identifier: Some("csa-lint".to_string()),
                        inter_file_dependencies: false,
                        workspace_diagnostics: false,
                        work_done_progress_options: Default::default(),
                    })
                }),
                ..Default::default()
            },
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let error = self.lock().last_config_error.clone();
        if let Some(e) = error {
            self.lock().last_config_error = None;
            self.report_config_error(Some(e)).await;
        }
        // Watch configuration files, where the client lets us.
        let watchers = ["**/csa-lint.toml", "**/.csa-lint.toml"]
            .iter()
            .map(|g| FileSystemWatcher {
                glob_pattern: GlobPattern::String(g.to_string()),
                kind: None,
            })
            .collect();
        let options = DidChangeWatchedFilesRegistrationOptions { watchers };
        let registration = Registration {
            id: "csa-lint-config-watch".to_string(),
            method: "workspace/didChangeWatchedFiles".to_string(),
            register_options: serde_json::to_value(options).ok(),
        };
        let _ = self.client.register_capability(vec![registration]).await;
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let td = params.text_document;
        {
            let mut st = self.lock();
            let mut doc = Document::new(&td.uri, &td.language_id, &td.text, td.version);
            // `per-file-languages` in the configuration names the language
            if let Some(path) = doc.path.clone() {
                let (resolved, _) = Self::resolve(&mut st, Some(&path));
                let abs = std::path::absolute(&path).unwrap_or(path);
                if let Some(kind) = resolved.settings.language_for(resolved.relative(&abs)) {
                    doc.kind = kind;
                }
            }
            st.docs.insert(td.uri.clone(), doc);
        }
        self.schedule(td.uri);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let notes = {
            let mut st = self.lock();
            let enc = st.enc;
            match st.docs.get_mut(&uri) {
                Some(doc) => {
                    Some(doc.apply(params.content_changes, params.text_document.version, enc))
                }
                None => None,
            }
        };
        match notes {
            None => {
                self.log(
                    MessageType::WARNING,
                    format!(
                        "csa-lint: change to a document that is not open ({}); ignored",
                        uri.as_str()
                    ),
                )
                .await
            }
            Some(notes) => {
                self.schedule(uri.clone());
                for n in notes {
                    self.log(
                        MessageType::WARNING,
                        format!("csa-lint: {}: {n}", uri.as_str()),
                    )
                    .await;
                }
            }
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let push = {
            let mut st = self.lock();
            st.docs.remove(&uri);
            st.push
        };
        if push {
            self.publish(uri, Vec::new(), None);
        }
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let (settings, notes) = parse_settings(Some(&params.settings));
        {
            let mut st = self.lock();
            // An empty notification (some clients send `null` and expect
            // the server to pull) keeps the settings.
            if !params.settings.is_null() {
                st.settings = settings;
            }
        }
        for n in notes {
            self.log(MessageType::WARNING, format!("csa-lint: {n}"))
                .await;
        }
        self.reconfigure().await;
    }

    async fn did_change_watched_files(&self, _: DidChangeWatchedFilesParams) {
        self.reconfigure().await;
    }

    async fn diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        let uri = params.text_document.uri;
        let Some(a) = self.ensure_current(&uri).await else {
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(format!(
                "{} is not open",
                uri.as_str()
            )));
        };
        let result_id = a.version.to_string();
        let report = if params.previous_result_id.as_deref() == Some(result_id.as_str()) {
            DocumentDiagnosticReport::Unchanged(RelatedUnchangedDocumentDiagnosticReport {
                related_documents: None,
                unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport {
                    result_id,
                },
            })
        } else {
            DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: FullDocumentDiagnosticReport {
                    result_id: Some(result_id),
                    items: convert::diagnostics(&a, &uri, self.encoding(), &self.rules_url()),
                },
            })
        };
        Ok(DocumentDiagnosticReportResult::Report(report))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let uri = params.text_document_position_params.text_document.uri;
        let pos = params.text_document_position_params.position;
        let Some(a) = self.ensure_current(&uri).await else {
            return Ok(None);
        };
        let Ok(fa) = &a.result else {
            return Ok(None);
        };
        let enc = self.encoding();
        let Ok(c) = position::char_index(&a.rope, pos, enc) else {
            return Ok(None);
        };
        let offset = a.rope.char_to_byte(c);
        Ok(analyzer::ide::hover(fa, offset).map(|h| convert::hover(&a, &h, enc)))
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let uri = params.text_document.uri;
        let Some(a) = self.ensure_current(&uri).await else {
            return Ok(None);
        };
        let Ok(fa) = &a.result else {
            return Ok(None);
        };
        let enc = self.encoding();
        let from = position::byte_offset(&a.rope, params.range.start, enc);
        let to = position::byte_offset(&a.rope, params.range.end, enc);
        Ok(Some(
            analyzer::ide::placement_hints(fa)
                .iter()
                .filter(|h| from <= h.offset && h.offset <= to)
                .map(|h| convert::inlay_hint(&a, h, enc))
                .collect(),
        ))
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let uri = params.text_document.uri;
        let Some(a) = self.ensure_current(&uri).await else {
            return Ok(None);
        };
        let Ok(fa) = &a.result else {
            return Ok(None);
        };
        let enc = self.encoding();
        Ok(Some(DocumentSymbolResponse::Nested(
            analyzer::ide::symbols(fa)
                .iter()
                .map(|s| convert::symbol(&a, s, enc))
                .collect(),
        )))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let Some(a) = self.ensure_current(&uri).await else {
            return Ok(None);
        };
        let Ok(fa) = &a.result else {
            return Ok(None);
        };
        let enc = self.encoding();
        let url = self.rules_url();
        let only = params.context.only.clone();
        let wants = |kind: &CodeActionKind| {
            only.as_ref().is_none_or(|o| {
                o.iter().any(|k| {
                    kind.as_str() == k.as_str()
                        || kind.as_str().starts_with(&format!("{}.", k.as_str()))
                })
            })
        };
        let from = position::byte_offset(&a.rope, params.range.start, enc);
        let to = position::byte_offset(&a.rope, params.range.end, enc);
        let mut actions = Vec::new();
        if wants(&CodeActionKind::QUICKFIX) {
            for d in &fa.diagnostics {
                let (s, e) = (d.span.start as usize, d.span.end as usize);
                if e < from || s > to {
                    continue;
                }
                let lsp_diag = convert::diagnostic(&a, &uri, d, enc, &url);
                // The fix fix-all would take is the clearly right one.
                let bulk = analyzer::fix::bulk_fix(d, false);
                for fix in &d.fixes {
                    let preferred = bulk.is_some_and(|b| std::ptr::eq(b, fix));
                    if let Some(action) = convert::fix_action(
                        &a,
                        &uri,
                        d,
                        Some(lsp_diag.clone()),
                        fix,
                        preferred,
                        enc,
                    ) {
                        actions.push(CodeActionOrCommand::CodeAction(action));
                    }
                }
            }
        }
        // Rewrites parse and analyse the whole document afresh, so they are
        // computed when asked for: a refactor request, or the user invoking
        // code actions (not the automatic light-bulb query).
        let explicit = only.as_ref().is_some_and(|o| {
            o.iter().any(|k| {
                CodeActionKind::REFACTOR_REWRITE
                    .as_str()
                    .starts_with(k.as_str())
            })
        });
        let invoked = params.context.trigger_kind == Some(CodeActionTriggerKind::INVOKED);
        if wants(&CodeActionKind::REFACTOR_REWRITE) && (explicit || invoked) {
            actions.extend(self.rewrite_actions(&uri, &a, from, to).await);
        }
        let fix_all = CodeActionKind::new(FIX_ALL);
        if wants(&fix_all) {
            // Every safe fix, as `csa-lint --fix` takes them: first one wins
            // where edits overlap.
            let bulk: Vec<_> = fa
                .diagnostics
                .iter()
                .filter_map(|d| analyzer::fix::bulk_fix(d, false))
                .collect();
            let chosen = analyzer::fix::compatible_fixes(fa.source.text(), &bulk);
            if !chosen.is_empty() {
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Apply {} safe csa-lint fix(es)", chosen.len()),
                    kind: Some(fix_all),
                    edit: Some(convert::workspace_edit(&a, &uri, &chosen, enc)),
                    ..Default::default()
                }));
            }
        }
        Ok(Some(actions))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_leniently_and_name_bad_values() {
        let v = serde_json::json!({"csa-lint": {
            "select": ["CSA1"], "extendSelect": ["CSA4"], "ignore": ["CSA999", "CSA105"], "defines": ["X", 3],
            "pureFunctions": "f", "disableLoopStorageCheck": true, "ivdepStyle": "nope",
            "configPath": "/x/csa-lint.toml", "rulesUrl": "https://example.org/rules"
        }});
        let (s, notes) = parse_settings(Some(&v));
        assert_eq!(s.overrides.select.as_ref().map(Vec::len), Some(1));
        assert_eq!(s.overrides.extend_select.len(), 1);
        assert_eq!(s.overrides.ignore.len(), 1);
        assert_eq!(s.overrides.defines, ["X"]);
        assert!(s.overrides.pure_functions.is_empty());
        assert!(s.overrides.disable_loop_storage_check);
        assert_eq!(
            s.config_path.as_deref(),
            Some(Path::new("/x/csa-lint.toml"))
        );
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(notes.iter().any(|n| n.contains("CSA999")));
        assert!(notes.iter().any(|n| n.contains("ivdepStyle")));
    }
}
