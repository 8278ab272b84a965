#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# make check: scenario 1 (cable move), sweep_interval 0, every driver style.
SCEN_INTERVAL=0 SCEN_FABRIC=2sw SCEN_STYLES="mlx5 mlx4 rxe" SCEN_CASES="" PW_TEST_NAME=t_cable_move_0 \
    exec bash "$(dirname "$0")/cable_move.sh"
