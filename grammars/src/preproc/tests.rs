use super::*;
use proptest::prelude::*;

fn c(text: &str) -> Preprocessed {
    preprocess(text, &[], false)
}

fn with(text: &str, defines: &[&str]) -> Preprocessed {
    let d: Vec<String> = defines.iter().map(|s| s.to_string()).collect();
    preprocess(text, &d, false)
}

/// The kept lines of the output (blank lines dropped), to compare briefly.
fn kept(p: &Preprocessed) -> Vec<&str> {
    p.text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// Length and kept bytes match the input; blanked bytes are spaces.
fn check_blanking(input: &str, p: &Preprocessed) {
    assert_eq!(p.text.len(), input.len());
    for (k, (a, b)) in input.bytes().zip(p.text.bytes()).enumerate() {
        if a != b {
            assert_eq!(b, b' ', "byte {k}");
            assert!(a != b'\n' && a != b'\r', "line end blanked at {k}");
        }
    }
}

/// Ranges are in bounds and ordered.
fn check_ranges(input: &str, p: &Preprocessed) {
    let len = input.len();
    for c in &p.conditionals {
        assert!(!c.branches.is_empty());
        let mut prev_end = 0;
        for b in &c.branches {
            assert!(b.directive.0 <= b.directive.1 && b.directive.1 <= len);
            assert!(b.body.0 <= b.body.1 && b.body.1 <= len, "{b:?}");
            assert!(b.directive.0 >= prev_end);
            assert!(b.body.0 >= b.directive.1);
            prev_end = b.body.1;
        }
        if let Some((s, e)) = c.endif {
            assert!(s >= prev_end && s <= e && e <= len);
        }
        let (s, e) = c.extent();
        assert!(s <= e && e <= len);
    }
    for &(s, e) in p.directives() {
        assert!(s <= e && e <= len);
    }
}

#[test]
fn ifdef_csa_is_active_else_inactive() {
    let src = "a;\n#ifdef __CSA__\nb;\n#else\nc;\n#endif\nd;\n";
    let p = c(src);
    check_blanking(src, &p);
    assert_eq!(kept(&p), ["a;", "b;", "d;"]);
    assert_eq!(p.conditionals.len(), 1);
    let cond = &p.conditionals[0];
    assert_eq!(cond.csa_guard, CsaGuard::Positive);
    assert_eq!(cond.branches.len(), 2);
    assert!(cond.branches[0].active);
    assert!(!cond.branches[1].active);
    assert_eq!(cond.branches[0].kind, DirectiveKind::Ifdef);
    assert_eq!(cond.branches[1].kind, DirectiveKind::Else);
    assert_eq!(
        &src[cond.branches[0].directive.0..cond.branches[0].directive.1],
        "#ifdef __CSA__"
    );
    assert_eq!(
        &src[cond.branches[0].body.0..cond.branches[0].body.1],
        "b;\n"
    );
    assert_eq!(
        &src[cond.branches[1].directive.0..cond.branches[1].directive.1],
        "#else"
    );
    assert_eq!(
        &src[cond.branches[1].body.0..cond.branches[1].body.1],
        "c;\n"
    );
    let (s, e) = cond.endif.unwrap();
    assert_eq!(&src[s..e], "#endif");
    assert_eq!(
        &src[cond.extent().0..cond.extent().1],
        "#ifdef __CSA__\nb;\n#else\nc;\n#endif"
    );

    let b = src.find("b;").unwrap();
    assert!(p.is_csa_guarded(b));
    assert!(!p.is_csa_guarded(src.find("a;").unwrap()));
    assert!(!p.is_csa_guarded(src.find("c;").unwrap()));
    assert!(!p.is_csa_guarded(src.find("d;").unwrap()));
    assert!(p.is_active(b));
    assert!(!p.is_active(src.find("c;").unwrap()));
    assert!(p.enclosing_conditional(b).is_some());
    assert!(p.enclosing_conditional(src.find("d;").unwrap()).is_none());
}

#[test]
fn positive_spellings() {
    for d in [
        "#ifdef __CSA__",
        "# ifdef __CSA__",
        "  #  ifdef\t__CSA__",
        "#if defined(__CSA__)",
        "#if defined( __CSA__ )",
        "#if defined __CSA__",
        "#if __CSA__",
        "#if (defined(__CSA__))",
        "#if defined(__CSA__) /* comment */",
        "#if defined(__CSA__) // comment",
        "#if defined(__CSA__) && defined(__linux__)",
        "#if defined(__CSA__) && 1",
        "#if defined(__CSA__) \\\n  && 1",
    ] {
        let src = format!("{d}\nyes;\n#else\nno;\n#endif\n");
        let p = c(&src);
        check_blanking(&src, &p);
        assert_eq!(kept(&p), ["yes;"], "{d}");
        assert_eq!(p.conditionals[0].csa_guard, CsaGuard::Positive, "{d}");
        assert!(p.is_csa_guarded(src.find("yes").unwrap()), "{d}");
    }
}

#[test]
fn negative_spellings() {
    for d in [
        "#ifndef __CSA__",
        "# ifndef __CSA__",
        "#if !defined(__CSA__)",
        "#if !defined __CSA__",
        "#if ! defined ( __CSA__ )",
        "#if !(defined(__CSA__))",
        "#if !__CSA__",
    ] {
        let src = format!("{d}\nno;\n#else\nyes;\n#endif\n");
        let p = c(&src);
        check_blanking(&src, &p);
        assert_eq!(kept(&p), ["yes;"], "{d}");
        assert_eq!(p.conditionals[0].csa_guard, CsaGuard::Negative, "{d}");
        assert!(p.is_csa_guarded(src.find("yes").unwrap()), "{d}");
        assert!(!p.is_csa_guarded(src.find("no").unwrap()), "{d}");
    }
}

#[test]
fn constant_conditions() {
    let p = c("#if 0\nno;\n#else\nyes;\n#endif\n");
    assert_eq!(kept(&p), ["yes;"]);
    assert_eq!(p.conditionals[0].csa_guard, CsaGuard::None);
    assert!(!p.is_csa_guarded(p.text.find("yes").unwrap()));
    let p = c("#if 1\nyes;\n#else\nno;\n#endif\n");
    assert_eq!(kept(&p), ["yes;"]);
    let p = c("#if 0\nno;\n#endif\n");
    assert_eq!(kept(&p), Vec::<&str>::new());
    let p = c("#if (2 + 3) * 4 == 20 && !(1 << 3 != 8)\nyes;\n#else\nno;\n#endif\n");
    assert_eq!(kept(&p), ["yes;"]);
    let p = c("#if 0x10 > 017 ? 0 : 1\nno;\n#else\nyes;\n#endif\n");
    assert_eq!(kept(&p), ["yes;"]);
    let p = c("#if 1 / 0\nfirst;\n#else\nsecond;\n#endif\n");
    assert_eq!(kept(&p), ["first;"]);
}

/// clang evaluates `#if` in `intmax_t` and, on a signed overflow, warns
/// and goes on with the wrapped value (`crate::cint`): these take the
/// branch the wrapped value says (an unknown condition would take the
/// first one).
#[test]
fn overflowing_conditions_take_the_wrapped_values_branch() {
    for cond in [
        "9223372036854775807 + 1 > 0",
        "-9223372036854775807 - 2 < 0",
        "4611686018427387904 * 2 > 0",
        "-(-9223372036854775807 - 1) > 0",
        "(9223372036854775807 + 1) / 2 != -4611686018427387904",
    ] {
        let p = c(&format!("#if {cond}\nfirst;\n#else\nwrapped;\n#endif\n"));
        assert_eq!(kept(&p), ["wrapped;"], "{cond}");
    }
    let p = c("#if 0\na;\n#elif 9223372036854775807 + 1 == -9223372036854775807 - 1\nwrapped;\n#else\nc;\n#endif\n");
    assert_eq!(kept(&p), ["wrapped;"]);
}

#[test]
fn elif_chains() {
    // Unknown first branch: taken; the rest inactive.
    let p = c("#ifdef _OPENMP\na;\n#elif defined(__CSA__)\nb;\n#else\nc;\n#endif\n");
    assert_eq!(kept(&p), ["a;"]);
    assert_eq!(p.conditionals[0].branches.len(), 3);
    assert_eq!(p.conditionals[0].csa_guard, CsaGuard::None);
    assert!(p.conditionals[0].branches[1].asserts_csa);
    // Known-false first branch: the first elif that is not false wins.
    let p = c("#if 0\na;\n#elif defined(FOO)\nb;\n#else\nc;\n#endif\n");
    assert_eq!(kept(&p), ["b;"]);
    let p = c("#if 0\na;\n#elif 0\nb;\n#elif defined(__CSA__)\nc;\n#else\nd;\n#endif\n");
    assert_eq!(kept(&p), ["c;"]);
    assert!(p.is_csa_guarded(p.text.find("c;").unwrap()));
    let p = c("#if 0\na;\n#elif 0\nb;\n#else\nc;\n#endif\n");
    assert_eq!(kept(&p), ["c;"]);
    // After a negative guard every later branch asserts __CSA__.
    let p = c("#ifndef __CSA__\na;\n#elif defined(FOO)\nb;\n#else\nc;\n#endif\n");
    assert_eq!(kept(&p), ["b;"]);
    assert!(p.is_csa_guarded(p.text.find("b;").unwrap()));
    // C23 elifdef / elifndef.
    let p = c("#if 0\na;\n#elifdef __CSA__\nb;\n#elifndef __CSA__\nc;\n#endif\n");
    assert_eq!(kept(&p), ["b;"]);
    assert_eq!(p.conditionals[0].branches[1].kind, DirectiveKind::Elifdef);
    // Duplicate #else: later ones inactive.
    let p = c("#if 0\na;\n#else\nb;\n#else\nc;\n#endif\n");
    assert_eq!(kept(&p), ["b;"]);
}

#[test]
fn comments_in_defines_are_blanked() {
    let text = "#define ALLOC(P, N) \\\n  P = malloc(N); /* no check */ \\\n  use(P)\nint x; /* kept */\n#define LONG 1 /* runs\n   on */\nint y;\n#define S \"/* not a comment */\" \\\n  /* but this */\n#define ONE 1 /* kept */\n";
    let p = c(text);
    assert_eq!(p.text.len(), text.len());
    assert!(
        p.text.contains("  P = malloc(N);                \\\n"),
        "{}",
        p.text
    );
    assert!(p.text.contains("int x; /* kept */"), "{}", p.text);
    // a comment running past the line end leaves a continuation there
    assert!(
        p.text.contains("#define LONG 1       \\\n        \nint y;"),
        "{}",
        p.text
    );
    // a string literal is no comment
    assert!(
        p.text
            .contains("#define S \" * not a comment */\" \\\n                \n"),
        "{}",
        p.text
    );
    // a one-line macro's comment parses: kept
    assert!(p.text.contains("#define ONE 1 /* kept */"), "{}", p.text);
}

#[test]
fn as_compiled_names_are_undefined_unless_defined() {
    let text = "#define LOCAL 1\n\
                #ifdef DEBUG\ndebug;\n#endif\n\
                #if FAST\nfast;\n#else\nslow;\n#endif\n\
                #if !FAST\nnot_fast;\n#endif\n\
                #if defined(LOCAL)\nlocal;\n#endif\n\
                #ifdef GIVEN\ngiven;\n#endif\n\
                #ifdef OTHER\nother;\n#endif\n\
                #ifdef __CSA__\ncsa;\n#endif\n";
    let first = preprocess(text, &["GIVEN".to_string()], false);
    assert_eq!(
        kept(&first),
        [
            "#define LOCAL 1",
            "debug;",
            "fast;",
            "not_fast;",
            "local;",
            "given;",
            "other;",
            "csa;"
        ]
    );
    let names: Vec<String> = ["DEBUG", "FAST", "LOCAL", "GIVEN"]
        .map(String::from)
        .to_vec();
    let compiled = preprocess_as_compiled(text, &["GIVEN".to_string()], false, &names);
    // DEBUG and FAST are undefined; LOCAL, #defined by the file, stays
    // unknown (first branch); GIVEN and __CSA__ are defined; OTHER, not
    // named, keeps its first branch
    assert_eq!(
        kept(&compiled),
        [
            "#define LOCAL 1",
            "slow;",
            "not_fast;",
            "local;",
            "given;",
            "other;",
            "csa;"
        ]
    );
    assert!(first.conditionals[1].branches[0].unknown);
    assert!(!first.conditionals[1].branches[1].unknown);
    assert!(!first.conditionals[6].branches[0].unknown);
}

#[test]
fn as_compiled_names_the_file_defines_take_its_number() {
    // GSL's strtol.c: the file gives UNSIGNED a default, then tests it
    let text = "#ifndef UNSIGNED\n#define UNSIGNED 0\n#endif\n\
                #if UNSIGNED\nunsigned long int\n#else\nlong int\n#endif\n\
                #undef UNSIGNED\n#define UNSIGNED 2\n#if UNSIGNED == 2\ntwo;\n#endif\n\
                #undef UNSIGNED\n#if UNSIGNED\nstill;\n#endif\n";
    let names = vec!["UNSIGNED".to_string()];
    let first = preprocess(text, &[], false);
    assert!(
        kept(&first).contains(&"unsigned long int"),
        "{:?}",
        kept(&first)
    );
    let compiled = preprocess_as_compiled(text, &[], false, &names);
    assert_eq!(
        kept(&compiled),
        [
            "#define UNSIGNED 0",
            "long int",
            "#undef UNSIGNED",
            "#define UNSIGNED 2",
            "two;",
            "#undef UNSIGNED",
        ]
    );
}

#[test]
fn condition_names_and_bracket_balance() {
    let text = "#if defined(A) && B > 201103L || !defined C\nx = f(a[1]; { /* ( */ \"(\"\n#endif\n";
    let end = text.find('\n').unwrap();
    assert_eq!(condition_names(text, (0, end)), ["A", "B", "C"]);
    let body = (end + 1, text.rfind("#endif").unwrap());
    assert_eq!(bracket_balance(text, body), 2);
}

#[test]
fn cplusplus_is_not_defined() {
    for d in [
        "#ifdef __cplusplus",
        "#if defined(__cplusplus)",
        "#if __cplusplus >= 201103L",
        "#if defined __cplusplus && !defined(FOO)",
    ] {
        let p = c(&format!("{d}\ncxx;\n#else\nc;\n#endif\n"));
        assert_eq!(kept(&p), ["c;"], "{d}");
    }
    let p = c("#ifndef __cplusplus\nc;\n#endif\n");
    assert_eq!(kept(&p), ["c;"]);
    // and C has __STDC__ (Fortran's preprocessor does not)
    let text = "#if defined __STDC__ && __STDC__\nansi;\n#else\nkr;\n#endif\n";
    assert_eq!(kept(&c(text)), ["ansi;"]);
    let stdc = ["__STDC__".to_string()];
    assert_eq!(
        kept(&preprocess_as_compiled(text, &[], false, &stdc)),
        ["ansi;"]
    );
    assert!(preprocess(text, &[], true).conditionals[0].branches[0].unknown);
    // unless the configuration defines it
    let p = preprocess(
        "#ifdef __cplusplus\ncxx;\n#endif\n",
        &["__cplusplus".to_string()],
        false,
    );
    assert_eq!(kept(&p), ["cxx;"]);
}

#[test]
fn unknown_conditions_take_the_first_branch() {
    for d in [
        "#ifdef _OPENMP",
        "#ifndef HEADER_H",
        "#if defined(FOO)",
        "#if !defined(FOO)",
        "#if FOO > 2",
        "#if VERSION(3)",
        "#if defined(__CSA__) || defined(FOO)",
        "#if",
        "#if (",
        "#if 1 +",
        "#if 'a' == 97",
        "#if 1.5",
        // not evaluable (crate::cint): clang rejects the division, the
        // shifts are undefined, the quotient does not fit
        "#if 1 % 0",
        "#if 1 << 64",
        "#if 1 >> -1",
        "#if (-9223372036854775807 - 1) / -1",
        // unsigned, which the evaluation does not model
        "#if 0xFFFFFFFFFFFFFFFF > 0",
    ] {
        let src = format!("{d}\nfirst;\n#else\nsecond;\n#endif\n");
        let p = c(&src);
        assert_eq!(kept(&p), ["first;"], "{d}");
        assert_eq!(p.conditionals[0].csa_guard, CsaGuard::None, "{d}");
        assert!(!p.is_csa_guarded(src.find("first").unwrap()), "{d}");
    }
    // `defined(__CSA__) || X` is known true.
    let p = c("#if defined(__CSA__) || defined(FOO)\nyes;\n#else\nno;\n#endif\n");
    assert_eq!(kept(&p), ["yes;"]);
    // Macros defined in the file do not decide conditions.
    let p = c("#define FOO 1\n#ifndef FOO\nfirst;\n#endif\n");
    assert_eq!(kept(&p), ["#define FOO 1", "first;"]);
}

#[test]
fn user_defines_decide_branches_but_do_not_guard() {
    let src = "#ifdef FOO\na;\n#else\nb;\n#endif\n#ifndef FOO\nc;\n#else\nd;\n#endif\n#if FOO >= 2\ne;\n#else\nf;\n#endif\n";
    let p = with(src, &["FOO"]);
    assert_eq!(kept(&p), ["a;", "d;", "f;"]);
    // Only __CSA__ guards builtins: FOO may be defined for x86 builds too.
    assert_eq!(p.conditionals[0].csa_guard, CsaGuard::None);
    assert_eq!(p.conditionals[1].csa_guard, CsaGuard::None);
    assert!(!p.is_csa_guarded(src.find("a;").unwrap()));
    let p = with(src, &["FOO=3"]);
    assert_eq!(kept(&p), ["a;", "d;", "e;"]);
    let p = with(src, &[]);
    assert_eq!(kept(&p), ["a;", "c;", "e;"]);
    let p = with(src, &["BAR", "not a name", ""]);
    assert_eq!(kept(&p), ["a;", "c;", "e;"]);
}

#[test]
fn nesting() {
    let src = "\
#if 0
#ifdef __CSA__
a;
#else
b;
#endif
#endif
#ifdef __CSA__
#ifdef _OPENMP
c;
#else
d;
#endif
#endif
";
    let p = c(src);
    check_blanking(src, &p);
    assert_eq!(kept(&p), ["c;"]);
    assert_eq!(p.conditionals.len(), 4);
    assert!(p.conditionals[1].branches.iter().all(|b| !b.active));
    assert!(!p.is_csa_guarded(src.find("a;").unwrap()));
    let c_at = src.find("c;").unwrap();
    assert!(p.is_csa_guarded(c_at));
    // Innermost conditional.
    let inner = p.enclosing_conditional(c_at).unwrap();
    assert_eq!(inner, &p.conditionals[3]);
    assert_eq!(inner.csa_guard, CsaGuard::None);
    let (cond, branch) = p.enclosing_branch(c_at).unwrap();
    assert_eq!(cond, &p.conditionals[3]);
    assert!(branch.active);
    // Inside the outer conditional but outside the inner one.
    let between = src.rfind("#endif").unwrap();
    assert_eq!(p.enclosing_conditional(between), Some(&p.conditionals[2]));
}

#[test]
fn unbalanced_directives() {
    // Missing #endif: runs to the end of the file.
    let src = "#ifdef __CSA__\na;\n#else\nb;\n";
    let p = c(src);
    check_blanking(src, &p);
    assert_eq!(kept(&p), ["a;"]);
    assert_eq!(p.conditionals[0].endif, None);
    assert_eq!(p.conditionals[0].branches[1].body.1, src.len());
    assert_eq!(p.conditionals[0].extent().1, src.len());
    // Stray #else / #elif / #endif: blanked and ignored.
    let src = "a;\n#endif\nb;\n#else\nc;\n#elif 1\nd;\n";
    let p = c(src);
    check_blanking(src, &p);
    assert_eq!(kept(&p), ["a;", "b;", "c;", "d;"]);
    assert!(p.conditionals.is_empty());
    // Deep nesting, never closed.
    let src = "#if 1\n".repeat(100_000);
    let p = c(&src);
    assert_eq!(p.conditionals.len(), 100_000);
    check_blanking(&src, &p);
}

#[test]
fn other_directives_in_c_and_fortran() {
    let src = "#include <stdio.h>\n#define N 4\n#pragma omp parallel for\n#undef N\n#error x\n#line 3\n# 1 \"f.c\"\nx;\n";
    let p = c(src);
    assert_eq!(p.text, src);
    let p = preprocess(src, &[], true);
    check_blanking(src, &p);
    assert_eq!(kept(&p), ["x;"]);
    assert_eq!(p.directives().len(), 7);
    // Fortran conditionals work the same way.
    let src = "#ifdef __CSA__\n      call builtin_csa_parallel_loop()\n#endif\n      do i = 1, n\n";
    let p = preprocess(src, &[], true);
    assert_eq!(
        kept(&p),
        [
            "      call builtin_csa_parallel_loop()",
            "      do i = 1, n"
        ]
    );
    assert!(p.is_csa_guarded(src.find("call").unwrap()));
    // Inactive directives are blanked in C too.
    let src = "#if 0\n#define M 1\n#include \"x.h\"\n#endif\n";
    let p = c(src);
    assert_eq!(kept(&p), Vec::<&str>::new());
}

#[test]
fn continued_directives() {
    let src = "#if defined(__CSA__) \\\n    && 0\na;\n#else \\\n  comment\nb;\n#endif\n";
    let p = c(src);
    check_blanking(src, &p);
    assert_eq!(kept(&p), ["b;"]);
    let b0 = &p.conditionals[0].branches[0];
    assert_eq!(
        &src[b0.directive.0..b0.directive.1],
        "#if defined(__CSA__) \\\n    && 0"
    );
    assert_eq!(&src[b0.body.0..b0.body.1], "a;\n");
    // A define continued over lines, kept in C.
    let src = "#define N (1 + \\\n  2)\nx;\n";
    let p = c(src);
    assert_eq!(p.text, src);
    assert_eq!(p.directives(), [(0, src.find("\nx").unwrap())]);
    // A backslash on the last line.
    let src = "#if 0 \\";
    let p = c(src);
    check_blanking(src, &p);
    assert_eq!(p.text.trim(), "");
}

#[test]
fn block_comments() {
    // A directive inside a block comment is not a directive.
    let src = "/*\n#if 0\n*/\na;\n";
    let p = c(src);
    assert_eq!(p.text, src);
    assert!(p.conditionals.is_empty());
    // A block comment opened on a directive line belongs to it.
    let src = "#if 0 /* start\n   end */\na;\n#endif /* x\n y */\nb;\n";
    let p = c(src);
    check_blanking(src, &p);
    assert_eq!(kept(&p), ["b;"]);
    // Comment markers inside strings are not comments.
    let src = "s = \"/*\";\n#if 0\na;\n#endif\n";
    assert_eq!(kept(&c(src)), ["s = \"/*\";"]);
    // A line continued by a backslash is not a directive.
    let src = "#define X 1 \\\n#if 0\nb;\n";
    let p = c(src);
    assert!(p.conditionals.is_empty());
    assert_eq!(p.text, src);
    // Fortran has no block comments: `/*` is not special.
    let src = "x = a /* b\n#if 0\nc\n#endif\n";
    assert_eq!(kept(&preprocess(src, &[], true)), ["x = a /* b"]);
}

#[test]
fn crlf_and_multibyte() {
    let src = "#ifdef __CSA__\r\na;\r\n#else\r\nb; // é\r\n#endif\r\nc;";
    let p = c(src);
    check_blanking(src, &p);
    assert_eq!(
        p.text,
        "              \r\na;\r\n     \r\n        \r\n      \r\nc;"
    );
    let b0 = &p.conditionals[0].branches[0];
    assert_eq!(&src[b0.directive.0..b0.directive.1], "#ifdef __CSA__");
    assert_eq!(&src[b0.body.0..b0.body.1], "a;\r\n");
    assert_eq!(
        &src[p.conditionals[0].endif.unwrap().0..p.conditionals[0].endif.unwrap().1],
        "#endif"
    );
    // "é" is two bytes: two spaces.
    let src = "#if 0\né\n#endif\n";
    assert_eq!(c(src).text, "     \n  \n      \n");
}

#[test]
fn huge_lines() {
    let src = format!(
        "#if 0\n{}\n#endif\n{}",
        "x".repeat(1 << 20),
        "y = 1; ".repeat(100_000)
    );
    let p = c(&src);
    check_blanking(&src, &p);
    assert_eq!(p.text.trim_start().len(), "y = 1; ".repeat(100_000).len());
    let src = format!("#if {}\na;\n#endif\n", "1 + ".repeat(200_000));
    let p = c(&src);
    assert_eq!(kept(&p), ["a;"]);
}

#[test]
fn byte_order_mark() {
    let src = "\u{feff}#ifndef __CSA__\nno;\n#endif\nyes;\n";
    let p = c(src);
    check_blanking(src, &p);
    assert!(p.text.starts_with('\u{feff}'));
    assert_eq!(kept(&p), ["\u{feff}", "yes;"]);
    assert_eq!(p.conditionals[0].csa_guard, CsaGuard::Negative);
    let (s, e) = p.conditionals[0].branches[0].directive;
    assert_eq!(&src[s..e], "#ifndef __CSA__");
    let src = "\u{feff}#if 0\n";
    assert_eq!(c(src).text, "\u{feff}     \n");
    let src = "\u{feff}";
    assert_eq!(c(src).text, src);
}

#[test]
fn expression_evaluator() {
    let e = |s: &str| eval(&tokenize(s), &|_| None, &|_| None);
    assert_eq!(e("1 + 2 * 3"), Some(7));
    assert_eq!(e("0x10UL + 017 + 0b101 + 1'000"), Some(16 + 15 + 5 + 1000));
    assert_eq!(e("(1 << 4) | 3"), Some(19));
    assert_eq!(e("(10 % 3) ^ ~0 & 0xff"), Some(1 ^ 0xff));
    assert_eq!(e("10 > 5 ? 100 : 200"), Some(100));
    assert_eq!(e("0xFFFFFFFFFFFFFFFF"), None);
    assert_eq!(e("1.5"), None);
    assert_eq!(e("(1 + 2) * 3"), Some(9));
    assert_eq!(e("10 - 2 - 3"), Some(5));
    assert_eq!(e("2 * 3 % 4"), Some(2));
    assert_eq!(e("-2 * -3"), Some(6));
    assert_eq!(e("- - 2"), Some(2));
    assert_eq!(e("!0 + !5"), Some(1));
    assert_eq!(e("~0"), Some(-1));
    assert_eq!(e("1 < 2 == 1"), Some(1));
    assert_eq!(e("1 ? 2 : 3"), Some(2));
    assert_eq!(e("0 ? 2 : 0 ? 3 : 4"), Some(4));
    assert_eq!(e("1 ? 0 ? 5 : 6 : 7"), Some(6));
    assert_eq!(e("(1 ? 2 : 3) + 1"), Some(3));
    assert_eq!(e("X && 0"), Some(0));
    assert_eq!(e("X || 1"), Some(1));
    assert_eq!(e("X * 0"), Some(0));
    assert_eq!(e("X + 1"), None);
    assert_eq!(e("X ? 1 : 1"), Some(1));
    assert_eq!(e("1 << 64"), None);
    assert_eq!(e("1 >> -1"), None);
    // overflow wraps (crate::cint)
    assert_eq!(e("-9223372036854775807 - 1"), Some(i64::MIN));
    assert_eq!(e("9223372036854775807 + 1"), Some(i64::MIN));
    assert_eq!(e("-9223372036854775807 - 2"), Some(i64::MAX));
    assert_eq!(e("4611686018427387904 * 2"), Some(i64::MIN));
    assert_eq!(e("-(-9223372036854775807 - 1)"), Some(i64::MIN));
    assert_eq!(e("1 << 63"), Some(i64::MIN));
    // not evaluable
    assert_eq!(e("1 / 0"), None);
    assert_eq!(e("1 % 0"), None);
    assert_eq!(e("(-9223372036854775807 - 1) / -1"), None);
    assert_eq!(e("(-9223372036854775807 - 1) % -1"), None);
    assert_eq!(e("1 << -1"), None);
    assert_eq!(e("1 >> 64"), None);
    assert_eq!(e("9223372036854775808"), None);
    // a division by zero that is not evaluated is no error (clang too)
    assert_eq!(e("0 && 1 / 0"), Some(0));
    assert_eq!(e("1 || 1 / 0"), Some(1));
    assert_eq!(e("1 ?"), None);
    assert_eq!(e("1 : 2"), None);
    assert_eq!(e("(1"), None);
    assert_eq!(e("1)"), None);
    assert_eq!(e("1 2"), None);
    assert_eq!(e("()"), None);
    assert_eq!(e(""), None);
    assert_eq!(e("1 ! 2"), None);
    assert_eq!(e("\"s\""), None);
    assert_eq!(e("é"), None);
    assert_eq!(
        e(&format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000))),
        Some(1)
    );
    assert_eq!(e(&format!("{}1", "-".repeat(100_001))), Some(-1));
    assert_eq!(e(&"1 ? ".repeat(50_000)), None);
}

// ---------------------------------------------------------------- proptest

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z;= ]{0,10}",
        1 => Just("#ifdef __CSA__".to_string()),
        1 => Just("#ifndef __CSA__".to_string()),
        1 => Just("#if 0".to_string()),
        1 => Just("#if defined(FOO) && X".to_string()),
        1 => Just("#elif 1".to_string()),
        1 => Just("# else".to_string()),
        1 => Just("#endif".to_string()),
        1 => Just("#define N (1 + 2)".to_string()),
        1 => Just("#include <x.h>".to_string()),
        1 => Just("/* open".to_string()),
        1 => Just("close */".to_string()),
        1 => Just("#if 1 \\".to_string()),
        1 => Just("é€ \t".to_string()),
        1 => "[#a-z()!&|\\\\/* \"'\r]{0,12}",
    ]
}

proptest! {
    #[test]
    fn arbitrary_text_keeps_length_and_kept_bytes(
        src in "(?s).{0,300}",
        fortran in any::<bool>(),
    ) {
        let p = preprocess(&src, &["FOO".to_string()], fortran);
        check_blanking(&src, &p);
        check_ranges(&src, &p);
    }

    #[test]
    fn directive_soup_keeps_length_and_kept_bytes(
        lines in prop::collection::vec(line(), 0..40),
        crlf in any::<bool>(),
        fortran in any::<bool>(),
    ) {
        let src = lines.join(if crlf { "\r\n" } else { "\n" });
        let p = preprocess(&src, &[], fortran);
        check_blanking(&src, &p);
        check_ranges(&src, &p);
        for k in 0..=src.len() {
            let _ = p.is_csa_guarded(k);
            let _ = p.enclosing_conditional(k);
        }
        // Conditional directive lines are always blank.
        for c in &p.conditionals {
            for b in &c.branches {
                prop_assert!(p.text[b.directive.0..b.directive.1].bytes().all(|x| x == b' ' || x == b'\r' || x == b'\n'));
            }
        }
    }
}

// ------------------------------------------------------- preprocess_edit

fn edit_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z;= ]{0,4}",
        1 => "[\n#/*\\\\\"' a-z]{0,6}",
        1 => Just("\n".to_string()),
        1 => Just("/*".to_string()),
        1 => Just("*/".to_string()),
        1 => Just("\\".to_string()),
        1 => Just("é".to_string()),
        1 => Just("#endif\n".to_string()),
        1 => Just("\r\n".to_string()),
    ]
}

/// Applies `(at, remove, insert)` to `src` (clamped to char boundaries).
fn apply_edit(src: &str, at: usize, remove: usize, insert: &str) -> String {
    let mut a = at.min(src.len());
    while !src.is_char_boundary(a) {
        a -= 1;
    }
    let mut b = (a + remove).min(src.len());
    while !src.is_char_boundary(b) {
        b += 1;
    }
    format!("{}{insert}{}", &src[..a], &src[b..])
}

/// Runs a chain of edits through `preprocess_edit`, checking each result
/// against a fresh `preprocess`; returns how many were patched.
fn check_edits(src: &str, edits: &[(usize, usize, String)], fortran: bool) -> usize {
    let defines = ["FOO".to_string()];
    let mut old = src.to_string();
    let mut prev = preprocess(&old, &defines, fortran);
    let mut patched = 0;
    for (at, remove, insert) in edits {
        let new = apply_edit(&old, *at % (old.len() + 1), *remove, insert);
        let want = preprocess(&new, &defines, fortran);
        let got = match crate::TextEdit::between(&old, &new) {
            Some(e) => {
                if patch(prev.clone(), &old, &new, e, fortran).is_ok() {
                    patched += 1;
                }
                let before = prev.text.clone();
                let (got, change) = preprocess_edit(prev, &old, &new, e, &defines, fortran);
                // The change reported turns the old output into the new.
                match change {
                    None => assert_eq!(before, got.text),
                    Some(c) => {
                        assert!(c.fits(before.len(), got.text.len()));
                        let rebuilt = [
                            &before.as_bytes()[..c.start],
                            &got.text.as_bytes()[c.start..c.new_end],
                            &before.as_bytes()[c.old_end..],
                        ]
                        .concat();
                        assert_eq!(rebuilt, got.text.as_bytes());
                    }
                }
                got
            }
            None => prev,
        };
        assert_eq!(got, want, "old {old:?}\nnew {new:?}");
        old = new;
        prev = got;
    }
    patched
}

#[test]
fn edits_are_patched_or_recomputed_exactly() {
    let src = "int a;\n#ifdef __CSA__\nint b;\n/* c\n d */\n#else\nint e;\n#endif\n#if 0\nx\n";
    let edits: Vec<(usize, usize, String)> = vec![
        (2, 0, "x".into()),             // before any directive
        (25, 1, "yy".into()),           // inside the active branch
        (50, 0, "z".into()),            // in the #else branch (inactive)
        (70, 0, "q\n".into()),          // appended in the unterminated #if 0
        (1000, 0, "more\n".into()),     // at the end
        (30, 0, "/*".into()),           // opens a comment: recomputed
        (30, 2, "".into()),             // closes it again
        (7, 0, "#define X 1\n".into()), // a new directive: recomputed
    ];
    let patched = check_edits(src, &edits, false);
    assert!(patched >= 4, "{patched}");
    assert!(check_edits(src, &edits, true) >= 4);
    // A directive on the last line continued by `\` takes an appended line.
    check_edits("#define X \\\n", &[(100, 0, "1\n".into())], false);
    check_edits("#define X /* a\n", &[(100, 0, "b */ 1\n".into())], false);
    check_edits(
        "\u{feff}a\n",
        &[(3, 0, "#if 0\n".into()), (0, 3, "".into())],
        false,
    );
}

proptest! {
    #[test]
    fn preprocess_edit_equals_preprocess(
        lines in prop::collection::vec(line(), 0..30),
        crlf in any::<bool>(),
        fortran in any::<bool>(),
        edits in prop::collection::vec((0usize..2000, 0usize..8, edit_piece()), 1..8),
    ) {
        let src = lines.join(if crlf { "\r\n" } else { "\n" });
        check_edits(&src, &edits, fortran);
    }
}

#[test]
fn comment_openers_in_directive_literals_are_hidden() {
    let text = "#define FMT \"/* %c */\\n\" /* a comment */\n#define CH '/' // x\nchar *s = \"/* kept */\";\n";
    let p = preprocess(text, &[], false);
    assert_eq!(p.text.len(), text.len());
    // the literal's `/*` is gone, the comment after it is kept
    assert!(
        p.text
            .starts_with("#define FMT \" * %c */\\n\" /* a comment */\n"),
        "{}",
        p.text
    );
    assert!(p.text.contains("#define CH '/' // x\n"));
    // code outside directives is untouched
    assert!(p.text.ends_with("char *s = \"/* kept */\";\n"));
    // and the C grammar parses it
    let tree = crate::parse(crate::Grammar::C, &p.text).unwrap();
    assert!(
        !tree.root_node().has_error(),
        "{}",
        tree.root_node().to_sexp()
    );
}

#[test]
fn includes_inside_initializers_are_blanked() {
    let text = "#include <stdio.h>\nstatic const char *names[] = {\n#include \"names.list\"\n  0\n};\nint f(void) {\n#include \"body.inc\"\n  int a[] = { 1,\n#include \"more.def\"\n  };\n  g((\n#include \"args.def\"\n  ));\n  return 0;\n}\nenum e {\n#include \"enumerators.def\"\n};\n";
    let p = c(text);
    check_blanking(text, &p);
    let kept: Vec<&str> = kept(&p)
        .into_iter()
        .filter(|l| l.starts_with('#'))
        .collect();
    // at file level, in a body and in an enum: kept; in an initializer or
    // an argument list: blanked
    assert_eq!(
        kept,
        [
            "#include <stdio.h>",
            "#include \"body.inc\"",
            "#include \"enumerators.def\""
        ]
    );
    let tree = crate::parse(crate::Grammar::C, &p.text).unwrap();
    let mut cursor = tree.root_node().walk();
    let decl = tree.root_node().children(&mut cursor).nth(1).unwrap();
    assert!(!decl.has_error(), "{}", decl.to_sexp());
}

#[test]
fn an_edit_before_an_include_preprocesses_again() {
    // an edit that opens an initializer before the include changes it
    let old = "int x;\n#include \"list\"\n};\n";
    let new = "int x[] = {\n#include \"list\"\n};\n";
    assert!(c(old).text.contains("#include"));
    assert!(!c(new).text.contains("#include"));
    let prev = c(old);
    let edit = crate::TextEdit::between(old, new).unwrap();
    let got = preprocess_edit(prev, old, new, edit, &[], false).0;
    assert_eq!(got, c(new));
}

#[test]
fn directives_are_visible_only_where_a_line_can_start_one() {
    let text = "a;\n\
                /* open\n\
                b; */\n\
                c; \\\n\
                d;\n\
                #define X \\\n\
                e\n\
                f;\n";
    let at = |s: &str| text.find(s).unwrap();
    let offsets = [at("a;"), at("b;"), at("c;"), at("d;"), at("e\n"), at("f;")];
    assert_eq!(
        directive_visible(text, &offsets),
        [true, false, true, false, false, true]
    );
}

#[test]
fn code_offsets_are_outside_comments_and_literals() {
    let text = "a /* b\n/* c */ d \"e /* f\" // g\nh\n";
    let at = |s: &str| text.find(s).unwrap();
    let offsets = [
        at("a"),
        at("b"),
        at("/* c"),
        at("d"),
        at("e"),
        at("g"),
        at("h"),
    ];
    assert_eq!(
        in_c_code(text, &offsets),
        [true, false, false, true, false, false, true]
    );
}

#[test]
fn blanks_after_a_value_less_define_or_an_include_move_before_it() {
    let text = "#define GUARD_H   \nint a;\n#define F(x, y)\t\r\nint b;\n  #  include <stdio.h> \n#define V 1  \n#pragma omp parallel  \n#define H(x) x \n#undef GUARD_H \n";
    let p = c(text);
    assert_eq!(p.text.len(), text.len());
    assert_eq!(
        p.text,
        "#define    GUARD_H\nint a;\n#define \tF(x, y)\r\nint b;\n  #  include  <stdio.h>\n#define V 1  \n#pragma omp parallel  \n#define H(x) x \n#undef GUARD_H \n"
    );
    // every line end where it was
    let ends = |t: &str| t.match_indices('\n').map(|(i, _)| i).collect::<Vec<_>>();
    assert_eq!(ends(&p.text), ends(text));
    // what tree-sitter-c reads: the next lines are code
    let tree = crate::parse(crate::Grammar::C, &p.text).unwrap();
    assert!(
        !tree.root_node().has_error(),
        "{}",
        tree.root_node().to_sexp()
    );
    let decls = tree
        .root_node()
        .children(&mut tree.walk())
        .filter(|n| n.kind() == "declaration")
        .count();
    assert_eq!(decls, 2, "{}", tree.root_node().to_sexp());
    // an unclosed parameter list: left as it is
    assert_eq!(c("#define G(x  \n").text, "#define G(x  \n");
}

#[test]
fn a_fixed_form_continuation_mark_hash_is_no_directive() {
    // `#` in column 6 continues a fixed-form statement; an indented `#`
    // followed by a directive's name is still read as one.
    let src = "      write(6,*) a,\n     #  b, 'c'\n  #ifdef NOPE\n      x = 1\n  #endif\n#  define M 2\n";
    let p = preprocess(src, &[], true);
    check_blanking(src, &p);
    assert_eq!(
        kept(&p),
        ["      write(6,*) a,", "     #  b, 'c'", "      x = 1"]
    );
    assert_eq!(p.directives().len(), 3);
    // (C reads any `#` first on its line as a directive)
    assert_eq!(c("     #  b\nx;\n").directives().len(), 1);
}

#[test]
fn fortran_unit_balance_counts_modules_and_programs() {
    let all = |t: &str| fortran_unit_balance(t, (0, t.len()));
    assert_eq!(
        all("module m\ncontains\nsubroutine s\nend subroutine s\n"),
        1
    );
    assert_eq!(all("MODULE m\nEND MODULE m\n"), 0);
    assert_eq!(all("  end module m ! done\n"), -1);
    assert_eq!(all("endmodule\nendprogram p\n"), -2);
    assert_eq!(all("submodule (p) s\nprogram q\n"), 2);
    // procedures of an interface, comments, a variable named `module`
    assert_eq!(
        all("module procedure f\n! module m\nmodule = 1\nx = module\n"),
        0
    );
}

#[test]
fn a_header_s_macros_are_read_as_a_compiler_given_no_defines_reads_them() {
    let h = "#ifndef H_H\n#define H_H\n#ifdef MSDOS\n#  define FAR _far\n#else\n#  define FAR\n#endif\n#ifndef FAR\n#  define FAR never\n#endif\n#define N 3 /* three */\n#define SQ(x) ((x)*(x))\n#define TWO_LINES a \\\n  b\n#define GONE 1\n#undef GONE\n#if N != 3\n#define WRONG\n#endif\n#ifdef FAR\n#define SEEN_FAR\n#endif\n#endif\n";
    let got = header_macros(h, &[]);
    let want: Vec<(String, String)> = [
        ("H_H", ""),
        ("FAR", ""),
        ("N", "3"),
        ("TWO_LINES", "a   b"),
        ("SEEN_FAR", ""),
    ]
    .iter()
    .map(|(n, b)| (n.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
    // a define from outside picks the other branch
    let msdos = header_macros(h, &["MSDOS".to_string()]);
    assert!(
        msdos.contains(&("FAR".to_string(), "_far".to_string())),
        "{msdos:?}"
    );
}
