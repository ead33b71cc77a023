#!/usr/bin/env python3
"""reliable.memory and yojimbo.memory: with two passes (tshark -2, as the GUI
keeps what it shows on a revisit) reliable and yojimbo keep little per
frame. The capture: 64 connections at once, interleaved as a server sees
them (bench/netcode-capture.py: 64 copies of captures/real-yojimbo-loss.pcapng,
the real library's soak with fragmented packets, blocks and resends; 101 632
frames, private key of zeros). Peak = peak RSS of the tshark process
(/usr/bin/time), the smaller of two runs; each layer is measured over the one
below it (reliable: netcode + reliable against netcode alone; yojimbo: the
whole against netcode + reliable), in bytes a frame:

  reliable <= 100   its own reassembly (reliable/reasm.c: a completed
                    packet's bytes as chunks kept once, a packet that can no
                    longer complete dropped) instead of Wireshark's table:
                    229 before, 57 after
  yojimbo  <= 215   a frame's items packed (yojimbo/analysis.c, yj_kept_t):
                    244 before, 186-190 after

  test_memory.py reliable|yojimbo
"""
import os
import subprocess
import sys
import tempfile

import yjtest as y

KEY = "00" * 32
COPIES = 64
BOUNDS = {"reliable": 100, "yojimbo": 215}   # bytes a frame over the layer below
SOAK = ["-o", "yojimbo.channels:uu:8192,ro:10240:1024", "-o", "yojimbo.message_types:4",
        "-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")]


def peak_kib(args):
    env = dict(os.environ)
    env["WIRESHARK_ABORT_ON_DISSECTOR_BUG"] = "1"
    with tempfile.NamedTemporaryFile("r") as t:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name, y.TSHARK] + args, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            raise RuntimeError("tshark %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
        return int(t.read().split()[-1])


def main():
    layer = sys.argv[1] if len(sys.argv) == 2 else ""
    if layer not in BOUNDS:
        print(__doc__.strip())
        return 2
    if not os.path.exists("/usr/bin/time"):
        print("%s.memory: needs /usr/bin/time" % layer)
        return 77
    C = y.Checks(layer + ".memory")
    tmp = y.tmpdir()
    pcap = os.path.join(tmp, "yojimbo-64.pcap")
    subprocess.run([sys.executable, os.path.join(y.REPO, "bench", "netcode-capture.py"),
                    os.path.join(y.CAPTURES, "real-yojimbo-loss.pcapng"), pcap, str(COPIES)],
                   check=True, stdout=subprocess.DEVNULL)
    os.chmod(pcap, 0o644)
    base = ["-2", "-r", pcap, "--disable-protocol", "chunk", "-o", "netcode.private_key:" + KEY] + SOAK
    below = base + (["--disable-heuristic", "reliable_netcode"] if layer == "reliable"
                    else ["--disable-protocol", "yojimbo"])
    full = base + (["--disable-protocol", "yojimbo"] if layer == "reliable" else [])
    # The layer decodes: reassembled packets (reliable) and blocks (yojimbo).
    what = "reliable.fragments" if layer == "reliable" else "yojimbo.block.data"
    rows = y.tshark(full + ["-Y", what, "-T", "fields", "-e", "frame.number"]).stdout.split()
    frames = len(y.tshark(["-r", pcap, "-T", "fields", "-e", "frame.number"]).stdout.split())
    C.true("%s decodes (%d frames with %s)" % (layer, len(rows), what), len(rows) >= 500)
    b = min(peak_kib(below) for _ in range(2))
    f = min(peak_kib(full) for _ in range(2))
    per_frame = (f - b) * 1024.0 / frames
    print("%s.memory: %d frames, -2 peak %d KiB, the layers below %d KiB: %.1f bytes a frame"
          % (layer, frames, f, b, per_frame))
    C.true("-2 keeps %.1f bytes a frame, at most %d" % (per_frame, BOUNDS[layer]), per_frame <= BOUNDS[layer])
    subprocess.run(["rm", "-rf", tmp])
    C.done()


if __name__ == "__main__":
    sys.exit(main())
