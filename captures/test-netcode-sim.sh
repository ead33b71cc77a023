#!/usr/bin/env bash
# test-netcode-sim.sh: ctest checks of netcode-sim: command line, exit codes,
# determinism, and the outcome of every fault as the truth file tells it
# (the client's final state, the server's counters per drop reason).
#
#   captures/test-netcode-sim.sh NETCODE_SIM WORK_DIR
#
# Exit status: 0 all checks passed, 1 a check failed, 2 bad arguments.
set -uo pipefail
prog=netcode-sim usage_arg=NETCODE_SIM
. "$(dirname "${BASH_SOURCE[0]}")/sim-cli-common.sh"

# truth DESCRIPTION PYTHON-EXPRESSION: the expression over t (the last run's
# truth file), c (its first connection) and s (the server's counters) is true.
truth() {
    if python3 - "$work/t.json" "$2" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
c = t['connections'][0]
s = t['server']['counters']
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
    then echo "ok   $1"; else echo "FAIL: $1: not ($2)"; failures=$((failures + 1)); fi
}

expect 0 "--help" -- --help
contains "$work/out" "--drop-challenges N" "--help lists the faults"
contains "$work/out" "--keys FILE" "--help lists the key log"
check_common_usage
expect 2 "bad protocol id" -- --protocol-id 0xzz
expect 2 "payload too large" -- --payload 1201
expect 2 "zero clients" -- --clients 0
expect 2 "bad drop count" -- --drop-challenges some
expect 4 "unwritable key log" -- --duration 1 --keys "$work/no-such-folder/k"
expect 1 "nothing gets through: never connected" -- --loss 100% --duration 1
contains "$work/out" "a client never connected" "summary says so"

expect 0 "clean" -- --latency 25ms --truth "$work/t.json" --keys "$work/k"
truth "connected, then disconnected by the client" "c['client_side']['connected_at'] is not None and c['server_side']['end'] == 'client disconnected'"
truth "payloads both ways with the expected bytes" "c['client_side']['payloads_ok'] >= 45 and c['server_side']['payloads_ok'] >= 45 and c['client_side']['payloads_bad'] == 0"
truth "one challenge, ten disconnects" "c['server_side']['sent']['challenge'] == 1 and c['client_side']['sent']['disconnect'] == 10"
contains "$work/k" "NETCODE_PRIVATE_KEY $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["private_key"])' "$work/t.json")" "key log holds the private key"
contains "$work/k" "NETCODE_CONNECTION_KEYS $(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["connections"][0]; print(c["client_to_server_key"], c["server_to_client_key"])' "$work/t.json")" "key log holds the connection keys"

expect 0 "expired token" -- --expired-token --duration 6 --truth "$work/t.json"
truth "server ignores the expired token, client's request times out" "s['drop_request_expired'] >= 40 and c['client_side']['state'] == 'connection request timed out'"
expect 0 "wrong protocol id" -- --server-protocol-id 7 --duration 6 --truth "$work/t.json"
truth "wrong protocol id counted" "s['drop_request_bad_protocol_id'] >= 40 and c['client_side']['state'] == 'connection request timed out'"
expect 0 "wrong private key" -- --wrong-key --duration 6 --truth "$work/t.json"
truth "undecryptable token counted" "s['drop_request_decrypt_failed'] >= 40 and s['challenges_sent'] == 0"
expect 0 "server full" -- --clients 2 --max-clients 1 --truth "$work/t.json"
truth "second client denied" "t['connections'][1]['client_side']['state'] == 'connection denied' and s['denied_sent'] == 1"
expect 0 "lost challenge" -- --drop-challenges 1 --truth "$work/t.json"
truth "a second challenge connects" "c['server_side']['sent']['challenge'] == 2 and c['client_side']['connected_at'] is not None"
expect 0 "every challenge lost" -- --drop-challenges all --duration 6 --truth "$work/t.json"
truth "request timed out" "c['client_side']['state'] == 'connection request timed out'"
expect 0 "lost responses" -- --drop-responses 2 --truth "$work/t.json"
truth "the third response connects" "c['client_side']['sent']['response'] == 3 and s['connects'] == 1"
expect 0 "every response lost" -- --drop-responses all --duration 6 --truth "$work/t.json"
truth "response timed out" "c['client_side']['state'] == 'connection response timed out'"
expect 0 "loss and duplicates" -- --loss 10% --duplicate 10% --latency 25ms --seed 3 --duration 6 --truth "$work/t.json"
truth "replays counted, connection survives" "s['drop_replayed'] + c['client_side']['counters']['drop_replayed'] > 0 and c['server_side']['end'] == 'client disconnected'"
expect 0 "server goes silent" -- --server-silent-at 2 --duration 8 --truth "$work/t.json"
truth "client's connection times out" "c['client_side']['state'] == 'connection timed out'"
expect 0 "client goes silent" -- --client-silent-at 2 --duration 8 --truth "$work/t.json"
truth "server times the client out" "c['server_side']['end'] == 'timed out' and s['timeouts'] == 1"
expect 0 "server disconnects" -- --server-disconnects-at 2 --truth "$work/t.json"
truth "client disconnected by the server" "c['server_side']['end'] == 'server disconnected' and c['client_side']['counters']['disconnects_received'] >= 1"

check_determinism --loss 20% --duplicate 10% --jitter 10ms --latency 30ms --duration 4 --clients 2
finish
