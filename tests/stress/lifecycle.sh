#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Lifecycle stress: stock opensm with libportwatch.so started and stopped
# over and over on an ibsim fabric, an event storm running against the verbs
# simulator, SIGTERM at random points - including while the plugin's
# create() is running.
#
#   tests/stress/lifecycle.sh [CYCLES]       (default 200; PW_CYCLES too)
#
# Run from a built tree (make check builds the plugin, the simulator and
# vsimctl), or with abs_top_builddir set. PW_SEED=N repeats a run (the seed
# is printed). PW_KEEP=1 keeps the work directory.
#
# Run 200 cycles: tests/stress/lifecycle.sh (from the build tree, after make
# check); make check runs 20 of them (tests/e2e/test_lifecycle.sh).
#
# Each cycle starts a fresh opensm (portwatch.holdoff_ms 0, 10 or 100) and
# picks where SIGTERM lands:
#   early   at once or 0-60 ms after the start: before opensm blocks its
#           signals (it then dies of the signal, status 143) or during its
#           start-up;
#   create  0-300 ms into create(), held inside ibv_open_device
#           by the simulator ('delay open_device', 800 ms): the "loaded" line is
#           out, the "watching" line not yet;
#   anytime 0-400 ms after the start, wherever opensm is;
#   running after SUBNET UP: the storm runs for up to 1 s, pauses for the
#           leak check, resumes, and SIGTERM comes 0-300 ms later.
# The storm, from the start of opensm to its exit: vsimctl port state
# changes (down/init/active), LID change events and now and then a DEVICE_FATAL
# (which makes the plugin close and reopen the device).
#
# Asserted every cycle:
#   - no hang: opensm exits within 5 s of SIGTERM (20 s under sanitizers);
#   - no crash: exit status 0, or 143 (killed by SIGTERM) only if the
#     plugin was never loaded (opensm blocks SIGTERM before loading plugins);
#   - delete() returned: a loaded plugin logged exactly one "portwatch:
#     stopped:" line; a plugin caught in create() still logged "watching";
#   - no leak ("running" cycles, storm paused, just before the stop): one
#     thread named portwatch, the same number of threads and of fds (and of
#     eventfds) as right after SUBNET UP, one verbs context open;
#   - no "verbs API misuse" from the simulator, no sanitizer report.
# Ends with the counts and "PASS: ..." or "FAIL: ...".
set -euo pipefail
CYCLES=${1:-${PW_CYCLES:-200}}
export PW_TEST_NAME=${PW_TEST_NAME:-stress_lifecycle}
. "$(dirname "$0")/../e2e/lib.sh"
pw_init
pw_require_plugin
pw_need_cmd timeout coreutils

SEED=${PW_SEED:-$(( $$ ^ ${EPOCHSECONDS:-0} ))}
RANDOM=$SEED
pw_log "lifecycle stress: $CYCLES cycles, seed $SEED"

# Exit within 5 s of SIGTERM; 20 s in a sanitizer build, where opensm's exit
# includes LeakSanitizer's scan with full stack unwinding.
STOP_BOUND_S=5
[ -z "${PW_SANITIZER_PRELOAD:-}" ] || STOP_BOUND_S=20
declare -A kinds=() stops=()
n_rc0=0 n_sig=0 n_stopped=0 n_leak_checks=0 n_in_create=0 n_fatal=0 stop_max_us=0
STORM_PID=

# ---------------------------------------------------------------- storm
storm_loop() {   # SOCKET DEVICE: runs until SIGTERM, then ends after the current vsimctl
    local sock=$1 dev=$2 args stop='' pause
    trap 'stop=1' TERM
    trap - EXIT INT ERR
    pw__close_sim_fd
    exec {pause}<>"$PW_DIR/storm.fifo"   # read -t on it: a sleep without a fork
    while [ -z "$stop" ]; do
        read -r -t 0.005 -u "$pause" _ || true
        case $(( RANDOM % 20 )) in
            0) args="fatal $dev" ;;
            1|2) args="event $dev 1 lid_change" ;;
            3|4|5|6|7|8) args="port $dev 1 state=down" ;;
            9|10|11|12|13|14) args="port $dev 1 state=init" ;;
            *) args="port $dev 1 state=active" ;;
        esac
        # shellcheck disable=SC2086
        timeout 5 "$PW_VSIMCTL" -s "$sock" -t 3 $args >/dev/null 2>&1 </dev/null || true
    done
}

[ -p "$PW_DIR/storm.fifo" ] || mkfifo "$PW_DIR/storm.fifo"

storm_start() {
    storm_loop "$PW_VSIM_SOCKET" "$PW_VSIM_DEV" &
    STORM_PID=$!
}

storm_stop() {
    [ -n "$STORM_PID" ] || return 0
    kill -TERM "$STORM_PID" 2>/dev/null || true
    wait "$STORM_PID" 2>/dev/null || true   # the loop ends after its current vsimctl
    STORM_PID=
}

# The harness's exit handler, after stopping the storm (keeping the status).
# shellcheck disable=SC2154  # pw_rc is assigned inside the trap string
trap 'pw_rc=$?; storm_stop; (exit $pw_rc); pw__on_exit' EXIT

# ---------------------------------------------------------------- /proc
# proc_counts PID: sets P_THREADS, P_PW_THREADS, P_FDS, P_EVENTFDS.
proc_counts() {
    local pid=$1 t name f target
    P_THREADS=0 P_PW_THREADS=0 P_FDS=0 P_EVENTFDS=0
    for t in /proc/"$pid"/task/*; do
        [ -e "$t" ] || continue
        P_THREADS=$(( P_THREADS + 1 ))
        { IFS= read -r name <"$t/comm"; } 2>/dev/null || name=
        [ "$name" = portwatch ] && P_PW_THREADS=$(( P_PW_THREADS + 1 ))
    done
    for f in /proc/"$pid"/fd/*; do
        target=$(readlink "$f" 2>/dev/null) || continue
        P_FDS=$(( P_FDS + 1 ))
        [ "$target" = 'anon_inode:[eventfd]' ] && P_EVENTFDS=$(( P_EVENTFDS + 1 ))
    done
    return 0
}

open_contexts() {
    local out
    out=$(timeout 5 "$PW_VSIMCTL" -s "$PW_VSIM_SOCKET" -t 3 stats "$PW_VSIM_DEV" 2>&1 </dev/null) || true
    out=${out#* open_contexts=}
    echo "${out%% *}"
}

# leak_check: compare with the baseline taken after SUBNET UP. A device the
# storm just failed may be between close and reopen (100 ms): retry for 1 s.
leak_check() {
    local i ctx='?'
    for i in $(seq 50); do
        proc_counts "$PW_OSM_PID"
        ctx=$(open_contexts)
        if [ "$P_PW_THREADS" = 1 ] && [ "$P_THREADS" = "$B_THREADS" ] && [ "$P_FDS" = "$B_FDS" ] &&
            [ "$P_EVENTFDS" = "$B_EVENTFDS" ] && [ "$ctx" = 1 ]; then
            n_leak_checks=$(( n_leak_checks + 1 ))
            return 0
        fi
        pw_sleep 0.02
    done
    ls -l /proc/"$PW_OSM_PID"/fd/ || true
    pw_fail "cycle $cycle: leak check: portwatch threads $P_PW_THREADS (want 1), threads $P_THREADS" \
        "(baseline $B_THREADS), fds $P_FDS (baseline $B_FDS), eventfds $P_EVENTFDS" \
        "(baseline $B_EVENTFDS), open verbs contexts $ctx (want 1)"
}

# ---------------------------------------------------------------- one cycle
cycle_kind() {   # sets KIND (not in a subshell: $RANDOM must advance here)
    local r=$(( RANDOM % 100 ))
    if [ $r -lt 15 ]; then KIND=early
    elif [ $r -lt 35 ]; then KIND=create
    elif [ $r -lt 55 ]; then KIND=anytime
    else KIND=running
    fi
}

ms_sleep() { pw_sleep "$(printf '0.%03d' "$1")"; }

run_cycle() {
    local kind holdoff loaded stopped watching rc t_us errs
    cycle_kind
    kind=$KIND
    kinds[$kind]=$(( ${kinds[$kind]:-0} + 1 ))
    case $(( RANDOM % 3 )) in 0) holdoff=0 ;; 1) holdoff=10 ;; *) holdoff=100 ;; esac

    vsim_setup mlx5
    [ "$kind" = create ] && echo 'delay open_device ms=800 count=1' >>"$PW_VSIM_CONFIG"
    osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0 event_plugin_name=portwatch \
        "event_plugin_options=portwatch.holdoff_ms=$holdoff portwatch.retry_max_ms=200"
    osm_start_plugin "$PW_DIR/opensm.conf"

    case $kind in
        early)
            storm_start
            if (( RANDOM % 2 )); then ms_sleep $(( RANDOM % 61 )); fi
            ;;
        create)
            storm_start
            wait_log "$PW_OSM_LOG" 'portwatch: loaded' 10
            ms_sleep $(( RANDOM % 300 ))
            # Inside create() if it has not said "watching" yet (a heavily
            # loaded machine may see the "loaded" line late: then counted
            # as an "anytime" cycle, not a failure).
            if [ "$(count_log "$PW_OSM_LOG" 'portwatch: watching')" = 0 ]; then
                n_in_create=$(( n_in_create + 1 ))
            fi
            ;;
        anytime)
            storm_start
            ms_sleep $(( RANDOM % 401 ))
            ;;
        running)
            wait_log "$PW_OSM_LOG" 'portwatch: watching' 10
            wait_log "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 10
            proc_counts "$PW_OSM_PID"
            B_THREADS=$P_THREADS B_FDS=$P_FDS B_EVENTFDS=$P_EVENTFDS
            [ "$P_PW_THREADS" = 1 ] || pw_fail "cycle $cycle: $P_PW_THREADS portwatch threads after start"
            [ "$P_EVENTFDS" -ge 1 ] || pw_fail "cycle $cycle: no eventfd after start"
            storm_start
            ms_sleep $(( RANDOM % 1000 ))
            storm_stop
            leak_check
            storm_start
            ms_sleep $(( RANDOM % 301 ))
            ;;
    esac

    pw__now; t_us=$PW_NOW
    osm_stop "$STOP_BOUND_S"
    pw__now; t_us=$(( PW_NOW - t_us ))
    [ "$t_us" -gt "$stop_max_us" ] && stop_max_us=$t_us
    storm_stop
    rc=$PW_OSM_RC
    stops[$rc]=$(( ${stops[$rc]:-0} + 1 ))

    loaded=$(count_log "$PW_OSM_LOG" 'portwatch: loaded')
    stopped=$(count_log "$PW_OSM_LOG" 'portwatch: stopped: ')
    watching=$(count_log "$PW_OSM_LOG" 'portwatch: watching')
    n_fatal=$(( n_fatal + $(count_log "$PW_OSM_LOG" 'portwatch: verbs device .* failed') ))
    case $rc in
        0) n_rc0=$(( n_rc0 + 1 )) ;;
        143)
            [ "$loaded" = 0 ] || pw_fail "cycle $cycle ($kind): opensm died of SIGTERM after loading the plugin"
            n_sig=$(( n_sig + 1 ))
            ;;
        *) pw_fail "cycle $cycle ($kind): opensm exit status $rc (crash?)" ;;
    esac
    if [ "$loaded" = 1 ]; then
        [ "$stopped" = 1 ] || pw_fail "cycle $cycle ($kind): plugin loaded but $stopped 'stopped:' lines (delete() did not return?)"
        [ "$watching" -ge 1 ] || pw_fail "cycle $cycle ($kind): plugin loaded but never watching"
        n_stopped=$(( n_stopped + 1 ))
    fi
    if grep -a -q 'verbs API misuse' "$PW_OSM_OUT"; then
        pw_fail "cycle $cycle ($kind): $(grep -a -m1 'verbs API misuse' "$PW_OSM_OUT")"
    fi
    errs=$(grep -a 'portwatch: ERROR' "$PW_OSM_LOG" | grep -v -E 'verbs device [^ ]+ failed \(|cannot open verbs device' || true)
    [ -z "$errs" ] || pw_fail "cycle $cycle ($kind): unexpected plugin error: $errs"

    # A killed opensm leaks its ibsim client slot: give the next cycle a fresh ibsim.
    if [ "$rc" != 0 ] || [ $(( cycle % 8 )) = 0 ]; then sim_stop quiet; fi
    rm -rf "$PW_OSM_DIR"
}

t_start=$SECONDS
for cycle in $(seq "$CYCLES"); do
    [ -n "$PW_SIM_PID" ] || sim_start "$PW_NET_2SW"
    run_cycle
    if [ $(( cycle % 20 )) = 0 ]; then
        pw_log "cycle $cycle/$CYCLES: exit 0: $n_rc0, killed by SIGTERM before loading: $n_sig, leak checks: $n_leak_checks"
    fi
done
sim_stop quiet
if [ "${kinds[create]:-0}" -ge 5 ] && [ "$n_in_create" = 0 ]; then
    pw_fail "none of ${kinds[create]} create cycles got SIGTERM inside create()"
fi

summary="$CYCLES cycles in $(( SECONDS - t_start )) s (seed $SEED):"
for k in early create anytime running; do summary+=" $k=${kinds[$k]:-0}"; done
summary+="; exit 0: $n_rc0, SIGTERM before the plugin loaded (status 143): $n_sig"
summary+="; SIGTERM inside create(): $n_in_create; 'stopped:' after every load: $n_stopped"
summary+="; leak checks passed: $n_leak_checks; device failures seen by the plugin: $n_fatal"
summary+="; slowest exit after SIGTERM: $(pw_fmt_ms "$stop_max_us") ms"
echo "$summary"
pw_pass "$summary"
