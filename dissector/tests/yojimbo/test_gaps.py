#!/usr/bin/env python3
"""Decoding goes on after datagrams the capture missed: every committed
yojimbo-sim capture made with --capture-drop (a capture's kernel drops: 10,
300, 3 000 and 40 000 datagrams, both directions or one, across the reliable
sequence's wrap) or --capture-from (begun 1 000 and 100 000 datagrams into
the session, without the handshake), decoded with its key log, in one pass
and with -2:
  - every netcode payload packet is decrypted, and every decrypted payload
    carries a reliable and a yojimbo layer; after --capture-from, all but the
    first payload of each direction (one payload alone cannot tell a reliable
    header from other bytes: the heuristic takes a direction from its second);
  - the reliable analysis shows the gap where it is: "Packets not captured"
    (reliable.analysis.not_captured) for each direction that lost packets,
    on one frame of the other direction (whose ack reveals them) within the
    gap or the first frames after it, and nowhere else;
  - no reliable or yojimbo warning or error: the packets acknowledged in
    datagrams the capture missed are not lost, the peer's ack is not stuck.
The protocol id is given (netcode.protocol_ids) for the mid-session starts,
which lack the connection request that names it.

usage: test_gaps.py [NAME ...]   (default: every such capture in captures.txt)
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y

PROTOCOL_ID = "0x1122334455667788"
# The first frames after a gap in which its note must be.
NOTE_WITHIN = 4


def gap_captures():
    out = []
    with open(os.path.join(y.CAPTURES, "captures.txt")) as f:
        for line in f:
            p = line.split()
            if len(p) > 1 and p[1] == "yojimbo-sim" and any(o in p for o in ("--capture-drop", "--capture-from")):
                out.append(p[0])
    return out


def decode(name, two_pass):
    base = os.path.join(y.CAPTURES, name)
    args = ["-r", base + ".pcap", "-o", "netcode.keylog_file:" + base + ".keys",
            "-o", "netcode.protocol_ids:" + PROTOCOL_ID] + (["-2"] if two_pass else [])
    rows = y.tshark(args + ["-T", "fields", "-E", "separator=/t", "-e", "frame.number", "-e", "ip.src",
                            "-e", "netcode.type", "-e", "netcode.payload_len", "-e", "frame.protocols",
                            "-e", "reliable.analysis.not_captured"]).stdout
    frames = []
    for line in rows.splitlines():
        v = line.split("\t") + [""] * 6
        frames.append({"n": int(v[0]), "src": v[1], "type": v[2], "payload": v[3] != "",
                       "layers": v[4].split(":"), "not_captured": v[5]})
    # the Errors and Warns sections of -z expert, reliable's and yojimbo's rows
    severities = {}
    section = None
    for line in y.tshark(args + ["-q", "-z", "expert"]).stdout.splitlines():
        s = re.match(r"^(Errors|Warns|Notes|Chats|Comments) \(\d+\)", line)
        if s:
            section = s.group(1)
            continue
        m = re.match(r"^\s+(\d+)\s+\S+\s+(Reliable|yojimbo)\s+(.*)$", line)
        if m and section in ("Errors", "Warns"):
            severities[(m.group(2), m.group(3))] = section
    return frames, severities


def check(c, name):
    truth = json.load(open(os.path.join(y.CAPTURES, name + ".truth.json")))
    cap = truth["capture"]
    c.true("%s: the truth file records left-out datagrams" % name, cap.get("not_captured", 0) > 0, cap)
    for two_pass in (False, True):
        what = "%s%s" % (name, " -2" if two_pass else "")
        frames, warnings = decode(name, two_pass)
        c.eq(what + ": frames", len(frames), cap["frames"])
        payload_type = [f for f in frames if f["type"] == "5"]
        decrypted = [f for f in frames if f["payload"]]
        c.eq(what + ": every netcode payload packet decrypted", len(decrypted), len(payload_type))
        c.true(what + ": payload packets", len(decrypted) > 1000, len(decrypted))
        # after a mid-session start, the first payload of each direction is not claimed
        skip = set()
        if cap.get("capture_from", 1) > 1:
            for src in sorted({f["src"] for f in decrypted}):
                skip.add(next(f["n"] for f in decrypted if f["src"] == src))
        no_rl = [f["n"] for f in decrypted if f["n"] not in skip and "reliable" not in f["layers"]]
        no_yj = [f["n"] for f in decrypted if f["n"] not in skip and "yojimbo" not in f["layers"]]
        c.eq(what + ": decrypted payloads without a reliable layer", no_rl[:5], [])
        c.eq(what + ": decrypted payloads without a yojimbo layer", no_yj[:5], [])
        notes = [(f["n"], f["src"], int(f["not_captured"])) for f in frames if f["not_captured"]]
        want_dirs = set()
        for d in cap.get("capture_drops", []):
            after = d["first_frame_after"]
            c.true(what + ": the drop at %d ended within the capture" % d["start"], after is not None, d)
            if after is None:
                continue
            dirs = {"both": {"a", "b"}, "a_to_b": {"a"}, "b_to_a": {"b"}}[d["link"]]
            want_dirs |= dirs
            # a note of each direction that lost packets (shown on a frame of
            # the other: the one whose ack reveals them) within the gap (a
            # one-way gap has frames of the other direction) or just after it
            before = d["last_frame_before"] or 0
            for lost in dirs:
                host = truth["endpoints"]["b" if lost == "a" else "a"].split(":")[0]
                near = [n for n in notes if n[1] == host and before < n[0] < after + NOTE_WITHIN]
                c.eq(what + ": one 'Packets not captured' for %s's packets in frames %d-%d"
                     % (lost, before + 1, after + NOTE_WITHIN - 1), len(near), 1)
                if near:
                    c.true(what + ": its count is of the packets left out", 0 < near[0][2] <= d["dropped"], near)
        c.eq(what + ": 'Packets not captured' notes", len(notes), len(want_dirs))
        c.eq(what + ": reliable and yojimbo warnings and errors", sorted(warnings), [])


def main():
    names = sys.argv[1:] or gap_captures()
    c = y.Checks("yojimbo.gaps")
    if not sys.argv[1:]:
        c.true("gap captures found", len(names) >= 7, names)
    for name in names:
        before = c.failed
        check(c, name)
        print("%s: %s" % (name, "ok" if c.failed == before else "%d failed" % (c.failed - before)))
    c.done()


if __name__ == "__main__":
    main()
