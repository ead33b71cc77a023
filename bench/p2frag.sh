#!/usr/bin/env bash
# bench/p2frag.sh: what the p2frag dissector costs tshark, in time and peak
# memory, on the fragment capture of bench/p2frag-capture.sh (bench/RESULTS.md),
# and how its memory grows with the capture.
#
#   bench/p2frag.sh [--build DIR] [--capture FILE] [--reps N] [--no-growth]
#
# Summary mode (tshark -r FILE > /dev/null, one pass) through
# scripts/chunk-tshark with the plugin of --build, in these configurations:
#
#   full     defaults: reassembly and analysis on
#   off      --disable-protocol p2frag (the datagrams still pass protocol2's
#            dispatch and CRC, and end as data)
#   data     --disable-heuristic p2frag_udp --disable-heuristic chunk_udp
#            -d udp.port==40000,data: the datagrams as plain data
#   noreasm  -o p2frag.reassemble:FALSE: the analysis without Wireshark's
#            reassembly (where the memory goes)
#
# on the capture and on its first 1/4 and 1/2 (editcap -r, cached beside
# it). The whole capture gets --reps runs per configuration (median), the
# cuts one each. Each run: /usr/bin/time wall s, user+sys CPU s, peak RSS.
# Output: WORK/p2frag-raw.tsv (every run) and a median table on stdout,
# with the load average before and after. Exit 0; 1 a run failed; 2 usage.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$repo/bench/common.sh"
build=${CHUNK_BUILD_DIR:-$repo/build}
cap=$repo/bench/work/p2frag-500k.pcap
reps=3
growth=1
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --capture) cap=${2:?--capture needs a file}; shift 2 ;;
    --reps) reps=${2:?--reps needs a count}; shift 2 ;;
    --no-growth) growth=0; shift ;;
    -h|--help) sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "p2frag.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
[ -f "$cap" ] || { echo "p2frag.sh: no capture $cap (bench/p2frag-capture.sh makes it)" >&2; exit 2; }
[ -f "$build/plugin-dir.txt" ] || { echo "p2frag.sh: no plugin in $build (build first)" >&2; exit 2; }
case "$reps" in ''|*[!0-9]*|0) echo "p2frag.sh: --reps needs a positive count" >&2; exit 2 ;; esac
work=$(dirname "$cap")
raw=$work/p2frag-raw.tsv
export CHUNK_BUILD_DIR=$build LC_ALL=C
frames=$(capture_frames "$cap")
sizes=("all:$cap:$reps")
if [ "$growth" = 1 ]; then
    for k in 4 2; do
        cut=${cap%.pcap}-1of$k.pcap
        capture_cut "$cap" "$frames" "$k" "$cut" > /dev/null
        sizes=("1/$k:$cut:1" "${sizes[@]}")
    done
fi
opts_of() {
    case $1 in
    full) echo "" ;;
    off) echo "--disable-protocol p2frag" ;;
    data) echo "--disable-heuristic p2frag_udp --disable-heuristic chunk_udp -d udp.port==40000,data" ;;
    noreasm) echo "-o p2frag.reassemble:FALSE" ;;
    esac
}
echo "p2frag.sh: $cap ($frames frames), plugin of $build; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'size\tconfig\trep\twall_s\tcpu_s\tpeak_kb\tload1\n' > "$raw"
status=0
for s in "${sizes[@]}"; do
    IFS=: read -r size file n <<<"$s"
    for rep in $(seq 1 "$n"); do
        for cfg in full off data noreasm; do
            tf=$(mktemp)
            # shellcheck disable=SC2046
            if ! /usr/bin/time -f "%e %U %S %M" -o "$tf" "$repo/scripts/chunk-tshark" -r "$file" $(opts_of $cfg) > /dev/null; then
                echo "p2frag.sh: tshark failed ($size $cfg)" >&2; status=1
            fi
            read -r e u sy m < <(tail -1 "$tf"); rm -f "$tf"
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$cfg" "$rep" "$e" "$(awk -v u="$u" -v s="$sy" 'BEGIN { print u + s }')" "$m" \
                "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$raw"
        done
    done
done
echo "p2frag.sh: done; load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$raw" <<'PY'
import sys, statistics, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
g = collections.defaultdict(list)
for size, cfg, rep, wall, cpu, kb, load in rows:
    g[(size, cfg)].append((float(wall), float(cpu), int(kb)))
print("| size | config | runs | wall s | CPU s | peak MiB | CPU / off | CPU / data | MiB / off | MiB / data |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
def med(v, i): return statistics.median(x[i] for x in v)
for size in sorted({k[0] for k in g}, key=lambda s: {"1/4": 0, "1/2": 1, "all": 2}.get(s, 3)):
    for cfg in ("full", "off", "data", "noreasm"):
        v = g.get((size, cfg))
        if not v: continue
        o, d = g[(size, "off")], g[(size, "data")]
        print("| %s | %s | %d | %.1f | %.2f | %.0f | %.2f | %.2f | %.2f | %.2f |" % (
            size, cfg, len(v), med(v, 0), med(v, 1), med(v, 2) / 1024, med(v, 1) / med(o, 1),
            med(v, 1) / med(d, 1), med(v, 2) / med(o, 2), med(v, 2) / med(d, 2)))
PY
exit $status
