//! Editor latency: one keystroke in a 20,000-line annotated C file to the
//! published diagnostics of that version, through the real `csa-lsp`
//! binary over stdio. Prints p50, p90, p99 and max over many edits.
//!
//! Then the same keystrokes in process: `Incremental::update` alone (the
//! analysis without the protocol).
//!
//! `cargo bench -p csa-lsp --bench latency [-- EDITS]` (default 300);
//! `-- EDITS --in-process` measures only the in-process part (for `perf`);
//! `--all-unrestricted` drops `restrict` from every kernel (1,600 warnings
//! published per keystroke).
//! `CSA_LSP_BIN=path` runs another build of the server (to compare two on
//! the same machine state, alternately).

#[path = "../tests/support/mod.rs"]
mod support;

use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};
use support::{frame, read_message};

/// A realistic annotated file: functions with marked loop nests,
/// reductions, stencils, guards and comments; `lines` lines in all. Like a
/// codebase in use, most markers are fine and a few are not: every 20th
/// kernel takes its arrays without `restrict` (two CSA502, may-alias,
/// with related locations), and every other one of those reads its bound
/// through a pointer the loop may write (CSA101). With `all_unrestricted` no kernel has `restrict` (1,600
/// CSA502: the cost of publishing many diagnostics on every keystroke).
fn generate(lines: usize, all_unrestricted: bool) -> (String, Vec<u32>) {
    let mut out = String::from("#include <math.h>\n#define N 1024\nint table[N];\n\n");
    let mut body_lines = Vec::new();
    let mut k = 0;
    while out.lines().count() < lines {
        let bound = if k % 40 == 39 { "*np" } else { "n" };
        let restrict = if all_unrestricted || k % 20 == 19 {
            ""
        } else {
            "restrict "
        };
        let f = format!(
            "/* Kernel {k}: scale, stencil and reduce. */\n\
             double kernel_{k}(double *{restrict}a, const double *{restrict}b, int n, int m, const double *np) {{\n\
             \x20 double sum = 0.0;\n\
             \x20 if (n <= 0) return 0.0;\n\
             #ifdef __CSA__\n\
             \x20 __builtin_csa_parallel_loop();\n\
             #endif\n\
             \x20 for (int i = 1; i < {bound} - 1; i++) {{\n\
             \x20   a[i] = 0.5 * a[i] + 0.25 * b[i - 1] + 0.25 * b[i + 1];\n\
             \x20 }}\n\
             #ifdef __CSA__\n\
             \x20 __builtin_csa_spmd(4, 0);\n\
             #endif\n\
             \x20 for (int i = 0; i < n; i++) {{\n\
             \x20   for (int j = 0; j < m; j++) {{\n\
             \x20     a[i * m + j] += b[j] * {k}.0;\n\
             \x20   }}\n\
             \x20 }}\n\
             \x20 for (int i = 0; i < n; i++) sum += a[i];\n\
             \x20 if (sum > 1e9) {{\n\
             \x20   sum = sqrt(sum);\n\
             \x20 }}\n\
             \x20 return sum;\n\
             }}\n\n"
        );
        // The line of `a[i] = 0.25 ...` (0-based) in this function.
        body_lines.push(out.lines().count() as u32 + 8);
        out.push_str(&f);
        k += 1;
    }
    (out, body_lines)
}

/// The text after keystroke `e` (0-based) of the alternating edits: a
/// space typed after `a[i] =` on line `target`, then deleted again.
fn edited(text: &str, target: u32, e: usize) -> String {
    if e % 2 == 1 {
        return text.to_string();
    }
    let line_start: usize = text
        .split_inclusive('\n')
        .take(target as usize)
        .map(str::len)
        .sum();
    let at = line_start + 10;
    format!("{} {}", &text[..at], &text[at..])
}

/// Prints percentiles of the samples.
fn report(what: &str, samples: &mut [Duration]) {
    samples.sort();
    let pct =
        |p: f64| samples[((samples.len() as f64 * p).ceil() as usize).clamp(1, samples.len()) - 1];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "  {what} p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(pct(0.50)),
        ms(pct(0.90)),
        ms(pct(0.99)),
        ms(*samples.last().unwrap())
    );
}

/// `Incremental::update` alone on the same keystrokes.
fn in_process(text: &str, target: u32, edits: usize) {
    use analyzer::analysis::AnalysisOptions;
    use analyzer::incremental::Incremental;
    let mut inc = Incremental::new(csa_grammars::SourceKind::C, AnalysisOptions::default());
    let t = Instant::now();
    let first = inc.update(text);
    let open = t.elapsed();
    let texts = [edited(text, target, 0), text.to_string()];
    let mut samples = Vec::with_capacity(edits);
    for e in 0..edits {
        let t = Instant::now();
        let fa = inc.update(&texts[e % 2]);
        samples.push(t.elapsed());
        assert_eq!(fa.diagnostics.len(), first.diagnostics.len());
    }
    println!("in process (Incremental::update, {edits} keystrokes):");
    println!(
        "  open:                      {:8.2} ms",
        open.as_secs_f64() * 1000.0
    );
    report("keystroke:                ", &mut samples);
}

fn main() {
    let edits: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(300);
    let all_unrestricted = std::env::args().any(|a| a == "--all-unrestricted");
    let (text, body_lines) = generate(20_000, all_unrestricted);
    let lines = text.lines().count();
    let target = body_lines[body_lines.len() / 2];
    if std::env::args().any(|a| a == "--in-process") {
        in_process(&text, target, edits);
        return;
    }
    let server =
        std::env::var_os("CSA_LSP_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_csa-lsp").into());
    let mut child = Command::new(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("csa-lsp starts");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel::<Value>();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        while let Some(v) = read_message(&mut r) {
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    let mut send = |v: Value| {
        stdin.write_all(&frame(&v)).unwrap();
        stdin.flush().unwrap();
    };
    let wait_version = |version: i64| -> Duration {
        let start = Instant::now();
        loop {
            let v = rx
                .recv_timeout(Duration::from_secs(120))
                .expect("diagnostics arrive");
            if v["method"] == "textDocument/publishDiagnostics" && v["params"]["version"] == version
            {
                return start.elapsed();
            }
        }
    };
    let uri = "file:///tmp/csa-latency/big.c";
    send(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}),
    );
    // Like an editor, wait for the answer before going on (tower-lsp-server
    // may not notice messages that arrive while it is initialising).
    while rx
        .recv_timeout(Duration::from_secs(120))
        .expect("initialize answered")["id"]
        != 1
    {}
    send(json!({"jsonrpc":"2.0","method":"initialized","params":{}}));
    let t = Instant::now();
    send(
        json!({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":uri,"languageId":"c","version":1,"text":text}}}),
    );
    let diagnostics = loop {
        let v = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("diagnostics arrive");
        if v["method"] == "textDocument/publishDiagnostics" && v["params"]["version"] == 1 {
            break v["params"]["diagnostics"]
                .as_array()
                .map(Vec::len)
                .unwrap_or(0);
        }
    };
    let open = t.elapsed();
    let mut samples = Vec::with_capacity(edits);
    for e in 0..edits {
        let version = e as i64 + 2;
        // Type a space after `a[i] =` then delete it again, alternately.
        let change = if e % 2 == 0 {
            json!({"range":{"start":{"line":target,"character":10},"end":{"line":target,"character":10}},"text":" "})
        } else {
            json!({"range":{"start":{"line":target,"character":10},"end":{"line":target,"character":11}},"text":""})
        };
        let start = Instant::now();
        send(
            json!({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":uri,"version":version},"contentChanges":[change]}}),
        );
        wait_version(version);
        samples.push(start.elapsed());
    }
    send(json!({"jsonrpc":"2.0","id":2,"method":"shutdown","params":null}));
    send(json!({"jsonrpc":"2.0","method":"exit","params":null}));
    // Close its input too; do not wait for ever (the bench answers none of
    // the server's requests, such as `client/registerCapability`).
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(5);
    while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    println!(
        "csa-lsp latency: {lines} lines, {} KB, {} functions, {diagnostics} diagnostics, {edits} keystrokes, each waited for",
        text.len() / 1024,
        body_lines.len()
    );
    println!(
        "  open to first diagnostics: {:8.2} ms",
        open.as_secs_f64() * 1000.0
    );
    report("keystroke to diagnostics:", &mut samples);
    in_process(&text, target, edits);
}
