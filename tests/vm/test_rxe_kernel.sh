#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# tests/vm/test_rxe_kernel.sh - portwatch against a real kernel's rdma stack.
#
# Boots a Debian 6.1 kernel under qemu (TCG) with rdma_rxe on a veth pair and
# runs stock /usr/sbin/opensm on an ibsim fabric inside it, with
# libportwatch.so watching rxe0:1 through the real libibverbs and rxe
# provider. The guest (tests/vm/guest-init.sh) bounces the link by admin
# down/up and by carrier loss, tries `rdma link delete rxe0`, stops opensm
# with SIGTERM and sends everything back over the console; this script judges
# it and prints the latencies. See tests/vm/README.md.
#
#   bash tests/vm/test_rxe_kernel.sh          (after make; or via make check)
#
# Exit status 0 pass, 1 fail. Never 77: a missing tool is a failure that names
# the Debian package to install.
#
# Environment:
#   abs_top_builddir, abs_top_srcdir   set by make check (default: this tree)
#   PORTWATCH_VM_CACHE     kernel/base image cache (see build-image)
#   PW_VM_CYCLES           link bounces (default 8: 4 admin, 4 carrier)
#   PW_VM_TOTAL_S          hard limit for the whole test (default 175)
#   PW_VM_STALL_S          kill qemu when the console is silent this long (60)
#   PW_VM_HOLDOFF_MS       portwatch.holdoff_ms in the guest (100); a value
#                          longer than a bounce cycle (5000) must make the test
#                          fail: that is how the judge itself is checked
#   PW_KEEP=1              keep the private work directory
set -uo pipefail
export LC_ALL=C

T_START=$SECONDS
NAME=test_rxe_kernel
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_src=${abs_top_srcdir:-$(cd "$here/../.." && pwd)}
top_build=${abs_top_builddir:-$top_src}
vm_src=$top_src/tests/vm
plugin=$top_build/plugin/.libs/libportwatch.so

CYCLES=${PW_VM_CYCLES:-8}
TOTAL_S=${PW_VM_TOTAL_S:-175}
STALL_S=${PW_VM_STALL_S:-60}
HOLDOFF_MS=${PW_VM_HOLDOFF_MS:-100}
QEMU=qemu-system-x86_64

WORK=
QEMU_PID=
BUILD_PID=
FAILS=0

say() { echo "$NAME: $*"; }
fail() { say "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { say "ok: $*"; }
die() {  # die MESSAGE: fail now
    say "FAIL: $*"
    show_debug
    exit 1
}

cleanup() {
    local pid
    for pid in "$QEMU_PID" "$BUILD_PID"; do
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || continue
        kill -TERM "$pid" 2>/dev/null
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    if [ -n "$WORK" ] && [ -d "$WORK" ]; then
        if [ "${PW_KEEP:-0}" = 1 ]; then
            say "work directory kept: $WORK"
        else
            rm -rf "$WORK"
        fi
    fi
}
trap cleanup EXIT
trap 'say "interrupted"; exit 1' INT TERM HUP

# show_debug: the tail of whatever we have, into the test log.
show_debug() {
    [ -n "$WORK" ] || return 0
    local f
    for f in "$WORK/build.log" "$WORK/console.txt" "$WORK/witness.txt" \
             "$WORK/res/guest.log" "$WORK/res/records"; do
        [ -s "$f" ] || continue
        echo "----- ${f#"$WORK"/} (tail)"
        tail -n 40 "$f"
    done
    if [ -s "$WORK/res/opensm.log" ]; then
        echo "----- opensm.log (portwatch lines)"
        grep -n 'portwatch:\|INITIATING HEAVY SWEEP' "$WORK/res/opensm.log" | tail -n 60
    fi
    echo "-----"
}

remaining() { echo $((TOTAL_S - (SECONDS - T_START))); }

# Children get SIGTERM if this shell dies without running its trap.
if setpriv --help 2>/dev/null | grep -q -- --pdeathsig; then
    PDEATH=(setpriv --pdeathsig TERM --)
else
    PDEATH=()
fi

# ------------------------------------------------------------ prerequisites
command -v "$QEMU" >/dev/null 2>&1 ||
    die "no $QEMU: install the Debian package qemu-system-x86 (apt-get install qemu-system-x86)"
command -v timeout >/dev/null 2>&1 || die "no timeout: install the Debian package coreutils"
[ -f "$plugin" ] || die "no $plugin: build the project first (make)"
for f in "$vm_src/build-image" "$vm_src/guest-init.sh"; do
    [ -f "$f" ] || die "missing $f"
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/portwatch-vm.XXXXXX") || die "mktemp failed"
chmod 700 "$WORK"

# ------------------------------------------------------------ image
build_limit=$(( $(remaining) - 60 ))   # leave the VM at least a minute

{
    sed -n 1p "$vm_src/guest-init.sh"
    echo "# ---- settings from test_rxe_kernel.sh"
    echo "PW_CYCLES=$CYCLES"
    echo "PW_HOLDOFF_MS=$HOLDOFF_MS"
    echo "PW_LOG_FLAGS=0x07"
    sed 1d "$vm_src/guest-init.sh"
} >"$WORK/init"

say "building the VM image (cache: ${PORTWATCH_VM_CACHE:-\$HOME/.cache/portwatch-vm})"
t0=$SECONDS
"${PDEATH[@]}" timeout -k 5 "$build_limit" bash "$vm_src/build-image" --plugin "$plugin" --init "$WORK/init" \
    --out "$WORK/img" >"$WORK/build.log" 2>&1 &
BUILD_PID=$!
wait "$BUILD_PID"
brc=$?
BUILD_PID=
sed 's/^/  /' "$WORK/build.log"
[ "$brc" -eq 124 ] && die "build-image did not finish within ${build_limit}s"
[ "$brc" -eq 0 ] || die "build-image failed (status $brc)"
build_s=$((SECONDS - t0))
# shellcheck disable=SC1091
. "$WORK/img/image.env"

# ------------------------------------------------------------ boot
qemu_limit=$(( $(remaining) - 10 ))
[ "$qemu_limit" -gt 120 ] && qemu_limit=120
[ "$qemu_limit" -ge 45 ] || die "only ${qemu_limit}s left for the VM (build took ${build_s}s)"
guest_limit=$((qemu_limit - 8))   # the guest reboots itself first, results or not
say "booting $VM_KERNEL_PKG $VM_KERNEL_VERSION under TCG (limit ${qemu_limit}s, guest watchdog ${guest_limit}s)"
t0=$SECONDS
: >"$WORK/console.log"
: >"$WORK/witness.log"
# One vCPU: -smp 2 gains nothing under TCG and we share the machine with make -j2.
"${PDEATH[@]}" timeout -k 5 "$qemu_limit" "$QEMU" \
    -accel tcg,thread=multi -cpu max -m 512 -smp 1 \
    -nographic -no-reboot -nic none -monitor none \
    -serial "file:$WORK/console.log" -serial "file:$WORK/witness.log" \
    -kernel "$WORK/img/vmlinux" -initrd "$WORK/img/initrd.img" \
    -append "console=ttyS0 panic=-1 quiet PW_GUEST_LIMIT_S=$guest_limit" \
    </dev/null >"$WORK/qemu.out" 2>&1 &
QEMU_PID=$!

# Watchdog: the hard limit is timeout's; this one stops a silent guest early.
last_size=0 last_change=$SECONDS
while kill -0 "$QEMU_PID" 2>/dev/null; do
    size=$(stat -c %s "$WORK/console.log" 2>/dev/null || echo 0)
    if [ "$size" != "$last_size" ]; then
        last_size=$size last_change=$SECONDS
    elif [ $((SECONDS - last_change)) -ge "$STALL_S" ]; then
        say "console silent for ${STALL_S}s: stopping qemu"
        kill -TERM "$QEMU_PID" 2>/dev/null
        break
    fi
    sleep 0.5
done
wait "$QEMU_PID"
qrc=$?
QEMU_PID=
vm_s=$((SECONDS - t0))
tr -d '\r' <"$WORK/console.log" >"$WORK/console.txt"
tr -d '\r' <"$WORK/witness.log" >"$WORK/witness.txt"
# The guest's progress lines (not the base64 blob) go into the test log.
# (The first one shares its line with the firmware's last words.)
grep -o 'pwvm: .*' "$WORK/console.txt" | sed 's/^/  /'
[ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ] && fail "qemu hit the ${qemu_limit}s limit and was killed"
[ -s "$WORK/qemu.out" ] && sed 's/^/  qemu: /' "$WORK/qemu.out"

# ------------------------------------------------------------ results
mkdir -p "$WORK/res"
hdr=$(grep -m1 '^@@PWVM-RESULTS-BEGIN ' "$WORK/console.txt")
[ -n "$hdr" ] || die "the guest sent no results (qemu status $qrc)"
grep -q '^@@PWVM-RESULTS-END' "$WORK/console.txt" || die "the guest's results are cut short"
want_md5=$(sed -n 's/.* md5=\([0-9a-f]*\).*/\1/p' <<<"$hdr")
sed -n '/^@@PWVM-RESULTS-BEGIN/,/^@@PWVM-RESULTS-END/p' "$WORK/console.txt" |
    grep -E '^[A-Za-z0-9+/=]+$' | base64 -d >"$WORK/results.tgz" 2>/dev/null
[ "$(md5sum <"$WORK/results.tgz" | cut -d' ' -f1)" = "$want_md5" ] ||
    die "the guest's results are corrupt (md5 mismatch)"
tar -xzf "$WORK/results.tgz" -C "$WORK/res" || die "cannot unpack the guest's results"
R=$WORK/res
grep -q '^ABORT' "$R/records" && die "guest aborted: $(sed -n 's/^ABORT //p' "$R/records")"
grep -q '^GUEST_DONE ok' "$R/records" || fail "the guest did not finish its script"
while read -r _ c what; do
    fail "cycle $c: the guest gave up waiting for the plugin ($what); later cycles skipped"
done < <(grep '^CYCLE_TIMEOUT ' "$R/records")

# ------------------------------------------------------------ judging
# One awk pass over the records, the opensm log and the witness: prints
#   FAIL text | OK text | LAT down|up CYCLE MS | TEL START|DONE|UP CYCLE MS |
#   WIT CYCLE MODE ERRS ACTIVES | STOP key=value...
t0_sec=$(sed -n 's/^T0 \([0-9]*\)\..*/\1/p' "$R/records")
[ -n "$t0_sec" ] || die "no T0 record from the guest"
TZ=UTC0 printf -v t0_ym '%(%Y %m)T' "$t0_sec"
awk -v t0ym="$t0_ym" -v cycles="$CYCLES" '
function days(y, m, d,   era, yoe, doy) {     # days since 1970-01-01 (civil calendar)
    y -= (m <= 2); era = int(y / 400); yoe = y - era * 400
    doy = int((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
    return era * 146097 + yoe * 365 + int(yoe / 4) - int(yoe / 100) + doy - 719468
}
function us(epoch,   p) { split(epoch, p, "."); return p[1] * 1000000 + substr(p[2] "000000", 1, 6) }
function ms(x) { return sprintf("%.3f", x / 1000) }
BEGIN {
    split(t0ym, a, " "); Y = a[1] + 0; M0 = a[2] + 0
    split("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec", mn, " ")
    for (i = 1; i <= 12; i++) MON[mn[i]] = i
}
FILENAME ~ /records$/ {
    if ($1 == "DOWN" || $1 == "UP") {
        nb++; bk[nb] = $1; bc[nb] = $2; bm[nb] = $3; bt[nb] = us($5)
    } else if ($1 == "DELETE_START" || $1 == "OSM_TERM") {
        nb++; bk[nb] = $1; bt[nb] = us($2)
    } else if ($1 == "PROBE_DOWN" || $1 == "PROBE_UP") {
        nb++; bk[nb] = ($1 == "PROBE_DOWN" ? "DOWN" : "UP"); bc[nb] = "probe"; bm[nb] = "admin"; bt[nb] = us($2)
    } else if ($1 == "OSM_EXIT") { osm_rc = $3; osm_exit_how = $4 }
    next
}
FILENAME ~ /opensm.log$/ {
    n++; txt[n] = $0; ts[n] = -1
    if ($1 in MON && $3 ~ /^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$/ && $4 ~ /^[0-9]+$/) {
        m = MON[$1]; y = Y + (m < M0 ? 1 : 0)
        split($3, hms, ":")
        ts[n] = ((days(y, m, $2 + 0) * 24 + hms[1]) * 60 + hms[2]) * 60 + hms[3]
        ts[n] = ts[n] * 1000000 + $4
    }
    next
}
FILENAME ~ /dmesg.txt$/ {
    if (!match($0, /^\[ *[0-9]+\.[0-9]+\] /)) next
    kt = substr($0, 2, RLENGTH - 3); gsub(/ /, "", kt); kt = us(kt)
    msg = substr($0, RLENGTH + 1)
    if (msg ~ /^pwvm-sync /) {
        split(msg, f, " "); g = f[2]; o = us(f[3]) - kt   # wall = kernel + offset
        if (!(g in off) || o > off[g]) off[g] = o
        if (!(g in kat)) kat[g] = kt
    } else if (msg ~ /^infiniband rxe0: set (down|active)$/) {
        nk++; kk[nk] = kt; ktype[nk] = (msg ~ /down$/ ? "DOWN" : "UP")
    }
    next
}
FILENAME ~ /witness.txt$/ {
    if ($1 == "==" && $2 == "cycle") { wc = $3; wmode[wc] = $4; wdir = $5; next }
    if ($1 == "==") { wc = ""; next }
    if (wc != "" && /PORT_ERR/ && wdir == "down") werr[wc]++
    if (wc != "" && /PORT_ACTIVE/ && wdir == "up") wact[wc]++
    next
}
END {
    bt[nb + 1] = 1e18
    for (i = 1; i <= n; i++) {
        if (txt[i] ~ /portwatch: watching rxe0:1 \(named by portwatch.port\)/) watching = 1
        if (txt[i] ~ /portwatch: rxe0:1 is ACTIVE/) initial = 1
        if (txt[i] ~ /portwatch: stopped: /) { stopped = 1; sub(/.*portwatch: stopped: /, "", txt[i]); stop = txt[i] }
        if (txt[i] ~ /portwatch: (ERROR|verbs device .* failed|cannot open)/) print "NOTE device/error line: " txt[i]
    }
    if (watching) print "OK plugin loaded and watching rxe0:1 (named by portwatch.port)"
    else print "FAIL no \"watching rxe0:1 (named by portwatch.port)\" line"
    if (!initial) print "FAIL no initial \"rxe0:1 is ACTIVE\" line"
    # Every link transition must fall into the window of the kernel link change
    # that caused it: [its timestamp, the next recorded action).
    for (i = 1; i <= n; i++) {
        if (txt[i] !~ /portwatch: rxe0:1 [A-Z]+ -> [A-Z]+ \(/) continue
        if (txt[i] !~ /link lost|link back/) continue
        w = 0
        for (k = 1; k <= nb; k++) if (ts[i] >= bt[k] && ts[i] < bt[k + 1]) w = k
        if (w == 0 || (bk[w] != "DOWN" && bk[w] != "UP")) { print "FAIL transition outside any link change window: " txt[i]; continue }
        cnt[w]++; line[w] = i
    }
    downs = ups = 0
    for (k = 1; k <= nb; k++) {
        if (bk[k] != "DOWN" && bk[k] != "UP") continue
        what = sprintf("cycle %s (%s) %s", bc[k], bm[k], bk[k] == "DOWN" ? "link down" : "link up")
        if (cnt[k] != 1) { print "FAIL " what ": " (cnt[k] + 0) " plugin transition lines (want 1)"; continue }
        i = line[k]; t = txt[i]
        if (bk[k] == "DOWN") {
            downs++
            if (t !~ /rxe0:1 ACTIVE -> DOWN \(port error\): link lost, next sweep forced heavy \[action=mark\]/)
                print "FAIL " what ": unexpected line: " t
        } else {
            ups++
            if (t !~ /rxe0:1 DOWN -> (INIT|ARMED|ACTIVE) \(port active\): link back, heavy sweep requested \[action=sweep\]/)
                print "FAIL " what ": unexpected line: " t
        }
        lat = ts[i] - bt[k]
        if (lat < 0) print "FAIL " what ": logged before the kernel change?"
        # The kernel'"'"'s own time of the change: rxe'"'"'s first "set down/active" in the window.
        kms = "-"; cms = "-"
        if (("start" in off)) {
            for (j = 1; j <= nk; j++) {
                if (ktype[j] != bk[k]) continue
                o = off["start"]
                if (("end" in off) && kat["end"] > kat["start"])
                    o += (off["end"] - off["start"]) * (kk[j] - kat["start"]) / (kat["end"] - kat["start"])
                kw = kk[j] + o
                if (kw >= bt[k] - 2000 && kw < bt[k + 1]) { kms = ms(ts[i] - kw); cms = ms(kw - bt[k]); break }
            }
        }
        print "LAT " (bk[k] == "DOWN" ? "down" : "up") " " bc[k] " " bm[k] " " ms(lat) " " kms " " cms
        # Everything the window holds, by line number: from the transition line
        # to the first timestamped line at or after the next action.
        last = n
        for (j = i + 1; j <= n; j++) if (ts[j] >= bt[k + 1]) { last = j - 1; break }
        sweeps = heavy = 0; tstart = tdone = tup = ""
        for (j = i; j <= last; j++) {
            if (txt[j] ~ /\[action=(sweep|defer)\]/) sweeps++
            if (txt[j] ~ /INITIATING HEAVY SWEEP/) heavy++
            if (txt[j] ~ /telemetry: HEAVY_SWEEP_START/ && tstart == "") { tstart = txt[j]; sub(/.*HEAVY_SWEEP_START /, "", tstart); sub(/ .*/, "", tstart) }
            if (txt[j] ~ /telemetry: HEAVY_SWEEP_DONE/ && tdone == "") { tdone = txt[j]; sub(/.*HEAVY_SWEEP_DONE /, "", tdone); sub(/ .*/, "", tdone) }
            if (txt[j] ~ /telemetry: SUBNET_UP/ && tup == "") { tup = txt[j]; sub(/.*SUBNET_UP /, "", tup); sub(/ .*/, "", tup) }
        }
        if (bk[k] == "DOWN") {
            if (sweeps) print "FAIL " what ": a sweep was requested on link loss"
            continue
        }
        if (sweeps != 1) print "FAIL " what ": " sweeps " sweep requests (want exactly 1)"
        if (!heavy) print "FAIL " what ": no INITIATING HEAVY SWEEP after the sweep request"
        if (tstart == "") print "FAIL " what ": no telemetry HEAVY_SWEEP_START"
        else print "TEL START " bc[k] " " tstart
        if (tdone != "") print "TEL DONE " bc[k] " " tdone
        if (tup != "") print "TEL UP " bc[k] " " tup
        if (bc[k] != "probe" && (wact[bc[k]] + 0) >= 2)
            print "DUP " bc[k] " " wact[bc[k]] " " sweeps
    }
    print "COUNT " downs " " ups
    for (c = 1; c <= cycles; c++) print "WIT " c " " wmode[c] " " (werr[c] + 0) " " (wact[c] + 0)
    if (!stopped) print "FAIL no \"portwatch: stopped:\" line at exit"
    else print "STOP " stop
    print "OSM_EXIT " osm_rc " " osm_exit_how
    if (("start" in off) && ("end" in off) && kat["end"] > kat["start"])
        printf "CLOCK drift %.1f ppm between kernel log time and wall time\n", (off["end"] - off["start"]) / (kat["end"] - kat["start"]) * 1e6
}' "$R/records" "$R/opensm.log" "$WORK/witness.txt" "$R/dmesg.txt" >"$WORK/judge.txt"

while read -r kind rest; do
    case $kind in
        FAIL) fail "$rest" ;;
        OK) ok "$rest" ;;
        NOTE) say "note: $rest" ;;
    esac
done <"$WORK/judge.txt"

read -r _ n_down n_up < <(grep '^COUNT ' "$WORK/judge.txt")
ran=$(grep -c '^DOWN ' "$R/records")
[ "$ran" -eq "$CYCLES" ] || fail "the guest ran $ran of $CYCLES bounce cycles"
probe_up=$(grep -c '^PROBE_UP_SEEN yes' "$R/records")
[ "${n_down:-0}" -ge "$CYCLES" ] && [ "${n_up:-0}" -ge "$CYCLES" ] &&
    ok "$CYCLES kernel link-downs and $CYCLES link-ups, each with exactly one matching plugin transition"

# Duplicate PORT_ACTIVE (seen by ibv_asyncwatch) must not have caused a second sweep.
dups=$(grep -c '^DUP ' "$WORK/judge.txt")
if [ "$dups" -gt 0 ]; then
    bad=$(awk '$1 == "DUP" && $4 != 1' "$WORK/judge.txt" | wc -l)
    [ "$bad" -eq 0 ] && ok "$dups link-ups brought rxe's duplicate PORT_ACTIVE: one sweep each"
else
    say "note: ibv_asyncwatch saw no duplicate PORT_ACTIVE in any cycle"
fi

stop=$(sed -n 's/^STOP //p' "$WORK/judge.txt")
if [ -n "$stop" ]; then
    sweeps=$(sed -n 's/.*sweeps=\([0-9]*\).*/\1/p' <<<"$stop")
    events=$(sed -n 's/.*events=\([0-9]*\).*/\1/p' <<<"$stop")
    transitions=$(sed -n 's/.*transitions=\([0-9]*\).*/\1/p' <<<"$stop")
    want_sweeps=$((CYCLES + probe_up))
    if [ "$sweeps" = "$want_sweeps" ]; then
        ok "stopped: $stop"
    else
        fail "stopped: sweeps=$sweeps, want $want_sweeps ($CYCLES cycles + $probe_up probe): $stop"
    fi
    [ "${events:-0}" -gt "${transitions:-0}" ] ||
        say "note: every event was a transition (no duplicate or GID events read)"
fi
read -r _ osm_rc osm_how < <(grep '^OSM_EXIT ' "$WORK/judge.txt")
if [ "${osm_rc:-}" = 0 ] && [ -z "${osm_how:-}" ]; then
    ok "opensm exited with status 0 on SIGTERM"
else
    fail "opensm exit: status ${osm_rc:-?} ${osm_how:-}"
fi

# ------------------------------------------------------------ rdma link delete
del_summary() {
    local r=$R/records
    if grep -q '^DELETE_DONE .* during$' "$r"; then
        echo "completed while opensm held rxe0 (status $(awk '$1=="DELETE_DONE"{print $3}' "$r"))"
        if grep -q '^READD_SEEN yes' "$r"; then echo "; re-added rxe0 was picked up by portwatch"
        elif grep -q '^READD_SEEN no' "$r"; then echo "; re-added rxe0 was NOT picked up by portwatch"; fi
    elif grep -q '^DELETE_BLOCKED' "$r"; then
        local st start done_t
        st=$(awk '$1=="DELETE_BLOCKED"{print $3}' "$r")
        start=$(awk '$1=="DELETE_START"{print $2}' "$r")
        echo "blocked (task state $st, not killable) while portwatch held rxe0;"
        echo " uverbs0 vanished from /dev and sysfs at once, no event reached the plugin;"
        local uev
        uev=$(awk -v s="$start" '$2=="remove" && $3=="infiniband_verbs" && $1 >= s {printf "%.0f", ($1-s)*1000; exit}' \
              "$R/delete/uevents.txt" 2>/dev/null)
        [ -n "$uev" ] && echo " a uevent 'remove infiniband_verbs' came ${uev} ms after the delete was issued;"
        if grep -q '^PROBE_UP_SEEN yes' "$r"; then
            echo " the half-deleted device still delivered a link bounce (plugin swept);"
        fi
        done_t=$(awk '$1=="DELETE_DONE" && $4=="after-opensm-exit"{print $2}' "$r")
        if [ -n "$done_t" ]; then
            local term
            term=$(awk '$1=="OSM_TERM"{print $2}' "$r")
            echo " it completed $(awk -v a="$term" -v b="$done_t" 'BEGIN{printf "%.0f", (b-a)*1000}') ms after opensm got SIGTERM"
            echo " ($(awk -v a="$start" -v b="$done_t" 'BEGIN{printf "%.1f", b-a}') s after it was issued"
            local drc
            drc=$(awk '$1=="DELETE_DONE" && $4=="after-opensm-exit"{print $3}' "$r")
            if [ "$drc" = 137 ]; then echo ", exit status 137: the SIGKILL from timeout took effect only then)"
            else echo ", exit status $drc)"; fi
            if grep -q '^READD_AFTER_EXIT 0 ' "$r"; then echo "; rxe0 could be added again afterwards"
            elif grep -q '^READD_AFTER_EXIT' "$r"; then echo "; adding rxe0 again afterwards FAILED"; fi
        else
            echo " it never completed, not even after opensm exited"
        fi
    else
        echo "not run"
    fi
}
say "rdma link delete rxe0: $(del_summary | tr -d '\n')"
if grep -q '^OSM_ALIVE_AFTER_DELETE yes' "$R/records"; then
    ok "opensm kept running through the rdma link delete attempt"
else
    fail "opensm was not running after the rdma link delete attempt"
fi

# ------------------------------------------------------------ numbers
stats() {  # stats LABEL < numbers
    local v
    mapfile -t v < <(sort -g)
    local k=${#v[@]}
    if [ "$k" -eq 0 ]; then printf '  %-48s no samples\n' "$1"; return; fi
    local med
    if ((k % 2)); then med=${v[k / 2]}; else med=$(awk -v a="${v[k / 2 - 1]}" -v b="${v[k / 2]}" 'BEGIN{printf "%.3f", (a+b)/2}'); fi
    printf '  %-48s min %8.3f  median %8.3f  max %8.3f ms  (n=%d)\n' "$1" "${v[0]}" "$med" "${v[k - 1]}" "$k"
}
echo
say "per link change, ms: (a) ip command issued -> plugin line, (b) rxe's kernel log line -> plugin line, (c) command -> rxe:"
awk '$1=="LAT" {printf "  %-4s cycle %-5s %-8s (a) %8s  (b) %8s  (c) %8s\n", $2, $3, $4, $5, $6, $7}' "$WORK/judge.txt"
echo
say "latencies (VM under TCG, 1 vCPU):"
lat() { awk -v c="$1" -v f="$2" -v m="$3" '$1=="LAT" && $3!="probe" && $c ~ m && $f != "-" {print $f}' "$WORK/judge.txt"; }
lat 2 5 . | stats "(a) ip link set issued -> plugin line (all)"
lat 2 5 down | stats "      link down -> ACTIVE->DOWN line"
lat 2 5 up | stats "      link up -> DOWN->ACTIVE line"
lat 4 5 admin | stats "      admin down/up"
lat 4 5 carrier | stats "      carrier loss/return"
lat 2 6 . | stats "(b) rxe set down/active -> plugin line"
lat 2 7 . | stats "(c) ip link set issued -> rxe set down/active"
sed -n 's/^CLOCK /  /p' "$WORK/judge.txt"
awk '$1=="TEL" && $2=="START" && $3!="probe" {print $4}' "$WORK/judge.txt" | stats "port event -> HEAVY_SWEEP_START (telemetry)"
awk '$1=="TEL" && $2=="DONE" && $3!="probe" {print $4}' "$WORK/judge.txt" | stats "port event -> HEAVY_SWEEP_DONE (telemetry)"
awk '$1=="TEL" && $2=="UP" && $3!="probe" {print $4}' "$WORK/judge.txt" | stats "port event -> SUBNET_UP (telemetry)"
say "raw verbs events per cycle (ibv_asyncwatch): $(awk '$1=="WIT" {printf "%s%s:%s %dxERR/%dxACTIVE", sep, $2, $3, $4, $5; sep=", "}' "$WORK/judge.txt")"
cache_state="warm cache"
[ "${VM_KERNEL_CACHED:-}" = no ] && cache_state="cold cache: kernel downloaded"
[ "${VM_KERNEL_CACHED:-}" = yes ] && [ "${VM_BASE_CACHED:-}" = no ] && cache_state="kernel cached, base rebuilt"
say "time: image ${build_s}s ($cache_state), VM ${vm_s}s, total $((SECONDS - T_START))s"

if [ "$FAILS" -ne 0 ]; then
    show_debug
    say "FAILED ($FAILS problem(s))"
    exit 1
fi
say "PASS"
exit 0
