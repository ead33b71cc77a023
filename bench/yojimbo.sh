#!/usr/bin/env bash
# bench/yojimbo.sh: what netcode + reliable + yojimbo cost tshark with keys
# and full analysis, against the same capture decoded as data.
#
#   bench/yojimbo.sh [-b BUILD] [-n REPS] [--pin CPU] [--runs N] [--duration SEC] [--keep DIR]
#   bench/yojimbo.sh [-b BUILD] [-n REPS] [--pin CPU] --capture FILE --key HEX
#                    [--channels SPEC] [--message-types N] [--schema FILE]
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
# After a warm-up run of each, the configurations run in REPS rounds of one
# run each, in alternating order (A B B A ...; --pin CPU pins every run to
# that CPU with taskset), each timed with /usr/bin/time (CPU = user + sys,
# peak RSS); the report gives medians and the ratios to data (data2 for the
# -2 runs), the median (min-max) of the CPU ratios within a round, and
# full's frames per second (frames / CPU seconds) and peak bytes over data's
# per frame. Goals: full <= 2.5x time, <= 1.3x memory. --keep DIR leaves the
# capture and key log in DIR.
#
# --capture FILE measures a capture made elsewhere instead (a real yojimbo
# program's traffic on UDP port 40000, as bench/RESULTS.md's soak capture):
# full is then `-o netcode.private_key:HEX` (the server's key; the capture
# must hold the connection requests) with the yojimbo preferences given
# (yojimbo.channels, yojimbo.message_types, yojimbo.schema_file). In both
# cases data also turns the plugin's UDP heuristics off (it changes nothing:
# the port's data entry comes before them).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs_name=bench/yojimbo.sh
. "$repo/bench/tshark-runs.sh"
runs=6
duration=500
keep=
capture=
key=
yj_opts=()

while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs_need "$1" $# "a value"; runs=$2; shift 2 ;;
    --duration) runs_need "$1" $# "a value"; duration=$2; shift 2 ;;
    --keep) runs_need "$1" $# "a value"; keep=$2; shift 2 ;;
    --capture) runs_need "$1" $# "a file"; capture=$2; shift 2 ;;
    --key) runs_need "$1" $# "64 hex digits"; key=$2; shift 2 ;;
    --channels) runs_need "$1" $# "a value"; yj_opts+=(-o "yojimbo.channels:$2"); shift 2 ;;
    --message-types) runs_need "$1" $# "a value"; yj_opts+=(-o "yojimbo.message_types:$2"); shift 2 ;;
    --schema) runs_need "$1" $# "a file"; yj_opts+=(-o "yojimbo.schema_file:$(realpath "$2")"); shift 2 ;;
    -h|--help) runs_help; exit 0 ;;
    *) runs_option "$@"; shift 2 ;;
    esac
done
runs_work "$keep"
if [ -n "$capture" ]; then
    [ -r "$capture" ] || { echo "bench/yojimbo.sh: cannot read $capture" >&2; exit 2; }
    [[ $key =~ ^[0-9a-fA-F]{64}$ ]] || { echo "bench/yojimbo.sh: --capture needs --key (64 hex digits)" >&2; exit 2; }
    cap=$(realpath "$capture")
    full_opts=(-o "netcode.private_key:$key" "${yj_opts[@]}")
    what="$(basename "$cap")"
else
    sim=$build/bin/yojimbo-sim
    [ -x "$sim" ] || { echo "bench/yojimbo.sh: no $sim (build first)" >&2; exit 2; }
    cap=$work/yojimbo-big.pcap
    keys=$work/yojimbo-big.keys
    python3 "$repo/bench/yojimbo-capture.py" "$sim" "$cap" "$keys" "$runs" "$duration"
    chmod 644 "$cap" "$keys"
    full_opts=(-o "netcode.keylog_file:$keys" "${yj_opts[@]}")
    what="$runs connections"
fi
frames=$(capture_frames "$cap")
data_opts=(-d udp.port==40000,data --disable-heuristic netcode_udp --disable-heuristic reliable_udp
           --disable-heuristic netgame_udp --disable-heuristic p2frag_udp)

run data "${data_opts[@]}"
run full "${full_opts[@]}"
run data2 -2 "${data_opts[@]}"
run full2 -2 "${full_opts[@]}"
run_all

echo "yojimbo bench: $frames frames ($what), $reps round(s)${pin:+ pinned to CPU $pin}, medians"
report 6 data:data full:data data2:data2 full2:data2
for c in full full2; do
    ref=data${c#full}
    t=$(median "$c" 3); m=$(median "$c" 4); dm=$(median "$ref" 4)
    echo "$c: $(awk -v f="$frames" -v t="$t" 'BEGIN {printf "%.0f", f / t}') frames/s CPU," \
         "$(awk -v f="$frames" -v m="$m" -v d="$dm" 'BEGIN {printf "%.0f", (m - d) * 1024 / f}') bytes a frame over $ref"
done
