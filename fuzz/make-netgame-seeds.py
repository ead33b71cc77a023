#!/usr/bin/env python3
"""make-netgame-seeds.py: writes the seed corpus of fuzz_netgame.c from the
spec's netgame vectors (vectors-netgame.txt).

    make-netgame-seeds.py SPEC_DIR OUT_DIR

OUT_DIR/netgame/   programs for fuzz_netgame.c: clean and lossy runs in each
                   sequence space, a wrap near MaxSequence, reordering,
                   duplicates, the stop-acking fault, a timeout and a
                   reconnection, and every R-line datagram injected at each end

The input format is documented at the top of fuzz_netgame.c; the two must
change together.
"""
import os
import sys

import seed_corpus

ADVANCE, DELIVER_A, DROP_A, DUP_A, DELIVER_B, DROP_B, DUP_B, INJECT, MUTATE_A, MUTATE_B, SEND, ROUNDS = range(12)


def inject(datagram, to_client=False, stranger=False):
    return seed_corpus.inject(INJECT, (1 if to_client else 0) | (2 if stranger else 0), datagram[:2048])


def main():
    spec_dir, out_dir = seed_corpus.command_line("make-netgame-seeds.py")
    datagrams = [d for _, d in seed_corpus.vectors(os.path.join(spec_dir, "vectors-netgame.txt"), ("R", "C"))]
    if not datagrams:
        sys.stderr.write("make-netgame-seeds.py: no vectors in %s\n" % spec_dir)
        return 1
    seeds = {}
    for space in range(4):
        seeds["clean-%d" % space] = bytes([space | 0x10, ROUNDS, 200])
        seeds["wrap-%d" % space] = bytes([space | 0x04 | 0x10, ROUNDS, 120])
        lossy = bytes([space | 0x20])
        for k in range(40):
            lossy += bytes([ADVANCE, 33, DELIVER_A if k % 3 else DROP_A, DELIVER_B if k % 4 else DROP_B])
        seeds["lossy-%d" % space] = lossy
    reorder = bytes([0x10, ROUNDS, 10])
    for k in range(30):
        reorder += bytes([ADVANCE, 40, DUP_A, 2, DUP_B, 1, DELIVER_A, DELIVER_B, DROP_A])
    seeds["reorder-dup"] = reorder
    seeds["stop-acking"] = bytes([0x40 | 0x10, ROUNDS, 150])
    seeds["timeout-reconnect"] = bytes([0x80 | 0x10, ROUNDS, 30, ADVANCE, 255, ROUNDS, 30]) \
        + inject(datagrams[0], stranger=True) + bytes([ROUNDS, 30])
    seeds["manual"] = bytes([0x08]) + bytes([SEND, 10, SEND, 11, DELIVER_A, DELIVER_B, ADVANCE, 50] * 20)
    seeds["mutate"] = bytes([0x10, ROUNDS, 20]) + bytes([ADVANCE, 20, MUTATE_A, 0, 0x30, 0x00, MUTATE_B, 0, 0x5f, 0x00,
                                                         ROUNDS, 5])
    for i, datagram in enumerate(datagrams[:60]):
        seeds["inject-%03d" % i] = bytes([0x10]) + inject(datagram) + bytes([ROUNDS, 3]) \
            + inject(datagram, to_client=True) + bytes([ROUNDS, 3])
    seed_corpus.write(os.path.join(out_dir, "netgame"), seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
