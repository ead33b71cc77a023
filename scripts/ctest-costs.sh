#!/usr/bin/env bash
# ctest-costs.sh BUILD...: gives each build tree that has not run its tests
# yet the test times of scripts/test-costs.txt, so that `ctest -j` starts the
# longest tests first instead of meeting them last, one core idle while a
# single long test finishes (ctest orders by the times it measured in
# BUILD/Testing/Temporary/CTestCostData.txt; a fresh build tree has none, and
# ctest then runs the tests in the order they were defined).
#
# A tree that has that file keeps it: ctest rewrites it after every run with
# what it measured there. Names in test-costs.txt that no longer exist are
# ignored by ctest; a new test without a line starts after the listed ones.
# test-costs.txt: "NAME SECONDS" a line (# comments), the wall times of a
# `ctest -j2` run on the host; regenerate it with --write BUILD from a build
# tree that has just run every test.
set -euo pipefail
costs=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/test-costs.txt

if [ "${1:-}" = --write ]; then
    [ $# = 2 ] || { echo "usage: ctest-costs.sh --write BUILD" >&2; exit 2; }
    data=$2/Testing/Temporary/CTestCostData.txt
    [ -f "$data" ] || { echo "ctest-costs.sh: no $data (run ctest in $2 first)" >&2; exit 1; }
    {
        grep '^#' "$costs"
        # the tree's times, and the listed times of tests it does not have
        # (the fuzzers' in an ordinary build tree): tests under a second left out
        { sed '/^---$/,$d' "$data" | awk 'NF == 3 { printf "%s %.0f\n", $1, $3 }'
          grep -v '^#' "$costs"; } | awk '!seen[$1]++ && $2 >= 1' | sort -k2,2nr -k1,1
    } > "$costs.new"
    mv "$costs.new" "$costs"
    exit 0
fi
for b in "$@"; do
    data=$b/Testing/Temporary/CTestCostData.txt
    [ -f "$data" ] && continue
    mkdir -p "$(dirname "$data")"
    { grep -v '^#' "$costs" | awk 'NF == 2 { print $1, 1, $2 }'; echo ---; } > "$data"
done
