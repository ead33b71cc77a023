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

The captures (decoded alike: no options) are read in one file
(chunktest.concat_captures: each capture's addresses its own, times only
forward; frame numbers and addresses in the messages only get longer), two
tshark runs in all; what fails is named by its capture, which is then read
alone: its failures are those of its own file (and if it passes alone, the
merged file's failures stand, named so).
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


def pdml_items(pcap, two_pass, taps=(), spans=None):
    """{capture name: (expert details of the analysis, [(field, show,
    showname)] of the diagnosis and check items, {transfer: diagnosis},
    {transfers})}, what the -z taps printed after the PDML; spans:
    concat_captures' of pcap (the capture of each frame), or None (pcap
    alone)."""
    out = ct.tshark((["-2"] if two_pass else []) + ["-r", pcap, "-T", "pdml", "-J", "chunk"] + [a for t in taps for a in ("-z", t)])
    end = out.index("</pdml>") + len("</pdml>")
    alone = os.path.basename(pcap)[:-5]
    per = {}
    for pkt in ET.fromstring(out[:end]).iter("packet"):
        name = alone
        transfer = None
        for f in pkt.iter("field"):
            field = f.get("name", "")
            if field == "num" and spans:
                name = ct.capture_of_frame(spans, int(f.get("show")))[:-5]
            if field == "chunk.transfer":
                transfer = int(f.get("show"))
                per.setdefault(name, ([], [], {}, set()))[3].add(transfer)
            if field == "chunk.expert.detail":
                kids = [k.get("name", "") for e in f if e.get("name") == "_ws.expert" for k in e]
                if any(k.startswith("chunk.analysis.") for k in kids):
                    per.setdefault(name, ([], [], {}, set()))[0].append(f.get("show"))
            if field in ("chunk.analysis.diagnosis", "chunk.analysis.check"):
                per.setdefault(name, ([], [], {}, set()))[1].append((field, f.get("show"), f.get("showname")))
                if field == "chunk.analysis.diagnosis":
                    per[name][2][transfer] = f.get("show")
    return per, out[end:]


def check_captures(names, pcap, spans, fail):
    """The checks of the captures names, read from pcap (spans: as
    pdml_items takes them); returns the number of messages checked."""
    checked = 0
    views = {}
    for two in (False, True):
        # -z chunk,transfers in one pass: after the PDML of that run
        per, taps = pdml_items(pcap, two, () if two else ("chunk,transfers",), spans)
        views[two] = per
        if not two:
            table = taps
    lines = {}
    for line in table.splitlines():
        m = DIAG_LINE.match(line)
        if m:
            lines[int(m.group(2))] = m.group(4)
    for name in names:
        for two in (False, True):
            tag = "%s%s" % (name, " -2" if two else "")
            experts, items, _, _ = views[two].get(name, ([], [], {}, set()))
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
        _, _, tree_diags, _ = views[True].get(name, ([], [], {}, set()))
        mine = views[False].get(name, ([], [], {}, set()))[3]
        for t, d in lines.items():
            if t in mine:
                checked += 1
                fail.check(d.endswith("."), "%s: table diagnosis of transfer %d not whole: %r" % (name, t, d))
        for t, d in tree_diags.items():
            fail.check(t in lines and lines[t].startswith(d + " "),
                       "%s: table line of transfer %d %r does not hold the tree's diagnosis %r"
                       % (name, t, lines.get(t), d))
        if name.startswith("fault-") and name != "fault-no-resend-delay":
            fail.check(any(t in mine for t in lines), "%s: no diagnosis line" % name)
    return checked


def main():
    fail = ct.Failures()
    caps = ct.chunk_captures()
    checked = 0
    if len(caps) > 1 and all(ct.concat_ok(c) for c in caps):
        with ct.scratch_dir() as tmp:
            merged = os.path.join(tmp, "messages.pcap")
            spans = ct.concat_captures(caps, merged)
            G = ct.Failures()
            checked = check_captures([os.path.basename(c)[:-5] for c in caps], merged, spans, G)
            for cap in caps:
                name = os.path.basename(cap)[:-5]
                mine = [m for m in G.items if m.startswith(name + ":") or m.startswith(name + " -2:")]
                if mine:
                    n = len(fail.items)
                    check_captures([name], cap, None, fail)
                    if len(fail.items) == n:
                        fail.items += ["%s (read with the others in one file, not alone)" % m for m in mine]
    else:
        for cap in caps:
            checked += check_captures([os.path.basename(cap)[:-5]], cap, None, fail)
    fail.finish("analysis messages (%d captures, %d messages)" % (len(caps), checked))


if __name__ == "__main__":
    main()
