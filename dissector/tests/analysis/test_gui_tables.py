#!/usr/bin/env python3
"""The Statistics tables as the GUI shows them (tshark -z NAME_table prints
the GUI's table: the same rows and columns):

- the columns that matter come right after Direction, where a dialog opened
  about 600 pixels wide shows them: Status (and Diagnosis) for Chunk
  Transfers, Status for P2frag Packets, Diagnosis for Netgame Connections
  and Yojimbo Blocks and Messages;
- the first header is padded (the sort arrow cut "Stream" to "Strear"), in
  every protocol's tables;
- durations are in seconds, as in the text tables ("Duration (s)");
- P2frag Packets has the per-direction loss summary the text table prints
  below its rows, with the same figures;
- one naming scheme: every table names a link "Connection" (yojimbo's too,
  numbered from 0 like netcode's and reliable's), and its title (the
  Statistics menu entry) is "<Protocol> <Things>", the protocol's name
  capitalised;
- one unit per kind of figure: no table has times in ms beside times in s;
- what never happened is blank: a yojimbo block never fully acknowledged
  has no "Fully acked in" and no "Time to ack (s)", a message never
  acknowledged no "Acked in";
- a yojimbo block's "Longest stall (s)" is at least the wait its diagnosis
  names ("no fragment acknowledged in its last N s");
- Statistics > Chunk > Packets and outcomes counts, under "With problems",
  as many problems as Expert Information has chunk warnings and errors,
  with the whole capture read (-2, as the GUI): the end-of-capture
  diagnosis of an unfinished transfer included;
- a yojimbo diagnosis is never only cut: under its item (cut at 240
  characters by Wireshark) its lines (yojimbo.analysis.diagnosis.line) hold
  it whole, each shorter than the cut.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import chunktest as ct  # noqa: E402

CAP = os.path.join(ct.REPO, "captures")
YJ_OPTS = ["-o", "netcode.keylog_file:" + os.path.join(CAP, "yojimbo-block-lost-fragment.keys"), "-o",
           "yojimbo.channels:ro,ro", "--disable-protocol", "chunk"]


TITLES = {"chunk,transfers_table": "Chunk Transfers", "p2frag,packets_table": "P2frag Packets",
          "netgame,conns_table": "Netgame Connections", "netcode,conns_table": "Netcode Connections",
          "reliable,conns_table": "Reliable Connections", "yojimbo,blocks_table": "Yojimbo Blocks",
          "yojimbo,messages_table": "Yojimbo Messages"}
titles = {}
_runs = {}
# The text table read in the same run as a GUI table (its summary is
# compared below).
TEXT = {"p2frag,packets_table": "p2frag,packets"}


def table(pcap, name, opts=(), text=None):
    """(header cells, rows of cells) of tshark's print of a GUI table; its
    title (the menu entry's, the line before "Filter for statistics:") in
    titles[name]. A table read already with the same arguments is not
    read again (the checks below look at some tables twice). text: a text
    table (-z) printed by the same run, returned third: what the run
    printed outside the GUI table's block (between its rules of '=')."""
    args = ("-r", os.path.join(CAP, pcap), "-q", "-z", name) + (("-z", text) if text else ()) + tuple(opts)
    if args not in _runs:
        _runs[args] = ct.tshark(list(args))
    out = _runs[args]
    if text:
        blocks = re.split(r"(?m)^=+$", out)
        gui = [b for b in blocks if re.search(r"(?m)^Filter for statistics:", b)]
        return table_cells(gui[0] if len(gui) == 1 else "", name) + (
            "".join(b for b in blocks if len(gui) != 1 or b is not gui[0]),)
    return table_cells(out, name)


def table_cells(out, name):
    """table()'s (header, rows) of the text out of a GUI table."""
    out = out.splitlines()
    header, rows = None, []
    for i, line in enumerate(out):
        if line.startswith("Filter for statistics:") and i:
            titles[name] = out[i - 1].rstrip(":")
        if "|" not in line:
            continue
        cells = [c.strip() for c in line.split("|")][:-1]
        if header is None:
            header = [c for c in line.split("|")][:-1]
        else:
            rows.append(cells)
    return header, rows


def split_tree(out, title):
    """The output of a run with a stats tree (-z NAME,tree) and other taps,
    split: (the tree from its title line to the rule of '-' closing its
    rows, everything else). The tree is "" when it is not there."""
    lines = out.split("\n")
    for i, line in enumerate(lines):
        if line == title:
            dashes = [j for j in range(i + 1, len(lines)) if re.match(r"^-{10,}$", lines[j])]
            if len(dashes) >= 2:
                return "\n".join(lines[i:dashes[1] + 1]), "\n".join(lines[:i] + lines[dashes[1] + 1:])
    return "", out


def main():
    F = ct.Failures()
    for pcap, name, first, after_dir in [
            ("fault-never-pops.pcap", "chunk,transfers_table", "Stream", ["Status", "Diagnosis"]),
            ("p2frag-loss-10.pcap", "p2frag,packets_table", "Stream", ["Status"]),
            ("netgame-loss-10.pcap", "netgame,conns_table", "Connection", ["Diagnosis"]),
            ("yojimbo-block-lost-fragment.pcap", "yojimbo,blocks_table", "Connection", ["Diagnosis"]),
            ("yojimbo-block-lost-fragment.pcap", "yojimbo,messages_table", "Connection", ["Diagnosis"])]:
        header, rows = table(pcap, name, YJ_OPTS if name.startswith("yojimbo") else (), TEXT.get(name))[:2]
        if not F.check(header and rows, "%s: no table" % name):
            continue
        names = [h.strip() for h in header]
        print("%s: %s" % (name, names))
        F.check(header[0].startswith(first + "   "), "%s: first header %r not padded" % (name, header[0]))
        d = names.index("Direction")
        F.check(names[d + 1:d + 1 + len(after_dir)] == after_dir, "%s: after Direction %s, want %s" % (
            name, names[d + 1:d + 1 + len(after_dir)], after_dir))
        F.check(not any("(ms)" in h and "Duration" in h for h in names), "%s: a duration in ms" % name)
        if "Duration (s)" in names:
            i = names.index("Duration (s)")
            F.check(all(re.match(r"^\d+\.\d+$", r[i]) for r in rows if r[i]), "%s: durations %s" % (
                name, [r[i] for r in rows][:5]))

    # The other protocols' tables: their first header is padded too.
    yj = "yojimbo-block-lost-fragment"
    yj_opts = YJ_OPTS
    for pcap, opts, name, first in [
            ("netcode-clean.pcap", ["-o", "netcode.keylog_file:" + os.path.join(CAP, "netcode-clean.keys")],
             "netcode,conns_table", "Connection"),
            ("reliable-clean.pcap", ["-d", "udp.port==50000,reliable"], "reliable,conns_table", "Connection"),
            (yj + ".pcap", yj_opts, "yojimbo,blocks_table", "Connection"),
            (yj + ".pcap", yj_opts, "yojimbo,messages_table", "Connection")]:
        header, rows = table(pcap, name, opts)
        if F.check(header and rows, "%s: no table" % name):
            F.check(header[0].startswith(first + "   "), "%s: first header %r not padded" % (name, header[0]))
            names = [h.strip() for h in header]
            F.check(not (any("(ms)" in h for h in names) and any("(s)" in h for h in names)),
                    "%s: times in ms beside times in s: %s" % (name, names))
            if name == "yojimbo,blocks_table":
                col = {n: i for i, n in enumerate(names)}
                unfinished = [r for r in rows if r[col["Fragments acked"]] != r[col["Fragments"]]]
                F.check(unfinished, "%s: no block never fully acknowledged in %s" % (name, pcap))
                for r in unfinished:
                    F.check(r[col["Fully acked in"]] == "" and r[col["Time to ack (s)"]] == "",
                            "%s: a block never fully acked shows %r, %r" % (name, r[col["Fully acked in"]],
                                                                            r[col["Time to ack (s)"]]))
                    m = re.search(r"in its last ([\d.]+) s", r[col["Diagnosis"]])
                    if m:
                        F.check(float(r[col["Longest stall (s)"]]) >= float(m.group(1)),
                                "%s: longest stall %s s, the diagnosis says %s s" % (
                                    name, r[col["Longest stall (s)"]], m.group(1)))
                    print("%s: unfinished block: fully acked in %r, time to ack %r, longest stall %s, %s" % (
                        name, r[col["Fully acked in"]], r[col["Time to ack (s)"]], r[col["Longest stall (s)"]],
                        m.group(0) if m else "no idle wait in its diagnosis"))
            if name == "yojimbo,messages_table":
                col = {n: i for i, n in enumerate(names)}
                for r in rows:
                    if "never acknowledged" in r[col["Diagnosis"]]:
                        F.check(r[col["Acked in"]] == "" and r[col["Time to ack (s)"]] == "",
                                "%s: a message never acked shows %r, %r" % (name, r[col["Acked in"]],
                                                                             r[col["Time to ack (s)"]]))
    out = ct.tshark(["-2", "-r", os.path.join(CAP, yj + ".pcap"), "-Y", "yojimbo.analysis.diagnosis", "-T",
                     "fields", "-E", "occurrence=a", "-E", "aggregator=\x01", "-e", "yojimbo.analysis.diagnosis",
                     "-e", "yojimbo.analysis.diagnosis.line"] + yj_opts)
    rows = [line.split("\t") for line in out.splitlines() if line]
    F.check(rows, "no yojimbo diagnosis in %s" % yj)
    for diag, lines in rows:
        lines = lines.split("\x01") if lines else []
        F.check(lines and all(len(x) < 240 for x in lines), "diagnosis lines %s" % lines)
        F.check(re.sub(r"(; |: )", "", diag) == re.sub(r"(; |: )", "", "".join(lines)), "diagnosis lines %s do not make %r" % (lines, diag))
    if rows:
        print("yojimbo diagnosis: %d characters, %d lines" % (len(rows[0][0]), len(rows[0][1].split("\x01"))))
    for pcap in ("fault-drop-slice.pcap", "fault-never-pops.pcap", "fault-drop-acks.pcap",
                 "fault-ignores-acks.pcap"):
        # The tree and Expert Information from one run (-2 for both).
        tree, ex = split_tree(ct.tshark(["-2", "-r", os.path.join(CAP, pcap), "-q", "-z", "chunk,tree",
                                         "-z", "expert"]), "Chunk/Packets and outcomes:")
        F.check(tree, "%s: no Packets and outcomes tree" % pcap)
        lines = tree.splitlines()
        problems, under = 0, False
        for line in lines:
            m = re.match(r"^( *)(\S.*?)\s{2,}(\d+)\s", line)
            if not m:
                continue
            if m.group(2) == "With problems":
                under = True
            elif under and len(m.group(1)) == 2:
                problems += int(m.group(3))
            elif under:
                under = False
        warns = sum(int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+\S+\s+Chunk\s", ex.split("Notes (")[0],
                                                          re.M))
        F.check(problems == warns, "%s: Packets and outcomes counts %d problems, Expert Information %d chunk "
                "warnings and errors" % (pcap, problems, warns))
        print("%s: %d problems, %d warnings and errors" % (pcap, problems, warns))
    for name, want in sorted(TITLES.items()):
        F.check(titles.get(name) == want, "%s: title %r, want %r" % (name, titles.get(name), want))

    # The p2frag summary row against the text table's summary line.
    header, rows, text = table("p2frag-loss-10.pcap", "p2frag,packets_table", text="p2frag,packets")
    status = [h.strip() for h in header].index("Status")
    summary = [r for r in rows if r[status].startswith("Direction:")]
    m = re.search(r"fragment loss ([\d.]+)% \((\d+) of (\d+) fragments missing\), packet loss ([\d.]+)%.*"
                  r"predicted ([\d.]+)%", text)
    F.check(m, "text table: no summary line")
    F.check(len(summary) == 1, "p2frag table: %d summary rows, want 1" % len(summary))
    if m and summary:
        want = "fragment loss %s%% (%s of %s), packet loss %s%%, predicted %s%%" % m.groups()
        F.check(want in summary[0][status], "p2frag summary %r lacks %r" % (summary[0][status], want))
        print("p2frag summary row: %s" % summary[0][status])
    F.finish("analysis.gui_tables")


if __name__ == "__main__":
    main()
