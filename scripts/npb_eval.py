#!/usr/bin/env python3
"""Round-trip figures of csa-lint's OpenMP rewrite on the NAS Parallel Benchmarks.

Usage: scripts/npb_eval.py NPB_CHECKOUT [--csa-lint BIN] [--benchmarks BT,CG,...]
                           [--class S] [--threads 4] [--verbose] [--keep DIR]

NPB_CHECKOUT is a tree of NPB 3.4 OpenMP as laid out in
github.com/studyztp/NPB3.4-OMP-custom-makefile (BT CG EP FT LU MG SP UA in
Fortran, IS in C, plus common/, sys/ and config/). For each Fortran
benchmark the script

1. builds the original with gfortran/gcc (-O2 -fopenmp; the checkout's
   Makefiles build LLVM bitcode for gem5 and are only read for the list of
   sources), runs it at OMP_NUM_THREADS=--threads and reads its
   `Verification = SUCCESSFUL|UNSUCCESSFUL` line;
2. replaces, in a copy of the benchmark's own sources (common/ is left as
   it is), every single parallel loop by the CSA marker
   `call builtin_csa_parallel_loop()` right before its DO: a combined
   `!$omp parallel do` (with its optional `!$omp end parallel do`), or a
   `!$omp parallel` ... `!$omp end parallel` region whose only executable
   content is one `!$omp do` loop (optional `!$omp end do [nowait]`). Every
   other directive stays, and the worksharing loops it covers count as
   "not converted";
3. runs `csa-lint --rewrite openmp --unsafe-fixes FILE` on each file with a
   marker and collects the refusals (`FILE:LINE:COL: Cannot convert to
   OpenMP: REASON` on standard error, or a marker left in place);
4. compares, for each loop converted back, the data-sharing clauses csa-lint
   wrote with the original ones: a variable the original made private,
   firstprivate, lastprivate, linear or a reduction that the rewrite leaves
   shared is "missing" (listed as "unused", not counted, when the loop never
   names it); one the rewrite privatises that the original did not is
   "extra"; one both privatise in different ways that change the result
   (another reduction operator, a reduction against a private, a
   firstprivate or lastprivate the rewrite drops) is "wrong", while a
   firstprivate or lastprivate the rewrite adds to a private is listed as
   "stricter", not counted. The indices of the loop and of the DO loops
   nested in it are private anyway in Fortran OpenMP and are not counted;
   names are compared case-insensitively;
5. builds and runs the rewritten program the same way (a marker csa-lint
   refused stays in the file and is linked to an empty subroutine: that
   loop runs serially).

It prints one row per benchmark and the totals; --verbose also lists every
refusal, every clause difference and why loops were not converted. The exit
status is 0 unless the script itself fails: build failures and failed
verifications are figures (a build failure is shown with the file and the
tail of the compiler's message). Everything happens in a temporary directory
(or --keep DIR); nothing of the checkout is copied into this repository.

Getting a checkout: fetch github.com/studyztp/NPB3.4-OMP-custom-makefile
(clone it, or from a bare mirror archive only the directories the script
reads, since `git archive` of the whole tree fails on a large binary under
common/):

    git -C MIRROR.git archive HEAD BT CG EP FT IS LU MG SP UA \\
        common/print_results.f90 common/randdp.f90 common/randi8.f90 \\
        common/timers.f90 common/wtime.c common/wtime.h \\
        common/c_print_results.c common/c_timers.c \\
        sys/setparams.c config/make.def | tar -x -C /tmp/npb-src

(config/make.def is optional; without it setparams prints a warning.)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
from drb_eval import NAME_WORDS, split_glued, stale_warning  # noqa: E402

FORTRAN_BENCHMARKS = ["BT", "CG", "EP", "FT", "LU", "MG", "SP", "UA"]
MARKER = "call builtin_csa_parallel_loop()"
LINT_TIMEOUT = 120  # seconds per csa-lint run
RUN_TIMEOUT = 900  # seconds per benchmark run
FFLAGS = ["-O2", "-fopenmp"]
CFLAGS = ["-O2"]
# calls that a plain build lacks (the gem5 hooks, and the CSA marker left in
# place where csa-lint refused to convert it): no-op definitions
STUBS_F90 = """! written by npb_eval.py: no-op stand-ins for the gem5 region-of-interest hooks
subroutine roi_begin()
end subroutine roi_begin
subroutine roi_end()
end subroutine roi_end
! a marker csa-lint refused stays in the rewritten file: that loop runs serially
subroutine builtin_csa_parallel_loop()
end subroutine builtin_csa_parallel_loop
"""
REFUSAL = re.compile(r"^(.*?):(\d+):(\d+): Cannot convert to OpenMP: (.*)$")
VERIFICATION = re.compile(r"Verification\s*=\s*(\w+)", re.I)

# ---------------------------------------------------------------------------
# Fortran lines and directives
# ---------------------------------------------------------------------------
COMBINED = {("parallel", "do"), ("parallel", "do", "simd")}
WORKSHARE = {("do",), ("do", "simd")}
LOOP_DIRECTIVES = COMBINED | WORKSHARE
PRIVATISING = ("private", "firstprivate", "lastprivate", "linear", "reduction")


def code_part(line):
    """The line without its `!` comment (quotes respected), stripped; a
    directive line (`!$omp ...`) gives an empty string."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "!":
            return line[:i].strip()
    return line.strip()


def is_directive(line):
    return re.match(r"\s*!\$omp\b", line, re.I) is not None


def is_conditional(line):
    """A `!$ ` conditional-compilation line (code under OpenMP)."""
    return re.match(r"\s*!\$(?!omp)\s", line, re.I) is not None


def tokens(text):
    """Clause-level items of a directive text: (word, argument or None)."""
    out, i, n = [], 0, len(text)
    while i < n:
        m = re.compile(r"\s*,?\s*([A-Za-z_][A-Za-z_0-9]*)").match(text, i)
        if not m:
            i += 1
            continue
        word, i = m.group(1).lower(), m.end()
        arg = None
        j = i
        while j < n and text[j].isspace():
            j += 1
        if j < n and text[j] == "(":
            depth, k = 0, j
            while k < n:
                depth += {"(": 1, ")": -1}.get(text[k], 0)
                if depth == 0:
                    break
                k += 1
            arg, i = text[j + 1:k], k + 1
        out.append((word, arg))
    return out


def parse_directive(text):
    """(name words, clause items) of a directive's text after `!$omp`."""
    items = tokens(text)
    name = []
    k = 0
    while k < len(items):
        word, arg = items[k]
        parts = split_glued(word) or [word]
        if name and (arg is not None or not all(p in NAME_WORDS for p in parts)):
            break
        if not name and arg is not None:  # `flush(x)`, `threadprivate(a)`
            name.append(word)
            k += 1
            break
        name.extend(parts)
        k += 1
    return tuple(name) or ("",), items[k:]


def directives(lines):
    """Every `!$omp` directive: dict(start, end (0-based, inclusive), name,
    clauses), continuations (`&` at the end, `!$omp&` lines) joined."""
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"\s*!\$omp\b(.*)", lines[i], re.I)
        if not m:
            i += 1
            continue
        start, text = i, code_part(m.group(1))
        while (text.rstrip().endswith("&") or
               (i + 1 < len(lines) and re.match(r"\s*!\$omp&", lines[i + 1], re.I))) and i + 1 < len(lines):
            if text.rstrip().endswith("&"):
                text = text.rstrip()[:-1]
            nxt = re.sub(r"^\s*!\$omp\s*&?", "", lines[i + 1], flags=re.I)
            text += " " + code_part(nxt)
            i += 1
        name, clauses = parse_directive(text)
        out.append(dict(start=start, end=i, name=name, clauses=clauses, text=" ".join(text.split())))
        i += 1
    return out


def statement(line):
    """(label, lowercase code) of a source line; directives give ''."""
    code = code_part(line).lower()
    m = re.match(r"(\d+)\s+(.*)", code)
    return (m.group(1), m.group(2)) if m else (None, code)


def do_header(code):
    """(label or None, index or None) when `code` opens a DO loop, else None."""
    m = re.match(r"(?:[a-z_]\w*\s*:\s*)?do\b\s*(.*)", code)
    if not m:
        return None
    rest = m.group(1)
    if rest and rest[0] in "=(%":  # `do = 1`, an array or component named do
        return None
    lab = re.match(r"(\d+)\s*,?\s*(.*)", rest)
    label = lab.group(1) if lab else None
    rest = lab.group(2) if lab else rest
    var = re.match(r"([a-z_]\w*)\s*=", rest)
    return label, (var.group(1) if var and var.group(1) != "while" else None)


def loop_end(lines, first):
    """The index of the line that ends the DO loop opened at `first`, and the
    indices of that loop and of every DO nested in it; (None, ...) when the
    end is not found."""
    stack, indices = [], set()
    for j in range(first, len(lines)):
        label, code = statement(lines[j])
        for stmt in [s.strip() for s in code.split(";")] if code else []:
            head = do_header(stmt)
            if head:
                stack.append(head[0])
                if head[1]:
                    indices.add(head[1])
            elif re.match(r"end\s*do\b", stmt) and stack and stack[-1] is None:
                stack.pop()
        if label:
            while stack and stack[-1] == label:
                stack.pop()
        if not stack:
            return j, indices
    return None, indices


def words(lines):
    """The lowercase names used in some code lines (comments left out)."""
    return {w for l in lines for w in re.findall(r"[a-z_]\w*", code_part(l).lower())}


def next_code(lines, after):
    """The first line after `after` that is not blank or a plain comment (a
    directive or a `!$` line counts as code here)."""
    for j in range(after + 1, len(lines)):
        if is_directive(lines[j]) or is_conditional(lines[j]) or code_part(lines[j]):
            return j
    return None


# ---------------------------------------------------------------------------
# Clauses
# ---------------------------------------------------------------------------
def names(arg):
    """Variable names of a clause list (`a, b`, `/blk/`, `x(1:n)`)."""
    out = []
    for part in re.split(r",(?![^(]*\))", arg or ""):
        m = re.match(r"\s*/?\s*([A-Za-z_]\w*)", part)
        if m:
            out.append(m.group(1).lower())
    return out


def privatised(clauses):
    """{variable: {kind}} of the clauses that make a variable private in the
    loop: private, firstprivate, lastprivate, linear, reduction(op)."""
    out = {}
    for word, arg in clauses:
        if word not in PRIVATISING or arg is None:
            continue
        kind, lst = word, arg
        if word == "reduction":
            op, _, lst = arg.rpartition(":")
            op = op.split(",")[-1].strip().lower().replace(" ", "")  # drop a modifier
            kind = "reduction(%s)" % op
        elif word in ("lastprivate", "linear") and ":" in arg:
            head, _, tail = arg.partition(":")
            lst = tail if word == "lastprivate" else head  # conditional: / :step
        for v in names(lst):
            out.setdefault(v, set()).add(kind)
    return out


def clause_text(clauses):
    return " ".join(w + ("(%s)" % " ".join(a.split()) if a is not None else "") for w, a in clauses)


def show(v, kinds):
    """`private(x)`, `reduction(+:s)`, `firstprivate+lastprivate(x)`."""
    parts = []
    for k in sorted(kinds):
        m = re.match(r"reduction\((.*)\)", k)
        parts.append("reduction(%s:%s)" % (m.group(1), v) if m else "%s(%s)" % (k, v))
    return " ".join(parts)


def compare(orig, new, indices, used):
    """Differences between two privatised() maps: dict of lists of text.
    missing / extra / wrong are counted; `stricter` (the rewrite adds
    firstprivate or lastprivate to a variable the original made private)
    and `unused` (the original privatises a name the loop never mentions,
    and the rewrite leaves it out) are only listed."""
    out = dict(missing=[], extra=[], wrong=[], stricter=[], unused=[])
    for v in sorted(set(orig) | set(new)):
        if v in indices:
            continue
        if v in orig and v not in new:
            out["missing" if v in used else "unused"].append(show(v, orig[v]))
        elif v in new and v not in orig:
            out["extra"].append(show(v, new[v]))
        elif orig[v] != new[v]:
            o_red = {k for k in orig[v] if k.startswith("reduction")}
            n_red = {k for k in new[v] if k.startswith("reduction")}
            lost = orig[v] & {"firstprivate", "lastprivate", "linear"} - new[v]
            key = "wrong" if (o_red or n_red) and o_red != n_red or lost else "stricter"
            out[key].append("%s, rewrite %s" % (show(v, orig[v]), show(v, new[v])))
    return out


# ---------------------------------------------------------------------------
# OpenMP -> markers
# ---------------------------------------------------------------------------
def regions(ds):
    """(start directive index, end directive index or None) of each
    `!$omp parallel` region, nesting respected."""
    out, stack = [], []
    for k, d in enumerate(ds):
        if d["name"] == ("parallel",):
            stack.append(k)
        elif d["name"] == ("end", "parallel") and stack:
            out.append((stack.pop(), k))
    out.extend((k, None) for k in stack)
    return sorted(out)


def single_loop(lines, ds, r0, r1):
    """(do directive index, DO line, end line, end-do directive index or None)
    when region ds[r0]..ds[r1] holds nothing but one `!$omp do` loop, else
    (None, why)."""
    inner = list(range(r0 + 1, r1))
    loops = [k for k in inner if ds[k]["name"] in WORKSHARE]
    if len(loops) != 1:
        return None, "parallel region with %d worksharing loops" % len(loops)
    k = loops[0]
    do_line = next_code(lines, ds[k]["end"])
    if do_line is None or is_directive(lines[do_line]) or not do_header(statement(lines[do_line])[1]):
        return None, "`!$omp do` not followed by a DO loop"
    end, _ = loop_end(lines, do_line)
    if end is None:
        return None, "end of the DO loop not found"
    end_do = None
    after = next_code(lines, end)
    if after is not None and k + 1 < r1 and ds[k + 1]["start"] == after and \
            ds[k + 1]["name"][:2] == ("end", "do"):
        end_do = k + 1
    others = [d for d in inner if d not in (k, end_do)]
    if others:
        return None, "parallel region with other directives (%s)" % " ".join(ds[others[0]]["name"])
    covered = set(range(ds[k]["start"], end + 1))
    if end_do is not None:
        covered |= set(range(ds[end_do]["start"], ds[end_do]["end"] + 1))
    for j in range(ds[r0]["end"] + 1, ds[r1]["start"]):
        if j not in covered and (code_part(lines[j]) or is_conditional(lines[j])):
            return None, "parallel region with other statements (line %d)" % (j + 1)
    return (k, do_line, end, end_do), None


def convert(lines):
    """(converted lines, loops, skipped): `loops` are the converted loops
    (marker and DO line in the converted file, original DO line, clauses,
    loop indices); `skipped` are (line, why) of worksharing loops left as
    they are."""
    ds = directives(lines)
    rs = regions(ds)
    drop, insert, loops, skipped, done = set(), {}, [], [], set()

    def take(k):
        drop.update(range(ds[k]["start"], ds[k]["end"] + 1))
        done.add(k)

    for r0, r1 in rs:
        if r1 is None:
            continue
        nested = [k for k in range(r0 + 1, r1) if ds[k]["name"] == ("parallel",)]
        res, why = (None, "nested parallel region") if nested else single_loop(lines, ds, r0, r1)
        if res is None:
            for k in range(r0 + 1, r1):
                if ds[k]["name"] in LOOP_DIRECTIVES and k not in done:
                    skipped.append((ds[k]["start"] + 1, why))
                    done.add(k)
            continue
        k, do_line, end, end_do = res
        _, indices = loop_end(lines, do_line)
        used = words(lines[do_line:end + 1])
        for x in (r0, k, r1) + ((end_do,) if end_do is not None else ()):
            take(x)
        insert[do_line] = dict(orig=do_line + 1, indices=indices, used=used,
                               clauses=ds[r0]["clauses"] + ds[k]["clauses"])
    inside = set()
    for r0, r1 in rs:
        inside.update(range(r0 + 1, (r1 if r1 is not None else len(ds))))
    for k, d in enumerate(ds):
        if k in done or d["name"] not in LOOP_DIRECTIVES:
            continue
        done.add(k)
        line = d["start"] + 1
        if d["name"] in WORKSHARE:
            skipped.append((line, "orphaned `!$omp do` (no enclosing parallel region here)"
                            if k not in inside else "in a parallel region"))
            continue
        if k in inside:
            skipped.append((line, "combined loop inside a parallel region"))
            continue
        do_line = next_code(lines, d["end"])
        if do_line is None or is_directive(lines[do_line]) or not do_header(statement(lines[do_line])[1]):
            skipped.append((line, "`!$omp parallel do` not followed by a DO loop"))
            continue
        end, indices = loop_end(lines, do_line)
        if end is None:
            skipped.append((line, "end of the DO loop not found"))
            continue
        take(k)
        after = next_code(lines, end)
        if after is not None and k + 1 < len(ds) and ds[k + 1]["start"] == after and \
                ds[k + 1]["name"][:3] == ("end", "parallel", "do"):
            take(k + 1)
        insert[do_line] = dict(orig=do_line + 1, indices=indices, clauses=d["clauses"],
                               used=words(lines[do_line:end + 1]))
    out = []
    for j, text in enumerate(lines):
        if j in insert:
            indent = re.match(r"[ \t]*", text).group(0)
            out.append(indent + MARKER)
            rec = dict(insert[j], marker=len(out), line=len(out) + 1)
            loops.append(rec)
        if j not in drop:
            out.append(text)
    return out, loops, sorted(skipped)


def count_loops(lines):
    return sum(1 for d in directives(lines) if d["name"] in LOOP_DIRECTIVES)


# ---------------------------------------------------------------------------
# csa-lint
# ---------------------------------------------------------------------------
def run_rewrite(lint, path):
    """(refusals {marker line: reason}, None) or (None, why it failed);
    the file is rewritten in place."""
    cmd = [lint, "--rewrite", "openmp", "--unsafe-fixes", "--no-config", path]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=LINT_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "timeout after %d s" % LINT_TIMEOUT
    except OSError as e:
        return None, "cannot run: %s" % e
    refusals = {}
    for line in p.stderr.splitlines():
        m = REFUSAL.match(line.strip())
        if m:
            refusals[int(m.group(2))] = m.group(4).strip()
    if p.returncode not in (0, 1) and not refusals:
        tail = " | ".join(p.stderr.strip().splitlines()[-3:])
        return None, "exit status %d: %s" % (p.returncode, tail[:300])
    return refusals, None


def written_directives(conv, new, loops):
    """{marker line: directive text or None (marker kept)} by walking the
    converted and the rewritten file together: the rewrite only replaces
    marker lines by directives and adds `!$omp` lines. None when the two do
    not line up."""
    markers = {r["marker"] for r in loops}
    out, i, j = {}, 0, 0
    while i < len(conv):
        if i + 1 in markers and (j >= len(new) or new[j] != conv[i] or not re.match(r"\s*call\s+builtin_csa", new[j], re.I)):
            k = j
            while k < len(new) and is_directive(new[k]) and new[k] != conv[i]:
                k += 1
            ds = [d for d in directives(new[j:k]) if d["name"][0] != "end"]
            out[i + 1] = ds
            i, j = i + 1, k
        elif j < len(new) and new[j] == conv[i]:
            if i + 1 in markers:
                out[i + 1] = None
            i, j = i + 1, j + 1
        elif j < len(new) and is_directive(new[j]):
            j += 1
        else:
            return None
    return out


# ---------------------------------------------------------------------------
# Building and running
# ---------------------------------------------------------------------------
def make_vars(text):
    """The simple `NAME = value` assignments of a Makefile (first wins)."""
    out = {}
    for m in re.finditer(r"^([A-Za-z_]\w*)\s*=[ \t]*(.*)$", text, re.M):
        out.setdefault(m.group(1), m.group(2).split("#")[0].strip())
    return out


def expand(text, env):
    for _ in range(5):
        text = re.sub(r"\$[({](\w+)[)}]", lambda m: env.get(m.group(1), ""), text)
    return text


def sources(bm_dir, prog):
    """The benchmark's sources (paths), read from its Makefile: the deps of
    `<prog>.bc:` (.ll) or the OBJS list (.o)."""
    text = open(os.path.join(bm_dir, "Makefile"), encoding="utf-8", errors="replace").read()
    text = text.replace("\\\n", " ")
    env = {"COMMON": "../common", "RAND": "randi8"}
    env.update({k: v for k, v in make_vars(text).items() if k not in ("COMMON",)})
    m = re.search(r"^%s\.bc\s*:(.*)$" % re.escape(prog), text, re.M) or \
        re.search(r"^OBJS\s*=(.*)$", text, re.M)
    if not m:
        raise RuntimeError("%s/Makefile: no `%s.bc:` rule and no OBJS list" % (bm_dir, prog))
    out = []
    for word in expand(m.group(1), env).split():
        base = re.sub(r"\.(ll|o)$", "", word)
        for ext in (".f90", ".f", ".c"):
            if os.path.isfile(os.path.join(bm_dir, base + ext)):
                out.append(os.path.normpath(os.path.join(bm_dir, base + ext)))
                break
        else:
            raise RuntimeError("%s/Makefile: no source for %s" % (bm_dir, word))
    return out


def module_order(paths):
    """Fortran sources ordered so that a module is compiled before its users
    (C sources last)."""
    defines, uses = {}, {}
    for p in paths:
        text = open(p, encoding="utf-8", errors="replace").read().lower() if p.endswith((".f90", ".f")) else ""
        defs = set(re.findall(r"^\s*module\s+(?!procedure\b)([a-z_]\w*)", text, re.M))
        for d in defs:
            defines[d] = p
        uses[p] = set(re.findall(r"^\s*use\s*(?:,\s*\w+\s*::\s*)?([a-z_]\w*)", text, re.M)) - defs
    order, seen = [], set()

    def visit(p, stack):
        if p in seen or p in stack:
            return
        for u in sorted(uses[p]):
            if u in defines:
                visit(defines[u], stack | {p})
        seen.add(p)
        order.append(p)

    for p in paths:
        visit(p, set())
    return [p for p in order if not p.endswith(".c")] + [p for p in order if p.endswith(".c")]


def tail(text, n=6):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return "\n".join("      " + l for l in lines[-n:])


def copy_shared(checkout, tree):
    """common/ and config/ of the checkout into `tree` (once)."""
    for sub in ("common", "config"):
        if os.path.isdir(os.path.join(checkout, sub)) and not os.path.isdir(os.path.join(tree, sub)):
            shutil.copytree(os.path.join(checkout, sub), os.path.join(tree, sub))


def prepare(tree, checkout, bm, setparams, klass):
    """Copy the benchmark (and common/, config/) into `tree`, make
    npbparams.h and blk_par.h there; the benchmark directory."""
    copy_shared(checkout, tree)
    d = os.path.join(tree, bm)
    shutil.copytree(os.path.join(checkout, bm), d)
    p = subprocess.run([setparams, bm.lower(), klass], cwd=d, capture_output=True, text=True)
    if not os.path.isfile(os.path.join(d, "npbparams.h")):
        raise RuntimeError("setparams %s %s failed:\n%s" % (bm.lower(), klass, tail(p.stdout + p.stderr)))
    blk0 = os.path.join(d, "blk_par0.h")
    if os.path.isfile(blk0):
        text = open(os.path.join(d, "Makefile"), encoding="utf-8", errors="replace").read()
        env = make_vars(text)
        m = re.search(r"sed -e 's/([^/]*)/([^/]*)/' blk_par0.h", text)
        blk = open(blk0).read()
        if m:
            blk = blk.replace(m.group(1), expand(m.group(2), env))
        with open(os.path.join(d, "blk_par.h"), "w") as fh:
            fh.write(blk)
    return d


def build(bm_dir, prog, fc, cc):
    """(executable, None) or (None, why): compile in `bm_dir`."""
    with open(os.path.join(bm_dir, "npb_eval_stubs.f90"), "w") as fh:
        fh.write(STUBS_F90)
    srcs = module_order(sources(bm_dir, prog)) + [os.path.join(bm_dir, "npb_eval_stubs.f90")]
    objs = []
    for src in srcs:
        rel = os.path.relpath(src, bm_dir)
        obj = os.path.join(bm_dir, "obj_" + re.sub(r"\W", "_", rel) + ".o")
        if src.endswith(".c"):
            cmd = [cc] + CFLAGS + ["-I", os.path.dirname(src), "-c", src, "-o", obj]
        else:
            cmd = [fc] + FFLAGS + ["-I", bm_dir, "-J", bm_dir, "-c", src, "-o", obj]
        p = subprocess.run(cmd, cwd=bm_dir, capture_output=True, text=True)
        if p.returncode != 0:
            return None, "compiling %s failed:\n%s" % (rel, tail(p.stderr))
        objs.append(obj)
    exe = os.path.join(bm_dir, prog + ".x")
    p = subprocess.run([fc, "-fopenmp", "-o", exe] + objs, cwd=bm_dir, capture_output=True, text=True)
    if p.returncode != 0:
        return None, "linking %s failed:\n%s" % (prog, tail(p.stderr))
    return exe, None


def run(exe, threads):
    """(verification word, None) or (None, why)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    try:
        p = subprocess.run([exe], cwd=os.path.dirname(exe), env=env, capture_output=True,
                           text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "run timed out after %d s" % RUN_TIMEOUT
    m = VERIFICATION.search(p.stdout)
    if m:
        return m.group(1).upper(), None
    return None, "no verification line (exit status %d):\n%s" % (p.returncode, tail(p.stdout + p.stderr))


def build_and_run(bm_dir, prog, fc, cc, threads):
    """The verification word, or BUILD-FAIL / RUN-FAIL and the message."""
    exe, err = build(bm_dir, prog, fc, cc)
    if err:
        return "BUILD-FAIL", err
    word, err = run(exe, threads)
    return (word, None) if word else ("RUN-FAIL", err)


# ---------------------------------------------------------------------------
# One benchmark
# ---------------------------------------------------------------------------
def read_lines(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read().split("\n")


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))


def evaluate(bm, a, work, setparams, lint):
    """The figures of one benchmark (dict)."""
    prog = bm.lower()
    r = dict(bm=bm, found=0, markers=0, back=0, refused=0, missing=0, extra=0, wrong=0, stricter=0, unused=0,
             refusals=[], diffs=[], skipped=[], errors=[], orig="-", new="-")
    orig_dir = prepare(os.path.join(work, "orig"), a.checkout, bm, setparams, a.klass)
    mark_dir = os.path.join(work, "marker", bm)
    new_dir = os.path.join(work, "rewrite", bm)
    for tree in ("marker", "rewrite"):
        copy_shared(a.checkout, os.path.join(work, tree))
    shutil.copytree(orig_dir, mark_dir)
    files = [p for p in sources(orig_dir, prog)
             if os.path.dirname(p) == orig_dir and p.endswith(".f90")]
    per_file = {}
    for p in files:
        name = os.path.basename(p)
        lines = read_lines(p)
        r["found"] += count_loops(lines)
        conv, loops, skipped = convert(lines)
        r["skipped"] += [(name, line, why) for line, why in skipped]
        if loops:
            write_lines(os.path.join(mark_dir, name), conv)
            per_file[name] = (conv, loops)
            r["markers"] += len(loops)
    shutil.copytree(mark_dir, new_dir)
    for name, (conv, loops) in sorted(per_file.items()):
        path = os.path.join(new_dir, name)
        refusals, err = run_rewrite(lint, path)
        if err:
            r["errors"].append("csa-lint on %s: %s" % (name, err))
            r["refused"] += len(loops)
            r["refusals"] += [(name, x["line"], x["orig"], "csa-lint failed") for x in loops]
            continue
        written = written_directives(conv, read_lines(path), loops)
        if written is None:
            r["errors"].append("%s: the rewritten file does not line up with the converted one" % name)
            continue
        for x in loops:
            ds = written.get(x["marker"])
            if ds is None:
                r["refused"] += 1
                why = refusals.get(x["marker"]) or refusals.get(x["line"]) or "(marker kept, no reason given)"
                r["refusals"].append((name, x["line"], x["orig"], why))
                continue
            r["back"] += 1
            new = privatised([c for d in ds for c in d["clauses"]])
            diff = compare(privatised(x["clauses"]), new, x["indices"], x["used"])
            for key, lst in diff.items():
                if lst:
                    r[key] += 1
                    r["diffs"].append((name, x["line"], x["orig"], key, lst, clause_text(x["clauses"]),
                                       " | ".join(d["text"] for d in ds)))
    r["orig"], err = build_and_run(orig_dir, prog, a.fc, a.cc, a.threads)
    if err:
        r["errors"].append("original: " + err)
    r["new"], err = build_and_run(new_dir, prog, a.fc, a.cc, a.threads)
    if err:
        r["errors"].append("rewritten: " + err)
    return r


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------
COLUMNS = ("found", "markers", "back", "refused", "missing", "extra", "wrong")


def print_table(results):
    print("%-6s %6s %8s %5s %8s %8s %6s %6s  %-13s %-13s"
          % ("bench", "loops", "markers", "back", "refused", "missing", "extra", "wrong",
             "verif orig", "verif rewrite"))
    for r in results:
        print("%-6s %6d %8d %5d %8d %8d %6d %6d  %-13s %-13s"
              % ((r["bm"],) + tuple(r[c] for c in COLUMNS) + (r["orig"], r["new"])))
    tot = {c: sum(r[c] for r in results) for c in COLUMNS}
    ok_o = sum(1 for r in results if r["orig"] == "SUCCESSFUL")
    ok_n = sum(1 for r in results if r["new"] == "SUCCESSFUL")
    print("%-6s %6d %8d %5d %8d %8d %6d %6d  %-13s %-13s"
          % (("total",) + tuple(tot[c] for c in COLUMNS) +
             ("%d/%d ok" % (ok_o, len(results)), "%d/%d ok" % (ok_n, len(results)))))
    print("(loops = !$omp parallel do / !$omp do directives in the benchmark's own sources;"
          " markers = single parallel loops replaced by the CSA marker; back = markers csa-lint"
          " converted back to OpenMP; refused = markers it did not convert; missing/extra/wrong ="
          " loops converted back with at least one such data-sharing difference, loop indices"
          " not counted; --verbose lists them, and the `stricter` and `unused` differences that are"
          " not counted)")


def print_details(results, verbose):
    for r in results:
        for e in r["errors"]:
            print("\n%s: %s" % (r["bm"], e))
    if not verbose:
        return
    for r in results:
        print("\n== %s" % r["bm"])
        reasons = {}
        for _, _, why in r["skipped"]:
            key = re.sub(r" \(line \d+\)| \(.*\)$", "", why)
            reasons[key] = reasons.get(key, 0) + 1
        print("  not converted (not a single parallel loop): %d" % len(r["skipped"]))
        for why, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
            print("    %3d  %s" % (n, why))
        print("  refusals: %d (lines of the DO in the marker file)" % len(r["refusals"]))
        for name, line, orig, why in r["refusals"]:
            print("    %s/%s:%d: %s  [original line %d]" % (r["bm"], name, line, why, orig))
        print("  clause differences: %d" % len(r["diffs"]))
        for name, line, orig_line, key, lst, orig, new in r["diffs"]:
            note = " (not counted)" if key in ("stricter", "unused") else ""
            print("    %s/%s:%d: %s%s %s" % (r["bm"], name, line, key, note, ", ".join(lst)))
            print("        original (line %d): %s" % (orig_line, orig))
            print("        rewrite:  %s" % new)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkout", help="an NPB 3.4 OpenMP tree")
    ap.add_argument("--csa-lint", dest="lint", default=os.path.join(here, "..", "target", "release", "csa-lint"),
                    help="the csa-lint binary (default: target/release/csa-lint)")
    ap.add_argument("--benchmarks", default=",".join(FORTRAN_BENCHMARKS),
                    help="comma-separated, default %s" % ",".join(FORTRAN_BENCHMARKS))
    ap.add_argument("--class", dest="klass", default="S", help="problem class (default S)")
    ap.add_argument("--threads", type=int, default=4, help="OMP_NUM_THREADS of the runs (default 4)")
    ap.add_argument("--verbose", action="store_true", help="list refusals, clause differences and skipped loops")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR (orig/, marker/, rewrite/) and keep it")
    ap.add_argument("--fc", default="gfortran", help="Fortran compiler (default gfortran)")
    ap.add_argument("--cc", default="gcc", help="C compiler (default gcc)")
    a = ap.parse_args()
    a.checkout = os.path.abspath(a.checkout)
    lint = os.path.abspath(a.lint)
    if not os.path.isfile(lint):
        sys.exit("csa-lint not found at %s: build it with `cargo build --release -p csa-lint` or pass --csa-lint" % lint)
    stale_warning(lint)
    bms = [b.strip().upper() for b in a.benchmarks.split(",") if b.strip()]
    for b in bms:
        if b not in FORTRAN_BENCHMARKS:
            sys.exit("%s: not supported (Fortran benchmarks only: %s)" % (b, ",".join(FORTRAN_BENCHMARKS)))
        if not os.path.isfile(os.path.join(a.checkout, b, "Makefile")):
            sys.exit("%s: not an NPB checkout (no %s/Makefile)" % (a.checkout, b))
    setparams_c = os.path.join(a.checkout, "sys", "setparams.c")
    if not os.path.isfile(setparams_c):
        sys.exit("%s: not an NPB checkout (no sys/setparams.c)" % a.checkout)
    if a.keep:
        work = os.path.abspath(a.keep)
        if os.path.exists(work) and os.listdir(work):
            sys.exit("%s: not empty" % work)
        os.makedirs(work, exist_ok=True)
    else:
        work = tempfile.mkdtemp(prefix="npb_eval_")
    t0 = time.time()
    results = []
    try:
        setparams = os.path.join(work, "setparams")
        p = subprocess.run([a.cc, "-o", setparams, setparams_c], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit("compiling sys/setparams.c failed:\n%s" % tail(p.stderr))
        for bm in bms:
            sys.stderr.write("%s ...\n" % bm)
            try:
                results.append(evaluate(bm, a, work, setparams, lint))
            except (RuntimeError, OSError) as e:
                sys.exit("npb_eval: %s: %s" % (bm, e))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("NPB %s, class %s, OMP_NUM_THREADS=%d, %s\n" % (a.checkout, a.klass, a.threads, lint))
    print_table(results)
    print_details(results, a.verbose)
    print("\n(%.0f s)" % (time.time() - t0))


if __name__ == "__main__":
    main()
