//! The files of the run that others of the run include, and the context
//! their first includer gives them (`analyzer::includers`): a file with
//! syntax errors read alone is read again as its first includer in the
//! run's order gives it (its text before the include line as the prelude,
//! the headers that text includes, its language), and `lint_file` reports
//! the reading with fewer syntax errors. The index is built on first need,
//! once per run, from every file of the run (a run without syntax errors
//! never builds it). A file named on the command line that no file of the
//! run includes is looked for among the files near it
//! (`analyzer::includers::nearby`, as the language server does), indexed
//! once per directory walked.

use crate::{HeaderFiles, Job};
use analyzer::includers::{Context as Includes, Includer, Index};
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A file's text (invalid UTF-8 replaced); `None` when it cannot be read.
fn read_lossy(p: &Path) -> Option<String> {
    std::fs::read(p)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The run's files and, built on first need, who includes each.
pub(crate) struct Includers<'a> {
    jobs: &'a [Job],
    header_files: &'a HeaderFiles,
    index: OnceLock<Index>,
    /// The files near named files and who includes each, by the directory
    /// walked (and the include directories they were resolved with).
    nearby: Mutex<FxHashMap<NearbyKey, Arc<Nearby>>>,
}

/// A directory walked for files near a named one, and the include
/// directories its files are resolved with.
type NearbyKey = (PathBuf, Vec<PathBuf>);

/// Files near a named one, and who includes each.
struct Nearby {
    files: Vec<PathBuf>,
    index: Index,
}

/// What a file is read with in its includer's context.
pub(crate) struct Context {
    pub kind: csa_grammars::SourceKind,
    pub options: analyzer::AnalysisOptions,
}

impl<'a> Includers<'a> {
    pub(crate) fn new(jobs: &'a [Job], header_files: &'a HeaderFiles) -> Self {
        Includers {
            jobs,
            header_files,
            index: OnceLock::new(),
            nearby: Mutex::default(),
        }
    }

    /// The first file near `path` (absolute; named on the command line,
    /// resolved with include directories `dirs`) that includes it, and
    /// where.
    fn includer_nearby(&self, path: &Path, dirs: &[PathBuf]) -> Option<(PathBuf, Includer)> {
        let root = analyzer::includers::nearby_root(path)?.to_path_buf();
        let key = (root, dirs.to_vec());
        let found = self.nearby.lock().ok()?.get(&key).cloned();
        let near = match found {
            Some(n) => n,
            None => {
                let files = analyzer::includers::nearby(path, &mut |d| {
                    let Ok(entries) = std::fs::read_dir(d) else {
                        return Vec::new();
                    };
                    entries
                        .filter_map(Result::ok)
                        .filter_map(|e| Some((e.path(), e.file_type().ok()?.is_dir())))
                        .collect()
                });
                let set: Vec<analyzer::includers::Includes<'_>> = files
                    .iter()
                    .map(|p| analyzer::includers::Includes { path: p, dirs })
                    .collect();
                let index = Index::build(&set, &mut read_lossy, &|p| p.is_file());
                let n = Arc::new(Nearby { files, index });
                self.nearby.lock().ok()?.insert(key, n.clone());
                n
            }
        };
        let at = near.index.includer(path)?;
        Some((near.files.get(at.file)?.clone(), at))
    }

    /// The context `job` (whose text is `text`, analysed alone with
    /// `opts`) has in its first includer of the run; `None` when no file
    /// of the run includes it, or the includer cannot be read.
    pub(crate) fn context(
        &self,
        job: &Job,
        text: &str,
        opts: &analyzer::AnalysisOptions,
    ) -> Option<Context> {
        let index = self.index.get_or_init(|| {
            let paths: Vec<std::path::PathBuf> = self
                .jobs
                .iter()
                .map(|j| crate::settings::absolute(&j.path))
                .collect();
            let files: Vec<analyzer::includers::Includes<'_>> = self
                .jobs
                .iter()
                .zip(&paths)
                .map(|(j, path)| analyzer::includers::Includes {
                    path,
                    dirs: &j.resolved.settings.include_dirs,
                })
                .collect();
            Index::build(&files, &mut read_lossy, &|p| p.is_file())
        });
        let path = crate::settings::absolute(&job.path);
        let dirs = &job.resolved.settings.include_dirs;
        // (the includer's path, where it includes the file, its language
        // in the run and whether that was given)
        let (ipath, at, run_kind) = match index.includer(&path) {
            Some(at) => {
                let includer = self.jobs.get(at.file)?;
                let kind = (includer.kind, includer.kind_given);
                (includer.path.clone(), at, Some(kind))
            }
            None if job.named => {
                let (ipath, at) = self.includer_nearby(&path, dirs)?;
                (ipath, at, None)
            }
            None => return None,
        };
        let itext = read_lossy(&ipath)?;
        let ikind = match run_kind {
            Some((kind, true)) => kind,
            Some((kind, false)) => {
                csa_grammars::detect_with_content(&ipath, &itext).unwrap_or(kind)
            }
            None => csa_grammars::detect_with_content(&ipath, &itext)?,
        };
        let kind = if job.kind_given { job.kind } else { ikind };
        let mut options = opts.clone();
        if at.cpp {
            let Includes { prelude, headers } = Includes::new(
                at,
                &ipath,
                &itext,
                &job.path,
                text,
                &job.resolved.settings.include_dirs,
                &mut |p| self.header_files.read(p),
            );
            options.headers = headers;
            options.prelude = prelude;
        }
        Some(Context { kind, options })
    }
}
