#!/bin/sh
# Spilling (bench/spill, doc/spill.md): with a budget of BUDGET MiB on the first device
# (TUTTI_DEVICE_MEM), a compute-bound sweep over data of 1x, 2x and 4x the budget (throughput
# relative to 1x: the loss of going past the device's memory), and a data-bound sweep at 2x
# (its time against moving every chunk out and back at the host<->device bandwidth measured in
# the same run: 1.0 is the bandwidth's bound). Then the compute-bound sweep again with the
# program waiting for each kernel (SPILL_SYNC=1) at 1x and 2x, with prefetch
# (TUTTI_LOOKAHEAD as given, else its default) and without (TUTTI_LOOKAHEAD=0): only prefetch
# then brings the next chunk in while a kernel runs. Medians of REPS runs. RANKS > 1 runs the same
# program on that many ranks (every rank's first device in use: the job's device 0 only).
# Usage: bench/run-spill.sh   (from the build directory; BUDGET default 64, CHUNK default
# BUDGET/8, PASSES default 4, REPS default 5; SPILL_ITERS: steps per element of the compute
# kernel, default 256: raise it on GPUs until the kernel outlasts moving its chunk)
set -e
top_builddir=${top_builddir:-$(pwd)}
export TUTTI_ICD=${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}
budget=${BUDGET:-64} chunk=${CHUNK:-$(( ${BUDGET:-64} / 8 ))} passes=${PASSES:-4} reps=${REPS:-5}
ranks=${RANKS:-1}
. "$(dirname "$0")/median.sh"
# run MODE DATA_MIB: the seconds of one run (checked exact), REPS times, median.
run() {
  times=
  for r in $(seq "$reps"); do
    out=$(TUTTI_DEVICE_MEM=${budget}M "$top_builddir/tutti-run" -n "$ranks" \
          "$top_builddir/bench/spill" "$1" "$2" "$chunk" "$passes" | head -n 1)
    echo "$out" | grep -q exact || { echo "bench/spill $1 $2: $out" >&2; return 1; }
    times="$times $(echo "$out" | sed -n 's/.*passes: \([0-9.]*\) s.*/\1/p')"
  done
  echo "$times" | median
}
echo "# budget ${budget} MiB, chunks of ${chunk} MiB, $passes passes (the first not timed), $ranks rank(s)"
t1=$(run compute "$budget")
for x in 1 2 4; do
  t=$(run compute $((budget * x)))
  awk -v x="$x" -v t="$t" -v t1="$t1" 'BEGIN { printf "compute %dx: %.3f s, throughput %.3f of 1x\n", x, t, t1 * x / t }'
done
out=$(TUTTI_DEVICE_MEM=${budget}M "$top_builddir/tutti-run" -n "$ranks" "$top_builddir/bench/spill" data $((budget * 2)) "$chunk" "$passes" | head -n 1)
echo "# $out"
t=$(run data $((budget * 2)))
bw=$(echo "$out" | sed -n 's/.*host<->device \([0-9.]*\) GB\/s.*/\1/p')
awk -v t="$t" -v bw="$bw" -v d="$((budget * 2))" -v p="$((passes - 1))" 'BEGIN {
  ideal = 2 * d * 1048576 * p / (bw * 1e9)
  printf "data 2x: %.3f s; moving every chunk out and back at %.3f GB/s takes %.3f s: %.3f of the bandwidth bound\n", t, bw, ideal, ideal / t }'
t1=$(SPILL_SYNC=1 run compute "$budget")
la=${TUTTI_LOOKAHEAD:-}
for ahead in "$la" 0; do
  t=$(SPILL_SYNC=1 TUTTI_LOOKAHEAD=$ahead run compute $((budget * 2)))
  awk -v t="$t" -v t1="$t1" -v a="${ahead:-default}" 'BEGIN { printf "compute 2x waiting for each kernel, TUTTI_LOOKAHEAD=%s: %.3f s, throughput %.3f of 1x (%.3f s)\n", a, t, t1 * 2 / t, t1 }'
done
