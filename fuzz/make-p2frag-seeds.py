#!/usr/bin/env python3
"""make-p2frag-seeds.py: writes the seed corpus of fuzz_p2frag.c from the spec's
fragment vectors (vectors-fragments.txt).

    make-p2frag-seeds.py SPEC_DIR OUT_DIR

OUT_DIR/p2frag/ programs for fuzz_p2frag.c: every vector datagram injected alone
                (P, F, E lines), every group of fragments in order and
                reversed, and whole packets of several sizes fed in order,
                reversed, with a fragment missing and twice, at sequences
                near the 65535 -> 0 wrap. The input format is at the top of
                fuzz_p2frag.c; the two change together.
"""
import os
import struct
import sys

import seed_corpus

FRAGMENT, INJECT, REGULAR, BASE, PACKET = range(5)


def inject(datagram):
    # flags 0: the CRC stays as it is (the vectors' CRCs are right)
    return seed_corpus.inject(INJECT, 0, datagram)


def main():
    spec_dir, out_dir = seed_corpus.command_line('make-p2frag-seeds.py')
    path = os.path.join(spec_dir, 'vectors-fragments.txt')
    singles, groups, group = [], [], None
    with open(path) as f:
        for line in f:
            w = line.split()
            if line.startswith('# G '):
                group = []
                groups.append(group)
            elif w and w[0] in ('P', 'F', 'E'):
                datagram = bytes.fromhex(w[3] if w[0] == 'P' else w[5] if w[0] == 'F' else w[7])
                singles.append(datagram)
                if w[0] == 'F' and group is not None:
                    group.append(datagram)
    if not singles or not groups:
        sys.stderr.write('make-p2frag-seeds.py: no vectors in %s\n' % path)
        return 1
    seeds = []
    for datagram in singles:
        seeds.append(bytes([0]) + inject(datagram))
    for group in groups:
        seeds.append(bytes([0]) + b''.join(inject(d) for d in group))
        seeds.append(bytes([0]) + b''.join(inject(d) for d in reversed(group)))
    for base in (0, 300, 65530):
        for size4, order in ((3000, 0), (10000, 1), (40000, 2), (2000, 3), (65279, 0x80)):
            seeds.append(bytes([0, BASE]) + struct.pack('<H', base) +
                         bytes([PACKET, 0]) + struct.pack('<H', size4) + bytes([order]) +
                         bytes([PACKET, 5]) + struct.pack('<H', size4 // 2) + bytes([order]) +
                         bytes([REGULAR, 9, 1, 3, 4, 5]))
    # interleaved fragments, a count conflict and a too-old sequence by hand
    seeds.append(bytes([0x84, FRAGMENT, 0, 0, 3]) + struct.pack('<H', 1024) + bytes([0]) +
                 bytes([FRAGMENT, 1, 0, 2]) + struct.pack('<H', 1024) + bytes([0]) +
                 bytes([FRAGMENT, 0, 1, 2]) + struct.pack('<H', 1024) + bytes([0]) +
                 bytes([BASE]) + struct.pack('<H', 400) + bytes([FRAGMENT, 0, 0, 1]) + struct.pack('<H', 5) + bytes([0]) +
                 bytes([BASE]) + struct.pack('<H', 0) + bytes([FRAGMENT, 0, 2, 3]) + struct.pack('<H', 7) + bytes([0]))
    seed_corpus.write(os.path.join(out_dir, 'p2frag'), {'seed-%04d' % i: seed for i, seed in enumerate(seeds)})
    return 0


if __name__ == '__main__':
    sys.exit(main())
