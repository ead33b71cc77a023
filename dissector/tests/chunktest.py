"""Helpers for the dissector's tests (and the analysis tests that reuse them).

- run tshark with the plugin from the build tree (scripts/chunk-tshark, as
  root too) with WIRESHARK_ABORT_ON_DISSECTOR_BUG=1 and TZ=UTC;
- write pcap files directly (Ethernet/IPv4/UDP), or from hex with text2pcap;
- read the chunk fields and decoder expert infos of every frame (PDML);
- encode chunk packets (a third, test-only encoder, checked against the
  spec's vectors by test_vectors.py) and read the vector files.

The build tree is CHUNK_BUILD_DIR (ctest sets it) or <repo>/build-dissector.
"""
import contextlib
import os
import struct
import subprocess
import tempfile
import xml.etree.ElementTree as ET
import zlib

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHUNK_TSHARK = os.path.join(REPO, "scripts", "chunk-tshark")
VECTORS = {256: os.path.join(REPO, "docs", "vectors", "vectors-256.txt"),
           32: os.path.join(REPO, "docs", "vectors", "vectors-32.txt")}

# docs/protocol.md, "Every packet" and "Slice (type 0)".
PROTOCOL_ID = 0x11223344
END_CHECK = b"\xe2\xac\x08\x99"
SLICE_SIZE = 1024

# The decoder's expert infos (chunk/dissect.c); analysis ones are not here.
DECODER_EXPERTS = {
    "chunk.crc32.bad", "chunk.protocol_id.other", "chunk.protocol_id.unconfirmed",
    "chunk.padding.nonzero", "chunk.end_check.bad", "chunk.truncated",
    "chunk.slice_id.out_of_range", "chunk.trailing_bytes", "chunk.slice_size.wrong",
    "chunk.value.out_of_range", "chunk.variant.unknown", "chunk.variant.ambiguous",
    "chunk.variant.mismatch",
}


def build_dir():
    return os.environ.get("CHUNK_BUILD_DIR") or os.path.join(REPO, "build-dissector")


def wireshark_minor():
    """major.minor of the Wireshark the build tree's plugin is for (its
    plugin-dir.txt: plugins/<major.minor>/epan)."""
    with open(os.path.join(build_dir(), "plugin-dir.txt")) as f:
        return f.read().strip().split("/")[1]


def plugin_protocols():
    """The plugin's protocols (dissector/protocols.txt, as the build tree
    <build>/protocols.txt has them), in registration order."""
    path = os.path.join(build_dir(), "protocols.txt")
    try:
        with open(path) as f:
            names = [line.strip() for line in f if line.strip()]
    except OSError:
        raise RuntimeError("no %s: configure the build tree (cmake -S . -B build)" % path)
    if not names:
        raise RuntimeError("%s lists no protocol" % path)
    return names


TABLE_COLUMNS = ("name", "endpoints", "simulator", "datagram", "fuzz", "flags", "docs")


def protocol_table():
    """The protocol table, dissector/protocols.txt (its header says what each
    column is): a dict per protocol, in registration order, with the columns
    of TABLE_COLUMNS ("-" as None; fuzz, flags and docs as lists)."""
    rows = []
    with open(os.path.join(REPO, "dissector", "protocols.txt")) as f:
        for n, line in enumerate(f, 1):
            cols = line.split("#", 1)[0].split()
            if not cols:
                continue
            if len(cols) != len(TABLE_COLUMNS):
                raise RuntimeError("dissector/protocols.txt line %d: %d columns, want %d (%s)"
                                   % (n, len(cols), len(TABLE_COLUMNS), " ".join(TABLE_COLUMNS)))
            row = {k: (None if v == "-" else v) for k, v in zip(TABLE_COLUMNS, cols)}
            for k in ("fuzz", "flags", "docs"):
                row[k] = row[k].split(",") if row[k] else []
            rows.append(row)
    return rows


def simulator_captures(simulator):
    """The captures of captures/captures.txt that simulator makes, in order
    (a line names its program unless it is chunk-sim)."""
    out = []
    with open(os.path.join(REPO, "captures", "captures.txt")) as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            program = words[1] if len(words) > 1 and words[1].endswith("-sim") else "chunk-sim"
            if program == simulator:
                out.append(words[0])
    return out


def chunk_captures():
    """The committed captures that carry chunk traffic: chunk-sim's, and
    p2frag-sim's that mix in chunks (its truth's capture.chunk_frames); the
    fragment and netgame captures have their own tests. Every simulator
    writes a truth file; a capture without one (the real libraries' and the
    interoperability captures, netcode's) is not chunk-sim's or p2frag-sim's."""
    import glob
    import json
    out = []
    for cap in sorted(glob.glob(os.path.join(REPO, "captures", "*.pcap"))):
        if not os.path.exists(cap[:-5] + ".truth.json"):
            continue   # foreign-traffic.pcap: no game traffic, its own test
        with open(cap[:-5] + ".truth.json") as f:
            truth = json.load(f)
        if truth.get("generator") == "chunk-sim" or truth.get("capture", {}).get("chunk_frames"):
            out.append(cap)
    return out


def chunk_sim_truth_names(argv):
    """The names (captures/NAME.pcap) given on the command line, or else
    every capture of chunk-sim's with a truth file that is not a gap
    capture (--capture-drop, --capture-from: the analysis.gaps test's)."""
    import glob
    import json
    if argv:
        return list(argv)
    names = []
    for path in sorted(glob.glob(os.path.join(REPO, "captures", "*.truth.json"))):
        with open(path) as f:
            truth = json.load(f)
        if truth.get("generator") == "chunk-sim" and not truth["capture"].get("not_captured"):
            names.append(os.path.basename(path)[:-len(".truth.json")])
    return names


def tshark(args, check=True):
    """Runs chunk-tshark with args; returns stdout (str). Raises on failure."""
    env = dict(os.environ)
    env.setdefault("CHUNK_BUILD_DIR", build_dir())
    env["WIRESHARK_ABORT_ON_DISSECTOR_BUG"] = "1"
    env["TZ"] = "UTC"
    env["LC_ALL"] = "C"
    p = subprocess.run([CHUNK_TSHARK] + list(args), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if check and p.returncode != 0:
        raise RuntimeError("tshark %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def split_table(out, title):
    """The output of a run with several -z taps, split: (the text table
    whose first line after its rule of '=' starts with title, as that tap
    alone prints it: from the newline before its first rule to the newline
    after its last; everything else, as the other taps alone print it).
    The table is "" when it is not there (and everything else out)."""
    lines = out.split("\n")
    for i in range(1, len(lines)):
        rule = lines[i - 1]
        if lines[i].startswith(title) and len(rule) >= 10 and rule == "=" * len(rule):
            for j in range(i + 1, len(lines)):
                if lines[j] == rule:
                    start = len("\n".join(lines[:i - 1]))
                    end = len("\n".join(lines[:j + 1])) + 1
                    return out[start:end], out[:start] + out[end:]
    return "", out


_FIELD_TYPES = None


def field_types():
    """{field name: type (FT_BOOLEAN, FT_DOUBLE, ...)} of the chunk plugin's
    fields, from tshark -G fields."""
    global _FIELD_TYPES
    if _FIELD_TYPES is None:
        rows = (line.split("\t") for line in tshark(["-G", "fields"]).splitlines())
        _FIELD_TYPES = {r[2]: r[3] for r in rows if len(r) > 3 and r[0] == "F" and r[2].startswith("chunk.")}
    return _FIELD_TYPES


def field_value(name, text, sep=","):
    """A -T fields cell (or custom column) of field name, as a value that
    means the same on every Wireshark: booleans as 1/0 (Wireshark 4.0 prints
    1/0 with -T fields, 4.4 and later True/False, custom columns True/False
    on all); occurrences joined by sep stay joined by sep."""
    if text and field_types().get(name) == "FT_BOOLEAN":
        return sep.join({"True": "1", "False": "0"}.get(v, v) for v in text.split(sep))
    return text


def field_rows(pcap, fields, two_pass=False):
    """tshark -T fields of fields on pcap (with -2 when two_pass): a dict a
    frame, field -> its cell as field_value() gives it ("" when absent),
    every occurrence joined by ","."""
    args = (["-2"] if two_pass else []) + ["-r", pcap, "-T", "fields", "-E", "separator=\t",
                                           "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in fields:
        args += ["-e", f]
    rows = []
    for line in tshark(args).splitlines():
        parts = line.split("\t")
        row = dict(zip(fields, parts + [""] * (len(fields) - len(parts))))
        rows.append({f: field_value(f, v) for f, v in row.items()})
    return rows


def same_value(name, got, want):
    """Whether -T fields text got of field name means the value want (text):
    doubles (FT_DOUBLE) to 12 significant digits, since Wireshark 4.6 prints
    them with up to 17 where 4.0 printed 15; everything else exactly."""
    if got != want and got and want and field_types().get(name) == "FT_DOUBLE":
        try:
            g, w = float(got), float(want)
        except ValueError:
            return False
        return abs(g - w) <= 1e-12 * max(abs(g), abs(w))
    return got == want


@contextlib.contextmanager
def scratch_dir():
    """A temporary folder for a test's captures, readable by everyone: as
    root, chunk-tshark runs tshark as nobody (it would copy each capture
    nobody cannot read)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        yield tmp


def pref_args(prefs):
    out = []
    for k, v in (prefs or {}).items():
        out += ["-o", "%s:%s" % (k, v)]
    return out


# ---- pcap writing -----------------------------------------------------------

def _ip_checksum(hdr):
    s = sum(struct.unpack("!10H", hdr))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def udp_frame(payload, sport=50000, dport=40000, src="10.0.0.1", dst="10.0.0.2"):
    """Returns an Ethernet/IPv4/UDP frame carrying payload (UDP checksum 0)."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    sa = bytes(int(x) for x in src.split("."))
    da = bytes(int(x) for x in dst.split("."))
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, sa, da)
    ip = ip[:10] + struct.pack("!H", _ip_checksum(ip)) + ip[12:]
    eth = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00"
    return eth + ip + udp


def write_pcap(path, packets):
    """Writes a classic pcap (Ethernet). packets: a list of payload bytes, or
    of dicts {payload, sport, dport, src, dst, t} (t in seconds, default i*10 ms)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(packets):
            if isinstance(p, (bytes, bytearray)):
                p = {"payload": bytes(p)}
            frame = udp_frame(p["payload"], p.get("sport", 50000), p.get("dport", 40000),
                              p.get("src", "10.0.0.1"), p.get("dst", "10.0.0.2"))
            t = p.get("t", i * 0.01)
            sec = int(t)
            usec = int(round((t - sec) * 1e6))
            f.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)))
            f.write(frame)
    os.chmod(path, 0o644)


def step_clock(src, dst, at, step_us, base_us=0):
    """Copies the classic pcap src (microsecond times) to dst with every
    frame from index at (0-based) on moved by step_us microseconds and every
    frame by base_us: a capture whose clock jumps."""
    data = open(src, "rb").read()
    out = bytearray(data[:24])
    off, i = 24, 0
    while off + 16 <= len(data):
        sec, usec, incl, orig = struct.unpack_from("<IIII", data, off)
        t = sec * 1000000 + usec + base_us + (step_us if i >= at else 0)
        out += struct.pack("<IIII", t // 1000000, t % 1000000, incl, orig) + data[off + 16:off + 16 + incl]
        off += 16 + incl
        i += 1
    with open(dst, "wb") as f:
        f.write(out)
    os.chmod(dst, 0o644)


def text2pcap(path, payloads, sport=50000, dport=40000):
    """Writes payloads (bytes) as a pcap with text2pcap -F pcap -u sport,dport."""
    lines = []
    for p in payloads:
        for off in range(0, len(p), 16):
            lines.append("%06x  %s" % (off, " ".join("%02x" % b for b in p[off:off + 16])))
        lines.append("")
    src = path + ".txt"
    with open(src, "w") as f:
        f.write("\n".join(lines) + "\n")
    p = subprocess.run(["text2pcap", "-q", "-F", "pcap", "-u", "%d,%d" % (sport, dport), src, path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise RuntimeError("text2pcap failed: " + p.stderr)
    os.remove(src)
    os.chmod(path, 0o644)


# ---- reading tshark's view -------------------------------------------------

def decode(pcap, prefs=None, extra=()):
    """Returns one dict per frame: {"fields": {name: [show, ...]},
    "values": {name: [raw hex value, ...]}, "experts": set of decoder expert
    names, "all_experts": every chunk.* expert name, "chunk": whether the
    chunk dissector decoded it}."""
    xml = tshark(["-r", pcap, "-T", "pdml"] + pref_args(prefs) + list(extra))
    frames = []
    root = ET.fromstring(xml)
    for pkt in root.iter("packet"):
        fr = {"fields": {}, "values": {}, "experts": set(), "all_experts": set()}
        chunk = [p for p in pkt.iter("proto") if p.get("name") == "chunk"]
        fr["chunk"] = bool(chunk)
        for proto in chunk:
            _collect(proto, fr)
        frames.append(fr)
    return frames


def info(pcap, prefs=None, extra=()):
    """Returns the Info column of every frame."""
    out = tshark(["-r", pcap, "-T", "fields", "-e", "_ws.col.Info"] + pref_args(prefs) + list(extra))
    return out.splitlines()


def pdml_fields(node, in_expert=False):
    """Yields (field, in_expert) for every <field> below the PDML element
    node, depth first in document order; in_expert: inside an _ws.expert
    field (which itself is not yielded)."""
    for f in node.findall("field"):
        if f.get("name") == "_ws.expert":
            yield from pdml_fields(f, True)
            continue
        yield f, in_expert
        yield from pdml_fields(f, in_expert)


def _collect(node, fr):
    for f, in_expert in pdml_fields(node):
        name = f.get("name")
        if in_expert and name.startswith("chunk."):
            fr["all_experts"].add(name)
            if name in DECODER_EXPERTS:
                fr["experts"].add(name)
        elif not in_expert:
            fr["fields"].setdefault(name, []).append(f.get("show"))
            fr["values"].setdefault(name, []).append(f.get("value"))


# ---- encoding (test-only) -----------------------------------------------------

def bits_required(lo, hi):
    return (hi - lo).bit_length()


class BitWriter:
    def __init__(self):
        self.bits = []

    def put(self, value, n):
        for i in range(n):
            self.bits.append((value >> i) & 1)

    def align(self, pad=0):
        n = (-len(self.bits)) % 8
        self.put(pad, n)

    def raw(self, data):
        self.align()
        for b in data:
            self.put(b, 8)

    def tobytes(self):
        assert len(self.bits) % 8 == 0
        out = bytearray()
        for i in range(0, len(self.bits), 8):
            out.append(sum(b << k for k, b in enumerate(self.bits[i:i + 8])))
        return bytes(out)


def crc_for(body, protocol_id=PROTOCOL_ID):
    """CRC-32 of LE32(protocol_id) || 0000 || body (body: datagram[4:])."""
    return zlib.crc32(struct.pack("<I", protocol_id) + b"\0\0\0\0" + body) & 0xFFFFFFFF


def seal(body, protocol_id=PROTOCOL_ID):
    """Prepends the CRC to body (everything after the CRC field)."""
    return struct.pack("<I", crc_for(body, protocol_id)) + body


def slice_body(chunk_id, slice_id, num_slices, data, max_slices=256, slice_size=SLICE_SIZE,
               pad=0, end_check=END_CHECK):
    """The datagram after its CRC field; pad sets the padding bits."""
    w = BitWriter()
    w.put(0, 32)  # the CRC's place, dropped below
    w.put(0, 1)
    w.put(chunk_id, 16)
    w.put(slice_id, bits_required(0, max_slices - 1))
    w.put(num_slices - 1, bits_required(1, max_slices))
    if slice_id == num_slices - 1:
        w.put(len(data) - 1, bits_required(1, slice_size))
    w.align(pad)
    w.raw(data)
    return w.tobytes()[4:] + end_check


def ack_body(chunk_id, acked, max_slices=256, pad=0, end_check=END_CHECK):
    w = BitWriter()
    w.put(0, 32)
    w.put(1, 1)
    w.put(chunk_id, 16)
    w.put(len(acked) - 1, bits_required(1, max_slices))
    for a in acked:
        w.put(1 if a else 0, 1)
    w.align(pad)
    return w.tobytes()[4:] + end_check


def vector_data(n, dseed):
    return bytes((i * 7 + dseed) % 256 for i in range(n))


def vector_lines(path):
    """The words of each line of a vector file, blank lines and comments
    left out."""
    with open(path) as f:
        for line in f:
            words = line.split()
            if words and not words[0].startswith("#"):
                yield words


def read_vectors(path):
    """Returns the lines of a vector file as dicts (docs/vectors/)."""
    out = []
    for parts in vector_lines(path):
        if parts[0] == "A":
            out.append({"kind": "A", "chunk_id": int(parts[1]), "num_slices": int(parts[2]),
                        "acked": [int(c) for c in parts[3]], "hex": parts[4]})
        elif parts[0] == "S":
            out.append({"kind": "S", "chunk_id": int(parts[1]), "slice_id": int(parts[2]),
                        "num_slices": int(parts[3]), "slice_bytes": int(parts[4]),
                        "dseed": int(parts[5]), "hex": parts[6]})
    return out


def ranges(indices):
    """[3,4,5,17] -> '3-5,17'."""
    out = []
    i = 0
    while i < len(indices):
        j = i
        while j + 1 < len(indices) and indices[j + 1] == indices[j] + 1:
            j += 1
        out.append(str(indices[i]) if i == j else "%d-%d" % (indices[i], indices[j]))
        i = j + 1
    return ",".join(out)


class Failures:
    """Collects failures so one run reports them all."""

    def __init__(self):
        self.items = []

    def check(self, cond, msg):
        if not cond:
            self.items.append(msg)
        return cond

    def finish(self, name):
        if self.items:
            for m in self.items[:50]:
                print("FAIL:", m)
            if len(self.items) > 50:
                print("... and %d more" % (len(self.items) - 50))
            print("%s: %d failure(s)" % (name, len(self.items)))
            raise SystemExit(1)
        print("%s: ok" % name)


def run_checks(name, *checks):
    """Runs each check(F, tmp) with one Failures and one scratch folder, then
    finishes under name (exit status 1 on any failure)."""
    F = Failures()
    with scratch_dir() as tmp:
        for check in checks:
            check(F, tmp)
    F.finish(name)


# ---- one tshark run for many captures -----------------------------------------

def _sum16(data):
    if len(data) % 2:
        data += b"\0"
    return sum(struct.unpack("!%dH" % (len(data) // 2), data))


def _fold(s):
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def _is_ipv4(frame):
    """Whether frame is an Ethernet frame of IPv4 (header and addresses there)."""
    return len(frame) >= 34 and frame[12:14] == b"\x08\x00" and frame[14] >> 4 == 4


def _checksum_update(ck, old, new):
    """A transport checksum ck after the 16-bit words old became new
    (RFC 1624: HC' = ~(~HC + ~m + m'))."""
    return (~_fold((~ck & 0xFFFF) + (~_fold(_sum16(old)) & 0xFFFF) + _fold(_sum16(new)))) & 0xFFFF


def _concat_mask(index):
    """The xor concat_captures gives capture index's IPv4 addresses: 0.h.l.0, h.l = index + 1."""
    n = index + 1
    return bytes((0, (n >> 8) & 255, n & 255, 0))


def _readdress(frame, mask, keep=None):
    """frame (Ethernet) with its IPv4 addresses xored with mask (4 bytes),
    but the address keep (4 bytes) when one of them is it, its IP checksum
    and, when set, the UDP/TCP checksum of a first fragment updated to match
    (RFC 1624); other frames unchanged."""
    if not _is_ipv4(frame):
        return frame
    src_mask = b"\0\0\0\0" if frame[26:30] == keep else mask
    dst_mask = b"\0\0\0\0" if frame[30:34] == keep else mask
    ihl = (frame[14] & 15) * 4
    out = bytearray(frame)
    old = bytes(out[26:34])
    new = bytes(a ^ b for a, b in zip(old, src_mask + dst_mask))
    out[26:34] = new
    out[24:26] = b"\0\0"
    out[24:26] = struct.pack("!H", (~_fold(_sum16(bytes(out[14:14 + ihl])))) & 0xFFFF)
    frag_off = struct.unpack("!H", frame[20:22])[0] & 0x1FFF
    proto = frame[23]
    at = {17: 6, 6: 16}.get(proto)
    if at is not None and frag_off == 0 and len(frame) >= 14 + ihl + at + 2:
        pos = 14 + ihl + at
        ck = struct.unpack("!H", frame[pos:pos + 2])[0]
        if ck or proto == 6:
            ck2 = _checksum_update(ck, old, new)
            if proto == 17 and ck2 == 0:
                ck2 = 0xFFFF
            out[pos:pos + 2] = struct.pack("!H", ck2)
    return bytes(out)


def concat_captures(paths, out, gap=1000.0, keep=None):
    """Writes the classic Ethernet pcaps paths one after the other into out,
    so that one tshark run reads them all as it would read each: capture i's
    IPv4 addresses are xored with 0.h.l.0 (h.l = i + 1: every capture's
    conversations are its own) and its times moved to start gap seconds
    after the previous capture's last frame (times only go forward).
    keep: an IPv4 address (dotted text) left as every capture has it, a
    server's that netcode's connect tokens name (moved, it would be "not
    among the token's server addresses"); the other ends still get each
    capture's own addresses, so conversations stay apart.
    Returns [(path, first frame number, last frame number)]."""
    kept = bytes(int(x) for x in keep.split(".")) if keep else None
    spans = []
    frame_no = 0
    end = None
    with open(out, "wb") as w:
        w.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        for i, path in enumerate(paths):
            data = open(path, "rb").read()
            magic, _, _, _, _, _, linktype = struct.unpack_from("<IHHiIII", data)
            if magic != 0xA1B2C3D4 or linktype != 1:
                raise RuntimeError("%s: not a classic microsecond Ethernet pcap" % path)
            mask = _concat_mask(i)
            off, first, shift = 24, frame_no + 1, None
            while off + 16 <= len(data):
                sec, usec, incl, orig = struct.unpack_from("<IIII", data, off)
                t = sec * 1000000 + usec
                if shift is None:
                    shift = 0 if end is None else end + int(gap * 1e6) - t
                t += shift
                end = t if end is None else max(end, t)
                frame = _readdress(data[off + 16:off + 16 + incl], mask, kept)
                w.write(struct.pack("<IIII", t // 1000000, t % 1000000, incl, orig) + frame)
                off += 16 + incl
                frame_no += 1
            spans.append((path, first, frame_no))
    os.chmod(out, 0o644)
    return spans


def concat_address(address, index):
    """The IPv4 address (dotted text) of concat_captures' capture index as
    that capture has it, from the one in the concatenated file (or the
    other way round: the xor is its own inverse)."""
    return ".".join(str(int(a) ^ m) for a, m in zip(address.split("."), _concat_mask(index)))


def capture_of_frame(spans, number):
    """The capture of concat_captures' spans that frame number came from."""
    for path, first, last in spans:
        if first <= number <= last:
            return os.path.basename(path)
    return None


def concat_ok(path):
    """Whether concat_captures takes path: a classic microsecond pcap of
    Ethernet frames."""
    with open(path, "rb") as f:
        head = f.read(24)
    return len(head) == 24 and struct.unpack("<I", head[:4])[0] == 0xA1B2C3D4 and \
        struct.unpack("<I", head[20:])[0] == 1


# ---- any capture made fit for concat_captures ----------------------------------

def ethernet_copy(src, dst, ports=None, keep_at=None):
    """Copies the classic microsecond pcap src, of Ethernet (linktype 1) or
    raw IPv4 frames (101: given an Ethernet header), to dst as Ethernet
    frames, with the UDP ports of ports ({old: new}) changed on both sides
    (and a set UDP checksum updated to match, RFC 1624): captures that
    decode as their own protocol on their own ports, to be concatenated by
    concat_captures; keep_at: the index concat_captures will give the copy,
    whose addresses then come out as src has them (the analyses that check
    them: netcode's token names its server's). Returns dst."""
    data = open(src, "rb").read()
    magic, _, _, _, _, _, linktype = struct.unpack_from("<IHHiIII", data)
    if magic != 0xA1B2C3D4 or linktype not in (1, 101):
        raise RuntimeError("%s: not a classic microsecond pcap of Ethernet or raw IPv4 frames" % src)
    ports = ports or {}
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
    off = 24
    while off + 16 <= len(data):
        sec, usec, incl, orig = struct.unpack_from("<IIII", data, off)
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if linktype == 101:
            frame = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00" + frame
            incl, orig = incl + 14, orig + 14
        frame = bytearray(frame)
        if _is_ipv4(frame) and frame[23] == 17 and struct.unpack("!H", frame[20:22])[0] & 0x1FFF == 0:
            pos = 14 + (frame[14] & 15) * 4
            if len(frame) >= pos + 8:
                old = bytes(frame[pos:pos + 4])
                sport, dport = struct.unpack("!HH", old)
                new = struct.pack("!HH", ports.get(sport, sport), ports.get(dport, dport))
                frame[pos:pos + 4] = new
                ck = struct.unpack("!H", frame[pos + 6:pos + 8])[0]
                if ck and new != old:
                    frame[pos + 6:pos + 8] = struct.pack("!H", _checksum_update(ck, old, new) or 0xFFFF)
        frame = bytes(frame)
        if keep_at is not None:
            frame = _readdress(frame, _concat_mask(keep_at))
        out += struct.pack("<IIII", sec, usec, incl, orig) + frame
    with open(dst, "wb") as f:
        f.write(out)
    os.chmod(dst, 0o644)
    return dst
