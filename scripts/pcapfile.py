"""pcapfile.py: capture files without tshark, for the scripts and tests that
read or write them (bench/netcode-capture.py, fuzz/dissector/make-seeds.py,
scripts/make-hostile-captures.py, dissector/tests/hostile_bounds.py):

    import pcapfile
    for time_ns, frame in pcapfile.records(data): ...
    w = pcapfile.Writer(path); w.add(t_us, payload, src, sport, dst, dport); frames = w.close()

records(data) reads classic pcap (little-endian, microsecond or nanosecond
times) and pcapng (Enhanced Packet Blocks, the time resolution of each
interface's if_tsresol, microseconds when it has none); times are whole
nanoseconds. ValueError for a file it cannot read (raised where the
problem is, after the packets before it).
"""
import os
import struct

PCAP_US, PCAP_NS = 0xA1B2C3D4, 0xA1B23C4D
PCAPNG = b"\x0a\x0d\x0d\x0a"


def _resolution(block, off, blen):
    """(multiplier, shift) that turn an interface's timestamps into
    nanoseconds (ns = ts * multiplier >> shift), from its if_tsresol option."""
    o = off + 16
    while o + 4 <= off + blen - 4:
        code, olen = struct.unpack_from("<HH", block, o)
        if code == 0:
            break
        if code == 9 and olen >= 1:
            r = block[o + 4]
            if r & 0x80:
                return 10 ** 9, r & 0x7F        # 2^-r seconds
            return (10 ** (9 - r), 0) if r <= 9 else (1, 0)
        o += 4 + ((olen + 3) & ~3)
    return 1000, 0


def records(data):
    """(time in ns, frame bytes) of every packet of the capture file data."""
    if data[:4] == PCAPNG:
        off, mul, shift = 0, 1000, 0
        while off + 12 <= len(data):
            btype, blen = struct.unpack_from("<II", data, off)
            if blen < 12:
                raise ValueError("malformed pcapng block at byte %d" % off)
            if btype == 1:
                mul, shift = _resolution(data, off, blen)
            elif btype == 6:
                _, hi, lo, cap, _ = struct.unpack_from("<IIIII", data, off + 8)
                yield ((hi << 32) | lo) * mul >> shift, data[off + 28:off + 28 + cap]
            off += blen
        return
    magic = struct.unpack_from("<I", data, 0)[0] if len(data) >= 4 else None
    if magic not in (PCAP_US, PCAP_NS):
        raise ValueError("neither pcapng nor little-endian pcap")
    unit = 1000 if magic == PCAP_US else 1
    off = 24
    while off + 16 <= len(data):
        sec, frac, cap, _ = struct.unpack_from("<IIII", data, off)
        yield sec * 1000000000 + frac * unit, data[off + 16:off + 16 + cap]
        off += 16 + cap


def _ip_csum(h):
    s = sum(struct.unpack("!10H", h))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


class Writer:
    """Classic pcap, Ethernet/IPv4/UDP frames (UDP checksum 0: none),
    microsecond times; addresses are 4 bytes each."""

    def __init__(self, path):
        self.path = path
        self.f = open(path, "wb", buffering=1 << 20)
        self.f.write(struct.pack("<IHHiIII", PCAP_US, 2, 4, 0, 0, 65535, 1))
        self.n = 0

    def add(self, t_us, payload, src, sport, dst, dport):
        udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", _ip_csum(ip)) + ip[12:]
        frame = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip + udp
        self.f.write(struct.pack("<IIII", t_us // 1000000, t_us % 1000000, len(frame), len(frame)) + frame)
        self.n += 1

    def close(self):
        """Closes the file (readable by all: tshark may run as nobody);
        returns the number of frames."""
        self.f.close()
        os.chmod(self.path, 0o644)
        return self.n
