#!/usr/bin/env python3
"""test_single_pass_memory.py: tshark's single pass keeps memory bounded
(common/single-pass.c, docs/architecture.md "tshark's single pass").

On long crafted captures of the two protocols that reassemble in buffers of
their own there (chunk: 32 MiB of transfers; p2frag: 32 MiB of fragmented
packets), `tshark -q -z chunkshark,single_pass`:
  - one pass: every reassembly but the first (begun in the file's first
    frame, never taken as the single pass) made in an own buffer, the
    buffers holding at most OWN_PEAK_MAX bytes at once whatever the length,
    and tshark's peak memory at least half the reassembled bytes below the
    same run with <protocol>.single_pass off (where the table keeps every
    reassembly for the whole file);
  - with the preference off: no own buffer.
A hostile p2frag capture (packets claiming 255 fragments, each sending one,
never completed) keeps the buffers' count within p2frag's budget.
And the output does not depend on the path: -V of the first frames of each
capture is the same in one pass with the preference on and off, and their
data sources (-x: the frames and every reassembled packet) in one pass and
with -2.
If the recognition of the single pass or the buffers broke, the counts or
the memory would show it. Exit 0 when all hold, 1 otherwise.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "p2frag"))
import chunktest as ct  # noqa: E402
import p2fragtest as pt  # noqa: E402

PAYLOAD = 32 << 20            # bytes reassembled in each long capture
PIECES = 48                   # pieces (slices, fragments) a reassembly
OWN_PEAK_MAX = 1 << 20        # own buffers' bytes at once, one reassembly at a time
P2FRAG_BUDGET = 64 << 20      # p2frag/analysis.c, P2FRAG_SP_BUDGET
HOSTILE_PACKETS = 1500        # x 255 KiB claimed: well over the budget
SAME_OUTPUT_FRAMES = 400
LINE = re.compile(r"chunkshark single pass: (\d+) reassemblies in own buffers, at most (\d+) bytes held "
                  r"at once; (\d+) reassembled by the table, their data freed")


def piece(i, k, size):
    return bytes(((i * 131 + k * 7 + j) & 0xFF) for j in range(16)) * (size // 16)


def chunk_capture(path):
    """The encoders go bit by bit, too slow for 32 MiB: each slice's header
    is encoded once (chunk id 0), the chunk id then set in its bits (1-16,
    LSB first), and the data appended (checked against the encoder)."""
    n = PAYLOAD // (PIECES * ct.SLICE_SIZE)
    size = ct.SLICE_SIZE
    heads = []
    for k in range(PIECES):
        body = ct.slice_body(0, k, PIECES, bytes(size))
        heads.append(body[:len(body) - size - len(ct.END_CHECK)])

    def body(i, k):
        h = heads[k]
        v = int.from_bytes(h[:3], "little") & ~(0xFFFF << 1) | (i % 65536) << 1
        return v.to_bytes(3, "little") + h[3:] + piece(i, k, size) + ct.END_CHECK

    for i, k in ((5, 0), (300, PIECES - 1)):
        assert body(i, k) == ct.slice_body(i, k, PIECES, piece(i, k, size))
    ct.write_pcap(path, [ct.seal(body(i, k)) for i in range(n) for k in range(PIECES)])
    return n


def p2frag_capture(path):
    """As chunk_capture: the header encoded, the data appended."""
    n = PAYLOAD // (PIECES * pt.FRAGMENT_SIZE)

    def body(i, k):
        return pt.fragment_body(i % 65536, k, PIECES, b"") + piece(i, k, pt.FRAGMENT_SIZE)

    for i, k in ((5, 0), (300, PIECES - 1)):
        assert body(i, k) == pt.fragment_body(i, k, PIECES, piece(i, k, pt.FRAGMENT_SIZE))
    ct.write_pcap(path, [pt.seal(body(i, k)) for i in range(n) for k in range(PIECES)])
    return n


def p2frag_hostile(path):
    pkts = [pt.seal(pt.fragment_body(i, 0, 255, b"") + piece(i, 0, pt.FRAGMENT_SIZE))
            for i in range(HOSTILE_PACKETS)]
    ct.write_pcap(path, pkts)


def env():
    e = dict(os.environ, WIRESHARK_ABORT_ON_DISSECTOR_BUG="1", TZ="UTC", LC_ALL="C")
    e.setdefault("CHUNK_BUILD_DIR", ct.build_dir())
    return e


def measured(tmp, args):
    """(own reassemblies, own bytes at once, table ones freed, peak MiB) of
    one tshark run with -z chunkshark,single_pass."""
    tf = os.path.join(tmp, "time.txt")
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf, ct.CHUNK_TSHARK, "-q",
                        "-z", "chunkshark,single_pass"] + args, env=env(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise RuntimeError("tshark %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    m = LINE.search(p.stdout)
    if not m:
        raise RuntimeError("no own-buffer line in -z chunkshark,single_pass:\n" + p.stdout)
    with open(tf) as f:
        kb = int(f.read().strip().splitlines()[-1])
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), kb / 1024.0


def check_long(F, tmp, proto, make):
    cap = os.path.join(tmp, proto + "-long.pcap")
    n = make(cap)
    off = ["-o", "%s.single_pass:FALSE" % proto]
    own, peak, table, mib = measured(tmp, ["-r", cap])
    own_off, _, _, mib_off = measured(tmp, ["-r", cap] + off)
    print("%-6s %d reassemblies of %d KiB: one pass %d in own buffers (at most %d bytes at once), "
          "%d by the table; %.0f MiB; preference off %d own, %.0f MiB" % (
              proto, n, PAYLOAD // n >> 10, own, peak, table, mib, own_off, mib_off))
    F.check(own == n - 1 and table == 1, "%s: %d own and %d table reassemblies in one pass, want %d and 1"
            % (proto, own, table, n - 1))
    F.check(0 < peak <= OWN_PEAK_MAX, "%s: own buffers held %d bytes at once, want 1..%d"
            % (proto, peak, OWN_PEAK_MAX))
    F.check(mib + PAYLOAD / 2 / (1 << 20) < mib_off, "%s: one pass %.0f MiB, not half the %d MiB "
            "reassembled below the %.0f MiB with the preference off" % (proto, mib, PAYLOAD >> 20, mib_off))
    F.check(own_off == 0, "%s: %d own buffers with the preference off" % (proto, own_off))
    base = ["-r", cap, "-c", str(SAME_OUTPUT_FRAMES)]
    one = ct.tshark(base + ["-V"])
    F.check(one == ct.tshark(base + ["-V"] + off), "%s: -V differs with the preference off" % proto)
    F.check(one.count("Reassembled") >= SAME_OUTPUT_FRAMES // PIECES,
            "%s: not every reassembly of the first %d frames shown" % (proto, SAME_OUTPUT_FRAMES))
    # -2 adds what later frames find (acked in, reassembled in): the bytes
    # of every data source, the reassembled ones too, are the same.
    one = ct.tshark(base + ["-x"])
    F.check(one == ct.tshark(base + ["-x", "-2"]), "%s: the data sources (-x) differ between one pass "
            "and -2" % proto)


def check_chunk(F, tmp):
    check_long(F, tmp, "chunk", chunk_capture)


def check_p2frag(F, tmp):
    check_long(F, tmp, "p2frag", p2frag_capture)


def check_hostile(F, tmp):
    cap = os.path.join(tmp, "p2frag-hostile.pcap")
    p2frag_hostile(cap)
    own, peak, table, mib = measured(tmp, ["-r", cap])
    print("p2frag %d packets claiming 255 fragments, one each: %d own, own buffers at most %d bytes "
          "at once (budget %d); %.0f MiB" % (HOSTILE_PACKETS, own, peak, P2FRAG_BUDGET, mib))
    F.check(own == 0 and table == 0, "p2frag hostile: %d own, %d table reassemblies, want none" % (own, table))
    F.check(P2FRAG_BUDGET // 2 < peak <= P2FRAG_BUDGET, "p2frag hostile: own buffers counted %d bytes at "
            "once, want up to the budget, %d" % (peak, P2FRAG_BUDGET))


def main():
    if not os.access("/usr/bin/time", os.X_OK):
        print("SKIP: no /usr/bin/time (GNU time) to measure tshark's peak memory")
        return 77
    ct.run_checks("dissector.single_pass_memory", check_chunk, check_p2frag, check_hostile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
