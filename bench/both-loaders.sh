# Sourced by bench/run-overhead.sh and bench/run-transfer.sh: a vendors directory in $dir
# (removed at exit) showing both Tutti (the build tree's, or the one TUTTI_ICD names) and
# the backends' own platforms (those of /etc/OpenCL/vendors, and BASELINE_LIB), for ocl-icd
# (OCL_ICD_VENDORS) and the Khronos loader (OCL_ICD_FILENAMES).
top_builddir=${top_builddir:-$(pwd)}
icd=${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$icd" "$dir/tutti.icd"
for f in /etc/OpenCL/vendors/*.icd; do
  [ -e "$f" ] && ! grep -q libtutti "$f" && cp "$f" "$dir/"
done
if [ -n "${BASELINE_LIB:-}" ]; then echo "$BASELINE_LIB" > "$dir/baseline.icd"; fi
files=$(awk 1 "$dir"/*.icd | tr '\n' ':')
both_loaders="OCL_ICD_VENDORS=$dir OCL_ICD_FILENAMES=${files%:}"
export POCL_DEVICES=${POCL_DEVICES:-pthread}
