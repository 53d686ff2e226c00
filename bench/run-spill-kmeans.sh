#!/bin/sh
# Spilling with a real kernel (doc/spill.md): apps/split's k-means (points taken in by the parts
# of one split launch over QUEUES queues of the first device; centroids, sums and counts
# reduced) with its points at 1x, 2x and 4x a budget of BUDGET MiB (TUTTI_DEVICE_MEM: BUDGET
# plus 1 MiB for the centroids and reduction copies). Prints the seconds of its timed
# iterations, the throughput relative to 1x (points per second), and relative to the same
# points without a budget (nothing evicted: what spilling itself costs, apart from how the
# kernel's speed per point changes with the data). Medians of REPS runs; every run checked
# against the host.
# WARMUPS (default 3) untimed launches come first: they take the one-time costs (each host
# copy's first eviction pins its memory, about 0.4 s per GiB on NVIDIA), so that the timed
# iterations show the steady state; WARMUPS=1 times them too.
# With RANKS > 1 every rank's first device takes QUEUES parts (SPLIT_PER_DEVICE) and BUDGET
# is each device's: the points are RANKS times as many.
# Usage: bench/run-spill-kmeans.sh   (from the build directory; BUDGET default 64, QUEUES
# default 16, REPS default 3, RANKS default 1)
set -e
top_builddir=${top_builddir:-$(pwd)}
export TUTTI_ICD=${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}
budget=${BUDGET:-64} queues=${QUEUES:-16} reps=${REPS:-3} ranks=${RANKS:-1} warmups=${WARMUPS:-3}
. "$(dirname "$0")/median.sh"
echo "# k-means, budget $budget MiB per device, $queues parts on each rank's first device, $ranks rank(s), $warmups warm-up launch(es)"
# The median time (ms) of REPS runs of k-means at scale $1, with TUTTI_DEVICE_MEM=$2 (empty:
# none).
run() {
  times=
  for r in $(seq "$reps"); do
    out=$(env ${2:+TUTTI_DEVICE_MEM=$2} SPLIT_ONLY=1 SPLIT_PER_DEVICE=$queues SPLIT_WARMUPS=$warmups \
          "$top_builddir/tutti-run" -n "$ranks" "$top_builddir/apps/split" kmeans "$1" 2>&1) || true
    echo "$out" | grep -q "^ok kmeans" || { echo "apps/split kmeans $1 (budget ${2:-none}): $out" >&2; exit 1; }
    times="$times $(echo "$out" | sed -n 's/^ok kmeans: split over [0-9]* queues \([0-9.]*\) ms.*/\1/p')"
  done
  echo "$times" | median
}
# k-means holds 512 KiB of points per unit of its scale.
t1=
for x in 1 2 4; do
  scale=$((budget * 2 * x * ranks))
  t=$(run "$scale" "$((budget + 1))M")
  t1=${t1:-$t}
  free=$t
  [ "$x" = 1 ] || free=$(run "$scale" "")
  awk -v x="$x" -v t="$t" -v t1="$t1" -v f="$free" -v b="$((budget * ranks))" 'BEGIN {
    printf "kmeans %dx (%d MiB of points): %.1f ms, throughput %.3f of 1x; %.3f of the same points without a budget (%.1f ms)\n",
      x, b * x, t, t1 * x / t, f / t, f }'
done
