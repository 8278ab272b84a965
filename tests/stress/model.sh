#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The model-based lifecycle test (tests/unit/test_model.cpp) over many
# seeds: LIFECYCLES lifecycles, split into shards that run in parallel (each
# shard is its own process with its own verbs simulator; a lifecycle mostly
# waits, so shards share the cores well).
#
#   tests/stress/model.sh [LIFECYCLES]      (default 10000; PW_SEED=N: first seed)
#
# Run from a built tree, or with abs_top_builddir set; builds the test
# program if needed. The first seed is printed; a failing lifecycle prints
# its own seed, its steps and the command that replays it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
srcdir=${abs_top_srcdir:-$(cd "$here/../.." && pwd)}
build=${abs_top_builddir:-$srcdir}
total=${1:-10000}
case $total in ''|*[!0-9]*|0) echo "model.sh: LIFECYCLES is a positive whole number" >&2; exit 2 ;; esac
# Seeds above make check's fixed 1..1000, different on every run.
first=${PW_SEED:-$(( 1001 + ($(date +%s) % 100000) * 100 + RANDOM % 100 ))}
shards=$(( $(nproc 2>/dev/null || echo 2) * 4 ))
[ "$shards" -ge 8 ] || shards=8

make -s -C "$build" tests/unit/test_model >/dev/null || { echo "model.sh: cannot build tests/unit/test_model" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/pw-model.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

echo "model.sh: $total lifecycles, seeds $first..$(( first + total - 1 )), $shards shards (PW_SEED=$first repeats this run)"
# The shards are make check's own runner's parts (tests/unit/test_model.sh,
# PW_MODEL_PROCS): equal parts of the seeds, one process each.
rc=0
PW_MODEL_FIRST=$first PW_MODEL_LIFECYCLES=$total PW_MODEL_PROCS=$shards abs_top_builddir=$build \
    bash "$srcdir/tests/unit/test_model.sh" >"$work/out" 2>&1 || rc=$?
fail=0
if [ "$rc" = 0 ]; then
    grep '^model:' "$work/out"
else
    fail=1
    echo "model.sh: a shard failed (exit $rc):"
    cat "$work/out"
fi
if [ "$fail" = 0 ]; then
    # One line over all shards: the slowest recovery and where it was.
    sed -n 's/^model: \([0-9]*\) lifecycles.*slowest recovery \([0-9.]*\) ms (seed \([0-9]*\)).*/\1 \2 \3/p' "$work/out" |
        awk -v t="$total" '{ n += $1; if ($2 > s) { s = $2; seed = $3 } }
             END { printf "model.sh: %d of %d lifecycles, 0 violations; slowest recovery %.1f ms (seed %d)\n", n, t, s, seed;
                   exit (n == t ? 0 : 1) }' || fail=1
fi
[ "$fail" = 0 ] && echo "PASS: model.sh" || echo "FAIL: model.sh"
exit "$fail"
