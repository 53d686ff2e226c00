# Runs tests/cluster under tutti-run on $ranks ranks, each rank with one and then two PoCL
# devices; prints TAP (sourced by tests/cluster-N.test).

echo "1..16"
n=0
for devs in "pthread" "pthread pthread"; do
  out=$(POCL_DEVICES="$devs" $TT_TIMEOUT "$top_builddir/tutti-run" -n "$ranks" "$top_builddir/tests/cluster" 2>&1)
  rc=$?
  lines=$(echo "$out" | grep -E '^(not )?ok [0-9]+ - ')
  for i in 1 2 3 4 5 6 7 8; do
    n=$((n + 1))
    line=$(echo "$lines" | grep -E "^(not )?ok $i - " | head -n 1)
    if [ -z "$line" ]; then
      echo "not ok $n - group $i did not report (exit $rc, devices: $devs)"
    else
      echo "$line" | sed "s/ok $i - /ok $n - /; s/)\$/, $(echo $devs | wc -w) per process)/"
    fi
  done
  echo "$out" | grep -E '^# |rank [0-9]+:' | sed 's/^/# /'
done
