#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Scenario 4: a flap storm - the SM's link bounces SCEN_STORM_BOUNCES times
# within one hold-off window (portwatch.holdoff_ms=SCEN_STORM_HOLDOFF_MS).
#
# The plugin's hold-off (README): the first wake-up comes at once, later ones
# inside the window are deferred to its end, and the last state wins. So:
#
#   up     the storm ends with the link up: exactly two sweeps - one at the
#          first return, one when the window ends - and two heavy sweeps;
#   down   the storm ends with the link down: the final loss cancels the
#          deferred sweep, nothing happens at the end of the window; when the
#          link comes back after the window, one sweep at once. Two in all.
#
# Each bounce: Unlink "Hca1"[1] + driver DOWN, ReLink "Hca1"[1] + driver INIT
# (rxe: ACTIVE), back to back. After the first return the script waits for
# that sweep's SUBNET UP and reports the port ACTIVE to the driver, so no
# later bounce lands inside a running sweep (a loss during a sweep makes
# opensm repeat it by itself, which would blur the count). Asserted in plugin
# mode: the sweep counts above, every later return deferred, the deferred
# sweep not before the window's end and within 2 s of it, recovery, and a
# quiet second afterwards (no feedback loop). Each storm runs on a fresh
# opensm, so that it begins outside any earlier hold-off window.
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-storm}
. "$(dirname "$0")/lib.sh"
scen_init
SCEN_STORM_BOUNCES=${SCEN_STORM_BOUNCES:-5}
SCEN_STORM_HOLDOFF_MS=${SCEN_STORM_HOLDOFF_MS:-8000}
SCEN_HOLDOFF_MS=$SCEN_STORM_HOLDOFF_MS
RE_DEFER='portwatch: .*link back.*\[action=defer\]'
RE_HOLDOFF_SWEEP='portwatch: hold-off over: .*\[action=sweep\]'

# storm up|down
storm() {
    local ends=$1 b mark0 t_first_sweep='' t_storm_end n_defer n_hold n_pw n_heavy mark_q mark_end mark_back='' recovered note
    local check=() bound_s
    scen_align
    pw_log "--- storm-$ends: $SCEN_STORM_BOUNCES bounces, hold-off $SCEN_STORM_HOLDOFF_MS ms"
    scen_loss "Unlink \"$SCEN_SM_HOST\"[1]"
    mark0=$SCEN_MARK_LOSS
    local t0=$SCEN_T_LOSS
    scen_back "ReLink \"$SCEN_SM_HOST\"[1]"
    if [ "$SCEN_MODE" = plugin ]; then
        # The first return sweeps at once: let that sweep finish.
        if wait_log_soft "$PW_OSM_LOG" "$SCEN_RE_SWEEP" 2 "$SCEN_MARK_BACK"; then
            t_first_sweep=$(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE")
        else
            check+=("the first return requested no sweep")
        fi
        wait_log_soft "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 3 "$SCEN_MARK_BACK" \
            || check+=("no SUBNET UP after the first return")
        scen_vsim_active
    fi
    for b in $(seq 2 "$SCEN_STORM_BOUNCES"); do
        scen_loss "Unlink \"$SCEN_SM_HOST\"[1]"
        scen_back "ReLink \"$SCEN_SM_HOST\"[1]"
    done
    if [ "$ends" = down ]; then
        scen_loss "Unlink \"$SCEN_SM_HOST\"[1]"
    fi
    pw__now; t_storm_end=$PW_NOW
    note="$SCEN_STORM_BOUNCES bounces in $(pw_fmt_ms $(( t_storm_end - t0 ))) ms"
    [ -z "$t_first_sweep" ] || note="$note ($(pw_fmt_ms $(( t_storm_end - t_first_sweep ))) ms after the first sweep request)"
    if [ -n "$t_first_sweep" ] && [ $(( t_storm_end - t_first_sweep )) -ge $(( SCEN_STORM_HOLDOFF_MS * 1000 - 200000 )) ]; then
        check+=("the storm took $(pw_fmt_ms $(( t_storm_end - t_first_sweep ))) ms, longer than the hold-off window: machine too slow for this case")
    fi
    if [ "$ends" = down ]; then
        # Past the end of the window: the deferred sweep must have been dropped.
        if [ "$SCEN_MODE" = plugin ] && [ -n "$t_first_sweep" ]; then
            local rest=$(( t_first_sweep + SCEN_STORM_HOLDOFF_MS * 1000 + 500000 ))
            pw__now
            [ "$rest" -le "$PW_NOW" ] || pw_sleep "$(( (rest - PW_NOW) / 1000000 )).$(printf '%06d' $(( (rest - PW_NOW) % 1000000 )))"
            n_heavy=$(count_log "$PW_OSM_LOG" "$PW_RE_HEAVY" "$mark0")
            [ "$n_heavy" = 1 ] || check+=("$n_heavy heavy sweeps by the end of the window with the link down (expected 1)")
        else
            pw_sleep "$SCEN_DOWN_S"
        fi
        mark_back=$(log_lines "$PW_OSM_LOG")
        scen_back "ReLink \"$SCEN_SM_HOST\"[1]"
        bound_s=
    else
        if [ "$SCEN_MODE" = plugin ]; then
            bound_s=$(( SCEN_STORM_HOLDOFF_MS / 1000 + 3 ))
        else
            bound_s=$SCEN_STOCK_WAIT_S
        fi
    fi
    SCEN_MARK_LOSS=$mark0
    scen_outcome "$bound_s"
    mark_q=$(log_lines "$PW_OSM_LOG")
    if [ -n "$SCEN_US_UP" ]; then
        wait_port_state "$SCEN_SM_HOST" 1 Active 2 || true
        scen_vsim_active
        pw_sleep "$SCEN_QUIET_S"
    fi
    mark_end=$(log_lines "$PW_OSM_LOG")
    if [ -n "$SCEN_US_UP" ] && scen_check_fabric; then recovered=yes
    else
        scen_check_port_only
        recovered="no: $SCEN_CHECK"
        [ -n "$SCEN_US_UP" ] || recovered="$recovered after $SCEN_STOCK_WAIT_S s"
    fi
    scen_count_sweeps "$mark0" "$mark_end"
    if [ "$SCEN_MODE" = plugin ]; then
        # Past the first few lines of a window the plugin counts the rest
        # in a summary line; a sweep it counted closes that summary at once.
        n_defer=$(( $(count_log "$PW_OSM_LOG" "$RE_DEFER" "$mark0" "$mark_end") +
                    $(count_summarised "$PW_OSM_LOG" deferred "$mark0" "$mark_end") ))
        # (Storm down: up to the final return, whose own sweep a summary
        # may count.)
        n_hold=$(( $(count_log "$PW_OSM_LOG" "$RE_HOLDOFF_SWEEP" "$mark0" "$mark_end") +
                   $(count_summarised "$PW_OSM_LOG" "sweeps requested" "$mark0" "${mark_back:-$mark_end}") ))
        note="$note; deferred $n_defer, swept at the window's end $n_hold"
        [ "$SCEN_N_PW" = 2 ] || check+=("$SCEN_N_PW sweeps requested (expected 2: at once + $([ "$ends" = up ] && echo 'end of window' || echo 'final return'))")
        [ "$SCEN_N_HEAVY" = 2 ] || check+=("$SCEN_N_HEAVY heavy sweeps (expected 2)")
        [ "$n_defer" = $(( SCEN_STORM_BOUNCES - 1 )) ] \
            || check+=("$n_defer returns deferred (expected $(( SCEN_STORM_BOUNCES - 1 )))")
        if [ "$ends" = up ]; then
            [ "$n_hold" = 1 ] || check+=("$n_hold sweeps at the end of the hold-off (expected 1)")
            if [ -n "$t_first_sweep" ] && [ -n "$SCEN_LINE_HEAVY" ]; then
                local t_h
                t_h=$(log_line_us "$PW_OSM_LOG" "$SCEN_LINE_HEAVY")
                [ "$t_h" -ge $(( t_first_sweep + SCEN_STORM_HOLDOFF_MS * 1000 - 20000 )) ] \
                    || check+=("deferred heavy sweep $(pw_fmt_ms $(( t_h - t_first_sweep ))) ms after the first, before the window's end")
                [ "$t_h" -le $(( t_first_sweep + SCEN_STORM_HOLDOFF_MS * 1000 + SCEN_BOUND_MS * 1000 )) ] \
                    || check+=("deferred heavy sweep $(pw_fmt_ms $(( t_h - t_first_sweep ))) ms after the first, more than $SCEN_BOUND_MS ms after the window's end")
            fi
        else
            [ "$n_hold" = 0 ] || check+=("$n_hold sweeps at the end of the hold-off although the link was down (last state must win)")
            if [ -z "$SCEN_US_HEAVY" ] || [ "$SCEN_US_HEAVY" -gt $(( SCEN_BOUND_MS * 1000 )) ]; then
                check+=("no heavy sweep within $SCEN_BOUND_MS ms of the final return")
            fi
        fi
        [ "$recovered" = yes ] || check+=("fabric not recovered: $recovered")
        if [ -n "$SCEN_US_UP" ]; then
            [ "$(count_log "$PW_OSM_LOG" "$PW_RE_HEAVY" "$mark_q" "$mark_end")" = 0 ] \
                || check+=("heavy sweep in the quiet second after recovery (feedback loop?)")
        fi
    fi
    scen_row storm "$ends" "$SCEN_N_HEAVY" "$SCEN_N_PW" "$recovered" "$note"
    local c
    for c in "${check[@]}"; do scen_fail_case "storm/$ends $SCEN_STYLE: $c"; done
    if [ "$SCEN_MODE" = stock ] && [ "$recovered" != yes ]; then
        pw_log "stock opensm did not recover: SIGHUP (what an admin would do)"
        scen_sighup_sweep
        wait_port_state "$SCEN_SM_HOST" 1 Active 3 || pw_fail "fabric not restored by SIGHUP either"
    fi
}

mapfile -t runs < <(scen_modes)
for run in "${runs[@]}"; do
    # A fresh opensm (and plugin) for each storm: each must begin outside
    # any earlier hold-off window.
    for ends in up down; do
        scen_want "$ends" || continue
        # shellcheck disable=SC2086  # "MODE STYLE": two words on purpose
        scen_begin $run
        storm "$ends"
        scen_end
    done
done

scen_finish
