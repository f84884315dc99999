//! The files of a run that others of the run include, and the context
//! their first includer gives them.
//!
//! A header is compiled inside the file that `#include`s it: with the
//! macros that file and its earlier headers defined (MITgcm's `_RL`, zlib's
//! `FAR` in `inftrees.h`, which leaves `zconf.h` to its includer) and in
//! that file's language (a `.h` included by a fixed-form `.F` file is fixed
//! form). Linted on its own it may not parse. When a file of the run has
//! syntax errors (CSA001) read alone and another file of the run includes
//! it, `lint_file` reads it again as its first includer (in the run's
//! order) gives it: the includer's text before the `#include` line as the
//! prelude (`AnalysisOptions::prelude`), the headers that text includes,
//! and the includer's language; the reading with fewer syntax errors is
//! reported. A Fortran `INCLUDE` gives only the language (the compiler
//! reads its file after cpp has run).
//!
//! The index of who includes what is built on first need, once per run,
//! from every file of the run (a run without syntax errors never builds
//! it). A name is resolved as cpp does (a quoted name beside its includer,
//! then in the includer's include directories; an angled one in those
//! only); paths are compared after making them absolute and removing `.`
//! and `..` (symbolic links are not followed).

use crate::{read_headers, HeaderFiles, Job};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// Where a file of the run is first included.
#[derive(Clone, Copy, Debug)]
struct Includer {
    /// The including job.
    job: usize,
    /// Where its include line starts.
    offset: usize,
    /// A cpp `#include` (else a Fortran `INCLUDE`).
    cpp: bool,
}

/// The run's files and, built on first need, who includes each.
pub(crate) struct Includers<'a> {
    jobs: &'a [Job],
    header_files: &'a HeaderFiles,
    index: OnceLock<HashMap<PathBuf, Includer>>,
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
        }
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
        let index = self.index.get_or_init(|| build(self.jobs));
        let at = index.get(&normalized(&job.path))?;
        let includer = self.jobs.get(at.job)?;
        let bytes = std::fs::read(&includer.path).ok()?;
        let itext = String::from_utf8_lossy(&bytes);
        let ikind = if includer.kind_given {
            includer.kind
        } else {
            csa_grammars::detect_with_content(&includer.path, &itext).unwrap_or(includer.kind)
        };
        let kind = if job.kind_given { job.kind } else { ikind };
        let mut options = opts.clone();
        if at.cpp {
            let prelude = itext.get(..at.offset).unwrap_or_default();
            let dirs = &job.resolved.settings.include_dirs;
            let files = self.header_files;
            let mut headers =
                read_headers(files, &includer.path, prelude, dirs).unwrap_or_default();
            let own = read_headers(files, &job.path, text, dirs).unwrap_or_default();
            for (name, body) in own.0 {
                if !headers.0.iter().any(|(n, _)| *n == name) {
                    headers.0.push((name, body));
                }
            }
            options.headers = headers;
            options.prelude = prelude.to_string();
        }
        Some(Context { kind, options })
    }
}

/// Who first includes each file of `jobs` (in their order), by normalized
/// path.
fn build(jobs: &[Job]) -> HashMap<PathBuf, Includer> {
    let paths: HashMap<PathBuf, usize> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (normalized(&j.path), i))
        .collect();
    let mut index: HashMap<PathBuf, Includer> = HashMap::new();
    for (i, job) in jobs.iter().enumerate() {
        let Ok(bytes) = std::fs::read(&job.path) else {
            continue;
        };
        // (`include`, `INCLUDE`, `Include`)
        if memchr::memmem::find(&bytes, b"nclude").is_none()
            && memchr::memmem::find(&bytes, b"NCLUDE").is_none()
        {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let dir = job.path.parent().unwrap_or(Path::new("."));
        let dirs = &job.resolved.settings.include_dirs;
        for line in analyzer::Headers::include_lines(&text) {
            let beside = (!line.angled).then(|| dir.join(&line.name));
            let found = beside
                .into_iter()
                .chain(dirs.iter().map(|d| d.join(&line.name)))
                .find_map(|p| {
                    let n = normalized(&p);
                    match paths.get(&n) {
                        Some(&j) => Some(Some((n, j))),
                        // a file outside the run: it is the one included
                        None if p.is_file() => Some(None),
                        None => None,
                    }
                })
                .flatten();
            if let Some((n, j)) = found {
                if j != i {
                    index.entry(n).or_insert(Includer {
                        job: i,
                        offset: line.offset,
                        cpp: line.cpp,
                    });
                }
            }
        }
    }
    index
}

/// `p` absolute, without `.` and with each `..` taking off the component
/// before it.
fn normalized(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in crate::settings::absolute(p).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_paths_lose_dots() {
        let a = normalized(Path::new("/a/b/../c/./d.h"));
        assert_eq!(a, PathBuf::from("/a/c/d.h"));
    }
}
