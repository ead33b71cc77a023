#!/usr/bin/env bash
# loop-tests.sh: runs the whole test suite again and again, each time with a
# fresh random seed, so that rare failures become frequent (docs/protocol.md,
# "Hostile input").
#
#   scripts/loop-tests.sh [--build DIR] [--iterations N | --seconds S]
#                         [--label L] [--keep-going]
#
#   --build DIR      build tree to test (default build-loop; configured and
#                    built when needed, dissector included if it is found)
#   --iterations N   stop after N rounds (default 10)
#   --seconds S      instead, stop starting rounds after S seconds
#   --label L        only ctest tests with label L (default: all but "fuzz")
#   --keep-going     do not stop at the first failing round
#
# Each round: CHUNK_TEST_SEED=<seed> ctest (the test binary's random traffic
# follows the seed), and chunk-soak --seed <seed> in place of the fixed-seed
# soak in ctest. A failing round prints its seed and keeps its log in
# DIR/loop-logs/; replay with CHUNK_TEST_SEED=<seed> ctest --test-dir DIR or
# chunk-soak --seed <seed>. Exit 0 when every round passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=build-loop iterations=10 seconds=0 label= keep_going=0
die() { echo "loop-tests.sh: $* (try --help)" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    --build) [ $# -ge 2 ] || die "--build needs a directory"; build=$2; shift ;;
    --iterations) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || die "--iterations needs a count >= 1"; iterations=$2; shift ;;
    --seconds) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || die "--seconds needs a whole number >= 1"; seconds=$2; shift ;;
    --label) [ $# -ge 2 ] || die "--label needs a label"; label=$2; shift ;;
    --keep-going) keep_going=1 ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1'" ;;
    esac
    shift
done

if ! cmake -S . -B "$build" >/dev/null || ! cmake --build "$build" -j"$(nproc)" >/dev/null; then
    echo "loop-tests.sh: build of $build failed" >&2
    exit 1
fi
soak="$build/bin/chunk-soak"
[ -x "$soak" ] || { echo "loop-tests.sh: $soak not built" >&2; exit 1; }
logs="$build/loop-logs"
mkdir -p "$logs"

select=(-LE '^fuzz$')
[ -n "$label" ] && select=(-L "$label")
start=$SECONDS round=0 failed=0
while :; do
    if [ "$seconds" -gt 0 ]; then
        [ $((SECONDS - start)) -lt "$seconds" ] || break
    else
        [ "$round" -lt "$iterations" ] || break
    fi
    round=$((round + 1))
    seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    log="$logs/seed-$seed.log"
    ok=1
    CHUNK_TEST_SEED=$seed ctest --test-dir "$build" "${select[@]}" -E '^endpoints\.soak$' \
        --output-on-failure -j"$(nproc)" >"$log" 2>&1 || ok=0
    "$soak" --seed "$seed" --iterations 300 >>"$log" 2>&1 || ok=0
    summary=$(grep -E 'tests passed|tests failed' "$log" | tail -n 1)
    if [ $ok = 1 ]; then
        echo "round $round seed $seed: ok ($summary; $(grep -o '[0-9]* chunks ([0-9]* bytes) delivered' "$log"))"
        rm -f "$log"
    else
        failed=$((failed + 1))
        echo "round $round seed $seed: FAILED ($summary); log: $log"
        [ $keep_going = 1 ] || break
    fi
done
echo "loop-tests.sh: $round rounds, $failed failed, $((SECONDS - start)) s"
[ $failed = 0 ]
