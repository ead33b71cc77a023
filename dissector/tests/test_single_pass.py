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
The captures of CAPTURES are read as one file (one tshark run for each of
the four ways above, every protocol's preference off in the last): in one
pass every analysed packet but the file's first is taken, each protocol
decodes more than one packet of its capture and the analysed packets are
as many as all decoded; where those counts fail, each capture alone names
the protocol. Likewise each group of AGREE is one file; the fields name
their capture, and where the tables or expert infos of a group disagree,
each capture alone names the one.
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
# The captures of CAPTURES are read as one file (chunktest.concat_captures,
# each on addresses of its own), netcode's first: its analysis checks the
# connect tokens' expiry against the capture's time, which only the first
# capture keeps, with its addresses, and the request's destination against
# the token's server address (its port too). The UDP ports the others are
# moved to (chunktest.ethernet_copy) so that each Decode As below takes its
# own capture only: netcode's server port 40000 is chunk's and p2frag's, and
# yojimbo's too, and 50000, the others' client port, is reliable's.
ORDER = ["netcode", "chunk", "p2frag", "netgame", "reliable", "yojimbo"]
MOVE = {"chunk": {40000: 43000}, "p2frag": {40000: 44000}, "reliable": {50000: 52000, 50001: 52001},
        "yojimbo": {40000: 42000}}
# Options a capture needs to be decoded as its protocol (netcode: port 40000
# is chunk's; the key log decrypts, so the analysis sees every type).
OPTIONS = {"chunk": ["-d", "udp.port==43000,chunk"], "p2frag": ["-d", "udp.port==44000,p2frag"],
           "netcode": ["-d", "udp.port==40000,netcode",
                       "-o", "netcode.keylog_file:" + os.path.join(ct.REPO, "captures", "netcode-loss-dup.keys")],
           "reliable": ["-d", "udp.port==52000,reliable"],
           # plain reliable packets: yojimbo alone analyses (under netcode,
           # netcode's own preference would take the frames as single pass)
           "yojimbo": ["-d", "udp.port==42000,yojimbo", "-o", "yojimbo.plain_reliable:TRUE",
                       "-o", "yojimbo.channels:uu:8192,ro:10240:1024"]}
# The line a protocol's tree starts with in -V output: the frames of its
# capture that it decoded.
TREE = {"chunk": r"Chunk Protocol ", "p2frag": r"Packet Fragmentation and Reassembly ", "netgame": r"Netgame ",
        "netcode": r"netcode 1\.02 ", "reliable": r"Reliable \(", "yojimbo": r"yojimbo "}
# Whose -V output may differ with the preference off (by design, above).
OUTPUT_DIFFERS = {"netgame"}

YJ_SCHEMA = os.path.join(ct.REPO, "docs", "yojimbo-example.schema")
RL_FIRST_PASS = ["reliable.sequence", "reliable.analysis.extended_sequence", "reliable.analysis.acks",
                 "reliable.analysis.lost", "reliable.analysis.lost_frame", "reliable.analysis.duplicate_of",
                 "reliable.analysis.gap", "reliable.analysis.incomplete"]
YJ_FIRST_PASS = ["yojimbo.analysis.reliable_sequence", "yojimbo.analysis.send", "yojimbo.analysis.first_sent_in",
                 "yojimbo.analysis.previous_send", "yojimbo.analysis.sent_after_ack",
                 "yojimbo.analysis.block_progress", "yojimbo.analysis.confirms"]
# Captures whose analysis one pass and -2 must agree on: protocol, capture,
# options, tables, first-pass fields. Losses, resends, fragments, a stalled
# block. Each group is read as one file (concat_captures), a yojimbo
# capture first (the tokens' expiry, above), reliable's moved off its port
# 50000, the yojimbo captures' client port.
RL_MOVE = {50000: 52000, 50001: 52001}
RL_AGREE = [("reliable", name + ".pcap", RL_MOVE, ["-d", "udp.port==52000,reliable"], ["reliable,conns"],
             RL_FIRST_PASS) for name in ("reliable-loss-10", "reliable-drop-fragment")]
AGREE = [[("yojimbo", name + ".pcap", {},
           ["-o", "netcode.keylog_file:" + os.path.join(ct.REPO, "captures", name + ".keys"),
            "-o", "yojimbo.channels:ro,ro", "-o", "yojimbo.schema_file:" + YJ_SCHEMA],
           ["reliable,conns", "yojimbo,messages", "yojimbo,blocks"], RL_FIRST_PASS + YJ_FIRST_PASS)] + rl
         for name, rl in (("yojimbo-block-lost-fragment", RL_AGREE), ("yojimbo-loss-dup", []))]
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


def merged_options(opts_list, what):
    """The options of several captures read as one file; an -o given twice
    must say the same."""
    out, seen = [], {}
    for opts in opts_list:
        for flag, value in zip(opts[::2], opts[1::2]):
            if flag == "-o":
                key = value.split(":", 1)[0]
                if seen.setdefault(key, value) != value:
                    raise RuntimeError("%s: -o %s and -o %s cannot be read as one file" % (what, seen[key], value))
                if out.count(value):
                    continue
            out += [flag, value]
    return out


def agree_run(path, opts, tables, fields):
    """One pass and -2 of path: [expert rows without a tree], [(frame number,
    first-pass fields line)], [tables text], each (one pass, -2)."""
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
        val.append([(int(line.split("\t")[0]), line) for line in lines[:n]])
        tab.append("".join(lines[n:]))
    return exp, val, tab


def passes_agree(group, tmp, failures):
    """One pass and -2 agree on what the first pass decides (AGREE), for a
    group of captures read as one file; where the tables or expert infos of
    the whole disagree, each capture alone names the one that does."""
    copies = [ct.ethernet_copy(os.path.join(ct.REPO, "captures", cap), os.path.join(tmp, "agree-%s" % cap), move,
                               0 if i == 0 else None) for i, (_, cap, move, _, _, _) in enumerate(group)]
    path = os.path.join(tmp, "agree.pcap")
    spans = ct.concat_captures(copies, path)
    opts = merged_options([g[3] for g in group], ", ".join(g[1] for g in group))
    tables = [t for i, g in enumerate(group) for t in g[4] if t not in [u for h in group[:i] for u in h[4]]]
    fields = [f for i, g in enumerate(group) for f in g[5] if f not in [u for h in group[:i] for u in h[5]]]
    exp, val, tab = agree_run(path, opts, tables, fields)
    whole = {"tables": tab[0] == tab[1] and tab[0], "expert infos without a tree": exp[0] == exp[1] and exp[0]}
    for (proto, cap, move, copts, ctables, cfields), copy, (_, first, last) in zip(group, copies, spans):
        mine = [[line for n, line in v if first <= n <= last] for v in val]
        result = {"first-pass fields": mine[0] == mine[1] and mine[0]}
        if not all(whole.values()):
            cexp, _, ctab = agree_run(copy, copts, ctables, cfields)
            result["tables"] = ctab[0] == ctab[1] and ctab[0]
            result["expert infos without a tree"] = cexp[0] == cexp[1] and cexp[0]
        else:
            result.update(whole)
        for what in ("tables", "expert infos without a tree", "first-pass fields"):
            ok = result[what]
            print("%-8s %-32s one pass and -2 %s on the %s" % (proto, cap, "agree" if ok else "DISAGREE", what))
            if not ok:
                failures.append("%s, %s: one pass and -2 disagree on the %s" % (proto, cap, what))
    for what, ok in whole.items():
        if not ok and not any(what in f for f in failures):
            failures.append("%s: one pass and -2 disagree on the %s of them read as one file, not of each alone"
                            % (", ".join(g[1] for g in group), what))


def capture_of(proto, tmp, first=False):
    """(capture, options) for proto: CAPTURES (moved, MOVE; first: to be
    the first of concat_captures, keeping its addresses) and OPTIONS, or
    else the first capture its simulator makes (the protocol table,
    captures/captures.txt), with its key log if it has one."""
    if proto in CAPTURES:
        return (ct.ethernet_copy(os.path.join(ct.REPO, "captures", CAPTURES[proto]),
                                 os.path.join(tmp, CAPTURES[proto]), MOVE.get(proto), 0 if first else None),
                OPTIONS.get(proto, []))
    row = [r for r in ct.protocol_table() if r["name"] == proto]
    names = ct.simulator_captures(row[0]["simulator"]) if row and row[0]["simulator"] else []
    if not names:
        return None, []
    base = os.path.join(ct.REPO, "captures", names[0])
    keys = base + ".keys"
    return base + ".pcap", (["-o", "netcode.keylog_file:" + keys] if os.path.exists(keys) else [])


CONFIGS = (("one pass -q", ["-q"], "all"), ("one pass", ["-V", "-P"], "all"),
           ("-2", ["-q", "-2"], "none"), ("single_pass off", ["-V", "-P"], "none"))


def frames_of(text):
    """{frame number: its -V -P text (summary line and tree)}."""
    lines = text.splitlines(True)
    starts = []
    for i, line in enumerate(lines):
        m = re.match(r"^Frame (\d+): ", line)
        if m:
            summary = i and re.match(r"^\s*%s\s" % m.group(1), lines[i - 1])
            starts.append((int(m.group(1)), i - 1 if summary else i))
    ends = [at for _, at in starts[1:]] + [len(lines)]
    return {n: "".join(lines[at:end]) for (n, at), end in zip(starts, ends)}


def check_counts(protos, path, opts, failures, label_of=lambda ps: ps[0]):
    """The four runs of CONFIGS over path (the captures of protos), with
    every protocol's preference off in the last: the counts, and the -V
    output with the preference on and off. Returns {label: (single,
    analysed, output before the counts)}."""
    off = [a for p in protos for a in ("-o", "%s.single_pass:FALSE" % p)]
    got = {}
    for label, extra, want in CONFIGS:
        before = []
        single, analysed = counts(path, opts + extra + (off if label == "single_pass off" else []), before)
        ok = analysed > 1 and single == (analysed - 1 if want == "all" else 0)
        got[label] = (single, analysed, before[0], ok)
        print("%-8s %-16s %d of %d analysed packets taken as the single pass%s" % (
            label_of(protos), label, single, analysed, "" if ok else "  FAIL"))
    return got


def check_alone(proto, cap, opts, failures, decoded=None):
    """The counts and the -V output of proto's capture alone; with decoded
    (how many of its packets proto decoded), that every one was analysed."""
    got = check_counts([proto], cap, opts, failures)
    for label, extra, want in CONFIGS:
        single, analysed, _, ok = got[label]
        if not ok:
            failures.append("%s, %s: %d of %d packets in the single pass, want %s" % (
                proto, label, single, analysed, "all but the first" if want == "all" else "none"))
        elif decoded is not None and analysed != decoded:
            failures.append("%s, %s: %d packets analysed of the %d it decoded" % (proto, label, analysed, decoded))
    if proto not in OUTPUT_DIFFERS:
        if got["one pass"][2] != got["single_pass off"][2] or not got["one pass"][2].strip():
            failures.append("%s: -V output differs with %s.single_pass off" % (proto, proto))


def check_together(protos, tmp, failures):
    """The captures of protos (CAPTURES) read as one file: every analysed
    packet but the file's first taken as the single pass in one pass, none
    with -2 or the preferences off; each protocol decoded more than one of
    its capture's packets, and analysed every one it decoded (the analysed
    packets are as many as all decoded); the -V output of those that do not
    differ by design (OUTPUT_DIFFERS) the same with the preferences off.
    Where the counts of the whole fail, each capture alone names the
    protocol."""
    caps = [capture_of(p, tmp, i == 0) for i, p in enumerate(protos)]
    path = os.path.join(tmp, "single-pass.pcap")
    spans = ct.concat_captures([c for c, _ in caps], path)
    opts = merged_options([o for _, o in caps], "the captures of " + ", ".join(protos))
    got = check_counts(protos, path, opts, failures, lambda ps: "all")
    on, off = frames_of(got["one pass"][2]), frames_of(got["single_pass off"][2])
    decoded = {}
    for proto, (_, first, last) in zip(protos, spans):
        mine = range(first, last + 1)
        decoded[proto] = sum(1 for n in mine if re.search(r"^" + TREE[proto], on.get(n, ""), re.M))
        print("%-8s %s: %d of its %d packets decoded as %s" % (proto, CAPTURES[proto], decoded[proto], len(mine),
                                                               proto))
        if decoded[proto] < 2:
            failures.append("%s, %s: %d of its packets decoded as %s, want more than one" % (
                proto, CAPTURES[proto], decoded[proto], proto))
        if proto not in OUTPUT_DIFFERS:
            differ = [n for n in mine if on.get(n) != off.get(n)]
            if differ or not any(on.get(n, "").strip() for n in mine):
                failures.append("%s, %s: -V output differs with %s.single_pass off (its frame %s)" % (
                    proto, CAPTURES[proto], proto,
                    ct.ranges([n - first + 1 for n in differ][:20]) + (", ..." if len(differ) > 20 else "")
                    if differ else "none printed"))
    if len(on) != spans[-1][2] or set(on) != set(off):
        failures.append("-V output: %d frames printed with the preferences on, %d off, want %d" % (
            len(on), len(off), spans[-1][2]))
    total = sum(decoded.values())
    bad = ["%s %d of %d" % (label, s, a) for label, (s, a, _, ok) in got.items() if not ok or a != total]
    if bad:
        print("all: %d packets decoded by the protocols; the counts of the whole: %s; each alone:" % (
            total, "; ".join(bad)))
        before = len(failures)
        for proto, (cap, opts) in zip(protos, caps):
            check_alone(proto, cap, opts, failures, decoded[proto])
        if len(failures) == before:
            failures.append("single-pass counts of %s read as one file (%d packets decoded) fail, of each "
                            "alone not: %s" % (", ".join(protos), total, "; ".join(bad)))


def main():
    failures = []
    prefs = ct.tshark(["-G", "defaultprefs"])
    together = []
    with ct.scratch_dir() as tmp:
        for proto in ct.plugin_protocols():
            if not re.search(r"^#%s\.single_pass:" % re.escape(proto), prefs, re.M):
                print("%-8s no %s.single_pass preference: keeps its records as Wireshark does" % (proto, proto))
                continue
            if proto in CAPTURES and proto in TREE:
                together.append(proto)
                continue
            cap, opts = capture_of(proto, tmp)
            if cap is None:
                failures.append("%s: no capture to check the single pass with (CAPTURES, or a line of its "
                                "simulator in captures/captures.txt)" % proto)
                continue
            check_alone(proto, cap, opts, failures)
        together.sort(key=lambda p: ORDER.index(p) if p in ORDER else len(ORDER))
        if together:
            check_together(together, tmp, failures)
        for group in AGREE:
            passes_agree(group, tmp, failures)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
