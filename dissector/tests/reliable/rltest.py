"""Helpers for the reliable dissector's tests: tshark with the plugin of the
build tree (chunktest.tshark), the committed reliable-* captures, per-frame
fields, and pcaps of crafted datagrams."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import chunktest as ct  # noqa: E402

REPO = ct.REPO
CAPTURES = os.path.join(REPO, "captures")
PORT = 50000
DECODE = ["-d", "udp.port==%d,reliable" % PORT]
Failures = ct.Failures
scratch_dir = ct.scratch_dir
tshark = ct.tshark


def captures():
    """Names of the committed reliable-sim captures (captures.txt)."""
    out = []
    with open(os.path.join(CAPTURES, "captures.txt")) as f:
        for line in f:
            p = line.split()
            if len(p) > 1 and not p[0].startswith("#") and p[1] == "reliable-sim":
                out.append(p[0])
    return out


def truth(name):
    with open(os.path.join(CAPTURES, name + ".truth.json")) as f:
        return json.load(f)


def fields(pcap, names, two_pass=True, extra=()):
    """[{field: [values...]}] per frame (index 0 is frame 1)."""
    args = ["-r", pcap] + DECODE + (["-2"] if two_pass else []) + list(extra)
    args += ["-T", "fields", "-E", "separator=\t", "-E", "aggregator=|", "-E", "occurrence=a"]
    for n in names:
        args += ["-e", n]
    rows = []
    for line in tshark(args).splitlines():
        vals = line.split("\t")
        vals += [""] * (len(names) - len(vals))
        rows.append({n: (v.split("|") if v else []) for n, v in zip(names, vals)})
    return rows


def write_pcap(path, payloads, times=None):
    """Datagrams A (10.0.0.1:50000) -> B (10.0.0.2:50001), or B -> A for a
    (payload, "b") tuple."""
    pkts = []
    for i, p in enumerate(payloads):
        d = {"t": times[i] if times else i * 0.01}
        if isinstance(p, tuple):
            d.update(payload=p[0], sport=50001, dport=50000, src="10.0.0.2", dst="10.0.0.1")
        else:
            d.update(payload=p, sport=50000, dport=50001)
        pkts.append(d)
    ct.write_pcap(path, pkts)
