#!/usr/bin/env python3
"""How the dissector finds its traffic: the chunk.udp.port preference, Decode
As and the chunk_udp heuristic, each alone, on captures/clean.pcap (ports
50000 -> 40000) and on a datagram no heuristic claims.

The port preference is set with -o, which Wireshark 4.0 applies through
prefs.c's set_pref: that adds the new range to udp.port but deletes the new
range instead of the old one, so without the dissector's own clean-up the
default port 40000 stayed registered and "-o chunk.udp.port:1
--disable-heuristic chunk_udp" still decoded everything as chunk. (A -d for
a port the new range drops is dropped with it: the two look the same in the
table, so it is not checked here.)
The checks that take the same arguments read their captures as one file
(one tshark run).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import chunktest as ct  # noqa: E402

CLEAN = os.path.join(ct.REPO, "captures", "clean.pcap")
NO_HEUR = ["--disable-heuristic", "chunk_udp"]


def protocols(pcap, args):
    """frame.protocols of every frame."""
    out = ct.tshark(["-r", pcap, "-T", "fields", "-e", "frame.protocols"] + list(args))
    return out.splitlines()


def expect(F, name, pcap, args, chunk, frames=None):
    """Checks that every frame is (chunk) or no frame is (not chunk) chunk."""
    check(F, name, protocols(pcap, args), chunk, frames)


def check(F, name, protos, chunk, frames):
    F.check(protos, "%s: no frames" % name)
    if frames is not None:
        F.check(len(protos) == frames, "%s: %d frames, want %d" % (name, len(protos), frames))
    wrong = [n + 1 for n, p in enumerate(protos) if p.endswith(":chunk") != chunk]
    F.check(not wrong, "%s: frames %s %s chunk (first: %s)" % (
        name, wrong[:10], "not decoded as" if chunk else "decoded as",
        protos[wrong[0] - 1] if wrong else ""))


def expect_all(F, tmp, args, cases):
    """expect() for each case (name, capture, chunk, frames) of cases, all
    with the same args, in one tshark run: the captures read as one file
    (chunktest.concat_captures; ports kept, addresses of their own), each
    case's frames cut out by their span. Returns each case's frame.protocols."""
    if len(cases) == 1:
        protos = [protocols(cases[0][1], args)]
    else:
        path = os.path.join(tmp, "cases-%d.pcap" % len(os.listdir(tmp)))
        spans = ct.concat_captures([c[1] for c in cases], path)
        every = protocols(path, args)
        protos = [every[first - 1:last] for _, first, last in spans]
    for (name, _, chunk, frames), mine in zip(cases, protos):
        check(F, name, mine, chunk, frames)
    return protos


def main():
    F = ct.Failures()
    with ct.scratch_dir() as tmp:
        # Not a chunk datagram, so no heuristic claims it, and the port
        # claims only well-formed chunk: only Decode As makes it chunk (then
        # flagged, not hidden).
        hello = os.path.join(tmp, "hello.pcap")
        ct.write_pcap(hello, [{"payload": b"hello, not a chunk packet", "sport": 50000, "dport": 40000}])
        # Ports rewritten off 40000: Decode As on either port.
        moved = os.path.join(tmp, "moved.pcap")
        ct.write_pcap(moved, [
            {"payload": ct.seal(ct.slice_body(1, 0, 2, bytes(ct.SLICE_SIZE))), "sport": 50001, "dport": 40001},
            {"payload": ct.seal(ct.ack_body(1, [1, 0])), "sport": 40001, "dport": 50001,
             "src": "10.0.0.2", "dst": "10.0.0.1"},
        ])
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        os.chmod(work, 0o755)
        # The frames of clean.pcap (counted with chunk off, which is checked
        # in the same run).
        clean_frames = len(expect_all(F, work, ["--disable-protocol", "chunk"],
                                      [("clean.pcap protocol disabled", CLEAN, False, None)])[0])
        F.check(clean_frames > 20, "clean.pcap: only %d frames" % clean_frames)

        def clean(name, chunk):
            return ("clean.pcap " + name, CLEAN, chunk, clean_frames)

        # The runs that take the same arguments read their captures as one.
        for args, cases in [
                ([], [clean("defaults", True), ("not chunk, port 40000", hello, False, 1)]),
                (NO_HEUR, [clean("port 40000 alone", True), ("ports 50001/40001, heuristic off", moved, False, 2)]),
                # The bug: the old port stayed registered after -o moved it.
                (["-o", "chunk.udp.port:1"] + NO_HEUR, [clean("port moved, heuristic off", False)]),
                (["-o", "chunk.udp.port:1-100,39999,40001"] + NO_HEUR,
                 [clean("port moved to a range without 40000, heuristic off", False)]),
                # Moved to the capture's other port (the sender's 50000): decoded again.
                (["-o", "chunk.udp.port:50000"] + NO_HEUR, [clean("port moved to 50000, heuristic off", True)]),
                (["-o", "chunk.udp.port:40000"] + NO_HEUR, [clean("port 40000 set explicitly, heuristic off", True)]),
                (["-o", "chunk.udp.port:1"], [clean("heuristic alone (port moved)", True),
                                              ("not chunk, port moved", hello, False, 1)]),
                (["-o", "chunk.udp.port:1", "-d", "udp.port==50000,chunk"] + NO_HEUR,
                 [clean("Decode As udp.port==50000 alone (port moved, heuristic off)", True)]),
                (["-o", "chunk.udp.port:50000"], [("not chunk, port moved to 50000", hello, False, 1)]),
                (["-o", "chunk.udp.port:1", "-d", "udp.port==50000,chunk"],
                 [("not chunk, Decode As udp.port==50000", hello, True, 1)]),
                (["-d", "udp.port==40001,chunk"] + NO_HEUR, [("ports 50001/40001, Decode As 40001", moved, True, 2)]),
                (["-o", "chunk.udp.port:50001"] + NO_HEUR,
                 [("ports 50001/40001, port preference 50001", moved, True, 2)])]:
            expect_all(F, work, args, cases)
    F.finish("test_ports")


if __name__ == "__main__":
    main()
