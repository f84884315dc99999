//! The LSP handlers, on a snapshot model.
//!
//! Invariants:
//! * Document state lives behind one `std::sync::Mutex` (`State`) that is
//!   never held across an `.await` nor while reading files. Notification
//!   handlers mutate it before their first `.await`, so changes apply in
//!   arrival order even though the transport runs handlers concurrently.
//! * Every change makes a new version of the document. Analyses work on an
//!   immutable snapshot of one version (`Analysed`: rope, version, language,
//!   settings, result); at most one analysis task runs per document, and a
//!   change cancels the one running (`Cancel`): it stops between functions
//!   and the task goes on with the newest version.
//! * A document's `latest` analysis only ever moves to a newer version, and
//!   diagnostics are published only for the version that is current when
//!   they are written (under the state lock, so a `didClose` or a change
//!   cannot slip in between the check and the write), and only when they
//!   differ from the set last published for that document.
//! * Requests answer from the analysis of the version that was current when
//!   they arrived, waiting for it if need be; if the document changes
//!   meanwhile they fail with `ContentModified`.
//! * Configuration files are read by the analysis task (and on
//!   reconfiguration) through the resolver's own lock, never under the
//!   state lock and never on a request's path; requests use the settings
//!   the document's analysis was made with.
//! * Analysis runs under `catch_unwind`; a panic becomes one error
//!   diagnostic on that document and a log line. Every handler runs under
//!   `catch_unwind` too: a panic elsewhere is logged with the method and the
//!   document, a request gets an internal error, and the server goes on.
//! * With pull diagnostics (the client declares `textDocument.diagnostic`),
//!   nothing is pushed; the analysis still starts at each change, and pulls
//!   wait for it.

use crate::convert;
use crate::document::{Analysed, Document, Engine};
use crate::position::{self, Encoding};
use crate::transport::Output;
use analyzer::config::{IvdepStyle, Overrides, Resolved, Resolver, Selector};
use analyzer::Incremental;
use analyzer::{Analysis, Cancel, Cancelled};
use futures_util::FutureExt;
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use tower_lsp_server::jsonrpc::{self, Result};
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
    /// Bumped whenever the configuration may have changed: settings resolved
    /// in an older generation are resolved again.
    config_generation: u64,
    /// The configuration error last shown to the user, to show each once.
    last_config_error: Option<String>,
    /// Counter of document openings (`Document::open_id`).
    opened: u64,
}

#[derive(Clone)]
pub struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
    /// Configuration discovery, which reads files: taken by analysis tasks
    /// and reconfiguration only, never while `state` is held.
    resolver: Arc<Mutex<Resolver>>,
    /// Woken whenever an analysis is stored (requests wait on it).
    analysed: Arc<tokio::sync::Notify>,
    /// The thread analyses run on.
    analyser: AnalysisThread,
    /// Where published diagnostics are written (see `transport::Output`).
    output: Output,
}

/// One thread that runs every document analysis, one at a time. Not
/// tokio's workers (`block_in_place`) nor its blocking pool: an analysis
/// frees much of what the previous one allocated (the incremental
/// analyser's per-function results), and with the allocator's per-thread
/// heaps, analyses hopping between threads made every few keystrokes pay
/// for collecting blocks freed across threads (p99 20 ms where p50 was
/// 2 ms on the latency bench).
#[derive(Clone)]
struct AnalysisThread(std::sync::mpsc::Sender<Box<dyn FnOnce() + Send>>);

impl AnalysisThread {
    fn start() -> AnalysisThread {
        let (tx, rx) = std::sync::mpsc::channel::<Box<dyn FnOnce() + Send>>();
        let spawned = std::thread::Builder::new()
            .name("csa-analysis".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job();
                }
            });
        if let Err(e) = spawned {
            eprintln!("csa-lsp: cannot start the analysis thread: {e}");
        }
        AnalysisThread(tx)
    }

    /// Drops `value` on the analysis thread.
    fn discard<T: Send + 'static>(&self, value: T) {
        let _ = self.0.send(Box::new(move || drop(value)));
    }

    /// Runs `f` on the analysis thread. `None`: the thread is gone.
    async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job = Box::new(move || {
            let _ = tx.send(f());
        });
        self.0.send(job).ok()?;
        rx.await.ok()
    }
}

/// What an analysis task took from a document: a snapshot of one version.
struct Snapshot {
    rope: ropey::Rope,
    version: i32,
    open_id: u64,
    path: Option<PathBuf>,
    settings: Option<Arc<Resolved>>,
    config_generation: u64,
    cancel: Cancel,
}

/// The error a request gets when the document changed while it waited.
fn content_modified() -> jsonrpc::Error {
    jsonrpc::Error {
        code: jsonrpc::ErrorCode::ServerError(-32801),
        message: "the document changed; ask again".into(),
        data: None,
    }
}

fn not_open(uri: &Uri) -> jsonrpc::Error {
    jsonrpc::Error::invalid_params(format!("{} is not open", uri.as_str()))
}

/// The message of a panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
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
/// Reads a file: never call it with the state lock held.
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

/// Analyses one text with the document's incremental analyser; a panic
/// becomes `Err(message)` (and the analyser is reset). `None`: cancelled.
fn run_analysis(
    engine: &Engine,
    text: String,
    resolved: &Resolved,
    path: Option<&Path>,
    cancel: &Cancel,
) -> Option<std::result::Result<Analysis, String>> {
    let mut guard = engine.lock().unwrap_or_else(|p| p.into_inner());
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
        // The protocol tests check that a panic is contained; they set this
        // variable and put the trigger in a document.
        if std::env::var_os("CSA_LSP_TEST_PANIC").is_some() && text.contains("CSA_LSP_TEST_PANIC") {
            panic!("test panic requested by the document");
        }
        guard.1.update_cancellable(text, cancel)
    }));
    match outcome {
        Ok(Ok(mut fa)) => {
            let rel = path.map(|p| resolved.relative(p)).unwrap_or(Path::new(""));
            fa.select(&resolved.settings, rel);
            Some(Ok(fa))
        }
        Ok(Err(Cancelled)) => None,
        Err(payload) => {
            // Its state may be half updated: start afresh next time.
            let opts = guard.0.clone();
            let kind = guard.1.kind();
            guard.1 = Incremental::new(kind, opts);
            Some(Err(panic_message(&*payload)))
        }
    }
}

/// The number of syntax errors (CSA001) an analysis reports.
fn syntax_errors(fa: &Analysis) -> usize {
    fa.diagnostics().iter().filter(|d| d.code.0 == 1).count()
}

/// The analysis of the document at `path` (text `text`, analysed alone
/// with `base`, `errors` syntax errors) in the context of the file near it
/// that includes it, when there is one and that reading has fewer syntax
/// errors (`None` otherwise), with what it was read with.
fn in_includer(
    path: &Path,
    text: &str,
    resolved: &Resolved,
    base: &analyzer::AnalysisOptions,
    errors: usize,
    cancel: &Cancel,
) -> Option<(crate::includers::Found, Analysis, analyzer::AnalysisOptions)> {
    let dirs = &resolved.settings.include_dirs;
    let found = crate::includers::find(path, dirs)?;
    let options = crate::includers::options(&found, base);
    let mut fa = std::panic::catch_unwind(AssertUnwindSafe(|| {
        analyzer::analyze_cancellable(found.kind, text, &options, cancel)
    }))
    .ok()?
    .ok()?;
    fa.select(&resolved.settings, resolved.relative(path));
    (syntax_errors(&fa) < errors).then_some((found, fa, options))
}

/// `textDocument/publishDiagnostics`, written around the diagnostics
/// already serialised.
fn publish_body(
    uri: &Uri,
    size: usize,
    diagnostics: impl FnOnce(&mut Vec<u8>),
    version: Option<i32>,
) -> Vec<u8> {
    let uri = serde_json::to_string(uri.as_str()).unwrap_or_else(|_| "\"\"".into());
    let mut body = Vec::with_capacity(size + uri.len() + 128);
    body.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/publishDiagnostics\",\"params\":{\"uri\":",
    );
    body.extend_from_slice(uri.as_bytes());
    body.extend_from_slice(b",\"diagnostics\":");
    diagnostics(&mut body);
    if let Some(v) = version {
        body.extend_from_slice(format!(",\"version\":{v}").as_bytes());
    }
    body.extend_from_slice(b"}}");
    body
}

impl Backend {
    pub fn new(client: Client, output: Output) -> Backend {
        Backend {
            client,
            state: Arc::new(Mutex::new(State {
                docs: HashMap::new(),
                enc: Encoding::Utf16,
                push: true,
                settings: ClientSettings::default(),
                config_generation: 0,
                last_config_error: None,
                opened: 0,
            })),
            resolver: Arc::new(Mutex::new(Resolver::discovering(Overrides::default()))),
            analysed: Arc::new(tokio::sync::Notify::new()),
            analyser: AnalysisThread::start(),
            output,
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

    /// Runs a handler, catching a panic: it is logged with the method and
    /// what it was about, and becomes an internal error for the client.
    async fn guarded<T>(
        &self,
        method: &str,
        about: &str,
        handler: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        match AssertUnwindSafe(handler).catch_unwind().await {
            Ok(r) => r,
            Err(payload) => {
                let msg = panic_message(&*payload);
                eprintln!("csa-lsp: internal error in {method} ({about}): {msg}");
                self.log(
                    MessageType::ERROR,
                    format!(
                        "csa-lint: internal error in {method} ({about}): {msg}; the server goes on"
                    ),
                )
                .await;
                Err(jsonrpc::Error {
                    code: jsonrpc::ErrorCode::InternalError,
                    message: format!("csa-lint internal error in {method}: {msg}").into(),
                    data: None,
                })
            }
        }
    }

    /// Resolves the settings of a document (reads configuration files, so
    /// on the caller's thread but outside the state lock); an error falls
    /// back to the defaults and is reported.
    async fn resolve(&self, path: Option<&Path>) -> Arc<Resolved> {
        let shown = |p: &Path| p.display().to_string();
        let anchor = path
            .map(Path::to_path_buf)
            .or_else(|| std::env::current_dir().ok().map(|d| d.join("untitled")));
        let resolver = self.resolver.clone();
        let result = tokio::task::block_in_place(|| {
            let mut r = resolver.lock().unwrap_or_else(|p| p.into_inner());
            match &anchor {
                Some(p) => r
                    .for_file(p, &mut read_config, &shown)
                    .map_err(|e| (e, r.defaults())),
                None => Err(("no directory".to_string(), r.defaults())),
            }
        });
        match result {
            Ok(r) => r,
            Err((e, defaults)) => {
                self.report_config_error(Some(e)).await;
                defaults
            }
        }
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

    /// Starts the analysis task of `uri` unless one is running (it picks
    /// up the newest version by itself).
    fn schedule(&self, uri: Uri) {
        {
            let mut st = self.lock();
            let Some(doc) = st.docs.get_mut(&uri) else {
                return;
            };
            if doc.analysing {
                return;
            }
            doc.analysing = true;
        }
        let this = self.clone();
        tokio::spawn(async move {
            let r = AssertUnwindSafe(this.analysis_loop(&uri))
                .catch_unwind()
                .await;
            if let Err(payload) = r {
                let msg = panic_message(&*payload);
                eprintln!(
                    "csa-lsp: internal error in the analysis task of {}: {msg}",
                    uri.as_str()
                );
                if let Some(doc) = this.lock().docs.get_mut(&uri) {
                    doc.analysing = false;
                }
                this.analysed.notify_waiters();
                this.log(
                    MessageType::ERROR,
                    format!(
                        "csa-lint: internal error in the analysis task of {}: {msg}",
                        uri.as_str()
                    ),
                )
                .await;
            }
        });
    }

    /// Takes a snapshot of the current version of `uri` for an analysis
    /// (and arms the token a change will cancel). `None`: nothing to do.
    fn snapshot(&self, uri: &Uri, open_id: Option<u64>) -> Option<Snapshot> {
        let mut st = self.lock();
        let generation = st.config_generation;
        let doc = st.docs.get_mut(uri)?;
        if open_id.is_some_and(|id| id != doc.open_id) {
            return None;
        }
        if doc.current().is_some() {
            // Analysed already (a configuration change clears `latest`).
            doc.analysing = false;
            doc.cancel = None;
            return None;
        }
        let cancel = Cancel::new();
        doc.cancel = Some(cancel.clone());
        Some(Snapshot {
            rope: doc.rope.clone(),
            version: doc.version,
            open_id: doc.open_id,
            path: doc.path.clone(),
            settings: doc
                .settings
                .as_ref()
                .filter(|(g, _)| *g == generation)
                .map(|(_, r)| r.clone()),
            config_generation: generation,
            cancel,
        })
    }

    /// The analysis task of one document: analyses its newest version
    /// until it has one for the version that is current when it finishes,
    /// then publishes (push mode) and ends.
    async fn analysis_loop(&self, uri: &Uri) {
        let mut open_id = None;
        while let Some(snap) = self.snapshot(uri, open_id) {
            open_id = Some(snap.open_id);
            let resolved = match snap.settings.clone() {
                Some(r) => r,
                None => {
                    let r = self.resolve(snap.path.as_deref()).await;
                    let mut st = self.lock();
                    let generation = st.config_generation;
                    if let Some(doc) = st.docs.get_mut(uri).filter(|d| d.open_id == snap.open_id) {
                        if generation == snap.config_generation {
                            doc.settings = Some((generation, r.clone()));
                        }
                        // `per-file-languages` names the language; without
                        // it (or once it no longer does), the detected one.
                        let named = doc.path.as_ref().and_then(|path| {
                            let abs = std::path::absolute(path).unwrap_or_else(|_| path.clone());
                            r.settings.language_for(r.relative(&abs))
                        });
                        doc.kind = named.unwrap_or(doc.detected);
                    }
                    r
                }
            };
            // One allocation (`to_string` grows the string as it formats).
            let mut text = String::with_capacity(snap.rope.len_bytes());
            for chunk in snap.rope.chunks() {
                text.push_str(chunk);
            }
            let (kind, context) = match self.lock().docs.get(uri) {
                Some(d) => (Some(d.kind), d.context.clone()),
                None => (None, None),
            };
            // the headers a file includes (their macros are expanded in
            // Fortran code, decide C code's conditions), read beside it
            let headers = match (kind, snap.path.as_deref()) {
                (Some(_), Some(path)) if analyzer::Headers::wanted(&text) => {
                    analyzer::Headers::read_beside(
                        path,
                        &text,
                        &resolved.settings.include_dirs,
                        &mut |p| std::fs::read_to_string(p).ok(),
                    )
                }
                _ => analyzer::Headers::default(),
            };
            let with_headers;
            let options = if headers.0.is_empty() {
                &resolved.settings.options
            } else {
                with_headers = analyzer::AnalysisOptions {
                    headers: headers.clone(),
                    ..resolved.settings.options.clone()
                };
                &with_headers
            };
            // read in the context of the file near it that includes it,
            // once that was found to parse better (see `includers`)
            let in_context = match (&context, snap.path.as_deref()) {
                (Some(Some(found)), Some(_)) => {
                    Some((found.kind, crate::includers::options(found, options)))
                }
                _ => None,
            };
            let (options, mut headers, mut prelude) = match &in_context {
                Some((_, o)) => (o, o.headers.clone(), o.prelude.clone()),
                None => (options, headers, String::new()),
            };
            let (engine, mut kind) = {
                let mut st = self.lock();
                let Some(doc) = st.docs.get_mut(uri).filter(|d| d.open_id == snap.open_id) else {
                    return;
                };
                let kind = in_context.as_ref().map_or(doc.kind, |c| c.0);
                (doc.engine(kind, options), kind)
            };
            let path = snap.path.clone();
            let cancel = snap.cancel.clone();
            let res = resolved.clone();
            // (not asked yet: the text again, for a reading in context)
            let again = (context.is_none() && path.is_some()).then(|| text.clone());
            let base = options.clone();
            let outcome = self
                .analyser
                .run(move || {
                    let first = run_analysis(&engine, text, &res, path.as_deref(), &cancel);
                    let tried = match (&first, again, path.as_deref()) {
                        (Some(Ok(fa)), Some(text), Some(path)) if syntax_errors(fa) > 0 => Some(
                            in_includer(path, &text, &res, &base, syntax_errors(fa), &cancel),
                        ),
                        _ => None,
                    };
                    // (a trial a newer version cancelled decides nothing)
                    (first, tried.filter(|_| !cancel.is_cancelled()))
                })
                .await;
            let mut adopted = None;
            let outcome = outcome.map(|(first, tried)| match tried {
                Some(Some((found, fa, options))) => {
                    adopted = Some(found.path.clone());
                    kind = found.kind;
                    headers = options.headers;
                    prelude = options.prelude;
                    if let Some(doc) = self
                        .lock()
                        .docs
                        .get_mut(uri)
                        .filter(|d| d.open_id == snap.open_id)
                    {
                        doc.context = Some(Some(found));
                    }
                    Some(Ok(fa))
                }
                Some(None) => {
                    if let Some(doc) = self
                        .lock()
                        .docs
                        .get_mut(uri)
                        .filter(|d| d.open_id == snap.open_id)
                    {
                        doc.context = Some(None);
                    }
                    first
                }
                None => first,
            });
            // The analysis thread is gone (a panic outside the analysis's
            // own guard): every later analysis of every document says so
            // rather than never arriving.
            let outcome =
                outcome.unwrap_or_else(|| Some(Err("the analysis thread has stopped".to_string())));
            if let Some(includer) = adopted {
                self.log(
                    MessageType::INFO,
                    format!(
                        "csa-lint: {} has syntax errors read alone; it is read as {} gives it, \
                         which includes it",
                        uri.as_str(),
                        includer.display()
                    ),
                )
                .await;
            }
            // Cancelled: a newer version waits.
            let Some(result) = outcome else {
                continue;
            };
            if let Err(msg) = &result {
                self.log(
                    MessageType::ERROR,
                    format!(
                        "csa-lint: internal error while analysing {} (version {}): {msg}",
                        uri.as_str(),
                        snap.version
                    ),
                )
                .await;
            }
            let analysed = Arc::new(Analysed {
                version: snap.version,
                rope: snap.rope.clone(),
                kind,
                resolved,
                headers,
                prelude,
                result,
                rewrites: Default::default(),
            });
            let (current, push, enc, url) = {
                let mut st = self.lock();
                let (push, enc, generation) = (st.push, st.enc, st.config_generation);
                let url = st.settings.rules_url.clone();
                let Some(doc) = st.docs.get_mut(uri).filter(|d| d.open_id == snap.open_id) else {
                    return;
                };
                // Made with settings the configuration has since replaced:
                // neither kept nor published (the next round resolves them).
                let fresh = generation == snap.config_generation;
                let newer = fresh
                    && doc
                        .latest
                        .as_ref()
                        .is_none_or(|a| a.version <= analysed.version);
                // The one replaced is freed on the thread that allocated it
                // (see `AnalysisThread`), unless a request still holds it.
                if newer {
                    if let Some(previous) = doc.latest.replace(analysed.clone()) {
                        self.analyser.discard(previous);
                    }
                }
                let current = fresh && doc.version == analysed.version;
                if current {
                    doc.analysing = false;
                    doc.cancel = None;
                }
                (current, push, enc, url)
            };
            self.analysed.notify_waiters();
            if !current {
                continue;
            }
            if push {
                // The requests just woken (a hover waiting for this version)
                // go first: tokio runs a task this worker woke on this worker
                // next, so they would otherwise wait for the publication.
                tokio::task::yield_now().await;
                let url = url.unwrap_or_else(|| convert::DEFAULT_RULES_URL.to_string());
                self.publish(uri, &snap, &analysed, enc, &url);
            }
            return;
        }
    }

    /// Publishes the diagnostics of `a` (the analysis of `snap`) if it is
    /// still the current version of the same opening of the document, made
    /// with the current configuration, and they differ from the last set
    /// published.
    fn publish(&self, uri: &Uri, snap: &Snapshot, a: &Analysed, enc: Encoding, url: &str) {
        let count = a.result.as_ref().map_or(1, |fa| fa.diagnostics().len());
        // The set's fingerprint is the hash of its JSON (as
        // `diagnostics_fingerprint`), taken from the body once written:
        // cheaper than a structural hash before writing (measured).
        let mut array = 0..0;
        let body = publish_body(
            uri,
            count * 512,
            |out| {
                array.start = out.len();
                convert::write_diagnostics_json(a, uri, enc, url, out);
                array.end = out.len();
            },
            Some(a.version),
        );
        let print = xxhash_rust::xxh3::xxh3_64(body.get(array).unwrap_or_default());
        let mut st = self.lock();
        let generation = st.config_generation;
        let Some(doc) = st.docs.get_mut(uri) else {
            return;
        };
        if doc.open_id != snap.open_id
            || doc.version != a.version
            || generation != snap.config_generation
            || doc.published == Some(print)
        {
            return;
        }
        doc.published = Some(print);
        // Written under the state lock: a close or a newer publication
        // cannot come between the check and the write.
        let _ = self.output.send(&body);
    }

    /// The analysis of the version of `uri` that is current now, waiting
    /// for it if need be. `Err`: not open, or changed while waiting.
    async fn analysis(&self, uri: &Uri) -> Result<Arc<Analysed>> {
        let mut wanted = None;
        loop {
            let notified = self.analysed.notified();
            tokio::pin!(notified);
            // Registered before looking: an analysis stored after the look
            // wakes it.
            notified.as_mut().enable();
            let start = {
                let st = self.lock();
                let Some(doc) = st.docs.get(uri) else {
                    return Err(not_open(uri));
                };
                let version = *wanted.get_or_insert(doc.version);
                if doc.version != version {
                    return Err(content_modified());
                }
                if let Some(a) = doc.current() {
                    return Ok(a);
                }
                !doc.analysing
            };
            if start {
                self.schedule(uri.clone());
            }
            notified.await;
        }
    }

    /// Re-reads configuration and re-analyses every open document.
    async fn reconfigure(&self) {
        let settings = self.lock().settings.clone();
        let (resolver, error) = tokio::task::block_in_place(|| make_resolver(&settings));
        *self.resolver.lock().unwrap_or_else(|p| p.into_inner()) = resolver;
        let (uris, push) = {
            let mut st = self.lock();
            st.config_generation += 1;
            st.last_config_error = None;
            for doc in st.docs.values_mut() {
                doc.latest = None;
                doc.context = None;
                if let Some(c) = &doc.cancel {
                    c.cancel();
                }
            }
            (st.docs.keys().cloned().collect::<Vec<_>>(), st.push)
        };
        self.report_config_error(error).await;
        for uri in uris {
            self.schedule(uri);
        }
        if !push {
            let _ = self.client.workspace_diagnostic_refresh().await;
        }
    }

    /// Conversions of the markers in `from..to` to OpenMP and ivdep, from
    /// the snapshot's rewrites (computed once per version, and only when a
    /// marker is in the range).
    async fn rewrite_actions(
        &self,
        uri: &Uri,
        a: &Arc<Analysed>,
        fa: &Analysis,
        from: usize,
        to: usize,
        enc: Encoding,
    ) -> Vec<CodeActionOrCommand> {
        if !fa.has_marker_in(from, to) {
            return Vec::new();
        }
        if a.rewrites.get().is_none() {
            let snapshot = a.clone();
            // A fresh analysis of the snapshot's text: the incremental one
            // keeps reused functions at the positions they were analysed at.
            let computed = tokio::task::spawn_blocking(move || {
                use analyzer::Target;
                let text = snapshot.rope.to_string();
                let settings = &snapshot.resolved.settings;
                let options = analyzer::AnalysisOptions {
                    headers: snapshot.headers.clone(),
                    prelude: snapshot.prelude.clone(),
                    ..settings.options.clone()
                };
                let fa = analyzer::analyze(snapshot.kind, &text, &options);
                let mut out = fa.rewrites(Target::OpenMp);
                out.extend(fa.rewrites(Target::Ivdep(
                    settings.ivdep_style_for(snapshot.kind.is_fortran()),
                )));
                let _ = snapshot.rewrites.set(out);
            })
            .await;
            if let Err(e) = computed {
                // A panic in the rewriter: said, not swallowed.
                let msg = match e.try_into_panic() {
                    Ok(payload) => panic_message(&*payload),
                    Err(e) => e.to_string(),
                };
                std::panic::panic_any(format!("rewriting the markers: {msg}"));
            }
        }
        let Some(rewrites) = a.rewrites.get() else {
            return Vec::new();
        };
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

    async fn pull_diagnostics(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        let uri = params.text_document.uri;
        let a = self.analysis(&uri).await?;
        let (enc, url) = (self.encoding(), self.rules_url());
        // The id is what the items would be, not the version: a keystroke
        // that changes no diagnostic is answered "unchanged", without them.
        let result_id = format!(
            "{:016x}",
            convert::diagnostics_fingerprint(&a, &uri, enc, &url)
        );
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
                    items: convert::diagnostics(&a, &uri, enc, &url),
                },
            })
        };
        Ok(DocumentDiagnosticReportResult::Report(report))
    }

    async fn hover_at(&self, params: HoverParams) -> Result<Option<Hover>> {
        let uri = params.text_document_position_params.text_document.uri;
        let pos = params.text_document_position_params.position;
        let a = self.analysis(&uri).await?;
        let Ok(fa) = &a.result else {
            return Ok(None);
        };
        // The protocol tests check that a panic in a handler is contained.
        if std::env::var_os("CSA_LSP_TEST_PANIC").is_some()
            && fa.source().text().contains("CSA_LSP_TEST_HOVER_PANIC")
        {
            panic!("test panic in the hover handler requested by the document");
        }
        let enc = self.encoding();
        let Ok(c) = position::char_index(&a.rope, pos, enc) else {
            return Ok(None);
        };
        let offset = a.rope.char_to_byte(c);
        Ok(fa.hover(offset).map(|h| convert::hover(&a, &h, enc)))
    }

    async fn inlay_hints(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let a = self.analysis(&params.text_document.uri).await?;
        let Ok(fa) = &a.result else {
            return Ok(None);
        };
        let enc = self.encoding();
        let from = position::byte_offset(&a.rope, params.range.start, enc);
        let to = position::byte_offset(&a.rope, params.range.end, enc);
        Ok(Some(
            fa.placement_hints()
                .iter()
                .filter(|h| from <= h.offset && h.offset <= to)
                .map(|h| convert::inlay_hint(&a, h, enc))
                .collect(),
        ))
    }

    async fn symbols(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let a = self.analysis(&params.text_document.uri).await?;
        let Ok(fa) = &a.result else {
            return Ok(None);
        };
        let enc = self.encoding();
        Ok(Some(DocumentSymbolResponse::Nested(
            fa.symbols()
                .iter()
                .map(|s| convert::symbol(&a, s, enc))
                .collect(),
        )))
    }

    async fn code_actions(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let a = self.analysis(&uri).await?;
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
            for d in fa.diagnostics() {
                let (s, e) = (d.span.start as usize, d.span.end as usize);
                if e < from || s > to {
                    continue;
                }
                let lsp_diag = convert::diagnostic(&a, fa.source(), &uri, d, enc, &url);
                // The fix fix-all would take is the clearly right one.
                let bulk = analyzer::bulk_fix(d, false);
                let fixes = fa.fixes(d);
                for fix in &fixes {
                    let preferred = bulk.is_some_and(|b| b == fix);
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
        // Rewrites whenever the client does not restrict the kinds away
        // from them (as ruff and rust-analyzer offer refactors): Neovim 0.7
        // and Helix send neither `only` nor `triggerKind`.
        if wants(&CodeActionKind::REFACTOR_REWRITE) {
            actions.extend(self.rewrite_actions(&uri, &a, fa, from, to, enc).await);
        }
        let fix_all = CodeActionKind::new(FIX_ALL);
        if wants(&fix_all) {
            // Every safe fix, as `csa-lint --fix` takes them: first one wins
            // where edits overlap.
            let bulk: Vec<_> = fa
                .diagnostics()
                .iter()
                .filter_map(|d| analyzer::bulk_fix(d, false))
                .collect();
            let chosen = analyzer::compatible_fixes(fa.source().text(), &bulk);
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

    fn open(&self, td: TextDocumentItem) {
        {
            let mut st = self.lock();
            st.opened += 1;
            let doc = Document::new(&td.uri, &td.language_id, &td.text, td.version, st.opened);
            if let Some(old) = st.docs.insert(td.uri.clone(), doc) {
                if let Some(c) = old.cancel {
                    c.cancel();
                }
            }
        }
        self.schedule(td.uri);
    }

    async fn change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let notes = {
            let mut st = self.lock();
            let enc = st.enc;
            st.docs.get_mut(&uri).map(|doc| {
                let notes = doc.apply(params.content_changes, params.text_document.version, enc);
                // The running analysis is for an older version now.
                if let Some(c) = &doc.cancel {
                    c.cancel();
                }
                notes
            })
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

    fn close(&self, uri: Uri) {
        let mut st = self.lock();
        if let Some(doc) = st.docs.remove(&uri) {
            if let Some(c) = doc.cancel {
                c.cancel();
            }
        }
        if st.push {
            // Under the lock, like every publication.
            let empty = |out: &mut Vec<u8>| out.extend_from_slice(b"[]");
            let _ = self.output.send(&publish_body(&uri, 2, empty, None));
        }
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
        let (resolver, error) = tokio::task::block_in_place(|| make_resolver(&settings));
        *self.resolver.lock().unwrap_or_else(|p| p.into_inner()) = resolver;
        {
            let mut st = self.lock();
            st.enc = enc;
            st.push = !pull;
            st.settings = settings;
            st.config_generation += 1;
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
        let error = self.lock().last_config_error.take();
        if let Some(e) = error {
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
        let about = params.text_document.uri.as_str().to_string();
        let _ = self
            .guarded("textDocument/didOpen", &about, async {
                self.open(params.text_document);
                Ok(())
            })
            .await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let about = format!(
            "{} version {}",
            params.text_document.uri.as_str(),
            params.text_document.version
        );
        let _ = self
            .guarded("textDocument/didChange", &about, async {
                self.change(params).await;
                Ok(())
            })
            .await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let about = params.text_document.uri.as_str().to_string();
        let _ = self
            .guarded("textDocument/didClose", &about, async {
                self.close(params.text_document.uri);
                Ok(())
            })
            .await;
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
        let _ = self
            .guarded("workspace/didChangeConfiguration", "", async {
                self.reconfigure().await;
                Ok(())
            })
            .await;
    }

    async fn did_change_watched_files(&self, _: DidChangeWatchedFilesParams) {
        let _ = self
            .guarded("workspace/didChangeWatchedFiles", "", async {
                self.reconfigure().await;
                Ok(())
            })
            .await;
    }

    async fn diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        let about = params.text_document.uri.as_str().to_string();
        self.guarded(
            "textDocument/diagnostic",
            &about,
            self.pull_diagnostics(params),
        )
        .await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = &params.text_document_position_params;
        let about = format!(
            "{} at {}:{}",
            p.text_document.uri.as_str(),
            p.position.line,
            p.position.character
        );
        self.guarded("textDocument/hover", &about, self.hover_at(params))
            .await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let about = params.text_document.uri.as_str().to_string();
        self.guarded("textDocument/inlayHint", &about, self.inlay_hints(params))
            .await
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let about = params.text_document.uri.as_str().to_string();
        self.guarded("textDocument/documentSymbol", &about, self.symbols(params))
            .await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let r = params.range;
        let about = format!(
            "{} at {}:{}-{}:{}",
            params.text_document.uri.as_str(),
            r.start.line,
            r.start.character,
            r.end.line,
            r.end.character
        );
        self.guarded("textDocument/codeAction", &about, self.code_actions(params))
            .await
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
