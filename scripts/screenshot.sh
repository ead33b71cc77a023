#!/usr/bin/env bash
# screenshot.sh: make the Wireshark GUI pictures in docs/ with the plugin
# from the build tree:
#
#   scripts/screenshot.sh -b build-bench ack         # docs/screenshot-ack.png
#   scripts/screenshot.sh -b build-bench transfers   # docs/screenshot-transfers.png
#   scripts/screenshot.sh -b build-bench experts     # docs/screenshot-experts.png
#   scripts/screenshot.sh -b build-bench menu        # docs/screenshot-menu.png
#   scripts/screenshot.sh -r captures/netgame-loss-10.pcap -o docs/screenshot-colours-netgame.png colours
#   scripts/screenshot.sh -r captures/p2frag-loss-10.pcap --table p2frag,packets_table \
#       --title 'P2frag Packets' -o docs/screenshot-p2frag-table.png table
#
# ack: an ack packet with its bitfield expanded.
# transfers: the Statistics > Chunk Transfers table (opened with
# `-z chunk,transfers_table`, as the menu item does) on
# captures/fault-never-pops.pcap, one healthy and one stalled transfer with
# its diagnosis.
# experts: Analyze > Expert Information (opened with `-z expert`, no display
# filter) on captures/fault-drop-slice.pcap, over the packet list coloured by
# docs/chunkshark.colorfilters (put in the private profile, as an import does).
# table: a Statistics table dialog (--table: its -z name, --title: its window
# title) at the size Wireshark opens it, in a 1280x800 screen.
# colours: the packet list of a capture (-r) coloured by
# docs/chunkshark.colorfilters, put in the private profile as View > Coloring
# Rules > Import does.
# menu: the Statistics menu with Chunk Transfers and the Chunk submenu (the
# stats tree) open, reached with the keyboard (Alt+S, Up --menu-up times, Right).
#
# Runs Debian's wireshark-qt under Xvfb (apt-get install wireshark-qt xvfb
# xdotool imagemagick). Like scripts/chunk-tshark it runs Wireshark as user
# nobody when we are root (Wireshark ignores plugin folders for uid 0),
# with a private HOME holding the preferences and window geometry that lay
# the window out: packet list on top, details in the middle, bytes below.
# ack: the capture is opened with a display filter for acks with missing slices
# and the frame to select (-g); xdotool then expands the chunk tree (Shift+
# Right on "Chunk Protocol": expand subtrees) and selects one missing
# slice's bit, so the bytes pane highlights the byte that holds it.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
    cat <<EOF
usage: scripts/screenshot.sh [options] [ack|transfers|experts|menu]
  ack                 an ack packet, bitfield expanded (the default)
  transfers           the Statistics > Chunk Transfers table
  experts             Analyze > Expert Information, no display filter, over
                      the packet list coloured by docs/chunkshark.colorfilters
  menu                the Statistics menu with the chunk entries
  colours             the packet list coloured by docs/chunkshark.colorfilters
  table               a Statistics table as opened (--table NAME_table --title TITLE)
      --decode-as E   a Decode As entry in the profile, as Analyze > Decode As saves
                      it (e.g. 'udp.port,30000,(none),Netgame')
  -b, --build DIR     build tree with the plugin (its plugin-dir.txt names the folder)
                      (default: \$CHUNK_BUILD_DIR, else $repo/build)
  -r, --read FILE     capture (default: captures/loss-10-jitter.pcap for ack,
                      captures/fault-never-pops.pcap for transfers,
                      captures/fault-drop-slice.pcap for experts and menu)
  -g, --frame N       ack: ack frame to show (default 34: chunk 0, 21/24
                      acked, missing 5,8,13)
      --select N      ack: rows below "Chunk Protocol" to select after
                      expanding (default 16: the line of slice 5, missing)
      --menu-up N     menu: Up presses from the top of the Statistics menu
                      to the Chunk submenu (default 2: the last but one
                      entry in Debian 12's Wireshark 4.0)
  -o, --output FILE   PNG to write (default: docs/screenshot-WHAT.png)
      --display N     X display number for Xvfb (default 77)
      --keep-tmp      keep the temporary folder (logs, raw screenshot)
  -h, --help          this help
Exit status 0, 1 when Wireshark or the screenshot failed, 2 for bad arguments.
EOF
}

die_usage() {
    echo "screenshot.sh: $1 (try --help)" >&2
    exit 2
}

build=${CHUNK_BUILD_DIR:-$repo/build}
what=ack
capture=""
frame=34
select=16
menu_up=2
table=""
title=""
decode_as=""
output=""
display=77
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    -b | --build) [ $# -ge 2 ] || die_usage "$1 needs a folder"; build=$2; shift ;;
    -r | --read) [ $# -ge 2 ] || die_usage "$1 needs a file"; capture=$2; shift ;;
    -g | --frame) [ $# -ge 2 ] || die_usage "$1 needs a number"; frame=$2; shift ;;
    --select) [ $# -ge 2 ] || die_usage "$1 needs a number"; select=$2; shift ;;
    --menu-up) [ $# -ge 2 ] || die_usage "$1 needs a number"; menu_up=$2; shift ;;
    --table) [ $# -ge 2 ] || die_usage "$1 needs a -z name"; table=$2; shift ;;
    --title) [ $# -ge 2 ] || die_usage "$1 needs a window title"; title=$2; shift ;;
    --decode-as) [ $# -ge 2 ] || die_usage "$1 needs TABLE,VALUE,DEFAULT,PROTOCOL"; decode_as=$2; shift ;;
    -o | --output) [ $# -ge 2 ] || die_usage "$1 needs a file"; output=$2; shift ;;
    --display) [ $# -ge 2 ] || die_usage "$1 needs a number"; display=$2; shift ;;
    --keep-tmp) keep=1 ;;
    -h | --help) usage; exit 0 ;;
    ack | transfers | experts | menu | colours | table) what=$1 ;;
    *) die_usage "unknown argument '$1'" ;;
    esac
    shift
done
for n in "$frame" "$select" "$display" "$menu_up"; do
    [[ "$n" =~ ^[0-9]+$ ]] || die_usage "'$n' is not a number"
done
case $what in
ack) capture=${capture:-$repo/captures/loss-10-jitter.pcap} ;;
transfers) capture=${capture:-$repo/captures/fault-never-pops.pcap} ;;
*) capture=${capture:-$repo/captures/fault-drop-slice.pcap} ;;
esac
output=${output:-$repo/docs/screenshot-$what.png}
[ -r "$capture" ] || die_usage "cannot read $capture"
gui_name=screenshot.sh
. "$repo/scripts/wireshark-gui.sh"
gui_keep=$keep
gui_check "$build" "$display"

# ack: a tall screen for the expanded tree. transfers: a wide one, so the
# table's columns, Diagnosis last, get room. The upper pane (packet list)
# shows the filtered acks, the lower pane boundary leaves the bytes a few
# lines; experts: a taller packet list, the dialog goes over the panes below it.
upper=185; lower=905
case $what in
ack) W=1280; H=1280 ;;
transfers) W=3500; H=600 ;;
experts) W=1280; H=900; upper=340; lower=400 ;;
colours) W=1280; H=800; upper=560; lower=150 ;;
menu | table) W=1280; H=800 ;;
esac
gui_profile chunk-screenshot "$W" "$H" "$upper" "$lower"
if [ "$what" = experts ] || [ "$what" = colours ]; then
    cp "$repo/docs/chunkshark.colorfilters" "$gui_profile/colorfilters"
fi
if [ -n "$decode_as" ]; then
    echo "decode_as_entry: $decode_as" > "$gui_profile/decode_as_entries"
fi

case $what in
ack) ws_args=(-Y 'chunk.type == 1 && chunk.ack.missing_count > 0' -g "$frame") ;;
transfers) ws_args=(-z 'chunk,transfers_table') ;;
experts) ws_args=(-z expert) ;;
menu | colours) ws_args=() ;;
table) [ -n "$table" ] && [ -n "$title" ] || die_usage "table needs --table and --title"
       ws_args=(-z "$table") ;;
esac
gui_start "$capture" "${ws_args[@]}"

# dialog TITLE: the dialog Wireshark opened (-z), or exit 1.
dialog() {
    dlg=$(gui_dialog "$1")
    [ -n "$dlg" ] && return
    echo "screenshot.sh: no $1 window appeared; Wireshark's log:" >&2
    cat "$gui_tmp/wireshark.log" >&2
    exit 1
}
case $what in
experts)
    dialog 'Expert Information'
    # The dialog over the lower panes: the coloured packet list stays in view.
    xdotool windowmove "$dlg" 0 450 windowsize "$dlg" "$W" 450
    sleep 2
    xdotool mousemove "$W" "$H"
    gui_shoot_root "$output" ;;
table)
    dialog "$title"
    # Where Wireshark put it, at its own size: moved to the corner only.
    xdotool windowmove "$dlg" 0 0
    sleep 2
    xdotool mousemove "$W" "$H"
    gui_shoot_window "$dlg" "$output"
    echo "dialog $(xdotool getwindowgeometry "$dlg" | sed -n 3p)" >&2 ;;
colours)
    xdotool mousemove "$W" "$H"
    gui_shoot_root "$output" ;;
menu)
    # Focus the main window with a click in the packet list, park the
    # pointer outside the menu (it would select what it hovers), then walk
    # the Statistics menu with the keyboard.
    xdotool mousemove --window "$gui_win" 300 300 click 1
    sleep 0.5
    xdotool mousemove "$((W - 1))" "$((H - 1))"
    sleep 0.3
    xdotool key alt+s
    sleep 1
    for _ in $(seq "$menu_up"); do xdotool key Up; sleep 0.4; done
    xdotool key Right
    sleep 1
    gui_shoot_root "$output" ;;
transfers)
    dialog 'Chunk Transfers'
    # The dialog across the screen, tall enough for a few rows.
    xdotool windowmove "$dlg" 0 0 windowsize "$dlg" "$W" 180
    sleep 2
    xdotool mousemove "$W" "$H"
    gui_shoot_window "$dlg" "$output" ;;
ack)
    # Chunk Protocol's subtrees expanded, then the row of a missing slice.
    gui_open_last_tree 290
    gui_down "$select"
    sleep 1
    xdotool mousemove 0 "$H"   # the pointer out of the picture
    gui_shoot_root "$output" ;;
esac
