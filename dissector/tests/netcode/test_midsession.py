#!/usr/bin/env python3
"""netcode.midsession: captures that start after the handshake, and connect
tokens (docs/netcode.md, "Captures that start mid-session", "Connect
tokens").

- real-yojimbo-cs without its first three frames decrypts with the key log's
  connection keys alone: its protocol id is 0, tried without
  netcode.protocol_ids;
- real-netcode-cs cut the same way (protocol id 0x1122334455667788): with the
  connection keys alone, once per connection the fixed note "Keys given but
  the protocol id is unknown: set netcode.protocol_ids"; with the private key
  alone "No key for this connection" (a private key opens only a request's
  token); never the old advice to set what is set;
- Decode As on a port that does not say which side is the server: the
  connection is turned round when a key verifies its first packet the other
  way;
- a connection without keys is searched on a few packets, not on every one:
  3000 key log pairs that fit nothing cost about what no key costs;
- captures/netcode-token.pcap (netcode-token, netcode-server and
  netcode-client on loopback) with its client's connect token
  (captures/netcode-token.token) and no private key: every packet but the
  request decrypts, with the handshake and without it, from the binary file,
  from a hex file and from a NETCODE_CONNECT_TOKEN key log line; a token
  file that is not one gets netcode.connect_token_file.malformed;
- a chunkshark_games row naming the server port makes that port's packets
  netcode's without netcode.udp.port.
"""
import html
import os
import re
import subprocess
import tempfile
import time

import nctest as nc

CAP = os.path.join(nc.REPO, "captures")
NETCODE_KEY = "606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1"
TOKEN_PORT = "40100"
TOKEN_PROTOCOL_ID = "00c0ffee00001234"


def cut(tmp, name, src, first):
    out = os.path.join(tmp, name)
    subprocess.run(["editcap", "-r", src, out, "%d-10000000" % first], check=True)
    os.chmod(out, 0o644)
    return out


def write(tmp, name, text, mode="w"):
    path = os.path.join(tmp, name)
    with open(path, mode) as f:
        f.write(text)
    os.chmod(path, 0o644)
    return path


def conn_keys(tmp, name):
    with open(os.path.join(CAP, name + ".keys")) as f:
        lines = [l for l in f.read().splitlines() if l.startswith("NETCODE_CONNECTION_KEYS")]
    return write(tmp, name + "-conn.keys", "\n".join(lines) + "\n")


def summary_lines(pcap, opts):
    """The expert summary's rows: {summary text: frequency}."""
    out = nc.tshark(["-r", pcap, "-q", "-z", "expert"] + nc.CHUNK_OFF + list(opts))
    rows = {}
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[0].isdigit() and parts[2] == "netcode":
            rows[parts[3].strip()] = rows.get(parts[3].strip(), 0) + int(parts[0])
    return rows


_FIELD = re.compile(r'<field name="([^"]*)"[^>]*? show="([^"]*)"')
_LABEL = re.compile(r'<(?:field|proto)\b[^>]*? show(?:name)?="([^"]*)"')


def pdml_rows(pcap, opts, names):
    """One -T pdml run: (nc.fields()'s rows of names, the first frame's
    item labels one a line, the text -V -c 1 shows of its fields); read
    line by line (PDML has an element a line)."""
    out = nc.tshark(["-r", pcap, "-T", "pdml"] + nc.CHUNK_OFF + list(opts))
    rows, labels, vals = [], [], None
    for line in out.splitlines():
        if line.startswith("<packet>"):
            vals = {n: [] for n in names}
        elif line.startswith("</packet>") and vals is not None:
            rows.append([",".join(vals[n]) for n in names])
            vals = None
        elif vals is not None:
            m = _FIELD.search(line)
            if m and m.group(1) in vals:
                vals[m.group(1)].append(html.unescape(m.group(2)))
            m = _LABEL.search(line) if not rows else None
            if m:
                labels.append(html.unescape(m.group(1)))
    return rows, "\n".join(labels)


def cpu_seconds(args):
    env = dict(os.environ, WIRESHARK_ABORT_ON_DISSECTOR_BUG="1")
    env.setdefault("CHUNK_BUILD_DIR", nc.ct.build_dir())
    before = os.times()
    subprocess.run([nc.ct.CHUNK_TSHARK] + args, env=env, stdout=subprocess.DEVNULL, check=True)
    after = os.times()
    return (after.children_user + after.children_system) - (before.children_user + before.children_system)


def main():
    F = nc.Failures()
    tmp = tempfile.mkdtemp()
    os.chmod(tmp, 0o755)

    # ---- protocol id 0 without netcode.protocol_ids ----
    ymid = cut(tmp, "yojimbo-mid.pcapng", os.path.join(CAP, "real-yojimbo-cs.pcapng"), 4)
    ykeys = conn_keys(tmp, "real-yojimbo-cs")
    rows = nc.fields(ymid, ["-o", "netcode.keylog_file:" + ykeys], ["netcode.type", "netcode.decrypted"])
    bad = [r for r in rows if not r[0] or not nc.truthy(r[1])]
    F.check(rows and not bad, "real-yojimbo-cs mid-session, connection keys, no protocol id given: %d of %d "
            "frames not decrypted" % (len(bad), len(rows)))
    F.check(not summary_lines(ymid, ["-o", "netcode.keylog_file:" + ykeys]).get("No key for this connection"),
            "real-yojimbo-cs mid-session: a no-key note although it decrypts")

    # ---- Decode As on a port that does not say which side is the server:
    # the first packet (the server's) is taken for the client's until a key
    # verifies it the other way round ----
    nmid0 = cut(tmp, "netcode-mid0.pcapng", os.path.join(CAP, "real-netcode-cs.pcapng"), 4)
    opts = ["-d", "udp.port==40000,netcode", "-o", "netcode.udp.port:1",
            "-o", "netcode.keylog_file:" + conn_keys(tmp, "real-netcode-cs"),
            "-o", "netcode.protocol_ids:1122334455667788"]
    rows = nc.fields(nmid0, opts, ["udp.srcport", "netcode.direction", "netcode.decrypted"])
    F.check(rows and rows[0][0] == "40000", "real-netcode-cs from frame 4 does not start with the server's packet")
    bad = [r for r in rows if not nc.truthy(r[2])]
    F.check(rows and not bad, "Decode As mid-session, server side guessed: %d of %d frames not decrypted" %
            (len(bad), len(rows)))
    dirs = {(r[0] == "40000", r[1]) for r in rows}
    F.check(len(dirs) == 2 and len({d for _, d in dirs}) == 2,
            "Decode As mid-session: the directions do not follow the server's port: %s" % sorted(dirs))

    # ---- what is missing, named ----
    nmid = cut(tmp, "netcode-mid.pcapng", os.path.join(CAP, "real-netcode-cs.pcapng"), 4)
    nkeys = conn_keys(tmp, "real-netcode-cs")
    no_id = "Keys given but the protocol id is unknown: set netcode.protocol_ids"
    opts = ["-o", "netcode.keylog_file:" + nkeys]
    s = summary_lines(nmid, opts)
    F.check(s.get(no_id) == 1 and "No key for this connection" not in s,
            "real-netcode-cs mid-session, connection keys only: want one %r, got %s" % (no_id, s))
    tree = nc.tshark(["-r", nmid, "-V", "-c", "2"] + nc.CHUNK_OFF + opts)
    F.check("protocol id(s) tried" in tree and "set netcode.protocol_ids" in tree,
            "the packet's tree does not say what was tried:\n%s" % tree[-1500:])
    # with the id it decrypts, and the note is gone
    rows = nc.fields(nmid, opts + ["-o", "netcode.protocol_ids:1122334455667788"], ["netcode.decrypted"])
    F.check(rows and all(nc.truthy(r[0]) for r in rows), "real-netcode-cs mid-session with the id: not all decrypted")
    # a private key alone cannot open a connection whose request is missing
    opts = ["-o", "netcode.private_key:" + NETCODE_KEY]
    s = summary_lines(nmid, opts)
    F.check(s.get("No key for this connection") == 1 and no_id not in s,
            "real-netcode-cs mid-session, private key only: want one 'No key for this connection', got %s" % s)
    F.check(not any("set netcode.private_key" in k for k in s),
            "the note advises setting netcode.private_key, which is set: %s" % s)
    tree = nc.tshark(["-r", nmid, "-V", "-c", "2"] + nc.CHUNK_OFF + opts)
    F.check("request is not in the capture" in tree,
            "the tree does not say why the private key does not help:\n%s" % tree[-1500:])
    # nothing set
    s = summary_lines(nmid, [])
    F.check(s.get("No key for this connection") == 1, "real-netcode-cs mid-session, no key: %s" % s)

    # ---- the search is bounded: 3000 pairs that fit nothing (the code
    # before tried each with each id on every packet: 120 s here) ----
    junk = "".join("NETCODE_CONNECTION_KEYS %064x %064x\n" % (i + 1, i + 100000) for i in range(3000))
    jkeys = write(tmp, "junk.keys", junk)
    ids = ",".join("%x" % (0x1000 + i) for i in range(16))
    base = ["-r", nmid, "-q"] + nc.CHUNK_OFF
    t0 = min(cpu_seconds(base) for _ in range(2))
    t1 = cpu_seconds(base + ["-o", "netcode.keylog_file:" + jkeys, "-o", "netcode.protocol_ids:" + ids])
    F.check(t1 < 2 * t0 + 2.0, "3000 key pairs x 17 protocol ids that fit nothing: %.2f s of CPU against %.2f s "
            "without keys (the search should stop after a few packets)" % (t1, t0))
    print("bounded search: %.2f s CPU with 3000 pairs x 17 ids, %.2f s without keys" % (t1, t0))

    # ---- connect tokens ----
    tpcap = os.path.join(CAP, "netcode-token.pcap")
    token = os.path.join(CAP, "netcode-token.token")
    with open(token, "rb") as f:
        tbytes = f.read()
    F.check(len(tbytes) == 2048 and tbytes.startswith(b"NETCODE 1.02\x00"), "netcode-token.token is not a token")
    hexfile = write(tmp, "tokens.txt", "# the client's token\n%s\n" % tbytes.hex())
    keylog = write(tmp, "token.keys", "NETCODE_CONNECT_TOKEN %s\n" % tbytes.hex())
    tmid = cut(tmp, "token-mid.pcap", tpcap, 4)
    port = ["-o", "netcode.udp.port:" + TOKEN_PORT]
    ways = [("binary token file", ["-o", "netcode.connect_token_file:" + token],
             "connect token 1 of netcode.connect_token_file"),
            ("hex token file", ["-o", "netcode.connect_token_file:" + hexfile],
             "connect token 1 of netcode.connect_token_file"),
            ("key log line", ["-o", "netcode.keylog_file:" + keylog], "connect token of key log line 1")]
    for label, opts, source in ways:
        for pcap, what in ((tpcap, "whole"), (tmid, "mid-session")):
            if pcap == tmid:
                # one run: the rows, and the first frame's labels (-V's text)
                rows, tree = pdml_rows(pcap, port + opts, ["netcode.type", "netcode.decrypted"])
            else:
                rows = nc.fields(pcap, port + opts, ["netcode.type", "netcode.decrypted"])
            bad = [r for r in rows if r[0] != "0" and (not r[0] or not nc.truthy(r[1]))]
            F.check(len(rows) > 50 and not bad, "netcode-token %s, %s: %d of %d frames not decrypted" %
                    (what, label, len(bad), len(rows)))
        F.check(source in tree, "netcode-token, %s: the decrypted flag does not name %r" % (label, source))
    # without the token: nothing decrypts, the note says no key
    rows = nc.fields(tmid, port, ["netcode.decrypted"])
    F.check(rows and not any(nc.truthy(r[0]) for r in rows), "netcode-token without the token: decrypted")
    # a token file that is not one
    for label, content in (("text", "not a token\n"), ("short binary", tbytes[:1000]),
                           ("bad address type", tbytes[:1093] + b"\x07" + tbytes[1094:])):
        bad = write(tmp, "bad.token", content, "w" if isinstance(content, str) else "wb")
        got = [g for g in nc.decode(tmid, port + ["-o", "netcode.connect_token_file:" + bad]) if g["netcode"]]
        F.check(got and "netcode.connect_token_file.malformed" in got[0]["experts"],
                "token file (%s): no netcode.connect_token_file.malformed on the first netcode frame" % label)
        F.check(not any(g["fields"].get("netcode.decrypted") in (["1"], ["True"]) for g in got),
                "token file (%s): decrypted with a token that is not one" % label)

    # ---- a games row's port marks the server port ----
    row = 'uat:chunkshark_games:"%s","%s","","","",""' % (TOKEN_PROTOCOL_ID, TOKEN_PORT)
    rows = nc.fields(tmid, ["-o", row, "-o", "netcode.connect_token_file:" + token], ["netcode.decrypted"])
    F.check(rows and all(nc.truthy(r[0]) for r in rows),
            "netcode-token mid-session, the port from a chunkshark_games row: not all decrypted")
    rows = nc.fields(tmid, ["-o", "netcode.connect_token_file:" + token], ["netcode.decrypted"])
    F.check(not any(r[0] for r in rows), "netcode-token mid-session on port %s without the row or "
            "netcode.udp.port: taken as netcode" % TOKEN_PORT)
    F.finish("netcode.midsession")


if __name__ == "__main__":
    main()
