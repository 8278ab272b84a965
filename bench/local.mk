# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Benchmarks: "make bench" builds the plugin, the verbs simulator and the
# programs below, runs bench/run.sh and rewrites docs/BENCHMARKS.md. The
# programs are EXTRA_PROGRAMS, built only when make bench asks for them, so
# make, make check and make distcheck never build or run any of this.
EXTRA_PROGRAMS += bench/bench_inproc bench/smp_watch

bench_bench_inproc_SOURCES = bench/bench_inproc.cpp
bench_bench_inproc_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/verbs_sim
bench_bench_inproc_LDADD = plugin/libportwatch_core.la -ldl -lpthread

# A umad client (libibumad, from libibumad-dev): under umad2sim it is one
# more ibsim client.
bench_smp_watch_SOURCES = bench/smp_watch.c
bench_smp_watch_LDADD = -libumad

EXTRA_DIST += \
	bench/README.md \
	bench/packages \
	bench/require-packages \
	bench/run.sh \
	bench/bounce.sh \
	bench/idle.sh \
	bench/fattree.sh \
	bench/vsim_relay.py \
	bench/report.py

CLEANFILES += bench/bench_inproc$(EXEEXT) bench/smp_watch$(EXEEXT)

bench_deps = plugin/libportwatch.la tests/verbs_sim/libvsim.la \
	tests/verbs_sim/vsimctl$(EXEEXT) bench/bench_inproc$(EXEEXT) bench/smp_watch$(EXEEXT)

bench: $(bench_deps)
	@$(SHELL) $(srcdir)/bench/require-packages $(srcdir)/bench/packages
	abs_top_srcdir=$(abs_top_srcdir) abs_top_builddir=$(abs_top_builddir) \
		bash $(srcdir)/bench/run.sh

bench-clean:
	rm -rf bench/results

clean-local: bench-clean

.PHONY: bench bench-clean
