# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Unit tests (Boost.Test). Every test binary runs with the verbs simulator
# preloaded (tests/with-vsim), so verbs calls reach the simulator.
LOG_COMPILER = $(top_srcdir)/tests/timed env abs_top_builddir=$(abs_top_builddir) $(top_srcdir)/tests/with-vsim
TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(top_srcdir)/tests/timed env abs_top_builddir=$(abs_top_builddir) abs_top_srcdir=$(abs_top_srcdir) bash
EXTRA_DIST += tests/with-vsim tests/timed
# Sanitizer builds: the runtime to preload ahead of instrumented libraries
# loaded into uninstrumented programs (empty otherwise). OPENSM: the opensm
# the tests run, the one configure built the plugin for (--with-opensm).
AM_TESTS_ENVIRONMENT = PW_SANITIZER_PRELOAD='$(PW_SANITIZER_PRELOAD)'; export PW_SANITIZER_PRELOAD; \
	OPENSM='$(OPENSM)'; export OPENSM;
EXTRA_DIST += tests/sanitizers/env.sh tests/sanitizers/asan.supp tests/sanitizers/lsan.supp \
	tests/sanitizers/tsan.supp tests/sanitizers/valgrind.supp tests/stress/valgrind.sh tests/stress/model.sh \
	tests/fuzz/fuzz_options.cpp tests/fuzz/fuzz_policy.cpp

PW_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/verbs_sim $(BOOST_CPPFLAGS) \
	$(IBVERBS_CFLAGS) -DBOOST_TEST_DYN_LINK
PW_TEST_LDADD = plugin/libportwatch_core.la $(BOOST_LDFLAGS) $(BOOST_UNIT_TEST_FRAMEWORK_LIB) -ldl

# The stand-in for OpenSM's side that most test programs share, compiled
# once: as a source of each program (with the programs' own flags) it was
# compiled once per program, seven times per build.
check_LTLIBRARIES += tests/unit/libfakehost.la
tests_unit_libfakehost_la_SOURCES = tests/unit/fake_host.cpp tests/unit/fake_host.hpp
tests_unit_libfakehost_la_CPPFLAGS = $(PW_TEST_CPPFLAGS)
PW_FAKE_HOST_LDADD = tests/unit/libfakehost.la $(PW_TEST_LDADD)

# Pure pipeline stages: options, port tracker, policy, telemetry, the log
# window, the metrics text and file.
check_PROGRAMS += tests/unit/test_logic
TESTS += tests/unit/test_logic
tests_unit_test_logic_SOURCES = \
	tests/unit/test_logic_main.cpp tests/unit/parsed_options.hpp \
	tests/unit/test_options.cpp \
	tests/unit/test_policy.cpp \
	tests/unit/test_outcome.cpp \
	tests/unit/test_mad_path_check.cpp \
	tests/unit/test_device_arrivals.cpp \
	tests/unit/test_port_tracker.cpp \
	tests/unit/test_log_limiter.cpp \
	tests/unit/test_metrics.cpp tests/unit/temp_dir.hpp
tests_unit_test_logic_CPPFLAGS = $(PW_TEST_CPPFLAGS)
tests_unit_test_logic_LDADD = $(PW_TEST_LDADD)

# The event thread, device handling and the C entry points, on the simulator.
check_PROGRAMS += tests/unit/test_monitor
TESTS += tests/unit/test_monitor
tests_unit_test_monitor_SOURCES = \
	tests/unit/fake_host.hpp tests/unit/expect.hpp \
	tests/unit/parsed_options.hpp tests/unit/test_monitor.cpp
tests_unit_test_monitor_CPPFLAGS = $(PW_TEST_CPPFLAGS)
tests_unit_test_monitor_LDADD = $(PW_FAKE_HOST_LDADD)

# Fault injection through the verbs simulator, against the C entry points.
check_PROGRAMS += tests/unit/test_faults
TESTS += tests/unit/test_faults
tests_unit_test_faults_SOURCES = \
	tests/unit/fake_host.hpp tests/unit/expect.hpp \
	tests/unit/core_plugin.hpp tests/unit/test_faults.cpp
tests_unit_test_faults_CPPFLAGS = $(PW_TEST_CPPFLAGS)
tests_unit_test_faults_LDADD = $(PW_FAKE_HOST_LDADD)

# Device lifecycles and outcome checks: one case per failure found in review.
check_PROGRAMS += tests/unit/test_lifecycle
TESTS += tests/unit/test_lifecycle
tests_unit_test_lifecycle_SOURCES = \
	tests/unit/fake_host.hpp tests/unit/expect.hpp \
	tests/unit/core_plugin.hpp tests/unit/test_lifecycle.cpp
tests_unit_test_lifecycle_CPPFLAGS = $(PW_TEST_CPPFLAGS)
tests_unit_test_lifecycle_LDADD = $(PW_FAKE_HOST_LDADD)

# Operating it: the log window in a storm, the syslog lines, the metrics file.
check_PROGRAMS += tests/unit/test_operate
TESTS += tests/unit/test_operate
tests_unit_test_operate_SOURCES = \
	tests/unit/fake_host.hpp tests/unit/expect.hpp \
	tests/unit/core_plugin.hpp tests/unit/temp_dir.hpp tests/unit/parsed_options.hpp \
	tests/unit/test_operate.cpp
tests_unit_test_operate_CPPFLAGS = $(PW_TEST_CPPFLAGS)
tests_unit_test_operate_LDADD = $(PW_FAKE_HOST_LDADD)

# Model-based randomized device lifecycles (seeds 1..1000; see the file),
# run as twelve processes side by side by one test (test_model.sh: they
# mostly wait).
check_PROGRAMS += tests/unit/test_model
pw_model_test = tests/unit/test_model.sh
TESTS += $(pw_model_test)
EXTRA_DIST += $(pw_model_test)
tests_unit_test_model_SOURCES = \
	tests/unit/fake_host.hpp tests/unit/expect.hpp \
	tests/unit/core_plugin.hpp tests/unit/test_model.cpp
tests_unit_test_model_CPPFLAGS = $(PW_TEST_CPPFLAGS)
tests_unit_test_model_LDADD = $(PW_FAKE_HOST_LDADD)

# The device stages on their own (VerbsDevice, Devices, PortResolver) and
# the name tables, on the simulator without the event thread.
check_PROGRAMS += tests/unit/test_verbs
TESTS += tests/unit/test_verbs
tests_unit_test_verbs_SOURCES = \
	tests/unit/fake_host.hpp tests/unit/expect.hpp \
	tests/unit/test_verbs.cpp
tests_unit_test_verbs_CPPFLAGS = $(PW_TEST_CPPFLAGS)
tests_unit_test_verbs_LDADD = $(PW_FAKE_HOST_LDADD)

# The layout guard of the C glue. C, not C++ (OpenSM's headers are not
# C++): the glue is compiled in, with test doubles for opensm and the core.
check_PROGRAMS += tests/unit/test_glue_guard
TESTS += tests/unit/test_glue_guard
tests_unit_test_glue_guard_SOURCES = tests/unit/test_glue_guard.c
tests_unit_test_glue_guard_CPPFLAGS = $(AM_CPPFLAGS) $(OSM_CPPFLAGS)
tests_unit_test_glue_guard_LDADD = $(UMAD_LIBS)

# After a reset of OpenSM's device: the MAD path check, through the C entry points.
check_PROGRAMS += tests/unit/test_device_reset
TESTS += tests/unit/test_device_reset
tests_unit_test_device_reset_SOURCES = \
	tests/unit/fake_host.hpp tests/unit/expect.hpp \
	tests/unit/core_plugin.hpp tests/unit/temp_dir.hpp tests/unit/test_device_reset.cpp
tests_unit_test_device_reset_CPPFLAGS = $(PW_TEST_CPPFLAGS)
tests_unit_test_device_reset_LDADD = $(PW_FAKE_HOST_LDADD)
