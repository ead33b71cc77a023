#!/usr/bin/env bash
# versions.sh: the netgame dissector on other Wireshark versions. For each
# chroot given (default: the trixie (4.4) and sid (4.6) chroots under
# /var/cache/chunkshark/chroots), builds dissector/packet-netgame.c,
# netgame-analysis.c and netgame-stats.c there with gcc -Wall -Wextra -Werror
# (and plugin-netgame-only.c), runs that tshark -2 on every netgame capture
# and compares the netgame fields with the host's tshark (4.0) and the
# plugin of CHUNK_BUILD_DIR (booleans printed True/False from 4.4 on are
# compared as 1/0). Needs root (chroot).
#
#   dissector/tests/netgame/versions/versions.sh [CHROOT...]
#
# Exit: 0 all equal, 1 a build failed or a field differs, 2 usage.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
build=${CHUNK_BUILD_DIR:-$repo/build}
[ "$(id -u)" = 0 ] || { echo "versions.sh: needs root (chroot)" >&2; exit 2; }
[ $# -gt 0 ] || set -- /var/cache/chunkshark/chroots/trixie /var/cache/chunkshark/chroots/sid
fields=(-e frame.number -e netgame.sequence -e netgame.ack -e netgame.ack_bits -e netgame.acked
        -e netgame.analysis.acked_in -e netgame.analysis.rtt -e netgame.analysis.lost
        -e netgame.analysis.mode -e netgame.analysis.smoothed_rtt -e netgame.analysis.flags
        -e netgame.analysis.acks_frame -e _ws.expert.message)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for root in "$@"; do
    [ -x "$root/usr/bin/tshark" ] || { echo "versions.sh: no tshark in $root" >&2; exit 2; }
    w=$root/tmp/netgame-versions
    rm -rf "$w"
    mkdir -p "$w/src" "$w/caps" "$w/home"
    cp "$repo"/dissector/{packet-netgame.c,netgame-analysis.c,netgame-stats.c,netgame-int.h,ws-compat.h} \
       "$here/plugin-netgame-only.c" "$w/src/"
    cp "$repo"/captures/netgame-*.pcap "$w/caps/"
    ver=$(chroot "$root" pkg-config --modversion wireshark | cut -d. -f1,2)
    mkdir -p "$w/plugins/$ver/epan"
    if ! chroot "$root" sh -c "cd /tmp/netgame-versions/src && gcc -std=c11 -Wall -Wextra -Werror -shared -fPIC \
            -DWS_BUILD_DLL -o /tmp/netgame-versions/plugins/$ver/epan/netgame.so plugin-netgame-only.c \
            packet-netgame.c netgame-analysis.c netgame-stats.c \$(pkg-config --cflags --libs wireshark)"; then
        echo "FAIL $ver: build"
        status=1
        continue
    fi
    chmod -R a+rX "$w"
    chown 65534 "$w/home"
    for cap in "$repo"/captures/netgame-*.pcap; do
        n=$(basename "$cap")
        prefs=()
        [ "$n" = netgame-wrap-31.pcap ] && prefs=(-o netgame.max_sequence:31)
        "$repo/scripts/chunk-tshark" -r "$cap" -2 "${prefs[@]}" -T fields "${fields[@]}" > "$tmp/host"
        chroot "$root" setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp/netgame-versions/home \
            WIRESHARK_PLUGIN_DIR=/tmp/netgame-versions/plugins tshark -r "/tmp/netgame-versions/caps/$n" -2 \
            "${prefs[@]}" -T fields "${fields[@]}" |
            awk -F'\t' -v OFS='\t' '{ for (i = 1; i <= NF; i++) { if ($i == "True") $i = 1; else if ($i == "False") $i = 0 } print }' \
            > "$tmp/other"
        if cmp -s "$tmp/host" "$tmp/other"; then
            echo "ok   $ver $n ($(wc -l < "$tmp/host") frames)"
        else
            echo "FAIL $ver $n:"
            diff "$tmp/host" "$tmp/other" | head -5
            status=1
        fi
    done
    rm -rf "$w"
done
exit $status
