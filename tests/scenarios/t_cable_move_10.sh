#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# make check: scenario 1 at sweep_interval 10 (representative subset: two moves, mlx5).
SCEN_INTERVAL=10 SCEN_FABRIC=2sw SCEN_STYLES="mlx5" SCEN_CASES="same-between other-mid" PW_TEST_NAME=t_cable_move_10 \
    exec bash "$(dirname "$0")/cable_move.sh"
