//! The analyzer's top-level modules form layers: no module reaches, through
//! `crate::` paths, a module that reaches it back. A cycle is how the
//! pipeline's order erodes (a pass asking a later one), so this test names
//! it. Test code (`tests.rs` files and `#[cfg(test)] mod tests` blocks) and
//! comments are not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `text` without `//` comments (line and doc) and without a trailing
/// `#[cfg(test)] mod tests { ... }` block.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules each top-level module names through `crate::`.
fn dependencies(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if !name.ends_with(".rs") || name == "tests.rs" || name == "lib.rs" {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap();
            let top = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string();
            if rel.components().any(|c| c.as_os_str() == "tests") {
                continue;
            }
            let code = code_of(&std::fs::read_to_string(&p).unwrap());
            let entry = deps.entry(top.clone()).or_default();
            let mut rest = code.as_str();
            while let Some(i) = rest.find("crate::") {
                rest = &rest[i + "crate::".len()..];
                let m: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if m != top && !m.is_empty() {
                    entry.insert(m);
                }
            }
        }
    }
    deps
}

/// A cycle through `start`, if there is one.
fn cycle_from(deps: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    // depth-first search for a path back to `start`
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
fn modules_form_layers() {
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
fn the_check_sees_a_cycle() {
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
    assert_eq!(code_of("x // crate::y\nz"), "x \nz");
}
