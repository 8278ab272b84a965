#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# test_bounce.sh with rxe-style verbs events (see there for what it asserts).
exec bash "$(dirname "$0")/test_bounce.sh" rxe
