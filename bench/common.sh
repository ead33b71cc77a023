# common.sh: what the timing scripts of bench/ share, sourced by them:
#
#   plugin_snapshot BUILD DEST
#       copies BUILD's chunk.so (from the folder its plugin-dir.txt names) to
#       DEST/<major.minor>/epan, readable by everyone (tshark runs as user
#       nobody under scripts/chunk-tshark when we are root), for
#       CHUNK_PLUGIN_DIR=DEST: a rebuild during the runs cannot mix two plugins
#   capture_frames FILE
#       prints the number of frames in the capture FILE
#   capture_cut FULL FRAMES DIV CUT
#       makes CUT the first FRAMES/DIV frames of FULL (FRAMES: FULL's number
#       of frames) with editcap -r, unless CUT is there already and not older
#       than FULL; prints FRAMES/DIV
#   die_usage MESSAGE
#       prints "BENCH_NAME: MESSAGE (try --help)" on stderr and exits 2
#       (bench_name: the script's name in messages, set by the script)

plugin_snapshot() {
    local build=$1 dest=$2 sub
    sub=$(cat "$build/plugin-dir.txt")
    rm -rf "$dest"
    mkdir -p "$dest/${sub#plugins/}"
    cp "$build/$sub/chunk.so" "$dest/${sub#plugins/}/"
    chmod -R a+rX "$dest"
}

capture_frames() {
    capinfos -c -M "$1" | sed -n 's/^Number of packets: *//p'
}

capture_cut() {
    local full=$1 n=$(($2 / $3)) cut=$4
    if [ ! -s "$cut" ] || [ "$cut" -ot "$full" ]; then
        editcap -r "$full" "$cut" "1-$n" >&2
    fi
    echo "$n"
}

die_usage() {
    echo "$bench_name: $1 (try --help)" >&2
    exit 2
}
