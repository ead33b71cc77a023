#!/usr/bin/env python3
"""A configuration that does not match the traffic: the real soak captures
decoded under wrong channel lists, message type counts and schemas, and
random bytes under the defaults, one pass and two, with
WIRESHARK_ABORT_ON_DISSECTOR_BUG=1 and a time bound: tshark must finish
cleanly (no crash, no loop), and the wrong configurations must show up as
expert infos rather than silently."""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y

EX = os.path.join(y.REPO, "docs", "yojimbo-example.schema")
WRONG = [
    ["-o", "yojimbo.channels:ro,ro"],                            # the default, not soak's
    ["-o", "yojimbo.channels:ro"],
    ["-o", "yojimbo.channels:uu,uu,uu,uu"],
    ["-o", "yojimbo.channels:uu:8192:1024:1,ro:10240:16:1"],
    # a wrong type count shows once the bodies are decoded (a schema)
    ["-o", "yojimbo.channels:uu:8192,ro:10240:1024", "-o", "yojimbo.message_types:1", "-o", "yojimbo.schema_file:" + EX],
    ["-o", "yojimbo.channels:uu:8192,ro:10240:1024", "-o", "yojimbo.message_types:100000", "-o", "yojimbo.schema_file:" + EX],
    ["-o", "yojimbo.channels:uu:8192,ro!:10240:1024"],
]


def main():
    c = y.Checks("yojimbo.mismatch")
    d = y.tmpdir()
    weird = os.path.join(d, "weird.schema")
    with open(weird, "w") as f:
        f.write("message 0 A\n  bits 30 x\n  bytes x big\nmessage 1 B block\n  string 65536 s\n"
                "message 2 C\n  int -5 5 v\n  relative v r\n  skip_by r 0 7 4096\n")
    cap = os.path.join(y.CAPTURES, "real-yojimbo-loss-plain.pcap")
    for i, prefs in enumerate(WRONG + [["-o", "yojimbo.schema_file:" + weird]]):
        for two in ([], ["-2"]):
            t0 = time.time()
            r = y.tshark(["-r", cap, "-d", "udp.port==40000,yojimbo", "-o", "yojimbo.plain_reliable:TRUE", "-q", "-z", "expert"] + prefs + two,
                         check=False)
            dt = time.time() - t0
            c.eq("config %d %s exit code" % (i, two), r.returncode, 0)
            c.true("config %d %s time" % (i, two), dt < 120, "%.1f s" % dt)
            if i > 0 and i < len(WRONG):
                c.true("config %d shows the mismatch" % i, "Errors" in r.stdout or "Warns" in r.stdout,
                       r.stdout[:400])
    rnd = random.Random(7)
    pk = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 300))) for _ in range(3000)]
    p = os.path.join(d, "random.pcap")
    y.pcap(pk, p)
    for prefs in ([], ["-o", "yojimbo.channels:uu:8192,ro:10240:1024,ro:1:1:1,uu!"],
                  ["-o", "yojimbo.schema_file:" + weird]):
        for two in ([], ["-2"]):
            r = y.tshark(["-r", p, "-d", "udp.port==40000,yojimbo", "-q", "-z", "yojimbo,blocks", "-z", "yojimbo,messages"]
                         + prefs + two, check=False)
            c.eq("random bytes %s %s exit code" % (prefs, two), r.returncode, 0)
            r = y.tshark(["-r", p, "-d", "udp.port==40000,yojimbo", "-o", "yojimbo.plain_reliable:TRUE", "-V"] + prefs + two, check=False)
            c.eq("random bytes, plain, -V %s %s exit code" % (prefs, two), r.returncode, 0)
    # reliable alone (reliable-sim's captures: reliable on plain UDP with its
    # own payloads): the heuristic takes only payloads inside netcode.
    cap = os.path.join(y.CAPTURES, "reliable-clean.pcap")
    if os.path.exists(cap):
        rows = y.fields(cap, ["frame.protocols"], ["-d", "udp.port==50000,reliable", "-d", "udp.port==50001,reliable"],
                        decode=False)
        c.true("reliable without netcode: no yojimbo", rows and not any("yojimbo" in r[0] for r in rows),
               str([r for r in rows if "yojimbo" in r[0]][:3]))

    # Hostile claims: new block ids of 65535 fragments each, and 256 new
    # message ids a packet. The analysis stops following new ones at its
    # limits (4 000 000 fragments, 1 000 000 ids) and says so.
    big = ["-o", "yojimbo.channels:ro:16776960:256"]
    pk = []
    for i in range(100):
        w = y.Writer().int_(1, 0, 1).bool_(1).bits_(i, 16).int_(65535, 1, 65535).int_(1, 0, 65534)
        w.int_(1, 1, 256).bytes_(b"x")
        pk.append(y.reliable_header(i, 0, 0xFFFFFFFF) + w.data())
    p = os.path.join(d, "fragments.pcap")
    y.pcap(pk, p)
    rows = y.fields(p, ["frame.number", "yojimbo.expert.detail"], ["-d", "udp.port==40000,yojimbo", "-o", "yojimbo.plain_reliable:TRUE"] + big,
                    decode=False)
    limited = [int(r[0]) for r in rows if "Not followed" in r[1]]
    c.eq("fragment limit: blocks followed before it", limited[:1], [62])   # 61 x 65535 <= 4 000 000 < 62 x 65535
    c.eq("fragment limit: every later block noted", len(limited), 39)
    pk = []
    for i in range(4000):
        first = (i * 256) % 65536
        w = y.Writer().int_(1, 0, 1).bool_(0).bool_(1).int_(256, 1, 256).bits_(first, 16)
        for k in range(1, 256):
            w.seq_relative((first + k - 1) % 65536, (first + k) % 65536)
        pk.append(y.reliable_header(i % 65536, 0, 0xFFFFFFFF) + w.data())
    p = os.path.join(d, "ids.pcap")
    y.pcap(pk, p)
    t0 = time.time()
    rows = y.fields(p, ["frame.number", "yojimbo.expert.detail"], ["-d", "udp.port==40000,yojimbo", "-o", "yojimbo.plain_reliable:TRUE",
                                                                "-o", "yojimbo.channels:ro"], decode=False)
    limited = [int(r[0]) for r in rows if "Not followed" in r[1]]
    c.true("message id limit reached at 1 000 000 ids (3907 packets of 256)", limited[:1] == [3907], str(limited[:3]))
    c.true("1 024 000 message ids in %.1f s" % (time.time() - t0), time.time() - t0 < 300)
    c.done()


if __name__ == "__main__":
    main()
