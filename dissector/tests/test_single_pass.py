#!/usr/bin/env python3
"""test_single_pass.py: tshark's single pass is recognised (common/single-pass.c).

Every analysis keeps its records in the packet scope, and chunk and p2frag
reassemble in buffers of their own, only when the pass is recognised; when
the recognition breaks, memory silently grows back to the two-pass figures
and nothing else shows it. `tshark -q -z chunkshark,single_pass` prints how
many analysed packets were taken as the single pass. For a capture of each
protocol with a <protocol>.single_pass preference (those whose analysis
takes this path; the capture in CAPTURES, or else the first its simulator
makes, captures/captures.txt) this checks:
  - tshark -r (one pass, with -q and with columns and -V): all but the first;
  - tshark -2: none; -o <protocol>.single_pass:FALSE: none;
  - every one but netgame (OUTPUT_DIFFERS): the -V -P output with the
    preference off is the one with it on (the runs of the counts with
    columns and with the preference off; netgame raises a loss where it
    becomes known in the single pass, docs/netgame.md, so its output differs
    by design).
And for reliable and yojimbo, whose first pass keeps less for the passes
that revisit (AGREE): one pass and -2 agree on the statistics tables, on the
expert infos without a tree (-z expert) and on every analysis field the
first pass decides (-T fields); -2 adds only what later frames find (acked
in, RTT, lost in, the diagnoses of what never completed).
Exit 0 when all hold, 1 otherwise.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chunktest as ct  # noqa: E402

CAPTURES = {"chunk": "loss-1.pcap", "p2frag": "p2frag-loss-1.pcap", "netgame": "netgame-loss-10.pcap",
            "netcode": "netcode-loss-dup.pcap", "reliable": "reliable-fragments.pcap",
            "yojimbo": "real-yojimbo-loss-plain.pcap"}
# Options a capture needs to be decoded as its protocol (netcode: port 40000
# is chunk's; the key log decrypts, so the analysis sees every type).
OPTIONS = {"netcode": ["-d", "udp.port==40000,netcode",
                       "-o", "netcode.keylog_file:" + os.path.join(ct.REPO, "captures", "netcode-loss-dup.keys")],
           "reliable": ["-d", "udp.port==50000,reliable"],
           # plain reliable packets: yojimbo alone analyses (under netcode,
           # netcode's own preference would take the frames as single pass)
           "yojimbo": ["-d", "udp.port==40000,yojimbo", "-o", "yojimbo.plain_reliable:TRUE",
                       "-o", "yojimbo.channels:uu:8192,ro:10240:1024"]}
# Whose -V output may differ with the preference off (by design, above).
OUTPUT_DIFFERS = {"netgame"}

YJ_SCHEMA = os.path.join(ct.REPO, "docs", "yojimbo-example.schema")
RL_FIRST_PASS = ["reliable.sequence", "reliable.analysis.extended_sequence", "reliable.analysis.acks",
                 "reliable.analysis.lost", "reliable.analysis.lost_frame", "reliable.analysis.duplicate_of",
                 "reliable.analysis.gap", "reliable.analysis.incomplete"]
YJ_FIRST_PASS = ["yojimbo.analysis.reliable_sequence", "yojimbo.analysis.send", "yojimbo.analysis.first_sent_in",
                 "yojimbo.analysis.previous_send", "yojimbo.analysis.sent_after_ack",
                 "yojimbo.analysis.block_progress", "yojimbo.analysis.confirms"]
# Captures whose analysis one pass and -2 must agree on: options, tables,
# first-pass fields. Losses, resends, fragments, a stalled block.
AGREE = {
    "reliable": [("reliable-loss-10.pcap", ["-d", "udp.port==50000,reliable"], ["reliable,conns"], RL_FIRST_PASS),
                 ("reliable-drop-fragment.pcap", ["-d", "udp.port==50000,reliable"], ["reliable,conns"],
                  RL_FIRST_PASS)],
    "yojimbo": [(name + ".pcap", ["-o", "netcode.keylog_file:" + os.path.join(ct.REPO, "captures", name + ".keys"),
                                  "-o", "yojimbo.channels:ro,ro", "-o", "yojimbo.schema_file:" + YJ_SCHEMA],
                 ["reliable,conns", "yojimbo,messages", "yojimbo,blocks"], RL_FIRST_PASS + YJ_FIRST_PASS)
                for name in ("yojimbo-block-lost-fragment", "yojimbo-loss-dup")],
}
# What only the passes after the first show: yojimbo's diagnoses (their
# expert info's fixed summary; the diagnosis is the tree's text).
LATER_PASSES = re.compile(r"^Never acknowledged$")


def counts(cap, extra, before=None):
    """(single-pass packets, analysed packets) of -z chunkshark,single_pass;
    appends to before what tshark printed before them."""
    out = ct.tshark(["-r", cap, "-z", "chunkshark,single_pass"] + extra)
    m = re.search(r"^chunkshark single pass: (\d+) of (\d+) analysed packets", out, re.M)
    if before is not None:
        before.append(out[:m.start()] if m else out)
    if not m:
        raise RuntimeError("no -z chunkshark,single_pass line in the output of tshark %s" % " ".join(extra))
    return int(m.group(1)), int(m.group(2))


def expert_rows(text):
    """The -z expert rows (severity, frequency, group, protocol, summary),
    without those only the passes after the first make."""
    rows, severity = [], None
    for line in text.splitlines():
        m = re.match(r"^(\w+) \(\d+\)$", line)
        if m:
            severity = m.group(1)
            continue
        m = re.match(r"^\s+(\d+)\s+(\S+)\s+(\S+)\s+(.*)$", line)
        if severity and m and not LATER_PASSES.match(m.group(4)):
            rows.append((severity,) + m.groups())
    return sorted(rows)


def passes_agree(proto, failures):
    """One pass and -2 agree on what the first pass decides (AGREE)."""
    for cap, opts, tables, fields in AGREE.get(proto, []):
        path = os.path.join(ct.REPO, "captures", cap)
        zs = [a for t in tables for a in ("-z", t)]
        exp = [expert_rows(ct.tshark(["-r", path, "-q", "-z", "expert"] + opts + extra)) for extra in ([], ["-2"])]
        # The fields and, after them, the tables: one run a pass.
        fl = ["-T", "fields", "-E", "occurrence=a", "-e", "frame.number"] + [a for f in fields for a in ("-e", f)]
        tab, val = [], []
        for extra in ([], ["-2"]):
            lines = ct.tshark(["-r", path] + opts + fl + zs + extra).splitlines(True)
            n = 0
            while n < len(lines) and re.match(r"^\d+(\t|$)", lines[n]):
                n += 1
            val.append("".join(lines[:n]))
            tab.append("".join(lines[n:]))
        for what, pair in (("tables", tab), ("expert infos without a tree", exp), ("first-pass fields", val)):
            ok = pair[0] == pair[1] and pair[0]
            print("%-8s %-32s one pass and -2 %s on the %s" % (proto, cap, "agree" if ok else "DISAGREE", what))
            if not ok:
                failures.append("%s, %s: one pass and -2 disagree on the %s" % (proto, cap, what))


def capture_of(proto):
    """(capture, options) for proto: CAPTURES and OPTIONS, or else the first
    capture its simulator makes (the protocol table, captures/captures.txt),
    with its key log if it has one."""
    if proto in CAPTURES:
        return os.path.join(ct.REPO, "captures", CAPTURES[proto]), OPTIONS.get(proto, [])
    row = [r for r in ct.protocol_table() if r["name"] == proto]
    names = ct.simulator_captures(row[0]["simulator"]) if row and row[0]["simulator"] else []
    if not names:
        return None, []
    base = os.path.join(ct.REPO, "captures", names[0])
    keys = base + ".keys"
    return base + ".pcap", (["-o", "netcode.keylog_file:" + keys] if os.path.exists(keys) else [])


def main():
    failures = []
    prefs = ct.tshark(["-G", "defaultprefs"])
    for proto in ct.plugin_protocols():
        if not re.search(r"^#%s\.single_pass:" % re.escape(proto), prefs, re.M):
            print("%-8s no %s.single_pass preference: keeps its records as Wireshark does" % (proto, proto))
            continue
        cap, opts = capture_of(proto)
        if cap is None:
            failures.append("%s: no capture to check the single pass with (CAPTURES, or a line of its "
                            "simulator in captures/captures.txt)" % proto)
            continue
        off = ["-o", "%s.single_pass:FALSE" % proto]
        # Where the -V output is compared, the runs with columns and with
        # the preference off print it (-V -P) before the counts.
        verbose = [] if proto in OUTPUT_DIFFERS else ["-V", "-P"]
        outputs = {}
        for label, extra, want in (("one pass -q", ["-q"], "all"), ("one pass", verbose, "all"),
                                   ("-2", ["-q", "-2"], "none"), ("single_pass off", (verbose or ["-q"]) + off, "none")):
            single, analysed = counts(cap, opts + extra, outputs.setdefault(label, []))
            ok = analysed > 1 and single == (analysed - 1 if want == "all" else 0)
            print("%-8s %-16s %d of %d analysed packets taken as the single pass%s" % (
                proto, label, single, analysed, "" if ok else "  FAIL"))
            if not ok:
                failures.append("%s, %s: %d of %d packets in the single pass, want %s" % (
                    proto, label, single, analysed, "all but the first" if want == "all" else "none"))
        if verbose:
            if outputs["one pass"] != outputs["single_pass off"] or not outputs["one pass"][0].strip():
                failures.append("%s: -V output differs with %s.single_pass off" % (proto, proto))
        passes_agree(proto, failures)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
