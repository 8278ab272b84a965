#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# One fabric, one opensm, N bounces of the SM's own link; records raw timings.
#
#   bench/bounce.sh OUTDIR
#
# Settings come from the environment:
#   BENCH_MODE      stock | portwatch
#   BENCH_SWEEP     opensm sweep_interval (s)
#   BENCH_BOUNCES   number of bounces
#   BENCH_NET       ibsim net file (the SM runs on Hca1)
#   BENCH_DEVICES   portwatch: simulated verbs devices (default 1)
#   BENCH_PORTS     portwatch: ports per device (default 1); OpenSM's port GUID
#                   sits on the last port of the device the plugin serves last
#                   (lexical order), and every port bounces with it
#   BENCH_TIMEOUT_S how long to wait for the SM port to be ACTIVE again
#   BENCH_DOWN_MS   how long the link stays down (default 150)
#   BENCH_PHASE     1: wait a random time in [0, sweep_interval) before each
#                   bounce, so that bounces fall at random points of opensm's
#                   sweep timer (default 0)
#   BENCH_WATCH_US  smp_watch polling interval (default 2000)
#   BENCH_LOG_FLAGS opensm log_flags (default 0x07: bit 0x04 logs INITIATING
#                   HEAVY SWEEP; at opensm's default 0x03 only the plugin's
#                   telemetry line marks the start of its sweep)
#
# Writes to OUTDIR: meta (key=value), bounces.tsv (bounce, link-down and
# link-back instants in epoch microseconds, "active" or "timeout"),
# watch.out (smp_watch: every LinkState change of the SM port), opensm.log.
# The link-back instant is taken right after ibsim has executed ReLink; with
# portwatch the verbs event is raised at that moment (hardware order: the link
# trains, then the HCA reports it). bench/report.py does the arithmetic.
set -euo pipefail
OUT=${1:?usage: bounce.sh OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
: "${abs_top_srcdir:?}" "${abs_top_builddir:?}"
PW_TEST_NAME=bench_$(basename "$OUT")
# shellcheck source=../tests/e2e/lib.sh
. "$abs_top_srcdir/tests/e2e/lib.sh"
pw_init

MODE=${BENCH_MODE:?}
SWEEP=${BENCH_SWEEP:?}
BOUNCES=${BENCH_BOUNCES:?}
NET=${BENCH_NET:-$PW_NET_2SW}
DEVICES=${BENCH_DEVICES:-1}
PORTS=${BENCH_PORTS:-1}
TIMEOUT_S=${BENCH_TIMEOUT_S:-5}
DOWN_MS=${BENCH_DOWN_MS:-150}
PHASE=${BENCH_PHASE:-0}
WATCH_US=${BENCH_WATCH_US:-2000}
SETTLE_S=${BENCH_SETTLE_S:-0.15}
LOG_FLAGS=${BENCH_LOG_FLAGS:-0x07}
WATCH=$abs_top_builddir/bench/smp_watch
pw_need_file "$WATCH" "run make bench (it builds bench/smp_watch)"

now_us() { local t=$EPOCHREALTIME; BENCH_NOW=$(( ${t%[.,]*} * 1000000 + 10#${t#*[.,]} )); }

sim_start "$NET"
sim_cmd 'Dump "Hca1"'
node_guid=0x$(printf '%s\n' "$PW_SIM_REPLY" | sed -n 's/.*"Hca1".*nodeguid \([0-9a-fA-F]*\).*/\1/p')
port_guid=0x$(printf '%s\n' "$PW_SIM_REPLY" | awk '$2 == "[1]" { print $1; exit }')
[ "$node_guid" != 0x ] && [ "$port_guid" != 0x ] || pw_fail "cannot read Hca1's GUIDs from ibsim"

conf=$PW_DIR/opensm.conf
# force_log_flush FALSE (opensm's default): the log is read after opensm exits.
common=(sweep_interval="$SWEEP" force_log_flush=FALSE log_flags="$LOG_FLAGS")
DEVS=()
if [ "$MODE" = portwatch ]; then
    pw_require_plugin
    PW_VSIM_CONFIG=$PW_DIR/vsim.conf
    PW_VSIM_SOCKET=$PW_DIR/vsim.sock
    : >"$PW_VSIM_CONFIG"
    for d in $(seq 0 $(( DEVICES - 1 ))); do
        DEVS+=("mlx5_$d")
    done
    # The device the plugin serves last: the greatest name.
    WATCHED_DEV=$(printf '%s\n' "${DEVS[@]}" | LC_ALL=C sort | tail -n 1)
    for d in "${DEVS[@]}"; do
        if [ "$d" = "$WATCHED_DEV" ]; then
            echo "add $d node_guid=$node_guid style=mlx5 ports=$PORTS state=active" >>"$PW_VSIM_CONFIG"
            echo "port $d $PORTS guid=$port_guid quiet" >>"$PW_VSIM_CONFIG"
        else
            printf 'add %s node_guid=0x0002c90300%02x0000 style=mlx5 ports=%s state=active\n' \
                "$d" "${d#mlx5_}" "$PORTS" >>"$PW_VSIM_CONFIG"
        fi
    done
    osm_make_conf "$conf" "${common[@]}" event_plugin_name=portwatch \
        event_plugin_options=portwatch.holdoff_ms=100
    osm_start_plugin "$conf"
elif [ "$MODE" = stock ]; then
    osm_make_conf "$conf" "${common[@]}"
    osm_start "$conf"
else
    pw_fail "BENCH_MODE must be stock or portwatch"
fi

# First SUBNET UP: poll the log file's size growth is not enough with a
# buffered log, so wait for the SM port to be ACTIVE instead (smp_watch).
: >"$OUT/watch.out"
( pw__close_sim_fd; cd "$PW_DIR/diag" && exec "${PW_PDEATH[@]}" env IBSIM_SOCKNAME="$PW_SIM_NAME" \
    SIM_HOST=Hca1 LD_PRELOAD="$PW_UMAD2SIM" "$WATCH" 1 "$WATCH_US" "$PW_OSM_MAX_S" ) \
    </dev/null >>"$OUT/watch.out" 2>"$OUT/watch.err" &
WATCH_PID=$!
exec {WATCH_FD}<"$OUT/watch.out"
WATCH_STATE=0 WATCH_T=0 WATCH_PART=
# watch_read: consume smp_watch's new lines (no fork); keeps the last state.
# A line caught half-written is kept until its end arrives.
watch_read() {
    local line
    while :; do
        line=
        if IFS= read -r -u "$WATCH_FD" line; then
            line=$WATCH_PART$line WATCH_PART=
            [ -n "$line" ] || continue
            WATCH_T=${line%% *}
            line=${line#* }
            WATCH_STATE=${line%% *}
        else
            WATCH_PART+=$line
            return 0
        fi
    done
}
# wait_active AFTER_US TIMEOUT_S: until smp_watch saw ACTIVE (4) after AFTER_US.
wait_active() {
    local after=$1 t_end
    pw__s_to_us "$2"; now_us; t_end=$(( BENCH_NOW + PW_US ))
    while :; do
        watch_read
        if [ "$WATCH_STATE" = 4 ] && [ "$WATCH_T" -ge "$after" ]; then return 0; fi
        now_us
        [ "$BENCH_NOW" -lt "$t_end" ] || return 1
        pw_sleep "$3"
    done
}
now_us; t_start=$BENCH_NOW
wait_active "$t_start" 120 0.01 || pw_fail "the SM port never became ACTIVE after opensm started"
pw_log "SM port ACTIVE (first sweep done)"

if [ "$MODE" = portwatch ]; then
    coproc VSIM { exec python3 "$abs_top_srcdir/bench/vsim_relay.py" "$PW_VSIM_SOCKET"; }
    VSIM_IN=${VSIM[1]} VSIM_OUT=${VSIM[0]}
    # Wait for the relay to be up (python takes a while to start on a busy
    # machine): the first bounce must not pay for it.
    printf 'stats\n' >&"$VSIM_IN"
    IFS= read -r -t 60 -u "$VSIM_OUT" reply || pw_fail "the verbs simulator relay did not answer"
fi
# vsim_all STATE: set every simulated port to STATE in one write (OpenSM's
# port last) and check the replies.
vsim_all() {
    local cmds='' n=0 d p reply
    for d in "${DEVS[@]}"; do
        for (( p = 1; p <= PORTS; p++ )); do
            [ "$d" = "$WATCHED_DEV" ] && [ "$p" = "$PORTS" ] && continue
            cmds+="port $d $p state=$1"$'\n'; n=$(( n + 1 ))
        done
    done
    cmds+="port $WATCHED_DEV $PORTS state=$1"$'\n'; n=$(( n + 1 ))
    printf '%s' "$cmds" >&"$VSIM_IN"
    while [ "$n" -gt 0 ]; do
        IFS= read -r -t 10 -u "$VSIM_OUT" reply || pw_fail "no reply from the verbs simulator"
        case $reply in ok*) ;; *) pw_fail "verbs simulator: $reply" ;; esac
        n=$(( n - 1 ))
    done
}

{
    echo "mode=$MODE"; echo "sweep_interval=$SWEEP"; echo "bounces=$BOUNCES"
    echo "net=$(basename "$NET")"; echo "devices=$DEVICES"; echo "ports=$PORTS"
    echo "down_ms=$DOWN_MS"; echo "timeout_s=$TIMEOUT_S"; echo "watch_us=$WATCH_US"
    echo "phase=$PHASE"; echo "log_flags=$LOG_FLAGS"
} >"$OUT/meta"
printf 'bounce\tt_down_us\tt_back_us\tt_injected_us\tresult\n' >"$OUT/bounces.tsv"
RANDOM=$(( $$ % 32768 ))
recovered=0
for b in $(seq 1 "$BOUNCES"); do
    if [ "$PHASE" = 1 ] && [ "$SWEEP" -gt 0 ]; then
        # Uniform in [0, sweep_interval): the bounce lands anywhere in the timer's period.
        pw_sleep "$(( RANDOM * SWEEP / 32768 )).$(printf '%03d' $(( RANDOM % 1000 )))"
    fi
    sim_cmd 'Unlink "Hca1"[1]'
    now_us; t_down=$BENCH_NOW
    if [ "$MODE" = portwatch ]; then vsim_all down; fi
    pw_sleep "$(printf '%d.%03d' $(( DOWN_MS / 1000 )) $(( DOWN_MS % 1000 )))"
    sim_cmd 'ReLink "Hca1"[1]'
    now_us; t_back=$BENCH_NOW
    if [ "$MODE" = portwatch ]; then vsim_all init; fi
    now_us; t_injected=$BENCH_NOW
    if wait_active "$t_back" "$TIMEOUT_S" 0.002; then
        result=active; recovered=$(( recovered + 1 ))
        # What the HCA reports next, once the SM has activated the port.
        if [ "$MODE" = portwatch ]; then vsim_all active; fi
    else
        result=timeout
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$b" "$t_down" "$t_back" "$t_injected" "$result" >>"$OUT/bounces.tsv"
    pw_log "bounce $b: $result ($(( (WATCH_T - t_back) / 1000 )) ms)"
    pw_sleep "$SETTLE_S"
done

kill -TERM "$WATCH_PID" 2>/dev/null || true
wait "$WATCH_PID" || true
if [ "$MODE" = portwatch ]; then
    exec {VSIM_IN}>&-
    wait "$VSIM_PID" 2>/dev/null || true
fi
osm_stop 10
cp "$PW_OSM_LOG" "$OUT/opensm.log"
if [ "$MODE" = portwatch ]; then cp "$PW_VSIM_CONFIG" "$OUT/vsim.conf"; fi
sim_stop
pw_pass "$recovered of $BOUNCES bounces recovered"
