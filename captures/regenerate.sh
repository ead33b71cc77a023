#!/usr/bin/env bash
# regenerate.sh: remakes the committed captures (NAME.pcap and NAME.truth.json)
# from captures.txt with chunk-sim (or the program a line names, p2frag-sim).
#
#   captures/regenerate.sh [--bin DIR] [--out DIR] [NAME ...]
#
# --bin DIR  folder holding chunk-sim and p2frag-sim (default: <repo>/build-sim/bin,
#            then <repo>/build/bin)
# --out DIR  where to write (default: this folder)
# NAME ...   only these captures (default: all)
#
# Exit status: 0 all written; 1 the simulator failed on one; 2 bad arguments.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
bin=""
out=$here
names=()
while [ $# -gt 0 ]; do
    case "$1" in
    --bin) bin=${2:?--bin needs a folder}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "regenerate.sh: unknown option $1" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
    esac
done
if [ -z "$bin" ]; then
    for candidate in "$repo/build-sim/bin" "$repo/build/bin"; do
        if [ -x "$candidate/chunk-sim" ]; then bin=$candidate; break; fi
    done
fi
if [ -z "$bin" ] || [ ! -x "$bin/chunk-sim" ]; then
    echo "regenerate.sh: chunk-sim not found; build first or pass --bin DIR" >&2
    exit 2
fi
mkdir -p "$out"

# The names asked for, looked up in the shell (a grep per line of
# captures.txt cost more than making the capture: ctest runs this once a
# capture).
declare -A asked=()
for n in "${names[@]}"; do asked[$n]=1; done
found=0
while read -r name options; do
    case "$name" in ''|'#'*) continue ;; esac
    if [ ${#names[@]} -gt 0 ] && [ -z "${asked[$name]:-}" ]; then continue; fi
    found=$((found + 1))
    # Options are plain words (no quoting) by construction of captures.txt;
    # a first word ending in -sim names the program.
    program=chunk-sim
    case "$options" in *-sim\ *) program=${options%% *}; options=${options#* } ;; esac
    if [ ! -x "$bin/$program" ]; then
        echo "regenerate.sh: $program not found in $bin (capture $name)" >&2
        exit 2
    fi
    # A simulator whose protocol has the flag keys (dissector/protocols.txt)
    # also writes the key log (NAME.keys).
    extra=()
    flags=$(awk -v sim="$program" '!/^#/ && NF == 7 && $3 == sim { print $6; exit }' "$repo/dissector/protocols.txt")
    case ",$flags," in *,keys,*) extra=(--keys "$out/$name.keys") ;; esac
    # shellcheck disable=SC2086
    if ! "$bin/$program" $options -w "$out/$name.pcap" --truth "$out/$name.truth.json" "${extra[@]}" -q; then
        echo "regenerate.sh: $program failed for $name" >&2
        exit 1
    fi
done < "$here/captures.txt"
if [ ${#names[@]} -gt 0 ] && [ "$found" -ne ${#names[@]} ]; then
    echo "regenerate.sh: unknown capture name among: ${names[*]}" >&2
    exit 2
fi
