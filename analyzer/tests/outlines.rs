//! Functions that hold nothing any rule looks at are outlines, and the C
//! file scan skips bodies whose text shows they define nothing
//! (`frontend::relevance`): the diagnostics and the IR of every lowered
//! function must be exactly those of the analysis that lowers and scans
//! every body, on every fixture and on the benchmark's generated code.

use analyzer::analysis::{analyze, AnalysisOptions};
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
        outlined.diagnostics, every.diagnostics,
        "{name}: outlines change the diagnostics"
    );
    let names = |a: &analyzer::analysis::FileAnalysis| -> Vec<(String, u32, u32)> {
        a.functions
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
    assert!(every.functions.iter().all(|f| !f.func.outline), "{name}");
    // The lowered functions are lowered alike (the shortcuts of the file
    // scan change no fact).
    for (a, b) in outlined.functions.iter().zip(&every.functions) {
        if !a.func.outline {
            assert_eq!(
                a.dump(&outlined.source),
                b.dump(&every.source),
                "{name}: {}",
                a.func.name
            );
        }
    }
    let outlines = outlined.functions.iter().filter(|f| f.func.outline).count();
    (outlined.functions.len(), outlines)
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
