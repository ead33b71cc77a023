#!/usr/bin/env python3
"""Expert infos without a tree: what Wireshark's Expert Information dialog sees.

Wireshark dissects without a protocol tree on its first pass, for the packet
list, for taps and for Analyze > Expert Information (no display filter). The
quick check is `tshark -q -z expert`: the expert tap, no tree. For every
committed capture with chunk traffic (the fragment and netgame tests check
their own protocols the same way; those without a fault read in one file,
one after the other), in one pass and two (-2, as the GUI's rescans):

- every expert info that the full tree (PDML, as -V) holds is also in the
  no-tree run: the same count per expert filter name (the tree run names
  each message; the no-tree table is matched to names by message), and the
  same messages with the same frequency, severity and group;
- the fault captures raise their analysis experts (a stall, a silent or
  not-reading receiver, a sender not listening, resends too soon, and with
  -2 the end-of-capture diagnosis) without a tree.

Before the fix (commit "expert infos ... also without a tree") the no-tree
table held no analysis expert at all.
"""
import collections
import os
import re
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import chunktest as ct  # noqa: E402

SECTION = re.compile(r"^(Errors|Warns|Notes|Chats|Comments) \((\d+)\)$")
ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s+(.*)$")
SEVERITY = {"Errors": "Error", "Warns": "Warning", "Notes": "Note", "Chats": "Chat", "Comments": "Comment"}
SHOWNAME = re.compile(r"^Expert Info \(([^/]+)/([^)]+)\): ")

# Analysis experts each fault capture must raise without a tree:
# (one pass, added with -2).
EXPECTED = {
    "fault-drop-slice": ({"chunk.analysis.stall", "chunk.analysis.resend.expert"},
                         {"chunk.analysis.incomplete"}),
    "fault-drop-acks": ({"chunk.analysis.silent_receiver"}, {"chunk.analysis.incomplete"}),
    "fault-never-pops": ({"chunk.analysis.receiver_not_reading"}, {"chunk.analysis.incomplete"}),
    "fault-ignores-acks": ({"chunk.analysis.sender_not_listening", "chunk.analysis.already_acked"},
                           set()),
    "fault-no-resend-delay": ({"chunk.analysis.too_soon"}, set()),
    "loss-10-at-receiver": ({"chunk.analysis.already_acked", "chunk.analysis.duplicate_ack.expert",
                             "chunk.analysis.complete"}, set()),
}


def expert_table(out):
    """Rows (severity, group, protocol, summary) -> frequency of -z expert."""
    rows = collections.Counter()
    section = None
    for line in out.splitlines():
        m = SECTION.match(line)
        if m:
            section = SEVERITY[m.group(1)]
            continue
        if section is None or not line.strip() or line.startswith("=") or "Frequency" in line:
            continue
        m = ROW.match(line)
        if m:
            rows[(section, m.group(2), m.group(3), m.group(4))] += int(m.group(1))
    return rows


def tree_experts(pcap, extra, spans=None):
    """[(filter name, severity, group, message)] of every chunk expert info in
    the full tree (PDML of the chunk protocol's trees, -J chunk); with spans
    (concat_captures' of pcap), {capture name: that list}."""
    out = ct.tshark(extra + ["-r", pcap, "-T", "pdml", "-J", "chunk"])
    per = collections.defaultdict(list)
    for pkt in ET.fromstring(out).iter("packet"):
        num = pkt.find("proto[@name='geninfo']/field[@name='num']")
        found = per[ct.capture_of_frame(spans, int(num.get("show")))[:-5] if spans else None]
        for f in pkt.iter("field"):
            if f.get("name") != "_ws.expert":
                continue
            kids = {k.get("name"): k for k in f}
            names = [k for k in kids if k.startswith("chunk.")]
            if not names:
                continue
            m = SHOWNAME.match(f.get("showname", ""))
            found.append((names[0], m.group(1) if m else "?", m.group(2) if m else "?",
                          kids["_ws.expert.message"].get("show")))
    return per if spans else per[None]


def check(F, cap, label, extra, expected=None, tree=None):
    """The chunk rows of -q -z expert on cap (with extra) are the tree's
    expert infos (messages, severity, group, frequency; counts per filter
    name); expected: the analysis experts the no-tree run must raise; tree:
    tree_experts() of cap (with extra) if read already."""
    label = "%s%s" % (label, " -2" if extra else "")
    table = expert_table(ct.tshark(extra + ["-r", cap, "-q", "-z", "expert"]))
    chunk_rows = collections.Counter({k: v for k, v in table.items() if k[2] == "Chunk"})
    if tree is None:
        tree = tree_experts(cap, extra)
    want_rows = collections.Counter((sev, grp, "Chunk", msg) for _, sev, grp, msg in tree)
    F.check(chunk_rows == want_rows,
            "%s: -q -z expert differs from the tree: missing %s, extra %s"
            % (label, sorted(want_rows - chunk_rows)[:3], sorted(chunk_rows - want_rows)[:3]))
    # Counts per filter name: the no-tree messages named by the tree's.
    by_msg = {}
    for n, _, _, msg in tree:
        by_msg.setdefault(msg, n)
    want_names = collections.Counter(n for n, _, _, _ in tree)
    got_names = collections.Counter()
    for (_, _, _, msg), k in chunk_rows.items():
        got_names[by_msg.get(msg, "(not in the tree) " + msg)] += k
    F.check(got_names == want_names, "%s: per filter name, tree %s, no tree %s"
            % (label, dict(want_names), dict(got_names)))
    if expected is not None:
        want = expected[0] | (expected[1] if extra else set())
        missing = want - set(got_names)
        F.check(not missing, "%s: no tree: never raised %s" % (label, sorted(missing)))
    print("%-28s tree %4d, no tree %4d chunk expert infos"
          % (label, sum(want_names.values()), sum(chunk_rows.values())))


def main():
    F = ct.Failures()
    caps = ct.chunk_captures()
    # The fault captures (EXPECTED) one by one in the no-tree run, since
    # -z expert does not say which frame raised what; the others read in
    # one file (chunktest.concat_captures: each capture's addresses its
    # own), and when that fails, each of them alone to name the capture.
    # The tree (PDML) says the frame: one run a pass reads every capture in
    # one file, and each capture's expert infos are those of its frames.
    alone = [c for c in caps if os.path.basename(c)[:-5] in EXPECTED or not ct.concat_ok(c)]
    rest = [c for c in caps if c not in alone]
    every = [c for c in caps if ct.concat_ok(c)]
    with ct.scratch_dir() as tmp:
        merged = os.path.join(tmp, "others.pcap")
        if rest:
            ct.concat_captures(rest, merged)
        all_merged = os.path.join(tmp, "every.pcap")
        spans = ct.concat_captures(every, all_merged) if len(every) > 1 else None
        for extra in ([], ["-2"]):
            trees = tree_experts(all_merged, extra, spans) if spans else {}
            for cap in alone:
                name = os.path.basename(cap)[:-5]
                check(F, cap, name, extra, EXPECTED.get(name), trees.get(name) if cap in every else None)
            if rest:
                G = ct.Failures()
                tree = [e for c in rest for e in trees.get(os.path.basename(c)[:-5], [])] if spans else None
                check(G, merged, "%d others in one file" % len(rest), extra, None, tree)
                if G.items:
                    n = len(F.items)
                    for cap in rest:
                        check(F, cap, os.path.basename(cap)[:-5], extra)
                    if len(F.items) == n:
                        F.items += G.items
    F.finish("test_gui_experts")


if __name__ == "__main__":
    main()
