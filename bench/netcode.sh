#!/usr/bin/env bash
# bench/netcode.sh: what the netcode dissector costs tshark, without and
# with keys, against the same capture decoded as data.
#
#   bench/netcode.sh [-b BUILD] [-n REPS] [--pin CPU] [--copies N]
#
# The capture: bench/netcode-capture.py's N copies (default 850: 504 900
# frames) of captures/real-netcode-cs.pcapng, each a connection of its own.
# Configurations, summary mode (`tshark -r FILE > /dev/null`, one pass),
# through scripts/chunk-tshark; chunk is disabled in all three (it holds UDP
# port 40000 and would otherwise take the datagrams first):
#
#   data    -d udp.port==40000,data and the plugin's UDP heuristics off:
#           the reference, the port's datagrams as data
#   nokey   defaults: netcode's heuristic, decode and analysis, nothing decrypted
#   keys    -o netcode.private_key:<the capture's key>: every packet decrypted,
#           the reliable heuristic off on netcode's payload (netcode alone)
#   keys+rl the same with the reliable heuristic on: the library example's
#           payload bytes (0, 1, 2, ...) pass for reliable packets
#
# After a warm-up run of each, the configurations run in REPS rounds of one
# run each, in alternating order (A B B A ...; --pin CPU pins every run to
# that CPU with taskset), each timed with /usr/bin/time (CPU = user + sys,
# peak RSS); the report gives medians and the ratios to data, and the
# median (min-max) of each configuration's CPU ratio to data within a
# round. Goals: nokey <= 1.2x, keys <= 2x.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs_name=bench/netcode.sh
. "$repo/bench/tshark-runs.sh"
copies=850
key=606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1

while [ $# -gt 0 ]; do
    case "$1" in
    --copies) runs_need "$1" $# "a number"; copies=$2; shift 2 ;;
    -h|--help) runs_help; exit 0 ;;
    *) runs_option "$@"; shift 2 ;;
    esac
done

runs_work
cap=$work/netcode-big.pcap
python3 "$repo/bench/netcode-capture.py" "$repo/captures/real-netcode-cs.pcapng" "$cap" "$copies"
chmod 644 "$cap"
frames=$(capture_frames "$cap")

run data -d udp.port==40000,data --disable-heuristic netcode_udp --disable-heuristic reliable_udp \
    --disable-heuristic netgame_udp --disable-heuristic p2frag_udp
run nokey
run keys -o "netcode.private_key:$key" --disable-heuristic reliable_netcode
run keys+rl -o "netcode.private_key:$key"
run_all

echo "netcode bench: $frames frames ($copies connections), $reps round(s)${pin:+ pinned to CPU $pin}, medians"
report 7 data:data nokey:data keys:data keys+rl:data
