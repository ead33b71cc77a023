#!/usr/bin/env python3
"""hostile.py: hostile netgame captures, tshark with the plugin against
tshark with --disable-protocol netgame: every frame decoded, time and peak
memory bounded (docs/robustness.md, "netgame").

  hostile.py --work DIR            # ctest sizes (ctest netgame.hostile)
  hostile.py --work DIR --full     # the full sizes
  hostile.py --work DIR --only conversations

Captures (written here, Ethernet/IPv4/UDP to port 30000, one pass):

  seq-jumps      two sides whose sequences and acks jump by 2^31 (and odd
                 amounts) every packet, 1 us apart
  ack-bits       every single-bit, every per-byte value (4 x 256), every
                 prefix mask and random ack-bit patterns, acking a peer that
                 sends consecutive sequences
  conversations  connections of one packet each way (ctest 25 000, --full
                 100 000)
  never-acked    one side sends without an answer, 1 us apart (ctest
                 60 000, --full 1 000 000), all within the 1 s loss window
  (seq-jumps: 50 000 / 1 000 000 packets; ack-bits: 25 000 / 1 000 000
  random patterns)

Bounds: dissector/tests/hostile_bounds.py (memory: per connection the
analysis keeps ~1 KiB and Wireshark's own conversation, which the reference
never creates, about as much; connections of one packet each way are the
worst case). CHUNK_BUILD_DIR selects the build tree.
"""
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import hostile_bounds as hb  # noqa: E402
from hostile_bounds import Writer  # noqa: E402

ID = 0x11223344


A = bytes([10, 9, 0, 1])
B = bytes([10, 9, 0, 2])


def hdr(seq, ack, bits):
    return struct.pack(">IIII", ID, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, bits & 0xFFFFFFFF) + b"\0" * 8


def seq_jumps(path, n):
    w = Writer(path)
    rnd = random.Random(1)
    sa = sb = 0
    for i in range(n // 2):
        sa = (sa + (1 << 31) + rnd.choice((0, 1, 3, 7, 33))) & 0xFFFFFFFF
        sb = (sb + (1 << 31) - rnd.choice((0, 1, 5))) & 0xFFFFFFFF
        w.add(2 * i, hdr(sa, sb ^ (1 << 31), rnd.getrandbits(32)), A, 30001, B, 30000)
        w.add(2 * i + 1, hdr(sb, sa, rnd.getrandbits(32)), B, 30000, A, 30001)
    return w.close()


def ack_bits(path, n_random):
    patterns = [1 << i for i in range(32)]
    patterns += [v << (8 * b) for b in range(4) for v in range(256)]
    patterns += [(1 << k) - 1 for k in range(33)] + [0xFFFFFFFF ^ ((1 << k) - 1) for k in range(33)]
    rnd = random.Random(2)
    patterns += [rnd.getrandbits(32) for _ in range(n_random)]
    w = Writer(path)
    t = 0
    for i, bits in enumerate(patterns):
        w.add(t, hdr(i, 0, 0xFFFFFFFF), A, 30001, B, 30000)     # A's sequence i
        w.add(t + 1, hdr(i, i, bits), B, 30000, A, 30001)        # B acks i with the pattern
        t += 1000
    return w.close()


# UDP ports another dissector registers (tshark -G decodes): UDP asks that
# dissector before netgame's port heuristic, so a client there is not
# netgame's without Decode As (docs/netgame.md). Filled in by main().
TAKEN_PORTS = set()


def taken_udp_ports(env):
    out = subprocess.run([hb.CHUNK_TSHARK, "-G", "decodes"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True).stdout
    return {int(f[1]) for f in (line.split("\t") for line in out.splitlines())
            if len(f) >= 3 and f[0] == "udp.port" and f[1].isdigit() and f[2] != "netgame"}


def conversations(path, n):
    w = Writer(path)
    free = [p for p in range(30001, 65536) if p not in TAKEN_PORTS]
    for i in range(n):
        src = bytes([10, 20 + (i >> 16), (i >> 8) & 0xFF, i & 0xFF])
        port = free[i % len(free)]
        w.add(2 * i, hdr(0, 0, 0), src, port, B, 30000)
        w.add(2 * i + 1, hdr(0, 0, 1), B, 30000, src, port)
    return w.close()


def never_acked(path, n):
    w = Writer(path)
    for i in range(n):
        w.add(i, hdr(i, 0, 0), A, 30001, B, 30000)
    return w.close()


def cases(args, build, env, work):
    TAKEN_PORTS.update(taken_udp_ports(env))

    def case(name, write, size):  # every frame shown as netgame, its analysis flags asked for
        return (name, lambda path: write(path, size), [], hb.EVERY_FRAME, hb.EXTRA_PER_BYTE,
                ["netgame.analysis.flags"])
    return [
        case("seq-jumps", seq_jumps, 1000000 if args.full else 50000),
        case("ack-bits", ack_bits, 1000000 if args.full else 25000),
        case("conversations", conversations, 100000 if args.full else 25000),
        case("never-acked", never_acked, 1000000 if args.full else 60000),
    ]


if __name__ == "__main__":
    sys.exit(hb.main("netgame", __doc__, cases, full=True))
