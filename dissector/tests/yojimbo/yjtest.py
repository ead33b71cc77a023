"""What the yojimbo dissector tests share: a serialize-style bit writer
(least significant bit first, docs/yojimbo.md), connection packets written
from it, pcaps of raw connection packets on UDP (decoded with
-d udp.port==40000,yojimbo) and tshark runs through scripts/chunk-tshark."""
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
TSHARK = os.path.join(REPO, "scripts", "chunk-tshark")
CAPTURES = os.path.join(REPO, "captures")
PORT = 40000

sys.path.insert(0, os.path.dirname(HERE))
import chunktest as ct  # noqa: E402


class Writer(ct.BitWriter):
    """The chunk tests' bit writer with serialize's calls, each returning
    the writer so that they chain."""

    def bits_(self, value, n):
        self.put(value, n)
        return self

    def int_(self, value, lo, hi):
        return self.bits_(value - lo, ct.bits_required(lo, hi))

    def bool_(self, v):
        return self.bits_(1 if v else 0, 1)

    def align(self):
        super().align()
        return self

    def bytes_(self, data):
        self.raw(data)
        return self

    def relative(self, prev, cur):
        d = cur - prev
        if d == 1:
            return self.bool_(1)
        self.bool_(0)
        for lo, hi in ((2, 6), (7, 23), (24, 280), (281, 4377), (4378, 69914)):
            if d <= hi:
                self.bool_(1)
                return self.int_(d, lo, hi)
            self.bool_(0)
        return self.bits_(cur, 32)

    def seq_relative(self, prev, cur):
        return self.relative(prev, cur + (65536 if prev > cur else 0))

    def data(self):
        return self.align().tobytes()


def pcap(payloads, path, sport=30000, dport=PORT):
    """A pcap (Ethernet/IPv4/UDP) of one datagram per payload, 10 ms apart."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(payloads):
            t = i * 0.01
            if isinstance(p, tuple):
                if len(p) == 3:
                    p, rev, t = p
                else:
                    p, rev = p
            else:
                rev = False
            s, d = (dport, sport) if rev else (sport, dport)
            udp = struct.pack("!HHHH", s, d, 8 + len(p), 0) + p
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                             bytes([127, 0, 0, 2] if rev else [127, 0, 0, 1]),
                             bytes([127, 0, 0, 1] if rev else [127, 0, 0, 2]))
            eth = b"\x00" * 12 + b"\x08\x00" + ip + udp
            us = int(round(t * 1e6))
            f.write(struct.pack("<IIII", 1000 + us // 1000000, us % 1000000, len(eth), len(eth)))
            f.write(eth)


def reliable_header(seq, ack, ack_bits):
    """reliable's regular packet header, canonically encoded."""
    prefix = 0
    tail = b""
    for i in range(4):
        byte = (ack_bits >> (8 * i)) & 0xFF
        if byte != 0xFF:
            prefix |= 1 << (i + 1)
            tail += bytes([byte])
    diff = (seq - ack) & 0xFFFF
    if diff <= 255:
        prefix |= 1 << 5
        mid = bytes([diff])
    else:
        mid = struct.pack("<H", ack)
    return bytes([prefix]) + struct.pack("<H", seq) + mid + tail


# The connection payload the crafted tests send: TestMessages of the example
# schema with these ids (in order, relative-coded after the first).
def message_payload(ids):
    w = Writer().int_(1, 0, 2).int_(0, 0, 1).bool_(0).bool_(1).int_(len(ids), 1, 256).bits_(ids[0], 16)
    for a, b in zip(ids, ids[1:]):
        w.seq_relative(a, b)
    for i in ids:
        w.int_(0, 0, 3).bits_(i, 16)
        # TestMessage: sequence % 21 picks the dummy bits (example schema)
        w.bits_(0, [1, 320, 120, 4, 256, 45, 11, 13, 101, 100, 84, 95, 203, 2, 3, 8, 512, 5, 3, 7, 50][i % 21])
    return w.data()


# Fragment FID of the crafted tests' two-fragment block (message id 5) with
# DATA; fragment 0 also carries the block message's type and field (77).
def block_fragment(fid, data):
    w = Writer().int_(1, 0, 2).int_(0, 0, 1).bool_(1).bits_(5, 16).int_(2, 1, 256).int_(fid, 0, 1)
    w.int_(len(data), 1, 1024).bytes_(data)
    if fid == 0:
        w.int_(1, 0, 3).bits_(77, 16)
    return w.data()


def tshark(args, check=True):
    env = dict(os.environ)
    env.setdefault("WIRESHARK_ABORT_ON_DISSECTOR_BUG", "1")
    r = subprocess.run([TSHARK] + args, capture_output=True, text=True, env=env, timeout=600)
    if check and r.returncode != 0:
        raise AssertionError("tshark %s failed (%d): %s" % (args, r.returncode, r.stderr))
    return r


def fields(path, flds, extra=(), decode=True):
    args = ["-r", path]
    if decode:
        args += ["-d", "udp.port==%d,yojimbo" % PORT]
    args += list(extra) + ["-T", "fields", "-E", "separator=|"]
    for f in flds:
        args += ["-e", f]
    out = tshark(args).stdout
    return [line.split("|") for line in out.splitlines()]


class Checks:
    def __init__(self, name):
        self.name = name
        self.failed = 0
        self.n = 0

    def eq(self, what, got, want):
        self.n += 1
        if got != want:
            self.failed += 1
            print("FAIL %s: got %r, want %r" % (what, got, want))

    def true(self, what, cond, detail=""):
        self.n += 1
        if not cond:
            self.failed += 1
            print("FAIL %s %s" % (what, detail))

    def done(self):
        print("%s: %d checks, %d failed" % (self.name, self.n, self.failed))
        sys.exit(1 if self.failed else 0)


def tmpdir():
    d = tempfile.mkdtemp(prefix="yjtest-")
    os.chmod(d, 0o755)
    return d
