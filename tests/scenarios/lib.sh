# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# shellcheck shell=bash
# shellcheck disable=SC2034  # SCEN_* variables are the API for the scenario scripts
# tests/scenarios/lib.sh - failure scenarios against stock opensm, with and
# without portwatch (sourced, never run). Built on tests/e2e/lib.sh.
#
# A scenario script runs the same sequence of cases once per mode:
#   stock            /usr/sbin/opensm alone (no plugin, no verbs simulator:
#                    the driver style does not matter to it, so it runs once)
#   plugin STYLE     the same opensm with libportwatch.so and the verbs
#                    simulator in driver style STYLE (mlx5, mlx4, rxe)
# each on a fresh ibsim started from the same net file, and writes one result
# row per case: times from the link coming back (the harness instant the
# ibsim console command was written) to INITIATING HEAVY SWEEP, to the SM
# port being set ACTIVE and to SUBNET UP, all read from opensm's log; the
# number of heavy sweeps; whether the fabric fully recovered.
#
# Stock behaviour is measured and reported, never asserted. In plugin mode
# the script fails unless the plugin did its job (scen_assert_plugin).
#
# Environment:
#   SCEN_INTERVAL      opensm sweep_interval (default 0)
#   SCEN_STYLES        driver styles for the plugin runs (default "mlx5 mlx4 rxe")
#   SCEN_MODES         "stock plugin" (default), "stock" or "plugin"
#   SCEN_FABRIC        2sw (net.2sw2path4hca, default) or fattree (generated)
#   SCEN_CASES         subset of a script's cases (default: all of them)
#   SCEN_RESULTS       append the result rows (TSV) to this file
#   SCEN_STOCK_WAIT_S  how long stock opensm gets to recover before the case
#                      is reported as "not recovered" (default: 3 s at
#                      sweep_interval 0, interval + 3 s otherwise)
#   PW_KEEP, PW_VERBOSE as in tests/e2e/lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../e2e/lib.sh"

SCEN_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCEN_INTERVAL=${SCEN_INTERVAL:-0}
SCEN_STYLES=${SCEN_STYLES:-mlx5 mlx4 rxe}
SCEN_MODES=${SCEN_MODES:-stock plugin}
SCEN_FABRIC=${SCEN_FABRIC:-2sw}
SCEN_CASES=${SCEN_CASES:-}
SCEN_RESULTS=${SCEN_RESULTS:-}
if [ "$SCEN_INTERVAL" -gt 0 ]; then
    SCEN_STOCK_WAIT_S=${SCEN_STOCK_WAIT_S:-$(( SCEN_INTERVAL + 3 ))}
else
    SCEN_STOCK_WAIT_S=${SCEN_STOCK_WAIT_S:-3}
fi
SCEN_HOLDOFF_MS=${SCEN_HOLDOFF_MS:-100}
SCEN_DOWN_S=${SCEN_DOWN_S:-0.3}       # a moved cable / flap is down this long
SCEN_QUIET_S=${SCEN_QUIET_S:-1}       # no sweep may follow recovery in this window
SCEN_BOUND_MS=${SCEN_BOUND_MS:-2000}  # link back -> INITIATING HEAVY SWEEP (plugin)
SCEN_ALIGN_S=${SCEN_ALIGN_S:-0.5}     # cases start this long after a timer sweep

PW_RE_ACTIVE_SET='LINKS ARMED - SET LINKS TO ACTIVE STATE'
PW_RE_LIGHT='INITIATING LIGHT SWEEP'
PW_RE_PORT_UP='SM port is up'
PW_RE_PORT_DOWN='SM port is down'
SCEN_RE_SWEEP='portwatch: .*\[action=sweep\]'

# ------------------------------------------------------------------ fabric
# scen_fabric: describe SCEN_FABRIC (net file, the SM's host and cabling).
scen_fabric() {
    case $SCEN_FABRIC in
        2sw)
            SCEN_NET=$PW_NET_2SW
            SCEN_SM_HOST=Hca1 SCEN_SM_SWITCH=Switch1 SCEN_SM_SWITCH_PORT=1
            SCEN_OTHER_SWITCH=Switch2 SCEN_FREE_PORTS=(4 6)
            SCEN_REMOTE_HOST=Hca4
            SCEN_NODES=6 SCEN_UP_TIMEOUT_S=10 SCEN_LID_SAMPLE=0
            ;;
        fattree)
            SCEN_NET=$PW_DIR/fattree.net
            [ -s "$SCEN_NET" ] || bash "$SCEN_LIB_DIR/gen_fattree.sh" >"$SCEN_NET" \
                || pw_fail "gen_fattree.sh failed"
            SCEN_SM_HOST=Hca1 SCEN_SM_SWITCH=Leaf1 SCEN_SM_SWITCH_PORT=1
            SCEN_OTHER_SWITCH=Leaf2 SCEN_FREE_PORTS=(33 34)
            SCEN_REMOTE_HOST=Hca256
            SCEN_NODES=280 SCEN_UP_TIMEOUT_S=60 SCEN_LID_SAMPLE=12
            ;;
        *) pw_fail "unknown SCEN_FABRIC '$SCEN_FABRIC' (2sw or fattree)" ;;
    esac
    # Where the SM's cable is now (cable-move cases change it).
    SCEN_AT_SWITCH=$SCEN_SM_SWITCH SCEN_AT_PORT=$SCEN_SM_SWITCH_PORT
}

# scen_want CASE: is CASE selected by SCEN_CASES (all when empty)?
scen_want() {
    [ -z "$SCEN_CASES" ] && return 0
    [[ " $SCEN_CASES " == *" $1 "* ]]
}

# ------------------------------------------------------------------ runs
# scen_init: pw_init plus the scenario defaults.
scen_init() {
    pw_init
    pw_need_cmd iblinkinfo infiniband-diags
    pw_need_cmd saquery infiniband-diags
    case $SCEN_MODES in *plugin*) pw_require_plugin ;; esac
    scen_fabric
    SCEN_ROWS=()
    SCEN_FAILS=()
}

# scen_modes: print the runs of this script, one "MODE STYLE" per line.
scen_modes() {
    local m s
    for m in $SCEN_MODES; do
        case $m in
            stock) echo "stock -" ;;
            plugin) for s in $SCEN_STYLES; do echo "plugin $s"; done ;;
            *) pw_fail "unknown mode '$m' in SCEN_MODES" ;;
        esac
    done
}

# scen_begin MODE STYLE [conf key=value...]: fresh ibsim and opensm.
scen_begin() {
    SCEN_MODE=$1 SCEN_STYLE=$2; shift 2
    scen_fabric
    pw_log "===== $SCEN_FABRIC, sweep_interval $SCEN_INTERVAL, $SCEN_MODE${SCEN_STYLE#-}"
    sim_start "$SCEN_NET"
    local conf=$PW_DIR/opensm-$SCEN_MODE-$SCEN_STYLE.conf
    if [ "$SCEN_MODE" = plugin ]; then
        vsim_setup "$SCEN_STYLE"
        osm_make_conf "$conf" "sweep_interval=$SCEN_INTERVAL" event_plugin_name=portwatch \
            "event_plugin_options=portwatch.holdoff_ms=$SCEN_HOLDOFF_MS" "$@"
        osm_start_plugin "$conf"
        wait_log "$PW_OSM_LOG" "portwatch: watching $PW_VSIM_DEV:1" 10
        vsimctl wait-open "$PW_VSIM_DEV"
    else
        osm_make_conf "$conf" "sweep_interval=$SCEN_INTERVAL" "$@"
        osm_start "$conf"
    fi
    osm_wait_up "$SCEN_UP_TIMEOUT_S"
    if [ "$SCEN_MODE" = plugin ] && [ "$(count_log "$PW_OSM_LOG" 'portwatch: ERROR|cannot load plugin')" != 0 ]; then
        pw_fail "plugin reported an error at start-up"
    fi
    wait_port_state "$SCEN_SM_HOST" 1 Active 5 || pw_fail "SM port is $PW_PORT_STATE after SUBNET UP"
}

# scen_end: SIGTERM opensm (must exit 0), stop ibsim.
scen_end() {
    osm_stop_clean 5
    if [ "$SCEN_MODE" = plugin ]; then
        wait_log "$PW_OSM_LOG" 'portwatch: stopped: ' 2
        pw_log "plugin: ${PW_MATCH_TEXT#*portwatch: }"
    fi
    sim_stop
}

# ------------------------------------------------------------------ events
# The SM's HCA driver, as the verbs simulator plays it: DOWN on loss; back at
# INIT (rxe has no INIT: ACTIVE); ACTIVE once the SM has activated the port.
scen_vsim_down() {
    [ "$SCEN_MODE" = plugin ] || return 0
    vsimctl port "$PW_VSIM_DEV" 1 state=down
}
scen_vsim_back() {
    [ "$SCEN_MODE" = plugin ] || return 0
    if [ "$SCEN_STYLE" = rxe ]; then
        vsimctl port "$PW_VSIM_DEV" 1 state=active
    else
        vsimctl port "$PW_VSIM_DEV" 1 state=init
    fi
}
scen_vsim_active() {
    [ "$SCEN_MODE" = plugin ] || return 0
    [ "$SCEN_STYLE" = rxe ] || vsimctl port "$PW_VSIM_DEV" 1 state=active
}

# scen_loss 'IBSIM COMMAND': the SM's link goes down. Sets SCEN_MARK_LOSS
# (log line count before), SCEN_T_LOSS (harness clock just before the
# command is written: taken after the write, a busy machine could let ibsim
# and opensm act, and log, before the harness reads its clock).
scen_loss() {
    SCEN_MARK_LOSS=$(log_lines "$PW_OSM_LOG")
    pw__now; SCEN_T_LOSS=$PW_NOW
    sim_cmd "$1"
    scen_vsim_down
}

# scen_back 'IBSIM COMMAND': the SM's link comes back. Sets SCEN_MARK_BACK,
# SCEN_T_BACK (the reference instant of every measured time).
scen_back() {
    SCEN_MARK_BACK=$(log_lines "$PW_OSM_LOG")
    pw__now; SCEN_T_BACK=$PW_NOW
    sim_cmd "$1"
    scen_vsim_back
}

# scen_ibsim_pid: the ibsim process itself (a child of the timeout wrapper).
scen_ibsim_pid() {
    local kids
    kids=$(cat "/proc/$PW_SIM_PID/task/$PW_SIM_PID/children" 2>/dev/null) || kids=
    # shellcheck disable=SC2086  # a list of pids, split on purpose
    set -- $kids
    [ -n "${1:-}" ] || pw_fail "cannot find ibsim's pid (child of $PW_SIM_PID)"
    echo "$1"
}

# scen_mid_sweep_loss 'IBSIM COMMAND': make the link loss land inside a heavy
# sweep, deterministically: freeze ibsim, SIGHUP opensm (a heavy sweep, as
# the admin's "resweep"), wait until opensm has logged INITIATING HEAVY SWEEP
# (its first SMP is then waiting in ibsim), queue the command, thaw ibsim.
# ibsim serves the waiting SMPs before the console line, so the sweep has
# started and is answered by a fabric that changes under it.
scen_mid_sweep_loss() {
    local cmd=$1 ipid i
    ipid=$(scen_ibsim_pid)
    SCEN_MARK_LOSS=$(log_lines "$PW_OSM_LOG")
    kill -STOP "$ipid"
    kill -HUP "$PW_OSM_PID"
    if ! wait_log_soft "$PW_OSM_LOG" "$PW_RE_HEAVY" 5 "$SCEN_MARK_LOSS"; then
        kill -CONT "$ipid"
        pw_fail "no heavy sweep within 5 s of SIGHUP"
    fi
    SCEN_HUP_LINE=$PW_MATCH_LINE
    pw__sim_read
    PW_SIM_ACC=
    pw__now; SCEN_T_LOSS=$PW_NOW
    printf '%s\n' "$cmd" >&"$PW_SIM_FD"
    kill -CONT "$ipid"
    for i in $(seq 500); do
        pw__sim_read
        [[ $PW_SIM_ACC == *'sim> '* ]] && break
        pw_sleep 0.002
    done
    [[ $PW_SIM_ACC == *'sim> '* ]] || pw_fail "ibsim did not execute '$cmd' after thawing"
    case $PW_SIM_ACC in
        *'not found'*|*"can't"*|*'bad '*|*'is not linked'*) pw_fail "ibsim rejected '$cmd': $PW_SIM_ACC" ;;
    esac
    scen_vsim_down
}

# scen_sighup_sweep: what an admin does when the fabric looks wrong.
# Returns when the resulting sweep has reached SUBNET UP (or 10 s passed).
scen_sighup_sweep() {
    local mark
    mark=$(log_lines "$PW_OSM_LOG")
    kill -HUP "$PW_OSM_PID"
    wait_log_soft "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 10 "$mark" || true
}

# scen_align: with a sweep timer, start the next case SCEN_ALIGN_S after a
# timer sweep (opensm's timer runs freely from start-up, so off-schedule
# sweeps do not move it): the time to the next timer sweep is then about
# interval - SCEN_ALIGN_S, and no timer sweep falls inside a short case.
scen_align() {
    [ "$SCEN_INTERVAL" -gt 0 ] || return 0
    local last line t_tick mark
    mark=$(log_lines "$PW_OSM_LOG")
    last=$(grep_log "$PW_OSM_LOG" "$PW_RE_LIGHT" 0 | tail -n 1)
    pw__now
    if [ -n "$last" ]; then
        line=${last%%:*}
        t_tick=$(log_line_us "$PW_OSM_LOG" "$line")
        # Right after a timer sweep already (a stock case that recovered at
        # one): go on from there.
        if [ $(( PW_NOW - t_tick )) -lt 2500000 ]; then
            scen__align_after "$line" "$t_tick"
            return 0
        fi
    fi
    wait_log "$PW_OSM_LOG" "$PW_RE_LIGHT" $(( SCEN_INTERVAL + 3 )) "$mark"
    line=$PW_MATCH_LINE
    scen__align_after "$line" "$(log_line_us "$PW_OSM_LOG" "$line")"
}
scen__align_after() {
    local line=$1 t_tick=$2 rest
    # Let the timer sweep finish (light, or heavy if it found something).
    wait_log_soft "$PW_OSM_LOG" 'LIGHT SWEEP COMPLETE|-> SUBNET UP|SM port is down' 5 "$line" || true
    pw__s_to_us "$SCEN_ALIGN_S"; pw__now
    rest=$(( t_tick + PW_US - PW_NOW ))
    if [ "$rest" -gt 0 ]; then pw_sleep "$(( rest / 1000000 )).$(printf '%06d' $(( rest % 1000000 )))"; fi
}

# ------------------------------------------------------------------ outcome
# scen_outcome [BOUND_S]: after scen_back, wait for the first heavy sweep
# that starts after the link came back and for its ACTIVE phase and SUBNET
# UP; BOUND_S defaults to the plugin bound (plugin mode) or SCEN_STOCK_WAIT_S.
# Sets SCEN_US_HEAVY, SCEN_US_ACTIVE, SCEN_US_UP (microseconds after
# SCEN_T_BACK, empty when not seen), SCEN_LINE_UP, SCEN_RECOVERED_BY_SWEEP.
scen_outcome() {
    local bound=${1:-} t_end after line t
    if [ -z "$bound" ]; then
        if [ "$SCEN_MODE" = plugin ]; then bound=$(( SCEN_BOUND_MS / 1000 + 3 )); else bound=$SCEN_STOCK_WAIT_S; fi
    fi
    SCEN_US_HEAVY='' SCEN_US_ACTIVE='' SCEN_US_UP='' SCEN_LINE_UP='' SCEN_LINE_HEAVY='' SCEN_US_EVENT=''
    pw__s_to_us "$bound"; pw__now
    t_end=$(( SCEN_T_BACK + PW_US ))
    after=$SCEN_MARK_BACK
    # The first heavy sweep started after the link-back command.
    while :; do
        pw__now
        if ! wait_log_soft "$PW_OSM_LOG" "$PW_RE_HEAVY" "$(scen__left "$t_end")" "$after"; then
            return 0
        fi
        line=$PW_MATCH_LINE
        t=$(log_line_us "$PW_OSM_LOG" "$line")
        if [ "$t" -ge "$SCEN_T_BACK" ]; then break; fi
        after=$line
    done
    SCEN_LINE_HEAVY=$line
    SCEN_US_HEAVY=$(( t - SCEN_T_BACK ))
    # When the plugin saw the link back (the simulated driver's delay: the
    # vsimctl call after the ibsim command).
    if [ "$SCEN_MODE" = plugin ] \
        && wait_log_soft "$PW_OSM_LOG" "portwatch: $PW_VSIM_DEV:1 .*link back" 0.01 "$SCEN_MARK_BACK"; then
        SCEN_US_EVENT=$(( $(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE") - SCEN_T_BACK ))
    fi
    # Its ACTIVE phase and SUBNET UP (a failed sweep has neither; a later
    # sweep may bring them).
    if wait_log_soft "$PW_OSM_LOG" "$PW_RE_ACTIVE_SET" "$(scen__left "$t_end")" "$line"; then
        SCEN_US_ACTIVE=$(( $(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE") - SCEN_T_BACK ))
        if wait_log_soft "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" "$(scen__left "$t_end" 5)" "$PW_MATCH_LINE"; then
            SCEN_LINE_UP=$PW_MATCH_LINE
            SCEN_US_UP=$(( $(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE") - SCEN_T_BACK ))
        fi
    fi
}
# scen__left T_END_US [MIN_S]: seconds left until T_END_US (at least MIN_S, 0.01).
scen__left() {
    local left
    pw__now
    left=$(( $1 - PW_NOW ))
    [ -n "${2:-}" ] && [ "$left" -lt $(( $2 * 1000000 )) ] && left=$(( $2 * 1000000 ))
    [ "$left" -ge 10000 ] || left=10000
    printf '%d.%06d' $(( left / 1000000 )) $(( left % 1000000 ))
}

# ------------------------------------------------------------------ fabric check
# scen_check_fabric: is the fabric fully up again, with the SM's cable where
# SCEN_AT_SWITCH/SCEN_AT_PORT say? Checks, all under umad2sim as ibsim clients:
#   - smpquery (directed route): the SM port is Active;
#   - iblinkinfo from the SM: every cabled port Active, the SM's HCA seen on
#     the expected switch port, and the number of nodes;
#   - LID-routed SMPs (smpquery -L nodeinfo) from the SM to every LID
#     (large fabric: a sample), so the new routes work both ways;
#   - from a remote HCA: sminfo (an SMP to the SM LID that port was given)
#     and a PathRecord to the SM's LID from the SA (saquery), i.e. SM and SA
#     traffic on LID routes. (Not saquery -s: ibsim rewrites a port's
#     PortInfo when it links it, which drops the SM port's IsSM capability
#     bit, so after any Link/ReLink the SA lists no isSM port.)
# Sets SCEN_CHECK ("ok" or what failed); returns 0 when ok.
scen_check_fabric() {
    local out=$PW_DIR/diag/check.out rc=0 info bad n peer lids remote_lid sm_lid lid
    SCEN_CHECK=
    PW_PORT_STATE=
    diag_run "$SCEN_SM_HOST" smpquery -D portinfo 0 1 >"$out" 2>&1 || true
    PW_PORT_STATE=$(sed -n 's/^LinkState:\.*//p' "$out")
    if [ "$PW_PORT_STATE" != Active ]; then SCEN_CHECK="SM port ${PW_PORT_STATE:-unreadable}"; return 1; fi
    sm_lid=$(sed -n 's/^Lid:\.*//p' "$out")
    diag_run "$SCEN_SM_HOST" iblinkinfo >"$out" 2>&1 || rc=$?
    [ "$rc" = 0 ] || { SCEN_CHECK="iblinkinfo failed ($rc)"; return 1; }
    # "CA: Hca1:" / "Switch: 0x... Name:" headers, then one line per port:
    #   <guid|lid> <port>[..] ==( ... State/ Phys)==>  <lid> <port>[..] "<peer>" ( ... )
    info=$(awk -v sm="$SCEN_SM_HOST" '
        /^CA: / { node = $2; sub(/:$/, "", node); ca = 1; nodes++; next }
        /^Switch: / { node = $3; sub(/:$/, "", node); ca = 0; nodes++; swlid = ""; next }
        /==\(/ {
            if (!ca && swlid == "") { swlid = $1; lids = lids " " swlid }
            if (ca) { lids = lids " " $2 }
            if ($0 ~ /\[  \] "" \(/) next          # port without cable
            if ($0 !~ /Active\//) { bad++; badtxt = node " " $0 }
            if (ca && node == sm) {
                rest = $0; sub(/.*==>[ \t]*/, "", rest)
                split(rest, f, /[ \t\[]+/)
                q = rest; sub(/^[^"]*"/, "", q); sub(/".*/, "", q)
                peer = q "[" f[2] "]"
            }
        }
        END { printf "%d|%d|%s|%s|%s\n", nodes, bad, peer, lids, badtxt }' "$out")
    n=${info%%|*}; info=${info#*|}
    bad=${info%%|*}; info=${info#*|}
    peer=${info%%|*}; info=${info#*|}
    lids=${info%%|*}
    if [ "$bad" != 0 ]; then SCEN_CHECK="$bad cabled ports not Active (${info#*|})"; return 1; fi
    if [ "$n" != "$SCEN_NODES" ]; then SCEN_CHECK="iblinkinfo found $n nodes, expected $SCEN_NODES"; return 1; fi
    if [ "$peer" != "${SCEN_AT_SWITCH}[$SCEN_AT_PORT]" ]; then
        SCEN_CHECK="SM's HCA seen on $peer, expected ${SCEN_AT_SWITCH}[$SCEN_AT_PORT]"; return 1
    fi
    # LID-routed SMPs from the SM.
    read -r -a lids <<<"$lids"
    if [ "$SCEN_LID_SAMPLE" -gt 0 ] && [ ${#lids[@]} -gt "$SCEN_LID_SAMPLE" ]; then
        local -a pick=() i step=$(( ${#lids[@]} / SCEN_LID_SAMPLE ))
        for (( i = 0; i < ${#lids[@]}; i += step )); do pick+=("${lids[i]}"); done
        pick+=("${lids[${#lids[@]}-1]}")
        lids=("${pick[@]}")
    fi
    for lid in "${lids[@]}"; do
        lid=$(( lid ))
        [ "$lid" -gt 0 ] || { SCEN_CHECK="a port has LID 0"; return 1; }
        [ "$lid" = "$sm_lid" ] && continue
        if ! diag_run "$SCEN_SM_HOST" smpquery -t 300 nodeinfo "$lid" >"$out" 2>&1; then
            SCEN_CHECK="LID-routed SMP from the SM to LID $lid failed"; return 1
        fi
    done
    # SA traffic from a remote HCA (LID routes to and from the SM's LID).
    diag_run "$SCEN_REMOTE_HOST" smpquery -D portinfo 0 1 >"$out" 2>&1 || true
    remote_lid=$(sed -n 's/^Lid:\.*//p' "$out")
    # sminfo goes to the SM LID the remote port was given, LID-routed.
    if ! diag_run "$SCEN_REMOTE_HOST" sminfo -t 300 >"$out" 2>&1 \
        || ! grep -q "sm lid $sm_lid .*SMINFO_MASTER" "$out"; then
        SCEN_CHECK="sminfo from $SCEN_REMOTE_HOST failed: $(head -c 200 "$out")"; return 1
    fi
    if ! diag_run "$SCEN_REMOTE_HOST" saquery -t 300 --src-to-dst "$remote_lid:$sm_lid" >"$out" 2>&1 \
        || ! grep -q "dlid\.*$sm_lid\$" "$out"; then
        SCEN_CHECK="PathRecord $remote_lid -> $sm_lid from $SCEN_REMOTE_HOST failed"; return 1
    fi
    SCEN_CHECK=ok
    return 0
}

# ------------------------------------------------------------------ results
scen__ms() {   # US|empty -> "12.3" or "-"
    if [ -z "$1" ]; then echo -; else pw_fmt_ms "$1"; fi
}

# scen_row SCENARIO CASE HEAVY_N PLUGIN_SWEEPS RECOVERED NOTE: print one
# result line and append it to SCEN_RESULTS. Times from SCEN_US_*.
scen_row() {
    local row
    row=$(printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s' \
        "$1" "$2" "$SCEN_FABRIC" "$SCEN_INTERVAL" "$SCEN_MODE" "$SCEN_STYLE" \
        "$(scen__ms "$SCEN_US_EVENT")" "$(scen__ms "$SCEN_US_HEAVY")" "$(scen__ms "$SCEN_US_ACTIVE")" "$(scen__ms "$SCEN_US_UP")" \
        "$3" "$4" "$5" "$6")
    SCEN_ROWS+=("$row")
    pw_log "RESULT $1/$2 $SCEN_MODE ${SCEN_STYLE#-}: event $(scen__ms "$SCEN_US_EVENT") ms, heavy $(scen__ms "$SCEN_US_HEAVY") ms, ACTIVE $(scen__ms "$SCEN_US_ACTIVE") ms, SUBNET UP $(scen__ms "$SCEN_US_UP") ms, heavy sweeps $3, plugin sweeps $4, recovered: $5${6:+ ($6)}"
    if [ -n "$SCEN_RESULTS" ]; then printf '%s\n' "$row" >>"$SCEN_RESULTS"; fi
}

# scen_fail_case MSG: a plugin-mode failure; the script goes on with its
# other cases and fails at the end (scen_finish).
scen_fail_case() {
    pw_log "FAILED: $*"
    echo "---- portwatch lines since the loss:"
    grep_log "$PW_OSM_LOG" 'portwatch: ' "${SCEN_MARK_LOSS:-0}" | tail -n 20
    SCEN_FAILS+=("$*")
}

# scen_count_sweeps FROM_LINE [TO_LINE]: sets SCEN_N_HEAVY (opensm heavy
# sweeps) and SCEN_N_PW (sweeps the plugin requested, deferred ones included).
scen_count_sweeps() {
    SCEN_N_HEAVY=$(count_log "$PW_OSM_LOG" "$PW_RE_HEAVY" "$1" "${2:-}")
    if [ "$SCEN_MODE" = plugin ]; then
        # Lines of their own, and those a storm summary counted.
        SCEN_N_PW=$(( $(count_log "$PW_OSM_LOG" "$SCEN_RE_SWEEP" "$1" "${2:-}") +
                      $(count_summarised "$PW_OSM_LOG" "sweeps requested" "$1" "${2:-}") ))
    else
        SCEN_N_PW=-
    fi
}

# scen_finish_case SCENARIO CASE [NOTE]: after scen_back (and whatever the
# case did in between): measure the outcome, mirror ACTIVE to the driver,
# watch a quiet window, check the fabric, record the row, and in plugin mode
# assert what portwatch guarantees:
#   - the loss requested no sweep ([action=mark]; at most one sweep),
#   - exactly one sweep was requested for the return,
#   - a heavy sweep started within SCEN_BOUND_MS of the link-back command,
#   - the fabric recovered (scen_check_fabric),
#   - no heavy sweep and no sweep request in the quiet window after it.
# Stock mode: when opensm has not recovered within SCEN_STOCK_WAIT_S the row
# says so, and an admin's SIGHUP restores the fabric for the next case.
scen_finish_case() {
    local scen=$1 case=$2 note=${3:-} recovered mark_q mark_end n_loss n_back
    scen_outcome
    mark_q=$(log_lines "$PW_OSM_LOG")
    if [ -n "$SCEN_US_UP" ]; then
        wait_port_state "$SCEN_SM_HOST" 1 Active 2 || true
        scen_vsim_active
    fi
    if [ -n "$SCEN_US_UP" ]; then pw_sleep "$SCEN_QUIET_S"; fi
    mark_end=$(log_lines "$PW_OSM_LOG")
    if [ -n "$SCEN_US_UP" ] && scen_check_fabric; then
        recovered=yes
    else
        [ -n "$SCEN_US_UP" ] || scen_check_port_only
        recovered="no: $SCEN_CHECK"
        [ -n "$SCEN_US_UP" ] || recovered="no: $SCEN_CHECK after $SCEN_STOCK_WAIT_S s"
    fi
    scen_count_sweeps "$SCEN_MARK_LOSS" "$mark_end"
    if declare -F scen_note_hook >/dev/null; then note="${note:+$note; }$(scen_note_hook)"; fi
    scen_row "$scen" "$case" "$SCEN_N_HEAVY" "$SCEN_N_PW" "$recovered" "$note"
    if [ "$SCEN_MODE" = plugin ]; then
        n_loss=$(count_log "$PW_OSM_LOG" "$SCEN_RE_SWEEP" "$SCEN_MARK_LOSS" "$SCEN_MARK_BACK")
        n_back=$(count_log "$PW_OSM_LOG" "$SCEN_RE_SWEEP" "$SCEN_MARK_BACK" "$mark_end")
        [ "$n_loss" -le 1 ] || scen_fail_case "$scen/$case $SCEN_STYLE: $n_loss sweeps requested for one link loss"
        [ "$(count_log "$PW_OSM_LOG" "portwatch: $PW_VSIM_DEV:1 .* -> DOWN .*\[action=mark\]" "$SCEN_MARK_LOSS" "$SCEN_MARK_BACK")" -ge 1 ] \
            || scen_fail_case "$scen/$case $SCEN_STYLE: the link loss was not logged with [action=mark]"
        [ "$n_back" = 1 ] || scen_fail_case "$scen/$case $SCEN_STYLE: $n_back sweeps requested for one return of the link (expected 1)"
        if [ -z "$SCEN_US_HEAVY" ] || [ "$SCEN_US_HEAVY" -gt $(( SCEN_BOUND_MS * 1000 )) ]; then
            scen_fail_case "$scen/$case $SCEN_STYLE: no heavy sweep within $SCEN_BOUND_MS ms of the link's return (got $(scen__ms "$SCEN_US_HEAVY"))"
        fi
        [ "$recovered" = yes ] || scen_fail_case "$scen/$case $SCEN_STYLE: fabric not recovered: $recovered"
        if [ -n "$SCEN_US_UP" ]; then
            [ "$(count_log "$PW_OSM_LOG" "$PW_RE_HEAVY" "$mark_q" "$mark_end")" = 0 ] \
                || scen_fail_case "$scen/$case $SCEN_STYLE: heavy sweep in the quiet second after recovery (feedback loop?)"
            [ "$(count_log "$PW_OSM_LOG" "$SCEN_RE_SWEEP" "$mark_q" "$mark_end")" = 0 ] \
                || scen_fail_case "$scen/$case $SCEN_STYLE: sweep requested after the port went ACTIVE"
        fi
    elif [ "$recovered" != yes ]; then
        pw_log "stock opensm did not recover: SIGHUP (what an admin would do)"
        scen_sighup_sweep
        wait_port_state "$SCEN_SM_HOST" 1 Active 3 || pw_fail "fabric not restored by SIGHUP either"
    fi
}

# scen_check_port_only: SM port state only (cheap; for "not recovered").
scen_check_port_only() {
    local out=$PW_DIR/diag/check.out
    diag_run "$SCEN_SM_HOST" smpquery -D portinfo 0 1 >"$out" 2>&1 || true
    SCEN_CHECK="SM port $(sed -n 's/^LinkState:\.*//p' "$out")"
}

# scen_finish: PASS/FAIL for the whole script.
scen_finish() {
    echo "==== results ($SCEN_FABRIC, sweep_interval $SCEN_INTERVAL; ms after the link came back)"
    printf 'scenario\tcase\tfabric\tinterval\tmode\tstyle\tevent\theavy\tactive\tup\theavy_n\tpw_sweeps\trecovered\tnote\n'
    printf '%s\n' "${SCEN_ROWS[@]}"
    if [ ${#SCEN_FAILS[@]} -gt 0 ]; then
        pw_fail "${#SCEN_FAILS[@]} plugin check(s) failed: $(printf '%s; ' "${SCEN_FAILS[@]}")"
    fi
    pw_pass "${1:-${#SCEN_ROWS[@]} cases}"
}

# ------------------------------------------------------------------ several SMs
# One opensm at a time is "current" (the PW_OSM_* and PW_VSIM_* variables of
# tests/e2e/lib.sh); scen_slot_save NAME / scen_slot_use NAME switch between
# several. pw_cleanup_hook stops the saved ones that are not current.
SCEN_SLOT_VARS=(PW_OSM_PID PW_OSM_WRAP_PID PW_OSM_DIR PW_OSM_LOG PW_OSM_OUT PW_OSM_RC
    PW_OSM_START_US PW_OSM_STOP_MS PW_OSM_HOST PW_VSIM_DEV PW_VSIM_STYLE PW_VSIM_CONFIG
    PW_VSIM_SOCKET SCEN_SM_HOST SCEN_AT_SWITCH SCEN_AT_PORT)
declare -A SCEN_SLOTS=()
scen_slot_save() {
    local v
    for v in "${SCEN_SLOT_VARS[@]}"; do SCEN_SLOTS[$1.$v]=${!v:-}; done
    SCEN_SLOTS[$1]=1
}
scen_slot_use() {
    local v
    [ -n "${SCEN_SLOTS[$1]:-}" ] || pw_fail "no opensm slot '$1'"
    for v in "${SCEN_SLOT_VARS[@]}"; do printf -v "$v" '%s' "${SCEN_SLOTS[$1.$v]}"; done
    SCEN_SLOT=$1
}
# scen_slot_clear: forget the current opensm (it keeps running in its slot).
scen_slot_clear() {
    PW_OSM_PID='' PW_OSM_WRAP_PID='' PW_OSM_LOG='' PW_OSM_OUT='' PW_OSM_DIR='' SCEN_SLOT=''
}
pw_cleanup_hook() {
    local k pid wrap i
    for k in "${!SCEN_SLOTS[@]}"; do
        [[ $k == *.PW_OSM_PID ]] || continue
        pid=${SCEN_SLOTS[$k]}
        wrap=${SCEN_SLOTS[${k%.PW_OSM_PID}.PW_OSM_WRAP_PID]}
        [ -n "$pid" ] && [ "$pid" != "${PW_OSM_PID:-}" ] || continue
        if pw_pid_running "$pid"; then
            kill -TERM "$pid" 2>/dev/null
            for i in $(seq 60); do pw_pid_running "$pid" || break; pw_sleep 0.05; done
            pw_pid_running "$pid" && kill -KILL "$pid" 2>/dev/null
        fi
        [ -z "$wrap" ] || wait "$wrap" 2>/dev/null
    done
    return 0
}

# scen_vsim_setup_host STYLE TAG NODE_GUID PORT1_GUID: like vsim_setup, for
# the HCA of another host (its own config and socket, tagged TAG).
scen_vsim_setup_host() {
    local style=$1 tag=$2 node=$3 port=$4
    vsim_setup "$style"
    PW_VSIM_CONFIG=$PW_DIR/vsim-$tag-$PW_VSIM_DEV.conf
    PW_VSIM_SOCKET=$PW_DIR/vsim-$tag-$PW_VSIM_DEV.sock
    rm -f "$PW_VSIM_SOCKET"
    cat >"$PW_VSIM_CONFIG" <<EOC
add $PW_VSIM_DEV node_guid=$node style=$style state=active
port $PW_VSIM_DEV 1 guid=$port quiet
EOC
}
