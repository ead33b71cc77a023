"""seed_corpus.py: what the make-*-seeds.py scripts share: their SPEC_DIR
OUT_DIR command line, the datagrams of a spec vector file, a harness's
inject operation and writing a corpus folder."""
import os
import struct
import sys


def command_line(prog):
    """(SPEC_DIR, OUT_DIR) from the command line; exits 2 with the usage
    line when there are not exactly two arguments."""
    if len(sys.argv) != 3:
        sys.stderr.write("usage: %s SPEC_DIR OUT_DIR\n" % prog)
        sys.exit(2)
    return sys.argv[1], sys.argv[2]


def vectors(path, kinds):
    """(kind, datagram) of every line of the vector file path whose first
    word is one of kinds; the datagram is the line's last word, in hex."""
    out = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields and fields[0] in kinds:
                out.append((fields[0], bytes.fromhex(fields[-1])))
    return out


def inject(op, flags, datagram):
    """A harness's inject operation: op, flags, the length (LE16), the datagram."""
    return bytes([op, flags]) + struct.pack("<H", len(datagram)) + datagram


def write(folder, seeds):
    """Writes seeds (file name -> bytes) into folder, made if missing."""
    os.makedirs(folder, exist_ok=True)
    for name, content in seeds.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(content)
