#!/bin/sh
# Runs bench/overhead with the loader showing both Tutti (from the build tree, or the
# installed one named by TUTTI_ICD) and the backend's own platform.
# Usage: bench/run-overhead.sh [overhead options]   (from the build directory)
set -e
top_builddir=${top_builddir:-$(pwd)}
icd=${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$icd" "$dir/tutti.icd"
for f in /etc/OpenCL/vendors/*.icd; do
  [ -e "$f" ] && ! grep -q libtutti "$f" && cp "$f" "$dir/"
done
if [ -n "${BASELINE_LIB:-}" ]; then echo "$BASELINE_LIB" > "$dir/baseline.icd"; fi
OCL_ICD_VENDORS="$dir" POCL_DEVICES=${POCL_DEVICES:-pthread} "$top_builddir/bench/overhead" "$@"
