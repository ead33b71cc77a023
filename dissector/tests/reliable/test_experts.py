#!/usr/bin/env python3
"""Expert infos of the reliable analysis with and without a tree: for every
committed reliable-sim capture, the summaries and counts of
`tshark -q -z expert` (one pass, no tree, no filter) equal those of the
two-pass -V view (every frame dissected with a tree after the first pass),
and each capture shows the expert infos its fault or impairment must cause.

The -V view of every capture comes from one run over all of them in one
file (chunktest.concat_captures: each capture its own addresses), each frame
counted under its capture. -z expert does not say which frame raised what:
the captures with expectations (EXPECTED, FORBIDDEN, NONE) are read alone in
the no-tree runs, the others in one file, and when that file's counts
differ, each of them alone to name the capture.
"""
import collections
import os
import re
import sys

import rltest as rt

# Capture -> expert summaries (regular expressions) that must appear: fixed
# texts, one per kind (the numbers are in reliable.expert.detail).
EXPECTED = {
    "reliable-clean": [],
    "reliable-loss-10": [r"^Packet lost$", r"^Sequences skipped$"],
    "reliable-stops-acking": [r"^The peer's ack stopped moving$"],
    "reliable-drop-fragment": [r"^Fragmented packet never completed$", r"^Packet lost$"],
    "reliable-dup-reorder": [r"^Duplicate packet or fragment$", r"^Out-of-order packet$"],
    "reliable-wrap": [],
    "reliable-late-fragment": [r"^Out.of.order"],
}
# Capture -> expert summaries (regular expressions) that must not appear:
# fragmented packets completing after newer packets (reordered fragments
# captured at B) carry older acks, which is no ack going back.
FORBIDDEN = {
    "reliable-late-fragment": [r"^Ack went back"],
}
# A capture without impairments has none.
NONE = ["reliable-clean"]


def z_expert(pcap, two_pass):
    args = ["-r", pcap] + rt.DECODE + (["-2"] if two_pass else []) + ["-q", "-z", "expert"]
    counts = collections.Counter()
    for line in rt.tshark(args).splitlines():
        m = re.match(r"^\s+(\d+)\s+\S+\s+Reliable\s+(.*)$", line)
        if m:
            counts[m.group(2).strip()] += int(m.group(1))
    return counts


def v_expert(pcap, spans):
    """{capture name: Counter of expert summaries} of the -2 -V view of
    concat_captures' pcap (spans): the frame's header line names the
    capture."""
    per = collections.defaultdict(collections.Counter)
    counts = None
    for line in rt.tshark(["-r", pcap] + rt.DECODE + ["-2", "-V"]).splitlines():
        m = re.match(r"^Frame (\d+): ", line)
        if m:
            counts = per[rt.ct.capture_of_frame(spans, int(m.group(1)))[:-len(".pcap")]]
            continue
        m = re.match(r"^\s*\[Expert Info \([^)]*\): (.*)\]$", line)
        if m:
            counts[m.group(1).strip()] += 1
    return per


def check(fails, name, one, two, tree):
    """The no-tree counts of one pass (one) and two (two) against the tree's
    (tree); the expectations of capture name (None: several captures)."""
    fails.check(one == two, "%s: -z expert one pass %s != two passes %s" % (name, dict(one - two), dict(two - one)))
    fails.check(one == tree, "%s: -z expert %s != -2 -V %s" % (name, dict(one - tree), dict(tree - one)))
    for pattern in EXPECTED.get(name, []):
        fails.check(any(re.search(pattern, s) for s in one), "%s: no expert info matching %r" % (name, pattern))
    for pattern in FORBIDDEN.get(name, []):
        fails.check(not any(re.search(pattern, s) for s in one), "%s: expert info matching %r: %s"
                    % (name, pattern, [s for s in one if re.search(pattern, s)]))
    if name in NONE:
        fails.check(not one, "%s: expert infos on a clean capture: %s" % (name, dict(one)))


def main():
    fails = rt.Failures()
    names = rt.captures()
    pcaps = {name: os.path.join(rt.CAPTURES, name + ".pcap") for name in names}
    alone = [n for n in names if EXPECTED.get(n) or n in FORBIDDEN or n in NONE]
    rest = [n for n in names if n not in alone]
    with rt.scratch_dir() as tmp:
        every = os.path.join(tmp, "every.pcap")
        trees = v_expert(every, rt.ct.concat_captures([pcaps[n] for n in names], every))
        for name in alone:
            one = z_expert(pcaps[name], False)
            check(fails, name, one, z_expert(pcaps[name], True), trees[name])
            print("%s: %d expert infos, the same with and without a tree" % (name, sum(one.values())))
        if rest:
            others = os.path.join(tmp, "others.pcap")
            rt.ct.concat_captures([pcaps[n] for n in rest], others)
            label = "%d captures in one file (%s)" % (len(rest), ", ".join(rest))
            tree = sum((trees[n] for n in rest), collections.Counter())
            one = z_expert(others, False)
            G = rt.Failures()
            check(G, label, one, z_expert(others, True), tree)
            if G.items:
                n = len(fails.items)
                for name in rest:
                    check(fails, name, z_expert(pcaps[name], False), z_expert(pcaps[name], True), trees[name])
                if len(fails.items) == n:
                    fails.items += G.items
            print("%s: %d expert infos, the same with and without a tree" % (label, sum(one.values())))
    fails.finish("reliable.experts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
