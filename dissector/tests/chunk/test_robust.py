#!/usr/bin/env python3
"""Hostile input: thousands of mutated and random datagrams (bit flips,
truncation at every length, extension, random bytes, all-ones headers) on
port 40001 given to chunk with Decode As, decoded in Auto mode, with each explicit variant, and with
extreme preferences (MaxSlicesPerChunk 1, 3 and 65536, SliceSize 1 and 65535),
in one pass and two, with -V so every tree item is built.
WIRESHARK_ABORT_ON_DISSECTOR_BUG=1 turns any dissector bug into a failure;
tshark must also finish (no loop) and decode every frame as chunk.

Seeded (CHUNK_ROBUST_SEED, default 1) so a failure can be reproduced.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import chunktest as ct  # noqa: E402


def mutations(rng):
    base = []
    for variant in (256, 32):
        base.append(ct.seal(ct.slice_body(7, 0, 3, bytes(ct.SLICE_SIZE), max_slices=variant)))
        base.append(ct.seal(ct.slice_body(7, 2, 3, bytes(range(200)), max_slices=variant)))
        base.append(ct.seal(ct.ack_body(7, [rng.randint(0, 1) for _ in range(variant)], max_slices=variant)))
        base.append(ct.seal(ct.ack_body(7, [1, 0, 1], max_slices=variant)))
    out = []
    for b in base:
        # Every truncation of the short packets, a sample of the long ones.
        lengths = range(len(b)) if len(b) < 200 else sorted(rng.sample(range(len(b)), 60))
        for n in lengths:
            out.append(b[:n])
        for _ in range(60):
            m = bytearray(b)
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(m) * 8)
                m[i // 8] ^= 1 << (i % 8)
            out.append(bytes(m))
        # Header bits flipped but the CRC fixed, so the decoder goes deep.
        for _ in range(40):
            m = bytearray(b[4:])
            i = rng.randrange(min(len(m), 8) * 8)
            m[i // 8] ^= 1 << (i % 8)
            out.append(ct.seal(bytes(m)))
        out.append(b + bytes(rng.randint(1, 50)))
        out.append(ct.seal(b[4:] + b"\xe2\xac\x08\x99"))
    for _ in range(300):
        out.append(bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 120))))
    # Claimed counts far beyond the data: all-ones header fields.
    out.append(ct.seal(b"\xff" * 8 + ct.END_CHECK))
    out.append(ct.seal(b"\xfe" + b"\xff" * 7 + ct.END_CHECK))
    return out


def main():
    seed = int(os.environ.get("CHUNK_ROBUST_SEED", "1"))
    rng = random.Random(seed)
    pkts = mutations(rng)
    F = ct.Failures()
    runs = [
        ({}, []), ({}, ["-2"]),
        ({"chunk.max_slices": 256}, []), ({"chunk.max_slices": 32}, ["-2"]),
        ({"chunk.max_slices": 1, "chunk.slice_size": 1}, []),
        ({"chunk.max_slices": 3, "chunk.slice_size": 1000}, []),
        ({"chunk.max_slices": 65536, "chunk.slice_size": 65535}, []),
    ]
    with ct.scratch_dir() as tmp:
        path = os.path.join(tmp, "robust.pcap")
        # A few conversations, so Auto decisions happen at different points.
        # On port 40001 given to chunk by Decode As, so that the decoder
        # takes every datagram, well-formed or not (on its port, chunk
        # leaves a datagram that is not to the other dissectors).
        ct.write_pcap(path, [{"payload": p, "sport": 50000 + (i % 5), "dport": 40001}
                             for i, p in enumerate(pkts)])
        for prefs, extra in runs:
            try:
                out = ct.tshark(["-r", path, "-V", "-O", "chunk", "-d", "udp.port==40001,chunk"] +
                                ct.pref_args(prefs) + extra)
            except RuntimeError as e:
                F.check(False, "prefs %s %s: %s" % (prefs, extra, str(e)[-500:]))
                continue
            # UDP hands an empty payload to no one.
            want = sum(1 for p in pkts if p)
            n = out.count("\nChunk Protocol (Sending Large Blocks of Data)\n")
            F.check(n == want, "prefs %s %s: %d of %d frames decoded as chunk" % (prefs, extra, n, want))
    print("%d datagrams, %d runs, seed %d" % (len(pkts), len(runs), seed))
    F.finish("test_robust")


if __name__ == "__main__":
    main()
