#!/usr/bin/env bash
# test-reliable-sim.sh: reliable-sim's command line, exit codes and
# determinism (the same options and seed give the same pcap and truth file).
#
#   captures/test-reliable-sim.sh RELIABLE_SIM WORK_DIR
set -uo pipefail
prog=reliable-sim usage_arg=RELIABLE_SIM
. "$(dirname "${BASH_SOURCE[0]}")/sim-cli-common.sh"

expect 0 "--help" -- --help
contains "$work/out" "--drop-fragment" "--help lists --drop-fragment"
expect 2 "unknown option" -- --no-such-option
expect 2 "bad --rate" -- --rate 0
expect 2 "bad --payload" -- --payload 500-100
expect 2 "too many fragments" -- --large-every 2 --large 20000
expect 2 "stray argument" -- extra
expect 4 "unwritable pcap" -- --duration 1 -w /nonexistent/dir/x.pcap -q
check_determinism --duration 2 --loss 10% --large-every 4 --seed 7 -q
finish
