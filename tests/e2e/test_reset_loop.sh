#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Device resets that leave OpenSM's MAD path dead, one after another, on the
# kernel's timing (the umad double fails every call at once, as the kernel
# does, so OpenSM's receiver floods its log with "ERR 5404" until portwatch
# turns its ERROR lines off). For each reset, printed: the device's time
# away, the verdict and opensm's exit after the device's return, how it
# ended (a clean exit, or its shutdown hung and the kernel's timer ended it),
# the restarted opensm's SUBNET UP after the return, and the bytes of
# OpenSM's log from the removal to that SUBNET UP (the old opensm's, the new
# one's, and the old one's "ERR 5404" lines among them). Asserted for every reset:
# opensm is gone (within the timer's 5 s plus a margin), the verdict within
# 1 s of the return, at most 1 MB of log, the SM port ACTIVE again.
#
#   PW_RESET_LOOP_N  resets (2 in the suite; 20 for the figures in README)
#   PW_RESET_AWAY_S  how long the device stays away (2 in the suite; 30
#                    for README's figures)
#
# Each reset is an incident of its own: the supervisor (systemd's policy
# from the shipped drop-in, RestartSec included) restarts opensm, its start
# limit is not what is measured here (test_reset_restart checks it).
# Set-up as test_reset_restart, with the default reopen backoff
# (retry_max_ms 30 s) and reset_check_ms: the device's return is seen at
# the kernel's uevent, which the verbs simulator sends.
set -euo pipefail
# The verbs simulator plays the kernel's uevents by netlink unicast, which
# needs CAP_NET_ADMIN: without root, the whole test (ibsim, opensm, the
# simulator) runs in a user and network namespace of its own.
if [ "$(id -u)" != 0 ]; then
    command -v unshare >/dev/null || { echo "FAIL: test_reset_loop: not root and no unshare (util-linux)"; exit 1; }
    exec unshare --user --map-root-user --net -- "$0" "$@"
fi
PW_TEST_NAME=${PW_TEST_NAME:-test_reset_loop}
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin
. "$(dirname "$0")/device_reset.sh"
dr_init

N=${PW_RESET_LOOP_N:-2}
DR_AWAY_S=${PW_RESET_AWAY_S:-2}
LOG_BOUND=$(( 1024 * 1024 ))
EXIT_BOUND_S=10   # the device back -> opensm gone: the timer's 5 s and a margin

fabric_start mlx5 mlx5_0
osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0 \
    event_plugin_name=portwatch \
    "event_plugin_options=portwatch.holdoff_ms=100"
start_args=("$PW_DIR/opensm.conf" "${DR_ENV[@]}")

sup_init
sup_start "${start_args[@]}"
osm_watching mlx5_0

exits=0 hangs=0 max_bytes=0
printf -v header '%-6s %7s %11s %9s %-7s %13s %10s %10s %10s %9s' reset away_s verdict_ms exit_ms ended subnet_up_ms log_bytes old_osm new_osm err_5404
pw_log "$header"
for (( i = 1; i <= N; i++ )); do
    dr_reset_dead mlx5_0
    dr_expect_dead_exit "reset $i" "$(( EXIT_BOUND_S + ${DR_AWAY_S%.*} ))"
    exits=$(( exits + 1 ))
    ended=clean
    [ "$PW_OSM_RC" = 137 ] && { ended=killed; hangs=$(( hangs + 1 )); }
    exit_ms=$(( (PW_SUP_EXIT_US - DR_BACK_US) / 1000 ))
    # ibsim 0.10 has 10 client slots, and opensm and every diag take one:
    # one fabric died after 17 runs. With the old opensm gone, a fresh
    # fabric (all links up, as after the ReLink) for the next run.
    sim_stop quiet
    sim_start "$PW_NET_2SW"
    PW_SUP_STARTS=()   # an incident of its own
    sup_restart "${start_args[@]}" || pw_fail "reset $i: the supervisor refused the restart: $PW_SUP_REFUSED"
    osm_watching mlx5_0
    up_us=$(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE")
    dr_log_bytes
    wait_port_state Hca1 1 Active 10 || pw_fail "reset $i: SM port is $PW_PORT_STATE after the restart, expected Active"
    [ "$DR_LOG_BYTES" -le "$LOG_BOUND" ] \
        || pw_fail "reset $i: $DR_LOG_BYTES bytes of OpenSM's log from the removal to the new SUBNET UP (old opensm $DR_OLD_BYTES, new $DR_NEW_BYTES), more than 1 MB"
    [ "$DR_LOG_BYTES" -gt "$max_bytes" ] && max_bytes=$DR_LOG_BYTES
    errs=$(count_log "$DR_OLD_LOG" 'ERR 5404: recv error on MAD sized umad' "$DR_MARK")
    printf -v row '%-6s %7s %11s %9s %-7s %13s %10s %10s %10s %9s' "$i" "$DR_AWAY_S" "$DR_VERDICT_MS" "$exit_ms" "$ended" \
        "$(( (up_us - DR_BACK_US) / 1000 ))" "$DR_LOG_BYTES" "$DR_OLD_BYTES" "$DR_NEW_BYTES" "$errs"
    pw_log "$row"
done
[ "$exits" = "$N" ] || pw_fail "$exits of $N resets ended with opensm gone"
sim_stop
pw_pass "$N device resets with OpenSM's MAD path dead (away ${DR_AWAY_S} s each): $exits/$N opensm gone and restarted ($hangs ended by the kernel's timer), SM port Active each time; at most $max_bytes bytes of log per reset"
