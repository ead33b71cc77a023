#!/usr/bin/env python3
"""Shared by the hostile-input tests of the protocols (chunk and p2frag:
dissector/tests/hostile/run-hostile.py; netgame, netcode, reliable): a pcap
writer of Ethernet/IPv4/UDP frames, and a timed tshark run against a
reference with the protocol disabled, with the bounds: the memory the plugin
adds (peak RSS minus the reference's) at most EXTRA_PER_BYTE x the capture's
size + EXTRA_SLACK_MB; CPU time (user + system, which the load of a shared
machine hardly changes, unlike wall time) at most TIME_RATIO x the
reference's + TIME_SLACK_S + TIME_PER_MIB_S per MiB of capture. The
reference runs first, and the plugin's run gets that bound as its CPU limit
(RLIMIT_CPU): a loop or a quadratic walk is stopped at the bound instead of
running to ctest's timeout. main() is a whole test: its command line, each
case's capture written, checked and removed."""
import argparse
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
CHUNK_TSHARK = os.path.join(REPO, "scripts", "chunk-tshark")
sys.path.insert(0, os.path.join(REPO, "scripts"))
from pcapfile import Writer  # noqa: E402,F401 (the tests' pcap writer: hostile_bounds.Writer)

# Memory: per connection or transfer an analysis keeps ~1-1.5 KiB, and
# Wireshark's own conversation (which the reference never creates) about as
# much; on captures of tiny packets that is at most ~11 bytes per capture byte.
# Beyond that, 16 MiB: the plugin's own fixed memory is under 1 MiB (a capture
# the analysis keeps nothing of adds 0.1-0.2 MiB), and a slack much larger
# than what the captures' state adds would hide state per packet in small
# captures (it was 48 MiB when the captures were 4 times larger).
EXTRA_PER_BYTE = 12
EXTRA_SLACK_MB = 16
# Time: CPU seconds of the tshark process and its children (user + system),
# not wall: on a shared machine wall time grows with the load (the former
# wall bound needed 20 s of slack, and dissector.hostile ran into ctest's
# timeout at a load average of 20), CPU time hardly. Three times the
# reference plus a second: a quadratic walk still fails (the slowdowns the
# captures are known to catch: docs/robustness.md, "Hostile captures").
# Plus a quarter second per MiB of capture: the reference skips big packets
# at no cost, while any decoder must at least read their bits.
TIME_RATIO = 3.0
TIME_SLACK_S = 1.0
TIME_PER_MIB_S = 0.25


def addr(i):
    """A distinct IPv4 address (4 bytes) for i < 2^22."""
    return bytes([10, 64 + (i >> 16), (i >> 8) & 0xFF, i & 0xFF])


def build_dir():
    """The build tree, or exit 2 (no plugin) / 77 (an ASan plugin: its
    memory says nothing about the bounds)."""
    build = os.environ.get("CHUNK_BUILD_DIR") or os.path.join(REPO, "build")
    try:
        with open(os.path.join(build, "plugin-dir.txt")) as f:
            so = os.path.join(build, f.read().strip(), "chunk.so")
    except OSError:
        print("no %s/plugin-dir.txt: build first" % build, file=sys.stderr)
        sys.exit(2)
    if not os.path.exists(so):
        print("no plugin at %s" % so, file=sys.stderr)
        sys.exit(2)
    undef = subprocess.run(["nm", "-D", "--undefined-only", so], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, universal_newlines=True).stdout
    if "__asan_" in undef:
        print("%s is built with ASan: skipped" % so)
        sys.exit(77)
    return build


def run_timed(args, env, cpu_limit=None):
    """(exit code, CPU seconds, peak MiB, stdout, stderr) of chunk-tshark
    args; CPU seconds: user + system of tshark (and the script's own few
    programs). cpu_limit: CPU seconds after which the kernel stops the run
    (SIGXCPU, then SIGKILL a second later): the exit code is then not 0 and
    the seconds are at least the limit."""
    tf = "/tmp/hostile-bounds.%d.time" % os.getpid()

    def limit():
        if cpu_limit is not None:
            s = int(math.ceil(cpu_limit))
            resource.setrlimit(resource.RLIMIT_CPU, (s, s + 1))
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", tf, CHUNK_TSHARK] + args, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit)
    with open(tf) as f:
        user, system, kb = f.read().strip().splitlines()[-1].split()
    os.unlink(tf)
    return (p.returncode, float(user) + float(system), int(kb) / 1024.0, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def time_bound(secs0, cap_mib):
    """The CPU seconds a plugin run may take: secs0 the reference's."""
    return TIME_RATIO * secs0 + TIME_SLACK_S + TIME_PER_MIB_S * cap_mib


def run_pair(args, ref_args, env, path):
    """The reference (chunk-tshark ref_args), then the plugin's run (args)
    with its time bound (plus a second, so that a run over the bound fails
    as one) as CPU limit: (rc, secs, mib, out, err) of the plugin's run, and
    of the reference's."""
    ref = run_timed(ref_args, env)
    cap_mib = os.path.getsize(path) / 1048576.0
    return run_timed(args, env, cpu_limit=time_bound(ref[1], cap_mib) + 1.0), ref


def env_for(build):
    env = dict(os.environ, WIRESHARK_ABORT_ON_DISSECTOR_BUG="1", WIRESHARK_ABORT_ON_TOO_MANY_ITEMS="1",
               LC_ALL="C", TZ="UTC")
    env.setdefault("CHUNK_BUILD_DIR", build)
    return env


# want_decoded of check(): every frame of the capture.
EVERY_FRAME = "every frame"


def bound_failures(name, secs, secs0, mib, mib0, cap_mib, per_byte=EXTRA_PER_BYTE, extra_mib=0.0):
    """The bounds a run broke, as failure lines: secs and mib the plugin's
    time and peak memory, secs0 and mib0 the reference's, cap_mib the
    capture's size; per_byte the memory bound per capture byte, extra_mib
    memory allowed on top (for a capture that needs it)."""
    out = []
    if mib - mib0 > per_byte * cap_mib + EXTRA_SLACK_MB + extra_mib:
        out.append("%s: the plugin adds %.1f MiB > %d x %.1f MiB + %d MiB%s" % (
            name, mib - mib0, per_byte, cap_mib, EXTRA_SLACK_MB, " + %.0f MiB" % extra_mib if extra_mib else ""))
    if secs > time_bound(secs0, cap_mib):
        out.append("%s: %.2f s of CPU > %.1f x %.2f s + %.0f s + %.2f s/MiB x %.1f MiB" % (
            name, secs, TIME_RATIO, secs0, TIME_SLACK_S, TIME_PER_MIB_S, cap_mib))
    return out


def check(name, path, count, args, protocol, env, failures, want_decoded=None, per_byte=EXTRA_PER_BYTE,
          fields=()):
    """Runs tshark -r path args -T fields -e _ws.col.Protocol (and -e each of
    fields) with the plugin and with --disable-protocol protocol; appends to
    failures what breaks a bound, a failed run, or fewer frames than
    want_decoded (a number or EVERY_FRAME) shown as the protocol (its column
    name, case-insensitive).
    per_byte: the memory bound per capture byte for this capture. Prints a
    row; returns (frames shown as the protocol, the plugin run's output)."""
    fields = ["-T", "fields", "-e", "_ws.col.Protocol"] + [a for f in fields for a in ("-e", f)]
    (rc, secs, mib, out, err), (rc0, secs0, mib0, _, err0) = run_pair(
        ["-r", path] + args + fields, ["-r", path, "--disable-protocol", protocol] + args + fields, env, path)
    cap_mib = os.path.getsize(path) / 1048576.0
    decoded = sum(1 for line in out.splitlines() if line.split("\t")[0].strip().lower() == protocol.lower())
    print("%-16s %8d %8d | %7.2f %7.2f | %7.1f %7.1f %7.1f" % (name, count, decoded, secs, secs0, mib, mib0, cap_mib))
    sys.stdout.flush()
    if rc0 == 0 and rc != 0 and secs > time_bound(secs0, cap_mib):
        failures += ["%s (stopped at that CPU limit)" % f for f in bound_failures(name, secs, secs0, 0, 0, cap_mib)]
        return decoded, out
    if rc != 0 or rc0 != 0 or "Dissector bug" in err or "CRITICAL" in err:
        failures.append("%s: tshark exit %d (reference %d): %s %s" % (name, rc, rc0, err[-2000:], err0[-500:]))
        return decoded, out
    if want_decoded == EVERY_FRAME:
        want_decoded = count
    if want_decoded is not None and decoded < want_decoded:
        failures.append("%s: %d frames shown as %s, want at least %d" % (name, decoded, protocol, want_decoded))
    failures += bound_failures(name, secs, secs0, mib, mib0, cap_mib, per_byte)
    return decoded, out


HEADER = "%-16s %8s %8s | %7s %7s | %7s %7s %7s" % ("capture", "frames", "decoded", "CPU s", "s off", "MiB", "MiB off",
                                                     "cap MiB")


def main(protocol, doc, cases, full=False, after=None):
    """The hostile test of protocol (doc: its module docstring, for --help):
    the command line (--work DIR, default a temporary folder, removed at the
    end; --only NAME;
    --keep; --full when full), the build tree (build_dir()), then each case
    of cases(args, build, env, work) written to <work>/<name>.pcap, check()ed,
    given to after(name, path, opts, count, output, failures) when there
    is one (output: the -T fields lines of the plugin's run), and removed
    unless --keep. A case: (name, write(path) -> frames,
    tshark options, frames that must be shown as protocol or None[, memory
    bound per capture byte (default EXTRA_PER_BYTE)[, further fields to
    print]]). Returns the exit status."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--work", help="folder for the captures (default: a temporary one)")
    if full:
        ap.add_argument("--full", action="store_true", help="the full sizes")
    ap.add_argument("--only", action="append", metavar="NAME")
    ap.add_argument("--keep", action="store_true", help="keep the captures")
    args = ap.parse_args()
    build = build_dir()
    env = env_for(build)
    work = args.work or tempfile.mkdtemp(prefix=protocol + "-hostile.")
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o755)
    failures = []
    print(HEADER)
    for name, write, opts, want, *bounds in cases(args, build, env, work):
        if args.only and name not in args.only:
            continue
        path = os.path.join(work, name + ".pcap")
        count = write(path)
        out = check(name, path, count, opts, protocol, env, failures, want, *bounds)[1]
        if after:
            after(name, path, opts, count, out, failures)
        if not args.keep:
            os.unlink(path)
    if not args.work and not args.keep:
        shutil.rmtree(work)
    for f in failures:
        print("FAIL " + f)
    print("%s.hostile: %s" % (protocol, "%d failure(s)" % len(failures) if failures else "ok"))
    return 1 if failures else 0
