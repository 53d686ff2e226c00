# Runs tests/api/agree on $ranks ranks three times: as it is, with a busy process beside it
# (a loaded machine), and with TUTTI_STRESS (random delays in the progress thread and MPI
# polling); each run repeats the FFT pattern 300 times. Prints TAP (sourced by
# tests/agree-N.test, which may set $groups_run to the groups it runs, default all).
. "$top_srcdir/tests/tap.sh"
groups=11
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
          "$top_builddir/tests/api/agree" "${groups_run:-all}" 300 2>&1)
  else
    out=$($TT_TIMEOUT "$top_builddir/tutti-run" -n "$ranks" --output=all \
          "$top_builddir/tests/api/agree" "${groups_run:-all}" 300 2>&1)
  fi
  rc=$?
  stop_busy
  renumber "$out" "$groups" "$mode" "$rc"
  echo "$out" | grep -E '^# |rank [0-9]+|tutti' | grep -v '^# TUTTI' | head -n 40 | sed 's/^/# /'
done
