#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Scenario 6: two SMs, a master on Hca1 (sm_priority 10) and a standby on
# Hca2 (sm_priority 5), each with its own opensm process and, in plugin mode,
# its own libportwatch.so and verbs simulator whose device carries its own
# HCA's GUIDs. sminfo_polling_timeout 1000 ms, polling_retry_number 3, so a
# standby takes over a dead master within a few seconds.
#
#   master-bounce   the master's link bounces (Unlink/ReLink "Hca1"[1]): the
#                   master's plugin sweeps; the standby's plugin sees nothing
#                   and the standby stays STANDBY.
#   standby-bounce  the standby's link bounces: its plugin logs the loss and
#                   the return with "SM is STANDBY [action=none]" and requests
#                   nothing; the master handles it (the switch's trap 128;
#                   that part is stock behaviour: reported, not asserted).
#   master-dies     the master's link goes down for good: the standby takes
#                   over as stock OpenSM does (polling); neither plugin
#                   requests a sweep. Times are from the loss.
#   master-returns  then the old master's link comes back: measured only (the
#                   old master never saw its link go at sweep_interval 0, and
#                   ibsim drops a relinked port's IsSM bit, so the new master
#                   cannot see it as an SM).
# A fresh fabric and pair of SMs for master-bounce, standby-bounce and
# master-dies (+ master-returns).
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-two_sms}
. "$(dirname "$0")/lib.sh"
[ "$SCEN_FABRIC" = 2sw ] || { echo "FAIL: two_sms: runs on the 2sw fabric only"; exit 1; }
scen_init
RE_TAGGED='portwatch: .*\[action=(sweep|mark|defer)\]'
RE_STANDBY_NONE='SM is STANDBY \[action=none\]'

start_sm() {   # TAG HOST PRIORITY NODE_GUID PORT_GUID
    local tag=$1 host=$2 prio=$3 conf=$PW_DIR/opensm-$1.conf
    local -a common=("sweep_interval=$SCEN_INTERVAL" "sm_priority=$prio"
        sminfo_polling_timeout=1000 polling_retry_number=3)
    PW_OSM_HOST=$host SCEN_SM_HOST=$host
    if [ "$SCEN_MODE" = plugin ]; then
        scen_vsim_setup_host "$SCEN_STYLE" "$tag" "$4" "$5"
        osm_make_conf "$conf" "${common[@]}" event_plugin_name=portwatch \
            "event_plugin_options=portwatch.holdoff_ms=$SCEN_HOLDOFF_MS"
        osm_start_plugin "$conf"
        wait_log "$PW_OSM_LOG" "portwatch: watching $PW_VSIM_DEV:1 \\(port GUID $5" 10
        vsimctl wait-open "$PW_VSIM_DEV"
    else
        osm_make_conf "$conf" "${common[@]}"
        osm_start "$conf"
    fi
}

# start_pair_once: a fresh ibsim, the master on Hca1, the standby on Hca2.
# Returns 1 when the master's sweep after the standby's trap 144 does not
# end (see below).
start_pair_once() {
    scen_fabric
    sim_start "$SCEN_NET"
    SCEN_AT_SWITCH=Switch1 SCEN_AT_PORT=1
    start_sm master Hca1 10 0x0000000000100000 0x0000000000100001
    osm_wait_up 10
    wait_port_state Hca1 1 Active 5 || pw_fail "master's port is $PW_PORT_STATE after SUBNET UP"
    scen_slot_save master
    local mstart
    mstart=$(log_lines "$PW_OSM_LOG")
    scen_slot_clear
    SCEN_AT_SWITCH=Switch2 SCEN_AT_PORT=1
    start_sm standby Hca2 5 0x0000000000100003 0x0000000000100004
    wait_log "$PW_OSM_LOG" 'Entering STANDBY state' 10
    pw_log "standby: ${PW_MATCH_TEXT#*-> }"
    scen_slot_save standby
    scen_slot_use master
    # The standby announces itself with trap 144; the master answers with a
    # heavy sweep that asks the standby for its SMInfo. That sweep must end
    # before anything else happens. Under ibsim/umad2sim an SMP whose answer
    # is lost is never timed out (no kernel MAD layer), and an opensm waiting
    # for it never sweeps again: seen here now and then for the master's
    # SMInfo request to the standby, with no cable touched (README.md).
    if wait_log_soft "$PW_OSM_LOG" 'num:144' 3 "$mstart"; then
        wait_log_soft "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 5 "$PW_MATCH_LINE" || return 1
    fi
    return 0
}

# abort_pair: stop both opensm (SIGKILL if they hang) and ibsim.
abort_pair() {
    local slot i
    for slot in standby master; do
        [ -n "${SCEN_SLOTS[$slot]:-}" ] || continue
        scen_slot_use "$slot"
        if osm_alive; then
            kill -TERM "$PW_OSM_PID" 2>/dev/null || true
            for i in $(seq 60); do osm_alive || break; pw_sleep 0.05; done
            if osm_alive; then kill -KILL "$PW_OSM_PID" 2>/dev/null || true; fi
        fi
        wait "$PW_OSM_WRAP_PID" 2>/dev/null || true
        PW_OSM_WRAP_PID=
        scen_slot_save "$slot"
    done
    sim_stop
    SCEN_SLOTS=()
}

# start_pair: start_pair_once, again (up to 5 times: on a loaded machine 3
# were not always enough) if the simulator lost the master's SMInfo answer.
# PAIR_NOTE says so in the result rows.
PAIR_NOTE=
start_pair() {
    local try
    PAIR_NOTE=
    for try in 1 2 3 4 5; do
        start_pair_once && return 0
        pw_log "master stuck in its sweep after the standby's trap 144 (an SMInfo answer lost by the simulator): starting the pair again"
        PAIR_NOTE="pair restarted $try x: simulator lost the master's SMInfo answer"
        abort_pair
    done
    pw_fail "the master stayed stuck after the standby's trap 144 in 5 fresh pairs"
}

stop_sm() {   # SLOT
    scen_slot_use "$1"
    if osm_alive; then
        osm_stop_clean 5
        if [ "$SCEN_MODE" = plugin ]; then wait_log "$PW_OSM_LOG" 'portwatch: stopped: ' 2; fi
    fi
    scen_slot_save "$1"
}

stop_pair() {
    stop_sm standby
    stop_sm master
    sim_stop
    SCEN_SLOTS=()
}

# What the other SM did since line MARK of its log (slot SLOT).
sm_report() {   # SLOT MARK
    local saved=$SCEN_SLOT out
    scen_slot_save "$saved"
    scen_slot_use "$1"
    SR_MASTER=$(count_log "$PW_OSM_LOG" 'Entering MASTER state' "$2")
    SR_TAGGED=$(count_log "$PW_OSM_LOG" "$RE_TAGGED" "$2")
    SR_HEAVY=$(count_log "$PW_OSM_LOG" "$PW_RE_HEAVY" "$2")
    SR_NONE=$(count_log "$PW_OSM_LOG" "$RE_STANDBY_NONE" "$2")
    scen_slot_use "$saved"
}

log_mark() {  # SLOT
    local saved=$SCEN_SLOT n
    scen_slot_save "$saved"
    scen_slot_use "$1"; n=$(log_lines "$PW_OSM_LOG")
    scen_slot_use "$saved"
    echo "$n"
}

mapfile -t runs < <(scen_modes)
for run in "${runs[@]}"; do
    read -r SCEN_MODE SCEN_STYLE <<<"$run"
    pw_log "===== two SMs, sweep_interval $SCEN_INTERVAL, $SCEN_MODE ${SCEN_STYLE#-}"

    # ---------------------------------------------------------------- master-bounce
    if scen_want master-bounce; then
        start_pair
        scen_align
        sb=$(log_mark standby)
        pw_log "--- master-bounce"
        scen_loss 'Unlink "Hca1"[1]'
        pw_sleep "$SCEN_DOWN_S"
        scen_back 'ReLink "Hca1"[1]'
        scen_note_hook() {
            sm_report standby "$sb"
            echo "standby: became MASTER ${SR_MASTER}x, heavy sweeps $SR_HEAVY, plugin requests $SR_TAGGED${PAIR_NOTE:+; $PAIR_NOTE}"
        }
        scen_finish_case two_sms master-bounce
        unset -f scen_note_hook
        if [ "$SCEN_MODE" = plugin ]; then
            sm_report standby "$sb"
            [ "$SR_TAGGED" = 0 ] || scen_fail_case "two_sms/master-bounce $SCEN_STYLE: the standby's plugin requested $SR_TAGGED actions"
            [ "$SR_MASTER" = 0 ] || scen_fail_case "two_sms/master-bounce $SCEN_STYLE: the standby took over"
        fi
        stop_pair
    fi

    # ---------------------------------------------------------------- standby-bounce
    if scen_want standby-bounce; then
        start_pair
        scen_align
        pw_log "--- standby-bounce"
        mL=$(log_mark master)
        scen_slot_save master; scen_slot_use standby
        sL=$(log_lines "$PW_OSM_LOG")
        pw__now; SCEN_T_LOSS=$PW_NOW
        sim_cmd 'Unlink "Hca2"[1]'
        scen_vsim_down
        pw_sleep "$SCEN_DOWN_S"
        mB=$(log_mark master)
        sB=$(log_lines "$PW_OSM_LOG")
        pw__now; SCEN_T_BACK=$PW_NOW
        sim_cmd 'ReLink "Hca2"[1]'
        scen_vsim_back
        scen_slot_save standby; scen_slot_use master
        # The master handles it: measure in its log.
        SCEN_MARK_LOSS=$mL SCEN_MARK_BACK=$mB
        mode_saved=$SCEN_MODE; SCEN_MODE=stock   # no plugin event to look for in the master's log
        scen_outcome 5
        SCEN_MODE=$mode_saved
        if [ -n "$SCEN_US_UP" ]; then
            scen_slot_save master; scen_slot_use standby
            wait_port_state Hca2 1 Active 2 || true
            scen_vsim_active
            scen_slot_save standby; scen_slot_use master
            pw_sleep "$SCEN_QUIET_S"
        fi
        if scen_check_fabric; then rec=yes; else rec="no: $SCEN_CHECK"; fi
        scen_count_sweeps "$mL"
        sm_report standby "$sL"
        note="by the master (trap 128); standby: heavy sweeps $SR_HEAVY, plugin requests $SR_TAGGED, 'SM is STANDBY [action=none]' lines $SR_NONE${PAIR_NOTE:+; $PAIR_NOTE}"
        scen_row two_sms standby-bounce "$SCEN_N_HEAVY" "$SCEN_N_PW" "$rec" "$note"
        if [ "$SCEN_MODE" = plugin ]; then
            [ "$SR_TAGGED" = 0 ] || scen_fail_case "two_sms/standby-bounce $SCEN_STYLE: the standby's plugin requested $SR_TAGGED actions"
            [ "$SR_NONE" -ge 2 ] || scen_fail_case "two_sms/standby-bounce $SCEN_STYLE: the standby's plugin logged 'SM is STANDBY [action=none]' $SR_NONE times (expected loss and return)"
            [ "$SR_HEAVY" = 0 ] || scen_fail_case "two_sms/standby-bounce $SCEN_STYLE: the standby ran $SR_HEAVY heavy sweeps"
            [ "$SCEN_N_PW" = 0 ] || scen_fail_case "two_sms/standby-bounce $SCEN_STYLE: the master's plugin requested $SCEN_N_PW sweeps"
        fi
        stop_pair
    fi

    # ---------------------------------------------------------------- master-dies (+ returns)
    if scen_want master-dies; then
        start_pair
        scen_align
        pw_log "--- master-dies"
        sL=$(log_mark standby)
        scen_loss 'Unlink "Hca1"[1]'
        mL=$SCEN_MARK_LOSS
        scen_slot_save master; scen_slot_use standby
        SCEN_US_EVENT='' SCEN_US_HEAVY='' SCEN_US_ACTIVE='' SCEN_US_UP=''
        took=
        if wait_log_soft "$PW_OSM_LOG" 'Entering MASTER state' 20 "$sL"; then
            took=$(( $(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE") - SCEN_T_LOSS ))
            lm=$PW_MATCH_LINE
            if wait_log_soft "$PW_OSM_LOG" "$PW_RE_HEAVY" 5 "$lm"; then
                SCEN_US_HEAVY=$(( $(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE") - SCEN_T_LOSS ))
            fi
            if wait_log_soft "$PW_OSM_LOG" "$PW_RE_ACTIVE_SET" 10 "$lm"; then
                SCEN_US_ACTIVE=$(( $(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE") - SCEN_T_LOSS ))
            fi
            if wait_log_soft "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 10 "$lm"; then
                SCEN_US_UP=$(( $(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE") - SCEN_T_LOSS ))
            fi
        fi
        pw_sleep "$SCEN_QUIET_S"
        # The new master's view: Hca1 is gone, 5 nodes; checked from Hca2,
        # with Hca3 (on Switch1) as the remote host.
        SCEN_NODES=5 SCEN_REMOTE_HOST=Hca3
        if [ -n "$SCEN_US_UP" ] && scen_check_fabric; then rec=yes; else rec="no: ${SCEN_CHECK:-no takeover}"; fi
        scen_count_sweeps "$sL"
        sb_tagged=$(count_log "$PW_OSM_LOG" "$RE_TAGGED" "$sL")
        scen_slot_save standby; scen_slot_use master
        m_sweeps=$(count_log "$PW_OSM_LOG" "$SCEN_RE_SWEEP" "$mL")
        m_marks=$(count_log "$PW_OSM_LOG" 'portwatch: .* -> DOWN .*\[action=mark\]' "$mL")
        note="times from the master's loss; standby became MASTER after $(scen__ms "$took") ms; standby plugin requests $sb_tagged; master plugin: marks $m_marks, sweeps $m_sweeps${PAIR_NOTE:+; $PAIR_NOTE}"
        scen_row two_sms master-dies "$SCEN_N_HEAVY" "$SCEN_N_PW" "$rec" "$note"
        if [ "$SCEN_MODE" = plugin ]; then
            [ -n "$took" ] || scen_fail_case "two_sms/master-dies $SCEN_STYLE: the standby did not take over within 20 s"
            [ "$rec" = yes ] || scen_fail_case "two_sms/master-dies $SCEN_STYLE: fabric not recovered under the new master: $rec"
            [ "$sb_tagged" = 0 ] || scen_fail_case "two_sms/master-dies $SCEN_STYLE: the standby's plugin requested $sb_tagged actions"
            [ "$m_sweeps" = 0 ] || scen_fail_case "two_sms/master-dies $SCEN_STYLE: the dead master's plugin requested $m_sweeps sweeps"
            [ "$m_marks" = 1 ] || scen_fail_case "two_sms/master-dies $SCEN_STYLE: the dead master's plugin logged $m_marks marks (expected 1)"
        fi
        scen_fabric   # back to the full fabric's description

        if scen_want master-returns; then
            pw_log "--- master-returns"
            sL=$(log_mark standby)
            SCEN_AT_SWITCH=Switch1 SCEN_AT_PORT=1
            scen_back 'ReLink "Hca1"[1]'
            mB=$SCEN_MARK_BACK
            SCEN_MARK_LOSS=$mB
            mode_saved=$SCEN_MODE
            scen_outcome 5
            pw_sleep 1.5
            m_sweeps=$(count_log "$PW_OSM_LOG" "$SCEN_RE_SWEEP" "$mB")
            m_state=$(grep_log "$PW_OSM_LOG" 'Entering [A-Z]+ state' 0 | tail -n 1 | sed 's/.*Entering \([A-Z]*\) state.*/\1/')
            scen_count_sweeps "$mB"
            sm_report standby "$sL"
            scen_slot_save master; scen_slot_use standby
            s_state=$(grep_log "$PW_OSM_LOG" 'Entering [A-Z]+ state' 0 | tail -n 1 | sed 's/.*Entering \([A-Z]*\) state.*/\1/')
            scen_slot_save standby; scen_slot_use master
            out=$PW_DIR/diag/sminfo.out
            diag_run Hca3 sminfo -t 300 >"$out" 2>&1 || true
            port=$(diag_run Hca1 smpquery -D portinfo 0 1 2>/dev/null | sed -n 's/^LinkState:\.*//p') || port='?'
            note="old master ${m_state:-MASTER} (plugin sweeps $m_sweeps), standby ${s_state:-?} (heavy sweeps $SR_HEAVY, plugin requests $SR_TAGGED); Hca1 port $port; Hca3's sminfo: $(head -n 1 "$out" | cut -c1-80)"
            rec="measured only"
            scen_row two_sms master-returns "$SCEN_N_HEAVY" "$SCEN_N_PW" "$rec" "$note"
            if [ "$SCEN_MODE" = plugin ]; then
                [ "$m_sweeps" -le 1 ] || scen_fail_case "two_sms/master-returns $SCEN_STYLE: the old master's plugin requested $m_sweeps sweeps for one return"
                [ "$SR_TAGGED" = 0 ] || scen_fail_case "two_sms/master-returns $SCEN_STYLE: the new master's plugin requested $SR_TAGGED actions"
            fi
        fi
        stop_pair
    fi
done

scen_finish
