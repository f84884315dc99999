//! Protocol tests: the real `csa-lsp` binary over stdio with real
//! `Content-Length` framing.

mod support;

use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};
use support::{frame, read_message};

const TIMEOUT: Duration = Duration::from_secs(20);

struct Client {
    child: Child,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next_id: i64,
    /// Messages received and not consumed yet.
    backlog: Vec<Value>,
}

impl Client {
    fn start(envs: &[(&str, &str)]) -> Client {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_csa-lsp"));
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("csa-lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(v) = read_message(&mut r) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin: Some(stdin),
            rx,
            next_id: 1,
            backlog: Vec::new(),
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("the server's input is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Closes the server's input and waits for it to exit.
    fn close_input(&mut self) -> Option<std::process::ExitStatus> {
        drop(self.stdin.take());
        let deadline = Instant::now() + TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    fn send(&mut self, v: &Value) {
        self.send_raw(&frame(v));
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Waits for a message matching `pred`, keeping the others; answers
    /// requests from the server with `null`.
    fn wait(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(i);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(v) => {
                    if v.get("method").is_some() && v.get("id").is_some() {
                        // A request from the server (registerCapability...).
                        let id = v["id"].clone();
                        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
                    }
                    if pred(&v) {
                        return v;
                    }
                    self.backlog.push(v);
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("timed out waiting for {what}; got {:#?}", self.backlog)
                }
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "server exited while waiting for {what}; got {:#?}",
                    self.backlog
                ),
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait(&format!("the response to {method}"), |v| {
            v.get("id") == Some(&json!(id)) && v.get("method").is_none()
        })
    }

    fn initialize(&mut self, capabilities: Value, options: Value) -> Value {
        let r = self.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": capabilities, "initializationOptions": options}),
        );
        self.notify("initialized", json!({}));
        r
    }

    /// The next publishDiagnostics for `uri` with `version`.
    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let v = self.wait(&format!("diagnostics for {uri} v{version}"), |v| {
            v["method"] == "textDocument/publishDiagnostics"
                && v["params"]["uri"] == uri
                && v["params"]["version"] == version
        });
        v["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn open(&mut self, uri: &str, language: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
    }

    fn change(&mut self, uri: &str, version: i64, range: [u32; 4], text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": {"start": {"line": range[0], "character": range[1]},
                                                  "end": {"line": range[2], "character": range[3]}},
                                        "text": text}]}),
        );
    }

    fn shutdown(mut self) {
        let r = self.request("shutdown", json!(null));
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", json!(null));
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status}");
                return;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Every server a test starts is reaped: its input is closed, and a server
/// that has not exited by itself then is killed and fails the test.
impl Drop for Client {
    fn drop(&mut self) {
        if self.close_input().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
            if !std::thread::panicking() {
                panic!("csa-lsp did not exit when its input closed");
            }
        }
    }
}

fn codes(diags: &[Value]) -> Vec<String> {
    diags
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A loop whose bound is read through a pointer: CSA101. Replacing `*n`
/// by `m` (a local copy) parallelizes it.
const DOC: &str = "void f(int *a, int *n) {\n  int m = *n;\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  for (int i = 0; i < *n; i++) {\n    a[i] = a[i] * 2;\n  }\n}\n";

const URI: &str = "file:///tmp/csa-lsp-test/doc.c";

#[test]
fn diagnostics_follow_incremental_edits() {
    let mut c = Client::start(&[]);
    let init = c.initialize(json!({}), json!(null));
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-16");
    assert_eq!(caps["textDocumentSync"]["change"], 2);
    assert!(caps["diagnosticProvider"].is_null());
    c.open(URI, "c", DOC);
    let d = c.diagnostics(URI, 1);
    assert_eq!(codes(&d), ["CSA101"], "{d:#?}");
    let d0 = &d[0];
    assert_eq!(d0["source"], "csa-lint");
    assert_eq!(d0["severity"], 2);
    assert_eq!(d0["range"]["start"], json!({"line": 3, "character": 2}));
    assert!(d0["codeDescription"]["href"]
        .as_str()
        .unwrap()
        .ends_with("#csa101-could-not-parallelize"));
    assert!(!d0["relatedInformation"].as_array().unwrap().is_empty());
    assert!(d0["message"]
        .as_str()
        .unwrap()
        .contains("COULD NOT PARALLELIZE"));
    // `*n` -> `m` in the loop condition (line 5, characters 22..24).
    c.change(URI, 2, [5, 22, 5, 24], "m");
    assert_eq!(codes(&c.diagnostics(URI, 2)), Vec::<String>::new());
    c.change(URI, 3, [5, 22, 5, 23], "*n");
    assert_eq!(codes(&c.diagnostics(URI, 3)), ["CSA101"]);
    // Closing clears the document's diagnostics.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": URI}}),
    );
    let v = c.wait("cleared diagnostics", |v| {
        v["method"] == "textDocument/publishDiagnostics"
            && v["params"]["uri"] == URI
            && v["params"]["diagnostics"] == json!([])
    });
    assert!(v["params"]["version"].is_null());
    c.shutdown();
}

/// Edits `DOC` without waiting, one version after another: odd versions
/// read the loop bound through the pointer (CSA101), even ones use the
/// local copy (no diagnostic).
fn toggle_bound(c: &mut Client, versions: std::ops::RangeInclusive<i64>) {
    for v in versions {
        if v % 2 == 0 {
            c.change(URI, v, [5, 22, 5, 24], "m");
        } else {
            c.change(URI, v, [5, 22, 5, 23], "*n");
        }
    }
}

#[test]
fn requests_after_rapid_edits_answer_from_the_latest_version() {
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    c.open(URI, "c", DOC);
    // Many edits without waiting: toggle the bound 20 times.
    toggle_bound(&mut c, 2..=21);
    // Version 21 has `*n`: a request answers from its analysis. (Whether
    // version 21 is published depends on what was published last: an
    // identical set is not sent again; see the burst test.)
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 3, "character": 20}}),
    );
    let md = h["result"]["contents"]["value"].as_str().unwrap();
    assert!(md.contains("COULD NOT PARALLELIZE"), "{md}");
    c.shutdown();
}

#[test]
fn hover_inlay_hints_and_symbols() {
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    let text = DOC.replace("i < *n", "i < m");
    c.open(URI, "c", &text);
    assert!(c.diagnostics(URI, 1).is_empty());
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 3, "character": 10}}),
    );
    let r = &h["result"];
    let md = r["contents"]["value"].as_str().unwrap();
    assert!(md.contains("Attaches to the loop at line 6"), "{md}");
    assert!(md.contains("CLIE parallelizes it"), "{md}");
    assert_eq!(r["range"]["start"], json!({"line": 3, "character": 2}));
    // Hover on `#ifdef` gives nothing; on a plain statement neither.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 1, "character": 4}}),
    );
    assert!(h["result"].is_null(), "{h}");
    let hints = c.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": URI},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}}),
    );
    let labels: Vec<(u64, String)> = hints["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["position"]["line"].as_u64().unwrap(),
                h["label"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        labels,
        [
            (5, "region▸".to_string()),
            (6, "section▸".to_string()),
            (6, "◂section".to_string()),
            (7, "◂region".to_string())
        ]
    );
    let syms = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": URI}}),
    );
    let f = &syms["result"][0];
    assert_eq!(f["name"], "f");
    assert_eq!(f["children"][0]["detail"], "parallel_loop");
    c.shutdown();
}

#[test]
fn utf16_and_utf8_positions_after_non_ascii_text() {
    // `é` is one UTF-16 unit and two bytes; `𝄞` two units and four bytes.
    let text = DOC.replace(
        "  __builtin_csa_parallel_loop();",
        "  /*é𝄞*/ __builtin_csa_parallel_loop();",
    );
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    c.open(URI, "c", &text);
    let d = c.diagnostics(URI, 1);
    // `  /*é𝄞*/ ` is 2 + 2 + 1 + 2 + 2 + 1 = 10 UTF-16 units.
    assert_eq!(d[0]["range"]["start"], json!({"line": 3, "character": 10}));
    // An edit after the non-ASCII text, in UTF-16 units: `*n` -> `m` on
    // line 5 is ASCII; insert on line 3 right after `*/`.
    c.change(URI, 2, [3, 9, 3, 9], " ");
    let d = c.diagnostics(URI, 2);
    assert_eq!(d[0]["range"]["start"], json!({"line": 3, "character": 11}));
    c.shutdown();

    let mut c = Client::start(&[]);
    let init = c.initialize(
        json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}}),
        json!(null),
    );
    assert_eq!(init["result"]["capabilities"]["positionEncoding"], "utf-8");
    c.open(URI, "c", &text);
    let d = c.diagnostics(URI, 1);
    // 2 + 2 + 2 + 4 + 2 + 1 = 13 bytes.
    assert_eq!(d[0]["range"]["start"], json!({"line": 3, "character": 13}));
    c.shutdown();
}

#[test]
fn garbage_and_out_of_range_input_do_not_stop_the_server() {
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    // Not JSON: a parse error with a null id.
    c.send_raw(b"Content-Length: 9\r\n\r\n{garbage}");
    let e = c.wait("a parse error", |v| v["error"]["code"] == -32700);
    assert!(e["id"].is_null());
    // JSON that is not a JSON-RPC message (a batch): invalid request.
    c.send(&json!([1, 2, 3]));
    c.wait("an invalid request error", |v| v["error"]["code"] == -32600);
    // A broken header, then a good message right after.
    c.send_raw(b"Content-Length: many\r\n\r\n");
    c.wait("a header error", |v| {
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Content-Length"))
    });
    // An unknown request gets an error, an unknown notification nothing.
    let r = c.request("csa/unknown", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    c.notify("csa/unknownNotification", json!({}));
    // A request with bad params gets an error.
    let r = c.request("textDocument/hover", json!({"nonsense": true}));
    assert!(r.get("error").is_some(), "{r}");
    // Edits to a document that is not open are ignored.
    c.change("file:///nowhere.c", 2, [0, 0, 0, 0], "x");
    c.open(URI, "c", DOC);
    assert_eq!(codes(&c.diagnostics(URI, 1)), ["CSA101"]);
    // An edit far outside the document is applied at its end (a second
    // copy of the function, so the diagnostics change and are published).
    c.change(URI, 2, [400, 3, 500, 9], &DOC.replace("void f(", "void g("));
    assert_eq!(codes(&c.diagnostics(URI, 2)), ["CSA101", "CSA101"]);
    // Out-of-range positions in requests.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 9999, "character": 9999}}),
    );
    assert!(h.get("error").is_none(), "{h}");
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///not/open.c"}, "position": {"line": 0, "character": 0}}),
    );
    assert!(h["result"].is_null(), "{h}");
    // Still answering.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 3, "character": 10}}),
    );
    assert!(h["result"]["contents"]["value"].as_str().is_some(), "{h}");
    c.shutdown();
}

#[test]
fn a_panic_in_the_analysis_becomes_one_diagnostic() {
    let mut c = Client::start(&[("CSA_LSP_TEST_PANIC", "1")]);
    c.initialize(json!({}), json!(null));
    let bad = "file:///tmp/csa-lsp-test/bad.c";
    c.open(bad, "c", "// CSA_LSP_TEST_PANIC\nint x;\n");
    let d = c.diagnostics(bad, 1);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["severity"], 1);
    assert!(d[0]["message"].as_str().unwrap().contains("internal error"));
    let log = c.wait("a log line", |v| {
        v["method"] == "window/logMessage"
            && v["params"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("internal error"))
    });
    assert_eq!(log["params"]["type"], 1);
    // Other documents are still analysed, and the bad one recovers.
    c.open(URI, "c", DOC);
    assert_eq!(codes(&c.diagnostics(URI, 1)), ["CSA101"]);
    c.change(bad, 2, [0, 0, 1, 0], "");
    assert!(c.diagnostics(bad, 2).is_empty());
    c.shutdown();
}

#[test]
fn pull_diagnostics_when_the_client_supports_them() {
    let mut c = Client::start(&[]);
    let init = c.initialize(
        json!({"textDocument": {"diagnostic": {"dynamicRegistration": false}}}),
        json!(null),
    );
    assert_eq!(
        init["result"]["capabilities"]["diagnosticProvider"]["identifier"],
        "csa-lint"
    );
    c.open(URI, "c", DOC);
    let r = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": URI}}),
    );
    assert_eq!(r["result"]["kind"], "full");
    let id = r["result"]["resultId"].as_str().unwrap().to_string();
    assert_eq!(codes(r["result"]["items"].as_array().unwrap()), ["CSA101"]);
    let r = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": URI}, "previousResultId": id}),
    );
    assert_eq!(r["result"]["kind"], "unchanged");
    // A new version whose diagnostics are the same (a line added at the
    // end) is still unchanged: the id is the items', not the version's.
    c.change(URI, 2, [9, 0, 9, 0], "\n");
    let r = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": URI}, "previousResultId": id}),
    );
    assert_eq!(r["result"]["kind"], "unchanged", "{r}");
    assert_eq!(r["result"]["resultId"], id.as_str());
    c.change(URI, 3, [5, 22, 5, 24], "m");
    let r = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": URI}, "previousResultId": id}),
    );
    assert_eq!(r["result"]["kind"], "full");
    assert!(r["result"]["items"].as_array().unwrap().is_empty());
    // Nothing was pushed.
    assert!(
        !c.backlog
            .iter()
            .any(|v| v["method"] == "textDocument/publishDiagnostics"),
        "{:#?}",
        c.backlog
    );
    c.shutdown();
}

#[test]
fn configuration_from_options_and_changes() {
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!({"ignore": ["CSA101"]}));
    c.open(URI, "c", DOC);
    assert!(c.diagnostics(URI, 1).is_empty());
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"csa-lint": {"select": ["ALL"]}}}),
    );
    assert_eq!(codes(&c.diagnostics(URI, 1)), ["CSA101"]);
    c.shutdown();
}

#[test]
fn configuration_files_apply_to_documents_below_them() {
    let dir = std::env::temp_dir().join(format!("csa-lsp-config-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("csa-lint.toml"),
        "ignore = [\"could-not-parallelize\"]\n",
    )
    .unwrap();
    let file = dir.join("sub/x.c");
    std::fs::write(&file, DOC).unwrap();
    let uri = format!("file://{}", file.display());
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    c.open(&uri, "c", DOC);
    assert!(c.diagnostics(&uri, 1).is_empty());
    // A broken file is reported and default settings apply.
    std::fs::write(dir.join("csa-lint.toml"), "selct = 1\n").unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": format!("file://{}/csa-lint.toml", dir.display()), "type": 2}]}),
    );
    assert_eq!(codes(&c.diagnostics(&uri, 1)), ["CSA101"]);
    let shown = c.wait("the configuration error", |v| {
        v["method"] == "window/showMessage"
    });
    let msg = shown["params"]["message"].as_str().unwrap();
    assert!(
        msg.contains("csa-lint.toml:1:1: unknown key `selct`"),
        "{msg}"
    );
    c.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn per_file_languages_and_fortran_headers() {
    let dir = std::env::temp_dir().join(format!("csa-lsp-languages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("csa-lint.toml"),
        "[per-file-languages]\n\"*.inc\" = \"fortran\"\n",
    )
    .unwrap();
    // a Fortran marker on a loop without memory operations: CSA102 when it
    // is read as Fortran, syntax errors when read as C
    let fortran = "subroutine s(n)\n  integer n, i\n  call builtin_csa_parallel_loop()\n  do i = 1, n\n  end do\nend subroutine\n";
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    for name in ["k.inc", "decl.h"] {
        let file = dir.join(name);
        std::fs::write(&file, fortran).unwrap();
        let uri = format!("file://{}", file.display());
        // the client calls both C (or plain text)
        c.open(&uri, "c", fortran);
        let got = codes(&c.diagnostics(&uri, 1));
        assert!(got.contains(&"CSA102".to_string()), "{name}: {got:?}");
        assert!(!got.contains(&"CSA001".to_string()), "{name}: {got:?}");
    }
    // Without the setting, `k.inc` is C again (its text is not C: syntax
    // errors); the header stays Fortran by its content.
    std::fs::write(dir.join("csa-lint.toml"), "").unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": format!("file://{}", dir.join("csa-lint.toml").display()), "type": 2}]}),
    );
    let inc = format!("file://{}", dir.join("k.inc").display());
    let got = codes(&c.diagnostics(&inc, 1));
    assert!(got.contains(&"CSA001".to_string()), "k.inc: {got:?}");
    c.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Applies LSP text edits (positions in UTF-16, ASCII text here).
fn apply_edits(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| {
        let (line, ch) = (
            p["line"].as_u64().unwrap() as usize,
            p["character"].as_u64().unwrap() as usize,
        );
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        start + ch
    };
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (s, e, t) in spans {
        out.replace_range(s..e, &t);
    }
    out
}

/// An unattached marker (CSA105, safe fix: remove it) and a reduction loop
/// whose marker is redundant (CSA208), convertible to OpenMP.
const ACTIONS_DOC: &str = "void scale(int *a, int n, int k) {\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  if (k > 1) a[0] = 1; else a[0] = 2;\n  for (int i = 0; i < n; i++) a[i] *= k;\n}\ndouble sum(const double *x, int n) {\n  double s = 0;\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  for (int i = 0; i < n; i++) s += x[i];\n  return s;\n}\n";

#[test]
fn code_actions_fix_and_rewrite() {
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    c.open(URI, "c", ACTIONS_DOC);
    let diags = c.diagnostics(URI, 1);
    assert_eq!(codes(&diags), ["CSA105", "CSA208"]);
    // Quick fixes of the CSA105 diagnostic.
    let r = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": diags[0]["range"],
               "context": {"diagnostics": [diags[0]], "only": ["quickfix"]}}),
    );
    let actions = r["result"].as_array().unwrap().clone();
    let titles: Vec<&str> = actions
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Remove the parallel_loop marker (CSA105)",
            "Suppress CSA105 on this line (CSA105)"
        ],
        "{r:#}"
    );
    assert_eq!(actions[0]["kind"], "quickfix");
    assert_eq!(actions[0]["isPreferred"], true);
    assert_eq!(actions[0]["diagnostics"][0]["code"], "CSA105");
    // Apply the preferred fix the way an editor does: the edits, then a
    // change notification with the result.
    let edits = actions[0]["edit"]["changes"][URI]
        .as_array()
        .unwrap()
        .clone();
    let fixed = apply_edits(ACTIONS_DOC, &edits);
    assert!(
        !fixed.contains("__builtin_csa_parallel_loop();\n#endif\n  if"),
        "{fixed}"
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": fixed}]}),
    );
    assert_eq!(codes(&c.diagnostics(URI, 2)), ["CSA208"]);
    // Fix-all applies only safe fixes: none left (CSA208's is unsafe).
    let r = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": [], "only": ["source.fixAll.csa"]}}),
    );
    assert_eq!(r["result"], json!([]), "{r:#}");
    // The rewrite of the reduction loop to OpenMP.
    let marker_line = fixed
        .lines()
        .position(|l| l.contains("parallel_loop"))
        .unwrap() as u32;
    let r = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI},
               "range": {"start": {"line": marker_line, "character": 4}, "end": {"line": marker_line, "character": 4}},
               "context": {"diagnostics": [], "only": ["refactor.rewrite"]}}),
    );
    let actions = r["result"].as_array().unwrap();
    let omp = actions
        .iter()
        .find(|a| {
            a["title"]
                .as_str()
                .unwrap()
                .contains("#pragma omp parallel for")
        })
        .unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!(omp["kind"], "refactor.rewrite");
    assert!(omp["title"].as_str().unwrap().contains("unsafe"));
    let edits = omp["edit"]["changes"][URI].as_array().unwrap();
    let converted = apply_edits(&fixed, edits);
    assert!(
        converted.contains(
            "#pragma omp parallel for reduction(+:s)\n  for (int i = 0; i < n; i++) s += x[i];"
        ),
        "{converted}"
    );
    // the ivdep spelling for the default C standard (C17): a pragma
    assert!(actions
        .iter()
        .any(|a| a["title"].as_str().unwrap().contains("#pragma GCC ivdep")));
    c.shutdown();
}

#[test]
fn fix_all_applies_safe_fixes() {
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    // Two unattached markers: both removals are safe.
    let text = ACTIONS_DOC
        .replace(
            "double s = 0;\n#ifdef",
            "double s = 0;\n  if (n) s = 1;\n#ifdef",
        )
        .replace(
            "  for (int i = 0; i < n; i++) s += x[i];",
            "  if (n > 2) s = 2;\n  for (int i = 0; i < n; i++) s += x[i];",
        );
    c.open(URI, "c", &text);
    assert_eq!(codes(&c.diagnostics(URI, 1)), ["CSA105", "CSA105"]);
    let r = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
    );
    let actions = r["result"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "{r:#}");
    assert_eq!(actions[0]["kind"], "source.fixAll.csa");
    let fixed = apply_edits(
        &text,
        actions[0]["edit"]["changes"][URI].as_array().unwrap(),
    );
    assert!(!fixed.contains("parallel_loop"), "{fixed}");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": fixed}]}),
    );
    assert!(c.diagnostics(URI, 2).is_empty());
    c.shutdown();
}

/// Every publication for `uri` received so far (consumed from the backlog
/// and the channel), waiting until one for `last` arrives.
fn publications_until(c: &mut Client, uri: &str, last: i64) -> Vec<(i64, Vec<String>)> {
    let is_pub =
        |v: &Value| v["method"] == "textDocument/publishDiagnostics" && v["params"]["uri"] == uri;
    let done = c.wait(&format!("diagnostics for {uri} v{last}"), |v| {
        is_pub(v) && v["params"]["version"] == last
    });
    let mut all: Vec<Value> = Vec::new();
    let mut rest = Vec::new();
    for v in c.backlog.drain(..) {
        if is_pub(&v) {
            all.push(v);
        } else {
            rest.push(v);
        }
    }
    c.backlog = rest;
    all.push(done);
    all.iter()
        .map(|v| {
            let d = v["params"]["diagnostics"].as_array().unwrap();
            (v["params"]["version"].as_i64().unwrap(), codes(d))
        })
        .collect()
}

#[test]
fn a_burst_of_edits_never_shows_a_stale_result() {
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    c.open(URI, "c", DOC);
    // 1,000 edits without waiting.
    toggle_bound(&mut c, 2..=1001);
    // Then a version with a set of its own: a second copy of the function.
    c.change(URI, 1002, [9, 0, 9, 0], &DOC.replace("void f(", "void g("));
    let pubs = publications_until(&mut c, URI, 1002);
    let expected = |v: i64| -> Vec<String> {
        match v {
            1002 => vec!["CSA101".into(), "CSA101".into()],
            v if v % 2 == 1 => vec!["CSA101".into()],
            _ => vec![],
        }
    };
    for w in pubs.windows(2) {
        assert!(w[0].0 < w[1].0, "versions out of order: {pubs:?}");
        assert_ne!(w[0].1, w[1].1, "an identical set published again: {pubs:?}");
    }
    for (v, codes) in &pubs {
        assert_eq!(
            codes,
            &expected(*v),
            "version {v} published a stale set: {pubs:?}"
        );
    }
    // Superseded versions were skipped, not all analysed and published.
    assert!(pubs.len() < 500, "{} publications", pubs.len());
    c.shutdown();
}

#[test]
fn identical_diagnostics_are_not_published_again() {
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    c.open(URI, "c", DOC);
    assert_eq!(codes(&c.diagnostics(URI, 1)), ["CSA101"]);
    // A comment after the function: the same diagnostics, not published.
    c.change(URI, 2, [9, 0, 9, 0], "/* typed */\n");
    // A hover waits for version 2's analysis, which is then done.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 3, "character": 10}}),
    );
    assert!(h["result"]["contents"]["value"].is_string(), "{h}");
    // A line above the marker moves the diagnostic: published.
    c.change(URI, 3, [0, 0, 0, 0], "\n");
    let pubs = publications_until(&mut c, URI, 3);
    assert_eq!(
        pubs,
        [(3, vec!["CSA101".to_string()])],
        "version 2 must not have been published"
    );
    c.shutdown();
}

#[test]
fn a_panic_in_a_handler_is_an_error_and_the_server_goes_on() {
    let mut c = Client::start(&[("CSA_LSP_TEST_PANIC", "1")]);
    c.initialize(json!({}), json!(null));
    let text = format!("/* CSA_LSP_TEST_HOVER_PANIC */\n{DOC}");
    c.open(URI, "c", &text);
    assert_eq!(codes(&c.diagnostics(URI, 1)), ["CSA101"]);
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 4, "character": 10}}),
    );
    assert_eq!(h["error"]["code"], -32603, "{h}");
    let msg = c.wait("the log line of the panic", |v| {
        v["method"] == "window/logMessage"
            && v["params"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("textDocument/hover"))
    });
    assert!(
        msg["params"]["message"].as_str().unwrap().contains(URI),
        "{msg}"
    );
    // Other requests and documents are served.
    let other = "file:///tmp/csa-lsp-test/other.c";
    c.open(other, "c", DOC);
    assert_eq!(codes(&c.diagnostics(other, 1)), ["CSA101"]);
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": other}, "position": {"line": 3, "character": 10}}),
    );
    assert!(h["result"]["contents"]["value"].is_string(), "{h}");
    c.shutdown();
}

#[test]
fn the_server_exits_when_its_input_closes() {
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    c.open(URI, "c", DOC);
    assert_eq!(codes(&c.diagnostics(URI, 1)), ["CSA101"]);
    // No shutdown, no exit: the editor died.
    assert!(
        c.close_input().is_some(),
        "csa-lsp still runs after its input closed"
    );
}

#[test]
fn rewrites_are_offered_without_trigger_kind_or_only() {
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    // A reduction (converted), and a loop that carries a dependence through
    // memory (refused, with the reason).
    let text = "double sum(const double *x, int n) {\n  double s = 0;\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < n; i++) s += x[i];\n  return s;\n}\nvoid shift(double *a, int n) {\n  __builtin_csa_parallel_loop();\n  for (int i = 1; i < n; i++) a[i] = a[i - 1];\n}\n";
    c.open(URI, "c", text);
    c.diagnostics(URI, 1);
    let at = |line: u32| json!({"start": {"line": line, "character": 4}, "end": {"line": line, "character": 4}});
    // As Neovim 0.7 and Helix ask: no `only`, no `triggerKind`.
    let r = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": at(2), "context": {"diagnostics": []}}),
    );
    let actions = r["result"].as_array().unwrap();
    assert!(
        actions.iter().any(|a| a["kind"] == "refactor.rewrite"
            && a["edit"].is_object()
            && a["title"].as_str().unwrap().contains("omp parallel for")),
        "{r:#}"
    );
    let r = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": at(7), "context": {"diagnostics": []}}),
    );
    let actions = r["result"].as_array().unwrap();
    let refused = actions
        .iter()
        .find(|a| a["kind"] == "refactor.rewrite" && a["disabled"]["reason"].is_string())
        .unwrap_or_else(|| panic!("no refused rewrite: {r:#}"));
    assert!(refused["edit"].is_null(), "{refused:#}");
    assert!(
        refused["disabled"]["reason"].as_str().unwrap().len() > 20,
        "{refused:#}"
    );
    // Restricted to quick fixes: no rewrites.
    let r = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": at(2), "context": {"diagnostics": [], "only": ["quickfix"]}}),
    );
    assert!(
        !r["result"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["kind"] == "refactor.rewrite"),
        "{r:#}"
    );
    c.shutdown();
}

/// A free-form Fortran file's `#include`d header is read beside it: its
/// macros are expanded in the code (no syntax error, the race is seen).
#[test]
fn fortran_headers_are_read_beside_the_document() {
    let dir = std::env::temp_dir().join(format!("csa-lsp-headers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(
        dir.join("inc/decl.h"),
        "#define DATA_TYPE double precision\n#define DECL(NAME, N) DATA_TYPE :: NAME(N)\n",
    )
    .unwrap();
    let uri = format!("file://{}/kernel.F90", dir.display());
    let text = "#include \"inc/decl.h\"\nsubroutine k(n)\n  integer :: n, i\n  DECL(a, n)\n  call builtin_csa_parallel_loop()\n  do i = 1, n - 1\n    a(i + 1) = a(i)\n  end do\nend subroutine\n";
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    c.open(&uri, "fortran", text);
    let d = c.diagnostics(&uri, 1);
    assert_eq!(codes(&d), ["CSA501"], "{d:#?}");
    c.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A header opened on its own that does not parse alone is read as a file
/// near it that includes it gives it (MITgcm's `_RL`, defined in an options
/// header its includers include first), as `csa-lint` reads it in a run.
#[test]
fn a_header_is_read_with_its_includers_macros() {
    let dir = std::env::temp_dir().join(format!("csa-lsp-includer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("csa-lint.toml"), "include-dirs = [\"inc\"]\n").unwrap();
    std::fs::write(dir.join("inc/OPTIONS.h"), "#define _RL Real*8\n").unwrap();
    let text = "C     VARS.h: the fields\n      COMMON /VARS_R/ u, v\n      _RL u(10), v(10)\n";
    std::fs::write(dir.join("inc/VARS.h"), text).unwrap();
    std::fs::write(dir.join("inc/LONE.h"), text).unwrap();
    std::fs::write(
        dir.join("src/step.F"),
        "#include \"OPTIONS.h\"\n      SUBROUTINE STEP(n)\n      INTEGER n, i\n\
         #include \"VARS.h\"\n      DO i = 1, n\n        u(i) = v(i)\n      END DO\n      END\n",
    )
    .unwrap();
    let mut c = Client::start(&[]);
    c.initialize(json!({}), json!(null));
    // no file includes it: alone, it does not parse
    let lone = format!("file://{}/inc/LONE.h", dir.display());
    c.open(&lone, "fortran", text);
    let d = c.diagnostics(&lone, 1);
    assert_eq!(codes(&d), ["CSA001"], "{d:#?}");
    let uri = format!("file://{}/inc/VARS.h", dir.display());
    c.open(&uri, "fortran", text);
    let d = c.diagnostics(&uri, 1);
    assert_eq!(codes(&d), Vec::<String>::new(), "{d:#?}");
    // the log says why, naming the includer
    let log = c.wait("the log line of the context", |v| {
        v["method"] == "window/logMessage"
            && v["params"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("VARS.h") && m.contains("step.F"))
    });
    assert_eq!(log["params"]["type"], 3);
    // and so it stays as it is edited: a syntax error of its own shows,
    // and goes when it is mended
    c.change(&uri, 2, [3, 0, 3, 0], "      _RL w(\n");
    let d = c.diagnostics(&uri, 2);
    assert_eq!(codes(&d), ["CSA001"], "{d:#?}");
    c.change(&uri, 3, [3, 11, 3, 12], "");
    let d = c.diagnostics(&uri, 3);
    assert_eq!(codes(&d), Vec::<String>::new(), "{d:#?}");
    c.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
