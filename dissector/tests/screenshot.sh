#!/usr/bin/env bash
# screenshot.sh OUT.png: remakes docs/screenshot-ack.png. Runs the real
# Wireshark GUI (wireshark-qt) under Xvfb as user nobody with the plugin from
# CHUNK_BUILD_DIR (default build-dissector), opens captures/loss-10-jitter.pcap
# at frame 22 (an ack), expands the Chunk tree and selects slice 5's bit.
# Needs xvfb, xdotool, imagemagick. The clicks assume the 1280x1024 screen
# and Wireshark 4.0's default layout.
set -euo pipefail
out=${1:?usage: screenshot.sh OUT.png}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${CHUNK_BUILD_DIR:-$repo/build-dissector}
tmp=$(mktemp -d /tmp/chunk-shot.XXXXXX)
mkdir -p "$tmp/pl/4.0/epan" "$tmp/home"
cp "$build/plugins/4.0/epan/chunk.so" "$tmp/pl/4.0/epan/"
cp "$repo/captures/loss-10-jitter.pcap" "$tmp/"
chmod -R a+rX "$tmp"
chown 65534:65534 "$tmp/home"
export DISPLAY=:97
Xvfb :97 -screen 0 1280x1024x24 -ac >/dev/null 2>&1 &
xvfb=$!
ws=
cleanup() { [ -n "$ws" ] && kill "$ws" 2>/dev/null; kill "$xvfb" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
sleep 2
setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp/home" \
    WIRESHARK_PLUGIN_DIR="$tmp/pl" DISPLAY=$DISPLAY \
    wireshark -r "$tmp/loss-10-jitter.pcap" -g 22 >/dev/null 2>&1 &
ws=$!
sleep 12
win=$(xdotool search --onlyvisible --name loss-10-jitter | head -1)
xdotool windowmove "$win" 0 0 windowsize "$win" 1280 1024
sleep 2
# Packet list smaller, details pane wider.
xdotool mousemove 300 546 mousedown 1 mousemove 300 400 mousemove 300 300 mouseup 1
sleep 1
xdotool mousemove 640 823 mousedown 1 mousemove 800 823 mousemove 900 823 mouseup 1
sleep 1
# Select "Chunk Protocol", expand its subtrees, select "Slice 5: missing".
xdotool mousemove 160 379 click 1
sleep 0.5
xdotool key shift+Right
sleep 1
xdotool mousemove 209 651 click 1
sleep 1
import -window root "$tmp/shot.png"
convert "$tmp/shot.png" -strip "$out"
echo "wrote $out"
