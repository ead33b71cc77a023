#!/usr/bin/env python3
"""yojimbo.flow: the Flow Graph of blocks (tshark -z flow,yojimbo,network)
against the yojimbo-sim truth files of yojimbo-block.pcap,
yojimbo-block-lost-fragment.pcap and yojimbo-loss-dup.pcap (captured at the
client, which sends the blocks): every send of a block fragment is an arrow
from the client at the truth's send time, "Block <id> (channel <ch>):
fragment <f> of <n>", its n-th send "(resend n-1)"; every fragment the
truth says the client learnt acked is named by exactly one arrow back from
the server at that time, "Acks block <id> fragment(s) <ranges> (<k>/<n>
acked)", the block's last one ", block complete"; a fragment never acked
(the dropped one) is named by none. Packets with messages only are no
arrows.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import flowtest as ft  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_truth import prefs_of  # noqa: E402

SEND = re.compile(r"^Block (\d+) \(channel (\d+)\): fragment (\d+) of (\d+)(?: \(resend (\d+)\))?$")
ACK = re.compile(r"^Acks block (\d+) fragments? ([\d,-]+) \((\d+)/(\d+) acked(, block complete)?\)$")


def expand(ranges):
    out = []
    for r in ranges.split(","):
        lo, _, hi = r.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def check(F, name):
    with open(ft.capture(name + ".truth.json")) as f:
        t = json.load(f)
    arrows = ft.flow(ft.capture(name + ".pcap"), "yojimbo", prefs_of(t, ft.capture(name + ".keys")))
    blocks = [i for i in t["items"] if i["kind"] == "block"]
    F.check(t["capture"]["at"] == "a" and blocks and all(b["from"] == "client" for b in blocks),
            "%s: the test expects blocks sent by the capturing client" % name)
    sends, acks = [], []
    for a in arrows:
        for part in a["comment"].split("; "):
            m, n = SEND.match(part), ACK.match(part)
            if m:
                F.check(a["dir"] == "->", "%s %s: fragment sent %s" % (name, a["time"], a["dir"]))
                sends.append((a["time"], int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)),
                              int(m.group(5) or 0)))
            elif n:
                F.check(a["dir"] == "<-", "%s %s: ack %s" % (name, a["time"], a["dir"]))
                for frag in expand(n.group(2)):
                    acks.append((a["time"], int(n.group(1)), frag, int(n.group(3)), int(n.group(4)),
                                 bool(n.group(5))))
            else:
                F.check(False, "%s %s: comment part %r" % (name, a["time"], part))
    want_sends, want_acks = [], []
    for b in blocks:
        count = {}
        for s in b["sends"]:
            f = s["fragment"]
            want_sends.append(("%.6f" % s["time"], b["id"], b["channel"], f, b["fragments"], count.get(f, 0)))
            count[f] = count.get(f, 0) + 1
        acked = sorted((tm, f) for f, tm in enumerate(b["fragments_acked"]) if tm is not None)
        for k, (tm, f) in enumerate(acked):
            upto = sum(1 for tm2, _ in acked if tm2 <= tm)
            want_acks.append(("%.6f" % tm, b["id"], f, upto, b["fragments"], upto == b["fragments"]))
    F.check(sorted(sends) == sorted(want_sends), "%s: fragment sends %r, truth %r" % (name, sends, want_sends))
    F.check(sorted(acks) == sorted(want_acks), "%s: fragment acks %r, truth %r" % (name, acks, want_acks))


def main():
    F = ft.Failures()
    for name in ("yojimbo-block", "yojimbo-block-lost-fragment", "yojimbo-loss-dup"):
        check(F, name)
    F.finish("yojimbo.flow")


if __name__ == "__main__":
    main()
