#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The reset of OpenSM's own verbs device on a two-device host, inside stock
# opensm: a dual-port card is two verbs devices (mlx5_0 carries the SM's
# port, mlx5_1 the card's other port), and firmware recovery or a devlink
# reload takes one away and brings it back. Each scenario ends only when the
# SM port (Hca1 port 1, read with smpquery) is ACTIVE again: judged by the
# outcome, not by the events.
#
# Set-up: net.2sw2path4hca, stock opensm on Hca1 with sweep_interval 0 (no
# timer sweep: only the plugin can bring the port back), event_plugin_name
# portwatch with portwatch.holdoff_ms=100 portwatch.retry_max_ms=1000
# portwatch.verify_ms=2000 portwatch.reset_check_ms=2000, the verbs simulator preloaded with mlx5_0 (Hca1's
# node and port GUIDs) and mlx5_1 (another node, port ACTIVE).
#
# A device reset takes the link down with it: ibsim Unlink "Hca1"[1] goes
# with the device's removal, ReLink with its return (port at INIT).
#
# Scenarios, in one opensm run:
#   1. mlx5_0 removed while mlx5_1 stays open, back 1.5 s later with its
#      port at INIT: reopened, a heavy sweep, the SM port ACTIVE.
#   2. mlx5_0 removed and back as mlx5_3 (same port GUID, INIT): "back as",
#      a heavy sweep, the SM port ACTIVE.
#   3. OpenSM's device opens but fails every query, after DEVICE_FATAL:
#      reopen attempts stay bounded by retry_max_ms (at most 8 in 3 s), then
#      the fault clears and the port is watched again.
#   4. The port at INIT on the HCA's side (the SM has swept but the HCA's
#      view trails), then the cable moved: DOWN and INIT again, both events
#      read late (the first read delayed 800 ms), so both re-queries read
#      INIT: no link change seen. The outcome check (verify_ms after the
#      sweep's SUBNET UP) finds the port INIT and sweeps again; the SM port
#      ends ACTIVE.
# Each scenario: opensm still running, no sweep requested while the port
# was ACTIVE and quiet. After each return of mlx5_0 portwatch checks
# OpenSM's MAD path: under ibsim it survives the reset of the verbs device
# (umad2sim), so OpenSM's own count of SMPs received moves and the check
# says "works": no exit, never a "MAD path is dead" line. At the end SIGTERM -> exit status 0.
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-test_device_reset}
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin

OTHER_NODE_GUID=0x0002c90300009900   # mlx5_1: the card's other device
RE_SWEEP='portwatch: .*\[action=sweep\]'
ACTIVE_BOUND_S=10                    # device back -> SM port ACTIVE (retry 1 s + sweep)

# The portwatch lines after line $1 (for failure messages).
show_after() {
    echo "---- portwatch lines since line $1:"
    grep_log "$PW_OSM_LOG" 'portwatch: ' "$1" | tail -n 25
}

scenario_fail() {   # MARK MESSAGE
    show_after "$1"
    pw_fail "$2"
}

# The SM port ACTIVE in the fabric, then the HCA's view made to match (as
# the hardware reports it: PORT_ACTIVE), so the plugin sees it settle.
expect_active() {   # MARK DEVICE WHAT
    wait_port_state Hca1 1 Active "$ACTIVE_BOUND_S" \
        || scenario_fail "$1" "$3: SM port is $PW_PORT_STATE ${ACTIVE_BOUND_S} s later, expected Active"
    link_step active "$2"
    wait_log "$PW_OSM_LOG" "portwatch: $2:1 is ACTIVE again" 5 "$1"
    osm_alive || pw_fail "$3: opensm is gone"
}

# A removal that takes the link with it.
reset_away() {   # DEVICE
    fabric_link down
    vsimctl remove "$1"
}

fabric_start mlx5 mlx5_0
cat >>"$PW_VSIM_CONFIG" <<EOF
add mlx5_1 node_guid=$OTHER_NODE_GUID style=mlx5 state=active
EOF
osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0 \
    event_plugin_name=portwatch \
    "event_plugin_options=portwatch.holdoff_ms=100 portwatch.retry_max_ms=1000 portwatch.verify_ms=2000 portwatch.reset_check_ms=2000"
osm_start_plugin "$PW_DIR/opensm.conf"
wait_log "$PW_OSM_LOG" 'portwatch: watching mlx5_0:1 ' 5
vsimctl wait-open mlx5_0
vsimctl wait-open mlx5_1
osm_wait_up 10
wait_port_state Hca1 1 Active 5 || pw_fail "SM port is $PW_PORT_STATE after SUBNET UP"
[ "$(count_log "$PW_OSM_LOG" 'portwatch: ERROR|cannot load plugin')" = 0 ] \
    || pw_fail "plugin reported an error at start-up"

# ---- 1. OpenSM's device reset beside another device
pw_log "--- 1: mlx5_0 removed beside mlx5_1, back 1.5 s later at INIT"
mark=$(log_lines "$PW_OSM_LOG")
reset_away mlx5_0
wait_log "$PW_OSM_LOG" 'portwatch: verbs device mlx5_0 failed' 5 "$mark"
vsimctl wait-closed mlx5_0
pw_sleep 1.5
vsimctl stats mlx5_1
case $PW_VSIM_REPLY in *" open_contexts=1 "*) ;; *) scenario_fail "$mark" "1: mlx5_1 was closed: $PW_VSIM_REPLY" ;; esac
fabric_link back
back=$(log_lines "$PW_OSM_LOG")
vsimctl add mlx5_0 node_guid="$PW_HCA1_NODE_GUID" style=mlx5 state=init
wait_log_soft "$PW_OSM_LOG" 'portwatch: mlx5_0:1 .*\(device opened\): link back.*\[action=sweep\]' 5 "$back" \
    || scenario_fail "$mark" "1: no sweep within 5 s of mlx5_0's return (retry_max_ms=1000)"
pw_log "1: ${PW_MATCH_TEXT#*portwatch: }"
wait_log "$PW_OSM_LOG" "$PW_RE_HEAVY" 5 "$back"
expect_active "$mark" mlx5_0 "1"
wait_log_soft "$PW_OSM_LOG" "portwatch: OpenSM's MAD path works after the reset of mlx5_0: [1-9][0-9]* SMPs received" 6 "$back" \
    || scenario_fail "$mark" "1: no verdict on OpenSM's MAD path within 6 s (reset_check_ms=2000)"
pw_log "1: ${PW_MATCH_TEXT#*portwatch: }"
pw_log "1 ok: reopened, swept, SM port Active, OpenSM's MAD path works"

# ---- 2. back under another name
pw_log "--- 2: mlx5_0 removed, back as mlx5_3"
mark=$(log_lines "$PW_OSM_LOG")
reset_away mlx5_0
vsimctl wait-closed mlx5_0
pw_sleep 0.5
fabric_link back
back=$(log_lines "$PW_OSM_LOG")
vsimctl add mlx5_3 node_guid="$PW_HCA1_NODE_GUID" style=mlx5 state=init
wait_log_soft "$PW_OSM_LOG" 'portwatch: verbs device mlx5_0 is back as mlx5_3' 5 "$back" \
    || scenario_fail "$mark" "2: mlx5_3 not recognised as mlx5_0 back"
wait_log_soft "$PW_OSM_LOG" 'portwatch: mlx5_3:1 .*link back.*\[action=sweep\]' 5 "$back" \
    || scenario_fail "$mark" "2: no sweep for the return as mlx5_3"
pw_log "2: ${PW_MATCH_TEXT#*portwatch: }"
wait_log "$PW_OSM_LOG" "$PW_RE_HEAVY" 5 "$back"
expect_active "$mark" mlx5_3 "2"
wait_log_soft "$PW_OSM_LOG" "portwatch: OpenSM's MAD path works after the reset of mlx5_3" 6 "$back" \
    || scenario_fail "$mark" "2: no verdict on OpenSM's MAD path within 6 s"
pw_log "2 ok: back as mlx5_3, swept, SM port Active"
DEV=mlx5_3

# ---- 3. a device that opens but fails every query: bounded reopening
pw_log "--- 3: $DEV fails every query after DEVICE_FATAL"
mark=$(log_lines "$PW_OSM_LOG")
vsimctl stats "$DEV"
opens0=$(sed -n 's/.* opens=\([0-9]*\).*/\1/p' <<<"$PW_VSIM_REPLY")
vsimctl fail query_port errno=EIO count=1000000
vsimctl fatal "$DEV"
wait_log "$PW_OSM_LOG" "portwatch: verbs device $DEV failed" 5 "$mark"
pw_sleep 3   # the window over which reopen attempts are counted
vsimctl stats "$DEV"
opens=$(( $(sed -n 's/.* opens=\([0-9]*\).*/\1/p' <<<"$PW_VSIM_REPLY") - opens0 ))
pw_log "3: $opens reopen attempts in 3 s (retry_max_ms=1000)"
[ "$opens" -ge 2 ] || scenario_fail "$mark" "3: only $opens reopen attempts in 3 s: the device is not retried"
[ "$opens" -le 8 ] || scenario_fail "$mark" "3: $opens reopen attempts in 3 s: retry_max_ms not honoured"
errs=$(count_log "$PW_OSM_LOG" 'portwatch: ERROR' "$mark")
[ "$errs" -le 8 ] || scenario_fail "$mark" "3: $errs ERROR lines in 3 s"
osm_alive || pw_fail "3: opensm is gone"
healed=$(log_lines "$PW_OSM_LOG")
vsimctl fail query_port count=0
wait_log_soft "$PW_OSM_LOG" "portwatch: watching $DEV:1 " 5 "$healed" \
    || scenario_fail "$mark" "3: $DEV not watched again within 5 s of the fault clearing"
vsimctl wait-open "$DEV"
wait_port_state Hca1 1 Active 2 || scenario_fail "$mark" "3: SM port is $PW_PORT_STATE"
pw_log "3 ok: bounded reopening, watched again"

# ---- 4. events read late hide a return; the outcome check catches it
pw_log "--- 4: INIT, then DOWN and INIT read late"
mark=$(log_lines "$PW_OSM_LOG")
link_step down "$DEV"
wait_log "$PW_OSM_LOG" "portwatch: $DEV:1 ACTIVE -> DOWN" 5 "$mark"
link_step back "$DEV"
wait_log "$PW_OSM_LOG" "portwatch: $DEV:1 DOWN -> INIT .*\[action=sweep\]" 5 "$mark"
wait_log "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 5 "$mark"
# The SM has swept; the HCA still reads INIT (its view trails). Now the
# cable moves, and both of its events are read late.
moved=$(log_lines "$PW_OSM_LOG")
vsimctl delay get_async_event ms=800 count=1
link_step down "$DEV"
link_step back "$DEV"
wait_port_state Hca1 1 Initialize 2 || scenario_fail "$mark" "4: SM port is $PW_PORT_STATE after the move, expected Initialize"
wait_log "$PW_OSM_LOG" "portwatch: $DEV:1 INIT -> INIT .*no change" 5 "$moved"
wait_log_soft "$PW_OSM_LOG" "portwatch: $DEV:1 is INIT [0-9]+ ms after the heavy sweep: heavy sweep requested again" 10 "$moved" \
    || scenario_fail "$mark" "4: the outcome check did not sweep again"
pw_log "4: ${PW_MATCH_TEXT#*portwatch: }"
expect_active "$mark" "$DEV" "4"
pw_log "4 ok: the outcome check brought the SM port back"

# ---- quiet: with the port ACTIVE nothing more is swept
quiet=$(log_lines "$PW_OSM_LOG")
pw_sleep 1
n=$(count_log "$PW_OSM_LOG" "$RE_SWEEP" "$quiet")
[ "$n" = 0 ] || scenario_fail "$quiet" "$n sweeps requested with the port ACTIVE and quiet"

n=$(count_log "$PW_OSM_LOG" 'portwatch: .*MAD path is dead')
[ "$n" = 0 ] || pw_fail "$n 'MAD path is dead' lines, though OpenSM's MADs survive resets here"
osm_stop_clean 5
wait_log "$PW_OSM_LOG" 'portwatch: stopped: .* mad_path_dead=0' 1
pw_log "plugin: ${PW_MATCH_TEXT#*portwatch: }"
sim_stop
pw_pass "OpenSM's device reset beside another, back under another name, failing queries, late events: SM port Active each time"
