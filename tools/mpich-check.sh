#!/bin/sh
# Tutti built against MPICH (configure --with-mpi=mpich; Debian: libmpich-dev mpich) in a
# build folder of its own, from the distribution tarball, and its tests over ranks run there:
# the cluster tests at 1-4 ranks, the collectives, the split launches and the API tests at 2
# and 4 ranks, tutti-run starting them through MPICH's mpirun. From the build directory;
# prints its time. Exit 77 where MPICH is not installed.
set -u
t0=$(date +%s)
top=${top_builddir:-$(pwd)}
if ! pkg-config --exists mpich 2>/dev/null || ! command -v mpirun.mpich >/dev/null 2>&1; then
  echo "mpich-check: MPICH is not installed (apt-get install libmpich-dev mpich)" >&2
  exit 77
fi
dir="$top/_mpich"
rm -rf "$dir"
mkdir "$dir"
log="$top/mpich-check.log"
{ make -C "$top" dist && tar -C "$dir" -xzf "$top"/tutti-*.tar.gz && rm -f "$top"/tutti-*.tar.gz &&
  cd "$dir"/tutti-* && ./configure --with-mpi=mpich && make -j"$(nproc)"; } > "$log" 2>&1 || {
  tail -n 30 "$log"
  echo "mpich-check: the MPICH build failed ($log)" >&2
  exit 1
}
cd "$dir"/tutti-*
ldd .libs/libtutti.so | grep -q libmpich || {
  echo "mpich-check: libtutti.so is not MPICH's" >&2
  exit 1
}
tests="tests/cluster/cluster-1.test tests/cluster/cluster-2.test tests/cluster/cluster-3.test
       tests/cluster/cluster-4.test tests/cluster/cluster-mpi.test tests/cluster/collective.test
       tests/split/split.test tests/api/api-ranks.test"
status=0
make -j"$(nproc)" check TESTS="$(echo $tests)" >> "$log" 2>&1 || status=1
pass=$(sed -n 's/^# PASS: *//p' test-suite.log | head -n 1)
fail=$(sed -n 's/^# FAIL: *//p' test-suite.log | head -n 1)
[ $status = 0 ] || grep -E '^(FAIL|ERROR)' "$log" | head -n 20
version=$(mpirun.mpich --version 2>&1 | sed -n 's/^ *Version: *//p' | head -n 1)
echo "mpich-check: built with MPICH $version, ${pass:-0} passed, ${fail:-0} failed;" \
  "$(( $(date +%s) - t0 )) s"
cd "$top"
[ $status = 0 ] && rm -rf "$dir" "$log"
exit $status
