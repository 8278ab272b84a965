#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# make check: scenario 2 at sweep_interval 10 (representative subset: mlx4).
SCEN_INTERVAL=10 SCEN_FABRIC=2sw SCEN_STYLES="mlx4" SCEN_CASES="" PW_TEST_NAME=t_switch_reboot_10 \
    exec bash "$(dirname "$0")/switch_reboot.sh"
