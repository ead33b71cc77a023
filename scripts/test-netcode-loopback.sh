#!/usr/bin/env bash
# test-netcode-loopback.sh: real-UDP tests of netcode-token, netcode-server and
# netcode-client on loopback only (127.0.0.1), bounded in time.
#
#   scripts/test-netcode-loopback.sh BIN_DIR play|relay|cli
#
#   play   a server on a kernel-chosen port, a token naming it, a client for 2 s:
#          both exit 0, payloads both ways all with the expected bytes, the
#          server sees the client's disconnect; the key logs hold the same keys
#   relay  the same through chunk-relay at 10% loss and 10% duplicates: the
#          client still connects and the duplicates are counted as replays
#   cli    --help, bad arguments (exit 2), an invalid token file (exit 2), a
#          token for a server that is not there (exit 1: request timed out),
#          a token for another protocol id (exit 1, the server counts it),
#          a server asked to bind the any address without --public (exit 2)
#
# Ports come from the kernel (port 0, --port-file); every program runs under
# `timeout -k`. Exit 0 pass, 1 fail.
set -u
bin=${1:?usage: test-netcode-loopback.sh BIN_DIR play|relay|cli}
mode=${2:?usage: test-netcode-loopback.sh BIN_DIR play|relay|cli}
name=netcode programs=(netcode-client netcode-server netcode-token chunk-relay)
. "$(dirname "${BASH_SOURCE[0]}")/loopback-common.sh"

start_server() { # EXTRA ARGS...: starts a server on 127.0.0.1:0, sets server_pid and port
    start server 30 netcode-server -b 127.0.0.1:0 --once -t 20 -q --keys "$work/server.keys" "$@"
    server_pid=$started_pid
    port=$started_port
}

case "$mode" in
play|relay)
    start_server --rate 20 --payload 300
    target=$port
    if [ "$mode" = relay ]; then
        start relay 30 chunk-relay --listen 127.0.0.1:0 --to "127.0.0.1:$port" --loss 10% --duplicate 10% --seed 4 -q
        target=$started_port
    fi
    # The token names the address the client sends to (the relay's, in relay mode),
    # and the server checks its own address: through the relay, its public address is the relay's.
    if [ "$mode" = relay ]; then
        kill "$server_pid"; wait "$server_pid" 2>/dev/null
        rm -f "$work/server.port"
        timeout -k 2 30 "$bin/netcode-server" -b "127.0.0.1:$port" --public "127.0.0.1:$target" --once -t 20 -q \
            --keys "$work/server.keys" --rate 20 --payload 300 2> "$work/server.log" &
        server_pid=$!
        pids+=("$server_pid")
        sleep 0.3
    fi
    "$bin/netcode-token" -o "$work/token" --server "127.0.0.1:$target" --timeout 3 -q || fail "netcode-token"
    timeout -k 2 20 "$bin/netcode-client" "$work/token" --duration 2 --rate 20 --payload 300 -q \
        -w "$work/client.pcap" --keys "$work/client.keys" 2> "$work/client.log"
    status=$?
    [ "$status" = 0 ] || fail "client exit $status"
    wait "$server_pid"; sstatus=$?
    [ "$sstatus" = 0 ] || fail "server exit $sstatus"
    cat "$work/client.log" "$work/server.log"
    received=$(sed -n -E 's/.*payloads: [0-9]+ sent, ([0-9]+) received \(([0-9]+) with the expected bytes, ([0-9]+) not\).*/\1 \2 \3/p' "$work/client.log")
    read -r got ok bad <<< "$received"
    [ "${got:-0}" -ge 30 ] || fail "client received ${got:-0} payloads, want at least 30"
    [ "${bad:-1}" = 0 ] || fail "client received payloads with other bytes"
    sreceived=$(sed -n -E 's/.*payloads: [0-9]+ sent, ([0-9]+) received \(([0-9]+) with the expected bytes, ([0-9]+) not\).*/\1 \3/p' "$work/server.log")
    read -r sgot sbad <<< "$sreceived"
    [ "${sgot:-0}" -ge 30 ] || fail "server received ${sgot:-0} payloads, want at least 30"
    [ "${sbad:-1}" = 0 ] || fail "server received payloads with other bytes"
    grep -q "the client's connection ended" "$work/server.log" || fail "server did not see the connection end"
    if [ "$mode" = relay ]; then
        grep -q "drop replayed" "$work/client.log" "$work/server.log" || fail "no duplicate counted as a replay"
    fi
    ckeys=$(grep '^NETCODE_CONNECTION_KEYS' "$work/client.keys")
    grep -qxF "$ckeys" "$work/server.keys" || fail "the server's key log lacks the client's keys"
    grep -q '^NETCODE_PRIVATE_KEY 606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1$' "$work/server.keys" \
        || fail "the server's key log lacks the private key"
    if command -v tshark >/dev/null; then
        frames=$(timeout -k 2 30 tshark -r "$work/client.pcap" 2>/dev/null | grep -c .)
        written=$(sed -n -E 's/.*pcap: ([0-9]+) datagrams.*/\1/p' "$work/client.log")
        [ "$frames" = "$written" ] || fail "client pcap: $frames frames, the client wrote $written"
    fi
    ;;
cli)
    expect() { # CODE WHAT PROGRAM ARGS...
        local want=$1 what=$2 prog=$3; shift 3
        timeout -k 2 20 "$bin/$prog" "$@" > "$work/out" 2> "$work/err"
        local got=$?
        if [ "$got" != "$want" ]; then fail "$what: exit $got, want $want"; cat "$work/out" "$work/err"; else echo "ok   $what"; fi
    }
    expect 0 "server --help" netcode-server --help
    expect 0 "client --help" netcode-client --help
    expect 0 "token --help" netcode-token --help
    expect 2 "token without -o" netcode-token
    expect 2 "bad key" netcode-token -o "$work/t" --key 1234
    expect 2 "bad server address" netcode-token -o "$work/t" --server 'nonsense:x'
    expect 3 "token to an unwritable file" netcode-token -o "$work/no/such/t"
    expect 2 "client without a token" netcode-client
    expect 3 "client with a missing token file" netcode-client "$work/missing"
    head -c 100 /dev/zero > "$work/short"
    expect 2 "client with a short token file" netcode-client "$work/short"
    expect 2 "server: any address without --public" netcode-server -b 0.0.0.0:0
    expect 2 "server: bad --max-clients" netcode-server --max-clients 0
    expect 2 "client: payload too large" netcode-client "$work/short" --payload 1201
    # Nobody there: request timed out after the token's 1 s timeout.
    "$bin/netcode-token" -o "$work/t" --server 127.0.0.1:9 --timeout 1 -q
    expect 1 "no server: request timed out" netcode-client "$work/t" -q
    grep -q "connection request timed out" "$work/err" || fail "the client does not say the request timed out"
    # A server with another protocol id ignores the token.
    start_server --protocol-id 0x99
    "$bin/netcode-token" -o "$work/t" --server "127.0.0.1:$port" --timeout 1 -q
    expect 1 "other protocol id: request timed out" netcode-client "$work/t" -q
    kill -INT "$server_pid"; wait "$server_pid" 2>/dev/null
    grep -q "drop request bad protocol id" "$work/server.log" || fail "the server does not count the wrong protocol id"
    ;;
*) echo "usage: test-netcode-loopback.sh BIN_DIR play|relay|cli" >&2; exit 2 ;;
esac
[ "$failed" = 0 ] && echo "ok: netcode $mode"
exit "$failed"
