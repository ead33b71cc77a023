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
  their packets.
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
    out = ct.tshark(["-r", pcap, "-q", "-z", "conv,%s" % proto] + list(extra))
    rows = {}
    for line in out.splitlines():
        m = _CONV_ROW.match(line)
        if m:
            rows[(m.group(1), m.group(2))] = (int(m.group(3)), int(m.group(4)), int(m.group(5)))
    return rows


def endpoints(pcap, proto, extra=()):
    out = ct.tshark(["-r", pcap, "-q", "-z", "endpoints,%s" % proto] + list(extra))
    rows = {}
    for line in out.splitlines():
        m = _EP_ROW.match(line)
        if m and not line.startswith(" "):
            rows[m.group(1).strip()] = (int(m.group(2)), int(m.group(3)), int(m.group(4)))
    return rows


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
