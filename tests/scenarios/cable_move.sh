#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Scenario 1: the SM's HCA cable is moved to another switch port.
#
#   between   the move happens between two sweeps (SCEN_ALIGN_S after a timer
#             sweep when there is a timer)
#   mid       the move happens while a heavy sweep is running: ibsim is frozen,
#             opensm gets SIGHUP, and the Unlink is queued once opensm has
#             logged INITIATING HEAVY SWEEP (see scen_mid_sweep_loss)
#
# Cases, chained (each starts where the cable is):
#   same-between    Switch1[1] -> Switch1[4]     (same switch, free port)
#   other-between   Switch1[4] -> Switch2[4]     (the other switch)
#   same-mid        Switch2[4] -> Switch2[6]     (same switch, mid-sweep)
#   other-mid       Switch2[6] -> Switch1[1]     (home again, mid-sweep)
# (fattree: Leaf1/Leaf2, free ports 33/34.) Each move: Unlink "Hca1"[1],
# SCEN_DOWN_S, Link "Hca1"[1] "<switch>"[<port>]; the driver reports DOWN,
# then INIT (rxe: ACTIVE).
#
# Reports per case and mode the times from the Link command to opensm's heavy
# sweep, ACTIVE phase and SUBNET UP, and checks with iblinkinfo, LID-routed
# smpquery and saquery that the SM port is ACTIVE on its new path and the new
# LID routes work end to end. Plugin mode asserts recovery (see
# scen_finish_case in lib.sh).
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-cable_move}
. "$(dirname "$0")/lib.sh"
scen_init

move() {   # CASE-NAME between|mid SWITCH PORT
    local name=$1 when=$2 sw=$3 port=$4
    scen_want "$name" || return 0
    scen_align
    pw_log "--- $name: Hca1[1] ${SCEN_AT_SWITCH}[$SCEN_AT_PORT] -> ${sw}[$port] ($when sweeps)"
    if [ "$when" = mid ]; then
        scen_mid_sweep_loss "Unlink \"$SCEN_SM_HOST\"[1]"
    else
        scen_loss "Unlink \"$SCEN_SM_HOST\"[1]"
    fi
    pw_sleep "$SCEN_DOWN_S"
    scen_back "Link \"$SCEN_SM_HOST\"[1] \"$sw\"[$port]"
    SCEN_AT_SWITCH=$sw SCEN_AT_PORT=$port
    scen_finish_case cable_move "$name"
}

mapfile -t runs < <(scen_modes)
for run in "${runs[@]}"; do
    # shellcheck disable=SC2086  # "MODE STYLE": two words on purpose
    scen_begin $run
    move same-between between "$SCEN_SM_SWITCH" "${SCEN_FREE_PORTS[0]}"
    move other-between between "$SCEN_OTHER_SWITCH" "${SCEN_FREE_PORTS[0]}"
    move same-mid mid "$SCEN_OTHER_SWITCH" "${SCEN_FREE_PORTS[1]}"
    move other-mid mid "$SCEN_SM_SWITCH" "$SCEN_SM_SWITCH_PORT"
    scen_end
done

scen_finish
