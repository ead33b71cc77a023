#!/usr/bin/env bash
# test-wireshark.sh: build the plugin and run its dissector and analysis tests
# against another Wireshark, in a Debian chroot made with debootstrap.
#
#   scripts/test-wireshark.sh 4.6          # Wireshark 4.6 (Debian sid)
#   scripts/test-wireshark.sh 4.4 4.6      # both, one after the other
#   scripts/test-wireshark.sh all          # every version of the matrix
#   scripts/test-wireshark.sh --shell 4.6  # a root shell in the chroot, clone mounted
#   scripts/test-wireshark.sh --prepare all  # only make and provision the chroots
#                                          # (scripts/test.sh runs it in the background
#                                          # while the host's tests run)
#   scripts/test-wireshark.sh --run 'python3 dissector/tests/goldens.py --regenerate' 4.6
#                                          # build, then run a command in the clone
#                                          # (CHUNK_BUILD_DIR=build-ws4.6) instead of ctest
#   scripts/test-wireshark.sh --plugin-only --run CMD 4.6
#                                          # the same without the endpoints' compile
#                                          # (scripts/test-package.sh: cpack)
#
# The matrix (README.md, "Wireshark versions"):
#   4.0  Debian 12 (bookworm): the host; scripts/test.sh runs everything there
#   4.4  Debian 13 (trixie):   chroot CHROOTS/trixie
#   4.6  Debian sid:           chroot CHROOTS/sid
#
# For each version it
#   1. makes the chroot once (debootstrap --variant=minbase) and installs the
#      packages below; a stamp file in the chroot (.chunkshark-packages) lists
#      them, so a later run with the same list does neither. When debootstrap
#      or apt-get cannot fetch from the mirror, it says so loudly and SKIPS
#      that version (exit status 77 when every version asked for was skipped);
#   2. mounts /proc, /dev, /dev/pts, /dev/shm and this clone (at /src) in the
#      chroot, and unmounts them on exit, failure included;
#   3. configures and builds the plugin, its C unit tests and the tests
#      (RelWithDebInfo, -Werror, no endpoints) into build-ws<VERSION>/, and
#      compiles the endpoints with that Debian's GCC (-O2, -Werror, no debug
#      information; no test here runs them) in build-ws<VERSION>-endpoints/,
#      so that the whole tree is checked warning-free with each GCC (build
#      trees in the clone, reused by the next run);
#   4. runs ctest -R with the regex the build wrote to <build>/dissector-tests.txt
#      (dissector.*, analysis.* and <protocol>.* for every protocol of
#      dissector/protocols.txt; CHUNK_WS_TESTS overrides it) in it, one test
#      more at a time than JOBS (a test's Python and I/O leave a core idle
#      otherwise), but the
#      tests that run once, on the host (scripts/test.sh; host_only below):
#      hostile input, whose checks (no crash, no loop, bounded time and
#      memory) are of the plugin's own C code: the mutation fuzzer (label
#      mutate, on the ASan build of the plugin), the hostile captures' bounds
#      (*.hostile*), mutated and random datagrams (*.robust, netcode.mutate,
#      yojimbo.mismatch and yojimbo.crafted, labelled hostile); and the
#      analysis' scenarios on crafted and simulated traffic (gaps, crafted
#      netcode sessions, mid-session starts, other protocols' captures,
#      crafted reliable headers, the chunk-sim sweep), the check that
#      every expert summary is one fixed text (dissector.expert_groups),
#      and docs/architecture.md's file tree against dissector/ (dissector.
#      architecture: reads text files alone, no tshark, no build).
#      The memory tests stay on every version: reliable's layer measures
#      55-61 bytes a frame on 4.0, 80.5 on 4.6 (bench/RESULTS.md).
#      What Wireshark's version can change runs on every version: the
#      goldens (every field of every committed capture, -V), the truth
#      tests (the analysis' fields, -T fields), expert infos with and
#      without a tree, the tables, flows, I/O graph and colouring rules,
#      the single pass, Decode As, heuristics, preferences, key logs and
#      decryption, the C unit tests. scripts/chunk-tshark runs tshark as the
#      user nobody, since tshark running as root ignores plugin folders.
# A chroot that exists and fails to build or test fails the run (exit 1).
#
# Needs root (debootstrap, chroot, mount): run as root or it re-runs itself
# through sudo. One run per chroot at a time (flock on CHROOTS/<suite>.lock).
#
# Environment:
#   CHUNK_CHROOTS   where the chroots are kept (default /var/cache/chunkshark/chroots),
#                   outside the clone, reused by every run and every clone
#   CHUNK_MIRROR    Debian mirror (default: this machine's own, the first Debian
#                   archive URI of its apt sources: /etc/apt/sources.list.d/*.sources
#                   "URIs:" lines, then /etc/apt/sources.list "deb" lines;
#                   security archives skipped)
#   CHUNK_WS_TESTS  ctest -R regex (default: the build tree's dissector-tests.txt)
#   JOBS            parallel build and test jobs (default: nproc)
#   CHUNK_TSHARK_LEAN  passed on to the tests (scripts/chunk-tshark)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
chroots=${CHUNK_CHROOTS:-/var/cache/chunkshark/chroots}
chroot_name=test-wireshark.sh
. "$repo/scripts/chroot-common.sh"
tests=${CHUNK_WS_TESTS:-}
# The tests that run on the host alone (ctest -E; see 4. above).
host_only='(^|\.)hostile(\.|$)|^dissector\.expert_groups$|\.robust$|^netcode\.(mutate|crafted|midsession|foreign)$'
host_only+='|^yojimbo\.(mismatch|crafted)$|\.gaps$|^reliable\.headers$|^analysis\.sweep$|^dissector\.architecture$'
jobs=${JOBS:-$(nproc)}
# What the build and the tests need (scripts/deps.sh --test, less clang:
# the fuzzers run on the host only). dpkg-dev and file: dpkg-shlibdeps, and
# how cpack finds the ELF files to give it, for the Debian
# package (scripts/test-package.sh).
pkgs=(gcc make cmake pkg-config libwireshark-dev tshark libglib2.0-dev zlib1g-dev
      libpcap-dev python3 util-linux time binutils dpkg-dev file libgcrypt20-dev libsodium-dev)

usage() {
    cat <<EOF
usage: scripts/test-wireshark.sh [--shell | [--plugin-only] --run CMD | --prepare] VERSION...
Builds the chunk plugin and runs its dissector and analysis tests against
Wireshark VERSION in a Debian chroot (made and provisioned on first use).

  VERSION     4.4 (Debian trixie), 4.6 (Debian sid), or all
  --shell     open a root shell in the chroot instead (clone at /src)
  --run CMD   build, then run CMD (bash) in the clone instead of ctest, with
              CHUNK_BUILD_DIR set to the version's build tree
  --plugin-only  build the plugin's tree alone, not the endpoints' (with --run)
  --prepare   only make and provision the chroots (no build, no tests)
  -h, --help  this help

Chroots: \$CHUNK_CHROOTS (default /var/cache/chunkshark/chroots). Exit status:
0 all passed, 1 a build or test failed, 2 bad arguments, 77 every version
asked for was skipped because its chroot could not be made (mirror).
EOF
}

orig_args=("$@")
shell=0
prepare=0
plugin_only=0
run_cmd=""
versions=()
while [ $# -gt 0 ]; do
    a=$1
    shift
    case "$a" in
    -h | --help) usage; exit 0 ;;
    --shell) shell=1 ;;
    --prepare) prepare=1 ;;
    --plugin-only) plugin_only=1 ;;
    --run) [ $# -gt 0 ] || { echo "test-wireshark.sh: --run needs a command" >&2; exit 2; }
           run_cmd=$1; shift ;;
    4.0) echo "test-wireshark.sh: 4.0 is the host's Wireshark (Debian 12): bash scripts/test.sh" >&2; exit 2 ;;
    *) add_version "$a" 4.4 4.6 ;;
    esac
done
[ ${#versions[@]} -gt 0 ] || { usage >&2; exit 2; }

chroot_need_root CHUNK_CHROOTS,CHUNK_MIRROR,CHUNK_WS_TESTS,JOBS,CHUNK_TSHARK_LEAN "${orig_args[@]}"

# ensure_chroot SUITE ROOT: 0 ready, 3 could not be made (mirror).
ensure_chroot() {
    local suite=$1 root=$2 stamp=$2/.chunkshark-packages want
    want=$(printf '%s\n' "${pkgs[@]}" | sort)
    # debootstrap removes ROOT/debootstrap when it completes: a tree that
    # still has it (or has no apt) is an interrupted one, made again.
    if [ -d "$root" ] && { [ -d "$root/debootstrap" ] || [ ! -x "$root/usr/bin/apt-get" ]; }; then
        chroot_remove_incomplete "$root" || return 1
    fi
    if [ ! -d "$root" ]; then
        chroot_debootstrap "$suite" "$root" "$suite" || return $?
    fi
    if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
        return 0
    fi
    say "installing into the $suite chroot: ${pkgs[*]}"
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    if ! in_root "$root" apt-get "${apt_opts[@]}" update > "$root.apt.log" 2>&1 ||
       ! in_root "$root" apt-get "${apt_opts[@]}" install -y "${pkgs[@]}" >> "$root.apt.log" 2>&1; then
        tail -n 20 "$root.apt.log" >&2
        loud "cannot provision the $suite chroot: apt-get from $mirror failed (log: $root.apt.log)"
        return 3
    fi
    echo "$want" > "$stamp"
    return 0
}

trap unmount_all EXIT
trap 'exit 130' INT TERM

# run_version VERSION: 0 passed, 1 failed, 3 skipped.
run_version() {
    local v=$1 suite root b e rc=0 t0
    suite=$(suite_of "$v")
    root=$chroots/$suite
    t0=$(date +%s)
    exec 9>"$chroots/$suite.lock"
    flock 9
    ensure_chroot "$suite" "$root" || { rc=$?; exec 9>&-; return $rc; }
    if [ $prepare = 1 ]; then
        exec 9>&-
        say "== Wireshark $v ($suite): chroot ready in $(( $(date +%s) - t0 )) s"
        return 0
    fi
    mount_system "$root"
    mnt --bind "$repo" "$root/src"
    local -a in_chroot=(chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
                        LANG=C.UTF-8 TERM=dumb JOBS="$jobs" CHUNK_TSHARK_LEAN="${CHUNK_TSHARK_LEAN:-0}")
    if [ $shell = 1 ]; then
        say "shell in $root (Wireshark $v); the clone is at /src; exit to unmount"
        "${in_chroot[@]}" TERM="${TERM:-xterm}" bash -i || true
        unmount_all
        exec 9>&-
        return 0
    fi
    b=build-ws$v
    e=build-ws$v-endpoints
    local wsv
    wsv=$("${in_chroot[@]}" pkg-config --modversion wireshark)
    say "== Wireshark $wsv (Debian $suite): build $b/ (-Werror)$([ $plugin_only = 1 ] || echo " and $e/ (-O2 -Werror)")"
    # the longest tests first (a fresh build tree has no times of its own)
    bash "$repo/scripts/ctest-costs.sh" "$repo/$b"
    # $b: the plugin, the dissector's C unit tests and the tests, as a user
    # builds them (RelWithDebInfo), -Werror. $e: the endpoints, which no test
    # here runs (the simulators' captures are committed), compiled with this
    # GCC at -O2 with -Werror: the same warnings as RelWithDebInfo (-O2 -g;
    # -g changes no warning), without the debug information (4.4: 19.4 s of
    # CPU against 21.9 s). Not -O0 (5.4 s), which misses the warnings of the
    # optimisers' value ranges and data flow (-Warray-bounds,
    # -Wmaybe-uninitialized), the kind new GCCs add most, nor -fsyntax-only
    # (2.0 s), which also misses -Wreturn-type at a function's end,
    # -Wformat-truncation, -Wstringop-overflow and -Wuse-after-free.
    if ! "${in_chroot[@]}" bash -c "set -e; cd /src
            cmake -S . -B $b -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS=-Werror -DCHUNK_BUILD_ENDPOINTS=OFF > $b.log 2>&1 ||
                { cat $b.log; exit 1; }
            cmake --build $b -j$jobs >> $b.log 2>&1 || { grep -E 'error|warning' $b.log | head -n 40; exit 1; }
            rm -f $b.log
            [ $plugin_only = 1 ] && exit 0
            cmake -S . -B $e -DCMAKE_BUILD_TYPE=RelWithDebInfo '-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG' \
                -DCMAKE_C_FLAGS=-Werror -DCHUNK_BUILD_DISSECTOR=OFF > $e.log 2>&1 || { cat $e.log; exit 1; }
            cmake --build $e -j$jobs >> $e.log 2>&1 || { grep -E 'error|warning' $e.log | head -n 40; exit 1; }
            rm -f $e.log"; then
        loud "Wireshark $v ($suite): the build FAILED"
        rc=1
    elif [ -n "$run_cmd" ]; then
        "${in_chroot[@]}" CHUNK_BUILD_DIR=/src/$b bash -c "cd /src && $run_cmd" || rc=1
    elif ! "${in_chroot[@]}" CHUNK_WS_TESTS="$tests" bash -c 'cd /src && t=${CHUNK_WS_TESTS:-$(cat "$0/dissector-tests.txt")} &&
            [ -n "$t" ] && ctest --test-dir "$0" -R "$t" -LE mutate -E "$1" --output-on-failure -j"$((JOBS + 1))"' "$b" "$host_only"; then
        loud "Wireshark $v ($suite): tests FAILED"
        rc=1
    fi
    unmount_all
    exec 9>&-
    say "== Wireshark $v ($suite): $([ $rc = 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - t0 )) s"
    return $rc
}

mkdir -p "$chroots"
failed=0
skipped=0
for v in "${versions[@]}"; do
    rc=0
    run_version "$v" || rc=$?
    case $rc in
    0) ;;
    3) skipped=$((skipped + 1)); loud "Wireshark $v SKIPPED: its chroot could not be made (see above)" ;;
    *) failed=1 ;;
    esac
done
[ $failed = 0 ] || exit 1
[ $skipped -lt ${#versions[@]} ] || exit 77
exit 0
