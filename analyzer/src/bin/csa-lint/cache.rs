//! The result cache: what the analysis said about a file, kept on disk so
//! that a re-run over an unchanged tree does not parse it again.
//!
//! Design (after ruff's): an entry is keyed by a 128-bit hash (xxh3) of the
//! build (`CSA_LINT_BUILD_ID`: the version and a hash of the analyzer's
//! sources, so no other build reads it), the language the file is read
//! as, the analysis options (defines, pure functions, the storage check)
//! and the file's bytes. It holds the diagnostics *before* rule selection
//! and per-file ignores, which the caller applies, so changing `select`
//! or `per-file-ignores` keeps every entry valid, and a file is looked up
//! by its content, not its path or modification time (a copy, a checkout
//! of another branch and back, a touched file: all hits).
//!
//! Layout: `<cache-dir>/<build id>/<2 hex digits>/<30 hex digits>`, one
//! small JSON file per entry, with `CACHEDIR.TAG` and a `.gitignore` of
//! `*` at the top so backups and git leave it alone. Concurrent runs are
//! safe: an entry is written to a temporary file in the same directory and
//! renamed over its name (atomic), two runs writing the same key write
//! the same bytes, and a reader treats anything it cannot read or parse as
//! a miss. Pruning, at most once a day: the directories of other builds
//! not used for a week are removed, and this build's entries not read for
//! 30 days (a hit refreshes an entry's modification time once a day).

use analyzer::analysis::AnalysisOptions;
use analyzer::diag::{Applicability, Code, Diagnostic, Edit, Fix, Related, Severity};
use analyzer::source::Span;
use csa_grammars::SourceKind;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Which build wrote an entry (see `build.rs`).
const BUILD_ID: &str = env!("CSA_LINT_BUILD_ID");
/// Bumped when the entry format changes.
const FORMAT: u32 = 1;
const DAY: Duration = Duration::from_secs(24 * 3600);
/// Entries of this build not read for this long are removed.
const ENTRY_LIFETIME: Duration = Duration::from_secs(30 * 24 * 3600);
/// Directories of other builds not used for this long are removed.
const OTHER_BUILD_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);
/// The file whose modification time says when the cache was last pruned.
const PRUNED_STAMP: &str = "last-pruned";

/// An open cache directory for this build.
pub struct Cache {
    root: PathBuf,
    dir: PathBuf,
}

/// A cache key: the hash of everything the analysis result depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key(u128);

impl Key {
    pub fn new(kind: SourceKind, options: &AnalysisOptions, text: &str) -> Key {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(BUILD_ID.as_bytes());
        h.update(&FORMAT.to_le_bytes());
        h.update(kind.name().as_bytes());
        // `AnalysisOptions` holds vectors and booleans only: its Debug text
        // is a faithful, stable image of it
        h.update(format!("{options:?}").as_bytes());
        h.update(&(text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
        Key(h.digest128())
    }

    fn hex(self) -> String {
        format!("{:032x}", self.0)
    }
}

impl Cache {
    /// Opens (creating it if need be) the cache under `root`. The error
    /// says why it cannot be used.
    pub fn open(root: &Path) -> Result<Cache, String> {
        let dir = root.join(BUILD_ID);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("{}: cannot create the cache directory: {e}", root.display()))?;
        // mark the directory as a cache (https://bford.info/cachedir/) and
        // keep it out of git; written once
        let tag = root.join("CACHEDIR.TAG");
        if !tag.exists() {
            let _ = write_atomic(
                &tag,
                b"Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by csa-lint.\n",
            );
            let _ = write_atomic(
                &root.join(".gitignore"),
                b"# Automatically created by csa-lint.\n*\n",
            );
        }
        Ok(Cache {
            root: root.to_path_buf(),
            dir,
        })
    }

    fn path(&self, key: Key) -> PathBuf {
        let hex = key.hex();
        self.dir.join(&hex[..2]).join(&hex[2..])
    }

    /// The diagnostics stored for `key`, if any (before rule selection).
    pub fn get(&self, key: Key) -> Option<Vec<Diagnostic>> {
        let path = self.path(key);
        let bytes = std::fs::read(&path).ok()?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        let diagnostics = entry
            .diagnostics
            .into_iter()
            .map(CachedDiagnostic::restore)
            .collect::<Option<Vec<_>>>()?;
        // keep a used entry from being pruned (a write at most once a day)
        if let Ok(meta) = std::fs::metadata(&path) {
            let age = meta
                .modified()
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok());
            if age.is_some_and(|a| a > DAY) {
                if let Ok(f) = std::fs::File::options().write(true).open(&path) {
                    let _ = f.set_modified(SystemTime::now());
                }
            }
        }
        Some(diagnostics)
    }

    /// Stores the diagnostics of `key` (errors are ignored: the cache is
    /// an optimisation).
    pub fn put(&self, key: Key, diagnostics: &[Diagnostic]) {
        let entry = Entry {
            diagnostics: diagnostics.iter().map(CachedDiagnostic::of).collect(),
        };
        let Ok(bytes) = serde_json::to_vec(&entry) else {
            return;
        };
        let path = self.path(key);
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = write_atomic(&path, &bytes);
    }

    /// Removes what has not been used for long (see the module comment), at
    /// most once a day.
    pub fn prune(&self) {
        let stamp = self.root.join(PRUNED_STAMP);
        let now = SystemTime::now();
        let age = |p: &Path| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| now.duration_since(m).ok())
        };
        if age(&stamp).is_some_and(|a| a < DAY) {
            return;
        }
        let _ = write_atomic(&stamp, b"");
        // other builds
        if let Ok(entries) = std::fs::read_dir(&self.root) {
            for e in entries.flatten() {
                let p = e.path();
                if p == self.dir || !p.is_dir() {
                    continue;
                }
                if newest_use(&p).is_some_and(|t| {
                    now.duration_since(t)
                        .is_ok_and(|a| a > OTHER_BUILD_LIFETIME)
                }) {
                    let _ = std::fs::remove_dir_all(&p);
                }
            }
        }
        // this build's stale entries
        let Ok(shards) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for shard in shards.flatten() {
            let Ok(entries) = std::fs::read_dir(shard.path()) else {
                continue;
            };
            for e in entries.flatten() {
                if age(&e.path()).is_some_and(|a| a > ENTRY_LIFETIME) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
}

/// The newest modification time of a build directory's shards (a new
/// entry updates its shard's time).
fn newest_use(dir: &Path) -> Option<SystemTime> {
    let own = std::fs::metadata(dir).and_then(|m| m.modified()).ok();
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| e.metadata().and_then(|m| m.modified()).ok())
        .chain(own)
        .max()
}

/// Writes `bytes` to `path` through a temporary file renamed over it.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Where the cache lives when neither `--cache-dir`, `CSA_LINT_CACHE_DIR`
/// nor `cache-dir` says: `.csa_lint_cache` in `project` (the directory of
/// the configuration file that applies to the working directory, else the
/// working directory), or, when that cannot be created, the user's cache
/// directory (`$XDG_CACHE_HOME/csa-lint`, `~/.cache/csa-lint`).
pub fn open_default(project: &Path) -> Result<Cache, String> {
    let local = project.join(".csa_lint_cache");
    match Cache::open(&local) {
        Ok(c) => Ok(c),
        Err(first) => {
            let user = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|d| d.join("csa-lint"));
            match user {
                Some(u) => Cache::open(&u).map_err(|second| format!("{first}; {second}")),
                None => Err(first),
            }
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Entry {
    diagnostics: Vec<CachedDiagnostic>,
}

/// A [`Diagnostic`] as stored: the rule's name is looked up again by code.
#[derive(Serialize, Deserialize)]
struct CachedDiagnostic {
    code: u16,
    severity: u8,
    span: (u32, u32),
    message: String,
    related: Vec<((u32, u32), String)>,
    help: Option<String>,
    fixes: Vec<CachedFix>,
}

#[derive(Serialize, Deserialize)]
struct CachedFix {
    title: String,
    applicability: u8,
    edits: Vec<((u32, u32), String)>,
}

fn span(s: Span) -> (u32, u32) {
    (s.start, s.end)
}

fn unspan((start, end): (u32, u32)) -> Span {
    Span { start, end }
}

impl CachedDiagnostic {
    fn of(d: &Diagnostic) -> CachedDiagnostic {
        CachedDiagnostic {
            code: d.code.0,
            severity: match d.severity {
                Severity::Info => 0,
                Severity::Warning => 1,
                Severity::Error => 2,
            },
            span: span(d.span),
            message: d.message.clone(),
            related: d
                .related
                .iter()
                .map(|r| (span(r.span), r.message.clone()))
                .collect(),
            help: d.help.clone(),
            fixes: d
                .fixes
                .iter()
                .map(|f| CachedFix {
                    title: f.title.clone(),
                    applicability: match f.applicability {
                        Applicability::Safe => 0,
                        Applicability::Unsafe => 1,
                        Applicability::DisplayOnly => 2,
                    },
                    edits: f
                        .edits
                        .iter()
                        .map(|e| (span(e.span), e.new_text.clone()))
                        .collect(),
                })
                .collect(),
        }
    }

    /// `None` for an entry this build cannot have written (an unknown code).
    fn restore(self) -> Option<Diagnostic> {
        let rule = analyzer::rules::lookup(Code(self.code))?;
        let fixes = self
            .fixes
            .into_iter()
            .map(|f| {
                Some(Fix {
                    title: f.title,
                    applicability: match f.applicability {
                        0 => Applicability::Safe,
                        1 => Applicability::Unsafe,
                        2 => Applicability::DisplayOnly,
                        _ => return None,
                    },
                    edits: f
                        .edits
                        .into_iter()
                        .map(|(s, new_text)| Edit {
                            span: unspan(s),
                            new_text,
                        })
                        .collect(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Diagnostic {
            code: Code(self.code),
            rule: rule.name,
            severity: match self.severity {
                0 => Severity::Info,
                1 => Severity::Warning,
                2 => Severity::Error,
                _ => return None,
            },
            span: unspan(self.span),
            message: self.message,
            related: self
                .related
                .into_iter()
                .map(|(s, message)| Related {
                    span: unspan(s),
                    message,
                })
                .collect(),
            help: self.help,
            fixes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Diagnostic> {
        let text = "void f(int n, float *a) {\n  __builtin_csa_parallel_loop();\n  for (int i = 1; i < n; i++) a[i] = a[i-1];\n}\n";
        analyzer::analysis::analyze(SourceKind::C, text, &AnalysisOptions::default()).diagnostics
    }

    #[test]
    fn an_entry_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        let diags = sample();
        assert!(!diags.is_empty());
        let key = Key::new(SourceKind::C, &AnalysisOptions::default(), "text");
        assert!(cache.get(key).is_none());
        cache.put(key, &diags);
        assert_eq!(cache.get(key), Some(diags));
        assert!(dir.path().join("CACHEDIR.TAG").is_file());
    }

    #[test]
    fn the_key_covers_language_options_and_text() {
        let o = AnalysisOptions::default();
        let k = Key::new(SourceKind::C, &o, "x");
        assert_eq!(k, Key::new(SourceKind::C, &o, "x"));
        assert_ne!(k, Key::new(SourceKind::FortranFree, &o, "x"));
        assert_ne!(k, Key::new(SourceKind::C, &o, "y"));
        let defined = AnalysisOptions {
            defines: vec!["CSA".to_string()],
            ..AnalysisOptions::default()
        };
        assert_ne!(k, Key::new(SourceKind::C, &defined, "x"));
    }

    #[test]
    fn a_damaged_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        let key = Key::new(SourceKind::C, &AnalysisOptions::default(), "t");
        cache.put(key, &sample());
        std::fs::write(cache.path(key), b"{\"diagnostics\": [{\"code\": 9").unwrap();
        assert!(cache.get(key).is_none());
        std::fs::write(
            cache.path(key),
            b"{\"diagnostics\":[{\"code\":9999,\"severity\":0,\"span\":[0,1],\"message\":\"\",\"related\":[],\"help\":null,\"fixes\":[]}]}",
        )
        .unwrap();
        assert!(cache.get(key).is_none());
    }

    #[test]
    fn pruning_removes_other_old_builds_only() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        let key = Key::new(SourceKind::C, &AnalysisOptions::default(), "t");
        cache.put(key, &[]);
        let old = dir.path().join("0.0.0-old");
        std::fs::create_dir_all(old.join("ab")).unwrap();
        let long_ago = SystemTime::now() - Duration::from_secs(40 * 24 * 3600);
        for p in [old.join("ab"), old.clone()] {
            std::fs::File::open(&p)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }
        let recent = dir.path().join("0.0.0-recent");
        std::fs::create_dir_all(&recent).unwrap();
        cache.prune();
        assert!(!old.exists());
        assert!(recent.exists());
        assert!(cache.get(key).is_some());
        // this build's entries not read for 30 days go too
        let f = std::fs::File::options()
            .write(true)
            .open(cache.path(key))
            .unwrap();
        f.set_modified(long_ago).unwrap();
        std::fs::remove_file(dir.path().join(PRUNED_STAMP)).unwrap();
        cache.prune();
        assert!(cache.get(key).is_none());
    }
}
