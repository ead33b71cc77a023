#!/usr/bin/env python3
"""netcode.foreign: netcode claims no frame of the chunk, p2frag, netgame and
reliable captures (captures/*.pcap whose truth file names another generator
than netcode-sim or yojimbo-sim, and the real library's plain reliable
packets), neither as the plugin runs by default nor with
those three protocols disabled (then every datagram reaches the heuristics,
netcode's included, on port 40000 of netcode.udp.port), nor with the key log
of the real captures loaded (trial decryption)."""
import glob
import json
import os

import nctest as nc


NETCODE_GENERATORS = {"netcode-sim", "yojimbo-sim"}


def not_netcode(cap):
    """A capture that holds no netcode traffic: a truth file of another
    generator, or the real library's plain reliable packets."""
    truth = cap[:-5] + ".truth.json"
    if os.path.exists(truth):
        with open(truth) as f:
            return json.load(f).get("generator") not in NETCODE_GENERATORS
    return os.path.basename(cap).endswith("-plain.pcap")


def main():
    F = nc.Failures()
    caps = sorted(c for c in glob.glob(os.path.join(nc.REPO, "captures", "*.pcap")) if not_netcode(c))
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
