#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# A malformed portwatch option must make the plugin refuse to load, loudly,
# without taking OpenSM down with it.
#
# Cases (one fresh opensm each, same ibsim; plugin and verbs simulator loaded
# as in the bounce test):
#   1. event_plugin_options portwatch.holdoff_ms=banana
#   2. event_plugin_options portwatch.no_such_key=1
#      Both: exactly one "portwatch: ERROR" line, naming the offending token;
#      opensm logs "cannot load plugin"; the plugin never says "loaded",
#      "watching" or "stopped:"; opensm still reaches SUBNET UP, the SM port
#      is ACTIVE, and SIGTERM makes it exit with status 0.
#   3. portwatch.metrics_file=DIR/<230 bytes>-%g: a valid value whose file
#      name is too long once %g is OpenSM's port GUID (248 > 242 bytes);
#      refused the same way, before the load line.
#   4. event_plugin_options otherplugin.knob=7 portwatch.holdoff_ms=250
#      The option string is shared by every plugin: a foreign token is not an
#      error; the plugin loads (and reports holdoff 250 ms in its load line).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin

fabric_start mlx5

refused() {   # NAME OPTIONS TOKEN-TO-BE-NAMED
    local name=$1 opts=$2 token=$3 n err
    pw_log "---- case $name: event_plugin_options $opts"
    osm_make_conf "$PW_DIR/opensm-$name.conf" sweep_interval=0 \
        event_plugin_name=portwatch "event_plugin_options=$opts"
    osm_start_plugin "$PW_DIR/opensm-$name.conf"
    osm_wait_up 10
    wait_log "$PW_OSM_LOG" 'cannot load plugin' 2
    pw_log "opensm: ${PW_MATCH_TEXT#* -> }"
    n=$(count_log "$PW_OSM_LOG" 'portwatch: ERROR')
    [ "$n" = 1 ] || pw_fail "$name: $n 'portwatch: ERROR' lines (expected exactly 1)"
    err=$(grep -a 'portwatch: ERROR' "$PW_OSM_LOG")
    pw_log "plugin: ${err#*portwatch: }"
    case $err in
        *"$token"*) ;;
        *) pw_fail "$name: the ERROR line does not name the token '$token': $err" ;;
    esac
    for re in 'portwatch: loaded' 'portwatch: watching' 'portwatch: stopped:'; do
        [ "$(count_log "$PW_OSM_LOG" "$re")" = 0 ] || pw_fail "$name: plugin refused to load but logged /$re/"
    done
    [ "$(smp_port_state Hca1 1)" = Active ] || pw_fail "$name: SM port not Active"
    osm_stop_clean 5
    [ "$(count_log "$PW_OSM_LOG" 'portwatch: stopped:')" = 0 ] \
        || pw_fail "$name: a plugin that was never created logged 'stopped:'"
}

refused banana 'portwatch.holdoff_ms=banana' 'banana'
refused unknown_key 'portwatch.no_such_key=1' 'no_such_key'
long_name=$(printf 'n%.0s' $(seq 230))
refused long_metrics_name "portwatch.metrics_file=$PW_DIR/$long_name%g" \
    'the file name is 248 bytes, at most 242 (with %g expanded)'

pw_log "---- case foreign: event_plugin_options otherplugin.knob=7 portwatch.holdoff_ms=250"
osm_make_conf "$PW_DIR/opensm-foreign.conf" sweep_interval=0 event_plugin_name=portwatch \
    'event_plugin_options=otherplugin.knob=7 portwatch.holdoff_ms=250'
osm_start_plugin "$PW_DIR/opensm-foreign.conf"
wait_log "$PW_OSM_LOG" 'portwatch: loaded' 5
pw_log "plugin: ${PW_MATCH_TEXT#*portwatch: }"
case $PW_MATCH_TEXT in
    *250*) ;;
    *) pw_fail "load line does not show holdoff 250: $PW_MATCH_TEXT" ;;
esac
osm_wait_up 10
[ "$(count_log "$PW_OSM_LOG" 'portwatch: ERROR|cannot load plugin')" = 0 ] \
    || pw_fail "a foreign option token made the plugin fail"
osm_stop_clean 5
wait_log "$PW_OSM_LOG" 'portwatch: stopped:' 1
sim_stop

pw_pass "bad tokens refused with one ERROR line naming them, opensm ran on and exited cleanly; foreign tokens ignored"
