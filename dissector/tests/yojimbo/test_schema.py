#!/usr/bin/env python3
"""Schema files: each kind of mistake gives one clear message naming the file,
the line and what is wrong (on tshark's stderr when the preference is
applied, and on the packets whose bodies needed the schema); a good schema
decodes the example messages' fields."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yjtest as y

BAD = [
    ("bits 16 sequence\n", "line 1: 'bits' before any 'message TYPE NAME' line"),
    ("message x Foo\n", "line 1: message type 'x' is not a number in 0..65535"),
    ("message 0 Foo\nmessage 0 Bar\n", "line 2: message type 0 is declared twice"),
    ("message 0 Foo blob\n", "line 1: unexpected 'blob' after the message name (only 'block' may follow)"),
    ("message 0 Foo\n  bits 65 x\n", "line 2: 'bits N [name]' needs N in 1..64"),
    ("message 0 Foo\n  int 5 5 x\n", "line 2: 'int 5 5': MIN must be below MAX, both 32-bit signed"),
    ("message 0 Foo\n  relative nothing y\n", "line 2: 'relative nothing': no earlier number named 'nothing' in message Foo"),
    ("message 0 Foo\n  bits 8 n\n  skip_by n 1 two\n", "line 3: 'skip_by': 'two' is not a bit count"),
    ("message 0 Foo\n  frobnicate\n", "line 2: unknown primitive 'frobnicate'"),
    ("message 0 Foo\n  bool a b\n", "line 2: unexpected 'b' after 'a'"),
    ("message 0 Foo\n  bytes len data\n", "line 2: 'bytes len': no earlier number named 'len' in message Foo"),
]


def main():
    c = y.Checks("yojimbo.schema")
    d = y.tmpdir()
    pkt = os.path.join(d, "one.pcap")
    # one reliable-ordered message of type 0 on channel 0 (default ro,ro)
    w = y.Writer().int_(1, 0, 2).int_(0, 0, 1).bool_(0).bool_(1).int_(1, 1, 256).bits_(9, 16).int_(0, 0, 3)
    w.bits_(21, 16).bits_(0, 1)    # TestMessage sequence 21: 21 % 21 = 0 -> 1 dummy bit
    y.pcap([w.data()], pkt)
    for i, (text, want) in enumerate(BAD):
        path = os.path.join(d, "bad%d.schema" % i)
        with open(path, "w") as f:
            f.write(text)
        r = y.tshark(["-r", pkt, "-d", "udp.port==40000,yojimbo", "-o", "yojimbo.schema_file:" + path,
                      "-T", "fields", "-e", "yojimbo.expert.detail"], check=False)
        full = "schema %s %s" % (path, want)
        c.true("bad schema %d message on stderr" % i, full in r.stderr, "\n  want: %s\n  got: %s" % (full, r.stderr.strip()))
        c.true("bad schema %d named on the packet" % i, "The schema file did not load" in r.stdout, r.stdout)
    r = y.tshark(["-r", pkt, "-d", "udp.port==40000,yojimbo", "-o", "yojimbo.schema_file:" + os.path.join(d, "missing.schema"),
                  "-T", "fields", "-e", "frame.number"], check=False)
    c.true("missing schema file", "missing.schema: Failed to open file" in r.stderr or "missing.schema" in r.stderr, r.stderr)

    good = os.path.join(d, "good.schema")
    with open(good, "w") as f:
        f.write("# comment\nmessage 0 Foo   # trailing comment\n  bits 16 seq\n  skip_by seq 3 1\n"
                "message 1 Blk block\n  bits 16 s\n")
    rows = y.fields(pkt, ["yojimbo.body.value", "_ws.expert.message", "yojimbo.undecoded"],
                    ["-o", "yojimbo.schema_file:" + good])
    c.eq("good schema decodes", rows[0], ["21", "", ""])
    rows = y.fields(pkt, ["yojimbo.body.value", "_ws.expert.message"],
                    ["-o", "yojimbo.schema_file:" + os.path.join(y.REPO, "docs", "yojimbo-example.schema")])
    c.eq("example schema decodes", rows[0], ["21", ""])
    rows = y.fields(pkt, ["yojimbo.expert.detail"], [])
    c.true("no schema: the body is not decoded, and the note says which preference",
           "set yojimbo.schema_file" in rows[0][0], rows)
    c.done()


if __name__ == "__main__":
    main()
