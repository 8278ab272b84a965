#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The systemd drop-in that turns portwatch's exit after a dead MAD path into a
# restart (systemd/portwatch-restart.conf), and portwatch-conf's
# restart-policy command that turns it off and on again.
#
#   1. systemd-analyze verify accepts Debian's opensm@.service (from the
#      installed opensm package) with the drop-in, with nothing on stderr; a
#      broken copy of the drop-in is reported (the check reads drop-ins).
#   2. The drop-in's policy: Restart=always (opensm exits with status 0
#      whatever the reason), a RestartSec, and a start limit
#      (StartLimitIntervalSec/StartLimitBurst in [Unit], where systemd reads
#      them).
#   3. portwatch-conf restart-policy, on a vendor directory and a unit
#      directory of the test's own: status enabled (0); disable writes an
#      override of the same name, marked as its own, and verify still
#      accepts the unit; status disabled (3); disable again changes nothing;
#      -n enable only says what it would do; enable removes the override
#      (and its directory), status enabled again; an override someone else
#      wrote is never touched; no packaged drop-in: status 3, disable an
#      error; a bad argument is a usage error (2).
# Needs systemd-analyze (Debian package systemd) and opensm's unit (opensm);
# no root.
set -uo pipefail
NAME=test_restart_policy
here=$(cd "$(dirname "$0")" && pwd)
srcdir=${abs_top_srcdir:-$(cd "$here/../.." && pwd)}
TOOL=$srcdir/scripts/portwatch-conf
DROPIN_SRC=$srcdir/systemd/portwatch-restart.conf

fail() { echo "FAIL: $NAME: $*"; exit 1; }
command -v systemd-analyze >/dev/null || fail "systemd-analyze not found: install the Debian package systemd"
OSM_UNIT=
for d in /usr/lib/systemd/system /lib/systemd/system; do
    [ -f "$d/opensm@.service" ] && { OSM_UNIT=$d/opensm@.service; break; }
done
[ -n "$OSM_UNIT" ] || fail "opensm@.service not found: install the Debian package opensm"
[ -f "$DROPIN_SRC" ] || fail "$DROPIN_SRC is missing"

W=$(mktemp -d "${TMPDIR:-/tmp}/pw-restart.XXXXXX") || fail "mktemp failed"
trap 'if [ "${PW_KEEP:-0}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi' EXIT
CHECKS=0
ok() { CHECKS=$(( CHECKS + 1 )); }

VENDOR=$W/vendor      # as the package installs it
ETC=$W/etc            # as /etc/systemd/system
mkdir -p "$VENDOR/opensm@.service.d" "$ETC"
cp "$OSM_UNIT" "$VENDOR/"
cp "$DROPIN_SRC" "$VENDOR/opensm@.service.d/"
INSTANCE=opensm@0x0002c90300001001.service

# verify: systemd-analyze verify of the instance with ETC before VENDOR, as
# /etc comes before the vendor directory; ERR gets its stderr.
verify() {
    ERR=$(SYSTEMD_UNIT_PATH="$ETC:$VENDOR:" systemd-analyze verify "$INSTANCE" 2>&1 >/dev/null)
}

# ---- 1. systemd-analyze verify
verify || fail "systemd-analyze verify failed on opensm@.service with the drop-in: $ERR"
[ -z "$ERR" ] || fail "systemd-analyze verify complains about the drop-in: $ERR"; ok
cp "$DROPIN_SRC" "$W/good.conf"
sed 's/^Restart=always/Restart=sometimes/' "$DROPIN_SRC" >"$VENDOR/opensm@.service.d/portwatch-restart.conf"
verify
grep -q "portwatch-restart.conf" <<<"$ERR" || fail "a broken drop-in passed systemd-analyze verify unnoticed: '$ERR'"; ok
cp "$W/good.conf" "$VENDOR/opensm@.service.d/portwatch-restart.conf"

# ---- 2. the policy
section_of() {   # KEY: the [section] KEY= is in
    awk -v k="$1" '/^\[/ { s = $0 } index($0, k "=") == 1 { print s; exit }' "$DROPIN_SRC"
}
[ "$(sed -n 's/^Restart=//p' "$DROPIN_SRC")" = always ] || fail "Restart= is not always (opensm exits with status 0)"; ok
[ "$(section_of Restart)" = "[Service]" ] || fail "Restart= is not in [Service]"; ok
[ "$(section_of RestartSec)" = "[Service]" ] || fail "no RestartSec= in [Service]"; ok
for k in StartLimitIntervalSec StartLimitBurst; do
    [ "$(section_of "$k")" = "[Unit]" ] || fail "$k= is not in [Unit] (systemd ignores it in [Service] since v230)"; ok
done
burst=$(sed -n 's/^StartLimitBurst=//p' "$DROPIN_SRC")
[ "$burst" -ge 2 ] && [ "$burst" -le 10 ] || fail "StartLimitBurst=$burst: not a bound against loops"; ok

# ---- 3. portwatch-conf restart-policy
export PORTWATCH_VENDOR_UNIT_DIRS=$VENDOR
run() { RC=0; OUT=$("$TOOL" --unit-dir "$ETC" "$@" 2>&1) || RC=$?; }
expect() {   # RC REGEX WHAT
    [ "$RC" = "$1" ] || fail "$3: exit status $RC, expected $1: $OUT"
    grep -qE -- "$2" <<<"$OUT" || fail "$3: output does not match /$2/: $OUT"
    ok
}
MASK=$ETC/opensm@.service.d/portwatch-restart.conf

run restart-policy status
expect 0 "restart policy for opensm@.service: enabled \($VENDOR/opensm@.service.d/portwatch-restart.conf\)" "status, packaged"
run restart-policy disable
expect 0 "restart policy for opensm@.service: disabled \($MASK\)" "disable"
grep -q "stays down after a device reset" <<<"$OUT" || fail "disable does not warn what it means: $OUT"; ok
[ -f "$MASK" ] && head -n 1 "$MASK" | grep -q '^# portwatch-conf restart-policy disable:' || fail "no marked override at $MASK"; ok
! grep -qv '^#' "$MASK" || fail "the override is not empty: $(cat "$MASK")"; ok
verify || fail "systemd-analyze verify fails with the override: $ERR"
[ -z "$ERR" ] || fail "systemd-analyze verify complains about the override: $ERR"; ok
run restart-policy status
expect 3 "restart policy for opensm@.service: disabled" "status, disabled"
cp "$MASK" "$W/mask.before"
run restart-policy disable
expect 0 "already disabled" "disable twice"
cmp -s "$MASK" "$W/mask.before" || fail "a second disable rewrote the override"; ok
run -n restart-policy enable
expect 0 "would remove $MASK" "enable --dry-run"
[ -f "$MASK" ] || fail "enable --dry-run removed the override"; ok
run restart-policy enable
expect 0 "restart policy for opensm@.service: enabled" "enable"
[ ! -e "$MASK" ] && [ ! -e "$ETC/opensm@.service.d" ] || fail "enable left $(find "$ETC" -mindepth 1)"; ok
run restart-policy enable
expect 0 "already enabled" "enable twice"

# Someone else's override: never touched.
mkdir -p "$ETC/opensm@.service.d"
printf '[Service]\nRestart=on-failure\n' >"$MASK"
cp "$MASK" "$W/foreign"
run restart-policy status
expect 3 "overridden by $MASK \(not written by portwatch-conf\)" "status, foreign override"
for a in enable disable; do
    run restart-policy "$a"
    expect 1 "not written by portwatch-conf: not touching it" "$a over a foreign override"
    cmp -s "$MASK" "$W/foreign" || fail "$a changed a foreign override"; ok
done
rm -rf "${ETC:?}/opensm@.service.d"

# Not installed.
PORTWATCH_VENDOR_UNIT_DIRS=$W/nowhere run restart-policy status
expect 3 "restart policy: not installed" "status without the package's drop-in"
PORTWATCH_VENDOR_UNIT_DIRS=$W/nowhere run restart-policy disable
expect 1 "no packaged portwatch-restart.conf" "disable without the package's drop-in"
[ ! -e "$ETC/opensm@.service.d" ] || fail "disable without a drop-in wrote something"; ok

# Usage.
run restart-policy
expect 2 "takes one of enable, disable, status" "no argument"
run restart-policy maybe
expect 2 "expected enable, disable or status" "a bad argument"

echo "PASS: $NAME: $CHECKS checks (systemd-analyze verify on $OSM_UNIT with the drop-in and its override)"
