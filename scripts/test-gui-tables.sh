#!/usr/bin/env bash
# test-gui-tables.sh: a Statistics table in the real Wireshark GUI shows
# exactly the rows of the file open now, after File > Open of another
# capture and after File > Reload of a file that changed on disk.
#
# Runs Debian's wireshark-qt under Xvfb with the plugin of a build tree
# (scripts/wireshark-gui.sh), as a user would:
#   1. Wireshark opens captures/clean.pcap with the Chunk Transfers table
#      (-z chunk,transfers_table, as the menu item does); the table's Copy
#      button puts its text on the clipboard (read with xclip);
#   2. Close, File > Open (toolbar) of captures/fault-never-pops.pcap, then
#      Statistics > Chunk Transfers again (keyboard: Alt+S, Down --menu-down
#      times, Return): the rows must be that file's, none of the first one's;
#   3. the open file is overwritten with clean.pcap, File > Reload (toolbar),
#      the table once more: clean.pcap's rows again.
# Each time the rows (Stream, Transfer, Status) must be exactly those that
# tshark's text table (-z chunk,transfers) prints for the file open.
#
#   scripts/test-gui-tables.sh [-b BUILD] [--display N] [--menu-down N] [--keep-tmp]
#       [--first CAPTURE --second CAPTURE --table Z_TABLE --title TITLE --text Z_TEXT]
#       [--shoot PNG]   (a picture of the dialog after File > Open, for docs/gui.md)
# (another table: e.g. --first captures/netcode-server-full.pcap --second
# captures/netcode-clean.pcap --table netcode,conns_table --title 'Netcode
# Connections' --text netcode,conns --menu-down N)
#
# Exit status 0 when the tables matched, 1 when not (or Wireshark failed),
# 77 when Xvfb, wireshark-qt, xdotool, xclip or ImageMagick are missing
# (ctest: skipped), 2 for bad arguments.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CHUNK_BUILD_DIR:-$repo/build}
display=93
# Statistics menu of Debian 12's Wireshark 4.0: Down presses from the first
# entry (Capture File Properties) to Chunk Transfers, the first entry of the
# group of protocol tables.
menu_down=8
first=$repo/captures/clean.pcap
second=$repo/captures/fault-never-pops.pcap
table_cli=chunk,transfers_table
title='Chunk Transfers'
text_cli=chunk,transfers
keep=0
shoot=""
gui_name=test-gui-tables

while [ $# -gt 0 ]; do
    case $1 in
    -b | --build) [ $# -ge 2 ] || { echo "$gui_name: $1 needs a value" >&2; exit 2; }; build=$2; shift ;;
    --display) [ $# -ge 2 ] || { echo "$gui_name: $1 needs a value" >&2; exit 2; }; display=$2; shift ;;
    --menu-down | --first | --second | --table | --title | --text)
        [ $# -ge 2 ] || { echo "$gui_name: $1 needs a value" >&2; exit 2; }
        case $1 in
        --menu-down) menu_down=$2 ;;
        --first) first=$2 ;;
        --second) second=$2 ;;
        --table) table_cli=$2 ;;
        --title) title=$2 ;;
        --text) text_cli=$2 ;;
        esac
        shift ;;
    --keep-tmp) keep=1 ;;
    --shoot) [ $# -ge 2 ] || { echo "$gui_name: $1 needs a value" >&2; exit 2; }; shoot=$2; shift ;;
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "$gui_name: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

for tool in wireshark Xvfb xdotool xclip convert import; do
    if ! command -v "$tool" > /dev/null; then
        echo "$gui_name: $tool not found (apt-get install wireshark-qt xvfb xdotool xclip imagemagick): skipped" >&2
        exit 77
    fi
done

. "$repo/scripts/wireshark-gui.sh"
gui_keep=$keep
gui_check "$build" "$display"
gui_profile test-gui-tables 1280 800


# expected FILE: the first two words of each row of tshark's text table
# (-z TEXT), the object's number and the first column after it ("0 1" for
# stream 0 transfer 1; "0 10.0.0.1:50000" for netcode connection 0).
expected() {
    "$repo/scripts/chunk-tshark" -r "$1" -q -z "$text_cli" |
        awk '/^Diagnosis:/ { exit } $1 ~ /^[0-9]+$/ { print $1, $2 }' | sort
}

# shown [OLD]: the table of the newest dialog titled TITLE (not the window
# OLD), as its Copy button puts it on the clipboard (plain text, columns
# two spaces or more apart), the first two columns of each row like
# expected; the dialog's window id in $gui_tmp/dialog. Closes the dialog
# unless OLD is "keep".
shown() {
    local dlg="" X Y WIDTH HEIGHT SCREEN w _
    for _ in $(seq 50); do
        for w in $(xdotool search --onlyvisible --name "$title" 2> /dev/null || true); do
            [ "$w" = "${1:-}" ] || dlg=$w
        done
        [ -n "$dlg" ] && break
        sleep 0.2
    done
    if [ -z "$dlg" ]; then
        echo "$gui_name: no new '$title' window" >&2
        gui_shoot_root "$gui_tmp/failed.png"
        return 0
    fi
    echo "$dlg" > "$gui_tmp/dialog"
    sleep 1
    eval "$(xdotool getwindowgeometry --shell "$dlg")"
    # Copy: the first of the three buttons at the dialog's bottom right.
    printf '' | xclip -selection clipboard
    xdotool mousemove $((X + WIDTH - 236)) $((Y + HEIGHT - 24)) click 1
    sleep 1
    xclip -o -selection clipboard > "$gui_tmp/table.txt" 2> /dev/null || true
    if [ -n "$shoot" ] && [ -n "${SHOOT_NOW:-}" ]; then
        xdotool mousemove $((gui_W - 1)) $((gui_H - 1))
        gui_shoot_window "$dlg" "$shoot"
    fi
    if [ "${1:-}" != keep ]; then   # Close
        xdotool mousemove $((X + WIDTH - 51)) $((Y + HEIGHT - 24)) click 1
        sleep 1
    fi
    sed 's/  \+/\t/g' "$gui_tmp/table.txt" |
        awk -F'\t' '$2 ~ /^[0-9]+$/ { print $2, $3 }' | sort
}

# open_table: Statistics > TITLE with the keyboard, after a click in the
# packet list gives the main window the focus (no window manager).
open_table() {
    xdotool mousemove --window "$gui_win" 300 200 click 1
    sleep 0.5
    xdotool mousemove $((gui_W - 1)) $((gui_H - 1))
    sleep 0.3
    xdotool key alt+s
    sleep 1
    for _ in $(seq "$menu_down"); do xdotool key Down; sleep 0.2; done
    sleep 0.5
    xdotool key KP_Enter
    sleep 1
}

# toolbar X: clicks the main toolbar's button at x X.
toolbar() {
    xdotool mousemove --window "$gui_win" "$1" 41 click 1
}

status=0
check() {  # check STEP CAPTURE [OLD]
    local want got
    want=$(expected "$2")
    got=$(shown "${3:-}")
    if [ -z "$want" ] || [ "$want" != "$got" ]; then
        echo "$gui_name: $1: the table does not show $(basename "$2")'s rows" >&2
        echo "--- expected (tshark -z $text_cli)" >&2
        echo "$want" >&2
        echo "--- shown (the dialog's Copy)" >&2
        cat "$gui_tmp/table.txt" >&2
        status=1
    else
        echo "$gui_name: $1: $(echo "$got" | wc -l) rows, those of $(basename "$2")" >&2
    fi
}

# The first dialog stays open, as a user leaves it behind the main window:
# the later ones share its table.
gui_start "$first" -z "$table_cli"
check "first file" "$first" keep
old=$(cat "$gui_tmp/dialog")

cp "$second" "$gui_tmp/second.pcap"
chmod a+r "$gui_tmp/second.pcap"
toolbar 158   # File > Open
# The file name goes to the dialog by its window id; if that window is
# gone (BadWindow, under load), the dialog is looked up again and the name
# typed anew over what was typed (Ctrl+A selects the name field's text).
typed=0
for _ in 1 2 3; do
    od=$(gui_dialog 'Open Capture File')
    [ -n "$od" ] || break
    if xdotool key --window "$od" ctrl+a 2> /dev/null &&
        xdotool type --window "$od" "$gui_tmp/second.pcap" 2> /dev/null &&
        xdotool key --window "$od" Return 2> /dev/null; then
        typed=1
        break
    fi
    echo "$gui_name: the Open Capture File window went away; again" >&2
    sleep 1
done
[ "$typed" = 1 ] || { echo "$gui_name: no Open Capture File dialog took the file name" >&2; gui_shoot_root "$gui_tmp/failed.png"; exit 1; }
sleep 3
open_table
SHOOT_NOW=1 check "after File > Open" "$second" "$old"

# The file open changes on disk; File > Reload reads it again.
cp "$first" "$gui_tmp/second.pcap"
toolbar 258   # File > Reload
sleep 3
open_table
check "after File > Reload" "$first" "$old"

# The first dialog, left open, still sorts its rows (taken out of the table
# by the retaps, kept for it): a click on its second column's header.
eval "$(xdotool getwindowgeometry --shell "$old")"
xdotool mousemove $((X + 150)) $((Y + 22)) click 1
sleep 1
if ! kill -0 "${gui_pids[1]}" 2> /dev/null; then
    echo "$gui_name: Wireshark exited after a click in the first dialog; its log:" >&2
    cat "$gui_tmp/wireshark.log" >&2
    status=1
fi

exit $status
