"""Helpers for the p2frag (fragment protocol) tests, on top of chunktest.py.

- read tshark's values of p2frag fields, frame by frame (-T fields), and the
  p2frag expert infos of every frame (PDML);
- encode fragment-protocol packets (a test-only encoder, checked against
  vectors-fragments.txt by p2frag/test_vectors.py);
- read the vector file.
"""
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import chunktest as ct  # noqa: E402

VECTORS = os.path.join(ct.REPO, "docs", "vectors", "vectors-fragments.txt")

# docs/p2frag.md, "Constants".
PROTOCOL_ID = 0x55667788
CHUNK_ID = ct.PROTOCOL_ID
FRAGMENT_SIZE = 1024

# Expert infos the receive rules raise (decoder); the analysis and the notes
# about the original receiver are apart.
RULE_EXPERTS = {
    "p2frag.crc32.bad", "p2frag.padding.nonzero", "p2frag.truncated", "p2frag.num_fragments.zero",
    "p2frag.fragment_id.out_of_range", "p2frag.fragment_bytes.out_of_range", "p2frag.fragment_bytes.short",
    "p2frag.num_fragments.conflict", "p2frag.fragment.duplicate", "p2frag.regular.too_long",
    "p2frag.sequence.too_old", "p2frag.end_check.bad", "p2frag.value.out_of_range",
    "p2frag.trailing_bytes", "p2frag.reassembled.sequence_mismatch", "p2frag.reassembled.crc_bad",
}
ANALYSIS_EXPERTS = {"p2frag.analysis.lost"}
NOTE_EXPERTS = {"p2frag.original.interleaved", "p2frag.original.sequence_256"}
NO_NOTES = {"p2frag.original_notes": "FALSE"}


def fields(pcap, names, prefs=None, extra=()):
    """Returns one dict per frame: name -> list of shown values ('' fields
    absent). Bytes are lower-case hex without separators."""
    args = ["-r", pcap, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=|"]
    for n in names:
        args += ["-e", n]
    out = ct.tshark(args + ct.pref_args(prefs) + list(extra))
    frames = []
    for line in out.split("\n")[:-1]:
        cols = line.split("\t")
        fr = {}
        for n, c in zip(names, cols):
            fr[n] = c.split("|") if c != "" else []
        frames.append(fr)
    return frames


def expert_counts(zex):
    """How many p2frag expert infos a -z expert text counts."""
    return sum(int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+\S+\s+P2frag\s", zex, re.M))


def experts(pcap, prefs=None, extra=()):
    """Returns, per frame, the set of p2frag expert info names and whether
    p2frag (and chunk) decoded it: [{"experts", "p2frag", "chunk"}]."""
    xml = ct.tshark(["-r", pcap, "-T", "pdml"] + ct.pref_args(prefs) + list(extra))
    out = []
    for pkt in ET.fromstring(xml).iter("packet"):
        names = set()
        protos = {p.get("name") for p in pkt.iter("proto")}
        for f in pkt.iter("field"):
            if f.get("name") == "_ws.expert":
                for sub in f.iter("field"):
                    n = sub.get("name") or ""
                    if n.startswith("p2frag."):
                        names.add(n)
        out.append({"experts": names, "p2frag": "p2frag" in protos, "chunk": "chunk" in protos})
    return out


_PDML = {}


def _walk(node, in_expert=False):
    """(field, in_expert) for every <field> below node, protocols' too, in
    document (tree) order; in_expert: below an _ws.expert field."""
    for child in node:
        if child.tag == "field":
            name = child.get("name")
            if name == "_ws.expert":
                yield from _walk(child, True)
                continue
            yield child, in_expert
        yield from _walk(child, in_expert)


_ENTITY = re.compile(r"&(#x[0-9a-fA-F]+|#[0-9]+|quot|amp|lt|gt|apos);")
_NAMED = {"quot": '"', "amp": "&", "lt": "<", "gt": ">", "apos": "'"}


def _entity(m):
    e = m.group(1)
    if e[0] == "#":
        return chr(int(e[2:], 16) if e[1] in "xX" else int(e[1:]))
    return _NAMED[e]


def _attr(line, key):
    """The unescaped value of the attribute key ('name="', ' show="') of
    one PDML element's line, None when it has none."""
    i = line.find(key)
    if i < 0:
        return None
    i += len(key)
    v = line[i:line.index('"', i)]
    return _ENTITY.sub(_entity, v) if "&" in v else v


def pdml_packets(text):
    """Per <packet> of tshark's PDML text: ([(field name or "", show or None,
    in_expert)] in document order, the set of proto names): what _walk()
    gives of an ElementTree of it, from the text's lines (tshark writes an
    element a line, with its attributes escaped) at a quarter of the CPU:
    p2frag.truth's PDML is ~90 MB a run."""
    out = []
    stack = []          # the open elements' in_expert
    fields = protos = None
    for line in text.split("\n"):
        s = line.lstrip()
        if s.startswith("</"):
            if s.startswith("</packet>"):
                out.append((fields, protos))
            elif s.startswith("</field>") or s.startswith("</proto>"):
                stack.pop()
        elif s.startswith("<field "):
            inside = stack[-1] if stack else False
            name = _attr(s, 'name="' if s.startswith('<field name="') else ' name="')
            if name == "_ws.expert":
                inside = True
            else:
                fields.append((name or "", _attr(s, ' show="'), inside))
            if not s.endswith("/>"):
                stack.append(inside)
        elif s.startswith("<proto "):
            protos.add(_attr(s, 'name="' if s.startswith('<proto name="') else ' name="'))
            if not s.endswith("/>"):
                stack.append(stack[-1] if stack else False)
        elif s.startswith("<packet>"):
            fields, protos, stack = [], set(), []
    return out


def decode(pcap, names, prefs=None, extra=()):
    """One PDML run for what fields() and experts() read in two: per frame
    {"fields": name -> the shown values, as fields() gives them (-T fields
    prints a value as PDML's show does; bytes may differ in their ':'
    separators: as_hex), "experts": the set of p2frag expert names,
    "n_experts": how many p2frag expert infos the tree has (a frame may have
    several of one kind), "all_experts": the names of every protocol's
    expert infos, "p2frag", "chunk": whether they decoded it}. A test's
    checks of one capture share its run: the text of each run is kept,
    by its arguments and the capture's time and size."""
    args = ["-r", pcap, "-T", "pdml"] + ct.pref_args(prefs) + list(extra)
    st = os.stat(pcap)
    key = (tuple(args), st.st_mtime_ns, st.st_size)
    if key not in _PDML:
        _PDML[key] = ct.tshark(args)
    want = set(names)
    out = []
    for pkt_fields, protos in pdml_packets(_PDML[key]):
        fr = {n: [] for n in names}
        ex, every, count = set(), set(), 0
        for n, show, in_expert in pkt_fields:
            if n in want:
                fr[n].append(show)
            if in_expert:
                every.add(n)
                if n.startswith("p2frag."):
                    ex.add(n)
                    count += 1
        out.append({"fields": fr, "experts": ex, "n_experts": count, "all_experts": every,
                    "p2frag": "p2frag" in protos, "chunk": "chunk" in protos})
    return out


def as_bool(v):
    """tshark prints booleans as 1/0 (4.0) or True/False (4.4 on)."""
    return {"1": True, "True": True, "0": False, "False": False}[v]


def as_hex(v):
    return v.replace(":", "").lower()


# ---- encoding (test-only) -------------------------------------------------------

def seal(body, protocol_id=PROTOCOL_ID):
    return ct.seal(body, protocol_id)


def _writer(seq, ptype, type_bits=2):
    w = ct.BitWriter()
    w.put(0, 32)
    w.put(seq, 16)
    w.put(ptype, type_bits)
    return w


def fragment_body(seq, fragment_id, num_fragments, data, pad=0, type_bits=2):
    """Datagram after the CRC field of a fragment (num_fragments as sent)."""
    w = _writer(seq, 0, type_bits)
    w.put(fragment_id, 8)
    w.put(num_fragments, 8)
    w.align(pad)
    w.raw(data)
    return w.tobytes()[4:]


def fragment(seq, fragment_id, num_fragments, data, protocol_id=PROTOCOL_ID, **kw):
    return seal(fragment_body(seq, fragment_id, num_fragments, data, **kw), protocol_id)


def _finish(w, pad=0, end_check=ct.END_CHECK):
    w.align(pad)
    return w.tobytes()[4:] + end_check


def packet_a(seq, a, b, c, pad=0, end_check=ct.END_CHECK, protocol_id=PROTOCOL_ID):
    w = _writer(seq, 1)
    w.put(a + 10, 5)
    w.put(b + 20, 6)
    w.put(c + 30, 6)
    return seal(_finish(w, pad, end_check), protocol_id)


def packet_b(seq, items, protocol_id=PROTOCOL_ID, raw_count=None):
    w = _writer(seq, 2)
    w.put(len(items) if raw_count is None else raw_count, 15)
    for v in items:
        w.put(v + 100, 8)
    return seal(_finish(w), protocol_id)


def packet_c(seq, pos, at_rest, vel=(0, 0, 0), protocol_id=PROTOCOL_ID):
    """pos, vel: IEEE-754 bit patterns (ints)."""
    w = _writer(seq, 3)
    for p in pos:
        w.put(p, 32)
    w.put(1 if at_rest else 0, 1)
    if not at_rest:
        for v in vel:
            w.put(v, 32)
    return seal(_finish(w), protocol_id)


def split(seq, whole, protocol_id=PROTOCOL_ID):
    """The fragments of `whole` (bytes), as the example sends them."""
    n = (len(whole) + FRAGMENT_SIZE - 1) // FRAGMENT_SIZE
    return [fragment(seq, i, n, whole[i * FRAGMENT_SIZE:(i + 1) * FRAGMENT_SIZE], protocol_id)
            for i in range(n)]


def big_b(seq, n_items, seed=1):
    """A regular B packet of n_items items (13 + n_items bytes)."""
    return packet_b(seq, [((i * 37 + seed) % 201) - 100 for i in range(n_items)])


def float_bits(f):
    return struct.unpack("<I", struct.pack("<f", f))[0]


def bits_float(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


# ---- vectors ---------------------------------------------------------------------

def read_vectors(path=VECTORS):
    """Returns (P, groups, W, E): P and E lines as dicts; groups as
    {"seq", "num", "whole", "source", "frags": [F dicts]}; W lines as dicts."""
    P, groups, W, E = [], [], [], []
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            if p[0] == "#" and len(p) > 5 and p[1] == "G" and p[2].isdigit():
                groups.append({"seq": int(p[2]), "num": int(p[3]), "whole": int(p[4]), "source": p[5],
                               "frags": []})
            elif p[0] == "P":
                kv = dict(x.split("=", 1) for x in p[4:])
                P.append({"seq": int(p[1]), "type": int(p[2]), "hex": p[3], "kv": kv})
            elif p[0] == "F":
                groups[-1]["frags"].append({"seq": int(p[1]), "id": int(p[2]), "num": int(p[3]),
                                            "bytes": int(p[4]), "hex": p[5]})
            elif p[0] == "W":
                kv = dict(x.split("=", 1) for x in p[6:] if "=" in x)
                W.append({"seq": int(p[1]), "num": int(p[2]), "whole": int(p[3]), "source": p[4],
                          "hex": p[5], "kv": kv})
            elif p[0] == "E":
                E.append({"tag": p[1], "seq": int(p[2]), "id": p[3], "num": p[4], "bytes": p[5],
                          "orig": int(p[6]), "hex": p[7]})
    return P, groups, W, E
