//! Front-end tests: snippets and the expected CFG dump
//! (`crate::ir::dump::dump_function`), focused checks of spans and facts the
//! dump does not show, fixed-form lowering through the normaliser's position
//! map, and robustness (arbitrary and mutated input, deep nesting).

use super::*;
use crate::frontend::Identity;
use crate::ir::dump::dump_function;
use crate::ir::*;
use crate::source::SourceText;
use expect_test::{expect, Expect};

fn lower_text(text: &str) -> LoweredFile {
    lower(text, &Identity, &every_body())
}

/// The dumps of every function of `text`, in order.
fn dump_all(text: &str) -> String {
    let src = SourceText::new(text.into());
    lower_text(text)
        .functions
        .iter()
        .map(|f| dump_function(f, Some(&src)))
        .collect::<Vec<_>>()
        .join("")
}

/// (name, source, expected dump of every function); `UPDATE_EXPECT=1 cargo
/// test` rewrites the expected dumps in place.
const CASES: &[(&str, &str, Expect)] = &[
    // counted DO: bounds and the initial value in the preheader, a header without accesses, the update in the latch
    (
        "01_counted_do",
        r##"subroutine s(a, n, lo)
  integer n, lo
  real a(n)
  do i = lo, n + 1, 2
    a(i) = 0
  end do
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var n: dummy int
              var lo: dummy int
              var i: local int
              loop FortranDo header bb1 body bb2 @4:3
            bb0 entry:
              decl i                         @4:6
              read lo int                    @4:10
              read n int                     @4:14
              write i int = lo               @4:6
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              read i int                     @5:7
              write a[dyn] float             @5:5
              -> goto bb3
            bb3 do.inc:
              read i int                     @4:6
              write i int                    @4:6
              -> goto bb1
            bb4 do.end:
              -> goto bb5
            bb5 return:
              -> return
        "#]],
    ),
    // DO WHILE: the condition (and its accesses) in the header
    (
        "02_do_while",
        r##"subroutine s(a, n)
  real a(n)
  i = 1
  do while (a(i) > 0 .and. i < n)
    i = i + 1
  end do
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var n: dummy int
              var i: local int
              loop FortranDoWhile header bb1 body bb2 @4:3
            bb0 entry:
              decl i                         @3:3
              write i int = 1                @3:3
              -> goto bb1
            bb1 do.cond:
              read i int                     @4:15
              read a[dyn] float              @4:13
              read i int                     @4:28
              read n int                     @4:32
              -> branch bb2 bb3
            bb2 do.body:
              read i int                     @5:9
              write i int                    @5:5
              -> goto bb1
            bb3 do.end:
              -> goto bb4
            bb4 return:
              -> return
        "#]],
    ),
    // DO without control: the body is the header; EXIT leaves to do.end
    (
        "03_do_exit",
        r##"subroutine s(n)
  k = 0
  do
    k = k + 1
    if (k >= n) exit
  end do
end
"##,
        expect![[r#"
            function s
              var n: dummy int
              var k: local int
              loop FortranDoForever header bb1 body bb1 @3:3
            bb0 entry:
              decl k                         @2:3
              write k int = 0                @2:3
              -> goto bb1
            bb1 do.body:
              read k int                     @4:9
              write k int                    @4:5
              read k int                     @5:9
              read n int                     @5:14
              -> branch bb3 bb4
            bb2 do.end:
              -> goto bb5
            bb3 if.then:
              -> goto bb2
            bb4 if.end:
              -> goto bb1
            bb5 return:
              -> return
        "#]],
    ),
    // labelled DO ending on CONTINUE and on a labelled assignment
    (
        "04_labelled_do",
        r##"subroutine s(a, n)
  real a(n)
  do 10 i = 1, n
    a(i) = 0
10 continue
  do 20 j = 1, n
20 a(j) = a(j) + 1
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var n: dummy int
              var i: local int
              var j: local int
              loop FortranDo header bb1 body bb2 @3:3
              loop FortranDo header bb6 body bb7 @6:3
            bb0 entry:
              decl i                         @3:9
              decl j                         @6:9
              read n int                     @3:16
              write i int = 1                @3:9
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              read i int                     @4:7
              write a[dyn] float             @4:5
              -> goto bb5
            bb3 do.inc:
              read i int                     @3:9
              write i int                    @3:9
              -> goto bb1
            bb4 do.end:
              read n int                     @6:16
              write j int = 1                @6:9
              -> goto bb6
            bb5 label:
              -> goto bb3
            bb6 do.cond:
              -> branch bb7 bb9
            bb7 do.body:
              -> goto bb10
            bb8 do.inc:
              read j int                     @6:9
              write j int                    @6:9
              -> goto bb6
            bb9 do.end:
              -> goto bb11
            bb10 label:
              read j int                     @7:13
              read a[dyn] float              @7:11
              read j int                     @7:6
              write a[dyn] float             @7:4
              -> goto bb8
            bb11 return:
              -> return
        "#]],
    ),
    // nested labelled DOs sharing a terminal label: the terminal belongs to the inner loop
    (
        "05_shared_label",
        r##"subroutine s(a, n)
  real a(n, n)
  do 10 i = 1, n
    do 10 j = 1, n
      if (a(i, j) < 0) goto 10
      a(i, j) = 0
10 continue
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var n: dummy int
              var i: local int
              var j: local int
              loop FortranDo header bb1 body bb2 @3:3
              loop FortranDo header bb5 body bb6 @4:5
            bb0 entry:
              decl i                         @3:9
              decl j                         @4:11
              read n int                     @3:16
              write i int = 1                @3:9
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              read n int                     @4:18
              write j int = 1                @4:11
              -> goto bb5
            bb3 do.inc:
              read i int                     @3:9
              write i int                    @3:9
              -> goto bb1
            bb4 do.end:
              -> goto bb12
            bb5 do.cond:
              -> branch bb6 bb8
            bb6 do.body:
              read i int                     @5:13
              read j int                     @5:16
              read a[dyn] float              @5:11
              -> branch bb9 bb10
            bb7 do.inc:
              read j int                     @4:11
              write j int                    @4:11
              -> goto bb5
            bb8 do.end:
              -> goto bb3
            bb9 if.then:
              -> goto bb11
            bb10 if.end:
              read i int                     @6:9
              read j int                     @6:12
              write a[dyn] float             @6:7
              -> goto bb11
            bb11 label:
              -> goto bb7
            bb12 return:
              -> return
        "#]],
    ),
    // named EXIT/CYCLE go to the named loop; unnamed EXIT to the innermost
    (
        "06_named_exit_cycle",
        r##"subroutine s(a, n)
  real a(n, n)
  outer: do i = 1, n
    inner: do j = 1, n
      if (a(i, j) < 0) cycle outer
      if (a(i, j) > 9) exit outer
      if (j > i) exit
    end do inner
  end do outer
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var n: dummy int
              var i: local int
              var j: local int
              loop FortranDo header bb1 body bb2 @3:3
              loop FortranDo header bb5 body bb6 @4:5
            bb0 entry:
              decl i                         @3:13
              decl j                         @4:15
              read n int                     @3:20
              write i int = 1                @3:13
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              read n int                     @4:22
              write j int = 1                @4:15
              -> goto bb5
            bb3 do.inc:
              read i int                     @3:13
              write i int                    @3:13
              -> goto bb1
            bb4 do.end:
              -> goto bb15
            bb5 do.cond:
              -> branch bb6 bb8
            bb6 do.body:
              read i int                     @5:13
              read j int                     @5:16
              read a[dyn] float              @5:11
              -> branch bb9 bb10
            bb7 do.inc:
              read j int                     @4:15
              write j int                    @4:15
              -> goto bb5
            bb8 do.end:
              -> goto bb3
            bb9 if.then:
              -> goto bb3
            bb10 if.end:
              read i int                     @6:13
              read j int                     @6:16
              read a[dyn] float              @6:11
              -> branch bb11 bb12
            bb11 if.then:
              -> goto bb4
            bb12 if.end:
              read j int                     @7:11
              read i int                     @7:15
              -> branch bb13 bb14
            bb13 if.then:
              -> goto bb8
            bb14 if.end:
              -> goto bb7
            bb15 return:
              -> return
        "#]],
    ),
    // GOTO out of a loop
    (
        "07_goto_out",
        r##"subroutine s(a, n)
  real a(n)
  do i = 1, n
    if (a(i) < 0) goto 99
  end do
  a(1) = 1
99 continue
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var n: dummy int
              var i: local int
              loop FortranDo header bb1 body bb2 @3:3
            bb0 entry:
              decl i                         @3:6
              read n int                     @3:13
              write i int = 1                @3:6
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              read i int                     @4:11
              read a[dyn] float              @4:9
              -> branch bb5 bb6
            bb3 do.inc:
              read i int                     @3:6
              write i int                    @3:6
              -> goto bb1
            bb4 do.end:
              write a[const] float           @6:3
              -> goto bb7
            bb5 if.then:
              -> goto bb7
            bb6 if.end:
              -> goto bb3
            bb7 label:
              -> goto bb8
            bb8 return:
              -> return
        "#]],
    ),
    // arithmetic IF and computed GOTO are switches
    (
        "08_arith_if",
        r##"subroutine s(x, k)
  if (x - 1.0) 10, 20, 30
10 k = -1
  goto 40
20 k = 0
  go to 40
30 k = 1
40 goto (10, 20) k
end
"##,
        expect![[r#"
            function s
              var x: dummy float
              var k: dummy int
            bb0 entry:
              read x float                   @2:7
              -> switch bb1 bb2 bb3
            bb1 label:
              write k int = -1               @3:4
              -> goto bb4
            bb2 label:
              write k int = 0                @5:4
              -> goto bb4
            bb3 label:
              write k int = 1                @7:4
              -> goto bb4
            bb4 label:
              read k int                     @8:18
              -> switch bb1 bb2 bb5
            bb5 sw.epilog:
              -> goto bb6
            bb6 return:
              -> return
        "#]],
    ),
    // block IF / ELSE IF / ELSE: ELSE IF chains nest
    (
        "09_block_if",
        r##"subroutine s(x, y)
  if (x > 0) then
    y = 1
  else if (x < 0) then
    y = -1
  else
    y = 0
  end if
end
"##,
        expect![[r#"
            function s
              var x: dummy float
              var y: dummy float
            bb0 entry:
              read x float                   @2:7
              -> branch bb1 bb2
            bb1 if.then:
              write y float = 1              @3:5
              -> goto bb3
            bb2 if.else:
              read x float                   @4:12
              -> branch bb4 bb5
            bb3 if.end:
              -> goto bb7
            bb4 if.then:
              write y float = -1             @5:5
              -> goto bb6
            bb5 if.else:
              write y float = 0              @7:5
              -> goto bb6
            bb6 if.end:
              -> goto bb3
            bb7 return:
              -> return
        "#]],
    ),
    // SELECT CASE: one sw.bb per case, default last; no default: sw.epilog last
    (
        "10_select",
        r##"subroutine s(k, y)
  select case (k)
  case default
    y = 0
  case (1, 2)
    y = 1
  case (3:)
    y = 2
  end select
  select case (k + 1)
  case (1)
    y = 3
  end select
end
"##,
        expect![[r#"
            function s
              var k: dummy int
              var y: dummy float
            bb0 entry:
              read k int                     @2:16
              -> switch bb2 bb3 bb1
            bb1 sw.bb:
              write y float = 0              @4:5
              -> goto bb4
            bb2 sw.bb:
              write y float = 1              @6:5
              -> goto bb4
            bb3 sw.bb:
              write y float = 2              @8:5
              -> goto bb4
            bb4 sw.epilog:
              read k int                     @10:16
              -> switch bb5 bb6
            bb5 sw.bb:
              write y float = 3              @12:5
              -> goto bb6
            bb6 sw.epilog:
              -> goto bb7
            bb7 return:
              -> return
        "#]],
    ),
    // RETURN, ERROR STOP, STOP and the unreachable code after them
    (
        "11_return_stop",
        r##"subroutine s(x)
  if (x < 0) return
  if (x > 100) then
    error stop 'too big'
  end if
  x = sqrt(x)
  stop
  x = 1
end
"##,
        expect![[r#"
            function s
              var x: dummy float
            bb0 entry:
              read x float                   @2:7
              -> branch bb1 bb2
            bb1 if.then:
              -> goto bb3
            bb2 if.end:
              read x float                   @3:7
              -> branch bb4 bb5
            bb3 return:
              -> return
            bb4 if.then:
              call stop                      @4:5
              -> unreachable
            bb5 if.end:
              read x float                   @6:12
              write x float                  @6:3
              call stop                      @7:3
              -> unreachable
            bb6 unreachable:
              write x float = 1              @8:3
              -> goto bb3
        "#]],
    ),
    // dummy, local, SAVE, initialised, COMMON, module, PARAMETER, POINTER/TARGET and typed variables
    (
        "12_var_kinds",
        r##"module m
  integer :: mv
  integer, parameter :: mp = 3
end module
subroutine s(d, e)
  use m
  real :: d, e(10)
  real :: l
  real, save :: sv
  integer :: ini = 2
  real :: sv2
  save sv2
  common /c/ cm, cv(4)
  integer, parameter :: np = mp * 2 + 1, nq = np - 1
  parameter (nr = nq / 2)
  integer, pointer :: p
  integer, target :: t
  double precision dp
  real(kind=8) r8
  character(len=4) ch
  type(pt) :: obj
  real, allocatable :: al(:)
  l = d + e(np) + mv + sv + sv2 + ini + cm + cv(nr) + mp
end
"##,
        expect![[r#"
            function s
              var d: dummy float
              var e: dummy float array
              var l: local float
              var sv: saved float
              var ini: saved int
              var sv2: saved float
              var cm: saved float
              var cv: saved float array
              var np: const int = 7
              var nq: const int = 6
              var nr: const int = 3
              var p: local int* pointer-or-target
              var t: local int pointer-or-target address-taken
              var dp: local double
              var r8: local double
              var ch: local char
              var obj: local aggregate aggregate
              var al: local float array vla
              var mv: saved int
              var mp: const int = 3
            bb0 entry:
              decl l                         @8:11
              decl p                         @16:23
              decl t                         @17:22
              decl dp                        @18:20
              decl r8                        @19:16
              decl ch                        @20:20
              decl obj                       @21:15
              decl al                        @22:24
              read d float                   @23:7
              read e[const] float            @23:11
              read mv int                    @23:19
              read sv float                  @23:24
              read sv2 float                 @23:29
              read ini int                   @23:35
              read cm float                  @23:41
              read cv[const] float           @23:46
              write l float                  @23:3
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
    // implicit typing: IMPLICIT statements, IMPLICIT NONE (undeclared names are module data), default rules
    (
        "13_implicit",
        r##"subroutine s(a)
  implicit double precision (a-h, o-z)
  x = a
  k = 1
  n = k
end
subroutine t()
  implicit none
  x = undeclared + 1
end
subroutine u()
  x = 1.5
  ival = 2
end
"##,
        expect![[r#"
            function s
              var a: dummy double
              var x: local double
              var k: local int
              var n: local int
            bb0 entry:
              decl x                         @3:3
              decl k                         @4:3
              decl n                         @5:3
              read a double                  @3:7
              write x double = a             @3:3
              write k int = 1                @4:3
              read k int                     @5:7
              write n int = k                @5:3
              -> goto bb1
            bb1 return:
              -> return
            function t
              var undeclared: saved unknown
              var x: saved unknown
            bb0 entry:
              read undeclared unknown        @9:7
              write x unknown                @9:3
              -> goto bb1
            bb1 return:
              -> return
            function u
              var x: local float
              var ival: local int
            bb0 entry:
              decl x                         @12:3
              decl ival                      @13:3
              write x float                  @12:3
              write ival int = 2             @13:3
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
    // array elements vs function references; actual arguments escape
    (
        "14_elem_vs_call",
        r##"subroutine s(a, n, f)
  real a(n), b(3), f
  real g
  external h
  x = a(1) + b(n) + f(2.0) + g(x) + h(b) + q(n)
  call sub(a(n), b(2:3), x + 1, 4)
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla address-taken
              var n: dummy int address-taken
              var b: local float array address-taken
              var x: local float address-taken
            bb0 entry:
              decl b                         @2:14
              decl x                         @5:32
              read a[const] float            @5:7
              read n int                     @5:16
              read b[dyn] float              @5:14
              call f                         @5:21
              call g escapes(x)              @5:30
              call h escapes(b)              @5:37
              call q escapes(n)              @5:44
              write x float                  @5:3
              read n int                     @6:14
              read x float                   @6:26
              call sub escapes(a,b)          @6:3
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
    // intrinsic functions are not calls; inquiry functions do not read their argument
    (
        "15_intrinsics",
        r##"subroutine s(a, n)
  real a(n)
  x = sqrt(abs(a(1))) + max(1, n) + sum(a) + size(a) + real(n) + mod(n, 2)
  k = len_trim('ab ') + ubound(a, 1)
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var n: dummy int
              var x: local float
              var k: local int
            bb0 entry:
              decl x                         @3:3
              decl k                         @4:3
              read a[const] float            @3:16
              read n int                     @3:32
              read a[dyn] float              @3:41
              read n int                     @3:61
              read n int                     @3:70
              write x float                  @3:3
              write k int                    @4:3
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
    // builtins: constant, PARAMETER, variable, wrong-count and non-constant arguments; worker_num result
    (
        "16_builtins",
        r##"subroutine s(a, n, nv)
  integer n, nv
  real a(n)
  integer, parameter :: nw = 4
  call builtin_csa_spmd(nw * 2, -1)
  call builtin_csa_spmd(nv, 0)
  call builtin_csa_spmd(4)
  call builtin_csa_pipeline_loop(4_8)
  call builtin_csa_pipeline_loop(n + 1)
  call builtin_csa_parallel_loop(a(1))
  call builtin_csa_spmdization(2, 'cyclic')
  call builtin_csa_something()
  w = builtin_csa_spmd_worker_num()
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var n: dummy int
              var nv: dummy int
              var nw: const int = 4
              var w: local float
            bb0 entry:
              decl w                         @13:3
              builtin#0 spmd(8, -1)          @5:3
              builtin#1 spmd(nv, 0)          @6:3
              builtin#2 spmd(4)              @7:3
              builtin#3 pipeline_loop(4)     @8:3
              read n int                     @9:34
              builtin#4 pipeline_loop(?)     @9:3
              builtin#5 parallel_loop(?)     @10:3
              builtin#6 spmdization(2, "cyclic") @11:3
              builtin#7 other()              @12:3
              builtin#8 worker_num()         @13:7
              write w float = builtin#8      @13:3
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
    // upper-case source
    (
        "17_upper",
        r##"SUBROUTINE UPPER(A, N)
  INTEGER N
  REAL A(N)
  CALL BUILTIN_CSA_PARALLEL_LOOP()
  DO I = 1, N
    IF (A(I) .GT. 0.0) THEN
      A(I) = SQRT(A(I))
    ELSE
      CALL FOO(A(I))
    END IF
  END DO
END SUBROUTINE UPPER
"##,
        expect![[r#"
            function UPPER
              var A: dummy float array vla address-taken
              var N: dummy int
              var I: local int
              loop FortranDo header bb1 body bb2 @5:3
            bb0 entry:
              decl I                         @5:6
              builtin#0 parallel_loop()      @4:3
              read N int                     @5:13
              write I int = 1                @5:6
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              read I int                     @6:11
              read A[dyn] float              @6:9
              -> branch bb5 bb6
            bb3 do.inc:
              read I int                     @5:6
              write I int                    @5:6
              -> goto bb1
            bb4 do.end:
              -> goto bb8
            bb5 if.then:
              read I int                     @7:21
              read A[dyn] float              @7:19
              read I int                     @7:9
              write A[dyn] float             @7:7
              -> goto bb7
            bb6 if.else:
              read I int                     @9:18
              call foo escapes(A)            @9:7
              -> goto bb7
            bb7 if.end:
              -> goto bb3
            bb8 return:
              -> return
        "#]],
    ),
    // !$omp parallel do / !$OMP DO / !DIR$ IVDEP / !GCC$ ivdep attach only right before a DO
    (
        "18_directives",
        r##"subroutine s(a, n)
  real a(n)
  !$omp parallel do private(i)

  ! unrelated comment
  do i = 1, n
    a(i) = 0
  end do
  !DIR$ IVDEP
  !$OMP DO
  do i = 1, n
    a(i) = 1
  end do
  !GCC$ ivdep
  do i = 1, n
  end do
  !$omp parallel do
  a(1) = 2
  do i = 1, n
  end do
  !$omp end do
  !dir$ ivdep2
  do i = 1, n
  end do
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var n: dummy int
              var i: local int
              loop FortranDo header bb1 body bb2 omp @6:3
              loop FortranDo header bb5 body bb6 omp ivdep @11:3
              loop FortranDo header bb9 body bb10 ivdep @15:3
              loop FortranDo header bb13 body bb14 @19:3
              loop FortranDo header bb17 body bb18 @23:3
            bb0 entry:
              decl i                         @6:6
              read n int                     @6:13
              write i int = 1                @6:6
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              read i int                     @7:7
              write a[dyn] float             @7:5
              -> goto bb3
            bb3 do.inc:
              read i int                     @6:6
              write i int                    @6:6
              -> goto bb1
            bb4 do.end:
              read n int                     @11:13
              write i int = 1                @11:6
              -> goto bb5
            bb5 do.cond:
              -> branch bb6 bb8
            bb6 do.body:
              read i int                     @12:7
              write a[dyn] float             @12:5
              -> goto bb7
            bb7 do.inc:
              read i int                     @11:6
              write i int                    @11:6
              -> goto bb5
            bb8 do.end:
              read n int                     @15:13
              write i int = 1                @15:6
              -> goto bb9
            bb9 do.cond:
              -> branch bb10 bb12
            bb10 do.body:
              -> goto bb11
            bb11 do.inc:
              read i int                     @15:6
              write i int                    @15:6
              -> goto bb9
            bb12 do.end:
              write a[const] float           @18:3
              read n int                     @19:13
              write i int = 1                @19:6
              -> goto bb13
            bb13 do.cond:
              -> branch bb14 bb16
            bb14 do.body:
              -> goto bb15
            bb15 do.inc:
              read i int                     @19:6
              write i int                    @19:6
              -> goto bb13
            bb16 do.end:
              read n int                     @23:13
              write i int = 1                @23:6
              -> goto bb17
            bb17 do.cond:
              -> branch bb18 bb20
            bb18 do.body:
              -> goto bb19
            bb19 do.inc:
              read i int                     @23:6
              write i int                    @23:6
              -> goto bb17
            bb20 do.end:
              -> goto bb21
            bb21 return:
              -> return
        "#]],
    ),
    // BLOCK construct: Decls at the construct start
    (
        "19_block",
        r##"subroutine s(n)
  x = 1
  do i = 1, n
    block
      real :: t(3), u
      t(1) = x
      u = t(1)
      x = u
    end block
  end do
end
"##,
        expect![[r#"
            function s
              var n: dummy int
              var x: local float
              var i: local int
              var t: local float array
              var u: local float
              loop FortranDo header bb1 body bb2 @3:3
            bb0 entry:
              decl x                         @2:3
              decl i                         @3:6
              write x float = 1              @2:3
              read n int                     @3:13
              write i int = 1                @3:6
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              decl t                         @5:15
              decl u                         @5:21
              read x float                   @6:14
              write t[const] float           @6:7
              read t[const] float            @7:11
              write u float                  @7:7
              read u float                   @8:11
              write x float = u              @8:7
              -> goto bb3
            bb3 do.inc:
              read i int                     @3:6
              write i int                    @3:6
              -> goto bb1
            bb4 do.end:
              -> goto bb5
            bb5 return:
              -> return
        "#]],
    ),
    // a syntax error in one subroutine leaves the other intact
    (
        "20_syntax_error",
        r##"subroutine bad(a, n)
  real a(n)
  a(1) = (1 +
  do i = 1, n
    a(i) = 0
  end do
end subroutine
subroutine good(a, n)
  real a(n)
  call builtin_csa_parallel_loop()
  do i = 1, n
    a(i) = 0
  end do
end subroutine
"##,
        expect![[r#"
            function bad
              var a: dummy float array vla
              var n: dummy int
              var do: local float
            bb0 entry:
              decl do                        @4:3
              read do float                  @4:3
              write a[const] float           @3:3
              -> goto bb1
            bb1 return:
              -> return
            function good
              var a: dummy float array vla
              var n: dummy int
              var i: local int
              loop FortranDo header bb1 body bb2 @11:3
            bb0 entry:
              decl i                         @11:6
              builtin#0 parallel_loop()      @10:3
              read n int                     @11:13
              write i int = 1                @11:6
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              read i int                     @12:7
              write a[dyn] float             @12:5
              -> goto bb3
            bb3 do.inc:
              read i int                     @11:6
              write i int                    @11:6
              -> goto bb1
            bb4 do.end:
              -> goto bb5
            bb5 return:
              -> return
        "#]],
    ),
    // module variables via USE (with rename) and host association; host locals used by an internal procedure are address-taken
    (
        "21_host_assoc",
        r##"module data
  implicit none
  real :: table(100)
  integer :: count = 0
contains
  subroutine add(x)
    real, intent(in) :: x
    count = count + 1
    table(count) = x
  end subroutine add
end module data
program main
  use data, only: add, cnt => count
  real :: total
  total = 0
  call add(total)
  call show()
  print *, cnt
contains
  subroutine show()
    total = total + 1
  end subroutine
end program
"##,
        expect![[r#"
            function add
              var x: dummy float
              var count: saved int
              var table: saved float array
            bb0 entry:
              read count int                 @8:13
              write count int                @8:5
              read x float                   @9:20
              read count int                 @9:11
              write table[dyn] float         @9:5
              -> goto bb1
            bb1 return:
              -> return
            function main
              var total: local float address-taken
              var count: saved int address-taken
            bb0 entry:
              decl total                     @14:11
              write total float = 0          @15:3
              call add escapes(total)        @16:3
              call show                      @17:3
              call PRINT escapes(count)      @18:3
              -> goto bb1
            bb1 return:
              -> return
            function show
              var total: saved float
            bb0 entry:
              read total float               @21:13
              write total float              @21:5
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
    // DO CONCURRENT with two indices and a mask; WHERE and FORALL accesses
    (
        "22_concurrent_where",
        r##"subroutine s(a, b, n)
  real a(n), b(n)
  do concurrent (i = 1:n, j = 1:2, a(i) > 0)
    b(i) = a(i) * j
  end do
  where (a > 0) b = a
  forall (k = 1:n) a(k) = b(n - k + 1)
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var b: dummy float array vla
              var n: dummy int
              var i: local int
              var j: local int
              var k: local int
              loop FortranDoConcurrent header bb1 body bb6 @3:3
            bb0 entry:
              read n int                     @3:24
              write i int = 1                @3:18
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              write j int = 1                @3:27
              -> goto bb5
            bb3 do.inc:
              read i int                     @3:18
              write i int                    @3:18
              -> goto bb1
            bb4 do.end:
              read a[dyn] float              @6:10
              read a[dyn] float              @6:21
              write b[dyn] float             @6:17
              read n int                     @7:17
              read n int                     @7:29
              read k int                     @7:33
              read b[dyn] float              @7:27
              read k int                     @7:22
              write a[dyn] float             @7:20
              -> goto bb10
            bb5 do.cond:
              -> branch bb6 bb8
            bb6 do.body:
              read i int                     @3:38
              read a[dyn] float              @3:36
              -> branch bb9 bb7
            bb7 do.inc:
              read j int                     @3:27
              write j int                    @3:27
              -> goto bb5
            bb8 do.end:
              -> goto bb3
            bb9 if.then:
              read i int                     @4:14
              read a[dyn] float              @4:12
              read j int                     @4:19
              read i int                     @4:7
              write b[dyn] float             @4:5
              -> goto bb7
            bb10 return:
              -> return
        "#]],
    ),
    // READ/WRITE/PRINT are calls whose items escape; READ items are written
    (
        "23_io",
        r##"subroutine s(a, n)
  real a(n)
  read (*, *) m, (a(i), i = 1, m)
  write (*, '(i5, f8.3)') m, a(1) * 2
  print *, 'done', n
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla address-taken
              var n: dummy int address-taken
              var m: local int address-taken
              var i: local int
            bb0 entry:
              decl m                         @3:15
              decl i                         @3:25
              read m int                     @3:32
              write i int                    @3:25
              read i int                     @3:21
              call READ escapes(m,a)         @3:3
              write m int                    @3:15
              read i int                     @3:21
              write a[dyn] float             @3:19
              read a[const] float            @4:30
              call WRITE escapes(m)          @4:3
              call PRINT escapes(n)          @5:3
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
    // POINTER dereferences, pointer association, derived-type components
    (
        "24_pointer_derived",
        r##"subroutine s(n)
  type node
    real :: val
    real, pointer :: next(:)
    real :: arr(4)
  end type
  type(node) :: t
  type(node) :: ts(10)
  real, pointer :: p(:)
  real, target :: tgt(10)
  p => tgt
  p(n) = t%val + t%arr(2) + t%arr(n) + t%next(1) + ts(n)%val
  t = ts(1)
  nullify(p)
end
"##,
        expect![[r#"
            function s
              var n: dummy int
              var t: local aggregate aggregate
              var ts: local aggregate array
              var p: local float* array vla pointer-or-target
              var tgt: local float array pointer-or-target address-taken
            bb0 entry:
              decl t                         @7:17
              decl ts                        @8:17
              decl p                         @9:20
              decl tgt                       @10:19
              write p ptr                    @11:3
              read t[const] float            @12:10
              read t[const] float            @12:18
              read n int                     @12:35
              read t[dyn] float              @12:29
              read *? float                  @12:40
              read n int                     @12:55
              read ts[dyn] float             @12:52
              read n int                     @12:5
              write *p float                 @12:3
              read ts[const] aggregate       @13:7
              write t aggregate              @13:3
              write p ptr                    @14:11
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
    // a builtin inside #ifdef __CSA__
    (
        "25_preproc",
        r##"subroutine s(a, n)
  real a(n)
#ifdef __CSA__
  call builtin_csa_parallel_loop()
#endif
  do i = 1, n
    a(i) = 0
  end do
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var n: dummy int
              var i: local int
              loop FortranDo header bb1 body bb2 @6:3
            bb0 entry:
              decl i                         @6:6
              builtin#0 parallel_loop()      @4:3
              read n int                     @6:13
              write i int = 1                @6:6
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              read i int                     @7:7
              write a[dyn] float             @7:5
              -> goto bb3
            bb3 do.inc:
              read i int                     @6:6
              write i int                    @6:6
              -> goto bb1
            bb4 do.end:
              -> goto bb5
            bb5 return:
              -> return
        "#]],
    ),
    // labels on END DO, labelled DO ending on END DO, labels on IF and END IF
    (
        "26_labels_misc",
        r##"subroutine s(a, n)
  real a(n)
  do i = 1, n
    if (a(i) < 0) goto 5
    a(i) = 1
5 end do
  do 30 j = 1, n
    a(j) = 2
30 end do
  if (n > 0) goto 40
  n = 1
40 if (n > 2) then
    n = 2
50 end if
end
"##,
        expect![[r#"
            function s
              var a: dummy float array vla
              var n: dummy int
              var i: local int
              var j: local int
              loop FortranDo header bb1 body bb2 @3:3
              loop FortranDo header bb8 body bb9 @7:3
            bb0 entry:
              decl i                         @3:6
              decl j                         @7:9
              read n int                     @3:13
              write i int = 1                @3:6
              -> goto bb1
            bb1 do.cond:
              -> branch bb2 bb4
            bb2 do.body:
              read i int                     @4:11
              read a[dyn] float              @4:9
              -> branch bb5 bb6
            bb3 do.inc:
              read i int                     @3:6
              write i int                    @3:6
              -> goto bb1
            bb4 do.end:
              read n int                     @7:16
              write j int = 1                @7:9
              -> goto bb8
            bb5 if.then:
              -> goto bb7
            bb6 if.end:
              read i int                     @5:7
              write a[dyn] float             @5:5
              -> goto bb7
            bb7 label:
              -> goto bb3
            bb8 do.cond:
              -> branch bb9 bb11
            bb9 do.body:
              read j int                     @8:7
              write a[dyn] float             @8:5
              -> goto bb12
            bb10 do.inc:
              read j int                     @7:9
              write j int                    @7:9
              -> goto bb8
            bb11 do.end:
              read n int                     @10:7
              -> branch bb13 bb14
            bb12 label:
              -> goto bb10
            bb13 if.then:
              -> goto bb15
            bb14 if.end:
              write n int = 1                @11:3
              -> goto bb15
            bb15 label:
              read n int                     @12:8
              -> branch bb16 bb17
            bb16 if.then:
              write n int = 2                @13:5
              -> goto bb17
            bb17 if.end:
              -> goto bb18
            bb18 label:
              -> goto bb19
            bb19 return:
              -> return
        "#]],
    ),
    // statement functions are inlined (no call); function results
    (
        "27_stmt_function",
        r##"function f(x) result(r)
  real x, r
  sq(y) = y * y
  integer, parameter :: k = 2
  r = sq(x) + k
  r = r + f2(x)
end function
real function f2(x)
  f2 = x * 2
end
"##,
        expect![[r#"
            function f
              var x: dummy float address-taken
              var r: local float
              var k: const int = 2
            bb0 entry:
              decl r                         @2:11
              read x float                   @5:10
              write r float                  @5:3
              read r float                   @6:7
              call f2 escapes(x)             @6:11
              write r float                  @6:3
              -> goto bb1
            bb1 return:
              -> return
            function f2
              var x: dummy float
              var f2: local float
            bb0 entry:
              decl f2                        @8:15
              read x float                   @9:8
              write f2 float                 @9:3
              -> goto bb1
            bb1 return:
              -> return
        "#]],
    ),
];

/// A mismatch fails with a diff (the case's name is the last one printed);
/// `UPDATE_EXPECT=1` rewrites the table instead.
#[test]
fn cfg_dumps() {
    for (name, src, expected) in CASES {
        println!("case: {name}");
        expected.assert_eq(&dump_all(src));
    }
}

/// The source text of a span.
fn at(text: &str, span: crate::source::Span) -> &str {
    &text[span.range()]
}

fn source(name: &str) -> &'static str {
    CASES
        .iter()
        .find(|c| c.0 == name)
        .map(|c| c.1)
        .unwrap_or_else(|| panic!("no case {name}"))
}

fn func<'f>(lf: &'f LoweredFile, name: &str) -> &'f Function {
    lf.functions
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// (kind, span text, name span text, (value, span text) of each argument,
/// result variable).
type BuiltinFacts<'a> = (
    BuiltinKind,
    &'a str,
    &'a str,
    Vec<(ArgValue, &'a str)>,
    Option<&'a str>,
);

#[test]
fn builtin_facts() {
    let text = source("16_builtins");
    let lf = lower_text(text);
    let f = func(&lf, "s");
    let got: Vec<BuiltinFacts> = f
        .builtins
        .iter()
        .map(|b| {
            (
                b.kind,
                at(text, b.span),
                at(text, b.name_span),
                b.args
                    .iter()
                    .map(|a| (a.value.clone(), at(text, a.span)))
                    .collect(),
                b.result.map(|v| f.var(v).name.as_str()),
            )
        })
        .collect();
    let nv = f
        .vars
        .iter()
        .position(|v| v.name == "nv")
        .map(|i| VarId(i as u32));
    use ArgValue::{Int, Str, Var};
    use BuiltinKind::*;
    let expected: Vec<BuiltinFacts> = vec![
        (
            Spmd,
            "call builtin_csa_spmd(nw * 2, -1)",
            "builtin_csa_spmd",
            vec![(Int(8), "nw * 2"), (Int(-1), "-1")],
            None,
        ),
        (
            Spmd,
            "call builtin_csa_spmd(nv, 0)",
            "builtin_csa_spmd",
            vec![(Var(nv.unwrap()), "nv"), (Int(0), "0")],
            None,
        ),
        (
            Spmd,
            "call builtin_csa_spmd(4)",
            "builtin_csa_spmd",
            vec![(Int(4), "4")],
            None,
        ),
        (
            PipelineLoop,
            "call builtin_csa_pipeline_loop(4_8)",
            "builtin_csa_pipeline_loop",
            vec![(Int(4), "4_8")],
            None,
        ),
        (
            PipelineLoop,
            "call builtin_csa_pipeline_loop(n + 1)",
            "builtin_csa_pipeline_loop",
            vec![(ArgValue::Other, "n + 1")],
            None,
        ),
        (
            ParallelLoop,
            "call builtin_csa_parallel_loop(a(1))",
            "builtin_csa_parallel_loop",
            vec![(ArgValue::Other, "a(1)")],
            None,
        ),
        (
            Spmdization,
            "call builtin_csa_spmdization(2, 'cyclic')",
            "builtin_csa_spmdization",
            vec![(Int(2), "2"), (Str("cyclic".into()), "'cyclic'")],
            None,
        ),
        (
            BuiltinKind::Other,
            "call builtin_csa_something()",
            "builtin_csa_something",
            vec![],
            None,
        ),
        (
            WorkerNum,
            "builtin_csa_spmd_worker_num()",
            "builtin_csa_spmd_worker_num",
            vec![],
            Some("w"),
        ),
    ];
    assert_eq!(got, expected);
    // builtins are never also calls
    assert!(f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .all(|i| !matches!(&i.kind, InstKind::Call(_))));
    // each builtin sits in the block it names
    for (i, b) in f.builtins.iter().enumerate() {
        assert!(f
            .block(b.block)
            .insts
            .iter()
            .any(|inst| matches!(inst.kind, InstKind::Builtin(id) if id.index() == i)));
    }

    let text = source("17_upper");
    let lf = lower_text(text);
    let b = &func(&lf, "UPPER").builtins[0];
    assert_eq!(b.kind, ParallelLoop);
    assert_eq!(b.name, "BUILTIN_CSA_PARALLEL_LOOP");
    assert_eq!(at(text, b.span), "CALL BUILTIN_CSA_PARALLEL_LOOP()");
}

#[test]
fn loop_facts() {
    let text = source("06_named_exit_cycle");
    let lf = lower_text(text);
    let f = func(&lf, "s");
    let outer = &f.source_loops[0];
    assert!(at(text, outer.span).starts_with("outer: do i = 1, n"));
    assert!(at(text, outer.span).ends_with("end do outer"));
    assert_eq!(at(text, outer.keyword_span), "do");
    // the header's branch is anchored at the DO statement
    assert_eq!(
        f.block(outer.header).term.span.map(|s| at(text, s)),
        Some("do i = 1, n")
    );
    assert_eq!(
        f.block(outer.header).origin.map(|s| at(text, s)),
        Some(at(text, outer.span))
    );
    // EXIT/CYCLE terminators carry the statement
    let jumps: Vec<&str> = f
        .blocks
        .iter()
        .filter(|b| b.name == "if.then")
        .filter_map(|b| b.term.span)
        .map(|s| at(text, s))
        .collect();
    assert_eq!(jumps, ["cycle outer", "exit outer", "exit"]);
    // IF branches carry the condition
    let conds: Vec<&str> = f
        .blocks
        .iter()
        .filter(|b| matches!(b.term.kind, TermKind::Branch { .. }) && b.name != "do.cond")
        .filter_map(|b| b.term.span)
        .map(|s| at(text, s))
        .collect();
    assert_eq!(conds, ["a(i, j) < 0", "a(i, j) > 9", "j > i"]);

    // the inner DO of a shared label spans its terminal statement
    let text = source("05_shared_label");
    let lf = lower_text(text);
    let f = func(&lf, "s");
    let inner = &f.source_loops[1];
    assert!(at(text, inner.span).starts_with("do 10 j = 1, n"));
    assert!(at(text, inner.span).ends_with("continue"));
    let label = f.blocks.iter().find(|b| b.name == "label").unwrap();
    assert_eq!(label.origin.map(|s| at(text, s)), Some("10"));

    let text = source("02_do_while");
    let lf = lower_text(text);
    let f = func(&lf, "s");
    let l = &f.source_loops[0];
    assert_eq!(
        f.block(l.header).term.span.map(|s| at(text, s)),
        Some("a(i) > 0 .and. i < n")
    );

    let text = source("18_directives");
    let lf = lower_text(text);
    let f = func(&lf, "s");
    let omp: Vec<Option<&str>> = f
        .source_loops
        .iter()
        .map(|l| l.omp.map(|s| at(text, s)))
        .collect();
    assert_eq!(
        omp,
        [
            Some("!$omp parallel do private(i)"),
            Some("!$OMP DO"),
            None,
            None,
            None
        ]
    );
    let ivdep: Vec<Option<&str>> = f
        .source_loops
        .iter()
        .map(|l| l.ivdep.map(|s| at(text, s)))
        .collect();
    assert_eq!(
        ivdep,
        [None, Some("!DIR$ IVDEP"), Some("!GCC$ ivdep"), None, None]
    );
}

#[test]
fn statement_facts() {
    let text = source("11_return_stop");
    let lf = lower_text(text);
    let f = func(&lf, "s");
    let stops: Vec<(&str, &str)> = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| match &i.kind {
            InstKind::Call(c) => Some((at(text, i.span), at(text, c.name_span))),
            _ => None,
        })
        .collect();
    assert_eq!(stops, [("error stop 'too big'", "stop"), ("stop", "stop")]);
    let ret = f.blocks.iter().find(|b| b.name == "if.then").unwrap();
    assert_eq!(ret.term.span.map(|s| at(text, s)), Some("return"));

    let text = source("08_arith_if");
    let lf = lower_text(text);
    let f = func(&lf, "s");
    assert_eq!(f.blocks[0].term.span.map(|s| at(text, s)), Some("x - 1.0"));
    let gotos: Vec<&str> = f
        .blocks
        .iter()
        .filter(|b| matches!(b.term.kind, TermKind::Goto(_)))
        .filter_map(|b| b.term.span)
        .map(|s| at(text, s))
        .collect();
    assert_eq!(gotos, ["goto 40", "go to 40"]);

    let text = source("14_elem_vs_call");
    let lf = lower_text(text);
    let f = func(&lf, "s");
    let calls: Vec<(&str, &str)> = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| match &i.kind {
            InstKind::Call(c) => Some((at(text, i.span), at(text, c.name_span))),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("f(2.0)", "f"),
            ("g(x)", "g"),
            ("h(b)", "h"),
            ("q(n)", "q"),
            ("call sub(a(n), b(2:3), x + 1, 4)", "sub")
        ]
    );
}

#[test]
fn variable_facts() {
    let text = source("12_var_kinds");
    let lf = lower_text(text);
    let f = func(&lf, "s");
    let v = |name: &str| f.vars.iter().find(|v| v.name == name).unwrap();
    assert_eq!(at(text, v("sv").span), "sv");
    // the type declaration's name is the declaring one, not `save sv2`
    assert_eq!(at(text, v("sv2").span), "sv2");
    assert!(text[..v("sv2").span.start as usize].ends_with("real :: "));
    // module variables point at the module's declaration
    assert!(text[..v("mv").span.start as usize].ends_with("integer :: "));
    let decls: Vec<&str> = f.blocks[0]
        .insts
        .iter()
        .filter_map(|i| match i.kind {
            InstKind::Decl(d) => Some(f.var(d).name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(decls, ["l", "p", "t", "dp", "r8", "ch", "obj", "al"]);

    // a bare SAVE saves implicitly typed names too
    let lf = lower_text("subroutine s()\n  save\n  x = 1\nend\n");
    let f = func(&lf, "s");
    assert_eq!(f.vars[0].kind, VarKind::Saved);
    assert!(f.blocks[0]
        .insts
        .iter()
        .all(|i| !matches!(i.kind, InstKind::Decl(_))));

    // address dependencies of element accesses and dereferences
    let text = "subroutine s(a, idx, n)\n  real a(n)\n  integer idx(n)\n  real, pointer :: p(:)\n  x = a(idx(i) + 1) + p(k)\nend\n";
    let lf = lower_text(text);
    let f = func(&lf, "s");
    let name = |v: &VarId| f.var(*v).name.as_str();
    let reads: Vec<(String, Vec<&str>)> = f.blocks[0]
        .insts
        .iter()
        .filter_map(|i| match &i.kind {
            InstKind::Access(a) if !a.write => Some((
                at(text, i.span).to_string(),
                a.addr_vars.iter().map(name).collect(),
            )),
            _ => None,
        })
        .collect();
    let expected: Vec<(String, Vec<&str>)> = vec![
        ("i".into(), vec![]),
        ("idx(i)".into(), vec!["i"]),
        ("a(idx(i) + 1)".into(), vec!["idx", "i"]),
        ("k".into(), vec![]),
        ("p(k)".into(), vec!["p", "k"]),
    ];
    assert_eq!(reads, expected);
}

#[test]
fn syntax_error_is_isolated() {
    let text = source("20_syntax_error");
    let lf = lower_text(text);
    let names: Vec<&str> = lf.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["bad", "good"]);
    assert!(func(&lf, "bad").syntax_error.is_some());
    let good = func(&lf, "good");
    assert_eq!(good.syntax_error, None);
    assert_eq!(good.builtins.len(), 1);
    assert_eq!(good.source_loops.len(), 1);
    // the dangling `end subroutine` of `bad` is `bad`'s error, not the file's
    assert!(lf.toplevel_errors.is_empty());

    // an unclosed parenthesis swallows the next unit in one ERROR node;
    // each top-level unit is parsed again on its own
    let text = "subroutine broken(a, n)\n  do i = 1, n\n    a(i) = (0.0\n  end do\nend subroutine broken\n\nsubroutine fine(a, n)\n  call builtin_csa_parallel_loop()\n  do i = 1, n\n    a(i) = 1.0\n  end do\nend subroutine fine\n";
    let lf = lower_text(text);
    let names: Vec<&str> = lf.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["broken", "fine"]);
    let broken = func(&lf, "broken");
    assert_eq!(broken.syntax_error.map(|s| at(text, s)), Some("a(i)"));
    let fine = func(&lf, "fine");
    assert_eq!(fine.syntax_error, None);
    assert_eq!(fine.builtins.len(), 1);
    assert_eq!(fine.source_loops.len(), 1);
    assert!(lf.toplevel_errors.is_empty());
    check_invariants(text, &lf);

    // a unit the parser could not close is recovered from the ERROR node
    let text = "subroutine ok()\n  x = 1\nend\nsubroutine broken(a)\n  call builtin_csa_parallel_loop()\n  a(1) = \n";
    let lf = lower_text(text);
    let names: Vec<&str> = lf.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["ok", "broken"]);
    assert_eq!(func(&lf, "ok").syntax_error, None);
    assert!(func(&lf, "broken").syntax_error.is_some());
}

/// Fixed form goes through the normaliser; every span must point into the
/// original text.
#[test]
fn fixed_form_spans_map_to_original() {
    let original = concat!(
        "      SUBROUTINE FIX(A, N)\n",
        "      REAL A(N)\n",
        "C     a comment line\n",
        "      CALL BUILTIN_CSA_SPMD(4,\n",
        "     &                      0)\n",
        "C$OMP PARALLEL DO\n",
        "      DO 10 I = 1, N\n",
        "         A(I) = 0\n",
        "   10 CONTINUE\n",
        "      CALL BUILTIN_CSA_PIPELINE_LOOP(2)\n",
        "CDIR$ IVDEP\n",
        "      DO 20 I = 1, N\n",
        "         A(I) = A(I) +\n",
        "     &          1.0\n",
        "   20 CONTINUE\n",
        "      END\n",
    );
    let norm = csa_grammars::fixed_form::normalize(original);
    let lf = lower(&norm.text, &norm, &every_body());
    assert!(lf.toplevel_errors.is_empty());
    let f = func(&lf, "FIX");
    assert_eq!(f.syntax_error, None);
    let spans: Vec<(&str, &str, Vec<&str>)> = f
        .builtins
        .iter()
        .map(|b| {
            (
                at(original, b.span),
                at(original, b.name_span),
                b.args.iter().map(|a| at(original, a.span)).collect(),
            )
        })
        .collect();
    assert_eq!(
        spans,
        [
            (
                "CALL BUILTIN_CSA_SPMD(4,\n     &                      0)",
                "BUILTIN_CSA_SPMD",
                vec!["4", "0"]
            ),
            (
                "CALL BUILTIN_CSA_PIPELINE_LOOP(2)",
                "BUILTIN_CSA_PIPELINE_LOOP",
                vec!["2"]
            ),
        ]
    );
    assert_eq!(f.builtins[0].args[0].value, ArgValue::Int(4));
    assert_eq!(f.source_loops.len(), 2);
    let l0 = &f.source_loops[0];
    let l1 = &f.source_loops[1];
    assert_eq!(at(original, l0.keyword_span), "DO");
    assert_eq!(l0.omp.map(|s| at(original, s)), Some("C$OMP PARALLEL DO"));
    assert_eq!(l1.ivdep.map(|s| at(original, s)), Some("CDIR$ IVDEP"));
    assert!(at(original, l1.span).starts_with("DO 20 I = 1, N"));
    assert!(at(original, l1.span).ends_with("CONTINUE"));
    // an access after the continuation line
    let last_write = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter(|i| matches!(&i.kind, InstKind::Access(a) if a.write))
        .map(|i| at(original, i.span))
        .next_back();
    assert_eq!(last_write, Some("I"));
    let labels: Vec<&str> = f
        .blocks
        .iter()
        .filter(|b| b.name == "label")
        .filter_map(|b| b.origin)
        .map(|s| at(original, s))
        .collect();
    assert_eq!(labels, ["10", "20"]);
    check_invariants(original, &lf);
}

/// Structural invariants of any lowering: ids in range, spans inside the
/// text, builtins in the block they name.
fn check_invariants(text: &str, lf: &LoweredFile) {
    let len = text.len() as u32;
    let span_ok = |s: crate::source::Span| s.start <= s.end && s.end <= len;
    for s in &lf.toplevel_errors {
        assert!(span_ok(*s));
    }
    for f in &lf.functions {
        let nb = f.blocks.len();
        let nv = f.vars.len();
        assert!(span_ok(f.span) && span_ok(f.name_span));
        if let Some(e) = f.syntax_error {
            assert!(span_ok(e));
        }
        for v in &f.vars {
            assert!(span_ok(v.span));
        }
        for b in &f.blocks {
            for s in b.term.kind.successors() {
                assert!(s.index() < nb);
            }
            if let Some(s) = b.term.span {
                assert!(span_ok(s));
            }
            for i in &b.insts {
                assert!(span_ok(i.span));
                match &i.kind {
                    InstKind::Access(a) => {
                        if let AccessTarget::Var(v) | AccessTarget::Deref { ptr: Some(v) } =
                            a.target
                        {
                            assert!(v.index() < nv);
                        }
                        assert!(a.addr_vars.iter().all(|v| v.index() < nv));
                        check_access_exprs(f, a);
                    }
                    InstKind::Call(c) => {
                        assert!(span_ok(c.name_span));
                        assert!(c.escapes.iter().all(|v| v.index() < nv));
                    }
                    InstKind::Decl(v) => assert!(v.index() < nv),
                    InstKind::Builtin(id) => assert!(id.index() < f.builtins.len()),
                    InstKind::Asm | InstKind::Prefetch => {}
                }
            }
        }
        for (i, b) in f.builtins.iter().enumerate() {
            assert!(span_ok(b.span) && span_ok(b.name_span));
            assert!(b.block.index() < nb);
            assert!(f
                .block(b.block)
                .insts
                .iter()
                .any(|inst| matches!(inst.kind, InstKind::Builtin(id) if id.index() == i)));
            assert!(b.result.is_none_or(|v| v.index() < nv));
        }
        check_exprs(f);
        for l in &f.source_loops {
            if let Some(c) = &l.control {
                assert!(c.var.index() < nv);
                for e in [c.init, c.limit, c.step] {
                    assert!(e.index() < f.exprs.len());
                }
            }
            assert!(l.header.index() < nb);
            assert!(l.body_entry.is_none_or(|b| b.index() < nb));
            assert!(span_ok(l.span) && span_ok(l.keyword_span));
        }
    }
}

/// Expressions name earlier expressions, and reads name read accesses.
fn check_exprs(f: &Function) {
    for (i, e) in f.exprs.iter().enumerate() {
        match e {
            Expr::Bin(_, a, b) => assert!(a.index() < i && b.index() < i),
            Expr::Neg(a) => assert!(a.index() < i),
            Expr::Select { cond, then, else_ } => {
                assert!([cond, then, else_].iter().all(|x| x.index() < i))
            }
            Expr::Read(at) => assert!(
                matches!(f.inst_at(*at).map(|x| &x.kind), Some(InstKind::Access(a)) if !a.write),
                "{} reads {at:?}",
                f.name
            ),
            Expr::Int(_) | Expr::AddrOf(_) | Expr::Str(_) | Expr::Unknown => {}
        }
    }
}

/// A selected access describes its selection; only a whole scalar write
/// or a write of one element of a named array has a value.
fn check_access_exprs(f: &Function, a: &Access) {
    assert!(a.index == IndexKind::Whole || !a.path.is_empty());
    if a.rhs.is_some() {
        assert!(a.write);
        let AccessTarget::Var(v) = a.target else {
            panic!("a value stored through a pointer");
        };
        assert!(
            (a.path.is_empty() && a.index == IndexKind::Whole)
                || (f.var(v).ty.is_array && a.path.iter().all(|s| matches!(s, Sel::Index(_))))
        );
    }
    let n = f.exprs.len();
    for s in &a.path {
        match s {
            Sel::Index(e) => assert!(e.index() < n),
            Sel::Range { lo, hi, step } => {
                assert!([lo, hi, step].into_iter().flatten().all(|e| e.index() < n))
            }
            Sel::Field(_) | Sel::Unknown => {}
        }
    }
    assert!(a.rhs.is_none_or(|e| e.index() < n));
}

#[test]
fn cases_keep_invariants() {
    for (_, src, _) in CASES {
        check_invariants(src, &lower_text(src));
    }
}

/// 3,000 nested IF/DO constructs, a 3,000-deep parenthesised expression and
/// a 20,000-term sum: no stack overflow; the deep nests are cut at the depth
/// guard and flagged, the long flat sum is not.
#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 3000;
    let mut s = String::from("subroutine deep(a, n)\n");
    for i in 0..depth {
        s.push_str(if i % 2 == 0 {
            "if (n > 0) then\n"
        } else {
            "do i = 1, n\n"
        });
    }
    s.push_str("a = 1\n");
    for i in (0..depth).rev() {
        s.push_str(if i % 2 == 0 { "end if\n" } else { "end do\n" });
    }
    s.push_str("end subroutine\n");
    let lf = lower_text(&s);
    assert_eq!(lf.functions.len(), 1);
    let f = &lf.functions[0];
    assert!(f.syntax_error.is_some());
    assert!(f.source_loops.len() >= 100);
    check_invariants(&s, &lf);

    let expr = format!(
        "subroutine p(x)\n  x = {}x{}\nend\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let lf = lower_text(&expr);
    check_invariants(&expr, &lf);

    // nested subscripts and components
    for (open, close) in [("a(i, ", ")"), ("t(", ")%c"), ("mod(", ", k)")] {
        let sub = format!(
            "subroutine u(a, t)\n  real a(3, 3)\n  x = {}i{}\nend\n",
            open.repeat(depth),
            close.repeat(depth)
        );
        let lf = lower_text(&sub);
        check_invariants(&sub, &lf);
    }

    // nested inquiry intrinsics recurse without evaluating values
    let inquiry = format!(
        "subroutine r(a)\n  real a(3)\n  k = {}a{}\nend\n",
        "size(".repeat(depth),
        ")".repeat(depth)
    );
    let lf = lower_text(&inquiry);
    check_invariants(&inquiry, &lf);

    let terms: Vec<String> = (0..20_000).map(|i| format!("a({})", i % 7 + 1)).collect();
    let sum = format!(
        "subroutine q(a, x)\n  real a(7)\n  x = {}\nend\n",
        terms.join(" + ")
    );
    let lf = lower_text(&sum);
    assert_eq!(lf.functions.len(), 1);
    assert_eq!(lf.functions[0].syntax_error, None);
    let reads = lf.functions[0].blocks[0]
        .insts
        .iter()
        .filter(|i| matches!(&i.kind, InstKind::Access(a) if !a.write))
        .count();
    assert_eq!(reads, 20_000);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// All case sources, one after the other: the seed for mutations.
    fn corpus() -> String {
        CASES.iter().map(|c| c.1).collect::<Vec<_>>().join("")
    }

    const TOKENS: &[&str] = &[
        "do ",
        "end do",
        "enddo",
        "if (",
        ") then",
        "else",
        "end if",
        "10 ",
        "continue",
        "goto 10",
        "exit",
        "cycle",
        "call builtin_csa_spmd(",
        "(",
        ")",
        ",",
        "\n",
        "=",
        "a(i)",
        "::",
        "!$omp do",
        "select case (k)",
        "case (1)",
        "end select",
        "block",
        "end block",
        "subroutine s(",
        "end",
        "contains",
        "&",
        "'",
        "\"",
        "%",
        "=>",
        "#ifdef X\n",
        "#endif\n",
        "\u{e9}",
        "do 10 i = 1, n\n",
        "program p\n",
        "module m\n",
        "function f(x)\n",
        "real, pointer :: p(:)\n",
        "common /c/ x\n",
    ];

    fn char_floor(s: &str, mut i: usize) -> usize {
        i = i.min(s.len());
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
            let lf = lower_text(&text);
            check_invariants(&text, &lf);
        }

        #[test]
        fn fortranish_token_soup_never_panics(
            toks in proptest::collection::vec(0..TOKENS.len(), 0..120)
        ) {
            let text: String = toks.iter().map(|&i| TOKENS[i]).collect();
            let lf = lower_text(&text);
            check_invariants(&text, &lf);
        }

        #[test]
        fn mutated_programs_never_panic(
            edits in proptest::collection::vec((0usize..20_000, 0usize..40, 0..TOKENS.len()), 1..8),
            cut in 0usize..20_000,
        ) {
            let mut text = corpus();
            for (pos, del, tok) in edits {
                let a = char_floor(&text, pos % (text.len() + 1));
                let b = char_floor(&text, a + del);
                text.replace_range(a..b, TOKENS[tok]);
            }
            let lf = lower_text(&text);
            check_invariants(&text, &lf);
            let truncated = &text[..char_floor(&text, cut % (text.len() + 1))];
            let lf = lower_text(truncated);
            check_invariants(truncated, &lf);
        }
    }
}

/// The front end's options in these tests: every body lowered (the tests
/// look at the IR of functions without CSA builtins too).
fn every_body() -> FrontendOptions {
    FrontendOptions {
        every_body: true,
        ..Default::default()
    }
}

/// The pruned copy of a tree (`CopyPlan`) lowers what the whole copy
/// lowers, on every Fortran fixture, the whole file and each top-level
/// unit alone (`only`), with and without outlines; and it is enough (the
/// whole copy is never needed).
#[test]
fn pruned_copy_lowers_like_the_whole_copy() {
    use csa_grammars::SourceKind;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/fortran");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    paths.sort();
    let mut checked = 0;
    let mut pruned_nodes = 0;
    let mut skeletons = 0;
    for path in paths {
        let Some(kind) = csa_grammars::detect(&path) else {
            continue;
        };
        let raw = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let pre = csa_grammars::preproc::preprocess(&raw, &[], true);
        let norm = (kind == SourceKind::FortranFixed)
            .then(|| csa_grammars::fixed_form::normalize(&pre.text));
        let text = norm.as_ref().map_or(pre.text.as_str(), |n| n.text.as_str());
        let map: &dyn PosMap = match &norm {
            Some(n) => n,
            None => &Identity,
        };
        let mut p = tree_sitter::Parser::new();
        p.set_language(&csa_grammars::fortran_language()).unwrap();
        let tree = p.parse(text, None).unwrap();
        if tree.root_node().has_error() {
            continue;
        }
        let mut onlys = vec![None];
        let mut c = tree.root_node().walk();
        for n in tree.root_node().children(&mut c) {
            onlys.push(Some(Span::new(n.start_byte(), n.end_byte())));
        }
        for opts in [FrontendOptions::default(), every_body()] {
            for only in &onlys {
                let what = format!("{} {only:?} {}", path.display(), opts.every_body);
                let whole = FlatTree::new(tree.root_node());
                let calls = crate::frontend::relevance::FortranCalls::scan(text);
                let want = lower_flat(text, &[whole], map, *only, &opts, None, &calls)
                    .expect("a whole copy lowers");
                let got = lower_pruned(text, &tree, None, map, *only, &opts, &calls)
                    .unwrap_or_else(|| panic!("{what}: the pruned copy is not enough"));
                assert_eq!(got.functions.len(), want.functions.len(), "{what}");
                assert_eq!(got.toplevel_errors, want.toplevel_errors, "{what}");
                for (g, w) in got.functions.iter().zip(&want.functions) {
                    if g.skeleton {
                        // a skeleton has the whole lowering's control flow
                        skeletons += 1;
                        assert!(!opts.every_body, "{what}");
                        assert_eq!(g.control_flow(), w.control_flow(), "{what}: {}", g.name);
                        assert_eq!(g.name, w.name);
                        assert_eq!(g.syntax_error, w.syntax_error);
                    } else {
                        assert_eq!(format!("{g:?}"), format!("{w:?}"), "{what}");
                    }
                }
                for f in &got.functions {
                    check_exprs(f);
                    for i in f.blocks.iter().flat_map(|b| &b.insts) {
                        if let InstKind::Access(a) = &i.kind {
                            check_access_exprs(f, a);
                        }
                    }
                }
                let mut plan = CopyPlan::new(text, None, *only, !opts.every_body, &calls);
                let pruned = FlatTree::planned(tree.root_node(), |n, d| plan.descend(n, d));
                pruned_nodes += FlatTree::new(tree.root_node()).len() - pruned.len();
            }
        }
        checked += 1;
    }
    assert!(checked > 30, "{checked} fixtures");
    assert!(pruned_nodes > 0);
    assert!(skeletons > 0, "no fixture has a skeleton");
}

// ---------------------------------------------------------------------
// Symbolic expressions: subscripts (`Access::path`), assigned values
// (`Access::rhs`), loop control and declared bounds.

/// An expression as text: reads by what they read (`i`, `idx(i)`), `?` for
/// `Expr::Unknown`, binary operators parenthesised.
fn show(f: &Function, e: ExprId) -> String {
    match f.expr(e) {
        Expr::Int(c) => c.to_string(),
        Expr::Read(at) => match f.inst_at(*at).map(|i| &i.kind) {
            Some(InstKind::Access(a)) if !a.write => show_access(f, a),
            _ => "?read".into(),
        },
        Expr::AddrOf(v) => format!("&{}", f.var(*v).name),
        Expr::Str(s) => format!("{s:?}"),
        Expr::Neg(a) => format!("-{}", show(f, *a)),
        Expr::Select { cond, then, else_ } => format!(
            "({} ? {} : {})",
            show(f, *cond),
            show(f, *then),
            show(f, *else_)
        ),
        Expr::Bin(op, a, b) => {
            let (a, b) = (show(f, *a), show(f, *b));
            let infix = match op {
                BinOp::Add => "+",
                BinOp::Sub => "-",
                BinOp::Mul => "*",
                BinOp::Div => "/",
                BinOp::LogAnd => ".and.",
                BinOp::LogOr => ".or.",
                BinOp::Cmp(Cmp::Lt) => "<",
                BinOp::Cmp(Cmp::Le) => "<=",
                BinOp::Cmp(Cmp::Gt) => ">",
                BinOp::Cmp(Cmp::Ge) => ">=",
                BinOp::Cmp(Cmp::Ne) => "/=",
                BinOp::Eq => "==",
                BinOp::Rem => return format!("mod({a}, {b})"),
                BinOp::Min => return format!("min({a}, {b})"),
                BinOp::Max => return format!("max({a}, {b})"),
                BinOp::BitAnd => return format!("iand({a}, {b})"),
                BinOp::BitOr => return format!("ior({a}, {b})"),
                BinOp::BitXor => return format!("ieor({a}, {b})"),
            };
            format!("({a} {infix} {b})")
        }
        Expr::Unknown => "?".into(),
    }
}

/// What an access touches: its root and its path (`a(i, 1:n:2)`, `p%x`,
/// `ps(i)%c(j)`; `??` for `Sel::Unknown`, `..` for a whole dimension).
fn show_access(f: &Function, a: &Access) -> String {
    let mut s = match a.target {
        AccessTarget::Var(v) => f.var(v).name.clone(),
        AccessTarget::Deref { ptr: Some(p) } => format!("*{}", f.var(p).name),
        AccessTarget::Deref { ptr: None } => "*?".into(),
    };
    let part = |x: &Option<ExprId>| x.map(|e| show(f, e)).unwrap_or_default();
    let mut subs: Vec<String> = Vec::new();
    let flush = |s: &mut String, subs: &mut Vec<String>| {
        if !subs.is_empty() {
            s.push_str(&format!("({})", subs.join(", ")));
            subs.clear();
        }
    };
    for sel in &a.path {
        match sel {
            Sel::Index(e) => subs.push(show(f, *e)),
            Sel::Range {
                lo: None,
                hi: None,
                step: None,
            } => subs.push("..".into()),
            Sel::Range { lo, hi, step } => {
                let mut r = format!("{}:{}", part(lo), part(hi));
                if step.is_some() {
                    r.push_str(&format!(":{}", part(step)));
                }
                subs.push(r);
            }
            Sel::Unknown => subs.push("??".into()),
            Sel::Field(name) => {
                flush(&mut s, &mut subs);
                s.push_str(&format!("%{name}"));
            }
        }
    }
    flush(&mut s, &mut subs);
    s
}

/// Every access of `name` in `text`, in block order: `w a(i)`, `r k`,
/// `w k = (i + 1)` (a whole scalar write shows its `rhs`).
fn accesses(text: &str, name: &str) -> Vec<String> {
    let lf = lower_text(text);
    let f = func(&lf, name);
    let mut out = Vec::new();
    for b in &f.blocks {
        for i in &b.insts {
            if let InstKind::Access(a) = &i.kind {
                let mut s = format!("{} {}", if a.write { "w" } else { "r" }, show_access(f, a));
                if let Some(e) = a.rhs {
                    s.push_str(&format!(" = {}", show(f, e)));
                }
                out.push(s);
            }
        }
    }
    out
}

/// The control of every source loop of `name`: `var = init, limit, step
/// cmp`.
fn controls(text: &str, name: &str) -> Vec<String> {
    let lf = lower_text(text);
    let f = func(&lf, name);
    f.source_loops
        .iter()
        .map(|l| match &l.control {
            Some(c) => format!(
                "{} = {}, {}, {} {:?}{}",
                f.var(c.var).name,
                show(f, c.init),
                show(f, c.limit),
                show(f, c.step),
                c.cmp,
                if c.bounds_once { "" } else { " each" }
            ),
            None => "-".into(),
        })
        .collect()
}

/// The declared dimensions of every array of `name`: `a(1:10, 0:?)`
/// (lower bound and extent, `?` where unknown).
fn dims(text: &str, name: &str) -> Vec<String> {
    let lf = lower_text(text);
    let f = func(&lf, name);
    let opt = |x: Option<i64>| x.map_or("?".to_string(), |x| x.to_string());
    f.vars
        .iter()
        .filter(|v| v.ty.is_array || !v.ty.dims.is_empty())
        .map(|v| {
            let ds: Vec<String> =
                v.ty.dims
                    .iter()
                    .map(|d| format!("{}+{}", opt(d.lower), opt(d.extent)))
                    .collect();
            format!("{}({})", v.name, ds.join(", "))
        })
        .collect()
}

/// Integer expressions: literals and PARAMETERs as constants, scalar and
/// element reads as the read they name, the operators and intrinsics the
/// expressions model; the value a whole scalar is assigned.
#[test]
fn assigned_values() {
    let text = r#"subroutine s(a, idx, n)
  integer, parameter :: m = 4
  integer n, idx(n), k, j
  real a(n, 0:m), x
  k = i + 1
  k = -j * 2 - (n / 3)
  k = mod(i, m) + min(i, j, n) + max(i, 2)
  k = iand(i, 7) + ior(i, j) + ieor(i, 1)
  k = m + 2
  x = 1.5
  k = f(i)
  k = i ** 2
  k = idx(i) + 1
  a(i, k + 1) = a(idx(i), 0)
  l = i < j .and. j >= n .or. .not. (k == 2)
  k = mod(p=m, a=i) + mod(a=i, p=m) + max(a1=i, a2=j)
  k = j
  x = x // 'a'
end
"#;
    let got = accesses(text, "s");
    let want = [
        "r i",
        "w k = (i + 1)",
        "r j",
        "r n",
        "w k = (-(j * 2) - (n / 3))",
        "r i",
        "r i",
        "r j",
        "r n",
        "r i",
        "w k = ((mod(i, 4) + min(min(i, j), n)) + max(i, 2))",
        "r i",
        "r i",
        "r j",
        "r i",
        "w k = ((iand(i, 7) + ior(i, j)) + ieor(i, 1))",
        "w k = 6",
        "w x = ?",
        "w k = ?",
        "r i",
        "w k = ?",
        "r i",
        "r idx(i)",
        "w k = (idx(i) + 1)",
        "r i",
        "r idx(i)",
        "r a(idx(i), 0)",
        "r i",
        "r k",
        "w a(i, (k + 1)) = a(idx(i), 0)",
        "r i",
        "r j",
        "r j",
        "r n",
        "r k",
        "w l = (((i < j) .and. (j >= n)) .or. ?)",
        "r i",
        "r i",
        "r i",
        "r j",
        "w k = ((? + mod(i, 4)) + max(i, j))",
        "r j",
        "w k = j",
        "r x",
        "w x = ?",
    ];
    assert_eq!(got, want);
}

/// Subscripts per dimension in source order, sections as ranges, vector
/// subscripts and coarray selectors unknown, components by name, whole
/// arrays as one full range per dimension.
#[test]
fn access_paths() {
    let text = r#"subroutine t(a, b, v, idx, n)
  type pt
    integer :: x
    real :: c(3)
  end type
  integer n, idx(n)
  real a(10, 0:n), b(n), v(*)
  type(pt) :: p, ps(5)
  real, allocatable :: al(:,:)
  real co[*]
  a = 0
  b = b + 1
  a(1:n:2, :) = 1
  a(:n, 2:) = 2
  b(idx) = 3
  b(idx(1:2)) = 4
  b(idx + 1) = 4
  b(abs(idx(2))) = 4
  p%x = 5
  ps(i)%c(j) = 6
  ps%x = 7
  ps(2:3)%c(1) = 7
  co[2] = 8
  al = 9
  call sub(b, a(1, :), ps(1)%c)
  v(i) = 1
  v(i:) = 1
  K = B(I) + SIZE(A)
end
"#;
    let got = accesses(text, "t");
    let want = [
        "w a(.., ..)",
        "r b(..)",
        "w b(..)",
        "r n",
        "w a(1:n:2, ..)",
        "r n",
        "w a(:n, 2:)",
        "r idx(..)",
        "w b(??)",
        "r idx(1:2)",
        "w b(??)",
        "r idx(..)",
        "w b(??)",
        // an intrinsic's value the expressions do not model
        "r idx(2)",
        "w b(?) = 4",
        "w p%x",
        "r i",
        "r j",
        "w ps(i)%c(j)",
        "w ps(..)%x",
        "w ps(2:3)%c(1)",
        "w co(??)",
        "w al(.., ..)",
        "r i",
        "w v(i) = 1",
        "r i",
        "w v(i:)",
        "r i",
        "r b(i)",
        "w K = (b(i) + ?)",
    ];
    assert_eq!(got, want);
    // paths describe every non-`Whole` access; only whole scalar and
    // array element writes carry a value
    let lf = lower_text(text);
    let f = func(&lf, "t");
    for b in &f.blocks {
        for i in &b.insts {
            if let InstKind::Access(a) = &i.kind {
                assert_eq!(a.index == IndexKind::Whole, a.path.is_empty());
                let element = matches!(a.target, AccessTarget::Var(v) if f.var(v).ty.is_array)
                    && a.path.iter().all(|s| matches!(s, Sel::Index(_)));
                assert_eq!(a.rhs.is_some(), a.write && (a.path.is_empty() || element));
            }
        }
    }
}

/// Associate names, pointer components and pointer assignments.
#[test]
fn access_paths_through_names_and_pointers() {
    let text = r#"subroutine m(a, n)
  type node
    real, pointer :: p(:)
    real :: v(2, 3)
    type(node), pointer :: next
  end type
  integer n
  real a(n, n)
  type(node) :: t, ts(4)
  real, target :: x(3)
  real, pointer :: q(:, :)
  associate (y => a, z => a(1, :), w => t%v)
    y(i, 1) = 0
    z(j) = 1
    w(1, 2) = 2
    w = 3
  end associate
  t%p => x
  ts(k)%p => x
  t%p(i) = 4
  t%next%v(1, 1) = 5
  t%v = 7
  q(i, 2) = 8
  q = 9
end
"#;
    let got = accesses(text, "m");
    let want = [
        "r i",
        "w a(i, 1) = 0",
        "r j",
        "w a(1, ??)",
        "w t%v(1, 2)",
        "w t%v(.., ..)",
        "w t%p",
        "r k",
        "w ts(k)%p",
        "r i",
        "w *?(i)",
        "w *?%v(1, 1)",
        "w t%v(.., ..)",
        "r i",
        "w *q(i, 2)",
        "w *q(.., ..)",
    ];
    assert_eq!(got, want);
}

/// Counted DO: the preheader writes the first value, the latch adds the
/// step (as evaluated in the preheader) to the latch's read of the
/// variable; the loop's control as written.
#[test]
fn do_loop_control() {
    let text = r#"subroutine d(a, n, s)
  integer n, s
  integer, parameter :: m = -2
  real a(n, n)
  do i = 1, n
    a(i, 1) = 0
  end do
  do j = n, 1, -1
  end do
  do k = 2, n + 1, s
  end do
  do 10 k = n, 1, m
10 continue
  do concurrent (i = 1:n, j = 1:n:2)
    a(i, j) = 0
  end do
  do
    exit
  end do
  do while (n > 0)
  end do
  do 20 x = 1, 2
20 continue
end
"#;
    let got = accesses(text, "d");
    let want = [
        "r n",
        "w i = 1",
        "r i",
        "w a(i, 1) = 0",
        "r i",
        "w i = (i + 1)",
        "r n",
        "w j = n",
        "r j",
        "w j = (j + -1)",
        "r n",
        "r s",
        "w k = 2",
        "r k",
        "w k = (k + s)",
        "r n",
        "w k = n",
        "r k",
        "w k = (k + -2)",
        "r n",
        "r n",
        "w i = 1",
        "w j = 1",
        "r i",
        "w i = (i + 1)",
        "r i",
        "r j",
        "w a(i, j) = 0",
        "r j",
        "w j = (j + 2)",
        "r n",
        "w x = 1",
        "r x",
        "w x = (x + 1)",
    ];
    assert_eq!(got, want);
    let got = controls(text, "d");
    let want = [
        "i = 1, n, 1 Le",
        "j = n, 1, -1 Ge",
        // a step that is not a constant counts as positive
        "k = 2, (n + 1), s Le",
        "k = n, 1, -2 Ge",
        // DO CONCURRENT: the first index
        "i = 1, n, 1 Le",
        "-",
        "-",
        "x = 1, 2, 1 Le",
    ];
    assert_eq!(got, want);
    // the latch's value reads the variable in the latch
    let lf = lower_text(text);
    let f = func(&lf, "d");
    for b in f.blocks.iter().filter(|b| b.name == "do.inc") {
        let Some(Inst {
            kind: InstKind::Access(w),
            ..
        }) = b.insts.last()
        else {
            panic!("no latch write");
        };
        let Some(Expr::Bin(BinOp::Add, cur, _)) = w.rhs.map(|e| f.expr(e)) else {
            panic!("latch value {:?}", w.rhs);
        };
        let Expr::Read(at) = f.expr(*cur) else {
            panic!("latch read");
        };
        assert_eq!(f.block(at.block).name, "do.inc");
    }
}

/// Declared bounds: lower bound and extent per dimension, where they are
/// compile-time constants.
#[test]
fn declared_bounds() {
    let text = r#"subroutine e(a, b, c, d, n)
  integer, parameter :: m = 5
  integer n
  real a(10, 0:m), b(n, *), c(:), d(-2:2)
  dimension e(m, 3)
  common /blk/ f(4, 2:3)
  real, allocatable :: g(:)
  real, pointer :: gp(:, :)
  real h
  dimension h(m+1)
  real q(0:*), r(2:), s(n:m)
  character(len=4) :: str(3)
  type t
    integer x
  end type
  type(t) :: tt(2:m)
  integer z(m)
  parameter (z = 1)
  real sc
  real, dimension(0:m, 2) :: w
  real ar(..)
  integer nn
  parameter (nn = 3)
  real pp(nn, -nn:nn)
end
"#;
    let got = dims(text, "e");
    let want = [
        "a(1+10, 0+6)",
        "b(1+?, 1+?)",
        "c(1+?)",
        "d(-2+5)",
        "e(1+5, 1+3)",
        "f(1+4, 2+2)",
        "g(?+?)",
        "gp(?+?, ?+?)",
        "h(1+6)",
        "q(0+?)",
        "r(2+?)",
        "s(?+?)",
        "str(1+3)",
        "tt(2+4)",
        "z(1+5)",
        "w(0+6, 1+2)",
        "ar()",
        "pp(1+3, -3+7)",
    ];
    assert_eq!(got, want);
}

/// Implicitly typed locals get their `Decl` at the top of the entry block
/// when first seen: the reads made before still name their instruction.
#[test]
fn reads_name_their_instruction() {
    let text = r#"subroutine r(a, n)
  real a(n)
  k = n
  j = k + 1
  a(j) = a(k)
  m = j * 2
end
"#;
    assert_eq!(
        accesses(text, "r"),
        [
            "r n",
            "w k = n",
            "r k",
            "w j = (k + 1)",
            "r k",
            "r a(k)",
            "r j",
            "w a(j) = a(k)",
            "r j",
            "w m = (j * 2)",
        ]
    );
    check_invariants(text, &lower_text(text));
}

#[test]
fn character_entity_lengths_are_masked_in_place() {
    use super::{mask_char_lengths, repair_for_parser};
    let t = "      character s*(n), t(5)*(n + 1), u*(*), w*10\n      CHARACTER*(N) v, x*(2*n) &\n     &  , y*(n) ! z*(n)\n  character :: c*(k) = 'a*(b)', d*(k)\n  x = a*(b+c)\n  character*(n) plain\n";
    let m = mask_char_lengths(t).expect("masked");
    assert_eq!(m.len(), t.len());
    assert_eq!(
        m,
        "      character s*(*), t(5)*(*)    , u*(*), w*10\n      CHARACTER*(N) v, x*(*)   &\n     &  , y*(*) ! z*(n)\n  character :: c*(*) = 'a*(b)', d*(*)\n  x = a*(b+c)\n  character*(n) plain\n"
    );
    assert_eq!(mask_char_lengths("x = s*(n)\ncharacter*(n) a\n"), None);
    // an unclosed length is left alone; nothing panics on odd text
    for odd in ["character a*(", "character a*", "character a*(n", "character 'x", "character a(1*(2"] {
        assert_eq!(mask_char_lengths(odd), None, "{odd}");
    }
    // both repairs at once
    let r = repair_for_parser("      class = 1\n      character s*(n)\n").expect("repaired");
    assert_eq!(r, "      qqqqq = 1\n      character s*(*)\n");
}

#[test]
fn keyword_variables_are_masked_in_place() {
    use super::{is_include_fragment, mask_keyword_variables};
    let t = "      class = 'U'\n  x = 1; CLASS(2) = 3 ! class = 4\n  if (a == b) c = 1\n  integer :: k = 2\n  class default\n  use = 1\n  goto = 2\n  common == 3\n";
    let m = mask_keyword_variables(t).expect("masked");
    assert_eq!(m.len(), t.len());
    assert_eq!(
        m,
        "      qqqqq = 'U'\n  x = 1; qqqqq(2) = 3 ! class = 4\n  if (a == b) c = 1\n  integer :: k = 2\n  class default\n  qqq = 1\n  qqqq = 2\n  common == 3\n"
    );
    assert_eq!(mask_keyword_variables("x = class\n"), None);
    // INCLUDE files: code without a program unit
    assert!(is_include_fragment(
        "! c\n      integer n\n      common /b/ n\n"
    ));
    assert!(is_include_fragment(
        "c comment\n      do i = 1, n\n      end do\n"
    ));
    assert!(!is_include_fragment("subroutine s\nend\n"));
    assert!(!is_include_fragment("      x = 1\n      end\n"));
    assert!(!is_include_fragment("integer function f()\n"));
    assert!(!is_include_fragment("! only comments\n\n"));
}

/// The scans before parsing answer what their first, plainer versions
/// answered (line by line, byte by byte), on random statement soup.
mod text_scans {
    use super::super::{after_balanced, overlong_lines, MAX_FREE_LINE};
    use crate::source::Span;
    use proptest::prelude::*;

    fn overlong_reference(text: &str) -> Vec<Span> {
        let mut out = Vec::new();
        let mut start = 0;
        for line in text.split_inclusive('\n') {
            let content = line.trim_end_matches(['\n', '\r']);
            if content.len() > MAX_FREE_LINE {
                out.push(Span::new(start, start + content.len()));
            }
            start += line.len();
        }
        out
    }

    fn assigns(rest: &[u8]) -> bool {
        let mut i = 0;
        while i < rest.len() && rest[i].is_ascii_whitespace() {
            i += 1;
        }
        if rest.get(i) == Some(&b'(') {
            i = after_balanced(rest, i, &b'(', &b')');
            while i < rest.len() && rest[i].is_ascii_whitespace() {
                i += 1;
            }
        }
        rest.get(i) == Some(&b'=') && !matches!(rest.get(i + 1), Some(b'=') | Some(b'>'))
    }

    fn mask_reference(text: &str) -> Option<String> {
        let bytes = text.as_bytes();
        let mut out: Option<Vec<u8>> = None;
        let mut line_start = 0;
        while line_start < bytes.len() {
            let line_end = bytes[line_start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |k| line_start + k);
            let mut k = line_start;
            let mut at_start = true;
            while k < line_end {
                let b = bytes[k];
                if b == b'!' || b == b'\'' || b == b'"' {
                    break;
                }
                if b == b';' {
                    at_start = true;
                    k += 1;
                    continue;
                }
                if b.is_ascii_alphabetic() && at_start {
                    let w_end = bytes[k..line_end]
                        .iter()
                        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                        .map_or(line_end, |e| k + e);
                    let word = &text[k..w_end];
                    if super::super::KEYWORD_VARIABLES
                        .iter()
                        .any(|kw| kw.eq_ignore_ascii_case(word))
                        && assigns(&bytes[w_end..line_end])
                    {
                        let o = out.get_or_insert_with(|| bytes.to_vec());
                        for c in &mut o[k..w_end] {
                            *c = b'q';
                        }
                    }
                    at_start = false;
                    k = w_end;
                    continue;
                }
                if !b.is_ascii_whitespace() && !b.is_ascii_digit() {
                    at_start = false;
                }
                k += 1;
            }
            line_start = line_end + 1;
        }
        out.and_then(|o| String::from_utf8(o).ok())
    }

    fn soup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("class".to_string()),
            Just("CLASS".to_string()),
            Just("use".to_string()),
            Just("goto".to_string()),
            Just(" = ".to_string()),
            Just("==".to_string()),
            Just("(2)".to_string()),
            Just(";".to_string()),
            Just("!".to_string()),
            Just("'".to_string()),
            Just("\"".to_string()),
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just("\r".to_string()),
            Just("10 ".to_string()),
            Just("é".to_string()),
            Just("x".repeat(MAX_FREE_LINE - 2)),
            "[a-z0-9 ();=!'\"\n\r_]{0,8}",
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        #[test]
        fn scans_answer_as_before(text in soup()) {
            prop_assert_eq!(overlong_lines(&text), overlong_reference(&text));
            prop_assert_eq!(super::super::mask_keyword_variables(&text), mask_reference(&text));
        }

        /// The one pass of `repair_for_parser` gives what its three
        /// maskings give made one after another, each on the text the
        /// one before made.
        #[test]
        fn repairs_in_one_pass_are_the_three_in_turn(text in repair_soup()) {
            use super::super::{mask_char_lengths, mask_io_list_commas, repair_for_parser};
            let one = mask_keyword_variables_or(&text);
            let two = mask_char_lengths(&one).unwrap_or(one);
            let three = mask_io_list_commas(&two).unwrap_or(two);
            let want = (three != text).then_some(three);
            prop_assert_eq!(repair_for_parser(&text), want);
        }
    }

    fn mask_keyword_variables_or(text: &str) -> String {
        super::super::mask_keyword_variables(text).unwrap_or_else(|| text.to_string())
    }

    /// Lines of the statements the three maskings look at, mixed.
    fn repair_soup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("class".to_string()),
            Just("use".to_string()),
            Just("character".to_string()),
            Just("CHARACTER".to_string()),
            Just("read".to_string()),
            Just("WRITE".to_string()),
            Just(" s*(n)".to_string()),
            Just("*(*)".to_string()),
            Just("(5,*)".to_string()),
            Just("(u, '(a, \")\")')".to_string()),
            Just(", ".to_string()),
            Just(" = ".to_string()),
            Just("(2)".to_string()),
            Just(";".to_string()),
            Just(" &".to_string()),
            Just("!".to_string()),
            Just("'".to_string()),
            Just("\n".to_string()),
            Just("10 ".to_string()),
            Just("é".to_string()),
            "[a-z0-9 (),;=!&*'\"\n_]{0,8}",
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }
}

/// `scope::int_literal` against its first version (which lower-cased a
/// copy of every literal).
mod int_literals {
    use proptest::prelude::*;

    fn first_version(text: &str) -> Option<i64> {
        let t = text.trim();
        let lower = t.to_ascii_lowercase();
        for (prefix, radix) in [("z", 16), ("x", 16), ("o", 8), ("b", 2)] {
            if let Some(rest) = lower.strip_prefix(prefix) {
                let body = rest.trim_matches(|c| c == '\'' || c == '"');
                if body.len() + 2 == rest.len() && !body.is_empty() {
                    return i64::from_str_radix(body, radix).ok();
                }
            }
        }
        let digits = match lower.find('_') {
            Some(i) => &lower[..i],
            None => &lower[..],
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse::<i64>().ok()
    }

    #[test]
    fn examples() {
        for t in [
            "42", " 7 ", "4_8", "4_ik", "z'ff'", "Z\"FF\"", "b'101'", "O'17'", "x'-1'", "1.0d0",
            "1e5", "", "_", "z''", "z'f", "99999999999999999999", "\u{e9}1", "B'2'",
        ] {
            assert_eq!(super::scope::int_literal(t), first_version(t), "{t:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn as_the_first_version(t in "[ zZxXoObB'\"_0-9a-fA-F.+\\-dDeE\u{e9}]{0,12}") {
            prop_assert_eq!(super::scope::int_literal(&t), first_version(&t));
        }
    }
}

#[test]
fn legacy_io_list_commas_are_blanked_in_place() {
    use super::{mask_io_list_commas, repair_for_parser};
    let t = "      READ(u, REC=1), x\n 10   write (6, '(a,\")\")') , y\n      read(i) = 1\n\
             x = f(1), 2\n      WRITE(6,*) a, b\n      IF (c) READ(5,*), z\n      read(5,*)\n";
    let m = mask_io_list_commas(t).expect("masked");
    assert_eq!(m.len(), t.len());
    assert!(m.starts_with("      READ(u, REC=1)  x\n"), "{m}");
    assert!(m.contains("write (6, '(a,\")\")')   y"), "{m}");
    // not a comma after the control list, or not a statement's start
    for kept in ["read(i) = 1", "x = f(1), 2", "WRITE(6,*) a, b", "IF (c) READ(5,*), z"] {
        assert!(m.contains(kept), "{kept}: {m}");
    }
    assert_eq!(mask_io_list_commas("      write(6,*) a\n      read(5,*\n"), None);
    // with the other repairs
    let r = repair_for_parser("      character s*(n)\n      write(6,*), s\n").expect("repaired");
    assert_eq!(r, "      character s*(*)\n      write(6,*)  s\n");
}
