#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# A short run of the lifecycle stress test (tests/stress/lifecycle.sh):
# PW_LIFECYCLE_CYCLES (default 20) opensm start/stop cycles with an event
# storm and SIGTERM at random points, including inside create().
export PW_TEST_NAME=test_lifecycle
exec bash "$(dirname "$0")/../stress/lifecycle.sh" "${PW_LIFECYCLE_CYCLES:-20}"
