#!/usr/bin/env python3
"""The chunkshark configuration profile (dissector/profile/chunkshark,
docs/gui.md "The chunkshark profile"):

- colorfilters: docs/chunkshark.colorfilters' rules, in order, ABOVE
  Wireshark's default rules (a profile's colorfilters replaces the default
  list): exactly what scripts/profile.sh colorfilters makes from Wireshark's
  /usr/share/wireshark/colorfilters;
- preferences (and recent, the column widths): tshark reads them with -C chunkshark without a warning, and
  its packet lines then carry the profile's Problem column (an expert
  message of a packet with a problem);
- io_graphs: each line the nine quoted fields of Wireshark's I/O Graphs UAT,
  its display filter and Y field known to tshark;
- the zip that the build writes (<build>/chunkshark-profile.zip) unzips into
  chunkshark/ with the folder's files, byte for byte, and is a profile that
  tshark -C loads; scripts/profile.sh zip writes the same files;
- scripts/profile.sh install puts the folder in
  $WIRESHARK_CONFIG_DIR/profiles/chunkshark, and refuses to replace one
  there without --force.
"""
import csv
import io
import os
import shutil
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import chunktest as ct  # noqa: E402

PROFILE = os.path.join(ct.REPO, "dissector", "profile", "chunkshark")
SCRIPT = os.path.join(ct.REPO, "scripts", "profile.sh")
DEFAULTS = "/usr/share/wireshark/colorfilters"
FILES = ["colorfilters", "io_graphs", "preferences", "recent"]


def run(args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(args, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def tshark_profile(conf, args):
    """chunk-tshark -C chunkshark with conf as the personal configuration
    folder (readable by user nobody, as chunk-tshark runs tshark)."""
    for root, dirs, files in os.walk(conf):
        for n in dirs + files:
            os.chmod(os.path.join(root, n), 0o755)
    os.chmod(conf, 0o755)
    env = dict(os.environ, WIRESHARK_CONFIG_DIR=conf, CHUNK_BUILD_DIR=ct.build_dir(), LC_ALL="C")
    return subprocess.run([ct.CHUNK_TSHARK, "-C", "chunkshark"] + args, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


def check_loads(F, conf, what):
    p = tshark_profile(conf, ["-r", os.path.join(ct.REPO, "captures", "fault-drop-slice.pcap")])
    F.check(p.returncode == 0 and not p.stderr.strip(), "%s: tshark -C chunkshark: %d %s"
            % (what, p.returncode, p.stderr.strip()[:400]))
    # A resent slice's line ends with the Problem column: its expert
    # message, the fixed summary of its kind.
    F.check(any(" Slice resent" in line.split("bytes", 1)[-1] for line in p.stdout.splitlines()),
            "%s: no packet line with a Problem column:\n%s" % (what, p.stdout[:600]))


def main():
    F = ct.Failures()
    for n in FILES:
        F.check(os.path.isfile(os.path.join(PROFILE, n)), "no %s in %s" % (n, PROFILE))
    F.check(sorted(os.listdir(PROFILE)) == FILES, "profile folder holds %s, want %s"
            % (sorted(os.listdir(PROFILE)), FILES))

    # colorfilters: ours on top, then the defaults.
    ours = [line.rstrip("\n") for line in open(os.path.join(ct.REPO, "docs", "chunkshark.colorfilters"))
            if line.startswith("@")]
    rules = [line.rstrip("\n") for line in open(os.path.join(PROFILE, "colorfilters")) if line[:1] in "@!"]
    F.check(rules[:len(ours)] == ours, "the profile's first %d rules are not docs/chunkshark.colorfilters'"
            % len(ours))
    # The profile carries the default rules of Wireshark 4.0 (Debian 12's,
    # where scripts/profile.sh colorfilters is run); 4.4 and 4.6 changed one
    # rule and added one, so the equality holds on 4.0 alone.
    if os.path.isfile(DEFAULTS) and ct.wireshark_minor() == "4.0":
        defaults = [line.rstrip("\n") for line in open(DEFAULTS) if line[:1] in "@!"]
        F.check(rules[len(ours):] == defaults, "below ours, the profile's rules are not Wireshark's defaults "
                "(%d rules, %s has %d): scripts/profile.sh colorfilters" % (len(rules) - len(ours), DEFAULTS,
                                                                             len(defaults)))
        p = run(["bash", SCRIPT, "colorfilters"])
        F.check(p.stdout == open(os.path.join(PROFILE, "colorfilters")).read(),
                "scripts/profile.sh colorfilters differs from the profile's colorfilters")
    F.check(any("@UDP@" in r for r in rules[len(ours):]), "no default UDP rule below ours")

    # io_graphs: Wireshark's UAT of I/O graphs.
    lines = [line for line in open(os.path.join(PROFILE, "io_graphs")) if line.strip() and line[0] != "#"]
    F.check(len(lines) >= 4, "io_graphs: %d graphs" % len(lines))
    for line in lines:
        row = next(csv.reader(io.StringIO(line)))
        if not F.check(len(row) == 9 and row[0] in ("TRUE", "FALSE"), "io_graphs: not a graph: %r" % line):
            continue
        for flt in (row[2], row[6]):
            if flt:
                try:
                    ct.tshark(["-r", os.path.join(ct.REPO, "captures", "clean.pcap"), "-Y", flt, "-c", "1"])
                except RuntimeError as e:
                    F.check(False, "io_graphs %s: %r is not a display filter: %s" % (row[1], flt, e))

    with ct.scratch_dir() as tmp:
        # preferences: tshark loads the profile from a configuration folder.
        conf = os.path.join(tmp, "conf")
        os.makedirs(os.path.join(conf, "profiles"))
        shutil.copytree(PROFILE, os.path.join(conf, "profiles", "chunkshark"))
        check_loads(F, conf, "profile folder")

        # The build's zip and the script's.
        made = os.path.join(tmp, "script.zip")
        p = run(["bash", SCRIPT, "zip", made])
        F.check(p.returncode == 0, "profile.sh zip: %s" % p.stderr)
        for z in (os.path.join(ct.build_dir(), "chunkshark-profile.zip"), made):
            if not F.check(os.path.isfile(z), "no %s (build first)" % z):
                continue
            with zipfile.ZipFile(z) as zf:
                names = sorted(n for n in zf.namelist() if not n.endswith("/"))
                F.check(names == ["chunkshark/" + n for n in FILES], "%s holds %s" % (z, names))
                out = os.path.join(tmp, "unzip-" + os.path.basename(z), "profiles")
                zf.extractall(out)
            for n in FILES:
                got = open(os.path.join(out, "chunkshark", n), "rb").read()
                F.check(got == open(os.path.join(PROFILE, n), "rb").read(), "%s: %s differs" % (z, n))
            check_loads(F, os.path.dirname(out), os.path.basename(z))

        # Install.
        inst = os.path.join(tmp, "inst")
        p = run(["bash", SCRIPT, "install"], {"WIRESHARK_CONFIG_DIR": inst})
        F.check(p.returncode == 0, "profile.sh install: %s" % p.stderr)
        for n in FILES:
            path = os.path.join(inst, "profiles", "chunkshark", n)
            F.check(os.path.isfile(path) and open(path).read() == open(os.path.join(PROFILE, n)).read(),
                    "install: %s not copied" % n)
        p = run(["bash", SCRIPT, "install"], {"WIRESHARK_CONFIG_DIR": inst})
        F.check(p.returncode == 1, "install over an installed profile without --force: exit %d" % p.returncode)
        p = run(["bash", SCRIPT, "install", "--force"], {"WIRESHARK_CONFIG_DIR": inst})
        F.check(p.returncode == 0, "install --force: %s" % p.stderr)
    F.finish("test_profile")


if __name__ == "__main__":
    main()
