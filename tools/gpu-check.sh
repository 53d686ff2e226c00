#!/bin/sh
# Builds Tutti on a GPU machine from a tree whose configure was generated elsewhere (the GPU
# machines have no libtool), then shows the GPUs through Tutti and runs the demo, the API
# tests and the overhead benchmark on them. See doc/install.md and doc/testing.md ("On a GPU
# machine").
#   tools/gpu-check.sh [OUTDIR] [cluster|host|transfer|layouts]
#                                            logs go to OUTDIR (default: ./gpu-check-logs);
#                                            "cluster": only the parts of several GPUs;
#                                            "host": only the host layer, divergence checks,
#                                            traces and tutti-info --check on the GPUs;
#                                            "transfer": only GPU-to-GPU transfers between two
#                                            ranks against raw MPI, staged and mapped;
#                                            "layouts": the host's GPUs as 1 rank with all, 2
#                                            ranks, ..., a rank each: tests/cluster/cluster,
#                                            tests/api/api, the collectives, the split apps and
#                                            spilling k-means (each device's budget half its
#                                            data), then the split apps 10 times a rank each;
#                                            a line per run, "FAILED" where one did not pass
set -u
cd "$(dirname "$0")/.."
out=${1:-$PWD/gpu-check-logs}
only=${2:-all}
mkdir -p "$out"
log() { echo "== $*"; }

log "machine"
nvidia-smi -L 2>&1 | head -n 8
ls /etc/OpenCL/vendors 2>&1
# Headers: the system's, or a copy carried along in .carry/include.
extra_cppflags=""
[ -f /usr/include/CL/cl.h ] || extra_cppflags="-I$PWD/.carry/include"
# The link name libOpenCL.so may be missing where only the runtime library is installed.
extra_ldflags=""
if ! ls /usr/lib/x86_64-linux-gnu/libOpenCL.so /usr/lib64/libOpenCL.so /usr/local/cuda/lib64/libOpenCL.so >/dev/null 2>&1; then
  mkdir -p /tmp/tt-lib
  ln -sf "$(ldconfig -p | sed -n 's/.*libOpenCL.so.1.*=> //p' | head -n 1)" /tmp/tt-lib/libOpenCL.so
  extra_ldflags="-L/tmp/tt-lib"
fi

log "build"
if [ "$only" = transfer ]; then
  if ! { ./configure CPPFLAGS="$extra_cppflags" LDFLAGS="$extra_ldflags" &&
         make -j"$(nproc)" libtutti.la libtutti-host.la tutti-run bench/cluster tests/vendors/tutti.icd; } \
       >"$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    exit 1
  fi
  export TUTTI_ICD=$PWD/tests/vendors/tutti.icd TUTTI_BACKENDS=nvidia
  ompi_info --param btl vader --level 9 2>/dev/null | grep -i "single_copy" | head -n 3
  for staging in on off; do
    log "64 MiB between the GPUs of two ranks, TUTTI_STAGING=$staging"
    start=$(date +%s)
    TUTTI_STAGING=$staging timeout 60 ./tutti-run -n 2 ./bench/cluster 64 9 2000 > "$out/transfer.log" 2>&1
    echo "exit $? after $(( $(date +%s) - start )) s"
    grep -E "transfer|tiny|virtual|crashed|^/" "$out/transfer.log" | head -n 30
  done
  log "1 MiB (one piece): the latency of a transfer"
  timeout 60 ./tutti-run -n 2 ./bench/cluster 1 9 100 2>&1 | grep transfer
  exit 0
fi
if [ "$only" = layouts ]; then
  if ! { ./configure CPPFLAGS="$extra_cppflags" LDFLAGS="$extra_ldflags" &&
         make -j"$(nproc)" libtutti.la libtutti-host.la tutti-run tests/vendors/tutti.icd \
           tests/cluster/cluster tests/api/api tests/cluster/collective apps/split; } >"$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    exit 1
  fi
  # GPUS, BACKEND and KMEANS (the k-means scale, 512 MiB of points at 1024) override what
  # the host shows (a try of this script on CPU devices, say).
  export TUTTI_ICD=$PWD/tests/vendors/tutti.icd TUTTI_BACKENDS=${BACKEND:-nvidia}
  export TT_TEST_BACKEND=${BACKEND:-nvidia}
  n=${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")}
  if [ "${n:-0}" -lt 1 ]; then
    echo "gpu-check.sh layouts: no GPU found (set GPUS)" >&2
    exit 2
  fi
  visible=$(seq -s, 0 $((n - 1)))
  kscale=${KMEANS:-1024}
  failed=0
  # name ranks command...: one line, the run's output in OUTDIR.
  run() {
    name=$1 ranks=$2
    shift 2
    file="$out/$(echo "$name" | tr -c 'a-zA-Z0-9\n' '-').log"
    start=$(date +%s)
    CUDA_VISIBLE_DEVICES=$visible timeout 120 ./tutti-run -n "$ranks" "$@" >"$file" 2>&1
    rc=$?
    oks=$(grep -c '^ok' "$file")
    bad=$(grep -c '^not ok\|^FAILED' "$file")
    verdict=passed
    if [ $rc -ne 0 ] || [ "$bad" -ne 0 ] || [ "$oks" -eq 0 ]; then
      verdict=FAILED
      failed=$((failed + 1))
    fi
    echo "$name: $verdict (exit $rc, $oks ok, $bad not ok, $(( $(date +%s) - start )) s)"
  }
  r=1
  while [ "$r" -le "$n" ]; do
    if [ $((n % r)) -eq 0 ]; then
      lay="$r rank(s) x $((n / r)) GPU(s)"
      run "$lay: tests/cluster/cluster" "$r" ./tests/cluster/cluster
      run "$lay: tests/api/api" "$r" ./tests/api/api
      run "$lay: tests/cluster/collective" "$r" ./tests/cluster/collective
      run "$lay: split apps" "$r" env JACOBI_ITERS=20 ./apps/split all 4
      # k-means' points (kscale / 2 MiB), split only (no device could hold them whole): each
      # device holds 1/n of them, its budget half that.
      run "$lay: spilling k-means" "$r" env TUTTI_DEVICE_MEM=$((kscale * 256 / n))K \
        SPLIT_PER_DEVICE=4 SPLIT_ONLY=1 ./apps/split kmeans "$kscale"
    fi
    r=$((r * 2))
  done
  for i in 1 2 3 4 5 6 7 8 9 10; do
    run "$n rank(s) x 1 GPU: split apps, run $i of 10" "$n" env JACOBI_ITERS=20 ./apps/split all 4
  done
  echo "$failed run(s) failed"
  exit $((failed != 0))
fi
if ! { ./configure --prefix=/tmp/tt-inst CPPFLAGS="$extra_cppflags" LDFLAGS="$extra_ldflags" &&
       make -j"$(nproc)" && make -j"$(nproc)" tests/api/api tests/api/same tests/cluster/cluster bench/overhead bench/cluster apps/vecadd tests/vendors/tutti.icd tests/host/host_app tests/api/diverge tests/cluster/trace_check &&
       make install; } >"$out/build.log" 2>&1; then
  tail -n 40 "$out/build.log"
  exit 1
fi
echo "built and installed into /tmp/tt-inst"

# Two loaders live there: CUDA's Khronos loader (the default, reads OCL_ICD_FILENAMES) and
# ocl-icd (reads OCL_ICD_VENDORS). Tutti must work under both.
ocl_icd=/lib/x86_64-linux-gnu/libOpenCL.so.1

ngpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
if [ "$only" = host ]; then
  export TUTTI_ICD=$PWD/tests/vendors/tutti.icd TUTTI_BACKENDS=nvidia
  n=$ngpus
  [ "$n" -ge 2 ] || n=1
  log "tutti-info --check on $n GPU rank(s)"
  timeout 120 ./tutti-run -n "$n" ./tutti-info --check 2>&1
  log "host layer: seeded from the clock and /dev/urandom, a result file, on $n GPU rank(s)"
  rm -f /tmp/tt-host.txt
  timeout 120 ./tutti-run -n "$n" ./tests/host/host_app /tmp/tt-host.txt /tmp/tt-host-dir 2>&1
  echo "exit $?; the file:"; cat /tmp/tt-host.txt
  log "divergence on $n GPU rank(s)"
  timeout 60 ./tutti-run -n "$n" ./tests/api/diverge 2>&1 | grep -v "^$" | head -n 3
  log "trace of the demo on $n GPU rank(s)"
  timeout 120 ./tutti-run -n "$n" --trace "$out/demo-trace.json" ./apps/vecadd 2>&1
  ./tests/cluster/trace_check "$out/demo-trace.json" "$n" vec_add "$n" 2>&1
  grep -o '"name":"vec_add"[^}]*}' "$out/demo-trace.json" | head -n 4
  log "the check's cost on the GPUs (tiny kernels, check off then on)"
  for c in 0 1 0 1; do TUTTI_CHECK=$c timeout 120 ./tutti-run -n "$n" ./bench/cluster 1 5 20000 2>&1 | grep -A1 "tiny kernels" | sed "s/^/check=$c: /"; done
  exit 0
fi

if [ "$only" != cluster ]; then
log "tutti-info (default loader)"
/tmp/tt-inst/bin/tutti-info 2>&1
log "tutti-info (ocl-icd)"
LD_PRELOAD=$ocl_icd /tmp/tt-inst/bin/tutti-info 2>&1

log "demo: vector addition on the GPUs, through tutti-run"
/tmp/tt-inst/bin/tutti-run -n 1 ./apps/vecadd 2>&1

export OCL_ICD_VENDORS=$PWD/tests/vendors OCL_ICD_FILENAMES=$PWD/.libs/libtutti.so
log "API tests on the NVIDIA GPU"
TUTTI_BACKENDS=nvidia TT_TEST_BACKEND=nvidia timeout 300 ./tests/api/api 2>&1
log "API tests on every backend at once (PoCL CPU and NVIDIA GPU in one context)"
POCL_DEVICES=pthread TT_TEST_BACKEND=any timeout 300 ./tests/api/api 2>&1
log "same results through NVIDIA directly and through Tutti"
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/nv.icd
LD_PRELOAD=$ocl_icd OCL_ICD_VENDORS=/tmp/nv.icd ./tests/api/same > "$out/same-nvidia.txt" 2>&1
TUTTI_BACKENDS=nvidia LD_PRELOAD=$ocl_icd ./tests/api/same > "$out/same-tutti.txt" 2>&1
if cmp -s "$out/same-nvidia.txt" "$out/same-tutti.txt"; then echo "identical"; else
  echo "DIFFERENT:"; cat "$out/same-nvidia.txt" "$out/same-tutti.txt"; fi

log "overhead against NVIDIA's own platform"
TUTTI_BACKENDS=nvidia BASELINE_LIB=/usr/local/nvidia/lib64/libnvidia-opencl.so.1 \
  LD_PRELOAD=$ocl_icd top_builddir=$PWD sh bench/run-overhead.sh --baseline NVIDIA --heavy 200000 --items 4194304 2>&1
fi

if [ "$ngpus" -ge 2 ]; then
  log "cluster: $ngpus GPUs, one rank each"
  TUTTI_BACKENDS=nvidia /tmp/tt-inst/bin/tutti-run -n "$ngpus" /tmp/tt-inst/bin/tutti-info 2>&1
  TUTTI_BACKENDS=nvidia /tmp/tt-inst/bin/tutti-run -n "$ngpus" ./apps/vecadd 2>&1
  log "cluster tests on the GPUs, one rank each"
  TUTTI_BACKENDS=nvidia TUTTI_ICD=$PWD/tests/vendors/tutti.icd timeout 120 ./tutti-run -n "$ngpus" ./tests/cluster/cluster 2>&1
  TUTTI_STAGING=off TUTTI_BACKENDS=nvidia TUTTI_ICD=$PWD/tests/vendors/tutti.icd timeout 120 ./tutti-run -n "$ngpus" ./tests/cluster/cluster 2>&1
  log "cluster tests on every device (CPU and GPUs) over $ngpus ranks"
  TUTTI_ICD=$PWD/tests/vendors/tutti.icd timeout 200 ./tutti-run -n "$ngpus" ./tests/cluster/cluster 2>&1
  log "transfer between the GPUs of two ranks (pinned staging, then maps), and tiny kernels"
  TUTTI_BACKENDS=nvidia TUTTI_ICD=$PWD/tests/vendors/tutti.icd timeout 120 ./tutti-run -n 2 ./bench/cluster 64 15 20000 2>&1
  TUTTI_STAGING=off TUTTI_BACKENDS=nvidia TUTTI_ICD=$PWD/tests/vendors/tutti.icd timeout 120 ./tutti-run -n 2 ./bench/cluster 64 15 1000 2>&1 | grep transfer
fi
