#!/usr/bin/env bash
# test-chunk-sim.sh: ctest checks of chunk-sim's command line, exit codes,
# input files and determinism (the captures test the rest).
#
#   captures/test-chunk-sim.sh CHUNK_SIM WORK_DIR
#
# Exit status: 0 all checks passed, 1 a check failed, 2 bad arguments.
set -uo pipefail
prog=chunk-sim usage_arg=CHUNK_SIM
. "$(dirname "${BASH_SOURCE[0]}")/sim-cli-common.sh"

expect 0 "--help" -- --help
contains "$work/out" "--drop-slice ID" "--help lists the fault options"
check_common_usage
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
check_determinism --loss 30% --jitter 20ms --latency 30ms --duplicate 10%

finish
