#!/usr/bin/env bash
# test-yojimbo-sim.sh: yojimbo-sim's command line, exit codes, determinism
# (the same options and seed give the same pcap, truth file and key log) and
# each fault's outcome read from the truth file.
#
#   captures/test-yojimbo-sim.sh YOJIMBO_SIM WORK_DIR
set -uo pipefail
prog=yojimbo-sim usage_arg=YOJIMBO_SIM
. "$(dirname "${BASH_SOURCE[0]}")/sim-cli-common.sh"

truth() { # truth FILE PYTHON-EXPRESSION-ON-t: prints ok or FAIL
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); items=t["items"]; sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" \
        && echo "ok   $3" || { echo "FAIL: $3 ($2)"; failures=$((failures + 1)); }
}
expect 0 "--help" -- --help
contains "$work/out" "--drop-block-fragment" "--help lists --drop-block-fragment"
expect 2 "unknown option" -- --no-such-option
expect 2 "bad --channels" -- --channels ro,xx
contains "$work/err" "bad --channels 'ro,xx'" "a clear --channels message"
expect 2 "--block-channel past the channels" -- --channels ro --block-channel 1 --blocks 1
expect 2 "block above the channel's largest" -- --channels ro:1000:100 --blocks 1 --block-size 2000
expect 2 "--drop-block-fragment without blocks" -- --drop-block-fragment 1
expect 2 "stray argument" -- extra
expect 4 "unwritable pcap" -- --duration 1 -w /nonexistent/dir/x.pcap -q
expect 1 "never connects (all lost)" -- --duration 1 --loss 100% -q
check_determinism --with-keys --duration 2 --loss 10% --blocks 1 --seed 7 -q
grep -q '^NETCODE_CONNECTION_KEYS [0-9a-f]\{64\} [0-9a-f]\{64\}$' "$work/a.keys" \
    && echo "ok   key log line" || { echo "FAIL: no connection keys line"; failures=$((failures + 1)); }
truth "$work/a.json" 'all(i["delivered_ok"] for i in items) and len(items) == 41' "loss: all 40 messages and the block delivered intact"
expect 0 "a fragment always lost" -- --duration 3 --blocks 1 --block-size 4000 --drop-block-fragment 2 --truth "$work/d.json" -q
truth "$work/d.json" '[i for i in items if i["kind"] == "block"][0]["delivered"] is None' "lost fragment: the block never completes"
truth "$work/d.json" 'sum(1 for s in [i for i in items if i["kind"] == "block"][0]["sends"] if s["fragment"] == 2) >= 10' "lost fragment: fragment 2 resent every 0.25 s"
truth "$work/d.json" '[i for i in items if i["kind"] == "block"][0]["fragments_acked"][2] is None and [i for i in items if i["kind"] == "block"][0]["fragments_acked"][3] is not None' "lost fragment: the others acked"
expect 0 "stops acking" -- --duration 3 --messages 40 --stop-acking-at 1 --truth "$work/s.json" -q
truth "$work/s.json" 'all(i["acked"] is None for i in items if i["from"] == "client" and i["queued"] > 1.0) and all(i["delivered_ok"] for i in items)' "stops acking: nothing of the client's acked after 1 s, all delivered"
truth "$work/s.json" 'max(len(i["sends"]) for i in items if i["from"] == "client") > 10' "stops acking: messages resent every 0.1 s"
expect 2 "bad --capture-drop" -- --capture-drop 10
contains "$work/err" "bad --capture-drop '10'" "a clear --capture-drop message"
expect 2 "bad --capture-drop direction" -- --capture-drop 10:5:up
expect 2 "--capture-from 0" -- --capture-from 0
expect 0 "capture drops and a late start" -- --duration 2 --capture-from 11 --capture-drop 100:20:ba --capture-drop 200:5 \
    -w "$work/g.pcap" --truth "$work/g.json" -q
truth "$work/g.json" 't["capture"]["not_captured"] == 35 and t["capture"]["datagrams"] - t["capture"]["frames"] == 35' "capture drops: 10 + 20 + 5 datagrams left out"
truth "$work/g.json" '[(d["link"], d["dropped"]) for d in t["capture"]["capture_drops"]] == [("b_to_a", 20), ("both", 5)]' "capture drops: per drop, its direction and count"
truth "$work/g.json" 't["links"][0]["delivered"] == t["links"][0]["sent"] and t["capture"]["datagrams"] == t["links"][0]["sent"] + t["links"][1]["delivered"]' "capture drops: the network delivered all, the capture point saw every datagram"
expect 0 "unreliable channel" -- --duration 2 --channels ro,uu --blocks 1 --block-size 1000 --truth "$work/u.json" -q
truth "$work/u.json" 'all(len(i["sends"]) == 1 and i["acked"] is None for i in items if i["channel"] == 1)' "unreliable: sent once, never acked"
finish
