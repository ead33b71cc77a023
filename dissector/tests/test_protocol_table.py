#!/usr/bin/env python3
"""test_protocol_table.py: every list of the tree that names protocols agrees
with the protocol table, dissector/protocols.txt (its header says what each
column is). The lists the build makes from the table (the registration
table, <build>/protocols.txt, the simulators' command-line tests, the
endpoint test groups, the fuzz harnesses) are checked where they land; the
rest, written by hand, against it. For each protocol:
  - folders   dissector/<name>/<name>.h, endpoints/include/<endpoints>.h,
              endpoints/src/<endpoints>/;
  - simulator endpoints/programs/<simulator>.c, captures/test-<simulator>.sh
              and its ctest captures.<simulator>-cli, labelled sanitize (run
              again under ASan/UBSan), at least one line of
              captures/captures.txt, a check of its truth files
              (captures/verify-truth.py or captures/truth-<simulator>.py),
              and with the flag keys a key log beside each of its captures;
  - fuzz      fuzz/fuzz_<harness>.c of each harness named;
  - colours   a rule "<Name> ..." in docs/chunkshark.colorfilters whose
              filter names <name>. fields;
  - docs      each page exists and README.md's Documentation links it.
And the other way: every src/<folder>/ of endpoints/, every *-sim program,
every captures/test-*.sh, every fuzz/fuzz_*.c, every program of
captures/captures.txt and every colouring rule belongs to a protocol of the
table, and every endpoints/tests/test_<group>.c is a ctest endpoints.<group>.
Each failure names the protocol or the file. Exit 0 when all hold, 1 otherwise.
"""
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chunktest as ct  # noqa: E402

REPO = ct.REPO
FLAGS = {"keys", "clients"}
RULE = re.compile(r"^@([^@]+)@([^@]+)@")


def path(*parts):
    return os.path.join(REPO, *parts)


def ctest_tests():
    """{name: labels} of the build tree's tests, or None without a build tree."""
    build = os.environ.get("CHUNK_BUILD_DIR")
    if not build or not os.path.exists(os.path.join(build, "CTestTestfile.cmake")):
        return None
    out = subprocess.run([shutil.which("ctest") or "ctest", "--test-dir", build, "--show-only=json-v1"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True,
                         check=True).stdout
    tests = {}
    for t in json.loads(out).get("tests", []):
        labels = []
        for prop in t.get("properties", []):
            if prop.get("name") == "LABELS":
                labels = prop.get("value", [])
        tests[t["name"]] = labels
    return tests


def truth_checks():
    """The generators captures/verify-truth.py checks itself."""
    spec = importlib.util.spec_from_file_location("verify_truth", path("captures", "verify-truth.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return set(module.CHECKS)


def readme_docs():
    """The docs/ pages README.md's Documentation section links."""
    text = open(path("README.md")).read()
    m = re.search(r"^## Documentation\n(.*?)(?=^## )", text, re.M | re.S)
    return set(re.findall(r"\]\(docs/([^)#]+)\)", m.group(1))) if m else set()


def colour_rules():
    rules = []
    with open(path("docs", "chunkshark.colorfilters")) as f:
        for line in f:
            m = RULE.match(line)
            if m:
                rules.append((m.group(1), m.group(2)))
    return rules


def main():
    F = ct.Failures()
    table = ct.protocol_table()
    names = [r["name"] for r in table]
    F.check(len(set(names)) == len(names), "a protocol is in the table twice: %s" % names)
    sims = {r["simulator"]: r["name"] for r in table if r["simulator"]}
    endpoints = {r["endpoints"]: r["name"] for r in table if r["endpoints"]}
    harnesses = {h: r["name"] for r in table for h in r["fuzz"]}
    checks = truth_checks()
    docs = readme_docs()
    rules = colour_rules()
    tests = ctest_tests()
    if tests is None:
        print("no build tree (CHUNK_BUILD_DIR): the generated ctest lists are not checked")

    for r in table:
        p, sim, ep = r["name"], r["simulator"], r["endpoints"]
        what = []
        F.check(os.path.exists(path("dissector", p, p + ".h")), "%s: no dissector/%s/%s.h" % (p, p, p))
        if ep:
            F.check(os.path.exists(path("endpoints", "include", ep + ".h")),
                    "%s: no endpoints/include/%s.h (endpoints column)" % (p, ep))
            F.check(os.path.isdir(path("endpoints", "src", ep)), "%s: no endpoints/src/%s/ (endpoints column)" % (p, ep))
        if sim:
            F.check(os.path.exists(path("endpoints", "programs", sim + ".c")),
                    "%s: no endpoints/programs/%s.c (simulator column)" % (p, sim))
            F.check(os.path.exists(path("captures", "test-%s.sh" % sim)),
                    "%s: no captures/test-%s.sh, the test of its simulator's command line" % (p, sim))
            caps = ct.simulator_captures(sim)
            F.check(caps, "%s: no line of captures/captures.txt made by %s" % (p, sim))
            F.check(sim in checks or os.path.exists(path("captures", "truth-%s.py" % sim)),
                    "%s: no check of %s's truth files (captures/verify-truth.py CHECKS or captures/truth-%s.py)"
                    % (p, sim, sim))
            if "keys" in r["flags"]:
                missing = [c for c in caps if not os.path.exists(path("captures", c + ".keys"))]
                F.check(not missing, "%s: flag keys, but no key log for %s" % (p, ", ".join(missing)))
            if tests is not None:
                labels = tests.get("captures.%s-cli" % sim)
                F.check(labels is not None, "%s: no ctest captures.%s-cli" % (p, sim))
                F.check(labels is None or "sanitize" in labels,
                        "%s: captures.%s-cli is not labelled sanitize (not run under ASan/UBSan)" % (p, sim))
            what.append("%s, %d captures" % (sim, len(caps)))
        F.check(r["datagram"].isdigit() and int(r["datagram"]) > 0,
                "%s: datagram %r is not a number of bytes" % (p, r["datagram"]))
        bad = set(r["flags"]) - FLAGS
        F.check(not bad, "%s: unknown flags %s (known: %s)" % (p, sorted(bad), sorted(FLAGS)))
        for h in r["fuzz"]:
            F.check(os.path.exists(path("fuzz", "fuzz_%s.c" % h)), "%s: no fuzz/fuzz_%s.c (fuzz column)" % (p, h))
        for d in r["docs"]:
            F.check(os.path.exists(path("docs", d)), "%s: no docs/%s (docs column)" % (p, d))
            F.check(d in docs, "%s: README.md's Documentation does not link docs/%s" % (p, d))
        mine = [n for n, flt in rules if n.split()[0].lower() == p and re.search(r"\b%s\." % re.escape(p), flt)]
        F.check(mine, "%s: no colouring rule '%s ...' on %s. fields in docs/chunkshark.colorfilters"
                % (p, p.capitalize(), p))
        what.append("%d colouring rules" % len(mine))
        print("%-9s %s" % (p, ", ".join(what)))

    for src in sorted(glob.glob(path("endpoints", "src", "*", ""))):
        folder = os.path.basename(os.path.dirname(src))
        F.check(folder in endpoints, "endpoints/src/%s/ is no protocol's endpoints in dissector/protocols.txt" % folder)
    for prog in sorted(glob.glob(path("endpoints", "programs", "*-sim.c"))):
        sim = os.path.basename(prog)[:-2]
        F.check(sim in sims, "endpoints/programs/%s.c is no protocol's simulator in dissector/protocols.txt" % sim)
    for script in sorted(glob.glob(path("captures", "test-*.sh"))):
        sim = os.path.basename(script)[len("test-"):-3]
        F.check(sim in sims, "captures/test-%s.sh tests no simulator of dissector/protocols.txt" % sim)
    for h in sorted(glob.glob(path("fuzz", "fuzz_*.c"))):
        harness = os.path.basename(h)[len("fuzz_"):-2]
        F.check(harness in harnesses, "fuzz/fuzz_%s.c is no protocol's harness in dissector/protocols.txt" % harness)
    with open(path("captures", "captures.txt")) as f:
        for line in f:
            words = line.split()
            if len(words) > 1 and not words[0].startswith("#") and words[1].endswith("-sim"):
                F.check(words[1] in sims, "captures/captures.txt: %s is made by %s, no simulator of "
                        "dissector/protocols.txt" % (words[0], words[1]))
    for n, _ in rules:
        F.check(n.split()[0].lower() in names, "docs/chunkshark.colorfilters: rule %r is of no protocol "
                "of dissector/protocols.txt" % n)
    if tests is not None:
        for t in sorted(glob.glob(path("endpoints", "tests", "test_*.c"))):
            group = os.path.basename(t)[len("test_"):-2]
            if group != "main":
                F.check("endpoints." + group in tests, "endpoints/tests/test_%s.c: no ctest endpoints.%s" % (group, group))
    print("%d protocols in dissector/protocols.txt" % len(table))
    F.finish("test_protocol_table")


if __name__ == "__main__":
    main()
