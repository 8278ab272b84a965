#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Hostile event_plugin_options lines in opensm.conf, written as raw bytes:
# what stock opensm 3.3.23 hands the plugin, and that the plugin refuses bad
# input with one ERROR line naming it while opensm runs on.
#
# opensm's config parser (osm_subn_parse_conf_file) reads the file with
# fgets(line, 1023): one line yields at most 1022 bytes, so the value of
# event_plugin_options is at most ~1000 bytes; the rest of a longer line is
# read as further lines (opensm prints 'Unrecognized token' for them). The
# value is cut at the first NUL byte and at '#'; other bytes pass through.
#
# Cases (one fresh opensm each, same ibsim, plugin + verbs simulator):
#   megabyte  a 1 MB line "event_plugin_options portwatch.holdoff_ms=777...":
#             the plugin gets ~1000 digits: one ERROR line naming the token
#             (shown cut, with "..."), cannot load plugin, opensm reaches
#             SUBNET UP and exits 0 on SIGTERM;
#   garbage   control and high bytes in a portwatch token: one ERROR line
#             with the bytes shown escaped (\x01...), opensm runs on;
#   cut       a good option followed by 2000 bytes of another plugin's token
#             and then a bad portwatch token: the bad token lies past opensm's
#             line limit, never reaches the plugin, which loads;
#   nul       a NUL byte after a good option: what follows is never seen.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin

fabric_start mlx5

# conf NAME: a config with the plugin named, options to be appended raw.
conf() {
    osm_make_conf "$PW_DIR/opensm-$1.conf" sweep_interval=0 event_plugin_name=portwatch
}

refused() {   # NAME TEXT-THE-ERROR-MUST-CONTAIN
    local name=$1 named=$2 n err
    osm_start_plugin "$PW_DIR/opensm-$name.conf"
    osm_wait_up 10
    wait_log "$PW_OSM_LOG" 'cannot load plugin' 2
    n=$(count_log "$PW_OSM_LOG" 'portwatch: ')
    [ "$n" = 1 ] || pw_fail "$name: $n portwatch lines (expected exactly 1, the ERROR)"
    err=$(grep -a 'portwatch: ERROR' "$PW_OSM_LOG") || pw_fail "$name: no 'portwatch: ERROR' line"
    err=${err#*portwatch: }
    pw_log "$name: plugin: $err"
    case $err in
        *"$named"*"; plugin not loaded") ;;
        *) pw_fail "$name: the ERROR line does not name '$named' (or is cut): $err" ;;
    esac
    [ ${#err} -lt 512 ] || pw_fail "$name: ERROR line of ${#err} bytes"
    [ "$(smp_port_state Hca1 1)" = Active ] || pw_fail "$name: SM port not Active"
    osm_stop_clean 5
}

pw_log "---- case megabyte: a 1 MB event_plugin_options line"
conf megabyte
{
    printf 'event_plugin_options portwatch.holdoff_ms='
    head -c $((1 << 20)) /dev/zero | tr '\0' '7'
    printf '\n'
} >>"$PW_DIR/opensm-megabyte.conf"
refused megabyte "bad value in 'portwatch.holdoff_ms=7777777777"
case $(grep -a 'portwatch: ERROR' "$PW_OSM_LOG") in
    *'...'"'"*) ;;
    *) pw_fail "megabyte: the token is not shown cut ('...')" ;;
esac
# opensm prints each through a 128-byte buffer that cuts off its newline.
unrec=$(grep -a -o 'Unrecognized token' "$PW_OSM_OUT" | wc -l)
pw_log "megabyte: opensm read the rest of the line as $unrec more lines ('Unrecognized token')"
[ "$unrec" -gt 1000 ] || pw_fail "megabyte: expected opensm to split the line (1022-byte reads)"

pw_log "---- case garbage: control and high bytes"
conf garbage
printf 'event_plugin_options other.knob=\xff\xfe portwatch.port=\x01\x1b[2J\x7f\x80\xff:1\n' \
    >>"$PW_DIR/opensm-garbage.conf"
refused garbage "'portwatch.port=\\x01\\x1b[2J\\x7f\\x80\\xff:1'"

pw_log "---- case cut: a bad token past opensm's 1022-byte line limit"
conf cut
{
    printf 'event_plugin_options portwatch.holdoff_ms=5 other.blob='
    head -c 2000 /dev/zero | tr '\0' 'x'
    printf ' portwatch.holdoff_ms=banana\n'
} >>"$PW_DIR/opensm-cut.conf"
osm_start_plugin "$PW_DIR/opensm-cut.conf"
wait_log "$PW_OSM_LOG" 'portwatch: loaded' 5
pw_log "cut: plugin: ${PW_MATCH_TEXT#*portwatch: }"
case $PW_MATCH_TEXT in *'holdoff_ms=5 '*) ;; *) pw_fail "cut: holdoff 5 not taken" ;; esac
osm_wait_up 10
[ "$(count_log "$PW_OSM_LOG" 'portwatch: ERROR|cannot load plugin')" = 0 ] \
    || pw_fail "cut: the token past the line limit reached the plugin"
osm_stop_clean 5

pw_log "---- case nul: a NUL byte ends the value"
conf nul
printf 'event_plugin_options portwatch.holdoff_ms=6\0 portwatch.holdoff_ms=banana\n' \
    >>"$PW_DIR/opensm-nul.conf"
osm_start_plugin "$PW_DIR/opensm-nul.conf"
wait_log "$PW_OSM_LOG" 'portwatch: loaded' 5
case $PW_MATCH_TEXT in *'holdoff_ms=6 '*) ;; *) pw_fail "nul: holdoff 6 not taken" ;; esac
osm_wait_up 10
[ "$(count_log "$PW_OSM_LOG" 'portwatch: ERROR|cannot load plugin')" = 0 ] \
    || pw_fail "nul: bytes after the NUL reached the plugin"
osm_stop_clean 5
sim_stop

pw_pass "1 MB line, garbage bytes: one ERROR line each, opensm ran on; opensm passes at most ~1000 bytes and nothing after a NUL"
