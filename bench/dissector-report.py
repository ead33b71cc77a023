#!/usr/bin/env python3
"""dissector-report.py: the tables of bench/dissector.sh from its raw.tsv.

usage: dissector-report.py RAW.TSV [TSHARK-VERSION [CAPTURE-COMMAND]]

Prints Markdown: medians per (mode, size, configuration) with ratios to the
base configuration (--disable-protocol chunk) and to the data configuration
(the same capture decoded as plain data) of the same mode and size, the
goals checked against them, and how peak memory grows with the capture.
Exit status 0, 2 for bad arguments or an unreadable file.
"""
import csv
import statistics
import sys

GOALS = [
    # (label, mode, config, limit, reference): the decoder alone and the
    # plugin as shipped within 1.15x of base; the analysis, with and without
    # reassembly, within 1.30x of base and of the capture decoded as data.
    ("the decoder alone, summary", "summary", "decode", 1.15, "base"),
    ("the plugin as shipped (analysis and reassembly on), summary", "summary", "full", 1.15, "base"),
    ("analysis and reassembly, summary", "summary", "full", 1.30, "base"),
    ("analysis without reassembly, summary", "summary", "noreasm", 1.30, "base"),
    ("analysis and reassembly, summary, against data", "summary", "full", 1.30, "data"),
]


def load(path):
    runs = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            key = (row["mode"], row["size"], row["config"])
            r = runs.setdefault(key, {"frames": int(row["frames"]), "wall": [], "cpu": [], "rss": [], "load": []})
            r["wall"].append(float(row["wall_s"]))
            r["cpu"].append(float(row["user_s"]) + float(row["sys_s"]))
            r["rss"].append(int(row["maxrss_kb"]) / 1024.0)
            r["load"].append(float(row["load1"]))
    return runs


def med(r, k):
    return statistics.median(r[k])


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) < 2 else sys.stdout)
        return 2 if len(argv) < 2 else 0
    try:
        runs = load(argv[1])
    except (OSError, KeyError, ValueError) as e:
        print(f"dissector-report.py: cannot read {argv[1]}: {e}", file=sys.stderr)
        return 2
    if argv[2:]:
        print(f"tshark: {argv[2]}  ")
    if argv[3:]:
        print(f"capture: `{argv[3]}`  ")
    loads = [x for r in runs.values() for x in r["load"]]
    if loads:
        print(f"load average during the runs: {min(loads):.1f} to {max(loads):.1f} (2 cores)")
    print()
    print("| mode | size | frames | configuration | runs | wall s | CPU s | CPU s min-max | peak RSS MiB "
          "| wall × base | CPU × base | RSS × base | wall × data | CPU × data | RSS × data |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    order = {"base": 0, "data": 1, "decode": 2, "noreasm": 3, "full": 4}
    sizes = {"quarter": 0, "half": 1, "full": 2}
    for key in sorted(runs, key=lambda k: (k[0] != "summary", sizes.get(k[1], 9), order.get(k[2], 9))):
        mode, size, config = key
        r = runs[key]
        ratios = []
        for ref in ("base", "data"):
            b = runs.get((mode, size, ref))
            if b:
                ratios.append(f"{med(r, 'wall') / med(b, 'wall'):.2f} | {med(r, 'cpu') / med(b, 'cpu'):.2f} | "
                              f"{med(r, 'rss') / med(b, 'rss'):.2f}")
            else:
                ratios.append(" | | ")
        ratios = " | ".join(ratios)
        print(f"| {mode} | {size} | {r['frames']} | {config} | {len(r['wall'])} | {med(r, 'wall'):.2f} | "
              f"{med(r, 'cpu'):.2f} | {min(r['cpu']):.2f}-{max(r['cpu']):.2f} | {med(r, 'rss'):.0f} | {ratios} |")
    print()

    print("Goals (medians, full-size capture, ratio to the reference configuration):")
    print()
    for label, mode, config, limit, ref in GOALS:
        r = runs.get((mode, "full", config))
        base = runs.get((mode, "full", ref))
        if not r or not base:
            print(f"- {label}: not measured")
            continue
        cpu = med(r, "cpu") / med(base, "cpu")
        wall = med(r, "wall") / med(base, "wall")
        rss = med(r, "rss") / med(base, "rss")
        ok = lambda x: "met" if x <= limit else "MISSED"
        print(f"- {label} (≤ {limit}× {ref}): CPU time {cpu:.2f}× {ok(cpu)}, wall time {wall:.2f}× {ok(wall)}, "
              f"peak memory {rss:.2f}× {ok(rss)}")
    print()

    grow = [(s, runs.get(("summary", s, c))) for s in ("quarter", "half", "full") for c in ("base",)]
    if all(r for _, r in grow):
        print("Memory growth in summary mode: peak RSS above the quarter-size run, per 1000 frames added")
        print("(the capture itself grows by about 1 MB per 1000 frames):")
        print()
        print("| configuration | RSS at 1/4, 1/2, 1 (MiB) | KiB per 1000 frames, 1/4→1/2 | 1/2→1 |")
        print("|---|---|---:|---:|")
        for c in ("base", "noreasm", "full"):
            rs = [runs.get(("summary", s, c)) for s in ("quarter", "half", "full")]
            if not all(rs):
                continue
            m = [med(r, "rss") for r in rs]
            f = [r["frames"] for r in rs]
            s1 = (m[1] - m[0]) * 1024 / ((f[1] - f[0]) / 1000)
            s2 = (m[2] - m[1]) * 1024 / ((f[2] - f[1]) / 1000)
            print(f"| {c} | {m[0]:.0f}, {m[1]:.0f}, {m[2]:.0f} | {s1:.0f} | {s2:.0f} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
