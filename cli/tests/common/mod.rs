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
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(sweep_finished_runs);
    let base = std::env::temp_dir().join(format!("csa-lint-test-{}", std::process::id()));
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(base.join("csa-lint.toml"), "").unwrap();
    let dir = base.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Removes the directories of earlier test processes that have ended
/// (`csa-lint-test-PID` with no `/proc/PID`; where there is no `/proc`,
/// none is removed): each process leaves its own behind, since nothing
/// runs when a test binary exits, and they piled up by the hundred.
fn sweep_finished_runs() {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("csa-lint-test-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
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
