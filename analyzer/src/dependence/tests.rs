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

mod shortcuts {
    //! The pair tests' shortcuts (the memo of alike accesses, the skip of
    //! pairs that cannot change an unproven result, the budget counting
    //! tested pairs) give what testing every pair gives.
    use super::*;
    use proptest::prelude::*;

    fn all_deps(kind: SourceKind, src: &str, exhaustive: bool) -> Vec<LoopDeps> {
        super::super::EXHAUSTIVE.with(|e| e.set(exhaustive));
        let fa = analyze(kind, src, &AnalysisOptions::default());
        super::super::EXHAUSTIVE.with(|e| e.set(false));
        fa.functions.iter().flat_map(|f| f.deps.clone()).collect()
    }

    /// An access to `A` (C) in a loop over `i` inside one over `j`.
    fn c_access() -> impl Strategy<Value = String> {
        prop_oneof![
            (0..4i32).prop_map(|k| format!("A[i + {k}][j]")),
            (0..4i32).prop_map(|k| format!("A[i][{k}]")),
            (0..3i32).prop_map(|k| format!("A[{k}][j]")),
            Just("A[idx[i]][j]".to_string()),
            Just("A[i * i][j]".to_string()),
            Just("A[i][n]".to_string()),
            Just("A[n * i][j + 1]".to_string()),
            Just("A[i][idx[j]]".to_string()),
        ]
    }

    fn c_loop(stmts: &[(String, String, bool)]) -> String {
        let mut s = String::from(
            "double A[200][200];\nint idx[200];\nvoid f(int n) {\n#pragma omp parallel for\n  for (int i = 0; i < 50; i++)\n    for (int j = 0; j < 50; j++) {\n",
        );
        for (lhs, rhs, cond) in stmts {
            if *cond {
                s.push_str(&format!("      if (idx[j] > 0) {lhs} = {rhs} + 1;\n"));
            } else {
                s.push_str(&format!("      {lhs} = {rhs} + 1;\n"));
            }
        }
        s.push_str("    }\n}\n");
        s
    }

    /// An access to `a` (Fortran) in a loop over `j` inside one over `i`.
    fn f_access() -> impl Strategy<Value = String> {
        prop_oneof![
            (0..4i32).prop_map(|k| format!("a(j, i + {k})")),
            (1..4i32).prop_map(|k| format!("a({k}, i)")),
            (1..4i32).prop_map(|k| format!("a(j, {k})")),
            Just("a(:, i)".to_string()),
            Just("a(1:n, 2)".to_string()),
            Just("a(idx(i), j)".to_string()),
            Just("a(j, i * i)".to_string()),
            Just("a(j, n)".to_string()),
        ]
    }

    fn f_loop(stmts: &[(String, String, bool)]) -> String {
        let mut s = String::from(
            "subroutine f(a, idx, n)\n  integer :: n, i, j\n  integer :: idx(100)\n  real :: a(100, 100)\n  !$omp parallel do private(j)\n  do i = 1, 40\n    do j = 1, 40\n",
        );
        for (lhs, rhs, cond) in stmts {
            // a whole-column section is assigned a scalar
            let rhs = if rhs.contains(':') { "1.0".to_string() } else { rhs.clone() };
            if *cond {
                s.push_str(&format!("      if (idx(j) > 0) {lhs} = {rhs} + 1\n"));
            } else {
                s.push_str(&format!("      {lhs} = {rhs} + 1\n"));
            }
        }
        s.push_str("    end do\n  end do\nend subroutine\n");
        s
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn c_shortcuts_agree_with_every_pair(
            stmts in prop::collection::vec((c_access(), c_access(), any::<bool>()), 1..40)
        ) {
            let src = c_loop(&stmts);
            prop_assert_eq!(all_deps(SourceKind::C, &src, false), all_deps(SourceKind::C, &src, true), "{}", src);
        }

        #[test]
        fn fortran_shortcuts_agree_with_every_pair(
            stmts in prop::collection::vec((f_access(), f_access(), any::<bool>()), 1..40)
        ) {
            let src = f_loop(&stmts);
            let kind = SourceKind::FortranFree;
            prop_assert_eq!(all_deps(kind, &src, false), all_deps(kind, &src, true), "{}", src);
        }
    }

    #[test]
    fn the_generated_loops_reach_every_kind_of_result() {
        // the generators make conflicts, unproven pairs and independent
        // loops, and unproven pairs before a conflict (what the skip skips)
        let late = c_loop(&[
            ("A[idx[i]][j]".into(), "A[i][j]".into(), false),
            ("A[i][0]".into(), "A[i][1]".into(), false),
            ("A[0][j]".into(), "A[1][j]".into(), false),
        ]);
        let d = all_deps(SourceKind::C, &late, false);
        assert!(
            matches!(d[0].findings.as_slice(), [Finding::Conflict { .. }]),
            "{:?}",
            d[0].findings
        );
        let unproven = c_loop(&[("A[idx[i]][j]".into(), "A[i][j]".into(), false)]);
        let d = all_deps(SourceKind::C, &unproven, false);
        assert!(
            matches!(d[0].findings.as_slice(), [Finding::Unproven { .. }]),
            "{:?}",
            d[0].findings
        );
        let fine = c_loop(&[("A[i][j]".into(), "A[i][0]".into(), true)]);
        assert!(all_deps(SourceKind::C, &fine, false)[0].findings.is_empty());
    }
}
