#!/usr/bin/env python3
"""netcode.crafted: packets made with libsodium (nctest.py), one capture per
situation (the short situations whose diagnoses name no frame share one
capture, each its own client address: run_cases), each expert info on the frame it belongs to, the same expert
summary with and without a tree, and the connections table's diagnosis:
the full handshake and sequence problems (gap, out of order, duplicate,
replay, silence over the timeout, one side silent while the other sends on
for the timeout and stops, disconnect), a capture starting at time 0, a forged packet that changes
no state, an expired token, a wrong private key, a malformed token, a server
not in the token, an unanswered challenge, a response never answered,
denied, a wrong size, truncated and foreign datagrams, Decode As, a key log
with malformed lines, no key at all, and the mid-connection heuristic's port
preference."""
import os
import re
import struct
import tempfile

import nctest as nc
from nctest import c2s, s2c, C2S_KEY, S2C_KEY

KEY_OPT = ["-o", "netcode.private_key:" + nc.PRIVATE_KEY.hex()]


def check_frames(F, name, got, frames, want, absent, not_netcode):
    """The decoded frames got of case name (its frames sent): each netcode
    or not as not_netcode says, with the experts of want and none of
    absent."""
    F.check(len(got) == len(frames), "%s: %d frames decoded of %d" % (name, len(got), len(frames)))
    for i, fr in enumerate(got):
        if i in not_netcode:
            F.check(not fr["netcode"], "%s frame %d: decoded as netcode" % (name, i + 1))
            continue
        F.check(fr["netcode"], "%s frame %d: not decoded as netcode" % (name, i + 1))
        for e in want.get(i, ()):
            F.check(e in fr["experts"], "%s frame %d: no %s (has %s)" % (name, i + 1, e, sorted(fr["experts"])))
        for e in (absent or {}).get(i, ()):
            F.check(e not in fr["experts"], "%s frame %d: %s where it does not belong" % (name, i + 1, e))


def run_case(F, tmp, name, frames, want, opts=KEY_OPT, absent=None, diag=None, not_netcode=()):
    """want: {frame index: set of expert names that must be there};
    absent: {frame index: expert names that must not}; diag: text the
    connections table's diagnosis must hold (None: no diagnosis at all)."""
    pcap = os.path.join(tmp, name + ".pcap")
    nc.write_pcap(pcap, frames)
    # Two runs: the frames and the expert summary with a tree, the summary
    # and the connections table without one.
    got, b = nc.decode_with_summary(pcap, opts)
    a, table = nc.summary_and_conns(pcap, opts)
    check_frames(F, name, got, frames, want, absent, not_netcode)
    F.check(a.strip() == b.strip(), "%s: expert summary differs with a tree:\n%s\n---\n%s" % (name, a, b))
    if diag is None:
        F.check("Diagnosis" not in table, "%s: unexpected diagnosis:\n%s" % (name, table))
    else:
        F.check(diag in table, "%s: diagnosis lacks %r:\n%s" % (name, diag, table))
    return got, table


def run_cases(F, tmp, cases, opts=KEY_OPT):
    """run_case for each case (name, frames, want, absent, diag,
    not_netcode) of one capture: the cases at the same times, each its own
    client address 10.0.<k + 1>.1 (the server's 10.0.0.2:40000, which the
    tokens name, kept), so two runs instead of two a case. For cases that
    end within a fraction of a second of each other (the connections
    table's state at the capture's end must not change) and whose
    diagnoses name no frame number."""
    merged, where = [], []
    for k, (name, frames, *_rest) in enumerate(cases):
        addr = "10.0.%d.1" % (k + 1)
        for i, f in enumerate(frames):
            f = dict(f)
            for end in ("src", "dst"):
                if f[end] == nc.CLIENT[0]:
                    f[end] = addr
            merged.append((f["t"], k, i, f))
    merged.sort(key=lambda m: (m[0], m[1], m[2]))
    pcap = os.path.join(tmp, "+".join(c[0] for c in cases) + ".pcap")
    nc.write_pcap(pcap, [m[3] for m in merged])
    got, b = nc.decode_with_summary(pcap, opts)
    a, table = nc.summary_and_conns(pcap, opts)
    F.check(len(got) == len(merged), "%s: %d frames decoded of %d" % (pcap, len(got), len(merged)))
    if a.strip() != b.strip():
        # the joined summaries do not say which case: each alone does
        for name, frames, want, absent, diag, not_netcode in cases:
            run_case(F, tmp, name, frames, want, opts, absent, diag, not_netcode)
        F.check(False, "%s: expert summary differs with a tree:\n%s\n---\n%s" % (pcap, a, b))
    lines = table.splitlines()
    for k, (name, frames, want, absent, diag, not_netcode) in enumerate(cases):
        check_frames(F, name, [fr for fr, m in zip(got, merged) if m[1] == k], frames, want, absent, not_netcode)
        # the case's rows and diagnoses: the lines naming its client address
        addr = "10.0.%d.1:" % (k + 1)
        rows = [l for l in lines if re.match(r"^\d+\s+" + re.escape(addr), l)]
        diags = [l for l in lines if l.startswith("Conn ") and (" %s" % addr) in l]
        if diag is None:
            F.check(not diags, "%s: unexpected diagnosis:\n%s" % (name, "\n".join(rows + diags)))
        else:
            F.check(any(diag in l for l in rows + diags), "%s: diagnosis lacks %r:\n%s" % (name, diag,
                                                                                     "\n".join(rows + diags)))
    return got, table


def main():
    F = nc.Failures()
    tmp = tempfile.mkdtemp()
    os.chmod(tmp, 0o755)

    # ---- the full handshake, then the sequence problems ----
    fr = nc.handshake()
    fr += [
        c2s(nc.payload(1, C2S_KEY), 0.10),                   # 4
        c2s(nc.payload(2, C2S_KEY), 0.11),                   # 5
        c2s(nc.payload(5, C2S_KEY), 0.12),                   # 6 gap of 2
        c2s(nc.payload(3, C2S_KEY), 0.13),                   # 7 out of order
        c2s(nc.payload(3, C2S_KEY), 0.14),                   # 8 duplicate of 7
        c2s(nc.packet(nc.PAYLOAD, 100, b"x" * 20, C2S_KEY, forge=True), 0.15),  # 9 forged
        c2s(nc.payload(6, C2S_KEY), 0.16),                   # 10 follows 5: no gap (the forgery changed nothing)
        s2c(nc.payload(1, S2C_KEY), 0.17),                   # 11
        s2c(nc.payload(400, S2C_KEY), 0.18),                 # 12 gap of 398
        s2c(nc.payload(100, S2C_KEY), 0.19),                 # 13 replay: 300 behind
        s2c(nc.keep_alive(401, S2C_KEY), 6.0),               # 14 5.8 s of silence, timeout 5
        c2s(nc.disconnect(7, C2S_KEY), 6.1),                 # 15
        c2s(nc.disconnect(8, C2S_KEY), 6.2),                 # 16
    ]
    got, table = run_case(F, tmp, "full", fr, {
        0: {"netcode.request"}, 1: {"netcode.challenge"}, 2: {"netcode.response"}, 3: {"netcode.connected"},
        6: {"netcode.sequence.gap"}, 7: {"netcode.sequence.out_of_order"}, 8: {"netcode.sequence.duplicate"},
        9: {"netcode.decrypt_failed"}, 12: {"netcode.sequence.gap"}, 13: {"netcode.sequence.replay"},
        14: {"netcode.timed_out"}, 15: {"netcode.disconnect"}, 16: {"netcode.disconnect"},
    }, absent={10: {"netcode.sequence.gap", "netcode.sequence.out_of_order"}, 9: {"netcode.sequence.gap"},
               4: {"netcode.decrypt_failed"}}, diag="Timed out")
    f = got[4]["fields"]
    F.check(f.get("netcode.payload") == [b"hello netcode".hex(":")] or
            f.get("netcode.payload") == [b"hello netcode".hex()],
            "full frame 5: payload %r" % f.get("netcode.payload"))
    f = got[3]["fields"]
    F.check(f.get("netcode.keep_alive.max_clients") == ["4"] and f.get("netcode.keep_alive.client_index") == ["0"],
            "full frame 4: keep-alive fields %r" % {k: v for k, v in f.items() if "keep_alive" in k})
    f = got[1]["fields"]
    F.check(f.get("netcode.sequence.global") == ["0"] and f.get("netcode.challenge.sequence") == ["0"],
            "full frame 2: challenge's global sequence / token sequence %r %r" %
            (f.get("netcode.sequence.global"), f.get("netcode.challenge.sequence")))
    f = got[0]["fields"]
    F.check(f.get("netcode.token.client_id") == ["42"] and f.get("netcode.token.timeout") == ["5"] and
            f.get("netcode.token.server_address") == ["10.0.0.2:40000"],
            "full frame 1: token fields %r" % {k: v for k, v in f.items() if k.startswith("netcode.token")})
    F.check(" 1 " in table and "42" in table, "full: table lacks the undecryptable count or client id:\n" + table)

    # ---- the cases below, short and with no frame number in their
    # diagnoses: one capture (run_cases) ----
    quick = []

    def case(name, frames, want, absent=None, diag=None, not_netcode=()):
        return (name, frames, want, absent, diag, not_netcode)

    # ---- an expired token ----
    quick.append(case("expired", [c2s(nc.request(int(nc.T0) - 10), 0.0)],
                      {0: {"netcode.token.expired", "netcode.request"}}, diag="expired"))

    # ---- a wrong private key ----
    quick.append(case("wrong-key", [c2s(nc.request(int(nc.T0) + 60, private_key=b"\x99" * 32), 0.0),
                                    c2s(nc.request(int(nc.T0) + 60, private_key=b"\x99" * 32), 0.1)],
                      {0: {"netcode.token.decrypt_failed"}, 1: {"netcode.request.repeated"}},
                      diag="does not decrypt"))

    # ---- a malformed token, a server not in the token ----
    quick.append(case("token-bad", [c2s(nc.request(int(nc.T0) + 60, plain=nc.token_plain(num_addresses=0)), 0.0)],
                      {0: {"netcode.token.malformed"}}, diag="malformed"))
    quick.append(case("not-listed",
                      [c2s(nc.request(int(nc.T0) + 60, plain=nc.token_plain(addresses=(("10.0.0.9", 40000),))), 0.0)],
                      {0: {"netcode.token.server_not_listed"}}, diag="not among"))

    # ---- requests repeated, a challenge the client never got ----
    e = int(nc.T0) + 60
    quick.append(case("unanswered-challenge",
                      [c2s(nc.request(e), 0.0), c2s(nc.request(e), 0.1), s2c(nc.challenge(), 0.11),
                       c2s(nc.request(e), 0.2)],
                      {0: {"netcode.request"}, 1: {"netcode.request.repeated"}, 2: {"netcode.challenge"},
                       3: {"netcode.request.after_challenge"}}, diag="did not reach it"))

    # ---- the response never answered ----
    quick.append(case("no-keep-alive",
                      [c2s(nc.request(e), 0.0), s2c(nc.challenge(), 0.01), c2s(nc.response(0), 0.02),
                       c2s(nc.response(1), 0.12)],
                      {2: {"netcode.response"}, 3: {"netcode.response.repeated"}}, diag="no keep-alive came back"))

    # ---- denied ----
    quick.append(case("denied", [c2s(nc.request(e), 0.0), s2c(nc.denied(), 0.01)],
                      {1: {"netcode.denied"}}, diag="server is full"))

    # ---- a keep-alive of the wrong size in a netcode conversation ----
    bad_ka = nc.packet(nc.KEEP_ALIVE, 1, b"\x00" * 9, S2C_KEY)
    quick.append(case("size", nc.handshake() + [s2c(bad_ka, 0.1)], {4: {"netcode.size"}}, diag=None))

    # ---- truncated and foreign datagrams are not netcode's ----
    req = nc.request(e)
    quick.append(case("truncated",
                      [c2s(req[:-1], 0.0), c2s(b"\x15\x01" + b"\x00" * 10, 0.1), c2s(b"\x00" * 1078, 0.2),
                       c2s(b"\x17\x01" + b"\x00" * 40, 0.3)],
                      {}, not_netcode=(0, 1, 2, 3), diag=None))
    run_cases(F, tmp, quick)
    # ... but Decode As shows them, flagged
    got, _ = run_case(F, tmp, "decode-as", [c2s(req[:-1], 0.0), c2s(b"\x97" + b"\x00" * 30, 0.1)],
                      {0: {"netcode.not_netcode"}, 1: {"netcode.not_netcode"}},
                      opts=KEY_OPT + ["-d", "udp.port==40000,netcode"], diag=None)

    # ---- a key log with malformed lines: named, and its good lines used ----
    keylog = os.path.join(tmp, "bad.keys")
    with open(keylog, "w") as f:
        f.write("# comment\n\nNETCODE_PRIVATE_KEY 12345\nNETCODE_PRIVATE_KEY %s\nBOGUS_LABEL x\n"
                "NETCODE_CONNECTION_KEYS %s\n" % (nc.PRIVATE_KEY.hex(), C2S_KEY.hex()))
    os.chmod(keylog, 0o644)
    got, _ = run_case(F, tmp, "keylog-bad", nc.handshake(), {0: {"netcode.keylog.malformed", "netcode.request"},
                                                             3: {"netcode.connected"}},
                      opts=["-o", "netcode.keylog_file:" + keylog], absent={1: {"netcode.keylog.malformed"}},
                      diag=None)
    # the summary is a fixed text; the detail item names the lines
    summary = nc.expert_detail(os.path.join(tmp, "keylog-bad.pcap"), ["-o", "netcode.keylog_file:" + keylog])
    for line in ("line 3", "line 5", "line 6"):
        F.check(line in summary, "keylog-bad: the detail does not name %s:\n%s" % (line, summary))
    F.check("line 4" not in summary, "keylog-bad: the good line 4 is called malformed")
    # a line of control bytes is named with them escaped, not echoed raw
    with open(keylog, "wb") as f:
        f.write(b"BAD\x01\x1b[31m\xff\\\n")
    summary = nc.expert_detail(os.path.join(tmp, "keylog-bad.pcap"), ["-o", "netcode.keylog_file:" + keylog])
    F.check("\x1b" not in summary and "\x01" not in summary and "BAD\\x01\\x1b[31m\\xff\\x5c" in summary,
            "keylog-bad: a line's control bytes not shown as \\xNN:\n%r" % summary)
    F.check(got[1]["fields"].get("netcode.decrypted") in (["1"], ["True"]),
            "keylog-bad: the good private key line was not used")
    # a key log that does not exist: no decryption, no crash
    got, _ = run_case(F, tmp, "keylog-missing", nc.handshake(), {},
                      opts=["-o", "netcode.keylog_file:" + os.path.join(tmp, "nothing.keys")], diag=None)

    # ---- no key: typed, not decrypted, one note ----
    got, _ = run_case(F, tmp, "no-key", nc.handshake() + [c2s(nc.payload(1, C2S_KEY), 0.1)],
                      {0: {"netcode.no_key"}, 3: {"netcode.connected"}}, opts=[],
                      absent={4: {"netcode.no_key", "netcode.decrypt_failed"}}, diag=None)
    types = [g["fields"].get("netcode.type", [""])[0] for g in got]
    F.check(types == ["0", "2", "3", "4", "5"], "no-key: types %r" % types)

    # ---- mid-connection: only on a port of netcode.udp.port ----
    mid = [s2c(nc.payload(10 + i, S2C_KEY), 0.01 * i) for i in range(5)]
    for m in mid:
        m["sport"] = 45000
    for m in mid:
        pass
    mid = [dict(m, dport=50000) for m in mid]
    run_case(F, tmp, "mid-other-port", mid, {}, opts=[], not_netcode=(0, 1, 2, 3, 4), diag=None)
    run_case(F, tmp, "mid-port-pref", mid, {}, opts=["-o", "netcode.udp.port:45000"], not_netcode=(0,), diag=None)
    # with the connection keys in a key log and the protocol id: every one, first included
    kl = os.path.join(tmp, "conn.keys")
    with open(kl, "w") as f:
        f.write("NETCODE_CONNECTION_KEYS %s %s\n" % (C2S_KEY.hex(), S2C_KEY.hex()))
    os.chmod(kl, 0o644)
    got, _ = run_case(F, tmp, "mid-keys", mid, {},
                      opts=["-o", "netcode.udp.port:45000", "-o", "netcode.keylog_file:" + kl,
                            "-o", "netcode.protocol_ids:%x" % nc.PROTOCOL_ID], diag=None)
    F.check(all(g["fields"].get("netcode.decrypted") in (["1"], ["True"]) for g in got),
            "mid-keys: not every packet decrypted")

    # ---- one side silent, the other sending on for the timeout, then stopping ----
    def one_way(server_for):
        fr = nc.handshake()
        fr += [c2s(nc.keep_alive(i, C2S_KEY), 0.1 * i) for i in range(1, 11)]          # the client until 1.0 s
        n = int(round(server_for * 10))
        fr += [s2c(nc.keep_alive(i, S2C_KEY), 1.0 + 0.1 * i) for i in range(1, n + 1)]  # the server after it
        return sorted(fr, key=lambda f: f["t"])

    _, table = run_case(F, tmp, "client-silent", one_way(4.9), {},
                        diag="the client went silent (after frame 14); the server kept sending for the token's 5 s")
    F.check("timed out (client silent)" in table, "client-silent: not ended by a timeout:\n%s" % table)
    # 3 s after the client's last packet is not the timeout: the capture just ends
    _, table = run_case(F, tmp, "client-quiet-3s", one_way(3.0), {}, diag=None)
    F.check("open at capture end" in table, "client-quiet-3s: not open at the end:\n%s" % table)

    # ---- a capture whose first frame is at time 0: times from that frame ----
    pcap0 = os.path.join(tmp, "time-zero.pcap")
    nc.ct.write_pcap(pcap0, [dict(f, t=round(f["t"], 6)) for f in nc.handshake(0.0)])
    table = nc.conns_table(pcap0, KEY_OPT)
    row = [l for l in table.splitlines() if l.startswith("0 ")]
    F.check(row and row[0].split()[4:6] == ["connected", "0.030"],
            "time-zero: want connected at 0.030 (from the first frame at time 0):\n%s" % table)

    F.finish("netcode.crafted")


if __name__ == "__main__":
    main()
