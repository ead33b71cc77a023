#!/usr/bin/env python3
"""netcode.foreign: netcode claims no frame of the chunk, p2frag and netgame
captures, nor of reliable-sim's (captures/*.pcap whose truth file's
generator is chunk-sim, p2frag-sim, netgame-sim or reliable-sim; netcode's own
captures are netcode), neither as the plugin runs by default nor with chunk,
p2frag and netgame disabled (then every datagram reaches the heuristics,
netcode's included, on port 40000 of netcode.udp.port), nor with the key log
of the real captures loaded (trial decryption). Each protocol is disabled by
a --disable-protocol of its own: Wireshark 4.0 takes no comma-separated list
(it disabled nothing), 4.4 does. The captures are read one after the other
in a single file (chunktest.concat_captures: each capture's addresses its
own, times only forward), one tshark run per way; a claimed frame is
reported with the capture it came from."""
import glob
import json
import os

import nctest as nc

FOREIGN = ("chunk-sim", "p2frag-sim", "netgame-sim", "reliable-sim")


def foreign_captures():
    out = []
    for cap in sorted(glob.glob(os.path.join(nc.REPO, "captures", "*.pcap"))):
        truth = cap[:-5] + ".truth.json"
        if os.path.exists(truth):
            with open(truth) as f:
                if json.load(f).get("generator") in FOREIGN:
                    out.append(cap)
    return out


def main():
    F = nc.Failures()
    caps = foreign_captures()
    F.check(len(caps) > 20, "only %d foreign captures/*.pcap" % len(caps))
    keylog = os.path.join(nc.REPO, "captures", "real-netcode-cs.keys")
    off = ["--disable-protocol", "chunk", "--disable-protocol", "p2frag", "--disable-protocol", "netgame"]
    ways = [[], off, off + ["-o", "netcode.keylog_file:" + keylog]]
    with nc.scratch_dir() as tmp:
        merged = os.path.join(tmp, "foreign.pcap")
        spans = nc.ct.concat_captures(caps, merged)
        for opts in ways:
            out = nc.tshark(["-r", merged, "-Y", "netcode", "-T", "fields", "-e", "frame.number"] + opts)
            claimed = {}
            for number in out.split():
                claimed.setdefault(nc.ct.capture_of_frame(spans, int(number)), []).append(number)
            for name, numbers in sorted(claimed.items()):
                F.check(False, "%s %s: %d frames claimed by netcode (of the concatenated file: %s...)" %
                        (name, " ".join(opts), len(numbers), " ".join(numbers[:5])))
    F.finish("netcode.foreign")


if __name__ == "__main__":
    main()
