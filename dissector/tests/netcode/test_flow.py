#!/usr/bin/env python3
"""netcode.flow: the Flow Graph (tshark -z flow,netcode,network) and the
Conversations and Endpoints tabs (-z conv,netcode, -z endpoints,netcode)
against the netcode-sim truth files:

- netcode-clean.pcap with its key log: one arrow per packet of the truth
  file, in frame order, each in the packet's direction (client 10.0.0.1 to
  server 10.0.0.2 is "->") and saying what it is: "Connection request,
  client id 4096" (the token's client id), the challenge's server sequence
  "seq 2^63+0", every other packet's own sequence, a payload's 64 bytes;
  the first keep-alive from the server marked [Connected] and naming the
  client index; one conversation row, the client named with its client id,
  with the truth's packet count each way, and the same counts as
  endpoints;
- netcode-server-full.pcap with its key log: three connections, three rows
  (the third client denied), each client with its own id and counts, and
  each row's filters (netcode.end, src_end, dst_end: Apply as Filter)
  matching its packets;
- netcode-clean.pcap without keys: the client is named by its address
  alone, and the encrypted packets say so.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import flowtest as ft  # noqa: E402

CHUNK_OFF = ["--disable-protocol", "chunk"]
SERVER = "10.0.0.2:40000"
WHAT = {"request": "Connection request", "denied": "Connection denied", "challenge": "Connection challenge",
        "response": "Challenge response", "keep-alive": "Keep-alive", "payload": "Payload",
        "disconnect": "Disconnect"}


def keys(name):
    return ["-o", "netcode.keylog_file:" + ft.capture(name + ".keys")] + CHUNK_OFF


def truth(name):
    with open(ft.capture(name + ".truth.json")) as f:
        return json.load(f)


def captured(t):
    """The truth's packets in the capture, by frame: (frame, packet)."""
    return sorted((fr, p) for p in t["packets"] for fr in p["frames"])


def seq_text(p):
    s = p["sequence"]
    if p["type"] in ("challenge", "denied") and s >= 1 << 63:
        return "seq 2^63+%d" % (s - (1 << 63))
    return "seq %d" % s


def client_names(t):
    return {c["client"]: "%s client id %d" % (c["address"], int(c["client_id"], 16)) for c in t["connections"]}


def taps(pcap, extra, filters=()):
    """flowtest.taps of netcode, the filters' counts checked to be there."""
    arrows, rows, eps, counts = ft.taps(pcap, "netcode", extra, filters)
    if filters and len(counts) != len(filters):
        raise RuntimeError("io,stat: %d counts for %d filters" % (len(counts), len(filters)))
    return arrows, rows, eps, counts


def row_filters(rows):
    """flowtest.row_filters' filters of each conversation row: both ends,
    and each direction, with the packets each must match."""
    out = []
    for (a, b), (b_to_a, a_to_b, total) in rows.items():
        out += [('netcode.end == "%s" && netcode.end == "%s"' % (a, b), total),
                ('netcode.src_end == "%s" && netcode.dst_end == "%s"' % (a, b), a_to_b),
                ('netcode.src_end == "%s" && netcode.dst_end == "%s"' % (b, a), b_to_a)]
    return out


def check_clean(F):
    t = truth("netcode-clean")
    pcap = ft.capture("netcode-clean.pcap")
    arrows, rows, eps, _ = taps(pcap, keys("netcode-clean"))
    pkts = captured(t)
    F.check(len(arrows) == len(pkts) == t["capture"]["frames"],
            "clean: %d arrows for %d captured packets" % (len(arrows), len(pkts)))
    payload = t["config"]["payload"]
    for (frame, p), a in zip(pkts, arrows):
        want_dir = "->" if p["from"] == "a" else "<-"
        F.check(a["dir"] == want_dir, "clean frame %d: arrow %s, the packet goes %s" % (frame, a["dir"], want_dir))
        F.check(a["comment"].startswith(WHAT[p["type"]]),
                "clean frame %d (%s): comment %r" % (frame, p["type"], a["comment"]))
        if p["type"] != "request":
            F.check(seq_text(p) in a["comment"], "clean frame %d: %r lacks %r" % (frame, a["comment"], seq_text(p)))
        if p["type"] == "payload":
            F.check("%d bytes" % payload in a["comment"] and a["label"] == "Payload (%d bytes)" % payload,
                    "clean frame %d: payload arrow %r / %r" % (frame, a["label"], a["comment"]))
        F.check("encrypted" not in a["comment"], "clean frame %d: %r with the key log" % (frame, a["comment"]))
    F.check(arrows[0]["comment"] == "Connection request, client id 4096", "clean: request %r" % arrows[0]["comment"])
    F.check(arrows[1]["comment"] == "Connection challenge, seq 2^63+0", "clean: challenge %r" % arrows[1]["comment"])
    F.check(arrows[3]["comment"] == "Keep-alive, seq 0, client index 0 of 4 [Connected]",
            "clean: first keep-alive %r" % arrows[3]["comment"])
    F.check(sum("[Connected]" in a["comment"] for a in arrows) == 1, "clean: [Connected] not on exactly one arrow")

    client = client_names(t)[0]
    c2s = sum(1 for _, p in pkts if p["from"] == "a")
    s2c = len(pkts) - c2s
    F.check(rows == {(client, SERVER): (s2c, c2s, c2s + s2c)}, "clean: conversations %r" % rows)
    F.check(eps == {client: (c2s + s2c, c2s, s2c), SERVER: (c2s + s2c, s2c, c2s)}, "clean: endpoints %r" % eps)

    # Without keys: the token is not read, the packets stay encrypted.
    arrows, rows, _, _ = taps(pcap, CHUNK_OFF)
    F.check(list(rows) == [("10.0.0.1:50000", SERVER)], "clean without keys: conversations %r" % rows)
    F.check(arrows[0]["comment"] == "Connection request" and arrows[1]["comment"].endswith(", encrypted"),
            "clean without keys: %r" % [a["comment"] for a in arrows[:2]])


def check_server_full(F):
    t = truth("netcode-server-full")
    pcap = ft.capture("netcode-server-full.pcap")
    names = client_names(t)
    want = {}
    for _, p in captured(t):
        k = (names[p["client"]], SERVER)
        b_to_a, a_to_b, total = want.get(k, (0, 0, 0))
        if p["from"] == "a":
            a_to_b += 1
        else:
            b_to_a += 1
        want[k] = (b_to_a, a_to_b, total + 1)
    # the rows' filters come from the truth's rows (the same rows as the
    # table's when the check above passes), so that one run has them all
    filters = row_filters(want)
    arrows, rows, _, counts = taps(pcap, keys("netcode-server-full"), [f for f, _ in filters])
    F.check(len(want) == 3 and rows == want, "server-full: conversations %r, truth %r" % (rows, want))
    for (filt, n), got in zip(filters, counts):
        F.check(got == n, "%s: %s matches %d packets, the row says %d" % ("server-full", filt, got, n))
    denied = [a for a in arrows if a["comment"].startswith("Connection denied")]
    F.check(len(denied) == 1 and denied[0]["dir"] == "<-", "server-full: denied arrows %r" % denied)
    F.check(sorted(set(a["conv"] for a in arrows)) == [0, 1, 2], "server-full: conversations of the arrows")


def main():
    F = ft.Failures()
    check_clean(F)
    check_server_full(F)
    F.finish("netcode.flow")


if __name__ == "__main__":
    main()
