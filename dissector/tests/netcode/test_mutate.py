#!/usr/bin/env python3
"""netcode.mutate: the real captures with random byte errors (editcap -E, a
few seeds) decode with the keys, with -V in one and two passes and with the
connections table and expert summary, without a dissector bug
(WIRESHARK_ABORT_ON_DISSECTOR_BUG=1) or a crash; a corrupted packet of a
connection whose keys are known is reported as not decrypting, never
decoded as if it had."""
import os
import subprocess
import tempfile

import nctest as nc


def main():
    F = nc.Failures()
    tmp = tempfile.mkdtemp()
    os.chmod(tmp, 0o755)
    for cap in ("real-netcode-cs", "real-yojimbo-cs"):
        src = os.path.join(nc.REPO, "captures", cap + ".pcapng")
        keys = ["-o", "netcode.keylog_file:" + os.path.join(nc.REPO, "captures", cap + ".keys")]
        for seed in range(1, 5):
            out = os.path.join(tmp, "%s-%d.pcapng" % (cap, seed))
            subprocess.run(["editcap", "--seed", str(seed), "-E", "0.001", src, out], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            os.chmod(out, 0o644)
            for mode in (["-V"], ["-2", "-V"], ["-q", "-z", "netcode,conns", "-z", "expert"]):
                try:
                    nc.tshark(["-r", out] + nc.CHUNK_OFF + keys + mode)
                except RuntimeError as e:
                    F.check(False, "%s seed %d %s: %s" % (cap, seed, " ".join(mode), str(e)[-500:]))
            # every netcode packet either decrypts or says it does not
            rows = nc.tshark(["-r", out, "-Y", "netcode.type > 0", "-T", "fields", "-e", "netcode.decrypted",
                              "-e", "_ws.expert.message", "-e", "netcode.expert.detail"] + nc.CHUNK_OFF +
                             keys).splitlines()
            for r in rows:
                dec, _, msg = r.partition("\t")   # the summaries and their details
                F.check(dec in ("1", "True") or "decrypt" in msg or "no key" in msg.lower() or "Not" in msg,
                        "%s seed %d: undecrypted packet without a reason: %r" % (cap, seed, r))
    F.finish("netcode.mutate")


if __name__ == "__main__":
    main()
