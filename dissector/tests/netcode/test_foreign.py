#!/usr/bin/env python3
"""netcode.foreign: netcode claims no frame of the chunk, p2frag and netgame
captures (captures/*.pcap), neither as the plugin runs by default nor with
those three protocols disabled (then every datagram reaches the heuristics,
netcode's included, on port 40000 of netcode.udp.port), nor with the key log
of the real captures loaded (trial decryption)."""
import glob
import os

import nctest as nc


def main():
    F = nc.Failures()
    caps = sorted(glob.glob(os.path.join(nc.REPO, "captures", "*.pcap")))
    F.check(len(caps) > 20, "only %d captures/*.pcap" % len(caps))
    keylog = os.path.join(nc.REPO, "captures", "real-netcode-cs.keys")
    ways = [[], ["--disable-protocol", "chunk,p2frag,netgame"],
            ["--disable-protocol", "chunk,p2frag,netgame", "-o", "netcode.keylog_file:" + keylog]]
    for cap in caps:
        for opts in ways:
            out = nc.tshark(["-r", cap, "-Y", "netcode", "-T", "fields", "-e", "frame.number"] + opts)
            n = len(out.split())
            F.check(n == 0, "%s %s: %d frames claimed by netcode (%s...)" %
                    (os.path.basename(cap), " ".join(opts), n, " ".join(out.split()[:5])))
    F.finish("netcode.foreign")


if __name__ == "__main__":
    main()
