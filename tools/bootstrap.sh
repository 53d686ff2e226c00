#!/bin/sh
# Sets Tutti up on a fresh Debian 12 (as root) and then either runs the demo or the whole
# test suite. The README's two commands and .ci/run call this; running it again is harmless.
#   tools/bootstrap.sh demo    install the packages, build, install into ./_inst, show the
#                              device table of 4 ranks, check the installation on them
#                              (tutti-info --check) and run the SnuCL-D vector addition
#   tools/bootstrap.sh check   install the packages, build with -Werror, run make check, then
#                              (as root) build, install, use and purge the Debian package,
#                              build against MPICH and run the tests over ranks with it,
#                              run jobs under a Slurm started in a temporary folder, run
#                              builds under AddressSanitizer, UndefinedBehaviorSanitizer
#                              and ThreadSanitizer, and fuzz every target for 30 s
set -eu
what=${1:-}
case "$what" in
  demo|check) ;;
  *) echo "usage: tools/bootstrap.sh demo|check" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."

packages="ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo openmpi-bin libopenmpi-dev
          autoconf automake libtool pkg-config make gcc g++ binutils help2man man-db"
# The pyopencl test (tests/api/pyopencl.test) runs Debian's pyopencl through Tutti; the piglit
# test (tests/api/piglit.test) piglit's OpenCL API tests.
# The package step (tools/deb-check.sh) builds a Debian package with debhelper.
# The MPICH step (tools/mpich-check.sh) builds against Debian's MPICH beside Open MPI.
# The Slurm step (tools/slurm-check.sh) starts Slurm's daemons and munge in a folder of its own.
# The fuzzing step (tools/fuzz.sh) builds with clang's libFuzzer.
if [ "$what" = check ]; then
  packages="$packages python3-pyopencl piglit debhelper mpich libmpich-dev"
  packages="$packages slurmctld slurmd slurm-client munge clang libclang-rt-14-dev"
fi
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "bootstrap: these Debian packages are missing:$missing (run as root, or install them)" >&2
    exit 1
  fi
  echo "bootstrap: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends $missing
fi

jobs=$(nproc 2>/dev/null || echo 2)
autoreconf -fi
if [ "$what" = check ]; then
  ./configure --enable-werror
  make -j"$jobs"
  status=0
  make -j"$jobs" check || status=$?
  if [ -f test-suite.log ]; then
    [ $status = 0 ] || cat test-suite.log
    # Each test script's wall time (tests/timed.sh), longest first.
    echo "test times, longest first:"
    for f in tests/*/*.log; do
      t=$(sed -n 's/^# time: \([0-9.]*\) s$/\1/p' "$f" | tail -n 1)
      [ -n "$t" ] && echo "$t $(basename "$f" .log)"
    done | sort -rn | awk '{ printf "  %6.1f s  %s\n", $1, $2 }'
    # One plain closing line for whoever reads the log.
    pass=$(sed -n 's/^# PASS: *//p' test-suite.log | head -n 1)
    fail=$(sed -n 's/^# FAIL: *//p' test-suite.log | head -n 1)
    err=$(sed -n 's/^# ERROR: *//p' test-suite.log | head -n 1)
    echo "${pass:-0} passed, $(( ${fail:-0} + ${err:-0} )) failed"
  fi
  # A step of its own, timed: the Debian package built, installed, used and purged.
  if [ "$(id -u)" = 0 ]; then
    start=$(date +%s)
    sh tools/deb-check.sh || { rc=$?; [ $rc = 77 ] || status=$rc; }
    echo "package step: $(( $(date +%s) - start )) s"
  fi
  # A step of its own, timed: a build against MPICH and its tests over ranks.
  start=$(date +%s)
  sh tools/mpich-check.sh || { rc=$?; [ $rc = 77 ] || status=$rc; }
  echo "MPICH step: $(( $(date +%s) - start )) s"
  # A step of its own, timed: jobs of 1, 2 and 4 ranks under a real Slurm (as root).
  start=$(date +%s)
  sh tools/slurm-check.sh || { rc=$?; [ $rc = 77 ] || status=$rc; }
  echo "Slurm step: $(( $(date +%s) - start )) s"
  # Steps of their own, timed: the sanitizers' builds (tools/check-sanitizer.sh), then every
  # fuzz target for 30 s (tools/fuzz.sh).
  for kind in address undefined thread; do
    start=$(date +%s)
    sh tools/check-sanitizer.sh $kind || status=1
    echo "$kind sanitizer step: $(( $(date +%s) - start )) s"
  done
  start=$(date +%s)
  sh tools/fuzz.sh 30 || { rc=$?; [ $rc = 77 ] || status=$rc; }
  echo "fuzzing step: $(( $(date +%s) - start )) s"
  # The build and the tests leave the checkout as it was: every product is ignored.
  if git rev-parse --git-dir >/dev/null 2>&1 && [ -n "$(git status --porcelain)" ]; then
    echo "bootstrap: the build or the tests left files git does not ignore:" >&2
    git status --porcelain >&2
    [ $status = 0 ] && status=1
  fi
  exit $status
fi

./configure --prefix="$PWD/_inst"
make -j"$jobs"
make install
echo
# Four ranks on this machine, each with a PoCL CPU device: one platform of four devices.
export POCL_DEVICES="${POCL_DEVICES:-pthread}"
info=$("$PWD/_inst/bin/tutti-run" -n 4 "$PWD/_inst/bin/tutti-info" --check)
echo "$info"
echo
# The paper's program asks for GPUs: on a CPU-only machine Tutti shows its CPUs as GPUs.
if ! echo "$info" | grep -q " GPU "; then
  export TUTTI_DEVICE_TYPE=gpu
fi
"$PWD/_inst/bin/tutti-run" -n 4 ./apps/vecadd
