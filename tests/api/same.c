/* Prints what a program sees and computes through whatever platform comes first: device
 * names and a hash of the exact bytes several kernels produce. Run once through PoCL and
 * once through Tutti, the two outputs must be identical (tests/api/pocl-compare.test). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src =
    "__kernel void blend(__global const float *a, __global float *b, __global int *c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = sin(a[i]) * sqrt(a[i] + 1.0f) + exp(-a[i] / 100.0f);\n"
    "  c[i] = (int)(i * 2654435761u) ^ (int)(a[i] * 3.0f);\n"
    "}\n"
    "__kernel void reduce(__global const float *b, __global float *out, __local float *tmp) {\n"
    "  size_t l = get_local_id(0), g = get_global_id(0);\n"
    "  tmp[l] = b[g];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {\n"
    "    if (l < s) tmp[l] += tmp[l + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (l == 0) out[get_group_id(0)] = tmp[0];\n"
    "}\n";

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    cl_int e_ = (x);                                                                              \
    if (e_ != CL_SUCCESS) {                                                                       \
      printf("error %d at line %d\n", e_, __LINE__);                                            \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

int main(void)
{
  enum { N = 1 << 16, L = 64 };
  cl_platform_id p;
  CHECK(clGetPlatformIDs(1, &p, NULL));
  cl_device_id d[8];
  cl_uint nd;
  CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 8, d, &nd));
  for (cl_uint i = 0; i < nd && i < 8; i++) {
    char name[256];
    cl_uint cus;
    cl_ulong mem;
    CHECK(clGetDeviceInfo(d[i], CL_DEVICE_NAME, sizeof name, name, NULL));
    CHECK(clGetDeviceInfo(d[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL));
    CHECK(clGetDeviceInfo(d[i], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL));
    printf("device %u: %s, %u compute units, %llu bytes\n", i, name, cus, (unsigned long long)mem);
  }
  cl_int err;
  cl_context ctx = clCreateContext(NULL, nd, d, NULL, NULL, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
  cl_kernel mix = clCreateKernel(prog, "blend", &err);
  CHECK(err);
  cl_kernel red = clCreateKernel(prog, "reduce", &err);
  CHECK(err);
  static float a[N], b[N], sums[N / L];
  static int c[N];
  for (int i = 0; i < N; i++)
    a[i] = (float)i * 0.01f;
  uint64_t h = 1469598103934665603ull;
  for (cl_uint i = 0; i < nd; i++) {
    cl_command_queue q = clCreateCommandQueue(ctx, d[i], 0, &err);
    CHECK(err);
    cl_mem ma = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
    cl_mem mb = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof b, NULL, &err);
    cl_mem mc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof c, NULL, &err);
    cl_mem ms = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof sums, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(mix, 0, sizeof ma, &ma));
    CHECK(clSetKernelArg(mix, 1, sizeof mb, &mb));
    CHECK(clSetKernelArg(mix, 2, sizeof mc, &mc));
    size_t gws = N, lws = L;
    CHECK(clEnqueueNDRangeKernel(q, mix, 1, NULL, &gws, &lws, 0, NULL, NULL));
    CHECK(clSetKernelArg(red, 0, sizeof mb, &mb));
    CHECK(clSetKernelArg(red, 1, sizeof ms, &ms));
    CHECK(clSetKernelArg(red, 2, L * sizeof(float), NULL));
    CHECK(clEnqueueNDRangeKernel(q, red, 1, NULL, &gws, &lws, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, mb, CL_TRUE, 0, sizeof b, b, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, ms, CL_TRUE, 0, sizeof sums, sums, 0, NULL, NULL));
    h = fnv(b, sizeof b, h);
    h = fnv(c, sizeof c, h);
    h = fnv(sums, sizeof sums, h);
    printf("device %u: b[1000] = %.9g, sums[7] = %.9g\n", i, b[1000], sums[7]);
    clReleaseMemObject(ma);
    clReleaseMemObject(mb);
    clReleaseMemObject(mc);
    clReleaseMemObject(ms);
    clReleaseCommandQueue(q);
  }
  printf("hash of every result byte: %016llx\n", (unsigned long long)h);
  clReleaseKernel(mix);
  clReleaseKernel(red);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  return 0;
}
