//! Top-level program units found by a line scan, for error recovery.
//!
//! tree-sitter's error recovery can swallow the units that follow a broken
//! one (an unclosed parenthesis makes the rest of the file one ERROR node).
//! When a file has syntax errors, the front end splits the text into
//! top-level units here and parses each region on its own, so that a syntax
//! error stays inside its unit.
//!
//! The scan recognises unit headers (`subroutine`, `function` with prefixes
//! and a type, `program`, `module`, `submodule`, `block data`), their ends
//! (`end`, `end subroutine`, ...), `contains` and interface blocks. A header
//! met inside a unit that has no `contains` (and outside an interface
//! block) means the unit was never closed: it ends there.

/// One line's meaning for the scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LineKind {
    Header,
    End,
    Contains,
    InterfaceStart,
    InterfaceEnd,
    Code,
    Blank,
}

#[derive(Clone, Copy)]
enum Ctx {
    Unit { has_contains: bool },
    Interface,
}

/// Byte ranges covering the whole text: each top-level unit, and the code
/// between units (for a main program without a PROGRAM statement). Ranges
/// with only blank and comment lines are dropped.
pub fn top_level_regions(text: &str) -> Vec<(usize, usize)> {
    let mut regions: Vec<(usize, usize, bool)> = Vec::new();
    let mut stack: Vec<Ctx> = Vec::new();
    // start of the current region and whether it holds code
    let mut start = 0usize;
    let mut has_code = false;
    let mut pos = 0usize;
    for line in text.split_inclusive('\n') {
        let line_start = pos;
        pos += line.len();
        let kind = classify(line);
        match kind {
            LineKind::Header => {
                let opens_new = match stack.last() {
                    None => true,
                    Some(Ctx::Interface) | Some(Ctx::Unit { has_contains: true }) => false,
                    Some(Ctx::Unit {
                        has_contains: false,
                    }) => {
                        // the enclosing unit was never closed
                        stack.clear();
                        true
                    }
                };
                if opens_new {
                    if line_start > start {
                        regions.push((start, line_start, has_code));
                    }
                    start = line_start;
                    has_code = true;
                }
                stack.push(Ctx::Unit {
                    has_contains: false,
                });
            }
            LineKind::End => {
                has_code = true;
                while let Some(c) = stack.pop() {
                    if matches!(c, Ctx::Unit { .. }) {
                        break;
                    }
                }
                if stack.is_empty() {
                    regions.push((start, pos, true));
                    start = pos;
                    has_code = false;
                }
            }
            LineKind::Contains => {
                has_code = true;
                if let Some(Ctx::Unit { has_contains }) = stack.last_mut() {
                    *has_contains = true;
                }
            }
            LineKind::InterfaceStart => {
                has_code = true;
                stack.push(Ctx::Interface);
            }
            LineKind::InterfaceEnd => {
                has_code = true;
                if matches!(stack.last(), Some(Ctx::Interface)) {
                    stack.pop();
                }
            }
            LineKind::Code => has_code = true,
            LineKind::Blank => {}
        }
    }
    if pos > start {
        regions.push((start, pos, has_code));
    }
    regions
        .into_iter()
        .filter(|r| r.2 && r.1 > r.0)
        .map(|r| (r.0, r.1))
        .collect()
}

/// The lower-case words of a line's statement (label and comment removed).
fn words(line: &str) -> Vec<String> {
    let mut code = String::new();
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                code.push(' ');
            }
            None => match c {
                '!' => break,
                '\'' | '"' => {
                    quote = Some(c);
                    code.push(' ');
                }
                _ => code.push(c.to_ascii_lowercase()),
            },
        }
    }
    let trimmed = code.trim_start();
    let trimmed = trimmed.trim_start_matches(|c: char| c.is_ascii_digit());
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in trimmed.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
            cur.push(c);
        } else {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn is_name(w: Option<&String>) -> bool {
    w.is_some_and(|w| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
    })
}

fn classify(line: &str) -> LineKind {
    let t = line.trim_start();
    if t.starts_with('#') {
        return LineKind::Blank;
    }
    let w = words(line);
    if w.is_empty() {
        return LineKind::Blank;
    }
    let first = w[0].as_str();
    // END lines
    let end_kinds = [
        "subroutine",
        "function",
        "program",
        "module",
        "submodule",
        "blockdata",
    ];
    if first == "end" {
        match w.get(1).map(String::as_str) {
            None => return LineKind::End,
            Some("interface") => return LineKind::InterfaceEnd,
            Some("block") if w.get(2).map(String::as_str) == Some("data") => return LineKind::End,
            Some(k) if end_kinds.contains(&k) => return LineKind::End,
            Some(";") => return LineKind::End,
            _ => return LineKind::Code,
        }
    }
    if let Some(rest) = first.strip_prefix("end") {
        if rest == "interface" {
            return LineKind::InterfaceEnd;
        }
        if end_kinds.contains(&rest) {
            return LineKind::End;
        }
    }
    if first == "contains" && w.len() == 1 {
        return LineKind::Contains;
    }
    if first == "interface"
        || (first == "abstract" && w.get(1).map(String::as_str) == Some("interface"))
    {
        return LineKind::InterfaceStart;
    }
    // headers: skip prefixes and a type spec
    let mut i = 0;
    while i < w.len() {
        match w[i].as_str() {
            "recursive" | "pure" | "impure" | "elemental" | "non_recursive" | "simple" => i += 1,
            "module"
                if matches!(
                    w.get(i + 1).map(String::as_str),
                    Some("function" | "subroutine")
                ) =>
            {
                i += 1
            }
            "integer" | "real" | "logical" | "complex" | "character" | "byte"
            | "doubleprecision" | "doublecomplex" | "type" | "class" | "double" => {
                i += 1;
                if w.get(i).map(String::as_str) == Some("precision")
                    || w.get(i).map(String::as_str) == Some("complex")
                {
                    i += 1;
                }
                // (kind) or *8
                if w.get(i).map(String::as_str) == Some("(") {
                    i = super::after_balanced(&w, i, &"(".to_string(), &")".to_string());
                } else if w.get(i).map(String::as_str) == Some("*") {
                    i += 2;
                }
                // a type must be followed by FUNCTION to be a header
                if w.get(i).map(String::as_str) != Some("function") {
                    return LineKind::Code;
                }
            }
            _ => break,
        }
    }
    let kw = w.get(i).map(String::as_str);
    let header = match kw {
        Some("subroutine" | "function" | "program" | "module") => {
            is_name(w.get(i + 1)) && !(kw == Some("module") && w[i + 1] == "procedure")
        }
        Some("submodule") => w.get(i + 1).map(String::as_str) == Some("("),
        Some("block") => w.get(i + 1).map(String::as_str) == Some("data"),
        Some("blockdata") => true,
        _ => false,
    };
    if header {
        LineKind::Header
    } else {
        LineKind::Code
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        top_level_regions(src)
            .into_iter()
            .map(|(a, b)| src[a..b].trim())
            .collect()
    }

    #[test]
    fn classifies_lines() {
        assert_eq!(classify("  subroutine foo(a)\n"), LineKind::Header);
        assert_eq!(
            classify("recursive integer(kind=8) function f(x) result(r)"),
            LineKind::Header
        );
        assert_eq!(classify("double precision function g()"), LineKind::Header);
        assert_eq!(classify("real*8 function h()"), LineKind::Header);
        assert_eq!(classify("module procedure foo"), LineKind::Code);
        assert_eq!(classify("module m ! comment"), LineKind::Header);
        assert_eq!(classify("10 end"), LineKind::End);
        assert_eq!(classify("end subroutine foo"), LineKind::End);
        assert_eq!(classify("ENDFUNCTION"), LineKind::End);
        assert_eq!(classify("end do"), LineKind::Code);
        assert_eq!(classify("end type point"), LineKind::Code);
        assert_eq!(classify("function = 3"), LineKind::Code);
        assert_eq!(classify("real function"), LineKind::Code);
        assert_eq!(classify("integer :: n"), LineKind::Code);
        assert_eq!(classify("! subroutine in a comment"), LineKind::Blank);
        assert_eq!(classify("print *, 'subroutine x'"), LineKind::Code);
        assert_eq!(classify("interface"), LineKind::InterfaceStart);
        assert_eq!(classify("end interface"), LineKind::InterfaceEnd);
        assert_eq!(classify("contains"), LineKind::Contains);
    }

    #[test]
    fn splits_units() {
        let src = "! head\nsubroutine a()\n  x = (1\n  end do\nend subroutine a\n\nmodule m\ncontains\n  subroutine b()\n  interface\n    subroutine c()\n    end subroutine\n  end interface\n  end subroutine\nend module\nx = 1\nend\n";
        assert_eq!(
            texts(src),
            [
                "subroutine a()\n  x = (1\n  end do\nend subroutine a",
                "module m\ncontains\n  subroutine b()\n  interface\n    subroutine c()\n    end subroutine\n  end interface\n  end subroutine\nend module",
                "x = 1\nend",
            ]
        );
        // a unit without END ends at the next header
        let src = "subroutine a()\n  x = 1\nsubroutine b()\nend\n";
        assert_eq!(
            texts(src),
            ["subroutine a()\n  x = 1", "subroutine b()\nend"]
        );
    }
}
