//! C integer constant semantics on `i64`, shared by every constant
//! evaluator of csa-lint: the preprocessor's `#if` conditions
//! ([`crate::preproc`]) and the analyzer's C front end (macro bodies,
//! enumerators, region ids, loop bounds). The evaluators walk their own
//! tokens or trees; what an operator or a literal means is decided here
//! only, so the two cannot disagree.
//!
//! Values are 64-bit two's complement (clang's `intmax_t` in `#if`, and
//! the bits an LLVM IR constant holds); nothing tracks unsignedness.
//!
//! * `+ - *` and unary `-` wrap. In `#if` clang warns ("integer overflow
//!   in preprocessor expression") and goes on with the wrapped value; in C
//!   code the folded constant becomes an IR constant, which wraps too.
//! * `/` and `%` by zero are not evaluable (`None`): in `#if` clang stops
//!   with "division by zero in preprocessor expression".
//! * `i64::MIN / -1` and `i64::MIN % -1` are not evaluable: the quotient
//!   does not fit, and the division traps at run time.
//! * `<<` and `>>` by a negative amount or by 64 or more are not
//!   evaluable (undefined in C). Otherwise `<<` keeps the low 64 bits
//!   (bits shifted out are lost, as in clang's wrapped result) and `>>`
//!   is arithmetic (clang's on signed values).
//! * Comparisons, `!`, `&&` and `||` give 0 or 1. `&&` and `||` here take
//!   both values; short-circuiting an operand that is not known is the
//!   evaluator's business.

/// A binary operator of C integer constant expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    LogAnd,
    LogOr,
}

impl BinOp {
    /// The operator spelled `token` (`"<<"`), if it is one.
    pub fn from_token(token: &str) -> Option<BinOp> {
        Some(match token {
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Rem,
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "==" => BinOp::Eq,
            "!=" => BinOp::Ne,
            "&" => BinOp::BitAnd,
            "^" => BinOp::BitXor,
            "|" => BinOp::BitOr,
            "&&" => BinOp::LogAnd,
            "||" => BinOp::LogOr,
            _ => return None,
        })
    }
}

/// A unary operator of C integer constant expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `+`
    Plus,
    /// `~`
    BitNot,
    /// `!`
    Not,
}

impl UnOp {
    /// The operator spelled `token` (`"~"`), if it is one.
    pub fn from_token(token: &str) -> Option<UnOp> {
        Some(match token {
            "-" => UnOp::Neg,
            "+" => UnOp::Plus,
            "~" => UnOp::BitNot,
            "!" => UnOp::Not,
            _ => return None,
        })
    }
}

/// `a op b`; `None` when it is not evaluable (see the module
/// documentation).
pub fn binop(op: BinOp, a: i64, b: i64) -> Option<i64> {
    Some(match op {
        BinOp::Mul => a.wrapping_mul(b),
        // `checked_*`: `None` for a zero divisor and for `i64::MIN / -1`
        BinOp::Div => a.checked_div(b)?,
        BinOp::Rem => a.checked_rem(b)?,
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        // `checked_sh*`: `None` for an amount of 64 or more only
        BinOp::Shl => a.checked_shl(u32::try_from(b).ok()?)?,
        BinOp::Shr => a.checked_shr(u32::try_from(b).ok()?)?,
        BinOp::Lt => i64::from(a < b),
        BinOp::Le => i64::from(a <= b),
        BinOp::Gt => i64::from(a > b),
        BinOp::Ge => i64::from(a >= b),
        BinOp::Eq => i64::from(a == b),
        BinOp::Ne => i64::from(a != b),
        BinOp::BitAnd => a & b,
        BinOp::BitXor => a ^ b,
        BinOp::BitOr => a | b,
        BinOp::LogAnd => i64::from(a != 0 && b != 0),
        BinOp::LogOr => i64::from(a != 0 || b != 0),
    })
}

/// `op a`; always evaluable (`-i64::MIN` wraps to itself).
pub fn unop(op: UnOp, a: i64) -> i64 {
    match op {
        UnOp::Neg => a.wrapping_neg(),
        UnOp::Plus => a,
        UnOp::BitNot => !a,
        UnOp::Not => i64::from(a == 0),
    }
}

/// The value of a C integer literal without a sign: decimal, `0x` hex,
/// `0b` binary, `0` octal, with any `u`/`U`/`l`/`L`/`z`/`Z` suffix and `'`
/// digit separators. `None` for anything else (a floating literal, a
/// malformed one) and for a value above `u64::MAX`.
///
/// The value is the literal's, not yet an `i64`: one above `i64::MAX` has
/// an unsigned type in C, which the evaluators do not model (see
/// [`literal_i64`]).
pub fn parse_literal(text: &str) -> Option<u64> {
    let t: String = text.chars().filter(|&c| c != '\'').collect();
    let body = t.trim_end_matches(['u', 'U', 'l', 'L', 'z', 'Z']);
    let (digits, radix) =
        if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (h, 16)
        } else if let Some(b) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
            (b, 2)
        } else if body.len() > 1 && body.starts_with('0') {
            (&body[1..], 8)
        } else {
            (body, 10)
        };
    // `from_str_radix` would take a leading `+`
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// [`parse_literal`] as a value the evaluators compute with: `None` above
/// `i64::MAX`, whose unsigned arithmetic they do not model (in `#if`,
/// `0xFFFFFFFFFFFFFFFF > 0` is true; as the `i64` -1 it would be false).
pub fn literal_i64(text: &str) -> Option<i64> {
    parse_literal(text).and_then(|v| i64::try_from(v).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(op: &str, a: i64, c: i64) -> Option<i64> {
        binop(BinOp::from_token(op).unwrap(), a, c)
    }

    #[test]
    fn tokens_name_every_operator() {
        for t in [
            "*", "/", "%", "+", "-", "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "&", "^", "|",
            "&&", "||",
        ] {
            assert!(BinOp::from_token(t).is_some(), "{t}");
        }
        assert_eq!(BinOp::from_token("="), None);
        assert_eq!(BinOp::from_token("?"), None);
        for t in ["-", "+", "~", "!"] {
            assert!(UnOp::from_token(t).is_some(), "{t}");
        }
        assert_eq!(UnOp::from_token("*"), None);
    }

    #[test]
    fn arithmetic_wraps_on_overflow() {
        assert_eq!(b("+", i64::MAX, 1), Some(i64::MIN));
        assert_eq!(b("-", i64::MIN, 1), Some(i64::MAX));
        assert_eq!(b("*", i64::MAX, 2), Some(-2));
        assert_eq!(b("*", 1 << 62, 4), Some(0));
        assert_eq!(unop(UnOp::Neg, i64::MIN), i64::MIN);
        assert_eq!(b("+", 2, 3), Some(5));
        assert_eq!(b("*", -4, 3), Some(-12));
    }

    #[test]
    fn division_by_zero_and_min_by_minus_one_are_not_evaluable() {
        assert_eq!(b("/", 1, 0), None);
        assert_eq!(b("%", 1, 0), None);
        assert_eq!(b("/", i64::MIN, -1), None);
        assert_eq!(b("%", i64::MIN, -1), None);
        // C division truncates towards zero, the remainder has the
        // dividend's sign
        assert_eq!(b("/", -7, 2), Some(-3));
        assert_eq!(b("%", -7, 2), Some(-1));
        assert_eq!(b("/", i64::MIN, 1), Some(i64::MIN));
    }

    #[test]
    fn shifts_by_negative_or_wide_amounts_are_not_evaluable() {
        for op in ["<<", ">>"] {
            assert_eq!(b(op, 1, -1), None, "{op}");
            assert_eq!(b(op, 1, 64), None, "{op}");
            assert_eq!(b(op, 1, i64::MAX), None, "{op}");
            assert_eq!(b(op, 1, 1 << 32), None, "{op}");
        }
        assert_eq!(b("<<", 1, 63), Some(i64::MIN));
        // bits shifted out are lost
        assert_eq!(b("<<", 3, 63), Some(i64::MIN));
        assert_eq!(b("<<", -1, 4), Some(-16));
        // arithmetic right shift
        assert_eq!(b(">>", -16, 2), Some(-4));
        assert_eq!(b(">>", i64::MIN, 63), Some(-1));
    }

    #[test]
    fn comparisons_and_logic_give_zero_or_one() {
        assert_eq!(b("<", -1, 0), Some(1));
        assert_eq!(b(">=", -1, 0), Some(0));
        assert_eq!(b("==", 3, 3), Some(1));
        assert_eq!(b("!=", 3, 3), Some(0));
        assert_eq!(b("&&", 2, 5), Some(1));
        assert_eq!(b("&&", 2, 0), Some(0));
        assert_eq!(b("||", 0, -3), Some(1));
        assert_eq!(b("||", 0, 0), Some(0));
        assert_eq!(b("&", 6, 3), Some(2));
        assert_eq!(b("^", 6, 3), Some(5));
        assert_eq!(b("|", 6, 3), Some(7));
        assert_eq!(unop(UnOp::Not, 5), 0);
        assert_eq!(unop(UnOp::Not, 0), 1);
        assert_eq!(unop(UnOp::BitNot, 0), -1);
        assert_eq!(unop(UnOp::Plus, -2), -2);
    }

    #[test]
    fn literals() {
        assert_eq!(parse_literal("0"), Some(0));
        assert_eq!(parse_literal("42"), Some(42));
        assert_eq!(parse_literal("0x10UL"), Some(16));
        assert_eq!(parse_literal("0XffLLu"), Some(255));
        assert_eq!(parse_literal("017"), Some(15));
        assert_eq!(parse_literal("0b101"), Some(5));
        assert_eq!(parse_literal("1'000'000"), Some(1_000_000));
        assert_eq!(parse_literal("10z"), Some(10));
        assert_eq!(parse_literal("0xFFFFFFFFFFFFFFFF"), Some(u64::MAX));
        assert_eq!(parse_literal("18446744073709551616"), None);
        for bad in [
            "", "0x", "1.5", "1e3", ".5", "0x1p3", "09", "0b2", "1f", "+1", "-1", "0x+1", "abc",
        ] {
            assert_eq!(parse_literal(bad), None, "{bad}");
        }
        assert_eq!(literal_i64("9223372036854775807"), Some(i64::MAX));
        assert_eq!(literal_i64("9223372036854775808"), None);
        assert_eq!(literal_i64("0xFFFFFFFFFFFFFFFF"), None);
    }
}
