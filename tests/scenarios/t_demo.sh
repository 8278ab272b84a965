#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# make check: scripts/demo runs to the end (stock opensm and opensm with
# portwatch, cable move and switch reboot), prints its timeline, exits 0
# (portwatch did its job) and leaves no process behind.
set -euo pipefail
top=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
out=$(mktemp "${TMPDIR:-/tmp}/pw-demo-test.XXXXXX")
trap 'rm -f "$out"' EXIT
rc=0
start=$(date +%s)
# make check has built everything: the demo must not start a build of its own.
bash "$top/scripts/demo" --no-build >"$out" 2>&1 </dev/null || rc=$?
cat "$out"
fail() { echo "FAIL: t_demo: $*"; exit 1; }
[ "$rc" = 0 ] || fail "scripts/demo exited with status $rc"
grep -q '^== timeline' "$out" || fail "no timeline in the demo's output"
grep -q '^   INITIATING HEAVY SWEEP' "$out" || fail "no heavy sweep row in the timeline"
grep -q 'portwatch: mlx5_0:1 DOWN -> INIT .*\[action=sweep\]' "$out" || fail "the plugin's link-back line is not shown"
grep -q '^PASS: demo: ' "$out" || fail "the demo did not report success"
echo "PASS: t_demo: demo ran in $(( $(date +%s) - start )) s"
