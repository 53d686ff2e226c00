/* Programs and kernels. */
#include <stdint.h>

#include "tests/api/check.h"

static const char *good =
    "__kernel void add(__global const int *a, __global int *b, int k) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + k; }\n"
    "__kernel void scratch(__local int *l, __constant int *c, __global int *o) {\n"
    "  l[get_local_id(0)] = c[0]; barrier(CLK_LOCAL_MEM_FENCE); o[get_global_id(0)] = l[0]; }\n";

static int built_callbacks;
static void CL_CALLBACK on_built(cl_program p, void *data)
{
  built_callbacks++;
}

void test_program(struct fixture *f)
{
  cl_int err;
  cl_program p;
  const char *null_src = NULL;
  p = clCreateProgramWithSource(f->ctx, 0, &good, NULL, &err);
  CHECK(p == NULL && err == CL_INVALID_VALUE);
  p = clCreateProgramWithSource(f->ctx, 1, NULL, NULL, &err);
  CHECK(p == NULL && err == CL_INVALID_VALUE);
  p = clCreateProgramWithSource(f->ctx, 1, &null_src, NULL, &err);
  CHECK(p == NULL && err == CL_INVALID_VALUE);
  p = clCreateProgramWithSource((cl_context)GARBAGE, 1, &good, NULL, &err);
  CHECK(p == NULL && err == CL_INVALID_CONTEXT);

  /* Options: an unknown one is CL_INVALID_BUILD_OPTIONS on every backend (NVIDIA's own
   * answer is CL_BUILD_PROGRAM_FAILURE); defined and vendor options build. */
  p = clCreateProgramWithSource(f->ctx, 1, &good, NULL, &err);
  OK(err);
  CHECK_ERR(CL_INVALID_BUILD_OPTIONS, clBuildProgram(p, 0, NULL, "-cl-no-such-option", NULL, NULL));
  OK(clBuildProgram(p, 0, NULL, "-cl-mad-enable -D N=3 -DM=4 -I /tmp -w", NULL, NULL));
  OK(clReleaseProgram(p));

  /* A failing build: the error, a log naming the problem, and no kernels from it (PoCL
   * crashes when asked). */
  const char *bad = "__kernel void broken(__global int *x) { x[0] = undefined_name; }";
  p = clCreateProgramWithSource(f->ctx, 1, &bad, NULL, &err);
  OK(err);
  CHECK_ERR(CL_BUILD_PROGRAM_FAILURE, clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
  cl_build_status st;
  OK(clGetProgramBuildInfo(p, f->devs[0], CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL));
  CHECK(st == CL_BUILD_ERROR);
  char log[8192] = "";
  OK(clGetProgramBuildInfo(p, f->devs[0], CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL));
  CHECK(strstr(log, "undefined_name") != NULL);
  cl_kernel k = clCreateKernel(p, "broken", &err);
  CHECK(k == NULL && err == CL_INVALID_PROGRAM_EXECUTABLE);
  size_t nk;
  CHECK_ERR(CL_INVALID_PROGRAM_EXECUTABLE, clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL));
  OK(clReleaseProgram(p));

  /* Build errors of the arguments. */
  p = clCreateProgramWithSource(f->ctx, 1, &good, NULL, &err);
  OK(err);
  CHECK_ERR(CL_INVALID_VALUE, clBuildProgram(p, 1, NULL, NULL, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clBuildProgram(p, 0, f->devs, NULL, NULL, NULL));
  int data;
  CHECK_ERR(CL_INVALID_VALUE, clBuildProgram(p, 0, NULL, NULL, NULL, &data));
  cl_device_id notdev = (cl_device_id)f->ctx;
  CHECK_ERR(CL_INVALID_DEVICE, clBuildProgram(p, 1, &notdev, NULL, NULL, NULL));
  CHECK_ERR(CL_INVALID_PROGRAM, clBuildProgram((cl_program)GARBAGE, 0, NULL, NULL, NULL, NULL));
  built_callbacks = 0;
  OK(clBuildProgram(p, 0, NULL, "-DUNUSED=1", on_built, NULL));
  CHECK(built_callbacks == 1);
  char s[1024];
  OK(clGetProgramBuildInfo(p, f->devs[0], CL_PROGRAM_BUILD_OPTIONS, sizeof s, s, NULL));
  CHECK(!strcmp(s, "-DUNUSED=1"));
  CHECK_ERR(CL_INVALID_DEVICE, clGetProgramBuildInfo(p, notdev, CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clGetProgramBuildInfo(p, f->devs[0], 0x7777, sizeof st, &st, NULL));

  /* Program queries. */
  cl_uint u;
  cl_context c;
  OK(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL));
  CHECK(nk == 2);
  OK(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof s, s, NULL));
  CHECK(strstr(s, "add") && strstr(s, "scratch"));
  OK(clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof u, &u, NULL));
  CHECK(u == f->ndevs);
  OK(clGetProgramInfo(p, CL_PROGRAM_CONTEXT, sizeof c, &c, NULL));
  CHECK(c == f->ctx);
  size_t srclen = 0;
  OK(clGetProgramInfo(p, CL_PROGRAM_SOURCE, 0, NULL, &srclen));
  CHECK(srclen == strlen(good) + 1);
  CHECK_ERR(CL_INVALID_VALUE, clGetProgramInfo(p, 0x7777, sizeof u, &u, NULL));

  /* Binaries: one per device, and a program made from them runs. */
  size_t sizes[8] = {0};
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof sizes, sizes, NULL));
  unsigned char *bins[8] = {0};
  for (cl_uint i = 0; i < f->ndevs; i++) {
    CHECK(sizes[i] > 0);
    bins[i] = malloc(sizes[i]);
  }
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, f->ndevs * sizeof *bins, bins, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clGetProgramInfo(p, CL_PROGRAM_BINARIES, 1, bins, NULL));
  cl_int bstatus[8];
  cl_program pb = clCreateProgramWithBinary(f->ctx, f->ndevs, f->devs, sizes,
                                            (const unsigned char **)bins, bstatus, &err);
  OK(err);
  CHECK(bstatus[0] == CL_SUCCESS);
  OK(clBuildProgram(pb, 0, NULL, NULL, NULL, NULL));
  k = clCreateKernel(pb, "add", &err);
  OK(err);
  int a[4] = {1, 2, 3, 4}, b[4] = {0};
  cl_mem ma = clCreateBuffer(f->ctx, CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
  cl_mem mb = clCreateBuffer(f->ctx, 0, sizeof b, NULL, &err);
  int kk = 10;
  OK(clSetKernelArg(k, 0, sizeof ma, &ma));
  OK(clSetKernelArg(k, 1, sizeof mb, &mb));
  OK(clSetKernelArg(k, 2, sizeof kk, &kk));
  size_t gws = 4;
  OK(clEnqueueNDRangeKernel(f->q[0], k, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(f->q[0], mb, CL_TRUE, 0, sizeof b, b, 0, NULL, NULL));
  CHECK(b[0] == 11 && b[3] == 14);
  /* The program goes first, the kernel still works; the program lives until the kernel. */
  OK(clReleaseProgram(pb));
  OK(clEnqueueNDRangeKernel(f->q[0], k, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clFinish(f->q[0]));
  OK(clReleaseKernel(k));
  OK(clReleaseMemObject(ma));
  OK(clReleaseMemObject(mb));
  for (cl_uint i = 0; i < f->ndevs; i++)
    free(bins[i]);
  size_t zero = 0;
  const unsigned char *nob = NULL;
  pb = clCreateProgramWithBinary(f->ctx, 1, f->devs, &zero, &nob, NULL, &err);
  CHECK(pb == NULL && err == CL_INVALID_VALUE);
  size_t junklen = 5;
  const unsigned char *junk = (const unsigned char *)"junk";
  bstatus[0] = 1;
  pb = clCreateProgramWithBinary(f->ctx, 1, f->devs, &junklen, &junk, bstatus, &err);
  CHECK(pb == NULL);
  CHECK_ERR(CL_INVALID_BINARY, err);
  CHECK_ERR(CL_INVALID_BINARY, bstatus[0]);
  pb = clCreateProgramWithBuiltInKernels(f->ctx, 1, f->devs, "nothing", &err);
  CHECK(pb == NULL && err == CL_INVALID_VALUE);

  /* Kernels attached: no rebuild. */
  k = clCreateKernel(p, "add", &err);
  OK(err);
  CHECK_ERR(CL_INVALID_OPERATION, clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
  OK(clReleaseKernel(k));
  OK(clRetainProgram(p));
  OK(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof u, &u, NULL));
  CHECK(u == 2);
  OK(clReleaseProgram(p));
  OK(clReleaseProgram(p));

  /* Separate compilation: a header, a library, a link. */
  const char *hdr = "#define OFFSET 5\n";
  const char *lib = "#include \"off.h\"\nint offset(void) { return OFFSET; }\n";
  const char *main_src = "int offset(void);\n__kernel void k(__global int *o) { o[0] = offset(); }\n";
  cl_program ph = clCreateProgramWithSource(f->ctx, 1, &hdr, NULL, &err);
  cl_program pl = clCreateProgramWithSource(f->ctx, 1, &lib, NULL, &err);
  cl_program pm = clCreateProgramWithSource(f->ctx, 1, &main_src, NULL, &err);
  const char *hname = "off.h";
  CHECK_ERR(CL_INVALID_VALUE, clCompileProgram(pl, 0, NULL, NULL, 1, NULL, &hname, NULL, NULL));
  OK(clCompileProgram(pl, 0, NULL, NULL, 1, &ph, &hname, NULL, NULL));
  OK(clCompileProgram(pm, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL));
  cl_program in[2] = {pm, pl};
  cl_program linked = clLinkProgram(f->ctx, 0, NULL, NULL, 0, in, NULL, NULL, &err);
  CHECK(linked == NULL && err == CL_INVALID_VALUE);
  linked = clLinkProgram(f->ctx, 0, NULL, NULL, 2, in, NULL, NULL, &err);
  OK(err);
  k = clCreateKernel(linked, "k", &err);
  OK(err);
  cl_mem mo = clCreateBuffer(f->ctx, 0, sizeof(int), NULL, &err);
  OK(clSetKernelArg(k, 0, sizeof mo, &mo));
  OK(clEnqueueTask(f->q[0], k, 0, NULL, NULL));
  int out = 0;
  OK(clEnqueueReadBuffer(f->q[0], mo, CL_TRUE, 0, sizeof out, &out, 0, NULL, NULL));
  CHECK(out == 5);
  OK(clReleaseMemObject(mo));
  OK(clReleaseKernel(k));
  OK(clReleaseProgram(linked));
  OK(clReleaseProgram(ph));
  OK(clReleaseProgram(pl));
  OK(clReleaseProgram(pm));
}

void test_kernel(struct fixture *f)
{
  cl_int err;
  cl_program p = build_source(f, good);
  cl_kernel k = clCreateKernel(p, "nope", &err);
  CHECK(k == NULL && err == CL_INVALID_KERNEL_NAME);
  k = clCreateKernel(p, NULL, &err);
  CHECK(k == NULL && err == CL_INVALID_VALUE);
  k = clCreateKernel((cl_program)GARBAGE, "add", &err);
  CHECK(k == NULL && err == CL_INVALID_PROGRAM);

  cl_kernel ks[4];
  cl_uint n = 0;
  CHECK_ERR(CL_INVALID_VALUE, clCreateKernelsInProgram(p, 1, ks, &n));
  OK(clCreateKernelsInProgram(p, 4, ks, &n));
  CHECK(n == 2);
  for (cl_uint i = 0; i < n; i++)
    OK(clReleaseKernel(ks[i]));

  k = clCreateKernel(p, "scratch", &err);
  OK(err);
  char s[256];
  cl_uint u;
  cl_program kp;
  OK(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof s, s, NULL));
  CHECK(!strcmp(s, "scratch"));
  OK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof u, &u, NULL));
  CHECK(u == 3);
  OK(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof kp, &kp, NULL));
  CHECK(kp == p);
  CHECK_ERR(CL_INVALID_VALUE, clGetKernelInfo(k, 0x7777, sizeof u, &u, NULL));
  /* CL_KERNEL_ATTRIBUTES as declared inside __attribute__((...)), without whitespace, the
   * size that of the string (piglit's clGetKernelInfo). */
  {
    const char *hinted = "kernel __attribute__((work_group_size_hint(1, 1, 1))) "
                         "__attribute__((vec_type_hint(float4))) void hinted(int i) {}";
    cl_program hp = build_source(f, hinted);
    cl_kernel hk = clCreateKernel(hp, "hinted", &err);
    OK(err);
    size_t len = 0;
    OK(clGetKernelInfo(hk, CL_KERNEL_ATTRIBUTES, 0, NULL, &len));
    OK(clGetKernelInfo(hk, CL_KERNEL_ATTRIBUTES, sizeof s, s, NULL));
    /* Backends differ in which attributes they report (PoCL both, NVIDIA fewer); whatever
     * they report comes in the specification's form. */
    CHECK(len == strlen(s) + 1 && !strstr(s, "__attribute__") && !strstr(s, ", "));
    char backend[32] = "";
    OK(clGetDeviceInfo(f->devs[0], CL_DEVICE_TUTTI_BACKEND, sizeof backend, backend, NULL));
    CHECK(strcmp(backend, "pocl") || !strcmp(s, "work_group_size_hint(1,1,1) vec_type_hint(float4)"));
    OK(clReleaseKernel(hk));
    OK(clReleaseProgram(hp));
  }

  /* Argument errors: index, a garbage value where a buffer goes, sizes, local values. */
  cl_mem m = clCreateBuffer(f->ctx, 0, 64, NULL, &err);
  void *junk = (void *)(uintptr_t)0xdeadbeef;
  CHECK_ERR(CL_INVALID_ARG_INDEX, clSetKernelArg(k, 3, sizeof m, &m));
  CHECK_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 2, sizeof junk, &junk));
  CHECK_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 2, sizeof(cl_context), &f->ctx));
  CHECK_ERR(CL_INVALID_ARG_SIZE, clSetKernelArg(k, 2, 4, &m));
  static const char sixteen[16] = "alike everywhere"; /* the same bytes on every rank */
  CHECK_ERR(CL_INVALID_ARG_VALUE, clSetKernelArg(k, 0, 16, sixteen));
  CHECK_ERR(CL_INVALID_ARG_SIZE, clSetKernelArg(k, 0, 0, NULL));
  CHECK_ERR(CL_INVALID_KERNEL, clSetKernelArg((cl_kernel)GARBAGE, 0, 16, NULL));
  /* Not every argument set yet. */
  size_t gws = 4, lws = 4;
  OK(clSetKernelArg(k, 0, 4 * sizeof(int), NULL));
  CHECK_ERR(CL_INVALID_KERNEL_ARGS, clEnqueueNDRangeKernel(f->q[0], k, 1, NULL, &gws, &lws, 0, NULL, NULL));
  OK(clSetKernelArg(k, 1, sizeof m, &m));
  OK(clSetKernelArg(k, 2, sizeof m, NULL)); /* a NULL buffer is allowed */
  OK(clSetKernelArg(k, 2, sizeof m, &m));
  OK(clEnqueueNDRangeKernel(f->q[0], k, 1, NULL, &gws, &lws, 0, NULL, NULL));
  OK(clFinish(f->q[0]));

  /* Argument info: only when the program's own options asked for it (Tutti always builds
   * with -cl-kernel-arg-info for itself). */
  cl_kernel_arg_address_qualifier aq;
  cl_kernel_arg_type_qualifier tq;
  CHECK_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE,
            clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL));
  cl_program pi = clCreateProgramWithSource(f->ctx, 1, &good, NULL, &err);
  OK(err);
  OK(clBuildProgram(pi, 0, NULL, "-cl-kernel-arg-info", NULL, NULL));
  OK(clReleaseKernel(k));
  k = clCreateKernel(pi, "scratch", &err);
  OK(err);
  OK(clSetKernelArg(k, 0, 4 * sizeof(int), NULL));
  OK(clSetKernelArg(k, 1, sizeof m, &m));
  OK(clSetKernelArg(k, 2, sizeof m, &m));
  OK(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL));
  CHECK(aq == CL_KERNEL_ARG_ADDRESS_LOCAL);
  OK(clGetKernelArgInfo(k, 1, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL));
  CHECK(aq == CL_KERNEL_ARG_ADDRESS_CONSTANT);
  OK(clGetKernelArgInfo(k, 2, CL_KERNEL_ARG_NAME, sizeof s, s, NULL));
  CHECK(!strcmp(s, "o"));
  CHECK_ERR(CL_INVALID_ARG_INDEX, clGetKernelArgInfo(k, 9, CL_KERNEL_ARG_NAME, sizeof s, s, NULL));
  cl_kernel ka = clCreateKernel(pi, "add", &err);
  OK(clGetKernelArgInfo(ka, 0, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL));
  CHECK(tq & CL_KERNEL_ARG_TYPE_CONST);
  OK(clReleaseKernel(ka));

  /* Work-group info: for a device of the program; NULL only with one device. */
  size_t wg = 0;
  OK(clGetKernelWorkGroupInfo(k, f->devs[0], CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
  CHECK(wg >= 1);
  CHECK_ERR(CL_INVALID_DEVICE, clGetKernelWorkGroupInfo(k, (cl_device_id)f->ctx, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
  if (f->ndevs > 1)
    CHECK_ERR(CL_INVALID_DEVICE, clGetKernelWorkGroupInfo(k, NULL, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
  else
    OK(clGetKernelWorkGroupInfo(k, NULL, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));

  OK(clRetainKernel(k));
  OK(clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof u, &u, NULL));
  CHECK(u == 2);
  OK(clReleaseKernel(k));
  /* A released buffer left as an argument is refused, not used. */
  OK(clReleaseMemObject(m));
  CHECK_ERR(CL_INVALID_KERNEL_ARGS, clEnqueueNDRangeKernel(f->q[0], k, 1, NULL, &gws, &lws, 0, NULL, NULL));
  OK(clReleaseKernel(k));
  OK(clReleaseProgram(pi));
  OK(clReleaseProgram(p));
  CHECK_ERR(CL_INVALID_KERNEL, clReleaseKernel((cl_kernel)GARBAGE));
  CHECK_ERR(CL_INVALID_PROGRAM, clReleaseProgram((cl_program)GARBAGE));
}
