#!/usr/bin/env python3
"""The yojimbo analysis against yojimbo-sim's truth files (docs/truth.md,
"yojimbo-sim"): every committed captures/yojimbo-*.pcap whose truth file
comes from yojimbo-sim, decoded with its key log and the channel
configuration and message type count the truth file records, two passes.

Captured at the client (a), so for every message and block the client sent
on a reliable-ordered channel:
  - the frames that carried it are exactly the truth's sends (time, reliable
    sequence, fragment), each with its send number;
  - the frame whose ack first confirmed it is the server packet that arrived
    when the truth says the client saw it acked (a block: per fragment, and
    the block's completion); never acked in the truth: never acked in the
    capture, and a diagnosis on its last send;
  - a fault's diagnosis names its cause: --drop-block-fragment N "sent but
    never acknowledged: fragment N" and "the peer kept acknowledging later
    packets"; --stop-acking-at "acknowledged nothing new";
the server's messages: every send the capture shows is one of the truth's
(its reliable sequence, arriving after it was sent), acked in the capture
when the truth has it acked, at most one link latency (plus jitter) before
the server saw it. The -z yojimbo,messages and -z yojimbo,blocks rows agree
with all of this. Unreliable channels: no analysis rows.

Captures that leave datagrams out (--capture-from, --capture-drop: the
acks and sends in them are not in the capture) have their own test,
test_gaps.py, and are not compared here.

usage: test_truth.py [TRUTH.json ...]   (default: every yojimbo-sim truth file of a whole capture)
"""
import glob
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y

SCHEMA = os.path.join(y.REPO, "docs", "yojimbo-example.schema")
EPS = 0.0005
ITEM = re.compile(r"^(?:Message (\d+) \(channel (\d+)\)|Block (\d+) fragment (\d+) of (\d+) \(channel (\d+)\))")


def prefs_of(truth, keys):
    cfg = truth["config"]
    chans = ",".join("%s:%d:%d:%d" % (ch["type"], ch["max_block_size"], ch["block_fragment_size"],
                                      ch["max_messages_per_packet"]) for ch in cfg["channels"])
    return ["-o", "netcode.keylog_file:" + keys, "-o", "yojimbo.channels:" + chans,
            "-o", "yojimbo.message_types:%d" % cfg["message_types"], "-o", "yojimbo.schema_file:" + SCHEMA, "-2"]


def decode(pcap, prefs):
    """(sends_of(), table_rows()) of pcap: one run prints the PDML of the
    yojimbo frames and then the tables (the taps see every frame; -Y only
    chooses the frames printed). The PDML holds the frame, IP and yojimbo
    layers alone (-J): what sends_of() reads, in a third of the text."""
    out = y.tshark(["-r", pcap, "-T", "pdml", "-J", "frame ip yojimbo", "-Y", "yojimbo",
                    "-z", "yojimbo,messages", "-z", "yojimbo,blocks"] + prefs).stdout
    end = out.index("</pdml>") + len("</pdml>")
    return sends_of(out[:end]), table_rows(out[end:])


def sends_of(out):
    """frame -> (time, src ip, reliable sequence, [item dicts]) from the PDML
    (out)."""
    frames = {}
    for pkt in ET.fromstring(out).iter("packet"):
        num = t = src = None
        for f in pkt.iter("field"):
            n = f.get("name")
            if n == "frame.number":
                num = int(f.get("show"))
            elif n == "frame.time_epoch":
                t = float(f.get("show"))
            elif n == "ip.src" and src is None:
                src = f.get("show")
        seq, items, counts = None, [], {}
        for e in pkt.iter("field"):
            # a channel entry: the subtree holding yojimbo.channel; its
            # messages' "sequence" body values (the sim's ids)
            chs = [f for f in e if f.get("name") == "yojimbo.channel"]
            if not chs:
                continue
            ch = int(chs[0].get("show"))
            for msg in e.iter("field"):
                if msg.get("name") == "" and (msg.get("show") or "").startswith("Message "):
                    vals = [v for v in msg.iter("field") if v.get("name") == "yojimbo.body.value"
                            and (v.get("showname") or "").startswith("sequence:")]
                    counts.setdefault(ch, []).append(int(vals[0].get("show")) if vals else None)
        for f in pkt.iter("field"):
            if f.get("name") == "yojimbo.analysis.reliable_sequence":
                seq = int(f.get("show"))
            m = ITEM.match(f.get("show") or "") if f.get("name") == "" else None
            if not m:
                continue
            it = {"kind": "message" if m.group(1) else "block",
                  "id": int(m.group(1) or m.group(3)),
                  "channel": int(m.group(2) or m.group(6)),
                  "fragment": int(m.group(4)) if m.group(3) else None,
                  "fragments": int(m.group(5)) if m.group(3) else None}
            for c in f:
                it[c.get("name").replace("yojimbo.analysis.", "")] = c.get("show")
            items.append(it)
        frames[num] = (t, src, seq, items, counts)
    return frames


def frame_cell(text):
    """A text table's frame cell: "-" for never (0 here)."""
    return 0 if text == "-" else int(text)


def table_rows(out):
    """The rows and diagnoses of the -z yojimbo,messages and yojimbo,blocks
    tables (out)."""
    msgs, blocks, diags = {}, {}, []
    part = None
    for line in out.splitlines():
        if line.startswith("yojimbo messages"):
            part = msgs
        elif line.startswith("yojimbo blocks"):
            part = blocks
        elif line.startswith("Connection ") and ": " in line:
            diags.append(line)
        elif part is not None and re.match(r"^\d+ ", line):
            w = line.split()
            part[(w[1], int(w[4]), int(w[5]))] = w
    return msgs, blocks, diags


CACHE = {}


def check(c, truth_path, truth=None):
    truth = truth or json.load(open(truth_path))
    base = truth_path[:-len(".truth.json")]
    name = os.path.basename(base)
    pcap, keys = base + ".pcap", base + ".keys"
    cfg = truth["config"]
    a, b = truth["endpoints"]["a"], truth["endpoints"]["b"]
    a_ip, b_ip = a.split(":")[0], b.split(":")[0]
    c.eq("%s captured at the client" % name, truth["capture"]["at"], "a")
    prefs = prefs_of(truth, keys)
    key = (pcap, tuple(prefs))
    if key not in CACHE:
        CACHE[key] = decode(pcap, prefs)
    frames, (msgs, blocks, diags) = CACHE[key]
    t_of = {n: v[0] for n, v in frames.items()}
    ro = [ch["type"] == "ro" for ch in cfg["channels"]]
    link_ab = [l for l in cfg["links"] if l["link"] == "a_to_b"][0]
    lat = link_ab["latency"] + link_ab["jitter"] + EPS

    # the dissector's sends, per (sender ip, kind, channel, id)
    seen = {}
    for n in sorted(frames):
        t, src, seq, items, _ = frames[n]
        for it in items:
            seen.setdefault((src, it["kind"], it["channel"], it["id"]), []).append((n, t, seq, it))
    c.eq("%s: the analysis found sends on reliable-ordered channels" % name, len(seen) > 0,
         any(ro[it["channel"]] for it in truth["items"]))
    for (src, kind, ch, _), _v in seen.items():
        c.true("%s: analysis only on reliable-ordered channels (channel %d)" % (name, ch), ro[ch])

    # unreliable channels: the client's messages (and inline blocks) per
    # packet, as the decode counts them
    uu = sorted((round(s["time"], 6), s["reliable_sequence"], it["channel"], it["id"])
                for it in truth["items"] if not ro[it["channel"]] and it["from"] == "client" for s in it["sends"])
    have_uu = sorted((round(t, 6), seq, ch, i) for (t, src, seq, _, counts) in frames.values() if src == a_ip
                     for ch, ids in counts.items() if not ro[ch] for i in ids)
    c.eq("%s: the client's unreliable messages (time, reliable sequence, channel, id)" % name, have_uu, uu)

    truth_keys = set()
    for item in truth["items"]:
        ch, iid, kind = item["channel"], item["id"], item["kind"]
        src = a_ip if item["from"] == "client" else b_ip
        what = "%s %s %s %d ch %d" % (name, item["from"], kind, iid, ch)
        got = seen.get((src, kind, ch, iid), [])
        if not ro[ch]:
            c.eq(what + ": no analysis on an unreliable channel", got, [])
            continue
        truth_keys.add((src, kind, ch, iid))
        direction = "%s -> %s" % (a, b) if item["from"] == "client" else "%s -> %s" % (b, a)
        row = (msgs if kind == "message" else blocks).get((direction.split()[0], ch, iid))
        if item["from"] == "client":
            # the frames that carried it: exactly the truth's sends
            want = sorted((round(s["time"], 6), s["reliable_sequence"], s.get("fragment")) for s in item["sends"])
            have = sorted((round(t, 6), seq, it["fragment"]) for _, t, seq, it in got)
            c.eq(what + ": sends (time, reliable sequence, fragment)", have, want)
            counts = {}
            for n, t, seq, it in got:
                counts[it["fragment"]] = counts.get(it["fragment"], 0) + 1
                c.eq(what + ": send number in frame %d" % n, it.get("send"), str(counts[it["fragment"]]))
            acks = {}
            for n, t, seq, it in got:
                if it.get("acked_in"):
                    f = it["fragment"]
                    acks[f] = min(acks.get(f, 1 << 30), int(it["acked_in"]))
            if kind == "message":
                ack_frame = acks.get(None)
                if item["acked"] is None:
                    c.eq(what + ": never acked", ack_frame, None)
                else:
                    c.true(what + ": acked in the frame of the truth's ack",
                           ack_frame is not None and abs(t_of.get(ack_frame, -1) - item["acked"]) < EPS
                           and frames[ack_frame][1] == b_ip, "frame %s, truth %s" % (ack_frame, item["acked"]))
                wasted = sum(1 for s in item["sends"] if item["acked"] is not None and s["time"] > item["acked"] + EPS)
                if row:
                    c.eq(what + ": messages row sends, first, last, acked in, wasted",
                         (int(row[7]), int(row[8]), int(row[9]), frame_cell(row[10]), int(row[12])),
                         (len(item["sends"]), got[0][0] if got else 0, got[-1][0] if got else 0,
                          ack_frame or 0, wasted))
                else:
                    c.true(what + ": a messages row", False)
            elif "fragments" not in item:
                c.true(what + ": the truth has the fragments of a block on a reliable-ordered channel", False)
            else:
                nfr = item["fragments"]
                for f in range(nfr):
                    ta = item["fragments_acked"][f]
                    fa = acks.get(f)
                    if ta is None:
                        c.eq(what + ": fragment %d never acked" % f, fa, None)
                    else:
                        c.true(what + ": fragment %d acked in the frame of the truth's ack" % f,
                               fa is not None and abs(t_of.get(fa, -1) - ta) < EPS, "frame %s, truth %s" % (fa, ta))
                n_acked = sum(1 for v in item["fragments_acked"] if v is not None)
                complete = None
                if item["acked"] is not None:
                    complete = [n for n in frames if abs(frames[n][0] - item["acked"]) < EPS and frames[n][1] == b_ip]
                if row:
                    c.eq(what + ": blocks row fragments, bytes, sends, resends, acked",
                         (int(row[7]), int(row[8]), int(row[9]), int(row[10]), row[12]),
                         (nfr, item["size"], len(item["sends"]), len(item["sends"]) - nfr, "%d/%d" % (n_acked, nfr)))
                    c.eq(what + ": blocks row first frame", int(row[13]), got[0][0] if got else 0)
                    if complete is None:
                        c.eq(what + ": blocks row never completed", row[14], "-")
                    else:
                        c.true(what + ": blocks row completed in the frame of the truth's ack",
                               int(row[14]) in complete, "row %s, truth %s" % (row[14], item["acked"]))
                else:
                    c.true(what + ": a blocks row", False)
            # never acknowledged: a diagnosis on the last send, naming the cause
            diag = [it.get("diagnosis") for _, _, _, it in got if it.get("diagnosis")]
            never = item["acked"] is None
            if never and got:
                c.eq(what + ": one diagnosis, on the last send", (len(diag), bool(got[-1][3].get("diagnosis"))),
                     (1, True))
                d = diag[0] if diag else ""
                faults = cfg["faults"]
                if kind == "block" and faults["drop_block_fragment"] is not None:
                    c.true(what + ": diagnosis names the lost fragment",
                           "sent but never acknowledged: fragment %d" % faults["drop_block_fragment"] in d
                           and "the peer kept acknowledging later packets" in d, d)
                if faults["stop_acking_at"] is not None and item["sends"][0]["time"] >= faults["stop_acking_at"]:
                    c.true(what + ": diagnosis names the receiver that stopped acking", "acknowledged nothing new" in d, d)
                c.true(what + ": diagnosis in the table", any(d and l.endswith(d) for l in diags), d)
            elif not never:
                c.true(what + ": no never-completed diagnosis", not any("never" in x for x in diag), diag)
        else:
            # the server's sends the capture shows: each one of the truth's
            by_seq = {}
            for s in item["sends"]:
                by_seq.setdefault((s["reliable_sequence"], s.get("fragment")), []).append(s["time"])
            for n, t, seq, it in got:
                ok = any(ts - EPS <= t <= ts + lat + link_ab["reorder_delay"] for ts in by_seq.get((seq, it["fragment"]), []))
                c.true(what + ": frame %d (seq %s) is one of the truth's sends" % (n, seq), ok)
            ack_frames = [int(it["acked_in"]) for _, _, _, it in got if it.get("acked_in")]
            if item["acked"] is not None and got and kind == "message":
                c.true(what + ": acked in the capture, before the server saw it",
                       bool(ack_frames) and t_of[min(ack_frames)] <= item["acked"] - link_ab["latency"] + link_ab["jitter"] + EPS
                       and frames[min(ack_frames)][1] == a_ip, "frames %s, truth %s" % (ack_frames, item["acked"]))
            if row and got:
                c.eq(what + ": messages row sends", int(row[7]) if kind == "message" else int(row[9]), len(got))
    extra = set(seen) - truth_keys
    c.eq("%s: nothing the truth does not hold" % name, sorted(extra), [])
    c.true("%s: every client item seen" % name,
           all((a_ip, it["kind"], it["channel"], it["id"]) in seen for it in truth["items"]
               if it["from"] == "client" and ro[it["channel"]] and it["sends"]))


class Quiet(y.Checks):
    def eq(self, what, got, want):
        self.n += 1
        self.failed += got != want

    def true(self, what, cond, detail=""):
        self.n += 1
        self.failed += not cond


def item(truth, **kw):
    return next(it for it in truth["items"] if all(it.get(k) == v for k, v in kw.items()))


def mutations():
    """(capture, what, change): each change makes the truth file wrong."""
    def send_seq(t):
        item(t, **{"from": "client", "kind": "message"})["sends"][0]["reliable_sequence"] += 1

    def drop_send(t):
        item(t, **{"from": "client", "kind": "message"})["sends"].pop()

    def ack_time(t):
        item(t, **{"from": "client", "kind": "message"})["acked"] += 0.01

    def never_acked(t):
        item(t, **{"from": "client", "kind": "message"})["acked"] = None

    def frag_unacked(t):
        item(t, kind="block")["fragments_acked"][1] = None

    def frag_ack_time(t):
        item(t, kind="block")["fragments_acked"][3] += 0.01

    def block_size(t):
        item(t, kind="block")["size"] -= 1

    def other_fragment(t):
        t["config"]["faults"]["drop_block_fragment"] = 1

    def server_seq(t):
        item(t, **{"from": "server", "kind": "message"})["sends"][0]["reliable_sequence"] += 3

    def never_acked_block(t):
        item(t, kind="block")["acked"] = None

    def uu_id(t):
        next(it for it in t["items"] if it["from"] == "client" and it["channel"] == 1)["id"] += 100

    def uu_channel_ro(t):
        t["config"]["channels"][1]["type"] = "ro"

    return [("yojimbo-messages", "a send's reliable sequence", send_seq),
            ("yojimbo-messages", "a send left out", drop_send),
            ("yojimbo-messages", "a message's ack time", ack_time),
            ("yojimbo-messages", "a message never acked", never_acked),
            ("yojimbo-block", "a fragment never acked", frag_unacked),
            ("yojimbo-block", "a fragment's ack time", frag_ack_time),
            ("yojimbo-block", "a block's size", block_size),
            ("yojimbo-block-lost-fragment", "the lost fragment", other_fragment),
            ("yojimbo-loss-dup", "a server send's sequence", server_seq),
            ("yojimbo-block", "a block never completed", never_acked_block),
            ("yojimbo-unreliable", "an unreliable message's id", uu_id),
            ("yojimbo-unreliable", "the unreliable channel's type", uu_channel_ro)]


def self_check(c):
    """The test must fail on a wrong truth file: each mutation is caught."""
    import copy
    for name, what, change in mutations():
        path = os.path.join(y.CAPTURES, name + ".truth.json")
        t = copy.deepcopy(json.load(open(path)))
        change(t)
        q = Quiet("mutated")
        check(q, path, t)
        c.true("a wrong truth file is caught: %s, %s" % (name, what), q.failed > 0)
        print("mutation %s, %s: %d of %d checks fail" % (name, what, q.failed, q.n))
    # and on a dissector that names the wrong cause: the diagnoses as they
    # were before they were judged from the first send
    old = "the capture ends 0.085 s after the last send, too soon to see its ack"
    for name in ("yojimbo-block-lost-fragment", "yojimbo-stops-acking"):
        path = os.path.join(y.CAPTURES, name + ".truth.json")
        key = [k for k in CACHE if k[0] == os.path.join(y.CAPTURES, name + ".pcap")][0]
        saved = CACHE[key]
        frames, (msgs, blocks, diags) = saved
        wrong = {}
        for n, (t, src, seq, items, counts) in frames.items():
            its = []
            for it in items:
                it = dict(it)
                if it.get("diagnosis"):
                    it["diagnosis"] = it["diagnosis"].split(": the ")[0] + ": " + old
                its.append(it)
            wrong[n] = (t, src, seq, its, counts)
        CACHE[key] = (wrong, (msgs, blocks, [d.split(": the ")[0] + ": " + old for d in diags]))
        q = Quiet("wrong cause")
        check(q, path)
        CACHE[key] = saved
        c.true("a wrong cause is caught: %s" % name, q.failed > 0)
        print("wrong cause in %s: %d of %d checks fail" % (name, q.failed, q.n))


def main():
    args = sys.argv[1:]
    if args and args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return
    paths = args or sorted(p for p in glob.glob(os.path.join(y.CAPTURES, "yojimbo-*.truth.json"))
                           if json.load(open(p)).get("generator") == "yojimbo-sim"
                           and not json.load(open(p))["capture"].get("not_captured"))
    c = y.Checks("yojimbo.truth")
    if not args:
        c.true("yojimbo-sim truth files found", len(paths) >= 6, paths)
    for p in paths:
        before = c.failed
        check(c, p)
        print("%s: %s" % (os.path.basename(p), "ok" if c.failed == before else "%d failed" % (c.failed - before)))
    if not args:
        self_check(c)
    c.done()


if __name__ == "__main__":
    main()
