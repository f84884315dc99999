//! End-to-end tests of what makes `csa-lint` usable on large trees: the
//! result cache (`--no-cache`, `--cache-dir`, `CSA_LINT_CACHE_DIR`,
//! `cache-dir`), reports written a file at a time (JSON and SARIF still
//! one valid document), and `per-file-languages`.

mod common;

use common::{bin, fixtures, stderr, stdout, temp_dir, tree, TWO_FINDINGS};
use std::path::Path;
use std::process::Output;

fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("csa-lint runs")
}

/// The keys of the entries in a cache directory (every build's).
fn entries(cache: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(cache).into_iter().flatten().flatten() {
        let results = e.path().join("results");
        let Ok(bytes) = std::fs::read(&results) else {
            continue;
        };
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        for entry in v["entries"].as_array().unwrap() {
            out.push(entry["key"].as_str().unwrap().to_string());
        }
    }
    out
}

#[test]
fn a_warm_run_prints_what_a_cold_one_does_in_every_format() {
    let dir = temp_dir("warm");
    let cache = dir.join("cache");
    let f = fixtures();
    let (fx, c) = (f.to_str().unwrap(), cache.to_str().unwrap());
    for format in ["concise", "full", "json", "sarif", "github"] {
        let cold = run_in(&dir, &["--no-cache", "--format", format, fx]);
        let first = run_in(&dir, &["--cache-dir", c, "--format", format, fx]);
        let warm = run_in(&dir, &["--cache-dir", c, "--format", format, fx]);
        assert_eq!(cold.status.code(), Some(1), "{format}: {}", stderr(&cold));
        assert!(cold.stdout.len() > 10_000, "{format}");
        assert_eq!(stdout(&cold), stdout(&first), "{format}");
        assert_eq!(stdout(&cold), stdout(&warm), "{format}");
        assert_eq!(warm.status.code(), Some(1));
    }
    // one entry per distinct file content and language, and the markers
    // that keep backups and git out
    assert!(entries(&cache).len() > 100, "{}", entries(&cache).len());
    assert!(cache.join("CACHEDIR.TAG").is_file());
    assert_eq!(
        std::fs::read_to_string(cache.join(".gitignore")).unwrap(),
        "# Automatically created by csa-lint.\n*\n"
    );
}

#[test]
fn the_cache_follows_content_and_selection() {
    let dir = tree("content", &[("a.c", TWO_FINDINGS)]);
    let cache = dir.join("c");
    let c = cache.to_str().unwrap();
    let o = run_in(&dir, &["--cache-dir", c, "--format", "concise", "a.c"]);
    assert!(stdout(&o).contains("[CSA102]"), "{}", stdout(&o));
    // the selection is applied to cached results: still a hit, other output
    let o = run_in(
        &dir,
        &[
            "--cache-dir",
            c,
            "--format",
            "concise",
            "--select",
            "CSA401",
            "a.c",
        ],
    );
    assert!(!stdout(&o).contains("[CSA102]"), "{}", stdout(&o));
    assert!(stdout(&o).contains("[CSA401]"), "{}", stdout(&o));
    assert_eq!(entries(&cache).len(), 1);
    // a changed file is analysed again (same size, same modification second)
    let fixed = TWO_FINDINGS.replace(
        "__builtin_csa_parallel_loop();",
        "/* no marker here */         ;",
    );
    assert_eq!(fixed.len(), TWO_FINDINGS.len());
    std::fs::write(dir.join("a.c"), &fixed).unwrap();
    let o = run_in(&dir, &["--cache-dir", c, "--format", "concise", "a.c"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(entries(&cache).len(), 2);
    // a damaged cache is a miss, not an error
    for e in std::fs::read_dir(&cache).unwrap().flatten() {
        if e.path().join("results").is_file() {
            std::fs::write(e.path().join("results"), b"{ not json").unwrap();
        }
    }
    std::fs::write(dir.join("a.c"), TWO_FINDINGS).unwrap();
    let o = run_in(&dir, &["--cache-dir", c, "--format", "concise", "a.c"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("[CSA102]"), "{}", stdout(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(entries(&cache).len(), 1);
    // defines change what is analysed: another entry
    run_in(&dir, &["--cache-dir", c, "-D", "X", "a.c"]);
    assert_eq!(entries(&cache).len(), 2);
}

#[test]
fn where_the_cache_lives() {
    // default: `.csa_lint_cache` beside the configuration file that applies
    // to the working directory
    let dir = tree("where", &[("csa-lint.toml", ""), ("src/a.c", TWO_FINDINGS)]);
    let src = dir.join("src");
    run_in(&src, &["a.c"]);
    assert!(!entries(&dir.join(".csa_lint_cache")).is_empty());
    assert!(!src.join(".csa_lint_cache").exists());
    // --no-cache writes nothing
    let dir = tree("none", &[("csa-lint.toml", ""), ("a.c", TWO_FINDINGS)]);
    run_in(&dir, &["--no-cache", "a.c"]);
    assert!(!dir.join(".csa_lint_cache").exists());
    // `cache-dir` in the configuration, relative to its directory
    let dir = tree(
        "configured",
        &[
            ("csa-lint.toml", "cache-dir = \"build/lint\"\n"),
            ("a.c", TWO_FINDINGS),
        ],
    );
    run_in(&dir, &["a.c"]);
    assert!(!entries(&dir.join("build/lint")).is_empty());
    // the environment variable wins over the configuration
    let env = dir.join("from-env");
    let o = bin()
        .current_dir(&dir)
        .env("CSA_LINT_CACHE_DIR", &env)
        .arg("a.c")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(!entries(&env).is_empty());
    // a cache that cannot be made is a warning; the run goes on
    let blocked = dir.join("file-not-dir");
    std::fs::write(&blocked, "").unwrap();
    let o = run_in(
        &dir,
        &[
            "--cache-dir",
            blocked.to_str().unwrap(),
            "--format",
            "concise",
            "a.c",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("[CSA102]"));
    assert!(
        stderr(&o).contains("cannot create the cache directory")
            && stderr(&o).contains("running without a cache"),
        "{}",
        stderr(&o)
    );
    // --quiet hides that warning
    let o = run_in(
        &dir,
        &["-q", "--cache-dir", blocked.to_str().unwrap(), "a.c"],
    );
    assert_eq!(stderr(&o), "");
}

#[test]
fn concurrent_runs_share_a_cache() {
    let dir = temp_dir("concurrent");
    let cache = dir.join("cache");
    let f = fixtures();
    let args = [
        "--cache-dir",
        cache.to_str().unwrap(),
        "--format",
        "json",
        f.to_str().unwrap(),
    ];
    let expected = stdout(&run_in(&dir, &["--no-cache", "--format", "json", args[4]]));
    let children: Vec<_> = (0..4)
        .map(|_| {
            bin()
                .current_dir(&dir)
                .args(args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(stdout(&o), expected);
        assert_eq!(stderr(&o), "");
    }
    assert_eq!(stdout(&run_in(&dir, &args)), expected);
}

#[test]
fn json_and_sarif_are_whole_documents_with_and_without_results() {
    let dir = tree(
        "docs",
        &[
            ("clean.c", "int x;\n"),
            ("a.c", TWO_FINDINGS),
            ("b.c", TWO_FINDINGS),
        ],
    );
    // no result at all
    let o = run_in(&dir, &["--format", "json", "clean.c"]);
    assert_eq!(stdout(&o), "[]\n");
    let o = run_in(&dir, &["--format", "sarif", "clean.c"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["runs"][0]["results"], serde_json::json!([]));
    assert!(stdout(&o).contains("\"results\": []"), "{}", stdout(&o));
    // results of several files, in the files' order, as pretty-printing the
    // whole array gives them
    let o = run_in(&dir, &["--format", "json", "."]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let files: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["./a.c", "./a.c", "./b.c", "./b.c"]);
    // the fields in the documented order (README), not sorted
    assert!(
        stdout(&o).starts_with("[\n  {\n    \"code\": \"CSA102\",\n    \"rule\": "),
        "{}",
        stdout(&o)
    );
    let o = run_in(&dir, &["--format", "sarif", "."]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 4);
    assert_eq!(stdout(&o), serde_json::to_string_pretty(&v).unwrap() + "\n");
}

#[test]
fn per_file_languages_name_what_extensions_do_not() {
    let fortran = "subroutine s(a, n)\n  integer n, i\n  real a(n)\n  call builtin_csa_parallel_loop()\n  do i = 1, n\n  end do\nend subroutine\n";
    let dir = tree(
        "languages",
        &[
            (
                "csa-lint.toml",
                "[per-file-languages]\n\"*.inc\" = \"fortran\"\n\"fortran/*.h\" = \"fortran\"\n",
            ),
            ("kernels.inc", fortran),
            ("fortran/decl.h", fortran),
            ("c/decl.h", TWO_FINDINGS),
            ("notes.txt", "not code"),
        ],
    );
    let o = run_in(&dir, &["--format", "concise", "."]);
    let out = stdout(&o);
    // the .inc file is linted as Fortran, the header under fortran/ too,
    // the other header stays C, and the text file is not linted
    assert!(out.contains("./kernels.inc:4:"), "{out}");
    assert!(out.contains("./fortran/decl.h:4:"), "{out}");
    assert!(out.contains("./c/decl.h:2:3: warning[CSA102]"), "{out}");
    assert!(!out.contains("notes.txt"), "{out}");
    assert!(!out.contains("CSA001"), "{out}");
    // named on the command line, an unknown extension with a language is
    // linted
    let o = run_in(&dir, &["--format", "concise", "kernels.inc"]);
    assert!(stdout(&o).contains("kernels.inc:4:"), "{}", stdout(&o));
    // a bad language names the file, line and key
    let bad = tree(
        "languages-bad",
        &[
            (
                "csa-lint.toml",
                "[per-file-languages]\n\"*.inc\" = \"cobol\"\n",
            ),
            ("a.c", ""),
        ],
    );
    let o = run_in(&bad, &["a.c"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("csa-lint.toml:2:")
            && stderr(&o).contains("per-file-languages")
            && stderr(&o).contains("unknown language `cobol`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn fixes_work_from_a_warm_cache() {
    // CSA105 (a safe fix removes the marker) and CSA102 (unsafe)
    let text = "int f(int n, int *a) {\n  int s = 0;\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  if (n > 10) n = 10; else n = 1;\n  for (int i = 0; i < n; i++) a[i] = 0;\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  for (int i = 0; i < n; i++) s += i;\n  return s;\n}\n";
    let dir = tree("fix-warm", &[("a.c", text), ("clean.c", "int x;\n")]);
    let c = dir.join("c");
    let c = c.to_str().unwrap();
    // fill the cache
    let o = run_in(&dir, &["--cache-dir", c, "--format", "concise", "."]);
    assert!(stdout(&o).contains("[CSA105]"), "{}", stdout(&o));
    // --diff from the cache shows the fix, and exits 1
    let o = run_in(&dir, &["--cache-dir", c, "--diff", "."]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("-  __builtin_csa_parallel_loop();"),
        "{}",
        stdout(&o)
    );
    assert_eq!(std::fs::read_to_string(dir.join("a.c")).unwrap(), text);
    // --fix writes it; what is printed is the fixed file's diagnostics
    let o = run_in(
        &dir,
        &["--cache-dir", c, "--fix", "--format", "concise", "."],
    );
    assert!(
        stderr(&o).contains("Fixed 1 issue in 1 file"),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains("[CSA105]"), "{}", stdout(&o));
    assert!(stdout(&o).contains("[CSA102]"), "{}", stdout(&o));
    let fixed = std::fs::read_to_string(dir.join("a.c")).unwrap();
    assert_eq!(fixed.matches("__builtin_csa_parallel_loop").count(), 1);
    // and the next run, from the cache, agrees
    let o = run_in(
        &dir,
        &["--cache-dir", c, "--fix", "--format", "concise", "."],
    );
    assert!(
        stderr(&o).contains("Fixed 0 issues in 0 files"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("[CSA102]"), "{}", stdout(&o));
}

#[test]
fn gitlab_code_quality_report() {
    let dir = tree(
        "gitlab",
        &[("src/a.c", TWO_FINDINGS), ("clean.c", "int x;\n")],
    );
    let o = run_in(&dir, &["--format", "gitlab", "."]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let issues = v.as_array().unwrap();
    assert_eq!(issues.len(), 2);
    let first = &issues[0];
    assert_eq!(first["check_name"], "CSA102 no-memory-operations");
    assert!(first["description"]
        .as_str()
        .unwrap()
        .starts_with("CSA102: NO MEMORY OPERATIONS IN LOOP"));
    assert_eq!(first["severity"], "minor");
    assert_eq!(issues[1]["severity"], "info");
    // relative to the repository root, no `./`
    assert_eq!(first["location"]["path"], "src/a.c");
    assert_eq!(first["location"]["lines"]["begin"], 2);
    assert_ne!(first["fingerprint"], issues[1]["fingerprint"]);
    assert_eq!(first["fingerprint"].as_str().unwrap().len(), 16);
    // nothing found: an empty report
    let o = run_in(&dir, &["--format", "gitlab", "clean.c"]);
    assert_eq!(stdout(&o), "[]\n");
}
