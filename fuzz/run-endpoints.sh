#!/usr/bin/env bash
# run-endpoints.sh: runs the endpoint libFuzzer harnesses (fuzz_read_packet,
# fuzz_endpoints) under ASan/UBSan.
#
#   fuzz/run-endpoints.sh [--bounded | --long | --coverage] [--seconds N] [--build DIR] [HARNESS...]
#
#   --bounded     each harness for 20 s (or --seconds), one after the other,
#                 into a scratch corpus: what ctest -L fuzz runs
#   --long        each harness for --seconds (default 4 hours), all at once,
#                 one core each, into a corpus kept in the build tree
#                 (DIR/fuzz/corpus-NAME) so that the next long run resumes
#   --coverage    no fuzzing: replays the kept corpus and the seeds through a
#                 build with clang's source-based coverage and prints the
#                 llvm-cov report of the endpoint library (DIR/fuzz/coverage/)
#   --build DIR   build tree (default build-fuzz); configured with clang and
#                 -DCHUNK_FUZZ=ON and the harnesses built when needed
#   HARNESS       read_packet and/or endpoints (default both)
#
# A crash leaves its input in DIR/fuzz/artifacts/ (reproduce: run the harness
# binary with that file as its only argument) and makes the exit status 1.
# Logs: DIR/fuzz/logs/NAME.log; the last stats line of each is printed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode=bounded seconds= build=build-fuzz harnesses=()
while [ $# -gt 0 ]; do
    case "$1" in
    --bounded) mode=bounded ;;
    --long) mode=long ;;
    --coverage) mode=coverage ;;
    --seconds)
        [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -gt 0 ] || { echo "run-endpoints.sh: --seconds needs a positive whole number (try --help)" >&2; exit 2; }
        seconds=$2
        shift ;;
    --build)
        [ $# -ge 2 ] || { echo "run-endpoints.sh: --build needs a directory (try --help)" >&2; exit 2; }
        build=$2
        shift ;;
    -h | --help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    read_packet | endpoints) harnesses+=("$1") ;;
    *) echo "run-endpoints.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[ ${#harnesses[@]} -gt 0 ] || harnesses=(read_packet endpoints)
if [ -z "$seconds" ]; then
    if [ "$mode" = long ]; then seconds=14400; else seconds=20; fi
fi

if [ ! -x "$build/fuzz/fuzz_endpoints" ] || [ ! -x "$build/fuzz/fuzz_read_packet" ]; then
    CC=${CC:-clang} cmake -S . -B "$build" -DCHUNK_FUZZ=ON -DCHUNK_BUILD_DISSECTOR=OFF >/dev/null
fi
cmake --build "$build" --target chunk-fuzzers -j"$(nproc)" >/dev/null

fuzz_dir=$(cd "$build/fuzz" && pwd)
mkdir -p "$fuzz_dir/artifacts" "$fuzz_dir/logs"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

run() { # HARNESS CORPUS
    local name=$1 corpus=$2
    mkdir -p "$corpus"
    # New inputs go to the first corpus folder; the seeds are only read.
    "$fuzz_dir/fuzz_$name" -max_total_time="$seconds" -max_len=20000 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$fuzz_dir/artifacts/$name-" \
        "$corpus" "$fuzz_dir/seeds/$name" >"$fuzz_dir/logs/$name.log" 2>&1
}

if [ "$mode" = coverage ]; then
    # A separate, uninstrumented-by-sanitizers build: coverage counters only.
    cov="$fuzz_dir/coverage"
    mkdir -p "$cov"
    for name in "${harnesses[@]}"; do
        ${CC:-clang} -O1 -g -fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping -Iendpoints/include \
            endpoints/src/*.c endpoints/src/*/*.c "fuzz/fuzz_$name.c" -lz -lm -o "$cov/cov_$name"
        mkdir -p "$fuzz_dir/corpus-$name"
        LLVM_PROFILE_FILE="$cov/$name.profraw" "$cov/cov_$name" -runs=0 \
            "$fuzz_dir/corpus-$name" "$fuzz_dir/seeds/$name" >"$cov/$name.log" 2>&1
        llvm-profdata-14 merge -o "$cov/$name.profdata" "$cov/$name.profraw"
        echo "fuzz_$name: $(ls "$fuzz_dir/corpus-$name" | wc -l) corpus inputs + $(ls "$fuzz_dir/seeds/$name" | wc -l) seeds"
        llvm-cov-14 report "$cov/cov_$name" -instr-profile="$cov/$name.profdata" endpoints/src/*.c endpoints/src/*/*.c
    done
    exit 0
fi

status=0
pids=()
for name in "${harnesses[@]}"; do
    if [ "$mode" = long ]; then
        run "$name" "$fuzz_dir/corpus-$name" &
        pids+=($!)
    else
        scratch=$(mktemp -d "${TMPDIR:-/tmp}/chunk-fuzz-$name.XXXXXX")
        run "$name" "$scratch" || status=1
        rm -rf "$scratch"
    fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done

for name in "${harnesses[@]}"; do
    log="$fuzz_dir/logs/$name.log"
    echo "fuzz_$name: $(grep -E '^#[0-9]+' "$log" | tail -n 1)"
    grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "$log" | sed 's/^/  /'
    if grep -qE '^==[0-9]+==ERROR|^SUMMARY: |broken:|deadly signal' "$log"; then
        status=1
        echo "  FAILED: see $log and $fuzz_dir/artifacts/"
    fi
done
exit $status
