#!/usr/bin/env python3
"""The reliable analysis against the truth files of the committed
reliable-sim captures (docs/truth.md "reliable-sim"):

- acked_in: every packet's first acknowledging frame at the capture point is
  the dissector's reliable.analysis.acked_in on the packet's first frame
  (both sides' packets);
- rtt: for the capturing side's packets, reliable.analysis.rtt is the RTT its
  endpoint measured (the acking packet arrives where the capture is);
- lost: the capturing side's packets its endpoint found lost are exactly
  those with reliable.analysis.lost_in, and the sequences listed by
  reliable.analysis.lost on the peer's frames;
- every frame is reliable, none malformed, and each fragmented packet the
  capture holds whole is reassembled (reliable.reassembled_in, or the
  completing frame's reassembly).
"""
import sys

import rltest as rt

NAMES = ["frame.number", "ip.src", "reliable.sequence", "reliable.analysis.acked_in", "reliable.analysis.rtt",
         "reliable.analysis.lost_in", "reliable.analysis.lost", "_ws.malformed", "reliable.fragment_id",
         "reliable.reassembled_in", "reliable.fragment.count", "_ws.col.Protocol"]


def check(name, fails):
    t = rt.truth(name)
    pcap = rt.os.path.join(rt.CAPTURES, name + ".pcap")
    rows = rt.fields(pcap, NAMES)
    at = t["capture"]["at"]
    host = {"a": "10.0.0.1", "b": "10.0.0.2"}
    fails.check(len(rows) == t["capture"]["frames"], "%s: %d frames, truth %d" % (name, len(rows), t["capture"]["frames"]))
    for i, r in enumerate(rows):
        if r["_ws.col.Protocol"] != ["reliable"] or r["_ws.malformed"]:
            fails.check(False, "%s frame %d: protocol %s malformed %s" % (name, i + 1, r["_ws.col.Protocol"], r["_ws.malformed"]))
    lost_listed = {"a": [], "b": []}
    for r in rows:
        src = r["ip.src"][0]
        peer = "b" if src == host["a"] else "a"
        lost_listed[peer] += [int(x) for x in r["reliable.analysis.lost"]]
    n_acked = n_rtt = n_lost = n_reasm = 0
    for p in t["packets"]:
        frames = p["frames"]
        # The packet's first frame in the capture (the analysis's send):
        # a fragmented packet's earliest fragment, not always fragment 0.
        first = min(f[0] for f in frames if f) if frames and frames[0] else None
        if first is None:
            continue
        row = rows[first - 1]
        got = row["reliable.analysis.acked_in"]
        want = p["acked_in"]
        if (int(got[0]) if got else None) != want:
            fails.check(False, "%s: %s seq %u (frame %d): acked_in %s, truth %s" % (name, p["from"], p["sequence"], first, got, want))
        elif want:
            n_acked += 1
        if p["from"] == at:
            if p["acked"] and want == p["acked"]["by_frame"]:
                rtt = float(row["reliable.analysis.rtt"][0])
                if abs(rtt - p["acked"]["rtt"]) > 2e-6:
                    fails.check(False, "%s: seq %u rtt %f, truth %f" % (name, p["sequence"], rtt, p["acked"]["rtt"]))
                n_rtt += 1
            lost = bool(row["reliable.analysis.lost_in"])
            if lost != (p["lost"] is not None):
                fails.check(False, "%s: %s seq %u (frame %d): lost %s, truth %s" % (name, p["from"], p["sequence"], first, lost, p["lost"]))
            n_lost += lost
        if p["fragments"] and all(len(f) for f in frames):
            # Whole in the capture: reassembled (every fragment but the completing one points at it).
            ins = set()
            for f in frames:
                ins.update(rows[f[0] - 1]["reliable.reassembled_in"])
            if p["fragments"] > 1 and not ins:
                fails.check(False, "%s: seq %u: %d fragments all captured, not reassembled" % (name, p["sequence"], p["fragments"]))
            n_reasm += 1
    want_lost = sorted(p["sequence"] for p in t["packets"] if p["from"] == at and p["lost"] is not None and p["frames"][0])
    fails.check(sorted(lost_listed[at]) == want_lost,
                "%s: reliable.analysis.lost lists %s, truth %s" % (name, sorted(lost_listed[at])[:20], want_lost[:20]))
    print("%s: %d frames; %d acked_in, %d rtt, %d lost, %d reassembled packets agree with the truth file"
          % (name, len(rows), n_acked, n_rtt, n_lost, n_reasm))


def main():
    fails = rt.Failures()
    names = rt.captures()
    if not names:
        print("no reliable captures in captures.txt")
        return 1
    for name in names:
        check(name, fails)
    fails.finish("reliable.truth")
    return 0


if __name__ == "__main__":
    sys.exit(main())
