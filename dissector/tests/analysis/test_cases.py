#!/usr/bin/env python3
"""Hand-made captures, one per analysis case, with exact expected fields.

Each case is a short list of packets (slices go 10.0.0.1:50000 -> 10.0.0.2:40000,
acks back) with timestamps, and for some frames the exact value of analysis
fields after -2. chunk.analysis.flags is checked on every frame: a frame not
listed must have none. Every case is also run in one pass, where every field
but the forward-looking ones must be the same.

The cases are read from one capture (each its own conversations, 1000 s
apart; AT_END) in one tshark run a pass; frame numbers, stream and transfer
indices are mapped back to each case's own, so the checks and failures are
the case's.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import chunktest as ct  # noqa: E402

K = 1024
FIELDS = ["chunk.stream", "chunk.transfer", "chunk.analysis.flags", "chunk.analysis.resend",
          "chunk.analysis.resend_of", "chunk.analysis.since_last_sent", "chunk.analysis.already_acked_in",
          "chunk.analysis.acked_in", "chunk.analysis.stale", "chunk.analysis.early",
          "chunk.analysis.newly_acked", "chunk.analysis.newly_acked_slices",
          "chunk.analysis.duplicate_ack", "chunk.analysis.regressed", "chunk.analysis.chunk_complete",
          "chunk.analysis.transfer_time", "chunk.analysis.chunk_size", "chunk.analysis.goodput",
          "chunk.reassembled_in", "chunk.reassembled.length", "chunk.analysis.completed_in",
          "chunk.analysis.stall_since", "chunk.analysis.diagnosis", "_ws.col.Info"]
FORWARD = {"chunk.analysis.acked_in", "chunk.reassembled_in", "chunk.analysis.diagnosis"}


T0 = 1700000000.0


def sl(chunk, sid, n, t, size=K, sport=50000):
    data = bytes((chunk * 31 + sid * 7 + i) % 256 for i in range(size))
    return {"payload": ct.seal(ct.slice_body(chunk, sid, n, data)), "t": t, "sport": sport}


def ack(chunk, bits, t, sport=50000):
    return {"payload": ct.seal(ct.ack_body(chunk, bits)), "t": t, "src": "10.0.0.2", "dst": "10.0.0.1",
            "sport": 40000, "dport": sport}


CASES = [
    ("resends, acks, completion, reassembly", [
        sl(1, 0, 3, 0.000),                      # 1
        sl(1, 1, 3, 0.010),                      # 2
        sl(1, 2, 3, 0.020, size=100),            # 3
        ack(1, [1, 0, 1], 0.100),                # 4
        sl(1, 1, 3, 0.150),                      # 5 resend 1 of frame 2
        ack(1, [1, 0, 1], 0.200),                # 6 duplicate
        sl(1, 1, 3, 0.300),                      # 7 resend 2 of frame 5
        ack(1, [1, 1, 1], 0.310),                # 8 complete
    ], {
        # all three slices are in the capture by frame 3: reassembled there
        1: {"chunk.stream": "0", "chunk.transfer": "0", "chunk.analysis.acked_in": "4",
            "chunk.reassembled_in": "3"},
        3: {"chunk.analysis.acked_in": "4", "chunk.reassembled_in": "", "chunk.reassembled.length": "2148"},
        4: {"chunk.analysis.newly_acked": "2", "chunk.analysis.newly_acked_slices": "0,2",
            "chunk.stream": "0", "chunk.transfer": "0"},
        5: {"chunk.analysis.resend": "1", "chunk.analysis.resend_of": "2",
            "chunk.analysis.since_last_sent": "0.140000000", "chunk.analysis.acked_in": "8",
            "_ws.col.Info": "Slice 1 of 3, chunk 1, 1024 bytes [Resend 1]"},
        6: {"chunk.analysis.newly_acked": "0", "chunk.analysis.duplicate_ack": "1",
            "_ws.col.Info": "Ack chunk 1: 2/3 acked, missing 1 [Duplicate ack]"},
        7: {"chunk.analysis.resend": "2", "chunk.analysis.resend_of": "5",
            "chunk.reassembled_in": "3", "chunk.reassembled.length": "",
            "_ws.col.Info": "Slice 1 of 3, chunk 1, 1024 bytes [Resend 2]"},
        8: {"chunk.analysis.newly_acked_slices": "1", "chunk.analysis.chunk_complete": "1",
            "chunk.analysis.transfer_time": "0.310000000", "chunk.analysis.chunk_size": "2148",
            "chunk.analysis.goodput": "55432.2580645161", "_ws.col.Info": "Ack chunk 1: 3/3 acked [Chunk 1 complete]"},
    }),
    ("resend too soon", [
        sl(2, 0, 2, 0.000),
        sl(2, 1, 2, 0.010, size=5),
        sl(2, 0, 2, 0.030),                      # 3: 30 ms later: too soon
        sl(2, 0, 2, 0.130),                      # 4: 100 ms later: fine
        ack(2, [1, 1], 0.140),
    ], {3: {"chunk.analysis.flags": "0x00000001", "chunk.analysis.resend": "1",
            "_ws.col.Info": "Slice 0 of 2, chunk 2, 1024 bytes [Resend 1] [Too soon]"},
        4: {"chunk.analysis.flags": "", "chunk.analysis.resend": "2",
            "_ws.col.Info": "Slice 0 of 2, chunk 2, 1024 bytes [Resend 2]"}}),
    ("slice count and size change within a chunk", [
        sl(3, 0, 2, 0.000),
        sl(3, 1, 2, 0.010, size=10),
        sl(3, 1, 4, 0.020),                      # 3: widening to 4 slices
        sl(3, 1, 2, 0.200, size=20),             # 4: last slice, other size
        ack(3, [1, 1], 0.300),
    ], {3: {"chunk.analysis.flags": "0x00000008", "_ws.col.Info": "Slice 1 of 4, chunk 3, 1024 bytes [Count mismatch]"},
        4: {"chunk.analysis.flags": "0x00000010", "chunk.analysis.resend": "1",
            "_ws.col.Info": "Slice 1 (last) of 2, chunk 3, 20 bytes [Resend 1] [Size mismatch]"}}),
    ("chunk started before the previous was acked", [
        sl(4, 0, 2, 0.000),
        sl(4, 1, 2, 0.010, size=10),
        ack(4, [1, 0], 0.100),
        sl(5, 0, 1, 0.120, size=50),             # 4: early
        ack(5, [1], 0.130),
    ], {4: {"chunk.analysis.flags": "0x00000004", "chunk.analysis.early": "1", "chunk.transfer": "1",
            "_ws.col.Info": "Slice 0 (last) of 1, chunk 5, 50 bytes [Early]"},
        3: {"chunk.transfer": "0", "chunk.analysis.flags": "0x00001000",
            "_ws.col.Info": "Ack chunk 4: 1/2 acked, missing 1 [Incomplete]", "chunk.analysis.diagnosis":
            "Incomplete at end of capture: chunk 4 has 1/2 slices acked, missing 1."}}),
    ("acks for a chunk not sent, and with the wrong slice count", [
        ack(9, [1, 0], 0.000),                   # 1: before any slice: a note only
        sl(6, 0, 2, 0.100),
        sl(6, 1, 2, 0.110, size=10),
        ack(6, [1, 1, 1], 0.300),                # 4: count mismatch
        ack(6, [1, 1], 0.400),
        ack(9, [1, 0], 0.500),                   # 6: the sender sends chunk 6, not 9
    ], {1: {"chunk.stream": "0", "chunk.transfer": ""},
        4: {"chunk.analysis.flags": "0x00000008", "_ws.col.Info": "Ack chunk 6: 3/3 acked [Count mismatch]"},
        6: {"chunk.analysis.flags": "0x00000200", "chunk.transfer": "",
            "_ws.col.Info": "Ack chunk 9: 1/2 acked, missing 1 [Unknown chunk]"}}),
    ("capture started mid-transfer: slices acked before the capture say nothing of delay", [
        # real-world timestamps: a slice's unset send time (0) would be decades ago
        sl(14, 3, 4, T0, size=10), ack(14, [1, 1, 1, 0], T0 + 0.050)] +
       [sl(14, 3, 4, T0 + 0.1 * (i + 1), size=10) for i in range(14)], {
        # slices 0-2 were sent before the capture; progress at 0.05 s (frame 2);
        # frames 3..16 at 0.1 .. 1.4 s: stalled at 1.1 s
        2: {"chunk.analysis.newly_acked_slices": "0-2"},
        13: {"chunk.analysis.flags": "0x00000020", "chunk.analysis.stall_since": "2"},
        16: {"chunk.analysis.flags": "0x00001000", "chunk.analysis.diagnosis":
             "Stalled: slice 3 of chunk 14 was sent 15 times and never acked, while every other slice is; "
             "no progress since frame 2."},
    }),
    ("ack regression: once is reordering, twice a reset", [
        sl(7, 0, 4, 0.000), sl(7, 1, 4, 0.010), sl(7, 2, 4, 0.020), sl(7, 3, 4, 0.030, size=9),
        ack(7, [1, 1, 0, 0], 0.100),             # 5
        ack(7, [1, 0, 0, 0], 0.200),             # 6: regression, a note
        ack(7, [1, 1, 1, 1], 0.300),             # 7: complete
        sl(8, 0, 2, 0.400), sl(8, 1, 2, 0.410, size=3),
        ack(8, [1, 1], 0.500),                   # 10
        ack(8, [1, 0], 0.600),                   # 11: regression, a note
        ack(8, [0, 0], 0.700),                   # 12: again: the receiver reset
    ], {6: {"chunk.analysis.regressed": "1", "chunk.analysis.flags": "",
            "_ws.col.Info": "Ack chunk 7: 1/4 acked, missing 1-3 [Duplicate ack] [Reordered]"},
        11: {"chunk.analysis.regressed": "1", "chunk.analysis.flags": ""},
        12: {"chunk.analysis.regressed": "2", "chunk.analysis.flags": "0x00000100",
             "_ws.col.Info": "Ack chunk 8: 0/2 acked, missing 0-1 [Duplicate ack] [Ack regression]"}}),
    ("one ack per slice", [p for i in range(8) for p in (sl(10, i, 9, 0.002 * i), ack(10, [1] * (i + 1) + [0] * (8 - i), 0.002 * i + 0.001))]
     + [sl(10, 8, 9, 0.5, size=1), ack(10, [1] * 9, 0.501)], {
        # acks are frames 2, 4, ..., 16; the 5th within 240 ms is too fast,
        # and the 4th fast ack in a row answering one slice is amplification
        10: {"chunk.analysis.flags": "0x00000c00"},
        12: {"chunk.analysis.flags": "0x00000c00"},
        14: {"chunk.analysis.flags": "0x00000c00"},
        16: {"chunk.analysis.flags": "0x00000c00", "_ws.col.Info": "Ack chunk 10: 8/9 acked, missing 8 [One ack per slice]"},
    }),
    ("stale slice after completion, and the receiver's repeated all-ones ack", [
        sl(11, 0, 1, 0.000, size=10),
        ack(11, [1], 0.010),
        sl(11, 0, 1, 0.200, size=10),            # 3: stale (the ack was lost on the way)
        ack(11, [1], 0.210),                     # 4: repeated all-ones ack
    ], {3: {"chunk.analysis.stale": "2", "chunk.analysis.already_acked_in": "2", "chunk.analysis.resend": "1",
            "_ws.col.Info": "Slice 0 (last) of 1, chunk 11, 10 bytes [Resend 1] [Stale]"},
        4: {"chunk.analysis.completed_in": "2", "chunk.analysis.chunk_complete": "",
            "_ws.col.Info": "Ack chunk 11: 1/1 acked [Already complete]"}}),
    ("stall: slices keep coming, nothing new acked", [
        sl(12, 0, 2, 0.000), sl(12, 1, 2, 0.010, size=10),
        ack(12, [1, 0], 0.100)] + [sl(12, 1, 2, 0.2 + 0.1 * i, size=10) for i in range(14)], {
        # frames 4..17 at 0.2 .. 1.5 s; progress at 0.1 s: more than 1 s at 1.2 s
        14: {"chunk.analysis.flags": "0x00000020", "chunk.analysis.stall_since": "3",
             "_ws.col.Info": "Slice 1 (last) of 2, chunk 12, 10 bytes [Resend 11] [Stall]"},
        17: {"chunk.analysis.flags": "0x00001000",
             "_ws.col.Info": "Slice 1 (last) of 2, chunk 12, 10 bytes [Resend 14] [Incomplete]", "chunk.analysis.diagnosis":
             "Stalled: slice 1 of chunk 12 was sent 15 times and never acked, while every other slice is; "
             "no progress since frame 3."},
    }),
    ("stall with two slices missing, sent unequally often", [
        sl(15, 0, 4, 0.000), sl(15, 1, 4, 0.010), sl(15, 2, 4, 0.020), sl(15, 3, 4, 0.030, size=7),
        ack(15, [1, 0, 0, 1], 0.100)] +          # 5: progress
       [p for i in range(14) for p in ([sl(15, 1, 4, 0.2 + 0.1 * i)] +
                                       ([sl(15, 2, 4, 0.25 + 0.1 * i)] if i < 10 else []))], {
        # frames 6, 8, .., 24: slice 1 at 0.2 .. 1.1 s; 7, 9, .., 25: slice 2 at
        # 0.25 .. 1.15 s; 26..29: slice 1 at 1.2 .. 1.5 s. 1.15 s is the first
        # over 1 s after frame 5. Slice 1 is sent 1 + 14 times, slice 2 1 + 10.
        25: {"chunk.analysis.flags": "0x00000020", "chunk.analysis.stall_since": "5"},
        29: {"chunk.analysis.flags": "0x00001000", "chunk.analysis.diagnosis":
             "Stalled: slices 1-2 (2 of 4) of chunk 15 were sent 11 to 15 times each and never acked; "
             "no progress since frame 5."},
    }),
    ("stall with every other slice of 64 missing: lists cut short", [
        sl(16, i, 64, 0.001 * i) for i in range(64)] +
       [ack(16, [1, 0] * 32, 0.100)] +          # 65: the even slices
       [sl(16, 2 * k + 1, 64, 0.2 + 0.15 * r + 0.001 * k) for r in range(8) for k in range(32)], {
        # round r resends the 32 odd slices at 0.2 + 0.15 r s: round 6 starts
        # at 1.1 s, exactly 1 s after the ack; its second packet (frame 65 +
        # 6 x 32 + 2 = 259) is the first over. By then slices 1 and 3 were
        # sent 8 times, the others 7; at the end all 9 times.
        259: {"chunk.analysis.flags": "0x00000020", "chunk.analysis.stall_since": "65"},
        321: {"chunk.analysis.flags": "0x00001000", "chunk.analysis.diagnosis":
              "Stalled: slices 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,... (32 of 64) of chunk 16 "
              "were sent 9 times each and never acked; no progress since frame 65."},
    }),
    ("a transfer that goes quiet before the capture ends", [
        sl(20, 0, 2, 0.000),
        ack(20, [1, 0], 0.100),
        sl(21, 0, 1, 2.500, size=3, sport=50001),
        ack(21, [1], 2.510, sport=50001),
    ], {2: {"chunk.analysis.flags": "0x00001000", "chunk.analysis.diagnosis":
            "Incomplete at end of capture: chunk 20 has 1/2 slices acked, missing 1; nothing of it in the "
            "last 2.4 s of the capture."}}),
    ("two conversations: streams pair acks with their slices", [
        sl(13, 0, 1, 0.000, size=4),
        sl(13, 0, 1, 0.001, size=4, sport=50001),
        ack(13, [1], 0.010, sport=50001),
        ack(13, [1], 0.011),
    ], {1: {"chunk.stream": "0", "chunk.transfer": "0"}, 2: {"chunk.stream": "1", "chunk.transfer": "1"},
        3: {"chunk.stream": "1", "chunk.transfer": "1", "chunk.analysis.chunk_complete": "13"},
        4: {"chunk.stream": "0", "chunk.transfer": "0", "chunk.analysis.chunk_complete": "13"}}),
]


AGG = "\x1f"   # joins a field's occurrences below (the expert details hold commas)
# The cases are conversation pairs of their own in one capture
# (concat_captures: addresses of their own, 1000 s after the previous case).
# Those whose checks read the capture's end (an incomplete chunk's diagnosis
# says how long before the end it went quiet when that is over 1 s) are not
# followed by another: the first comes last, the others have a capture each.
AT_END = {"a transfer that goes quiet before the capture ends", "chunk started before the previous was acked"}
COUNTERS = ("chunk.stream", "chunk.transfer")   # numbered from 0 in each capture
FRAME_TEXT = re.compile(r"\b(frames? |in |since )(\d+)\b")


def read(pcap, two_pass):
    """ct.field_rows of FIELDS (occurrences joined by ","), and each frame's
    chunk.expert.detail occurrences (a list), from one tshark run."""
    fields = FIELDS + ["chunk.expert.detail"]
    args = (["-2"] if two_pass else []) + ["-r", pcap, "-T", "fields", "-E", "separator=\t",
                                           "-E", "occurrence=a", "-E", "aggregator=" + AGG]
    rows, details = [], []
    for line in ct.tshark(args + [a for f in fields for a in ("-e", f)]).splitlines():
        parts = line.split("\t")
        row = dict(zip(fields, parts + [""] * (len(fields) - len(parts))))
        details.append([m for m in row.pop("chunk.expert.detail").split(AGG) if m])
        rows.append({f: ct.field_value(f, v.replace(AGG, ",")) for f, v in row.items()})
    return rows, details


def in_case(rows, details, first, last):
    """The rows and details of frames first..last of the capture of every
    case, as the case's own capture has them: frame numbers (frame-number
    fields, "frame N" in texts) and stream and transfer indices counted
    from the case's first."""
    frame_fields = [f for f in FIELDS if ct.field_types().get(f) == "FT_FRAMENUM"]

    def frame(n):
        return str(int(n) - first + 1) if first <= int(n) <= last else "%s (another case's)" % n

    def text(t):
        return FRAME_TEXT.sub(lambda m: m.group(1) + frame(m.group(2)), t)

    base = {}
    for c in COUNTERS:
        vals = [int(v) for r in rows[first - 1:last] for v in r[c].split(",") if v]
        base[c] = min(vals) if vals else 0
    out = []
    for row in rows[first - 1:last]:
        row = dict(row)
        for f in frame_fields:
            row[f] = ",".join(frame(v) for v in row[f].split(",")) if row[f] else ""
        for c in COUNTERS:
            row[c] = ",".join(str(int(v) - base[c]) for v in row[c].split(",")) if row[c] else ""
        for f in ("chunk.analysis.diagnosis", "_ws.col.Info"):
            row[f] = text(row[f])
        out.append(row)
    return out, [[text(m) for m in d] for d in details[first - 1:last]]


def main():
    fail = ct.Failures()
    with ct.scratch_dir() as tmp:
        pcaps = []
        for i, (name, packets, _) in enumerate(CASES):
            pcaps.append(os.path.join(tmp, "case%d.pcap" % i))
            ct.write_pcap(pcaps[-1], packets)
        end = [i for i, c in enumerate(CASES) if c[0] in AT_END]
        groups = [[i for i, c in enumerate(CASES) if c[0] not in AT_END] + end[:1]] + [[i] for i in end[1:]]
        for g, group in enumerate(groups):
            pcap = os.path.join(tmp, "cases%d.pcap" % g)
            spans = ct.concat_captures([pcaps[i] for i in group], pcap)
            two_all, details_all = read(pcap, True)
            one_all, _ = read(pcap, False)
            fail.check(len(two_all) == spans[-1][2] and len(one_all) == spans[-1][2],
                       "%d and %d frames of the cases' capture, want %d" % (len(two_all), len(one_all),
                                                                          spans[-1][2]))
            for i, (_, first, last) in zip(group, spans):
                name, packets, expect = CASES[i]
                two, details = in_case(two_all, details_all, first, last)
                one, _ = in_case(one_all, details_all, first, last)
                check_case(fail, name, packets, expect, two, details, one)
    fail.finish("analysis cases (%d)" % len(CASES))


def check_case(fail, name, packets, expect, two, details, one):
    """The checks of one case: its expected fields after -2, no flags on
    the frames not listed, one pass the same but for FORWARD."""
    # Whole sentences, well under Wireshark's 240-character label limit.
    for m in (m for frame in details for m in frame):
        fail.check(m.endswith(".") and len(m) <= 200, "%s: expert detail %r" % (name, m))
    fail.check(len(two) == len(packets), "%s: %d frames" % (name, len(two)))
    for n, row in enumerate(two, 1):
        want = expect.get(n, {})
        if "chunk.analysis.flags" not in want:
            fail.check(row["chunk.analysis.flags"] == "",
                       "%s frame %d: unexpected flags %s" % (name, n, row["chunk.analysis.flags"]))
        for f, v in want.items():
            fail.check(ct.same_value(f, row[f], v), "%s frame %d: %s = %r, want %r" % (name, n, f, row[f], v))
        for f in FIELDS:
            a, b = one[n - 1][f], row[f]
            if f == "chunk.analysis.flags":
                a = int(a or "0", 16) & ~0x1000
                b = int(b or "0", 16) & ~0x1000
            if f == "_ws.col.Info":
                b = b.replace(" [Incomplete]", "")
            if f in FORWARD:
                fail.check(f == "chunk.reassembled_in" or a == "",
                           "%s frame %d: forward-looking %s in one pass" % (name, n, f))
                continue
            fail.check(a == b, "%s frame %d: %s one pass %r, two %r" % (name, n, f, a, b))


if __name__ == "__main__":
    main()
