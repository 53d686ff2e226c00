/* One kernel launched in parts over several queues of one device, the parts of a launch
 * starting together, for many local sizes in one process: the pattern that makes PoCL 3.1's
 * CPU drivers abort with "pocl_release_dlhandle_cache: Assertion 'found->ref_count > 0'
 * failed" (runtime/base/backend.h, serial_parts, says why). Part 0 starts at global offset 0, the
 * others past it, and the parts differ in extent.
 *
 * Usage: pocl_parts split|plain QUEUES [ROUNDS]
 *   split: clEnqueueSplitNDRangeKernelTUTTI over QUEUES queues of the first device (Tutti),
 *          each launch waiting for the one before (its parts start together as it ends)
 *   plain: parts enqueued by this program, one clEnqueueNDRangeKernel per queue, held by one
 *          user event and let go at once; through PoCL directly
 *          (OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd) it shows the abort without Tutti
 * The buffer is checked against the host at the end, which prints "ok - ..." then. */
#include "tests/app.h"

#include <string.h>

static const char *source =
    "#pragma tutti global i => readwrite a[i]\n"
    "__kernel void parts(__global uint *a, uint s)\n"
    "{ size_t i = get_global_id(0); a[i] = a[i] * 2654435761u + s; }\n";

int main(int argc, char **argv)
{
  if (argc < 3 || (strcmp(argv[1], "split") && strcmp(argv[1], "plain"))) {
    fprintf(stderr, "usage: pocl_parts split|plain QUEUES [ROUNDS]\n");
    return 2;
  }
  int split_mode = !strcmp(argv[1], "split");
  cl_uint nq = (cl_uint)atoi(argv[2]);
  int rounds = argc > 3 ? atoi(argv[3]) : 24;
  struct app a;
  cl_int err;
  app_open(&a);
  cl_command_queue *qs = app_queues(&a, nq, nq);
  clEnqueueSplitNDRangeKernelTUTTI_fn split = split_mode ? app_split_fn() : NULL;
  if (split_mode && !split) {
    printf("not ok - no clEnqueueSplitNDRangeKernelTUTTI on this platform\n");
    return 1;
  }
  cl_program p = clCreateProgramWithSource(a.ctx, 1, &source, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
  cl_kernel k = clCreateKernel(p, "parts", &err);
  CHECK(err);
  /* Room for 1024 work-groups of up to 64 items each on every queue. */
  size_t cap = ((size_t)nq * 1024 + nq) * 64;
  cl_uint *host = calloc(cap, sizeof *host), *got = calloc(cap, sizeof *got);
  cl_mem b = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, cap * sizeof *host,
                            host, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof b, &b));
  cl_event prev = NULL;
  for (int r = 0; r < rounds; r++) {
    /* A local size not seen before in this process: new cache entries in PoCL. */
    size_t lws = (size_t)(r % 64) + 1, n = lws * (nq * 512 * (1 + r % 2) + nq / 2 + 1);
    cl_uint s = (cl_uint)r + 1;
    CHECK(clSetKernelArg(k, 1, sizeof s, &s));
    if (split_mode) {
      /* Each launch waits for the one before: its parts start together as that one ends. */
      cl_event done;
      CHECK(split(nq, qs, k, 1, NULL, &n, &lws, prev ? 1 : 0, prev ? &prev : NULL, &done));
      if (prev)
        CHECK(clReleaseEvent(prev));
      prev = done;
    } else {
      /* Parts of unequal extents, held by one user event and let go at once. */
      cl_event gate = clCreateUserEvent(a.ctx, &err);
      CHECK(err);
      size_t groups = n / lws, at = 0;
      for (cl_uint j = 0; j < nq && at < groups; j++) {
        size_t take = j + 1 == nq ? groups - at : (j % 2 ? 256 : 512);
        if (take > groups - at)
          take = groups - at;
        size_t off = at * lws, gws = take * lws;
        CHECK(clEnqueueNDRangeKernel(qs[j], k, 1, &off, &gws, &lws, 1, &gate, NULL));
        CHECK(clFlush(qs[j]));
        at += take;
      }
      CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
      for (cl_uint j = 0; j < nq; j++)
        CHECK(clFinish(qs[j]));
      CHECK(clReleaseEvent(gate));
    }
    for (size_t i = 0; i < n; i++)
      host[i] = host[i] * 2654435761u + s;
  }
  if (prev)
    CHECK(clWaitForEvents(1, &prev));
  CHECK(clEnqueueReadBuffer(qs[0], b, CL_TRUE, 0, cap * sizeof *got, got, 0, NULL, NULL));
  for (size_t i = 0; i < cap; i++)
    if (got[i] != host[i]) {
      printf("not ok - after %d rounds: element %zu is %u, want %u\n", rounds, i, got[i],
             host[i]);
      return 1;
    }
  printf("ok - %d rounds of one kernel in parts over %u queues of one device (%s), exact\n",
         rounds, nq, split_mode ? "split launches" : "plain launches");
  return 0;
}
