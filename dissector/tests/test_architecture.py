#!/usr/bin/env python3
"""test_architecture.py: docs/architecture.md's dissector tree matches the tree.

Reads the code block under "### The tree" of its "## Dissector" part (a
folder is a line ending in "/", indented under its parent; a file is the
first word of a line, name.{h,c} standing for both) and checks that every
file it lists exists, and that every source and build file of dissector/
(dissector/tests/ aside) is listed. Also checks the shape the document
describes: every protocol folder (dissector/protocols.txt) has
<protocol>.h, <protocol>-int.h, dissect.c, analysis.c and stats.c and no
build file of its own; every #include "..." of dissector/ (tests included)
names a file of the including file's folder or a path from the one include
root, dissector/ (or the generated plugin-protocols.h). Exit 0 when all
hold, 1 otherwise.
"""
import os
import re
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOC = os.path.join(REPO, "docs", "architecture.md")


def listed_files():
    text = open(DOC).read()
    part = text[text.index("## Dissector"):]
    tree = part[part.index("### The tree"):]
    block = tree[tree.index("```") + 3:]
    block = block[block.index("\n") + 1:block.index("```")]
    files = set()
    stack = []   # (indent, folder)
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        word = line.split()[0]
        if not re.match(r"^[\w.{},/-]+$", word) or not re.search(r"[./]", word):
            continue   # a continuation of the line above
        while stack and stack[-1][0] >= indent:
            stack.pop()
        prefix = "/".join(f for _, f in stack)
        if word.endswith("/"):
            stack.append((indent, word.rstrip("/")))
            continue
        m = re.match(r"^(.*)\{([^}]*)\}(.*)$", word)
        names = [m.group(1) + alt + m.group(3) for alt in m.group(2).split(",")] if m else [word]
        for n in names:
            files.add(prefix + "/" + n if prefix else n)
    return files


def dissector_files():
    """The files of dissector/: git's tracked ones, or, where there is no
    git or no repository (the Wireshark chroots of scripts/test-wireshark.sh
    mount a worktree whose .git points outside), those on disk."""
    try:
        return subprocess.run(["git", "ls-files", "dissector"], cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, universal_newlines=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
        for root, _, names in os.walk(os.path.join(REPO, "dissector")):
            out += [os.path.relpath(os.path.join(root, n), REPO) for n in names]
        return out


# The files every protocol folder has (<p>: its name).
SHAPE = ("<p>.h", "<p>-int.h", "dissect.c", "analysis.c", "stats.c")
# Made by dissector/CMakeLists.txt in the build tree's dissector/.
GENERATED = {"plugin-protocols.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def protocols():
    names = []
    for line in open(os.path.join(REPO, "dissector", "protocols.txt")):
        line = line.split("#")[0].split()
        if line:
            names.append(line[0])   # the table's first column
    return names


def shape_failures(tracked):
    failures = []
    for p in protocols():
        for f in SHAPE:
            path = "dissector/%s/%s" % (p, f.replace("<p>", p))
            if not os.path.exists(os.path.join(REPO, path)):
                failures.append("dissector/%s/ has no %s" % (p, f.replace("<p>", p)))
        if os.path.exists(os.path.join(REPO, "dissector", p, "CMakeLists.txt")):
            failures.append("dissector/%s/CMakeLists.txt: a protocol folder has no build file "
                            "(dissector/CMakeLists.txt builds every folder)" % p)
    root = os.path.join(REPO, "dissector")
    for f in tracked:
        if not f.endswith((".c", ".h")) or not os.path.exists(os.path.join(REPO, f)):
            continue
        here = os.path.dirname(os.path.join(REPO, f))
        for name in INCLUDE.findall(open(os.path.join(REPO, f), errors="replace").read()):
            if name in GENERATED or os.path.exists(os.path.join(here, name)) \
                    or os.path.exists(os.path.join(root, name)):
                continue
            failures.append('%s: #include "%s" is neither in its folder nor a path from dissector/'
                            % (f, name))
    return failures


def main():
    listed = listed_files()
    tracked = dissector_files()
    sources = {f for f in tracked if not f.startswith("dissector/tests/")
               and (f.endswith((".c", ".h")) or os.path.basename(f) in ("CMakeLists.txt", "protocols.txt"))}
    failures = []
    for f in sorted(listed):
        if not os.path.exists(os.path.join(REPO, f)):
            failures.append("docs/architecture.md lists %s, which does not exist" % f)
    for f in sorted(sources - listed):
        failures.append("%s is not in docs/architecture.md's dissector tree" % f)
    failures += shape_failures(tracked)
    print("architecture.md: %d files listed, %d dissector source files" % (len(listed), len(sources)))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
