#!/usr/bin/env bash
# test.sh: installs what is missing, builds, and runs every test.
#   1. endpoints under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   2. everything, dissector included (build/), with ctest's summary last.
#   3. the dissector and analysis tests against Wireshark 4.4 and 4.6, in
#      Debian 13 and sid chroots (scripts/test-wireshark.sh all; needs root or sudo).
#   4. the plugin's Debian package for 4.0, 4.4 and 4.6, installed into a
#      clean chroot of each Debian and used by tshark as an ordinary user
#      (scripts/test-package.sh; needs root or sudo).
# Environment: JOBS (default: nproc), CHUNK_SKIP_ASAN=1 to skip step 1,
# CHUNK_SKIP_FUZZ=1 to skip the bounded fuzz runs (build-fuzz/),
# CHUNK_SKIP_WIRESHARK=1 to skip step 3 (and 4.4 and 4.6 in step 4),
# CHUNK_SKIP_PACKAGE=1 to skip step 4.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/deps.sh --test
jobs=${JOBS:-$(nproc)}
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

if [ "${CHUNK_SKIP_ASAN:-0}" != 1 ]; then
    echo "== endpoints under ASan/UBSan (build-asan/)"
    quiet cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCHUNK_SANITIZE=ON -DCHUNK_BUILD_DISSECTOR=OFF
    quiet cmake --build build-asan -j"$jobs"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --test-dir build-asan -L sanitize --output-on-failure -j"$jobs" || status=1
    echo "== (at $SECONDS s)"
fi

if [ "${CHUNK_SKIP_FUZZ:-0}" != 1 ]; then
    # Bounded libFuzzer runs (fuzz/README.md), about a minute; CHUNK_SKIP_FUZZ=1 skips.
    echo "== bounded fuzz runs (build-fuzz/, clang, ctest -L fuzz)"
    quiet env CC=clang cmake -S . -B build-fuzz -DCHUNK_FUZZ=ON
    quiet cmake --build build-fuzz -j"$jobs" --target chunk-fuzzers
    ctest --test-dir build-fuzz -L fuzz --output-on-failure || status=1
    echo "== (at $SECONDS s)"
fi

echo "== all tests (build/)"
quiet cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
quiet cmake --build build -j"$jobs"
# The dissector is only built when libwireshark is found; its tests must not
# be skipped silently.
# build/plugin-dir.txt: plugins/<major.minor>/epan, from the Wireshark built against.
if [ ! -f build/plugin-dir.txt ] || [ ! -f "build/$(cat build/plugin-dir.txt)/chunk.so" ]; then
    echo "test.sh: the dissector was not built (libwireshark-dev / libglib2.0-dev missing?); see build/CMakeCache.txt" >&2
    exit 1
fi
ctest --test-dir build --output-on-failure -j"$jobs" || status=1
echo "== host stages done in $SECONDS s"

if [ "${CHUNK_SKIP_WIRESHARK:-0}" != 1 ]; then
    # Other Wireshark versions (README.md, "Wireshark versions"): a chroot
    # that cannot be made (mirror) is skipped loudly; one that fails to build
    # or test fails the run.
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
if [ "${CHUNK_SKIP_PACKAGE:-0}" != 1 ]; then
    # The Debian package, installed as a user would (README.md, "Installing").
    pkg_versions=(4.0 4.4 4.6)
    [ "${CHUNK_SKIP_WIRESHARK:-0}" != 1 ] || pkg_versions=(4.0)
    echo "== the Debian package for Wireshark ${pkg_versions[*]} in clean chroots (scripts/test-package.sh)"
    t0=$SECONDS
    rc=0
    JOBS=$jobs bash scripts/test-package.sh "${pkg_versions[@]}" || rc=$?
    case $rc in
    0) ;;
    77) echo "test.sh: WARNING: the package was not installed anywhere: every chroot was skipped (see above)" >&2 ;;
    *) status=1 ;;
    esac
    echo "== package stages done in $((SECONDS - t0)) s"
fi
echo "== test.sh: $([ $status = 0 ] && echo passed || echo FAILED) in $SECONDS s"
exit $status
