#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# make check: scenario 7: scenario 3 on the 280-node fat tree, sweep_interval 0.
SCEN_INTERVAL=0 SCEN_FABRIC=fattree SCEN_STYLES="mlx5 mlx4 rxe" SCEN_CASES="" PW_TEST_NAME=t_fattree_flap_0 \
    exec bash "$(dirname "$0")/flap.sh"
