#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# make check: scenario 6 (master and standby SM), sweep_interval 0, every driver style.
SCEN_INTERVAL=0 SCEN_FABRIC=2sw SCEN_STYLES="mlx5 mlx4 rxe" SCEN_CASES="" PW_TEST_NAME=t_two_sms_0 \
    exec bash "$(dirname "$0")/two_sms.sh"
