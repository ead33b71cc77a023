#!/usr/bin/env python3
"""tshark -V -O yojimbo (two passes) on the real soak captures, against the
reviewed output in golden/<major.minor>/ of the Wireshark the plugin was
built against. --regenerate writes them (review the diff before committing).
Without a golden set for this Wireshark it says so and skips (exit 77):
4.4 and 4.6 print some fields differently; make their set there with
--regenerate and review it."""
import difflib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y

SOAK = ["-o", "yojimbo.channels:uu:8192,ro:10240:1024", "-o", "yojimbo.message_types:4",
        "-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")]
# name: capture, arguments (first frames: messages, a block's fragments and
# its reassembly, resends and acks)
GOLDENS = {
    "real-loss-plain": ("real-yojimbo-loss-plain.pcap",
                        ["-d", "udp.port==40000,yojimbo", "-o", "yojimbo.plain_reliable:TRUE", "-Y", "frame.number <= 10"]),
    "real-clean": ("real-yojimbo-clean.pcapng",
                   ["-o", "netcode.private_key:" + "00" * 32, "-Y", "frame.number <= 300 && yojimbo.block.message_id"]),
}


def version():
    build = os.environ.get("CHUNK_BUILD_DIR", os.path.join(y.REPO, "build"))
    with open(os.path.join(build, "plugin-dir.txt")) as f:
        return f.read().split("/")[1]


def render(name):
    cap, args = GOLDENS[name]
    out = y.tshark(["-r", os.path.join(y.CAPTURES, cap), "-2", "-V", "-O", "yojimbo"] + SOAK + args).stdout
    # Only each frame's first line and the yojimbo tree: the other
    # protocols' summary lines are theirs to change.
    keep = []
    inside = False
    for line in out.splitlines(True):
        if line.startswith("Frame "):
            keep.append(line)
            inside = False
        elif line.startswith("yojimbo connection packet") or line.startswith("reliable header:"):
            keep.append(line)
            inside = True
        elif inside and (line.startswith(" ") or line == "\n"):
            keep.append(line)
        else:
            inside = False
    # the path of the schema file differs between checkouts
    return "".join(keep).replace(os.path.join(y.REPO, "docs"), "<repo>/docs")


def main():
    regen = "--regenerate" in sys.argv[1:]
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", version())
    if not os.path.isdir(d) and not regen:
        print("yojimbo.goldens: no golden set for Wireshark %s (%s): skipped" % (version(), d))
        sys.exit(77)
    c = y.Checks("yojimbo.goldens")
    for name in GOLDENS:
        text = render(name)
        path = os.path.join(d, name + ".txt")
        if regen:
            os.makedirs(d, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            print("wrote", path)
            continue
        want = open(path).read()
        if text != want:
            diff = "".join(list(difflib.unified_diff(want.splitlines(True), text.splitlines(True), path, "now"))[:60])
            c.true(name, False, "\n" + diff)
        else:
            c.true(name, True)
    if not regen:
        c.done()


if __name__ == "__main__":
    main()
