//! `--fix`, `--unsafe-fixes`, `--diff` and `--rewrite openmp|ivdep`: the
//! binary's side of the fix engine. The library computes fixes and applies
//! them to text (`analyzer::rewrite::fix_all`); this file owns the files: it
//! prints unified diffs, reports markers left unconverted, and writes atomically (a temporary file in the same
//! directory, renamed over the original) only when the file on disk is
//! still byte-for-byte what was analysed.

use analyzer::analysis::{AnalysisOptions, FileAnalysis};
use analyzer::config::Resolved;
use analyzer::diag::Code;
use analyzer::rewrite::{fix_all, FixAllOptions, IvdepStyle, Target};
use std::io::Write;
use std::path::Path;

/// The fix flags (flattened into the command line in `main.rs`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct FixArgs {
    /// Apply safe fixes to the files (atomic writes; a file changed on disk
    /// since it was read is left alone).
    #[arg(long)]
    pub fix: bool,

    /// With --fix, --diff or --rewrite: apply unsafe fixes too (they change
    /// what the program asserts; their titles say what they assume). A
    /// rewrite is an unsafe fix: it needs this flag.
    #[arg(long)]
    pub unsafe_fixes: bool,

    /// Print a unified diff of what --fix / --rewrite would change instead
    /// of writing (alone: what --fix would do).
    #[arg(long)]
    pub diff: bool,

    /// Convert every loop marker to OpenMP or ivdep (with --unsafe-fixes:
    /// an unsafe fix); markers that cannot be converted are reported on
    /// standard error with the reason.
    #[arg(long, value_name = "TARGET", value_parser = ["openmp", "ivdep"])]
    pub rewrite: Option<String>,

    /// How --rewrite ivdep spells ivdep in C: attribute ([[intel::ivdep]]),
    /// intel-pragma (#pragma ivdep) or gcc-pragma (#pragma GCC ivdep).
    #[arg(long, value_name = "STYLE", value_parser = ["attribute", "intel-pragma", "gcc-pragma"])]
    pub ivdep_style: Option<String>,
}

impl FixArgs {
    pub fn active(&self) -> bool {
        self.fix || self.diff || self.rewrite.is_some()
    }

    fn fix_enabled(&self) -> bool {
        self.fix || (self.diff && self.rewrite.is_none())
    }

    /// The flag's style, else the configuration's.
    fn style(&self, configured: IvdepStyle) -> IvdepStyle {
        self.ivdep_style
            .as_deref()
            .and_then(IvdepStyle::from_name)
            .unwrap_or(configured)
    }
}

/// What `main` does after the fixes.
pub struct FixRun {
    /// `--diff`: the diff is the output; do not print diagnostics.
    pub stop: bool,
    pub io_error: bool,
    /// Some file would change (or did).
    pub changed: bool,
}

/// The new text of one file, and the markers left unconverted.
struct Outcome {
    text: String,
    fixed: usize,
    refusals: Vec<String>,
    /// Rewrites not applied for want of --unsafe-fixes.
    withheld: usize,
}

fn fix_text(
    display: &str,
    fa: &FileAnalysis,
    opts: &FixArgs,
    target: Option<Target>,
    analysis: &AnalysisOptions,
    disabled: Vec<Code>,
) -> Outcome {
    let r = fix_all(
        fa.kind,
        fa.source.text(),
        analysis,
        &FixAllOptions {
            fix: opts.fix_enabled(),
            unsafe_fixes: opts.unsafe_fixes,
            rewrite: target,
            disabled,
        },
    );
    // refusals are placed in the text as it was read
    let src = &fa.source;
    let refusals = r
        .refusals
        .iter()
        .chain(&r.rejected)
        .map(|(span, why)| {
            let lc = src.line_col(span.start as usize);
            format!("{display}:{}:{}: {why}", lc.line, lc.column)
        })
        .collect();
    Outcome {
        text: r.text,
        fixed: r.applied,
        refusals,
        withheld: r.withheld,
    }
}

/// Runs the fix flags over analysed files and replaces the analyses of the
/// files it wrote. Diffs go to `out`; summaries and refusals to
/// standard error.
pub fn run(
    opts: &FixArgs,
    results: &mut [(String, FileAnalysis)],
    settings: &[std::sync::Arc<Resolved>],
    out: &mut dyn Write,
) -> Result<FixRun, String> {
    if let Some(name) = opts.rewrite.as_deref() {
        Target::from_name(name, IvdepStyle::default())
            .ok_or_else(|| format!("unknown --rewrite target `{name}`: use openmp or ivdep"))?;
    }
    let mut io_error = false;
    let mut total_fixed = 0;
    let mut files_changed = 0;
    let mut withheld = 0;
    for ((display, fa), resolved) in results.iter_mut().zip(settings) {
        let settings = &resolved.settings;
        let analysis = &settings.options;
        let target = opts.rewrite.as_deref().and_then(|name| {
            Target::from_name(
                name,
                opts.style(settings.ivdep_style_for(fa.kind.is_fortran())),
            )
        });
        let relative = resolved
            .relative(&crate::settings::absolute(Path::new(display.as_str())))
            .to_path_buf();
        let disabled: Vec<Code> = analyzer::rules::RULES
            .iter()
            .map(|r| r.code)
            .filter(|c| !settings.is_enabled(*c, &relative))
            .collect();
        let outcome = fix_text(display, fa, opts, target, analysis, disabled);
        for r in &outcome.refusals {
            eprintln!("csa-lint: {r}");
        }
        withheld += outcome.withheld;
        if outcome.text == fa.source.text() {
            continue;
        }
        if opts.diff {
            let diff = similar::TextDiff::from_lines(fa.source.text(), &outcome.text);
            let _ = write!(
                out,
                "{}",
                diff.unified_diff().context_radius(3).header(
                    &format!("a/{}", display.trim_start_matches('/')),
                    &format!("b/{}", display.trim_start_matches('/'))
                )
            );
            total_fixed += outcome.fixed;
            files_changed += 1;
            continue;
        }
        match write_if_unchanged(Path::new(display.as_str()), fa.source.text(), &outcome.text) {
            Ok(()) => {
                total_fixed += outcome.fixed;
                files_changed += 1;
                *fa = analyzer::analysis::analyze(fa.kind, &outcome.text, analysis);
                settings.filter(&relative, &mut fa.diagnostics);
            }
            Err(e) => {
                eprintln!("csa-lint: error: {display}: {e}");
                io_error = true;
            }
        }
    }
    if withheld > 0 {
        let target = match opts.rewrite.as_deref() {
            Some("ivdep") => "ivdep",
            _ => "OpenMP",
        };
        eprintln!(
            "csa-lint: {withheld} CSA annotation{} can be rewritten to {target}, an unsafe fix (the result asserts for every compiler what the marker asserted for CSA's): add --unsafe-fixes to apply {} (with --diff to preview)",
            if withheld == 1 { "" } else { "s" },
            if withheld == 1 { "it" } else { "them" },
        );
    }
    let verb = if opts.diff { "Would fix" } else { "Fixed" };
    if total_fixed > 0 || !opts.diff {
        eprintln!(
            "csa-lint: {verb} {total_fixed} issue{} in {files_changed} file{}.",
            if total_fixed == 1 { "" } else { "s" },
            if files_changed == 1 { "" } else { "s" }
        );
    }
    Ok(FixRun {
        stop: opts.diff,
        io_error,
        changed: files_changed > 0,
    })
}

/// Replaces `path` with `new` atomically, unless its content is no longer
/// `old` (changed on disk since it was read, or not valid UTF-8).
fn write_if_unchanged(path: &Path, old: &str, new: &str) -> Result<(), String> {
    // a symbolic link is followed: its target gets the new text, and the
    // link stays a link
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let path = target.as_path();
    let now = std::fs::read(path).map_err(|e| format!("cannot read it again: {e}"))?;
    if now != old.as_bytes() {
        return Err(
            "the file changed on disk since it was read (or is not valid UTF-8); not writing fixes"
                .to_string(),
        );
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| format!("cannot create a temporary file: {e}"))?;
    tmp.write_all(new.as_bytes())
        .and_then(|_| tmp.flush())
        .map_err(|e| format!("cannot write the temporary file: {e}"))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path)
        .map_err(|e| format!("cannot replace the file: {}", e.error))?;
    Ok(())
}
