#!/usr/bin/env python3
"""chunk.flow: chunk's Flow Graph (tshark -z flow,chunk,network) and
its Conversations and Endpoints tabs (-z conv,chunk, -z endpoints,chunk)
against the chunk-sim truth files:

- fault-drop-slice.pcap (slice 3 dropped 20 times): one arrow per frame;
  every slice from 10.0.0.1 to 10.0.0.2 saying "Slice <id> of 8" as often as
  the truth's sent_per_slice says it was sent, the n-th send "(resend n-1)";
  the three acks back, as hand-checked against the capture: 1/8 acked
  missing 1-7, 7/8 missing 3, and the same again marked [Duplicate ack];
  the stall on the 13th send of slice 3; one conversation row with the
  capture's slice and ack frames, the same counts as endpoints, and the
  row's filters (chunk.end, src_end, dst_end: Apply as Filter) matching them;
- duplex.pcap (a stream each way): two rows with the same two ends, each
  with its sender's slices and the acks it got, from the truth's counters
  (captured at a: a's slices sent and acks received, b's slices received
  there and a's acks sent).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import flowtest as ft  # noqa: E402

A, B = "10.0.0.1:50000", "10.0.0.2:40000"


def truth(name):
    with open(ft.capture(name + ".truth.json")) as f:
        return json.load(f)


def check_drop_slice(F):
    t = truth("fault-drop-slice")
    pcap = ft.capture("fault-drop-slice.pcap")
    arrows = ft.flow(pcap, "chunk")
    F.check(len(arrows) == t["capture"]["frames"], "drop-slice: %d arrows for %d frames"
            % (len(arrows), t["capture"]["frames"]))
    slices = [a for a in arrows if a["label"].startswith("Slice ")]
    acks = [a for a in arrows if a["label"].startswith("Ack ")]
    F.check(len(slices) == t["capture"]["slice_frames"] and len(acks) == t["capture"]["ack_frames"],
            "drop-slice: %d slice and %d ack arrows" % (len(slices), len(acks)))
    F.check(all(a["dir"] == "->" for a in slices) and all(a["dir"] == "<-" for a in acks),
            "drop-slice: slices go from 10.0.0.1, acks come back")
    sent = t["chunks"][0]["sent_per_slice"]
    seen = [0] * len(sent)
    for a in slices:
        sid = int(a["label"].split()[1])
        want = "Slice %d of %d%s, chunk 0" % (sid, len(sent), " (resend %d)" % seen[sid] if seen[sid] else "")
        F.check(a["comment"].startswith(want), "drop-slice %s: %r, want %r" % (a["time"], a["comment"], want))
        seen[sid] += 1
    F.check(seen == sent, "drop-slice: sends per slice %r, truth %r" % (seen, sent))
    F.check([a["comment"] for a in acks] == ["Ack 1/8, missing 1-7, chunk 0", "Ack 7/8, missing 3, chunk 0",
                                             "Ack 7/8, missing 3, chunk 0 [Duplicate ack]"],
            "drop-slice: acks %r" % [a["comment"] for a in acks])
    stalls = [a["comment"] for a in arrows if "[Stall]" in a["comment"]]
    F.check(stalls == ["Slice 3 of 8 (resend 12), chunk 0 [Stall]"], "drop-slice: stall %r" % stalls)

    n_s, n_a = t["capture"]["slice_frames"], t["capture"]["ack_frames"]
    rows = ft.conv(pcap, "chunk")
    F.check(rows == {(A, B): (n_a, n_s, n_s + n_a)}, "drop-slice: conversations %r" % rows)
    ft.row_filters(F, "drop-slice", pcap, "chunk", rows)
    eps = ft.endpoints(pcap, "chunk")
    F.check(eps == {A: (n_s + n_a, n_s, n_a), B: (n_s + n_a, n_a, n_s)}, "drop-slice: endpoints %r" % eps)


def check_duplex(F):
    t = truth("duplex")
    fl = {f["flow"]: f for f in t["flows"]}
    ab, ba = fl["a_to_b"], fl["b_to_a"]
    want = {(A, B): (ab["sender_counters"]["acks_received"], ab["sender_counters"]["slices_sent"],
                     ab["sender_counters"]["acks_received"] + ab["sender_counters"]["slices_sent"]),
            (B, A): (ba["receiver_counters"]["acks_sent"], ba["receiver_counters"]["slices_received"],
                     ba["receiver_counters"]["acks_sent"] + ba["receiver_counters"]["slices_received"])}
    rows = ft.conv(ft.capture("duplex.pcap"), "chunk")
    F.check(rows == want, "duplex: conversations %r, truth %r" % (rows, want))
    arrows = ft.flow(ft.capture("duplex.pcap"), "chunk")
    F.check(len(arrows) == t["capture"]["frames"] and sorted(set(a["conv"] for a in arrows)) == [0, 1],
            "duplex: %d arrows in streams %r" % (len(arrows), sorted(set(a["conv"] for a in arrows))))


def main():
    F = ft.Failures()
    check_drop_slice(F)
    check_duplex(F)
    F.finish("chunk.flow")


if __name__ == "__main__":
    main()
