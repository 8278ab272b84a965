#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# A device reset of the master SM in a two-SM fabric: the master (Hca1, stock
# opensm with portwatch, sm_priority 15) loses its MAD path with its device;
# the standby (Hca2, stock opensm without the plugin, sm_priority 1) takes
# over as OpenSM's polling says; portwatch has the deaf master exit, a
# supervisor playing the shipped systemd drop-in starts it again, and the
# restarted master, of higher priority, becomes master again as OpenSM's
# rules say (the standby hands over), the standby goes back to STANDBY.
#
# Both: sweep_interval 2, sminfo_polling_timeout 1000, polling_retry_number 2
# (OpenSM's own handover bound: the standby takes over once its polls of the
# master went unanswered that long, then sweeps). The master: portwatch with
# portwatch.reset_check_ms=2000, the verbs simulator with mlx5_0, and
# libumadfault.so (tests/e2e/device_reset.sh); the standby libumadfault.so
# too, for the kernel's send timeouts umad2sim lacks (its requests to the
# deaf master would otherwise wait for ever).
#
# Asserts and prints: the fabric is without a master SM only from the reset
# until the standby's takeover (no longer than OpenSM's polling bound plus a
# sweep); the master exits with status 0 and is started again; at the end
# Hca1 is MASTER, Hca2 STANDBY and Hca1's port (the SM port) Active; neither
# opensm crashed (both exit 0 on SIGTERM).
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-test_reset_standby}
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin
. "$(dirname "$0")/device_reset.sh"
dr_init

POLL_MS=1000
POLL_RETRIES=2
# OpenSM's own takeover: the polls unanswered (timeout x (retries + 1)),
# then DISCOVERING and a heavy sweep; 3 s on top for the sweep and the
# harness on a loaded machine.
TAKEOVER_BOUND_S=$(( POLL_MS * (POLL_RETRIES + 1) / 1000 + 3 ))
EXIT_BOUND_S=15
RE_MASTER='Entering MASTER state'
RE_STANDBY='Entering STANDBY state'

pw_cleanup_hook() { osm_slots_stop; }

fabric_start mlx5 mlx5_0
common=(sweep_interval=2 "sminfo_polling_timeout=$POLL_MS" "polling_retry_number=$POLL_RETRIES")
osm_make_conf "$PW_DIR/master.conf" "${common[@]}" sm_priority=15 \
    event_plugin_name=portwatch \
    "event_plugin_options=portwatch.holdoff_ms=100 portwatch.retry_max_ms=1000 portwatch.reset_check_ms=2000"
osm_make_conf "$PW_DIR/standby.conf" "${common[@]}" sm_priority=1
master_args=("$PW_DIR/master.conf" "${DR_ENV[@]}")

# ---- the master, then the standby
sup_init
sup_start "${master_args[@]}"
osm_watching mlx5_0
wait_log "$PW_OSM_LOG" "$RE_MASTER" 5
wait_port_state Hca1 1 Active 5 || pw_fail "the master's port is $PW_PORT_STATE"
osm_slot_save M
PW_OSM_PID='' PW_OSM_WRAP_PID=''
PW_OSM_HOST=Hca2
# libumadfault.so for its send timeouts; in a sanitizer build it is
# instrumented, so the runtime comes first (as osm_start_plugin does it).
PW_OSM_SANITIZE=${PW_SANITIZER_PRELOAD:+1}
osm_start "$PW_DIR/standby.conf" LD_PRELOAD_FIRST="$DR_UMAD_FAULT"
PW_OSM_SANITIZE=
wait_log "$PW_OSM_LOG" "$RE_STANDBY" 10
pw_log "Hca2: STANDBY"
osm_slot_save S

# ---- the master's device reset, its MAD path gone
osm_slot_use M
pw_log "--- the master's mlx5_0 reset, OpenSM's umad file dead"
reset_us=$(pw_now_us)
dr_reset_dead mlx5_0
# The standby notices by its polls and takes over.
standby_log=$(osm_slot_get S PW_OSM_LOG)
mark_s=0
wait_log_soft "$standby_log" "$RE_MASTER" "$TAKEOVER_BOUND_S" "$mark_s" \
    || pw_fail "the standby did not take over within ${TAKEOVER_BOUND_S} s of the reset (OpenSM's polling bound: ${POLL_MS} ms x $(( POLL_RETRIES + 1 )))"
takeover_us=$(log_line_us "$standby_log" "$PW_MATCH_LINE")
mark_s=$PW_MATCH_LINE
wait_log "$standby_log" "$PW_RE_SUBNET_UP" 10 "$mark_s"
standby_up_us=$(log_line_us "$standby_log" "$PW_MATCH_LINE")
pw_log "Hca2 MASTER $(pw_fmt_ms $(( takeover_us - reset_us ))) ms after the reset, SUBNET UP at $(pw_fmt_ms $(( standby_up_us - reset_us ))) ms"
# The deaf master: found dead, exits, is started again.
dr_expect_dead_exit "master" "$EXIT_BOUND_S"
exit_us=$PW_SUP_EXIT_US
sup_restart "${master_args[@]}" || pw_fail "the supervisor refused to restart the master: $PW_SUP_REFUSED"
restart_us=$(pw_now_us)
wait_log "$PW_OSM_LOG" 'portwatch: watching mlx5_0:1' 5
# Higher priority: the running master (Hca2) hands over at its next sweep.
wait_log "$PW_OSM_LOG" "$RE_MASTER" 20
master_again_us=$(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE")
wait_log_soft "$standby_log" "$RE_STANDBY" 10 "$mark_s" \
    || pw_fail "Hca2 did not go back to STANDBY after the restarted master took over"
standby_again_us=$(log_line_us "$standby_log" "$PW_MATCH_LINE")
wait_port_state Hca1 1 Active 10 || pw_fail "the restarted master's port is $PW_PORT_STATE"
[ "$(count_log "$PW_OSM_LOG" "$RE_STANDBY")" -gt 0 ] && how="STANDBY first, then handed over" || how="MASTER directly"
pw_log "restarted master (Hca1): $how; MASTER $(pw_fmt_ms $(( master_again_us - restart_us ))) ms after its start; Hca2 STANDBY again at $(pw_fmt_ms $(( standby_again_us - restart_us ))) ms"
pw_log "timeline from the reset: Hca2 master $(pw_fmt_ms $(( takeover_us - reset_us ))) ms, deaf Hca1 exited $(pw_fmt_ms $(( exit_us - reset_us ))) ms, Hca1 restarted $(pw_fmt_ms $(( restart_us - reset_us ))) ms, Hca1 master again $(pw_fmt_ms $(( master_again_us - reset_us ))) ms"
# No second takeover fight: the standby stays standby for a few sweeps.
osm_slot_save M
quiet=$(log_lines "$standby_log")
pw_sleep 3
[ "$(count_log "$standby_log" "$RE_MASTER" "$quiet")" = 0 ] || pw_fail "Hca2 became master again after the handover"

for t in S M; do
    osm_slot_use "$t"
    osm_stop_clean 5
    osm_slot_save "$t"
done
sim_stop
pw_pass "two SMs: the master's device reset killed its MAD path; the standby took over in $(pw_fmt_ms $(( takeover_us - reset_us ))) ms, the restarted master took mastership back by priority, SM port Active"
