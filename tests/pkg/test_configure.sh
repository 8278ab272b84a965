#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# How configure finds OpenSM, against the OpenSM the tests run ($OPENSM:
# make check sets it to configure's; its prefix is the directory above its
# sbin/, its headers PREFIX/include/infiniband):
#
#   1. --with-opensm=PREFIX: the headers from PREFIX/include/infiniband,
#      OPENSM=PREFIX/sbin/opensm, the headers' version is that opensm's;
#   2. no option, an opensm.pc on PKG_CONFIG_PATH (as a packager may install
#      one) naming PREFIX: configure takes its includedir ("pkg-config
#      opensm"), and --with-opensm still wins over it;
#   3. bad input, each one clear error naming the problem: a prefix that is
#      no directory, --with-opensm without a prefix, a prefix without
#      OpenSM's headers.
#
# Runs configure only (no build), in a copy of the source tree. Never
# skipped.
set -euo pipefail
PW_TEST_NAME=test_configure
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"
pw_init
pw_need_cmd pkg-config pkg-config
pw_need_cmd autoreconf autoconf

osm_prefix=$(cd "$(dirname "$PW_OPENSM")/.." && pwd)
osm_inc=$osm_prefix/include/infiniband
pw_need_file "$osm_inc/opensm/osm_version.h" "the headers of $PW_OPENSM (libopensm-dev, or its own make install)"
[ -n "$PW_OSM_VERSION" ] || pw_fail "no OpenSM version string in $PW_OPENSM"

SRC=$PW_DIR/src
pkg_copy_source "$SRC"
# The tree's own configure when it is up to date (make check regenerates it
# first), else a new one.
if pw_copy_autotools_output "$PW_SRCDIR" "$SRC"; then
    pw_log "took the autotools output of $PW_SRCDIR"
else
    ( cd "$SRC" && exec env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL autoreconf -fi ) </dev/null >"$PW_DIR/autoreconf.log" 2>&1 \
        || { tail -n 20 "$PW_DIR/autoreconf.log"; pw_fail "autoreconf of the copy failed"; }
fi

# start_configure NAME [ENV=VALUE...] -- [ARG...]: configure in its own build
# directory, in the background: the runs share nothing, and side by side
# they take about the time of one.
declare -A CONF_PID CONF_WHAT
start_configure() {
    local name=$1 dir=$PW_DIR/build-$1
    shift
    local -a envs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    mkdir -p "$dir"
    ( cd "$dir" && exec env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u OPENSM -u PKG_CONFIG_PATH "${envs[@]}" \
        nice -n 19 "$SRC/configure" "$@" ) </dev/null >"$dir/configure.out" 2>&1 &
    CONF_PID[$name]=$!
    CONF_WHAT[$name]="$* (${envs[*]})"
}
# run_configure NAME: waits for the run start_configure NAME began; CONF_OUT
# is its output, CONF_RC its exit status.
run_configure() {
    local name=$1
    CONF_RC=0
    wait "${CONF_PID[$name]}" || CONF_RC=$?
    CONF_OUT=$(cat "$PW_DIR/build-$name/configure.out")
    pw_log "configure ${CONF_WHAT[$name]}: exit $CONF_RC"
}
expect_line() {   # WHAT FIXED-STRING
    grep -qF -- "$2" <<<"$CONF_OUT" || { tail -n 15 <<<"$CONF_OUT"; pw_fail "$1: configure did not print '$2'"; }
}
expect_ok() {     # WHAT
    [ "$CONF_RC" = 0 ] || { tail -n 15 <<<"$CONF_OUT"; pw_fail "$1: configure failed (exit $CONF_RC)"; }
}
expect_error() {  # WHAT FIXED-STRING
    [ "$CONF_RC" != 0 ] || pw_fail "$1: configure succeeded"
    local n
    n=$(grep -c '^configure: error: ' <<<"$CONF_OUT" || true)
    [ "$n" = 1 ] || { tail -n 15 <<<"$CONF_OUT"; pw_fail "$1: $n error lines, expected one"; }
    expect_line "$1" "configure: error: $2"
}

# An opensm.pc naming the prefix (as a packager may install one), and an
# empty prefix.
pc_dir=$PW_DIR/pkgconfig
mkdir -p "$pc_dir"
cat >"$pc_dir/opensm.pc" <<EOF
prefix=$osm_prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: opensm
Description: OpenSM (written by $PW_TEST_NAME)
Version: ${PW_OSM_VERSION#OpenSM }
Cflags: -I\${includedir}/infiniband
Libs: -L\${libdir} -lopensm
EOF
empty=$PW_DIR/empty-prefix
mkdir -p "$empty"
start_configure prefix -- --with-opensm="$osm_prefix"
start_configure pkgconfig PKG_CONFIG_PATH="$pc_dir" --
start_configure pkgconfig-and-prefix PKG_CONFIG_PATH="$pc_dir" -- --with-opensm="$empty"
start_configure missing -- --with-opensm="$PW_DIR/no-such-prefix"
start_configure bare -- --with-opensm

# ---- 1. --with-opensm=PREFIX
run_configure prefix
expect_ok "--with-opensm=$osm_prefix"
expect_line "--with-opensm" "checking for the OpenSM headers... $osm_inc (--with-opensm=$osm_prefix)"
expect_line "--with-opensm" "checking for the OpenSM version of the headers... $PW_OSM_VERSION"
expect_line "--with-opensm" "checking the version of $osm_prefix/sbin/opensm... $PW_OSM_VERSION"
! grep -q 'will refuse to load' <<<"$CONF_OUT" || pw_fail "--with-opensm: configure warns of a version mismatch"
pw_log "1 ok: --with-opensm=$osm_prefix takes $osm_inc and $osm_prefix/sbin/opensm ($PW_OSM_VERSION)"

# ---- 2. an opensm.pc
run_configure pkgconfig
expect_ok "opensm.pc"
expect_line "opensm.pc" "checking for the OpenSM headers... $osm_inc (pkg-config opensm)"
expect_line "opensm.pc" "checking for the OpenSM version of the headers... $PW_OSM_VERSION"
# --with-opensm wins over pkg-config: a prefix with no headers fails, so the
# .pc (which has them) was not used.
run_configure pkgconfig-and-prefix
expect_error "--with-opensm beside opensm.pc" "OpenSM headers (complib/cl_types.h) not found in $empty/include/infiniband: is $empty the prefix OpenSM was installed into"
pw_log "2 ok: opensm.pc's includedir taken; --with-opensm wins over it"

# ---- 3. bad input
run_configure missing
expect_error "a missing prefix" "--with-opensm=$PW_DIR/no-such-prefix: no such directory"
run_configure bare
expect_error "--with-opensm without a prefix" "--with-opensm needs the prefix OpenSM was installed into"
pw_log "3 ok: a missing prefix, no prefix, a prefix without headers: one error each"

pw_pass "configure finds $PW_OSM_VERSION by --with-opensm=$osm_prefix and by an opensm.pc; bad prefixes get one clear error each"
