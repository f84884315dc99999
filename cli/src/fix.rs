//! `--fix`, `--unsafe-fixes`, `--diff` and `--rewrite openmp|ivdep`: the
//! binary's side of the fix engine. The library computes fixes and applies
//! them to text (`analyzer::fix_all`); this file owns the files: it
//! prints unified diffs, reports markers left unconverted, and writes atomically (a temporary file in the same
//! directory, renamed over the original) only when the file on disk is
//! still byte-for-byte what was analysed.

use analyzer::config::Resolved;
use analyzer::diag::Code;
use analyzer::AnalysisOptions;
use analyzer::{fix_all, FixAllOptions, IvdepStyle, Target};
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

/// Checks a `--rewrite` target name.
pub fn check_target(name: &str) -> Result<(), String> {
    Target::from_name(name, IvdepStyle::default())
        .map(|_| ())
        .ok_or_else(|| format!("unknown --rewrite target `{name}`: use openmp or ivdep"))
}

/// What the fix flags did, summed over files.
#[derive(Clone, Copy, Debug, Default)]
pub struct Totals {
    pub fixed: usize,
    pub files_changed: usize,
    /// Rewrites not applied for want of --unsafe-fixes.
    pub withheld: usize,
}

impl Totals {
    pub fn add(&mut self, other: &Totals) {
        self.fixed += other.fixed;
        self.files_changed += other.files_changed;
        self.withheld += other.withheld;
    }
}

/// What the fix flags did to one file.
#[derive(Default)]
pub struct FileFix {
    /// `--diff`: the unified diff of the file.
    pub diff: String,
    /// Lines for standard error: unconverted markers, write errors.
    pub messages: Vec<String>,
    pub totals: Totals,
    pub io_error: bool,
    /// The new text, when it was written to the file.
    pub written: Option<String>,
}

/// Whether the fix flags can change a file whose (selected) diagnostics
/// are `diagnostics`: a rewrite looks at every marker; fixes need a
/// diagnostic with an applicable edit. A file that cannot change is not
/// analysed again.
pub fn may_change(opts: &FixArgs, diagnostics: &[analyzer::diag::Diagnostic]) -> bool {
    opts.rewrite.is_some()
        || (opts.fix_enabled()
            && diagnostics
                .iter()
                .any(|d| analyzer::bulk_fix(d, opts.unsafe_fixes).is_some()))
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
    kind: csa_grammars::SourceKind,
    text: &str,
    opts: &FixArgs,
    target: Option<Target>,
    analysis: &AnalysisOptions,
    disabled: Vec<Code>,
) -> Outcome {
    let r = fix_all(
        kind,
        text,
        analysis,
        &FixAllOptions {
            fix: opts.fix_enabled(),
            unsafe_fixes: opts.unsafe_fixes,
            rewrite: target,
            disabled,
        },
    );
    // refusals are placed in the text as it was read
    let mut refusals = Vec::new();
    if !r.refusals.is_empty() || !r.rejected.is_empty() {
        let src = analyzer::source::SourceText::new(text.to_string());
        refusals = r
            .refusals
            .iter()
            .chain(&r.rejected)
            .map(|(span, why)| {
                let lc = src.line_col(span.start as usize);
                format!("{display}:{}:{}: {why}", lc.line, lc.column)
            })
            .collect();
    }
    Outcome {
        text: r.text,
        fixed: r.applied,
        refusals,
        withheld: r.withheld,
    }
}

/// Runs the fix flags over one file read as `text`: prints nothing, writes
/// the file (atomically, only if it is still `text` on disk) unless
/// `--diff`.
pub fn fix_file(
    opts: &FixArgs,
    display: &str,
    kind: csa_grammars::SourceKind,
    text: &str,
    resolved: &Resolved,
    analysis: &AnalysisOptions,
    relative: &Path,
) -> FileFix {
    let settings = &resolved.settings;
    let target = opts.rewrite.as_deref().and_then(|name| {
        Target::from_name(
            name,
            opts.style(settings.ivdep_style_for(kind.is_fortran())),
        )
    });
    let disabled: Vec<Code> = analyzer::RULES
        .iter()
        .map(|r| r.code)
        .filter(|c| !settings.is_enabled(*c, relative))
        .collect();
    let outcome = fix_text(display, kind, text, opts, target, analysis, disabled);
    let mut f = FileFix {
        messages: outcome
            .refusals
            .iter()
            .map(|r| format!("csa-lint: {r}"))
            .collect(),
        ..FileFix::default()
    };
    f.totals.withheld = outcome.withheld;
    if outcome.text == text {
        return f;
    }
    if opts.diff {
        let diff = similar::TextDiff::from_lines(text, &outcome.text);
        f.diff = diff
            .unified_diff()
            .context_radius(3)
            .header(
                &format!("a/{}", display.trim_start_matches('/')),
                &format!("b/{}", display.trim_start_matches('/')),
            )
            .to_string();
        f.totals.fixed = outcome.fixed;
        f.totals.files_changed = 1;
        return f;
    }
    match write_if_unchanged(Path::new(display), text, &outcome.text) {
        Ok(()) => {
            f.totals.fixed = outcome.fixed;
            f.totals.files_changed = 1;
            f.written = Some(outcome.text);
        }
        Err(e) => {
            f.messages.push(format!("csa-lint: error: {display}: {e}"));
            f.io_error = true;
        }
    }
    f
}

/// The closing lines of a fix run (for standard error).
pub fn summary(opts: &FixArgs, t: &Totals) -> Vec<String> {
    let mut out = Vec::new();
    if t.withheld > 0 {
        let target = match opts.rewrite.as_deref() {
            Some("ivdep") => "ivdep",
            _ => "OpenMP",
        };
        out.push(format!(
            "{} CSA annotation{} can be rewritten to {target}, an unsafe fix (the result asserts for every compiler what the marker asserted for CSA's): add --unsafe-fixes to apply {} (with --diff to preview)",
            t.withheld,
            if t.withheld == 1 { "" } else { "s" },
            if t.withheld == 1 { "it" } else { "them" },
        ));
    }
    let verb = if opts.diff { "Would fix" } else { "Fixed" };
    if t.fixed > 0 || !opts.diff {
        out.push(format!(
            "{verb} {} issue{} in {} file{}.",
            t.fixed,
            if t.fixed == 1 { "" } else { "s" },
            t.files_changed,
            if t.files_changed == 1 { "" } else { "s" }
        ));
    }
    out
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
