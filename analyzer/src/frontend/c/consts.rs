//! Integer constant evaluation: literals, `#define` bodies (token level) and
//! expression subtrees (tree level). Everything here is pure and bounded.
//! What the operators and integer literals mean is `csa_grammars::cint`'s
//! (shared with the preprocessor's `#if`); this module walks the tokens and
//! trees.

use crate::frontend::fields::{CFields, F};
use csa_grammars::cint;
use crate::frontend::flat::FNode as Node;

/// Nesting bound for both evaluators, counted across macro expansions
/// (an identifier's macro body continues at its use's depth).
pub(crate) const MAX_EVAL_DEPTH: u32 = 200;

/// Resolves identifiers during constant evaluation.
pub(crate) trait ConstEnv {
    /// The value of an identifier used at byte `offset`, if it is an integer
    /// constant (a macro, an enumerator, a `const` variable...).
    fn ident_value(&self, name: &str, offset: usize, depth: u32) -> Option<i64>;
    /// Whether `name` names a type (for casts inside macro bodies).
    fn is_type_name(&self, name: &str) -> bool;
}

/// The value of a C integer literal ([`cint::parse_literal`]: decimal,
/// hex, octal, binary; `u`/`l`/`z` suffixes; `'` digit separators), with
/// the sign tree-sitter-c folds into a `number_literal` (`-1` is one
/// token). `None` for a floating literal. A literal above `i64::MAX` (an
/// unsigned one in C) gives its bits as an `i64`: what a builtin's `int`
/// argument receives after clang's conversion, and still a constant.
/// (Unsigned arithmetic on it is not modelled: `0xFFFFFFFFFFFFFFFF / 2`
/// folds as `-1 / 2`.)
pub(crate) fn parse_int_literal(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix('-') {
        return parse_int_literal(rest.strip_prefix(['-', '+']).map_or(rest, |_| "x"))
            .map(i64::wrapping_neg);
    }
    if let Some(rest) = text.strip_prefix('+') {
        if rest.starts_with(['-', '+']) {
            return None;
        }
        return parse_int_literal(rest);
    }
    cint::parse_literal(text).map(|v| v as i64)
}

/// The value of a character literal (`'a'`, `'\n'`, `'\x41'`, `'\0'`).
pub(crate) fn parse_char_literal(text: &str) -> Option<i64> {
    let t = text.trim();
    let t = t.trim_start_matches(['L', 'u', 'U', '8']);
    let body = t.strip_prefix('\'')?.strip_suffix('\'')?;
    let s = unescape(body);
    let mut chars = s.chars();
    let c = chars.next()?;
    if chars.next().is_some() {
        return None;
    }
    Some(c as i64)
}

/// The contents of a string literal token including its quotes and prefix.
pub(crate) fn string_literal_value(text: &str) -> String {
    let t = text.trim();
    let t = t.trim_start_matches(['L', 'u', 'U', '8']);
    let body = t.strip_prefix('"').unwrap_or(t);
    let body = body.strip_suffix('"').unwrap_or(body);
    unescape(body)
}

/// Resolves C escape sequences.
pub(crate) fn unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut it = body.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = it.next() else {
            out.push('\\');
            break;
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'e' => out.push('\u{1b}'),
            '\n' => {}
            'x' => {
                let mut v: u32 = 0;
                let mut any = false;
                while let Some(d) = it.peek().and_then(|c| c.to_digit(16)) {
                    v = v.saturating_mul(16).saturating_add(d);
                    any = true;
                    it.next();
                }
                if any {
                    out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                } else {
                    out.push('x');
                }
            }
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match it.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            it.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            other => out.push(other),
        }
    }
    out
}

/// `a op b` for the operator spelled `op`, as [`cint::binop`] says
/// (overflow wraps; division by zero is not a constant).
pub(crate) fn binop(op: &str, a: i64, b: i64) -> Option<i64> {
    cint::binop(cint::BinOp::from_token(op)?, a, b)
}

/// `op a` for the operator spelled `op`, as [`cint::unop`] says.
pub(crate) fn unop(op: &str, a: i64) -> Option<i64> {
    Some(cint::unop(cint::UnOp::from_token(op)?, a))
}

/// Unwraps parentheses around a single expression.
pub(crate) fn strip_parens(mut n: Node<'_>) -> Node<'_> {
    for _ in 0..10_000 {
        if n.node_kind() != "parenthesized_expression" || n.named_child_count() != 1 {
            break;
        }
        match n.named_child(0) {
            Some(c)
                if c.node_kind() != "compound_statement" && c.node_kind() != "comma_expression" =>
            {
                n = c
            }
            _ => break,
        }
    }
    n
}

pub(crate) fn node_text<'s>(n: Node<'_>, src: &'s str) -> &'s str {
    src.get(n.byte_range()).unwrap_or("")
}

/// Whether the type descriptor of a cast names an integer type (so that the
/// cast keeps an integer constant).
fn cast_keeps_int(ty: Node<'_>, src: &str) -> bool {
    // Pointer/array/function casts have a declarator.
    if ty.field(F::Declarator).is_some() {
        return false;
    }
    let Some(spec) = ty.field(F::Type) else {
        return false;
    };
    match spec.node_kind() {
        "primitive_type" => !matches!(node_text(spec, src), "float" | "double" | "void"),
        "sized_type_specifier" => spec
            .field(F::Type)
            .is_none_or(|t| !matches!(node_text(t, src), "double" | "float")),
        "enum_specifier" => true,
        "type_identifier" => matches!(node_text(spec, src), "_Bool" | "bool"),
        _ => false,
    }
}

/// Evaluates an expression subtree as an integer constant expression.
/// `&&`, `||` and `?:` short-circuit: `0 && x` is 0 whatever `x` is.
pub(crate) fn eval_node(n: Node<'_>, src: &str, env: &dyn ConstEnv, depth: u32) -> Option<i64> {
    if depth > MAX_EVAL_DEPTH {
        return None;
    }
    let d = depth + 1;
    match n.node_kind() {
        "number_literal" => parse_int_literal(node_text(n, src)),
        "char_literal" => parse_char_literal(node_text(n, src)),
        "true" => Some(1),
        "false" => Some(0),
        "parenthesized_expression" => {
            if n.named_child_count() != 1 {
                return None;
            }
            let c = n.named_child(0)?;
            eval_node(c, src, env, d)
        }
        "identifier" => {
            if n.is_missing() {
                return None;
            }
            env.ident_value(node_text(n, src), n.start_byte(), d)
        }
        "unary_expression" => {
            let op = n.field(F::Operator)?;
            let a = eval_node(n.field(F::Argument)?, src, env, d)?;
            unop(node_text(op, src), a)
        }
        "binary_expression" => {
            let op = node_text(n.field(F::Operator)?, src);
            let l = n.field(F::Left)?;
            let r = n.field(F::Right)?;
            match op {
                "&&" => {
                    let a = eval_node(l, src, env, d)?;
                    if a == 0 {
                        return Some(0);
                    }
                    Some((eval_node(r, src, env, d)? != 0) as i64)
                }
                "||" => {
                    let a = eval_node(l, src, env, d)?;
                    if a != 0 {
                        return Some(1);
                    }
                    Some((eval_node(r, src, env, d)? != 0) as i64)
                }
                _ => {
                    let a = eval_node(l, src, env, d)?;
                    let b = eval_node(r, src, env, d)?;
                    binop(op, a, b)
                }
            }
        }
        "conditional_expression" => {
            let c = eval_node(n.field(F::Condition)?, src, env, d)?;
            if c != 0 {
                match n.field(F::Consequence) {
                    Some(x) => eval_node(x, src, env, d),
                    None => Some(c),
                }
            } else {
                eval_node(n.field(F::Alternative)?, src, env, d)
            }
        }
        "cast_expression" => {
            let ty = n.field(F::Type)?;
            if !cast_keeps_int(ty, src) {
                return None;
            }
            eval_node(n.field(F::Value)?, src, env, d)
        }
        _ => None,
    }
}

/// Tokens of a macro body.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Num(i64),
    Ident(String),
    Punct(&'static str),
    /// Anything we cannot evaluate (strings, floats, stray characters).
    Bad,
}

const PUNCTS: [&str; 24] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "+", "-", "*", "/", "%", "&", "|",
    "^", "~", "!", "<", ">", "?", ":",
];

/// Splits a macro body into tokens (comments dropped).
pub(crate) fn tokenize(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b'\\' {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            break;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i += 2;
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'\'') {
                // exponent signs of floats
                if (b[i] == b'e' || b[i] == b'E' || b[i] == b'p' || b[i] == b'P')
                    && matches!(b.get(i + 1), Some(b'+') | Some(b'-'))
                    && !text[start..i].starts_with("0x")
                {
                    i += 1;
                }
                i += 1;
            }
            match text.get(start..i).and_then(parse_int_literal) {
                Some(v) => out.push(Tok::Num(v)),
                None => out.push(Tok::Bad),
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(text[start..i].to_string()));
            continue;
        }
        if c == b'\'' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            match text.get(start..i.min(b.len())).and_then(parse_char_literal) {
                Some(v) => out.push(Tok::Num(v)),
                None => out.push(Tok::Bad),
            }
            continue;
        }
        if let Some(p) = PUNCTS.iter().find(|p| b[i..].starts_with(p.as_bytes())) {
            out.push(Tok::Punct(p));
            i += p.len();
            continue;
        }
        out.push(Tok::Bad);
        // skip one UTF-8 character
        i += 1;
        while i < b.len() && (b[i] & 0xC0) == 0x80 {
            i += 1;
        }
    }
    out
}

/// Evaluates a token list (a macro body) as an integer constant expression
/// at nesting `depth`. `None`: malformed or not constant.
pub(crate) fn eval_tokens(
    toks: &[Tok],
    env: &dyn ConstEnv,
    offset: usize,
    depth: u32,
) -> Option<i64> {
    if toks.is_empty() {
        return None;
    }
    let mut p = TokParser {
        toks,
        pos: 0,
        env,
        offset,
    };
    let v = p.cond(depth).ok()?;
    if p.pos != toks.len() {
        return None;
    }
    v
}

/// Recursive descent over macro tokens; `Ok(None)`: well formed but not
/// constant, `Err`: malformed.
struct TokParser<'a> {
    toks: &'a [Tok],
    pos: usize,
    env: &'a dyn ConstEnv,
    offset: usize,
}

type PResult = Result<Option<i64>, ()>;

fn prec(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | "<=" | ">" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

impl TokParser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(q)) if *q == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn cond(&mut self, nest: u32) -> PResult {
        if nest > MAX_EVAL_DEPTH {
            return Err(());
        }
        let c = self.binary(1, nest + 1)?;
        if self.eat("?") {
            let a = self.cond(nest + 1)?;
            if !self.eat(":") {
                return Err(());
            }
            let b = self.cond(nest + 1)?;
            return Ok(match c {
                Some(c) if c != 0 => a,
                Some(_) => b,
                None => None,
            });
        }
        Ok(c)
    }

    fn binary(&mut self, min: u8, nest: u32) -> PResult {
        if nest > MAX_EVAL_DEPTH {
            return Err(());
        }
        let mut lhs = self.unary(nest + 1)?;
        while let Some(Tok::Punct(op)) = self.peek() {
            let op = *op;
            let Some(pr) = prec(op) else { break };
            if pr < min {
                break;
            }
            self.pos += 1;
            let rhs = self.binary(pr + 1, nest + 1)?;
            lhs = match (op, lhs, rhs) {
                ("&&", Some(0), _) => Some(0),
                ("||", Some(a), _) if a != 0 => Some(1),
                (_, Some(a), Some(b)) => binop(op, a, b),
                _ => None,
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self, nest: u32) -> PResult {
        if nest > MAX_EVAL_DEPTH {
            return Err(());
        }
        let tok = self.peek().cloned().ok_or(())?;
        match tok {
            Tok::Num(v) => {
                self.pos += 1;
                Ok(Some(v))
            }
            Tok::Ident(name) => {
                self.pos += 1;
                if name == "sizeof" || name == "_Alignof" || name == "alignof" {
                    // not evaluable without a type model; swallow a
                    // parenthesised operand
                    if self.eat("(") {
                        self.skip_to_close()?;
                    }
                    return Ok(None);
                }
                if matches!(self.peek(), Some(Tok::Punct("("))) {
                    // a function-like macro call or a function call
                    self.pos += 1;
                    self.skip_to_close()?;
                    return Ok(None);
                }
                Ok(self.env.ident_value(&name, self.offset, nest + 1))
            }
            Tok::Punct("(") => {
                self.pos += 1;
                // a cast: `(` type words `)` followed by an operand
                let save = self.pos;
                let mut words = 0;
                while let Some(Tok::Ident(w)) = self.peek() {
                    if !self.env.is_type_name(w) {
                        break;
                    }
                    words += 1;
                    self.pos += 1;
                }
                if words > 0 && self.eat(")") {
                    return self.unary(nest + 1);
                }
                self.pos = save;
                let v = self.cond(nest + 1)?;
                if !self.eat(")") {
                    return Err(());
                }
                Ok(v)
            }
            Tok::Punct(op @ ("-" | "+" | "~" | "!")) => {
                self.pos += 1;
                let a = self.unary(nest + 1)?;
                Ok(a.and_then(|a| unop(op, a)))
            }
            _ => Err(()),
        }
    }

    fn skip_to_close(&mut self) -> Result<(), ()> {
        let mut level = 1usize;
        while let Some(t) = self.peek() {
            match t {
                Tok::Punct("(") => level += 1,
                Tok::Punct(")") => {
                    level -= 1;
                    if level == 0 {
                        self.pos += 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
        Err(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Env;
    impl ConstEnv for Env {
        fn ident_value(&self, name: &str, _: usize, _: u32) -> Option<i64> {
            (name == "N").then_some(100)
        }
        fn is_type_name(&self, name: &str) -> bool {
            name == "int" || name == "long"
        }
    }

    fn ev(s: &str) -> Option<i64> {
        eval_tokens(&tokenize(s), &Env, 0, 0)
    }

    #[test]
    fn literals() {
        assert_eq!(parse_int_literal("0x10UL"), Some(16));
        assert_eq!(parse_int_literal("010"), Some(8));
        assert_eq!(parse_int_literal("0"), Some(0));
        assert_eq!(parse_int_literal("-1"), Some(-1));
        assert_eq!(parse_int_literal("- 1"), Some(-1));
        assert_eq!(parse_int_literal("--1"), None);
        assert_eq!(parse_int_literal("1.5"), None);
        assert_eq!(parse_int_literal("1e3"), None);
        // above i64::MAX: unsigned in C; its bits, as an int argument gets
        assert_eq!(parse_int_literal("0xFFFFFFFFFFFFFFFFull"), Some(-1));
        assert_eq!(parse_int_literal("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_char_literal("'\\n'"), Some(10));
        assert_eq!(string_literal_value("\"Cy\\x41\""), "CyA");
    }

    #[test]
    fn macro_bodies() {
        assert_eq!(ev("100"), Some(100));
        assert_eq!(ev("(N*2)"), Some(200));
        assert_eq!(ev("(int)(N - 1)"), Some(99));
        assert_eq!(ev("-1"), Some(-1));
        assert_eq!(ev("1 << 4 | 1"), Some(17));
        assert_eq!(ev("0 && X"), Some(0));
        assert_eq!(ev("X"), None);
        assert_eq!(ev("1.0"), None);
        assert_eq!(ev("N ? 3 : 4"), Some(3));
        assert_eq!(ev("(1"), None);
        assert_eq!(ev(""), None);
        assert_eq!(ev("1 / 0"), None);
    }

    /// The operators are `csa_grammars::cint`'s, as in the preprocessor:
    /// overflow wraps (the IR constant clang makes), the rest is not a
    /// constant.
    #[test]
    fn overflow_wraps_and_undefined_operations_are_not_constants() {
        assert_eq!(ev("9223372036854775807 + 1"), Some(i64::MIN));
        assert_eq!(ev("-9223372036854775807 - 2"), Some(i64::MAX));
        assert_eq!(ev("4611686018427387904 * 2"), Some(i64::MIN));
        assert_eq!(ev("-(-9223372036854775807 - 1)"), Some(i64::MIN));
        assert_eq!(ev("1 << 63"), Some(i64::MIN));
        assert_eq!(ev("1 % 0"), None);
        assert_eq!(ev("(-9223372036854775807 - 1) / -1"), None);
        assert_eq!(ev("(-9223372036854775807 - 1) % -1"), None);
        assert_eq!(ev("1 << 64"), None);
        assert_eq!(ev("1 << -1"), None);
        assert_eq!(ev("1 >> 64"), None);
        // unsigned in C: its bits (a builtin's int argument gets -1)
        assert_eq!(ev("0xFFFFFFFFFFFFFFFF"), Some(-1));
        assert_eq!(ev("0 && 1 / 0"), Some(0));
    }
}
