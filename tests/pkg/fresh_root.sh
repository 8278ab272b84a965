#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# An install route of the README, run exactly as written, on a machine that
# has nothing: a fresh `debootstrap --variant=minbase` root of RELEASE plus
# git, nothing the project's own tests installed on this host.
#
#   tests/pkg/fresh_root.sh RELEASE ROUTE     (bookworm|trixie, deb|source|demo|check)
#
#   deb:    the code block of "Install for production" (build-dep,
#           dpkg-buildpackage with its own test step, apt-get install of the
#           .deb, portwatch-conf --create enable, systemctl restart opensm)
#   source: the code block after "Without the package:" (the apt-get line,
#           autoreconf, configure, make, make install, ldconfig)
#   demo:   the first of the two commands of "Try it" (scripts/demo: it
#           installs what it needs, builds, and plays the cable move and the
#           switch reboot with stock opensm, without and with portwatch);
#           it must end with "portwatch swept at once both times", and
#           leave the opensm service it installed disabled at boot.
#   check:  the second command of "Try it" (scripts/check: it installs what
#           it needs, builds and runs every test and extra pass); it must
#           exit 0 and end with "check: N passed, 0 failed". Its own
#           fresh-root pass is left out (PW_CHECK_FRESH_ROOTS=0): a root
#           inside a root proves nothing the outer one does not.
# Then (deb, source) stock /usr/sbin/opensm of that root, started on the opensm.conf the
# route left (deb) or one naming the plugin (source), must log
# "portwatch: loaded" (it has no InfiniBand device there: the plugin says so
# and keeps looking; opensm exits when it cannot bind).
#
# The commands are read from README itself and run as root in the chroot
# with bash -e; apt-get is told to assume "yes" (apt.conf), no service may
# start (policy-rc.d), and systemctl is a stand-in that records its call
# (a chroot has no systemd). The project is a git clone of this checkout's
# HEAD. Roots live in a work directory removed at the end (PW_KEEP=1 keeps
# it); PW_FRESH_CACHE=DIR keeps a pristine debootstrap per release there
# for the next run, and the .debs apt downloaded in a route of that release
# for the next route (as a caching proxy would: the same packages are
# installed, only not fetched twice; an empty root gets them from a copy,
# not from the root before). dpkg in the root skips its fsync calls
# (force-unsafe-io, as Debian's own build chroots do): a throwaway root
# needs no crash safety, and the packages installed are the same. Root only; needs debootstrap and network access to
# deb.debian.org (PW_DEBIAN_MIRROR).
set -euo pipefail
release=${1:-} route=${2:-}
case $release in bookworm|trixie) ;; *) echo "usage: $0 bookworm|trixie deb|source|demo|check" >&2; exit 2 ;; esac
case $route in deb|source|demo|check) ;; *) echo "usage: $0 bookworm|trixie deb|source|demo|check" >&2; exit 2 ;; esac
name="fresh_root $release $route"
top=$(cd "$(dirname "$0")/../.." && pwd)
mirror=${PW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
fail() { echo "FAIL: $name: $*"; exit 1; }
# A failed route's log: first the lines that say what failed (automake's
# FAIL/ERROR lines, Boost.Test's and the shell tests' assertion text), which a
# long dump before the end would push out of its tail, then the tail.
show_failure() {
    echo "---- $name: what failed, from the route's log:"
    grep -a -E '^(FAIL|ERROR|XPASS)[: ]|error: in "|fatal error: in "|^FAIL: |^make(\[[0-9]+\])?: \*\*\*' "$1" \
        | head -n 60 || true
    echo "---- $name: the last 40 lines of the route's log:"
    tail -n 40 "$1"
}
log() { echo "[$(( SECONDS ))s] $name: $*"; }
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || fail "debootstrap not found: install the Debian package debootstrap"
git -C "$top" rev-parse HEAD >/dev/null 2>&1 || fail "$top is not a git checkout"

work=$(mktemp -d "${TMPDIR:-/tmp}/pw-fresh.XXXXXX")
root=$work/root
mounted=()
cleanup() {
    local m
    for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
    if [ "${PW_KEEP:-0}" = 1 ]; then echo "PW_KEEP=1: kept $work"; else rm -rf --one-file-system "$work"; fi
}
trap cleanup EXIT

# ---- the commands, from README
readme=$top/README
if [ "$route" = deb ]; then
    cmds=$(awk '/^Install for production$/ { f = 1 } f && /^    / { print substr($0, 5); n++ } f && n && /^$/ { exit }' "$readme")
elif [ "$route" = demo ] || [ "$route" = check ]; then
    # The command itself, without its comment.
    cmds=$(awk -v cmd="scripts/$route" '/^Try it \(two commands\)$/ { f = 1 } f && $1 == cmd { print $1; exit }' "$readme")
else
    cmds=$(awk '/^Without the package:$/ { f = 1; next } f && /^    / { print substr($0, 5); n++ } f && n && /^$/ { exit }' "$readme")
fi
[ -n "$cmds" ] || fail "no $route commands found in README"
log "README's commands:"$'\n'"$cmds"

# ---- a fresh root
t0=$SECONDS
cache=${PW_FRESH_CACHE:-}
if [ -n "$cache" ] && [ -f "$cache/$release.tar" ]; then
    mkdir -p "$root" && tar -xf "$cache/$release.tar" -C "$root"
else
    debootstrap --variant=minbase --include=git,ca-certificates "$release" "$root" "$mirror" \
        >"$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log"; fail "debootstrap $release failed"; }
    if [ -n "$cache" ]; then mkdir -p "$cache" && tar -cf "$cache/$release.tar" -C "$root" .; fi
fi
log "fresh $release root in $(( SECONDS - t0 )) s ($(chroot "$root" dpkg-query -W -f='.\n' | wc -l) packages)"
printf 'force-unsafe-io\n' >"$root/etc/dpkg/dpkg.cfg.d/90pw-unsafe-io"
if [ -n "$cache" ] && [ -d "$cache/$release-debs" ]; then
    find "$cache/$release-debs" -maxdepth 1 -name '*.deb' -exec cp -t "$root/var/cache/apt/archives/" {} +
fi
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
printf 'APT::Get::Assume-Yes "true";\n' >"$root/etc/apt/apt.conf.d/90assume-yes"
printf '#!/bin/sh\necho "systemctl $*" >>/root/systemctl.calls\n' >"$root/usr/local/bin/systemctl"
chmod 755 "$root/usr/local/bin/systemctl"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The root a mount point of its own, as / is on a machine (a private mount
# namespace, which test_syslog makes, needs one), then the kernel's trees.
mount --bind "$root" "$root"
mounted=("$root")
for m in proc sys dev dev/pts; do
    mount --bind "/$m" "$root/$m"
    mounted=("$root/$m" "${mounted[@]}")
done
git clone -q --no-hardlinks "$top" "$root/root/portwatch"
printf '%s\n' "set -ex" "export DEBIAN_FRONTEND=noninteractive" "cd /root/portwatch" \
    "apt-get update" "$cmds" >"$root/root/route.sh"
fresh_roots=1
[ "$route" = check ] && fresh_roots=0
# scripts/check builds upstream OpenSM from the snapshots PW_OPENSM_SOURCES
# names (scripts/check-opensm-versions): the root gets a copy of them.
osm_sources=
if [ "$route" = check ] && [ -n "${PW_OPENSM_SOURCES:-}" ]; then
    osm_sources=/root/opensm-sources
    mkdir -p "$root$osm_sources"
    cp "$PW_OPENSM_SOURCES"/opensm-*.tar.gz "$root$osm_sources/"
fi

# ---- the route
t0=$SECONDS
if ! chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        PW_CHECK_FRESH_ROOTS=$fresh_roots ${osm_sources:+PW_OPENSM_SOURCES=$osm_sources} bash /root/route.sh >"$work/route.log" 2>&1; then
    show_failure "$work/route.log"
    fail "the README's $route route failed in a fresh $release root"
fi
log "route done in $(( SECONDS - t0 )) s"
if [ -n "$cache" ]; then
    mkdir -p "$cache/$release-debs"
    find "$root/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -exec cp -n -t "$cache/$release-debs/" {} +
fi
if [ "$route" = check ]; then
    grep -a -E '^check: ' "$work/route.log" | sed 's/^/[check] /'
    tail -n 1 "$work/route.log" | grep -aqE '^check: [0-9]+ passed, 0 failed$' \
        || { show_failure "$work/route.log"; fail "scripts/check did not end with 'check: N passed, 0 failed'"; }
    echo "PASS: $name: the README's scripts/check passes on a fresh $release root"
    exit 0
fi
if [ "$route" = demo ]; then
    grep -a -A1 '^portwatch swept at once both times' "$work/route.log" | sed 's/^/[demo] /'
    grep -aq '^portwatch swept at once both times' "$work/route.log" \
        || { show_failure "$work/route.log"; fail "the demo did not report portwatch's sweeps"; }
    # It installed opensm: no subnet manager may start at the next boot.
    if [ -e "$root/etc/systemd/system/multi-user.target.wants/opensm.service" ] ||
        ls "$root"/etc/rc[2-5].d/S*opensm >/dev/null 2>&1; then
        fail "the demo left the opensm service it installed enabled at boot"
    fi
    echo "PASS: $name: the README's demo works on a fresh $release root and leaves no SM enabled"
    exit 0
fi
if [ "$route" = deb ]; then
    grep -q '^systemctl restart opensm$' "$root/root/systemctl.calls" 2>/dev/null \
        || fail "the route did not end with systemctl restart opensm"
    grep -a -E '^# (PASS|FAIL):' "$work/route.log" | tr '\n' ' ' | sed "s/^/[package test step] /"; echo
    grep -aq '^# FAIL: *0' "$work/route.log" || fail "the package's test step did not run, or failed"
    conf=/etc/opensm/opensm.conf
else
    printf 'event_plugin_name portwatch\n' >"$root/root/opensm.conf"
    conf=/root/opensm.conf
fi

# ---- stock opensm of that root loads the plugin
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin bash -c \
    "dpkg-query -W opensm >/dev/null 2>&1 || apt-get install -y -q opensm >/dev/null; \
     timeout 10 opensm -F $conf -f /root/opensm.log -e -g 0x0002c90300000001 >/dev/null 2>&1; \
     grep -a 'portwatch' /root/opensm.log" >"$work/load.log" 2>&1 || true
grep -q 'portwatch: loaded (portwatch ' "$work/load.log" \
    || { cat "$work/load.log"; fail "stock opensm of the $release root did not load the plugin"; }
log "$(grep -m1 'portwatch: loaded' "$work/load.log" | sed 's/.*portwatch: //')"
echo "PASS: $name: the README's $route route works on a fresh $release root and stock opensm loads the plugin"
