#!/usr/bin/env python3
"""docs/chunkshark.colorfilters (every protocol's rules in one file): every
rule is in the format Wireshark's View > Coloring Rules > Import reads
(@name@filter@[background][foreground], 16-bit RGB, '#' comments), its filter
compiles (tshark -Y) and matches the packets it is for: each rule colours at
least the given number of packets of the capture named below, and a packet
that only a rule placed after it would match is not taken by an earlier one.
A rule not named below compiles on a capture of its protocol (the first its
simulator makes). The rules whose captures take the same options are
counted in one tshark run (-z io,stat, their captures read as one file);
where a filter does not compile, each rule alone names it; ctest architecture.protocol_table checks that every
protocol of dissector/protocols.txt has rules and every rule a protocol.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "p2frag"))
import chunktest as ct  # noqa: E402
import p2fragtest as pt  # noqa: E402

RULE = re.compile(r"^@([^@]+)@([^@]+)@\[(\d+),(\d+),(\d+)\]\[(\d+),(\d+),(\d+)\]$")
FILE = os.path.join(ct.REPO, "docs", "chunkshark.colorfilters")
CAP = os.path.join(ct.REPO, "captures")
KEYS = os.path.join(CAP, "%s.keys")
RELIABLE = ["-d", "udp.port==50000,reliable"]   # captures/captures.txt: reliable-sim's port
# Rule name -> (capture, frames the rule must be the first to match, at
# least, extra tshark arguments).
WANT = {
    "Chunk broken packet": ("crafted", 1, []),
    "Chunk problem": ("fault-drop-slice.pcap", 2, []),
    "Chunk wasted resend": ("loss-10-at-receiver.pcap", 20, []),
    "Chunk resend": ("fault-drop-slice.pcap", 20, []),
    "Chunk complete": ("loss-10-at-receiver.pcap", 4, []),
    "P2frag broken packet": ("crafted-p2frag", 1, []),
    "P2frag lost packet": ("p2frag-loss-10.pcap", 20, []),
    "P2frag too old or duplicate": ("p2frag-dup-reorder.pcap", 5, []),
    "Netgame broken or foreign packet": ("netgame-other-id.pcap", 100, ["-d", "udp.port==30000,netgame"]),
    "Netgame lost packet": ("netgame-loss-10.pcap", 20, []),
    "Netgame duplicate or reordered": ("netgame-dup-reorder.pcap", 50, []),
    "Netgame mode switch": ("netgame-high-rtt.pcap", 5, []),
    "Netcode broken or undecryptable packet": ("netcode-wrong-key.pcap", 20,
                                               ["-o", "netcode.keylog_file:" + KEYS % "netcode-wrong-key"]),
    "Reliable broken packet": ("reliable-clean.pcap", 0, RELIABLE),
    "Reliable lost or stalled": ("reliable-loss-10.pcap", 20, RELIABLE),
    "Reliable duplicate or reordered": ("reliable-dup-reorder.pcap", 50, RELIABLE),
    "Yojimbo broken packet": ("yojimbo-block.pcap", 0, ["-o", "netcode.keylog_file:" + KEYS % "yojimbo-block"]),
    "Yojimbo block never completed": ("yojimbo-stops-acking.pcap", 5,
                                      ["-o", "netcode.keylog_file:" + KEYS % "yojimbo-stops-acking"]),
    "Yojimbo resend": ("yojimbo-loss-dup.pcap", 10, ["-o", "netcode.keylog_file:" + KEYS % "yojimbo-loss-dup"]),
    "Netcode refused or timed out": ("netcode-expired-token.pcap", 20,
                                     ["-o", "netcode.keylog_file:" + KEYS % "netcode-expired-token"]),
    "Netcode duplicate or replay": ("netcode-loss-dup.pcap", 2,
                                    ["-o", "netcode.keylog_file:" + KEYS % "netcode-loss-dup"]),
    "Netcode handshake": ("netcode-clean.pcap", 4, ["-o", "netcode.keylog_file:" + KEYS % "netcode-clean"]),
}

# Captures whose rule counts what their end decides (netgame: a packet less
# than 1 s before the end is lost only when the capture goes on, with any
# traffic, docs/netgame.md "One pass and two"): read last of their file.
READ_LAST = {"netgame-loss-10.pcap"}


def default_want(rule):
    """A rule not in WANT (a protocol's newer rule): it must compile, on the
    first capture of its protocol's simulator (the protocol table), with its
    key log if it has one."""
    proto = rule.split()[0].lower()
    row = [r for r in ct.protocol_table() if r["name"] == proto]
    caps = ct.simulator_captures(row[0]["simulator"]) if row and row[0]["simulator"] else []
    if not caps:
        return "fault-drop-slice.pcap", 0, []
    keys = os.path.join(CAP, caps[0] + ".keys")
    return caps[0] + ".pcap", 0, (["-o", "netcode.keylog_file:" + keys] if os.path.exists(keys) else [])


def frames(pcap, flt, extra):
    out = ct.tshark(["-2", "-r", pcap, "-Y", flt, "-T", "fields", "-e", "frame.number"] + list(extra))
    return set(int(x) for x in out.split())


def io_counts(pcap, filters, extra):
    """How many frames each of filters matches after -2 (one run: -z
    io,stat over the whole capture, its Frames columns)."""
    out = ct.tshark(["-2", "-q", "-r", pcap, "-z", "io,stat,0," + ",".join(filters)] + list(extra))
    rows = [line for line in out.splitlines() if re.match(r"^\|\s*[\d.]+ <> [\d.]+\s*\|", line)]
    if len(rows) != 1:
        raise RuntimeError("tshark -z io,stat printed %d rows of counts, want 1:\n%s" % (len(rows), out))
    cells = [c.strip() for c in rows[0].split("|")[2:] if c.strip()]
    if len(cells) != 2 * len(filters):
        raise RuntimeError("tshark -z io,stat printed %d cells, want %d:\n%s" % (len(cells), 2 * len(filters), out))
    return [int(c) for c in cells[::2]]


def check_alone(F, group, extra):
    """The rules of group one by one (a tshark run each): the frames each
    colours, and first (not matched by an earlier rule on its capture)."""
    taken = {}
    for name, flt, cap, path, least in group:
        try:
            got = frames(path, flt, extra)
        except RuntimeError as e:
            F.check(False, "%s: filter does not compile: %s" % (name, e))
            continue
        first = got - taken.get(path, set())
        F.check(len(first) >= least, "%s: colours %d frames of %s first, want at least %d"
                % (name, len(first), cap, least))
        taken.setdefault(path, set()).update(got)
        print("%-22s %4d frames of %s (%d first)" % (name, len(got), cap, len(first)))


def check_group(F, tmp, group, extra):
    """The rules of group ([(rule, filter, capture, path, least)], in the
    file's order) whose captures take the same options, in one tshark run:
    their captures read as one file (chunktest.concat_captures, each on
    addresses of its own, far apart in time; one of READ_LAST last) when
    there are several, each
    rule's filter counted on its capture's frames, and again without those
    an earlier rule on that capture matches. Where the run fails (a filter
    that does not compile), the rules one by one (check_alone) name it."""
    paths = sorted(set(g[3] for g in group), key=[g[3] for g in group].index)
    last = [p for p in paths if os.path.basename(p) in READ_LAST]
    if len(last) > 1:
        for p in last[1:]:
            check_group(F, tmp, [g for g in group if g[3] == p], extra)
        group = [g for g in group if g[3] not in last[1:]]
        paths = [p for p in paths if p not in last[1:]]
    paths.sort(key=lambda p: p in last)
    if len(paths) > 1 and all(ct.concat_ok(p) for p in paths):
        path = os.path.join(tmp, "group-%d.pcap" % len(os.listdir(tmp)))
        span = {p: "frame.number >= %d && frame.number <= %d" % (a, b)
                for p, a, b in ct.concat_captures(paths, path)}
    elif len(paths) > 1:
        for p in paths:
            check_group(F, tmp, [g for g in group if g[3] == p], extra)
        return
    else:
        path, span = paths[0], {paths[0]: "frame.number >= 1"}
    filters = []
    for i, (name, flt, cap, p, least) in enumerate(group):
        earlier = ["(%s)" % g[1] for g in group[:i] if g[3] == p]
        mine = "(%s) && %s" % (flt, span[p])
        filters += [mine, mine + (" && !(%s)" % " || ".join(earlier) if earlier else "")]
    try:
        counts = io_counts(path, filters, extra)
    except RuntimeError as e:
        print("%s: the rules' filters together: %s; each alone:" % (", ".join(g[0] for g in group),
                                                                   str(e).splitlines()[0][-200:]))
        check_alone(F, group, extra)
        return
    for (name, flt, cap, p, least), got, first in zip(group, counts[::2], counts[1::2]):
        F.check(first >= least, "%s: colours %d frames of %s first, want at least %d" % (name, first, cap, least))
        print("%-22s %4d frames of %s (%d first)" % (name, got, cap, first))


def main():
    F = ct.Failures()
    rules = []
    with open(FILE) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            m = RULE.match(line)
            if not F.check(m, "line %d is not a colouring rule: %r" % (n, line)):
                continue
            F.check(all(int(c) <= 65535 for c in m.groups()[2:]), "line %d: colour over 65535" % n)
            rules.append((m.group(1), m.group(2)))
    missing = sorted(set(WANT) - set(r for r, _ in rules))
    F.check(not missing, "rules %s are gone from the file" % missing)
    with ct.scratch_dir() as tmp:
        crafted = os.path.join(tmp, "crafted.pcap")
        good = ct.seal(ct.slice_body(1, 0, 2, bytes(ct.SLICE_SIZE)))
        ct.write_pcap(crafted, [good, bytes([good[0] ^ 1]) + good[1:]])
        # A fragment packet whose end check is wrong (its CRC right, so the
        # heuristic finds it).
        crafted_p2frag = os.path.join(tmp, "crafted-p2frag.pcap")
        ct.write_pcap(crafted_p2frag, [pt.packet_a(5, 1, 2, 3, end_check=b"\x00\x00\x00\x00")])
        paths = {"crafted": crafted, "crafted-p2frag": crafted_p2frag}
        # One tshark run for the rules whose captures take the same options
        # (the netcode and yojimbo captures each their own key log).
        groups = {}
        for name, flt in rules:
            cap, least, extra = WANT.get(name) or default_want(name)
            path = paths.get(cap) or os.path.join(CAP, cap)
            groups.setdefault(tuple(extra), []).append((name, flt, cap, path, least))
        with ct.scratch_dir() as work:
            for extra, group in groups.items():
                check_group(F, work, group, list(extra))
    F.finish("test_colorfilters")


if __name__ == "__main__":
    main()
