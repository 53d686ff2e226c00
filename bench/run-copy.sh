#!/bin/sh
# The SnuCL-D copy microbenchmark (apps/copybench) at 1, 2 and 4 ranks, with and without
# clAttachBufferToDevice. Usage: bench/run-copy.sh [iterations]
top_builddir=${top_builddir:-$(pwd)}
export TUTTI_ICD=${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}
# Four PoCL devices per process: every run has 4 devices, spread over 1, 2 or 4 ranks.
export POCL_DEVICES=${POCL_DEVICES:-pthread pthread pthread pthread}
for n in 1 2 4; do
  for attach in "" --attach; do
    "$top_builddir/tutti-run" -n $n "$top_builddir/apps/copybench" $attach "${1:-100}"
  done
done
