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
Each case is also read with -2: the expert infos are the same.

The cases that are read in one configuration (preferences, Decode As,
protocols and heuristics on or off) are one capture, one run a pass
(pt.decode: fields and expert infos at once): each case is a conversation
of its own (its own addresses) and starts 1000 s after the one before,
and its frames are numbered, and its frame references mapped back, as its
capture alone has them (Plan). The no-tree runs (-q -z expert, one pass
and -2, and -z p2frag,packets) read the default configuration's capture:
its p2frag expert infos counted without a tree must be the tree's; when
they are not, each case is read alone to name the ones that differ.
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
# The fields of FIELDS that hold frame numbers (FT_FRAMENUM).
FRAME_FIELDS = {"p2frag.reassembled_in", "p2frag.fragment", "p2frag.analysis.complete_in",
                "p2frag.analysis.lost_in", "p2frag.analysis.duplicate_of"}


FM = "p2frag.analysis.fragments_missing"

# The configurations: name -> (preferences, other tshark arguments). Each
# case is read in one of them; the cases of one share its runs, so their
# ports must not meet another case's Decode As or port preference.
DECODE_AS_RULES = ["-d", "udp.port==7201,p2frag"]
DECODE_AS_7007 = ["-d", "udp.port==7007,p2frag"]
CONFIGS = {
    # the default, with Decode As for the no-tree copies of "rules" and
    # "decode-as" (each alone on its port)
    "default": (None, DECODE_AS_RULES + DECODE_AS_7007),
    "no-notes": (pt.NO_NOTES, DECODE_AS_RULES),
    "p2frag-disabled": (None, ["--disable-protocol", "p2frag"]),
    "p2frag-noheur": (None, ["--disable-heuristic", "p2frag_udp"]),
    "no-heur": (dict(pt.NO_NOTES, **{"p2frag.udp.port": "7009"}),
                DECODE_AS_7007 + ["--disable-heuristic", "chunk_udp", "--disable-heuristic", "p2frag_udp"]),
}


class Plan:
    """The crafted cases, gathered first and read together: add() a case
    to a configuration, then read() every configuration's capture (one run
    a pass), then got()/one() give a case's frames as run() did alone."""

    def __init__(self):
        self.cases = []     # {"name", "config", "rows", "checked", "first", "last"}
        self.two = {}
        self.ones = {}
        self.paths = {}
        self.no_tree = {}   # the default configuration's runs without a tree

    def add(self, config, name, rows, checked=True):
        """rows: (packet dict, payload, want protocol 'chunk'|'p2frag'|None,
        want p2frag experts (-2's) or None). An unchecked case is read only
        for the no-tree counts."""
        assert config in CONFIGS and name not in {c["name"] for c in self.cases}
        self.cases.append({"name": name, "config": config, "rows": rows, "checked": checked})

    def _frames(self, frames, case):
        first = case["first"]
        out = []
        for fr in frames[first - 1:case["last"]]:
            fields = {n: ([str(int(v) - first + 1) for v in vs] if n in FRAME_FIELDS else vs)
                      for n, vs in fr["fields"].items()}
            out.append(dict(fr, fields=fields))
        return out

    def read(self, F, tmp):
        for config, (prefs, extra) in CONFIGS.items():
            cases = [c for c in self.cases if c["config"] == config]
            if not cases:
                continue
            packets = []
            for c in cases:
                k = self.cases.index(c) + 1
                c["first"] = len(packets) + 1
                for i, (p, pkt, *_) in enumerate(c["rows"]):
                    packets.append(dict(p, payload=pkt, src="10.1.%d.1" % k, dst="10.1.%d.2" % k,
                                        t=1000.0 * k + i * 0.01))
                c["last"] = len(packets)
            path = os.path.join(tmp, config + ".pcap")
            ct.write_pcap(path, packets)
            self.paths[config] = path
            one = pt.decode(path, FIELDS, prefs, extra)
            two = pt.decode(path, FIELDS, prefs, list(extra) + ["-2"])
            F.check(len(one) == len(packets) and len(two) == len(packets), "%s: %d and %d (-2) frames for %d"
                    % (config, len(one), len(two), len(packets)))
            for c in cases:
                self.ones[c["name"]] = self._frames(one, c)
                self.two[c["name"]] = self._frames(two, c)
                if c["checked"]:
                    self._check(F, c)

    def _check(self, F, case):
        name, rows = case["name"], case["rows"]
        one, two = self.ones[name], self.two[name]
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

    def got(self, name):
        """The -2 fields of case name, a dict a frame."""
        return [b["fields"] for b in self.two[name]]

    def one(self, name):
        """The one-pass frames of case name, as pt.decode gives them."""
        return self.ones[name]

    def case(self, name):
        return next(c for c in self.cases if c["name"] == name)


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


def dispatch(plan):
    on_port = {"sport": 50000, "dport": 40000}
    off_port = {"sport": 7000, "dport": 7001}
    mixed = (("mixed-port", on_port), ("mixed-heur", off_port))
    for name, port in mixed:
        rows = mixed_rows(port)
        plan.add("default", name, rows)
        # The chunk frames decode as they do without the fragments.
        plan.add("default", name + "-chunk-only", [r for r in rows if r[2] == "chunk"])
    # Fragment first (p2frag's heuristic pins the conversation), then chunk.
    rows = mixed_rows(off_port)
    rows = [rows[1], rows[0], rows[2], rows[3], rows[4], rows[5]]
    plan.add("default", "mixed-heur-frag-first", rows)

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
    plan.add("default", "unknown", rows)

    # A fragment-id packet is never chunk: not with p2frag disabled on
    # chunk's port, not off-port with p2frag's heuristic off.
    rows = [(on_port, frag, None, set()), ({"sport": 7004, "dport": 7005}, frag, None, set())]
    plan.add("p2frag-disabled", "never-chunk-disabled", rows)
    plan.add("p2frag-noheur", "never-chunk-noheur", [rows[1]])
    # Decode As p2frag decodes a chunk packet as a fragment one, with a bad
    # CRC; the p2frag.udp.port preference finds fragments with no heuristic,
    # and hands chunk packets on that port to chunk.
    dp = {"sport": 7006, "dport": 7007}
    # (read as a fragment, the slice's bits also give a count of 0 and
    # non-zero padding: checked by hand)
    rows = [(dp, s(ct.slice_body(1, 0, 1, bytes(5))), "p2frag",
             {"p2frag.crc32.bad", "p2frag.num_fragments.zero", "p2frag.padding.nonzero"}),
            (dp, frag, "p2frag", set())]
    plan.add("no-heur", "decode-as", rows)
    # (and with the notes and chunk's heuristic on: the no-tree counts)
    plan.add("default", "decode-as-notes", rows, checked=False)
    pp = {"sport": 7008, "dport": 7009}
    rows = [(pp, s(ct.slice_body(1, 0, 1, bytes(5))), "chunk", None), (pp, frag, "p2frag", set())]
    plan.add("no-heur", "port-pref", rows)
    plan.add("p2frag-noheur", "no-port-no-heur", [(dp, frag, None, set())])

    def check(F):
        for name, _ in mixed:
            got = plan.got(name)
            F.check(got[4]["p2frag.reassembled.length"] == [str(13 + 1500)], name + ": not reassembled")
            F.check(got[4]["p2frag.num_items"] == ["1500"], name + ": inner packet")
            for n in (0, 2, 5):
                F.check(got[n]["frame.protocols"][0].endswith(":udp:chunk"),
                        name + ": %s" % got[n]["frame.protocols"])
                F.check(got[n]["chunk.crc32.status"] == ["1"], name + " frame %d: chunk CRC" % (n + 1))
            for n in (1, 3, 4):
                F.check(got[n]["frame.protocols"][0].endswith(":udp:p2frag"),
                        name + ": %s" % got[n]["frame.protocols"])
            ga = plan.got(name + "-chunk-only")
            for a, b in zip([got[0], got[2], got[5]], ga):
                for f in ("chunk.chunk_id", "chunk.type", "chunk.crc32.status"):
                    F.check(a[f] == b[f], name + ": %s %s alone %s" % (f, a[f], b[f]))
        chunk_exp = [e["all_experts"] & ct.DECODER_EXPERTS for e in plan.one("unknown")]
        F.check(chunk_exp[0] == {"chunk.protocol_id.unconfirmed"}, "unknown: %s" % chunk_exp[0])
        F.check(chunk_exp[1] == {"chunk.protocol_id.other"}, "unknown: %s" % chunk_exp[1])
    return check


# ---- reassembly ------------------------------------------------------------------

def reassembly(plan):
    P = {"sport": 7100, "dport": 7101}
    wa = pt.big_b(20, 2500)          # 3 fragments
    fa = pt.split(20, wa)
    wb = pt.big_b(21, 1200, seed=5)  # 2 fragments
    fb = pt.split(21, wb)
    # out of order, duplicate
    rows = [(P, fa[2], "p2frag", set()), (P, fa[0], "p2frag", set()),
            (P, fa[0], "p2frag", {"p2frag.fragment.duplicate"}), (P, fa[1], "p2frag", set())]
    plan.add("no-notes", "order-dup", rows)
    plan.add("default", "order-dup-notes", rows, checked=False)

    # interleaved packets (the original receiver's bug 4), with the notes on
    rows = [(P, fb[0], "p2frag", set()), (P, fa[0], "p2frag", set()),
            (P, fb[1], "p2frag", {"p2frag.original.interleaved"}), (P, fa[1], "p2frag", set()),
            (P, fa[2], "p2frag", set())]
    # fb is sequence 21, fa 20: fa is older, so B saw nothing newer... B
    # completes after A's fragment 0 (older): no note for B; reorder so that
    # the newer one interleaves the older.
    rows = [(P, fa[0], "p2frag", set()), (P, fb[0], "p2frag", set()), (P, fa[1], "p2frag", set()),
            (P, fb[1], "p2frag", set()), (P, fa[2], "p2frag", {"p2frag.original.interleaved"})]
    plan.add("default", "interleave", rows)

    # across the wrap: 65535 and 0 interleaved
    w1 = pt.big_b(65535, 1100)
    w2 = pt.big_b(0, 1100, seed=9)
    f1, f2 = pt.split(65535, w1), pt.split(0, w2)
    W = {"sport": 7102, "dport": 7103}
    rows = [(W, f1[0], "p2frag", set()), (W, f2[0], "p2frag", set()), (W, f1[1], "p2frag", set()),
            (W, f2[1], "p2frag", set())]
    plan.add("no-notes", "wrap", rows)

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
    plan.add("no-notes", "reuse", rows)
    plan.add("default", "reuse-notes", rows, checked=False)

    # the reassembled packet's own sequence and CRC
    inner_other = pt.big_b(31, 1100)
    frs = [pt.fragment(30, i, 2, inner_other[i * K:(i + 1) * K]) for i in range(2)]
    junk = bytes((i * 13 + 7) % 256 for i in range(1500))
    frj = pt.split(32, junk)
    I = {"sport": 7106, "dport": 7107}
    rows = [(I, frs[0], "p2frag", set()), (I, frs[1], "p2frag", {"p2frag.reassembled.sequence_mismatch"}),
            (I, frj[0], "p2frag", set()), (I, frj[1], "p2frag", {"p2frag.reassembled.crc_bad"})]
    plan.add("no-notes", "inner", rows)
    plan.add("default", "inner-notes", rows, checked=False)

    def check(F):
        got = plan.got("order-dup")
        F.check(got[3]["p2frag.reassembled.length"] == [str(len(wa))], "order-dup: length %s"
                % got[3]["p2frag.reassembled.length"])
        F.check(got[3]["p2frag.fragment"] == ["2", "4", "1"], "order-dup: fragments %s" % got[3]["p2frag.fragment"])
        for n in (0, 1, 2):
            F.check(got[n]["p2frag.reassembled_in"] == ["4"], "order-dup frame %d: reassembled_in %s"
                    % (n + 1, got[n]["p2frag.reassembled_in"]))
        F.check(got[2]["p2frag.analysis.duplicate_of"] == ["2"], "order-dup: duplicate_of")

        got = plan.got("interleave")
        # B completes (frame 4) while A is incomplete: one pass flags A at once;
        # A completes in frame 5, so -2 does not.
        one = plan.one("interleave")
        F.check(FM in one[3]["experts"], "interleave: one pass, frame 4 %s" % sorted(one[3]["experts"]))
        F.check(got[3]["p2frag.reassembled.length"] == [str(len(wb))], "interleave: B not reassembled")
        F.check(got[4]["p2frag.reassembled.length"] == [str(len(wa))], "interleave: A not reassembled")

        got = plan.got("wrap")
        F.check(got[2]["p2frag.reassembled.length"] == [str(len(w1))], "wrap: 65535 not reassembled")
        F.check(got[3]["p2frag.reassembled.length"] == [str(len(w2))], "wrap: 0 not reassembled")

        got = plan.got("reuse")
        F.check(got[-1]["p2frag.reassembled.length"] == [str(len(new_whole))], "reuse: new 10 not reassembled: %s"
                % got[-1]["p2frag.reassembled.length"])
        F.check(got[0]["p2frag.analysis.lost_in"] == ["3"], "reuse: old 10 lost_in %s"
                % got[0]["p2frag.analysis.lost_in"])
        F.check(got[0]["p2frag.analysis.missing"] == ["1"], "reuse: old 10 missing %s"
                % got[0]["p2frag.analysis.missing"])
        exp = plan.one("reuse")
        F.check(exp[2]["experts"] == {"p2frag.analysis.lost"}, "reuse: frame 3 %s" % exp[2]["experts"])
    return check


# ---- one datagram per rule -----------------------------------------------------------

def rules(plan):
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
    plan.add("no-notes", "rules", rows)
    plan.add("default", "rules-notes", rows, checked=False)
    # The notes: a delivered sequence >= 256; fragment count 0 names bug 5.
    # (off the port of "rules", which the default configuration decodes as
    # p2frag for the no-tree counts: found by the heuristic)
    N = {"sport": 7202, "dport": 7203}
    rows = [(N, pt.packet_a(255, 0, 0, 0), "p2frag", set()),
            (N, pt.packet_a(256, 0, 0, 0), "p2frag", {"p2frag.original.sequence_256"})]
    plan.add("default", "notes", rows)


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

def stats(plan):
    P = {"sport": 7300, "dport": 7301}
    rows = []
    # 4 packets of 3 fragments; packet 1 loses fragment 1, packet 3 loses 0 and 2.
    for k in range(4):
        frs = pt.split(k, pt.big_b(k, 2500, seed=k))
        for i, f in enumerate(frs):
            if (k, i) in ((1, 1), (3, 0), (3, 2)):
                continue
            rows.append((P, f, "p2frag", None))
    rows.append((P, pt.packet_a(4, 0, 0, 0), "p2frag", None))
    plan.add("default", "stats", rows, checked=False)

    def check(F):
        c = plan.case("stats")
        src = " 10.1.%d.1:" % (plan.cases.index(c) + 1)
        # the table's lines of its direction (rows, then figures: the line
        # naming it and the next), its frame numbers as it alone has them
        table = plan.no_tree["table"].split("\n")
        mine = [l for i, l in enumerate(table) if src in l or (i and src in table[i - 1]
                                                                and table[i - 1].startswith("Stream "))]
        out = re.sub(r"frame (\d+)", lambda m: "frame %d" % (int(m.group(1)) - c["first"] + 1), "\n".join(mine))
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
    return check


def expert_without_tree(plan):
    """-q -z expert (no tree, as the GUI's Expert Information) counts what
    the tree shows, one pass and -2, over the default configuration's
    capture (every case of it: the notes on, Decode As for "rules-notes" and
    "decode-as-notes"). When the counts differ, each case is read alone
    (the tree and -z expert) to name those whose counts differ."""
    def check(F, tmp):
        prefs, extra = CONFIGS["default"]
        cases = [c for c in plan.cases if c["config"] == "default"]
        for two, zex, views in (([], plan.no_tree["expert"], plan.ones), (["-2"], plan.no_tree["expert-2"], plan.two)):
            tag = " -2" if two else ""
            tree = sum(len(e["experts"]) for c in cases for e in views[c["name"]])
            n = pt.expert_counts(zex)
            if n == tree:
                continue
            named = []
            for c in cases:
                path = os.path.join(tmp, "alone-%s.pcap" % c["name"])
                ct.write_pcap(path, [dict(p, payload=pkt) for p, pkt, *_ in c["rows"]])
                t = sum(len(e["experts"]) for e in pt.decode(path, [], prefs, list(extra) + two))
                z = pt.expert_counts(ct.tshark(["-r", path, "-q", "-z", "expert"] + ct.pref_args(prefs)
                                            + list(extra) + two))
                if t != z:
                    named.append("%s%s: -z expert counts %d p2frag expert infos, the tree %d" % (c["name"], tag, z, t))
            F.items += named or ["%s%s: -z expert counts %d p2frag expert infos, the tree %d (cases %s read in "
                                 "one file; alone each counts alike)" % (plan.paths["default"], tag, n, tree,
                                                                          ", ".join(c["name"] for c in cases))]
    return check


def crafted(F, tmp):
    plan = Plan()
    checks = [dispatch(plan), reassembly(plan), stats(plan)]
    rules(plan)
    no_tree = expert_without_tree(plan)
    plan.read(F, tmp)
    # The runs without a tree: one pass (-z expert and -z p2frag,packets)
    # and -2 (-z expert).
    prefs, extra = CONFIGS["default"]
    args = ["-r", plan.paths["default"], "-q", "-z", "expert"] + ct.pref_args(prefs) + list(extra)
    table, rest = ct.split_table(ct.tshark(args + ["-z", "p2frag,packets"]), "P2frag fragmented packets")
    plan.no_tree = {"expert": rest, "table": table, "expert-2": ct.tshark(args + ["-2"])}
    for check in checks:
        check(F)
    no_tree(F, tmp)


def main():
    ct.run_checks("p2frag.crafted", crafted, preferences)


if __name__ == "__main__":
    main()
