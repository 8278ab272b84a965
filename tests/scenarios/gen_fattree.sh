#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# gen_fattree.sh [LEAVES [SPINES [HOSTS_PER_LEAF [LINKS_PER_PAIR [PORTS]]]]]
# Prints an ibsim net file: a two-level fat tree of 36-port switches.
#   Leaf1..LeafL: hosts on ports 1..H, uplinks on the next S*K ports
#                 (K links to each spine), the remaining ports free;
#   Spine1..SpineS: leaf i, link k on port (i-1)*K+k;
#   Hca1..Hca(L*H): 2-port HCAs, port 1 cabled (Hca1 on Leaf1[1] is the SM).
# Hca records come first so that ibsim gives Hca1 the same GUIDs as in its
# example fabrics (node 0x100000, port 1 0x100001).
# Default 16 leaves x 16 hosts = 256 HCAs, 8 spines, 2 links per pair:
# 280 nodes, ports 33..36 of every leaf free. ibsim 0.10 allows 2048 nodes,
# 256 switches and 13312 ports by default.
set -euo pipefail
L=${1:-16} S=${2:-8} H=${3:-16} K=${4:-2} P=${5:-36}
if [ $(( H + S * K )) -gt "$P" ] || [ $(( L * K )) -gt "$P" ]; then
    echo "gen_fattree: $H hosts + $S x $K uplinks or $L x $K leaf links exceed $P ports" >&2
    exit 1
fi
awk -v L="$L" -v S="$S" -v H="$H" -v K="$K" -v P="$P" 'BEGIN {
    printf "# Two-level fat tree: %d leaves x %d HCAs, %d spines, %d links per leaf-spine pair\n\n", L, H, S, K
    for (l = 1; l <= L; l++)
        for (h = 1; h <= H; h++) {
            n = (l - 1) * H + h
            printf "Hca\t2 \"Hca%d\"\n[1]\t\"Leaf%d\"[%d]\n\n", n, l, h
        }
    for (l = 1; l <= L; l++) {
        printf "Switch\t%d \"Leaf%d\"\n", P, l
        for (h = 1; h <= H; h++)
            printf "[%d]\t\"Hca%d\"[1]\n", h, (l - 1) * H + h
        for (s = 1; s <= S; s++)
            for (k = 1; k <= K; k++)
                printf "[%d]\t\"Spine%d\"[%d]\n", H + (s - 1) * K + k, s, (l - 1) * K + k
        printf "\n"
    }
    for (s = 1; s <= S; s++) {
        printf "Switch\t%d \"Spine%d\"\n", P, s
        for (l = 1; l <= L; l++)
            for (k = 1; k <= K; k++)
                printf "[%d]\t\"Leaf%d\"[%d]\n", (l - 1) * K + k, l, H + (s - 1) * K + k
        printf "\n"
    }
}'
