#!/usr/bin/env bash
# test-reliable-sim.sh: reliable-sim's command line, exit codes and
# determinism (the same options and seed give the same pcap and truth file).
#
#   captures/test-reliable-sim.sh RELIABLE_SIM WORK_DIR
set -uo pipefail
sim=${1:?usage: test-reliable-sim.sh RELIABLE_SIM WORK_DIR}
work=${2:?usage: test-reliable-sim.sh RELIABLE_SIM WORK_DIR}
mkdir -p "$work"
fail=0
expect() { # expect CODE DESCRIPTION -- ARGS...
    local want=$1 what=$2; shift 3
    "$sim" "$@" >"$work/out" 2>"$work/err"; local got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $what: exit $got, want $want"; cat "$work/err"; fail=1
    else
        echo "ok   $what"
    fi
}
expect 0 "--help" -- --help
grep -q -- "--drop-fragment" "$work/out" || { echo "FAIL: --help does not list --drop-fragment"; fail=1; }
expect 2 "unknown option" -- --no-such-option
expect 2 "bad --rate" -- --rate 0
expect 2 "bad --payload" -- --payload 500-100
expect 2 "too many fragments" -- --large-every 2 --large 20000
expect 2 "stray argument" -- extra
expect 4 "unwritable pcap" -- --duration 1 -w /nonexistent/dir/x.pcap -q
expect 0 "a run" -- --duration 2 --loss 10% --large-every 4 --seed 7 -w "$work/a.pcap" --truth "$work/a.json" -q
expect 0 "the same run" -- --duration 2 --loss 10% --large-every 4 --seed 7 -w "$work/b.pcap" --truth "$work/b.json" -q
expect 0 "another seed" -- --duration 2 --loss 10% --large-every 4 --seed 8 -w "$work/c.pcap" -q
cmp -s "$work/a.pcap" "$work/b.pcap" && cmp -s "$work/a.json" "$work/b.json" \
    && echo "ok   same options and seed: byte-identical pcap and truth file" \
    || { echo "FAIL: two runs with the same options differ"; fail=1; }
cmp -s "$work/a.pcap" "$work/c.pcap" \
    && { echo "FAIL: another seed gives the same pcap"; fail=1; } \
    || echo "ok   another seed: another pcap"
exit $fail
