#!/bin/sh
# Runs bench/transfer: host <-> device in one process (Tutti against its backend, the loader
# showing both), then between ranks at 2 and 4 ranks (Tutti against raw MPI, same run).
# Usage: bench/run-transfer.sh [rounds]   (from the build directory; POCL_DEVICES, and
# TUTTI_* settings pass through; RANKS="2 4" by default; BASELINE_LIB adds a vendor library
# to the loader, BASELINE names the platform to compare with)
set -e
rounds=${1:-7}
. "$(dirname "$0")/both-loaders.sh"
# shellcheck disable=SC2086
env $both_loaders "$top_builddir/bench/transfer" --host \
  ${BASELINE:+--baseline "$BASELINE"} --rounds "$rounds" || echo "(host <-> device: not measured)"
for n in ${RANKS:-2 4}; do
  TUTTI_ICD="$icd" "$top_builddir/tutti-run" -n "$n" "$top_builddir/bench/transfer" --rounds "$rounds"
done
