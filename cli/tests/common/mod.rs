//! Helpers shared by the command-line tests (`cli.rs`, `cli_cache.rs`,
//! `cli_fix.rs`): the binary, the fixtures, output as text, and scratch
//! directories that configuration discovery cannot escape.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `csa-lint` binary, with no cache directory from the environment.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_csa-lint"));
    c.env_remove("CSA_LINT_CACHE_DIR");
    c
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh directory for one test, inside a directory of this process's
/// that holds an empty `csa-lint.toml`: configuration discovery walks
/// upward, and the empty file stops it there, so a configuration left in
/// the system's temporary directory (or above it) cannot change the
/// outcome. An empty configuration is the defaults.
pub fn temp_dir(name: &str) -> PathBuf {
    let base = std::env::temp_dir().join(format!("csa-lint-test-{}", std::process::id()));
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(base.join("csa-lint.toml"), "").unwrap();
    let dir = base.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// [`temp_dir`] holding `files` (path, text).
pub fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = temp_dir(name);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// An unguarded marker on a loop without memory operations: CSA102 and
/// CSA401 on line 2.
pub const TWO_FINDINGS: &str =
    "void f(int n) {\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < n; i++) {}\n}\n";
