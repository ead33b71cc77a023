#!/usr/bin/env python3
"""Every R, A, K and C line of the netgame vectors against the dissector.

R: each datagram (one capture, one UDP conversation each):
   every header field, the payload and its length decode exactly, and
   netgame.acked is the ack plus one sequence per set bit.
A: the received sequences are sent by one side, then the other side sends
   the line's ack and ack bits: the frames the analysis says the ack packet
   acknowledges are exactly those of the received sequences within the 33 the
   header covers; the bits' "seen" lines agree.
K: one side sends the pending sequences, the other the ack packet (with
   netgame.max_sequence set to the line's MaxSequence): the frames the
   analysis links are exactly the acked sequences, in the order reported.
C: the conversation of two original endpoints, as their receiving sockets
   saw it (dropped datagrams left out), 10 ms per step so nothing ages past
   1 s: for every received datagram, the packets the analysis says it newly
   acknowledges are those the original's process_ack reported (replayed here
   from the headers); every dropped datagram shows as a sequence gap; and in
   the capture of everything sent, every datagram decodes exactly.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngtest as ng  # noqa: E402

V = ng.read_vectors()


def test_r(F, tmp):
    # (written here: text2pcap and mergecap cost a program start a line)
    merged = os.path.join(tmp, "r.pcap")
    ng.ct.write_pcap(merged, [{"payload": bytes.fromhex(r["hex"]), "sport": 31000 + i, "dport": ng.PORT}
                              for i, r in enumerate(V["R"])])
    names = ["netgame.protocol_id", "netgame.sequence", "netgame.ack", "netgame.ack_bits",
             "netgame.payload_len", "netgame.payload", "netgame.acked"]
    # The lines carry 35 protocol ids: on the port preference only configured
    # ids are netgame's, so they are all configured (the one preference a
    # game with its own id changes).
    ids = ",".join(sorted({"0x%08x" % r["id"] for r in V["R"]}))
    rows = ng.fields(merged, names, prefs={"netgame.protocol_ids": ids})
    F.check(len(rows) == len(V["R"]), "R: %d frames for %d lines" % (len(rows), len(V["R"])))
    for r, row in zip(V["R"], rows):
        tag = "R seq %d" % r["seq"]
        F.check(int(row[0], 16) == r["id"], "%s: protocol_id %s" % (tag, row[0]))
        F.check(int(row[1]) == r["seq"], "%s: sequence %s" % (tag, row[1]))
        F.check(int(row[2]) == r["ack"], "%s: ack %s" % (tag, row[2]))
        F.check(int(row[3], 16) == r["bits"], "%s: ack_bits %s" % (tag, row[3]))
        F.check(int(row[4]) == r["len"], "%s: payload_len %s" % (tag, row[4]))
        want_payload = r["hex"][32:]
        F.check(row[5].replace(":", "") == want_payload, "%s: payload differs" % tag)
        got = [int(x) for x in row[6].split(",")] if row[6] else []
        F.check(got == ng.acked_set(r["ack"], r["bits"]), "%s: acked %s" % (tag, got))


def ack_conversation(packets, t, conv, sent, b_seq, ack, bits):
    """Appends to packets the conversation conv: A sends the sequences sent
    from time t on, 1 ms apart, then B at t + 0.5 s sends sequence b_seq
    acking (ack, bits). Returns {sequence: its frame} and the ack's frame."""
    first = len(packets)
    frames = {}
    for k, s in enumerate(sent):
        frames[s] = first + conv.send("A", t + k * 0.001, seq=s, ack=0, bits=0xFFFFFFFF) + 1
    ack_frame = first + conv.send("B", t + 0.5, seq=b_seq, ack=ack, bits=bits) + 1
    packets += conv.packets
    return frames, ack_frame


def test_a(F, tmp):
    """One conversation per line, A side sends the received sequences."""
    packets = []
    checks = []
    t = 0.0
    for i, a in enumerate(V["A"]):
        # Ports no Wireshark dissector registers (32000 is UAUDP's, which
        # takes the datagram before netgame's port heuristic is asked).
        frames, ack_frame = ack_conversation(packets, t, ng.Conv(a_port=34000 + i, fresh=True), a["received"], 7,
                                             a["ack"], a["bits"])
        window = [s for s in a["received"] if 0 <= (a["ack"] - s) % (1 << 32) <= 32]
        checks.append((a, ack_frame, sorted(frames[s] for s in window), bool(a["received"])))
        t += 3.0
    path = os.path.join(tmp, "a.pcap")
    ng.write_pcap(path, packets)
    frames = ng.decode(path, extra=["-2"])
    for a, ack_frame, want, any_recv in checks:
        fr = frames[ack_frame - 1]
        tag = "A ack %d" % a["ack"]
        got = sorted(int(x) for x in fr["fields"].get("netgame.analysis.acks_frame", []))
        F.check(got == want, "%s: acks frames %s, want %s" % (tag, got, want))
        F.check("netgame.analysis.ack_unsent" not in fr["experts"], "%s: ack_unsent raised" % tag)
        if not any_recv:
            F.check("netgame.analysis.false_ack0.expert" in fr["experts"], "%s: no false ack of 0" % tag)
        lines = fr["fields"].get("netgame.ack_bit.sequence", [])
        F.check(len(lines) == 32, "%s: %d ack bit lines" % (tag, len(lines)))


def test_k(F, tmp):
    for max_seq in sorted({k["max"] for k in V["K"]}):
        packets = []
        checks = []
        t = 0.0
        for i, k in enumerate(x for x in V["K"] if x["max"] == max_seq):
            frames, ack_frame = ack_conversation(packets, t, ng.Conv(a_port=33000 + i, fresh=True, max_seq=max_seq),
                                                 k["pending"], 3, k["ack"], k["bits"])
            checks.append((k, ack_frame, [frames[s] for s in k["acked"]]))
            t += 3.0
        path = os.path.join(tmp, "k%x.pcap" % max_seq)
        ng.write_pcap(path, packets)
        frames = ng.decode(path, prefs={"netgame.max_sequence": max_seq}, extra=["-2"])
        for k, ack_frame, want in checks:
            fr = frames[ack_frame - 1]
            got = [int(x) for x in fr["fields"].get("netgame.analysis.acks_frame", [])]
            F.check(got == want, "K ack %d max %x: acks frames %s, want %s" % (k["ack"], max_seq, got, want))
            acked = [int(x) for x in fr["fields"].get("netgame.acked", [])]
            F.check(sorted(set(acked) & set(k["pending"])) == sorted(k["acked"]),
                    "K ack %d: netgame.acked & pending %s" % (k["ack"], sorted(set(acked) & set(k["pending"]))))
            for fnum in want:
                af = frames[fnum - 1]["fields"].get("netgame.analysis.acked_in", [])
                F.check(af == [str(ack_frame)], "K ack %d: frame %d acked_in %s" % (k["ack"], fnum, af))


def replay_original(lines, false_ack_rule=False):
    """The original endpoints' process_ack, from the headers: for every
    received (not dropped) datagram, the receiver's pending sequences it acks,
    in pending order. Nothing ages out (the test runs 10 ms per step).

    The original counts ack 0 with no bits as an ack of sequence 0 every time.
    With false_ack_rule the replay does what the dissector does instead: such
    an ack does not count while the peer's sequence 0 has not been seen in the
    capture (the receivers' capture, in the order of test_c's frames)."""
    out = []
    pending = {"client": [], "server": []}
    seen0 = {"client": False, "server": False}
    steps = sorted({c["step"] for c in lines})
    by_step = {s: [c for c in lines if c["step"] == s] for s in steps}
    for s in steps:
        for c in by_step[s]:
            pending[c["from"]].append(c["seq"])
        for c in by_step[s]:
            if c["dropped"]:
                continue
            rx = "server" if c["from"] == "client" else "client"
            acks = ng.acked_set(c["ack"], c["bits"])
            false_ack = c["ack"] == 0 and c["bits"] == 0 and not seen0[rx]
            if false_ack_rule and false_ack:
                acks = []
            acked = [p for p in pending[rx] if p in acks]
            pending[rx] = [p for p in pending[rx] if p not in acked]
            out.append((c, acked, false_ack))
            if c["seq"] == 0:
                seen0[c["from"]] = True
    return out


def test_c(F, tmp):
    lines = V["C"]
    def pkt(c, t):
        client = c["from"] == "client"
        return {"payload": bytes.fromhex(c["hex"]), "t": t,
                "src": "127.0.0.1" if client else "127.0.0.2", "dst": "127.0.0.2" if client else "127.0.0.1",
                "sport": 30001 if client else 30000, "dport": 30000 if client else 30001}
    # Everything sent: every field decodes exactly.
    sent = [pkt(c, c["step"] * 0.01 + (0.001 if c["from"] == "server" else 0)) for c in lines]
    path = os.path.join(tmp, "c-sent.pcap")
    ng.write_pcap(path, sent)
    rows = ng.fields(path, ["netgame.sequence", "netgame.ack", "netgame.ack_bits", "netgame.payload_len"])
    for c, row in zip(lines, rows):
        F.check([int(row[0]), int(row[1]), int(row[2], 16), int(row[3])] ==
                [c["seq"], c["ack"], c["bits"], c["len"]], "C step %d %s: decoded %s" % (c["step"], c["from"], row))
    # What the receivers got.
    got_lines = [c for c in lines if not c["dropped"]]
    recv = [pkt(c, c["step"] * 0.01 + 0.005 + (0.001 if c["from"] == "server" else 0)) for c in got_lines]
    path = os.path.join(tmp, "c-recv.pcap")
    ng.write_pcap(path, recv)
    frames = ng.decode(path, extra=["-2"])
    frame_of = {}
    for i, c in enumerate(got_lines):
        frame_of[(c["from"], c["seq"])] = i + 1
    original = replay_original(lines)
    replay = replay_original(lines, false_ack_rule=True)
    F.check(len(replay) == len(frames), "C: %d received, %d frames" % (len(replay), len(frames)))
    differ = 0
    for (c, acked, false_ack), (_, orig_acked, _), fr in zip(replay, original, frames):
        peer = "server" if c["from"] == "client" else "client"
        want = [frame_of[(peer, s)] for s in acked if (peer, s) in frame_of]
        F.check(len(want) == len(acked), "C step %d: original acked a dropped datagram %s" % (c["step"], acked))
        got = [int(x) for x in fr["fields"].get("netgame.analysis.acks_frame", [])]
        F.check(got == want, "C step %d %s seq %d: acks frames %s, original %s (frames %s)"
                % (c["step"], c["from"], c["seq"], got, acked, want))
        F.check(false_ack == ("netgame.analysis.false_ack0.expert" in fr["experts"]),
                "C step %d %s: false ack of 0 %s, expert %s" % (c["step"], c["from"], false_ack, fr["experts"]))
        differ += acked != orig_acked
    # The original's false ack of the server's 0 (step 2) is the only
    # difference: the dissector links sequence 0 to the client's genuine ack
    # at step 4 instead.
    F.check(differ == 2, "C: %d received datagrams ack otherwise than in the original (want 2)" % differ)
    # Dropped datagrams are the receiver-side gaps.
    for side in ("client", "server"):
        dropped = sum(1 for c in lines if c["from"] == side and c["dropped"])
        last = max(c["seq"] for c in lines if c["from"] == side)
        trailing = sum(1 for c in lines if c["from"] == side and c["dropped"] and
                       all(d["dropped"] for d in lines if d["from"] == side and d["seq"] > c["seq"]))
        gaps = sum(int(fr["fields"].get("netgame.analysis.seq_gap", ["0"])[0])
                   for c, fr in zip(got_lines, frames) if c["from"] == side)
        F.check(gaps == dropped - trailing, "C %s: gaps %d, dropped %d (%d after the last received, last %d)"
                % (side, gaps, dropped, trailing, last))


def main():
    ng.run_checks("netgame.vectors (%d R, %d A, %d K, %d C lines)" %
                  (len(V["R"]), len(V["A"]), len(V["K"]), len(V["C"])), test_r, test_a, test_k, test_c)


if __name__ == "__main__":
    main()
