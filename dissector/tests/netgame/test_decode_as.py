#!/usr/bin/env python3
"""How netgame finds its traffic (docs/netgame.md, "Finding the traffic"):

- captures/netgame-other-id.pcap (protocol id 0x11112222, not in
  netgame.protocol_ids; UDP 30000 <-> 30001): with the defaults no frame is
  netgame (the port claims only well-formed netgame); with Decode As of
  either port (-d udp.port==30000,netgame or 30001) every frame is, each
  with the warning netgame.protocol_id.unexpected; with the id configured
  every frame is, without it;
- captures/netgame-clean.pcap: netgame on the port alone (heuristic off),
  not once the port preference moves away (heuristic off), and again by
  Decode As of the moved-from port.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngtest as ng  # noqa: E402

CAPTURES = os.path.join(ng.REPO, "captures")
OTHER = os.path.join(CAPTURES, "netgame-other-id.pcap")
CLEAN = os.path.join(CAPTURES, "netgame-clean.pcap")
NO_HEUR = ["--disable-heuristic", "netgame_udp"]


def netgame_frames(pcap, args):
    """(frames, frames decoded as netgame, frames with the unexpected-id
    warning), from one run: the expert info's field is printed (non-empty)
    where it is raised."""
    rows = ng.fields(pcap, ["frame.protocols", "netgame.protocol_id", "netgame.protocol_id.unexpected"],
                     extra=list(args))
    return (len(rows), sum(1 for r in rows if "netgame" in r[0].split(":")),
            sum(1 for r in rows if len(r) > 2 and r[2].strip()))


def main():
    F = ng.Failures()

    def expect(name, pcap, args, netgame, unexpected):
        n, ng_frames, warn = netgame_frames(pcap, args)
        print("%s: %d frames, %d netgame, %d with the unexpected-id warning" % (name, n, ng_frames, warn))
        F.check(n > 10, "%s: only %d frames" % (name, n))
        F.check(ng_frames == (n if netgame else 0), "%s: %d of %d frames netgame, want %s" % (
            name, ng_frames, n, "all" if netgame else "none"))
        F.check(warn == (n if unexpected else 0), "%s: %d of %d frames with netgame.protocol_id.unexpected" % (
            name, warn, n))

    expect("other id, defaults", OTHER, [], False, False)
    expect("other id, two passes", OTHER, ["-2"], False, False)
    expect("other id, Decode As 30000", OTHER, ["-d", "udp.port==30000,netgame"], True, True)
    expect("other id, Decode As 30001", OTHER, ["-d", "udp.port==30001,netgame"], True, True)
    expect("other id, Decode As 30000, two passes", OTHER, ["-2", "-d", "udp.port==30000,netgame"], True, True)
    expect("other id, id configured", OTHER, ["-o", "netgame.protocol_ids:0x11223344,0x11112222"], True, False)
    expect("clean, port alone", CLEAN, NO_HEUR, True, False)
    expect("clean, port moved", CLEAN, ["-o", "netgame.udp.port:1"] + NO_HEUR, False, False)
    expect("clean, port moved, Decode As 30000", CLEAN,
           ["-o", "netgame.udp.port:1", "-d", "udp.port==30000,netgame"] + NO_HEUR, True, False)
    expect("clean, port heuristic off, netgame_udp on", CLEAN, ["--disable-heuristic", "netgame_udp_port"],
           True, False)
    F.finish("netgame.decode_as")


if __name__ == "__main__":
    main()
