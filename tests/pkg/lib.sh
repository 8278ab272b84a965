# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# shellcheck shell=bash
# Helpers of the package tests (test_deb.sh, test_rpm.sh), sourced after
# tests/e2e/lib.sh and pw_init.

# pkg_copy_source DIR: the source tree under test, as it is now, into DIR
# (pw_snapshot_source: from a git work tree the files git knows plus new ones
# not ignored; from a source tarball all of it). Sets PKG_COPIED_FROM.
pkg_copy_source() {
    local dst=$1
    pw_snapshot_source "$PW_SRCDIR" "$dst"
    PKG_COPIED_FROM=$PW_SNAPSHOT_FROM
    pw_log "copied the $PKG_COPIED_FROM $PW_SRCDIR ($(find "$dst" -type f | wc -l) files)"
}

# pkg_bounce_once DEV: one bounce of the SM's link (Hca1 port 1 in ibsim,
# DEV port 1 in the verbs simulator) with a running opensm that loaded the
# installed plugin: portwatch marks the loss, answers the return with a
# sweep, and OpenSM runs a heavy sweep to SUBNET UP.
pkg_bounce_once() {
    local dev=$1 mark
    mark=$(log_lines "$PW_OSM_LOG")
    link_step down "$dev"
    wait_log "$PW_OSM_LOG" "portwatch: $dev:1 .*\[action=mark\]" 5 "$mark"
    pw_sleep 0.3
    mark=$(log_lines "$PW_OSM_LOG")
    link_step back "$dev"
    wait_log "$PW_OSM_LOG" "portwatch: $dev:1 .*\[action=sweep\]" 5 "$mark"
    pw_log "plugin: ${PW_MATCH_TEXT#*portwatch: }"
    wait_log "$PW_OSM_LOG" "$PW_RE_HEAVY" 5 "$mark"
    wait_log "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 5 "$PW_MATCH_LINE"
}
