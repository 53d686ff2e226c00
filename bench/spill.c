/* Spilling benchmark (doc/spill.md): an unmodified program that sweeps over its data in
 * chunks, one buffer per chunk, several passes, on the first device. Run it with a budget
 * (TUTTI_DEVICE_MEM) and data at 1x, 2x, 4x of it (bench/run-spill.sh): beyond 1x every
 * pass evicts and brings back every chunk.
 *
 * Usage: spill MODE DATA_MIB CHUNK_MIB PASSES
 *   MODE compute: each element goes through ITERS dependent integer steps (compute-bound;
 *   the environment's SPILL_ITERS, default 256);
 *   MODE data: each element gets 1 added (bound by moving the bytes).
 *   With SPILL_SYNC=1 in the environment the program waits for each kernel (clFinish), as
 *   programs that read results between launches do: only prefetch (TUTTI_LOOKAHEAD) then
 *   brings the next chunk in while a kernel runs. SPILL_DEVICES=N spreads the chunks over the
 *   platform's first N devices (chunk c on device c mod N, a queue each): with one budget per
 *   device, every device then spills its share (several GPUs, or one per rank).
 * Prints the seconds of the passes after the first (which fills the device), the bytes swept
 * per second, and for MODE data the host<->device bandwidth measured on one chunk (a write
 * and a read through the same platform), and the checksum checked against the host. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    cl_int e_ = (x);                                                                              \
    if (e_ != CL_SUCCESS) {                                                                       \
      fprintf(stderr, "spill: %s failed: %d (line %d)\n", #x, e_, __LINE__);                     \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)


static const char *source =
    "__kernel void sweep_compute(__global uint *x, uint iters)\n"
    "{ size_t k = get_global_id(0); uint v = x[k];\n"
    "  for (uint i = 0; i < iters; i++) v = v * 1664525u + 1013904223u;\n"
    "  x[k] = v; }\n"
    "__kernel void sweep_data(__global uint *x) { x[get_global_id(0)] += 1u; }\n";

static cl_uint iters = 256;

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static cl_uint step(cl_uint v, int compute)
{
  if (!compute)
    return v + 1u;
  for (cl_uint i = 0; i < iters; i++)
    v = v * 1664525u + 1013904223u;
  return v;
}

int main(int argc, char **argv)
{
  if (argc != 5 || (strcmp(argv[1], "compute") && strcmp(argv[1], "data"))) {
    fprintf(stderr, "usage: spill compute|data DATA_MIB CHUNK_MIB PASSES\n");
    return 2;
  }
  int compute = !strcmp(argv[1], "compute");
  size_t data = strtoull(argv[2], NULL, 10) << 20, chunk = strtoull(argv[3], NULL, 10) << 20;
  int passes = atoi(argv[4]);
  if (getenv("SPILL_ITERS"))
    iters = (cl_uint)strtoul(getenv("SPILL_ITERS"), NULL, 10);
  int sync = getenv("SPILL_SYNC") && atoi(getenv("SPILL_SYNC"));
  size_t nchunks = data / chunk, n = chunk / sizeof(cl_uint);
  cl_uint ndev = getenv("SPILL_DEVICES") ? (cl_uint)atoi(getenv("SPILL_DEVICES")) : 1;
  cl_platform_id plat;
  cl_device_id devs[16];
  cl_command_queue qs[16];
  cl_uint have = 0;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 16, devs, &have));
  if (ndev < 1 || ndev > have) {
    fprintf(stderr, "spill: SPILL_DEVICES=%u, the platform has %u device(s)\n", ndev, have);
    return 2;
  }
  cl_context ctx = clCreateContext(NULL, ndev, devs, NULL, NULL, &err);
  CHECK(err);
  for (cl_uint d = 0; d < ndev; d++) {
    qs[d] = clCreateCommandQueue(ctx, devs[d], 0, &err);
    CHECK(err);
  }
  cl_command_queue q = qs[0];
  cl_program p = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, ndev, devs, NULL, NULL, NULL));
  cl_kernel k = clCreateKernel(p, compute ? "sweep_compute" : "sweep_data", &err);
  CHECK(err);
  if (compute)
    CHECK(clSetKernelArg(k, 1, sizeof iters, &iters));
  cl_uint *host = malloc(chunk);
  for (size_t i = 0; i < n; i++)
    host[i] = (cl_uint)i;
  /* Host <-> device bandwidth on one chunk, median of 5 writes and reads. */
  double bw = 0;
  if (!compute) {
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, chunk, NULL, &err);
    CHECK(err);
    double best[5];
    for (int r = 0; r < 5; r++) {
      double t0 = now();
      CHECK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, chunk, host, 0, NULL, NULL));
      CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, chunk, host, 0, NULL, NULL));
      best[r] = now() - t0;
    }
    for (int i = 0; i < 5; i++)
      for (int j = i + 1; j < 5; j++)
        if (best[j] < best[i]) {
          double t = best[i];
          best[i] = best[j];
          best[j] = t;
        }
    bw = 2.0 * chunk / best[2];
    clReleaseMemObject(b);
  }
  cl_mem *bufs = calloc(nchunks, sizeof *bufs);
  for (size_t c = 0; c < nchunks; c++) {
    bufs[c] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, chunk, host, &err);
    CHECK(err);
  }
  double t0 = 0;
  for (int pass = 0; pass < passes; pass++) {
    if (pass == 1) {
      for (cl_uint d = 0; d < ndev; d++)
        CHECK(clFinish(qs[d]));
      t0 = now();
    }
    for (size_t c = 0; c < nchunks; c++) {
      CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &bufs[c]));
      CHECK(clEnqueueNDRangeKernel(qs[c % ndev], k, 1, NULL, &n, NULL, 0, NULL, NULL));
      if (sync)
        CHECK(clFinish(qs[c % ndev]));
    }
  }
  for (cl_uint d = 0; d < ndev; d++)
    CHECK(clFinish(qs[d]));
  double secs = now() - t0;
  /* Every chunk went through `passes` steps from the same start. */
  int ok = 1;
  cl_uint *got = malloc(chunk);
  for (size_t c = 0; c < nchunks && ok; c++) {
    CHECK(clEnqueueReadBuffer(qs[c % ndev], bufs[c], CL_TRUE, 0, chunk, got, 0, NULL, NULL));
    /* A sample of each chunk: 64 elements of the compute kernel's (slow on the host). */
    size_t samples = compute ? 64 : 1024, stride = n / samples > 4093 ? n / samples + 1 : 4093;
    for (size_t i = 0; i < n && ok; i += stride) {
      cl_uint v = (cl_uint)i;
      for (int pass = 0; pass < passes; pass++)
        v = step(v, compute);
      ok = got[i] == v;
    }
  }
  size_t swept = data * (size_t)(passes - 1);
  printf("%s %zu MiB in %zu chunks on %u device(s), %d passes: %.3f s, %.3f GB/s swept", argv[1],
         data >> 20, nchunks, ndev, passes - 1, secs, swept / secs / 1e9);
  if (!compute)
    printf(", host<->device %.3f GB/s", bw / 1e9);
  printf(", %s\n", ok ? "exact" : "WRONG");
  for (size_t c = 0; c < nchunks; c++)
    clReleaseMemObject(bufs[c]);
  clReleaseKernel(k);
  clReleaseProgram(p);
  for (cl_uint d = 0; d < ndev; d++)
    clReleaseCommandQueue(qs[d]);
  clReleaseContext(ctx);
  free(bufs);
  free(host);
  free(got);
  return !ok;
}
