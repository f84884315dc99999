//! A minimum or maximum written with `?:` (`m = a[i] < m ? a[i] : m`): the
//! IR gives a `?:` no value (its two branches join), so this one update
//! pattern is still read from the tree. The C loop body becomes a small
//! effect tree ([`Eff`]): reads and writes of names, alternatives (`if`,
//! `?:`, the right side of `&&`/`||`, `switch` arms), inner loops,
//! `continue`, and reduction-shaped updates; a name whose every occurrence
//! is one min/max update is the pattern.

use super::syntax::{identifiers_under, named_children, squash, text, unparen};
use crate::dependence::scalars::RedOp;
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// Whether `x = e op x` updates `x` as `x = x op e` does.
fn commutative(op: RedOp) -> bool {
    !matches!(op, RedOp::Sub)
}

fn red_op_of_c_binary(op: &str) -> Option<RedOp> {
    Some(match op {
        "+" => RedOp::Add,
        "-" => RedOp::Sub,
        "*" => RedOp::Mul,
        "&" => RedOp::BitAnd,
        "|" => RedOp::BitOr,
        "^" => RedOp::BitXor,
        "&&" => RedOp::LogAnd,
        "||" => RedOp::LogOr,
        _ => return None,
    })
}

/// The effect tree of a loop body. Names are keys (lower case in Fortran).
#[derive(Clone, Debug)]
enum Eff {
    Read(String),
    Write(String),
    Seq(Vec<Eff>),
    /// Exactly one alternative runs.
    Branch(Vec<Eff>),
    /// An inner loop body: runs zero or more times.
    Loop(Box<Eff>),
    /// The path ends: `continue`, `break` out of a switch or inner loop.
    Exit,
    /// A reduction-shaped update of a name; `rhs` holds the reads of `e`.
    Update {
        var: String,
        op: RedOp,
        rhs: Box<Eff>,
    },
    AddrTaken(String),
    PartialWrite(String),
    /// Something the patterns do not look into (`goto`, asm, too deep).
    Opaque,
}

impl Eff {
    fn empty() -> Eff {
        Eff::Seq(Vec::new())
    }
}

/// The names of a C loop body whose every occurrence is a conditional
/// minimum or maximum written with `?:` (`m = a[i] < m ? a[i] : m`), with
/// their operator. The IR gives a `?:` no value (its two branches join),
/// so this pattern is still read from the tree; everything else the
/// rewrite decides on the IR (`rewrite::scalars`), which asks this only for
/// a variable it finds carried.
pub(crate) fn ternary_min_max(loop_node: Node, src: &str) -> BTreeMap<String, RedOp> {
    let Some(body) = loop_node.child_by_field_name("body") else {
        return BTreeMap::new();
    };
    let eff = CBuilder { src, depth: 0 }.stmt(body, 0, false);
    find_reductions(&eff)
        .into_iter()
        .filter(|(_, op)| matches!(op, RedOp::Min | RedOp::Max))
        .collect()
}

/// Names whose every occurrence is an update with one operator.
fn find_reductions(e: &Eff) -> BTreeMap<String, RedOp> {
    let mut ops: BTreeMap<String, BTreeSet<RedOp>> = BTreeMap::new();
    let mut other: BTreeSet<String> = BTreeSet::new();
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            Eff::Read(v) | Eff::Write(v) | Eff::AddrTaken(v) | Eff::PartialWrite(v) => {
                other.insert(v.clone());
            }
            Eff::Seq(v) | Eff::Branch(v) => stack.extend(v.iter()),
            Eff::Loop(b) => stack.push(b),
            Eff::Update { var, op, rhs } => {
                ops.entry(var.clone()).or_default().insert(*op);
                stack.push(rhs);
            }
            Eff::Exit | Eff::Opaque => {}
        }
    }
    ops.into_iter()
        .filter(|(v, o)| o.len() == 1 && !other.contains(v))
        .filter_map(|(v, o)| o.into_iter().next().map(|op| (v, op)))
        .collect()
}

const MAX_DEPTH: usize = 256;

struct CBuilder<'s> {
    src: &'s str,
    depth: usize,
}

impl<'s> CBuilder<'s> {
    fn t(&self, n: Node) -> &'s str {
        text(n, self.src)
    }

    fn name(&self, n: Node) -> String {
        self.t(n).to_string()
    }

    /// `loop_depth`: 0 in the analysed loop's body; `in_switch`: a `break`
    /// leaves a switch rather than the loop.
    fn stmt(&mut self, n: Node, loop_depth: usize, in_switch: bool) -> Eff {
        if self.depth > MAX_DEPTH {
            return Eff::Opaque;
        }
        self.depth += 1;
        let e = self.stmt_inner(n, loop_depth, in_switch);
        self.depth -= 1;
        e
    }

    fn stmt_inner(&mut self, n: Node, loop_depth: usize, in_switch: bool) -> Eff {
        match n.kind() {
            "compound_statement" => Eff::Seq(
                named_children(n)
                    .into_iter()
                    .map(|c| self.stmt(c, loop_depth, in_switch))
                    .collect(),
            ),
            "expression_statement" => match n.named_child(0) {
                Some(e) => self.update_or_expr(e),
                None => Eff::empty(),
            },
            "if_statement" => {
                if let Some(u) = self.minmax_if(n) {
                    return u;
                }
                let cond = n
                    .child_by_field_name("condition")
                    .map(|c| self.expr(c))
                    .unwrap_or_else(Eff::empty);
                let cons = n
                    .child_by_field_name("consequence")
                    .map(|c| self.stmt(c, loop_depth, in_switch))
                    .unwrap_or_else(Eff::empty);
                let alt = n
                    .child_by_field_name("alternative")
                    .map(|c| {
                        Eff::Seq(
                            named_children(c)
                                .into_iter()
                                .map(|s| self.stmt(s, loop_depth, in_switch))
                                .collect(),
                        )
                    })
                    .unwrap_or_else(Eff::empty);
                Eff::Seq(vec![cond, Eff::Branch(vec![cons, alt])])
            }
            "for_statement" => {
                let mut seq = Vec::new();
                if let Some(i) = n.child_by_field_name("initializer") {
                    seq.push(if i.kind() == "declaration" {
                        self.stmt(i, loop_depth, in_switch)
                    } else {
                        self.expr(i)
                    });
                }
                let cond = n.child_by_field_name("condition").map(|c| self.expr(c));
                if let Some(c) = &cond {
                    seq.push(c.clone());
                }
                let mut body = Vec::new();
                if let Some(b) = n.child_by_field_name("body") {
                    body.push(self.stmt(b, loop_depth + 1, false));
                }
                // `continue` in the body still runs the update: model the
                // update and test as a separate alternative-free tail that
                // runs from the loop's entry state (conservative).
                let mut tail = Vec::new();
                if let Some(u) = n.child_by_field_name("update") {
                    tail.push(self.expr(u));
                }
                if let Some(c) = cond {
                    tail.push(c);
                }
                seq.push(Eff::Loop(Box::new(Eff::Seq(body))));
                seq.push(Eff::Loop(Box::new(Eff::Seq(tail))));
                Eff::Seq(seq)
            }
            "while_statement" => {
                let cond = n
                    .child_by_field_name("condition")
                    .map(|c| self.expr(c))
                    .unwrap_or_else(Eff::empty);
                let body = n
                    .child_by_field_name("body")
                    .map(|b| self.stmt(b, loop_depth + 1, false))
                    .unwrap_or_else(Eff::empty);
                Eff::Seq(vec![
                    cond.clone(),
                    Eff::Loop(Box::new(body)),
                    Eff::Loop(Box::new(cond)),
                ])
            }
            "do_statement" => {
                let body = n
                    .child_by_field_name("body")
                    .map(|b| self.stmt(b, loop_depth + 1, false))
                    .unwrap_or_else(Eff::empty);
                let cond = n
                    .child_by_field_name("condition")
                    .map(|c| self.expr(c))
                    .unwrap_or_else(Eff::empty);
                Eff::Seq(vec![Eff::Loop(Box::new(body)), Eff::Loop(Box::new(cond))])
            }
            "switch_statement" => {
                let cond = n
                    .child_by_field_name("condition")
                    .map(|c| self.expr(c))
                    .unwrap_or_else(Eff::empty);
                let mut alts = vec![Eff::empty()];
                if let Some(body) = n.child_by_field_name("body") {
                    let mut current: Vec<Eff> = Vec::new();
                    for c in named_children(body) {
                        if c.kind() == "case_statement" {
                            if !current.is_empty() {
                                alts.push(Eff::Seq(std::mem::take(&mut current)));
                            }
                            let mut arm = Vec::new();
                            for s in named_children(c) {
                                if c.child_by_field_name("value") == Some(s) {
                                    continue;
                                }
                                arm.push(self.stmt(s, loop_depth, true));
                            }
                            alts.push(Eff::Seq(arm));
                        } else {
                            current.push(self.stmt(c, loop_depth, true));
                        }
                    }
                    if !current.is_empty() {
                        alts.push(Eff::Seq(current));
                    }
                }
                Eff::Seq(vec![cond, Eff::Branch(alts)])
            }
            "continue_statement" => Eff::Exit,
            "break_statement" => {
                if loop_depth == 0 && !in_switch {
                    Eff::Opaque
                } else {
                    Eff::Exit
                }
            }
            "return_statement" => Eff::Opaque,
            "goto_statement" => Eff::Opaque,
            "gnu_asm_expression" | "asm_statement" => Eff::Opaque,
            "labeled_statement" | "attributed_statement" => Eff::Seq(
                named_children(n)
                    .into_iter()
                    .filter(|c| {
                        !matches!(c.kind(), "statement_identifier" | "attribute_declaration")
                    })
                    .map(|c| self.stmt(c, loop_depth, in_switch))
                    .collect(),
            ),
            "declaration" => {
                let mut seq = Vec::new();
                let mut c = n.walk();
                for d in n.children_by_field_name("declarator", &mut c) {
                    if let Some(v) = d.child_by_field_name("value") {
                        seq.push(self.expr(v));
                    }
                }
                Eff::Seq(seq)
            }
            "comment" | "type_definition" | "struct_specifier" | "enum_specifier"
            | "union_specifier" => Eff::empty(),
            k if k.starts_with("preproc") => Eff::empty(),
            _ => self.expr(n),
        }
    }

    /// An expression statement: a reduction-shaped update or an expression.
    fn update_or_expr(&mut self, e: Node) -> Eff {
        let e = unparen(e);
        match e.kind() {
            "update_expression" => {
                let arg = e.child_by_field_name("argument").map(unparen);
                let op = e.child_by_field_name("operator").map(|o| self.t(o));
                if let (Some(a), Some(op)) = (arg, op) {
                    if a.kind() == "identifier" {
                        let op = if op == "++" { RedOp::Add } else { RedOp::Sub };
                        return Eff::Update {
                            var: self.name(a),
                            op,
                            rhs: Box::new(Eff::empty()),
                        };
                    }
                }
            }
            "assignment_expression" => {
                let left = e.child_by_field_name("left").map(unparen);
                let op = e
                    .child_by_field_name("operator")
                    .map(|o| self.t(o).to_string())
                    .unwrap_or_default();
                let right = e.child_by_field_name("right");
                if let (Some(l), Some(r)) = (left, right) {
                    if l.kind() == "identifier" {
                        let var = self.name(l);
                        if let Some(u) = self.update_shape(&var, &op, r) {
                            return u;
                        }
                    }
                }
            }
            _ => {}
        }
        self.expr(e)
    }

    fn mentions(&self, n: Node, var: &str) -> bool {
        identifiers_under(n, &["identifier"])
            .into_iter()
            .any(|i| self.t(i) == var)
    }

    /// `var op= r` or `var = var op e` / `e op var` / `cmp ? : ` / fmax.
    fn update_shape(&mut self, var: &str, op: &str, r: Node) -> Option<Eff> {
        let upd = |s: &mut Self, op: RedOp, e: Node| {
            if s.mentions(e, var) {
                return None;
            }
            Some(Eff::Update {
                var: var.to_string(),
                op,
                rhs: Box::new(s.expr(e)),
            })
        };
        if op != "=" {
            let bin = op.strip_suffix('=')?;
            let red = red_op_of_c_binary(bin)?;
            return upd(self, red, r);
        }
        let r = unparen(r);
        match r.kind() {
            "binary_expression" => {
                let bop = self.t(r.child_by_field_name("operator")?).to_string();
                let red = red_op_of_c_binary(&bop)?;
                let a = unparen(r.child_by_field_name("left")?);
                let b = r.child_by_field_name("right")?;
                if a.kind() == "identifier" && self.t(a) == var {
                    return upd(self, red, b);
                }
                let b2 = unparen(b);
                if commutative(red) && b2.kind() == "identifier" && self.t(b2) == var {
                    return upd(self, red, a);
                }
                None
            }
            "conditional_expression" => {
                // var = (e > var) ? e : var, and the other spellings.
                let cond = unparen(r.child_by_field_name("condition")?);
                let cons = unparen(r.child_by_field_name("consequence")?);
                let alt = unparen(r.child_by_field_name("alternative")?);
                let (red, e) = self.compare_shape(var, cond)?;
                let is_var = |n: Node| n.kind() == "identifier" && self.t(n) == var;
                if squash(cons, self.src) == squash(e, self.src) && is_var(alt) {
                    return upd(self, red, e);
                }
                let flipped = if red == RedOp::Max {
                    RedOp::Min
                } else {
                    RedOp::Max
                };
                if is_var(cons) && squash(alt, self.src) == squash(e, self.src) {
                    return upd(self, flipped, e);
                }
                None
            }
            "call_expression" => {
                let f = self.t(r.child_by_field_name("function")?).to_string();
                let red = match f.as_str() {
                    "fmax" | "fmaxf" | "fmaxl" => RedOp::Max,
                    "fmin" | "fminf" | "fminl" => RedOp::Min,
                    _ => return None,
                };
                let args = named_children(r.child_by_field_name("arguments")?);
                let [a, b] = args.as_slice() else {
                    return None;
                };
                let is_var =
                    |n: Node| unparen(n).kind() == "identifier" && self.t(unparen(n)) == var;
                if is_var(*a) {
                    upd(self, red, *b)
                } else if is_var(*b) {
                    upd(self, red, *a)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// `e > var`, `e >= var`, `var < e`, `var <= e`: Max with `e`; the
    /// reverse: Min.
    fn compare_shape<'t>(&self, var: &str, cond: Node<'t>) -> Option<(RedOp, Node<'t>)> {
        if cond.kind() != "binary_expression" {
            return None;
        }
        let op = self.t(cond.child_by_field_name("operator")?);
        let a = unparen(cond.child_by_field_name("left")?);
        let b = unparen(cond.child_by_field_name("right")?);
        let is_var = |n: Node| n.kind() == "identifier" && self.t(n) == var;
        let greater = match op {
            ">" | ">=" => true,
            "<" | "<=" => false,
            _ => return None,
        };
        if is_var(b) {
            Some((if greater { RedOp::Max } else { RedOp::Min }, a))
        } else if is_var(a) {
            Some((if greater { RedOp::Min } else { RedOp::Max }, b))
        } else {
            None
        }
    }

    /// `if (e > m) m = e;` (no else; braces allowed).
    fn minmax_if(&mut self, n: Node) -> Option<Eff> {
        if n.child_by_field_name("alternative").is_some() {
            return None;
        }
        let cond = unparen(n.child_by_field_name("condition")?);
        let mut cons = n.child_by_field_name("consequence")?;
        if cons.kind() == "compound_statement" {
            let kids = named_children(cons);
            let [one] = kids.as_slice() else {
                return None;
            };
            cons = *one;
        }
        if cons.kind() != "expression_statement" {
            return None;
        }
        let asg = unparen(cons.named_child(0)?);
        if asg.kind() != "assignment_expression"
            || self.t(asg.child_by_field_name("operator")?) != "="
        {
            return None;
        }
        let l = unparen(asg.child_by_field_name("left")?);
        if l.kind() != "identifier" {
            return None;
        }
        let var = self.name(l);
        let r = asg.child_by_field_name("right")?;
        let (red, e) = self.compare_shape(&var, cond)?;
        if squash(unparen(r), self.src) != squash(e, self.src) || self.mentions(e, &var) {
            return None;
        }
        Some(Eff::Update {
            var,
            op: red,
            rhs: Box::new(Eff::Seq(vec![self.expr(e), self.expr(r)])),
        })
    }

    fn expr(&mut self, n: Node) -> Eff {
        if self.depth > MAX_DEPTH {
            return Eff::Opaque;
        }
        self.depth += 1;
        let e = self.expr_inner(n);
        self.depth -= 1;
        e
    }

    fn expr_inner(&mut self, n: Node) -> Eff {
        match n.kind() {
            "identifier" => Eff::Read(self.name(n)),
            "parenthesized_expression" => match n.named_child(0) {
                Some(c) => self.expr(c),
                None => Eff::empty(),
            },
            "assignment_expression" => {
                let left = n.child_by_field_name("left").map(unparen);
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.t(o).to_string())
                    .unwrap_or_default();
                let right = n
                    .child_by_field_name("right")
                    .map(|r| self.expr(r))
                    .unwrap_or_else(Eff::empty);
                match left {
                    Some(l) if l.kind() == "identifier" => {
                        let v = self.name(l);
                        if op == "=" {
                            Eff::Seq(vec![right, Eff::Write(v)])
                        } else {
                            Eff::Seq(vec![Eff::Read(v.clone()), right, Eff::Write(v)])
                        }
                    }
                    Some(l) => Eff::Seq(vec![self.lvalue(l), right]),
                    None => right,
                }
            }
            "update_expression" => match n.child_by_field_name("argument").map(unparen) {
                Some(a) if a.kind() == "identifier" => {
                    let v = self.name(a);
                    Eff::Seq(vec![Eff::Read(v.clone()), Eff::Write(v)])
                }
                Some(a) => self.lvalue(a),
                None => Eff::empty(),
            },
            "pointer_expression" => {
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.t(o))
                    .unwrap_or("");
                let arg = n.child_by_field_name("argument").map(unparen);
                match (op, arg) {
                    ("&", Some(a)) => self.address_of(a),
                    (_, Some(a)) => self.expr(a),
                    _ => Eff::empty(),
                }
            }
            "binary_expression" => {
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.t(o))
                    .unwrap_or("");
                let l = n
                    .child_by_field_name("left")
                    .map(|c| self.expr(c))
                    .unwrap_or_else(Eff::empty);
                let r = n
                    .child_by_field_name("right")
                    .map(|c| self.expr(c))
                    .unwrap_or_else(Eff::empty);
                if op == "&&" || op == "||" {
                    Eff::Seq(vec![l, Eff::Branch(vec![r, Eff::empty()])])
                } else {
                    Eff::Seq(vec![l, r])
                }
            }
            "conditional_expression" => {
                let c = n
                    .child_by_field_name("condition")
                    .map(|c| self.expr(c))
                    .unwrap_or_else(Eff::empty);
                let a = n
                    .child_by_field_name("consequence")
                    .map(|c| self.expr(c))
                    .unwrap_or_else(Eff::empty);
                let b = n
                    .child_by_field_name("alternative")
                    .map(|c| self.expr(c))
                    .unwrap_or_else(Eff::empty);
                Eff::Seq(vec![c, Eff::Branch(vec![a, b])])
            }
            "call_expression" => {
                let mut seq = Vec::new();
                if let Some(f) = n.child_by_field_name("function") {
                    if f.kind() != "identifier" {
                        seq.push(self.expr(f));
                    }
                }
                if let Some(args) = n.child_by_field_name("arguments") {
                    for a in named_children(args) {
                        seq.push(self.expr(a));
                    }
                }
                Eff::Seq(seq)
            }
            "field_expression" => match n.child_by_field_name("argument") {
                Some(a) => self.expr(a),
                None => Eff::empty(),
            },
            "sizeof_expression" | "alignof_expression" | "offsetof_expression" => Eff::empty(),
            "gnu_asm_expression" => Eff::Opaque,
            "compound_statement" => self.stmt(n, 1, false),
            _ => Eff::Seq(
                named_children(n)
                    .into_iter()
                    .filter(|c| !matches!(c.kind(), "type_descriptor" | "comment"))
                    .map(|c| self.expr(c))
                    .collect(),
            ),
        }
    }

    /// The left side of an assignment that is not a plain name.
    fn lvalue(&mut self, l: Node) -> Eff {
        match l.kind() {
            "field_expression" => {
                let op = l
                    .child_by_field_name("operator")
                    .map(|o| self.t(o))
                    .unwrap_or("");
                let base = l.child_by_field_name("argument").map(unparen);
                match base {
                    Some(b) if op == "." && b.kind() == "identifier" => {
                        let v = self.name(b);
                        Eff::PartialWrite(v)
                    }
                    Some(b) if op == "." => self.lvalue(b),
                    Some(b) => self.expr(b),
                    None => Eff::empty(),
                }
            }
            "subscript_expression" => {
                let base = l.child_by_field_name("argument").map(unparen);
                let idx = l
                    .child_by_field_name("index")
                    .map(|i| self.expr(i))
                    .unwrap_or_else(Eff::empty);
                let b = match base {
                    // a[i] of a local array struct member: a partial write
                    // is reported through the array's name when it is a
                    // scalar (a pointer: pointee write, shared).
                    Some(b) if b.kind() == "field_expression" => self.lvalue(b),
                    Some(b) => self.expr(b),
                    None => Eff::empty(),
                };
                Eff::Seq(vec![b, idx])
            }
            _ => self.expr(l),
        }
    }

    fn address_of(&mut self, a: Node) -> Eff {
        match a.kind() {
            "identifier" => Eff::AddrTaken(self.name(a)),
            "field_expression"
                if a.child_by_field_name("operator").map(|o| self.t(o)) == Some(".") =>
            {
                match a.child_by_field_name("argument").map(unparen) {
                    Some(b) if b.kind() == "identifier" => Eff::AddrTaken(self.name(b)),
                    Some(b) => self.address_of(b),
                    None => Eff::empty(),
                }
            }
            _ => self.expr(a),
        }
    }
}
