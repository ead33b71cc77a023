#!/usr/bin/env python3
"""Analysis fields as I/O graph filters and Y fields (docs/gui.md, "Graphing
RTT and loss"): tshark -z io,stat runs the same tap an I/O graph does.

Each protocol's analysis fields are of two kinds. Backward-looking ones are
known when their frame is first dissected, so they graph in any pass: the
GUI's first pass (a graph open while a file loads) and tshark's single pass.
Forward-looking ones (netgame.analysis.rtt / acked_in / lost on the packet
sent, chunk.analysis.acked_in / ack_time, p2frag.analysis.complete_in on the
earlier fragments) are written into an earlier frame's record by a later
frame, so they exist only once the file has been read: on the GUI's re-taps
(opening Statistics > I/O Graphs after loading) and with tshark -2.

Checked here, for every interval that has the protocol's packets: the RTT
graph of the recipe (AVG(netgame.analysis.ack_rtt) filtered on
netgame.analysis.ack_rtt) plots in one pass and with -2; the packet-side RTT
(netgame.analysis.rtt) plots with -2; chunk's and p2frag's analysis fields
plot as documented.

The columns of one capture, interval and pass are read in one run (-z
io,stat takes several columns, each with its own filter, as an I/O graph
has several graphs).
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import chunktest as ct  # noqa: E402

CAP = os.path.join(ct.REPO, "captures")
ROW = re.compile(r"^\|\s*([\d.]+)\s*<>\s*([\d.]+|Dur)\s*\|((?:\s*[\d.]+\s*\|)+)")


def io_values(pcap, specs, interval, two_pass):
    """The columns of -z io,stat (one per spec, one run) per interval:
    {spec: [value per interval]}."""
    args = ["-r", os.path.join(CAP, pcap), "-q", "-z", "io,stat,%s,%s" % (interval, ",".join(specs))]
    if two_pass:
        args.insert(0, "-2")
    out = ct.tshark(args)
    rows = [[float(v) for v in m.group(3).split("|") if v.strip()]
            for m in (ROW.match(line) for line in out.splitlines()) if m]
    return {spec: [r[i] for r in rows if len(r) == len(specs)] for i, spec in enumerate(specs)}


# (capture, io,stat column spec, interval s, passes it must plot in, least
# share of intervals with a value).
CASES = [
    ("netgame-high-rtt.pcap", "AVG(netgame.analysis.ack_rtt)netgame.analysis.ack_rtt", 1, ("1", "2"), 0.9),
    ("netgame-high-rtt.pcap", "MAX(netgame.analysis.ack_rtt)netgame.analysis.ack_rtt", 1, ("1", "2"), 0.9),
    ("netgame-high-rtt.pcap", "AVG(netgame.analysis.smoothed_rtt)netgame.analysis.smoothed_rtt", 1,
     ("1", "2"), 0.9),
    ("netgame-high-rtt.pcap", "AVG(netgame.analysis.rtt)netgame.analysis.rtt", 1, ("2",), 0.9),
    ("netgame-loss-10.pcap", "COUNT(netgame.analysis.lost_frame)netgame.analysis.lost_frame", 5, ("1", "2"), 0.6),
    ("netgame-loss-10.pcap", "COUNT(netgame.analysis.lost)netgame.analysis.lost", 5, ("2",), 0.6),
    ("loss-10-jitter.pcap", "AVG(chunk.analysis.since_last_sent)chunk.analysis.since_last_sent", 0.5,
     ("1", "2"), 0.5),
    ("loss-10-jitter.pcap", "COUNT(chunk.analysis.resend)chunk.analysis.resend", 0.5, ("1", "2"), 0.5),
    ("loss-10-jitter.pcap", "AVG(chunk.analysis.ack_time)chunk.analysis.ack_time", 0.5, ("2",), 0.5),
    ("p2frag-loss-10.pcap", "AVG(p2frag.analysis.packet_loss)p2frag.analysis.packet_loss", 0.1, ("1", "2"), 0.5),
    ("p2frag-loss-10.pcap", "COUNT(p2frag.analysis.complete_in)p2frag.analysis.complete_in", 0.1, ("1", "2"), 0.5),
]


def main():
    F = ct.Failures()
    runs = {}
    for pcap, spec, interval, passes, share in CASES:
        for p in passes:
            runs.setdefault((pcap, interval, p), []).append(spec)
    values = {}
    for (pcap, interval, p), specs in runs.items():
        for spec, vals in io_values(pcap, specs, interval, p == "2").items():
            values[(pcap, spec, interval, p)] = vals
    for pcap, spec, interval, passes, share in CASES:
        for p in passes:
            vals = values[(pcap, spec, interval, p)]
            have = sum(1 for v in vals if v > 0)
            print("%s %s, %s pass(es): %d of %d intervals plotted" % (pcap, spec, p, have, len(vals)))
            F.check(vals and have >= share * len(vals), "%s: %s with %s pass(es): %d of %d intervals have a value"
                    % (pcap, spec, p, have, len(vals)))
    F.finish("analysis.io_graph")


if __name__ == "__main__":
    main()
