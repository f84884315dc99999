//! Marker rewrites on whole files.

use super::*;
use crate::analysis::{analyze, AnalysisOptions};

fn rewrite(kind: SourceKind, src: &str, target: Target) -> (String, Vec<String>) {
    let fa = analyze(kind, src, &AnalysisOptions::default());
    let rs = rewrite_markers(&fa, target);
    let refusals = rs
        .iter()
        .filter(|r| !r.converts())
        .map(|r| r.fix.title.clone())
        .collect();
    (apply_rewrites(src, &rs), refusals)
}

/// `fix_all` with unsafe fixes allowed, default analysis options.
fn fix_unsafe(kind: SourceKind, src: &str, fix: bool, rewrite: Option<Target>) -> FixAllResult {
    fix_all(
        kind,
        src,
        &AnalysisOptions::default(),
        &FixAllOptions {
            fix,
            unsafe_fixes: true,
            rewrite,
            disabled: Vec::new(),
        },
    )
}

#[test]
fn c_parallel_loop_with_reduction() {
    let src = "int f(int n, int *a) {\n  int s = 0;\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < n; i++)\n    s += a[i];\n  return s;\n}\n";
    let (out, refused) = rewrite(SourceKind::C, src, Target::OpenMp);
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(
        out,
        "int f(int n, int *a) {\n  int s = 0;\n  #pragma omp parallel for reduction(+:s)\n  for (int i = 0; i < n; i++)\n    s += a[i];\n  return s;\n}\n"
    );
    let (again, _) = rewrite(SourceKind::C, &out, Target::OpenMp);
    assert_eq!(again, out);
}

#[test]
fn c_guarded_spmd_with_crlf() {
    let src = "void f(int n, int *a) {\r\n#ifdef __CSA__\r\n\t__builtin_csa_spmd(4, 8);\r\n#endif\r\n\tfor (int i = 0; i < n; i++)\r\n\t\ta[i] = 0;\r\n}\r\n";
    let (out, refused) = rewrite(SourceKind::C, src, Target::OpenMp);
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(
        out,
        "void f(int n, int *a) {\r\n\t#pragma omp parallel for num_threads(4) schedule(static, 8)\r\n\tfor (int i = 0; i < n; i++)\r\n\t\ta[i] = 0;\r\n}\r\n"
    );
}

#[test]
fn c_carried_scalar_is_refused_and_untouched() {
    let src = "void f(int n, int *a) {\n  int p = 0;\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < n; i++) { a[i] = p; p = i; }\n}\n";
    let (out, refused) = rewrite(SourceKind::C, src, Target::OpenMp);
    assert_eq!(out, src);
    assert_eq!(refused.len(), 1);
    assert!(refused[0].contains("`p`"), "{}", refused[0]);
}

#[test]
fn fortran_parallel_do() {
    let src = "subroutine f(n, a, s)\n  integer :: n, i\n  real :: a(n), s\n  s = 0\n  call builtin_csa_spmd(4, 0)\n  do i = 1, n\n    s = s + a(i)\n  end do\nend subroutine\n";
    let (out, refused) = rewrite(SourceKind::FortranFree, src, Target::OpenMp);
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(
        out,
        "subroutine f(n, a, s)\n  integer :: n, i\n  real :: a(n), s\n  s = 0\n  !$omp parallel do num_threads(4) schedule(static) reduction(+:s)\n  do i = 1, n\n    s = s + a(i)\n  end do\n  !$omp end parallel do\nend subroutine\n"
    );
}

#[test]
fn module_arrays_of_another_file_are_assumed_not_threadprivate() {
    let src = "subroutine f(n)\n  use grid, only: area, dxn\n  implicit none\n  integer :: n, i\n  call builtin_csa_parallel_loop()\n  do i = 1, n\n    area(i) = dxn(i)\n  end do\n  dxn(:) = 0\nend subroutine\n";
    let fa = analyze(SourceKind::FortranFree, src, &AnalysisOptions::default());
    let rs = rewrite_markers(&fa, Target::OpenMp);
    assert_eq!(rs.len(), 1);
    assert!(rs[0].converts(), "{}", rs[0].fix.title);
    assert!(
        rs[0]
            .fix
            .title
            .ends_with("(asserts the iterations are independent; assumes that `dxn`, `area` (declared in another file) are not `threadprivate`)"),
        "{}",
        rs[0].fix.title
    );
}

#[test]
fn ivdep_styles() {
    let src =
        "void f(int n, int *a) {\n  __builtin_csa_parallel_loop();\n  while (n--) a[n] = 0;\n}\n";
    for (style, line) in [
        (IvdepStyle::Attribute, "[[intel::ivdep]]"),
        (IvdepStyle::IntelPragma, "#pragma ivdep"),
        (IvdepStyle::GccPragma, "#pragma GCC ivdep"),
    ] {
        let (out, refused) = rewrite(SourceKind::C, src, Target::Ivdep(style));
        assert!(refused.is_empty());
        assert_eq!(
            out,
            format!("void f(int n, int *a) {{\n  {line}\n  while (n--) a[n] = 0;\n}}\n")
        );
    }
}

#[test]
fn pipeline_loop_is_display_only() {
    let src = "void f(int n, int *a) {\n  for (int j = 0; j < n; j++) {\n    __builtin_csa_pipeline_loop(2);\n    for (int i = 0; i < n; i++) a[i] += j;\n  }\n}\n";
    let (out, refused) = rewrite(SourceKind::C, src, Target::OpenMp);
    assert_eq!(out, src);
    assert!(refused[0].contains("-csa-ilpl-selection=automatic"));
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    const C_PIECES: &[&str] = &[
        "void f(int n, int *a) {",
        "}",
        "{",
        "for (int i = 0; i < n; i++)",
        "for (i = 0; i < *n; i++)",
        "while (n--)",
        "__builtin_csa_parallel_loop();",
        "__builtin_csa_spmd(4, 8);",
        "__builtin_csa_spmdization(2, \"block\");",
        "__builtin_csa_pipeline_loop(2);",
        "int r = __builtin_csa_parallel_region_entry(0);",
        "int s = __builtin_csa_parallel_section_entry(r);",
        "__builtin_csa_parallel_section_exit(s);",
        "__builtin_csa_parallel_region_exit(r);",
        "#ifdef __CSA__",
        "#endif",
        "#else",
        "t = a[i];",
        "s += a[i];",
        "if (a[i] > m) m = a[i];",
        "int t;",
        "double tmp[8];",
        "break;",
        "continue;",
        "return 0;",
        "a[i] = t;",
        "x = x * x;",
        "// csa-lint: ignore[CSA101]",
        "/* c */",
        "\n",
        "\r\n",
        "\t",
        "ñ",
        "(",
        ")",
        ";",
        "&t",
        "goto l;",
        "l:",
    ];

    const F_PIECES: &[&str] = &[
        "subroutine f(n, a)\n",
        "end subroutine\n",
        "integer :: n, i, t\n",
        "real :: a(n), s\n",
        "call builtin_csa_parallel_loop()\n",
        "call builtin_csa_spmd(4, 1)\n",
        "do i = 1, n\n",
        "end do\n",
        "do while (n > 0)\n",
        "s = s + a(i)\n",
        "t = a(i)\n",
        "a(i) = t\n",
        "if (a(i) > s) s = a(i)\n",
        "exit\n",
        "cycle\n",
        "if (t > 0) then\n",
        "end if\n",
        "else\n",
        "! csa-lint: ignore[CSA101]\n",
        "#ifdef __CSA__\n",
        "#endif\n",
        "call g(t)\n",
        "\r\n",
        "ñ",
    ];

    fn assemble(pieces: &[&str], picks: &[usize]) -> String {
        picks
            .iter()
            .map(|&k| pieces[k % pieces.len()])
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn exercise(kind: SourceKind, src: &str) {
        let fa = analyze(kind, src, &AnalysisOptions::default());
        for target in [
            Target::OpenMp,
            Target::Ivdep(IvdepStyle::Attribute),
            Target::Ivdep(IvdepStyle::GccPragma),
        ] {
            let rs = rewrite_markers(&fa, target);
            let _ = apply_rewrites(src, &rs);
        }
        let fixes: Vec<&Fix> = fa.diagnostics.iter().flat_map(|d| d.fixes.iter()).collect();
        let _ = crate::fix::apply_fixes(src, &fixes);
        let _ = fix_all(
            kind,
            src,
            &AnalysisOptions::default(),
            &FixAllOptions {
                fix: true,
                unsafe_fixes: true,
                rewrite: Some(Target::OpenMp),
                disabled: Vec::new(),
            },
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn c_token_soup(picks in proptest::collection::vec(0usize..100, 0..60)) {
            exercise(SourceKind::C, &assemble(C_PIECES, &picks));
        }

        #[test]
        fn c_rewrite_is_idempotent(picks in proptest::collection::vec(0usize..100, 0..60)) {
            let src = assemble(C_PIECES, &picks);
            let opts = FixAllOptions { fix: false, unsafe_fixes: true, rewrite: Some(Target::OpenMp), disabled: Vec::new() };
            let once = fix_all(SourceKind::C, &src, &AnalysisOptions::default(), &opts).text;
            let twice = fix_all(SourceKind::C, &once, &AnalysisOptions::default(), &opts).text;
            prop_assert_eq!(once, twice);
        }

        #[test]
        fn fortran_token_soup(picks in proptest::collection::vec(0usize..100, 0..60)) {
            exercise(SourceKind::FortranFree, &assemble(F_PIECES, &picks));
        }
    }
}

#[test]
fn worker_num_in_loop_is_refused() {
    let src = "void f(int n, int *a) {\n  __builtin_csa_spmd(4, 1);\n  for (int i = 0; i < n; i++)\n    a[i] = __builtin_csa_spmd_worker_num();\n}\n";
    let (out, refused) = rewrite(SourceKind::C, src, Target::OpenMp);
    assert_eq!(out, src);
    assert!(refused[0].contains("omp_get_thread_num"), "{refused:?}");
}

#[test]
fn refusals_are_placed_in_the_text_as_given() {
    // the first marker converts (its `#ifdef` lines go: the text after it
    // moves up), the second is refused
    let src = "void f(int n, int *restrict a) {\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  for (int i = 0; i < n; i++) a[i] = 0;\n  int p = 0;\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  for (int i = 0; i < n; i++) { a[i] = p; p = i; }\n}\n";
    let r = fix_unsafe(SourceKind::C, src, false, Some(Target::OpenMp));
    assert_eq!(r.applied, 1);
    assert_eq!(r.refusals.len(), 1, "{:?}", r.refusals);
    let second = src.rfind("__builtin_csa_parallel_loop").unwrap();
    let span = r.refusals[0].0;
    assert_eq!(span.start as usize, second, "{span:?}");
    assert_eq!(
        &src[span.start as usize..span.end as usize],
        "__builtin_csa_parallel_loop();"
    );
}

#[test]
fn a_local_array_passed_to_an_unknown_procedure_is_refused() {
    let src = "subroutine s(u, n)\n  integer :: n, i, m\n  double precision :: u(5, n), ue(5)\n  call builtin_csa_parallel_loop()\n  do i = 1, n\n    call exact(i, ue)\n    do m = 1, 5\n      u(m, i) = ue(m)\n    end do\n  end do\nend subroutine\n";
    let (out, refused) = rewrite(SourceKind::FortranFree, src, Target::OpenMp);
    assert_eq!(out, src);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("local array `ue` is written in the loop")
            && refused[0].contains(
                "passed to `exact`, whose reads and writes of it csa-lint cannot follow (line 6)"
            ),
        "{}",
        refused[0]
    );
}

/// A local array written at constant subscripts before each read (the
/// compiler keeps it in registers per iteration) is private in OpenMP;
/// read before it is written in the iteration, it is refused.
#[test]
fn local_arrays_at_constant_indices() {
    let c = "void f(int n, int *a) {\n  int tmp[2];\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < n; i++) { tmp[0] = a[i]; tmp[1] = a[i] + 1; a[i] = tmp[0] * tmp[1]; }\n}\n";
    let (out, refused) = rewrite(SourceKind::C, c, Target::OpenMp);
    assert!(refused.is_empty(), "{refused:?}");
    assert!(
        out.contains("#pragma omp parallel for private(tmp)\n"),
        "{out}"
    );
    let f = "subroutine f(n, a)\n integer :: n, i\n real :: a(n), tmp(2)\n call builtin_csa_parallel_loop()\n do i = 1, n\n  a(i) = tmp(1)\n  tmp(1) = a(i)\n end do\nend subroutine\n";
    let (out, refused) = rewrite(SourceKind::FortranFree, f, Target::OpenMp);
    assert_eq!(out, f);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("local array `tmp`")
            && refused[0].contains("writes the elements this read uses before reading them"),
        "{}",
        refused[0]
    );
}

/// Element updates `a(k) = a(k) op e` whatever `k` is: a reduction over
/// the array (Fortran whole array, C array section).
#[test]
fn array_reductions() {
    let f = "subroutine f(n, u, rms)\n integer :: n, i, m\n double precision :: u(5, n), rms(5)\n call builtin_csa_parallel_loop()\n do i = 1, n\n  do m = 1, 5\n   rms(m) = rms(m) + u(m, i) * u(m, i)\n  end do\n end do\nend subroutine\n";
    let (out, refused) = rewrite(SourceKind::FortranFree, f, Target::OpenMp);
    assert!(refused.is_empty(), "{refused:?}");
    assert!(
        out.contains("!$omp parallel do private(m) reduction(+:rms)\n"),
        "{out}"
    );
    let c = "void f(int n, const int *idx, double *w) {\n  double hist[16];\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < n; i++)\n    hist[idx[i]] += w[i];\n  w[0] = hist[0];\n}\n";
    let (out, refused) = rewrite(SourceKind::C, c, Target::OpenMp);
    assert!(refused.is_empty(), "{refused:?}");
    assert!(
        out.contains("#pragma omp parallel for reduction(+:hist[:16])\n"),
        "{out}"
    );
    // a pointer in the loop may reach the shared array: no reduction
    let c = "void f(int n, const int *idx, double *w) {\n  double hist[16];\n  double *p = hist;\n  __builtin_csa_parallel_loop();\n  for (int i = 0; i < n; i++) {\n    hist[idx[i] & 15] += w[i];\n    p[3] = 1;\n  }\n  w[0] = hist[0];\n}\n";
    let (out, refused) = rewrite(SourceKind::C, c, Target::OpenMp);
    assert_eq!(out, c);
    assert!(
        refused.len() == 1 && refused[0].contains("`hist`"),
        "{refused:?}"
    );
}

/// The lines a refusal's reason names are lines of the text as given, not
/// of the text after earlier conversions added their directives.
#[test]
fn refusal_reasons_name_lines_of_the_text_as_given() {
    let src = "subroutine f(u, v, n, last)\n  integer :: n, k\n  double precision :: u(n), v(n), c(2), last\n  call builtin_csa_parallel_loop()\n  do k = 1, n\n    v(k) = u(k)\n  end do\n  call builtin_csa_parallel_loop()\n  do k = 1, n\n    c(1) = u(k)\n    v(k) = c(1) * 2\n  end do\n  last = c(1)\nend subroutine\n";
    let r = fix_unsafe(SourceKind::FortranFree, src, false, Some(Target::OpenMp));
    assert_eq!(r.applied, 1);
    assert_eq!(r.refusals.len(), 1, "{:?}", r.refusals);
    assert!(r.refusals[0].1.contains("(line 10)"), "{}", r.refusals[0].1);
    assert_eq!(
        map_line_numbers("at line 3 and line 12, line x", &|n| n + 1),
        "at line 4 and line 13, line x"
    );
}

/// A fix that another finding contradicts is not applied: moving the
/// per-iteration array out of the parallel loop (CSA301's first fix) would
/// make every iteration write one array (CSA501), so the next fix of the
/// same diagnostic is taken (the marker goes: the loop runs sequentially)
/// and the rejected one is reported where the user wrote the declaration.
#[test]
fn a_fix_that_adds_an_error_is_not_applied() {
    let src = "void f(int n, int k, double *restrict a, double *restrict b) {\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  for (int i = 0; i < n; i++) {\n    double t[8];\n    for (int j = 0; j < 8; j++)\n      t[j] = a[i] * j;\n    b[i] = t[k & 7];\n  }\n}\n";
    let r = fix_unsafe(SourceKind::C, src, true, None);
    assert_eq!(
        r.text,
        "void f(int n, int k, double *restrict a, double *restrict b) {\n  for (int i = 0; i < n; i++) {\n    double t[8];\n    for (int j = 0; j < 8; j++)\n      t[j] = a[i] * j;\n    b[i] = t[k & 7];\n  }\n}\n"
    );
    assert_eq!(r.rejected.len(), 1, "{:?}", r.rejected);
    let (span, why) = &r.rejected[0];
    assert_eq!(
        &src[span.start as usize..span.start as usize + 1],
        "t",
        "{span:?}"
    );
    assert!(
        why.contains("Move the declaration") && why.contains("CSA501"),
        "{why}"
    );
}
