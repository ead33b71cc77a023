#!/usr/bin/env python3
"""-z reliable,conns and its GUI table (-z reliable,conns_table) against the
truth files: the capturing side's row counts the packets its endpoint sent,
acked and lost (the endpoint takes its acks where the capture is), both
tables agree, and so does the table of a two-pass run (every pass feeds the
tap, as the GUI's retaps need).

The captures are read in one file (chunktest.concat_captures: each capture
its own addresses, so its own conversations and rows): one run a pass, each
capture's rows found by their addresses (chunktest.concat_address)."""
import os
import re
import sys

import rltest as rt

HOST = {"a": "10.0.0.1:50000", "b": "10.0.0.2:50001"}


def tables(pcap, two_pass=False):
    """The output of -z reliable,conns and, with one pass, of its GUI
    table (-z reliable,conns_table) too: one tshark run."""
    gui = [] if two_pass else ["-z", "reliable,conns_table"]
    return rt.tshark(["-r", pcap] + rt.DECODE + (["-2"] if two_pass else []) + ["-q", "-z", "reliable,conns"] + gui)


def text_rows(out):
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^(\d+)\s+(\S+ -> \S+)\s+(.*)$", line) if "|" not in line else None
        if m:
            v = m.group(3).split()
            rows[m.group(2).split(" ->")[0]] = {"packets": int(v[0]), "fragments": int(v[1]), "reassembled": int(v[2]),
                                                "incomplete": int(v[3]), "acked": int(v[4]), "lost": int(v[5])}
    return rows


def gui_rows(out):
    rows = {}
    for line in out.splitlines():
        p = [x.strip() for x in line.split("|")]
        if len(p) > 8 and p[0].isdigit():
            rows[p[1].split(" ->")[0]] = {"packets": int(p[2]), "fragments": int(p[3]), "reassembled": int(p[4]),
                                          "incomplete": int(p[5]), "acked": int(p[6]), "lost": int(p[7])}
    return rows


def capture_rows(rows, index):
    """The rows of concat_captures' capture index (by their A and B
    addresses), keyed by the addresses that capture has alone."""
    out = {}
    for key, v in rows.items():
        ip, port = key.rsplit(":", 1)
        alone = rt.ct.concat_address(ip, index) + ":" + port
        if alone in HOST.values():
            out[alone] = v
    return out


def main():
    fails = rt.Failures()
    names = rt.captures()
    with rt.scratch_dir() as tmp:
        merged = os.path.join(tmp, "reliable.pcap")
        rt.ct.concat_captures([os.path.join(rt.CAPTURES, n + ".pcap") for n in names], merged)
        out = tables(merged)
        # Two passes (and the GUI's retaps) dissect every frame again: the
        # tap is fed on every pass.
        text_all, gui_all, two_all = text_rows(out), gui_rows(out), text_rows(tables(merged, True))
    known = set()
    for i, name in enumerate(names):
        t = rt.truth(name)
        text, gui, two = capture_rows(text_all, i), capture_rows(gui_all, i), capture_rows(two_all, i)
        known |= {rt.ct.concat_address(k.rsplit(":", 1)[0], i) + ":" + k.rsplit(":", 1)[1] for k in text}
        fails.check(text == gui and len(text) == 2, "%s: text table %s, GUI table %s" % (name, text, gui))
        fails.check(two == text, "%s: -2 table %s, one pass %s" % (name, two, text))
        at = t["capture"]["at"]
        side = [s for s in t["sides"] if s["side"] == at][0]["counters"]
        row = text.get(HOST[at], {})
        want = {"packets": side["packets_sent"], "acked": side["packets_acked"], "lost": side["packets_lost"],
                "fragments": side["fragments_sent"]}
        got = {k: row.get(k) for k in want}
        fails.check(got == want, "%s: row %s: %s, truth %s" % (name, HOST[at], got, want))
        print("%s: %s %s" % (name, HOST[at], got))
    # no row that is none of the captures' (one pass, GUI table, two passes)
    for what, rows in (("text", text_all), ("GUI", gui_all), ("-2", two_all)):
        fails.check(set(rows) <= known, "%s table: rows of no capture: %s" % (what, sorted(set(rows) - known)))
    fails.finish("reliable.stats")
    return 0


if __name__ == "__main__":
    sys.exit(main())
