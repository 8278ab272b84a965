# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# portwatch-conf, the opensm.conf helper, on copies of real opensm.conf files.
TESTS += tests/admin/test_portwatch_conf.sh
EXTRA_DIST += tests/admin/test_portwatch_conf.sh
# The systemd drop-in (systemd-analyze verify) and portwatch-conf restart-policy.
TESTS += tests/admin/test_restart_policy.sh
EXTRA_DIST += tests/admin/test_restart_policy.sh
