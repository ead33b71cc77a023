#!/usr/bin/env bash
# wireshark-source.sh: Debian's wireshark source package, unpacked, from this
# machine's own Debian mirror; prints the path of the source tree.
#
#   scripts/wireshark-source.sh VERSION     VERSION: 4.0, 4.4 or 4.6 (or a full
#                                           4.0.17: its major.minor is used)
#
# The tree is cached in $CHUNK_WS_SRC_CACHE (default
# /var/cache/chunkshark/wireshark-src)/<major.minor>/wireshark-<version>; a
# second call prints it at once. The first call adds a deb-src line for the
# suite of that Wireshark (4.0: bookworm, 4.4: trixie, 4.6: sid; README.md,
# "Wireshark versions") for this run only: apt-get reads a sources list and
# package lists of its own in a temporary folder (-o Dir::Etc::SourceList,
# Dir::State::Lists), and the machine's apt configuration is left as it was.
# The mirror is the first Debian archive of the machine's apt sources
# (scripts/chroot-common.sh, host_mirror), or $CHUNK_MIRROR.
#
# Needs apt-get and dpkg-source (dpkg-dev), which unpacks the package; root
# only to write the cache (set CHUNK_WS_SRC_CACHE to a folder of your own
# otherwise). Exit: 0 the path printed, 1 the download or unpacking failed,
# 2 usage.
set -euo pipefail

chroot_name=wireshark-source
# shellcheck source=scripts/chroot-common.sh
. "$(dirname "$0")/chroot-common.sh"

case "${1:-}" in
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
[ $# -eq 1 ] || { echo "usage: $0 VERSION (4.0, 4.4 or 4.6)" >&2; exit 2; }
if [[ ! "$1" =~ ^([0-9]+\.[0-9]+)(\.[0-9]+)?$ ]]; then
    echo "$chroot_name: '$1' is not a Wireshark version (4.0, 4.4, 4.6 or e.g. 4.0.17)" >&2
    exit 2
fi
mm=${BASH_REMATCH[1]}
want_full=${BASH_REMATCH[2]:+$1}
suite=$(suite_of "$mm") || { echo "$chroot_name: no Debian suite has Wireshark $mm (4.0, 4.4 or 4.6)" >&2; exit 2; }

cache=${CHUNK_WS_SRC_CACHE:-/var/cache/chunkshark/wireshark-src}/$mm

# cached_tree: the unpacked tree of the cache (the one with debian/ and
# tools/checkAPIs.pl), of the full version asked for when one was given.
cached_tree() {
    local d
    for d in "$cache"/wireshark-"$mm".*; do
        [ -f "$d/tools/checkAPIs.pl" ] && [ -f "$d/.chunk-complete" ] || continue
        [ -z "$want_full" ] || [ "${d##*/wireshark-}" = "$want_full" ] || continue
        echo "$d"
        return 0
    done
    return 1
}
if tree=$(cached_tree); then
    echo "$tree"
    exit 0
fi

command -v dpkg-source >/dev/null ||
    { echo "$chroot_name: dpkg-source is missing (apt-get install dpkg-dev)" >&2; exit 1; }
[ -n "$mirror" ] ||
    { echo "$chroot_name: no Debian mirror in this machine's apt sources; set CHUNK_MIRROR" >&2; exit 1; }

mkdir -p "$cache"
exec 9> "$cache.lock"
flock 9
# Another run may have made it while this one waited.
if tree=$(cached_tree); then
    echo "$tree"
    exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/parts" "$tmp/archives/partial"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=""
[ -r "$keyring" ] && signed="[signed-by=$keyring] "
echo "deb-src ${signed}$mirror $suite main" > "$tmp/sources.list"
opts=(-q -o Dir::Etc::SourceList="$tmp/sources.list" -o Dir::Etc::SourceParts="$tmp/parts"
      -o Dir::State::Lists="$tmp/lists" -o Dir::Cache::Archives="$tmp/archives"
      -o Dir::Cache::pkgcache="" -o Dir::Cache::srcpkgcache=""
      -o Acquire::Check-Valid-Until=false -o Acquire::Retries=3
      -o APT::Sandbox::User=root)
say "deb-src $mirror $suite main (this run only): apt-get update"
apt-get "${opts[@]}" update >&2 ||
    { echo "$chroot_name: apt-get update of deb-src $suite failed" >&2; exit 1; }

pkg=wireshark
if [ -n "$want_full" ]; then
    # The Debian version whose upstream part is the one asked for.
    dver=$(apt-cache "${opts[@]}" showsrc wireshark 2>/dev/null |
           awk -v v="$want_full" '$1 == "Version:" { u = $2; sub(/^[0-9]+:/, "", u); sub(/-[^-]*$/, "", u); if (u == v) { print $2; exit } }')
    [ -n "$dver" ] || { echo "$chroot_name: $suite has no wireshark $want_full source" >&2; exit 1; }
    pkg="wireshark=$dver"
fi
work="$cache/.download.$$"
rm -rf "$work"
mkdir -p "$work"
say "apt-get source $pkg ($suite) into $cache"
(cd "$work" && apt-get "${opts[@]}" source "$pkg" >&2) ||
    { rm -rf "$work"; echo "$chroot_name: apt-get source $pkg failed" >&2; exit 1; }
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'wireshark-*' | head -n 1)
[ -n "$src" ] && [ -f "$src/tools/checkAPIs.pl" ] ||
    { rm -rf "$work"; echo "$chroot_name: apt-get source gave no wireshark tree" >&2; exit 1; }
name=${src##*/}
rm -rf "${cache:?}/$name"
mv "$src" "$cache/$name"
# The .dsc, .orig and .debian archives beside the tree, for reference.
mv "$work"/wireshark_* "$cache/" 2>/dev/null || true
rm -rf "$work"
touch "$cache/$name/.chunk-complete"
echo "$cache/$name"
