/* The cluster tests: one program run by tutti-run on every rank, seeing every device of the
 * job. Each group runs on all ranks; failures are summed over the ranks (through MPI, which
 * Tutti started) and rank 0 prints one TAP line per group. */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/tutti.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/ranks.h"

static int failures, rank, nranks;


static cl_platform_id platform;
static cl_device_id devs[64];
static cl_uint ndevs;
static cl_context ctx;
static cl_command_queue q[64];
static cl_program prog;
static cl_kernel kadd, kcopy, kfill;

static const char *src =
    "__kernel void add(__global int *x, int k) { x[get_global_id(0)] += k; }\n"
    "__kernel void copy(__global const int *s, __global int *d) { d[get_global_id(0)] = s[get_global_id(0)]; }\n"
    "__kernel void fill(__global int *x, int v) { x[get_global_id(0)] = v + (int)get_global_id(0); }\n";

enum { N = 1 << 16 };
static int host[N], back[N];

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return h;
}


static void test_table(void)
{
  cl_int ranks = 0;
  OK(clGetPlatformInfo(platform, CL_PLATFORM_TUTTI_RANKS, sizeof ranks, &ranks, NULL));
  CHECK(ranks == nranks);
  CHECK(same_everywhere(ndevs));
  uint64_t h = 1469598103934665603ull;
  int owners = 0, prev = -1;
  cl_uint defaults = 0;
  for (cl_uint i = 0; i < ndevs; i++) {
    static const cl_device_info params[] = {CL_DEVICE_NAME, CL_DEVICE_VENDOR, CL_DEVICE_VERSION,
                                            CL_DEVICE_MAX_COMPUTE_UNITS, CL_DEVICE_GLOBAL_MEM_SIZE,
                                            CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_EXTENSIONS,
                                            CL_DEVICE_TYPE, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                                            CL_DEVICE_TUTTI_RANK, CL_DEVICE_TUTTI_HOST,
                                            CL_DEVICE_TUTTI_BACKEND};
    for (size_t p = 0; p < sizeof params / sizeof params[0]; p++) {
      char v[4096];
      size_t n = 0;
      OK(clGetDeviceInfo(devs[i], params[p], sizeof v, v, &n));
      h = fnv(v, n, h);
    }
    cl_int owner;
    cl_bool actual;
    cl_device_type t;
    OK(clGetDeviceInfo(devs[i], CL_DEVICE_TUTTI_RANK, sizeof owner, &owner, NULL));
    OK(clGetDeviceInfo(devs[i], CL_DEVICE_TUTTI_ACTUAL, sizeof actual, &actual, NULL));
    OK(clGetDeviceInfo(devs[i], CL_DEVICE_TYPE, sizeof t, &t, NULL));
    defaults += (t & CL_DEVICE_TYPE_DEFAULT) != 0;
    CHECK(owner >= prev && owner < nranks);
    CHECK((actual == CL_TRUE) == (owner == rank));
    owners += owner != prev;
    prev = owner;
  }
  CHECK(owners == nranks); /* every rank owns a device, in rank order */
  /* CL_DEVICE_TYPE_DEFAULT is a query answered by the first device, not a type. */
  CHECK(defaults == 0);
  cl_device_id first = NULL;
  cl_uint nfirst = 0;
  OK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &first, &nfirst));
  CHECK(nfirst == 1 && first == devs[0]);
  CHECK(same_everywhere(h));
}

/* One buffer through every device, with event chains between the queues. */
static void test_chain(void)
{
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  OK(err);
  size_t gws = N;
  int total = 0;
  cl_event prev = NULL;
  for (int round = 0; round < 2; round++)
    for (cl_uint d = 0; d < ndevs; d++) {
      int k = (int)d + 1;
      total += k;
      OK(clSetKernelArg(kadd, 0, sizeof m, &m));
      OK(clSetKernelArg(kadd, 1, sizeof k, &k));
      cl_event ev;
      OK(clEnqueueNDRangeKernel(q[d], kadd, 1, NULL, &gws, NULL, prev ? 1 : 0, prev ? &prev : NULL, &ev));
      if (prev)
        OK(clReleaseEvent(prev));
      prev = ev;
    }
  memset(back, 0, sizeof back);
  OK(clEnqueueReadBuffer(q[ndevs - 1], m, CL_TRUE, 0, sizeof back, back, 1, &prev, NULL));
  OK(clReleaseEvent(prev));
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += back[i] != i + total;
  CHECK(bad == 0);
  /* Without events: conflicting commands run in enqueue order anyway (SnuCL-D 3.3). */
  int k = 100;
  OK(clSetKernelArg(kadd, 1, sizeof k, &k));
  for (cl_uint d = 0; d < ndevs; d++)
    OK(clEnqueueNDRangeKernel(q[ndevs - 1 - d], kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(q[0], m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  CHECK(back[N - 1] == N - 1 + total + 100 * (int)ndevs && back[0] == total + 100 * (int)ndevs);
  /* A clFinish covers the commands of its queue before it (the next queue waits for none of
   * them), never one after it: the add waits for the fill enqueued after the clFinish, held
   * back by a user event until the add and the read are enqueued. */
  k = 1;
  OK(clSetKernelArg(kadd, 1, sizeof k, &k));
  OK(clSetKernelArg(kfill, 0, sizeof m, &m));
  for (cl_uint d = 0; d < ndevs; d++) {
    int v = 1000 * (int)d;
    cl_uint next = (d + 1) % ndevs;
    OK(clSetKernelArg(kfill, 1, sizeof v, &v));
    OK(clEnqueueNDRangeKernel(q[d], kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
    OK(clFinish(q[d]));
    cl_event hold = clCreateUserEvent(ctx, &err), read;
    OK(err);
    OK(clEnqueueMarkerWithWaitList(q[d], 1, &hold, NULL));
    OK(clEnqueueNDRangeKernel(q[d], kfill, 1, NULL, &gws, NULL, 0, NULL, NULL));
    OK(clEnqueueNDRangeKernel(q[next], kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q[next], m, CL_FALSE, 0, sizeof back, back, 0, NULL, &read));
    OK(clFlush(q[next]));
    OK(clSetUserEventStatus(hold, CL_COMPLETE));
    OK(clWaitForEvents(1, &read));
    OK(clReleaseEvent(read));
    OK(clReleaseEvent(hold));
    bad = 0;
    for (int i = 0; i < N; i++)
      bad += back[i] != v + i + 1;
    CHECK(bad == 0);
  }
  OK(clReleaseMemObject(m));
}

/* Whether every int of m is v + i, read through queue on (blocking). */
static int holds(cl_command_queue on, cl_mem m, int v)
{
  memset(back, 0xff, sizeof back);
  OK(clEnqueueReadBuffer(on, m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  int wrong = 0;
  for (int i = 0; i < N; i++)
    wrong += back[i] != v + i;
  return wrong == 0;
}

/* Copies between devices of different ranks. */
static void test_copy(void)
{
  cl_int err;
  cl_mem a = clCreateBuffer(ctx, 0, sizeof host, NULL, &err);
  cl_mem b = clCreateBuffer(ctx, 0, sizeof host, NULL, &err);
  size_t gws = N;
  int v = 7;
  OK(clSetKernelArg(kfill, 0, sizeof a, &a));
  OK(clSetKernelArg(kfill, 1, sizeof v, &v));
  OK(clEnqueueNDRangeKernel(q[0], kfill, 1, NULL, &gws, NULL, 0, NULL, NULL));
  v = 1000;
  OK(clSetKernelArg(kfill, 0, sizeof b, &b));
  OK(clSetKernelArg(kfill, 1, sizeof v, &v));
  OK(clEnqueueNDRangeKernel(q[ndevs - 1], kfill, 1, NULL, &gws, NULL, 0, NULL, NULL));
  /* a (on device 0) -> b (on the last device), run by a device in the middle. */
  cl_uint mid = ndevs / 2;
  OK(clEnqueueCopyBuffer(q[mid], a, b, 0, sizeof(int) * 16, sizeof(int) * (N / 2), 0, NULL, NULL));
  OK(clEnqueueReadBuffer(q[0], b, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  CHECK(back[0] == 1000 && back[15] == 1015 && back[16] == 7 && back[16 + N / 2 - 1] == 7 + N / 2 - 1 &&
        back[16 + N / 2] == 1000 + 16 + N / 2 && back[N - 1] == 1000 + N - 1);
  /* Device to device the other way, then a kernel on device 0 reads it. */
  OK(clEnqueueCopyBuffer(q[ndevs - 1], b, a, 0, 0, sizeof host, 0, NULL, NULL));
  int k = 1;
  OK(clSetKernelArg(kadd, 0, sizeof a, &a));
  OK(clSetKernelArg(kadd, 1, sizeof k, &k));
  OK(clEnqueueNDRangeKernel(q[0], kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(q[mid], a, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  CHECK(back[0] == 1001 && back[16] == 8 && back[N - 1] == 1000 + N);
  /* A blocking read of bytes its queue is through with (after clFinish) reaches every rank,
   * its owner's host too (on a queue without profiling, with pieces smaller than the read,
   * the owner sends them from its buffer's memory while it copies its own); a kernel
   * enqueued right after it on that queue changes what the next read finds. */
  cl_command_queue plain = clCreateCommandQueue(ctx, devs[0], 0, &err);
  OK(err);
  v = 50;
  OK(clSetKernelArg(kfill, 0, sizeof a, &a));
  OK(clSetKernelArg(kfill, 1, sizeof v, &v));
  OK(clEnqueueNDRangeKernel(plain, kfill, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clFinish(plain));
  for (int round = 0; round < 2; round++) {
    CHECK(holds(plain, a, 50 + round));
    OK(clSetKernelArg(kadd, 0, sizeof a, &a));
    OK(clEnqueueNDRangeKernel(plain, kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
    OK(clFinish(plain));
  }
  OK(clReleaseCommandQueue(plain));
  OK(clReleaseMemObject(a));
  OK(clReleaseMemObject(b));
}

/* A map on one rank after a kernel on another; a write through a map read by a kernel
 * elsewhere. */
static void test_map(void)
{
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, 0, sizeof host, NULL, &err);
  size_t gws = N;
  int v = 3;
  OK(clSetKernelArg(kfill, 0, sizeof m, &m));
  OK(clSetKernelArg(kfill, 1, sizeof v, &v));
  OK(clEnqueueNDRangeKernel(q[ndevs - 1], kfill, 1, NULL, &gws, NULL, 0, NULL, NULL));
  int *p = clEnqueueMapBuffer(q[0], m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, sizeof host, 0, NULL, NULL, &err);
  OK(err);
  CHECK(p && p[0] == 3 && p[N - 1] == 3 + N - 1);
  if (p)
    for (int i = 0; i < N; i += 2)
      p[i] = -i;
  cl_event unmapped;
  OK(clEnqueueUnmapMemObject(q[0], m, p, 0, NULL, &unmapped));
  int k = 10;
  OK(clSetKernelArg(kadd, 0, sizeof m, &m));
  OK(clSetKernelArg(kadd, 1, sizeof k, &k));
  OK(clEnqueueNDRangeKernel(q[ndevs - 1], kadd, 1, NULL, &gws, NULL, 1, &unmapped, NULL));
  OK(clReleaseEvent(unmapped));
  /* A non-blocking map with an event, waited for. */
  cl_event mapped;
  p = clEnqueueMapBuffer(q[ndevs / 2], m, CL_FALSE, CL_MAP_READ, 0, sizeof host, 0, NULL, &mapped, &err);
  OK(err);
  OK(clWaitForEvents(1, &mapped));
  CHECK(p && p[0] == 10 && p[1] == 3 + 1 + 10 && p[N - 2] == -(N - 2) + 10 && p[N - 1] == 3 + N - 1 + 10);
  OK(clEnqueueUnmapMemObject(q[ndevs / 2], m, p, 0, NULL, NULL));
  OK(clReleaseEvent(mapped));
  OK(clFinish(q[ndevs / 2]));
  OK(clReleaseMemObject(m));
}

/* Sub-buffers across ranks: every device writes its own slice. */
static void test_subbuffers(void)
{
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  size_t slice = N / ndevs / 1024 * 1024; /* origins aligned for every device */
  cl_mem subs[64];
  for (cl_uint d = 0; d < ndevs; d++) {
    cl_buffer_region r = {d * slice * sizeof(int), slice * sizeof(int)};
    subs[d] = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    OK(err);
    if (!subs[d])
      exit(1);
    int k = 100 * ((int)d + 1);
    OK(clSetKernelArg(kadd, 0, sizeof subs[d], &subs[d]));
    OK(clSetKernelArg(kadd, 1, sizeof k, &k));
    OK(clEnqueueNDRangeKernel(q[d], kadd, 1, NULL, &slice, NULL, 0, NULL, NULL));
  }
  OK(clEnqueueReadBuffer(q[0], m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  int bad = 0;
  for (cl_uint d = 0; d < ndevs; d++)
    for (size_t i = d * slice; i < (d + 1) * slice; i++)
      bad += back[i] != (int)i + 100 * ((int)d + 1);
  for (size_t i = ndevs * slice; i < N; i++)
    bad += back[i] != (int)i;
  CHECK(bad == 0);
  /* Read one slice through its sub-buffer on another device. */
  cl_uint last = ndevs - 1;
  OK(clEnqueueReadBuffer(q[0], subs[last], CL_TRUE, 0, slice * sizeof(int), back, 0, NULL, NULL));
  CHECK(back[0] == (int)(last * slice) + 100 * (int)ndevs);
  for (cl_uint d = 0; d < ndevs; d++)
    OK(clReleaseMemObject(subs[d]));
  OK(clReleaseMemObject(m));
}

/* A build error on the last device (another rank's, for most ranks) is seen on every rank. */
static void test_build(void)
{
  cl_int err;
  const char *bad = "__kernel void k(__global int *x) { x[0] = no_such_name_here; }";
  cl_program p = clCreateProgramWithSource(ctx, 1, &bad, NULL, &err);
  OK(err);
  cl_device_id last = devs[ndevs - 1];
  err = clBuildProgram(p, 1, &last, NULL, NULL, NULL);
  CHECK(err == CL_BUILD_PROGRAM_FAILURE);
  cl_build_status st = CL_BUILD_SUCCESS;
  OK(clGetProgramBuildInfo(p, last, CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL));
  CHECK(st == CL_BUILD_ERROR);
  static char log[16384];
  log[0] = 0;
  OK(clGetProgramBuildInfo(p, last, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL));
  CHECK(strstr(log, "no_such_name_here") != NULL);
  OK(clReleaseProgram(p));
  /* Kernel queries answered alike everywhere. */
  size_t wg = 0;
  OK(clGetKernelWorkGroupInfo(kadd, last, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
  CHECK(wg > 0 && same_everywhere(wg));
  char name[64] = "";
  OK(clGetKernelArgInfo(kcopy, 1, CL_KERNEL_ARG_NAME, sizeof name, name, NULL));
  CHECK(!strcmp(name, "d"));
  size_t binsize = 0;
  size_t sizes[64];
  OK(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof sizes, sizes, NULL));
  binsize = sizes[ndevs - 1];
  CHECK(binsize > 0 && same_everywhere(binsize));
}

static cl_int status_of(cl_event e)
{
  cl_int st = CL_QUEUED;
  OK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
  return st;
}

static int callbacks;
static void CL_CALLBACK on_complete(cl_event e, cl_int st, void *data)
{
  __atomic_add_fetch(&callbacks, 1, __ATOMIC_SEQ_CST);
}

/* Events across ranks: user events, waits, status, callbacks, profiling. */
static void test_events(void)
{
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, 0, sizeof host, NULL, &err);
  cl_event u = clCreateUserEvent(ctx, &err);
  OK(err);
  cl_event w[64];
  for (cl_uint d = 0; d < ndevs; d++)
    OK(clEnqueueWriteBuffer(q[d], m, CL_FALSE, d * sizeof(int), sizeof(int), &host[d + 5], 1, &u, &w[d]));
  /* Before this rank sets the user event, its own devices' writes wait (another rank's host
   * may be ahead and have set its copy: the user event is replicated, not shared). */
  cl_int st;
  for (cl_uint d = 0; d < ndevs; d++) {
    cl_bool mine;
    OK(clGetDeviceInfo(devs[d], CL_DEVICE_TUTTI_ACTUAL, sizeof mine, &mine, NULL));
    OK(clGetEventInfo(w[d], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    CHECK(!mine || st > CL_COMPLETE);
  }
  callbacks = 0;
  OK(clSetEventCallback(w[ndevs - 1], CL_COMPLETE, on_complete, NULL));
  OK(clSetUserEventStatus(u, CL_COMPLETE));
  OK(clWaitForEvents(ndevs, w));
  for (cl_uint d = 0; d < ndevs; d++) {
    OK(clGetEventInfo(w[d], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    CHECK(st == CL_COMPLETE);
  }
  OK(clEnqueueReadBuffer(q[0], m, CL_TRUE, 0, ndevs * sizeof(int), back, 0, NULL, NULL));
  for (cl_uint d = 0; d < ndevs; d++)
    CHECK(back[d] == (int)d + 5);
  /* A kernel on a device waits for a command of another rank's device. */
  size_t gws = N;
  int v = 50;
  cl_event filled, added;
  OK(clSetKernelArg(kfill, 0, sizeof m, &m));
  OK(clSetKernelArg(kfill, 1, sizeof v, &v));
  OK(clEnqueueNDRangeKernel(q[ndevs - 1], kfill, 1, NULL, &gws, NULL, 0, NULL, &filled));
  OK(clSetKernelArg(kadd, 0, sizeof m, &m));
  OK(clSetKernelArg(kadd, 1, sizeof v, &v));
  OK(clEnqueueNDRangeKernel(q[0], kadd, 1, NULL, &gws, NULL, 1, &filled, &added));
  OK(clWaitForEvents(1, &added));
  cl_ulong t0 = 0, t1 = 0;
  OK(clGetEventProfilingInfo(filled, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
  OK(clGetEventProfilingInfo(filled, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
  CHECK(t0 <= t1 && t1 > 0 && same_everywhere(t1));
  /* In order on every rank: once a command's wait ends, the commands before it on its queue
   * read complete too, wherever they ran. */
  cl_event earlier, later;
  OK(clEnqueueNDRangeKernel(q[ndevs - 1], kadd, 1, NULL, &gws, NULL, 0, NULL, &earlier));
  OK(clEnqueueNDRangeKernel(q[ndevs - 1], kadd, 1, NULL, &gws, NULL, 0, NULL, &later));
  OK(clWaitForEvents(1, &later));
  CHECK(status_of(earlier) == CL_COMPLETE);
  OK(clReleaseEvent(earlier));
  OK(clReleaseEvent(later));
  /* A non-blocking read to host memory reaches every rank. */
  cl_event r;
  memset(back, 0, sizeof back);
  OK(clEnqueueReadBuffer(q[ndevs - 1], m, CL_FALSE, 0, sizeof back, back, 0, NULL, &r));
  OK(clWaitForEvents(1, &r));
  CHECK(back[0] == 200 && back[N - 1] == 200 + N - 1);
  for (cl_uint d = 0; d < ndevs; d++)
    OK(clFinish(q[d]));
  CHECK(__atomic_load_n(&callbacks, __ATOMIC_SEQ_CST) == 1);
  for (cl_uint d = 0; d < ndevs; d++)
    OK(clReleaseEvent(w[d]));
  OK(clReleaseEvent(u));
  OK(clReleaseEvent(filled));
  OK(clReleaseEvent(added));
  OK(clReleaseEvent(r));
  OK(clReleaseMemObject(m));
}

/* Bytes the last device writes, read by the first two (each a memory domain of its own under
 * TUTTI_DOMAINS=device: a copy into each), then read into host memory on another queue of
 * the first: that read waits for the copy into the first device, also once the copy into
 * the second was recorded after it (whose record once stood in for the first's, and the read
 * returned the bytes from before the write). The writer waits for a user event set once all
 * is enqueued: till then the read must not end. Needs 3 devices. */
static void test_replicas(void)
{
  if (ndevs < 3)
    return;
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  OK(err);
  cl_mem c[2];
  for (int i = 0; i < 2; i++) {
    c[i] = clCreateBuffer(ctx, 0, sizeof host, NULL, &err);
    OK(err);
  }
  cl_command_queue other = clCreateCommandQueue(ctx, devs[0], 0, &err);
  OK(err);
  cl_event hold = clCreateUserEvent(ctx, &err), read;
  OK(err);
  size_t gws = N;
  int v = 7000;
  OK(clSetKernelArg(kfill, 0, sizeof m, &m));
  OK(clSetKernelArg(kfill, 1, sizeof v, &v));
  OK(clEnqueueNDRangeKernel(q[ndevs - 1], kfill, 1, NULL, &gws, NULL, 1, &hold, NULL));
  OK(clFlush(q[ndevs - 1]));
  for (int i = 0; i < 2; i++) {
    OK(clSetKernelArg(kcopy, 0, sizeof m, &m));
    OK(clSetKernelArg(kcopy, 1, sizeof c[i], &c[i]));
    OK(clEnqueueNDRangeKernel(q[i], kcopy, 1, NULL, &gws, NULL, 0, NULL, NULL));
    OK(clFlush(q[i]));
  }
  memset(back, 0, sizeof back);
  OK(clEnqueueReadBuffer(other, m, CL_FALSE, 0, sizeof back, back, 0, NULL, &read));
  OK(clFlush(other));
  CHECK(status_of(read) != CL_COMPLETE);
  OK(clSetUserEventStatus(hold, CL_COMPLETE));
  OK(clWaitForEvents(1, &read));
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += back[i] != v + i;
  CHECK(bad == 0);
  CHECK(holds(q[0], c[0], v) && holds(q[1], c[1], v));
  OK(clReleaseEvent(read));
  OK(clReleaseEvent(hold));
  OK(clReleaseCommandQueue(other));
  for (int i = 0; i < 2; i++)
    OK(clReleaseMemObject(c[i]));
  OK(clReleaseMemObject(m));
}

/* Migrations to the last device of bytes the first one wrote, on queues without profiling: on
 * an empty queue a migration of buffers in Tutti's memory issues nothing to the backend
 * (icd/enqueue.c, migrate_in_place; tests/cluster/cluster-migrate.test checks that it happens), and the
 * queue keeps its order all the same: a later command there, a marker, clFinish. */
static void test_migrate(void)
{
  cl_int err;
  cl_uint last = ndevs - 1;
  cl_command_queue first = clCreateCommandQueue(ctx, devs[0], 0, &err);
  OK(err);
  cl_command_queue to = clCreateCommandQueue(ctx, devs[last], 0, &err);
  OK(err);
  cl_mem m = clCreateBuffer(ctx, 0, sizeof host, NULL, &err);
  OK(err);
  cl_mem other = clCreateBuffer(ctx, 0, sizeof host, NULL, &err);
  OK(err);
  size_t gws = N;
  int v = 3, k = 1;
  OK(clSetKernelArg(kfill, 0, sizeof m, &m));
  OK(clSetKernelArg(kfill, 1, sizeof v, &v));
  OK(clEnqueueNDRangeKernel(first, kfill, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clSetKernelArg(kfill, 0, sizeof other, &other));
  OK(clEnqueueNDRangeKernel(to, kfill, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clFinish(first));
  OK(clFinish(to));
  /* A kernel on another buffer after the migration, on its queue: when it is complete, so is
   * the migration; a kernel on the migrated bytes finds them there. */
  cl_event moved, after;
  OK(clEnqueueMigrateMemObjects(to, 1, &m, 0, 0, NULL, &moved));
  OK(clSetKernelArg(kadd, 0, sizeof other, &other));
  OK(clSetKernelArg(kadd, 1, sizeof k, &k));
  OK(clEnqueueNDRangeKernel(to, kadd, 1, NULL, &gws, NULL, 0, NULL, &after));
  OK(clWaitForEvents(1, &after));
  CHECK(status_of(moved) == CL_COMPLETE);
  OK(clSetKernelArg(kadd, 0, sizeof m, &m));
  OK(clEnqueueNDRangeKernel(to, kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  CHECK(holds(to, m, 4) && holds(to, other, 4));
  OK(clReleaseEvent(moved));
  OK(clReleaseEvent(after));
  /* A marker after it; clFinish after it. */
  cl_event mark;
  OK(clEnqueueNDRangeKernel(first, kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clFinish(first));
  OK(clFinish(to));
  OK(clEnqueueMigrateMemObjects(to, 1, &m, 0, 0, NULL, &moved));
  OK(clEnqueueMarkerWithWaitList(to, 0, NULL, &mark));
  OK(clWaitForEvents(1, &mark));
  CHECK(status_of(moved) == CL_COMPLETE);
  OK(clReleaseEvent(moved));
  OK(clReleaseEvent(mark));
  OK(clEnqueueNDRangeKernel(first, kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clFinish(first));
  OK(clEnqueueMigrateMemObjects(to, 1, &m, 0, 0, NULL, &moved));
  OK(clFinish(to));
  CHECK(status_of(moved) == CL_COMPLETE);
  OK(clReleaseEvent(moved));
  CHECK(holds(to, m, 6));
  /* Two in a row, the second behind the first; one behind a kernel still queued; one behind
   * a user event of the program; bytes already there. */
  OK(clEnqueueNDRangeKernel(first, kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clSetKernelArg(kadd, 0, sizeof other, &other));
  OK(clEnqueueNDRangeKernel(first, kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clFinish(first));
  OK(clEnqueueMigrateMemObjects(to, 1, &m, 0, 0, NULL, NULL));
  OK(clEnqueueMigrateMemObjects(to, 1, &other, 0, 0, NULL, &moved));
  OK(clWaitForEvents(1, &moved));
  OK(clReleaseEvent(moved));
  CHECK(holds(to, m, 7) && holds(to, other, 5));
  cl_event hold = clCreateUserEvent(ctx, &err);
  OK(err);
  OK(clEnqueueNDRangeKernel(first, kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clSetKernelArg(kadd, 0, sizeof m, &m));
  OK(clEnqueueNDRangeKernel(first, kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clFinish(first));
  OK(clEnqueueNDRangeKernel(to, kadd, 1, NULL, &gws, NULL, 1, &hold, NULL));
  OK(clEnqueueMigrateMemObjects(to, 1, &other, 0, 0, NULL, NULL));
  OK(clSetUserEventStatus(hold, CL_COMPLETE));
  CHECK(holds(to, m, 9) && holds(to, other, 6));
  OK(clReleaseEvent(hold));
  hold = clCreateUserEvent(ctx, &err);
  OK(err);
  OK(clEnqueueNDRangeKernel(first, kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clFinish(first));
  OK(clFinish(to));
  OK(clEnqueueMigrateMemObjects(to, 1, &m, 0, 1, &hold, &moved));
  OK(clSetUserEventStatus(hold, CL_COMPLETE));
  OK(clWaitForEvents(1, &moved));
  OK(clReleaseEvent(moved));
  OK(clReleaseEvent(hold));
  OK(clFinish(to));
  OK(clEnqueueMigrateMemObjects(to, 1, &m, 0, 0, NULL, &moved));
  OK(clWaitForEvents(1, &moved));
  OK(clReleaseEvent(moved));
  CHECK(holds(to, m, 10));
  OK(clReleaseMemObject(m));
  OK(clReleaseMemObject(other));
  OK(clReleaseCommandQueue(first));
  OK(clReleaseCommandQueue(to));
}

/* clAttachBufferToDevice (SnuCL-D 3.6): contents copied at attach time, zeros when never
 * written, writes by other devices written back, a wrong device still correct. */
static void test_attach(void)
{
  cl_int err;
  cl_uint last = ndevs - 1;
  size_t gws = N;
  /* The newest contents move to the attached device, and other devices fetch from it. */
  cl_mem m = clCreateBuffer(ctx, 0, sizeof host, NULL, &err);
  OK(clEnqueueWriteBuffer(q[0], m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  OK(clAttachBufferToDeviceTUTTI(m, devs[last]));
  memset(back, 0, sizeof back);
  OK(clEnqueueReadBuffer(q[last], m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  CHECK(back[1] == 1 && back[N - 1] == N - 1);
  /* A kernel elsewhere writes it: the bytes go back to the attached device. */
  int k = 5;
  OK(clSetKernelArg(kadd, 0, sizeof m, &m));
  OK(clSetKernelArg(kadd, 1, sizeof k, &k));
  OK(clEnqueueNDRangeKernel(q[0], kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(q[last], m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  CHECK(back[0] == 5 && back[N - 1] == N - 1 + 5);
  /* Attached to the wrong device: every device adds in turn, still right. */
  OK(clAttachBufferToDeviceTUTTI(m, devs[0]));
  int total = 5;
  for (cl_uint d = 0; d < ndevs; d++) {
    k = (int)d + 1;
    total += k;
    OK(clSetKernelArg(kadd, 1, sizeof k, &k));
    OK(clEnqueueNDRangeKernel(q[ndevs - 1 - d], kadd, 1, NULL, &gws, NULL, 0, NULL, NULL));
  }
  OK(clEnqueueReadBuffer(q[ndevs / 2], m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  if (back[0] != total)
    fprintf(stderr, "# rank %d: attach: %d, not %d\n", rank, back[0], total);
  CHECK(back[0] == total && back[N - 1] == N - 1 + total);
  /* A sub-buffer of an attached buffer, written on another device. */
  cl_buffer_region r = {N / 2 * sizeof(int), N / 2 * sizeof(int)};
  cl_mem sub = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  OK(err);
  size_t half = N / 2;
  k = 1000;
  OK(clSetKernelArg(kadd, 0, sizeof sub, &sub));
  OK(clSetKernelArg(kadd, 1, sizeof k, &k));
  OK(clEnqueueNDRangeKernel(q[last], kadd, 1, NULL, &half, NULL, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(q[0], m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  CHECK(back[0] == total && back[N / 2] == N / 2 + total + 1000 && back[N - 1] == N - 1 + total + 1000);
  /* Errors: a sub-buffer, something that is no device of the context. */
  CHECK(clAttachBufferToDeviceTUTTI(sub, devs[0]) == CL_INVALID_MEM_OBJECT);
  CHECK(clAttachBufferToDeviceTUTTI(m, (cl_device_id)ctx) == CL_INVALID_DEVICE);
  CHECK(clAttachBufferToDeviceTUTTI((cl_mem)ctx, devs[0]) == CL_INVALID_MEM_OBJECT);
  OK(clReleaseMemObject(sub));
  OK(clReleaseMemObject(m));
  /* Never written: the attached device starts from zeros, and others see them. */
  m = clCreateBuffer(ctx, 0, sizeof host, NULL, &err);
  OK(clAttachBufferToDeviceTUTTI(m, devs[last]));
  memset(back, 1, sizeof back);
  OK(clEnqueueReadBuffer(q[0], m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  CHECK(back[0] == 0 && back[N - 1] == 0);
  OK(clReleaseMemObject(m));
}

int main(int argc, char **argv)
{
  OK(clGetPlatformIDs(1, &platform, NULL));
  int own_mpi = ranks_start(&argc, &argv, &rank, &nranks);
  if (own_mpi < 0)
    return 1;
  OK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 64, devs, &ndevs));
  cl_int err;
  ctx = clCreateContext(NULL, ndevs, devs, NULL, NULL, &err);
  OK(err);
  for (cl_uint d = 0; d < ndevs; d++) {
    q[d] = clCreateCommandQueue(ctx, devs[d], CL_QUEUE_PROFILING_ENABLE, &err);
    OK(err);
  }
  prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  /* With argument info: the build group asks for it (answered alike on every rank). */
  OK(clBuildProgram(prog, 0, NULL, "-cl-kernel-arg-info", NULL, NULL));
  kadd = clCreateKernel(prog, "add", &err);
  kcopy = clCreateKernel(prog, "copy", &err);
  kfill = clCreateKernel(prog, "fill", &err);
  OK(err);
  for (int i = 0; i < N; i++)
    host[i] = i;
  static const struct {
    const char *name;
    void (*fn)(void);
  } groups[] = {{"table", test_table}, {"chain", test_chain}, {"copy", test_copy},
                {"map", test_map}, {"subbuffers", test_subbuffers}, {"build", test_build},
                {"events", test_events}, {"attach", test_attach}, {"migrate", test_migrate},
                {"replicas", test_replicas}};
  size_t n = sizeof groups / sizeof groups[0];
  printf("1..%zu\n", n);
  int total = 0;
  for (size_t i = 0; i < n; i++) {
    failures = 0;
    if (argc > 1 && strcmp(argv[1], groups[i].name) != 0) {
      printf("ok %zu - %s # SKIP not selected\n", i + 1, groups[i].name);
      continue;
    }
    groups[i].fn();
    int all = failures;
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("%s %zu - %s (%d ranks, %u devices)\n", all ? "not ok" : "ok", i + 1, groups[i].name,
           nranks, ndevs);
    fflush(stdout);
    total += all;
  }
  clReleaseKernel(kadd);
  clReleaseKernel(kcopy);
  clReleaseKernel(kfill);
  clReleaseProgram(prog);
  for (cl_uint d = 0; d < ndevs; d++)
    clReleaseCommandQueue(q[d]);
  clReleaseContext(ctx);
  if (own_mpi)
    MPI_Finalize();
  return total ? 1 : 0;
}
