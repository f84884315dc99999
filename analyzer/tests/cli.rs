//! End-to-end tests of the `csa-lint` binary: formats, exit codes, errors
//! that name the file, `--explain`, `--list-rules`, `--dump cfg`,
//! `--dump memop-graph`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_csa-lint"))
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("csa-lint runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("csa-lint-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn clean_file_exits_zero() {
    let f = fixtures().join("c/parallel_basic.c");
    let o = run(&["--format", "concise", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
}

#[test]
fn findings_exit_one_and_exit_zero_overrides() {
    let f = fixtures().join("c/break_after_memory_read.c");
    let o = run(&["--format", "concise", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("break_after_memory_read.c:5:3: warning[CSA101] COULD NOT PARALLELIZE LOOP"),
        "{out}"
    );
    let o = run(&["--exit-zero", "--format", "concise", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn info_only_exits_zero() {
    let dir = temp_dir("info");
    let f = dir.join("info.c");
    std::fs::write(
        &f,
        "void f(double *a, int n) {\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < n; i++) a[i] = 0.0;\n}\n",
    )
    .unwrap();
    let o = run(&["--format", "concise", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("info[CSA401]"));
}

#[test]
fn missing_file_exits_two_and_names_it() {
    let o = run(&["does/not/exist.c"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does/not/exist.c"), "{}", stderr(&o));
}

#[test]
fn unknown_extension_exits_two_with_advice() {
    let dir = temp_dir("ext");
    let f = dir.join("notes.txt");
    std::fs::write(&f, "hello").unwrap();
    let o = run(&[f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--language"), "{}", stderr(&o));
    // With --language it is read as C.
    let o = run(&[
        "--language",
        "c",
        "--format",
        "concise",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn bad_usage_exits_two() {
    let o = run(&["--format", "yaml", "."]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["--explain", "CSA999"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--list-rules"));
}

#[test]
fn json_has_the_documented_shape() {
    let f = fixtures().join("c/pointer_bound.c");
    let o = run(&["--format", "json", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    let items = v.as_array().unwrap();
    let csa101: Vec<&serde_json::Value> = items.iter().filter(|d| d["code"] == "CSA101").collect();
    assert_eq!(csa101.len(), 2, "{items:?}");
    let d = csa101[0];
    for key in [
        "code",
        "rule",
        "severity",
        "file",
        "line",
        "column",
        "end_line",
        "end_column",
        "message",
        "related",
        "fixes",
    ] {
        assert!(d.get(key).is_some(), "missing {key} in {d}");
    }
    assert_eq!(d["code"], "CSA101");
    assert_eq!(d["rule"], "could-not-parallelize");
    assert_eq!(d["severity"], "warning");
    assert_eq!(d["line"], 5);
    assert_eq!(d["column"], 3);
    assert_eq!(d["end_line"], 5);
    assert_eq!(d["end_column"], 33);
    assert!(d["file"].as_str().unwrap().ends_with("pointer_bound.c"));
    let related = d["related"].as_array().unwrap();
    assert!(!related.is_empty());
    for r in related {
        for key in ["file", "line", "column", "message"] {
            assert!(r.get(key).is_some());
        }
    }
    // Sorted by line.
    let lines: Vec<i64> = items.iter().map(|d| d["line"].as_i64().unwrap()).collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
}

#[test]
fn columns_count_unicode_scalars() {
    let dir = temp_dir("utf8");
    let f = dir.join("u.c");
    std::fs::write(
        &f,
        "void f(double *a, int n) {\n/*é*/__builtin_csa_parallel_loop();\n  if (n) n--;\n  for (int i = 0; i < n; i++) a[i] = 0.0;\n}\n",
    )
    .unwrap();
    let o = run(&["--format", "json", f.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let d = v
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "CSA105")
        .expect("CSA105");
    // `/*é*/` is five characters (six bytes).
    assert_eq!(d["column"], 6);
}

#[test]
fn directories_are_walked_in_order_and_gitignore_respected() {
    let dir = temp_dir("walk");
    std::fs::create_dir_all(dir.join("src/sub")).unwrap();
    std::fs::create_dir_all(dir.join("build")).unwrap();
    let bad = "void f(int *a, int *n) {\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  for (int i = 0; i < *n; i++) a[i] = 0;\n}\n";
    std::fs::write(dir.join("src/b.c"), bad).unwrap();
    std::fs::write(dir.join("src/sub/a.c"), bad).unwrap();
    std::fs::write(dir.join("build/gen.c"), bad).unwrap();
    std::fs::write(dir.join("src/readme.txt"), "not code").unwrap();
    std::fs::write(dir.join(".gitignore"), "build/\n").unwrap();
    // The ignore crate honours .gitignore inside a git repository.
    let git = Command::new("git").arg("init").arg("-q").arg(&dir).status();
    let o = run(&["--format", "concise", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let files: Vec<&str> = out.lines().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(files.len(), if git.is_ok() { 2 } else { 3 }, "{out}");
    assert!(files[0].ends_with("src/b.c"), "{out}");
    assert!(files[1].ends_with("src/sub/a.c"), "{out}");
}

#[test]
fn full_format_renders_snippets_labels_and_help() {
    let f = fixtures().join("c/if_else_join_loses_marker.c");
    let o = run(&["--format", "full", "--color", "never", f.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(out.contains("warning[CSA105]"), "{out}");
    assert!(
        out.contains("control flow merges after this statement"),
        "{out}"
    );
    assert!(
        out.contains("help: Put the marker immediately before the loop"),
        "{out}"
    );
    assert!(out.contains("csa-lint --explain CSA105"), "{out}");
    assert!(
        !out.contains('\u{1b}'),
        "no colour codes with --color never"
    );
}

#[test]
fn explain_and_list_rules() {
    let o = run(&["--explain", "CSA101"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.starts_with("# CSA101 could-not-parallelize"), "{out}");
    assert!(out.contains("## How to fix"));
    let o = run(&["--explain", "unattached-loop-marker"]);
    assert!(stdout(&o).starts_with("# CSA105"));
    let o = run(&["--list-rules"]);
    let out = stdout(&o);
    assert!(
        out.contains("CSA101") && out.contains("could-not-parallelize") && out.contains("warning")
    );
}

#[test]
fn dump_cfg_prints_blocks_loops_and_verdicts() {
    let f = fixtures().join("c/while_header_read.c");
    let o = run(&["--dump", "cfg", "mark_while_nonzero", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("function mark_while_nonzero\n"), "{out}");
    assert!(out.contains("while.cond:"), "{out}");
    assert!(out.contains("loops:\n  loop0 header"), "{out}");
    assert!(out.contains("CouldNotParallelize"), "{out}");
    let o = run(&["--dump", "cfg", "nope", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("mark_while_nonzero"), "{}", stderr(&o));
}

#[test]
fn dump_memop_graph_prints_dot_with_ordering_edges() {
    let f = fixtures().join("c/ordering_patterns.c");
    let o = run(&[
        "--dump",
        "memop-graph",
        "ordering_sections_pattern",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("digraph \"MemopCFG for 'ordering_sections_pattern' function\" {\n"),
        "{out}"
    );
    assert!(out.contains("section entry 0\\l"), "{out}");
    assert!(out.contains("0o1 = write *a"), "{out}");
    assert!(out.contains("style=dashed,color=grey"), "{out}");
    assert!(out.trim_end().ends_with('}'), "{out}");
    let o = run(&["--dump", "memop-graph", "nope", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("ordering_loop_pattern"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn github_format_is_one_workflow_command_per_diagnostic() {
    let dir = temp_dir("github");
    let f = dir.join("g,h.c");
    std::fs::write(
        &f,
        "void f(int *a, int *n) {\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  for (int i = 0; i < *n; i++) a[i] = 0;\n}\n",
    )
    .unwrap();
    let o = run(&["--format", "github", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    let l = lines[0];
    assert!(l.starts_with("::warning file="), "{l}");
    // The comma in the file name is escaped in the property value.
    assert!(l.contains("g%2Ch.c,line=3,col=3,endLine=3,endColumn=33,title=CSA101 could-not-parallelize::COULD NOT PARALLELIZE LOOP"), "{l}");
    // Newlines in the message (the help) are escaped: one line per diagnostic.
    assert!(l.contains("%0Ahelp: "), "{l}");
}

#[test]
fn output_writes_the_report_to_a_file() {
    let dir = temp_dir("output");
    let report = dir.join("report.json");
    let f = fixtures().join("c/pointer_bound.c");
    let o = run(&[
        "--format",
        "json",
        "--output",
        report.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(!v.as_array().unwrap().is_empty());
    // An unwritable destination is an I/O error naming it.
    let bad = dir.join("missing-dir").join("r.json");
    let o = run(&["--output", bad.to_str().unwrap(), f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing-dir"), "{}", stderr(&o));
}

#[test]
fn sarif_has_the_required_fields_and_stable_fingerprints() {
    let dir = temp_dir("sarif");
    let f = dir.join("s.c");
    let body = "void f(int *a, int *n) {\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  for (int i = 0; i < *n; i++) a[i] = 0;\n}\n";
    std::fs::write(&f, body).unwrap();
    let run_sarif = || {
        let o = run(&["--format", "sarif", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).expect("valid JSON")
    };
    let v = run_sarif();
    assert_eq!(v["version"], "2.1.0");
    let run0 = &v["runs"][0];
    assert_eq!(run0["tool"]["driver"]["name"], "csa-lint");
    assert_eq!(run0["columnKind"], "unicodeCodePoints");
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(rules.iter().any(|r| r["id"] == "CSA101"
        && r["defaultConfiguration"]["level"] == "warning"
        && r["help"]["text"]
            .as_str()
            .unwrap()
            .contains("## How to fix")));
    let results = run0["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    let r = &results[0];
    assert_eq!(r["ruleId"], "CSA101");
    assert_eq!(r["level"], "warning");
    assert!(r["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("COULD NOT PARALLELIZE LOOP"));
    let idx = r["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(rules[idx]["id"], "CSA101");
    let loc = &r["locations"][0]["physicalLocation"];
    assert!(loc["artifactLocation"]["uri"]
        .as_str()
        .unwrap()
        .ends_with("s.c"));
    assert_eq!(loc["region"]["startLine"], 3);
    assert_eq!(loc["region"]["startColumn"], 3);
    assert!(loc["region"]["endColumn"].is_u64());
    for rel in r["relatedLocations"].as_array().unwrap() {
        assert!(rel["id"].is_u64() && rel["message"]["text"].is_string());
    }
    let fp = r["partialFingerprints"]["csaLint/v1"].clone();
    assert!(fp.is_string());
    // Lines added above move the result but keep its fingerprint.
    std::fs::write(&f, format!("// a comment\n\n{body}")).unwrap();
    let v2 = run_sarif();
    let r2 = &v2["runs"][0]["results"][0];
    assert_eq!(
        r2["locations"][0]["physicalLocation"]["region"]["startLine"],
        5
    );
    assert_eq!(r2["partialFingerprints"]["csaLint/v1"], fp);
}
