#!/usr/bin/env bash
# p2frag-capture.sh: makes the fragment capture the dissector is benchmarked on
# (bench/RESULTS.md): at least 500 000 fragment datagrams from p2frag-sim
# at 1% loss, captured at the receiver. Too large to commit (about 530 MB);
# the same command makes the same bytes on every machine (seeded, virtual
# time), so this script is what is kept.
#
#   bench/p2frag-capture.sh [--bin DIR] [--out FILE] [--packets N]
#
# --bin DIR     folder holding p2frag-sim (default: <repo>/build/bin)
# --out FILE    the pcap to write (default: bench/work/p2frag-500k.pcap)
# --packets N   packets of 4000-6000 bytes (4-6 fragments; default 95000, which
#               gives about 507 000 frames after 1% loss)
#
# Prints the p2frag-sim summary, the wall time the generation took and the
# file's size; fails when the capture holds fewer than 500 000 frames.
# Exit status: 0 made; 1 p2frag-sim failed or too few frames; 2 bad arguments.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
bin=$repo/build/bin
out=$here/work/p2frag-500k.pcap
packets=95000
while [ $# -gt 0 ]; do
    case "$1" in
    --bin) bin=${2:?--bin needs a folder}; shift 2 ;;
    --out) out=${2:?--out needs a file}; shift 2 ;;
    --packets) packets=${2:?--packets needs a count}; shift 2 ;;
    -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "p2frag-capture.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
[ -x "$bin/p2frag-sim" ] || { echo "p2frag-capture.sh: no p2frag-sim in $bin; build first or pass --bin" >&2; exit 2; }
mkdir -p "$(dirname "$out")"

# 1000 packets per virtual second, 10 ms one way, 1% loss; the time limit is
# far beyond the ~95 s of virtual time the packets take.
start=$(date +%s.%N)
"$bin/p2frag-sim" --packets "$packets" --packet-size 4000-6000 --packet-rate 1000 --loss 1% --latency 10ms \
    --seed 1 --time-limit 100000 -w "$out" | tee "$out.summary"
end=$(date +%s.%N)
frames=$(sed -n 's/.*capture at B: \([0-9]*\) frames.*/\1/p' "$out.summary")
printf 'p2frag-capture.sh: %s frames, %s bytes, generated in %.1f s of wall time\n' \
    "$frames" "$(stat -c %s "$out")" "$(echo "$end - $start" | bc -l)"
if [ "${frames:-0}" -lt 500000 ]; then
    echo "p2frag-capture.sh: fewer than 500 000 frames; raise --packets" >&2
    exit 1
fi
