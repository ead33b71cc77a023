#!/usr/bin/env python3
"""yojimbo.block_reassembly: block fragments the way a resending or hostile
sender sends them, reassembled by the plugin's own store
(common/reasm-store.c) item for item as Wireshark's reassembly table
(fragment_add_seq_check, show_fragment_seq_tree) showed them: a fragment sent
again before its block completed (an overlap), again with other bytes (an
overlap conflict), a tail with another fragment count (multiple tails), more
fragments than the first tail said (too long), a one-fragment block, and the
same message id from the other side (another block). The fragment lists,
flags, "Reassembled in", lengths and data must be what the table gave (the
values below were read from the plugin of 5cffcc9, which used the table),
with -2 and in the single pass, and the -V text the same in both."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y

W = y.Writer


def frag(mid, nfrag, fid, data, rev=False):
    """A packet of one block fragment on channel 1 (of the default two)."""
    w = W().int_(1, 0, 2).int_(1, 0, 1).bool_(1).bits_(mid, 16).int_(nfrag, 1, 256).int_(fid, 0, nfrag - 1)
    w.int_(len(data), 1, 1024).bytes_(data)
    if fid == 0:
        w.int_(1, 0, 3).bits_(mid, 16)      # TestBlockMessage and its sequence
    return (w.data(), rev)


A, B, C = b"a" * 40, b"b" * 40, b"c" * 7
PACKETS = [
    frag(10, 3, 0, A),                      # 1
    frag(10, 3, 0, A),                      # 2  resent: overlap
    frag(10, 3, 1, B),                      # 3
    frag(10, 3, 1, b"B" * 40),              # 4  other bytes: overlap conflict
    frag(10, 3, 2, C, rev=True),            # 5  the other side's block 10
    frag(10, 3, 2, C),                      # 6  tail: block 10 complete
    frag(11, 2, 1, B),                      # 7  tail 1
    frag(11, 3, 2, C),                      # 8  another tail: multiple tails
    frag(11, 2, 0, A),                      # 9  0, 1, 2 > tail 1: too long, complete
    frag(12, 1, 0, b"one"),                 # 10 a one-fragment block
    frag(10, 1, 0, b"x", rev=True),         # 11 the other side's 10, another count: a tail, complete
]

FIELDS = ["frame.number", "yojimbo.block.fragment", "yojimbo.block.fragment.overlap",
          "yojimbo.block.fragment.overlap.conflicts", "yojimbo.block.fragment.multiple_tails",
          "yojimbo.block.fragment.too_long_fragment", "yojimbo.block.fragment.error",
          "yojimbo.block.fragment.count", "yojimbo.block.reassembled_in", "yojimbo.block.reassembled.length",
          "yojimbo.block.data"]

# With -2: frame -> the fields above after frame.number (4.0's booleans: 1;
# a fragment with an error flag is a yojimbo.block.fragment.error). Frame 5
# and 11 (the other side's block 10) never complete: 11's tail is another
# fragment number than 5's (multiple tails), and fragment 1 never came.
ABC = (A + B + C).hex()
WANT = {
    "1": ["", "", "", "", "", "", "", "6", "", ""],
    "2": ["", "", "", "", "", "", "", "6", "", ""],
    "3": ["", "", "", "", "", "", "", "6", "", ""],
    "4": ["", "", "", "", "", "", "", "6", "", ""],
    "5": ["", "", "", "", "", "", "", "", "", ""],
    "6": ["1,2,3,6", "1,1", "1", "", "", "4", "5", "", "87", ABC],
    "7": ["", "", "", "", "", "", "", "9", "", ""],
    "8": ["", "", "", "", "", "", "", "9", "", ""],
    "9": ["7", "", "", "1", "1", "9,8", "3", "", "87", ABC],
    "10": ["10", "", "", "", "", "", "1", "", "3", b"one".hex()],
    "11": ["", "", "", "", "", "", "", "", "", ""],
}


def main():
    c = y.Checks("yojimbo.block_reassembly")
    d = y.tmpdir()
    p = os.path.join(d, "blocks.pcap")
    y.pcap(PACKETS, p)
    prefs = ["-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")]
    rows = y.fields(p, FIELDS, prefs + ["-2"])
    got = {r[0]: [v.replace("True", "1").replace("False", "0") for v in r[1:]] for r in rows}
    for frame in sorted(WANT, key=int):
        c.eq("frame %s" % frame, got.get(frame), WANT[frame])
    # The single pass: the same in the completing frames, no "Reassembled
    # in" elsewhere (the table's too: it is known only on a revisit).
    rows = y.fields(p, FIELDS, prefs)
    got = {r[0]: [v.replace("True", "1").replace("False", "0") for v in r[1:]] for r in rows}
    for frame in sorted(WANT, key=int):
        want = WANT[frame][:7] + [""] + WANT[frame][8:]
        c.eq("frame %s, one pass" % frame, got.get(frame), want)
    c.done()


if __name__ == "__main__":
    main()
