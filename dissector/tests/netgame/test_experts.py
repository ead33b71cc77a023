#!/usr/bin/env python3
"""One crafted capture per netgame expert info; the crafted packet raises
exactly its own, and every other packet of the capture none.

Each capture is a healthy exchange (Conv: both sides at 10 packets/s, each
acking what it received, started mid-connection so nothing is a false ack of
0) with one thing wrong. Checked with tshark -2 and in the single pass,
where "lost" is raised on the frame that finds it (docs/netgame.md). Also:
`tshark -q -z expert` without a tree lists the same, and how traffic is found
(port, heuristic, Decode As, the protocol id preference).

The cases decoded with the same arguments share one capture (Batch: each
case its own addresses, all ending at the same time) and one tshark run per
pass; every check reads only its own case's frames and names the case.
"""
import heapq
import os
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


class Batch:
    """Cases decoded with the same arguments, in one capture decoded by one
    tshark run per pass mode. Each case keeps its own addresses (its IPv4
    addresses xored with 0.h.l.0, h.l its number from 1, as
    chunktest.concat_captures does: conversations and their analysis stay
    apart) and its frames' order and intervals; all cases end at the same
    time (the end of the capture decides what was lost on the second pass,
    as it does when each case is a capture of its own), their frames merged
    by time. Each case's check gets its own frames (numbered from 0) and
    local(n): the case's own frame number of the capture's frame n (None:
    another case's)."""

    def __init__(self, F, tmp, name, args):
        self.F, self.tmp, self.name, self.args = F, tmp, name, list(args)
        self.cases = []   # (case name, packets, check(mode, frames, local))
        self.path = None
        self.frame_of = []   # capture frame n - 1 -> (case index, case frame index)

    def add(self, name, packets, check):
        assert name not in [c[0] for c in self.cases], name
        self.cases.append((name, packets, check))

    def merged(self):
        if self.path is not None:
            return self.path
        streams = []
        for i, (_, packets, _) in enumerate(self.cases):
            mask = (0, ((i + 1) >> 8) & 255, (i + 1) & 255, 0)
            us = [int(round(p.get("t", k * 0.01) * 1e6)) for k, p in enumerate(packets)]
            shift = 1000 * 1000000 - max(us)
            rows = []
            for k, p in enumerate(packets):
                p = dict(p, t=(us[k] + shift) / 1e6)
                for key, default in (("src", "10.0.0.1"), ("dst", "10.0.0.2")):
                    p[key] = ".".join(str(int(x) ^ m) for x, m in zip(p.get(key, default).split("."), mask))
                rows.append((us[k] + shift, i, k, p))
            streams.append(rows)
        merged = list(heapq.merge(*streams, key=lambda r: (r[0], r[1])))
        self.frame_of = [(i, k) for _, i, k, _ in merged]
        self.path = os.path.join(self.tmp, self.name + ".pcap")
        ng.write_pcap(self.path, [r[3] for r in merged])
        return self.path

    def case_of_frame(self, number):
        return self.cases[self.frame_of[number - 1][0]][0]

    def run(self, modes=("2pass", "1pass")):
        """Decodes the merged capture once per mode and hands each case its
        frames; returns {mode: all frames}."""
        path = self.merged()
        out = {}
        for mode in modes:
            frames = ng.decode(path, extra=self.args + (["-2"] if mode == "2pass" else []))
            out[mode] = frames
            self.F.check(len(frames) == len(self.frame_of), "%s %s: %d frames decoded of %d"
                         % (self.name, mode, len(frames), len(self.frame_of)))
            for i, (name, packets, check) in enumerate(self.cases):
                own = [fr for fr, (c, _) in zip(frames, self.frame_of) if c == i]

                def local(n, i=i):
                    c, k = self.frame_of[n - 1] if 0 < n <= len(self.frame_of) else (None, None)
                    return k + 1 if c == i else None
                self.F.check(len(own) == len(packets), "%s %s: %d frames decoded of %d"
                             % (name, mode, len(own), len(packets)))
                check(mode, own, local)
        return out


def scenario_check(F, name, want):
    """The check of one scenario: each frame holds exactly its expert infos."""
    def check(mode, frames, local):
        F.check(len(frames) > max(list(want) + [0]), "%s %s: only %d frames" % (name, mode, len(frames)))
        for n, fr in enumerate(frames):
            exp = list(want.get(n, []))
            got = fr["experts"]
            if "netgame.analysis.lost.expert" in exp:
                exp.remove("netgame.analysis.lost.expert")
            if "netgame.analysis.lost.expert" in got:
                # Raised on the first frame over 1 s later, on every pass
                # (the first pass sets the GUI's expert indicator).
                lost_of = [local(int(x)) for x in fr["fields"].get("netgame.analysis.lost_frame", [])]
                F.check([x - 1 if x else None for x in lost_of] ==
                        [k for k, v in want.items() if "netgame.analysis.lost.expert" in v],
                        "%s %s frame %d: lost found of %s" % (name, mode, n + 1, lost_of))
                got = [g for g in got if g != "netgame.analysis.lost.expert"]
            F.check(sorted(got) == sorted(exp), "%s %s frame %d: experts %s, want %s"
                    % (name, mode, n + 1, got, exp))
            F.check(fr["netgame"], "%s frame %d not decoded as netgame" % (name, n + 1))
    return check


def only(wanted_mode, check):
    """check, called only with the frames of pass mode wanted_mode."""
    def call(mode, frames, local):
        if mode == wanted_mode:
            check(frames)
    return call


def z_expert_checks(F, batch, cases):
    """-q -z expert (no tree, no filter) of the batch lists each (case,
    summary) of cases: expert infos raised only in case's frames (its
    scenario check holds every other frame to none)."""
    for extra in (["-2"], []):
        out = ng.tshark(["-r", batch.merged(), "-q", "-z", "expert"] + batch.args + extra)
        for case, want_summary in cases:
            F.check(want_summary in out, "%s: -z expert %s lacks %r:\n%s" % (case, extra, want_summary, out))


def detail_check(F, name, want):
    """An expert info's detail item (netgame.expert.detail) holds want (one pass)."""
    def check(frames):
        details = [d for fr in frames for d in fr["fields"].get("netgame.expert.detail", [])]
        F.check(any(want in d for d in details), "%s: netgame.expert.detail lacks %r: %s" % (name, want, details))
    return only("1pass", check)


def test_first_pass(F, batch, second, case, expert):
    """The first of two passes (the GUI's: it sets the expert indicator, the
    highest severity in the status bar) holds the expert info: -2 -R filters
    on that pass. A loss is raised on the frame that finds it. second: the
    -2 decode of the batch (the second pass)."""
    # (-R drops the other frames, so the ones kept are renumbered: counts.)
    first = ng.tshark(["-r", batch.merged(), "-2", "-R", expert, "-T", "fields", "-e", "frame.number"]
                      + batch.args).split()
    on_second = [n + 1 for n, fr in enumerate(second) if expert in fr["experts"]]
    F.check(first, "%s: no frame with %s on the first pass" % (case, expert))
    F.check(len(first) == len(on_second), "%s: %s on %d frames on the first pass, %d on the second"
            % (case, expert, len(first), len(on_second)))
    F.check(all(batch.case_of_frame(n) == case for n in on_second), "%s: %s on the second pass in frames %s"
            " of cases %s" % (case, expert, on_second, [batch.case_of_frame(n) for n in on_second]))


def finding(F, common, no_heur, more):
    """Port, heuristic (any port, configured id, >= 16 bytes), Decode As.
    common: the batch of the scenarios (defaults, Decode As of udp.port 7777
    and 42012: ports only the cases decoded as netgame by it use); no_heur: the netgame_udp heuristic off; more: batches of
    their own arguments, by name."""
    def netgame(name, want, mode="1pass", upto=None):
        def check(frames):
            got = [f["netgame"] for f in frames[:upto]]
            F.check(got and all(g == want for g in got), "%s: decoded as netgame %s, want %s" % (name, got, want))
        return only(mode, check)

    def protocols(name, suffix):
        def check(frames):
            got = [f["protocols"] for f in frames]
            F.check(got and all(p.endswith(suffix) for p in got), "%s: frame.protocols %s, want ...%s"
                    % (name, got, suffix))
        return only("1pass", check)

    c = ng.Conv(a_port=41001, b_port=41002)
    c.exchange(0.0, 2)
    c.send("A", 0.3, raw=ng.header(1, 2, 3)[:12])      # short: heuristic leaves it (no conversation yet? it has one)
    common.add("heur", c.packets, netgame("heuristic: healthy packets on 41001/41002", True, upto=4))
    no_heur.add("heur", c.packets, netgame("heuristic off: heur capture", False))
    # Another id on another port: only with the preference or Decode As.
    c = ng.Conv(a_port=42001, b_port=42002, protocol_id=0x11112222)
    c.exchange(0.0, 2)
    common.add("otherid", c.packets, netgame("id 0x11112222 without the preference", False))

    def no_experts(frames):
        F.check(frames and all(f["netgame"] and not f["experts"] for f in frames),
                "protocol_ids 0x11112222: %s" % frames)
    more["ids_other"].add("otherid", c.packets, only("1pass", no_experts))
    # (Decode As of 42012: the same conversation on ports of its own.)
    c = ng.Conv(a_port=42011, b_port=42012, protocol_id=0x11112222)
    c.exchange(0.0, 2)

    def unexpected(frames):
        F.check(frames and all(f["netgame"] and f["experts"] == ["netgame.protocol_id.unexpected"] for f in frames),
                "Decode As 0x11112222: %s" % [f["experts"] for f in frames])
    common.add("otherid_decode_as", c.packets, only("1pass", unexpected))
    # On the port preference (30000) too, an id that is not configured is
    # left to other dissectors: a protocol2 fragment packet (vectors-fragments.txt's F line of
    # sequence 65535, fragment 1; id 0x55667788 in its CRC) to p2frag.
    c = ng.Conv(protocol_id=0x11112222)
    c.exchange(0.0, 2)
    frag_rows = [{"payload": bytes.fromhex("0ecb924effff040800") + b"\x99", "sport": 30001, "dport": ng.PORT}]
    common.add("port_otherid", c.packets, netgame("port 30000: id 0x11112222 without the preference", False))
    common.add("port_p2frag", frag_rows, protocols("port 30000: a fragment packet", "udp:p2frag"))
    # The same on a port given by -o: the dissector follows the changed
    # preference (it keeps a copy of the range, refreshed when preferences
    # are applied).
    more["port42002"].add("port42002_p2frag", [dict(frag_rows[0], sport=42001, dport=42002)],
                          protocols("-o netgame.udp.port:42002: a fragment packet", "udp:p2frag"))
    # A netgame packet on 42002 with the heuristic for any port off: only
    # the port (the netgame_udp_port heuristic) can claim it, and it
    # does once -o gives it the port. (Both run after the udp.port table:
    # a datagram that is also a valid fragment packet goes to whichever
    # heuristic Wireshark asks first.)
    c = ng.Conv(a_port=42001, b_port=42002)
    c.exchange(0.0, 2)
    more["port42002_no_heur"].add("port42002", c.packets,
                                  netgame("-o netgame.udp.port:42002, heuristic off", True))
    no_heur.add("port42002", c.packets, netgame("-o netgame.udp.port:30000, heuristic off", False))
    # A datagram under 16 bytes is not claimed by the heuristic.
    common.add("short15", [{"payload": ng.header(1, 2, 3)[:15], "sport": 43001, "dport": 43002}],
             netgame("heuristic: 15 bytes", False))
    # Payload: data by default, Decode As by protocol id.
    c = ng.Conv()
    c.send("A", 0.0, payload=b"\x45\x00\x00\x14" + bytes(16))
    common.add("payload", c.packets, protocols("payload default", "netgame:data"))
    more["payload_ip"].add("payload", c.packets, protocols("payload Decode As ip", "netgame:ip"))


def wrap(F, common, max31):
    """MaxSequence 31: sequences cycle without gaps; the half-range tie."""
    c = ng.Conv(max_seq=31, seq_a=28, seq_b=5)
    c.exchange(0.0, 8)

    def cycle(frames):
        F.check(len(frames) == 16, "wrap 31: %d frames" % len(frames))
        for n, f in enumerate(frames[:-2]):
            F.check(f["experts"] == [], "wrap 31 frame %d: %s" % (n + 1, f["experts"]))
            F.check("netgame.analysis.acked_in" in f["fields"], "wrap 31 frame %d not acked" % (n + 1))
    max31.add("wrap", c.packets, only("2pass", cycle))

    def tie(name, exp):
        def check(frames):
            F.check(len(frames) == 2 and frames[1]["experts"] == exp, "%s: %s" % (
                name, [f["experts"] for f in frames]))
        return only("1pass", check)
    # Tie: with MaxSequence 31, 16 after 0 is exactly half the space: 0 is
    # more recent, so 16 goes back; 15 after 0 is a gap of 14.
    for second, exp in ((16, ["netgame.analysis.sequence_back"]), (15, ["netgame.analysis.seq_gap.expert"])):
        c = ng.Conv(max_seq=31, seq_a=0, seq_b=9)
        c.send("A", 0.0, seq=0)
        c.send("A", 0.1, seq=second)
        max31.add("tie%d" % second, c.packets, tie("tie 0 then %d" % second, exp))
    # The same at 2^32: 0x80000000 after 0 goes back.
    c = ng.Conv(seq_a=0, seq_b=9)
    c.send("A", 0.0, seq=0)
    c.send("A", 0.1, seq=0x80000000)
    common.add("tie32", c.packets, tie("tie 2^31", ["netgame.analysis.sequence_back"]))


def main():
    F = ng.Failures()
    with ng.scratch_dir() as tmp:
        no_heur = ["--disable-heuristic", "netgame_udp"]
        common = Batch(F, tmp, "common", ["-d", "udp.port==7777,netgame", "-d", "udp.port==42012,netgame"])
        batches = {
            "configured": Batch(F, tmp, "configured", ["-o", "netgame.protocol_ids:0x11223344,0x11112222"]),
            "no_heur": Batch(F, tmp, "no_heur", ["-o", "netgame.udp.port:30000"] + no_heur),
            "port42002_no_heur": Batch(F, tmp, "port42002_no_heur", ["-o", "netgame.udp.port:42002"] + no_heur),
            "port42002": Batch(F, tmp, "port42002", ["-o", "netgame.udp.port:42002"]),
            "ids_other": Batch(F, tmp, "ids_other", ["-o", "netgame.protocol_ids:0x11112222"]),
            "payload_ip": Batch(F, tmp, "payload_ip", ["-d", "netgame.protocol_id==0x11223344,ip"]),
            "max31": Batch(F, tmp, "max31", ["-o", "netgame.max_sequence:31"]),
        }
        for name, (packets, want, prefs) in scenarios().items():
            checks = [scenario_check(F, name, want)]
            # -z expert lists the fixed summaries (one row per kind); the
            # numbers and the direction are in the tree's detail items.
            if name == "mode_switch":
                checks.append(detail_check(F, name, "Flow-control mode switch to Bad"))
            elif name == "sequence_repeat":
                checks.append(detail_check(F, name, "a duplicate"))
            prefs = dict(prefs or {})
            if "-d" in prefs:
                # Decode As of a port no other case uses: in the common batch.
                assert common.args[common.args.index(prefs["-d"]) - 1] == "-d"
                del prefs["-d"]
            batch = common if not prefs else batches["configured"]
            assert ng.ct.pref_args(prefs) == batch.args[:len(ng.ct.pref_args(prefs))]
            batch.add(name, packets, lambda *a, checks=checks: [c(*a) for c in checks])
        finding(F, common, batches["no_heur"], batches)
        wrap(F, common, batches["max31"])
        decoded = common.run()
        z_expert_checks(F, common, [("lost", "Packet lost: not acknowledged within 1 s"),
                                    ("mode_switch", "Flow-control mode switch"),
                                    ("false_ack0", "False ack of sequence 0"),
                                    ("sequence_repeat", "Sequence repeats: duplicate")])
        test_first_pass(F, common, decoded["2pass"], "lost", "netgame.analysis.lost.expert")
        batches["configured"].run()
        batches["max31"].run()
        for name in ("no_heur", "port42002_no_heur", "port42002", "ids_other", "payload_ip"):
            batches[name].run(("1pass",))
    F.finish("netgame.experts")


if __name__ == "__main__":
    main()
