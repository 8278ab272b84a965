#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Debian's prometheus-node-exporter for the end-to-end tests, sourced after
# lib.sh: only its textfile collector, on a directory of metrics files,
# listening on a free loopback port; /metrics read back over plain HTTP.
#
#   ne_start DIR            start it (NE_PID, NE_PORT); the caller's
#                           pw_cleanup_hook calls ne_stop
#   ne_scrape               GET /metrics into NE_SCRAPE
#   ne_value SERIES [GUID]  a sample's value in the last scrape, read without
#                           its port_guid label (the instance: portwatch puts
#                           it on every sample, node_exporter sorts labels);
#                           with GUID, only that instance's sample. Empty if
#                           absent.
#   ne_wait SERIES COND TIMEOUT_S [GUID]   scrape until the value v holds COND
#                           (an awk expression), or fail

NE_PID=
NE_PORT=
NE_SCRAPE=

ne_start() {
    local dir=$1
    pw_need_cmd prometheus-node-exporter prometheus-node-exporter
    pw_serve node_exporter "$PW_DIR/node_exporter.log" 'Listening on|listening on' 5 \
        prometheus-node-exporter --collector.disable-defaults --collector.textfile \
        --collector.textfile.directory="$dir"
    NE_PID=$PW_SERVE_PID NE_PORT=$PW_SERVE_PORT
    pw_log "node_exporter on 127.0.0.1:$NE_PORT (pid $NE_PID)"
}

ne_stop() {
    if [ -n "$NE_PID" ]; then kill "$NE_PID" 2>/dev/null; wait "$NE_PID" 2>/dev/null || true; fi
    NE_PID=
    return 0
}

ne_scrape() {
    pw_http_get "$NE_PORT" /metrics
    NE_SCRAPE=$PW_HTTP_BODY
}

ne_value() {
    awk -v s="$1" -v g="${2:-}" '
        g != "" && index($1, "port_guid=\"" g "\"") == 0 { next }
        { k = $1; gsub(/,?port_guid="[^"]*"/, "", k); sub(/\{,/, "{", k); sub(/\{\}/, "", k)
          if (k == s) { print $2; exit } }' <<<"$NE_SCRAPE"
}

ne_wait() {
    local series=$1 cond=$2 tmo=$3 guid=${4:-} t_end v
    pw__s_to_us "$tmo"; pw__now
    t_end=$(( PW_NOW + PW_US ))
    while :; do
        ne_scrape
        v=$(ne_value "$series" "$guid")
        if [ -n "$v" ] && awk -v v="$v" "BEGIN { exit !($cond) }"; then return 0; fi
        pw__now
        if [ "$PW_NOW" -ge "$t_end" ]; then
            echo "---- portwatch samples of the last scrape:"
            grep '^portwatch_\|^node_textfile' <<<"$NE_SCRAPE" | grep -v '_bucket' || true
            pw_fail "timed out after ${tmo} s waiting for $series${guid:+ of $guid} ($cond); last value '${v}'"
        fi
        pw_sleep 0.1
    done
}
