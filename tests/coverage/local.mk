# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# make coverage, in a build configured with --enable-coverage: zeroes the gcov
# counters, runs make check (unit and end-to-end tests: opensm writes the
# plugin's counters when it exits), then make coverage-report reads them with
# gcovr, restricted to plugin/, and writes docs/COVERAGE.md in the source tree
# (tests/coverage/report.py). Fails when make check failed; the report is
# written either way. scripts/check-coverage runs this in _build/coverage;
# scripts/check-sanitizers runs the same tests in its AddressSanitizer build,
# configured with coverage too, and then make coverage-report.
EXTRA_DIST += tests/coverage/report.py docs/COVERAGE.md
pw_coverage_json = coverage.json
# The package and configure tests build portwatch anew from a copy of the
# sources (not this instrumented build): they add nothing to the counters,
# and make coverage leaves them out.
pw_coverage_skip = tests/pkg/test_deb.sh tests/pkg/test_rpm.sh tests/pkg/test_configure.sh
CLEANFILES += $(pw_coverage_json)
# make coverage-report reads the counters the tests left (gcovr) and writes
# the report: scripts/check-sanitizers runs the tests once in a build
# configured with both address,undefined and coverage, then this.
if PW_COVERAGE
coverage:
	find . -name '*.gcda' -delete
	tests=; for t in $(TESTS); do \
		case " $(pw_coverage_skip) " in *" $$t "*) ;; *) tests="$$tests $$t" ;; esac; \
	done; \
	status=0; $(MAKE) $(AM_MAKEFLAGS) check TESTS="$$tests" || status=$$?; \
	$(MAKE) $(AM_MAKEFLAGS) coverage-report || exit 1; \
	exit $$status
coverage-report:
	src=`cd $(top_srcdir) && pwd -P`; \
	$(GCOVR) --root "$$src" --object-directory $(abs_top_builddir) \
		--filter "$$src/plugin/" --exclude-throw-branches --exclude-unreachable-branches \
		--json $(pw_coverage_json) $(abs_top_builddir) || exit 1; \
	python3 $(srcdir)/tests/coverage/report.py $(pw_coverage_json) \
		$(abs_top_srcdir)/docs/COVERAGE.md
else
coverage coverage-report:
	@echo "make $@ needs a build configured with --enable-coverage (see scripts/check-sanitizers)" >&2
	@exit 1
endif
.PHONY: coverage coverage-report
