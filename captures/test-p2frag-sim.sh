#!/usr/bin/env bash
# test-p2frag-sim.sh: ctest checks of p2frag-sim's command line, exit codes and
# determinism (the p2frag-* captures test the rest).
#
#   captures/test-p2frag-sim.sh P2FRAG_SIM WORK_DIR
#
# Exit status: 0 all checks passed, 1 a check failed, 2 bad arguments.
set -uo pipefail
prog=p2frag-sim usage_arg=P2FRAG_SIM
. "$(dirname "${BASH_SOURCE[0]}")/sim-cli-common.sh"

expect 0 "--help" -- --help
contains "$work/out" "--out-of-window N" "--help lists the out-of-window option"
contains "$work/out" "--mixed" "--help lists the mixed mode"
check_common_usage
expect 2 "packet larger than 255 fragments" -- --packet-size 261121
expect 2 "size range upside down" -- --packet-size 5000-4000
expect 2 "bad content" -- --content json
expect 2 "sequence past 65535" -- --first-sequence 65536
expect 2 "bad capture point" -- --capture-at middle
expect 4 "unwritable pcap" -- -w "$work/no-such-folder/x.pcap"
expect 4 "unwritable truth file" -- --truth "$work/no-such-folder/x.json"

expect 0 "clean run" -- --packets 10 --truth "$work/clean.json"
contains "$work/out" "10/10 packets delivered intact" "summary counts the packets"
contains "$work/clean.json" '"generator": "p2frag-sim"' "truth file names its generator"

# Loss loses packets; that is the protocol, not a failure.
expect 0 "50% loss: packets lost, exit 0" -- --loss 50% --packets 20
contains "$work/out" "fragments:" "summary gives the fragment loss"
# A time limit that cuts the run short: packets never sent.
expect 1 "time limit before every packet is sent" -- --packets 100 --time-limit 0.1
contains "$work/out" "NOT DELIVERED" "summary says not delivered"

# The largest packet, crossing the wrap, with the dispatch of --mixed.
expect 0 "255 fragments" -- --packets 1 --packet-size 261120 --content raw --first-sequence 65535 --truth "$work/big.json"
contains "$work/big.json" '"num_fragments": 255' "truth file has the 255-fragment packet"
expect 0 "mixed traffic" -- --mixed --packets 5 --chunks 1 --chunk-size 4K
contains "$work/out" "chunks: 1/1 delivered intact" "chunks delivered in mixed mode"

# Same options and seed, same bytes; another seed, other bytes.
check_determinism --loss 20% --jitter 10ms --latency 20ms --duplicate 10%

finish
