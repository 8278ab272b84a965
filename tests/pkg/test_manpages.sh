#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The man pages (docs/*.8): render without a warning, carry the package
# version, and still match the code they describe.
#
#   bash tests/pkg/test_manpages.sh
#
# For each page:
#   - groff -ww -man -z prints nothing and succeeds (every groff warning on);
#   - man --warnings -l renders it (UTF-8, 80 columns, as lintian checks man
#     pages) with nothing on stderr, and the text has NAME and DESCRIPTION;
#   - its .TH line names "portwatch VERSION" with configure.ac's version.
# Against the code:
#   - every key of plugin/options.cpp and its range appear in portwatch.8 and
#     in portwatch-conf --help;
#   - every log line portwatch.8 documents exists in plugin/*.cpp.
# Needs the Debian packages groff-base and man-db; no root.
set -uo pipefail
NAME=test_manpages
here=$(cd "$(dirname "$0")" && pwd)
srcdir=${abs_top_srcdir:-$(cd "$here/../.." && pwd)}
fail() { echo "FAIL: $NAME: $*"; exit 1; }
command -v groff >/dev/null || fail "groff not found: install the Debian package groff-base"
command -v man >/dev/null || fail "man not found: install the Debian package man-db"

version=$(sed -n 's/^AC_INIT(\[portwatch\], *\[\([^]]*\)\].*/\1/p' "$srcdir/configure.ac")
[ -n "$version" ] || fail "cannot read the version from configure.ac"

W=$(mktemp -d "${TMPDIR:-/tmp}/pw-man.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$W"' EXIT

pages=("$srcdir"/docs/*.8)
[ -e "${pages[0]}" ] || fail "no man pages in $srcdir/docs"
checks=0
for page in "${pages[@]}"; do
    base=$(basename "$page")
    groff -ww -man -z "$page" >"$W/groff.out" 2>&1 || fail "$base: groff failed: $(cat "$W/groff.out")"
    [ ! -s "$W/groff.out" ] || fail "$base: groff warnings:"$'\n'"$(cat "$W/groff.out")"
    LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" \
        >/dev/null 2>"$W/man.err" || fail "$base: man -l failed: $(cat "$W/man.err")"
    [ ! -s "$W/man.err" ] || fail "$base: man --warnings:"$'\n'"$(cat "$W/man.err")"
    LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$page" >"$W/$base.txt" 2>"$W/man.err" || fail "$base: man -l failed"
    [ ! -s "$W/man.err" ] || fail "$base: man -l printed:"$'\n'"$(cat "$W/man.err")"
    grep -q '^NAME' "$W/$base.txt" && grep -q '^DESCRIPTION' "$W/$base.txt" \
        || fail "$base: rendered text has no NAME or DESCRIPTION section"
    grep -q "^\.TH .*\"portwatch $version\"" "$page" \
        || fail "$base: .TH does not name \"portwatch $version\" (configure.ac): $(grep '^\.TH' "$page")"
    checks=$(( checks + 5 ))
done

# The rendered text as one line per paragraph-ish: join wrapped lines so that
# phrases broken across lines still match.
flat() { tr -s ' \n' ' ' <"$1" | sed 's/\xe2\x80\x90 //g; s/- \([a-z]\)/-\1/g'; }
man_text=$(flat "$W/portwatch.8.txt")
help_text=$("$srcdir/scripts/portwatch-conf" --help) || fail "portwatch-conf --help failed"

# Keys and ranges of plugin/options.cpp.
opts=$srcdir/plugin/options.cpp
keys=$(sed -n 's/.*key == "\([a-z_]*\)".*/\1/p' "$opts")
[ -n "$keys" ] || fail "no option keys found in plugin/options.cpp"
for k in $keys; do
    grep -qF "portwatch.$k=" <<<"$man_text" || fail "portwatch.8 does not document portwatch.$k"
    grep -qF "$k=" <<<"$help_text" || fail "portwatch-conf --help does not document $k"
    checks=$(( checks + 2 ))
done
# shellcheck disable=SC2013  # KNOWN_KEYS is one line of words
for k in $(sed -n 's/^KNOWN_KEYS="\(.*\)"/\1/p' "$srcdir/scripts/portwatch-conf"); do
    grep -qx "$k" <<<"$keys" || fail "portwatch-conf knows '$k', which plugin/options.cpp does not"
done
while read -r lo hi; do
    grep -qF "$lo..$hi" <<<"$man_text" || fail "portwatch.8 does not give the range $lo..$hi of plugin/options.cpp"
    grep -qF "$lo..$hi" <<<"$help_text" || fail "portwatch-conf --help does not give the range $lo..$hi"
    checks=$(( checks + 2 ))
done < <(sed -n 's/.*parse_millis(value, \([0-9]*\), \([0-9]*\),.*/\1 \2/p' "$opts")

# Log lines portwatch.8 documents, as fixed text that must be in the code.
code=$(cat "$srcdir"/plugin/*.cpp)
for frag in 'loaded (portwatch %s for %s): %s' '%s; plugin not loaded' 'opened verbs device %s (%u ports)' \
            '%s is %s (phys state %u, LID %u)' '%s came back with port GUID 0x%016llx (was 0x%016llx)' \
            '%s event %s: not a port event, ignored' '%s %s: not the watched port, ignored' \
            'watching %s (port GUID 0x%016llx, %s)' \
            "OpenSM's bound port" 'named by portwatch.port' \
            'is on no open verbs port; watching every ' 'InfiniBand port until it resolves' \
            '%s; retrying in %lld ms' \
            '" (the GID query of "' 'is gone with its verbs device; watching no other ' \
            '%s (%s) is not open yet' 'verbs device %s is back as %s (port GUID 0x%016llx)' \
            '%s is INIT %lld ms after the heavy sweep: %s (try %u of %u)%s%s [action=%s]' \
            '"heavy sweep requested again"' '%s is INIT after the heavy sweep (portwatch.verify_tries=0)' \
            '%s is still INIT after %u more heavy sweeps: the SM could not bring its port up' \
            '%s is ACTIVE again %.3f ms after the link came back' \
            'OpenSM has not chosen its port yet; watching every ' \
            '%s %s -> %s (%s): %s, %s%s%s [action=%s]' '"; SM is "' 'hold-off over: %s [action=%s]' \
            'telemetry: %s %.3f ms after the port event' 'OpenSM is exiting: sweep not requested' \
            'verbs device %s failed (%s): closed it, reopening in %lld ms' 'cannot open verbs device %s: %s' 'cannot list verbs devices: %s' \
            'warning: no usable verbs device' 'verbs device(s) %s not back; retrying in %lld ms' \
            'event thread: %s; carrying on in %lld ms' \
            'stopped: events=%lu transitions=%lu sweeps=%lu marks=%lu coalesced=%lu ' \
            '"ignored=%lu device_failures=%lu retries=%lu mad_path_dead=%lu"' \
            '%s is back after its device was lost: checking that OpenSM still receives SMPs ' \
            "OpenSM's MAD path works after the reset of %s: %u SMPs received" \
            "no heavy sweep since %s came back %lld ms ago: requesting one to check OpenSM's " \
            "ERROR: OpenSM's MAD path is dead since the reset of %s (port GUID 0x%016llx): " \
            "\"a heavy sweep started and not even the port's own HCA answered\"" \
            "\"OpenSM's sweeper started no heavy sweep\"" \
            '"Asking OpenSM to exit so that its service manager starts it again "' \
            '"(portwatch.on_device_reset=restart)"' \
            "\"watching OpenSM's umad file (fd %d) for the kernel's POLLERR\"" \
            "\"cannot watch OpenSM's umad file (fd %d: %s): after a device reset, OpenSM's \"" \
            "\"ERROR: the kernel reports OpenSM's umad file dead (POLLERR): its device was reset \"" \
            "\"OpenSM's ERROR lines are off from now on (its SYS lines go on)\"" \
            "\"the kernel reported OpenSM's umad file dead %lld ms ago, and OpenSM never \"" \
            '"a kernel timer ends opensm with SIGKILL should it still run %lld ms from now "' \
            '"the kernel added an RDMA device: looking for the missing "' \
            "\"cannot read the kernel's device uevents (%s): a returning device is found by the \"" \
            '"(portwatch.on_device_reset=log)"' \
            '"link lost"' '"link back"' '"SM configuring the port"' '"attributes changed"' '"no change"' \
            '"sweep"' '"mark"' '"defer"' '"none"' \
            '"HEAVY_SWEEP_START"' '"HEAVY_SWEEP_DONE"' '"SUBNET_UP"' \
            '"in the last %lld ms: %u link lost, %u link back, %u other lines; "' \
            '"sweeps requested %u, marks %u, deferred %u; %s is %s [last action=%s]"' \
            'cannot write metrics file %s: %s; trying again in %lld ms' 'metrics file %s written again' \
            '"storm over after %lld ms: %u link lost, %u link back and sweeps requested %u "' \
            '"in its summaries; %s is %s"'; do
    grep -qF -- "$frag" <<<"$code" || fail "portwatch.8 documents a log line the code no longer has: $frag"
    checks=$(( checks + 1 ))
done

echo "PASS: $NAME: ${#pages[@]} pages, $checks checks"
