//! A header opened on its own is read as a file near it that includes it
//! gives it (`analyzer::includers`), as `csa-lint` does over the files of
//! its run: a document with syntax errors read alone is read again in the
//! context of its first includer among the files near it (its directory's
//! parent, walked a few levels down, in name order), and that reading is
//! kept for the document when it has fewer syntax errors. The search reads
//! files, so it runs on the analysis thread, once per opening of the
//! document (again after a configuration or watched-file change).

use analyzer::includers::{Context, Includer, Includes, Index};
use csa_grammars::SourceKind;
use std::path::{Path, PathBuf};

/// The includer that gives a document its context.
#[derive(Clone, Debug)]
pub struct Found {
    /// The language it gives (the includer's).
    pub kind: SourceKind,
    pub path: PathBuf,
    pub at: Includer,
}

/// How far the search goes: levels below the directory searched, and
/// files read.
const MAX_DEPTH: usize = 3;
const MAX_FILES: usize = 4000;

/// The first file near `path` that includes it, as cpp searches (`dirs`:
/// the include directories); `None` when there is none.
pub fn find(path: &Path, dirs: &[PathBuf]) -> Option<Found> {
    let path = std::path::absolute(path).ok()?;
    let dir = path.parent()?;
    let root = dir.parent().unwrap_or(dir);
    let mut files = Vec::new();
    walk(root, 0, &mut files);
    let set: Vec<Includes<'_>> = files.iter().map(|p| Includes { path: p, dirs }).collect();
    let index = Index::build(
        &set,
        &mut |p| {
            std::fs::read(p)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        },
        &|p| p.is_file(),
    );
    let at = index.includer(&path)?;
    let ipath = files.get(at.file)?.clone();
    let itext = read(&ipath)?;
    let kind = csa_grammars::detect_with_content(&ipath, &itext)?;
    Some(Found {
        kind,
        path: ipath,
        at,
    })
}

/// The options a document at `path` (text `text`) is analysed with in
/// `found`'s context: `base` with its prelude and headers.
pub fn options(
    found: &Found,
    path: &Path,
    text: &str,
    base: &analyzer::AnalysisOptions,
    dirs: &[PathBuf],
) -> Option<analyzer::AnalysisOptions> {
    let itext = read(&found.path)?;
    let Context { prelude, headers } =
        Context::new(found.at, &found.path, &itext, path, text, dirs, &mut |p| {
            std::fs::read_to_string(p).ok()
        });
    let mut options = base.clone();
    if found.at.cpp {
        options.prelude = prelude;
        options.headers = headers;
    }
    Some(options)
}

fn read(p: &Path) -> Option<String> {
    std::fs::read(p)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The source files under `dir` (not hidden, at most [`MAX_DEPTH`] levels
/// down, at most [`MAX_FILES`]), in name order.
fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(PathBuf, bool)> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| Some((e.path(), e.file_type().ok()?.is_dir())))
        .collect();
    entries.sort();
    for (p, is_dir) in entries {
        if out.len() >= MAX_FILES {
            return;
        }
        if is_dir {
            if depth < MAX_DEPTH {
                walk(&p, depth + 1, out);
            }
        } else if csa_grammars::detect(&p).is_some() {
            out.push(p);
        }
    }
}
