#!/usr/bin/env python3
"""netcode.mutate: the real captures with random byte errors (editcap -E, a
few seeds) decode with the keys, with every item's label in one pass (-T
pdml, which the decryption check reads too) and two (-V), and with the
connections table and expert summary, without a dissector bug
(WIRESHARK_ABORT_ON_DISSECTOR_BUG=1) or a crash; a corrupted packet of a
connection whose keys are known is reported as not decrypting, never
decoded as if it had."""
import html
import os
import re
import subprocess
import tempfile

import nctest as nc


_FIELD = re.compile(r'<field name="(netcode\.type|netcode\.decrypted|_ws\.expert\.message|netcode\.expert\.detail)"'
                    r'[^>]*? show="([^"]*)"')


def rows_of(pdml):
    """The rows -Y "netcode.type > 0" -T fields -e netcode.decrypted -e
    _ws.expert.message -e netcode.expert.detail prints, from a -T pdml
    text (which shows every item's label, as -V does); read line by line
    (PDML has an element a line), far quicker than an XML parser."""
    rows = []
    vals = None
    for line in pdml.splitlines():
        if line.startswith("<packet>"):
            vals = {"netcode.type": [], "netcode.decrypted": [], "_ws.expert.message": [],
                    "netcode.expert.detail": []}
        elif line.startswith("</packet>") and vals is not None:
            if any(int(t) > 0 for t in vals["netcode.type"]):
                rows.append("\t".join(",".join(vals[n]) for n in ("netcode.decrypted", "_ws.expert.message",
                                                                    "netcode.expert.detail")))
            vals = None
        elif vals is not None and "<field name=\"" in line:
            m = _FIELD.search(line)
            if m:
                vals[m.group(1)].append(html.unescape(m.group(2)))
    return rows


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
            # (one pass: -T pdml, every item's label as -V prints it, and
            # the fields the check below reads)
            pdml = None
            for mode in (["-T", "pdml"], ["-2", "-V"], ["-q", "-z", "netcode,conns", "-z", "expert"]):
                try:
                    text = nc.tshark(["-r", out] + nc.CHUNK_OFF + keys + mode)
                    pdml = text if mode[0] == "-T" else pdml
                except RuntimeError as e:
                    F.check(False, "%s seed %d %s: %s" % (cap, seed, " ".join(mode), str(e)[-500:]))
            # every netcode packet either decrypts or says it does not
            for r in rows_of(pdml) if pdml else []:
                dec, _, msg = r.partition("\t")   # the summaries and their details
                F.check(dec in ("1", "True") or "decrypt" in msg or "no key" in msg.lower() or "Not" in msg,
                        "%s seed %d: undecrypted packet without a reason: %r" % (cap, seed, r))
    F.finish("netcode.mutate")


if __name__ == "__main__":
    main()
