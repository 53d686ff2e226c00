# Runs tests/agree on $ranks ranks three times: as it is, with a busy process beside it
# (a loaded machine), and with TUTTI_STRESS (random delays in the progress thread and MPI
# polling); each run repeats the FFT pattern 300 times. Prints TAP (sourced by
# tests/agree-N.test, which may set $groups_run to the groups it runs, default all).
groups=9
echo "1..$((3 * groups))"
n=0
busy=""
stop_busy() { [ -n "$busy" ] && kill "$busy" 2>/dev/null; wait 2>/dev/null; busy=""; }
trap stop_busy EXIT
for mode in plain busy stress; do
  case $mode in
    busy) sh -c 'while :; do :; done' & busy=$! ;;
    stress) seed=$(( $(date +%s) % 100000 + 1 )); echo "# TUTTI_STRESS=$seed" ;;
  esac
  if [ $mode = stress ]; then
    out=$(TUTTI_STRESS=$seed $TT_TIMEOUT "$top_builddir/tutti-run" -n "$ranks" --output=all \
          "$top_builddir/tests/agree" "${groups_run:-all}" 300 2>&1)
  else
    out=$($TT_TIMEOUT "$top_builddir/tutti-run" -n "$ranks" --output=all \
          "$top_builddir/tests/agree" "${groups_run:-all}" 300 2>&1)
  fi
  rc=$?
  stop_busy
  lines=$(echo "$out" | grep -E '^(not )?ok [0-9]+ - ')
  i=1
  while [ $i -le $groups ]; do
    n=$((n + 1))
    line=$(echo "$lines" | grep -E "^(not )?ok $i - " | head -n 1)
    if [ -z "$line" ]; then
      echo "not ok $n - group $i did not report ($mode, exit $rc)"
    else
      echo "$line" | sed "s/ok $i - /ok $n - /; s/)\$/, $mode)/"
    fi
    i=$((i + 1))
  done
  echo "$out" | grep -E '^# |rank [0-9]+|tutti' | grep -v '^# TUTTI' | head -n 40 | sed 's/^/# /'
done
