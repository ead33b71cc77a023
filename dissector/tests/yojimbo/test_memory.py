#!/usr/bin/env python3
"""reliable.memory and yojimbo.memory: with two passes (tshark -2, as the GUI
keeps what it shows on a revisit) reliable and yojimbo keep little per
frame. The capture: 64 connections at once, interleaved as a server sees
them (bench/netcode-capture.py: 64 copies of captures/real-yojimbo-loss.pcapng,
the real library's soak with fragmented packets, blocks and resends; 101 632
frames, private key of zeros). Peak = peak RSS of the tshark process
(/usr/bin/time), one run each (the peak moves by at most 270 KiB, 2.7 bytes
a frame, between runs); each layer is measured over the one below it
(reliable: netcode + reliable against netcode alone; yojimbo: the whole
against netcode + reliable), in bytes a frame; the layer must decode in the
same run (its Info text says what it reassembled):

  reliable <= 100   its own reassembly (a completed packet's bytes as
                    chunks kept once, a packet that can no longer complete
                    dropped; common/reasm-store.c) instead of Wireshark's
                    table: 229 before (93d4eb4), 55-61 after (80.5 on
                    Wireshark 4.6 in Debian sid)
  yojimbo  <= 150   a frame's items packed (yojimbo/analysis.c), 244
                    before (93d4eb4), 186-190 with them (5cffcc9); blocks
                    in the common store instead of Wireshark's table, and
                    the packed records end to end in blocks by a 32-bit word
                    a frame: 128-130

  test_memory.py reliable|yojimbo
"""
import os
import struct
import subprocess
import sys
import tempfile

import yjtest as y

KEY = "00" * 32
COPIES = 64
BOUNDS = {"reliable": 100, "yojimbo": 150}   # bytes a frame over the layer below
SOAK = ["-o", "yojimbo.channels:uu:8192,ro:10240:1024", "-o", "yojimbo.message_types:4",
        "-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")]


def peak_kib(args):
    """(peak KiB, stdout) of a tshark run."""
    env = dict(os.environ)
    env["WIRESHARK_ABORT_ON_DISSECTOR_BUG"] = "1"
    with tempfile.NamedTemporaryFile("r") as t:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name, y.TSHARK] + args, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            raise RuntimeError("tshark %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
        return int(t.read().split()[-1]), p.stdout


def pcap_frames(path):
    """The records of a pcap file (bench/netcode-capture.py writes one)."""
    n = 0
    with open(path, "rb") as f:
        f.seek(24)
        while True:
            h = f.read(16)
            if len(h) < 16:
                return n
            f.seek(struct.unpack("<IIII", h)[2], 1)
            n += 1


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
    # The layer decodes: its Info text of a reassembled packet (reliable)
    # or block (yojimbo), in the summary lines of the measured run.
    what = " [Reassembled " if layer == "reliable" else " bytes reassembled)"
    frames = pcap_frames(pcap)
    b, _ = peak_kib(below)
    f, out = peak_kib(full)
    rows = [line for line in out.splitlines() if what in line]
    C.true("%s decodes (%d frames with '%s')" % (layer, len(rows), what.strip()), len(rows) >= 500)
    per_frame = (f - b) * 1024.0 / frames
    print("%s.memory: %d frames, -2 peak %d KiB, the layers below %d KiB: %.1f bytes a frame"
          % (layer, frames, f, b, per_frame))
    C.true("-2 keeps %.1f bytes a frame, at most %d" % (per_frame, BOUNDS[layer]), per_frame <= BOUNDS[layer])
    subprocess.run(["rm", "-rf", tmp])
    C.done()


if __name__ == "__main__":
    sys.exit(main())
