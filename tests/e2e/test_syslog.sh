#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The lines an on-call admin must see reach syslog: stock opensm sends
# portwatch's OSM_LOG_SYS lines to syslog(3), and a syslog daemon listening on
# /dev/log receives them.
#
# Set-up: the test runs in a private mount namespace (it re-executes itself
# under unshare -m) whose /dev is a fresh tmpfs holding bind mounts of the
# host's /dev entries, so that /dev/log there is the test's own: busybox's
# syslogd (Debian's busybox-static) listens on it and writes to a file. Then
# net.2sw2path4hca, stock opensm on Hca1 with the plugin (sweep_interval 0,
# the verbs simulator, mlx5 style), one bounce of the SM's link, and a second
# opensm whose plugin options are bad.
#
# Asserts: syslog receives, from ident OpenSM, the plugin's "link lost" and
# "link back" lines of the bounce and its "is ACTIVE again" line, and not
# its start-up lines (those are INFO only); from the second opensm it
# receives "plugin not loaded".
set -euo pipefail
if [ -z "${PW_IN_MOUNT_NS:-}" ]; then
    if ! out=$(unshare -m --propagation private true 2>&1); then
        echo "FAIL: test_syslog: cannot make a private mount namespace (run as root): $out"
        exit 1
    fi
    PW_IN_MOUNT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
PW_TEST_NAME=${PW_TEST_NAME:-test_syslog}
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin
pw_need_cmd busybox busybox-static

# A /dev of our own in this namespace: a tmpfs with the host's entries bound
# in (not a copy of the host's /dev under the work dir, which the clean-up
# removes), moved over /dev; /dev/log is left out for our syslogd.
newdev=$PW_DIR/dev
mkdir "$newdev"
mount -t tmpfs -o mode=0755 pw-dev "$newdev"
for entry in /dev/* /dev/.[!.]*; do
    [ -e "$entry" ] || [ -L "$entry" ] || continue
    name=${entry##*/}
    [ "$name" = log ] && continue
    if [ -L "$entry" ]; then
        cp -P "$entry" "$newdev/$name"
    elif [ -d "$entry" ]; then
        mkdir "$newdev/$name" && mount --rbind "$entry" "$newdev/$name"
    else
        touch "$newdev/$name" && mount --bind "$entry" "$newdev/$name"
    fi
done
mount --move "$newdev" /dev

MESSAGES=$PW_DIR/messages
SYSLOGD_PID=
pw_cleanup_hook() {
    if [ -n "$SYSLOGD_PID" ]; then kill "$SYSLOGD_PID" 2>/dev/null; wait "$SYSLOGD_PID" 2>/dev/null; fi
    return 0
}
busybox syslogd -n -O "$MESSAGES" &
SYSLOGD_PID=$!
for _ in $(seq 200); do [ -S /dev/log ] && break; pw_sleep 0.01; done
[ -S /dev/log ] || pw_fail "busybox syslogd did not create /dev/log"
logger -t pw-test "syslog test ready" 2>/dev/null || busybox logger -t pw-test "syslog test ready"
wait_log "$MESSAGES" 'pw-test.*syslog test ready' 5
pw_log "syslogd (pid $SYSLOGD_PID) on this namespace's /dev/log"

fabric_start mlx5
dev=$PW_VSIM_DEV
osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0 event_plugin_name=portwatch \
    event_plugin_options=portwatch.holdoff_ms=100
osm_start_plugin "$PW_DIR/opensm.conf"
osm_watching "$dev"
wait_port_state Hca1 1 Active 2 || pw_fail "SM port is $PW_PORT_STATE after SUBNET UP"

mark=$(log_lines "$PW_OSM_LOG")
link_step down "$dev"
wait_log "$PW_OSM_LOG" "portwatch: $dev:1 .*link lost" 5 "$mark"
pw_sleep 0.3
link_step back "$dev"
wait_log "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" 5 "$mark"
wait_port_state Hca1 1 Active 5 || pw_fail "SM port is $PW_PORT_STATE after the sweep, expected Active"
link_step active "$dev"
wait_log "$PW_OSM_LOG" "portwatch: $dev:1 is ACTIVE again" 5 "$mark"

wait_log "$MESSAGES" "OpenSM\[$PW_OSM_PID\]: portwatch: $dev:1 ACTIVE -> DOWN .*link lost" 5
wait_log "$MESSAGES" "OpenSM\[$PW_OSM_PID\]: portwatch: $dev:1 DOWN -> INIT .*link back, heavy sweep requested" 5
wait_log "$MESSAGES" "OpenSM\[$PW_OSM_PID\]: portwatch: $dev:1 is ACTIVE again" 5
pw_log "syslog: ${PW_MATCH_TEXT#*OpenSM}"
n=$(count_log "$MESSAGES" 'portwatch: (loaded|watching|opened verbs device)')
[ "$n" = 0 ] || pw_fail "$n start-up lines went to syslog (they are INFO only)"
osm_stop_clean

# The plugin refusing to load is syslog news too.
osm_make_conf "$PW_DIR/bad.conf" sweep_interval=0 event_plugin_name=portwatch \
    event_plugin_options=portwatch.holdoff_ms=banana
osm_start_plugin "$PW_DIR/bad.conf"
wait_log "$PW_OSM_LOG" 'portwatch: ERROR: .*plugin not loaded' 5
wait_log "$MESSAGES" "OpenSM\[$PW_OSM_PID\]: portwatch: ERROR: bad value in 'portwatch.holdoff_ms=banana'.*plugin not loaded" 5
osm_stop_clean
pw_pass
