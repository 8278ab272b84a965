#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# portwatch-fieldcheck end to end on the ibsim fabric, as an admin runs it on
# the SM's host: its SMPs are the real smpquery and ibportstate, sent as the
# host's CAs (tests/e2e/ibsim_host: mlx5_0 is Hca1, the SM's port; mlx5_1 is
# Hca3, a second HCA cabled to the same switch, Switch1).
#
# ibsim does not train links: a PortInfo Set of PortPhysicalState only
# changes the switch's own port. The test plays the cable between Switch1
# port 1 and Hca1 port 1 (hw_step): when the switch port reads Disabled it
# takes the link down (Unlink, then the switch port disabled again as
# hardware shows it, and the driver's PORT_ERR for the SM's HCA); when the
# tool enables it again (Polling), the link comes back at INIT (ReLink, and
# the driver's report), and once OpenSM has made it ACTIVE, the driver says
# so too. In the "dead" mode the cable never comes back. Hardware shows the
# disabled port and the lost link together; the tool's diags wait while the
# test moves the cable (a lock ibsim_host takes), so they never see one
# without the other.
#
# Cases:
#   1. refused, nothing touched (exit 2, switch port still Active/LinkUp):
#      not root; opensm without portwatch; no second path (the host has only
#      mlx5_0, its port 2 down); --via the SM's own port; a bad --count; a
#      --json path it cannot write; not confirmed;
#   2. three bounces (--count 3 --down-ms 2000 --compare --json): exit 0, each
#      with the SM port ACTIVE, portwatch's link-back line, HEAVY_SWEEP_START
#      and SUBNET UP, the times bounded; portwatch's metrics file read (3 link
#      returns, 3 sweeps); a valid JSON report;
#   3. the SM port does not come back (dead cable, --guid, --timeout 3): exit
#      1, the report says so, the switch port was enabled again;
#   4. SIGINT to the tool's process group, as Ctrl-C sends it, while the port
#      is disabled (--port): exit 130, the port enabled again, the SM port
#      ACTIVE again afterwards;
#   5. the second path is lost while the port is disabled (ibsim_host gives
#      its SMPs no answer): exit 4, the report (and JSON) says the port is
#      still disabled, the ibportstate command to enable it by hand comes
#      last; run as printed once the path is back, it brings the SM port back;
#   6. opensm stops while the port is disabled: exit 1 ("opensm exited
#      during the bounce"), the port enabled;
#   7. opensm started with --guid (as Debian's opensm@GUID), the tool given
#      neither --port nor --guid: the plan says opensm's --guid chose the
#      SM's port (cases 2, 3, 4: the port portwatch watches, --guid, --port).
# Every run names opensm with --pid: other tests' opensm may run meanwhile.
set -euo pipefail
# OpenSM stamps its log in its local time; the tool, run by an admin whose
# shell has another TZ (fc_exec), must read them in opensm's. (The harness
# subtracts log stamps from its own local clock: it runs in opensm's zone.)
export TZ=UTC-3
. "$(dirname "$0")/lib.sh"
pw_init
pw_require_plugin
pw_need_cmd setpriv util-linux
pw_need_cmd perl perl

TOOL=$PW_SRCDIR/scripts/portwatch-fieldcheck
ACTIVE_BOUND_MS=3000      # enable -> SM port ACTIVE (sweep_interval 0: only portwatch brings it back)

# ------------------------------------------------------------ the host the tool sees
HOST_BIN=$PW_DIR/hostbin
mkdir -p "$HOST_BIN"
for t in smpquery ibportstate ibv_devinfo; do ln -s "$PW_SRCDIR/tests/e2e/ibsim_host" "$HOST_BIN/$t"; done
cat >"$PW_DIR/host-two.conf" <<EOF
add mlx5_0 node_guid=$PW_HCA1_NODE_GUID style=mlx5 state=active
port mlx5_0 1 guid=$PW_HCA1_PORT1_GUID quiet
add mlx5_1 node_guid=0x0000000000300000 style=mlx5 state=active
EOF
cat >"$PW_DIR/host-one.conf" <<EOF
add mlx5_0 node_guid=$PW_HCA1_NODE_GUID style=mlx5 ports=2 state=active
port mlx5_0 1 guid=$PW_HCA1_PORT1_GUID quiet
port mlx5_0 2 state=down quiet
EOF

# fieldcheck OUT HOSTCONF ARGS...: run the tool (foreground); exit status in FC_RC.
fieldcheck() {
    local out=$1 host=$2; shift 2
    FC_RC=0
    ( fc_exec "$host" "$TOOL" "$@" ) >"$out" 2>&1 </dev/null || FC_RC=$?
}
# fc_exec HOSTCONF CMD...: become CMD in the environment of a root shell on
# the SM's host (call it in a subshell).
fc_exec() {
    local host=$1; shift
    pw__close_sim_fd
    exec env PATH="$HOST_BIN:$PATH" PW_HOST_CAS="mlx5_0=Hca1 mlx5_1=Hca3" PW_HOST_VSIM="$host" \
        PW_VSIM_LIB="$PW_VSIM_LIB" PW_UMAD2SIM="$PW_UMAD2SIM" PW_SIM_NAME="$PW_SIM_NAME" \
        PW_DIAG_DIR="$PW_DIR/diag" PW_CABLE_LOCK="$PW_DIR/cable.lock" PW_HOST_DEAD_CAS="$PW_DIR/dead-cas" \
        TZ=UTC+5 "$@"
}
show() { echo "---- $1:"; sed 's/^/    /' "$1"; }
# refused CASE OUT HOSTCONF MESSAGE ARGS...: the tool, run with ARGS, exits
# with status 2 and says MESSAGE (a fixed string).
refused() {
    local name=$1 out=$2 host=$3 msg=$4; shift 4
    fieldcheck "$out" "$host" "$@"
    show "$out"
    [ "$FC_RC" = 2 ] || pw_fail "$name: exit status $FC_RC, expected 2"
    grep -qF -- "$msg" "$out" || pw_fail "$name: no '$msg' message"
}

# Switch1 port 1 as ibsim keeps it: SW_LINKED (1/0), SW_STATE, SW_PHYS.
sw_port() {
    sim_dump_port Switch1 1
    SW_LINKED=0
    [ "$PW_DUMP_PEER" != '"Hca1"[1]' ] || SW_LINKED=1
    SW_STATE=$PW_DUMP_STATE SW_PHYS=$PW_DUMP_PHYS
}
switch_untouched() {   # CASE
    sw_port
    [ "$SW_LINKED$SW_STATE$SW_PHYS" = 1ActiveLinkUp ] \
        || pw_fail "$1: Switch1 port 1 is $SW_STATE/$SW_PHYS (linked $SW_LINKED) afterwards: it was touched"
}

# ------------------------------------------------------------ the cable (see the header)
# driver_port STATE: what the SM's HCA driver reports (the verbs simulator
# lives in opensm's process: nothing to report once opensm is gone).
driver_port() {
    if osm_alive; then vsimctl port "$PW_VSIM_DEV" 1 state="$1"; fi
}
HW_MODE=ok HW_PHASE=up HW_SIGNAL_PID='' HW_ENABLES=0 HW_DOWNS=0
# cable_hold / cable_release: the tool's diags wait meanwhile (ibsim_host).
cable_hold() { exec {CABLE_FD}>>"$PW_DIR/cable.lock"; flock -x "$CABLE_FD"; }
cable_release() { flock -u "$CABLE_FD"; exec {CABLE_FD}>&-; }
SW_LID=''
hw_step() {
    sw_port
    case $HW_PHASE in
        up|active)
            if [ "$SW_LINKED" = 1 ] && [ "$SW_PHYS" = Disabled ]; then
                # One step for the tool's diags (ibsim_host waits on the lock):
                # otherwise it could see the SM's port down and send its enable
                # before the re-disable, which would then win.
                cable_hold
                fabric_link down
                diag_run Hca3 ibportstate "$SW_LID" 1 disable >"$PW_DIR/diag/redisable.out" 2>&1 \
                    || pw_fail "could not show Switch1 port 1 as disabled again: $(cat "$PW_DIR/diag/redisable.out")"
                driver_port down
                # The second path lost with it (case 5), before the tool's next SMP.
                if [ "${HW_CUT_VIA:-0}" = 1 ]; then echo mlx5_1 >"$PW_DIR/dead-cas"; HW_CUT_VIA=0; fi
                cable_release
                HW_PHASE=dark HW_DOWNS=$(( HW_DOWNS + 1 ))
                if [ -n "$HW_SIGNAL_PID" ]; then kill -INT -- "-$HW_SIGNAL_PID"; HW_SIGNAL_PID=''; fi
                if [ "${HW_STOP_OSM:-0}" = 1 ]; then osm_stop; HW_STOP_OSM=0; fi
            elif [ "$HW_PHASE" = up ] && [ "$SW_LINKED" = 1 ] && [ "$SW_STATE" = Active ]; then
                driver_port active
                HW_PHASE=active
            fi ;;
        dark)
            if [ "$SW_PHYS" != Disabled ]; then
                HW_ENABLES=$(( HW_ENABLES + 1 ))
                if [ "$HW_MODE" = ok ]; then
                    fabric_link back
                    driver_port init
                    HW_PHASE=up
                else
                    HW_PHASE=dead
                fi
            fi ;;
    esac
}
# run_with_cable OUT HOSTCONF ARGS...: the tool in the background, the cable
# played until it exits (bounded); FC_RC its exit status.
run_with_cable() {
    local out=$1 host=$2 pid t_end; shift 2
    # As from a terminal: its own process group (Ctrl-C reaches the tool and
    # the diag it is running), SIGINT not ignored as in a background job.
    ( fc_exec "$host" setsid env --default-signal=INT "$TOOL" "$@" ) >"$out" 2>&1 </dev/null &
    pid=$!
    [ "${HW_SIGNAL:-0}" = 0 ] || HW_SIGNAL_PID=$pid
    pw__now; t_end=$(( PW_NOW + 120000000 ))
    while pw_pid_running "$pid"; do
        hw_step
        pw__now
        [ "$PW_NOW" -lt "$t_end" ] || { kill -INT "$pid"; show "$out"; pw_fail "portwatch-fieldcheck still running after 120 s"; }
        pw_sleep 0.005
    done
    FC_RC=0
    wait "$pid" || FC_RC=$?
}

# ------------------------------------------------------------ 1. refused before touching anything
fabric_start mlx5
sim_cmd 'Dump "Switch1"'

pw_log "case 1a: opensm without portwatch"
osm_make_conf "$PW_DIR/stock.conf" sweep_interval=0
osm_start "$PW_DIR/stock.conf"
osm_wait_up 10
refused "without portwatch" "$PW_DIR/fc-stock.out" "$PW_DIR/host-two.conf" \
    "portwatch is not loaded in opensm (pid $PW_OSM_PID)" --yes --pid "$PW_OSM_PID"
switch_untouched "without portwatch"
osm_stop

osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0 event_plugin_name=portwatch \
    "event_plugin_options=portwatch.metrics_file=$PW_DIR/portwatch.prom"
osm_start_plugin "$PW_DIR/opensm.conf"
osm_watching "$PW_VSIM_DEV"
SW_LID=$(diag_run Hca3 smpquery -D portinfo 0,1 0 | sed -n 's/^Lid:\.*//p')
pw_log "Switch1 LID $SW_LID"

pw_log "case 1b: not root"
# A copy the unprivileged user can read (the source tree and the work dir
# may be private to root).
user_dir=$(mktemp -d /tmp/pw-fc-user.XXXXXX)
chmod 755 "$user_dir"
install -m 755 "$TOOL" "$user_dir/portwatch-fieldcheck"
rc=0
( cd / && fc_exec "$PW_DIR/host-two.conf" setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$user_dir/portwatch-fieldcheck" --yes ) >"$PW_DIR/fc-user.out" 2>&1 </dev/null || rc=$?
rm -rf "$user_dir"
show "$PW_DIR/fc-user.out"
[ "$rc" = 2 ] || pw_fail "not root: exit status $rc, expected 2"
grep -q 'must run as root' "$PW_DIR/fc-user.out" || pw_fail "not root: no 'must run as root' message"

pw_log "case 1c: no second path (the host's only other port is down)"
refused "no second path" "$PW_DIR/fc-nopath.out" "$PW_DIR/host-one.conf" \
    'no second path to switch 0x0000000000200000' --yes --pid "$PW_OSM_PID"

pw_log "case 1d: --via the SM's own port"
refused "--via mlx5_0:1" "$PW_DIR/fc-via.out" "$PW_DIR/host-two.conf" \
    "--via mlx5_0:1 is OpenSM's own port" --yes --pid "$PW_OSM_PID" --via mlx5_0:1

pw_log "case 1e: bad usage and a report path it cannot write"
refused "--count 0" "$PW_DIR/fc-usage.out" "$PW_DIR/host-two.conf" \
    "--count '0': a whole number from 1 to 100" --yes --pid "$PW_OSM_PID" --count 0
refused "--json in a missing directory" "$PW_DIR/fc-json.out" "$PW_DIR/host-two.conf" \
    "--json $PW_DIR/no/such/dir/r.json: cannot create a file in" --yes --pid "$PW_OSM_PID" --json "$PW_DIR/no/such/dir/r.json"

pw_log "case 1f: not confirmed (no --yes, no terminal)"
refused "not confirmed" "$PW_DIR/fc-noyes.out" "$PW_DIR/host-two.conf" \
    'not confirmed: standard input is not a terminal' --pid "$PW_OSM_PID"
grep -q 'port 1 of switch 0x0000000000200000' "$PW_DIR/fc-noyes.out" || pw_fail "not confirmed: the plan does not name the switch port"
switch_untouched "refusals"
[ "$(grep -c 'portwatch: .*link lost' "$PW_OSM_LOG")" = 0 ] || pw_fail "a refused run bounced the link"

# ------------------------------------------------------------ 2. three bounces
pw_log "case 2: three bounces"
# --down-ms 2000 here and below: the tool fails a bounce whose SM port is not
# seen down within --down-ms, and the test's cable (console polling, the
# re-disable SMP) took up to 0.7 s for that on a loaded host; hardware, ms.
HW_PHASE=active
run_with_cable "$PW_DIR/fc-ok.out" "$PW_DIR/host-two.conf" --yes --pid "$PW_OSM_PID" --count 3 --down-ms 2000 --compare --json "$PW_DIR/report.json"
show "$PW_DIR/fc-ok.out"
[ "$FC_RC" = 0 ] || pw_fail "three bounces: exit status $FC_RC, expected 0"
[ "$HW_DOWNS" = 3 ] && [ "$HW_ENABLES" = 3 ] || pw_fail "three bounces: the cable saw $HW_DOWNS disables and $HW_ENABLES enables"
grep -q 'result: 3 of 3 bounce(s) ended with the SM port ACTIVE' "$PW_DIR/fc-ok.out" || pw_fail "three bounces: no 3 of 3 result"
grep -q 'sent from:   mlx5_1:1' "$PW_DIR/fc-ok.out" || pw_fail "three bounces: the second path is not mlx5_1:1"
grep -q '^2000 ms down each time' "$PW_DIR/fc-ok.out" || pw_fail "three bounces: the plan does not say --down-ms 2000"
grep -q 'SM state:    MASTER' "$PW_DIR/fc-ok.out" || pw_fail "three bounces: the plan does not say OpenSM is MASTER"
grep -q 'SM port:     mlx5_0:1 (GUID 0x0000000000100001; the port portwatch watches)' "$PW_DIR/fc-ok.out" \
    || pw_fail "three bounces: the plan does not say the SM port is the one portwatch watches"
grep -q 'stock OpenSM (without portwatch).*never: sweep_interval is 0' "$PW_DIR/fc-ok.out" \
    || pw_fail "--compare: no stock OpenSM line for sweep_interval 0"
[ "$(grep -c -E '^  bounce [123]: [0-9.]+ / [0-9.]+ / [0-9.]+ ms$' "$PW_DIR/fc-ok.out")" = 3 ] \
    || pw_fail "three bounces: no port event -> sweep times from the metrics file for every bounce"
grep -q "^metrics ($PW_DIR/portwatch.prom): last recovery [0-9.e+-]* s, link returns 3, sweeps requested 3\$" "$PW_DIR/fc-ok.out" \
    || pw_fail "three bounces: the metrics file's line is not 3 link returns and 3 sweeps"
# Every bounce: each column a time, SM ACTIVE within the bound, the log's
# lines after the enable and within the bound (their stamps read in
# opensm's time zone, not the tool's).
for n in 1 2 3; do
    row=$(awk -v n="$n" '$1 == n && $NF == "ok"' "$PW_DIR/fc-ok.out")
    [ -n "$row" ] || pw_fail "bounce $n: no ok row in the report"
    [[ $row != *' - '* ]] || pw_fail "bounce $n: a time is missing: $row"
    active_ms=$(awk '{ print $2 }' <<<"$row")
    [ "${active_ms%.*}" -lt "$ACTIVE_BOUND_MS" ] || pw_fail "bounce $n: SM port ACTIVE after $active_ms ms (bound $ACTIVE_BOUND_MS)"
    awk -v b="$ACTIVE_BOUND_MS" '{ for (i = 4; i <= 8; i += 2) if ($i < 0 || $i >= b) exit 1 }' <<<"$row" \
        || pw_fail "bounce $n: a log line's time is not within 0..$ACTIVE_BOUND_MS ms of the enable: $row"
done
perl -MJSON::PP -e '
    local $/; my $r = decode_json(<STDIN>);
    die "bounces: " . scalar(@{$r->{bounces}}) . "\n" unless @{$r->{bounces}} == 3;
    for my $b (@{$r->{bounces}}) {
        die "bounce $b->{bounce}: result $b->{result}\n" unless $b->{result} eq "ok";
        for my $k (qw(sm_port_active_ms link_back_line_ms heavy_sweep_start_ms subnet_up_ms)) {
            die "bounce $b->{bounce}: no $k\n" unless defined $b->{$k};
        }
        die "bounce $b->{bounce}: no log lines\n" unless grep { /SUBNET UP/ } @{$b->{log_lines}};
    }
    die "hca: $r->{hca}{device} $r->{hca}{vendor_part_id}\n" unless $r->{hca}{device} eq "mlx5_0" && $r->{hca}{vendor_part_id} ne "";
    die "opensm: $r->{opensm}{version} $r->{opensm}{sm_state}\n" unless $r->{opensm}{version} =~ /^OpenSM \d/ && $r->{opensm}{sm_state} eq "MASTER";
    die "portwatch: $r->{portwatch}{version}\n" unless $r->{portwatch}{version} =~ /^\d/;
    die "kernel\n" unless $r->{host}{kernel} ne "";
    die "sm_port: $r->{sm_port}{chosen_by}\n" unless $r->{sm_port}{guid} eq "0x0000000000100001" && $r->{sm_port}{chosen_by} eq "the port portwatch watches";
    die "ok: $r->{ok}\n" unless $r->{ok} == 3;
    die "metrics\n" unless $r->{portwatch}{metrics_file} =~ m{/portwatch\.prom$} && $r->{bounces}[2]{metrics_last_recovery_seconds} > 0;
    for my $b (@{$r->{bounces}}) {
        my $m = $b->{metrics_reaction_ms};
        die "bounce $b->{bounce}: metrics reaction $m->{heavy_sweep_start} $m->{subnet_up}\n"
            unless defined $m->{subnet_up} && $m->{heavy_sweep_start} <= $m->{subnet_up};
    }
' <"$PW_DIR/report.json" || { show "$PW_DIR/report.json"; pw_fail "the JSON report is not what the run printed"; }
pw_log "JSON report: valid, 3 bounces"
sed -n '/^==== /,$p' "$PW_DIR/fc-ok.out"

# ------------------------------------------------------------ 3. the SM port does not come back
pw_log "case 3: the cable stays dark"
HW_MODE=dead HW_DOWNS=0 HW_ENABLES=0
run_with_cable "$PW_DIR/fc-dead.out" "$PW_DIR/host-two.conf" --yes --pid "$PW_OSM_PID" --guid 0x100001 --count 2 --down-ms 2000 --timeout 3
show "$PW_DIR/fc-dead.out"
[ "$FC_RC" = 1 ] || pw_fail "dead cable: exit status $FC_RC, expected 1"
grep -q 'bounce 1 FAILED: the SM port was not ACTIVE within 3 s of the enable' "$PW_DIR/fc-dead.out" \
    || pw_fail "dead cable: no 'not ACTIVE within 3 s' line"
grep -q 'SM port:     mlx5_0:1 (GUID 0x0000000000100001; --guid)' "$PW_DIR/fc-dead.out" || pw_fail "dead cable: the plan does not say --guid chose the SM port"
[ "$HW_DOWNS" = 1 ] || pw_fail "dead cable: $HW_DOWNS bounces started, expected the first only"
grep -q 'port 1 of switch 0x0000000000200000 is enabled (Polling)' "$PW_DIR/fc-dead.out" \
    || pw_fail "dead cable: the tool does not say the switch port is enabled (Polling: no link)"
sw_port
[ "$SW_PHYS" != Disabled ] || pw_fail "dead cable: the switch port was left disabled"
grep -q 'result: 0 of 2 bounce(s)' "$PW_DIR/fc-dead.out" || pw_fail "dead cable: no '0 of 2' result"
# The cable is repaired: the SM port comes back (portwatch's sweep).
HW_MODE=ok
fabric_link back
driver_port init
HW_PHASE=up
wait_port_state Hca1 1 Active 5 || pw_fail "SM port not Active after the cable was repaired"

# ------------------------------------------------------------ 4. SIGINT mid-bounce
pw_log "case 4: SIGINT while the switch port is disabled"
hw_step   # mirror ACTIVE to the driver
HW_SIGNAL=1 HW_DOWNS=0 HW_ENABLES=0
run_with_cable "$PW_DIR/fc-int.out" "$PW_DIR/host-two.conf" --yes --pid "$PW_OSM_PID" --port mlx5_0:1 --count 3 --down-ms 1000
HW_SIGNAL=0
show "$PW_DIR/fc-int.out"
[ "$FC_RC" = 130 ] || pw_fail "SIGINT: exit status $FC_RC, expected 130"
grep -q 'enabled again' "$PW_DIR/fc-int.out" || pw_fail "SIGINT: the tool does not say it enabled the port again"
grep -q 'interrupted (SIGINT) during bounce 1' "$PW_DIR/fc-int.out" || pw_fail "SIGINT: no 'interrupted' line"
grep -q 'SM port:     mlx5_0:1 (GUID 0x0000000000100001; --port)' "$PW_DIR/fc-int.out" || pw_fail "SIGINT: the plan does not say --port chose the SM port"
[ "$HW_DOWNS" = 1 ] && [ "$HW_ENABLES" = 1 ] || pw_fail "SIGINT: the cable saw $HW_DOWNS disables and $HW_ENABLES enables"
wait_port_state Hca1 1 Active 5 || pw_fail "SIGINT: SM port not Active again after the enable"

# ------------------------------------------------------------ 5. the enable cannot get through
pw_log "case 5: the second path is lost while the switch port is disabled"
hw_step
HW_CUT_VIA=1 HW_DOWNS=0 HW_ENABLES=0
run_with_cable "$PW_DIR/fc-lost.out" "$PW_DIR/host-two.conf" --yes --pid "$PW_OSM_PID" --count 2 --down-ms 2000 --json "$PW_DIR/lost.json"
show "$PW_DIR/fc-lost.out"
[ "$FC_RC" = 4 ] || pw_fail "second path lost: exit status $FC_RC, expected 4"
# Said when it happened and once more as the last lines, after the report;
# not again by the exit trap.
[ "$(grep -cF "COULD NOT ENABLE port 1 of switch 0x0000000000200000 (LID $SW_LID) again." "$PW_DIR/fc-lost.out")" = 2 ] \
    || pw_fail "second path lost: 'COULD NOT ENABLE' not said twice (then and last)"
tail -n 2 "$PW_DIR/fc-lost.out" | head -n 1 | grep -qF 'COULD NOT ENABLE' || pw_fail "second path lost: the command to enable it by hand is not the last thing said"
grep -q 'result: 0 of 2 bounce(s)' "$PW_DIR/fc-lost.out" || pw_fail "second path lost: no report"
grep -q '^port 1 of switch 0x0000000000200000 is still DISABLED' "$PW_DIR/fc-lost.out" || pw_fail "second path lost: the report does not say the port is still disabled"
perl -MJSON::PP -e 'local $/; my $r = decode_json(<STDIN>); exit !($r->{switch_port_left_disabled} && $r->{bounces}[0]{result} eq "the enable failed")' \
    <"$PW_DIR/lost.json" || { show "$PW_DIR/lost.json"; pw_fail "second path lost: the JSON report does not say the port was left disabled"; }
[ "$HW_DOWNS" = 1 ] && [ "$HW_ENABLES" = 0 ] || pw_fail "second path lost: the cable saw $HW_DOWNS disables and $HW_ENABLES enables"
sw_port
[ "$SW_PHYS" = Disabled ] || pw_fail "second path lost: the switch port is $SW_PHYS, not Disabled: no enable got through"
by_hand=$(sed -n 's/^portwatch-fieldcheck: enable it by hand: //p' "$PW_DIR/fc-lost.out" | tail -n 1)
[ -n "$by_hand" ] || pw_fail "second path lost: no command to enable the port by hand"
# The admin mends the second path and runs the command as printed.
rm -f "$PW_DIR/dead-cas"
read -r -a by_hand_cmd <<<"$by_hand"
( fc_exec "$PW_DIR/host-two.conf" "${by_hand_cmd[@]}" ) >"$PW_DIR/by-hand.out" 2>&1 </dev/null \
    || { show "$PW_DIR/by-hand.out"; pw_fail "second path lost: '$by_hand' failed"; }
pw_log "enabled by hand: $by_hand"
hw_step   # the cable: the link comes back
[ "$HW_ENABLES" = 1 ] || pw_fail "second path lost: '$by_hand' did not enable the switch port"
wait_port_state Hca1 1 Active 5 || pw_fail "second path lost: SM port not Active after the port was enabled by hand"

# ------------------------------------------------------------ 6. opensm exits mid-bounce
pw_log "case 6: opensm stops while the switch port is disabled"
hw_step
HW_STOP_OSM=1 HW_DOWNS=0 HW_ENABLES=0
osm_pid=$PW_OSM_PID
run_with_cable "$PW_DIR/fc-exit.out" "$PW_DIR/host-two.conf" --yes --pid "$osm_pid" --count 2 --down-ms 2000
show "$PW_DIR/fc-exit.out"
[ "$FC_RC" = 1 ] || pw_fail "opensm stopped: exit status $FC_RC, expected 1"
grep -q "bounce 1 FAILED: opensm (pid $osm_pid) exited during the bounce" "$PW_DIR/fc-exit.out" \
    || pw_fail "opensm stopped: no 'opensm exited during the bounce' line"
[ "$HW_ENABLES" = 1 ] || pw_fail "opensm stopped: the cable saw $HW_ENABLES enables, expected 1"
sw_port
[ "$SW_PHYS" != Disabled ] || pw_fail "opensm stopped: the switch port was left disabled"

# ------------------------------------------------------------ 7. opensm bound with --guid
pw_log "case 7: opensm started with --guid (as opensm@GUID), no --port or --guid given"
osm_start_plugin "$PW_DIR/opensm.conf" -- --guid "$PW_HCA1_PORT1_GUID"
osm_watching "$PW_VSIM_DEV"
refused "opensm's --guid" "$PW_DIR/fc-osmguid.out" "$PW_DIR/host-two.conf" \
    "SM port:     mlx5_0:1 (GUID 0x0000000000100001; opensm's --guid)" --pid "$PW_OSM_PID"
grep -q 'not confirmed' "$PW_DIR/fc-osmguid.out" || pw_fail "opensm's --guid: refused for another reason than the missing confirmation"
switch_untouched "opensm's --guid"

pw_pass "the SM port from portwatch's watched port, --guid, --port or opensm's --guid; refusals touch nothing; 3 bounces measured and reported (JSON); a dead cable, SIGINT and opensm's exit end with the switch port enabled; a lost second path ends with the command to enable it by hand, which works"
