#!/usr/bin/env bash
# check-windows-compile.sh: compiles every source of the plugin (dissector/,
# not its tests) for 64-bit Windows with MinGW-w64's GCC (-c, nothing
# linked), against Wireshark's headers from Debian's wireshark source package
# and GLib's headers. Any error fails, and so does any warning that
# dissector/tests/portability/windows-warnings.txt does not list with a
# reason (a listed warning no source gives any more fails too).
#
#   scripts/check-windows-compile.sh [--source DIR] [--build DIR] [--extra FILE | --probe FILE] [VERSION]
#
# VERSION: the Wireshark whose headers are used (default: the host tshark's
# major.minor), from scripts/wireshark-source.sh (cached), or the Wireshark
# tree DIR. --build: a configured build tree of this repository (default
# <repo>/build), for the generated dissector/plugin-protocols.h. --extra:
# compile FILE too. --probe: compile FILE alone, with the same compiler,
# flags and headers, any warning of it new (no stale-list check): the test
# that the check catches POSIX-only code, without compiling the plugin's
# sources again (portability.windows_compile does).
#
# What stands in for what a Windows build would have:
#   glibconfig.h  GLib writes it for its platform and Debian has no Windows
#                 GLib: dissector/tests/portability/mingw/glibconfig.h.in,
#                 our description of 64-bit Windows, versioned from
#                 pkg-config glib-2.0 (the headers are Debian's).
#   ws_version.h  written by Wireshark's build from ws_version.h.in: filled in
#                 here from the source tree's CMakeLists.txt.
#   zlib.h, gcrypt.h (and gpg-error.h): Debian's headers, alone in a folder
#                 (not all of /usr/include, whose C library is Linux's).
# Wireshark's, GLib's and those headers are -isystem: their own warnings are
# not ours to fix. Flags: -std=c11 -Wall -Wextra, as the regular build.
#
# Installs nothing (scripts/deps.sh --test installs gcc-mingw-w64-x86-64).
# Exit: 0 clean, 1 errors or new warnings, 2 usage, 77 no MinGW-w64 GCC or
# no Wireshark source.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
listed=$repo/dissector/tests/portability/windows-warnings.txt
template=$repo/dissector/tests/portability/mingw/glibconfig.h.in
cc=${MINGW_CC:-x86_64-w64-mingw32-gcc}
ws_src=""
build=$repo/build
extra_src=""
probe=0
usage() { echo "usage: $0 [--source DIR] [--build DIR] [--extra FILE | --probe FILE] [VERSION]" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --source) [ $# -ge 2 ] || usage; ws_src=$2; shift 2 ;;
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --extra | --probe)
        [ $# -ge 2 ] && [ -f "$2" ] || usage
        [ "$1" = --extra ] || probe=1
        extra_src=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ $# -le 1 ] || usage
command -v "$cc" >/dev/null ||
    { echo "check-windows-compile: SKIP: no $cc (apt-get install gcc-mingw-w64-x86-64, or scripts/deps.sh --test)" >&2; exit 77; }
if [ -z "$ws_src" ]; then
    mm=${1:-}
    if [ -z "$mm" ] && command -v tshark >/dev/null; then
        mm=$(tshark --version 2>/dev/null | sed -n '1s/.* \([0-9]\+\.[0-9]\+\)\..*/\1/p')
    fi
    [ -n "$mm" ] || { echo "check-windows-compile: no VERSION and no host tshark to take it from" >&2; exit 2; }
    if ! ws_src=$("$repo/scripts/wireshark-source.sh" "$mm"); then
        echo "check-windows-compile: SKIP: no Wireshark $mm source (scripts/wireshark-source.sh $mm failed)" >&2
        exit 77
    fi
fi
[ -f "$ws_src/include/wireshark.h" ] && [ -f "$ws_src/ws_version.h.in" ] ||
    { echo "check-windows-compile: $ws_src is not a Wireshark source tree" >&2; exit 2; }
[ -f "$build/dissector/plugin-protocols.h" ] ||
    { echo "check-windows-compile: no $build/dissector/plugin-protocols.h: configure first (cmake -S . -B build) or give --build" >&2; exit 2; }
glib_version=$(pkg-config --modversion glib-2.0 2>/dev/null) && glib_inc=$(pkg-config --variable=includedir glib-2.0) ||
    { echo "check-windows-compile: no GLib headers (pkg-config glib-2.0; apt-get install libglib2.0-dev)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/inc" "$tmp/obj"

# glibconfig.h: ours, with the version of Debian's GLib headers.
IFS=. read -r gmaj gmin gmic <<< "$glib_version"
sed "s/@GLIB_MAJOR@/$gmaj/; s/@GLIB_MINOR@/$gmin/; s/@GLIB_MICRO@/${gmic:-0}/" "$template" > "$tmp/inc/glibconfig.h"
# ws_version.h: Wireshark's template, with the source tree's version.
ws_ver() { sed -n "s/^set(PROJECT_$1_VERSION \([0-9]*\))/\1/p" "$ws_src/CMakeLists.txt" | head -n 1; }
sed "s/@PROJECT_MAJOR_VERSION@/$(ws_ver MAJOR)/; s/@PROJECT_MINOR_VERSION@/$(ws_ver MINOR)/; s/@PROJECT_PATCH_VERSION@/$(ws_ver PATCH)/" \
    "$ws_src/ws_version.h.in" > "$tmp/inc/ws_version.h"
grep -q 'MAJOR [0-9]' "$tmp/inc/ws_version.h" ||
    { echo "check-windows-compile: cannot read the version from $ws_src/CMakeLists.txt" >&2; exit 2; }
# The few library headers the plugin includes beyond Wireshark and GLib.
for h in zlib.h zconf.h gcrypt.h gpg-error.h gpgrt.h; do
    f=""
    for d in /usr/include /usr/include/*-linux-gnu; do
        [ -f "$d/$h" ] && { f=$d/$h; break; }
    done
    [ -n "$f" ] && ln -s "$f" "$tmp/inc/$h"
done
for h in zlib.h gcrypt.h; do
    [ -e "$tmp/inc/$h" ] ||
        { echo "check-windows-compile: no $h (apt-get install zlib1g-dev libgcrypt20-dev)" >&2; exit 2; }
done

cd "$repo/dissector"
mapfile -t srcs < <(find . -path ./tests -prune -o -path ./package -prune -o -name '*.c' -print |
                    sed 's|^\./||' | LC_ALL=C sort)
[ -z "$extra_src" ] || srcs+=("$extra_src")
[ $probe = 0 ] || srcs=("$extra_src")
flags=(-c -std=c11 -Wall -Wextra -fdiagnostics-plain-output -fno-diagnostics-show-caret
       -I. -Icommon -Inetcode -I"$build/dissector"
       -isystem "$tmp/inc" -isystem "$ws_src/include" -isystem "$ws_src"
       -isystem "$glib_inc/glib-2.0")
log=$tmp/log
errors=0
for f in "${srcs[@]}"; do
    extra=()
    # plugin.c defines the entry points Wireshark looks up: exported, as
    # dissector/CMakeLists.txt compiles it in Wireshark's tree.
    [ "$f" = plugin.c ] && extra=(-DWS_BUILD_DLL)
    if ! "$cc" "${flags[@]}" "${extra[@]}" "$f" -o "$tmp/obj/$(echo "$f" | tr / _).o" >> "$log" 2>&1; then
        echo "ERROR: $f does not compile for Windows"
        errors=$((errors + 1))
    fi
done
# Every diagnostic, without its line and column (the list must not change
# with every edit above the line): "file: warning: text [-Wflag]".
grep -E '^[^ :]+:[0-9]+:[0-9]+: (warning|error):' "$log" |
    sed -E 's/^([^:]+):[0-9]+:[0-9]+: /\1: /' | LC_ALL=C sort -u > "$tmp/diags" || true
grep ': error:' "$tmp/diags" || true

status=0
[ $errors = 0 ] || status=1
declare -A excused=()
if [ -f "$listed" ] && [ $probe = 0 ]; then
    while IFS= read -r line; do
        case "$line" in '' | '#'*) continue ;; esac
        w=${line%% -- *}
        reason=${line#* -- }
        if [ "$w" = "$line" ] || [ -z "${reason// /}" ]; then
            echo "check-windows-compile: listed warning without a reason (\"WARNING -- REASON\"): $line" >&2
            status=1
            continue
        fi
        excused[$w]=0
    done < "$listed"
fi
nwarn=0
while IFS= read -r w; do
    case "$w" in *": warning: "*) ;; *) continue ;; esac
    nwarn=$((nwarn + 1))
    if [ -n "${excused[$w]+x}" ]; then
        excused[$w]=1
    else
        echo "NEW WARNING: $w"
        status=1
    fi
done < "$tmp/diags"
for w in "${!excused[@]}"; do
    if [ "${excused[$w]}" = 0 ]; then
        echo "STALE (no source gives it now; remove it from ${listed#"$repo"/}): $w"
        status=1
    fi
done
if [ $status != 0 ] && [ $errors != 0 ]; then
    echo "--- compiler output (first 60 lines) ---"
    head -n 60 "$log"
fi
echo "check-windows-compile: $("$cc" -dumpversion) for Windows x86-64, Wireshark $(ws_ver MAJOR).$(ws_ver MINOR).$(ws_ver PATCH) headers, GLib $glib_version: ${#srcs[@]} sources, $errors failed, $nwarn warnings, ${#excused[@]} listed"
exit $status
