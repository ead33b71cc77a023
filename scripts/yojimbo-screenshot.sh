#!/usr/bin/env bash
# yojimbo-screenshot.sh: docs/screenshot-yojimbo-stalled-block.png, a block
# that never completes, and its diagnosis, in the Wireshark GUI:
# captures/yojimbo-block-lost-fragment.pcap (yojimbo-sim --drop-block-fragment 2)
# with its key log, the channels its truth file records (ro,ro) and the
# example schema, the packet list filtered to the block's fragments
# (yojimbo.block.message_id), and the last send of the fragment that is never
# acknowledged selected with its yojimbo tree expanded down to the diagnosis.
#
#   scripts/yojimbo-screenshot.sh [-b BUILD] [-o FILE] [--display N] [--frame N]
#
# Runs Debian's wireshark-qt under Xvfb as scripts/screenshot.sh does (as user
# nobody when root, a private HOME with the preferences). --frame defaults to
# the frame carrying the diagnosis (found with scripts/chunk-tshark).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CHUNK_BUILD_DIR:-$repo/build}
output=$repo/docs/screenshot-yojimbo-stalled-block.png
display=79
frame=
cap=$repo/captures/yojimbo-block-lost-fragment

while [ $# -gt 0 ]; do
    case "$1" in
    -b|--build) build=$2; shift 2 ;;
    -o|--output) output=$2; shift 2 ;;
    --display) display=$2; shift 2 ;;
    --frame) frame=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "yojimbo-screenshot.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
done
plugsub=$(cat "$build/plugin-dir.txt" 2>/dev/null) || { echo "no $build/plugin-dir.txt: build first" >&2; exit 2; }
for tool in wireshark Xvfb xdotool convert import; do
    command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install wireshark-qt xvfb xdotool imagemagick)" >&2; exit 2; }
done
[ ! -e "/tmp/.X11-unix/X$display" ] || { echo "display :$display is in use (--display)" >&2; exit 2; }
if [ -z "$frame" ]; then
    frame=$(CHUNK_BUILD_DIR=$build "$repo/scripts/chunk-tshark" -r "$cap.pcap" -o "netcode.keylog_file:$cap.keys" \
        -o yojimbo.channels:ro,ro -o "yojimbo.schema_file:$repo/docs/yojimbo-example.schema" -2 \
        -Y yojimbo.analysis.diagnosis -T fields -e frame.number | head -n 1)
    [ -n "$frame" ] || { echo "no frame with a diagnosis in $cap.pcap" >&2; exit 1; }
fi

W=1400; H=1100
tmp=$(mktemp -d /tmp/yojimbo-screenshot.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/plugins/${plugsub#plugins/}" "$tmp/home/.config/wireshark" "$tmp/run"
cp "$build/$plugsub/chunk.so" "$tmp/plugins/${plugsub#plugins/}/chunk.so"
cp "$cap.pcap" "$tmp/capture.pcap"
cp "$cap.keys" "$tmp/keys"
cp "$repo/docs/yojimbo-example.schema" "$tmp/schema"
cat > "$tmp/home/.config/wireshark/recent_common" <<EOF2
gui.geometry_main_x: 0
gui.geometry_main_y: 0
gui.geometry_main_width: $W
gui.geometry_main_height: $H
gui.geometry_main_maximized: FALSE
EOF2
cat > "$tmp/home/.config/wireshark/recent" <<EOF2
gui.geometry_main_upper_pane: 300
gui.geometry_main_lower_pane: 720
EOF2
cat > "$tmp/home/.config/wireshark/preferences" <<EOF2
gui.layout_type: 1
gui.layout_content_1: PLIST
gui.layout_content_2: PDETAILS
gui.layout_content_3: PBYTES
netcode.keylog_file: $tmp/keys
yojimbo.channels: ro,ro
yojimbo.message_types: 4
yojimbo.schema_file: $tmp/schema
EOF2
chmod -R a+rX "$tmp"
as_user=()
if [ "$(id -u)" = 0 ]; then
    chown -R 65534:65534 "$tmp/home" "$tmp/run"
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
chmod 700 "$tmp/run"
Xvfb ":$display" -screen 0 "${W}x${H}x24" -ac -nolisten tcp > "$tmp/xvfb.log" 2>&1 &
pids+=($!)
export DISPLAY=:$display
for _ in $(seq 50); do xdotool getdisplaygeometry > /dev/null 2>&1 && break; sleep 0.1; done
"${as_user[@]}" env HOME="$tmp/home" XDG_RUNTIME_DIR="$tmp/run" WIRESHARK_PLUGIN_DIR="$tmp/plugins" \
    DISPLAY=":$display" wireshark -r "$tmp/capture.pcap" --disable-protocol chunk \
    -Y "yojimbo.block.message_id" -g "$frame" -z yojimbo,blocks_table > "$tmp/wireshark.log" 2>&1 &
pids+=($!)
win=""
for _ in $(seq 100); do
    win=$(xdotool search --onlyvisible --name 'capture.pcap' 2>/dev/null | head -n 1 || true)
    [ -n "$win" ] && break
    sleep 0.2
done
[ -n "$win" ] || { echo "no Wireshark window; its log:" >&2; cat "$tmp/wireshark.log" >&2; exit 1; }
sleep 3
# Statistics > yojimbo Blocks, opened with -z as the menu does: moved to the
# bottom of the screen, over the bytes pane.
dlg=$(xdotool search --onlyvisible --name 'yojimbo Blocks' 2>/dev/null | head -n 1 || true)
if [ -n "$dlg" ]; then
    xdotool windowsize "$dlg" "$W" 250
    xdotool windowmove "$dlg" 0 $((H - 250))
    sleep 1
fi
xdotool windowactivate "$win" 2>/dev/null || true
sleep 0.5
# The details pane: last top-level line (yojimbo), expand its subtrees,
# then go to the last line (the diagnosis) so that the pane scrolls to it.
xdotool mousemove --window "$win" 200 460 click 1
sleep 0.5
xdotool key --window "$win" End
xdotool key --window "$win" shift+Right
sleep 0.5
xdotool key --window "$win" End
sleep 1
xdotool mousemove 0 "$H"
import -window root "$tmp/raw.png"
mkdir -p "$(dirname "$output")"
convert "$tmp/raw.png" -colors 256 -strip PNG8:"$output"
echo "wrote $output ($(stat -c %s "$output") bytes)" >&2
