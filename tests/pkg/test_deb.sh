#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The Debian package end to end, as an admin would use it:
#
#   1. copies the current source tree to a temporary directory and builds it
#      with `dpkg-buildpackage -us -uc -b`, DEB_BUILD_OPTIONS=nocheck (the
#      package's test step repeats tests make check runs anyway; set
#      PW_DEB_BUILD_OPTIONS= to run it too);
#   2. lintian on the result: no error (warnings are printed);
#   3. the .deb: libportwatch.so in the multiarch library directory, no .la,
#      portwatch-conf, both man pages, opensm.conf.sample and README in
#      /usr/share/doc/opensm-portwatch, the Prometheus rule file (the same
#      as monitoring/portwatch.rules.yml) in /usr/share/portwatch; Depends is
#      the upstream version range of the libopensm-dev it was built with (any
#      Debian revision), the
#      package version names it (+osmX.Y.Z), the installed opensm is it; the
#      plugin's osm_version string is the installed opensm's; the package
#      version is configure.ac's;
#   4. installs it with dpkg and enables the plugin in a fresh opensm.conf
#      (opensm -c) with the installed portwatch-conf;
#   5. runs stock /usr/sbin/opensm on an ibsim fabric WITHOUT LD_LIBRARY_PATH
#      (only the verbs simulator is preloaded, to give the plugin a device):
#      "portwatch: loaded" with the options portwatch-conf reports, the
#      library mapped from the package's path, one bounce of the SM's link
#      answered by a heavy sweep, clean exit;
#   6. removes (dpkg -r) and purges the package: every file gone, ld.so no
#      longer knows libportwatch.so, and opensm started again logs that it
#      cannot open the plugin and runs on.
#
# Root only (it installs a package), and never skipped: as another user it
# fails and says so. Runs under make check (tests/pkg/local.mk) and so in CI.
# Test runs on one machine are serialised with a lock file; the package is
# purged on exit whatever happens. PW_KEEP=1 keeps the work directory (build
# log, lintian output, opensm logs).
#
# Needs, besides the e2e prerequisites: dpkg-dev, debhelper, lintian and the
# Build-Depends of debian/control (scripts/packages lists them all).
set -euo pipefail
PW_TEST_NAME=test_deb
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"
pw_init

PKG=opensm-portwatch
PW_DEB_INSTALLED=

if [ "$(id -u)" -ne 0 ]; then
    pw_fail "must run as root: it installs and removes the Debian package $PKG (CI runs as root; by hand: sudo make check, or run scripts/check as root)"
fi
pw_need_cmd dpkg-buildpackage dpkg-dev
pw_need_cmd dpkg-architecture dpkg-dev
pw_need_cmd dh debhelper
pw_need_cmd lintian lintian
pw_need_cmd flock util-linux
pw_need_cmd strings binutils

PW_VSIM_LIB=$PW_BUILDDIR/tests/verbs_sim/.libs/libvsim.so
PW_VSIMCTL=$PW_BUILDDIR/tests/verbs_sim/vsimctl
pw_need_file "$PW_VSIM_LIB" "build the verbs simulator first (make check builds it)"
pw_need_file "$PW_VSIMCTL" "build the verbs simulator first (make check builds it)"

MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
ARCH=$(dpkg-architecture -qDEB_HOST_ARCH)
LIBDIR=/usr/lib/$MA
SO=$LIBDIR/libportwatch.so
DOCDIR=/usr/share/doc/$PKG

# Always leave the machine without the package (the harness calls
# pw_cleanup_hook on exit, whatever happened).
td_purge() {
    [ -n "$PW_DEB_INSTALLED" ] || return 0
    if dpkg-query -W -f='${db:Status-Abbrev}' "$PKG" 2>/dev/null | grep -q '^[ihrc]'; then
        echo "cleanup: purging $PKG"
        dpkg --purge "$PKG" >/dev/null 2>&1 || echo "cleanup: dpkg --purge $PKG failed"
    fi
    PW_DEB_INSTALLED=
}
pw_cleanup_hook() {
    td_purge
}

# dpkg ARGS...: dpkg, waiting (up to 5 min) while another dpkg or apt holds its lock.
td_dpkg() {
    local i out rc
    for i in $(seq 150); do
        rc=0
        out=$(dpkg "$@" 2>&1) || rc=$?
        if [ "$rc" -ne 0 ] && grep -q 'lock' <<<"$out" && grep -q 'locked\|unable to' <<<"$out"; then
            pw_sleep 2; continue
        fi
        printf '%s\n' "$out"
        return "$rc"
    done
    printf '%s\n' "$out"
    return 1
}

td_phase() {   # NAME: time since the previous phase
    pw__now
    local now=$PW_NOW
    [ -z "${TD_T:-}" ] || TIMES+=("$1 $(( (now - TD_T) / 1000 )) ms")
    TD_T=$now
}
TIMES=()

# ------------------------------------------------------------ one test at a time
lockdir=/run/lock
[ -d "$lockdir" ] && [ -w "$lockdir" ] || lockdir=/tmp
exec {TD_LOCK_FD}>"$lockdir/portwatch-test-deb.lock"
pw_log "waiting for $lockdir/portwatch-test-deb.lock"
flock -w 1800 "$TD_LOCK_FD" || pw_fail "another test_deb.sh held $lockdir/portwatch-test-deb.lock for 30 min"
td_phase start

# ------------------------------------------------------------ preconditions
st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$PKG" 2>/dev/null || true)
case $st in
    ''|un*|pn*|rc*) ;;
    *) pw_fail "$PKG is already installed (dpkg status '$st'); this test installs and removes it itself: remove it first (dpkg --purge $PKG)" ;;
esac
[ ! -e "$SO" ] || pw_fail "$SO exists but $PKG is not installed (left by 'make install'?): remove it, or the test cannot tell which copy opensm loads"
stray=$(ldconfig -p | awk '$1 == "libportwatch.so" { print $NF }' | head -n 1)
[ -z "$stray" ] || pw_fail "ld.so already finds another libportwatch.so ($stray, from 'make install'?): remove it and run ldconfig"

# ------------------------------------------------------------ 1. build from a copy
SRC=$PW_DIR/build/src
pkg_copy_source "$SRC"
[ -f "$SRC/debian/rules" ] || pw_fail "no debian/rules in the copy of $PW_SRCDIR"

version=$(sed -n 's/^AC_INIT(\[portwatch\], *\[\([^]]*\)\].*/\1/p' "$SRC/configure.ac")
debversion=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
[ "${debversion%%-*}" = "$version" ] \
    || pw_fail "debian/changelog is at $debversion but configure.ac at $version: add a changelog entry"

jobs=$(nproc 2>/dev/null || echo 2)
# nocheck by default: the package's test step (make check-nofabric: unit
# tests, verbs simulator, portwatch-conf, man pages) runs the very tests that
# make check runs around this test, and compiling them again would triple the
# build time. PW_DEB_BUILD_OPTIONS= (empty) builds exactly as an admin does.
# At nice 19: the tests make check runs beside this one wait on opensm and
# the plugin's timers, and a compiler that takes their CPU makes them late.
build_opts=${PW_DEB_BUILD_OPTIONS-nocheck}
rc=0
( cd "$SRC" && exec env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u abs_top_srcdir -u abs_top_builddir \
    DEB_BUILD_OPTIONS="$build_opts parallel=$jobs" nice -n 19 timeout 1500 dpkg-buildpackage -us -uc -b ) \
    </dev/null >"$PW_DIR/build.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "---- dpkg-buildpackage, last 60 lines:"
    tail -n 60 "$PW_DIR/build.log"
    pw_fail "dpkg-buildpackage -us -uc -b failed (exit $rc)"
fi
td_phase build
osm_upstream=$(dpkg-query -W -f='${Version}' libopensm-dev | sed 's/^[0-9]*://; s/-[^-]*$//')
DEB=$PW_DIR/build/${PKG}_${debversion}+osm${osm_upstream}_$ARCH.deb
CHANGES=$PW_DIR/build/portwatch_${debversion}_$ARCH.changes
[ -f "$DEB" ] || pw_fail "dpkg-buildpackage made no $(basename "$DEB"): $(ls "$PW_DIR/build")"
if [[ " $build_opts " == *" nocheck "* ]]; then
    tests="skipped (DEB_BUILD_OPTIONS=nocheck)"
else
    grep -q 'check-nofabric' "$PW_DIR/build.log" || pw_fail "the package build ran no tests (check-nofabric)"
    tests=$(grep -a '^# PASS:' "$PW_DIR/build.log" | tr -s ' ')
fi
pw_log "built $(basename "$DEB") ($(stat -c %s "$DEB") bytes) with DEB_BUILD_OPTIONS='$build_opts parallel=$jobs'; its test step: $tests"

# ------------------------------------------------------------ 2. lintian
rc=0
lintian --fail-on error "$CHANGES" >"$PW_DIR/lintian.out" 2>&1 || rc=$?
grep -v 'running with root privileges' "$PW_DIR/lintian.out" >"$PW_DIR/lintian.tags" || true
nE=$(grep -c '^E: ' "$PW_DIR/lintian.tags" || true)
nW=$(grep -c '^W: ' "$PW_DIR/lintian.tags" || true)
nI=$(grep -c '^I: ' "$PW_DIR/lintian.tags" || true)
pw_log "lintian: $nE error(s), $nW warning(s), $nI info(s)"
sed 's/^/    /' "$PW_DIR/lintian.tags"
[ "$nE" = 0 ] && [ "$rc" = 0 ] || pw_fail "lintian reported errors (exit $rc)"
td_phase lintian

# ------------------------------------------------------------ 3. the .deb
dpkg-deb -c "$DEB" | awk '{ print $1, $NF }' | sed 's| \./| /|' >"$PW_DIR/contents"
has() {   # MODE-REGEX PATH-REGEX WHAT
    grep -qE "^$1 $2\$" "$PW_DIR/contents" || { cat "$PW_DIR/contents"; pw_fail "the .deb has no $3 ($2)"; }
}
has '-rw-r--r--' "$SO" "plugin in the multiarch library directory"
has '-rwxr-xr-x' /usr/sbin/portwatch-conf "portwatch-conf"
has '-rwxr-xr-x' /usr/sbin/portwatch-fieldcheck "portwatch-fieldcheck"
has '-rw-r--r--' /usr/share/man/man8/portwatch-fieldcheck.8.gz "portwatch-fieldcheck(8)"
has '-rw-r--r--' /usr/share/man/man8/portwatch.8.gz "portwatch(8)"
has '-rw-r--r--' /usr/share/man/man8/portwatch-conf.8.gz "portwatch-conf(8)"
has '-rw-r--r--' "$DOCDIR/opensm.conf.sample(.gz)?" "opensm.conf.sample"
has '-rw-r--r--' "$DOCDIR/README(.gz)?" "README"
has '-rw-r--r--' "$DOCDIR/copyright" "copyright"
DROPIN=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)/opensm@.service.d/portwatch-restart.conf
has '-rw-r--r--' "$DROPIN" "systemd drop-in for opensm@.service"
has '-rw-r--r--' /usr/share/portwatch/portwatch.rules.yml "Prometheus rule file"
dpkg-deb --fsys-tarfile "$DEB" | tar -xOf - ./usr/share/portwatch/portwatch.rules.yml \
    | cmp -s - "$PW_SRCDIR/monitoring/portwatch.rules.yml" \
    || pw_fail "the .deb's portwatch.rules.yml differs from monitoring/portwatch.rules.yml"
! grep -q '\.la$' "$PW_DIR/contents" || pw_fail "the .deb ships a libtool .la file"
! grep -q '/usr/share/doc/portwatch/' "$PW_DIR/contents" || pw_fail "the .deb uses /usr/share/doc/portwatch instead of $DOCDIR"

osm_dev=$(dpkg-query -W -f='${Version}' libopensm-dev)
osm_bin=$(dpkg-query -W -f='${Version}' opensm)
depends=$(dpkg-deb -f "$DEB" Depends)
# The upstream version, any Debian revision: opensm's security updates and
# rebuilds keep the plugin installed.
next=$(awk -F. -v OFS=. '{ sub(/[^0-9.].*/, ""); print }' <<<"$osm_upstream" | awk -F. -v OFS=. '{ $NF = $NF + 1; print }')
grep -qF "opensm (>= $osm_upstream), opensm (<< $next~)" <<<"$depends" \
    || pw_fail "Depends is not the upstream range opensm (>= $osm_upstream), opensm (<< $next~): $depends"
! grep -qF "opensm (= " <<<"$depends" || pw_fail "Depends pins an exact opensm revision: $depends"
for v in "$osm_dev" "$osm_upstream-99" "$osm_upstream-1+b9"; do
    dpkg --compare-versions "$v" ge "$osm_upstream" && dpkg --compare-versions "$v" lt "$next~" \
        || pw_fail "opensm $v would not satisfy $depends"
done
! dpkg --compare-versions "$next-1" lt "$next~" || pw_fail "opensm $next-1 would satisfy $depends"
pkgversion=$(dpkg-deb -f "$DEB" Version)
[ "$pkgversion" = "$debversion+osm$osm_upstream" ] \
    || pw_fail "package version $pkgversion does not say the opensm it was built for ($debversion+osm$osm_upstream)"
[ "$osm_bin" = "$osm_dev" ] || pw_fail "installed opensm $osm_bin differs from libopensm-dev $osm_dev"
mkdir -p "$PW_DIR/x"
dpkg-deb -x "$DEB" "$PW_DIR/x"
plugin_ver=$(pw_osm_version "$PW_DIR/x$SO")
osm_ver=$PW_OSM_VERSION
[ -n "$plugin_ver" ] && [ "$plugin_ver" = "$osm_ver" ] \
    || pw_fail "the plugin's osm_version '$plugin_ver' is not $PW_OPENSM's '$osm_ver'"
pw_log "package: Depends: $depends"
pw_log "package: plugin for '$plugin_ver', $PW_OPENSM is '$osm_ver'"

# ------------------------------------------------------------ 4. install
PW_DEB_INSTALLED=1
out=$(td_dpkg -i "$DEB") || pw_fail "dpkg -i failed: $out"
st=$(dpkg-query -W -f='${Status}' "$PKG")
[ "$st" = "install ok installed" ] || pw_fail "after dpkg -i: status '$st'"
[ -f "$SO" ] || pw_fail "$SO missing after install"
cached=$(ldconfig -p | awk '$1 == "libportwatch.so" { print $NF }')
# /lib may be /usr/lib (merged /usr): compare the files, not the spellings.
[ -n "$cached" ] && [ "$(readlink -f "$cached")" = "$(readlink -f "$SO")" ] || pw_fail "ld.so cache after install lists '$cached', expected $SO (ldconfig trigger?)"
td_phase install
pw_log "installed: $(dpkg-query -W -f='${Package} ${Version}' "$PKG"); ld.so cache: $cached"

# A fresh opensm.conf from opensm itself; the installed helper enables portwatch.
osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0
cp "$PW_DIR/opensm.conf" "$PW_DIR/opensm.conf.orig"
out=$(/usr/sbin/portwatch-fieldcheck --help 2>&1) && grep -q '^Usage: portwatch-fieldcheck' <<<"$out" \
    || pw_fail "the installed portwatch-fieldcheck --help failed: $out"
out=$(/usr/sbin/portwatch-conf -f "$PW_DIR/opensm.conf" enable holdoff_ms=100 2>&1) \
    || pw_fail "portwatch-conf enable failed: $out"
grep -qx 'event_plugin_name portwatch' "$PW_DIR/opensm.conf" || pw_fail "portwatch-conf did not enable portwatch"
want_opts=$(/usr/sbin/portwatch-conf -f "$PW_DIR/opensm.conf" status | sed -n 's/^options: //p')
[ -n "$want_opts" ] || pw_fail "portwatch-conf status shows no options"
pw_log "portwatch-conf: $(diff "$PW_DIR/opensm.conf.orig" "$PW_DIR/opensm.conf" | grep '^>' | tr '\n' ' ')"

# ------------------------------------------------------------ 5. stock opensm loads it
unset LD_LIBRARY_PATH
fabric_start mlx5
dev=$PW_VSIM_DEV
osm_start "$PW_DIR/opensm.conf" LD_PRELOAD="$PW_VSIM_LIB" \
    VSIM_CONFIG="$PW_VSIM_CONFIG" VSIM_SOCKET="$PW_VSIM_SOCKET"
wait_log "$PW_OSM_LOG" 'portwatch: loaded|cannot load plugin|version mismatch' 10
case $PW_MATCH_TEXT in *'portwatch: loaded'*) ;; *) pw_fail "opensm did not load the plugin: $PW_MATCH_TEXT" ;; esac
loaded=${PW_MATCH_TEXT#*portwatch: }
pw_log "plugin: $loaded"
[ "${loaded##*): }" = "$want_opts" ] || pw_fail "the plugin runs with '${loaded##*): }', portwatch-conf status said '$want_opts'"
osm_watching "$dev"
maps=$(grep -F 'libportwatch.so' "/proc/$PW_OSM_PID/maps" | awk '{ print $NF }' | sort -u)
[ "$maps" = "$SO" ] || pw_fail "opensm mapped libportwatch.so from '$maps', expected $SO"
if tr '\0' '\n' <"/proc/$PW_OSM_PID/environ" | grep -q '^LD_LIBRARY_PATH='; then
    pw_fail "opensm runs with LD_LIBRARY_PATH set"
fi
pw_log "opensm (pid $PW_OSM_PID, no LD_LIBRARY_PATH) mapped $maps"

pkg_bounce_once "$dev"
osm_stop_clean 5
wait_log "$PW_OSM_LOG" 'portwatch: stopped: ' 2
pw_log "plugin: ${PW_MATCH_TEXT#*portwatch: }"
td_phase opensm

# ------------------------------------------------------------ 6. remove, purge
out=$(td_dpkg -r "$PKG") || pw_fail "dpkg -r failed: $out"
for f in "$SO" /usr/sbin/portwatch-conf /usr/sbin/portwatch-fieldcheck /usr/share/man/man8/portwatch.8.gz \
         /usr/share/man/man8/portwatch-conf.8.gz /usr/share/man/man8/portwatch-fieldcheck.8.gz "$DROPIN"; do
    [ ! -e "$f" ] || pw_fail "$f is still there after dpkg -r"
done
out=$(td_dpkg --purge "$PKG") || pw_fail "dpkg --purge failed: $out"
PW_DEB_INSTALLED=
st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$PKG" 2>/dev/null || true)
case $st in ''|un*|pn*) ;; *) pw_fail "after dpkg --purge: status '$st'" ;; esac
[ ! -e "$DOCDIR" ] || pw_fail "$DOCDIR is still there after the purge"
! ldconfig -p | grep -q 'libportwatch\.so' || pw_fail "ld.so cache still lists libportwatch.so after the purge"
td_phase remove

# The same opensm.conf now: the plugin is gone for OpenSM too, and it runs on.
osm_start "$PW_DIR/opensm.conf"
wait_log "$PW_OSM_LOG" "ERR 1000: cannot load plugin 'portwatch'" 10
grep -q 'Failed to open event plugin "libportwatch.so"' "$PW_OSM_LOG" \
    || pw_fail "no 'Failed to open event plugin \"libportwatch.so\"' in the opensm log"
osm_wait_up 10
osm_stop_clean 5
sim_stop
td_phase after

pw_log "phases: ${TIMES[*]}"
pw_pass "$(basename "$DEB") built (lintian: $nE errors, $nW warnings), installed, loaded by stock opensm from $SO without LD_LIBRARY_PATH, removed and purged"
