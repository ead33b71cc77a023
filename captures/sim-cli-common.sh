# sim-cli-common.sh: the part that the test-<simulator>.sh scripts share,
# sourced by them after they set
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

# check_determinism [--with-keys] ARGS...: same options and seed, same bytes
# (the pcap, the truth file, and with --with-keys the key log); another seed,
# other bytes.
check_determinism() {
    local keys_a=() keys_b=() what="pcap and truth file"
    if [ "$1" = --with-keys ]; then
        shift
        keys_a=(--keys "$work/a.keys")
        keys_b=(--keys "$work/b.keys")
        what="pcap, truth file and key log"
    fi
    expect 0 "run 1" -- "$@" -w "$work/a.pcap" --truth "$work/a.json" "${keys_a[@]}"
    expect 0 "run 2, same seed" -- "$@" -w "$work/b.pcap" --truth "$work/b.json" "${keys_b[@]}"
    expect 0 "run 3, other seed" -- "$@" --seed 2 -w "$work/c.pcap"
    if cmp -s "$work/a.pcap" "$work/b.pcap" && cmp -s "$work/a.json" "$work/b.json" &&
        { [ ${#keys_a[@]} = 0 ] || cmp -s "$work/a.keys" "$work/b.keys"; }; then
        echo "ok   same seed, identical $what"
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
