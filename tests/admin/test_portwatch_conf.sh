#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# scripts/portwatch-conf on copies of real opensm.conf files (written by
# `opensm -c`) and on hand-made ones: what it changes, what it keeps, what it
# refuses. Needs /usr/sbin/opensm (Debian package opensm); no root, no ibsim.
#
#   bash tests/admin/test_portwatch_conf.sh        (PW_KEEP=1 keeps the work dir)
#
# Prints "PASS: test_portwatch_conf: N checks" or "FAIL: ..." and exits 0 / 1.
set -uo pipefail
NAME=test_portwatch_conf
here=$(cd "$(dirname "$0")" && pwd)
srcdir=${abs_top_srcdir:-$(cd "$here/../.." && pwd)}
TOOL=$srcdir/scripts/portwatch-conf
OPENSM=${OPENSM:-/usr/sbin/opensm}

fail() { echo "FAIL: $NAME: $*"; exit 1; }
[ -x "$TOOL" ] || fail "$TOOL is missing or not executable"
[ -x "$OPENSM" ] || fail "$OPENSM not found: install the Debian package opensm"

W=$(mktemp -d "${TMPDIR:-/tmp}/pw-conf.XXXXXX") || fail "mktemp failed"
cleanup() {
    if [ "${PW_KEEP:-0}" = 1 ]; then echo "kept $W"; else chmod -R u+w "$W" 2>/dev/null; rm -rf "$W"; fi
}
trap cleanup EXIT

CHECKS=0
ok() { CHECKS=$(( CHECKS + 1 )); }

# run ARGS...: run the tool; RC, OUT (stdout+stderr).
run() {
    RC=0
    OUT=$("$TOOL" "$@" 2>&1) || RC=$?
}
expect_rc() {   # RC-WANTED WHAT
    [ "$RC" = "$1" ] || fail "$2: exit status $RC, expected $1; output:"$'\n'"$OUT"
    ok
}
expect_out() {  # REGEX WHAT
    grep -qE -- "$1" <<<"$OUT" || fail "$2: output does not match /$1/:"$'\n'"$OUT"
    ok
}
expect_line() { # FILE LINE WHAT: FILE has exactly this line
    grep -qxF -- "$2" "$1" || fail "$3: no line '$2' in $(basename "$1"); its plugin lines:"$'\n'"$(grep -n 'event_plugin' "$1")"
    ok
}
same_file() {   # A B WHAT
    cmp -s "$1" "$2" || fail "$3: $(basename "$2") differs from $(basename "$1"):"$'\n'"$(diff "$1" "$2" | head -20)"
    ok
}
no_backup() {   # FILE WHAT
    local b
    b=$(find "$(dirname "$1")" -maxdepth 1 -name "$(basename "$1").bak-*" | head -1) || true
    [ -z "$b" ] || fail "$2: a backup $b was written"
    ok
}
changed_lines() {  # A B: number of lines diff reports as changed
    diff "$1" "$2" | grep -c '^>' || true
}

# ------------------------------------------------------------ real files
mkdir -p "$W/osm"
( cd "$W/osm" && OSM_CACHE_DIR=$W/osm OSM_TMP_DIR=$W/osm \
    timeout 20 "$OPENSM" -c "$W/stock.conf" -f "$W/osm/opensm.log" ) </dev/null >"$W/opensm-c.out" 2>&1 \
    || fail "opensm -c failed: $(tail -5 "$W/opensm-c.out")"
grep -qx 'event_plugin_name (null)' "$W/stock.conf" || fail "opensm -c wrote no 'event_plugin_name (null)' line"
grep -qx 'event_plugin_options (null)' "$W/stock.conf" || fail "opensm -c wrote no 'event_plugin_options (null)' line"

# --help documents every command and option key.
run --help
expect_rc 0 "--help"
for w in enable disable set unset status port= holdoff_ms= sweep_on_loss= act_in= retry_max_ms= verify_ms= verify_tries= --dry-run --create; do
    expect_out "$w" "--help mentions $w"
done
run -f "$W/stock.conf"
expect_rc 2 "no command"
run -f "$W/stock.conf" frobnicate
expect_rc 2 "unknown command"

# 1. Stock file: enable changes exactly the two plugin lines, keeps a backup
#    equal to the old file, keeps the mode; a second enable changes nothing.
cp "$W/stock.conf" "$W/c1.conf"; chmod 640 "$W/c1.conf"
run -f "$W/c1.conf" status
expect_rc 3 "status of a stock file"
expect_out '^portwatch: disabled' "status of a stock file"
run -f "$W/c1.conf" enable
expect_rc 0 "enable on a stock file"
expect_line "$W/c1.conf" "event_plugin_name portwatch" "enable on a stock file"
expect_line "$W/c1.conf" "event_plugin_options (null)" "enable without options leaves event_plugin_options"
[ "$(changed_lines "$W/stock.conf" "$W/c1.conf")" = 1 ] || fail "enable changed more than one line:"$'\n'"$(diff "$W/stock.conf" "$W/c1.conf")"; ok
bak=$(ls "$W"/c1.conf.bak-*) || fail "enable wrote no backup"
same_file "$W/stock.conf" "$bak" "the backup"
[ "$(stat -c %a "$W/c1.conf")" = 640 ] || fail "enable changed the mode to $(stat -c %a "$W/c1.conf")"; ok
cp -p "$W/c1.conf" "$W/c1.before"
touch -d '2001-01-01' "$W/c1.conf"
run -f "$W/c1.conf" enable
expect_rc 0 "second enable"
expect_out 'nothing to change' "second enable"
[ "$(stat -c %Y "$W/c1.conf")" = "$(date -d 2001-01-01 +%s)" ] || fail "second enable rewrote the file"; ok
[ "$(find "$W" -maxdepth 1 -name 'c1.conf.bak-*' | wc -l)" = 1 ] || fail "second enable wrote another backup"; ok
run -f "$W/c1.conf" enable holdoff_ms=250 sweep_on_loss=yes
expect_rc 0 "enable with options"
expect_line "$W/c1.conf" "event_plugin_options portwatch.holdoff_ms=250 portwatch.sweep_on_loss=yes" "enable with options"
run -f "$W/c1.conf" status
expect_rc 0 "status when enabled"
expect_out '^options: port=auto holdoff_ms=250 sweep_on_loss=yes act_in=master,discovering retry_max_ms=30000 verify_ms=1000 verify_tries=4 metrics_file=off on_device_reset=restart reset_check_ms=10000$' "status when enabled"
run -f "$W/c1.conf" set holdoff_ms=300
expect_rc 0 "set replaces a token"
expect_line "$W/c1.conf" "event_plugin_options portwatch.holdoff_ms=300 portwatch.sweep_on_loss=yes" "set replaces in place"
run -f "$W/c1.conf" unset portwatch.sweep_on_loss
expect_rc 0 "unset"
expect_line "$W/c1.conf" "event_plugin_options portwatch.holdoff_ms=300" "unset"
run -f "$W/c1.conf" disable
expect_rc 0 "disable"
same_file "$W/stock.conf" "$W/c1.conf" "enable, set, unset, disable round trip"
run -f "$W/c1.conf" disable
expect_rc 0 "second disable"
expect_out 'nothing to change' "second disable"

# 2. Another plugin, comments, other plugins' tokens, a trailing # comment.
awk '
    /^event_plugin_name / { print "event_plugin_name osmeventplugin   # the vendor'"'"'s plugin"; next }
    /^event_plugin_options / { print "event_plugin_options osmep.verbose=1 portwatch.act_in=master other=x,y   # keep this comment"; next }
    { print }' "$W/stock.conf" >"$W/c2.conf"
cp "$W/c2.conf" "$W/c2.orig"
run -f "$W/c2.conf" enable port=mlx5_0:1
expect_rc 0 "enable next to another plugin"
# One opensm per port (Debian's service) shares this file: an explicit port
# is worth a warning, port=auto is not.
expect_out 'warning: port=mlx5_0:1 makes every opensm that reads this file watch that one port' "warning on an explicit port"
expect_line "$W/c2.conf" "event_plugin_name osmeventplugin portwatch   # the vendor's plugin" "enable keeps the other plugin and the comment"
expect_line "$W/c2.conf" "event_plugin_options osmep.verbose=1 portwatch.act_in=master other=x,y portwatch.port=mlx5_0:1   # keep this comment" "enable keeps foreign tokens and the comment"
[ "$(changed_lines "$W/c2.orig" "$W/c2.conf")" = 2 ] || fail "enable changed more than the two plugin lines"; ok
run -f "$W/c2.conf" set act_in=standby,master
expect_rc 0 "set next to foreign tokens"
[[ $OUT != *"warning: port="* ]] || fail "warned about port while setting act_in: $OUT"
expect_line "$W/c2.conf" "event_plugin_options osmep.verbose=1 portwatch.act_in=standby,master other=x,y portwatch.port=mlx5_0:1   # keep this comment" "set replaces in place"
run -f "$W/c2.conf" status
expect_out 'act_in=master,standby ' "status shows act_in as the plugin does"
run -f "$W/c2.conf" disable
expect_rc 0 "disable next to another plugin"
expect_line "$W/c2.conf" "event_plugin_name osmeventplugin   # the vendor's plugin" "disable keeps the other plugin"
expect_line "$W/c2.conf" "event_plugin_options osmep.verbose=1 other=x,y   # keep this comment" "disable keeps foreign tokens"

# 3. Comma after the first name (OpenSM accepts it there): rewritten with spaces.
sed 's/^event_plugin_name .*/event_plugin_name first,second/' "$W/stock.conf" >"$W/c3.conf"
run -f "$W/c3.conf" enable
expect_rc 0 "enable after 'first,second'"
expect_line "$W/c3.conf" "event_plugin_name first second portwatch" "names written with spaces"
sed 's/^event_plugin_name .*/event_plugin_name a b,c/' "$W/stock.conf" >"$W/c3b.conf"
run -f "$W/c3b.conf" enable
expect_rc 0 "enable after 'a b,c'"
expect_out "cannot load plugin 'b,c'" "warning about a name OpenSM cannot load"
expect_line "$W/c3b.conf" "event_plugin_name a b,c portwatch" "a broken name is left as it is"

# 4. Quoted values keep their quotes; indented keys keep their indent.
sed -e 's/^event_plugin_name .*/  event_plugin_name "osmeventplugin"/' \
    -e "s/^event_plugin_options .*/event_plugin_options\t'a=1 b=2'/" "$W/stock.conf" >"$W/c4.conf"
run -f "$W/c4.conf" enable retry_max_ms=1000
expect_rc 0 "enable on quoted values"
expect_line "$W/c4.conf" '  event_plugin_name "osmeventplugin portwatch"' "quoted names"
expect_line "$W/c4.conf" "event_plugin_options"$'\t'"'a=1 b=2 portwatch.retry_max_ms=1000'" "quoted options"

# 5. A minimal hand-written file without plugin lines: they are appended.
printf '# my opensm\nsweep_interval 10\n' >"$W/c5.conf"
cp "$W/c5.conf" "$W/c5.orig"
run -f "$W/c5.conf" enable holdoff_ms=0
expect_rc 0 "enable on a file without plugin lines"
expect_line "$W/c5.conf" "event_plugin_name portwatch" "appended name line"
expect_line "$W/c5.conf" "event_plugin_options portwatch.holdoff_ms=0" "appended options line"
head -2 "$W/c5.conf" | cmp -s - "$W/c5.orig" || fail "the existing lines changed"; ok
run -f "$W/c5.conf" disable
expect_rc 0 "disable on an appended file"
expect_line "$W/c5.conf" "event_plugin_name (null)" "disable of the last plugin"

# 6. Option values: the plugin's rules (plugin/options.cpp).
cp "$W/stock.conf" "$W/c6.conf"
for bad in holdoff_ms=60001 holdoff_ms=-1 holdoff_ms=1e3 holdoff_ms=+5 holdoff_ms=banana \
           retry_max_ms=99 retry_max_ms=3600001 holdoff_ms=-0 verify_ms=60001 verify_ms=-0 \
           verify_tries=21 verify_tries=-1 verify_tries=0x1 verify_tries=1.5 sweep_on_loss=Yes sweep_on_loss=1 \
           act_in=master,master 'act_in=master,' act_in=slave act_in= port=0x0 port=0x \
           port=0x12345678901234567 port=mlx5_0:0 port=mlx5_0:255 port=mlx5_0 port=a:b:1 \
           port=mlx5/0:1 port=Auto port= on_device_reset=Restart on_device_reset=exit \
           reset_check_ms=999 reset_check_ms=600001; do
    run -f "$W/c6.conf" set "$bad"
    [ "$RC" = 1 ] || fail "set $bad: exit status $RC, expected 1 (refused); output: $OUT"; ok
    same_file "$W/stock.conf" "$W/c6.conf" "set $bad refused"
done
run -f "$W/c6.conf" set foo=1
expect_rc 2 "unknown key"
run -f "$W/c6.conf" set holdoff_ms=1 holdoff_ms=2
expect_rc 2 "a key given twice"
no_backup "$W/c6.conf" "refused sets"
for good in holdoff_ms=0 holdoff_ms=60000 holdoff_ms=007 retry_max_ms=100 retry_max_ms=3600000 \
            verify_ms=0 verify_ms=60000 verify_tries=20 verify_tries=00 \
            sweep_on_loss=no act_in=not_active,standby port=auto port=mlx5_0:254 port=0X1 \
            port=0x0002c903000e0b72 on_device_reset=log reset_check_ms=1000 reset_check_ms=600000 \
            on_device_reset=restart port=my-dev.0:1; do
    run -f "$W/c6.conf" --no-backup set "$good"
    [ "$RC" = 0 ] || fail "set $good: exit status $RC, expected 0; output: $OUT"; ok
done
run -f "$W/c6.conf" status
expect_out '^options \(when enabled\): port=my-dev.0:1 holdoff_ms=7 sweep_on_loss=no act_in=standby,not_active retry_max_ms=3600000 verify_ms=60000 verify_tries=0 metrics_file=off on_device_reset=restart reset_check_ms=600000$' "values shown as the plugin shows them"
run -f "$W/c6.conf" set port=0X00AB
expect_out 'port=0x00000000000000ab ' "a GUID shown as the plugin shows it"

# 7. Existing portwatch tokens the plugin would refuse: reported, nothing written.
for tok in portwatch.holdof_ms=5 Portwatch.port=auto portwatch_port=auto portwatch.holdoff_ms \
           "portwatch.holdoff_ms=1 portwatch.holdoff_ms=2" portwatch.act_in=; do
    sed "s/^event_plugin_options .*/event_plugin_options other=1 $tok/" "$W/stock.conf" >"$W/c7.conf"
    cp "$W/c7.conf" "$W/c7.orig"
    run -f "$W/c7.conf" enable
    [ "$RC" = 1 ] || fail "enable with '$tok' in the file: exit status $RC, expected 1; output: $OUT"; ok
    expect_out 'would refuse to load' "enable with '$tok' in the file"
    same_file "$W/c7.orig" "$W/c7.conf" "enable with '$tok' in the file"
    run -f "$W/c7.conf" status
    [ "$RC" = 3 ] || [ "$RC" = 1 ] || fail "status with '$tok': exit status $RC"; ok
done
# ... and fixed by set (duplicates collapse into one token).
sed "s/^event_plugin_options .*/event_plugin_options portwatch.holdoff_ms=1 x=1 portwatch.holdoff_ms=2/" "$W/stock.conf" >"$W/c7.conf"
run -f "$W/c7.conf" enable holdoff_ms=3
expect_rc 0 "enable fixing a duplicate"
expect_line "$W/c7.conf" "event_plugin_options portwatch.holdoff_ms=3 x=1" "duplicates collapsed"
# disable removes portwatch tokens whatever their state.
sed "s/^event_plugin_options .*/event_plugin_options portwatch.holdoff_ms=banana x=1/" "$W/stock.conf" >"$W/c7.conf"
run -f "$W/c7.conf" disable
expect_rc 0 "disable with a bad token"
expect_line "$W/c7.conf" "event_plugin_options x=1" "disable removed the bad token"

# 8. Files it cannot parse: refused with the reason, nothing written.
refuse() {   # FILE REGEX WHAT
    cp "$1" "$1.orig"
    run -f "$1" enable
    [ "$RC" = 1 ] || fail "$3: exit status $RC, expected 1; output: $OUT"; ok
    expect_out "$2" "$3"
    same_file "$1.orig" "$1" "$3"
    no_backup "$1" "$3"
}
cat "$W/stock.conf" >"$W/c8a.conf"; echo "event_plugin_name other" >>"$W/c8a.conf"
refuse "$W/c8a.conf" 'event_plugin_name is set on line [0-9]+ and again on line [0-9]+' "two event_plugin_name lines"
cat "$W/stock.conf" >"$W/c8b.conf"; echo "event_plugin_options x=1" >>"$W/c8b.conf"
refuse "$W/c8b.conf" 'event_plugin_options is set on line' "two event_plugin_options lines"
sed 's/$/\r/' "$W/stock.conf" >"$W/c8c.conf"
refuse "$W/c8c.conf" 'DOS' "CR LF line endings"
{ cat "$W/stock.conf"; printf 'x\0y\n'; } >"$W/c8d.conf"
refuse "$W/c8d.conf" 'NUL' "NUL bytes"
{ printf 'sm_priority 1\n'; printf 'node_name_map_name /x%01100d\n' 0; } >"$W/c8e.conf"
refuse "$W/c8e.conf" ':2: line longer than' "a line OpenSM would cut"
printf 'root:x:0:0:root:/root:/bin/bash\n' >"$W/c8f.conf"
refuse "$W/c8f.conf" ":1: not an OpenSM 'key value' line" "not an opensm.conf"
# a line the new value would push over OpenSM's limit
sed "s/^event_plugin_options .*/event_plugin_options x=$(printf '%01000d' 0)/" "$W/stock.conf" >"$W/c8g.conf"
cp "$W/c8g.conf" "$W/c8g.orig"
run -f "$W/c8g.conf" enable holdoff_ms=100
expect_rc 1 "a value that would not fit"
expect_out 'longer than' "a value that would not fit"
same_file "$W/c8g.orig" "$W/c8g.conf" "a value that would not fit"
mkdir "$W/c8h.conf"
run -f "$W/c8h.conf" enable
expect_rc 1 "a directory"
expect_out 'not a regular file' "a directory"

# 9. A missing file: refused with the way to create it; --create makes one.
run -f "$W/missing.conf" enable
expect_rc 1 "missing file"
expect_out 'does not exist; create it with .*opensm -c' "missing file"
[ ! -e "$W/missing.conf" ] || fail "a missing file was created without --create"; ok
( cd "$W/osm" && OSM_CACHE_DIR=$W/osm OSM_TMP_DIR=$W/osm "$TOOL" -f "$W/created.conf" --create enable ) >"$W/create.out" 2>&1 \
    || fail "--create enable failed: $(cat "$W/create.out")"
ok
expect_line "$W/created.conf" "event_plugin_name portwatch" "--create enable"
[ "$(grep -c '' "$W/created.conf")" -gt 400 ] || fail "--create did not write OpenSM's full configuration"; ok

# 10. A read-only file is refused (also for root); --dry-run still shows the change.
cp "$W/stock.conf" "$W/ro.conf"; chmod 444 "$W/ro.conf"
run -f "$W/ro.conf" enable
expect_rc 1 "read-only file"
expect_out 'read-only' "read-only file"
same_file "$W/stock.conf" "$W/ro.conf" "read-only file"
no_backup "$W/ro.conf" "read-only file"
run -f "$W/ro.conf" --dry-run enable
expect_rc 0 "dry run on a read-only file"
expect_out '^\+event_plugin_name portwatch$' "dry run shows the change"
expect_out '^-event_plugin_name \(null\)$' "dry run shows the change"
same_file "$W/stock.conf" "$W/ro.conf" "dry run"
# a read-only directory: no backup or atomic rename possible
if [ "$(id -u)" != 0 ]; then
    mkdir "$W/rodir"; cp "$W/stock.conf" "$W/rodir/x.conf"; chmod 555 "$W/rodir"
    run -f "$W/rodir/x.conf" enable
    expect_rc 1 "file in a read-only directory"
    chmod 755 "$W/rodir"
fi

# 11. A symlink: the file it points to changes, the link stays a link.
cp "$W/stock.conf" "$W/target.conf"; ln -s target.conf "$W/link.conf"
run -f "$W/link.conf" enable
expect_rc 0 "enable through a symlink"
[ -L "$W/link.conf" ] || fail "the symlink was replaced by a file"; ok
expect_line "$W/target.conf" "event_plugin_name portwatch" "enable through a symlink"

# 12. metrics_file: an absolute path; a missing directory is worth a warning
# (the plugin would refuse to load), an existing one is not; a name without
# %g is one file for every opensm sharing this opensm.conf: a warning too.
cp "$W/stock.conf" "$W/m.conf"
mkdir "$W/textfile"
run -f "$W/m.conf" enable "metrics_file=$W/textfile/portwatch-%g.prom"
expect_rc 0 "metrics_file in an existing directory"
grep -q 'warning' <<<"$OUT" && fail "a warning for an existing metrics directory: $OUT"; ok
expect_line "$W/m.conf" "event_plugin_options portwatch.metrics_file=$W/textfile/portwatch-%g.prom" "metrics_file written"
run -f "$W/m.conf" status
expect_out "metrics_file=$W/textfile/portwatch-%g.prom on_device_reset=restart reset_check_ms=10000$" "status shows the metrics file"
run -f "$W/m.conf" set "metrics_file=$W/textfile/portwatch.prom"
expect_rc 0 "metrics_file without %g"
expect_out "warning: metrics_file=$W/textfile/portwatch.prom is one file for every opensm that reads this file" "warning on one file for every instance"
for bad in "$W/textfile/pw-%x.prom" "$W/text%g/pw.prom" "$W/textfile/pw%"; do
    run -f "$W/m.conf" set "metrics_file=$bad"
    expect_rc 1 "metrics_file=$bad"
    expect_out "(%g in the file name: OpenSM's port GUID)" "metrics_file=$bad"
done
run -f "$W/m.conf" set "metrics_file=$W/none/portwatch-%g.prom"
expect_rc 0 "metrics_file in a missing directory"
expect_out "warning: metrics_file=$W/none/portwatch-%g.prom: the directory $W/none/ does not exist" "warning on a missing metrics directory"
run -f "$W/m.conf" set metrics_file=off
expect_rc 0 "metrics_file=off"
grep -q 'warning' <<<"$OUT" && fail "a warning for metrics_file=off: $OUT"; ok
run -f "$W/m.conf" set metrics_file=portwatch.prom
expect_rc 1 "relative metrics_file"
expect_out 'expected off or an absolute path to a file' "relative metrics_file"

echo "PASS: $NAME: $CHECKS checks"
