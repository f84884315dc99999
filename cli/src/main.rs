//! `csa-lint`: the command-line front of the analyzer. It owns all I/O:
//! walking paths, reading files, printing diagnostics, exit codes.
//!
//! Exit codes: 0 no warning or error, 1 warnings or errors found, 2 usage or
//! I/O error.

mod cache;
mod fix;
mod includers;
mod render;

mod settings;

use analyzer::config::{Overrides, Selector};
use analyzer::diag::{Diagnostic, Severity};
use analyzer::source::SourceText;
use clap::{Parser, ValueEnum};
use csa_grammars::SourceKind;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// mimalloc for every allocation of the process, tree-sitter's C ones too
/// (its `override` feature replaces `malloc`): parsing allocates and frees
/// a node at a time, and glibc's allocator was 15% of a run over
/// Reference-LAPACK (docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Source snippets with labels and notes.
    Full,
    /// One line per diagnostic: `file:line:col: severity[CODE] message`.
    Concise,
    /// A JSON array (see README).
    Json,
    /// GitHub Actions workflow commands (annotations on the pull request).
    Github,
    /// SARIF 2.1.0 (code scanning).
    Sarif,
    /// GitLab Code Quality (a JSON array of CodeClimate issues).
    Gitlab,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DumpKind {
    /// The control-flow graph after LoopSimplify, with loops, markers and
    /// placed sections.
    Cfg,
    /// The memory-operation graph as Graphviz DOT, like the compiler's
    /// `-csa-view-pre-ordering-memop-cfg`, with the ordering edges kept and
    /// dropped by regions and sections.
    MemopGraph,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Lint C and Fortran code annotated with CSA loop builtins: say what the
/// CSA compiler does with each parallel_loop, spmd, pipeline_loop and
/// region/section builtin (and each OpenMP directive), find races in loops
/// asserted parallel, and rewrite the builtins into OpenMP or ivdep.
///
/// Exit status: 0 nothing to report, 1 warnings or errors found (or, with
/// --diff, files would change), 2 a file or the command line could not be
/// used.
#[derive(Parser, Debug)]
#[command(name = "csa-lint", version, max_term_width = 100)]
struct Cli {
    /// Files or directories to lint (directories are walked, .gitignore
    /// respected).
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,

    /// Output format (default: full on a terminal, concise otherwise).
    #[arg(long, value_enum)]
    format: Option<Format>,

    /// Colour for the full format.
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorChoice,

    /// Treat files as this language: c, fortran, fortran-fixed.
    #[arg(long, value_parser = parse_language)]
    language: Option<SourceKind>,

    /// Treat a preprocessor name as defined (repeatable).
    #[arg(long = "define", short = 'D', value_name = "NAME")]
    defines: Vec<String>,

    /// Search this directory for #included headers, as cpp's -I
    /// (repeatable; after the configuration's include-dirs).
    #[arg(long = "include-dir", short = 'I', value_name = "DIR")]
    include_dirs: Vec<PathBuf>,

    /// A function without side effects (repeatable).
    #[arg(long = "pure-function", value_name = "NAME")]
    pure_functions: Vec<String>,

    /// Do not report storage declared inside parallelized loops (CSA301),
    /// like the compiler's -csa-disable-loop-storage-check.
    #[arg(long)]
    disable_loop_storage_check: bool,

    /// Print a rule's documentation (`CSA101` or `could-not-parallelize`).
    #[arg(long, value_name = "CODE")]
    explain: Option<String>,

    /// List every rule.
    #[arg(long)]
    list_rules: bool,

    /// Dump an analysis artefact of one function: `--dump cfg FUNCTION FILE`,
    /// `--dump memop-graph FUNCTION FILE`.
    #[arg(long, value_enum, requires = "function")]
    dump: Option<DumpKind>,

    /// The function for `--dump`.
    #[arg(long = "function", value_name = "FUNCTION", hide = true)]
    function: Option<String>,

    /// Write the report to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,

    /// Exit with 0 even when diagnostics are found.
    #[arg(long)]
    exit_zero: bool,

    /// Use this configuration file for every file instead of the nearest
    /// `csa-lint.toml` / `.csa-lint.toml`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Read no configuration file: the defaults and the command line apply.
    #[arg(long, conflicts_with = "config")]
    no_config: bool,

    /// Report only these rules: codes, prefixes (CSA1), names or ALL,
    /// comma-separated (replaces the configuration's `select`).
    #[arg(long, value_name = "CODES", value_delimiter = ',', value_parser = parse_selector)]
    select: Option<Vec<Selector>>,

    /// Also report these rules (comma-separated; added after `--select`,
    /// before `--ignore`).
    #[arg(long, value_name = "CODES", value_delimiter = ',', value_parser = parse_selector)]
    extend_select: Vec<Selector>,

    /// Do not report these rules (comma-separated; after `--select`).
    #[arg(long, value_name = "CODES", value_delimiter = ',', value_parser = parse_selector)]
    ignore: Vec<Selector>,

    /// Walk directories without honouring .gitignore, .ignore and git's
    /// exclude files.
    #[arg(long)]
    no_ignore: bool,

    /// Files analysed in parallel (default: all cores). Output is the same
    /// for every value.
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,

    /// Analyse every file again: neither read nor write the result cache.
    #[arg(long)]
    no_cache: bool,

    /// Keep the result cache in this directory (default: the `cache-dir`
    /// setting, `CSA_LINT_CACHE_DIR`, or `.csa_lint_cache` in the
    /// directory of the configuration file, else the working directory).
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache_dir: Option<PathBuf>,

    /// Print diagnostics only: no summary line and no progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,

    /// Print how many diagnostics each rule produced instead of the
    /// diagnostics.
    #[arg(long)]
    statistics: bool,

    // --fix, --unsafe-fixes, --diff, --rewrite, --ivdep-style (fix.rs).
    #[command(flatten)]
    fix_args: fix::FixArgs,
}

fn parse_selector(s: &str) -> Result<Selector, String> {
    Selector::parse(s)
}

fn parse_language(s: &str) -> Result<SourceKind, String> {
    SourceKind::from_name(s).ok_or_else(|| {
        format!("unknown language `{s}`: use c, fortran (free form) or fortran-fixed")
    })
}

fn main() -> ExitCode {
    // `--dump cfg FUNCTION FILE`: accept the positional form by rewriting it
    // into `--dump cfg --function FUNCTION FILE`.
    let mut args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--dump") {
        if args.len() > i + 3 && !args[i + 2].starts_with('-') {
            args.insert(i + 2, "--function".to_string());
        }
    }
    let cli = Cli::parse_from(args);
    match run(cli) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("csa-lint: error: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    let mut stdout = std::io::stdout().lock();
    if let Some(code) = &cli.explain {
        let rule = analyzer::find_rule(code)
            .ok_or_else(|| format!("no rule `{code}`; `csa-lint --list-rules` lists them"))?;
        let _ = write!(stdout, "{}", rule.doc());
        return Ok(ExitCode::SUCCESS);
    }
    if cli.list_rules {
        let _ = writeln!(
            stdout,
            "{:<8} {:<32} {:<8} {:<8} summary",
            "code", "name", "severity", "fixable"
        );
        for r in analyzer::RULES {
            let _ = writeln!(
                stdout,
                "{:<8} {:<32} {:<8} {:<8} {}",
                r.code.to_string(),
                r.name,
                r.severity.as_str(),
                if r.fixable { "yes" } else { "no" },
                r.summary
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let overrides = Overrides {
        select: cli.select.clone(),
        extend_select: cli.extend_select.clone(),
        ignore: cli.ignore.clone(),
        defines: cli.defines.clone(),
        include_dirs: cli
            .include_dirs
            .iter()
            .map(|d| settings::absolute(d))
            .collect(),
        pure_functions: cli.pure_functions.clone(),
        disable_loop_storage_check: cli.disable_loop_storage_check,
        ivdep_style: None,
    };
    let mut resolver = if cli.no_config {
        settings::ConfigResolver::without_files(overrides)
    } else {
        settings::ConfigResolver::new(cli.config.as_deref(), overrides)?
    };

    if let Some(dump) = cli.dump {
        let function = cli.function.clone().unwrap_or_default();
        let [path] = cli.paths.as_slice() else {
            return Err("--dump takes one FUNCTION and one FILE".to_string());
        };
        let (kind, text) = read_source(path, cli.language)?;
        let mut opts = resolver.for_file(path)?.settings.options.clone();
        // the whole IR, also of functions with nothing for CSA
        opts.every_body = true;
        let fa = analyzer::analyze(kind, &text, &opts);
        let text = match dump {
            DumpKind::Cfg => fa.cfg_dump(&function),
            DumpKind::MemopGraph => fa.memop_graph(&function),
        };
        let Some(text) = text else {
            let names: Vec<&str> = fa.function_names().collect();
            return Err(format!(
                "{}: no function `{function}` (functions: {})",
                path.display(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ));
        };
        let _ = write!(stdout, "{text}");
        return Ok(ExitCode::SUCCESS);
    }

    let jobs = collect_files(&cli.paths, cli.language, !cli.no_ignore, &mut resolver)?;
    if let Some(name) = cli.fix_args.rewrite.as_deref() {
        fix::check_target(name)?;
    }
    let cache = open_cache(&cli, &mut resolver)?;
    let format = cli.format.unwrap_or_else(|| {
        if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            Format::Full
        } else {
            Format::Concise
        }
    });
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            cli.output.is_none()
                && std::io::IsTerminal::is_terminal(&std::io::stdout())
                && std::env::var_os("NO_COLOR").is_none()
        }
    };
    // Send: with one job, the worker thread writes the report itself
    let mut out: Box<dyn Write + Send> = match &cli.output {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path)
                .map_err(|e| format!("{}: cannot write the report: {e}", path.display()))?,
        )),
        None => {
            drop(stdout);
            Box::new(std::io::stdout())
        }
    };
    let diff_only = cli.fix_args.active() && cli.fix_args.diff;
    let mut report = Report {
        format: if cli.statistics || diff_only {
            None
        } else {
            Some(format)
        },
        frame: match (cli.statistics || diff_only, format) {
            (false, Format::Json | Format::Gitlab) => Some(render::json_frame()),
            (false, Format::Sarif) => Some(render::sarif_frame()),
            _ => None,
        },
        totals: render::Totals::default(),
        fixes: fix::Totals::default(),
        io_error: false,
        cache: cache::Updates::default(),
    };
    let progress = progress_bar(jobs.len(), cli.quiet);
    let header_files = HeaderFiles::default();
    let ctx = Context {
        cli: &cli,
        cache: cache.as_ref(),
        includers: includers::Includers::new(&jobs, &header_files),
        header_files: &header_files,
        format: report.format,
        color,
    };
    let threads = cli
        .jobs
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .min(jobs.len().max(1));
    // Workers take the files in order and send each one's finished report
    // (text, not the analysis) here; the reports are written in the files'
    // order as soon as every earlier one is, so the output is the same for
    // every --jobs and memory holds only the files in flight. With one
    // job, the worker writes each report itself as it finishes (no
    // hand-over to this thread: a wake-up per file).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let lint = |i: usize| -> Option<Outcome> {
        let job = jobs.get(i)?;
        // a panic outside the analysis (which catches its own) is this
        // file's internal error; the run goes on
        Some(
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lint_file(&ctx, job)))
                .unwrap_or_else(|_| Outcome {
                    messages: vec![format!(
                        "csa-lint: error: {}: internal error while linting this file; please report it with the file attached",
                        render::escape_controls(&job.display)
                    )],
                    io_error: true,
                    ..Outcome::default()
                }),
        )
    };
    let take = || next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::thread::scope(|scope| -> Result<(), String> {
        let worker = || std::thread::Builder::new().stack_size(WORKER_STACK);
        if threads == 1 {
            let (report, out, progress, lint) = (&mut report, &mut out, &progress, &lint);
            return worker()
                .spawn_scoped(scope, move || {
                    while let Some(outcome) = lint(take()) {
                        progress.inc(1);
                        progress.suspend(|| report.write(outcome, &mut **out, cli.quiet));
                    }
                })
                .map(drop)
                .map_err(|e| format!("cannot start a worker thread: {e}"));
        }
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Outcome)>();
        for _ in 0..threads {
            let (tx, lint, take) = (tx.clone(), &lint, &take);
            worker()
                .spawn_scoped(scope, move || loop {
                    let i = take();
                    let Some(outcome) = lint(i) else {
                        break;
                    };
                    if tx.send((i, outcome)).is_err() {
                        break;
                    }
                })
                .map_err(|e| format!("cannot start a worker thread: {e}"))?;
        }
        drop(tx);
        let mut waiting = std::collections::BTreeMap::new();
        let mut due = 0;
        for (i, outcome) in rx {
            progress.inc(1);
            waiting.insert(i, outcome);
            while let Some(outcome) = waiting.remove(&due) {
                progress.suspend(|| report.write(outcome, &mut *out, cli.quiet));
                due += 1;
            }
        }
        Ok(())
    })?;
    progress.finish_and_clear();
    if let Some(c) = cache {
        c.save(std::mem::take(&mut report.cache));
    }
    if cli.fix_args.active() {
        for line in fix::summary(&cli.fix_args, &report.fixes) {
            eprintln!("csa-lint: {line}");
        }
    }
    let mut tail = String::new();
    if let Some(frame) = report.frame.take() {
        tail.push_str(&frame.finish());
    }
    if cli.statistics {
        tail.push_str(&render::statistics(&report.totals, format == Format::Json));
    } else if matches!(report.format, Some(Format::Full | Format::Concise)) && !cli.quiet {
        tail.push_str(&render::summary_line(&report.totals));
    }
    let written = out.write_all(tail.as_bytes()).and_then(|_| out.flush());
    if let (Err(e), Some(path)) = (written, &cli.output) {
        return Err(format!("{}: cannot write the report: {e}", path.display()));
    }
    if report.io_error {
        return Ok(ExitCode::from(2));
    }
    if diff_only {
        // like ruff and black: --diff exits 1 when files would change
        return Ok(if report.fixes.files_changed > 0 && !cli.exit_zero {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    }
    let findings = report.totals.by_severity[Severity::Warning as usize]
        + report.totals.by_severity[Severity::Error as usize]
        > 0;
    Ok(if findings && !cli.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The stack of a worker thread: the analysis recurses on nesting depth
/// in a few places (bounded, but deep inputs want room).
const WORKER_STACK: usize = 16 << 20;

/// The cache this run uses, if any: `--no-cache` none; else `--cache-dir`,
/// `CSA_LINT_CACHE_DIR`, the `cache-dir` of the configuration that applies
/// to the working directory, or the default place (`cache::open_default`).
/// A cache that cannot be opened is a warning, not an error.
fn open_cache(
    cli: &Cli,
    resolver: &mut settings::ConfigResolver,
) -> Result<Option<cache::Cache>, String> {
    if cli.no_cache {
        return Ok(None);
    }
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    let configured = match (&cli.cache_dir, std::env::var_os("CSA_LINT_CACHE_DIR")) {
        (Some(dir), _) => Some(dir.clone()),
        (None, Some(env)) if !env.is_empty() => Some(PathBuf::from(env)),
        _ => None,
    };
    // the settings of a file in the working directory
    let here = resolver.for_file(&cwd.join("-"))?;
    let opened = match configured.or_else(|| here.settings.cache_dir.clone()) {
        Some(dir) => cache::Cache::open(&dir),
        None => {
            let project = if here.settings.root.as_os_str().is_empty() {
                cwd
            } else {
                here.settings.root.clone()
            };
            cache::open_default(&project)
        }
    };
    match opened {
        Ok(c) => Ok(Some(c)),
        Err(why) => {
            if !cli.quiet {
                eprintln!(
                    "csa-lint: warning: {why}; running without a cache (--no-cache hides this)"
                );
            }
            Ok(None)
        }
    }
}

/// What every worker needs.
struct Context<'a> {
    cli: &'a Cli,
    cache: Option<&'a cache::Cache>,
    /// Who includes the files of the run (a file with syntax errors alone
    /// is read again in its includer's context).
    includers: includers::Includers<'a>,
    /// The headers read so far.
    header_files: &'a HeaderFiles,
    /// How diagnostics are printed; `None`: not per file (`--statistics`,
    /// `--diff`).
    format: Option<Format>,
    color: bool,
}

/// One file to lint.
struct Job {
    display: String,
    path: PathBuf,
    /// The language from the file name, `--language` or
    /// `per-file-languages`.
    kind: SourceKind,
    /// Whether `kind` was given (`--language`, `per-file-languages`) rather
    /// than guessed from the extension; a guess may be refined by content.
    kind_given: bool,
    /// Named on the command line (not found by walking a directory).
    named: bool,
    resolved: std::sync::Arc<analyzer::config::Resolved>,
}

/// What linting one file gave: everything to print, in order.
#[derive(Default)]
struct Outcome {
    /// Lines for standard error (warnings, refusals, errors), each
    /// complete.
    messages: Vec<String>,
    /// The file's part of the report (or of the diff).
    text: String,
    /// The JSON or SARIF items, pretty-printed (framed when written).
    items: Vec<String>,
    /// The diagnostics (counted, for the summary and the exit status);
    /// `None` when the file was skipped or could not be read.
    diagnostics: Option<Vec<Diagnostic>>,
    fixes: fix::Totals,
    io_error: bool,
    /// Cache entries used or made.
    cache: cache::Updates,
}

/// The report as it is written.
struct Report {
    format: Option<Format>,
    frame: Option<render::Frame>,
    totals: render::Totals,
    fixes: fix::Totals,
    io_error: bool,
    /// Cache entries used or made, saved at the end.
    cache: cache::Updates,
}

impl Report {
    fn write(&mut self, o: Outcome, out: &mut dyn Write, quiet: bool) {
        self.cache.extend(o.cache);
        for m in &o.messages {
            if !(quiet && m.starts_with("csa-lint: warning")) {
                eprintln!("{m}");
            }
        }
        self.io_error |= o.io_error;
        self.fixes.add(&o.fixes);
        if let Some(d) = &o.diagnostics {
            self.totals.add(d);
        }
        let _ = out.write_all(o.text.as_bytes());
        if let Some(frame) = &mut self.frame {
            for item in &o.items {
                let _ = out.write_all(frame.item(item).as_bytes());
            }
        }
    }
}

/// How many leading bytes are looked at for a NUL (git's heuristic).
const BINARY_PROBE: usize = 8000;

/// Decodes a source file: `Err` for a binary file (why), else the text
/// and, when it is not valid UTF-8, a warning saying where, what the bytes
/// look like, and what to do.
pub(crate) fn decode(display: &str, bytes: &[u8]) -> Result<(String, Option<String>), String> {
    let probe = &bytes[..bytes.len().min(BINARY_PROBE)];
    let utf16 = probe.starts_with(&[0xFF, 0xFE]) || probe.starts_with(&[0xFE, 0xFF]);
    if let Some(at) = probe.iter().position(|&b| b == 0) {
        if !utf16 {
            return Err(format!(
                "{}: skipped: it looks like a binary file (a NUL byte at offset {at})",
                render::escape_controls(display)
            ));
        }
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok((s.to_string(), None)),
        Err(e) => {
            let at = e.valid_up_to();
            let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
            let line_start = bytes[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            let column = 1 + String::from_utf8_lossy(&bytes[line_start..at])
                .chars()
                .count();
            let looks = if utf16 {
                "it looks like UTF-16 (a byte-order mark); csa-lint reads UTF-8".to_string()
            } else {
                format!(
                    "byte 0x{:02X}; the file is probably Latin-1 or Windows-1252",
                    bytes[at]
                )
            };
            Ok((
                String::from_utf8_lossy(bytes).into_owned(),
                Some(format!(
                    "{}:{line}:{column}: not valid UTF-8 ({looks}); every invalid byte is read as U+FFFD, so columns after it on its line may be off, and --fix leaves this file alone; convert it to UTF-8 (for example `iconv -f latin1 -t utf-8`)",
                    render::escape_controls(display)
                )),
            ))
        }
    }
}

/// The diagnostics of `text` before rule selection: from the cache when
/// it has them, else analysed (and stored). A panic in the analysis is an
/// error naming the file.
fn diagnostics_of(
    ctx: &Context,
    display: &str,
    kind: SourceKind,
    text: &str,
    opts: &analyzer::AnalysisOptions,
    updates: &mut cache::Updates,
) -> Result<(Vec<Diagnostic>, Option<SourceText>), String> {
    let key = ctx.cache.map(|_| cache::Key::new(kind, opts, text));
    if let (Some(c), Some(k)) = (ctx.cache, key) {
        if let Some((d, used)) = c.get(k) {
            updates.extend(used);
            return Ok((d, None));
        }
    }
    let fa = std::panic::catch_unwind(|| analyzer::analyze(kind, text, opts)).map_err(|_| {
        format!(
            "{}: internal error while analysing this file; please report it with the file attached",
            render::escape_controls(display)
        )
    })?;
    if let Some(k) = key {
        updates.extend(cache::Cache::entry(k, fa.diagnostics()));
    }
    let (diagnostics, source) = fa.into_parts();
    Ok((diagnostics, Some(source)))
}

/// The number of syntax errors (CSA001) among `diagnostics`.
fn syntax_errors(diagnostics: &[Diagnostic]) -> usize {
    diagnostics.iter().filter(|d| d.code.0 == 1).count()
}

/// The files a file at `path` `#include`s (quoted
/// names relative to the including file's directory, then to `path`'s,
/// then in `dirs`; angled names in `dirs`), and those they include, read
/// through `files`; `None` when it includes none that can be read.
fn read_headers(
    files: &HeaderFiles,
    path: &Path,
    text: &str,
    dirs: &[PathBuf],
) -> Option<analyzer::Headers> {
    if !analyzer::Headers::wanted(text) {
        return None;
    }
    let headers = analyzer::Headers::read_beside(path, text, dirs, &mut |p| files.read(p));
    (!headers.0.is_empty()).then_some(headers)
}

/// The header files the run has read, and the paths it found no file at:
/// the files of a tree include the same headers, each found after trying
/// the same places (MITgcm: 46,000 reads of a few hundred headers and
/// 87,000 failed opens in a run of 2,276 files, most of a warm re-run's
/// time). Kept while their texts and paths total at most
/// [`HeaderFiles::MAX_BYTES`], the first ones met (a tree's common
/// headers; the others are read each time, so that memory stays bounded
/// whatever the tree: hypre's headers alone are 12 MB); a header that
/// changes during the run may be seen as it was.
#[derive(Default)]
struct HeaderFiles {
    map: std::sync::Mutex<HeaderMap>,
}

#[derive(Default)]
struct HeaderMap {
    texts: rustc_hash::FxHashMap<PathBuf, Option<std::sync::Arc<str>>>,
    bytes: usize,
}

impl HeaderFiles {
    const MAX_BYTES: usize = 4 << 20;

    /// The text of the file at `p`; `None` when it cannot be read.
    fn read(&self, p: &Path) -> Option<String> {
        if let Some(known) = self.map.lock().ok().and_then(|m| m.texts.get(p).cloned()) {
            return known.map(|t| t.to_string());
        }
        let text = std::fs::read_to_string(p).ok();
        if let Ok(mut m) = self.map.lock() {
            let len = text.as_ref().map_or(0, String::len) + p.as_os_str().len();
            if m.bytes + len <= Self::MAX_BYTES {
                m.bytes += len;
                m.texts
                    .insert(p.to_path_buf(), text.as_deref().map(Into::into));
            }
        }
        text
    }
}

/// Reads, analyses (or finds in the cache), fixes and renders one file.
/// Nothing of the analysis outlives this call: the outcome is text.
fn lint_file(ctx: &Context, job: &Job) -> Outcome {
    let mut o = Outcome::default();
    let display = job.display.as_str();
    let bytes = match std::fs::read(&job.path) {
        Ok(b) => b,
        Err(e) => {
            o.messages.push(format!(
                "csa-lint: error: {}: cannot read: {e}",
                render::escape_controls(display)
            ));
            o.io_error = true;
            return o;
        }
    };
    let (text, warning) = match decode(display, &bytes) {
        Ok(t) => t,
        Err(why) => {
            o.messages.push(format!("csa-lint: warning: {why}"));
            return o;
        }
    };
    drop(bytes);
    if let Some(w) = warning {
        o.messages.push(format!("csa-lint: warning: {w}"));
    }
    // a `.h` may hold C++, which csa-lint does not read: skipped (said
    // only of a file named on the command line)
    if !job.kind_given && csa_grammars::cpp_header(&job.path, &text) {
        if job.named {
            o.messages.push(format!(
                "csa-lint: warning: {}: skipped: it is a C++ header (csa-lint reads C and Fortran; per-file-languages can make it read as C)",
                render::escape_controls(display)
            ));
        }
        return o;
    }
    // a `.h` may hold Fortran
    let kind = if job.kind_given {
        job.kind
    } else {
        csa_grammars::detect_with_content(&job.path, &text).unwrap_or(job.kind)
    };
    let settings = &job.resolved.settings;
    // the headers it `#include`s: their macros are expanded in Fortran
    // code and decide C code's conditions
    let with_headers;
    let opts = match read_headers(ctx.header_files, &job.path, &text, &settings.include_dirs) {
        Some(headers) => {
            with_headers = analyzer::AnalysisOptions {
                headers,
                ..settings.options.clone()
            };
            &with_headers
        }
        None => &settings.options,
    };
    let relative = job
        .resolved
        .relative(&settings::absolute(&job.path))
        .to_path_buf();
    // (the analysis's line index of `text`, for the report)
    let (mut diagnostics, mut source) =
        match diagnostics_of(ctx, display, kind, &text, opts, &mut o.cache) {
            Ok(d) => d,
            Err(e) => {
                o.messages.push(format!("csa-lint: error: {e}"));
                o.io_error = true;
                return o;
            }
        };
    // a file another one includes, with syntax errors alone: read as its
    // includer gives it (see `includers`), when that has fewer
    let in_context;
    let (kind, opts) = match syntax_errors(&diagnostics)
        .checked_sub(1)
        .and_then(|_| ctx.includers.context(job, &text, opts))
    {
        Some(c) => {
            in_context = c;
            match diagnostics_of(
                ctx,
                display,
                in_context.kind,
                &text,
                &in_context.options,
                &mut o.cache,
            ) {
                Ok((d, s)) if syntax_errors(&d) < syntax_errors(&diagnostics) => {
                    diagnostics = d;
                    source = s;
                    (in_context.kind, &in_context.options)
                }
                _ => (kind, opts),
            }
        }
        None => (kind, opts),
    };
    settings.filter(&relative, &mut diagnostics);
    let mut text = text;
    if ctx.cli.fix_args.active() && fix::may_change(&ctx.cli.fix_args, &diagnostics) {
        let f = fix::fix_file(
            &ctx.cli.fix_args,
            display,
            kind,
            &text,
            &job.resolved,
            opts,
            &relative,
        );
        o.messages.extend(f.messages);
        o.io_error |= f.io_error;
        o.fixes = f.totals;
        o.text = f.diff;
        if let Some(new) = f.written {
            // report what is left in the file as it now is
            match diagnostics_of(ctx, display, kind, &new, opts, &mut o.cache) {
                Ok((mut d, s)) => {
                    settings.filter(&relative, &mut d);
                    diagnostics = d;
                    source = s;
                    text = new;
                }
                Err(e) => {
                    o.messages.push(format!("csa-lint: error: {e}"));
                    o.io_error = true;
                    return o;
                }
            }
        }
    }
    render::sort(&mut diagnostics);
    // a file without diagnostics prints nothing in any format: no line index
    if let Some(format) = ctx.format.filter(|_| !diagnostics.is_empty()) {
        let source = match source {
            // (made from `text` itself: see above)
            Some(s) if s.text().len() == text.len() => s,
            _ => SourceText::new(text),
        };
        let view = render::FileView {
            name: display,
            source: &source,
            lang: kind.into(),
            diagnostics: &diagnostics,
        };
        match format {
            Format::Full => o.text = render::full(&view, ctx.color),
            Format::Concise => o.text = render::concise(&view),
            Format::Github => o.text = render::github(&view),
            Format::Json => {
                o.items = render::json_items(&view)
                    .iter()
                    .map(render::pretty)
                    .collect()
            }
            Format::Sarif => {
                o.items = render::sarif_items(&view)
                    .iter()
                    .map(render::pretty)
                    .collect()
            }
            Format::Gitlab => {
                o.items = render::gitlab_items(&view)
                    .iter()
                    .map(render::pretty)
                    .collect()
            }
        }
    }
    o.diagnostics = Some(diagnostics);
    o
}

/// A progress bar on stderr when it is a terminal and the run is long
/// enough to want one; hidden otherwise.
fn progress_bar(files: usize, quiet: bool) -> indicatif::ProgressBar {
    const MIN_FILES: usize = 32;
    if quiet || files < MIN_FILES || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(files as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} linting [{bar:30}] {pos}/{len} files ({elapsed})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Reads one file for `--dump`, choosing its language.
fn read_source(path: &Path, language: Option<SourceKind>) -> Result<(SourceKind, String), String> {
    let kind = language
        .or_else(|| csa_grammars::detect(path))
        .ok_or_else(|| {
            format!(
                "{}: unknown file type; use --language c|fortran|fortran-fixed",
                path.display()
            )
        })?;
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let display = path.display().to_string();
    let (text, warning) = decode(&display, &bytes)?;
    if let Some(w) = warning {
        eprintln!("csa-lint: warning: {w}");
    }
    let kind = if language.is_some() {
        kind
    } else {
        csa_grammars::detect_with_content(path, &text).unwrap_or(kind)
    };
    Ok((kind, text))
}

/// The files to lint, sorted by the name shown (the order of the report),
/// with their settings. A file named on the command line is linted
/// whatever its extension when `--language` or `per-file-languages` says
/// what it is; a walked file is linted when its extension or
/// `per-file-languages` does.
fn collect_files(
    paths: &[PathBuf],
    language: Option<SourceKind>,
    honour_ignore_files: bool,
    resolver: &mut settings::ConfigResolver,
) -> Result<Vec<Job>, String> {
    let mut out = Vec::new();
    let mut add = |display: String, path: &Path, explicit: bool| -> Result<(), String> {
        let resolved = resolver.for_file(path)?;
        let configured = resolved
            .settings
            .language_for(resolved.relative(&settings::absolute(path)));
        let (kind, kind_given) = match (language, configured, csa_grammars::detect(path)) {
            (Some(k), _, _) => (k, true),
            (None, Some(k), _) => (k, true),
            (None, None, Some(k)) => (k, false),
            (None, None, None) if explicit => {
                return Err(format!(
                    "{}: unknown file type; use --language c|fortran|fortran-fixed (or per-file-languages in csa-lint.toml)",
                    path.display()
                ))
            }
            (None, None, None) => return Ok(()),
        };
        out.push(Job {
            display,
            path: path.to_path_buf(),
            kind,
            kind_given,
            named: explicit,
            resolved,
        });
        Ok(())
    };
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_file() {
            add(p.display().to_string(), p, true)?;
            continue;
        }
        // .gitignore is honoured outside git repositories too (a source
        // tarball still has its ignore files); `--no-ignore` turns every
        // ignore file off.
        let walk = ignore::WalkBuilder::new(p)
            .require_git(false)
            .git_ignore(honour_ignore_files)
            .git_global(honour_ignore_files)
            .git_exclude(honour_ignore_files)
            .ignore(honour_ignore_files)
            .parents(honour_ignore_files)
            .build();
        for entry in walk {
            let entry = entry.map_err(|e| format!("{}: {e}", p.display()))?;
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            // `--language` applies to the files csa-lint would lint anyway
            if language.is_some() && csa_grammars::detect(entry.path()).is_none() {
                continue;
            }
            add(entry.path().display().to_string(), entry.path(), false)?;
        }
    }
    out.sort_by(|a, b| a.display.cmp(&b.display));
    Ok(out)
}
