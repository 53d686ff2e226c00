#!/bin/sh
# What the divergence check costs: the cluster benchmark's tiny kernels at 2 ranks with the
# check off and on, alternated, medians of the runs and their ratio (from the build
# directory, or with TUTTI_ICD naming an installed Tutti). Usage: bench/run-check.sh [runs]
top_builddir=${top_builddir:-$(pwd)}
export TUTTI_ICD=${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}
export POCL_DEVICES=${POCL_DEVICES:-pthread}
runs=${1:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while [ $i -lt "$runs" ]; do
  for check in 0 1; do
    TUTTI_CHECK=$check "$top_builddir/tutti-run" -n 2 "$top_builddir/bench/cluster" 1 5 20000 \
      > "$tmp/out" 2>&1
    sed -n 's/.*rank 0 (actual) \([0-9.]*\) us\/command to enqueue, \([0-9.]*\) us with.*/\1 \2/p' \
      "$tmp/out" >> "$tmp/owner.$check"
    sed -n 's/.*rank 1 (virtual[^)]*): \([0-9.]*\) us\/command.*/\1/p' "$tmp/out" >> "$tmp/virtual.$check"
  done
  i=$((i + 1))
done
. "$(dirname "$0")/median.sh"
for what in owner virtual; do
  off=$(cut -d' ' -f1 "$tmp/$what.0" | median)
  on=$(cut -d' ' -f1 "$tmp/$what.1" | median)
  echo "$what: enqueue of a tiny kernel, check off $off us, on $on us: ratio $(echo "$on $off" | awk '{printf "%.3f", $1 / $2}')"
done
off=$(cut -d' ' -f2 "$tmp/owner.0" | median)
on=$(cut -d' ' -f2 "$tmp/owner.1" | median)
echo "owner: tiny kernel with completion, check off $off us, on $on us: ratio $(echo "$on $off" | awk '{printf "%.3f", $1 / $2}')"
