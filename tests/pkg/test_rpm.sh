#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The RPM package (opensm-portwatch.spec, for the RHEL family and openSUSE),
# built with rpmbuild and installed into a private RPM root, against the
# OpenSM the tests run ($OPENSM: make check sets it to configure's; its
# headers are PREFIX/include/infiniband for PREFIX/sbin/opensm):
#
#   1. copies the current source tree, makes the release tarball (make dist)
#      and builds it as an admin would, `rpmbuild -tb TARBALL`, with
#      --define 'opensm_prefix PREFIX' (a no-op for /usr), --nodeps (the
#      BuildRequires name RHEL packages, which a Debian host has under other
#      names) and --nocheck (the spec's %check, make check-nofabric, repeats
#      tests make check runs anyway; PW_RPM_CHECK=1 runs it too);
#   2. the .rpm: Requires is the upstream range opensm >= X.Y.Z, opensm <
#      X.Y.(Z+1)~ of the headers it was built with, Release names it
#      (1.osmX.Y.Z), Version is configure.ac's; libportwatch.so in
#      /usr/lib64 (%{_libdir}, where opensm's dlopen finds it), no .la,
#      portwatch-conf, both man pages, README and opensm.conf.sample in the
#      doc directory, the Prometheus rule file in /usr/share/portwatch,
#      COPYING as the licence; the plugin's osm_version string
#      is $OPENSM's;
#   3. installs it with rpm into a private root (rpm --root; nothing outside
#      the test's directory is touched), enables the plugin with the
#      installed portwatch-conf, and runs $OPENSM on an ibsim fabric with
#      the root's /usr/lib64 as LD_LIBRARY_PATH (its stand-in for the
#      system's library directory): "portwatch: loaded" for $OPENSM's
#      version, the library mapped from the root, one bounce of the SM's link
#      answered by a heavy sweep, clean exit;
#   4. erases it (rpm -e): every file gone.
#
# Needs rpm (Debian's package: rpmbuild, rpm2cpio), cpio, and the e2e
# prerequisites. Never skipped. PW_KEEP=1 keeps the work directory.
set -euo pipefail
PW_TEST_NAME=test_rpm
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"
pw_init

PKG=opensm-portwatch
pw_need_cmd rpmbuild rpm
pw_need_cmd rpm2cpio rpm
pw_need_cmd cpio cpio
pw_need_cmd strings binutils
pw_require_plugin   # the verbs simulator (the plugin loaded is the package's)

# The OpenSM to build against: the one the tests run.
osm_prefix=$(cd "$(dirname "$PW_OPENSM")/.." && pwd)
osm_version_h=$osm_prefix/include/infiniband/opensm/osm_version.h
pw_need_file "$osm_version_h" "the headers of $PW_OPENSM (libopensm-dev, or its own make install)"
osm_ver=$PW_OSM_VERSION
osm_upstream=${osm_ver#OpenSM }
[ -n "$osm_ver" ] || pw_fail "no OpenSM version string in $PW_OPENSM"
grep -qF "\"$osm_ver\"" "$osm_version_h" || pw_fail "$osm_version_h is not for $PW_OPENSM ($osm_ver)"
pw_log "building against $osm_ver: headers in $osm_prefix/include/infiniband"

# ------------------------------------------------------------ 1. build
SRC=$PW_DIR/src
pkg_copy_source "$SRC"
version=$(sed -n 's/^AC_INIT(\[portwatch\], *\[\([^]]*\)\].*/\1/p' "$SRC/configure.ac")
[ -n "$version" ] || pw_fail "no version in $SRC/configure.ac"
# The tree's own autotools output when it is up to date, else a new one. The
# builds run at nice 19: the tests make check runs beside this one wait on
# opensm and the plugin's timers, and a compiler that takes their CPU makes
# them late.
regen='autoreconf -fi &&'
pw_copy_autotools_output "$PW_SRCDIR" "$SRC" && regen=
( cd "$SRC" && exec env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u abs_top_srcdir -u abs_top_builddir \
    nice -n 19 sh -c "$regen ./configure && make dist" ) </dev/null >"$PW_DIR/dist.log" 2>&1 \
    || { tail -n 40 "$PW_DIR/dist.log"; pw_fail "make dist of the copy failed"; }
TARBALL=$SRC/portwatch-$version.tar.gz
[ -f "$TARBALL" ] || pw_fail "make dist made no $(basename "$TARBALL")"

TOP=$PW_DIR/rpmbuild
check_opt=--nocheck
[ "${PW_RPM_CHECK:-0}" != 1 ] || check_opt=
t0=$SECONDS
rc=0
# shellcheck disable=SC2086  # check_opt is one option or none
( exec env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u abs_top_srcdir -u abs_top_builddir -u OPENSM \
    nice -n 19 timeout 1500 rpmbuild -tb --nodeps $check_opt \
    --define "_topdir $TOP" --define "opensm_prefix $osm_prefix" "$TARBALL" ) \
    </dev/null >"$PW_DIR/rpmbuild.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "---- rpmbuild, last 60 lines:"
    tail -n 60 "$PW_DIR/rpmbuild.log"
    pw_fail "rpmbuild -tb failed (exit $rc)"
fi
mapfile -t rpms < <(find "$TOP/RPMS" -name "$PKG-$version-*.rpm" ! -name '*-debug*')
[ "${#rpms[@]}" = 1 ] || pw_fail "rpmbuild made ${#rpms[@]} $PKG packages: $(find "$TOP/RPMS" -name '*.rpm')"
RPM=${rpms[0]}
pw_log "built $(basename "$RPM") ($(stat -c %s "$RPM") bytes) in $(( SECONDS - t0 )) s"

# ------------------------------------------------------------ 2. the .rpm
release=$(rpm -qp --qf '%{RELEASE}' "$RPM" 2>/dev/null)
pkgversion=$(rpm -qp --qf '%{VERSION}' "$RPM" 2>/dev/null)
[ "$pkgversion" = "$version" ] || pw_fail "package version $pkgversion is not configure.ac's $version"
[[ $release == 1.osm$osm_upstream* ]] || pw_fail "Release $release does not name the OpenSM it was built for (1.osm$osm_upstream)"
requires=$(rpm -qp --requires "$RPM" 2>/dev/null | grep '^opensm ' | sort | tr '\n' ',')
next=$(awk -F. -v OFS=. '{ $NF = $NF + 1; print }' <<<"$osm_upstream")
[ "$requires" = "opensm < $next~,opensm >= $osm_upstream," ] \
    || pw_fail "Requires is not the upstream range opensm >= $osm_upstream, opensm < $next~: $requires"
rpm -qp --list "$RPM" 2>/dev/null >"$PW_DIR/contents"
has() {   # PATH-REGEX WHAT
    grep -qE "^$1\$" "$PW_DIR/contents" || { cat "$PW_DIR/contents"; pw_fail "the .rpm has no $2 ($1)"; }
}
has /usr/lib64/libportwatch.so "plugin in /usr/lib64"
has /usr/sbin/portwatch-conf "portwatch-conf"
has /usr/sbin/portwatch-fieldcheck "portwatch-fieldcheck"
has '/usr/share/man/man8/portwatch-fieldcheck.8(\.gz)?' "portwatch-fieldcheck(8)"
has '/usr/share/man/man8/portwatch.8(\.gz)?' "portwatch(8)"
has '/usr/share/man/man8/portwatch-conf.8(\.gz)?' "portwatch-conf(8)"
has "/usr/share/doc/$PKG/README" "README"
has "/usr/share/doc/$PKG/opensm.conf.sample" "opensm.conf.sample"
has /usr/lib/systemd/system/opensm.service.d/portwatch-restart.conf "systemd drop-in for opensm.service"
has /usr/share/portwatch/portwatch.rules.yml "Prometheus rule file"
! grep -q '\.la$' "$PW_DIR/contents" || pw_fail "the .rpm ships a libtool .la file"
lic=$(rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$RPM" 2>/dev/null | awk '$2 ~ /l/ { print $1 }')
[[ $lic == */COPYING ]] || pw_fail "COPYING is not marked as the licence (%license): '$lic'"
mkdir -p "$PW_DIR/x"
( cd "$PW_DIR/x" && rpm2cpio "$RPM" | cpio -idm --quiet ) || pw_fail "rpm2cpio | cpio failed"
plugin_ver=$(pw_osm_version "$PW_DIR/x/usr/lib64/libportwatch.so")
[ "$plugin_ver" = "$osm_ver" ] || pw_fail "the plugin's osm_version '$plugin_ver' is not $PW_OPENSM's '$osm_ver'"
pw_log "package: Version $pkgversion Release $release; Requires: ${requires%,}; plugin for '$plugin_ver'"

# ------------------------------------------------------------ 3. install, load
ROOT=$PW_DIR/root
mkdir -p "$ROOT"
rpm --root "$ROOT" --initdb || pw_fail "rpm --root $ROOT --initdb failed"
# --nodeps: the root holds no opensm package to satisfy Requires.
out=$(rpm --root "$ROOT" -i --nodeps "$RPM" 2>&1) || pw_fail "rpm -i failed: $out"
rpm --root "$ROOT" -q "$PKG" >/dev/null || pw_fail "rpm -q $PKG: not installed after rpm -i"
SO=$ROOT/usr/lib64/libportwatch.so
[ -f "$SO" ] || pw_fail "$SO missing after rpm -i"
pw_log "installed: $(rpm --root "$ROOT" -q "$PKG")"

osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0
out=$("$ROOT/usr/sbin/portwatch-conf" -f "$PW_DIR/opensm.conf" enable holdoff_ms=100 2>&1) \
    || pw_fail "the installed portwatch-conf enable failed: $out"
grep -qx 'event_plugin_name portwatch' "$PW_DIR/opensm.conf" || pw_fail "portwatch-conf did not enable portwatch"

fabric_start mlx5
dev=$PW_VSIM_DEV
osm_start "$PW_DIR/opensm.conf" LD_PRELOAD="$PW_VSIM_LIB" LD_LIBRARY_PATH="$ROOT/usr/lib64" \
    VSIM_CONFIG="$PW_VSIM_CONFIG" VSIM_SOCKET="$PW_VSIM_SOCKET"
wait_log "$PW_OSM_LOG" 'portwatch: loaded|cannot load plugin|version mismatch' 10
case $PW_MATCH_TEXT in
    *"portwatch: loaded (portwatch $version for $osm_ver)"*) ;;
    *) pw_fail "opensm did not load the packaged plugin for $osm_ver: $PW_MATCH_TEXT" ;;
esac
pw_log "plugin: ${PW_MATCH_TEXT#*portwatch: }"
osm_watching "$dev"
maps=$(grep -F 'libportwatch.so' "/proc/$PW_OSM_PID/maps" | awk '{ print $NF }' | sort -u)
[ "$maps" = "$SO" ] || pw_fail "opensm mapped libportwatch.so from '$maps', expected $SO"
pkg_bounce_once "$dev"
osm_stop_clean 5
wait_log "$PW_OSM_LOG" 'portwatch: stopped: ' 2
sim_stop

# ------------------------------------------------------------ 4. erase
out=$(rpm --root "$ROOT" -e "$PKG" 2>&1) || pw_fail "rpm -e failed: $out"
! rpm --root "$ROOT" -q "$PKG" >/dev/null 2>&1 || pw_fail "$PKG still installed after rpm -e"
left=$(cd "$ROOT" && find usr -type f 2>/dev/null | head -n 5)
[ -z "$left" ] || pw_fail "files left in the root after rpm -e: $left"

pw_pass "$(basename "$RPM") built by rpmbuild against $osm_ver (Requires ${requires%,}), installed into an rpm root, loaded by $PW_OPENSM, answered a bounce, erased"
