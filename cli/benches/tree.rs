//! Whole-process benchmark on real source trees (issue 17, point 4).
//!
//! `cargo bench -p csa-lint --bench tree -- PATH... [--reps N]`
//! takes checkouts (or directories in them, such as Reference-LAPACK's
//! `SRC`), finds the files `csa-lint` would lint (the same walk and
//! language detection) and prints, in one run on this machine:
//!
//! * **parse-only**: reading every file and parsing it with tree-sitter,
//!   one thread, in this process: tree-sitter's own parse of the whole
//!   text with a parser kept per grammar (fixed-form Fortran is given its
//!   normalised text: the normalisation is not counted here);
//! * **analysis in-process**: reading and analysing every file with
//!   `analysis::analyze`, one thread, in this process (the system
//!   allocator, as the parse-only row);
//! * **csa-lint -j1** and **-jN** (N = the cores): the wall time of the
//!   release binary linting the paths with `--no-cache`, and its ratio to
//!   parse-only (the target: <= 1.3x on one thread);
//! * **warm re-run**: the same with a result cache filled by a first run
//!   (the target: <= 20% of the cold -j1 time);
//! * **peak RSS** of the process on the tree and on the tree doubled (a
//!   temporary directory holding two copies of every file), read with GNU
//!   `time` (`apt-get install time`; `n/a` without it);
//! * the number of CSA001 (syntax error) diagnostics.
//!
//! Each timed figure is the best of `--reps` runs (default 3). `--phases`
//! prints instead how the in-process analysis splits between the front
//! end and the rest; `--parse-only` the parse-only figure alone; `--worst
//! N` the N files whose analysis costs most beyond their parse (where a
//! cost that grows faster than the file shows first).
//! `docs/performance.md` reports these figures for Reference-LAPACK, NPB
//! and DataRaceBench.

use csa_grammars::SourceKind;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CSA_LINT: &str = env!("CARGO_BIN_EXE_csa-lint");

struct Args {
    paths: Vec<PathBuf>,
    reps: usize,
    /// `--parse-only`: print the parse-only figure alone.
    parse_only: bool,
    /// `--phases`: print where the in-process analysis spends its time.
    phases: bool,
    /// `--worst N`: print the N files costing most beyond their parse.
    worst: Option<usize>,
}

fn args() -> Args {
    let mut paths = Vec::new();
    let mut reps = 3;
    let mut parse_only = false;
    let mut phases = false;
    let mut worst = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--reps" => reps = it.next().and_then(|n| n.parse().ok()).unwrap_or(3),
            // cargo bench passes --bench
            "--bench" => {}
            "--parse-only" => parse_only = true,
            "--phases" => phases = true,
            "--worst" => worst = it.next().and_then(|n| n.parse().ok()),
            _ => paths.push(PathBuf::from(a)),
        }
    }
    Args {
        paths,
        reps: reps.max(1),
        parse_only,
        phases,
        worst,
    }
}

/// The files csa-lint lints under `root`, sorted, with their kinds.
fn files(root: &Path) -> Vec<(PathBuf, SourceKind)> {
    let mut out: Vec<(PathBuf, SourceKind)> = ignore::WalkBuilder::new(root)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            let kind = csa_grammars::detect(e.path())?;
            Some((e.path().to_path_buf(), kind))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Reads and analyses every file once, on this thread (what `csa-lint
/// -j1` does per file, in this process: its allocator is the system's).
fn analyze_all(files: &[(PathBuf, SourceKind)]) -> (Duration, usize) {
    let opts = analyzer::AnalysisOptions::default();
    let t = Instant::now();
    let mut n = 0;
    for (path, kind) in files {
        let Ok(raw) = std::fs::read(path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&raw).into_owned();
        let kind = csa_grammars::detect_with_content(path, &text).unwrap_or(*kind);
        n += analyzer::analyze(kind, &text, &opts).diagnostics().len();
    }
    (t.elapsed(), n)
}

/// What tree-sitter is given for a file of `kind` with `text`: the
/// grammar, and the text (fixed form: normalised, as the analysis gives
/// it).
fn parser_input(text: &str, kind: SourceKind) -> (csa_grammars::Grammar, Cow<'_, str>) {
    let input = if kind == SourceKind::FortranFixed {
        Cow::Owned(csa_grammars::fixed_form::normalize(text).text)
    } else {
        Cow::Borrowed(text)
    };
    let grammar = if kind == SourceKind::C {
        csa_grammars::Grammar::C
    } else {
        csa_grammars::Grammar::Fortran
    };
    (grammar, input)
}

thread_local! {
    /// A parser per grammar, as a program using tree-sitter keeps one.
    static PLAIN: std::cell::RefCell<Vec<tree_sitter::Parser>> = std::cell::RefCell::new(
        [csa_grammars::Grammar::C, csa_grammars::Grammar::Fortran]
            .iter()
            .filter_map(|g| {
                let mut p = tree_sitter::Parser::new();
                p.set_language(&g.language()).ok()?;
                Some(p)
            })
            .collect(),
    );
}

/// tree-sitter's own parse of the whole `text`: what tree-sitter alone
/// does with a file (not `csa_grammars::parse`, which leaves comment
/// lines out, nor the analysis's compacted text).
fn plain_parse(grammar: csa_grammars::Grammar, text: &str) -> Option<tree_sitter::Tree> {
    PLAIN.with(|p| {
        let mut parsers = p.borrow_mut();
        let i = usize::from(grammar == csa_grammars::Grammar::Fortran);
        parsers.get_mut(i)?.parse(text, None)
    })
}

/// Reads and parses every file once, on this thread; the bytes read.
fn parse_all(files: &[(PathBuf, SourceKind)]) -> (Duration, usize) {
    let mut bytes = 0;
    let mut total = Duration::ZERO;
    for (path, kind) in files {
        let t = Instant::now();
        let Ok(raw) = std::fs::read(path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&raw).into_owned();
        let kind = csa_grammars::detect_with_content(path, &text).unwrap_or(*kind);
        let read = t.elapsed();
        // fixed form: the grammar's input, made outside the timing
        let (grammar, input) = parser_input(&text, kind);
        let t = Instant::now();
        std::hint::black_box(plain_parse(grammar, &input));
        total += read + t.elapsed();
        bytes += raw.len();
    }
    (total, bytes)
}

/// The in-process analysis of every file split in phases (one thread,
/// best of `reps` each): the front end (`analysis::lower`: preprocessor,
/// parse, IR) and the whole (`analysis::analyze`); what is not parse is
/// what csa-lint adds to it.
fn phases(files: &[(PathBuf, SourceKind)], reps: usize, parse: Duration) {
    let opts = analyzer::AnalysisOptions::default();
    let texts: Vec<(String, SourceKind)> = files
        .iter()
        .filter_map(|(path, kind)| {
            let raw = std::fs::read(path).ok()?;
            let text = String::from_utf8_lossy(&raw).into_owned();
            let kind = csa_grammars::detect_with_content(path, &text).unwrap_or(*kind);
            Some((text, kind))
        })
        .collect();
    let time = |f: &dyn Fn(&str, SourceKind)| {
        best(reps, || {
            let t = Instant::now();
            for (text, kind) in &texts {
                f(text, *kind);
            }
            (t.elapsed(), ())
        })
        .0
    };
    let lower = time(&|text, kind| {
        std::hint::black_box(analyzer::analysis::lower(kind, text, &opts));
    });
    let full = time(&|text, kind| {
        std::hint::black_box(analyzer::analyze(kind, text, &opts));
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("phases in-process (one thread, best of {reps}, ms):");
    println!("  read + tree-sitter parse   {:>8.1}", ms(parse));
    println!(
        "  front end (lower)          {:>8.1}  (+{:.1} over the parse)",
        ms(lower),
        ms(lower.saturating_sub(parse))
    );
    println!(
        "  whole analysis             {:>8.1}  (+{:.1} over the front end)",
        ms(full),
        ms(full.saturating_sub(lower))
    );
}

/// The `n` files whose in-process analysis costs most beyond their
/// tree-sitter parse (best of `reps` each, one thread), with both times.
fn worst(files: &[(PathBuf, SourceKind)], reps: usize, n: usize) {
    let opts = analyzer::AnalysisOptions::default();
    let mut rows: Vec<(Duration, Duration, usize, &Path)> = Vec::new();
    for (path, kind) in files {
        let Ok(raw) = std::fs::read(path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&raw).into_owned();
        let kind = csa_grammars::detect_with_content(path, &text).unwrap_or(*kind);
        let (grammar, input) = parser_input(&text, kind);
        let (parse, _) = best(reps, || {
            let t = Instant::now();
            std::hint::black_box(plain_parse(grammar, &input));
            (t.elapsed(), ())
        });
        let (analysis, _) = best(reps, || {
            let t = Instant::now();
            std::hint::black_box(analyzer::analyze(kind, &text, &opts));
            (t.elapsed(), ())
        });
        rows.push((analysis.saturating_sub(parse), parse, raw.len(), path));
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.0));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("files costing most beyond their parse (one thread, best of {reps}, ms):");
    println!(
        "{:>9} {:>9} {:>6} {:>8}  file",
        "beyond", "parse", "ratio", "bytes"
    );
    for (beyond, parse, bytes, path) in rows.into_iter().take(n) {
        println!(
            "{:>9.2} {:>9.2} {:>5.1}x {:>8}  {}",
            ms(beyond),
            ms(parse),
            (ms(beyond) + ms(parse)) / ms(parse).max(1e-3),
            bytes,
            path.display()
        );
    }
}

fn best<T>(reps: usize, mut f: impl FnMut() -> (Duration, T)) -> (Duration, T) {
    let mut best = f();
    for _ in 1..reps {
        let next = f();
        if next.0 < best.0 {
            best = next;
        }
    }
    best
}

/// Runs csa-lint on `paths` with `extra` flags: wall time and, with GNU
/// time, the peak RSS in KiB.
fn run_lint(paths: &[PathBuf], extra: &[&str]) -> (Duration, Option<u64>) {
    let gnu_time = Path::new("/usr/bin/time").exists();
    let mut cmd = if gnu_time {
        let mut c = Command::new("/usr/bin/time");
        c.args(["-f", "%M", CSA_LINT]);
        c
    } else {
        Command::new(CSA_LINT)
    };
    cmd.args(["--quiet", "--exit-zero", "--format", "concise"])
        .args(extra)
        .args(paths)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let t = Instant::now();
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("cannot run {CSA_LINT}: {e}");
            std::process::exit(2);
        }
    };
    let wall = t.elapsed();
    let rss = if gnu_time {
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
    } else {
        None
    };
    (wall, rss)
}

/// How many CSA001 diagnostics csa-lint reports on `paths`.
fn syntax_errors(paths: &[PathBuf]) -> usize {
    let out = Command::new(CSA_LINT)
        .args([
            "--quiet",
            "--exit-zero",
            "--no-cache",
            "--format",
            "concise",
        ])
        .args(["--select", "CSA001"])
        .args(paths)
        .stderr(Stdio::null())
        .output();
    out.map(|o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.contains("[CSA001]"))
            .count()
    })
    .unwrap_or(0)
}

/// Copies every lintable file under `paths` twice into a new temporary
/// directory.
fn doubled(paths: &[PathBuf]) -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    for copy in ["a", "b"] {
        for (i, root) in paths.iter().enumerate() {
            for (file, _) in files(root) {
                let rel = file.strip_prefix(root).unwrap_or(&file);
                let to = dir.path().join(copy).join(i.to_string()).join(rel);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::copy(&file, &to)?;
            }
        }
    }
    Ok(dir)
}

fn main() {
    let a = args();
    if a.paths.is_empty() {
        eprintln!("usage: cargo bench -p csa-lint --bench tree -- PATH... [--reps N]");
        std::process::exit(2);
    }
    let all: Vec<(PathBuf, SourceKind)> = a.paths.iter().flat_map(|p| files(p)).collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jn = format!("-j{cores}");
    // warm the page cache
    let _ = parse_all(&all);
    let (parse, bytes) = best(a.reps, || parse_all(&all));
    if a.parse_only {
        println!(
            "files {}, {:.1} MB, tree-sitter parse-only {:.2} s",
            all.len(),
            bytes as f64 / 1e6,
            parse.as_secs_f64()
        );
        return;
    }
    if a.phases {
        phases(&all, a.reps, parse);
        return;
    }
    if let Some(n) = a.worst {
        worst(&all, a.reps, n);
        return;
    }
    let (inproc, _) = best(a.reps, || analyze_all(&all));
    let (cold1, rss) = best(a.reps, || run_lint(&a.paths, &["--no-cache", "-j1"]));
    let (coldn, _) = best(a.reps, || run_lint(&a.paths, &["--no-cache", &jn]));
    let cache = tempfile::tempdir().ok();
    let warm = cache.as_ref().map(|dir| {
        let d = dir.path().to_string_lossy().into_owned();
        let _ = run_lint(&a.paths, &["--cache-dir", &d, "-j1"]);
        best(a.reps, || run_lint(&a.paths, &["--cache-dir", &d, "-j1"])).0
    });
    let rss2 = doubled(&a.paths)
        .ok()
        .and_then(|dir| run_lint(&[dir.path().to_path_buf()], &["--no-cache", "-j1"]).1);
    let errors = syntax_errors(&a.paths);

    let secs = |d: Duration| d.as_secs_f64();
    let names: Vec<String> = a.paths.iter().map(|p| p.display().to_string()).collect();
    println!("tree: {}", names.join(" "));
    println!(
        "files {}, {:.1} MB, cores {cores}, best of {}",
        all.len(),
        bytes as f64 / 1e6,
        a.reps
    );
    println!("{:<28} {:>8}  ratio", "", "seconds");
    println!(
        "{:<28} {:>8.2}  1.00x",
        "tree-sitter parse-only",
        secs(parse)
    );
    println!(
        "{:<28} {:>8.2}  {:.2}x  (in this process, system allocator)",
        "analysis in-process",
        secs(inproc),
        secs(inproc) / secs(parse)
    );
    println!(
        "{:<28} {:>8.2}  {:.2}x",
        "csa-lint -j1 (no cache)",
        secs(cold1),
        secs(cold1) / secs(parse)
    );
    println!(
        "{:<28} {:>8.2}  {:.2}x  (speed-up over -j1: {:.2})",
        format!("csa-lint {jn} (no cache)"),
        secs(coldn),
        secs(coldn) / secs(parse),
        secs(cold1) / secs(coldn)
    );
    match warm {
        Some(w) => println!(
            "{:<28} {:>8.2}  {:.0}% of the cold -j1 run",
            "csa-lint -j1 warm cache",
            secs(w),
            100.0 * secs(w) / secs(cold1)
        ),
        None => println!("warm re-run: no temporary directory"),
    }
    let kib = |k: Option<u64>| {
        k.map_or("n/a".to_string(), |k| {
            format!("{:.1} MB", k as f64 / 1024.0)
        })
    };
    println!(
        "peak RSS -j1: tree {}, tree doubled {}",
        kib(rss),
        kib(rss2)
    );
    println!("CSA001 (syntax errors): {errors}");
}
