#!/usr/bin/env python3
"""mutate-fuzz.py: mutation fuzzing of the chunk dissector inside tshark.

Every capture in captures/ (pcap and pcapng; concatenated, each in its own
UDP conversations; pcapng read through editcap -F pcap, raw-IP frames given
an Ethernet header) is mutated, once per seed, in two ways:

  editcap   editcap -E RATE --seed SEED: random byte errors anywhere in the
            frames. Most land in Ethernet/IP/UDP or break the chunk CRC, so
            this mostly tests the decoder's reject paths;
  crcfix    this script's mutator, aimed at our packets (netgame ones: see
            mutate_netgame; fragment packets, whose CRC implies p2frag's id
            0x55667788: mutate_p2frag, CRC fixed with that id): bit flips biased to
            the chunk header, rewritten chunk ids and slice counts, random
            acks, truncation and extension (often with a fresh end check),
            splices between packets, duplicated, swapped and dropped frames,
            moved conversations and timestamps; the chunk CRC is then
            recomputed (mostly), so the mutants get past the CRC check into
            the variant logic and the transfer analysis.

The protocols the plugin finds only with keys or Decode As get their
captures' server port moved to one of their own (PORTS) and the options
that decode it (decode_options()): netcode (its captures and the real
libraries' on port 40000, which chunk holds) on 41000 with the key logs of
every captures/*.keys, reliable-sim's on 50000, the plain yojimbo captures on
45000; the unmutated base must have frames of every protocol of
<build>/protocols.txt, or the run fails before mutating. With
--file-packets N the base holds the captures again and again (each copy in
conversations of its own) until it has N frames: a few small captures (the
p2frag ones, 894 frames) then make fewer, larger mutant files for the same
number of mutated packets, and tshark, whose start is most of the cost of a
small file, starts fewer times.

Each mutant file is decoded twice through scripts/chunk-tshark (plugin of
CHUNK_BUILD_DIR), with WIRESHARK_ABORT_ON_DISSECTOR_BUG=1 and
WIRESHARK_ABORT_ON_TOO_MANY_ITEMS=1: in one pass with -V (the whole tree
made and every label printed), and with -2 (first pass without a tree,
second with the tree made but not printed, the fields that the plugin fills
only when read named by an io,stat tap, and the packet list's columns
filled). A tree that is not printed costs a third of -V under ASan; the two
runs reach every line of the plugin that -V in both passes did, and the
column code besides (fuzz/README.md, "What each run checks").
If the plugin was built with ASan (cmake -DCHUNK_SANITIZE=ON), the ASan
runtime is LD_PRELOADed into the stock tshark. A run fails on a non-zero
exit, a sanitizer report, a dissector bug, a GLib critical, or a timeout;
the mutant is kept in --crash-dir with a shrunk copy (frames removed while it
still fails) for dissector/tests/hostile/regressions/.

  mutate-fuzz.py --work DIR --min-packets 20000       # ctest dissector.fuzz.mutate
  mutate-fuzz.py --work DIR --glob 'p2frag-*.pcap' --min-packets 10000 --file-packets 5000
                                                      # ... .mutate.p2frag
  mutate-fuzz.py --work DIR --hours 4 --start-seed 1000 --jobs 1   # long mode

Exit: 0 no failure, 1 failures (listed), 2 bad arguments or setup.
"""
import argparse
import concurrent.futures
import glob
import itertools
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import time
import zlib

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHUNK_TSHARK = os.path.join(REPO, "scripts", "chunk-tshark")

# docs/protocol.md, "Every packet": the protocol id seeds the CRC; the end check
# closes every packet.
PROTOCOL_ID = 0x11223344
END_CHECK = b"\xe2\xac\x08\x99"
CRC_PREFIX = zlib.crc32(struct.pack("<I", PROTOCOL_ID) + b"\0\0\0\0")
# docs/p2frag.md: fragment packets share the framing, told apart by the id.
P2FRAG_ID = 0x55667788
P2FRAG_PREFIX = zlib.crc32(struct.pack("<I", P2FRAG_ID) + b"\0\0\0\0")

BAD_STDERR = re.compile(r"ERROR: AddressSanitizer|runtime error:|Dissector bug|CRITICAL|"
                        r"LeakSanitizer|SUMMARY: UndefinedBehaviorSanitizer")


# ---- pcap ---------------------------------------------------------------------

def read_pcap(path):
    """Returns (global header bytes, [(sec, usec, frame)]) of a classic
    little-endian microsecond pcap (what mergecap -F pcap writes here)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24 or struct.unpack_from("<I", data, 0)[0] != 0xA1B2C3D4:
        raise ValueError("%s: not a little-endian microsecond pcap" % path)
    hdr = data[:24]
    recs = []
    off = 24
    while off + 16 <= len(data):
        sec, usec, incl, orig = struct.unpack_from("<IIII", data, off)
        off += 16
        recs.append((sec, usec, data[off:off + incl]))
        off += incl
    return hdr, recs


def write_pcap(path, hdr, recs):
    with open(path, "wb") as f:
        f.write(hdr)
        for sec, usec, frame in recs:
            f.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)))
            f.write(frame)


# ---- frames: find and replace the UDP payload ------------------------------------

def split_udp(frame):
    """Returns (prefix, payload, kind) for an Ethernet/IPv4|IPv6/UDP frame, or
    None. prefix holds the Ethernet, IP and UDP headers."""
    if len(frame) < 14:
        return None
    etype = struct.unpack_from("!H", frame, 12)[0]
    if etype == 0x0800 and len(frame) >= 34:
        ihl = (frame[14] & 0x0F) * 4
        if frame[23] != 17 or ihl < 20 or len(frame) < 14 + ihl + 8:
            return None
        u = 14 + ihl
        return frame[:u + 8], frame[u + 8:], 4
    if etype == 0x86DD and len(frame) >= 62:
        if frame[20] != 17:
            return None
        return frame[:62], frame[62:], 6
    return None


def _ip_checksum(hdr):
    s = sum(struct.unpack("!%dH" % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def join_udp(prefix, payload, kind, sport=None):
    """Frame with the headers' lengths (and IPv4 checksum) made to fit."""
    p = bytearray(prefix)
    ulen = 8 + len(payload)
    u = len(p) - 8
    struct.pack_into("!H", p, u + 4, ulen & 0xFFFF)
    struct.pack_into("!H", p, u + 6, 0)          # no UDP checksum
    if sport is not None:
        struct.pack_into("!H", p, u, sport)
    if kind == 4:
        ihl = u - 14
        struct.pack_into("!H", p, 16, (ihl + ulen) & 0xFFFF)
        struct.pack_into("!H", p, 24, 0)
        struct.pack_into("!H", p, 24, _ip_checksum(bytes(p[14:14 + ihl])))
    else:
        struct.pack_into("!H", p, 18, ulen & 0xFFFF)
    return bytes(p) + payload


def fix_crc(payload, prefix=CRC_PREFIX):
    if len(payload) < 4:
        return payload
    return struct.pack("<I", zlib.crc32(payload[4:], prefix)) + payload[4:]


def is_p2frag(payload):
    """The CRC implies the fragment protocol's id."""
    return len(payload) >= 4 and struct.unpack_from("<I", payload)[0] == zlib.crc32(payload[4:], P2FRAG_PREFIX)


# ---- the mutator ---------------------------------------------------------------

def set_bits(buf, bit, nbits, value):
    """Writes value into nbits of buf (LSB first stream) at stream bit `bit`
    (stream bit 0 = datagram bit 0), if the bytes exist."""
    for i in range(nbits):
        k = bit + i
        if k // 8 >= len(buf):
            return
        if (value >> i) & 1:
            buf[k // 8] |= 1 << (k % 8)
        else:
            buf[k // 8] &= ~(1 << (k % 8)) & 0xFF


def random_ack(rng):
    """A well-formed ack of either variant (before CRC)."""
    width = rng.choice((8, 5))
    maxs = 1 << width
    n = rng.choice((1, 2, 3, maxs, maxs - 1, rng.randint(1, maxs)))
    v = 1 | (rng.choice((0, 1, 65535, 32768, rng.getrandbits(16))) << 1) | ((n - 1) << 17)
    bits = rng.choice((0, (1 << n) - 1, rng.getrandbits(n)))
    v |= bits << (17 + width)
    nb = (17 + width + n + 7) // 8
    return b"\0\0\0\0" + v.to_bytes(nb, "little") + END_CHECK


NETGAME_ID = b"\x11\x22\x33\x44"


def mutate_netgame(rng, payload, others):
    """netgame (docs/netgame.md): no CRC; sequence, ack and ack bits to
    edge values, jumps of 2^31, a changed protocol id, cut or extended."""
    b = bytearray(payload)
    op = rng.randrange(6)
    if op <= 2 and len(b) >= 16:            # sequence, ack or ack bits
        off = 4 + 4 * op
        v = struct.unpack_from(">I", b, off)[0]
        v = rng.choice((0, 1, 31, 32, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, v + 1, v - 1, v ^ 0x80000000,
                        v + 33, rng.getrandbits(32))) & 0xFFFFFFFF
        struct.pack_into(">I", b, off, v)
    elif op == 3 and b:                     # another protocol id
        b[rng.randrange(min(4, len(b)))] = rng.getrandbits(8)
    elif op == 4:                           # cut: under 16 bytes, exactly 16, shorter payload
        b = b[:rng.choice((0, 3, 4, 15, 16, rng.randint(0, len(b))))]
    elif others:                            # splice with another packet
        o = rng.choice(others)
        cut = rng.randint(0, min(len(b), len(o)))
        b = b[:cut] + bytearray(o[cut:])
    return bytes(b)


def mutate_p2frag(rng, payload, others):
    """p2frag (docs/p2frag.md): sequence (stream bits 32..47, near the wrap
    and the 256-packet window), type (48..49), fragment id (50..57) and the
    count as sent (58..65, 0 = 256) to edge values, padding bits, data sizes
    around 1024, cut and extended, splices; the CRC is then fixed with the
    fragment protocol's id (mostly)."""
    b = bytearray(payload)
    op = rng.randrange(8)
    if op == 0:                             # sequence
        set_bits(b, 32, 16, rng.choice((0, 1, 255, 256, 257, 0x7FFF, 0x8000, 0xFFFF, 0xFF00,
                                        rng.getrandbits(16))))
    elif op == 1:                           # type
        set_bits(b, 48, 2, rng.getrandbits(2))
    elif op == 2:                           # fragment id
        set_bits(b, 50, 8, rng.choice((0, 1, 254, 255, rng.getrandbits(8))))
    elif op == 3:                           # count as sent
        set_bits(b, 58, 8, rng.choice((0, 1, 2, 254, 255, rng.getrandbits(8))))
    elif op == 4 and len(b) > 9:            # padding bits 66..71
        set_bits(b, 66, 6, rng.getrandbits(6) | 1)
    elif op == 5:                           # data of 0, 1, 1023, 1024, 1025 bytes or cut anywhere
        n = rng.choice((0, 1, 1023, 1024, 1025, rng.randint(0, len(b))))
        b = (b[:9 + n] + bytearray(max(0, 9 + n - len(b)))) if rng.random() < 0.7 else b[:n]
    elif op == 6 and others:                # splice with another packet
        o = rng.choice(others)
        cut = rng.randint(0, min(len(b), len(o)))
        b = b[:cut] + bytearray(o[cut:])
    else:                                   # bit flips, mostly in the header
        for _ in range(rng.randint(1, 4)):
            hi = min(len(b), 9) if rng.random() < 0.7 else len(b)
            if hi:
                i = rng.randrange(hi * 8)
                b[i // 8] ^= 1 << (i % 8)
    if rng.random() < 0.9:
        b = bytearray(fix_crc(bytes(b), P2FRAG_PREFIX))
    return bytes(b)


def mutate_payload(rng, payload, others):
    if payload[:4] == NETGAME_ID and rng.random() < 0.8:
        return mutate_netgame(rng, payload, others)
    if rng.random() < 0.85 and is_p2frag(payload):
        return mutate_p2frag(rng, payload, others)
    b = bytearray(payload)
    op = rng.randrange(9)
    if op == 0 and b:                       # bit flips, mostly in the header
        for _ in range(rng.randint(1, 4)):
            hi = min(len(b), 12) if rng.random() < 0.6 else len(b)
            i = rng.randrange(hi * 8)
            b[i // 8] ^= 1 << (i % 8)
    elif op == 1 and b:                     # interesting byte
        b[rng.randrange(len(b))] = rng.choice((0, 0xFF, 0x80, 0x7F, 0x01))
    elif op == 2:                           # chunk id (stream bits 33..48)
        set_bits(b, 33, 16, rng.choice((0, 1, 0x7FFF, 0x8000, 0xFFFF, rng.getrandbits(16))))
    elif op == 3:                           # slice id / slice count, either width
        w = rng.choice((8, 5))
        set_bits(b, 49 + rng.choice((0, w)), w, rng.getrandbits(w))
    elif op == 4:                           # truncate, maybe with a new end check
        b = b[:rng.randint(0, len(b))]
        if rng.random() < 0.5:
            b += END_CHECK
    elif op == 5:                           # extend
        b += bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 16)))
        if rng.random() < 0.5:
            b += END_CHECK
    elif op == 6 and others:                # splice two packets
        o = rng.choice(others)
        cut = rng.randint(0, min(len(b), len(o)))
        b = b[:cut] + bytearray(o[cut:])
    elif op == 7:                           # a random well-formed ack
        b = bytearray(random_ack(rng))
    else:                                   # all-ones / all-zero header bits
        set_bits(b, 32, rng.randint(1, 40), rng.choice((0, (1 << 40) - 1)))
    if rng.random() < 0.85:
        b = bytearray(fix_crc(bytes(b)))
    return bytes(b)


LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = (101, 228, 229)     # raw IP: LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6
ETH_HDR = {4: b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00",
           6: b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x86\xdd"}

# Server ports of the protocols found by Decode As in the base (the port a
# capture's 40000 or 50000 is moved to, or kept at), and the options.
PORTS = {"netcode": 41000, "reliable": 50000, "yojimbo": 45000}
KEEP = (40000, 30000)                # chunk's and netgame's ports


def capture_protocol(name):
    """The protocol whose server port a capture's traffic needs moved or
    kept (None: chunk, p2frag, netgame, found on their own ports)."""
    if name.startswith("real-yojimbo-") and name.endswith("-plain.pcap"):
        return "yojimbo"             # reliable and yojimbo on plain UDP, no netcode
    if name.startswith(("netcode-", "real-netcode-", "real-yojimbo-")):
        return "netcode"
    if name.startswith("reliable-"):
        return "reliable"
    return None


def decode_options(work, caps):
    """tshark options that decode the moved captures: Decode As on the
    PORTS, the key logs of the captures (one file), yojimbo's plain mode and
    the real soak's channels (docs/yojimbo.md)."""
    keys = os.path.join(work, "keys.log")
    with open(keys, "w") as out:
        for cap in caps:
            k = re.sub(r"(-plain)?\.pcap(ng)?$", ".keys", cap)
            if os.path.exists(k):
                with open(k) as f:
                    out.write(f.read().rstrip("\n") + "\n")
    os.chmod(keys, 0o644)
    return ["-d", "udp.port==%d,netcode" % PORTS["netcode"], "-d", "udp.port==%d,reliable" % PORTS["reliable"],
            "-d", "udp.port==%d,yojimbo" % PORTS["yojimbo"], "-o", "yojimbo.plain_reliable:TRUE",
            "-o", "netcode.keylog_file:" + keys,
            "-o", "yojimbo.channels:uu:8192,ro:10240:1024", "-o", "yojimbo.message_types:4",
            "-o", "yojimbo.schema_file:" + os.path.join(REPO, "docs", "yojimbo-example.schema")]


def load_capture(cap, work):
    """(link type, [(sec, usec, frame)]) of a capture, frames Ethernet: a
    pcapng (or any other format) through editcap -F pcap, raw IP given an
    Ethernet header. ValueError for another link type."""
    path = cap
    if not cap.endswith(".pcap"):
        path = os.path.join(work, "conv-" + os.path.basename(cap) + ".pcap")
        subprocess.run(["editcap", "-F", "pcap", cap, path], check=True, stdout=subprocess.DEVNULL)
    try:
        h, recs = read_pcap(path)
    except ValueError:
        path = os.path.join(work, "conv-" + os.path.basename(cap) + ".pcap")
        subprocess.run(["editcap", "-F", "pcap", cap, path], check=True, stdout=subprocess.DEVNULL)
        h, recs = read_pcap(path)
    link = struct.unpack_from("<I", h, 20)[0]
    if link == LINKTYPE_ETHERNET:
        return h, recs
    if link in LINKTYPE_RAW:
        out = []
        for sec, usec, frame in recs:
            v = frame[0] >> 4 if frame else 0
            if v in ETH_HDR:
                out.append((sec, usec, ETH_HDR[v] + frame))
        return h[:20] + struct.pack("<I", LINKTYPE_ETHERNET), out
    raise ValueError("%s: link type %d (neither Ethernet nor raw IP)" % (cap, link))


def build_base(caps, path, work=None, min_frames=0):
    """Concatenates the captures into one pcap, each in its own UDP
    conversations (ports other than 40000 and 30000 moved up by the
    capture's index, the server port of a protocol found by Decode As moved
    to or kept at its PORTS), so that one capture's decisions (protocol id,
    variant) and transfers do not leak into the next. With min_frames, the
    captures again and again (each copy in conversations of its own) until
    the base holds that many frames. Returns (header, records)."""
    hdr = None
    out = []
    work = work or os.path.dirname(path)
    reserved = set(KEEP) | set(PORTS.values())
    loaded = {}
    for k, cap in enumerate(itertools.cycle(caps)):
        if k and k % len(caps) == 0 and len(out) >= min_frames:
            break
        if cap not in loaded:
            loaded[cap] = load_capture(cap, work)
        h, recs = loaded[cap]
        if hdr is None:
            hdr = h
        proto = capture_protocol(os.path.basename(cap))
        server = {"netcode": 40000, "yojimbo": 40000, "reliable": 50000}.get(proto)
        for sec, usec, frame in recs:
            parts = split_udp(frame)
            if parts:
                prefix, payload, kind = parts
                f = bytearray(frame)
                u = len(prefix) - 8
                for off in (u, u + 2):
                    port = struct.unpack_from("!H", f, off)[0]
                    if proto and port == server:
                        new = PORTS[proto]
                    elif port in KEEP and not proto:
                        new = port
                    else:
                        new = (port + k + 1) & 0xFFFF
                        while new in reserved:
                            new = (new + 1000) & 0xFFFF
                    struct.pack_into("!H", f, off, new)
                frame = bytes(f)
            out.append((sec, usec, frame))
    write_pcap(path, hdr, out)
    return hdr, out


def crcfix_mutants(recs, seed):
    """Mutated copy of recs: ~half the chunk frames mutated, and the frame
    sequence perturbed, deterministic for a seed."""
    rng = random.Random(seed)
    payloads = [s[1] for s in (split_udp(f) for _, _, f in recs) if s]
    out = []
    i = 0
    while i < len(recs):
        sec, usec, frame = recs[i]
        r = rng.random()
        if r < 0.01:                        # drop
            i += 1
            continue
        if r < 0.03 and i + 1 < len(recs):  # swap with the next
            out.append(recs[i + 1])
            i += 1
        parts = split_udp(frame)
        if parts and rng.random() < 0.5:
            prefix, payload, kind = parts
            sport = None
            if rng.random() < 0.02:         # move to another conversation
                sport = rng.choice((40000, 40001, rng.randint(40001, 65535)))
            frame = join_udp(prefix, mutate_payload(rng, payload, payloads), kind, sport)
        if rng.random() < 0.03:             # timestamp jumps, backwards too
            sec = max(0, sec + rng.choice((-5, -1, 1, 10, 1000)))
        out.append((sec, usec, frame))
        if rng.random() < 0.02:             # duplicate
            out.append((sec, usec, frame))
        i += 1
    return out


# ---- running tshark ------------------------------------------------------------

def plugin_so(build):
    """The plugin in build tree build: <build>/<plugin-dir.txt>/chunk.so, the
    folder cmake derived from the Wireshark it built against
    (plugins/<major.minor>/epan); None without plugin-dir.txt."""
    try:
        with open(os.path.join(build, "plugin-dir.txt")) as f:
            return os.path.join(build, f.read().strip(), "chunk.so")
    except OSError:
        return None


def sanitizer_env(build_dir):
    """Environment for tshark: the aborts, and the ASan runtime preloaded when
    the plugin needs it. Returns (env, description)."""
    env = dict(os.environ)
    env["CHUNK_BUILD_DIR"] = build_dir
    env["WIRESHARK_ABORT_ON_DISSECTOR_BUG"] = "1"
    env["WIRESHARK_ABORT_ON_TOO_MANY_ITEMS"] = "1"
    env["LC_ALL"] = "C"
    so = plugin_so(build_dir)
    if not so or not os.path.exists(so):
        raise SystemExit("mutate-fuzz: no plugin at %s (build target chunk_plugin)" % so)
    undef = subprocess.run(["nm", "-D", "--undefined-only", so], stdout=subprocess.PIPE,
                           universal_newlines=True).stdout
    if "__asan_" not in undef and "__ubsan_" not in undef:
        return env, "plugin without sanitizers"
    needed = subprocess.run(["readelf", "-d", so], stdout=subprocess.PIPE,
                            universal_newlines=True).stdout
    m = re.search(r"\[(libasan\.so[.0-9]*)\]", needed)
    if m:
        lib = subprocess.run(["gcc", "-print-file-name=" + m.group(1)], stdout=subprocess.PIPE,
                             universal_newlines=True).stdout.strip()
    else:
        lib = subprocess.run(["clang", "-print-file-name=libclang_rt.asan-x86_64.so"],
                             stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    if not os.path.isabs(lib) or not os.path.exists(lib):
        raise SystemExit("mutate-fuzz: the plugin needs the ASan runtime, not found (%s)" % lib)
    env["LD_PRELOAD"] = lib
    # wmem's block allocators hand out pieces of big blocks, inside which
    # ASan sees no overflow: one malloc per allocation instead (as fuzzshark).
    env["WIRESHARK_DEBUG_WMEM_OVERRIDE"] = "simple"
    env["G_SLICE"] = "always-malloc"
    # tshark itself leaks at exit by design; sanitizer reports abort the run.
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1:allocator_may_return_null=0"
    env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
    return env, "ASan/UBSan plugin, %s preloaded" % lib


# The full name of every protocol of the plugin (plugin_fields()), for the
# base's report.
PROTOCOL_FULL_NAMES = []
# The plugin's protocols by filter name, and the io,stat tap of the -2 run
# and of the base's check (plugin_fields()).
PROTOCOL_NAMES = []
IO_STAT = []
# Fields the plugin fills only when something reads them: a visible tree
# (-V), or a filter that names them. au_expert_detail (<proto>.expert.detail:
# the detail text of an expert info) and fc_end_fields_wanted (<proto>.end,
# .src_end, .dst_end) ask proto_field_is_referenced. The -2 run's tap names
# them, so that its tree, which is not printed, still makes them.
REFERENCED_SUFFIXES = ("expert.detail", "end", "src_end", "dst_end")


def plugin_fields(build_dir, env):
    """The plugin's protocols (dissector/protocols.txt, as <build>/protocols.txt
    has them) by the full names tshark -G fields gives them, and the io,stat
    tap (IO_STAT): one column per protocol, one for the REFERENCED_SUFFIXES
    fields of the plugin's protocols."""
    try:
        with open(os.path.join(build_dir, "protocols.txt")) as f:
            names = [line.strip() for line in f if line.strip()]
    except OSError as e:
        raise SystemExit("mutate-fuzz: %s (configure the build tree)" % e)
    out = subprocess.run([CHUNK_TSHARK, "-G", "fields"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True).stdout
    full = {}
    fields = set()
    for line in out.splitlines():
        cols = line.split("\t")
        if len(cols) >= 3 and cols[0] == "P":
            full[cols[2]] = cols[1]
        elif len(cols) >= 3 and cols[0] == "F":
            fields.add(cols[2])
    missing = [n for n in names if n not in full]
    if missing:
        raise SystemExit("mutate-fuzz: the plugin does not register %s" % ", ".join(missing))
    referenced = [n + "." + s for n in names for s in REFERENCED_SUFFIXES if n + "." + s in fields]
    PROTOCOL_FULL_NAMES[:] = [full[n] for n in names]
    PROTOCOL_NAMES[:] = names
    IO_STAT[:] = ["-z", "io,stat,0," + ",".join(names + [" or ".join(referenced)])]


def io_stat_frames(out):
    """Frames per column of the io,stat tap (IO_STAT) in tshark's output: the
    row of its one interval, "| start <> end | frames | bytes | ...". None
    when the table is not there."""
    m = re.search(r"^\|[^|\n]*<>[^|\n]*((?:\|[^|\n]*)+)\|\s*$", out, re.M)
    if not m:
        return None
    cells = [c.strip() for c in m.group(1).split("|")[1:]]
    return [int(c) for c in cells[0::2]]


DECODE_OPTIONS = []    # decode_options()


def decode(path, two_pass, env, timeout):
    """Decodes path in tshark; returns (ok, frames of the plugin's protocols
    (counted in the -2 run; 0 for the other), message). One pass: -V, every item of the tree made and its label
    printed (BASE_CUSTOM formatters, appended texts, the detail fields).
    With -2: the first pass without a tree, as -V -2 has it; the second
    with a tree that is not printed (the io,stat tap IO_STAT makes it, and
    names the fields the plugin fills only when they are read) and the
    packet list's columns, which -V leaves empty. The two runs together
    reach every line of the plugin that -V in both did (fuzz/README.md,
    "Coverage"), for less than two thirds of the CPU."""
    args = [CHUNK_TSHARK, "-r", path] + DECODE_OPTIONS + (["-2"] + IO_STAT if two_pass else ["-V"])
    try:
        # The -V text (280 MB for all captures) is made and thrown away:
        # reading it cost Python 2.8 s of CPU a run; the -2 run counts frames.
        p = subprocess.run(args, env=env, stdout=subprocess.PIPE if two_pass else subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, 0, "timeout after %d s (hang?)" % timeout
    err = p.stderr.decode("utf-8", "replace")
    frames = 0
    if two_pass:
        per_column = io_stat_frames(p.stdout[-20000:].decode("utf-8", "replace"))
        frames = sum(per_column[:len(PROTOCOL_NAMES)]) if per_column else 0
    m = BAD_STDERR.search(err)
    if p.returncode != 0:
        # The head of a sanitizer report says what and where; else the tail.
        return False, frames, "exit %d: %s" % (
            p.returncode, err[m.start():m.start() + 2500] if m else err[-3000:])
    if m:
        return False, frames, "stderr: %s" % err[max(0, m.start() - 200):m.start() + 2000]
    if two_pass and per_column is None:
        return False, frames, "no io,stat table in the output"
    return True, frames, ""


def shrink(hdr, recs, two_pass, env, timeout, work, budget=60):
    """Removes frames while the failure persists (halves, then quarters...);
    returns the smallest failing list found within `budget` tshark runs."""
    path = os.path.join(work, "shrink.pcap")
    n = 2
    runs = 0
    while len(recs) >= 2 and runs < budget:
        size = max(1, len(recs) // n)
        removed = False
        for start in range(0, len(recs), size):
            cand = recs[:start] + recs[start + size:]
            if not cand:
                continue
            write_pcap(path, hdr, cand)
            runs += 1
            ok, _, _ = decode(path, two_pass, env, timeout)
            if not ok:
                recs = cand
                n = max(n - 1, 2)
                removed = True
                break
            if runs >= budget:
                break
        if not removed:
            if size == 1:
                break
            n = min(n * 2, len(recs))
    return recs


def main():
    ap = argparse.ArgumentParser(description="Mutation fuzzing of the chunk dissector in tshark.",
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True, help="scratch folder (mutants are deleted when they pass)")
    ap.add_argument("--captures", default=os.path.join(REPO, "captures"),
                    help="folder of .pcap files to mutate (default: captures/)")
    ap.add_argument("--glob", default="*.pcap*",
                    help="which captures of --captures (default *.pcap* (pcap and pcapng); p2frag-*.pcap: "
                         "the fragment protocol's)")
    ap.add_argument("--min-packets", type=int, default=0,
                    help="stop once this many mutated packets were decoded (default 20000 without --hours)")
    ap.add_argument("--file-packets", type=int, default=0,
                    help="repeat the captures in the base (each copy in its own conversations) until it holds "
                         "this many frames: fewer, larger mutant files, fewer tshark starts for the same packets")
    ap.add_argument("--hours", type=float, default=0, help="long mode: run this long")
    ap.add_argument("--start-seed", type=int, default=1)
    ap.add_argument("--rate", type=float, default=0.02, help="editcap -E error probability")
    ap.add_argument("--jobs", type=int, default=1, help="tshark runs in parallel")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per tshark run")
    ap.add_argument("--crash-dir", help="where failing mutants go (default WORK/crashes)")
    args = ap.parse_args()
    if args.min_packets < 0 or args.file_packets < 0 or args.hours < 0 or args.jobs < 1 or not 0 < args.rate <= 1:
        print("mutate-fuzz: bad arguments", file=sys.stderr)
        return 2
    if not args.min_packets and not args.hours:
        args.min_packets = 20000
    caps = sorted(glob.glob(os.path.join(args.captures, args.glob)))
    if not caps:
        print("mutate-fuzz: no %s in %s" % (args.glob, args.captures), file=sys.stderr)
        return 2
    for tool in ("editcap", "nm", "readelf"):
        if not shutil.which(tool):
            print("mutate-fuzz: %s not found" % tool, file=sys.stderr)
            return 2
    build_dir = os.environ.get("CHUNK_BUILD_DIR") or os.path.join(REPO, "build")
    env, desc = sanitizer_env(build_dir)
    plugin_fields(build_dir, env)
    os.makedirs(args.work, exist_ok=True)
    os.chmod(args.work, 0o755)
    crash_dir = args.crash_dir or os.path.join(args.work, "crashes")
    base = os.path.join(args.work, "base.pcap")
    try:
        hdr, recs = build_base(caps, base, args.work, args.file_packets)
    except (ValueError, subprocess.CalledProcessError) as e:
        print("mutate-fuzz: %s" % e, file=sys.stderr)
        return 2
    os.chmod(base, 0o644)
    DECODE_OPTIONS[:] = decode_options(args.work, caps)
    print("mutate-fuzz: %d captures, %d frames; %s; %s" % (
        len(caps), len(recs), desc, "until %d packets" % args.min_packets if args.min_packets
        else "for %.2f h" % args.hours))
    # Every protocol of the captures chosen must be decoded in the unmutated
    # base (all of the plugin's for the default glob): else the mutants would
    # never reach it.
    p = subprocess.run([CHUNK_TSHARK, "-r", base, "-q"] + IO_STAT + DECODE_OPTIONS, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=args.timeout)
    per_column = io_stat_frames(p.stdout.decode("utf-8", "replace")) or [0] * len(PROTOCOL_NAMES)
    counts = list(zip(PROTOCOL_FULL_NAMES, per_column))
    print("mutate-fuzz: the base decodes " + ", ".join("%d %s" % (n, t.split(" (")[0]) for t, n in counts))
    missing = [t for t, n in counts if n == 0]
    if p.returncode != 0 or (missing and args.glob == "*.pcap*"):
        print("mutate-fuzz: the unmutated base %s" % (
            "fails (exit %d): %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-2000:]) if p.returncode
            else "has no frame of %s: its captures are not decoded" % ", ".join(missing)), file=sys.stderr)
        return 1
    sys.stdout.flush()

    deadline = time.monotonic() + args.hours * 3600 if args.hours else None
    t0 = time.monotonic()
    totals = {"packets": 0, "chunk": 0, "runs": 0, "files": 0}
    failures = []
    seed = args.start_seed

    def one_file(kind, seed):
        path = os.path.join(args.work, "%s-%d.pcap" % (kind, seed))
        if kind == "editcap":
            subprocess.run(["editcap", "-F", "pcap", "-E", str(args.rate), "--seed", str(seed),
                            base, path], check=True, stdout=subprocess.DEVNULL)
            _, m = read_pcap(path)
        else:
            m = crcfix_mutants(recs, seed)
            write_pcap(path, hdr, m)
        os.chmod(path, 0o644)
        res = []
        for two in (False, True):
            ok, frames, msg = decode(path, two, env, args.timeout)
            res.append((two, ok, frames, msg))
        bad = [r for r in res if not r[1]]
        if bad:
            os.makedirs(crash_dir, exist_ok=True)
            keep = os.path.join(crash_dir, os.path.basename(path))
            shutil.copy(path, keep)
            two = bad[0][0]
            sdir = os.path.join(args.work, "shrink-%s-%d" % (kind, seed))
            os.makedirs(sdir, exist_ok=True)
            small = shrink(hdr, read_pcap(path)[1], two, env, args.timeout, sdir)
            shutil.rmtree(sdir, ignore_errors=True)
            small_path = keep.replace(".pcap", ".min.pcap")
            write_pcap(small_path, hdr, small)
            for r in bad:
                failures.append("%s (%s pass): %s\n    kept %s, shrunk to %d frames: %s" % (
                    os.path.basename(path), "two" if r[0] else "one", r[3], keep, len(small), small_path))
        else:
            os.unlink(path)
        return len(m), max(r[2] for r in res)

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        pending = set()
        while True:
            done_enough = (args.min_packets and totals["packets"] >= args.min_packets) or \
                          (deadline and time.monotonic() >= deadline)
            if not done_enough and len(pending) < args.jobs:
                # Work in flight counts toward the target, so no extra seeds start.
                inflight = len(pending) * len(recs)
                if not args.min_packets or totals["packets"] + inflight < args.min_packets:
                    for kind in ("editcap", "crcfix"):
                        pending.add(pool.submit(one_file, kind, seed))
                    seed += 1
                    continue
            if not pending:
                break
            done, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for f in done:
                n, chunk = f.result()
                totals["packets"] += n
                totals["chunk"] += chunk
                totals["files"] += 1
                totals["runs"] += 2
            if totals["files"] % 20 == 0:
                print("  %d files, %d mutated packets (%d decoded by the plugin), %d tshark runs, %.0f s, %d failures" % (
                    totals["files"], totals["packets"], totals["chunk"], totals["runs"],
                    time.monotonic() - t0, len(failures)))
                sys.stdout.flush()
    print("mutate-fuzz: seeds %d..%d: %d files, %d mutated packets (%d decoded by the plugin per pass), "
          "%d tshark runs (one pass -V, -2 with the tree unprinted) in %.0f s, %d failures" % (
              args.start_seed, seed - 1, totals["files"], totals["packets"], totals["chunk"],
              totals["runs"], time.monotonic() - t0, len(failures)))
    if totals["chunk"] == 0:
        failures.append("no frame decoded by the plugin: is it loaded?")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
