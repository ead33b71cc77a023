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
# Runs Debian's wireshark-qt under Xvfb through scripts/wireshark-gui.sh (as user
# nobody when root, a private HOME with the preferences). --frame defaults to
# the frame carrying the diagnosis (found with scripts/chunk-tshark).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CHUNK_BUILD_DIR:-$repo/build}
output=$repo/docs/screenshot-yojimbo-stalled-block.png
display=79
frame=
cap=$repo/captures/yojimbo-block-lost-fragment
gui_name=yojimbo-screenshot.sh
. "$repo/scripts/wireshark-gui.sh"

while [ $# -gt 0 ]; do
    case "$1" in
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) gui_option "$@"; shift 2 ;;
    esac
done
gui_check "$build" "$display"
if [ -z "$frame" ]; then
    frame=$(CHUNK_BUILD_DIR=$build "$repo/scripts/chunk-tshark" -r "$cap.pcap" -o "netcode.keylog_file:$cap.keys" \
        -o yojimbo.channels:ro,ro -o "yojimbo.schema_file:$repo/docs/yojimbo-example.schema" -2 \
        -Y yojimbo.analysis.diagnosis -T fields -e frame.number | head -n 1)
    [ -n "$frame" ] || { echo "no frame with a diagnosis in $cap.pcap" >&2; exit 1; }
fi

gui_profile yojimbo-screenshot 1400 1100 300 720
cp "$cap.keys" "$gui_tmp/keys"
cp "$repo/docs/yojimbo-example.schema" "$gui_tmp/schema"
cat >> "$gui_profile/preferences" <<EOF
netcode.keylog_file: $gui_tmp/keys
yojimbo.channels: ro,ro
yojimbo.message_types: 4
yojimbo.schema_file: $gui_tmp/schema
EOF
gui_start "$cap.pcap" --disable-protocol chunk -Y "yojimbo.block.message_id" -g "$frame" -z yojimbo,blocks_table
# Statistics > Yojimbo Blocks, opened with -z as the menu does: moved to the
# bottom of the screen, over the bytes pane.
dlg=$(gui_dialog 'Yojimbo Blocks')
if [ -n "$dlg" ]; then
    xdotool windowsize "$dlg" "$gui_W" 250
    xdotool windowmove "$dlg" 0 $((gui_H - 250))
    sleep 1
fi
xdotool windowactivate "$gui_win" 2>/dev/null || true
sleep 0.5
# The details pane: last top-level line (yojimbo), expand its subtrees,
# then go to the last line (the diagnosis) so that the pane scrolls to it.
gui_open_last_tree 460
xdotool key --window "$gui_win" End
sleep 1
xdotool mousemove 0 "$gui_H"
gui_shoot_root "$output"
