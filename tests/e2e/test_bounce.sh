#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Bounce the SM's own link repeatedly with libportwatch.so loaded and check
# that every return of the link is answered by exactly one heavy sweep.
#
# Usage: test_bounce.sh [mlx5|mlx4|rxe|all] (default all; one fresh ibsim and
# opensm per driver style). PW_BOUNCES (default 20) bounces per style;
# PW_BOUNCE_OPTIONS adds to event_plugin_options; PW_BOUNCE_LOSS_SWEEPS=1
# says the options make the loss itself sweep (portwatch.sweep_on_loss=yes).
#
# Set-up: net.2sw2path4hca, stock opensm on Hca1 with sweep_interval 0 (so any
# heavy sweep after a bounce is the plugin's doing), event_plugin_name
# portwatch, portwatch.holdoff_ms=100, the verbs simulator preloaded with one
# device of the given driver style whose port 1 carries Hca1's port GUID.
#
# Each bounce, in real hardware order:
#   loss:   ibsim Unlink "Hca1"[1], then vsimctl port DEV 1 state=down
#   return: ibsim ReLink "Hca1"[1], then vsimctl port DEV 1 state=init
#           (rxe has no INIT: state=active)
#   mirror: once opensm has activated the port in ibsim: vsimctl state=active
#           (not for rxe), event lid_change, event client_reregister
# Asserts per bounce:
#   - the loss is logged as a transition tagged [action=mark] (force the next
#     sweep heavy, no wake-up; [action=sweep] with PW_BOUNCE_LOSS_SWEEPS=1);
#     at most one [action=sweep] for it;
#   - the return is logged as a transition tagged [action=sweep] (the link was
#     down longer than the hold-off, so nothing is deferred), the only
#     [action=sweep] of the return, followed by exactly one INITIATING HEAVY
#     SWEEP within 2 s of the link-back command, then SUBNET UP, and by one
#     each of the plugin's telemetry lines HEAVY_SWEEP_START,
#     HEAVY_SWEEP_DONE and SUBNET_UP (checked after the last bounce);
#   - smpquery sees the SM port (Hca1 port 1) ACTIVE again;
#   - the mirrored PORT_ACTIVE / LID_CHANGE / CLIENT_REREGISTER and a quiet
#     second cause no [action=sweep] and no heavy sweep (no feedback loop).
# At the end: SIGTERM -> exit status 0, and the plugin's "stopped:" summary
# counts one sweep per bounce (two with sweep_on_loss).
# Prints min/median/max of: plugin's link-back line -> INITIATING HEAVY SWEEP,
# -> SUBNET UP, vsimctl state=init command -> INITIATING HEAVY SWEEP, the
# plugin's own telemetry lines, and its link back -> SM port ACTIVE ("is
# ACTIVE again", the time portwatch-fieldcheck reports as "(portwatch)").
set -euo pipefail
STYLE_ARG=${1:-all}
case $STYLE_ARG in
    mlx5|mlx4|rxe) PW_TEST_NAME=${PW_TEST_NAME:-test_bounce_$STYLE_ARG} ;;
    all) PW_TEST_NAME=${PW_TEST_NAME:-test_bounce} ;;
    *) echo "usage: $0 [mlx5|mlx4|rxe|all]"; echo "FAIL: test_bounce: bad argument '$STYLE_ARG'"; exit 1 ;;
esac
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin

BOUNCES=${PW_BOUNCES:-20}
HOLDOFF_MS=100
DOWN_PAUSE_S=0.3          # link down this long (> hold-off, so nothing merges)
QUIET_S=1                 # no sweep may follow in this window
SWEEP_BOUND_MS=2000       # link-back command -> INITIATING HEAVY SWEEP
LOSS_SWEEPS_EXPECTED=${PW_BOUNCE_LOSS_SWEEPS:-0}
if [ "$LOSS_SWEEPS_EXPECTED" = 1 ]; then LOSS_TAG=sweep; else LOSS_TAG=mark; fi
EXTRA_OPTIONS=${PW_BOUNCE_OPTIONS:-}

RE_SWEEP='portwatch: .*\[action=sweep\]'
RE_TAGGED='\[action=[a-z]+\]$'

SUMMARY=()

# The portwatch lines after line $1 (for failure messages).
pw_lines_after() {
    grep_log "$PW_OSM_LOG" 'portwatch: ' "$1" | tail -n 15
}

bounce_fail() {   # BOUNCE-NO MARK MESSAGE
    echo "---- portwatch lines of bounce $1:"
    pw_lines_after "$2"
    pw_fail "$STYLE bounce $1: $3"
}

run_style() {
    STYLE=$1
    local dev return_state mirror_active
    case $STYLE in
        mlx5|mlx4) return_state=init; mirror_active=1 ;;
        rxe) return_state=active; mirror_active=0 ;;
    esac
    pw_log "===== driver style $STYLE: $BOUNCES bounces"
    fabric_start "$STYLE"
    dev=$PW_VSIM_DEV
    osm_make_conf "$PW_DIR/opensm-$STYLE.conf" sweep_interval=0 \
        event_plugin_name=portwatch \
        "event_plugin_options=portwatch.holdoff_ms=$HOLDOFF_MS${EXTRA_OPTIONS:+ $EXTRA_OPTIONS}"
    osm_start_plugin "$PW_DIR/opensm-$STYLE.conf"
    wait_log "$PW_OSM_LOG" 'portwatch: loaded' 5
    pw_log "plugin: ${PW_MATCH_TEXT#*portwatch: }"
    wait_log "$PW_OSM_LOG" "portwatch: watching $dev:1" 5
    pw_log "plugin: ${PW_MATCH_TEXT#*portwatch: }"
    vsimctl wait-open "$dev"
    osm_wait_up 10
    [ "$(count_log "$PW_OSM_LOG" 'portwatch: ERROR|cannot load plugin')" = 0 ] \
        || pw_fail "plugin reported an error at start-up"
    wait_port_state Hca1 1 Active 2 || pw_fail "SM port is $PW_PORT_STATE after SUBNET UP"

    local -a d_sweep=() d_up=() d_cmd=() t_start=() t_done=() t_up=()
    local b mark0 mark1 mark2 mark3 line_loss line_back line_heavy line_up n tag
    local loss_sweeps total_loss_sweeps=0 t_cmd
    local -a tel_bad=()
    for b in $(seq 1 "$BOUNCES"); do
        # ---- loss
        mark0=$(log_lines "$PW_OSM_LOG")
        link_step down "$dev"
        wait_log_soft "$PW_OSM_LOG" "portwatch: $dev:1 .*$RE_TAGGED" 2 "$mark0" \
            || bounce_fail "$b" "$mark0" "no transition logged for the link loss"
        line_loss=$PW_MATCH_LINE
        tag=${PW_MATCH_TEXT##*\[action=}; tag=${tag%\]}
        [ "$tag" = "$LOSS_TAG" ] \
            || bounce_fail "$b" "$mark0" "link loss logged with [action=$tag], expected [action=$LOSS_TAG]"
        pw_sleep "$DOWN_PAUSE_S"
        # ---- return
        mark1=$(log_lines "$PW_OSM_LOG")
        loss_sweeps=$(count_log "$PW_OSM_LOG" "$RE_SWEEP" "$mark0" "$mark1")
        [ "$loss_sweeps" -le 1 ] || bounce_fail "$b" "$mark0" "$loss_sweeps sweeps requested for one link loss"
        [ "$loss_sweeps" -le "$LOSS_SWEEPS_EXPECTED" ] \
            || bounce_fail "$b" "$mark0" "the link loss requested a sweep (sweep_on_loss is off)"
        total_loss_sweeps=$(( total_loss_sweeps + loss_sweeps ))
        link_step "back=$return_state" "$dev"
        t_cmd=$PW_VSIM_T_US
        wait_log_soft "$PW_OSM_LOG" "portwatch: $dev:1 .*$RE_TAGGED" 2 "$mark1" \
            || bounce_fail "$b" "$mark0" "no transition logged for the link's return"
        line_back=$PW_MATCH_LINE
        tag=${PW_MATCH_TEXT##*\[action=}; tag=${tag%\]}
        # The link was down longer than the hold-off: nothing to defer.
        [ "$tag" = sweep ] \
            || bounce_fail "$b" "$mark0" "link's return logged with [action=$tag], expected [action=sweep]"
        wait_log_soft "$PW_OSM_LOG" "$RE_SWEEP" 2 "$mark1" \
            || bounce_fail "$b" "$mark0" "no [action=sweep] within 2 s of the link's return (return line: [action=$tag])"
        wait_log_soft "$PW_OSM_LOG" "$PW_RE_HEAVY" 2 "$mark1" \
            || bounce_fail "$b" "$mark0" "no INITIATING HEAVY SWEEP within 2 s of the link's return"
        line_heavy=$PW_MATCH_LINE
        wait_log_soft "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 5 "$line_heavy" \
            || bounce_fail "$b" "$mark0" "no SUBNET UP after the heavy sweep"
        line_up=$PW_MATCH_LINE
        wait_port_state Hca1 1 Active 2 \
            || bounce_fail "$b" "$mark0" "SM port is $PW_PORT_STATE 2 s after the heavy sweep, expected Active"
        # ---- mirror what the hardware would report next, then stay quiet
        mark2=$(log_lines "$PW_OSM_LOG")
        if [ "$mirror_active" = 1 ]; then link_step active "$dev"; fi
        vsimctl event "$dev" 1 lid_change
        vsimctl event "$dev" 1 client_reregister
        pw_sleep "$QUIET_S"
        mark3=$(log_lines "$PW_OSM_LOG")

        local ev_t heavy_t up_t dt
        ev_t=$(log_line_us "$PW_OSM_LOG" "$line_back")
        heavy_t=$(log_line_us "$PW_OSM_LOG" "$line_heavy")
        up_t=$(log_line_us "$PW_OSM_LOG" "$line_up")
        dt=$(( heavy_t - t_cmd ))
        [ "$dt" -le $(( SWEEP_BOUND_MS * 1000 )) ] \
            || bounce_fail "$b" "$mark0" "heavy sweep $(pw_fmt_ms "$dt") ms after the link-back command (bound ${SWEEP_BOUND_MS} ms)"
        n=$(count_log "$PW_OSM_LOG" "$RE_SWEEP" "$mark1" "$mark3")
        [ "$n" = 1 ] || bounce_fail "$b" "$mark0" "$n [action=sweep] lines for one return of the link (expected 1)"
        n=$(count_log "$PW_OSM_LOG" "$PW_RE_HEAVY" "$mark1" "$mark2")
        [ "$n" = 1 ] || bounce_fail "$b" "$mark0" "$n heavy sweeps after the link returned (expected 1)"
        n=$(count_log "$PW_OSM_LOG" "$PW_RE_HEAVY" "$mark2" "$mark3")
        [ "$n" = 0 ] || bounce_fail "$b" "$mark0" "$n heavy sweeps after the port went ACTIVE (feedback loop?)"
        n=$(count_log "$PW_OSM_LOG" "$RE_SWEEP" "$mark2" "$mark3")
        [ "$n" = 0 ] || bounce_fail "$b" "$mark0" "$n sweeps requested for ACTIVE/LID_CHANGE/CLIENT_REREGISTER"
        [ "$heavy_t" -ge "$ev_t" ] || bounce_fail "$b" "$mark0" "heavy sweep logged before the plugin saw the link back"

        d_sweep+=($(( heavy_t - ev_t )))
        d_up+=($(( up_t - ev_t )))
        d_cmd+=("$dt")
        # The plugin's telemetry lines for this return: "<NAME> <x.yyy> ms after ...".
        local tl v name ms
        while IFS= read -r tl; do
            v=${tl##*telemetry: }
            name=${v%% *} ms=${v#* }
            ms=${ms%% *}
            pw__s_to_us "$ms"   # x.yyy read as seconds gives ms*1e6; /1000 -> us
            case $name in
                HEAVY_SWEEP_START) t_start+=($(( PW_US / 1000 ))) ;;
                HEAVY_SWEEP_DONE) t_done+=($(( PW_US / 1000 ))) ;;
                SUBNET_UP) t_up+=($(( PW_US / 1000 ))) ;;
            esac
        done < <(grep_log "$PW_OSM_LOG" 'portwatch: telemetry: ' "$mark1" | awk -v u="$mark3" -F: '$1 <= u')
        # The sweep the plugin requested must be followed by its three
        # telemetry lines. Checked after the last bounce, so that a telemetry
        # fault does not hide how the sweeps themselves behaved.
        local tel=
        for name in HEAVY_SWEEP_START HEAVY_SWEEP_DONE SUBNET_UP; do
            n=$(count_log "$PW_OSM_LOG" "portwatch: telemetry: $name " "$mark1" "$mark3")
            [ "$n" = 1 ] || tel+=" $name x$n"
        done
        if [ -n "$tel" ]; then
            tel_bad+=("bounce $b:$tel")
            pw_log "bounce $b: telemetry lines wrong (expected one of each):$tel"
        fi
        if [ "$b" = 1 ] || [ "${PW_VERBOSE:-0}" = 1 ]; then
            pw_log "bounce $b: loss: $(sed -n "${line_loss}s/.*portwatch: //p" "$PW_OSM_LOG")"
            pw_log "bounce $b: back: $(sed -n "${line_back}s/.*portwatch: //p" "$PW_OSM_LOG")"
        fi
        pw_log "bounce $b ok: link back -> heavy sweep $(pw_fmt_ms $(( heavy_t - ev_t ))) ms, -> SUBNET UP $(pw_fmt_ms $(( up_t - ev_t ))) ms (command -> sweep $(pw_fmt_ms "$dt") ms)"
    done

    osm_stop_clean 5
    wait_log "$PW_OSM_LOG" 'portwatch: stopped: ' 1
    local stopped=${PW_MATCH_TEXT#*portwatch: }
    pw_log "plugin: $stopped"
    local sweeps
    sweeps=$(printf '%s\n' "$stopped" | sed -n 's/.* sweeps=\([0-9]*\).*/\1/p')
    [ "$sweeps" = $(( BOUNCES + total_loss_sweeps )) ] \
        || pw_fail "$STYLE: plugin counted sweeps=$sweeps, expected $(( BOUNCES + total_loss_sweeps ))"
    sim_stop

    # The plugin's own link back -> SM port ACTIVE ("%.3f ms": µs once the dot goes).
    local -a t_active
    mapfile -t t_active < <(sed -n 's/.*portwatch: .* is ACTIVE again \([0-9]*\)\.\([0-9]\{3\}\) ms after the link came back.*/\1\2/p' "$PW_OSM_LOG")
    local s
    for s in "$(pw_stats "$STYLE link-back line -> INITIATING HEAVY SWEEP" "${d_sweep[@]}")" \
             "$(pw_stats "$STYLE link-back line -> SUBNET UP" "${d_up[@]}")" \
             "$(pw_stats "$STYLE vsimctl state=$return_state -> INITIATING HEAVY SWEEP" "${d_cmd[@]}")" \
             "$(pw_stats "$STYLE telemetry HEAVY_SWEEP_START" "${t_start[@]}")" \
             "$(pw_stats "$STYLE telemetry HEAVY_SWEEP_DONE" "${t_done[@]}")" \
             "$(pw_stats "$STYLE telemetry SUBNET_UP" "${t_up[@]}")" \
             "$(pw_stats "$STYLE portwatch: link back -> SM port ACTIVE ('is ACTIVE again')" "${t_active[@]}")"; do
        SUMMARY+=("$s")
        echo "$s"
    done
    if [ ${#tel_bad[@]} -gt 0 ]; then
        pw_fail "$STYLE: the plugin's telemetry lines (HEAVY_SWEEP_START, HEAVY_SWEEP_DONE, SUBNET_UP after its sweep) were wrong in ${#tel_bad[@]} of $BOUNCES bounces: $(printf '%s; ' "${tel_bad[@]}")"
    fi
}

if [ "$STYLE_ARG" = all ]; then
    for st in mlx5 mlx4 rxe; do run_style "$st"; done
else
    run_style "$STYLE_ARG"
fi

echo "==== timings (ms)"
printf '%s\n' "${SUMMARY[@]}"
pw_pass "$BOUNCES bounces ($STYLE_ARG${EXTRA_OPTIONS:+, $EXTRA_OPTIONS}): one heavy sweep per return of the link, none after"
