#!/bin/sh
# Runs one benchmark script in this build tree and another (the commit before, built beside
# it) alternately, so that a change is measured against what it changed under the same load;
# each line of output is prefixed with its tree's name (this, before).
# Usage: bench/run-trees.sh OTHER_BUILD ROUNDS SCRIPT [ARGS...]   (from the build directory;
# SCRIPT names one of bench/: run-overhead.sh, run-transfer.sh, ...; its settings pass through)
set -e
if [ $# -lt 3 ]; then
  echo "usage: bench/run-trees.sh OTHER_BUILD ROUNDS SCRIPT [ARGS...]" >&2
  exit 2
fi
this=${top_builddir:-$(pwd)}
other=$(cd "$1" && pwd)
rounds=$2
script=$3
shift 3
for tree in "$this" "$other"; do
  if [ ! -f "$tree/bench/$script" ] || [ ! -f "$tree/tests/vendors/tutti.icd" ]; then
    echo "run-trees: $tree has no bench/$script or tests/vendors/tutti.icd (build it first)" >&2
    exit 2
  fi
done
i=1
while [ "$i" -le "$rounds" ]; do
  for tree in "$this" "$other"; do
    name=this
    [ "$tree" = "$this" ] || name=before
    (cd "$tree" && top_builddir=$tree TUTTI_ICD=$tree/tests/vendors/tutti.icd \
      sh "$tree/bench/$script" "$@") 2>&1 | sed "s/^/[$name $i] /"
  done
  i=$((i + 1))
done
