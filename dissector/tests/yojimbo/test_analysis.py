#!/usr/bin/env python3
"""The analysis on a hand-made exchange (reliable header + connection packet
on UDP, yojimbo.plain_reliable), every value worked out by hand:

  1  A seq 0: messages 10, 11          7  B seq 1 acks A seq 3 (fragment 0)
  2  A seq 1: messages 10, 11 again    8  A seq 5: block 5 fragment 1 again
  3  B seq 0 acks A seq 1 only         9  B seq 2 acks A seq 3 again (nothing new)
  4  A seq 2: message 10 again        10  A seq 6: message 12        (t = 2 s)
  5  A seq 3: block 5 fragment 0/2    11  B seq 3 acks A seq 6 only  (t = 2.01 s)
  6  A seq 4: block 5 fragment 1/2

Messages 10 and 11 are acknowledged in frame 3 (through seq 1), message 10
is sent after that ack in frame 4; fragment 0 is acknowledged in 7, fragment
1 never: the block never completes and its last send (frame 8) carries the
diagnosis that the peer went on acknowledging later packets (seq 6, after
the block's first packet, seq 3), and that no
fragment was acknowledged in the last 1.95 s (frame 7 at 0.06 s to the end
at 2.01 s). One pass and
two, the expert infos the same with a tree (-V) and without (-z expert)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y

W = y.Writer
H = y.reliable_header


msgs = y.message_payload
frag = y.block_fragment


EMPTY = W().int_(0, 0, 2).data()


def main():
    c = y.Checks("yojimbo.analysis")
    d = y.tmpdir()
    pk = [
        (H(0, 0, 0) + msgs([10, 11]), False, 0.00),
        (H(1, 0, 0) + msgs([10, 11]), False, 0.01),
        (H(0, 1, 0x1) + EMPTY, True, 0.02),
        (H(2, 0, 0) + msgs([10]), False, 0.03),
        (H(3, 0, 0) + frag(0, b"\x01" * 1024), False, 0.04),
        (H(4, 0, 0) + frag(1, b"\x02" * 10), False, 0.05),
        (H(1, 3, 0x1) + EMPTY, True, 0.06),
        (H(5, 0, 0) + frag(1, b"\x02" * 10), False, 0.07),
        (H(2, 3, 0x1) + EMPTY, True, 0.08),
        (H(6, 0, 0) + msgs([12]), False, 2.00),
        (H(3, 6, 0x1) + EMPTY, True, 2.01),
    ]
    p = os.path.join(d, "exchange.pcap")
    y.pcap(pk, p)
    prefs = ["-d", "udp.port==40000,yojimbo", "-o", "yojimbo.plain_reliable:TRUE",
             "-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")]
    F = ["frame.number", "yojimbo.analysis.reliable_sequence", "yojimbo.analysis.send", "yojimbo.analysis.first_sent_in",
         "yojimbo.analysis.acked_in", "yojimbo.analysis.sent_after_ack", "yojimbo.analysis.block_progress",
         "yojimbo.analysis.confirms", "yojimbo.analysis.diagnosis", "_ws.expert.message"]
    rows = {int(r[0]): r for r in y.fields(p, F, prefs + ["-2"], decode=False)}
    c.eq("sequences", [rows[i][1] for i in range(1, 12)], ["0", "1", "0", "2", "3", "4", "1", "5", "2", "6", "3"])
    c.eq("frame 1 sends", rows[1][2], "1,1")
    c.eq("frame 2 sends", rows[2][2], "2,2")
    c.eq("frame 2 first sent in", rows[2][3], "1,1")
    c.eq("frames 1, 2 acked in 3", (rows[1][4], rows[2][4]), ("3,3", "3,3"))
    c.eq("frame 3 confirms", rows[3][7], "2")
    c.eq("frame 4: message 10 sent after its ack in 3", (rows[4][2], rows[4][5]), ("3", "3"))
    c.eq("frame 5: fragment 0 acked in 7, progress 0", (rows[5][4], rows[5][6]), ("7", "0"))
    c.eq("frame 6: fragment 1 never acked", (rows[6][4], rows[6][6]), ("", "0"))
    c.eq("frame 7 confirms", rows[7][7], "1")
    c.eq("frame 8: fragment 1's second send, 1 fragment acked before", (rows[8][2], rows[8][6]), ("2", "1"))
    c.eq("frame 9 confirms nothing new", rows[9][7], "")
    c.eq("message 12 acked in 11", rows[10][4], "11")
    want = ("Block 5 on channel 0 never completed: 1 of 2 fragments acknowledged; sent but never acknowledged: "
            "fragment 1; no fragment acknowledged in its last 1.95 s: "
            "the peer kept acknowledging later packets but never one carrying this")
    c.true("diagnosis on the last send", rows[8][8].startswith(want), rows[8][8])
    c.eq("no diagnosis elsewhere", [rows[i][8] for i in range(1, 12) if i != 8], [""] * 10)

    # stats: one block row, diagnosed
    out = y.tshark(["-r", p, "-q", "-z", "yojimbo,blocks", "-z", "yojimbo,messages"] + prefs).stdout
    c.true("blocks table diagnosis", "Connection 0 127.0.0.1:30000 -> 127.0.0.2:40000: " + want in out, out)
    c.true("message 12 row", any(l.split()[5:7] == ["12", "0"] for l in out.splitlines() if l.startswith("0 ")), out)

    # the same expert infos with a tree and without, one pass and two: the
    # fixed summaries in both, the numbers in the tree's detail items
    for two in ([], ["-2"]):
        tree = y.tshark(["-r", p, "-V"] + prefs + two).stdout
        notree = y.tshark(["-r", p, "-q", "-z", "expert"] + prefs + two).stdout
        for s in ("Resends: 2 messages or fragments sent before", "Sent after their ack went by"):
            c.true("%s %s with tree" % (s, two), s in tree)
        for s in ("Message or fragment resent", "Resent after its ack"):
            c.true("%s %s with tree" % (s, two), "): " + s in tree)
            c.true("%s %s without tree" % (s, two), s in notree)
        if two:
            c.true("diagnosis with tree", "Block 5 on channel 0 never completed" in tree, tree[-2000:])
            c.true("diagnosis expert without tree", "Never acknowledged" in notree, notree)
    c.done()


if __name__ == "__main__":
    main()
