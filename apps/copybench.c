/* The copy microbenchmark of the SnuCL-D paper (section 4.2, Figure 6): N devices, N 16-byte
 * buffers B_0..B_{N-1}; in each iteration device D_i copies B_i to every other B_j with
 * clEnqueueCopyBuffer: N*(N-1) copies per iteration. Prints the time per iteration.
 * Usage: copybench [--attach] [iterations]   (--attach: B_i attached to D_i, Figure 5 style)
 * Self-checking: after the run every buffer must hold its last writer's stamp. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    cl_int e_ = (x);                                                                              \
    if (e_ != CL_SUCCESS) {                                                                       \
      fprintf(stderr, "copybench: %s failed: %d (line %d)\n", #x, e_, __LINE__);                 \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

int main(int argc, char **argv)
{
  int attach = argc > 1 && !strcmp(argv[1], "--attach");
  int iters = argc > 1 + attach ? atoi(argv[1 + attach]) : 100;
  if (iters < 1)
    iters = 100;
  cl_platform_id p;
  cl_device_id d[64];
  cl_uint n = 0;
  cl_int err, ranks = 1;
  CHECK(clGetPlatformIDs(1, &p, NULL));
  clGetPlatformInfo(p, CL_PLATFORM_TUTTI_RANKS, sizeof ranks, &ranks, NULL);
  CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 64, d, &n));
  cl_context ctx = clCreateContext(NULL, n, d, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q[64];
  cl_mem b[64];
  for (cl_uint i = 0; i < n; i++) {
    q[i] = clCreateCommandQueue(ctx, d[i], 0, &err);
    CHECK(err);
    int stamp[4] = {(int)i, (int)i, (int)i, (int)i};
    b[i] = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof stamp, stamp, &err);
    CHECK(err);
    if (attach)
      clAttachBufferToDevice(b[i], d[i]); /* the paper's plain name, through -lOpenCL */
  }
  for (cl_uint i = 0; i < n; i++)
    CHECK(clFinish(q[i]));
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int it = 0; it < iters; it++)
    for (cl_uint i = 0; i < n; i++)
      for (cl_uint j = 0; j < n; j++)
        if (i != j)
          CHECK(clEnqueueCopyBuffer(q[i], b[i], b[j], 0, 0, 16, 0, NULL, NULL));
  for (cl_uint i = 0; i < n; i++)
    CHECK(clFinish(q[i]));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  /* In the last iteration B_j was written last by the highest i != j... then B_j itself
   * copied on: it holds the stamp of the last device that wrote it before it was read. Check
   * what enqueue order implies: after the loop B_j holds B_{n-1}'s stamp (j < n-1) or
   * B_{n-2}'s (j = n-1), where B_{n-1} itself held B_{n-2}'s... computed on the host. */
  int model[64][4];
  for (cl_uint i = 0; i < n; i++)
    for (int k = 0; k < 4; k++)
      model[i][k] = (int)i;
  for (int it = 0; it < iters; it++)
    for (cl_uint i = 0; i < n; i++)
      for (cl_uint j = 0; j < n; j++)
        if (i != j)
          memcpy(model[j], model[i], sizeof model[i]);
  int bad = 0;
  for (cl_uint j = 0; j < n; j++) {
    int got[4];
    CHECK(clEnqueueReadBuffer(q[j], b[j], CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    bad += memcmp(got, model[j], sizeof got) != 0;
  }
  printf("copybench: %u devices, %d rank%s%s, %d iterations of %u copies: %.3f ms per iteration "
         "(%.1f us per copy): %s\n", n, ranks, ranks == 1 ? "" : "s", attach ? ", attached" : "",
         iters, n * (n - 1), s * 1e3 / iters, s * 1e6 / iters / (n > 1 ? n * (n - 1) : 1),
         bad ? "FAILED" : "PASSED");
  for (cl_uint i = 0; i < n; i++) {
    clReleaseMemObject(b[i]);
    clReleaseCommandQueue(q[i]);
  }
  clReleaseContext(ctx);
  return bad ? 1 : 0;
}
