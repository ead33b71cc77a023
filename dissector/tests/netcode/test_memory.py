#!/usr/bin/env python3
"""netcode.memory: with two passes (tshark -2, as the GUI keeps records)
netcode keeps little per frame: a frame shares its record with the earlier
frames of its connection that have the same one (dissect.c,
frame_record_share), so 64 connections at once, interleaved as a server
sees them (bench/netcode-capture.py: 64 copies of
captures/real-netcode-cs.pcapng, 38 016 frames, every packet decrypted),
cost at most 40 bytes a frame of peak memory over the same capture decoded
as data (a record and a proto data entry of its own were about 180).
Reliable's heuristic is off on the payload (netcode alone). Peak = peak RSS
of the tshark process (/usr/bin/time)."""
import os
import subprocess
import sys
import tempfile

import nctest as nc

KEY = "606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1"
COPIES = 64
BOUND = 40          # bytes a frame over data


def peak_kib(args):
    env = dict(os.environ)
    env.setdefault("CHUNK_BUILD_DIR", nc.ct.build_dir())
    env["WIRESHARK_ABORT_ON_DISSECTOR_BUG"] = "1"
    with tempfile.NamedTemporaryFile("r") as t:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name, nc.ct.CHUNK_TSHARK] + args, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            raise RuntimeError("tshark %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
        return int(t.read().split()[-1])


def main():
    if not os.path.exists("/usr/bin/time"):
        print("netcode.memory: needs /usr/bin/time")
        return 1
    F = nc.Failures()
    with nc.scratch_dir() as tmp:
        pcap = os.path.join(tmp, "netcode-64.pcap")
        subprocess.run([sys.executable, os.path.join(nc.REPO, "bench", "netcode-capture.py"),
                        os.path.join(nc.REPO, "captures", "real-netcode-cs.pcapng"), pcap, str(COPIES)],
                       check=True, stdout=subprocess.DEVNULL)
        os.chmod(pcap, 0o644)
        frames = len(nc.ct.tshark(["-r", pcap, "-T", "fields", "-e", "frame.number"] + nc.CHUNK_OFF).split())
        data = ["-2", "-r", pcap] + nc.CHUNK_OFF + ["-d", "udp.port==40000,data", "--disable-heuristic",
                                                   "netcode_udp"]
        full = ["-2", "-r", pcap] + nc.CHUNK_OFF + ["-o", "netcode.private_key:" + KEY, "--disable-heuristic",
                                                   "reliable_netcode"]
        decrypted = nc.ct.tshark(full + ["-T", "fields", "-e", "netcode.decrypted"]).split()
        F.check(len(decrypted) == frames and all(nc.truthy(d) for d in decrypted[COPIES:]),
                "not every packet decoded and decrypted (%d netcode of %d frames)" % (len(decrypted), frames))
        # the smaller of two runs each: a run's peak varies by a few pages
        d = min(peak_kib(data) for _ in range(2))
        f = min(peak_kib(full) for _ in range(2))
        per_frame = (f - d) * 1024.0 / frames
        print("netcode.memory: %d frames, -2 peak %d KiB, as data %d KiB: %.1f bytes a frame over data"
              % (frames, f, d, per_frame))
        F.check(per_frame <= BOUND, "-2 keeps %.1f bytes a frame over data, more than %d" % (per_frame, BOUND))
    F.finish("netcode.memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
