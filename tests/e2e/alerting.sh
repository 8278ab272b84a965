#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Debian's prometheus and prometheus-alertmanager for the end-to-end tests,
# sourced after lib.sh and node_exporter.sh, all on free loopback ports in
# the test's work dir, stopped by al_stop (the caller's pw_cleanup_hook):
#
#   al_start RULES      a webhook receiver (webhook_receiver.pl, AL_HOOK_FILE:
#                       one notification per line); Alertmanager sending every
#                       group to it within a second (resolved too); Prometheus
#                       scraping node_exporter (ne_start first) and evaluating
#                       RULES every second, sending to that Alertmanager
#   al_query EXPR       Prometheus's instant query: AL_BODY, its JSON answer
#   al_wait_series EXPR TIMEOUT_S   until the query has a result, or fail
#   al_received [FROM]  the alerts of the notifications after line FROM of
#                       AL_HOOK_FILE, one per line: status, alertname,
#                       severity, port_guid, summary, description (tab-separated)
#   al_wait STATUS ALERTNAME TIMEOUT_S FROM   until a notification after line
#                       FROM carries ALERTNAME with STATUS (firing|resolved),
#                       or fail; AL_MATCH is that alert's line
#   al_lines            the notifications received so far (a FROM)

AL_HOOK_PID=
AL_AM_PID=
AL_PROM_PID=
AL_AM_PORT=
AL_PROM_PORT=
AL_HOOK_FILE=
AL_BODY=
AL_MATCH=

al_start() {
    local rules=$1 i
    pw_need_cmd prometheus prometheus
    pw_need_cmd prometheus-alertmanager prometheus-alertmanager
    pw_need_cmd perl perl
    [ -n "$NE_PORT" ] || pw_fail "al_start: start node_exporter first (ne_start)"

    AL_HOOK_FILE=$PW_DIR/webhook.jsonl
    : >"$AL_HOOK_FILE"
    perl "$PW_SRCDIR/tests/e2e/webhook_receiver.pl" "$AL_HOOK_FILE" "$PW_DIR/webhook.port" \
        >"$PW_DIR/webhook.log" 2>&1 &
    AL_HOOK_PID=$!
    for (( i = 0; i < 500; i++ )); do
        [ -s "$PW_DIR/webhook.port" ] && break
        kill -0 "$AL_HOOK_PID" 2>/dev/null || { cat "$PW_DIR/webhook.log"; pw_fail "the webhook receiver did not start"; }
        pw_sleep 0.01
    done
    [ -s "$PW_DIR/webhook.port" ] || pw_fail "the webhook receiver did not listen within 5 s"
    local hook_port
    hook_port=$(cat "$PW_DIR/webhook.port")

    # Every group to the receiver within a second of a change, resolved ones too.
    cat >"$PW_DIR/alertmanager.yml" <<EOF_AM
route:
  receiver: test
  group_by: ['alertname', 'port_guid']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: test
    webhook_configs:
      - url: 'http://127.0.0.1:$hook_port/'
        send_resolved: true
EOF_AM
    mkdir -p "$PW_DIR/alertmanager"
    pw_serve alertmanager "$PW_DIR/alertmanager.log" 'msg="Listening on"' 15 \
        prometheus-alertmanager --config.file="$PW_DIR/alertmanager.yml" \
        --storage.path="$PW_DIR/alertmanager" --cluster.listen-address=
    AL_AM_PID=$PW_SERVE_PID AL_AM_PORT=$PW_SERVE_PORT

    cat >"$PW_DIR/prometheus.yml" <<EOF_PROM
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $rules
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['127.0.0.1:$AL_AM_PORT']
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NE_PORT']
EOF_PROM
    mkdir -p "$PW_DIR/prometheus"
    pw_serve prometheus "$PW_DIR/prometheus.log" 'msg="Server is ready to receive web requests."' 15 \
        prometheus --config.file="$PW_DIR/prometheus.yml" --storage.tsdb.path="$PW_DIR/prometheus" \
        --rules.alert.resend-delay=1s
    AL_PROM_PID=$PW_SERVE_PID AL_PROM_PORT=$PW_SERVE_PORT
    grep -q 'msg="Completed loading of configuration file"' "$PW_DIR/prometheus.log" \
        || pw_fail "prometheus did not load its configuration (the rules): $(grep -i err "$PW_DIR/prometheus.log" | head -n 3)"
    pw_log "prometheus on 127.0.0.1:$AL_PROM_PORT, alertmanager on 127.0.0.1:$AL_AM_PORT, webhook receiver on 127.0.0.1:$hook_port"
}

al_stop() {
    local pid
    for pid in "$AL_PROM_PID" "$AL_AM_PID" "$AL_HOOK_PID"; do
        [ -n "$pid" ] || continue
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null || true
    done
    AL_PROM_PID=''
    AL_AM_PID=''
    AL_HOOK_PID=''
    return 0
}

al_query() {
    local q
    q=$(perl -e '$_ = $ARGV[0]; s/([^A-Za-z0-9_.~-])/sprintf("%%%02X", ord $1)/ge; print' "$1")
    pw_http_get "$AL_PROM_PORT" "/api/v1/query?query=$q"
    AL_BODY=$PW_HTTP_BODY
}

al_wait_series() {
    local expr=$1 tmo=$2 t_end
    pw__s_to_us "$tmo"; pw__now
    t_end=$(( PW_NOW + PW_US ))
    while :; do
        al_query "$expr"
        [[ $AL_BODY == *'"result":[{'* ]] && return 0
        pw__now
        [ "$PW_NOW" -lt "$t_end" ] || pw_fail "prometheus has no result for '$expr' after $tmo s: $AL_BODY"
        pw_sleep 0.2
    done
}

al_lines() {
    wc -l <"$AL_HOOK_FILE"
}

al_received() {
    AL_FROM=${1:-0} perl -MJSON::PP -ne '
        next if $. <= $ENV{AL_FROM};
        my $n = decode_json($_);
        for my $a (@{ $n->{alerts} }) {
            my ($l, $an) = ($a->{labels}, $a->{annotations});
            print join("\t", $a->{status}, $l->{alertname} // "", $l->{severity} // "",
                       $l->{port_guid} // "", $an->{summary} // "", $an->{description} // ""), "\n";
        }' "$AL_HOOK_FILE"
}

al_wait() {
    local status=$1 name=$2 tmo=$3 from=$4
    # One notification per line, one alert per group (alertname, port_guid):
    # waited for as a log line (no process per poll), then decoded once.
    if wait_log_soft "$AL_HOOK_FILE" "\"status\":\"$status\".*\"alertname\":\"$name\"" "$tmo" "$from"; then
        AL_MATCH=$(al_received $(( PW_MATCH_LINE - 1 )) | head -n 1 \
            | awk -F'\t' -v s="$status" -v n="$name" '$1 == s && $2 == n { print; exit }')
        [ -n "$AL_MATCH" ] && return 0
    fi
    echo "---- the notifications Alertmanager sent since line $from:"
    al_received "$from" | cut -f1-4
    pw_fail "Alertmanager sent no $status $name within $tmo s"
}
