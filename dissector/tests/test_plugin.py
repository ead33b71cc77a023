#!/usr/bin/env python3
"""The plugin as Wireshark lists it: `tshark -G plugins` names chunk.so, with
the plugin's version, its type "dissector" (from 4.2 on Wireshark takes the
type from plugin_describe(): "unknown" without it) and the folder
plugins/<major.minor>/epan of the Wireshark it was built against
(<build>/plugin-dir.txt), which is the Wireshark running it.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chunktest as ct  # noqa: E402


def main():
    fail = ct.Failures()
    with open(os.path.join(ct.build_dir(), "plugin-dir.txt")) as f:
        sub = f.read().strip()
    fail.check(re.fullmatch(r"plugins/\d+\.\d+/epan", sub) is not None, "plugin-dir.txt: %r" % sub)
    version = ct.tshark(["--version"]).splitlines()[0]
    m = re.search(r"(\d+)\.(\d+)\.\d+", version)
    fail.check(m and sub == "plugins/%s.%s/epan" % (m.group(1), m.group(2)),
               "plugin folder %s, but tshark is %r" % (sub, version))
    rows = [[c.strip() for c in line.split("\t")] for line in ct.tshark(["-G", "plugins"]).splitlines()]
    mine = [r for r in rows if r and r[0] == "chunk.so"]
    if fail.check(len(mine) == 1, "tshark -G plugins lists chunk.so %d times" % len(mine)):
        r = mine[0]
        fail.check(len(r) >= 4 and r[2] == "dissector", "chunk.so listed as %r, want type dissector" % r)
        fail.check(len(r) >= 4 and r[3].endswith(sub.split("/", 1)[1] + "/chunk.so"),
                   "chunk.so loaded from %r, want .../%s/chunk.so" % (r[-1], sub.split("/", 1)[1]))
    fail.finish("plugin")


if __name__ == "__main__":
    main()
