#!/usr/bin/env bash
# bench/netgame.sh: what the netgame dissector and its analysis cost tshark,
# in time and peak memory, on a capture of about a million netgame datagrams
# made by netgame-sim (bench/RESULTS.md).
#
#   bench/netgame.sh -b build            # 3 repetitions, growth runs: ~10 minutes
#   bench/netgame.sh -b build --quick    # 1 repetition, no growth runs
#
# The capture (cached in the work folder): one client/server connection over
# netgame-sim for 17 000 s of virtual time, 1% loss, 25 ms latency, 5 ms
# jitter (about 1 000 000 frames, Good mode at 30 packets/s each way). Its
# first quarter and half (editcap -r) give the growth runs. Configurations,
# all summary mode (`tshark -r FILE > /dev/null`, one pass), run through
# scripts/chunk-tshark with a snapshot of the plugin:
#
#   base    --disable-protocol netgame            the reference
#   data    --disable-protocol netgame -d udp.port==30000,data
#   full    defaults: decoding and the connection analysis
#
# Each run is timed with /usr/bin/time (wall, CPU = user + sys, peak RSS);
# the report gives medians and ratios to base.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$repo/bench/common.sh"
build=${CHUNK_BUILD_DIR:-$repo/build}
work=""
reps=3
growth=1
duration=17000

usage() {
    cat <<EOF
usage: bench/netgame.sh [options]
Measures tshark's time and peak memory with the netgame dissector against
--disable-protocol netgame, on a capture of about a million datagrams.

  -b, --build DIR     build tree with bin/netgame-sim and the plugin (plugin-dir.txt names its folder)
                      (default: \$CHUNK_BUILD_DIR, else $repo/build)
  -w, --work DIR      captures, raw timings and report (default: BUILD/bench-netgame)
  -n, --reps N        repetitions per configuration (default 3)
      --duration SEC  virtual seconds of traffic (default 17000: ~1 000 000 frames)
      --no-growth     skip the 1/4 and 1/2 size runs
      --quick         --reps 1 --no-growth
  -h, --help          this help

Output: WORK/report.md, WORK/raw.tsv. Exit status 0, 1 when a run failed,
2 for bad arguments.
EOF
}

bench_name=bench/netgame.sh

while [ $# -gt 0 ]; do
    case "$1" in
    -b|--build) [ $# -ge 2 ] || die_usage "$1 needs a folder"; build=$2; shift 2 ;;
    -w|--work) [ $# -ge 2 ] || die_usage "$1 needs a folder"; work=$2; shift 2 ;;
    -n|--reps) [ $# -ge 2 ] || die_usage "$1 needs a number"; reps=$2; shift 2 ;;
    --duration) [ $# -ge 2 ] || die_usage "$1 needs seconds"; duration=$2; shift 2 ;;
    --no-growth) growth=0; shift ;;
    --quick) reps=1; growth=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown option $1" ;;
    esac
done
case "$reps" in ''|*[!0-9]*|0) die_usage "--reps wants a positive number" ;; esac
build=$(cd "$build" && pwd) || die_usage "no build folder"
[ -x "$build/bin/netgame-sim" ] || { echo "bench/netgame.sh: no $build/bin/netgame-sim (cmake --build $build --target netgame-sim)" >&2; exit 2; }
plugsub=$(cat "$build/plugin-dir.txt" 2>/dev/null) || { echo "bench/netgame.sh: no $build/plugin-dir.txt (cmake --build $build --target chunk_plugin)" >&2; exit 2; }
[ -f "$build/$plugsub/chunk.so" ] || { echo "bench/netgame.sh: no plugin in $build/$plugsub (cmake --build $build --target chunk_plugin)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/netgame.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
work=${work:-$build/bench-netgame}
mkdir -p "$work"
work=$(cd "$work" && pwd)
chmod 755 "$work"

full=$work/netgame-1M.pcap
if [ ! -s "$full" ]; then
    echo "making the capture ($duration s of virtual time)..." >&2
    "$build/bin/netgame-sim" --duration "$duration" --loss 1% --latency 25ms --jitter 5ms --seed 7 -q -w "$full"
fi
frames=$(capture_frames "$full")
declare -A cap_frames
cap_frames[$full]=$frames
caps=("$full")
if [ "$growth" = 1 ]; then
    for part in 4 2; do
        f=$work/netgame-1M-1of$part.pcap
        cap_frames[$f]=$(capture_cut "$full" "$frames" "$part" "$f")
        caps=("$f" "${caps[@]}")
    done
fi
chmod a+r "$work"/*.pcap

snap=$work/plugin
plugin_snapshot "$build" "$snap"

declare -A cfg
cfg[base]="--disable-protocol netgame"
cfg[data]="--disable-protocol netgame -d udp.port==30000,data"
cfg[full]=""

raw=$work/raw.tsv
printf 'capture\tframes\tconfig\trep\twall_s\tcpu_s\tpeak_kb\n' > "$raw"
failed=0
for cap in "${caps[@]}"; do
    n=${cap_frames[$cap]}
    for c in base data full; do
        [ "$cap" != "$full" ] && [ "$c" = data ] && continue
        for r in $(seq 1 "$reps"); do
            echo "$(basename "$cap") $c rep $r/$reps..." >&2
            # shellcheck disable=SC2086
            if ! out=$( { /usr/bin/time -f '%e %U %S %M' env CHUNK_PLUGIN_DIR="$snap" \
                    "$repo/scripts/chunk-tshark" -r "$cap" ${cfg[$c]} > /dev/null; } 2>&1 ); then
                echo "bench/netgame.sh: run failed: $c on $cap: $out" >&2
                failed=1
                continue
            fi
            read -r wall user sys peak <<< "$(echo "$out" | tail -1)"
            cpu=$(echo "$user + $sys" | bc)
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$cap")" "$n" "$c" "$r" "$wall" "$cpu" "$peak" >> "$raw"
        done
    done
done

python3 - "$raw" "$work/report.md" "$(basename "$full")" <<'EOF'
import csv, statistics, sys
raw, report, fullname = sys.argv[1:4]
rows = list(csv.DictReader(open(raw), delimiter="\t"))
med = {}
for r in rows:
    med.setdefault((r["capture"], r["config"]), {"frames": int(r["frames"]), "wall": [], "cpu": [], "peak": []})
    m = med[(r["capture"], r["config"])]
    m["wall"].append(float(r["wall_s"])); m["cpu"].append(float(r["cpu_s"])); m["peak"].append(int(r["peak_kb"]))
out = ["| capture | frames | config | wall s | CPU s | peak MiB | CPU / base | peak / base |", "|---|---:|---|---:|---:|---:|---:|---:|"]
for (cap, c), m in sorted(med.items(), key=lambda kv: (kv[1]["frames"], ["base", "data", "full"].index(kv[0][1]))):
    b = med[(cap, "base")]
    w, cpu, pk = statistics.median(m["wall"]), statistics.median(m["cpu"]), statistics.median(m["peak"])
    out.append("| %s | %d | %s | %.2f | %.2f | %.1f | %.2fx | %.2fx |" % (
        cap, m["frames"], c, w, cpu, pk / 1024, cpu / statistics.median(b["cpu"]), pk / statistics.median(b["peak"])))
open(report, "w").write("\n".join(out) + "\n")
print("\n".join(out))
EOF
exit $failed
