//! Who includes a file, and the context that includer gives it.
//!
//! A header is compiled inside the file that `#include`s it: with the
//! macros that file and its earlier headers defined (MITgcm's `_RL`, zlib's
//! `FAR` in `inftrees.h`, which leaves `zconf.h` to its includer) and in
//! that file's language (a `.h` included by a fixed-form `.F` file is fixed
//! form). Linted on its own it may not parse. The binaries read such a
//! file again as one of its includers gives it ([`Context`]), and report
//! that reading when it has fewer syntax errors: `csa-lint` over the files
//! of its run, the language server over the files near the document.
//!
//! [`Index`] says who first includes each of a set of files (in the set's
//! order), as cpp resolves a name: a quoted name beside its includer, then
//! in the includer's include directories; an angled one in those only. A
//! Fortran `INCLUDE` counts too, for the language only (the compiler reads
//! its file after cpp has run: no macro reaches it). The caller does the
//! I/O (reading, whether a path is a file) and gives absolute paths;
//! paths are compared without `.` and `..` (symbolic links are not
//! followed).

use crate::frontend::fortran::cpp::Headers;
use rustc_hash::FxHashMap;
use std::path::{Component, Path, PathBuf};

/// Where a file is first included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Includer {
    /// The including file: its index in the set given to [`Index::build`].
    pub file: usize,
    /// Where its include line starts.
    pub offset: usize,
    /// A cpp `#include` (else a Fortran `INCLUDE`).
    pub cpp: bool,
}

/// Who first includes each file of a set.
#[derive(Debug, Default)]
pub struct Index {
    map: FxHashMap<PathBuf, Includer>,
}

/// A file that includes others: its absolute path and include directories
/// (absolute).
pub struct Includes<'a> {
    pub path: &'a Path,
    pub dirs: &'a [PathBuf],
}

impl Index {
    /// The index of `files` (absolute paths), in their order: each file is
    /// read with `read` (`None`: skipped), and a name that resolves to a
    /// path outside the set stops its search where `is_file` says a file
    /// is.
    pub fn build(
        files: &[Includes<'_>],
        read: &mut dyn FnMut(&Path) -> Option<String>,
        is_file: &dyn Fn(&Path) -> bool,
    ) -> Index {
        let paths: FxHashMap<PathBuf, usize> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (normalized(f.path), i))
            .collect();
        let mut map: FxHashMap<PathBuf, Includer> = FxHashMap::default();
        for (i, f) in files.iter().enumerate() {
            let Some(text) = read(f.path) else {
                continue;
            };
            // (`include`, `INCLUDE`, `Include`)
            let b = text.as_bytes();
            if memchr::memmem::find(b, b"nclude").is_none()
                && memchr::memmem::find(b, b"NCLUDE").is_none()
            {
                continue;
            }
            let dir = f.path.parent().unwrap_or(Path::new("/"));
            for line in Headers::include_lines(&text) {
                let beside = (!line.angled).then(|| dir.join(&line.name));
                let found = beside
                    .into_iter()
                    .chain(f.dirs.iter().map(|d| d.join(&line.name)))
                    .find_map(|p| {
                        let n = normalized(&p);
                        match paths.get(&n) {
                            Some(&j) => Some(Some((n, j))),
                            // a file outside the set: it is the one included
                            None if is_file(&p) => Some(None),
                            None => None,
                        }
                    })
                    .flatten();
                if let Some((n, _)) = found.filter(|&(_, j)| j != i) {
                    map.entry(n).or_insert(Includer {
                        file: i,
                        offset: line.offset,
                        cpp: line.cpp,
                    });
                }
            }
        }
        Index { map }
    }

    /// The first includer of the file at `path` (absolute).
    pub fn includer(&self, path: &Path) -> Option<Includer> {
        self.map.get(&normalized(path)).copied()
    }

    /// How many files of the set some other one includes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// How far [`nearby`] looks: levels below the directory it walks, and
/// files it lists.
pub const NEARBY_DEPTH: usize = 3;
pub const NEARBY_FILES: usize = 4000;

/// The source files near `path` that may include it, in name order: those
/// under its directory's parent (not hidden, at most [`NEARBY_DEPTH`]
/// levels down, at most [`NEARBY_FILES`]) whose names say they are C or
/// Fortran. `list` gives a directory's entries (path, is a directory);
/// the caller does the I/O. A header linted without its includers is read
/// as one of these gives it (the language server for an open document,
/// `csa-lint` for a file named on its command line).
pub fn nearby(path: &Path, list: &mut dyn FnMut(&Path) -> Vec<(PathBuf, bool)>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(root) = nearby_root(path) {
        walk(root, 0, list, &mut out);
    }
    out
}

/// The directory [`nearby`] walks for `path`: its directory's parent (its
/// directory at the top of the file system).
pub fn nearby_root(path: &Path) -> Option<&Path> {
    let dir = path.parent()?;
    Some(dir.parent().unwrap_or(dir))
}

fn walk(
    dir: &Path,
    depth: usize,
    list: &mut dyn FnMut(&Path) -> Vec<(PathBuf, bool)>,
    out: &mut Vec<PathBuf>,
) {
    let mut entries: Vec<(PathBuf, bool)> = list(dir)
        .into_iter()
        .filter(|(p, _)| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    entries.sort();
    for (p, is_dir) in entries {
        if out.len() >= NEARBY_FILES {
            return;
        }
        if is_dir {
            if depth < NEARBY_DEPTH {
                walk(&p, depth + 1, list, out);
            }
        } else if csa_grammars::detect(&p).is_some() {
            out.push(p);
        }
    }
}

/// What a file is read with in its includer's context: the prelude
/// (`AnalysisOptions::prelude`) and the headers (those the prelude
/// includes, then the file's own).
#[derive(Clone, Debug, Default)]
pub struct Context {
    pub prelude: String,
    pub headers: Headers,
}

impl Context {
    /// The context `includer` gives the file at `path` (text `text`):
    /// `itext` is the includer's text, `ipath` its path; headers are
    /// searched as [`Headers::read_beside`] does, in `dirs`, and read with
    /// `read`. A Fortran `INCLUDE` gives no prelude and no headers.
    pub fn new(
        includer: Includer,
        ipath: &Path,
        itext: &str,
        path: &Path,
        text: &str,
        dirs: &[PathBuf],
        read: &mut dyn FnMut(&Path) -> Option<String>,
    ) -> Context {
        if !includer.cpp {
            return Context::default();
        }
        Context::of_includer(includer, ipath, itext, dirs, read)
            .with_own(Headers::read_beside(path, text, dirs, read))
    }

    /// The part of [`Context::new`] that the includer alone decides (the
    /// prelude and its headers), which a language server keeps while the
    /// file is edited.
    pub fn of_includer(
        includer: Includer,
        ipath: &Path,
        itext: &str,
        dirs: &[PathBuf],
        read: &mut dyn FnMut(&Path) -> Option<String>,
    ) -> Context {
        if !includer.cpp {
            return Context::default();
        }
        let prelude = itext.get(..includer.offset).unwrap_or_default();
        Context {
            prelude: prelude.to_string(),
            headers: Headers::read_beside(ipath, prelude, dirs, read),
        }
    }

    /// This context with the file's own headers (`own`) after the
    /// prelude's, a name the prelude's headers hold being theirs.
    pub fn with_own(mut self, own: Headers) -> Context {
        for (name, body) in own.0 {
            if !self.headers.0.iter().any(|(n, _)| *n == name) {
                self.headers.0.push((name, body));
            }
        }
        self
    }
}

/// `p` without `.`, each `..` taking off the component before it.
pub fn normalized(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
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
        assert_eq!(
            normalized(Path::new("/a/b/../c/./d.h")),
            PathBuf::from("/a/c/d.h")
        );
    }

    #[test]
    fn the_first_includer_in_the_set_is_found_as_cpp_searches() {
        let files: Vec<(&str, &str)> = vec![
            ("/p/a.h", "#include \"a.h\"\n"),
            (
                "/p/src/m.F",
                "#include \"../inc/opts.h\"\n#include \"vars.h\"\n",
            ),
            (
                "/p/src/n.F",
                "#include \"vars.h\"\n      include 'size.h'\n",
            ),
            ("/p/inc/vars.h", "C vars\n"),
            ("/p/inc/opts.h", "#define X 1\n"),
            ("/p/src/size.h", "      integer n\n"),
            (
                "/p/src/other.c",
                "#include <opts.h>\n#include \"shadow.h\"\n",
            ),
            ("/p/inc/shadow.h", ""),
        ];
        let dirs = [PathBuf::from("/p/inc")];
        let set: Vec<Includes<'_>> = files
            .iter()
            .map(|(p, _)| Includes {
                path: Path::new(p),
                dirs: &dirs,
            })
            .collect();
        let texts: FxHashMap<PathBuf, String> = files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect();
        // `src/shadow.h` exists outside the set: the quoted name stops there
        let index = Index::build(&set, &mut |p| texts.get(p).cloned(), &|p| {
            p == Path::new("/p/src/shadow.h")
        });
        let at = |p: &str| index.includer(Path::new(p));
        // (a file does not include itself)
        assert_eq!(at("/p/a.h"), None);
        assert_eq!(
            at("/p/inc/opts.h"),
            Some(Includer {
                file: 1,
                offset: 0,
                cpp: true
            })
        );
        assert_eq!(
            at("/p/inc/vars.h"),
            Some(Includer {
                file: 1,
                offset: 25,
                cpp: true
            })
        );
        assert_eq!(
            at("/p/src/size.h"),
            Some(Includer {
                file: 2,
                offset: 18,
                cpp: false
            })
        );
        assert_eq!(at("/p/inc/shadow.h"), None);
        assert_eq!(index.len(), 3);
        // the context: the text before the line, its headers, the file's own
        let ctx = Context::new(
            at("/p/inc/vars.h").unwrap(),
            Path::new("/p/src/m.F"),
            files[1].1,
            Path::new("/p/inc/vars.h"),
            "#include \"opts.h\"\n",
            &dirs,
            &mut |p| texts.get(&normalized(p)).cloned(),
        );
        assert_eq!(ctx.prelude, "#include \"../inc/opts.h\"\n");
        let names: Vec<&str> = ctx.headers.0.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["../inc/opts.h", "opts.h"]);
    }
}
