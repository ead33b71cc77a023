#!/usr/bin/env python3
"""tshark -V -O <every protocol of the plugin> on every capture in captures/
(but those of a protocol with goldens of its own, dissector/tests/<protocol>/golden:
<protocol>-*.pcap and real-<protocol>-*.pcap) against its reviewed
golden output in dissector/tests/golden/<major.minor>/, the set for the
Wireshark the plugin was built against (<build>/plugin-dir.txt):
<capture>.txt (one pass) and <capture>.2pass.txt (-2).

Wireshark's -V text changes between minor versions ("Data […]:", cut labels,
times in milliseconds on 4.6, ...), so each version has its own set; the
decode in them must be the same: for another version, the test also checks
that its set equals golden/4.0's once the formatting changes Wireshark made
(wireshark_formatting(), each reviewed by hand) are undone. The analysis and decoder tests compare field values
and do not depend on this text.

  goldens.py                 compare (ctest dissector.goldens)
  goldens.py --regenerate    rewrite the goldens from the current plugin;
                             review the diff (git diff) before committing
  goldens.py [--regenerate] NAME...   only these captures (e.g. clean)

Runs the plugin from CHUNK_BUILD_DIR (default <repo>/build-dissector).
Another Wireshark's set: scripts/test-wireshark.sh --run
'python3 dissector/tests/goldens.py --regenerate' 4.6
"""
import difflib
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chunktest as ct  # noqa: E402

GOLDENS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def golden_dir():
    """golden/<major.minor> for the Wireshark of the build tree."""
    with open(os.path.join(ct.build_dir(), "plugin-dir.txt")) as f:
        sub = f.read().strip()          # plugins/<major.minor>/epan
    return os.path.join(GOLDENS, sub.split("/")[1])
PASSES = {"": [], ".2pass": ["-2"]}


# What Wireshark changed in -V text after 4.0, and only that: a set of
# another version, with these undone, must equal golden/4.0 line for line.
def wireshark_formatting(line):
    # 4.4: bytes fields print in full after "<label> […]:"; 4.0 cut them at 36 bytes with "…".
    line = re.sub(r"^(\s*\[?[A-Za-z][\w ]*?)( \[…\])?: ([0-9a-f]{72})[0-9a-f]*…?", r"\1: \3", line)
    # 4.6: "Frame N: Packet, ..."
    line = re.sub(r"^Frame (\d+): Packet, ", r"Frame \1: ", line)
    # 4.6: relative times under a second in milliseconds, under a millisecond
    # in microseconds: every time is compared in seconds, to 10 digits
    scale = {"seconds": 1.0, "milliseconds": 1e-3, "microseconds": 1e-6}
    line = re.sub(r"(\d+(?:\.\d+)?) (seconds|milliseconds|microseconds)\b",
                  lambda m: "%.10g seconds" % (float(m.group(1)) * scale[m.group(2)]), line)
    # 4.6: doubles with up to 17 significant digits (4.0: 15); compared to 10
    # digits, since rounding the two texts to 12 can land either side of a 5
    line = re.sub(r"(?<![0-9a-fx.])(\d+\.\d{7,})(?![0-9a-f])", lambda m: "%.10g" % float(m.group(1)), line)
    # 4.4: a label Wireshark cut at its length limit starts with "[…] " and is cut elsewhere
    line = line.replace("[[…] ", "[")
    return line[:200]


def equivalent_to_40(golden):
    """Lines of the set golden that differ from golden/4.0 in more than
    Wireshark's formatting: [] when the decode is the same."""
    base = os.path.join(GOLDENS, "4.0")
    out = []
    for name in sorted(os.listdir(base)):
        other = os.path.join(golden, name)
        if not os.path.exists(other):
            out.append("%s: missing" % os.path.relpath(other, GOLDENS))
            continue
        a = [wireshark_formatting(x) for x in open(os.path.join(base, name)).read().splitlines()]
        b = [wireshark_formatting(x) for x in open(other).read().splitlines()]
        if a != b:
            diff = list(difflib.unified_diff(a, b, "4.0/" + name, os.path.relpath(other, GOLDENS), lineterm="", n=0))
            out.append("\n".join(diff[:20]))
    return out


def own_goldens():
    """Capture name prefixes ("netgame-", and "real-netgame-" for a real
    library's captures) of the protocols that have goldens of their own
    (dissector/tests/<protocol>/golden, e.g. netgame's): their captures are
    theirs to choose from and to decode with their keys and preferences."""
    here = os.path.dirname(os.path.abspath(__file__))
    own = [p for p in ct.plugin_protocols() if os.path.isdir(os.path.join(here, p, "golden"))]
    return tuple(p + "-" for p in own) + tuple("real-" + p + "-" for p in own)


def captures(names):
    # foreign-traffic.pcap has no game traffic (test_foreign.py).
    own = own_goldens()
    caps = sorted(c for c in glob.glob(os.path.join(ct.REPO, "captures", "*.pcap"))
                  if not os.path.basename(c).startswith(own)
                  and os.path.basename(c) != "foreign-traffic.pcap")
    if names:
        caps = [c for c in caps if os.path.basename(c)[:-5] in names]
    return caps


def check_golden(path, out, regen, label, missing, diff_name, repo):
    """With regen, writes out to the golden file path; otherwise compares it
    with that file and prints what differs (label names the golden, missing
    is the line printed when there is none, diff_name the golden's name in
    the diff). Returns 1 when out is not the golden, else 0."""
    if regen:
        with open(path, "w") as f:
            f.write(out)
        print("wrote", os.path.relpath(path, repo))
        return 0
    if not os.path.exists(path):
        print(missing)
        return 1
    with open(path) as f:
        want = f.read()
    if out == want:
        return 0
    diff = list(difflib.unified_diff(want.splitlines(), out.splitlines(), diff_name, "tshark", lineterm="", n=2))
    print("FAIL: %s differs (%d diff lines):" % (label, len(diff)))
    print("\n".join(diff[:60]))
    return 1


def main():
    args = sys.argv[1:]
    regen = "--regenerate" in args
    names = [a for a in args if not a.startswith("-")]
    caps = captures(names)
    if not caps:
        print("goldens: no captures found")
        return 1
    GOLDEN = golden_dir()
    if not regen and not os.path.isdir(GOLDEN):
        print("FAIL: no reviewed goldens for this Wireshark (%s): goldens.py --regenerate, then compare "
              "with golden/4.0 and keep only Wireshark's formatting changes" % os.path.relpath(GOLDEN, ct.REPO))
        return 1
    os.makedirs(GOLDEN, exist_ok=True)
    failed = 0
    for cap in caps:
        name = os.path.basename(cap)[:-5]
        for suffix, extra in PASSES.items():
            out = ct.tshark(["-r", cap, "-V", "-O", ",".join(ct.plugin_protocols())] + extra)
            path = os.path.join(GOLDEN, name + suffix + ".txt")
            failed += check_golden(path, out, regen, name + suffix,
                                   "FAIL: %s: no golden (goldens.py --regenerate %s)" % (name + suffix, name),
                                   os.path.relpath(path, GOLDENS), ct.REPO)
    if not regen and os.path.basename(GOLDEN) != "4.0" and not names:
        # This version's reviewed set says what 4.0's says.
        for d in equivalent_to_40(GOLDEN):
            failed += 1
            print("FAIL: differs from golden/4.0 in more than Wireshark's formatting:\n" + d)
    if not regen:
        print("goldens (%s): %d captures x %d passes, %d differ" % (
            os.path.relpath(GOLDEN, ct.REPO), len(caps), len(PASSES), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
