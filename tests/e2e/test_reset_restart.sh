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
#   2. Resets again until the start limit: each run exits the same way,
#      but for the first, whose shutdown hangs for certain (the umad double's
#      PW_UMAD_HANG_ON_CLOSE): the kernel timer portwatch armed before asking
#      for the exit ends it with SIGKILL 5 s later (status 137), and the
#      supervisor restarts it (Restart=always) and counts the start like any
#      other; the start after StartLimitBurst starts is refused with systemd's
#      message; the metrics file keeps portwatch_mad_path_dead 1 (what an
#      alert sees when nothing brings the SM back).
# The reset where OpenSM's MAD path survives (no exit) is test_device_reset.
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-test_reset_restart}
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin
. "$(dirname "$0")/device_reset.sh"
dr_init

TEXTFILE=$PW_DIR/textfile
mkdir -p "$TEXTFILE"
METRICS=$TEXTFILE/portwatch-$PW_HCA1_PORT1_GUID.prom
EXIT_BOUND_S=15                   # device back -> opensm gone (check 2 s + a sweep; + 5 s hung)
GUID_RE=$PW_HCA1_PORT1_GUID

fabric_start mlx5 mlx5_0
osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0 \
    event_plugin_name=portwatch \
    "event_plugin_options=portwatch.holdoff_ms=100 portwatch.retry_max_ms=1000 portwatch.reset_check_ms=2000 portwatch.metrics_file=$TEXTFILE/portwatch-%g.prom"

start_args=("$PW_DIR/opensm.conf" "${DR_ENV[@]}")

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

# After dr_reset_dead: the path found dead, a clean exit, the gauge at 1.
expect_dead_exit() {   # WHAT
    dr_expect_dead_exit "$1" "$EXIT_BOUND_S"
    metrics_say 1 2
}

sup_init
sup_start "${start_args[@]}"
expect_up "start"
metrics_say 0 2

# ---- 1. one reset: exit, restart, ACTIVE again
pw_log "--- 1: mlx5_0 reset, OpenSM's umad file dead"
dr_reset_dead mlx5_0
expect_dead_exit "1"
exit_us=$PW_SUP_EXIT_US
# The restarted opensm's shutdown will hang (case 2's first reset).
sup_restart "${start_args[@]}" PW_UMAD_HANG_ON_CLOSE=1 || pw_fail "1: the supervisor refused the first restart: $PW_SUP_REFUSED"
expect_up "1: restarted"
up_us=$(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE")
pw_log "1: device back -> opensm exit $(pw_fmt_ms $(( exit_us - DR_BACK_US ))) ms -> SUBNET UP of the restarted opensm $(pw_fmt_ms $(( up_us - DR_BACK_US ))) ms (RestartSec=${PW_SUP_RESTART_SEC}s)"
metrics_say 0 5
[ "$(count_log "$PW_OSM_LOG" 'MAD path is dead')" = 0 ] || pw_fail "1: the restarted opensm's plugin calls its MAD path dead"

# ---- 2. resets until the start limit
pw_log "--- 2: resets until StartLimitBurst=$PW_SUP_BURST"
runs=${#PW_SUP_STARTS[@]}
DR_HANG=1   # this run's shutdown hangs: the kernel's timer ends it
while :; do
    dr_reset_dead mlx5_0
    expect_dead_exit "2 (run $PW_OSM_RUN)"
    [ "$DR_HANG" = 1 ] && killed_run=$PW_OSM_RUN
    DR_HANG=0
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
pw_log "2 ok: $runs starts (run $killed_run ended by the kernel's timer, restarted and counted like the others), then: $PW_SUP_REFUSED; the metrics file keeps portwatch_mad_path_dead 1"

sim_stop
pw_pass "a reset with OpenSM's MAD path dead: a clean exit, restarted by the supervisor, SM port Active; $runs starts, then the start limit"
