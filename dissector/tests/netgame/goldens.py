#!/usr/bin/env python3
"""tshark -V -O netgame on every netgame capture in captures/ against its
reviewed golden output in dissector/tests/netgame/golden/<major.minor>/ (the
set for the Wireshark the plugin was built against, as for the chunk goldens:
dissector/tests/goldens.py): <capture>.txt (one pass) and <capture>.2pass.txt
(-2). Another version's set must equal golden/4.0's once Wireshark's own
formatting changes are undone. The analysis runs over the whole
capture; the goldens show the first three frames and the first frame of each
analysis flag and mode switch (FRAMES, chosen once from the -2 decode), so
they stay small enough to review by hand.

  goldens.py                 compare (ctest netgame.goldens)
  goldens.py --regenerate    rewrite them; review the diff before committing
"""
import difflib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib.util  # noqa: E402
import ngtest as ng  # noqa: E402

# The chunk goldens' module (golden_dir, wireshark_formatting): same file name
# as this one, so loaded by path.
_spec = importlib.util.spec_from_file_location(
    "chunk_goldens", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "goldens.py"))
chunk_goldens = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(chunk_goldens)

GOLDENS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
PASSES = {"": [], ".2pass": ["-2"]}
FRAMES = {
    "netgame-at-server": "1,2,3,6,76,85",
    "netgame-clean": "1,2,3,87",
    "netgame-dup-reorder": "1,2,3,10,94,97,99",
    "netgame-header-only": "1,2,3,87",
    "netgame-high-rtt": "1,2,3,89,289",
    "netgame-loss-10": "1,2,3,6,51,85",
    "netgame-one-way-loss": "1,2,3,6,87",
    "netgame-stops-acking": "1,2,3,87,312",
    "netgame-wrap-31": "1,2,3,10,20,86",
    "netgame-wrap-32": "1,2,3,87",
}
PREFS = {"netgame-wrap-31": {"netgame.max_sequence": 31}}


def equivalent_to_40(golden):
    """Differences between the set golden and golden/4.0 beyond Wireshark's
    formatting (chunk_goldens.wireshark_formatting): [] when the decode is the same."""
    out = []
    base = os.path.join(GOLDENS, "4.0")
    for name in sorted(os.listdir(base)):
        other = os.path.join(golden, name)
        if not os.path.exists(other):
            out.append("%s: missing" % name)
            continue
        a = [chunk_goldens.wireshark_formatting(x) for x in open(os.path.join(base, name)).read().splitlines()]
        b = [chunk_goldens.wireshark_formatting(x) for x in open(other).read().splitlines()]
        if a != b:
            out.append("\n".join(list(difflib.unified_diff(a, b, "4.0/" + name, name, lineterm="", n=0))[:20]))
    return out


def main():
    regen = "--regenerate" in sys.argv[1:]
    GOLDEN = os.path.join(GOLDENS, os.path.basename(chunk_goldens.golden_dir()))
    if not regen and not os.path.isdir(GOLDEN):
        print("FAIL: no reviewed netgame goldens for this Wireshark (%s): goldens.py --regenerate, then "
              "compare with golden/4.0" % os.path.relpath(GOLDEN, ng.REPO))
        return 1
    os.makedirs(GOLDEN, exist_ok=True)
    failed = 0
    for name, frames in sorted(FRAMES.items()):
        cap = os.path.join(ng.REPO, "captures", name + ".pcap")
        for suffix, extra in PASSES.items():
            out = ng.tshark(["-r", cap, "-V", "-O", "netgame", "-Y", " || ".join("frame.number == " + n for n in frames.split(","))]
                            + ng.ct.pref_args(PREFS.get(name)) + extra)
            path = os.path.join(GOLDEN, name + suffix + ".txt")
            failed += chunk_goldens.check_golden(path, out, regen, name + suffix, "FAIL: %s: no golden" % (name + suffix),
                                                 name + suffix, ng.REPO)
    if not regen and os.path.basename(GOLDEN) != "4.0":
        for problem in equivalent_to_40(GOLDEN):
            failed += 1
            print("FAIL: not only Wireshark's formatting differs from golden/4.0:\n" + problem)
    if not regen:
        print("netgame goldens: %d captures x %d passes, %d differ" % (len(FRAMES), len(PASSES), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
