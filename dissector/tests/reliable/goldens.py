#!/usr/bin/env python3
"""tshark -V -O reliable on chosen frames of reliable-sim captures (Decode
As on port 50000, the sender's) against the reviewed output in
dissector/tests/reliable/golden/<major.minor>/ (one pass and -2; the
analysis runs over the whole capture): dissector/tests/selected_goldens.py.

  reliable-fragments  a packet in four fragments and its reassembly, the
                      peer's regular packet acking it, the next packet's
                      first fragment
  reliable-loss-10    the first packets both ways (acks from 65535), a
                      packet that is lost, the peer's packet whose ack moves
                      past it

  goldens.py                 compare (ctest reliable.goldens)
  goldens.py --regenerate    rewrite them; review the diff before committing
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import selected_goldens  # noqa: E402

GOLDENS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
RELIABLE = ["-d", "udp.port==50000,reliable"]

CASES = {
    "reliable-fragments": ("reliable-fragments.pcap", "1,2,3,4,5,6", RELIABLE),
    "reliable-loss-10": ("reliable-loss-10.pcap", "1,2,3,4,6,79", RELIABLE),
}

if __name__ == "__main__":
    sys.exit(selected_goldens.main("reliable", GOLDENS, CASES))
