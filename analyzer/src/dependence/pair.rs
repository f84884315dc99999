//! The dependence test of one pair of accesses: is there an element both
//! touch in two *different* iterations of the loop asserted parallel?
//!
//! Each subscript position gives one equation `f(x, y) = g(x', y')` over
//! the asserted loop's iteration counters `x`, `x'` (one per access), the
//! counters `y`, `y'` of inner loops, and loop-invariant symbols. Each
//! equation is classified with the classic subscript tests of Goff,
//! Kennedy & Tseng, "Practical Dependence Testing" (PLDI 1991):
//! * ZIV (no counter): a non-zero constant difference proves independence;
//! * the GCD test (Banerjee, "Dependence Analysis for Supercomputing",
//!   1988): the gcd of the coefficients must divide the constant;
//! * Banerjee's bounds test with the known trip counts (a counter runs over
//!   `0 .. T-1`; an unknown trip count bounds it below only);
//! * strong SIV (`a*x + c = a*x'`): the exact distance `c / a`, which
//!   proves the pair independent when it is 0 or not an integer and a
//!   conflict otherwise; weak-zero and weak-crossing SIV and every other
//!   two-counter equation are solved exactly by search over the iterations
//!   (Pugh's Omega test is exact in general; these tiny systems do not need
//!   it);
//! * an equation in inner counters only constrains nothing about `x` and is
//!   satisfiable when the inner loops are long enough;
//! * a strong equation with an inner part whose range is known
//!   (`a*x + y = a*x' + y'`, `0 <= y < a`: a delinearized `a[i*M + j]`)
//!   forces `x = x'` when that range is narrower than `a`.
//!
//! A pair is *independent* when one equation proves it; a *conflict* when
//! every equation holds for some `x != x'` inside the bounds (a witness is
//! found); *unproven* otherwise, with the reason.

use super::poly::{gcd, Atom, Poly};
use crate::graph::loops::LoopId;
use std::collections::BTreeMap;

/// A loop counter's range: `0 ..= max` (`None`: unbounded above).
pub type Bounds = BTreeMap<LoopId, Option<i64>>;

/// The outcome for one pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PairResult {
    Independent,
    /// A witness: iterations `x` and `x'` of the asserted loop both touch
    /// the element. `distance` is `x' - x` when every solution has it.
    Conflict {
        x: i64,
        x2: i64,
        distance: Option<i64>,
        /// The conflict needs at least this many iterations (the witness's
        /// larger iteration plus one); the trip count is not known.
        needs_trip: Option<i64>,
    },
    Unproven(Reason),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The difference depends on a symbol's value (`a[i + k]`).
    SymbolicOffset(Vec<Atom>),
    /// A counter multiplied by a symbol or another counter.
    NonLinear,
    /// Subscripts that share inner counters in a way not tested exactly.
    Coupled,
    /// No witness within the searched iterations, none excluded.
    SearchLimit,
}

/// Iterations tried when searching for a witness.
const SEARCH: i64 = 256;

/// One subscript equation `diff = 0`, classified.
#[derive(Debug)]
enum Eq1 {
    /// Holds for every `x`, `x'`.
    Always,
    /// Never holds with `x != x'`.
    Never,
    /// `a*x + b*x' + c = 0` exactly (no inner counter).
    Two {
        a: i64,
        b: i64,
        c: i64,
    },
    /// Holds for some inner counters whatever `x`, `x'` are.
    InnerOnly(Vec<LoopId>),
    Unknown(Reason),
}

/// Tests one pair. `diffs` are `f - g` per subscript position, where the
/// second access's counters are renamed (see [`prime`]); `x` is the
/// asserted loop's counter, `bounds` every counter's range (primed ones
/// included).
pub fn test_pair(diffs: &[Poly], x: LoopId, bounds: &Bounds) -> PairResult {
    let x2 = prime(x);
    let mut eqs = Vec::new();
    for d in diffs {
        let e = classify(d, x, x2, bounds);
        if matches!(e, Eq1::Never) {
            return PairResult::Independent;
        }
        eqs.push(e);
    }
    // equations in the two counters alone, solved first: when they have no
    // solution the pair is independent whatever the others say (a
    // dimension the tests cannot read does not hide one that separates
    // the iterations)
    let twos: Vec<(i64, i64, i64)> = eqs
        .iter()
        .filter_map(|e| match e {
            Eq1::Two { a, b, c } => Some((*a, *b, *c)),
            _ => None,
        })
        .collect();
    let tmax = bounds.get(&x).copied().flatten();
    let solved = solve(&twos, tmax);
    if solved == PairResult::Independent {
        return solved;
    }
    // inner-only equations sharing a counter are coupled
    let mut used: Vec<LoopId> = Vec::new();
    for e in &eqs {
        if let Eq1::InnerOnly(ls) = e {
            if ls.iter().any(|l| used.contains(l)) {
                return PairResult::Unproven(Reason::Coupled);
            }
            used.extend(ls.iter().copied());
        }
    }
    if let Some(Eq1::Unknown(r)) = eqs.iter().find(|e| matches!(e, Eq1::Unknown(_))) {
        return PairResult::Unproven(r.clone());
    }
    solved
}

/// The name of a counter in the second access of a pair.
pub fn prime(l: LoopId) -> LoopId {
    LoopId(l.0 | 0x8000_0000)
}

fn classify(d: &Poly, x: LoopId, x2: LoopId, bounds: &Bounds) -> Eq1 {
    if d.is_zero() {
        return Eq1::Always;
    }
    // integer coefficients of counters, constant part, symbolic parts
    let mut coef: BTreeMap<LoopId, i64> = BTreeMap::new();
    let mut c = 0i64;
    let mut symbolic: Vec<Atom> = Vec::new();
    for (m, k) in &d.terms {
        match m.as_slice() {
            [] => c = *k,
            [Atom::Iter(l)] => {
                coef.insert(*l, *k);
            }
            atoms
                if atoms
                    .iter()
                    .all(|a| matches!(a, Atom::Sym(_) | Atom::Addr(_))) =>
            {
                symbolic.extend(atoms.iter().copied());
            }
            _ => return Eq1::Unknown(Reason::NonLinear),
        }
    }
    if !symbolic.is_empty() {
        symbolic.sort();
        symbolic.dedup();
        return Eq1::Unknown(Reason::SymbolicOffset(symbolic));
    }
    if coef.is_empty() {
        return if c == 0 { Eq1::Always } else { Eq1::Never };
    }
    // GCD test
    let g = coef.values().fold(0, |g, k| gcd(g, *k));
    if g != 0 && c % g != 0 {
        return Eq1::Never;
    }
    // Banerjee bounds: the range of sum(coef * counter) + c
    let (mut lo, mut hi) = (Some(c), Some(c));
    for (l, k) in &coef {
        let max = bounds.get(l).copied().flatten();
        let (a, b) = match max {
            Some(m) => {
                let v = k.saturating_mul(m);
                (Some(v.min(0)), Some(v.max(0)))
            }
            None if *k > 0 => (Some(0), None),
            None => (None, Some(0)),
        };
        lo = lo.zip(a).map(|(p, q)| p.saturating_add(q));
        hi = hi.zip(b).map(|(p, q)| p.saturating_add(q));
    }
    if lo.is_some_and(|l| l > 0) || hi.is_some_and(|h| h < 0) {
        return Eq1::Never;
    }
    let a = coef.get(&x).copied().unwrap_or(0);
    let b = coef.get(&x2).copied().unwrap_or(0);
    let inner: Vec<LoopId> = coef
        .keys()
        .copied()
        .filter(|l| *l != x && *l != x2)
        .collect();
    if inner.is_empty() {
        return Eq1::Two { a, b, c };
    }
    if a == 0 && b == 0 {
        return Eq1::InnerOnly(inner);
    }
    // strong in x with a bounded inner part: a*(x - x') + inner + c = 0
    if a == -b {
        let (mut ilo, mut ihi) = (Some(c), Some(c));
        for l in &inner {
            let k = coef[l];
            let Some(Some(m)) = bounds.get(l).copied() else {
                ilo = None;
                ihi = None;
                break;
            };
            let v = k.saturating_mul(m);
            ilo = ilo.map(|p| p.saturating_add(v.min(0)));
            ihi = ihi.map(|p| p.saturating_add(v.max(0)));
        }
        if let (Some(ilo), Some(ihi)) = (ilo, ihi) {
            // a*(x - x') in [-ihi, -ilo]: only 0 is a multiple of |a| there
            let aa = a.unsigned_abs() as i64;
            if -ihi > -aa && -ilo < aa {
                return Eq1::Never;
            }
        }
    }
    Eq1::Unknown(Reason::Coupled)
}

/// Finds `x != x'` in `0 ..= tmax` satisfying every `a*x + b*x' + c = 0`.
fn solve(eqs: &[(i64, i64, i64)], tmax: Option<i64>) -> PairResult {
    let limit = tmax.map_or(SEARCH, |t| t.min(SEARCH));
    let exhaustive = tmax.is_some_and(|t| t <= SEARCH);
    let in_range = |v: i64| v >= 0 && v <= tmax.unwrap_or(i64::MAX);
    // the distance when one strong equation fixes it
    let mut fixed: Option<i64> = None;
    for &(a, b, c) in eqs {
        if a != 0 && a == -b {
            if c % a != 0 {
                return PairResult::Independent;
            }
            // a*x - a*x' + c = 0  =>  x' - x = c / a
            let d = c / a;
            if d == 0 || fixed.is_some_and(|f| f != d) {
                return PairResult::Independent;
            }
            if tmax.is_some_and(|t| d.abs() > t) {
                return PairResult::Independent;
            }
            fixed = Some(d);
        }
    }
    for x in 0..=limit {
        let mut candidates: Vec<i64> = Vec::new();
        match eqs.iter().find(|(_, b, _)| *b != 0) {
            Some(&(a, b, c)) => {
                let num = a.saturating_mul(x).saturating_neg().saturating_sub(c);
                if num % b != 0 {
                    continue;
                }
                candidates.push(num / b);
            }
            None => {
                candidates.push(x + 1);
                if x > 0 {
                    candidates.push(x - 1);
                }
            }
        }
        for x2 in candidates {
            if x2 == x || !in_range(x2) {
                continue;
            }
            let ok = eqs.iter().all(|&(a, b, c)| {
                a.saturating_mul(x)
                    .saturating_add(b.saturating_mul(x2))
                    .saturating_add(c)
                    == 0
            });
            if ok {
                let distance = fixed.or_else(|| {
                    // no equation involves the counters: any distance
                    (!eqs.is_empty())
                        .then_some(x2 - x)
                        .filter(|_| eqs.iter().all(|&(a, b, _)| a != 0 && a == -b))
                });
                return PairResult::Conflict {
                    x,
                    x2,
                    distance,
                    needs_trip: tmax.is_none().then_some(x.max(x2) + 1),
                };
            }
        }
    }
    if exhaustive {
        PairResult::Independent
    } else {
        PairResult::Unproven(Reason::SearchLimit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: LoopId = LoopId(0);
    const J: LoopId = LoopId(1);

    fn it(l: LoopId) -> Poly {
        Poly::atom(Atom::Iter(l))
    }
    fn k(c: i64) -> Poly {
        Poly::constant(c)
    }
    /// `f(x, j) - g(x', j')` for the pair.
    fn diff(f: &Poly, g: &Poly) -> Poly {
        let g = g
            .rename_iter(X, prime(X))
            .and_then(|g| g.rename_iter(J, prime(J)))
            .unwrap();
        f.sub(&g).unwrap()
    }
    fn bounds(t: Option<i64>, tj: Option<i64>) -> Bounds {
        let mut b = Bounds::new();
        for (l, m) in [(X, t), (J, tj)] {
            b.insert(l, m.map(|t| t - 1));
            b.insert(prime(l), m.map(|t| t - 1));
        }
        b
    }

    #[test]
    fn same_element_in_the_same_iteration_is_independent() {
        let d = diff(&it(X), &it(X));
        assert_eq!(
            test_pair(&[d], X, &bounds(None, None)),
            PairResult::Independent
        );
    }

    #[test]
    fn strong_siv_gives_the_distance() {
        // a[i] written, a[i+1] read, in both orders, bounded or not
        for t in [None, Some(100)] {
            let d = diff(&it(X), &it(X).add(&k(1)).unwrap());
            match test_pair(&[d], X, &bounds(t, None)) {
                // the read in iteration x' = x - 1 sees what x writes
                PairResult::Conflict {
                    distance, x, x2, ..
                } => {
                    assert_eq!(distance, Some(-1));
                    assert_eq!(x2 - x, -1);
                }
                r => panic!("{r:?}"),
            }
            let d = diff(&it(X).add(&k(1)).unwrap(), &it(X));
            match test_pair(&[d], X, &bounds(t, None)) {
                PairResult::Conflict {
                    distance, x, x2, ..
                } => {
                    assert_eq!(distance, Some(1));
                    assert_eq!(x2 - x, 1);
                }
                r => panic!("{r:?}"),
            }
        }
    }

    #[test]
    fn distance_beyond_the_trip_count_is_independent() {
        let d = diff(&it(X), &it(X).add(&k(10)).unwrap());
        assert_eq!(
            test_pair(std::slice::from_ref(&d), X, &bounds(Some(10), None)),
            PairResult::Independent
        );
        assert!(matches!(
            test_pair(&[d], X, &bounds(Some(11), None)),
            PairResult::Conflict { .. }
        ));
    }

    #[test]
    fn gcd_proves_even_and_odd_apart() {
        // a[2i] vs a[2i+1]
        let f = it(X).scale(2).unwrap();
        let g = it(X).scale(2).unwrap().add(&k(1)).unwrap();
        assert_eq!(
            test_pair(&[diff(&f, &g)], X, &bounds(None, None)),
            PairResult::Independent
        );
    }

    #[test]
    fn weak_zero_and_exact_siv() {
        // a[i] vs a[0]: iteration 0 writes what every iteration reads
        let r = test_pair(&[diff(&it(X), &k(0))], X, &bounds(None, None));
        assert!(matches!(r, PairResult::Conflict { x: 0, .. }), "{r:?}");
        // a[2i+1] vs a[i] (exact SIV): 2x + 1 = x'
        let f = it(X).scale(2).unwrap().add(&k(1)).unwrap();
        let r = test_pair(&[diff(&f, &it(X))], X, &bounds(Some(1000), None));
        assert!(
            matches!(r, PairResult::Conflict { x: 0, x2: 1, .. }),
            "{r:?}"
        );
    }

    #[test]
    fn inner_loop_dependence_is_not_carried() {
        // b[i][j] vs b[i][j-1]: distance 0 on i
        let d0 = diff(&it(X), &it(X));
        let d1 = diff(&it(J), &it(J).add(&k(-1)).unwrap());
        assert_eq!(
            test_pair(&[d0, d1], X, &bounds(None, None)),
            PairResult::Independent
        );
        // b[i][j] vs b[i-1][j-1]: carried; the second access's iteration
        // x' = x + 1 reads what x writes
        let d0 = diff(&it(X), &it(X).add(&k(-1)).unwrap());
        let d1 = diff(&it(J), &it(J).add(&k(-1)).unwrap());
        assert!(matches!(
            test_pair(&[d0, d1], X, &bounds(None, None)),
            PairResult::Conflict {
                distance: Some(1),
                ..
            }
        ));
    }

    #[test]
    fn delinearized_row_major_is_independent() {
        // a[i*10 + j] vs a[i*10 + j], j in 0..10
        let f = it(X).scale(10).unwrap().add(&it(J)).unwrap();
        let r = test_pair(&[diff(&f, &f)], X, &bounds(None, Some(10)));
        assert_eq!(r, PairResult::Independent);
        // j in 0..11: row i's last element is row i+1's first
        let r = test_pair(&[diff(&f, &f)], X, &bounds(None, Some(11)));
        assert!(matches!(r, PairResult::Unproven(Reason::Coupled)), "{r:?}");
    }

    #[test]
    fn symbolic_offset_is_unproven() {
        let s = Poly::atom(Atom::Sym(crate::ir::VarId(3)));
        let d = diff(&it(X), &it(X).add(&s).unwrap());
        assert!(matches!(
            test_pair(&[d], X, &bounds(None, None)),
            PairResult::Unproven(Reason::SymbolicOffset(_))
        ));
    }

    #[test]
    fn scalar_written_by_every_iteration_conflicts() {
        // no subscript: the same location in every iteration
        let r = test_pair(&[], X, &bounds(None, None));
        assert!(
            matches!(r, PairResult::Conflict { distance: None, .. }),
            "{r:?}"
        );
    }
}
