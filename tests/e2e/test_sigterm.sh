#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# OpenSM with libportwatch.so must shut down cleanly on SIGTERM, whatever the
# plugin is doing.
#
# Cases (fresh opensm each, same ibsim, mlx5-style verbs simulator):
#   idle      - plugin loaded and watching, nothing happening;
#   after     - SIGTERM right after a link-back heavy sweep was requested;
#   deferred  - holdoff_ms=30000: a first return of the link sweeps, a second
#               one inside the hold-off is deferred ([action=defer]); SIGTERM
#               while that deferred sweep is still pending.
# Each: exit status 0 within 5 s of SIGTERM, the plugin's
# "portwatch: stopped: events=... sweeps=..." line present exactly once, and
# its counters match what the case did; no deferred sweep fires after
# shutdown began.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin

fabric_start mlx5
DEV=$PW_VSIM_DEV
STOP_TIMES=()

start_case() {   # NAME HOLDOFF_MS
    pw_log "---- case $1 (holdoff_ms=$2)"
    osm_make_conf "$PW_DIR/opensm-$1.conf" sweep_interval=0 event_plugin_name=portwatch \
        "event_plugin_options=portwatch.holdoff_ms=$2"
    osm_start_plugin "$PW_DIR/opensm-$1.conf"
    osm_watching "$DEV"
}

stop_case() {   # NAME -> sets STOPPED (the summary line)
    osm_stop_clean 5
    STOP_TIMES+=("$1 ${PW_OSM_STOP_MS} ms")
    [ "$(count_log "$PW_OSM_LOG" 'portwatch: stopped: ')" = 1 ] \
        || pw_fail "$1: expected exactly one 'portwatch: stopped:' line"
    STOPPED=$(grep -a 'portwatch: stopped: ' "$PW_OSM_LOG")
    STOPPED=${STOPPED#*portwatch: }
    pw_log "plugin: $STOPPED"
}

counter() {   # NAME -> value from $STOPPED
    printf '%s\n' "$STOPPED" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"
}

# bounce ACTION [PAUSE_S]: the SM's link goes (the loss logged), stays down
# PAUSE_S, and comes back; the return is logged with [action=ACTION].
bounce() {
    local mark
    mark=$(log_lines "$PW_OSM_LOG")
    link_step down "$DEV"
    wait_log "$PW_OSM_LOG" "portwatch: $DEV:1 .*-> DOWN .*\[action=" 10 "$mark"
    if [ -n "${2:-}" ]; then pw_sleep "$2"; fi
    link_step back "$DEV"
    wait_log "$PW_OSM_LOG" "portwatch: .*\[action=$1\]" 10 "$mark"
}

# ---- idle
start_case idle 100
stop_case idle
[ "$(counter sweeps)" = 0 ] || pw_fail "idle: sweeps=$(counter sweeps), expected 0"

# ---- SIGTERM right after a sweep request
start_case after 100
bounce sweep 0.2
stop_case after
[ "$(counter sweeps)" = 1 ] || pw_fail "after: sweeps=$(counter sweeps), expected 1"

# ---- SIGTERM with a deferred sweep pending
start_case deferred 30000
bounce sweep
wait_log "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 5 "$PW_MATCH_LINE"
wait_port_state Hca1 1 Active 2 || pw_fail "deferred: SM port is $PW_PORT_STATE after the first return"
link_step active "$DEV"
bounce defer
pw_log "plugin: ${PW_MATCH_TEXT#*portwatch: }"
mark=$(log_lines "$PW_OSM_LOG")
stop_case deferred
[ "$(counter sweeps)" = 1 ] || pw_fail "deferred: sweeps=$(counter sweeps), expected 1 (the deferred one must not fire)"
[ "$(counter coalesced)" = 1 ] || pw_fail "deferred: coalesced=$(counter coalesced), expected 1"
[ "$(count_log "$PW_OSM_LOG" 'portwatch: hold-off over' "$mark")" = 0 ] \
    || pw_fail "deferred: the deferred sweep fired during shutdown"

sim_stop
echo "SIGTERM -> exit: $(printf '%s; ' "${STOP_TIMES[@]}")"
pw_pass "clean exit with the plugin's stopped: summary when idle, right after a sweep request, and with a deferred sweep pending"
