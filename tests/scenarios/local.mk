# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Failure scenarios against stock opensm, without and with portwatch (see
# tests/scenarios/README.md). Each t_*.sh runs one scenario script on a
# reduced matrix: every scenario and driver style at sweep_interval 0, a
# representative subset at sweep_interval 10. scripts/scenarios --report
# runs the full matrix and writes docs/SCENARIOS.md.
# The longest come first so that make -j starts them early.
scenario_tests = \
	tests/scenarios/t_two_sms_0.sh \
	tests/scenarios/t_cable_move_10.sh \
	tests/scenarios/t_flap_10.sh \
	tests/scenarios/t_switch_reboot_10.sh \
	tests/scenarios/t_fattree_cable_move_0.sh \
	tests/scenarios/t_fattree_flap_0.sh \
	tests/scenarios/t_fattree_switch_reboot_0.sh \
	tests/scenarios/t_storm_0.sh \
	tests/scenarios/t_cable_move_0.sh \
	tests/scenarios/t_flap_0.sh \
	tests/scenarios/t_switch_reboot_0.sh \
	tests/scenarios/t_demo.sh
TESTS += $(scenario_tests)
EXTRA_DIST += $(scenario_tests) \
	tests/scenarios/README.md \
	tests/scenarios/lib.sh \
	tests/scenarios/gen_fattree.sh \
	tests/scenarios/cable_move.sh \
	tests/scenarios/switch_reboot.sh \
	tests/scenarios/flap.sh \
	tests/scenarios/storm.sh \
	tests/scenarios/two_sms.sh
