#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Scenario 2: the switch the SM hangs off reboots between two light sweeps.
#
#   ibsim: Clear "Switch1" (every port of the switch down, its LID and SM LID
#          reset), SCEN_REBOOT_S, ReLink "Switch1" (every cable back, at INIT);
#   verbs: what the SM's own HCA driver reports when its neighbour reboots:
#          link DOWN, then back at INIT (rxe: ACTIVE).
# The switch's trap 128 for its ports cannot reach the SM (the SM's own link
# is the one that went down, and the switch has lost its LID), so stock
# opensm finds out at its next timer sweep, or never at sweep_interval 0.
# (fattree: Leaf1, with 16 HCAs and 16 uplinks.)
set -euo pipefail
PW_TEST_NAME=${PW_TEST_NAME:-switch_reboot}
. "$(dirname "$0")/lib.sh"
scen_init
SCEN_REBOOT_S=${SCEN_REBOOT_S:-0.5}

mapfile -t runs < <(scen_modes)
for run in "${runs[@]}"; do
    # shellcheck disable=SC2086  # "MODE STYLE": two words on purpose
    scen_begin $run
    if scen_want reboot; then
        scen_align
        pw_log "--- reboot: Clear \"$SCEN_SM_SWITCH\", ${SCEN_REBOOT_S} s, ReLink \"$SCEN_SM_SWITCH\""
        scen_loss "Clear \"$SCEN_SM_SWITCH\""
        pw_sleep "$SCEN_REBOOT_S"
        scen_back "ReLink \"$SCEN_SM_SWITCH\""
        scen_finish_case switch_reboot reboot
    fi
    scen_end
done

scen_finish
