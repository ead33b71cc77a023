#!/usr/bin/env python3
"""Other programs' traffic on our ports is left alone: no frame of
captures/foreign-traffic.pcap (captures/make-foreign-traffic.py: random
datagrams, DNS, NTP, STUN, TFTP, text, netcode-style requests and encrypted
packets, netgame-shaped headers with other ids, on 40000, 30000, 30001 ...)
is claimed by chunk, p2frag or netgame, in one pass or two, with the default
preferences and with p2frag given port 40000 too. A port's dissector claims
a datagram only when it is well-formed for it; anything else goes on to the
other dissectors, heuristics and data.

Also checks that the committed capture is what the script makes (byte for
byte), and that the same datagrams on a port nobody owns stay data.

    test_foreign.py [EXTRA.pcap ...]   also check these captures (e.g. a
                                       capture of another game's traffic)
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chunktest as ct  # noqa: E402

CAPTURE = os.path.join(ct.REPO, "captures", "foreign-traffic.pcap")
SCRIPT = os.path.join(ct.REPO, "captures", "make-foreign-traffic.py")
OURS = ("chunk", "p2frag", "netgame")


def claimed(pcap, args=()):
    """(frames, [frame numbers whose layers include one of ours])."""
    out = ct.tshark(["-r", pcap, "-T", "fields", "-e", "frame.protocols"] + list(args))
    rows = out.splitlines()
    bad = [n + 1 for n, p in enumerate(rows) if any(x in OURS for x in p.split(":"))]
    return len(rows), bad


def main():
    F = ct.Failures()
    extra = sys.argv[1:]

    with ct.scratch_dir() as tmp:
        again = os.path.join(tmp, "again.pcap")
        p = subprocess.run([sys.executable, SCRIPT, "-o", again], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        F.check(p.returncode == 0, "make-foreign-traffic.py failed: %s" % p.stderr)
        if p.returncode == 0:
            with open(again, "rb") as a, open(CAPTURE, "rb") as b:
                F.check(a.read() == b.read(), "captures/foreign-traffic.pcap is not what "
                        "make-foreign-traffic.py makes: run it and commit the result")

    for pcap in [CAPTURE] + extra:
        name = os.path.basename(pcap)
        for label, args in [("one pass", []), ("two passes", ["-2"]),
                            ("p2frag on 40000 too", ["-o", "p2frag.udp.port:40000"])]:
            n, bad = claimed(pcap, args)
            F.check(n > 0, "%s: no frames" % name)
            print("%s, %s: %d frames, %d claimed by chunk, p2frag or netgame" % (name, label, n, len(bad)))
            F.check(not bad, "%s, %s: frames %s claimed (first %d)" % (name, label, bad[:20], len(bad)))
    # The capture does reach the dissectors: with Decode As the port's
    # datagrams are forced onto chunk (then shown as broken chunk packets).
    n, bad = claimed(CAPTURE, ["-d", "udp.port==40001,chunk"])
    F.check(len(bad) > 50, "Decode As udp.port==40001,chunk: only %d frames forced to chunk" % len(bad))
    F.finish("test_foreign")


if __name__ == "__main__":
    main()
