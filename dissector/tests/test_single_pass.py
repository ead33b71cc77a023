#!/usr/bin/env python3
"""test_single_pass.py: tshark's single pass is recognised (common/single-pass.c).

Every analysis keeps its records in the packet scope, and chunk and p2frag
reassemble in buffers of their own, only when the pass is recognised; when
the recognition breaks, memory silently grows back to the two-pass figures
and nothing else shows it. `tshark -q -z chunkshark,single_pass` prints how
many analysed packets were taken as the single pass. For a capture of each
protocol with a <protocol>.single_pass preference (those whose analysis
takes this path; each must have a capture in CAPTURES) this checks:
  - tshark -r (one pass, with -q and with columns): all but the first;
  - tshark -2: none; -o <protocol>.single_pass:FALSE: none;
  - chunk, p2frag and netcode: the -V output with the preference off is the
    one with it on (netgame raises a loss where it becomes known in the single pass,
    docs/netgame.md, so its output differs by design).
Exit 0 when all hold, 1 otherwise.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chunktest as ct  # noqa: E402

CAPTURES = {"chunk": "loss-1.pcap", "p2frag": "frag-loss-1.pcap", "netgame": "netgame-loss-10.pcap",
            "netcode": "netcode-loss-dup.pcap", "reliable": "reliable-fragments.pcap"}
# Options a capture needs to be decoded as its protocol (netcode: port 40000
# is chunk's; the key log decrypts, so the analysis sees every type).
OPTIONS = {"netcode": ["-d", "udp.port==40000,netcode",
                       "-o", "netcode.keylog_file:" + os.path.join(ct.REPO, "captures", "netcode-loss-dup.keys")],
           "reliable": ["-d", "udp.port==50000,reliable"]}
SAME_OUTPUT = {"chunk", "p2frag", "netcode", "reliable"}


def counts(cap, extra):
    out = ct.tshark(["-r", cap, "-z", "chunkshark,single_pass"] + extra)
    m = re.search(r"chunkshark single pass: (\d+) of (\d+) analysed packets", out)
    if not m:
        raise RuntimeError("no -z chunkshark,single_pass line in the output of tshark %s" % " ".join(extra))
    return int(m.group(1)), int(m.group(2))


def main():
    failures = []
    prefs = ct.tshark(["-G", "defaultprefs"])
    for proto in ct.plugin_protocols():
        if not re.search(r"^#%s\.single_pass:" % re.escape(proto), prefs, re.M):
            print("%-8s no %s.single_pass preference: keeps its records as Wireshark does" % (proto, proto))
            continue
        if proto not in CAPTURES:
            failures.append("%s: no capture to check the single pass with (CAPTURES)" % proto)
            continue
        cap = os.path.join(ct.REPO, "captures", CAPTURES[proto])
        opts = OPTIONS.get(proto, [])
        off = ["-o", "%s.single_pass:FALSE" % proto]
        for label, extra, want in (("one pass -q", ["-q"], "all"), ("one pass", [], "all"),
                                   ("-2", ["-q", "-2"], "none"), ("single_pass off", ["-q"] + off, "none")):
            single, analysed = counts(cap, opts + extra)
            ok = analysed > 1 and single == (analysed - 1 if want == "all" else 0)
            print("%-8s %-16s %d of %d analysed packets taken as the single pass%s" % (
                proto, label, single, analysed, "" if ok else "  FAIL"))
            if not ok:
                failures.append("%s, %s: %d of %d packets in the single pass, want %s" % (
                    proto, label, single, analysed, "all but the first" if want == "all" else "none"))
        if proto in SAME_OUTPUT:
            if ct.tshark(["-r", cap, "-V"] + opts) != ct.tshark(["-r", cap, "-V"] + opts + off):
                failures.append("%s: -V output differs with %s.single_pass off" % (proto, proto))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
