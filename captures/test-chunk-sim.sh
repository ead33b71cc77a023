#!/usr/bin/env bash
# test-chunk-sim.sh: ctest checks of chunk-sim's command line, exit codes,
# input files and determinism (the captures test the rest).
#
#   captures/test-chunk-sim.sh CHUNK_SIM WORK_DIR
#
# Exit status: 0 all checks passed, 1 a check failed, 2 bad arguments.
set -uo pipefail

[ $# -eq 2 ] || { echo "usage: test-chunk-sim.sh CHUNK_SIM WORK_DIR" >&2; exit 2; }
sim=$1
work=$2
mkdir -p "$work"
failures=0

# expect CODE DESCRIPTION -- ARGS...: runs chunk-sim, checks its exit code.
expect() {
    local want=$1 what=$2
    shift 3
    "$sim" "$@" > "$work/out" 2> "$work/err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $what: exit $got, want $want (chunk-sim $*)"
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

expect 0 "--help" -- --help
contains "$work/out" "--drop-slice ID" "--help lists the fault options"
expect 2 "probability above 1" -- --loss 2
expect 2 "unknown option" -- --bogus
expect 2 "missing value" -- --latency
expect 2 "stray argument" -- extra
expect 2 "slice id past max slices" -- --drop-slice 32 --max-slices 32
expect 2 "chunk larger than the largest" -- --chunk-size 300K
expect 2 "bad capture point" -- --capture-at middle
expect 4 "missing input file" -- --input "$work/does-not-exist"
expect 4 "unwritable pcap" -- -w "$work/no-such-folder/x.pcap"
expect 1 "nothing gets through, no fault: not delivered" -- --loss 100% --time-limit 1 --chunks 1
contains "$work/out" "NOT DELIVERED" "summary says not delivered"
expect 0 "fault that stops delivery: expected" -- --drop-acks --time-limit 1 --chunks 2 --truth "$work/fault.json"
contains "$work/out" "as the fault predicts" "summary names the expected failure"
contains "$work/fault.json" '"expected_failure": true' "truth file marks the expected failure"

# An input file whose size is no multiple of the chunk size, both ways at once.
head -c 70001 /dev/urandom > "$work/input.bin"
expect 0 "input file, duplex, 20% loss" -- --input "$work/input.bin" --chunk-size 30000 --duplex --loss 20% --truth "$work/input.json"
contains "$work/out" "3/3 chunks delivered intact (70001 bytes)" "file split into 30000+30000+10001"
contains "$work/input.json" '"size": 10001' "truth file has the short last chunk"

# Same options and seed, same bytes; another seed, other bytes.
expect 0 "run 1" -- --loss 30% --jitter 20ms --latency 30ms --duplicate 10% -w "$work/a.pcap" --truth "$work/a.json"
expect 0 "run 2, same seed" -- --loss 30% --jitter 20ms --latency 30ms --duplicate 10% -w "$work/b.pcap" --truth "$work/b.json"
expect 0 "run 3, other seed" -- --loss 30% --jitter 20ms --latency 30ms --duplicate 10% --seed 2 -w "$work/c.pcap"
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

echo "$failures failed"
[ "$failures" -eq 0 ]
