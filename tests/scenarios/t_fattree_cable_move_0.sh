#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# make check: scenario 7: scenario 1 on the 280-node fat tree (two of its moves), sweep_interval 0.
SCEN_INTERVAL=0 SCEN_FABRIC=fattree SCEN_STYLES="mlx5 mlx4 rxe" SCEN_CASES="same-between other-mid" PW_TEST_NAME=t_fattree_cable_move_0 \
    exec bash "$(dirname "$0")/cable_move.sh"
