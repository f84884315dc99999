//! End-to-end tests of `csa-lint --fix`, `--unsafe-fixes`, `--diff`,
//! `--rewrite` and of fixes in the JSON and SARIF output.

mod common;

use common::{bin, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Output;

/// Runs `csa-lint ARGS FILE` without configuration files (the files live
/// in the system's temporary directory, where a stray `csa-lint.toml`
/// could otherwise apply).
fn run(args: &[&str], file: &Path) -> Output {
    bin()
        .arg("--no-config")
        .args(args)
        .arg(file)
        .output()
        .expect("csa-lint runs")
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const UNATTACHED_AND_REGISTER_ONLY: &str = "\
int f(int n, int *a) {
  int s = 0;
#ifdef __CSA__
  __builtin_csa_parallel_loop();
#endif
  if (n > 10) n = 10; else n = 1;
  for (int i = 0; i < n; i++) a[i] = 0;
#ifdef __CSA__
  __builtin_csa_parallel_loop();
#endif
  for (int i = 0; i < n; i++) s += i;
  return s;
}
";

#[test]
fn fix_applies_safe_fixes_only() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(&dir, "a.c", UNATTACHED_AND_REGISTER_ONLY);
    let o = run(&["--fix", "--format", "concise"], &f);
    let text = std::fs::read_to_string(&f).unwrap();
    // CSA105 (safe) removed with its wrapper; CSA102 (unsafe) kept.
    assert_eq!(
        text.matches("__builtin_csa_parallel_loop").count(),
        1,
        "{text}"
    );
    assert_eq!(text.matches("#ifdef __CSA__").count(), 1, "{text}");
    assert!(
        stderr(&o).contains("Fixed 1 issue in 1 file"),
        "{}",
        stderr(&o)
    );
    // The remaining diagnostics are those of the fixed file.
    assert!(stdout(&o).contains("CSA102"), "{}", stdout(&o));
    assert!(!stdout(&o).contains("CSA105"), "{}", stdout(&o));
}

#[test]
fn unsafe_fixes_apply_too() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(&dir, "a.c", UNATTACHED_AND_REGISTER_ONLY);
    let o = run(&["--fix", "--unsafe-fixes", "--format", "concise"], &f);
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(!text.contains("__builtin_csa"), "{text}\n{}", stderr(&o));
    assert!(!text.contains("#ifdef"), "{text}");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn diff_prints_and_does_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(&dir, "a.c", UNATTACHED_AND_REGISTER_ONLY);
    let o = run(&["--diff"], &f);
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        UNATTACHED_AND_REGISTER_ONLY
    );
    let out = stdout(&o);
    assert!(out.contains("--- a/"), "{out}");
    assert!(out.contains("-  __builtin_csa_parallel_loop();"), "{out}");
    assert!(out.contains("-#ifdef __CSA__"), "{out}");
    // like ruff and black: a diff that would change files exits 1
    assert_eq!(o.status.code(), Some(1));
    // --exit-zero makes it 0, and nothing to change is 0
    let o = run(&["--diff", "--exit-zero"], &f);
    assert_eq!(o.status.code(), Some(0));
    let clean = write(&dir, "b.c", "int x;\n");
    let o = run(&["--diff"], &clean);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn rewrite_openmp_converts_and_reports_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let src = "\
int f(int n, int *a) {
  int s = 0, p = 0;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < n; i++) s += a[i];
  __builtin_csa_parallel_loop();
  for (int i = 0; i < n; i++) { a[i] = p; p = i; }
  return s;
}
";
    let f = write(&dir, "a.c", src);
    // a rewrite is an unsafe fix: without --unsafe-fixes nothing changes
    let o = run(&["--rewrite", "openmp", "--exit-zero"], &f);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), src);
    assert!(
        stderr(&o).contains("1 CSA annotation can be rewritten to OpenMP, an unsafe fix")
            && stderr(&o).contains("add --unsafe-fixes"),
        "{}",
        stderr(&o)
    );
    let o = run(&["--rewrite", "openmp", "--diff", "--exit-zero"], &f);
    assert_eq!(stdout(&o), "");
    let o = run(
        &["--rewrite", "openmp", "--unsafe-fixes", "--exit-zero"],
        &f,
    );
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(
        text.contains("  #pragma omp parallel for reduction(+:s)\n  for"),
        "{text}"
    );
    assert_eq!(text.matches("__builtin_csa_parallel_loop").count(), 1);
    let err = stderr(&o);
    assert!(
        err.contains("a.c:5:3: Cannot convert to OpenMP: `p`"),
        "{err}"
    );
    // Twice changes nothing.
    run(
        &["--rewrite", "openmp", "--unsafe-fixes", "--exit-zero"],
        &f,
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), text);
}

#[test]
fn rewrite_ivdep_style_and_diff() {
    let dir = tempfile::tempdir().unwrap();
    let src = "subroutine s(n, a)\n  integer :: n, i\n  real :: a(n)\n  call builtin_csa_parallel_loop()\n  do i = 1, n\n    a(i) = 0\n  end do\nend subroutine\n";
    let f = write(&dir, "a.f90", src);
    let o = run(&["--rewrite", "ivdep", "--diff", "--unsafe-fixes"], &f);
    assert!(stdout(&o).contains("+  !DIR$ IVDEP"), "{}", stdout(&o));
    let o = run(
        &[
            "--rewrite",
            "ivdep",
            "--ivdep-style",
            "gcc-pragma",
            "--diff",
            "--unsafe-fixes",
        ],
        &f,
    );
    assert!(stdout(&o).contains("+  !GCC$ ivdep"), "{}", stdout(&o));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), src);
}

#[test]
fn file_that_does_not_round_trip_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.c");
    let mut bytes = UNATTACHED_AND_REGISTER_ONLY.as_bytes().to_vec();
    bytes.extend_from_slice(b"/* \xff */\n");
    std::fs::write(&p, &bytes).unwrap();
    let o = run(&["--fix"], &p);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("changed on disk"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&p).unwrap(), bytes);
}

#[test]
fn json_and_sarif_carry_fixes() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(&dir, "a.c", UNATTACHED_AND_REGISTER_ONLY);
    let o = run(&["--format", "json"], &f);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let d = v
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "CSA105")
        .expect("CSA105");
    let fix = &d["fixes"][0];
    assert_eq!(fix["applicability"], "safe");
    let e = &fix["edits"][0];
    assert_eq!(
        (e["line"].as_u64(), e["column"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(
        (e["end_line"].as_u64(), e["end_column"].as_u64()),
        (Some(6), Some(1))
    );
    assert_eq!(e["new_text"], "");
    let sup = d["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["title"].as_str().unwrap().starts_with("Suppress"))
        .expect("a suppression fix");
    assert_eq!(sup["edits"][0]["new_text"], " // csa-lint: ignore[CSA105]");

    let o = run(&["--format", "sarif"], &f);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let r = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "CSA105")
        .expect("CSA105");
    let rep = &r["fixes"][0]["artifactChanges"][0]["replacements"][0];
    assert_eq!(rep["deletedRegion"]["startLine"], 3);
    assert_eq!(rep["insertedContent"]["text"], "");
}

#[cfg(unix)]
#[test]
fn fixes_follow_symbolic_links_to_their_target() {
    let dir = tempfile::tempdir().unwrap();
    let target = write(&dir, "real.c", UNATTACHED_AND_REGISTER_ONLY);
    let link = dir.path().join("link.c");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = run(&["--fix", "--unsafe-fixes", "--format", "concise"], &link);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(!text.contains("__builtin_csa"), "{text}");
}
