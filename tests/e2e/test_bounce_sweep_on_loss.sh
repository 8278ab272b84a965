#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# test_bounce.sh (mlx5-style events) with portwatch.sweep_on_loss=yes: the
# link loss itself requests a heavy sweep too (opensm then logs "SM port is
# down" and drops to DISCOVERING); the return must still bring exactly one
# heavy sweep, and the SM back to MASTER with its port ACTIVE.
export PW_TEST_NAME=test_bounce_sweep_on_loss
export PW_BOUNCE_OPTIONS='portwatch.sweep_on_loss=yes'
export PW_BOUNCE_LOSS_SWEEPS=1
export PW_BOUNCES=${PW_BOUNCES:-10}
exec bash "$(dirname "$0")/test_bounce.sh" mlx5
