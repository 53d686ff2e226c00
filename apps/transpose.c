/* An FT-like transpose: an S x S matrix distributed by row blocks over every device, transposed
 * with clEnqueueAlltoAllBuffer (the communication step of the NAS FT benchmark, as SnuCL-D
 * runs it). Each device packs its rows into column blocks, the all-to-all exchanges the
 * blocks, each device unpacks the blocks it received transposed. Self-checking.
 * Usage: transpose [S]   (S: matrix size, a multiple of the number of devices; default 1024) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    cl_int e_ = (x);                                                                              \
    if (e_ != CL_SUCCESS) {                                                                       \
      fprintf(stderr, "transpose: %s failed: %d (line %d)\n", #x, e_, __LINE__);                 \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static const char *src =
    "__kernel void pack(__global const float *m, __global float *p, uint s, uint w)\n"
    "{ uint r = get_global_id(1), col = get_global_id(0);\n"
    "  p[(col / w) * w * w + r * w + col % w] = m[r * s + col]; }\n"
    "__kernel void unpack(__global const float *p, __global float *t, uint s, uint w)\n"
    "{ uint c = get_global_id(1), g = get_global_id(0);\n"
    "  t[c * s + g] = p[(g / w) * w * w + (g % w) * w + c]; }\n";

int main(int argc, char **argv)
{
  cl_uint S = argc > 1 ? (cl_uint)strtoul(argv[1], NULL, 0) : 1024;
  cl_platform_id p;
  cl_device_id d[64];
  cl_uint n;
  cl_int err, ranks = 1;
  CHECK(clGetPlatformIDs(1, &p, NULL));
  clGetPlatformInfo(p, CL_PLATFORM_TUTTI_RANKS, sizeof ranks, &ranks, NULL);
  CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 64, d, &n));
  if (S == 0 || S % n) {
    fprintf(stderr, "transpose: S (%u) must be a positive multiple of the %u devices\n", S, n);
    return 2;
  }
  cl_uint w = S / n;
  size_t part = (size_t)w * S * sizeof(float);
  cl_context ctx = clCreateContext(NULL, n, d, NULL, NULL, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
  cl_kernel pack = clCreateKernel(prog, "pack", &err), unpack = clCreateKernel(prog, "unpack", &err);
  CHECK(err);
  cl_command_queue q[64];
  cl_mem m[64], packed[64], recv[64], t[64];
  float *host = malloc(part);
  for (cl_uint i = 0; i < n; i++) {
    q[i] = clCreateCommandQueue(ctx, d[i], 0, &err);
    for (size_t k = 0; k < (size_t)w * S; k++)
      host[k] = (float)((i * w + k / S) * 4096 + k % S);
    m[i] = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, part, host, &err);
    packed[i] = clCreateBuffer(ctx, 0, part, NULL, &err);
    recv[i] = clCreateBuffer(ctx, 0, part, NULL, &err);
    t[i] = clCreateBuffer(ctx, 0, part, NULL, &err);
    CHECK(err);
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  size_t g[2] = {S, w};
  for (cl_uint i = 0; i < n; i++) {
    CHECK(clSetKernelArg(pack, 0, sizeof m[i], &m[i]));
    CHECK(clSetKernelArg(pack, 1, sizeof packed[i], &packed[i]));
    CHECK(clSetKernelArg(pack, 2, sizeof S, &S));
    CHECK(clSetKernelArg(pack, 3, sizeof w, &w));
    CHECK(clEnqueueNDRangeKernel(q[i], pack, 2, NULL, g, NULL, 0, NULL, NULL));
  }
  CHECK(clEnqueueAlltoAllBuffer(q, n, packed, recv, NULL, NULL, (size_t)w * w * sizeof(float), 0,
                                NULL, NULL));
  for (cl_uint j = 0; j < n; j++) {
    CHECK(clSetKernelArg(unpack, 0, sizeof recv[j], &recv[j]));
    CHECK(clSetKernelArg(unpack, 1, sizeof t[j], &t[j]));
    CHECK(clSetKernelArg(unpack, 2, sizeof S, &S));
    CHECK(clSetKernelArg(unpack, 3, sizeof w, &w));
    CHECK(clEnqueueNDRangeKernel(q[j], unpack, 2, NULL, g, NULL, 0, NULL, NULL));
  }
  for (cl_uint j = 0; j < n; j++)
    CHECK(clFinish(q[j]));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  size_t bad = 0;
  for (cl_uint j = 0; j < n; j++) {
    CHECK(clEnqueueReadBuffer(q[j], t[j], CL_TRUE, 0, part, host, 0, NULL, NULL));
    /* Row c of device j's part of T is column j*w + c of M. */
    for (size_t k = 0; k < (size_t)w * S; k++) {
      size_t row = k % S, col = j * w + k / S;
      bad += host[k] != (float)(row * 4096 + col);
    }
  }
  double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  printf("transpose: %u x %u floats over %u devices, %d rank%s: %.3f ms: %s\n", S, S, n, ranks,
         ranks == 1 ? "" : "s", s * 1e3, bad ? "FAILED" : "PASSED");
  for (cl_uint i = 0; i < n; i++) {
    clReleaseMemObject(m[i]);
    clReleaseMemObject(packed[i]);
    clReleaseMemObject(recv[i]);
    clReleaseMemObject(t[i]);
    clReleaseCommandQueue(q[i]);
  }
  clReleaseKernel(pack);
  clReleaseKernel(unpack);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  free(host);
  return bad ? 1 : 0;
}
