//! Repairs of C that tree-sitter-c cannot read but compilers build, made
//! when a file's parse has errors:
//!
//! * Implicit `int` (C89): a function definition with no type before its
//!   name, `main(argc, argv) int argc; char **argv; { ... }` or
//!   `scale(n) { ... }`. Compilers of the period build it (and clang, with
//!   a warning, in C89/gnu89 mode), NPB 3.0's C codes are written that way.
//!   [`implicit_int_in`] looks at the top level for such definitions: at the
//!   start of a declaration (the file's start, after a `;` or a function
//!   body at top level, or after a preprocessor line), an identifier that
//!   is not a keyword, a balanced parameter list, and then the body's `{`,
//!   either at once or after old-style parameter declarations ending in
//!   `;`. `int ` is written before the name; also after storage classes
//!   (`static f(x) {`), and in declarations of variables with a storage
//!   class and no type (`extern count;`).
//! * Old-style definitions returning a pointer (`double *shift(a, n)
//!   double a[]; int n; { ... }`): tree-sitter-c reads the declarator as a
//!   declaration with type parameters and the body as a block outside any
//!   function, often without a syntax error. [`old_style_prototypes`]
//!   writes the parameter list with the declarations' types after its `(`
//!   and blanks the names and the declarations.
//! * A prototype whose parameter list a macro wraps for compilers without
//!   prototypes (`double mean PROTO((const double *, int));`, glibc's
//!   `__P((...))`, zlib's `OF((...))`, HPL's `STDC_ARGS((...))`; the macro
//!   gives its argument or `()`): [`prototype_wrappers`] blanks the macro's
//!   name and its own parentheses, leaving the parameter list. At the top
//!   level only: a type before the name, the macro's parentheses holding
//!   one parenthesised list and nothing else, then `;` or `,`.
//! * A function-like macro standing for a type name or a tag at the top
//!   level (`typedef PICK(double, float) vec_t;`, `struct NAME(s) {`,
//!   `typedef struct NAME(s) h;`): [`macro_type_names`] blanks its
//!   arguments, and its name is read as an unknown type name or tag (what
//!   the macro makes of them is not known).
//! * A macro used as a statement without a `;` (`OMP_FOR()` or `OMP_SIMD`
//!   alone on a line before a loop, expanding to a `_Pragma` or to
//!   statements that end in their own `;`): [`bare_macros_in`] finds, inside
//!   braces, a line that holds only a name or a name and a balanced
//!   argument list, after a line ending in `;`, `{`, `}` or `:` and before
//!   one that starts another statement; or ending a line after the
//!   header of an `if`, `while`, `for` or `switch` or after `else` (`if
//!   (n != 12) ERR_EXIT(E_READ)`). A `;` is written after it: the
//!   front end sees a call (or a name) it knows nothing of, which it
//!   treats as having effects it cannot see, as it treats any unknown call.
//! * A macro used as a statement whose arguments are not expressions
//!   (`OMP_TARGET( teams distribute parallel for )`,
//!   `OMP_PARALLEL_FOR_REDUCE( +:sum )`, expanding to a `_Pragma`): the
//!   arguments are blanked as well; such a macro has no definition the
//!   analysis reads, so its arguments mean nothing to it. A name alone
//!   (`OMP_MASTER`) before a block gets its `;` too.
//! * A macro standing for qualifiers or specifiers (`double * RESTRICT a;`,
//!   `double RESTRICT *a`, `INLINE void f(void)`, `EXPORT int n;`),
//!   defined in a header csa-lint does not read or as `__restrict__`:
//!   [`qualifier_macro`] finds a name that is not a keyword of the
//!   grammar where only a qualifier or a specifier can stand: between a
//!   `*` and the declared name, between a type keyword and a `*`, or
//!   before a type or storage-class keyword at the start of a declaration.
//!   When the file defines it as qualifiers and specifiers only
//!   (`#define RESTRICT __restrict__`, attributes dropped), their standard
//!   spelling is written over it if it fits (`restrict` in `RESTRICT`, the
//!   rest blank); otherwise it is blanked. A blanked `restrict` is one the
//!   analysis does not assume: pointers may alias, as they may for a
//!   compiler that does not know the macro either. A name before a type
//!   name and a declarator at a declaration's start (`STATIC VEC *v`,
//!   `EXTERN T n;`: a declaration has one type) is blanked the same way.
//! * A macro the file or its headers define as qualifiers and specifiers
//!   only (`#define FAR`, `#define ZEXTERN extern`, `#define local
//!   static` in zlib's headers; the headers' macros come in `defines`,
//!   see `analysis::header_macros`): every use in code is rewritten
//!   ([`known_qualifier_macros`]), wherever it stands (`code FAR * FAR
//!   *t`, `} FAR ct_data;`, `(const code FAR *)p`), before the rules
//!   above read the line as the preprocessor leaves it. A storage class
//!   longer than the name (`static` for `local`) is inserted before the
//!   blanked name, as an implicit `int` is (positions map back): a `local`
//!   variable in a function stays static. Qualifiers longer than the name
//!   are blanked, as for an unknown macro (`restrict` is not assumed).
//! * A GNU attribute after a variable's declarator (`float t[64]
//!   __attribute__((aligned(64)));`), which tree-sitter-c reads only
//!   before a declaration: blanked (alignment and `unused` mean nothing to
//!   the analysis; a function's `const`, which does, parses and stays).
//! * Cilk Plus (Intel's compilers, Cilk-era HPC codes): `_Cilk_for` and
//!   `cilk_for` are read as `for`, `_Cilk_spawn` and `cilk_spawn` are
//!   blanked (the call stays). A Cilk loop is analysed as a sequential one:
//!   csa-lint does not check its iterations for races.
//! * C99 complex types, which tree-sitter-c does not know: `_Complex`,
//!   `_Imaginary`, GNU `__complex__`, and `<complex.h>`'s `complex` next to
//!   a floating type (`double complex z`) are blanked ([`complex_specifier`]):
//!   the variable reads as its real type, which changes no subscript, alias
//!   or loop the analysis looks at. So is AltiVec's `vector` before a type
//!   keyword (`vector unsigned int`, POWER code built with `-maltivec`):
//!   the variable reads as one element.
//! * A macro given a type as an argument (`va_arg(ap, VEC **)`,
//!   `NEW_A(n, unsigned int *)`): the `*`s before the `,` or `)` and the
//!   type keywords but the last are blanked (in a call's parentheses only:
//!   a cast's, a `sizeof`'s and a prototype's stay).
//!
//! * A macro standing for an `if` or `while` condition with its
//!   parentheses (`if hypre_IsSet(m) free(m);`, the macro expanding to
//!   `((m)->set)`): C wants a `(` right after the keyword, so a name there
//!   is such a macro. [`paren_less_conditions`] writes `(` before it and `)`
//!   after its arguments; the front end sees a call (or a name) it knows
//!   nothing of, as for any unknown macro.
//! * A macro heading a block as a loop header does (`hypre_ForBoxI(i,
//!   boxes) { ... }`, `FOR_EACH(p, list)` then `{` on the next line, the
//!   arguments possibly over several lines): inside a function, after a
//!   statement's end, `NAME(expressions)` followed by the block's `{`.
//!   No C statement has that shape. [`loop_macros`] writes `while (`
//!   before the name and `)` after the arguments: the front end sees a loop
//!   whose condition is a call it knows nothing of, which may assign what it
//!   is given by name (`frontend::c::library`).
//! * A macro used as a statement after another statement on its line,
//!   without a `;` (`p = MALLOC(n); CHECK_ERROR`): it gets its `;` as a
//!   macro alone on its line does.
//! * A qualifier macro after `static`/`inline`/`extern` (`static inline
//!   UNUSED_FUNC int f(void)`), also when it ends its line and the type and
//!   the declarator follow on the next ([`line_end_qualifiers`]): blanked.
//! * A tagged type as a macro argument (`TAlloc(struct box, n)`): the
//!   `struct`, `union` or `enum` is blanked, the tag reads as a name.
//! * A comment in a directive continued with backslashes (`#pragma omp
//!   target \` then `map(a) /* why */ \`), where tree-sitter-c ends the
//!   directive: blanked ([`continued_directive_comments`]; the compiler
//!   reads it as a space).
//! * A line splice before a CRLF line end (a backslash, then `\r\n`, as
//!   in files written on Windows, inside a string literal continued on the
//!   next line). Compilers read CRLF as a line end, so the backslash joins
//!   the lines; tree-sitter-c takes the backslash and the `\r` for an
//!   escape inside a string literal and
//!   the `\n` after it for the string's unterminated end.
//!   [`crlf_splices`] moves the backslash onto the `\r` (a space where it
//!   was): the splice is then a backslash and `\n`, the string one space
//!   longer, every line end where it was.
//!
//! Rewrites keep every offset (the same length, blanks for what is
//! removed); only insertions move text.
//!
//! The front end parses the repaired text when the original's parse has
//! syntax errors or a block at the top level, and keeps it only when it
//! has fewer of them. Every offset of the repaired
//! text goes back to the source through [`Inserted`], so spans,
//! diagnostics and fixes stay where the user wrote them (inserted text
//! maps to the source position it was inserted at).

/// Where text was inserted: (offset in the parser's text, length),
/// ascending, with the total length inserted before each. Empty for a
/// text parsed as written.
#[derive(Clone, Debug, Default)]
pub(crate) struct Inserted(Vec<(usize, usize, usize)>);

impl Inserted {
    /// A parser offset as a source offset.
    pub(crate) fn to_original(&self, offset: usize) -> usize {
        // insertions wholly before `offset`
        let i = self.0.partition_point(|&(s, n, _)| s + n <= offset);
        let before = self
            .0
            .get(i.wrapping_sub(1))
            .map_or(0, |&(_, n, prior)| prior + n);
        match self.0.get(i) {
            // inside inserted text: where it was inserted
            Some(&(s, _, _)) if s <= offset => s - before,
            _ => offset - before,
        }
    }
}

/// `text` with each `(offset, insertion)` of `at` (source offsets,
/// ascending) inserted, and where the insertions landed.
pub(crate) fn insert(text: &str, at: &[(usize, &str)]) -> (String, Inserted) {
    let extra: usize = at.iter().map(|(_, t)| t.len()).sum();
    let mut out = String::with_capacity(text.len() + extra);
    let mut inserted = Vec::with_capacity(at.len());
    let mut last = 0;
    let mut total = 0;
    for &(p, t) in at {
        let Some(chunk) = text.get(last..p) else {
            continue;
        };
        out.push_str(chunk);
        inserted.push((out.len(), t.len(), total));
        total += t.len();
        out.push_str(t);
        last = p;
    }
    out.push_str(text.get(last..).unwrap_or(""));
    (out, Inserted(inserted))
}

/// Texts at offsets: insertions, or same-length rewrites.
type Edits = Vec<(usize, String)>;

/// Everything [`repairs`] changes in a text: same-length rewrites
/// (offset, replacement), then insertions (offset, text); both ascending
/// source offsets.
#[derive(Debug, Default)]
pub(crate) struct Repairs {
    pub(crate) rewrites: Edits,
    pub(crate) inserts: Edits,
}

impl Repairs {
    pub(crate) fn is_empty(&self) -> bool {
        self.rewrites.is_empty() && self.inserts.is_empty()
    }

    /// The repaired text and where its insertions landed.
    #[cfg(test)]
    pub(crate) fn apply(&self, text: &str) -> (String, Inserted) {
        let (typed, inserted, _) = self.apply_with_edits(text);
        (typed, inserted)
    }

    /// [`Repairs::apply`], and the edits that made the repaired text from
    /// `text`, in the order made, for tree-sitter to reparse incrementally
    /// (`None` when an edit adds or removes a line end: the repairs never
    /// do, and rows are not recomputed for it).
    pub(crate) fn apply_with_edits(
        &self,
        text: &str,
    ) -> (String, Inserted, Option<Vec<tree_sitter::InputEdit>>) {
        // (rewrites replace whole ASCII words or bracket contents with
        // ASCII; a replacement that would split a character is dropped)
        let (rewritten, changed) =
            overwritten(text, &self.rewrites).unwrap_or_else(|| (text.to_string(), Vec::new()));
        let at: Vec<(usize, &str)> = self.inserts.iter().map(|(p, t)| (*p, t.as_str())).collect();
        let (typed, inserted) = insert(&rewritten, &at);
        let edits = input_edits(text, &changed, &rewritten, &typed, &inserted);
        (typed, inserted, edits)
    }
}

/// `text` with each same-length rewrite `(at, with)` written over it (one
/// that would run past the end is dropped), and the `(offset, length)` of
/// those that changed something; `None` when the result is not UTF-8.
fn overwritten(text: &str, rewrites: &[(usize, String)]) -> Option<(String, Vec<(usize, usize)>)> {
    let mut bytes = text.as_bytes().to_vec();
    let mut changed = Vec::new();
    for (at, with) in rewrites {
        if let Some(dst) = bytes.get_mut(*at..at + with.len()) {
            if dst != with.as_bytes() {
                changed.push((*at, with.len()));
            }
            dst.copy_from_slice(with.as_bytes());
        }
    }
    Some((String::from_utf8(bytes).ok()?, changed))
}

/// The tree-sitter edits of same-length rewrites `changed` (offset,
/// length) of `text`, which gave `rewritten`, then of the insertions
/// `inserted` into `rewritten`, which gave `typed`; `None` when one of
/// them adds or removes a line end.
fn input_edits(
    text: &str,
    changed: &[(usize, usize)],
    rewritten: &str,
    typed: &str,
    inserted: &Inserted,
) -> Option<Vec<tree_sitter::InputEdit>> {
    use tree_sitter::{InputEdit, Point};
    let has_newline = |s: &str, r: std::ops::Range<usize>| {
        s.as_bytes()
            .get(r)
            .is_none_or(|b| memchr::memchr(b'\n', b).is_some())
    };
    // rows and columns of `text`, which the rewrites keep
    let source = crate::source::SourceText::new(text.to_string());
    let point = |offset: usize| source.point(offset);
    let mut out = Vec::with_capacity(changed.len() + inserted.0.len());
    for &(at, len) in changed {
        if has_newline(text, at..at + len) || has_newline(rewritten, at..at + len) {
            return None;
        }
        let start = point(at);
        let end = Point::new(start.row, start.column + len);
        out.push(InputEdit {
            start_byte: at,
            old_end_byte: at + len,
            new_end_byte: at + len,
            start_position: start,
            old_end_position: end,
            new_end_position: end,
        });
    }
    // each insertion at its offset in the text as the earlier ones made it
    // (the repaired text's offset: they are ascending)
    let mut row_shift = (usize::MAX, 0);
    for &(at, len, before) in &inserted.0 {
        let source = at - before;
        if has_newline(typed, at..at + len) {
            return None;
        }
        let p = point(source);
        if row_shift.0 != p.row {
            row_shift = (p.row, 0);
        }
        let start = Point::new(p.row, p.column + row_shift.1);
        out.push(InputEdit {
            start_byte: at,
            old_end_byte: at,
            new_end_byte: at + len,
            start_position: start,
            old_end_position: start,
            new_end_position: Point::new(start.row, start.column + len),
        });
        row_shift.1 += len;
    }
    Some(out)
}

/// What to repair in `text` (the parser's input: inactive preprocessor
/// branches blanked); see the module documentation. `defines` (`NAME` or
/// `NAME=VALUE`, config `defines`) are definitions the file's own
/// `#define`s override.
pub(crate) fn repairs(text: &str, defines: &[String]) -> Repairs {
    // Prototypes unwrapped from their macros first: the other repairs
    // read the declarations as they then are (`int ZEXPORT f OF((int));`:
    // the specifier macro before the name `f` followed by its `(`). The
    // blanks keep every offset.
    let (wrappers, names) = prototype_wrappers(text, &top_level_tokens(text));
    // (ASCII blanks over ASCII bytes: still UTF-8)
    let unwrapped = (!wrappers.is_empty())
        .then(|| overwritten(text, &wrappers))
        .flatten();
    let text = unwrapped.as_ref().map_or(text, |(t, _)| t.as_str());
    let lines = code_lines(text.as_bytes());
    let bare = bare_macros_in(&lines);
    let statement_args = statement_arguments(&lines);
    let top = top_level_tokens(text);
    let (prototypes, declarations) = old_style_prototypes(text, &top);
    let (token_rewritten, token_inserts) = token_rewrites(&lines, defines);
    let mut inserts: Vec<(usize, String)> = implicit_int_in(text, &top)
        .into_iter()
        .map(|p| (p, "int ".to_string()))
        .chain(token_inserts)
        .chain(bare.iter().map(|b| (b.end, ";".to_string())))
        .chain(prototypes)
        .chain(paren_less_conditions(&lines))
        .chain(loop_macros(&lines))
        .chain(statement_args.1)
        .collect();
    inserts.sort_by_key(|(p, _)| *p);
    let mut rewrites: Vec<(usize, String)> = bare
        .iter()
        .filter_map(|b| b.blank.clone())
        .map(|r| (r.start, " ".repeat(r.len())))
        .chain(token_rewritten)
        .chain(statement_args.0)
        .chain(line_end_qualifiers(&lines))
        .chain(continued_directive_comments(text, &lines))
        .chain(declarations)
        .chain(macro_type_names(text, &top))
        .chain(crlf_splices(text))
        .collect();
    // (an unwrapped prototype's name stays)
    rewrites.retain(|(p, _)| !names.iter().any(|n| n.contains(p)));
    rewrites.extend(wrappers);
    rewrites.sort_by_key(|(p, _)| *p);
    rewrites.dedup_by_key(|(p, _)| *p);
    Repairs { rewrites, inserts }
}

/// The blanks over the arguments of function-like macros that stand for a
/// type name after `typedef`, or for a tag after `struct`, `union` or
/// `enum` (see the module documentation): the macro's name, then its
/// parenthesised arguments, then what a type or tag is followed by (a
/// declared name or `*`; after a tag also a body or `;`).
fn macro_type_names(text: &str, toks: &[Token]) -> Edits {
    let word = |t: &Token| t.in_text(text);
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        let (Some(m), Some(p), Some(after)) = (toks.get(k + 1), toks.get(k + 2), toks.get(k + 3))
        else {
            continue;
        };
        let tag = matches!(word(t), "struct" | "union" | "enum");
        if t.kind != Tok::Word
            || !(tag || word(t) == "typedef")
            || m.kind != Tok::Word
            || grammar_keyword(word(m))
            || p.kind != Tok::Parens
        {
            continue;
        }
        let follows = match after.kind {
            Tok::Word => !grammar_keyword(word(after)) || word(after) == "const",
            Tok::Other => word(after) == "*",
            Tok::Body | Tok::Semi => tag,
            _ => false,
        };
        if follows {
            out.push((p.start, " ".repeat(p.end - p.start)));
        }
    }
    out
}

/// The blanks that unwrap prototypes' parameter lists from a macro (see
/// the module documentation): `name MACRO((params))` followed by `;` or
/// `,`, after a type in the same declaration, becomes `name       (params) `.
/// Also the byte ranges of the names (no other repair may blank them).
fn prototype_wrappers(text: &str, toks: &[Token]) -> (Edits, Vec<std::ops::Range<usize>>) {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut names = Vec::new();
    // whether a type (a word or `*`) came before, since the declaration's
    // start
    let mut typed = false;
    for (k, t) in toks.iter().enumerate() {
        let window = (toks.get(k + 1), toks.get(k + 2), toks.get(k + 3));
        if let (Some(m), Some(p), Some(after)) = window {
            let wraps = typed
                && t.kind == Tok::Word
                && m.kind == Tok::Word
                && p.kind == Tok::Parens
                && !grammar_keyword(t.in_text(text))
                && !grammar_keyword(m.in_text(text))
                && (after.kind == Tok::Semi || after.in_text(text) == ",")
                && single_inner_list(b, p.start, p.end);
            if wraps {
                names.push(t.start..t.end);
                out.push((m.start, " ".repeat(m.end - m.start)));
                out.push((p.start, " ".to_string()));
                out.push((p.end - 1, " ".to_string()));
            }
        }
        typed = match t.kind {
            Tok::Semi | Tok::Body | Tok::Directive => false,
            Tok::Word => true,
            _ => typed || t.in_text(text) == "*",
        };
    }
    (out, names)
}

/// Whether the parentheses `b[open..end]` (`end` past the `)`) hold one
/// parenthesised list and blanks only: `( (int, char *) )`.
fn single_inner_list(b: &[u8], open: usize, end: usize) -> bool {
    if end < open + 2 || b.get(end - 1) != Some(&b')') {
        return false;
    }
    let inner = open + 1 + b[open + 1..end - 1].iter().take_while(|c| c.is_ascii_whitespace()).count();
    if b.get(inner) != Some(&b'(') {
        return false;
    }
    let inner_end = bracket_end(b, inner);
    inner_end < end && b[inner_end..end - 1].iter().all(|c| c.is_ascii_whitespace())
}

/// The parentheses C wants around the condition of an `if` or a `while`
/// that is a macro (see the module documentation): insertions of `(`
/// before the macro's name and `)` after its arguments (or after the name
/// when no `(` follows it). C needs a `(` right after these keywords, so a
/// word there can only be a macro expanding to a parenthesised condition.
/// The macro's call must end on its line.
fn paren_less_conditions(lines: &[CodeLine]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for line in lines {
        if line.directive {
            continue;
        }
        let toks = line_tokens(line);
        for (k, t) in toks.iter().enumerate() {
            if !matches!(t.text, "if" | "while") {
                continue;
            }
            let Some(name) = toks.get(k + 1).filter(|n| {
                n.is_word()
                    && !n.text.starts_with(|c: char| c.is_ascii_digit())
                    && !KEYWORDS.contains(&n.text)
            }) else {
                continue;
            };
            let close = match toks.get(k + 2) {
                Some(open) if open.text == "(" => match matching_close(&toks, k + 2) {
                    Some(j) => toks[j].at + 1,
                    None => continue,
                },
                _ => name.at + name.text.len(),
            };
            out.push((name.at, "(".to_string()));
            out.push((close, ")".to_string()));
        }
    }
    out
}

/// Macros that head a block as a loop does (see the module
/// documentation): `NAME(args)` alone on its line inside a function, after
/// a statement's end, with the block's `{` at the end of the line or
/// starting the next one. C has no statement of that shape, so `NAME`
/// expands to a loop header (`hypre_ForBoxI(i, boxes)`, `FOR_EACH(p,
/// list)`): `while (` is inserted before it and `)` after its arguments.
fn loop_macros(lines: &[CodeLine]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let significant = |l: &&CodeLine| !l.directive && !l.code.trim().is_empty();
    for (k, line) in lines.iter().enumerate() {
        if line.directive || line.depth == 0 {
            continue;
        }
        let code = line.code.trim_end();
        let lead = code.len() - code.trim_start().len();
        let code = &code[lead..];
        // `NAME(` starting the line
        let n = code
            .bytes()
            .position(|c| !(c == b'_' || c.is_ascii_alphanumeric()))
            .unwrap_or(code.len());
        if n == 0
            || code.as_bytes()[0].is_ascii_digit()
            || KEYWORDS.contains(&&code[..n])
            || matches!(&code[..n], "_Pragma" | "__pragma")
        {
            continue;
        }
        let Some(open) = code[n..].find(|c: char| !c.is_whitespace()).map(|o| n + o) else {
            continue;
        };
        if code.as_bytes()[open] != b'(' {
            continue;
        }
        // the matching `)`, on this line or a later one (the arguments
        // hold no `;`, `{` or `}`)
        let mut depth = 0usize;
        let mut args = String::new();
        let mut close = None;
        'lines: for (j, l) in lines[k..].iter().enumerate().take(16) {
            if l.directive {
                continue;
            }
            let from = if j == 0 { lead + open } else { 0 };
            for (i, c) in l.code[from..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            close = Some((k + j, from + i));
                            break 'lines;
                        }
                    }
                    ';' | '{' | '}' => break 'lines,
                    _ => {}
                }
                if depth > 0 && !(depth == 1 && c == '(') {
                    args.push(c);
                }
            }
            args.push(' ');
        }
        let Some((cl, ci)) = close else { continue };
        if args.trim().is_empty() || !expression_list(&args) {
            continue;
        }
        // then the block's `{`: the rest of the line, or the next line
        let rest = lines[cl].code[ci + 1..].trim();
        let brace = rest == "{"
            || rest.is_empty()
                && lines[cl + 1..]
                    .iter()
                    .find(significant)
                    .is_some_and(|l| l.code.trim_start().starts_with('{'));
        if !brace {
            continue;
        }
        if !previous_code_line(lines, k).is_none_or(|p| ends_statement(&lines[p])) {
            continue;
        }
        out.push((line.start + lead, "while (".to_string()));
        out.push((lines[cl].start + ci + 1, ")".to_string()));
    }
    out
}

/// A qualifier macro ending a line of specifiers whose declaration goes on
/// on the next line (`static inline UNUSED_FUNC` then `HYPRE_Int f(...)`):
/// blanked, as [`qualifier_macro`] blanks one inside a line. The next line
/// must start with a type name and a declarator (`T f(`, `T *f(`, `T x;`).
fn line_end_qualifiers(lines: &[CodeLine]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (k, line) in lines.iter().enumerate() {
        if line.directive {
            continue;
        }
        let toks = line_tokens(line);
        // the specifiers, then the macro, then maybe the type name
        let Some(q) = toks.iter().position(|t| !STORAGE_KEYWORDS.contains(&t.text)) else {
            continue;
        };
        let word = |t: &LineTok<'_>| t.is_word() && !grammar_keyword(t.text);
        let typed = match &toks[q..] {
            [m] if word(m) => false,
            [m, t] if word(m) && word(t) => true,
            _ => continue,
        };
        if q == 0 {
            continue;
        }
        let last = toks[q];
        let Some(next) = lines[k + 1..]
            .iter()
            .find(|l| !l.directive && !l.code.trim().is_empty())
        else {
            continue;
        };
        let nt = line_tokens(next);
        let name = |j: usize| {
            nt.get(j)
                .is_some_and(|t| t.is_word() && !grammar_keyword(t.text))
        };
        // the next line: `T f(` (`T *f(`), or `f(` after a type name
        let mut d = usize::from(!typed);
        while nt.get(d).is_some_and(|t| t.text == "*") {
            d += 1;
        }
        let declarator = nt
            .get(d + 1)
            .is_some_and(|t| matches!(t.text, "(" | ";" | "," | "=" | "["));
        let type_at_start = name(0) || nt.first().is_some_and(|t| TYPE_KEYWORDS.contains(&t.text));
        if (typed || type_at_start) && name(d) && declarator {
            out.push((last.at, " ".repeat(last.text.len())));
        }
    }
    out
}

/// Comments inside a preprocessor line that a backslash continues
/// (`#pragma omp target \` then `map(a) /* why */ \`): tree-sitter-c
/// ends the directive at such a comment, where the compiler reads it as
/// a space (translation phase 3). Blanked, each on its own line.
fn continued_directive_comments(text: &str, lines: &[CodeLine]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (k, line) in lines.iter().enumerate() {
        if !line.directive {
            continue;
        }
        let end = lines.get(k + 1).map_or(text.len(), |l| l.start);
        let Some(raw) = text.get(line.start..end) else {
            continue;
        };
        let body = raw.trim_end();
        // a continued line, or the last line of a continued directive
        let continued = body.ends_with('\\')
            || k.checked_sub(1).is_some_and(|p| {
                lines[p].directive
                    && text
                        .get(lines[p].start..line.start)
                        .is_some_and(|r| r.trim_end().ends_with('\\'))
            });
        if !continued {
            continue;
        }
        let mut from = 0;
        while let Some(open) = raw[from..].find("/*").map(|o| from + o) {
            let Some(close) = raw[open + 2..].find("*/").map(|c| open + 2 + c + 2) else {
                break;
            };
            out.push((line.start + open, " ".repeat(close - open)));
            from = close;
        }
    }
    out
}

/// The line splices before a CRLF line end, as rewrites (see the module
/// documentation): backslash and `\r` become a space and a backslash.
/// Every backslash right
/// before a line end is a splice (translation phase 2 comes before
/// literals and comments are read), so none is left out.
fn crlf_splices(text: &str) -> impl Iterator<Item = (usize, String)> + '_ {
    memchr::memmem::find_iter(text.as_bytes(), b"\\\r\n").map(|at| (at, " \\".to_string()))
}

/// Words that start a declaration or a statement: never the name of an
/// implicit-`int` function.
const KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Noreturn",
    "_Static_assert", "_Thread_local", "_Alignas", "__attribute__", "__extension__",
    "__declspec", "asm", "__asm__", "__inline", "__inline__",
];

/// The source offsets of the names of top-level definitions that have no
/// type (see the module documentation). `text` is the parser's input:
/// inactive preprocessor branches blanked.
#[cfg(test)]
fn implicit_int(text: &str) -> Vec<usize> {
    implicit_int_in(text, &top_level_tokens(text))
}

/// The source offsets of the names of implicit-`int` definitions (see the
/// module documentation), over the text's top-level tokens.
fn implicit_int_in(text: &str, toks: &[Token]) -> Vec<usize> {
    let mut out = Vec::new();
    let word = |t: &Token| t.in_text(text);
    let mut i = 0;
    while i < toks.len() {
        // a declaration starts here, after storage classes if any
        let mut j = i;
        while toks
            .get(j)
            .is_some_and(|t| t.kind == Tok::Word && STORAGE_CLASSES.contains(&word(t)))
        {
            j += 1;
        }
        if let Some(next) = definition_without_type(text, toks, j) {
            out.push(toks[j].start);
            i = next;
            continue;
        }
        // `extern n;`, `static a[10], b = 1;`: variables with no type
        if j > i
            && toks.get(j).is_some_and(|t| {
                t.kind == Tok::Word && !KEYWORDS.contains(&word(t))
            })
            && toks.get(j + 1).is_some_and(|t| {
                t.kind == Tok::Semi
                    || t.kind == Tok::Other && matches!(text.as_bytes()[t.start], b',' | b'=' | b'[')
            })
        {
            out.push(toks[j].start);
        }
        // skip to the end of this declaration: a `;`, a directive, or a
        // function body (a `{` after a parameter list or after the `;`
        // of old-style parameter declarations; a struct's or an
        // initialiser's braces do not end it)
        while i < toks.len() {
            let ends = match toks[i].kind {
                Tok::Semi | Tok::Directive => true,
                Tok::Body => i > 0 && matches!(toks[i - 1].kind, Tok::Parens | Tok::Semi),
                _ => false,
            };
            i += 1;
            if ends {
                break;
            }
        }
    }
    out
}

/// Old-style definitions whose declarator is more than the name (`double
/// *shift(a, n) double a[]; int n; { ... }`), which tree-sitter-c reads as
/// a declaration and a block outside any function: each parameter list is
/// written anew with its declarations' types (`double a[], int n`; `int`
/// for a parameter none declares), inserted after its `(`; the names in it
/// and the declarations are blanked (lines kept). Returns the insertions
/// and the blankings.
fn old_style_prototypes(text: &str, toks: &[Token]) -> (Edits, Edits) {
    let mut inserts = Vec::new();
    let mut blanks = Vec::new();
    if !text.contains('*') {
        return (inserts, blanks);
    }
    let word = |t: &Token| t.in_text(text);
    let blank = |r: std::ops::Range<usize>| {
        let s: String = text[r.clone()]
            .chars()
            .map(|c| if c == '\n' || c == '\r' { c } else { ' ' })
            .collect();
        (r.start, s)
    };
    let mut start = true;
    for i in 0..toks.len() {
        let t = toks[i];
        let at_start = start;
        start = matches!(t.kind, Tok::Semi | Tok::Directive | Tok::Body);
        // `T *name(` with a declaration starting at T
        if !at_start || t.kind != Tok::Word {
            continue;
        }
        let mut j = i;
        while toks.get(j).is_some_and(|t| t.kind == Tok::Word) {
            j += 1;
        }
        let stars = j;
        while toks
            .get(j)
            .is_some_and(|t| t.kind == Tok::Other && word(t) == "*")
        {
            j += 1;
        }
        if j == stars
            || toks.get(j).is_none_or(|t| t.kind != Tok::Word)
            || toks.get(j + 1).is_none_or(|t| t.kind != Tok::Parens)
        {
            continue;
        }
        let params = toks[j + 1];
        // an identifier list
        let inner = &text[params.start + 1..params.end.saturating_sub(1)];
        let names: Vec<&str> = inner.split(',').map(str::trim).collect();
        if names.iter().any(|n| {
            !n.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic())
                || !n.bytes().all(|c| c == b'_' || c.is_ascii_alphanumeric())
                || KEYWORDS.contains(n)
        }) {
            continue;
        }
        // declarations `type declarator, ...;` up to the body
        let mut k = j + 2;
        let mut declared: Vec<(String, String)> = Vec::new();
        let mut decl_ranges = Vec::new();
        let ok = loop {
            match toks.get(k) {
                Some(t) if t.kind == Tok::Body => break !decl_ranges.is_empty(),
                Some(t) if t.kind == Tok::Word => {}
                _ => break false,
            }
            let first = k;
            while toks.get(k).is_some_and(|t| t.kind != Tok::Semi && t.kind != Tok::Body) {
                k += 1;
            }
            if toks.get(k).is_none_or(|t| t.kind != Tok::Semi) {
                break false;
            }
            // the type: the words before the first declarator (the last
            // of them is its name when a `,`, `;` or `[` follows)
            let mut d = first;
            while toks.get(d + 1).is_some_and(|t| t.kind == Tok::Word) {
                d += 1;
            }
            let named = toks.get(d + 1).is_some_and(|t| {
                t.kind == Tok::Semi || matches!(text.as_bytes()[t.start], b',' | b'[')
            });
            if !named {
                d += 1;
            }
            let ty = &text[toks[first].start..toks[d].start];
            // each declarator: the text between commas, its name the last
            // word before any bracket
            let decls = csa_grammars::preproc::strip_comments(&text[toks[d].start..toks[k].start]);
            for decl in decls.split(',') {
                let head = decl.split('[').next().unwrap_or(decl);
                let name = head
                    .split(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
                    .rfind(|w| !w.is_empty())
                    .unwrap_or("");
                declared.push((name.to_string(), format!("{}{}", ty, decl.trim())));
            }
            decl_ranges.push(toks[first].start..toks[k].end);
            k += 1;
        };
        if !ok || not_a_type(&text[toks[i].start..toks[stars.saturating_sub(1)].end]) {
            continue;
        }
        let prototype: Vec<String> = names
            .iter()
            .map(|n| {
                declared
                    .iter()
                    .find(|(d, _)| d == n)
                    .map_or_else(|| format!("int {n}"), |(_, d)| d.clone())
            })
            .collect();
        inserts.push((params.start + 1, prototype.join(", ")));
        blanks.push(blank(params.start + 1..params.end - 1));
        blanks.extend(decl_ranges.into_iter().map(blank));
    }
    (inserts, blanks)
}

/// Whether the words before a declarator are no type (`return`, `if`...).
fn not_a_type(words: &str) -> bool {
    words
        .split_whitespace()
        .any(|w| matches!(w, "return" | "if" | "while" | "for" | "switch" | "typedef" | "sizeof"))
}

/// Storage classes, before a definition or a declaration with no type.
const STORAGE_CLASSES: &[&str] = &["extern", "static", "register", "auto"];

/// Whether the declaration starting at token `i` is `name ( ... )`
/// followed by a body (with old-style parameter declarations between);
/// the index after its body.
fn definition_without_type(text: &str, toks: &[Token], i: usize) -> Option<usize> {
    let name = toks.get(i)?;
    if name.kind != Tok::Word || KEYWORDS.contains(&name.in_text(text)) {
        return None;
    }
    if toks.get(i + 1)?.kind != Tok::Parens {
        return None;
    }
    let mut j = i + 2;
    match toks.get(j)?.kind {
        Tok::Body => return Some(j + 1),
        // old-style parameter declarations: a type word first
        Tok::Word => {}
        _ => return None,
    }
    // each declaration starts with a type word that is not called (a
    // `name(...)` here is the next definition, and `M(x)` before it a
    // macro invocation)
    let mut ends_with_semi = false;
    let mut starts_declaration = true;
    while let Some(t) = toks.get(j) {
        if starts_declaration
            && (t.kind != Tok::Word || toks.get(j + 1).is_some_and(|n| n.kind == Tok::Parens))
        {
            return None;
        }
        starts_declaration = false;
        match t.kind {
            Tok::Body => return ends_with_semi.then_some(j + 1),
            Tok::Directive => return None,
            Tok::Semi => {
                ends_with_semi = true;
                starts_declaration = toks.get(j + 1).is_some_and(|n| n.kind != Tok::Body);
            }
            Tok::Word | Tok::Parens | Tok::Other => ends_with_semi = false,
        }
        j += 1;
    }
    None
}

/// A macro used as a statement without a `;` (see the module
/// documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
struct BareMacro {
    /// The source offset just after the use, where the `;` goes.
    end: usize,
    /// Its arguments, when they are not expressions: to blank.
    blank: Option<std::ops::Range<usize>>,
}

/// Where a `;` goes after a macro used as a statement without one (see
/// the module documentation): the source offsets just after each such
/// use. `text` is the parser's input: inactive preprocessor branches
/// blanked.
#[cfg(test)]
fn bare_macros(text: &str) -> Vec<usize> {
    bare_macros_in(&code_lines(text.as_bytes()))
        .into_iter()
        .map(|b| b.end)
        .collect()
}

fn bare_macros_in(lines: &[CodeLine]) -> Vec<BareMacro> {
    let mut out = Vec::new();
    // the code of every line at its offset, made when first needed
    let mut buffer: Option<Vec<u8>> = None;
    // the line of the last use found
    let mut last_use = None;
    // the last line of a use continued over several lines
    let mut skip_to = 0;
    for (k, line) in lines.iter().enumerate() {
        if line.directive || k < skip_to {
            continue;
        }
        let code = line.code.trim_end();
        // a top-level use whose arguments run onto later lines, before a
        // declaration (`DEPRECATED_MSG(` / `"text")` / `int f(void);`)
        if line.depth == 0 {
            if let Some((last, end)) = continued_use(lines, k) {
                let next = lines[last + 1..]
                    .iter()
                    .find(|l| !l.directive && !l.code.trim().is_empty());
                let prev_ends = previous_code_line(lines, k)
                    .is_none_or(|p| last_use == Some(p) || ends_statement(&lines[p]));
                // (not the parameter declarations of an old-style
                // definition, `f(a,` / `b)` / `int a, b;`: a prototype
                // or a declaration continued below follows)
                let declaration = next.is_some_and(|l| {
                    let t = l.code.trim();
                    starts_declaration(t)
                        && t.find(';').is_none_or(|semi| t[..semi].contains('('))
                });
                if prev_ends && declaration {
                    out.push(BareMacro { end, blank: None });
                    last_use = Some(last);
                    skip_to = last + 1;
                }
                continue;
            }
        }
        // the use: the line's code, or what follows a control statement's
        // header on it (`if (x != 1) ERR_EXIT(x)`, `else LOG(y)`)
        let (lead, code, end, prev_ends) = match bare_use(code.trim_start()) {
            Some(end) => {
                // the code line before ends a statement or opens a block
                // (or is a use found before)
                let prev_ends = previous_code_line(lines, k)
                    .is_none_or(|p| last_use == Some(p) || ends_statement(&lines[p]));
                let lead = code.len() - code.trim_start().len();
                (lead, code.trim_start(), end, prev_ends)
            }
            None => {
                let buffer = buffer.get_or_insert_with(|| code_buffer(lines));
                if let Some((lead, end)) = after_header(code, line.start, buffer) {
                    (lead, &code[lead..], end, true)
                } else if let Some((lead, end)) = after_last_statement(code) {
                    // what follows the line's last statement
                    // (`p = MALLOC(n); CHECK_ERROR`)
                    (lead, &code[lead..], end, true)
                } else if let Some(uses) = braced_uses(code) {
                    // a block of uses alone (`{SWAP(a, b)}`): its `}` ends
                    // the last
                    for (lead, end) in uses {
                        let (_, blank) = arguments(line.start + lead, &code[lead..lead + end]);
                        out.push(BareMacro {
                            end: line.start + lead + end,
                            blank,
                        });
                    }
                    last_use = Some(k);
                    continue;
                } else {
                    continue;
                }
            }
        };
        let at = line.start + lead;
        let (no_arguments, blank) = arguments(at, &code[..end]);
        // the code line after starts another statement (not an operator,
        // an argument list or a block that the macro would head; a name
        // alone, with no arguments or with a pragma's words heads no
        // loop: its block is one)
        let next = lines[k + 1..]
            .iter()
            .find(|l| !l.directive && !l.code.trim().is_empty());
        // (or there is none: nothing may follow without a `;`)
        let next_starts = next.is_none_or(|l| {
            let t = l.code.trim_start();
            t.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic())
                || t.starts_with('}')
                || t.starts_with('*') && !t.starts_with("*=")
                || (no_arguments || blank.is_some()) && t.starts_with('{')
        });
        // at the top level, `name(args)` followed by a declaration is
        // also how an implicit-int definition with old-style parameters
        // starts: a use there needs arguments and a next line that is no
        // parameter declaration (a parenthesis before any `;`), or none
        // (`INSERT_GENTFUNC_BASIC( copy )` ending the file)
        let top_level_ok = line.depth > 0
            || code.contains('(')
                && next.is_none_or(|l| {
                    // (a parameter declaration ends with its `;`; a line
                    // without one starts a declaration continued below)
                    let t = l.code.trim();
                    !t.starts_with('{') && t.find(';').is_none_or(|semi| t[..semi].contains('('))
                })
            // a name alone (`__BEGIN_DECLS`, an export macro on its own
            // line) before a declaration that starts with its type; not
            // a return type on its own line (`size_t` before `f(void)`)
            // nor a type before its variables (`mytype` before `x = 1;`)
            || no_arguments && next.is_none_or(|l| starts_declaration(&l.code));
        if prev_ends && next_starts && top_level_ok {
            out.push(BareMacro {
                end: at + end,
                blank,
            });
            last_use = Some(k);
        }
    }
    out
}

/// A macro use that starts line `k` (a name that is no keyword, then `(`)
/// and whose arguments close on a later line (within 16 lines, no `;`,
/// `{` or `}` in them, nothing after the `)`): that line and the source
/// offset after the `)`.
fn continued_use(lines: &[CodeLine], k: usize) -> Option<(usize, usize)> {
    let code = lines[k].code.trim();
    let n = macro_name(code)?;
    if !code[n..].trim_start().starts_with('(') {
        return None;
    }
    let mut depth = 0usize;
    for (j, line) in lines.iter().enumerate().skip(k).take(16) {
        if line.directive {
            return None;
        }
        for (i, c) in line.code.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        // (on the first line it is no continued use)
                        let rest_empty = line.code[i + 1..].trim().is_empty();
                        return (j > k && rest_empty).then_some((j, line.start + i + 1));
                    }
                }
                ';' | '{' | '}' => return None,
                _ => {}
            }
        }
    }
    None
}

/// Statements given to a macro as arguments (`CHECK(p, return 0);`,
/// `EVAL(f(x, &r); )`), which no function call can take: the blanks that
/// make the use a call. In a macro's argument list (a name that is no
/// keyword, then `(`, closed on the line), an argument that starts with
/// `return`, `break`, `continue` or `goto` is blanked (with a `,` beside
/// it: an empty argument is none), and so is a `;` at the list's own
/// depth that ends it, the use then getting a `;` after it when it is its
/// line's code;
/// (offset, blanks) and (offset, `;`).
fn statement_arguments(lines: &[CodeLine]) -> (Edits, Edits) {
    const JUMPS: [&str; 4] = ["return", "break", "continue", "goto"];
    let mut out = Vec::new();
    let mut semicolons = Vec::new();
    for line in lines {
        if line.directive || !(line.code.contains(';') || line.code.contains("return")) {
            continue;
        }
        let toks = line_tokens(line);
        let mut k = 0;
        while k + 1 < toks.len() {
            let t = toks[k];
            if !(t.is_word() && toks[k + 1].text == "(" && !KEYWORDS.contains(&t.text)) {
                k += 1;
                continue;
            }
            let Some(close) = matching_close(&toks, k + 1) else {
                break;
            };
            // the arguments at the list's depth, and each `;` there
            let mut depth = 0usize;
            let mut arg_start = k + 2;
            for j in k + 2..=close {
                match toks[j].text {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" if depth > 0 => depth -= 1,
                    // (the last of the list only: `m(x; y; z)` may be a
                    // loop's header, `FOR_EACH(i; ...)`, `cilk_for (...)`)
                    ";" if depth == 0 && j + 1 == close => {
                        out.push((toks[j].at, " ".to_string()));
                        if k == 0 && close + 1 == toks.len() {
                            semicolons.push((toks[close].at + 1, ";".to_string()));
                        }
                    }
                    _ => {}
                }
                if depth == 0 && matches!(toks[j].text, "," | ")" | ";") && j > arg_start {
                    if JUMPS.contains(&toks[arg_start].text) {
                        // with a `,` next to it (an empty argument is none)
                        let from = if arg_start > k + 2 { arg_start - 1 } else { arg_start };
                        let to = if from == arg_start && toks[j].text == "," { j + 1 } else { j };
                        out.extend(
                            toks[from..to]
                                .iter()
                                .map(|x| (x.at, " ".repeat(x.text.len()))),
                        );
                    }
                    arg_start = j + 1;
                } else if depth == 0 && matches!(toks[j].text, "," | ";") {
                    arg_start = j + 1;
                }
            }
            k = close + 1;
        }
    }
    semicolons.dedup();
    (out, semicolons)
}

/// Whether a line of code starts a declaration with its type: a keyword
/// that begins one (`struct`, `typedef`, `static`, `int`, ...) or a name
/// followed by another name or a `*` (a typedef name: `vec_t *v`), not by
/// what follows a declarator (`(`, `=`, `,`, `;`, `[`).
fn starts_declaration(code: &str) -> bool {
    let toks = tokens(code, 0);
    let (Some(first), second) = (toks.first(), toks.get(1)) else {
        return false;
    };
    if !first.is_word() || first.text.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    SPECIFIER_KEYWORDS.contains(&first.text)
        || matches!(first.text, "const" | "volatile" | "__extension__")
        || second.is_some_and(|s| s.is_word() || s.text == "*")
}

/// A macro use after the last `;` of a line's code (outside parentheses):
/// where it starts in `code` and its length.
fn after_last_statement(code: &str) -> Option<(usize, usize)> {
    let semi = code.rfind(';')?;
    if depth_at(code, semi) != 0 {
        return None;
    }
    let rest = &code[semi + 1..];
    let lead = semi + 1 + rest.len() - rest.trim_start().len();
    Some((lead, bare_use(&code[lead..])?))
}

/// Of a macro use `code` at source offset `at`: whether it has no
/// arguments, and its arguments' source range when they are not
/// expressions (a pragma's words: to blank).
fn arguments(at: usize, code: &str) -> (bool, Option<std::ops::Range<usize>>) {
    let end = code.len();
    let open = code.find('(');
    let no_arguments = open.is_none_or(|open| code[open + 1..end - 1].trim().is_empty());
    let blank = open
        .filter(|&open| !no_arguments && !expression_list(&code[open + 1..end - 1]))
        .map(|open| at + open + 1..at + end - 1);
    (no_arguments, blank)
}

/// Macro uses that are the whole block closed at the end of a line's code
/// (`{SWAP(a, b)}`, `for (...) { NEXT(p) }`, `{SWAP(a, b) SWAP(c, d)}`):
/// where each starts in `code` and its length. Several uses each have
/// arguments.
fn braced_uses(code: &str) -> Option<Vec<(usize, usize)>> {
    let close = code.strip_suffix('}')?.len();
    let open = code[..close].rfind('{')?;
    if depth_at(code, open) != 0 {
        return None;
    }
    let mut uses = Vec::new();
    let mut pos = open + 1;
    loop {
        let rest = &code[pos..close];
        let lead = pos + rest.len() - rest.trim_start().len();
        if lead == close {
            break;
        }
        let len = use_prefix(&code[lead..close])?;
        uses.push((lead, len));
        pos = lead + len;
    }
    let single = uses.len() == 1;
    (!uses.is_empty() && (single || uses.iter().all(|&(l, n)| code[l..l + n].ends_with(')'))))
        .then_some(uses)
}

/// The last line of code before line `k` (not blank, not a directive).
fn previous_code_line(lines: &[CodeLine], k: usize) -> Option<usize> {
    lines[..k]
        .iter()
        .rposition(|l| !l.directive && !l.code.trim().is_empty())
}

/// Whether a line of code ends a statement or opens or closes a block (or
/// ends a label): a statement may start after it.
fn ends_statement(line: &CodeLine) -> bool {
    line.code.trim_end().ends_with([';', '{', '}', ':'])
}

/// How many parentheses are open at byte `at` of a line's code (a `;`
/// inside a `for (...)` header is no statement's end).
fn depth_at(code: &str, at: usize) -> usize {
    code[..at].bytes().fold(0usize, |d, c| match c {
        b'(' => d + 1,
        b')' => d.saturating_sub(1),
        _ => d,
    })
}

/// The code of `lines` as one text of the same offsets: comments,
/// literals (as `0` and blanks) and preprocessor lines blanked.
fn code_buffer(lines: &[CodeLine]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in lines {
        out.resize(line.start, b' ');
        if !line.directive {
            out.extend_from_slice(line.code.as_bytes());
        }
    }
    out
}

/// A macro use ending `code` (a line's code, starting at `start` in
/// `buffer`) after the header of an `if`, `while`, `for` or `switch` (its
/// `(` possibly on an earlier line) or after `else`: where the use starts
/// in `code` and its end.
fn after_header(code: &str, start: usize, buffer: &[u8]) -> Option<(usize, usize)> {
    let b = code.as_bytes();
    let is_word = |c: u8| c == b'_' || c.is_ascii_alphanumeric();
    for (p, &c) in b.iter().enumerate() {
        let header = match c {
            b')' => {
                // the matching `(`, then the keyword before it
                let open = super::super::relevance::matching_open(buffer, start + p, b"{}");
                open.is_some_and(|o| {
                    let before = &buffer[..o];
                    let end = before
                        .iter()
                        .rposition(|c| !c.is_ascii_whitespace())
                        .map_or(0, |i| i + 1);
                    let start = before[..end]
                        .iter()
                        .rposition(|&c| !is_word(c))
                        .map_or(0, |i| i + 1);
                    matches!(&before[start..end], b"if" | b"while" | b"for" | b"switch")
                })
            }
            b'e' => {
                code[p..].starts_with("else")
                    && (p == 0 || !is_word(b[p - 1]))
                    && !b.get(p + 4).copied().is_some_and(is_word)
            }
            _ => false,
        };
        if !header {
            continue;
        }
        let after = if c == b')' { p + 1 } else { p + 4 };
        let rest = &code[after..];
        let lead = after + rest.len() - rest.trim_start().len();
        if let Some(end) = bare_use(&code[lead..]) {
            return Some((lead, end));
        }
    }
    None
}

/// Whether `code` (comments and literals blanked) can be a list of C
/// expressions: no two operands in a row (`teams distribute`,
/// `tile(32) deviceptr(a)`) and no `:` but the one of a `?:`.
fn expression_list(code: &str) -> bool {
    let mut questions = 0usize;
    // the previous token ended an operand (a name, a number, `)`, `]`)
    let mut after_operand = false;
    for t in tokens(code, 0) {
        if t.text.starts_with(|c: char| c == '_' || c.is_ascii_alphanumeric()) {
            if after_operand {
                return false;
            }
            after_operand = true;
            continue;
        }
        match t.text {
            "?" => questions += 1,
            ":" => match questions.checked_sub(1) {
                Some(q) => questions = q,
                None => return false,
            },
            _ => {}
        }
        after_operand = matches!(t.text, ")" | "]");
    }
    true
}

/// The end of `code` when it is only a name, or a name and a balanced
/// argument list (no `;`, no operator): a macro's use. Keywords are not.
fn bare_use(code: &str) -> Option<usize> {
    use_prefix(code).filter(|&end| code[end..].trim().is_empty())
}

/// The length of the name `code` starts with, when it may be a macro's (a
/// name that is no keyword).
fn macro_name(code: &str) -> Option<usize> {
    let b = code.as_bytes();
    let n = b
        .iter()
        .position(|&c| !(c == b'_' || c.is_ascii_alphanumeric()))
        .unwrap_or(b.len());
    (n > 0 && !b[0].is_ascii_digit() && !KEYWORDS.contains(&&code[..n])).then_some(n)
}

/// The end of the macro use (a name, or a name and a balanced argument
/// list without `;`, `{` or `}`; not a keyword) that `code` starts with,
/// when what follows the name is nothing or its argument list.
fn use_prefix(code: &str) -> Option<usize> {
    let n = macro_name(code)?;
    let rest = code[n..].trim_start();
    if !rest.starts_with('(') {
        return Some(n);
    }
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(code.len() - rest.len() + i + 1);
                }
            }
            ';' | '{' | '}' => return None,
            _ => {}
        }
    }
    None
}

/// A word or a punctuation byte of a line's code, with its source offset.
#[derive(Clone, Copy, Debug)]
struct LineTok<'a> {
    at: usize,
    text: &'a str,
}

impl LineTok<'_> {
    fn is_word(&self) -> bool {
        self.text
            .starts_with(|c: char| c == '_' || c.is_ascii_alphabetic())
    }
}

/// The tokens of a line's code: words (numbers too) and single bytes.
fn line_tokens(line: &CodeLine) -> Vec<LineTok<'_>> {
    tokens(&line.code, line.start)
}

/// The tokens of `code` (comments and literals blanked), at `base` plus
/// their offsets: words (numbers too) and single bytes.
fn tokens(code: &str, base: usize) -> Vec<LineTok<'_>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c == b'_' || c.is_ascii_alphanumeric() {
            while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
                i += 1;
            }
        } else {
            i += 1;
            while i < b.len() && !code.is_char_boundary(i) {
                i += 1;
            }
        }
        out.push(LineTok {
            at: base + start,
            text: &code[start..i],
        });
    }
    out
}

/// Type and storage-class keywords: after a name at the start of a
/// declaration, they make it a macro (`INLINE void f`, `EXPORT int n`).
/// (Not `const` or `volatile`: `size_t const n` is a typedef's.)
const SPECIFIER_KEYWORDS: &[&str] = &[
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
    "_Complex", "static", "extern", "inline", "__inline", "__inline__", "struct", "union", "enum",
    "register", "auto", "typedef", "_Noreturn", "_Thread_local",
];

/// Storage-class and function specifiers: after them, a name before a type
/// name and a declarator is a qualifier macro (`static inline UNUSED T f(`).
const STORAGE_KEYWORDS: &[&str] = &[
    "static", "extern", "inline", "__inline", "__inline__", "register", "_Noreturn",
    "_Thread_local",
];

/// Type keywords after which a name and a `*` make the name a qualifier
/// macro (`double RESTRICT *a`).
const TYPE_KEYWORDS: &[&str] = &[
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
    "_Complex",
];

/// Whether `word` is a keyword of tree-sitter-c (`restrict`,
/// `__restrict__`, `_Nonnull`, `__cdecl`...): it parses, it is no macro.
fn grammar_keyword(word: &str) -> bool {
    static C: std::sync::OnceLock<tree_sitter::Language> = std::sync::OnceLock::new();
    C.get_or_init(csa_grammars::c_language)
        .id_for_node_kind(word, false)
        != 0
        || KEYWORDS.contains(&word)
}

/// The standard spelling of a macro body made of qualifiers and
/// specifiers only (attributes dropped): `Some("")` for an empty body,
/// `None` for anything else.
fn qualifier_spelling(body: &str) -> Option<String> {
    let mut words: Vec<&str> = Vec::new();
    let b = body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if !(c == b'_' || c.is_ascii_alphabetic()) {
            return None;
        }
        let start = i;
        while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
            i += 1;
        }
        let word = &body[start..i];
        match word {
            "__attribute__" | "__attribute" | "__declspec" => {
                // its parenthesised arguments
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
                if b.get(i) != Some(&b'(') {
                    return None;
                }
                i = bracket_end(b, i);
            }
            "restrict" | "__restrict" | "__restrict__" => words.push("restrict"),
            "const" | "__const" | "__const__" => words.push("const"),
            "volatile" | "__volatile" | "__volatile__" => words.push("volatile"),
            "inline" | "__inline" | "__inline__" | "__forceinline" => words.push("inline"),
            "static" | "extern" | "register" | "_Noreturn" => words.push(word),
            _ => return None,
        }
    }
    Some(words.join(" "))
}

/// The object-like macros `lines` define (their first line: a body
/// continued on the next line keeps its `\`, so it reads as no
/// qualifier list), then `defines`.
fn object_macros<'a>(lines: &'a [CodeLine], defines: &'a [String]) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::new();
    let mut continued = false;
    for line in lines {
        if !line.directive {
            continued = false;
            continue;
        }
        let first = !continued;
        continued = line.code.trim_end().ends_with('\\');
        if !first {
            continue;
        }
        let Some(rest) = line.code.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            continue;
        };
        if !rest.starts_with([' ', '\t']) {
            continue;
        }
        let rest = rest.trim_start();
        let n = rest
            .find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
            .unwrap_or(rest.len());
        if n == 0 || rest[n..].starts_with('(') {
            continue;
        }
        out.push((&rest[..n], rest[n..].trim()));
    }
    // after the file's own: `-D` comes first, a `#define` overrides it
    out.extend(defines.iter().map(|d| {
        let (name, value) = d.split_once('=').unwrap_or((d, "1"));
        (name.trim(), value.trim())
    }));
    out
}

/// The macros the file (its active `#define`s) or `defines` (config
/// `defines`, and the object-like macros of the headers it includes, see
/// `analysis::header_macros`) define as qualifiers and specifiers only,
/// with their standard spelling ([`qualifier_spelling`]; empty for an
/// empty body): `FAR`, `ZEXPORT`, `local` defined as `static`. Every use
/// in code is one the compiler's preprocessor replaces, wherever it
/// stands (`code FAR * FAR *t`, `} FAR ct_data;`, `(const code FAR *)p`),
/// so [`token_rewrites`] writes the spelling over each use (or, when it is
/// longer than the name, blanks the use, and inserts a storage class). The
/// file's last definition of a name wins over the others.
fn known_qualifier_macros(
    lines: &[CodeLine],
    defines: &[String],
) -> rustc_hash::FxHashMap<String, String> {
    // the file's last definition of a name, as at the end of the file;
    // else the first of `defines`
    let mut body_of: rustc_hash::FxHashMap<&str, &str> = Default::default();
    body_of.extend(object_macros(lines, &[]));
    for (name, body) in object_macros(&[], defines) {
        body_of.entry(name).or_insert(body);
    }
    body_of
        .into_iter()
        .filter(|(name, _)| !grammar_keyword(name))
        .filter_map(|(name, body)| Some((name.to_string(), qualifier_spelling(body)?)))
        .collect()
}

/// `s` followed by blanks to `width` bytes (`format!` takes no width
/// beyond `u16::MAX`, a word can be longer).
fn padded(s: &str, width: usize) -> String {
    let mut out = String::with_capacity(width.max(s.len()));
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(s.len())));
    out
}

/// The same-length rewrites read from each line's tokens (see the module
/// documentation): qualifier and specifier macros, Cilk keywords, the
/// `*`s ending a macro's type argument; (offset, replacement), and the
/// insertions (offset, text) of known macros spelt longer than their
/// names. Each line is tokenized once.
fn token_rewrites(
    lines: &[CodeLine],
    defines: &[String],
) -> (Edits, Edits) {
    let known = known_qualifier_macros(lines, defines);
    let mut out = Vec::new();
    let mut inserts = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.directive {
            continue;
        }
        // the uses of known qualifier macros are rewritten first, and the
        // other rules read the line as the preprocessor leaves it (`T FAR
        // *p` with `FAR` empty: `T` is a type name, not a macro)
        let mut toks = Vec::new();
        for t in line_tokens(line) {
            let Some(spelled) = known.get(t.text) else {
                toks.push(t);
                continue;
            };
            let storage = spelled
                .split(' ')
                .any(|w| matches!(w, "static" | "extern" | "register"));
            if spelled.len() <= t.text.len() {
                out.push((t.at, padded(spelled, t.text.len())));
            } else if storage {
                // a storage class longer than the name (`static` for
                // `local`): the name blanked and the spelling inserted
                // before it (positions map back, as for an implicit
                // `int`), so a static variable stays static
                out.push((t.at, " ".repeat(t.text.len())));
                inserts.push((t.at, format!("{spelled} ")));
            } else {
                // qualifiers that do not fit are not assumed, as for an
                // unknown macro (a blanked `restrict`: pointers may alias)
                out.push((t.at, " ".repeat(t.text.len())));
                continue;
            }
            if !spelled.is_empty() {
                toks.push(LineTok {
                    at: t.at,
                    text: spelled,
                });
            }
        }
        // two names alone on a line, then a function's name and its `(`:
        // the first is a specifier macro before a return type on its own
        // line (`static2 Int` / `f(Int n)`)
        let before_return_type = toks.len() == 2
            && toks.iter().all(|t| t.is_word() && !grammar_keyword(t.text))
            && lines[i + 1..]
                .iter()
                .find(|l| !l.directive && !l.code.trim().is_empty())
                .is_some_and(|l| {
                    let next = line_tokens(l);
                    next.len() > 1 && next[0].is_word() && next[1].text == "("
                });
        for (k, t) in toks.iter().enumerate() {
            if let Some(spelled) = cilk_keyword(&toks, k) {
                out.push((t.at, padded(spelled, t.text.len())));
            } else if complex_specifier(&toks, k) {
                out.push((t.at, " ".repeat(t.text.len())));
            } else if qualifier_macro(&toks, k) || before_return_type && k == 0 {
                // a macro with no qualifier definition (those are `known`,
                // rewritten above): read as nothing
                out.push((t.at, " ".repeat(t.text.len())));
            } else if let Some(first) = type_argument_stars(&toks, k) {
                out.extend(toks[first..=k].iter().map(|s| (s.at, " ".to_string())));
            } else if type_argument_tag(&toks, k) {
                out.push((t.at, " ".repeat(t.text.len())));
            } else if let Some(last) = type_argument_keywords(&toks, k) {
                out.extend(
                    toks[k..last]
                        .iter()
                        .map(|s| (s.at, " ".repeat(s.text.len()))),
                );
            } else if let Some(last) = trailing_attribute(&toks, k) {
                let end = toks[last].at + toks[last].text.len();
                out.push((t.at, " ".repeat(end - t.at)));
            }
        }
    }
    (out, inserts)
}

/// Whether token `k` is a macro standing for qualifiers or specifiers:
/// a name that is not a keyword of the grammar between a `*` and the
/// declared name (`* RESTRICT a`), between a type keyword or a tag and a
/// `*` (`double RESTRICT *a`, `struct s FAR *p`), before a type or storage-class keyword at a
/// declaration's start (`INLINE void`, `static INLINE double`, `INLINE
/// const void`), or before
/// a type name and a declarator there (`STATIC VEC *v`, `EXTERN T n;`,
/// `typedef STRUCT T *P;`: a declaration has one type), before a parameter's type name and its
/// name (`f(UNUSED Vec v)`), between a type keyword or a `*` and a
/// function's name (`int MPIAPI f(`, `char * EXPORT f(`), or before the
/// `*` of a function pointer's declarator after a type keyword (`void
/// (CDECL *f)(int)`).
fn qualifier_macro(toks: &[LineTok<'_>], k: usize) -> bool {
    let t = toks[k];
    if !t.is_word() {
        return false;
    }
    let prev = k.checked_sub(1).map(|p| toks[p].text);
    let next = toks.get(k + 1).map(|n| n.text);
    let after_next = toks.get(k + 2).map(|n| n.text);
    let word_at = |x: Option<&str>| {
        x.is_some_and(|x| x.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic()))
    };
    let name_at = |x: Option<&str>| word_at(x) && x.is_some_and(|x| !grammar_keyword(x));
    let pointer_qualifier = prev == Some("*") && word_at(next) && after_next != Some("(");
    // (also after a tag, `struct s FAR *p`: nothing but a declarator
    // follows a tag. After a type name, `T FAR *p` and `STATIC VEC *v`
    // cannot be told apart)
    let before_prev = k.checked_sub(2).map(|p| toks[p].text);
    let typed = prev.is_some_and(|p| TYPE_KEYWORDS.contains(&p))
        || name_at(prev) && matches!(before_prev, Some("struct" | "union" | "enum"));
    let type_qualifier = typed && next == Some("*");
    // (before a qualifier too when a type follows it: `INLINE const void
    // *f(`, `INLINE const T *f(`; `T const x` is a type name's)
    let qualified = matches!(next, Some("const" | "volatile"))
        && (after_next.is_some_and(|n| SPECIFIER_KEYWORDS.contains(&n))
            || name_at(after_next)
                && toks
                    .get(k + 3)
                    .is_some_and(|t| t.text == "*" || name_at(Some(t.text))));
    let specifier = (next.is_some_and(|n| SPECIFIER_KEYWORDS.contains(&n)) || qualified)
        && prev.is_none_or(|p| {
            matches!(p, ";" | "{" | "}" | "(" | ",") || SPECIFIER_KEYWORDS.contains(&p)
        });
    let storage = |x: &str| STORAGE_KEYWORDS.contains(&x);
    let before_type = (k == 0
        || matches!(prev, Some(";" | "{" | "}" | "typedef"))
        || prev.is_some_and(storage)
        // a parameter's (`f(UNUSED Vec v)`): `(` or `,` before it, a
        // name and a declarator after (a parameter has one type)
        || matches!(prev, Some("(" | ","))
            && (after_next == Some("*")
                || toks.get(k + 3).is_some_and(|t| matches!(t.text, "," | ")" | "["))))
        && name_at(next)
        && (after_next == Some("*") || name_at(after_next));
    // a calling convention or export macro between a type keyword (or
    // the `*` of a pointer returned) and a function's name (`int MPIAPI
    // f(`, `void EXPORT g(`, `const char * ZEXPORT v(`): one declarator
    let convention = prev.is_some_and(|p| TYPE_KEYWORDS.contains(&p) || p == "*")
        && name_at(next)
        && after_next == Some("(");
    // a calling convention in a function pointer's declarator after a
    // type keyword or a `*` (`void (CDECL *f)(int)`, `char *(WINAPI
    // *g)(void)`: no expression has a type keyword before its `(`)
    let pointer_convention = prev == Some("(")
        && before_prev.is_some_and(|p| TYPE_KEYWORDS.contains(&p) || p == "*")
        && next == Some("*")
        && name_at(after_next)
        && toks.get(k + 3).is_some_and(|t| t.text == ")");
    (pointer_qualifier || type_qualifier || specifier || before_type || convention || pointer_convention)
        && !grammar_keyword(t.text)
}

/// Whether token `k` is C99's `_Complex` or `_Imaginary` (or GNU
/// `__complex__`), which tree-sitter-c does not know, or `<complex.h>`'s
/// `complex`/`imaginary` next to a floating type (`double complex z`,
/// `complex double *w`). Blanked: the variable reads as its real type,
/// which changes no subscript, alias or loop the analysis looks at.
///
/// Also AltiVec's `vector` (and `__vector`) before a type keyword
/// (`vector unsigned int`, `vector float`: POWER code built with
/// `-maltivec`; no variable named so is followed by one), with the `bool`
/// of `vector bool int`. Blanked: the variable reads as one element.
fn complex_specifier(toks: &[LineTok<'_>], k: usize) -> bool {
    match toks[k].text {
        "_Complex" | "__complex__" | "_Imaginary" => true,
        "vector" | "__vector" => toks.get(k + 1).is_some_and(|n| {
            TYPE_KEYWORDS.contains(&n.text) || matches!(n.text, "bool" | "__bool" | "pixel" | "__pixel")
        }),
        // (`vector bool int`: a vector of truth values, read as `int`)
        "bool" | "__bool" => {
            k.checked_sub(1).is_some_and(|p| matches!(toks[p].text, "vector" | "__vector"))
                && toks.get(k + 1).is_some_and(|n| TYPE_KEYWORDS.contains(&n.text))
        }
        "complex" | "imaginary" => {
            let prev = k.checked_sub(1).map(|p| toks[p].text);
            let next = toks.get(k + 1).map(|n| n.text);
            let floating = |x: Option<&str>| matches!(x, Some("float" | "double" | "long"));
            let declarator =
                |x: Option<&str>| x.is_some_and(|x| x == "*" || x == ")" || toks[k + 1].is_word());
            (floating(prev) && declarator(next)) || floating(next)
        }
        _ => false,
    }
}

/// The Cilk Plus keyword at token `k`, in C: `for` for `_Cilk_for` and
/// `cilk_for` before `(`, nothing for `_Cilk_spawn` and `cilk_spawn`.
fn cilk_keyword(toks: &[LineTok<'_>], k: usize) -> Option<&'static str> {
    match toks[k].text {
        "_Cilk_for" | "cilk_for" if toks.get(k + 1).is_some_and(|n| n.text == "(") => Some("for"),
        "_Cilk_spawn" | "cilk_spawn" => Some(""),
        _ => None,
    }
}

/// When token `k` is a GNU attribute after a variable's declarator
/// (`float t[64] __attribute__((aligned(64)));`, `int x
/// __attribute__((unused)) = 0;`), which tree-sitter-c reads only before
/// a declaration, the token that closes it. (After a function's
/// parameters, `f(int) __attribute__((const))`, it parses and is read.)
fn trailing_attribute(toks: &[LineTok<'_>], k: usize) -> Option<usize> {
    if !matches!(toks[k].text, "__attribute__" | "__attribute") {
        return None;
    }
    let prev = toks.get(k.checked_sub(1)?)?;
    if !(prev.text == "]" || prev.is_word() && !grammar_keyword(prev.text)) {
        return None;
    }
    if toks.get(k + 1)?.text != "(" {
        return None;
    }
    let close = matching_close(toks, k + 1)?;
    matches!(toks.get(close + 1)?.text, ";" | "," | "=").then_some(close)
}

/// The index of the `)` that closes the `(` at token `open`, on the line.
fn matching_close(toks: &[LineTok<'_>], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    (open..toks.len()).find(|&j| match toks[j].text {
        "(" => {
            depth += 1;
            false
        }
        ")" => {
            depth = depth.saturating_sub(1);
            depth == 0
        }
        _ => false,
    })
}

/// When token `k` is a `*` ending a macro argument that is a type
/// (`va_arg(ap, VEC **)`, `NEW_A(n, Real *)`: a `*` before `,` or `)` is no
/// expression), the first `*` of its run; in the parentheses of a cast, a
/// `sizeof` or a prototype such a `*` is valid and stays.
fn type_argument_stars(toks: &[LineTok<'_>], k: usize) -> Option<usize> {
    if toks[k].text != "*"
        || !toks.get(k + 1).is_some_and(|n| matches!(n.text, ")" | ","))
        || !in_call_arguments(toks, k)
    {
        return None;
    }
    let mut first = k;
    while first > 0 && toks[first - 1].text == "*" {
        first -= 1;
    }
    Some(first)
}

/// When token `k` starts a macro argument that is a type of several
/// keywords (`NEW_A(n, unsigned int)`, `va_arg(ap, long double)`), the
/// last keyword: the ones before it are blanked (one keyword alone parses,
/// as a name).
fn type_argument_keywords(toks: &[LineTok<'_>], k: usize) -> Option<usize> {
    let is_type = |j: usize| toks.get(j).is_some_and(|t| TYPE_KEYWORDS.contains(&t.text));
    if !is_type(k) || !is_type(k + 1) || !matches!(toks.get(k.checked_sub(1)?)?.text, "(" | ",") {
        return None;
    }
    let mut last = k + 1;
    while is_type(last + 1) {
        last += 1;
    }
    let mut end = last + 1;
    while toks.get(end).is_some_and(|t| t.text == "*") {
        end += 1;
    }
    (toks.get(end).is_some_and(|t| matches!(t.text, ")" | ",")) && in_call_arguments(toks, k))
        .then_some(last)
}

/// Whether token `k` is the `struct`, `union` or `enum` of a macro
/// argument that is a tagged type (`hypre_TAlloc(struct box, n, where)`,
/// `NEW(union cell *)`): blanked, the tag reads as a name.
fn type_argument_tag(toks: &[LineTok<'_>], k: usize) -> bool {
    if !matches!(toks[k].text, "struct" | "union" | "enum")
        || !k
            .checked_sub(1)
            .is_some_and(|p| matches!(toks[p].text, "(" | ","))
        || !toks.get(k + 1).is_some_and(|n| n.is_word())
    {
        return false;
    }
    let mut end = k + 2;
    while toks.get(end).is_some_and(|t| t.text == "*") {
        end += 1;
    }
    toks.get(end).is_some_and(|t| matches!(t.text, ")" | ",")) && in_call_arguments(toks, k)
}

/// Whether token `k` is inside the argument list of a call on its line
/// (the `(` around it follows a name that is no keyword), not a
/// prototype's parameters (`void f(int *, double *);`, `VEC *g(MAT *)`:
/// the name follows a type or a `*`).
fn in_call_arguments(toks: &[LineTok<'_>], k: usize) -> bool {
    let mut depth = 0usize;
    let Some(open) = toks[..k].iter().rposition(|o| match o.text {
        ")" => {
            depth += 1;
            false
        }
        "(" if depth == 0 => true,
        "(" => {
            depth -= 1;
            false
        }
        _ => false,
    }) else {
        return false;
    };
    let Some(callee) = open.checked_sub(1).and_then(|c| toks.get(c)) else {
        return false;
    };
    let declared = open
        .checked_sub(2)
        .and_then(|p| toks.get(p))
        .is_some_and(|p| p.text == "*" || p.is_word() && p.text != "return");
    callee.is_word() && !grammar_keyword(callee.text) && !declared
}

/// One line of C for [`bare_macros`].
struct CodeLine {
    start: usize,
    /// The line with comments and string and character literals blanked.
    code: String,
    /// Open braces before the line.
    depth: usize,
    /// A preprocessor line or one of its continuations.
    directive: bool,
}

fn code_lines(b: &[u8]) -> Vec<CodeLine> {
    let mut out = Vec::new();
    let mut in_comment = false;
    let mut depth = 0usize;
    let mut continued_directive = false;
    let mut start = 0;
    while start <= b.len() {
        let end = b[start..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |i| start + i);
        let raw = &b[start..end];
        let first = raw.iter().position(|c| !c.is_ascii_whitespace());
        let directive =
            continued_directive || (!in_comment && first.is_some_and(|i| raw[i] == b'#'));
        continued_directive = directive && raw.trim_ascii_end().ends_with(b"\\");
        let mut code = Vec::with_capacity(raw.len());
        let line_depth = depth;
        let mut i = 0;
        while i < raw.len() {
            let c = raw[i];
            if in_comment {
                if c == b'*' && raw.get(i + 1) == Some(&b'/') {
                    in_comment = false;
                    code.extend_from_slice(b"  ");
                    i += 2;
                } else {
                    code.push(b' ');
                    i += 1;
                }
                continue;
            }
            match c {
                b'/' if raw.get(i + 1) == Some(&b'*') => {
                    in_comment = true;
                    code.extend_from_slice(b"  ");
                    i += 2;
                }
                b'/' if raw.get(i + 1) == Some(&b'/') => break,
                b'"' | b'\'' => {
                    let mut j = i + 1;
                    while j < raw.len() && raw[j] != c {
                        j += if raw[j] == b'\\' { 2 } else { 1 };
                    }
                    let j = (j + 1).min(raw.len());
                    code.push(b'0');
                    code.resize(code.len() + (j - i - 1), b' ');
                    i = j;
                }
                _ => {
                    if !directive {
                        match c {
                            b'{' => depth += 1,
                            b'}' => depth = depth.saturating_sub(1),
                            _ => {}
                        }
                    }
                    code.push(c);
                    i += 1;
                }
            }
        }
        out.push(CodeLine {
            start,
            code: String::from_utf8_lossy(&code).into_owned(),
            depth: line_depth,
            directive,
        });
        start = end + 1;
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    /// An identifier or keyword.
    Word,
    /// A balanced `( ... )` at top level.
    Parens,
    /// A balanced `{ ... }` at top level.
    Body,
    /// `;` at top level.
    Semi,
    /// A preprocessor line (it ends any declaration).
    Directive,
    /// Anything else (`*`, `[2]`, `=`, numbers, strings...).
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Tok,
    start: usize,
    end: usize,
}

impl Token {
    /// The token's text in `text`, the text it was read from.
    fn in_text<'a>(&self, text: &'a str) -> &'a str {
        text.get(self.start..self.end).unwrap_or("")
    }
}

/// The top level of `text` as tokens: comments dropped, string and
/// character literals and everything inside brackets folded into one
/// token. Unbalanced brackets run to the end of the text.
fn top_level_tokens(text: &str) -> Vec<Token> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let start = i;
        if c == b'#' && line_start {
            i = directive_end(b, i);
            out.push(Token {
                kind: Tok::Directive,
                start,
                end: i,
            });
            continue;
        }
        line_start = false;
        if let Some(end) = comment_end(b, i) {
            // a comment may hold line ends: what follows on a new line
            // can still be a directive
            line_start = b[start..end].contains(&b'\n') && b[start + 1] == b'*' && {
                let tail = &b[start..end];
                let last_nl = tail.iter().rposition(|&x| x == b'\n').unwrap_or(0);
                tail[last_nl..].iter().all(|x| x.is_ascii_whitespace())
            };
            i = end;
            continue;
        }
        let kind = match c {
            b'(' | b'{' | b'[' => {
                i = bracket_end(b, i);
                match c {
                    b'(' => Tok::Parens,
                    b'{' => Tok::Body,
                    _ => Tok::Other,
                }
            }
            b'"' | b'\'' => {
                i = literal_end(b, i);
                Tok::Other
            }
            b';' => {
                i += 1;
                Tok::Semi
            }
            c if c == b'_' || c.is_ascii_alphabetic() => {
                while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                Tok::Word
            }
            _ => {
                // one byte (or a whole UTF-8 character)
                i += 1;
                while i < b.len() && (b[i] & 0xC0) == 0x80 {
                    i += 1;
                }
                Tok::Other
            }
        };
        out.push(Token {
            kind,
            start,
            end: i,
        });
    }
    out
}

/// The end of the comment starting at `i`, if one does.
fn comment_end(b: &[u8], i: usize) -> Option<usize> {
    if b[i] != b'/' {
        return None;
    }
    match b.get(i + 1) {
        Some(b'/') => Some(line_end(b, i)),
        Some(b'*') => {
            let mut j = i + 2;
            while j + 1 < b.len() && !(b[j] == b'*' && b[j + 1] == b'/') {
                j += 1;
            }
            Some((j + 2).min(b.len()))
        }
        _ => None,
    }
}

/// The end of the line holding `i`, continuations (`\` at the end)
/// included.
fn line_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'\n') {
            i += 2;
            continue;
        }
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') {
            i += 3;
            continue;
        }
        i += 1;
    }
    i
}

/// The end of the preprocessor line starting at `i`: its continuations
/// and a block comment that starts on it.
fn directive_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        if let Some(end) = comment_end(b, i) {
            if b[i + 1] == b'/' {
                return end;
            }
            i = end;
            continue;
        }
        if b[i] == b'\\' && matches!(b.get(i + 1), Some(b'\n' | b'\r')) {
            i += if b[i + 1] == b'\r' { 3 } else { 2 };
            continue;
        }
        i += 1;
    }
    i
}

/// The end of the string or character literal starting at `i` (at the
/// line's end when unterminated).
fn literal_end(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() && b[j] != q && b[j] != b'\n' {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    (j + 1).min(b.len())
}

/// The end of the bracket opened at `i` (the text's end when it is not
/// closed), through comments and literals.
fn bracket_end(b: &[u8], i: usize) -> usize {
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        if let Some(end) = comment_end(b, j) {
            j = end;
            continue;
        }
        match b[j] {
            b'"' | b'\'' => {
                j = literal_end(b, j);
                continue;
            }
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node as the comparison sees it: kind, byte range, field, whether
    /// ERROR, whether MISSING.
    type Seen = (u16, usize, usize, Option<&'static str>, bool, bool);

    /// Every node of a tree, in pre-order.
    fn nodes(tree: &tree_sitter::Tree) -> Vec<Seen> {
        let mut out = Vec::new();
        let mut c = tree.walk();
        loop {
            let n = c.node();
            out.push((
                n.kind_id(),
                n.start_byte(),
                n.end_byte(),
                c.field_name(),
                n.is_error(),
                n.is_missing(),
            ));
            if c.goto_first_child() {
                continue;
            }
            while !c.goto_next_sibling() {
                if !c.goto_parent() {
                    return out;
                }
            }
        }
    }

    /// The repaired text of `text` parsed incrementally from its own parse
    /// edited with the repairs' edits, when it reads without a syntax
    /// error, is the tree a parse from scratch gives (node for node,
    /// positions included); false when there is nothing to compare (no
    /// repair, no edits, or errors left).
    fn reparse_matches(text: &str, what: &std::path::Path) -> bool {
        let repairs = repairs(text, &[]);
        if repairs.is_empty() {
            return false;
        }
        let (typed, _, edits) = repairs.apply_with_edits(text);
        let Some(edits) = edits else {
            return false;
        };
        let grammar = csa_grammars::Grammar::C;
        let mut old = csa_grammars::parse(grammar, text).unwrap();
        for e in &edits {
            old.edit(e);
        }
        let incremental = csa_grammars::reparse(grammar, &typed, &old).unwrap();
        if super::super::misreadings(&incremental) > 0 {
            // (the front end parses such a text from scratch)
            return false;
        }
        let fresh = csa_grammars::parse(grammar, &typed).unwrap();
        assert!(nodes(&incremental) == nodes(&fresh), "{}", what.display());
        assert_eq!(
            incremental.root_node().end_position(),
            fresh.root_node().end_position()
        );
        true
    }

    /// The incremental reparse of `lower_repaired` on every C fixture (and
    /// on the C files under `CSA_LINT_REPARSE_DIR`, when set: a real tree).
    #[test]
    fn incremental_reparse_of_repairs_is_a_fresh_parse() {
        let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/c")];
        dirs.extend(std::env::var_os("CSA_LINT_REPARSE_DIR").map(std::path::PathBuf::from));
        let mut checked = 0;
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                    continue;
                }
                if !matches!(p.extension().and_then(|x| x.to_str()), Some("c" | "h")) {
                    continue;
                }
                let Ok(raw) = std::fs::read(&p) else {
                    continue;
                };
                let text = String::from_utf8_lossy(&raw).into_owned();
                checked += usize::from(reparse_matches(&text, &p));
            }
        }
        assert!(checked >= 15, "{checked} repaired fixtures");
    }

    #[test]
    fn finds_definitions_without_a_type() {
        let text = "double a[10];\n\
                    /* a comment */\n\
                    scale(n)\n  int n;\n{\n  return n;\n}\n\
                    #define X 1\n\
                    main(int argc, char *argv[])\n{\n  return 0;\n}\n\
                    int typed(int x) { return x; }\n\
                    proto();\n\
                    kr(a, b) int a; char *b; { return a; }\n\
                    M(x)\n\
                    missed(a) int a; { return a; }\n";
        let found: Vec<&str> = implicit_int(text)
            .iter()
            .map(|&p| &text[p..p + text[p..].find('(').unwrap()])
            .collect();
        // (a definition right after a macro invocation with no `;` is
        // missed: `M(x) missed(a) int a; {` reads as one declaration)
        assert_eq!(found, ["scale", "main", "kr"]);
    }

    #[test]
    fn storage_classes_and_declarations_without_a_type() {
        let text = "extern layer_size;\n\
                    static f(x) int x; { return x; }\n\
                    static a[10], b = 1;\n\
                    g(w, m)\nfloat **w;\nint m;\n{\n}\n\
                    h(v)\nint v;\n{\n}\n\
                    extern int typed;\n\
                    static T named;\n";
        let found: Vec<&str> = implicit_int(text)
            .iter()
            .map(|&p| {
                let end = text[p..].find(['(', ';', '[', ',']).unwrap();
                &text[p..p + end]
            })
            .collect();
        // (the definition after an old-style one is found too)
        assert_eq!(found, ["layer_size", "f", "a", "g", "h"]);
    }

    #[test]
    fn old_style_definitions_returning_pointers() {
        let text = "double *shift(a, n, m)\ndouble a[], *b;\nint n;\n{\n  return a;\n}\n\
                    VEC *mv(in, i0, out)\nVEC *in /* , *x */, *out;\nunsigned int i0;\n{ return out; }\n\
                    char **names(k) int (*k)(); { return 0; }\n\
                    int plain(a) int a; { return a; }\n\
                    double *proto(double *a);\n";
        let (typed, _) = repairs(text, &[]).apply(text);
        assert_eq!(
            typed,
            "double *shift(double a[], int n, int m       )\n               \n      \n{\n  return a;\n}\n\
             VEC *mv(VEC *in, unsigned int i0, VEC *out           )\n                         \n                \n{ return out; }\n\
             char **names(int (*k)() )             { return 0; }\n\
             int plain(a) int a; { return a; }\n\
             double *proto(double *a);\n"
        );
    }

    #[test]
    fn keywords_literals_and_comments_are_not_definitions() {
        let text = "char *s = \"g(y) { }\";\n\
                    // h(z) { }\n\
                    /* i(w) { } */\n\
                    struct S { int v; } w(void) { }\n\
                    static int t(x) { }\n";
        assert_eq!(implicit_int(text), Vec::<usize>::new());
    }

    #[test]
    fn macros_used_as_statements_without_a_semicolon() {
        let text = "void f(int n, double *a) {\n\
                    \x20 OMP_FOR()\n\
                    \x20 for (int i = 0; i < n; i++) {\n\
                    \x20   OMP_SIMD // a comment\n\
                    \x20   for (int j = 0; j < n; j++) a[j] = 0;\n\
                    \x20 }\n\
                    \x20 x = f(a,\n\
                    \x20       b);\n\
                    \x20 y = 1 +\n\
                    \x20   g(z)\n\
                    \x20   + 2;\n\
                    \x20 FOR_EACH(i)\n\
                    \x20 {\n\
                    \x20 }\n\
                    \x20 return\n\
                    \x20 n;\n\
                    }\n\
                    int\n\
                    main(void)\n\
                    {\n\
                    }\n";
        let found: Vec<&str> = bare_macros(text)
            .iter()
            .map(|&e| {
                let s = text[..e].rfind(['\n', ' ']).unwrap() + 1;
                &text[s..e]
            })
            .collect();
        assert_eq!(found, ["OMP_FOR()", "OMP_SIMD"]);
    }

    #[test]
    fn instantiating_macros_at_the_end_of_a_file() {
        let text = "#define GENTFUNC(ctype, ch) void ch##copy(ctype *x) { *x = 0; }\n\
                    INSERT_GENTFUNC_BASIC( copy )\n\
                    INSERT_GENTFUNC_MIX( copy )\n\
                    void check\n  (int x);\n\
                    GENTPROT( swap )\n\
                    \n#undef GENTFUNC\n";
        let found: Vec<&str> = bare_macros(text)
            .iter()
            .map(|&e| &text[text[..e].rfind('\n').unwrap() + 1..e])
            .collect();
        assert_eq!(
            found,
            ["INSERT_GENTFUNC_BASIC( copy )", "INSERT_GENTFUNC_MIX( copy )", "GENTPROT( swap )"]
        );
    }

    #[test]
    fn macros_that_are_a_whole_block_on_their_line() {
        let text = "void f(int *p, int *q, int n) {\n\
                    \x20 if (*p > *q)\n\
                    \x20   {SWAP(*p, *q)}\n\
                    \x20 for (int i = 0; i < n; i++) { SWAP(p[i], q[i]) }\n\
                    \x20 if (n) { g(n); }\n\
                    \x20 if (n) { x = MAX(n, 1) }\n\
                    \x20 {f(n)} {h(n)}\n\
                    \x20 {SWAP(p[0], q[0]) SWAP(p[1], q[1])}\n\
                    \x20 {A B(n)}\n\
                    }\n";
        let found: Vec<&str> = bare_macros(text)
            .iter()
            .map(|&e| {
                let s = text[..e].rfind('{').unwrap() + 1;
                text[s..e].trim_start()
            })
            .collect();
        // (an assignment is no use; only the last block of a line is read)
        // (several uses each need arguments)
        assert_eq!(
            found,
            ["SWAP(*p, *q)", "SWAP(p[i], q[i])", "h(n)", "SWAP(p[0], q[0])", "SWAP(p[0], q[0]) SWAP(p[1], q[1])"]
        );
    }

    /// The repaired text of `text` (rewrites and insertions).
    fn repaired(text: &str, defines: &[String]) -> String {
        repairs(text, defines).apply(text).0
    }

    #[test]
    fn macros_standing_for_type_names_and_tags() {
        let cases = [
            (
                "typedef PICK(double, float) vec_t;",
                "typedef PICK                vec_t;",
            ),
            ("struct NAME(h) { int id; };", "struct NAME    { int id; };"),
            ("typedef struct NAME(h) *hp;", "typedef struct NAME    *hp;"),
        ];
        for (text, want) in cases {
            assert_eq!(repaired(text, &[]), want, "{text}");
        }
        // a function pointer type, a declared function, a call
        for text in [
            "typedef size_t (*hook)(void);",
            "typedef int (f)(int);",
            "struct s f(int x);",
            "int x = PICK(1, 2);",
        ] {
            assert!(macro_type_names(text, &top_level_tokens(text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn prototype_parameters_unwrapped_from_a_macro() {
        let cases = [
            ("void f P((int a));", "void f   (int a) ;"),
            (
                "double mean\nPROTO( ( const double *, int ) );",
                "double mean\n       ( const double *, int )  ;",
            ),
            ("int g P((T *)), h P((void));", "int g   (T *) , h   (void) ;"),
        ];
        for (text, want) in cases {
            assert_eq!(repaired(text, &[]), want, "{text}");
        }
        // not a wrapper: no type before, a plain call, two lists, a body
        for text in [
            "f P((int a));",
            "int x = g((1));",
            "int f P((int), (int));",
            "int f P((int)) { return 0; }",
        ] {
            assert!(prototype_wrappers(text, &top_level_tokens(text)).0.is_empty(), "{text}");
        }
    }

    #[test]
    fn only_a_macro_heading_a_block_becomes_a_loop() {
        let text = "void f(int n) {\n\
                    \x20 FOR_EACH(i, n) {\n  }\n\
                    \x20 x = g(n)\n  {\n  }\n\
                    \x20 _Pragma(\"omp section\")\n  {\n  }\n\
                    \x20 if (n)\n  {\n  }\n\
                    \x20 h(n);\n  {\n  }\n\
                    }\n\
                    FOR_EACH(i, n)\n{\n}\n";
        let lines = code_lines(text.as_bytes());
        let at: Vec<(usize, String)> = loop_macros(&lines);
        let first = text.find("FOR_EACH").unwrap();
        let close = first + "FOR_EACH(i, n)".len();
        assert_eq!(
            at,
            vec![(first, "while (".to_string()), (close, ")".to_string())]
        );
    }

    #[test]
    fn pragma_words_in_macro_arguments_are_blanked() {
        let text = "void f(int n, double *a) {\n\
                    \x20 double s = 0;\n\
                    \x20 OMP_FOR_REDUCE( +:s )\n\
                    \x20 for (int i = 0; i < n; i++) s += a[i];\n\
                    \x20 OMP_TARGET( teams distribute )\n\
                    \x20 for (int i = 0; i < n; i++) a[i] = 0;\n\
                    \x20 TRACE(n, a[0] ? 1 : 2)\n\
                    \x20 g(n);\n\
                    \x20 OMP_DATA( map(to: a[0:n]) )\n\
                    \x20 {\n\
                    \x20 }\n\
                    \x20 LOOP(i, n)\n\
                    \x20 {\n\
                    \x20 }\n\
                    }\n";
        let out = repaired(text, &[]);
        assert_eq!(out.len(), text.len() + 4 + "while ()".len());
        assert!(out.contains("OMP_FOR_REDUCE(     );\n"), "{out}");
        assert!(out.contains("OMP_TARGET(                  );\n"), "{out}");
        // expressions, a `?:` among them, stay
        assert!(out.contains("TRACE(n, a[0] ? 1 : 2);\n"), "{out}");
        // words before a block: a `;`; a loop macro with expressions: a
        // loop header (`loop_macros`)
        assert!(out.contains("OMP_DATA(                 );\n  {"), "{out}");
        assert!(out.contains("while (LOOP(i, n))\n  {"), "{out}");
    }

    #[test]
    fn macros_after_a_control_header() {
        let text = "void f(int n) {\n\
                    \x20 if (g(n) != 12) ERR_EXIT(E_READ)\n\
                    \x20 if (g(n) != 1 ||\n\
                    \x20     g(0) != 2) ERR_EXIT(E_OTHER)\n\
                    \x20 else LOG(n)\n\
                    \x20 for (int i = 0; i < n; i++) TOUCH(i)\n\
                    \x20 x = h(n) + ERR_EXIT(1)\n\
                    \x20   + 2;\n\
                    \x20 while (n) STEP(n)\n\
                    \x20 {\n\
                    \x20 }\n\
                    }\n";
        let out = repaired(text, &[]);
        for use_ in ["ERR_EXIT(E_READ);", "ERR_EXIT(E_OTHER);", "else LOG(n);", "TOUCH(i);"] {
            assert!(out.contains(use_), "{use_}: {out}");
        }
        // inside an expression, or a loop macro heading a block: nothing
        assert!(out.contains("ERR_EXIT(1)\n"), "{out}");
        assert!(out.contains("STEP(n)\n"), "{out}");
    }

    #[test]
    fn expression_lists() {
        for e in ["a, b", "x + 1, f(y)(z)", "c ? d : e", "p->q.r, *s", "1.5, .5e3"] {
            assert!(expression_list(e), "{e}");
        }
        for e in ["teams distribute", "+:sum", "tile(32) deviceptr(a)", "ordered simd", "a b"] {
            assert!(!expression_list(e), "{e}");
        }
    }

    #[test]
    fn a_name_alone_or_with_no_arguments_before_a_block() {
        let text = "void f(void) {\n  OMP_PARALLEL()\n  OMP_MASTER\n  {\n    g();\n  }\n}\n";
        let out = repaired(text, &[]);
        assert!(out.contains("OMP_PARALLEL();\n  OMP_MASTER;\n  {"), "{out}");
    }

    #[test]
    fn top_level_macro_uses_and_old_style_definitions() {
        let text = "OMP_REQUIRES(unified_address)\n\
                    int main(int argc, char **argv)\n{\n  return 0;\n}\n\
                    scale(n)\n  int n;\n{\n  return n;\n}\n";
        let out = repaired(text, &[]);
        assert!(out.starts_with("OMP_REQUIRES(unified_address);\nint main("), "{out}");
        assert!(out.contains("\nint scale(n)\n  int n;\n{"), "{out}");
    }

    #[test]
    fn complex_specifiers_are_blanked() {
        let text = "typedef double _Complex cplx;\n\
                    float complex z, *w;\n\
                    complex double u;\n\
                    void f(__complex__ double *a, double complex b);\n\
                    double complex;\n\
                    long complex = 1;\n";
        let out = repaired(text, &[]);
        assert_eq!(out.len(), text.len());
        assert!(out.contains("typedef double          cplx;"), "{out}");
        assert!(out.contains("float         z, *w;"), "{out}");
        assert!(out.contains("        double u;"), "{out}");
        assert!(out.contains("void f(            double *a, double         b);"), "{out}");
        // a variable named `complex` stays
        assert!(out.contains("double complex;"), "{out}");
        assert!(out.contains("long complex = 1;"), "{out}");
        // AltiVec vectors; a variable named `vector`
        let text = "const vector unsigned int m = { 0, 1, 2, 3 };\n\
                    __vector float v;\n\
                    vector bool int b;\n\
                    double vector[4];\nint n = vector[0] + 1;\n";
        let out = repaired(text, &[]);
        assert!(out.contains("const        unsigned int m"), "{out}");
        assert!(out.contains("         float v;"), "{out}");
        assert!(out.contains("            int b;"), "{out}");
        assert!(out.contains("double vector[4];\nint n = vector[0] + 1;"), "{out}");
    }

    #[test]
    fn known_qualifier_macros_are_rewritten_wherever_they_stand() {
        // defined by the file, or (as `analysis::header_macros` passes
        // them) by the headers it includes
        let text = "#define FAR\n\
                    #define RATEMAX \\\n  0.9\n\
                    typedef struct ct { int f; } FAR ct_data;\n\
                    local int FAR * FAR *table;\n\
                    EXTERN int ZEXPORT get(code FAR * FAR *t, double r) {\n\
                    \x20 local int calls;\n\
                    \x20 const code FAR *p = (const code FAR *)(t[0]);\n\
                    \x20 return r > RATEMAX ? 1 : p != 0;\n\
                    }\n";
        let defines = [
            "local=static".to_string(),
            "ZEXPORT=".to_string(),
            "EXTERN=extern".to_string(),
        ];
        let out = repaired(text, &defines);
        assert_eq!(out.len(), text.len() + 2 * "static ".len());
        assert!(out.contains("}     ct_data;"), "{out}");
        // `static` does not fit in `local`: inserted before it
        assert!(out.contains("\nstatic       int     *     *table;"), "{out}");
        assert!(out.contains("\n  static       int calls;"), "{out}");
        assert!(out.contains("extern int         get(code     *     *t, double r)"), "{out}");
        assert!(out.contains("(const code     *)(t[0])"), "{out}");
        // a body continued on the next line is no qualifier list
        assert!(out.contains("r > RATEMAX ?"), "{out}");
    }

    #[test]
    fn qualifier_and_specifier_macros() {
        let text = "#define MY_RESTRICT __restrict__\n\
                    #define SHORT __restrict__\n\
                    #define FORCE_INLINE __attribute__((always_inline)) inline\n\
                    EXPORT int n;\n\
                    static INLINE double f(double * RESTRICT a, double * MY_RESTRICT b);\n\
                    FORCE_INLINE static void g(void);\n\
                    void h(int * SHORT p, long RESTRICT *q) {\n\
                    \x20 double * RESTRICT c = 0, * RESTRICT d;\n\
                    }\n\
                    INLINE const void *k(const T *t) { T const u = *t; return 0; }\n\
                    INLINE const T *m(void) { return 0; }\n\
                    int MPIAPI send(int n);\n\
                    void EXPORT_API swap(float *x) { long double y(void); int z, w(int); }\n";
        let out = repaired(text, &[]);
        assert_eq!(out.len(), text.len());
        assert!(out.contains("\n       int n;"), "{out}");
        // before a qualifier and a type keyword; a type name before a
        // qualifier stays
        assert!(out.contains("\n       const void *k(const T *t) { T const u"), "{out}");
        assert!(out.contains("\n       const T *m(void)"), "{out}");
        assert!(out.contains("\nint        send(int n);"), "{out}");
        assert!(out.contains("\nvoid            swap(float *x) { long double y(void); int z, w(int); }"), "{out}");
        assert!(
            out.contains("static        double f(double *          a, double * restrict    b)"),
            "{out}"
        );
        assert!(out.contains("\ninline       static void g"), "{out}");
        // `restrict` does not fit in `SHORT`: blanked
        assert!(out.contains("(int *       p, long          *q)"), "{out}");
        assert!(out.contains("double *          c = 0, *          d;"), "{out}");
        // what the configuration defines, unless the file does
        let defines = ["RESTRICT=restrict".to_string(), "MY_RESTRICT=".to_string()];
        let out = repaired(text, &defines);
        assert!(
            out.contains("(double * restrict a, double * restrict    b)"),
            "{out}"
        );
    }

    #[test]
    fn macros_longer_than_a_format_width() {
        // (fuzz seed 104375315930711 input 7: `format!` widths stop at
        // u16::MAX)
        let name = "R".repeat(70_000);
        let text = format!("void f(double * {name} a) {{\n  _Cilk_for{name} (;;) ;\n}}\n");
        let (out, _) = repairs(&text, &[]).apply(&text);
        assert_eq!(out.len(), text.len());
        assert!(out.starts_with("void f(double *        "));
    }

    #[test]
    fn leading_macros_and_type_arguments() {
        let text = "void f(int n, ...) {\n\
                    \x20 STATIC VEC *r = VNULL, *p;\n\
                    \x20 EXTERN T count;\n\
                    \x20 while (par = va_arg(ap, VEC **)) n++;\n\
                    \x20 p = NEW_A(n, Real *);\n\
                    \x20 q = (Real **)NULL;\n\
                    \x20 n = sizeof(VEC *);\n\
                    \x20 void g(int *, double *);\n\
                    \x20 return va_arg(ap, T *);\n\
                    }\n\
                    static VEC *h(MAT *, VEC *);\n";
        let out = repaired(text, &[]);
        assert!(out.contains("\n         VEC *r = VNULL, *p;"), "{out}");
        assert!(out.contains("\n         T count;"), "{out}");
        assert!(out.contains("va_arg(ap, VEC   ))"), "{out}");
        assert!(out.contains("NEW_A(n, Real  );"), "{out}");
        assert!(out.contains("(Real **)NULL") && out.contains("sizeof(VEC *)"), "{out}");
        // prototypes keep their abstract declarators
        assert!(out.contains("void g(int *, double *);"), "{out}");
        assert!(out.contains("static VEC *h(MAT *, VEC *);"), "{out}");
        assert!(out.contains("return va_arg(ap, T  );"), "{out}");
        let text = "void f(int n) {\n\
                    \x20 p = NEW_A(n, unsigned int);\n\
                    \x20 q = RENEW(q, n, unsigned long long *);\n\
                    \x20 r = (unsigned int *)s + sizeof(unsigned long);\n\
                    }\n\
                    void g(unsigned int, long double *);\n";
        let out = repaired(text, &[]);
        assert!(out.contains("NEW_A(n,          int);"), "{out}");
        assert!(out.contains("RENEW(q, n,               long  );"), "{out}");
        assert!(out.contains("r = (unsigned int *)s + sizeof(unsigned long);"), "{out}");
        assert!(out.contains("void g(unsigned int, long double *);"), "{out}");
    }

    #[test]
    fn attributes_after_declarators() {
        let text = "int g __attribute__((unused));\n\
                    int sq(int) __attribute__((const));\n\
                    void f(void) {\n\
                    \x20 float t[16] __attribute__ ((aligned (64)));\n\
                    \x20 float s[4] __attribute__((aligned(64))) = {0.f}, u;\n\
                    \x20 static __attribute__((unused)) int v;\n\
                    }\n";
        let out = repaired(text, &[]);
        assert!(out.starts_with("int g                        ;\n"), "{out}");
        assert!(out.contains("int sq(int) __attribute__((const));"), "{out}");
        assert!(out.contains(&format!("float t[16]{};", " ".repeat(31))), "{out}");
        assert!(out.contains("float s[4]                              = {0.f}, u;"), "{out}");
        assert!(out.contains("static __attribute__((unused)) int v;"), "{out}");
    }

    #[test]
    fn valid_declarations_are_not_repaired() {
        // keywords of the grammar, typedef names, expressions
        let text = "void f(int * const p, double * __restrict__ q, char *restrict r) {\n\
                    \x20 size_t const n = 1;\n\
                    \x20 unsigned long long m = n * k;\n\
                    \x20 x = a * b;\n\
                    \x20 y = *p * c;\n\
                    \x20 T * _Nonnull z;\n\
                    \x20 VEC *v = f(a, b);\n\
                    \x20 struct S *s;\n\
                    \x20 unsigned long u;\n\
                    }\n";
        let r = repairs(text, &[]);
        assert!(r.is_empty(), "{r:?}");
    }

    #[test]
    fn macro_conditions_get_parentheses() {
        let text = "void f(int *p) {\n  if SET(p, (1)) g();\n  while READY g();\n  if (x) g();\n  /* if NOT(x) */\n  if OPEN(p\n    ) g();\n}\n";
        let out = repaired(text, &[]);
        assert!(out.contains("  if (SET(p, (1))) g();"), "{out}");
        assert!(out.contains("  while (READY) g();"), "{out}");
        assert!(out.contains("  if (x) g();"), "{out}");
        assert!(out.contains("/* if NOT(x) */"), "{out}");
        // a call that does not end on its line: left alone
        assert!(out.contains("  if OPEN(p\n"), "{out}");
    }

    #[test]
    fn crlf_line_splices_become_lf_splices() {
        let text = "void f(void) {\r\n  g(\"a\\\r\nb\");\r\n}\r\n#define X 1 \\\r\n + 2\r\n";
        let out = repaired(text, &[]);
        assert_eq!(
            out,
            "void f(void) {\r\n  g(\"a \\\nb\");\r\n}\r\n#define X 1  \\\n + 2\r\n"
        );
        // without a CRLF splice, nothing
        assert!(repairs("void f(void) {\r\n  g(\"a\\nb\");\r\n}\r\n", &[]).is_empty());
    }

    #[test]
    fn cilk_keywords() {
        let text = "void f(int n, double *a) {\n\
                    \x20 _Cilk_for (int i = 0; i < n; i++) a[i] = 0;\n\
                    \x20 cilk_for (int i = 0; i < n; i++) a[i] = 1;\n\
                    \x20 cilk_spawn g(a);\n\
                    \x20 cilk_sync;\n\
                    \x20 int cilk_for_count = 0;\n\
                    }\n";
        let out = repaired(text, &[]);
        assert!(out.contains("\n  for       (int i"), "{out}");
        assert!(out.contains("\n  for      (int i"), "{out}");
        assert!(out.contains("\n             g(a);"), "{out}");
        assert!(out.contains("cilk_sync;") && out.contains("cilk_for_count"), "{out}");
    }

    #[test]
    fn offsets_map_back_to_the_source() {
        let text = "a;\nf(x) {}\ng(y) {}\n";
        let at = implicit_int(text);
        assert_eq!(at, [3, 11]);
        let at: Vec<(usize, &str)> = at.iter().map(|&p| (p, "int ")).collect();
        let (typed, inserted) = insert(text, &at);
        assert_eq!(typed, "a;\nint f(x) {}\nint g(y) {}\n");
        // before, inside and after each inserted type
        let f_in_typed = typed.find("f(").unwrap();
        let g_in_typed = typed.find("g(").unwrap();
        assert_eq!(inserted.to_original(1), 1);
        assert_eq!(inserted.to_original(f_in_typed - 4), 3);
        assert_eq!(inserted.to_original(f_in_typed - 1), 3);
        assert_eq!(inserted.to_original(f_in_typed), 3);
        assert_eq!(inserted.to_original(g_in_typed - 4), 11);
        assert_eq!(inserted.to_original(g_in_typed), 11);
        assert_eq!(inserted.to_original(typed.len()), text.len());
    }
}
