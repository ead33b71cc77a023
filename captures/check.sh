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
#       When WORK_DIR/NAME.fields is there (check.sh read-all made it), those
#       are the fields; else tshark reads NAME.pcap now.
#   captures/check.sh read-all WORK_DIR NAME...
#       one tshark run for every NAME (ctest captures.tshark.read, the set-up
#       of the captures.tshark.* tests): the captures written one after the
#       other, unchanged, into one file, whose fields are split back into
#       WORK_DIR/NAME.fields. Only per-frame UDP and IPv4 fields are read,
#       which no other frame changes; a capture tshark cannot read is named.
#
# Exit status: 0 pass, 1 fail, 2 bad arguments.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${1:-}
# read_fields PCAP: the fields the tshark check reads, a line per frame.
# Plain tshark as root warns on stderr.
read_fields() {
    tshark -r "$1" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -T fields \
        -e udp.srcport -e udp.dstport -e udp.length -e frame.len -e ip.checksum.status -e udp.checksum.status
}

case "$mode" in
read-all)
    [ $# -ge 3 ] || { echo "usage: check.sh read-all WORK_DIR NAME..." >&2; exit 2; }
    work=$2
    shift 2
    mkdir -p "$work"
    rm -f "$work"/*.fields
    # all.pcap and all.counts (NAME FRAMES, in order)
    python3 - "$here" "$work" "$@" <<'PY' || exit 1
import struct, sys
here, work, names = sys.argv[1], sys.argv[2], sys.argv[3:]
head = None
with open(work + "/all.pcap", "wb") as out, open(work + "/all.counts", "w") as counts:
    for name in names:
        data = open("%s/%s.pcap" % (here, name), "rb").read()
        if len(data) < 24 or data[:4] != b"\xd4\xc3\xb2\xa1" or (head is not None and data[4:24] != head[4:24]):
            sys.exit("check.sh: %s.pcap: not a little-endian classic pcap like the others; read it alone: "
                     "ctest -R captures.tshark.%s after removing %s/%s.fields" % (name, name, work, name))
        if head is None:
            head = data[:24]
            out.write(head)
        off, n = 24, 0
        while off < len(data):
            if off + 16 > len(data):
                sys.exit("check.sh: %s.pcap: a record header cut short at byte %d" % (name, off))
            incl = struct.unpack_from("<I", data, off + 8)[0]
            if off + 16 + incl > len(data):
                sys.exit("check.sh: %s.pcap: frame %d cut short" % (name, n + 1))
            off += 16 + incl
            n += 1
        out.write(data[24:])
        counts.write("%s %d\n" % (name, n))
PY
    read_fields "$work/all.pcap" > "$work/all.fields" 2> "$work/all.tshark-stderr" ||
        { cat "$work/all.tshark-stderr" >&2; exit 1; }
    # Split back: each capture's lines in its own file.
    awk -v work="$work" 'NR == FNR { name[NR] = $1; upto[NR] = (NR > 1 ? upto[NR - 1] : 0) + $2; k = 1; next }
        { while ((k in upto) && FNR > upto[k]) k++
          if (!(k in upto)) { print "check.sh: more frames than the captures hold" > "/dev/stderr"; exit 1 }
          print > (work "/" name[k] ".fields") }
        END { for (i = 1; i in name; i++) if (upto[i] == (i > 1 ? upto[i - 1] : 0)) printf "" > (work "/" name[i] ".fields") }' \
        "$work/all.counts" "$work/all.fields" || exit 1
    echo "check.sh: read $(wc -l < "$work/all.fields") frames of $# captures in one tshark run"
    ;;
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
    if [ ! -f "$work/$name.fields" ]; then
        read_fields "$pcap" > "$work/$name.fields" 2> "$work/$name.tshark-stderr" ||
            { cat "$work/$name.tshark-stderr" >&2; exit 1; }
    fi
    # From the truth file: frames, the generator and the two hosts' ports
    # (chunk: 50000 and 40000, netgame: 30001 and 30000).
    read -r expected generator a_port b_port < <(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
e = t["endpoints"]
print(t["capture"]["frames"], t.get("generator", "chunk-sim"), e["a"].split(":")[1], e["b"].split(":")[1])' "$here/$name.truth.json")
    # The shortest datagram and the flags of the protocol whose simulator made
    # it (the protocol table, dissector/protocols.txt: datagram and flags
    # columns). "clients": several clients, on ports from a's upwards.
    read -r min_payload flags < <(awk -v sim="$generator" '!/^#/ && NF == 7 && $3 == sim { print $4, $6; exit }' \
        "$here/../dissector/protocols.txt") || true
    if [ -z "${min_payload:-}" ]; then
        echo "check.sh: $name: generator $generator is no simulator of dissector/protocols.txt" >&2
        exit 1
    fi
    any_client_port=0
    case ",$flags," in *,clients,*) any_client_port=1 ;; esac
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
    echo "usage: check.sh regen CHUNK_SIM_DIR WORK_DIR NAME | check.sh tshark WORK_DIR NAME | check.sh read-all WORK_DIR NAME..." >&2
    exit 2
    ;;
esac
