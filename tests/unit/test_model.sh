#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The model test (tests/unit/test_model) over its seeds (PW_MODEL_FIRST,
# PW_MODEL_LIFECYCLES; make check: 1..1000) as PW_MODEL_PROCS processes side
# by side (default 12), process J running part J/PROCS (PW_MODEL_PART), each
# with the verbs simulator preloaded as for every unit test and its own
# simulator (they share nothing):
#
#   tests/unit/test_model.sh
#
# A lifecycle mostly waits on the plugin's timers (50 lifecycles: 10.5 s,
# 0.3 s of CPU), so twelve processes take about a twelfth of the time one
# takes, in one of make check's job slots. Every process's output is
# printed, in seed order; the exit status is the first failing process's
# (0 when all passed).
set -u
build=${abs_top_builddir:?make check sets abs_top_builddir}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
procs=${PW_MODEL_PROCS:-12}
case $procs in ''|*[!0-9]*|0) echo "test_model.sh: PW_MODEL_PROCS is a positive whole number" >&2; exit 99 ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/pw-model.XXXXXX") || exit 99
pids=()
trap 'rm -rf "$work"' EXIT
# Killed (a harness's timeout, ^C): the processes go too.
trap '[ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null; exit 99' TERM INT HUP
for ((j = 1; j <= procs; j++)); do
    PW_MODEL_PART=$j/$procs "$here/../with-vsim" "$build/tests/unit/test_model" >"$work/$j.out" 2>&1 &
    pids+=($!)
done
status=0
for ((j = 1; j <= procs; j++)); do
    rc=0
    wait "${pids[$((j - 1))]}" || rc=$?
    echo "---- part $j/$procs: exit status $rc"
    cat "$work/$j.out"
    [ "$status" -ne 0 ] || status=$rc
done
exit "$status"
