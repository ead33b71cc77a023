#!/usr/bin/env bash
# netcode-screenshot.sh: docs/screenshot-netcode.png, a decrypted netcode
# connection in the Wireshark GUI: captures/real-netcode-cs.pcapng with its
# key log (captures/real-netcode-cs.keys), the handshake and first payloads
# in the packet list, the request's decrypted connect token in the details,
# and the "Decrypted netcode payload" tab under the bytes.
#
#   scripts/netcode-screenshot.sh [-b BUILD] [-o FILE] [--display N] [--frame N]
#
# Runs Debian's wireshark-qt under Xvfb through scripts/wireshark-gui.sh (as user
# nobody when root, a private HOME for the layout). chunk is disabled in the
# GUI: it holds UDP port 40000, where the real capture's traffic is.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CHUNK_BUILD_DIR:-$repo/build}
output=$repo/docs/screenshot-netcode.png
display=78
frame=1
select=16
gui_name=netcode-screenshot.sh
. "$repo/scripts/wireshark-gui.sh"

while [ $# -gt 0 ]; do
    case "$1" in
    --select) select=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) gui_option "$@"; shift 2 ;;
    esac
done
gui_check "$build" "$display"

gui_profile netcode-screenshot 1400 1100 260 560
cp "$repo/captures/real-netcode-cs.keys" "$gui_tmp/keys"
gui_start "$repo/captures/real-netcode-cs.pcapng" --disable-protocol chunk \
    -o "netcode.keylog_file:$gui_tmp/keys" -g "$frame"
# The details pane: last top-level line (netcode), expand its subtrees,
# move down to the decrypted token (its bytes tab shows).
gui_open_last_tree 420
gui_down "$select"
sleep 1
xdotool mousemove 0 "$gui_H"
gui_shoot_root "$output"
