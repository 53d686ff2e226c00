# Runs one test script for make check (TEST_LOG_COMPILER) and ends its TAP output with its wall
# time as a comment ("# time: 12.3 s"), which tools/bootstrap.sh lists after the suite
# (doc/testing.md keeps the figures). The script's exit status is kept.
start=$(date +%s%N)
sh "$@"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "# time: $((ms / 1000)).$((ms % 1000 / 100)) s"
exit $rc
