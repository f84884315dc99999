//! The data sharing of an OpenMP worksharing loop: which variables each
//! iteration (or thread) has its own copy of, and which are shared.
//!
//! Follows OpenMP 5.2 §5.1 (data-sharing attribute rules) for the cases a
//! worksharing loop meets:
//! * explicit clauses on the loop directive, then on the enclosing
//!   `parallel` construct (a combined `parallel for` is one directive);
//! * the loop's own index is private (with `collapse(n)`, the indices of
//!   the `n` associated loops);
//! * C: variables declared inside the loop, or inside the enclosing
//!   `parallel` region, are private to the iteration or the thread;
//! * Fortran: the index of every sequential `DO` inside the parallel
//!   construct is private;
//! * an orphaned worksharing loop (no `parallel` around it in the
//!   procedure): the procedure's automatic variables (C locals and
//!   parameters, Fortran locals without SAVE) belong to each thread that
//!   calls it;
//! * `default(private|firstprivate)` makes the unnamed variables private;
//!   otherwise they are shared (`default(none)` requires a clause for each,
//!   which the compiler checks; they are taken as shared here);
//! * a variable of static storage listed by a `threadprivate` directive
//!   of the file is each thread's own (found in the source text,
//!   [`threadprivate_names`]);
//! * named constants are never variables.
//!
//! The directive's text is read with [`crate::omp::parse_directive`].

use crate::graph::loops::{LoopForest, LoopId};
use crate::ir::*;
use crate::omp::{self, ClauseKind, DefaultKind, Directive, OmpLang, ReductionOp};
use crate::source::Span;

/// What a worksharing loop makes of one variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// One copy for all iterations (the default). `explicit`: a `shared`
    /// clause names it.
    Shared {
        explicit: bool,
    },
    /// `private`: uninitialised in each thread.
    Private,
    /// `firstprivate` (and maybe `lastprivate`): starts with the value
    /// before the loop.
    Firstprivate,
    /// `lastprivate`: uninitialised; the last iteration's value is kept.
    Lastprivate,
    Reduction(ReductionOp),
    Linear,
    /// Private without a clause; the reason (`the loop index`, ...).
    Implicit(&'static str),
}

impl Sharing {
    /// Each iteration or thread has its own copy.
    pub fn is_private(&self) -> bool {
        !matches!(self, Sharing::Shared { .. })
    }
}

/// A worksharing loop's directives, parsed.
pub struct OmpLoop {
    /// The loop directive.
    pub directive: Directive,
    /// The enclosing `parallel` directive, when the loop directive is not
    /// combined with it.
    pub region: Option<(Directive, OmpRegion)>,
    /// The loops the directive associates (`collapse`), outermost first.
    pub loops: Vec<LoopId>,
    /// The names the file's `threadprivate` directives list (Fortran: in
    /// lower case; a common block as `/name/`).
    pub threadprivate: Vec<String>,
}

impl OmpLoop {
    /// Parses the directive of source loop `sl` (whose loop is `l`);
    /// `threadprivate`: the file's [`threadprivate_names`], found on first
    /// use (one search of the source per function).
    pub fn new(
        func: &Function,
        forest: &LoopForest,
        src: &str,
        l: LoopId,
        directive_span: Span,
        threadprivate: &std::cell::OnceCell<Vec<String>>,
    ) -> Option<OmpLoop> {
        let ol = OmpLang::from(func.lang);
        let text = src.get(directive_span.start as usize..directive_span.end as usize)?;
        let directive = omp::parse_directive(text, ol)?;
        let combined = directive.words.first().is_some_and(|w| w == "parallel");
        let region = if combined {
            None
        } else {
            // the innermost parallel region around the directive
            func.omp_regions
                .iter()
                .filter(|r| {
                    r.body.start <= directive_span.start && directive_span.end <= r.body.end
                })
                .min_by_key(|r| r.body.end - r.body.start)
                .and_then(|r| {
                    let t = src.get(r.directive.start as usize..r.directive.end as usize)?;
                    Some((omp::parse_directive(t, ol)?, *r))
                })
        };
        let depth = directive.collapse().unwrap_or(1).max(1) as usize;
        let mut loops = vec![l];
        // collapse(n): the next n-1 loops, each the only loop directly inside
        while loops.len() < depth {
            let last = loops[loops.len() - 1];
            match forest.loops[last.index()].children.as_slice() {
                [only] => loops.push(*only),
                _ => break,
            }
        }
        Some(OmpLoop {
            directive,
            region,
            loops,
            threadprivate: threadprivate
                .get_or_init(|| threadprivate_names(src, func.lang))
                .clone(),
        })
    }

    /// Whether `name` (a variable of static storage, or one only callees
    /// name) is `threadprivate`: each thread has its own copy.
    pub fn is_threadprivate(&self, lang: Lang, name: &str) -> bool {
        !self.threadprivate.is_empty()
            && match lang {
                Lang::C => self.threadprivate.iter().any(|n| n == name),
                Lang::Fortran => self
                    .threadprivate
                    .iter()
                    .any(|n| n.eq_ignore_ascii_case(name)),
            }
    }

    /// Whether a data-sharing clause of the loop's directive or of its
    /// enclosing `parallel` names `name` (a `threadprivate` object can be
    /// in none).
    pub fn names_in_clause(&self, name: &str) -> bool {
        self.clause_sharing(&self.directive, name).is_some()
            || self
                .region
                .as_ref()
                .is_some_and(|(d, _)| self.clause_sharing(d, name).is_some())
    }

    /// The sharing of `v` given explicitly by a clause of `d`.
    fn clause_sharing(&self, d: &Directive, name: &str) -> Option<Sharing> {
        let mut first = false;
        let mut last = false;
        let mut out = None;
        for (c, _) in d.clauses_for(name) {
            match &c.kind {
                ClauseKind::Private => out = Some(Sharing::Private),
                ClauseKind::Firstprivate => first = true,
                ClauseKind::Lastprivate => last = true,
                ClauseKind::Shared => out = Some(Sharing::Shared { explicit: true }),
                ClauseKind::Reduction(op) => out = Some(Sharing::Reduction(op.clone())),
                ClauseKind::Linear { .. } => out = Some(Sharing::Linear),
                _ => {}
            }
        }
        if first {
            return Some(Sharing::Firstprivate);
        }
        if last {
            return Some(Sharing::Lastprivate);
        }
        out
    }

    /// What the loop makes of variable `v`.
    pub fn sharing(&self, func: &Function, forest: &LoopForest, v: VarId) -> Sharing {
        let var = func.var(v);
        if let Some(s) = self.clause_sharing(&self.directive, &var.name) {
            return s;
        }
        if !matches!(var.kind, VarKind::Local | VarKind::Param | VarKind::Dummy)
            && self.is_threadprivate(func.lang, &var.name)
        {
            return Sharing::Implicit("threadprivate: each thread has its own copy");
        }
        // the associated loops' indices
        let outer = &forest.loops[self.loops[0].index()];
        for sl in &func.source_loops {
            let Some(c) = &sl.control else { continue };
            if c.var != v {
                continue;
            }
            if let Some(l) = forest.loop_with_header(sl.header.0) {
                if self.loops.contains(&l) {
                    return Sharing::Implicit("the index of the worksharing loop");
                }
            }
            if func.lang == Lang::Fortran
                && forest.contains(self.loops[0], sl.header.0)
                && sl.kind == LoopKind::FortranDo
            {
                return Sharing::Implicit("the index of a DO loop inside the parallel construct");
            }
        }
        if func.lang == Lang::C && matches!(var.kind, VarKind::Local) {
            let loop_span = func
                .source_loops
                .iter()
                .find(|sl| sl.header.0 == outer.header)
                .map(|sl| sl.span);
            if loop_span.is_some_and(|s| s.start <= var.span.start && var.span.end <= s.end) {
                return Sharing::Implicit("declared inside the loop");
            }
            if let Some((_, r)) = &self.region {
                if r.body.start <= var.span.start && var.span.end <= r.body.end {
                    return Sharing::Implicit("declared inside the parallel region");
                }
            }
        }
        // an orphaned worksharing loop (no parallel construct around it in
        // this procedure) runs in the region of a caller, if any: each
        // thread calls the procedure, so its automatic variables are the
        // thread's own (OpenMP 5.2 §5.1.2)
        let combined = self
            .directive
            .words
            .first()
            .is_some_and(|w| w == "parallel");
        if self.region.is_none() && !combined && matches!(var.kind, VarKind::Local | VarKind::Param)
        {
            return Sharing::Implicit(
                "a local variable of the procedure, which each thread running this orphaned worksharing loop has its own copy of",
            );
        }
        // `private` on the enclosing `parallel`: each thread's copy lives
        // through the region, whose code before the loop may set it (not
        // undefined at the loop, as a loop's own `private` copy is)
        const REGION_PRIVATE: Sharing = Sharing::Implicit(
            "private to each thread of the enclosing parallel region, whose code before the loop may set it",
        );
        let region_default = match &self.region {
            Some((d, _)) => {
                match self.clause_sharing(d, &var.name) {
                    Some(Sharing::Private) => return REGION_PRIVATE,
                    // reduction/firstprivate on `parallel`: private per thread
                    Some(s) => return s,
                    None => {}
                }
                d.default_kind()
            }
            None => None,
        };
        match self.directive.default_kind() {
            Some(DefaultKind::Private) => return Sharing::Private,
            Some(DefaultKind::Firstprivate) => return Sharing::Firstprivate,
            Some(_) => return Sharing::Shared { explicit: false },
            None => {}
        }
        match region_default {
            Some(DefaultKind::Private) => REGION_PRIVATE,
            Some(DefaultKind::Firstprivate) => Sharing::Firstprivate,
            _ => Sharing::Shared { explicit: false },
        }
    }
}

/// The names listed by the `threadprivate` directives of a source text
/// (`#pragma omp threadprivate(a, b)`, `!$omp threadprivate(x, /cb/)`;
/// Fortran names in lower case).
pub fn threadprivate_names(src: &str, lang: Lang) -> Vec<String> {
    let bytes = src.as_bytes();
    // The word's line holds the directive's `#` (C) or `$` (Fortran):
    // only those lines are searched (most `t`s of a file are elsewhere).
    let marker = match lang {
        Lang::C => b'#',
        Lang::Fortran => b'$',
    };
    let mut lines_done = 0;
    let candidates = memchr::memchr_iter(marker, bytes).flat_map(|p| {
        let (ls, le) = if p < lines_done {
            (p, p)
        } else {
            let ls = memchr::memrchr(b'\n', &bytes[..p]).map_or(0, |k| k + 1);
            let le = memchr::memchr(b'\n', &bytes[p..]).map_or(bytes.len(), |k| p + k);
            lines_done = le;
            (ls, le)
        };
        memchr::memchr2_iter(b't', b'T', &bytes[ls..le]).map(move |k| ls + k)
    });
    threadprivate_names_at(src, lang, candidates)
}

/// [`threadprivate_names`] of the directives whose word is at one of the
/// positions `candidates` (increasing).
fn threadprivate_names_at(
    src: &str,
    lang: Lang,
    candidates: impl Iterator<Item = usize>,
) -> Vec<String> {
    const WORD: &[u8] = b"threadprivate";
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    for i in candidates {
        if !bytes
            .get(i..i + WORD.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(WORD))
        {
            continue;
        }
        // a directive: `#pragma omp` or `!$omp` (`c$omp`, `*$omp` in fixed
        // form) and blanks before the word on its line
        let ls = memchr::memrchr(b'\n', &bytes[..i]).map_or(0, |k| k + 1);
        let lead: String = src[ls..i]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        let ok = match lang {
            Lang::C => lead == "#pragmaomp",
            Lang::Fortran => matches!(lead.as_str(), "!$omp" | "c$omp" | "*$omp"),
        };
        if !ok {
            continue;
        }
        let rest = &src[i + WORD.len()..];
        let Some(open) = rest.find(|c: char| !c.is_whitespace()) else {
            continue;
        };
        if !rest[open..].starts_with('(') {
            continue;
        }
        let Some(close) = rest[open..].find(')') else {
            continue;
        };
        for item in rest[open + 1..open + close].split(',') {
            // (continuation marks and blanks of a directive split over lines)
            let name: String = item
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '$'))
                .collect();
            let name = name.trim_start_matches("$omp").to_string();
            if name.is_empty() {
                continue;
            }
            out.push(match lang {
                Lang::C => name,
                Lang::Fortran => name.to_ascii_lowercase(),
            });
        }
    }
    out
}

/// The reduction operator of a clause, as the update kinds of
/// [`crate::scalars::RedOp`].
pub fn red_op(op: &ReductionOp) -> Option<crate::scalars::RedOp> {
    use crate::scalars::RedOp as R;
    Some(match op {
        ReductionOp::Add => R::Add,
        ReductionOp::Sub => R::Sub,
        ReductionOp::Mul => R::Mul,
        ReductionOp::And => R::BitAnd,
        ReductionOp::Or => R::BitOr,
        ReductionOp::Xor => R::BitXor,
        ReductionOp::LogAnd => R::LogAnd,
        ReductionOp::LogOr => R::LogOr,
        ReductionOp::Min => R::Min,
        ReductionOp::Max => R::Max,
        ReductionOp::Eqv | ReductionOp::Neqv | ReductionOp::User(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threadprivate_lists_are_read_from_directives_only() {
        let c = "int a, b;\n#pragma omp threadprivate(a, b)\n/* threadprivate(z) */\n";
        assert_eq!(threadprivate_names(c, Lang::C), ["a", "b"]);
        let f = "module m\n  integer :: X, y\n!$OMP THREADPRIVATE(X, &\n!$omp& /Blk/)\n\
                 ! threadprivate(y)\nend module\n";
        assert_eq!(threadprivate_names(f, Lang::Fortran), ["x", "/blk/"]);
        assert!(threadprivate_names("int threadprivate;\n", Lang::C).is_empty());
    }

    /// Searching the directive lines only finds what searching every
    /// position does.
    #[test]
    fn threadprivate_names_on_directive_lines_are_all_of_them() {
        let pieces = [
            "#pragma omp threadprivate(a, b)\n",
            "# pragma  omp ThreadPrivate (c)\n",
            "int threadprivate; /* # */\n",
            "!$omp threadprivate(x)\n",
            "!$OMP THREADPRIVATE(Y) ! $ \n",
            "c$omp threadprivate(/cb/)\n",
            "  t = threadprivate(q) # $\n",
            "#define T 1 $ threadprivate(r)\n",
            "\n",
            "tt",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut checked = 0;
        for _ in 0..400 {
            let mut src = String::new();
            for _ in 0..6 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                src.push_str(pieces[(state % pieces.len() as u64) as usize]);
            }
            for lang in [Lang::C, Lang::Fortran] {
                let every = threadprivate_names_at(&src, lang, 0..src.len());
                assert_eq!(threadprivate_names(&src, lang), every, "{src:?}");
                checked += usize::from(!every.is_empty());
            }
        }
        assert!(checked > 100);
    }
}
