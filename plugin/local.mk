# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The portwatch core (C++17, no OpenSM types): a convenience library shared by
# the plugin and the unit tests.
noinst_LTLIBRARIES += plugin/libportwatch_core.la
plugin_libportwatch_core_la_SOURCES = \
	include/portwatch/host.h \
	plugin/clock.hpp \
	plugin/backoff.hpp \
	plugin/core_api.cpp \
	plugin/device_arrivals.cpp plugin/device_arrivals.hpp \
	plugin/device_reset.cpp \
	plugin/devices.cpp plugin/devices.hpp \
	plugin/errno_text.hpp \
	plugin/event_thread.cpp \
	plugin/link_return.cpp \
	plugin/mad_file_watch.cpp plugin/mad_file_watch.hpp \
	plugin/mad_path_check.cpp plugin/mad_path_check.hpp \
	plugin/outcome.cpp plugin/outcome.hpp \
	plugin/port_resolver.cpp plugin/port_resolver.hpp \
	plugin/host.cpp plugin/host.hpp \
	plugin/log_limiter.cpp plugin/log_limiter.hpp \
	plugin/metrics.cpp plugin/metrics.hpp \
	plugin/metrics_file.cpp plugin/metrics_file.hpp \
	plugin/metrics_publisher.cpp plugin/metrics_publisher.hpp \
	plugin/monitor.cpp plugin/monitor.hpp \
	plugin/options.cpp plugin/options.hpp \
	plugin/osm_reports.cpp \
	plugin/policy.cpp plugin/policy.hpp \
	plugin/port_events.cpp \
	plugin/port_tracker.cpp plugin/port_tracker.hpp \
	plugin/telemetry.cpp plugin/telemetry.hpp \
	plugin/transition_log.cpp plugin/transition_log.hpp \
	plugin/verbs_device.cpp plugin/verbs_device.hpp \
	plugin/wakeup.cpp plugin/wakeup.hpp
plugin_libportwatch_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(BOOST_CPPFLAGS) $(IBVERBS_CFLAGS)
plugin_libportwatch_core_la_LIBADD = $(BOOST_LDFLAGS) $(BOOST_THREAD_LIB) $(IBVERBS_LIBS)

# The plugin OpenSM dlopen()s as "libportwatch.so": the C glue (the only file
# that sees OpenSM headers) plus the core. osm_sm_sweep and osm_exit_flag live
# in the opensm executable and stay undefined here (no -z defs) until dlopen.
lib_LTLIBRARIES += plugin/libportwatch.la
plugin_libportwatch_la_SOURCES = plugin/osm_glue.c
plugin_libportwatch_la_CPPFLAGS = $(AM_CPPFLAGS) $(OSM_CPPFLAGS)
plugin_libportwatch_la_LIBADD = plugin/libportwatch_core.la $(OSM_LIBS) $(UMAD_LIBS)
plugin_libportwatch_la_LDFLAGS = $(AM_LDFLAGS) $(PW_SAN_PLUGIN_LDFLAGS) -module -avoid-version -shared \
	-Wl,--version-script=$(srcdir)/plugin/portwatch.map
# Link with the C++ driver: the core needs the C++ runtime.
nodist_EXTRA_plugin_libportwatch_la_SOURCES = dummy.cxx
plugin_libportwatch_la_DEPENDENCIES = plugin/libportwatch_core.la $(srcdir)/plugin/portwatch.map
EXTRA_DIST += plugin/portwatch.map

# No libportwatch.la is needed at run time: OpenSM only dlopen()s the .so.
install-exec-hook:
	rm -f $(DESTDIR)$(libdir)/libportwatch.la
	@echo "portwatch: installed $(libdir)/libportwatch.so; if $(libdir) is not a"
	@echo "portwatch: default library directory, run ldconfig or add it to ld.so.conf.d"
uninstall-hook:
	rm -f $(DESTDIR)$(libdir)/libportwatch.so
