# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The shipped Prometheus rule file (monitoring/portwatch.rules.yml): promtool's
# checks and its unit tests; tests/e2e/test_alerts.sh runs it on a real
# Prometheus and Alertmanager.
TESTS += tests/monitoring/test_alert_rules.sh
EXTRA_DIST += tests/monitoring/test_alert_rules.sh tests/monitoring/portwatch_rules_test.yml
