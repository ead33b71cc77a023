#!/usr/bin/env bash
# bench/dissector-instructions.sh: instructions per packet that tshark spends,
# with the chunk plugin and without, counted by valgrind's callgrind.
#
#   bench/dissector-instructions.sh -b build-bench
#
# Wall and CPU time swing by tens of percent when other work shares the
# machine; an instruction count does not. Each configuration of
# bench/dissector.sh (base, data, decode, noreasm, full; see there) reads the
# first N frames of the benchmark capture and then only its first frame;
# the difference divided by N-1 is the cost per packet without tshark's
# start-up. Needs the work folder of a bench/dissector.sh run (big.pcap and
# the plugin snapshots) and valgrind.
#
#   bench/dissector-instructions.sh --p2frag -b build
#
# counts the fragment protocol instead, on bench/p2frag-capture.sh's capture
# (bench/work/p2frag-500k.pcap) with a snapshot of the build's plugin, in
# bench/p2frag.sh's configurations (base is --disable-protocol p2frag).
#
#   bench/dissector-instructions.sh --netgame -w WORK -b build
#
# counts the netgame dissector on WORK/netgame.pcap (e.g. bench/netgame-capture.sh's,
# or its first frames) with a snapshot of the build's plugin: base is
# --disable-protocol netgame, data its port decoded as data, full the defaults.
# --configs "base full" counts only those configurations.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$repo/bench/common.sh"

usage() {
    cat <<EOF
usage: bench/dissector-instructions.sh [options]
  -b, --build DIR    build tree (default: \$CHUNK_BUILD_DIR, else $repo/build)
  -w, --work DIR     bench/dissector.sh's work folder (default BUILD/bench-dissector)
  -n, --frames N     frames to count over (default 50000)
      --p2frag       the p2frag dissector on bench/work/p2frag-500k.pcap (see the script's head)
      --netgame      the netgame dissector on WORK/netgame.pcap (see the script's head)
  -c, --configs L    only these configurations (space-separated, base among them)
  -h, --help         this help
Prints a Markdown table. Exit status 0, 1 when a run failed, 2 for bad arguments.
EOF
}
bench_name=dissector-instructions.sh

build=${CHUNK_BUILD_DIR:-$repo/build}
work=""
frames=50000
p2frag=0
netgame=0
only=""
while [ $# -gt 0 ]; do
    case "$1" in
    -b | --build) [ $# -ge 2 ] || die_usage "$1 needs a folder"; build=$2; shift ;;
    -w | --work) [ $# -ge 2 ] || die_usage "$1 needs a folder"; work=$2; shift ;;
    -n | --frames) [ $# -ge 2 ] || die_usage "$1 needs a number"; frames=$2; shift ;;
    --p2frag) p2frag=1 ;;
    --netgame) netgame=1 ;;
    -c | --configs) [ $# -ge 2 ] || die_usage "$1 needs a list"; only=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
    esac
    shift
done
[[ "$frames" =~ ^[1-9][0-9]*$ ]] && [ "$frames" -ge 2 ] || die_usage "--frames needs a number >= 2"
if [ "$netgame" = 1 ]; then
    [ -n "$work" ] || die_usage "--netgame needs -w WORK (holding netgame.pcap)"
    capture=$work/netgame.pcap
    [ -f "$capture" ] || die_usage "no $capture"
    [ -f "$build/plugin-dir.txt" ] || die_usage "no plugin in $build (build first)"
    plugin_snapshot "$build" "$work/plugins-netgame"
elif [ "$p2frag" = 1 ]; then
    work=${work:-$repo/bench/work}
    capture=$work/p2frag-500k.pcap
    [ -f "$capture" ] || die_usage "no $capture: run bench/p2frag-capture.sh first"
    [ -f "$build/plugin-dir.txt" ] || die_usage "no plugin in $build (build first)"
    # A snapshot, so that a rebuild during the count cannot mix two plugins.
    plugin_snapshot "$build" "$work/plugins-p2frag"
else
    work=${work:-$build/bench-dissector}
    capture=$work/big.pcap
    [ -f "$capture" ] && [ -d "$work/plugins" ] ||
        die_usage "no big.pcap and plugins in $work: run bench/dissector.sh first"
fi
# Absolute: the valgrind wrapper below names its output file by this path.
work=$(cd "$work" && pwd)
command -v valgrind >/dev/null || die_usage "valgrind not found (apt-get install valgrind)"

cg=$work/callgrind
mkdir -p "$cg"
chmod 777 "$cg"   # tshark runs as nobody under chunk-tshark when we are root
editcap -r "$capture" "$cg/n.pcap" "1-$frames"
editcap -r "$capture" "$cg/one.pcap" 1
chmod a+r "$cg"/*.pcap
cat > "$cg/tshark" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file=$cg/out.\$\$ /usr/bin/tshark "\$@"
EOF
chmod 755 "$cg/tshark"

declare -A args plugins
args[base]="--disable-protocol chunk"
args[data]="--disable-heuristic chunk_udp -d udp.port==40000,data"
args[decode]=""
args[noreasm]="-o chunk.reassemble:FALSE"
args[full]=""
if [ -d "$work/plugins-decode" ]; then
    plugins[decode]=$work/plugins-decode
else
    args[decode]="-o chunk.analyze:FALSE"
fi
configs=(base data decode noreasm full)
default_plugins=$work/plugins
if [ "$p2frag" = 1 ]; then
    args[base]="--disable-protocol p2frag"
    args[data]="--disable-heuristic p2frag_udp --disable-heuristic chunk_udp -d udp.port==40000,data"
    args[noreasm]="-o p2frag.reassemble:FALSE"
    configs=(base data noreasm full)
    default_plugins=$work/plugins-p2frag
elif [ "$netgame" = 1 ]; then
    args[base]="--disable-protocol netgame"
    args[data]="--disable-heuristic netgame_udp -d udp.port==30000,data"
    configs=(base data full)
    default_plugins=$work/plugins-netgame
fi
if [ -n "$only" ]; then
    read -r -a configs <<< "$only"
    for c in "${configs[@]}"; do
        [ -n "${args[$c]+x}" ] || die_usage "unknown configuration '$c'"
    done
    [[ " $only " == *" base "* ]] || die_usage "--configs needs base among them"
fi

# count FILE CONFIG: total instructions of one tshark run.
count() {
    local f=$1 c=$2 out
    rm -f "$cg"/out.*
    # shellcheck disable=SC2086  # args are several words
    CHUNK_PLUGIN_DIR=${plugins[$c]:-$default_plugins} TSHARK=$cg/tshark \
        "$repo/scripts/chunk-tshark" -r "$f" ${args[$c]} > /dev/null 2> "$cg/stderr" ||
        { cat "$cg/stderr" >&2; exit 1; }
    out=$(ls "$cg"/out.* | head -n 1)
    awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

declare -A per nn oo
for c in "${configs[@]}"; do
    nn[$c]=$(count "$cg/n.pcap" "$c")
    oo[$c]=$(count "$cg/one.pcap" "$c")
    per[$c]=$(( (nn[$c] - oo[$c]) / (frames - 1) ))
    echo "  $c: ${nn[$c]} - ${oo[$c]} instructions" >&2
done
echo "| configuration | instructions, $frames frames | one frame | per packet | × base | × data |"
echo "|---|---:|---:|---:|---:|---:|"
for c in "${configs[@]}"; do
    awk -v c="$c" -v a="${nn[$c]}" -v o="${oo[$c]}" -v n="${per[$c]}" -v b="${per[base]}" -v d="${per[data]:-${per[base]}}" \
        'BEGIN { printf "| %s | %.0f | %.0f | %.0f | %.2f | %.2f |\n", c, a, o, n, n / b, n / d }'
done
