//! Front-end tests: snippets and the expected CFG dump.

use super::*;
use crate::frontend::Identity;
use crate::ir::dump::dump_function;
use crate::source::SourceText;

fn lower_text(text: &str) -> LoweredFile {
    lower(text, &Identity, &FrontendOptions::default())
}

fn dump_all(text: &str) -> String {
    let src = SourceText::new(text.into());
    lower_text(text)
        .functions
        .iter()
        .map(|f| dump_function(f, Some(&src)))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn smoke() {
    let text = "subroutine s(a, n)\n  integer n\n  real a(n)\n  do i = 1, n\n    a(i) = 0\n  end do\nend\n";
    println!("{}", dump_all(text));
}

#[test]
fn dev_dump_env() {
    let Ok(path) = std::env::var("FX") else { return };
    let text = std::fs::read_to_string(path).unwrap();
    let lf = lower_text(&text);
    println!("{}", dump_all(&text));
    for f in &lf.functions {
        println!("{}: syntax_error {:?}", f.name, f.syntax_error);
        for b in &f.builtins {
            println!("  builtin {:?} {:?} span {:?} result {:?}", b.kind, b.name, &text[b.span.range()], b.result);
        }
    }
    println!("toplevel {:?}", lf.toplevel_errors);
}

#[test]
fn dev_deep() {
    let kb: usize = std::env::var("KB").ok().and_then(|v| v.parse().ok()).unwrap_or(768);
    let dd: usize = std::env::var("DD").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    for depth in [dd] {
        let mut s = String::from("subroutine deep(a, n)\n");
        for i in 0..depth {
            if i % 2 == 0 {
                s.push_str("if (n > 0) then\n");
            } else {
                s.push_str("do i = 1, n\n");
            }
        }
        s.push_str("a = 1\n");
        for i in (0..depth).rev() {
            if i % 2 == 0 {
                s.push_str("end if\n");
            } else {
                s.push_str("end do\n");
            }
        }
        s.push_str("end subroutine\n");
        let s2 = s.clone();
        let lf = std::thread::Builder::new().stack_size(kb * 1024).spawn(move || lower_text(&s2)).unwrap().join().unwrap();
        let mut p = tree_sitter::Parser::new();
        p.set_language(&csa_grammars::fortran_language()).unwrap();
        let t = p.parse(&s, None).unwrap();
        println!("depth {} funcs {} err {:?} blocks {} tree_err {}", depth, lf.functions.len(), lf.functions[0].syntax_error, lf.functions[0].blocks.len(), t.root_node().has_error());
        if let Some(e) = lf.functions[0].syntax_error { println!("{:?}", &s[e.start as usize..(e.end as usize).min(e.start as usize + 40)]); }
    }
}
