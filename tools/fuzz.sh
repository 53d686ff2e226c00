#!/bin/sh
# Fuzzing (doc/testing.md, "Fuzzing"): builds every target of tests/fuzz/ with libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer (Debian's clang) into _fuzz/ of the build
# directory, and runs each for SECONDS (default 60), as many at once as there are cores, from
# its seed corpus (tests/fuzz/corpus/TARGET, in the repository) and what earlier runs kept
# (_fuzz/corpus/TARGET). An input that crashes a target, breaks a property it checks, leaks
# or hangs is kept as _fuzz/crash/TARGET-*, with the command that replays it; it belongs in
# tests/fuzz/regress/TARGET once fixed (make check replays those). Prints each target's runs
# and its time; exits 1 when one failed, 77 without clang's libFuzzer.
#   tools/fuzz.sh [SECONDS] [TARGET...]      (make fuzz; FUZZ_SECONDS=N make fuzz)
set -u
seconds=${1:-60}
[ $# -gt 0 ] && shift
src=$(cd "$(dirname "$0")/.." && pwd)
top=${top_builddir:-$(pwd)}
cc=${FUZZ_CC:-clang}
out="$top/_fuzz"
all="annotation derive wire path env tutti_run"
targets=${*:-$all}
t0=$(date +%s)
mkdir -p "$out/crash"
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' > "$out/probe.c"
if ! $cc -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" 2>/dev/null; then
  echo "fuzz: $cc cannot build with -fsanitize=fuzzer (Debian: apt-get install clang)" >&2
  exit 77
fi
# Each target's sources beside its file in tests/fuzz/.
sources() {
  case "$1" in
    annotation) echo annotations/annotation.c annotations/region.c annotations/source.c \
      annotations/parts.c annotations/partition.c ;;
    derive) echo annotations/derive.c annotations/derive_base.c annotations/derive_walk.c \
      annotations/clang.c annotations/annotation.c annotations/region.c annotations/source.c ;;
    wire) echo runtime/job/wire.c ;;
    path) echo host/preload_path.c ;;
    env) echo runtime/base/env.c runtime/base/backend_select.c ;;
    tutti_run) ;;
    *) return 1 ;;
  esac
}
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I$top -I$src -I$src/include"
for t in $targets; do
  files=$(sources "$t") || { echo "fuzz: no target '$t' (targets: $all)" >&2; exit 2; }
  # shellcheck disable=SC2086
  (cd "$src" && $cc $flags "tests/fuzz/fuzz_$t.c" $files -o "$out/fuzz_$t" -ldl -lpthread) \
    > "$out/build-$t.log" 2>&1 || { cat "$out/build-$t.log"; echo "fuzz: building $t failed" >&2; exit 1; }
done
# tutti-run's own PATH (tests/fuzz/tutti-run-path.sh) and the build's vendor file.
sh "$src/tests/fuzz/tutti-run-path.sh" "$out/path"
export FUZZ_TUTTI_RUN="$top/tutti-run" FUZZ_TUTTI_PATH="$out/path"
export TUTTI_ICD="${TUTTI_ICD:-$top/tests/vendors/tutti.icd}"
# LeakSanitizer's reports of libclang's own allocations (C++ inside the library, none of them
# Tutti's: tt_derive disposes of every libclang object it makes) are left out for derive.
run() {
  t=$1
  mkdir -p "$out/corpus/$t"
  leaks=1
  [ "$t" = derive ] && leaks=0
  "$out/fuzz_$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -detect_leaks=$leaks \
    -artifact_prefix="$out/crash/$t-" -print_final_stats=1 \
    "$out/corpus/$t" "$src/tests/fuzz/corpus/$t" > "$out/$t.log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log")
  if [ $rc = 0 ]; then
    echo "fuzz: $t: ${runs:-0} inputs in ${seconds} s, nothing found"
  else
    crash=$(ls -t "$out/crash/$t-"* 2>/dev/null | head -n 1)
    grep -E "ERROR|property does not hold|SUMMARY" "$out/$t.log" | head -n 5 | sed 's/^/fuzz:   /'
    echo "fuzz: $t FAILED (exit $rc) on ${crash:-?}: replay with $out/fuzz_$t ${crash:-} ($out/$t.log)"
  fi
  return $rc
}
jobs=$(nproc 2>/dev/null || echo 2)
status=0
pids=""
n=0
for t in $targets; do
  run "$t" &
  pids="$pids $!"
  n=$((n + 1))
  # At most one target a core.
  if [ $n -ge "$jobs" ]; then
    for p in $pids; do wait "$p" || status=1; done
    pids=""
    n=0
  fi
done
for p in $pids; do wait "$p" || status=1; done
echo "fuzz: $(echo $targets | wc -w) target(s), $seconds s each, $(( $(date +%s) - t0 )) s in all"
exit $status
