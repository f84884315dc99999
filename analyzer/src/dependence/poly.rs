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
use smallvec::SmallVec;
use std::cmp::Ordering;

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

/// Highest degree of a term.
const MAX_DEGREE: usize = 4;

/// A product of at most [`MAX_DEGREE`] atoms, sorted (the empty product is
/// the constant 1). Held inline: polynomials are copied and combined for
/// every subscript of every pair, so terms never allocate.
#[derive(Clone, Copy, Debug)]
pub struct Mono {
    len: u8,
    atoms: [Atom; MAX_DEGREE],
}

/// What the unused places of a [`Mono`] hold (never read).
const FILL: Atom = Atom::Iter(LoopId(0));

impl Mono {
    /// The constant 1.
    pub const ONE: Mono = Mono {
        len: 0,
        atoms: [FILL; MAX_DEGREE],
    };

    pub fn as_slice(&self) -> &[Atom] {
        &self.atoms[..self.len as usize]
    }

    /// The product of two monomials.
    fn times(&self, other: &Mono) -> Option<Mono> {
        let (a, b) = (self.len as usize, other.len as usize);
        if a + b > MAX_DEGREE {
            return None;
        }
        let mut m = *self;
        m.atoms[a..a + b].copy_from_slice(other.as_slice());
        m.len = (a + b) as u8;
        m.atoms[..a + b].sort_unstable();
        Some(m)
    }

    /// The monomial with each atom mapped by `f`.
    fn map(&self, f: impl Fn(Atom) -> Atom) -> Mono {
        let mut m = *self;
        for a in &mut m.atoms[..m.len as usize] {
            *a = f(*a);
        }
        m.atoms[..m.len as usize].sort_unstable();
        m
    }
}

impl std::ops::Deref for Mono {
    type Target = [Atom];
    fn deref(&self) -> &[Atom] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a Mono {
    type Item = &'a Atom;
    type IntoIter = std::slice::Iter<'a, Atom>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl PartialEq for Mono {
    fn eq(&self, other: &Mono) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Mono {}

impl PartialOrd for Mono {
    fn partial_cmp(&self, other: &Mono) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Mono {
    /// As the atom lists compare: the constant first.
    fn cmp(&self, other: &Mono) -> Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

/// The terms of a polynomial: monomials with their non-zero coefficients,
/// sorted by monomial (the constant term first). Most polynomials have one
/// or two terms, held inline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Terms(SmallVec<[(Mono, i64); 2]>);

impl Terms {
    pub fn iter(&self) -> impl Iterator<Item = (&Mono, &i64)> + '_ {
        self.into_iter()
    }

    pub fn keys(&self) -> impl Iterator<Item = &Mono> + '_ {
        self.0.iter().map(|(m, _)| m)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn find(&self, atoms: &[Atom]) -> Result<usize, usize> {
        self.0.binary_search_by(|(m, _)| m.as_slice().cmp(atoms))
    }

    pub fn contains_key(&self, atoms: &[Atom]) -> bool {
        self.find(atoms).is_ok()
    }
}

impl<'a> IntoIterator for &'a Terms {
    type Item = (&'a Mono, &'a i64);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Mono, i64)>,
        fn(&'a (Mono, i64)) -> (&'a Mono, &'a i64),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(m, c)| (m, c))
    }
}

/// A polynomial with integer coefficients. Terms with a zero coefficient
/// are never stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Poly {
    pub terms: Terms,
}

/// Most terms a polynomial may have before the analysis gives up on it
/// (keeps the work per subscript bounded).
const MAX_TERMS: usize = 32;

impl Poly {
    pub fn constant(c: i64) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.terms.0.push((Mono::ONE, c));
        }
        p
    }

    pub fn atom(a: Atom) -> Poly {
        let mut p = Poly::default();
        let mut m = Mono::ONE;
        m.atoms[0] = a;
        m.len = 1;
        p.terms.0.push((m, 1));
        p
    }

    /// The value when the polynomial is a constant.
    pub fn as_constant(&self) -> Option<i64> {
        match self.terms.0.as_slice() {
            [] => Some(0),
            [(m, c)] if m.len == 0 => Some(*c),
            _ => None,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// Adds `c * m`; `None` on overflow or when too large.
    fn add_term(&mut self, m: Mono, c: i64) -> Option<()> {
        match self.terms.find(m.as_slice()) {
            Ok(k) => {
                let e = self.terms.0[k].1.checked_add(c)?;
                if e == 0 {
                    self.terms.0.remove(k);
                } else {
                    self.terms.0[k].1 = e;
                }
            }
            Err(k) => {
                if c != 0 {
                    self.terms.0.insert(k, (m, c));
                }
            }
        }
        (self.terms.len() <= MAX_TERMS).then_some(())
    }

    /// `self + k * other`; `None` on overflow or when too large.
    pub fn add_scaled(&self, other: &Poly, k: i64) -> Option<Poly> {
        let mut out = self.clone();
        for (m, c) in &other.terms.0 {
            out.add_term(*m, c.checked_mul(k)?)?;
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
        for (ma, ca) in &self.terms.0 {
            for (mb, cb) in &other.terms.0 {
                out.add_term(ma.times(mb)?, ca.checked_mul(*cb)?)?;
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
    /// pair, whose counters are distinct unknowns). `None` when two terms
    /// merge and their sum overflows.
    pub fn rename_iter(&self, from: LoopId, to: LoopId) -> Option<Poly> {
        let mut out = Poly::default();
        for (m, c) in &self.terms.0 {
            let m = m.map(|a| match a {
                Atom::Iter(l) if l == from => Atom::Iter(to),
                x => x,
            });
            out.add_term(m, *c)?;
        }
        Some(out)
    }

    /// Splits into `(coefficient of Iter(l), rest)` when every term holding
    /// `Iter(l)` holds it once and the coefficient has no other counter.
    pub fn split_linear(&self, l: LoopId) -> Option<(Poly, Poly)> {
        let mut coef = Poly::default();
        let mut rest = Poly::default();
        for (m, c) in &self.terms.0 {
            let n = m.iter().filter(|a| **a == Atom::Iter(l)).count();
            match n {
                0 => rest.terms.0.push((*m, *c)),
                1 => {
                    let mut others = Mono::ONE;
                    for a in m.iter().filter(|a| **a != Atom::Iter(l)) {
                        if matches!(a, Atom::Iter(_)) {
                            return None;
                        }
                        others.atoms[others.len as usize] = *a;
                        others.len += 1;
                    }
                    coef.add_term(others, *c)?;
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
        let r = lin.rename_iter(LoopId(0), LoopId(9)).unwrap();
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
