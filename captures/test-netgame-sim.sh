#!/usr/bin/env bash
# test-netgame-sim.sh: ctest checks of netgame-sim's command line, exit codes
# and determinism (the netgame-* captures test the rest).
#
#   captures/test-netgame-sim.sh NETGAME_SIM WORK_DIR
#
# Exit status: 0 all checks passed, 1 a check failed, 2 bad arguments.
set -uo pipefail
prog=netgame-sim usage_arg=NETGAME_SIM
. "$(dirname "${BASH_SOURCE[0]}")/sim-cli-common.sh"

expect 0 "--help" -- --help
contains "$work/out" "--server-stops-acking SEC" "--help lists the faults"
contains "$work/out" "--spike START:LEN:EXTRA" "--help lists the spikes"
check_common_usage
expect 2 "bad capture point" -- --capture-at middle
expect 2 "bad spike" -- --spike 3:4
contains "$work/err" "try --help" "usage errors point at --help"
expect 2 "first sequence above max sequence" -- --max-sequence 31 --first-sequence 32
expect 2 "payload too large" -- --payload 100000
expect 2 "zero duration" -- --duration 0
expect 4 "unwritable pcap" -- -w "$work/no-such-folder/x.pcap"
expect 4 "unwritable truth file" -- --duration 1 --truth "$work/no-such-folder/x.json"
expect 1 "nothing gets through: never connected" -- --loss 100% --duration 2
contains "$work/out" "not connected at the end" "summary says so"
expect 1 "link dies: the client times out" -- --spike 2:60:30 --duration 15
contains "$work/out" "client (10.0.0.1:30001): disconnected" "summary shows the client disconnected"
expect 0 "stopped acking: expected" -- --client-stops-acking 1 --duration 5
expect 0 "quiet link" -- --latency 25ms --duration 6
contains "$work/out" "mode good" "reaches Good mode within 6 s"

# Same options and seed, same bytes; another seed, other bytes.
check_determinism --loss 30% --jitter 20ms --latency 30ms --duplicate 10% --duration 8

finish
