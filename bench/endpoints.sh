#!/usr/bin/env bash
# bench/endpoints.sh: how close the reference endpoints come to the ideal
# transfer time, measured with chunk-sim in virtual time.
#
#   bench/endpoints.sh [--bin DIR] [--seeds N]
#
# 1. One 256 KiB chunk, sender budget 1 Mbit/s (125000 B/s), 25 ms each way
#    (RTT 50 ms), loss 0, 1, 10 and 30% on both links (slices and acks).
#    Ideal = bytes on the wire / rate / (1 - loss) + one RTT, where bytes on the
#    wire = 256 full slices x (1037 + 28 bytes of IPv4/UDP) = 272640. Time to
#    deliver = when the receiving application has the chunk (popped), counted
#    from when it was queued at t = 0; the sender learns it half an RTT later
#    (also shown). Goal: within 1.10x of ideal. Each loss is run with seeds
#    1..N (default 10): mean and worst ratio.
# 2. The initial burst: the same chunk with --burst 256K and no sender budget,
#    over a 100 Mbit/s link with a 512 KiB router buffer and 50 ms RTT.
#    Goal: under 2 RTT + size / link rate = 0.1 + 272640 / 12.5e6 = 0.1218 s.
#    Also shown with chunk-sim's default 64 KiB buffer, which the burst
#    overflows, with no budget and with a 100 Mbit/s budget after the burst.
#
# Prints Markdown tables for bench/RESULTS.md. Exit status: 0 every goal met,
# 1 a goal missed, 2 bad arguments or chunk-sim missing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
bin=""
seeds=10
while [ $# -gt 0 ]; do
    case "$1" in
    --bin) bin=${2:?--bin needs a folder}; shift 2 ;;
    --seeds) seeds=${2:?--seeds needs a number}; shift 2 ;;
    -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "endpoints.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
case "$seeds" in ''|*[!0-9]*|0) echo "endpoints.sh: --seeds wants a positive integer" >&2; exit 2 ;; esac
if [ -z "$bin" ]; then
    for candidate in "$repo/build-sim/bin" "$repo/build/bin"; do
        if [ -x "$candidate/chunk-sim" ]; then bin=$candidate; break; fi
    done
fi
[ -n "$bin" ] && [ -x "$bin/chunk-sim" ] || { echo "endpoints.sh: chunk-sim not found; build first or pass --bin DIR" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Prints "popped sender_completed slices_sent resends" of the run's only chunk.
run() {
    "$bin/chunk-sim" -q --chunks 1 --chunk-size 256K --truth "$tmp/truth.json" "$@" || true
    python3 - "$tmp/truth.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
c = t["chunks"][0]
if not c["intact"]:
    print("nan nan 0 0")
else:
    print(c["time_popped"], c["time_sender_completed"], c["slices_sent"], c["resends"])
PY
}

status=0
echo "### One 256 KiB chunk at 1 Mbit/s, RTT 50 ms (seeds 1..$seeds)"
echo
echo "The sender's resend delay is 1.25 x RTT when it has an RTT estimate (behaviour.md),"
echo "else 100 ms. The goal is judged on the first (a game has an RTT estimate); the"
echo "second shows a sender without one."
echo
echo "| resend delay | loss | ideal (s) | delivered, mean (s) | ratio mean | ratio worst | sender done, mean (s) | slices sent, mean | goal 1.10x |"
echo "|---|---|---|---|---|---|---|---|---|"
for mode in rtt default; do
    if [ "$mode" = rtt ]; then rtt_args=(--rtt 50ms); label="62.5 ms (1.25 x RTT)"; else rtt_args=(); label="100 ms (no RTT estimate)"; fi
    for loss in 0 1 10 30; do
        : > "$tmp/rows"
        for seed in $(seq 1 "$seeds"); do
            run --rate 125000 --latency 25ms --loss "$loss%" --seed "$seed" "${rtt_args[@]}" >> "$tmp/rows"
        done
        line=$(python3 - "$tmp/rows" "$loss" "$label" <<'PY'
import sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
loss = float(sys.argv[2]) / 100
ideal = 256 * (1037 + 28) / 125000 / (1 - loss) + 0.05
ratios = [r[0] / ideal for r in rows]
mean = lambda xs: sum(xs) / len(xs)
ok = all(x == x for x in ratios) and max(ratios) <= 1.10
print("| %s | %d%% | %.3f | %.3f | %.3f | %.3f | %.3f | %.0f | %s |" % (
    sys.argv[3], loss * 100, ideal, mean([r[0] for r in rows]), mean(ratios), max(ratios),
    mean([r[1] for r in rows]), mean([r[2] for r in rows]), "met" if ok else "MISSED"))
PY
)
        echo "$line"
        if [ "$mode" = rtt ]; then
            case "$line" in *MISSED*) status=1 ;; esac
        fi
    done
done
echo
echo "### Initial burst (--burst 256K), one 256 KiB chunk, 100 Mbit/s link, RTT 50 ms"
echo
echo "| router buffer | sender budget after the burst | delivered (s) | sender done (s) | goal (s) | ratio to goal | slices sent |"
echo "|---|---|---|---|---|---|---|"
for setup in 512K:0 64K:0 64K:100Mbit; do
    queue=${setup%%:*} rate=${setup#*:}
    read -r popped done sent _ < <(run --rate "$rate" --burst 256K --bandwidth 100Mbit --queue "$queue" --latency 25ms --seed 1)
    line=$(python3 -c '
import sys
popped, done, sent, queue, rate = float(sys.argv[1]), float(sys.argv[2]), int(float(sys.argv[3])), sys.argv[4], sys.argv[5]
goal = 2 * 0.05 + 256 * (1037 + 28) / 12.5e6
print("| %s | %s | %.3f | %.3f | %.4f | %.2f | %d | %s" % (queue, "none" if rate == "0" else rate, popped, done, goal,
      popped / goal, sent, "met" if popped < goal else "MISSED"))
' "$popped" "$done" "$sent" "$queue" "$rate")
    # The goal is for the buffer that holds the whole burst; the 64 KiB rows
    # show what a small router buffer does to it.
    if [ "$setup" = 512K:0 ]; then
        case "$line" in *MISSED) status=1 ;; esac
    fi
    echo "${line% *}"
done
exit $status
