#!/usr/bin/env python3
"""tshark -V -O netcode on chosen frames of netcode-sim captures, decrypted
with their key logs, against the reviewed output in
dissector/tests/netcode/golden/<major.minor>/ (one pass and -2; the analysis
runs over the whole capture): dissector/tests/selected_goldens.py.

  netcode-clean     request, challenge, response, the first keep-alive
                    (connected), a payload each way, the client's first two
                    disconnects
  netcode-loss-dup  request, challenge, response; out of order, gap and
                    duplicate keep-alives and payloads

  goldens.py                 compare (ctest netcode.goldens)
  goldens.py --regenerate    rewrite them; review the diff before committing
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import selected_goldens  # noqa: E402

GOLDENS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def netcode(name):
    return ["-d", "udp.port==40000,netcode", "-o", "netcode.keylog_file:{captures}/%s.keys" % name]


CASES = {
    "netcode-clean": ("netcode-clean.pcap", "1,2,3,4,6,7,146,147", netcode("netcode-clean")),
    "netcode-loss-dup": ("netcode-loss-dup.pcap", "1,2,3,5,16,47", netcode("netcode-loss-dup")),
}

if __name__ == "__main__":
    sys.exit(selected_goldens.main("netcode", GOLDENS, CASES))
