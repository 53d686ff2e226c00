/* Transfer benchmark: Tutti's figures beside raw MPI's (or the backend's), measured in the
 * same run, medians of several rounds, with their ratio. bench/run-transfer.sh runs it.
 *
 *   transfer [--rounds N]            under tutti-run -n N (N >= 2):
 *     copy 1 MiB and 256 MiB        a buffer written on rank 0's device moved to rank 1's
 *                                   (clEnqueueMigrateMemObjects + clFinish) against
 *                                   MPI_Send/MPI_Recv of the same bytes (and a 4-byte answer,
 *                                   as clFinish gets one); ratio = MPI time / Tutti time;
 *                                   where libcuda is, also against the CUDA driver's copy
 *                                   from GPU 0 to GPU 1 in rank 0's process (the same copy
 *                                   engines a copy between processes uses)
 *     first read 64 KiB             the job's first blocking read of a buffer held on rank 0's
 *                                   device, right after the context, against the same write
 *                                   and read made again, a new buffer each time (median of
 *                                   the later ones; slowest rank each; ratio = later / first)
 *     status poll, pending          clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS) of a
 *                                   command of rank 0's device that is not done, answered
 *                                   alike everywhere, against an MPI_Bcast of 32 bytes
 *     read 256 MiB, read 64 B       a blocking clEnqueueReadBuffer of a buffer held on rank
 *                                   0's device, which every rank's host receives, against
 *                                   MPI_Bcast of the same bytes (slowest rank of each round)
 *   transfer --peer [--baseline NAME] [--rounds N]
 *                                   one process, the first two devices of Tutti's platform
 *                                   and of the backend's (as --host picks it):
 *     device 0 -> device 1, 1 MiB and 256 MiB
 *                                   bytes filled on device 0 moved to device 1
 *                                   (clEnqueueMigrateMemObjects + clFinish) through Tutti
 *                                   against the backend's own platform (for NVIDIA: its copy
 *                                   between two GPUs of one context); ratio as --host;
 *                                   and against the CUDA driver's own copy between the
 *                                   first two GPUs (bench/cuda_peer.h), where libcuda is
 *     copy to device 1's, 1 MiB and 256 MiB
 *                                   the same bytes copied into another buffer by a command
 *                                   of device 1 (clEnqueueCopyBuffer + clFinish), against the
 *                                   same baselines
 *   transfer --host [--baseline NAME] [--rounds N]
 *                                   one process, the loader showing Tutti and its backend
 *                                   (the first other platform, or the one named NAME):
 *     write/read 256 MiB            clEnqueueWriteBuffer/ReadBuffer through Tutti against the
 *                                   backend's own platform; ratio = backend time / Tutti time
 * Every figure is a median over the rounds; a ratio of 1 is the baseline's speed. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "bench/cuda_peer.h"

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    cl_int e_ = (x);                                                                              \
    if (e_ != CL_SUCCESS) {                                                                       \
      fprintf(stderr, "transfer bench: %s failed: %d (line %d)\n", #x, e_, __LINE__);            \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void report(const char *what, size_t bytes, double tutti, double base, const char *bname)
{
  printf("%-34s tutti %10.3f ms %8.2f GB/s   %-10s %10.3f ms %8.2f GB/s   ratio %.2f\n", what,
         tutti * 1e3, bytes / tutti / 1e9, bname, base * 1e3, bytes / base / 1e9, base / tutti);
  fflush(stdout);
}

/* --- one process: Tutti against its backend ------------------------------------------- */

static double host_round(cl_command_queue q, cl_mem m, void *buf, size_t bytes, int write)
{
  CHECK(clFinish(q));
  double t0 = now();
  if (write)
    CHECK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, bytes, buf, 0, NULL, NULL));
  else
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, buf, 0, NULL, NULL));
  return now() - t0;
}

/* Tutti's platform and the backend's (the first other one, or the one named want). */
static int pick_platforms(const char *want, const char *mode, cl_platform_id *tutti,
                          cl_platform_id *base, char *bname, size_t cap)
{
  cl_platform_id ps[8];
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(8, ps, &np));
  *tutti = *base = NULL;
  snprintf(bname, cap, "backend");
  for (cl_uint i = 0; i < np; i++) {
    char name[128] = "";
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (strstr(name, "Tutti"))
      *tutti = ps[i];
    else if (!*base && (!want || strstr(name, want))) {
      *base = ps[i];
      snprintf(bname, cap, "%.10s", name);
    }
  }
  if (!*tutti || !*base) {
    fprintf(stderr, "transfer %s: the loader must show Tutti and a backend%s%s "
                    "(bench/run-transfer.sh sets that up); it shows %u platform(s):\n", mode,
            want ? " named " : "", want ? want : "", np);
    for (cl_uint i = 0; i < np; i++) {
      char name[128] = "";
      clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
      fprintf(stderr, "  %s\n", name);
    }
    return 2;
  }
  return 0;
}

static int host_mode(int rounds, const char *want)
{
  cl_platform_id tutti, base;
  char bname[64];
  if (pick_platforms(want, "--host", &tutti, &base, bname, sizeof bname))
    return 2;
  size_t bytes = (size_t)256 << 20;
  char *buf = malloc(bytes);
  memset(buf, 1, bytes);
  cl_command_queue q[2];
  cl_mem m[2];
  cl_context c[2];
  cl_platform_id which[2] = {tutti, base};
  for (int k = 0; k < 2; k++) {
    cl_device_id d;
    cl_int err;
    CHECK(clGetDeviceIDs(which[k], CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    c[k] = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    CHECK(err);
    q[k] = clCreateCommandQueue(c[k], d, 0, &err);
    CHECK(err);
    m[k] = clCreateBuffer(c[k], 0, bytes, NULL, &err);
    CHECK(err);
    host_round(q[k], m[k], buf, bytes, 1); /* first touch */
  }
  double *t = malloc(4 * (size_t)rounds * sizeof *t);
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < 2; k++) {
      t[(0 * 2 + k) * rounds + r] = host_round(q[k], m[k], buf, bytes, 1);
      t[(1 * 2 + k) * rounds + r] = host_round(q[k], m[k], buf, bytes, 0);
    }
  report("write 256 MiB, one process", bytes, median(t, rounds), median(t + rounds, rounds),
         bname);
  report("read 256 MiB, one process", bytes, median(t + 2 * rounds, rounds),
         median(t + 3 * rounds, rounds), bname);
  for (int k = 0; k < 2; k++) {
    clReleaseMemObject(m[k]);
    clReleaseCommandQueue(q[k]);
    clReleaseContext(c[k]);
  }
  free(t);
  free(buf);
  return 0;
}

/* Tutti's time beside the CUDA driver's copy of the same bytes from GPU 0 to GPU 1. */
static void cuda_report(const char *what, size_t bytes, double tutti, int rounds)
{
  char why[128] = "";
  static const char *const kinds[] = {"CUDA", "CUDA VMM", "CUDA idle"};
  /* cuMemAlloc's memory (the baseline), then memory as Tutti allocates it (physical
   * allocations mapped for both GPUs), then that memory copied after the host idled
   * (bench/cuda_peer.h). */
  for (int k = 0; k < 3; k++) {
    double c = cuda_peer_copy_of(0, 1, bytes, rounds, (enum cuda_mem_kind)k, why, sizeof why);
    if (c > 0)
      report(what, bytes, tutti, c, kinds[k]);
    else
      printf("%-34s (%s's copy not measured: %s)\n", what, kinds[k], why);
  }
  fflush(stdout);
}

/* Bytes filled on device 0 moved to device 1 of one context (dst NULL: the buffer itself
 * migrates; else copied into dst by a command of device 1): the time of the move. */
static double peer_round(cl_command_queue q0, cl_command_queue q1, cl_mem m, cl_mem dst,
                         size_t bytes, char pattern)
{
  CHECK(clEnqueueFillBuffer(q0, m, &pattern, 1, 0, bytes, 0, NULL, NULL));
  CHECK(clFinish(q0));
  double t0 = now();
  if (dst)
    CHECK(clEnqueueCopyBuffer(q1, m, dst, 0, 0, bytes, 0, NULL, NULL));
  else
    CHECK(clEnqueueMigrateMemObjects(q1, 1, &m, 0, 0, NULL, NULL));
  CHECK(clFinish(q1));
  return now() - t0;
}

static int peer_mode(int rounds, const char *want)
{
  cl_platform_id which[2];
  char bname[64];
  if (pick_platforms(want, "--peer", &which[0], &which[1], bname, sizeof bname))
    return 2;
  cl_command_queue q[2][2];
  cl_context c[2];
  for (int k = 0; k < 2; k++) {
    cl_device_id d[2];
    cl_uint n = 0;
    cl_int err;
    clGetDeviceIDs(which[k], CL_DEVICE_TYPE_ALL, 2, d, &n);
    if (n < 2) {
      fprintf(stderr, "transfer --peer: %s shows %u device(s), 2 needed\n",
              k ? bname : "Tutti", n);
      return 2;
    }
    c[k] = clCreateContext(NULL, 2, d, NULL, NULL, &err);
    CHECK(err);
    for (int i = 0; i < 2; i++) {
      q[k][i] = clCreateCommandQueue(c[k], d[i], 0, &err);
      CHECK(err);
    }
  }
  const size_t sizes[] = {(size_t)1 << 20, (size_t)256 << 20};
  double *t = malloc(2 * (size_t)rounds * sizeof *t);
  /* The buffer itself moves (a migration), then its bytes are copied into another buffer
   * on device 1 (a copy command). */
  for (int copy = 0; copy < 2; copy++)
    for (int s = 0; s < 2; s++) {
      size_t bytes = sizes[s];
      cl_mem m[2], dst[2] = {NULL, NULL};
      for (int k = 0; k < 2; k++) {
        cl_int err;
        m[k] = clCreateBuffer(c[k], 0, bytes, NULL, &err);
        CHECK(err);
        if (copy) {
          dst[k] = clCreateBuffer(c[k], 0, bytes, NULL, &err);
          CHECK(err);
        }
        peer_round(q[k][0], q[k][1], m[k], dst[k], bytes, 1); /* first touch */
      }
      /* Each platform's rounds back to back, as CUDA's baseline copies: a copy between GPUs
       * whose link idled takes longer (doc/testing.md, "Figures behind the code"), and the
       * backend's rounds through host memory idle it that long. */
      for (int k = 0; k < 2; k++)
        for (int r = 0; r < rounds; r++)
          t[k * rounds + r] = peer_round(q[k][0], q[k][1], m[k], dst[k], bytes, (char)(r + 2));
      for (int k = 0; k < 2; k++) {
        char got[2];
        CHECK(clEnqueueReadBuffer(q[k][1], copy ? dst[k] : m[k], CL_TRUE, bytes - 2, 2, got, 0,
                                  NULL, NULL));
        if (got[0] != (char)(rounds + 1) || got[1] != (char)(rounds + 1)) {
          fprintf(stderr, "transfer --peer: device 1 holds wrong bytes\n");
          return 1;
        }
        clReleaseMemObject(m[k]);
        if (dst[k])
          clReleaseMemObject(dst[k]);
      }
      static const char *const whats[2][2] = {
          {"device 0 -> device 1, 1 MiB", "device 0 -> device 1, 256 MiB"},
          {"copy to device 1's, 1 MiB", "copy to device 1's, 256 MiB"}};
      double tutti = median(t, rounds);
      report(whats[copy][s], bytes, tutti, median(t + rounds, rounds), bname);
      cuda_report(whats[copy][s], bytes, tutti, rounds);
    }
  for (int k = 0; k < 2; k++) {
    clReleaseCommandQueue(q[k][0]);
    clReleaseCommandQueue(q[k][1]);
    clReleaseContext(c[k]);
  }
  free(t);
  return 0;
}

/* --- several ranks: Tutti against raw MPI (Tutti's MPI, started by tutti-run) --------- */

/* The slowest rank's time of a round. */
static double slowest(double t)
{
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

static void send_bytes(char *buf, size_t bytes, int to)
{
  for (size_t at = 0; at < bytes; at += (size_t)1 << 30) {
    size_t n = bytes - at < ((size_t)1 << 30) ? bytes - at : (size_t)1 << 30;
    MPI_Send(buf + at, (int)n, MPI_BYTE, to, 7, MPI_COMM_WORLD);
  }
}

static void recv_bytes(char *buf, size_t bytes, int from)
{
  for (size_t at = 0; at < bytes; at += (size_t)1 << 30) {
    size_t n = bytes - at < ((size_t)1 << 30) ? bytes - at : (size_t)1 << 30;
    MPI_Recv(buf + at, (int)n, MPI_BYTE, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

int main(int argc, char **argv)
{
  int rounds = 7, host = 0, peer = 0;
  const char *baseline = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--baseline") && i + 1 < argc)
      baseline = argv[++i];
    else if (!strcmp(argv[i], "--host"))
      host = 1;
    else if (!strcmp(argv[i], "--peer"))
      peer = 1;
    else {
      fprintf(stderr, "usage: transfer [--host|--peer [--baseline NAME]] [--rounds N]\n");
      return 2;
    }
  }
  if (rounds < 1)
    rounds = 1;
  if (host)
    return host_mode(rounds, baseline);
  if (peer)
    return peer_mode(rounds, baseline);

  cl_platform_id p;
  CHECK(clGetPlatformIDs(1, &p, NULL)); /* starts MPI in a tutti-run job */
  int started = 0, rank, size;
  MPI_Initialized(&started);
  if (!started) {
    fprintf(stderr, "transfer: run it with tutti-run -n 2 (or more)\n");
    return 2;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    fprintf(stderr, "transfer: needs 2 ranks or more (tutti-run -n 2)\n");
    return 2;
  }
  cl_device_id d[64];
  cl_uint n;
  CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 64, d, &n));
  /* The first device of rank 0 and the first of rank 1. */
  int d0 = -1, d1 = -1;
  for (cl_uint i = 0; i < n; i++) {
    cl_int r;
    CHECK(clGetDeviceInfo(d[i], CL_DEVICE_TUTTI_RANK, sizeof r, &r, NULL));
    if (r == 0 && d0 < 0)
      d0 = (int)i;
    if (r == 1 && d1 < 0)
      d1 = (int)i;
  }
  if (d0 < 0 || d1 < 0) {
    fprintf(stderr, "transfer: ranks 0 and 1 need a device each\n");
    return 2;
  }
  cl_int err;
  cl_context ctx = clCreateContext(NULL, n, d, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q0 = clCreateCommandQueue(ctx, d[d0], 0, &err);
  CHECK(err);
  cl_command_queue q1 = clCreateCommandQueue(ctx, d[d1], 0, &err);
  CHECK(err);
  /* The first read reaching every rank, as a program makes it: right after the context,
   * with no barrier before (it once waited for the other ranks, which opened their backends
   * at their first context: doc/testing.md), against the same made again with a buffer of its
   * own each time (what a buffer costs the first time, its allocation by the backend, is in
   * every figure; what the job costs once, only in the first); each round's time is the
   * slowest rank's, compared after the last round so that no barrier comes between them. */
  {
    size_t bytes = (size_t)64 << 10;
    char pattern = 7;
    double *t = calloc((size_t)rounds + 1, sizeof *t);
    char *small = malloc(bytes);
    char *src = malloc(bytes);
    memset(src, pattern, bytes);
    for (int r = 0; r <= rounds; r++) {
      cl_mem m = clCreateBuffer(ctx, 0, bytes, NULL, &err);
      CHECK(err);
      CHECK(clEnqueueWriteBuffer(q0, m, CL_FALSE, 0, bytes, src, 0, NULL, NULL));
      double t0 = now();
      CHECK(clEnqueueReadBuffer(q0, m, CL_TRUE, 0, bytes, small, 0, NULL, NULL));
      t[r] = now() - t0;
      CHECK(clReleaseMemObject(m));
    }
    MPI_Allreduce(MPI_IN_PLACE, t, rounds + 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (small[0] != 7 || small[bytes - 1] != 7) {
      fprintf(stderr, "transfer: rank %d read wrong bytes\n", rank);
      return 1;
    }
    if (rank == 0) {
      char what[64];
      snprintf(what, sizeof what, "first read 64 KiB to %d ranks", size);
      report(what, bytes, t[0], median(t + 1, rounds), "later");
    }
    free(t);
    free(small);
    free(src);
  }

  /* A status poll of a command of rank 0's device that is not done (held by a user event),
   * as programs that steer by the answer make them: every rank hears rank 0's answer
   * (icd/event.c), against an MPI_Bcast of as many bytes; per poll, over 1000. */
  {
    enum { POLLS = 1000 };
    cl_event gate = clCreateUserEvent(ctx, &err), mk;
    CHECK(err);
    CHECK(clEnqueueMarkerWithWaitList(q0, 1, &gate, &mk));
    double *t = calloc((size_t)rounds, sizeof *t), *tb = calloc((size_t)rounds, sizeof *tb);
    for (int r = 0; r < rounds; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      for (int i = 0; i < POLLS; i++) {
        cl_int st;
        CHECK(clGetEventInfo(mk, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
        if (st <= CL_COMPLETE) {
          fprintf(stderr, "transfer: a held marker says %d\n", st);
          return 1;
        }
      }
      t[r] = slowest((now() - t0) / POLLS);
      uint64_t head[4] = {0};
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = now();
      for (int i = 0; i < POLLS; i++)
        MPI_Bcast(head, sizeof head, MPI_BYTE, 0, MPI_COMM_WORLD);
      tb[r] = slowest((now() - t0) / POLLS);
    }
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &mk));
    if (rank == 0) {
      double a = median(t, rounds), b = median(tb, rounds);
      printf("%-34s tutti %10.2f us %18s %-10s %10.2f us %18s ratio %.2f\n",
             "status poll, pending", a * 1e6, "", "MPI_Bcast", b * 1e6, "", a > 0 ? b / a : 0);
    }
    CHECK(clReleaseEvent(mk));
    CHECK(clReleaseEvent(gate));
    free(t);
    free(tb);
  }

  size_t big = (size_t)256 << 20;
  char *buf = malloc(big);
  memset(buf, 3, big);
  double *tt = malloc((size_t)rounds * sizeof *tt), *tm = malloc((size_t)rounds * sizeof *tm);
  if (rank == 0)
    printf("# transfer benchmark: %d ranks, %s (%d rounds, medians)\n", size,
           "Tutti against raw MPI", rounds);

  /* Copies between the devices of ranks 0 and 1. */
  const size_t sizes[] = {(size_t)1 << 20, big};
  for (int s = 0; s < 2; s++) {
    size_t bytes = sizes[s];
    cl_mem m = clCreateBuffer(ctx, 0, bytes, NULL, &err);
    CHECK(err);
    char pattern = 1;
    /* Tutti's rounds back to back, then MPI's: between GPUs a copy whose link idled (for an
     * MPI_Send of 256 MiB, say) takes longer (bench/transfer.c, peer_mode). */
    for (int r = -1; r < rounds; r++) {
      /* Rank 0's device holds the newest bytes, the rest of the job knows it. */
      CHECK(clEnqueueFillBuffer(q0, m, &pattern, 1, 0, bytes, 0, NULL, NULL));
      CHECK(clFinish(q0));
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      CHECK(clEnqueueMigrateMemObjects(q1, 1, &m, 0, 0, NULL, NULL));
      CHECK(clFinish(q1));
      double t = slowest(now() - t0);
      if (r >= 0)
        tt[r] = t;
    }
    for (int r = -1; r < rounds; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      int ack = 0;
      if (rank == 0) {
        send_bytes(buf, bytes, 1);
        MPI_Recv(&ack, 4, MPI_BYTE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        recv_bytes(buf, bytes, 0);
        MPI_Send(&ack, 4, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
      }
      double tr = slowest(now() - t0);
      if (r >= 0)
        tm[r] = tr;
    }
    if (rank == 0) {
      const char *what = s ? "copy 256 MiB rank 0 -> rank 1" : "copy 1 MiB rank 0 -> rank 1";
      double tutti = median(tt, rounds);
      report(what, bytes, tutti, median(tm, rounds), "MPI_Send");
      cuda_report(what, bytes, tutti, rounds);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(clReleaseMemObject(m));
  }

  /* Reads of bytes held on rank 0's device, reaching every rank. */
  const size_t rsizes[] = {big, 64};
  for (int s = 0; s < 2; s++) {
    size_t bytes = rsizes[s];
    int reps = bytes < 4096 ? 100 : 1; /* small ones: per operation, over 100 */
    cl_mem m = clCreateBuffer(ctx, 0, bytes, NULL, &err);
    CHECK(err);
    char pattern = 5;
    for (int r = -1; r < rounds; r++) {
      double t = 0;
      for (int k = 0; k < reps; k++) {
        CHECK(clEnqueueFillBuffer(q0, m, &pattern, 1, 0, bytes, 0, NULL, NULL));
        CHECK(clFinish(q0));
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        CHECK(clEnqueueReadBuffer(q0, m, CL_TRUE, 0, bytes, buf, 0, NULL, NULL));
        t += now() - t0;
      }
      t = slowest(t / reps);
      double tr = 0;
      for (int k = 0; k < reps; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        tr += now() - t0;
      }
      tr = slowest(tr / reps);
      if (r >= 0) {
        tt[r] = t;
        tm[r] = tr;
      }
    }
    if (buf[0] != 5 || buf[bytes - 1] != 5) {
      fprintf(stderr, "transfer: rank %d read wrong bytes\n", rank);
      return 1;
    }
    char what[64];
    snprintf(what, sizeof what, "read %s to %d ranks", s ? "64 B" : "256 MiB", size);
    if (rank == 0)
      report(what, bytes, median(tt, rounds), median(tm, rounds), "MPI_Bcast");
    CHECK(clReleaseMemObject(m));
  }
  free(tt);
  free(tm);
  free(buf);
  clReleaseCommandQueue(q0);
  clReleaseCommandQueue(q1);
  clReleaseContext(ctx);
  return 0;
}
