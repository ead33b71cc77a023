#!/usr/bin/env bash
# netcode-screenshot.sh: docs/screenshot-netcode.png, a decrypted netcode
# connection in the Wireshark GUI: captures/real-netcode-cs.pcapng with its
# key log (captures/real-netcode-cs.keys), the handshake and first payloads
# in the packet list, the request's decrypted connect token in the details,
# and the "Decrypted netcode payload" tab under the bytes.
#
#   scripts/netcode-screenshot.sh [-b BUILD] [-o FILE] [--display N] [--frame N]
#
# Runs Debian's wireshark-qt under Xvfb as scripts/screenshot.sh does (as user
# nobody when root, a private HOME for the layout). chunk is disabled in the
# GUI: it holds UDP port 40000, where the real capture's traffic is.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CHUNK_BUILD_DIR:-$repo/build}
output=$repo/docs/screenshot-netcode.png
display=78
frame=1
select=16

while [ $# -gt 0 ]; do
    case "$1" in
    -b|--build) build=$2; shift 2 ;;
    -o|--output) output=$2; shift 2 ;;
    --display) display=$2; shift 2 ;;
    --frame) frame=$2; shift 2 ;;
    --select) select=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "netcode-screenshot.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
done
plugsub=$(cat "$build/plugin-dir.txt" 2>/dev/null) || { echo "no $build/plugin-dir.txt: build first" >&2; exit 2; }
for tool in wireshark Xvfb xdotool convert import; do
    command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install wireshark-qt xvfb xdotool imagemagick)" >&2; exit 2; }
done
[ ! -e "/tmp/.X11-unix/X$display" ] || { echo "display :$display is in use (--display)" >&2; exit 2; }

W=1400; H=1100
tmp=$(mktemp -d /tmp/netcode-screenshot.XXXXXX)
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
cp "$repo/captures/real-netcode-cs.pcapng" "$tmp/capture.pcapng"
cp "$repo/captures/real-netcode-cs.keys" "$tmp/keys"
cat > "$tmp/home/.config/wireshark/recent_common" <<EOF2
gui.geometry_main_x: 0
gui.geometry_main_y: 0
gui.geometry_main_width: $W
gui.geometry_main_height: $H
gui.geometry_main_maximized: FALSE
EOF2
cat > "$tmp/home/.config/wireshark/recent" <<EOF2
gui.geometry_main_upper_pane: 260
gui.geometry_main_lower_pane: 560
EOF2
cat > "$tmp/home/.config/wireshark/preferences" <<EOF2
gui.layout_type: 1
gui.layout_content_1: PLIST
gui.layout_content_2: PDETAILS
gui.layout_content_3: PBYTES
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
    DISPLAY=":$display" wireshark -r "$tmp/capture.pcapng" --disable-protocol chunk \
    -o "netcode.keylog_file:$tmp/keys" -g "$frame" > "$tmp/wireshark.log" 2>&1 &
pids+=($!)
win=""
for _ in $(seq 100); do
    win=$(xdotool search --onlyvisible --name 'capture.pcapng' 2>/dev/null | head -n 1 || true)
    [ -n "$win" ] && break
    sleep 0.2
done
[ -n "$win" ] || { echo "no Wireshark window; its log:" >&2; cat "$tmp/wireshark.log" >&2; exit 1; }
sleep 3
# The details pane: last top-level line (netcode), expand its subtrees,
# move down to the decrypted token (its bytes tab shows).
xdotool mousemove --window "$win" 200 420 click 1
sleep 0.5
xdotool key --window "$win" End
xdotool key --window "$win" shift+Right
sleep 0.5
for _ in $(seq "$select"); do xdotool key --window "$win" Down; done
sleep 1
xdotool mousemove 0 "$H"
import -window root "$tmp/raw.png"
mkdir -p "$(dirname "$output")"
convert "$tmp/raw.png" -colors 256 -strip PNG8:"$output"
echo "wrote $output ($(stat -c %s "$output") bytes)" >&2
