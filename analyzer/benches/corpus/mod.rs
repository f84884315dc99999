//! The benchmark's deterministic corpus of annotated C and free-form
//! Fortran (also used by tests that compare analyses over realistic code).
//! SplitMix64 with fixed seeds: the same bytes on every machine.

use csa_grammars::SourceKind;
use std::fmt::Write as _;

/// SplitMix64: small, seeded, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    /// True with probability `pct`%.
    fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.range(0, xs.len() - 1)]
    }
}

/// Shape parameters of generated C.
#[derive(Clone, Copy)]
struct CShape {
    /// Statements per function body (top level).
    stmts: (usize, usize),
    /// Percentage of functions with CSA builtins.
    csa_pct: u64,
}

struct CGen {
    rng: Rng,
    out: String,
    fn_count: usize,
    region_id: usize,
    shape: CShape,
}

const IDX: [&str; 6] = ["i", "j", "k", "l", "m", "q"];
const CALLEES: [&str; 8] = [
    "update_halo",
    "log_progress",
    "compute_flux",
    "apply_bc",
    "swap_buffers",
    "check_residual",
    "memcpy",
    "printf",
];

impl CGen {
    fn new(seed: u64, shape: CShape) -> CGen {
        CGen {
            rng: Rng(seed),
            out: String::new(),
            fn_count: 0,
            region_id: 1000,
            shape,
        }
    }

    fn line(&mut self, depth: usize, s: &str) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn header(&mut self, file_no: usize) {
        let _ = writeln!(
            self.out,
            "/* Generated kernel file {file_no}: stencils, reductions and\n * \
             region/section annotated loops for the CSA back end. */\n\
             #include <stdio.h>\n#include <string.h>\n#include <math.h>\n\n\
             #define NX 512\n#define NY 256\n#define HALO 2\n\
             #define IDX2(i, j, n) ((i) * (n) + (j))\n\
             #ifdef __CSA__\n#define PAR_LOOP() __builtin_csa_parallel_loop()\n\
             #else\n#define PAR_LOOP()\n#endif\n\n\
             typedef struct {{ double *u; double *v; int nx; int ny; double dt; }} grid_t;\n\
             enum {{ MODE_FAST = 1, MODE_SAFE = 2, MODE_DEBUG = 4 }};\n\
             static double coeffs[NX];\nstatic int iteration_count;\n\
             extern void update_halo(double *, int);\nextern void log_progress(int);\n\
             extern double compute_flux(double, double);\nextern void apply_bc(grid_t *);\n\
             extern void swap_buffers(double **, double **);\nextern int check_residual(double);\n"
        );
    }

    /// A loop marker before a loop, guarded or not.
    fn marker(&mut self, d: usize) {
        let m = match self.rng.range(0, 9) {
            0..=5 => "__builtin_csa_parallel_loop();",
            6 | 7 => "__builtin_csa_spmd(4, 0);",
            8 => "__builtin_csa_pipeline_loop(0);",
            _ => "PAR_LOOP();",
        };
        if self.rng.chance(60) {
            self.line(0, "#ifdef __CSA__");
            self.line(d, m);
            self.line(0, "#endif");
        } else {
            self.line(d, m);
        }
    }

    fn comment(&mut self, d: usize) {
        let c = self.rng.pick(&[
            "// Sweep the interior points; the halo is updated afterwards.",
            "/* Accumulate in a local so the compiler keeps it in a register. */",
            "// NOTE: bounds are checked by the caller.",
            "/* The stencil reads the previous time step only. */",
            "// TODO: fuse with the next sweep once the halo exchange is async.",
        ]);
        self.line(d, c);
    }

    fn loop_header(&mut self, d: usize, v: &str, bound: &str) {
        let h = match self.rng.range(0, 3) {
            0 => format!("for (int {v} = 0; {v} < {bound}; {v}++) {{"),
            1 => format!("for ({v} = 1; {v} < {bound} - 1; ++{v}) {{"),
            2 => format!("for (int {v} = HALO; {v} < {bound} - HALO; {v} += 1) {{"),
            _ => format!("for (int {v} = 0; {v} < {bound}; {v} += 2) {{"),
        };
        self.line(d, &h);
    }

    fn body_stmt(&mut self, d: usize, vars: &[&str]) {
        let i = vars.last().copied().unwrap_or("i");
        let j = if vars.len() >= 2 {
            vars[vars.len() - 2]
        } else {
            "0"
        };
        let s = match self.rng.range(0, 9) {
            0 => format!(
                "a[IDX2({j}, {i}, m)] = 0.25 * (b[IDX2({j}, {i} - 1, m)] + b[IDX2({j}, {i} + 1, m)] + b[IDX2({j}, {i}, m) - m] + b[IDX2({j}, {i}, m) + m]);"
            ),
            1 => format!("sum += a[{i}] * b[{i}];"),
            2 => format!("a[{i}] = b[{i}] * scale + coeffs[{i} % NX];"),
            3 => format!(
                "if (a[{i}] > threshold) {{ a[{i}] = threshold; }} else {{ a[{i}] += 0.5 * b[{i}]; }}"
            ),
            4 => format!("tmp = compute_flux(a[{i}], b[{i}]);\n{}a[{i}] = tmp;", "  ".repeat(d)),
            5 => format!("g->u[{i}] = g->v[{i}] * g->dt;"),
            6 => format!("double t{d} = b[{i}] - b[{j}];\n{}a[{i}] = t{d} * t{d};", "  ".repeat(d)),
            7 => format!("if ({i} % 16 == 0) log_progress({i});"),
            8 => format!("count += (a[{i}] < 0.0) ? 1 : 0;"),
            _ => format!("a[{i}] = fabs(b[{i}]) + sqrt(b[{j}] * b[{j}] + 1.0);"),
        };
        self.line(d, &s);
    }

    /// A loop nest of `depth` loops.
    fn nest(&mut self, d: usize, depth: usize, csa: bool, vars: &mut Vec<&'static str>) {
        let v = IDX[vars.len().min(IDX.len() - 1)];
        if csa && self.rng.chance(55) {
            self.marker(d);
        }
        let bound = self.rng.pick(&["n", "m", "NX", "NY", "g->nx"]);
        self.loop_header(d, v, bound);
        vars.push(v);
        if depth > 1 {
            if self.rng.chance(30) {
                self.body_stmt(d + 1, vars);
            }
            self.nest(d + 1, depth - 1, csa, vars);
            if self.rng.chance(20) {
                self.body_stmt(d + 1, vars);
            }
        } else {
            for _ in 0..self.rng.range(1, 4) {
                self.body_stmt(d + 1, vars);
            }
        }
        vars.pop();
        self.line(d, "}");
    }

    fn region(&mut self, d: usize) {
        self.region_id += 1;
        let id = self.region_id % 999 + 1;
        let guard = self.rng.chance(50);
        if guard {
            self.line(0, "#ifdef __CSA__");
        }
        self.line(
            d,
            &format!("int r{id} = __builtin_csa_parallel_region_entry({id});"),
        );
        self.line(d, "for (int i = 0; i < n; i++) {");
        self.line(
            d + 1,
            &format!("int s{id} = __builtin_csa_parallel_section_entry(r{id});"),
        );
        for _ in 0..self.rng.range(1, 3) {
            self.body_stmt(d + 1, &["i"]);
        }
        self.line(
            d + 1,
            &format!("__builtin_csa_parallel_section_exit(s{id});"),
        );
        self.line(d, "}");
        self.line(d, &format!("__builtin_csa_parallel_region_exit(r{id});"));
        if guard {
            self.line(0, "#endif");
        }
    }

    fn stmt(&mut self, d: usize, csa: bool) {
        match self.rng.range(0, 11) {
            0..=3 => {
                let depth = self.rng.range(1, 3);
                self.nest(d, depth, csa, &mut Vec::new());
            }
            4 if csa => self.region(d),
            5 => {
                self.line(d, "if (n > NX && (mode & MODE_FAST)) {");
                self.line(d + 1, "apply_bc(g);");
                self.line(d + 1, "iteration_count++;");
                self.line(d, "} else if (mode == MODE_DEBUG) {");
                self.line(d + 1, "printf(\"step %d\\n\", iteration_count);");
                self.line(d, "}");
            }
            6 => {
                let c = self.rng.pick(&CALLEES);
                self.line(d, &format!("{c}(a, n);"));
            }
            7 => self.comment(d),
            8 => {
                self.line(d, "while (res > tol && iter < max_iter) {");
                self.line(d + 1, "res = 0.0;");
                self.line(
                    d + 1,
                    "for (int i = 0; i < n; i++) res += fabs(a[i] - b[i]);",
                );
                self.line(d + 1, "iter++;");
                self.line(d, "}");
            }
            9 => {
                self.line(d, "switch (mode) {");
                self.line(d, "case MODE_FAST: scale *= 2.0; break;");
                self.line(d, "case MODE_SAFE: scale = 1.0; break;");
                self.line(d, "default: break;");
                self.line(d, "}");
            }
            _ => {
                self.line(d, "sum = sum * 0.5 + scale;");
                self.line(d, "if (check_residual(sum)) return;");
            }
        }
    }

    fn function(&mut self) {
        self.fn_count += 1;
        let n = self.fn_count;
        let csa = self.rng.chance(self.shape.csa_pct);
        if self.rng.chance(50) {
            self.comment(0);
        }
        let ret = if self.rng.chance(20) { "static " } else { "" };
        self.line(
            0,
            &format!(
                "{ret}void kernel_{n}(double *restrict a, const double *restrict b, grid_t *g, int n, int m, int mode) {{"
            ),
        );
        self.line(1, "int i, j, k, iter = 0, count = 0, max_iter = 100;");
        self.line(
            1,
            "double sum = 0.0, scale = 1.5, tmp, threshold = 1e3, res = 1.0, tol = 1e-6;",
        );
        let (lo, hi) = self.shape.stmts;
        for _ in 0..self.rng.range(lo, hi) {
            self.stmt(1, csa);
        }
        self.line(1, "coeffs[0] = sum + count + tmp + i + j + k;");
        self.line(0, "}");
        self.out.push('\n');
    }
}

/// One C file of about `bytes` bytes.
fn gen_c(seed: u64, file_no: usize, bytes: usize, shape: CShape) -> String {
    let mut g = CGen::new(seed, shape);
    g.header(file_no);
    while g.out.len() < bytes {
        g.function();
    }
    g.out
}

struct FGen {
    rng: Rng,
    out: String,
    units: usize,
    /// Percentage of subroutines with CSA builtins.
    csa_pct: u64,
    /// Whether the subroutine being written gets markers.
    csa: bool,
}

impl FGen {
    fn line(&mut self, depth: usize, s: &str) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn body_stmt(&mut self, d: usize, vars: &[&str]) {
        let i = vars.last().copied().unwrap_or("i");
        let j = if vars.len() >= 2 {
            vars[vars.len() - 2]
        } else {
            "1"
        };
        let s = match self.rng.range(0, 7) {
            0 => format!(
                "a({i}, {j}) = 0.25 * (b({i}-1, {j}) + b({i}+1, {j}) + b({i}, {j}-1) + b({i}, {j}+1))"
            ),
            1 => format!("s = s + a({i}, {j}) * b({i}, {j})"),
            2 => format!("c({i}) = c({i}) * scale + coef(mod({i}, 64) + 1)"),
            3 => format!(
                "if (a({i}, {j}) > thresh) then\n{0}  a({i}, {j}) = thresh\n{0}else\n{0}  a({i}, {j}) = a({i}, {j}) + 0.5 * b({i}, {j})\n{0}end if",
                "  ".repeat(d)
            ),
            4 => format!("call flux(a({i}, {j}), b({i}, {j}), t)"),
            5 => format!("if (c({i}) < 0.0) cycle"),
            6 => format!("t = sqrt(abs(b({i}, {j}))) + exp(-c({i}))"),
            _ => format!("c({i}) = max(c({i}), a({i}, {j}))"),
        };
        self.line(d, &s);
    }

    fn nest(&mut self, d: usize, depth: usize, vars: &mut Vec<&'static str>) {
        let v = ["j", "i", "k"][vars.len().min(2)];
        match self.rng.range(0, 9) {
            0..=4 if self.csa => self.line(d, "call builtin_csa_parallel_loop()"),
            5 if self.csa => self.line(d, "call builtin_csa_spmd(4, 0)"),
            6 => self.line(d, "! plain loop, no marker"),
            _ => {}
        }
        let bound = ["n", "m", "nx"][self.rng.range(0, 2)];
        self.line(d, &format!("do {v} = 2, {bound} - 1"));
        vars.push(v);
        if depth > 1 {
            self.nest(d + 1, depth - 1, vars);
        } else {
            for _ in 0..self.rng.range(1, 4) {
                self.body_stmt(d + 1, vars);
            }
        }
        vars.pop();
        self.line(d, "end do");
    }

    fn stmt(&mut self, d: usize) {
        match self.rng.range(0, 7) {
            0..=3 => {
                let depth = self.rng.range(1, 3);
                self.nest(d, depth, &mut Vec::new());
            }
            4 => {
                self.line(d, "if (mode == 1) then");
                self.line(d + 1, "call apply_bc(a, n, m)");
                self.line(d, "else if (mode == 2) then");
                self.line(d + 1, "s = 0.0");
                self.line(d, "end if");
            }
            5 => {
                self.line(d, "it = 0");
                self.line(d, "do while (res > tol .and. it < 100)");
                self.line(d + 1, "res = res * 0.5");
                self.line(d + 1, "it = it + 1");
                self.line(d, "end do");
            }
            6 => self.line(d, "! Update the halo before the next sweep."),
            _ => self.line(d, "call exchange(a, n, m)"),
        }
    }

    fn subroutine(&mut self, d: usize) {
        self.units += 1;
        let u = self.units;
        // (no draw when every subroutine is annotated: the dense corpus keeps
        // the bytes it had before densities existed)
        self.csa = self.csa_pct >= 100 || self.rng.chance(self.csa_pct);
        self.line(d, &format!("subroutine sweep_{u}(a, b, c, n, m, mode)"));
        if d == 0 {
            self.line(d + 1, "implicit none");
        }
        self.line(d + 1, "integer, intent(in) :: n, m, mode");
        self.line(d + 1, "real, intent(inout) :: a(n, m), c(n)");
        self.line(d + 1, "real, intent(in) :: b(n, m)");
        self.line(d + 1, "integer :: i, j, k, it");
        self.line(
            d + 1,
            "real :: s, t, scale = 1.5, thresh = 1.0e3, res = 1.0, tol = 1.0e-6",
        );
        for _ in 0..self.rng.range(3, 12) {
            self.stmt(d + 1);
        }
        self.line(d, &format!("end subroutine sweep_{u}"));
        self.out.push('\n');
    }

    fn module(&mut self) {
        self.units += 1;
        let u = self.units;
        self.line(0, &format!("module grid_{u}"));
        self.line(1, "implicit none");
        self.line(1, "integer :: nx = 128");
        self.line(1, "real :: coef(64)");
        self.line(0, "contains");
        for _ in 0..self.rng.range(2, 6) {
            self.subroutine(1);
        }
        self.line(0, &format!("end module grid_{u}"));
        self.out.push('\n');
    }
}

/// One free-form Fortran file of about `bytes` bytes.
fn gen_f90(seed: u64, file_no: usize, bytes: usize, csa_pct: u64) -> String {
    let mut g = FGen {
        rng: Rng(seed),
        out: format!("! Generated solver file {file_no}\n"),
        units: 0,
        csa_pct,
        csa: false,
    };
    while g.out.len() < bytes {
        if g.rng.chance(40) {
            g.module();
        } else {
            g.subroutine(0);
        }
    }
    g.out
}

pub struct File {
    pub kind: SourceKind,
    pub text: String,
}

/// How many functions (C) and subroutines (Fortran) of the corpus carry
/// CSA builtins.
#[derive(Clone, Copy)]
pub enum Density {
    /// Half the C functions and every Fortran subroutine: a stress case.
    Dense,
    /// This percentage of the C functions and of the Fortran subroutines.
    Percent(u64),
}

impl Density {
    /// For the benchmark's tables: `dense` or `25% CSA`.
    pub fn label(self) -> String {
        match self {
            Density::Dense => "dense".to_string(),
            Density::Percent(p) => format!("{p}% CSA"),
        }
    }
}

/// The corpus: about `total` bytes, 70% C, 30% free-form Fortran, files
/// of 100 KB to 1 MB. `density` decides which functions carry markers;
/// the files have the same shapes and sizes at every density.
pub fn corpus(total: usize, density: Density) -> Vec<File> {
    let mut rng = Rng(0x5eed);
    let mut files = Vec::new();
    let mut size = 0;
    let (c_pct, f_pct) = match density {
        Density::Dense => (50, 100),
        Density::Percent(p) => (p, p),
    };
    let shape = CShape {
        stmts: (3, 14),
        csa_pct: c_pct,
    };
    while size < total {
        let bytes = rng.range(100_000, 1_000_000);
        let seed = rng.next();
        let file = if rng.chance(70) {
            File {
                kind: SourceKind::C,
                text: gen_c(seed, files.len(), bytes, shape),
            }
        } else {
            File {
                kind: SourceKind::FortranFree,
                text: gen_f90(seed, files.len(), bytes, f_pct),
            }
        };
        size += file.text.len();
        files.push(file);
    }
    files
}

/// One large C file shaped like a real code base's biggest file: 2 MB,
/// many functions, a third of them long, few with CSA builtins.
pub fn large_c() -> File {
    let mut g = CGen::new(
        0x1a7e,
        CShape {
            stmts: (2, 10),
            csa_pct: 25,
        },
    );
    g.header(0);
    while g.out.len() < 2_000_000 {
        g.shape.stmts = if g.rng.chance(30) { (40, 160) } else { (2, 10) };
        g.function();
    }
    File {
        kind: SourceKind::C,
        text: g.out,
    }
}
