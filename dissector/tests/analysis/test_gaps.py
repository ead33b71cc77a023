#!/usr/bin/env python3
"""analysis.gaps: the chunk analysis after datagrams the capture missed.
Every committed chunk-sim capture made with --capture-drop (a capture's
kernel drops: both directions, slices only, acks only), in one pass and with
-2:

- the gap is shown where it is: one "Packets not captured"
  (chunk.analysis.not_captured, a count of at least 1 and at most the
  datagrams left out) within the gap or the first frames after it, and
  nowhere else;
- no chunk warning or error but a slice's loss-related ones where the truth
  has network loss: no "chunk started before the previous was acked" for
  the chunk after a completing ack the capture missed, no "ack for a chunk
  never sent" for the acks of slices the capture missed;
- the analysis recovers: every chunk that starts after the gap completes
  (chunk.analysis.chunk_complete), as the truth's chunk list says.
Also p2frag: the p2frag-sim captures made so (none today) would be checked
by p2frag/test_truth.py; the chunk frames of p2frag-mixed are not gaps.
The captures are read as one file (each on addresses of its own, frame
numbers mapped back), in one -z expert run and one -T fields run a pass.
Before the fix, capture-drop-40 had one "started before the previous was
acked", capture-drop-40-ab five "ack for chunk ... no slice seen".
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import chunktest as ct  # noqa: E402
import gaptest as g  # noqa: E402

NOTE_WITHIN = 4     # the first frames after a gap, where its note must be


def check(fail, names, tmp):
    """The checks of the captures names, read as one file (concat_captures:
    each on addresses of its own, 1000 s apart) in one run of each kind a
    pass; frame numbers are mapped back to each capture's own. The
    warnings of -z expert are those of them all: where there are some, each
    capture alone names the one."""
    pcaps = [os.path.join(g.CAPTURES, name + ".pcap") for name in names]
    if len(pcaps) == 1:
        pcap, spans = pcaps[0], [(pcaps[0], 1, None)]
    else:
        pcap = os.path.join(tmp, "gaps-%d.pcap" % len(os.listdir(tmp)))
        spans = ct.concat_captures(pcaps, pcap)
    for two_pass in (False, True):
        args = ["-r", pcap] + (["-2"] if two_pass else [])
        warns_all = g.problems(g.experts(args, "chunk"))
        # The fields below of every frame, one run: {field: its cell}.
        fields = ("frame.number", "chunk.analysis.flags", "chunk.analysis.early", "chunk.analysis.not_captured",
                  "chunk.analysis.chunk_complete", "chunk.chunk_id", "chunk.type")
        out = ct.tshark(args + ["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"] +
                        [a for f in fields for a in ("-e", f)])
        every = [dict(zip(fields, line.split("\t"))) for line in out.splitlines()]
        named = False
        for name, (_, first, last) in zip(names, spans):
            frames = []
            for f in every[first - 1:last]:
                f = dict(f)
                f["frame.number"] = str(int(f["frame.number"]) - first + 1)
                frames.append(f)
            warns = warns_all
            if len(names) > 1 and warns_all:
                warns = g.problems(g.experts(["-r", os.path.join(g.CAPTURES, name + ".pcap")] +
                                             (["-2"] if two_pass else []), "chunk"))
            named = named or bool(warns)
            check_frames(fail, name, two_pass, warns, frames)
        fail.check(named or not warns_all, "%s%s read as one file: warnings %s, of none alone" % (
            ", ".join(names), " -2" if two_pass else "", warns_all))


def check_frames(fail, name, two_pass, warns, frames):
    """The checks of capture name (module doc) on its -z expert warnings
    (when it has no network loss: none) and the fields of its frames."""
    truth = g.truth(name)
    cap = truth["capture"]
    lossy = truth["config"].get("loss", 0) > 0 if isinstance(truth.get("config"), dict) else False
    what = name + (" -2" if two_pass else "")
    if not lossy:
        fail.check(not warns, "%s: warnings %s" % (what, warns))
    # early (chunk.analysis.early) and ack of an unknown chunk (flag 0x200)
    bad = [int(f["frame.number"]) for f in frames if f["chunk.analysis.early"] or
           any(int(v, 16) & 0x200 for v in f["chunk.analysis.flags"].split(",") if v)]
    fail.check(not bad, "%s: early or unknown-chunk frames %s" % (what, bad))
    notes = [(int(f["frame.number"]), f["chunk.analysis.not_captured"]) for f in frames
             if f["chunk.analysis.not_captured"]]
    for d in cap["capture_drops"]:
        before, after = d["last_frame_before"] or 0, d["first_frame_after"]
        fail.check(after is not None, "%s: the drop at %d ends within the capture" % (what, d["start"]))
        near = [n for n in notes if before < n[0] < (after or 1 << 30) + NOTE_WITHIN]
        fail.check(len(near) == 1, "%s: notes near the drop (frames %d-%s): %s" % (what, before + 1, after, near))
        for n in near:
            fail.check(0 < int(n[1]) <= d["dropped"], "%s: count %s of %d left out" % (what, n[1], d["dropped"]))
    fail.check(len(notes) == len(cap["capture_drops"]), "%s: notes %s" % (what, notes))
    # every chunk started after the gap completes
    done = {int(f["chunk.chunk_id"]) for f in frames if f["chunk.analysis.chunk_complete"] and f["chunk.chunk_id"]}
    last_gap = max(d["first_frame_after"] or 0 for d in cap["capture_drops"])
    sent = {int(f["chunk.chunk_id"]) for f in frames
            if int(f["frame.number"]) > last_gap and "0" in f["chunk.type"].split(",") and f["chunk.chunk_id"]}
    first_after = min(sent) if sent else None
    after = {c for c in sent if c != first_after}   # the first may have begun in the gap
    fail.check(len(after) >= 3 and after <= done, "%s: chunks started after the gap %s, complete %s"
               % (what, sorted(after), sorted(done)))
    print("%s: notes %s, %d warning rows, %d chunks started after the gap, all complete" %
          (what, notes, len(warns), len(after)))


def main():
    fail = ct.Failures()
    names = [n for n in g.gap_captures("chunk-sim") if os.path.exists(os.path.join(g.CAPTURES, n + ".pcap"))]
    names = names or []
    # chunk-sim lines name no program in captures.txt: they are the lines without one
    with open(os.path.join(g.CAPTURES, "captures.txt")) as f:
        for line in f:
            p = line.split()
            if len(p) > 1 and p[1].startswith("--") and "--capture-drop" in p and p[0] not in names:
                names.append(p[0])
    fail.check(len(names) >= 4, "only %d chunk-sim --capture-drop captures: %s" % (len(names), names))
    # Those with network loss (their warnings are not checked) apart from
    # the others: each group one file.
    lossy = [n for n in names if isinstance(g.truth(n).get("config"), dict) and g.truth(n)["config"].get("loss", 0) > 0]
    with ct.scratch_dir() as tmp:
        for group in ([n for n in names if n not in lossy], lossy):
            if group:
                check(fail, group, tmp)
    fail.finish("analysis.gaps")


if __name__ == "__main__":
    main()
