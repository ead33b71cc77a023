#!/usr/bin/env python3
"""One crafted packet per decoder expert info; each raises exactly its own.

Every crafted packet but the bad-CRC ones carries a correct CRC, so the only
thing wrong with it is the one thing under test. Packets that need a decided
conversation follow a clean slice in the same UDP conversation; the variant
and protocol-id ones get fresh conversations. Also checks the Info column
formats, and the heuristic (claims only clean packets, pins the flow).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import chunktest as ct  # noqa: E402

K = 1024
DECODER_FIELDS = ("chunk.variant", "chunk.crc32.status", "chunk.protocol_id", "chunk.type",
                  "chunk.chunk_id", "chunk.slice_id", "chunk.num_slices", "chunk.slice_bytes",
                  "chunk.ack.missing", "chunk.end_check.status")


def with_crc_flipped(pkt):
    return bytes([pkt[0] ^ 1]) + pkt[1:]


def port_run(tmp):
    """(packet dict, expected decoder experts, expected Info or None)."""
    A = {"sport": 50000}
    B = {"sport": 50001}
    C = {"sport": 50002}
    D = {"sport": 50003}
    s = ct.seal
    rows = [
        (A, s(ct.slice_body(1, 0, 3, bytes(K))), set(), "Slice 0 of 3, chunk 1, 1024 bytes"),
        (A, with_crc_flipped(s(ct.ack_body(1, [1, 0, 0]))), {"chunk.crc32.bad"},
         "Ack chunk 1: 1/3 acked, missing 1-2 [Bad CRC]"),
        (A, s(ct.slice_body(1, 2, 3, bytes(10), pad=1)), {"chunk.padding.nonzero"}, None),
        (A, s(ct.ack_body(1, [1, 1, 0], end_check=b"\xe2\xac\x08\x98")), {"chunk.end_check.bad"}, None),
        (A, s(ct.slice_body(1, 2, 3, bytes(10))[:-6]), {"chunk.truncated"}, None),
        (A, s(ct.slice_body(1, 5, 3, bytes(K))), {"chunk.slice_id.out_of_range"}, None),
        (A, s(ct.ack_body(1, [1, 1, 1]) + b"xyz"), {"chunk.trailing_bytes"}, None),
        (A, s(ct.slice_body(1, 0, 3, bytes(100))), {"chunk.slice_size.wrong"},
         "Slice 0 of 3, chunk 1, 100 bytes [Non-last slice not SliceSize]"),
        (A, s(ct.slice_body(1, 1, 3, bytes(1100))), {"chunk.slice_size.wrong"}, None),
        (A, s(ct.slice_body(2, 0, 2, bytes(K), max_slices=32)), {"chunk.variant.mismatch"}, None),
        (A, s(ct.ack_body(3, [0 if i in (3, 4, 5, 17) else 1 for i in range(256)])), set(),
         "Ack chunk 3: 252/256 acked, missing 3-5,17"),
        (A, s(ct.ack_body(3, [1] * 256)), set(), "Ack chunk 3: 256/256 acked"),
        # A fresh conversation: nothing decided, fits no variant.
        (B, s(ct.ack_body(1, [1, 1, 0], end_check=b"\xe2\xac\x08\x98")), {"chunk.variant.unknown"}, None),
        # A 32-variant ack whose first three bits are clear parses as a
        # 256-variant ack too (docs/protocol.md, "The two variants").
        (C, s(ct.ack_body(7, [0, 0, 0, 1, 1], max_slices=32)), {"chunk.variant.ambiguous"}, None),
        # A game with its own protocol id: unconfirmed, then confirmed.
        (D, s(ct.slice_body(4, 0, 2, bytes(K)), 0xDEADBEEF), {"chunk.protocol_id.unconfirmed"}, None),
        (D, s(ct.ack_body(4, [1, 0]), 0xDEADBEEF), {"chunk.protocol_id.other"}, None),
        (D, s(ct.ack_body(4, [1, 0])), set(), None),
        (D, s(ct.ack_body(4, [1, 0]), 0x01020304), {"chunk.crc32.bad"}, None),
    ]
    return rows


def range_run():
    """-o chunk.max_slices:100: a slice count above 100 fits 7 bits."""
    s = ct.seal
    return [
        ({}, s(ct.slice_body(1, 0, 3, bytes(K), max_slices=100)), set(), None),
        ({}, s(ct.slice_body(1, 5, 111, bytes(K), max_slices=100)), {"chunk.value.out_of_range"}, None),
    ]


def write_rows(path, rows):
    """Writes the packets of rows (ports, packet, ...) as a capture."""
    ct.write_pcap(path, [dict(p, payload=pkt) for p, pkt, *_ in rows])


def run(F, tmp, name, rows, prefs=None):
    path = os.path.join(tmp, name + ".pcap")
    write_rows(path, rows)
    frames = ct.decode(path, prefs)
    infos = ct.info(path, prefs)
    for n, (fr, (_, _, want, want_info)) in enumerate(zip(frames, rows)):
        F.check(fr["chunk"], "%s frame %d: not decoded as chunk" % (name, n + 1))
        F.check(fr["experts"] == want, "%s frame %d: experts %s, want %s"
                % (name, n + 1, sorted(fr["experts"]), sorted(want)))
        if want_info is not None:
            F.check(infos[n] == want_info, "%s frame %d: Info %r, want %r" % (name, n + 1, infos[n], want_info))
    F.check(len(frames) == len(rows), "%s: %d frames" % (name, len(frames)))
    # Decisions made on the first pass hold on the second: same decode.
    two = ct.decode(os.path.join(tmp, name + ".pcap"), prefs, extra=["-2"])
    for n, (a, b) in enumerate(zip(frames, two)):
        F.check(a["experts"] == b["experts"], "%s frame %d: -2 experts %s, one pass %s"
                % (name, n + 1, sorted(b["experts"]), sorted(a["experts"])))
        for f in DECODER_FIELDS:
            F.check(a["fields"].get(f) == b["fields"].get(f), "%s frame %d: -2 %s %s, one pass %s"
                    % (name, n + 1, f, b["fields"].get(f), a["fields"].get(f)))
    return frames


def heuristic_run(F, tmp):
    """Not on port 40000: only the heuristic can claim these."""
    s = ct.seal
    P1 = {"sport": 7000, "dport": 7001}
    P2 = {"sport": 7002, "dport": 7003}
    P3 = {"sport": 7004, "dport": 7005}
    rows = [
        (P1, b"hello, not a chunk packet", False, set()),
        (P1, s(ct.slice_body(1, 0, 2, bytes(K))), True, set()),
        # Pinned: a broken packet in the flow is decoded, and flagged.
        (P1, with_crc_flipped(s(ct.ack_body(1, [1, 0]))), True, {"chunk.crc32.bad"}),
        # Own protocol id: the first packet is not claimed, the second
        # (same id) is.
        (P2, s(ct.slice_body(1, 0, 2, bytes(K)), 0xCAFEF00D), False, set()),
        (P2, s(ct.ack_body(1, [1, 0]), 0xCAFEF00D), True, {"chunk.protocol_id.other"}),
        # Ends in the end check but the fields put it elsewhere.
        (P3, s(ct.ack_body(1, [1, 0, 1]))[:-5] + b"\x00" + ct.END_CHECK, False, set()),
    ]
    path = os.path.join(tmp, "heur.pcap")
    write_rows(path, rows)
    frames = ct.decode(path)
    for n, (fr, (_, _, claimed, want)) in enumerate(zip(frames, rows)):
        F.check(fr["chunk"] == claimed, "heuristic frame %d: chunk %s, want %s" % (n + 1, fr["chunk"], claimed))
        F.check(fr["experts"] == want, "heuristic frame %d: experts %s, want %s"
                % (n + 1, sorted(fr["experts"]), sorted(want)))
    # With the heuristic off nothing off-port is decoded.
    frames = ct.decode(path, extra=["--disable-heuristic", "chunk_udp"])
    F.check(not any(fr["chunk"] for fr in frames), "heuristic disabled: frames still decoded")


def main():
    F = ct.Failures()
    with ct.scratch_dir() as tmp:
        frames = run(F, tmp, "experts", port_run(tmp))
        # Each expert info of the list above is raised somewhere.
        seen = set().union(*(fr["experts"] for fr in frames))
        run(F, tmp, "range", range_run(), {"chunk.max_slices": 100})
        seen.add("chunk.value.out_of_range")
        F.check(seen == ct.DECODER_EXPERTS, "experts never raised: %s" % sorted(ct.DECODER_EXPERTS - seen))
        heuristic_run(F, tmp)
    F.finish("test_experts")


if __name__ == "__main__":
    main()
