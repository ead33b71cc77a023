# chroot-common.sh: what scripts/test-wireshark.sh and scripts/test-package.sh
# share, sourced by them after they set chroot_name (their name, for
# messages): root (or sudo), messages, the machine's Debian mirror, making a
# chroot with debootstrap, commands run inside one, and mounts undone on exit.
#
#   suite_of VERSION                    the Debian suite of Wireshark VERSION
#   add_version WORD KNOWN...           WORD (a version or all) onto versions
#   chroot_need_root ENV_VARS ARGS...   as root, or exec again through sudo
#   say MESSAGE / loud MESSAGE          a line on stderr / a banner
#   host_mirror                         the first Debian archive of the apt sources
#   in_root ROOT CMD...                 CMD in the chroot ROOT, as root, clean environment
#   chroot_remove_incomplete ROOT       remove an unfinished chroot (1: mounts under it)
#   chroot_debootstrap SUITE ROOT WHAT  debootstrap --variant=minbase (3: cannot)
#   mnt ARGS... TARGET                  mount, remembered for unmount_all
#   mount_system ROOT                   /proc, /dev, /dev/pts and /dev/shm in ROOT
#   unmount_all                         undo every mnt, last first

say() { echo "$chroot_name: $*" >&2; }
loud() {
    echo "################################################################################" >&2
    echo "### $chroot_name: $*" >&2
    echo "################################################################################" >&2
}

# suite_of VERSION: the Debian suite whose Wireshark is VERSION (README.md,
# "Wireshark versions"); status 1 for another version.
suite_of() {
    case "$1" in
    4.0) echo bookworm ;;
    4.4) echo trixie ;;
    4.6) echo sid ;;
    *) return 1 ;;
    esac
}

# add_version WORD KNOWN...: appends WORD to the array versions, or every
# KNOWN version for "all"; exits 2 when WORD is neither.
add_version() {
    local word=$1 known
    shift
    known="$*"
    if [ "$word" = all ]; then
        versions+=("$@")
        return
    fi
    case " $* " in
    *" $word "*) versions+=("$word") ;;
    *) echo "$chroot_name: unknown version '$word' (${known// /, } or all; try --help)" >&2; exit 2 ;;
    esac
}

# chroot_need_root ENV_VARS ARGS...: re-runs the script through sudo, keeping
# the environment variables ENV_VARS (comma-separated), unless we are root.
chroot_need_root() {
    local keep=$1
    shift
    [ "$(id -u)" = 0 ] && return
    command -v sudo >/dev/null || { echo "$chroot_name: needs root (debootstrap, chroot, mount), and there is no sudo" >&2; exit 2; }
    exec sudo --preserve-env="$keep" "$0" "$@"
}

# host_mirror: prints the first Debian archive URI of the machine's apt
# sources (deb822 .sources files first, then one-line sources.list), not a
# security archive; nothing when there is none.
host_mirror() {
    local f uri
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        uri=$(awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
        [ -n "$uri" ] && { echo "${uri%/}"; return; }
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -r "$f" ] || continue
        uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) { if ($i !~ /security/) { print $i; exit } else break } }' "$f")
        [ -n "$uri" ] && { echo "${uri%/}"; return; }
    done
}
mirror=${CHUNK_MIRROR:-$(host_mirror)}

# The chroots' apt: sid's Release file may have expired on the mirror.
apt_opts=(-o Acquire::Check-Valid-Until=false -o Acquire::Retries=3 -o APT::Install-Recommends=false -q)

in_root() {  # in_root ROOT CMD...: a clean environment in the chroot, as root
    local root=$1
    shift
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}

# chroot_remove_incomplete ROOT: removes ROOT; 1 (and ROOT left) when
# something is mounted under it.
chroot_remove_incomplete() {
    if findmnt -rn -o TARGET | grep -q "^$1/"; then
        say "$1 is incomplete and has mounts under it; unmount them first"
        return 1
    fi
    say "$1: incomplete, removing it"
    rm -rf --one-file-system "$1"
}

# chroot_debootstrap SUITE ROOT WHAT: a minbase SUITE in ROOT (debootstrap
# installed on the host first when missing); WHAT names it in messages.
# 0 made, 3 could not be made (no mirror, or it failed: the log beside ROOT).
chroot_debootstrap() {
    local suite=$1 root=$2 what=$3
    if [ -z "$mirror" ]; then
        loud "cannot make the $what chroot: no Debian mirror in this machine's apt sources; set CHUNK_MIRROR"
        return 3
    fi
    if ! command -v debootstrap >/dev/null; then
        say "installing debootstrap on the host"
        { DEBIAN_FRONTEND=noninteractive apt-get -q update &&
          DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends debootstrap; } >&2 ||
            { loud "cannot install debootstrap on the host (apt-get failed)"; return 3; }
    fi
    say "debootstrap $what into $root (a few minutes, once)"
    mkdir -p "$(dirname "$root")"
    if ! debootstrap --variant=minbase "$suite" "$root" "$mirror" > "$root.debootstrap.log" 2>&1; then
        tail -n 20 "$root.debootstrap.log" >&2
        loud "cannot make the $what chroot: debootstrap from $mirror failed (log: $root.debootstrap.log)"
        return 3
    fi
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}

mounted=()
mnt() {  # mnt ARGS... TARGET
    local target=${*: -1}
    mkdir -p "$target"
    mount "$@"
    mounted+=("$target")
}

mount_system() {  # mount_system ROOT
    mnt -t proc proc "$1/proc"
    mnt --bind /dev "$1/dev"
    mnt --bind /dev/pts "$1/dev/pts"
    mnt -t tmpfs -o mode=1777 shm "$1/dev/shm"
}

unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" 2>/dev/null ||
            say "could not unmount ${mounted[$i]}"
    done
    mounted=()
}
