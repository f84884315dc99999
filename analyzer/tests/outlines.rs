//! Functions that hold nothing any rule looks at are outlines, and the C
//! file scan skips bodies whose text shows they define nothing
//! (`frontend::relevance`): the diagnostics and the IR of every lowered
//! function must be exactly those of the analysis that lowers and scans
//! every body, on every fixture and on the benchmark's generated code.

use analyzer::{analyze, AnalysisOptions};
use csa_grammars::SourceKind;
use std::path::Path;

#[allow(dead_code)]
#[path = "../benches/corpus/mod.rs"]
mod corpus;

/// Analyses `text` both ways; returns (functions, outlines).
fn compare(name: &str, kind: SourceKind, text: &str) -> (usize, usize) {
    let outlined = analyze(kind, text, &AnalysisOptions::default());
    let every = analyze(
        kind,
        text,
        &AnalysisOptions {
            every_body: true,
            ..AnalysisOptions::default()
        },
    );
    assert_eq!(
        outlined.diagnostics(),
        every.diagnostics(),
        "{name}: outlines change the diagnostics"
    );
    let names = |a: &analyzer::Analysis| -> Vec<(String, u32, u32)> {
        a.functions()
            .iter()
            .map(|f| {
                (
                    f.func.name.clone(),
                    f.func.span.start,
                    f.func.name_span.start,
                )
            })
            .collect()
    };
    assert_eq!(names(&outlined), names(&every), "{name}: functions differ");
    assert!(every.functions().iter().all(|f| !f.func.outline), "{name}");
    // The lowered functions are lowered alike (the shortcuts of the file
    // scan change no fact); a skeleton has the control flow of the whole
    // lowering.
    for (a, b) in outlined.functions().iter().zip(every.functions()) {
        assert!(!b.func.skeleton, "{name}");
        if a.func.skeleton {
            assert_eq!(
                a.func.control_flow(),
                b.func.control_flow(),
                "{name}: {}",
                a.func.name
            );
        } else if !a.func.outline {
            assert_eq!(
                a.dump(outlined.source()),
                b.dump(every.source()),
                "{name}: {}",
                a.func.name
            );
        }
    }
    let outlines = outlined
        .functions()
        .iter()
        .filter(|f| f.func.outline || f.func.skeleton)
        .count();
    (outlined.functions().len(), outlines)
}

/// A deterministic generator of Fortran units full of labels and jumps:
/// GO TO (plain, conditional, computed), arithmetic IF, jumps into and out
/// of DO loops and IF blocks, labelled DO loops, EXIT, CYCLE, RETURN and
/// STOP, among assignments, calls and I/O with `ERR=`.
struct Jumpy {
    state: u64,
    labels: Vec<u32>,
    out: String,
}

impl Jumpy {
    fn next(&mut self) -> u64 {
        // xorshift64
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    fn pick(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn label(&mut self) -> u32 {
        let l = 10 * (self.labels.len() as u32 + 1);
        self.labels.push(l);
        l
    }

    fn line(&mut self, depth: usize, text: &str) {
        self.out.push_str(&"  ".repeat(depth + 1));
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// A block of statements; `in_loop`: EXIT and CYCLE are allowed.
    fn block(&mut self, depth: usize, in_loop: bool) {
        let n = 1 + self.pick(5);
        for _ in 0..n {
            self.statement(depth, in_loop);
        }
    }

    fn statement(&mut self, depth: usize, in_loop: bool) {
        let nested = depth < 3;
        match self.pick(if nested { 17 } else { 11 }) {
            0 | 1 => self.line(depth, "a(i) = a(i) + x"),
            2 => self.line(depth, "call work(a, n)"),
            3 => self.line(depth, "write (*, *, err=@) x"),
            4 => self.line(depth, "go to @"),
            5 => self.line(depth, "if (x > 0) go to @"),
            6 => self.line(depth, "if (x - 1) @, @, @"),
            7 => self.line(depth, "go to (@, @), k"),
            8 => {
                let l = self.label();
                self.line(depth, &format!("{l} continue"));
            }
            9 => {
                let l = self.label();
                self.line(depth, &format!("{l} a(1) = 0"));
            }
            10 => match (in_loop, self.pick(4)) {
                (true, 0) => self.line(depth, "exit"),
                (true, 1) => self.line(depth, "cycle"),
                (_, 2) => self.line(depth, "return"),
                _ => self.line(depth, "if (k > 3) stop"),
            },
            11 | 12 => {
                self.line(depth, "do i = 1, n");
                self.block(depth + 1, true);
                self.line(depth, "end do");
            }
            13 => {
                let l = self.label();
                self.line(depth, &format!("do {l} j = 1, n"));
                self.block(depth + 1, true);
                self.line(depth, &format!("{l} continue"));
            }
            14 => {
                self.line(depth, "do while (x > 0)");
                self.block(depth + 1, true);
                self.line(depth, "end do");
            }
            _ => {
                self.line(depth, "if (n > 1) then");
                self.block(depth + 1, in_loop);
                if self.pick(2) == 0 {
                    self.line(depth, "else");
                    self.block(depth + 1, in_loop);
                }
                self.line(depth, "end if");
            }
        }
    }

    /// One subroutine; every `@` becomes a label the unit defines.
    fn unit(&mut self, k: usize) -> String {
        self.labels.clear();
        self.out =
            format!("subroutine jumpy{k}(a, n, x, k)\n  integer n, i, j, k\n  real a(n), x\n");
        let l = self.label();
        self.line(0, &format!("{l} continue"));
        self.block(0, false);
        self.block(0, false);
        self.out.push_str("end subroutine\n");
        let mut text = String::new();
        for c in std::mem::take(&mut self.out).chars() {
            if c == '@' {
                let i = self.pick(self.labels.len() as u64) as usize;
                text.push_str(&self.labels[i].to_string());
            } else {
                text.push(c);
            }
        }
        text
    }
}

/// Units whose only interest is their jumps are lowered as skeletons:
/// CSA002 must be exactly what the whole lowering finds, on units where
/// jumps enter loops from every side.
#[test]
fn skeletons_keep_every_irreducible_loop() {
    let mut g = Jumpy {
        state: 0x9e37_79b9_7f4a_7c15,
        labels: Vec::new(),
        out: String::new(),
    };
    let mut irreducible = 0;
    let mut skeletons = 0;
    for file in 0..40 {
        let text: String = (0..10).map(|k| g.unit(file * 10 + k)).collect();
        let outlined = analyze(SourceKind::FortranFree, &text, &AnalysisOptions::default());
        skeletons += outlined
            .functions()
            .iter()
            .filter(|f| f.func.skeleton)
            .count();
        irreducible += outlined
            .diagnostics()
            .iter()
            .filter(|d| d.code.to_string() == "CSA002")
            .count();
        compare(
            &format!("jumpy file {file}:\n{text}"),
            SourceKind::FortranFree,
            &text,
        );
    }
    assert!(skeletons > 300, "{skeletons} skeletons");
    assert!(irreducible > 40, "{irreducible} CSA002");
}

#[test]
fn outlines_keep_every_fixtures_diagnostics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut seen = 0;
    let mut outlines = 0;
    for dir in ["c", "fortran"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths {
            let Some(kind) = csa_grammars::detect(&path) else {
                continue;
            };
            let text = std::fs::read_to_string(&path).unwrap();
            outlines += compare(&path.display().to_string(), kind, &text).1;
            seen += 1;
        }
    }
    assert!(seen > 100, "only {seen} fixtures found");
    // The fixtures are mostly annotated code; `outlines.c` and
    // `outlines.f90` hold five functions without anything for CSA, and a
    // few other fixtures have helpers: the test must exercise outlines.
    assert!(outlines >= 8, "only {outlines} outlines");
}

#[test]
fn outlines_keep_generated_codes_diagnostics() {
    let mut functions = 0;
    let mut outlines = 0;
    // dense: half the C functions annotated, every Fortran subroutine;
    // a quarter: outlines in both languages
    for density in [corpus::Density::Dense, corpus::Density::Percent(25)] {
        for (i, file) in corpus::corpus(600_000, density).iter().enumerate() {
            let (f, o) = compare(&format!("corpus file {i}"), file.kind, &file.text);
            functions += f;
            outlines += o;
        }
    }
    assert!(
        outlines * 4 > functions,
        "{outlines} outlines of {functions} functions"
    );
}
