#!/bin/sh
# Whole-process figures of csa-lint on real source trees (issue 17): for
# each PATH (a checkout, or a directory in one such as Reference-LAPACK's
# SRC), tree-sitter's parse-only time, the in-process analysis, csa-lint
# -j1 and -jN without a cache, a warm re-run, peak RSS on the tree and on
# the tree doubled, and the CSA001 count. See analyzer/benches/tree.rs and
# docs/performance.md. Needs GNU time (`apt-get install time`) for RSS.
#
#   scripts/tree_figures.sh [--reps N] PATH...
set -eu
reps=3
if [ "${1:-}" = "--reps" ]; then
    reps=$2
    shift 2
fi
if [ $# -eq 0 ]; then
    echo "usage: scripts/tree_figures.sh [--reps N] PATH..." >&2
    exit 2
fi
cd "$(dirname "$0")/.."
for path in "$@"; do
    cargo bench -q -p csa-lint --bench tree -- "$path" --reps "$reps" 2>/dev/null
    echo
done
