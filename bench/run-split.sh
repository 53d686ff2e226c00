#!/bin/sh
# Split launches (apps/split, doc/split.md), two figures:
#  scaling: weak scaling on CPU devices, 1 rank with 1 PoCL device of THREADS threads against
#    RANKS ranks with one such device each and RANKS times the work; efficiency = T1 / TR of
#    the split launches (medians of REPS runs). Also RANKS copies of the 1-rank job at once
#    (time TC): T1 / TC is what the host loses with that many busy cores, TC / TR Tutti's part.
#  gpus: weak scaling on the host's GPUs (BACKEND, default nvidia): one rank with GPU 0 alone
#    (CUDA_VISIBLE_DEVICES=0) against GPUS ranks with one GPU each and against one rank with
#    GPUS GPUs, GPUS times the work (GPUS default 2; the GPUS-GPU runs see GPUs 0 to GPUS-1
#    only). An app may carry its own scale per GPU: nbody:16384. A second baseline: the first
#    part of the GPUS-GPU work alone on GPU 0 through the backend's own platform (SPLIT_PART):
#    what one GPU's share costs without Tutti, where a part's shape is not the one-GPU run's
#    (not for k-means: a part alone iterates on centroids of its own points, other work).
#  hetero: one rank with every device of the host's backends (a GPU and PoCL's CPU device, say):
#    the split launches with balancing on and off (TUTTI_BALANCE; WARMUPS launches first, each
#    followed by clFinish, default 6) against the whole launch on the first device.
#  overhead: one GPU (BACKEND, default nvidia), the same kernel launched by the backend directly
#    (its own platform, no Tutti) against a split launch of 1 part and of 8 parts on that GPU.
#  auto: kernels without annotations (doc/split.md, "Automatic splitting"): RANKS ranks
#    (default 4; BACKEND's devices, default pocl with THREADS threads each) run each app
#    unchanged through the aggregate device (plain launches), annotated as written, with its
#    pragmas removed (derived regions), and with every written buffer merged
#    (TUTTI_AUTO_SPLIT=merge-all); speed ratios against the annotated run, ROUNDS times
#    alternating (default 1). An app may carry its own scale: nbody:262144.
# Usage: bench/run-split.sh scaling|gpus|hetero|overhead|auto [APPS]   (from the build directory; BASE scales
# every size, default 8; VENDOR_LIB: the backend's library for the direct run)
set -e
. "$(dirname "$0")/median.sh"
what=${1:-scaling}
apps=${2:-nbody kmeans jacobi}
top_builddir=${top_builddir:-$(pwd)}
export TUTTI_ICD=${TUTTI_ICD:-$top_builddir/tests/vendors/tutti.icd}
reps=${REPS:-5} base=${BASE:-8}
split_ms() { sed -n "s/^ok $1: .*split over [0-9]* queues \([0-9.]*\) ms.*/\1/p"; }
whole_ms() { sed -n "s/^ok $1: whole on 1 device \([0-9.]*\) ms.*/\1/p"; }
part_ms() { sed -n "s/^ok $1: one part on 1 device \([0-9.]*\) ms.*/\1/p"; }
# vendor: settings under which a program sees the backends' own platforms only (VENDOR_LIB:
# the backend's library, else the system's vendor files but Tutti's).
vendor_only() {
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  if [ -n "${VENDOR_LIB:-}" ]; then echo "$VENDOR_LIB" > "$dir/v.icd"
  else for f in /etc/OpenCL/vendors/*.icd; do grep -q libtutti "$f" || cp "$f" "$dir/"; done; fi
  vendor="OCL_ICD_VENDORS=$dir OCL_ICD_FILENAMES=$(cat "$dir"/*.icd | head -n 1)"
}
case $what in
scaling)
  threads=${THREADS:-4} ranks=${RANKS:-4}
  # PoCL's CPU driver takes its thread count from POCL_CPU_MAX_CU_COUNT (older releases:
  # POCL_MAX_PTHREAD_COUNT); the device's compute units show what it got.
  export POCL_CPU_MAX_CU_COUNT=$threads POCL_MAX_PTHREAD_COUNT=$threads
  POCL_DEVICES=pthread "$top_builddir/tutti-info" 2>/dev/null | sed -n 's/^/# /p' | head -n 3
  for app in $apps; do
    t1=$(POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=$threads SPLIT_REPS=$reps \
         "$top_builddir/tutti-run" -n 1 "$top_builddir/apps/split" "$app" "$base" | split_ms "$app")
    tr=$(POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=$threads SPLIT_REPS=$reps \
         "$top_builddir/tutti-run" -n "$ranks" "$top_builddir/apps/split" "$app" $((base * ranks)) |
         split_ms "$app")
    # The machine's own share: RANKS copies of the 1-rank job at once (no MPI between them,
    # as many busy cores as the RANKS-rank job): T1 against their median is what sharing the
    # host's cores, caches and clock costs; the crowded time against TR is Tutti's part.
    outs=""
    for c in $(seq "$ranks"); do
      o=$(mktemp)
      outs="$outs $o"
      POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=$threads SPLIT_REPS=$reps \
        "$top_builddir/tutti-run" -n 1 "$top_builddir/apps/split" "$app" "$base" > "$o" &
    done
    wait
    tc=$(for o in $outs; do split_ms "$app" < "$o"; done | median)
    rm -f $outs
    echo "$app: 1 rank x 1 device ($threads threads) ${t1} ms, $ranks ranks x 1 device, ${ranks}x the work, ${tr} ms: weak-scaling efficiency $(echo "$t1 $tr" | awk '{printf "%.3f", $1 / $2}'); $ranks 1-rank jobs at once ${tc} ms: the host's share $(echo "$t1 $tc" | awk '{printf "%.3f", $1 / $2}'), Tutti's $(echo "$tc $tr" | awk '{printf "%.3f", $1 / $2}')"
  done ;;
gpus)
  n=${GPUS:-2}
  visible=$(seq -s, 0 $((n - 1)))
  export TUTTI_BACKENDS=${BACKEND:-nvidia}
  vendor_only
  for entry in $apps; do
    app=${entry%%:*} scale=$base
    [ "$app" = "$entry" ] || scale=${entry#*:}
    t1=$(CUDA_VISIBLE_DEVICES=0 SPLIT_ONLY=1 SPLIT_REPS=$reps "$top_builddir/tutti-run" -n 1 \
         "$top_builddir/apps/split" "$app" "$scale" | split_ms "$app")
    tr=$(CUDA_VISIBLE_DEVICES=$visible SPLIT_ONLY=1 SPLIT_REPS=$reps "$top_builddir/tutti-run" \
         -n "$n" "$top_builddir/apps/split" "$app" $((scale * n)) | split_ms "$app")
    t1n=$(CUDA_VISIBLE_DEVICES=$visible SPLIT_ONLY=1 SPLIT_REPS=$reps "$top_builddir/tutti-run" \
          -n 1 "$top_builddir/apps/split" "$app" $((scale * n)) | split_ms "$app")
    part="one part alone: not comparable (each iteration follows its part's own centroids)"
    if [ "$app" != kmeans ]; then
      tp=$(env $vendor CUDA_VISIBLE_DEVICES=0 SPLIT_PART=0/$n SPLIT_REPS=$reps \
           "$top_builddir/apps/split" "$app" $((scale * n)) | part_ms "$app")
      part="one part alone on the backend directly ${tp:-?} ms: ${n}x1 $(echo "${tp:-0} $tr" | awk '{printf "%.3f", $1 / $2}'), 1x$n $(echo "${tp:-0} $t1n" | awk '{printf "%.3f", $1 / $2}') of it"
    fi
    echo "$app (scale $scale per GPU): 1 GPU ${t1} ms; $n ranks x 1 GPU ${tr} ms: efficiency $(echo "$t1 $tr" | awk '{printf "%.3f", $1 / $2}'); 1 rank x $n GPUs ${t1n} ms: efficiency $(echo "$t1 $t1n" | awk '{printf "%.3f", $1 / $2}'); $part"
  done ;;
hetero)
  "$top_builddir/tutti-info" 2>/dev/null | sed 's/^/# /' || true
  for app in $apps; do
    on=$(SPLIT_WARMUPS=${WARMUPS:-6} SPLIT_REPS=$reps "$top_builddir/tutti-run" -n 1 \
         "$top_builddir/apps/split" "$app" "$base")
    off=$(TUTTI_BALANCE=off SPLIT_WARMUPS=${WARMUPS:-6} SPLIT_REPS=$reps \
          "$top_builddir/tutti-run" -n 1 "$top_builddir/apps/split" "$app" "$base")
    w=$(echo "$on" | whole_ms "$app") b=$(echo "$on" | split_ms "$app") e=$(echo "$off" | split_ms "$app")
    echo "$app (scale $base): whole on the first device ${w} ms; split over every device: balanced ${b} ms ($(echo "$w $b" | awk '{printf "%.2f", $1 / $2}')x the whole), equal parts ${e} ms ($(echo "$w $e" | awk '{printf "%.2f", $1 / $2}')x)"
  done ;;
auto)
  backend=${BACKEND:-pocl} ranks=${RANKS:-4} threads=${THREADS:-4}
  export POCL_CPU_MAX_CU_COUNT=$threads POCL_MAX_PTHREAD_COUNT=$threads
  for spec in $apps; do
    app=${spec%%:*} scale=$((base * ranks))
    [ "$spec" = "$app" ] || scale=${spec#*:}
    agg() { # settings...: the median time of the app's plain launches through the aggregate device
      env "$@" TUTTI_BACKENDS=$backend TUTTI_AGGREGATE=all SPLIT_PLAIN=1 SPLIT_REPS=$reps \
        "$top_builddir/tutti-run" -n "$ranks" "$top_builddir/apps/split" "$app" "$scale" |
        whole_ms "$app"
    }
    for round in $(seq "${ROUNDS:-1}"); do
      written=$(agg SPLIT_NOPRAGMA=0)
      derived=$(agg SPLIT_NOPRAGMA=1)
      merged=$(agg SPLIT_NOPRAGMA=1 TUTTI_AUTO_SPLIT=merge-all)
      echo "$app $scale: $ranks ranks ($backend), annotated ${written} ms; derived ${derived} ms" \
           "($(echo "$written $derived" | awk '{printf "%.2f", $1 / $2}') of annotated);" \
           "merged writes ${merged} ms ($(echo "$written $merged" | awk '{printf "%.2f", $1 / $2}'))"
    done
  done ;;
overhead)
  backend=${BACKEND:-nvidia}
  vendor_only
  for app in $apps; do
    direct=$(env $vendor SPLIT_REPS=$reps "$top_builddir/apps/split" "$app" "$base" | whole_ms "$app")
    one=$(TUTTI_BACKENDS=$backend SPLIT_REPS=$reps "$top_builddir/tutti-run" -n 1 \
          "$top_builddir/apps/split" "$app" "$base" | split_ms "$app")
    eight=$(TUTTI_BACKENDS=$backend SPLIT_QUEUES=8 SPLIT_REPS=$reps "$top_builddir/tutti-run" -n 1 \
            "$top_builddir/apps/split" "$app" "$base" | split_ms "$app")
    echo "$app: $backend directly ${direct} ms; through Tutti, 1 part ${one} ms ($(echo "$one $direct" | awk '{printf "%+.1f%%", ($1 / $2 - 1) * 100}')), 8 parts on the one device ${eight} ms ($(echo "$eight $direct" | awk '{printf "%+.1f%%", ($1 / $2 - 1) * 100}'))"
  done ;;
*)
  echo "usage: bench/run-split.sh scaling|gpus|overhead [apps]" >&2
  exit 2 ;;
esac
