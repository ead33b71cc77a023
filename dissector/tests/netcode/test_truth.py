#!/usr/bin/env python3
"""netcode.truth: the dissector's view of every committed netcode-sim capture
agrees with its truth file (docs/truth.md, "netcode-sim"), decrypted with the
capture's key log, in two passes (-2):

- per frame: the packet type and sequence of the truth record holding the
  frame, the connection of the record's client, and whether it decrypted
  (every packet does, except the requests of --wrong-key, whose tokens fail);
- per connection: the client id; the handshake steps (the first request,
  challenge and response frames at the capture point, and the frame the
  analysis calls connected, at the time the endpoint on the capture's side
  says it connected); the duplicates and replays of each direction (a
  datagram delivered twice at the capture point, and the receiving
  endpoint's drop_replayed counter when it sits at the capture point);
- the -z netcode,conns row: state reached and when, packets and bytes each
  way, duplicates, replays, undecryptable, how it ended (client or server
  disconnect, timed out, denied, handshake incomplete);
- the diagnosis names the cause the truth file gives: expired token, wrong
  private key, wrong protocol id, server full, lost challenges, lost
  responses, the side that went silent; a connection that came up and ended
  cleanly has none.

Then the check itself is checked: a truth file with one changed value (a
sequence, a client id, an ending, a fault) and a capture decoded with
another run's key log must each be reported.
"""
import copy
import glob
import json
import os
import re

import nctest as nc

FIELDS = ["frame.number", "frame.time_epoch", "udp.srcport", "udp.dstport", "netcode.type", "netcode.sequence",
          "netcode.decrypted", "netcode.conn", "netcode.direction", "netcode.analysis.flags",
          "netcode.analysis.client_id", "netcode.token.decrypt_failed"]
TYPES = {"request": 0, "denied": 1, "challenge": 2, "response": 3, "keep-alive": 4, "payload": 5, "disconnect": 6}
SEQUENCED = ("response", "keep-alive", "payload", "disconnect")   # the per-connection sequence
F_CHALLENGE, F_RESPONSE, F_CONNECTED, F_DENIED = 0x8, 0x10, 0x40, 0x80
F_DUPLICATE, F_REPLAY, F_REQUEST = 0x400, 0x800, 0x4000
CLIENT_PORT, SERVER_PORT = 50000, 40000


_DECODED = {}


def decode(pcap, keys):
    """(frames {number: {field: value}}, table rows {conn: [...]}, diagnoses {conn: text}).
    One tshark run per capture and key log: the self-checks, which judge
    changed truth files against a capture already decoded, reuse its run."""
    if (pcap, keys) not in _DECODED:
        _DECODED[(pcap, keys)] = _decode(pcap, keys)
    return copy.deepcopy(_DECODED[(pcap, keys)])


def _decode(pcap, keys):
    args = ["-r", pcap, "-2", "-o", "netcode.keylog_file:" + keys, "-T", "fields", "-E", "separator=|",
            "-E", "occurrence=f", "-z", "netcode,conns"] + nc.CHUNK_OFF
    for f in FIELDS:
        args += ["-e", f]
    out = nc.tshark(args)
    frames, rows, diag = {}, {}, {}
    in_table = False
    for line in out.splitlines():
        if line.startswith("netcode connections"):
            in_table = True
            continue
        if not in_table:
            parts = line.split("|")
            if len(parts) == len(FIELDS) and parts[0].isdigit():
                frames[int(parts[0])] = dict(zip(FIELDS, parts))
            continue
        m = re.match(r"^(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)"
                     r"\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+(.+)$", line)
        if m:
            g = m.groups()
            rows[int(g[0])] = {"client": g[1], "server": g[2], "client_id": g[3], "state": g[4], "when": float(g[5]),
                               "pkt_c2s": int(g[6]), "bytes_c2s": int(g[7]), "pkt_s2c": int(g[8]),
                               "bytes_s2c": int(g[9]), "lost": int(g[10]), "dup": int(g[11]), "replay": int(g[12]),
                               "undec": int(g[13]), "ended": g[16].strip()}
            continue
        m = re.match(r"^Conn (\d+) \S+ -> \S+: (.*)$", line)
        if m:
            diag[int(m.group(1))] = m.group(2)
    return frames, rows, diag


def expected_end(conn):
    """How the table should say the connection ended (a prefix of its Ended column)."""
    end, state = conn["server_side"]["end"], conn["client_side"]["state"]
    if end in ("client disconnected", "server disconnected", "timed out"):
        return end
    if end == "still connected":
        return "timed out" if state == "connection timed out" else "open at capture end"
    return "denied" if state == "connection denied" else "handshake incomplete"


def expected_causes(truth, conn):
    """Phrases the diagnosis must hold (None: no diagnosis at all)."""
    cfg, faults = truth["config"], truth["config"]["faults"]
    cs, ss = conn["client_side"], conn["server_side"]
    want = []
    if faults["expired_token"]:
        want.append("token had expired")
    if faults["wrong_key"]:
        want.append("does not decrypt with the private key")
    if cfg["protocol_id"] != cfg["server_protocol_id"]:
        want.append("protocol id")
    if cs["state"] == "connection denied":
        want.append("the server is full")
    if cs["connected_at"] is None and faults["drop_challenges"] == -1:
        want.append("challenge come back (lost on the way back)")
    if cs["connected_at"] is None and faults["drop_responses"] == -1:
        want.append("the responses were lost on the way to the server")
    if ss["end"] == "timed out":
        want.append("the client went silent")
    if ss["end"] == "still connected" and cs["state"] == "connection timed out":
        want.append("the server went silent")
    return want


def check_capture(name, truth, pcap, keys):
    """Every disagreement between the dissector and the truth file, as text."""
    problems = []
    P = problems.append
    frames, rows, diag = decode(pcap, keys)
    at = truth["capture"]["at"]
    wrong_key = truth["config"]["faults"]["wrong_key"]
    epoch = truth["config"]["unix_epoch"]
    if len(frames) != truth["capture"]["frames"]:
        P("%s: tshark shows %d frames, the truth file %d" % (name, len(frames), truth["capture"]["frames"]))
    first_time = min(float(f["frame.time_epoch"]) for f in frames.values()) - epoch if frames else 0.0

    # ---- per frame
    record_of = {}
    for p in truth["packets"]:
        for fn in p["frames"]:
            record_of[fn] = p
    conn_of_client = {}
    for fn, f in sorted(frames.items()):
        p = record_of.get(fn)
        if p is None:
            P("%s frame %d: in no truth record" % (name, fn))
            continue
        what = "%s frame %d (record %d, %s %s)" % (name, fn, p["index"], p["from"], p["type"])
        if f["netcode.type"] != str(TYPES[p["type"]]):
            P("%s: type %r" % (what, f["netcode.type"]))
        want_seq = "" if p["sequence"] is None else str(p["sequence"])
        if f["netcode.sequence"] != want_seq:
            P("%s: sequence %r, truth %r" % (what, f["netcode.sequence"], want_seq))
        client_port = CLIENT_PORT + p["client"]
        ports = (client_port, SERVER_PORT) if p["from"] == "a" else (SERVER_PORT, client_port)
        if (int(f["udp.srcport"] or 0), int(f["udp.dstport"] or 0)) != ports:
            P("%s: ports %s > %s" % (what, f["udp.srcport"], f["udp.dstport"]))
        want_dir = "client to server" if p["from"] == "a" else "server to client"
        if f["netcode.direction"] != want_dir:
            P("%s: direction %r" % (what, f["netcode.direction"]))
        token_fails = wrong_key and p["type"] == "request"
        if nc.truthy(f["netcode.decrypted"]) == token_fails:
            P("%s: decrypted %r, want %s" % (what, f["netcode.decrypted"], not token_fails))
        if token_fails and not f["netcode.token.decrypt_failed"]:
            P("%s: no netcode.token.decrypt_failed" % what)
        conn = f["netcode.conn"]
        if conn_of_client.setdefault(p["client"], conn) != conn:
            P("%s: connection %s, the client's other frames %s" % (what, conn, conn_of_client[p["client"]]))
    if len(set(conn_of_client.values())) != len(conn_of_client):
        P("%s: clients share connections: %s" % (name, conn_of_client))

    # ---- per connection
    for c in truth["connections"]:
        i = c["client"]
        who = "%s client %d" % (name, i)
        recs = [p for p in truth["packets"] if p["client"] == i]
        my = {fn: frames[fn] for p in recs for fn in p["frames"] if fn in frames}
        if i not in conn_of_client:
            P("%s: no frame in the capture" % who)
            continue
        conn = int(conn_of_client[i])
        flags = {fn: int(f["netcode.analysis.flags"] or "0", 16) for fn, f in my.items()}

        # client id
        want_id = "-" if wrong_key else str(int(c["client_id"], 16))
        ids = {f["netcode.analysis.client_id"] for f in my.values()}
        if ids != ({""} if wrong_key else {want_id}):
            P("%s: netcode.analysis.client_id %s, truth %s" % (who, sorted(ids), want_id))

        # handshake steps: the first frame of each step at the capture point
        def first(ptype, sender):
            fs = [fn for p in recs if p["type"] == ptype and p["from"] == sender for fn in p["frames"]]
            return min(fs) if fs else None

        for flag, ptype, sender in ((F_REQUEST, "request", "a"), (F_CHALLENGE, "challenge", "b"),
                                    (F_RESPONSE, "response", "a"), (F_DENIED, "denied", "b")):
            got = sorted(fn for fn, fl in flags.items() if fl & flag)
            want = first(ptype, sender)
            if got != ([want] if want else []):
                P("%s: %s step in frames %s, truth %s" % (who, ptype, got, want))
        side = c["client_side"] if at == "a" else c["server_side"]
        connected = sorted(fn for fn, fl in flags.items() if fl & F_CONNECTED)
        if side["connected_at"] is None:
            if connected:
                P("%s: connected in frame %s, the truth file says never" % (who, connected))
        elif len(connected) != 1:
            P("%s: connected in frames %s, truth at %.6f" % (who, connected, side["connected_at"]))
        else:
            t = float(frames[connected[0]]["frame.time_epoch"]) - epoch
            rec = record_of[connected[0]]
            if abs(t - side["connected_at"]) > 1e-6 or rec["type"] != "keep-alive" or rec["from"] != "b":
                P("%s: connected at frame %d (%.6f, %s %s), the endpoint at the capture point connected at %.6f"
                  % (who, connected[0], t, rec["from"], rec["type"], side["connected_at"]))

        # duplicates and replays per direction
        for sender, word in (("a", "client"), ("b", "server")):
            want_dups = sum(len(p["frames"]) - 1 for p in recs if p["from"] == sender and p["type"] in SEQUENCED
                            and len(p["frames"]) > 1)
            got_dups = sum(1 for fn, fl in flags.items() if fl & (F_DUPLICATE | F_REPLAY)
                           and record_of[fn]["from"] == sender)
            if got_dups != want_dups:
                P("%s: %d duplicate/replay frames from the %s, the truth file's deliveries give %d"
                  % (who, got_dups, word, want_dups))
            receiver_here = (sender == "b") == (at == "a")
            if receiver_here:
                if sender == "b":
                    counter = c["client_side"]["counters"]["drop_replayed"]
                elif len(truth["connections"]) == 1:
                    counter = truth["server"]["counters"]["drop_replayed"]
                else:
                    counter = None
                if counter is not None and got_dups != counter:
                    P("%s: %d duplicate/replay frames to the %s, its endpoint dropped %d as replayed"
                      % (who, got_dups, "client" if sender == "b" else "server", counter))

        # the table's row
        row = rows.get(conn)
        if row is None:
            P("%s: connection %d not in the table" % (who, conn))
            continue
        if row["client"] != c["address"] or row["server"] != truth["server"]["address"]:
            P("%s: table row %s -> %s" % (who, row["client"], row["server"]))
        if row["client_id"] != want_id:
            P("%s: table client id %s, truth %s" % (who, row["client_id"], want_id))
        if side["connected_at"] is not None:
            want_state, want_when = "connected", side["connected_at"] - first_time
        else:
            want_state, want_when = "requested", None
            for step, ptype, sender in (("challenged", "challenge", "b"), ("responded", "response", "a")):
                fn = first(ptype, sender)
                if fn:
                    want_state = step
                    want_when = float(frames[fn]["frame.time_epoch"]) - epoch - first_time
            if want_when is None:
                want_when = float(frames[first("request", "a")]["frame.time_epoch"]) - epoch - first_time
        if row["state"] != want_state or abs(row["when"] - want_when) > 0.0015:
            P("%s: table state %s at %.3f, want %s at %.3f" % (who, row["state"], row["when"], want_state, want_when))
        for sender, pk, by in (("a", "pkt_c2s", "bytes_c2s"), ("b", "pkt_s2c", "bytes_s2c")):
            n = sum(len(p["frames"]) for p in recs if p["from"] == sender)
            b = sum(len(p["frames"]) * p["bytes"] for p in recs if p["from"] == sender)
            if row[pk] != n or row[by] != b:
                P("%s: table %d packets / %d bytes from %s, truth %d / %d" % (who, row[pk], row[by], sender, n, b))
        dups = sum(1 for fn, fl in flags.items() if fl & F_DUPLICATE)
        replays = sum(1 for fn, fl in flags.items() if fl & F_REPLAY)
        if (row["dup"], row["replay"]) != (dups, replays):
            P("%s: table %d dup %d replay, frames flag %d / %d" % (who, row["dup"], row["replay"], dups, replays))
        if row["undec"] != 0:
            P("%s: table says %d undecryptable" % (who, row["undec"]))
        want_end = expected_end(c)
        if not row["ended"].startswith(want_end):
            P("%s: table says it ended %r, truth %r" % (who, row["ended"], want_end))

        # the diagnosis
        causes = expected_causes(truth, c)
        text = diag.get(conn)
        for sender, word in (("a", "client"), ("b", "server")):
            d = sum(len(p["frames"]) - 1 for p in recs if p["from"] == sender and p["type"] in SEQUENCED
                    and len(p["frames"]) > 1)
            if d:
                causes.append("The %s sent %d duplicate(s)" % (word, d))
        if not causes:
            if text is not None:
                P("%s: a diagnosis for a connection that came up and ended cleanly: %s" % (who, text))
        elif text is None:
            P("%s: no diagnosis, want %s" % (who, causes))
        else:
            for phrase in causes:
                if phrase not in text:
                    P("%s: the diagnosis does not say %r: %s" % (who, phrase, text))
    return problems


def captures():
    out = []
    for tpath in sorted(glob.glob(os.path.join(nc.REPO, "captures", "netcode-*.truth.json"))):
        truth = json.load(open(tpath))
        if truth.get("generator") != "netcode-sim":
            continue
        base = tpath[:-len(".truth.json")]
        out.append((os.path.basename(base), truth, base + ".pcap", base + ".keys"))
    return out


def main():
    F = nc.Failures()
    caps = captures()
    F.check(len(caps) >= 13, "only %d netcode-sim captures found" % len(caps))
    by_name = {}
    for name, truth, pcap, keys in caps:
        by_name[name] = (truth, pcap, keys)
        problems = check_capture(name, truth, pcap, keys)
        for p in problems:
            F.check(False, p)
        print("%s: %d frames, %d connection(s): %s" % (name, truth["capture"]["frames"], len(truth["connections"]),
                                                       "agrees" if not problems else "%d problem(s)" % len(problems)))

    # The check must notice a wrong truth file or the wrong keys.
    def mutated(base, change):
        truth, pcap, keys = by_name[base]
        t = copy.deepcopy(truth)
        change(t)
        return t, pcap, keys

    def seq_plus_one(t):
        p = next(p for p in t["packets"] if p["type"] == "payload" and p["frames"])
        p["sequence"] += 1

    def other_client_id(t):
        t["connections"][0]["client_id"] = "0x%016x" % (int(t["connections"][0]["client_id"], 16) + 1)

    def ended_by_timeout(t):
        t["connections"][0]["server_side"]["end"] = "timed out"

    def expired_not_wrong_key(t):
        t["config"]["faults"]["wrong_key"] = False
        t["config"]["faults"]["expired_token"] = True

    def one_more_duplicate(t):
        p = next(p for p in t["packets"] if p["type"] == "keep-alive" and p["from"] == "b" and p["frames"])
        p["frames"] = p["frames"] + [p["frames"][0]]

    def connected_later(t):
        t["connections"][0]["client_side"]["connected_at"] += 0.01

    cases = [("netcode-clean", "a payload's sequence + 1", seq_plus_one),
             ("netcode-clean", "another client id", other_client_id),
             ("netcode-clean", "ended by a timeout", ended_by_timeout),
             ("netcode-clean", "connected 10 ms later", connected_later),
             ("netcode-wrong-key", "an expired token instead of a wrong key", expired_not_wrong_key),
             ("netcode-loss-dup", "one more duplicate", one_more_duplicate)]
    for base, what, change in cases:
        if base not in by_name:
            F.check(False, "self-check: %s missing" % base)
            continue
        t, pcap, keys = mutated(base, change)
        found = check_capture(base + " (" + what + ")", t, pcap, keys)
        F.check(found, "self-check: a truth file with %s passed" % what)
        print("self-check %s, %s: %d problem(s) found, e.g. %s" % (base, what, len(found), found[:1]))
    if "netcode-clean" in by_name and "netcode-loss-dup" in by_name:
        truth, pcap, _ = by_name["netcode-clean"]
        found = check_capture("netcode-clean (loss-dup's key log)", truth, pcap, by_name["netcode-loss-dup"][2])
        F.check(found, "self-check: netcode-clean decoded with another run's keys passed")
        print("self-check netcode-clean with netcode-loss-dup.keys: %d problem(s) found, e.g. %s"
              % (len(found), found[:1]))
    F.finish("netcode.truth")


if __name__ == "__main__":
    main()
