#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The shipped Prometheus rules (monitoring/portwatch.rules.yml) on a real
# Prometheus and Alertmanager: what on-call receives when the SM's link is
# held down, when it comes back, and when a device reset leaves OpenSM deaf.
#
# Set-up (alerting.sh, node_exporter.sh): Debian's prometheus-node-exporter
# (textfile collector only) on the directory of portwatch.metrics_file;
# Debian's prometheus scraping it and evaluating the rules every second;
# Debian's prometheus-alertmanager routing every group within a second to a
# webhook receiver the test runs (resolved notifications too); all on free
# loopback ports, started and stopped by the test. The rules are the shipped
# file with the 1-minute "for:" of PortwatchSMPortNotActive and of the two
# device reset alerts at 3 s; every other line as shipped (the unit tests,
# tests/monitoring, cover the shipped durations). Stock opensm on Hca1 of
# net.2sw2path4hca (sweep_interval 0), the verbs simulator with mlx5_0, the
# umad double preloaded (device_reset.sh) with PW_UMAD_HANG_ON_CLOSE=1, and
# portwatch.metrics_file=DIR/portwatch-%g.prom.
#
#   1. The SM's link held down (ibsim Unlink, the port DOWN): Alertmanager
#      sends PortwatchSMPortNotActive firing, severity critical, naming the
#      SM's port GUID and mlx5_0:1. The link back (ReLink, the SM's sweep,
#      the port ACTIVE): Alertmanager sends it resolved.
#   2. A reset of mlx5_0 that leaves OpenSM's umad file dead: portwatch asks
#      OpenSM to exit (on_device_reset=restart, the default); its shutdown
#      hangs and the kernel's timer ends it with SIGKILL; no supervisor
#      starts it again. The metrics file stays with portwatch_mad_path_dead 1
#      and Alertmanager sends PortwatchOpenSMNotRestartedAfterDeviceReset
#      firing, its description naming when the SIGKILL was due.
#   3. opensm started again (portwatch.on_device_reset=log), as its service
#      manager would: the file rewritten, Alertmanager sends that alert
#      resolved. The same reset again: opensm runs on, deaf, and Alertmanager
#      sends PortwatchOpenSMDeafAfterDeviceReset firing; opensm stopped on
#      purpose (SIGTERM): the file removed, the alert resolved.
# No other alert is sent, and PortwatchSMPortNotActive only for the link held
# down (not while the MAD path is dead: the device reset alerts say that).
# Every alert Alertmanager sent is printed. At the end the three servers are
# stopped and gone.
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-test_alerts}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/node_exporter.sh"
. "$(dirname "$0")/alerting.sh"
pw_init
pw_require_plugin
. "$(dirname "$0")/device_reset.sh"
dr_init

TEXTFILE_DIR=$PW_DIR/textfile
mkdir -p "$TEXTFILE_DIR"
GUID=$PW_HCA1_PORT1_GUID
METRICS=$TEXTFILE_DIR/portwatch-$GUID.prom
ALERT_BOUND_S=30    # a change in the file -> Alertmanager's webhook (about 6 s)

# The shipped rules with the 1-minute waits at 3 s.
RULES=$PW_DIR/portwatch.rules.yml
sed 's/^\(        for: \)1m$/\13s/' "$PW_SRCDIR/monitoring/portwatch.rules.yml" >"$RULES"
[ "$(grep -c '^        for: 3s$' "$RULES")" = 3 ] \
    || pw_fail "expected three alerts with 'for: 1m' in monitoring/portwatch.rules.yml"

pw_cleanup_hook() { al_stop; ne_stop; }
ne_start "$TEXTFILE_DIR"
al_start "$RULES"

fabric_start mlx5 mlx5_0
osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0 event_plugin_name=portwatch \
    "event_plugin_options=portwatch.holdoff_ms=100 portwatch.retry_max_ms=1000 portwatch.reset_check_ms=2000 portwatch.metrics_file=$TEXTFILE_DIR/portwatch-%g.prom"
osm_start_plugin "$PW_DIR/opensm.conf" "${DR_ENV[@]}" PW_UMAD_HANG_ON_CLOSE=1
osm_watching mlx5_0
wait_port_state Hca1 1 Active 5 || pw_fail "SM port is $PW_PORT_STATE after SUBNET UP"
link_step active mlx5_0
al_wait_series "portwatch_port_state_id{port_guid=\"$GUID\",device=\"mlx5_0\"} == 4" 15
[ "$(al_lines)" = 0 ] || { al_received | cut -f1-4; pw_fail "Alertmanager sent alerts before anything happened"; }

# Checks one received alert line: STATUS NAME SEVERITY, this SM's GUID.
expect_alert() {   # WHAT SEVERITY
    local status name severity guid summary
    IFS=$'\t' read -r status name severity guid summary _ <<<"$AL_MATCH"
    [ "$severity" = "$2" ] || pw_fail "$1: $name has severity '$severity', expected $2"
    [ "$guid" = "$GUID" ] || pw_fail "$1: $name names port_guid '$guid', expected $GUID"
    pw_log "$1: Alertmanager sent $status $name ($severity): $summary"
}

# ---- 1. the SM's link held down, then back.
pw_log "--- 1: the SM's link held down"
from=$(al_lines)
mark=$(log_lines "$PW_OSM_LOG")
link_step down mlx5_0
t_down=$(pw_now_us)
wait_log "$PW_OSM_LOG" "portwatch: mlx5_0:1 .*link lost" 5 "$mark"
al_wait firing PortwatchSMPortNotActive "$ALERT_BOUND_S" "$from"
t_fired=$(pw_now_us)
expect_alert "1" critical
[[ $AL_MATCH == *"SM port mlx5_0:1 on 127.0.0.1:$NE_PORT is not ACTIVE"* ]] \
    || pw_fail "1: the summary does not name the port and the instance: $AL_MATCH"
[[ $AL_MATCH == *"has been DOWN for over a minute"* ]] \
    || pw_fail "1: the description does not say DOWN: $AL_MATCH"
osm_alive || pw_fail "1: opensm exited while its link was down"
pw_log "1: link down -> firing in Alertmanager's webhook $(pw_fmt_ms $(( t_fired - t_down ))) ms (the test's for: 3s, scrape and evaluation every 1 s, group_wait 1 s)"

mark=$(log_lines "$PW_OSM_LOG")
link_step back mlx5_0
t_back=$(pw_now_us)
wait_log "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 5 "$mark"
wait_port_state Hca1 1 Active 5 || pw_fail "1: SM port is $PW_PORT_STATE after the sweep, expected Active"
link_step active mlx5_0
al_wait resolved PortwatchSMPortNotActive "$ALERT_BOUND_S" "$from"
t_resolved=$(pw_now_us)
expect_alert "1" critical
pw_log "1: link back -> resolved in Alertmanager's webhook $(pw_fmt_ms $(( t_resolved - t_back ))) ms"

# ---- 2. a device reset with OpenSM's MAD path dead; the exit hangs.
pw_log "--- 2: mlx5_0 reset, OpenSM's umad file dead, its shutdown hangs"
from=$(al_lines)
DR_HANG=1
dr_reset_dead mlx5_0
dr_expect_dead_exit "2" 20
[ -e "$METRICS" ] || pw_fail "2: the metrics file is gone after opensm was killed"
grep -q "^portwatch_mad_path_dead{port_guid=\"$GUID\"} 1$" "$METRICS" \
    || pw_fail "2: the metrics file does not say portwatch_mad_path_dead 1: $(grep mad_path "$METRICS")"
al_wait firing PortwatchOpenSMNotRestartedAfterDeviceReset "$ALERT_BOUND_S" "$from"
expect_alert "2" critical
kill_at=$(sed -n "s/^portwatch_exit_kill_timestamp_seconds{port_guid=\"$GUID\"} \([0-9.]*\)$/\1/p" "$METRICS")
kill_utc=$(date -u -d "@${kill_at%.*}" '+%Y-%m-%d %H:%M:%S')
[[ $AL_MATCH == *"ends it with SIGKILL at $kill_utc"* ]] \
    || pw_fail "2: the description does not name the SIGKILL's time ($kill_utc): $AL_MATCH"

# ---- 3. opensm started again, then the same reset with on_device_reset=log.
pw_log "--- 3: opensm started again (portwatch.on_device_reset=log), then the same reset"
from=$(al_lines)
osm_make_conf "$PW_DIR/opensm-log.conf" sweep_interval=0 event_plugin_name=portwatch \
    "event_plugin_options=portwatch.holdoff_ms=100 portwatch.retry_max_ms=1000 portwatch.reset_check_ms=2000 portwatch.on_device_reset=log portwatch.metrics_file=$TEXTFILE_DIR/portwatch-%g.prom"
osm_start_plugin "$PW_DIR/opensm-log.conf" "${DR_ENV[@]}"
osm_watching mlx5_0
wait_port_state Hca1 1 Active 5 || pw_fail "3: SM port is $PW_PORT_STATE after SUBNET UP"
link_step active mlx5_0
al_wait resolved PortwatchOpenSMNotRestartedAfterDeviceReset "$ALERT_BOUND_S" "$from"
expect_alert "3" critical
dr_reset_dead mlx5_0
wait_log "$PW_OSM_LOG" "portwatch: ERROR: OpenSM's MAD path is dead since the reset of mlx5_0 .*restart opensm \\(portwatch.on_device_reset=log\\)" 10 "$DR_MARK"
al_wait firing PortwatchOpenSMDeafAfterDeviceReset "$ALERT_BOUND_S" "$from"
expect_alert "3" critical
osm_alive || pw_fail "3: opensm exited with portwatch.on_device_reset=log"
# A planned stop: the file removed, the alert resolved.
osm_stop_clean
[ ! -e "$METRICS" ] || pw_fail "3: the metrics file is still there after opensm stopped"
al_wait resolved PortwatchOpenSMDeafAfterDeviceReset "$ALERT_BOUND_S" "$from"
expect_alert "3" critical

# ---- what Alertmanager received, all of it.
pw_log "--- the alerts Alertmanager sent (status, alertname, severity, port_guid, summary):"
al_received | cut -f1-5 | sed 's/^/    /'
others=$(al_received | cut -f2 | grep -v -x -e PortwatchSMPortNotActive \
    -e PortwatchOpenSMNotRestartedAfterDeviceReset -e PortwatchOpenSMDeafAfterDeviceReset || true)
[ -z "$others" ] || pw_fail "Alertmanager sent alerts that should not fire: $(sort -u <<<"$others" | tr '\n' ' ')"
n=$(al_received | awk -F'\t' '$1 == "firing" && $2 == "PortwatchSMPortNotActive"' | wc -l)
[ "$n" = 1 ] || pw_fail "PortwatchSMPortNotActive fired $n times, expected once (the link held down)"
al_received | awk -F'\t' '$1 == "firing" && !seen[$2]++ { print "description of " $2 ": " $6 }' | sed 's/^/    /'

# ---- nothing left running.
pids="$AL_PROM_PID $AL_AM_PID $AL_HOOK_PID $NE_PID"
al_stop
ne_stop
for pid in $pids; do
    ! kill -0 "$pid" 2>/dev/null || pw_fail "process $pid still runs after the test stopped it"
done
sim_stop
pw_pass "the SM's link held down raised PortwatchSMPortNotActive in Alertmanager and its return resolved it; a device reset with OpenSM's MAD path dead raised PortwatchOpenSMNotRestartedAfterDeviceReset (opensm killed, not restarted; resolved by the next opensm) and, with on_device_reset=log, PortwatchOpenSMDeafAfterDeviceReset (resolved by the planned stop)"
