#!/usr/bin/env bash
# test-p2frag-loopback.sh: real-UDP tests of p2frag-send and p2frag-recv, directly
# and through chunk-relay (which forwards any UDP protocol), on 127.0.0.1 only.
#
#   scripts/test-p2frag-loopback.sh BIN_DIR relay|cli
#
#   relay  1 MB of random bytes in 8 KiB packets, p2frag-send -> chunk-relay ->
#          p2frag-recv twice: without impairment (the output is the input, byte
#          for byte) and with 10% loss, 5% duplicates, 5% reordering and
#          jitter (every packet delivered is one that was sent, whole, once;
#          the output is exactly the delivered packets; some are lost, as one
#          lost fragment loses its packet); the receiver's pcap read by plain
#          tshark as UDP with good checksums and the count p2frag-recv reports
#   cli    --help, bad arguments (exit 2), a receiver nobody sends to (exit 3),
#          a stray datagram that must not capture the receiver
#
# Ports come from the kernel (port 0, --port-file); every program runs under
# `timeout -k`. Exit 0 pass, 1 fail.
set -u
bin=${1:?usage: test-p2frag-loopback.sh BIN_DIR relay|cli}
mode=${2:?usage: test-p2frag-loopback.sh BIN_DIR relay|cli}
name=frag programs=(p2frag-send p2frag-recv chunk-relay)
. "$(dirname "${BASH_SOURCE[0]}")/loopback-common.sh"

# run_transfer NAME RELAY_OPTIONS...: in.bin through the relay; leaves
# NAME.out, NAME.send.man, NAME.recv.man, NAME.*.log, NAME.recv.pcap.
run_transfer() {
    local name=$1
    shift
    rm -f "$work/$name.rport" "$work/$name.lport"
    timeout -k 2 30 "$bin/p2frag-recv" -b 127.0.0.1 -p 0 --port-file "$work/$name.rport" --idle-timeout 1.5 \
        --manifest "$work/$name.recv.man" -w "$work/$name.recv.pcap" "$work/$name.out" 2> "$work/$name.recv.log" &
    local recv_pid=$!
    pids+=("$recv_pid")
    local recv_port
    recv_port=$(wait_port "$work/$name.rport") || { fail "$name: p2frag-recv did not start"; return 1; }
    timeout -k 2 30 "$bin/chunk-relay" -l 127.0.0.1:0 --port-file "$work/$name.lport" --to "127.0.0.1:$recv_port" \
        --idle-exit 2 "$@" 2> "$work/$name.relay.log" &
    local relay_pid=$!
    pids+=("$relay_pid")
    local relay_port
    relay_port=$(wait_port "$work/$name.lport") || { fail "$name: chunk-relay did not start"; return 1; }
    timeout -k 2 30 "$bin/p2frag-send" --rate 2MB -s 8K --manifest "$work/$name.send.man" "127.0.0.1:$relay_port" \
        "$work/in.bin" 2> "$work/$name.send.log"
    local send_rc=$?
    wait "$recv_pid"
    local recv_rc=$?
    wait "$relay_pid"
    [ "$send_rc" = 0 ] || fail "$name: p2frag-send exit $send_rc"
    [ "$recv_rc" = 0 ] || fail "$name: p2frag-recv exit $recv_rc"
    if [ "$failed" != 0 ]; then cat "$work/$name".*.log; fi
}

# check_delivered NAME: the receiver's manifest against the sender's, and the
# output against the receiver's manifest. Prints "DELIVERED SENT".
check_delivered() {
    python3 - "$work/$1" <<'PY'
import hashlib, sys
base = sys.argv[1]
sent = {}
for line in open(base + '.send.man'):
    seq, size, digest = line.split()
    sent[int(seq)] = (int(size), digest)
out = open(base + '.out', 'rb').read()
offset, seen, bad = 0, set(), 0
for line in open(base + '.recv.man'):
    seq, size, digest = line.split()
    seq, size = int(seq), int(size)
    if sent.get(seq) != (size, digest) or seq in seen:
        print('packet %d: delivered %s, sent %s%s' % (seq, (size, digest), sent.get(seq), ' (twice)' if seq in seen else ''))
        bad += 1
    seen.add(seq)
    if hashlib.sha256(out[offset:offset + size]).hexdigest() != digest:
        print('packet %d: the output at %d is not what the manifest says' % (seq, offset))
        bad += 1
    offset += size
if offset != len(out):
    print('output has %d bytes, the delivered packets %d' % (len(out), offset))
    bad += 1
print(len(seen), len(sent))
sys.exit(1 if bad else 0)
PY
}

case "$mode" in
relay)
    head -c 1000000 /dev/urandom > "$work/in.bin"
    run_transfer clean --latency 5ms
    if cmp -s "$work/in.bin" "$work/clean.out"; then echo "ok   clean: 1 MB through the relay, byte for byte"
    else fail "clean: output differs from the input"; fi

    run_transfer lossy --loss 10% --duplicate 5% --reorder 5% --jitter 2ms --latency 5ms --seed 7
    if counts=$(check_delivered lossy); then
        read -r delivered sent <<< "$(tail -1 <<< "$counts")"
        if [ "$delivered" -gt 0 ] && [ "$delivered" -lt "$sent" ]; then
            echo "ok   lossy: $delivered of $sent packets delivered, each whole and once, output exactly those"
        else
            fail "lossy: $delivered of $sent delivered (10% loss of 8-fragment packets must lose some, not all)"
        fi
    else
        fail "lossy: $counts"
    fi
    grep -q "duplicate [1-9]\|late [1-9]" "$work/lossy.recv.log" && echo "ok   lossy: duplicates dropped and counted" \
        || fail "lossy: no duplicate counted at 5% duplication"
    if command -v tshark > /dev/null; then
        frames=$(tshark -r "$work/lossy.recv.pcap" -o udp.check_checksum:TRUE -Y "udp && udp.checksum.status == 1" \
                 2>/dev/null | wc -l)
        received=$(sed -n 's/.* \([0-9]*\) received,.*/\1/p' "$work/lossy.recv.log")
        [ "$frames" = "$received" ] && [ "$frames" -gt 0 ] \
            && echo "ok   lossy: receiver's pcap holds its $frames datagrams as UDP with good checksums" \
            || fail "lossy: pcap has $frames good UDP frames, p2frag-recv received $received"
    fi
    ;;
cli)
    "$bin/p2frag-send" --help > "$work/help" && grep -q -- "--packet-size" "$work/help" && echo "ok   p2frag-send --help" \
        || fail "p2frag-send --help"
    "$bin/p2frag-recv" --help > "$work/help" && grep -q -- "--manifest" "$work/help" && echo "ok   p2frag-recv --help" \
        || fail "p2frag-recv --help"
    for args in "" "-s 0 127.0.0.1:1" "-s 300K 127.0.0.1:1" "--bogus 127.0.0.1:1" "127.0.0.1:0" "--interleave 0 x:1"; do
        # shellcheck disable=SC2086
        timeout 5 "$bin/p2frag-send" $args < /dev/null > /dev/null 2>&1
        rc=$?
        [ "$rc" = 2 ] && echo "ok   p2frag-send $args: exit 2" || fail "p2frag-send $args: exit $rc, want 2"
    done
    for args in "--packets 0" "--max-fragments 256" "-p 70000" "a b"; do
        # shellcheck disable=SC2086
        timeout 5 "$bin/p2frag-recv" $args > /dev/null 2>&1
        rc=$?
        [ "$rc" = 2 ] && echo "ok   p2frag-recv $args: exit 2" || fail "p2frag-recv $args: exit $rc, want 2"
    done
    timeout -k 2 10 "$bin/p2frag-recv" -b 127.0.0.1 -p 0 --packets 1 --timeout 1 -q > /dev/null 2>&1
    rc=$?
    [ "$rc" = 3 ] && echo "ok   nobody sends: exit 3" || fail "nobody sends: exit $rc, want 3"

    # A stray datagram first must not capture the receiver.
    head -c 20000 /dev/urandom > "$work/in.bin"
    timeout -k 2 15 "$bin/p2frag-recv" -b 127.0.0.1 -p 0 --port-file "$work/port" --packets 5 --timeout 10 \
        "$work/out" 2> "$work/recv.log" &
    recv_pid=$!
    pids+=("$recv_pid")
    port=$(wait_port "$work/port") || { fail "p2frag-recv did not start"; exit 1; }
    python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"\x00" * 40, ("127.0.0.1", int(sys.argv[1])))' "$port"
    sleep 0.2
    timeout -k 2 10 "$bin/p2frag-send" -q -s 4K "127.0.0.1:$port" "$work/in.bin"
    wait "$recv_pid"
    rc=$?
    if [ "$rc" = 0 ] && cmp -s "$work/in.bin" "$work/out" && grep -q "1 from other addresses dropped" "$work/recv.log"; then
        echo "ok   a stray datagram is dropped and counted; the sender's 5 packets arrive"
    else
        fail "stray datagram: exit $rc"; cat "$work/recv.log"
    fi
    ;;
*)
    echo "usage: test-p2frag-loopback.sh BIN_DIR relay|cli" >&2
    exit 2
    ;;
esac
[ "$failed" = 0 ]
