#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The licence is stated everywhere a redistributor looks for it: COPYING
# with both texts (GPL-2.0 or the OpenIB.org BSD licence, as OpenSM and
# rdma-core), a machine-readable debian/copyright naming the same choice, and
# an SPDX line in the first five lines of every source file of the project
# (code, headers, scripts, build files, linker scripts, suppressions, man
# pages). Works in a git checkout (the tracked and new files) and in an
# unpacked release tarball (every file but generated ones).
set -euo pipefail
src=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src"
spdx='SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB'
problems=0
problem() { echo "test_licence: $*"; problems=$((problems + 1)); }

# ---- COPYING: both texts and the choice between them
if [ -f COPYING ]; then
    for want in 'GPL-2.0-only OR Linux-OpenIB' 'OpenIB.org BSD license' \
                'GNU GENERAL PUBLIC LICENSE' 'Version 2, June 1991' \
                'Redistributions in binary form must reproduce the above'; do
        grep -qF "$want" COPYING || problem "COPYING lacks '$want'"
    done
else
    problem "no COPYING file"
fi

# ---- debian/copyright: DEP-5, the same dual licence, each text stand-alone
c=debian/copyright
if [ -f "$c" ]; then
    [ "$(head -n 1 "$c")" = 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ] \
        || problem "$c is not machine-readable (DEP-5 Format: line)"
    grep -qx 'License: GPL-2 or Linux-OpenIB' "$c" || problem "$c: Files: * is not 'License: GPL-2 or Linux-OpenIB'"
    grep -qx 'License: GPL-2' "$c" || problem "$c: no stand-alone 'License: GPL-2' paragraph"
    grep -qx 'License: Linux-OpenIB' "$c" || problem "$c: no stand-alone 'License: Linux-OpenIB' paragraph"
    grep -qi 'rights are reserved' "$c" && problem "$c still reserves all rights"
else
    problem "no $c"
fi

# ---- every source file carries the SPDX line
# A git checkout only if $src is its top: a copy of the sources inside
# another checkout's ignored build directory lists nothing there.
if [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
    mapfile -t files < <(git -C "$src" ls-files -co --exclude-standard)
else
    # A release tarball, possibly configured and built in place: leave out
    # what autotools, the build and the Debian build generate.
    mapfile -t files < <(find . -type f \
        -not -path './build-aux/*' -not -path './m4/*' -not -path './_build/*' \
        -not -path './autom4te.cache/*' -not -path '*/.libs/*' -not -path '*/.deps/*' \
        -not -path './debian/*/*' -not -path './debian/.debhelper/*' -not -path './.pc/*' | sed 's|^\./||')
fi
checked=0
for f in "${files[@]}"; do
    case $f in
        *.c|*.h|*.cpp|*.hpp|*.sh|*.py|*.mk|*.map|*.supp|*.8) ;;
        Makefile.am|configure.ac|debian/rules|scripts/*|bench/packages|bench/require-packages) ;;
        tests/with-vsim|tests/timed|tests/vm/build-image|.ci/run) ;;
        *) continue ;;
    esac
    [ -f "$f" ] || continue
    checked=$((checked + 1))
    head -n 5 "$f" | grep -qF "$spdx" || problem "$f: no '$spdx' in its first 5 lines"
done
[ "$checked" -ge 100 ] || problem "only $checked source files found under $src (expected 100 or more)"

if [ "$problems" -gt 0 ]; then
    echo "FAIL: test_licence: $problems problem(s)"
    exit 1
fi
echo "PASS: test_licence: COPYING and debian/copyright state GPL-2.0-only OR Linux-OpenIB; $checked source files carry the SPDX line"
