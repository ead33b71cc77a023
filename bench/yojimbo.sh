#!/usr/bin/env bash
# bench/yojimbo.sh: what netcode + reliable + yojimbo cost tshark with keys
# and full analysis, against the same capture decoded as data.
#
#   bench/yojimbo.sh [-b BUILD] [-n REPS] [--runs N] [--duration SEC] [--keep DIR]
#
# The capture: bench/yojimbo-capture.py's N yojimbo-sim runs (default 6 of
# 500 s: 596 022 frames; messages both ways, 8000-byte blocks, 2% loss), each
# a connection of its own, and their key log. Configurations, through
# scripts/chunk-tshark (`tshark [-2] -r FILE > /dev/null`), chunk disabled in
# all (it holds UDP port 40000):
#
#   data    -d udp.port==40000,data       the reference: the port's datagrams as data
#   full    -o netcode.keylog_file:KEYS   every packet decrypted, reliable and
#                                         yojimbo decoded and analysed
#   data2, full2: the same with -2 (two passes: what the acks that came later
#                 and the diagnoses need, and what Wireshark's GUI does)
#
# Each run is timed with /usr/bin/time (CPU = user + sys, peak RSS); the
# report gives medians and the ratios to data (data2 for the -2 runs). Goals: full <= 2.5x time,
# <= 1.3x memory. --keep DIR leaves the capture and key log in DIR.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs_name=bench/yojimbo.sh
. "$repo/bench/tshark-runs.sh"
runs=6
duration=500
keep=

while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs_need "$1" $# "a value"; runs=$2; shift 2 ;;
    --duration) runs_need "$1" $# "a value"; duration=$2; shift 2 ;;
    --keep) runs_need "$1" $# "a value"; keep=$2; shift 2 ;;
    -h|--help) runs_help; exit 0 ;;
    *) runs_option "$@"; shift 2 ;;
    esac
done
sim=$build/bin/yojimbo-sim
[ -x "$sim" ] || { echo "bench/yojimbo.sh: no $sim (build first)" >&2; exit 2; }

runs_work "$keep"
cap=$work/yojimbo-big.pcap
keys=$work/yojimbo-big.keys
python3 "$repo/bench/yojimbo-capture.py" "$sim" "$cap" "$keys" "$runs" "$duration"
chmod 644 "$cap" "$keys"
frames=$(capture_frames "$cap")

run data -d udp.port==40000,data
run full -o "netcode.keylog_file:$keys"
run data2 -2 -d udp.port==40000,data
run full2 -2 -o "netcode.keylog_file:$keys"

echo "yojimbo bench: $frames frames ($runs connections), $reps run(s) each, medians"
report 6 data:data full:data data2:data2 full2:data2
