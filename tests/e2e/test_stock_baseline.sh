#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Stock opensm (no plugin), sweep_interval 0, SM on Hca1 of net.2sw2path4hca.
# Documents the problem portwatch solves: after the SM's own link bounces
# (Unlink + ReLink "Hca1"[1]) the SM port comes back at INIT and stays there,
# because nothing tells opensm to sweep.
#
# Asserts:
#   - ibsim gives Hca1 node GUID 0x100000 and port 1 GUID 0x100001 (the
#     README and the plugin tests rely on them); opensm binds to 0x100001;
#   - opensm reaches SUBNET UP and the SM port is ACTIVE (smpquery and
#     ibportstate agree);
#   - Unlink "Hca1"[1]: the port is DOWN (ibsim's view: an SMP cannot leave
#     a local port whose link is down with Debian 13's libibumad); ReLink:
#     it is INIT (smpquery), and still INIT 3 s later; opensm logged no heavy sweep and no SUBNET UP meanwhile;
#   - SIGTERM: opensm exits with status 0 within 5 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pw_init

STAY_S=${PW_BASELINE_STAY_S:-3}

sim_start "$PW_NET_2SW"

# GUIDs as ibsim assigns them (no client slot needed: console Dump).
sim_cmd 'Dump "Hca1"'
node_guid=$(printf '%s\n' "$PW_SIM_REPLY" | sed -n 's/.*"Hca1".*nodeguid \([0-9a-fA-F]*\).*/\1/p')
port1_guid=$(printf '%s\n' "$PW_SIM_REPLY" | awk '$2 == "[1]" { print $1; exit }')
pw_log "ibsim: Hca1 node GUID 0x$node_guid, port 1 GUID 0x$port1_guid"
[ "$(( 16#$node_guid ))" = "$(( PW_HCA1_NODE_GUID ))" ] \
    || pw_fail "Hca1 node GUID is 0x$node_guid, expected $PW_HCA1_NODE_GUID"
[ "$(( 16#$port1_guid ))" = "$(( PW_HCA1_PORT1_GUID ))" ] \
    || pw_fail "Hca1 port 1 GUID is 0x$port1_guid, expected $PW_HCA1_PORT1_GUID"

osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0
osm_start "$PW_DIR/opensm.conf"
osm_wait_up 10
up_ms=$(pw_fmt_ms $(( $(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE") - PW_OSM_START_US )))
grep -q 'Binding to port 0x100001' "$PW_OSM_LOG" \
    || pw_fail "opensm did not bind to port GUID 0x100001"

t0=$(pw_now_us)
st=$(smp_port_state Hca1 1)
q_ms=$(pw_fmt_ms $(( $(pw_now_us) - t0 )))
pw_log "SM port Hca1/1 after SUBNET UP: smpquery says $st (query took $q_ms ms)"
[ "$st" = Active ] || pw_fail "SM port is $st after SUBNET UP, expected Active"
st2=$(ibportstate_state Hca1 1)
[ "$st2" = Active ] || pw_fail "ibportstate says $st2, expected Active"

# Bounce the SM's own link.
mark=$(log_lines "$PW_OSM_LOG")
t0=$(pw_now_us)
fabric_link down
unlink_ms=$(pw_fmt_ms $(( $(pw_now_us) - t0 )))
# ibsim's own view: Debian 13's libibumad (rdma-core 56) does not open a
# local port whose link is down for an SMP, so smpquery cannot say Down.
st=$(sim_dump_port_state Hca1 1)
pw_log "after Unlink (console command took $unlink_ms ms): SM port is $st (ibsim)"
[ "$st" = Down ] || pw_fail "SM port is $st after Unlink, expected Down"
sleep 0.5
fabric_link back
t_relink=$(pw_now_us)
st=$(smp_port_state Hca1 1)
pw_log "right after ReLink: SM port is $st"
[ "$st" = Initialize ] || pw_fail "SM port is $st right after ReLink, expected Initialize"

# Nothing brings it back: poll for STAY_S seconds.
n=0
while [ $(( $(pw_now_us) - t_relink )) -lt $(( STAY_S * 1000000 )) ]; do
    st=$(smp_port_state Hca1 1)
    n=$(( n + 1 ))
    [ "$st" != Active ] || pw_fail "SM port became Active without a sweep (bug not reproduced?)"
    sleep 0.2
done
st2=$(ibportstate_state Hca1 1)
pw_log "SM port ${STAY_S} s after ReLink: smpquery says $st, ibportstate says $st2 ($n polls), ibsim: $(sim_dump_port_state Hca1 1)"
if [ "$st" != Initialize ] || [ "$st2" != Initialize ]; then
    pw_fail "SM port expected to stay Initialize, got $st/$st2"
fi
heavy=$(count_log "$PW_OSM_LOG" "$PW_RE_HEAVY" "$mark")
ups=$(count_log "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" "$mark")
pw_log "opensm log since the Unlink: $heavy heavy sweeps, $ups SUBNET UP"
[ "$heavy" = 0 ] || pw_fail "stock opensm did $heavy heavy sweeps after the bounce (expected none at sweep_interval 0)"
[ "$ups" = 0 ] || pw_fail "stock opensm logged SUBNET UP after the bounce"

osm_stop_clean 5
grep -q 'Exiting SM' "$PW_OSM_LOG" || pw_fail "no 'Exiting SM' in the opensm log"
sim_stop

echo "timings: SUBNET UP ${up_ms} ms after start; smpquery ${q_ms} ms; Unlink console command ${unlink_ms} ms; SIGTERM->exit ${PW_OSM_STOP_MS} ms"
pw_pass "SM port stayed ${st} ${STAY_S} s after its link bounced (no sweep at sweep_interval 0); clean exit"
