# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Real-kernel test: portwatch on rdma_rxe inside a qemu VM (TCG) booted from a
# Debian kernel package, with stock opensm on an ibsim fabric. Needs network
# access for the first run (apt-get download of the kernel, cached afterwards
# in $PORTWATCH_VM_CACHE or ~/.cache/portwatch-vm). See tests/vm/README.md.
# Run through SH_LOG_COMPILER like the other .sh tests.
TESTS += tests/vm/test_rxe_kernel.sh
EXTRA_DIST += \
	tests/vm/test_rxe_kernel.sh \
	tests/vm/build-image \
	tests/vm/guest-init.sh \
	tests/vm/README.md
