#!/usr/bin/env python3
"""bench/netcode-capture.py: a large netcode capture from a real one, for
bench/netcode.sh. Writes COPIES copies of the input's UDP datagrams (a pcapng
or pcap of Ethernet/IPv4/UDP frames, e.g. captures/real-netcode-cs.pcapng)
at the same times (1 ms apart: COPIES clients at once, as a busy server
sees them), each copy with a client port of its own (client port + copy
index), so that every copy is a connection of its own with its own
handshake: the decrypted analysis sees COPIES healthy connections. Output: classic pcap, Ethernet.

usage: bench/netcode-capture.py INPUT OUTPUT COPIES [SERVER_PORT]
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import pcapfile  # noqa: E402


def read_frames(path):
    """(time in ns, frame bytes) of every packet of a pcapng or pcap file."""
    try:
        return list(pcapfile.records(open(path, "rb").read()))
    except ValueError as e:
        raise SystemExit("netcode-capture: %s: %s" % (path, e))


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        raise SystemExit(0 if len(sys.argv) == 2 else 2)
    src, dst, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
    server_port = int(sys.argv[4]) if len(sys.argv) == 5 else 40000
    frames = read_frames(src)
    if not frames:
        raise SystemExit("netcode-capture: no packets in " + src)
    out = []
    for c in range(copies):
        for t, fr in frames:
            fr = bytearray(fr)
            ihl = (fr[14] & 0x0F) * 4
            u = 14 + ihl
            sport, dport = struct.unpack_from(">HH", fr, u)
            if sport == server_port:
                dport = (dport + c) & 0xFFFF
            else:
                sport = (sport + c) & 0xFFFF
            struct.pack_into(">HHHH", fr, u, sport, dport, struct.unpack_from(">H", fr, u + 4)[0], 0)
            out.append((t + c * 1000000, bytes(fr)))
    out.sort(key=lambda x: x[0])
    with open(dst, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for ns, fr in out:
            sec, usec = divmod((ns + 500) // 1000, 1000000)   # to the nearest microsecond
            f.write(struct.pack("<IIII", sec, usec, len(fr), len(fr)))
            f.write(fr)


if __name__ == "__main__":
    main()
