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
            r = y.tshark(["-r", cap, "-d", "udp.port==40000,yojimbo_plain", "-q", "-z", "expert"] + prefs + two,
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
            r = y.tshark(["-r", p, "-d", "udp.port==40000,yojimbo_plain", "-V"] + prefs + two, check=False)
            c.eq("random bytes, plain, -V %s %s exit code" % (prefs, two), r.returncode, 0)
    c.done()


if __name__ == "__main__":
    main()
