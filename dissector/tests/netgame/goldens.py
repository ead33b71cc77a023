#!/usr/bin/env python3
"""tshark -V -O netgame on every netgame capture in captures/ against its
reviewed golden output in dissector/tests/netgame/golden/<major.minor>/ (the
set for the Wireshark the plugin was built against, as for the chunk goldens:
dissector/tests/goldens.py): <capture>.txt (one pass) and <capture>.2pass.txt
(-2); dissector/tests/selected_goldens.py. Another version's set must equal
golden/4.0's once Wireshark's own formatting changes are undone. The analysis
runs over the whole capture; the goldens show the first three frames and the
first frame of each analysis flag and mode switch (FRAMES, chosen once from
the -2 decode), so they stay small enough to review by hand.

  goldens.py                 compare (ctest netgame.goldens)
  goldens.py --regenerate    rewrite them; review the diff before committing
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import selected_goldens  # noqa: E402

GOLDENS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
FRAMES = {
    "netgame-at-server": "1,2,3,6,76,85",
    "netgame-clean": "1,2,3,87",
    "netgame-dup-reorder": "1,2,3,10,94,97,99",
    "netgame-header-only": "1,2,3,87",
    "netgame-high-rtt": "1,2,3,89,289",
    "netgame-loss-10": "1,2,3,6,51,85",
    "netgame-one-way-loss": "1,2,3,6,87",
    "netgame-stops-acking": "1,2,3,87,312",
    "netgame-wrap-31": "1,2,3,10,20,86",
    "netgame-wrap-32": "1,2,3,87",
}
OPTIONS = {"netgame-wrap-31": ["-o", "netgame.max_sequence:31"]}
CASES = {name: (name + ".pcap", frames, OPTIONS.get(name, [])) for name, frames in FRAMES.items()}

if __name__ == "__main__":
    sys.exit(selected_goldens.main("netgame", GOLDENS, CASES))
