#!/usr/bin/env python3
"""The fragment protocol on crafted captures:

- dispatch: chunk and fragment packets in one conversation (on chunk's port
  and off it, whichever heuristic pins it first) each decode as their own
  protocol; an unknown id behaves as chunk does; a fragment-id packet is
  never chunk (p2frag disabled, its heuristic off); Decode As and the
  p2frag.udp.port preference;
- reassembly: out of order, duplicate, interleaved packets, across the
  16-bit wrap and a sequence reused after it, inner sequence and CRC;
- one crafted datagram per receive-rule expert info, each raising exactly
  its own; the lost-packet analysis and the original-receiver notes;
- -z p2frag,packets rows and per-direction figures;
- tshark -q -z expert (no tree) finds every p2frag expert info the tree has.
Each capture is also read with -2: the expert infos are the same. One
PDML run a capture, pass and configuration (pt.decode) gives its fields and
expert infos to every check that reads it.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import chunktest as ct  # noqa: E402
import p2fragtest as pt  # noqa: E402

K = 1024
FIELDS = ["frame.protocols", "p2frag.sequence", "p2frag.fragment_id", "p2frag.reassembled_in",
          "p2frag.reassembled.length", "p2frag.fragment", "p2frag.analysis.complete_in",
          "p2frag.analysis.lost_in", "p2frag.analysis.missing", "p2frag.analysis.fragments_seen",
          "p2frag.a", "p2frag.num_items", "p2frag.crc32.status", "chunk.chunk_id", "chunk.type",
          "chunk.crc32.status", "p2frag.analysis.duplicate_of"]


FM = "p2frag.analysis.fragments_missing"


def run(F, tmp, name, rows, prefs=None, extra=()):
    """rows: (packet dict, want protocol 'chunk'|'p2frag'|None, want p2frag experts or None).
    Returns the -2 fields."""
    path = os.path.join(tmp, name + ".pcap")
    ct.write_pcap(path, [dict(p, payload=pkt) for p, pkt, *_ in rows])
    one = pt.decode(path, FIELDS, prefs, extra)
    two = pt.decode(path, FIELDS, prefs, list(extra) + ["-2"])
    F.check(len(one) == len(rows), "%s: %d frames for %d rows" % (name, len(one), len(rows)))
    for n, (a, b, (_, _, proto, want)) in enumerate(zip(one, two, rows)):
        w = "%s frame %d" % (name, n + 1)
        got = "chunk" if a["chunk"] else "p2frag" if a["p2frag"] else None
        F.check(not (a["chunk"] and a["p2frag"]), w + ": both chunk and p2frag")
        F.check(got == proto, w + ": decoded as %s, want %s" % (got, proto))
        # "Packet lost: fragments missing" is the one expert the passes may
        # disagree on: one pass flags a packet still incomplete when a newer
        # one completes, -2 only a packet that never completed (and one no
        # newer packet overtook, on its last frame). want is -2's.
        if want is not None:
            F.check(b["experts"] == want, w + ": experts %s, want %s" % (sorted(b["experts"]), sorted(want)))
        F.check(a["experts"] - {FM} == b["experts"] - {FM}, w + ": -2 experts %s, one pass %s"
                % (sorted(b["experts"]), sorted(a["experts"])))
    return [b["fields"] for b in two]


# ---- dispatch -----------------------------------------------------------------

def mixed_rows(port):
    """Chunk slices and acks and fragment packets on one port pair."""
    s = ct.seal
    whole = pt.big_b(9, 1500)
    fr = pt.split(9, whole)
    return [
        (port, s(ct.slice_body(1, 0, 2, bytes(K))), "chunk", set()),
        (port, fr[0], "p2frag", set()),
        (port, s(ct.slice_body(1, 1, 2, bytes(10))), "chunk", set()),
        (port, pt.packet_a(8, 1, 2, 3), "p2frag", set()),
        (port, fr[1], "p2frag", set()),
        (port, s(ct.ack_body(1, [1, 1])), "chunk", set()),
    ]


def dispatch(F, tmp):
    on_port = {"sport": 50000, "dport": 40000}
    off_port = {"sport": 7000, "dport": 7001}
    for name, port in (("mixed-port", on_port), ("mixed-heur", off_port)):
        rows = mixed_rows(port)
        got = run(F, tmp, name, rows)
        F.check(got[4]["p2frag.reassembled.length"] == [str(13 + 1500)], name + ": not reassembled")
        F.check(got[4]["p2frag.num_items"] == ["1500"], name + ": inner packet")
        for n in (0, 2, 5):
            F.check(got[n]["frame.protocols"][0].endswith(":udp:chunk"), name + ": %s" % got[n]["frame.protocols"])
            F.check(got[n]["chunk.crc32.status"] == ["1"], name + " frame %d: chunk CRC" % (n + 1))
        for n in (1, 3, 4):
            F.check(got[n]["frame.protocols"][0].endswith(":udp:p2frag"), name + ": %s" % got[n]["frame.protocols"])
        # The chunk frames decode as they do without the fragments.
        alone = [r for r in rows if r[2] == "chunk"]
        ga = run(F, tmp, name + "-chunk-only", alone)
        for a, b in zip([got[0], got[2], got[5]], ga):
            for f in ("chunk.chunk_id", "chunk.type", "chunk.crc32.status"):
                F.check(a[f] == b[f], name + ": %s %s alone %s" % (f, a[f], b[f]))
    # Fragment first (p2frag's heuristic pins the conversation), then chunk.
    rows = mixed_rows(off_port)
    rows = [rows[1], rows[0], rows[2], rows[3], rows[4], rows[5]]
    run(F, tmp, "mixed-heur-frag-first", rows)

    s = ct.seal
    frag = pt.packet_a(1, 0, 0, 0)
    # An unknown id keeps chunk's behaviour: on chunk's port chunk with an
    # unconfirmed id; off it the heuristic claims the second packet.
    rows = [
        (on_port, s(ct.slice_body(4, 0, 2, bytes(K)), 0xDEADBEEF), "chunk", set()),
        (on_port, s(ct.ack_body(4, [1, 0]), 0xDEADBEEF), "chunk", set()),
        ({"sport": 7002, "dport": 7003}, s(ct.slice_body(4, 0, 2, bytes(K)), 0xDEADBEEF), None, set()),
        ({"sport": 7002, "dport": 7003}, s(ct.ack_body(4, [1, 0]), 0xDEADBEEF), "chunk", set()),
    ]
    path = os.path.join(tmp, "unknown.pcap")
    run(F, tmp, "unknown", rows)
    chunk_exp = [e["all_experts"] & ct.DECODER_EXPERTS for e in pt.decode(path, [])]
    F.check(chunk_exp[0] == {"chunk.protocol_id.unconfirmed"}, "unknown: %s" % chunk_exp[0])
    F.check(chunk_exp[1] == {"chunk.protocol_id.other"}, "unknown: %s" % chunk_exp[1])

    # A fragment-id packet is never chunk: not with p2frag disabled on
    # chunk's port, not off-port with p2frag's heuristic off.
    rows = [(on_port, frag, None, set()), ({"sport": 7004, "dport": 7005}, frag, None, set())]
    run(F, tmp, "never-chunk-disabled", rows, extra=["--disable-protocol", "p2frag"])
    run(F, tmp, "never-chunk-noheur", [rows[1]], extra=["--disable-heuristic", "p2frag_udp"])
    # Decode As p2frag decodes a chunk packet as a fragment one, with a bad
    # CRC; the p2frag.udp.port preference finds fragments with no heuristic,
    # and hands chunk packets on that port to chunk.
    dp = {"sport": 7006, "dport": 7007}
    # (read as a fragment, the slice's bits also give a count of 0 and
    # non-zero padding: checked by hand)
    rows = [(dp, s(ct.slice_body(1, 0, 1, bytes(5))), "p2frag",
             {"p2frag.crc32.bad", "p2frag.num_fragments.zero", "p2frag.padding.nonzero"}),
            (dp, frag, "p2frag", set())]
    run(F, tmp, "decode-as", rows, pt.NO_NOTES, ["-d", "udp.port==7007,p2frag", "--disable-heuristic", "chunk_udp"])
    rows = [(dp, s(ct.slice_body(1, 0, 1, bytes(5))), "chunk", None), (dp, frag, "p2frag", set())]
    run(F, tmp, "port-pref", rows, dict(pt.NO_NOTES, **{"p2frag.udp.port": "7007"}),
        ["--disable-heuristic", "chunk_udp", "--disable-heuristic", "p2frag_udp"])
    rows = [(dp, frag, None, set())]
    run(F, tmp, "no-port-no-heur", rows, None, ["--disable-heuristic", "p2frag_udp"])


# ---- reassembly ------------------------------------------------------------------

def reassembly(F, tmp):
    P = {"sport": 7100, "dport": 7101}
    wa = pt.big_b(20, 2500)          # 3 fragments
    fa = pt.split(20, wa)
    wb = pt.big_b(21, 1200, seed=5)  # 2 fragments
    fb = pt.split(21, wb)
    # out of order, duplicate
    rows = [(P, fa[2], "p2frag", set()), (P, fa[0], "p2frag", set()),
            (P, fa[0], "p2frag", {"p2frag.fragment.duplicate"}), (P, fa[1], "p2frag", set())]
    got = run(F, tmp, "order-dup", rows, pt.NO_NOTES)
    F.check(got[3]["p2frag.reassembled.length"] == [str(len(wa))], "order-dup: length %s" % got[3]["p2frag.reassembled.length"])
    F.check(got[3]["p2frag.fragment"] == ["2", "4", "1"], "order-dup: fragments %s" % got[3]["p2frag.fragment"])
    for n in (0, 1, 2):
        F.check(got[n]["p2frag.reassembled_in"] == ["4"], "order-dup frame %d: reassembled_in %s"
                % (n + 1, got[n]["p2frag.reassembled_in"]))
    F.check(got[2]["p2frag.analysis.duplicate_of"] == ["2"], "order-dup: duplicate_of")

    # interleaved packets (the original receiver's bug 4), with the notes on
    rows = [(P, fb[0], "p2frag", set()), (P, fa[0], "p2frag", set()),
            (P, fb[1], "p2frag", {"p2frag.original.interleaved"}), (P, fa[1], "p2frag", set()),
            (P, fa[2], "p2frag", set())]
    # fb is sequence 21, fa 20: fa is older, so B saw nothing newer... B
    # completes after A's fragment 0 (older): no note for B; reorder so that
    # the newer one interleaves the older.
    rows = [(P, fa[0], "p2frag", set()), (P, fb[0], "p2frag", set()), (P, fa[1], "p2frag", set()),
            (P, fb[1], "p2frag", set()), (P, fa[2], "p2frag", {"p2frag.original.interleaved"})]
    got = run(F, tmp, "interleave", rows)
    # B completes (frame 4) while A is incomplete: one pass flags A at once;
    # A completes in frame 5, so -2 does not.
    one = pt.decode(os.path.join(tmp, "interleave.pcap"), [])
    F.check(FM in one[3]["experts"], "interleave: one pass, frame 4 %s" % sorted(one[3]["experts"]))
    F.check(got[3]["p2frag.reassembled.length"] == [str(len(wb))], "interleave: B not reassembled")
    F.check(got[4]["p2frag.reassembled.length"] == [str(len(wa))], "interleave: A not reassembled")

    # across the wrap: 65535 and 0 interleaved
    w1 = pt.big_b(65535, 1100)
    w2 = pt.big_b(0, 1100, seed=9)
    f1, f2 = pt.split(65535, w1), pt.split(0, w2)
    W = {"sport": 7102, "dport": 7103}
    rows = [(W, f1[0], "p2frag", set()), (W, f2[0], "p2frag", set()), (W, f1[1], "p2frag", set()),
            (W, f2[1], "p2frag", set())]
    got = run(F, tmp, "wrap", rows, pt.NO_NOTES)
    F.check(got[2]["p2frag.reassembled.length"] == [str(len(w1))], "wrap: 65535 not reassembled")
    F.check(got[3]["p2frag.reassembled.length"] == [str(len(w2))], "wrap: 0 not reassembled")

    # a sequence reused after the wrap: 10 unfinished, then the sequence
    # goes round (regular packets 200 apart), then a new 10 of 3 fragments
    R = {"sport": 7104, "dport": 7105}
    old = pt.split(10, pt.big_b(10, 1500))
    new_whole = pt.big_b(10, 2100, seed=3)
    new = pt.split(10, new_whole)
    # old 10 never completes and no newer fragmented packet completes before
    # the new 10: -2 flags it on its own (only) frame.
    rows = [(R, old[0], "p2frag", {FM})]
    seqs = [(10 + 200 * k) % 65536 for k in range(1, 328)] + [(10 + 65536 - 100) % 65536]
    for i, sq in enumerate(seqs):
        rows.append((R, pt.packet_a(sq, 0, 0, 0), "p2frag", None))
    rows += [(R, f, "p2frag", set()) for f in new]
    got = run(F, tmp, "reuse", rows, pt.NO_NOTES)
    F.check(got[-1]["p2frag.reassembled.length"] == [str(len(new_whole))], "reuse: new 10 not reassembled: %s"
            % got[-1]["p2frag.reassembled.length"])
    F.check(got[0]["p2frag.analysis.lost_in"] == ["3"], "reuse: old 10 lost_in %s" % got[0]["p2frag.analysis.lost_in"])
    F.check(got[0]["p2frag.analysis.missing"] == ["1"], "reuse: old 10 missing %s" % got[0]["p2frag.analysis.missing"])
    exp = pt.decode(os.path.join(tmp, "reuse.pcap"), [], pt.NO_NOTES)
    F.check(exp[2]["experts"] == {"p2frag.analysis.lost"}, "reuse: frame 3 %s" % exp[2]["experts"])

    # the reassembled packet's own sequence and CRC
    inner_other = pt.big_b(31, 1100)
    frs = [pt.fragment(30, i, 2, inner_other[i * K:(i + 1) * K]) for i in range(2)]
    junk = bytes((i * 13 + 7) % 256 for i in range(1500))
    frj = pt.split(32, junk)
    I = {"sport": 7106, "dport": 7107}
    rows = [(I, frs[0], "p2frag", set()), (I, frs[1], "p2frag", {"p2frag.reassembled.sequence_mismatch"}),
            (I, frj[0], "p2frag", set()), (I, frj[1], "p2frag", {"p2frag.reassembled.crc_bad"})]
    run(F, tmp, "inner", rows, pt.NO_NOTES)


# ---- one datagram per rule -----------------------------------------------------------

def rules(F, tmp):
    P = {"sport": 7200, "dport": 7201}
    frag = pt.fragment
    a = pt.packet_a(100, 1, 2, 3)
    rows = [
        (P, pt.packet_a(100, 1, 2, 3), "p2frag", set()),
        (P, bytes([a[0] ^ 1]) + a[1:], "p2frag", {"p2frag.crc32.bad"}),
        (P, pt.packet_a(101, 1, 2, 3, pad=1), "p2frag", {"p2frag.padding.nonzero"}),
        (P, pt.seal(pt.packet_a(102, 1, 2, 3)[4:-3]), "p2frag", {"p2frag.truncated"}),
        (P, frag(103, 0, 0, bytes(100)), "p2frag", {"p2frag.num_fragments.zero"}),
        (P, frag(104, 3, 3, bytes(100)), "p2frag", {"p2frag.fragment_id.out_of_range"}),
        (P, frag(105, 2, 3, b""), "p2frag", {"p2frag.fragment_bytes.out_of_range"}),
        (P, frag(106, 0, 3, bytes(1025)), "p2frag", {"p2frag.fragment_bytes.out_of_range"}),
        (P, frag(107, 0, 3, bytes(1000)), "p2frag", {"p2frag.fragment_bytes.short"}),
        (P, frag(108, 0, 3, bytes(K)), "p2frag", set()),
        (P, frag(108, 1, 4, bytes(K)), "p2frag", {"p2frag.num_fragments.conflict"}),
        # the last frame of 108, which never completes: -2 flags it there
        (P, frag(108, 0, 3, bytes(K)), "p2frag", {"p2frag.fragment.duplicate", "p2frag.analysis.fragments_missing"}),
        (P, pt.big_b(109, 1012), "p2frag", {"p2frag.regular.too_long"}),
        # 600 moves the unfinished 108 out of the window: lost
        (P, pt.packet_a(600, 0, 0, 0), "p2frag", {"p2frag.analysis.lost"}),
        (P, pt.packet_a(300, 0, 0, 0), "p2frag", {"p2frag.sequence.too_old"}),
        (P, pt.packet_a(601, 0, 0, 0, end_check=b"\xe2\xac\x08\x98"), "p2frag", {"p2frag.end_check.bad"}),
        (P, pt.seal(_a_raw(602, 31, 0, 0)), "p2frag", {"p2frag.value.out_of_range"}),
        (P, pt.packet_b(603, [], raw_count=20000), "p2frag", {"p2frag.value.out_of_range"}),
        (P, pt.packet_b(605, [0, 155, -100]), "p2frag", {"p2frag.value.out_of_range"}),
        (P, pt.seal(pt.packet_a(604, 0, 0, 0)[4:] + b"xyz"), "p2frag", {"p2frag.trailing_bytes"}),
    ]
    run(F, tmp, "rules", rows, pt.NO_NOTES, ["-d", "udp.port==7201,p2frag"])
    # The notes: a delivered sequence >= 256; fragment count 0 names bug 5.
    rows = [(P, pt.packet_a(255, 0, 0, 0), "p2frag", set()),
            (P, pt.packet_a(256, 0, 0, 0), "p2frag", {"p2frag.original.sequence_256"})]
    run(F, tmp, "notes", rows)
    return {e for r in rows for e in (r[3] or set())}


def _a_raw(seq, ra, rb, rc):
    """Test packet A with raw field values (ra up to 31)."""
    w = ct.BitWriter()
    w.put(0, 32)
    w.put(seq, 16)
    w.put(1, 2)
    w.put(ra, 5)
    w.put(rb, 6)
    w.put(rc, 6)
    w.align()
    return w.tobytes()[4:] + ct.END_CHECK


# ---- preferences -----------------------------------------------------------------------

def preferences(F, tmp):
    P = {"sport": 7400, "dport": 7401}
    # Opaque bodies: the body goes to the data dissector, the end check is
    # still checked.
    path = os.path.join(tmp, "opaque.pcap")
    ct.write_pcap(path, [dict(P, payload=pt.packet_a(5, 1, 2, 3))])
    got = pt.fields(path, ["p2frag.a", "p2frag.body", "data.data", "p2frag.end_check.status"],
                    {"p2frag.bodies": "opaque"})
    F.check(got[0]["p2frag.a"] == [] and len(got[0]["p2frag.body"]) == 1 and got[0]["data.data"]
            and got[0]["p2frag.end_check.status"] == ["1"], "opaque: %s" % got[0])
    # A game with 8 packet types: a 3-bit type; its fragments carry the
    # data from byte 9 still (16 + 3 + 16 bits round up to 5 bytes).
    def frag8(seq, fid, n, data):
        return pt.seal(pt.fragment_body(seq, fid, n, data, type_bits=3))
    whole = bytes(range(256)) * 6
    frs = [frag8(40, i, 2, whole[i * K:(i + 1) * K]) for i in range(2)]
    path = os.path.join(tmp, "types8.pcap")
    ct.write_pcap(path, [dict(P, payload=f) for f in frs])
    got = pt.fields(path, ["p2frag.fragment_id", "p2frag.num_fragments", "p2frag.reassembled.length"],
                    {"p2frag.num_types": "8"})
    F.check([g["p2frag.fragment_id"] for g in got] == [["0"], ["1"]] and
            got[1]["p2frag.reassembled.length"] == [str(len(whole))], "num_types 8: %s" % got)
    # Reassembly off: no reassembled packet, the analysis still counts.
    got = pt.fields(path, ["p2frag.reassembled.length", "p2frag.analysis.complete_in"],
                    {"p2frag.num_types": "8", "p2frag.reassemble": "FALSE"})
    F.check(got[1]["p2frag.reassembled.length"] == [] and got[1]["p2frag.analysis.complete_in"] == ["2"],
            "reassemble off: %s" % got)
    # Another protocol id.
    path = os.path.join(tmp, "ownid.pcap")
    ct.write_pcap(path, [dict(P, payload=pt.packet_a(5, 1, 2, 3, protocol_id=0x01020304))])
    e = pt.experts(path, {"p2frag.protocol_id": "0x01020304"})
    F.check(e[0]["p2frag"] and not e[0]["experts"], "own id: %s" % e[0])


# ---- statistics and expert infos without a tree ---------------------------------------

def stats(F, tmp):
    P = {"sport": 7300, "dport": 7301}
    rows = []
    # 4 packets of 3 fragments; packet 1 loses fragment 1, packet 3 loses 0 and 2.
    for k in range(4):
        frs = pt.split(k, pt.big_b(k, 2500, seed=k))
        for i, f in enumerate(frs):
            if (k, i) in ((1, 1), (3, 0), (3, 2)):
                continue
            rows.append(dict(P, payload=f))
    rows.append(dict(P, payload=pt.packet_a(4, 0, 0, 0)))
    path = os.path.join(tmp, "stats.pcap")
    ct.write_pcap(path, rows)
    out = ct.tshark(["-r", path, "-q", "-z", "p2frag,packets"])
    lines = [l for l in out.splitlines() if re.match(r"^\d+ ", l)]
    F.check(len(lines) == 4, "stats: %d rows:\n%s" % (len(lines), out))
    want = [("0", "2513", "3/3", "complete in frame 3"), ("1", "2513", "2/3", "incomplete, missing 1"),
            ("2", "2513", "3/3", "complete in frame 8"), ("3", "?", "1/3", "incomplete, missing 0,2")]
    for l, (seq, size, frags, status) in zip(lines, want):
        p = l.split()
        F.check(p[4] == seq and p[5] == size and p[6] == frags and l.endswith(status), "stats row: %r" % l)
    F.check("1 regular packet, 4 fragmented packets (2 complete)" in out, "stats summary:\n" + out)
    # p = 3/12 = 25%; packet loss 2/4; predicted 1 - 0.75^3 = 57.81%
    F.check("fragment loss 25.00% (3 of 12 fragments missing), packet loss 50.00% (2 of 4), predicted 57.81%"
            in out, "stats figures:\n" + out)


def expert_without_tree(F, tmp):
    """-q -z expert (no tree, as the GUI's Expert Information) counts what
    the tree shows, for every crafted capture."""
    for name in sorted(os.listdir(tmp)):
        if name[:-5] not in ("rules", "order-dup", "interleave", "reuse", "inner", "mixed-port", "decode-as"):
            continue
        path = os.path.join(tmp, name)
        extra = {"rules.pcap": ["-d", "udp.port==7201,p2frag"],
                 "decode-as.pcap": ["-d", "udp.port==7007,p2frag"]}.get(name, [])
        for two in ([], ["-2"]):
            tree = sum(len(e["experts"]) for e in pt.decode(path, [], None, extra + two))
            out = ct.tshark(["-r", path, "-q", "-z", "expert"] + extra + two)
            n = sum(int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+\S+\s+P2frag\s", out, re.M))
            F.check(n == tree, "%s%s: -z expert counts %d p2frag expert infos, the tree %d"
                    % (name, " -2" if two else "", n, tree))


def main():
    ct.run_checks("p2frag.crafted", dispatch, reassembly, rules, preferences, stats, expert_without_tree)


if __name__ == "__main__":
    main()
