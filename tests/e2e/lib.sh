# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# shellcheck shell=bash
# shellcheck disable=SC2034  # PW_* variables are the API for the test scripts
# tests/e2e/lib.sh - harness for the end-to-end tests (sourced, never run).
#
# Each test gets: a private work directory, a fresh ibsim on its own abstract
# socket name, stock opensm running under umad2sim against it (optionally with
# libportwatch.so and the verbs simulator preloaded), log polling and timing
# helpers, infiniband-diags queries as additional ibsim clients, and a cleanup
# that stops everything it started (by pid) whatever happens.
#
# Usage in a test script:
#     set -euo pipefail
#     . "$(dirname "$0")/lib.sh"
#     pw_init
#     sim_start "$PW_NET_2SW"
#     osm_make_conf "$PW_DIR/opensm.conf" sweep_interval=0
#     osm_start "$PW_DIR/opensm.conf"
#     osm_wait_up
#     ...
#     pw_pass "summary"
#
# Exit status: 0 pass, 1 fail. Never 77 (skip): a missing prerequisite is a
# failure that names the Debian package to install.
#
# Environment knobs:
#     PW_KEEP=1          keep the work directory (its path is printed)
#     PW_VERBOSE=1       echo every ibsim console command / vsimctl call
#     PW_OSM_MAX_S       hard wall-clock limit of one opensm run (default 300)
#     PW_SIM_MAX_S       hard wall-clock limit of one ibsim run (default 600)
#     OPENSM, IBSIM, UMAD2SIM   override the binaries / preload library (make
#                        check sets OPENSM to configure's, see --with-opensm)

# ------------------------------------------------------------------ constants
PW_OPENSM=${OPENSM:-/usr/sbin/opensm}
PW_IBSIM=${IBSIM:-/usr/bin/ibsim}
if [ -z "${UMAD2SIM:-}" ]; then
    UMAD2SIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
    for _pw_f in /usr/lib/*/umad2sim/libumad2sim.so /usr/lib/umad2sim/libumad2sim.so; do
        if [ -f "$_pw_f" ]; then UMAD2SIM=$_pw_f; break; fi
    done
    unset _pw_f
fi
PW_UMAD2SIM=$UMAD2SIM
PW_NET_DIR=${PW_NET_DIR:-/usr/share/doc/ibsim-utils/net-examples}
PW_NET_2SW=$PW_NET_DIR/net.2sw2path4hca

# What the check scripts share with the tests: pw_osm_version (the OpenSM
# version a binary was built for) and pw_snapshot_source.
# shellcheck source=../../scripts/lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/lib.sh"

# GUIDs ibsim 0.10 assigns in net.2sw2path4hca (see README.md).
PW_HCA1_NODE_GUID=0x0000000000100000
PW_HCA1_PORT1_GUID=0x0000000000100001

# Regexes for opensm 3.3.23 log lines.
PW_RE_HEAVY='INITIATING HEAVY SWEEP'     # needs log_flags bit 0x04
PW_RE_SUBNET_UP='-> SUBNET UP'           # the timestamped line, once per sweep
PW_RE_TS='^[A-Z][a-z][a-z] [0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] [0-9][0-9][0-9][0-9][0-9][0-9] '

PW_OSM_MAX_S=${PW_OSM_MAX_S:-300}
PW_SIM_MAX_S=${PW_SIM_MAX_S:-600}

# Long-lived children (ibsim, opensm) are started as
#   setpriv --pdeathsig TERM -- timeout ... PROGRAM
# directly by the test shell: if the test shell is killed outright (no trap
# runs), the kernel sends SIGTERM to timeout, which passes it on; and timeout
# bounds their life anyway.
if setpriv --help 2>/dev/null | grep -q -- --pdeathsig; then
    PW_PDEATH=(setpriv --pdeathsig TERM --)
else
    PW_PDEATH=()
fi

# ------------------------------------------------------------------ state
PW_DIR=
PW_TEST_NAME=${PW_TEST_NAME:-}
PW_PASSED=
PW_FAIL_MSG=
PW_IN_FAIL=
PW_ERR_LINE=
PW_ERR_CMD=
PW_T0_US=

PW_SIM_NAME=
PW_SIM_PID=
PW_SIM_FD=
PW_SIM_OUT=
PW_SIM_ERR=

PW_OSM_RUN=0
PW_OSM_PID=
PW_OSM_WRAP_PID=
PW_OSM_DIR=
PW_OSM_LOG=
PW_OSM_OUT=
PW_OSM_RC=
PW_OSM_STOP_MS=

PW_MATCH_LINE=
PW_MATCH_TEXT=

# ------------------------------------------------------------------ messages
# Harness clock: microseconds in the same scheme as pw_log_ts_us (local
# time), so harness instants and opensm log timestamps can be subtracted.
# pw__now sets PW_NOW without forking; pw_now_us prints it.
pw__now() {
    local now=$EPOCHREALTIME s us t mo d h m sec
    s=${now%[.,]*}; us=${now#*[.,]}
    printf -v t '%(%m %d %H %M %S)T' "$s"
    read -r mo d h m sec <<<"$t"
    PW_NOW=$(( ((((10#$mo * 31 + 10#$d) * 24 + 10#$h) * 60 + 10#$m) * 60 + 10#$sec) * 1000000 + 10#$us ))
}
pw_now_us() {
    pw__now
    echo "$PW_NOW"
}

# pw_sleep SECONDS: sleep without forking (read timeout on a private FIFO
# nobody writes to); falls back to sleep(1) before pw_init.
pw_sleep() {
    if [ -n "${PW_SLEEP_FD:-}" ]; then
        read -r -t "$1" -u "$PW_SLEEP_FD" _ || true
    else
        sleep "$1"
    fi
}

# Microseconds -> milliseconds with one decimal ("12.3").
pw_fmt_ms() {
    local us=$1 sign=
    if [ "$us" -lt 0 ]; then sign=-; us=$(( -us )); fi
    printf '%s%d.%d' "$sign" $(( us / 1000 )) $(( (us % 1000) / 100 ))
}

pw_log() {
    pw__now
    local d=$(( PW_NOW - PW_T0_US ))
    printf '[%4d.%03ds] %s\n' $(( d / 1000000 )) $(( (d / 1000) % 1000 )) "$*"
}

# pw_s_to_us SECONDS: "1.5" -> 1500000 (pw__s_to_us sets PW_US, no fork)
pw__s_to_us() {
    local s=$1 i f=
    i=${s%%.*}
    [[ $s == *.* ]] && f=${s#*.}
    f=${f}000000
    PW_US=$(( 10#${i:-0} * 1000000 + 10#${f:0:6} ))
}
pw_s_to_us() {
    pw__s_to_us "$1"
    echo "$PW_US"
}

# In a subshell: close this shell's end of the ibsim console FIFO so that no
# child process keeps it open.
pw__close_sim_fd() {
    if [ -n "${PW_SIM_FD:-}" ]; then exec {PW_SIM_FD}>&-; fi
    if [ -n "${PW_SIM_RD:-}" ]; then exec {PW_SIM_RD}<&-; fi
    if [ -n "${PW_SLEEP_FD:-}" ]; then exec {PW_SLEEP_FD}>&-; fi
    return 0
}

# Print everything that helps to understand a failure.
pw_diag() {
    echo "---------------------------------------------------------------- diagnostics"
    echo "test: $PW_TEST_NAME  work dir: ${PW_DIR:-?}"
    if [ -n "$PW_OSM_LOG" ] && [ -f "$PW_OSM_LOG" ]; then
        echo "--- opensm log ($PW_OSM_LOG), portwatch lines:"
        grep -a 'portwatch' "$PW_OSM_LOG" | tail -n 40 || true
        echo "--- opensm log, ERR lines:"
        grep -a -E ' ERR [0-9A-F]+:' "$PW_OSM_LOG" | tail -n 20 || true
        echo "--- opensm log, last 60 lines:"
        tail -n 60 "$PW_OSM_LOG" || true
    fi
    if [ -n "$PW_OSM_OUT" ] && [ -f "$PW_OSM_OUT" ]; then
        echo "--- opensm stdout/stderr, last 25 lines:"
        tail -n 25 "$PW_OSM_OUT" || true
    fi
    if [ -n "$PW_OSM_DIR" ] && compgen -G "$PW_OSM_DIR/sanitizer.*" >/dev/null; then
        echo "--- sanitizer reports of opensm run $PW_OSM_RUN:"
        head -n 80 "$PW_OSM_DIR"/sanitizer.* || true
    fi
    if [ -n "$PW_OSM_PID" ]; then
        if kill -0 "$PW_OSM_PID" 2>/dev/null; then
            echo "--- opensm pid $PW_OSM_PID is running"
        elif [ -n "$PW_OSM_WRAP_PID" ] && [ "$BASHPID" = "$$" ]; then
            local rc=0
            wait "$PW_OSM_WRAP_PID" 2>/dev/null || rc=$?
            PW_OSM_WRAP_PID=
            PW_OSM_RC=$rc
            if [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then
                echo "--- opensm pid $PW_OSM_PID died: exit status $rc (SIG$(kill -l $(( rc - 128 )) 2>/dev/null || echo ?))"
            else
                echo "--- opensm pid $PW_OSM_PID exited with status $rc"
            fi
        else
            echo "--- opensm pid $PW_OSM_PID is not running${PW_OSM_RC:+ (exit status $PW_OSM_RC)}"
        fi
    fi
    if [ -n "$PW_SIM_OUT" ] && [ -f "$PW_SIM_OUT" ]; then
        echo "--- ibsim console output, last 25 lines:"
        tail -n 25 "$PW_SIM_OUT" || true
        echo
    fi
    if [ -n "$PW_SIM_ERR" ] && [ -f "$PW_SIM_ERR" ]; then
        echo "--- ibsim stderr (parse warnings omitted), last 25 lines:"
        grep -a -v 'parse_port_connection_data' "$PW_SIM_ERR" | tail -n 25 || true
    fi
    if [ -n "$PW_SIM_PID" ]; then
        if sim_alive; then echo "--- ibsim ($PW_SIM_NAME) is running"
        else echo "--- ibsim ($PW_SIM_NAME) is not running"; fi
    fi
    if declare -F pw_diag_hook >/dev/null; then pw_diag_hook || true; fi
    echo "-----------------------------------------------------------------------------"
}

# pw_fail MESSAGE: print the message and diagnostics, exit 1.
# Works in subshells too (command substitutions): the message is then left in
# $PW_DIR/failed for the main shell's exit handler.
pw_fail() {
    PW_FAIL_MSG=$*
    if [ "$BASHPID" != "$$" ]; then
        if [ -n "$PW_DIR" ] && [ ! -e "$PW_DIR/failed" ]; then
            printf '%s\n' "$*" >"$PW_DIR/failed"
            { echo "ERROR: $*"; pw_diag; } >&2
        fi
        exit 1
    fi
    if [ -z "$PW_IN_FAIL" ]; then
        PW_IN_FAIL=1
        echo "ERROR: $*"
        pw_diag
    fi
    exit 1
}

# pw_pass [SUMMARY]: exit 0; the final line says PASS.
pw_pass() {
    PW_PASSED=${1:-ok}
    exit 0
}

# ------------------------------------------------------------------ init / cleanup
pw__cleanup() {
    set +e
    # A sourcing library may stop what it started on top of the harness
    # (e.g. further opensm instances) before the harness stops its own.
    if declare -F pw_cleanup_hook >/dev/null; then pw_cleanup_hook; fi
    if [ -n "$PW_OSM_PID" ] && kill -0 "$PW_OSM_PID" 2>/dev/null; then
        kill -TERM "$PW_OSM_PID" 2>/dev/null
        local i
        for i in $(seq 60); do kill -0 "$PW_OSM_PID" 2>/dev/null || break; pw_sleep 0.05; done
        if kill -0 "$PW_OSM_PID" 2>/dev/null; then
            echo "cleanup: opensm pid $PW_OSM_PID ignored SIGTERM for 3 s, killing it"
            kill -KILL "$PW_OSM_PID" 2>/dev/null
        fi
    fi
    if [ -n "$PW_OSM_WRAP_PID" ]; then wait "$PW_OSM_WRAP_PID" 2>/dev/null; fi
    if [ -n "$PW_SIM_PID" ]; then
        sim_stop quiet
    fi
    if [ -n "$PW_SIM_FD" ]; then exec {PW_SIM_FD}>&-; PW_SIM_FD=; fi
    if [ -n "${PW_SLEEP_FD:-}" ]; then exec {PW_SLEEP_FD}>&-; PW_SLEEP_FD=; fi
    if [ -n "$PW_DIR" ] && [ -d "$PW_DIR" ]; then
        if [ "${PW_KEEP:-0}" = 1 ]; then
            echo "PW_KEEP=1: kept work dir $PW_DIR"
        else
            rm -rf "$PW_DIR"
        fi
    fi
}

pw__on_exit() {
    local rc=$?
    trap - EXIT INT TERM ERR
    set +e
    if [ "$rc" -ne 0 ] && [ -z "$PW_IN_FAIL" ] && [ -n "$PW_DIR" ] && [ -s "$PW_DIR/failed" ]; then
        PW_IN_FAIL=1
        PW_FAIL_MSG=$(cat "$PW_DIR/failed")
    fi
    if [ "$rc" -ne 0 ] && [ -z "$PW_IN_FAIL" ]; then
        PW_IN_FAIL=1
        PW_FAIL_MSG="unexpected error (exit status $rc) at line ${PW_ERR_LINE:-?}: ${PW_ERR_CMD:-?}"
        echo "ERROR: $PW_FAIL_MSG"
        pw_diag
    fi
    if [ "$rc" -eq 0 ] && [ -n "$PW_DIR" ] && [ -s "$PW_DIR/failed" ]; then
        rc=1   # a subshell failed but the script went on: never a pass
        PW_FAIL_MSG=$(cat "$PW_DIR/failed")
    fi
    pw__cleanup
    if [ "$rc" -eq 0 ] && [ -n "$PW_PASSED" ]; then
        echo "PASS: $PW_TEST_NAME: $PW_PASSED"
        exit 0
    fi
    if [ "$rc" -eq 0 ]; then
        PW_FAIL_MSG="test script ended without calling pw_pass"
    fi
    echo "FAIL: $PW_TEST_NAME: ${PW_FAIL_MSG:-failed}"
    exit 1
}

pw__on_signal() {
    PW_FAIL_MSG="interrupted by SIG$1"
    PW_IN_FAIL=1
    echo "ERROR: $PW_FAIL_MSG"
    exit 1
}

# Fail (never skip) when a prerequisite is missing.
pw_need_file() {   # FILE PACKAGE-HINT
    [ -e "$1" ] || pw_fail "$1 is missing: $2"
}
pw_need_cmd() {    # COMMAND DEBIAN-PACKAGE
    command -v "$1" >/dev/null 2>&1 || pw_fail "command '$1' not found: install the Debian package $2"
}

# pw_init: call once at the top of a test, after `set -euo pipefail`.
pw_init() {
    set -E
    PW_TEST_NAME=${PW_TEST_NAME:-$(basename "$0" .sh)}
    PW_T0_US=$(pw_now_us)
    trap 'PW_ERR_LINE=$LINENO; PW_ERR_CMD=$BASH_COMMAND' ERR
    trap pw__on_exit EXIT
    trap 'pw__on_signal INT' INT
    trap 'pw__on_signal TERM' TERM

    # Source and build trees (make check passes both; by hand they are guessed).
    local here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    : "${abs_top_srcdir:=$(cd "$here/../.." && pwd)}"
    : "${abs_top_builddir:=$abs_top_srcdir}"
    PW_SRCDIR=$abs_top_srcdir
    PW_BUILDDIR=$abs_top_builddir
    if [ -n "${PW_SANITIZER_PRELOAD:-}" ]; then
        # shellcheck source=../sanitizers/env.sh
        . "$PW_SRCDIR/tests/sanitizers/env.sh"
        pw_san_env "$PW_SRCDIR/tests/sanitizers"
    fi

    [ "${BASH_VERSINFO[0]}" -ge 5 ] || pw_fail "bash >= 5 is needed (EPOCHREALTIME)"
    pw_need_cmd timeout coreutils
    pw_need_cmd mkfifo coreutils
    pw_need_cmd awk mawk
    pw_need_file "$PW_IBSIM" "install the Debian package ibsim-utils"
    pw_need_file "$PW_UMAD2SIM" "install the Debian package ibsim-utils"
    pw_need_file "$PW_NET_2SW" "install the Debian package ibsim-utils (net-examples)"
    pw_need_file "$PW_OPENSM" "install the Debian package opensm"
    pw_need_cmd smpquery infiniband-diags
    pw_need_cmd ibportstate infiniband-diags

    # Private work dir. Keep its path short: unix socket paths live in it.
    local base=${TMPDIR:-/tmp}
    [ ${#base} -le 40 ] && [ -d "$base" ] && [ -w "$base" ] || base=/tmp
    PW_DIR=$(mktemp -d "$base/pw-e2e.XXXXXX") || pw_fail "mktemp -d failed in $base"
    mkdir -p "$PW_DIR/diag"
    mkfifo "$PW_DIR/sleep.fifo"
    exec {PW_SLEEP_FD}<>"$PW_DIR/sleep.fifo"
    pw_log "test $PW_TEST_NAME: work dir $PW_DIR"
    # Which OpenSM this run proves (scripts/check-opensm-versions reads it).
    PW_OSM_VERSION=$(pw_osm_version "$PW_OPENSM")
    pw_log "opensm: $PW_OPENSM (${PW_OSM_VERSION:-no version string found})"
}

# ------------------------------------------------------------------ ibsim
# pw_pid_running PID: PID exists and is not a zombie (a child of ours that
# exited stays a zombie until waited for, and kill -0 succeeds on zombies).
pw_pid_running() {
    local stat st
    [ -n "$1" ] || return 1
    { IFS= read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
    st=${stat##*) }
    st=${st%% *}
    [ "$st" != Z ] && [ "$st" != X ]
}

sim_alive() {
    pw_pid_running "$PW_SIM_PID"
}

# Append what ibsim printed since the last call to PW_SIM_ACC (no fork).
pw__sim_read() {
    local chunk rc
    while :; do
        chunk='' rc=0
        IFS= read -r -d '' -u "$PW_SIM_RD" chunk || rc=$?
        PW_SIM_ACC+=$chunk
        [ "$rc" = 0 ] || break
    done
}

# sim_start NETFILE [IBSIM-ARGS...]: start a fresh ibsim on a unique socket
# name; returns when its control socket is bound and the console answers.
sim_start() {
    local net=$1; shift
    [ -r "$net" ] || pw_fail "ibsim net file $net not readable (Debian package ibsim-utils)"
    [ -z "$PW_SIM_PID" ] || pw_fail "sim_start: ibsim already running"
    PW_SIM_NAME="pw$$x$RANDOM$RANDOM"
    PW_SIM_OUT=$PW_DIR/ibsim.out
    PW_SIM_ERR=$PW_DIR/ibsim.err
    rm -f "$PW_DIR/ibsim.in"
    mkfifo "$PW_DIR/ibsim.in"
    : >"$PW_SIM_OUT"
    exec {PW_SIM_RD}<"$PW_SIM_OUT"
    PW_SIM_ACC=
    # Held open read-write by this shell: ibsim never sees EOF (it would spin
    # at 100 % CPU) and opening/writing never blocks on a missing reader.
    exec {PW_SIM_FD}<>"$PW_DIR/ibsim.in"
    (
        exec <&"$PW_SIM_FD"
        pw__close_sim_fd
        cd "$PW_DIR" || exit 1
        IBSIM_SOCKNAME=$PW_SIM_NAME exec "${PW_PDEATH[@]}" \
            timeout -k 2 "$PW_SIM_MAX_S" "$PW_IBSIM" -s "$@" "$net"
    ) >"$PW_SIM_OUT" 2>"$PW_SIM_ERR" &
    PW_SIM_PID=$!
    local i
    for i in $(seq 200); do
        pw__sim_read
        if [[ $PW_SIM_ACC == *'sim> '* ]] && grep -q -F "@$PW_SIM_NAME:ctl@" /proc/net/unix; then
            break
        fi
        sim_alive || pw_fail "ibsim exited during start-up"
        pw_sleep 0.05
    done
    grep -q -F "@$PW_SIM_NAME:ctl@" /proc/net/unix || pw_fail "ibsim not ready after 10 s"
    pw_log "ibsim ready on $(basename "$net"), IBSIM_SOCKNAME=$PW_SIM_NAME"
}

# sim_cmd 'Unlink "Hca1"[1]' [TIMEOUT_S]: send one console command and wait
# until ibsim has executed it (it prints a new prompt after each command).
# Output of the command is left in PW_SIM_REPLY.
#
# The write is a builtin printf to the FIFO this shell holds open read-write:
# it cannot block on open, and since every command is waited for, at most one
# short line is ever unread in the pipe, so it cannot block on a full pipe
# either. A dead ibsim is detected before writing and while waiting.
sim_cmd() {
    local cmd=$1 tmo=${2:-5} t_end
    sim_alive || pw_fail "ibsim is not running; cannot send: $cmd"
    pw__sim_read
    PW_SIM_ACC=
    printf '%s\n' "$cmd" >&"$PW_SIM_FD"
    pw__now
    PW_SIM_T_US=$PW_NOW
    t_end=$(( PW_NOW + tmo * 1000000 ))
    while :; do
        pw__sim_read
        [[ $PW_SIM_ACC == *'sim> '* ]] && break
        sim_alive || pw_fail "ibsim died while executing: $cmd"
        pw__now
        [ "$PW_NOW" -lt "$t_end" ] || pw_fail "ibsim did not execute '$cmd' within ${tmo} s"
        pw_sleep 0.002
    done
    [ "${PW_VERBOSE:-0}" = 1 ] && pw_log "ibsim> $cmd"
    PW_SIM_REPLY=${PW_SIM_ACC//sim> /}
    case $PW_SIM_REPLY in
        *'not found'*|*"can't"*|*'bad '*|*'is not linked'*)
            pw_fail "ibsim rejected '$cmd': $PW_SIM_REPLY" ;;
    esac
}

# sim_dump_port NODE PORT: NODE[PORT] as ibsim itself keeps it, from the
# console's Dump (uses no client slot): PW_DUMP_STATE (Down/Init/Armed/
# Active), PW_DUMP_PHYS (Polling/Disabled/LinkUp/...) and PW_DUMP_PEER (the
# linked port, '"Hca1"[1]', or empty).
sim_dump_port() {
    local node=$1 port=$2 line
    sim_cmd "Dump \"$node\""
    line=$(printf '%s\n' "$PW_SIM_REPLY" | awk -v p="[$port]" '$2 == p { print; exit }')
    PW_DUMP_PEER=$(awk -F '\t' '{ print $3 }' <<<"$line")
    line=${line##* }
    PW_DUMP_STATE=${line%/*} PW_DUMP_PHYS=${line#*/}
}

# sim_dump_port_state NODE PORT: print PW_DUMP_STATE of NODE[PORT].
sim_dump_port_state() {
    sim_dump_port "$@"
    echo "$PW_DUMP_STATE"
}

# sim_stop [quiet]: Quit ibsim and wait for it; kills it if needed.
sim_stop() {
    local quiet=${1:-} i rc
    [ -n "$PW_SIM_PID" ] || return 0
    if sim_alive; then
        printf 'Quit\n' >&"$PW_SIM_FD" || true
        for i in $(seq 60); do sim_alive || break; pw_sleep 0.05; done
        if sim_alive; then
            echo "ibsim did not quit within 3 s; terminating it"
            kill -TERM "$PW_SIM_PID" 2>/dev/null || true   # timeout passes it on
        fi
    fi
    rc=0
    wait "$PW_SIM_PID" 2>/dev/null || rc=$?
    [ -n "$quiet" ] || pw_log "ibsim stopped (rc $rc)"
    PW_SIM_PID=
    if [ -n "$PW_SIM_FD" ]; then exec {PW_SIM_FD}>&-; PW_SIM_FD=; fi
    if [ -n "${PW_SIM_RD:-}" ]; then exec {PW_SIM_RD}<&-; PW_SIM_RD=; fi
}

# ------------------------------------------------------------------ diags as sim clients
# diag_run HOST TOOL [ARGS...]: run an infiniband-diags tool as one more ibsim
# client attached at HOST (each live client takes one of ibsim's 10 slots; a
# clean exit frees it, a killed client leaks it).
diag_run() {
    local host=$1; shift
    sim_alive || pw_fail "ibsim is not running; cannot run $1"
    # The MAD tools name their local port: without -C/-P, libibumad of
    # Debian 13 (rdma-core 56) looks for an ACTIVE port and finds none
    # while the node's link is down ("Can't open UMAD port"). umad2sim
    # calls its one CA ibsim0.
    case $1 in
        smpquery|ibportstate|sminfo|saquery|iblinkinfo)
            set -- "$1" -C ibsim0 -P 1 "${@:2}" ;;
    esac
    (
        pw__close_sim_fd
        cd "$PW_DIR/diag" || exit 1
        exec timeout -k 1 "${PW_DIAG_TIMEOUT_S:-10}" env IBSIM_SOCKNAME="$PW_SIM_NAME" \
            SIM_HOST="$host" LD_PRELOAD="$PW_UMAD2SIM" "$@"
    ) </dev/null
}

# pw__port_state HOST TOOL ARGS...: run a diag that prints "LinkState:...X"
# and set PW_PORT_STATE to X (no command substitution: a failure is reported
# from the main shell).
pw__port_state() {
    local out=$PW_DIR/diag/query.out rc=0 line
    diag_run "$@" >"$out" 2>&1 || rc=$?
    PW_PORT_STATE=
    while IFS= read -r line; do
        case $line in LinkState:*) PW_PORT_STATE=${line##*.} ;; esac
    done <"$out"
    if [ "$rc" != 0 ] || [ -z "$PW_PORT_STATE" ]; then
        pw_fail "$2 on $1 failed (exit $rc): $(cat "$out")"
    fi
}

# smp_port_state HOST PORT: print the LinkState word (Down, Initialize, Armed,
# Active) of local port PORT of node HOST, read with an SMP
# (smpquery -D portinfo 0 PORT; DR path 0 = the node itself, so this works
# while the link is down). Also sets PW_PORT_STATE when not in a subshell.
smp_port_state() {
    pw__port_state "$1" smpquery -D portinfo 0 "$2"
    echo "$PW_PORT_STATE"
}

# ibportstate_state HOST PORT: same through ibportstate -D 0 PORT query.
ibportstate_state() {
    pw__port_state "$1" ibportstate -D 0 "$2" query
    echo "$PW_PORT_STATE"
}

# wait_port_state HOST PORT STATE TIMEOUT_S: poll with smpquery (each query
# costs 35-55 ms on an idle 2-core host); sets PW_PORT_STATE; returns 1 on timeout.
wait_port_state() {
    local host=$1 port=$2 want=$3 tmo=$4 t_end
    pw__s_to_us "$tmo"; pw__now
    t_end=$(( PW_NOW + PW_US ))
    while :; do
        pw__port_state "$host" smpquery -D portinfo 0 "$port"
        [ "$PW_PORT_STATE" = "$want" ] && return 0
        pw__now
        [ "$PW_NOW" -lt "$t_end" ] || return 1
        pw_sleep 0.02
    done
}

# ------------------------------------------------------------------ opensm
# osm_make_conf OUT.conf [key=value ...]: full default config written by
# `opensm -c`, with harness defaults and then the given overrides applied. A
# key absent from the template is appended. The value is everything after the
# first '='.
osm_make_conf() {
    local out=$1; shift
    local tmpl=$PW_DIR/opensm.conf.template kv
    if [ ! -s "$tmpl" ]; then
        mkdir -p "$PW_DIR/conf-cache" "$PW_DIR/conf-tmp"
        ( pw__close_sim_fd; cd "$PW_DIR" && OSM_CACHE_DIR=$PW_DIR/conf-cache OSM_TMP_DIR=$PW_DIR/conf-tmp \
            exec timeout 20 "$PW_OPENSM" -c "$tmpl" -f "$PW_DIR/opensm-c.log" ) \
            </dev/null >"$PW_DIR/opensm-c.out" 2>&1 \
            || pw_fail "opensm -c failed: $(tail -n 5 "$PW_DIR/opensm-c.out")"
        [ -s "$tmpl" ] || pw_fail "opensm -c wrote no config template"
    fi
    : >"$out.overrides"
    for kv in log_flags=0x07 force_log_flush=TRUE console=off daemon=FALSE \
              "dump_files_dir=$PW_DIR" "$@"; do
        case $kv in
            *=*) printf '%s\t%s\n' "${kv%%=*}" "${kv#*=}" >>"$out.overrides" ;;
            *) pw_fail "osm_make_conf: '$kv' is not key=value" ;;
        esac
    done
    awk -F '\t' '
        FNR == NR { val[$1] = $2; if (!($1 in seen)) { order[++n] = $1; seen[$1] = 1 } next }
        {
            split($0, w, /[ \t]+/)
            if (substr($0, 1, 1) != "#" && (w[1] in val)) { print w[1] " " val[w[1]]; done[w[1]] = 1; next }
            print
        }
        END { for (i = 1; i <= n; i++) if (!(order[i] in done)) print order[i] " " val[order[i]] }
    ' "$out.overrides" "$tmpl" >"$out"
    rm -f "$out.overrides"
}

# osm_start CONF [NAME=value ...] [-- OPENSM-ARGS...]
# Starts /usr/sbin/opensm on the current ibsim, attached at $PW_OSM_HOST
# (default Hca1), in a private run dir (its cwd, OSM_CACHE_DIR, OSM_TMP_DIR,
# log). NAME=value pairs are added to its environment; LD_PRELOAD=x is
# appended after umad2sim, LD_PRELOAD_FIRST=x put ahead of it. Sets PW_OSM_PID, PW_OSM_LOG, PW_OSM_DIR.
osm_start() {
    local conf=$1; shift
    local preload=$PW_UMAD2SIM
    local -a envs=() args=()
    while [ $# -gt 0 ]; do
        case $1 in
            --) shift; args=("$@"); break ;;
            LD_PRELOAD=*) preload="$preload:${1#LD_PRELOAD=}" ;;
            LD_PRELOAD_FIRST=*) preload="${1#LD_PRELOAD_FIRST=}:$preload" ;;
            [A-Za-z_]*=*) envs+=("$1") ;;
            *) pw_fail "osm_start: unexpected argument '$1'" ;;
        esac
        shift
    done
    [ -f "$conf" ] || pw_fail "osm_start: no config file $conf"
    sim_alive || pw_fail "osm_start: ibsim is not running"
    if [ -n "$PW_OSM_PID" ] && kill -0 "$PW_OSM_PID" 2>/dev/null; then
        pw_fail "osm_start: opensm already running"
    fi
    PW_OSM_RUN=$(( PW_OSM_RUN + 1 ))
    PW_OSM_DIR=$PW_DIR/osm$PW_OSM_RUN
    mkdir -p "$PW_OSM_DIR/cache" "$PW_OSM_DIR/tmp"
    PW_OSM_LOG=$PW_OSM_DIR/opensm.log
    # An opensm --log_file FILE among the arguments (as Debian's service
    # passes it) names the log; -f is then left out (given twice, opensm
    # leaks the first string).
    local -a logopt=(-f "$PW_OSM_LOG")
    local i
    for (( i = 0; i < ${#args[@]}; i++ )); do
        if [ "${args[$i]}" = --log_file ] && [ $(( i + 1 )) -lt ${#args[@]} ]; then
            PW_OSM_LOG=${args[$(( i + 1 ))]}
            logopt=()
        fi
    done
    PW_OSM_OUT=$PW_OSM_DIR/opensm.out
    PW_OSM_RC=
    rm -f "$PW_OSM_DIR/opensm.pid"
    if [ -n "${PW_OSM_SANITIZE:-}" ]; then
        # Sanitizer build: the runtime must be the first preloaded library
        # (ahead of umad2sim and the instrumented simulator and plugin);
        # reports go to files the harness checks (pw_san_check).
        preload="${PW_SANITIZER_PRELOAD// /:}:$preload"
        envs+=(ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$PW_OSM_DIR/sanitizer"
               UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$PW_OSM_DIR/sanitizer"
               TSAN_OPTIONS="$TSAN_OPTIONS:log_path=$PW_OSM_DIR/sanitizer"
               LSAN_OPTIONS="$LSAN_OPTIONS")
    fi
    (
        pw__close_sim_fd
        cd "$PW_OSM_DIR" || exit 1
        # shellcheck disable=SC2016  # expanded by the inner bash
        exec "${PW_PDEATH[@]}" timeout -k 3 "$PW_OSM_MAX_S" bash -c 'echo $$ >"$1"; shift; exec "$@"' _ \
            "$PW_OSM_DIR/opensm.pid" \
            env IBSIM_SOCKNAME="$PW_SIM_NAME" SIM_HOST="${PW_OSM_HOST:-Hca1}" \
                LD_PRELOAD="$preload" OSM_CACHE_DIR="$PW_OSM_DIR/cache" \
                OSM_TMP_DIR="$PW_OSM_DIR/tmp" "${envs[@]}" \
            "$PW_OPENSM" -F "$conf" "${logopt[@]}" -e "${args[@]}"
    ) </dev/null >"$PW_OSM_OUT" 2>&1 &
    PW_OSM_WRAP_PID=$!
    local i
    for i in $(seq 200); do
        [ -s "$PW_OSM_DIR/opensm.pid" ] && break
        pw_pid_running "$PW_OSM_WRAP_PID" || break
        pw_sleep 0.005
    done
    [ -s "$PW_OSM_DIR/opensm.pid" ] || pw_fail "opensm did not start"
    PW_OSM_PID=$(cat "$PW_OSM_DIR/opensm.pid")
    PW_OSM_START_US=$(pw_now_us)
    pw_log "opensm started (pid $PW_OSM_PID, run $PW_OSM_RUN${envs[*]:+, env: ${envs[*]}}, LD_PRELOAD=$preload)"
}

osm_alive() {
    pw_pid_running "$PW_OSM_PID"
}

# osm_wait_up [TIMEOUT_S]: wait for the first SUBNET UP of this run.
osm_wait_up() {
    wait_log "$PW_OSM_LOG" "$PW_RE_SUBNET_UP" "${1:-10}"
    pw_log "SUBNET UP $(pw_fmt_ms $(( $(log_line_us "$PW_OSM_LOG" "$PW_MATCH_LINE") - PW_OSM_START_US ))) ms after opensm was started"
}

# osm_stop [BOUND_S]: SIGTERM opensm and require it to exit within BOUND_S
# (default 5). Sets PW_OSM_RC (its exit status) and PW_OSM_STOP_MS.
osm_stop() {
    local bound=${1:-5} t0 t1
    [ -n "$PW_OSM_PID" ] || pw_fail "osm_stop: opensm was not started"
    osm_alive || pw_fail "osm_stop: opensm is no longer running (it exited on its own)"
    pw__now; t0=$PW_NOW
    kill -TERM "$PW_OSM_PID"
    osm__wait_gone "$bound" "opensm did not exit within ${bound} s of SIGTERM"
    pw__now; t1=$PW_NOW
    PW_OSM_STOP_MS=$(pw_fmt_ms $(( t1 - t0 )))
    osm__reap "opensm exited with status %s, ${PW_OSM_STOP_MS} ms after SIGTERM"
}

# osm__wait_gone BOUND_S MESSAGE: wait until opensm's process is gone; fail
# with MESSAGE after BOUND_S.
osm__wait_gone() {
    local t0
    pw__now; t0=$PW_NOW
    while osm_alive; do
        pw__now
        [ $(( PW_NOW - t0 )) -lt $(( $1 * 1000000 )) ] || pw_fail "$2"
        pw_sleep 0.002
    done
}

# osm__reap LOG_FORMAT: after opensm's exit, its status in PW_OSM_RC, logged
# with LOG_FORMAT (%s: the status); fails on the harness's time limit or a
# sanitizer report.
osm__reap() {
    local rc=0
    wait "$PW_OSM_WRAP_PID" || rc=$?
    PW_OSM_WRAP_PID=
    PW_OSM_RC=$rc
    # shellcheck disable=SC2059  # the caller's format
    pw_log "$(printf "$1" "$rc")"
    # timeout(1) says 124 when its limit struck, 137 when it had to KILL;
    # 137 also when something else killed opensm (the kernel's timer
    # portwatch arms before asking opensm to exit): the limit had not passed.
    case $rc in
        124) pw_fail "opensm was killed by the harness time limit (status $rc)" ;;
        137)
            [ $(( $(pw_now_us) - PW_OSM_START_US )) -lt $(( PW_OSM_MAX_S * 1000000 )) ] \
                || pw_fail "opensm was killed by the harness time limit (status $rc)" ;;
    esac
    pw_san_check
}

# pw_san_check: in a sanitizer build, fail if the last opensm run left a
# sanitizer report (ASan, LSan, UBSan or TSan), printing it.
pw_san_check() {
    local f found=
    [ -n "$PW_OSM_DIR" ] || return 0
    for f in "$PW_OSM_DIR"/sanitizer.*; do
        [ -e "$f" ] || continue
        echo "---- sanitizer report $f:"
        cat "$f"
        found="$found $(basename "$f")"
    done
    [ -z "$found" ] || pw_fail "sanitizer report(s) from opensm run $PW_OSM_RUN:$found"
}

# osm_stop_clean [BOUND_S]: osm_stop and require exit status 0.
osm_stop_clean() {
    osm_stop "${1:-5}"
    [ "$PW_OSM_RC" = 0 ] || pw_fail "opensm exit status $PW_OSM_RC after SIGTERM (expected 0)"
}

# ------------------------------------------------------------------ logs
# log_lines FILE: current number of lines (use as a mark for *_after calls).
log_lines() {
    local n
    n=$(wc -l <"$1" 2>/dev/null) || n=0
    echo "${n:-0}"
}

# count_log FILE REGEX [AFTER_LINE [UPTO_LINE]]: matching lines (ERE).
count_log() {
    local f=$1 re=$2 after=${3:-0} upto=${4:-}
    [ -f "$f" ] || { echo 0; return 0; }
    awk -v a="$after" -v u="$upto" -v re="$re" '
        NR > a && (u == "" || NR <= u + 0) && $0 ~ re { n++ }
        END { print n + 0 }' "$f"
}

# count_summarised FILE WHAT [AFTER_LINE [UPTO_LINE]]: what the plugin's
# storm summaries ("in the last N ms: ...") counted instead of writing line
# by line; WHAT is one of "link lost", "link back", "other lines", "sweeps
# requested", "marks", "deferred".
count_summarised() {
    local f=$1 what=$2 after=${3:-0} upto=${4:-}
    [ -f "$f" ] || { echo 0; return 0; }
    awk -v a="$after" -v u="$upto" -v w="$what" '
        NR > a && (u == "" || NR <= u + 0) && /portwatch: in the last [0-9]+ ms: / {
            line = $0; sub(/.*portwatch: in the last [0-9]+ ms: /, "", line)
            n2 = split(line, parts, /[,;] /)
            for (i = 1; i <= n2; i++) {
                p = parts[i]
                if (index(p, w " ") == 1) { v = substr(p, length(w) + 2); n += v + 0 }
                else if (substr(p, length(p) - length(w) + 1) == w) { n += p + 0 }
            }
        }
        END { print n + 0 }' "$f"
}

# grep_log FILE REGEX [AFTER_LINE]: print "LINENO:text" of matching lines.
grep_log() {
    local f=$1 re=$2 after=${3:-0}
    [ -f "$f" ] || return 0
    awk -v a="$after" -v re="$re" 'NR > a && $0 ~ re { print NR ":" $0 }' "$f"
}

# wait_log FILE REGEX TIMEOUT_S [AFTER_LINE]: poll FILE until a line after
# AFTER_LINE matches REGEX (ERE). Sets PW_MATCH_LINE / PW_MATCH_TEXT. On
# timeout (or opensm gone) fails the test with the tail of the log.
wait_log() {
    wait_log_soft "$@" && return 0
    local f=$1 re=$2 tmo=$3
    echo "---- last 30 lines of $f:"
    tail -n 30 "$f" 2>/dev/null || true
    if [ "$PW_WAIT_WHY" = died ]; then
        pw_fail "opensm exited while waiting for /$re/ in $(basename "$f")"
    fi
    pw_fail "timed out after ${tmo} s waiting for /$re/ in $(basename "$f")${4:+ (after line $4)}"
}

# wait_log_soft: like wait_log but returns 1 instead of failing. FILE is read
# through one descriptor, each line once, and matched by the shell: a poll
# starts no process (an awk over the whole file per poll, 10 ms apart, was
# about half of a scenario's CPU). REGEX is an ERE as awk -v took it: "\\"
# is one backslash; bash's ERE (the C library's) and awk's agree on the
# patterns the tests use. A line counts once its newline is written (awk
# also matched a line still being written).
wait_log_soft() {
    local f=$1 re=$2 tmo=$3 after=${4:-0} t_end alive fd='' part='' n=0 i k line
    local -a chunk
    re=${re//\\\\/\\}
    pw__s_to_us "$tmo"; pw__now
    t_end=$(( PW_NOW + PW_US ))
    PW_WAIT_WHY=
    while :; do
        alive=1
        if [ "$f" = "$PW_OSM_LOG" ] && ! osm_alive; then alive=0; fi
        if [ -z "$fd" ] && [ -r "$f" ]; then exec {fd}<"$f"; fi
        if [ -n "$fd" ]; then
            mapfile -u "$fd" chunk
            k=${#chunk[@]}
            if [ "$k" -gt 0 ]; then
                chunk[0]=$part${chunk[0]} part=
                # Only the last line can lack its newline: its rest comes
                # with a later read.
                if [[ ${chunk[k - 1]} != *$'\n' ]]; then part=${chunk[k - 1]}; k=$(( k - 1 )); fi
                # chunk[i] is line n+i+1: the lines up to AFTER are only counted.
                for (( i = after > n ? after - n : 0; i < k; i++ )); do
                    line=${chunk[i]%$'\n'}
                    if [[ $line =~ $re ]]; then
                        PW_MATCH_LINE=$(( n + i + 1 ))
                        PW_MATCH_TEXT=$line
                        exec {fd}<&-
                        return 0
                    fi
                done
                n=$(( n + k ))
            fi
        fi
        if [ "$alive" = 0 ]; then PW_WAIT_WHY=died; fi
        pw__now
        if [ -z "$PW_WAIT_WHY" ] && [ "$PW_NOW" -ge "$t_end" ]; then PW_WAIT_WHY=timeout; fi
        if [ -n "$PW_WAIT_WHY" ]; then
            [ -z "$fd" ] || exec {fd}<&-
            return 1
        fi
        pw_sleep 0.01
    done
}

# ------------------------------------------------------------------ timing
# pw_log_ts_us 'Dec 02 17:40:01 123456': opensm log timestamp -> microseconds
# in the harness scheme ((month*31+day) days + time of day, local time). Good
# for differences within a run; not across a new year.
pw_log_ts_us() {
    echo "$1" | awk '{ print pw_us($0) }
        function pw_us(s,   f, mo) {
            split(s, f, /[ :]+/)
            mo = (index("JanFebMarAprMayJunJulAugSepOctNovDec", f[1]) + 2) / 3
            return sprintf("%.0f", ((((mo * 31 + f[2]) * 24 + f[3]) * 60 + f[4]) * 60 + f[5]) * 1000000 + f[6])
        }'
}

# log_line_us FILE LINENO: timestamp (us) of line LINENO, or of the nearest
# timestamped line before it (opensm banners such as INITIATING HEAVY SWEEP
# are continuation lines of a timestamped message).
log_line_us() {
    awk -v n="$2" -v tsre="$PW_RE_TS" '
        function pw_us(s,   f, mo) {
            split(s, f, /[ :]+/)
            mo = (index("JanFebMarAprMayJunJulAugSepOctNovDec", f[1]) + 2) / 3
            return sprintf("%.0f", ((((mo * 31 + f[2]) * 24 + f[3]) * 60 + f[4]) * 60 + f[5]) * 1000000 + f[6])
        }
        $0 ~ tsre { ts = substr($0, 1, 22) }
        NR == n { if (ts == "") exit 1; print pw_us(ts); found = 1; exit }
        END { if (!found) exit 1 }' "$1" \
        || pw_fail "no timestamp for line $2 of $1"
}

# log_ms_between FILE LINE_A LINE_B: milliseconds (one decimal) from A to B.
log_ms_between() {
    pw_fmt_ms $(( $(log_line_us "$1" "$3") - $(log_line_us "$1" "$2") ))
}

# pw_stats LABEL VALUE_US...: "LABEL: n=N min=.. median=.. max=.. ms"
pw_stats() {
    local label=$1; shift
    if [ $# -eq 0 ]; then echo "$label: no samples"; return 0; fi
    local -a s
    mapfile -t s < <(printf '%s\n' "$@" | sort -n)
    local n=${#s[@]}
    local med
    if (( n % 2 )); then med=${s[n/2]}; else med=$(( (s[n/2-1] + s[n/2]) / 2 )); fi
    echo "$label: n=$n min=$(pw_fmt_ms "${s[0]}") median=$(pw_fmt_ms "$med") max=$(pw_fmt_ms "${s[n-1]}") ms"
}

# ------------------------------------------------------------------ plugin + verbs simulator
# pw_require_plugin: libportwatch.so, libvsim.so and vsimctl must be built.
pw_require_plugin() {
    PW_PLUGIN_DIR=$PW_BUILDDIR/plugin/.libs
    PW_VSIM_LIB=$PW_BUILDDIR/tests/verbs_sim/.libs/libvsim.so
    PW_VSIMCTL=$PW_BUILDDIR/tests/verbs_sim/vsimctl
    pw_need_file "$PW_PLUGIN_DIR/libportwatch.so" "build the plugin first (make check builds it)"
    pw_need_file "$PW_VSIM_LIB" "build the verbs simulator first (make check builds it)"
    pw_need_file "$PW_VSIMCTL" "build the verbs simulator first (make check builds it)"
}

# fabric_start STYLE [NAME]: the two-switch ibsim fabric, and the SM's HCA
# in the verbs simulator as a STYLE device (vsim_setup).
fabric_start() {
    sim_start "$PW_NET_2SW"
    vsim_setup "$@"
}

# osm_watching DEV: after osm_start_plugin, wait until the plugin watches
# DEV port 1, holds DEV open, and opensm has brought the subnet up.
osm_watching() {
    wait_log "$PW_OSM_LOG" "portwatch: watching $1:1" 5
    vsimctl wait-open "$1"
    osm_wait_up 10
}

# vsim_setup STYLE [NAME]: write a VSIM_CONFIG describing the SM's HCA (Hca1:
# node and port 1 GUIDs) as a device of driver STYLE (mlx5, mlx4, rxe), port 1
# ACTIVE. Sets PW_VSIM_DEV, PW_VSIM_CONFIG, PW_VSIM_SOCKET.
vsim_setup() {
    local style=$1 name=${2:-}
    if [ -z "$name" ]; then
        case $style in
            mlx5) name=mlx5_0 ;;
            mlx4) name=mlx4_0 ;;
            rxe) name=rxe0 ;;
            *) pw_fail "vsim_setup: unknown driver style '$style'" ;;
        esac
    fi
    PW_VSIM_DEV=$name
    PW_VSIM_STYLE=$style
    PW_VSIM_CONFIG=$PW_DIR/vsim-$name.conf
    PW_VSIM_SOCKET=$PW_DIR/vsim-$name.sock
    rm -f "$PW_VSIM_SOCKET"
    cat >"$PW_VSIM_CONFIG" <<EOF
add $name node_guid=$PW_HCA1_NODE_GUID style=$style state=active
port $name 1 guid=$PW_HCA1_PORT1_GUID quiet
EOF
}

# vsimctl ARGS...: run the simulator's control CLI on this test's socket;
# fails the test unless it answers "ok". Reply in PW_VSIM_REPLY; the harness
# time just before the call in PW_VSIM_T_US.
vsimctl() {
    local rc=0
    pw__now; PW_VSIM_T_US=$PW_NOW
    PW_VSIM_REPLY=$(pw__close_sim_fd; timeout 10 "$PW_VSIMCTL" -s "$PW_VSIM_SOCKET" "$@" 2>&1 </dev/null) || rc=$?
    [ "${PW_VERBOSE:-0}" = 1 ] && pw_log "vsimctl $* -> $PW_VSIM_REPLY"
    [ "$rc" = 0 ] || pw_fail "vsimctl $* failed (exit $rc): $PW_VSIM_REPLY"
    case $PW_VSIM_REPLY in
        ok*|*$'\n'ok*) ;;
        *) pw_fail "vsimctl $* did not answer ok: $PW_VSIM_REPLY" ;;
    esac
}

# The SM's link in a bounce, in the order real hardware shows it: the fabric
# first (ibsim's console, HOST port 1), then what the HCA's driver reports
# (DEV port 1 in the verbs simulator).
#   fabric_link down|back [HOST]   the fabric half alone: Unlink or ReLink
#                                  (HOST defaults to Hca1, the SM's host)
#   link_step STEP DEV [HOST]      both halves; STEP is
#     down           Unlink, then the port DOWN
#     back[=STATE]   ReLink, then the port at STATE (init: mlx5 and mlx4
#                    report a return at INIT; rxe has no INIT: back=active)
#     active         the driver alone: ACTIVE, as the HCA reports it once
#                    opensm has configured the port in the fabric
# The driver half is made by the command in PW_LINK_DRIVER (default
# vsimctl): a test with several simulators names a function that makes the
# change in each. PW_VSIM_T_US is the instant of the driver's change.
fabric_link() {
    case $1 in
        down) sim_cmd "Unlink \"${2:-Hca1}\"[1]" ;;
        back) sim_cmd "ReLink \"${2:-Hca1}\"[1]" ;;
        *) pw_fail "fabric_link: unknown step '$1'" ;;
    esac
}

link_step() {
    local step=$1 dev=$2 host=${3:-Hca1} state
    case $step in
        down) fabric_link down "$host"; state=down ;;
        back) fabric_link back "$host"; state=init ;;
        back=*) fabric_link back "$host"; state=${step#back=} ;;
        active) state=active ;;
        *) pw_fail "link_step: unknown step '$step'" ;;
    esac
    "${PW_LINK_DRIVER:-vsimctl}" port "$dev" 1 state="$state"
}

# osm_start_plugin CONF [NAME=value ...]: opensm with libportwatch.so found
# through LD_LIBRARY_PATH and the verbs simulator preloaded after umad2sim.
osm_start_plugin() {
    local conf=$1; shift
    local PW_OSM_SANITIZE=${PW_SANITIZER_PRELOAD:+1}
    osm_start "$conf" \
        LD_PRELOAD="$PW_VSIM_LIB" \
        LD_LIBRARY_PATH="$PW_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        VSIM_CONFIG="$PW_VSIM_CONFIG" VSIM_SOCKET="$PW_VSIM_SOCKET" "$@"
}

pw_diag_hook() {
    if [ -n "${PW_VSIM_CONFIG:-}" ] && [ -f "$PW_VSIM_CONFIG" ]; then
        echo "--- verbs simulator config ($PW_VSIM_CONFIG):"
        cat "$PW_VSIM_CONFIG"
        echo "--- last vsimctl reply: ${PW_VSIM_REPLY:-}"
    fi
}

# ------------------------------------------------------------------ loopback servers
# The monitoring tests' servers (node_exporter.sh, alerting.sh).
#   pw_serve NAME LOG READY_RE TIMEOUT_S CMD...   CMD with
#                   --web.listen-address on a free loopback port, its output
#                   in LOG, until READY_RE is in LOG (tried up to 5 times on
#                   other ports); PW_SERVE_PID, PW_SERVE_PORT
#   pw_http_get PORT PATH   GET over HTTP/1.0 (no process started): the body
#                   without the headers in PW_HTTP_BODY
pw_serve() {
    local name=$1 log=$2 ready=$3 tmo=$4 try
    shift 4
    for try in 1 2 3 4 5; do
        PW_SERVE_PORT=$(( 20000 + (RANDOM % 20000) ))
        "$@" --web.listen-address="127.0.0.1:$PW_SERVE_PORT" >"$log" 2>&1 &
        PW_SERVE_PID=$!
        if wait_log_soft "$log" "$ready" "$tmo"; then return 0; fi
        kill "$PW_SERVE_PID" 2>/dev/null; wait "$PW_SERVE_PID" 2>/dev/null || true
        PW_SERVE_PID=
        [ "$try" = 5 ] && { tail -n 20 "$log"; pw_fail "$name did not start"; }
    done
}

pw_http_get() {
    local fd
    exec {fd}<>"/dev/tcp/127.0.0.1/$1" || pw_fail "cannot connect to 127.0.0.1:$1"
    printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&"$fd"
    PW_HTTP_BODY=$(tr -d '\r' <&"$fd" | sed '1,/^$/d')
    exec {fd}>&-
}

# ------------------------------------------------------------------ a supervisor, as systemd
# The restart policy the packages ship (systemd/portwatch-restart.conf),
# played by the test the way systemd applies it to opensm's unit: read from
# the shipped file itself, so the tests follow what is installed.
#   sup_init                   read the policy; no starts counted yet
#   sup_start CONF [ARGS...]   start opensm with the plugin (osm_start_plugin)
#                              unless the start limit refuses it: then log
#                              systemd's message and return 1
#   sup_wait_exit BOUND_S      wait until opensm exits on its own (fails the
#                              test after BOUND_S); PW_OSM_RC, PW_SUP_EXIT_US
#   sup_restart CONF [ARGS...] what Restart= does after that exit: wait
#                              RestartSec, then sup_start
sup_init() {
    local f=$PW_SRCDIR/systemd/portwatch-restart.conf iv
    pw_need_file "$f" "the systemd drop-in is part of the source tree"
    PW_SUP_RESTART=$(sed -n 's/^Restart=//p' "$f")
    PW_SUP_RESTART_SEC=$(sed -n 's/^RestartSec=\([0-9]*\)s$/\1/p' "$f")
    PW_SUP_BURST=$(sed -n 's/^StartLimitBurst=//p' "$f")
    iv=$(sed -n 's/^StartLimitIntervalSec=//p' "$f")
    case $iv in
        *min) PW_SUP_INTERVAL_S=$(( ${iv%min} * 60 )) ;;
        *s) PW_SUP_INTERVAL_S=${iv%s} ;;
        *) PW_SUP_INTERVAL_S=$iv ;;
    esac
    [ "$PW_SUP_RESTART" = always ] && [ -n "$PW_SUP_RESTART_SEC" ] && [ -n "$PW_SUP_BURST" ] \
        && [ -n "$PW_SUP_INTERVAL_S" ] \
        || pw_fail "cannot read the restart policy of $f (Restart=$PW_SUP_RESTART RestartSec=$PW_SUP_RESTART_SEC StartLimitBurst=$PW_SUP_BURST StartLimitIntervalSec=$iv)"
    PW_SUP_STARTS=()
    PW_SUP_REFUSED=
    pw_log "supervisor: Restart=$PW_SUP_RESTART RestartSec=${PW_SUP_RESTART_SEC}s StartLimitBurst=$PW_SUP_BURST StartLimitIntervalSec=${PW_SUP_INTERVAL_S}s"
}

sup_start() {
    local now t
    local -a kept=()
    now=$(pw_now_us)
    for t in "${PW_SUP_STARTS[@]}"; do
        [ $(( now - t )) -lt $(( PW_SUP_INTERVAL_S * 1000000 )) ] && kept+=("$t")
    done
    PW_SUP_STARTS=("${kept[@]}")
    if [ "${#PW_SUP_STARTS[@]}" -ge "$PW_SUP_BURST" ]; then
        PW_SUP_REFUSED="opensm: Start request repeated too quickly (${#PW_SUP_STARTS[@]} starts within ${PW_SUP_INTERVAL_S} s, StartLimitBurst=$PW_SUP_BURST). Failed with result 'start-limit-hit'."
        pw_log "supervisor: $PW_SUP_REFUSED"
        return 1
    fi
    PW_SUP_STARTS+=("$now")
    osm_start_plugin "$@"
    pw_log "supervisor: start ${#PW_SUP_STARTS[@]} within the limit's interval"
}

sup_wait_exit() {
    osm__wait_gone "$1" "opensm (pid $PW_OSM_PID) did not exit within $1 s"
    PW_SUP_EXIT_US=$(pw_now_us)
    osm__reap "supervisor: opensm (pid $PW_OSM_PID) exited with status %s"
}

sup_restart() {
    pw_sleep "$PW_SUP_RESTART_SEC"   # RestartSec: systemd's own delay
    sup_start "$@"
}

# ------------------------------------------------------------ several opensm
# The harness keeps one opensm "current" (PW_OSM_PID, PW_OSM_LOG, ...). A
# test running several saves each under a name and swaps it in when needed:
#   osm_slot_save NAME     keep the current instance's variables as NAME
#   osm_slot_use NAME      make NAME current again
#   osm_slot_get NAME VAR  one of NAME's variables (its PW_OSM_LOG, say)
#   osm_slots_stop         in pw_cleanup_hook: stop the saved instances that
#                          are not current (the harness stops that one)
declare -A PW_SLOTS=()
PW_SLOT_VARS=(PW_OSM_PID PW_OSM_WRAP_PID PW_OSM_DIR PW_OSM_LOG PW_OSM_OUT PW_OSM_RC
    PW_OSM_START_US PW_OSM_STOP_MS PW_OSM_HOST PW_VSIM_DEV PW_VSIM_CONFIG PW_VSIM_SOCKET)
PW_SLOT_NAMES=()
osm_slot_save() {
    local v
    for v in "${PW_SLOT_VARS[@]}"; do PW_SLOTS[$1.$v]=${!v:-}; done
    case " ${PW_SLOT_NAMES[*]} " in *" $1 "*) ;; *) PW_SLOT_NAMES+=("$1") ;; esac
}
osm_slot_use() {
    local v
    for v in "${PW_SLOT_VARS[@]}"; do printf -v "$v" '%s' "${PW_SLOTS[$1.$v]:-}"; done
}
osm_slot_get() {
    printf '%s' "${PW_SLOTS[$1.$2]:-}"
}
osm_slots_stop() {
    local t pid i
    for t in "${PW_SLOT_NAMES[@]}"; do
        pid=${PW_SLOTS[$t.PW_OSM_PID]:-}
        [ -n "$pid" ] && [ "$pid" != "${PW_OSM_PID:-}" ] || continue
        kill -TERM "$pid" 2>/dev/null
        for i in $(seq 60); do pw_pid_running "$pid" || break; pw_sleep 0.05; done
        pw_pid_running "$pid" && kill -KILL "$pid" 2>/dev/null
    done
    return 0
}
