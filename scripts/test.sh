#!/usr/bin/env bash
# test.sh: installs what is missing, builds, and runs the tests.
#
#   bash scripts/test.sh           every test (CI runs this: .ci/run)
#   bash scripts/test.sh --quick   the quick tier: unit tests, vectors, goldens,
#                                  crafted and truth tests, on build/ alone
#                                  (no sanitizer or fuzz build, no chroot):
#                                  198 tests in 59 s after the build on
#                                  a quiet 2-core machine (84 s in all in
#                                  a fresh clone, build included)
#
# The full run, in this order:
#   0. the chroots of steps 4 and 5, and Wireshark's source package (for the
#      portability tests), are made in the background (debootstrap and
#      apt-get: the network, hardly the CPU) while steps 1-3 run; made once,
#      they are reused by every later run (CHUNK_CHROOTS);
#   1. endpoints under AddressSanitizer + UndefinedBehaviorSanitizer
#      (build-asan/); its tests, mostly waiting on timers (sockets, soaks),
#      run while step 2's fuzzers are compiled;
#   2. the fuzzers (build-fuzz/, clang): bounded libFuzzer runs side by side,
#      and the mutation fuzzer on the ASan/UBSan build of the plugin (-V in
#      one pass, the tree made but not printed with -2: fuzz/README.md);
#   3. everything, dissector included (build/), with ctest's summary last
#      (the mutation fuzzer already ran in step 2, on the ASan plugin);
#   4. the dissector and analysis tests that can differ between Wireshark
#      versions against 4.4 and 4.6, in Debian 13 and sid chroots
#      (scripts/test-wireshark.sh all; needs root or sudo): for each, the
#      plugin built with -Werror and 58 tests, the 22 others running on the
#      host alone, and the endpoints compiled with that Debian's GCC (-O2
#      -Werror; no test there runs them);
#   5. beside step 4 (its output shown after it): the plugin's Debian
#      package for 4.0, 4.4 and 4.6, installed into a clean chroot of each
#      Debian and used by tshark as an ordinary user (scripts/test-package.sh;
#      needs root or sudo); the 4.4 and 4.6 packages wait for step 4's build
#      of that version.
# Each ctest run starts its longest tests first (a fresh build tree gets the
# times of scripts/test-costs.txt: scripts/ctest-costs.sh), so that no long
# test is left running alone at the end; ctest runs one test more than the
# cores, beside the socket and soak tests that mostly wait on timers (not
# for the fuzzers, whose runs are bounded by time).
# Everything else is CPU-bound: a tshark start costs about 0.33 s of CPU on
# Wireshark 4.0 (0.24 s with the tests' lean data folder: scripts/chunk-tshark,
# CHUNK_TSHARK_LEAN) and 0.2 s on 4.4 and 4.6, nearly all of it Wireshark's
# start, so the tests read one run per capture and configuration (several
# fields and -z taps printed by one run, captures decoded alike
# concatenated into one file: chunktest.concat_captures, crafted cases each
# in its own conversation of one capture; no-tree expert checks stay runs of
# their own), and the hostile tests bound the plugin's CPU time against the
# protocol-disabled run. In a fresh clone on a quiet 2-core machine the full
# run took 666 s (11 min; 1 006 s before this round), 1 287 s of CPU (1 850):
# step 1's build done at 14 s and its tests at 67 s, step 2 at 161 s (its
# tests 95 s), step 3 at 412 s (ctest 226 s; 414 s before), step 4 in 239 s
# (4.4 128 s, 4.6 111 s: a version's build about 25 s, then 58 tests in
# 84-96 s), step 5 done 15 s after step 4. The run is CPU-bound throughout
# (2.2% of the machine idle over the run), so only fewer CPU seconds make it
# shorter.
# Environment: JOBS (default: nproc), CHUNK_SKIP_ASAN=1 to skip step 1,
# CHUNK_SKIP_FUZZ=1 to skip step 2 (the mutation fuzzer then runs in step 3,
# on the ordinary plugin), CHUNK_SKIP_WIRESHARK=1 to skip step 4 (and 4.4 and
# 4.6 in step 5), CHUNK_SKIP_PACKAGE=1 to skip step 5.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() {
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}
quick=0
case "${1:-}" in
"") ;;
--quick) quick=1 ;;
-h | --help) usage; exit 0 ;;
*) echo "test.sh: unknown argument '$1' (--quick, --help)" >&2; exit 2 ;;
esac

# The quick tier: every test of these kinds, whatever protocol it is of (a
# new protocol's <name>.vectors, .truth, .goldens, ... and its endpoints'
# test group endpoints.<name> join it by name); not the endpoints' soaks
# and socket runs (endpoints.soak, endpoints.<name>_soak, *-sockets.*).
quick_tests='^(endpoints\.[a-z0-9]+'
quick_tests+='|dissector\.(crc32|bytes|conv_cache|goldens|protocols|architecture|plugin)|architecture\.protocol_table'
quick_tests+='|[a-z0-9]+\.(vectors|truth|goldens|crafted|headers|schema|keylog|crypto)|captures\.(regen|truth)\..*)$'

# The tests' tshark reads a data folder without Wireshark 4.0's OUI and
# enterprise tables and DTDs, which name nothing in the tests' captures
# (scripts/chunk-tshark, CHUNK_TSHARK_LEAN): 0.1 s less CPU a tshark start.
export CHUNK_TSHARK_LEAN=1
# The tests' interpreter is Debian's python3 (CMakeLists.txt: deps.sh
# installs the modules they import for it). Scripts that start "python3"
# from PATH get it too, not a version manager's shim earlier in PATH
# (pyenv's costs 0.1 s more CPU a start; about 300 starts a run).
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
    mkdir -p build/python3-path
    ln -sf /usr/bin/python3 build/python3-path/python3
    export PATH=$PWD/build/python3-path:$PATH
fi

jobs=${JOBS:-$(nproc)}
# ctest -j for the suites with tests that mostly wait (real UDP sockets and
# soaks on timers: the 10 socket tests take 61 s and 5 s of CPU): one test
# more than the cores keeps the cores busy meanwhile. Not for the fuzzers,
# whose runs are bounded by time.
test_jobs=$((jobs + 1))
status=0

# Runs a build step quietly; on failure shows its output and stops.
quiet() {
    local log
    log=$(mktemp)
    if ! "$@" >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "test.sh: failed: $*" >&2
        exit 1
    fi
    rm -f "$log"
}

# The dissector is only built when libwireshark is found; its tests must not
# be skipped silently. build/plugin-dir.txt: plugins/<major.minor>/epan, from
# the Wireshark built against.
build_host() {
    quiet cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
    quiet cmake --build build -j"$jobs"
    bash scripts/ctest-costs.sh build
    if [ ! -f build/plugin-dir.txt ] || [ ! -f "build/$(cat build/plugin-dir.txt)/chunk.so" ]; then
        echo "test.sh: the dissector was not built (libwireshark-dev / libglib2.0-dev missing?); see build/CMakeCache.txt" >&2
        exit 1
    fi
}

if [ $quick = 1 ]; then
    bash scripts/deps.sh
    echo "== quick tier (build/): unit tests, vectors, goldens, crafted and truth tests"
    build_host
    t0=$SECONDS
    ctest --test-dir build -R "$quick_tests" -E '^endpoints\.soak$' --output-on-failure -j"$jobs" || status=1
    echo "== test.sh --quick: $([ $status = 0 ] && echo passed || echo FAILED) in $SECONDS s (tests $((SECONDS - t0)) s);" \
         "the full run: bash scripts/test.sh"
    exit $status
fi

bash scripts/deps.sh --test

# 0. The chroots, made in the background: two streams (the build chroots of
# 4.4 and 4.6, the clean chroots of the package test), each script taking a
# lock per chroot, so steps 4 and 5 wait for a chroot still being made.
pkg_versions=(4.0 4.4 4.6)
[ "${CHUNK_SKIP_WIRESHARK:-0}" != 1 ] || pkg_versions=(4.0)
prep_pids=()
mkdir -p build
if [ "${CHUNK_SKIP_WIRESHARK:-0}" != 1 ]; then
    setsid bash scripts/test-wireshark.sh --prepare all > build/chroots-wireshark.log 2>&1 &
    prep_pids+=($!)
fi
if [ "${CHUNK_SKIP_PACKAGE:-0}" != 1 ]; then
    setsid bash scripts/test-package.sh --prepare "${pkg_versions[@]}" > build/chroots-package.log 2>&1 &
    prep_pids+=($!)
fi
# Wireshark's source package (its checkers and headers, for the portability
# tests), fetched once from this machine's mirror and cached.
ws_mm=$(pkg-config --modversion wireshark 2>/dev/null | cut -d. -f1,2 || true)
if [ -n "$ws_mm" ]; then
    setsid bash scripts/wireshark-source.sh "$ws_mm" > build/wireshark-source.log 2>&1 &
    prep_pids+=($!)
fi
stop_prep() {
    local p
    for p in "${prep_pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
}
trap stop_prep EXIT
[ ${#prep_pids[@]} = 0 ] || echo "== making the chroots in the background (build/chroots-*.log)"

# Step 1's tests mostly wait on timers (sockets, soaks): they run while
# step 2's fuzzers are compiled, which keeps both cores busy meanwhile
# (not while the fuzzers run: their runs are bounded by time).
asan_pid=""
asan_log=build/asan-tests.log
asan_wait() {
    [ -n "$asan_pid" ] || return 0
    wait "$asan_pid" || status=1
    asan_pid=""
    cat "$asan_log"
    echo "== endpoints under ASan/UBSan: done (at $SECONDS s)"
}
if [ "${CHUNK_SKIP_ASAN:-0}" != 1 ]; then
    echo "== endpoints under ASan/UBSan (build-asan/)"
    quiet cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCHUNK_SANITIZE=ON -DCHUNK_BUILD_DISSECTOR=OFF
    quiet cmake --build build-asan -j"$jobs"
    bash scripts/ctest-costs.sh build-asan
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --test-dir build-asan -L sanitize --output-on-failure -j"$test_jobs" > "$asan_log" 2>&1 &
    asan_pid=$!
    [ "${CHUNK_SKIP_FUZZ:-0}" != 1 ] || asan_wait
fi

host_exclude=()
if [ "${CHUNK_SKIP_FUZZ:-0}" != 1 ]; then
    # Bounded libFuzzer runs (fuzz/README.md), side by side, and the mutation
    # fuzzer on the ASan plugin; CHUNK_SKIP_FUZZ=1 skips them.
    echo "== fuzzers (build-fuzz/, clang, ctest -L fuzz)"
    quiet env CC=clang cmake -S . -B build-fuzz -DCHUNK_FUZZ=ON
    quiet cmake --build build-fuzz -j"$jobs" --target chunk-fuzzers
    asan_wait
    bash scripts/ctest-costs.sh build-fuzz
    ctest --test-dir build-fuzz -L fuzz --output-on-failure -j"$jobs" || status=1
    host_exclude=(-LE mutate)
    echo "== (at $SECONDS s)"
fi

echo "== all tests (build/)"
build_host
ctest --test-dir build "${host_exclude[@]}" --output-on-failure -j"$test_jobs" || status=1
echo "== host stages done in $SECONDS s"

# Steps 4 and 5 wait for the background chroots first; a chroot that could
# not be made there is tried again (and skipped loudly) by the step itself.
wait_prep() {
    local p
    [ ${#prep_pids[@]} = 0 ] && return
    echo "== waiting for the chroots (build/chroots-*.log)"
    for p in "${prep_pids[@]}"; do wait "$p" || true; done
    prep_pids=()
    grep -h -E 'ready in|SKIPPED|cannot' build/chroots-*.log 2>/dev/null | sed 's/^/   /' || true
    echo "== (at $SECONDS s)"
}

# Step 5 runs beside step 4 (its own log, shown after step 4): its 4.0
# package needs only build/, and its 4.4 and 4.6 packages wait for step 4's
# build of that version (a lock per chroot). Most of its time is apt and
# dpkg, not CPU.
pkg_pid=""
pkg_log=build/package-test.log
pkg_start() {
    [ "${CHUNK_SKIP_PACKAGE:-0}" != 1 ] || return 0
    wait_prep
    JOBS=$jobs bash scripts/test-package.sh "${pkg_versions[@]}" > "$pkg_log" 2>&1 &
    pkg_pid=$!
    pkg_t0=$SECONDS
}
pkg_finish() {
    [ "${CHUNK_SKIP_PACKAGE:-0}" != 1 ] || return 0
    [ -n "$pkg_pid" ] || pkg_start
    local rc=0
    wait "$pkg_pid" || rc=$?
    echo "== the Debian package for Wireshark ${pkg_versions[*]} in clean chroots (scripts/test-package.sh, from $pkg_t0 s)"
    cat "$pkg_log"
    case $rc in
    0) ;;
    77) echo "test.sh: WARNING: the package was not installed anywhere: every chroot was skipped (see above)" >&2 ;;
    *) status=1 ;;
    esac
    echo "== package stages done at $SECONDS s"
}

if [ "${CHUNK_SKIP_WIRESHARK:-0}" != 1 ]; then
    # Other Wireshark versions (README.md, "Wireshark versions"): a chroot
    # that cannot be made (mirror) is skipped loudly; one that fails to build
    # or test fails the run.
    wait_prep
    pkg_start
    echo "== Wireshark 4.4 and 4.6 in chroots (scripts/test-wireshark.sh all)"
    t0=$SECONDS
    rc=0
    JOBS=$jobs bash scripts/test-wireshark.sh all || rc=$?
    case $rc in
    0) ;;
    77) echo "test.sh: WARNING: no other Wireshark version was tested: every chroot was skipped (see above)" >&2 ;;
    *) status=1 ;;
    esac
    echo "== chroot stages done in $((SECONDS - t0)) s"
fi
# The Debian package, installed as a user would (README.md, "Installing").
pkg_finish
echo "== test.sh: $([ $status = 0 ] && echo passed || echo FAILED) in $SECONDS s"
exit $status
