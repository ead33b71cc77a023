#!/usr/bin/env bash
# profile.sh: the chunkshark configuration profile of Wireshark
# (dissector/profile/chunkshark: colorfilters, preferences, recent, io_graphs;
# docs/gui.md, "The chunkshark profile").
#
#   scripts/profile.sh install [--force]   copy it to
#                          ${WIRESHARK_CONFIG_DIR:-~/.config/wireshark}/profiles/chunkshark
#                          (--force: replace one there; else exit 1)
#   scripts/profile.sh zip FILE            a zip of it for Edit > Configuration
#                          Profiles > Import > from zip file (the build makes
#                          <build>/chunkshark-profile.zip the same way)
#   scripts/profile.sh colorfilters        print the profile's colorfilters made
#                          again: docs/chunkshark.colorfilters' rules above
#                          Wireshark's default rules (/usr/share/wireshark/colorfilters)
#
# Then Edit > Configuration Profiles (or a click on "Profile:" in the status
# bar) > chunkshark; or wireshark -C chunkshark. Exit status 0, 1 on failure,
# 2 for bad arguments.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src=$repo/dissector/profile/chunkshark

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "profile.sh: $2" >&2; exit "$1"; }

[ $# -ge 1 ] || { usage >&2; exit 2; }
case $1 in
install)
    force=0
    [ "${2:-}" = --force ] && force=1
    conf=${WIRESHARK_CONFIG_DIR:-$HOME/.config/wireshark}
    dest=$conf/profiles/chunkshark
    if [ -e "$dest" ] && [ "$force" = 0 ]; then
        die 1 "$dest exists: --force replaces it"
    fi
    mkdir -p "$conf/profiles"
    rm -rf "$dest"
    cp -r "$src" "$dest"
    echo "installed $dest: choose it in Edit > Configuration Profiles, or run wireshark -C chunkshark" ;;
zip)
    [ $# -ge 2 ] || die 2 "zip needs the file to write"
    out=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
    rm -f "$out"
    # A folder named after the profile, as Wireshark's export writes it.
    (cd "$src/.." && cmake -E tar cf "$out" --format=zip chunkshark)
    echo "wrote $out" ;;
colorfilters)
    defaults=/usr/share/wireshark/colorfilters
    [ -f "$defaults" ] || die 1 "no $defaults (Wireshark's default rules)"
    echo "# Colouring rules of the chunkshark profile: chunkshark's protocols"
    echo "# (docs/chunkshark.colorfilters), then Wireshark's default rules; the"
    echo "# first rule that matches colours a packet. Made by scripts/profile.sh colorfilters."
    grep '^@' "$repo/docs/chunkshark.colorfilters"
    grep '^[@!]' "$defaults" ;;
-h | --help) usage ;;
*) usage >&2; exit 2 ;;
esac
