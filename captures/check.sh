#!/usr/bin/env bash
# check.sh: the ctest checks of one committed capture.
#
#   captures/check.sh regen  CHUNK_SIM_DIR WORK_DIR NAME
#       remakes NAME with chunk-sim into WORK_DIR and compares NAME.pcap and
#       NAME.truth.json byte for byte with the committed ones.
#   captures/check.sh tshark WORK_DIR NAME
#       reads NAME.pcap with plain tshark (no plugin) and checks that every
#       frame is UDP between the truth file's two hosts with a UDP
#       length equal to the frame length less the Ethernet and IPv4 headers,
#       good IPv4 and UDP checksums, and as many frames as the truth file says.
#
# Exit status: 0 pass, 1 fail, 2 bad arguments.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${1:-}
case "$mode" in
regen)
    [ $# -eq 4 ] || { echo "usage: check.sh regen CHUNK_SIM_DIR WORK_DIR NAME" >&2; exit 2; }
    bin=$2 work=$3 name=$4
    mkdir -p "$work"
    "$here/regenerate.sh" --bin "$bin" --out "$work" "$name"
    status=0
    files=("$name.pcap" "$name.truth.json")
    if [ -f "$here/$name.keys" ]; then files+=("$name.keys"); fi
    for f in "${files[@]}"; do
        if ! cmp "$work/$f" "$here/$f"; then
            echo "check.sh: $f differs from the committed one; if the endpoints changed on purpose," >&2
            echo "  run captures/regenerate.sh $name, review the new decode and commit it" >&2
            status=1
        fi
    done
    exit $status
    ;;
tshark)
    [ $# -eq 3 ] || { echo "usage: check.sh tshark WORK_DIR NAME" >&2; exit 2; }
    work=$2 name=$3
    mkdir -p "$work"
    pcap=$here/$name.pcap
    # Plain tshark as root warns on stderr; the fields go to a file.
    tshark -r "$pcap" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -T fields \
        -e udp.srcport -e udp.dstport -e udp.length -e frame.len -e ip.checksum.status -e udp.checksum.status \
        > "$work/$name.fields" 2> "$work/$name.tshark-stderr" || { cat "$work/$name.tshark-stderr" >&2; exit 1; }
    expected=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["capture"]["frames"])' "$here/$name.truth.json")
    # The shortest datagram and the flags of the protocol whose simulator made
    # it (the protocol table, dissector/protocols.txt: datagram and flags
    # columns). "clients": several clients, on ports from a's upwards.
    generator=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("generator", "chunk-sim"))' "$here/$name.truth.json")
    read -r min_payload flags < <(awk -v sim="$generator" '!/^#/ && NF == 7 && $3 == sim { print $4, $6; exit }' \
        "$here/../dissector/protocols.txt") || true
    if [ -z "${min_payload:-}" ]; then
        echo "check.sh: $name: generator $generator is no simulator of dissector/protocols.txt" >&2
        exit 1
    fi
    any_client_port=0
    case ",$flags," in *,clients,*) any_client_port=1 ;; esac
    # Host ports from the truth file (chunk: 50000 and 40000, netgame: 30001 and 30000).
    read -r a_port b_port < <(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["endpoints"]; print(e["a"].split(":")[1], e["b"].split(":")[1])' "$here/$name.truth.json")
    awk -v expected="$expected" -v name="$name" -v min_payload="$min_payload" -v a="$a_port" -v b="$b_port" -v any_a="$any_client_port" -F'\t' '
        {
            n++
            ok_ports = ($1 == a && $2 == b) || ($1 == b && $2 == a) || (any_a && ($1 == b || $2 == b))
            # 14 bytes of Ethernet and 20 of IPv4 before the UDP header.
            if (!ok_ports || $3 != $4 - 34 || $3 < 8 + min_payload || $5 != 1 || $6 != 1) {
                printf "%s frame %d: ports %s -> %s, udp.length %s, frame.len %s, ip checksum %s, udp checksum %s\n", name, n, $1, $2, $3, $4, $5, $6
                bad++
            }
        }
        END {
            if (n != expected) { printf "%s: %d frames, the truth file says %d\n", name, n, expected; bad++ }
            if (bad) exit 1
            printf "%s: %d frames, all UDP 10.0.0.1:%s <-> 10.0.0.2:%s with consistent lengths and good checksums\n", name, n, a, b
        }' "$work/$name.fields"
    ;;
*)
    echo "usage: check.sh regen CHUNK_SIM_DIR WORK_DIR NAME | check.sh tshark WORK_DIR NAME" >&2
    exit 2
    ;;
esac
