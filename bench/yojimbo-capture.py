#!/usr/bin/env python3
"""bench/yojimbo-capture.py: a large yojimbo capture with its key log, for
bench/yojimbo.sh. Runs yojimbo-sim RUNS times (seeds 1..RUNS, each its own
keys), each run DURATION virtual seconds with messages both ways on channel 0,
blocks from the client on channel 1 and 2% loss each way, and merges the runs
as one busy server sees them: the same times, each run's client on a port of
its own (50000 + run index), so every run is a connection of its own with its
own handshake. The key log is the runs' key logs together. Output: classic
pcap (Ethernet), UDP checksums zeroed (the port changed).

usage: bench/yojimbo-capture.py YOJIMBO_SIM OUTPUT.pcap OUTPUT.keys [RUNS [DURATION]]
       (defaults: 6 runs of 500 s: about 570 000 frames)
"""
import heapq
import os
import struct
import subprocess
import sys
import tempfile


def frames(path):
    data = open(path, "rb").read()
    if struct.unpack_from("<I", data, 0)[0] != 0xA1B2C3D4:
        raise SystemExit("yojimbo-capture: %s is not a little-endian microsecond pcap" % path)
    off = 24
    while off + 16 <= len(data):
        sec, usec, cap, orig = struct.unpack_from("<IIII", data, off)
        yield (sec * 1000000 + usec, data[off + 16:off + 16 + cap], orig)
        off += 16 + cap


def tagged(it, run):
    for t, f, o in it:
        yield t, run, f, o


def reported(frame, port):
    """The frame with the client's port (50000) replaced by PORT, UDP checksum 0."""
    f = bytearray(frame)
    if len(f) < 42 or f[12:14] != b"\x08\x00" or f[23] != 17:
        return bytes(f)
    u = 14 + (f[14] & 0x0F) * 4
    sp, dp = struct.unpack_from("!HH", f, u)
    if sp == 50000:
        sp = port
    if dp == 50000:
        dp = port
    struct.pack_into("!HH", f, u, sp, dp)
    struct.pack_into("!H", f, u + 6, 0)
    return bytes(f)


def main():
    a = sys.argv[1:]
    if len(a) not in (3, 4, 5) or a[0] in ("-h", "--help"):
        print(__doc__.strip())
        raise SystemExit(0 if a and a[0] in ("-h", "--help") else 2)
    sim, out, keys = a[0], a[1], a[2]
    runs = int(a[3]) if len(a) > 3 else 6
    duration = float(a[4]) if len(a) > 4 else 500.0
    if runs < 1 or runs > 1000 or duration <= 0:
        raise SystemExit("yojimbo-capture: RUNS 1..1000 and DURATION > 0")
    work = tempfile.mkdtemp(prefix="yojimbo-capture-")
    streams = []
    keylog = []
    msgs = str(min(10000, int(duration * 20)))
    for i in range(runs):
        p = os.path.join(work, "run%d.pcap" % i)
        k = os.path.join(work, "run%d.keys" % i)
        cmd = [sim, "--seed", str(i + 1), "--duration", str(duration), "--messages", msgs,
               "--server-messages", msgs, "--message-rate", "20", "--blocks", str(max(1, int(duration / 10))),
               "--block-size", "8000", "--loss", "0.02", "--latency", "0.03", "-w", p, "--keys", k, "-q"]
        r = subprocess.run(cmd)
        if r.returncode not in (0, 1):
            raise SystemExit("yojimbo-capture: %s failed (%d)" % (" ".join(cmd), r.returncode))
        keylog.append("# run %d: client port %d\n" % (i, 50000 + i) + open(k).read())
        streams.append(tagged(frames(p), i))
    with open(out, "wb") as w:
        w.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        n = 0
        for t, i, f, o in heapq.merge(*streams, key=lambda x: (x[0], x[1])):
            f = reported(f, 50000 + i)
            w.write(struct.pack("<IIII", t // 1000000, t % 1000000, len(f), o))
            w.write(f)
            n += 1
    with open(keys, "w") as w:
        w.write("".join(keylog))
    for name in os.listdir(work):
        os.remove(os.path.join(work, name))
    os.rmdir(work)
    print("yojimbo-capture: %d runs, %d frames -> %s, keys %s" % (runs, n, out, keys))


if __name__ == "__main__":
    main()
