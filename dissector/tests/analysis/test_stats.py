#!/usr/bin/env python3
"""The statistics against the truth files of every committed capture.

- `-z chunk,transfers`: one row per chunk with frames in the capture; its
  slice packets, resends, acks, first and last frame, size and status agree
  with the truth; a diagnosis line exactly for the transfers that did not
  complete (or whose sender never moved on), naming the fault's cause; none
  in captures without faults;
- `-z chunk,transfers_table` (the GUI's table) has the same numbers;
- `-z chunk,tree`: packet, slice, first-send, resend and ack counts.
The captures whose transfers all complete are read as one file in one run
(each capture's rows cut out and mapped back; the tree's counts against the
truths' sums, each capture alone where they differ); the others each alone.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import chunktest as ct  # noqa: E402

CAPTURES = os.path.join(ct.REPO, "captures")

# The plain-words cause each fault must produce for an unfinished transfer.
CAUSE = {
    "drop_acks": "Silent receiver",
    "receiver_never_pops": "Receiver not reading",
    "drop_slice": "Stalled",
    "sender_ignores_acks": "Sender not listening",
}

ROW = re.compile(r"^(\d+)\s+(\d+)\s+(\S+ -> \S+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)"
                 r"\s+(\d+)\s+(\d+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+(.*)$")
DIAG = re.compile(r"^Stream (\d+) transfer (\d+) \(chunk (\d+)\): (.*)\.$")


def stats(pcap):
    """The output of the three statistics, one tshark run (each parser
    below reads only its own table's lines)."""
    return ct.tshark(["-r", pcap, "-q", "-z", "chunk,transfers", "-z", "chunk,transfers_table",
                      "-z", "chunk,tree"])


def transfers_text(out):
    rows, diags = {}, {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            g = m.groups()
            rows[(int(g[0]), int(g[3]))] = {
                "transfer": int(g[1]), "direction": g[2], "size": g[4], "slices": int(g[5]),
                "pkts": int(g[6]), "resends": int(g[7]), "wasted": int(g[8]), "acks": int(g[9]),
                "first": int(g[10]), "last": int(g[11]), "duration": float(g[12]),
                "goodput": int(g[13]), "efficiency": float(g[14]), "status": g[15]}
        m = DIAG.match(line)
        if m:
            diags[int(m.group(2))] = m.group(4)
    return rows, diags


def transfers_table(text):
    """Rows of the generic table printer: 'a |b |c |'."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) >= 17 and cells[0].isdigit():
            out[int(cells[1])] = cells
    return out


def tree(text):
    """The counts of the stats tree: its lines from its "Topic / Item"
    heading (and the dashes under it) to the dashes that close it."""
    counts = {}
    inside = False
    for line in text.splitlines():
        if line.startswith("Topic / Item"):
            inside = True
            continue
        if inside and counts and line.startswith("-") and not line.strip("- "):
            break
        m = re.match(r"^(\s*)(\S.*?)\s{2,}(\d+)\s", line)
        if inside and m:
            counts.setdefault(m.group(2), int(m.group(3)))
    return counts


FRAME_TEXT = re.compile(r"\bframe (\d+)\b")


def cut(out, index, first, last):
    """(rows, diags, table) of the statistics of several captures read as
    one file (concat_captures), for capture index (frames first..last), as
    its own capture has them: its rows (their first frame among its frames)
    with frame numbers, streams, transfers and addresses mapped back."""
    rows, diags = transfers_text(out)
    table = transfers_table(out)
    mine = {k: r for k, r in rows.items() if first <= r["first"] <= last}
    if not mine:
        return {}, {}, {}
    s0 = min(k[0] for k in mine)
    t0 = min(r["transfer"] for r in mine.values())

    def frame(n):
        return int(n) - first + 1

    def text(t):
        return FRAME_TEXT.sub(lambda m: "frame %d" % frame(m.group(1)), t)

    def direction(d):
        return re.sub(r"\d+\.\d+\.\d+\.\d+", lambda m: ct.concat_address(m.group(0), index), d)

    out_rows, out_diags, out_table = {}, {}, {}
    for (stream, chunk), r in mine.items():
        tr = r["transfer"]
        r = dict(r, transfer=tr - t0, first=frame(r["first"]), last=frame(r["last"]), status=text(r["status"]),
                 direction=direction(r["direction"]))
        out_rows[(stream - s0, chunk)] = r
        if tr in diags:
            out_diags[tr - t0] = text(diags[tr])
        if tr in table:
            t = list(table[tr])
            t[0], t[1], t[2], t[3] = str(int(t[0]) - s0), str(tr - t0), direction(t[2]), text(t[3])
            t[12], t[13] = str(frame(t[12])), str(frame(t[13]))
            out_table[tr - t0] = t
    return out_rows, out_diags, out_table


def check(name, fail, shared=None):
    """The checks of capture name, on its own run or, shared: (output of
    the run of several captures read as one file, the index, first and
    last frame of this one), on its rows cut from that (the tree's counts,
    of all of them, are checked by the caller then). Returns the tree
    counts the truth wants."""
    pcap = os.path.join(CAPTURES, name + ".pcap")
    truth = json.load(open(os.path.join(CAPTURES, name + ".truth.json")))
    if shared:
        out = shared[0]
        rows, diags, table = cut(*shared)
    else:
        out = stats(pcap)
        rows, diags = transfers_text(out)
        table = transfers_table(out)
    streams = {}
    seen = set()
    n_slices = n_resends = n_acks = 0
    for c in truth["chunks"]:
        cap = c["capture"]
        slices = [f for fl in cap["slice_frames"] for f in fl]
        frames = slices + cap["ack_frames"]
        n_slices += len(slices)
        n_acks += len(cap["ack_frames"])
        resends = sum(max(0, len(fl) - 1) for fl in cap["slice_frames"])
        n_resends += resends
        if not slices:
            continue
        tag = "%s %s chunk %d" % (name, c["flow"], c["chunk_id"])
        sender = c["sender"]
        candidates = [k for k, r in rows.items() if k[1] == c["chunk_id"] and r["direction"].startswith(sender + " ")
                      and k not in seen]
        if not fail.check(len(candidates) == 1, "%s: %d rows (%s)" % (tag, len(candidates), sorted(rows))):
            continue
        key = candidates[0]
        seen.add(key)
        streams.setdefault(c["flow"], key[0])
        fail.check(streams[c["flow"]] == key[0], "%s: flow in streams %d and %d" % (tag, streams[c["flow"]], key[0]))
        r = rows[key]
        want = {"pkts": len(slices), "resends": resends, "acks": len(cap["ack_frames"]),
                "first": min(frames), "last": max(frames), "slices": c["num_slices"]}
        for k, v in want.items():
            fail.check(r[k] == v, "%s: %s %r, truth %r" % (tag, k, r[k], v))
        if cap["slice_frames"][-1]:
            fail.check(r["size"] == str(c["size"]), "%s: size %s, truth %d" % (tag, r["size"], c["size"]))
        if cap["complete_frame"]:
            fail.check(r["status"] == "all acked in frame %d" % cap["complete_frame"],
                       "%s: status %r" % (tag, r["status"]))
            fail.check(r["goodput"] > 0 and r["duration"] > 0, "%s: no goodput/duration" % tag)
        else:
            fail.check(r["status"].startswith(("stalled since frame", "incomplete, missing")),
                       "%s: status %r" % (tag, r["status"]))
            fail.check(r["goodput"] == 0, "%s: goodput for an unfinished transfer" % tag)
        fail.check(0 < r["efficiency"] <= 100, "%s: efficiency %r" % (tag, r["efficiency"]))
        d = diags.get(r["transfer"])
        stuck = not cap["complete_frame"] or "sender_ignores_acks" in c["faults"]
        if stuck:
            causes = [CAUSE[f] for f in c["faults"] if f in CAUSE]
            fail.check(d is not None and (not causes or any(d.startswith(x) for x in causes)),
                       "%s: diagnosis %r, want one of %s" % (tag, d, causes))
        else:
            fail.check(d is None, "%s: diagnosis for a finished transfer: %r" % (tag, d))
        t = table.get(r["transfer"])
        if fail.check(t is not None, "%s: not in the GUI table" % tag):
            # Status and Diagnosis right after Direction; duration in seconds.
            fail.check([int(t[i]) for i in (0, 5, 8, 9, 10, 11, 12, 13)] ==
                       [key[0], c["chunk_id"], r["pkts"], r["resends"], r["wasted"], r["acks"], r["first"], r["last"]]
                       and t[3] == r["status"] and abs(float(t[14]) - r["duration"]) < 0.0015,
                       "%s: GUI table row %s differs from the text table %s" % (tag, t, r))
    fail.check(set(rows) == seen, "%s: extra rows %s" % (name, sorted(set(rows) - seen)))
    if not any(truth["faults"].values()):
        fail.check(not diags, "%s: diagnoses without faults: %s" % (name, diags))

    want = {"Chunk packets": n_slices + n_acks, "Slices": n_slices, "Acks": n_acks,
            "First sends": n_slices - n_resends, "Resends": n_resends}
    if not shared:
        check_tree(fail, name, tree(out), want)
    return want


def check_tree(fail, name, counts, want):
    for k, v in want.items():
        if k != "Resends" or v:
            fail.check(counts.get(k) == v, "%s: tree %s = %r, truth %d" % (name, k, counts.get(k), v))


def check_shared(names, fail, tmp):
    """check() of names, captures read as one file in one run; where the
    tree's counts of all differ from the truths' sums, each capture alone
    names the one."""
    path = os.path.join(tmp, "stats.pcap")
    spans = ct.concat_captures([os.path.join(CAPTURES, n + ".pcap") for n in names], path)
    out = stats(path)
    total = {}
    for i, (name, (_, first, last)) in enumerate(zip(names, spans)):
        for k, v in check(name, fail, (out, i, first, last)).items():
            total[k] = total.get(k, 0) + v
    before = len(fail.items)
    check_tree(fail, ", ".join(names), tree(out), total)
    if len(fail.items) > before:
        for name in names:
            check(name, fail)


def main():
    # The chunk analysis against chunk-sim's truth files (p2frag-sim's are
    # p2frag/test_truth.py's).
    names = ct.chunk_sim_truth_names(sys.argv[1:])
    fail = ct.Failures()
    # The captures whose transfers all complete read as one file; those
    # with unfinished ones (whose status and diagnosis read the capture's
    # end) each alone.
    together = []
    for name in names:
        truth = json.load(open(os.path.join(CAPTURES, name + ".truth.json")))
        if all(c["capture"]["complete_frame"] and "sender_ignores_acks" not in c["faults"]
               for c in truth["chunks"]) and ct.concat_ok(os.path.join(CAPTURES, name + ".pcap")):
            together.append(name)
        else:
            check(name, fail)
    if len(together) > 1:
        with ct.scratch_dir() as tmp:
            check_shared(together, fail, tmp)
    elif together:
        check(together[0], fail)
    fail.finish("analysis stats (%d captures)" % len(names))


if __name__ == "__main__":
    main()
