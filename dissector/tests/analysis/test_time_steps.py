#!/usr/bin/env python3
"""A transfer whose clock jumps: the slice times the analysis keeps
(chunk/analysis.c keeps them as 32-bit offsets from the transfer's first
slice while they fit, in 64 bits once one does not: 4.29 s or more after
that slice, or before it when the capture's clock steps back).

fault-drop-slice.pcap (one chunk, slice 3 lost and resent to the end) with
every frame from the 10th on moved 5 s later, and again 1.5 s earlier. In
both, each time the analysis shows must follow from the frames' own times:

- chunk.analysis.since_last_sent = this frame's time - chunk.analysis.resend_of's;
- chunk.analysis.ack_time (-2) = chunk.analysis.acked_in's time - the
  slice's first send (chunk.analysis.first_sent_in, else resend_of, else the
  frame itself);

one pass and -2 alike for since_last_sent, to the microsecond. The jump lands
between the first sends and the resends, so a time set before it is read
after it. Exit 0 / 1.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import chunktest as ct  # noqa: E402

SOURCE = os.path.join(ct.REPO, "captures", "fault-drop-slice.pcap")
STEP_AT = 9   # frames 10 and later (0-based index 9) move


FIELDS = ["frame.number", "frame.time_epoch", "chunk.analysis.resend_of", "chunk.analysis.since_last_sent",
          "chunk.analysis.first_sent_in", "chunk.analysis.acked_in", "chunk.analysis.ack_time"]


def check(F, tmp, step_us):
    cap = os.path.join(tmp, "step%+d.pcap" % step_us)
    ct.step_clock(SOURCE, cap, STEP_AT, step_us, base_us=10000000)   # SOURCE starts at time 0
    label = "clock %+.1f s at frame %d" % (step_us / 1e6, STEP_AT + 1)
    for two_pass in (False, True):
        r = ct.field_rows(cap, FIELDS, two_pass)
        t = {int(x["frame.number"]): float(x["frame.time_epoch"]) for x in r}
        since = acks = jumped = 0
        for x in r:
            n = int(x["frame.number"])
            if x["chunk.analysis.resend_of"]:
                prev = int(x["chunk.analysis.resend_of"])
                want = t[n] - t[prev]
                got = float(x["chunk.analysis.since_last_sent"] or "nan")
                F.check(abs(got - want) < 2e-6, "%s%s: frame %d since_last_sent %s, its times say %.6f" % (
                    label, " -2" if two_pass else "", n, x["chunk.analysis.since_last_sent"], want))
                since += 1
                jumped += prev <= STEP_AT < n
            if two_pass and x["chunk.analysis.ack_time"]:
                first = int(x["chunk.analysis.first_sent_in"] or x["chunk.analysis.resend_of"] or n)
                want = t[int(x["chunk.analysis.acked_in"])] - t[first]
                got = float(x["chunk.analysis.ack_time"])
                F.check(abs(got - want) < 2e-6, "%s -2: frame %d ack_time %s, its times say %.6f" % (
                    label, n, x["chunk.analysis.ack_time"], want))
                acks += 1
                jumped += first <= STEP_AT < int(x["chunk.analysis.acked_in"])
        print("%s%s: %d since_last_sent, %d ack_time checked, %d across the jump" % (
            label, " -2" if two_pass else "", since, acks, jumped))
        F.check(since >= 10, "%s: only %d resends" % (label, since))
        F.check(jumped > 0, "%s: no time checked across the jump" % label)
        if two_pass:
            F.check(acks >= 5, "%s -2: only %d ack times" % (label, acks))


def main():
    ct.run_checks("analysis.time_steps",
                  lambda F, tmp: check(F, tmp, 5000000),
                  lambda F, tmp: check(F, tmp, -1500000))


if __name__ == "__main__":
    main()
