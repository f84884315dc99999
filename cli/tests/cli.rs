//! End-to-end tests of the `csa-lint` binary: formats, exit codes, errors
//! that name the file, `--explain`, `--list-rules`, `--dump cfg`,
//! `--dump memop-graph`.

mod common;

use common::{bin, fixtures, stderr, stdout, temp_dir, tree, TWO_FINDINGS};
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("csa-lint runs")
}

/// Standard output without the text formats' summary line.
fn diag_out(o: &Output) -> String {
    stdout(o)
        .lines()
        .filter(|l| !l.starts_with("Found ") && !l.starts_with("All checks passed"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn clean_file_exits_zero() {
    let dir = temp_dir("clean");
    let f = dir.join("clean.c");
    std::fs::write(
        &f,
        "#ifdef __CSA__\ndouble a[100];\nvoid twice(void) {\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < 100; ++i) a[i] = 2 * a[i];\n}\n#endif\n",
    )
    .unwrap();
    let o = run(&["--format", "concise", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(diag_out(&o), "");
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
    // `help`, when there is one, is the advice's text
    assert!(
        items.iter().all(|d| d
            .get("help")
            .is_none_or(|h| h.as_str().is_some_and(|h| !h.is_empty()))),
        "{items:?}"
    );
}

#[test]
fn json_gives_a_diagnostic_s_advice_as_help() {
    let dir = temp_dir("json-help");
    let f = dir.join("t.c");
    std::fs::write(&f, "void f(int n) {\n  check(n, NAME (vec) \"_set\");\n}\n").unwrap();
    let o = run(&["--format", "json", f.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    let d = &v.as_array().unwrap()[0];
    assert_eq!(d["code"], "CSA001");
    let help = d["help"].as_str().unwrap_or_default();
    assert!(
        help.starts_with("`NAME(...)` looks like a use of a function-like macro"),
        "{d}"
    );
    let _ = std::fs::remove_dir_all(&dir);
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
    let files_of = |out: &str| -> Vec<String> {
        out.lines()
            .map(|l| l.split(':').next().unwrap().to_string())
            .collect()
    };
    // .gitignore is honoured outside a git repository too.
    let o = run(&["--format", "concise", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = diag_out(&o);
    let files = files_of(&out);
    assert_eq!(files.len(), 2, "{out}");
    assert!(files[0].ends_with("src/b.c"), "{out}");
    assert!(files[1].ends_with("src/sub/a.c"), "{out}");
    // And in one.
    let git = Command::new("git")
        .arg("init")
        .arg("-q")
        .arg(&dir)
        .status()
        .expect("git runs");
    assert!(git.success());
    let o = run(&["--format", "concise", dir.to_str().unwrap()]);
    assert_eq!(files_of(&diag_out(&o)), files);
    // --no-ignore walks everything, still in path order.
    let o = run(&["--no-ignore", "--format", "concise", dir.to_str().unwrap()]);
    let out = diag_out(&o);
    let all = files_of(&out);
    assert_eq!(all.len(), 3, "{out}");
    assert!(all[0].ends_with("build/gen.c"), "{out}");
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
    assert_eq!(diag_out(&o), "");
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

/// Writes `files` (path, contents) under a fresh temporary directory.
/// `(file name, code)` of every concise line, for comparing runs.
fn codes(o: &Output) -> Vec<(String, String)> {
    diag_out(o)
        .lines()
        .map(|l| {
            let file = Path::new(l.split(':').next().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let code = l.split('[').nth(1).unwrap().split(']').next().unwrap();
            (file, code.to_string())
        })
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn nearest_config_applies_to_each_file() {
    let dir = tree(
        "config-nearest",
        &[
            ("top.c", TWO_FINDINGS),
            ("csa-lint.toml", "ignore = [\"CSA401\"]\n"),
            ("lib/mid.c", TWO_FINDINGS),
            // The nearest file wins outright; files are not merged.
            ("lib/.csa-lint.toml", "select = [\"unguarded-builtin\"]\n"),
            ("lib/deep/low.c", TWO_FINDINGS),
        ],
    );
    let o = run(&["--format", "concise", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        codes(&o),
        pairs(&[
            ("low.c", "CSA401"),
            ("mid.c", "CSA401"),
            ("top.c", "CSA102"),
        ])
    );
    // Linting one file finds its configuration too.
    let o = run(&[
        "--format",
        "concise",
        dir.join("lib/mid.c").to_str().unwrap(),
    ]);
    assert_eq!(codes(&o), pairs(&[("mid.c", "CSA401")]));
    // `--config` replaces discovery for every file.
    let o = run(&[
        "--format",
        "concise",
        "--config",
        dir.join("csa-lint.toml").to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        codes(&o),
        pairs(&[
            ("low.c", "CSA102"),
            ("mid.c", "CSA102"),
            ("top.c", "CSA102"),
        ])
    );
}

#[test]
fn command_line_overrides_the_config() {
    let dir = tree(
        "config-precedence",
        &[
            ("a.c", TWO_FINDINGS),
            ("csa-lint.toml", "select = [\"CSA4\"]\n"),
        ],
    );
    let d = dir.to_str().unwrap();
    let o = run(&["--format", "concise", d]);
    assert_eq!(codes(&o), pairs(&[("a.c", "CSA401")]));
    // --select replaces the file's selection.
    let o = run(&["--format", "concise", "--select", "CSA102", d]);
    assert_eq!(codes(&o), pairs(&[("a.c", "CSA102")]));
    let o = run(&["--format", "concise", "--select", "CSA102,CSA4", d]);
    assert_eq!(codes(&o), pairs(&[("a.c", "CSA102"), ("a.c", "CSA401")]));
    // --ignore applies on top of the file's selection.
    let o = run(&["--format", "concise", "--ignore", "unguarded-builtin", d]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(diag_out(&o), "");
    // --extend-select adds to the file's selection; --ignore still wins.
    let o = run(&["--format", "concise", "--extend-select", "CSA1", d]);
    assert_eq!(codes(&o), pairs(&[("a.c", "CSA102"), ("a.c", "CSA401")]));
    let o = run(&[
        "--format",
        "concise",
        "--extend-select",
        "CSA1",
        "--ignore",
        "CSA102",
        d,
    ]);
    assert_eq!(codes(&o), pairs(&[("a.c", "CSA401")]));
    // --no-config: no file applies, only the defaults and the command line.
    let o = run(&["--format", "concise", "--no-config", d]);
    assert_eq!(codes(&o), pairs(&[("a.c", "CSA102"), ("a.c", "CSA401")]));
    let o = run(&["--no-config", "--config", "csa-lint.toml", d]);
    assert_eq!(o.status.code(), Some(2));
    // A bad selector on the command line is a usage error.
    let o = run(&["--select", "CSA999", d]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("CSA999"), "{}", stderr(&o));
}

#[test]
fn config_extend_select_adds_to_the_selection() {
    let dir = tree(
        "config-extend",
        &[
            ("a.c", TWO_FINDINGS),
            (
                "csa-lint.toml",
                "select = [\"CSA4\"]\nextend-select = [\"no-memory-operations\"]\n",
            ),
        ],
    );
    let o = run(&["--format", "concise", dir.to_str().unwrap()]);
    assert_eq!(codes(&o), pairs(&[("a.c", "CSA102"), ("a.c", "CSA401")]));
}

#[test]
fn config_defines_add_to_command_line_defines() {
    // A `#ifndef NAME` branch is taken unless NAME is defined.
    let text = "#ifndef USE_A\nint a;\n#else\n#ifndef USE_B\nint b;\n#else\nvoid f(int n) {\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < n; i++) {}\n}\n#endif\n#endif\n";
    let dir = tree(
        "config-defines",
        &[("a.c", text), ("csa-lint.toml", "defines = [\"USE_A\"]\n")],
    );
    let d = dir.to_str().unwrap();
    let o = run(&["--format", "concise", d]);
    assert_eq!(diag_out(&o), "");
    let o = run(&["--format", "concise", "-D", "USE_B", d]);
    assert_eq!(codes(&o), pairs(&[("a.c", "CSA102"), ("a.c", "CSA401")]));
    // Without the file's define, the command line's alone is not enough.
    std::fs::remove_file(dir.join("csa-lint.toml")).unwrap();
    let o = run(&["--format", "concise", "-D", "USE_B", d]);
    assert_eq!(diag_out(&o), "");
}

#[test]
fn per_file_ignores_match_globs_relative_to_the_config() {
    let dir = tree(
        "config-per-file",
        &[
            (
                "csa-lint.toml",
                "[per-file-ignores]\n\"legacy/**/*.c\" = [\"CSA102\"]\n\"gen_*.c\" = [\"ALL\"]\n",
            ),
            ("legacy/old/x.c", TWO_FINDINGS),
            ("src/gen_y.c", TWO_FINDINGS),
            ("src/z.c", TWO_FINDINGS),
        ],
    );
    let o = run(&["--format", "concise", dir.to_str().unwrap()]);
    assert_eq!(
        codes(&o),
        pairs(&[("x.c", "CSA401"), ("z.c", "CSA102"), ("z.c", "CSA401")])
    );
}

#[test]
fn config_errors_name_the_file_line_and_key() {
    let cases = [
        (
            "selct = [\"CSA1\"]\n",
            "csa-lint.toml:1:1: unknown key `selct`",
        ),
        (
            "ignore = [\"CSA101\"]\n\ndisable-loop-storage-check = 1\n",
            "csa-lint.toml:3:30: `disable-loop-storage-check`: invalid type",
        ),
        (
            "ivdep-style = \"pragma\"\n",
            "csa-lint.toml:1:15: `ivdep-style`: unknown style `pragma`",
        ),
        (
            "[per-file-ignores]\n\"*.c\" = [\"CSA1\", \"CSA77\"]\n",
            "csa-lint.toml:2:18: `per-file-ignores`: `CSA77` selects no rule",
        ),
    ];
    for (i, (config, expected)) in cases.iter().enumerate() {
        let dir = tree(
            &format!("config-error-{i}"),
            &[("a.c", TWO_FINDINGS), ("csa-lint.toml", config)],
        );
        let o = run(&["--format", "concise", dir.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{config}");
        assert!(stderr(&o).contains(expected), "{config}: {}", stderr(&o));
        assert_eq!(diag_out(&o), "");
    }
    let o = run(&["--config", "no/such/csa-lint.toml", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no/such/csa-lint.toml"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn jobs_give_identical_output() {
    let dir = fixtures();
    let d = dir.to_str().unwrap();
    for format in ["json", "sarif", "concise"] {
        let one = run(&["--jobs", "1", "--format", format, d]);
        let four = run(&["--jobs", "4", "--format", format, d]);
        assert_eq!(one.status.code(), Some(1));
        assert!(one.stdout.len() > 10_000, "{format}");
        assert_eq!(stdout(&one), stdout(&four), "{format}");
    }
}

#[test]
fn quiet_and_statistics() {
    let dir = tree("stats", &[("a.c", TWO_FINDINGS), ("b.c", TWO_FINDINGS)]);
    let d = dir.to_str().unwrap();
    let o = run(&["--format", "full", "--color", "never", d]);
    assert!(stdout(&o).contains("Found 0 error(s), 2 warning(s), 2 info(s) in 2 file(s)."));
    let o = run(&["--quiet", "--format", "full", "--color", "never", d]);
    assert!(!stdout(&o).contains("Found"), "{}", stdout(&o));
    assert!(stdout(&o).contains("CSA102"));
    let o = run(&["--statistics", d]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "     2  CSA102  warning  no-memory-operations\n     2  CSA401  info     unguarded-builtin\nFound 4 diagnostic(s) in 2 file(s).\n"
    );
    let o = run(&["--statistics", "--format", "json", d]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["code"], "CSA102");
    assert_eq!(v[0]["count"], 2);
    assert_eq!(v[1]["rule"], "unguarded-builtin");
}

#[test]
fn help_says_what_the_command_does_first() {
    let o = run(&["--help"]);
    let first = stdout(&o).lines().next().unwrap_or("").to_string();
    assert!(
        first.starts_with("Lint C and Fortran code annotated with CSA loop builtins"),
        "{first}"
    );
    assert!(stdout(&o).contains("Exit status"), "{}", stdout(&o));
}

#[test]
fn concise_ends_with_a_summary_line() {
    let o = run(&[
        "--format",
        "concise",
        fixtures()
            .join("c/fix_unguarded_unattached.c")
            .to_str()
            .unwrap(),
    ]);
    let out = stdout(&o);
    assert!(out.lines().last().unwrap().starts_with("Found "), "{out}");
    let dir = temp_dir("summary-clean");
    let f = dir.join("ok.c");
    std::fs::write(&f, "int x;\n").unwrap();
    let o = run(&["--format", "concise", f.to_str().unwrap()]);
    assert_eq!(stdout(&o), "All checks passed (1 file(s)).\n");
    // --quiet: diagnostics only
    let o = run(&["--quiet", "--format", "concise", f.to_str().unwrap()]);
    assert_eq!(stdout(&o), "");
}

#[test]
fn binary_files_are_skipped_with_a_warning() {
    let dir = temp_dir("binary");
    let f = dir.join("blob.c");
    std::fs::write(
        &f,
        b"\x7fELF\x02\x01\x01\x00\x00\x1b[31m__builtin_csa_parallel_loop();",
    )
    .unwrap();
    let o = run(&["--format", "concise", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("blob.c: skipped: it looks like a binary file (a NUL byte at offset 7)"),
        "{err}"
    );
    assert!(!err.contains('\x1b') && !stdout(&o).contains('\x1b'));
    assert_eq!(stdout(&o), "All checks passed (0 file(s)).\n");
}

#[test]
fn non_utf8_input_gets_a_clear_warning() {
    let dir = temp_dir("latin1");
    let f = dir.join("old.f");
    // a Latin-1 `é` in a comment, then a loop marker the analysis still sees
    std::fs::write(
        &f,
        b"C     r\xe9sum\xe9\n      subroutine s(a, n)\n      call builtin_csa_parallel_loop()\n      a = 1\n      end\n",
    )
    .unwrap();
    let o = run(&["--format", "concise", f.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(
        err.contains(
            "old.f:1:8: not valid UTF-8 (byte 0xE9; the file is probably Latin-1 or Windows-1252)"
        ),
        "{err}"
    );
    assert!(err.contains("iconv"), "{err}");
    // still analysed
    assert!(stdout(&o).contains("CSA105"), "{}", stdout(&o));
}

#[test]
fn control_bytes_are_escaped_in_every_text_format() {
    let dir = temp_dir("controls");
    // a control byte in the file name (concise shows it) and in the
    // source of a reported line (full shows the snippet)
    let f = dir.join("ctl\x1b.c");
    std::fs::write(
        &f,
        "#ifdef __CSA__\nvoid f(int *a, int *b, int n) {\n  __builtin_csa_parallel_loop(); /* \x1b[2J */\n  for (int i = 0; i < n; i++) a[b[i]] = 0;\n}\n#endif\n",
    )
    .unwrap();
    let o = run(&["--format", "concise", f.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(!out.contains('\x1b'), "{out:?}");
    assert!(out.contains("ctl\\x1b.c:4:"), "{out:?}");
    let o = run(&["--format", "full", "--color", "never", f.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(!out.contains('\x1b'), "{out:?}");
    assert!(out.contains("/* ?[2J */"), "{out:?}");
    assert!(out.contains("ctl\\x1b.c"), "{out:?}");
}

#[test]
fn fortran_macros_from_included_headers_are_expanded() {
    let dir = temp_dir("headers");
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    // a header that includes another, relative to its own directory; a
    // name no one defines is not defined in a header (cpp's rule)
    std::fs::write(
        dir.join("inc/decl.h"),
        "#include \"types.h\"\n#ifdef NOT_SET\n#define SHIFT 0\n#else\n#define SHIFT 1\n#endif\n\
         #define ARRAY_DECL(NAME, TYPE, N) \\\n  TYPE, dimension(N) :: NAME\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("inc/types.h"),
        "#define DATA_TYPE double precision\n",
    )
    .unwrap();
    let f = dir.join("kernel.F90");
    std::fs::write(
        &f,
        "#include \"inc/decl.h\"\n\
         subroutine k(n)\n  integer :: n, i\n  ARRAY_DECL(a, DATA_TYPE, n)\n\
         \x20 call builtin_csa_parallel_loop()\n  do i = 1, n - 1\n    a(i + SHIFT) = a(i)\n  end do\nend subroutine\n",
    )
    .unwrap();
    let o = run(&["--no-cache", "--format", "concise", f.to_str().unwrap()]);
    let out = diag_out(&o);
    assert!(!out.contains("CSA001"), "{out}");
    assert!(out.contains("kernel.F90:7:5: error[CSA501]"), "{out}");
    // without the header `a` is no array (the line reads as a call)
    std::fs::remove_file(dir.join("inc/decl.h")).unwrap();
    let o = run(&["--no-cache", "--format", "concise", f.to_str().unwrap()]);
    assert!(!diag_out(&o).contains("CSA501"), "{}", diag_out(&o));
}

#[test]
fn c_macros_from_included_headers_decide_conditions_and_qualifiers() {
    let dir = temp_dir("c-headers");
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    // zlib's way: qualifier macros defined empty or as a storage class by
    // a header, a condition on a header's constant
    std::fs::write(
        dir.join("inc/conf.h"),
        "#ifndef CONF_H\n#define CONF_H\n#ifdef MSDOS\n#  define FAR _far\n#else\n#  define FAR\n#endif\n\
         #define EXPORT\n#define local static\n#define WIDTH 3\n#endif\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("inc/api.h"),
        "#include \"conf.h\"\ntypedef int FAR *intp;\n",
    )
    .unwrap();
    let f = dir.join("k.c");
    std::fs::write(
        &f,
        "#include \"inc/api.h\"\n\
         typedef struct node { int v; } FAR node_t;\n\
         local int FAR * FAR *table;\n\
         void EXPORT scale(int FAR *a, int n) {\n\
         #if WIDTH != 3\n  this is not code\n#endif\n\
         \x20 __builtin_csa_parallel_loop();\n\
         \x20 for (int i = 0; i < n; i++) { a[i] = *(const int FAR *)(a + i) * 2; }\n}\n",
    )
    .unwrap();
    let o = run(&["--no-cache", "--format", "concise", f.to_str().unwrap()]);
    let out = diag_out(&o);
    assert!(!out.contains("CSA001"), "{out}");
    // without the headers, the macros are not known
    std::fs::remove_file(dir.join("inc/conf.h")).unwrap();
    let o = run(&["--no-cache", "--format", "concise", f.to_str().unwrap()]);
    assert!(diag_out(&o).contains("CSA001"), "{}", diag_out(&o));
}

#[test]
fn a_header_is_read_with_its_includers_macros() {
    // MITgcm's way: a fixed-form header declares with `_RL`, a macro of
    // an options header its includers include first
    let dir = temp_dir("includer-context");
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(
        dir.join("inc/OPTIONS.h"),
        "#ifndef REAL4_IS_FAST\n#define _RL Real*8\n#endif\n",
    )
    .unwrap();
    let vars = dir.join("VARS.h");
    std::fs::write(
        &vars,
        "C     VARS.h: the fields\n      COMMON /VARS_R/ u, v\n      _RL u(10), v(10)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("step.F"),
        "#include \"inc/OPTIONS.h\"\n      SUBROUTINE STEP(n)\n      INTEGER n, i\n\
         #include \"VARS.h\"\n      DO i = 1, n\n        u(i) = v(i)\n      END DO\n      END\n",
    )
    .unwrap();
    // zlib's way: a C header uses a qualifier macro of a header its
    // includer includes first
    std::fs::write(dir.join("conf.h"), "#ifndef FAR\n#  define FAR\n#endif\n").unwrap();
    let tree = dir.join("tree.h");
    std::fs::write(
        &tree,
        "typedef struct { int v; } code;\nint build(code FAR * FAR *table, unsigned FAR *bits);\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tree.c"),
        "#include \"conf.h\"\n#include \"tree.h\"\nint build(code FAR * FAR *t, unsigned FAR *b) { return 0; }\n",
    )
    .unwrap();
    // alone, neither header parses: copies in a directory whose parent
    // (where a file named alone looks for its includers) holds no file
    // that includes them
    std::fs::create_dir_all(dir.join("lone")).unwrap();
    for h in [&vars, &tree] {
        let lone = dir.join("lone").join(h.file_name().unwrap());
        std::fs::copy(h, &lone).unwrap();
        let o = run(&[
            "--no-cache",
            "--no-config",
            "--format",
            "concise",
            lone.to_str().unwrap(),
        ]);
        assert!(diag_out(&o).contains("CSA001"), "{}", diag_out(&o));
    }
    std::fs::remove_dir_all(dir.join("lone")).unwrap();
    // named alone, each is read as a file near it that includes it gives
    // it (its directory's parent, walked a few levels down)
    let proj = dir.join("proj");
    std::fs::create_dir_all(proj.join("inc")).unwrap();
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::copy(&vars, proj.join("inc/VARS.h")).unwrap();
    std::fs::copy(dir.join("inc/OPTIONS.h"), proj.join("inc/OPTIONS.h")).unwrap();
    std::fs::write(
        proj.join("src/step.F"),
        "#include \"../inc/OPTIONS.h\"\n      SUBROUTINE STEP(n)\n      INTEGER n, i\n\
         #include \"../inc/VARS.h\"\n      DO i = 1, n\n        u(i) = v(i)\n      END DO\n      END\n",
    )
    .unwrap();
    let o = run(&[
        "--no-cache",
        "--no-config",
        "--format",
        "concise",
        proj.join("inc/VARS.h").to_str().unwrap(),
    ]);
    assert!(!diag_out(&o).contains("CSA001"), "{}", diag_out(&o));
    std::fs::remove_dir_all(&proj).unwrap();
    // linted with their includers, both do (and so do the includers)
    let o = run(&[
        "--no-cache",
        "--no-config",
        "--format",
        "concise",
        dir.to_str().unwrap(),
    ]);
    assert!(!diag_out(&o).contains("CSA001"), "{}", diag_out(&o));
    // the same from the cache
    let cache = dir.join("cache");
    for _ in 0..2 {
        let o = run(&[
            "--cache-dir",
            cache.to_str().unwrap(),
            "--no-config",
            "--format",
            "concise",
            vars.to_str().unwrap(),
            dir.join("step.F").to_str().unwrap(),
        ]);
        assert!(!diag_out(&o).contains("CSA001"), "{}", diag_out(&o));
    }
    // a change of what the includer includes is not hidden by the cache
    std::fs::write(dir.join("inc/OPTIONS.h"), "#define REAL4_IS_FAST\n").unwrap();
    let o = run(&[
        "--cache-dir",
        cache.to_str().unwrap(),
        "--no-config",
        "--format",
        "concise",
        vars.to_str().unwrap(),
        dir.join("step.F").to_str().unwrap(),
    ]);
    assert!(
        diag_out(&o).contains("VARS.h:3:7: info[CSA001]"),
        "{}",
        diag_out(&o)
    );
}

#[test]
fn headers_are_searched_in_include_dirs() {
    let dir = temp_dir("include-dirs");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("config/big")).unwrap();
    std::fs::create_dir_all(dir.join("framework")).unwrap();
    // `<name>` is searched in the include directories only; a quoted name
    // that is not beside the file is searched there too
    std::fs::write(dir.join("config/big/memory.h"), "#define NI_ 100\n").unwrap();
    std::fs::write(
        dir.join("framework/macros.h"),
        "!/// heap arrays\n#define ALLOCABLE_ , allocatable\n",
    )
    .unwrap();
    let f = dir.join("src/model.F90");
    std::fs::write(
        &f,
        "#include <memory.h>\n#include \"macros.h\"\n\
         subroutine k(b)\n  real ALLOCABLE_, dimension(:) :: w\n  real :: b(NI_)\n  integer :: i\n\
         \x20 call builtin_csa_parallel_loop()\n  do i = 2, NI_\n    b(i) = b(i - 1)\n  end do\nend subroutine\n",
    )
    .unwrap();
    let file = f.to_str().unwrap();
    let o = run(&["--no-cache", "--no-config", "--format", "concise", file]);
    assert!(diag_out(&o).contains("CSA001"), "{}", diag_out(&o));
    let framework = dir.join("framework");
    let big = dir.join("config/big");
    let o = run(&[
        "--no-cache",
        "--no-config",
        "--format",
        "concise",
        "-I",
        framework.to_str().unwrap(),
        "--include-dir",
        big.to_str().unwrap(),
        file,
    ]);
    let out = diag_out(&o);
    assert!(!out.contains("CSA001"), "{out}");
    assert!(out.contains("model.F90:9:5: error[CSA501]"), "{out}");
    // the same from the configuration, relative to its directory
    std::fs::write(
        dir.join("csa-lint.toml"),
        "include-dirs = [\"framework\", \"config/big\"]\n",
    )
    .unwrap();
    let o = run(&["--no-cache", "--format", "concise", file]);
    let out = diag_out(&o);
    assert!(!out.contains("CSA001"), "{out}");
    assert!(out.contains("model.F90:9:5: error[CSA501]"), "{out}");
}

#[test]
fn cpp_headers_are_skipped() {
    let dir = temp_dir("cpp_header");
    let h = dir.join("grid.h");
    std::fs::write(
        &h,
        "#include <vector>\nnamespace prk {\ntemplate <typename T> T twice(T x) { return 2 * x; }\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("plain.h"), "int f(void);\n").unwrap();
    // walked: skipped without a word; the C header is read
    let o = run(&["--no-cache", "--format", "concise", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert!(stdout(&o).contains("(1 file(s))"), "{}", stdout(&o));
    // named: skipped with a warning that says why
    let o = run(&["--no-cache", "--format", "concise", h.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("skipped: it is a C++ header"),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains("CSA001"));
    // a language given reads it as that language
    let o = run(&[
        "--no-cache",
        "--language",
        "c",
        "--format",
        "concise",
        h.to_str().unwrap(),
    ]);
    assert!(stdout(&o).contains("CSA001"), "{}", stdout(&o));
}
