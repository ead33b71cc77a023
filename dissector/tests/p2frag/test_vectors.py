#!/usr/bin/env python3
"""vectors-fragments.txt through tshark, field by field (-T fields):

- every P line (a regular packet) decodes to exactly its values, each in a
  conversation of its own (found by the heuristic), with no rule expert;
- every F line decodes to its sequence, fragment id, count, size and data,
  each group in a conversation of its own, and every W line is what its
  group reassembles to: the reassembled bytes, and for protocol2-B groups
  the inner packet's sequence, type and items; raw groups (some fragments
  only) stay incomplete with exactly the missing fragment ids;
- every E line raises exactly its rule's expert info and no other (Decode
  As, so that a bad CRC is decoded too), with the notes about the original
  receiver off; with them on, exactly the notes listed here too.

Also checks the test encoder (p2frag/p2fragtest.py) against the P and F lines.

The F, P and E lines are one capture (in that order; each kind its own
addresses, 1000 s after the one before), read in three runs: one pass with
the notes off (P, F and E lines), -2 with the notes off (F lines) and one
pass with the notes on (E lines), all with the E lines' Decode As (no
other line is on its port); the last two print only the frames they are
for (-Y frame.number range).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import chunktest as ct  # noqa: E402
import p2fragtest as pt  # noqa: E402

P_FIELDS = ["p2frag.sequence", "p2frag.type", "p2frag.a", "p2frag.b", "p2frag.c", "p2frag.num_items",
            "p2frag.item", "p2frag.position_x", "p2frag.position_y", "p2frag.position_z", "p2frag.at_rest",
            "p2frag.velocity_x", "p2frag.velocity_y", "p2frag.velocity_z", "p2frag.crc32.status",
            "p2frag.protocol_id", "p2frag.end_check.status", "frame.protocols"]
F_FIELDS = ["p2frag.sequence", "p2frag.type", "p2frag.fragment_id", "p2frag.num_fragments",
            "p2frag.fragment_bytes", "p2frag.fragment_data", "p2frag.crc32.status", "p2frag.protocol_id",
            "p2frag.reassembled.data", "p2frag.reassembled.length", "p2frag.fragment", "p2frag.num_items",
            "p2frag.item", "p2frag.analysis.fragments_seen", "p2frag.analysis.missing",
            "p2frag.analysis.complete_in", "p2frag.reassembled_in", "frame.number"]

# E tag -> the rule expert it raises (docs/p2frag.md, "Expert infos").
E_EXPERT = {
    "nf256_field0": {"p2frag.num_fragments.zero"},
    "single_fragment": set(),
    "ok_mid_fragment": set(),
    "ok_last_fragment": set(),
    "nonlast_short_fragment": {"p2frag.fragment_bytes.short"},
    "fragment_id_ge_num": {"p2frag.fragment_id.out_of_range"},
    "num_fragments_zero": {"p2frag.num_fragments.zero"},
    "nonzero_pad_bits": {"p2frag.padding.nonzero"},
    "empty_fragment_data": {"p2frag.fragment_bytes.out_of_range"},
    "fragment_data_1025": {"p2frag.fragment_bytes.out_of_range"},
    "bad_crc": {"p2frag.crc32.bad"},
    "seq_5000_vs_fresh_receiver_current0": set(),
    "regular_packet_1025_bytes_unfragmented": {"p2frag.regular.too_long"},
}
# A single fragment completes at once: its data (random bytes in the
# vectors) is reassembled and is not a packet written whole, so its own CRC
# fails; with the notes on, a delivered packet of sequence >= 256 carries
# the sequence-256 note.
E_EXTRA = {"single_fragment": {"p2frag.reassembled.crc_bad"}}
E_NOTES = {"single_fragment": {"p2frag.original.sequence_256"}}


def check_float(F, where, shown, bits):
    want = pt.bits_float(int(bits, 16))
    ok = len(shown) == 1 and abs(float(shown[0]) - want) <= 1e-5 * max(1.0, abs(want))
    F.check(ok, "%s: %s, want %r" % (where, shown, want))


DECODE_AS = ["-d", "udp.port==7777,p2frag"]
# The fields of P_FIELDS and F_FIELDS that hold frame numbers (FT_FRAMENUM).
FRAME_FIELDS = {"frame.number", "p2frag.fragment", "p2frag.analysis.complete_in", "p2frag.reassembled_in"}


def capture(tmp, P, groups, E):
    """Writes the capture of every F, P and E line (F lines first); returns
    (its path, {"F"|"P"|"E": (first frame, last frame)})."""
    kinds = [("F", [{"payload": bytes.fromhex(fv["hex"]), "sport": 30000 + g}
                    for g, grp in enumerate(groups) for fv in grp["frags"]]),
             ("P", [{"payload": bytes.fromhex(v["hex"]), "sport": 20000 + i} for i, v in enumerate(P)]),
             ("E", [{"payload": bytes.fromhex(v["hex"]), "sport": 40000 + i, "dport": 7777}
                    for i, v in enumerate(E)])]
    packets, spans = [], {}
    for k, (kind, rows) in enumerate(kinds):
        first = len(packets) + 1
        for i, p in enumerate(rows):
            packets.append(dict(p, src="10.2.%d.1" % k, dst="10.2.%d.2" % k, t=1000.0 * k + i * 0.01))
        spans[kind] = (first, len(packets))
    path = os.path.join(tmp, "vectors.pcap")
    ct.write_pcap(path, packets)
    return path, spans


_DECODED = {}


def frames_of(path, names, prefs, extra, span, only=False):
    """pt.decode of path, the frames of span (first, last) only, their frame
    numbers as that kind's lines alone have them (each run's PDML is read
    once). only: the run prints those frames only (-Y), for a run no other
    kind's lines read."""
    first, last = span
    if only:
        extra = list(extra) + ["-Y", "frame.number >= %d && frame.number <= %d" % span]
    key = (path, tuple(names), tuple(sorted((prefs or {}).items())), tuple(extra))
    if key not in _DECODED:
        _DECODED[key] = pt.decode(path, names, prefs, extra)
    out = []
    for fr in _DECODED[key][0 if only else first - 1:last - first + 1 if only else last]:
        fields = {n: ([str(int(v) - first + 1) for v in vs] if n in FRAME_FIELDS else vs)
                  for n, vs in fr["fields"].items()}
        out.append(dict(fr, fields=fields))
    return out


def check_p(F, path, spans, P):
    ex = frames_of(path, P_FIELDS + F_FIELDS, pt.NO_NOTES, DECODE_AS, spans["P"])
    frames = [e["fields"] for e in ex]
    F.check(len(frames) == len(P), "P: %d frames for %d lines" % (len(frames), len(P)))
    for n, (fr, e, v) in enumerate(zip(frames, ex, P)):
        w = "P line %d (seq %d)" % (n + 1, v["seq"])
        kv = v["kv"]
        F.check(fr["frame.protocols"][0].endswith(":p2frag"), w + ": " + fr["frame.protocols"][0])
        F.check(fr["p2frag.sequence"] == [str(v["seq"])], w + ": sequence %s" % fr["p2frag.sequence"])
        F.check(fr["p2frag.type"] == [str(v["type"])], w + ": type %s" % fr["p2frag.type"])
        F.check(fr["p2frag.crc32.status"] == ["1"] and fr["p2frag.end_check.status"] == ["1"], w + ": status")
        F.check(fr["p2frag.protocol_id"] == ["0x55667788"], w + ": id %s" % fr["p2frag.protocol_id"])
        F.check(not (e["experts"] & pt.RULE_EXPERTS), w + ": experts %s" % sorted(e["experts"]))
        if v["type"] == 1:
            for k in "abc":
                F.check(fr["p2frag." + k] == [kv[k]], w + ": %s %s want %s" % (k, fr["p2frag." + k], kv[k]))
        elif v["type"] == 2:
            F.check(fr["p2frag.num_items"] == [kv["numItems"]], w + ": numItems")
            want = kv["items"].split(",") if kv["items"] else []
            F.check(fr["p2frag.item"] == want, w + ": items differ (%d vs %d)" % (len(fr["p2frag.item"]), len(want)))
        else:
            for k, f in (("px", "position_x"), ("py", "position_y"), ("pz", "position_z")):
                check_float(F, w + " " + f, fr["p2frag." + f], kv[k])
            rest = kv["atRest"] == "1"
            F.check([pt.as_bool(x) for x in fr["p2frag.at_rest"]] == [rest], w + ": at_rest")
            for k, f in (("vx", "velocity_x"), ("vy", "velocity_y"), ("vz", "velocity_z")):
                if rest:
                    F.check(fr["p2frag." + f] == [], w + ": %s present at rest" % f)
                else:
                    check_float(F, w + " " + f, fr["p2frag." + f], kv[k])
        # The test encoder writes the same bytes.
        if v["type"] == 1:
            enc = pt.packet_a(v["seq"], int(kv["a"]), int(kv["b"]), int(kv["c"]))
        elif v["type"] == 2:
            enc = pt.packet_b(v["seq"], [int(x) for x in kv["items"].split(",")] if kv["items"] else [])
        else:
            enc = pt.packet_c(v["seq"], [int(kv[k], 16) for k in ("px", "py", "pz")], kv["atRest"] == "1",
                              [int(kv[k], 16) for k in ("vx", "vy", "vz")])
        F.check(enc.hex() == v["hex"], w + ": encoder differs")
    return len(P)


def check_groups(F, path, spans, groups, W):
    rows = []
    for g, grp in enumerate(groups):
        for fv in grp["frags"]:
            rows.append((grp, fv))
    whole = {(w["seq"], w["num"]): w for w in W}
    nw = 0
    for extra in ([], ["-2"]):
        ex = frames_of(path, P_FIELDS + F_FIELDS, pt.NO_NOTES, DECODE_AS + extra, spans["F"], bool(extra))
        frames = [e["fields"] for e in ex]
        F.check(len(frames) == len(rows), "F: %d frames for %d lines" % (len(frames), len(rows)))
        last_of = {}
        for n, (fr, (grp, fv)) in enumerate(zip(frames, rows)):
            last_of[id(grp)] = n
        for n, (fr, e, (grp, fv)) in enumerate(zip(frames, ex, rows)):
            w = "F line %d (seq %d, fragment %d)%s" % (n + 1, fv["seq"], fv["id"], " -2" if extra else "")
            complete = len(grp["frags"]) == grp["num"]
            is_last = last_of[id(grp)] == n
            # The completing frame holds the reassembled packet's fields too,
            # after the fragment's own.
            F.check(fr["p2frag.sequence"][:1] == [str(fv["seq"])], w + ": sequence %s" % fr["p2frag.sequence"])
            F.check(fr["p2frag.type"][:1] == ["0"], w + ": type")
            if not (complete and is_last):
                F.check(len(fr["p2frag.sequence"]) == 1 and len(fr["p2frag.type"]) == 1, w + ": inner fields")
            F.check(fr["p2frag.fragment_id"] == [str(fv["id"])], w + ": fragment id")
            F.check(fr["p2frag.num_fragments"] == [str(fv["num"])], w + ": count")
            F.check(fr["p2frag.fragment_bytes"] == [str(fv["bytes"])], w + ": bytes")
            F.check([pt.as_hex(x) for x in fr["p2frag.fragment_data"]] == [fv["hex"][18:]], w + ": data")
            F.check(fr["p2frag.crc32.status"][:1] == ["1"], w + ": crc")
            F.check(not (e["experts"] & pt.RULE_EXPERTS), w + ": experts %s" % sorted(e["experts"]))
            if complete and is_last:
                wl = whole[(grp["seq"], grp["num"])]
                got = [pt.as_hex(x) for x in fr["p2frag.reassembled.data"]]
                if grp["num"] == 1:
                    got = [fv["hex"][18:]]
                F.check(got == [wl["hex"]], w + ": reassembled bytes differ from the W line")
                F.check(fr["p2frag.reassembled.length"] == [str(wl["whole"])], w + ": reassembled length")
                first = n + 2 - grp["num"]
                F.check(fr["p2frag.fragment"] == [str(first + i) for i in range(grp["num"])],
                        w + ": fragment list %s" % fr["p2frag.fragment"])
                F.check(fr["p2frag.analysis.complete_in"] == [str(n + 1)], w + ": complete_in")
                if wl["source"] == "protocol2-B":
                    F.check(fr["p2frag.crc32.status"] == ["1", "1"], w + ": inner CRC status")
                    F.check(fr["p2frag.sequence"][1:] == [str(wl["seq"])], w + ": inner sequence")
                    F.check(fr["p2frag.type"][1:] == ["2"], w + ": inner type")
                    items = wl["kv"]["items"].split(",")
                    F.check(fr["p2frag.num_items"] == [wl["kv"]["numItems"]], w + ": inner numItems")
                    F.check(fr["p2frag.item"] == items, w + ": inner items differ")
                nw += 1
            elif complete and extra:
                F.check(fr["p2frag.reassembled_in"] == [str(last_of[id(grp)] + 1)],
                        w + ": reassembled_in %s" % fr["p2frag.reassembled_in"])
            if not complete and extra:
                have = {x["id"] for x in grp["frags"]}
                missing = [i for i in range(grp["num"]) if i not in have]
                F.check(fr["p2frag.analysis.missing"] == [ct.ranges(missing)],
                        w + ": missing %s" % fr["p2frag.analysis.missing"])
                F.check(fr["p2frag.analysis.fragments_seen"] == [str(len(have))], w + ": seen")
    return len(rows), nw // 2


def check_e(F, path, spans, E):
    for notes in (False, True):
        prefs = {} if notes else pt.NO_NOTES
        ex = frames_of(path, P_FIELDS + F_FIELDS, prefs, DECODE_AS, spans["E"], notes)
        F.check(len(ex) == len(E), "E: %d frames" % len(ex))
        for n, (e, v) in enumerate(zip(ex, E)):
            want = set(E_EXPERT[v["tag"]]) | E_EXTRA.get(v["tag"], set())
            if notes:
                want |= E_NOTES.get(v["tag"], set())
            got = e["experts"] - pt.ANALYSIS_EXPERTS
            F.check(e["p2frag"] and not e["chunk"], "E line %d %s: not p2frag" % (n + 1, v["tag"]))
            F.check(got == want, "E line %d %s (notes %s): experts %s, want %s"
                    % (n + 1, v["tag"], notes, sorted(got), sorted(want)))
            # A receiver following the rules takes exactly the lines whose
            # rule expert set is empty; the original program's verdicts
            # differ only where the spec says they do.
    return len(E)


def main():
    F = ct.Failures()
    P, groups, W, E = pt.read_vectors()
    with ct.scratch_dir() as tmp:
        path, spans = capture(tmp, P, groups, E)
        np_ = check_p(F, path, spans, P)
        nf, nw = check_groups(F, path, spans, groups, W)
        ne = check_e(F, path, spans, E)
    print("P lines %d, F lines %d, W lines reassembled %d of %d, E lines %d" % (np_, nf, nw, len(W), ne))
    F.check(nw == len(W), "only %d of %d W lines reassembled" % (nw, len(W)))
    F.finish("p2frag.vectors")


if __name__ == "__main__":
    main()
