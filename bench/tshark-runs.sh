# tshark-runs.sh: what bench/netcode.sh and bench/yojimbo.sh share, sourced
# by them once build, reps, cap and work are set: timed tshark runs of one
# capture in several configurations, and the table of their medians.
#
#   run NAME OPTIONS...   reps runs of scripts/chunk-tshark -r $cap
#                         --disable-protocol chunk OPTIONS > /dev/null (chunk
#                         holds UDP port 40000) under /usr/bin/time: a line
#                         "NAME CPU-seconds peak-KiB" each in $work/raw
#   report WIDTH NAME:REF...
#                         the table: per configuration NAME the medians of CPU
#                         (user + sys) and peak RSS, and their ratios to REF's

: > "$work/raw"

run() {
    local name=$1 _
    shift
    for _ in $(seq "$reps"); do
        CHUNK_BUILD_DIR=$build /usr/bin/time -f "%U %S %M" -o "$work/t" \
            "$repo/scripts/chunk-tshark" -r "$cap" --disable-protocol chunk "$@" > /dev/null
        awk -v n="$name" '{printf "%s %.3f %d\n", n, $1 + $2, $3}' "$work/t" >> "$work/raw"
    done
}

median() { grep "^$1 " "$work/raw" | awk '{print $'"$2"'}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

report() {
    local width=$1 c ref t m d dm
    shift
    printf "%-${width}s %9s %7s %10s %7s\n" config "CPU s" "x data" "peak KiB" "x data"
    for c in "$@"; do
        ref=${c#*:}
        c=${c%%:*}
        d=$(median "$ref" 2); dm=$(median "$ref" 3)
        t=$(median "$c" 2); m=$(median "$c" 3)
        printf "%-${width}s %9.3f %7.2f %10d %7.2f\n" "$c" "$t" "$(echo "$t $d" | awk '{print $1/$2}')" "$m" \
            "$(echo "$m $dm" | awk '{print $1/$2}')"
    done
}
