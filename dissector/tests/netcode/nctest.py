"""Helpers for the netcode dissector's tests.

- tshark with the plugin of the build tree (chunktest.tshark: scripts/chunk-tshark,
  WIRESHARK_ABORT_ON_DISSECTOR_BUG=1);
- netcode packets made with libsodium (ctypes), not with the dissector's own
  crypto: the connect token (XChaCha20-Poly1305), the request, the encrypted
  packets (ChaCha20-Poly1305 IETF), written as pcaps;
- each frame's netcode fields and expert infos (PDML), and the expert
  summary with and without a tree.

chunk keeps UDP port 40000 in Wireshark's port table; until its port
dissector hands back datagrams that are not chunk's, these tests run with
--disable-protocol chunk (CHUNK_OFF), which gives the same path: the port's
dissector declines, UDP tries the heuristics.
"""
import ctypes
import ctypes.util
import os
import struct
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import chunktest as ct  # noqa: E402

REPO = ct.REPO
tshark = ct.tshark
Failures = ct.Failures
scratch_dir = ct.scratch_dir
CHUNK_OFF = ["--disable-protocol", "chunk"]

VERSION = b"NETCODE 1.02\x00"
CLIENT = ("10.0.0.1", 50000)
SERVER = ("10.0.0.2", 40000)
PROTOCOL_ID = 0x1122334455667788
PRIVATE_KEY = bytes(range(32))
C2S_KEY = bytes([0x11] * 32)
S2C_KEY = bytes([0x22] * 32)
T0 = 1800000000.0          # capture time of the first frame (Unix seconds)

REQUEST, DENIED, CHALLENGE, RESPONSE, KEEP_ALIVE, PAYLOAD, DISCONNECT = range(7)

_sodium = None


def sodium():
    global _sodium
    if _sodium is None:
        name = ctypes.util.find_library("sodium") or "libsodium.so.23"
        _sodium = ctypes.CDLL(name)
        if _sodium.sodium_init() < 0:
            raise RuntimeError("sodium_init failed")
    return _sodium


def _aead(fn, key, nonce, ad, plain):
    out = ctypes.create_string_buffer(len(plain) + 16)
    out_len = ctypes.c_ulonglong(0)
    r = fn(out, ctypes.byref(out_len), plain, ctypes.c_ulonglong(len(plain)), ad, ctypes.c_ulonglong(len(ad)),
           None, nonce, key)
    if r != 0:
        raise RuntimeError("libsodium encryption failed")
    return out.raw[:out_len.value]


def chacha(key, nonce12, ad, plain):
    return _aead(sodium().crypto_aead_chacha20poly1305_ietf_encrypt, key, nonce12, ad, plain)


def xchacha(key, nonce24, ad, plain):
    return _aead(sodium().crypto_aead_xchacha20poly1305_ietf_encrypt, key, nonce24, ad, plain)


def token_plain(client_id=42, timeout=5, addresses=(SERVER,), c2s=C2S_KEY, s2c=S2C_KEY, user_data=b"\x07" * 256,
                num_addresses=None, address_type=1):
    t = struct.pack("<QiI", client_id, timeout, len(addresses) if num_addresses is None else num_addresses)
    for ip, port in addresses:
        t += bytes([address_type]) + bytes(int(x) for x in ip.split(".")) + struct.pack("<H", port)
    t += c2s + s2c + user_data
    return t + b"\x00" * (1008 - len(t))


def request(expire, private_key=PRIVATE_KEY, protocol_id=PROTOCOL_ID, nonce=b"\x05" * 24, plain=None):
    """A connection request (1078 bytes) whose token is encrypted with private_key."""
    plain = token_plain() if plain is None else plain
    ad = VERSION + struct.pack("<QQ", protocol_id, expire)
    enc = xchacha(private_key, nonce, ad, plain)
    assert len(enc) == 1024
    return b"\x00" + VERSION + struct.pack("<QQ", protocol_id, expire) + nonce + enc


def seq_bytes(seq):
    n = 1
    while seq >> (8 * n) and n < 8:
        n += 1
    return n


def packet(ptype, seq, plain, key, protocol_id=PROTOCOL_ID, forge=False):
    """An encrypted packet; forge: the MAC's last byte flipped."""
    n = seq_bytes(seq)
    prefix = (n << 4) | ptype
    ad = VERSION + struct.pack("<Q", protocol_id) + bytes([prefix])
    nonce = b"\x00" * 4 + struct.pack("<Q", seq)
    enc = chacha(key, nonce, ad, plain)
    if forge:
        enc = enc[:-1] + bytes([enc[-1] ^ 1])
    return bytes([prefix]) + struct.pack("<Q", seq)[:n] + enc


def challenge(seq=1 << 63, token_seq=0, key=S2C_KEY):
    return packet(CHALLENGE, seq, struct.pack("<Q", token_seq) + b"\x33" * 300, key)


def response(seq, token_seq=0, key=C2S_KEY):
    return packet(RESPONSE, seq, struct.pack("<Q", token_seq) + b"\x33" * 300, key)


def keep_alive(seq, key, index=0, max_clients=4):
    return packet(KEEP_ALIVE, seq, struct.pack("<II", index, max_clients), key)


def payload(seq, key, data=b"hello netcode"):
    return packet(PAYLOAD, seq, data, key)


def disconnect(seq, key):
    return packet(DISCONNECT, seq, b"", key)


def denied(seq=1 << 63, key=S2C_KEY):
    return packet(DENIED, seq, b"", key)


def c2s(data, t):
    return {"payload": data, "src": CLIENT[0], "sport": CLIENT[1], "dst": SERVER[0], "dport": SERVER[1], "t": t}


def s2c(data, t):
    return {"payload": data, "src": SERVER[0], "sport": SERVER[1], "dst": CLIENT[0], "dport": CLIENT[1], "t": t}


def write_pcap(path, frames):
    """frames: dicts as c2s()/s2c() make, with t relative to T0."""
    fixed = []
    for f in frames:
        f = dict(f)
        us = int(round((T0 + f["t"]) * 1e6))
        f["t"] = us // 1000000 + (us % 1000000) / 1e6
        fixed.append(f)
    ct.write_pcap(path, fixed)


def handshake(t=0.0, expire=None):
    """Request, challenge, response, the server's first keep-alive: a
    connection up at t + 0.03."""
    expire = int(T0 + 60) if expire is None else expire
    return [c2s(request(expire), t), s2c(challenge(), t + 0.01), c2s(response(0), t + 0.02),
            s2c(keep_alive(0, S2C_KEY), t + 0.03)]


# ---- reading tshark's view ---------------------------------------------------------

def decode(pcap, opts=()):
    """One dict per frame: {"netcode": decoded by netcode, "fields": {name:
    [show...]}, "experts": set of netcode.* expert names}."""
    return _decoded(tshark(["-r", pcap, "-T", "pdml"] + CHUNK_OFF + list(opts)))


def _decoded(xml):
    """decode()'s frames of a PDML text."""
    frames = []
    for pkt in ET.fromstring(xml).iter("packet"):
        fr = {"fields": {}, "experts": set(), "netcode": False}
        for proto in pkt.iter("proto"):
            if proto.get("name") != "netcode":
                continue
            fr["netcode"] = True
            for f, in_expert in ct.pdml_fields(proto):
                name = f.get("name")
                if in_expert and name.startswith("netcode."):
                    fr["experts"].add(name)
                elif not in_expert:
                    fr["fields"].setdefault(name, []).append(f.get("show"))
        frames.append(fr)
    return frames


def decode_with_summary(pcap, opts=()):
    """One run with a tree: (decode()'s frames, expert_summary()'s text
    with a tree): -T pdml -z expert, whose summary follows the PDML."""
    out = tshark(["-r", pcap, "-T", "pdml"] + CHUNK_OFF + list(opts) + ["-z", "expert"])
    end = out.find("</pdml>")
    end = out.find("\n", end) + 1 if end >= 0 else len(out)
    return _decoded(out[:end]), _summary(out[end:])


def summary_and_conns(pcap, opts=()):
    """One run without a tree (-q): (expert_summary()'s text without a
    tree, conns_table()'s text), split apart as each tap alone prints it."""
    out = tshark(["-r", pcap, "-q", "-z", "expert", "-z", "netcode,conns"] + CHUNK_OFF + list(opts))
    table, rest = ct.split_table(out, "netcode connections")
    return _summary(rest), table


def expert_summary(pcap, opts=(), tree=False):
    """tshark -z expert's text, without (-q) or with (-V) a tree."""
    args = ["-r", pcap] + CHUNK_OFF + list(opts) + ["-z", "expert"]
    return _summary(tshark(args + (["-V"] if tree else ["-q"])))


def _summary(out):
    """The expert summary in a run's output (its tap's text)."""
    i = out.find("\n=====")
    # the summary starts at its first section title (Errors/Warns/Notes/Chats)
    for title in ("Errors (", "Warns (", "Notes (", "Chats ("):
        j = out.find("\n" + title)
        if j >= 0 and (i < 0 or j < i):
            i = j
    return out[out.rfind("\n\n", 0, i) if i > 0 else 0:] if i >= 0 else ""


def fields(pcap, opts, names):
    """-T fields rows (lists of strings) of names, chunk off."""
    out = tshark(["-r", pcap] + CHUNK_OFF + list(opts) + ["-T", "fields"] + sum((["-e", n] for n in names), []))
    return [line.split("\t") for line in out.splitlines()]


def truthy(v):
    """A boolean field's value as -T fields prints it: 1 on 4.0, True from 4.4."""
    return v in ("1", "True")


def expert_detail(pcap, opts=()):
    """The netcode.expert.detail items of every packet (the numbers and
    names that the expert infos' fixed summaries leave out), one a line."""
    out = tshark(["-r", pcap] + CHUNK_OFF + list(opts) + ["-T", "fields", "-E", "occurrence=a",
                                                          "-E", "aggregator=\n", "-e", "netcode.expert.detail"])
    # From 4.4 -T fields escapes a backslash in a value as two: undone, so
    # that the text reads as the item's on every version.
    return out.replace("\\\\", "\\")


def conns_table(pcap, opts=()):
    return tshark(["-r", pcap, "-q", "-z", "netcode,conns"] + CHUNK_OFF + list(opts))
