#!/usr/bin/env bash
# bench/dissector.sh: what the chunk dissector costs tshark, in time and peak
# memory, on a large chunk-sim capture, against the same tshark run with
# --disable-protocol chunk.
#
#   bench/dissector.sh -b build-bench            # full run, about 25 minutes
#   bench/dissector.sh -b build-bench --quick    # 1 repetition, no -V, no growth
#
# It makes (once, cached in the work folder) a duplex capture of about 509 000
# frames with chunk-sim, cuts its first quarter and half with editcap, and
# runs tshark through scripts/chunk-tshark with a snapshot of the plugin (so
# a rebuild during the run cannot mix two versions), in these configurations:
#
#   base       --disable-protocol chunk                       the reference
#   data       --disable-heuristic chunk_udp -d udp.port==40000,data
#              the same datagrams decoded as plain data: tshark's own cost
#              (the reference of bench/RESULTS.md; with the chunk protocol disabled, UDP
#              tries every heuristic dissector on each datagram, which makes
#              base slower than data and the plugin look cheaper than it is)
#   decode     the decoder alone: -o chunk.analyze:FALSE if the plugin has
#              that preference, else a second chunk.so built here from
#              dissector/ with bench/decode-only.c in place of the analysis
#   noreasm    -o chunk.reassemble:FALSE analysis without reassembly
#   full       defaults: analysis and reassembly
#
# Summary mode is `tshark -r FILE > /dev/null`, -V mode `tshark -r FILE -V >
# /dev/null`, both one pass. Each run is timed with /usr/bin/time: wall
# time, CPU time (user + sys: steadier than wall time when other work shares
# the machine) and peak RSS. The report gives medians and ratios to base and data.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$repo/bench/common.sh"

usage() {
    cat <<EOF
usage: bench/dissector.sh [options]
Measures tshark's time and peak memory with the chunk plugin against
--disable-protocol chunk, on a large capture made by chunk-sim.

  -b, --build DIR     build tree with bin/chunk-sim and the plugin (plugin-dir.txt)
                      (default: \$CHUNK_BUILD_DIR, else $repo/build)
  -w, --work DIR      where the captures, raw timings and report go
                      (default: BUILD/bench-dissector; captures are reused)
  -n, --reps N        repetitions in summary mode (default 5)
      --v-reps N      repetitions with -V (default 3)
      --chunks N      chunks per direction for the capture (default 3300:
                      about 509 000 frames, 512 MB)
      --no-verbose    skip the -V runs
      --no-growth     skip the 1/4 and 1/2 size runs
      --quick         --reps 1 --no-verbose --no-growth
  -h, --help          this help

Output: WORK/report.md (tables), WORK/raw.tsv (every run). Exit status 0,
1 when a run failed, 2 for bad arguments.
EOF
}

bench_name=bench/dissector.sh

build=${CHUNK_BUILD_DIR:-$repo/build}
work=""
reps=5
vreps=3
chunks=3300
verbose=1
growth=1
while [ $# -gt 0 ]; do
    case "$1" in
    -b | --build) [ $# -ge 2 ] || die_usage "$1 needs a folder"; build=$2; shift ;;
    -w | --work) [ $# -ge 2 ] || die_usage "$1 needs a folder"; work=$2; shift ;;
    -n | --reps) [ $# -ge 2 ] || die_usage "$1 needs a number"; reps=$2; shift ;;
    --v-reps) [ $# -ge 2 ] || die_usage "$1 needs a number"; vreps=$2; shift ;;
    --chunks) [ $# -ge 2 ] || die_usage "$1 needs a number"; chunks=$2; shift ;;
    --no-verbose) verbose=0 ;;
    --no-growth) growth=0 ;;
    --quick) reps=1; verbose=0; growth=0 ;;
    -h | --help) usage; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
    esac
    shift
done
for n in "$reps" "$vreps" "$chunks"; do
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || die_usage "'$n' is not a positive number"
done
build=$(cd "$build" 2>/dev/null && pwd) || die_usage "no build folder $build"
sim=$build/bin/chunk-sim
[ -x "$sim" ] || die_usage "no $sim: build first (cmake --build $build)"
# plugin-dir.txt (cmake): plugins/<major.minor>/epan, the Wireshark built against.
plugsub=$(cat "$build/plugin-dir.txt" 2>/dev/null) || die_usage "no $build/plugin-dir.txt: build first"
[ -f "$build/$plugsub/chunk.so" ] || die_usage "no plugin in $build/$plugsub: build first"
wsver=$(basename "$(dirname "$plugsub")")
for tool in editcap capinfos python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || die_usage "$tool not found (apt-get install tshark time python3)"
done
work=${work:-$build/bench-dissector}
mkdir -p "$work"
work=$(cd "$work" && pwd)

# tshark runs as user nobody when we are root (see scripts/chunk-tshark):
# it must be able to read the captures in place, or chunk-tshark would copy
# 500 MB before every run and the copy would be timed.
chmod a+rx "$work"
d=$work
while [ "$d" != / ]; do
    if [ "$(id -u)" = 0 ] && ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$d"; then
        echo "bench/dissector.sh: user nobody cannot enter $d; choose another --work" >&2
        exit 2
    fi
    d=$(dirname "$d")
done

# ---- The capture -------------------------------------------------------
# Duplex, because chunk-sim sends at most 256 MiB per direction; 5% loss so
# the analysis sees resends, duplicate and regressed acks, as in real use.
simopts=(--duplex --chunks "$chunks" --chunk-size 64K --loss 5% --latency 25ms
         --seed 11 --time-limit 1000000)
big=$work/big.pcap
stamp="${simopts[*]} $(sha256sum "$sim" | cut -c1-16)"
if [ ! -f "$big" ] || [ "$(cat "$work/big.options" 2>/dev/null)" != "$stamp" ]; then
    echo "making $big: chunk-sim ${simopts[*]}" >&2
    rm -f "$big" "$work/big.options"
    "$sim" "${simopts[@]}" -w "$big" -q
    echo "$stamp" > "$work/big.options"
fi
frames=$(capture_frames "$big")
declare -A size_file size_frames
size_file[full]=$big
size_frames[full]=$frames
if [ $growth = 1 ]; then
    for part in quarter:4 half:2; do
        name=${part%%:*}
        size_file[$name]=$work/$name.pcap
        size_frames[$name]=$(capture_cut "$big" "$frames" "${part##*:}" "${size_file[$name]}")
    done
fi
chmod a+r "$work"/*.pcap

# ---- The plugin snapshot ---------------------------------------------------
plugins=$work/plugins
plugin_snapshot "$build" "$plugins"
export CHUNK_PLUGIN_DIR=$plugins
export WIRESHARK_ABORT_ON_DISSECTOR_BUG=1
tshark_cmd=("$repo/scripts/chunk-tshark")

declare -A config_args config_plugins
config_args[base]="--disable-protocol chunk"
config_args[data]="--disable-heuristic chunk_udp -d udp.port==40000,data"
config_args[noreasm]="-o chunk.reassemble:FALSE"
config_args[full]=""
if "${tshark_cmd[@]}" -G defaultprefs 2>/dev/null | grep -q '^#chunk\.analyze:'; then
    config_args[decode]="-o chunk.analyze:FALSE"
else
    # No preference switches the analysis off: build the decoder alone, with
    # bench/decode-only.c in place of chunk/analysis.c and chunk/stats.c, as the build tree
    # builds it (-O2 -g, the RelWithDebInfo default).
    echo "no chunk.analyze preference: decode-only plugin built from dissector/ and bench/decode-only.c" >&2
    rm -rf "$work/plugins-decode"
    mkdir -p "$work/plugins-decode/$wsver/epan"
    # shellcheck disable=SC2046  # pkg-config prints several flags
    gcc -std=c11 -O2 -g -DNDEBUG -Wall -Wextra -fPIC -shared -fvisibility=hidden -DWS_BUILD_DLL \
        -DCHUNK_PLUGIN_VERSION='"bench-decode-only"' -I"$repo/dissector" -I"$repo/dissector/netcode" -I"$build/dissector" $(pkg-config --cflags wireshark) \
        $(ls "$repo"/dissector/*.c "$repo"/dissector/*/*.c | grep -v '/chunk/analysis\.c$\|/chunk/stats\.c$') \
        "$repo/bench/decode-only.c" \
        -o "$work/plugins-decode/$wsver/epan/chunk.so" $(pkg-config --libs wireshark) -lgcrypt -lz -lm -Wl,--no-undefined
    chmod -R a+rX "$work/plugins-decode"
    config_plugins[decode]=$work/plugins-decode
    config_args[decode]=""
fi
configs=(base data decode noreasm full)

# Warm the page cache so the first run does not pay for the disk.
cat "${size_file[@]}" > /dev/null

raw=$work/raw.tsv
printf 'mode\tsize\tframes\tconfig\trep\twall_s\tuser_s\tsys_s\tmaxrss_kb\tload1\n' > "$raw"
failed=0

# run MODE SIZE CONFIG REP: one timed tshark run, appended to raw.tsv.
run() {
    local mode=$1 size=$2 config=$3 rep=$4 tf rc=0
    local -a extra=()
    [ "$mode" = verbose ] && extra=(-V)
    tf=$(mktemp)
    export CHUNK_PLUGIN_DIR=${config_plugins[$config]:-$plugins}
    # shellcheck disable=SC2086  # config_args are several words
    /usr/bin/time -f '%e %U %S %M' -o "$tf" \
        "${tshark_cmd[@]}" -r "${size_file[$size]}" "${extra[@]}" ${config_args[$config]} \
        > /dev/null 2> "$work/stderr.last" || rc=$?
    if [ $rc != 0 ] || grep -qv '^Running as user' "$work/stderr.last"; then
        echo "run failed ($mode $size $config, exit $rc):" >&2
        cat "$work/stderr.last" >&2
        failed=1
    fi
    read -r wall user sys rss < <(tail -n 1 "$tf")
    rm -f "$tf"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$size" "${size_frames[$size]}" \
        "$config" "$rep" "$wall" "$user" "$sys" "$rss" "$(cut -d' ' -f1 /proc/loadavg)" >> "$raw"
    awk -v m="$mode" -v s="$size" -v c="$config" -v r="$rep" -v w="$wall" -v u="$user" \
        -v y="$sys" -v k="$rss" 'BEGIN { printf "  %-7s %-7s %-8s rep %s: %7.2f s wall %7.2f s cpu %8d KB\n", m, s, c, r, w, u + y, k }' >&2
}

# Configurations alternate within each repetition, so a burst of other work
# on the machine spreads over all of them instead of one.
echo "summary mode, ${size_frames[full]} frames, $reps repetitions" >&2
for rep in $(seq "$reps"); do
    for c in "${configs[@]}"; do run summary full "$c" "$rep"; done
done
if [ $growth = 1 ]; then
    echo "memory growth: 1/4 and 1/2 of the capture" >&2
    for rep in $(seq "$reps"); do
        for size in quarter half; do
            for c in base noreasm full; do run summary "$size" "$c" "$rep"; done
        done
    done
fi
if [ $verbose = 1 ]; then
    echo "-V mode, $vreps repetitions" >&2
    vconfigs=(base full)
    for rep in $(seq "$vreps"); do
        for c in "${vconfigs[@]}"; do run verbose full "$c" "$rep"; done
    done
fi

python3 "$repo/bench/dissector-report.py" "$raw" "$(tshark --version 2>/dev/null | head -n 1)" \
    "chunk-sim ${simopts[*]}" > "$work/report.md"
cat "$work/report.md"
exit $failed
