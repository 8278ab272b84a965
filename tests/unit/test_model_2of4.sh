#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Part 2 of 4 of the model test's seeds: see tests/unit/test_model_part.sh.
exec bash "$(dirname "${BASH_SOURCE[0]}")/test_model_part.sh" 2/4
