#!/bin/sh
# Runs the README's test command (sh tools/bootstrap.sh check, what CI runs) several times in
# a row, each time in a fresh clone of this checkout's HEAD, and counts the runs that passed:
# the suite must pass every time, on a busy machine too (doc/testing.md, "Soak, sanitizers, the event ledger").
#   tools/soak.sh [--busy] [RUNS]   RUNS defaults to 10
#   --busy   one busy loop per core runs beside every run (the machine shared with other work)
# Each run's log is kept in the soak directory (SOAK_DIR, default a new one under /tmp) as
# run-N.log; a line per run says its result, its time and the suite's closing line.
set -u
busy=0
case "${1:-}" in
  --busy) busy=1; shift ;;
  -*) echo "usage: tools/soak.sh [--busy] [RUNS]" >&2; exit 2 ;;
esac
runs=${1:-10}
case "$runs" in
  ''|*[!0-9]*) echo "soak: RUNS must be a number, not '$runs'" >&2; exit 2 ;;
esac
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${SOAK_DIR:-$(mktemp -d /tmp/tutti-soak.XXXXXX)}
mkdir -p "$dir"
loops=""
stop_loops() { [ -n "$loops" ] && kill $loops 2>/dev/null; loops=""; }
trap 'stop_loops' EXIT
trap 'stop_loops; exit 130' INT TERM
if [ $busy = 1 ]; then
  for i in $(seq 1 "$(nproc)"); do
    sh -c 'while :; do :; done' &
    loops="$loops $!"
  done
fi
echo "soak: $runs run(s) of tools/bootstrap.sh check from fresh clones of $(git -C "$src" rev-parse --short HEAD)$([ $busy = 1 ] && echo ", $(nproc) busy loop(s) beside"); logs in $dir"
passed=0 failed=0
for i in $(seq 1 "$runs"); do
  clone="$dir/clone"
  rm -rf "$clone"
  git clone -q "$src" "$clone"
  start=$(date +%s)
  CI=true sh "$clone/tools/bootstrap.sh" check < /dev/null > "$dir/run-$i.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$dir/run-$i.log" | tail -n 1)
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1)) result=pass
  else
    failed=$((failed + 1)) result="FAIL (exit $rc)"
    grep -E '^(FAIL|ERROR):' "$dir/run-$i.log" | sed 's/^/soak:   /'
  fi
  printf 'soak: run %d: %s in %dm%02ds (%s)\n' "$i" "$result" $((secs / 60)) $((secs % 60)) "${summary:-no summary}"
done
rm -rf "$dir/clone"
echo "soak: $passed of $runs run(s) passed$([ $busy = 1 ] && echo ' beside busy loops')"
[ $failed -eq 0 ]
