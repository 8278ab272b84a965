#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# A plugin built for one OpenSM version, loaded into an opensm of another,
# gets OpenSM's own refusal and OpenSM runs on without it.
#
# PW_MISMATCH_OPENSM names the other opensm (scripts/check-opensm-versions
# runs this test both ways: the plugin built for Debian's 3.3.23 in an
# opensm 3.3.24 built from source, and the plugin built for 3.3.24 in
# Debian's). Without it, or with an opensm of the plugin's own version, the
# test fails: it cannot prove anything then.
#
# Asserts: the versions differ; opensm logs "OpenSM version mismatch ...
# Skip loading" naming the plugin's version; the plugin never runs (no
# "portwatch:" line: create() was not called); opensm reaches SUBNET UP
# with the SM port ACTIVE, still answers a link bounce (SIGHUP, its own
# path), and exits 0 on SIGTERM.
set -euo pipefail
[ -n "${PW_MISMATCH_OPENSM:-}" ] || {
    echo "FAIL: test_version_mismatch: set PW_MISMATCH_OPENSM to an opensm of another version than the plugin's (scripts/check-opensm-versions does)" >&2
    exit 1
}
OPENSM=$PW_MISMATCH_OPENSM
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin

plugin_ver=$(pw_osm_version "$PW_PLUGIN_DIR/libportwatch.so")
[ -n "$plugin_ver" ] || pw_fail "no OpenSM version string in $PW_PLUGIN_DIR/libportwatch.so"
[ -n "$PW_OSM_VERSION" ] || pw_fail "no OpenSM version string in $PW_OPENSM"
[ "$plugin_ver" != "$PW_OSM_VERSION" ] \
    || pw_fail "the plugin is built for '$plugin_ver', which is $PW_OPENSM's own version: no mismatch to test"
pw_log "plugin built for '$plugin_ver', opensm is '$PW_OSM_VERSION'"

fabric_start mlx5
osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0 event_plugin_name=portwatch \
    'event_plugin_options=portwatch.holdoff_ms=100'
osm_start_plugin "$PW_DIR/opensm.conf"
wait_log "$PW_OSM_LOG" 'OpenSM version mismatch' 10
pw_log "opensm: ${PW_MATCH_TEXT#* -> }"
case $PW_MATCH_TEXT in
    *"'portwatch'"*"built against $plugin_ver version"*"Skip loading"*) ;;
    *) pw_fail "the refusal does not name portwatch, '$plugin_ver' and 'Skip loading': $PW_MATCH_TEXT" ;;
esac
osm_wait_up 10
[ "$(smp_port_state Hca1 1)" = Active ] || pw_fail "SM port not Active"
[ "$(count_log "$PW_OSM_LOG" 'portwatch: ')" = 0 ] || pw_fail "a refused plugin logged: $(grep -a 'portwatch: ' "$PW_OSM_LOG" | head -n 3)"

# OpenSM without the plugin still works: a bounce of its port, then SIGHUP
# (what an admin does without portwatch), ends in a heavy sweep and SUBNET UP.
fabric_link down
fabric_link back
mark=$(log_lines "$PW_OSM_LOG")
kill -HUP "$PW_OSM_PID"
wait_log "$PW_OSM_LOG" "$PW_RE_HEAVY" 10 "$mark"
wait_log "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 10 "$PW_MATCH_LINE"
wait_port_state Hca1 1 Active 10 || pw_fail "SM port not Active after the heavy sweep (${PW_PORT_STATE:-?})"
osm_stop_clean 5
[ "$(count_log "$PW_OSM_LOG" 'portwatch: ')" = 0 ] || pw_fail "the refused plugin logged at exit"
sim_stop

pw_pass "'$plugin_ver' plugin refused by '$PW_OSM_VERSION' opensm ($PW_OPENSM) with OpenSM's own message; opensm ran on, swept on SIGHUP and exited 0"
