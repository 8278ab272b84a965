#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# make check: scenario 3 at sweep_interval 10 (representative subset: rxe).
SCEN_INTERVAL=10 SCEN_FABRIC=2sw SCEN_STYLES="rxe" SCEN_CASES="" PW_TEST_NAME=t_flap_10 \
    exec bash "$(dirname "$0")/flap.sh"
