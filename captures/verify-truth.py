#!/usr/bin/env python3
"""verify-truth.py: checks a capture's truth file against the capture itself.

For p2frag-sim captures (generator "p2frag-sim") it decodes every frame as a
fragment or regular packet (protocol id from the truth file) or, with --mixed, a
chunk packet, and checks each datagram's frames, the frame counts, the chunk
frames, and, captured at the receiver, that the fragments in the capture
reassemble to the sha256 the truth file gives for every delivered packet and
that missing_fragments are exactly the fragment ids absent from the capture.

For netcode-sim captures (generator "netcode-sim") it reads every frame's
prefix byte and sequence (no decryption) and checks that each packet record's
frames hold a datagram of its type, sequence, length and direction, that every
frame belongs to exactly one record, and the per-connection counts (verify_netcode).

For yojimbo-sim captures (generator "yojimbo-sim") it decrypts every netcode
payload packet with NAME.keys (needs python3-cryptography), reassembles the
reliable fragments, decodes each yojimbo connection packet with a decoder of its
own and checks that the messages and block fragments the capture holds are
exactly the sends the truth file lists for the side captured (a subset for the
other side), each under its reliable sequence (verify_yojimbo).

For netgame-sim captures (generator "netgame-sim") it decodes every frame's
16-byte big-endian header and checks every packet's frames, acked-in and
acking frames against it (verify_netgame).

A simulator added later has its check in truth-<simulator>.py beside this
file (its verify(NAME) returns True when they agree); a generator with no
check is an error (exit status 2).

    captures/verify-truth.py NAME [NAME ...]     (run in captures/, or give paths without the extension)

Decodes every frame of NAME.pcap with a small decoder of its own (docs/protocol.md:
LSB-first bit fields, CRC-32 seeded with the protocol id) and checks, for every
chunk in NAME.truth.json, that the frame numbers of each slice, the ack frames and
the completing ack (first all-ones ack) are exactly the ones the capture holds, and
that every frame is accounted for. This tests chunk-sim's bookkeeping, on which the
dissector's analysis tests rely. Exit status: 0 all agree, 1 a mismatch, 2 bad use.
"""
import collections
import importlib.util
import json
import os
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
    if truth.get('generator') == 'p2frag-sim':
        return verify_frag(name, truth)
    if truth.get('generator') == 'reliable-sim':
        return verify_reliable(name, truth)
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


def p2frag_decode(payload, protocol_id):
    """Returns ('F', sequence, fragment_id, num_fragments, data) or ('R', sequence, type), or None (bad CRC)."""
    if len(payload) < 7:
        return None
    crc = struct.unpack('<I', payload[:4])[0]
    if zlib.crc32(struct.pack('<I', protocol_id) + b'\0\0\0\0' + payload[4:]) & 0xffffffff != crc:
        return None
    sequence = payload[4] | payload[5] << 8
    header = payload[6] | (payload[7] << 8 if len(payload) > 7 else 0) | (payload[8] << 16 if len(payload) > 8 else 0)
    if header & 3:
        return ('R', sequence, header & 3)
    return ('F', sequence, (header >> 2) & 0xff, (header >> 10) & 0xff, payload[9:])


def verify_frag(name, truth):
    import hashlib
    config = truth['config']
    problems = []
    frames_of = collections.defaultdict(list)  # (sequence, fragment id or None) -> frames
    data_of = {}                               # (sequence, fragment id) -> data of its first frame
    chunk_frames = collections.defaultdict(list)
    count = fragments = regulars = chunks = 0
    for number, source, payload in frames(name + '.pcap'):
        count += 1
        packet = p2frag_decode(payload, config['protocol_id'])
        if packet is None and config['mixed']:
            chunk = decode(payload, config['chunk_protocol_id'], 256, 1024)
            if chunk is not None:
                chunks += 1
                chunk_frames[chunk[1]].append(number)
                continue
        if packet is None:
            problems.append('frame %d: neither protocol\'s CRC' % number)
            continue
        if packet[0] == 'F':
            fragments += 1
            key = (packet[1], packet[2])
            data_of.setdefault(key, packet[4])
        else:
            regulars += 1
            key = (packet[1], None)
            data_of.setdefault(key, payload)
        frames_of[key].append(number)
    capture = truth['capture']
    for what, got, want in (('frames', count, capture['frames']), ('fragment frames', fragments, capture['fragment_frames']),
                            ('regular frames', regulars, capture['regular_frames']), ('chunk frames', chunks, capture['chunk_frames'])):
        if got != want:
            problems.append('%d %s in the capture, %d in the truth file' % (got, what, want))
    at_receiver = capture['at'] == 'b'
    want_frames = collections.defaultdict(list)
    for packet in truth['packets']:
        for datagram in packet['datagrams']:
            want_frames[(packet['sequence'], datagram['fragment_id'])] += datagram['frames']
        if at_receiver and packet['fragmented']:
            absent = [i for i in range(packet['num_fragments']) if not frames_of.get((packet['sequence'], i))]
            if absent != packet['missing_fragments']:
                problems.append('packet %d (sequence %d): fragments %s absent from the capture, the truth file says %s'
                                % (packet['index'], packet['sequence'], absent, packet['missing_fragments']))
        if at_receiver and packet['delivered'] and not packet['out_of_window']:
            if packet['fragmented']:
                parts = [data_of.get((packet['sequence'], i)) for i in range(packet['num_fragments'])]
                whole = b''.join(parts) if all(p is not None for p in parts) else None
            else:
                whole = data_of.get((packet['sequence'], None))
            digest = hashlib.sha256(whole).hexdigest() if whole is not None else None
            if digest != packet['sha256_delivered'] or digest != packet['sha256_sent']:
                problems.append('packet %d (sequence %d): the capture reassembles to %s, the truth file says %s'
                                % (packet['index'], packet['sequence'], digest, packet['sha256_delivered']))
    for key in set(frames_of) | set(want_frames):
        if sorted(frames_of.get(key, [])) != sorted(want_frames.get(key, [])):
            problems.append('sequence %d fragment %s: frames %s in the capture, %s in the truth file'
                            % (key[0], key[1], frames_of.get(key, []), want_frames.get(key, [])))
    for chunk in truth['chunks']:
        if chunk_frames.get(chunk['chunk_id'], []) != chunk['frames']:
            problems.append('chunk %d: frames %s in the capture, %s in the truth file'
                            % (chunk['chunk_id'], chunk_frames.get(chunk['chunk_id'], []), chunk['frames']))
    for p in problems:
        print('%s: %s' % (name, p))
    if not problems:
        print('%s: %d frames, %d packets, %d chunks: the truth file agrees with the capture'
              % (name, count, len(truth['packets']), len(truth['chunks'])))
    return not problems


def main(argv):
    if len(argv) < 2 or argv[1] in ('-h', '--help'):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    ok = True
    for name in argv[1:]:
        name = name[:-5] if name.endswith('.pcap') else name
        generator = json.load(open(name + '.truth.json')).get('generator', 'chunk-sim')
        check = checker(generator)
        if check is None:
            print('%s: no check of generator %r: neither here nor in %s' % (name, generator, truth_module(generator)))
            return 2
        ok = check(name) and ok
    return 0 if ok else 1


# The check of each simulator of the protocol table (dissector/protocols.txt)
# is here, or, for a simulator added later, in truth-<simulator>.py beside
# this file, whose verify(name) returns True when NAME.truth.json agrees
# with NAME.pcap (printing what does not).
CHECKS = {'chunk-sim': lambda name: verify(name), 'p2frag-sim': lambda name: verify(name),
          'reliable-sim': lambda name: verify(name), 'netgame-sim': lambda name: verify_netgame(name),
          'netcode-sim': lambda name: verify_netcode(name), 'yojimbo-sim': lambda name: verify_yojimbo(name)}


def truth_module(generator):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), 'truth-%s.py' % generator)


def checker(generator):
    """The function that checks a truth file of generator, or None."""
    if generator in CHECKS:
        return CHECKS[generator]
    path = truth_module(generator)
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location('truth_' + generator.replace('-', '_'), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.verify


# ---- netcode-sim captures (docs/truth.md, "netcode-sim") ----

NETCODE_TYPES = ['request', 'denied', 'challenge', 'response', 'keep-alive', 'payload', 'disconnect']


def verify_netcode(name):
    truth = json.load(open(name + '.truth.json'))
    problems = []
    seen = {}
    for number, source, payload in frames(name + '.pcap'):
        prefix = payload[0]
        kind = 'request' if prefix == 0 else NETCODE_TYPES[prefix & 15] if (prefix & 15) < 7 else None
        sequence = None
        if prefix:
            n = prefix >> 4
            sequence = int.from_bytes(payload[1:1 + n], 'little')
        seen[number] = (source, kind, sequence, len(payload))
    claimed = set()
    counts = collections.Counter()
    for r in truth['packets']:
        counts[(r['client'], r['from'], r['type'])] += 1
        for f in r['frames']:
            if f in claimed:
                problems.append('frame %d claimed twice' % f)
            claimed.add(f)
            if f not in seen:
                problems.append('packet %d: frame %d not in the capture' % (r['index'], f))
                continue
            source, kind, sequence, length = seen[f]
            want_source = '10.0.0.2' if r['from'] == 'b' else '10.0.0.1'
            if (source, kind, sequence, length) != (want_source, r['type'], r['sequence'], r['bytes']):
                problems.append('packet %d: frame %d holds %s %s seq %s %d bytes, the truth says %s %s seq %s %d bytes'
                                % (r['index'], f, source, kind, sequence, length, want_source, r['type'],
                                   r['sequence'], r['bytes']))
        if r['fate'] in ('lost', 'fault_dropped', 'queue_dropped') and r['deliveries']:
            problems.append('packet %d: %s but delivered' % (r['index'], r['fate']))
        if r['taken'] > r['deliveries']:
            problems.append('packet %d: taken more often than delivered' % r['index'])
    unclaimed = sorted(set(seen) - claimed)
    if unclaimed:
        problems.append('frames in no packet record: %s' % unclaimed[:10])
    if len(seen) != truth['capture']['frames']:
        problems.append('%d frames, the truth file says %d' % (len(seen), truth['capture']['frames']))
    for c in truth['connections']:
        for side, who in (('client_side', 'a'), ('server_side', 'b')):
            for t in NETCODE_TYPES:
                if c[side]['sent'][t] != counts[(c['client'], who, t)]:
                    problems.append('client %d %s sent %d %s, the records say %d'
                                    % (c['client'], side, c[side]['sent'][t], t, counts[(c['client'], who, t)]))
    for p in problems[:20]:
        print('%s: %s' % (name, p))
    if not problems:
        print('%s: %d frames, %d packets, %d connections: the truth file agrees with the capture'
              % (name, len(seen), len(truth['packets']), len(truth['connections'])))
    return not problems


# ---- yojimbo-sim captures (docs/truth.md, "yojimbo-sim") ----

class Bits:
    """serialize's order: bit n is bit n % 8 of byte n // 8."""
    def __init__(self, data):
        self.data, self.pos = data, 0

    def read(self, n):
        if self.pos + n > len(self.data) * 8:
            raise ValueError('past the end')
        v = 0
        for i in range(n):
            v |= ((self.data[(self.pos + i) >> 3] >> ((self.pos + i) & 7)) & 1) << i
        self.pos += n
        return v

    def int(self, lo, hi):
        v = self.read((hi - lo).bit_length())
        if v > hi - lo:
            raise ValueError('out of range')
        return lo + v

    def align(self):
        if self.read((8 - self.pos % 8) % 8):
            raise ValueError('padding not zero')

    def skip_bytes(self, n):
        self.align()
        if self.pos // 8 + n > len(self.data):
            raise ValueError('bytes past the end')
        self.pos += 8 * n

    def relative(self, previous):
        if self.read(1):
            return previous + 1
        for lo, hi in ((2, 6), (7, 23), (24, 280), (281, 4377), (4378, 69914)):
            if self.read(1):
                return previous + self.int(lo, hi)
        return self.read(32)


TEST_MESSAGE_BITS = [1, 320, 120, 4, 256, 45, 11, 13, 101, 100, 84, 95, 203, 2, 3, 8, 512, 5, 3, 7, 50]


def yojimbo_body(b, kind):
    """The test message set's bodies: returns the sequence field."""
    if kind == 2:
        raise ValueError('TestSerializeFailOnReadMessage')
    if kind not in (0, 1):
        return None
    sequence = b.read(16)
    if kind == 0:
        for _ in range(TEST_MESSAGE_BITS[sequence % 21]):
            if b.read(1):
                raise ValueError('dummy bit set')
    return sequence


def yojimbo_packet(data, channels, types):
    """[(channel, id or sequence, fragment or None)] of one connection packet."""
    b, out = Bits(data), []
    n = b.int(0, len(channels))
    for _ in range(n):
        c = b.int(0, len(channels) - 1) if len(channels) > 1 else 0
        ch = channels[c]
        max_fragments = -(-ch['max_block_size'] // ch['block_fragment_size'])
        if b.read(1):
            mid = b.read(16)
            nf = b.int(1, max_fragments) if max_fragments > 1 else 1
            fid = b.int(0, nf - 1) if nf > 1 else 0
            b.skip_bytes(b.int(1, ch['block_fragment_size']))
            if fid == 0 and yojimbo_body(b, b.int(0, types - 1) if types > 1 else 0) is None:
                raise ValueError('fragment 0 without a block message')
            out.append((c, mid, fid))
            continue
        if not b.read(1):
            continue
        count = b.int(1, ch['max_messages_per_packet'])
        ids = []
        if ch['type'] == 'ro':
            ids.append(b.read(16))
            for _ in range(count - 1):
                ids.append(b.relative(ids[-1]) % 65536)
        for i in range(count):
            kind = b.int(0, types - 1) if types > 1 else 0
            sequence = yojimbo_body(b, kind)
            if ch['type'] == 'uu' and kind == 1:
                b.skip_bytes(b.int(1, ch['max_block_size']))
            out.append((c, ids[i] if ids else sequence, None))
    return out


def frame_times(path):
    """The time of every frame of a pcap, in seconds."""
    data = open(path, 'rb').read()
    offset, times = 24, []
    while offset < len(data):
        sec, usec, caplen, _ = struct.unpack('<IIII', data[offset:offset + 16])
        times.append(sec + usec / 1e6)
        offset += 16 + caplen
    return times


def yojimbo_sends(name, truth, captured=None):
    """{(from, reliable sequence, channel, id, fragment)} found in the capture;
    into captured, when given, (from, reliable sequence) -> the times of its frames."""
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
    keys = {}
    for line in open(name + '.keys'):
        if line.startswith('NETCODE_CONNECTION_KEYS'):
            _, c2s, s2c = line.split()
            keys = {'10.0.0.1': ('client', bytes.fromhex(c2s)), '10.0.0.2': ('server', bytes.fromhex(s2c))}
    ad_head = b'NETCODE 1.02\0' + (0x1122334455667788).to_bytes(8, 'little')
    found, pieces, count = set(), {}, 0
    times = frame_times(name + '.pcap')
    for number, source, payload in frames(name + '.pcap'):
        count += 1
        prefix = payload[0]
        if prefix & 15 != 5:
            continue
        side, key = keys[source]
        n = prefix >> 4
        sequence = int.from_bytes(payload[1:1 + n], 'little')
        nonce = bytes(4) + sequence.to_bytes(8, 'little')
        plain = ChaCha20Poly1305(key).decrypt(nonce, payload[1 + n:], ad_head + bytes([prefix]))
        if captured is not None:
            captured.setdefault((side, plain[1] | plain[2] << 8 if plain[0] & 1 else reliable_header(plain)[0]),
                                []).append(times[number - 1])
        if plain[0] & 1:  # a reliable fragment: id, count - 1, and fragment 0 embeds the header
            rseq, fid, nf = plain[1] | plain[2] << 8, plain[3], plain[4] + 1
            start = 5 + (reliable_header(plain[5:])[3] if fid == 0 else 0)
            got = pieces.setdefault((side, rseq), {})
            got[fid] = plain[start:]
            if len(got) < nf:
                continue
            body = b''.join(got[i] for i in range(nf))
            del pieces[(side, rseq)]
        else:
            header = reliable_header(plain)
            rseq, body = header[0], plain[header[3]:]
        for c, mid, fid in yojimbo_packet(body, truth['config']['channels'], truth['config']['message_types']):
            found.add((side, rseq, c, mid, fid))
    return found, count


def verify_yojimbo(name):
    truth = json.load(open(name + '.truth.json'))
    problems = []
    packets = {}
    try:
        found, count = yojimbo_sends(name, truth, packets)
    except ImportError:
        print('%s: python3-cryptography is needed to decrypt the capture' % name)
        return False
    captured = 'client' if truth['capture']['at'] == 'a' else 'server'
    # With --capture-from or --capture-drop the capture leaves datagrams out:
    # the captured side's sends expected are those whose reliable packet the
    # capture holds at their send time.
    partial = truth['capture'].get('not_captured', 0) > 0
    listed, mine = set(), set()
    for it in truth['items']:
        for s in it['sends']:
            send = (it['from'], s['reliable_sequence'], it['channel'], it['id'], s.get('fragment'))
            listed.add(send)
            if it['from'] == captured and (not partial or any(
                    abs(t - s['time']) < 2e-6 for t in packets.get((captured, s['reliable_sequence']), ()))):
                mine.add(send)
    if {s for s in found if s[0] == captured} != mine:
        problems.append('%s sends in the capture differ from the truth file: %d listed, %d found, first missing %s'
                        % (captured, len(mine), len({s for s in found if s[0] == captured}),
                           sorted(mine - found)[:3]))
    stray = {s for s in found if s[0] != captured} - listed
    if stray:
        problems.append('sends in the capture the truth file does not list: %s' % sorted(stray)[:3])
    if count != truth['capture']['frames']:
        problems.append('%d frames, the truth file says %d' % (count, truth['capture']['frames']))
    for p in problems:
        print('%s: %s' % (name, p))
    if not problems:
        print('%s: %d frames, %d sends of %d messages and blocks decrypted and decoded: the truth file agrees'
              % (name, count, len(found), len(truth['items'])))
    return not problems


# ---- netgame-sim captures (docs/truth.md, "netgame-sim") ----

def netgame_more_recent(s1, s2, max_sequence):
    half = max_sequence // 2
    return (s1 > s2 and s1 - s2 <= half) or (s2 > s1 and s2 - s1 > half)


def netgame_acks(header, sequence, max_sequence):
    """1 when a header (sequence, ack, ack_bits) acknowledges sequence: the 2008 rules."""
    _, ack, bits = header
    if sequence == ack:
        return True
    if netgame_more_recent(sequence, ack, max_sequence):
        return False
    distance = (ack - sequence) % (max_sequence + 1)
    return 1 <= distance <= 32 and bool((bits >> (distance - 1)) & 1)


def verify_netgame(name):
    """Decodes every frame's 16-byte big-endian header and checks the truth
    file's packets against them: each packet's frames hold its header, from its
    host; every frame belongs to exactly one packet; acked_in and acked.by_frame
    are frames from the peer whose header acknowledges the packet; counts agree
    with the capture point."""
    truth = json.load(open(name + '.truth.json'))
    config = truth['config']
    max_sequence = config['max_sequence']
    host = {side: truth['endpoints'][side].split(':')[0] for side in ('a', 'b')}
    capture = {}
    problems = []
    for number, source, payload in frames(name + '.pcap'):
        if len(payload) < 16:
            problems.append('frame %d: %d bytes, under the 16-byte header' % (number, len(payload)))
            continue
        protocol_id, sequence, ack, bits = struct.unpack('>IIII', payload[:16])
        if protocol_id != config['protocol_id']:
            problems.append('frame %d: protocol id %08x' % (number, protocol_id))
        capture[number] = (source, (sequence, ack, bits), len(payload))
    owner = {}
    at = truth['capture']['at']
    sent_from_capture_host = 0
    arrived_at_capture_host = 0
    # --capture-drop / --capture-from: datagrams left out of the pcap; a
    # packet then has fewer frames, and all of them together not_captured fewer.
    partial = truth['capture'].get('not_captured', 0) > 0
    left_out = 0
    for packet in truth['packets']:
        label = '%s packet %d (sequence %d)' % (packet['from'], packet['index'], packet['sequence'])
        header = (packet['sequence'], packet['ack'], packet['ack_bits'])
        peer = 'b' if packet['from'] == 'a' else 'a'
        for frame in packet['frames']:
            if frame in owner:
                problems.append('%s: frame %d is also %s' % (label, frame, owner[frame]))
            owner[frame] = label
            got = capture.get(frame)
            if got is None or got[0] != host[packet['from']] or got[1] != header or got[2] != packet['bytes']:
                problems.append('%s: frame %d holds %s' % (label, frame, got))
        if packet['from'] == at:
            sent_from_capture_host += 1
            left_out += 1 - len(packet['frames'])
            if len(packet['frames']) != 1 and not (partial and not packet['frames']):
                problems.append('%s: sent from the capture host, %d frames' % (label, len(packet['frames'])))
        else:
            arrived_at_capture_host += packet['deliveries']
            left_out += packet['deliveries'] - len(packet['frames'])
            if len(packet['frames']) != packet['deliveries'] and not (partial and len(packet['frames']) < packet['deliveries']):
                problems.append('%s: %d deliveries, %d frames' % (label, packet['deliveries'], len(packet['frames'])))
        acking = [packet['acked_in']] if packet['acked_in'] is not None else []
        if packet['acked'] is not None and packet['acked']['by_frame'] is not None:
            acking.append(packet['acked']['by_frame'])
        for frame in acking:
            got = capture.get(frame)
            if got is None or got[0] != host[peer] or not netgame_acks(got[1], packet['sequence'], max_sequence):
                problems.append('%s: frame %d does not acknowledge it (%s)' % (label, frame, got))
        if packet['acked_in'] is not None and packet['frames'] and packet['acked_in'] < packet['frames'][0] and packet['from'] == at:
            problems.append('%s: acked in frame %d before it was sent' % (label, packet['acked_in']))
    # Each packet's mode is the one of the sender's last switch at or before its send.
    switches = {side['side']: side['mode_switches'] for side in truth['sides']}
    for packet in truth['packets']:
        mode = 'bad'
        for switch in switches[packet['from']]:
            if switch['time'] <= packet['time']:
                mode = switch['mode']
        if packet['mode'] != mode:
            problems.append('%s packet %d: mode %s, the switches say %s' % (packet['from'], packet['index'], packet['mode'], mode))
    if len(capture) + sum(1 for p in problems if 'under the 16-byte' in p) != truth['capture']['frames']:
        problems.append('%d frames in the capture, %d in the truth file' % (len(capture), truth['capture']['frames']))
    unowned = sorted(set(capture) - set(owner))
    if unowned:
        problems.append('frames %s belong to no packet of the truth file' % unowned[:10])
    if sent_from_capture_host + arrived_at_capture_host - (left_out if partial else 0) != len(capture):
        problems.append('%d sent and %d arrived at the capture host, %d frames'
                        % (sent_from_capture_host, arrived_at_capture_host, len(capture)))
    if partial and left_out != truth['capture']['not_captured']:
        problems.append('%d datagrams left out of the capture, the truth file says %d'
                        % (left_out, truth['capture']['not_captured']))
    for p in problems[:50]:
        print('%s: %s' % (name, p))
    if not problems:
        acked_in = sum(1 for p in truth['packets'] if p['acked_in'] is not None)
        print('%s: %d frames, %d packets (%d with an acked-in frame): the truth file agrees with the capture'
              % (name, len(capture), len(truth['packets']), acked_in))
    return not problems



# ---- reliable-sim captures (docs/truth.md, "reliable-sim") ----

def reliable_header(payload):
    """(sequence, ack, ack_bits, length) of a regular reliable header, or None."""
    if len(payload) < 3 or payload[0] & 1:
        return None
    prefix = payload[0]
    sequence = payload[1] | payload[2] << 8
    n = 3
    if prefix & 0x20:
        if len(payload) < 4:
            return None
        ack = (sequence - payload[3]) % 65536
        n = 4
    else:
        if len(payload) < 5:
            return None
        ack = payload[3] | payload[4] << 8
        n = 5
    bits = 0xFFFFFFFF
    for k in range(4):
        if prefix & (2 << k):
            if len(payload) <= n:
                return None
            bits = (bits & ~(0xFF << (8 * k))) | payload[n] << (8 * k)
            n += 1
    return sequence, ack, bits, n


def verify_reliable(name, truth):
    """Decodes every frame and checks the truth file's packets against them:
    each packet's frames hold its header (a regular packet) or its fragments
    (prefix 1, its sequence, the fragment id and count, the header in
    fragment 0), from its host; every frame belongs to exactly one packet;
    acked_in is a frame from the peer whose header acknowledges it."""
    host = {side: truth['endpoints'][side].split(':')[0] for side in ('a', 'b')}
    capture = {number: (source, payload) for number, source, payload in frames(name + '.pcap')}
    owner, problems = {}, []
    first_fragment = {}
    for source, payload in capture.values():
        if payload[:1] == b'\x01' and len(payload) > 5 and payload[3] == 0:
            first_fragment[(source, payload[1] | payload[2] << 8)] = reliable_header(payload[5:])
    for packet in truth['packets']:
        label = '%s packet %d (sequence %d)' % (packet['from'], packet['index'], packet['sequence'])
        header = (packet['sequence'], packet['ack'], packet['ack_bits'])
        for fid, fragment_frames in enumerate(packet['frames']):
            for frame in fragment_frames:
                if frame in owner:
                    problems.append('%s: frame %d is also %s' % (label, frame, owner[frame]))
                owner[frame] = label
                source, payload = capture.get(frame, (None, b''))
                if source != host[packet['from']]:
                    problems.append('%s: frame %d from %s' % (label, frame, source))
                    continue
                if packet['fragments']:
                    ok = (len(payload) >= 5 and payload[0] == 1 and (payload[1] | payload[2] << 8) == packet['sequence']
                          and payload[3] == fid and payload[4] == packet['fragments'] - 1)
                    if ok and fid == 0:
                        h = reliable_header(payload[5:])
                        ok = h is not None and h[:3] == header
                else:
                    h = reliable_header(payload)
                    ok = h is not None and h[:3] == header and len(payload) - h[3] == packet['payload']
                if not ok:
                    problems.append('%s: frame %d does not hold it' % (label, frame))
        if packet['acked_in'] is not None:
            source, payload = capture.get(packet['acked_in'], (None, b''))
            if payload[:1] == b'\x01' and len(payload) >= 5:
                # A fragment: the header is fragment 0's (the frame completes the packet).
                h = first_fragment.get((source, payload[1] | payload[2] << 8))
            else:
                h = reliable_header(payload)
            if source == host[packet['from']] or h is None or not (h[2] >> ((h[1] - packet['sequence']) % 65536)) & 1 \
                    or (h[1] - packet['sequence']) % 65536 >= 32:
                problems.append('%s: acked_in frame %d does not acknowledge it' % (label, packet['acked_in']))
    for number in capture:
        if number not in owner:
            problems.append('frame %d belongs to no packet' % number)
    if len(capture) != truth['capture']['frames']:
        problems.append('%d frames, the truth file says %d' % (len(capture), truth['capture']['frames']))
    for p in problems[:20]:
        print('%s: %s' % (name, p))
    if not problems:
        print('%s: %d frames, %d packets agree with the truth file' % (name, len(capture), len(truth['packets'])))
    return not problems


if __name__ == '__main__':
    sys.exit(main(sys.argv))

