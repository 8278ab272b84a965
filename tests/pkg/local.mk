# Packaging: the Debian package built, installed, loaded by stock opensm and
# removed (test_deb.sh, root only), and the man pages' lint (test_manpages.sh).
# See tests/pkg/README.md.
TESTS += tests/pkg/test_deb.sh tests/pkg/test_manpages.sh
EXTRA_DIST += \
	tests/pkg/README.md \
	tests/pkg/test_manpages.sh \
	tests/pkg/test_deb.sh \
	debian/changelog \
	debian/control \
	debian/copyright \
	debian/opensm-portwatch.lintian-overrides \
	debian/opensm-portwatch.triggers \
	debian/rules \
	debian/source/format

# The tests that need neither an ibsim fabric (tests/e2e, tests/vm), nor a
# VM, nor root (test_deb.sh): what the Debian build runs (debian/rules,
# override_dh_auto_test).
check-nofabric:
	@list=; for t in $(TESTS); do \
	  case $$t in tests/e2e/*|tests/vm/*|tests/pkg/test_deb.sh) ;; *) list="$$list $$t" ;; esac; \
	done; \
	echo "check-nofabric:$$list"; \
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="$$list"
.PHONY: check-nofabric
