#!/usr/bin/env python3
"""make-seeds.py: seed corpus of fuzz_dissector from the committed captures
and the spec's test vectors.

    make-seeds.py CAPTURES_DIR VECTORS_DIR OUT_DIR

One seed per capture (pcap, and the real netcode captures' pcapng; its UDP datagrams as records of the harness' input
layout, directions and time steps kept, session options varied so every
mode is seeded), one per vector packet (the raw-datagram mode), and a few
small sequences (a slice and its ack in each variant). The layout is
documented at the top of fuzz_dissector.c; the two change together.
"""
import glob
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import pcapfile  # noqa: E402

OPT_TWO_PASS, OPT_TREE, OPT_HEUR, OPT_RAW, OPT_REUSE_FD, OPT_P2FRAG = 0x04, 0x08, 0x10, 0x20, 0x40, 0x80
STEPS_US = [0, 1, 1000, 10000, 50000, 99000, 101000, 150000,
            500000, 1000000, 1100000, 2000000, 10000000, -1000, -1000000, 3600000000]
MAX_FRAMES = 512


def step_index(delta_us):
    best = 0
    for i, s in enumerate(STEPS_US[:13]):   # forward steps only
        if abs(s - delta_us) < abs(STEPS_US[best] - delta_us):
            best = i
    return best


def frames(data):
    """(time in us, frame) of each packet of a pcap or pcapng file (pcapng:
    the real netcode and yojimbo captures), up to anything unreadable."""
    try:
        for ns, frame in pcapfile.records(data):
            yield ns // 1000, frame
    except ValueError:
        return


def udp_datagrams(path):
    """(time in us, to_sender, datagram) of each IPv4/UDP frame."""
    with open(path, "rb") as f:
        data = f.read()
    out = []
    for t, fr in frames(data):
        if len(fr) < 42 or fr[12:14] != b"\x08\x00" or fr[23] != 17:
            continue
        u = 14 + (fr[14] & 15) * 4
        sport, dport, ulen = struct.unpack_from("!HHH", fr, u)
        out.append((t, sport == 40000, fr[u + 8:u + ulen]))
    return out


def records(dgrams):
    out = bytearray()
    prev = dgrams[0][0] if dgrams else 0
    for t, to_sender, d in dgrams[:MAX_FRAMES]:
        flags = (1 if to_sender else 0) | (step_index(t - prev) << 4)
        prev = t
        out += bytes([flags]) + struct.pack("<H", len(d)) + d
    return bytes(out)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    caps, vecs, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    n = 0
    opts_cycle = [0, OPT_TWO_PASS, OPT_TREE | OPT_TWO_PASS, OPT_REUSE_FD | OPT_TREE, OPT_HEUR]
    for k, cap in enumerate(sorted(glob.glob(os.path.join(caps, "*.pcap")))):
        dg = udp_datagrams(cap)
        name = os.path.basename(cap)[:-5]
        opts = opts_cycle[k % len(opts_cycle)]
        if name == "variant-32" or name == "article-program":
            opts |= 2   # the 32 variant set explicitly, next to Auto below
        if name.startswith("frag-"):
            opts |= OPT_P2FRAG   # CRC fixes of mutated records use p2frag's id
        with open(os.path.join(outdir, "cap-%s" % name), "wb") as f:
            f.write(bytes([opts]) + records(dg))
        # The first 40 frames again in Auto with two passes: short seeds
        # mutate faster.
        with open(os.path.join(outdir, "cap-%s-head" % name), "wb") as f:
            f.write(bytes([OPT_TWO_PASS | OPT_TREE | (opts & OPT_P2FRAG)]) + records(dg[:40]))
        n += 2
    for vf in ("vectors-256.txt", "vectors-32.txt"):
        with open(os.path.join(vecs, vf)) as f:
            for i, line in enumerate(f):
                fields = line.split()
                if not fields or fields[0] not in ("A", "S"):
                    continue
                dgram = bytes.fromhex(fields[-1])
                with open(os.path.join(outdir, "vec-%s-%d" % (vf[8:-4], i)), "wb") as o:
                    o.write(bytes([OPT_RAW | OPT_TREE]) + dgram)
                n += 1
    # Fragment protocol vectors (vectors-fragments.txt): P, F and E lines as
    # raw datagrams, CRC fixed with p2frag's id; W lines hold whole packets.
    with open(os.path.join(vecs, "vectors-fragments.txt")) as f:
        for i, line in enumerate(f):
            fields = line.split()
            if not fields or fields[0] not in ("P", "F", "E"):
                continue
            hexf = {"P": 3, "F": 5, "E": 7}[fields[0]]
            if len(fields) <= hexf:
                continue
            try:
                dgram = bytes.fromhex(fields[hexf])
            except ValueError:
                continue
            with open(os.path.join(outdir, "vec-frag-%d" % i), "wb") as o:
                o.write(bytes([OPT_RAW | OPT_TREE | OPT_P2FRAG]) + dgram)
            n += 1
    # The real netcode and yojimbo captures (pcapng): on the heuristic port,
    # which netcode's request heuristic finds; the harness sets their keys.
    for cap in sorted(glob.glob(os.path.join(caps, "*.pcapng"))):
        dg = udp_datagrams(cap)
        name = os.path.basename(cap)[:-7]
        for tag, opts in (("", OPT_HEUR), ("-tree", OPT_HEUR | OPT_TREE | OPT_TWO_PASS)):
            with open(os.path.join(outdir, "cap-%s%s" % (name, tag)), "wb") as f:
                f.write(bytes([opts]) + records(dg[:60]))
            n += 1
    print("make-seeds: %d seeds in %s" % (n, outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
