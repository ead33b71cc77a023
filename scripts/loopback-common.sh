# loopback-common.sh: the set-up that test-frag-loopback.sh and
# test-netgame-loopback.sh share, sourced by them after they set
#   bin=BIN_DIR  name=<test-NAME-loopback.sh's NAME>  programs=(<the programs it runs>)
# Checks that every program is built (exit 1 otherwise), sets work (a
# private folder, removed on exit unless a check failed), pids (killed on
# exit) and failed, and defines fail and wait_port.
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
