/* Spilling (doc/spill.md): an unmodified program whose buffers add up to more than a device's
 * budget (TUTTI_DEVICE_MEM), used a few at a time, on every device of the platform in turn.
 * Buffer 0 comes from the program's memory (CL_MEM_COPY_HOST_PTR); each next one is computed
 * from the one before; then each is mixed with another; then all are read back, one through
 * a map and one through a sub-buffer, and compared with the same integer arithmetic on the
 * host (exact).
 *
 * Usage: spill [BUFFERS] [KIB]   (default 8 buffers of 1024 KiB)
 *   SPILL_TOO_SMALL=1: the budget is below one command's two buffers: the first launch must
 *   fail with CL_MEM_OBJECT_ALLOCATION_FAILURE and nothing else be lost.
 *   SPILL_KILL_RANK=r: rank r kills itself (SIGKILL) once the buffers were computed.
 *   SPILL_SPLIT=Q: every launch is one split launch (cl_tutti_split) over Q queues of each
 *   device, and bytes go in and out by chunks on the queues of the parts that use them: a
 *   device then needs only its parts' chunks, one part at a time.
 *   SPILL_COPY=1 (with SPILL_SPLIT): buffer 0 comes from the program's memory
 *   (CL_MEM_COPY_HOST_PTR) all the same: each part brings back only its chunk of it. */
#include "tests/app.h"
#include "tests/launcher.h"

#include <signal.h>
#include <string.h>

static const char *source =
    "#pragma tutti global k => read in[k], write out[k]\n"
    "__kernel void advance(__global const uint *in, __global uint *out, uint i)\n"
    "{ size_t k = get_global_id(0); out[k] = in[k] * 2654435761u + i; }\n"
    "#pragma tutti global k => readwrite io[k], read other[k]\n"
    "__kernel void blend(__global uint *io, __global const uint *other)\n"
    "{ size_t k = get_global_id(0); io[k] = (io[k] ^ (io[k] >> 7)) + other[k]; }\n";

static int check(const char *what, const cl_uint *got, const cl_uint *want, size_t n)
{
  for (size_t k = 0; k < n; k++)
    if (got[k] != want[k]) {
      printf("not ok - %s: element %zu is %u, want %u\n", what, k, got[k], want[k]);
      return 1;
    }
  return 0;
}

int main(int argc, char **argv)
{
  size_t nbuf = argc > 1 ? strtoul(argv[1], NULL, 10) : 8;
  size_t kib = argc > 2 ? strtoul(argv[2], NULL, 10) : 1024;
  size_t n = kib * 1024 / sizeof(cl_uint);
  struct app a;
  cl_int err;
  app_open(&a);
  /* Split launches: Q queues per device; chunk j of every buffer belongs to queue j. */
  cl_uint q = getenv("SPILL_SPLIT") ? (cl_uint)atoi(getenv("SPILL_SPLIT")) : 0;
  cl_uint nq = q ? a.ndev * q : 0;
  cl_command_queue *qs = app_queues(&a, nq, q);
  clEnqueueSplitNDRangeKernelTUTTI_fn split = NULL;
  if (q) {
    split = app_split_fn();
    if (!split || n % nq) {
      printf("not ok - no split launches, or %zu elements not a multiple of %u parts\n", n, nq);
      return 1;
    }
  }
  size_t chunk = nq ? n / nq : n;
  cl_uint **ref = calloc(nbuf, sizeof *ref);
  for (size_t i = 0; i < nbuf; i++)
    ref[i] = malloc(n * sizeof **ref);
  for (size_t k = 0; k < n; k++)
    ref[0][k] = (cl_uint)(k * 7 + 1);
  cl_program p = clCreateProgramWithSource(a.ctx, 1, &source, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
  cl_kernel step = clCreateKernel(p, "advance", &err);
  CHECK(err);
  cl_kernel mix = clCreateKernel(p, "blend", &err);
  CHECK(err);
  cl_mem *b = calloc(nbuf, sizeof *b);
  int copy = !q || getenv("SPILL_COPY");
  b[0] = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE | (copy ? CL_MEM_COPY_HOST_PTR : 0),
                        n * sizeof(cl_uint), copy ? ref[0] : NULL, &err);
  CHECK(err);
  for (cl_uint j = 0; j < nq && !copy; j++)
    CHECK(clEnqueueWriteBuffer(qs[j], b[0], CL_TRUE, j * chunk * sizeof(cl_uint),
                               chunk * sizeof(cl_uint), ref[0] + j * chunk, 0, NULL, NULL));
  for (size_t i = 1; i < nbuf; i++) {
    b[i] = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE, n * sizeof(cl_uint), NULL, &err);
    CHECK(err);
  }
  /* Each command waits for the one before (queues of different devices). */
  cl_event last = NULL;
  for (size_t i = 1; i < nbuf; i++) {
    cl_uint ii = (cl_uint)i;
    CHECK(clSetKernelArg(step, 0, sizeof(cl_mem), &b[i - 1]));
    CHECK(clSetKernelArg(step, 1, sizeof(cl_mem), &b[i]));
    CHECK(clSetKernelArg(step, 2, sizeof ii, &ii));
    cl_event ev;
    err = q ? split(nq, qs, step, 1, NULL, &n, NULL, last ? 1 : 0, last ? &last : NULL, &ev)
            : clEnqueueNDRangeKernel(a.qs[i % a.ndev], step, 1, NULL, &n, NULL, last ? 1 : 0,
                                     last ? &last : NULL, &ev);
    if (getenv("SPILL_TOO_SMALL")) {
      if (err != CL_MEM_OBJECT_ALLOCATION_FAILURE) {
        printf("not ok - a launch over budget returned %d, want "
               "CL_MEM_OBJECT_ALLOCATION_FAILURE\n", err);
        return 1;
      }
      /* The program's bytes are still there. */
      cl_uint *got = malloc(n * sizeof *got);
      CHECK(clEnqueueReadBuffer(a.qs[0], b[0], CL_TRUE, 0, n * sizeof *got, got, 0, NULL, NULL));
      if (check("buffer 0 after the refused launch", got, ref[0], n))
        return 1;
      printf("ok - a launch over budget: CL_MEM_OBJECT_ALLOCATION_FAILURE, buffer 0 intact\n");
      return 0;
    }
    CHECK(err);
    if (last)
      clReleaseEvent(last);
    last = ev;
    for (size_t k = 0; k < n; k++)
      ref[i][k] = ref[i - 1][k] * 2654435761u + ii;
  }
  for (size_t i = 0; i < nbuf; i++) {
    size_t o = (i + nbuf / 2) % nbuf;
    if (o == i)
      continue;
    CHECK(clSetKernelArg(mix, 0, sizeof(cl_mem), &b[i]));
    CHECK(clSetKernelArg(mix, 1, sizeof(cl_mem), &b[o]));
    cl_event ev;
    CHECK(q ? split(nq, qs, mix, 1, NULL, &n, NULL, last ? 1 : 0, last ? &last : NULL, &ev)
            : clEnqueueNDRangeKernel(a.qs[(i + 1) % a.ndev], mix, 1, NULL, &n, NULL,
                                     last ? 1 : 0, last ? &last : NULL, &ev));
    if (last)
      clReleaseEvent(last);
    last = ev;
    for (size_t k = 0; k < n; k++)
      ref[i][k] = (ref[i][k] ^ (ref[i][k] >> 7)) + ref[o][k];
  }
  if (last) {
    CHECK(clWaitForEvents(1, &last));
    clReleaseEvent(last);
  }
  const char *kill_rank = getenv("SPILL_KILL_RANK"), *rank = launcher_rank();
  if (kill_rank && rank && !strcmp(kill_rank, rank))
    raise(SIGKILL);
  int bad = 0;
  cl_uint *got = malloc(n * sizeof *got);
  for (size_t i = 0; i < nbuf; i++) {
    char what[64];
    snprintf(what, sizeof what, "buffer %zu", i);
    if (q) {
      for (cl_uint j = 0; j < nq; j++)
        CHECK(clEnqueueReadBuffer(qs[j], b[i], CL_TRUE, j * chunk * sizeof *got,
                                  chunk * sizeof *got, got + j * chunk, 0, NULL, NULL));
      bad |= check(what, got, ref[i], n);
    } else if (i == 1 % nbuf && nbuf > 1) {
      cl_uint *m = clEnqueueMapBuffer(a.qs[0], b[i], CL_TRUE, CL_MAP_READ, 0, n * sizeof *m, 0,
                                      NULL, NULL, &err);
      CHECK(err);
      bad |= check("buffer 1 (mapped)", m, ref[i], n);
      CHECK(clEnqueueUnmapMemObject(a.qs[0], b[i], m, 0, NULL, NULL));
    } else if (i == 2 && n >= 2048) {
      cl_buffer_region r = {n / 2 * sizeof *got, (n - n / 2) * sizeof *got};
      cl_mem sub = clCreateSubBuffer(b[i], 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
      CHECK(err);
      CHECK(clEnqueueReadBuffer(a.qs[a.ndev - 1], sub, CL_TRUE, 0, r.size, got, 0, NULL, NULL));
      bad |= check("buffer 2's second half (sub-buffer)", got, ref[i] + n / 2, n - n / 2);
      clReleaseMemObject(sub);
    } else {
      CHECK(clEnqueueReadBuffer(a.qs[i % a.ndev], b[i], CL_TRUE, 0, n * sizeof *got, got, 0,
                                NULL, NULL));
      bad |= check(what, got, ref[i], n);
    }
  }
  if (!bad)
    printf("ok - %zu buffers of %zu KiB exact over %u device(s)%s\n", nbuf, kib, a.ndev,
           q ? ", split launches" : "");
  for (size_t i = 0; i < nbuf; i++) {
    clReleaseMemObject(b[i]);
    free(ref[i]);
  }
  for (cl_uint j = 0; j < nq; j++)
    clReleaseCommandQueue(qs[j]);
  free(qs);
  clReleaseKernel(step);
  clReleaseKernel(mix);
  clReleaseProgram(p);
  app_close(&a);
  free(got);
  free(b);
  free(ref);
  return bad;
}
