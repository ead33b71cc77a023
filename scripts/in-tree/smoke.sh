#!/usr/bin/env bash
# smoke.sh: a tshark built in Wireshark's tree with the chunk plugin (the
# route of scripts/build-in-tree.sh and .github/workflows/release.yml, where
# there is no regular build to compare with) loads the plugin and finds
# every protocol of dissector/protocols.txt in the shipped captures.
#
#   scripts/in-tree/smoke.sh TSHARK
#
# TSHARK: the tshark of that build, run from its build tree (it then loads
# the plugins of that tree). Needs bash and grep (Git Bash on Windows).
# Exit: 0 every protocol decoded, 1 not, 2 usage.
set -euo pipefail

[ $# -eq 1 ] && [ -x "$1" ] || { echo "usage: $0 TSHARK (an executable)" >&2; exit 2; }
tshark=$1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export WIRESHARK_ABORT_ON_DISSECTOR_BUG=1
# A path as tshark takes it: C:/... in Git Bash on Windows (cygpath), else as is.
native() { if command -v cygpath >/dev/null; then cygpath -m "$1"; else printf '%s\n' "$1"; fi; }

"$tshark" -G plugins | grep -E '^chunk\.(so|dll)' ||
    { echo "smoke: tshark -G plugins does not list chunk" >&2; "$tshark" -G plugins >&2 || true; exit 1; }
# One run a capture (with its netcode key log, when it has one: reliable
# and yojimbo ride inside netcode's encrypted packets): each frame's
# protocols, counted per protocol afterwards.
stacks=$(mktemp)
trap 'rm -f "$stacks"' EXIT
for cap in "$repo"/captures/*.pcap "$repo"/captures/*.pcapng; do
    [ -f "$cap" ] || continue
    keys=${cap%.*}.keys
    opts=()
    [ -f "$keys" ] && opts=(-o "netcode.keylog_file:$(native "$keys")")
    "$tshark" -r "$(native "$cap")" ${opts[@]+"${opts[@]}"} -T fields -e frame.protocols >> "$stacks"
done
status=0
while read -r p _; do
    p=${p%%#*}
    [ -n "$p" ] || continue
    frames=$(grep -c -E "(^|:)$p(:|$)" "$stacks" || true)
    echo "smoke: $p: $frames frames in the shipped captures"
    [ "$frames" -gt 0 ] || status=1
done < "$repo/dissector/protocols.txt"
exit $status
