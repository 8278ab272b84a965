#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The whole benchmark suite in one run (make bench). Prints numbers and writes
# docs/BENCHMARKS.md and docs/benchmarks-reaction.png; it is not a test and
# never fails on a timing.
#
# Phases, each run to completion before the next:
#   A  reaction time, stock against portwatch: A1 in parallel: stock opensm
#      at sweep_interval 10 (several independent ibsim+opensm pairs, each
#      bounce at a random point of the sweep timer), stock at sweep_interval
#      0, and the idle cost (60 s, opensm with and without the plugin); then
#      A2 alone: portwatch at sweep_interval 0 (100 bounces, and 50 more at
#      opensm's default log_flags);
#   B  in-process (the core, the verbs simulator, a recording host): event ->
#      sweep request latency and the poll() wake-up floor, flap storm (three
#      times), destroy with events pending, per-event cost with 1/4/16
#      devices; then the flap storm inside opensm;
#   C  scale in opensm: 1/4/16 simulated devices x 2 ports, and fat-tree
#      fabrics of 64 and 512 HCAs.
# Raw data go to bench/results/ in the build tree (BENCH_RESULTS overrides).
#
# Knobs (environment), for quick trial runs; the defaults are what
# docs/BENCHMARKS.md reports: BENCH_PW_BOUNCES (100), BENCH_PW03_BOUNCES (50),
# BENCH_STOCK_PAIRS (12),
# BENCH_STOCK_BOUNCES (9 per pair), BENCH_IDLE_S (60), BENCH_EVENTS (10000),
# BENCH_CYCLES (1000), BENCH_SCALE_BOUNCES (30), BENCH_FABRIC_BOUNCES (20),
# BENCH_NO_DOC=1 (leave docs/ alone).
set -uo pipefail
: "${abs_top_srcdir:?run through make bench}" "${abs_top_builddir:?run through make bench}"
export abs_top_srcdir abs_top_builddir
SRC=$abs_top_srcdir
BUILD=$abs_top_builddir
R=${BENCH_RESULTS:-$BUILD/bench/results}
PW_BOUNCES=${BENCH_PW_BOUNCES:-100}
PW03_BOUNCES=${BENCH_PW03_BOUNCES:-50}
STOCK_PAIRS=${BENCH_STOCK_PAIRS:-12}
STOCK_BOUNCES=${BENCH_STOCK_BOUNCES:-9}
IDLE_S=${BENCH_IDLE_S:-60}
EVENTS=${BENCH_EVENTS:-10000}
CYCLES=${BENCH_CYCLES:-1000}
SCALE_BOUNCES=${BENCH_SCALE_BOUNCES:-30}
FABRIC_BOUNCES=${BENCH_FABRIC_BOUNCES:-20}

# Long runs: the harness's per-process limits are generous but finite.
export PW_OSM_MAX_S=1200 PW_SIM_MAX_S=1200

t_begin=$(date +%s)
say() { printf '[bench %4ds] %s\n' $(( $(date +%s) - t_begin )) "$*"; }

missing=
for cmd in python3 gnuplot ibsim opensm; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=" $cmd"
done
if [ -n "$missing" ]; then
    echo "bench: missing:$missing" >&2
    echo "bench: run make bench (it installs what bench/packages lists) or install the Debian packages named there" >&2
    exit 1
fi

rm -rf "$R"
mkdir -p "$R/logs" "$R/reaction" "$R/idle" "$R/inproc" "$R/scale" "$R/nets"

{
    echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "cores=$(nproc)"
    echo "kernel=$(uname -sr)"
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "opensm=$(strings /usr/sbin/opensm 2>/dev/null | grep -m1 '^OpenSM [0-9]' || echo '?')"
    echo "ibsim=$(dpkg-query -W -f='${Version}' ibsim-utils 2>/dev/null || echo '?')"
    echo "commit=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?')"
} >"$R/machine"

failed=()
# job NAME COMMAND...: run in the background, output to logs/NAME.out.
declare -A JOBS=()
job() {
    local name=$1; shift
    "$@" >"$R/logs/$name.out" 2>&1 &
    JOBS[$!]=$name
}
wait_jobs() {
    local pid
    for pid in "${!JOBS[@]}"; do
        if ! wait "$pid"; then
            failed+=("${JOBS[$pid]}")
            say "FAILED: ${JOBS[$pid]} (see $R/logs/${JOBS[$pid]}.out)"
        fi
    done
    JOBS=()
}
run() {   # run NAME COMMAND...: in the foreground
    local name=$1; shift
    if ! "$@" >"$R/logs/$name.out" 2>&1; then
        failed+=("$name")
        say "FAILED: $name (see $R/logs/$name.out)"
    fi
}

BOUNCE=$SRC/bench/bounce.sh
# ------------------------------------------------------------------ phase A
say "phase A1: stock reaction time (x$STOCK_PAIRS pairs at sweep_interval 10, one at 0) and idle cost (${IDLE_S} s), in parallel"
for i in $(seq -w 1 "$STOCK_PAIRS"); do
    job "stock10-$i" env BENCH_MODE=stock BENCH_SWEEP=10 BENCH_BOUNCES="$STOCK_BOUNCES" \
        BENCH_PHASE=1 BENCH_TIMEOUT_S=25 BENCH_WATCH_US=20000 bash "$BOUNCE" "$R/reaction/stock10-$i"
done
job stock0 env BENCH_MODE=stock BENCH_SWEEP=0 BENCH_BOUNCES=3 BENCH_TIMEOUT_S=10 \
    BENCH_WATCH_US=20000 bash "$BOUNCE" "$R/reaction/stock0"
for v in stock vsim plugin plugin-real; do
    job "idle-$v" bash "$SRC/bench/idle.sh" "$R/idle/$v" "$v" "$IDLE_S"
done
wait_jobs
echo "load_after_a1=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$R/machine"
# Alone: its milliseconds would otherwise measure the stock pairs' load.
say "phase A2: portwatch reaction time ($PW_BOUNCES bounces; then $PW03_BOUNCES at opensm's default log_flags)"
run portwatch env BENCH_MODE=portwatch BENCH_SWEEP=0 BENCH_BOUNCES="$PW_BOUNCES" \
    BENCH_TIMEOUT_S=5 bash "$BOUNCE" "$R/reaction/portwatch"
run portwatch-0x03 env BENCH_MODE=portwatch BENCH_SWEEP=0 BENCH_BOUNCES="$PW03_BOUNCES" \
    BENCH_LOG_FLAGS=0x03 BENCH_TIMEOUT_S=5 bash "$BOUNCE" "$R/reaction/portwatch-0x03"
echo "load_after_a2=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$R/machine"

# ------------------------------------------------------------------ phase B
say "phase B: in-process (latency with its floor, storm, destroy, per-device cost)"
INPROC=("$SRC/tests/with-vsim" "$BUILD/bench/bench_inproc")
inproc() {   # inproc NAME ARGS...: stdout (the numbers) to inproc/NAME.txt
    local name=$1; shift
    if ! "${INPROC[@]}" "$@" >"$R/inproc/$name.txt" 2>"$R/logs/inproc-$name.out"; then
        failed+=("inproc-$name")
        say "FAILED: inproc $name (see $R/logs/inproc-$name.out)"
    fi
}
inproc latency latency "$EVENTS" "$R/inproc/latency_"
for i in 1 2 3; do   # three times: CPU time is what a busy machine bends most
    inproc "storm_$i" storm "$EVENTS" 10 100 "$R/inproc/storm_${i}_"
done
inproc destroy destroy "$CYCLES" 200 "$R/inproc/destroy_samples.txt"
for d in 1 4 16; do
    inproc "scale_$d" scale "$d" 500 "$R/inproc/scale_${d}_samples.txt"
done

say "phase B2: flap storm inside opensm"
run storm-osm bash "$SRC/bench/storm_osm.sh" "$R/storm-osm" "$EVENTS" 10
run storm-osm-metrics env BENCH_METRICS=1 bash "$SRC/bench/storm_osm.sh" "$R/storm-osm-metrics" "$EVENTS" 10

# ------------------------------------------------------------------ phase C
say "phase C: scale in opensm (devices x ports, fabric size)"
for d in 1 4 16; do
    run "scale-dev$d" env BENCH_MODE=portwatch BENCH_SWEEP=0 BENCH_BOUNCES="$SCALE_BOUNCES" \
        BENCH_DEVICES="$d" BENCH_PORTS=2 BENCH_TIMEOUT_S=5 bash "$BOUNCE" "$R/scale/dev$d-hca4"
done
bash "$SRC/bench/fattree.sh" 8 8 4 >"$R/nets/fattree-64.net"
bash "$SRC/bench/fattree.sh" 32 16 16 >"$R/nets/fattree-512.net"
for spec in "64 1" "512 1" "512 16"; do
    # shellcheck disable=SC2086  # SPEC is "A B C": split on purpose
    set -- $spec
    run "scale-fabric$1-dev$2" env BENCH_MODE=portwatch BENCH_SWEEP=0 BENCH_BOUNCES="$FABRIC_BOUNCES" \
        BENCH_NET="$R/nets/fattree-$1.net" BENCH_DEVICES="$2" BENCH_PORTS=2 BENCH_TIMEOUT_S=20 \
        BENCH_SETTLE_S=0.5 bash "$BOUNCE" "$R/scale/dev$2-hca$1"
done

# ------------------------------------------------------------------ report
say "report"
cmd="make bench"
if [ "${BENCH_NO_DOC:-0}" = 1 ]; then
    doc=$R/BENCHMARKS.md png=$R/benchmarks-reaction.png
else
    doc=$SRC/docs/BENCHMARKS.md png=$SRC/docs/benchmarks-reaction.png
fi
echo "wall_s=$(( $(date +%s) - t_begin ))" >>"$R/machine"
echo "failed=${failed[*]}" >>"$R/machine"
if ! python3 "$SRC/bench/report.py" "$R" "$doc" "$png" "$cmd"; then
    say "report.py failed"
    exit 1
fi
say "wrote $doc and $png"
if [ ${#failed[@]} -gt 0 ]; then
    say "some benchmark runs failed: ${failed[*]} (their numbers are missing from the report)"
    exit 1
fi
exit 0
