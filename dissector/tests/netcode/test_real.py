#!/usr/bin/env python3
"""netcode.real: the captures of the real netcode and yojimbo libraries
(captures/real-*.pcapng, keys in captures/README.md and captures/real-*.keys)
decode and decrypt with zero failures, with the private key preference, with
the key log's private key, with the key log's connection keys alone, and
(types only) with no key at all; the same expert infos with and without a
tree; the connections table shows one connection, connected, ended by the
client's disconnects. A capture without the handshake (frames from 4 on)
decrypts with the connection keys and the protocol id preference."""
import os
import re
import struct
import subprocess
import tempfile

import nctest as nc

CAPS = {
    "real-netcode-cs": {
        "key": "606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1",
        "counts": {0: 1, 2: 1, 3: 1, 4: 2, 5: 579, 6: 10},
        "client_id": "10610143713125746728", "timeout": "5", "protocol_id": "1122334455667788",
        "first": "2026-11-25 23:35:40",
    },
    "real-yojimbo-cs": {
        "key": "00" * 32,
        "counts": {0: 1, 2: 1, 3: 1, 4: 3, 5: 1128, 6: 10},
        "client_id": "8319594888571325975", "timeout": "10", "protocol_id": "0",
        "first": "2026-11-25 23:34:47",
    },
}


# Every column the checks read, from one run per capture and key setting:
# check_decode's, the token's, the per-frame view compared in one and two
# passes, and the expert details (their occurrences joined by AGG, a
# character no value holds, so a cell stays one line).
COLS = ["frame.number", "netcode.type", "netcode.decrypted", "netcode.payload_len", "netcode.analysis.flags",
        "_ws.col.Info", "netcode.token.client_id", "netcode.token.timeout", "netcode.protocol_id",
        "netcode.expert.detail"]
AGG = "\x1f"


def view(pcap, opts, extra=()):
    """One run with a tree (-T fields, -z expert, -z netcode,conns):
    (the -T fields lines as printed, one dict of COLS a frame, the expert
    summary with a tree, the connections table)."""
    args = ["-r", pcap] + list(extra) + nc.CHUNK_OFF + list(opts) + ["-T", "fields", "-E", "aggregator=" + AGG]
    for c in COLS:
        args += ["-e", c]
    lines, rest = split_fields(nc.tshark(args + ["-z", "expert", "-z", "netcode,conns"]))
    table, rest = nc.ct.split_table(rest, "netcode connections")
    rows = [dict(zip(COLS, l.split("\t"))) for l in lines.splitlines()]
    return lines, rows, nc._summary(rest), table


def check_decode(F, name, rows, label, want_decrypted="all"):
    """rows: view()'s. want_decrypted: "all", True (all but the request), False (none)."""
    spec = CAPS[name]
    counts = {}
    for fr in rows:
        r = [fr["netcode.type"], fr["netcode.decrypted"], fr["netcode.payload_len"]]
        F.check(r[0] != "", "%s %s: a frame not decoded as netcode: %r" % (name, label, r))
        if r[0] == "":
            continue
        t = int(r[0])
        counts[t] = counts.get(t, 0) + 1
        if t != 0 or want_decrypted == "all":
            dec = nc.truthy(r[1])
            F.check(dec == bool(want_decrypted), "%s %s: type %d decrypted=%s, want %s" % (name, label, t, r[1],
                                                                                     want_decrypted))
    F.check(counts == spec["counts"], "%s %s: type counts %s, want %s" % (name, label, counts, spec["counts"]))


def split_fields(out):
    """(the -T fields lines, led by frame.number; what follows: the -z tables)."""
    lines = out.splitlines(True)
    n = 0
    while n < len(lines) and re.match(r"^\d+\t", lines[n]):
        n += 1
    return "".join(lines[:n]), "".join(lines[n:])


def key_files(tmp, name):
    """The capture's key log split: (private key lines only, connection keys only, the whole log)."""
    keylog = os.path.join(nc.REPO, "captures", name + ".keys")
    conn_only = os.path.join(tmp, name + "-conn.keys")
    priv_only = os.path.join(tmp, name + "-priv.keys")
    with open(keylog) as f:
        lines = f.read().splitlines()
    with open(conn_only, "w") as f:
        f.write("\n".join(l for l in lines if not l.startswith("NETCODE_PRIVATE_KEY")) + "\n")
    with open(priv_only, "w") as f:
        f.write("\n".join(l for l in lines if not l.startswith("NETCODE_CONNECTION_KEYS")) + "\n")
    for p in (conn_only, priv_only):
        os.chmod(p, 0o644)
    return priv_only, conn_only, keylog


def pcapng_packets(path):
    """The packets of a pcapng file (its enhanced and simple packet blocks)."""
    with open(path, "rb") as f:
        data = f.read()
    end = "<" if data[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
    off, n = 0, 0
    while off + 12 <= len(data):
        btype, blen = struct.unpack_from(end + "II", data, off)
        if blen < 12:
            raise RuntimeError("%s: bad pcapng block at %d" % (path, off))
        n += btype in (3, 6)
        off += blen
    return n


def joined(F, tmp):
    """The key log settings and no key, for both captures in one run each:
    the captures one after the other in one file (mergecap -a, the earlier
    capture first: real times and addresses kept, the clients' ports
    differ), the key logs joined. Returns {(name, label): (rows, the
    expert summary without and with a tree)} as each capture alone has
    them; the summaries are both captures' (checked here: no warnings)."""
    names = sorted(CAPS, key=lambda n: CAPS[n]["first"])
    paths = [os.path.join(nc.REPO, "captures", n + ".pcapng") for n in names]
    pcap = os.path.join(tmp, "both.pcapng")
    subprocess.run(["mergecap", "-a", "-w", pcap] + paths, check=True)
    os.chmod(pcap, 0o644)
    files = {n: key_files(tmp, n) for n in names}
    out = {}
    for i, label in enumerate(("key log, private key", "key log, connection keys", "key log, both", "no key")):
        opts = []
        if label != "no key":
            keys = os.path.join(tmp, "both-%d.keys" % i)
            with open(keys, "w") as w:
                for n in names:
                    with open(files[n][i]) as f:
                        w.write(f.read().rstrip("\n") + "\n")
            os.chmod(keys, 0o644)
            opts = ["-o", "netcode.keylog_file:" + keys]
        _, rows, with_tree, _ = view(pcap, opts)
        summaries = {False: nc.expert_summary(pcap, opts, tree=False) if label != "no key" else "", True: with_tree}
        first = 0
        for n, path in zip(names, paths):
            count = pcapng_packets(path)
            out[(n, label)] = rows[first:first + count]
            first += count
        F.check(first == len(rows), "%s: %d frames, the captures have %d" % (" + ".join(names), len(rows), first))
        if label == "no key":
            continue
        for tree in (False, True):
            s = summaries[tree]
            if "Does not decrypt" in s or "Errors" in s or "Warns" in s:
                # the joined summary does not say whose: each alone does
                for n, path in zip(names, paths):
                    one = ["-o", "netcode.keylog_file:" + files[n][i]]
                    s1 = nc.expert_summary(path, one, tree)
                    F.check("Does not decrypt" not in s1 and "Errors" not in s1 and "Warns" not in s1,
                            "%s %s (tree %s): warnings or errors in the expert summary:\n%s" % (n, label, tree, s1))
                F.check(False, "%s %s (tree %s): warnings or errors in the expert summary:\n%s"
                        % (" + ".join(names), label, tree, s))
    return out


def main():
    F = nc.Failures()
    tmp = tempfile.mkdtemp()
    os.chmod(tmp, 0o755)
    both = joined(F, tmp)
    for name, spec in CAPS.items():
        pcap = os.path.join(nc.REPO, "captures", name + ".pcapng")
        keylog = os.path.join(nc.REPO, "captures", name + ".keys")
        F.check(os.path.exists(pcap) and os.path.exists(keylog), "%s: capture or key log missing" % name)
        priv_only, conn_only, _ = key_files(tmp, name)
        ways = [
            ("private key preference", ["-o", "netcode.private_key:" + spec["key"]]),
            ("key log, private key", ["-o", "netcode.keylog_file:" + priv_only]),
            ("key log, connection keys", ["-o", "netcode.keylog_file:" + conn_only]),
            ("key log, both", ["-o", "netcode.keylog_file:" + keylog]),
        ]
        # the private key preference: one run with a tree (its fields,
        # experts and table) and one without (-q: its experts alone); the
        # key logs' from joined()
        summaries, views = {}, {}
        for label, opts in ways:
            if label in ("key log, private key", "key log, connection keys", "key log, both"):
                check_decode(F, name, both[(name, label)], label,
                             True if label.endswith("connection keys") else "all")
                continue
            views[label] = v = view(pcap, opts)
            check_decode(F, name, v[1], label, True if label.endswith("connection keys") else "all")
            summaries[(label, False)] = nc.expert_summary(pcap, opts, tree=False)
            summaries[(label, True)] = v[2]
            for tree in (False, True):
                s = summaries[(label, tree)]
                F.check("Does not decrypt" not in s and "Errors" not in s and "Warns" not in s,
                        "%s %s (tree %s): warnings or errors in the expert summary:\n%s" % (name, label, tree, s))
        # the token's contents, from the private key
        opts = ways[0][1]
        v1, rows, _, t1 = views[ways[0][0]]
        r = [rows[0][c] for c in ("netcode.token.client_id", "netcode.token.timeout", "netcode.protocol_id")]
        F.check(r[0] == spec["client_id"] and r[1] == spec["timeout"] and
                int(r[2], 16) == int(spec["protocol_id"], 16),
                "%s: token client id/timeout/protocol id %r" % (name, r))
        # the same experts with and without a tree, one pass and two
        a = summaries[(ways[0][0], False)]
        b = summaries[(ways[0][0], True)]
        c = nc.tshark(["-r", pcap, "-2", "-q", "-z", "expert"] + nc.CHUNK_OFF + opts)
        F.check(a.strip() and a.strip() == b.strip(), "%s: expert summary differs with a tree:\n%s\n---\n%s" % (name, a, b))
        F.check(a.strip() in c, "%s: expert summary differs in two passes" % name)
        for want in ("Connection request", "Connection challenge", "Challenge response", "Connected",
                     "Disconnect"):
            F.check(want in a, "%s: expert summary lacks %r" % (name, want))
        # (the expert.detail cells, one item a line)
        detail = "\n".join(fr["netcode.expert.detail"].replace(AGG, "\n") for fr in rows).replace("\\\\", "\\")
        for want in ("Connection request from the client", "Challenge from the server",
                     "Challenge response from the client", "Connected:", "Disconnect from the client"):
            F.check(want in detail, "%s: expert details lack %r" % (name, want))
        # tshark's single pass keeps no frame records: the same table and
        # per-frame view as two passes
        v2, _, _, t2 = view(pcap, opts, ["-2"])
        F.check(t1 == t2, "%s: connections table differs in two passes:\n%s\n---\n%s" % (name, t1, t2))
        F.check(v1 == v2, "%s: fields differ between one and two passes" % name)
        # no key: every packet still typed, none decrypted
        check_decode(F, name, both[(name, "no key")], "no key", want_decrypted=False)
        # the connections table
        t = t1
        rows = [l for l in t.splitlines() if l.startswith("0 ")]
        F.check(len(rows) == 1 and "connected" in rows[0] and spec["client_id"] in rows[0] and
                "client disconnected" in rows[0], "%s: connections table:\n%s" % (name, t))
        F.check("Diagnosis" not in t, "%s: a diagnosis for a healthy connection:\n%s" % (name, t))
        # mid-connection: no handshake in the capture
        mid = os.path.join(tmp, name + "-mid.pcapng")
        subprocess.run(["editcap", "-r", pcap, mid, "4-1000000"], check=True)
        os.chmod(mid, 0o644)
        rows = nc.fields(mid, ["-o", "netcode.keylog_file:" + conn_only, "-o",
                            "netcode.protocol_ids:" + spec["protocol_id"]], ["netcode.type", "netcode.decrypted"])
        bad = [r for r in rows if not r[0] or not nc.truthy(r[1])]
        F.check(not bad, "%s mid-connection with connection keys: %d of %d frames not decrypted" %
                (name, len(bad), len(rows)))
        # without keys mid-connection: the first packet of each direction
        # waits for a second that follows it; the rest is netcode's
        rows = nc.fields(mid, [], ["netcode.type"])
        nots = sum(1 for r in rows if not r[0])
        F.check(nots <= 2, "%s mid-connection without keys: %d frames not netcode's" % (name, nots))
    # the payload's hand-off: a Decode As table and a heuristic list named netcode.payload
    tables = nc.tshark(["-G", "dissector-tables"])
    F.check(any(l.startswith("netcode.payload\t") and "Decode As" in l for l in tables.splitlines()),
            "no netcode.payload dissector table with Decode As")
    F.finish("netcode.real")


if __name__ == "__main__":
    main()
