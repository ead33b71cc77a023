#!/usr/bin/env python3
"""run-hostile.py: tshark with the chunk plugin on the hostile captures of
scripts/make-hostile-captures.py, against the same tshark with
--disable-protocol chunk (p2frag for the frag-* captures): time and peak
memory must stay bounded.

  run-hostile.py --work DIR              # ctest sizes (ctest dissector.hostile)
  run-hostile.py --work DIR --full       # the full sizes (long mode)
  run-hostile.py --work DIR --only conversations
  run-hostile.py --work DIR --protocol p2frag   # the frag-* captures (ctest dissector.hostile.p2frag)

For each capture it runs, through scripts/chunk-tshark (so as root too), with
WIRESHARK_ABORT_ON_DISSECTOR_BUG=1, under /usr/bin/time:

  plugin   tshark -r FILE [its options] -T fields -e _ws.col.Protocol
                  -e chunk.analysis.capped                one pass
  off      the same with --disable-protocol chunk          the reference, first

and fails when tshark fails, when not every frame is decoded as Chunk, when
the memory the plugin adds (peak RSS minus the reference's) exceeds
EXTRA_PER_BYTE x the capture's size + EXTRA_SLACK_MB (+ the state cap's
floor for chunk), when its CPU time exceeds TIME_RATIO x the reference's +
TIME_SLACK_S + TIME_PER_MIB_S per MiB of capture (the plugin's run is
stopped there: hostile_bounds.run_pair), or when the analysis' state cap
(chunk.analysis.capped) is hit where it must not be or not hit where it must.
Without the cap, 65 536 chunk ids of 256-slice chunks (10 MiB of capture)
made the plugin add 680 MiB, and 100 000 conversations (17 MiB) 1.1 GiB
(see docs/robustness.md, "Dissector"); at the ctest sizes, a quarter of
those, 182 and 294 MiB (measured with the cap taken out).
CHUNK_BUILD_DIR selects the build tree (its plugins/<major.minor>/epan/chunk.so,
named by its plugin-dir.txt).
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import hostile_bounds as hb  # noqa: E402

MAKE = os.path.join(hb.REPO, "scripts", "make-hostile-captures.py")

# Bounds (hostile_bounds.py): the reference is stock tshark on the same
# frames (UDP, data). The analysis keeps per-slice state up to 32 MiB + 2
# bytes per chunk packet byte, plus ~1.5 KiB per conversation and per
# transfer.
# Captures where the cap must be hit (and where not: all the others).
MUST_CAP = {"all-chunk-ids", "conversations"}
# The fragment protocol's captures (frag-*): decoded as P2frag, the
# reference is --disable-protocol p2frag, and there is no state cap (its
# state is per fragment seen, not per fragment claimed: docs/robustness.md).
FRAG_PREFIX = "frag-"
# Captures of many UDP conversations of one tiny datagram each (one a
# frame): the heuristic pins each conversation (Wireshark's conversation_t,
# protocol2's entry, ours) for ~1.6 KiB with its one incomplete packet,
# about 25 x the 68 bytes of its frame, so these get EXTRA_PER_CONV bytes
# per conversation on top of the per-byte bound (a state per claimed
# fragment would still fail: 4.6 KiB per conversation before it was made per
# fragment seen).
CONVERSATIONS = {"frag-conversations"}
# chunk's analysis may hold its state cap's floor (CHUNK_STATE_FLOOR in
# chunk/analysis.c, 32 MiB) whatever the capture's size.
CHUNK_STATE_FLOOR_MB = 32
EXTRA_PER_CONV = 1024


def capture_protocol(name):
    """(protocol to disable for the reference, its Protocol column, the
    cap field or None) of a hostile capture."""
    if name.startswith(FRAG_PREFIX):
        return "p2frag", "P2frag", None
    return "chunk", "Chunk", "chunk.analysis.capped"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", required=True, help="folder for the captures (build tree)")
    ap.add_argument("--full", action="store_true", help="the full sizes (long mode)")
    ap.add_argument("--only", action="append", metavar="NAME", help="only this capture")
    ap.add_argument("--protocol", choices=("chunk", "p2frag"), default="chunk",
                    help="the captures of this protocol (default chunk; p2frag: the frag-* ones)")
    ap.add_argument("--keep", action="store_true", help="keep the captures afterwards")
    args = ap.parse_args()

    # exits 2 without a plugin, 77 for an ASan one: time and memory of a
    # sanitized plugin are the sanitizer's (the fuzzers run it instead)
    env = hb.env_for(hb.build_dir())
    gen = [sys.executable, MAKE, args.work] + (["--full"] if args.full else [])
    if not args.only:
        names = subprocess.run([sys.executable, MAKE, "--list", args.work], stdout=subprocess.PIPE,
                               universal_newlines=True, check=True).stdout.split()
        args.only = [n for n in names if n.startswith(FRAG_PREFIX) == (args.protocol == "p2frag")]
    for n in args.only:
        gen += ["--only", n]
    p = subprocess.run(gen, stdout=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        print("run-hostile: make-hostile-captures.py failed", file=sys.stderr)
        return 2
    caps = [line.split("\t") for line in p.stdout.splitlines() if line]

    failures = []
    print("%-20s %9s | %8s %8s %6s | %8s %8s %6s" % ("capture", "frames", "CPU s", "s off", "ratio",
                                                    "MiB", "MiB off", "ratio"))
    for name, path, opts, count in caps:
        count = int(count)
        popts = opts.split() if opts else []
        proto, column, cap_field = capture_protocol(name)
        fields = ["-T", "fields", "-e", "_ws.col.Protocol"] + (["-e", cap_field] if cap_field else [])
        (rc, secs, mib, out, err), (rc0, secs0, mib0, _, err0) = hb.run_pair(
            ["-r", path] + popts + fields, ["-r", path, "--disable-protocol", proto] + fields, env, path)
        cap_mib = os.path.getsize(path) / 1048576.0
        print("%-20s %9d | %8.2f %8.2f %6.2f | %8.1f %8.1f %6.2f" % (
            name, count, secs, secs0, secs / max(secs0, 0.01), mib, mib0, mib / max(mib0, 1)))
        sys.stdout.flush()
        if rc0 == 0 and rc != 0 and secs > hb.time_bound(secs0, cap_mib):
            failures += ["%s (stopped at that CPU limit)" % f
                         for f in hb.bound_failures(name, secs, secs0, 0, 0, cap_mib)]
            continue
        if rc != 0 or rc0 != 0:
            failures.append("%s: tshark exit %d (reference %d): %s%s" % (name, rc, rc0, err[-2000:], err0[-500:]))
            continue
        rows = [line.split("\t") for line in out.splitlines()]
        chunk_rows = sum(1 for r in rows if r[0] == column)
        capped = sum(1 for r in rows if len(r) > 1 and r[1])
        print("    %d frames %s, %d not analysed (cap); capture %.1f MiB, plugin adds %.1f MiB" % (
            chunk_rows, column, capped, cap_mib, mib - mib0))
        if chunk_rows != count:
            failures.append("%s: %d of %d frames decoded as %s" % (name, chunk_rows, count, column))
        if cap_field and ((capped > 0) != (name in MUST_CAP) or capped == count):
            failures.append("%s: %d of %d frames over the state cap, expected %s" % (
                name, capped, count, "some but not all" if name in MUST_CAP else "none"))
        conv_mib = (count if name in CONVERSATIONS else 0) * EXTRA_PER_CONV / 1048576.0
        if proto == "chunk":
            conv_mib += CHUNK_STATE_FLOOR_MB
        failures += hb.bound_failures(name, secs, secs0, mib, mib0, cap_mib, extra_mib=conv_mib)
        if not args.keep:
            os.unlink(path)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
