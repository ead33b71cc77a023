#!/usr/bin/env python3
"""netcode.hostile: hostile netcode traffic and configuration, tshark with
the plugin against tshark with --disable-protocol netcode: no dissector bug,
no failed run, time and peak memory bounded (dissector/tests/hostile_bounds.py),
with a private key and a key log loaded (so every request and packet is
tried). Captures (written here, Ethernet/IPv4/UDP to port 40000, Decode As
netcode):

  garbage          25 000 datagrams: every prefix byte, random bodies of
                   0..1200 bytes and truncations of real packets, from
                   5 000 addresses
  forged-requests  5 000 connection requests from as many addresses: the
                   right version and protocol id with a token that does not
                   decrypt (wrong key, flipped bytes), cut short, or
                   decrypting to hostile contents (2^32-1 server addresses,
                   an unknown address type, a negative timeout)
  forged-packets   after a handshake, 15 000 packets of every type: forged
                   MACs, sequences of 8 bytes jumping by 2^63, 2^64-1, keep-
                   alives with client index and max clients 2^32-1,
                   payloads of 0 and 1200 bytes, replays
  keylog           a key log of 20 000 malformed lines (bad hex, wrong
                   lengths, a 1 MiB line, binary bytes) and 300 wrong
                   connection keys, with 200 connections without their
                   handshake whose keys are the log's last line (5 000
                   packets)

  test_hostile.py [--only NAME] [--keep] [--work DIR]
"""
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import hostile_bounds as hb  # noqa: E402
import nctest as nc  # noqa: E402

SERVER = bytes([10, 0, 0, 2])
PORT = 40000
EXPIRE = int(nc.T0 + 3600)


def garbage(path):
    w = hb.Writer(path)
    rnd = random.Random(1)
    real = [nc.request(EXPIRE), nc.challenge(), nc.response(1), nc.keep_alive(0, nc.S2C_KEY),
            nc.payload(5, nc.C2S_KEY, b"\x00" * 300), nc.disconnect(9, nc.C2S_KEY)]
    t = 0
    for i in range(25000):
        src = hb.addr(i % 5000)
        if i % 3 == 0:
            body = bytes([i & 0xFF]) + bytes(rnd.getrandbits(8) for _ in range(rnd.choice((0, 1, 8, 9, 30, rnd.randint(0, 1200)))))
        elif i % 3 == 1:
            p = rnd.choice(real)
            body = p[:rnd.randint(0, len(p))]
        else:
            p = bytearray(rnd.choice(real))
            for _ in range(rnd.randint(1, 8)):
                p[rnd.randrange(len(p))] = rnd.getrandbits(8)
            body = bytes(p)
        if i % 2:
            w.add(t, body, src, 50000, SERVER, PORT)
        else:
            w.add(t, body, SERVER, PORT, src, 50000)
        t += 10
    return w.close()


def forged_requests(path):
    w = hb.Writer(path)
    rnd = random.Random(2)
    wrong_key = bytes([0xEE] * 32)
    hostile = [nc.token_plain(num_addresses=0xFFFFFFFF), nc.token_plain(address_type=9),
               nc.token_plain(timeout=-1), nc.token_plain(addresses=()), nc.token_plain(num_addresses=33)]
    kinds = [nc.request(EXPIRE, private_key=wrong_key)] + [nc.request(EXPIRE, plain=p) for p in hostile]
    for i in range(5000):
        k = i % 8
        if k < len(kinds):
            body = kinds[k]
        elif k == 6:
            body = bytearray(kinds[1])
            body[rnd.randrange(45, len(body))] ^= 0xFF       # a flipped token byte: does not decrypt
            body = bytes(body)
        else:
            body = kinds[1][:rnd.randint(1, 1077)]            # cut short
        w.add(i * 50, body, hb.addr(i), 50000 + (i % 1000), SERVER, PORT)
    return w.close()


def forged_packets(path):
    w = hb.Writer(path)
    rnd = random.Random(3)
    client = bytes([10, 0, 0, 1])
    t = 0
    for f in nc.handshake():
        w.add(t, f["payload"], bytes(int(x) for x in f["src"].split(".")), f["sport"],
              bytes(int(x) for x in f["dst"].split(".")), f["dport"])
        t += 1000
    seqs = [0, 1, 255, 256, (1 << 63), (1 << 64) - 1, (1 << 56), (1 << 32) - 1]
    replay = nc.payload(7, nc.C2S_KEY)
    for i in range(15000):
        c2s = i % 2 == 0
        key = nc.C2S_KEY if c2s else nc.S2C_KEY
        k = i % 10
        seq = rnd.choice(seqs) if k < 3 else (i * 0x8000000000000001) & ((1 << 64) - 1)
        if k == 0:
            body = nc.packet(rnd.randrange(7), seq, b"\x01" * rnd.choice((0, 8, 308)), key, forge=True)
        elif k == 1:
            body = nc.keep_alive(seq, key, index=0xFFFFFFFF, max_clients=0xFFFFFFFF)
        elif k == 2:
            body = nc.payload(seq, key, b"\xAB" * rnd.choice((1, 1200)))
        elif k == 3:
            body = replay
        elif k == 4:
            body = nc.packet(nc.PAYLOAD, seq, b"", key)                  # an empty payload
        elif k == 5:
            body = nc.disconnect(seq, key)
        elif k == 6:
            body = nc.packet(rnd.choice((7, 8, 15)), seq, b"\x00" * 8, key)  # no such type
        elif k == 7:
            body = bytes([0x05 | (rnd.randint(9, 15) << 4)]) + bytes(20)   # more than 8 sequence bytes
        else:
            body = nc.packet(rnd.randrange(7), seq, b"\x02" * 20, key)
        if c2s:
            w.add(t, body, client, 50000, SERVER, PORT)
        else:
            w.add(t, body, SERVER, PORT, client, 50000)
        t += 20
    return w.close()


def keylog_capture(path, keylog):
    rnd = random.Random(4)
    good_c2s, good_s2c = bytes([0x5A] * 32), bytes([0xA5] * 32)
    lines = []
    for i in range(20000):
        k = i % 6
        if k == 0:
            lines.append("NETCODE_CONNECTION_KEYS " + "zz" * 32 + " " + "00" * 32)
        elif k == 1:
            lines.append("NETCODE_PRIVATE_KEY " + "ab" * rnd.randint(0, 40))
        elif k == 2:
            lines.append("NETCODE_CONNECTION_KEYS " + "11" * 32)
        elif k == 3:
            lines.append("".join(chr(rnd.randint(1, 255)) for _ in range(rnd.randint(0, 80))).replace("\n", " "))
        elif k == 4:
            lines.append("NETCODE_CONNECTION_KEYS " + "22" * 33 + " " + "33" * 31)
        else:
            lines.append("# " + "x" * rnd.randint(0, 200))
    lines.insert(10000, "NETCODE_PRIVATE_KEY " + "f" * (1 << 20))
    for i in range(300):
        lines.append("NETCODE_CONNECTION_KEYS %s %s" % (os.urandom(32).hex(), os.urandom(32).hex()))
    lines.append("NETCODE_CONNECTION_KEYS %s %s" % (good_c2s.hex(), good_s2c.hex()))
    with open(keylog, "w", encoding="latin-1") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(keylog, 0o644)
    w = hb.Writer(path)
    t = 0
    for i in range(5000):
        conn = i % 200
        seq = 10 + i // 200
        if i % 2:
            w.add(t, nc.keep_alive(seq, good_s2c), SERVER, PORT, hb.addr(conn), 50000)
        else:
            w.add(t, nc.payload(seq, good_c2s, b"\x00\x01"), hb.addr(conn), 50000, SERVER, PORT)
        t += 100
    return w.close()


def cases(args, build, env, work):
    keylog = os.path.join(work, "hostile.keys")
    empty_log = os.path.join(work, "empty.keys")
    with open(empty_log, "w") as f:
        f.write("NETCODE_CONNECTION_KEYS %s %s\n" % (nc.C2S_KEY.hex(), nc.S2C_KEY.hex()))
    os.chmod(empty_log, 0o644)
    base = ["-d", "udp.port==%d,netcode" % PORT, "-o", "netcode.private_key:" + nc.PRIVATE_KEY.hex()]
    return [
        # name, writer, options, frames that must be netcode (None: any) [, memory per capture byte]
        ("garbage", garbage, base + ["-o", "netcode.keylog_file:" + empty_log], None),
        ("forged-requests", forged_requests, base, None),
        ("forged-packets", forged_packets, base, 15000),
        # netcode.decrypted of the same run for keylog_decrypts
        ("keylog", lambda p: keylog_capture(p, keylog),
         base + ["-o", "netcode.keylog_file:" + keylog, "-o", "netcode.protocol_ids:%x" % nc.PROTOCOL_ID], 5000,
         hb.EXTRA_PER_BYTE, ["netcode.decrypted"]),
    ]


def keylog_decrypts(name, path, opts, count, out, failures):
    """The connection keys on the key log's last line decrypt all 200
    connections (out: the keylog run's Protocol and netcode.decrypted)."""
    if name != "keylog":
        return
    n = sum(1 for line in out.splitlines() if line.split("\t")[-1].strip() in ("1", "True"))
    print("keylog: %d of %d packets decrypted with the log's last line" % (n, count))
    if n != count:
        failures.append("keylog: %d of %d packets decrypted with the key log's last line" % (n, count))


if __name__ == "__main__":
    sys.exit(hb.main("netcode", __doc__, cases, after=keylog_decrypts))
