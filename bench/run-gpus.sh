#!/bin/sh
# GPUs of one host (doc/testing.md, "Latest figures"): each figure beside its
# baseline, measured in the same run.
#  1. Copies between GPUs, 1 MiB and 256 MiB: within one rank (bench/transfer --peer: Tutti
#     against NVIDIA's own platform and against the CUDA driver's copy) and between two ranks
#     of the host (bench/transfer: against MPI_Send and the CUDA driver's copy); reads reaching
#     every rank against MPI_Bcast, at 2 ranks and at GPUS ranks.
#  2. Weak scaling at 2, 4, ... GPUS GPUs (bench/run-split.sh gpus): one GPU alone against a
#     rank per GPU and one rank with every GPU, the work times the GPUs; Jacobi sweeps 80
#     times (JACOBI_ITERS) and the product is computed 40 times (MATMUL_REPS), so that one
#     GPU takes 50 ms or more with the default sizes. N-body's kernel runs a thread per body:
#     at 4 GPUs each part has half the threads of the one-GPU run, each twice as long, and
#     the part alone on NVIDIA's platform (printed beside it) says what that shape costs the
#     GPU itself. Its default scale (2M bodies on one GPU, 4 s) gives every part of 4 GPUs
#     1M threads, where that costs an H200 3.5% (at 1M bodies on one GPU, parts of 512K
#     threads, 5.6%: 0.944 at 4 GPUs; at 256K, 0.89: doc/testing.md).
#  3. Strong scaling at GPUS GPUs: N-body and Jacobi whole on GPU 0 against split over every
#     GPU, one rank with all and a rank per GPU, at sizes where a sweep (Jacobi) takes
#     milliseconds on one GPU. N-body's size is the 4-GPU weak run's (2M bodies): its
#     quarters fill an H200 as the weak parts do; at 65536 (256K bodies) a quarter alone on
#     NVIDIA's platform takes 0.32 of the whole, which bounds 4 GPUs to 3.1x (doc/testing.md).
# Usage: bench/run-gpus.sh   (from the build directory; GPUS: how many GPUs, default what
# nvidia-smi lists; APPS: the weak-scaling apps with their scale per GPU; STRONG: the
# strong-scaling apps with their sizes; WEAK_GPUS: the GPU counts of the weak scaling, default
# 2, 4, ... up to GPUS; BASELINE: the platform of the one-rank copies, default NVIDIA; ROUNDS,
# REPS; TUTTI_CUDA and other settings pass through)
set -e
top_builddir=${top_builddir:-$(pwd)}
export top_builddir TUTTI_BACKENDS=${BACKEND:-nvidia}
gpus=${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)}
if [ "${gpus:-0}" -lt 2 ]; then
  echo "run-gpus.sh: needs 2 GPUs or more (found ${gpus:-0}; set GPUS)" >&2
  exit 2
fi
rounds=${ROUNDS:-7}
weak=${WEAK_GPUS:-}
if [ -z "$weak" ]; then
  n=2
  while [ "$n" -le "$gpus" ]; do
    weak="$weak $n"
    n=$((n * 2))
  done
fi
for n in $weak; do
  k=$n
  case $k in *[!0-9]*) k=0 ;; esac
  if [ "$k" -lt 2 ] || [ "$k" -gt "$gpus" ]; then
    echo "run-gpus.sh: WEAK_GPUS: $n is not between 2 and $gpus" >&2
    exit 2
  fi
done
echo "# run-gpus.sh: $gpus GPU(s), TUTTI_CUDA=${TUTTI_CUDA:-default}, $(date -u +%Y-%m-%d)"
nvidia-smi -L 2>/dev/null | head -n "$gpus" | sed 's/ (UUID.*//; s/^/# /' || true

echo "## copies between GPUs, one rank (ratios: baseline time / Tutti's time)"
# NVIDIA's driver registers no .icd file on some hosts: the loader gets its library named.
BASELINE_LIB=${BASELINE_LIB:-$([ "${BASELINE:-NVIDIA}" = NVIDIA ] && echo libnvidia-opencl.so.1)}
. "$(dirname "$0")/both-loaders.sh"
# shellcheck disable=SC2086
CUDA_VISIBLE_DEVICES=0,1 env $both_loaders "$top_builddir/bench/transfer" --peer \
  --baseline "${BASELINE:-NVIDIA}" --rounds "$rounds" || echo "(one rank: not measured)"
for n in 2 $([ "$gpus" -gt 2 ] && echo "$gpus"); do
  echo "## $n ranks, one GPU each"
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1))) TUTTI_ICD="$icd" "$top_builddir/tutti-run" \
    -n "$n" "$top_builddir/bench/transfer" --rounds "$rounds"
done

for n in $weak; do
  echo "## weak scaling, $n GPUs (efficiency: one GPU's time / the time with $n GPUs and ${n}x the work)"
  GPUS=$n REPS=${REPS:-3} JACOBI_ITERS=${JACOBI_ITERS:-80} MATMUL_REPS=${MATMUL_REPS:-40} \
    sh "$(dirname "$0")/run-split.sh" gpus \
    "${APPS:-nbody:1048576 kmeans:512 matmul:8192 jacobi:2048}"
done

echo "## strong scaling, $gpus GPUs (whole on GPU 0 / split over $gpus)"
visible=$(seq -s, 0 $((gpus - 1)))
for entry in ${STRONG:-nbody:1048576 jacobi:8192}; do
  app=${entry%%:*} size=${entry#*:}
  for r in 1 "$gpus"; do
    printf '%s %s, %s rank(s): ' "$app" "$size" "$r"
    CUDA_VISIBLE_DEVICES=$visible JACOBI_ITERS=${JACOBI_ITERS:-80} SPLIT_REPS=${REPS:-3} \
      TUTTI_ICD="$icd" "$top_builddir/tutti-run" -n "$r" "$top_builddir/apps/split" "$app" "$size" |
      grep -E "^(ok|not ok)" || echo "failed"
  done
done
