#!/usr/bin/env python3
"""Race-check figures of csa-lint on DataRaceBench's single-loop cases.

Usage: scripts/drb_eval.py CHECKOUT [--lint PATH] [--lang c|fortran|both]
                            [--form omp|marker|both] [--verbose] [--json]
                            [--keep DIR] [--jobs N]

CHECKOUT is a DataRaceBench tree (github.com/LLNL/dataracebench). The script
reads micro-benchmarks/*.c and micro-benchmarks-fortran/*.f95 at run time,
runs csa-lint on each selected file in two forms (the OpenMP original, and
the directive replaced by the CSA marker) and prints TP/FP/FN/TN, precision,
recall, F1 and the number of false CSA501 per language and form. Nothing of
the checkout is copied into this repository. See scripts/README.md.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

RACE_CODES = ("CSA501", "CSA502", "CSA503")
TIMEOUT = 60  # seconds per csa-lint run
C_MARKER = "__builtin_csa_parallel_loop();"
F_MARKER = "call builtin_csa_parallel_loop()"

# ---------------------------------------------------------------------------
# Ground truth
#
# OpenMP form: the file name (-yes / -no), except OMP_LABELS.
#
# Marker form: the CSA compiler keeps scalar locals that live in registers
# (never address-taken; in Fortran not SAVE/module/COMMON, not a dummy
# argument, not passed by reference to a procedure or an I/O statement)
# flowing from one iteration to the next (SEMANTICS.md §4; docs/rules.md,
# CSA501), so they act as private variables and reductions without a clause.
# A benchmark whose only race pairs are on such scalars is race-free in the
# marker form; a race-free OpenMP loop whose clause variable is memory under
# CSA races once the clause is gone. Every file whose marker-form label
# differs from its name is listed here, with the reason, written from the
# file's race pairs and declarations. Unlisted files keep the name's label.
# ---------------------------------------------------------------------------
MARKER_LABELS = {
    # C: the racing variable is a local scalar whose address is never taken
    # (printf receives values, not addresses)
    "DRB009-lastprivatemissing-orig-yes.c": ("no", "only race on local scalar x (x=i each iteration); printf takes its value"),
    "DRB010-lastprivatemissing-var-yes.c": ("no", "only race on local scalar x (x=i each iteration); printf takes its value"),
    "DRB011-minusminus-orig-yes.c": ("no", "only race on local scalar numNodes2 (numNodes2--: a register reduction)"),
    "DRB012-minusminus-var-yes.c": ("no", "only race on local scalar numNodes2 (numNodes2--: a register reduction)"),
    "DRB016-outputdep-orig-yes.c": ("no", "only races on local scalar x (carried in a register); a[i] is one element per iteration"),
    "DRB017-outputdep-var-yes.c": ("no", "only races on local scalar x (carried in a register); a[i] is one element per iteration"),
    "DRB018-plusplus-orig-yes.c": ("no", "outLen is a local register counter: output[outLen++] is a new element in each iteration"),
    "DRB019-plusplus-var-yes.c": ("no", "outLen is a local register counter: output[outLen++] is a new element in each iteration"),
    "DRB020-privatemissing-var-yes.c": ("no", "only race on local scalar tmp (missing private)"),
    "DRB021-reductionmissing-orig-yes.c": ("no", "only race on local scalar sum (missing reduction; a register reduction); temp and j are local scalars too"),
    "DRB022-reductionmissing-var-yes.c": ("no", "only race on local scalar sum (missing reduction; a register reduction); temp and j are local scalars too"),
    "DRB028-privatemissing-orig-yes.c": ("no", "only race on local scalar tmp (missing private)"),
    "DRB035-truedepscalar-orig-yes.c": ("no", "only race on local scalar tmp (carried in a register); a[i] is one element per iteration"),
    "DRB036-truedepscalar-var-yes.c": ("no", "only race on local scalar tmp (carried in a register); a[i] is one element per iteration"),
    "DRB073-doall2-orig-yes.c": ("no", "only race on the inner loop index j, a local scalar"),
    "DRB109-orderedmissing-orig-yes.c": ("no", "only race on local scalar x (x++: a register reduction); printf takes its value"),
    "DRB111-linearmissing-orig-yes.c": ("no", "j is a local register counter (missing linear): c[j] is a new element in each iteration"),
    # Fortran: the racing local is never passed by reference (no CALL, no I/O
    # item). Locals that are printed after the loop (x in DRB009/010/016/017,
    # numNodes2 in DRB011/012, getSum in DRB021/022, x in DRB109) are memory
    # and keep their race.
    "DRB018-plusplus-orig-yes.f95": ("no", "outLen is a local register counter (never passed by reference): output(outLen) is a new element in each iteration"),
    "DRB019-plusplus-var-yes.f95": ("no", "outLen is a local register counter (never passed by reference): output(outLen) is a new element in each iteration"),
    "DRB020-privatemissing-var-yes.f95": ("no", "only race on local scalar tmp (missing private), never passed by reference"),
    "DRB028-privatemissing-orig-yes.f95": ("no", "only race on local scalar tmp (missing private), never passed by reference"),
    "DRB035-truedepscalar-orig-yes.f95": ("no", "only race on local scalar tmp (carried in a register), never passed by reference"),
    "DRB036-truedepscalar-var-yes.f95": ("no", "only race on local scalar tmp (carried in a register), never passed by reference"),
    "DRB073-doall2-orig-yes.f95": ("no", "the header's only race is on the inner loop index j, a local scalar (and private under OpenMP anyway, see OMP_LABELS)"),
    "DRB111-linearmissing-orig-yes.f95": ("no", "j is a local register counter (missing linear), never passed by reference: c(j) is a new element in each iteration"),
    # race-free OpenMP loops whose clause variable is memory under CSA: with
    # the clause gone, every iteration writes the same memory
    "DRB047-doallchar-orig-no.f95": ("yes", "str (CHARACTER(50)) is the unit of an internal WRITE (by reference: memory) written in every iteration; private(str) is gone"),
    "DRB062-matrixvector2-orig-no.f95": ("yes", "sum is an item of PRINT inside the loop (by reference: memory) and updated by every iteration; reduction(+:sum) is gone"),
    "DRB065-pireduction-orig-no.f95": ("yes", "pi is an item of PRINT after the loop (by reference: memory) and updated by every iteration; reduction(+:pi) is gone"),
}

# Overrides of a file name's label for the OpenMP form (with the reason).
OMP_LABELS = {
    "DRB073-doall2-orig-yes.f95": (
        "no",
        "OpenMP 4.5 §2.15.1.1 (predetermined data-sharing, Fortran): the index of a "
        "sequential DO inside a parallel construct is private in that construct, so the "
        "inner index j, the header's only race, does not race",
    ),
}

# ---------------------------------------------------------------------------
# Directives
# ---------------------------------------------------------------------------
# words that continue a directive name after its first word (a clause name
# never is one of these, except `ordered`, which is left out on purpose)
NAME_WORDS = {
    "parallel", "for", "do", "simd", "sections", "workshare", "loop", "master",
    "masked", "teams", "distribute", "target", "taskloop", "single", "critical",
    "task", "data", "enter", "exit", "update", "point", "atomic", "workdistribute",
}
# keywords that Fortran free form may write glued (`enddo`, `paralleldo`)
GLUE_WORDS = NAME_WORDS | {"end", "ordered", "taskgroup"}

C_LOOPS = {("parallel", "for"), ("parallel", "for", "simd")}
C_INNER = {("for",), ("for", "simd")}
F_LOOPS = {("parallel", "do"), ("parallel", "do", "simd")}
F_INNER = {("do",), ("do", "simd")}
REGION = ("parallel",)


def split_glued(word):
    """`endparalleldo` -> [end, parallel, do]; None when not all keywords."""
    if word in GLUE_WORDS:
        return [word]
    for k in sorted(GLUE_WORDS, key=len, reverse=True):
        if word.startswith(k):
            rest = split_glued(word[len(k):])
            if rest:
                return [k] + rest
    return None


def directive_name(text, fortran):
    """The directive's name words, e.g. ('parallel', 'for') for
    `parallel for private(j)`; Fortran's glued spellings (`enddo`,
    `paralleldo`) are split."""
    tokens = re.findall(r"[a-z_][a-z_0-9]*|\S", text.lower())
    name = []
    for i, t in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        parts = [t]
        if fortran and t[0].isalpha():
            parts = split_glued(t) or [t]
        if not name:
            name.extend(parts)
        elif all(x in NAME_WORDS for x in parts) and nxt != "(":
            name.extend(parts)
        else:
            break
    return tuple(name) or ("",)


def c_directive_texts(lines):
    """(first line, last line, text after `omp`) of each `#pragma omp`
    directive: backslash continuations joined, comments removed."""
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"\s*#\s*pragma\s+omp\b(.*)", lines[i])
        if not m:
            i += 1
            continue
        start, text = i, m.group(1)
        while text.rstrip().endswith("\\") and i + 1 < len(lines):
            text = text.rstrip()[:-1] + " " + lines[i + 1]
            i += 1
        text = re.sub(r"/\*.*?\*/", " ", text).split("//")[0]
        out.append((start, i, text))
        i += 1
    return out


def c_directives(lines):
    """(first line, last line, name) of each `#pragma omp` directive."""
    return [(s, e, directive_name(t, False)) for s, e, t in c_directive_texts(lines)]


def fortran_directives(lines):
    """(first line, last line, name) of each `!$omp` directive (free form,
    `&` continuations)."""
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"\s*!\$omp\b(.*)", lines[i], re.I)
        if not m:
            i += 1
            continue
        start, text = i, m.group(1).split("!")[0]
        while text.rstrip().endswith("&") and i + 1 < len(lines):
            nxt = re.sub(r"^\s*!\$omp\s*&?", "", lines[i + 1], flags=re.I).split("!")[0]
            text = text.rstrip()[:-1] + " " + nxt
            i += 1
        out.append((start, i, directive_name(text, True)))
        i += 1
    return out


def next_code_line(lines, after, fortran):
    """The first line after `after` that is not blank or a comment."""
    in_block = False
    for j in range(after + 1, len(lines)):
        s = lines[j].strip()
        if in_block:
            if "*/" in s:
                in_block = False
                s = s.split("*/", 1)[1].strip()
            else:
                continue
        if not s:
            continue
        if fortran:
            if s.startswith("!"):
                continue
            return j
        if s.startswith("//"):
            continue
        if s.startswith("/*"):
            if "*/" not in s:
                in_block = True
                continue
            if not s.split("*/", 1)[1].strip():
                continue
        return j
    return None


def read_text(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def select(text, fortran):
    """(loop directive, other directives to drop) or (None, why)."""
    lines = text.split("\n")
    ds = fortran_directives(lines) if fortran else c_directives(lines)
    if not ds:
        return None, "no OpenMP directive"
    loops_ok = F_LOOPS if fortran else C_LOOPS
    inner_ok = F_INNER if fortran else C_INNER
    loops = [d for d in ds if d[2] in loops_ok or d[2] in inner_ok]
    regions = [d for d in ds if d[2] == REGION]
    ends = [d for d in ds if fortran and d[2][0] == "end"]
    # locks (`atomic`, `critical`) inside the loop are read by csa-lint;
    # the marker form drops them, so such a file is an OpenMP-form case only
    locks = [d for d in ds if d[2][:1] in (("atomic",), ("critical",))]
    lock_ends = [e for e in ends if e[2][1:2] in (("atomic",), ("critical",))]
    ends = [e for e in ends if e not in lock_ends]
    others = [d for d in ds if d not in loops and d not in regions and d not in ends
              and d not in locks and d not in lock_ends]
    if others:
        return None, "other directive: %s (line %d)" % (" ".join(others[0][2]), others[0][0] + 1)
    if len(loops) != 1:
        return None, "%d worksharing loops" % len(loops)
    loop = loops[0]
    combined = loop[2][0] == "parallel"
    if combined and regions:
        return None, "a parallel region besides the combined loop directive"
    if not combined:
        if len(regions) != 1:
            return None, "`%s` outside a single parallel region" % " ".join(loop[2])
        if regions[0][0] > loop[0]:
            return None, "the parallel region comes after the loop directive"
    if fortran:
        allowed = [("end",) + loop[2]] + ([] if combined else [("end", "parallel")])
        for e in ends:
            if e[2] not in allowed or sum(1 for x in ends if x[2] == e[2]) > 1:
                return None, "other directive: %s (line %d)" % (" ".join(e[2]), e[0] + 1)
        if not combined and ("end", "parallel") not in [e[2] for e in ends]:
            return None, "parallel region without `end parallel`"
    nxt = next_code_line(lines, loop[1], fortran)
    if nxt is None:
        return None, "no loop after the directive"
    first = lines[nxt].strip().lower()
    if fortran:
        is_loop = re.match(r"(\w+\s*:\s*)?do\b", first) and not re.match(r"do\s+while\b", first)
    else:
        is_loop = re.match(r"for\s*\(", first)
    if not is_loop:
        return None, "the directive is not followed by a loop (line %d)" % (nxt + 1)
    if not fortran and not combined:
        # the `for` directive must sit in the region's statement
        region = regions[0]
        body = next_code_line(lines, region[1], False)
        if body is None:
            return None, "empty parallel region"
        flat = "\n".join(lines)
        start = sum(len(l) + 1 for l in lines[:body])
        end = c_statement_end(flat, start)
        loop_pos = sum(len(l) + 1 for l in lines[:loop[0]])
        if not start <= loop_pos < end:
            return None, "the `for` directive is not inside the parallel region"
    if any(d[0] < loop[0] for d in locks):
        return None, "a lock before the loop directive"
    return (loop, [d for d in ds if d is not loop], bool(locks)), None


# ---------------------------------------------------------------------------
# Marker form
# ---------------------------------------------------------------------------
def c_statement_end(text, pos):
    """The offset just after the C statement that starts at or after `pos`."""
    n = len(text)

    def skip_ws(p):
        while p < n:
            if text.startswith("//", p):
                p = text.find("\n", p)
                p = n if p < 0 else p
            elif text.startswith("/*", p):
                q = text.find("*/", p)
                p = n if q < 0 else q + 2
            elif text[p] == "#" and (p == 0 or text[p - 1] == "\n" or text[:p].rstrip(" \t").endswith("\n")):
                p = text.find("\n", p)  # preprocessor line
                p = n if p < 0 else p
            elif text[p].isspace():
                p += 1
            else:
                break
        return p

    def match(p, open_c, close_c):
        depth = 0
        while p < n:
            c = text[p]
            if c in "\"'":
                q = p + 1
                while q < n and text[q] != c:
                    q += 2 if text[q] == "\\" else 1
                p = q + 1
                continue
            if text.startswith("//", p) or text.startswith("/*", p):
                p = skip_ws(p)
                continue
            if c == open_c:
                depth += 1
            elif c == close_c:
                depth -= 1
                if depth == 0:
                    return p + 1
            p += 1
        return n

    p = skip_ws(pos)
    if text.startswith("{", p):
        return match(p, "{", "}")
    m = re.match(r"(for|while|if)\b", text[p:])
    if m:
        q = skip_ws(p + len(m.group(1)))
        q = match(q, "(", ")")
        end = c_statement_end(text, q)
        rest = skip_ws(end)
        if m.group(1) == "if" and re.match(r"else\b", text[rest:]):
            return c_statement_end(text, rest + 4)
        return end
    m = re.match(r"do\b", text[p:])
    if m:
        end = c_statement_end(text, p + 2)
        rest = skip_ws(end)
        return c_statement_end(text, rest)  # while (...);
    depth = 0
    while p < n:
        c = text[p]
        if c in "\"'":
            q = p + 1
            while q < n and text[q] != c:
                q += 2 if text[q] == "\\" else 1
            p = q + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            return p + 1
        p += 1
    return n


def to_marker(text, sel, fortran):
    """The file with the loop directive replaced by the CSA marker (same line,
    same indentation) and every other directive blanked: the line count and
    every other line stay the same, so the header's race pairs still match."""
    lines = text.split("\n")
    loop, others = sel[0], sel[1]
    start, end, _ = loop
    indent = re.match(r"[ \t]*", lines[start]).group(0)
    for s, e, _ in others:
        for k in range(s, e + 1):
            lines[k] = ""
    for k in range(start + 1, end + 1):
        lines[k] = ""
    if fortran:
        lines[start] = indent + F_MARKER
        return "\n".join(lines)
    # a directive that is the whole body of a braceless for/while/if/else: the
    # marker and the loop are wrapped in braces so both stay in that body
    j = start - 1
    while j >= 0 and (not lines[j].strip() or lines[j].strip().startswith("//")):
        j -= 1
    prev = lines[j] if j >= 0 else ""
    braceless = re.match(r"\s*(}\s*)?(for|while|if|else\s+if)\b.*\)\s*(//.*)?$", prev) or \
        re.match(r"\s*(}\s*)?else\s*(//.*)?$", prev)
    lines[start] = indent + ("{ " if braceless else "") + C_MARKER
    out = "\n".join(lines)
    if braceless:
        loop_line = next_code_line(lines, start, False)
        pos = sum(len(l) + 1 for l in lines[:loop_line])
        e = c_statement_end(out, pos)
        out = out[:e] + " }" + out[e:]
    return out


# ---------------------------------------------------------------------------
# Running and scoring
# ---------------------------------------------------------------------------
def name_label(name):
    return "yes" if re.search(r"-yes\.(c|f95)$", name) else "no"


def run_lint(lint, path, fortran):
    """(diagnostics, None) or (None, why it failed)."""
    cmd = [lint, "--format", "json", "--language", "fortran" if fortran else "c", path]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "timeout after %d s" % TIMEOUT
    except OSError as e:
        return None, "cannot run: %s" % e
    if p.returncode not in (0, 1):
        tail = " | ".join(p.stderr.strip().splitlines()[-3:])
        return None, "exit status %d: %s" % (p.returncode, tail[:300])
    try:
        diags = json.loads(p.stdout or "[]")
    except json.JSONDecodeError as e:
        return None, "bad JSON output: %s" % e
    if not isinstance(diags, list):
        return None, "unexpected JSON output"
    return diags, None


def race_pairs(text):
    """The header's race-pair lines (comment markers stripped)."""
    out = []
    lines = text.split("\n")
    for i, l in enumerate(lines):
        if not re.search(r"race\s+pair", l, re.I) or re.search(r"\bno\b[\w\s]*race\s+pair", l, re.I):
            continue
        out.append(l)
        for k in range(i + 1, min(i + 10, len(lines))):
            s = lines[k]
            if re.search(r"@\s*\d+|\bvs\.|_set\b", s, re.I) and not re.search(r"race\s+pair", s, re.I):
                out.append(s)
            else:
                break
        break
    clean = []
    for l in out:
        l = re.sub(r"^\s*((/\*+|\*+|//|!+)\s*)+", "", l)
        l = re.sub(r"\s*\*+/\s*$", "", l).strip()
        if l:
            clean.append(l)
    return clean


def one_line(d):
    msg = " ".join(str(d.get("message", "")).split())
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return "%s %s:%s %s" % (d.get("code", "?"), d.get("line", "?"), d.get("column", "?"), msg)


def figures(r):
    tp, fp, fn = r["tp"], r["fp"], r["fn"]
    r["precision"] = tp / (tp + fp) if tp + fp else None
    r["recall"] = tp / (tp + fn) if tp + fn else None
    r["f1"] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    return r


def fmt(x):
    return "    -" if x is None else "%5.3f" % x


def stale_warning(lint):
    """Warn when the binary is older than the analyzer's sources."""
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    try:
        built = os.path.getmtime(lint)
    except OSError:
        return
    for sub in ("analyzer", "server"):
        for dirpath, _, files in os.walk(os.path.join(root, sub)):
            for f in files:
                if f.endswith(".rs") or f == "Cargo.toml":
                    if os.path.getmtime(os.path.join(dirpath, f)) > built:
                        sys.stderr.write("warning: %s is older than %s; rebuild with "
                                         "`cargo build --release -p csa-lint`\n"
                                         % (lint, os.path.join(dirpath, f)))
                        return


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkout", help="a DataRaceBench tree (git clone or extracted archive)")
    ap.add_argument("--lint", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "csa-lint"),
                    help="the csa-lint binary (default: target/release/csa-lint)")
    ap.add_argument("--lang", choices=["c", "fortran", "both"], default="both")
    ap.add_argument("--form", choices=["omp", "marker", "both"], default="both")
    ap.add_argument("--verbose", action="store_true", help="excluded files, every FP/FN and error with findings and race pairs")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--keep", metavar="DIR", help="keep the files that were checked in DIR/<lang>/<form>/")
    ap.add_argument("--jobs", type=int, default=2, help="parallel csa-lint runs (default 2)")
    a = ap.parse_args()
    lint = os.path.abspath(a.lint)
    if not os.path.isfile(lint):
        sys.exit("csa-lint not found at %s: build it with `cargo build --release -p csa-lint` or pass --lint" % lint)
    stale_warning(lint)
    langs = ["c", "fortran"] if a.lang == "both" else [a.lang]
    forms = ["omp", "marker"] if a.form == "both" else [a.form]
    for table in (MARKER_LABELS, OMP_LABELS):
        for f, (lab, _) in table.items():
            assert lab in ("yes", "no"), f
    work = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="drb_eval_")
    os.makedirs(work, exist_ok=True)
    selection, results = {}, {}
    try:
        for lang in langs:
            fortran = lang == "fortran"
            src_dir = os.path.join(a.checkout, "micro-benchmarks-fortran" if fortran else "micro-benchmarks")
            ext = ".f95" if fortran else ".c"
            if not os.path.isdir(src_dir):
                sys.exit("%s: not a DataRaceBench checkout (no %s)" % (a.checkout, src_dir))
            files = sorted(f for f in os.listdir(src_dir) if f.endswith(ext) and f.startswith("DRB"))
            selected, excluded = [], []
            for f in files:
                text = read_text(os.path.join(src_dir, f))
                sel, why = select(text, fortran)
                if sel:
                    selected.append((f, text, sel))
                else:
                    excluded.append((f, why))
            reasons = {}
            for _, why in excluded:
                key = re.sub(r" \(line \d+\)", "", why)
                reasons[key] = reasons.get(key, 0) + 1
            selection[lang] = dict(files=len(files), selected=len(selected), excluded=len(excluded),
                                   selected_yes=sum(1 for f, _, _ in selected if name_label(f) == "yes"),
                                   excluded_by_reason=dict(sorted(reasons.items(), key=lambda kv: -kv[1])))
            if not a.json:
                s = selection[lang]
                print("%s: %d files; %d single-loop cases selected (%d -yes, %d -no), %d excluded"
                      % (lang, s["files"], s["selected"], s["selected_yes"], s["selected"] - s["selected_yes"], s["excluded"]))
                if a.verbose:
                    for why, n in s["excluded_by_reason"].items():
                        print("    %3d  %s" % (n, why))
                    for f, why in excluded:
                        print("  excluded %s: %s" % (f, why))
            for form in forms:
                d = os.path.join(work, lang, form)
                os.makedirs(d, exist_ok=True)
                jobs = []
                for f, text, sel in selected:
                    if form == "marker" and sel[2]:
                        # (the marker form would drop the locks)
                        continue
                    out = text if form == "omp" else to_marker(text, sel, fortran)
                    path = os.path.join(d, f)
                    with open(path, "w", encoding="utf-8") as fh:
                        fh.write(out)
                    table = OMP_LABELS if form == "omp" else MARKER_LABELS
                    label, why = table.get(f, (name_label(f), ""))
                    jobs.append(dict(file=f, path=path, label=label, why=why, pairs=race_pairs(text)))
                with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
                    outs = list(ex.map(lambda j: run_lint(lint, j["path"], fortran), jobs))
                r = dict(cases=len(jobs), tp=0, fp=0, fn=0, tn=0, tp_501=0, false_501=0, csa0xx=0, failed=0,
                         fp_files=[], fn_files=[], false_501_files=[], csa0xx_files=[], failed_files=[], detail=[])
                for j, (diags, err) in zip(jobs, outs):
                    f, label = j["file"], j["label"]
                    if diags is None:
                        # a run that failed reports nothing: scored as not flagged
                        r["failed"] += 1
                        r["failed_files"].append(f)
                        diags = []
                    races = [x for x in diags if x.get("code") in RACE_CODES]
                    errors = [x for x in diags if re.match(r"CSA0\d\d$", str(x.get("code", "")))]
                    if errors:
                        r["csa0xx"] += 1
                        r["csa0xx_files"].append(f)
                    flagged = bool(races)
                    has_501 = any(x.get("code") == "CSA501" for x in races)
                    if label == "no" and has_501:
                        r["false_501"] += 1
                        r["false_501_files"].append(f)
                    if label == "yes" and has_501:
                        r["tp_501"] += 1
                    key = {(True, "yes"): "tp", (True, "no"): "fp", (False, "yes"): "fn", (False, "no"): "tn"}[(flagged, label)]
                    r[key] += 1
                    if key in ("fp", "fn"):
                        r[key + "_files"].append(f)
                    if key in ("fp", "fn") or errors or err:
                        kinds = [key.upper()] if key in ("fp", "fn") else []
                        kinds += ["CSA0xx"] if errors else []
                        kinds += ["FAILED"] if err else []
                        msgs = [err] if err else []
                        r["detail"].append(("+".join(kinds), j, msgs + [one_line(x) for x in errors + races]))
                results["%s/%s" % (lang, form)] = figures(r)
        for lang in langs:
            rs = [results["%s/%s" % (lang, f)] for f in forms]
            if len(rs) < 2:
                continue
            t = {x: sum(r[x] for r in rs) for x in ("cases", "tp", "fp", "fn", "tn", "tp_501", "false_501", "csa0xx", "failed")}
            results[lang + "/both"] = figures(t)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)

    if a.json:
        print(json.dumps(dict(lint=lint, checkout=os.path.abspath(a.checkout), selection=selection,
                              results={k: {x: y for x, y in v.items() if x != "detail"} for k, v in results.items()}),
                         indent=2))
        return
    print()
    print("%-15s %5s %4s %4s %4s %4s %9s %6s %6s %7s %9s %6s %6s"
          % ("lang/form", "cases", "TP", "FP", "FN", "TN", "precision", "recall", "F1", "TP:501", "false 501", "CSA0xx", "failed"))
    for k, r in results.items():
        print("%-15s %5d %4d %4d %4d %4d %9s %6s %6s %7d %9d %6d %6d"
              % (k, r["cases"], r["tp"], r["fp"], r["fn"], r["tn"], fmt(r["precision"]), fmt(r["recall"]),
                 fmt(r["f1"]), r["tp_501"], r["false_501"], r["csa0xx"], r["failed"]))
    print("(flagged = at least one CSA501/CSA502/CSA503; TP:501 = true positives with a CSA501;"
          " false 501 = race-free files with a CSA501; CSA0xx = files with syntax/other errors;"
          " failed = crash, timeout or bad output, scored as not flagged)")
    if a.verbose:
        for k, r in results.items():
            for kind, j, msgs in r.get("detail", []):
                why = " (%s)" % j["why"] if j["why"] else ""
                print("\n%s %s %s: label %s%s" % (k, kind, j["file"], j["label"], why))
                for m in msgs or ["(no race finding)"]:
                    print("    " + m)
                if j["pairs"]:
                    for p in j["pairs"]:
                        print("    truth: " + p)
                else:
                    print("    truth: (the header names no race pair)")
    for k, r in results.items():
        if r["false_501"]:
            print("\nfalse CSA501 in %s: %s" % (k, ", ".join(r.get("false_501_files", []))))


if __name__ == "__main__":
    main()
