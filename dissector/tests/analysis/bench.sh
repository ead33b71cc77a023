#!/usr/bin/env bash
# bench.sh: cost of the chunk dissector with full analysis and reassembly
# against tshark with the protocol disabled, in summary mode (issue 4).
#
#   dissector/tests/analysis/bench.sh [--runs N] [--keep] [CAPTURE]
#
# Without CAPTURE, makes one with chunk-sim (675 707 frames: 256 MiB each way
# in 256 KiB chunks, 10% loss, duplex) in a temporary folder. Runs
# `tshark -r CAPTURE` (summary lines to /dev/null) N times (default 3) in each
# mode, alternating, and prints the best time and peak RSS (GNU time) of each
# and their ratios. Goal: <= 1.3x time and memory.
# CHUNK_BUILD_DIR: the build tree with the plugin (default <repo>/build).
# Exit status: 0 measured, 2 bad arguments or missing tools.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=${CHUNK_BUILD_DIR:-$repo/build}
runs=3
keep=0
cap=""
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
    *) cap=$1; shift ;;
    esac
done
[ -x /usr/bin/time ] || { echo "bench.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
export CHUNK_BUILD_DIR=$build
tmp=$(mktemp -d /tmp/chunk-bench.XXXXXX)
chmod 755 "$tmp"
[ "$keep" = 1 ] || trap 'rm -rf "$tmp"' EXIT
if [ -z "$cap" ]; then
    sim=$build/bin/chunk-sim
    [ -x "$sim" ] || { echo "bench.sh: $sim not built" >&2; exit 2; }
    cap=$tmp/big.pcap
    "$sim" --size 256M --chunk-size 256K --duplex --loss 10% --latency 10ms \
        --time-limit 100000 --rate 0 -w "$cap" -q
    chmod 644 "$cap"
fi
echo "capture: $cap ($(capinfos -c -M "$cap" | awk -F: '/Number of packets/ {gsub(/ /, "", $2); print $2}') frames, $(stat -c %s "$cap") bytes)"
best() { sort -n | head -1; }
declare -A T M
for mode in off on; do T[$mode]=""; M[$mode]=""; done
for i in $(seq "$runs"); do
    for mode in off on; do
        args=()
        [ "$mode" = off ] && args=(--disable-protocol chunk)
        out=$( { /usr/bin/time -f "%e %M" "$repo/scripts/chunk-tshark" -r "$cap" "${args[@]}" > /dev/null; } 2>&1 | tail -1)
        T[$mode]+="${out% *}"$'\n'
        M[$mode]+="${out#* }"$'\n'
    done
done
toff=$(printf '%s' "${T[off]}" | best); ton=$(printf '%s' "${T[on]}" | best)
moff=$(printf '%s' "${M[off]}" | best); mon=$(printf '%s' "${M[on]}" | best)
printf '%-28s %10s %12s\n' mode "time (s)" "peak RSS (KB)"
printf '%-28s %10s %12s\n' "--disable-protocol chunk" "$toff" "$moff"
printf '%-28s %10s %12s\n' "chunk, analysis, reassembly" "$ton" "$mon"
awk -v a="$ton" -v b="$toff" -v c="$mon" -v d="$moff" 'BEGIN { printf "ratio: time %.2fx, memory %.2fx (goal <= 1.30x)\n", a / b, c / d }'
