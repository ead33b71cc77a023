#!/usr/bin/env python3
"""netcode.keylog: the key log file is read again while tshark runs, as it
grows and when it is replaced. tshark reads a capture from a pipe; between
packets the test changes the key log:

  frame 1  a request whose token needs private key 1; the key log is empty
  (the key log gets a NETCODE_PRIVATE_KEY line for key 1, appended)
  frame 2  another client's request with key 1: decrypted
  (the key log is replaced by a new file holding only key 2)
  frame 3  a third client's request with key 2: decrypted
  frame 4  a fourth client's request with key 1: not decrypted (forgotten)
"""
import os
import select
import struct
import subprocess
import tempfile
import time

import nctest as nc

KEY1 = bytes([0xA1] * 32)
KEY2 = bytes([0xB2] * 32)
# The dissector looks at the key log again at most every 200 ms
# (NC_KEYLOG_RECHECK_US): a change is seen by a frame that comes later than that.
RECHECK = 0.5


def frame_bytes(f):
    fr = nc.ct.udp_frame(f["payload"], f["sport"], f["dport"], f["src"], f["dst"])
    t = nc.T0 + f["t"]
    return struct.pack("<IIII", int(t), int(round((t - int(t)) * 1e6)), len(fr), len(fr)) + fr


def main():
    F = nc.Failures()
    tmp = tempfile.mkdtemp()
    os.chmod(tmp, 0o755)
    keylog = os.path.join(tmp, "keys.log")
    open(keylog, "w").close()
    os.chmod(keylog, 0o644)
    expire = int(nc.T0) + 60
    frames = []
    for i, key in enumerate((KEY1, KEY1, KEY2, KEY1)):
        f = nc.c2s(nc.request(expire, private_key=key), 0.1 * i)
        f["sport"] = 50000 + i
        frames.append(frame_bytes(f))
    env = dict(os.environ, WIRESHARK_ABORT_ON_DISSECTOR_BUG="1", TZ="UTC")
    env.setdefault("CHUNK_BUILD_DIR", nc.ct.build_dir())
    p = subprocess.Popen([nc.ct.CHUNK_TSHARK, "-r", "-", "-l", "-T", "fields", "-e", "frame.number",
                          "-e", "netcode.decrypted", "-o", "netcode.keylog_file:" + keylog] + nc.CHUNK_OFF,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    got = {}

    def record(line):
        parts = line.decode().rstrip("\n").split("\t")
        if len(parts) >= 2 and parts[0].isdigit():
            got[int(parts[0])] = parts[1] in ("1", "True")

    def send(data, frame):
        """Writes DATA (frame FRAME) and waits until tshark has printed that
        frame, so that the key log changes between two frames whatever the
        machine's load (a fixed sleep raced with a slow tshark start)."""
        p.stdin.write(data)
        p.stdin.flush()
        deadline = time.monotonic() + 120
        while frame not in got and time.monotonic() < deadline:
            if not select.select([p.stdout], [], [], 1)[0]:
                if p.poll() is not None:
                    break
                continue
            line = p.stdout.readline()
            if not line:
                break
            record(line)
        F.check(frame in got, "tshark did not print frame %d" % frame)

    send(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1) + frames[0], 1)
    with open(keylog, "a") as f:
        f.write("NETCODE_PRIVATE_KEY %s\n" % KEY1.hex())
    time.sleep(RECHECK)
    send(frames[1], 2)
    new = keylog + ".new"
    with open(new, "w") as f:
        f.write("# replaced\nNETCODE_PRIVATE_KEY %s\n" % KEY2.hex())
    os.chmod(new, 0o644)
    os.rename(new, keylog)
    time.sleep(RECHECK)
    send(frames[2], 3)
    p.stdin.write(frames[3])
    out, err = p.communicate(timeout=60)
    for line in out.splitlines(keepends=True):
        record(line)
    F.check(p.returncode == 0, "tshark failed: %s" % err.decode(errors="replace"))
    want = {1: False, 2: True, 3: True, 4: False}
    F.check(got == want, "decrypted per frame %s, want %s" % (got, want))
    F.finish("netcode.keylog")


if __name__ == "__main__":
    main()
