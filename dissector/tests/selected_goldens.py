#!/usr/bin/env python3
"""Goldens of chosen frames of chosen captures, for a protocol with goldens
of its own (dissector/tests/<protocol>/golden/<major.minor>/, as netgame's):
tshark -V -O <protocol> on each case's capture with its options, one pass
(<case>.txt) and two (<case>.2pass.txt), the analysis over the whole capture
and the output cut to the case's frames (-Y), so a golden stays small enough
to review by hand. Another version's set must equal golden/4.0's once
Wireshark's own formatting changes are undone (goldens.py's
wireshark_formatting()).

A protocol's goldens script calls main(protocol, its golden folder, CASES),
CASES = {case: (capture file in captures/, "frame,numbers", [tshark options])};
an option "{captures}" in the options is replaced by the captures folder.

  <protocol>/goldens.py                 compare (ctest <protocol>.goldens)
  <protocol>/goldens.py --regenerate    rewrite them; review the diff before committing
"""
import difflib
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import chunktest as ct  # noqa: E402

# goldens.py (golden_dir, wireshark_formatting, check_golden), loaded by
# path: the protocols' scripts are named goldens.py too.
_spec = importlib.util.spec_from_file_location("chunk_goldens", os.path.join(HERE, "goldens.py"))
chunk_goldens = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(chunk_goldens)

PASSES = {"": [], ".2pass": ["-2"]}


def equivalent_to_40(goldens, golden):
    """Differences between the set golden and goldens/4.0 beyond Wireshark's
    formatting: [] when the decode is the same."""
    out = []
    base = os.path.join(goldens, "4.0")
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


def main(protocol, goldens, cases):
    regen = "--regenerate" in sys.argv[1:]
    golden = os.path.join(goldens, os.path.basename(chunk_goldens.golden_dir()))
    if not regen and not os.path.isdir(golden):
        print("FAIL: no reviewed %s goldens for this Wireshark (%s): goldens.py --regenerate, then "
              "compare with golden/4.0" % (protocol, os.path.relpath(golden, ct.REPO)))
        return 1
    os.makedirs(golden, exist_ok=True)
    captures = os.path.join(ct.REPO, "captures")
    failed = 0
    for name, (capture, frames, options) in sorted(cases.items()):
        cap = os.path.join(captures, capture)
        opts = [o.replace("{captures}", captures) for o in options]
        shown = " || ".join("frame.number == " + n for n in frames.split(","))
        for suffix, extra in PASSES.items():
            out = ct.tshark(["-r", cap, "-V", "-O", protocol, "-Y", shown] + opts + extra)
            # the key log's path differs between checkouts
            out = out.replace(captures + os.sep, "<captures>/")
            path = os.path.join(golden, name + suffix + ".txt")
            failed += chunk_goldens.check_golden(path, out, regen, name + suffix,
                                                 "FAIL: %s: no golden" % (name + suffix), name + suffix, ct.REPO)
    if not regen and os.path.basename(golden) != "4.0":
        for problem in equivalent_to_40(goldens, golden):
            failed += 1
            print("FAIL: not only Wireshark's formatting differs from golden/4.0:\n" + problem)
    if not regen:
        print("%s goldens: %d cases x %d passes, %d differ" % (protocol, len(cases), len(PASSES), failed))
    return 1 if failed else 0
