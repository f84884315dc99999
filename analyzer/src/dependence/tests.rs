//! End-to-end checks of the dependence analysis that fixtures cannot
//! express (budgets, generated inputs, the facts behind the messages).

use crate::analysis::{analyze, AnalysisOptions};
use crate::dependence::{Finding, LoopDeps, Unproven};
use csa_grammars::SourceKind;

fn deps(src: &str) -> Vec<LoopDeps> {
    let fa = analyze(SourceKind::C, src, &AnalysisOptions::default());
    fa.functions.iter().flat_map(|f| f.deps.clone()).collect()
}

#[test]
fn a_loop_too_large_for_the_budget_is_unproven_not_silent() {
    // 300 statements, each independent of the others: ~180000 pairs
    let mut src = String::from("double A[100000];\nvoid f(void) {\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < 100; i++) {\n");
    for k in 0..300 {
        src.push_str(&format!("    A[300 * i + {k}] = A[300 * i + {k}] + 1;\n"));
    }
    src.push_str("  }\n}\n");
    let d = deps(&src);
    assert_eq!(d.len(), 1);
    assert!(
        d[0].findings.iter().any(|f| matches!(
            f,
            Finding::Unproven {
                why: Unproven::Budget,
                ..
            }
        )),
        "{:?}",
        d[0].findings
    );
}

#[test]
fn distance_and_witness_of_a_strong_siv_conflict() {
    let d = deps("double A[100];\nvoid f(void) {\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < 90; i++)\n    A[i + 3] = A[i];\n}\n");
    let Some(Finding::Conflict { distance, .. }) = d[0].findings.first() else {
        panic!("{:?}", d[0].findings)
    };
    assert_eq!(distance.map(i64::abs), Some(3));
}

#[test]
fn registers_do_not_count_for_markers_but_memory_scalars_do() {
    // `s` is a local in registers; `g` is a global (memory)
    let d = deps("double A[100], g;\nvoid f(void) {\n  double s = 0;\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < 100; i++) {\n    s = s + A[i];\n    g = A[i];\n  }\n  A[0] = s;\n}\n");
    let objects: Vec<String> = d[0]
        .findings
        .iter()
        .map(|f| match f {
            Finding::Conflict { object, .. } | Finding::Unproven { object, .. } => object.clone(),
        })
        .collect();
    assert_eq!(objects, vec!["g".to_string()]);
}

#[test]
fn scalar_facts_drive_the_clause() {
    use crate::scalars::RedOp;
    let src = "double A[100];\nvoid f(int n) {\n  double t, s = 0, c = 1;\n#pragma omp parallel for\n  for (int i = 0; i < n; i++) {\n    t = A[i];\n    s = s + t * 2;\n    A[i] = c;\n    c = t;\n  }\n  A[1] = s;\n}\n";
    let fa = analyze(SourceKind::C, src, &AnalysisOptions::default());
    let f = &fa.functions[0];
    let d = &f.deps[0];
    let get = |n: &str| {
        d.scalars
            .iter()
            .find(|u| f.func.var(u.var).name == n)
            .unwrap_or_else(|| panic!("{n}: {:?}", d.scalars))
    };
    // t: set before use, dead after the loop
    let t = get("t");
    assert!(t.exposed_read.is_none() && !t.live_after && t.written_every);
    // s: a sum, read after the loop
    let s = get("s");
    assert_eq!(s.reduction, Ok(Some(RedOp::Add)));
    assert!(s.live_after);
    // c: read before it is written: carried
    let c = get("c");
    assert!(c.exposed_read.is_some());
    assert!(c.reduction.is_err());
}
