#!/usr/bin/env python3
"""reliable inside netcode: the yojimbo example's capture (the real
libraries, captures/real-yojimbo-cs.pcapng, server private key 32 zero
bytes) decrypted by the netcode dissector carries a reliable header in each
of its 1 128 payload packets. The reliable heuristic on netcode.payload must
find every one, with the conversation's two directions from the UDP ports,
and no malformed frame. Skipped (77) when the plugin has no netcode
dissector or the capture is not in the tree."""
import os
import sys

import rltest as rt

CAPTURE = os.path.join(rt.CAPTURES, "real-yojimbo-cs.pcapng")
KEY = "0" * 64


def main():
    protocols = rt.tshark(["-G", "protocols"])
    if not any(line.split("\t")[-1] == "netcode" for line in protocols.splitlines()) or not os.path.exists(CAPTURE):
        print("skipped: no netcode dissector in the plugin, or no %s" % CAPTURE)
        return 77
    fails = rt.Failures()
    args = ["-r", CAPTURE, "-d", "udp.port==40000,netcode", "-o", "netcode.private_key:" + KEY]
    out = rt.tshark(args + ["-Y", "reliable", "-T", "fields", "-e", "udp.srcport", "-e", "reliable.sequence",
                            "-e", "_ws.malformed"])
    rows = [line.split("\t") for line in out.splitlines()]
    fails.check(len(rows) == 1128, "%d reliable packets, want 1128" % len(rows))
    fails.check(not any(r[2] for r in rows if len(r) > 2), "malformed reliable frames")
    table = rt.tshark(args + ["-q", "-z", "reliable,conns"])
    directions = [line for line in table.splitlines() if line.startswith("0 ")]
    fails.check(len(directions) == 2, "conns table: %s" % directions)
    fails.check(sum(int(line.split()[4]) for line in directions) == 1128, "conns packets: %s" % directions)
    print("%d reliable packets inside netcode, %d directions" % (len(rows), len(directions)))
    fails.finish("reliable.netcode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
