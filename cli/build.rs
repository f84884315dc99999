//! Gives the `csa-lint` result cache a build identity: `CSA_LINT_BUILD_ID`
//! is a hash of every source file of the analyzer, the grammars, the tree
//! copy (`treecopy`, C included) and this crate and of
//! `Cargo.lock` (the tree-sitter grammars' versions), so a cache written by
//! one build is never read by a build that might analyse differently,
//! even when the version number is the same (a development build).

use std::path::{Path, PathBuf};

/// FNV-1a, 64 bits.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Every file under `dir`, sorted, skipping build output.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if name == "target" || name == "node_modules" {
            continue;
        }
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let roots = [
        manifest.join("src"),
        manifest.join("../analyzer/src"),
        manifest.join("../analyzer/Cargo.toml"),
        manifest.join("../grammars/src"),
        manifest.join("../grammars/Cargo.toml"),
        manifest.join("../treecopy/src"),
        manifest.join("../treecopy/csrc"),
        manifest.join("../treecopy/Cargo.toml"),
        manifest.join("Cargo.toml"),
        manifest.join("../Cargo.lock"),
    ];
    let mut all = Vec::new();
    for r in &roots {
        println!("cargo:rerun-if-changed={}", r.display());
        if r.is_dir() {
            files(r, &mut all);
        } else if r.is_file() {
            all.push(r.clone());
        }
    }
    all.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in &all {
        let rel = p.strip_prefix(&manifest).unwrap_or(p);
        h = fnv(h, rel.to_string_lossy().as_bytes());
        h = fnv(h, &std::fs::read(p).unwrap_or_default());
    }
    println!(
        "cargo:rustc-env=CSA_LINT_BUILD_ID={}-{h:016x}",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    );
}
