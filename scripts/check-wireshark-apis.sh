#!/usr/bin/env bash
# check-wireshark-apis.sh: Wireshark's own source checkers over the plugin's
# sources (dissector/, not its tests), as Wireshark runs them over its
# dissectors:
#   tools/checkAPIs.pl --group dissectors-prohibited --group dissectors-restricted
#                      (prohibited and deprecated APIs, shadowed names, ...)
#                      on every .c and .h
#   tools/checkhf.pl   (hf_/ei_ declared, registered and used) on every .c
#   tools/check_typed_item_calls.py --mask --label --consecutive --missing-items
#                      (proto_tree_add_* calls against the fields' types) on every .c
# Every finding fails, unless dissector/tests/portability/checks-exceptions.txt
# lists it with a reason; an exception no checker reports any more fails too
# (the list stays true).
#
#   scripts/check-wireshark-apis.sh [--source DIR] [VERSION]
#
# The checkers come from Debian's wireshark source package of VERSION
# (default: the host tshark's major.minor), fetched by
# scripts/wireshark-source.sh (cached), or from the Wireshark tree DIR.
# Exit: 0 no finding beyond the exceptions, 1 findings, 2 usage,
# 77 no Wireshark source (not fetched: not root, or no mirror).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exceptions=$repo/dissector/tests/portability/checks-exceptions.txt
ws_src=""
case "${1:-}" in
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
--source) ws_src=${2:-}; shift 2 || { echo "usage: $0 [--source DIR] [VERSION]" >&2; exit 2; } ;;
esac
[ $# -le 1 ] || { echo "usage: $0 [--source DIR] [VERSION]" >&2; exit 2; }
if [ -z "$ws_src" ]; then
    mm=${1:-}
    if [ -z "$mm" ] && command -v tshark >/dev/null; then
        mm=$(tshark --version 2>/dev/null | sed -n '1s/.* \([0-9]\+\.[0-9]\+\)\..*/\1/p')
    fi
    [ -n "$mm" ] || { echo "check-wireshark-apis: no VERSION and no host tshark to take it from" >&2; exit 2; }
    if ! ws_src=$("$repo/scripts/wireshark-source.sh" "$mm"); then
        echo "check-wireshark-apis: SKIP: no Wireshark $mm source (scripts/wireshark-source.sh $mm failed)" >&2
        exit 77
    fi
fi
for t in tools/checkAPIs.pl tools/checkhf.pl tools/check_typed_item_calls.py; do
    [ -f "$ws_src/$t" ] || { echo "check-wireshark-apis: no $ws_src/$t" >&2; exit 2; }
done
command -v perl >/dev/null && command -v python3 >/dev/null ||
    { echo "check-wireshark-apis: needs perl and python3" >&2; exit 2; }

cd "$repo/dissector"
mapfile -t srcs < <(find . -path ./tests -prune -o -path ./package -prune -o -name '*.[ch]' -print |
                    sed 's|^\./||' | LC_ALL=C sort)
mapfile -t cfiles < <(printf '%s\n' "${srcs[@]}" | grep '\.c$')
[ ${#cfiles[@]} -gt 0 ] || { echo "check-wireshark-apis: no sources in dissector/" >&2; exit 2; }

findings=$(mktemp)
trap 'rm -f "$findings"' EXIT
# checkAPIs.pl: every line it prints is a finding ("Error: ..." / "Warning: ...").
perl "$ws_src/tools/checkAPIs.pl" --group dissectors-prohibited --group dissectors-restricted \
    "${srcs[@]}" 2>&1 | sed 's/^/checkAPIs: /' >> "$findings" || true
# checkhf.pl: every line ("Unused href entry: FILE: hf_x", "ERROR: NO ARRAY: ...").
for f in "${cfiles[@]}"; do
    perl "$ws_src/tools/checkhf.pl" "$f" 2>&1 | sed 's/^/checkhf: /' >> "$findings" || true
done
# check_typed_item_calls.py: everything but its banner, the file name and
# the "0 warnings" summary. It looks under epan/dissectors unless given an
# absolute path; findings name the file by that path, written back relative.
for f in "${cfiles[@]}"; do
    out=$(python3 "$ws_src/tools/check_typed_item_calls.py" --file "$PWD/$f" \
          --mask --label --consecutive --missing-items 2>&1) || true
    printf '%s\n' "$out" | grep -v -x -e 'Examining:' -e '' -e "$PWD/$f *" -e '0 warnings' |
        sed "s|$PWD/||g; s/^/check_typed_item_calls: /" >> "$findings" || true
done

# Exceptions: "<finding as printed above> -- <reason>", # comments.
status=0
declare -A excused=()
if [ -f "$exceptions" ]; then
    while IFS= read -r line; do
        case "$line" in '' | '#'*) continue ;; esac
        finding=${line%% -- *}
        reason=${line#* -- }
        if [ "$finding" = "$line" ] || [ -z "${reason// /}" ]; then
            echo "check-wireshark-apis: exception without a reason (\"FINDING -- REASON\"): $line" >&2
            status=1
            continue
        fi
        excused[$finding]=0
    done < "$exceptions"
fi
n=0
while IFS= read -r f; do
    [ -n "$f" ] || continue
    n=$((n + 1))
    if [ -n "${excused[$f]+x}" ]; then
        excused[$f]=1
    else
        echo "FINDING: $f"
        status=1
    fi
done < "$findings"
for f in "${!excused[@]}"; do
    if [ "${excused[$f]}" = 0 ]; then
        echo "STALE EXCEPTION (no checker reports it now; remove it from ${exceptions#"$repo"/}): $f"
        status=1
    fi
done
echo "check-wireshark-apis: Wireshark ${ws_src##*/wireshark-}: ${#srcs[@]} files, $n findings, ${#excused[@]} excused"
exit $status
