#!/usr/bin/env python3
"""yojimbo.games: two games in one capture, each decoded with its own row of
the chunkshark_games table (docs/netcode.md, "Several games"; docs/yojimbo.md).

The capture is captures/real-yojimbo-clean.pcapng (the real library's soak:
protocol id 0, server port 40771, channels uu:8192,ro:10240:1024, the
example schema) followed by captures/yojimbo-unreliable.pcap (yojimbo-sim:
protocol id 0x1122334455667788, server port 40000, channels ro,uu), joined
with mergecap -a. With one -o uat:chunkshark_games row a game, every frame's
yojimbo fields are those each capture gets alone with its own preferences,
and no yojimbo field is malformed; with the handshakes cut off (the rows
matched by server port, the keys from the key logs' connection keys, no
protocol id given) the same. A row for one game and the preferences for the
other work together. Rows that are not valid are refused by tshark with a
message naming the column (never a crash), and a row that matches nothing
changes nothing."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y

# A table row's schema file is read by tshark, which runs as nobody when we
# are root (scripts/chunk-tshark): a copy nobody can read, whatever the
# clone's folder allows (a mktemp -d clone is root's alone).
_SCHEMA_DIR = tempfile.mkdtemp(prefix="yjgames-")
os.chmod(_SCHEMA_DIR, 0o755)
atexit.register(shutil.rmtree, _SCHEMA_DIR, True)
SCHEMA = shutil.copy(os.path.join(y.REPO, "docs", "yojimbo-example.schema"), _SCHEMA_DIR)
os.chmod(SCHEMA, 0o644)
SOAK_CAP = os.path.join(y.CAPTURES, "real-yojimbo-clean.pcapng")
SIM_CAP = os.path.join(y.CAPTURES, "yojimbo-unreliable.pcap")
ZERO_KEY = "00" * 32
SIM_KEY = "ab96ddb72a3c85953aca1e4cf2f5ed47a47cc68c9833d650a6e39d4a3f3ac245"
SOAK_PREFS = ["-o", "yojimbo.channels:uu:8192,ro:10240:1024", "-o", "yojimbo.message_types:4",
              "-o", "yojimbo.schema_file:" + SCHEMA]
SIM_PREFS = ["-o", "yojimbo.channels:ro,uu"]
CHUNK_OFF = ["--disable-protocol", "chunk"]
FIELDS = ["yojimbo.channel_entries", "yojimbo.channel", "yojimbo.message_id", "yojimbo.message_type",
          "yojimbo.block.fragment_id", "yojimbo.block.fragment_size", "yojimbo.body.value", "yojimbo.undecoded"]


def row(protocol_id, port, key, channels, types, schema):
    return ["-o", 'uat:chunkshark_games:"%s","%s","%s","%s","%s","%s"' % (protocol_id, port, key, channels, types,
                                                                         schema)]


SOAK_ROW = row("0", "40771", ZERO_KEY, "uu:8192,ro:10240:1024", "4", SCHEMA)
SIM_ROW = row("1122334455667788", "40000", SIM_KEY, "ro,uu", "4", "")


def view(path, opts):
    out = y.tshark(["-r", path] + CHUNK_OFF + opts + ["-T", "fields", "-E", "separator=|"] +
                   sum((["-e", f] for f in FIELDS), [])).stdout
    return out.splitlines()


def yojimbo_problems(path, opts):
    out = y.tshark(["-r", path, "-q", "-z", "expert"] + CHUNK_OFF + opts).stdout
    return [l for l in out.splitlines() if " yojimbo " in l and ("Malformed" in l or "Protocol" in l)]


def keylog(tmp, name, src, private):
    with open(src) as f:
        lines = [l for l in f.read().splitlines()
                 if l.startswith("NETCODE_CONNECTION_KEYS") or (private and l.startswith("NETCODE_PRIVATE_KEY"))]
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(path, 0o644)
    return path


def merge(tmp, name, a, b):
    out = os.path.join(tmp, name)
    subprocess.run(["mergecap", "-a", "-w", out, a, b], check=True)
    os.chmod(out, 0o644)
    return out


def cut(tmp, name, src, first):
    out = os.path.join(tmp, name)
    subprocess.run(["editcap", "-r", src, out, "%d-10000000" % first], check=True)
    os.chmod(out, 0o644)
    return out


def main():
    c = y.Checks("yojimbo.games")
    tmp = y.tmpdir()
    soak_alone = view(SOAK_CAP, ["-o", "netcode.private_key:" + ZERO_KEY] + SOAK_PREFS)
    sim_alone = view(SIM_CAP, ["-o", "netcode.private_key:" + SIM_KEY] + SIM_PREFS)
    c.true("the soak capture decodes messages alone", sum(1 for l in soak_alone if l.split("|")[2]) > 100)
    c.true("the sim capture decodes channel entries alone", sum(1 for l in sim_alone if l.split("|")[1]) > 20)
    both = merge(tmp, "two-games.pcapng", SOAK_CAP, SIM_CAP)

    # one row a game: each as alone
    opts = SOAK_ROW + SIM_ROW
    got = view(both, opts)
    c.eq("frames", len(got), len(soak_alone) + len(sim_alone))
    c.true("the soak game's frames decode as alone", got[:len(soak_alone)] == soak_alone,
           "(first difference at frame %s)" % next((i + 1 for i, (a, b) in enumerate(zip(got, soak_alone))
                                                    if a != b), None))
    c.true("the sim game's frames decode as alone", got[len(soak_alone):] == sim_alone,
           "(first difference at frame %s)" % next((i + 1 + len(soak_alone) for i, (a, b) in
                                                    enumerate(zip(got[len(soak_alone):], sim_alone)) if a != b), None))
    c.eq("yojimbo problems with the two rows", yojimbo_problems(both, opts), [])
    # without the rows (keys only): one configuration for both breaks them
    keys = ["-o", "netcode.private_key:%s,%s" % (ZERO_KEY, SIM_KEY)]
    c.true("without rows the preferences' one configuration breaks a game", yojimbo_problems(both, keys) != [])
    # a row for one game, the preferences for the other
    got = view(both, SOAK_ROW + ["-o", "netcode.private_key:" + SIM_KEY] + SIM_PREFS)
    c.true("soak row + sim preferences: both as alone", got == soak_alone + sim_alone)

    # mid-session: no handshake, keys from the key logs' connection keys,
    # rows found by server port, no protocol id given
    smid = cut(tmp, "soak-mid.pcapng", SOAK_CAP, 5)
    ymid = cut(tmp, "sim-mid.pcap", SIM_CAP, 5)
    mid = merge(tmp, "two-games-mid.pcapng", smid, ymid)
    kl = keylog(tmp, "two.keys", os.path.join(y.CAPTURES, "yojimbo-unreliable.keys"), False)
    # the soak's key log has its private key only: its connection's keys as
    # its client has them, read from the request's token
    keys = y.tshark(["-r", SOAK_CAP, "-c", "1", "-o", "netcode.private_key:" + ZERO_KEY, "-T", "fields",
                     "-e", "netcode.token.client_to_server_key", "-e", "netcode.token.server_to_client_key"] +
                    CHUNK_OFF).stdout.split()
    c.eq("the soak's connection keys from its request", len(keys), 2)
    with open(kl, "a") as f:
        f.write("NETCODE_CONNECTION_KEYS %s %s\n" % tuple(k.replace(":", "") for k in keys[:2]))
    nokey_rows = row("0", "40771", "", "uu:8192,ro:10240:1024", "4", SCHEMA) + \
        row("1122334455667788", "40000", "", "ro,uu", "", "")
    opts = nokey_rows + ["-o", "netcode.keylog_file:" + kl, "-o", "netcode.udp.port:40000,40771"]
    got = view(mid, opts)
    dec = y.tshark(["-r", mid] + CHUNK_OFF + opts + ["-T", "fields", "-e", "netcode.decrypted"]).stdout.split()
    c.true("mid-session: every frame decrypted", dec and all(d in ("1", "True") for d in dec),
           "(%d of %d)" % (sum(d in ("1", "True") for d in dec), len(dec)))
    c.eq("mid-session: yojimbo problems", yojimbo_problems(mid, opts), [])
    ns = len(soak_alone) - 4
    c.true("mid-session: the soak frames as alone", got[:ns] == soak_alone[4:])
    c.true("mid-session: the sim frames as alone", got[ns:] == sim_alone[4:])

    # rows that are not valid: an error naming the column, no crash
    bad = [
        (row("xyz", "40000", "", "", "", ""), "Protocol id"),
        (row("0", "70000", "", "", "", ""), "Server UDP port"),
        (row("0", "40000", "abc", "", "", ""), "Private key"),
        (row("0", "40000", "", "ro,zz", "", ""), "Channels"),
        (row("0", "40000", "", "ro", "0", ""), "Message types"),
        (row("0", "40000", "", "ro", "4", os.path.join(tmp, "no-such.schema")), "Schema file"),
    ]
    for opts, word in bad:
        r = y.tshark(["-r", SIM_CAP] + CHUNK_OFF + opts + ["-c", "5"], check=False)
        c.true("bad row (%s): refused" % word, r.returncode not in (0,) and r.returncode > 0,
               "(exit %d)" % r.returncode)
        c.true("bad row (%s): the message names the column" % word, word in r.stderr, "(stderr %r)" % r.stderr)
    # a row that matches nothing: as without it
    got = view(SIM_CAP, row("dead", "1234", "11" * 32, "uu", "1", "") + ["-o", "netcode.private_key:" + SIM_KEY] +
               SIM_PREFS)
    c.true("a row that matches nothing changes nothing", got == sim_alone)
    c.done()


if __name__ == "__main__":
    main()
