#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Which opensm portwatch-fieldcheck checks when --pid does not name one:
# the only one running; with several, the one started with the --guid it is
# given (one opensm per port, as Debian's opensm@GUID runs them); otherwise
# it refuses and says how to name one.
#
# Set-up: the test runs in a PID namespace of its own (it re-executes itself
# under unshare --pid --mount-proc), so that the only processes called opensm
# are its stand-ins, whatever else runs on the host (other tests' opensm).
# A stand-in is a copy of bash named opensm with an opensm command line
# (-F CONF -f LOG --guid GUID); it maps no libportwatch.so, so the tool goes
# as far as "portwatch is not loaded in opensm (pid N)" and stops there:
# the PID it names is the one it chose. Nothing is sent to any fabric.
set -euo pipefail
if [ -z "${PW_IN_PID_NS:-}" ]; then
    if ! out=$(unshare --pid --fork --mount-proc true 2>&1); then
        echo "FAIL: test_fieldcheck_choice: cannot make a PID namespace (run as root): $out"
        exit 1
    fi
    PW_IN_PID_NS=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
PW_TEST_NAME=${PW_TEST_NAME:-test_fieldcheck_choice}
. "$(dirname "$0")/lib.sh"
pw_init
pw_need_cmd ibv_devinfo ibverbs-utils

TOOL=$PW_SRCDIR/scripts/portwatch-fieldcheck
cp "$(command -v bash)" "$PW_DIR/opensm"
: >"$PW_DIR/opensm.log"
: >"$PW_DIR/opensm.conf"

# standin GUID: an "opensm" bound to GUID (as written on its command line); its PID in STANDIN_PID.
standin() {
    "$PW_DIR/opensm" -c 'sleep 600 & wait' -F "$PW_DIR/opensm.conf" -f "$PW_DIR/opensm.log" --guid "$1" </dev/null >/dev/null 2>&1 &
    STANDIN_PID=$!
    # Named opensm once it has exec'd (until then it is this shell's fork).
    local t_end
    pw__now; t_end=$(( PW_NOW + 5000000 ))
    until [ "$(cat "/proc/$STANDIN_PID/comm" 2>/dev/null)" = opensm ]; do
        pw__now
        [ "$PW_NOW" -lt "$t_end" ] || pw_fail "stand-in $STANDIN_PID not named opensm after 5 s"
        pw_sleep 0.01
    done
}
# chose CASE MESSAGE ARGS...: the tool refuses (exit 2) saying MESSAGE.
chose() {
    local name=$1 msg=$2 rc=0; shift 2
    "$TOOL" --yes "$@" >"$PW_DIR/out" 2>&1 </dev/null || rc=$?
    sed 's/^/    /' "$PW_DIR/out"
    [ "$rc" = 2 ] || pw_fail "$name: exit status $rc, expected 2"
    grep -qF -- "$msg" "$PW_DIR/out" || pw_fail "$name: no '$msg'"
}

pw_log "none running"
chose "none" "no opensm is running"

pw_log "one running"
standin 0x0002c90300000001
first=$STANDIN_PID
chose "one" "portwatch is not loaded in opensm (pid $first)"

pw_log "two running"
standin 0x2c90300000002
second=$STANDIN_PID
chose "two" "2 opensm processes are running ($first $second): name one with --pid"
# Written otherwise than on opensm's command line: the same GUID.
chose "two, --guid of the second" "portwatch is not loaded in opensm (pid $second)" --guid 0x0002C90300000002
chose "two, --guid of the first" "portwatch is not loaded in opensm (pid $first)" --guid 2c90300000001
chose "two, --guid of neither" "2 opensm processes are running" --guid 0x0002c90300000009
chose "--pid" "portwatch is not loaded in opensm (pid $second)" --pid "$second"
chose "--pid not opensm" "--pid $$: no opensm process has that PID" --pid "$$"

kill "$first" "$second" 2>/dev/null || true
pw_pass "the only opensm; with two, the one with the --guid given (however written), else a refusal asking for --pid; --pid"
