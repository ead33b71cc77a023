#!/usr/bin/env bash
# bench/article-capture.sh: makes a large capture out of
# captures/article-program.pcap (61 frames of the article's own program: one
# chunk sent and acknowledged) repeated 2^13 = 8192 times, 499 712 frames,
# each copy shifted in time to follow the previous one, so that the dissector
# sees the same traffic over and over as a long session would. Not committed
# (about 470 MB); make it where the benchmark runs.
#
#   bench/article-capture.sh [-o FILE] [-d DOUBLINGS]
#
# -o FILE       where to write (default: article-500k.pcap in the current folder)
# -d DOUBLINGS  how many times the capture is doubled (default 13)
#
# Each doubling appends (mergecap -a) a copy of the file so far shifted
# (editcap -t) by the file's span plus one 60-Hz frame. Exit 0 written,
# 1 a tool failed, 2 bad arguments.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=article-500k.pcap
doublings=13
while [ $# -gt 0 ]; do
    case "$1" in
    -o) out=${2:?-o needs a file}; shift 2 ;;
    -d) doublings=${2:?-d needs a number}; shift 2 ;;
    -h|--help) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "article-capture.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
[[ "$doublings" =~ ^[0-9]+$ ]] && [ "$doublings" -le 20 ] ||
    { echo "article-capture.sh: -d wants a number from 0 to 20" >&2; exit 2; }
for tool in editcap mergecap capinfos; do
    command -v "$tool" >/dev/null || { echo "article-capture.sh: $tool not found (apt-get install tshark)" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$repo/captures/article-program.pcap" "$tmp/cur.pcap"
for _ in $(seq 1 "$doublings"); do
    # Span of the file so far, in seconds, plus 1/60 s.
    span=$(capinfos -M -u -T "$tmp/cur.pcap" | awk -F'\t' 'NR == 2 { printf "%.6f", $2 + 1 / 60 }')
    editcap -t "$span" "$tmp/cur.pcap" "$tmp/shift.pcap"
    mergecap -a -F pcap -w "$tmp/next.pcap" "$tmp/cur.pcap" "$tmp/shift.pcap"
    mv "$tmp/next.pcap" "$tmp/cur.pcap"
done
mv "$tmp/cur.pcap" "$out"
echo "$out: $(capinfos -M -c -T "$out" | awk -F'\t' 'NR == 2 { print $2 }') frames"
