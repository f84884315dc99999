//! The analyzer's modules form layers (docs/architecture.md):
//! * the pipeline's early stages (`ir`, `frontend`, `graph`, `memory`) name
//!   no module of `clie` or after it, so each can be built and tested
//!   without what comes later;
//! * no top-level module reaches, through `crate::` paths, a module that
//!   reaches it back: a cycle is how the pipeline's order erodes (a pass
//!   asking a later one). Test code (`tests.rs` files, `tests/`
//!   directories, a trailing `#[cfg(test)] mod tests` block) is not counted
//!   for cycles.

use std::collections::{BTreeMap, BTreeSet};
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

/// `text` without a trailing `#[cfg(test)] mod tests { ... }` block.
fn without_tests(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// The top-level modules each top-level module names through `crate::`,
/// test code left out.
fn dependencies(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in files {
        let rel = p.strip_prefix(src).unwrap();
        let name = rel.file_name().unwrap().to_string_lossy();
        if name == "lib.rs"
            || name == "tests.rs"
            || rel.components().any(|c| c.as_os_str() == "tests")
        {
            continue;
        }
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        let text = std::fs::read_to_string(&p).unwrap();
        let entry = deps.entry(top.clone()).or_default();
        for (_, m) in crate_paths(without_tests(&text)) {
            if m != top {
                entry.insert(m);
            }
        }
    }
    deps
}

/// A cycle through `start`, if there is one.
fn cycle_from(deps: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack: Vec<(String, Vec<String>)> = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((m, path)) = stack.pop() {
        for d in deps.get(&m).into_iter().flatten() {
            if d == start {
                let mut p = path.clone();
                p.push(d.clone());
                return Some(p);
            }
            if deps.contains_key(d) && seen.insert(d.clone()) {
                let mut p = path.clone();
                p.push(d.clone());
                stack.push((d.clone(), p));
            }
        }
    }
    None
}

#[test]
fn modules_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let deps = dependencies(&src);
    assert!(deps.len() > 10, "found only {:?}", deps.keys());
    let cycles: Vec<String> = deps
        .keys()
        .filter_map(|m| cycle_from(&deps, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_cycle_check_sees_a_cycle() {
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    deps.entry("a".into()).or_default().insert("b".into());
    deps.entry("b".into()).or_default().insert("c".into());
    deps.entry("c".into()).or_default().insert("a".into());
    deps.entry("d".into()).or_default().insert("a".into());
    assert_eq!(
        cycle_from(&deps, "a").unwrap().join(" -> "),
        "a -> b -> c -> a"
    );
    assert_eq!(cycle_from(&deps, "d"), None);
    assert_eq!(without_tests("x\n#[cfg(test)]\nmod tests {}"), "x\n");
}
