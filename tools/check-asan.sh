#!/bin/sh
# Builds a copy of the tree with AddressSanitizer and runs the agreement
# tests (tests/api/agree: host waits, events, errors alike on every rank), the cluster tests,
# the rule that the program's memory is its own once a command is done (tests/host/hostmem, its
# memory freed right after each command, so that any later touch is reported) and kernels
# split without annotations (apps/autosplit through the aggregate device: libclang's reading
# of the kernels, derived regions, merged writes) and images and samplers between ranks
# (tests/cluster/images: rows moved between ranks, maps into Tutti's copies, a split launch
# reading an image) at 4 ranks under it, plain and with TUTTI_STRESS. Prints one line per run and fails on any
# sanitizer report or failed check. `make check-asan` runs it. Leak checks stay off by
# default: LeakSanitizer's scan at exit crashes ("Tracer caught signal 11") in ranks whose
# PoCL threads are alive; TT_ASAN_LEAKS=1 turns them on.
#   tools/check-asan.sh [build-dir]
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$(mktemp -d "${TMPDIR:-/tmp}/tutti-asan.XXXXXX")}
mkdir -p "$dir/src"
(cd "$src" && git ls-files -z | xargs -0 tar cf -) | (cd "$dir/src" && tar xf -)
cd "$dir/src" || exit 2
{ autoreconf -fi && ./configure CFLAGS="-g -O1 -fsanitize=address -fno-omit-frame-pointer" \
    LDFLAGS="-fsanitize=address" && make -j"$(nproc)" && make tests/api/agree tests/cluster/cluster tests/host/hostmem \
    apps/autosplit tests/cluster/images tests/vendors/tutti.icd; } > "$dir/build.log" 2>&1 || { echo "asan build failed: $dir/build.log"; exit 2; }
top_builddir=$PWD top_srcdir=$PWD
. ./tests/env.sh
# Open MPI's, PoCL's and their libraries' own reports, each justified there.
supp="$src/tools/lsan.supp"
asan=$(gcc -print-file-name=libasan.so)
status=0
for run in "api/agree all 300" "api/agree-stress all 300" "cluster/cluster" "host/hostmem 2" \
           "autosplit" "cluster/images"; do
  test=${run%% *}
  prog=${test#*/}
  args=${run#"$test"}
  stress= path=./tests/$test aggregate=
  [ "$prog" = agree-stress ] && { prog=agree; stress=17; path=./tests/api/agree; }
  [ "$prog" = autosplit ] && { path=./apps/autosplit; aggregate=all; }
  log="$dir/$prog${stress:+-stress}.log"
  # shellcheck disable=SC2086
  TUTTI_STRESS=$stress TUTTI_AGGREGATE=$aggregate HOSTMEM_FREE=1 POCL_DEVICES=pthread \
    OMPI_MCA_mca_base_component_disable_dlclose=1 \
    ASAN_OPTIONS=fast_unwind_on_malloc=0:detect_leaks=${TT_ASAN_LEAKS:-0}:verify_asan_link_order=0 \
    LSAN_OPTIONS=suppressions=$supp LD_PRELOAD=$asan timeout 900 \
    ./tutti-run -n 4 --output=all "$path" $args > "$log" 2>&1
  rc=$?
  reports=$(grep -c "ERROR: AddressSanitizer\|ERROR: LeakSanitizer" "$log")
  failed=$(grep -c "^not ok\|^FAILED" "$log")
  echo "asan, 4 ranks: $prog${stress:+ (TUTTI_STRESS=$stress)}: exit $rc, $reports sanitizer reports, $failed failed checks ($log)"
  [ "$rc" = 0 ] && [ "$reports" = 0 ] && [ "$failed" = 0 ] || status=1
done
exit $status
