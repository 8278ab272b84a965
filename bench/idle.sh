#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Idle cost of the plugin inside a running opensm.
#
#   bench/idle.sh OUTDIR VARIANT SECONDS
#
# VARIANT: stock (plain opensm), vsim (opensm with the verbs simulator
# preloaded, no plugin), plugin (the simulator and libportwatch.so) or
# plugin-real (libportwatch.so on the real libibverbs, which finds no device
# here: memory only, as in production minus a device context). opensm
# runs on net.2sw2path4hca with its default sweep_interval (10 s); once its
# port is ACTIVE and a 2 s settling pause is over, the script reads
# /proc/<opensm>/status (VmRSS, VmHWM) and, for the plugin, the "portwatch"
# thread's context switches, utime+stime and schedstat run time; again
# SECONDS later. Writes OUTDIR/idle.txt (key=value).
set -euo pipefail
OUT=${1:?usage: idle.sh OUTDIR VARIANT SECONDS}
VARIANT=${2:?}
SECONDS_IDLE=${3:?}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
: "${abs_top_srcdir:?}" "${abs_top_builddir:?}"
PW_TEST_NAME=bench_idle_$VARIANT
# shellcheck source=../tests/e2e/lib.sh
. "$abs_top_srcdir/tests/e2e/lib.sh"
pw_init

sim_start "$PW_NET_2SW"
conf=$PW_DIR/opensm.conf
case $VARIANT in
    stock)
        osm_make_conf "$conf"
        osm_start "$conf" ;;
    vsim|plugin)
        pw_require_plugin
        vsim_setup mlx5
        if [ "$VARIANT" = plugin ]; then
            osm_make_conf "$conf" event_plugin_name=portwatch
        else
            osm_make_conf "$conf"
        fi
        osm_start_plugin "$conf" ;;
    plugin-real)
        # The real libibverbs (no simulator): no verbs device here, so the
        # plugin retries with its backoff; only its memory is of interest.
        pw_require_plugin
        osm_make_conf "$conf" event_plugin_name=portwatch
        osm_start "$conf" LD_LIBRARY_PATH="$PW_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
    *) pw_fail "VARIANT must be stock, vsim, plugin or plugin-real" ;;
esac
osm_wait_up 30
case $VARIANT in
    plugin) wait_log "$PW_OSM_LOG" "portwatch: watching mlx5_0:1" 5 ;;
    plugin-real) wait_log "$PW_OSM_LOG" "portwatch: loaded" 5 ;;
esac
pw_sleep 2

status_field() { awk -v k="$2:" '$1 == k { print $2; exit }' "$1"; }
portwatch_tid() {
    local t
    for t in /proc/"$PW_OSM_PID"/task/*; do
        if [ "$(cat "$t/comm" 2>/dev/null)" = portwatch ]; then echo "${t##*/}"; return 0; fi
    done
    return 0
}
# sample SUFFIX: append key=value lines for this instant.
sample() {
    local sfx=$1 p=/proc/$PW_OSM_PID tid stat rest
    {
        echo "rss_kib_$sfx=$(status_field "$p/status" VmRSS)"
        echo "hwm_kib_$sfx=$(status_field "$p/status" VmHWM)"
        echo "threads_$sfx=$(status_field "$p/status" Threads)"
        read -r stat <"$p/stat"; rest=${stat##*) }
        # shellcheck disable=SC2086
        set -- $rest
        echo "osm_cpu_ticks_$sfx=$(( ${12} + ${13} ))"
        tid=$(portwatch_tid)
        if [ -n "$tid" ]; then
            echo "pw_tid=$tid"
            echo "pw_vol_$sfx=$(status_field "$p/task/$tid/status" voluntary_ctxt_switches)"
            echo "pw_nonvol_$sfx=$(status_field "$p/task/$tid/status" nonvoluntary_ctxt_switches)"
            read -r stat <"$p/task/$tid/stat"; rest=${stat##*) }
            # shellcheck disable=SC2086
            set -- $rest
            echo "pw_cpu_ticks_$sfx=$(( ${12} + ${13} ))"
            read -r stat <"$p/task/$tid/schedstat"
            echo "pw_sched_ns_$sfx=${stat%% *}"
        fi
    } >>"$OUT/idle.txt"
}
{
    echo "variant=$VARIANT"
    echo "seconds=$SECONDS_IDLE"
    echo "clk_tck=$(getconf CLK_TCK)"
} >"$OUT/idle.txt"
sample 0
pw_log "idle for $SECONDS_IDLE s"
pw_sleep "$SECONDS_IDLE"
sample 1
# Resident memory by mapping (file name, [heap], [anon], ...) and the totals.
awk '/^[0-9a-f]+-[0-9a-f]+ / { name = ($6 == "" ? "[anon]" : $6) } /^Rss:/ { rss[name] += $2 }
     END { for (n in rss) print rss[n], n }' "/proc/$PW_OSM_PID/smaps" | sort -k2 >"$OUT/smaps.txt"
awk '$1 == "Rss:" || $1 == "Pss:" || $1 == "Anonymous:" { k = tolower(substr($1, 1, length($1) - 1)); print "rollup_" k "_kib=" $2 }' \
    "/proc/$PW_OSM_PID/smaps_rollup" >>"$OUT/idle.txt"
osm_stop 10
grep -a 'portwatch: ' "$PW_OSM_LOG" >"$OUT/portwatch.log" || true
sim_stop
pw_pass "$VARIANT idle for $SECONDS_IDLE s"
