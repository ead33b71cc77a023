#!/usr/bin/env python3
"""hostile.py: hostile netgame captures, tshark with the plugin against
tshark with --disable-protocol netgame: every frame decoded, time and peak
memory bounded (docs/robustness.md, "netgame").

  hostile.py --work DIR            # ctest sizes (ctest netgame.hostile)
  hostile.py --work DIR --full     # the full sizes
  hostile.py --work DIR --only conversations

Captures (written here, Ethernet/IPv4/UDP to port 30000, one pass):

  seq-jumps      two sides whose sequences and acks jump by 2^31 (and odd
                 amounts) every packet, 1 us apart
  ack-bits       every single-bit, every per-byte value (4 x 256), every
                 prefix mask and random ack-bit patterns, acking a peer that
                 sends consecutive sequences
  conversations  100 000 connections, one packet each way
  never-acked    one side sends without an answer, 1 us apart (ctest
                 250 000, --full 1 000 000), all within the 1 s loss window

Bounds as dissector/tests/hostile/run-hostile.py: the memory the plugin adds
(peak RSS minus the reference's) at most EXTRA_PER_BYTE x the capture's size
+ EXTRA_SLACK_MB; time at most TIME_RATIO x the reference + TIME_SLACK_S +
TIME_PER_MIB_S per MiB. CHUNK_BUILD_DIR selects the build tree.
"""
import argparse
import os
import random
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CHUNK_TSHARK = os.path.join(REPO, "scripts", "chunk-tshark")

# Memory: per connection the analysis keeps ~1 KiB and Wireshark's own
# conversation (which the reference never creates) about as much; 100 000
# connections of one packet each way (16 MiB of capture) are the worst case.
EXTRA_PER_BYTE = 12
EXTRA_SLACK_MB = 48
TIME_RATIO = 3.0
TIME_SLACK_S = 20.0
TIME_PER_MIB_S = 1.0
ID = 0x11223344


def ip_csum(h):
    s = sum(struct.unpack("!10H", h))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


class Writer:
    def __init__(self, path):
        self.f = open(path, "wb")
        self.f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        self.n = 0

    def add(self, t_us, payload, src, sport, dst, dport):
        udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", ip_csum(ip)) + ip[12:]
        frame = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip + udp
        self.f.write(struct.pack("<IIII", t_us // 1000000, t_us % 1000000, len(frame), len(frame)) + frame)
        self.n += 1

    def close(self):
        self.f.close()
        return self.n


A = bytes([10, 9, 0, 1])
B = bytes([10, 9, 0, 2])


def hdr(seq, ack, bits):
    return struct.pack(">IIII", ID, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, bits & 0xFFFFFFFF) + b"\0" * 8


def seq_jumps(path, n):
    w = Writer(path)
    rnd = random.Random(1)
    sa = sb = 0
    for i in range(n // 2):
        sa = (sa + (1 << 31) + rnd.choice((0, 1, 3, 7, 33))) & 0xFFFFFFFF
        sb = (sb + (1 << 31) - rnd.choice((0, 1, 5))) & 0xFFFFFFFF
        w.add(2 * i, hdr(sa, sb ^ (1 << 31), rnd.getrandbits(32)), A, 30001, B, 30000)
        w.add(2 * i + 1, hdr(sb, sa, rnd.getrandbits(32)), B, 30000, A, 30001)
    return w.close()


def ack_bits(path, n_random):
    patterns = [1 << i for i in range(32)]
    patterns += [v << (8 * b) for b in range(4) for v in range(256)]
    patterns += [(1 << k) - 1 for k in range(33)] + [0xFFFFFFFF ^ ((1 << k) - 1) for k in range(33)]
    rnd = random.Random(2)
    patterns += [rnd.getrandbits(32) for _ in range(n_random)]
    w = Writer(path)
    t = 0
    for i, bits in enumerate(patterns):
        w.add(t, hdr(i, 0, 0xFFFFFFFF), A, 30001, B, 30000)     # A's sequence i
        w.add(t + 1, hdr(i, i, bits), B, 30000, A, 30001)        # B acks i with the pattern
        t += 1000
    return w.close()


# UDP ports another dissector registers (tshark -G decodes): UDP asks that
# dissector before netgame's port heuristic, so a client there is not
# netgame's without Decode As (docs/netgame.md). Filled in by main().
TAKEN_PORTS = set()


def taken_udp_ports(env):
    out = subprocess.run([CHUNK_TSHARK, "-G", "decodes"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True).stdout
    return {int(f[1]) for f in (line.split("\t") for line in out.splitlines())
            if len(f) >= 3 and f[0] == "udp.port" and f[1].isdigit() and f[2] != "netgame"}


def conversations(path, n):
    w = Writer(path)
    free = [p for p in range(30001, 65536) if p not in TAKEN_PORTS]
    for i in range(n):
        src = bytes([10, 20 + (i >> 16), (i >> 8) & 0xFF, i & 0xFF])
        port = free[i % len(free)]
        w.add(2 * i, hdr(0, 0, 0), src, port, B, 30000)
        w.add(2 * i + 1, hdr(0, 0, 1), B, 30000, src, port)
    return w.close()


def never_acked(path, n):
    w = Writer(path)
    for i in range(n):
        w.add(i, hdr(i, 0, 0), A, 30001, B, 30000)
    return w.close()


def run_timed(args, env):
    tf = "/tmp/netgame-hostile.%d.time" % os.getpid()
    p = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", tf, CHUNK_TSHARK] + args, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    with open(tf) as f:
        secs, kb = f.read().strip().splitlines()[-1].split()
    os.unlink(tf)
    return p.returncode, float(secs), int(kb) / 1024.0, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", required=True, help="folder for the captures")
    ap.add_argument("--full", action="store_true", help="the full sizes")
    ap.add_argument("--only", action="append", metavar="NAME")
    ap.add_argument("--keep", action="store_true", help="keep the captures")
    args = ap.parse_args()
    build = os.environ.get("CHUNK_BUILD_DIR") or os.path.join(REPO, "build")
    try:
        with open(os.path.join(build, "plugin-dir.txt")) as f:
            plugsub = f.read().strip()      # plugins/<major.minor>/epan, the Wireshark built against
    except OSError:
        print("hostile.py: no %s/plugin-dir.txt: build first" % build, file=sys.stderr)
        return 2
    so = os.path.join(build, plugsub, "chunk.so")
    if not os.path.exists(so):
        print("hostile.py: no plugin at %s" % so, file=sys.stderr)
        return 2
    undef = subprocess.run(["nm", "-D", "--undefined-only", so], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, universal_newlines=True).stdout
    if "__asan_" in undef:
        print("hostile.py: %s is built with ASan: skipped" % so)
        return 77
    os.makedirs(args.work, exist_ok=True)
    os.chmod(args.work, 0o755)
    caps = [
        ("seq-jumps", seq_jumps, 1000000 if args.full else 200000),
        ("ack-bits", ack_bits, 1000000 if args.full else 100000),
        ("conversations", conversations, 100000),
        ("never-acked", never_acked, 1000000 if args.full else 250000),
    ]
    env = dict(os.environ, WIRESHARK_ABORT_ON_DISSECTOR_BUG="1", WIRESHARK_ABORT_ON_TOO_MANY_ITEMS="1",
               LC_ALL="C")
    env.setdefault("CHUNK_BUILD_DIR", build)
    TAKEN_PORTS.update(taken_udp_ports(env))
    failures = []
    print("%-14s %9s | %8s %8s %6s | %8s %8s %8s" % ("capture", "frames", "s", "s off", "ratio", "MiB", "MiB off",
                                                    "cap MiB"))
    for name, gen, size in caps:
        if args.only and name not in args.only:
            continue
        path = os.path.join(args.work, name + ".pcap")
        t0 = time.monotonic()
        count = gen(path, size)
        os.chmod(path, 0o644)
        fields = ["-T", "fields", "-e", "_ws.col.Protocol", "-e", "netgame.analysis.flags"]
        rc, secs, mib, out, err = run_timed(["-r", path] + fields, env)
        rc0, secs0, mib0, _, err0 = run_timed(["-r", path, "--disable-protocol", "netgame"] + fields, env)
        cap_mib = os.path.getsize(path) / 1048576.0
        print("%-14s %9d | %8.2f %8.2f %6.2f | %8.1f %8.1f %8.1f   (written in %.1f s)" % (
            name, count, secs, secs0, secs / max(secs0, 0.01), mib, mib0, cap_mib, time.monotonic() - t0))
        sys.stdout.flush()
        if rc != 0 or rc0 != 0:
            failures.append("%s: tshark exit %d (reference %d): %s %s" % (name, rc, rc0, err[-2000:], err0[-500:]))
            continue
        decoded = sum(1 for line in out.splitlines() if line.startswith("Netgame"))
        if decoded != count:
            failures.append("%s: %d of %d frames decoded as netgame" % (name, decoded, count))
        if mib - mib0 > EXTRA_PER_BYTE * cap_mib + EXTRA_SLACK_MB:
            failures.append("%s: the plugin adds %.1f MiB > %d x %.1f MiB + %d MiB" % (
                name, mib - mib0, EXTRA_PER_BYTE, cap_mib, EXTRA_SLACK_MB))
        if secs > TIME_RATIO * secs0 + TIME_SLACK_S + TIME_PER_MIB_S * cap_mib:
            failures.append("%s: %.2f s > %.1f x %.2f s + %.0f s + %.1f s/MiB x %.1f MiB" % (
                name, secs, TIME_RATIO, secs0, TIME_SLACK_S, TIME_PER_MIB_S, cap_mib))
        if not args.keep:
            os.unlink(path)
    for f in failures:
        print("FAIL " + f)
    print("netgame.hostile: %s" % ("%d failure(s)" % len(failures) if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
