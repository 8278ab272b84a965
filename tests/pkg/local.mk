# Packaging: the man pages' lint (test_manpages.sh). See tests/pkg/README.md.
TESTS += tests/pkg/test_manpages.sh
EXTRA_DIST += tests/pkg/test_manpages.sh
