//! Front ends: syntax trees to IR.
//!
//! `c` lowers tree-sitter-c trees, `fortran` lowers tree-sitter-fortran trees
//! (free form directly, fixed form after `csa_grammars::fixed_form`
//! normalisation). Both receive text in which inactive preprocessor branches
//! are already blanked (`csa_grammars::preproc`), and both map every position
//! back to the original text before it enters the IR.
//!
//! Invariant: lowering never fails and never panics. A function with syntax
//! errors is lowered as far as its tree allows and carries
//! `Function::syntax_error`.

pub mod c;
pub(crate) mod callees;
pub(crate) mod fields;
pub(crate) mod flat;
pub mod fortran;
pub mod relevance;

use crate::ir::Function;
use crate::source::Span;

/// Options that change what the front ends see.
#[derive(Clone, Debug, Default)]
pub struct FrontendOptions {
    /// Lower every function body, also those [`relevance`] finds nothing
    /// in for any rule (they are outlines otherwise, see
    /// [`crate::ir::Function::outline`]), and scan every body for
    /// file-wide facts, also those whose text shows they define none. The
    /// diagnostics are the same either way (tested); dumps want the whole
    /// IR.
    pub every_body: bool,
    /// Preprocessor names defined from outside the file (config `defines`,
    /// `NAME` or `NAME=VALUE`): the C repair reads qualifier macros from
    /// them (`RESTRICT=restrict`, see `c::repair`).
    pub defines: Vec<String>,
}

/// The result of lowering one file.
#[derive(Clone, Debug, Default)]
pub struct LoweredFile {
    pub functions: Vec<Function>,
    /// Syntax errors outside any function (ERROR/MISSING nodes at top level).
    pub toplevel_errors: Vec<Span>,
    /// The parser gave up (`csa_grammars::parse_budget`): nothing was
    /// lowered.
    pub parse_gave_up: bool,
}

impl LoweredFile {
    /// What lowering gives when the parser gave up on `text`.
    pub(crate) fn gave_up(text: &str) -> LoweredFile {
        let first_line = text.find('\n').unwrap_or(text.len());
        LoweredFile {
            functions: Vec::new(),
            toplevel_errors: vec![Span::new(0, first_line)],
            parse_gave_up: true,
        }
    }
}

/// Maps byte offsets of the text the parser saw back to the original text.
/// Identity for C and free-form Fortran.
pub trait PosMap {
    fn to_original(&self, offset: usize) -> usize;
}

/// Two maps one after the other: `.0` takes an offset to the text `.1`
/// takes to the original (fixed form normalised after cpp expansion).
pub struct Composed<'a>(pub &'a dyn PosMap, pub &'a dyn PosMap);

impl PosMap for Composed<'_> {
    fn to_original(&self, offset: usize) -> usize {
        self.1.to_original(self.0.to_original(offset))
    }
}

/// The identity map.
pub struct Identity;

impl PosMap for Identity {
    fn to_original(&self, offset: usize) -> usize {
        offset
    }
}

impl PosMap for csa_grammars::fixed_form::Normalized {
    fn to_original(&self, offset: usize) -> usize {
        self.original_offset(offset)
    }
}

/// The most chunks one file is split into for error recovery: each chunk is
/// one more parse of the whole (mostly blank) text.
const MAX_RECOVERY_CHUNKS: usize = 64;

/// Lowers `text` with `lower`, and when a syntax error swallows more than
/// one function (tree-sitter's recovery can fold the rest of the file into
/// one ERROR node), lowers again chunk by chunk, split at lines where a new
/// top-level unit may start (`is_boundary(line)` is true for the line that
/// *ends* a unit). Chunks are parsed with everything outside them blanked,
/// so offsets do not move. `map` converts parser offsets to original ones.
pub fn lower_recovering(
    text: &str,
    map: &dyn PosMap,
    is_boundary: fn(&str) -> bool,
    lower: &dyn Fn(&str) -> LoweredFile,
) -> LoweredFile {
    let full = lower(text);
    if full.parse_gave_up {
        // each part would be parsed again: no recovery
        return full;
    }
    let mut bad: Vec<(usize, usize)> = full
        .functions
        .iter()
        .filter(|f| f.syntax_error.is_some())
        .map(|f| (f.span.start as usize, f.span.end as usize))
        .chain(
            full.toplevel_errors
                .iter()
                .map(|s| (s.start as usize, s.end as usize)),
        )
        .collect();
    if bad.is_empty() {
        return full;
    }
    bad.sort();
    let mut cuts = recovery_cuts(text, map, is_boundary, &bad);
    if cuts.is_empty() {
        return full;
    }
    while cuts.len() + 1 > MAX_RECOVERY_CHUNKS {
        // Keep every other cut: chunks grow, parses stay bounded.
        cuts = cuts.into_iter().step_by(2).collect();
    }
    let mut bounds = vec![0];
    bounds.extend(cuts);
    bounds.push(text.len());
    let mut out = LoweredFile::default();
    for w in bounds.windows(2) {
        let (start, end) = (w[0], w[1]);
        let blanked = blank_outside(text, start, end);
        let part = lower(&blanked);
        let (ostart, oend) = (map.to_original(start), map.to_original(end));
        let inside =
            |s: Span| (s.start as usize) >= ostart && (s.start as usize) < oend.max(ostart + 1);
        out.functions
            .extend(part.functions.into_iter().filter(|f| inside(f.span)));
        out.toplevel_errors
            .extend(part.toplevel_errors.into_iter().filter(|s| inside(*s)));
    }
    out
}

/// Where [`lower_recovering`] cuts `text` into chunks: the ends of
/// boundary lines (parser offsets) that fall strictly inside one of the
/// erroneous regions `bad` (original offsets). None: no recovery.
pub fn recovery_cuts(
    text: &str,
    map: &dyn PosMap,
    is_boundary: fn(&str) -> bool,
    bad: &[(usize, usize)],
) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let end = offset + line.len();
        if is_boundary(line) {
            let orig = map.to_original(end);
            if bad.iter().any(|&(s, e)| s < orig && orig < e) {
                cuts.push(end);
            }
        }
        offset = end;
    }
    cuts
}

/// `text` with every byte outside `[start, end)` replaced by a space
/// (line breaks kept), so that offsets and line numbers stay the same.
fn blank_outside(text: &str, start: usize, end: usize) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for (i, b) in bytes.iter_mut().enumerate() {
        if (i < start || i >= end) && *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
    // Only whole UTF-8 sequences were kept or replaced byte by byte with
    // ASCII spaces, unless a chunk bound splits a character: fall back to a
    // lossy conversion, which cannot split anything.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// C: a line that closes a top-level definition (`}` in column 1).
pub fn c_unit_end(line: &str) -> bool {
    line.starts_with('}')
}

/// Fortran: an `END`, `END SUBROUTINE`, `END FUNCTION`, `END PROGRAM` or
/// `END MODULE` line.
pub fn fortran_unit_end(line: &str) -> bool {
    let l = line.trim().to_ascii_lowercase();
    let l = l.split('!').next().unwrap_or("").trim();
    let mut words = l.split_whitespace();
    // An optional statement label first.
    let mut first = words.next();
    if first.is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit())) {
        first = words.next();
    }
    match first {
        Some("end") => matches!(
            words.next(),
            None | Some("subroutine" | "function" | "program" | "module")
        ),
        Some(w) => ["endsubroutine", "endfunction", "endprogram", "endmodule"]
            .iter()
            .any(|k| w.starts_with(k)),
        None => false,
    }
}

/// How a builtin argument that is a local variable becomes the constant
/// the compiler sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StoredConstant {
    /// Fortran: `CSAFortranIntrinsics::runOnFunction` (CSAFortranIntrinsics.cpp)
    /// runs before SROA and mem2reg and, for an argument that is a stack
    /// slot, counts the stores to the slot in the whole function, in any
    /// order: exactly one store of a constant gives that constant (a READ
    /// into the variable is not a store it counts), so `w = 4; call
    /// builtin_csa_spmd(w, 0)` is accepted as 4. Variables with an
    /// initializer or SAVE are globals there, and a global that is not
    /// constant is rejected (CSA107).
    OneStore,
    /// C: SROA and mem2reg run before CLIE, and SCCP/InstCombine before
    /// LoopSPMDization, so a local whose address is never taken and whose
    /// every store is the same constant (`int w = 4;`) is that constant at
    /// the builtin; likewise a pointer whose every store is the same string
    /// literal (`const char *kind = "cyclic";`) is that string, which
    /// CLIE's `getConstantStringInfo` reads.
    SameConstant,
}

/// Replaces builtin arguments that are local variables by the constant the
/// compiler sees there ([`StoredConstant`]).
pub(crate) fn fold_builtin_constants(f: &mut crate::ir::Function, rule: StoredConstant) {
    use crate::ir::*;
    let wanted: Vec<VarId> = f
        .builtins
        .iter()
        .flat_map(|b| b.args.iter())
        .filter_map(|a| match a.value {
            ArgValue::Var(v) => Some(v),
            _ => None,
        })
        .filter(|&v| {
            let var = f.var(v);
            var.kind == VarKind::Local
                && !var.ty.is_array
                && (rule == StoredConstant::OneStore || !var.address_taken)
        })
        .collect();
    for v in wanted {
        if rule == StoredConstant::SameConstant {
            if let Some(s) = same_string_stored(f, v) {
                for b in f.builtins.iter_mut() {
                    for a in b.args.iter_mut() {
                        if a.value == ArgValue::Var(v) {
                            a.value = ArgValue::Str(s.clone());
                        }
                    }
                }
                continue;
            }
        }
        let stores: Vec<Option<i64>> = f
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter_map(|i| match &i.kind {
                InstKind::Access(a) if a.write && a.target == AccessTarget::Var(v) => {
                    Some(match (a.index, &a.value) {
                        (IndexKind::Whole, Some(ValueSrc::Const(c))) => Some(*c),
                        _ => None,
                    })
                }
                _ => None,
            })
            .collect();
        let value = match (rule, stores.as_slice()) {
            (StoredConstant::OneStore, [Some(c)]) => Some(*c),
            (StoredConstant::SameConstant, [Some(c), rest @ ..])
                if rest.iter().all(|x| *x == Some(*c)) =>
            {
                Some(*c)
            }
            _ => None,
        };
        if let Some(c) = value {
            for b in f.builtins.iter_mut() {
                for a in b.args.iter_mut() {
                    if a.value == ArgValue::Var(v) {
                        a.value = ArgValue::Int(c);
                    }
                }
            }
        }
    }
}

/// The string literal every store to `v` writes, if there is one and the
/// same one every time.
fn same_string_stored(f: &crate::ir::Function, v: crate::ir::VarId) -> Option<String> {
    use crate::ir::*;
    let mut value: Option<&str> = None;
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        let InstKind::Access(a) = &inst.kind else {
            continue;
        };
        if !a.write || a.target != AccessTarget::Var(v) {
            continue;
        }
        let s = match (a.index, a.rhs.map(|e| f.expr(e))) {
            (IndexKind::Whole, Some(Expr::Str(s))) => &**s,
            _ => return None,
        };
        match value {
            Some(old) if old != s => return None,
            _ => value = Some(s),
        }
    }
    value.map(str::to_string)
}
