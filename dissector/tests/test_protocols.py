#!/usr/bin/env python3
"""test_protocols.py: every protocol the plugin registers is one of
dissector/protocols.txt, and every consumer of that list covers it.

The plugin's protocols are those `tshark -G protocols` lists with the plugin
and not without it. For each, this checks:
  - list        it is in dissector/protocols.txt and <build>/protocols.txt,
                and every folder dissector/<name>/ with a <name>.h is listed;
  - table       the generated registration table (plugin-protocols.h) calls
                its proto_register_/proto_reg_handoff_, and plugin.c and the
                libFuzzer harness (fuzz/dissector/fuzz_dissector.c) register
                from that table and from nowhere else;
  - tests       ctest has tests of it (named <name>.* or labelled <name>),
                all matched by the 4.4/4.6 suite's regex
                (<build>/dissector-tests.txt, scripts/test-wireshark.sh);
  - hostile     one of those tests carries the label hostile;
  - goldens     dissector/tests/goldens.py shows it (-O) or it has goldens of
                its own (dissector/tests/<name>/golden), and a reviewed golden
                shows its tree: its packets are in captures/, which the
                mutation fuzzer (fuzz/dissector/mutate-fuzz.py, which counts
                the frames of every listed protocol) mutates.
Exit 0 when all hold, 1 with a line per failure.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chunktest as ct  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DISSECTOR = os.path.join(ct.REPO, "dissector")


def g_protocols(with_plugin):
    """{filter name: full name} of tshark -G protocols."""
    if with_plugin:
        out = ct.tshark(["-G", "protocols"])
    else:
        # Without the plugin: plain tshark, with a home of its own (no
        # personal plugin folder); as root it ignores plugin folders anyway.
        with tempfile.TemporaryDirectory() as home:
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LC_ALL": "C"}
            out = subprocess.run(["tshark", "-G", "protocols"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, universal_newlines=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        cols = line.split("\t")
        if len(cols) >= 3:
            res[cols[2]] = cols[0]
    return res


def source_list():
    names = []
    with open(os.path.join(DISSECTOR, "protocols.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                names.append(line[0])
    return names


def ctest_tests():
    """[(name, labels)] of the build tree's tests."""
    ctest = shutil.which("ctest") or "ctest"
    out = subprocess.run([ctest, "--test-dir", ct.build_dir(), "--show-only=json-v1"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True,
                         check=True).stdout
    tests = []
    for t in json.loads(out).get("tests", []):
        labels = []
        for prop in t.get("properties", []):
            if prop.get("name") == "LABELS":
                labels = prop.get("value", [])
        tests.append((t["name"], labels))
    return tests


def main():
    failures = []

    def fail(msg):
        failures.append(msg)
        print("FAIL: " + msg)

    with_plugin = g_protocols(True)
    without = g_protocols(False)
    registered = sorted(set(with_plugin) - set(without))
    if not registered:
        fail("tshark -G protocols lists no protocol of the plugin (not loaded, or installed globally?)")
    listed = source_list()
    built = ct.plugin_protocols()
    if built != listed:
        fail("<build>/protocols.txt %s is not dissector/protocols.txt %s: configure again" % (built, listed))
    if sorted(registered) != sorted(listed):
        fail("the plugin registers %s, dissector/protocols.txt lists %s" % (registered, listed))
    for h in glob.glob(os.path.join(DISSECTOR, "*", "*.h")):
        folder = os.path.basename(os.path.dirname(h))
        if os.path.basename(h) == folder + ".h" and folder not in listed:
            fail("dissector/%s/%s.h exists, but %s is not in dissector/protocols.txt" % (folder, folder, folder))

    with open(os.path.join(ct.build_dir(), "dissector", "plugin-protocols.h")) as f:
        table = f.read()
    for src in ("dissector/plugin.c", "fuzz/dissector/fuzz_dissector.c"):
        with open(os.path.join(ct.REPO, src)) as f:
            text = f.read()
        if '#include "plugin-protocols.h"' not in text or "chunk_plugin_protocols" not in text:
            fail("%s does not register from plugin-protocols.h" % src)
        own = sorted(set(re.findall(r"\bproto_(?:register|reg_handoff)_[a-z0-9_]+\b", text)) -
                     {"proto_register_plugin"})
        if own:
            fail("%s names registration routines itself: %s" % (src, ", ".join(own)))

    with open(os.path.join(ct.build_dir(), "dissector-tests.txt")) as f:
        suite = re.compile(f.read().strip())
    tests = ctest_tests()
    golden_text = ""
    for g in glob.glob(os.path.join(HERE, "golden", "4.0", "*.txt")) + \
            glob.glob(os.path.join(HERE, "*", "golden", "4.0", "*.txt")):
        with open(g) as f:
            golden_text += f.read()
    shown = os.environ.get("CHUNK_GOLDENS_PROTOCOLS")   # for checking this test itself
    shown = shown.split(",") if shown is not None else ct.plugin_protocols()

    for p in registered:
        full = with_plugin[p]
        if "proto_register_%s, proto_reg_handoff_%s" % (p, p) not in table:
            fail("%s: not in the generated registration table" % p)
        mine = [(n, lab) for n, lab in tests if n.startswith(p + ".") or p in lab]
        if not mine:
            fail("%s: no ctest test named %s.* or labelled %s" % (p, p, p))
        outside = [n for n, _ in mine if not suite.search(n)]
        if outside:
            fail("%s: tests outside the 4.4/4.6 suite's regex %s: %s" % (p, suite.pattern, ", ".join(outside)))
        if not any("hostile" in lab for _, lab in mine):
            fail("%s: no hostile-input test (a test of it labelled hostile)" % p)
        own_goldens = os.path.isdir(os.path.join(HERE, p, "golden"))
        if not own_goldens and p not in shown:
            fail("%s: goldens.py does not show it (-O %s) and it has no dissector/tests/%s/golden"
                 % (p, ",".join(shown), p))
        if "\n" + full not in golden_text:
            fail("%s: no reviewed golden shows a %s tree: no capture of it in captures/ "
                 "(nothing for the goldens and the mutation fuzzer)" % (p, full))
        print("%-10s %-50s %d tests%s" % (p, full, len(mine), ", own goldens" if own_goldens else ""))

    print("%d protocols, %d failures" % (len(registered), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
