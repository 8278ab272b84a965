#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The Prometheus rule file the packages ship (monitoring/portwatch.rules.yml)
# against promtool (Debian's prometheus package) and its own unit tests.
#
#   bash tests/monitoring/test_alert_rules.sh
#
# Asserts:
#   - promtool check rules accepts the file;
#   - every alert has a severity label (critical or warning), a summary and
#     a description; alert names are CamelCase, recording rules are named
#     level:metric:operations;
#   - every portwatch_ metric the rules read is one README's Monitoring
#     section lists and plugin/metrics.cpp writes; README's table lists every
#     alert, README and portwatch(8) name the installed file;
#   - every alert has unit tests in tests/monitoring/portwatch_rules_test.yml
#     that expect it to fire and that expect it silent;
#   - promtool test rules passes those tests (firing, not firing for a single
#     short flap, a standby SM and a planned stop, resolving).
set -uo pipefail
NAME=test_alert_rules
here=$(cd "$(dirname "$0")" && pwd)
srcdir=${abs_top_srcdir:-$(cd "$here/../.." && pwd)}
fail() { echo "FAIL: $NAME: $*"; exit 1; }
command -v promtool >/dev/null || fail "promtool not found: install the Debian package prometheus"

RULES=$srcdir/monitoring/portwatch.rules.yml
TESTS=$srcdir/tests/monitoring/portwatch_rules_test.yml
[ -r "$RULES" ] || fail "no rule file $RULES"
[ -r "$TESTS" ] || fail "no rule tests $TESTS"

out=$(promtool check rules "$RULES" 2>&1) || fail "promtool check rules rejects $RULES: $out"
echo "$out"

# One line per rule: "alert NAME severity=S summary=0|1 description=0|1" or
# "record NAME".
rules=$(awk '
    function flush() { if (kind == "alert") print kind, name, "severity=" sev, "summary=" sum, "description=" desc
                       else if (kind == "record") print kind, name }
    /^ *- alert: /  { flush(); kind = "alert"; name = $3; sev = ""; sum = 0; desc = 0; next }
    /^ *- record: / { flush(); kind = "record"; name = $3; next }
    kind == "alert" && /^ *severity: / { sev = $2 }
    kind == "alert" && /^ *summary: /  { sum = 1 }
    kind == "alert" && /^ *description: / { desc = 1 }
    END { flush() }' "$RULES")
alerts=$(awk '$1 == "alert" { print $2 }' <<<"$rules")
[ "$(wc -l <<<"$alerts")" -ge 7 ] || fail "expected at least 7 alerts, found: $alerts"
while read -r kind name rest; do
    case $kind in
        alert)
            [[ $name =~ ^Portwatch[A-Z][A-Za-z]*$ ]] || fail "alert name '$name' is not CamelCase with the Portwatch prefix"
            case $rest in
                "severity=critical summary=1 description=1" | "severity=warning summary=1 description=1") ;;
                *) fail "alert $name lacks a severity (critical|warning), summary or description: $rest" ;;
            esac ;;
        record)
            [[ $name =~ ^[a-z_]+:[a-z_]+:[a-z0-9_]+$ ]] || fail "recording rule '$name' is not named level:metric:operations" ;;
    esac
done <<<"$rules"

# The metrics the rules read: README's names, written by the plugin.
readme_metrics=$(awk '/^Metrics\. /, /^Example|^Alert/' "$srcdir/README" | grep -o 'portwatch_[a-z_]*' | sort -u)
read_metrics=$(grep -o 'portwatch_[a-z_]*' "$RULES" | grep -v '^portwatch_sweeps_requested$' | sort -u)
[ -n "$read_metrics" ] || fail "the rules read no portwatch_ metric"
while read -r m; do
    grep -qx "$m" <<<"$readme_metrics" || fail "the rules read $m, which README's Monitoring section does not list"
    grep -q "\"$m\"" "$srcdir/plugin/metrics.cpp" || fail "the rules read $m, which plugin/metrics.cpp does not write"
done <<<"$read_metrics"

# README lists every alert, and README and portwatch(8) name the path the
# packages install the file at (tests/pkg/test_deb.sh, test_rpm.sh check it).
for a in $alerts; do
    grep -qE "^    $a +(critical|warning) " "$srcdir/README" || fail "README's alert table does not list $a"
done
for doc in README docs/portwatch.8; do
    grep -q '/usr/share/portwatch/portwatch\.rules\.yml' "$srcdir/$doc" \
        || fail "$doc does not name /usr/share/portwatch/portwatch.rules.yml"
done

# Every alert tested both ways: an eval with exp_labels and one with exp_alerts: [].
tested=$(awk '
    /^ *alertname: / { name = $2; next }
    /^ *exp_alerts: \[\]/ { silent[name] = 1 }
    /^ *- exp_labels: / { fires[name] = 1 }
    END { for (n in fires) if (n in silent) print n }' "$TESTS")
for a in $alerts; do
    grep -qx "$a" <<<"$tested" || fail "alert $a has no unit test that expects it to fire and one that expects it silent"
done

# rule_files in the tests is relative to the test file: run it where it is.
out=$(cd "$(dirname "$TESTS")" && promtool test rules "$(basename "$TESTS")" 2>&1) \
    || fail "promtool test rules: $out"
echo "$out"
echo "PASS: $NAME: $(wc -l <<<"$alerts") alerts, each with a severity, summary and description and tested firing and silent; promtool test rules passed"
