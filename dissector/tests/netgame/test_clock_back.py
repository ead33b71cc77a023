#!/usr/bin/env python3
"""test_clock_back.py: a capture whose clock steps back gives negative times,
shown as Wireshark shows a signed time (common/analysis-util.h, au_nstime).

netgame-clean.pcap with every frame from the 200th on 1.5 s earlier: acks in
those frames of packets sent before the step have negative RTTs. Each
netgame.analysis.ack_rtt must be its frame's time minus the acknowledged
frame's (netgame.analysis.acks_frame), to the microsecond: -1.441667, not
-2.558333 (seconds one lower, nanoseconds made positive). Exit 0 / 1.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import chunktest as ct  # noqa: E402

STEP_AT, STEP_US = 200, 1500000


def main():
    with ct.scratch_dir() as d:
        cap = os.path.join(d, "clock-back.pcap")
        ct.step_clock(os.path.join(ct.REPO, "captures", "netgame-clean.pcap"), cap, STEP_AT, -STEP_US)
        out = ct.tshark(["-r", cap, "-T", "fields", "-e", "frame.number", "-e", "frame.time_epoch",
                         "-e", "netgame.analysis.acks_frame", "-e", "netgame.analysis.ack_rtt"])
    times, rows = {}, []
    for line in out.splitlines():
        num, t, frames, rtts = (line.split("\t") + ["", "", "", ""])[:4]
        times[int(num)] = float(t)
        if frames and rtts:
            rows.append((int(num), [int(x) for x in frames.split(",")], [float(x) for x in rtts.split(",")]))
    failures, negative = [], 0
    for num, frames, rtts in rows:
        for f, rtt in zip(frames, rtts):
            want = times[num] - times[f]
            negative += rtt < 0
            if abs(rtt - want) > 2e-6:
                failures.append("frame %d: RTT of frame %d is %.9f, its times say %.9f" % (num, f, rtt, want))
    print("clock back: %d RTTs, %d negative, %d wrong" % (sum(len(r[1]) for r in rows), negative, len(failures)))
    if not negative:
        failures.append("no negative RTT: the step did not reach an ack")
    for f in failures[:20]:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
