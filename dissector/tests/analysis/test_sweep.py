#!/usr/bin/env python3
"""No false alarms, and every fault found, over fresh chunk-sim runs.

    test_sweep.py [--seeds N]      (default 2 seeds per configuration)

Healthy runs under loss, latency, jitter, duplicates, reordering, a slow
link with a full router queue, both capture points, duplex and the 32-slice
variant must raise no chunk.analysis.flags at all (two passes). Each fault
must raise its own flag on the first pass already and nothing else but
"incomplete". chunk-sim comes from CHUNK_BUILD_DIR/bin.
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import chunktest as ct  # noqa: E402

HEALTHY = [
    "--loss 10% --latency 30ms",
    "--loss 30% --latency 50ms --jitter 10ms",
    "--loss 50% --latency 20ms --jitter 5ms --duplicate 10% --reorder 10%",
    "--loss 5% --latency 50ms --jitter 20ms",
    "--jitter 40ms --latency 50ms --duplicate 20% --reorder 20%",
    "--bandwidth 256kbit --latency 30ms",
    "--loss 20% --latency 30ms --capture-at receiver",
    "--duplex --loss 30% --latency 80ms --jitter 20ms",
    "--max-slices 32 --loss 10% --latency 25ms",
    "--burst 64K --loss 10% --latency 10ms",
    "--chunks 3 --chunk-size 200K --loss 5% --latency 40ms",
    "--first-chunk-id 65530 --chunks 12 --chunk-size 4K --loss 10% --latency 10ms",
]

F_INCOMPLETE = 0x1000
FAULTS = [
    ("--drop-acks --time-limit 3", 0x40),
    ("--receiver-never-pops --time-limit 3", 0x80),
    ("--sender-ignores-acks --time-limit 3", 0x02),
    ("--drop-slice 2 --time-limit 4 --loss 10% --latency 20ms", 0x20),
    ("--no-resend-delay --loss 10% --latency 10ms", 0x01),
]


def flags(pcap, spans, two_pass):
    """{capture: its chunk.analysis.flags ored} of the concatenated pcap
    (chunktest.concat_captures' spans)."""
    args = (["-2"] if two_pass else []) + ["-r", pcap, "-T", "fields", "-e", "frame.number",
                                           "-e", "chunk.analysis.flags"]
    out = {os.path.basename(path): 0 for path, _, _ in spans}
    for line in ct.tshark(args).splitlines():
        number, _, values = line.partition("\t")
        for v in values.split(","):
            if v:
                out[ct.capture_of_frame(spans, int(number))] |= int(v, 16)
    return out


def main():
    seeds = 2
    if len(sys.argv) == 3 and sys.argv[1] == "--seeds":
        seeds = int(sys.argv[2])
    elif len(sys.argv) != 1:
        print(__doc__)
        return 2
    sim = os.path.join(ct.build_dir(), "bin", "chunk-sim")
    fail = ct.Failures()
    if not fail.check(os.access(sim, os.X_OK), sim + " not built"):
        fail.finish("analysis sweep")
    tmp = tempfile.mkdtemp(prefix="chunk-sweep-")
    os.chmod(tmp, 0o755)
    # Every simulator run a file of its own; the healthy ones and the
    # faults each read in one tshark run a pass (concatenated: each run's
    # addresses its own, chunktest.concat_captures).
    runs = {True: [], False: []}     # healthy? -> [(pcap, opts, seed, want)]
    for opts, want in [(h, 0) for h in HEALTHY] + FAULTS:
        for seed in range(1, seeds + 1):
            pcap = os.path.join(tmp, "run%d.pcap" % sum(len(v) for v in runs.values()))
            cmd = "%s %s --seed %d -q -w %s" % (sim, opts, seed, pcap)
            rc = os.system(cmd + " > /dev/null")
            if not fail.check(os.WEXITSTATUS(rc) == 0, "%s: exit %d" % (cmd, os.WEXITSTATUS(rc))):
                continue
            os.chmod(pcap, 0o644)
            runs[want == 0].append((pcap, opts, seed, want))
    for healthy, items in runs.items():
        if not items:
            continue
        merged = os.path.join(tmp, "healthy.pcap" if healthy else "faults.pcap")
        spans = ct.concat_captures([pcap for pcap, _, _, _ in items], merged)
        two = flags(merged, spans, True)
        one = {} if healthy else flags(merged, spans, False)   # a healthy run: -2 alone is checked
        for pcap, opts, seed, want in items:
            got2 = two[os.path.basename(pcap)]
            if healthy:
                fail.check(got2 == 0, "%s (seed %d): false alarm, flags 0x%x" % (opts, seed, got2))
            else:
                got1 = one[os.path.basename(pcap)]
                fail.check(got1 & want, "%s (seed %d): flag 0x%x not raised in one pass (0x%x)" % (opts, seed, want, got1))
                fail.check(got2 & ~(want | F_INCOMPLETE) == 0,
                           "%s (seed %d): other flags 0x%x" % (opts, seed, got2 & ~(want | F_INCOMPLETE)))
            os.remove(pcap)
        os.remove(merged)
    os.rmdir(tmp)
    runs = sum(len(v) for v in runs.values())
    fail.finish("analysis sweep (%d runs)" % runs)


if __name__ == "__main__":
    sys.exit(main())
