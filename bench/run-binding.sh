#!/bin/sh
# Do the cores of a rank stay its own? The compute-bound kernel of bench/overhead split over
# DEVICES PoCL devices (2 by default) in one process: PoCL directly (no mpirun; the system's
# loader configuration, its first platform other than Tutti) against Tutti under
# `tutti-run -n 1`, alternated ROUNDS times (5 by default), medians and their ratio.
# Usage: bench/run-binding.sh [rounds]   (from the build directory; RANKS=N runs Tutti under
# tutti-run -n N instead, each rank then holding DEVICES devices of its own)
set -e
rounds=${1:-5}
devices=${DEVICES:-2}
ranks=${RANKS:-1}
top_builddir=${top_builddir:-$(pwd)}
icd=${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}
pd=""
i=0
while [ $i -lt "$devices" ]; do pd="$pd pthread"; i=$((i + 1)); done
export POCL_DEVICES="${pd# }"
opts="--devices $devices --rounds 3 ${OVERHEAD_OPTS:---heavy 20000 --items 262144}"
t_base=""
t_tutti=""
r=0
while [ $r -lt "$rounds" ]; do
  # shellcheck disable=SC2086
  # (PoCL itself may abort at exit after printing: the figure counts if it was printed)
  ob=$("$top_builddir/bench/overhead" --only baseline $opts 2>&1) || true
  # shellcheck disable=SC2086
  ot=$(TUTTI_ICD="$icd" "$top_builddir/tutti-run" -n "$ranks" "$top_builddir/bench/overhead" \
         --only tutti $opts 2>&1) || true
  b=$(echo "$ob" | awk '/^kernel-bound/ {print $(NF-1)}')
  t=$(echo "$ot" | awk '/^kernel-bound/ {print $(NF-1); exit}')
  if [ -z "$b" ] || [ -z "$t" ]; then
    printf '%s\n%s\n' "$ob" "$ot" | tail -n 20
    echo "run-binding: a run printed no figure" >&2
    exit 1
  fi
  echo "round $((r + 1)): PoCL directly $b s, Tutti under tutti-run -n $ranks $t s"
  t_base="$t_base $b"
  t_tutti="$t_tutti $t"
  r=$((r + 1))
done
. "$(dirname "$0")/median.sh"
mb=$(echo "$t_base" | median)
mt=$(echo "$t_tutti" | median)
echo "kernel-bound over $devices PoCL device(s), medians of $rounds: PoCL directly $mb s," \
  "Tutti (tutti-run -n $ranks) $mt s, ratio Tutti/PoCL $(awk "BEGIN {printf \"%.3f\", $mt / $mb}")"
