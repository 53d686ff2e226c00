#!/bin/sh
# The cluster benchmark at 1, 2 and 4 ranks (from the build directory, or with TUTTI_ICD
# naming an installed Tutti). Usage: bench/run-cluster.sh [MiB] [rounds] [kernels]
top_builddir=${top_builddir:-$(pwd)}
export TUTTI_ICD=${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}
export POCL_DEVICES=${POCL_DEVICES:-pthread}
for n in 1 2 4; do
  echo "== $n rank(s)"
  "$top_builddir/tutti-run" -n $n "$top_builddir/bench/cluster" "$@"
done
