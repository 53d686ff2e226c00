#!/bin/sh
# How long a job takes to start: `tutti-run -n N tutti-info` (MPI started, every backend of
# the node opened by its first rank, the device table exchanged, printed by rank 0) against
# mpirun's own time: N processes of /bin/true under tutti-run (its options and variables) and
# under a bare mpirun. Medians of ROUNDS runs (5 by default), for each N of RANKS ("1 16 64"
# by default; one rank runs without mpirun). Then one rank against the backends directly:
# `clinfo -l` through the system's loader configuration (OCL_ICD_VENDORS and OCL_ICD_FILENAMES
# unset) and under `tutti-run -n 1`, when clinfo is there (Tutti's backends should be the
# system's: TUTTI_BACKENDS names them where Tutti finds others too).
# Usage: bench/run-startup.sh [rounds]   (from the build directory)
set -e
rounds=${1:-5}
top_builddir=${top_builddir:-$(pwd)}
export TUTTI_ICD="${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}"
run="$top_builddir/tutti-run"

seconds() { # command...: wall seconds it took (its output discarded; a failure stops here)
  t0=$(date +%s.%N)
  "$@" > /dev/null 2>&1 || { echo "run-startup: '$*' failed" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
. "$(dirname "$0")/median.sh"

echo "# start-up: tutti-run -n N tutti-info against tutti-run -n N /bin/true (mpirun's own time, as"
echo "# tutti-run starts it) and a bare mpirun -np N --oversubscribe /bin/true ($rounds rounds, medians)"
for n in ${RANKS:-1 16 64}; do
  tb=""
  tm=""
  tt=""
  r=0
  while [ $r -lt "$rounds" ]; do
    tb="$tb $(seconds env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                 mpirun -np "$n" --oversubscribe /bin/true)"
    tm="$tm $(seconds "$run" -n "$n" /bin/true)"
    tt="$tt $(seconds "$run" -n "$n" "$top_builddir/tutti-info")"
    r=$((r + 1))
  done
  awk -v n="$n" -v b="$(echo "$tb" | median)" -v m="$(echo "$tm" | median)" \
      -v t="$(echo "$tt" | median)" 'BEGIN {
    printf "%3d ranks   mpirun %6.3f s   tutti-run /bin/true %6.3f s   tutti-info %6.3f s   beyond mpirun %6.3f s\n", n, b, m, t, t - m }'
done

if command -v clinfo > /dev/null 2>&1; then
  td=""
  tt=""
  r=0
  while [ $r -lt "$rounds" ]; do
    td="$td $(seconds env -u OCL_ICD_VENDORS -u OCL_ICD_FILENAMES clinfo -l)"
    tt="$tt $(seconds "$run" -n 1 clinfo -l)"
    r=$((r + 1))
  done
  awk -v d="$(echo "$td" | median)" -v t="$(echo "$tt" | median)" 'BEGIN {
    printf "  1 rank    clinfo -l: the backends directly %6.3f s   through tutti-run -n 1 %6.3f s   beyond %6.3f s\n", d, t, t - d }'
fi
