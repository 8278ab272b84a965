# Unit tests (Boost.Test). Every test binary runs with the verbs simulator preloaded.
LOG_COMPILER = env abs_top_builddir=$(abs_top_builddir) $(top_srcdir)/tests/with-vsim
TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = env abs_top_builddir=$(abs_top_builddir) abs_top_srcdir=$(abs_top_srcdir) bash
EXTRA_DIST += tests/with-vsim
