#!/bin/sh
# Runs bench/transfer: host <-> device in one process (Tutti against its backend, the loader
# showing both), then between ranks at 2 and 4 ranks (Tutti against raw MPI, same run).
# Usage: bench/run-transfer.sh [rounds]   (from the build directory; POCL_DEVICES, and
# TUTTI_* settings pass through; RANKS="2 4" by default; BASELINE_LIB adds a vendor library
# to the loader, BASELINE names the platform to compare with)
set -e
top_builddir=${top_builddir:-$(pwd)}
rounds=${1:-7}
icd=${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$icd" "$dir/tutti.icd"
for f in /etc/OpenCL/vendors/*.icd; do
  [ -e "$f" ] && ! grep -q libtutti "$f" && cp "$f" "$dir/"
done
if [ -n "${BASELINE_LIB:-}" ]; then echo "$BASELINE_LIB" > "$dir/baseline.icd"; fi
export POCL_DEVICES=${POCL_DEVICES:-pthread}
# Both loaders: ocl-icd reads the directory, the Khronos loader the list of libraries.
files=$(cat "$dir"/*.icd | tr '\n' ':')
OCL_ICD_VENDORS="$dir" OCL_ICD_FILENAMES="${files%:}" "$top_builddir/bench/transfer" --host \
  ${BASELINE:+--baseline "$BASELINE"} --rounds "$rounds" || echo "(host <-> device: not measured)"
for n in ${RANKS:-2 4}; do
  TUTTI_ICD="$icd" "$top_builddir/tutti-run" -n "$n" "$top_builddir/bench/transfer" --rounds "$rounds"
done
