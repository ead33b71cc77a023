#!/usr/bin/env python3
"""verify-truth.py: checks a capture's truth file against the capture itself.

    captures/verify-truth.py NAME [NAME ...]     (run in captures/, or give paths without the extension)

Decodes every frame of NAME.pcap with a small decoder of its own (wire-format.md:
LSB-first bit fields, CRC-32 seeded with the protocol id) and checks, for every
chunk in NAME.truth.json, that the frame numbers of each slice, the ack frames and
the completing ack (first all-ones ack) are exactly the ones the capture holds, and
that every frame is accounted for. This tests chunk-sim's bookkeeping, on which the
dissector's analysis tests rely. Exit status: 0 all agree, 1 a mismatch, 2 bad use.
"""
import collections
import json
import struct
import sys
import zlib


def bits_required(lo, hi):
    return (hi - lo).bit_length()


def decode(payload, protocol_id, max_slices, slice_size):
    """Returns ('S', chunk_id, slice_id, num_slices) or ('A', chunk_id, num_slices, bits), or None when the CRC is bad."""
    crc = struct.unpack('<I', payload[:4])[0]
    if zlib.crc32(struct.pack('<I', protocol_id) + b'\0\0\0\0' + payload[4:]) & 0xffffffff != crc:
        return None
    pos = 32

    def read(n):
        nonlocal pos
        value = 0
        for i in range(n):
            k = pos + i
            value |= ((payload[k // 8] >> (k % 8)) & 1) << i
        pos += n
        return value

    kind = read(1)
    chunk_id = read(16)
    if kind == 0:
        slice_id = read(bits_required(0, max_slices - 1))
        num_slices = read(bits_required(1, max_slices)) + 1
        return ('S', chunk_id, slice_id, num_slices)
    num_slices = read(bits_required(1, max_slices)) + 1
    return ('A', chunk_id, num_slices, [read(1) for _ in range(num_slices)])


def frames(path):
    """Yields (frame number, source IPv4 as text, UDP payload) of a pcap of Ethernet/IPv4/UDP frames."""
    data = open(path, 'rb').read()
    if struct.unpack('<I', data[:4])[0] != 0xa1b2c3d4:
        raise ValueError(path + ': not a little-endian microsecond pcap')
    offset, number = 24, 0
    while offset < len(data):
        _, _, caplen, _ = struct.unpack('<IIII', data[offset:offset + 16])
        frame = data[offset + 16:offset + 16 + caplen]
        offset += 16 + caplen
        number += 1
        yield number, '.'.join(str(b) for b in frame[26:30]), frame[42:]


def verify(name):
    truth = json.load(open(name + '.truth.json'))
    config = truth['config']
    a_host = truth['endpoints']['a'].split(':')[0]
    slice_frames = collections.defaultdict(list)
    ack_frames = collections.defaultdict(list)
    complete = {}
    problems = []
    count = 0
    for number, source, payload in frames(name + '.pcap'):
        count += 1
        packet = decode(payload, config['protocol_id'], config['max_slices'], config['slice_size'])
        if packet is None:
            problems.append('frame %d: bad CRC' % number)
            continue
        from_a = source == a_host
        if packet[0] == 'S':
            slice_frames[('a_to_b' if from_a else 'b_to_a', packet[1], packet[2])].append(number)
        else:
            key = ('b_to_a' if from_a else 'a_to_b', packet[1])
            ack_frames[key].append(number)
            if all(packet[3]) and key not in complete:
                complete[key] = number
    accounted = 0
    for chunk in truth['chunks']:
        key = (chunk['flow'], chunk['chunk_id'])
        capture = chunk['capture']
        for slice_id in range(chunk['num_slices']):
            want = capture['slice_frames'][slice_id]
            got = slice_frames.get(key + (slice_id,), [])
            accounted += len(want)
            if got != want:
                problems.append('%s chunk %d slice %d: frames %s in the capture, %s in the truth file' % (key + (slice_id, got, want)))
        accounted += len(capture['ack_frames'])
        if ack_frames.get(key, []) != capture['ack_frames']:
            problems.append('%s chunk %d: ack frames %s in the capture, %s in the truth file' % (key + (ack_frames.get(key, []), capture['ack_frames'])))
        if complete.get(key) != capture['complete_frame']:
            problems.append('%s chunk %d: first all-ones ack is frame %s, the truth file says %s' % (key + (complete.get(key), capture['complete_frame'])))
    if count != truth['capture']['frames']:
        problems.append('%d frames in the capture, %d in the truth file' % (count, truth['capture']['frames']))
    if accounted != count:
        problems.append('%d of %d frames belong to no chunk of the truth file' % (count - accounted, count))
    for p in problems:
        print('%s: %s' % (name, p))
    if not problems:
        print('%s: %d frames, %d chunks: the truth file agrees with the capture' % (name, count, len(truth['chunks'])))
    return not problems


def main(argv):
    if len(argv) < 2 or argv[1] in ('-h', '--help'):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    ok = True
    for name in argv[1:]:
        ok = verify(name[:-5] if name.endswith('.pcap') else name) and ok
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
