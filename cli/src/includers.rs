//! The files of the run that others of the run include, and the context
//! their first includer gives them (`analyzer::includers`): a file with
//! syntax errors read alone is read again as its first includer in the
//! run's order gives it (its text before the include line as the prelude,
//! the headers that text includes, its language), and `lint_file` reports
//! the reading with fewer syntax errors. The index is built on first need,
//! once per run, from every file of the run (a run without syntax errors
//! never builds it).

use crate::{HeaderFiles, Job};
use analyzer::includers::{Context as Includes, Includer, Index};
use std::sync::OnceLock;

/// The run's files and, built on first need, who includes each.
pub(crate) struct Includers<'a> {
    jobs: &'a [Job],
    header_files: &'a HeaderFiles,
    index: OnceLock<Index>,
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
            Index::build(
                &files,
                &mut |p| {
                    std::fs::read(p)
                        .ok()
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                },
                &|p| p.is_file(),
            )
        });
        let at: Includer = index.includer(&crate::settings::absolute(&job.path))?;
        let includer = self.jobs.get(at.file)?;
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
            let Includes { prelude, headers } = Includes::new(
                at,
                &includer.path,
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
