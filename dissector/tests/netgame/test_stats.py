#!/usr/bin/env python3
"""tshark -q -z netgame,conns: one row per connection and direction with
counts that agree with the endpoints' own counters (netgame-sim truth files:
the capturing side's packets sent, acked, lost; time in Good and Bad to a
tick), and a diagnosis line exactly where something is wrong: a direction
that never acks, acks that stop, RTT above 250 ms, stuck or mostly in Bad,
one-way loss. Also the single pass and -2 give the same table.

The captures (and the crafted one of test_never_acks) are read in one run
per pass (ngtest.merge_aligned: each its own addresses, all ending at the
same time); each capture's rows and diagnoses are mapped back to its own
addresses.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngtest as ng  # noqa: E402

CAPTURES = os.path.join(ng.REPO, "captures")
ROW = re.compile(r"^(\d+)\s+(\S+ -> \S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)"
                 r"\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+(\d+)$")


def table(pcap, extra=(), prefs=None):
    out = ng.tshark(["-r", pcap, "-q", "-z", "netgame,conns"] + ng.ct.pref_args(prefs) + list(extra))
    rows = {}
    diag = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            rows[m.group(2)] = m.groups()
        elif line.startswith("Conn ") and ": " in line:
            d = line.split(": ", 1)
            diag[d[0].split(" ", 2)[2]] = d[1]
    return out, rows, diag


def own(i, ips, rows):
    """The rows (or diagnoses) of merge_aligned's capture i, whose endpoint
    addresses are ips there, keyed by its own addresses."""
    out = {}
    for key, v in rows.items():
        ends = key.split(" -> ")
        addr = [e.rsplit(":", 1) for e in ends]
        back = [ng.ct.concat_address(a, i) for a, _ in addr]
        if all(b in ips for b in back):
            out[" -> ".join("%s:%s" % (b, p) for b, (_, p) in zip(back, addr))] = v
    return out


def test_captures(F, tmp):
    expect_diag = {
        "netgame-clean": {},
        "netgame-one-way-loss": {"a": "one-way loss"},
        "netgame-stops-acking": {"a": "acks stopped"},
        "netgame-high-rtt": {"a": "above the 250 ms threshold", "b": "mostly in Bad mode"},
    }
    truths = {}
    for name in expect_diag:
        with open(os.path.join(CAPTURES, name + ".truth.json")) as f:
            truths[name] = json.load(f)
    never = never_acks_capture(tmp)
    names = list(expect_diag) + ["never"]
    merged = os.path.join(tmp, "all.pcap")
    ng.merge_aligned([os.path.join(CAPTURES, n + ".pcap") for n in expect_diag] + [never], merged)
    out, all_rows, all_diag = table(merged)
    out2, all_rows2, all_diag2 = table(merged, ["-2"])
    ips = [{e.rsplit(":", 1)[0] for e in truths[n]["endpoints"].values()} for n in expect_diag] + \
        [{"10.1.0.1", "10.1.0.2"}]
    mine = [own(i, ips[i], all_rows) for i in range(len(names))]
    F.check(sum(len(r) for r in mine) == len(all_rows), "rows of no capture:\n%s" % out)
    for i, name in enumerate(names):
        rows, diag = mine[i], own(i, ips[i], all_diag)
        rows2, diag2 = own(i, ips[i], all_rows2), own(i, ips[i], all_diag2)
        F.check(rows == rows2 and diag == diag2, "%s: single pass and -2 tables differ" % name)
        if name == "never":
            check_never_acks(F, rows, diag, out)
            continue
        want = expect_diag[name]
        truth = truths[name]
        ep = truth["endpoints"]
        F.check(len(rows) == 2, "%s: %d rows" % (name, len(rows)))
        for side in truth["sides"]:
            s = side["side"]
            peer = "b" if s == "a" else "a"
            key = "%s -> %s" % (ep[s], ep[peer])
            r = rows.get(key)
            if not F.check(r is not None, "%s: no row %s:\n%s" % (name, key, out)):
                continue
            c = side["counters"]
            if s == truth["capture"]["at"]:
                F.check(int(r[2]) == c["packets_sent"], "%s %s: packets %s, sent %d" % (name, s, r[2], c["packets_sent"]))
                F.check(int(r[3]) == c["packets_acked"], "%s %s: acked %s, endpoint %d" % (name, s, r[3], c["packets_acked"]))
                F.check(abs(int(r[4]) - c["packets_lost"]) <= 1, "%s %s: lost %s, endpoint %d" % (name, s, r[4], c["packets_lost"]))
                F.check(abs(float(r[9]) / 1000 - side["rtt"]) <= 1e-3, "%s %s: smoothed RTT %s, endpoint %.4f" % (name, s, r[9], side["rtt"]))
            tick = truth["config"]["tick"]
            # Each inferred switch may land up to 6 packets after the
            # endpoint's (test_truth.py): at most 0.2 s per switch.
            F.check(abs(float(r[11]) - side["time_good"]) <= 6 * tick + 0.2 * len(side["mode_switches"]),
                    "%s %s: Good %s s, endpoint %.2f" % (name, s, r[11], side["time_good"]))
            F.check(int(r[13]) == len(side["mode_switches"]), "%s %s: %s switches, endpoint %d" % (name, s, r[13], len(side["mode_switches"])))
            d = diag.get(key)
            if s in want:
                F.check(d is not None and want[s] in d, "%s %s: diagnosis %r, want %r" % (name, s, d, want[s]))
            else:
                F.check(d is None, "%s %s: unexpected diagnosis %r" % (name, s, d))


def never_acks_capture(tmp):
    """B answers at 10 packets/s with ack and bits frozen at the start."""
    c = ng.Conv()
    t = 0.0
    for k in range(40):
        c.send("A", t)
        c.send("B", t + 0.05, ack=0, bits=0)
        t += 0.1
    p = os.path.join(tmp, "never.pcap")
    ng.write_pcap(p, c.packets)
    return p


def check_never_acks(F, rows, diag, out):
    d = diag.get("10.1.0.1:30001 -> 10.1.0.2:30000")
    F.check(d is not None and "never acked" in d, "never acks: %r\n%s" % (d, out))
    d = diag.get("10.1.0.2:30000 -> 10.1.0.1:30001")
    F.check(d is not None and "this side never acks" in d, "never acks: B row %r\n%s" % (d, out))


def main():
    F = ng.Failures()
    with ng.scratch_dir() as tmp:
        test_captures(F, tmp)
    F.finish("netgame.stats")


if __name__ == "__main__":
    main()
