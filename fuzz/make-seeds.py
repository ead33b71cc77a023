#!/usr/bin/env python3
"""make-seeds.py: writes the seed corpora of the endpoint fuzzers from the
spec's test vectors (vectors-256.txt, vectors-32.txt).

    make-seeds.py SPEC_DIR OUT_DIR

OUT_DIR/read_packet/   one file per vector packet: the mode byte of
                       fuzz_read_packet.c (variant, CRC fixed) + the datagram
OUT_DIR/endpoints/     programs for fuzz_endpoints.c: clean transfers in
                       each variant and across the chunk id wrap, lossy and
                       reordered ones, and every vector packet injected at
                       the receiver and at the sender

The input formats are documented at the top of each harness; the two must
change together.
"""
import os
import struct
import sys

import seed_corpus

# fuzz_endpoints operations (see fuzz_endpoints.c)
ADVANCE, DELIVER_A, DROP_A, DUP_A, DELIVER_B, DROP_B, DUP_B, INJECT, MUTATE_A, MUTATE_B, QUEUE, POP, ROUNDS = range(13)


def vectors(spec_dir, name):
    return seed_corpus.vectors(os.path.join(spec_dir, name), ("A", "S"))


def queue(size, seed):
    v = size - 1  # the harness takes 1 + (LE16 | (h & 3) << 16 if h >= 0xF0) % capacity
    return bytes([QUEUE, v & 0xFF, (v >> 8) & 0xFF, 0xF0 | (v >> 16), seed])


def inject(datagram, to_sender=False, fix_crc=False):
    return seed_corpus.inject(INJECT, (2 if to_sender else 0) | (1 if fix_crc else 0), datagram)


def main():
    spec_dir, out_dir = seed_corpus.command_line("make-seeds.py")
    v256 = vectors(spec_dir, "vectors-256.txt")
    v32 = vectors(spec_dir, "vectors-32.txt")
    if not v256 or not v32:
        sys.stderr.write("make-seeds.py: no vectors in %s\n" % spec_dir)
        return 1

    read_packet = [bytes([mode]) + datagram for mode, packets in ((0x04, v256), (0x05, v32)) for _, datagram in packets]
    # The custom-config path, set to the article's values (1 + 1023, 1 + 255).
    read_packet += [bytes([0x06]) + struct.pack("<HH", 1023, 255) + datagram for _, datagram in v256[:8]]
    seed_corpus.write(os.path.join(out_dir, "read_packet"),
                      {"vector-%03d" % n: seed for n, seed in enumerate(read_packet)})

    seeds = {
        # article variant, a 3000-byte chunk, clean link
        "clean-256": bytes([0x00, 0]) + queue(3000, 1) + bytes([ROUNDS, 20, POP]),
        # example program's variant, four chunks across the 65535 -> 0 wrap
        "wrap-32": bytes([0x01, 0x80 | 0x04]) + queue(1, 2) + queue(1024, 3) + queue(5000, 4) + queue(32768, 5)
        + bytes([ROUNDS, 80, POP]),
        # small slices, losses, a duplicate, reordering and a stale resend
        "lossy-small": bytes([0x02, 8, 15, 0x09]) + queue(100, 6)
        + bytes([ADVANCE, 10, DROP_A, DELIVER_A, DUP_A, 0, DELIVER_A, ADVANCE, 120, DELIVER_B, DROP_B,
                 ADVANCE, 200, DELIVER_A, DELIVER_A, DUP_A, 3, ADVANCE, 150, DELIVER_B, DUP_B, 0, POP,
                 ROUNDS, 30, POP]),
        # the largest chunk, unlimited rate, burst, ready queue of 2
        "burst-256k": bytes([0x8C, 0x40 | 0x08 | 1]) + queue(256 * 1024, 7) + queue(1000, 8) + bytes([ROUNDS, 40, POP]),
        # mutated slices and acks with the CRC fixed, in the middle of a transfer
        "mutate": bytes([0x20, 0x02]) + queue(4000, 9)
        + bytes([ADVANCE, 50, MUTATE_A, 0, 0x48, 0x00, 1, MUTATE_A, 1, 0x30, 0x00, 1, DELIVER_A, ADVANCE, 100,
                 MUTATE_B, 0, 0x22, 0x00, 1, ROUNDS, 20, POP]),
    }
    for i, (_, datagram) in enumerate(v256):
        seeds["inject-256-%03d" % i] = bytes([0x00, 0]) + inject(datagram) + inject(datagram, to_sender=True) \
            + bytes([ADVANCE, 200])
    for i, (_, datagram) in enumerate(v32):
        seeds["inject-32-%03d" % i] = bytes([0x01, 0]) + inject(datagram) + inject(datagram, to_sender=True) \
            + bytes([ADVANCE, 200])
    # a sender that ignores acks (the fault), against a receiver that completes
    seeds["ignores-acks"] = bytes([0x00, 0x30]) + queue(2000, 10) + bytes([ROUNDS, 30, POP])
    seed_corpus.write(os.path.join(out_dir, "endpoints"), seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
