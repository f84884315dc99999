//! Front-end tests: lower snippets and compare CFG dumps.

use super::*;
use crate::ir::dump::dump_function;
use crate::ir::{ArgValue, BuiltinKind, Function, ScalarTy, TermKind};
use crate::source::SourceText;
use expect_test::{expect, Expect};

fn lower_all(text: &str) -> LoweredFile {
    lower(text, &every_body())
}

fn func(text: &str, name: &str) -> Function {
    let f = lower_all(text);
    f.functions
        .into_iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

fn dump(text: &str, name: &str) -> String {
    let f = func(text, name);
    dump_function(&f, Some(&SourceText::new(text.to_string())))
}

/// `(name, source, function, expected dump)`: each source is lowered and the
/// named function's dump must match exactly (`UPDATE_EXPECT=1 cargo test`
/// rewrites the expected dumps in place).
const CASES: &[(&str, &str, &str, Expect)] = &[
    (
        "for loop: init, cond, body, inc, end; continue goes to for.inc",
        r#"void f(int *a, int n) {
  for (int i = 0; i < n; i++) {
    if (a[i]) continue;
    if (i > 9) break;
    a[i] = 1;
  }
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param int*
              var n: param int
              var i: local int
              loop For header bb1 body bb2 @2:3
            bb0 entry:
              decl i                         @2:12
              write i int = 0                @2:12
              -> goto bb1
            bb1 for.cond:
              read i int                     @2:19
              read n int                     @2:23
              -> branch bb2 bb4
            bb2 for.body:
              read a ptr                     @3:9
              read i int                     @3:11
              read *a int                    @3:9
              -> branch bb5 bb6
            bb3 for.inc:
              read i int                     @2:26
              write i int                    @2:26
              -> goto bb1
            bb4 for.end:
              -> goto bb9
            bb5 if.then:
              -> goto bb3
            bb6 if.end:
              read i int                     @4:9
              -> branch bb7 bb8
            bb7 if.then:
              -> goto bb4
            bb8 if.end:
              read a ptr                     @5:5
              read i int                     @5:7
              write *a int                   @5:5
              -> goto bb3
            bb9 return:
              -> return
        "#]],
    ),
    (
        "for without increment or condition: continue goes to for.cond",
        r#"void f(int n) {
  for (;;) { if (n) break; }
  for (; n > 0;) { n--; if (n == 3) continue; }
}
"#,
        "f",
        expect![[r#"
            function f
              var n: param int
              loop For header bb1 body bb2 @2:3
              loop For header bb6 body bb7 @3:3
            bb0 entry:
              -> goto bb1
            bb1 for.cond:
              -> goto bb2
            bb2 for.body:
              read n int                     @2:18
              -> branch bb4 bb5
            bb3 for.end:
              -> goto bb6
            bb4 if.then:
              -> goto bb3
            bb5 if.end:
              -> goto bb1
            bb6 for.cond:
              read n int                     @3:10
              -> branch bb7 bb8
            bb7 for.body:
              read n int                     @3:20
              write n int                    @3:20
              read n int                     @3:29
              -> branch bb9 bb10
            bb8 for.end:
              -> goto bb11
            bb9 if.then:
              -> goto bb6
            bb10 if.end:
              -> goto bb6
            bb11 return:
              -> return
        "#]],
    ),
    (
        "while loops: condition in the header; while (1) and while (0) fold",
        r#"void f(int n, int *p) {
  while (*p > n) { p++; if (n) continue; }
  while (1) { if (n) break; }
  while (0) { n = 1; }
}
"#,
        "f",
        expect![[r#"
            function f
              var n: param int
              var p: param int*
              loop While header bb1 body bb2 @2:3
              loop While header bb6 body bb7 @3:3
              loop While header bb11 body bb12 @4:3
            bb0 entry:
              -> goto bb1
            bb1 while.cond:
              read p ptr                     @2:11
              read *p int                    @2:10
              read n int                     @2:15
              -> branch bb2 bb3
            bb2 while.body:
              read p ptr                     @2:20
              write p ptr                    @2:20
              read n int                     @2:29
              -> branch bb4 bb5
            bb3 while.end:
              -> goto bb6
            bb4 if.then:
              -> goto bb1
            bb5 if.end:
              -> goto bb1
            bb6 while.cond:
              -> goto bb7
            bb7 while.body:
              read n int                     @3:19
              -> branch bb9 bb10
            bb8 while.end:
              -> goto bb11
            bb9 if.then:
              -> goto bb8
            bb10 if.end:
              -> goto bb6
            bb11 while.cond:
              -> goto bb13
            bb12 while.body:
              write n int = 1                @4:15
              -> goto bb11
            bb13 while.end:
              -> goto bb14
            bb14 return:
              -> return
        "#]],
    ),
    (
        "do/while: body is the header, condition in do.cond; while (0) does not loop",
        r#"void f(int n) {
  do { n--; if (n == 5) continue; } while (n > 0);
  do { n++; } while (0);
  do { n++; } while (1);
}
"#,
        "f",
        expect![[r#"
            function f
              var n: param int
              loop DoWhile header bb1 body bb1 @2:3
              loop DoWhile header bb6 body bb6 @3:3
              loop DoWhile header bb9 body bb9 @4:3
            bb0 entry:
              -> goto bb1
            bb1 do.body:
              read n int                     @2:8
              write n int                    @2:8
              read n int                     @2:17
              -> branch bb4 bb5
            bb2 do.cond:
              read n int                     @2:44
              -> branch bb1 bb3
            bb3 do.end:
              -> goto bb6
            bb4 if.then:
              -> goto bb2
            bb5 if.end:
              -> goto bb2
            bb6 do.body:
              read n int                     @3:8
              write n int                    @3:8
              -> goto bb7
            bb7 do.cond:
              -> goto bb8
            bb8 do.end:
              -> goto bb9
            bb9 do.body:
              read n int                     @4:8
              write n int                    @4:8
              -> goto bb10
            bb10 do.cond:
              -> goto bb9
            bb11 do.end:
              -> goto bb12
            bb12 return:
              -> return
        "#]],
    ),
    (
        "if/else, constant if elided like clang (unless the dead arm has a label)",
        r#"#define DEBUG 0
void f(int n) {
  if (n) n = 1; else n = 2;
  if (n > 3) n = 4;
  if (DEBUG) log(n);
  if (1) n = 5; else n = 6;
  if (0) { L: n = 7; }
}
"#,
        "f",
        expect![[r#"
            function f
              var n: param int
            bb0 entry:
              read n int                     @3:7
              -> branch bb1 bb2
            bb1 if.then:
              write n int = 1                @3:10
              -> goto bb3
            bb2 if.else:
              write n int = 2                @3:22
              -> goto bb3
            bb3 if.end:
              read n int                     @4:7
              -> branch bb4 bb5
            bb4 if.then:
              write n int = 4                @4:14
              -> goto bb5
            bb5 if.end:
              write n int = 5                @6:10
              -> goto bb7
            bb6 if.then:
              -> goto bb8
            bb7 if.end:
              -> goto bb9
            bb8 label:
              write n int = 7                @7:15
              -> goto bb7
            bb9 return:
              -> return
        "#]],
    ),
    (
        "short-circuit conditions: &&, ||, !, ?: branch like EmitBranchOnBoolExpr in if/for; while/do conditions are values (EvaluateExprAsBool)",
        r#"void f(int a, int b, int c) {
  if (a && b || !c) a = 1;
  if (c ? a : b) a = 2;
  while (a && b && c) a--;
  if (1 && b) a = 3;
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param int
              var b: param int
              var c: param int
              loop While header bb9 body bb10 @4:3
            bb0 entry:
              read a int                     @2:7
              -> branch bb4 bb3
            bb1 if.then:
              write a int = 1                @2:21
              -> goto bb2
            bb2 if.end:
              read c int                     @3:7
              -> branch bb7 bb8
            bb3 lor.lhs.false:
              read c int                     @2:18
              -> branch bb2 bb1
            bb4 land.lhs.true:
              read b int                     @2:12
              -> branch bb1 bb3
            bb5 if.then:
              write a int = 2                @3:18
              -> goto bb6
            bb6 if.end:
              -> goto bb9
            bb7 cond.true:
              read a int                     @3:11
              -> branch bb5 bb6
            bb8 cond.false:
              read b int                     @3:15
              -> branch bb5 bb6
            bb9 while.cond:
              read a int                     @4:10
              -> branch bb14 bb13
            bb10 while.body:
              read a int                     @4:23
              write a int                    @4:23
              -> goto bb9
            bb11 while.end:
              read b int                     @5:12
              -> branch bb15 bb16
            bb12 land.rhs:
              read c int                     @4:20
              -> goto bb13
            bb13 land.end:
              -> branch bb10 bb11
            bb14 land.lhs.true:
              read b int                     @4:15
              -> branch bb12 bb13
            bb15 if.then:
              write a int = 3                @5:15
              -> goto bb16
            bb16 if.end:
              -> goto bb17
            bb17 return:
              -> return
        "#]],
    ),
    (
        "&&, || and ?: as values always branch",
        r#"void f(int a, int b, int x) {
  x = a && b;
  g(a || 1);
  x = a ? b : x;
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param int
              var b: param int
              var x: param int
            bb0 entry:
              read a int                     @2:7
              -> branch bb1 bb2
            bb1 land.rhs:
              read b int                     @2:12
              -> goto bb2
            bb2 land.end:
              write x int                    @2:3
              read a int                     @3:5
              -> branch bb4 bb3
            bb3 lor.rhs:
              -> goto bb4
            bb4 lor.end:
              call g                         @3:3
              read a int                     @4:7
              -> branch bb5 bb6
            bb5 cond.true:
              read b int                     @4:11
              -> goto bb7
            bb6 cond.false:
              read x int                     @4:15
              -> goto bb7
            bb7 cond.end:
              write x int                    @4:3
              -> goto bb8
            bb8 return:
              -> return
        "#]],
    ),
    (
        "switch: cases in order, default last, fallthrough, break to sw.epilog",
        r#"void f(int n) {
  switch (n) {
  case 1: n = 10;
  case 2: n = 20; break;
  default: n = 0;
  case 3: ;
  }
  switch (n) { case 1: n++; }
}
"#,
        "f",
        expect![[r#"
            function f
              var n: param int
            bb0 entry:
              read n int                     @2:11
              -> switch bb2 bb3 bb5 bb4
            bb1 sw.epilog:
              read n int                     @8:11
              -> switch bb7 bb6
            bb2 sw.bb:
              write n int = 10               @3:11
              -> goto bb3
            bb3 sw.bb:
              write n int = 20               @4:11
              -> goto bb1
            bb4 sw.default:
              write n int = 0                @5:12
              -> goto bb5
            bb5 sw.bb:
              -> goto bb1
            bb6 sw.epilog:
              -> goto bb8
            bb7 sw.bb:
              read n int                     @8:24
              write n int                    @8:24
              -> goto bb6
            bb8 return:
              -> return
        "#]],
    ),
    (
        "goto forward and backward, labels start blocks",
        r#"void f(int n) {
again:
  n--;
  if (n > 10) goto again;
  goto out;
  n = 99;
out:
  return;
}
"#,
        "f",
        expect![[r#"
            function f
              var n: param int
            bb0 entry:
              -> goto bb1
            bb1 label:
              read n int                     @3:3
              write n int                    @3:3
              read n int                     @4:7
              -> branch bb2 bb3
            bb2 if.then:
              -> goto bb1
            bb3 if.end:
              -> goto bb4
            bb4 label:
              -> goto bb6
            bb5 unreachable:
              write n int = 99               @6:3
              -> goto bb4
            bb6 return:
              -> return
        "#]],
    ),
    (
        "returns share one return block; code after return/exit is unreachable",
        r#"int f(int n) {
  if (n < 0) return -1;
  if (n == 0) { exit(1); n = 3; }
  return n * 2;
  n = 4;
}
"#,
        "f",
        expect![[r#"
            function f
              var n: param int
            bb0 entry:
              read n int                     @2:7
              -> branch bb1 bb2
            bb1 if.then:
              -> goto bb3
            bb2 if.end:
              read n int                     @3:7
              -> branch bb4 bb5
            bb3 return:
              -> return
            bb4 if.then:
              call exit                      @3:17
              -> unreachable
            bb5 if.end:
              read n int                     @4:10
              -> goto bb3
            bb6 unreachable:
              write n int = 3                @3:26
              -> goto bb5
            bb7 unreachable:
              write n int = 4                @5:3
              -> goto bb3
        "#]],
    ),
    (
        "markers with constant arguments (literals, macros, enums, const vars)",
        r#"#define W 4
enum { CHUNK = 1 };
void f(double *a, int n) {
  const int D = 2;
  __builtin_csa_spmd(4, 0);
  for (int i = 0; i < n; i++) a[i] = 0;
  __builtin_csa_spmd(W, CHUNK + 1);
  __builtin_csa_spmdization(2, "Cyclic");
  __builtin_csa_pipeline_loop(-1);
  __builtin_csa_pipeline_loop(D * 2);
  __builtin_csa_parallel_loop();
  __builtin_csa_spmd(n, a[0]);
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param double*
              var n: param int
              var D: local int = 2
              var i: local int
              loop For header bb1 body bb2 @6:3
            bb0 entry:
              decl D                         @4:13
              write D int = 2                @4:13
              builtin#0 spmd(4, 0)           @5:3
              decl i                         @6:12
              write i int = 0                @6:12
              -> goto bb1
            bb1 for.cond:
              read i int                     @6:19
              read n int                     @6:23
              -> branch bb2 bb4
            bb2 for.body:
              read a ptr                     @6:31
              read i int                     @6:33
              write *a double                @6:31
              -> goto bb3
            bb3 for.inc:
              read i int                     @6:26
              write i int                    @6:26
              -> goto bb1
            bb4 for.end:
              builtin#1 spmd(4, 2)           @7:3
              builtin#2 spmdization(2, "Cyclic") @8:3
              builtin#3 pipeline_loop(-1)    @9:3
              builtin#4 pipeline_loop(4)     @10:3
              builtin#5 parallel_loop()      @11:3
              read n int                     @12:22
              read a ptr                     @12:25
              read *a double                 @12:25
              builtin#6 spmd(n, ?)           @12:3
              -> goto bb5
            bb5 return:
              -> return
        "#]],
    ),
    (
        "region/section intrinsics: token flow through locals",
        r#"void f(double *a, int n) {
  int r = __builtin_csa_parallel_region_entry(3);
  for (int i = 0; i < n; i++) {
    int s = __builtin_csa_parallel_section_entry(r);
    a[i] = 0;
    __builtin_csa_parallel_section_exit(s);
  }
  __builtin_csa_parallel_region_exit(r);
  int t;
  t = r;
  r = __builtin_csa_parallel_region_entry(1001);
  a[__builtin_csa_spmd_worker_num()] = 1;
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param double*
              var n: param int
              var r: local int
              var i: local int
              var s: local int
              var t: local int
              loop For header bb1 body bb2 @3:3
            bb0 entry:
              decl r                         @2:7
              builtin#0 region_entry(3)      @2:11
              write r int = builtin#0        @2:7
              decl i                         @3:12
              write i int = 0                @3:12
              -> goto bb1
            bb1 for.cond:
              read i int                     @3:19
              read n int                     @3:23
              -> branch bb2 bb4
            bb2 for.body:
              decl s                         @4:9
              read r int                     @4:50
              builtin#1 section_entry(r)     @4:13
              write s int = builtin#1        @4:9
              read a ptr                     @5:5
              read i int                     @5:7
              write *a double                @5:5
              read s int                     @6:41
              builtin#2 section_exit(s)      @6:5
              -> goto bb3
            bb3 for.inc:
              read i int                     @3:26
              write i int                    @3:26
              -> goto bb1
            bb4 for.end:
              read r int                     @8:38
              builtin#3 region_exit(r)       @8:3
              decl t                         @9:7
              read r int                     @10:7
              write t int = r                @10:3
              builtin#4 region_entry(1001)   @11:7
              write r int = builtin#4        @11:3
              read a ptr                     @12:3
              builtin#5 worker_num()         @12:5
              write *a double                @12:3
              -> goto bb5
            bb5 return:
              -> return
        "#]],
    ),
    (
        "accesses: pointers, arrays, structs, IndexKind and Deref",
        r#"struct P { int x; double v[4]; struct P *next; };
double g[100];
double *gp;
void f(double *restrict a, double b[], int n, struct P *p) {
  int loc[8][8];
  struct P s;
  a[n] = b[n + 1];
  loc[1][2] = loc[n][2];
  s.x = p->x;
  s.v[3] = p->v[n];
  n = p->next->x;
  gp[n] = g[n] + *(a + 2) + *a;
  *(a + n) += s.v[n];
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param double* restrict
              var b: param double*
              var n: param int
              var p: param aggregate*
              var loc: local int array
              var s: local aggregate aggregate
              var g: global double array
              var gp: global double*
            bb0 entry:
              decl loc                       @5:7
              decl s                         @6:12
              read b ptr                     @7:10
              read n int                     @7:12
              read *b double                 @7:10
              read a ptr                     @7:3
              read n int                     @7:5
              write *a double                @7:3
              read n int                     @8:19
              read loc[dyn] int              @8:15
              write loc[const] int           @8:3
              read p ptr                     @9:9
              read *p int                    @9:9
              write s[const] int             @9:3
              read p ptr                     @10:12
              read n int                     @10:17
              read *p double                 @10:12
              write s[const] double          @10:3
              read p ptr                     @11:7
              read *p ptr                    @11:7
              read *? int                    @11:7
              write n int                    @11:3
              read n int                     @12:13
              read g[dyn] double             @12:11
              read a ptr                     @12:20
              read *a double                 @12:18
              read a ptr                     @12:30
              read *a double                 @12:29
              read gp ptr                    @12:3
              read n int                     @12:6
              write *gp double               @12:3
              read n int                     @13:19
              read s[dyn] double             @13:15
              read a ptr                     @13:5
              read n int                     @13:9
              read *a double                 @13:3
              write *a double                @13:3
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
    (
        "#define bounds fold to constants (no access), constant indices",
        r#"#define N 100
#define LAST (N - 1)
void f(double *a) {
  double t[N];
  for (int i = 0; i < N; i++) t[i] = a[i];
  a[0] = t[LAST] + t[N / 2];
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param double*
              var t: local double array
              var i: local int
              loop For header bb1 body bb2 @5:3
            bb0 entry:
              decl t                         @4:10
              decl i                         @5:12
              write i int = 0                @5:12
              -> goto bb1
            bb1 for.cond:
              read i int                     @5:19
              -> branch bb2 bb4
            bb2 for.body:
              read a ptr                     @5:38
              read i int                     @5:40
              read *a double                 @5:38
              read i int                     @5:33
              write t[dyn] double            @5:31
              -> goto bb3
            bb3 for.inc:
              read i int                     @5:26
              write i int                    @5:26
              -> goto bb1
            bb4 for.end:
              read t[const] double           @6:10
              read t[const] double           @6:20
              read a ptr                     @6:3
              write *a double                @6:3
              -> goto bb5
            bb5 return:
              -> return
        "#]],
    ),
    (
        "#pragma unroll: a fully unrolled inner loop's induction variable is a constant index",
        r#"#define M 4
void f(double *A, int n) {
  double sums[M];
  __builtin_csa_parallel_loop();
  for (int i = 0; i < n; ++i) {
    #pragma unroll
    for (int j = 0; j < M; ++j) sums[j] += A[i * M + j];
    #pragma unroll(2)
    for (int j = 0; j < M; j++) sums[j] = 0;
    #pragma GCC unroll 8
    for (int k = M - 1; k >= 0; k -= 1) sums[k + 1] = 0;
    for (int j = 0; j < M; ++j) sums[j] = 1;
  }
}
"#,
        "f",
        expect![[r#"
            function f
              var A: param double*
              var n: param int
              var sums: local double array
              var i: local int
              var j: local int
              var j: local int
              var k: local int
              var j: local int
              loop For header bb1 body bb2 @5:3
              loop For header bb5 body bb6 unrolled @7:5
              loop For header bb9 body bb10 @9:5
              loop For header bb13 body bb14 unrolled @11:5
              loop For header bb17 body bb18 @12:5
            bb0 entry:
              decl sums                      @3:10
              builtin#0 parallel_loop()      @4:3
              decl i                         @5:12
              write i int = 0                @5:12
              -> goto bb1
            bb1 for.cond:
              read i int                     @5:19
              read n int                     @5:23
              -> branch bb2 bb4
            bb2 for.body:
              decl j                         @7:14
              write j int = 0                @7:14
              -> goto bb5
            bb3 for.inc:
              read i int                     @5:28
              write i int                    @5:28
              -> goto bb1
            bb4 for.end:
              -> goto bb21
            bb5 for.cond:
              read j int                     @7:21
              -> branch bb6 bb8
            bb6 for.body:
              read A ptr                     @7:44
              read i int                     @7:46
              read j int                     @7:54
              read *A double                 @7:44
              read j int                     @7:38
              read sums[const] double        @7:33
              write sums[const] double       @7:33
              -> goto bb7
            bb7 for.inc:
              read j int                     @7:30
              write j int                    @7:30
              -> goto bb5
            bb8 for.end:
              decl j                         @9:14
              write j int = 0                @9:14
              -> goto bb9
            bb9 for.cond:
              read j int                     @9:21
              -> branch bb10 bb12
            bb10 for.body:
              read j int                     @9:38
              write sums[dyn] double         @9:33
              -> goto bb11
            bb11 for.inc:
              read j int                     @9:28
              write j int                    @9:28
              -> goto bb9
            bb12 for.end:
              decl k                         @11:14
              write k int = 3                @11:14
              -> goto bb13
            bb13 for.cond:
              read k int                     @11:25
              -> branch bb14 bb16
            bb14 for.body:
              read k int                     @11:46
              write sums[const] double       @11:41
              -> goto bb15
            bb15 for.inc:
              read k int                     @11:33
              write k int                    @11:33
              -> goto bb13
            bb16 for.end:
              decl j                         @12:14
              write j int = 0                @12:14
              -> goto bb17
            bb17 for.cond:
              read j int                     @12:21
              -> branch bb18 bb20
            bb18 for.body:
              read j int                     @12:38
              write sums[dyn] double         @12:33
              -> goto bb19
            bb19 for.inc:
              read j int                     @12:30
              write j int                    @12:30
              -> goto bb17
            bb20 for.end:
              -> goto bb3
            bb21 return:
              -> return
        "#]],
    ),
    (
        "OpenMP and ivdep attach to the following loop",
        r#"void f(double *a, int n) {
  #pragma omp parallel for private(n) schedule(static)
  for (int i = 0; i < n; i++) a[i] = 0;
  #pragma omp for
  for (int i = 0; i < n; i++) a[i] = 0;
  #pragma omp parallel for simd
  for (int i = 0; i < n; i++) a[i] = 0;
  #pragma ivdep
  for (int i = 0; i < n; i++) a[i] = 0;
  #pragma GCC ivdep
  while (n--) a[n] = 1;
  [[intel::ivdep]] for (int i = 0; i < n; i++) a[i] = 0;
  #pragma omp parallel
  for (int i = 0; i < n; i++) a[i] = 0;
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param double*
              var n: param int
              var i: local int
              var i: local int
              var i: local int
              var i: local int
              var i: local int
              var i: local int
              loop For header bb1 body bb2 omp @3:3
              loop For header bb5 body bb6 omp @5:3
              loop For header bb9 body bb10 omp @7:3
              loop For header bb13 body bb14 ivdep @9:3
              loop While header bb17 body bb18 ivdep @11:3
              loop For header bb20 body bb21 ivdep @12:20
              loop For header bb24 body bb25 @14:3
            bb0 entry:
              decl i                         @3:12
              write i int = 0                @3:12
              -> goto bb1
            bb1 for.cond:
              read i int                     @3:19
              read n int                     @3:23
              -> branch bb2 bb4
            bb2 for.body:
              read a ptr                     @3:31
              read i int                     @3:33
              write *a double                @3:31
              -> goto bb3
            bb3 for.inc:
              read i int                     @3:26
              write i int                    @3:26
              -> goto bb1
            bb4 for.end:
              decl i                         @5:12
              write i int = 0                @5:12
              -> goto bb5
            bb5 for.cond:
              read i int                     @5:19
              read n int                     @5:23
              -> branch bb6 bb8
            bb6 for.body:
              read a ptr                     @5:31
              read i int                     @5:33
              write *a double                @5:31
              -> goto bb7
            bb7 for.inc:
              read i int                     @5:26
              write i int                    @5:26
              -> goto bb5
            bb8 for.end:
              decl i                         @7:12
              write i int = 0                @7:12
              -> goto bb9
            bb9 for.cond:
              read i int                     @7:19
              read n int                     @7:23
              -> branch bb10 bb12
            bb10 for.body:
              read a ptr                     @7:31
              read i int                     @7:33
              write *a double                @7:31
              -> goto bb11
            bb11 for.inc:
              read i int                     @7:26
              write i int                    @7:26
              -> goto bb9
            bb12 for.end:
              decl i                         @9:12
              write i int = 0                @9:12
              -> goto bb13
            bb13 for.cond:
              read i int                     @9:19
              read n int                     @9:23
              -> branch bb14 bb16
            bb14 for.body:
              read a ptr                     @9:31
              read i int                     @9:33
              write *a double                @9:31
              -> goto bb15
            bb15 for.inc:
              read i int                     @9:26
              write i int                    @9:26
              -> goto bb13
            bb16 for.end:
              -> goto bb17
            bb17 while.cond:
              read n int                     @11:10
              write n int                    @11:10
              -> branch bb18 bb19
            bb18 while.body:
              read a ptr                     @11:15
              read n int                     @11:17
              write *a double                @11:15
              -> goto bb17
            bb19 while.end:
              decl i                         @12:29
              write i int = 0                @12:29
              -> goto bb20
            bb20 for.cond:
              read i int                     @12:36
              read n int                     @12:40
              -> branch bb21 bb23
            bb21 for.body:
              read a ptr                     @12:48
              read i int                     @12:50
              write *a double                @12:48
              -> goto bb22
            bb22 for.inc:
              read i int                     @12:43
              write i int                    @12:43
              -> goto bb20
            bb23 for.end:
              decl i                         @14:12
              write i int = 0                @14:12
              -> goto bb24
            bb24 for.cond:
              read i int                     @14:19
              read n int                     @14:23
              -> branch bb25 bb27
            bb25 for.body:
              read a ptr                     @14:31
              read i int                     @14:33
              write *a double                @14:31
              -> goto bb26
            bb26 for.inc:
              read i int                     @14:26
              write i int                    @14:26
              -> goto bb24
            bb27 for.end:
              -> goto bb28
            bb28 return:
              -> return
        "#]],
    ),
    (
        "declarations: globals, statics, externs, typedefs, restrict, VLA, const",
        r#"typedef double real;
typedef struct { int a; real b; } pair_t;
static int counter;
extern float ext[];
const int LIMIT = 8;
void f(int n, real *__restrict x, long double *__restrict__ y, unsigned char *z) {
  static int calls;
  extern int other;
  real v[n];
  pair_t pr = { 1, 2.0 };
  int arr[3] = { 1, 2, 3 };
  char *msg = "hi";
  calls++;
  counter = other + LIMIT + pr.a;
  v[0] = ext[n] + *x + *y + *z;
}
"#,
        "f",
        expect![[r#"
            function f
              var n: param int
              var x: param double* restrict
              var y: param long-double* restrict
              var z: param char*
              var calls: static int
              var other: global int
              var v: local double array vla
              var pr: local aggregate aggregate
              var arr: local int array
              var msg: local char*
              var LIMIT: global int = 8
              var counter: global int
              var ext: global float array
            bb0 entry:
              decl calls                     @7:14
              read n int                     @9:10
              decl v                         @9:8
              decl pr                        @10:10
              write pr[const] aggregate      @10:10
              decl arr                       @11:7
              write arr[const] int           @11:7
              decl msg                       @12:9
              write msg ptr                  @12:8
              read calls int                 @13:3
              write calls int                @13:3
              read other int                 @14:13
              read pr[const] int             @14:29
              write counter int              @14:3
              read n int                     @15:14
              read ext[dyn] float            @15:10
              read x ptr                     @15:20
              read *x double                 @15:19
              read y ptr                     @15:25
              read *y long-double            @15:24
              read z ptr                     @15:30
              read *z char                   @15:29
              write v[const] double          @15:3
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
    (
        "address-taken and escapes: &x, array names, p = a, &a[i], &s",
        r#"struct S { int f; };
void f(int n) {
  int x, y, a[4], b[4], c[4];
  struct S s;
  int *p;
  use(&x, a, &s, n);
  p = b;
  p = &c[n];
  y = *p;
  memcpy(&y, &x, sizeof x);
}
"#,
        "f",
        expect![[r#"
            function f
              var n: param int
              var x: local int address-taken
              var y: local int address-taken
              var a: local int array address-taken
              var b: local int array address-taken
              var c: local int array address-taken
              var s: local aggregate aggregate address-taken
              var p: local int*
            bb0 entry:
              decl x                         @3:7
              decl y                         @3:10
              decl a                         @3:13
              decl b                         @3:19
              decl c                         @3:25
              decl s                         @4:12
              decl p                         @5:8
              call use escapes(x,a,s)        @6:3
              write p ptr                    @7:3
              read n int                     @8:10
              write p ptr                    @8:3
              read p ptr                     @9:8
              read *p int                    @9:7
              write y int                    @9:3
              call memcpy escapes(y,x)       @10:3
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
    (
        "calls: function-like macros, indirect calls, prefetch, asm, __builtin_expect",
        r#"#define MIN(a, b) ((a) < (b) ? (a) : (b))
void f(double *a, int n, void (*cb)(int)) {
  n = MIN(a[0], n);
  cb(n);
  (*cb)(n + 1);
  __builtin_prefetch(&a[n + 8]);
  __asm__ volatile ("nop" : "=r"(n) : "r"(a[1]) : "memory");
  if (__builtin_expect(n > 0, 1)) abort();
  n = sqrt(n);
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param double*
              var n: param int
              var cb: param unknown*
            bb0 entry:
              read a ptr                     @3:11
              read *a double                 @3:11
              read n int                     @3:17
              write n int                    @3:3
              read cb ptr                    @4:3
              read n int                     @4:6
              call <indirect>                @4:3
              read cb ptr                    @5:5
              read n int                     @5:9
              call <indirect>                @5:3
              read a ptr                     @6:23
              read n int                     @6:25
              prefetch                       @6:3
              read a ptr                     @7:43
              read *a double                 @7:43
              asm                            @7:3
              write n int                    @7:34
              read n int                     @8:24
              -> branch bb1 bb2
            bb1 if.then:
              call abort                     @8:35
              -> unreachable
            bb2 if.end:
              read n int                     @9:12
              call sqrt                      @9:7
              write n int                    @9:3
              -> goto bb3
            bb3 return:
              -> return
        "#]],
    ),
    (
        "preprocessor conditionals in a body: first branch only",
        r#"void f(int n) {
#ifdef __CSA__
  __builtin_csa_parallel_loop();
#else
  n = 1;
#endif
  for (int i = 0; i < n; i++) g(i);
}
"#,
        "f",
        expect![[r#"
            function f
              var n: param int
              var i: local int
              loop For header bb1 body bb2 @7:3
            bb0 entry:
              builtin#0 parallel_loop()      @3:3
              decl i                         @7:12
              write i int = 0                @7:12
              -> goto bb1
            bb1 for.cond:
              read i int                     @7:19
              read n int                     @7:23
              -> branch bb2 bb4
            bb2 for.body:
              call g                         @7:31
              -> goto bb3
            bb3 for.inc:
              read i int                     @7:26
              write i int                    @7:26
              -> goto bb1
            bb4 for.end:
              -> goto bb5
            bb5 return:
              -> return
        "#]],
    ),
    (
        "a pragma between a loop header and its unbraced body",
        r#"void f(double *a, int n) {
  for (int i = 0; i < n; i++)
    #pragma unroll
    for (int j = 0; j < 2; j++)
      a[i * 2 + j] = 0;
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param double*
              var n: param int
              var i: local int
              var j: local int
              loop For header bb1 body bb2 @2:3
              loop For header bb5 body bb6 unrolled @4:5
            bb0 entry:
              decl i                         @2:12
              write i int = 0                @2:12
              -> goto bb1
            bb1 for.cond:
              read i int                     @2:19
              read n int                     @2:23
              -> branch bb2 bb4
            bb2 for.body:
              decl j                         @4:14
              write j int = 0                @4:14
              -> goto bb5
            bb3 for.inc:
              read i int                     @2:26
              write i int                    @2:26
              -> goto bb1
            bb4 for.end:
              -> goto bb9
            bb5 for.cond:
              read j int                     @4:21
              -> branch bb6 bb8
            bb6 for.body:
              read a ptr                     @5:7
              read i int                     @5:9
              read j int                     @5:17
              write *a double                @5:7
              -> goto bb7
            bb7 for.inc:
              read j int                     @4:28
              write j int                    @4:28
              -> goto bb5
            bb8 for.end:
              -> goto bb3
            bb9 return:
              -> return
        "#]],
    ),
    (
        "macros whose body is one builtin call are lowered as that builtin",
        r#"#define PAR __builtin_csa_parallel_loop();
#define SPMD(w) (__builtin_csa_spmd((w), 0))
#define KIND "blocked"
#define WORKERS 8
#define SPMDZ(w, k) __builtin_csa_spmdization(w, k)
#define ENTRY(id) __builtin_csa_parallel_region_entry(id)
void f(double *a, int n) {
  PAR;
  for (int i = 0; i < n; i++) a[i] = 0;
  SPMD(4);
  SPMDZ(WORKERS, KIND);
  int r = ENTRY(5);
  SPMD(n);
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param double*
              var n: param int
              var i: local int
              var r: local int
              loop For header bb1 body bb2 @9:3
            bb0 entry:
              builtin#0 parallel_loop()      @8:3
              decl i                         @9:12
              write i int = 0                @9:12
              -> goto bb1
            bb1 for.cond:
              read i int                     @9:19
              read n int                     @9:23
              -> branch bb2 bb4
            bb2 for.body:
              read a ptr                     @9:31
              read i int                     @9:33
              write *a double                @9:31
              -> goto bb3
            bb3 for.inc:
              read i int                     @9:26
              write i int                    @9:26
              -> goto bb1
            bb4 for.end:
              builtin#1 spmd(4, 0)           @10:3
              builtin#2 spmdization(8, "blocked") @11:3
              decl r                         @12:7
              builtin#3 region_entry(5)      @12:11
              write r int = builtin#3        @12:7
              read n int                     @13:8
              builtin#4 spmd(n, 0)           @13:3
              -> goto bb5
            bb5 return:
              -> return
        "#]],
    ),
    (
        "else-if chains, nested loops and a statement expression",
        r#"int f(int *a, int n) {
  int s = 0;
  if (n == 0) s = 1;
  else if (n == 1) s = 2;
  else if (n == 2) s = 3;
  else s = ({ int t = a[0]; t + 1; });
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      s += a[i * n + j];
  return s;
}
"#,
        "f",
        expect![[r#"
            function f
              var a: param int*
              var n: param int
              var s: local int
              var t: local int
              var i: local int
              var j: local int
              loop For header bb10 body bb11 @7:3
              loop For header bb14 body bb15 @8:5
            bb0 entry:
              decl s                         @2:7
              write s int = 0                @2:7
              read n int                     @3:7
              -> branch bb1 bb2
            bb1 if.then:
              write s int = 1                @3:15
              -> goto bb3
            bb2 if.else:
              read n int                     @4:12
              -> branch bb4 bb5
            bb3 if.end:
              decl i                         @7:12
              write i int = 0                @7:12
              -> goto bb10
            bb4 if.then:
              write s int = 2                @4:20
              -> goto bb6
            bb5 if.else:
              read n int                     @5:12
              -> branch bb7 bb8
            bb6 if.end:
              -> goto bb3
            bb7 if.then:
              write s int = 3                @5:20
              -> goto bb9
            bb8 if.else:
              decl t                         @6:19
              read a ptr                     @6:23
              read *a int                    @6:23
              write t int                    @6:19
              read t int                     @6:29
              write s int                    @6:8
              -> goto bb9
            bb9 if.end:
              -> goto bb6
            bb10 for.cond:
              read i int                     @7:19
              read n int                     @7:23
              -> branch bb11 bb13
            bb11 for.body:
              decl j                         @8:14
              write j int = 0                @8:14
              -> goto bb14
            bb12 for.inc:
              read i int                     @7:26
              write i int                    @7:26
              -> goto bb10
            bb13 for.end:
              read s int                     @10:10
              -> goto bb18
            bb14 for.cond:
              read j int                     @8:21
              read i int                     @8:25
              -> branch bb15 bb17
            bb15 for.body:
              read a ptr                     @9:12
              read i int                     @9:14
              read n int                     @9:18
              read j int                     @9:22
              read *a int                    @9:12
              read s int                     @9:7
              write s int                    @9:7
              -> goto bb16
            bb16 for.inc:
              read j int                     @8:28
              write j int                    @8:28
              -> goto bb14
            bb17 for.end:
              -> goto bb12
            bb18 return:
              -> return
        "#]],
    ),
];

/// Compares dumps: a mismatch fails with a diff (the case's name is the
/// last one printed); `UPDATE_EXPECT=1` rewrites the table instead.
#[test]
fn dump_cases() {
    for (name, src, fname, expected) in CASES {
        println!("case: {name}");
        expected.assert_eq(&dump(src, fname));
    }
}

fn text_of(src: &str, sp: crate::source::Span) -> &str {
    &src[sp.range()]
}

#[test]
fn origins_and_terminator_spans() {
    let src = r#"void f(int n) {
  if (n > 1) n = 2;
  while (n < 10) {
    if (n == 5) break;
    n++;
  }
top:
  switch (n) { case 1: goto top; default: return; }
}
"#;
    let f = func(src, "f");
    let by_name = |name: &str| {
        f.blocks
            .iter()
            .filter(|b| b.name == name)
            .collect::<Vec<_>>()
    };
    let if_end = by_name("if.end");
    assert_eq!(text_of(src, if_end[0].origin.unwrap()), "if (n > 1) n = 2;");
    let wc = by_name("while.cond")[0];
    assert!(text_of(src, wc.origin.unwrap()).starts_with("while (n < 10) {"));
    assert_eq!(text_of(src, wc.term.span.unwrap()), "n < 10");
    assert_eq!(by_name("while.end")[0].origin, wc.origin);
    // the `if` inside the loop: its branch carries the condition
    let entry = &f.blocks[0];
    assert_eq!(text_of(src, entry.term.span.unwrap()), "n > 1");
    let brk = f
        .blocks
        .iter()
        .find(|b| b.term.span.is_some_and(|s| text_of(src, s) == "break;"));
    assert!(brk.is_some(), "break terminator span");
    let label = by_name("label")[0];
    assert_eq!(text_of(src, label.origin.unwrap()), "top");
    let epilog = by_name("sw.epilog")[0];
    assert!(text_of(src, epilog.origin.unwrap()).starts_with("switch (n)"));
    let sw_bb = by_name("sw.bb")[0];
    assert_eq!(text_of(src, sw_bb.origin.unwrap()), "case 1:");
    assert_eq!(text_of(src, sw_bb.term.span.unwrap()), "goto top;");
    let dflt = by_name("sw.default")[0];
    assert_eq!(text_of(src, dflt.term.span.unwrap()), "return;");
    // the switch terminator: targets in order, default last
    let sw = f
        .blocks
        .iter()
        .find(|b| matches!(b.term.kind, TermKind::Switch { .. }))
        .unwrap();
    assert_eq!(text_of(src, sw.term.span.unwrap()), "n");
    // loops: keyword span and header
    let l = &f.source_loops[0];
    assert_eq!(text_of(src, l.keyword_span), "while");
    assert_eq!(f.blocks[l.header.index()].name, "while.cond");
    assert_eq!(text_of(src, f.span), src.trim_end());
    assert_eq!(text_of(src, f.name_span), "f");
}

#[test]
fn builtin_fields() {
    let src = r#"void f(int n) {
  __builtin_csa_spmd(4, 0);
  int r = __builtin_csa_parallel_region_entry(7);
  int s;
  s = __builtin_csa_parallel_section_entry(r);
  __builtin_csa_parallel_section_exit(s);
  __builtin_csa_spmdization(2, "blo" "cked");
  __builtin_csa_unknown_thing(n);
}
"#;
    let f = func(src, "f");
    let b = &f.builtins;
    assert_eq!(b.len(), 6);
    assert_eq!(b[0].kind, BuiltinKind::Spmd);
    assert_eq!(text_of(src, b[0].span), "__builtin_csa_spmd(4, 0);");
    assert_eq!(text_of(src, b[0].name_span), "__builtin_csa_spmd");
    assert_eq!(text_of(src, b[0].args[1].span), "0");
    assert_eq!(b[0].block, Function::ENTRY);
    assert_eq!(b[1].kind, BuiltinKind::RegionEntry);
    assert_eq!(
        text_of(src, b[1].span),
        "__builtin_csa_parallel_region_entry(7)"
    );
    let r = b[1].result.unwrap();
    assert_eq!(f.var(r).name, "r");
    assert_eq!(b[2].kind, BuiltinKind::SectionEntry);
    assert_eq!(f.var(b[2].result.unwrap()).name, "s");
    assert_eq!(b[2].args[0].value, ArgValue::Var(r));
    assert_eq!(b[3].kind, BuiltinKind::SectionExit);
    assert_eq!(b[3].result, None);
    assert_eq!(b[4].args[1].value, ArgValue::Str("blocked".into()));
    assert_eq!(b[5].kind, BuiltinKind::Other);
    assert_eq!(b[5].name, "__builtin_csa_unknown_thing");
}

/// Region ids fold as clang's constants do (`csa_grammars::cint`, shared
/// with the preprocessor): an overflow wraps, in the expression and in a
/// macro body; a division by zero, a shift by 64 or more, `INT64_MIN / -1`
/// are no constant. A literal above `INT64_MAX` (unsigned in C) is a
/// constant: its bits, which the builtin's `int` parameter receives (it
/// was reported as a non-constant id, CSA204, a false error).
#[test]
fn region_ids_fold_with_wrapping_overflow() {
    let src = r#"#define WRAP (9223372036854775807 + 2)
#define DIV0 (1 / 0)
void f(void) {
  int a = __builtin_csa_parallel_region_entry(9223372036854775807 + 2);
  int b = __builtin_csa_parallel_region_entry(WRAP);
  int c = __builtin_csa_parallel_region_entry(-(-9223372036854775807 - 1));
  int d = __builtin_csa_parallel_region_entry(4611686018427387904 * 2);
  int e = __builtin_csa_parallel_region_entry(1 / 0);
  int g = __builtin_csa_parallel_region_entry(DIV0);
  int h = __builtin_csa_parallel_region_entry(1 << 64);
  int i = __builtin_csa_parallel_region_entry((-9223372036854775807 - 1) / -1);
  int j = __builtin_csa_parallel_region_entry(0xFFFFFFFFFFFFFFFF);
}
"#;
    let f = func(src, "f");
    let ids: Vec<&ArgValue> = f.builtins.iter().map(|b| &b.args[0].value).collect();
    assert_eq!(
        ids,
        [
            &ArgValue::Int(i64::MIN + 1),
            &ArgValue::Int(i64::MIN + 1),
            &ArgValue::Int(i64::MIN),
            &ArgValue::Int(i64::MIN),
            &ArgValue::Other,
            &ArgValue::Other,
            &ArgValue::Other,
            &ArgValue::Other,
            &ArgValue::Int(-1),
        ]
    );
}

#[test]
fn pragma_spans() {
    let src = "void f(double *a, int n) {\n  #pragma omp parallel for\n  for (int i = 0; i < n; i++) a[i] = 0;\n  [[intel::ivdep]] for (int i = 0; i < n; i++) a[i] = 0;\n}\n";
    let f = func(src, "f");
    assert_eq!(
        text_of(src, f.source_loops[0].omp.unwrap()),
        "#pragma omp parallel for"
    );
    assert_eq!(
        text_of(src, f.source_loops[1].ivdep.unwrap()),
        "[[intel::ivdep]]"
    );
}

#[test]
fn syntax_error_in_one_of_two_functions() {
    let src = r#"int good(int *a) { return a[0]; }
int bad(int n) {
  int x = ;
  if (n) { foo(n) }
  for (int i = 0; i < n; i++) x++;
  __builtin_csa_parallel_loop()
  for (int i = 0; i < n; i++) x++;
  return n;
}
int good2(double *b, int n) {
  for (int i = 0; i < n; i++) b[i] = 0;
  return n;
}
int garbage here !!!
"#;
    let out = lower_all(src);
    let names: Vec<&str> = out.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["good", "bad", "good2"]);
    assert!(out.functions[0].syntax_error.is_none());
    assert!(out.functions[2].syntax_error.is_none());
    let bad = &out.functions[1];
    let err = bad.syntax_error.expect("bad has an error");
    assert!(err.start >= bad.span.start && err.end <= bad.span.end);
    // lowered as far as the tree allows: the call, the marker and the loop
    let d = dump_function(bad, None);
    assert!(d.contains("call foo"), "{d}");
    assert!(d.contains("parallel_loop()"), "{d}");
    assert_eq!(bad.source_loops.len(), 2);
    assert!(!out.toplevel_errors.is_empty());
    // the good function is exactly what it is alone
    let alone = lower_all("\n\n\n\n\n\n\n\n\nint good2(double *b, int n) {\n  for (int i = 0; i < n; i++) b[i] = 0;\n  return n;\n}\n");
    assert_eq!(
        dump_function(&out.functions[2], None).lines().count(),
        dump_function(&alone.functions[0], None).lines().count()
    );
}

#[test]
fn odd_inputs_do_not_panic() {
    for src in [
        "",
        "{",
        "}",
        "void",
        "void f(",
        "void f() {",
        "int f() { return",
        "void f() { for (",
        "void f() { switch (x) { case",
        "void f() { goto ; }",
        "void f() { a[; }",
        "void f() { x = (int) ; }",
        "void f() { __builtin_csa_spmd(",
        "void f() { case 1: break; continue; }",
        "#pragma unroll\n",
        "void f() { #pragma omp parallel for\n }",
        "#define N N\nvoid f() { int a[N]; a[N] = N; }",
        "#define A B\n#define B A\nvoid f() { A = B; A(); }",
        "void f() { x = 1 / 0; y = 1 << 99; z = -9223372036854775808; }",
        "void f() { 'a'; '\\x'; \"\\\"; L\"\u{1F600}\"; }",
        "void f(void) { ({ }); (int[]){1, 2}; _Generic(x, int: 1); }",
        "void \u{fffd}() { \u{1F600} = 1; }",
        "int (*f(int a))(int) { return 0; }",
        "void f(a, b) int a; double *b; { b[a] = 0; }",
        "struct S { struct { int x; }; union { int y; } u; } s; void f() { s.x = s.u.y; }",
    ] {
        let out = lower_all(src);
        for f in &out.functions {
            let _ = dump_function(f, Some(&SourceText::new(src.to_string())));
        }
    }
}

#[test]
fn knr_and_function_pointer_definitions() {
    let f = func("void f(a, b) int a; double *b; { b[a] = 0; }", "f");
    assert_eq!(f.vars[0].name, "a");
    assert_eq!(f.vars[1].ty.pointee, ScalarTy::Double);
    let g = func("int (*g(int a))(int) { return 0; }", "g");
    assert_eq!(g.vars[0].name, "a");
}

#[test]
fn exponential_macros_terminate() {
    let mut src = String::from("#define A0 1\n");
    for i in 1..300 {
        src.push_str(&format!("#define A{i} (A{p} + A{p})\n", p = i - 1));
    }
    src.push_str("void f(int *a) { a[A299] = A20; __builtin_csa_spmd(A40, A5); }\n");
    let f = on_small_stack(move || func(&src, "f"));
    // A20 = 2^20 is evaluable; A299 is beyond the nesting bound
    let d = dump_function(&f, None);
    assert!(d.contains("spmd(1099511627776, 32)"), "{d}");
}

#[test]
fn standard_header_macros_are_constants() {
    let src = r#"void f(int *a, int c, double x) {
  for (int i = 0; i < INT_MAX; i++) if (a[i] == EOF) break;
  x = M_PI * x;
  a[CHAR_BIT - 1] = errno;
}
"#;
    let f = func(src, "f");
    let names: Vec<&str> = f.vars.iter().map(|v| v.name.as_str()).collect();
    // `errno` is not a known constant: a global from a header
    assert_eq!(names, ["a", "c", "x", "i", "errno"]);
}

#[test]
fn unroll_pragma_spellings() {
    let cases = [
        ("#pragma unroll", true),
        ("#pragma unroll 4", true),
        ("#pragma unroll(4)", true),
        ("#pragma unroll (8)", true),
        ("#pragma unroll 3", false),
        ("#pragma GCC unroll 4", true),
        ("#pragma clang loop unroll(full)", true),
        ("#pragma clang loop vectorize(enable) unroll(full)", true),
        ("#pragma clang loop unroll_count(4)", true),
        ("#pragma clang loop unroll(enable)", false),
        ("#pragma nounroll", false),
        ("#pragma unroll(K)", true),
        ("#pragma unroll(n)", false),
    ];
    for (pragma, unrolled) in cases {
        let src = format!(
            "#define K 4\nvoid f(double *a, int n) {{\n  double t[4];\n  {pragma}\n  for (int j = 0; j < 4; j++) t[j] = a[j];\n}}\n"
        );
        let f = func(&src, "f");
        assert_eq!(f.source_loops[0].unrolled, unrolled, "{pragma}");
        let d = dump_function(&f, None);
        let expect = if unrolled {
            "write t[const]"
        } else {
            "write t[dyn]"
        };
        assert!(d.contains(expect), "{pragma}: {d}");
    }
    // the pragma operator
    let f = func(
        "void f(double *a) {\n  double t[4];\n  _Pragma(\"unroll\")\n  for (int j = 0; j < 4; j++) t[j] = a[j];\n  _Pragma(\"omp parallel for\") for (int j = 0; j < 4; j++) a[j] = 0;\n}\n",
        "f",
    );
    assert!(f.source_loops[0].unrolled);
    assert!(f.source_loops[1].omp.is_some());
    assert!(!dump_function(&f, None).contains("call"));
    // non-constant trip counts are never fully unrolled
    let f = func(
        "void f(double *a, int n) {\n  #pragma unroll\n  for (int j = 0; j < n; j++) a[j] = 0;\n}\n",
        "f",
    );
    assert!(!f.source_loops[0].unrolled);
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    const SEED: &str = r#"#define N 64
struct S { int a; double v[4]; };
double g[N];
int f(double *restrict a, struct S *p, int n) {
  int r = __builtin_csa_parallel_region_entry(1);
  __builtin_csa_spmd(4, 0);
  for (int i = 0; i < n; i++) {
    int s = __builtin_csa_parallel_section_entry(r);
    #pragma unroll
    for (int j = 0; j < 4; j++) p->v[j] += a[i * 4 + j];
    if (a[i] > 0 && g[i % N] < 1 || !n) continue;
    switch (i) { case 0: a[i] = 1; break; default: goto out; }
    __builtin_csa_parallel_section_exit(s);
  }
out:
  __builtin_csa_parallel_region_exit(r);
  do { n--; } while (n > 0 ? n : -n);
  return n ? (int)a[0] : p->a;
}
"#;

    fn lower_quietly(src: &str) {
        let out = lower(src, &every_body());
        for f in &out.functions {
            let _ = dump_function(f, None);
            for b in &f.blocks {
                for s in b.term.kind.successors() {
                    assert!(s.index() < f.blocks.len());
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let s = String::from_utf8_lossy(&bytes);
            lower_quietly(&s);
        }

        #[test]
        fn truncated_programs_never_panic(cut in 0usize..SEED.len()) {
            let mut end = cut;
            while !SEED.is_char_boundary(end) {
                end -= 1;
            }
            lower_quietly(&SEED[..end]);
        }

        #[test]
        fn mutated_programs_never_panic(
            edits in proptest::collection::vec((0usize..SEED.len(), 0usize..8, any::<u8>()), 1..6)
        ) {
            let mut bytes = SEED.as_bytes().to_vec();
            for (pos, len, b) in edits {
                let pos = pos.min(bytes.len());
                let end = (pos + len).min(bytes.len());
                match b % 3 {
                    // delete a range
                    0 => { bytes.drain(pos..end); }
                    // insert a C punctuation or keyword byte
                    1 => {
                        let tok = [b'{', b'}', b'(', b')', b';', b'[', b']', b'#', b'*', b'&', b'\n', b'?', b':'];
                        bytes.insert(pos, tok[b as usize % tok.len()]);
                    }
                    // duplicate a range
                    _ => {
                        let dup: Vec<u8> = bytes[pos..end].to_vec();
                        for (k, x) in dup.into_iter().enumerate() {
                            bytes.insert(pos + k, x);
                        }
                    }
                }
            }
            lower_quietly(&String::from_utf8_lossy(&bytes));
        }
    }
}

/// Lowers every file in `$CSA_LOWER_FILES` (colon-separated) and reports
/// sizes and timing (development aid for real-world code).
#[test]
fn lower_env_files() {
    let Ok(paths) = std::env::var("CSA_LOWER_FILES") else {
        return;
    };
    for path in paths.split(':') {
        let bytes = std::fs::read(path).unwrap();
        let text = String::from_utf8_lossy(&bytes).to_string();
        let t = std::time::Instant::now();
        let out = on_small_stack(move || lower_all(&text));
        let blocks: usize = out.functions.iter().map(|f| f.blocks.len()).sum();
        let errs = out
            .functions
            .iter()
            .filter(|f| f.syntax_error.is_some())
            .count();
        println!(
            "{path}: {} functions ({errs} with errors), {blocks} blocks, {} top-level errors, {:?}",
            out.functions.len(),
            out.toplevel_errors.len(),
            t.elapsed()
        );
        if std::env::var("CSA_SHOW_ERRORS").is_ok() {
            let src = SourceText::new(String::from_utf8_lossy(&bytes).to_string());
            for f in &out.functions {
                if let Some(e) = f.syntax_error {
                    let lc = src.line_col(e.start as usize);
                    println!(
                        "  {} error at {}:{}: {}",
                        f.name,
                        lc.line,
                        lc.column,
                        src.line_text(lc.line as usize - 1).trim()
                    );
                }
            }
        }
    }
}

/// Dumps every function of `$CSA_DUMP_FILE` (development aid).
#[test]
fn dump_env_file() {
    let Ok(path) = std::env::var("CSA_DUMP_FILE") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let out = lower_all(&text);
    let src = SourceText::new(text.clone());
    for f in &out.functions {
        println!("{}", dump_function(f, Some(&src)));
        println!("syntax_error: {:?}", f.syntax_error);
        for b in &f.builtins {
            println!(
                "builtin {} result {:?} block {:?} span {:?}",
                b.name, b.result, b.block, b.span
            );
        }
    }
    println!("toplevel_errors: {:?}", out.toplevel_errors);
}

/// Runs `f` on a thread with an ordinary 2 MiB stack.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn deep_if_nesting_does_not_overflow() {
    let depth = 5000;
    let mut src = String::from("void f(int x) {\n");
    for _ in 0..depth {
        src.push_str("if (x) {\n");
    }
    src.push_str("x = 1;\n");
    for _ in 0..depth {
        src.push_str("}\n");
    }
    src.push_str("}\n");
    let out = on_small_stack(move || lower_all(&src));
    assert_eq!(out.functions.len(), 1);
    assert!(out.functions[0].syntax_error.is_some());
}

#[test]
fn deep_paren_nesting_does_not_overflow() {
    let depth = 5000;
    let mut src = String::from("void f(int x) {\nx = ");
    for _ in 0..depth {
        src.push('(');
    }
    src.push('x');
    for _ in 0..depth {
        src.push(')');
    }
    src.push_str(";\n}\n");
    let out = on_small_stack(move || lower_all(&src));
    assert_eq!(out.functions.len(), 1);
}

/// Deeply nested shapes of every recursive construct.
#[test]
fn deep_nesting_shapes_do_not_overflow() {
    let n = 5000;
    let rep = |s: &str, k: usize| s.repeat(k);
    let shapes: Vec<String> = vec![
        format!("void f(int *a) {{ x = {}0{}; }}", rep("a[", n), rep("]", n)),
        format!("void f(int *a) {{ x = {}a{}; }}", rep("*(", n), rep(")", n)),
        format!("void f(int x) {{ x = {}x; }}", rep("-", n)),
        format!("void f(int x) {{ x = {}x; }}", rep("!", n)),
        format!("void f(int x) {{ x = {}x; }}", rep("&", n)),
        format!("void f(int x) {{ if (x{}) x = 1; }}", rep(" && x", n)),
        format!("void f(int x) {{ x = x{}; }}", rep(" || x", n)),
        format!("void f(int x) {{ x = x{}; }}", rep(" + x", n)),
        format!(
            "void f(int x) {{ x = {}x; }}",
            rep("x + (", n) + &rep(")", n)
        ),
        format!("void f(int x) {{ g({}0{}); }}", rep("g(", n), rep(")", n)),
        format!(
            "void f(int x) {{ x = {}1{}; }}",
            rep("x ? (", n),
            rep(") : 0", n)
        ),
        format!(
            "void f(int x) {{ if ({}1{}) x = 1; }}",
            rep("x ? (", n),
            rep(") : 0", n)
        ),
        format!("void f(int x) {{ x = {}x; }}", rep("(int)", n)),
        format!("void f(int x) {{ x = {}x; }}", rep("x = ", n)),
        format!("void f(int x) {{ {}x = 1;{} }}", rep("{", n), rep("}", n)),
        format!(
            "void f(int x) {{ {}x = 1;{} }}",
            rep("({", n),
            rep("});", n)
        ),
        format!("void f(int x) {{ {}x = 1; }}", rep("for (;;) ", n)),
        format!("void f(int x) {{ {}x = 1; }}", rep("while (x) ", n)),
        format!(
            "void f(int x) {{ {}x = 1;{} }}",
            rep("do ", n),
            rep(" while (x);", n)
        ),
        format!(
            "void f(int x) {{ {}x = 1; }}",
            rep("switch (x) case 1: ", n)
        ),
        format!("void f(int x) {{ {}x = 1; }}", rep("L: ", n)),
        format!("void f(int x) {{ {}x = 1; }}", rep("if (x) ; else ", n)),
        format!(
            "void f(int x) {{ int a[] = {}1{}; }}",
            rep("{", n),
            rep("}", n)
        ),
        format!("void f(int x) {{ int {}p; }}", rep("*", n)),
        format!("void f(int x) {{ int p{}; }}", rep("[2]", n)),
        format!("void f(int x) {{ int {}p{}; }}", rep("(", n), rep(")", n)),
        format!(
            "struct S {} int a; {} s;",
            rep("{ struct {", n),
            rep("} m; }", n)
        ),
        format!(
            "#define A0 1\n{}void f(int x) {{ x = A{}; }}",
            (1..n)
                .map(|i| format!("#define A{} (A{} + 1)\n", i, i - 1))
                .collect::<String>(),
            n - 1
        ),
        format!(
            "void f(int x) {{ x = {}x{}; }}",
            rep("(x, ", n),
            rep(")", n)
        ),
        format!("void f(int x) {{ x = {}x; }}", rep("++", n)),
        format!("void f(int x) {{ x = x{}; }}", rep("->f", n)),
        format!("void f(int x) {{ x = x{}; }}", rep(".f", n)),
        format!(
            "void f(int x) {{ x = {}x{}; }}",
            rep("sizeof(", n),
            rep(")", n)
        ),
        format!(
            "void f(int x) {{ x = {}0{}; }}",
            rep("(int[]){", n),
            rep("}", n)
        ),
        format!(
            "enum {{ E0 = {}1{} }};\nvoid f(int x) {{ x = E0; }}",
            rep("(", n),
            rep(")", n)
        ),
        format!(
            "void f(int x) {{ {}x = 1; }}",
            rep("#pragma unroll\nfor (int i = 0; i < 2; i++)\n", n)
        ),
    ];
    for (i, src) in shapes.into_iter().enumerate() {
        let out = on_small_stack(move || lower_all(&src));
        assert!(!out.functions.is_empty() || i == 26, "shape {i}");
    }
}

/// The file scan skips statements without `{` or `#` inside function
/// bodies; everything it records must still be found inside statements
/// that have them, and typedefs that are block items anywhere.
#[test]
fn scan_finds_definitions_inside_function_statements() {
    let src = "void f(int x) {\n  switch (x) { case 1: typedef int t1; break; }\n  int n = sizeof((struct s1 { int a; }){1}.a);\n  return (void)({ typedef int t2; 0; });\n}\nint g(int x) {\n#define M1 3\n  h(({ enum { E1 = 4 }; E1; }));\n  lbl: typedef long t3;\n  if (x) { typedef short t4; }\n  struct s2 { int b; } v;\n  for (int i = 0; i < (int)sizeof(struct s3 { int c; }); i++) x += i;\n  if (x) x = ({ typedef int t5; (t5)1; });\n  return M1;\n}\n";
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&csa_grammars::c_language()).unwrap();
    let tree = parser.parse(src, None).unwrap();
    let mut file = FileCtx::new(src);
    let flat = crate::frontend::flat::FlatTree::new(tree.root_node());
    file.scan(flat.root());
    // (`lbl: typedef long t3;` is a declaration in tree-sitter-c's tree.)
    for t in ["t1", "t2", "t4", "t5"] {
        assert!(file.typedefs.contains_key(t), "typedef {t}");
    }
    for s in ["s1", "s2", "s3"] {
        assert!(file.struct_tags.contains_key(s), "struct {s}");
    }
    assert_eq!(file.enums.get("E1"), Some(&4));
    assert!(file.macros.contains_key("M1"));
}

/// The front end's options in these tests: every body lowered (the tests
/// look at the IR of functions without CSA builtins too).
fn every_body() -> FrontendOptions {
    FrontendOptions {
        every_body: true,
        ..Default::default()
    }
}
