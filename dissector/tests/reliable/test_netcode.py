#!/usr/bin/env python3
"""reliable inside netcode: the yojimbo example's capture (the real
libraries, captures/real-yojimbo-cs.pcapng, server private key 32 zero
bytes) decrypted by the netcode dissector carries a reliable header in each
of its 1 128 payload packets. The reliable heuristic on netcode.payload must
find every one, with the conversation's two directions from the UDP ports,
and no malformed frame. The netcode example's capture
(captures/real-netcode-cs.pcapng, its key log beside it) carries test data
(the bytes 0, 1, 2, ... in every payload, a well-formed header each alone):
the heuristic must take none of its 579 payloads. Skipped (77) when the plugin has no netcode
dissector or the capture is not in the tree."""
import os
import sys

import rltest as rt

CAPTURE = os.path.join(rt.CAPTURES, "real-yojimbo-cs.pcapng")
KEY = "0" * 64


def main():
    protocols = rt.tshark(["-G", "protocols"])
    # the filter name is the third column (4.4 prints more columns after it)
    if not any(line.split("\t")[2:3] == ["netcode"] for line in protocols.splitlines()) or not os.path.exists(CAPTURE):
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

    netcode_cs = os.path.join(rt.CAPTURES, "real-netcode-cs.pcapng")
    keys = os.path.join(rt.CAPTURES, "real-netcode-cs.keys")
    if os.path.exists(netcode_cs) and os.path.exists(keys):
        for extra in ([], ["-2"]):
            out = rt.tshark(["-r", netcode_cs, "-d", "udp.port==40000,netcode", "-o", "netcode.keylog_file:" + keys] + extra +
                            ["-T", "fields", "-e", "netcode.payload_len", "-e", "reliable.prefix"])
            rows = [line.split("\t") for line in out.splitlines()]
            payloads = [r for r in rows if r[0]]
            claimed = [r for r in payloads if len(r) > 1 and r[1]]
            fails.check(len(payloads) == 579, "real-netcode-cs %s: %d payloads, want 579" % (extra, len(payloads)))
            fails.check(not claimed, "real-netcode-cs %s: reliable took %d of the example's %d test-data payloads"
                        % (extra, len(claimed), len(payloads)))
        print("real-netcode-cs: no reliable in the example's 579 test-data payloads")
    fails.finish("reliable.netcode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
