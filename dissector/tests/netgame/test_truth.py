#!/usr/bin/env python3
"""The netgame analysis against every netgame capture's truth file
(netgame-sim --truth, docs/truth.md), with tshark -2:

- acked in: every packet's netgame.analysis.acked_in is the truth's
  acked_in (the first captured peer frame acknowledging it);
- RTT: for the capturing side's own packets, netgame.analysis.rtt equals
  the endpoint's own RTT sample to within the capture's timestamp
  resolution (1 us);
- lost: the capturing side's packets its endpoint counted lost are exactly
  those netgame.analysis.lost marks (among those sent more than 1 s before
  the end of the capture);
- smoothed RTT: the capturing side's netgame.analysis.smoothed_rtt at each
  send agrees with the endpoint's own figure (1 ms);
- mode: the inferred mode switches are the endpoint's (same direction, same
  order), each found at most 6 packets after the truth's first packet in the
  new mode.
Captures that miss datagrams (--capture-drop, --capture-from) are left to
netgame.gaps: the endpoints' RTT and losses rest on packets they lack.

The captures decoded with the same preferences are read in one tshark run
(chunktest.concat_captures: each its own addresses, 1000 s after the
previous one; frame numbers and addresses mapped back to each capture's
own). The lost flag of a packet sent in a capture's last second may differ
there (the end of the whole file decides it); those are not checked.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngtest as ng  # noqa: E402

CAPTURES = os.path.join(ng.REPO, "captures")
FIELDS = ["frame.number", "frame.time_epoch", "ip.src", "netgame.sequence", "netgame.analysis.acked_in",
          "netgame.analysis.rtt", "netgame.analysis.lost", "netgame.analysis.mode",
          "netgame.analysis.smoothed_rtt", "netgame.analysis.duplicate", "netgame.ack", "netgame.ack_bits"]
SWITCH_LAG = 6   # packets


def true(v):
    return v in ("1", "True", "TRUE", "true")


def ack0_nobits(row_fields):
    return row_fields[-2] == "0" and int(row_fields[-1], 16) == 0


def prefs_of(truth):
    cfg = truth["config"]
    prefs = {"netgame.max_sequence": cfg["max_sequence"]}
    if cfg.get("protocol_id", 0x11223344) != 0x11223344:
        # netgame-other-id: its id configured, as a user would.
        prefs["netgame.protocol_ids"] = "0x%08x" % cfg["protocol_id"]
    return prefs


def decode(tmp, pcaps, prefs):
    """{pcap: its FIELDS rows, as a run on it alone numbers and addresses
    them} from one tshark -2 run over pcaps concatenated."""
    if len(pcaps) == 1:
        return {pcaps[0]: ng.fields(pcaps[0], FIELDS, prefs=prefs, extra=["-2"])}
    merged = os.path.join(tmp, "merged-%d.pcap" % len(os.listdir(tmp)))
    spans = ng.ct.concat_captures(pcaps, merged)
    rows = ng.fields(merged, FIELDS, prefs=prefs, extra=["-2"])
    out = {}
    for i, (pcap, first, last) in enumerate(spans):
        own = []
        for r in rows[first - 1:last]:
            r = list(r)
            r[0] = str(int(r[0]) - first + 1)
            r[2] = ng.ct.concat_address(r[2], i) if r[2] else r[2]
            if r[4]:
                n = int(r[4])
                r[4] = str(n - first + 1) if first <= n <= last else "other capture's frame %d" % n
            own.append(r)
        out[pcap] = own
    return out


def check_capture(F, pcap, truth, rows):
    cfg = truth["config"]
    by_frame = {int(r[0]): r for r in rows}
    name = os.path.basename(pcap)
    at = truth["capture"]["at"]
    host_ip = {"a": truth["endpoints"]["a"].split(":")[0], "b": truth["endpoints"]["b"].split(":")[0]}
    end = max(float(r[1]) for r in rows)
    stats = {"acked_in": 0, "rtt": 0, "lost": 0, "srtt": 0, "ack0_ambiguous": 0}
    first_t = None
    for p in truth["packets"]:
        if not p["frames"]:
            continue
        fnum = p["frames"][0]
        r = by_frame[fnum]
        tag = "%s frame %d (%s seq %d)" % (name, fnum, p["from"], p["sequence"])
        F.check(r[2] == host_ip[p["from"]], "%s: from %s" % (tag, r[2]))
        got_in = int(r[4]) if r[4] else None
        if got_in != p["acked_in"] and p["sequence"] == 0 and got_in and ack0_nobits(by_frame[got_in]):
            # The one thing a capture point cannot always tell: at the side
            # that sent sequence 0, whether the peer's "ack 0, no bits" was
            # sent before or after sequence 0 reached it (docs/netgame.md).
            stats["ack0_ambiguous"] += 1
            continue
        F.check(got_in == p["acked_in"], "%s: acked_in %s, truth %s" % (tag, got_in, p["acked_in"]))
        stats["acked_in"] += 1
        if p["from"] != at:
            continue
        t_send = float(r[1])
        if first_t is None:
            first_t = t_send
        if p["acked"] and p["acked"]["by_frame"] == got_in and got_in is not None:
            rtt = float(r[5])
            F.check(abs(rtt - p["acked"]["rtt_sample"]) <= 1.5e-6,
                    "%s: rtt %.6f, endpoint %.6f" % (tag, rtt, p["acked"]["rtt_sample"]))
            stats["rtt"] += 1
        if end - t_send > 1.0 + cfg["tick"] + 1e-6:
            F.check(true(r[6]) == (p["lost"] is not None),
                    "%s: lost %s, endpoint lost at %s (acked %s)" % (tag, r[6], p["lost"], p["acked"]))
            stats["lost"] += p["lost"] is not None
        srtt = float(r[8]) if r[8] else 0.0
        if p["acked"] and p["acked"]["by_frame"] != p["acked_in"]:
            # Our endpoint took another ack than the capture's first (it does
            # not take an early ack 0 without bits, docs/truth.md): its RTT
            # samples differ from here on.
            stats["endpoint_differs"] = stats.get("endpoint_differs", 0) + 1
        if stats["ack0_ambiguous"] or stats.get("endpoint_differs"):
            # Different RTT samples at the start: the 10% steps forget them
            # geometrically (0.9^n); checked once that is below 1 ms.
            tol = max(1e-3, 0.3 * 0.9 ** stats["srtt"])
        else:
            tol = 1e-3
        F.check(abs(srtt - p["rtt"]) <= tol, "%s: smoothed rtt %.6f, endpoint %.6f" % (tag, srtt, p["rtt"]))
        stats["srtt"] += 1
    # Mode switches per direction.
    for side in truth["sides"]:
        ip = host_ip[side["side"]]
        mine = []   # (seq, mode) at each inferred switch
        prev = None
        for r in rows:
            if r[2] != ip or not r[7] or true(r[9]):
                continue
            mode = "good" if int(r[7]) == 30 else "bad"
            if prev is not None and mode != prev:
                mine.append((int(r[3]), mode))
            prev = mode
        theirs = [(s["from_sequence"], s["mode"]) for s in side["mode_switches"]]
        # The endpoint may switch again in its last packets, too few for a vote.
        if len(theirs) == len(mine) + 1 and theirs[-1][0] >= max(int(r[3]) for r in rows if r[2] == ip) - SWITCH_LAG:
            theirs = theirs[:-1]
        F.check([m for _, m in mine] == [m for _, m in theirs],
                "%s side %s: inferred switches %s, endpoint %s" % (name, side["side"], mine, theirs))
        space = cfg["max_sequence"] + 1
        for (ms, mm), (ts, tm) in zip(mine, theirs):
            lag = (ms - ts) % space
            F.check(lag <= SWITCH_LAG, "%s side %s: switch to %s inferred at seq %d, endpoint's first %d"
                    % (name, side["side"], mm, ms, ts))
    return stats


def main():
    F = ng.Failures()
    truths = sorted(glob.glob(os.path.join(CAPTURES, "netgame-*.truth.json")))
    F.check(len(truths) >= 10, "%d netgame truth files" % len(truths))
    groups = {}   # preferences -> [(pcap, truth)]
    for tf in truths:
        with open(tf) as f:
            truth = json.load(f)
        if truth["capture"].get("not_captured"):
            # --capture-drop / --capture-from: the endpoints' RTT and losses
            # rest on packets the capture lacks; netgame.gaps checks these.
            continue
        pcap = tf.replace(".truth.json", ".pcap")
        groups.setdefault(tuple(sorted(prefs_of(truth).items())), []).append((pcap, truth))
    with ng.scratch_dir() as tmp:
        for prefs, items in sorted(groups.items()):
            rows = decode(tmp, [p for p, _ in items], dict(prefs))
            for pcap, truth in items:
                s = check_capture(F, pcap, truth, rows[pcap])
                print("%s: %d acked_in, %d RTTs, %d lost, %d smoothed RTTs checked; %d ambiguous ack of 0"
                      % (os.path.basename(pcap), s["acked_in"], s["rtt"], s["lost"], s["srtt"],
                         s["ack0_ambiguous"]))
    F.finish("netgame.truth")


if __name__ == "__main__":
    main()
