# wireshark-gui.sh: what the screenshot scripts share (screenshot.sh,
# netcode-screenshot.sh, yojimbo-screenshot.sh), sourced by them: Debian's
# wireshark-qt run under Xvfb with the plugin of a build tree, as user nobody
# when we are root (Wireshark ignores plugin folders for uid 0), with a
# private HOME whose profile lays the window out (packet list on top, details
# in the middle, bytes below), then pictures of the screen or of a window.
#
# The caller sets gui_name (its name, for messages), may read its options
# with gui_option, then, in this order:
#   gui_check BUILD DISPLAY        the plugin built, the tools there, the display free
#   gui_profile PREFIX W H [UPPER LOWER]
#                                  a temporary folder ($gui_tmp, removed on exit
#                                  unless gui_keep=1) with the plugin and the
#                                  profile ($gui_profile: add files or preferences;
#                                  without UPPER and LOWER, Wireshark's own layout)
#   gui_start CAPTURE ARGS...      Xvfb on a W x H screen, then Wireshark on a copy of
#                                  CAPTURE with ARGS; $gui_win: its main window
#   gui_dialog TITLE               prints a visible window's id (waits up to 10 s)
#   gui_open_last_tree Y           the details pane's last protocol, subtrees expanded
#   gui_shoot_root FILE / gui_shoot_window WINDOW FILE
# Exit status of a failed check: 2; of Wireshark not coming up: 1.

gui_keep=0
gui_pids=()

gui_die() {  # gui_die STATUS MESSAGE
    echo "$gui_name: $2" >&2
    exit "$1"
}

# gui_option OPTION [VALUE]: an option every screenshot script takes: -b,
# --build DIR; -o, --output FILE; --display N; --frame N (sets build, output,
# display or frame); exits 2 for another option or a missing value.
gui_option() {
    case $1 in
    -b | --build | -o | --output | --display | --frame) [ $# -ge 2 ] || gui_die 2 "$1 needs a value (try --help)" ;;
    *) gui_die 2 "unknown option $1 (try --help)" ;;
    esac
    case $1 in
    -b | --build) build=$2 ;;
    -o | --output) output=$2 ;;
    --display) display=$2 ;;
    --frame) frame=$2 ;;
    esac
}

# gui_check BUILD DISPLAY: sets gui_plugin (the build tree's chunk.so, in the
# folder its plugin-dir.txt names: plugins/<major.minor>/epan, the Wireshark
# built against) and gui_display.
gui_check() {
    local build=$1 tool
    gui_plugsub=$(cat "$build/plugin-dir.txt" 2>/dev/null) || gui_die 2 "no $build/plugin-dir.txt: build first or give -b"
    gui_plugin=$build/$gui_plugsub/chunk.so
    [ -f "$gui_plugin" ] || gui_die 2 "no plugin at $gui_plugin: build first or give -b"
    for tool in wireshark Xvfb xdotool convert import; do
        command -v "$tool" >/dev/null || gui_die 2 "$tool not found (apt-get install wireshark-qt xvfb xdotool imagemagick)"
    done
    if [ "$(id -u)" = 0 ]; then
        command -v setpriv >/dev/null || gui_die 2 "setpriv not found (util-linux)"
    fi
    gui_display=$2
    [ ! -e "/tmp/.X11-unix/X$gui_display" ] || gui_die 2 "display :$gui_display is in use; pick another with --display"
}

gui_cleanup() {
    local p
    for p in "${gui_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ "$gui_keep" = 1 ]; then echo "kept $gui_tmp" >&2; else rm -rf "$gui_tmp"; fi
}

# gui_profile PREFIX W H [UPPER LOWER]: a W x H screen; with UPPER and LOWER
# the window fills it, the packet list ends UPPER pixels down, the details
# LOWER pixels below that.
gui_profile() {
    gui_W=$2
    gui_H=$3
    gui_tmp=$(mktemp -d "/tmp/$1.XXXXXX")
    chmod 755 "$gui_tmp"
    trap gui_cleanup EXIT
    gui_profile=$gui_tmp/home/.config/wireshark
    mkdir -p "$gui_tmp/$gui_plugsub" "$gui_profile" "$gui_tmp/run"
    cp "$gui_plugin" "$gui_tmp/$gui_plugsub/chunk.so"
    [ $# -ge 5 ] || return 0
    cat > "$gui_profile/recent_common" <<EOF
gui.geometry_main_x: 0
gui.geometry_main_y: 0
gui.geometry_main_width: $gui_W
gui.geometry_main_height: $gui_H
gui.geometry_main_maximized: FALSE
EOF
    cat > "$gui_profile/recent" <<EOF
gui.geometry_main_upper_pane: $4
gui.geometry_main_lower_pane: $5
EOF
    cat > "$gui_profile/preferences" <<EOF
gui.layout_type: 1
gui.layout_content_1: PLIST
gui.layout_content_2: PDETAILS
gui.layout_content_3: PBYTES
EOF
}

# gui_start CAPTURE ARGS...: the capture is copied as capture.pcap (or
# capture.pcapng), the main window's title.
gui_start() {
    local capture=$1 copy=$gui_tmp/capture.pcap as_user=() _
    shift
    case $capture in *.pcapng) copy=${copy}ng ;; esac
    cp "$capture" "$copy"
    chmod -R a+rX "$gui_tmp"
    if [ "$(id -u)" = 0 ]; then
        chown -R 65534:65534 "$gui_tmp/home" "$gui_tmp/run"
        as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    fi
    chmod 700 "$gui_tmp/run"
    # -ac: no X access control, so user nobody may connect.
    Xvfb ":$gui_display" -screen 0 "${gui_W}x${gui_H}x24" -ac -nolisten tcp > "$gui_tmp/xvfb.log" 2>&1 &
    gui_pids+=($!)
    export DISPLAY=:$gui_display
    for _ in $(seq 50); do
        xdotool getdisplaygeometry > /dev/null 2>&1 && break
        sleep 0.1
    done
    "${as_user[@]}" env HOME="$gui_tmp/home" XDG_RUNTIME_DIR="$gui_tmp/run" WIRESHARK_PLUGIN_DIR="$gui_tmp/plugins" \
        DISPLAY=":$gui_display" wireshark -r "$copy" "$@" > "$gui_tmp/wireshark.log" 2>&1 &
    gui_pids+=($!)
    gui_win=""
    for _ in $(seq 100); do
        gui_win=$(xdotool search --onlyvisible --name 'capture.pcap' 2>/dev/null | head -n 1 || true)
        [ -n "$gui_win" ] && break
        sleep 0.2
    done
    if [ -z "$gui_win" ]; then
        echo "$gui_name: no Wireshark window appeared; its log:" >&2
        cat "$gui_tmp/wireshark.log" >&2
        exit 1
    fi
    sleep 3   # the file is read (and the frame of -g selected) after the window maps
}

# gui_dialog TITLE: its window id, or nothing after 10 s. Qt may map a
# window of that title and replace it at once (seen under load: a key sent
# to the first id failed with BadWindow), so the id counts once the same
# one is still there 0.6 s later.
gui_dialog() {
    local dlg="" prev="" _
    for _ in $(seq 50); do
        dlg=$(xdotool search --onlyvisible --name "$1" 2>/dev/null | head -n 1 || true)
        if [ -n "$dlg" ] && [ "$dlg" = "$prev" ]; then
            echo "$dlg"
            return 0
        fi
        prev=$dlg
        sleep 0.3
    done
    echo "$prev"
}

# gui_open_last_tree Y: without a window manager nothing has focus: click
# the packet details at height Y (a line of the frame), go to its last
# top-level line (the protocol) and expand its subtrees (Shift+Right).
gui_open_last_tree() {
    xdotool mousemove --window "$gui_win" 200 "$1" click 1
    sleep 0.5
    xdotool key --window "$gui_win" End
    xdotool key --window "$gui_win" shift+Right
    sleep 0.5
}

gui_down() {  # gui_down N: N rows down in the main window
    local _
    for _ in $(seq "$1"); do xdotool key --window "$gui_win" Down; done
}

# gui_shoot_window WINDOW FILE (WINDOW root: the screen): an 8-bit palette
# PNG, a UI screenshot has few colours; keeps the file small.
gui_shoot_window() {
    import -window "$1" "$gui_tmp/raw.png"
    mkdir -p "$(dirname "$2")"
    convert "$gui_tmp/raw.png" -colors 256 -strip PNG8:"$2"
    echo "wrote $2 ($(stat -c %s "$2") bytes)" >&2
}

gui_shoot_root() {
    gui_shoot_window root "$1"
}
