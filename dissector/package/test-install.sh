#!/usr/bin/env bash
# test-install.sh BUILD WORK: the ways of installing the plugin, into folders
# under WORK (DESTDIR, a private HOME), never into the system:
#   1. cmake --install BUILD --component plugin: chunk.so alone, 0644, in
#      Wireshark's global plugin folder (BUILD's package.txt says which).
#   2. cmake --install BUILD --component endpoints: the programs alone.
#   3. a plugin-only build (-DCHUNK_BUILD_ENDPOINTS=OFF, in WORK/plugin-only):
#      a plain `cmake --install` works and installs chunk.so alone.
#   4. the personal folder (-DCHUNK_INSTALL_PERSONAL=ON, HOME=WORK/home):
#      ~/.local/lib/wireshark/plugins/<major.minor>/epan/chunk.so, and tshark
#      run as that user (as nobody when we are root) loads it.
#   5. cpack -G DEB in the plugin-only build: the package holds chunk.so
#      (stripped) and the docs Debian asks for, nothing else, and Depends
#      names the libwireshark package the build links; cpack refuses a
#      build configured for the personal folder.
# Environment: CC and CFLAGS of the build under test are passed on by ctest
# (CHUNK_TEST_CC, CHUNK_TEST_CFLAGS, CHUNK_TEST_BUILD_TYPE).
set -euo pipefail

build=$(cd "$1" && pwd)
work=$2
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
get() { sed -n "s/^$1=//p" "$2/package.txt"; }
# files DIR: every file and symlink under DIR, relative, sorted.
files() { (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort); }

rm -rf "$work"
mkdir -p "$work"
plugdir=$(get plugin_dir "$build")
plugdir_rel=${plugdir#/}
[ -n "$plugdir" ] || { echo "FAIL: $build/package.txt has no plugin_dir" >&2; exit 1; }
so=$build/$(cat "$build/plugin-dir.txt")/chunk.so
[ -f "$so" ] || { echo "FAIL: no $so: build the plugin first" >&2; exit 1; }

# 1. component plugin
DESTDIR=$work/component-plugin cmake --install "$build" --component plugin > "$work/1.log" 2>&1 ||
    { cat "$work/1.log"; bad "cmake --install --component plugin failed"; }
got=$(files "$work/component-plugin")
if [ "$got" = "$plugdir_rel/chunk.so" ]; then ok "component plugin: $plugdir/chunk.so alone"
else bad "component plugin installed: $(echo $got)"; fi
f=$work/component-plugin/$plugdir_rel/chunk.so
if [ -f "$f" ]; then
    [ "$(stat -c %a "$f")" = 644 ] && ok "chunk.so is 0644" || bad "chunk.so mode $(stat -c %a "$f"), not 644"
    cmp -s "$f" "$so" && ok "chunk.so is the build's" || bad "installed chunk.so differs from $so"
fi

# 2. component endpoints (when this build has them)
if [ -d "$build/bin" ]; then
    DESTDIR=$work/component-endpoints cmake --install "$build" --component endpoints > "$work/2.log" 2>&1 ||
        { cat "$work/2.log"; bad "cmake --install --component endpoints failed"; }
    got=$(files "$work/component-endpoints")
    if echo "$got" | grep -q '/bin/chunk-sim$' && ! echo "$got" | grep -q 'chunk\.so$'; then
        ok "component endpoints: $(echo "$got" | wc -l) programs, no plugin"
    else
        bad "component endpoints installed: $(echo $got)"
    fi
fi

# 3. plugin-only build, plain install
cfg=(-DCMAKE_BUILD_TYPE="${CHUNK_TEST_BUILD_TYPE:-RelWithDebInfo}" -DCHUNK_BUILD_ENDPOINTS=OFF)
[ -n "${CHUNK_TEST_CC:-}" ] && cfg+=(-DCMAKE_C_COMPILER="$CHUNK_TEST_CC")
[ -n "${CHUNK_TEST_CFLAGS:-}" ] && cfg+=(-DCMAKE_C_FLAGS="$CHUNK_TEST_CFLAGS")
po=$work/plugin-only
if cmake -S "$src" -B "$po" "${cfg[@]}" > "$work/3.log" 2>&1 &&
   cmake --build "$po" -j2 >> "$work/3.log" 2>&1; then
    [ ! -e "$po/bin" ] && ok "plugin-only build: no endpoints built" || bad "plugin-only build made $po/bin"
    if DESTDIR=$work/plain cmake --install "$po" >> "$work/3.log" 2>&1; then
        got=$(files "$work/plain")
        [ "$got" = "$plugdir_rel/chunk.so" ] && ok "plugin-only build: plain cmake --install: chunk.so alone" ||
            bad "plugin-only plain install installed: $(echo $got)"
    else
        tail -n 20 "$work/3.log"; bad "plain cmake --install of the plugin-only build failed"
    fi
else
    tail -n 30 "$work/3.log"; bad "plugin-only build (-DCHUNK_BUILD_ENDPOINTS=OFF) failed"
fi

# 4. personal folder, loaded by tshark as that user
home=$work/home
mkdir -p "$home"
wsver=$(get wireshark "$build")
# The personal folder is ~ at configure time.
HOME=$home cmake -S "$src" -B "$po" -DCHUNK_INSTALL_PERSONAL=ON > "$work/4.log" 2>&1 &&
    cmake --install "$po" >> "$work/4.log" 2>&1 || true
if [ -f "$home/.local/lib/wireshark/plugins/$wsver/epan/chunk.so" ]; then
    ok "personal: ~/.local/lib/wireshark/plugins/$wsver/epan/chunk.so"
    if command -v tshark > /dev/null; then
        run_home=$home
        if [ "$(id -u)" = 0 ]; then
            # nobody gets a copy of the personal folder outside the build
            # tree: the clone may sit in a folder only root can enter
            # (mktemp -d makes it 0700).
            run_home=$(mktemp -d)
            cp -a "$home/.local" "$run_home/"
            chmod 755 "$run_home"
            chown -R 65534:65534 "$run_home"
            run=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$run_home")
        else
            run=(env HOME="$home")
        fi
        protos=$("${run[@]}" tshark -G protocols 2>/dev/null | cut -f3 | grep -xE 'chunk|p2frag' | sort | tr '\n' ' ' || true)
        [ "$protos" = "chunk p2frag " ] && ok "tshark as $("${run[@]}" id -un) loads the personal plugin ($protos)" ||
            bad "tshark with HOME=$run_home does not list chunk and p2frag (got '$protos')"
        [ "$run_home" = "$home" ] || rm -rf "$run_home"
    fi
else
    tail -n 20 "$work/4.log"; bad "personal install did not write $home/.local/lib/wireshark/plugins/$wsver/epan/chunk.so"
fi
# cpack refuses a tree configured for the personal folder.
if (cd "$po" && cpack -G DEB > "$work/4-cpack.log" 2>&1); then
    bad "cpack made a package from a build configured for the personal folder"
elif grep -q "global folder" "$work/4-cpack.log"; then
    ok "cpack refuses a build configured for the personal folder"
else
    cat "$work/4-cpack.log"; bad "cpack failed for another reason than the personal folder"
fi

# 5. the Debian package of the plugin-only build
if [ -z "$(get libwireshark "$build")" ]; then
    echo "package: dpkg does not know this build's libwireshark; no package to test"
else
    cmake -S "$src" -B "$po" -DCHUNK_INSTALL_PERSONAL=OFF > "$work/5.log" 2>&1
    if (cd "$po" && cpack -G DEB >> "$work/5.log" 2>&1); then
        deb=$po/$(get deb "$po")
        if [ -f "$deb" ]; then
            name=$(get name "$po")
            doc=usr/share/doc/$name
            prof=usr/share/wireshark/profiles/chunkshark
            want=$(printf '%s\n' "$plugdir_rel/chunk.so" "$doc/README.md.gz" "$doc/changelog.gz" "$doc/copyright" \
                "$prof/colorfilters" "$prof/io_graphs" "$prof/preferences" "$prof/recent" | sort)
            got=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./||' | sort)
            [ "$got" = "$want" ] && ok "package holds chunk.so, $doc/{README.md.gz,changelog.gz,copyright} and $prof/{colorfilters,io_graphs,preferences,recent}" ||
                bad "package files: $(echo $got)"
            libws=$(get libwireshark "$po")
            dep=$(dpkg-deb -f "$deb" Depends)
            echo "$dep" | grep -qE "(^|, )$libws( |,|$)" && ok "Depends names $libws: $dep" ||
                bad "Depends '$dep' does not name $libws"
            [ "$(dpkg-deb -f "$deb" Package)" = "$name" ] && ok "Package: $name" || bad "Package field"
            for fld in Version Architecture Maintainer Description Section; do
                [ -n "$(dpkg-deb -f "$deb" $fld)" ] || bad "empty $fld field"
            done
            x=$work/deb-x
            dpkg-deb -x "$deb" "$x"
            if readelf -S "$x/$plugdir_rel/chunk.so" | grep -q debug_info; then bad "packaged chunk.so is not stripped"
            else ok "packaged chunk.so is stripped"; fi
            readelf --dyn-syms "$x/$plugdir_rel/chunk.so" | grep -q ' plugin_register$' &&
                ok "packaged chunk.so exports plugin_register" || bad "packaged chunk.so lacks plugin_register"
            zcat "$x/$doc/README.md.gz" | cmp -s - "$src/README.md" && ok "README.md.gz is README.md" ||
                bad "README.md.gz differs from README.md"
            grep -q '^License: GPL-2+' "$x/$doc/copyright" && ok "copyright: GPL-2+" || bad "copyright lacks GPL-2+"
        else
            bad "cpack did not write $deb"
        fi
    else
        tail -n 20 "$work/5.log"; bad "cpack -G DEB failed in the plugin-only build"
    fi
fi

if [ $fails = 0 ]; then echo "test-install.sh: all passed"; exit 0; fi
echo "test-install.sh: $fails FAILED" >&2
exit 1
