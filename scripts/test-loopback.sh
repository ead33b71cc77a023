#!/usr/bin/env bash
# test-loopback.sh: real-UDP tests of chunk-send, chunk-recv and chunk-relay,
# on loopback only (127.0.0.1 and ::1).
#
#   scripts/test-loopback.sh BIN_DIR relay|ipv6|cli
#
#   relay  1 MiB of random bytes, chunk-send -> chunk-relay (20% loss both
#          ways, latency, jitter) -> chunk-recv over IPv4; byte-exact (cmp);
#          the three pcaps (sender's, receiver's, the relay's sender leg) read
#          by plain tshark, every datagram as UDP with good checksums and the
#          counts the programs report
#   ipv6   1 MiB over [::1] without the relay, pcap read as IPv6 UDP
#   cli    stdin to stdout with the idle-timeout stop, a stray datagram that
#          must not capture the receiver, the timeout exit code for a dead
#          receiver and for a slice the relay always drops, a large datagram
#          of no chunk format through the relay both ways, bad arguments
#
# Every port is chosen by the kernel (port 0, --port-file), so parallel runs do
# not clash; every program runs under `timeout -k`, so the test cannot hang.
# Exit 0 pass, 1 fail, 77 skipped (no IPv6 loopback, or no tshark).
set -u
# CHUNK_TEST_TRACE=1: trace every command with a timestamp (for a hang).
if [ -n "${CHUNK_TEST_TRACE:-}" ]; then
    PS4='+ $(date +%T.%N) '
    set -x
fi

bin=${1:?usage: test-loopback.sh BIN_DIR relay|ipv6|cli}
mode=${2:?usage: test-loopback.sh BIN_DIR relay|ipv6|cli}
name=chunk
programs=(chunk-send chunk-recv chunk-relay)
. "$(dirname "${BASH_SOURCE[0]}")/loopback-common.sh"

# The number after "label" in a summary line, e.g. count "datagrams:" " sent" FILE.
summary_number() { # FILE REGEX -> first capture group
    sed -n -E "s/$2/\\1/p" "$1" | head -n 1
}

# Checks a pcap with plain tshark: every frame is UDP with a good UDP checksum
# (and IPv4 header checksum), there are exactly TOTAL of them, and OWN of them
# come from source port PORT.
check_pcap() { # FILE TOTAL OWN PORT IPVERSION
    local file=$1 total=$2 own=$3 first=$4 ipv=$5
    if ! command -v tshark >/dev/null; then
        echo "note: tshark not installed; pcap checks skipped"
        return 0
    fi
    local fields
    if ! fields=$(timeout -k 2 30 tshark -r "$file" -o udp.check_checksum:TRUE -o ip.check_checksum:TRUE \
        -T fields -e frame.protocols -e udp.srcport -e udp.checksum.status -e ip.checksum.status 2>"$work/tshark.err"); then
        fail "tshark -r $file: $(cat "$work/tshark.err")"
        return
    fi
    local frames udp good own_count
    frames=$(printf '%s\n' "$fields" | grep -c .)
    local stack="eth:ethertype:ip:udp"
    [ "$ipv" = 6 ] && stack="eth:ethertype:ipv6:udp"
    udp=$(printf '%s\n' "$fields" | awk -F'\t' -v p="$stack" 'index($1, p) == 1 {n++} END {print n+0}')
    # checksum status 1 is "Good" (proto_checksum_enum_e)
    good=$(printf '%s\n' "$fields" | awk -F'\t' -v v="$ipv" '$3 == "1" && (v == 6 || $4 == "1") {n++} END {print n+0}')
    own_count=$(printf '%s\n' "$fields" | awk -F'\t' -v p="$first" '$2 == p {n++} END {print n+0}')
    [ "$frames" = "$total" ] || fail "$file: tshark reads $frames frames, the program wrote $total"
    [ "$udp" = "$total" ] || fail "$file: $udp of $total frames are IPv$ipv/UDP"
    [ "$good" = "$total" ] || fail "$file: $good of $total frames have good checksums"
    [ "$own_count" = "$own" ] || fail "$file: $own_count frames from port $first, the program sent $own"
    echo "pcap $file: $frames frames, all IPv$ipv/UDP with good checksums, $own_count from port $first"
}

# Checks "pcap: N datagrams" equals sent + received on "datagrams:" in a summary,
# then the pcap itself. Args: SUMMARY PCAP IPVERSION
check_program_pcap() {
    local summary=$1 pcap=$2 ipv=$3 sent received written port
    sent=$(summary_number "$summary" '^  datagrams: ([0-9]+) sent.*')
    port=$(summary_number "$summary" '^  datagrams: [0-9]+ sent from .*:([0-9]+), .*')
    received=$(summary_number "$summary" '^  datagrams: [0-9]+ sent from [^ ]*, ([0-9]+) received.*')
    written=$(summary_number "$summary" '^  pcap: ([0-9]+) datagrams.*')
    if [ -z "$sent" ] || [ -z "$port" ] || [ -z "$received" ] || [ -z "$written" ]; then
        fail "no datagram counts in $summary"
        return
    fi
    [ "$written" = $((sent + received)) ] || fail "$summary: pcap has $written datagrams, sent $sent + received $received"
    check_pcap "$pcap" "$written" "$sent" "$port" "$ipv"
}

make_input() { # FILE BYTES
    head -c "$2" /dev/urandom >"$1"
}

# After a transfer from in.bin to out.bin: waits for chunk-recv (recv_pid),
# shows the logs (send.log, recv.log, then LOGS), and checks that chunk-send
# (exit status SEND_RC) and chunk-recv exited 0 and that out.bin is in.bin.
# SENDER, RECEIVER and MISMATCH word the failures.
transfer_done() { # SEND_RC SENDER RECEIVER MISMATCH [LOGS...]
    local send_rc=$1 sender=$2 receiver=$3 mismatch=$4 recv_rc
    shift 4
    wait "$recv_pid"
    recv_rc=$?
    pids=()
    cat "$work/send.log" "$work/recv.log" "$@"
    [ "$send_rc" = 0 ] || fail "$sender exited $send_rc"
    [ "$recv_rc" = 0 ] || fail "$receiver exited $recv_rc"
    cmp "$work/in.bin" "$work/out.bin" || fail "$mismatch"
}

case "$mode" in
relay)
    make_input "$work/in.bin" 1048576
    start recv 25 chunk-recv -b 127.0.0.1 -p 0 --bytes 1048576 --timeout 20 -w "$work/recv.pcap" "$work/out.bin"
    recv_pid=$started_pid
    start relay 25 chunk-relay -l 127.0.0.1:0 --to "127.0.0.1:$started_port" \
        --loss 20% --latency 2ms --jitter 1ms --seed "$$" --idle-exit 1.5 --timeout 20 \
        -w "$work/relay.pcap" --capture-at sender
    relay_pid=$started_pid
    timeout -k 2 25 "$bin/chunk-send" --rate 4MB --timeout 20 -w "$work/send.pcap" "127.0.0.1:$started_port" \
        "$work/in.bin" 2>"$work/send.log"
    send_rc=$?
    wait "$relay_pid"
    relay_rc=$?
    transfer_done "$send_rc" chunk-send chunk-recv "received file differs from the one sent" "$work/relay.log"
    [ "$relay_rc" = 0 ] || fail "chunk-relay exited $relay_rc"
    # The relay really lost packets, and the sender really resent.
    fwd_in=$(summary_number "$work/relay.log" '^  forward \(to receiver\): ([0-9]+) in.*')
    fwd_lost=$(summary_number "$work/relay.log" '^  forward \(to receiver\):.*, lost ([0-9]+),.*')
    resent=$(summary_number "$work/send.log" '.*slices resent ([0-9]+),.*')
    echo "relay: $fwd_lost of $fwd_in slices lost on the way; sender resent $resent"
    [ -n "$fwd_lost" ] && [ "$fwd_lost" -gt 0 ] || fail "the relay lost nothing at 20% loss"
    [ -n "$resent" ] && [ "$resent" -ge "$fwd_lost" ] || fail "sender resent $resent < $fwd_lost lost"
    check_program_pcap "$work/send.log" "$work/send.pcap" 4
    check_program_pcap "$work/recv.log" "$work/recv.pcap" 4
    # The sender's leg: every slice as it arrived, every ack the relay let through.
    relay_total=$(summary_number "$work/relay.log" '^  pcap: ([0-9]+) datagrams.*')
    back_out=$(summary_number "$work/relay.log" '^  back \(to sender\): [0-9]+ in, ([0-9]+) out.*')
    [ "$relay_total" = $((fwd_in + back_out)) ] || fail "relay pcap has $relay_total datagrams, not $fwd_in in + $back_out out"
    send_port=$(summary_number "$work/send.log" '^  datagrams: [0-9]+ sent from .*:([0-9]+), .*')
    check_pcap "$work/relay.pcap" "$relay_total" "$fwd_in" "$send_port" 4
    ;;
ipv6)
    if ! grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6 2>/dev/null; then
        echo "skipped: no IPv6 loopback (::1)"
        exit 77
    fi
    make_input "$work/in.bin" 1048576
    start recv 25 chunk-recv -b ::1 -p 0 --bytes 1M --timeout 20 -w "$work/recv.pcap" "$work/out.bin"
    recv_pid=$started_pid
    timeout -k 2 25 "$bin/chunk-send" --rate 8MB --timeout 20 -w "$work/send.pcap" "[::1]:$started_port" \
        "$work/in.bin" 2>"$work/send.log"
    transfer_done $? chunk-send chunk-recv "received file differs from the one sent"
    grep -q "from \[::1\]:" "$work/recv.log" || fail "chunk-recv did not report an IPv6 sender"
    check_program_pcap "$work/send.log" "$work/send.pcap" 6
    check_program_pcap "$work/recv.log" "$work/recv.pcap" 6
    ;;
cli)
    # stdin -> stdout, chunks of 1000 bytes, stopping on the idle timeout; a
    # stray datagram first must neither capture nor upset the receiver.
    make_input "$work/in.bin" 5500
    start recv 20 chunk-recv -4 -b 127.0.0.1 -p 0 --idle-timeout 1 >"$work/out.bin"
    recv_pid=$started_pid
    recv_port=$started_port
    # bash's /dev/udp: one datagram from another port, before the real sender.
    printf 'not a chunk packet' >"/dev/udp/127.0.0.1/$recv_port" || fail "could not send the stray datagram"
    cat "$work/in.bin" | timeout -k 2 20 "$bin/chunk-send" -q -c 1000 --timeout 15 "127.0.0.1:$recv_port" 2>"$work/send.log"
    transfer_done $? "chunk-send from stdin" "chunk-recv (idle stop)" "stdout differs from stdin"
    grep -q "in 6 chunks" "$work/recv.log" || fail "expected 6 chunks of at most 1000 bytes"
    grep -q ", 1 from other addresses dropped" "$work/recv.log" || fail "the stray datagram was not dropped and counted"

    # Nobody listening: the idle timeout ends the sender with exit 3.
    timeout -k 2 10 "$bin/chunk-recv" -b 127.0.0.1 -p 0 --port-file "$work/dead.port" --timeout 0.2 \
        >/dev/null 2>&1
    dead_port=$(cat "$work/dead.port")
    timeout -k 2 10 "$bin/chunk-send" --idle-timeout 0.5 "127.0.0.1:$dead_port" "$work/in.bin" 2>"$work/dead.log"
    rc=$?
    [ "$rc" = 3 ] || fail "chunk-send to a closed port exited $rc, expected 3"
    grep -q "idle timeout: no ack from the receiver" "$work/dead.log" || fail "no idle timeout message"

    # A slice that never gets through (the relay's drop-slice fault): the
    # receiver keeps acking the rest, and the sender gives up with exit 3.
    # Both end on their own --timeout: a signal to `timeout` while an ASan
    # build is exiting can deadlock LeakSanitizer, so none is sent.
    start stall-recv 10 chunk-recv -b 127.0.0.1 -p 0 --timeout 2.5 >/dev/null
    stall_recv=$started_pid
    start stall-relay 10 chunk-relay -q -l 127.0.0.1:0 --to "127.0.0.1:$started_port" --drop-slice 2 --timeout 2.5
    stall_relay=$started_pid
    timeout -k 2 10 "$bin/chunk-send" --idle-timeout 0.7 -c 4000 "127.0.0.1:$started_port" "$work/in.bin" \
        2>"$work/stall.log"
    rc=$?
    wait "$stall_recv"
    wait "$stall_relay"
    pids=()
    [ "$rc" = 3 ] || fail "chunk-send with slice 2 always dropped exited $rc, expected 3"
    grep -q "idle timeout: no slice newly acked for .*(chunk 0 stuck)" "$work/stall.log" \
        || fail "no stall message: $(head -n 1 "$work/stall.log")"
    grep -q "slices acked 3," "$work/stall.log" || fail "expected slices 0, 1 and 3 acked: $(grep sender: "$work/stall.log")"

    # The relay forwards any UDP protocol: a 20000-byte datagram that is no
    # chunk packet reaches the receiver, and the receiver's answer comes back.
    python3 - "$bin/chunk-relay" "$work" <<'PYTHON' || fail "the relay did not carry a 20000-byte non-chunk datagram both ways"
import os, socket, subprocess, sys, time
relay, work = sys.argv[1], sys.argv[2]
receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
receiver.bind(("127.0.0.1", 0))
receiver.settimeout(5)
port_file = os.path.join(work, "any-relay.port")
proc = subprocess.Popen([relay, "-q", "-l", "127.0.0.1:0", "--port-file", port_file,
                         "--to", "127.0.0.1:%d" % receiver.getsockname()[1], "--timeout", "2"])
for _ in range(100):
    if os.path.exists(port_file) and os.path.getsize(port_file) > 0:
        break
    time.sleep(0.05)
relay_port = int(open(port_file).read())
sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sender.settimeout(5)
payload = bytes(range(256)) * 78 + b"x" * 32
sender.sendto(payload, ("127.0.0.1", relay_port))
data, relay_address = receiver.recvfrom(65536)
receiver.sendto(data[::-1], relay_address)
answer, _ = sender.recvfrom(65536)
code = proc.wait(timeout=10)
sys.exit(0 if data == payload and answer == payload[::-1] and code == 0 else 1)
PYTHON

    # Bad arguments: exit 2 with a message; --help: exit 0.
    check_usage() { # EXPECTED PROGRAM ARGS...
        local expected=$1
        shift
        timeout -k 2 5 "$bin/$@" >/dev/null 2>"$work/usage.err"
        local rc=$?
        [ "$rc" = "$expected" ] || fail "$* exited $rc, expected $expected"
        if [ "$expected" = 2 ] && ! grep -q "^$1: .*(try --help)" "$work/usage.err"; then
            fail "$*: no clear message: $(cat "$work/usage.err")"
        fi
    }
    for p in chunk-send chunk-recv chunk-relay; do
        check_usage 0 "$p" --help
        check_usage 2 "$p" --no-such-option
        check_usage 2 "$p" --slice-size 0
    done
    check_usage 2 chunk-send
    check_usage 2 chunk-send --rate fast 127.0.0.1
    check_usage 2 chunk-send --timeout -1 127.0.0.1
    check_usage 2 chunk-send 127.0.0.1:99999
    check_usage 2 chunk-send -c 300K 127.0.0.1
    check_usage 2 chunk-recv --port 70000
    check_usage 2 chunk-recv --chunks 0
    check_usage 2 chunk-recv --chunks 2 --bytes 5
    check_usage 2 chunk-recv a b
    check_usage 2 chunk-relay --loss 120%
    check_usage 2 chunk-relay --latency-ab soon
    check_usage 2 chunk-relay --capture-at middle
    check_usage 2 chunk-relay --to 127.0.0.1:0
    echo "cli: stdin to stdout, stray datagram, timeout exit codes and bad arguments checked"
    ;;
*)
    echo "unknown mode '$mode' (relay, ipv6 or cli)"
    exit 2
    ;;
esac

if [ "$failed" = 0 ]; then echo "PASS: $mode"; fi
exit "$failed"
