#!/usr/bin/env python3
"""What reliable passes up to yojimbo (reliable_payload_info_t,
docs/architecture.md "Stacked layers"), on reliable over plain UDP with
Decode As reliable.payload -> yojimbo (no netcode below):

  1  B seq 0: message 10
  2  A seq 0: block 5 fragment 0/2 (data 01 01 ...), acks B seq 0
  3  B seq 1: message 11
  4  A seq 1, reliable fragment 0/2: its header acks B seq 0-1
  5  A seq 1, reliable fragment 1/2: completes the packet, whose payload is
     block 5 fragment 1/2 (data 01 01 07 ...): the block is reassembled here
  6  B seq 2: acks A seq 0-1

yojimbo takes every packet's sequence from reliable: frame 5's is 1, the
packet's (the walk over the data sources that this replaced took the
reassembled block, whose first byte is 1 like a reliable fragment's, for
one: sequence 257), and frames 1 to 6 have one though no netcode is below.
Frame 5 applies the acks of fragment 0 (frame 4), as the library does once
the packet is whole: message 11 is acknowledged in frame 5. yojimbo's
heuristic leaves reliable's payload alone without netcode below. One pass
and two."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y

W = y.Writer
H = y.reliable_header


msgs = y.message_payload
frag = y.block_fragment


def reliable_fragment(seq, fid, num, data, header=b""):
    return bytes([1]) + struct.pack("<H", seq) + bytes([fid, num - 1]) + header + data


EMPTY = W().int_(0, 0, 2).data()


def main():
    c = y.Checks("yojimbo.contract")
    d = y.tmpdir()
    whole = frag(1, b"\x01\x01" + b"\x07" * 1022)
    pk = [
        (H(0, 0xFFFF, 0) + msgs([10]), True, 0.00),
        (H(0, 0, 0x1) + frag(0, b"\x01" * 1024), False, 0.01),
        (H(1, 0xFFFF, 0) + msgs([11]), True, 0.02),
        (reliable_fragment(1, 0, 2, whole[:1024], H(1, 1, 0x3)), False, 0.03),
        (reliable_fragment(1, 1, 2, whole[1024:]), False, 0.04),
        (H(2, 1, 0x3) + EMPTY, True, 0.05),
    ]
    p = os.path.join(d, "contract.pcap")
    y.pcap(pk, p)
    prefs = ["-d", "udp.port==40000,reliable", "-d", "reliable.payload,yojimbo",
             "-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")]
    F = ["frame.number", "reliable.sequence", "yojimbo.analysis.reliable_sequence", "yojimbo.analysis.acked_in",
         "yojimbo.analysis.confirms", "yojimbo.block.data"]
    for two in ([], ["-2"]):
        rows = {int(r[0]): r for r in y.fields(p, F, prefs + two, decode=False)}
        c.eq("yojimbo's sequences %s" % two, [rows[i][2] for i in range(1, 7)], ["0", "0", "1", "", "1", "2"])
        c.true("frame 5 reassembles the block %s" % two, rows[5][5] != "", rows[5])
        c.eq("frames 2, 5, 6 confirm %s" % two, (rows[2][4], rows[5][4], rows[6][4]), ("1", "1", "2"))
        if two:     # a later frame's ack is shown on the frames it acks with two passes
            c.eq("message 10 acked in 2", rows[1][3], "2")
            c.eq("message 11 acked in 5, by fragment 0's acks", rows[3][3], "5")
            c.eq("block fragments acked in 6", (rows[2][3], rows[5][3]), ("6", "6"))
    # no netcode below: yojimbo's heuristic does not take reliable's payload
    out = y.tshark(["-r", p, "-d", "udp.port==40000,reliable", "-T", "fields", "-e", "frame.protocols"]).stdout
    c.true("no yojimbo without netcode or Decode As", "yojimbo" not in out and "reliable" in out, out)
    c.done()


if __name__ == "__main__":
    main()
