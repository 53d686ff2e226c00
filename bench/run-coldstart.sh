#!/bin/sh
# Cold start of a program that builds several programs (apps/split: its kernels, then the
# variants its split launches build), at 1 rank and at N ranks of one node (RANKS, "4" by
# default), PoCL devices: each run from an empty kernel cache (cold) and then again with the
# cache it left (warm). The build cost is cold - warm; at N ranks it should stay near one
# rank's, since the ranks of a node compile each program once (runtime/job/build.c, "Turns
# of a build").
# Medians of ROUNDS runs (3 by default); prints the ratio of N ranks' build cost to one rank's.
# Usage: bench/run-coldstart.sh [rounds] [app]   (from the build directory; app: vecadd)
set -e
rounds=${1:-3}
app=${2:-vecadd}
top_builddir=${top_builddir:-$(pwd)}
export TUTTI_ICD="${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}"
export POCL_DEVICES="${POCL_DEVICES:-pthread}"
run="$top_builddir/tutti-run"
. "$(dirname "$0")/median.sh"
cache=$(mktemp -d "${TMPDIR:-/tmp}/tutti-coldstart.XXXXXX")
trap 'rm -rf "$cache"' EXIT

seconds() { # ranks: wall seconds of one run of the app with the kernel cache $cache
  t0=$(date +%s.%N)
  POCL_CACHE_DIR="$cache" "$run" -n "$1" "$top_builddir/apps/split" "$app" > /dev/null 2>&1 ||
    { echo "run-coldstart: apps/split $app at $1 rank(s) failed" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

echo "# cold start: apps/split $app from an empty PoCL kernel cache (cold) and again (warm),"
echo "# POCL_DEVICES=$POCL_DEVICES; build cost = cold - warm ($rounds rounds, medians, seconds)"
base=""
for n in 1 ${RANKS:-4}; do
  cold=""
  warm=""
  r=0
  while [ $r -lt "$rounds" ]; do
    rm -rf "${cache:?}"/*
    cold="$cold $(seconds "$n")"
    warm="$warm $(seconds "$n")"
    r=$((r + 1))
  done
  c=$(echo "$cold" | median)
  w=$(echo "$warm" | median)
  [ -n "$base" ] || base=$(awk -v c="$c" -v w="$w" 'BEGIN { print c - w }')
  awk -v n="$n" -v c="$c" -v w="$w" -v b="$base" 'BEGIN {
    printf "%2d rank(s): cold %6.2f s  warm %6.2f s  build cost %6.2f s  against 1 rank: %.2fx\n",
           n, c, w, c - w, (c - w) / b }'
done
