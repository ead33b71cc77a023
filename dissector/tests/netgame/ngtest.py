"""Helpers for the netgame dissector's tests.

- tshark with the plugin of the build tree (chunktest.tshark: scripts/chunk-tshark,
  as root too, WIRESHARK_ABORT_ON_DISSECTOR_BUG=1);
- the vector file, parsed (docs/netgame.md, "Test vectors");
- netgame datagrams, and conversations between two sides that ack what they
  received (Conv), written as pcaps;
- reading every frame's netgame fields and expert infos (PDML).
"""
import heapq
import os
import struct
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import chunktest as ct  # noqa: E402

REPO = ct.REPO
VECTORS = os.environ.get("NETGAME_VECTORS") or os.path.join(REPO, "docs", "vectors", "vectors-netgame.txt")
PROTOCOL_ID = 0x11223344
PORT = 30000

tshark = ct.tshark
scratch_dir = ct.scratch_dir
Failures = ct.Failures
run_checks = ct.run_checks


def write_pcap(path, packets):
    """chunktest.write_pcap with times rounded to whole microseconds first
    (its rounding can write 1 000 000 microseconds)."""
    fixed = []
    for i, p in enumerate(packets):
        p = dict(p)
        us = int(round(p.get("t", i * 0.01) * 1e6))
        p["t"] = us // 1000000 + (us % 1000000) / 1e6
        if int(round((p["t"] - int(p["t"])) * 1e6)) >= 1000000:
            p["t"] = float(us // 1000000 + 1)
        fixed.append(p)
    ct.write_pcap(path, fixed)


def header(seq, ack, bits, protocol_id=PROTOCOL_ID):
    return struct.pack(">IIII", protocol_id, seq, ack, bits)


def read_vectors(path=VECTORS):
    """Returns {"R": [...], "A": [...], "K": [...], "C": [...]} of dicts."""
    out = {"R": [], "A": [], "K": [], "C": []}
    for p in ct.vector_lines(path):
        if p[0] == "R":
            out["R"].append({"id": int(p[1], 16), "seq": int(p[2]), "ack": int(p[3]),
                             "bits": int(p[4], 16), "len": int(p[5]), "hex": p[6]})
        elif p[0] == "A":
            recv = [] if p[3] == "-" else [int(x) for x in p[3].split(",")]
            out["A"].append({"ack": int(p[1]), "max": int(p[2], 16), "received": recv,
                             "bits": int(p[4], 16)})
        elif p[0] == "K":
            pend = [] if p[4] == "-" else [int(x) for x in p[4].split(",")]
            acked = [] if p[5] == "-" else [int(x) for x in p[5].split(",")]
            out["K"].append({"ack": int(p[1]), "bits": int(p[2], 16), "max": int(p[3], 16),
                             "pending": pend, "acked": acked})
        elif p[0] == "C":
            out["C"].append({"step": int(p[1]), "from": p[2], "dropped": p[3] == "1",
                             "id": int(p[4], 16), "seq": int(p[5]), "ack": int(p[6]),
                             "bits": int(p[7], 16), "len": int(p[8]), "hex": p[9]})
    return out


def acked_set(ack, bits, max_seq=0xFFFFFFFF):
    """Sequences a header acknowledges as the original applies it: ack, and
    ack-1-i for each set bit i whose sequence is older than ack."""
    space = max_seq + 1
    out = [ack]
    for i in range(32):
        if (bits >> i) & 1:
            s = (ack - 1 - i) % space
            if s != ack and not more_recent(s, ack, max_seq) and s not in out:
                out.append(s)
    return out


def more_recent(s1, s2, max_seq=0xFFFFFFFF):
    half = max_seq // 2
    return (s1 > s2 and s1 - s2 <= half) or (s2 > s1 and s2 - s1 > half)


def ack_bits_from(ack, received, max_seq=0xFFFFFFFF):
    space = max_seq + 1
    bits = 0
    for i in range(32):
        if (ack - 1 - i) % space in received:
            bits |= 1 << i
    return bits


class Conv:
    """Two sides, A and B, exchanging netgame packets. Each side acks what it
    has received; a packet reaches the other side unless deliver=False.
    start: mid-connection (each side has already received the peer's 20
    sequences before its first, so no packet carries the false ack of 0)."""

    def __init__(self, a_port=30001, b_port=PORT, a_ip="10.1.0.1", b_ip="10.1.0.2", seq_a=100, seq_b=500,
                 protocol_id=PROTOCOL_ID, max_seq=0xFFFFFFFF, fresh=False):
        self.max = max_seq
        self.space = max_seq + 1
        self.ep = {"A": (a_ip, a_port), "B": (b_ip, b_port)}
        self.next = {"A": seq_a, "B": seq_b}
        self.recv = {"A": set(), "B": set()}
        self.remote = {"A": None, "B": None}
        self.id = protocol_id
        if not fresh:
            for side, peer_first in (("A", seq_b), ("B", seq_a)):
                for k in range(1, min(20, max_seq // 4) + 1):
                    self._receive(side, (peer_first - k) % self.space)
        self.packets = []   # pcap packet dicts, with "side", "seq", "ack", "bits"

    def _receive(self, side, seq):
        if seq in self.recv[side]:
            return
        self.recv[side].add(seq)
        r = self.remote[side]
        if r is None or more_recent(seq, r, self.max):
            self.remote[side] = seq

    def send(self, side, t, seq=None, ack=None, bits=None, payload=b"\x00" * 8, protocol_id=None,
             deliver=True, raw=None, advance=True):
        """Adds side's next packet at time t; returns its index (frame - 1)."""
        peer = "B" if side == "A" else "A"
        if seq is None:
            seq = self.next[side]
        if ack is None:
            ack = self.remote[side] if self.remote[side] is not None else 0
        if bits is None:
            bits = ack_bits_from(ack, self.recv[side], self.max)
        data = raw if raw is not None else header(seq, ack, bits, self.id if protocol_id is None else protocol_id) + payload
        if advance and raw is None and seq == self.next[side]:
            self.next[side] = (seq + 1) % self.space
        if deliver and raw is None and len(data) > 16 and (protocol_id is None or protocol_id == self.id):
            self._receive(peer, seq)
        src, sport = self.ep[side]
        dst, dport = self.ep[peer]
        self.packets.append({"payload": data, "src": src, "sport": sport, "dst": dst, "dport": dport,
                             "t": t, "side": side, "seq": seq, "ack": ack, "bits": bits})
        return len(self.packets) - 1

    def exchange(self, t0, rounds, interval=0.1, offset=0.05):
        """rounds of A then B (offset later), every interval: Bad-mode rate."""
        t = t0
        for _ in range(rounds):
            self.send("A", t)
            self.send("B", t + offset)
            t += interval
        return t


def decode(pcap, prefs=None, extra=()):
    """One dict per frame: fields {name: [show...]}, experts (netgame.* expert
    names), netgame (decoded as netgame), protocols (frame.protocols)."""
    xml = tshark(["-r", pcap, "-T", "pdml"] + ct.pref_args(prefs) + list(extra))
    frames = []
    for pkt in ET.fromstring(xml).iter("packet"):
        fr = {"fields": {}, "experts": [], "netgame": False, "protocols": ""}
        for proto in pkt.iter("proto"):
            if proto.get("name") == "frame":
                for f in proto.iter("field"):
                    if f.get("name") == "frame.protocols":
                        fr["protocols"] = f.get("show")
            elif proto.get("name") == "netgame":
                fr["netgame"] = True
                _collect(proto, fr)
        frames.append(fr)
    return frames


def _collect(node, fr):
    for f, in_expert in ct.pdml_fields(node):
        name = f.get("name")
        if in_expert:
            if name.startswith("netgame."):
                fr["experts"].append(name)
        else:
            fr["fields"].setdefault(name, []).append(f.get("show"))


def fields(pcap, names, prefs=None, extra=()):
    """tshark -T fields: one list per frame of one string per name."""
    args = ["-r", pcap, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"]
    for n in names:
        args += ["-e", n]
    out = tshark(args + ct.pref_args(prefs) + list(extra))
    return [line.split("\t") for line in out.splitlines()]


def read_output(reader, text, *args):
    """reader(*args), a helper that runs tshark once and reads its output
    (gaptest.experts, flowtest.conv, ...), reading text instead: the output
    of a run made already (one that printed several things at once)."""
    run = ct.tshark
    ct.tshark = lambda args, check=True: text
    try:
        return reader(*args)
    finally:
        ct.tshark = run


def merge_aligned(paths, out):
    """Writes the classic Ethernet pcaps paths into out as one capture that
    a single tshark run reads as it would read each: capture i's IPv4
    addresses xored with 0.h.l.0 (h.l = i + 1, chunktest.concat_captures:
    chunktest.concat_address maps them back), its frames' order and
    intervals kept, every capture ending at the same time (the end of the
    capture decides what the analysis calls lost) and the frames merged by
    time. Returns [(capture index, its frame index)] per frame of out."""
    concat = out + ".concat"
    spans = ct.concat_captures(paths, concat)
    with open(concat, "rb") as f:
        data = f.read()
    os.unlink(concat)
    recs, off = [], 24
    while off + 16 <= len(data):
        sec, usec, incl, orig = struct.unpack_from("<IIII", data, off)
        recs.append((sec * 1000000 + usec, data[off + 8:off + 16 + incl]))
        off += 16 + incl
    spans_t = [(recs[first - 1:last]) for _, first, last in spans]
    end = max(r[-1][0] - r[0][0] for r in spans_t) + 1000 * 1000000
    streams = [[(t + end - r[-1][0], i, k, rest) for k, (t, rest) in enumerate(r)] for i, r in enumerate(spans_t)]
    merged = list(heapq.merge(*streams, key=lambda x: (x[0], x[1])))
    with open(out, "wb") as f:
        f.write(data[:24])
        for t, _, _, rest in merged:
            f.write(struct.pack("<II", t // 1000000, t % 1000000) + rest)
    os.chmod(out, 0o644)
    return [(i, k) for _, i, k, _ in merged]
