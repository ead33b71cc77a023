#!/usr/bin/env python3
"""The library's own view against the dissector's: for each real capture,
captures/real-yojimbo-NAME-library.txt lists what yojimbo itself read from
every connection packet a side received (reliable sequence, channel entries,
message ids and types, block fragment ids, counts, sizes and fragment 0's
type), logged inside the library; captures/real-yojimbo-NAME-plain.pcap holds
the same reliable packets as UDP datagrams. The dissector (yojimbo.plain_reliable, under
the soak configuration and the example schema) must decode each packet to the
same values, with no malformed packet and no undecoded byte."""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y

SOAK = ["-o", "yojimbo.channels:uu:8192,ro:10240:1024", "-o", "yojimbo.message_types:4",
        "-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")]
FIELDS = ["udp.dstport", "yojimbo.analysis.reliable_sequence", "yojimbo.channel_entries", "yojimbo.channel",
          "yojimbo.message_id", "yojimbo.message_type", "yojimbo.block.message_id",
          "yojimbo.block.fragment_id", "yojimbo.block.num_fragments", "yojimbo.block.fragment_size",
          "_ws.expert.severity", "yojimbo.undecoded"]


def library(path):
    """{direction: {seq: flattened values}} from the library's log; the
    direction is 'to-server' or 'to-client'."""
    out = collections.defaultdict(dict)
    for line in open(path):
        parts = line.split()
        d, seq, entries = parts[0], int(parts[1][4:]), int(parts[2][8:])
        chans, ids, types, bids, fids, nfs, sizes = [], [], [], [], [], [], []
        for e in parts[3:]:
            f = e.split(":")
            chans.append(int(f[0][2:]))
            if f[1] == "msgs":
                for m in f[2:]:
                    i, t = m.split("/")
                    ids.append(int(i))
                mtypes = [int(m.split("/")[1]) for m in f[2:]]
                types.extend(mtypes)
            else:
                bids.append(int(f[2]))
                fid, nf = f[3].split("/")
                fids.append(int(fid))
                nfs.append(int(nf))
                sizes.append(int(f[4]))
                if int(fid) == 0:
                    types.append(int(f[5]))
        out[d][seq] = (entries, chans, ids, types, bids, fids, nfs, sizes)
    return out


def ints(s):
    return [int(x) for x in s.split(",")] if s else []


def main():
    c = y.Checks("yojimbo.library")
    for name in ("clean", "loss"):
        base = os.path.join(y.CAPTURES, "real-yojimbo-" + name)
        lib = library(base + "-library.txt")
        c.eq(name + " directions in the library log", sorted(lib), ["to-client", "to-server"])
        rows = y.fields(base + "-plain.pcap", FIELDS, ["-d", "udp.port==40000,yojimbo", "-o", "yojimbo.plain_reliable:TRUE"] + SOAK, decode=False)
        matched = 0
        missing = 0
        for r in rows:
            d = "to-server" if r[0] == "40000" else "to-client"
            # notes (resends) are expected; no warning (0x600000) or error (0x800000)
            sev = [int(x) for x in r[10].split(",")] if r[10] else []
            c.true(name + " no expert error/warning or undecoded bytes", all(v < 0x600000 for v in sev) and r[11] == "",
                   "packet %s" % r)
            seq = int(r[1])
            want = lib[d].get(seq)
            if want is None:
                missing += 1    # a duplicate reliable dropped before yojimbo read it
                continue
            got = (int(r[2]), ints(r[3]), ints(r[4]), ints(r[5]), ints(r[6]), ints(r[7]), ints(r[8]), ints(r[9]))
            # num_fragments/fragment_id of a one-fragment block are shown (not on the wire)
            c.eq("%s %s seq %d" % (name, d, seq), got, want)
            matched += 1
        n_lib = sum(len(v) for v in lib.values())
        # The real capture (encrypted, on the wire before the simulator's
        # loss): netcode decrypts with the private key, reliable reassembles,
        # and every packet the library also read decodes to what it read.
        rows = y.fields(base + ".pcapng", FIELDS, ["-o", "netcode.private_key:" + "00" * 32] + SOAK, decode=False)
        wire = 0
        for r in rows:
            if r[2] == "":
                continue    # not a connection packet (netcode control packets, reliable fragments on the way)
            d = "to-server" if r[0] == "40771" else "to-client"
            sev = [int(x) for x in r[10].split(",")] if r[10] else []
            c.true(name + " wire: no yojimbo error/warning or undecoded bytes", r[11] == "", "packet %s" % r)
            want = lib[d].get(int(r[1]))
            if want is None:
                continue    # lost on the way (the simulator dropped it after the send)
            got = (int(r[2]), ints(r[3]), ints(r[4]), ints(r[5]), ints(r[6]), ints(r[7]), ints(r[8]), ints(r[9]))
            c.eq("%s wire %s seq %s" % (name, d, r[1]), got, want)
            wire += 1
        c.true(name + " wire packets matched", wire >= n_lib * 0.8, "%d of %d" % (wire, n_lib))
        print("%s: %d connection packets on the wire matched the library's view" % (name, wire))
        c.true(name + " every library packet matched", matched >= n_lib,
               "%d matched of %d library packets (%d packets not in the log)" % (matched, n_lib, missing))
        print("%s: %d packets matched the library's view, %d datagrams not read by the library" % (name, matched, missing))
    # Acks: captures/real-yojimbo-NAME-acks.txt lists, per direction, every
    # message id and block fragment the sender's channel took as acknowledged
    # (the first time, logged inside the library). On the wire nothing is
    # lost after the capture point (the simulator drops before the socket),
    # so what the dissector finds acknowledged by a packet the library read
    # (the last ones on the wire arrive after soak stops reading) must be the
    # library's list exactly.
    for name in ("clean", "loss"):
        base = os.path.join(y.CAPTURES, "real-yojimbo-" + name)
        lib_read = {(d, s) for d, v in library(base + "-library.txt").items() for s in v}
        lib_msgs = set()
        lib_frags = set()
        for line in open(base + "-acks.txt"):
            f = line.split()
            if f[1] == "msg":
                lib_msgs.add((f[0], int(f[2])))
            else:
                lib_frags.add((f[0], int(f[2]), int(f[3])))
        keys = ["-o", "netcode.private_key:" + "00" * 32]
        rows = y.fields(base + ".pcapng", ["frame.number", "udp.dstport", "yojimbo.analysis.reliable_sequence",
                                            "yojimbo.block.message_id", "yojimbo.block.fragment_id",
                                            "yojimbo.analysis.acked_in"], keys + SOAK + ["-2"], decode=False)
        seq_of = {}
        frags = set()
        for r in rows:
            if r[2] == "":
                continue
            d = "to-server" if r[1] == "40771" else "to-client"
            seq_of[int(r[0])] = (d, int(r[2].split(",")[0]))
        def read_by_library(frame):
            return seq_of.get(frame) in lib_read
        for r in rows:
            if r[3] and r[5]:
                d = "to-server" if r[1] == "40771" else "to-client"
                if read_by_library(int(r[5])):
                    frags.add((d, int(r[3]), int(r[4])))
        out = y.tshark(["-r", base + ".pcapng", "-q", "-z", "yojimbo,messages"] + keys + SOAK).stdout
        msgs = set()
        for l in out.splitlines():
            m = re.match(r"^\d+\s+\S+:(\d+) -> \S+:(\d+)\s+(\d+)\s+(\d+)\s+(.*)$", l)
            if m:
                cell = m.group(5).split()[4]           # "-": never acknowledged
                acked_in = 0 if cell == "-" else int(cell)
                if acked_in and read_by_library(acked_in):
                    msgs.add(("to-server" if m.group(2) == "40771" else "to-client", int(m.group(4))))
        c.eq("%s: acknowledged message ids, not in the library's list" % name, sorted(msgs - lib_msgs), [])
        c.eq("%s: acknowledged message ids, only in the library's list" % name, sorted(lib_msgs - msgs), [])
        c.eq("%s: acknowledged fragments, not in the library's list" % name, sorted(frags - lib_frags), [])
        c.eq("%s: acknowledged fragments, only in the library's list" % name, sorted(lib_frags - frags), [])
        print("%s: %d message ids and %d block fragments acknowledged, as the library saw them" %
              (name, len(msgs), len(frags)))

    # The examples' capture (real-yojimbo-cs): 1128 payloads, each an empty
    # connection packet under the default configuration (netcode notes the
    # packet after its disconnect: a note is fine).
    rows = y.fields(os.path.join(y.CAPTURES, "real-yojimbo-cs.pcapng"), ["yojimbo.channel_entries", "_ws.expert.severity"],
                    ["-d", "udp.port==40000,netcode", "-o", "netcode.keylog_file:" +
                     os.path.join(y.CAPTURES, "real-yojimbo-cs.keys"), "-Y", "yojimbo"], decode=False)
    c.eq("real-yojimbo-cs: empty connection packets", len(rows), 1128)
    c.true("real-yojimbo-cs: all empty, no warning or error",
           all(r[0] == "0" and all(int(v) < 0x600000 for v in r[1].split(",") if v) for r in rows), str(rows[:3]))

    # The blocks soak sends are filled with uint8(its sequence + j): every
    # block exported from the real capture must be (a fragment misplaced
    # or a byte of padding kept would break the run).
    out = os.path.join(y.tmpdir(), "eo")
    y.tshark(["-r", os.path.join(y.CAPTURES, "real-yojimbo-clean.pcapng"), "-o", "netcode.private_key:" + "00" * 32,
              "-q", "--export-objects", "yojimbo," + out] + SOAK)
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    blocks = set()
    for line in open(os.path.join(y.CAPTURES, "real-yojimbo-clean-library.txt")):
        parts = line.split()
        blocks |= {(parts[0], e.split(":")[2]) for e in parts[3:] if e.split(":")[1] == "frag"}
    # each block once (a fragment resent after the block was reassembled is
    # not reassembled again), and every block the library read
    c.eq("blocks exported from the real capture", len(files), len(blocks))
    for f in files:
        data = open(os.path.join(out, f), "rb").read()
        c.true("block %s has soak's byte pattern" % f,
               len(data) > 0 and all(data[j] == (data[0] + j) & 0xFF for j in range(len(data))))
    print("%d blocks exported from real-yojimbo-clean.pcapng, each with soak's bytes" % len(files))
    c.done()


if __name__ == "__main__":
    main()
