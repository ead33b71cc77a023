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
import struct
import sys


def read_frames(path):
    """(seconds, frame bytes) of every packet of a pcapng (EPB) or pcap file."""
    data = open(path, "rb").read()
    out = []
    if data[:4] == b"\x0a\x0d\x0d\x0a":
        off, tsres = 0, 1e-6
        while off + 12 <= len(data):
            btype, blen = struct.unpack_from("<II", data, off)
            if blen < 12:
                raise SystemExit("netcode-capture: malformed pcapng block at %d" % off)
            if btype == 1:
                # interface description: if_tsresol (option 9) when present
                o = off + 16
                while o + 4 <= off + blen - 4:
                    code, olen = struct.unpack_from("<HH", data, o)
                    if code == 0:
                        break
                    if code == 9 and olen >= 1:
                        r = data[o + 4]
                        tsres = 2.0 ** -(r & 0x7F) if r & 0x80 else 10.0 ** -r
                    o += 4 + ((olen + 3) & ~3)
            elif btype == 6:
                _, hi, lo, cap, _ = struct.unpack_from("<IIIII", data, off + 8)
                out.append((((hi << 32) | lo) * tsres, data[off + 28:off + 28 + cap]))
            off += blen
        return out
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        raise SystemExit("netcode-capture: %s is neither pcapng nor little-endian pcap" % path)
    scale = 1e-6 if magic == 0xA1B2C3D4 else 1e-9
    off = 24
    while off + 16 <= len(data):
        sec, frac, cap, _ = struct.unpack_from("<IIII", data, off)
        out.append((sec + frac * scale, data[off + 16:off + 16 + cap]))
        off += 16 + cap
    return out


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
            out.append((t + c * 0.001, bytes(fr)))
    out.sort(key=lambda x: x[0])
    with open(dst, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for ts, fr in out:
            sec = int(ts)
            usec = min(999999, int(round((ts - sec) * 1e6)))
            f.write(struct.pack("<IIII", sec, usec, len(fr), len(fr)))
            f.write(fr)


if __name__ == "__main__":
    main()
