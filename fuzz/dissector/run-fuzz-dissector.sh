#!/usr/bin/env bash
# run-fuzz-dissector.sh: long mode of fuzz_dissector (libFuzzer, one core).
#
#   fuzz/dissector/run-fuzz-dissector.sh BUILD_DIR [SECONDS]     (default 4 h)
#
# BUILD_DIR is a CHUNK_FUZZ=ON clang build (fuzz/dissector/CMakeLists.txt).
# The corpus grows in BUILD_DIR/fuzz/dissector/corpus-long (kept between
# runs); crashes land in BUILD_DIR/fuzz/dissector/artifacts/. The log is
# BUILD_DIR/fuzz/dissector/long.log; its last lines give executions, coverage
# and peak memory. A crash input reproduces with: fuzz_dissector CRASH_FILE
set -euo pipefail

usage() {
    echo "usage: $0 BUILD_DIR [SECONDS]   (a -DCHUNK_FUZZ=ON clang build; default 14400 s)" >&2
    exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
case "${1:-}" in -h|--help) usage ;; esac
build=$1
secs=${2:-14400}
[[ "$secs" =~ ^[0-9]+$ ]] || usage
bin=$build/fuzz/dissector/fuzz_dissector
[ -x "$bin" ] || { echo "$0: $bin not built (cmake --build $build --target fuzz_dissector)" >&2; exit 2; }
dir=$(cd "$build/fuzz/dissector" && pwd)
bin=$dir/fuzz_dissector
mkdir -p "$dir/corpus-long" "$dir/artifacts"
cd "$dir"
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
nice -n 10 "$bin" -max_total_time="$secs" -max_len=65536 -timeout=60 -rss_limit_mb=8192 \
    -detect_leaks=0 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
    "$dir/corpus-long" "$dir/seeds" 2>&1 | tee "$dir/long.log" | grep -E "DONE|ERROR|SUMMARY|stat::|pulse" 
