#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# valgrind memcheck over stock opensm with libportwatch.so, on an ibsim
# fabric with the verbs simulator (as in the e2e tests), through a scenario:
# link bounces (each answered by a heavy sweep), a DEVICE_FATAL and a removal
# (the plugin closes and reopens the device), an event flood, then SIGTERM.
#
#   tests/stress/valgrind.sh [BOUNCES]        (default 5)
#
# Run from a built tree (after make check), or with abs_top_builddir set.
# Needs the Debian package valgrind. PW_KEEP=1 keeps the work directory with
# valgrind's log.
#
# Passes when valgrind reports 0 errors and 0 bytes definitely lost in
# blocks allocated by the plugin (a loss record counts as the plugin's when a
# frame of its allocation stack is the plugin's: in libportwatch.so, or a
# portwatch function or source file). Leaks of opensm and
# of the test doubles are counted and printed, not judged; errors anywhere
# in the process count. Prints the numbers either way.
set -euo pipefail
BOUNCES=${1:-5}
export PW_TEST_NAME=${PW_TEST_NAME:-valgrind_opensm}
. "$(dirname "$0")/../e2e/lib.sh"
pw_init
pw_require_plugin
pw_need_cmd valgrind valgrind

VG_LOG=$PW_DIR/valgrind.log
SUPP=$PW_SRCDIR/tests/sanitizers/valgrind.supp
sim_start "$PW_NET_2SW"
vsim_setup mlx5
DEV=$PW_VSIM_DEV
osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0 event_plugin_name=portwatch \
    'event_plugin_options=portwatch.holdoff_ms=100 portwatch.retry_max_ms=500'

# opensm itself is started through this wrapper (the harness records its
# pid; valgrind runs opensm in that same process).
cat >"$PW_DIR/opensm-valgrind" <<EOF
#!/bin/sh
exec valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect \\
    --errors-for-leak-kinds=none --num-callers=40 --keep-debuginfo=yes \\
    --track-origins=yes --suppressions="$SUPP" --log-file="$VG_LOG" "$PW_OPENSM" "\$@"
EOF
chmod +x "$PW_DIR/opensm-valgrind"
real_opensm=$PW_OPENSM
PW_OPENSM=$PW_DIR/opensm-valgrind
t_start=$SECONDS
osm_start_plugin "$PW_DIR/opensm.conf"
PW_OPENSM=$real_opensm
wait_log "$PW_OSM_LOG" "portwatch: watching $DEV:1" 120
osm_wait_up 120

sweeps() { count_log "$PW_OSM_LOG" 'portwatch: .*\[action=sweep\]'; }

for b in $(seq "$BOUNCES"); do
    mark=$(log_lines "$PW_OSM_LOG")
    sim_cmd 'Unlink "Hca1"[1]'
    vsimctl port "$DEV" 1 state=down
    wait_log "$PW_OSM_LOG" "portwatch: $DEV:1 .*-> DOWN .*\[action=" 60 "$mark"
    pw_sleep 0.3
    before=$(sweeps)
    sim_cmd 'ReLink "Hca1"[1]'
    vsimctl port "$DEV" 1 state=init
    wait_log "$PW_OSM_LOG" 'portwatch: .*\[action=sweep\]' 60 "$mark"
    wait_log "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 120 "$PW_MATCH_LINE"
    vsimctl port "$DEV" 1 state=active
    vsimctl event "$DEV" 1 lid_change
    pw_log "bounce $b: sweep requested and SUBNET UP (sweeps so far: $(( before + 1 )))"
done

pw_log "DEVICE_FATAL, then a removal and the device's return"
mark=$(log_lines "$PW_OSM_LOG")
vsimctl fatal "$DEV"
wait_log "$PW_OSM_LOG" "portwatch: opened verbs device $DEV" 60 "$mark"
mark=$(log_lines "$PW_OSM_LOG")
vsimctl remove "$DEV"
wait_log "$PW_OSM_LOG" "portwatch: verbs device $DEV failed" 60 "$mark"
mark=$(log_lines "$PW_OSM_LOG")
vsimctl add "$DEV" node_guid=$PW_HCA1_NODE_GUID style=mlx5 state=active
vsimctl port "$DEV" 1 guid=$PW_HCA1_PORT1_GUID quiet
# The watched port stays the same one: no new "watching" line, but the
# plugin looks at the reopened port.
wait_log "$PW_OSM_LOG" "portwatch: $DEV:1 .*(device opened)" 60 "$mark"
pw_log "event flood"
for i in $(seq 50); do vsimctl event "$DEV" 1 lid_change; done
pw_sleep 1

osm_stop 120
sim_stop
[ "$PW_OSM_RC" = 0 ] || pw_fail "opensm under valgrind exited with status $PW_OSM_RC"
[ "$(count_log "$PW_OSM_LOG" 'portwatch: stopped: ')" = 1 ] || pw_fail "no 'portwatch: stopped:' line"
[ -s "$VG_LOG" ] || pw_fail "valgrind wrote no log"

# ---- the numbers
errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$VG_LOG" | tail -n 1 | tr -d ,)
def_total=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$VG_LOG" | tail -n 1 | tr -d ,)
# Loss records: "N bytes in M blocks are definitely lost in loss record ..."
# followed by the stack up to an empty line.
read -r def_plugin def_plugin_records < <(awk '
    /bytes in [0-9,]+ blocks are definitely lost/ {
        if (inrec && mine) { bytes += cur; recs++ }
        inrec = 1; mine = 0; cur = $2; gsub(/,/, "", cur); next }
    inrec && (/libportwatch\.so/ || / portwatch::| pw_core_| portwatch_(create|delete|report) /) { mine = 1 }
    inrec && /\((core_api|devices|host|monitor|options|policy|port_tracker|telemetry|verbs_device|wakeup)\.cpp:|\(osm_glue\.c:/ { mine = 1 }
    inrec && /^==[0-9]+== *$/ { if (mine) { bytes += cur; recs++ } inrec = 0; mine = 0 }
    END { if (inrec && mine) { bytes += cur; recs++ } print bytes + 0, recs + 0 }' "$VG_LOG")
suppressed=$(sed -n 's/.*ERROR SUMMARY: .*(suppressed: \([0-9,]*\) from.*/\1/p' "$VG_LOG" | tail -n 1)
pw_log "valgrind log: $VG_LOG"
grep -E 'definitely lost:|indirectly lost:|possibly lost:|still reachable:|ERROR SUMMARY' "$VG_LOG" \
    | sed 's/^==[0-9]*== */  valgrind: /'
summary="$BOUNCES bounces + fatal + removal + 50 events in $(( SECONDS - t_start )) s under valgrind:"
summary+=" ${errors:-?} errors (${suppressed:-0} suppressed), ${def_total:-0} bytes definitely lost in all,"
summary+=" $def_plugin bytes ($def_plugin_records records) definitely lost by the plugin"
echo "$summary"
if [ "${errors:-1}" != 0 ]; then
    grep -B2 -A30 -E 'Invalid (read|write)|uninitialised|Conditional jump|Syscall param|Invalid free|Mismatched' \
        "$VG_LOG" | head -n 120 || true
    pw_fail "valgrind reported ${errors:-?} errors"
fi
[ "$def_plugin" = 0 ] || pw_fail "the plugin leaked $def_plugin bytes (definitely lost)"
pw_pass "$summary"
