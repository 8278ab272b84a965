#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The metrics file with the real parts: Debian's prometheus-node-exporter
# serves portwatch.metrics_file through its textfile collector while the SM's
# link bounces inside stock opensm, and promtool (Debian's prometheus)
# accepts the file.
#
# Set-up: net.2sw2path4hca, stock opensm on Hca1 with sweep_interval 0, the
# verbs simulator (mlx5), event_plugin_options "portwatch.holdoff_ms=100
# portwatch.metrics_file=DIR/portwatch.prom"; prometheus-node-exporter with
# only the textfile collector, on DIR, listening on a free loopback port.
#
# Asserts: node_exporter reads the file without error
# (node_textfile_scrape_error 0) and shows the port ACTIVE (state 4) with
# portwatch_info naming mlx5_0 port 1, every sample labelled with the SM's
# port_guid; after one bounce (ibsim Unlink, then
# ReLink, mirrored in the simulator) /metrics shows link_lost and link_back
# transitions, a requested sweep, one subnet_up observation in the reaction
# histogram, a link-back timestamp and the port ACTIVE again; the file is
# mode 0644; `promtool check metrics` accepts it; the file is gone once
# opensm has stopped.
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-test_metrics}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/node_exporter.sh"
pw_init
pw_require_plugin
pw_need_cmd promtool prometheus

TEXTFILE_DIR=$PW_DIR/textfile
PROM=$TEXTFILE_DIR/portwatch.prom
mkdir -p "$TEXTFILE_DIR"
pw_cleanup_hook() { ne_stop; }
ne_start "$TEXTFILE_DIR"

# ---- opensm with the plugin writing the file.
fabric_start mlx5
dev=$PW_VSIM_DEV
osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0 event_plugin_name=portwatch \
    "event_plugin_options=portwatch.holdoff_ms=100 portwatch.metrics_file=$PROM"
osm_start_plugin "$PW_DIR/opensm.conf"
osm_watching "$dev"
wait_port_state Hca1 1 Active 2 || pw_fail "SM port is $PW_PORT_STATE after SUBNET UP"

STATE="portwatch_port_state_id{device=\"$dev\",port=\"1\"}"
ne_wait "$STATE" 'v == 4' 5
[ "$(ne_value node_textfile_scrape_error)" = 0 ] \
    || pw_fail "node_exporter could not read the file: node_textfile_scrape_error $(ne_value node_textfile_scrape_error)"
grep -q "^portwatch_info{.*device=\"$dev\".*port=\"1\".*} 1$" <<<"$NE_SCRAPE" \
    || pw_fail "no portwatch_info naming $dev port 1 in /metrics: $(grep '^portwatch_info' <<<"$NE_SCRAPE")"
[ "$(stat -c %a "$PROM")" = 644 ] || pw_fail "metrics file mode $(stat -c %a "$PROM"), expected 644"
unnamed=$(grep '^portwatch_' <<<"$NE_SCRAPE" | grep -cv 'port_guid="0x[0-9a-f]\{16\}"' || true)
[ "$unnamed" = 0 ] || pw_fail "$unnamed portwatch samples without the instance's port_guid label"
pw_log "before the bounce: $(grep '^portwatch_info' <<<"$NE_SCRAPE")"

# ---- one bounce, in real hardware order, mirrored in the simulator.
mark=$(log_lines "$PW_OSM_LOG")
link_step down "$dev"
wait_log "$PW_OSM_LOG" "portwatch: $dev:1 .*link lost" 5 "$mark"
ne_wait "$STATE" 'v == 1' 5
pw_sleep 0.3
mark=$(log_lines "$PW_OSM_LOG")
link_step back "$dev"
wait_log "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 5 "$mark"
wait_port_state Hca1 1 Active 5 || pw_fail "SM port is $PW_PORT_STATE after the sweep, expected Active"
link_step active "$dev"

ne_wait "$STATE" 'v == 4' 5
ne_wait 'portwatch_reaction_seconds_count{stage="subnet_up"}' 'v >= 1' 5
ne_wait 'portwatch_transitions_total{kind="link_lost"}' 'v == 1' 1
ne_wait 'portwatch_transitions_total{kind="link_back"}' 'v == 1' 1
ne_wait 'portwatch_sweeps_requested_total' 'v >= 1' 1
ne_wait 'portwatch_events_total' 'v >= 2' 1
ne_wait 'portwatch_last_link_back_timestamp_seconds' 'v > 1000000000' 1
ne_wait 'portwatch_last_recovery_seconds' 'v > 0 && v < 60' 1
ne_wait 'portwatch_sm_state' 'v == 3' 1
pw_log "after the bounce: subnet_up observations $(ne_value 'portwatch_reaction_seconds_count{stage="subnet_up"}'), sum $(ne_value 'portwatch_reaction_seconds_sum{stage="subnet_up"}') s; recovery $(ne_value portwatch_last_recovery_seconds) s"

# ---- promtool: the file (the rule file: tests/monitoring/test_alert_rules.sh).
out=$(promtool check metrics <"$PROM" 2>&1) || pw_fail "promtool check metrics rejects the file: $out"
[ -z "$out" ] || pw_fail "promtool check metrics has remarks: $out"

osm_stop_clean
[ ! -e "$PROM" ] || pw_fail "the metrics file is still there after opensm stopped"
pw_pass
