#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# tests/vm/guest-init.sh - /init of the rxe test VM (runs as PID 1 inside it).
#
# test_rxe_kernel.sh inserts a block of PW_* settings after the first line and
# build-image packs the result as /init. Everything here happens inside the
# guest: a real 6.1 kernel, rdma_rxe on a veth pair, ibsim, stock opensm under
# umad2sim with libportwatch.so, which watches rxe0:1 through the REAL
# libibverbs and rxe provider. It bounces the link, records when it touched
# the kernel, tries `rdma link delete rxe0`, stops opensm with SIGTERM, and
# prints everything it collected to the console between two marker lines as a
# base64 tar.gz. The host does all the judging.
#
# Settings (defaults used when the host sets nothing):
: "${PW_CYCLES:=6}"            # link down/up cycles; odd = admin (veth0), even = carrier (veth1)
: "${PW_HOLDOFF_MS:=100}"      # portwatch.holdoff_ms
: "${PW_LOG_FLAGS:=0x07}"      # opensm log_flags (0x04 logs INITIATING HEAVY SWEEP)
: "${PW_WAIT_S:=15}"           # how long to wait for any one expected log line
: "${PW_DELETE_WAIT_S:=6}"     # how long `rdma link delete rxe0` may block before we move on
: "${PW_GUEST_LIMIT_S:=150}"   # guest watchdog: reboot (= qemu exits) after this
                               # (the host passes it on the kernel command line,
                               # which the kernel hands to init as environment)
set -u
/usr/bin/busybox --install -s      # applets where no real binary is
export PATH=/usr/sbin:/usr/bin
export LC_ALL=C
export TZ=UTC0        # opensm's log timestamps are wall-clock UTC, like EPOCHREALTIME

OUT=/tmp/out          # everything in here goes back to the host
IP=/usr/sbin/ip       # iproute2's ip (busybox's has no veth); always by full path
UMAD2SIM=$(echo /usr/lib/*/umad2sim/libumad2sim.so)
NET=/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca
OSM_LOG=$OUT/opensm.log

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /dev/pts /dev/shm "$OUT"
mount -t devpts devpts /dev/pts
dmesg -n 1                       # keep kernel messages off the console

say() { echo "pwvm: $*"; echo "$EPOCHREALTIME $*" >>"$OUT/guest.log"; }
# rec KIND FIELDS...: one line of the results table (host parses it).
rec() { echo "$*" >>"$OUT/records"; }
say "init started (uptime $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r), watchdog ${PW_GUEST_LIMIT_S}s)"
rec T0 "$EPOCHREALTIME"

# Guest watchdog: whatever hangs, the VM reboots (qemu runs with -no-reboot,
# so it exits). The host has its own hard limit on top.
( sleep "$PW_GUEST_LIMIT_S"; echo "pwvm: guest watchdog: ${PW_GUEST_LIMIT_S}s, rebooting"; reboot -f ) &

finish() {  # finish STATUS-WORD: ship the results and power off
    rec GUEST_DONE "$1"
    ksync end 2>/dev/null
    dmesg >"$OUT/dmesg.txt" 2>&1
    cat /proc/uptime >"$OUT/uptime"
    local b64=/tmp/results.b64 tgz=/tmp/results.tgz
    tar -C "$OUT" -cf - . | gzip -c >"$tgz"
    base64 "$tgz" >"$b64"
    echo "@@PWVM-RESULTS-BEGIN md5=$(md5sum <"$tgz" | cut -d' ' -f1) bytes=$(wc -c <"$tgz")"
    cat "$b64"
    echo "@@PWVM-RESULTS-END"
    sync
    reboot -f
    sleep 30
}
abort() { say "ABORT: $*"; rec ABORT "$*"; finish aborted; }

# nap SECONDS: sleep without forking (read on a FIFO nobody writes).
mkfifo /tmp/.nap
exec 5<>/tmp/.nap
nap() { read -r -t "$1" -u 5 _ || true; }

# count FIXED-STRING: lines of the opensm log containing it.
count() { local n; n=$(grep -cF -- "$1" "$OSM_LOG" 2>/dev/null); echo "${n:-0}"; }
# wait_count FIXED-STRING N [SECONDS]: until the opensm log has N such lines.
wait_count() {
    local deadline=$((SECONDS + ${3:-$PW_WAIT_S})) n
    while :; do
        n=$(count "$1")
        [ "$n" -ge "$2" ] && return 0
        [ "$SECONDS" -ge "$deadline" ] && { say "timeout waiting for '$1' x$2 (have $n)"; return 1; }
        nap 0.05
    done
}

# ------------------------------------------------------------ kernel side
for m in /modules/*.ko; do
    insmod "$m" || abort "insmod $m failed"
done
say "modules loaded: $(cd /modules && echo *.ko)"

# Kernel messages carry the kernel's own timestamps (seconds since boot):
# rxe logs "set down" / "set active" as it raises the port event. To put
# them on the wall clock, write our wall-clock time into the kernel log a few
# times now and at the end (the host takes the best pair of each group).
exec 8>/dev/kmsg
ksync() { local i; for i in 1 2 3 4 5; do echo "pwvm-sync $1 $EPOCHREALTIME" >&8; done; }
ksync start

# The VM's clock is UTC (no /etc/localtime): opensm's log timestamps are UTC.
$IP link set lo up
$IP link add veth0 type veth peer name veth1 || abort "cannot create the veth pair"
$IP link set veth1 up
$IP link set veth0 up
rdma link add rxe0 type rxe netdev veth0 || abort "rdma link add rxe0 failed"
deadline=$((SECONDS + 20))
until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || abort "rxe0 port 1 never became ACTIVE"
    nap 0.1
done
say "rxe0 up: $(cat /sys/class/infiniband/rxe0/ports/1/state), uverbs: $(cd /dev/infiniband && echo *)"
ibv_devinfo -d rxe0 >"$OUT/ibv_devinfo.txt" 2>&1

# Link changes go through one long-running `ip -batch`: no fork/exec between
# taking the timestamp and the kernel acting on the command.
coproc IPB { exec "$IP" -force -batch - 2>>"$OUT/ip-batch.err"; }
# kernel_link DEV up|down: echo the timestamp taken right before the command.
kernel_link() {
    local t=$EPOCHREALTIME
    echo "link set $1 $2" >&"${IPB[1]}"
    KT=$t
}

# Independent witness of the raw verbs events: ibv_asyncwatch on a second
# serial port (a tty, so its stdout is line buffered), with our markers.
W=/dev/ttyS1
[ -c "$W" ] || W=/dev/null
witness() { echo "== $*" >"$W"; }
ibv_asyncwatch -d rxe0 >"$W" 2>&1 &
AW_PID=$!
witness "asyncwatch started"

# ------------------------------------------------------------ userland
syslogd -n -O "$OUT/messages" &
SYSLOG_PID=$!

# ibsim reads its console from a FIFO that we hold open read-write, so it
# never sees EOF; each command is acknowledged by a new "sim> " prompt.
mkfifo /tmp/ibsim.in
exec 7<>/tmp/ibsim.in
mkdir -p /tmp/sim
(cd /tmp/sim && exec ibsim -s "$NET") <&7 >"$OUT/ibsim.out" 2>&1 &
SIM_PID=$!
prompts() { grep -o 'sim> ' "$OUT/ibsim.out" 2>/dev/null | wc -l; }
deadline=$((SECONDS + 20))
until [ "$(prompts)" -ge 1 ]; do
    kill -0 "$SIM_PID" 2>/dev/null || abort "ibsim died: $(tail -n 3 "$OUT/ibsim.out")"
    [ "$SECONDS" -lt "$deadline" ] || abort "ibsim not ready"
    nap 0.05
done
sim() {  # sim COMMAND: send one console command and wait for its prompt
    local before deadline=$((SECONDS + 10))
    before=$(prompts)
    echo "$*" >&7
    until [ "$(prompts)" -gt "$before" ]; do
        [ "$SECONDS" -lt "$deadline" ] || { say "ibsim did not answer '$*'"; return 1; }
        nap 0.01
    done
}

mkdir -p /tmp/osm/cache /tmp/osm/tmp
cat >"$OUT/opensm.conf" <<EOF
log_flags $PW_LOG_FLAGS
force_log_flush TRUE
sweep_interval 0
console off
daemon FALSE
dump_files_dir /tmp/osm
event_plugin_name portwatch
event_plugin_options portwatch.port=rxe0:1 portwatch.holdoff_ms=$PW_HOLDOFF_MS
EOF
# Stock opensm on the ibsim fabric (umad2sim fakes umad only); libportwatch.so
# from LD_LIBRARY_PATH; libibverbs and librxe are the real ones.
(cd /tmp/osm && exec env LD_PRELOAD="$UMAD2SIM" SIM_HOST=Hca1 \
    LD_LIBRARY_PATH=/opt/portwatch/lib OSM_CACHE_DIR=/tmp/osm/cache OSM_TMP_DIR=/tmp/osm/tmp \
    /usr/sbin/opensm -F "$OUT/opensm.conf" -f "$OSM_LOG") </dev/null >"$OUT/opensm.out" 2>&1 &
OSM_PID=$!
rec OSM_START "$EPOCHREALTIME" "$OSM_PID"
osm_alive() { kill -0 "$OSM_PID" 2>/dev/null; }

wait_count "portwatch: watching rxe0:1" 1 60 || abort "portwatch never watched rxe0:1"
wait_count "SUBNET UP" 1 60 || abort "opensm never reached SUBNET UP"
say "opensm up, portwatch watching rxe0:1"
nap 0.5

# ------------------------------------------------------------ link bounces
# Hardware order: the SM's simulated link goes first, then the kernel link;
# coming back, the simulated link first, then the kernel link.
for ((i = 1; i <= PW_CYCLES; i++)); do
    if ((i % 2)); then mode=admin dev=veth0; else mode=carrier dev=veth1; fi
    osm_alive || { say "opensm died before cycle $i"; break; }
    witness "cycle $i $mode down"
    sim 'Unlink "Hca1"[1]'
    kernel_link "$dev" down
    rec DOWN "$i" "$mode" "$dev" "$KT"
    # A missing line makes every later count wrong: stop bouncing, keep the
    # evidence (the host fails the test on it).
    wait_count "ACTIVE -> DOWN" "$i" || { rec CYCLE_TIMEOUT "$i" down; break; }
    nap 0.3
    witness "cycle $i $mode up"
    sim 'ReLink "Hca1"[1]'
    kernel_link "$dev" up
    rec UP "$i" "$mode" "$dev" "$KT"
    wait_count "link back, heavy sweep requested" "$i" || { rec CYCLE_TIMEOUT "$i" up; break; }
    wait_count "telemetry: SUBNET_UP" "$i" || { rec CYCLE_TIMEOUT "$i" subnet-up; break; }
    nap 0.5      # duplicate PORT_ACTIVE, GID changes and the hold-off settle
    say "cycle $i ($mode) done"
done
witness "cycles done"
kill "$AW_PID" 2>/dev/null; wait "$AW_PID" 2>/dev/null

# ------------------------------------------------------------ rdma link delete
# rxe has no disassociate: the kernel removes uverbs0 and then waits, in
# uninterruptible sleep, until every user closed the device. It sends no
# DEVICE_FATAL. We let it block for PW_DELETE_WAIT_S, look around, and move on.
del_dir=$OUT/delete
mkdir -p "$del_dir"
snapshot() {  # snapshot NAME
    {
        echo "# $1 at $EPOCHREALTIME"
        echo "## rdma link show"; rdma link show 2>&1
        echo "## rdma dev show"; rdma dev show 2>&1
        echo "## /sys/class/infiniband"; ls /sys/class/infiniband 2>&1
        echo "## /sys/class/infiniband_verbs"; ls /sys/class/infiniband_verbs 2>&1
        echo "## /dev/infiniband"; ls /dev/infiniband 2>&1
        echo "## rxe0 port 1 state"; cat /sys/class/infiniband/rxe0/ports/1/state 2>&1
        echo "## opensm alive"; osm_alive && echo yes || echo no
    } >"$del_dir/$1.txt" 2>&1
}
# Kernel uevents (what a plugin could listen to on a NETLINK_KOBJECT_UEVENT
# socket) with their wall-clock time of arrival.
# shellcheck disable=SC2016  # expanded by the helper bash, per event
uevent bash -c 'echo "$EPOCHREALTIME ${ACTION:-?} ${SUBSYSTEM:-?} ${DEVNAME:--} ${DEVPATH:-?}" >>'"$del_dir/uevents.txt" &
UEV_PID=$!
nap 0.2
snapshot before
osm_lines_before=$(wc -l <"$OSM_LOG")
rec DELETE_START "$EPOCHREALTIME"
# timeout sends SIGKILL at the limit: a task blocked in the kernel does not
# die of it before the kernel lets go.
( timeout -s KILL "$PW_DELETE_WAIT_S" rdma link delete rxe0 >"$del_dir/rdma.out" 2>&1
  echo "$? $EPOCHREALTIME" >"$del_dir/rc" ) &
deadline=$((SECONDS + PW_DELETE_WAIT_S + 1))
while [ ! -s "$del_dir/rc" ] && [ "$SECONDS" -lt "$deadline" ]; do nap 0.1; done
if [ -s "$del_dir/rc" ]; then
    read -r drc dt <"$del_dir/rc"
    rec DELETE_DONE "$dt" "$drc" during
    say "rdma link delete rxe0 returned $drc while opensm was running"
else
    rdma_pid=$(pidof rdma | cut -d' ' -f1)
    {
        echo "pid ${rdma_pid:-?}"
        [ -n "$rdma_pid" ] && grep -E '^(State|Name):' "/proc/$rdma_pid/status"
        [ -n "$rdma_pid" ] && { echo "wchan $(cat "/proc/$rdma_pid/wchan" 2>/dev/null)"; cat "/proc/$rdma_pid/stack" 2>/dev/null; }
    } >"$del_dir/blocked.txt" 2>&1
    rec DELETE_BLOCKED "$EPOCHREALTIME" "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "$del_dir/blocked.txt")"
    say "rdma link delete rxe0 still blocked after ${PW_DELETE_WAIT_S}s and SIGKILL: $(grep '^State:' "$del_dir/blocked.txt" | tr '\t' ' ')"
fi
snapshot during
sed -n "$((osm_lines_before + 1)),\$p" "$OSM_LOG" >"$del_dir/osm-lines-during.txt"

# Does the half-deleted device still deliver port events to the plugin?
if osm_alive && [ ! -s "$del_dir/rc" ]; then
    n_down=$(count "ACTIVE -> DOWN"); n_back=$(count "link back, heavy sweep requested")
    n_sub=$(count "telemetry: SUBNET_UP")
    sim 'Unlink "Hca1"[1]'
    kernel_link veth0 down
    rec PROBE_DOWN "$KT"
    if wait_count "ACTIVE -> DOWN" $((n_down + 1)) 5; then rec PROBE_DOWN_SEEN yes; else rec PROBE_DOWN_SEEN no; fi
    nap 0.3
    sim 'ReLink "Hca1"[1]'
    kernel_link veth0 up
    rec PROBE_UP "$KT"
    if wait_count "link back, heavy sweep requested" $((n_back + 1)) 5; then
        rec PROBE_UP_SEEN yes
        wait_count "telemetry: SUBNET_UP" $((n_sub + 1)) 5
    else
        rec PROBE_UP_SEEN no
    fi
    nap 0.5
fi
if [ -s "$del_dir/rc" ]; then
    # The delete completed: add the device back and see whether portwatch
    # finds it again.
    n_open=$(count "opened verbs device rxe0")
    rdma link add rxe0 type rxe netdev veth0 >"$del_dir/readd.out" 2>&1
    rec READD "$EPOCHREALTIME" "$?"
    if wait_count "opened verbs device rxe0" $((n_open + 1)) 10; then rec READD_SEEN yes; else rec READD_SEEN no; fi
fi
if osm_alive; then rec OSM_ALIVE_AFTER_DELETE yes; else rec OSM_ALIVE_AFTER_DELETE no; fi

# ------------------------------------------------------------ shutdown
if osm_alive; then
    rec OSM_TERM "$EPOCHREALTIME"
    kill -TERM "$OSM_PID"
    ( sleep 20; kill -KILL "$OSM_PID" 2>/dev/null ) &
    KILLER=$!
    wait "$OSM_PID"
    rc=$?
    kill "$KILLER" 2>/dev/null
    rec OSM_EXIT "$EPOCHREALTIME" "$rc"
    say "opensm exited with status $rc"
else
    wait "$OSM_PID"
    rec OSM_EXIT "$EPOCHREALTIME" "$?" died-early
fi

# A blocked delete should complete now that nobody holds the device.
if ! grep -q '^DELETE_DONE' "$OUT/records"; then
    deadline=$((SECONDS + 10))
    while [ ! -s "$del_dir/rc" ] && [ "$SECONDS" -lt "$deadline" ]; do nap 0.05; done
    if [ -s "$del_dir/rc" ]; then
        read -r drc dt <"$del_dir/rc"
        rec DELETE_DONE "$dt" "$drc" after-opensm-exit
        say "rdma link delete rxe0 returned $drc after opensm exited"
    else
        rec DELETE_DONE - - never
        say "rdma link delete rxe0 still blocked after opensm exited"
    fi
fi
snapshot after
# Once nobody holds it, is the kernel side healthy again?
if grep -q '^DELETE_DONE' "$OUT/records" && ! grep -q '^DELETE_DONE - - never' "$OUT/records"; then
    rdma link add rxe0 type rxe netdev veth0 >"$del_dir/readd-after.out" 2>&1
    rec READD_AFTER_EXIT "$?" "$(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null)"
fi

echo Quit >&7
kill "$SYSLOG_PID" "$UEV_PID" 2>/dev/null
finish ok
