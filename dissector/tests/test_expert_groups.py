#!/usr/bin/env python3
"""tshark -q -z expert lists one group per kind of expert info.

tshark's expert table and the GUI's Expert Information dialog group expert
infos by their summary text. A summary holding a frame, sequence or id
number makes one row per packet: an hour-long capture then lists hundreds of
thousands of rows, and building the table grows faster than the capture.
Every expert info of the plugin has a fixed summary per kind (its registered
text, as TCP's "Previous segment not captured"); the numbers are in the
packet tree (<protocol>.expert.detail and the analysis fields).

For every committed capture (with its key log, and the preferences its
protocol's tests use), in one pass and with -2 (the captures decoded alike
read in one file, one after the other):

- every row of a protocol of the plugin has a summary that is one of that
  protocol's registered expert summaries (tshark -G fields);
- no two rows of the same severity, group and protocol differ only in their
  numbers (digits, hex ids);

and across all captures, every protocol of the plugin has rows (the check
looked at each). The netgame id not in netgame.protocol_ids is one row, and
its detail names the id and the preference to add it to. Before the fixed summaries (commit "expert infos: a fixed
summary per kind ...") rows such as "Resend 1 of slice 3 of chunk 0
(previous send frame 4)." failed both checks.
"""
import collections
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chunktest as ct  # noqa: E402

PROTOCOLS = tuple(ct.plugin_protocols())   # dissector/protocols.txt, as the build has it
SECTION = re.compile(r"^(Errors|Warns|Notes|Chats|Comments) \((\d+)\)$")
ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s+(.*)$")
NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+")
SOAK = ["-o", "yojimbo.channels:uu:8192,ro:10240:1024", "-o", "yojimbo.message_types:4"]


def capture_args(path):
    """The decode a capture's own tests use: its key log, the dissector its
    simulator's port needs, the real soak captures' configuration."""
    name = os.path.basename(path).rsplit(".", 1)[0]
    args = []
    keys = os.path.join(ct.REPO, "captures", name + ".keys")
    if os.path.exists(keys):
        args += ["-o", "netcode.keylog_file:" + keys]
    if name.startswith("netcode-"):
        args += ["-d", "udp.port==40000,netcode"]
    elif name.startswith("reliable-"):
        args += ["-d", "udp.port==50000,reliable"]
    elif name == "netgame-wrap-31":
        args += ["-o", "netgame.max_sequence:31"]
    elif name.startswith("real-yojimbo-") and name != "real-yojimbo-cs":
        args += SOAK
        if name.endswith("-plain"):
            args += ["-d", "udp.port==40000,yojimbo", "-o", "yojimbo.plain_reliable:TRUE"]
        else:
            args += ["-o", "netcode.private_key:" + "00" * 32]
    return args


def registered():
    """{protocol filter name: {summary}} of the plugin's expert infos: each
    is registered as an FT_NONE field whose name is its summary."""
    out = collections.defaultdict(set)
    for line in ct.tshark(["-G", "fields"]).splitlines():
        r = line.split("\t")
        if len(r) > 4 and r[0] == "F" and r[3] == "FT_NONE" and r[4] in PROTOCOLS:
            out[r[4]].add(r[1])
    return out


def short_names():
    """{protocol short name, as -z expert prints it: filter name}."""
    out = {}
    for line in ct.tshark(["-G", "protocols"]).splitlines():
        r = line.split("\t")
        if len(r) > 2 and r[2] in PROTOCOLS:
            out[r[1]] = r[2]
    return out


def expert_rows(out):
    """[(severity section, group, protocol, summary)] of -z expert's table."""
    rows = []
    section = None
    for line in out.splitlines():
        m = SECTION.match(line)
        if m:
            section = m.group(1)
            continue
        if section is None or not line.strip() or line.startswith("=") or "Frequency" in line:
            continue
        m = ROW.match(line)
        if m:
            rows.append((section, m.group(2), m.group(3), m.group(4)))
    return rows


def netgame_unexpected_id(F):
    """An id not in netgame.protocol_ids (Decode As of netgame-other-id.pcap):
    one row for every frame, and each frame's detail names the id and the
    preference to add it to."""
    cap = os.path.join(ct.REPO, "captures", "netgame-other-id.pcap")
    da = ["-d", "udp.port==30000,netgame"]
    rows = expert_rows(ct.tshark(["-r", cap, "-q", "-z", "expert"] + da))
    mine = [r for r in rows if r[3] == "Protocol id not in the netgame.protocol_ids preference"]
    F.check(len(mine) == 1 and mine[0][:3] == ("Warns", "Protocol", "Netgame"), "netgame-other-id: rows %s" % rows)
    details = ct.tshark(["-r", cap, "-T", "fields", "-e", "netgame.expert.detail"] + da).splitlines()
    want = ("Protocol id 0x11112222 is not in the netgame.protocol_ids preference: add 0x11112222 there if it is "
            "this game's")
    F.check(details and all(want in d for d in details), "netgame-other-id: details %s" % sorted(set(details))[:3])


def check_capture(F, cap, args, extra, names, summaries, seen, label=None):
    """The rows of -z expert of cap read with args and extra: each a
    registered summary of its protocol, none differing from another only in
    numbers; adds the protocols of the plugin that had rows to seen."""
    label = "%s%s" % (label or os.path.basename(cap), " -2" if extra else "")
    rows = expert_rows(ct.tshark(extra + ["-r", cap, "-q", "-z", "expert"] + args))
    kinds = collections.defaultdict(set)
    for section, group, proto, summary in rows:
        filt = names.get(proto)
        if filt is None:
            continue   # another protocol's (UDP, IP, ...)
        seen.add(filt)
        F.check(summary in summaries[filt], "%s: %s %s row %r is not one of %s's expert summaries"
                % (label, section, group, summary, filt))
        kinds[(section, group, filt, NUMBER.sub("#", summary))].add(summary)
    for (section, group, filt, skeleton), texts in sorted(kinds.items()):
        F.check(len(texts) == 1, "%s: %s %s %s: %d rows differ only in numbers, e.g. %s"
                % (label, section, group, filt, len(texts), sorted(texts)[:3]))


def main():
    F = ct.Failures()
    summaries = registered()
    F.check(set(summaries) == set(PROTOCOLS), "expert infos registered by %s" % sorted(summaries))
    names = short_names()
    seen = set()
    caps = sorted(glob.glob(os.path.join(ct.REPO, "captures", "*.pcap")) +
                  glob.glob(os.path.join(ct.REPO, "captures", "*.pcapng")))
    # The captures decoded alike (the same options, no key log of their
    # own, classic Ethernet pcaps) are read in one file (chunktest.concat_captures:
    # each capture's addresses its own); when its rows fail, each of them
    # is read alone to name the capture.
    groups = collections.OrderedDict()
    for cap in caps:
        args = capture_args(cap)
        alike = ct.concat_ok(cap) and not any(a.startswith("netcode.keylog_file:") for a in args)
        groups.setdefault((tuple(args), alike) if alike else (cap,), []).append(cap)
    with ct.scratch_dir() as tmp:
        for key, members in groups.items():
            args = capture_args(members[0])
            merged = os.path.join(tmp, "alike.pcap")
            if len(members) > 1:
                ct.concat_captures(members, merged)
            for extra in ([], ["-2"]):
                if len(members) == 1:
                    check_capture(F, members[0], args, extra, names, summaries, seen)
                    continue
                G = ct.Failures()
                check_capture(G, merged, args, extra, names, summaries, seen,
                              "%d captures (%s ...) in one file" % (len(members), os.path.basename(members[0])))
                if G.items:
                    n = len(F.items)
                    for cap in members:
                        check_capture(F, cap, args, extra, names, summaries, seen)
                    if len(F.items) == n:
                        F.items += G.items
    F.check(seen == set(PROTOCOLS), "no expert rows for %s in any capture" % sorted(set(PROTOCOLS) - seen))
    netgame_unexpected_id(F)
    F.finish("test_expert_groups")


if __name__ == "__main__":
    main()
