use super::*;
use proptest::prelude::*;

fn parse(text: &str, lang: OmpLang) -> Directive {
    let d = parse_directive(text, lang).unwrap_or_else(|| panic!("not a directive: {text:?}"));
    check_ranges(text, &d);
    d
}

fn c(text: &str) -> Directive {
    parse(text, OmpLang::C)
}

fn f(text: &str) -> Directive {
    parse(text, OmpLang::Fortran)
}

/// Every range slices the text.
fn check_ranges(text: &str, d: &Directive) {
    let mut ranges = vec![d.name_range.clone()];
    ranges.extend(d.argument.clone());
    ranges.extend(d.problems.iter().map(|p| p.range.clone()));
    for cl in &d.clauses {
        ranges.push(cl.range.clone());
        ranges.extend(cl.vars.iter().map(|v| v.range.clone()));
    }
    for r in ranges {
        assert!(
            r.start <= r.end && text.get(r.clone()).is_some(),
            "{r:?} in {text:?}"
        );
    }
}

fn names(vars: &[ClauseVar]) -> String {
    let v: Vec<String> = vars
        .iter()
        .map(|v| format!("{}{}", v.name, v.section.as_deref().unwrap_or("")))
        .collect();
    v.join(",")
}

/// A one-line summary: `words | clause clause ... !problems`.
fn summary(d: &Directive) -> String {
    let mut out = d.words.join(" ");
    out.push_str(" |");
    for cl in &d.clauses {
        let v = names(&cl.vars);
        let s = match &cl.kind {
            ClauseKind::Private => format!("private({v})"),
            ClauseKind::Firstprivate => format!("firstprivate({v})"),
            ClauseKind::Lastprivate => format!("lastprivate({v})"),
            ClauseKind::Shared => format!("shared({v})"),
            ClauseKind::Reduction(op) => format!("reduction({op:?}:{v})"),
            ClauseKind::Linear { step: None } => format!("linear({v})"),
            ClauseKind::Linear { step: Some(s) } => format!("linear({v}:{s})"),
            ClauseKind::Collapse(Some(n)) => format!("collapse({n})"),
            ClauseKind::Collapse(None) => "collapse(?)".into(),
            ClauseKind::Default(k) => format!("default({k:?})"),
            ClauseKind::Schedule { kind, chunk: None } => format!("schedule({kind})"),
            ClauseKind::Schedule {
                kind,
                chunk: Some(ch),
            } => format!("schedule({kind},{ch})"),
            ClauseKind::NumThreads(n) => format!("num_threads({n})"),
            ClauseKind::Ordered => "ordered".into(),
            ClauseKind::Nowait => "nowait".into(),
            ClauseKind::If(e) => format!("if({e})"),
            ClauseKind::Other(n) => format!("other:{n}"),
        };
        out.push(' ');
        out.push_str(&s);
    }
    if !d.problems.is_empty() {
        out.push_str(&format!(" !{}", d.problems.len()));
    }
    out
}

fn table(lang: OmpLang, cases: &[(&str, &str)]) {
    for (text, want) in cases {
        let d = parse(text, lang);
        assert_eq!(summary(&d), *want, "{text:?}: {:?}", d.problems);
    }
}

#[test]
fn c_directives() {
    table(
        OmpLang::C,
        &[
            ("#pragma omp parallel for", "parallel for |"),
            ("#pragma omp for", "for |"),
            ("#pragma omp parallel for simd", "parallel for simd |"),
            ("#pragma omp for simd", "for simd |"),
            ("#pragma omp simd", "simd |"),
            ("#pragma omp parallel sections", "parallel sections |"),
            ("#pragma omp parallel", "parallel |"),
            ("#  pragma  omp  parallel   for", "parallel for |"),
            ("\t#\tpragma omp for", "for |"),
            ("omp parallel for", "parallel for |"),
            ("  omp for nowait", "for | nowait"),
            ("#pragma omp for\n", "for |"),
            ("#pragma omp for\r\n", "for |"),
            (
                "#pragma omp target teams distribute parallel for simd",
                "target teams distribute parallel for simd |",
            ),
            ("#pragma omp taskloop simd", "taskloop simd |"),
            (
                "#pragma omp cancellation point for",
                "cancellation point for |",
            ),
            (
                "#pragma omp target update to(x)",
                "target update | other:to",
            ),
            (
                "#pragma omp declare target enter(x)",
                "declare target | other:enter",
            ),
            ("#pragma omp ordered simd", "ordered | other:simd"),
            ("#pragma omp atomic update", "atomic | other:update"),
            (
                "#pragma omp critical(lock) hint(0)",
                "critical | other:hint",
            ),
            ("#pragma omp barrier", "barrier |"),
        ],
    );
}

#[test]
fn c_clauses() {
    table(
        OmpLang::C,
        &[
            (
                "#pragma omp parallel for private(i, j) reduction(+:sum)",
                "parallel for | private(i,j) reduction(Add:sum)",
            ),
            (
                "#pragma omp parallel for, private(i), shared(a,b)",
                "parallel for | private(i) shared(a,b)",
            ),
            (
                "#pragma omp for firstprivate(x)lastprivate(x)",
                "for | firstprivate(x) lastprivate(x)",
            ),
            (
                "#pragma omp for lastprivate(conditional: x)",
                "for | lastprivate(x)",
            ),
            ("#pragma omp for collapse(2)", "for | collapse(2)"),
            ("#pragma omp for collapse( 3u )", "for | collapse(3)"),
            ("#pragma omp for collapse(0x2)", "for | collapse(2)"),
            ("#pragma omp for collapse(N)", "for | collapse(?)"),
            (
                "#pragma omp parallel for default(none)",
                "parallel for | default(None)",
            ),
            (
                "#pragma omp parallel default(shared)",
                "parallel | default(Shared)",
            ),
            (
                "#pragma omp parallel default(firstprivate)",
                "parallel | default(Firstprivate)",
            ),
            (
                "#pragma omp for schedule(dynamic, 4)",
                "for | schedule(dynamic,4)",
            ),
            ("#pragma omp for schedule(static)", "for | schedule(static)"),
            (
                "#pragma omp for schedule(nonmonotonic: guided, n / 2)",
                "for | schedule(guided,n / 2)",
            ),
            (
                "#pragma omp for schedule(monotonic, simd: static, c ? 1 : 2)",
                "for | schedule(static,c ? 1 : 2)",
            ),
            (
                "#pragma omp parallel num_threads(n)",
                "parallel | num_threads(n)",
            ),
            (
                "#pragma omp parallel num_threads(f(a, b))",
                "parallel | num_threads(f(a, b))",
            ),
            (
                "#pragma omp parallel for if(n > 100)",
                "parallel for | if(n > 100)",
            ),
            (
                "#pragma omp parallel for if(parallel: n > 100)",
                "parallel for | if(n > 100)",
            ),
            (
                "#pragma omp parallel for if(a ? b : c)",
                "parallel for | if(a ? b : c)",
            ),
            ("#pragma omp for ordered", "for | ordered"),
            ("#pragma omp for ordered(2)", "for | ordered"),
            ("#pragma omp for nowait", "for | nowait"),
            ("#pragma omp simd linear(j:2)", "simd | linear(j:2)"),
            ("#pragma omp simd linear(j)", "simd | linear(j)"),
            (
                "#pragma omp simd linear(i, j : s * 2)",
                "simd | linear(i,j:s * 2)",
            ),
            ("#pragma omp simd linear(val(j):1)", "simd | linear(j:1)"),
            (
                "#pragma omp simd linear(j: step(2), val)",
                "simd | linear(j:2)",
            ),
            ("#pragma omp simd linear(j: val)", "simd | linear(j)"),
            (
                "#pragma omp simd aligned(a, b: 64) safelen(8)",
                "simd | other:aligned other:safelen",
            ),
            (
                "#pragma omp for foo(bar(1), (2)) private(x)",
                "for | other:foo private(x) !1",
            ),
            ("#pragma omp for ompx_hint(1)", "for | other:ompx_hint"),
            ("#pragma omp for s.x", "for | other:s !2"),
        ],
    );
}

#[test]
fn c_reductions() {
    table(
        OmpLang::C,
        &[
            ("#pragma omp for reduction(*:p)", "for | reduction(Mul:p)"),
            ("#pragma omp for reduction(-:d)", "for | reduction(Sub:d)"),
            ("#pragma omp for reduction(&:m)", "for | reduction(And:m)"),
            ("#pragma omp for reduction(|:m)", "for | reduction(Or:m)"),
            ("#pragma omp for reduction(^:m)", "for | reduction(Xor:m)"),
            (
                "#pragma omp for reduction(&&:ok)",
                "for | reduction(LogAnd:ok)",
            ),
            (
                "#pragma omp for reduction(||:any)",
                "for | reduction(LogOr:any)",
            ),
            (
                "#pragma omp for reduction( min : lo )",
                "for | reduction(Min:lo)",
            ),
            (
                "#pragma omp for reduction(max:hi, top)",
                "for | reduction(Max:hi,top)",
            ),
            (
                "#pragma omp for reduction(merge:s)",
                "for | reduction(User(\"merge\"):s)",
            ),
            (
                "#pragma omp for reduction(MAX:s)",
                "for | reduction(User(\"MAX\"):s)",
            ),
            (
                "#pragma omp simd reduction(inscan, +: x)",
                "simd | reduction(Add:x)",
            ),
            (
                "#pragma omp for reduction(task, *: p)",
                "for | reduction(Mul:p)",
            ),
            (
                "#pragma omp for reduction(+:a[:n])",
                "for | reduction(Add:a[:n])",
            ),
            (
                "#pragma omp for reduction(+:a[0:n], b)",
                "for | reduction(Add:a[0:n],b)",
            ),
            (
                "#pragma omp for reduction(+:m[i][0 : n])",
                "for | reduction(Add:m[i][0 : n])",
            ),
            (
                "#pragma omp for reduction(+:s.x, p->y)",
                "for | reduction(Add:s.x,p->y)",
            ),
        ],
    );
}

#[test]
fn c_continuations_and_comments() {
    table(
        OmpLang::C,
        &[
            (
                "#pragma omp parallel for \\\n    private(i) \\\n    shared(a)",
                "parallel for | private(i) shared(a)",
            ),
            (
                "#pragma omp parallel for \\\r\n    private(i) \\\r\n    shared(a)\r\n",
                "parallel for | private(i) shared(a)",
            ),
            (
                "#pragma omp parallel for priv\\\nate(i)",
                "parallel for | private(i)",
            ),
            ("#pragma omp for \\  \n nowait", "for | nowait"),
            ("#pragma omp /* x */ for /* y */ nowait", "for | nowait"),
            ("#pragma /**/ omp for // trailing\n", "for |"),
            ("#pragma omp for // a \\\n continued comment", "for |"),
        ],
    );
}

#[test]
fn c_problems() {
    table(
        OmpLang::C,
        &[
            (
                "#pragma omp parallel for private(",
                "parallel for | private() !2",
            ),
            ("#pragma omp for ) private(i)", "for | private(i) !1"),
            (
                "#pragma omp for reduction(sum)",
                "for | reduction(User(\"\"):) !1",
            ),
            (
                "#pragma omp for reduction(:sum)",
                "for | reduction(User(\"\"):sum) !1",
            ),
            (
                "#pragma omp for reduction(+ +:sum)",
                "for | reduction(User(\"+ +\"):sum) !1",
            ),
            (
                "#pragma omp for reduction(bogus, +:sum)",
                "for | reduction(Add:sum) !1",
            ),
            ("#pragma omp for private()", "for | private() !1"),
            ("#pragma omp for private(a,,b)", "for | private(a,b) !1"),
            ("#pragma omp for private(a+b, c)", "for | private(c) !1"),
            ("#pragma omp for private", "for | !1"),
            ("#pragma omp for collapse(0)", "for | collapse(0) !1"),
            (
                "#pragma omp for default(whatever)",
                "for | other:default !1",
            ),
            (
                "#pragma omp for schedule(often, 2)",
                "for | schedule(often,2) !1",
            ),
            (
                "#pragma omp for schedule(static, 2, 3)",
                "for | schedule(static,2) !1",
            ),
            ("#pragma omp for privte(i)", "for | other:privte !1"),
            ("#pragma omp for PRIVATE(i)", "for | other:PRIVATE !1"),
            ("#pragma omp frob private(i)", "frob | private(i) !1"),
            ("#pragma omp", " | !1"),
            ("#pragma omp ???", " | !2"),
            ("#pragma omp for\nfor (i = 0; i < n; i++)", "for | !1"),
            ("#pragma omp for /* unterminated", "for | !1"),
            ("#pragma omp for num_threads()", "for | num_threads() !1"),
            ("#pragma omp for if(parallel:)", "for | if() !1"),
            ("#pragma omp for @#$%^ nowait", "for | nowait !1"),
            ("#pragma omp parallel for(i)", "parallel | other:for !1"),
        ],
    );
}

#[test]
fn not_directives() {
    for text in [
        "",
        "hello",
        "#pragma GCC ivdep",
        "#pragma ompx for",
        "#pragmaomp for",
        "#pragma",
        "# pragma",
        "#include <omp.h>",
        "for (;;)",
    ] {
        assert_eq!(parse_directive(text, OmpLang::C), None, "{text:?}");
    }
    for text in [
        "",
        "! a comment",
        "!$ompx parallel",
        "!$ x = 1",
        "!dir$ ivdep",
        "  c$omp parallel do",
        "call foo()",
        "\n!$omp do",
    ] {
        assert_eq!(parse_directive(text, OmpLang::Fortran), None, "{text:?}");
    }
}

#[test]
fn fortran_directives() {
    table(
        OmpLang::Fortran,
        &[
            ("!$omp parallel do", "parallel do |"),
            ("!$omp do", "do |"),
            ("!$omp parallel do simd", "parallel do simd |"),
            ("!$omp do simd", "do simd |"),
            ("!$omp end parallel do", "end parallel do |"),
            ("!$omp end do nowait", "end do | nowait"),
            ("!$omp enddo", "end do |"),
            ("!$omp paralleldo private(i)", "parallel do | private(i)"),
            ("!$OMP END PARALLEL DO", "end parallel do |"),
            ("!$omp end critical (lck)", "end critical |"),
            ("!$omp parallel workshare", "parallel workshare |"),
            ("   !$omp parallel do", "parallel do |"),
            ("c$omp parallel do", "parallel do |"),
            ("C$OMP PARALLEL DO", "parallel do |"),
            ("*$omp do", "do |"),
            ("!$omp do ! a comment (with parens", "do |"),
            ("!$omp end", "end | !1"),
            ("!$omp endfrob", "endfrob | !1"),
            (
                "!$omp end single copyprivate(x)",
                "end single | other:copyprivate",
            ),
        ],
    );
}

#[test]
fn fortran_clauses() {
    table(
        OmpLang::Fortran,
        &[
            (
                "!$OMP PARALLEL DO PRIVATE(I) REDUCTION(+:SUM)",
                "parallel do | private(I) reduction(Add:SUM)",
            ),
            (
                "!$omp parallel do default(none) shared(a, n) private(i, j)",
                "parallel do | default(None) shared(a,n) private(i,j)",
            ),
            ("!$omp do collapse(2)", "do | collapse(2)"),
            ("!$omp do collapse(2_4)", "do | collapse(2)"),
            ("!$omp do schedule(DYNAMIC, 4)", "do | schedule(dynamic,4)"),
            ("!$OMP PARALLEL NUM_THREADS(N)", "parallel | num_threads(N)"),
            (
                "!$omp parallel do if(n .gt. 100)",
                "parallel do | if(n .gt. 100)",
            ),
            (
                "!$omp do lastprivate(x) firstprivate(x)",
                "do | lastprivate(x) firstprivate(x)",
            ),
            ("!$omp simd linear(j:2)", "simd | linear(j:2)"),
            (
                "!$omp parallel private(/blk/, x)",
                "parallel | private(/blk/,x)",
            ),
            ("!$omp parallel private(t%a)", "parallel | private(t%a)"),
            ("!$omp do reduction(.and.:ok)", "do | reduction(LogAnd:ok)"),
            ("!$omp do reduction(.OR.:any)", "do | reduction(LogOr:any)"),
            ("!$omp do reduction(.eqv.:e)", "do | reduction(Eqv:e)"),
            ("!$omp do reduction(.neqv.:e)", "do | reduction(Neqv:e)"),
            ("!$omp do reduction(MAX:hi)", "do | reduction(Max:hi)"),
            ("!$omp do reduction(min:lo)", "do | reduction(Min:lo)"),
            ("!$omp do reduction(iand:m)", "do | reduction(And:m)"),
            ("!$omp do reduction(IOR:m)", "do | reduction(Or:m)"),
            ("!$omp do reduction(ieor:m)", "do | reduction(Xor:m)"),
            (
                "!$omp do reduction(*:p) reduction(-:d)",
                "do | reduction(Mul:p) reduction(Sub:d)",
            ),
            (
                "!$omp do reduction(.myop.:x)",
                "do | reduction(User(\".myop.\"):x)",
            ),
            ("!$omp do reduction(inscan, +:x)", "do | reduction(Add:x)"),
            ("!$omp do reduction(+:a(1:n))", "do | reduction(Add:a(1:n))"),
            (
                "!$omp do reduction(&&:x)",
                "do | reduction(User(\"&&\"):x) !1",
            ),
            (
                "!$omp parallel do default(private)",
                "parallel do | default(Private)",
            ),
        ],
    );
}

#[test]
fn fortran_continuations() {
    table(
        OmpLang::Fortran,
        &[
            (
                "!$omp parallel do private(i) &\n!$omp& shared(a)",
                "parallel do | private(i) shared(a)",
            ),
            (
                "!$omp parallel do private(i) &\n!$omp  shared(a)",
                "parallel do | private(i) shared(a)",
            ),
            (
                "!$omp parallel do private(i) &\n   !$omp   & shared(a)",
                "parallel do | private(i) shared(a)",
            ),
            (
                "!$OMP PARALLEL DO &\r\n!$OMP& PRIVATE(I) &\r\n!$OMP& REDUCTION(+:S)\r\n",
                "parallel do | private(I) reduction(Add:S)",
            ),
            (
                "!$omp parallel do priv&\n!$omp&ate(i)",
                "parallel do | private(i)",
            ),
            (
                "!$omp parallel do & ! more below\n!$omp shared(a)",
                "parallel do | shared(a)",
            ),
            (
                "!$omp parallel do &\n\n! a comment line\n!$omp shared(a)",
                "parallel do | shared(a)",
            ),
            (
                "!$omp parallel do &\n!$omp private(i,&\n!$omp& j)",
                "parallel do | private(i,j)",
            ),
            (
                "c$omp parallel do\nc$omp+shared(a)",
                "parallel do | shared(a)",
            ),
            (
                "C$OMP PARALLEL DO\nC$OMP&PRIVATE(I)",
                "parallel do | private(I)",
            ),
            (
                "*$omp parallel do\n*$omp1private(i),\n*$omp2shared(a)",
                "parallel do | private(i) shared(a)",
            ),
            (
                "c$omp paralleldo shared(a,b,c)",
                "parallel do | shared(a,b,c)",
            ),
            // the three equivalent spellings of OpenMP 5.2, 3.1.2
            (
                "!$omp parallel do &\n          !$omp shared(a,b,c)",
                "parallel do | shared(a,b,c)",
            ),
            (
                "!$omp parallel &\n!$omp&do shared(a,b,c)",
                "parallel do | shared(a,b,c)",
            ),
            (
                "!$omp paralleldo shared(a,b,c)",
                "parallel do | shared(a,b,c)",
            ),
            (
                "!$omp do &\n!$omp ! only a comment\n!$omp private(i)",
                "do | private(i)",
            ),
        ],
    );
}

#[test]
fn fortran_problems() {
    table(
        OmpLang::Fortran,
        &[
            (
                "!$omp parallel do private(i) &",
                "parallel do | private(i) !1",
            ),
            ("!$omp parallel do\n!$omp shared(a)", "parallel do | !1"),
            ("!$omp parallel do &\nx = 1", "parallel do | !1"),
            ("!$omp do\n   do i = 1, n", "do | !1"),
            ("!$omp do private(i", "do | private(i) !1"),
            ("!$omp do private(i))", "do | private(i) !1"),
            ("!$omp do private(a(1:n)", "do | private(a(1:n)) !1"),
            (
                "!$omp do reduction(foo bar:x)",
                "do | reduction(User(\"foo bar\"):x) !1",
            ),
        ],
    );
}

#[test]
fn fixed_form_ignores_columns_73_on() {
    let mut line = String::from("c$omp parallel do private(i)");
    while line.len() < 72 {
        line.push(' ');
    }
    line.push_str("seq00010");
    assert_eq!(summary(&f(&line)), "parallel do | private(i)");
    // free form has no column limit
    let free = line.replacen("c$omp", "!$omp", 1);
    assert_eq!(
        summary(&f(&free)),
        "parallel do | private(i) other:seq00010 !1"
    );
}

#[test]
fn ranges_point_at_the_text() {
    let text = "#pragma omp parallel for private(i, j) reduction(+:sum)";
    let d = c(text);
    assert_eq!(&text[d.name_range.clone()], "parallel for");
    assert_eq!(&text[d.clauses[0].range.clone()], "private(i, j)");
    assert_eq!(&text[d.clauses[0].vars[1].range.clone()], "j");
    assert_eq!(&text[d.clauses[1].range.clone()], "reduction(+:sum)");
    assert_eq!(&text[d.clauses[1].vars[0].range.clone()], "sum");

    let text = "#pragma omp parallel for \\\r\n  reduction(+:a[0:n]) \\\r\n  private(k)\r\n";
    let d = c(text);
    let red = &d.clauses[0];
    assert_eq!(&text[red.range.clone()], "reduction(+:a[0:n])");
    assert_eq!(&text[red.vars[0].range.clone()], "a");
    assert_eq!(red.vars[0].section.as_deref(), Some("[0:n]"));
    assert_eq!(&text[d.clauses[1].vars[0].range.clone()], "k");

    let text = "!$OMP PARALLEL DO PRIVATE(I) &\r\n!$OMP& REDUCTION(+:SUM)\r\n";
    let d = f(text);
    assert_eq!(&text[d.name_range.clone()], "PARALLEL DO");
    assert_eq!(&text[d.clauses[0].vars[0].range.clone()], "I");
    assert_eq!(&text[d.clauses[1].range.clone()], "REDUCTION(+:SUM)");
    assert_eq!(&text[d.clauses[1].vars[0].range.clone()], "SUM");

    let text = "#pragma omp critical(lock)";
    assert_eq!(&text[c(text).argument.unwrap()], "lock");

    let text = "#pragma omp for privte(i) nowait";
    let d = c(text);
    assert_eq!(&text[d.problems[0].range.clone()], "privte");

    let text = "!$omp parallel do &\n!$omp shared(a)\n!$omp do";
    let d = f(text);
    assert_eq!(&text[d.problems[0].range.clone()], "!$omp do");

    // non-ASCII text stays on character boundaries
    let text = "#pragma omp for private(é, x) nowait";
    let d = c(text);
    assert_eq!(&text[d.clauses[0].vars[0].range.clone()], "x");
    assert_eq!(&text[d.problems[0].range.clone()], "é");
}

#[test]
fn helpers() {
    let cases: &[(&str, OmpLang, bool)] = &[
        ("#pragma omp parallel for", OmpLang::C, true),
        ("#pragma omp for", OmpLang::C, true),
        ("#pragma omp parallel for simd", OmpLang::C, true),
        ("#pragma omp for simd", OmpLang::C, true),
        ("#pragma omp simd", OmpLang::C, false),
        ("#pragma omp parallel", OmpLang::C, false),
        ("#pragma omp parallel sections", OmpLang::C, false),
        ("#pragma omp distribute parallel for", OmpLang::C, false),
        ("#pragma omp do", OmpLang::C, false),
        ("!$omp parallel do", OmpLang::Fortran, true),
        ("!$omp do simd", OmpLang::Fortran, true),
        ("!$OMP PARALLEL DO SIMD", OmpLang::Fortran, true),
        ("!$omp do", OmpLang::Fortran, true),
        ("!$omp end do", OmpLang::Fortran, false),
        ("!$omp end parallel do", OmpLang::Fortran, false),
        ("!$omp parallel", OmpLang::Fortran, false),
    ];
    for &(text, lang, want) in cases {
        assert_eq!(parse(text, lang).is_worksharing_loop(), want, "{text}");
    }

    assert_eq!(c("#pragma omp for").collapse(), Some(1));
    assert_eq!(c("#pragma omp for collapse(2)").collapse(), Some(2));
    assert_eq!(c("#pragma omp for collapse(N)").collapse(), None);
    assert_eq!(c("#pragma omp for").default_kind(), None);
    assert_eq!(
        c("#pragma omp parallel for default(none)").default_kind(),
        Some(DefaultKind::None)
    );

    let d = f("!$omp parallel do private(I) firstprivate(x) lastprivate(X) reduction(+:Sum)");
    let kinds = |name| {
        d.clauses_for(name)
            .map(|(c, _)| c.kind.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds("i"), [ClauseKind::Private]);
    assert_eq!(
        kinds("x"),
        [ClauseKind::Firstprivate, ClauseKind::Lastprivate]
    );
    assert_eq!(kinds("SUM"), [ClauseKind::Reduction(ReductionOp::Add)]);
    assert_eq!(kinds("j"), []);
    let (_, v) = d.clauses_for("sum").next().unwrap();
    assert_eq!(v.name, "Sum");

    let d = c("#pragma omp parallel for private(I) reduction(+:a[:n]) num_threads(i)");
    assert_eq!(d.clauses_for("i").count(), 0);
    assert_eq!(d.clauses_for("I").count(), 1);
    let (_, v) = d.clauses_for("a").next().unwrap();
    assert_eq!(v.section.as_deref(), Some("[:n]"));

    assert!(OmpLang::Fortran.same_name("Sum", "sUM"));
    assert!(!OmpLang::C.same_name("Sum", "sUM"));
}

fn any_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("#pragma omp ".to_string()),
        Just("!$omp ".to_string()),
        Just("c$omp".to_string()),
        Just("&\n".to_string()),
        Just("\\\r\n".to_string()),
        Just("parallel ".to_string()),
        Just("do ".to_string()),
        Just("for ".to_string()),
        Just("reduction(".to_string()),
        Just("private(".to_string()),
        Just("linear(".to_string()),
        Just("schedule(".to_string()),
        Just("/*".to_string()),
        Just("//".to_string()),
        Just("é".to_string()),
        "[a-z()\\[\\]:,+*&|^.!$%/\\\\'\" \t\r\n0-9-]{0,6}",
    ];
    prop::collection::vec(piece, 0..16).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics(text in any_text()) {
        for (lang, prefix) in [(OmpLang::C, "#pragma omp "), (OmpLang::Fortran, "!$omp ")] {
            for t in [text.clone(), format!("{prefix}{text}")] {
                let words = directive_words(&t, lang);
                prop_assert_eq!(&words, &parse_directive(&t, lang).map(|d| d.words));
                if let Some(d) = parse_directive(&t, lang) {
                    check_ranges(&t, &d);
                    let _ = (d.is_worksharing_loop(), d.collapse(), d.default_kind());
                    let _ = d.clauses_for("i").count();
                }
            }
        }
    }

    #[test]
    fn never_panics_on_any_string(text in "\\PC{0,40}") {
        for lang in [OmpLang::C, OmpLang::Fortran] {
            if let Some(d) = parse_directive(&text, lang) {
                check_ranges(&text, &d);
            }
            let t = format!("#pragma omp for {text}");
            if let Some(d) = parse_directive(&t, lang) {
                check_ranges(&t, &d);
            }
        }
    }
}
