#!/usr/bin/env python3
"""netgame.gaps: the analysis after datagrams the capture missed. Every
committed netgame-sim capture made with --capture-drop (a capture's kernel
drops, both directions or one) or --capture-from (begun mid-session),
checked against its truth file in one pass and with -2:

- the gap is shown where it is: one "Packets not captured"
  (netgame.analysis.not_captured) for each direction that lost packets,
  within the gap (a one-way gap has frames of the other direction) or the
  first frames after it, its count at most the datagrams left out; none
  after a mid-session start, and nowhere else;
- no warning but "Lost", and that only for a packet its endpoint counted
  lost (netgame.analysis.lost_frame, netgame.analysis.lost): the packets
  acknowledged in datagrams the capture missed are not lost, and the acks
  of sequences the capture lacks are not "never sent";
- the analysis recovers: after the gap every packet of the capturing side
  sent more than 1 s before the end of the capture is acked in the frame
  the truth says (netgame.analysis.acked_in), from the 34th packet of each
  direction after it on (the ack bits of the first reach 33 back).
Before the fix, the 1 000-datagram drop raised 68 warnings ("acks
sequence(s) the peer never sent", "lost").

One tshark run per capture and pass: the fields and expert infos the checks
read (-T fields) and -z expert's table, printed after them.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gaptest as g  # noqa: E402
import ngtest as ng  # noqa: E402

NOTE_WITHIN = 4     # the first frames after a gap, where its notes must be
SETTLE = 34         # packets of a direction after the gap before every ack is known


FIELDS = ["frame.number", "frame.protocols", "netgame.analysis.not_captured", "netgame.analysis.lost_frame",
          "netgame.analysis.lost", "netgame.analysis.acked_in"]
EXPERTS = ["netgame.analysis.not_captured.expert", "netgame.analysis.ack_unsent", "netgame.analysis.ack_back"]


def decode(pcap, two_pass):
    """(frames as ngtest.decode gives them, with FIELDS and EXPERTS only;
    the table of -z expert) of one run: -T fields (an expert info's field
    is printed where it is raised), then the tap's table."""
    args = ["-r", pcap, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,", "-z", "expert"]
    for name in FIELDS + EXPERTS:
        args += ["-e", name]
    lines = ng.tshark(args + (["-2"] if two_pass else [])).split("\n")
    frames = []
    while lines and "\t" in lines[0]:
        row = lines.pop(0).split("\t")
        frames.append({"netgame": "netgame" in row[1].split(":"),
                       "fields": {n: v.split(",") for n, v in zip(FIELDS, row) if v},
                       "experts": [n for n, v in zip(EXPERTS, row[len(FIELDS):]) if v]})
    return frames, "\n".join(lines)


def check(F, name):
    truth = g.truth(name)
    cap = truth["capture"]
    pcap = os.path.join(g.CAPTURES, name + ".pcap")
    by_frame = {}
    for p in truth["packets"]:
        for fr in p["frames"]:
            by_frame[fr] = p
    truly_lost = {f for f, p in by_frame.items() if p["lost"] is not None}
    end = max(p["time"] for p in truth["packets"] if p["frames"])
    for two_pass in (False, True):
        what = name + (" -2" if two_pass else "")
        frames, table = decode(pcap, two_pass)
        F.check(len(frames) == cap["frames"], "%s: %d frames of %d" % (what, len(frames), cap["frames"]))
        F.check(all(f["netgame"] for f in frames), "%s: frames not decoded as netgame" % what)
        notes, lost = [], set()
        for n, f in enumerate(frames, 1):
            fl = f["fields"]
            if "netgame.analysis.not_captured" in fl:
                notes.append((n, by_frame[n]["from"], int(fl["netgame.analysis.not_captured"][0])))
                F.check("netgame.analysis.not_captured.expert" in f["experts"], "%s frame %d: no note" % (what, n))
            for x in fl.get("netgame.analysis.lost_frame", []):
                lost.add(int(x))
            if fl.get("netgame.analysis.lost", ["0"])[0] in ("1", "True", "true"):
                lost.add(n)
            bad = [e for e in f["experts"] if e in ("netgame.analysis.ack_unsent", "netgame.analysis.ack_back")]
            F.check(not bad, "%s frame %d: %s" % (what, n, bad))
        F.check(lost <= truly_lost, "%s: lost but delivered and acked: %s" % (what, sorted(lost - truly_lost)[:8]))
        warns = g.problems(ng.read_output(g.experts, table, ["-r", pcap], "netgame"))
        F.check(sum(v for _, v in warns) == len(lost),
                "%s: %d warnings, %d lost packets: %s" % (what, sum(v for _, v in warns), len(lost), warns[:4]))
        want = 0
        for d in cap["capture_drops"]:
            before, after = d["last_frame_before"] or 0, d["first_frame_after"]
            F.check(after is not None, "%s: the drop at %d ends within the capture" % (what, d["start"]))
            dirs = {"both": ("a", "b"), "a_to_b": ("a",), "b_to_a": ("b",)}[d["link"]]
            for lost_dir in dirs:
                # shown on a frame of the other side, whose ack reveals them
                near = [x for x in notes if x[1] != lost_dir and before < x[0] < (after or 1 << 30) + NOTE_WITHIN]
                F.check(len(near) == 1, "%s: notes for %s's packets left out at frames %d-%s: %s" %
                        (what, lost_dir, before + 1, after, near))
                for x in near:
                    F.check(0 < x[2] <= d["dropped"], "%s: count %d of %d left out" % (what, x[2], d["dropped"]))
            want += len(dirs)
        F.check(len(notes) == want, "%s: %d notes, want %d: %s" % (what, len(notes), want, notes[:6]))
        # recovery: acked in where the truth says, from SETTLE packets after the gap on
        last_gap = max([d["first_frame_after"] or 0 for d in cap["capture_drops"]] + [1])
        seen = {"a": 0, "b": 0}
        checked = 0
        for n, f in enumerate(frames, 1):
            p = by_frame.get(n)
            if n < last_gap or not p or p["frames"][0] != n:
                continue
            seen[p["from"]] += 1
            if min(seen.values()) <= SETTLE or end - p["time"] <= 1.5:
                continue
            got = f["fields"].get("netgame.analysis.acked_in")
            got = int(got[0]) if got else None
            if two_pass:    # acked in is forward-looking: -2 alone
                F.check(got == p["acked_in"], "%s frame %d (%s seq %d): acked in %s, truth %s" %
                        (what, n, p["from"], p["sequence"], got, p["acked_in"]))
                checked += 1
        F.check(checked >= 50 or not two_pass, "%s: only %d packets checked after the gap" % (what, checked))
        print("%s: %d frames, notes %s, %d lost, %d acked in checked after the gap" %
              (what, len(frames), notes, len(lost), checked))


def main():
    F = ng.Failures()
    names = g.gap_captures("netgame-sim") + g.gap_captures("netgame-sim", "--capture-from")
    F.check(len(names) >= 4, "only %d netgame-sim gap captures: %s" % (len(names), names))
    for name in names:
        check(F, name)
    F.finish("netgame.gaps")


if __name__ == "__main__":
    main()
