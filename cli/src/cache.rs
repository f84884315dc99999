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
//! Layout: `<cache-dir>/<build id>/results`, one file holding every entry
//! of the build (read once at the start of a run, written once at its end:
//! a file per entry cost more than the analysis of a small file on some
//! file systems), with `CACHEDIR.TAG` and a `.gitignore` of `*` at the top
//! so backups and git leave the directory alone. Concurrent runs are safe:
//! the file is written to a temporary file in the same directory and
//! renamed over its name (atomic), so a reader sees one run's whole file;
//! when two runs end together the last one's file wins and the other's new
//! entries are analysed again next time. Anything unreadable is a miss.
//! Pruning: each entry remembers the last day a run used it, and entries
//! not used for 30 days are not written again; the directories of other
//! builds not used for a week are removed (checked once a day).

use analyzer::diag::{
    Applicability, Code, Diagnostic, Edit, Fix, FixKind, Message, Related, Severity,
};
use analyzer::source::Span;
use analyzer::AnalysisOptions;
use csa_grammars::SourceKind;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Which build wrote an entry (see `build.rs`).
const BUILD_ID: &str = env!("CSA_LINT_BUILD_ID");
/// Bumped when the file format changes.
const FORMAT: u32 = 2;
const DAY: Duration = Duration::from_secs(24 * 3600);
/// Entries not used for this many days are dropped.
const ENTRY_LIFETIME_DAYS: u32 = 30;
/// Directories of other builds not used for this long are removed.
const OTHER_BUILD_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);
/// The file whose modification time says when the cache was last pruned.
const PRUNED_STAMP: &str = "last-pruned";
/// The file of this build's entries.
const RESULTS: &str = "results";

/// An open cache: the entries a previous run left, by key.
pub struct Cache {
    root: PathBuf,
    dir: PathBuf,
    entries: FxHashMap<u128, StoredEntry>,
}

/// What a run adds to the cache: the keys of the entries it used, and the
/// entries it made (the only part of a run's memory that grows with the
/// tree: the diagnostics of the files analysed, until the end).
#[derive(Default)]
pub struct Updates {
    used: rustc_hash::FxHashSet<u128>,
    made: FxHashMap<u128, Vec<CachedDiagnostic>>,
}

/// A cache key: the hash of everything the analysis result depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key(u128);

impl Key {
    pub fn new(kind: SourceKind, options: &AnalysisOptions, text: &str) -> Key {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(BUILD_ID.as_bytes());
        h.update(&FORMAT.to_le_bytes());
        h.update(kind.name().as_bytes());
        // every field (a new one does not compile until it is here), each
        // string after its length; not the Debug text, whose escaping of
        // every header's text was most of a warm re-run of MITgcm
        let AnalysisOptions {
            defines,
            pure_functions,
            disable_loop_storage_check,
            headers,
            prelude,
            every_body,
        } = options;
        let mut put = |s: &str| {
            h.update(&(s.len() as u64).to_le_bytes());
            h.update(s.as_bytes());
        };
        for list in [defines, pure_functions] {
            put(&list.len().to_string());
            list.iter().for_each(|d| put(d));
        }
        put(&headers.0.len().to_string());
        for (name, body) in &headers.0 {
            put(name);
            put(body);
        }
        put(prelude);
        put(if *disable_loop_storage_check {
            "1"
        } else {
            "0"
        });
        put(if *every_body { "1" } else { "0" });
        put(text);
        Key(h.digest128())
    }
}

/// Today, in days since 1970.
fn today() -> u32 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| (d.as_secs() / DAY.as_secs()) as u32)
}

/// The file: the format and every entry.
#[derive(Serialize, Deserialize)]
struct Stored {
    format: u32,
    entries: Vec<StoredEntry>,
}

#[derive(Serialize, Deserialize)]
struct StoredEntry {
    /// The key, as 32 hex digits.
    key: String,
    /// The last day (since 1970) a run used it.
    used: u32,
    diagnostics: Vec<CachedDiagnostic>,
}

impl Cache {
    /// Opens (creating it if need be) the cache under `root` and reads this
    /// build's entries. The error says why it cannot be used.
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
        let mut entries = FxHashMap::default();
        if let Some(stored) = std::fs::read(dir.join(RESULTS))
            .ok()
            .and_then(|b| serde_json::from_slice::<Stored>(&b).ok())
            .filter(|s| s.format == FORMAT)
        {
            for e in stored.entries {
                if let Ok(k) = u128::from_str_radix(&e.key, 16) {
                    entries.insert(k, e);
                }
            }
        }
        Ok(Cache {
            root: root.to_path_buf(),
            dir,
            entries,
        })
    }

    /// The diagnostics stored for `key`, if any (before rule selection),
    /// noted in `updates` as used.
    pub fn get(&self, key: Key) -> Option<(Vec<Diagnostic>, Updates)> {
        let entry = self.entries.get(&key.0)?;
        let diagnostics = entry
            .diagnostics
            .iter()
            .map(CachedDiagnostic::restore)
            .collect::<Option<Vec<_>>>()?;
        let mut used = Updates::default();
        used.used.insert(key.0);
        Some((diagnostics, used))
    }

    /// The entry for `key` holding `diagnostics`, to add to the cache.
    pub fn entry(key: Key, diagnostics: &[Diagnostic]) -> Updates {
        let mut u = Updates::default();
        u.made.insert(
            key.0,
            diagnostics.iter().map(CachedDiagnostic::of).collect(),
        );
        u
    }

    /// Writes the entries this run used or made, and the earlier ones used
    /// in the last 30 days, atomically (errors are ignored: the cache is an
    /// optimisation); prunes other builds once a day.
    pub fn save(self, updates: Updates) {
        let now = today();
        let Updates { used, mut made } = updates;
        let mut out: Vec<StoredEntry> = Vec::with_capacity(self.entries.len() + made.len());
        for (k, mut e) in self.entries {
            if made.contains_key(&k) {
                continue;
            }
            if used.contains(&k) {
                e.used = now;
            }
            if now.saturating_sub(e.used) <= ENTRY_LIFETIME_DAYS {
                out.push(e);
            }
        }
        for (k, diagnostics) in made.drain() {
            out.push(StoredEntry {
                key: format!("{k:032x}"),
                used: now,
                diagnostics,
            });
        }
        // a stable order: the same entries give the same bytes
        out.sort_by(|a, b| a.key.cmp(&b.key));
        let stored = Stored {
            format: FORMAT,
            entries: out,
        };
        if let Ok(bytes) = serde_json::to_vec(&stored) {
            let _ = write_atomic(&self.dir.join(RESULTS), &bytes);
        }
        prune(&self.root, &self.dir);
    }
}

impl Updates {
    pub fn extend(&mut self, other: Updates) {
        self.used.extend(other.used);
        self.made.extend(other.made);
    }
}

/// Removes the directories of other builds not used for a week, and
/// temporary files a killed run left in this build's directory, at most
/// once a day.
fn prune(root: &Path, own: &Path) {
    let stamp = root.join(PRUNED_STAMP);
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
    for e in std::fs::read_dir(own).into_iter().flatten().flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n != RESULTS) && age(&p).is_some_and(|a| a > DAY) {
            let _ = std::fs::remove_file(&p);
        }
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p == own || !p.is_dir() {
            continue;
        }
        // a build's `results` is rewritten by every run of that build
        let last = age(&p.join(RESULTS)).or_else(|| age(&p));
        if last.is_some_and(|a| a > OTHER_BUILD_LIFETIME) {
            let _ = std::fs::remove_dir_all(&p);
        }
    }
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

/// A [`Diagnostic`] as stored: the rule's name is looked up again by code;
/// messages keep their line references (`Message::encode`).
#[derive(Clone, Serialize, Deserialize)]
pub struct CachedDiagnostic {
    code: u16,
    severity: u8,
    span: (u32, u32),
    message: String,
    related: Vec<((u32, u32), String)>,
    help: Option<String>,
    fixes: Vec<CachedFix>,
}

#[derive(Clone, Serialize, Deserialize)]
struct CachedFix {
    kind: String,
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
            message: d.message.encode(),
            related: d
                .related
                .iter()
                .map(|r| (span(r.span), r.message.encode()))
                .collect(),
            help: d.help.as_ref().map(Message::encode),
            fixes: d
                .fixes
                .iter()
                .map(|f| CachedFix {
                    kind: f.kind.name().to_string(),
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
    fn restore(&self) -> Option<Diagnostic> {
        let rule = analyzer::rule(Code(self.code))?;
        let fixes = self
            .fixes
            .iter()
            .map(|f| {
                Some(Fix {
                    kind: FixKind::from_name(&f.kind)?,
                    title: f.title.clone(),
                    applicability: match f.applicability {
                        0 => Applicability::Safe,
                        1 => Applicability::Unsafe,
                        2 => Applicability::DisplayOnly,
                        _ => return None,
                    },
                    edits: f
                        .edits
                        .iter()
                        .map(|(s, new_text)| Edit {
                            span: unspan(*s),
                            new_text: new_text.clone(),
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
            message: Message::from(self.message.clone()),
            related: std::sync::Arc::new(
                self.related
                    .iter()
                    .map(|(s, message)| Related {
                        span: unspan(*s),
                        message: Message::from(message.clone()),
                    })
                    .collect(),
            ),
            help: self.help.clone().map(Message::from),
            fixes: std::sync::Arc::new(fixes),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Diagnostic> {
        let text = "void f(int n, float *a) {\n  __builtin_csa_parallel_loop();\n  for (int i = 1; i < n; i++) a[i] = a[i-1];\n}\n";
        analyzer::analyze(SourceKind::C, text, &AnalysisOptions::default()).into_diagnostics()
    }

    fn key(text: &str) -> Key {
        Key::new(SourceKind::C, &AnalysisOptions::default(), text)
    }

    #[test]
    fn an_entry_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        let diags = sample();
        assert!(!diags.is_empty());
        assert!(cache.get(key("text")).is_none());
        cache.save(Cache::entry(key("text"), &diags));
        let cache = Cache::open(dir.path()).unwrap();
        assert_eq!(cache.get(key("text")).map(|(d, _)| d), Some(diags));
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
        // each option counts, and no two differ only in where a string
        // ends or which list holds it
        let base = AnalysisOptions::default;
        let options = [
            AnalysisOptions {
                defines: vec!["A".into(), "B".into()],
                ..base()
            },
            AnalysisOptions {
                defines: vec!["AB".into()],
                ..base()
            },
            AnalysisOptions {
                pure_functions: vec!["A".into(), "B".into()],
                ..base()
            },
            AnalysisOptions {
                disable_loop_storage_check: true,
                ..base()
            },
            AnalysisOptions {
                headers: analyzer::Headers(vec![("h".into(), "#define A".into())]),
                ..base()
            },
            AnalysisOptions {
                headers: analyzer::Headers(vec![("h#".into(), "define A".into())]),
                ..base()
            },
            AnalysisOptions {
                prelude: "#define A".into(),
                ..base()
            },
            AnalysisOptions {
                every_body: true,
                ..base()
            },
            base(),
        ];
        let keys: std::collections::HashSet<Key> = options
            .iter()
            .map(|o| Key::new(SourceKind::C, o, "x"))
            .collect();
        assert_eq!(keys.len(), options.len());
    }

    #[test]
    fn a_damaged_file_or_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        let results = cache.dir.join(RESULTS);
        cache.save(Cache::entry(key("t"), &sample()));
        let good = std::fs::read_to_string(&results).unwrap();
        std::fs::write(&results, &good[..good.len() / 2]).unwrap();
        assert!(Cache::open(dir.path()).unwrap().get(key("t")).is_none());
        // an entry with a code this build does not have
        let k = format!("{:032x}", key("t").0);
        std::fs::write(
            &results,
            format!("{{\"format\":{FORMAT},\"entries\":[{{\"key\":\"{k}\",\"used\":0,\"diagnostics\":[{{\"code\":9999,\"severity\":0,\"span\":[0,1],\"message\":\"\",\"related\":[],\"help\":null,\"fixes\":[]}}]}}]}}"),
        )
        .unwrap();
        assert!(Cache::open(dir.path()).unwrap().get(key("t")).is_none());
    }

    #[test]
    fn unused_entries_and_old_builds_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        let mut u = Cache::entry(key("old"), &[]);
        u.extend(Cache::entry(key("kept"), &[]));
        cache.save(u);
        // make "old" 40 days unused
        let results = dir.path().join(BUILD_ID).join(RESULTS);
        let mut stored: Stored = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
        let old = format!("{:032x}", key("old").0);
        for e in &mut stored.entries {
            if e.key == old {
                e.used = today() - 40;
            }
        }
        std::fs::write(&results, serde_json::to_vec(&stored).unwrap()).unwrap();
        // another build, unused for 40 days, and a recent one
        let long_ago = SystemTime::now() - Duration::from_secs(40 * 24 * 3600);
        let other = dir.path().join("0.0.0-old");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join(RESULTS), "{}").unwrap();
        for p in [other.join(RESULTS), other.clone()] {
            std::fs::File::options()
                .write(p.is_file())
                .read(true)
                .open(&p)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }
        let recent = dir.path().join("0.0.0-recent");
        std::fs::create_dir_all(&recent).unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        assert!(cache.get(key("old")).is_some());
        // the first save pruned (nothing old then): not again the same day
        cache.save(Updates::default());
        assert!(other.exists());
        std::fs::remove_file(dir.path().join(PRUNED_STAMP)).unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        cache.save(Updates::default());
        let cache = Cache::open(dir.path()).unwrap();
        assert!(cache.get(key("old")).is_none());
        assert!(cache.get(key("kept")).is_some());
        assert!(!other.exists());
        assert!(recent.exists());
        // a use refreshes an entry's day
        let results = dir.path().join(BUILD_ID).join(RESULTS);
        let mut stored: Stored = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
        for e in &mut stored.entries {
            e.used = today() - 29;
        }
        std::fs::write(&results, serde_json::to_vec(&stored).unwrap()).unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        let (_, used) = cache.get(key("kept")).unwrap();
        cache.save(used);
        let stored: Stored = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
        assert_eq!(stored.entries.len(), 1);
        assert_eq!(stored.entries[0].used, today());
    }
}
