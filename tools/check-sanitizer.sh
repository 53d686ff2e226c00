#!/bin/sh
# Builds a copy of the tree with one of gcc's sanitizers and runs Tutti's programs of many
# ranks and threads under it; prints one line per run and fails on any sanitizer report or
# failed check. `make check-asan`, `make check-ubsan` and `make check-tsan` run it, and
# tools/bootstrap.sh check runs all three as timed steps of their own.
#   tools/check-sanitizer.sh address|undefined|thread [build-dir]
#
# address (AddressSanitizer): the agreement tests (tests/api/agree: host waits, events,
#   errors alike on every rank), the cluster tests, the rule that the program's memory is its
#   own once a command is done (tests/host/hostmem, its memory freed right after each command,
#   so that any later touch is reported), kernels split without annotations (apps/autosplit
#   through the aggregate device: libclang's reading of the kernels, derived regions, merged
#   writes) and images and samplers between ranks (tests/cluster/images), at 4 ranks, plain
#   and with TUTTI_STRESS. Leak checks stay off by default: LeakSanitizer's scan at exit
#   crashes ("Tracer caught signal 11") in ranks whose PoCL threads are alive; TT_ASAN_LEAKS=1
#   turns them on (suppressions: tools/lsan.supp).
# undefined (UndefinedBehaviorSanitizer, every check fatal): the agreement tests and the
#   cluster tests at 4 ranks, plain and with TUTTI_STRESS, and the split launches' program.
# thread (ThreadSanitizer): host programs of several threads (tests/api/threads: 4 host
#   threads with devices, builds and a buffer handed between them) at 1 rank of 4 devices,
#   and the cluster tests at 2 ranks, where the progress thread and the backends' callback
#   threads meet (suppressions: tools/tsan.supp). Not tests/api/threads at 2 ranks: its
#   host threads' turns need the host layer, whose open the sanitizer's symbolizer goes
#   through, and a rank hung there (below).
set -u
kind=${1:-}
case "$kind" in
  address) flags="-fsanitize=address"; lib=libasan.so; report="ERROR: AddressSanitizer\|ERROR: LeakSanitizer" ;;
  undefined) flags="-fsanitize=undefined -fno-sanitize-recover=undefined"; lib=; report="runtime error:" ;;
  thread) flags="-fsanitize=thread"; lib=; report="WARNING: ThreadSanitizer" ;;
  *) echo "usage: tools/check-sanitizer.sh address|undefined|thread [build-dir]" >&2; exit 2 ;;
esac
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${2:-$(mktemp -d "${TMPDIR:-/tmp}/tutti-$kind.XXXXXX")}
mkdir -p "$dir/src"
(cd "$src" && git ls-files -z | xargs -0 tar cf -) | (cd "$dir/src" && tar xf -)
cd "$dir/src" || exit 2
{ autoreconf -fi && ./configure CFLAGS="-g -O1 $flags -fno-omit-frame-pointer" LDFLAGS="$flags" &&
  make -j"$(nproc)" && make tests/api/agree tests/cluster/cluster tests/host/hostmem apps/autosplit \
    tests/cluster/images tests/api/threads apps/split tests/vendors/tutti.icd; } > "$dir/build.log" 2>&1 ||
  { echo "$kind sanitizer build failed: $dir/build.log"; exit 2; }
# ThreadSanitizer: the host layer is built without it. It is preloaded into every process a
# rank starts (PoCL runs its linker through a shell), and one that loads the sanitizer's
# runtime after its start crashes; ranks themselves load the runtime with their program.
if [ "$kind" = thread ]; then
  { rm -rf host/*.lo host/*.o host/.libs libtutti-host.la &&
    make libtutti-host.la CFLAGS="-g -O1" LDFLAGS=; } >> "$dir/build.log" 2>&1 ||
    { echo "thread sanitizer: the host layer's build failed: $dir/build.log"; exit 2; }
fi
top_builddir=$PWD top_srcdir=$PWD
. ./tests/env.sh
case "$kind" in
  address)
    runs="4:api/agree:all_300 4:api/agree:all_300:stress 4:cluster/cluster 4:host/hostmem:2
          4:autosplit 4:cluster/images" ;;
  undefined)
    runs="4:api/agree:all_300 4:api/agree:all_300:stress 4:cluster/cluster 4:cluster/cluster::stress
          2:split" ;;
  thread)
    runs="1:api/threads:3:4dev 2:cluster/cluster" ;;
esac
preload=
[ -n "$lib" ] && preload=$(gcc -print-file-name=$lib)
# Runs $2... on $1 ranks. Under ThreadSanitizer mpirun starts them itself, with tutti-run's
# environment (tutti-run --env), so that the one-rank job too has the progress thread and the
# host layer's turns (tutti-run runs one rank without MPI).
ranks() {
  n=$1
  shift
  if [ "$kind" != thread ]; then
    LD_PRELOAD=$preload timeout 900 ./tutti-run -n "$n" --output=all "$@"
    return
  fi
  mpirun=$(./tutti-run --dry-run -n 2 true | cut -d' ' -f1)
  ( eval "$(./tutti-run --env)"
    export TUTTI_OUTPUT=all OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    into="LD_PRELOAD=$LD_PRELOAD"
    unset LD_PRELOAD
    timeout 900 "$mpirun" -np "$n" --oversubscribe --bind-to none -x "$into" -x OCL_ICD_VENDORS \
      -x OCL_ICD_FILENAMES -x HWLOC_COMPONENTS -x TUTTI_OUTPUT -x TUTTI_STRESS -x POCL_DEVICES \
      -x POCL_CACHE_DIR -x TSAN_OPTIONS "$@" )
}
# ThreadSanitizer symbolizes a report with LLVM's symbolizer, a process of its own, where there
# is one.
symbolizer=
for s in llvm-symbolizer llvm-symbolizer-14; do
  p=$(command -v $s 2>/dev/null) && { symbolizer=":external_symbolizer_path=$p"; break; }
done
status=0
for run in $runs; do
  n=${run%%:*}
  rest=${run#*:}
  test=${rest%%:*}
  args=$(echo "$rest" | cut -s -d: -f2 | tr _ ' ')
  extra=$(echo "$rest" | cut -s -d: -f3)
  path=./tests/$test devices=pthread stress= aggregate=
  case "$test" in
    autosplit) path=./apps/autosplit aggregate=all ;;
    split) path=./apps/split args=vecadd ;;
  esac
  [ "$extra" = stress ] && stress=17
  [ "$extra" = 4dev ] && devices="pthread pthread pthread pthread"
  name=$(basename "$test")${args:+ $args}${stress:+ (TUTTI_STRESS=$stress)}
  log="$dir/$(echo "$test-$n-$extra" | tr / -).log"
  # shellcheck disable=SC2086
  ( export TUTTI_STRESS="$stress" TUTTI_AGGREGATE="$aggregate" HOSTMEM_FREE=1 POCL_DEVICES="$devices"
    export OMPI_MCA_mca_base_component_disable_dlclose=1
    export ASAN_OPTIONS=fast_unwind_on_malloc=0:detect_leaks=${TT_ASAN_LEAKS:-0}:verify_asan_link_order=0
    export LSAN_OPTIONS=suppressions=$src/tools/lsan.supp UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export TSAN_OPTIONS="suppressions=$src/tools/tsan.supp:report_signal_unsafe=0:history_size=4$symbolizer"
    # The sanitizer's symbolizer opens files through the host layer's open, which asks the
    # dynamic loader who called it, while PoCL, loading a kernel, holds the loader's lock and
    # waits for the sanitizer: a rank of the cluster tests hung so. Their files stay each
    # rank's own (host threads need the layer on: their turns).
    [ "$kind" = thread ] && [ "$test" = cluster/cluster ] && export TUTTI_HOST=off
    ranks "$n" "$path" $args ) > "$log" 2>&1
  rc=$?
  reports=$(grep -c "$report" "$log")
  failed=$(grep -c "^not ok\|^FAILED" "$log")
  echo "$kind, $n rank(s): $name: exit $rc, $reports sanitizer reports, $failed failed checks ($log)"
  [ "$rc" = 0 ] && [ "$reports" = 0 ] && [ "$failed" = 0 ] || status=1
done
exit $status
