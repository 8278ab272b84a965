#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# One opensm per port, as Debian runs it: with PORTS=ALL in
# /etc/default/opensm its service starts
#     opensm --guid GUID --log_file /var/log/opensm.GUID.log
# for every port of the host, all reading the same /etc/opensm/opensm.conf.
# With portwatch.port=auto (the default) in that shared file, each instance
# must watch the port it is bound to, and sweep for that port only; and with
# portwatch.metrics_file=DIR/portwatch-%g.prom in that file, each must keep
# its own metrics file, which node_exporter's textfile collector serves side
# by side.
#
# Set-up: tests/e2e/net.two-subnets, two separate subnets; the host's two
# ports are Hca1 (subnet A) and Hca2 (subnet B). One opensm.conf (portwatch
# enabled, sweep_interval 0), two opensm started with --guid PORT_GUID and
# --log_file opensm.PORT_GUID.log, each with the verbs simulator showing the
# host's two devices: mlx5_0 (Hca1's port) and mlx5_1 (Hca2's port).
# Debian's prometheus-node-exporter with only the textfile collector on DIR.
#
# Asserts: each instance's plugin watches its own port (mlx5_0:1 for A,
# mlx5_1:1 for B, "OpenSM's bound port"); bouncing A's link makes A's
# plugin sweep (its SM port Active again) while B's plugin only logs the
# other port's events and requests nothing; then the same the other way
# round; both exit 0 on SIGTERM. Metrics: DIR holds portwatch-GUID_A.prom and
# portwatch-GUID_B.prom, node_exporter reads both without error, and each
# instance's samples (told apart by their port_guid label) count its own
# port's link changes and sweeps only; both files are gone once the
# instances stopped.
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-test_two_instances}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/node_exporter.sh"
pw_init
pw_require_plugin

NET=$(cd "$(dirname "$0")" && pwd)/net.two-subnets
RE_SWEEP='portwatch: .*\[action=sweep\]'

# ---- two opensm instances, A and B (osm_slot_* in lib.sh).
pw_cleanup_hook() {
    ne_stop
    osm_slots_stop
}

sim_start "$NET"
port_guid() {   # HOST: its port GUID as ibsim gave it
    local g
    g=$(diag_run "$1" ibstat -p) || pw_fail "ibstat -p on $1 failed: $g"
    echo "$g"
}
GUID_A=$(port_guid Hca1) GUID_B=$(port_guid Hca2)
[ -n "$GUID_A" ] && [ -n "$GUID_B" ] && [ "$GUID_A" != "$GUID_B" ] \
    || pw_fail "cannot tell the two ports apart: '$GUID_A' '$GUID_B'"
GUID_A=$(printf '0x%016x' "$GUID_A") GUID_B=$(printf '0x%016x' "$GUID_B")
pw_log "host ports: Hca1 $GUID_A (subnet A), Hca2 $GUID_B (subnet B)"
TEXTFILE_DIR=$PW_DIR/textfile
mkdir -p "$TEXTFILE_DIR"
ne_start "$TEXTFILE_DIR"

# The one opensm.conf both instances read.
CONF=$PW_DIR/opensm.conf
# log_flags 0x0f: portwatch's "not the watched port" lines are DEBUG.
osm_make_conf "$CONF" sweep_interval=0 log_flags=0x0f event_plugin_name=portwatch \
    "event_plugin_options=portwatch.holdoff_ms=100 portwatch.metrics_file=$TEXTFILE_DIR/portwatch-%g.prom"
grep -q 'portwatch.port' "$CONF" && pw_fail "the shared opensm.conf names a port"

start_instance() {   # TAG HOST GUID
    local tag=$1 host=$2 guid=$3
    PW_OSM_HOST=$host
    PW_VSIM_DEV=mlx5_0
    PW_VSIM_CONFIG=$PW_DIR/vsim-$tag.conf
    PW_VSIM_SOCKET=$PW_DIR/vsim-$tag.sock
    # The same host, so the same two verbs devices in both instances.
    cat >"$PW_VSIM_CONFIG" <<EOF
add mlx5_0 node_guid=$(printf '0x%016x' $(( GUID_A - 1 ))) style=mlx5 state=active
port mlx5_0 1 guid=$GUID_A quiet
add mlx5_1 node_guid=$(printf '0x%016x' $(( GUID_B - 1 ))) style=mlx5 state=active
port mlx5_1 1 guid=$GUID_B quiet
EOF
    # As Debian's service starts it; the harness then reads that log.
    osm_start_plugin "$CONF" -- --guid "$guid" --log_file "$PW_DIR/opensm.$guid.log"
    [ "$PW_OSM_LOG" = "$PW_DIR/opensm.$guid.log" ] || pw_fail "the harness reads $PW_OSM_LOG"
    wait_log "$PW_OSM_LOG" 'portwatch: loaded' 10
    osm_wait_up 10
}

start_instance A Hca1 "$GUID_A"
wait_log "$PW_OSM_LOG" "portwatch: watching mlx5_0:1 \\(port GUID $GUID_A, OpenSM's bound port\\)" 5
wait_port_state Hca1 1 Active 5 || pw_fail "A: SM port is $PW_PORT_STATE after SUBNET UP"
osm_slot_save A
PW_OSM_PID='' PW_OSM_WRAP_PID=''
start_instance B Hca2 "$GUID_B"
wait_log "$PW_OSM_LOG" "portwatch: watching mlx5_1:1 \\(port GUID $GUID_B, OpenSM's bound port\\)" 5
wait_port_state Hca2 1 Active 5 || pw_fail "B: SM port is $PW_PORT_STATE after SUBNET UP"
osm_slot_save B
for t in A B; do
    [ "$(count_log "$(osm_slot_get "$t" PW_OSM_LOG)" 'portwatch: ERROR|cannot load plugin')" = 0 ] \
        || pw_fail "$t: the plugin reported an error at start-up"
done
for g in "$GUID_A" "$GUID_B"; do
    [ -f "$TEXTFILE_DIR/portwatch-$g.prom" ] || pw_fail "no metrics file portwatch-$g.prom: $(ls "$TEXTFILE_DIR")"
done
ne_wait 'portwatch_port_state_id{device="mlx5_0",port="1"}' 'v == 4' 5 "$GUID_A"
ne_wait 'portwatch_port_state_id{device="mlx5_1",port="1"}' 'v == 4' 5 "$GUID_B"
[ "$(ne_value node_textfile_scrape_error)" = 0 ] \
    || pw_fail "node_exporter cannot read the two files side by side: $(grep -i error "$PW_DIR/node_exporter.log" | tail -n 3)"
pw_log "metrics: node_exporter serves $(grep -c '^portwatch_info' <<<"$NE_SCRAPE") instances from $(ls "$TEXTFILE_DIR" | tr '\n' ' ')"

# The host's hardware, as both instances' simulators report it (each
# instance sees both devices).
vsimctl_both() {
    local t
    for t in A B; do osm_slot_use "$t"; vsimctl "$@"; done
}

# bounce TAG HOST DEV OTHER: the link of TAG's port goes and comes back. The
# host's hardware reports it to both instances (both see both devices).
bounce() {
    local tag=$1 host=$2 dev=$3 other=$4 mark_me mark_other
    osm_slot_use "$other"; mark_other=$(log_lines "$PW_OSM_LOG")
    osm_slot_use "$tag"; mark_me=$(log_lines "$PW_OSM_LOG")
    PW_LINK_DRIVER=vsimctl_both link_step down "$dev" "$host"
    pw_sleep 0.3
    PW_LINK_DRIVER=vsimctl_both link_step back "$dev" "$host"
    osm_slot_use "$tag"
    wait_log "$PW_OSM_LOG" "portwatch: $dev:1 DOWN -> INIT .*\\[action=sweep\\]" 5 "$mark_me"
    wait_log "$PW_OSM_LOG" "$PW_RE_HEAVY" 5 "$mark_me"
    wait_port_state "$host" 1 Active 5 || pw_fail "$tag: SM port is $PW_PORT_STATE after its bounce"
    PW_LINK_DRIVER=vsimctl_both link_step active "$dev"
    osm_slot_use "$tag"
    wait_log "$PW_OSM_LOG" "portwatch: $dev:1 is ACTIVE again" 5 "$mark_me"
    pw_log "$tag's bounce: its plugin swept, its SM port is Active"
    # The other instance saw the events of a port that is not its own.
    osm_slot_use "$other"
    wait_log "$PW_OSM_LOG" "portwatch: $dev:1 .*not the watched port, ignored" 5 "$mark_other"
    pw_sleep 0.5   # what a wrongly woken sweep would take to show
    [ "$(count_log "$PW_OSM_LOG" "$RE_SWEEP" "$mark_other")" = 0 ] \
        || pw_fail "$other swept for $tag's port: $(grep_log "$PW_OSM_LOG" 'portwatch: ' "$mark_other" | tail -n 5)"
    [ "$(count_log "$PW_OSM_LOG" "$PW_RE_HEAVY" "$mark_other")" = 0 ] \
        || pw_fail "$other ran a heavy sweep for $tag's port"
    pw_log "$tag's bounce: $other requested nothing"
}
# counts GUID LOST BACK: that instance's link changes in /metrics, waited for.
counts() {
    ne_wait 'portwatch_transitions_total{kind="link_lost"}' "v == $2" 5 "$1"
    ne_wait 'portwatch_transitions_total{kind="link_back"}' "v == $3" 5 "$1"
}
bounce A Hca1 mlx5_0 B
counts "$GUID_A" 1 1
counts "$GUID_B" 0 0
ne_wait portwatch_sweeps_requested_total 'v >= 1' 5 "$GUID_A"
[ "$(ne_value portwatch_sweeps_requested_total "$GUID_B")" = 0 ] || pw_fail "B's metrics count a sweep for A's port"
bounce B Hca2 mlx5_1 A
counts "$GUID_B" 1 1
counts "$GUID_A" 1 1
ne_wait portwatch_sweeps_requested_total 'v >= 1' 5 "$GUID_B"
[ "$(ne_value node_textfile_scrape_error)" = 0 ] || pw_fail "node_exporter reports a scrape error"
# Two files with the same series would not be a read error: node_exporter
# drops one of them and logs it.
! grep -q 'collected before' "$PW_DIR/node_exporter.log" \
    || pw_fail "node_exporter dropped a duplicate series: $(grep -m1 'collected before' "$PW_DIR/node_exporter.log")"
pw_log "metrics: each instance counted its own port's link lost and back once"

for t in B A; do
    osm_slot_use "$t"
    osm_stop_clean 5
    wait_log "$PW_OSM_LOG" 'portwatch: stopped: ' 1
    pw_log "$t: ${PW_MATCH_TEXT#*portwatch: }"
    osm_slot_save "$t"
done
sim_stop
[ -z "$(ls -A "$TEXTFILE_DIR")" ] || pw_fail "metrics files left after both stopped: $(ls -A "$TEXTFILE_DIR")"
pw_pass "one opensm per port sharing one opensm.conf: each plugin watched its own port, swept for it only and kept its own metrics file"
