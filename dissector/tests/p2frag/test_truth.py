#!/usr/bin/env python3
"""Every p2frag-sim capture's analysis agrees with its truth file
(captures/p2frag-*.truth.json, docs/truth.md "p2frag-sim"):

- every fragment and regular frame is p2frag, every chunk frame of the
  mixed capture chunk;
- per fragmented packet with at least one fragment in the capture: the
  dissector calls it complete (and in the window) exactly when the receiver
  delivered it; the completing frame's reassembled bytes have the delivered
  SHA-256; an undelivered packet's missing fragment ids are the truth's;
- per datagram: a 'duplicate' verdict is p2frag.fragment.duplicate, 'too old'
  p2frag.sequence.too_old;
- tshark -q -z expert (no tree) counts as many p2frag expert infos as the
  tree has, one pass and -2, and with -2 as many "Packet lost: fragments
  missing" as packets with fragments missing;
- loss at once: with -2 the packets flagged "Packet lost: fragments missing"
  (p2frag.analysis.lost_packet) are exactly those with fragments missing;
  in one pass each of them is flagged too (one pass may also flag a packet
  whose missing fragments come late: reordering);
- -z p2frag,packets counts the same packets, fragments and missing
  fragments as the truth over the packets the capture shows (a packet none
  of whose fragments arrived is not in a capture).
Read with -2, so that every frame knows how its packet ended.

Every run reads all the captures in one file (chunktest.concat_captures:
each capture's addresses its own, times only forward): the trees (PDML, -2
and one pass), each capture's frames in its own numbering (frame
references mapped back), and the runs without a tree (-q: -z expert and
-z p2frag,packets one pass, -z expert -2). -z p2frag,packets says each
direction's figures with its addresses: a capture's are those of its
addresses. -z expert's counts do not say the frame: they are checked over
all the captures at once (the sum of the captures' trees and truths). A
capture whose checks fail there, or every capture when a sum differs, is
read alone, and its failures are those of its own file (and if they all
pass alone, the merged file's failures stand, named so).
"""
import glob
import hashlib
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import chunktest as ct  # noqa: E402
import p2fragtest as pt  # noqa: E402

FIELDS = ["frame.number", "frame.protocols", "ip.src", "ip.dst", "p2frag.sequence", "p2frag.fragment_id",
          "p2frag.analysis.complete_in", "p2frag.analysis.lost_in", "p2frag.analysis.missing",
          "p2frag.reassembled.data", "p2frag.fragment_data", "p2frag.analysis.lost_packet"]


def expert_and_stats(cap):
    """One pass without a tree (-q): (-z expert's text, -z p2frag,packets'),
    both from one run."""
    table, rest = ct.split_table(ct.tshark(["-r", cap, "-q", "-z", "expert", "-z", "p2frag,packets"]),
                                 "P2frag fragmented packets")
    return rest, table


# The fields of FIELDS that hold frame numbers (FT_FRAMENUM).
FRAME_FIELDS = {"frame.number", "p2frag.analysis.complete_in", "p2frag.analysis.lost_in"}


def trees(cap):
    """The two runs with a tree of cap: (-2, one pass), as pt.decode gives them."""
    return pt.decode(cap, FIELDS, None, ["-2"]), pt.decode(cap, ["p2frag.analysis.lost_packet"], None, [])


def own_numbering(frames, first):
    """pt.decode's frames first.. of a concat_captures file, with the
    frame numbers of FRAME_FIELDS as their capture alone has them."""
    out = []
    for fr in frames:
        fields = {n: ([str(int(v) - first + 1) for v in vs] if n in FRAME_FIELDS else vs)
                  for n, vs in fr["fields"].items()}
        out.append(dict(fr, fields=fields))
    return out


def lost_count(zex):
    """How many "Packet lost: fragments missing" a -z expert text counts
    (None: no line)."""
    m = re.search(r"^\s+(\d+)\s+Sequence\s+P2frag\s+Packet lost: fragments missing$", zex, re.M)
    return int(m.group(1)) if m else None


def direction_figures(table, addresses):
    """The per-direction figures of a -z p2frag,packets table (its
    "Stream ..." lines and the figures under them) of the directions
    between addresses."""
    lines = table.split("\n")
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"Stream \d+, (\S+):\d+ -> (\S+):\d+: ", line)
        if m and m.group(1) in addresses and m.group(2) in addresses:
            out += lines[i:i + 2] if i + 1 < len(lines) and lines[i + 1].startswith("  ") else [line]
    return "\n".join(out) + "\n"


def check(F, cap, views=None, figures=None):
    """The checks of cap; views: trees() of cap, if read already; figures:
    cap's -z p2frag,packets figures read with the other captures (the -z
    expert counts are then not checked here). Returns what main sums for
    those: the packets with fragments missing and the trees' p2frag expert
    infos, one pass and -2."""
    name = os.path.basename(cap)[:-5]
    truth = json.load(open(cap[:-5] + ".truth.json"))
    # Two runs with a tree (-2 and one pass) and two without (-q -z): each
    # check below reads the run of its configuration.
    two, one = views or trees(cap)
    if figures is None:
        zex2 = ct.tshark(["-r", cap, "-2", "-q", "-z", "expert"])
        zex1, out = expert_and_stats(cap)
    else:
        out = figures
    frames = [fr["fields"] for fr in two]
    ex = two
    F.check(len(frames) == truth["capture"]["frames"], "%s: %d frames, truth %d"
            % (name, len(frames), truth["capture"]["frames"]))
    chunk_frames = {f for c in truth["chunks"] for f in c["frames"]}
    for n, fr in enumerate(frames):
        want = ":chunk" if (n + 1) in chunk_frames else ":p2frag"
        F.check(fr["frame.protocols"][0].endswith(want), "%s frame %d: %s, want %s"
                % (name, n + 1, fr["frame.protocols"][0], want))
    shown = {"pkts": 0, "complete": 0, "expected": 0, "missing": 0}
    for p in truth["packets"]:
        arrived = [f for d in p["datagrams"] for f in d["frames"]]
        w = "%s packet %d (seq %d)" % (name, p["index"], p["sequence"])
        for d in p["datagrams"]:
            for f, v in zip(d["frames"], d["verdicts"]):
                e = ex[f - 1]["experts"]
                if v == "duplicate" and p["fragmented"]:
                    F.check("p2frag.fragment.duplicate" in e, w + " frame %d: duplicate not flagged %s" % (f, e))
                if v == "too old":
                    F.check("p2frag.sequence.too_old" in e, w + " frame %d: too old not flagged %s" % (f, e))
                if v in ("accepted", "delivered"):
                    F.check(not (e & (pt.RULE_EXPERTS - {"p2frag.reassembled.crc_bad"})) or
                            p["content"] == "raw", w + " frame %d: accepted, but %s" % (f, sorted(e)))
        if not p["fragmented"] or not arrived:
            continue
        shown["pkts"] += 1
        shown["expected"] += p["num_fragments"]
        shown["missing"] += len(p["missing_fragments"])
        shown["complete"] += 0 if p["missing_fragments"] else 1
        fr = frames[min(arrived) - 1]
        complete = bool(fr["p2frag.analysis.complete_in"])
        in_window = not fr["p2frag.analysis.lost_in"]
        F.check((complete and in_window) == p["delivered"], w + ": complete %s in window %s, truth delivered %s"
                % (complete, in_window, p["delivered"]))
        F.check(complete == (not p["missing_fragments"]), w + ": complete %s, truth missing %s"
                % (complete, p["missing_fragments"]))
        if not complete:
            F.check(fr["p2frag.analysis.missing"] == [ct.ranges(p["missing_fragments"])],
                    w + ": missing %s, truth %s" % (fr["p2frag.analysis.missing"], p["missing_fragments"]))
        elif p["delivered"]:
            last = frames[int(fr["p2frag.analysis.complete_in"][0]) - 1]
            data = last["p2frag.reassembled.data"] or last["p2frag.fragment_data"]
            got = hashlib.sha256(bytes.fromhex(pt.as_hex(data[0]))).hexdigest() if data else None
            F.check(got == p["sha256_delivered"], w + ": reassembled bytes differ from the delivered ones")
    lost = sorted(p["sequence"] & 0xFFFF for p in truth["packets"]
                  if p["fragmented"] and p["missing_fragments"] and any(d["frames"] for d in p["datagrams"]))
    flagged = sorted(int(v) for fr in frames for v in fr["p2frag.analysis.lost_packet"])
    F.check(flagged == lost, "%s -2: packets flagged lost %s, truth (fragments missing) %s" % (name, flagged, lost))
    flagged1 = sorted(int(v) for fr in one for v in fr["fields"]["p2frag.analysis.lost_packet"])
    F.check(set(lost) <= set(flagged1), "%s one pass: packets flagged lost %s, truth (fragments missing) %s"
            % (name, flagged1, lost))
    counts = {"lost": len(lost), "tree": sum(fr["n_experts"] for fr in one),
              "tree -2": sum(fr["n_experts"] for fr in two)}
    if figures is None:
        nl = lost_count(zex2)
        F.check((nl or 0) == len(lost), "%s -2 -z expert: %s 'Packet lost: fragments missing', "
                "truth %d packets with fragments missing" % (name, nl if nl is not None else "no", len(lost)))
        for tag, zex in (("", zex1), (" -2", zex2)):
            nt, nz = counts["tree" + tag], pt.expert_counts(zex)
            F.check(nz == nt, "%s%s: -z expert has %d p2frag expert infos, the tree %d" % (name, tag, nz, nt))
    m = re.search(r"(\d+) fragmented packets? \((\d+) complete\)\n\s+fragment loss [\d.]+% \((\d+) of (\d+) "
                  r"fragments missing\), packet loss ([\d.]+)% \(\d+ of \d+\), predicted ([\d.]+)%", out)
    F.check(m, "%s: no summary in -z p2frag,packets:\n%s" % (name, out[-600:]))
    if m:
        got = {"pkts": int(m.group(1)), "complete": int(m.group(2)), "missing": int(m.group(3)),
               "expected": int(m.group(4))}
        F.check(got == shown, "%s: -z p2frag,packets %s, truth %s" % (name, got, shown))
        lt = truth["loss"]
        print("%-20s dissector: fragment loss %5.2f%%, packet loss %6.2f%%, predicted %6.2f%% | truth (sender's "
              "view): %5.2f%%, %6.2f%%, %6.2f%%" % (name, 100.0 * got["missing"] / max(1, got["expected"]),
                                                    float(m.group(5)), float(m.group(6)),
                                                    100 * lt["fragment_loss_rate"], 100 * lt["packet_loss_rate"],
                                                    100 * lt["predicted_packet_loss_rate"]))
    return counts


def main():
    F = ct.Failures()
    caps = sorted(glob.glob(os.path.join(ct.REPO, "captures", "p2frag-*.pcap")))
    F.check(caps, "no captures/p2frag-*.pcap")
    if len(caps) > 1 and all(ct.concat_ok(c) for c in caps):
        with ct.scratch_dir() as tmp:
            merged = os.path.join(tmp, "p2frag.pcap")
            spans = ct.concat_captures(caps, merged)
            two, one = trees(merged)
            # the runs without a tree
            table, zex1 = ct.split_table(ct.tshark(["-r", merged, "-q", "-z", "expert", "-z", "p2frag,packets"]),
                                         "P2frag fragmented packets")
            zex2 = ct.tshark(["-r", merged, "-2", "-q", "-z", "expert"])
            sums = {"lost": 0, "tree": 0, "tree -2": 0}
            alone = set()
            for cap, (_, first, last) in zip(caps, spans):
                G = ct.Failures()
                addresses = {a for fr in two[first - 1:last] for n in ("ip.src", "ip.dst") for a in fr["fields"][n]}
                got = check(G, cap, (own_numbering(two[first - 1:last], first), one[first - 1:last]),
                            direction_figures(table, addresses))
                for k in sums:
                    sums[k] += got[k]
                if G.items:
                    n = len(F.items)
                    check(F, cap)
                    alone.add(cap)
                    if len(F.items) == n:
                        F.items += ["%s (read with the others in one file, not alone)" % m for m in G.items]
            # The -z expert counts, over all captures.
            G = ct.Failures()
            nl = lost_count(zex2)
            G.check((nl or 0) == sums["lost"], "all captures -2 -z expert: %s 'Packet lost: fragments missing', "
                    "truth %d packets with fragments missing" % (nl if nl is not None else "no", sums["lost"]))
            for tag, zex in (("", zex1), (" -2", zex2)):
                G.check(pt.expert_counts(zex) == sums["tree" + tag], "all captures%s: -z expert has %d p2frag expert "
                        "infos, the trees %d" % (tag, pt.expert_counts(zex), sums["tree" + tag]))
            if G.items:
                n = len(F.items)
                for cap in caps:
                    if cap not in alone:
                        check(F, cap)
                if len(F.items) == n:
                    F.items += ["%s (read in one file; each capture alone passes)" % m for m in G.items]
    else:
        for cap in caps:
            check(F, cap)
    print("%d captures" % len(caps))
    F.finish("p2frag.truth")


if __name__ == "__main__":
    main()
