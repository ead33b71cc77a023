# tshark-runs.sh: what bench/netcode.sh and bench/yojimbo.sh share, sourced
# by them once repo and runs_name (the script's name, for messages) are set:
# their common options, their work folder, timed tshark runs of one capture
# in several configurations, and the table of their medians.
#
#   build, reps           the defaults: $CHUNK_BUILD_DIR, else <repo>/build; 3
#   runs_option OPTION [VALUE]
#                         an option both take: -b, --build DIR; -n, --reps N
#                         (sets build or reps); exits 2 for another option or
#                         a missing value
#   runs_help             the --help text: the script's head comment (from line 2 to
#                         the first line that is not a comment)
#   runs_work [DIR]       checks for /usr/bin/time, then sets work: DIR (made
#                         if missing and kept) or a temporary folder removed on
#                         exit; readable by user nobody (scripts/chunk-tshark)
#   run NAME OPTIONS...   reps runs of scripts/chunk-tshark -r $cap
#                         --disable-protocol chunk OPTIONS > /dev/null (chunk
#                         holds UDP port 40000) under /usr/bin/time: a line
#                         "NAME CPU-seconds peak-KiB" each in $work/raw
#   report WIDTH NAME:REF...
#                         the table: per configuration NAME the medians of CPU
#                         (user + sys) and peak RSS, and their ratios to REF's

. "$repo/bench/common.sh"

build=${CHUNK_BUILD_DIR:-$repo/build}
reps=3

# runs_need OPTION ARGC WHAT: exits 2 with "OPTION needs WHAT" unless the
# option (ARGC: the words left, the option's included) has a value.
runs_need() {
    [ "$2" -ge 2 ] || { echo "$runs_name: $1 needs $3" >&2; exit 2; }
}

runs_option() {
    case $1 in
    -b | --build) runs_need "$1" $# "a folder"; build=$2 ;;
    -n | --reps) runs_need "$1" $# "a number"; reps=$2 ;;
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
