//! Editor latency: keystrokes in a 20,000-line annotated C file, through
//! the real `csa-lsp` binary over stdio. Prints p50, p90, p99 and max of
//! two figures: keystroke to published diagnostics for keystrokes that
//! change them (Enter and Backspace at the start of a line in the middle:
//! every later diagnostic moves), and keystroke to analysis for keystrokes
//! that change none (nothing is published; a hover sent right after the
//! change is answered from that version's analysis).
//!
//! Then the same keystrokes in process: `Incremental::update` alone (the
//! analysis without the protocol).
//!
//! `cargo bench -p csa-lsp --bench latency [-- EDITS]` (default 300);
//! `-- EDITS --in-process` measures only the in-process part (for `perf`);
//! `--all-unrestricted` drops `restrict` from every kernel (1,600
//! findings); `--stress` also reads every bound through a pointer, in a
//! longer file (3,300 findings, the stress file of issue 18);
//! `--small-functions`: 2,500 eight-line functions in 20,000 lines (the
//! realistic shape issue 18 names; 78 findings);
//! `--rss [N]` also prints the server's RSS after 100 and after N
//! keystrokes (default 10,000).
//! `CSA_LSP_BIN=path` runs another build of the server (to compare two on
//! the same machine state, alternately).

#[path = "../tests/support/mod.rs"]
mod support;

use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};
use support::{frame, read_body};

/// A realistic annotated file: functions with marked loop nests,
/// reductions, stencils, guards and comments; `lines` lines in all. Like a
/// codebase in use, most markers are fine and a few are not: every 20th
/// kernel takes its arrays without `restrict` (two CSA502, may-alias,
/// with related locations), and every other one of those reads its bound
/// through a pointer the loop may write (CSA101). With `all_unrestricted` no kernel has `restrict` (1,600
/// CSA502: the cost of publishing many diagnostics on every keystroke).
fn generate(lines: usize, all_unrestricted: bool, all_pointer_bounds: bool) -> (String, Vec<u32>) {
    let mut out = String::from("#include <math.h>\n#define N 1024\nint table[N];\n\n");
    let mut body_lines = Vec::new();
    let mut k = 0;
    while out.lines().count() < lines {
        let bound = if all_pointer_bounds || k % 40 == 39 {
            "*np"
        } else {
            "n"
        };
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

/// The shape of a realistic file: 2,500 short functions in 20,000
/// lines (8 lines each), each with a marked loop; every 32nd takes its
/// arrays without `restrict` (a CSA502 each).
fn generate_small(lines: usize) -> (String, Vec<u32>) {
    let mut out = String::from("#define N 1024\n\n");
    let mut body_lines = Vec::new();
    let mut k = 0;
    let mut count = 2;
    while count + 8 <= lines {
        let restrict = if k % 32 == 31 { "" } else { "restrict " };
        body_lines.push(count as u32 + 4);
        out.push_str(&format!(
            "double f_{k}(double *{restrict}a, const double *{restrict}b, int n) {{\n\
             #ifdef __CSA__\n\
             \x20 __builtin_csa_parallel_loop();\n\
             #endif\n\
             \x20 for (int i = 1; i < n; i++) a[i] = 0.5 * a[i] + b[i - 1] * {k}.0;\n\
             \x20 return a[0];\n\
             }}\n\n"
        ));
        count += 8;
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
    use analyzer::AnalysisOptions;
    use analyzer::Incremental;
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
        assert_eq!(fa.diagnostics().len(), first.diagnostics().len());
    }
    // Enter at the start of the target line, then Backspace: every later
    // result moves.
    let line_start: usize = text
        .split_inclusive('\n')
        .take(target as usize)
        .map(str::len)
        .sum();
    let entered = format!("{}\n{}", &text[..line_start], &text[line_start..]);
    let texts = [entered, text.to_string()];
    let mut moving = Vec::with_capacity(edits);
    for e in 0..edits {
        let t = Instant::now();
        let fa = inc.update(&texts[e % 2]);
        moving.push(t.elapsed());
        assert_eq!(fa.diagnostics().len(), first.diagnostics().len());
    }
    println!("in process (Incremental::update, {edits} keystrokes):");
    println!(
        "  open:                      {:8.2} ms",
        open.as_secs_f64() * 1000.0
    );
    report("keystroke:                ", &mut samples);
    report("Enter/Backspace:          ", &mut moving);
}

/// What the bench reads of a message: its id, method, version, and the
/// number of diagnostics. The rest is checked to be JSON but not built
/// (`IgnoredAny`), as an editor that hands the diagnostics to its UI costs
/// no more than reading them: the figures are the server's, not those of a
/// client building a tree of 1.5 MB of JSON.
fn light(body: &[u8]) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Params {
        version: Option<i64>,
        diagnostics: Option<Vec<serde::de::IgnoredAny>>,
    }
    #[derive(serde::Deserialize)]
    struct Message {
        id: Option<Value>,
        method: Option<String>,
        params: Option<Params>,
        #[serde(rename = "result")]
        _result: Option<serde::de::IgnoredAny>,
    }
    let m: Message = serde_json::from_slice(body).ok()?;
    let params = m
        .params
        .map(|p| json!({"version": p.version, "diagnostic_count": p.diagnostics.map(|d| d.len())}));
    Some(json!({"id": m.id, "method": m.method, "params": params}))
}

/// Which file the bench types into.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Most markers fine, a few not (80 findings).
    Realistic,
    /// No kernel has `restrict` (1,600 findings).
    AllUnrestricted,
    /// No `restrict` and every bound through a pointer: as many findings
    /// as the 3,334 of the stress file the issue measured.
    Stress,
    /// 2,500 short functions, a few without `restrict`.
    SmallFunctions,
}

/// The server's resident set size, from `/proc` (Linux), in MB.
fn rss_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let edits: usize = args
        .iter()
        .enumerate()
        .skip(1)
        .find(|(i, a)| args[i - 1] != "--rss" && a.parse::<usize>().is_ok())
        .and_then(|(_, a)| a.parse().ok())
        .unwrap_or(300);
    let mode = if std::env::args().any(|a| a == "--stress") {
        Mode::Stress
    } else if std::env::args().any(|a| a == "--small-functions") {
        Mode::SmallFunctions
    } else if std::env::args().any(|a| a == "--all-unrestricted") {
        Mode::AllUnrestricted
    } else {
        Mode::Realistic
    };
    let (text, body_lines) = match mode {
        Mode::Realistic => generate(20_000, false, false),
        Mode::AllUnrestricted => generate(20_000, true, false),
        Mode::Stress => generate(41_700, true, true),
        Mode::SmallFunctions => generate_small(20_000),
    };
    let lines = text.lines().count();
    let target = body_lines[body_lines.len() / 2];
    if std::env::args().any(|a| a == "--in-process") {
        in_process(&text, target, edits);
        return;
    }
    let rss_edits: Option<usize> = std::env::args().position(|a| a == "--rss").map(|i| {
        std::env::args()
            .nth(i + 1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(10_000)
    });
    let server =
        std::env::var_os("CSA_LSP_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_csa-lsp").into());
    let mut child = Command::new(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("csa-lsp starts");
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel::<Value>();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        while let Some(v) = read_body(&mut r).and_then(|b| light(&b)) {
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    let mut send = |v: Value| {
        stdin.write_all(&frame(&v)).unwrap();
        stdin.flush().unwrap();
    };
    let recv = || {
        rx.recv_timeout(Duration::from_secs(120))
            .expect("the server answers")
    };
    let uri = "file:///tmp/csa-latency/big.c";
    send(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}),
    );
    // Like an editor, wait for the answer before going on (tower-lsp-server
    // may not notice messages that arrive while it is initialising).
    while recv()["id"] != 1 {}
    send(json!({"jsonrpc":"2.0","method":"initialized","params":{}}));
    let t = Instant::now();
    send(
        json!({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":uri,"languageId":"c","version":1,"text":text}}}),
    );
    let diagnostics = loop {
        let v = recv();
        if v["method"] == "textDocument/publishDiagnostics" && v["params"]["version"] == 1 {
            break v["params"]["diagnostic_count"].as_u64().unwrap_or(0);
        }
    };
    let open = t.elapsed();
    let mut version = 1;
    let mut next_id = 100;
    // Keystrokes that change the diagnostics: Enter at the start of a line
    // in the middle of the file, then Backspace (every later diagnostic
    // moves: the whole set is published again).
    let mut moving = Vec::with_capacity(edits);
    let mut rss_100 = None;
    for e in 0..edits {
        version += 1;
        let change = if e % 2 == 0 {
            json!({"range":{"start":{"line":target,"character":0},"end":{"line":target,"character":0}},"text":"\n"})
        } else {
            json!({"range":{"start":{"line":target,"character":0},"end":{"line":target + 1,"character":0}},"text":""})
        };
        let start = Instant::now();
        send(
            json!({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":uri,"version":version},"contentChanges":[change]}}),
        );
        loop {
            let v = recv();
            if v["method"] == "textDocument/publishDiagnostics" && v["params"]["version"] == version
            {
                break;
            }
        }
        moving.push(start.elapsed());
        if e + 1 == 100 {
            rss_100 = rss_mb(pid);
        }
    }
    // Keystrokes inside a line that change no diagnostic (nothing is
    // published): the time until a request is answered from that version's
    // analysis (a hover waits for it). They type in the comment above the
    // function, which no diagnostic points into.
    let comment = target - 8;
    let mut typing = Vec::with_capacity(edits);
    for e in 0..edits {
        version += 1;
        next_id += 1;
        let change = if e % 2 == 0 {
            json!({"range":{"start":{"line":comment,"character":10},"end":{"line":comment,"character":10}},"text":" "})
        } else {
            json!({"range":{"start":{"line":comment,"character":10},"end":{"line":comment,"character":11}},"text":""})
        };
        let start = Instant::now();
        send(
            json!({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":uri,"version":version},"contentChanges":[change]}}),
        );
        send(
            json!({"jsonrpc":"2.0","id":next_id,"method":"textDocument/hover","params":{"textDocument":{"uri":uri},"position":{"line":comment,"character":4}}}),
        );
        loop {
            let v = recv();
            assert!(
                v["method"] != "textDocument/publishDiagnostics",
                "an unchanged set was published again"
            );
            if v["id"] == next_id {
                break;
            }
        }
        typing.push(start.elapsed());
    }
    let rss = rss_edits.map(|total| {
        // Memory after 100 keystrokes (taken in the first run above, which
        // needs at least 100) and after `total` (the runs above count).
        let mut after = vec![(100, rss_100)];
        let mut done = 2 * edits;
        for checkpoint in [total] {
            while done < checkpoint {
                version += 1;
                done += 1;
                let change = if done.is_multiple_of(2) {
                    json!({"range":{"start":{"line":target,"character":0},"end":{"line":target,"character":0}},"text":"\n"})
                } else {
                    json!({"range":{"start":{"line":target,"character":0},"end":{"line":target + 1,"character":0}},"text":""})
                };
                send(
                    json!({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":uri,"version":version},"contentChanges":[change]}}),
                );
                while !(recv()["params"]["version"] == version) {}
            }
            after.push((done, rss_mb(pid)));
        }
        after
    });
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
        "csa-lsp latency: {lines} lines, {} KB, {} functions, {diagnostics} diagnostics, {edits} keystrokes of each kind, each waited for",
        text.len() / 1024,
        body_lines.len()
    );
    println!(
        "  open to first diagnostics: {:8.2} ms",
        open.as_secs_f64() * 1000.0
    );
    report("keystroke to diagnostics: ", &mut moving);
    report("keystroke to analysis:    ", &mut typing);
    if let Some(points) = rss {
        for (n, mb) in points {
            match mb {
                Some(mb) => println!("  RSS after {n:>6} keystrokes: {mb:8.1} MB"),
                None => println!("  RSS after {n:>6} keystrokes: (no /proc)"),
            }
        }
    }
    in_process(&text, target, edits);
}
