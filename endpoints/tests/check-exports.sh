#!/bin/sh
# check-exports.sh NM SRC_DIR OBJ_DIR LIB...: every function or variable the
# endpoint libraries export (nm: defined, global)
#  - carries a project prefix: cs_, p2_, netsim_, a protocol's own (the name
#    of each folder under SRC_DIR/src/, e.g. chunk_ for src/chunk/; rl_ for
#    src/reliable/, whose long prefix is the reference library's), or one of
#    app/'s (platform_, pcapout_, app_, udp_link_, linkopt_, simprog_, truth_);
#  - is used by another object file: a program's, a test's or another library
#    file's (an undefined reference in any *.o under OBJ_DIR; its own object
#    defines it, so never counts). A function only its own file calls is
#    static there.
# Names that start with __ are the compiler's and its runtime's (a sanitizer
# build adds __odr_asan.NAME for every global variable): not ours, passed over.
# Prints each offender; exit 0 none, 1 some, 2 bad use.
set -eu
[ $# -ge 4 ] || { echo "usage: check-exports.sh NM SRC_DIR OBJ_DIR LIB..." >&2; exit 2; }
nm=$1 src=$2 objdir=$3
shift 3

prefixes="cs_ p2_ netsim_ platform_ pcapout_ app_ udp_link_ linkopt_ simprog_ truth_ rl_"
for dir in "$src"/src/*/; do
    [ -d "$dir" ] && prefixes="$prefixes $(basename "$dir")_"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "object symbol" for every global definition in the libraries.
for lib in "$@"; do
    "$nm" -A -g --defined-only "$lib" | awk 'NF == 3 && $3 !~ /^__/ { n = split($1, p, ":"); print p[n - 1], $3 }'
done | sort -u > "$tmp/defined"
[ -s "$tmp/defined" ] || { echo "check-exports.sh: no symbols in $*" >&2; exit 2; }

# Every undefined reference of every object file.
find "$objdir" -name '*.o' | while read -r obj; do
    "$nm" -u "$obj" | awk 'NF == 2 { print $2 }'
done | sort -u > "$tmp/used"

status=0
while read -r obj sym; do
    ok=0
    for p in $prefixes; do
        case "$sym" in "$p"*) ok=1 ;; esac
    done
    if [ "$ok" = 0 ]; then
        echo "$obj exports $sym: no project prefix ($prefixes)"
        status=1
    fi
    if ! grep -qxF "$sym" "$tmp/used"; then
        echo "$obj exports $sym: no other object file uses it (make it static, or remove it)"
        status=1
    fi
done < "$tmp/defined"
[ "$status" = 0 ] && echo "check-exports.sh: $(wc -l < "$tmp/defined") exported symbols, all prefixed and used"
exit $status
