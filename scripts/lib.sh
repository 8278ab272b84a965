# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# shellcheck shell=bash
# scripts/lib.sh - sourced by scripts/check, scripts/demo, scripts/scenarios
# and the check passes that build from a snapshot of the sources.
#
# pw_ensure_packages NAME: the Debian packages listed in scripts/packages
# (for NAME=demo only those above its "scripts/check only" line) that are
# not installed are installed when running as root (named before,
# and with no service started meanwhile: opensm's would run a subnet manager
# on the host's real ports); otherwise NAME prints the apt-get line to run
# and the function returns 1.
pw_ensure_packages() {
    local name=$1 list pkg
    list=$(dirname "${BASH_SOURCE[0]}")/packages
    local -a missing=()
    while read -r pkg; do
        # The demo needs only what it builds and runs; the rest is for the tests.
        [ "$name" = demo ] && [ "$pkg" = "# scripts/check only:" ] && break
        case "$pkg" in ''|'#'*) continue ;; esac
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$pkg")
        fi
    done <"$list"
    [ ${#missing[@]} -gt 0 ] || return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "$name: missing Debian packages; install them with:" >&2
        echo "  sudo apt-get install -y ${missing[*]}" >&2
        return 1
    fi
    echo "$name: installing the Debian packages ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    local guard='' rc=0
    # Packages whose service would start on install: opensm runs a subnet
    # manager on every InfiniBand port of the host, prometheus and
    # prometheus-node-exporter listen on the network. Installed here for the
    # tests, not by the admin: they neither start now (policy-rc.d, exit 101,
    # keeps maintainer scripts from starting services) nor at the next boot.
    local services='' svc
    for svc in opensm prometheus prometheus-node-exporter; do
        printf '%s\n' "${missing[@]}" | grep -qx "$svc" && services+=" $svc"
    done
    services=${services# }
    if [ -n "$services" ]; then
        if [[ " $services " == *" opensm "* ]]; then
            echo "$name: note: the opensm package's service would start a subnet manager on every"
            echo "$name:   InfiniBand port of this host."
        fi
        echo "$name: the services of $services will not be started, now or at boot"
        if [ ! -e /usr/sbin/policy-rc.d ]; then
            guard=/usr/sbin/policy-rc.d
            printf '#!/bin/sh\n# %s: no service starts while it installs packages\nexit 101\n' "$name" >"$guard"
            chmod 755 "$guard"
        fi
    fi
    { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } || rc=$?
    [ -z "$guard" ] || rm -f "$guard"
    if [ "$rc" = 0 ] && [ -n "$services" ]; then
        for svc in $services; do
            deb-systemd-helper disable "$svc.service" >/dev/null 2>&1 || true
            update-rc.d "$svc" disable >/dev/null 2>&1 || true
        done
        echo "$name: disabled at boot: $services ('systemctl enable NAME' to run one)"
    fi
    return "$rc"
}

# pw_build_if_needed TOP BUILD NAME: make sure BUILD holds libportwatch.so
# and the check-only verbs simulator (libvsim.so, vsimctl), newer than the
# sources they are built from; otherwise autoreconf (if there is no
# configure), configure (if there is no Makefile), make, and make the
# simulator targets. The output goes to a log file shown only on failure.
# The build runs in its own process group, stopped with it on INT/TERM.
pw_build_if_needed() {
    local top=$1 build=$2 name=$3 stale='' log pid rc=0
    pw__newer() {   # ARTIFACT DIR...: a source in DIR... is newer than ARTIFACT
        local f=$1; shift
        [ ! -e "$f" ] || [ -n "$(find "$@" -newer "$f" \( -name '*.c' -o -name '*.cpp' -o -name '*.h' \
            -o -name '*.hpp' -o -name '*.map' \) ! -name 'test_*' -print -quit)" ]
    }
    pw__newer "$build/plugin/.libs/libportwatch.so" "$top/plugin" "$top/include" && stale=1
    pw__newer "$build/tests/verbs_sim/.libs/libvsim.so" "$top/tests/verbs_sim" && stale=1
    pw__newer "$build/tests/verbs_sim/vsimctl" "$top/tests/verbs_sim" && stale=1
    [ -n "$stale" ] || return 0
    echo "$name: building portwatch (autoreconf, configure, make; about a minute) ..."
    log=$(mktemp "${TMPDIR:-/tmp}/portwatch-build.XXXXXX")
    # shellcheck disable=SC2016  # expanded by the inner bash
    setsid bash -c '
        set -e
        top=$1 build=$2
        cd "$build"
        jobs=$(nproc 2>/dev/null || echo 2)
        if [ ! -f Makefile ]; then
            [ -x "$top/configure" ] || (cd "$top" && autoreconf -fi)
            "$top/configure"
        fi
        make -j"$jobs"
        make -j"$jobs" tests/verbs_sim/libvsim.la tests/verbs_sim/vsimctl
    ' _ "$top" "$build" >"$log" 2>&1 </dev/null &
    pid=$!
    trap 'kill -TERM -- -'"$pid"' 2>/dev/null; echo "$name: build interrupted" >&2; exit 130' INT TERM
    wait "$pid" || rc=$?
    trap - INT TERM
    if [ "$rc" != 0 ]; then
        echo "$name: build failed; the last lines of $log:" >&2
        tail -n 25 "$log" >&2
        return 1
    fi
    rm -f "$log"
}

# pw_snapshot_source TOP DIR: DIR (emptied first) gets TOP's sources as they
# are now. From a git work tree whose top is TOP: the files git tracks that
# are still there and the new ones it does not ignore, so uncommitted
# changes are in and build output is not. Elsewhere (an unpacked release
# tarball, as make distcheck has it): all of TOP but version control and
# autom4te.cache. For builds outside a source tree that is itself configured
# (it cannot host VPATH builds). Sets PW_SNAPSHOT_FROM to say which.
pw_snapshot_source() {
    local top=$1 dir=$2 git_top
    rm -rf "$dir"
    mkdir -p "$dir"
    git_top=$(git -C "$top" rev-parse --show-toplevel 2>/dev/null || true)
    if [ -n "$git_top" ] && [ "$(cd "$git_top" && pwd -P)" = "$(cd "$top" && pwd -P)" ]; then
        ( cd "$top" && git ls-files -z -c -o --exclude-standard \
            | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
            | tar --null -T - -cf - ) | tar -xf - -C "$dir"
        PW_SNAPSHOT_FROM="git work tree"
    else
        tar -C "$top" --exclude-vcs --exclude=autom4te.cache -cf - . | tar -xf - -C "$dir"
        chmod -R u+w "$dir"
        PW_SNAPSHOT_FROM="source tree"
    fi
}

# pw_test_jobs: how many tests make check runs side by side (make -jN
# check): PW_TEST_JOBS, else twice the number of cores. Most tests wait on
# opensm's sweeps and the plugin's timers, not on the CPU (scripts/test-times
# shows each test's wall and CPU time), and each has its own work dir, ibsim
# socket and simulator socket.
pw_test_jobs() {
    echo "${PW_TEST_JOBS:-$(( 2 * $(nproc 2>/dev/null || echo 2) ))}"
}

# pw_check_build_flags: the compiler flags the check's own builds of the
# plugin and its tests configure with (scripts/check's build and distcheck,
# the OpenSM-version and clang builds), one VAR=VALUE per line: -O2 without
# -g, for CFLAGS and CXXFLAGS that the environment does not set. -g changes
# nothing GCC generates, only what a debugger sees, and without it a build
# takes about a quarter less CPU (the check programs: 155 CPU-s with -g,
# 117 without; the plugin: 46 and 38). The packages build with their own
# flags.
pw_check_build_flags() {
    [ -n "${CFLAGS+set}" ] || echo CFLAGS=-O2
    [ -n "${CXXFLAGS+set}" ] || echo CXXFLAGS=-O2
}

# pw_copy_autotools_output TOP DIR: if TOP holds a configure newer than its
# inputs (configure.ac, m4/*.m4) and a Makefile.in newer than its own
# (Makefile.am, the *.mk files), copy them with aclocal.m4, build-aux/ and
# m4/ into DIR (a copy of TOP's sources from pw_snapshot_source) and return
# 0; else return 1, and the caller runs autoreconf in DIR. An autoreconf
# costs about a minute of CPU; the output it would write is the one TOP has.
pw_copy_autotools_output() {
    local top=$1 dir=$2
    [ -f "$top/configure" ] && [ -f "$top/Makefile.in" ] || return 1
    if [ -n "$(find "$top/configure.ac" "$top/m4" -newer "$top/configure" -print -quit 2>/dev/null)" ] ||
        [ -n "$(find "$top" \( -path "$top/_build" -o -path "$top/.git" \) -prune \
            -o \( -name Makefile.am -o -name '*.mk' \) -newer "$top/Makefile.in" -print -quit)" ]; then
        return 1
    fi
    local ins
    ins=$(cd "$top" && find . \( -path ./_build -o -path ./.git \) -prune -o -name Makefile.in -print)
    # shellcheck disable=SC2086  # Makefile.in paths have no blanks
    (cd "$top" && tar -cf - configure aclocal.m4 build-aux m4 $ins) | tar -xf - -C "$dir"
    # The copy's sources are newer than TOP's output (they were copied
    # later): without new times, make would run aclocal, automake, autoconf
    # and configure again (as much CPU as the autoreconf saved). Each touch
    # comes after the one before, so m4/ <= aclocal.m4 <= configure,
    # Makefile.in, and all of them >= the sources copied before.
    # shellcheck disable=SC2086
    (cd "$dir" && touch m4/* build-aux/* && touch aclocal.m4 && touch configure $ins)
}

# pw_osm_version FILE: the first "OpenSM X.Y.Z" string in FILE (an opensm
# executable or a plugin built for one), empty if none. awk reads all of
# strings' output, so no SIGPIPE fails the pipeline under pipefail.
pw_osm_version() {
    strings "$1" 2>/dev/null | awk '/^OpenSM [0-9]/ && !found { print; found = 1 }'
}
