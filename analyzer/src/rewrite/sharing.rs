//! The tree-sitter side of the OpenMP rewrite's data sharing.
//!
//! Markers are decided on the IR: scalars by `dependence::classify` (via
//! `rewrite::scalars`), arrays by `dependence::arrays`. What stays here:
//! * the OpenMP canonical-form checks of a C `for` ([`c_canonical`]) and a
//!   Fortran `DO` ([`fortran_canonical`]);
//! * [`ternary_min_max`]: a minimum or maximum written with `?:`, whose
//!   value the IR does not keep (its branches join); the rewrite asks it
//!   only for a variable the IR finds carried;
//! * [`c_sharing`], the whole syntactic analysis of a C loop, for the
//!   region/section loop pattern (`regions.rs`), which has no IR loop at
//!   hand yet.
//!
//! The syntactic analysis: the body becomes a small effect tree ([`Eff`]):
//! reads and writes of names in evaluation order, alternatives (`if`,
//! `?:`, the right side of `&&`/`||`, `switch` arms), inner loops (which
//! may run zero times), `continue`, and reduction-shaped updates. One
//! forward pass computes, per name, whether some read can see a value from
//! an earlier iteration and which names are written on every path; the
//! classification gives `private`, `lastprivate`, `reduction(op:x)` or a
//! refusal. It works on names, not declarations (a name declared both
//! inside the loop and outside it is refused), and assumes calls write
//! scalar locals only through `&x`.

use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

pub use crate::dependence::scalars::RedOp;

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

/// The clauses a loop needs. Names as first spelled in the loop.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sharing {
    pub private: Vec<String>,
    pub lastprivate: Vec<String>,
    pub reductions: Vec<(RedOp, String)>,
    /// Induction variables and their steps: `linear(x:step)`.
    pub linear: Vec<(String, i64)>,
}

/// Why a loop cannot become an OpenMP loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub reason: String,
}

impl Refusal {
    fn new(reason: impl Into<String>) -> Refusal {
        Refusal {
            reason: reason.into(),
        }
    }
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

fn text<'a>(n: Node, src: &'a str) -> &'a str {
    src.get(n.byte_range()).unwrap_or("")
}

fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

/// The text of an expression with blanks removed, for comparing the two
/// `e` of a min/max pattern.
fn squash(n: Node, src: &str) -> String {
    text(n, src)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

fn unparen(mut n: Node) -> Node {
    while n.kind() == "parenthesized_expression" {
        match n.named_child(0) {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}

/// Every identifier under `n` (iterative), filtered by `keep`.
fn identifiers_under<'t>(n: Node<'t>, kinds: &[&str]) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if kinds.contains(&x.kind()) {
            out.push(x);
        }
        let mut c = x.walk();
        for ch in x.children(&mut c) {
            stack.push(ch);
        }
    }
    out
}

// ---------------------------------------------------------------- C ----

/// The loop a C rewrite converts, in OpenMP canonical form.
#[derive(Clone, Debug)]
pub struct CanonicalLoop {
    /// The index name.
    pub index: String,
    /// The index is declared in the `for` initializer.
    pub index_declared: bool,
}

struct CBuilder<'s> {
    src: &'s str,
    depth: usize,
}

/// Checks that a C `for` statement is in OpenMP canonical form: `init`
/// assigns or declares the index, the test compares it, the update steps it
/// by an invariant amount, and the body writes neither the index nor what
/// the test and step read.
pub fn c_canonical(for_node: Node, src: &str) -> Result<CanonicalLoop, Refusal> {
    if for_node.kind() != "for_statement" {
        return Err(Refusal::new(
            "only `for` loops can become OpenMP loops (this is a while or do loop)",
        ));
    }
    let init = for_node.child_by_field_name("initializer");
    let (index, declared) = match init {
        Some(d) if d.kind() == "declaration" => {
            let decls: Vec<Node> = {
                let mut c = d.walk();
                d.children_by_field_name("declarator", &mut c).collect()
            };
            match decls.as_slice() {
                [one] if one.kind() == "init_declarator" => match one
                    .child_by_field_name("declarator")
                    .filter(|x| x.kind() == "identifier")
                {
                    Some(id) => (text(id, src).to_string(), true),
                    None => return Err(Refusal::new("the loop's index is not a plain variable")),
                },
                _ => {
                    return Err(Refusal::new(
                        "the loop's initializer does not declare exactly one index",
                    ))
                }
            }
        }
        Some(a) if a.kind() == "assignment_expression" => {
            let left = a.child_by_field_name("left").map(unparen);
            let op = a.child_by_field_name("operator").map(|o| text(o, src));
            match (left, op) {
                (Some(l), Some("=")) if l.kind() == "identifier" => {
                    (text(l, src).to_string(), false)
                }
                _ => {
                    return Err(Refusal::new(
                        "the loop's initializer is not `index = start`",
                    ))
                }
            }
        }
        _ => return Err(Refusal::new(
            "the loop has no `index = start` initializer, so it is not an OpenMP canonical loop",
        )),
    };
    let cond = for_node
        .child_by_field_name("condition")
        .map(unparen)
        .ok_or_else(|| Refusal::new("the loop has no test"))?;
    let cmp = cond
        .child_by_field_name("operator")
        .map(|o| text(o, src))
        .unwrap_or("");
    if cond.kind() != "binary_expression" || !matches!(cmp, "<" | "<=" | ">" | ">=" | "!=") {
        return Err(Refusal::new(
            "the loop's test is not a comparison of the index with a bound",
        ));
    }
    let (l, r) = (
        cond.child_by_field_name("left").map(unparen),
        cond.child_by_field_name("right").map(unparen),
    );
    let is_index =
        |n: Option<Node>| n.is_some_and(|n| n.kind() == "identifier" && text(n, src) == index);
    let bound = if is_index(l) {
        r
    } else if is_index(r) {
        l
    } else {
        return Err(Refusal::new("the loop's test does not compare the index"));
    };
    let update = for_node
        .child_by_field_name("update")
        .map(unparen)
        .ok_or_else(|| Refusal::new("the loop has no update"))?;
    let step: Option<Node> = match update.kind() {
        "update_expression" if is_index(update.child_by_field_name("argument").map(unparen)) => {
            None
        }
        "assignment_expression" if is_index(update.child_by_field_name("left").map(unparen)) => {
            let op = update
                .child_by_field_name("operator")
                .map(|o| text(o, src))
                .unwrap_or("");
            let right = update.child_by_field_name("right").map(unparen);
            match (op, right) {
                ("+=" | "-=", Some(r)) => Some(r),
                ("=", Some(r)) if r.kind() == "binary_expression" => {
                    let bop = r
                        .child_by_field_name("operator")
                        .map(|o| text(o, src))
                        .unwrap_or("");
                    let (a, b) = (
                        r.child_by_field_name("left").map(unparen),
                        r.child_by_field_name("right").map(unparen),
                    );
                    if bop == "+" && is_index(a) {
                        b
                    } else if bop == "+" && is_index(b) {
                        a
                    } else if bop == "-" && is_index(a) {
                        b
                    } else {
                        return Err(Refusal::new("the loop's update does not step the index"));
                    }
                }
                _ => return Err(Refusal::new("the loop's update does not step the index")),
            }
        }
        _ => return Err(Refusal::new("the loop's update does not step the index")),
    };
    let body = for_node
        .child_by_field_name("body")
        .ok_or_else(|| Refusal::new("the loop has no body"))?;
    let written = c_written_names(body, src);
    if written.contains(&index) {
        return Err(Refusal::new(format!(
            "the body writes the loop index `{index}`"
        )));
    }
    for n in bound.into_iter().chain(step) {
        for id in identifiers_under(n, &["identifier"]) {
            let name = text(id, src);
            if written.contains(name) {
                return Err(Refusal::new(format!(
                    "the body writes `{name}`, which the loop's bound or step reads"
                )));
            }
        }
        if !identifiers_under(
            n,
            &[
                "call_expression",
                "assignment_expression",
                "update_expression",
            ],
        )
        .is_empty()
        {
            return Err(Refusal::new(
                "the loop's bound or step calls a function or has side effects",
            ));
        }
    }
    Ok(CanonicalLoop {
        index,
        index_declared: declared,
    })
}

/// Names assigned (`x = `, `x op= `, `x++`) anywhere under `n`.
pub(crate) fn c_written_in(n: Node, src: &str) -> BTreeSet<String> {
    c_written_names(n, src)
}

fn c_written_names(n: Node, src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for x in identifiers_under(n, &["assignment_expression", "update_expression"]) {
        let target = if x.kind() == "assignment_expression" {
            x.child_by_field_name("left")
        } else {
            x.child_by_field_name("argument")
        };
        if let Some(t) = target.map(unparen) {
            if t.kind() == "identifier" {
                out.insert(text(t, src).to_string());
            }
        }
    }
    out
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

/// Scalars local to a C function: parameters and non-`static`/`extern`
/// block-scope declarations outside `exclude` whose scope holds it, that
/// are not arrays.
fn c_locals(func: Node, exclude: Node, src: &str) -> BTreeSet<String> {
    let mut scalars = BTreeMap::new();
    let range = exclude.byte_range();
    for d in identifiers_under(func, &["declaration", "parameter_declaration"]) {
        let in_loop = range.contains(&d.start_byte());
        // A declaration outside the loop matters only when its scope (the
        // enclosing block, `for` statement or function) holds the loop.
        if !in_loop {
            let scope = {
                let mut p = d.parent();
                while let Some(x) = p {
                    if matches!(
                        x.kind(),
                        "compound_statement" | "for_statement" | "function_definition"
                    ) {
                        break;
                    }
                    p = x.parent();
                }
                p
            };
            if scope.is_some_and(|sc| !sc.byte_range().contains(&range.start)) {
                continue;
            }
        }
        let storage_static = named_children(d).iter().any(|c| {
            c.kind() == "storage_class_specifier" && matches!(text(*c, src), "static" | "extern")
        });
        let mut c = d.walk();
        for decl in d.children_by_field_name("declarator", &mut c) {
            let mut x = decl;
            let mut array = false;
            loop {
                match x.kind() {
                    "init_declarator"
                    | "pointer_declarator"
                    | "parenthesized_declarator"
                    | "attributed_declarator" => {
                        if x.kind() == "parenthesized_declarator" {
                            match x.named_child(0) {
                                Some(c) => x = c,
                                None => break,
                            }
                            continue;
                        }
                        match x.child_by_field_name("declarator") {
                            Some(c) => x = c,
                            None => break,
                        }
                    }
                    "array_declarator" => {
                        array = true;
                        match x.child_by_field_name("declarator") {
                            Some(c) => x = c,
                            None => break,
                        }
                    }
                    "function_declarator" => break,
                    _ => break,
                }
            }
            if x.kind() != "identifier" {
                continue;
            }
            let name = text(x, src).to_string();
            if in_loop {
                continue;
            }
            scalars.insert(name, !storage_static && !array);
        }
    }
    // `false` entries (arrays, statics) are not scalars.
    scalars.retain(|_, v| *v);
    scalars.into_keys().collect()
}

/// Scalars local to a C function that are visible at `at` (a statement of
/// its body).
pub(crate) fn c_scalar_locals(func: Node, at: Node, src: &str) -> BTreeSet<String> {
    c_locals(func, at, src)
}


// ---------------------------------------------------------- Fortran ----

/// The loop a Fortran rewrite converts: a counted `DO`.
#[derive(Clone, Debug)]
pub struct FortranLoop {
    /// The index as written.
    pub index: String,
}

fn fkey(s: &str) -> String {
    s.to_ascii_lowercase()
}

/// The statements of a `do_loop` node (between its `do` and `end do`).
fn do_body<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    named_children(n)
        .into_iter()
        .filter(|c| {
            !matches!(
                c.kind(),
                "do_statement"
                    | "end_do_loop_statement"
                    | "end_do_label_loop_statement"
                    | "block_label_start_expression"
                    | "comment"
            )
        })
        .collect()
}

/// Checks a Fortran `DO` for the OpenMP rewrite: counted, no `EXIT` out of
/// it, the body writes neither the index nor the bounds.
pub fn fortran_canonical(do_loop: Node, src: &str) -> Result<FortranLoop, Refusal> {
    let stmt = named_children(do_loop)
        .into_iter()
        .find(|c| c.kind() == "do_statement")
        .ok_or_else(|| Refusal::new("not a DO loop"))?;
    let control = named_children(stmt)
        .into_iter()
        .find(|c| c.kind() == "loop_control_expression")
        .ok_or_else(|| {
            Refusal::new("only counted DO loops (`do i = a, b`) can become OpenMP loops")
        })?;
    let parts = named_children(control);
    let index = parts
        .first()
        .filter(|p| p.kind() == "identifier")
        .ok_or_else(|| Refusal::new("the DO loop's index is not a plain variable"))?;
    let index_name = text(*index, src).to_string();
    let written = fortran_written_names(do_loop, src);
    if written.contains(&fkey(&index_name)) {
        return Err(Refusal::new(format!(
            "the body writes the loop index `{index_name}`"
        )));
    }
    for p in parts.iter().skip(1) {
        for id in identifiers_under(*p, &["identifier"]) {
            if written.contains(&fkey(text(id, src))) {
                return Err(Refusal::new(format!(
                    "the body writes `{}`, which the loop's bounds read",
                    text(id, src)
                )));
            }
        }
    }
    Ok(FortranLoop { index: index_name })
}

/// Names assigned (`x = `) in statements under `n`, excluding the loop's
/// own control.
fn fortran_written_names(n: Node, src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for body in do_body(n) {
        for a in identifiers_under(body, &["assignment_statement", "loop_control_expression"]) {
            let target = if a.kind() == "assignment_statement" {
                a.child_by_field_name("left")
            } else {
                a.named_child(0)
            };
            if let Some(t) = target.filter(|t| t.kind() == "identifier") {
                out.insert(fkey(text(t, src)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
