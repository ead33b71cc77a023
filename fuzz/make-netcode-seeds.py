#!/usr/bin/env python3
"""make-netcode-seeds.py OUT_DIR: seed inputs for fuzz_netcode (see its header
for the input format): a handshake that connects and exchanges payloads, the
same with losses and replays, and injected datagrams of every prefix."""
import os
import sys

import seed_corpus


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    advance = lambda ms: bytes([0, ms])
    handshake = advance(20) + b'\x01' + b'\x04' + advance(110) + b'\x01' + b'\x04'
    play = b''.join(bytes([9, 40]) + advance(50) + b'\x01\x04' for _ in range(6))
    seeds = {
        'connect': bytes([0]) + handshake + play,
        'one-slot': bytes([1]) + handshake + play,
        'lossy': bytes([2]) + advance(20) + b'\x02' + advance(120) + b'\x01\x05' + advance(120) + b'\x01\x04'
                 + advance(120) + b'\x01\x03\x00\x04\x06\x00' + play + b'\x03\x00\x06\x00',
        'mutate': bytes([0]) + handshake + bytes([9, 10, 8, 0, 20, 0, 8, 0x80, 30, 0]) + play,
        'inject': bytes([0]) + handshake + b''.join(bytes([7, f, 18, 0, prefix]) + bytes(17)
                                                    for f in (0, 1, 2) for prefix in (0x11, 0x14, 0x15, 0x16, 0x82, 0x93)),
        'timeout': bytes([2]) + handshake + advance(255) * 10,
    }
    seed_corpus.write(os.path.join(argv[1], 'netcode'), seeds)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
