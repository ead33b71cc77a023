#!/usr/bin/env python3
"""One crafted capture per netgame expert info; the crafted packet raises
exactly its own, and every other packet of the capture none.

Each capture is a healthy exchange (Conv: both sides at 10 packets/s, each
acking what it received, started mid-connection so nothing is a false ack of
0) with one thing wrong. Checked with tshark -2 and in the single pass,
where "lost" is raised on the frame that finds it (docs/netgame.md). Also:
`tshark -q -z expert` without a tree lists the same, and how traffic is found
(port, heuristic, Decode As, the protocol id preference).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngtest as ng  # noqa: E402


def healthy(rounds=6, **kw):
    c = ng.Conv(**kw)
    t = c.exchange(0.0, rounds)
    return c, t


def scenarios():
    """name -> (Conv packets, {frame index: expected experts}, prefs)."""
    out = {}

    c, t = healthy()
    c.next["A"] += 2
    i = c.send("A", t)
    c.send("B", t + 0.05)
    c.exchange(t + 0.1, 2)
    out["seq_gap"] = (c.packets, {i: ["netgame.analysis.seq_gap.expert"]}, None)

    c, t = healthy()
    s = c.next["A"]
    c.send("A", t, seq=s + 1)                 # gap of one
    c.send("B", t + 0.05)
    j = c.send("A", t + 0.1, seq=s, advance=False)   # the missing one, late
    c.next["A"] = s + 2
    c.send("B", t + 0.15)
    c.exchange(t + 0.2, 2)
    out["sequence_back"] = (c.packets, {j - 2: ["netgame.analysis.seq_gap.expert"],
                                        j: ["netgame.analysis.sequence_back"]}, None)

    c, t = healthy()
    i = c.send("A", t)
    c.send("B", t + 0.05)
    k = c.send("A", t + 0.06, seq=c.packets[i]["seq"], ack=c.packets[i]["ack"], bits=c.packets[i]["bits"])
    c.exchange(t + 0.1, 2)
    out["sequence_repeat"] = (c.packets, {k: ["netgame.analysis.sequence_repeat"]}, None)

    c, t = healthy()
    c.send("A", t)
    a = c.remote["B"]
    i = c.send("B", t + 0.05, ack=a - 2, bits=ng.ack_bits_from(a - 2, c.recv["B"]))
    c.exchange(t + 0.1, 2)
    out["ack_back"] = (c.packets, {i: ["netgame.analysis.ack_back"]}, None)

    c, t = healthy()
    c.send("A", t)
    fake = c.next["A"] + 5
    i = c.send("B", t + 0.05, ack=fake, bits=ng.ack_bits_from(fake, c.recv["B"]))
    c.exchange(t + 0.1, 2)
    out["ack_unsent"] = (c.packets, {i: ["netgame.analysis.ack_unsent"]}, None)

    c, t = healthy()
    c.send("A", t)
    i = c.send("B", t + 0.05, ack=c.remote["B"], bits=ng.ack_bits_from(c.remote["B"], c.recv["B"]) | (1 << 31))
    c.exchange(t + 0.1, 2)
    # bit 31 names a sequence 32 back: from before A's first here, so unknown
    # (not flagged); a bit for a sequence A skipped names a packet B
    # received that the capture does not hold: "Packets not captured".
    c2, t2 = healthy()
    c2.next["A"] += 1
    g = c2.send("A", t2)
    missing = c2.packets[g]["seq"] - 1
    bits = ng.ack_bits_from(c2.remote["B"], c2.recv["B"] | {missing})
    i2 = c2.send("B", t2 + 0.05, bits=bits)
    c2.exchange(t2 + 0.1, 2)
    out["ack_bit_not_captured"] = (c2.packets, {g: ["netgame.analysis.seq_gap.expert"],
                                                i2: ["netgame.analysis.not_captured.expert"]}, None)
    out["ack_bit_before_capture"] = (c.packets, {}, None)

    c = ng.Conv(fresh=True, seq_a=0, seq_b=0)
    i = c.send("A", 0.0)
    out["false_ack0"] = (c.packets, {i: ["netgame.analysis.false_ack0.expert"]}, None)

    c, t = healthy()
    i = c.send("A", t, deliver=False)
    c.send("B", t + 0.05)
    c.exchange(t + 0.1, 14)
    out["lost"] = (c.packets, {i: ["netgame.analysis.lost.expert"]}, None)

    c, t = healthy()
    fast = []
    for k in range(8):
        fast.append(c.send("A", t + k / 30.0))
        if k % 3 == 2:
            c.send("B", t + k / 30.0 + 0.01)
    n0 = len(c.packets)
    c.exchange(t + 0.5, 4, interval=0.1)
    # The mode follows the trimmed mean of the last 6 intervals (the first
    # fast packet's own interval is still 100 ms): Good at the fifth fast
    # packet, Bad again at the third slow one (its interval 100 ms).
    out["mode_switch"] = (c.packets, {fast[4]: ["netgame.analysis.mode_switch"],
                                      n0 + 4: ["netgame.analysis.mode_switch"]}, None)

    c, t = healthy()
    i = c.send("A", t, raw=ng.header(1, 2, 3)[:10])
    c.exchange(t + 0.1, 2)
    out["short"] = (c.packets, {i: ["netgame.short"]}, None)

    c, t = healthy()
    i = c.send("A", t, payload=b"")
    c.send("B", t + 0.05)
    out["header_only"] = (c.packets, {i: ["netgame.header_only"]}, None)

    c, t = healthy()
    i = c.send("A", t, protocol_id=0x11112222, advance=False)
    c.exchange(t + 0.1, 2)
    out["id_changed"] = (c.packets, {i: ["netgame.protocol_id.changed"]}, None)

    # An id that is not configured is netgame's under Decode As (an expert
    # says so); on the port preference it is left to other dissectors
    # (test_finding), unless configured.
    c = ng.Conv(protocol_id=0x11112222, b_port=7777)
    i = c.send("A", 0.0)
    out["id_unexpected"] = (c.packets, {i: ["netgame.protocol_id.unexpected"]}, {"-d": "udp.port==7777,netgame"})
    c = ng.Conv(protocol_id=0x11112222)
    c.send("A", 0.0)
    out["id_configured"] = (c.packets, {}, {"netgame.protocol_ids": "0x11223344,0x11112222"})
    return out


def check(F, tmp, name, packets, want, prefs):
    path = os.path.join(tmp, name + ".pcap")
    ng.write_pcap(path, packets)
    for mode in ("2pass", "1pass"):
        pass_prefs = dict(prefs or {})
        decode_as = ["-d", pass_prefs.pop("-d")] if "-d" in pass_prefs else []
        frames = ng.decode(path, pass_prefs, extra=decode_as + (["-2"] if mode == "2pass" else []))
        for n, fr in enumerate(frames):
            exp = list(want.get(n, []))
            got = fr["experts"]
            if "netgame.analysis.lost.expert" in exp:
                exp.remove("netgame.analysis.lost.expert")
            if "netgame.analysis.lost.expert" in got:
                # Raised on the first frame over 1 s later, on every pass
                # (the first pass sets the GUI's expert indicator).
                lost_of = fr["fields"].get("netgame.analysis.lost_frame", [])
                F.check([int(x) - 1 for x in lost_of] == [k for k, v in want.items()
                                                          if "netgame.analysis.lost.expert" in v],
                        "%s 1pass frame %d: lost found of %s" % (name, n + 1, lost_of))
                got = [g for g in got if g != "netgame.analysis.lost.expert"]
            F.check(sorted(got) == sorted(exp), "%s %s frame %d: experts %s, want %s"
                    % (name, mode, n + 1, got, exp))
            F.check(fr["netgame"], "%s frame %d not decoded as netgame" % (name, n + 1))
    return path


def test_z_expert(F, path, want_summary):
    """-q -z expert (no tree, no filter) lists the expert."""
    for extra in (["-2"], []):
        out = ng.tshark(["-r", path, "-q", "-z", "expert"] + extra)
        F.check(want_summary in out, "-z expert %s on %s lacks %r:\n%s"
                % (extra, os.path.basename(path), want_summary, out))


def test_detail(F, path, want):
    """An expert info's detail item (netgame.expert.detail) holds want."""
    out = ng.tshark(["-r", path, "-T", "fields", "-e", "netgame.expert.detail"])
    F.check(want in out, "netgame.expert.detail on %s lacks %r:\n%s" % (os.path.basename(path), want, out[:2000]))


def test_first_pass(F, path, expert):
    """The first of two passes (the GUI's: it sets the expert indicator, the
    highest severity in the status bar) holds the expert info: -2 -R filters
    on that pass. A loss is raised on the frame that finds it."""
    # (-R drops the other frames, so the ones kept are renumbered: counts.)
    first = ng.tshark(["-r", path, "-2", "-R", expert, "-T", "fields", "-e", "frame.number"]).split()
    second = ng.tshark(["-r", path, "-2", "-Y", expert, "-T", "fields", "-e", "frame.number"]).split()
    F.check(first, "%s: no frame with %s on the first pass" % (os.path.basename(path), expert))
    F.check(len(first) == len(second), "%s: %s on %d frames on the first pass, %d on the second"
            % (os.path.basename(path), expert, len(first), len(second)))


def test_finding(F, tmp):
    """Port, heuristic (any port, configured id, >= 16 bytes), Decode As."""
    c = ng.Conv(a_port=41001, b_port=41002)
    c.exchange(0.0, 2)
    c.send("A", 0.3, raw=ng.header(1, 2, 3)[:12])      # short: heuristic leaves it (no conversation yet? it has one)
    p = os.path.join(tmp, "heur.pcap")
    ng.write_pcap(p, c.packets)
    fr = ng.decode(p)
    F.check(all(f["netgame"] for f in fr[:4]), "heuristic: healthy packets on 41001/41002 not decoded")
    fr = ng.decode(p, extra=["--disable-heuristic", "netgame_udp"])
    F.check(not any(f["netgame"] for f in fr), "heuristic off: still decoded")
    # Another id on another port: only with the preference or Decode As.
    c = ng.Conv(a_port=42001, b_port=42002, protocol_id=0x11112222)
    c.exchange(0.0, 2)
    p = os.path.join(tmp, "otherid.pcap")
    ng.write_pcap(p, c.packets)
    F.check(not any(f["netgame"] for f in ng.decode(p)), "id 0x11112222 decoded without the preference")
    fr = ng.decode(p, prefs={"netgame.protocol_ids": "0x11112222"})
    F.check(all(f["netgame"] and not f["experts"] for f in fr), "protocol_ids 0x11112222: %s" % fr)
    fr = ng.decode(p, extra=["-d", "udp.port==42002,netgame"])
    F.check(all(f["netgame"] and f["experts"] == ["netgame.protocol_id.unexpected"] for f in fr),
            "Decode As 0x11112222: %s" % [f["experts"] for f in fr])
    # On the port preference (30000) too, an id that is not configured is
    # left to other dissectors: a protocol2 fragment packet (vectors-fragments.txt's F line of
    # sequence 65535, fragment 1; id 0x55667788 in its CRC) to p2frag.
    c = ng.Conv(protocol_id=0x11112222)
    c.exchange(0.0, 2)
    frag_rows = [{"payload": bytes.fromhex("0ecb924effff040800") + b"\x99", "sport": 30001, "dport": ng.PORT}]
    p = os.path.join(tmp, "port-otherid.pcap")
    ng.write_pcap(p, c.packets)
    F.check(not any(f["netgame"] for f in ng.decode(p)), "port 30000: id 0x11112222 decoded without the preference")
    p = os.path.join(tmp, "port-p2frag.pcap")
    ng.write_pcap(p, frag_rows)
    out = ng.tshark(["-r", p, "-T", "fields", "-e", "frame.protocols"]).strip()
    F.check(out.endswith("udp:p2frag"), "port 30000: a fragment packet is %r, want p2frag" % out)
    # The same on a port given by -o: the dissector follows the changed
    # preference (it keeps a copy of the range, refreshed when preferences
    # are applied).
    p = os.path.join(tmp, "port42002-p2frag.pcap")
    ng.write_pcap(p, [dict(frag_rows[0], sport=42001, dport=42002)])
    out = ng.tshark(["-r", p, "-T", "fields", "-e", "frame.protocols", "-o", "netgame.udp.port:42002"]).strip()
    F.check(out.endswith("udp:p2frag"), "-o netgame.udp.port:42002: a fragment packet is %r, want p2frag" % out)
    # A netgame packet on 42002 with the heuristic for any port off: only
    # the port (the netgame_udp_port heuristic) can claim it, and it
    # does once -o gives it the port. (Both run after the udp.port table:
    # a datagram that is also a valid fragment packet goes to whichever
    # heuristic Wireshark asks first.)
    c = ng.Conv(a_port=42001, b_port=42002)
    c.exchange(0.0, 2)
    p = os.path.join(tmp, "port42002.pcap")
    ng.write_pcap(p, c.packets)
    for port, want in (("42002", True), ("30000", False)):
        fr = ng.decode(p, prefs={"netgame.udp.port": port}, extra=["--disable-heuristic", "netgame_udp"])
        F.check(all(f["netgame"] == want for f in fr), "-o netgame.udp.port:%s, heuristic off: %s" % (
            port, [f["netgame"] for f in fr]))
    # A datagram under 16 bytes is not claimed by the heuristic.
    p = os.path.join(tmp, "short.pcap")
    ng.write_pcap(p, [{"payload": ng.header(1, 2, 3)[:15], "sport": 43001, "dport": 43002}])
    F.check(not ng.decode(p)[0]["netgame"], "heuristic claimed 15 bytes")
    # Payload: data by default, Decode As by protocol id.
    c = ng.Conv()
    c.send("A", 0.0, payload=b"\x45\x00\x00\x14" + bytes(16))
    p = os.path.join(tmp, "payload.pcap")
    ng.write_pcap(p, c.packets)
    out = ng.tshark(["-r", p, "-T", "fields", "-e", "frame.protocols"])
    F.check(out.strip().endswith("netgame:data"), "payload default: %s" % out)
    out = ng.tshark(["-r", p, "-T", "fields", "-e", "frame.protocols",
                     "-d", "netgame.protocol_id==0x11223344,ip"])
    F.check(out.strip().endswith("netgame:ip"), "payload Decode As ip: %s" % out)


def test_wrap(F, tmp):
    """MaxSequence 31: sequences cycle without gaps; the half-range tie."""
    c = ng.Conv(max_seq=31, seq_a=28, seq_b=5)
    c.exchange(0.0, 8)
    p = os.path.join(tmp, "wrap.pcap")
    ng.write_pcap(p, c.packets)
    fr = ng.decode(p, prefs={"netgame.max_sequence": 31}, extra=["-2"])
    for n, f in enumerate(fr[:-2]):
        F.check(f["experts"] == [], "wrap 31 frame %d: %s" % (n + 1, f["experts"]))
        F.check("netgame.analysis.acked_in" in f["fields"], "wrap 31 frame %d not acked" % (n + 1))
    # Tie: with MaxSequence 31, 16 after 0 is exactly half the space: 0 is
    # more recent, so 16 goes back; 15 after 0 is a gap of 14.
    for second, exp in ((16, ["netgame.analysis.sequence_back"]), (15, ["netgame.analysis.seq_gap.expert"])):
        c = ng.Conv(max_seq=31, seq_a=0, seq_b=9)
        c.send("A", 0.0, seq=0)
        c.send("A", 0.1, seq=second)
        p = os.path.join(tmp, "tie%d.pcap" % second)
        ng.write_pcap(p, c.packets)
        fr = ng.decode(p, prefs={"netgame.max_sequence": 31})
        F.check(fr[1]["experts"] == exp, "tie 0 then %d: %s" % (second, fr[1]["experts"]))
    # The same at 2^32: 0x80000000 after 0 goes back.
    c = ng.Conv(seq_a=0, seq_b=9)
    c.send("A", 0.0, seq=0)
    c.send("A", 0.1, seq=0x80000000)
    p = os.path.join(tmp, "tie32.pcap")
    ng.write_pcap(p, c.packets)
    fr = ng.decode(p)
    F.check(fr[1]["experts"] == ["netgame.analysis.sequence_back"], "tie 2^31: %s" % fr[1]["experts"])


def main():
    F = ng.Failures()
    with ng.scratch_dir() as tmp:
        paths = {}
        for name, (packets, want, prefs) in scenarios().items():
            paths[name] = check(F, tmp, name, packets, want, prefs)
        # -z expert lists the fixed summaries (one row per kind); the
        # numbers and the direction are in the tree's detail items.
        test_z_expert(F, paths["lost"], "Packet lost: not acknowledged within 1 s")
        test_first_pass(F, paths["lost"], "netgame.analysis.lost.expert")
        test_z_expert(F, paths["mode_switch"], "Flow-control mode switch")
        test_detail(F, paths["mode_switch"], "Flow-control mode switch to Bad")
        test_z_expert(F, paths["false_ack0"], "False ack of sequence 0")
        test_z_expert(F, paths["sequence_repeat"], "Sequence repeats: duplicate")
        test_detail(F, paths["sequence_repeat"], "a duplicate")
        test_finding(F, tmp)
        test_wrap(F, tmp)
    F.finish("netgame.experts")


if __name__ == "__main__":
    main()
