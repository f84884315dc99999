//! Many small cases for the data-sharing analysis: each gives a function
//! whose first `for`/`DO` loop gets a `parallel_loop` marker, runs the
//! whole analysis and the OpenMP rewrite, and expects its clauses or its
//! refusal.

use tree_sitter::Node;
use tree_sitter::Parser;

fn first<'t>(n: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut stack = vec![n];
    let mut best: Option<Node> = None;
    while let Some(x) = stack.pop() {
        if x.kind() == kind && best.is_none_or(|b| x.start_byte() < b.start_byte()) {
            best = Some(x);
        }
        let mut c = x.walk();
        stack.extend(x.children(&mut c));
    }
    best
}

/// `Ok("private(t) lastprivate(x) reduction(+:s)")` or `Err(reason)`: the
/// clauses the rewrite writes when a `parallel_loop` marker is put before
/// the function's first loop (the whole analysis runs: the IR decides).
fn c(body: &str) -> Result<String, String> {
    rewrite_first_loop(body, false)
}

fn f(body: &str) -> Result<String, String> {
    rewrite_first_loop(body, true)
}

fn rewrite_first_loop(body: &str, fortran: bool) -> Result<String, String> {
    use crate::analysis::{analyze, AnalysisOptions};
    use csa_grammars::SourceKind;
    let mut p = Parser::new();
    let (lang, kind, marker) = if fortran {
        (
            csa_grammars::fortran_language(),
            "do_loop",
            "call builtin_csa_parallel_loop()\n",
        )
    } else {
        (
            csa_grammars::c_language(),
            "for_statement",
            "__builtin_csa_parallel_loop();\n",
        )
    };
    p.set_language(&lang).unwrap();
    let tree = p.parse(body, None).unwrap();
    let at = first(tree.root_node(), kind).unwrap().start_byte();
    let src = format!("{}{marker}{}", &body[..at], &body[at..]);
    let sk = if fortran {
        SourceKind::FortranFree
    } else {
        SourceKind::C
    };
    let fa = analyze(sk, &src, &AnalysisOptions::default());
    let rs = crate::rewrite::rewrite_markers(&fa, crate::rewrite::Target::OpenMp);
    let [r] = rs.as_slice() else {
        return Err(format!("{} rewrites", rs.len()));
    };
    if !r.converts() {
        let t = &r.fix.title;
        return Err(t
            .strip_prefix("Cannot convert to OpenMP: ")
            .unwrap_or(t)
            .to_string());
    }
    let text = crate::rewrite::apply_rewrites(&src, &rs);
    let head = if fortran {
        "!$omp parallel do"
    } else {
        "#pragma omp parallel for"
    };
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(head))
        .ok_or_else(|| format!("no directive in {text}"))?;
    Ok(line.trim().to_string())
}

fn refused_naming(r: Result<String, String>, var: &str) {
    match r {
        Err(why) => assert!(why.contains(&format!("`{var}`")), "{why}"),
        Ok(s) => panic!("expected a refusal naming {var}, got `{s}`"),
    }
}

#[test]
fn plain_loop_needs_nothing() {
    assert_eq!(
        c("void f(int n, int *a) { for (int i = 0; i < n; i++) a[i] = i; }"),
        Ok("".into())
    );
}

#[test]
fn temporary_is_private() {
    assert_eq!(
        c("void f(int n, int *a) { int t; for (int i = 0; i < n; i++) { t = a[i] * 2; a[i] = t + 1; } }"),
        Ok("private(t)".into())
    );
}

#[test]
fn temporary_declared_in_body_needs_nothing() {
    assert_eq!(
        c("void f(int n, int *a) { for (int i = 0; i < n; i++) { int t = a[i]; a[i] = t; } }"),
        Ok("".into())
    );
}

#[test]
fn temporary_read_after_loop_is_lastprivate() {
    assert_eq!(
        c("int f(int n, int *a) { int t = 0; for (int i = 0; i < n; i++) { t = a[i]; a[i] = t; } return t; }"),
        Ok("lastprivate(t)".into())
    );
}

#[test]
fn conditional_write_read_after_loop_is_refused() {
    refused_naming(
        c("int f(int n, int *a) { int t = 0; for (int i = 0; i < n; i++) { if (a[i]) t = i; } return t; }"),
        "t",
    );
}

#[test]
fn conditional_write_not_read_after_is_private() {
    assert_eq!(
        c("void f(int n, int *a) { int t; for (int i = 0; i < n; i++) { if (a[i]) { t = i; a[i] = t; } } }"),
        Ok("private(t)".into())
    );
}

#[test]
fn read_before_write_is_carried() {
    refused_naming(
        c("void f(int n, int *a) { int prev = 0; for (int i = 0; i < n; i++) { a[i] = prev; prev = i; } }"),
        "prev",
    );
}

#[test]
fn write_on_one_path_then_read_is_carried() {
    refused_naming(
        c("void f(int n, int *a) { int t = 0; for (int i = 0; i < n; i++) { if (a[i]) t = i; a[i] = t; } }"),
        "t",
    );
}

#[test]
fn sum_reductions() {
    assert_eq!(
        c("int f(int n, int *a) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }"),
        Ok("reduction(+:s)".into())
    );
    assert_eq!(
        c("int f(int n, int *a) { int s = 0; for (int i = 0; i < n; i++) s = s + a[i]; return s; }"),
        Ok("reduction(+:s)".into())
    );
    assert_eq!(
        c("int f(int n, int *a) { int s = 0; for (int i = 0; i < n; i++) s = a[i] + s; return s; }"),
        Ok("reduction(+:s)".into())
    );
    assert_eq!(
        c("int f(int n, int *a) { int s = 0; for (int i = 0; i < n; i++) { s++; } return s; }"),
        Ok("reduction(+:s)".into())
    );
}

#[test]
fn other_operator_reductions() {
    for (stmt, op) in [
        ("p *= a[i];", "*"),
        ("p = p - a[i];", "-"),
        ("p &= a[i];", "&"),
        ("p |= a[i];", "|"),
        ("p ^= a[i];", "^"),
        ("p = p && a[i];", "&&"),
        ("p = p || a[i];", "||"),
    ] {
        let src = format!(
            "int f(int n, int *a) {{ int p = 1; for (int i = 0; i < n; i++) {{ {stmt} }} return p; }}"
        );
        assert_eq!(c(&src), Ok(format!("reduction({op}:p)")), "{stmt}");
    }
}

#[test]
fn minus_is_not_commutative() {
    refused_naming(
        c("int f(int n, int *a) { int s = 0; for (int i = 0; i < n; i++) s = a[i] - s; return s; }"),
        "s",
    );
}

#[test]
fn update_mentioning_itself_is_not_a_reduction() {
    refused_naming(
        c("int f(int n, int *a) { int s = 1; for (int i = 0; i < n; i++) s = s + s * a[i]; return s; }"),
        "s",
    );
}

#[test]
fn reduction_also_read_in_loop_is_carried() {
    refused_naming(
        c("int f(int n, int *a) { int s = 0; for (int i = 0; i < n; i++) { s += a[i]; a[i] = s; } return s; }"),
        "s",
    );
}

#[test]
fn mixed_operators_are_carried() {
    refused_naming(
        c("int f(int n, int *a) { int s = 0; for (int i = 0; i < n; i++) { s += a[i]; s *= 2; } return s; }"),
        "s",
    );
}

#[test]
fn max_and_min_patterns() {
    assert_eq!(
        c("int f(int n, int *a) { int m = 0; for (int i = 0; i < n; i++) if (a[i] > m) m = a[i]; return m; }"),
        Ok("reduction(max:m)".into())
    );
    assert_eq!(
        c("int f(int n, int *a) { int m = 0; for (int i = 0; i < n; i++) { if (m > a[i]) { m = a[i]; } } return m; }"),
        Ok("reduction(min:m)".into())
    );
    assert_eq!(
        c("int f(int n, int *a) { int m = 0; for (int i = 0; i < n; i++) m = a[i] < m ? a[i] : m; return m; }"),
        Ok("reduction(min:m)".into())
    );
    assert_eq!(
        c("double f(int n, double *a) { double m = 0; for (int i = 0; i < n; i++) m = fmax(m, a[i]); return m; }"),
        Ok("reduction(max:m)".into())
    );
}

#[test]
fn max_pattern_with_other_value_is_not_a_reduction() {
    refused_naming(
        c("int f(int n, int *a) { int m = 0; for (int i = 0; i < n; i++) if (a[i] > m) m = a[i] + 1; return m; }"),
        "m",
    );
}

#[test]
fn counter_used_as_index_is_carried() {
    refused_naming(
        c("void f(int n, int *a, int *b) { int k = 0; for (int i = 0; i < n; i++) { if (a[i]) b[k++] = a[i]; } }"),
        "k",
    );
}

#[test]
fn address_taken_is_refused() {
    refused_naming(
        c("void g(int *); void f(int n, int *a) { int t; for (int i = 0; i < n; i++) { t = a[i]; g(&t); } }"),
        "t",
    );
    refused_naming(
        c("void f(int n, int *a) { int t; int *p = &t; for (int i = 0; i < n; i++) { t = a[i]; a[i] = *p; } }"),
        "t",
    );
}

#[test]
fn globals_and_statics_and_pointees_are_shared() {
    assert_eq!(
        c("int g; void f(int n, int *a) { static int s; for (int i = 0; i < n; i++) { g = a[i]; s = g; *a = s; } }"),
        Ok("".into())
    );
}

#[test]
fn inner_loop_index_is_private() {
    assert_eq!(
        c("void f(int n, int *a) { int j; for (int i = 0; i < n; i++) for (j = 0; j < n; j++) a[i * n + j] = 0; }"),
        Ok("private(j)".into())
    );
}

#[test]
fn inner_loop_index_read_after_is_lastprivate() {
    assert_eq!(
        c("int f(int n, int *a) { int j = 0; for (int i = 0; i < n; i++) for (j = 0; j < n; j++) a[i * n + j] = 0; return j; }"),
        Ok("lastprivate(j)".into())
    );
}

#[test]
fn write_in_inner_loop_only_is_conditional() {
    refused_naming(
        c("int f(int n, int *a) { int t = 0; for (int i = 0; i < n; i++) for (int j = 0; j < a[i]; j++) t = j; return t; }"),
        "t",
    );
}

#[test]
fn outer_index_declared_outside_is_lastprivate_when_read_after() {
    assert_eq!(
        c("int f(int n, int *a) { int i; for (i = 0; i < n; i++) a[i] = 0; return i; }"),
        Ok("lastprivate(i)".into())
    );
    assert_eq!(
        c("void f(int n, int *a) { int i; for (i = 0; i < n; i++) a[i] = 0; }"),
        Ok("".into())
    );
}

#[test]
fn continue_before_write_makes_lastprivate_unsafe() {
    refused_naming(
        c("int f(int n, int *a) { int t = 0; for (int i = 0; i < n; i++) { if (a[i] < 0) continue; t = a[i]; } return t; }"),
        "t",
    );
    assert_eq!(
        c("int f(int n, int *a) { int t = 0; for (int i = 0; i < n; i++) { t = a[i]; if (t < 0) continue; a[i] = t; } return t; }"),
        Ok("lastprivate(t)".into())
    );
}

#[test]
fn written_in_both_branches_is_definite() {
    assert_eq!(
        c("int f(int n, int *a) { int t = 0; for (int i = 0; i < n; i++) { if (a[i]) t = 1; else t = 2; a[i] = t; } return t; }"),
        Ok("lastprivate(t)".into())
    );
}

#[test]
fn switch_arms_do_not_see_each_other() {
    refused_naming(
        c("void f(int n, int *a) { int t = 0; for (int i = 0; i < n; i++) { switch (a[i]) { case 1: t = 1; break; case 2: a[i] = t; break; } } }"),
        "t",
    );
}

#[test]
fn short_circuit_write_is_conditional() {
    refused_naming(
        c("void f(int n, int *a) { int t = 0; for (int i = 0; i < n; i++) { if (a[i] && (t = a[i])) {} a[i] = t; } }"),
        "t",
    );
}

#[test]
fn local_struct_field_write_is_refused() {
    refused_naming(
        c("struct S { int x; }; void f(int n, int *a) { struct S s; for (int i = 0; i < n; i++) { s.x = a[i]; a[i] = s.x; } }"),
        "s",
    );
}

#[test]
fn enclosing_loop_reads_count_as_after() {
    refused_naming(
        c("void f(int n, int *a) { int t = 0; for (int k = 0; k < 2; k++) { a[k] = t; for (int i = 0; i < n; i++) { if (a[i]) t = i; } } }"),
        "t",
    );
}

#[test]
fn non_canonical_loops_are_refused() {
    for src in [
        "void f(int n, int *a) { for (int i = 0; a[i]; i++) a[i] = 0; }",
        "void f(int n, int *a) { for (int i = 0; i < n; i *= 2) a[i] = 0; }",
        "void f(int n, int *a) { for (int i = 0; i < n; i++) { a[i] = 0; i++; } }",
        "void f(int n, int *a) { for (int i = 0; i < n; i++) { if (a[i]) break; } }",
        "int f(int n, int *a) { for (int i = 0; i < n; i++) { if (a[i]) return 1; } return 0; }",
        "void f(int n, int *a) { for (int i = 0; i < n; i++) { a[i] = 0; n--; } }",
        "void f(int n, int *a) { for (;;) { } }",
    ] {
        assert!(c(src).is_err(), "{src}");
    }
}

#[test]
fn break_in_inner_loop_or_switch_is_fine() {
    assert_eq!(
        c("void f(int n, int *a) { for (int i = 0; i < n; i++) { for (int j = 0; j < n; j++) if (a[j]) break; switch (a[i]) { case 0: break; } } }"),
        Ok("".into())
    );
}

#[test]
fn deep_nesting_does_not_overflow() {
    let mut body = String::new();
    for _ in 0..2000 {
        body.push_str("if (a[i]) { ");
    }
    body.push_str("a[i] = 0;");
    for _ in 0..2000 {
        body.push('}');
    }
    let src = format!("void f(int n, int *a) {{ for (int i = 0; i < n; i++) {{ {body} }} }}");
    let _ = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || c(&src))
        .unwrap()
        .join()
        .unwrap();
}

// ------------------------------------------------------------ Fortran --

#[test]
fn fortran_sum_and_private() {
    assert_eq!(
        f("subroutine f(n, a, s)\n integer :: n, i\n real :: a(n), s, t\n s = 0\n do i = 1, n\n  t = a(i) * 2\n  s = s + t\n end do\nend subroutine\n"),
        Ok("private(t) reduction(+:s)".into())
    );
}

#[test]
fn fortran_reduction_intrinsics() {
    for (stmt, op) in [
        ("m = max(m, a(i))", "max"),
        ("m = min(a(i), m)", "min"),
        ("m = iand(m, a(i))", "iand"),
        ("m = ior(m, a(i))", "ior"),
        ("m = ieor(m, a(i))", "ieor"),
        ("m = m * a(i)", "*"),
        ("if (a(i) > m) m = a(i)", "max"),
        ("if (a(i) .lt. m) m = a(i)", "min"),
    ] {
        let src = format!(
            "subroutine f(n, a, r)\n integer :: n, i, m, r\n integer :: a(n)\n m = 1\n do i = 1, n\n  {stmt}\n end do\n r = m\nend subroutine\n"
        );
        assert_eq!(f(&src), Ok(format!("reduction({op}:m)")), "{stmt}");
    }
    assert_eq!(
        f("subroutine f(n, a, r)\n integer :: n, i\n logical :: a(n), l, r\n l = .true.\n do i = 1, n\n  l = l .and. a(i)\n end do\n r = l\nend subroutine\n"),
        Ok("reduction(.and.:l)".into())
    );
}

#[test]
fn fortran_dummy_scalar_written_is_lastprivate() {
    assert_eq!(
        f("subroutine f(n, a, t)\n integer :: n, i\n real :: a(n), t\n do i = 1, n\n  t = a(i)\n  a(i) = t + 1\n end do\nend subroutine\n"),
        Ok("lastprivate(t)".into())
    );
}

#[test]
fn fortran_carried_scalar_is_refused() {
    refused_naming(
        f("subroutine f(n, a)\n integer :: n, i\n real :: a(n), p\n p = 0\n do i = 1, n\n  a(i) = p\n  p = a(i) + 1\n end do\nend subroutine\n"),
        "p",
    );
}

#[test]
fn fortran_exit_and_call_argument_are_refused() {
    assert!(f("subroutine f(n, a)\n integer :: n, i\n real :: a(n)\n do i = 1, n\n  if (a(i) > 0) exit\n end do\nend subroutine\n").is_err());
    refused_naming(
        f("subroutine f(n, a)\n integer :: n, i\n real :: a(n), t\n do i = 1, n\n  call g(t)\n  a(i) = t\n end do\nend subroutine\n"),
        "t",
    );
}

#[test]
fn fortran_inner_do_index_is_private_and_index_lastprivate() {
    assert_eq!(
        f("subroutine f(n, a, k)\n integer :: n, i, j, k\n real :: a(n, n)\n do i = 1, n\n  do j = 1, n\n   a(i, j) = 0\n  end do\n end do\n k = i\nend subroutine\n"),
        Ok("private(j) lastprivate(i)".into())
    );
}

#[test]
fn fortran_common_and_save_are_shared() {
    // not privatized: shared, so every iteration writing `c` conflicts
    refused_naming(
        f("subroutine f(n, a)\n integer :: n, i\n real :: a(n), c, s\n common /blk/ c\n save s\n do i = 1, n\n  c = a(i)\n  s = c\n end do\nend subroutine\n"),
        "c",
    );
    // only read: shared, converted
    assert_eq!(
        f("subroutine f(n, a)\n integer :: n, i\n real :: a(n), c, s\n common /blk/ c\n save s\n do i = 1, n\n  a(i) = c + s\n end do\nend subroutine\n"),
        Ok("".into())
    );
}

#[test]
fn fortran_conditional_write_read_after_is_refused() {
    refused_naming(
        f("subroutine f(n, a, r)\n integer :: n, i\n real :: a(n), t, r\n t = 0\n do i = 1, n\n  if (a(i) > 0) then\n   t = a(i)\n  end if\n end do\n r = t\nend subroutine\n"),
        "t",
    );
}

#[test]
fn fortran_implicit_locals_are_analysed() {
    refused_naming(
        f("subroutine f(n, a)\n dimension a(n)\n do i = 1, n\n  a(i) = q\n  q = a(i)\n end do\nend subroutine\n"),
        "q",
    );
}

#[test]
fn shadowed_name_is_its_own_variable() {
    // the inner `t` is each iteration's own; the outer one is read after
    assert_eq!(
        c("int f(int n, int *a) { int t = 0; for (int i = 0; i < n; i++) { { int t = a[i]; a[i] = t; } t = i; } return t; }"),
        Ok("lastprivate(t)".into())
    );
}

#[test]
fn sibling_loop_declarations_are_not_in_scope() {
    assert_eq!(
        c("int f(int n, int *a) { for (int i = 0; i < n; i++) a[i] = 1; for (int i = 0; i < n; i++) a[i] = 2; return 0; }"),
        Ok("".into())
    );
}

#[test]
fn local_array_indexed_by_iteration_is_shared() {
    assert_eq!(
        c("int f(int n) { int out[100], s = 0; for (int i = 0; i < 100; i++) out[i] = i; for (int i = 0; i < 100; i++) s += out[i]; return s; }"),
        Ok("".into())
    );
    assert_eq!(
        f("subroutine f(n, a, s)\n integer :: n, i\n real :: a(n), s, r(100)\n do i = 1, min(n, 100)\n  r(i) = a(i)\n end do\n s = r(1)\nend subroutine\n"),
        Ok("".into())
    );
}

#[test]
fn stepped_pointer_is_not_a_reduction() {
    refused_naming(
        c("void f(int n, int *a) { int *p = a; for (int i = 0; i < n; i++) { p++; } }"),
        "p",
    );
}
