#!/usr/bin/env python3
"""make-foreign-traffic.py: writes captures/foreign-traffic.pcap, other
programs' UDP traffic on the ports chunkshark's dissectors use (chunk 40000,
netgame 30000 and its clients' 30001, and a few more), none of it chunk,
p2frag or netgame. A dissector must leave every frame of it to the others
(dissector/tests/test_foreign.py checks that none claims one).

  captures/make-foreign-traffic.py [-o FILE] [--seed N]

What it holds, in both directions between 10.0.0.1 and 10.0.0.2 (one side on
our port, the other on an ephemeral port that no Wireshark dissector owns):
- random datagrams of 0 to 1400 bytes, and all-zero and all-0xff ones;
- DNS queries and responses, an NTP request, a STUN binding request,
  plain text lines: other protocols' well-formed packets,
  on our ports instead of theirs;
- netcode-style traffic (the library's wire layout, our own bytes): the
  1078-byte connection request that starts with a zero byte and
  "NETCODE 1.02\\0", and encrypted packets (a prefix byte with the packet
  type in the low four bits and the sequence's byte count in the high four,
  the sequence, then ciphertext with a 16-byte tag: random bytes here);
- datagrams that begin like a netgame header but with another protocol id
  than the default (the id is the first four bytes).

The output depends only on --seed (default 1): the committed file is the
default one, and dissector/tests/test_foreign.py remakes it and compares the
bytes.

Exit status: 0 written, 2 bad arguments.
"""
import argparse
import random
import struct
import sys

# Ports: ours, and the peers' (above 49152, which no dissector registers).
OUR_PORTS = [40000, 30000, 30001, 40001, 30002]
HOSTS = ("10.0.0.1", "10.0.0.2")


def ip_checksum(hdr):
    s = sum(struct.unpack("!10H", hdr))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def udp_frame(payload, sport, dport, src, dst):
    """Ethernet/IPv4/UDP (UDP checksum 0: none)."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    sa = bytes(int(x) for x in src.split("."))
    da = bytes(int(x) for x in dst.split("."))
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, sa, da)
    ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
    return b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip + udp


def dns_name(name):
    out = b""
    for label in name.split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\x00"


def dns_query(rng, name):
    return struct.pack("!HHHHHH", rng.randrange(65536), 0x0100, 1, 0, 0, 0) + dns_name(name) + \
        struct.pack("!HH", 1, 1)


def dns_response(rng, name):
    q = dns_name(name) + struct.pack("!HH", 1, 1)
    answer = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 300, 4) + bytes(rng.randrange(256) for _ in range(4))
    return struct.pack("!HHHHHH", rng.randrange(65536), 0x8180, 1, 1, 0, 0) + q + answer


def ntp_request(rng):
    return bytes([0x23]) + bytes(39) + bytes(rng.randrange(256) for _ in range(8))


def stun_binding(rng):
    return struct.pack("!HHI", 0x0001, 0, 0x2112A442) + bytes(rng.randrange(256) for _ in range(12))


def netcode_request(rng):
    """The connection request's layout: 0, "NETCODE 1.02\\0", protocol id
    (8), expire timestamp (8), token nonce (24), encrypted private token
    (1024): 1078 bytes."""
    out = b"\x00" + b"NETCODE 1.02\x00" + struct.pack("<QQ", 0x1122334455667788, 1700000000 + 30)
    out += bytes(rng.randrange(256) for _ in range(24 + 1024))
    assert len(out) == 1078
    return out


def netcode_encrypted(rng, seq):
    """Prefix byte (type 1..6 low nibble, sequence byte count high nibble),
    the sequence little-endian in that many bytes, ciphertext and tag."""
    nbytes = max(1, (seq.bit_length() + 7) // 8)
    ptype = rng.choice([1, 2, 3, 4, 5, 6])
    body = {1: 8 + 8 + 8, 2: 8 + 300, 3: 8 + 300, 4: 8, 5: rng.randrange(1, 1200), 6: 0}[ptype]
    return bytes([ptype | (nbytes << 4)]) + seq.to_bytes(nbytes, "little") + \
        bytes(rng.randrange(256) for _ in range(body + 16))


def payloads(rng):
    """(payload, note) in capture order."""
    out = []
    for n in [0, 1, 2, 3, 4, 5, 8, 15, 16, 17, 20, 40, 100, 300, 576, 1000, 1024, 1079, 1200, 1400]:
        out.append(bytes(rng.randrange(256) for _ in range(n)))
    for _ in range(40):
        out.append(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 1401))))
    out += [bytes(16), bytes(64), bytes(1078), b"\xff" * 32]
    for name in ["example.com", "game.example.net", "a.b.c.d.example.org"]:
        out += [dns_query(rng, name), dns_response(rng, name)]
    # (No TFTP request: Wireshark's TFTP heuristic would make the rest of
    # the conversation TFTP before any port dissector sees it.)
    out += [ntp_request(rng), stun_binding(rng),
            b"hello, not a game packet\n", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"PING\r\n"]
    out.append(netcode_request(rng))
    for seq in [0, 1, 2, 255, 256, 70000] + [rng.randrange(1 << 40) for _ in range(20)]:
        out.append(netcode_encrypted(rng, seq))
    # Netgame-shaped: 16-byte header and payload, another id than 0x11223344.
    for pid in [0x00000000, 0x12345678, 0xdeadbeef, 0x11223345]:
        out.append(struct.pack("!IIII", pid, rng.randrange(1 << 32), rng.randrange(1 << 32),
                               rng.randrange(1 << 32)) + bytes(rng.randrange(256) for _ in range(32)))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", default=None, help="pcap to write (default: captures/foreign-traffic.pcap)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    args = ap.parse_args(argv)
    if args.output is None:
        import os
        args.output = os.path.join(os.path.dirname(os.path.abspath(__file__)), "foreign-traffic.pcap")
    rng = random.Random(args.seed)
    frames = []
    t = 0.0
    for port in OUR_PORTS:
        peer = 50000 + port % 1000
        for i, p in enumerate(payloads(rng)):
            # Alternate directions: to our port, and back from it.
            if i % 2 == 0:
                frames.append((t, udp_frame(p, peer, port, HOSTS[0], HOSTS[1])))
            else:
                frames.append((t, udp_frame(p, port, peer, HOSTS[1], HOSTS[0])))
            t += 0.01
    try:
        f = open(args.output, "wb")
    except OSError as e:
        print("make-foreign-traffic.py: %s" % e, file=sys.stderr)
        return 2
    with f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for t, frame in frames:
            sec = int(t)
            usec = int(round((t - sec) * 1e6))
            f.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame)
    print("wrote %s: %d frames" % (args.output, len(frames)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
