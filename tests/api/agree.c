/* Every rank gives the same answer to the same call, and every host wait waits for what the
 * specification says (issue: wrong bytes, stale events and ranks that disagree). One program
 * run by tutti-run on every rank; each check compares the answers of all ranks through MPI
 * (which Tutti started), so a rank that answers differently fails the group even when rank 0
 * is right. Rank 0 prints one TAP line per group.
 *
 *   agree [groups] [rounds]   groups: names separated by commas, or "all"; rounds: of the
 *                             FFT pattern (300) */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/tutti.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/ranks.h"

static int failures, rank, nranks;

/* v is the same on every rank and equal to want. */
#define AGREE(v, want)                                                                            \
  do {                                                                                            \
    int64_t v_ = (int64_t)(v);                                                                    \
    CHECK(same_everywhere((uint64_t)v_));                                                         \
    if (v_ != (int64_t)(want)) {                                                                  \
      fprintf(stderr, "# rank %d: %s:%d: %s is %lld, expected %lld\n", rank, __FILE__, __LINE__,  \
              #v, (long long)v_, (long long)(want));                                              \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)

static cl_platform_id platform;
static cl_device_id devs[64];
static cl_uint ndevs;
static cl_context ctx;
static cl_command_queue q[64];
static cl_program prog;
static cl_kernel kfill, kscalar, kreqd, klocal, kadd;
static int rounds = 300;

static const char *src =
    "__kernel void fill(__global double *x, double v) { x[get_global_id(0)] = v + get_global_id(0); }\n"
    "__kernel void scalar(__global long *out, long v) { if (get_global_id(0) == 0) out[0] = v; }\n"
    "__kernel __attribute__((reqd_work_group_size(4, 1, 1)))\n"
    "void reqd(__global int *x) { x[get_global_id(0)] = 1; }\n"
    "__kernel void uselocal(__global int *x, __local int *scratch) {\n"
    "  scratch[get_local_id(0)] = (int)get_global_id(0);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  x[get_global_id(0)] = scratch[get_local_id(0)] + 1;\n"
    "}\n"
    "__kernel void add(__global int *x, int k) { x[get_global_id(0)] += k; }\n";

/* The multi-device FFT pattern: per device a kernel, then a non-blocking read into freshly
 * malloc'd memory; then per device clFinish and a check of that memory, which is freed at
 * once (bytes landing late would land in freed memory). */
static void test_finish(void)
{
  enum { N = 4096 };
  cl_int err;
  cl_mem m[64];
  for (cl_uint d = 0; d < ndevs; d++) {
    m[d] = clCreateBuffer(ctx, 0, N * sizeof(double), NULL, &err);
    OK(err);
  }
  size_t gws = N;
  int bad = 0;
  for (int r = 0; r < rounds; r++) {
    double *host[64];
    for (cl_uint d = 0; d < ndevs; d++) {
      double v = 1000.0 * r + d;
      OK(clSetKernelArg(kfill, 0, sizeof m[d], &m[d]));
      OK(clSetKernelArg(kfill, 1, sizeof v, &v));
      OK(clEnqueueNDRangeKernel(q[d], kfill, 1, NULL, &gws, NULL, 0, NULL, NULL));
      host[d] = malloc(N * sizeof(double));
      for (int i = 0; i < N; i++)
        host[d][i] = -1.0;
      OK(clEnqueueReadBuffer(q[d], m[d], CL_FALSE, 0, N * sizeof(double), host[d], 0, NULL, NULL));
    }
    for (cl_uint d = 0; d < ndevs; d++) {
      OK(clFinish(q[d]));
      double v = 1000.0 * r + d;
      for (int i = 0; i < N; i++)
        if (host[d][i] != v + i) {
          if (!bad++)
            fprintf(stderr, "# rank %d: round %d device %u: [%d] is %g after clFinish, not %g\n",
                    rank, r, d, i, host[d][i], v + i);
          break;
        }
      free(host[d]);
    }
  }
  CHECK(bad == 0);
  for (cl_uint d = 0; d < ndevs; d++)
    OK(clReleaseMemObject(m[d]));
}

static cl_int status_of(cl_event e)
{
  cl_int s = 1234;
  OK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL));
  return s;
}

/* Profiling times exist and are alike on every rank (the owner's). */
static void check_profile(cl_event e)
{
  cl_ulong t[4] = {0};
  for (int i = 0; i < 4; i++) {
    cl_int err = clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED + i, sizeof t[i], &t[i], NULL);
    AGREE(err, CL_SUCCESS);
    CHECK(same_everywhere((uint64_t)t[i]));
  }
  CHECK(t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3] && t[3] > 0);
}

/* Event status after clFinish, clWaitForEvents and blocking commands whose wait list holds
 * events of devices of other ranks: CL_COMPLETE everywhere, with profiling times. */
static void test_events(void)
{
  enum { N = 1024 };
  cl_int err;
  size_t gws = N;
  cl_mem m = clCreateBuffer(ctx, 0, N * sizeof(double), NULL, &err);
  OK(err);
  double v = 3;
  OK(clSetKernelArg(kfill, 0, sizeof m, &m));
  OK(clSetKernelArg(kfill, 1, sizeof v, &v));
  double *back = malloc(N * sizeof(double));
  for (cl_uint d = 0; d < ndevs; d++) {
    cl_event k, r;
    OK(clEnqueueNDRangeKernel(q[d], kfill, 1, NULL, &gws, NULL, 0, NULL, &k));
    OK(clEnqueueReadBuffer(q[d], m, CL_FALSE, 0, N * sizeof(double), back, 0, NULL, &r));
    OK(clFinish(q[d]));
    AGREE(status_of(k), CL_COMPLETE);
    AGREE(status_of(r), CL_COMPLETE);
    CHECK(back[N - 1] == 3.0 + N - 1);
    check_profile(k);
    check_profile(r);
    OK(clReleaseEvent(k));
    OK(clReleaseEvent(r));
    /* clWaitForEvents on the kernel of another device, then the events before it. */
    cl_event k1, k2;
    OK(clEnqueueNDRangeKernel(q[d], kfill, 1, NULL, &gws, NULL, 0, NULL, &k1));
    OK(clEnqueueNDRangeKernel(q[d], kfill, 1, NULL, &gws, NULL, 0, NULL, &k2));
    OK(clWaitForEvents(1, &k2));
    AGREE(status_of(k2), CL_COMPLETE);
    check_profile(k2);
    OK(clReleaseEvent(k1));
    OK(clReleaseEvent(k2));
    /* A blocking read on a third device waiting for a kernel of this one. */
    cl_uint third = (d + ndevs / 2 + 1) % ndevs;
    OK(clEnqueueNDRangeKernel(q[d], kfill, 1, NULL, &gws, NULL, 0, NULL, &k));
    memset(back, 0, N * sizeof(double));
    OK(clEnqueueReadBuffer(q[third], m, CL_TRUE, 0, N * sizeof(double), back, 1, &k, NULL));
    AGREE(status_of(k), CL_COMPLETE);
    CHECK(back[7] == 10.0);
    OK(clReleaseEvent(k));
  }
  free(back);
  OK(clReleaseMemObject(m));
}

/* A program that polls statuses and chooses its next call by the answers (the conformance
 * suite's event tests do): every rank hears the same answer at the same poll, so every
 * rank makes the same calls. A command held by a user event is polled hundreds of times,
 * then released and polled until complete, with a flush or a marker on another queue made
 * by each answer; a non-blocking read whose bytes reach every rank is polled until complete
 * and its bytes are there when it says so; a kernel waiting on another rank's kernel too. */
static void test_polls(void)
{
  enum { N = 1 << 14, HELD = 300 };
  cl_int err;
  size_t gws = N;
  cl_mem m = clCreateBuffer(ctx, 0, N * sizeof(double), NULL, &err);
  OK(err);
  double *back = malloc(N * sizeof(double));
  long polls = 0, markers = 0;
  for (cl_uint d = 0; d < ndevs; d++) {
    cl_command_queue other = q[(d + 1) % ndevs];
    cl_event gate = clCreateUserEvent(ctx, &err);
    OK(err);
    double v = 10.0 * d;
    cl_event k, r;
    OK(clSetKernelArg(kfill, 0, sizeof m, &m));
    OK(clSetKernelArg(kfill, 1, sizeof v, &v));
    OK(clEnqueueNDRangeKernel(q[d], kfill, 1, NULL, &gws, NULL, 1, &gate, &k));
    OK(clFlush(q[d]));
    for (int i = 0; i < HELD; i++) {
      cl_int s = status_of(k);
      CHECK(s > CL_COMPLETE);
      polls++;
      if (s == CL_QUEUED)
        OK(clFlush(other));
    }
    OK(clSetUserEventStatus(gate, CL_COMPLETE));
    for (cl_int s = status_of(k); s != CL_COMPLETE && s >= 0; s = status_of(k)) {
      polls++;
      cl_event mk;
      /* What a program does meanwhile depends on the answer. */
      if (s == CL_RUNNING) {
        OK(clEnqueueMarkerWithWaitList(other, 0, NULL, &mk));
        OK(clReleaseEvent(mk));
        markers++;
      } else {
        OK(clFlush(q[d]));
      }
    }
    AGREE(status_of(k), CL_COMPLETE);
    memset(back, 0, N * sizeof(double));
    OK(clEnqueueReadBuffer(q[d], m, CL_FALSE, 0, N * sizeof(double), back, 0, NULL, &r));
    OK(clFlush(q[d]));
    while (status_of(r) > CL_COMPLETE)
      polls++;
    /* Complete means the bytes are in this rank's memory. */
    CHECK(back[0] == v && back[N - 1] == v + N - 1);
    /* A kernel on another device waiting for this one: its status moves alike too. */
    cl_event k2;
    OK(clEnqueueNDRangeKernel(q[d], kfill, 1, NULL, &gws, NULL, 0, NULL, &k));
    OK(clEnqueueNDRangeKernel(other, kfill, 1, NULL, &gws, NULL, 1, &k, &k2));
    OK(clFlush(q[d]));
    OK(clFlush(other));
    while (status_of(k2) > CL_COMPLETE)
      polls++;
    AGREE(status_of(k), CL_COMPLETE);
    OK(clReleaseEvent(k));
    OK(clReleaseEvent(k2));
    OK(clReleaseEvent(r));
    OK(clReleaseEvent(gate));
  }
  OK(clFinish(q[0]));
  CHECK(same_everywhere((uint64_t)polls));
  CHECK(same_everywhere((uint64_t)markers));
  for (cl_uint d = 0; d < ndevs; d++)
    OK(clFinish(q[d]));
  if (rank == 0)
    printf("# polls: %ld answers, %ld markers made on them\n", polls, markers);
  free(back);
  OK(clReleaseMemObject(m));
}

/* Random 8-byte scalars, some of them equal to the addresses of live objects or to small
 * numbers (a registry must never take them for handles). */
static void test_scalars(void)
{
  cl_int err;
  cl_mem out = clCreateBuffer(ctx, 0, sizeof(cl_long), NULL, &err);
  OK(err);
  OK(clSetKernelArg(kscalar, 0, sizeof out, &out));
  uint64_t x = 88172645463325252ull;
  const int64_t specials[] = {0, 1, 2, -1, 8, (int64_t)(intptr_t)out, (int64_t)(intptr_t)ctx,
                              (int64_t)(intptr_t)q[0], (int64_t)(intptr_t)kscalar};
  int bad = 0;
  for (int i = 0; i < 1000000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    int64_t v = i < 9 ? specials[i] : (i & 1) ? (int64_t)x : (int64_t)(x & 0xffff);
    bad += clSetKernelArg(kscalar, 1, sizeof v, &v) != CL_SUCCESS;
  }
  CHECK(bad == 0);
  /* The last value is what the kernel sees: the registry's own marker value is just a
   * number. */
  int64_t v = 1;
  OK(clSetKernelArg(kscalar, 1, sizeof v, &v));
  size_t one = 1;
  OK(clEnqueueNDRangeKernel(q[ndevs - 1], kscalar, 1, NULL, &one, NULL, 0, NULL, NULL));
  cl_long got = 0;
  OK(clEnqueueReadBuffer(q[0], out, CL_TRUE, 0, sizeof got, &got, 0, NULL, NULL));
  if (got != v)
    fprintf(stderr, "# rank %d: the kernel saw %lld, not %lld\n", rank, (long long)got, (long long)v);
  CHECK(got == v);
  OK(clReleaseMemObject(out));
}

/* Errors that only a backend would find are found alike on every rank. */
static void test_errors(void)
{
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, 0, 64 * sizeof(int), NULL, &err);
  OK(err);
  OK(clSetKernelArg(kreqd, 0, sizeof m, &m));
  size_t gws = 64, lws = 8, good = 4;
  for (cl_uint d = 0; d < ndevs; d++) {
    /* reqd_work_group_size(4,1,1) broken: CL_INVALID_WORK_GROUP_SIZE on every rank. */
    AGREE(clEnqueueNDRangeKernel(q[d], kreqd, 1, NULL, &gws, &lws, 0, NULL, NULL),
          CL_INVALID_WORK_GROUP_SIZE);
    AGREE(clEnqueueNDRangeKernel(q[d], kreqd, 1, NULL, &gws, NULL, 0, NULL, NULL),
          CL_INVALID_WORK_GROUP_SIZE);
    AGREE(clEnqueueNDRangeKernel(q[d], kreqd, 1, NULL, &gws, &good, 0, NULL, NULL), CL_SUCCESS);
    /* A marker with a bad wait list. */
    cl_event bogus = (cl_event)&gws;
    AGREE(clEnqueueMarkerWithWaitList(q[d], 1, &bogus, NULL), CL_INVALID_EVENT_WAIT_LIST);
    AGREE(clEnqueueMarkerWithWaitList(q[d], 0, &bogus, NULL), CL_INVALID_EVENT_WAIT_LIST);
    AGREE(clEnqueueMarkerWithWaitList(q[d], 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
    OK(clFinish(q[d]));
  }
  /* Arguments of the wrong size. */
  int i4 = 1;
  int64_t i8 = 1;
  AGREE(clSetKernelArg(kadd, 1, sizeof i8, &i8), CL_INVALID_ARG_SIZE);
  AGREE(clSetKernelArg(kadd, 1, 2, &i4), CL_INVALID_ARG_SIZE);
  AGREE(clSetKernelArg(kadd, 1, sizeof i4, &i4), CL_SUCCESS);
  AGREE(clSetKernelArg(kadd, 0, 4, &i4), CL_INVALID_ARG_SIZE);
  AGREE(clSetKernelArg(klocal, 1, 0, NULL), CL_INVALID_ARG_SIZE);
  int16_t sixteen[8] = {0};
  AGREE(clSetKernelArg(klocal, 1, sizeof sixteen, sixteen), CL_INVALID_ARG_VALUE);
  double dv = 1;
  AGREE(clSetKernelArg(kfill, 1, sizeof(float), &dv), CL_INVALID_ARG_SIZE);
  AGREE(clSetKernelArg(kfill, 1, sizeof dv, &dv), CL_SUCCESS);
  OK(clReleaseMemObject(m));
}

/* A kernel using all of the device's local memory runs, and every rank says so. */
static void test_local(void)
{
  cl_int err;
  cl_ulong lmem = 0;
  OK(clGetDeviceInfo(devs[0], CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL));
  for (cl_uint d = 0; d < ndevs; d++) {
    /* CL_KERNEL_LOCAL_MEM_SIZE counts the __local arguments as set now: 4 bytes. */
    cl_ulong used = 0;
    OK(clSetKernelArg(klocal, 1, 4, NULL));
    OK(clGetKernelWorkGroupInfo(klocal, devs[d], CL_KERNEL_LOCAL_MEM_SIZE, sizeof used, &used, NULL));
    CHECK(same_everywhere((uint64_t)used) && used >= 4);
    used -= 4;
    size_t wg = 0;
    OK(clGetKernelWorkGroupInfo(klocal, devs[d], CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
    CHECK(same_everywhere((uint64_t)wg));
    size_t lws = wg < 64 ? wg : 64, gws = lws * 4;
    cl_ulong dl = 0;
    OK(clGetDeviceInfo(devs[d], CL_DEVICE_LOCAL_MEM_SIZE, sizeof dl, &dl, NULL));
    size_t bytes = (size_t)(dl - used);
    cl_mem m = clCreateBuffer(ctx, 0, gws * sizeof(int), NULL, &err);
    OK(err);
    OK(clSetKernelArg(klocal, 0, sizeof m, &m));
    OK(clSetKernelArg(klocal, 1, bytes, NULL));
    /* One byte more than the device has: refused alike everywhere. */
    OK(clSetKernelArg(klocal, 1, bytes + 4, NULL));
    AGREE(clEnqueueNDRangeKernel(q[d], klocal, 1, NULL, &gws, &lws, 0, NULL, NULL),
          CL_OUT_OF_RESOURCES);
    OK(clSetKernelArg(klocal, 1, bytes, NULL));
    cl_event e = NULL;
    OK(clEnqueueNDRangeKernel(q[d], klocal, 1, NULL, &gws, &lws, 0, NULL, &e));
    if (!e)
      continue;
    OK(clWaitForEvents(1, &e));
    AGREE(status_of(e), CL_COMPLETE);
    int back[256];
    OK(clEnqueueReadBuffer(q[d], m, CL_TRUE, 0, gws * sizeof(int), back, 0, NULL, NULL));
    CHECK(back[gws - 1] == (int)gws);
    OK(clReleaseEvent(e));
    OK(clReleaseMemObject(m));
  }
  (void)lmem;
}

/* How many devices the rank of device d has. */
static int devs_of_rank(cl_uint d)
{
  cl_int r = -1, other = -1;
  int n = 0;
  clGetDeviceInfo(devs[d], CL_DEVICE_TUTTI_RANK, sizeof r, &r, NULL);
  for (cl_uint i = 0; i < ndevs; i++) {
    clGetDeviceInfo(devs[i], CL_DEVICE_TUTTI_RANK, sizeof other, &other, NULL);
    n += other == r;
  }
  return n;
}

/* A user event set to an error status: the commands waiting on it end with an error on
 * every rank, and nothing hangs. */
static void test_user_error(void)
{
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, 0, 64 * sizeof(int), NULL, &err);
  OK(err);
  for (cl_uint d = 0; d < ndevs; d++) {
    cl_event u = clCreateUserEvent(ctx, &err);
    OK(err);
    cl_event k;
    size_t gws = 64;
    int one = 1;
    OK(clSetKernelArg(kadd, 0, sizeof m, &m));
    OK(clSetKernelArg(kadd, 1, sizeof one, &one));
    OK(clEnqueueNDRangeKernel(q[d], kadd, 1, NULL, &gws, NULL, 1, &u, &k));
    OK(clSetUserEventStatus(u, -42));
    AGREE(clWaitForEvents(1, &k), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    cl_int s = status_of(k);
    CHECK(s < 0);
    CHECK(same_everywhere(s));
    OK(clFinish(q[d]));
    OK(clReleaseEvent(k));
    OK(clReleaseEvent(u));
    /* The error comes after a command of another rank's device was ordered behind the
     * failing one (a transfer of its bytes): that command still runs, and so does the
     * queue. (Two devices of one PoCL context in one rank are left out: there PoCL's own
     * buffer migration waits on the failed command forever, as it does without Tutti.) */
    if (nranks < 2 || devs_of_rank(d) > 1 || devs_of_rank((d + 1) % ndevs) > 1)
      continue;
    u = clCreateUserEvent(ctx, &err);
    OK(err);
    OK(clEnqueueNDRangeKernel(q[d], kadd, 1, NULL, &gws, NULL, 1, &u, &k));
    int back[64];
    cl_event r;
    OK(clEnqueueReadBuffer(q[(d + 1) % ndevs], m, CL_FALSE, 0, sizeof back, back, 0, NULL, &r));
    OK(clSetUserEventStatus(u, -43));
    AGREE(clWaitForEvents(1, &r), CL_SUCCESS);
    /* Whatever the backend made of the failure, every rank says the same. */
    CHECK(same_everywhere(clWaitForEvents(1, &k)));
    CHECK(same_everywhere(status_of(k)));
    OK(clEnqueueNDRangeKernel(q[d], kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
    OK(clFinish(q[d]));
    OK(clReleaseEvent(k));
    OK(clReleaseEvent(r));
    OK(clReleaseEvent(u));
  }
  OK(clReleaseMemObject(m));
}

static atomic_int order[8], norder;

static void CL_CALLBACK on_destroy(cl_mem m, void *data)
{
  order[atomic_fetch_add(&norder, 1) & 7] = (int)(intptr_t)data;
}

/* Destructor callbacks run on every rank, last registered first. */
static void test_destructors(void)
{
  cl_int err;
  for (cl_uint d = 0; d < ndevs; d++) {
    atomic_store(&norder, 0);
    cl_mem m = clCreateBuffer(ctx, 0, 64 * sizeof(int), NULL, &err);
    OK(err);
    size_t gws = 64;
    int one = 1;
    OK(clSetKernelArg(kadd, 0, sizeof m, &m));
    OK(clSetKernelArg(kadd, 1, sizeof one, &one));
    OK(clEnqueueNDRangeKernel(q[d], kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
    for (intptr_t i = 1; i <= 3; i++)
      OK(clSetMemObjectDestructorCallback(m, on_destroy, (void *)i));
    OK(clReleaseMemObject(m));
    OK(clFinish(q[d]));
    /* Commands in flight may hold the buffer a moment longer: wait up to 10 s. */
    for (int spin = 0; spin < 10000 && atomic_load(&norder) < 3; spin++)
      nanosleep(&(struct timespec){0, 1000000}, NULL);
    AGREE(atomic_load(&norder), 3);
    CHECK(order[0] == 3 && order[1] == 2 && order[2] == 1);
  }
}

/* A hash of bytes, for answers compared across ranks. */
static uint64_t hash_bytes(const void *p, size_t n)
{
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

/* Every program query, on every rank alike: its error code and a hash of the answer
 * (handles excepted: their addresses are each rank's own), and for every device the
 * build status, options, log and binary type; the binary type must be `want`. The
 * binaries are handed back (malloc'd, for devices 0..ndevs-1) when `bins` is not NULL. */
static void all_queries(cl_program p, cl_program_binary_type want, unsigned char **bins,
                        size_t *sizes)
{
  static const cl_program_info infos[] = {
      CL_PROGRAM_REFERENCE_COUNT, CL_PROGRAM_NUM_DEVICES, CL_PROGRAM_SOURCE,
      CL_PROGRAM_BINARY_SIZES, CL_PROGRAM_NUM_KERNELS, CL_PROGRAM_KERNEL_NAMES};
  for (size_t i = 0; i < sizeof infos / sizeof infos[0]; i++) {
    char v[4096] = "";
    size_t len = 0;
    cl_int e = clGetProgramInfo(p, infos[i], sizeof v, v, &len);
    CHECK(same_everywhere((uint64_t)(int64_t)e));
    CHECK(same_everywhere(len));
    if (!same_everywhere(e == CL_SUCCESS ? hash_bytes(v, len) : 0))
      fprintf(stderr, "# rank %d: program info 0x%x differs\n", rank, infos[i]);
  }
  size_t sz[64] = {0};
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof sz, sz, NULL));
  unsigned char *b[64] = {0};
  for (cl_uint d = 0; d < ndevs; d++)
    b[d] = malloc(sz[d] ? sz[d] : 1);
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, ndevs * sizeof *b, b, NULL));
  for (cl_uint d = 0; d < ndevs; d++) {
    CHECK(sz[d] > 0);
    CHECK(same_everywhere(hash_bytes(b[d], sz[d])));
    static const cl_program_build_info builds[] = {CL_PROGRAM_BUILD_STATUS,
                                                   CL_PROGRAM_BUILD_OPTIONS,
                                                   CL_PROGRAM_BUILD_LOG};
    for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++) {
      char v[8192] = "";
      size_t len = 0;
      cl_int e = clGetProgramBuildInfo(p, devs[d], builds[i], sizeof v, v, &len);
      CHECK(same_everywhere((uint64_t)(int64_t)e));
      if (!same_everywhere(e == CL_SUCCESS ? hash_bytes(v, len) : 0))
        fprintf(stderr, "# rank %d: build info 0x%x of device %u differs\n", rank, builds[i], d);
    }
    cl_program_binary_type t = 0;
    OK(clGetProgramBuildInfo(p, devs[d], CL_PROGRAM_BINARY_TYPE, sizeof t, &t, NULL));
    AGREE(t, want);
    if (bins) {
      bins[d] = b[d];
      sizes[d] = sz[d];
    } else {
      free(b[d]);
    }
  }
}

/* A program made from the binaries of another: every device's creation status alike. */
static cl_program from_binaries(unsigned char **bins, size_t *sizes)
{
  cl_int err, st[64];
  for (cl_uint d = 0; d < ndevs; d++)
    st[d] = 1;
  cl_program p = clCreateProgramWithBinary(ctx, ndevs, devs, sizes,
                                           (const unsigned char **)bins, st, &err);
  AGREE(err, CL_SUCCESS);
  for (cl_uint d = 0; d < ndevs; d++) {
    AGREE(st[d], CL_SUCCESS);
    free(bins[d]);
  }
  return p;
}

/* Every program query after clCompileProgram, clLinkProgram (an executable, and a library
 * with -create-library) and programs made from each kind of binary (as the conformance
 * suite's compiler test program_binary_type does): the binary type is right and every
 * answer alike on every rank. A program from an executable's binary builds and runs; a
 * broken binary fails alike everywhere. */
static void test_binary_type(void)
{
  cl_int err;
  const char *s = "__kernel void k(__global int *x) { x[get_global_id(0)] = 7; }\n";
  unsigned char *bins[64];
  size_t sizes[64];
  cl_program p = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
  OK(err);
  OK(clCompileProgram(p, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL));
  all_queries(p, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, bins, sizes);
  cl_program obj = from_binaries(bins, sizes);
  all_queries(obj, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, NULL, NULL);
  cl_program l = clLinkProgram(ctx, 0, NULL, NULL, 1, &obj, NULL, NULL, &err);
  AGREE(err, CL_SUCCESS);
  if (err != CL_SUCCESS && l) {
    /* A failed link still returns a program with its log (every rank holds every log). */
    for (cl_uint d = 0; d < ndevs; d++) {
      char log[2048] = "";
      clGetProgramBuildInfo(l, devs[d], CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
      fprintf(stderr, "# rank %d: link of device %u: log: %s\n", rank, d, log);
    }
  }
  if (err == CL_SUCCESS)
    all_queries(l, CL_PROGRAM_BINARY_TYPE_EXECUTABLE, bins, sizes);
  /* An executable's binary: built again, it runs. */
  cl_program exe = err == CL_SUCCESS ? from_binaries(bins, sizes) : NULL;
  if (exe) {
    all_queries(exe, CL_PROGRAM_BINARY_TYPE_EXECUTABLE, NULL, NULL);
    OK(clBuildProgram(exe, 0, NULL, NULL, NULL, NULL));
    all_queries(exe, CL_PROGRAM_BINARY_TYPE_EXECUTABLE, NULL, NULL);
    cl_kernel k = clCreateKernel(exe, "k", &err);
    OK(err);
    cl_mem m = clCreateBuffer(ctx, 0, 64 * sizeof(int), NULL, &err);
    OK(err);
    OK(clSetKernelArg(k, 0, sizeof m, &m));
    for (cl_uint d = 0; d < ndevs; d++) {
      size_t gws = 64;
      int back[64] = {0};
      OK(clEnqueueNDRangeKernel(q[d], k, 1, NULL, &gws, NULL, 0, NULL, NULL));
      OK(clEnqueueReadBuffer(q[d], m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
      CHECK(back[0] == 7 && back[63] == 7);
    }
    OK(clReleaseMemObject(m));
    OK(clReleaseKernel(k));
    OK(clReleaseProgram(exe));
  }
  /* A library, and a program from its binary. */
  cl_program lib = clLinkProgram(ctx, 0, NULL, "-create-library", 1, &p, NULL, NULL, &err);
  AGREE(err, CL_SUCCESS);
  if (err == CL_SUCCESS) {
    all_queries(lib, CL_PROGRAM_BINARY_TYPE_LIBRARY, bins, sizes);
    cl_program lib2 = from_binaries(bins, sizes);
    all_queries(lib2, CL_PROGRAM_BINARY_TYPE_LIBRARY, NULL, NULL);
    OK(clReleaseProgram(lib2));
    OK(clReleaseProgram(lib));
  }
  /* A Tutti binary whose native part is junk: refused alike on every rank. */
  unsigned char junk[256];
  size_t jsize[64];
  const unsigned char *jb[64];
  all_queries(p, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, bins, sizes);
  for (cl_uint d = 0; d < ndevs; d++) {
    memcpy(junk, bins[d], 40);
    memset(junk + 40, 0x5a, sizeof junk - 40);
    jb[d] = junk;
    jsize[d] = sizeof junk;
    free(bins[d]);
  }
  cl_int st[64];
  cl_program bad = clCreateProgramWithBinary(ctx, ndevs, devs, jsize, jb, st, &err);
  CHECK(same_everywhere((uint64_t)(int64_t)err));
  CHECK(err != CL_SUCCESS || bad);
  for (cl_uint d = 0; d < ndevs; d++)
    CHECK(same_everywhere((uint64_t)(int64_t)st[d]));
  if (bad)
    OK(clReleaseProgram(bad));
  if (l)
    OK(clReleaseProgram(l));
  OK(clReleaseProgram(obj));
  OK(clReleaseProgram(p));
}

/* The macros OpenCL C predefines, as kernels see them on every device, match what the device
 * reports (OpenCL 1.2 section 6.10): __OPENCL_VERSION__ its version, __OPENCL_C_VERSION__ the
 * language of -cl-std or by default the device's, __IMAGE_SUPPORT__ defined only with
 * images. A compiler's complaint names the line of the program's own source. */
static void test_macros(void)
{
  static const char *s =
      "__kernel void k(__global int *o) {\n"
      "  o[0] = __OPENCL_VERSION__;\n"
      "#ifdef __IMAGE_SUPPORT__\n"
      "  o[1] = __IMAGE_SUPPORT__;\n"
      "#endif\n"
      "  o[2] = __OPENCL_C_VERSION__;\n"
      "}\n";
  const char *opts[] = {NULL, "-cl-std=CL1.1"};
  for (int o = 0; o < 2; o++) {
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
    OK(err);
    OK(clBuildProgram(p, 0, NULL, opts[o], NULL, NULL));
    cl_kernel k = clCreateKernel(p, "k", &err);
    OK(err);
    for (cl_uint d = 0; d < ndevs; d++) {
      char ver[256] = "", cver[256] = "";
      cl_bool images = CL_TRUE;
      int major = 0, minor = 0, cmajor = 0, cminor = 0;
      OK(clGetDeviceInfo(devs[d], CL_DEVICE_VERSION, sizeof ver, ver, NULL));
      OK(clGetDeviceInfo(devs[d], CL_DEVICE_OPENCL_C_VERSION, sizeof cver, cver, NULL));
      OK(clGetDeviceInfo(devs[d], CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
      sscanf(ver, "OpenCL %d.%d", &major, &minor);
      sscanf(cver, "OpenCL C %d.%d", &cmajor, &cminor);
      int got[3] = {0, 0, 0};
      cl_mem m = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof got, got, &err);
      OK(err);
      OK(clSetKernelArg(k, 0, sizeof m, &m));
      size_t one = 1;
      OK(clEnqueueNDRangeKernel(q[d], k, 1, NULL, &one, NULL, 0, NULL, NULL));
      OK(clEnqueueReadBuffer(q[d], m, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
      AGREE(got[0], major * 100 + minor * 10);
      AGREE(got[1], images ? 1 : 0);
      AGREE(got[2], o ? 110 : cmajor * 100 + cminor * 10);
      OK(clReleaseMemObject(m));
    }
    OK(clReleaseKernel(k));
    OK(clReleaseProgram(p));
  }
  /* An error on line 3 of the program's source is reported on line 3. */
  static const char *bad = "__kernel void k(__global int *o) {\n"
                           "  o[0] = 1;\n"
                           "  o[1] = no_such_name;\n"
                           "}\n";
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &bad, NULL, &err);
  OK(err);
  AGREE(clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
  for (cl_uint d = 0; d < ndevs; d++) {
    char log[4096] = "";
    OK(clGetProgramBuildInfo(p, devs[d], CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL));
    AGREE(strstr(log, ":3:") != NULL, 1);
    AGREE(strstr(log, ":11:") == NULL, 1);
  }
  OK(clReleaseProgram(p));
}

/* Sub-buffers of one buffer, each written on another device (so on other ranks), then
 * every device reads the whole buffer. */
static void test_subbuffers(void)
{
  enum { PART = 1024 };
  cl_int err;
  cl_uint align = 0;
  OK(clGetDeviceInfo(devs[0], CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align, &align, NULL));
  size_t part = PART * sizeof(int);
  if (part % (align / 8))
    part = align / 8;
  size_t nparts = ndevs < 2 ? 2 : ndevs, total = part * nparts;
  int *init = malloc(total);
  for (size_t i = 0; i < total / sizeof(int); i++)
    init[i] = -1;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, total, init, &err);
  OK(err);
  cl_mem sub[64];
  for (size_t p = 0; p < nparts; p++) {
    cl_buffer_region r = {p * part, part};
    sub[p] = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    OK(err);
  }
  for (int round = 0; round < 3; round++) {
    /* Every sub-buffer written on a device of its own... */
    for (size_t p = 0; p < nparts; p++) {
      cl_uint d = (cl_uint)((p + (size_t)round) % ndevs);
      int k = (int)(p + 1) * 10 + round;
      size_t gws = part / sizeof(int);
      OK(clSetKernelArg(kadd, 0, sizeof sub[p], &sub[p]));
      OK(clSetKernelArg(kadd, 1, sizeof k, &k));
      OK(clEnqueueNDRangeKernel(q[d], kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
    }
    /* ...then the whole buffer read on every device, and one sub-buffer through another. */
    int *back = malloc(total);
    for (cl_uint d = 0; d < ndevs; d++) {
      OK(clEnqueueReadBuffer(q[d], m, CL_TRUE, 0, total, back, 0, NULL, NULL));
      int bad = 0;
      for (size_t p = 0; p < nparts; p++) {
        int want = -1;
        for (int r = 0; r <= round; r++)
          want += (int)(p + 1) * 10 + r;
        for (size_t i = 0; i < part / sizeof(int); i++)
          bad += back[p * part / sizeof(int) + i] != want;
      }
      if (bad)
        fprintf(stderr, "# rank %d: round %d, device %u: %d stale values\n", rank, round, d, bad);
      CHECK(bad == 0);
    }
    free(back);
  }
  for (size_t p = 0; p < nparts; p++)
    OK(clReleaseMemObject(sub[p]));
  OK(clReleaseMemObject(m));
  free(init);
}

/* Whether name is one of the comma-separated names in list. */
static int selected(const char *list, const char *name)
{
  size_t n = strlen(name);
  for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
    if (strcspn(p, ",") == n && !strncmp(p, name, n))
      return 1;
  }
  return 0;
}

int main(int argc, char **argv)
{
  OK(clGetPlatformIDs(1, &platform, NULL));
  int own_mpi = ranks_start(&argc, &argv, &rank, &nranks);
  if (own_mpi < 0)
    return 1;
  if (argc > 2)
    rounds = atoi(argv[2]);
  OK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 64, devs, &ndevs));
  cl_int err;
  ctx = clCreateContext(NULL, ndevs, devs, NULL, NULL, &err);
  OK(err);
  for (cl_uint d = 0; d < ndevs; d++) {
    q[d] = clCreateCommandQueue(ctx, devs[d], CL_QUEUE_PROFILING_ENABLE, &err);
    OK(err);
  }
  prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  OK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
  kfill = clCreateKernel(prog, "fill", &err);
  OK(err);
  kscalar = clCreateKernel(prog, "scalar", &err);
  OK(err);
  kreqd = clCreateKernel(prog, "reqd", &err);
  OK(err);
  klocal = clCreateKernel(prog, "uselocal", &err);
  OK(err);
  kadd = clCreateKernel(prog, "add", &err);
  OK(err);
  static const struct {
    const char *name;
    void (*fn)(void);
  } groups[] = {{"finish", test_finish},         {"events", test_events},
                {"scalars", test_scalars},       {"errors", test_errors},
                {"local", test_local},           {"user-error", test_user_error},
                {"destructors", test_destructors}, {"binary-type", test_binary_type},
                {"subbuffers", test_subbuffers}, {"macros", test_macros},
                {"polls", test_polls}};
  size_t n = sizeof groups / sizeof groups[0];
  if (rank == 0)
    printf("1..%zu\n", n);
  int total = 0;
  for (size_t i = 0; i < n; i++) {
    failures = 0;
    if (argc > 1 && strcmp(argv[1], "all") && !selected(argv[1], groups[i].name)) {
      if (rank == 0)
        printf("ok %zu - %s # SKIP not selected\n", i + 1, groups[i].name);
      continue;
    }
    groups[i].fn();
    int all = failures;
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
      printf("%s %zu - %s (%d ranks, %u devices)\n", all ? "not ok" : "ok", i + 1,
             groups[i].name, nranks, ndevs);
    fflush(stdout);
    total += all;
  }
  clReleaseKernel(kfill);
  clReleaseKernel(kscalar);
  clReleaseKernel(kreqd);
  clReleaseKernel(klocal);
  clReleaseKernel(kadd);
  clReleaseProgram(prog);
  for (cl_uint d = 0; d < ndevs; d++)
    clReleaseCommandQueue(q[d]);
  clReleaseContext(ctx);
  if (own_mpi)
    MPI_Finalize();
  return total ? 1 : 0;
}
