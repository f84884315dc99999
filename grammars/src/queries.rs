//! tree-sitter queries, kept as `.scm` files under `queries/` and embedded
//! with `include_str!`. Each is compiled once, on first use, and lives for
//! the rest of the process.
//!
//! | function | file | captures |
//! |---|---|---|
//! | [`c_builtin_calls`] | `queries/c/builtin_calls.scm` | `@name` callee, `@call` call_expression |
//! | [`c_pragmas`] | `queries/c/pragmas.scm` | `@directive`, `@argument` (optional), `@pragma` preproc_call |
//! | [`c_comments`] | `queries/c/comments.scm` | `@comment` |
//! | [`fortran_builtin_calls`] | `queries/fortran/builtin_calls.scm` | `@name` callee, `@call` subroutine_call or call_expression |
//! | [`fortran_comments`] | `queries/fortran/comments.scm` | `@comment` |
//!
//! The queries match syntax only; what a builtin, pragma or comment means is
//! the analyzer's business. The C pragma query captures the `preproc_call`,
//! whose range includes the line's newline.

use std::sync::OnceLock;

use tree_sitter::{Language, Node, Query, QueryCursor, StreamingIterator};

/// Source of [`c_builtin_calls`].
pub const C_BUILTIN_CALLS: &str = include_str!("../queries/c/builtin_calls.scm");
/// Source of [`c_pragmas`].
pub const C_PRAGMAS: &str = include_str!("../queries/c/pragmas.scm");
/// Source of [`c_comments`].
pub const C_COMMENTS: &str = include_str!("../queries/c/comments.scm");
/// Source of [`fortran_builtin_calls`].
pub const FORTRAN_BUILTIN_CALLS: &str = include_str!("../queries/fortran/builtin_calls.scm");
/// Source of [`fortran_comments`].
pub const FORTRAN_COMMENTS: &str = include_str!("../queries/fortran/comments.scm");

/// Capture names used by the queries.
pub mod capture {
    /// The callee identifier of a builtin call.
    pub const NAME: &str = "name";
    /// The whole builtin call.
    pub const CALL: &str = "call";
    /// The `#pragma` token (`preproc_directive`).
    pub const DIRECTIVE: &str = "directive";
    /// The text after `#pragma` (`preproc_arg`).
    pub const ARGUMENT: &str = "argument";
    /// The whole `#pragma` line (`preproc_call`).
    pub const PRAGMA: &str = "pragma";
    /// A comment.
    pub const COMMENT: &str = "comment";
}

fn compile(
    cell: &'static OnceLock<Query>,
    language: fn() -> Language,
    source: &str,
    name: &str,
) -> &'static Query {
    cell.get_or_init(|| {
        Query::new(&language(), source)
            // The sources are constants compiled by this crate's tests: an
            // error here is a bug in a `.scm` file, not bad user input.
            .unwrap_or_else(|e| panic!("query {name} does not compile: {e}"))
    })
}

/// `__builtin_csa_*` calls in C.
pub fn c_builtin_calls() -> &'static Query {
    static Q: OnceLock<Query> = OnceLock::new();
    compile(
        &Q,
        crate::c_language,
        C_BUILTIN_CALLS,
        "c/builtin_calls.scm",
    )
}

/// `#pragma` lines in C.
pub fn c_pragmas() -> &'static Query {
    static Q: OnceLock<Query> = OnceLock::new();
    compile(&Q, crate::c_language, C_PRAGMAS, "c/pragmas.scm")
}

/// Comments in C.
pub fn c_comments() -> &'static Query {
    static Q: OnceLock<Query> = OnceLock::new();
    compile(&Q, crate::c_language, C_COMMENTS, "c/comments.scm")
}

/// `builtin_csa_*` calls (subroutine calls and function calls, any case) in
/// Fortran.
pub fn fortran_builtin_calls() -> &'static Query {
    static Q: OnceLock<Query> = OnceLock::new();
    compile(
        &Q,
        crate::fortran_language,
        FORTRAN_BUILTIN_CALLS,
        "fortran/builtin_calls.scm",
    )
}

/// Comments in Fortran (directives and suppressions live there).
pub fn fortran_comments() -> &'static Query {
    static Q: OnceLock<Query> = OnceLock::new();
    compile(
        &Q,
        crate::fortran_language,
        FORTRAN_COMMENTS,
        "fortran/comments.scm",
    )
}

/// A function returning a compiled query.
pub type QueryFn = fn() -> &'static Query;

/// Every query with its file name, for tests and tooling.
pub fn all() -> [(&'static str, QueryFn); 5] {
    [
        ("c/builtin_calls.scm", c_builtin_calls),
        ("c/pragmas.scm", c_pragmas),
        ("c/comments.scm", c_comments),
        ("fortran/builtin_calls.scm", fortran_builtin_calls),
        ("fortran/comments.scm", fortran_comments),
    ]
}

/// One match of a query: its pattern index and its captures by name.
#[derive(Clone, Debug)]
pub struct QueryHit<'tree> {
    pub pattern: usize,
    pub captures: Vec<(&'static str, Node<'tree>)>,
}

impl<'tree> QueryHit<'tree> {
    /// The first node captured as `name`.
    pub fn get(&self, name: &str) -> Option<Node<'tree>> {
        self.captures
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, node)| node)
    }
}

/// Runs `query` over `node` (text `source`, the text the tree was parsed
/// from) and collects every match in document order.
pub fn matches<'tree>(
    query: &'static Query,
    node: Node<'tree>,
    source: &[u8],
) -> Vec<QueryHit<'tree>> {
    let names = query.capture_names();
    let mut cursor = QueryCursor::new();
    let mut it = cursor.matches(query, node, source);
    let mut out = Vec::new();
    while let Some(m) = it.next() {
        out.push(QueryHit {
            pattern: m.pattern_index,
            captures: m
                .captures
                .iter()
                .filter_map(|c| names.get(c.index as usize).map(|&name| (name, c.node)))
                .collect(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(language: Language, text: &str) -> tree_sitter::Tree {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&language).unwrap();
        p.parse(text, None).unwrap()
    }

    /// `(capture, text)` of every capture of every match.
    fn captured(
        query: &'static Query,
        language: Language,
        text: &str,
    ) -> Vec<Vec<(String, String)>> {
        let tree = parse(language, text);
        matches(query, tree.root_node(), text.as_bytes())
            .into_iter()
            .map(|h| {
                h.captures
                    .iter()
                    .map(|(n, node)| (n.to_string(), text[node.byte_range()].to_string()))
                    .collect()
            })
            .collect()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    const C_SAMPLE: &str = r#"#include <stdio.h>
#pragma omp parallel for
# pragma ivdep
#pragma
/* block comment */
void f(int n, double *a) {
  // csa-lint: ignore CSA401
  __builtin_csa_parallel_loop();
  #pragma unroll 4
  for (int i = 0; i < n; i++) {
    a[i] = __builtin_csa_spmd_worker_num() + g(i);
    (*fp)();
    __builtin_expect(i, 0);
    not__builtin_csa_x();
  }
  int t = __builtin_csa_parallel_region_entry(1);
}
"#;

    const FORTRAN_SAMPLE: &str = "program p
  integer :: i, w
  ! csa-lint: ignore CSA401
  !$omp parallel do
  call builtin_csa_parallel_loop()
  !DIR$ IVDEP
  do i = 1, n
    w = BUILTIN_CSA_SPMD_WORKER_NUM() + f(i)
    call Builtin_Csa_Pipeline_Loop(0)
    call builtin_csa_spmd
    call other_routine(i)
    call my_builtin_csa_x()
  end do ! trailing
end program
";

    #[test]
    fn every_query_compiles() {
        for (name, q) in all() {
            let q = q();
            assert!(q.pattern_count() > 0, "{name}");
            // Compiled once: the same object every time.
            assert!(std::ptr::eq(
                q,
                all().iter().find(|(n, _)| *n == name).unwrap().1()
            ));
        }
        assert_eq!(fortran_builtin_calls().pattern_count(), 2);
    }

    #[test]
    fn c_builtin_calls_captures() {
        let got = captured(c_builtin_calls(), crate::c_language(), C_SAMPLE);
        assert_eq!(
            got,
            vec![
                pairs(&[
                    ("call", "__builtin_csa_parallel_loop()"),
                    ("name", "__builtin_csa_parallel_loop")
                ]),
                pairs(&[
                    ("call", "__builtin_csa_spmd_worker_num()"),
                    ("name", "__builtin_csa_spmd_worker_num")
                ]),
                pairs(&[
                    ("call", "__builtin_csa_parallel_region_entry(1)"),
                    ("name", "__builtin_csa_parallel_region_entry")
                ]),
            ]
        );
    }

    #[test]
    fn c_pragmas_captures() {
        let got = captured(c_pragmas(), crate::c_language(), C_SAMPLE);
        assert_eq!(
            got,
            vec![
                pairs(&[
                    ("pragma", "#pragma omp parallel for\n"),
                    ("directive", "#pragma"),
                    ("argument", "omp parallel for"),
                ]),
                pairs(&[
                    ("pragma", "# pragma ivdep\n"),
                    ("directive", "# pragma"),
                    ("argument", "ivdep"),
                ]),
                pairs(&[("pragma", "#pragma\n"), ("directive", "#pragma")]),
                pairs(&[
                    ("pragma", "#pragma unroll 4\n"),
                    ("directive", "#pragma"),
                    ("argument", "unroll 4"),
                ]),
            ]
        );
        // QueryHit::get.
        let tree = parse(crate::c_language(), C_SAMPLE);
        let hits = matches(c_pragmas(), tree.root_node(), C_SAMPLE.as_bytes());
        let arg = hits[0].get(capture::ARGUMENT).unwrap();
        assert_eq!(&C_SAMPLE[arg.byte_range()], "omp parallel for");
        assert!(hits[2].get(capture::ARGUMENT).is_none());
    }

    #[test]
    fn c_comments_captures() {
        let got = captured(c_comments(), crate::c_language(), C_SAMPLE);
        assert_eq!(
            got,
            vec![
                pairs(&[("comment", "/* block comment */")]),
                pairs(&[("comment", "// csa-lint: ignore CSA401")]),
            ]
        );
    }

    #[test]
    fn fortran_builtin_calls_captures() {
        let got = captured(
            fortran_builtin_calls(),
            crate::fortran_language(),
            FORTRAN_SAMPLE,
        );
        assert_eq!(
            got,
            vec![
                pairs(&[
                    ("call", "call builtin_csa_parallel_loop()"),
                    ("name", "builtin_csa_parallel_loop")
                ]),
                pairs(&[
                    ("call", "BUILTIN_CSA_SPMD_WORKER_NUM()"),
                    ("name", "BUILTIN_CSA_SPMD_WORKER_NUM")
                ]),
                pairs(&[
                    ("call", "call Builtin_Csa_Pipeline_Loop(0)"),
                    ("name", "Builtin_Csa_Pipeline_Loop")
                ]),
                pairs(&[
                    ("call", "call builtin_csa_spmd"),
                    ("name", "builtin_csa_spmd")
                ]),
            ]
        );
    }

    #[test]
    fn fortran_comments_captures() {
        let got = captured(
            fortran_comments(),
            crate::fortran_language(),
            FORTRAN_SAMPLE,
        );
        assert_eq!(
            got,
            vec![
                pairs(&[("comment", "! csa-lint: ignore CSA401")]),
                pairs(&[("comment", "!$omp parallel do")]),
                pairs(&[("comment", "!DIR$ IVDEP")]),
                pairs(&[("comment", "! trailing")]),
            ]
        );
    }

    #[test]
    fn fortran_queries_on_normalised_fixed_form() {
        let src = "      PROGRAM P\nC$OMP PARALLEL DO\n      CALL BUILTIN_CSA_PARALLEL_LOOP(\n     $   )\n      END\n";
        let n = crate::fixed_form::normalize(src);
        let tree = parse(crate::fortran_language(), &n.text);
        let calls = matches(fortran_builtin_calls(), tree.root_node(), n.text.as_bytes());
        assert_eq!(calls.len(), 1);
        let name = calls[0].get(capture::NAME).unwrap().byte_range();
        let (s, e) = (n.original_offset(name.start), n.original_offset(name.end));
        assert_eq!(&src[s..e], "BUILTIN_CSA_PARALLEL_LOOP");
        let comments = matches(fortran_comments(), tree.root_node(), n.text.as_bytes());
        let c = comments[0].get(capture::COMMENT).unwrap().byte_range();
        assert_eq!(&n.text[c.clone()], "!$OMP PARALLEL DO");
        assert_eq!(
            &src[n.original_offset(c.start) + 1..n.original_offset(c.end)],
            "$OMP PARALLEL DO"
        );
    }

    #[test]
    fn queries_on_blanked_text() {
        let src = "#ifdef __CSA__\nvoid f(void) { __builtin_csa_parallel_loop(); }\n#else\nvoid f(void) { __builtin_csa_unused(); }\n#endif\n";
        let p = crate::preproc::preprocess(src, &[], false);
        let tree = parse(crate::c_language(), &p.text);
        let calls = matches(c_builtin_calls(), tree.root_node(), p.text.as_bytes());
        assert_eq!(calls.len(), 1);
        let r = calls[0].get(capture::CALL).unwrap().byte_range();
        assert_eq!(&src[r.clone()], "__builtin_csa_parallel_loop()");
        assert!(p.is_csa_guarded(r.start));
    }
}
