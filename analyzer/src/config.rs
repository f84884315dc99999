//! Configuration: `csa-lint.toml` / `.csa-lint.toml`, and how it combines
//! with command-line flags.
//!
//! This module parses and resolves configuration text; it does no I/O. The
//! binaries find the files ([`CONFIG_FILE_NAMES`], nearest directory
//! upwards from each linted file, or `--config FILE`), read them, and hand
//! the text here.
//!
//! ```toml
//! select = ["CSA1", "CSA2"]          # codes, code prefixes, rule names or "ALL"
//! extend-select = ["CSA401"]         # added to the selection
//! ignore = ["CSA208"]
//! defines = ["USE_MPI"]
//! pure-functions = ["my_sqrt"]
//! ivdep-style = "gcc-pragma"         # attribute | intel-pragma | gcc-pragma
//! c-standard = "c17"                 # c89 ... c23 (gnu* too): picks the ivdep default
//! disable-loop-storage-check = false
//! cache-dir = ".csa_lint_cache"      # where the command line keeps results
//! include-dirs = ["include"]         # where `#include`d headers are (cpp's -I)
//!
//! [per-file-ignores]
//! "legacy/**/*.f" = ["CSA105", "CSA106"]
//! "gen_*.c" = ["ALL"]
//!
//! [per-file-languages]               # c | fortran | fortran-fixed
//! "*.inc" = "fortran-fixed"
//! "include/**/*.h" = "fortran"
//! ```
//!
//! Rule selection works in layers, as in ruff: the configuration file is one
//! layer and the command line another. A layer's `select` (if given)
//! replaces what earlier layers enabled, its `extend-select` adds codes, and
//! then its `ignore` removes codes. Per-file ignores apply last.
//!
//! Invariants: every error names the line, column and key; every selector
//! names at least one existing rule; per-file-ignore globs are matched
//! against the path relative to the configuration file's directory (and a
//! pattern without `/` also against the file name alone).

use crate::analysis::AnalysisOptions;
use crate::diag::{Code, Diagnostic};
use crate::rules::RULES;
use csa_grammars::SourceKind;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The file names searched for, in order of preference within a directory.
pub const CONFIG_FILE_NAMES: [&str; 2] = ["csa-lint.toml", ".csa-lint.toml"];

/// The spelling of ivdep the `--rewrite ivdep` conversion writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IvdepStyle {
    /// `[[intel::ivdep]]` on the loop statement (C); `!DIR$ IVDEP` (Fortran).
    #[default]
    Attribute,
    /// `#pragma ivdep` (C); `!DIR$ IVDEP` (Fortran).
    IntelPragma,
    /// `#pragma GCC ivdep` (C); `!GCC$ ivdep` (Fortran).
    GccPragma,
}

impl IvdepStyle {
    pub const NAMES: [&'static str; 3] = ["attribute", "intel-pragma", "gcc-pragma"];

    pub fn from_name(s: &str) -> Option<IvdepStyle> {
        match s {
            "attribute" => Some(IvdepStyle::Attribute),
            "intel-pragma" => Some(IvdepStyle::IntelPragma),
            "gcc-pragma" => Some(IvdepStyle::GccPragma),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            IvdepStyle::Attribute => "attribute",
            IvdepStyle::IntelPragma => "intel-pragma",
            IvdepStyle::GccPragma => "gcc-pragma",
        }
    }

    /// The line that goes before the loop.
    pub fn spelling(self, fortran: bool) -> &'static str {
        match (self, fortran) {
            (IvdepStyle::Attribute, false) => "[[intel::ivdep]]",
            (IvdepStyle::IntelPragma, false) => "#pragma ivdep",
            (IvdepStyle::GccPragma, false) => "#pragma GCC ivdep",
            (IvdepStyle::GccPragma, true) => "!GCC$ ivdep",
            (_, true) => "!DIR$ IVDEP",
        }
    }
}

/// The C standard the code is built with (`c-standard`, as in `-std=`):
/// what rewrites may write. `gnuNN` is `cNN` here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CStandard {
    C89,
    C99,
    C11,
    /// GCC's default (`gnu17`).
    #[default]
    C17,
    C23,
}

impl CStandard {
    pub const NAMES: [&'static str; 8] = ["c89", "c90", "c99", "c11", "c17", "c18", "c23", "c2x"];

    pub fn from_name(s: &str) -> Option<CStandard> {
        let base = s
            .strip_prefix("gnu")
            .or_else(|| s.strip_prefix("iso9899:"))
            .or_else(|| s.strip_prefix('c'))?;
        Some(match base {
            "89" | "90" | "1990" => CStandard::C89,
            "99" | "9x" | "1999" => CStandard::C99,
            "11" | "1x" | "2011" => CStandard::C11,
            "17" | "18" | "2017" | "2018" => CStandard::C17,
            "23" | "2x" | "2024" => CStandard::C23,
            _ => return None,
        })
    }
}

impl IvdepStyle {
    /// What `--rewrite ivdep` writes when no style is configured: in C,
    /// `[[intel::ivdep]]` only from C23 on (an attribute is a syntax error
    /// before it), else `#pragma GCC ivdep` (an unknown pragma is ignored,
    /// so every compiler builds it and GCC honours it); in Fortran
    /// `!DIR$ IVDEP` (a comment to compilers that do not know it).
    pub fn default_for(fortran: bool, std: CStandard) -> IvdepStyle {
        if fortran || std >= CStandard::C23 {
            IvdepStyle::Attribute
        } else {
            IvdepStyle::GccPragma
        }
    }
}

/// A rule selector: `ALL`, a code prefix (`CSA1`), a code (`CSA101`) or a
/// rule name (`could-not-parallelize`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    All,
    /// Upper-case prefix of the code's text, `CSA1` or `CSA10`.
    Prefix(String),
    Code(Code),
}

impl Selector {
    /// Parses a selector; the error says what is accepted.
    pub fn parse(s: &str) -> Result<Selector, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("all") {
            return Ok(Selector::All);
        }
        if let Some(code) = Code::parse(t) {
            if crate::rules::lookup(code).is_some() {
                return Ok(Selector::Code(code));
            }
            return Err(format!(
                "no rule `{t}`; `csa-lint --list-rules` lists the codes"
            ));
        }
        if let Some(rule) = RULES.iter().find(|r| r.name == t) {
            return Ok(Selector::Code(rule.code));
        }
        let upper = t.to_ascii_uppercase();
        let is_prefix = upper.len() <= 6
            && upper.starts_with("CSA")
            && upper[3..].bytes().all(|b| b.is_ascii_digit());
        if is_prefix && RULES.iter().any(|r| r.code.to_string().starts_with(&upper)) {
            return Ok(Selector::Prefix(upper));
        }
        Err(format!(
            "`{t}` selects no rule; use ALL, a code (CSA101), a code prefix (CSA1) or a rule name (could-not-parallelize)"
        ))
    }

    pub fn matches(&self, code: Code) -> bool {
        match self {
            Selector::All => true,
            Selector::Prefix(p) => code.to_string().starts_with(p.as_str()),
            Selector::Code(c) => *c == code,
        }
    }
}

/// A configuration error, positioned in the configuration text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// 1-based.
    pub line: u32,
    /// 1-based, in characters.
    pub column: u32,
    /// The key the error is about, when known.
    pub key: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.line, self.column)?;
        if let Some(key) = &self.key {
            write!(f, "`{key}`: ")?;
        }
        f.write_str(&self.message)
    }
}

/// A file pattern of the configuration (`per-file-ignores`,
/// `per-file-languages`): a glob matched against the path relative to the
/// configuration's directory, and also against the file name alone when it
/// has no `/`.
#[derive(Clone, Debug)]
pub struct FileGlob {
    pub pattern: String,
    matcher: globset::GlobMatcher,
    /// Also match the file name alone (the pattern has no `/`).
    basename: bool,
}

/// One `per-file-ignores` entry.
#[derive(Clone, Debug)]
pub struct PerFileIgnore {
    pub glob: FileGlob,
    pub selectors: Vec<Selector>,
}

impl PerFileIgnore {
    pub fn matches(&self, relative: &Path) -> bool {
        self.glob.matches(relative)
    }
}

impl FileGlob {
    /// Whether the pattern matches this path (relative to the
    /// configuration's directory, `/`-separated or native).
    pub fn matches(&self, relative: &Path) -> bool {
        if self.matcher.is_match(relative) {
            return true;
        }
        self.basename
            && relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(Path::new(name)))
    }
}

/// A parsed configuration file.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The file it came from (for messages) and whose directory anchors
    /// per-file-ignore globs.
    pub path: PathBuf,
    pub select: Option<Vec<Selector>>,
    pub extend_select: Vec<Selector>,
    pub ignore: Vec<Selector>,
    pub per_file_ignores: Vec<PerFileIgnore>,
    pub defines: Vec<String>,
    pub pure_functions: Vec<String>,
    pub ivdep_style: Option<IvdepStyle>,
    pub c_standard: Option<CStandard>,
    pub disable_loop_storage_check: Option<bool>,
    /// `cache-dir`, relative to the configuration's directory (not yet
    /// joined to it).
    pub cache_dir: Option<PathBuf>,
    /// `per-file-languages`, in the file's order.
    pub per_file_languages: Vec<(FileGlob, SourceKind)>,
    /// `include-dirs`, relative to the configuration's directory (not yet
    /// joined to it).
    pub include_dirs: Vec<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    select: Option<Vec<Spanned<String>>>,
    extend_select: Option<Vec<Spanned<String>>>,
    ignore: Option<Vec<Spanned<String>>>,
    per_file_ignores: Option<BTreeMap<Spanned<String>, Vec<Spanned<String>>>>,
    defines: Option<Vec<Spanned<String>>>,
    pure_functions: Option<Vec<Spanned<String>>>,
    ivdep_style: Option<Spanned<String>>,
    c_standard: Option<Spanned<String>>,
    disable_loop_storage_check: Option<bool>,
    cache_dir: Option<Spanned<String>>,
    per_file_languages: Option<BTreeMap<Spanned<String>, Spanned<String>>>,
    include_dirs: Option<Vec<Spanned<String>>>,
}

/// Line and column (1-based, columns in characters) of a byte offset.
fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let column = before[line_start..].chars().count() as u32 + 1;
    (line, column)
}

/// The key written at the start of the line holding `offset` (`key = ...`).
fn key_on_line(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text.get(..offset)?.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = text[start..].lines().next()?.trim_start();
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches('"');
    (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
}

impl Config {
    /// Parses configuration text. `path` is where it came from.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let offset = e.span().map(|s| s.start).unwrap_or(0);
            let (line, column) = line_col(text, offset);
            let message = e.message().trim().replace("unknown field", "unknown key");
            // serde names the key of an unknown field in the message itself.
            let key = if message.starts_with("unknown key") {
                None
            } else {
                key_on_line(text, offset)
            };
            ConfigError {
                line,
                column,
                key,
                message,
            }
        })?;
        let err = |span: std::ops::Range<usize>, key: &str, message: String| {
            let (line, column) = line_col(text, span.start);
            ConfigError {
                line,
                column,
                key: Some(key.to_string()),
                message,
            }
        };
        let selectors = |items: Vec<Spanned<String>>, key: &str| {
            items
                .into_iter()
                .map(|s| {
                    let span = s.span();
                    Selector::parse(s.get_ref()).map_err(|m| err(span, key, m))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let names = |items: Option<Vec<Spanned<String>>>, key: &str, what: &str| {
            items
                .unwrap_or_default()
                .into_iter()
                .map(|s| {
                    let span = s.span();
                    let v = s.into_inner();
                    let ok = !v.is_empty()
                        && !v.starts_with(|c: char| c.is_ascii_digit())
                        && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    if ok {
                        Ok(v)
                    } else {
                        Err(err(span, key, format!("`{v}` is not a valid {what} name")))
                    }
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let mut config = Config {
            path: path.to_path_buf(),
            select: raw.select.map(|s| selectors(s, "select")).transpose()?,
            extend_select: selectors(raw.extend_select.unwrap_or_default(), "extend-select")?,
            ignore: selectors(raw.ignore.unwrap_or_default(), "ignore")?,
            defines: names(raw.defines, "defines", "preprocessor")?,
            pure_functions: names(raw.pure_functions, "pure-functions", "function")?,
            disable_loop_storage_check: raw.disable_loop_storage_check,
            include_dirs: raw
                .include_dirs
                .unwrap_or_default()
                .into_iter()
                .map(|d| PathBuf::from(d.into_inner()))
                .collect(),
            ..Config::default()
        };
        if let Some(std) = raw.c_standard {
            let span = std.span();
            config.c_standard = Some(CStandard::from_name(std.get_ref()).ok_or_else(|| {
                err(
                    span,
                    "c-standard",
                    format!(
                        "unknown C standard `{}`; use one of {} (or gnuNN)",
                        std.get_ref(),
                        CStandard::NAMES.join(", ")
                    ),
                )
            })?);
        }
        if let Some(style) = raw.ivdep_style {
            let span = style.span();
            config.ivdep_style = Some(IvdepStyle::from_name(style.get_ref()).ok_or_else(|| {
                err(
                    span,
                    "ivdep-style",
                    format!(
                        "unknown style `{}`; use one of {}",
                        style.get_ref(),
                        IvdepStyle::NAMES.join(", ")
                    ),
                )
            })?);
        }
        let file_glob = |pattern: String, span: std::ops::Range<usize>, key: &str| {
            let glob = globset::GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
                .map_err(|e| err(span, key, format!("bad glob `{pattern}`: {}", e.kind())))?;
            Ok::<_, ConfigError>(FileGlob {
                basename: !pattern.contains('/'),
                matcher: glob.compile_matcher(),
                pattern,
            })
        };
        for (pattern, codes) in raw.per_file_ignores.unwrap_or_default() {
            let span = pattern.span();
            config.per_file_ignores.push(PerFileIgnore {
                glob: file_glob(pattern.into_inner(), span, "per-file-ignores")?,
                selectors: selectors(codes, "per-file-ignores")?,
            });
        }
        // in the file's order: the first pattern that matches wins
        let mut languages: Vec<_> = raw
            .per_file_languages
            .unwrap_or_default()
            .into_iter()
            .collect();
        languages.sort_by_key(|(pattern, _)| pattern.span().start);
        for (pattern, language) in languages {
            let span = pattern.span();
            let pattern = pattern.into_inner();
            let kind = SourceKind::from_name(language.get_ref()).ok_or_else(|| {
                err(
                    language.span(),
                    "per-file-languages",
                    format!(
                        "`{pattern}`: unknown language `{}`; use c, fortran (free form) or fortran-fixed",
                        language.get_ref()
                    ),
                )
            })?;
            config
                .per_file_languages
                .push((file_glob(pattern, span, "per-file-languages")?, kind));
        }
        if let Some(dir) = raw.cache_dir {
            if dir.get_ref().is_empty() {
                return Err(err(
                    dir.span(),
                    "cache-dir",
                    "an empty path; give a directory".to_string(),
                ));
            }
            config.cache_dir = Some(PathBuf::from(dir.into_inner()));
        }
        Ok(config)
    }

    /// The directory per-file-ignore globs are relative to.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }
}

/// Settings given on the command line (or by an editor), which override
/// the configuration file.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--select`: replaces the configuration's selection.
    pub select: Option<Vec<Selector>>,
    /// `--extend-select`: added to the selection (after `--select`).
    pub extend_select: Vec<Selector>,
    /// `--ignore`: removed after the selection.
    pub ignore: Vec<Selector>,
    /// `--define`: added to the configuration's `defines`.
    pub defines: Vec<String>,
    /// `--include-dir`: searched after the configuration's `include-dirs`.
    pub include_dirs: Vec<PathBuf>,
    /// `--pure-function`: added to `pure-functions`.
    pub pure_functions: Vec<String>,
    /// `--disable-loop-storage-check` (true turns it on).
    pub disable_loop_storage_check: bool,
    pub ivdep_style: Option<IvdepStyle>,
}

/// What applies to the files under one configuration: the analysis
/// options, the enabled rules and the per-file ignores.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub options: AnalysisOptions,
    /// Enabled codes, sorted.
    enabled: Vec<Code>,
    per_file_ignores: Vec<PerFileIgnore>,
    /// Directory per-file-ignore globs are relative to.
    pub root: PathBuf,
    /// The configured ivdep spelling (flag, then file); `None`: the default
    /// for the language and standard ([`Settings::ivdep_style_for`]).
    pub ivdep_style: Option<IvdepStyle>,
    pub c_standard: CStandard,
    /// The configured `cache-dir`, joined to the configuration's directory.
    pub cache_dir: Option<PathBuf>,
    /// `per-file-languages`: the first pattern that matches a file (relative
    /// to [`Settings::root`]) gives its language.
    per_file_languages: Vec<(FileGlob, SourceKind)>,
    /// Where `#include`d headers are searched (cpp's `-I`): the
    /// configuration's `include-dirs` (joined to its directory), then
    /// `--include-dir`.
    pub include_dirs: Vec<PathBuf>,
}

/// One layer of rule selection: `select` replaces, `extend` adds, `ignore`
/// removes.
fn apply_layer(
    enabled: &mut Vec<Code>,
    select: Option<&[Selector]>,
    extend: &[Selector],
    ignore: &[Selector],
) {
    if let Some(select) = select {
        *enabled = RULES
            .iter()
            .map(|r| r.code)
            .filter(|c| select.iter().any(|s| s.matches(*c)))
            .collect();
    }
    for r in RULES {
        if !enabled.contains(&r.code) && extend.iter().any(|s| s.matches(r.code)) {
            enabled.push(r.code);
        }
    }
    enabled.retain(|c| !ignore.iter().any(|s| s.matches(*c)));
}

impl Settings {
    /// The ivdep spelling for a file of this language.
    pub fn ivdep_style_for(&self, fortran: bool) -> IvdepStyle {
        self.ivdep_style
            .unwrap_or_else(|| IvdepStyle::default_for(fortran, self.c_standard))
    }

    /// Combines a configuration (if any) with command-line overrides.
    pub fn resolve(config: Option<&Config>, overrides: &Overrides) -> Settings {
        let mut enabled: Vec<Code> = RULES.iter().map(|r| r.code).collect();
        let mut options = AnalysisOptions::default();
        let mut settings = Settings::default();
        if let Some(c) = config {
            apply_layer(
                &mut enabled,
                c.select.as_deref(),
                &c.extend_select,
                &c.ignore,
            );
            options.defines = c.defines.clone();
            options.pure_functions = c.pure_functions.clone();
            options.disable_loop_storage_check = c.disable_loop_storage_check.unwrap_or(false);
            settings.per_file_ignores = c.per_file_ignores.clone();
            settings.root = c.dir().to_path_buf();
            settings.ivdep_style = c.ivdep_style;
            settings.c_standard = c.c_standard.unwrap_or_default();
            settings.cache_dir = c.cache_dir.as_ref().map(|d| c.dir().join(d));
            settings.per_file_languages = c.per_file_languages.clone();
            settings.include_dirs = c.include_dirs.iter().map(|d| c.dir().join(d)).collect();
        }
        apply_layer(
            &mut enabled,
            overrides.select.as_deref(),
            &overrides.extend_select,
            &overrides.ignore,
        );
        for d in &overrides.defines {
            if !options.defines.contains(d) {
                options.defines.push(d.clone());
            }
        }
        for d in &overrides.include_dirs {
            if !settings.include_dirs.contains(d) {
                settings.include_dirs.push(d.clone());
            }
        }
        for f in &overrides.pure_functions {
            if !options.pure_functions.contains(f) {
                options.pure_functions.push(f.clone());
            }
        }
        options.disable_loop_storage_check |= overrides.disable_loop_storage_check;
        if let Some(style) = overrides.ivdep_style {
            settings.ivdep_style = Some(style);
        }
        enabled.sort();
        settings.enabled = enabled;
        settings.options = options;
        settings
    }

    /// Whether `code` is reported for the file at `relative` (relative to
    /// [`Settings::root`]).
    pub fn is_enabled(&self, code: Code, relative: &Path) -> bool {
        self.enabled.binary_search(&code).is_ok()
            && !self
                .per_file_ignores
                .iter()
                .any(|p| p.matches(relative) && p.selectors.iter().any(|s| s.matches(code)))
    }

    /// The language `per-file-languages` gives the file at `relative`
    /// (relative to [`Settings::root`]), if any.
    pub fn language_for(&self, relative: &Path) -> Option<SourceKind> {
        self.per_file_languages
            .iter()
            .find(|(glob, _)| glob.matches(relative))
            .map(|(_, kind)| *kind)
    }

    /// Drops the diagnostics this configuration does not report for the
    /// file at `relative`.
    pub fn filter(&self, relative: &Path, diagnostics: &mut Vec<Diagnostic>) {
        diagnostics.retain(|d| self.is_enabled(d.code, relative));
    }
}

/// Settings and the directory their per-file ignores are relative to.
#[derive(Debug)]
pub struct Resolved {
    pub settings: Settings,
}

impl Resolved {
    /// `file` (absolute) relative to the configuration's directory, for
    /// per-file ignores.
    pub fn relative<'a>(&self, file: &'a Path) -> &'a Path {
        file.strip_prefix(&self.settings.root).unwrap_or(file)
    }
}

/// How a [`Resolver`] reads a file: `None` when there is no such file,
/// `Some(Err(message))` when it exists but cannot be read.
pub type ReadFile<'a> = &'a mut dyn FnMut(&Path) -> Option<Result<String, String>>;

/// Finds the configuration of each file: an explicit one for every file
/// (`--config`), or the nearest [`CONFIG_FILE_NAMES`] file in the file's
/// directory or above. Each directory is looked at once. The caller does
/// the reading (this crate does no I/O); paths must be absolute.
#[derive(Debug)]
pub struct Resolver {
    overrides: Overrides,
    explicit: Option<std::sync::Arc<Resolved>>,
    by_dir: std::collections::HashMap<PathBuf, Option<std::sync::Arc<Resolved>>>,
    defaults: std::sync::Arc<Resolved>,
}

/// A configuration error with the file it is in (`path:line:col: ...`).
fn located(path: &Path, e: ConfigError) -> String {
    format!("{}:{e}", path.display())
}

impl Resolver {
    /// `explicit`: the path of a configuration used for every file and its
    /// text.
    pub fn new(explicit: Option<(&Path, &str)>, overrides: Overrides) -> Result<Resolver, String> {
        let explicit = explicit
            .map(|(path, text)| {
                let config = Config::parse(text, path).map_err(|e| located(path, e))?;
                Ok::<_, String>(std::sync::Arc::new(Resolved {
                    settings: Settings::resolve(Some(&config), &overrides),
                }))
            })
            .transpose()?;
        Ok(Resolver {
            explicit,
            ..Resolver::discovering(overrides)
        })
    }

    /// A resolver that reads no configuration file: the defaults and the
    /// overrides apply to every file (`--no-config`).
    pub fn without_files(overrides: Overrides) -> Resolver {
        let resolver = Resolver::discovering(overrides);
        Resolver {
            explicit: Some(resolver.defaults.clone()),
            ..resolver
        }
    }

    /// A resolver that discovers configuration files (no explicit one).
    pub fn discovering(overrides: Overrides) -> Resolver {
        let defaults = std::sync::Arc::new(Resolved {
            settings: Settings::resolve(None, &overrides),
        });
        Resolver {
            overrides,
            explicit: None,
            by_dir: Default::default(),
            defaults,
        }
    }

    /// The settings for a file no configuration file applies to.
    pub fn defaults(&self) -> std::sync::Arc<Resolved> {
        self.defaults.clone()
    }

    /// The settings for the file at `file` (absolute). Errors name the
    /// configuration file, line, column and key; `shown` turns a path into
    /// the form to print.
    pub fn for_file(
        &mut self,
        file: &Path,
        read: ReadFile<'_>,
        shown: &dyn Fn(&Path) -> String,
    ) -> Result<std::sync::Arc<Resolved>, String> {
        if let Some(e) = &self.explicit {
            return Ok(e.clone());
        }
        let mut chain = Vec::new();
        let mut found = None;
        let mut dir = file.parent();
        'up: while let Some(d) = dir {
            if let Some(cached) = self.by_dir.get(d) {
                found = cached.clone();
                break;
            }
            chain.push(d.to_path_buf());
            for name in CONFIG_FILE_NAMES {
                let path = d.join(name);
                match read(&path) {
                    None => continue,
                    Some(Err(e)) => {
                        return Err(format!(
                            "{}: cannot read the configuration: {e}",
                            shown(&path)
                        ))
                    }
                    Some(Ok(text)) => {
                        let config = Config::parse(&text, &path)
                            .map_err(|e| located(Path::new(&shown(&path)), e))?;
                        found = Some(std::sync::Arc::new(Resolved {
                            settings: Settings::resolve(Some(&config), &self.overrides),
                        }));
                        break 'up;
                    }
                }
            }
            dir = d.parent();
        }
        for d in chain {
            self.by_dir.insert(d, found.clone());
        }
        Ok(found.unwrap_or_else(|| self.defaults.clone()))
    }

    /// Forgets every file looked at (after a configuration file changed).
    pub fn clear(&mut self) {
        self.by_dir.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("/p/csa-lint.toml"))
    }

    fn enabled(s: &Settings, path: &str) -> Vec<String> {
        RULES
            .iter()
            .filter(|r| s.is_enabled(r.code, Path::new(path)))
            .map(|r| r.code.to_string())
            .collect()
    }

    #[test]
    fn c_standard_picks_the_default_ivdep_spelling() {
        let s = Settings::resolve(None, &Overrides::default());
        assert_eq!(s.ivdep_style_for(false), IvdepStyle::GccPragma);
        assert_eq!(s.ivdep_style_for(true), IvdepStyle::Attribute);
        for (std, c) in [
            ("c23", IvdepStyle::Attribute),
            ("gnu2x", IvdepStyle::Attribute),
            ("gnu11", IvdepStyle::GccPragma),
            ("c89", IvdepStyle::GccPragma),
        ] {
            let cfg = parse(&format!("c-standard = \"{std}\"\n")).unwrap();
            let s = Settings::resolve(Some(&cfg), &Overrides::default());
            assert_eq!(s.ivdep_style_for(false), c, "{std}");
        }
        // an explicit style wins
        let cfg = parse("c-standard = \"c23\"\nivdep-style = \"intel-pragma\"\n").unwrap();
        let s = Settings::resolve(Some(&cfg), &Overrides::default());
        assert_eq!(s.ivdep_style_for(false), IvdepStyle::IntelPragma);
        let e = parse("c-standard = \"c++17\"\n").unwrap_err().to_string();
        assert!(e.contains("c-standard") && e.contains("c++17"), "{e}");
    }

    #[test]
    fn include_dirs_are_the_configurations_then_the_command_lines() {
        let cfg = parse("include-dirs = [\"inc\", \"/abs/hdr\"]\n").unwrap();
        let overrides = Overrides {
            include_dirs: vec![PathBuf::from("/cli"), PathBuf::from("/p/inc")],
            ..Overrides::default()
        };
        let s = Settings::resolve(Some(&cfg), &overrides);
        assert_eq!(
            s.include_dirs,
            [
                PathBuf::from("/p/inc"),
                PathBuf::from("/abs/hdr"),
                PathBuf::from("/cli")
            ]
        );
        assert!(parse("include-dirs = \"inc\"\n").is_err());
    }

    #[test]
    fn selectors() {
        assert_eq!(Selector::parse("ALL"), Ok(Selector::All));
        assert_eq!(Selector::parse("csa101"), Ok(Selector::Code(Code(101))));
        assert_eq!(
            Selector::parse("could-not-parallelize"),
            Ok(Selector::Code(Code(101)))
        );
        assert_eq!(Selector::parse("CSA1"), Ok(Selector::Prefix("CSA1".into())));
        assert_eq!(Selector::parse("CSA"), Ok(Selector::Prefix("CSA".into())));
        assert!(Selector::parse("CSA999").is_err());
        assert!(Selector::parse("CSA9").is_err());
        assert!(Selector::parse("E501").is_err());
        assert!(Selector::Prefix("CSA1".into()).matches(Code(110)));
        assert!(!Selector::Prefix("CSA1".into()).matches(Code(201)));
    }

    #[test]
    fn full_config_parses() {
        let c = parse(
            r#"
select = ["CSA1", "CSA2"]
ignore = ["CSA208"]
defines = ["USE_MPI"]
pure-functions = ["my_sqrt"]
ivdep-style = "gcc-pragma"
disable-loop-storage-check = true

[per-file-ignores]
"legacy/**/*.f" = ["CSA105", "CSA106"]
"gen_*.c" = ["ALL"]
"#,
        )
        .unwrap();
        assert_eq!(c.ivdep_style, Some(IvdepStyle::GccPragma));
        assert_eq!(c.defines, ["USE_MPI"]);
        let s = Settings::resolve(Some(&c), &Overrides::default());
        assert!(s.options.disable_loop_storage_check);
        assert_eq!(s.options.pure_functions, ["my_sqrt"]);
        let e = enabled(&s, "src/a.c");
        assert!(e.contains(&"CSA101".to_string()));
        assert!(!e.contains(&"CSA208".to_string()));
        assert!(!e.contains(&"CSA301".to_string()));
        assert!(!e.contains(&"CSA002".to_string()));
        let legacy = enabled(&s, "legacy/x/y.f");
        assert!(!legacy.contains(&"CSA105".to_string()));
        assert!(legacy.contains(&"CSA101".to_string()));
        // `*` does not cross directories, but a pattern without `/` also
        // matches the file name.
        assert!(enabled(&s, "gen_a.c").is_empty());
        assert!(enabled(&s, "sub/gen_a.c").is_empty());
        assert!(!enabled(&s, "legacy/y.c").is_empty());
    }

    #[test]
    fn command_line_layers_over_the_file() {
        let c = parse("select = [\"CSA1\"]\nignore = [\"CSA101\"]\ndefines = [\"A\"]\n").unwrap();
        let s = Settings::resolve(
            Some(&c),
            &Overrides {
                ignore: vec![Selector::Code(Code(102))],
                defines: vec!["B".into(), "A".into()],
                ..Overrides::default()
            },
        );
        let e = enabled(&s, "a.c");
        assert!(!e.contains(&"CSA101".to_string()) && !e.contains(&"CSA102".to_string()));
        assert!(e.contains(&"CSA103".to_string()) && !e.contains(&"CSA201".to_string()));
        assert_eq!(s.options.defines, ["A", "B"]);
        // --select replaces the file's selection and its ignores.
        let s = Settings::resolve(
            Some(&c),
            &Overrides {
                select: Some(vec![Selector::Code(Code(101)), Selector::Code(Code(201))]),
                ..Overrides::default()
            },
        );
        assert_eq!(enabled(&s, "a.c"), ["CSA101", "CSA201"]);
        // --extend-select adds to the file's selection, also what it ignores;
        // --ignore still removes.
        let s = Settings::resolve(
            Some(&c),
            &Overrides {
                extend_select: vec![Selector::Code(Code(101)), Selector::Code(Code(201))],
                ignore: vec![Selector::Code(Code(201))],
                ..Overrides::default()
            },
        );
        let e = enabled(&s, "a.c");
        assert!(e.contains(&"CSA101".to_string()) && e.contains(&"CSA102".to_string()));
        assert!(!e.contains(&"CSA201".to_string()) && !e.contains(&"CSA202".to_string()));
        // No configuration: everything.
        let s = Settings::resolve(None, &Overrides::default());
        assert_eq!(enabled(&s, "a.c").len(), RULES.len());
    }

    #[test]
    fn filter_drops_disabled_codes() {
        let c = parse("ignore = [\"CSA105\"]").unwrap();
        let s = Settings::resolve(Some(&c), &Overrides::default());
        let mut d = vec![
            Diagnostic::new(
                crate::rules::lookup(Code(105)).unwrap(),
                Span::new(0, 1),
                "x",
            ),
            Diagnostic::new(
                crate::rules::lookup(Code(101)).unwrap(),
                Span::new(0, 1),
                "y",
            ),
        ];
        s.filter(Path::new("a.c"), &mut d);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, Code(101));
    }

    #[test]
    fn errors_name_line_and_key() {
        let e = parse("select = [\"CSA1\"]\nselct = [\"CSA2\"]\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
        assert!(e.message.contains("selct"), "{e}");
        let e = parse("ignore = [\"CSA101\", \"CSA999\"]\n").unwrap_err();
        assert_eq!(
            (e.line, e.column, e.key.as_deref()),
            (1, 21, Some("ignore"))
        );
        assert!(e.message.contains("CSA999"), "{e}");
        let e = parse("\n\ndisable-loop-storage-check = \"yes\"\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(e.key.as_deref(), Some("disable-loop-storage-check"), "{e}");
        let e = parse("ivdep-style = \"pragma\"").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("ivdep-style"));
        assert!(e.to_string().contains("gcc-pragma"), "{e}");
        let e = parse("[per-file-ignores]\n\"a[.c\" = [\"ALL\"]\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("[per-file-ignores]\n\"*.c\" = [\"CSA77\"]\n").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (2, Some("per-file-ignores")));
        let e = parse("defines = [\"A B\"]").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("defines"));
        let e = parse("select = [").unwrap_err();
        assert_eq!(e.line, 1);
    }

    #[test]
    fn resolver_finds_the_nearest_file_and_caches_directories() {
        let files = [
            ("/r/csa-lint.toml", "ignore = [\"CSA101\"]"),
            ("/r/a/.csa-lint.toml", "ignore = [\"CSA102\"]"),
        ];
        let reads = std::cell::RefCell::new(Vec::new());
        let mut read = |p: &Path| {
            reads.borrow_mut().push(p.to_path_buf());
            files
                .iter()
                .find(|(f, _)| Path::new(f) == p)
                .map(|(_, t)| Ok(t.to_string()))
        };
        let shown = |p: &Path| p.display().to_string();
        let mut r = Resolver::new(None, Overrides::default()).unwrap();
        let top = r.for_file(Path::new("/r/x.c"), &mut read, &shown).unwrap();
        let deep = r
            .for_file(Path::new("/r/a/b/y.c"), &mut read, &shown)
            .unwrap();
        assert!(!top.settings.is_enabled(Code(101), Path::new("x.c")));
        assert!(top.settings.is_enabled(Code(102), Path::new("x.c")));
        assert!(deep.settings.is_enabled(Code(101), Path::new("y.c")));
        assert!(!deep.settings.is_enabled(Code(102), Path::new("y.c")));
        assert_eq!(deep.relative(Path::new("/r/a/b/y.c")), Path::new("b/y.c"));
        let n = reads.borrow().len();
        r.for_file(Path::new("/r/a/b/z.c"), &mut read, &shown)
            .unwrap();
        assert_eq!(reads.borrow().len(), n, "the directory was cached");
        let mut bad =
            |p: &Path| (p == Path::new("/q/csa-lint.toml")).then(|| Ok("x = 1".to_string()));
        let e = r
            .for_file(Path::new("/q/z.c"), &mut bad, &shown)
            .unwrap_err();
        assert!(
            e.starts_with("/q/csa-lint.toml:1:1: unknown key `x`"),
            "{e}"
        );
    }
}
