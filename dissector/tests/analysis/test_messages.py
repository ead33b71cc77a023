#!/usr/bin/env python3
"""Every analysis message is whole: nothing cut at Wireshark's item label limit.

Wireshark formats an item label into a 240-character buffer and silently
cuts what does not fit. For every committed capture with chunk traffic, in
one pass and with -2 (PDML):

- the detail of every expert info of the analysis (chunk.analysis.*: the
  chunk.expert.detail item that carries it, the summary being a fixed text)
  is a sentence that ends in '.' and is at most MAX_EXPERT characters (well
  under the limit);
- the Diagnosis and What to check items show their whole value, end in '.'
  and fit the limit;
- under `-z chunk,transfers` (in one pass, printed by the run of its PDML)
  every diagnosis line ends in '.' and holds the whole Diagnosis of its
  transfer from the packet tree;
- each fault capture has at least one diagnosis.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import chunktest as ct  # noqa: E402

LABEL_LIMIT = 240      # ITEM_LABEL_LENGTH in Wireshark 4.0, terminating NUL included
MAX_EXPERT = 200
DIAG_LINE = re.compile(r"^Stream (\d+) transfer (\d+) \(chunk (\d+)\): (.*)$")


def pdml_items(pcap, two_pass, taps=()):
    """(expert details of the analysis, [(field, show, showname)] of the
    diagnosis and check items, {transfer: diagnosis}, what the -z taps
    printed after the PDML)."""
    out = ct.tshark((["-2"] if two_pass else []) + ["-r", pcap, "-T", "pdml"] + [a for t in taps for a in ("-z", t)])
    end = out.index("</pdml>") + len("</pdml>")
    experts, items, diags = [], [], {}
    for pkt in ET.fromstring(out[:end]).iter("packet"):
        transfer = None
        for f in pkt.iter("field"):
            name = f.get("name", "")
            if name == "chunk.transfer":
                transfer = int(f.get("show"))
            if name == "chunk.expert.detail":
                kids = [k.get("name", "") for e in f if e.get("name") == "_ws.expert" for k in e]
                if any(k.startswith("chunk.analysis.") for k in kids):
                    experts.append(f.get("show"))
            if name in ("chunk.analysis.diagnosis", "chunk.analysis.check"):
                items.append((name, f.get("show"), f.get("showname")))
                if name == "chunk.analysis.diagnosis":
                    diags[transfer] = f.get("show")
    return experts, items, diags, out[end:]


def main():
    fail = ct.Failures()
    caps = ct.chunk_captures()
    checked = 0
    for cap in caps:
        name = os.path.basename(cap)[:-5]
        tree_diags = {}
        for two in (False, True):
            tag = "%s%s" % (name, " -2" if two else "")
            # -z chunk,transfers in one pass: after the PDML of that run
            experts, items, diags, taps = pdml_items(cap, two, () if two else ("chunk,transfers",))
            if two:
                tree_diags = diags
            else:
                table = taps
            for m in set(experts):
                checked += 1
                fail.check(m.endswith("."), "%s: expert detail not a whole sentence: %r" % (tag, m))
                fail.check(len(m) <= MAX_EXPERT, "%s: expert detail of %d characters: %r" % (tag, len(m), m))
            for field, show, showname in items:
                checked += 1
                label = ("Diagnosis: " if field == "chunk.analysis.diagnosis" else "What to check: ") + show
                fail.check(showname == label, "%s: %s label cut: %r" % (tag, field, showname))
                fail.check(len(label) < LABEL_LIMIT, "%s: %s label of %d characters" % (tag, field, len(label)))
                fail.check(show.endswith("."), "%s: %s not a whole sentence: %r" % (tag, field, show))
        lines = {}
        for line in table.splitlines():
            m = DIAG_LINE.match(line)
            if m:
                lines[int(m.group(2))] = m.group(4)
        for t, d in lines.items():
            checked += 1
            fail.check(d.endswith("."), "%s: table diagnosis of transfer %d not whole: %r" % (name, t, d))
        for t, d in tree_diags.items():
            fail.check(t in lines and lines[t].startswith(d + " "),
                       "%s: table line of transfer %d %r does not hold the tree's diagnosis %r"
                       % (name, t, lines.get(t), d))
        if name.startswith("fault-") and name != "fault-no-resend-delay":
            fail.check(lines, "%s: no diagnosis line" % name)
    fail.finish("analysis messages (%d captures, %d messages)" % (len(caps), checked))


if __name__ == "__main__":
    main()
