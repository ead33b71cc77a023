"""Helpers for the Flow Graph and Conversations/Endpoints tests: tshark's
-z flow,<name>,network, -z conv,<proto> and -z endpoints,<proto> output
read back as Python values.

- flow(pcap, name, extra): the arrows, in order, each a dict with conv (the
  Conv. column tshark prints when there are several, else 0), time (str,
  as printed), dir ("->" from the first node to the second, "<-" back),
  label (as tshark prints it: cut to its cell) and comment (whole);
- conv(pcap, proto, extra): {(A, B): (frames B->A, frames A->B, total)}
  of the Conversations table (A, B: the row's end names);
- endpoints(pcap, proto, extra): {name: (packets, tx packets, rx packets)};
- row_filters(F, what, pcap, proto, rows, extra): the rows' filters match
  their packets;
- taps(pcap, proto, extra, filters): the three above and, given display
  filters, how many frames each matches (-z io,stat), from one run.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chunktest as ct  # noqa: E402

REPO = ct.REPO
Failures = ct.Failures

_SIZE = r" [\d.]+ (?:bytes|kB|MB|GB)"
_CONV_ROW = re.compile(r"^(.+?)\s+<->\s+(.+?)\s+(\d+)" + _SIZE + r"\s+(\d+)" + _SIZE + r"\s+(\d+)" + _SIZE)
# packets, then bytes: a number (4.0, 4.4) or a size with its unit (4.6)
_EP_COUNT = r"\s+(\d+)\s+[\d.]+(?: (?:bytes|kB|MB|GB))?"
_EP_ROW = re.compile(r"^(.+?)" + _EP_COUNT * 3 + r"\s*$")


def flow(pcap, name, extra=()):
    return flow_arrows(ct.tshark(["-r", pcap, "-q", "-z", "flow,%s,network" % name] + list(extra)))


def flow_arrows(out):
    """The arrows of a -z flow table (out: tshark's text, other tables left
    out or not): [{"conv", "time", "label", "comment", "dir"}]."""
    arrows = []
    pending = None
    for line in out.splitlines():
        m = re.match(r"^(\d+)?\s*\|(\d+\.\d+)\s*\|", line)
        if m:
            cells = line.split("|")
            pending = {"conv": int(m.group(1) or 0), "time": m.group(2), "label": cells[2].strip(),
                       "comment": cells[-1]}
        elif pending is not None and ("-->" in line or "<--" in line):
            pending["dir"] = "->" if "-->" in line else "<-"
            arrows.append(pending)
            pending = None
    return arrows


def conv(pcap, proto, extra=()):
    return conv_rows(ct.tshark(["-r", pcap, "-q", "-z", "conv,%s" % proto] + list(extra)))


def conv_rows(out):
    """The rows of a -z conv table's text (out)."""
    rows = {}
    for line in out.splitlines():
        m = _CONV_ROW.match(line)
        if m:
            rows[(m.group(1), m.group(2))] = (int(m.group(3)), int(m.group(4)), int(m.group(5)))
    return rows


def endpoints(pcap, proto, extra=()):
    return endpoint_rows(ct.tshark(["-r", pcap, "-q", "-z", "endpoints,%s" % proto] + list(extra)))


def endpoint_rows(out):
    """The rows of a -z endpoints table's text (out)."""
    rows = {}
    for line in out.splitlines():
        m = _EP_ROW.match(line)
        if m and not line.startswith(" "):
            rows[m.group(1).strip()] = (int(m.group(2)), int(m.group(3)), int(m.group(4)))
    return rows


def split_tables(out, titles):
    """([the table of each title: from its rule of '=' to the same rule
    closing it, "" when it is not there], the lines of no table), in
    whichever order the taps print them, a table right after another too
    (chunktest.split_table would join the lines around the second). A title
    is matched regardless of case: the protocols name their tables
    "netcode Conversations", "Netgame Conversations"."""
    lines = out.split("\n")
    tables = [""] * len(titles)
    rest = []
    i = 0
    while i < len(lines):
        rule = lines[i]
        hit = [k for k, t in enumerate(titles) if i + 1 < len(lines) and lines[i + 1].lower().startswith(t.lower())]
        if hit and len(rule) >= 10 and rule == "=" * len(rule) and rule in lines[i + 2:]:
            j = lines.index(rule, i + 2)
            tables[hit[0]] = "\n".join(lines[i:j + 1]) + "\n"
            i = j + 1
            continue
        rest.append(rule)
        i += 1
    return tables, "\n".join(rest)


def io_counts(out):
    """The frames of each column of a -z io,stat,0 table's one interval row
    (out: its text), [] without that row."""
    counts = []
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("|")]
        # the one interval's row: | <start> <> <end> | frames | bytes | ...
        # (and empty cells when the filters' legend is wider)
        if len(cells) > 2 and "<>" in cells[1]:
            counts = [int(c) for c in [c for c in cells[2:] if c][0::2]]
    return counts


def taps(pcap, proto, extra=(), filters=()):
    """One run (-q) of the Flow Graph, the Conversations and Endpoints tabs
    of proto and, given filters, -z io,stat counting the frames each filter
    matches: (flow's arrows, conv's rows, endpoints' rows, [frames per
    filter]), as flow(), conv() and endpoints() read each tap's own run."""
    zs = ["flow,%s,network" % proto, "conv,%s" % proto, "endpoints,%s" % proto]
    if filters:
        zs.append("io,stat,0," + ",".join(filters))
    out = ct.tshark(["-r", pcap, "-q"] + sum((["-z", z] for z in zs), []) + list(extra))
    (conv_text, ep_text, io_text), rest = split_tables(
        out, ("%s Conversations" % proto, "%s Endpoints" % proto, "| IO Statistics"))
    return flow_arrows(rest), conv_rows(conv_text), endpoint_rows(ep_text), io_counts(io_text)


def row_filters(F, what, pcap, proto, rows, extra=()):
    """Checks that each conversation row's filters (the hidden fields
    <proto>.end, src_end, dst_end Apply as Filter uses) match its packets:
    both ends, and each direction."""
    for (a, b), (b_to_a, a_to_b, total) in rows.items():
        for filt, want in (('%s.end == "%s" && %s.end == "%s"' % (proto, a, proto, b), total),
                           ('%s.src_end == "%s" && %s.dst_end == "%s"' % (proto, a, proto, b), a_to_b),
                           ('%s.src_end == "%s" && %s.dst_end == "%s"' % (proto, b, proto, a), b_to_a)):
            got = len(ct.tshark(["-r", pcap, "-Y", filt] + list(extra)).splitlines())
            F.check(got == want, "%s: %s matches %d packets, the row says %d" % (what, filt, got, want))


def capture(name):
    return os.path.join(REPO, "captures", name)
