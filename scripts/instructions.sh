#!/bin/sh
# Where the instructions of one `csa-lint -j1 --no-cache` run over PATH go,
# counted by valgrind's cachegrind (`apt-get install valgrind`): the
# tree-sitter parse, the release of its trees, the flat copy, the front
# ends, the analyses, the allocator. Unlike a timing, the count is the same
# from run to run of one build, so a change of 0.5% shows on a machine
# whose timings move by 5% (docs/performance.md). It counts instructions,
# not the time lost waiting for memory: the tree copy and the parse wait
# more per instruction than the analyses do.
#
#   scripts/instructions.sh [--bin BINARY] PATH...
set -eu
bin=""
if [ "${1:-}" = "--bin" ]; then
    bin=$2
    shift 2
fi
if [ $# -eq 0 ]; then
    echo "usage: scripts/instructions.sh [--bin BINARY] PATH..." >&2
    exit 2
fi
if ! command -v valgrind >/dev/null; then
    echo "scripts/instructions.sh: needs valgrind (apt-get install valgrind)" >&2
    exit 2
fi
if [ -z "$bin" ]; then
    (cd "$(dirname "$0")/.." && cargo build --release -q -p csa-lint)
    bin="$(dirname "$0")/../target/release/csa-lint"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out" \
    "$bin" -j1 --no-cache -q "$@" >/dev/null 2>&1 || true
bytes=$(find "$@" -type f \( -name '*.[cChHfF]' -o -name '*.f90' -o -name '*.F90' \
    -o -name '*.f77' -o -name '*.for' -o -name '*.ftn' -o -name '*.inc' \) \
    -exec cat {} + 2>/dev/null | wc -c)
cg_annotate --threshold=0 "$out" 2>/dev/null | awk -v bytes="$bytes" '
/^-- / && seen { exit }
/file:function/ { seen = 1; next }
seen && /%\)/ {
    n = $1; gsub(",", "", n)
    line = $0; sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", line)
    fn = line; sub(/^[^:]*:/, "", fn)
    file = line; sub(/:.*/, "", file)
    if (fn ~ /^(ts_subtree_release|ts_tree_delete|csa_tree_delete|release_each)/) c = "tree-sitter: release of the trees"
    else if (fn ~ /csa_flat_copy|flags_of|^treecopy::/) c = "flat copy of the trees (treecopy)"
    else if (fn ~ /^analyzer::frontend::fortran/) c = "Fortran front end (beyond the parse)"
    else if (fn ~ /^analyzer::frontend::c/) c = "C front end (beyond the parse)"
    else if (fn ~ /^analyzer::frontend/) c = "front ends, shared (flat tree, relevance)"
    else if (fn ~ /^analyzer::(dependence|scalars)/) c = "dependence analysis (CSA5xx)"
    else if (fn ~ /^analyzer::regions/) c = "regions, membership, ordering"
    else if (fn ~ /^analyzer::/) c = "other analyses, rules, IR"
    else if (fn ~ /^csa_grammars::/) c = "preprocessor, fixed form (csa_grammars)"
    else if (fn ~ /^csa_lint::/) c = "the CLI (walk, read, render)"
    else if (file ~ /tree-sitter/) c = "tree-sitter: parse"
    else if (file ~ /mimalloc/) c = "allocator (mimalloc)"
    else c = "other (libc, std, kernel entry)"
    sum[c] += n; total += n
}
END {
    printf "instructions: %.1f M (%.0f per byte of %d bytes)\n", total / 1e6, total / (bytes > 0 ? bytes : 1), bytes
    for (c in sum) printf "%6.1f%%  %8.1f M  %s\n", 100 * sum[c] / total, sum[c] / 1e6, c | "sort -rn"
}'
