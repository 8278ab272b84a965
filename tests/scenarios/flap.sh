#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Scenario 3: the SM's link flaps.
#
#   short     down for SCEN_DOWN_S, well before the next timer sweep: no sweep
#             sees the port down (Unlink "Hca1"[1], ReLink "Hca1"[1])
#   spanning  down across a sweep: the sweep finds the SM port down ("SM port
#             is down", opensm drops the subnet and goes DISCOVERING); the
#             link comes back 0.3 s later. With a sweep timer the sweep is the
#             next timer sweep; at sweep_interval 0 there is none, so an
#             admin's SIGHUP provides it. "SM port is up" must then follow the
#             link's return at once (plugin), not wait for a timer sweep.
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-flap}
. "$(dirname "$0")/lib.sh"
scen_init

mapfile -t runs < <(scen_modes)
for run in "${runs[@]}"; do
    # shellcheck disable=SC2086  # "MODE STYLE": two words on purpose
    scen_begin $run
    if scen_want short; then
        scen_align
        pw_log "--- short: down ${SCEN_DOWN_S} s"
        scen_loss "Unlink \"$SCEN_SM_HOST\"[1]"
        pw_sleep "$SCEN_DOWN_S"
        scen_back "ReLink \"$SCEN_SM_HOST\"[1]"
        scen_finish_case flap short
    fi
    if scen_want spanning; then
        scen_align
        scen_loss "Unlink \"$SCEN_SM_HOST\"[1]"
        if [ "$SCEN_INTERVAL" -gt 0 ]; then
            pw_log "--- spanning: down until the next timer sweep has seen it"
            wait_log "$PW_OSM_LOG" "$PW_RE_PORT_DOWN" $(( SCEN_INTERVAL + 3 )) "$SCEN_MARK_LOSS"
        else
            pw_log "--- spanning: down, SIGHUP while down"
            kill -HUP "$PW_OSM_PID"
            wait_log "$PW_OSM_LOG" "$PW_RE_PORT_DOWN" 5 "$SCEN_MARK_LOSS"
        fi
        t_down=$(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE")
        pw_sleep "$SCEN_DOWN_S"
        scen_back "ReLink \"$SCEN_SM_HOST\"[1]"
        scen_outcome_port_up=
        # "SM port is up": logged by the first heavy sweep after the return.
        if wait_log_soft "$PW_OSM_LOG" "$PW_RE_PORT_UP" \
            "$(if [ "$SCEN_MODE" = plugin ]; then echo 3; else echo "$SCEN_STOCK_WAIT_S"; fi)" "$SCEN_MARK_BACK"; then
            scen_outcome_port_up=$(( $(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE") - SCEN_T_BACK ))
        fi
        note="down $(pw_fmt_ms $(( SCEN_T_BACK - SCEN_T_LOSS ))) ms; 'SM port is down' $(pw_fmt_ms $(( t_down - SCEN_T_LOSS ))) ms after the loss, 'SM port is up' $(scen__ms "$scen_outcome_port_up") ms after the return"
        scen_finish_case flap spanning "$note"
        if [ "$SCEN_MODE" = plugin ]; then
            if [ -z "$scen_outcome_port_up" ] || [ "$scen_outcome_port_up" -gt $(( SCEN_BOUND_MS * 1000 )) ]; then
                scen_fail_case "flap/spanning $SCEN_STYLE: 'SM port is up' not within $SCEN_BOUND_MS ms of the link's return"
            fi
        fi
    fi
    scen_end
done

scen_finish
