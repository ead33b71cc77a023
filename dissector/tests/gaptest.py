"""Helpers for the tests of captures that miss datagrams (a simulator's
--capture-drop START:COUNT[:DIR], a capture's kernel drops; --capture-from N,
a capture begun mid-session): the captures of captures.txt made so, the
drops their truth files record, the expert rows of one protocol by severity,
and the frames carrying a protocol's "Packets not captured" field.
"""
import json
import os
import re

import chunktest as ct

CAPTURES = os.path.join(ct.REPO, "captures")


def gap_captures(program, option="--capture-drop"):
    """The names of captures.txt made by program with option."""
    out = []
    with open(os.path.join(CAPTURES, "captures.txt")) as f:
        for line in f:
            p = line.split()
            if len(p) > 1 and p[1] == program and option in p:
                out.append(p[0])
    return out


def truth(name):
    with open(os.path.join(CAPTURES, name + ".truth.json")) as f:
        return json.load(f)


def experts(args, protocol):
    """{(severity, summary): count} of -z expert's rows of protocol (the
    name as -z expert prints it), severity one of Errors, Warns, Notes,
    Chats, Comments."""
    rows = {}
    section = None
    for line in ct.tshark(list(args) + ["-q", "-z", "expert"]).splitlines():
        s = re.match(r"^(Errors|Warns|Notes|Chats|Comments) \(\d+\)", line)
        if s:
            section = s.group(1)
            continue
        m = re.match(r"^\s+(\d+)\s+\S+\s+(\S+)\s+(.*)$", line)
        if m and section and m.group(2).lower() == protocol.lower():
            rows[(section, m.group(3))] = rows.get((section, m.group(3)), 0) + int(m.group(1))
    return rows


def problems(rows):
    """The warning and error rows of experts()."""
    return sorted((k, v) for k, v in rows.items() if k[0] in ("Errors", "Warns"))


def field_frames(args, field, extra=(), where=None):
    """[(frame number, value of field, values of extra...)] of the frames
    that carry field (or match the display filter where)."""
    out = ct.tshark(list(args) + ["-Y", where or field, "-T", "fields", "-E", "separator=/t", "-e", "frame.number",
                                  "-e", field] + [a for e in extra for a in ("-e", e)])
    rows = []
    for line in out.splitlines():
        v = line.split("\t")
        rows.append((int(v[0]),) + tuple(v[1:]))
    return rows
