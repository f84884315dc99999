//! Language detection by file extension, and the names of the `--language`
//! flag.
//!
//! Extensions follow SEMANTICS.md §1. Case matters where compilers give it a
//! meaning (`.f` and `.F` are both fixed form; `.F` only asks for the
//! preprocessor, which csa-lint never runs anyway), so only the spellings
//! listed below are accepted.

use std::path::Path;

/// What kind of source a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// C (`.c`, `.h`).
    C,
    /// Free-form Fortran (`.f90`, `.F90`, `.f95`, ...).
    FortranFree,
    /// Fixed-form Fortran (`.f`, `.F`, `.for`, `.f77`, ...): normalise with
    /// [`crate::fixed_form::normalize`] before parsing.
    FortranFixed,
}

impl SourceKind {
    /// Every kind, in a stable order.
    pub const ALL: [SourceKind; 3] = [
        SourceKind::C,
        SourceKind::FortranFree,
        SourceKind::FortranFixed,
    ];

    /// The kind named by a `--language` value: `c`, `fortran` or
    /// `fortran-free` (free form), `fortran-fixed`. ASCII case is ignored.
    pub fn from_name(name: &str) -> Option<SourceKind> {
        let name = name.trim();
        if name.eq_ignore_ascii_case("c") {
            Some(SourceKind::C)
        } else if name.eq_ignore_ascii_case("fortran") || name.eq_ignore_ascii_case("fortran-free")
        {
            Some(SourceKind::FortranFree)
        } else if name.eq_ignore_ascii_case("fortran-fixed") {
            Some(SourceKind::FortranFixed)
        } else {
            None
        }
    }

    /// The canonical `--language` name; [`SourceKind::from_name`] accepts it.
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::C => "c",
            SourceKind::FortranFree => "fortran",
            SourceKind::FortranFixed => "fortran-fixed",
        }
    }

    /// True for both Fortran source forms.
    pub fn is_fortran(self) -> bool {
        matches!(self, SourceKind::FortranFree | SourceKind::FortranFixed)
    }

    /// The tree-sitter language that parses this kind (fixed form only after
    /// normalisation).
    pub fn language(self) -> tree_sitter::Language {
        match self {
            SourceKind::C => crate::c_language(),
            SourceKind::FortranFree | SourceKind::FortranFixed => crate::fortran_language(),
        }
    }
}

impl std::fmt::Display for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The source kind of `path` by its extension, or `None` when csa-lint does
/// not handle it.
pub fn detect(path: &Path) -> Option<SourceKind> {
    let ext = path.extension()?.to_str()?;
    match ext {
        "c" | "h" => Some(SourceKind::C),
        "f90" | "F90" | "f95" | "F95" | "f03" | "F03" | "f08" | "F08" => {
            Some(SourceKind::FortranFree)
        }
        "f" | "F" | "for" | "FOR" | "f77" | "F77" | "ftn" | "FTN" => Some(SourceKind::FortranFixed),
        _ => None,
    }
}

/// The source kind of `path` given its text: a header (`.h`) that holds
/// Fortran (a file INCLUDEd for its COMMON blocks and PARAMETERs, as NPB
/// and many Fortran codes have) is Fortran, in the form
/// [`header_form`] decides; everything else is [`detect`]'s answer.
pub fn detect_with_content(path: &Path, text: &str) -> Option<SourceKind> {
    let kind = detect(path)?;
    if path.extension().and_then(|e| e.to_str()) == Some("h") {
        if let Some(fortran) = fortran_header(text) {
            return Some(fortran);
        }
    }
    if kind == SourceKind::FortranFixed && free_form_text(text) {
        return Some(SourceKind::FortranFree);
    }
    Some(kind)
}

/// Whether the text of a file with a fixed-form extension (`.f`, `.F`) is
/// free form (built with `-ffree-form`, as many codes are), when no line
/// only fixed form has is in it: a comment marked `C`, `c` or `*` in
/// column 1 followed by a blank or a mark (`C     loop`, `c---`, `*`), or a
/// continuation mark in column 6 that is not a letter (`     $`) on a line
/// that does not follow one ending with `&` (after one, the line continues
/// a free-form statement whatever its column 6 holds: `     .and. q )`).
/// Free form is then told by lines whose statement starts in columns 1-5
/// with a letter (`MODULE m` in column 1, `   USE m` in column 4), which
/// fixed form does not allow (columns 1-5 hold a label or nothing): at
/// least three, or more of them than of statements starting in column 7
/// or later (a small file); or by a line ending with `&` followed by one
/// with no continuation mark in column 6 (fixed form would read a new
/// statement there, `+ b*t`). Lines starting with `c`, `C`, `d`, `D`, `!`
/// or `#` and lines with a tab in columns 1-6 are evidence of neither.
fn free_form_text(text: &str) -> bool {
    let mut free = 0usize;
    // statements starting in column 7 or later
    let mut indented = 0usize;
    let mut continued_freely = false;
    let mut previous_amp = false;
    for raw in text.lines().take(5000) {
        let line = raw.trim_end();
        let bytes = line.as_bytes();
        let Some(&first) = bytes.first() else {
            continue;
        };
        let head = &bytes[..bytes.len().min(6)];
        if head.contains(&b'\t') {
            previous_amp = false;
            continue;
        }
        if fixed_comment_line(line) {
            // `C     comment`, `c---`, `*`: fixed form only (free form has
            // no statement starting so)
            return false;
        }
        if matches!(first, b'c' | b'C' | b'd' | b'D' | b'!' | b'#') {
            continue;
        }
        let code = line.split('!').next().unwrap_or(line).trim_end();
        let start = bytes.iter().position(|&b| b != b' ').unwrap_or(bytes.len());
        match column6_mark(line) {
            // a continuation mark (a letter may start an indented free-form
            // statement; `!` a comment)
            Some(mark) if !(mark.is_ascii_alphabetic() || mark == b'!' || previous_amp) => {
                return false;
            }
            None if previous_amp && !code.is_empty() => continued_freely = true,
            _ => {}
        }
        if start < 5 && bytes.get(start).is_some_and(u8::is_ascii_alphabetic) {
            free += 1;
        } else if start >= 6 && !previous_amp && !code.is_empty() {
            indented += 1;
        }
        if !code.is_empty() {
            previous_amp = code.ends_with('&');
        }
    }
    free >= 3 || (free >= 1 && free > indented) || continued_freely
}

/// Whether `line` is a fixed-form comment line: `c`, `C` or `*` in
/// column 1, not the start of a word (`char`, `call`).
fn fixed_comment_line(line: &str) -> bool {
    let b = line.as_bytes();
    matches!(b.first(), Some(b'c' | b'C' | b'*'))
        && b.get(1)
            .is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_')
}

/// Whether `line` is a fixed-form comment line whose `C` or `c` in column
/// 1 starts a word (`CADJ STORE ...`, `CBOP`, `CEH3 ...`: comments that
/// tools read, and editor settings: `CEH3 ;;; mode:fortran ***`): no `;`
/// at its end, no `;` followed by a C comment, no `&` at its end, and a
/// first word that is no
/// Fortran statement's (`COMMON /b/ x` may start a free-form line).
/// `lower`: the line in lower case.
fn worded_comment_line(line: &str, lower: &str) -> bool {
    const STATEMENTS: [&str; 13] = [
        "call",
        "case",
        "character",
        "class",
        "close",
        "codimension",
        "common",
        "complex",
        "contains",
        "continue",
        "critical",
        "cycle",
        "change",
    ];
    let word = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    matches!(line.as_bytes().first(), Some(b'c' | b'C'))
        && !line.trim_end().ends_with(';')
        && !line
            .split_once(';')
            .is_some_and(|(_, after)| after.contains("/*") || after.contains("//"))
        && !line.trim_end().ends_with('&')
        && !STATEMENTS.contains(&word)
}

/// The fixed-form continuation mark of `line`: columns 1-5 blank and
/// column 6 neither blank nor `0`.
fn column6_mark(line: &str) -> Option<u8> {
    let b = line.as_bytes();
    (b.len() > 5 && b[..5].iter().all(|&c| c == b' ') && !matches!(b[5], b' ' | b'0')).then(|| b[5])
}

/// Whether `path` is a header (`.h`) whose text is C++, not C: a line
/// that only C++ has, outside comments and outside `#ifdef __cplusplus`
/// ... `#endif` blocks (C headers that serve C++ too): a template,
/// a namespace, `using namespace`, a class with a body or bases, an access
/// specifier (`public:`), a qualified name (`std::max`), or an `#include`
/// of a standard header without `.h` (`<vector>`, `<cstdio>`). csa-lint
/// reads C and Fortran only: such a header is skipped rather than read as
/// C full of syntax errors.
pub fn cpp_header(path: &Path, text: &str) -> bool {
    if path.extension().and_then(|e| e.to_str()) != Some("h") {
        return false;
    }
    let mut in_comment = false;
    // depth of the `#if`s we are in, and the depth at which a
    // `#ifdef __cplusplus` block started
    let mut depth = 0usize;
    let mut cplusplus_at: Option<usize> = None;
    for raw in text.lines().take(5000) {
        let mut t = raw.trim();
        if in_comment {
            match t.find("*/") {
                Some(i) => {
                    in_comment = false;
                    t = t[i + 2..].trim_start();
                }
                None => continue,
            }
        }
        if let Some(rest) = t.strip_prefix("/*") {
            if !rest.contains("*/") {
                in_comment = true;
            }
            continue;
        }
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        if let Some(d) = t.strip_prefix('#') {
            let d = d.trim_start();
            if d.starts_with("if") {
                depth += 1;
                let guard = d.starts_with("ifdef") && d.contains("__cplusplus")
                    || d.starts_with("if") && d.contains("defined") && d.contains("__cplusplus");
                if guard && cplusplus_at.is_none() {
                    cplusplus_at = Some(depth);
                }
            } else if d.starts_with("endif") {
                if cplusplus_at == Some(depth) {
                    cplusplus_at = None;
                }
                depth = depth.saturating_sub(1);
            } else if d.starts_with("else") || d.starts_with("elif") {
                if cplusplus_at == Some(depth) {
                    // the `#else` of `#ifdef __cplusplus` is C
                    cplusplus_at = None;
                }
            } else if cplusplus_at.is_none() {
                if let Some(name) = d
                    .strip_prefix("include")
                    .map(str::trim)
                    .and_then(|r| r.strip_prefix('<'))
                    .and_then(|r| r.split('>').next())
                {
                    if !name.is_empty()
                        && !name.contains('.')
                        && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                    {
                        return true;
                    }
                }
            }
            continue;
        }
        if cplusplus_at.is_some() {
            continue;
        }
        let word = |w: &str| {
            t.strip_prefix(w)
                .is_some_and(|r| r.starts_with(|c: char| c.is_whitespace() || c == '<'))
        };
        if word("template")
            || word("namespace") && t.contains('{')
            || t.starts_with("using namespace ")
            || qualified_name(t)
            || access_label(t)
            || word("virtual")
            || word("class")
                && (t.ends_with('{')
                    || t.contains(" : public ")
                    || t.contains(" : private ")
                    || class_name_only(t))
        {
            return true;
        }
    }
    false
}

/// `public:`, `private :`, `protected:` alone on a line: a C++ access
/// label (a C label of one of these names would be unusual indeed).
fn access_label(line: &str) -> bool {
    line.strip_suffix(':')
        .map(str::trim_end)
        .is_some_and(|w| matches!(w, "public" | "private" | "protected"))
}

/// `class Name` or `class Name;` alone on a line (a C++ class whose `{`
/// follows, or a forward declaration): C has no `class` keyword, and a
/// type named `class` would need a declarator after the name.
fn class_name_only(line: &str) -> bool {
    let rest = line["class".len()..]
        .trim()
        .trim_end_matches(';')
        .trim_end();
    !rest.is_empty() && rest.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// Whether a line of code holds a C++ qualified name (`RAJA::View`,
/// `std::max`): `name::name` outside string literals and outside C23
/// attributes (`[[gnu::const]]`).
fn qualified_name(line: &str) -> bool {
    let b = line.as_bytes();
    let mut in_string = None;
    let mut attribute = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = in_string {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == q {
                in_string = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' | b'\'' => in_string = Some(c),
            b'[' if b.get(i + 1) == Some(&b'[') => {
                attribute += 1;
                i += 2;
                continue;
            }
            b']' if attribute > 0 && b.get(i + 1) == Some(&b']') => {
                attribute -= 1;
                i += 2;
                continue;
            }
            b':' if attribute == 0
                && b.get(i + 1) == Some(&b':')
                && i > 0
                && (b[i - 1] == b'_' || b[i - 1].is_ascii_alphanumeric())
                && b.get(i + 2)
                    .is_some_and(|&n| n == b'_' || n.is_ascii_alphabetic()) =>
            {
                return true;
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// The Fortran form of a header's text, or `None` when it is (or may be) C:
/// any C evidence (a `;`, a brace, a C comment, `typedef`...) keeps it C;
/// otherwise Fortran needs positive evidence (a `!` comment, a fixed-form
/// comment line, a statement that only Fortran has: `integer`, `double
/// precision`, `parameter (`, `common /`, `implicit`, ...). Preprocessor
/// lines and their continuations are neither (a header of `#define`s and
/// `!` comments is a cpp header for Fortran).
fn fortran_header(text: &str) -> Option<SourceKind> {
    const FORTRAN_STARTS: &[&str] = &[
        "integer",
        "real",
        "double precision",
        "doubleprecision",
        "double complex",
        "logical",
        "character",
        "complex",
        "parameter",
        "common",
        "implicit",
        "dimension",
        "external",
        "intrinsic",
        "data ",
        "save",
        "equivalence",
        "include '",
        "include \"",
    ];
    let mut fortran = false;
    let mut fixed = false;
    let mut trailing_amp = false;
    let mut directive = false;
    // a line only Fortran has (`subroutine s`, `end interface`)
    let mut unit = false;
    // a line ending with `;`
    let mut semicolon = false;
    for raw in text.lines().take(2000) {
        let line = raw.trim_end();
        let t = line.trim_start();
        // a preprocessor line and its continuations
        let continued = directive;
        directive = (continued || t.starts_with('#')) && t.ends_with('\\');
        if continued || t.starts_with('#') {
            continue;
        }
        if t.is_empty() {
            continue;
        }
        let lower = t.to_ascii_lowercase();
        // fixed-form comment lines, not the end of a C comment
        if (fixed_comment_line(line) || worded_comment_line(line, &lower))
            && !lower.starts_with("*/")
        {
            fortran = true;
            fixed = true;
            continue;
        }
        if t.starts_with('!') {
            fortran = true;
            continue;
        }
        if t.starts_with("/*")
            || t.starts_with("//")
            || t.contains('{')
            || t.contains('}')
            || ["typedef", "struct", "extern"].iter().any(|w| {
                // whole words: Fortran's `EXTERNAL :: f`, `STRUCTURE /s/`
                lower.strip_prefix(w).is_some_and(|rest| {
                    !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                })
            })
        {
            return None;
        }
        if fortran_unit_line(&lower) {
            unit = true;
            fortran = true;
        }
        // (a statement may end with `;` in Fortran too: C only without a
        // Fortran unit line anywhere)
        if t.ends_with(';') {
            semicolon = true;
            continue;
        }
        let code = t.split('!').next().unwrap_or(t).trim_end();
        if code.ends_with('&') {
            trailing_amp = true;
        }
        // a continuation mark in column 6
        if line.len() > 6 && column6_mark(line).is_some() {
            fixed = true;
        }
        if FORTRAN_STARTS.iter().any(|k| lower.starts_with(k)) {
            fortran = true;
        }
    }
    if !fortran || (semicolon && !unit) {
        return None;
    }
    Some(if fixed && !trailing_amp {
        SourceKind::FortranFixed
    } else {
        SourceKind::FortranFree
    })
}

/// Whether a line (lower case, without leading blanks) opens or closes a
/// Fortran program unit or interface, or is a statement only Fortran has
/// at the start of one: `subroutine s`, `elemental subroutine s(x)`,
/// `real(8) function f` (a typed function: its type, then `function`),
/// `module m`, `program p`, `interface`, `contains`, `end subroutine`,
/// `end interface`, `use m`, `implicit none`. A C line never starts so
/// (`module = 3;` is not `module` and a name).
fn fortran_unit_line(lower: &str) -> bool {
    let mut words = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty());
    let word_then = |kw: &str| -> bool {
        // `kw` then blanks and a name (a letter), nothing between
        lower
            .strip_prefix(kw)
            .filter(|rest| rest.starts_with([' ', '\t']))
            .is_some_and(|rest| {
                rest.trim_start()
                    .starts_with(|c: char| c.is_ascii_alphabetic())
            })
    };
    let Some(first) = words.next() else {
        return false;
    };
    let second = words.next();
    match first {
        "subroutine" | "function" | "module" | "submodule" | "program" | "use" => word_then(first),
        "interface" | "contains" => lower.trim_end() == first || word_then(first),
        "elemental" | "pure" | "impure" | "recursive" => {
            matches!(
                second,
                Some("subroutine" | "function" | "elemental" | "pure" | "impure" | "recursive")
            )
        }
        "implicit" => second == Some("none"),
        "end" => {
            matches!(
                second,
                Some("subroutine" | "function" | "module" | "submodule" | "program" | "interface")
            ) && lower.split_whitespace().count() <= 3
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpp_headers_are_told_from_c_headers() {
        let h = Path::new("x.h");
        for cpp in [
            "#include <vector>\nint f();\n",
            "template <typename T> T twice(T x) { return 2 * x; }\n",
            "namespace prk {\nint f();\n}\n",
            "class Grid {\n public:\n  int n;\n};\n",
            "static inline auto f() { return std::max(1, 2); }\n",
            "typedef RAJA::View<double, RAJA::Layout<2>> matrix;\n",
            "class Solver;\nint f(void);\n",
            "class Solver\n{\npublic :\n  int n;\n};\n",
            "struct S {\n  virtual ~S();\n};\n",
        ] {
            assert!(cpp_header(h, cpp), "{cpp}");
        }
        for c in [
            // a C header that serves C++ too
            "#ifdef __cplusplus\nextern \"C\" {\n#include <cstdio>\n#endif\nint f(void);\n#ifdef __cplusplus\n}\n#endif\n",
            "/* template <typename T>\n   namespace std::x */\nint class_count;\n",
            "// std::vector in a comment\n#include <stdio.h>\nstruct S { int public_; };\n",
            "[[gnu::const]] int sq(int x);\nconst char *s = \"a::b\";\n",
            "struct class_info { int virtual_pages; };\nint public_count;\n",
            "typedef int class;\nclass c1, c2;\n",
        ] {
            assert!(!cpp_header(h, c), "{c}");
        }
        assert!(!cpp_header(Path::new("x.c"), "#include <vector>\n"));
    }

    #[test]
    fn fortran_headers_are_recognised_by_content() {
        let h = |text: &str| detect_with_content(Path::new("x/blk.h"), text);
        // free form comments and declarations
        assert_eq!(
            h("!---\n! blocking\n!\n      integer, parameter :: nb = 32\n"),
            Some(SourceKind::FortranFree)
        );
        // compatible form: a trailing `&` and a column-6 `&`
        assert_eq!(
            h("      integer a, b\n      parameter (a=0,  &\n     &           b=a+2)\n"),
            Some(SourceKind::FortranFree)
        );
        // fixed form: column-1 comments and a column-6 continuation
        assert_eq!(
            h("c     sizes\n      double precision x(10)\n      common /blk/ x,\n     $       y\n"),
            Some(SourceKind::FortranFixed)
        );
        // comment lines whose `C` starts a word (directives to tools)
        assert_eq!(
            h("CADJ STORE fa = tape, key = k\nCADJ STORE fb = tape, key = k\n"),
            Some(SourceKind::FortranFixed)
        );
        assert_eq!(
            h("      integer nstep\n      common / stepc / nstep\nCXY9 editor settings\n"),
            Some(SourceKind::FortranFixed)
        );
        // an editor's settings in column-1 comments, after the code
        assert_eq!(
            h("      INTEGER NMAX\n      PARAMETER( NMAX = 10 )\n\nCEH3 ;;; Local Variables: ***\nCEH3 ;;; mode:fortran ***\n"),
            Some(SourceKind::FortranFixed)
        );
        // C statements starting with a C word stay C (the second with
        // nothing but a `;` before its comment to tell)
        assert_eq!(h("Count(a);\nClear(); /* reset */\n"), Some(SourceKind::C));
        assert_eq!(h("Clear(); /* reset */\n"), Some(SourceKind::C));
        // (a free-form statement at column 1 is no comment)
        assert_eq!(
            h("COMMON /blk/ a, b  &\n  , c\ninteger :: a, b, c\n"),
            Some(SourceKind::FortranFree)
        );
        // a cpp header for Fortran: directives and `!` comments
        assert_eq!(
            h("!/// \\brief sizes\n#define NI_ 10\n!/// halo\n#  define HALO_ 2\n"),
            Some(SourceKind::FortranFree)
        );
        // program units and interface blocks without a declaration or a
        // comment (the interface headers of IFS-style codes), and a
        // Fortran statement ending with `;`
        assert_eq!(
            h("INTERFACE\nSUBROUTINE SUSRTM\nEND SUBROUTINE SUSRTM\nEND INTERFACE\n"),
            Some(SourceKind::FortranFree)
        );
        assert_eq!(
            h("elemental subroutine s(x)\n  use m, only : r\n  x = x / 2;\nend subroutine s\n"),
            Some(SourceKind::FortranFree)
        );
        // `EXTERNAL` is not C's `extern`
        assert_eq!(
            h("INTERFACE g\n  SUBROUTINE s(f)\n    EXTERNAL :: f\n  END SUBROUTINE\nEND INTERFACE\n"),
            Some(SourceKind::FortranFree)
        );
        assert_eq!(h("extern int n;\nstruct s;\n"), Some(SourceKind::C));
        assert_eq!(
            h("module procs\n  implicit none\ncontains\nend module procs\n"),
            Some(SourceKind::FortranFree)
        );
        // C stays C
        for c in [
            "CUresult\ncuInit(unsigned flags);\nConfig *cfg;\n",
            "module = 3;\nint use_count(int);\n",
            "int interface;\nfunction(a, b);\n",
            "end = begin + 1;\n",
            "#define N 10\n#define M 20\n",
            "#define NOT(x) \\\n  !(x)\n",
            "#define N 10\nint a[N];\n",
            "/* sizes */\nextern double x;\n",
            "const int n = 4;\n",
            "char *name(void);\n",
            "#ifndef A_H\n#define A_H\ntypedef int t;\n#endif\n",
            "",
        ] {
            assert_eq!(h(c), Some(SourceKind::C), "{c}");
        }
        // other extensions by their extension only
        assert_eq!(
            detect_with_content(Path::new("a.c"), "      integer i\n"),
            Some(SourceKind::C)
        );
    }

    #[test]
    fn free_form_text_with_a_fixed_form_extension_is_free_form() {
        let f = |text: &str| detect_with_content(Path::new("x/mg.F"), text);
        let free = "! stencils\nMODULE mg\n   USE utils\n   IMPLICIT NONE\nCONTAINS\n   SUBROUTINE s(a, n)\n      INTEGER :: n\n      REAL :: a(n)\n      a = 0.0 ! clear\n   END SUBROUTINE s\nEND MODULE mg\n";
        assert_eq!(f(free), Some(SourceKind::FortranFree));
        // lowercase `.f` too, and a free-form continuation `&` in column 6
        // after a line ending with `&`
        let amp = "program p\n  integer :: n\n  n = 1 + &\n     & 2\n  print *, n\nend program p\n";
        assert_eq!(
            detect_with_content(Path::new("p.f"), amp),
            Some(SourceKind::FortranFree)
        );
        // after a line ending with `&`, whatever column 6 holds (`.and.`,
        // `)`), or a line with no mark there (fixed form would start a
        // statement `+ b*t`); a small file with more statements in columns
        // 1-5 than in column 7 on
        for free in [
            "module m\ncontains\nlogical function f(p, q)\n  logical :: p, q\n  f = ( p &\n     .and. q )\nend function f\nend module m\n",
            "\n      subroutine s(y, a, b)\n      real y, a, b\n      y = a                                                             &\n       + b\n      end subroutine s\n",
            "! built with -ffree-form\nsubroutine nothing\nend subroutine nothing\n",
        ] {
            assert_eq!(f(free), Some(SourceKind::FortranFree), "{free}");
        }
        // fixed form stays fixed form
        for fixed in [
            // a fixed/free compatible continuation is fixed form's
            "      program p\n      integer n\n      n = 1 +                                                           &\n     &    2\n      end\n",
            // one odd line among indented statements
            "      subroutine s\nx = 1\n      y = 2\n      end\n",
            "c     sizes\n      program p\n      integer n\n      n = 1\n      end\n",
            "      program p\n      integer n\n      n = 1 +\n     $    2\n      end\n",
            "* comment\n      subroutine s\n      end\n",
            // two odd lines are not enough
            "      program p\n  x = 1\n  y = 2\n      end\n",
            // a tab-formatted (DEC) file
            "\tprogram p\n\tx = 1\n\ty = 2\n\tz = 3\n\tend\n",
            "C comment\nMODULE m\n   USE u\n   IMPLICIT NONE\nEND MODULE m\n",
        ] {
            assert_eq!(f(fixed), Some(SourceKind::FortranFixed), "{fixed}");
        }
    }

    fn kind(p: &str) -> Option<SourceKind> {
        detect(Path::new(p))
    }

    #[test]
    fn c_extensions() {
        assert_eq!(kind("a.c"), Some(SourceKind::C));
        assert_eq!(kind("dir/x.y/a.h"), Some(SourceKind::C));
        assert_eq!(kind("a.cc"), None);
        assert_eq!(kind("a.cpp"), None);
        assert_eq!(kind("a.C"), None);
    }

    #[test]
    fn free_form_extensions() {
        for e in ["f90", "F90", "f95", "F95", "f03", "F03", "f08", "F08"] {
            assert_eq!(
                kind(&format!("m.{e}")),
                Some(SourceKind::FortranFree),
                "{e}"
            );
        }
    }

    #[test]
    fn fixed_form_extensions() {
        for e in ["f", "F", "for", "FOR", "f77", "ftn", "F77", "FTN"] {
            assert_eq!(
                kind(&format!("dgemm.{e}")),
                Some(SourceKind::FortranFixed),
                "{e}"
            );
        }
    }

    #[test]
    fn no_extension_or_unknown() {
        assert_eq!(kind("Makefile"), None);
        assert_eq!(kind(".c"), None); // a dotfile named ".c" has no extension
        assert_eq!(kind("a.txt"), None);
        assert_eq!(kind("a.f90.bak"), None);
        assert_eq!(kind(""), None);
    }

    #[test]
    fn names_round_trip() {
        for k in SourceKind::ALL {
            assert_eq!(SourceKind::from_name(k.name()), Some(k));
            assert_eq!(k.to_string(), k.name());
        }
        assert_eq!(
            SourceKind::from_name("fortran-free"),
            Some(SourceKind::FortranFree)
        );
        assert_eq!(
            SourceKind::from_name("Fortran-Fixed"),
            Some(SourceKind::FortranFixed)
        );
        assert_eq!(SourceKind::from_name("C"), Some(SourceKind::C));
        assert_eq!(SourceKind::from_name("cpp"), None);
        assert_eq!(SourceKind::from_name(""), None);
    }

    #[test]
    fn is_fortran() {
        assert!(!SourceKind::C.is_fortran());
        assert!(SourceKind::FortranFree.is_fortran());
        assert!(SourceKind::FortranFixed.is_fortran());
    }
}
