#!/usr/bin/env python3
"""Transfer analysis against every committed capture and its truth file.

    test_truth.py [NAME ...]      (default: every captures/*.truth.json)

For each capture (docs/truth.md describes the truth file):
- every slice frame of every chunk is in the right transfer; the first send has
  no chunk.analysis.resend, the k-th resend has resend == k and resend_of the
  frame before it; every ack frame of the chunk is in the same transfer;
- chunk.analysis.chunk_complete sits exactly on the truth's complete_frame;
- faults: each fault capture gets its diagnosis (flag bit) on the chunks it
  bears on, and no other problem; a capture without faults (lossy ones too)
  has no chunk.analysis.flags at all;
- a transfer that never completed has "incomplete" (0x1000) and a diagnosis
  on its last frame with -2;
- one pass and two passes agree on every backward-looking field, and so does
  the single pass with columns (which keeps no per-frame state);
- Export Objects writes every chunk whose slices are all in the capture, byte
  for byte the data chunk-sim sent (regenerated here from the run's seed).

The captures (decoded alike: no options) are read in one file
(chunktest.concat_captures: each capture's addresses its own, times only
forward), four tshark runs in all (-2, one pass, the columns, Export
Objects); each capture's frames are checked in its own numbering (frame
references and addresses mapped back). A capture whose checks fail there is
read alone, and its failures are those of its own file (and if it passes
alone, the merged file's failures stand, named so).
"""
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import chunktest as ct  # noqa: E402

CAPTURES = os.path.join(ct.REPO, "captures")

FIELDS = ["frame.number", "ip.src", "udp.srcport", "chunk.type", "chunk.chunk_id", "chunk.slice_id",
          "chunk.stream", "chunk.transfer", "chunk.analysis.resend", "chunk.analysis.resend_of",
          "chunk.analysis.flags", "chunk.analysis.chunk_complete", "chunk.analysis.transfer_time",
          "chunk.analysis.newly_acked", "chunk.analysis.newly_acked_slices",
          "chunk.analysis.duplicate_ack", "chunk.analysis.already_acked_in", "chunk.analysis.stale",
          "chunk.analysis.early", "chunk.analysis.stall_since", "chunk.analysis.regressed",
          "chunk.analysis.since_last_sent", "chunk.analysis.ack_delta", "chunk.reassembled.length",
          "_ws.col.Info",
          # forward-looking: only with -2
          "chunk.analysis.acked_in", "chunk.analysis.ack_time", "chunk.reassembled_in",
          "chunk.analysis.diagnosis"]
FORWARD = {"chunk.analysis.acked_in", "chunk.analysis.ack_time", "chunk.reassembled_in",
           "chunk.analysis.diagnosis"}

F_TOO_SOON, F_NOT_LISTENING, F_STALL = 0x1, 0x2, 0x20
F_SILENT, F_NOT_READING, F_INCOMPLETE = 0x40, 0x80, 0x1000

# What each fault must raise on a chunk it bears on, and all it may raise.
FAULT_FLAGS = {
    "drop_acks": (F_SILENT, F_SILENT | F_INCOMPLETE),
    "drop_slice": (F_STALL, F_STALL | F_INCOMPLETE),
    "receiver_never_pops": (F_NOT_READING, F_NOT_READING | F_INCOMPLETE),
    "sender_ignores_acks": (F_NOT_LISTENING, F_NOT_LISTENING),
    "no_resend_delay": (F_TOO_SOON, F_TOO_SOON),
}


def read_fields(pcap, two_pass):
    return {int(row["frame.number"]): row for row in ct.field_rows(pcap, FIELDS, two_pass)}


def own_numbering(rows, first, index):
    """rows (frame number -> row) of the frames first.. of capture index of
    concat_captures' file, as the capture alone numbers and addresses them:
    frames and frame references (FT_FRAMENUM) less first - 1, ip.src back."""
    out = {}
    for n, row in rows.items():
        if n < first:
            continue
        mapped = {}
        for f, v in row.items():
            if v and (f == "frame.number" or ct.field_types().get(f) == "FT_FRAMENUM"):
                v = ",".join(str(int(x) - first + 1) for x in v.split(","))
            elif v and f == "ip.src":
                v = ct.concat_address(v, index)
            mapped[f] = v
        out[n - first + 1] = mapped
    return out


# tshark's single pass with columns keeps no per-frame state (see
# dissector/common/single-pass.c): read the same fields as custom columns
# of a summary (-T tabs) and check them against -T fields.
COLUMN_FIELDS = ["chunk.stream", "chunk.transfer", "chunk.analysis.resend", "chunk.analysis.resend_of",
                 "chunk.analysis.flags", "chunk.analysis.newly_acked_slices",
                 "chunk.analysis.duplicate_ack", "chunk.analysis.chunk_complete",
                 "chunk.analysis.stall_since", "chunk.reassembled.length"]


def read_columns(pcap):
    fmt = ['"No.","%m"'] + ['"c%d","%%Cus:%s:0:R"' % (i, f) for i, f in enumerate(COLUMN_FIELDS)]
    rows = {}
    for line in ct.tshark(["-r", pcap, "-T", "tabs", "-o", "gui.column.format:" + ",".join(fmt)]).splitlines():
        parts = line.split("\t")
        row = dict(zip(COLUMN_FIELDS, [p.strip() for p in parts[1:]] +
                       [""] * (len(COLUMN_FIELDS) + 1 - len(parts))))
        rows[int(parts[0])] = {f: ct.field_value(f, v) for f, v in row.items()}
    return rows


def flags_of(row):
    return int(row["chunk.analysis.flags"], 16) if row["chunk.analysis.flags"] else 0


def splitmix64(seed):
    state = seed & 0xFFFFFFFFFFFFFFFF
    while True:
        state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        yield z ^ (z >> 31)


def sent_data(truth, flow_index, size):
    """The bytes chunk-sim generates for a flow (chunk-sim.c: splitmix64
    seeded with seed * 0x100000001b3 + 0xda7a0000 + flow)."""
    seed = truth["config"]["seed"] * 0x100000001B3 + 0xDA7A0000 + flow_index
    out = bytearray()
    for v in splitmix64(seed):
        if len(out) >= size:
            break
        out += v.to_bytes(8, "little")
    return bytes(out[:size])


def read_capture(pcap, out):
    """tshark's view of pcap: (-2 fields, one-pass fields, columns, the
    files Export Objects wrote into out)."""
    two = read_fields(pcap, True)
    one = read_fields(pcap, False)
    cols = read_columns(pcap)
    ct.tshark(["-r", pcap, "-q", "--export-objects", "chunk," + out])
    return two, one, cols, set(os.listdir(out))


def check_capture(name, fail, view=None, out=None):
    """The checks of one capture; view: read_capture()'s for it (the
    exported files in out), or else the capture is read alone."""
    pcap = os.path.join(CAPTURES, name + ".pcap")
    truth = json.load(open(os.path.join(CAPTURES, name + ".truth.json")))
    fail.check(truth["format"] == "chunkshark-truth" and truth["version"] == 1, name + ": truth format")
    if view is None:
        own = tempfile.mkdtemp(prefix="chunk-eo-")
        try:
            check_capture(name, fail, read_capture(pcap, own), own)
        finally:
            shutil.rmtree(own, ignore_errors=True)
        return
    two, one, cols, got = view
    capture_faults = [k for k, v in truth["faults"].items() if v not in (False, None)]

    # One pass and two agree on everything that looks back.
    for n in sorted(two):
        for f in FIELDS:
            a, b = one[n][f], two[n][f]
            if f == "chunk.analysis.flags":
                a = flags_of(one[n]) & ~F_INCOMPLETE
                b = flags_of(two[n]) & ~F_INCOMPLETE
            if f == "_ws.col.Info":
                b = b.replace(" [Incomplete]", "")
            if f in FORWARD:
                fail.check(f == "chunk.reassembled_in" or a == "",
                           "%s frame %d: forward-looking %s in one pass: %r" % (name, n, f, a))
                continue
            fail.check(a == b, "%s frame %d: %s one pass %r, two passes %r" % (name, n, f, a, b))

    # The Info column's marks say what the fields say.
    for n, row in sorted(two.items()):
        info, flags = row["_ws.col.Info"], flags_of(row)
        marks = {
            " [Resend %s]" % row["chunk.analysis.resend"]: row["chunk.analysis.resend"] != "",
            " [Stale]": row["chunk.analysis.stale"] != "",
            " [Duplicate ack]": row["chunk.analysis.duplicate_ack"] == "1",
            " [Chunk %s complete]" % row["chunk.analysis.chunk_complete"]: row["chunk.analysis.chunk_complete"] != "",
            " [Stall]": bool(flags & F_STALL),
            " [Silent receiver]": bool(flags & F_SILENT),
            " [Not reading]": bool(flags & F_NOT_READING),
            " [Not listening]": bool(flags & F_NOT_LISTENING),
            " [Too soon]": bool(flags & F_TOO_SOON),
            " [Incomplete]": bool(flags & F_INCOMPLETE),
        }
        for mark, want in marks.items():
            fail.check((mark in info) == want, "%s frame %d: Info %r, mark %r %s" %
                       (name, n, info, mark, "missing" if want else "unexpected"))
        fail.check((" [Already acked]" in info) ==
                   (row["chunk.analysis.already_acked_in"] != "" and row["chunk.analysis.stale"] == ""
                    and not flags & F_NOT_LISTENING), "%s frame %d: Info %r, [Already acked]" % (name, n, info))

    for n in sorted(one):
        for f in COLUMN_FIELDS:
            a = cols.get(n, {}).get(f, "")
            b = one[n][f]
            fail.check(a == b, "%s frame %d: %s summary column %r, -T fields %r" % (name, n, f, a, b))

    if not capture_faults:
        flagged = [n for n in two if two[n]["chunk.analysis.flags"]]
        fail.check(not flagged, "%s: no faults, but flags on frames %s" % (name, flagged[:10]))

    flow_flags = {}
    flow_frames = {}
    for c in truth["chunks"]:
        cap = c["capture"]
        tag = "%s %s chunk %d" % (name, c["flow"], c["chunk_id"])
        src_ip, src_port = c["sender"].split(":")
        frames = [f for fl in cap["slice_frames"] for f in fl] + list(cap["ack_frames"])
        if not frames:
            fail.check(not c["started"] or truth["capture"]["at"] != c["sender"], tag + ": started but no frames")
            continue
        transfers = {two[f]["chunk.transfer"] for f in frames}
        if not fail.check(len(transfers) == 1 and "" not in transfers,
                          "%s: frames in transfers %s" % (tag, sorted(transfers))):
            continue
        transfer = transfers.pop()
        mine = sorted(n for n in two if two[n]["chunk.transfer"] == transfer)
        flow_frames.setdefault(c["flow"], []).extend(mine)
        for sid, fl in enumerate(cap["slice_frames"]):
            for k, f in enumerate(fl):
                row = two[f]
                fail.check(row["chunk.type"] == "0" and row["chunk.chunk_id"] == str(c["chunk_id"])
                           and row["chunk.slice_id"] == str(sid) and row["ip.src"] == src_ip
                           and row["udp.srcport"] == src_port,
                           "%s: frame %d is not slice %d from %s" % (tag, f, sid, c["sender"]))
                want = "" if k == 0 else str(k)
                fail.check(row["chunk.analysis.resend"] == want,
                           "%s slice %d frame %d: resend %r, truth %r" % (tag, sid, f, row["chunk.analysis.resend"], want))
                want = "" if k == 0 else str(fl[k - 1])
                fail.check(row["chunk.analysis.resend_of"] == want,
                           "%s slice %d frame %d: resend_of %r, truth %r" % (tag, sid, f, row["chunk.analysis.resend_of"], want))
        for f in cap["ack_frames"]:
            fail.check(two[f]["chunk.type"] == "1" and two[f]["chunk.chunk_id"] == str(c["chunk_id"]),
                       "%s: frame %d is not its ack" % (tag, f))
        complete = [n for n in mine if two[n]["chunk.analysis.chunk_complete"]]
        want = [cap["complete_frame"]] if cap["complete_frame"] else []
        fail.check(complete == want, "%s: chunk_complete on %s, truth %s" % (tag, complete, want))
        if complete:
            fail.check(two[complete[0]]["chunk.analysis.transfer_time"] != "", tag + ": no transfer_time")

        flags = 0
        for n in mine:
            flags |= flags_of(two[n])
        flow_flags[c["flow"]] = flow_flags.get(c["flow"], 0) | flags
        if not complete:
            last = mine[-1]
            fail.check(flags_of(two[last]) & F_INCOMPLETE and two[last]["chunk.analysis.diagnosis"],
                       "%s: unfinished, but no incomplete flag/diagnosis on its last frame %d" % (tag, last))
        for fault in c["faults"]:
            need, allowed = FAULT_FLAGS[fault]
            fail.check(flags & ~allowed == 0, "%s: fault %s, unexpected flags 0x%x" % (tag, fault, flags & ~allowed))
            if fault == "no_resend_delay":
                continue   # judged per flow below: a chunk may have no resend at all
            if fault == "receiver_never_pops" and c["index"] == 0:
                continue   # the first chunk completes; the trouble starts with the next
            if fault == "sender_ignores_acks" and not c["receiver_completed"]:
                continue
            fail.check(flags & need, "%s: fault %s, flag 0x%x missing (flags 0x%x)" % (tag, fault, need, flags))
        if not c["faults"]:
            fail.check(flags == 0, "%s: no fault, flags 0x%x" % (tag, flags))
    for flow, flags in flow_flags.items():
        if "no_resend_delay" in capture_faults:
            fail.check(flags & F_TOO_SOON, "%s %s: no_resend_delay, no too-soon flag" % (name, flow))

    # Export Objects: every chunk whose slices are all captured, as sent
    # (got: the files of this capture's streams).
    streams = {"stream%s-" % row["chunk.stream"] for row in two.values() if row["chunk.stream"]}
    got = {g for g in got if g[:g.index("-") + 1] in streams}
    want = set()
    flows = [f["flow"] for f in truth["flows"]]
    for c in truth["chunks"]:
        cap = c["capture"]
        if not all(cap["slice_frames"]):
            continue
        first = cap["slice_frames"][0][0]
        fname = "stream%s-chunk%d-transfer%s.bin" % (two[first]["chunk.stream"], c["chunk_id"],
                                                      two[first]["chunk.transfer"])
        want.add(fname)
        if not fail.check(fname in got, "%s: %s not exported (got %s)" % (name, fname, sorted(got))):
            continue
        flow_chunks = [x for x in truth["chunks"] if x["flow"] == c["flow"]]
        offset = sum(x["size"] for x in flow_chunks if x["index"] < c["index"])
        total = sum(x["size"] for x in flow_chunks)
        data = sent_data(truth, flows.index(c["flow"]), total)[offset:offset + c["size"]]
        with open(os.path.join(out, fname), "rb") as f:
            fail.check(f.read() == data, "%s: %s differs from the data sent" % (name, fname))
    fail.check(got == want, "%s: exported %s, expected %s" % (name, sorted(got), sorted(want)))


def check_merged(names, fail, tmp):
    """The captures names read in one file (concat_captures); a capture that
    fails there is read alone."""
    paths = [os.path.join(CAPTURES, name + ".pcap") for name in names]
    merged = os.path.join(tmp, "truth.pcap")
    spans = ct.concat_captures(paths, merged)
    out = os.path.join(tmp, "objects")
    os.makedirs(out)
    two, one, cols, got = read_capture(merged, out)
    for index, (name, (_, first, last)) in enumerate(zip(names, spans)):
        def mine(rows):
            return own_numbering({n: r for n, r in rows.items() if first <= n <= last}, first, index)
        G = ct.Failures()
        check_capture(name, G, (mine(two), mine(one), mine(cols), got), out)
        if G.items:
            n = len(fail.items)
            check_capture(name, fail)
            if len(fail.items) == n:
                fail.items += ["%s (read with the others in one file, not alone): %s" % (name, m) for m in G.items]


def main():
    # The chunk analysis against chunk-sim's truth files (p2frag-sim's are
    # p2frag/test_truth.py's).
    names = ct.chunk_sim_truth_names(sys.argv[1:])
    fail = ct.Failures()
    fail.check(names, "no captures with truth files in " + CAPTURES)
    paths = [os.path.join(CAPTURES, name + ".pcap") for name in names]
    if len(names) > 1 and all(ct.concat_ok(p) for p in paths):
        with ct.scratch_dir() as tmp:
            check_merged(names, fail, tmp)
    else:
        for name in names:
            check_capture(name, fail)
    fail.finish("analysis truth (%d captures)" % len(names))


if __name__ == "__main__":
    main()
