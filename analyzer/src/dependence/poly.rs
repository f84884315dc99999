//! Integer polynomials over loop iteration counters and loop-invariant
//! symbols: the affine forms of subscripts (with symbolic coefficients such
//! as `i*n` kept as products, for linearized accesses).
//!
//! Every loop index is written as `init + step * Iter(loop)`, where
//! `Iter(loop)` counts the loop's iterations from 0 (Allen & Kennedy,
//! "Optimizing Compilers for Modern Architectures", §2.2's normalized
//! iteration space). Distances are then in iterations, whatever the step.

use crate::graph::loops::LoopId;
use crate::ir::VarId;
use std::collections::BTreeMap;

/// An unknown of a polynomial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    /// The iteration counter of a loop (0, 1, ...).
    Iter(LoopId),
    /// The value of a variable that no iteration of the loops analysed
    /// changes (its value when the outermost of them is entered).
    Sym(VarId),
    /// The address of a named object (pointer values: `p = &a[i]` is
    /// `Addr(a) + i`).
    Addr(VarId),
}

/// A product of atoms, sorted (the empty product is the constant 1).
pub type Mono = Vec<Atom>;

/// A polynomial with integer coefficients. Terms with a zero coefficient
/// are never stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Poly {
    pub terms: BTreeMap<Mono, i64>,
}

/// Most terms a polynomial may have before the analysis gives up on it
/// (keeps the work per subscript bounded).
const MAX_TERMS: usize = 32;
/// Highest degree of a term.
const MAX_DEGREE: usize = 4;

impl Poly {
    pub fn constant(c: i64) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.terms.insert(Vec::new(), c);
        }
        p
    }

    pub fn atom(a: Atom) -> Poly {
        let mut p = Poly::default();
        p.terms.insert(vec![a], 1);
        p
    }

    /// The constant term.
    pub fn constant_term(&self) -> i64 {
        self.terms.get(&Vec::new()).copied().unwrap_or(0)
    }

    /// The value when the polynomial is a constant.
    pub fn as_constant(&self) -> Option<i64> {
        match self.terms.len() {
            0 => Some(0),
            1 => self.terms.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    fn add_term(&mut self, m: Mono, c: i64) -> Option<()> {
        let e = self.terms.entry(m).or_insert(0);
        *e = e.checked_add(c)?;
        if *e == 0 {
            let zero: Vec<Mono> = self
                .terms
                .iter()
                .filter(|(_, c)| **c == 0)
                .map(|(m, _)| m.clone())
                .collect();
            for m in zero {
                self.terms.remove(&m);
            }
        }
        (self.terms.len() <= MAX_TERMS).then_some(())
    }

    /// `self + k * other`; `None` on overflow or when too large.
    pub fn add_scaled(&self, other: &Poly, k: i64) -> Option<Poly> {
        let mut out = self.clone();
        for (m, c) in &other.terms {
            out.add_term(m.clone(), c.checked_mul(k)?)?;
        }
        Some(out)
    }

    pub fn add(&self, other: &Poly) -> Option<Poly> {
        self.add_scaled(other, 1)
    }

    pub fn sub(&self, other: &Poly) -> Option<Poly> {
        self.add_scaled(other, -1)
    }

    pub fn scale(&self, k: i64) -> Option<Poly> {
        Poly::default().add_scaled(self, k)
    }

    pub fn mul(&self, other: &Poly) -> Option<Poly> {
        let mut out = Poly::default();
        for (ma, ca) in &self.terms {
            for (mb, cb) in &other.terms {
                let mut m = ma.clone();
                m.extend_from_slice(mb);
                if m.len() > MAX_DEGREE {
                    return None;
                }
                m.sort();
                out.add_term(m, ca.checked_mul(*cb)?)?;
            }
        }
        Some(out)
    }

    /// Whether any term holds an iteration counter.
    pub fn has_iter(&self) -> bool {
        self.terms
            .keys()
            .any(|m| m.iter().any(|a| matches!(a, Atom::Iter(_))))
    }

    /// The iteration counters that occur.
    pub fn iters(&self) -> Vec<LoopId> {
        let mut v: Vec<LoopId> = self
            .terms
            .keys()
            .flat_map(|m| m.iter())
            .filter_map(|a| match a {
                Atom::Iter(l) => Some(*l),
                Atom::Sym(_) | Atom::Addr(_) => None,
            })
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// Replaces `Iter(from)` by `Iter(to)` (for the second access of a
    /// pair, whose counters are distinct unknowns).
    pub fn rename_iter(&self, from: LoopId, to: LoopId) -> Poly {
        let mut out = Poly::default();
        for (m, c) in &self.terms {
            let mut m: Mono = m
                .iter()
                .map(|a| match a {
                    Atom::Iter(l) if *l == from => Atom::Iter(to),
                    x => *x,
                })
                .collect();
            m.sort();
            *out.terms.entry(m).or_insert(0) += c;
        }
        out.terms.retain(|_, c| *c != 0);
        out
    }

    /// Splits into `(coefficient of Iter(l), rest)` when every term holding
    /// `Iter(l)` holds it once and the coefficient has no other counter.
    pub fn split_linear(&self, l: LoopId) -> Option<(Poly, Poly)> {
        let mut coef = Poly::default();
        let mut rest = Poly::default();
        for (m, c) in &self.terms {
            let n = m.iter().filter(|a| **a == Atom::Iter(l)).count();
            match n {
                0 => {
                    rest.terms.insert(m.clone(), *c);
                }
                1 => {
                    let others: Mono = m.iter().filter(|a| **a != Atom::Iter(l)).copied().collect();
                    if others.iter().any(|a| matches!(a, Atom::Iter(_))) {
                        return None;
                    }
                    coef.terms.insert(others, *c);
                }
                _ => return None,
            }
        }
        Some((coef, rest))
    }
}

/// Greatest common divisor (non-negative).
pub fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a.min(i64::MAX as u64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(l: u32) -> Poly {
        Poly::atom(Atom::Iter(LoopId(l)))
    }
    fn s(v: u32) -> Poly {
        Poly::atom(Atom::Sym(VarId(v)))
    }

    #[test]
    fn arithmetic_cancels_and_keeps_products() {
        let a = i(0).add(&Poly::constant(1)).unwrap();
        let b = i(0);
        assert_eq!(a.sub(&b).unwrap().as_constant(), Some(1));
        let lin = i(0).mul(&s(3)).unwrap().add(&i(1)).unwrap();
        let (coef, rest) = lin.split_linear(LoopId(0)).unwrap();
        assert_eq!(coef, s(3));
        assert_eq!(rest, i(1));
        assert!(lin.has_iter());
        assert_eq!(lin.iters(), vec![LoopId(0), LoopId(1)]);
        let r = lin.rename_iter(LoopId(0), LoopId(9));
        assert_eq!(r.iters(), vec![LoopId(1), LoopId(9)]);
    }

    #[test]
    fn overflow_and_size_give_none() {
        let big = Poly::constant(i64::MAX);
        assert!(big.add(&Poly::constant(1)).is_none());
        let mut p = Poly::default();
        for v in 0..40 {
            match p.add(&s(v)) {
                Some(q) => p = q,
                None => return,
            }
        }
        panic!("no size limit");
    }

    #[test]
    fn gcd_of_signed_numbers() {
        assert_eq!(gcd(-4, 6), 2);
        assert_eq!(gcd(0, 5), 5);
        assert_eq!(gcd(0, 0), 0);
    }
}
