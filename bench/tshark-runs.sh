# tshark-runs.sh: what bench/netcode.sh and bench/yojimbo.sh share, sourced
# by them once repo and runs_name (the script's name, for messages) are set:
# their common options, their work folder, timed tshark runs of one capture
# in several configurations, and the table of their medians.
#
#   build, reps, pin      the defaults: $CHUNK_BUILD_DIR, else <repo>/build; 3;
#                         no pinning
#   runs_option OPTION [VALUE]
#                         an option both take: -b, --build DIR; -n, --reps N;
#                         --pin CPU (sets build, reps or pin); exits 2 for
#                         another option or a missing value
#   runs_help             the --help text: the script's head comment (from line 2 to
#                         the first line that is not a comment)
#   runs_work [DIR]       checks for /usr/bin/time, then sets work: DIR (made
#                         if missing and kept) or a temporary folder removed on
#                         exit; readable by user nobody (scripts/chunk-tshark)
#   run NAME OPTIONS...   enters configuration NAME: scripts/chunk-tshark -r
#                         $cap --disable-protocol chunk OPTIONS > /dev/null (chunk
#                         holds UDP port 40000)
#   run_all               one untimed warm-up run of each configuration, then
#                         reps rounds of one run each under /usr/bin/time, the
#                         configurations in entered order in odd rounds and in
#                         reverse in even ones (A B B A A B ...), each run
#                         pinned to CPU $pin with taskset when --pin is given:
#                         a line "NAME ROUND CPU-seconds peak-KiB user sys
#                         load" each in $work/raw
#   report WIDTH NAME:REF...
#                         the table: per configuration NAME the medians of CPU
#                         (user + sys) and peak RSS, and their ratios to REF's;
#                         then per NAME the ratio of its CPU to REF's within
#                         each round, as median (min-max) over the rounds
#
# Why rounds and not all runs of one configuration after another: on a
# shared machine the CPU time of the same run moves by +-20% with what else
# runs (bench/RESULTS.md, "Why CPU time runs above the instruction count"),
# so a configuration's runs taken together in a quiet or a busy minute bias
# its median; a ratio within a round compares runs a few seconds apart.

. "$repo/bench/common.sh"

build=${CHUNK_BUILD_DIR:-$repo/build}
reps=3
pin=
run_names=()
run_opts=()

# runs_need OPTION ARGC WHAT: exits 2 with "OPTION needs WHAT" unless the
# option (ARGC: the words left, the option's included) has a value.
runs_need() {
    [ "$2" -ge 2 ] || { echo "$runs_name: $1 needs $3" >&2; exit 2; }
}

runs_option() {
    case $1 in
    -b | --build) runs_need "$1" $# "a folder"; build=$2 ;;
    -n | --reps) runs_need "$1" $# "a number"; reps=$2 ;;
    --pin)
        runs_need "$1" $# "a CPU number"
        command -v taskset >/dev/null || { echo "$runs_name: --pin needs taskset (util-linux)" >&2; exit 2; }
        pin=$2 ;;
    *) echo "$runs_name: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
}

runs_help() {
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
}

runs_work() {
    [ -x /usr/bin/time ] || { echo "$runs_name: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
    if [ -n "${1:-}" ]; then
        mkdir -p "$1"
        work=$(cd "$1" && pwd)
    else
        work=$(mktemp -d)
        trap 'rm -rf "$work"' EXIT
    fi
    chmod 755 "$work"
    : > "$work/raw"
}

run() {
    local name=$1
    shift
    run_names+=("$name")
    run_opts+=("$(printf '%q ' "$@")")
}

# run_one I ROUND: one timed run of configuration I (ROUND 0: warm-up, not kept).
run_one() {
    local i=$1 round=$2 load
    local -a opts pinning=()
    eval "opts=(${run_opts[$i]})"
    [ -n "$pin" ] && pinning=(taskset -c "$pin")
    load=$(cut -d' ' -f1 /proc/loadavg)
    CHUNK_BUILD_DIR=$build /usr/bin/time -f "%U %S %M" -o "$work/t" "${pinning[@]}" \
        "$repo/scripts/chunk-tshark" -r "$cap" --disable-protocol chunk "${opts[@]}" > /dev/null
    [ "$round" = 0 ] && return
    awk -v n="${run_names[$i]}" -v r="$round" -v l="$load" \
        '{printf "%s %d %.3f %d %.2f %.2f %s\n", n, r, $1 + $2, $3, $1, $2, l}' "$work/t" >> "$work/raw"
}

run_all() {
    local n=${#run_names[@]} i round
    for ((i = 0; i < n; i++)); do run_one "$i" 0; done
    for ((round = 1; round <= reps; round++)); do
        if ((round % 2)); then
            for ((i = 0; i < n; i++)); do run_one "$i" "$round"; done
        else
            for ((i = n - 1; i >= 0; i--)); do run_one "$i" "$round"; done
        fi
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
        d=$(median "$ref" 3); dm=$(median "$ref" 4)
        t=$(median "$c" 3); m=$(median "$c" 4)
        printf "%-${width}s %9.3f %7.2f %10d %7.2f\n" "$c" "$t" "$(echo "$t $d" | awk '{print $1/$2}')" "$m" \
            "$(echo "$m $dm" | awk '{print $1/$2}')"
    done
    echo "CPU ratio within a round (median, min-max over $reps rounds${pin:+, pinned to CPU $pin};" \
         "load $(awk '{print $7}' "$work/raw" | sort -n | sed -n '1p;$p' | paste -sd- -)):"
    for c in "$@"; do
        ref=${c#*:}
        c=${c%%:*}
        [ "$c" = "$ref" ] && continue
        awk -v c="$c" -v r="$ref" '$1 == c {t[$2] = $3} $1 == r {u[$2] = $3}
            END {for (k in t) if (k in u && u[k] > 0) print t[k] / u[k]}' "$work/raw" | sort -n |
            awk -v c="$c" -v r="$ref" -v w="$width" '{a[NR] = $1}
                END {if (NR) printf "  %-*s / %-*s %.3f (%.3f-%.3f)\n", w, c, w, r,
                     NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2, a[1], a[NR]}'
    done
}
