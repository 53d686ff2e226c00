/* The vector addition of the SnuCL-D paper, Figure 3: C = A + B split over every GPU of the
 * platform, one buffer triple and one kernel per device. Plain OpenCL 1.2, self-checking.
 *
 * Usage: vecadd [--attach] [N]   (N: vector length, a power of two; default 2^22)
 * --attach: the paper's Figure 5, each buffer attached to the one device that uses it
 * (clAttachBufferToDevice, CL/tutti.h).
 * It asks for GPUs, as the paper's program does: on CPU-only machines run it with
 * TUTTI_DEVICE_TYPE=gpu, which makes Tutti present its CPU devices as GPUs. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NDEVS 64

static const char *kernel_source =
    "__kernel void vec_add(__global float *A,\n"
    "                      __global float *B,\n"
    "                      __global float *C,\n"
    "                      const unsigned int n)\n"
    "{\n"
    "  int id = get_global_id(0);\n"
    "  if (id < n) // Bound check\n"
    "    C[id] = A[id] + B[id];\n"
    "}\n";

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cl_int err_ = (call);                                                                         \
    if (err_ != CL_SUCCESS) {                                                                     \
      fprintf(stderr, "vecadd: %s failed: %d (line %d)\n", #call, err_, __LINE__);              \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

int main(int argc, char **argv)
{
  int attach = argc > 1 && !strcmp(argv[1], "--attach");
  if (attach) {
    argc--;
    argv++;
  }
  unsigned long N = argc > 1 ? strtoul(argv[1], NULL, 0) : 1ul << 22;
  if (N == 0 || (N & (N - 1)) != 0) {
    fprintf(stderr, "vecadd: N must be a power of two\n");
    return 2;
  }
  float *h_A = malloc(N * sizeof *h_A), *h_B = malloc(N * sizeof *h_B);
  float *h_C = malloc(N * sizeof *h_C);
  if (!h_A || !h_B || !h_C)
    return 1;
  for (unsigned long i = 0; i < N; i++) {
    h_A[i] = (float)(i % 1000) * 0.5f;
    h_B[i] = (float)(i % 777) * 2.0f;
    h_C[i] = -1.0f;
  }

  cl_platform_id platform;
  CHECK(clGetPlatformIDs(1, &platform, NULL));
  cl_uint ndevs = 0;
  cl_device_id devs[MAX_NDEVS];
  cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, MAX_NDEVS, devs, &ndevs);
  if (err == CL_DEVICE_NOT_FOUND) {
    fprintf(stderr, "vecadd: no GPU found (with Tutti, TUTTI_DEVICE_TYPE=gpu shows CPUs as GPUs)\n");
    return 1;
  }
  CHECK(err);
  if (ndevs > MAX_NDEVS)
    ndevs = MAX_NDEVS;
  /* The paper assumes a power of two number of devices. */
  while (ndevs & (ndevs - 1))
    ndevs--;
  if (N < ndevs) {
    fprintf(stderr, "vecadd: N must be at least the number of devices (%u)\n", ndevs);
    return 2;
  }

  cl_context ctxt = clCreateContext(0, ndevs, devs, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue cmdqs[MAX_NDEVS];
  for (cl_uint i = 0; i < ndevs; i++) {
    cmdqs[i] = clCreateCommandQueue(ctxt, devs[i], 0, &err);
    CHECK(err);
  }
  cl_program program = clCreateProgramWithSource(ctxt, 1, &kernel_source, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(program, ndevs, devs, "", NULL, NULL));
  cl_kernel kls[MAX_NDEVS];
  for (cl_uint i = 0; i < ndevs; i++) {
    kls[i] = clCreateKernel(program, "vec_add", &err);
    CHECK(err);
  }

  unsigned int n = (unsigned int)(N / ndevs); /* vector size per device */
  size_t size = n * sizeof(float);
  cl_mem d_A[MAX_NDEVS], d_B[MAX_NDEVS], d_C[MAX_NDEVS];
  for (cl_uint i = 0; i < ndevs; i++) {
    d_A[i] = clCreateBuffer(ctxt, CL_MEM_READ_ONLY, size, NULL, &err);
    CHECK(err);
    d_B[i] = clCreateBuffer(ctxt, CL_MEM_READ_ONLY, size, NULL, &err);
    CHECK(err);
    d_C[i] = clCreateBuffer(ctxt, CL_MEM_WRITE_ONLY, size, NULL, &err);
    CHECK(err);
    if (attach) {
      CHECK(clAttachBufferToDeviceTUTTI(d_A[i], devs[i]));
      CHECK(clAttachBufferToDeviceTUTTI(d_B[i], devs[i]));
      CHECK(clAttachBufferToDeviceTUTTI(d_C[i], devs[i]));
    }
  }
  for (cl_uint i = 0; i < ndevs; i++) {
    CHECK(clEnqueueWriteBuffer(cmdqs[i], d_A[i], CL_FALSE, 0, size, h_A + i * n, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(cmdqs[i], d_B[i], CL_FALSE, 0, size, h_B + i * n, 0, NULL, NULL));
  }
  size_t lws = 64, gws = (n + lws - 1) / lws * lws;
  for (cl_uint i = 0; i < ndevs; i++) {
    CHECK(clSetKernelArg(kls[i], 0, sizeof(cl_mem), &d_A[i]));
    CHECK(clSetKernelArg(kls[i], 1, sizeof(cl_mem), &d_B[i]));
    CHECK(clSetKernelArg(kls[i], 2, sizeof(cl_mem), &d_C[i]));
    CHECK(clSetKernelArg(kls[i], 3, sizeof(unsigned int), &n));
    CHECK(clEnqueueNDRangeKernel(cmdqs[i], kls[i], 1, NULL, &gws, &lws, 0, NULL, NULL));
  }
  for (cl_uint i = 0; i < ndevs; i++)
    CHECK(clFinish(cmdqs[i]));
  for (cl_uint i = 0; i < ndevs; i++)
    CHECK(clEnqueueReadBuffer(cmdqs[i], d_C[i], CL_TRUE, 0, size, h_C + i * n, 0, NULL, NULL));

  unsigned long bad = 0;
  for (unsigned long i = 0; i < N; i++)
    if (fabsf(h_C[i] - (h_A[i] + h_B[i])) > 1e-6f * fabsf(h_A[i] + h_B[i]))
      bad++;
  char pname[64] = "";
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
  printf("vecadd: C = A + B, N = %lu, on %u device%s of platform %s%s: %s", N, ndevs,
         ndevs == 1 ? "" : "s", pname, attach ? ", buffers attached" : "",
         bad ? "FAILED" : "PASSED");
  if (bad)
    printf(" (%lu wrong elements)", bad);
  printf("\n");

  for (cl_uint i = 0; i < ndevs; i++) {
    clReleaseMemObject(d_A[i]);
    clReleaseMemObject(d_B[i]);
    clReleaseMemObject(d_C[i]);
    clReleaseKernel(kls[i]);
    clReleaseCommandQueue(cmdqs[i]);
  }
  clReleaseProgram(program);
  clReleaseContext(ctxt);
  free(h_A);
  free(h_B);
  free(h_C);
  return bad ? 1 : 0;
}
