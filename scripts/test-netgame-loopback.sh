#!/usr/bin/env bash
# test-netgame-loopback.sh: real-UDP tests of netgame-client and netgame-server
# on loopback only (127.0.0.1), bounded in time.
#
#   scripts/test-netgame-loopback.sh BIN_DIR relay|cli
#
#   relay  netgame-client -> chunk-relay (10% loss both ways, 20 ms each way)
#          -> netgame-server for 8 s: both connect, reach Good mode, measure an
#          RTT of at least the relay's 40 ms, count losses the relay really made;
#          the pcaps read by plain tshark, every datagram UDP with good
#          checksums, as many as the programs report
#   cli    --help, bad arguments (exit 2), a client with no server (exit 1 after
#          its timeout), a stray datagram that does not capture the server
#
# Ports come from the kernel (port 0, --port-file); every program runs under
# `timeout -k`. Exit 0 pass, 1 fail.
set -u
bin=${1:?usage: test-netgame-loopback.sh BIN_DIR relay|cli}
mode=${2:?usage: test-netgame-loopback.sh BIN_DIR relay|cli}
name=netgame programs=(netgame-client netgame-server chunk-relay)
. "$(dirname "${BASH_SOURCE[0]}")/loopback-common.sh"
# The first capture group of REGEX in FILE.
number() { sed -n -E "s/$2/\\1/p" "$1" | head -n 1; }

# Every frame of PCAP is IPv4/UDP with good checksums, and there are TOTAL.
check_pcap() { # PCAP TOTAL
    command -v tshark >/dev/null || { echo "note: no tshark; pcap checks skipped"; return 0; }
    local fields frames good
    fields=$(timeout -k 2 30 tshark -r "$1" -o udp.check_checksum:TRUE -o ip.check_checksum:TRUE \
        -T fields -e frame.protocols -e udp.checksum.status -e ip.checksum.status 2>/dev/null) || { fail "tshark -r $1"; return; }
    frames=$(printf '%s\n' "$fields" | grep -c .)
    good=$(printf '%s\n' "$fields" | awk -F'\t' 'index($1, "eth:ethertype:ip:udp") == 1 && $2 == "1" && $3 == "1" {n++} END {print n+0}')
    [ "$frames" = "$2" ] || fail "$1: $frames frames, the program wrote $2"
    [ "$good" = "$2" ] || fail "$1: $good of $2 frames are UDP with good checksums"
    echo "pcap $1: $frames frames, all IPv4/UDP with good checksums"
}

# Checks a program's summary: pcap datagrams = sent + received, then the pcap.
check_summary_pcap() { # LOG PCAP
    local sent received written
    sent=$(number "$1" '^  datagrams: ([0-9]+) sent.*')
    received=$(number "$1" '^  datagrams: [0-9]+ sent from [^ ]*, ([0-9]+) received.*')
    written=$(number "$1" '^  pcap: ([0-9]+) datagrams.*')
    [ -n "$sent" ] && [ -n "$received" ] && [ -n "$written" ] || { fail "no datagram counts in $1"; return; }
    [ "$written" = $((sent + received)) ] || fail "$1: pcap has $written datagrams, sent $sent + received $received"
    check_pcap "$2" "$written"
}

case "$mode" in
relay)
    start server 30 netgame-server -b 127.0.0.1 -p 0 --once --timeout 2 -w "$work/server.pcap" -q
    server_pid=$started_pid
    start relay 30 chunk-relay -l 127.0.0.1:0 --to "127.0.0.1:$started_port" \
        --loss 10% --latency 20ms --seed "$$" --idle-exit 1.5 --timeout 25 -q
    relay_pid=$started_pid
    timeout -k 2 30 "$bin/netgame-client" "127.0.0.1:$started_port" --duration 8 --timeout 2 --payload 64 \
        -w "$work/client.pcap" -q 2>"$work/client.log"
    client_rc=$?
    wait "$server_pid"; server_rc=$?
    wait "$relay_pid"; relay_rc=$?
    pids=()
    cat "$work/client.log" "$work/server.log"
    [ "$client_rc" = 0 ] || fail "netgame-client exited $client_rc"
    [ "$server_rc" = 0 ] || fail "netgame-server exited $server_rc"
    [ "$relay_rc" = 0 ] || { fail "chunk-relay exited $relay_rc"; cat "$work/relay.log"; }
    grep -q "flow control: mode good" "$work/client.log" || fail "the client did not reach Good mode in 8 s"
    grep -q "mode to good 1" "$work/server.log" || fail "the server did not reach Good mode"
    rtt=$(number "$work/client.log" '.*rtt ([0-9]+)\.[0-9] ms.*')
    [ -n "$rtt" ] && [ "$rtt" -ge 40 ] && [ "$rtt" -lt 250 ] || fail "client rtt '$rtt' ms, expected 40..250 (relay: 2 x 20 ms)"
    sent=$(number "$work/client.log" '^  packets: ([0-9]+) sent.*')
    acked=$(number "$work/client.log" '^  packets: [0-9]+ sent, [0-9]+ received, ([0-9]+) acked.*')
    received=$(number "$work/server.log" '^  packets: [0-9]+ sent, ([0-9]+) received.*')
    echo "client sent $sent, the server received $received, the client saw $acked acked"
    [ -n "$sent" ] && [ -n "$received" ] && [ -n "$acked" ] || fail "no packet counts"
    [ "$received" -lt "$sent" ] || fail "10% loss, yet the server received all $sent"
    [ "$acked" -le "$received" ] || fail "more acked ($acked) than received ($received)"
    [ "$sent" -ge 100 ] || fail "client sent only $sent packets in 8 s"
    check_summary_pcap "$work/client.log" "$work/client.pcap"
    check_summary_pcap "$work/server.log" "$work/server.pcap"
    ;;
cli)
    for p in netgame-client netgame-server; do
        "$bin/$p" --help >"$work/help" 2>&1; rc=$?
        [ "$rc" = 0 ] && grep -q -- "--payload BYTES" "$work/help" || fail "$p --help: exit $rc"
        "$bin/$p" --bogus >/dev/null 2>"$work/err"; rc=$?
        [ "$rc" = 2 ] && grep -q "try --help" "$work/err" || fail "$p --bogus: exit $rc"
        "$bin/$p" --payload 99999 127.0.0.1 >/dev/null 2>&1; rc=$?
        [ "$rc" = 2 ] || fail "$p --payload 99999: exit $rc"
    done
    "$bin/netgame-client" >/dev/null 2>&1; rc=$?
    [ "$rc" = 2 ] || fail "netgame-client without a server: exit $rc"
    "$bin/netgame-server" --duration 0 >/dev/null 2>&1; rc=$?
    [ "$rc" = 2 ] || fail "netgame-server --duration 0: exit $rc"
    # Nobody listens: the client gives up after its timeout.
    timeout -k 2 10 "$bin/netgame-client" 127.0.0.1:9 --timeout 1 -q 2>"$work/dead.log"; rc=$?
    [ "$rc" = 1 ] && grep -q "could not connect" "$work/dead.log" || { fail "client with no server: exit $rc"; cat "$work/dead.log"; }
    # A stray datagram (wrong protocol id) does not become the server's peer.
    start server 20 netgame-server -b 127.0.0.1 -p 0 --once --timeout 1 -q
    server_pid=$started_pid
    server_port=$started_port
    printf 'not a netgame packet, no' >"/dev/udp/127.0.0.1/$server_port" || fail "could not send the stray datagram"
    timeout -k 2 20 "$bin/netgame-client" "127.0.0.1:$server_port" --duration 2 --timeout 1 -q 2>"$work/client.log"; rc=$?
    wait "$server_pid"; server_rc=$?
    pids=()
    cat "$work/client.log" "$work/server.log"
    [ "$rc" = 0 ] || fail "client exited $rc"
    [ "$server_rc" = 0 ] || fail "server exited $server_rc"
    grep -q "drop protocol id 1" "$work/server.log" || fail "the server did not count the stray datagram"
    grep -q "connects 1" "$work/server.log" || fail "the server did not connect once"
    ;;
*) echo "usage: test-netgame-loopback.sh BIN_DIR relay|cli" >&2; exit 2 ;;
esac
[ "$failed" = 0 ] && echo "pass"
exit "$failed"
