/* The collective buffer commands (cl_tutti_collective) against host-computed results, on
 * every device of the job: run by tutti-run at 1 to 4 ranks (tests/cluster/collective.test). One
 * source and one destination buffer per device; rank 0 prints TAP. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, rank;
#define CHECK(c)                                                                                  \
  do {                                                                                            \
    if (!(c)) {                                                                                   \
      fprintf(stderr, "# rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #c);    \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)
#define OK(x) CHECK((x) == CL_SUCCESS)

enum { B = 256 }; /* elements per block */
static cl_uint n;
static cl_context ctx;
static cl_command_queue q[16];
static cl_mem src[16], dst[16];
static size_t esize;

/* Element e of block b of source i, as a double (every datatype holds it exactly). */
static double val(cl_uint i, size_t b, size_t e)
{
  return (double)((int)(i * 1000 + b * 100 + e % 97) - 300);
}

static void put(void *buf, size_t k, double v, cl_channel_type t)
{
  if (t == CL_SIGNED_INT32)
    ((cl_int *)buf)[k] = (cl_int)v;
  else if (t == CL_UNSIGNED_INT32)
    ((cl_uint *)buf)[k] = (cl_uint)(cl_int)v;
  else if (t == CL_FLOAT)
    ((cl_float *)buf)[k] = (cl_float)v;
  else
    ((cl_double *)buf)[k] = v;
}

static double get(const void *buf, size_t k, cl_channel_type t)
{
  if (t == CL_SIGNED_INT32)
    return ((const cl_int *)buf)[k];
  if (t == CL_UNSIGNED_INT32)
    return (double)(cl_int)((const cl_uint *)buf)[k];
  if (t == CL_FLOAT)
    return ((const cl_float *)buf)[k];
  return ((const cl_double *)buf)[k];
}

/* Sources hold n blocks each; destinations n blocks, set to -1 first. */
static void fill(cl_channel_type t)
{
  esize = t == CL_DOUBLE ? 8 : 4;
  size_t bytes = n * B * esize;
  void *h = malloc(bytes);
  for (cl_uint i = 0; i < n; i++) {
    for (size_t b = 0; b < n; b++)
      for (size_t e = 0; e < B; e++)
        put(h, b * B + e, val(i, b, e), t);
    OK(clEnqueueWriteBuffer(q[i], src[i], CL_TRUE, 0, bytes, h, 0, NULL, NULL));
    for (size_t k = 0; k < n * B; k++)
      put(h, k, -1, t);
    OK(clEnqueueWriteBuffer(q[i], dst[i], CL_TRUE, 0, bytes, h, 0, NULL, NULL));
  }
  free(h);
}

/* Block b of destination j must hold `want(j, b, e)` (NAN: untouched, -1). */
static void expect(cl_channel_type t, double (*want)(cl_uint j, size_t b, size_t e))
{
  size_t bytes = n * B * esize;
  void *h = malloc(bytes);
  for (cl_uint j = 0; j < n; j++) {
    OK(clEnqueueReadBuffer(q[j], dst[j], CL_TRUE, 0, bytes, h, 0, NULL, NULL));
    int bad = 0;
    for (size_t b = 0; b < n; b++)
      for (size_t e = 0; e < B; e++) {
        double w = want(j, b, e);
        if (isnan(w))
          w = -1;
        bad += get(h, b * B + e, t) != w;
      }
    if (bad)
      fprintf(stderr, "# rank %d: destination %u: %d wrong elements\n", rank, j, bad);
    CHECK(bad == 0);
  }
  free(h);
}

static double w_alltoall(cl_uint j, size_t b, size_t e) { return val((cl_uint)b, j, e); }
static double w_broadcast(cl_uint j, size_t b, size_t e) { return b == 0 ? val(0, n > 1, e) : NAN; }
static double w_scatter(cl_uint j, size_t b, size_t e) { return b == 0 ? val(0, j, e) : NAN; }
static double w_gather(cl_uint j, size_t b, size_t e)
{
  return j == n - 1 ? val((cl_uint)b, 0, e) : NAN;
}
static double w_allgather(cl_uint j, size_t b, size_t e) { return val((cl_uint)b, 0, e); }
static double sum(cl_uint upto, size_t b, size_t e)
{
  double s = 0;
  for (cl_uint i = 0; i <= upto; i++)
    s += val(i, b, e);
  return s;
}
static double w_reduce(cl_uint j, size_t b, size_t e)
{
  return j == 0 && b == 0 ? sum(n - 1, 0, e) : NAN;
}
static double w_allreduce(cl_uint j, size_t b, size_t e) { return b == 0 ? sum(n - 1, 0, e) : NAN; }
static double w_reducescatter(cl_uint j, size_t b, size_t e) { return b == 0 ? sum(n - 1, j, e) : NAN; }
static double w_scan(cl_uint j, size_t b, size_t e) { return b == 0 ? sum(j, 0, e) : NAN; }

int main(void)
{
  cl_platform_id p;
  cl_device_id d[16];
  cl_int err;
  clGetPlatformIDs(1, &p, NULL);
  clGetPlatformInfo(p, CL_PLATFORM_TUTTI_RANK, sizeof rank, &rank, NULL);
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 16, d, &n);
  ctx = clCreateContext(NULL, n, d, NULL, NULL, &err);
  for (cl_uint i = 0; i < n; i++) {
    q[i] = clCreateCommandQueue(ctx, d[i], 0, &err);
    src[i] = clCreateBuffer(ctx, 0, n * B * 8, NULL, &err);
    dst[i] = clCreateBuffer(ctx, 0, n * B * 8, NULL, &err);
  }
  int total = 0, test = 0;
  printf("1..11\n");
#define REPORT(what)                                                                              \
  do {                                                                                            \
    printf("%s %d - %s (%u devices)\n", failures ? "not ok" : "ok", ++test, what, n);           \
    total += failures;                                                                            \
    failures = 0;                                                                                 \
  } while (0)

  size_t cb = B * 4;
  cl_event ev[16];
  fill(CL_SIGNED_INT32);
  OK(clEnqueueAlltoAllBuffer(q, n, src, dst, NULL, NULL, cb, 0, NULL, ev));
  OK(clWaitForEvents(n, ev));
  cl_command_type ct = 0;
  clGetEventInfo(ev[0], CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, NULL);
  CHECK(ct == CL_COMMAND_ALLTOALL_BUFFER);
  for (cl_uint i = 0; i < n; i++)
    clReleaseEvent(ev[i]);
  expect(CL_SIGNED_INT32, w_alltoall);
  REPORT("alltoall");

  fill(CL_SIGNED_INT32);
  OK(clEnqueueBroadcastBuffer(q, src[0], n, dst, n > 1 ? cb : 0, NULL, cb, 0, NULL, NULL));
  expect(CL_SIGNED_INT32, w_broadcast);
  REPORT("broadcast");

  fill(CL_SIGNED_INT32);
  OK(clEnqueueScatterBuffer(q, src[0], n, dst, 0, NULL, cb, 0, NULL, NULL));
  expect(CL_SIGNED_INT32, w_scatter);
  REPORT("scatter");

  fill(CL_SIGNED_INT32);
  cl_event g;
  OK(clEnqueueGatherBuffer(q[n - 1], n, src, dst[n - 1], NULL, 0, cb, 0, NULL, &g));
  OK(clWaitForEvents(1, &g));
  clReleaseEvent(g);
  expect(CL_SIGNED_INT32, w_gather);
  REPORT("gather");

  fill(CL_SIGNED_INT32);
  OK(clEnqueueAllGatherBuffer(q, n, src, dst, NULL, NULL, cb, 0, NULL, NULL));
  expect(CL_SIGNED_INT32, w_allgather);
  REPORT("allgather");

  static const cl_channel_type types[] = {CL_SIGNED_INT32, CL_FLOAT, CL_DOUBLE};
  static const char *tnames[] = {"int", "float", "double"};
  for (int t = 0; t < 3; t++) {
    char what[64];
    fill(types[t]);
    size_t tcb = B * esize;
    OK(clEnqueueReduceBuffer(q[0], n, src, dst[0], NULL, 0, tcb, types[t], 0, NULL, NULL));
    expect(types[t], w_reduce);
    fill(types[t]);
    OK(clEnqueueAllReduceBuffer(q, n, src, dst, NULL, NULL, tcb, types[t], 0, NULL, NULL));
    expect(types[t], w_allreduce);
    snprintf(what, sizeof what, "reduce and allreduce, %s", tnames[t]);
    REPORT(what);
  }
  fill(CL_UNSIGNED_INT32);
  OK(clEnqueueReduceScatterBuffer(q, n, src, dst, NULL, NULL, cb, CL_UNSIGNED_INT32, 0, NULL, NULL));
  expect(CL_UNSIGNED_INT32, w_reducescatter);
  REPORT("reducescatter, uint");

  fill(CL_FLOAT);
  OK(clEnqueueScanBuffer(q, n, src, dst, NULL, NULL, cb, CL_FLOAT, 0, NULL, NULL));
  expect(CL_FLOAT, w_scan);
  REPORT("scan, float");

  /* Invalid calls. */
  size_t big = n * B * 8 + 4;
  CHECK(clEnqueueAlltoAllBuffer(NULL, n, src, dst, NULL, NULL, cb, 0, NULL, NULL) == CL_INVALID_VALUE);
  CHECK(clEnqueueAlltoAllBuffer(q, n, NULL, dst, NULL, NULL, cb, 0, NULL, NULL) == CL_INVALID_VALUE);
  CHECK(clEnqueueAlltoAllBuffer(q, n, src, dst, NULL, NULL, big, 0, NULL, NULL) == CL_INVALID_VALUE);
  CHECK(clEnqueueBroadcastBuffer(q, src[0], n, dst, big, NULL, 4, 0, NULL, NULL) == CL_INVALID_VALUE);
  CHECK(clEnqueueReduceBuffer(q[0], n, src, dst[0], NULL, 0, cb, 0x7777, 0, NULL, NULL) == CL_INVALID_VALUE);
  CHECK(clEnqueueReduceBuffer(q[0], n, src, dst[0], NULL, 0, 6, CL_FLOAT, 0, NULL, NULL) == CL_INVALID_VALUE);
  CHECK(clEnqueueGatherBuffer(q[0], 0, src, dst[0], NULL, 0, cb, 0, NULL, NULL) == CL_INVALID_VALUE);
  cl_context other = clCreateContext(NULL, 1, d, NULL, NULL, &err);
  cl_mem foreign = clCreateBuffer(other, 0, big, NULL, &err);
  cl_mem mixed[16];
  memcpy(mixed, src, sizeof mixed);
  mixed[0] = foreign;
  CHECK(clEnqueueAllGatherBuffer(q, n, mixed, dst, NULL, NULL, cb, 0, NULL, NULL) == CL_INVALID_CONTEXT);
  mixed[0] = (cl_mem)ctx;
  CHECK(clEnqueueAllGatherBuffer(q, n, mixed, dst, NULL, NULL, cb, 0, NULL, NULL) == CL_INVALID_MEM_OBJECT);
  cl_command_queue badq[16];
  memcpy(badq, q, sizeof badq);
  badq[0] = (cl_command_queue)ctx;
  CHECK(clEnqueueAlltoAllBuffer(badq, n, src, dst, NULL, NULL, cb, 0, NULL, NULL) == CL_INVALID_COMMAND_QUEUE);
  CHECK(clEnqueueAlltoAllBuffer(q, n, src, dst, NULL, NULL, cb, 1, NULL, NULL) == CL_INVALID_EVENT_WAIT_LIST);
  clReleaseMemObject(foreign);
  clReleaseContext(other);
  REPORT("invalid calls");

  for (cl_uint i = 0; i < n; i++) {
    clFinish(q[i]);
    clReleaseMemObject(src[i]);
    clReleaseMemObject(dst[i]);
    clReleaseCommandQueue(q[i]);
  }
  clReleaseContext(ctx);
  /* Every rank checked the same results (host memory is replicated): rank 0 speaks. */
  return total ? 1 : 0;
}
