/* The planning cost of split launches: a launch split into PARTS parts (a CYCLIC distribution
 * dealing PARTS chunks over every device of the job) enqueued LAUNCHES times, against the same
 * kernel launched unsplit on one device, timed on the calling rank (enqueue calls only; the
 * work is waited for afterwards). Run under tutti-run; rank 0 prints.
 *
 * Usage: split-plan [PARTS [LAUNCHES]]   (defaults 256 and 1000) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cl_int err_ = (call);                                                                         \
    if (err_ != CL_SUCCESS) {                                                                     \
      fprintf(stderr, "split-plan: %s failed: %d (line %d)\n", #call, err_, __LINE__);          \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static const char *source =
    "#pragma tutti global i => write c[i]\n"
    "__kernel void fill(__global int *c) { size_t i = get_global_id(0); c[i] = (int)i; }\n";

int main(int argc, char **argv)
{
  size_t parts = argc > 1 ? strtoul(argv[1], NULL, 0) : 256;
  int launches = argc > 2 ? atoi(argv[2]) : 1000;
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  int rank = r ? atoi(r) : 0;
  cl_platform_id plat;
  cl_device_id devs[64];
  cl_uint ndev;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 64, devs, &ndev));
  cl_int err;
  cl_context ctx = clCreateContext(NULL, ndev, devs, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue qs[64];
  for (cl_uint i = 0; i < ndev; i++) {
    qs[i] = clCreateCommandQueue(ctx, devs[i], 0, &err);
    CHECK(err);
  }
  cl_program p = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
  cl_kernel k = clCreateKernel(p, "fill", &err);
  CHECK(err);
  size_t chunk = 64, n = parts * chunk, local = 64;
  cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(int), NULL, &err);
  CHECK(err);
  cl_tutti_distribution d = {CL_TUTTI_DIST_CYCLIC, 1, sizeof(int), {n, 0, 0}, {chunk, 0, 0}, 0, NULL};
  CHECK(clSetBufferDistributionTUTTI(c, &d));
  CHECK(clSetKernelArg(k, 0, sizeof c, &c));
  double t_split = 0, t_whole = 0;
  for (int round = 0; round < 2; round++) {
    /* Warm-up, then timed. */
    CHECK(clEnqueueSplitNDRangeKernelTUTTI(ndev, qs, k, 1, NULL, &n, &local, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(qs[0], k, 1, NULL, &n, &local, 0, NULL, NULL));
    for (cl_uint i = 0; i < ndev; i++)
      CHECK(clFinish(qs[i]));
    double t0 = now();
    for (int l = 0; l < launches; l++)
      CHECK(clEnqueueSplitNDRangeKernelTUTTI(ndev, qs, k, 1, NULL, &n, &local, 0, NULL, NULL));
    t_split = now() - t0;
    for (cl_uint i = 0; i < ndev; i++)
      CHECK(clFinish(qs[i]));
    t0 = now();
    for (int l = 0; l < launches; l++)
      CHECK(clEnqueueNDRangeKernel(qs[0], k, 1, NULL, &n, &local, 0, NULL, NULL));
    t_whole = now() - t0;
    for (cl_uint i = 0; i < ndev; i++)
      CHECK(clFinish(qs[i]));
  }
  int *back = malloc(n * sizeof *back), good = 1;
  CHECK(clEnqueueReadBuffer(qs[0], c, CL_TRUE, 0, n * sizeof(int), back, 0, NULL, NULL));
  for (size_t i = 0; i < n; i++)
    good &= back[i] == (int)i;
  if (rank == 0)
    printf("split-plan: %zu parts over %u devices, %d launches: %.1f us per launch, %.2f us per "
           "part (%zu parts run here, %zu planned for other ranks); unsplit launch %.1f us: "
           "ratio %.1f; result %s\n",
           parts, ndev, launches, t_split / launches * 1e6, t_split / launches / parts * 1e6,
           parts / ndev, parts - parts / ndev, t_whole / launches * 1e6, t_split / t_whole,
           good ? "right" : "WRONG");
  free(back);
  clReleaseMemObject(c);
  clReleaseKernel(k);
  clReleaseProgram(p);
  for (cl_uint i = 0; i < ndev; i++)
    clReleaseCommandQueue(qs[i]);
  clReleaseContext(ctx);
  return good ? 0 : 1;
}
