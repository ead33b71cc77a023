#!/usr/bin/env python3
"""tshark -V -O chunk on every capture in captures/ against its reviewed
golden output in dissector/tests/golden/: <capture>.txt (one pass) and
<capture>.2pass.txt (-2).

  goldens.py                 compare (ctest dissector.goldens)
  goldens.py --regenerate    rewrite the goldens from the current plugin;
                             review the diff (git diff) before committing
  goldens.py [--regenerate] NAME...   only these captures (e.g. clean)

Runs the plugin from CHUNK_BUILD_DIR (default <repo>/build-dissector).
"""
import difflib
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chunktest as ct  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
PASSES = {"": [], ".2pass": ["-2"]}


def captures(names):
    # netgame-* have their own goldens (tests/netgame/goldens.py, -O netgame).
    caps = sorted(c for c in glob.glob(os.path.join(ct.REPO, "captures", "*.pcap"))
                  if not os.path.basename(c).startswith("netgame-"))
    if names:
        caps = [c for c in caps if os.path.basename(c)[:-5] in names]
    return caps


def main():
    args = sys.argv[1:]
    regen = "--regenerate" in args
    names = [a for a in args if not a.startswith("-")]
    caps = captures(names)
    if not caps:
        print("goldens: no captures found")
        return 1
    os.makedirs(GOLDEN, exist_ok=True)
    failed = 0
    for cap in caps:
        name = os.path.basename(cap)[:-5]
        for suffix, extra in PASSES.items():
            out = ct.tshark(["-r", cap, "-V", "-O", "chunk"] + extra)
            path = os.path.join(GOLDEN, name + suffix + ".txt")
            if regen:
                with open(path, "w") as f:
                    f.write(out)
                print("wrote", os.path.relpath(path, ct.REPO))
                continue
            if not os.path.exists(path):
                print("FAIL: %s: no golden (goldens.py --regenerate %s)" % (name + suffix, name))
                failed += 1
                continue
            with open(path) as f:
                want = f.read()
            if out != want:
                failed += 1
                diff = list(difflib.unified_diff(want.splitlines(), out.splitlines(),
                                                 "golden/" + name + suffix + ".txt", "tshark", lineterm="", n=2))
                print("FAIL: %s differs (%d diff lines):" % (name + suffix, len(diff)))
                print("\n".join(diff[:60]))
    if not regen:
        print("goldens: %d captures x %d passes, %d differ" % (len(caps), len(PASSES), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
