#!/usr/bin/env python3
"""Crafted reliable datagrams (docs/reliable.md "Wire format"): the exact
bytes of known headers, worked out by hand from the format (not by an
encoder), decode to their fields; every elision, the canonical-encoding
rule, each fragment rule and each analysis expert info; fragments across the
16-bit wrap; and hostile input (every truncation, random bytes, inconsistent
counts) decodes without a dissector bug."""
import contextlib
import os
import random
import sys

import rltest as rt

B = bytes.fromhex
F = ["reliable.prefix", "reliable.sequence", "reliable.ack", "reliable.ack_bits", "reliable.acked",
     "reliable.header_len", "reliable.canonical", "reliable.fragment_id", "reliable.num_fragments",
     "reliable.fragment_bytes", "reliable.reassembled_in", "reliable.reassembled.length", "_ws.expert.message", "reliable.expert.detail",
     "_ws.malformed", "reliable.analysis.acks", "_ws.col.Info"]

# (name, datagram, expected fields; "expert": a substring of an expert info's summary or detail, "no_expert": none)
HEADERS = [
    # seq 0, ack 65535, bits 0: every ack-bits byte sent (bits 1-4), difference 1 fits (bit 5) -> 0x3e
    ("first_packet", B("3e0000" "01" "00000000"),
     {"reliable.prefix": ["0x3e"], "reliable.sequence": ["0"], "reliable.ack": ["65535"],
      "reliable.ack_bits": ["0x00000000"], "reliable.acked": [], "reliable.header_len": ["8"], "no_expert": 1}),
    # seq 100, ack 99, all bits set: nothing but the difference -> 4 bytes
    ("steady_state", B("206400" "01"),
     {"reliable.prefix": ["0x20"], "reliable.sequence": ["100"], "reliable.ack": ["99"],
      "reliable.ack_bits": ["0xffffffff"], "reliable.header_len": ["4"],
      "reliable.acked": [str(99 - i) for i in range(32)], "no_expert": 1}),
    # seq 1000, ack 100: difference 900 does not fit, 16-bit ack 0x0064
    ("long_ack", B("00e803" "6400"),
     {"reliable.prefix": ["0x00"], "reliable.sequence": ["1000"], "reliable.ack": ["100"],
      "reliable.header_len": ["5"], "no_expert": 1}),
    # seq 5, ack 65530 (difference 11 across the wrap), bits 0xffff00ff: only byte 1 sent (bit 2)
    ("wrap_difference", B("240500" "0b" "00"),
     {"reliable.prefix": ["0x24"], "reliable.sequence": ["5"], "reliable.ack": ["65530"],
      "reliable.ack_bits": ["0xffff00ff"], "reliable.header_len": ["5"],
      "reliable.acked": [str((65530 - i) % 65536) for i in list(range(8)) + list(range(16, 32))], "no_expert": 1}),
    # seq 0x1234, ack 0x0034, bits 0x12345678: the 9-byte maximum
    ("maximum", B("1e3412" "3400" "78563412"),
     {"reliable.prefix": ["0x1e"], "reliable.sequence": ["4660"], "reliable.ack": ["52"],
      "reliable.ack_bits": ["0x12345678"], "reliable.header_len": ["9"], "no_expert": 1}),
    # Non-canonical: a 16-bit ack where the difference fits
    ("long_ack_not_canonical", B("006400" "6300"),
     {"reliable.ack": ["99"], "reliable.canonical": ["0"], "expert": "not canonically encoded"}),
    # Non-canonical: ack-bits byte 0 sent although it is 0xff
    ("ff_byte_sent", B("226400" "01" "ff"),
     {"reliable.ack_bits": ["0xffffffff"], "reliable.canonical": ["0"], "expert": "not canonically encoded"}),
    # Reserved bits 6-7 set
    ("reserved_bits", B("606400" "01"),
     {"reliable.canonical": ["0"], "expert": "bits 6-7"}),
    # Truncated: 5 of the 8 bytes its prefix announces
    ("truncated", B("3e0000" "0100"), {"expert": "shorter than the 8-byte header"}),
]

DATA = bytes(range(256)) * 4


def frag(seq, fid, count_minus_1, rest):
    return bytes([1, seq & 255, seq >> 8, fid, count_minus_1]) + rest


FRAGMENTS = [
    ("fragment_id_range", frag(7, 2, 1, b"x" * 10), {"expert": "is not below the count"}),
    ("too_many_fragments", frag(7, 0, 16, B("200700" "01") + DATA), {"expert": "17 fragments, above"}),
    ("sequence_mismatch", frag(7, 0, 1, B("200800" "01") + DATA), {"expert": "differs from the fragment's 7"}),
    ("embedded_not_canonical", frag(7, 0, 1, B("000700" "0600") + DATA),
     {"expert": "not canonically encoded: the receiver drops the fragment"}),
    ("short_middle_fragment", frag(7, 1, 2, b"x" * 1000), {"expert": "carries 1000 bytes"}),
    ("fragment_too_big", frag(7, 1, 1, b"x" * 1025), {"expert": "above the fragment size"}),
    ("bad_fragment_prefix", bytes([3, 7, 0, 1, 1]) + b"x" * 10, {"expert": "not exactly 1"}),
    ("fragment_too_short", bytes([1, 7, 0]), {"expert": "shorter than the 5-byte fragment header"}),
]


def run(pcap, extra=()):
    return rt.fields(pcap, F, extra=extra)


def run_apart(path, cases, names=F):
    """cases: [(name, datagrams as rt.write_pcap takes them)], written to
    one capture, each case a conversation of its own (A 10.0.0.1:50000, B
    10.0.0.2:51000 + its index): no analysis or reassembly state carried
    between cases, one tshark run for them all. Returns {name: its rows}."""
    pkts, spans = [], {}
    for k, (name, dgs) in enumerate(cases):
        spans[name] = (len(pkts), len(pkts) + len(dgs))
        for i, p in enumerate(dgs):
            d = {"t": 10.0 * k + i * 0.01, "sport": 50000, "dport": 51000 + k}
            if isinstance(p, tuple):
                d.update(payload=p[0], sport=51000 + k, dport=50000, src="10.0.0.2", dst="10.0.0.1")
            else:
                d.update(payload=p)
            pkts.append(d)
    rt.ct.write_pcap(path, pkts)
    rows = rt.fields(path, names)
    return {name: rows[a:b] for name, (a, b) in spans.items()}


def check_fields(fails, name, row, want):
    for k, v in want.items():
        if k == "expert":
            texts = row["_ws.expert.message"] + row["reliable.expert.detail"]   # summaries and details
            fails.check(any(v in m for m in texts), "%s: no expert with %r in %s" % (name, v, texts))
        elif k == "no_expert":
            fails.check(not row["_ws.expert.message"], "%s: unexpected experts %s" % (name, row["_ws.expert.message"]))
        else:
            got = row[k]
            if k == "reliable.canonical":
                got = ["1" if g in ("1", "True") else "0" for g in got]
            fails.check(got == v, "%s: %s = %s, want %s" % (name, k, got, v))


def main():
    with rt.scratch_dir() as d:
        return cases(d)


def cases(d):
    fails = rt.Failures()
    # One conversation per datagram: no analysis state carried between
    # cases. And a fragment count changed within a packet.
    cases = [(name, [dg]) for name, dg, _w in HEADERS + FRAGMENTS]
    cases.append(("count_changed", [frag(9, 0, 2, bytes([0x20, 9, 0, 1]) + DATA), frag(9, 1, 1, b"z" * 10)]))
    rows = run_apart(os.path.join(d, "cases.pcap"), cases)
    for name, dg, want in HEADERS + FRAGMENTS:
        check_fields(fails, name, rows[name][0], want)
    check_fields(fails, "count_changed", rows["count_changed"][1], {"expert": "Fragment count differs"})

    # Two fragments reassembled (1024 + 10 data bytes), and across the wrap:
    # packets 65535 and 0 interleaved, each reassembled on its own.
    p = os.path.join(d, "wrap.pcap")
    f0 = lambda s, n: frag(s, 0, 1, bytes([0x20, s & 255, s >> 8, 1]) + DATA)
    rt.write_pcap(p, [f0(65535, 2), f0(0, 2), frag(0, 1, 1, b"b" * 10), frag(65535, 1, 1, b"a" * 10)])
    rows = run(p)
    fails.check([r["reliable.reassembled_in"] for r in rows] == [["4"], ["3"], [], []],
                "wrap: reassembled_in %s" % [r["reliable.reassembled_in"] for r in rows])
    fails.check(rows[2]["reliable.reassembled.length"] == ["1034"] and rows[3]["reliable.reassembled.length"] == ["1034"],
                "wrap: reassembled lengths %s %s" % (rows[2]["reliable.reassembled.length"], rows[3]["reliable.reassembled.length"]))
    fails.check(rows[1]["reliable.acked"] == [str((0 - 1 - i) % 65536) for i in range(32)],
                "wrap: fragment 0 of packet 0 acks %s" % rows[1]["reliable.acked"][:3])

    # Size limits of the receiver (reliable.max_packet_size 100): a payload of
    # 110 bytes in a 114-byte datagram (the datagram limit is 100 + 14),
    # and a 209-byte fragment datagram (above 100 + 14).
    p = os.path.join(d, "large.pcap")
    rt.write_pcap(p, [B("20640001") + b"z" * 110, frag(7, 0, 0, B("200700" "01") + b"z" * 200)])
    rows = rt.fields(p, F, extra=["-o", "reliable.max_packet_size:100"])
    check_fields(fails, "payload_too_large", rows[0], {"expert": "above the receiver's 100"})
    check_fields(fails, "datagram_too_large", rows[1], {"expert": "above what the receiver takes", "reliable.reassembled.length": []})

    # Analysis: acks of a sequence the capture does not hold (packets not
    # captured), contradicting ack bits, ack going back.
    hdr = lambda s, a, bits: bytes(rt_encode(s, a, bits))
    p = os.path.join(d, "acks.pcap")
    rt.write_pcap(p, [hdr(0, 65535, 0), hdr(1, 65535, 0), hdr(2, 65535, 0),
                      (hdr(0, 1, 0x3), "b"), (hdr(1, 2, 0x5), "b"), (hdr(2, 1, 0x3), "b"), (hdr(3, 9, 0x1), "b")])
    rows = rt.fields(p, F + ["reliable.analysis.not_captured"])
    check_fields(fails, "acks_first", rows[3], {"reliable.analysis.acks": ["2", "1"]})
    check_fields(fails, "ack_bits_inconsistent", rows[4], {"expert": "sequence 1 was acknowledged by an earlier"})
    check_fields(fails, "ack_back", rows[5], {"expert": "Ack went back from 2"})
    check_fields(fails, "not_captured", rows[6], {"expert": "Packets not captured"})
    fails.check([r["reliable.analysis.not_captured"] for r in rows] == [[]] * 6 + [["7"]],
                "not_captured: %s, want 7 (sequences 3-9) in the last frame only"
                % [r["reliable.analysis.not_captured"] for r in rows])

    # A reconnect on the same ports: A and B exchange 100 packets, then A
    # starts again (sequence 0, ack 65535, no ack bits) while B's old packet
    # 100 is still on the way, and B starts again answering A's new packet 0.
    # Each start is a note, the new sequences are no duplicates of the old,
    # B's old packet acks nothing of A's new ones, and the new packets ack
    # each other.
    p = os.path.join(d, "restart.pcap")
    full = lambda n: (1 << min(n, 32)) - 1
    pk = []
    for i in range(140):
        s = i % 100
        pk.append(hdr(s, 65535 if s == 0 else s - 1, 0 if s == 0 else full(s)))
        if i == 100:
            pk.append((hdr(100, 99, full(32)), "b"))
        pk.append((hdr(s, s, full(s + 1)), "b"))
    rt.write_pcap(p, pk)
    rows = rt.fields(p, ["_ws.expert.message", "reliable.analysis.extended_sequence", "reliable.analysis.acks"])
    experts = [(i + 1, m) for i, r in enumerate(rows) for m in r["_ws.expert.message"]]
    fails.check(experts == [(201, "Endpoint started again: sequences start over"),
                            (203, "Endpoint started again: sequences start over")],
                "restart: experts %s" % experts[:4])
    fails.check(rows[201]["reliable.analysis.acks"] == [], "restart: B's old packet acks %s" % rows[201]["reliable.analysis.acks"])
    fails.check(rows[202]["reliable.analysis.acks"] == ["201"] and rows[203]["reliable.analysis.acks"] == ["203"],
                "restart: the new packets ack %s %s" % (rows[202]["reliable.analysis.acks"], rows[203]["reliable.analysis.acks"]))
    fails.check(int(rows[200]["reliable.analysis.extended_sequence"][0]) > int(rows[199]["reliable.analysis.extended_sequence"][0]),
                "restart: the new sequences come after the old")

    # Hostile: every truncation of every case, random datagrams, random
    # fragment counts; the UDP heuristic on as well. A dissector bug aborts tshark.
    rnd = random.Random(1)
    dgs = []
    for _, dg, _w in HEADERS + FRAGMENTS:
        dgs += [dg[:n] for n in range(1, len(dg) + 1)]
    for _ in range(3000):
        n = rnd.choice([1, 2, 3, 4, 5, 6, 9, 20, 1030, 1100])
        dg = bytes(rnd.getrandbits(8) for _ in range(n))
        if rnd.random() < 0.5:
            dg = bytes([1, rnd.getrandbits(8), rnd.getrandbits(1), rnd.getrandbits(3), rnd.getrandbits(3)]) + dg[5:]
        dgs.append(dg)
    # Sequences jumping half the space each packet, each acked at once by the
    # peer: the loss check must not walk the empty sequences between them.
    seq = 0
    for i in range(2000):
        seq = (seq + 32767) % 65536
        dgs += [bytes(rt_encode(seq, 0, 0)), (bytes(rt_encode(i, seq, 1)), "b")]
    p = os.path.join(d, "hostile.pcap")
    rt.write_pcap(p, dgs)
    for extra in ([], ["--enable-heuristic", "reliable_udp"]):
        for two in (False, True):
            out = rt.tshark(["-r", p] + rt.DECODE + (["-2"] if two else []) + extra + ["-V"])
            fails.check(out.count("Reliable (packet acknowledgement") == len(dgs),
                        "hostile: %d of %d datagrams decoded" % (out.count("Reliable (packet acknowledgement"), len(dgs)))
    print("%d crafted headers and fragments, %d hostile datagrams" % (len(HEADERS) + len(FRAGMENTS) + 7, len(dgs)))
    fails.finish("reliable.headers")
    return 0


def rt_encode(seq, ack, bits):
    """The canonical header, per docs/reliable.md (used only for the analysis
    cases; the exact-bytes cases above are written out by hand)."""
    diff = (seq - ack) % 65536
    prefix = 0x20 if diff <= 255 else 0
    out = [0, seq & 255, seq >> 8] + ([diff] if diff <= 255 else [ack & 255, ack >> 8])
    for k in range(4):
        b = (bits >> (8 * k)) & 255
        if b != 255:
            prefix |= 2 << k
            out.append(b)
    out[0] = prefix
    return out


if __name__ == "__main__":
    sys.exit(main())
