# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# shellcheck shell=bash
# Sourced by the device reset recovery tests (after lib.sh): a reset of the
# SM's device that takes OpenSM's MAD path with it, as on a real host.
#
#   dr_init                 needs libumadfault.so; sets DR_ENV, the
#                           osm_start arguments that preload it ahead of
#                           umad2sim with this test's reset file
#   dr_reset_dead DEV       ibsim Unlink of Hca1, DEV removed, OpenSM's umad
#                           files dead; DR_AWAY_S (0.5 s) later ReLink and
#                           DEV back at INIT (the simulator sends the
#                           kernel's uevents for it).
#                           Sets DR_MARK (the log line before) and DR_BACK_US
#                           (DEV's return, harness time)
#   dr_expect_dead_exit WHAT BOUND_S
#                           the kernel's POLLERR on OpenSM's umad file said
#                           (OpenSM's ERROR lines off), then the plugin's
#                           ERROR line naming DEV and Hca1's port GUID
#                           within 1 s of DEV's return (DR_VERDICT_MS), the
#                           kill timer announced, then opensm exits with
#                           status 0 on its own, its last portwatch line
#                           "stopped: ... mad_path_dead=1" (sup_wait_exit:
#                           PW_OSM_RC, PW_SUP_EXIT_US). With DR_HANG=1 (the
#                           run was started with PW_UMAD_HANG_ON_CLOSE=1)
#                           its shutdown hangs and the kernel's timer ends
#                           it: status 137, 5 s after the exit was asked for
#   dr_log_bytes            after the restart's SUBNET UP: DR_LOG_BYTES

dr_init() {
    DR_UMAD_FAULT=$PW_BUILDDIR/tests/umad_fault/.libs/libumadfault.so
    pw_need_file "$DR_UMAD_FAULT" "build the umad test double first (make check builds it)"
    DR_DEAD=$PW_DIR/umad-reset
    DR_ENV=(LD_PRELOAD_FIRST="$DR_UMAD_FAULT" PW_UMAD_DEAD_FILE="$DR_DEAD")
}

dr_reset_dead() {
    DR_DEV=$1
    DR_MARK=$(log_lines "$PW_OSM_LOG")
    DR_OLD_LOG=$PW_OSM_LOG
    DR_MARK_BYTES=$(stat -c %s "$PW_OSM_LOG")
    fabric_link down
    vsimctl remove "$DR_DEV"
    touch "$DR_DEAD"
    wait_log "$PW_OSM_LOG" "portwatch: verbs device $DR_DEV failed" 5 "$DR_MARK"
    pw_sleep "${DR_AWAY_S:-0.5}"   # the device stays away, as in a reset
    # Not while its device is away: a restarted opensm could not bind.
    osm_alive || pw_fail "opensm exited while $DR_DEV was away: its restart could not bind its port"
    fabric_link back
    vsimctl add "$DR_DEV" node_guid="$PW_HCA1_NODE_GUID" style=mlx5 state=init
    DR_BACK_US=$PW_VSIM_T_US
}

dr_expect_dead_exit() {
    local what=$1 bound=$2 log=$PW_OSM_LOG verdict_us
    # The kernel's word first (the umad file's POLLERR): ERROR lines muted.
    wait_log "$log" "portwatch: ERROR: the kernel reports OpenSM's umad file dead \\(POLLERR\\)" "$bound" "$DR_MARK"
    case $PW_MATCH_TEXT in
        *"OpenSM's ERROR lines are off from now on"*) ;;
        *) pw_fail "$what: OpenSM's ERROR lines were not turned off: $PW_MATCH_TEXT" ;;
    esac
    wait_log "$log" "portwatch: ERROR: OpenSM's MAD path is dead since the reset of $DR_DEV \\(port GUID $PW_HCA1_PORT1_GUID\\): the kernel reported OpenSM's umad file dead [0-9]+ ms ago" "$bound" "$DR_MARK"
    pw_log "$what: ${PW_MATCH_TEXT#*portwatch: }"
    # Decided when the device is back, not a check's bound later.
    verdict_us=$(log_line_us "$log" "$PW_MATCH_LINE")
    DR_VERDICT_MS=$(( (verdict_us - DR_BACK_US) / 1000 ))
    [ "$DR_VERDICT_MS" -le 1000 ] \
        || pw_fail "$what: the dead path was decided $DR_VERDICT_MS ms after $DR_DEV came back, more than 1 s"
    case $PW_MATCH_TEXT in
        *"Asking OpenSM to exit so that its service manager starts it again (portwatch.on_device_reset=restart)"*) ;;
        *) pw_fail "$what: the line does not say what portwatch does: $PW_MATCH_TEXT" ;;
    esac
    wait_log "$log" "portwatch: a kernel timer ends opensm with SIGKILL should it still run [0-9]+ ms from now" 1 "$DR_MARK"
    DR_ASKED_US=$(pw_now_us)
    sup_wait_exit "$bound"
    if [ "${DR_HANG:-0}" = 1 ]; then
        # The shutdown hangs (PW_UMAD_HANG_ON_CLOSE): the kernel's timer ends it.
        [ "$PW_OSM_RC" = 137 ] || pw_fail "$what: opensm exit status $PW_OSM_RC, expected 137 (ended by SIGKILL: its shutdown hung)"
        local ms=$(( (PW_SUP_EXIT_US - DR_ASKED_US) / 1000 ))
        [ "$ms" -ge 4500 ] && [ "$ms" -lt 8000 ] \
            || pw_fail "$what: opensm ended $ms ms after portwatch asked it to exit, expected the timer's 5000 ms"
        pw_log "$what: opensm's shutdown hung; the kernel ended it (SIGKILL) $(pw_fmt_ms $(( PW_SUP_EXIT_US - DR_ASKED_US ))) ms after portwatch asked it to exit"
    else
        [ "$PW_OSM_RC" = 0 ] || pw_fail "$what: opensm exit status $PW_OSM_RC, expected 0 (a clean exit)"
    fi
    pw_log "$what: opensm exited $(pw_fmt_ms $(( PW_SUP_EXIT_US - DR_BACK_US ))) ms after $DR_DEV came back"
    [ "$(count_log "$log" 'portwatch: .*MAD path is dead' "$DR_MARK")" = 1 ] \
        || pw_fail "$what: the dead path was not said exactly once"
    grep -qE 'portwatch: stopped: .* mad_path_dead=1$' "$log" \
        || pw_fail "$what: no 'stopped: ... mad_path_dead=1' line: opensm did not shut down through its exit path"
}

# dr_log_bytes: once the restarted opensm is up (PW_MATCH_LINE its SUBNET UP
# line): the bytes of OpenSM's log written from the device's removal to that
# SUBNET UP, the old opensm's and the new one's, in DR_LOG_BYTES (and
# DR_OLD_BYTES, DR_NEW_BYTES). On a host both go to the same file.
dr_log_bytes() {
    DR_OLD_BYTES=$(( $(stat -c %s "$DR_OLD_LOG") - DR_MARK_BYTES ))
    DR_NEW_BYTES=$(head -n "$PW_MATCH_LINE" "$PW_OSM_LOG" | wc -c)
    DR_LOG_BYTES=$(( DR_OLD_BYTES + DR_NEW_BYTES ))
}
