#!/usr/bin/env python3
"""make-hostile-captures.py: write the hostile captures (pcap,
Ethernet/IPv4/UDP) that the dissector's time and memory must survive.

Every packet carries a valid CRC (protocol id 0x11223344) and end check, so
it gets past the decoder and into the transfer analysis: the point is to
attack the analysis state, not the parser (the fuzzers do that).

  scripts/make-hostile-captures.py OUTDIR                 # ctest sizes
  scripts/make-hostile-captures.py OUTDIR --full          # the long mode's sizes
  scripts/make-hostile-captures.py OUTDIR --only all-chunk-ids

Captures (name: what it holds; ctest size / --full size):

  all-chunk-ids       every fourth chunk id 0..65532 (every id 0..65535 at
                      --full) in one conversation: for each, the last slice
                      of a chunk that claims 256 slices, and an ack of it
                      (16 384 / 65 536 of each)
  slice-count-changes one chunk whose slice count changes on every packet
                      (1..256, cycling), 25 000 / 1 000 000 slices
  million-slices      one chunk of 256 slices, SliceSize 1 (decode with
                      -o chunk.slice_size:1), sent round robin with slice 17
                      never acked: 50 000 / 1 000 000 slice packets and an
                      ack every 100 ms
  ack-patterns        every ack bit pattern of 1..K slices (K = 12 / 16; all
                      2^k patterns for each k, each chunk announced by a
                      slice first), then random patterns of 256 slices
                      (2 500 / 100 000)
  conversations       UDP conversations (a source address and port each),
                      each with the last slice of a 256-slice chunk and an
                      ack, 25 000 / 100 000
  wide-acks           MaxSlicesPerChunk 65536, the largest the preference
                      allows (decode with -o chunk.max_slices:65536): a
                      slice announcing 65536 slices, then acks of 65536
                      random bits (8 KiB each), 200 / 5 000

Fragment protocol (protocol id 0x55667788, p2frag), on chunk's
port 40000 like the original examples, every packet valid on its own:

  frag-all-sequences  every sequence 0..32767 (0..65535 and on to 65535
                      again at --full: 131 072, crossing the wrap) of one
                      conversation, each a packet claiming 255 fragments of
                      which only the last (1 byte) is sent; 32 768 / 131 072
  frag-conversations  UDP conversations, each one fragment (the last of
                      255) of its own packet, 25 000 / 100 000
  frag-count-changes  one conversation whose fragment count changes on every
                      packet (1..255, cycling; each the last fragment, 1..64
                      bytes), a new sequence every 256 packets;
                      25 000 / 1 000 000

Each capture's tshark options are printed one per line as
"NAME<TAB>FILE<TAB>OPTIONS" (options may be empty), for the test runner.
Deterministic: the same arguments write the same bytes.
"""
import argparse
import os
import random
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapfile  # noqa: E402

# docs/protocol.md, "Constants" and "Every packet".
PROTOCOL_ID = 0x11223344
END_CHECK = b"\xe2\xac\x08\x99"
SLICE_SIZE = 1024
PORT = 40000
# CRC state after LE32(protocol id) and the CRC field taken as zero.
CRC_PREFIX = zlib.crc32(struct.pack("<I", PROTOCOL_ID) + b"\0\0\0\0")


# docs/p2frag.md, "The wire format, in short".
FRAG_PROTOCOL_ID = 0x55667788
FRAG_CRC_PREFIX = zlib.crc32(struct.pack("<I", FRAG_PROTOCOL_ID) + b"\0\0\0\0")


def bits_required(lo, hi):
    return (hi - lo).bit_length()


def seal(body_bits, nbits, data=b""):
    """Datagram from a body bit stream (value, length; LSB first, starting
    at bit 32): align, data, align, end check, CRC in front."""
    nbytes = (nbits + 7) // 8
    body = body_bits.to_bytes(nbytes, "little") + data + END_CHECK
    return struct.pack("<I", zlib.crc32(body, CRC_PREFIX)) + body


def slice_packet(chunk_id, slice_id, num_slices, data, max_slices=256, slice_size=SLICE_SIZE):
    w = bits_required(0, max_slices - 1)
    v = 0 | (chunk_id << 1) | (slice_id << 17) | ((num_slices - 1) << (17 + w))
    n = 17 + 2 * w
    if slice_id == num_slices - 1:
        bw = bits_required(1, slice_size)
        v |= (len(data) - 1) << n
        n += bw
    return seal(v, n, data)


def frag_packet(seq, fragment_id, num_fragments, data):
    """A fragment: sequence (16), type 0 (2 bits), fragment id (8), the count
    as sent (8, 256 -> 0), zero padding, then the data (no end check)."""
    v = seq | (0 << 16) | (fragment_id << 18) | ((num_fragments & 0xFF) << 26)
    body = v.to_bytes(5, "little") + data
    return struct.pack("<I", zlib.crc32(body, FRAG_CRC_PREFIX)) + body


def ack_packet(chunk_id, acked, max_slices=256):
    """acked: list of 0/1, slice 0 first."""
    w = bits_required(0, max_slices - 1)
    v = 1 | (chunk_id << 1) | ((len(acked) - 1) << 17)
    n = 17 + w
    bits = 0
    for i, b in enumerate(acked):
        if b:
            bits |= 1 << i
    v |= bits << n
    n += len(acked)
    return seal(v, n)


def ack_packet_bits(chunk_id, num, bits, max_slices=256):
    """Ack from an integer bitfield (bit i = slice i)."""
    w = bits_required(0, max_slices - 1)
    v = 1 | (chunk_id << 1) | ((num - 1) << 17) | (bits << (17 + w))
    return seal(v, 17 + w + num)


SENDER = bytes([10, 0, 0, 1])
RECEIVER = bytes([10, 0, 0, 2])
T0 = 1_700_000_000 * 1_000_000


def gen_all_chunk_ids(w, full):
    """Every chunk id once (every fourth one but at --full), in order
    (crossing 65535 -> 0 is not needed: they start at 0; ids half a wrap
    apart still meet): a 256-slice chunk's last slice, then an ack of it."""
    t = T0
    for cid in range(0, 65536, 1 if full else 4):
        w.add(t, slice_packet(cid, 255, 256, b"\x5a"), SENDER, 50000, RECEIVER, PORT)
        t += 500
        w.add(t, ack_packet_bits(cid, 256, 1 << 255), RECEIVER, PORT, SENDER, 50000)
        t += 500


def gen_count_changes(w, full, most, last_piece):
    """Packet i claims (i % most) + 1 pieces and is the last of them, 1..64
    bytes so that packets stay small: last_piece(i, num, data) makes it."""
    n = 1_000_000 if full else 25_000
    t = T0
    for i in range(n):
        num = (i % most) + 1
        w.add(t, last_piece(i, num, bytes([i & 0xFF]) * (1 + i % 64)), SENDER, 50000, RECEIVER, PORT)
        t += 1000


def gen_slice_count_changes(w, full):
    gen_count_changes(w, full, 256, lambda i, num, data: slice_packet(7, num - 1, num, data))


def gen_million_slices(w, full):
    """256 slices of 1 byte (SliceSize 1), round robin; slice 17 is lost
    every time; every 100 ms an ack of everything received so far."""
    n = 1_000_000 if full else 50_000
    pkts = [slice_packet(3, s, 256, bytes([s]), slice_size=1) for s in range(256)]
    t = T0
    got = 0
    next_ack = T0 + 100_000
    for i in range(n):
        s = i % 256
        w.add(t, pkts[s], SENDER, 50000, RECEIVER, PORT)
        if s != 17:
            got |= 1 << s
        t += 200
        if t >= next_ack:
            w.add(t, ack_packet_bits(3, 256, got), RECEIVER, PORT, SENDER, 50000)
            next_ack += 100_000
            t += 50


def gen_ack_patterns(w, full):
    kmax = 16 if full else 12
    nrand = 100_000 if full else 2_500
    rng = random.Random(5)
    t = T0
    for k in range(1, kmax + 1):
        w.add(t, slice_packet(k, k - 1, k, b"\x01"), SENDER, 50000, RECEIVER, PORT)
        t += 1000
        for bits in range(1 << k):
            w.add(t, ack_packet_bits(k, k, bits), RECEIVER, PORT, SENDER, 50000)
            t += 1000
    w.add(t, slice_packet(300, 255, 256, b"\x02"), SENDER, 50000, RECEIVER, PORT)
    t += 1000
    for _ in range(nrand):
        w.add(t, ack_packet_bits(300, 256, rng.getrandbits(256)), RECEIVER, PORT, SENDER, 50000)
        t += 1000


def conversation(c):
    """Source address and port of the conversation c (< 2^22): the port
    above 40000, since UDP tries the lower port's dissector first, and many
    ports below 40000 belong to other protocols."""
    return bytes([10, 1 + (c >> 16), (c >> 8) & 0xFF, c & 0xFF]), 40001 + (c % 25000)


def gen_each_conversation(w, full, first, reply=None):
    """100 000 conversations (conversation()) at --full, else 25 000:
    first(c) from the source of conversation c and, with reply, reply(c)
    back to it."""
    t = T0
    for c in range(100_000 if full else 25_000):
        src, sport = conversation(c)
        w.add(t, first(c), src, sport, RECEIVER, PORT)
        t += 100
        if reply:
            w.add(t, reply(c), RECEIVER, PORT, src, sport)
            t += 100


def gen_conversations(w, full):
    gen_each_conversation(w, full, lambda c: slice_packet(c & 0xFFFF, 255, 256, b"\x33"),
                          lambda c: ack_packet_bits(c & 0xFFFF, 256, 1 << 255))


def gen_wide_acks(w, full):
    n = 5_000 if full else 200
    rng = random.Random(7)
    t = T0
    w.add(t, slice_packet(9, 65535, 65536, b"\x07", max_slices=65536), SENDER, 50000, RECEIVER, PORT)
    for _ in range(n):
        t += 100_000
        w.add(t, ack_packet_bits(9, 65536, rng.getrandbits(65536), max_slices=65536),
                RECEIVER, PORT, SENDER, 50000)


def gen_frag_all_sequences(w, full):
    """Every sequence once per lap (two laps at --full: the wrap 65535 -> 0
    unwraps to new packets), each the last of 255 fragments, never more."""
    t = T0
    for i in range(131072 if full else 32768):
        w.add(t, frag_packet(i & 0xFFFF, 254, 255, b"\x5a"), SENDER, 50000, RECEIVER, PORT)
        t += 500


def gen_frag_conversations(w, full):
    gen_each_conversation(w, full, lambda c: frag_packet(c & 0xFFFF, 254, 255, b"\x33"))


def gen_frag_count_changes(w, full):
    gen_count_changes(w, full, 255, lambda i, num, data: frag_packet((i >> 8) & 0xFFFF, num - 1, num, data))


CAPTURES = [
    ("all-chunk-ids", gen_all_chunk_ids, ""),
    ("slice-count-changes", gen_slice_count_changes, ""),
    ("million-slices", gen_million_slices, "-o chunk.slice_size:1"),
    ("ack-patterns", gen_ack_patterns, ""),
    ("conversations", gen_conversations, ""),
    ("wide-acks", gen_wide_acks, "-o chunk.max_slices:65536"),
    ("frag-all-sequences", gen_frag_all_sequences, ""),
    ("frag-conversations", gen_frag_conversations, ""),
    ("frag-count-changes", gen_frag_count_changes, ""),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", help="folder to write NAME.pcap into (created)")
    ap.add_argument("--full", action="store_true", help="the long mode's sizes")
    ap.add_argument("--only", action="append", metavar="NAME",
                    help="write only this capture (repeatable)")
    ap.add_argument("--list", action="store_true", help="print the names and exit")
    args = ap.parse_args()
    names = [c[0] for c in CAPTURES]
    if args.list:
        print("\n".join(names))
        return 0
    for n in args.only or []:
        if n not in names:
            print("make-hostile-captures: unknown capture %r (known: %s)" % (n, ", ".join(names)),
                  file=sys.stderr)
            return 2
    os.makedirs(args.outdir, exist_ok=True)
    for name, gen, opts in CAPTURES:
        if args.only and name not in args.only:
            continue
        path = os.path.join(args.outdir, name + ".pcap")
        w = pcapfile.Writer(path + ".tmp")
        gen(w, args.full)
        count = w.close()
        os.replace(path + ".tmp", path)
        print("%s\t%s\t%s\t%d" % (name, path, opts, count))
    return 0


if __name__ == "__main__":
    sys.exit(main())
