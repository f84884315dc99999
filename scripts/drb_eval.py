#!/usr/bin/env python3
"""Race-check figures of csa-lint on DataRaceBench's single-loop cases.

Usage: scripts/drb_eval.py CHECKOUT [--lint PATH] [--lang c|fortran|both]
                            [--form omp|marker|both] [--verbose] [--json]
                            [--keep DIR] [--jobs N]

CHECKOUT is a DataRaceBench tree (github.com/LLNL/dataracebench): the script
reads micro-benchmarks/*.c and micro-benchmarks-fortran/*.f95 at run time and
copies nothing into this repository. See scripts/README.md.
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

# Marker form (the OpenMP directive replaced by __builtin_csa_parallel_loop):
# the CSA compiler keeps scalar locals that live in registers flowing from
# one iteration to the next (SEMANTICS.md §4), so a benchmark whose only race
# is on such a scalar is race-free in that form. Labels written from each
# file's race pairs and declarations; every other file keeps its name label.
MARKER_LABELS = {
    # C: the racing variable is a local scalar whose address is never taken
    "DRB009-lastprivatemissing-orig-yes.c": ("no", "only race on local scalar x (printf takes its value)"),
    "DRB010-lastprivatemissing-var-yes.c": ("no", "only race on local scalar x"),
    "DRB011-minusminus-orig-yes.c": ("no", "only race on local scalar numNodes2"),
    "DRB012-minusminus-var-yes.c": ("no", "only race on local scalar numNodes2"),
    "DRB016-outputdep-orig-yes.c": ("no", "only race on local scalar x; a[i] is per iteration"),
    "DRB017-outputdep-var-yes.c": ("no", "only race on local scalar x; a[i] is per iteration"),
    "DRB018-plusplus-orig-yes.c": ("no", "outLen is a register counter: output[outLen++] is a new element each iteration"),
    "DRB019-plusplus-var-yes.c": ("no", "outLen is a register counter: output[outLen++] is a new element each iteration"),
    "DRB020-privatemissing-var-yes.c": ("no", "only race on local scalar tmp"),
    "DRB021-reductionmissing-orig-yes.c": ("no", "only race on local scalar sum (a register reduction)"),
    "DRB022-reductionmissing-var-yes.c": ("no", "only race on local scalar sum (a register reduction)"),
    "DRB028-privatemissing-orig-yes.c": ("no", "only race on local scalar tmp"),
    "DRB035-truedepscalar-orig-yes.c": ("no", "only race on local scalar tmp"),
    "DRB036-truedepscalar-var-yes.c": ("no", "only race on local scalar tmp"),
    "DRB073-doall2-orig-yes.c": ("no", "only race on the inner index j, a local scalar"),
    "DRB109-orderedmissing-orig-yes.c": ("no", "only race on local scalar x"),
    "DRB111-linearmissing-orig-yes.c": ("no", "j is a register counter: c[j] is a new element each iteration"),
    # Fortran: locals are registers unless SAVE/module/COMMON or passed by
    # reference (to a procedure or an I/O statement), which makes them memory
    "DRB018-plusplus-orig-yes.f95": ("no", "outLen is a register counter (never passed by reference)"),
    "DRB019-plusplus-var-yes.f95": ("no", "outLen is a register counter (never passed by reference)"),
    "DRB020-privatemissing-var-yes.f95": ("no", "only race on local scalar tmp"),
    "DRB028-privatemissing-orig-yes.f95": ("no", "only race on local scalar tmp"),
    "DRB035-truedepscalar-orig-yes.f95": ("no", "only race on local scalar tmp"),
    "DRB036-truedepscalar-var-yes.f95": ("no", "only race on local scalar tmp"),
    "DRB073-doall2-orig-yes.f95": ("no", "only race (by the file's label) on the inner index j, a local scalar"),
    "DRB111-linearmissing-orig-yes.f95": ("no", "j is a register counter: c(j) is a new element each iteration"),
    # race-free OpenMP loops whose clause variable is memory under CSA
    "DRB047-doallchar-orig-no.f95": ("yes", "str is a CHARACTER variable written by an internal WRITE (by reference: memory) in every iteration; private(str) is gone"),
    "DRB062-matrixvector2-orig-no.f95": ("yes", "sum is passed to PRINT inside the loop: memory, updated by every iteration"),
    "DRB065-pireduction-orig-no.f95": ("yes", "pi is passed to PRINT after the loop: memory, updated by every iteration"),
}

# Overrides of a file name's label for the OpenMP form (with the reason).
OMP_LABELS = {
    "DRB073-doall2-orig-yes.f95": (
        "no",
        "OpenMP 5.2 §5.1.1: in Fortran the index of a sequential DO inside a parallel "
        "construct is private, so the inner index j does not race",
    ),
}

LOOP_WORDS_C = {("parallel", "for"), ("for",), ("parallel", "for", "simd"), ("for", "simd")}


def c_directives(lines):
    """(first line, last line, words) of each `#pragma omp` directive."""
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
        words = re.findall(r"[A-Za-z_]+|\(", text.split("//")[0])
        name = []
        for w in words:
            if w in ("parallel", "for", "simd", "end", "do") and len(name) < 3:
                name.append(w)
            else:
                break
        out.append((start, i, tuple(name) or tuple(words[:1])))
        i += 1
    return out


def fortran_directives(lines):
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"\s*!\$omp\b(.*)", lines[i], re.I)
        if not m:
            i += 1
            continue
        start, text = i, m.group(1).lower()
        while text.split("!")[0].rstrip().endswith("&") and i + 1 < len(lines):
            nxt = re.sub(r"^\s*!\$omp\s*&?", "", lines[i + 1], flags=re.I)
            text = text.split("!")[0].rstrip()[:-1] + " " + nxt.lower()
            i += 1
        words = re.findall(r"[a-z_]+|\(", text.split("!")[0])
        name = []
        for w in words:
            if w in ("parallel", "do", "end", "simd") and len(name) < 3:
                name.append(w)
            else:
                break
        out.append((start, i, tuple(name) or tuple(words[:1])))
        i += 1
    return out


def next_code_line(lines, after, fortran):
    for j in range(after + 1, len(lines)):
        s = lines[j].strip()
        if not s:
            continue
        if fortran and s.startswith("!"):
            continue
        if not fortran and (s.startswith("//") or s.startswith("/*") or s.startswith("*")):
            continue
        return j
    return None


def select(path, fortran):
    """(loop directive, region directives) or (None, why)."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    ds = fortran_directives(lines) if fortran else c_directives(lines)
    if fortran:
        loops = [d for d in ds if d[2] in (("parallel", "do"), ("do",), ("parallel", "do", "simd"), ("do", "simd"))]
        ends = [d for d in ds if d[2][:1] == ("end",)]
        regions = [d for d in ds if d[2] == ("parallel",)]
        others = [d for d in ds if d not in loops and d not in ends and d not in regions]
        if [e for e in ends if e[2] not in (("end", "parallel", "do"), ("end", "do"), ("end", "parallel"), ("end", "parallel", "do", "simd"), ("end", "do", "simd"))]:
            return None, "other end directive"
    else:
        loops = [d for d in ds if d[2] in LOOP_WORDS_C]
        ends = []
        regions = [d for d in ds if d[2] == ("parallel",)]
        others = [d for d in ds if d not in loops and d not in regions]
    if others:
        return None, "other directive: " + " ".join(others[0][2])
    if len(loops) != 1:
        return None, "%d loop directives" % len(loops)
    loop = loops[0]
    combined = loop[2][0] == "parallel"
    if combined and regions or not combined and len(regions) != 1:
        return None, "region structure"
    nxt = next_code_line(lines, loop[1], fortran)
    if nxt is None:
        return None, "no loop after the directive"
    first = lines[nxt].strip().lower()
    if fortran and not re.match(r"(\w+\s*:\s*)?do\b", first) or not fortran and not first.startswith("for"):
        return None, "the directive is not followed by a loop"
    return (loop, regions + ends), None


def c_statement_end(text, pos):
    """The offset just after the C statement that starts at `pos`."""
    n = len(text)

    def skip_ws(p):
        while p < n:
            if text.startswith("//", p):
                p = text.find("\n", p)
                p = n if p < 0 else p
            elif text.startswith("/*", p):
                q = text.find("*/", p)
                p = n if q < 0 else q + 2
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
    depth = 0
    while p < n:
        c = text[p]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            return p + 1
        p += 1
    return n


def to_marker(text, sel, fortran):
    """The file with the directive(s) replaced by the CSA marker; the line
    count stays the same."""
    lines = text.split("\n")
    loop, extra = sel
    start, end, _ = loop
    indent = re.match(r"\s*", lines[start]).group(0)
    for s, e, _ in extra:
        for k in range(s, e + 1):
            lines[k] = ""
    for k in range(start + 1, end + 1):
        lines[k] = ""
    if fortran:
        lines[start] = indent + "call builtin_csa_parallel_loop()"
        return "\n".join(lines)
    # a directive in a braceless body (`for (...)` then the pragma): wrap the
    # marker and the loop in braces so both stay in that body
    prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
    braceless = re.match(r"\s*(for|while|if)\b.*\)\s*$", prev) or re.match(r"\s*else\s*$", prev)
    lines[start] = indent + ("{ " if braceless else "") + "__builtin_csa_parallel_loop();"
    out = "\n".join(lines)
    if braceless:
        loop_line = next_code_line(lines, start, False)
        pos = sum(len(l) + 1 for l in lines[:loop_line]) + (len(lines[loop_line]) - len(lines[loop_line].lstrip()))
        e = c_statement_end(out, pos)
        out = out[:e] + " }" + out[e:]
    return out


def name_label(name):
    return "yes" if re.search(r"-yes\.", name) else "no"


def run_lint(lint, path, fortran):
    cmd = [lint, "--format", "json"]
    if fortran:
        cmd += ["--language", "fortran"]
    cmd.append(path)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if p.returncode not in (0, 1):
        return None, "exit %d: %s" % (p.returncode, p.stderr.strip()[:200])
    try:
        return json.loads(p.stdout or "[]"), None
    except json.JSONDecodeError as e:
        return None, "bad JSON: %s" % e


def race_pairs(text):
    return [l.strip(" */!") for l in text.split("\n") if re.search(r"race pair", l, re.I)][:4]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkout")
    ap.add_argument("--lint", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "csa-lint"))
    ap.add_argument("--lang", choices=["c", "fortran", "both"], default="both")
    ap.add_argument("--form", choices=["omp", "marker", "both"], default="both")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    if not os.path.exists(a.lint):
        sys.exit("csa-lint not found at %s: build it with `cargo build --release -p csa-analyzer --bin csa-lint` or pass --lint" % a.lint)
    langs = ["c", "fortran"] if a.lang == "both" else [a.lang]
    forms = ["omp", "marker"] if a.form == "both" else [a.form]
    work = a.keep or tempfile.mkdtemp(prefix="drb_eval_")
    os.makedirs(work, exist_ok=True)
    results = {}
    for lang in langs:
        fortran = lang == "fortran"
        src_dir = os.path.join(a.checkout, "micro-benchmarks-fortran" if fortran else "micro-benchmarks")
        ext = ".f95" if fortran else ".c"
        files = sorted(f for f in os.listdir(src_dir) if f.endswith(ext) and f.startswith("DRB"))
        selected, excluded = [], []
        for f in files:
            sel, why = select(os.path.join(src_dir, f), fortran)
            (selected.append((f, sel)) if sel else excluded.append((f, why)))
        if not a.json:
            print("%s: %d files, %d single-loop cases selected, %d excluded" % (lang, len(files), len(selected), len(excluded)))
            if a.verbose:
                for f, why in excluded:
                    print("  excluded %s: %s" % (f, why))
        for form in forms:
            d = os.path.join(work, lang, form)
            os.makedirs(d, exist_ok=True)
            jobs = []
            for f, sel in selected:
                text = open(os.path.join(src_dir, f), encoding="utf-8", errors="replace").read()
                out = text if form == "omp" else to_marker(text, sel, fortran)
                path = os.path.join(d, f)
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(out)
                table = OMP_LABELS if form == "omp" else MARKER_LABELS
                label = table.get(f, (name_label(f), ""))[0]
                jobs.append((f, path, label, race_pairs(text)))
            with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
                outs = list(ex.map(lambda j: run_lint(a.lint, j[1], fortran), jobs))
            r = dict(tp=0, fp=0, fn=0, tn=0, false_501=0, errors=0, detail=[])
            for (f, path, label, pairs), (diags, err) in zip(jobs, outs):
                if diags is None:
                    r["errors"] += 1
                    r["detail"].append(("ERROR", f, label, [err], pairs))
                    continue
                races = [x for x in diags if x.get("code") in RACE_CODES]
                if any(x.get("code", "").startswith("CSA00") for x in diags):
                    r["errors"] += 1
                flagged = bool(races)
                if label == "no" and any(x["code"] == "CSA501" for x in races):
                    r["false_501"] += 1
                key = {(True, "yes"): "tp", (True, "no"): "fp", (False, "yes"): "fn", (False, "no"): "tn"}[(flagged, label)]
                r[key] += 1
                if key in ("fp", "fn"):
                    msgs = ["%s %d: %s" % (x["code"], x["line"], x["message"][:160]) for x in races]
                    r["detail"].append((key.upper(), f, label, msgs, pairs))
            p = r["tp"] / (r["tp"] + r["fp"]) if r["tp"] + r["fp"] else 1.0
            rc = r["tp"] / (r["tp"] + r["fn"]) if r["tp"] + r["fn"] else 1.0
            r["precision"], r["recall"] = p, rc
            r["f1"] = 2 * p * rc / (p + rc) if p + rc else 0.0
            r["cases"] = len(jobs)
            results["%s/%s" % (lang, form)] = r
    # per language, both forms together
    for lang in langs:
        rs = [results[k] for k in list(results) if k.startswith(lang + "/")]
        if len(rs) < 2:
            continue
        t = {x: sum(r[x] for r in rs) for x in ("tp", "fp", "fn", "tn", "false_501", "errors", "cases")}
        p = t["tp"] / (t["tp"] + t["fp"]) if t["tp"] + t["fp"] else 1.0
        rc = t["tp"] / (t["tp"] + t["fn"]) if t["tp"] + t["fn"] else 1.0
        t.update(precision=p, recall=rc, f1=2 * p * rc / (p + rc) if p + rc else 0.0, detail=[])
        results[lang + "/both"] = t
    if a.json:
        print(json.dumps({k: {x: y for x, y in v.items() if x != "detail"} for k, v in results.items()}, indent=2))
    else:
        print()
        print("%-16s %5s %4s %4s %4s %4s %9s %7s %6s %10s %6s" % ("lang/form", "cases", "TP", "FP", "FN", "TN", "precision", "recall", "F1", "false 501", "errors"))
        for k, r in results.items():
            print("%-16s %5d %4d %4d %4d %4d %9.3f %7.3f %6.3f %10d %6d" % (k, r["cases"], r["tp"], r["fp"], r["fn"], r["tn"], r["precision"], r["recall"], r["f1"], r["false_501"], r["errors"]))
        if a.verbose:
            for k, r in results.items():
                if k.endswith("/both"):
                    continue
                for kind, f, label, msgs, pairs in r["detail"]:
                    print("\n%s %s %s (label %s)" % (k, kind, f, label))
                    for m in msgs:
                        print("    " + m)
                    for pr in pairs:
                        print("    truth: " + pr)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
