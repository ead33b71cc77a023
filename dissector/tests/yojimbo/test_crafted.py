#!/usr/bin/env python3
"""Crafted connection packets (raw on UDP port 40000, Decode As yojimbo): one
for each field that can go out of the configured range, each expected to give
an expert info naming the field and the preference to check; the elisions
(one channel: no channel index; one message type: no type); a block in three
fragments reassembled and exported by --export-objects yojimbo."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y
ct = y.ct

W = y.Writer


def entry_ro(w, nch, ch, count, maxmsgs=256):
    w.int_(ch, 0, nch - 1).bool_(0).bool_(1).int_(count, 1, maxmsgs)
    return w


CASES = [
    # name, prefs, payload, expected expert text (substring)
    ("entries", ["-o", "yojimbo.channels:ro,ro"], W().bits_(3, 2).data(),
     "the channel entry count 3 is out of its range 0..2: check yojimbo.channels"),
    ("channel", ["-o", "yojimbo.channels:ro,ro,ro"], W().int_(1, 0, 3).bits_(3, 2).data(),
     "the channel index 3 is out of its range 0..2: check yojimbo.channels"),
    ("count", ["-o", "yojimbo.channels:ro:262144:1024:5"], W().int_(1, 0, 1).bool_(0).bool_(1).bits_(6, 3).data(),
     "the message count 7 is out of its range 1..5: check yojimbo.channels (MAXMESSAGES of channel 0)"),
    ("type", ["-o", "yojimbo.channels:ro", "-o", "yojimbo.message_types:3"],
     W().int_(1, 0, 1).bool_(0).bool_(1).int_(1, 1, 256).bits_(9, 16).bits_(3, 2).data(),
     "the message type 3 is out of its range 0..2: check yojimbo.message_types"),
    ("num_fragments", ["-o", "yojimbo.channels:ro:3000:1024"],
     W().int_(1, 0, 1).bool_(1).bits_(5, 16).bits_(3, 2).data(),
     "the block's fragment count 4 is out of its range 1..3: check yojimbo.channels (MAXBLOCK and FRAGMENT of channel 0)"),
    ("fragment_id", ["-o", "yojimbo.channels:ro:3000:1024"],
     W().int_(1, 0, 1).bool_(1).bits_(5, 16).int_(3, 1, 3).bits_(3, 2).data(),
     "the fragment id 3 is out of its range 0..2: check yojimbo.channels"),
    ("fragment_size", ["-o", "yojimbo.channels:ro:3000:1000"],
     W().int_(1, 0, 1).bool_(1).bits_(5, 16).int_(1, 1, 3).int_(0, 0, 0).bits_(1023, 10).data(),
     "the fragment size 1024 is out of its range 1..1000: check yojimbo.channels"),
    ("blocks_disabled", ["-o", "yojimbo.channels:ro!,ro"], W().int_(1, 0, 2).int_(0, 0, 1).bool_(1).bits_(0, 30).data(),
     "A block fragment on channel 0, which yojimbo.channels configures with blocks disabled"),
    ("relative_id", ["-o", "yojimbo.channels:ro"],
     W().int_(1, 0, 1).bool_(0).bool_(1).int_(2, 1, 256).bits_(500, 16).bits_(0, 6).bits_(400, 32).data(),
     "Message id 2 of 2 (relative to id 500) does not read: its full 32-bit value is not above the previous value"),
    ("short", ["-o", "yojimbo.channels:ro,ro"], W().int_(1, 0, 2).int_(1, 0, 1).bool_(0).bool_(1).data(),
     "The packet ends inside the message count"),
    ("fragment_data_short", ["-o", "yojimbo.channels:ro"],
     W().int_(1, 0, 1).bool_(1).bits_(7, 16).int_(1, 1, 256).int_(100, 1, 1024).bytes_(b"x" * 10).data(),
     "The packet ends inside the 100-byte fragment data"),
    ("trailing", ["-o", "yojimbo.channels:ro,ro"], W().int_(0, 0, 2).data() + b"\x01\x02",
     "2 bytes after the connection packet's last entry"),
    ("not_block", ["-o", "yojimbo.channels:ro", "-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")],
     W().int_(1, 0, 1).bool_(1).bits_(7, 16).int_(1, 1, 256).int_(3, 1, 1024).bytes_(b"abc").int_(0, 0, 3).bits_(5, 16).bits_(0, 8).data(),
     "Fragment 0 names TestMessage, which yojimbo.schema_file does not mark as a block message"),
    ("body_schema_fail", ["-o", "yojimbo.channels:ro", "-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")],
     W().int_(1, 0, 1).bool_(0).bool_(1).int_(1, 1, 256).bits_(3, 16).int_(2, 0, 3).data(),
     "Body does not read: TestSerializeFailOnReadMessage"),
    ("ids_cannot_fit", ["-o", "yojimbo.channels:ro"],
     W().int_(1, 0, 1).bool_(0).bool_(1).int_(200, 1, 256).bits_(7, 16).data(),
     "200 message ids cannot fit in the"),
    ("maxmessages_pref", ["-o", "yojimbo.channels:ro:1024:16:100000"], b"\x00",
     "MAXMESSAGES '100000' is not a number in 1..65536"),
    ("invalid_pref", ["-o", "yojimbo.channels:ro,xx"], b"\x00",
     "yojimbo.channels 'ro,xx': channel 1: type 'xx' is neither ro"),
]


def experts(path, prefs):
    """The expert infos' summaries and their details (the numbers, the
    preference to check) of each frame of path."""
    rows = y.fields(path, ["_ws.expert.message", "yojimbo.expert.detail"], prefs)
    return [r[0] + "\n" + r[1] for r in rows]


def case_groups():
    """CASES by their preferences, in order: [(prefs, [case, ...])]."""
    groups = []
    for case in CASES:
        same = [g for g in groups if g[0] == case[1]]
        if same:
            same[0][1].append(case)
        else:
            groups.append((case[1], [case]))
    return groups


def main():
    c = y.Checks("yojimbo.crafted")
    d = y.tmpdir()
    # The cases that share their preferences are read in one run: one frame
    # a case, each in its own conversation (client port 30000 + its index),
    # 100 s after the one before.
    for i, (prefs, cases) in enumerate(case_groups()):
        p = os.path.join(d, "prefs%d.pcap" % i)
        ct.write_pcap(p, [{"payload": payload, "sport": 30000 + k, "dport": y.PORT, "src": "127.0.0.1",
                           "dst": "127.0.0.2", "t": 1000 + 100 * k} for k, (_, _, payload, _) in enumerate(cases)])
        got = experts(p, prefs)
        c.eq("%s: frames" % ", ".join(case[0] for case in cases), len(got), len(cases))
        for (name, _, _, want), text in zip(cases, got):
            c.true(name, want in text, "\n  want: %s\n  got:  %s" % (want, text))

    # The elisions: one channel (no channel index), one message type (no type).
    p = os.path.join(d, "elide.pcap")
    w = W().int_(1, 0, 1).bool_(0).bool_(1).int_(3, 1, 256).bits_(65534, 16).seq_relative(65534, 65535)
    w.seq_relative(65535, 2)   # wraps: 65535 -> 2 is a difference of 3
    y.pcap([w.data() + b""], p)
    rows = y.fields(p, ["yojimbo.channel", "yojimbo.message_id", "yojimbo.message_type", "_ws.expert.message"],
                    ["-o", "yojimbo.channels:ro", "-o", "yojimbo.message_types:1"])
    c.eq("elided channel index and type", rows[0][:3], ["0", "65534,65535,2", "0"])

    # An unreliable-unordered channel: type and body per message, and a block
    # after a block message's body (the example schema marks type 1).
    p = os.path.join(d, "uu.pcap")
    w = W().int_(1, 0, 2).int_(0, 0, 1).bool_(0).bool_(1).int_(2, 1, 256)
    w.int_(1, 0, 3).bits_(300, 16).int_(5, 1, 100).bytes_(b"hello")      # TestBlockMessage + 5-byte block
    w.int_(0, 0, 3).bits_(21, 16).bits_(0, 1)                             # TestMessage 21: 1 dummy bit
    y.pcap([w.data()], p)
    rows = y.fields(p, ["yojimbo.message_type", "yojimbo.body.value", "yojimbo.message_block_size",
                        "yojimbo.message_block", "_ws.expert.message", "yojimbo.undecoded"],
                    ["-o", "yojimbo.channels:uu:100,ro", "-o",
                     "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")])
    c.eq("unreliable messages with a block", rows[0], ["1,0", "300,21", "5", "68656c6c6f", "", ""])

    # A block of 2500 bytes in three 1024-byte fragments (sent 2, 0, 1):
    # reassembled in the last frame, exported with its bytes.
    block = bytes((i * 7) & 0xFF for i in range(2500))
    frags = [block[0:1024], block[1024:2048], block[2048:]]
    pk = []
    for fid in (2, 0, 1):
        w = W().int_(1, 0, 2).int_(1, 0, 1).bool_(1).bits_(77, 16).int_(3, 1, 256).int_(fid, 0, 2)
        w.int_(len(frags[fid]), 1, 1024).bytes_(frags[fid])
        if fid == 0:
            w.int_(1, 0, 3)        # TestBlockMessage
            w.bits_(4242, 16)      # its sequence
        pk.append(w.data())
    p = os.path.join(d, "block.pcap")
    y.pcap(pk, p)
    prefs = ["-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")]
    rows = y.fields(p, ["yojimbo.block.message_id", "yojimbo.block.fragment_id", "yojimbo.block.num_fragments",
                        "yojimbo.block.fragment_size", "yojimbo.block.reassembled_in", "yojimbo.block.reassembled.length",
                        "yojimbo.body.value", "_ws.expert.message"], prefs + ["-2"])
    c.eq("fragment ids", [r[1] for r in rows], ["2", "0", "1"])
    c.eq("fragment sizes", [r[3] for r in rows], ["452", "1024", "1024"])
    c.eq("reassembled in frame 3", [r[4] for r in rows[:2]], ["3", "3"])
    c.eq("reassembled length", rows[2][5], "2500")
    c.eq("fragment 0's body (schema)", rows[1][6], "4242")
    c.eq("no expert info", [r[7] for r in rows], ["", "", ""])
    out = os.path.join(d, "eo")
    y.tshark(["-r", p, "-d", "udp.port==40000,yojimbo", "-q", "--export-objects", "yojimbo," + out] + prefs)
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    c.eq("exported objects", files, ["yojimbo-block-127.0.0.1-30000-ch1-msg77.bin"])
    if files:
        c.true("exported block bytes", open(os.path.join(out, files[0]), "rb").read() == block)
    c.done()


if __name__ == "__main__":
    main()
