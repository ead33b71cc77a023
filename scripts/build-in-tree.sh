#!/usr/bin/env bash
# build-in-tree.sh: the plugin built the way Windows and macOS need it, inside
# Wireshark's own source tree as a custom plugin, and checked on Linux: the
# tshark of that tree, with that plugin, must decode every shipped capture
# (captures/*.pcap, *.pcapng) exactly as the regular build does (host tshark,
# plugin of $CHUNK_BUILD_DIR, default <repo>/build). Not part of the test run:
# it builds Wireshark (libwireshark and tshark), hours on a small machine.
#
#   scripts/build-in-tree.sh [VERSION]     VERSION: 4.0, 4.4 or 4.6 (default:
#                                          the host tshark's major.minor)
#   scripts/build-in-tree.sh --configure-only [VERSION]
#
# Steps (.github/workflows/release.yml repeats them on Windows and macOS):
#   1. Wireshark's source: Debian's wireshark source package
#      (scripts/wireshark-source.sh VERSION, from this machine's mirror).
#   2. A work copy of it (hard links) in $CHUNK_INTREE_DIR (default
#      /var/cache/chunkshark/in-tree/<major.minor>), with this repository at
#      plugins/epan/chunkshark (a symbolic link) and
#      scripts/in-tree/CMakeListsCustom.txt at its top (CUSTOM_PLUGIN_SRC_DIR
#      naming plugins/epan/chunkshark/dissector).
#      dissector/CMakeLists.txt sees Wireshark's CMake and makes the plugin
#      with add_wireshark_plugin_library (target chunk).
#   3. cmake -G Ninja with scripts/in-tree/cmake-options.txt (tshark, no
#      GUI, no extcaps), then the targets tshark and chunk, under
#      nice -n 19 with $CHUNK_INTREE_JOBS jobs (default 1).
#   4. The decode comparison: tshark -n -V -O <every protocol> on every capture
#      (with captures/<name>.keys as netcode's key log when there is one), by
#      both, through scripts/chunk-tshark (as user nobody when root); any
#      difference fails.
#
# Needs what Wireshark's build needs for tshark (Debian 12: flex bison
# libc-ares-dev libglib2.0-dev libgcrypt20-dev libpcap-dev libpcre2-dev
# zlib1g-dev ninja-build cmake perl python3); installs nothing.
# Exit: 0 same decode, 1 a step failed or the decode differs, 2 usage.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
configure_only=0
case "${1:-}" in
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
--configure-only) configure_only=1; shift ;;
esac
[ $# -le 1 ] || { echo "usage: $0 [--configure-only] [VERSION]" >&2; exit 2; }
host_mm=""
command -v tshark >/dev/null && host_mm=$(tshark --version 2>/dev/null | sed -n '1s/.* \([0-9]\+\.[0-9]\+\)\..*/\1/p')
mm=${1:-$host_mm}
[ -n "$mm" ] || { echo "build-in-tree: no VERSION and no host tshark to take it from" >&2; exit 2; }
say() { echo "build-in-tree: $*" >&2; }
t0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - t0 ))s"; }

# 1. The source package.
ws_src=$("$repo/scripts/wireshark-source.sh" "$mm")
say "Wireshark source: $ws_src"

# 2. The work copy, the plugin in it.
work=${CHUNK_INTREE_DIR:-/var/cache/chunkshark/in-tree/$mm}
src=$work/src
build=$work/build
if [ ! -f "$src/.chunk-copy-of" ] || [ "$(cat "$src/.chunk-copy-of")" != "$ws_src" ]; then
    rm -rf "$src" "$build"
    mkdir -p "$work"
    cp -al "$ws_src" "$src" 2>/dev/null || cp -a "$ws_src" "$src"
    echo "$ws_src" > "$src/.chunk-copy-of"
fi
ln -sfn "$repo" "$src/plugins/epan/chunkshark"
# A new file, not an edit of a hard-linked one.
rm -f "$src/CMakeListsCustom.txt"
cp "$repo/scripts/in-tree/CMakeListsCustom.txt" "$src/CMakeListsCustom.txt"
mapfile -t cmake_opts < <(grep -v '^#' "$repo/scripts/in-tree/cmake-options.txt" | grep .)

# 3. Configure and build.
say "configure $build ($(elapsed))"
nice -n 19 cmake -G Ninja -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_opts[@]}" >&2 ||
    { say "configure failed ($(elapsed))"; exit 1; }
grep -q '^chunk:' <(nice -n 19 cmake --build "$build" --target help 2>/dev/null | sed 's/^\([^ ]*\).*/\1/') ||
    { say "configure made no target chunk: dissector/CMakeLists.txt did not see Wireshark's tree"; exit 1; }
say "configured, target chunk present ($(elapsed))"
[ $configure_only = 1 ] && exit 0

jobs=${CHUNK_INTREE_JOBS:-1}
say "building tshark and chunk, -j$jobs, nice -n 19 (hours on 2 cores)"
nice -n 19 cmake --build "$build" -j"$jobs" --target tshark chunk >&2 ||
    { say "build failed ($(elapsed))"; exit 1; }
tshark_bin=$build/run/tshark
plugin_dir=$build/run/plugins
[ -x "$tshark_bin" ] && [ -f "$plugin_dir/$mm/epan/chunk.so" ] ||
    { say "built, but no $tshark_bin or $plugin_dir/$mm/epan/chunk.so"; exit 1; }
say "built ($(elapsed))"

# 4. The decode comparison.
if [ "$mm" != "$host_mm" ]; then
    say "the regular build runs the host's tshark $host_mm, not $mm: no decode comparison"
    exit 1
fi
regular=${CHUNK_BUILD_DIR:-$repo/build}
[ -f "$regular/plugin-dir.txt" ] ||
    { say "no regular build in $regular (cmake -S . -B build && cmake --build build), or set CHUNK_BUILD_DIR"; exit 1; }
protos=$(paste -sd, "$regular/protocols.txt")
out=$work/compare
rm -rf "$out"
mkdir -p "$out/regular" "$out/in-tree"
export WIRESHARK_ABORT_ON_DISSECTOR_BUG=1 TZ=UTC LC_ALL=C
fail=0
n=0
for cap in "$repo"/captures/*.pcap "$repo"/captures/*.pcapng; do
    [ -f "$cap" ] || continue
    name=$(basename "$cap")
    name=${name%.*}
    # -n: no name resolution; the in-tree tshark, run from its build tree,
    # has no copy of Wireshark's data files (manuf), which would name
    # Ethernet addresses differently.
    opts=(-n -r "$cap" -V -O "$protos")
    [ -f "$repo/captures/$name.keys" ] && opts+=(-o "netcode.keylog_file:$repo/captures/$name.keys")
    # Standard output compared; messages apart (run from its build tree, the
    # in-tree tshark also sees its own copy of chunk.so and may say so).
    CHUNK_BUILD_DIR=$regular "$repo/scripts/chunk-tshark" "${opts[@]}" \
        > "$out/regular/$name.txt" 2> "$out/regular/$name.err" || true
    TSHARK=$tshark_bin CHUNK_PLUGIN_DIR=$plugin_dir "$repo/scripts/chunk-tshark" "${opts[@]}" \
        > "$out/in-tree/$name.txt" 2> "$out/in-tree/$name.err" || true
    n=$((n + 1))
    if [ ! -s "$out/regular/$name.txt" ]; then
        say "no decode of $name by the regular build: $(head -c 300 "$out/regular/$name.err")"
        fail=1
    elif ! cmp -s "$out/regular/$name.txt" "$out/in-tree/$name.txt"; then
        say "DIFFERENT: $name"
        diff -u "$out/regular/$name.txt" "$out/in-tree/$name.txt" | head -n 20 >&2 || true
        fail=1
    fi
done
[ $n -gt 0 ] || { say "no captures in $repo/captures"; exit 1; }
if [ $fail = 0 ]; then
    say "OK: $n captures decoded the same by the in-tree tshark and plugin and by the regular build ($(elapsed))"
else
    say "FAIL: decode differs (outputs in $out) ($(elapsed))"
fi
exit $fail
