# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# End-to-end tests: ibsim + stock opensm + libportwatch.so + the verbs simulator.
# Each script makes its own work dir, ibsim socket name and simulator socket,
# so they may run in parallel (make -j check). See tests/e2e/README.md.
# The long bounce tests come first so that make -j starts them early.
e2e_tests = \
	tests/e2e/test_bounce_mlx5.sh \
	tests/e2e/test_bounce_mlx4.sh \
	tests/e2e/test_bounce_rxe.sh \
	tests/e2e/test_bounce_sweep_on_loss.sh \
	tests/e2e/test_device_reset.sh \
	tests/e2e/test_reset_restart.sh \
	tests/e2e/test_reset_loop.sh \
	tests/e2e/test_reset_standby.sh \
	tests/e2e/test_fieldcheck.sh \
	tests/e2e/test_fieldcheck_choice.sh \
	tests/e2e/test_two_instances.sh \
	tests/e2e/test_metrics.sh \
	tests/e2e/test_syslog.sh \
	tests/e2e/test_sigterm.sh \
	tests/e2e/test_lifecycle.sh \
	tests/e2e/test_bad_option.sh \
	tests/e2e/test_bad_input.sh \
	tests/e2e/test_stock_baseline.sh
TESTS += $(e2e_tests)
# The shipped alert rules on a real Prometheus and Alertmanager: make check
# only, not in the sanitizer builds (print-e2e-tests), whose test_metrics and
# test_reset_restart run the same plugin paths (the metrics file, a reset).
TESTS += tests/e2e/test_alerts.sh
EXTRA_DIST += $(e2e_tests) \
	tests/e2e/test_alerts.sh \
	tests/e2e/lib.sh \
	tests/e2e/node_exporter.sh \
	tests/e2e/alerting.sh \
	tests/e2e/webhook_receiver.pl \
	tests/e2e/device_reset.sh \
	tests/e2e/ibsim_host \
	tests/e2e/net.two-subnets \
	tests/stress/lifecycle.sh \
	tests/e2e/test_bounce.sh \
	tests/e2e/test_version_mismatch.sh \
	tests/umad_fault/README.md \
	tests/e2e/README.md

# libumadfault.so: OpenSM's umad files dead after a "reset", as a real
# device reset leaves them (see tests/umad_fault/umad_fault.c). Preloaded
# ahead of umad2sim by the device reset recovery tests.
check_LTLIBRARIES += tests/umad_fault/libumadfault.la
tests_umad_fault_libumadfault_la_SOURCES = tests/umad_fault/umad_fault.c \
	tests/umad_fault/umad_timeouts.c tests/umad_fault/umad_timeouts.h
tests_umad_fault_libumadfault_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -rpath $(abs_builddir)
tests_umad_fault_libumadfault_la_LIBADD = -ldl -lpthread
