#!/usr/bin/env python3
"""OpenMP-rewrite figures of csa-lint on DataRaceBench's race-free single loops.

Usage: scripts/drb_rewrite_eval.py DRB_CHECKOUT [--csa-lint BIN]
                                   [--lang c|fortran|both] [--verbose]

Goal measured: "On DataRaceBench race-free loops: 100% converted correctly
or refused with a true reason".

DRB_CHECKOUT is a DataRaceBench tree (github.com/LLNL/dataracebench). For
every race-free single-loop case (file name `*-no.c` / `*-no.f95`, selected
as scripts/drb_eval.py selects them) the script

1. builds the marker form of drb_eval.py (the loop directive replaced by the
   CSA marker, every other directive blanked) in a temporary directory;
2. runs `csa-lint --rewrite openmp --unsafe-fixes FILE` on it and reads the
   refusal (`FILE:LINE:COL: Cannot convert to OpenMP: REASON` on standard
   error) when the marker stays;
3. compares, when the loop was converted, the data-sharing clauses of the
   directive csa-lint wrote with those of the original directive (for a
   `parallel` region holding a `for`/`do` directive: both directives'
   clauses), with npb_eval.py's comparison: a variable the original makes
   private, firstprivate, lastprivate, linear or a reduction that the
   rewrite leaves shared is "missing" (listed as "unused", not counted, when
   the loop never names it); one the rewrite privatises that the original
   did not is "extra"; a different kind that changes the result (another
   reduction operator, a reduction against a private, a firstprivate or
   lastprivate dropped) is "wrong", while a firstprivate or lastprivate the
   rewrite adds to a private is "stricter", not counted. Loop indices are
   private anyway and not counted (C: the index of the loop and of the loops
   its collapse clause covers; Fortran: the indices of the loop and of every
   DO nested in it). Names are compared case-insensitively.

It prints per language: cases, converted, converted with identical data
sharing (loop indices aside), cases with missing / extra / wrong clauses,
refused, and csa-lint failures; --verbose also lists every refusal (file:
reason, grouped by reason) and every clause difference (file: original
clauses vs rewrite). The exit status is 0 unless the script itself fails.
Nothing of the checkout is copied into this repository.
"""

import argparse
import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in scripts/ from the imports below
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from drb_eval import (  # noqa: E402
    c_directive_texts, c_statement_end, next_code_line, read_text, select, stale_warning, to_marker,
)
from npb_eval import (  # noqa: E402
    clause_text, compare, directives as fortran_directives, loop_end, privatised, run_rewrite, tokens, words,
)


# ---------------------------------------------------------------------------
# C directives with their clauses
# ---------------------------------------------------------------------------
def c_directives_text(lines):
    """dict(start, end, text) of each `#pragma omp` directive: the text after
    `omp`, continuations joined, comments removed, blanks collapsed."""
    return [dict(start=s, end=e, text=" ".join(t.split())) for s, e, t in c_directive_texts(lines)]


def c_clauses(text):
    """Clause items (word, argument) of a C directive's text; the name words
    (`parallel for simd`) come out as items without argument, which
    privatised() ignores."""
    return tokens(text)


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def c_loop(text, loop_line, clauses):
    """(indices, used names) of the C loop that starts at line `loop_line`:
    the index of the loop and of the loops collapse(n) covers; every
    identifier in the loop (lowercase)."""
    lines = text.split("\n")
    pos = sum(len(l) + 1 for l in lines[:loop_line])
    end = c_statement_end(text, pos)
    body = strip_c_comments(text[pos:end])
    n = 1
    for word, arg in clauses:
        if word == "collapse" and arg and arg.strip().isdigit():
            n = int(arg.strip())
    indices = set()
    for m in list(re.finditer(r"\bfor\s*\(\s*(?:[A-Za-z_][\w\s\*]*?\s+\**)?([A-Za-z_]\w*)\s*=", body))[:n]:
        indices.add(m.group(1).lower())
    used = {w.lower() for w in re.findall(r"[A-Za-z_]\w*", body)}
    return indices, used


# ---------------------------------------------------------------------------
# One case
# ---------------------------------------------------------------------------
def original(text, sel, fortran):
    """(clauses, indices, used, shown text) of the original directive(s)."""
    loop, others = sel
    lines = text.split("\n")
    region = [d for d in others if d[2] == ("parallel",)]
    wanted = [loop[0]] + [d[0] for d in region]
    if fortran:
        ds = [d for d in fortran_directives(lines) if d["start"] in wanted]
        clauses = [c for d in ds for c in d["clauses"]]
        do_line = next_code_line(lines, loop[1], True)
        end, indices = loop_end(lines, do_line)
        used = words(lines[do_line:(end if end is not None else len(lines) - 1) + 1])
    else:
        ds = [d for d in c_directives_text(lines) if d["start"] in wanted]
        clauses = [c for d in ds for c in c_clauses(d["text"])]
        loop_line = next_code_line(lines, loop[1], False)
        indices, used = c_loop(text, loop_line, clauses)
    ds.sort(key=lambda d: d["start"])
    shown = " | ".join(d["text"] for d in ds)
    return clauses, indices, used, shown


def written(new_text, fortran):
    """(clauses, shown text) of the directives csa-lint wrote, or None when the
    marker is still there. The marker form has no other directive."""
    lines = new_text.split("\n")
    if fortran:
        if any(re.match(r"\s*call\s+builtin_csa_parallel_loop\b", l, re.I) for l in lines):
            return None
        ds = [d for d in fortran_directives(lines) if d["name"][0] != "end"]
        return [c for d in ds for c in d["clauses"]], " | ".join(d["text"] for d in ds)
    if any("__builtin_csa_parallel_loop" in l for l in lines):
        return None
    ds = c_directives_text(lines)
    return [c for d in ds for c in c_clauses(d["text"])], " | ".join(d["text"] for d in ds)


def evaluate(lint, path, text, sel, fortran):
    """dict(status=converted|refused|failed, ...) of one case; `path` is the
    temp copy of the marker form (rewritten in place)."""
    refusals, err = run_rewrite(lint, path)
    if err:
        return dict(status="failed", why=err)
    res = written(read_text(path), fortran)
    if res is None:
        why = "; ".join(refusals[k] for k in sorted(refusals)) if refusals else "(marker kept, no reason given)"
        return dict(status="refused", why=why, lines=sorted(refusals))
    new_clauses, new_shown = res
    clauses, indices, used, shown = original(text, sel, fortran)
    diff = compare(privatised(clauses), privatised(new_clauses), indices, used)
    return dict(status="converted", diff=diff, orig=shown, orig_clauses=clause_text(clauses),
                new=new_shown, indices=sorted(indices))


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------
COUNTED = ("missing", "extra", "wrong")


def run_lang(lint, checkout, lang, work):
    fortran = lang == "fortran"
    src_dir = os.path.join(checkout, "micro-benchmarks-fortran" if fortran else "micro-benchmarks")
    ext = ".f95" if fortran else ".c"
    if not os.path.isdir(src_dir):
        sys.exit("%s: not a DataRaceBench checkout (no %s)" % (checkout, src_dir))
    d = os.path.join(work, lang)
    os.makedirs(d, exist_ok=True)
    r = dict(files=0, cases=0, converted=0, identical=0, missing=0, extra=0, wrong=0, uncounted=0,
             refused=0, failed=0, refusals=[], diffs=[], failures=[])
    for f in sorted(os.listdir(src_dir)):
        if not (f.startswith("DRB") and f.endswith("-no" + ext)):
            continue
        r["files"] += 1
        text = read_text(os.path.join(src_dir, f))
        sel, _ = select(text, fortran)
        if not sel:
            continue
        r["cases"] += 1
        path = os.path.join(d, f)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(to_marker(text, sel, fortran))
        x = evaluate(lint, path, text, sel, fortran)
        if x["status"] == "failed":
            r["failed"] += 1
            r["failures"].append((f, x["why"]))
        elif x["status"] == "refused":
            r["refused"] += 1
            r["refusals"].append((f, x["why"]))
        else:
            r["converted"] += 1
            diff = x["diff"]
            if not any(diff.values()):
                r["identical"] += 1
            else:
                for key in COUNTED:
                    if diff[key]:
                        r[key] += 1
                if not any(diff[k] for k in COUNTED):
                    r["uncounted"] += 1
                r["diffs"].append((f, diff, x["orig"], x["new"]))
    return r


def reason_key(why):
    """A refusal reason with names and numbers blurred, for grouping."""
    key = re.sub(r"`[^`]*`", "`_`", why)
    key = re.sub(r"'[^']*'", "'_'", key)
    return re.sub(r"\b\d+\b", "N", key)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkout", help="a DataRaceBench tree (git clone or extracted archive)")
    ap.add_argument("--csa-lint", dest="lint", default=os.path.join(here, "..", "target", "release", "csa-lint"),
                    help="the csa-lint binary (default: target/release/csa-lint)")
    ap.add_argument("--lang", choices=["c", "fortran", "both"], default="both")
    ap.add_argument("--verbose", action="store_true", help="list every refusal and every clause difference")
    a = ap.parse_args()
    lint = os.path.abspath(a.lint)
    if not os.path.isfile(lint):
        sys.exit("csa-lint not found at %s: build it with `cargo build --release -p csa-lint`"
                 " or pass --csa-lint" % lint)
    stale_warning(lint)
    langs = ["c", "fortran"] if a.lang == "both" else [a.lang]
    work = tempfile.mkdtemp(prefix="drb_rewrite_eval_")
    results = {}
    try:
        for lang in langs:
            results[lang] = run_lang(lint, a.checkout, lang, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print("DataRaceBench %s, %s\n" % (os.path.abspath(a.checkout), lint))
    cols = ("cases", "converted", "identical", "missing", "extra", "wrong", "refused", "failed")
    print("%-8s %6s %6s %9s %10s %8s %6s %6s %8s %7s"
          % ("lang", "-no", "cases", "converted", "identical", "missing", "extra", "wrong", "refused", "failed"))
    for lang, r in results.items():
        print("%-8s %6d %6d %9d %10d %8d %6d %6d %8d %7d" % ((lang, r["files"]) + tuple(r[c] for c in cols)))
    print("(-no = race-free files; cases = the single-loop ones among them, in the marker form;"
          " converted = csa-lint wrote an OpenMP directive; identical = same private/firstprivate/"
          "lastprivate/linear/reduction clauses as the original, loop indices aside; missing/extra/"
          "wrong = converted cases with at least one such difference; refused = marker kept;"
          " failed = csa-lint crashed or timed out)")
    for lang, r in results.items():
        if r["uncounted"]:
            print("%s: %d converted case(s) differ only in ways not counted (stricter/unused; see --verbose)"
                  % (lang, r["uncounted"]))
        for f, why in r["failures"]:
            print("%s: csa-lint failed on %s: %s" % (lang, f, why))
    if not a.verbose:
        return
    for lang, r in results.items():
        print("\n== %s" % lang)
        print("  refusals: %d" % len(r["refusals"]))
        groups = {}
        for f, why in r["refusals"]:
            groups.setdefault(reason_key(why), []).append(f)
        for key, fs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print("    %3d  %s" % (len(fs), key))
        for f, why in r["refusals"]:
            print("    %s: %s" % (f, why))
        print("  clause differences: %d" % len(r["diffs"]))
        for f, diff, orig, new in r["diffs"]:
            for key, lst in diff.items():
                if lst:
                    note = " (not counted)" if key not in COUNTED else ""
                    print("    %s: %s%s %s" % (f, key, note, ", ".join(lst)))
            print("        original: %s" % orig)
            print("        rewrite:  %s" % new)


if __name__ == "__main__":
    main()
