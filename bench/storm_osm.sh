#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# A flap storm inside opensm: the plugin loaded, the verbs simulator raising
# EVENTS port events in SECONDS on the SM's port (DOWN/INIT toggles, as a
# flapping cable would make the HCA report), opensm at its default log_flags
# (0x03) and force_log_flush, sweep_interval 0.
#
#   bench/storm_osm.sh OUTDIR EVENTS SECONDS
#
# Writes OUTDIR/storm.txt (key=value): the portwatch thread's and opensm's CPU
# over the storm and the hold-off after it, opensm's VmRSS before and after,
# the heavy sweeps opensm started, the plugin's log lines and bytes and its
# summary; OUTDIR/rss.txt: VmRSS every 0.5 s. BENCH_METRICS=1 turns
# portwatch.metrics_file on and counts the file's rewrites (a new inode per
# rename, looked at every 10 ms: the plugin writes at most once per 100 ms).
set -euo pipefail
OUT=${1:?usage: storm_osm.sh OUTDIR EVENTS SECONDS}
EVENTS=${2:?}
SECS=${3:?}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
: "${abs_top_srcdir:?}" "${abs_top_builddir:?}"
PW_TEST_NAME=bench_storm_osm
# shellcheck source=../tests/e2e/lib.sh
. "$abs_top_srcdir/tests/e2e/lib.sh"
pw_init
pw_require_plugin

sim_start "$PW_NET_2SW"
vsim_setup mlx5
conf=$PW_DIR/opensm.conf
options=portwatch.holdoff_ms=100
METRICS=${BENCH_METRICS:-0}
PROM=$PW_DIR/textfile/portwatch.prom
if [ "$METRICS" = 1 ]; then
    mkdir -p "$PW_DIR/textfile"
    options+=" portwatch.metrics_file=$PROM"
fi
osm_make_conf "$conf" sweep_interval=0 log_flags=0x03 force_log_flush="${BENCH_FLUSH:-FALSE}" \
    event_plugin_name=portwatch "event_plugin_options=$options"
osm_start_plugin "$conf"
# The log is buffered (opensm's default): ask the fabric instead.
vsimctl wait-open mlx5_0
wait_port_state Hca1 1 Active 30 || pw_fail "the SM port is not ACTIVE 30 s after start"
pw_sleep 1

tid=
for t in /proc/"$PW_OSM_PID"/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = portwatch ] && tid=${t##*/}
done
[ -n "$tid" ] || pw_fail "no portwatch thread in opensm"
# cpu: thread and process CPU, VmRSS, as key_$sfx=value lines.
cpu() {
    local stat rest run
    read -r stat <"/proc/$PW_OSM_PID/task/$tid/stat"; rest=${stat##*) }
    # shellcheck disable=SC2086
    set -- $rest
    echo "pw_ticks_$sfx=$(( ${12} + ${13} ))"
    read -r run _ <"/proc/$PW_OSM_PID/task/$tid/schedstat"
    echo "pw_sched_ns_$sfx=$run"
    read -r stat <"/proc/$PW_OSM_PID/stat"; rest=${stat##*) }
    # shellcheck disable=SC2086
    set -- $rest
    echo "osm_ticks_$sfx=$(( ${12} + ${13} ))"
    echo "rss_kib_$sfx=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$PW_OSM_PID/status")"
}
{
    echo "events=$EVENTS"; echo "seconds=$SECS"; echo "holdoff_ms=100"; echo "metrics=$METRICS"
    echo "clk_tck=$(getconf CLK_TCK)"
    sfx=0; cpu
} >"$OUT/storm.txt"
: >"$OUT/rss.txt"
(
    while kill -0 "$PW_OSM_PID" 2>/dev/null; do
        echo "$EPOCHREALTIME $(awk '$1 == "VmRSS:" { print $2 }' "/proc/$PW_OSM_PID/status" 2>/dev/null)" >>"$OUT/rss.txt"
        sleep 0.5
    done
) &
sampler=$!
watcher=
if [ "$METRICS" = 1 ]; then
    (
        while [ ! -e "$PW_DIR/watch.stop" ]; do
            stat -c %i "$PROM" 2>/dev/null
            sleep 0.01
        done | uniq >"$OUT/inodes.txt"
    ) &
    watcher=$!
fi
t_start=$EPOCHREALTIME
python3 "$abs_top_srcdir/bench/vsim_storm.py" "$PW_VSIM_SOCKET" mlx5_0 1 "$EVENTS" "$SECS" >"$OUT/driver.txt" \
    || pw_fail "storm driver failed: $(cat "$OUT/driver.txt")"
pw_sleep 0.5   # the hold-off's last deferred sweep, and its sweep
{
    sfx=1; cpu
    for t in /proc/"$PW_OSM_PID"/task/*; do
        read -r stat <"$t/stat"; rest=${stat##*) }
        # shellcheck disable=SC2086
        set -- $rest
        echo "thread_ticks $(cat "$t/comm") ${t##*/} $(( ${12} + ${13} ))"
    done
    echo "window_s=$(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')"
    cat "$OUT/driver.txt"
} >>"$OUT/storm.txt"
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
if [ -n "$watcher" ]; then
    touch "$PW_DIR/watch.stop"
    wait "$watcher" 2>/dev/null || true
    # The first inode is the file as it was before the storm.
    echo "metrics_writes=$(( $(wc -l <"$OUT/inodes.txt") - 1 ))" >>"$OUT/storm.txt"
fi
osm_stop 10
wait_log "$PW_OSM_LOG" 'portwatch: stopped: ' 2
{
    # From the storm's first transition to the summary (excluded).
    echo "plugin_lines=$(awk '/portwatch: mlx5_0:1 ACTIVE -> / { on = 1 } on && /portwatch: / && !/portwatch: stopped:/ { n++ } END { print n + 0 }' "$PW_OSM_LOG")"
    echo "plugin_bytes=$(awk '/portwatch: mlx5_0:1 ACTIVE -> / { on = 1 } on && /portwatch: / && !/portwatch: stopped:/ { n += length($0) + 1 } END { print n + 0 }' "$PW_OSM_LOG")"
    # Each heavy sweep ends in SUBNET UP; the first one is opensm's start-up.
    echo "subnet_ups=$(( $(grep -c -- '-> SUBNET UP' "$PW_OSM_LOG") - 1 ))"
    echo "log_bytes=$(stat -c %s "$PW_OSM_LOG")"
    echo "stopped=${PW_MATCH_TEXT#*portwatch: }"
} >>"$OUT/storm.txt"
grep -a 'portwatch: ' "$PW_OSM_LOG" | tail -n 50 >"$OUT/portwatch-tail.log"
sim_stop
pw_pass "storm of $EVENTS events in $SECS s"
