# Runs tests/cluster/cluster under tutti-run on $ranks ranks, each rank with one and then two PoCL
# devices; prints TAP (sourced by tests/cluster-N.test).

. "$top_srcdir/tests/tap.sh"
echo "1..20"
n=0
for devs in "pthread" "pthread pthread"; do
  out=$(POCL_DEVICES="$devs" $TT_TIMEOUT "$top_builddir/tutti-run" -n "$ranks" "$top_builddir/tests/cluster/cluster" 2>&1)
  rc=$?
  renumber "$out" 10 "$(echo $devs | wc -w) per process" "$rc"
  echo "$out" | grep -E '^# |rank [0-9]+:' | sed 's/^/# /'
done
