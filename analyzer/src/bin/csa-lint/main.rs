//! `csa-lint`: the command-line front of the analyzer. It owns all I/O:
//! walking paths, reading files, printing diagnostics, exit codes.
//!
//! Exit codes: 0 no warning or error, 1 warnings or errors found, 2 usage or
//! I/O error.

mod fix;
mod render;

mod settings;

use analyzer::analysis::{self, FileAnalysis};
use analyzer::config::{Overrides, Selector};
use analyzer::diag::Severity;
use clap::{Parser, ValueEnum};
use csa_grammars::SourceKind;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
        let rule = analyzer::rules::find(code)
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
        for r in analyzer::rules::RULES {
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
        let fa = analysis::analyze(kind, &text, &opts);
        let Some(f) = fa.function(&function) else {
            let names: Vec<&str> = fa.functions.iter().map(|f| f.func.name.as_str()).collect();
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
        let text = match dump {
            DumpKind::Cfg => f.dump(&fa.source),
            DumpKind::MemopGraph => f.memop_graph(&fa.source),
        };
        let _ = write!(stdout, "{text}");
        return Ok(ExitCode::SUCCESS);
    }

    let files = collect_files(&cli.paths, cli.language, !cli.no_ignore)?;
    let mut jobs = Vec::with_capacity(files.len());
    for (display, path, kind) in files {
        let resolved = resolver.for_file(&path)?;
        jobs.push((display, path, kind, resolved));
    }
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
    let progress = progress_bar(jobs.len(), cli.quiet);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cli.jobs.unwrap_or(0))
        .build()
        .map_err(|e| format!("cannot start {} worker threads: {e}", cli.jobs.unwrap_or(0)))?;
    // Each file is read and analysed on a worker; `collect` keeps the walk's
    // order, so the output is the same for every `--jobs`.
    let forced = cli.language.is_some();
    let outcomes: Vec<Result<Linted, String>> = pool.install(|| {
        use rayon::prelude::*;
        jobs.par_iter()
            .map(|(display, path, kind, resolved)| {
                let outcome = lint_file(display, path, *kind, forced, resolved);
                progress.inc(1);
                outcome
            })
            .collect()
    });
    progress.finish_and_clear();
    let mut results: Vec<(String, FileAnalysis)> = Vec::new();
    // The settings of each result, for the fixes.
    let mut resolved_of = Vec::new();
    let mut io_error = false;
    for (outcome, job) in outcomes.into_iter().zip(&jobs) {
        match outcome {
            Ok(Linted::Skipped(why)) => {
                if !cli.quiet {
                    eprintln!("csa-lint: warning: {why}");
                }
            }
            Ok(Linted::Done { result, warning }) => {
                if let (Some(w), false) = (warning, cli.quiet) {
                    eprintln!("csa-lint: warning: {w}");
                }
                results.push(*result);
                resolved_of.push(job.3.clone());
            }
            Err(msg) => {
                eprintln!("csa-lint: error: {msg}");
                io_error = true;
            }
        }
    }
    // --fix, --diff, --rewrite (fix.rs).
    if cli.fix_args.active() {
        let run = fix::run(&cli.fix_args, &mut results, &resolved_of, &mut stdout)?;
        io_error |= run.io_error;
        if run.stop {
            // like ruff and black: --diff exits 1 when files would change
            return Ok(ExitCode::from(if io_error {
                2
            } else if run.changed && !cli.exit_zero {
                1
            } else {
                0
            }));
        }
    }
    let findings = results.iter().any(|(_, fa)| {
        fa.diagnostics
            .iter()
            .any(|d| d.severity >= Severity::Warning)
    });
    let rendered = if cli.statistics {
        render::statistics(&results, format == Format::Json)
    } else {
        match format {
            Format::Full => render::full(&results, color, !cli.quiet),
            Format::Concise => render::concise(&results, !cli.quiet),
            Format::Json => render::json(&results),
            Format::Github => render::github(&results),
            Format::Sarif => render::sarif(&results),
        }
    };
    match &cli.output {
        Some(path) => std::fs::write(path, rendered.as_bytes())
            .map_err(|e| format!("{}: cannot write the report: {e}", path.display()))?,
        None => {
            let _ = stdout.write_all(rendered.as_bytes());
            let _ = stdout.flush();
        }
    }
    if io_error {
        return Ok(ExitCode::from(2));
    }
    Ok(if findings && !cli.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// What linting one file gave.
enum Linted {
    /// Not analysed (a binary file), and why.
    Skipped(String),
    Done {
        result: Box<(String, FileAnalysis)>,
        /// Something to tell about the input (not valid UTF-8).
        warning: Option<String>,
    },
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

/// Reads and analyses one file, keeping the diagnostics its settings
/// enable. The IR is dropped: reports need only the source and the
/// diagnostics, so a large run holds memory in proportion to the source.
fn lint_file(
    display: &str,
    path: &Path,
    kind: SourceKind,
    language_forced: bool,
    resolved: &analyzer::config::Resolved,
) -> Result<Linted, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("{}: cannot read: {e}", render::escape_controls(display)))?;
    let (text, warning) = match decode(display, &bytes) {
        Ok(t) => t,
        Err(why) => return Ok(Linted::Skipped(why)),
    };
    // a `.h` may hold Fortran
    let kind = if language_forced {
        kind
    } else {
        csa_grammars::detect_with_content(path, &text).unwrap_or(kind)
    };
    let opts = &resolved.settings.options;
    let mut fa = std::panic::catch_unwind(|| analysis::analyze(kind, &text, opts)).map_err(|_| {
        format!(
            "{display}: internal error while analysing this file; please report it with the file attached"
        )
    })?;
    resolved.settings.filter(
        resolved.relative(&settings::absolute(path)),
        &mut fa.diagnostics,
    );
    fa.functions = Vec::new();
    Ok(Linted::Done {
        result: Box::new((display.to_string(), fa)),
        warning,
    })
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

/// Files to lint in a deterministic order, with the name to show for each.
fn collect_files(
    paths: &[PathBuf],
    language: Option<SourceKind>,
    honour_ignore_files: bool,
) -> Result<Vec<(String, PathBuf, SourceKind)>, String> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_file() {
            let kind = language
                .or_else(|| csa_grammars::detect(p))
                .ok_or_else(|| {
                    format!(
                        "{}: unknown file type; use --language c|fortran|fortran-fixed",
                        p.display()
                    )
                })?;
            out.push((p.display().to_string(), p.clone(), kind));
            continue;
        }
        let mut found = Vec::new();
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
            let path = entry.path();
            let kind = match language {
                Some(k) if csa_grammars::detect(path).is_some() => k,
                Some(_) => continue,
                None => match csa_grammars::detect(path) {
                    Some(k) => k,
                    None => continue,
                },
            };
            found.push((path.display().to_string(), path.to_path_buf(), kind));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        out.extend(found);
    }
    Ok(out)
}
