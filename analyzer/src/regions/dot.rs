//! The memop graph as Graphviz DOT (`csa-lint --dump memop-graph FUNCTION
//! FILE`), laid out like the compiler's `-csa-view-pre-ordering-memop-cfg`
//! (docs/compiler-notes.md §9), plus the ordering edges of
//! [`super::ordering`].
//!
//! * Header `digraph "MemopCFG for '<fn>' function" {` and the same text as
//!   the graph label (with a note when every region is ignored).
//! * One record node per reachable block, in reverse post-order; the node
//!   number is the block's position in that order:
//!   `Node<N> [shape=record,label="{{<d0>P0|...}|N (bbK name)|...|{<s0>S0|...}}"]`
//!   with predecessor numbers on top and successor numbers at the bottom
//!   (left out when there are none), and in between one line per
//!   region/section intrinsic (`section entry R`, with R the region) and
//!   per ordering memory operation (`<N>o<k> = read|write|call|asm|prefetch
//!   <source text> (line L)`, port `o<k>`), in execution order.
//! * Control-flow edges `Node<src>:s<i> -> Node<dst>:d<j>;`, i the
//!   successor index, j the source's position among dst's predecessors.
//! * Ordering edges from A's line to B's line, after the control flow, with
//!   weight 0 so they do not pull the layout (`constraint=false` would let
//!   Graphviz put both ends on one rank, and it drops such flat edges
//!   between record ports): kept edges solid black, edges a region
//!   drops dashed grey labelled with the region, edges a region would drop
//!   but for an inconsistency (every region ignored) solid red labelled
//!   `R, ignored`. Loop-carried edges say which loop. Edges that are not
//!   needed (no alias, only reads, prefetch first) are not drawn.
//!
//! Every label is DOT-escaped (record specials `{ } | < >`, quotes and
//! backslashes), so the output parses whatever the source text holds.

use super::events::{Item, MemopCfg, RegionKey};
use super::ordering::{OrderingInfo, Verdict};
use crate::graph::loops::LoopForest;
use crate::ir::Function;
use crate::memory::{MemOpKind, MemoryInfo};
use crate::source::SourceText;
use std::fmt::Write;

/// What the graph is drawn from.
pub struct DotInput<'a> {
    pub func: &'a Function,
    pub succs: &'a crate::graph::Csr,
    pub reachable: &'a [bool],
    /// The reachable blocks in reverse post-order ([`crate::graph::dom::DomTree::rpo`]).
    pub rpo: &'a [u32],
    pub forest: &'a LoopForest,
    pub memory: &'a MemoryInfo,
    pub events: &'a MemopCfg,
    pub ordering: &'a OrderingInfo,
    pub src: &'a SourceText,
}

/// How a region is named in the graph.
pub fn region_label(r: RegionKey) -> String {
    match r {
        RegionKey::User(id) => format!("{id}"),
        RegionKey::Clie(l) => format!("loop{} (CLIE)", l.0),
        RegionKey::Omp(i) => format!("omp{i}"),
        RegionKey::OmpSections(i) => format!("sections{i}"),
    }
}

/// Escapes text for a record label field.
fn esc_record(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '"' | '{' | '}' | '|' | '<' | '>' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for a plain quoted DOT string.
fn esc_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '"' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The source text of a span on one line, shortened.
fn snippet(src: &SourceText, span: crate::source::Span) -> String {
    let t = src.text().get(span.range()).unwrap_or("");
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() > 40 {
        let short: String = t.chars().take(37).collect();
        format!("{short}...")
    } else {
        t
    }
}

/// The DOT text of the memop graph.
pub fn memop_graph(inp: &DotInput) -> String {
    let n = inp.func.blocks.len().min(inp.succs.len());
    let live = |b: u32| (b as usize) < n && inp.reachable.get(b as usize).copied().unwrap_or(false);
    let rpo: Vec<u32> = inp.rpo.iter().copied().filter(|&b| live(b)).collect();
    let mut num = vec![u32::MAX; n];
    for (i, &b) in rpo.iter().enumerate() {
        num[b as usize] = i as u32;
    }
    // Predecessors in the order the compiler lists them: by edge, sources
    // in reverse post-order.
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &b in &rpo {
        for &s in &inp.succs[b as usize] {
            if live(s) {
                preds[s as usize].push(b);
            }
        }
    }
    // Port of every ordering memop: (node number, k).
    let mut port: Vec<Option<(u32, usize)>> = vec![None; inp.memory.ops.len()];

    let title = format!("MemopCFG for '{}' function", inp.func.name);
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", esc_string(&title));
    let mut label = title.clone();
    if inp.ordering.regions_ignored {
        label.push_str(" - BAD PARALLEL SECTION INTRINSICS: every region and section ignored");
    }
    if inp.ordering.listing_truncated {
        label.push_str(&format!(
            " - only the first {} ordering edges are drawn",
            crate::regions::ordering::MAX_LISTED_EDGES
        ));
    }
    let _ = writeln!(out, "\tlabel=\"{}\";", esc_string(&label));
    let _ = writeln!(out);
    for &b in &rpo {
        let id = num[b as usize];
        let block = inp.func.block(crate::ir::BlockId(b));
        let mut fields: Vec<String> = Vec::new();
        let ps: Vec<String> = preds[b as usize]
            .iter()
            .enumerate()
            .map(|(j, &p)| format!("<d{j}>P{}", num[p as usize]))
            .collect();
        fields.push(format!("{{{}}}", ps.join("|")));
        fields.push(esc_record(&format!("{id} (bb{b} {})", block.name)));
        let mut k = 0usize;
        for &item in inp
            .events
            .items
            .get(b as usize)
            .map_or(&[][..], |v| v.as_slice())
        {
            match item {
                Item::Event(e) => {
                    let ev = &inp.events.events[e];
                    fields.push(format!(
                        "{}\\l",
                        esc_record(&format!(
                            "{} {}",
                            ev.kind.describe(),
                            region_label(ev.region)
                        ))
                    ));
                }
                Item::Mem(_) => {
                    let Some(i) = MemopCfg::is_ordering_memop(inp.memory, item) else {
                        continue;
                    };
                    let op = &inp.memory.ops[i];
                    let kind = match op.kind {
                        MemOpKind::Read => "read",
                        MemOpKind::Write => "write",
                        MemOpKind::Call => "call",
                        MemOpKind::Asm => "asm",
                        MemOpKind::Prefetch => "prefetch",
                        MemOpKind::LifetimeStart | MemOpKind::Intrinsic => "intrinsic",
                    };
                    let line = inp.src.line_col(op.span.start as usize).line;
                    let text = format!(
                        "{id}o{k} = {kind} {} (line {line})",
                        snippet(inp.src, op.span)
                    );
                    fields.push(format!("<o{k}>{}\\l", esc_record(&text)));
                    if let Some(p) = port.get_mut(i) {
                        *p = Some((id, k));
                    }
                    k += 1;
                }
            }
        }
        let ss: Vec<String> = inp.succs[b as usize]
            .iter()
            .filter(|&&s| live(s))
            .enumerate()
            .map(|(i, &s)| format!("<s{i}>S{}", num[s as usize]))
            .collect();
        if !ss.is_empty() {
            fields.push(format!("{{{}}}", ss.join("|")));
        }
        let _ = writeln!(
            out,
            "\tNode{id} [shape=record,label=\"{{{}}}\"];",
            fields.join("|")
        );
    }
    // Control flow.
    for &b in &rpo {
        let id = num[b as usize];
        let live_succs = inp.succs[b as usize].iter().filter(|&&s| live(s));
        let mut seen: Vec<u32> = Vec::new();
        for (i, &s) in live_succs.enumerate() {
            // The j-th edge from b into s (a switch may reach s twice).
            let nth = seen.iter().filter(|&&t| t == s).count();
            seen.push(s);
            let j = preds[s as usize]
                .iter()
                .enumerate()
                .filter(|(_, &p)| p == b)
                .nth(nth)
                .map_or(0, |(j, _)| j);
            let _ = writeln!(out, "\tNode{id}:s{i} -> Node{}:d{j};", num[s as usize]);
        }
    }
    // Ordering edges.
    for e in &inp.ordering.edges {
        let (Some(Some((na, ka))), Some(Some((nb, kb)))) = (port.get(e.from), port.get(e.to))
        else {
            continue;
        };
        let carried = e.carried_by.map(|l| {
            let header = inp.forest.loops.get(l.index()).map_or(0, |d| d.header);
            format!(
                "carried by loop{} (header node {})",
                l.0,
                num.get(header as usize).copied().unwrap_or(0)
            )
        });
        let attrs = match (e.verdict, e.first_attempt) {
            (Verdict::Kept, Verdict::Dropped { region }) => {
                let text = match &carried {
                    Some(c) => format!("{}, ignored; {c}", region_label(region)),
                    None => format!("{}, ignored", region_label(region)),
                };
                format!("color=red,fontcolor=red,label=\"{}\"", esc_string(&text))
            }
            (Verdict::Kept, _) => match &carried {
                Some(c) => format!("color=black,label=\"{}\"", esc_string(c)),
                None => "color=black".to_string(),
            },
            (Verdict::Dropped { region }, _) => {
                let text = match &carried {
                    Some(c) => format!("{}; {c}", region_label(region)),
                    None => region_label(region),
                };
                format!(
                    "style=dashed,color=grey,fontcolor=grey,label=\"{}\"",
                    esc_string(&text)
                )
            }
            (Verdict::NotNeeded { .. }, _) => continue,
        };
        let _ = writeln!(
            out,
            "\tNode{na}:o{ka} -> Node{nb}:o{kb} [weight=0,{attrs}];"
        );
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyze, AnalysisOptions};
    use csa_grammars::SourceKind;
    use std::collections::{HashMap, HashSet};

    /// A small structural check of the DOT we write: quoted strings and
    /// escapes well formed, braces balanced (the graph's and every record
    /// label's), one statement per line, every edge endpoint a declared
    /// node and a port of its record.
    pub(crate) fn check_dot(dot: &str) -> Result<(), String> {
        let mut lines = dot.lines();
        let head = lines.next().ok_or("empty")?;
        if !(head.starts_with("digraph \"") && head.ends_with("\" {")) {
            return Err(format!("bad header {head}"));
        }
        unquote(&head["digraph ".len()..head.len() - 2])?;
        let mut ports: HashMap<String, HashSet<String>> = HashMap::new();
        let mut edges: Vec<(String, String, String, String)> = Vec::new();
        let mut closed = false;
        for line in lines {
            let t = line.trim();
            if closed {
                return Err(format!("text after the closing brace: {t}"));
            }
            if t.is_empty() {
                continue;
            }
            if t == "}" {
                closed = true;
                continue;
            }
            let stmt = t.strip_suffix(';').ok_or(format!("no `;`: {t}"))?;
            if let Some(rest) = stmt.strip_prefix("label=") {
                unquote(rest)?;
            } else if stmt.contains(" -> ") {
                let (lhs, rest) = stmt.split_once(" -> ").ok_or("edge")?;
                let (rhs, attrs) = match rest.split_once(' ') {
                    Some((r, a)) => (r, Some(a)),
                    None => (rest, None),
                };
                if let Some(a) = attrs {
                    check_attrs(a)?;
                }
                let (ln, lp) = lhs.split_once(':').ok_or(format!("no port: {t}"))?;
                let (rn, rp) = rhs.split_once(':').ok_or(format!("no port: {t}"))?;
                edges.push((ln.into(), lp.into(), rn.into(), rp.into()));
            } else {
                let (name, attrs) = stmt.split_once(' ').ok_or(format!("node: {t}"))?;
                let attrs = attrs
                    .strip_prefix("[shape=record,label=")
                    .ok_or(format!("node attrs: {t}"))?;
                let attrs = attrs.strip_suffix(']').ok_or(format!("node attrs: {t}"))?;
                let label = unquote(attrs)?;
                let p = record_ports(&label)?;
                if ports.insert(name.to_string(), p).is_some() {
                    return Err(format!("node {name} declared twice"));
                }
            }
        }
        if !closed {
            return Err("unclosed graph".into());
        }
        for (a, pa, b, pb) in &edges {
            for (n, p) in [(a, pa), (b, pb)] {
                let declared = ports.get(n).ok_or(format!("undeclared node {n}"))?;
                if !declared.contains(p) {
                    return Err(format!("node {n} has no port {p}"));
                }
            }
        }
        Ok(())
    }

    /// `"..."` to its content (escapes kept), checking escapes.
    fn unquote(s: &str) -> Result<String, String> {
        let inner = s
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .ok_or(format!("not a quoted string: {s}"))?;
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    chars.next().ok_or("dangling backslash")?;
                }
                '"' => return Err(format!("unescaped quote in {s}")),
                c if c.is_control() => return Err("control character".into()),
                _ => {}
            }
        }
        Ok(inner.to_string())
    }

    fn check_attrs(a: &str) -> Result<(), String> {
        let inner = a
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .ok_or(format!("attrs: {a}"))?;
        // Split on commas outside quotes.
        let mut in_q = false;
        let mut esc = false;
        let mut start = 0;
        let mut parts = Vec::new();
        for (i, c) in inner.char_indices() {
            if esc {
                esc = false;
                continue;
            }
            match c {
                '\\' if in_q => esc = true,
                '"' => in_q = !in_q,
                ',' if !in_q => {
                    parts.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if in_q {
            return Err(format!("unbalanced quotes: {a}"));
        }
        parts.push(&inner[start..]);
        for p in parts {
            let (k, v) = p.split_once('=').ok_or(format!("attr {p}"))?;
            if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("attr name {k}"));
            }
            if v.starts_with('"') {
                unquote(v)?;
            } else if !v.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(format!("attr value {v}"));
            }
        }
        Ok(())
    }

    /// The ports of a record label, checking its braces.
    fn record_ports(label: &str) -> Result<HashSet<String>, String> {
        let mut depth = 0i32;
        let mut ports = HashSet::new();
        let mut chars = label.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth < 0 {
                        return Err(format!("unbalanced braces: {label}"));
                    }
                }
                '<' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            Some('>') => break,
                            Some(c) if c.is_ascii_alphanumeric() => name.push(c),
                            _ => return Err(format!("bad port in {label}")),
                        }
                    }
                    ports.insert(name);
                }
                '>' | '|' if depth == 0 => return Err(format!("field outside braces: {label}")),
                '>' => return Err(format!("stray `>` in {label}")),
                _ => {}
            }
        }
        if depth != 0 {
            return Err(format!("unbalanced braces: {label}"));
        }
        Ok(ports)
    }

    fn graph(src: &str, name: &str) -> (String, OrderingInfo) {
        let fa = analyze(SourceKind::C, src, &AnalysisOptions::default());
        let f = fa.function(name).expect("function");
        (f.memop_graph(&fa.source), f.ordering_listing().clone())
    }

    #[test]
    fn sections_pattern_graph() {
        let src = "void f(int *a, const int *b, int *c, const int *d) {
  int reg = __builtin_csa_parallel_region_entry(0);
  int sec0 = __builtin_csa_parallel_section_entry(reg);
  *a = *b;
  __builtin_csa_parallel_section_exit(sec0);
  int sec1 = __builtin_csa_parallel_section_entry(reg);
  *c = *d;
  __builtin_csa_parallel_section_exit(sec1);
  __builtin_csa_parallel_region_exit(reg);
}
";
        let (dot, _) = graph(src, "f");
        check_dot(&dot).unwrap_or_else(|e| panic!("{e}\n{dot}"));
        let expected = r#"digraph "MemopCFG for 'f' function" {
	label="MemopCFG for 'f' function";

	Node0 [shape=record,label="{{}|0 (bb0 entry)|region entry 0\l|section entry 0\l|<o0>0o0 = read *b (line 4)\l|<o1>0o1 = write *a (line 4)\l|section exit 0\l|section entry 0\l|<o2>0o2 = read *d (line 7)\l|<o3>0o3 = write *c (line 7)\l|section exit 0\l|region exit 0\l|{<s0>S1}}"];
	Node1 [shape=record,label="{{<d0>P0}|1 (bb1 return)}"];
	Node0:s0 -> Node1:d0;
	Node0:o0 -> Node0:o1 [weight=0,color=black];
	Node0:o1 -> Node0:o2 [weight=0,style=dashed,color=grey,fontcolor=grey,label="0"];
	Node0:o0 -> Node0:o3 [weight=0,style=dashed,color=grey,fontcolor=grey,label="0"];
	Node0:o1 -> Node0:o3 [weight=0,style=dashed,color=grey,fontcolor=grey,label="0"];
	Node0:o2 -> Node0:o3 [weight=0,color=black];
}
"#;
        assert_eq!(dot, expected);
    }

    #[test]
    fn loops_and_escaping() {
        let src = "struct S { int x; };
void f(struct S *s, int *p, int n, int c) {
  p[0] = 1;
  for (int i = 0; i < n; i++) {
    int r = __builtin_csa_parallel_region_entry(7);
    int t = __builtin_csa_parallel_section_entry(r);
    s->x = p[i] | (p[i] << 2) > 1;
    __builtin_csa_parallel_section_exit(t);
    if (c) {
      __builtin_csa_parallel_region_exit(r);
      continue;
    }
    __builtin_csa_parallel_region_exit(r);
  }
  switch (c) { case 1: case 2: p[1] = \"{|}\"[0]; break; default: break; }
}
";
        let (dot, info) = graph(src, "f");
        check_dot(&dot).unwrap_or_else(|e| panic!("{e}\n{dot}"));
        assert!(dot.contains("section entry 7\\l"), "{dot}");
        assert!(dot.contains("\\{\\|\\}"), "{dot}");
        assert!(dot.contains("s-\\>x"), "{dot}");
        assert!(!info.edges.is_empty());
        assert!(dot.contains("carried by loop0"), "{dot}");
    }

    #[test]
    fn ignored_regions_are_shown() {
        // Region 0 drops p[0] -> p[1]; region 1 opens a section after its
        // exit, which the compiler notices: it orders again without regions.
        let src = "void f(int *p, int *q) {
  int r = __builtin_csa_parallel_region_entry(0);
  int s = __builtin_csa_parallel_section_entry(r);
  p[0] = 0;
  __builtin_csa_parallel_section_exit(s);
  s = __builtin_csa_parallel_section_entry(r);
  p[1] = 1;
  __builtin_csa_parallel_section_exit(s);
  __builtin_csa_parallel_region_exit(r);
  int r1 = __builtin_csa_parallel_region_entry(1);
  __builtin_csa_parallel_region_exit(r1);
  int s1 = __builtin_csa_parallel_section_entry(r1);
  *q = 1;
  __builtin_csa_parallel_section_exit(s1);
}
";
        let (dot, info) = graph(src, "f");
        check_dot(&dot).unwrap_or_else(|e| panic!("{e}\n{dot}"));
        assert!(info.regions_ignored);
        assert!(dot.contains("BAD PARALLEL SECTION INTRINSICS"));
        assert!(
            dot.contains("color=red,fontcolor=red,label=\"0, ignored\""),
            "{dot}"
        );
    }

    #[test]
    fn every_fixture_function_gives_valid_dot() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let mut count = 0;
        for dir in ["c", "fortran"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Some(kind) = csa_grammars::detect::detect(&path) else {
                    continue;
                };
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let fa = analyze(kind, &text, &AnalysisOptions::default());
                for f in &fa.functions {
                    let dot = f.memop_graph(&fa.source);
                    check_dot(&dot)
                        .unwrap_or_else(|e| panic!("{}: {}: {e}", path.display(), f.func.name));
                    count += 1;
                }
            }
        }
        assert!(count > 50, "{count}");
    }

    #[test]
    fn the_checker_rejects_broken_dot() {
        let ok = "digraph \"g\" {\n\tNode0 [shape=record,label=\"{{}|a\\{\\l|<o0>x\\l}\"];\n\tNode0:o0 -> Node0:o0 [color=black];\n}\n";
        assert_eq!(check_dot(ok), Ok(()));
        for bad in [
            ok.replace("a\\{", "a{"),
            ok.replace("Node0:o0 ->", "Node1:o0 ->"),
            ok.replace("-> Node0:o0", "-> Node0:o9"),
            ok.replace("color=black", "label=\"a\"b\""),
            ok.trim_end_matches("}\n").to_string(),
        ] {
            assert!(check_dot(&bad).is_err(), "{bad}");
        }
    }
}
