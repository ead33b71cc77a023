# loopback-common.sh: the set-up that the test-*loopback.sh scripts share,
# sourced by them after they set
#   bin=BIN_DIR  name=<test-NAME-loopback.sh's NAME>  programs=(<the programs it runs>)
# Checks that every program is built (exit 1 otherwise), sets work (a
# private folder, removed on exit unless a check failed), pids (killed on
# exit) and failed, and defines fail, wait_port and start.
for p in "${programs[@]}"; do
    [ -x "$bin/$p" ] || { echo "FAIL: $bin/$p not built"; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/$name-loopback.XXXXXX")
pids=()
failed=0
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    if [ "$failed" = 0 ]; then rm -rf "$work"; else echo "files kept in $work"; fi
}
trap cleanup EXIT
# fail WHY...: prints FAIL: WHY, and the test fails.
fail() {
    echo "FAIL: $*"
    failed=1
}
# wait_port FILE: prints the port a program wrote to FILE (--port-file), once
# it is there; fails after 5 s.
wait_port() {
    for _ in $(seq 100); do
        if [ -s "$1" ]; then cat "$1"; return 0; fi
        sleep 0.05
    done
    return 1
}
# start NAME SECONDS PROGRAM ARGS...: $bin/PROGRAM --port-file $work/NAME.port
# ARGS in the background under `timeout -k 2 SECONDS`, its stderr in
# $work/NAME.log (its stdout the caller's); sets started_pid and started_port.
# A program that writes no port fails the test (its log shown, exit 1).
start() {
    local name=$1 seconds=$2 program=$3
    shift 3
    timeout -k 2 "$seconds" "$bin/$program" --port-file "$work/$name.port" "$@" 2>"$work/$name.log" &
    started_pid=$!
    pids+=("$started_pid")
    started_port=$(wait_port "$work/$name.port") || { fail "$program did not start"; cat "$work/$name.log"; exit 1; }
}
