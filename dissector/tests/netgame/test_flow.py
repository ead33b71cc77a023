#!/usr/bin/env python3
"""netgame.flow: the Flow Graph (tshark -z flow,netgame,network) and the
Conversations and Endpoints tabs (-z conv,netgame, -z endpoints,netgame)
against the netgame-sim truth files of netgame-clean.pcap and
netgame-loss-10.pcap: one arrow per captured packet, in frame order, in
its direction (10.0.0.1 to 10.0.0.2 is "->"), saying the packet's
sequence, ack, ack bits and payload bytes as the truth file has them; one
conversation row with the capturing side's packets sent and received each
way, the same counts as endpoints, and the row's filters (netgame.end,
src_end, dst_end: Apply as Filter) matching its packets.

One tshark run per capture: the three taps, and -z io,stat with one column
per row filter counting the frames it matches (as -Y would); the output is
split into the taps' tables and each read by flowtest's reader
(flowtest.taps).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flowtest as ft  # noqa: E402
import ngtest as ng  # noqa: E402


def row_filters(a, b):
    """The filters flowtest.row_filters tries on the conversation row (a,
    b): (filter, index of its count in the row (b->a, a->b, total))."""
    return [('netgame.end == "%s" && netgame.end == "%s"' % (a, b), 2),
            ('netgame.src_end == "%s" && netgame.dst_end == "%s"' % (a, b), 1),
            ('netgame.src_end == "%s" && netgame.dst_end == "%s"' % (b, a), 0)]


def taps(pcap, filters):
    """(flow, conversations, endpoints, [frames each filter matches]) of one
    run: flowtest.taps; None for the counts without the io,stat row."""
    arrows, rows, eps, counts = ft.taps(pcap, "netgame", filters=filters)
    return arrows, rows, eps, counts or None


def check(F, name):
    with open(ft.capture(name + ".truth.json")) as f:
        t = json.load(f)
    pcap = ft.capture(name + ".pcap")
    a_end, b_end = t["endpoints"]["a"], t["endpoints"]["b"]
    pkts = sorted((fr, p) for p in t["packets"] for fr in p["frames"])
    filters = row_filters(a_end, b_end)
    arrows, rows, eps, counts = taps(pcap, [f for f, _ in filters])
    F.check(len(arrows) == len(pkts) == t["capture"]["frames"],
            "%s: %d arrows for %d captured packets" % (name, len(arrows), len(pkts)))
    payload = t["config"]["payload"]
    for (frame, p), a in zip(pkts, arrows):
        want = "Seq %d, ack %d, ack bits 0x%08x, %d bytes" % (p["sequence"], p["ack"], p["ack_bits"], payload)
        F.check(a["comment"].startswith(want) and a["dir"] == ("->" if p["from"] == "a" else "<-"),
                "%s frame %d: %s %r, want %r" % (name, frame, a["dir"], a["comment"], want))
        F.check(a["label"] == "Seq %d Ack %d" % (p["sequence"], p["ack"]), "%s frame %d: label %r"
                % (name, frame, a["label"]))
    side = [s for s in t["sides"] if s["side"] == t["capture"]["at"]][0]["counters"]
    sent, recv = side["packets_sent"], side["packets_received"]
    F.check(rows == {(a_end, b_end): (recv, sent, sent + recv)}, "%s: conversations %r (sent %d, received %d)"
            % (name, rows, sent, recv))
    # The row's filters match its packets (the row is (a_end, b_end) when
    # the check above holds).
    F.check(counts is not None and len(counts) == len(filters), "%s: io,stat counts %s" % (name, counts))
    for (filt, k), got in zip(filters, counts or []):
        want = rows.get((a_end, b_end), (None,) * 3)[k]
        F.check(got == want, "%s: %s matches %d packets, the row says %s" % (name, filt, got, want))
    F.check(eps == {a_end: (sent + recv, sent, recv), b_end: (sent + recv, recv, sent)},
            "%s: endpoints %r" % (name, eps))


def main():
    F = ft.Failures()
    for name in ("netgame-clean", "netgame-loss-10"):
        check(F, name)
    F.finish("netgame.flow")


if __name__ == "__main__":
    main()
