# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Packaging: the Debian package built, installed, loaded by stock opensm and
# removed (test_deb.sh, root only), the RPM package built with rpmbuild,
# installed into a private rpm root, loaded and erased (test_rpm.sh), how
# configure finds OpenSM (test_configure.sh), and the
# man pages' lint (test_manpages.sh).
# See tests/pkg/README.md.
TESTS += tests/pkg/test_deb.sh tests/pkg/test_rpm.sh tests/pkg/test_configure.sh tests/pkg/test_manpages.sh tests/pkg/test_licence.sh
EXTRA_DIST += \
	tests/pkg/README.md \
	tests/pkg/test_manpages.sh \
	tests/pkg/test_licence.sh \
	tests/pkg/fresh_root.sh \
	tests/pkg/test_deb.sh \
	tests/pkg/test_rpm.sh \
	tests/pkg/test_configure.sh \
	tests/pkg/lib.sh \
	debian/changelog \
	debian/control \
	debian/copyright \
	debian/README.Debian \
	debian/opensm-portwatch.lintian-overrides \
	debian/opensm-portwatch.postinst \
	debian/opensm-portwatch.postrm \
	debian/opensm-portwatch.triggers \
	debian/rules \
	debian/source/format

# The tests that need neither an ibsim fabric, a VM nor root: what the Debian
# build runs (debian/rules, override_dh_auto_test). A list of what may run
# rather than of what may not, so that a new fabric test never breaks the
# package build; add new fabric-free tests here.
nofabric_tests = $(unit_tests) tests/admin/test_portwatch_conf.sh tests/pkg/test_manpages.sh \
	tests/pkg/test_licence.sh
# The model test runs 200 lifecycles here (make check: 1000), so that a
# package build stays short.
check-nofabric:
	PW_MODEL_LIFECYCLES=$${PW_MODEL_LIFECYCLES:-200} $(MAKE) $(AM_MAKEFLAGS) check TESTS="$(nofabric_tests)"
.PHONY: check-nofabric
