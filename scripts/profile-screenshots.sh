#!/usr/bin/env bash
# profile-screenshots.sh: the packet list of one capture per protocol,
# coloured by the chunkshark configuration profile (dissector/profile/chunkshark:
# its colorfilters, preferences with the Problem and Diagnosis columns, and
# io_graphs, used as Wireshark's default profile), for docs/gui.md:
#
#   scripts/profile-screenshots.sh [-b BUILD] [--display N] [PROTOCOL...]
#
# writes docs/screenshot-profile-<protocol>.png for each PROTOCOL (default:
# every protocol of the protocol table, dissector/protocols.txt). Each capture
# is the one docs/gui.md names, with the key log, Decode As or yojimbo
# preferences it needs; for a protocol not named below, the first capture its
# simulator makes (captures/captures.txt), with its key log if it has one.
# Runs Debian's wireshark-qt under Xvfb (scripts/wireshark-gui.sh). Exit
# status 0, 1 when Wireshark or a screenshot failed, 2 for bad arguments.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CHUNK_BUILD_DIR:-$repo/build}
display=87
gui_name=profile-screenshots
. "$repo/scripts/wireshark-gui.sh"

# The protocol table: name and simulator of each protocol.
table=$(awk '!/^#/ && NF == 7 { print $1, $3 }' "$repo/dissector/protocols.txt")
protocols=()
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -b | --build | --display) gui_option "$@"; shift 2 ;;
    -*) gui_die 2 "unknown argument $1 (try --help)" ;;
    *) awk -v p="$1" '$1 == p { found = 1 } END { exit !found }' <<<"$table" ||
           gui_die 2 "$1 is no protocol of dissector/protocols.txt"
       protocols+=("$1"); shift ;;
    esac
done
[ ${#protocols[@]} -gt 0 ] || mapfile -t protocols < <(awk '{ print $1 }' <<<"$table")

# shoot PROTOCOL: one Wireshark, one picture (a subshell: gui_profile's
# cleanup runs at its exit).
shoot() (
    local proto=$1 cap keys="" decode_as="" extra_prefs="" goto="" frame ws_args=() tshark_args=()
    case $proto in
    chunk) cap=fault-drop-slice ;;
    p2frag) cap=p2frag-loss-10 ;;
    netgame) cap=netgame-loss-10 ;;
    netcode) cap=netcode-loss-dup; keys=1 ;;
    reliable) cap=reliable-loss-10; decode_as='udp.port,50000,(none),Reliable'
              goto='reliable.analysis.lost'; tshark_args=(-d udp.port==50000,reliable) ;;
    yojimbo) cap=yojimbo-block-lost-fragment; keys=1; goto='yojimbo.resend'
             extra_prefs=$'yojimbo.channels: ro,ro\nyojimbo.message_types: 4' ;;
    *) local sim
       sim=$(awk -v p="$proto" '$1 == p { print $2 }' <<<"$table")
       cap=$(awk -v sim="$sim" '!/^#/ && NF && ($2 == sim || (sim == "chunk-sim" && $2 !~ /-sim$/)) { print $1; exit }' \
           "$repo/captures/captures.txt")
       [ -n "$cap" ] || gui_die 1 "$proto: no capture of its simulator ${sim:--} in captures/captures.txt"
       [ ! -f "$repo/captures/$cap.keys" ] || keys=1 ;;
    esac
    # Where the problems start, when they start below the first screen:
    # the list scrolled to it (the frame 15 below selected, at the bottom).
    if [ -n "$goto" ]; then
        frame=$(CHUNK_BUILD_DIR=$build "$repo/scripts/chunk-tshark" -2 -r "$repo/captures/$cap.pcap" \
            -o "netcode.keylog_file:$repo/captures/$cap.keys" "${tshark_args[@]}" \
            -Y "$goto" -T fields -e frame.number | head -n 1)
        [ -n "$frame" ] || gui_die 1 "no frame of $goto in $cap.pcap"
        ws_args=(-g "$((frame + 15))")
    fi
    gui_check "$build" "$display"
    gui_profile profile-screenshot 1600 900 620 150
    cp "$repo/dissector/profile/chunkshark/colorfilters" "$repo/dissector/profile/chunkshark/io_graphs" \
        "$gui_profile/"
    grep -v '^#' "$repo/dissector/profile/chunkshark/preferences" >> "$gui_profile/preferences"
    grep -v '^#' "$repo/dissector/profile/chunkshark/recent" >> "$gui_profile/recent"
    if [ -n "$keys" ]; then
        cp "$repo/captures/$cap.keys" "$gui_tmp/keys"
        echo "netcode.keylog_file: $gui_tmp/keys" >> "$gui_profile/preferences"
    fi
    [ -z "$extra_prefs" ] || echo "$extra_prefs" >> "$gui_profile/preferences"
    [ -z "$decode_as" ] || echo "decode_as_entry: $decode_as" > "$gui_profile/decode_as_entries"
    gui_start "$repo/captures/$cap.pcap" "${ws_args[@]}"
    # The pointer off the list (it would highlight a row); nothing selected.
    xdotool mousemove "$((gui_W - 1))" "$((gui_H - 1))"
    sleep 1
    gui_shoot_root "$gui_tmp/screen.png"
    # The packet list only (the panes below are Wireshark's own), 64 colours:
    # a small file.
    convert "$gui_tmp/screen.png" -crop 1600x690+0+0 +repage -colors 64 -strip \
        PNG8:"$repo/docs/screenshot-profile-$proto.png"
    echo "wrote docs/screenshot-profile-$proto.png ($(stat -c %s "$repo/docs/screenshot-profile-$proto.png") bytes)" >&2
)

for p in "${protocols[@]}"; do
    shoot "$p"
done
