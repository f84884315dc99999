//! Throughput and memory benchmark (PRODUCT.md "Targets").
//!
//! `cargo bench -p csa-analyzer --bench throughput [-- MB]` generates a
//! deterministic corpus of annotated C and free-form Fortran (`MB`
//! megabytes, default 50) twice, at two densities of CSA markers (a
//! quarter of the C functions and Fortran subroutines, the headline, and
//! the dense stress case: half the C functions, every subroutine), and one
//! large real-world-shaped C file, then reports, per language and for the
//! large file:
//!
//! * tree-sitter parse alone (what the target compares against) and the
//!   full analysis (`analysis::analyze`), in MB/s, and their ratio, single
//!   threaded (thread CPU time, best of `REPS` per file for MB/s; the
//!   ratio from the times of the same file and repetition taken side by
//!   side, see `single`) and on all cores (rayon over files, best of
//!   `REPS` wall times);
//! * single-threaded, also the parse followed by one tree-cursor walk over
//!   every node (`walk/parse`): what any analysis that reads the whole tree
//!   pays at least, for comparison with `full/parse`;
//! * the peak heap during the analysis of the large file relative to its
//!   size (a counting global allocator: Rust allocations only), and the peak
//!   RSS growth of a fresh process analysing it (which also sees
//!   tree-sitter's C allocations), and this process's max RSS.
//!
//! Both sides parse with the same per-thread parser
//! (`csa_grammars::parse`), and every timed step starts from a settled
//! heap (`settle_heap`).
//!
//! Options: a number (corpus MB), `--reps N`, `--phases` (time the
//! pipeline's phases on the large file, via `analysis::lower`), `--write
//! DIR` (write the corpus and the large file to DIR for profiling the
//! command line, then stop), `--only parse|full` (run one side `--reps`
//! times on the large file, for `perf stat`/`perf record`; `parse-c`,
//! `full-c`, `parse-fortran` and `full-fortran` on a part of the corpus),
//! `--density P|dense` (the corpus `--only` and `--write` use, and the
//! headline rows' density: P% of the functions annotated; default 25).

use analyzer::analysis::{self, AnalysisOptions};
use csa_grammars::SourceKind;
use peak_alloc::PeakAlloc;
use rayon::prelude::*;
use std::time::{Duration, Instant};

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

const MB: f64 = 1_000_000.0;

mod corpus;

use corpus::{corpus, large_c, Density, File};

// ---------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------

/// tree-sitter's parse of `text` with the grammar of `kind`, with this
/// thread's parser, as the analysis parses.
fn parse_tree(kind: SourceKind, text: &str) -> Option<tree_sitter::Tree> {
    let grammar = if kind == SourceKind::C {
        csa_grammars::Grammar::C
    } else {
        csa_grammars::Grammar::Fortran
    };
    csa_grammars::parse(grammar, text)
}

fn parse(kind: SourceKind, text: &str) -> usize {
    parse_tree(kind, text)
        .map(|t| t.root_node().child_count())
        .unwrap_or(0)
}

/// [`parse`], then one cursor walk over every node of the tree reading its
/// kind, byte range and field: the least any analysis that looks at every
/// node of the tree pays on top of the parse.
fn parse_walk(kind: SourceKind, text: &str) -> usize {
    let Some(tree) = parse_tree(kind, text) else {
        return 0;
    };
    let mut c = tree.walk();
    let mut sum = 0usize;
    loop {
        let n = c.node();
        sum = sum
            .wrapping_add(usize::from(n.kind_id()))
            .wrapping_add(n.end_byte() - n.start_byte())
            .wrapping_add(c.field_id().map_or(0, |f| usize::from(f.get())));
        if c.goto_first_child() {
            continue;
        }
        while !c.goto_next_sibling() {
            if !c.goto_parent() {
                return sum;
            }
        }
    }
}

fn full(kind: SourceKind, text: &str) -> usize {
    let fa = analysis::analyze(kind, text, &AnalysisOptions::default());
    fa.functions().len() + fa.diagnostics().len()
}

fn timed<T>(f: impl FnOnce() -> T) -> Duration {
    let t = Instant::now();
    std::hint::black_box(f());
    t.elapsed()
}

/// The CPU time this thread has used.
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Makes glibc merge the small blocks freed so far, outside any timing.
/// glibc defers that work to the next allocation too large for its small
/// bins, so without this the first large allocation of a step (the
/// analysis's copy of the source) paid for the syntax tree the step
/// before it freed: 3-4% of a full analysis was the parse's garbage.
fn settle_heap() {
    std::hint::black_box(Vec::<u8>::with_capacity(100_000));
}

/// The CPU time `f` takes on this thread: unlike wall time, it does not
/// count the time other processes on a shared machine hold the core.
/// Starts from a settled heap ([`settle_heap`]).
fn cpu_timed<T>(f: impl FnOnce() -> T) -> Duration {
    settle_heap();
    let t = thread_cpu();
    std::hint::black_box(f());
    thread_cpu().saturating_sub(t)
}

#[derive(Default, Clone, Copy)]
struct Row {
    bytes: usize,
    /// best time of the parse (summed over files), for MB/s
    parse: Duration,
    /// best time of the full analysis, for MB/s
    full: Duration,
    /// full / parse, from times taken side by side (see [`single`])
    ratio: f64,
    /// (parse and one walk over every node ([`parse_walk`])) / parse;
    /// `None`: not measured
    walk_ratio: Option<f64>,
}

impl Row {
    fn print(&self, name: &str, mode: &str) {
        let mbs = |d: Duration| self.bytes as f64 / MB / d.as_secs_f64();
        let walk = self
            .walk_ratio
            .map_or(String::new(), |w| format!(" {w:>9.2}x"));
        println!(
            "{:<24} {:<7} {:>6.1} {:>11.2} {:>10.2} {:>9.2}x{walk}",
            name,
            mode,
            self.bytes as f64 / MB,
            mbs(self.parse),
            mbs(self.full),
            self.ratio
        );
    }

    /// Two rows as one: times summed, ratios weighted by parse time.
    fn and(&self, other: &Row) -> Row {
        let (a, b) = (self.parse.as_secs_f64(), other.parse.as_secs_f64());
        let mix = |x: f64, y: f64| (x * a + y * b) / (a + b);
        Row {
            bytes: self.bytes + other.bytes,
            parse: self.parse + other.parse,
            full: self.full + other.full,
            ratio: mix(self.ratio, other.ratio),
            walk_ratio: self
                .walk_ratio
                .zip(other.walk_ratio)
                .map(|(x, y)| mix(x, y)),
        }
    }
}

/// The median of `xs` (not empty).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Single-threaded: per file, parse, analyse, and parse and walk, back to
/// back, `reps` times (thread CPU time). MB/s come from the best time per
/// file and side. The ratios come from the three times of the same file
/// and repetition, taken within a second of each other: per file, the
/// median over the repetitions of full / parse (and walk / parse), then
/// the mean over the files weighted by parse time. This machine's speed
/// for memory-bound code varies by up to a third from one run to the next
/// and drifts over minutes (other tenants), which best-of times taken
/// minutes apart do not cancel.
fn single(files: &[&File], reps: usize) -> Row {
    // CSA_BENCH_TRACE=1: every measurement on stderr
    let trace = std::env::var_os("CSA_BENCH_TRACE").is_some();
    let mut times = vec![Vec::with_capacity(reps); files.len()];
    for _ in 0..reps {
        for (f, t) in files.iter().zip(times.iter_mut()) {
            let p = cpu_timed(|| parse(f.kind, &f.text));
            let a = cpu_timed(|| full(f.kind, &f.text));
            let w = cpu_timed(|| parse_walk(f.kind, &f.text));
            if trace {
                eprintln!(
                    "{:>9} bytes: parse {:>7.1} ms, full {:>7.1} ms, walk {:>7.1} ms",
                    f.text.len(),
                    p.as_secs_f64() * 1e3,
                    a.as_secs_f64() * 1e3,
                    w.as_secs_f64() * 1e3
                );
            }
            t.push([p, a, w]);
        }
    }
    let secs = |d: Duration| d.as_secs_f64().max(1e-9);
    let best = |t: &Vec<[Duration; 3]>, i: usize| t.iter().map(|x| x[i]).min().unwrap_or_default();
    let weight: Vec<f64> = times.iter().map(|t| secs(best(t, 0))).collect();
    let total: f64 = weight.iter().sum();
    let ratio = |i: usize| {
        times
            .iter()
            .zip(&weight)
            .map(|(t, w)| w * median(t.iter().map(|x| secs(x[i]) / secs(x[0])).collect()))
            .sum::<f64>()
            / total
    };
    Row {
        bytes: files.iter().map(|f| f.text.len()).sum(),
        parse: times.iter().map(|t| best(t, 0)).sum(),
        full: times.iter().map(|t| best(t, 1)).sum(),
        ratio: ratio(1),
        walk_ratio: Some(ratio(2)),
    }
}

/// The corpus rows of one density: C, Fortran and both, single-threaded,
/// and both on all cores.
fn report(c: &[&File], f90: &[&File], reps: usize, label: &str, threads: usize) {
    let rc = single(c, reps);
    rc.print(&format!("corpus C ({label})"), "1");
    let rf = single(f90, reps);
    rf.print(&format!("corpus Fortran ({label})"), "1");
    let both = rc.and(&rf);
    both.print(&format!("corpus all ({label})"), "1");
    let all: Vec<&File> = c.iter().chain(f90).copied().collect();
    parallel(&all, reps).print(&format!("corpus all ({label})"), &threads.to_string());
}

/// The C files and the Fortran files of `files`.
fn by_language(files: &[File]) -> (Vec<&File>, Vec<&File>) {
    files.iter().partition(|f| f.kind == SourceKind::C)
}

/// The headline corpus's density: a quarter of the C functions and of the
/// Fortran subroutines carry CSA builtins, as in the large file.
const TYPICAL: Density = Density::Percent(25);

/// All cores: rayon over files, best wall time of `reps`, alternating.
fn parallel(files: &[&File], reps: usize) -> Row {
    let mut row = Row {
        bytes: files.iter().map(|f| f.text.len()).sum(),
        parse: Duration::MAX,
        full: Duration::MAX,
        ratio: 0.0,
        walk_ratio: None,
    };
    for _ in 0..reps {
        row.parse = row.parse.min(timed(|| {
            files
                .par_iter()
                .map(|f| parse(f.kind, &f.text))
                .sum::<usize>()
        }));
        row.full = row.full.min(timed(|| {
            files
                .par_iter()
                .map(|f| full(f.kind, &f.text))
                .sum::<usize>()
        }));
    }
    row.ratio = row.full.as_secs_f64() / row.parse.as_secs_f64();
    row
}

/// A field (in kB) of /proc/self/status, in bytes.
fn proc_status(field: &str) -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Child mode: analyse the large file in a fresh process and print the
/// growth of the peak RSS (which includes tree-sitter's C heap).
fn memory_child(parse_only: bool) {
    let f = large_c();
    // Reset the peak RSS (Linux >= 4.0) to the current RSS.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = proc_status("VmRSS:").unwrap_or(0);
    let n = if parse_only {
        parse(f.kind, &f.text)
    } else {
        full(f.kind, &f.text)
    };
    let hwm = proc_status("VmHWM:").unwrap_or(0);
    println!("{} {} {}", f.text.len(), hwm.saturating_sub(before), n);
}

/// Times the phases of the pipeline on one file (a profile by hand).
fn phases(f: &File, reps: usize) {
    let opts = AnalysisOptions::default();
    let mut best = [Duration::MAX; 5];
    // preprocess, parse and the C front end's file scan and top-level
    // walk, with no function lowered
    let scan_only = || {
        let pre = csa_grammars::preproc::preprocess(&f.text, &opts.defines, false);
        parse_tree(SourceKind::C, &pre.text).map(|t| {
            analyzer::frontend::c::lower_tree(
                &pre.text,
                &t,
                Some(analyzer::source::Span::new(0, 0)),
                &[],
                &Default::default(),
            )
        })
    };
    for _ in 0..reps {
        if f.kind == SourceKind::C {
            best[4] = best[4].min(cpu_timed(scan_only));
        }
        best[0] = best[0].min(cpu_timed(|| parse(f.kind, &f.text)));
        best[1] = best[1].min(cpu_timed(|| {
            csa_grammars::preproc::preprocess(&f.text, &opts.defines, false)
        }));
        best[2] = best[2].min(cpu_timed(|| analysis::lower(f.kind, &f.text, &opts)));
        best[3] = best[3].min(cpu_timed(|| full(f.kind, &f.text)));
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let held = |f: &dyn Fn() -> Box<dyn std::any::Any>| {
        let base = HEAP.current_usage();
        HEAP.reset_peak_usage();
        let x = f();
        let r = (
            HEAP.peak_usage().saturating_sub(base),
            HEAP.current_usage().saturating_sub(base),
        );
        drop(x);
        r
    };
    let text = f.text.clone();
    let kind = f.kind;
    let (lp, lk) = held(&|| Box::new(analysis::lower(kind, &text, &AnalysisOptions::default())));
    let (ap, ak) = held(&|| Box::new(analysis::analyze(kind, &text, &AnalysisOptions::default())));
    let x = |b: usize| b as f64 / text.len() as f64;
    println!(
        "\nheap / source size: lower peak {:.1}x kept {:.1}x; analyze peak {:.1}x kept {:.1}x",
        x(lp),
        x(lk),
        x(ap),
        x(ak)
    );
    println!("\nphases on the large C file (best of {reps}, ms):");
    println!("  tree-sitter parse          {:>9.1}", ms(best[0]));
    println!("  preprocessor blanking      {:>9.1}", ms(best[1]));
    if f.kind == SourceKind::C {
        println!("  preproc+parse+file scan    {:>9.1}", ms(best[4]));
    }
    println!("  lower (preproc+parse+IR)   {:>9.1}", ms(best[2]));
    println!("  full analysis              {:>9.1}", ms(best[3]));
    println!(
        "  after lowering             {:>9.1}",
        ms(best[3].saturating_sub(best[2]))
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--memory-child") {
        memory_child(args.iter().any(|a| a == "--parse-only"));
        return;
    }
    let mut corpus_mb = 50usize;
    let mut reps = 3usize;
    let mut want_phases = false;
    let mut write_dir = None;
    let mut only: Option<String> = None;
    let mut density = TYPICAL;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--reps" => reps = it.next().and_then(|v| v.parse().ok()).unwrap_or(reps),
            "--phases" => want_phases = true,
            "--write" => write_dir = it.next().cloned(),
            "--only" => only = it.next().cloned(),
            "--density" => {
                density = match it.next().map(String::as_str) {
                    Some("dense") => Density::Dense,
                    Some(p) => p
                        .parse()
                        .map_or(TYPICAL, |p: u64| Density::Percent(p.min(100))),
                    None => TYPICAL,
                }
            }
            _ => {
                if let Ok(n) = a.parse() {
                    corpus_mb = n;
                }
            }
        }
    }
    let reps = reps.max(1);

    let t = Instant::now();
    let files = corpus(corpus_mb * 1_000_000, density);
    let large = large_c();
    let (c, f90) = by_language(&files);
    let all: Vec<&File> = files.iter().collect();
    let bytes = |fs: &[&File]| fs.iter().map(|f| f.text.len()).sum::<usize>() as f64 / MB;
    println!(
        "corpus: {} C files ({:.1} MB), {} Fortran files ({:.1} MB); large C file {:.2} MB, \
         {} functions; generated in {:.1} s",
        c.len(),
        bytes(&c),
        f90.len(),
        bytes(&f90),
        large.text.len() as f64 / MB,
        large.text.matches("\nvoid kernel_").count() + large.text.matches("\nstatic void").count(),
        t.elapsed().as_secs_f64()
    );
    let threads = rayon::current_num_threads();
    println!("threads: {threads} (rayon), best of {reps}\n");

    if let Some(dir) = write_dir {
        // For profiling the command line; `cargo bench` runs in `analyzer/`,
        // so `--write ../target/bench-corpus`.
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(format!("{dir}/large.c"), &large.text);
        for (i, f) in files.iter().enumerate() {
            let ext = if f.kind == SourceKind::C { "c" } else { "f90" };
            let _ = std::fs::write(format!("{dir}/file{i:03}.{ext}"), &f.text);
        }
        println!("written to {dir}");
        return;
    }
    if let Some(which) = only {
        // For `perf stat` / `perf record`: one side only, on the large file
        // (`parse`, `full`) or on the C or Fortran corpus (`parse-c`,
        // `full-c`, `parse-fortran`, `full-fortran`).
        let targets: Vec<&File> = if which.ends_with("-fortran") {
            f90.clone()
        } else if which.ends_with("-c") {
            c.clone()
        } else {
            vec![&large]
        };
        let n: usize = (0..reps)
            .flat_map(|_| targets.iter())
            .map(|f| {
                if which.starts_with("parse") {
                    parse(f.kind, &f.text)
                } else {
                    full(f.kind, &f.text)
                }
            })
            .sum();
        println!("{which} x{reps}: {n}");
        return;
    }
    if want_phases {
        phases(&large, reps);
        return;
    }

    println!(
        "{:<24} {:<7} {:>6} {:>11} {:>10} {:>10} {:>10}",
        "input", "threads", "MB", "parse MB/s", "full MB/s", "full/parse", "walk/parse"
    );
    // One file: ten times the repetitions. The same parse of it measured
    // 534-902 ms in 15 runs in a row here; the corpus rows average that
    // out over their many files.
    single(&[&large], reps * 10).print("large C file (25% CSA)", "1");
    report(&c, &f90, reps, &density.label(), threads);
    // The stress case: the same shapes with markers in half the C functions
    // and every Fortran subroutine (unless the headline rows were that).
    drop((c, f90, all));
    let dense = if matches!(density, Density::Dense) {
        Vec::new()
    } else {
        corpus(corpus_mb * 1_000_000, Density::Dense)
    };
    if !dense.is_empty() {
        let (c, f90) = by_language(&dense);
        report(&c, &f90, reps, &Density::Dense.label(), threads);
    }
    let all: Vec<&File> = files.iter().chain(&dense).collect();

    // Peak heap while analysing the large file (Rust allocations).
    let base = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let fa = analysis::analyze(large.kind, &large.text, &AnalysisOptions::default());
    let peak = HEAP.peak_usage().saturating_sub(base);
    let kept = HEAP.current_usage().saturating_sub(base);
    drop(fa);
    let size = large.text.len() as f64;
    println!(
        "\nlarge C file: peak heap during analysis {:.1} MB = {:.1}x source (target < 20x); \
         result kept {:.1} MB = {:.1}x",
        peak as f64 / MB,
        peak as f64 / size,
        kept as f64 / MB,
        kept as f64 / size
    );
    // (source size, peak RSS growth) of a fresh process
    let child = |parse_only: bool| -> Option<(f64, f64)> {
        let mut cmd = std::process::Command::new(std::env::current_exe().ok()?);
        cmd.arg("--memory-child");
        if parse_only {
            cmd.arg("--parse-only");
        }
        let out = cmd.output().ok()?;
        let v: Vec<f64> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        (v.len() >= 2 && v[0] > 0.0).then(|| (v[0], v[1]))
    };
    if let (Some((size, full_rss)), Some((_, parse_rss))) = (child(false), child(true)) {
        println!(
            "large C file, fresh process: peak RSS growth {:.1} MB = {:.1}x source \
             (includes tree-sitter's C heap); tree-sitter parse alone {:.1} MB = {:.1}x",
            full_rss / MB,
            full_rss / size,
            parse_rss / MB,
            parse_rss / size
        );
    }
    if let Some(hwm) = proc_status("VmHWM:") {
        println!(
            "this process (corpus of {:.0} MB held in memory, {threads} threads): max RSS {:.0} MB",
            bytes(&all),
            hwm as f64 / MB
        );
    }
}
