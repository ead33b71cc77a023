#!/usr/bin/env bash
# demo.sh: the main job. Installs what is missing, builds, then decodes a
# shipped capture with tshark and the chunk plugin and shows the analysis:
# the packet list, the problems the analysis flags, and the transfers table
# with its diagnosis.
#   scripts/demo.sh [CAPTURE]     (default: captures/fault-drop-slice.pcap)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
capture=${1:-captures/fault-drop-slice.pcap}
if [ ! -r "$capture" ]; then
    echo "demo.sh: cannot read $capture" >&2
    exit 2
fi
bash scripts/deps.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build -j"$(nproc)"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "demo.sh: build failed" >&2
    exit 1
fi
export CHUNK_BUILD_DIR=$PWD/build

echo "== $capture: every packet, decoded (tshark + chunk plugin)"
scripts/chunk-tshark -r "$capture"
echo
echo "== What the analysis flags, frame by frame (tshark -2 -Y chunk.analysis.flags)"
# Two passes, so the end-of-capture diagnosis shows on the last packet too.
# Each expert info's detail (chunk.expert.detail: its summary is one fixed
# text per kind), then the diagnosis where the transfer ends.
scripts/chunk-tshark -2 -r "$capture" -Y chunk.analysis.flags -T fields \
    -e frame.number -e chunk.expert.detail -e chunk.analysis.diagnosis -E occurrence=a -E aggregator='|' |
    awk -F '\t' '{ line = "frame " $1; sep = "\t"
                   for (i = 2; i <= NF; i++) if ($i != "") { line = line sep $i; sep = "|" }
                   print line }' |
    sed 's/|/\n          /g'
echo
echo "== Transfers (tshark -z chunk,transfers)"
scripts/chunk-tshark -r "$capture" -q -z chunk,transfers
