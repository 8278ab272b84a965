# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# shellcheck shell=bash
# Helpers of the package tests (test_deb.sh, test_rpm.sh), sourced after
# tests/e2e/lib.sh and pw_init.

# pkg_copy_source DIR: the source tree under test, as it is now, into DIR.
# From a git work tree: the files git knows plus new ones not ignored
# (uncommitted changes included); from a source tarball (make distcheck
# unpacks one): all of it. Sets PKG_COPIED_FROM to say which.
pkg_copy_source() {
    local dst=$1 top
    mkdir -p "$dst"
    top=$(git -C "$PW_SRCDIR" rev-parse --show-toplevel 2>/dev/null || true)
    if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$(cd "$PW_SRCDIR" && pwd -P)" ]; then
        ( cd "$PW_SRCDIR" && git ls-files -z -c -o --exclude-standard \
            | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
            | tar --null -T - -cf - ) | tar -xf - -C "$dst"
        PKG_COPIED_FROM="git work tree"
    else
        tar -C "$PW_SRCDIR" --exclude-vcs --exclude=autom4te.cache -cf - . | tar -xf - -C "$dst"
        chmod -R u+w "$dst"
        PKG_COPIED_FROM="source tree"
    fi
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
