#!/usr/bin/env bash
# bench/netgame-capture.sh: makes the large netgame capture of the dissector
# benchmark (bench/RESULTS.md: at least 1 000 000 netgame datagrams from
# netgame-sim), reproducibly: the same build gives the same bytes, and the
# script prints the file's sha256 to compare. It is not committed (about
# 110 MB); make it where the benchmark runs.
#
#   bench/netgame-capture.sh [-b BUILD_DIR] [-o FILE]
#
# -b DIR   build tree with bin/netgame-sim (default: $CHUNK_BUILD_DIR, else build)
# -o FILE  where to write (default: netgame-1m.pcap in the current folder)
#
# The run: client and server for 4.8 hours of virtual time, captured at the
# client; 2% loss, 30 ms each way with 5 ms of jitter, 1% duplicates and 1%
# reordering, and eight 3-s RTT spikes to 400 ms so that the capture holds
# mode switches (Bad and Good, penalty doubling) as well as loss, duplicates,
# reordering and gaps. 32-byte payloads. Exit 0 written with >= 1 000 000
# frames, 1 otherwise, 2 bad arguments.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CHUNK_BUILD_DIR:-$repo/build}
out=netgame-1m.pcap
while [ $# -gt 0 ]; do
    case "$1" in
    -b) build=${2:?-b needs a build folder}; shift 2 ;;
    -o) out=${2:?-o needs a file}; shift 2 ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "netgame-capture.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
sim=$build/bin/netgame-sim
[ -x "$sim" ] || { echo "netgame-capture.sh: $sim not built" >&2; exit 2; }

spikes=()
for start in 600 1200 2400 2410 4800 7200 9600 12000; do spikes+=(--spike "$start:3:150ms"); done
"$sim" --duration 17300 --seed 11 --loss 2% --latency 30ms --jitter 5ms --duplicate 1% --reorder 1% \
    "${spikes[@]}" -w "$out" | tee "$out.summary"
frames=$(sed -n -E 's/^pcap: ([0-9]+) frames.*/\1/p' "$out.summary")
echo "frames: $frames"
sha256sum "$out"
[ -n "$frames" ] && [ "$frames" -ge 1000000 ] || { echo "netgame-capture.sh: only $frames frames" >&2; exit 1; }
