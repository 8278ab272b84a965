#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# A device reset that leaves OpenSM's MAD path dead, as on a real host, ends
# with a working SM again: portwatch finds the path dead, OpenSM exits
# cleanly, a supervisor restarts it the way systemd applies the shipped
# drop-in (systemd/portwatch-restart.conf), and the SM port is ACTIVE again.
# Repeated resets stop at the drop-in's start limit.
#
# Set-up: net.2sw2path4hca, stock opensm on Hca1 (sweep_interval 0) with the
# plugin (portwatch.reset_check_ms=2000, a metrics file), the verbs simulator
# with mlx5_0 for Hca1, and libumadfault.so preloaded ahead of umad2sim: when
# the test touches PW_UMAD_DEAD_FILE, the umad files OpenSM holds fail every
# read and write with EIO, as the kernel's do after the device's reset (a
# restarted opensm opens live ones). A reset is: ibsim Unlink, mlx5_0 removed,
# OpenSM's umad file dead; then ReLink and mlx5_0 back at INIT.
#
#   1. One reset: OpenSM's log has "ERR 5404" (its receiver failing), the
#      plugin one SYS ERROR line naming mlx5_0 and the port GUID; opensm
#      exits with status 0 on its own, its last portwatch line is "stopped:
#      ... mad_path_dead=1"; the metrics file says portwatch_mad_path_dead 1.
#      The supervisor starts opensm again after RestartSec: SUBNET UP, the
#      SM port ACTIVE, the metrics file back at 0. Printed: the device's
#      return -> exit -> SUBNET UP of the new opensm.
#   2. Resets again until the start limit: each run exits the same way;
#      the start after StartLimitBurst starts is refused with systemd's
#      message; the metrics file keeps portwatch_mad_path_dead 1 (what an
#      alert sees when nothing brings the SM back).
# The reset where OpenSM's MAD path survives (no exit) is test_device_reset.
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-test_reset_restart}
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin
UMAD_FAULT=$PW_BUILDDIR/tests/umad_fault/.libs/libumadfault.so
pw_need_file "$UMAD_FAULT" "build the umad test double first (make check builds it)"

DEAD=$PW_DIR/umad-reset           # touched: OpenSM's umad files die
TEXTFILE=$PW_DIR/textfile
mkdir -p "$TEXTFILE"
METRICS=$TEXTFILE/portwatch-$PW_HCA1_PORT1_GUID.prom
EXIT_BOUND_S=15                   # device back -> opensm gone (check 2 s + a sweep)
GUID_RE=$PW_HCA1_PORT1_GUID

fabric_start mlx5 mlx5_0
osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0 \
    event_plugin_name=portwatch \
    "event_plugin_options=portwatch.holdoff_ms=100 portwatch.retry_max_ms=1000 portwatch.reset_check_ms=2000 portwatch.metrics_file=$TEXTFILE/portwatch-%g.prom"

start_args=("$PW_DIR/opensm.conf" LD_PRELOAD_FIRST="$UMAD_FAULT" PW_UMAD_DEAD_FILE="$DEAD")

# The metrics file says portwatch_mad_path_dead V (after the instance label).
metrics_say() {   # VALUE BOUND_S
    local i
    for (( i = 0; i < $2 * 100; i++ )); do
        grep -qE "^portwatch_mad_path_dead\{port_guid=\"$GUID_RE\"\} $1\$" "$METRICS" 2>/dev/null && return 0
        pw_sleep 0.01
    done
    echo "---- $METRICS:"; cat "$METRICS" 2>/dev/null || echo "(none)"
    pw_fail "the metrics file does not say portwatch_mad_path_dead $1 within $2 s"
}

# A running opensm brought its port up: watching, SUBNET UP, SM port Active.
expect_up() {   # WHAT
    osm_watching mlx5_0
    wait_port_state Hca1 1 Active 10 || pw_fail "$1: SM port is $PW_PORT_STATE, expected Active"
}

# The reset of mlx5_0 with OpenSM's MAD path gone with it; sets BACK_US
# (the device's return) and MARK (the log line before it).
reset_dead() {
    MARK=$(log_lines "$PW_OSM_LOG")
    fabric_link down
    vsimctl remove mlx5_0
    touch "$DEAD"
    wait_log "$PW_OSM_LOG" 'portwatch: verbs device mlx5_0 failed' 5 "$MARK"
    pw_sleep 0.5   # the device stays away a moment, as a reset does
    fabric_link back
    vsimctl add mlx5_0 node_guid="$PW_HCA1_NODE_GUID" style=mlx5 state=init
    BACK_US=$PW_VSIM_T_US
}

# After reset_dead: the plugin finds the path dead, opensm exits cleanly.
expect_dead_exit() {   # WHAT
    local log=$PW_OSM_LOG
    wait_log "$log" "portwatch: ERROR: OpenSM's MAD path is dead since the reset of mlx5_0 \(port GUID $GUID_RE\): no SMP received in [0-9]+ ms" "$EXIT_BOUND_S" "$MARK"
    pw_log "$1: ${PW_MATCH_TEXT#*portwatch: }"
    case $PW_MATCH_TEXT in
        *"Asking OpenSM to exit so that its service manager starts it again (portwatch.on_device_reset=restart)"*) ;;
        *) pw_fail "$1: the line does not say what portwatch does: $PW_MATCH_TEXT" ;;
    esac
    sup_wait_exit "$EXIT_BOUND_S"
    [ "$PW_OSM_RC" = 0 ] || pw_fail "$1: opensm exit status $PW_OSM_RC, expected 0 (a clean exit)"
    pw_log "$1: opensm exited $(pw_fmt_ms $(( PW_SUP_EXIT_US - BACK_US ))) ms after mlx5_0 came back"
    [ "$(count_log "$log" 'ERR 5404: recv error on MAD sized umad' "$MARK")" -gt 0 ] \
        || pw_fail "$1: no ERR 5404 in OpenSM's log: its umad file did not die (the test double is not in effect)"
    [ "$(count_log "$log" 'portwatch: .*MAD path is dead' "$MARK")" = 1 ] \
        || pw_fail "$1: the dead path was not said exactly once"
    grep -qE 'portwatch: stopped: .* mad_path_dead=1$' "$log" \
        || pw_fail "$1: no 'stopped: ... mad_path_dead=1' line: opensm did not shut down through its exit path"
    metrics_say 1 2
}

sup_init
sup_start "${start_args[@]}"
expect_up "start"
metrics_say 0 2

# ---- 1. one reset: exit, restart, ACTIVE again
pw_log "--- 1: mlx5_0 reset, OpenSM's umad file dead"
reset_dead
expect_dead_exit "1"
exit_us=$PW_SUP_EXIT_US
sup_restart "${start_args[@]}" || pw_fail "1: the supervisor refused the first restart: $PW_SUP_REFUSED"
expect_up "1: restarted"
up_us=$(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE")
pw_log "1: device back -> opensm exit $(pw_fmt_ms $(( exit_us - BACK_US ))) ms -> SUBNET UP of the restarted opensm $(pw_fmt_ms $(( up_us - BACK_US ))) ms (RestartSec=${PW_SUP_RESTART_SEC}s)"
metrics_say 0 5
[ "$(count_log "$PW_OSM_LOG" 'MAD path is dead')" = 0 ] || pw_fail "1: the restarted opensm's plugin calls its MAD path dead"

# ---- 2. resets until the start limit
pw_log "--- 2: resets until StartLimitBurst=$PW_SUP_BURST"
runs=${#PW_SUP_STARTS[@]}
while :; do
    reset_dead
    expect_dead_exit "2 (run $PW_OSM_RUN)"
    if ! sup_restart "${start_args[@]}"; then
        break
    fi
    runs=${#PW_SUP_STARTS[@]}
    expect_up "2: run $PW_OSM_RUN"
    [ "$runs" -le "$PW_SUP_BURST" ] || pw_fail "2: $runs starts, more than StartLimitBurst=$PW_SUP_BURST"
done
[ "$runs" = "$PW_SUP_BURST" ] || pw_fail "2: the limit refused start $(( runs + 1 )), expected start $(( PW_SUP_BURST + 1 ))"
case $PW_SUP_REFUSED in
    *"Start request repeated too quickly"*) ;;
    *) pw_fail "2: no start-limit message" ;;
esac
osm_alive && pw_fail "2: opensm still runs after the refused start"
metrics_say 1 1
pw_log "2 ok: $runs starts, then: $PW_SUP_REFUSED; the metrics file keeps portwatch_mad_path_dead 1"

sim_stop
pw_pass "a reset with OpenSM's MAD path dead: a clean exit, restarted by the supervisor, SM port Active; $runs starts, then the start limit"
