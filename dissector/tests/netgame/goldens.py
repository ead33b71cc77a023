#!/usr/bin/env python3
"""tshark -V -O netgame on every netgame capture in captures/ against its
reviewed golden output in dissector/tests/netgame/golden/: <capture>.txt
(one pass) and <capture>.2pass.txt (-2). The analysis runs over the whole
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
import ngtest as ng  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
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


def main():
    regen = "--regenerate" in sys.argv[1:]
    os.makedirs(GOLDEN, exist_ok=True)
    failed = 0
    for name, frames in sorted(FRAMES.items()):
        cap = os.path.join(ng.REPO, "captures", name + ".pcap")
        for suffix, extra in PASSES.items():
            out = ng.tshark(["-r", cap, "-V", "-O", "netgame", "-Y", " || ".join("frame.number == " + n for n in frames.split(","))]
                            + ng.ct.pref_args(PREFS.get(name)) + extra)
            path = os.path.join(GOLDEN, name + suffix + ".txt")
            if regen:
                with open(path, "w") as f:
                    f.write(out)
                print("wrote", os.path.relpath(path, ng.REPO))
                continue
            if not os.path.exists(path):
                print("FAIL: %s: no golden" % (name + suffix))
                failed += 1
                continue
            with open(path) as f:
                want = f.read()
            if out != want:
                failed += 1
                diff = list(difflib.unified_diff(want.splitlines(), out.splitlines(), name + suffix, "tshark",
                                                 lineterm="", n=2))
                print("FAIL: %s differs (%d diff lines):" % (name + suffix, len(diff)))
                print("\n".join(diff[:60]))
    if not regen:
        print("netgame goldens: %d captures x %d passes, %d differ" % (len(FRAMES), len(PASSES), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
