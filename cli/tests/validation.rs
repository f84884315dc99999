//! Compile-and-run validation of `csa-lint --rewrite` (REWRITES.md
//! "Validate the clauses, not just the text"). For every program in
//! `tests/validation/` (C with `csa_stubs.h`, Fortran with `csa_stubs.f90`,
//! which define the builtins away):
//!
//! 1. build it as written (markers do nothing) and run it: the reference;
//! 2. `--rewrite openmp`, check the directive text against the program's
//!    `expect:` lines (a missing `private` can pass a run by luck) or, for
//!    `expect-refused: NAME`, that the marker stays and the refusal names
//!    NAME; build with `-fopenmp`, run with `OMP_NUM_THREADS=4`: same
//!    output;
//! 3. for programs with loop markers, `--rewrite ivdep --ivdep-style
//!    gcc-pragma`, build, run: same output (`expect-ivdep-refused: NAME`:
//!    the file must stay as it is, for a loop with a proven conflict).
//!
//! gcc is required; gfortran too (CI installs it): a Fortran case fails
//! with a clear message when it is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

fn validation_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("tests")
        .join("validation")
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

struct Program {
    path: PathBuf,
    fortran: bool,
    text: String,
}

impl Program {
    fn comment(&self) -> &'static str {
        if self.fortran {
            "!"
        } else {
            "//"
        }
    }

    fn header(&self, key: &str) -> Vec<String> {
        let prefix = format!("{} {key}:", self.comment());
        self.text
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix).map(|r| r.trim().to_string()))
            .collect()
    }

    /// Builds `src` (a copy of the program, maybe rewritten) into `exe`.
    fn build(&self, src: &Path, exe: &Path, openmp: bool) {
        self.build_with(src, exe, openmp, &[]);
    }

    fn build_with(&self, src: &Path, exe: &Path, openmp: bool, extra: &[&str]) {
        let dir = validation_dir();
        let mut cmd = if self.fortran {
            let mut c = Command::new("gfortran");
            c.arg("-O1").arg(dir.join("csa_stubs.f90"));
            c
        } else {
            let mut c = Command::new("gcc");
            c.arg("-O1").arg("-include").arg(dir.join("csa_stubs.h"));
            c
        };
        if openmp {
            cmd.arg("-fopenmp");
        }
        cmd.args(extra);
        cmd.arg(src).arg("-o").arg(exe);
        run(&mut cmd, &format!("building {}", src.display()));
    }

    fn execute(&self, exe: &Path) -> String {
        run(
            Command::new(exe).env("OMP_NUM_THREADS", "4"),
            &format!("running {}", exe.display()),
        )
    }
}

fn lint(args: &[&str], file: &Path) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_csa-lint"))
        .args(args)
        .arg("--exit-zero")
        .arg(file)
        .output()
        .expect("csa-lint runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn programs() -> Vec<Program> {
    let mut out: Vec<Program> = std::fs::read_dir(validation_dir())
        .expect("tests/validation exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !name.starts_with("csa_stubs")
                && matches!(p.extension().and_then(|e| e.to_str()), Some("c" | "f90"))
        })
        .map(|p| Program {
            fortran: p.extension().and_then(|e| e.to_str()) == Some("f90"),
            text: std::fs::read_to_string(&p).expect("readable"),
            path: p,
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

fn check(p: &Program) -> Result<(), String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let name = p.path.file_name().unwrap();
    let seq_exe = tmp.path().join("seq");
    p.build(&p.path, &seq_exe, false);
    let reference = p.execute(&seq_exe);

    // OpenMP
    let omp_src = tmp.path().join(name);
    std::fs::copy(&p.path, &omp_src).map_err(|e| e.to_string())?;
    let (_, stderr) = lint(&["--rewrite", "openmp", "--unsafe-fixes"], &omp_src);
    let converted = std::fs::read_to_string(&omp_src).map_err(|e| e.to_string())?;
    for want in p.header("expect") {
        // The directive lines, not the `expect:` comments that quote them.
        let found = converted
            .lines()
            .filter(|l| {
                !l.trim_start()
                    .starts_with(&format!("{} expect", p.comment()))
            })
            .any(|l| l.trim() == want);
        if !found {
            return Err(format!(
                "{}: no line `{want}` after --rewrite openmp:\n{converted}\nstderr:\n{stderr}",
                p.path.display()
            ));
        }
    }
    for var in p.header("expect-refused") {
        if converted != p.text {
            return Err(format!(
                "{}: the loop carries `{var}` and must stay unconverted, got:\n{converted}",
                p.path.display()
            ));
        }
        if !stderr.contains(&format!("`{var}`")) {
            return Err(format!(
                "{}: the refusal does not name `{var}`:\n{stderr}",
                p.path.display()
            ));
        }
    }
    if p.header("expect").is_empty() && p.header("expect-refused").is_empty() {
        return Err(format!("{}: no expect: header", p.path.display()));
    }
    let omp_exe = tmp.path().join("omp");
    p.build(&omp_src, &omp_exe, true);
    let parallel = p.execute(&omp_exe);
    if parallel != reference {
        return Err(format!(
            "{}: OpenMP output differs\nsequential: {reference}\nOpenMP:     {parallel}\n{converted}",
            p.path.display()
        ));
    }
    // Rewriting again changes nothing.
    let (_, _) = lint(&["--rewrite", "openmp", "--unsafe-fixes"], &omp_src);
    let again = std::fs::read_to_string(&omp_src).map_err(|e| e.to_string())?;
    if again != converted {
        return Err(format!(
            "{}: a second rewrite changed the file",
            p.path.display()
        ));
    }

    // ivdep (programs with loop markers)
    if !["parallel_loop", "spmd"].iter().any(|m| {
        p.text
            .to_ascii_lowercase()
            .contains(&format!("builtin_csa_{m}"))
    }) {
        return Ok(());
    }
    let iv_dir = tmp.path().join("ivdep");
    std::fs::create_dir(&iv_dir).map_err(|e| e.to_string())?;
    let iv_src = iv_dir.join(name);
    std::fs::copy(&p.path, &iv_src).map_err(|e| e.to_string())?;
    // the default spelling (no style configured): it must build with the
    // C standard most code uses, C11, where `[[...]]` is a syntax error
    lint(&["--rewrite", "ivdep", "--unsafe-fixes"], &iv_src);
    let iv_text = std::fs::read_to_string(&iv_src).map_err(|e| e.to_string())?;
    if !p.header("expect-ivdep-refused").is_empty() {
        // a proven conflict: ivdep's assertion would be false too
        return if iv_text == p.text {
            Ok(())
        } else {
            Err(format!(
                "{}: --rewrite ivdep changed a program whose loop conflicts",
                p.path.display()
            ))
        };
    }
    let spelled = if p.fortran {
        "!DIR$ IVDEP"
    } else {
        "#pragma GCC ivdep"
    };
    if !iv_text.contains(spelled) {
        return Err(format!(
            "{}: no `{spelled}` after --rewrite ivdep",
            p.path.display()
        ));
    }
    let iv_exe = tmp.path().join("ivdep_exe");
    let std: &[&str] = if p.fortran {
        &[]
    } else {
        &["-std=c11", "-pedantic-errors"]
    };
    p.build_with(&iv_src, &iv_exe, false, std);
    let iv_out = p.execute(&iv_exe);
    if iv_out != reference {
        return Err(format!(
            "{}: ivdep output differs\nsequential: {reference}\nivdep:      {iv_out}",
            p.path.display()
        ));
    }
    Ok(())
}

fn check_all(fortran: bool, minimum: usize) {
    let tool = if fortran { "gfortran" } else { "gcc" };
    let progs: Vec<Program> = programs()
        .into_iter()
        .filter(|p| p.fortran == fortran)
        .collect();
    assert!(
        progs.len() >= minimum,
        "expected at least {minimum} programs, found {}",
        progs.len()
    );
    assert!(
        have(tool),
        "{tool} is not installed: the compile-and-run validation of the rewrites needs it (CI installs it with apt-get install {tool})"
    );
    let failures: Vec<String> = progs.iter().filter_map(|p| check(p).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn c_rewrites_compile_and_match_sequential() {
    check_all(false, 12);
}

#[test]
fn fortran_rewrites_compile_and_match_sequential() {
    check_all(true, 5);
}
