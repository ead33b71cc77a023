#!/usr/bin/env bash
# flow-screenshot.sh: the Flow Graph and Conversations pictures of docs/gui.md,
# in Debian's wireshark-qt (4.0) under Xvfb, run as nobody with the plugin of
# the build tree (scripts/wireshark-gui.sh):
#   docs/screenshot-flow-chunk.png     Statistics > Flow Graph, flow type
#                                      "Chunk Flows", on captures/fault-drop-slice.pcap
#   docs/screenshot-conv-netcode.png   Statistics > Conversations, the netcode
#                                      tab, on captures/netcode-server-full.pcap
#                                      with its key log
# The menus are opened with the mouse at the places Wireshark 4.0 draws them
# (the Statistics menu's Flow Graph entry, the flow type box and the
# Conversations dialog's protocol list), as scripts/netgame-screenshot.sh does.
#
#   scripts/flow-screenshot.sh flow|conv [-b BUILD] [--display N]
#
# Needs wireshark-qt, xvfb, xdotool, imagemagick (and setpriv as root).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CHUNK_BUILD_DIR:-$repo/build}
display=79
gui_name=flow-screenshot.sh
. "$repo/scripts/wireshark-gui.sh"
what=${1:-}
case "$what" in
flow | conv) shift ;;
-h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) gui_die 2 "say flow or conv (try --help)" ;;
esac
while [ $# -gt 0 ]; do
    case "$1" in
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) gui_option "$@"; shift 2 ;;
    esac
done
gui_check "$build" "$display"

# Statistics (the menu bar's fifth entry), then one of its entries at y.
statistics_entry() {
    xdotool windowactivate --sync "$gui_win" 2>/dev/null || true
    xdotool mousemove 325 10 click 1
    sleep 2
    xdotool mousemove 360 "$1" click 1
}

flow_graph() {
    local dlg
    gui_profile flow-screenshot 1000 640 300 200
    gui_start "$repo/captures/fault-drop-slice.pcap"
    statistics_entry 589
    dlg=$(gui_dialog 'Flow')
    [ -n "$dlg" ] || gui_die 1 "no Flow Graph window"
    xdotool windowmove "$dlg" 0 0 windowsize "$dlg" "$gui_W" "$gui_H"
    sleep 3
    # The flow type box, then its second entry (All Flows, Chunk Flows, ...).
    xdotool mousemove 560 585 click 1
    sleep 1
    xdotool key Down Return
    sleep 4
    gui_shoot_window "$dlg" "$repo/docs/screenshot-flow-chunk.png"
}

conversations() {
    local dlg
    gui_profile conv-screenshot 1200 420 150 100
    cp "$repo/captures/netcode-server-full.keys" "$gui_tmp/keys"
    gui_start "$repo/captures/netcode-server-full.pcap" --disable-protocol chunk \
        -o "netcode.keylog_file:$gui_tmp/keys"
    statistics_entry 87
    dlg=$(gui_dialog 'Conversations')
    [ -n "$dlg" ] || gui_die 1 "no Conversations window"
    xdotool windowmove "$dlg" 0 0 windowsize "$dlg" "$gui_W" "$gui_H"
    sleep 3
    # The protocol list filtered to netcode, its box ticked, then its tab
    # (after IPv6: the tabs are in name order).
    xdotool mousemove 115 356 click 1
    xdotool type netcode
    sleep 1
    xdotool mousemove 31 274 click 1
    sleep 2
    xdotool mousemove 505 26 click 1
    sleep 2
    gui_shoot_window "$dlg" "$repo/docs/screenshot-conv-netcode.png"
}

if [ "$what" = flow ]; then flow_graph; else conversations; fi
