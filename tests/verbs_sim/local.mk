# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The libibverbs simulator: an LD_PRELOAD library standing in for libibverbs,
# its control CLI, and its self-test.  See tests/verbs_sim/README.md.

# libvsim.so: a check-only libtool module.  -rpath makes libtool build a
# shared object although the library is never installed; the test runner
# (tests/with-vsim) preloads tests/verbs_sim/.libs/libvsim.so.
check_LTLIBRARIES += tests/verbs_sim/libvsim.la
tests_verbs_sim_libvsim_la_SOURCES = \
	tests/verbs_sim/commands.cpp \
	tests/verbs_sim/commands.hpp \
	tests/verbs_sim/control.cpp \
	tests/verbs_sim/diag.cpp \
	tests/verbs_sim/diag.hpp \
	tests/verbs_sim/model.cpp \
	tests/verbs_sim/model.hpp \
	tests/verbs_sim/no_destructor.hpp \
	tests/verbs_sim/registry.hpp \
	tests/verbs_sim/registry_control.cpp \
	tests/verbs_sim/registry_devices.cpp \
	tests/verbs_sim/registry_events.cpp \
	tests/verbs_sim/uevent.cpp tests/verbs_sim/uevent.hpp \
	tests/verbs_sim/registry_queries.cpp \
	tests/verbs_sim/socket_server.cpp \
	tests/verbs_sim/socket_server.hpp \
	tests/verbs_sim/unique_fd.hpp \
	tests/verbs_sim/verbs_api.cpp \
	tests/verbs_sim/verbs_strings.cpp \
	tests/verbs_sim/vsim.h
# Only the verbs headers: the simulator must not link the real libibverbs.
tests_verbs_sim_libvsim_la_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_verbs_sim_libvsim_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -rpath $(abs_builddir) \
	-Wl,--version-script=$(srcdir)/tests/verbs_sim/libvsim.map
tests_verbs_sim_libvsim_la_LIBADD = -lpthread
EXTRA_tests_verbs_sim_libvsim_la_DEPENDENCIES = $(srcdir)/tests/verbs_sim/libvsim.map

# vsimctl: talks to a simulator's VSIM_SOCKET from test scripts.
check_PROGRAMS += tests/verbs_sim/vsimctl
tests_verbs_sim_vsimctl_SOURCES = \
	tests/verbs_sim/vsimctl.cpp \
	tests/verbs_sim/diag.hpp \
	tests/verbs_sim/unique_fd.hpp

# Self-test.  It calls the ordinary verbs API and is run by make check through
# tests/with-vsim, so the calls reach the simulator; it fails if they do not.
check_PROGRAMS += tests/verbs_sim/test_verbs_sim
TESTS += tests/verbs_sim/test_verbs_sim
tests_verbs_sim_test_verbs_sim_SOURCES = \
	tests/verbs_sim/test_verbs_sim.cpp \
	tests/verbs_sim/test_vsim_events.cpp \
	tests/verbs_sim/test_vsim_lifecycle.cpp \
	tests/verbs_sim/test_vsim_control.cpp \
	tests/verbs_sim/test_helpers.cpp \
	tests/verbs_sim/test_helpers.hpp
tests_verbs_sim_test_verbs_sim_CPPFLAGS = $(AM_CPPFLAGS) $(BOOST_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_verbs_sim_test_verbs_sim_LDFLAGS = $(AM_LDFLAGS) $(BOOST_LDFLAGS)
tests_verbs_sim_test_verbs_sim_LDADD = $(BOOST_UNIT_TEST_FRAMEWORK_LIB) $(IBVERBS_LIBS) -lpthread -ldl

EXTRA_DIST += \
	tests/verbs_sim/README.md \
	tests/verbs_sim/libvsim.map
