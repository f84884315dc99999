//! The pipeline's early stages do not reach into later ones
//! (docs/architecture.md): `ir`, `frontend`, `graph` and `memory` name no
//! module of `clie` or after it, so each can be built and tested without
//! what comes later, and there is no module cycle through them.

use std::path::{Path, PathBuf};

/// What each early stage may name with `crate::`.
const ALLOWED: &[(&str, &[&str])] = &[
    ("ir", &["ir", "source"]),
    ("frontend", &["frontend", "ir", "omp", "source"]),
    ("graph", &["graph", "ir", "source"]),
    ("memory", &["memory", "graph", "ir", "source"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The modules named as `crate::NAME` in the code (comments left out),
/// with their line numbers.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(k) = rest.find("crate::") {
            let after = &rest[k + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let preceded_by_ident = rest[..k]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            if !preceded_by_ident && !name.is_empty() {
                out.push((i + 1, name));
            }
            rest = after;
        }
    }
    out
}

#[test]
fn early_stages_do_not_name_later_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut bad = Vec::new();
    for (stage, allowed) in ALLOWED {
        let mut files = Vec::new();
        let dir = src.join(stage);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        }
        let file = src.join(format!("{stage}.rs"));
        if file.is_file() {
            files.push(file);
        }
        assert!(!files.is_empty(), "no source for `{stage}`");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (line, name) in crate_paths(&text) {
                if !allowed.contains(&name.as_str()) {
                    bad.push(format!("{}:{line}: crate::{name}", f.display()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "early stages name later ones:\n{}",
        bad.join("\n")
    );
}

#[test]
fn crate_paths_are_found_outside_comments() {
    let text =
        "use crate::ir::Function; // crate::clie\nlet x = crate::clie::f();\n/// crate::rules\n";
    assert_eq!(
        crate_paths(text),
        [(1, "ir".to_string()), (2, "clie".to_string())]
    );
}
