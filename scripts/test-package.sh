#!/usr/bin/env bash
# test-package.sh: build the plugin's Debian package for a Wireshark version
# and install it as a user would, into a clean Debian of that version.
#
#   scripts/test-package.sh 4.0          # the host's Wireshark (Debian 12)
#   scripts/test-package.sh 4.4 4.6      # in the trixie and sid chroots
#   scripts/test-package.sh all          # 4.0, 4.4 and 4.6
#   scripts/test-package.sh --prepare all  # only make the clean chroots (scripts/test.sh
#                                          # runs it in the background while the host's tests run)
#
# For each version it
#   1. builds the package: 4.0 on the host in $CHUNK_BUILD_DIR (default
#      build/, configured if needed) with `cpack -G DEB`; 4.4 and 4.6 in the
#      build chroots through scripts/test-wireshark.sh --plugin-only --run
#      (build-ws<VERSION>/: after step 4 of scripts/test.sh built it, only
#      a configure and cpack);
#   2. makes, once, a clean chroot of that Debian (CHROOTS/<suite>-clean:
#      debootstrap --variant=minbase, with the archives of tshark downloaded
#      but nothing installed), and mounts an overlay over it, so that every
#      run starts from the same clean system and leaves it unchanged;
#   3. in the overlay: `apt-get install ./<package>.deb` must pull in the
#      libwireshark package (and every library the plugin needs: ldd finds
#      them all) through Depends alone; then tshark is installed and run as
#      the user nobody (tshark run as root ignores plugins), without any
#      build tree: `tshark -G protocols` lists every protocol of dissector/protocols.txt, and
#      it decodes committed captures of each; `apt-get remove` takes chunk.so
#      away again and tshark no longer knows the protocols.
# The overlay, its mounts and the package copies are removed on exit. This
# machine's own system is never changed (installing the package here would
# also put a second chunk.so beside the one of every build tree that tshark
# is pointed at).
#
# Needs root (debootstrap, chroot, mount) or sudo. Exit status: 0 passed,
# 1 failed, 2 bad arguments, 77 every version asked for was skipped (its
# chroot could not be made: no mirror).
#
# Environment:
#   CHUNK_CHROOTS     chroot folder (default /var/cache/chunkshark/chroots),
#                     shared with scripts/test-wireshark.sh
#   CHUNK_MIRROR      Debian mirror for debootstrap (default: the first Debian
#                     archive in this machine's apt sources)
#   CHUNK_BUILD_DIR   the host's build tree for 4.0 (default build)
#   JOBS              parallel build jobs (default: nproc)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
chroots=${CHUNK_CHROOTS:-/var/cache/chunkshark/chroots}
jobs=${JOBS:-$(nproc)}
chroot_name=test-package.sh
. "$repo/scripts/chroot-common.sh"

usage() {
    cat <<EOF
usage: scripts/test-package.sh [--prepare] VERSION...
Builds the chunk plugin's Debian package for Wireshark VERSION and installs it
into a clean Debian of that version (a chroot overlay), where tshark run as
an ordinary user must find and use the plugin; removing the package must take
it away again.

  VERSION     4.0 (Debian 12, the host), 4.4 (trixie), 4.6 (sid), or all
  --prepare   only make the clean chroots (no package is built or installed)
  -h, --help  this help

Exit status: 0 passed, 1 failed, 2 bad arguments, 77 every version skipped
(its chroot could not be made).
EOF
}

orig_args=("$@")
versions=()
prepare=0
for a in "$@"; do
    case "$a" in
    -h | --help) usage; exit 0 ;;
    --prepare) prepare=1 ;;
    *) add_version "$a" 4.0 4.4 4.6 ;;
    esac
done
[ ${#versions[@]} -gt 0 ] || { usage >&2; exit 2; }

chroot_need_root CHUNK_CHROOTS,CHUNK_MIRROR,CHUNK_BUILD_DIR,JOBS "${orig_args[@]}"

# clean_ws ROOT: major.minor of the tshark whose archive the clean chroot holds.
clean_ws() {
    local f
    for f in "$1"/var/cache/apt/archives/tshark_*.deb; do
        basename "$f" | sed -n 's/^tshark_\([0-9]*%3a\)\{0,1\}\([0-9]*\.[0-9]*\)\..*/\2/p'
    done | head -n 1
}

# ensure_clean SUITE ROOT [WS]: 0 ready, 3 could not be made (mirror), 1 error.
# Without WS (--prepare) the chroot's tshark is not compared with a build's.
# A clean chroot: minbase, apt lists, tshark's archives in apt's cache (so
# that each run installs offline), nothing else installed. Made again when
# its tshark is not Wireshark WS (sid moved on since it was made).
ensure_clean() {
    local suite=$1 root=$2 ws=${3:-} stamp=$2/.chunkshark-clean want=tshark-downloaded
    if [ -n "$ws" ] && [ -d "$root" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ "$(clean_ws "$root")" != "$ws" ]; then
        say "$root holds tshark $(clean_ws "$root"), not $ws: making it again"
        rm -f "$stamp"
    fi
    if [ -d "$root" ] && [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        chroot_remove_incomplete "$root" || return 1
    fi
    [ -d "$root" ] && return 0
    chroot_debootstrap "$suite" "$root" "clean $suite" || return $?
    if ! in_root "$root" apt-get "${apt_opts[@]}" update > "$root.apt.log" 2>&1 ||
       ! in_root "$root" apt-get "${apt_opts[@]}" install -y --download-only tshark >> "$root.apt.log" 2>&1; then
        tail -n 20 "$root.apt.log" >&2
        loud "cannot download tshark into the clean $suite chroot (log: $root.apt.log)"
        return 3
    fi
    echo "$want" > "$stamp"
    if [ -n "$ws" ] && [ "$(clean_ws "$root")" != "$ws" ]; then
        loud "$suite now has tshark $(clean_ws "$root"), the build chroot Wireshark $ws: make the build chroot again (remove $chroots/$suite)"
        return 1
    fi
}

tmp=""
cleanup() {
    unmount_all
    if [ -n "$tmp" ]; then
        rm -rf --one-file-system "$tmp"
        tmp=""
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fails=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*" >&2; fails=$((fails + 1)); }
get() { sed -n "s/^$1=//p" "$2"; }

# package_checks INFO: on the system that run() reaches, just after the
# package of the build whose package.txt is INFO was installed by itself.
package_checks() {
    local info=$1 so libws name
    name=$(get name "$info")
    so=$(get plugin_dir "$info")/chunk.so
    libws=$(get libwireshark "$info")
    run dpkg-query -W -f='${Status}\n' "$name" 2>/dev/null | grep -q 'install ok installed' &&
        ok "$name installed" || bad "$name is not installed"
    run test -f "$so" && ok "$so" || bad "no $so"
    # Pulled in by Depends alone (tshark is not installed yet in a clean chroot).
    run dpkg-query -W -f='${Status}\n' "$libws" 2>/dev/null | grep -q 'install ok installed' &&
        ok "$libws installed" || bad "$libws is not installed"
    if run ldd "$so" > "$work/ldd" 2>&1 && ! grep -q 'not found' "$work/ldd"; then
        ok "ldd: every library of chunk.so found ($(grep -c '=>' "$work/ldd") libraries)"
    else
        cat "$work/ldd" >&2; bad "ldd chunk.so: a library is missing"
    fi
}

# tshark_checks PHASE INFO CAPDIR: tshark run by as_nobody() after the
# package was installed (PHASE installed) or removed (PHASE removed); CAPDIR:
# the captures as that system sees them.
tshark_checks() {
    local phase=$1 info=$2 capdir=$3 protos n so
    so=$(get plugin_dir "$info")/chunk.so
    protos=$(as_nobody tshark -G protocols 2>/dev/null | cut -f3 | grep -xF -f "$work/protocols" | sort | tr '\n' ' ' || true)
    if [ "$phase" = installed ]; then
        [ "$protos" = "$(sort "$work/protocols" | tr '\n' ' ')" ] && ok "tshark as nobody lists the protocols: $protos" ||
            bad "tshark as nobody lists '$protos', not every protocol of dissector/protocols.txt"
        as_nobody tshark -G plugins 2>/dev/null | grep -qE "^chunk\.so[[:space:]].*[[:space:]]$so\$" &&
            ok "tshark -G plugins: chunk.so from $so" || bad "tshark -G plugins does not show chunk.so from $so"
        local cap filter
        for cap in clean.pcap:chunk.type p2frag-clean.pcap:p2frag netgame-clean.pcap:netgame.analysis.acked_in; do
            filter=${cap#*:}
            cap=${cap%%:*}
            n=$(as_nobody tshark -n -2 -r "$capdir/$cap" -Y "$filter" 2>"$work/tshark.err" | wc -l || true)
            if [ "${n:-0}" -gt 0 ] && [ ! -s "$work/tshark.err" ]; then
                ok "tshark as nobody decodes $cap: $n packets match $filter"
            else
                cat "$work/tshark.err" >&2; bad "tshark as nobody: no packet of $cap matches $filter"
            fi
        done
    else
        [ -z "$protos" ] && ok "after removal tshark knows none of the protocols" ||
            bad "after removal tshark still lists '$protos'"
    fi
}

# test_in_clean VERSION INFO DEB: install DEB into an overlay of the clean chroot.
test_in_clean() {
    local v=$1 info=$2 deb=$3 suite root lock rc name
    suite=$(suite_of "$v")
    root=$chroots/$suite-clean
    lock=$chroots/$suite-clean.lock
    mkdir -p "$chroots"
    exec 8>"$lock"
    flock 8
    rc=0
    ensure_clean "$suite" "$root" "$(get wireshark "$info")" || rc=$?
    if [ $rc != 0 ]; then
        exec 8>&-
        return $rc
    fi
    # Others may use the clean chroot beside us, none may change it.
    flock -s 8
    tmp=$(mktemp -d /tmp/chunk-package.XXXXXX)
    work=$tmp/work-files
    mkdir -p "$tmp/upper" "$tmp/work" "$tmp/root" "$work"
    mnt -t overlay overlay -o "lowerdir=$root,upperdir=$tmp/upper,workdir=$tmp/work" "$tmp/root"
    local r=$tmp/root
    mount_system "$r"
    cp /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
    mkdir -p "$r/tmp/pkg" "$r/tmp/captures" "$r/tmp/nobody"
    # The plugin's protocols (dissector/protocols.txt: the first column, # comments).
    awk '!/^#/ && NF { print $1 }' "$repo/dissector/protocols.txt" > "$work/protocols"
    cp "$deb" "$r/tmp/pkg/"
    cp "$repo"/captures/clean.pcap "$repo"/captures/p2frag-clean.pcap "$repo"/captures/netgame-clean.pcap "$r/tmp/captures/"
    chmod -R a+rX "$r/tmp/captures"
    chown 65534:65534 "$r/tmp/nobody"
    run() { in_root "$r" "$@"; }
    as_nobody() { chroot --userspec=65534:65534 "$r" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp/nobody LANG=C.UTF-8 "$@"; }
    name=$(get name "$info")
    say "== $v: apt-get install ./$(basename "$deb") into a clean $suite (overlay of $root)"
    # dpkg without its fsync calls: the overlay is thrown away afterwards.
    local -a apt_o=("${apt_opts[@]}" -o Dpkg::Options::=--force-unsafe-io)
    if run apt-get "${apt_o[@]}" install -y "/tmp/pkg/$(basename "$deb")" > "$work/install.log" 2>&1; then
        ok "apt-get install ./$(basename "$deb"): $(grep -c "^Unpacking " "$work/install.log" || true) packages unpacked"
        package_checks "$info"
        if run apt-get "${apt_o[@]}" install -y tshark > "$work/tshark.log" 2>&1; then
            tshark_checks installed "$info" /tmp/captures
        else
            tail -n 20 "$work/tshark.log" >&2; bad "apt-get install tshark failed in the clean $suite"
        fi
        if run apt-get "${apt_o[@]}" remove -y "$name" > "$work/remove.log" 2>&1; then
            run test ! -e "$(get plugin_dir "$info")/chunk.so" && ok "apt-get remove $name: chunk.so gone" ||
                bad "chunk.so still there after apt-get remove"
            tshark_checks removed "$info" /tmp/captures
        else
            tail -n 20 "$work/remove.log" >&2; bad "apt-get remove $name failed"
        fi
    else
        tail -n 30 "$work/install.log" >&2
        bad "apt-get install of the package failed in the clean $suite (a Depends that $suite cannot satisfy?)"
    fi
    cleanup
    exec 8>&-
    return 0
}

# build_package VERSION: prints the build tree holding the package.
build_package() {
    local v=$1 b info rc
    if [ "$v" = 4.0 ]; then
        b=${CHUNK_BUILD_DIR:-$repo/build}
        [ -f "$b/CMakeCache.txt" ] || cmake -S "$repo" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null ||
            { say "configure of $b failed"; return 1; }
        cmake -S "$repo" -B "$b" > "$b/package.log" 2>&1 && cmake --build "$b" -j"$jobs" >> "$b/package.log" 2>&1 &&
            (cd "$b" && cpack -G DEB >> "$b/package.log" 2>&1) || { tail -n 30 "$b/package.log" >&2; return 1; }
        rm -f "$b/package.log"
    else
        b=$repo/build-ws$v
        rc=0
        JOBS=$jobs bash "$repo/scripts/test-wireshark.sh" --plugin-only --run 'cd "$CHUNK_BUILD_DIR" && cpack -G DEB > cpack.log 2>&1 || { tail -n 30 cpack.log; exit 1; }' "$v" >&2 || rc=$?
        [ $rc = 0 ] || return $rc
    fi
    echo "$b"
}

skipped=0
if [ $prepare = 1 ]; then
    for v in "${versions[@]}"; do
        t0=$(date +%s)
        suite=$(suite_of "$v")
        mkdir -p "$chroots"
        rc=0
        ( exec 8>"$chroots/$suite-clean.lock"; flock 8; ensure_clean "$suite" "$chroots/$suite-clean" ) || rc=$?
        case $rc in
        0) say "== Wireshark $v: clean $suite chroot ready in $(( $(date +%s) - t0 )) s" ;;
        3) skipped=$((skipped + 1)); loud "Wireshark $v SKIPPED: its clean chroot could not be made" ;;
        *) fails=$((fails + 1)) ;;
        esac
    done
    [ $fails = 0 ] || exit 1
    [ $skipped -lt ${#versions[@]} ] || exit 77
    exit 0
fi
for v in "${versions[@]}"; do
    t0=$(date +%s)
    before=$fails
    say "== Wireshark $v: build the package"
    rc=0
    b=$(build_package "$v") || rc=$?
    if [ $rc = 77 ]; then
        skipped=$((skipped + 1)); loud "Wireshark $v SKIPPED: its build chroot could not be made"; continue
    elif [ $rc != 0 ]; then
        fails=$((fails + 1)); loud "Wireshark $v: building the package FAILED"; continue
    fi
    info=$b/package.txt
    deb=$b/$(get deb "$info")
    if [ ! -f "$deb" ]; then
        fails=$((fails + 1)); loud "Wireshark $v: no package $deb"; continue
    fi
    say "   $deb: Depends: $(dpkg-deb -f "$deb" Depends)"
    rc=0
    test_in_clean "$v" "$info" "$deb" || rc=$?
    if [ $rc = 3 ]; then
        skipped=$((skipped + 1)); loud "Wireshark $v SKIPPED: its clean chroot could not be made"
    elif [ $rc != 0 ]; then
        fails=$((fails + 1))
    fi
    say "== Wireshark $v: package $([ $fails = $before ] && echo passed || echo FAILED) in $(( $(date +%s) - t0 )) s"
done
[ $fails = 0 ] || { echo "test-package.sh: $fails FAILED" >&2; exit 1; }
[ $skipped -lt ${#versions[@]} ] || exit 77
echo "test-package.sh: passed"
exit 0
