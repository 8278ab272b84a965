#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The K-th of N equal parts of the model test's seeds (tests/unit/test_model,
# PW_MODEL_PART=K/N; PW_MODEL_LIFECYCLES and PW_MODEL_FIRST still choose the
# whole range), with the verbs simulator preloaded as for every unit test:
#
#   tests/unit/test_model_part.sh K/N
#
# make check runs four parts side by side (test_model_1of4.sh ..
# test_model_4of4.sh): a lifecycle mostly waits for the plugin's timers
# (50 lifecycles: 10.5 s, 0.3 s of CPU), so the parts together take a
# quarter of the time one process takes for all seeds, and they share
# nothing (each process has its own simulator).
set -u
part=${1:?usage: test_model_part.sh K/N}
build=${abs_top_builddir:?make check sets abs_top_builddir}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PW_MODEL_PART=$part exec "$here/../with-vsim" "$build/tests/unit/test_model"
