//! A header opened on its own is read as a file near it that includes it
//! gives it (`analyzer::includers`), as `csa-lint` does over the files of
//! its run: a document with syntax errors read alone is read again in the
//! context of its first includer among the files near it (its directory's
//! parent, walked a few levels down, in name order), and that reading is
//! kept for the document when it has fewer syntax errors. The search reads
//! files, so it runs on the analysis thread, once per opening of the
//! document (again after a configuration or watched-file change); what the
//! includer gives is kept with it ([`Found::context`]), so an edit of the
//! document reads neither the includer nor its headers again.

use analyzer::includers::{Context, Includes, Index};
use csa_grammars::SourceKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The includer that gives a document its context.
#[derive(Clone, Debug)]
pub struct Found {
    /// The language it gives (the includer's).
    pub kind: SourceKind,
    pub path: PathBuf,
    /// What the includer gives (its text before the line, the headers
    /// that text includes), read once: the search is made again after a
    /// configuration or watched-file change, not on every edit.
    pub context: Arc<Context>,
}

/// The first file near `path` that includes it, as cpp searches (`dirs`:
/// the include directories); `None` when there is none.
pub fn find(path: &Path, dirs: &[PathBuf]) -> Option<Found> {
    let path = std::path::absolute(path).ok()?;
    let files = analyzer::includers::nearby(&path, &mut list);
    let set: Vec<Includes<'_>> = files.iter().map(|p| Includes { path: p, dirs }).collect();
    let index = Index::build(&set, &mut read, &|p| p.is_file());
    let at = index.includer(&path)?;
    let ipath = files.get(at.file)?.clone();
    let itext = read(&ipath)?;
    let kind = csa_grammars::detect_with_content(&ipath, &itext)?;
    // (a Fortran `INCLUDE` gives no prelude and no headers: the context
    // is empty)
    let context = Context::of_includer(at, &ipath, &itext, dirs, &mut read);
    Some(Found {
        kind,
        path: ipath,
        context: Arc::new(context),
    })
}

/// The options a document is analysed with in `found`'s context: `base`
/// (which holds the document's own headers) with the includer's prelude,
/// the prelude's headers before the document's.
pub fn options(found: &Found, base: &analyzer::AnalysisOptions) -> analyzer::AnalysisOptions {
    let Context { prelude, headers } =
        Context::clone(&found.context).with_own(base.headers.clone());
    analyzer::AnalysisOptions {
        prelude,
        headers,
        ..base.clone()
    }
}

fn read(p: &Path) -> Option<String> {
    std::fs::read(p)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// A directory's entries (path, is a directory); none when it cannot be
/// read.
pub(crate) fn list(dir: &Path) -> Vec<(PathBuf, bool)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.path(), e.file_type().ok()?.is_dir())))
        .collect()
}
