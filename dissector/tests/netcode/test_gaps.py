#!/usr/bin/env python3
"""netcode.gaps: a silence that is only datagrams the capture missed is not
a timeout.

- Every committed yojimbo-sim capture made with --capture-drop, decoded
  with its key log, in one pass and with -2: no netcode warning or error
  (before, the drops of 3 000 and 40 000 datagrams, 15 s and 200 s without
  a captured packet, raised "silence ... the server has timed out the
  connection"). Where the silence is longer than the token's timeout, each
  direction shows one "Packets not captured" (netcode.analysis.not_captured:
  the sequences the sender went on with, at most the datagrams left out) on
  its first packet after the gap; nowhere else.
- Crafted: a keep-alive 6 s after the last, its sequence 60 on (the sender
  sent through the silence), is "Packets not captured", not a timeout; one
  that follows its predecessor's sequence after the same silence is still
  the timeout (the sender was silent: the receiver dropped it).
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gaptest as g  # noqa: E402
import nctest as nc  # noqa: E402
from nctest import c2s, s2c, C2S_KEY, S2C_KEY  # noqa: E402

PROTOCOL_ID = "0x1122334455667788"
SERVER_IP = "10.0.0.2"   # the simulator's server, in every capture's tokens
TIMEOUT_S = 5          # the simulator's connect tokens
NOTE_WITHIN = 4        # the first frames after the gap, where the notes must be


def check_captures(F, names, tmp):
    """The captures of names, concatenated (each its own client address,
    the server's 10.0.0.2 kept, which the tokens name; 1000 s apart, far
    within the tokens' expiry) and
    decoded with all their key logs at once: 4 runs (one pass and two, with
    a tree and without) for all. Returns the notes expected over all."""
    paths = [os.path.join(g.CAPTURES, n + ".pcap") for n in names]
    pcap = os.path.join(tmp, "gaps.pcap")
    spans = nc.ct.concat_captures(paths, pcap, keep=SERVER_IP)
    keys = os.path.join(tmp, "gaps.keys")
    with open(keys, "w") as w:
        for n in names:
            with open(os.path.join(g.CAPTURES, n + ".keys")) as f:
                w.write(f.read().rstrip("\n") + "\n")
    os.chmod(keys, 0o644)
    args = ["-r", pcap, "-o", "netcode.keylog_file:" + keys, "-o", "netcode.protocol_ids:" + PROTOCOL_ID] + nc.CHUNK_OFF
    # Every frame's time, and the one-pass notes (as g.field_frames gives
    # them: frame, count, ip.src), from one run.
    times, notes1 = {}, []
    for line in nc.tshark(args + ["-T", "fields", "-e", "frame.number", "-e", "frame.time_epoch",
                                  "-e", "netcode.analysis.not_captured", "-e", "ip.src"]).splitlines():
        n, t, count, src = line.split("\t")
        times[int(n)] = float(t)
        if count:
            notes1.append((int(n), count, src))
    want_all = 0
    for two_pass in (False, True):
        a = args + (["-2"] if two_pass else [])
        warns = g.problems(g.experts(a, "netcode"))
        if warns:
            # -z expert does not say which capture: each alone names it
            for name, path in zip(names, paths):
                one = ["-r", path, "-o", "netcode.keylog_file:" + os.path.join(g.CAPTURES, name + ".keys")] + a[4:]
                w = g.problems(g.experts(one, "netcode"))
                F.check(w == [], "%s%s: netcode warnings %s" % (name, " -2" if two_pass else "", w))
            F.check(False, "%s: netcode warnings %s" % (", ".join(names) + (" -2" if two_pass else ""), warns))
        all_notes = g.field_frames(a, "netcode.analysis.not_captured", ["ip.src"]) if two_pass else notes1
        for i, (name, (_, first, last)) in enumerate(zip(names, spans)):
            what = name + (" -2" if two_pass else "")
            cap = g.truth(name)["capture"]
            # frame numbers and addresses as the capture alone has them
            notes = [(n - first + 1, count, src if src == SERVER_IP else nc.ct.concat_address(src, i))
                     for n, count, src in all_notes if first <= n <= last]
            at = {n - first + 1: t for n, t in times.items() if first <= n <= last}
            want = 0
            for d in cap["capture_drops"]:
                before, after = d["last_frame_before"], d["first_frame_after"]
                if not before or not after or cap.get("capture_from", 1) > 1:
                    continue    # no handshake, no token: no timeout is known
                if at[after] - at[before] <= TIMEOUT_S:
                    continue
                near = [n for n in notes if after <= n[0] < after + NOTE_WITHIN]
                srcs = sorted({n[2] for n in near})
                want += 2 if d["link"] == "both" else 1
                F.check(len(near) == (2 if d["link"] == "both" else 1) and len(srcs) == len(near),
                        "%s: notes after the drop at frame %d: %s" % (what, after, near))
                for n in near:
                    F.check(0 < int(n[1]) <= d["dropped"], "%s: not captured count %s of %d dropped" %
                            (what, n[1], d["dropped"]))
            F.check(len(notes) == want, "%s: %d 'Packets not captured' notes, want %d: %s" %
                    (what, len(notes), want, notes[:6]))
            print("%s: %d note(s)" % (what, len(notes)))
            if two_pass:
                want_all += want
    return want_all


def crafted(F, tmp):
    key = ["-o", "netcode.private_key:" + nc.PRIVATE_KEY.hex()]
    fr = nc.handshake()
    fr += [c2s(nc.payload(1, C2S_KEY), 0.10),          # 5
           s2c(nc.payload(1, S2C_KEY), 0.11),          # 6
           c2s(nc.keep_alive(61, C2S_KEY), 6.10),      # 7: 6 s later, 59 sequences on: not captured
           s2c(nc.keep_alive(2, S2C_KEY), 6.20)]       # 8: 6 s later, the next sequence: timed out
    pcap = os.path.join(tmp, "silences.pcap")
    nc.write_pcap(pcap, fr)
    got = nc.decode(pcap, key)
    F.check("netcode.analysis.not_captured.expert" in got[6]["experts"] and
            "netcode.timed_out" not in got[6]["experts"],
            "crafted frame 7: experts %s" % sorted(got[6]["experts"]))
    F.check(got[6]["fields"].get("netcode.analysis.not_captured") == ["59"],
            "crafted frame 7: not captured %r" % got[6]["fields"].get("netcode.analysis.not_captured"))
    F.check("netcode.sequence.gap" not in got[6]["experts"], "crafted frame 7: also a sequence gap")
    F.check("netcode.timed_out" in got[7]["experts"] and
            "netcode.analysis.not_captured.expert" not in got[7]["experts"],
            "crafted frame 8: experts %s" % sorted(got[7]["experts"]))


def main():
    F = nc.Failures()
    names = g.gap_captures("yojimbo-sim")
    F.check(len(names) >= 6, "only %d yojimbo-sim --capture-drop captures" % len(names))
    tmp = tempfile.mkdtemp()
    os.chmod(tmp, 0o755)
    noted = check_captures(F, names, tmp)
    F.check(noted >= 4, "only %d notes expected over all captures: no long silence among them" % noted)
    crafted(F, tmp)
    F.finish("netcode.gaps")


if __name__ == "__main__":
    main()
