# sim-cli-common.sh: the part that test-chunk-sim.sh, test-frag-sim.sh and
# test-netgame-sim.sh share, sourced by them after they set
#   prog=<program name, e.g. chunk-sim>  usage_arg=<e.g. CHUNK_SIM>
# with the script's own arguments: checks them (SIM WORK_DIR; exit 2
# otherwise), sets sim, work and failures, and defines expect, contains,
# check_common_usage, check_determinism and finish.

[ $# -eq 2 ] || { echo "usage: test-$prog.sh $usage_arg WORK_DIR" >&2; exit 2; }
sim=$1
work=$2
mkdir -p "$work"
failures=0

# expect CODE DESCRIPTION -- ARGS...: runs the program, checks its exit code.
expect() {
    local want=$1 what=$2
    shift 3
    "$sim" "$@" > "$work/out" 2> "$work/err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $what: exit $got, want $want ($prog $*)"
        sed 's/^/  | /' "$work/out" "$work/err"
        failures=$((failures + 1))
    else
        echo "ok   $what (exit $got)"
    fi
}

# contains FILE TEXT DESCRIPTION
contains() {
    if grep -qF -- "$2" "$1"; then
        echo "ok   $3"
    else
        echo "FAIL: $3: '$2' not in $1"
        sed 's/^/  | /' "$1"
        failures=$((failures + 1))
    fi
}

# check_common_usage: the usage errors every simulator reports alike (a bad
# link option, an unknown option, a missing value, a stray argument).
check_common_usage() {
    expect 2 "probability above 1" -- --loss 2
    expect 2 "unknown option" -- --bogus
    expect 2 "missing value" -- --latency
    expect 2 "stray argument" -- extra
}

# check_determinism ARGS...: same options and seed, same bytes; another
# seed, other bytes.
check_determinism() {
    expect 0 "run 1" -- "$@" -w "$work/a.pcap" --truth "$work/a.json"
    expect 0 "run 2, same seed" -- "$@" -w "$work/b.pcap" --truth "$work/b.json"
    expect 0 "run 3, other seed" -- "$@" --seed 2 -w "$work/c.pcap"
    if cmp -s "$work/a.pcap" "$work/b.pcap" && cmp -s "$work/a.json" "$work/b.json"; then
        echo "ok   same seed, identical pcap and truth file"
    else
        echo "FAIL: same seed gave different files"; failures=$((failures + 1))
    fi
    if cmp -s "$work/a.pcap" "$work/c.pcap"; then
        echo "FAIL: another seed gave the same pcap"; failures=$((failures + 1))
    else
        echo "ok   other seed, other pcap"
    fi
}

# finish: the count of failures; exit status 0 when none.
finish() {
    echo "$failures failed"
    [ "$failures" -eq 0 ]
}
