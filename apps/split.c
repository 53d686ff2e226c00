/* Split launches (cl_tutti_split, doc/split.md): six kernels, each launched once whole on the
 * first device and once split over every device of the platform, both checked against a host
 * reference, with their times. The kernels carry `#pragma tutti` annotations; nothing else in
 * the host code knows about the split but the one call.
 *
 * Usage: split [APP] [SCALE]   APP: vecadd jacobi matmul histogram kmeans nbody all (default)
 *   SCALE multiplies each app's work (default 1): weak scaling runs SCALE = number of devices.
 *   SPLIT_REPS=R runs each app R times and prints the median times; SPLIT_QUEUES=Q splits over
 *   Q queues of the first device instead of one queue per device; SPLIT_PER_DEVICE=Q over Q
 *   queues of every device (parts that each hold a slice of data past a budget); JACOBI_ITERS sets Jacobi's
 *   sweeps, MATMUL_REPS how many times the product is computed (default 1; the same B, as a
 *   solver's iterations would); JACOBI_BLOCKS=1 gives Jacobi's grids a BLOCK distribution, each
 *   device's rows written on its queue (the split launches only); SPLIT_WARMUPS=W launches each app W times (default 1), each followed by clFinish of
 *   every queue, before the timed launch (histogram: once; Jacobi: W sweeps each way, part of
 *   the solve); SPLIT_ONLY=1 runs the split launches alone (no whole launch: data past a device's
 *   budget, TUTTI_DEVICE_MEM, taken in by parts). On a platform without cl_tutti_split (a vendor's own), or with SPLIT_PLAIN=1, only
 *   the whole launches run, on the first device: the vendor's baseline of Tutti's overhead, or
 *   an unchanged program that TUTTI_AGGREGATE splits over every device. There SPLIT_PART=K/N
 *   launches part K (from 0) of N of the last dimension alone, as a split launch over N
 *   devices would run it: the vendor's own time for a part's shape (its results unchecked).
 *   SPLIT_NOPRAGMA=1 removes the kernels' annotations: Tutti derives them (TUTTI_AUTO_SPLIT).
 *   MATMUL_K sets the matrix product's inner dimension (default 80). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVS 64

#include "split_kernels.h"


static cl_context ctx;
static cl_program prog;
static cl_uint ndev;
static cl_device_id devs[MAX_DEVS];
static cl_command_queue queues[MAX_DEVS];
static int failures, have_split = 1;
/* SPLIT_PART=K/N (plain launches): part K of N alone. */
static unsigned part_k, part_n;
/* 1 with SPLIT_ONLY: the split launches alone (data larger than one launch can hold on a
 * device with a budget, doc/spill.md). */
static int first_run;
static char first_name[256];

/* Times of each app's runs (SPLIT_REPS), reported as medians. */
#define MAX_REPS 64
static struct {
  const char *app;
  int ok, n;
  double whole[MAX_REPS], split[MAX_REPS];
} results[8];
static int nresults;

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cl_int err_ = (call);                                                                         \
    if (err_ != CL_SUCCESS) {                                                                     \
      fprintf(stderr, "split: %s failed: %d (line %d)\n", #call, err_, __LINE__);               \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static cl_mem buffer(size_t bytes, const void *init)
{
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                            (void *)init, &err);
  CHECK(err);
  return m;
}

static cl_kernel kernel(const char *name)
{
  cl_int err;
  cl_kernel k = clCreateKernel(prog, name, &err);
  CHECK(err);
  return k;
}

/* Waits for every queue (the parts on other devices too). */
static void finish_all(void)
{
  for (cl_uint q = 0; q < ndev; q++)
    CHECK(clFinish(queues[q]));
}

/* One launch: whole on the first device, or split over every device. */
static void launch(cl_kernel k, int split, cl_uint dim, const size_t *gws, const size_t *lws)
{
  if (split) {
    CHECK(clEnqueueSplitNDRangeKernelTUTTI(ndev, queues, k, dim, NULL, gws, lws, 0, NULL, NULL));
  } else if (part_n > 1) {
    /* Part part_k of the last dimension in whole work-groups, as Tutti cuts parts: where the
     * program gives no local size, Tutti's is the largest power of two up to 64 dividing the
     * global size along the first dimension, 1 along the others (doc/split.md). */
    size_t off[3] = {0, 0, 0}, size[3], local[3] = {1, 1, 1};
    memcpy(size, gws, dim * sizeof *gws);
    if (lws)
      memcpy(local, lws, dim * sizeof *lws);
    else
      while (local[0] < 64 && gws[0] % (local[0] * 2) == 0)
        local[0] *= 2;
    /* The part runs with that local size, given as Tutti gives it, not the driver's choice. */
    size_t unit = local[dim - 1], groups = gws[dim - 1] / unit;
    size_t g0 = groups * part_k / part_n, g1 = groups * (part_k + 1) / part_n;
    off[dim - 1] = g0 * unit;
    size[dim - 1] = (g1 - g0) * unit;
    CHECK(clEnqueueNDRangeKernel(queues[0], k, dim, off, size, local, 0, NULL, NULL));
  } else {
    CHECK(clEnqueueNDRangeKernel(queues[0], k, dim, NULL, gws, lws, 0, NULL, NULL));
  }
}

/* Warm-up launches (builds, first transfers), each followed by clFinish of every queue:
 * SPLIT_WARMUPS of them (default 1; more let Tutti's balancing measure the parts). */
static int warmups(void)
{
  int n = getenv("SPLIT_WARMUPS") ? atoi(getenv("SPLIT_WARMUPS")) : 1;
  return n > 0 ? n : 1;
}

static void warm_up(cl_kernel k, int split, cl_uint dim, const size_t *gws, const size_t *lws)
{
  for (int i = 0; i < warmups(); i++) {
    launch(k, split, dim, gws, lws);
    finish_all();
  }
}

/* Floats within 1e-5 relative (1e-5 absolute near zero), and slack[i] more where the device
 * sums many terms in float (slack: NULL, none). */
static int close_within(const float *got, const float *want, const float *slack, size_t n,
                        const char *what)
{
  if (part_n > 1)
    return 1; /* one part alone computes only its share */
  for (size_t i = 0; i < n; i++) {
    float tol = 1e-5f * fmaxf(1.0f, fabsf(want[i])) + (slack ? slack[i] : 0.0f);
    if (!(fabsf(got[i] - want[i]) <= tol)) {
      printf("split: %s: element %zu is %.9g, expected %.9g\n", what, i, got[i], want[i]);
      return 0;
    }
  }
  return 1;
}

static int close_enough(const float *got, const float *want, size_t n, const char *what)
{
  return close_within(got, want, NULL, n, what);
}

static void report(const char *app, int ok, double whole, double split)
{
  int i = 0;
  while (i < nresults && strcmp(results[i].app, app))
    i++;
  if (i == nresults) {
    results[nresults].app = app;
    results[nresults++].ok = 1;
  }
  results[i].ok &= ok;
  if (results[i].n < MAX_REPS) {
    results[i].whole[results[i].n] = whole;
    results[i].split[results[i].n++] = split;
  }
  failures += !ok;
}

static int by_value(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void print_results(void)
{
  for (int i = 0; i < nresults; i++) {
    double w = median(results[i].whole, results[i].n), s = median(results[i].split, results[i].n);
    if (have_split && first_run)
      printf("%s %s: split over %u queues %.3f ms (medians of %d)\n",
             results[i].ok ? "ok" : "FAILED", results[i].app, ndev, s * 1e3, results[i].n);
    else if (have_split)
      printf("%s %s: whole on 1 device %.3f ms, split over %u queues %.3f ms, ratio %.2f "
             "(medians of %d)\n", results[i].ok ? "ok" : "FAILED", results[i].app, w * 1e3,
             ndev, s * 1e3, w / s, results[i].n);
    else
      printf("%s %s: %s on 1 device %.3f ms (median of %d; plain launches on %s%s)\n",
             results[i].ok ? "ok" : "FAILED", results[i].app, part_n > 1 ? "one part" : "whole",
             w * 1e3, results[i].n, first_name, part_n > 1 ? "; results unchecked" : "");
  }
}

static void vecadd(int scale)
{
  size_t n = 1000003 * (size_t)scale; /* a prime: a multiple of nothing */
  float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4), *ref = malloc(n * 4);
  for (size_t i = 0; i < n; i++) {
    a[i] = (float)(i % 1000) * 0.5f;
    b[i] = (float)(i % 777) * 2.0f;
    ref[i] = a[i] + b[i];
  }
  cl_mem A = buffer(n * 4, a), B = buffer(n * 4, b), C = buffer(n * 4, NULL);
  cl_kernel k = kernel("vecadd");
  CHECK(clSetKernelArg(k, 0, sizeof A, &A));
  CHECK(clSetKernelArg(k, 1, sizeof B, &B));
  CHECK(clSetKernelArg(k, 2, sizeof C, &C));
  double t[2] = {0, 0};
  int ok = 1;
  for (int split = first_run; split < 1 + have_split; split++) {
    warm_up(k, split, 1, &n, NULL);
    double t0 = now();
    launch(k, split, 1, &n, NULL);
    finish_all();
    t[split] = now() - t0;
    memset(c, 0, n * 4);
    CHECK(clEnqueueReadBuffer(queues[0], C, CL_TRUE, 0, n * 4, c, 0, NULL, NULL));
    ok &= close_enough(c, ref, n, split ? "vecadd split" : "vecadd whole");
  }
  report("vecadd", ok, t[0], t[1]);
  clReleaseKernel(k);
  clReleaseMemObject(A);
  clReleaseMemObject(B);
  clReleaseMemObject(C);
  free(a), free(b), free(c), free(ref);
}

/* fn(ctx, a, b) over [0, n) in slices, one per host core (at most 32), for the host's
 * references: the data of four GPUs took one core tens of seconds. Below `least` items, one
 * slice. The threads make no OpenCL call. */
struct slice {
  void (*fn)(void *ctx, long a, long b);
  void *ctx;
  long a, b;
};

static void *run_slice(void *arg)
{
  const struct slice *s = arg;
  s->fn(s->ctx, s->a, s->b);
  return NULL;
}

static void on_cores(void (*fn)(void *, long, long), void *ctx, long n, long least)
{
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int nt = cores < 1 || n < least ? 1 : cores > 32 ? 32 : (int)cores;
  pthread_t t[32];
  bool started[32];
  struct slice r[32];
  for (int k = 0; k < nt; k++) {
    r[k] = (struct slice){fn, ctx, n * k / nt, n * (k + 1) / nt};
    /* A slice whose thread could not start is done here. */
    started[k] = k > 0 && pthread_create(&t[k], NULL, run_slice, &r[k]) == 0;
    if (k > 0 && !started[k])
      run_slice(&r[k]);
  }
  run_slice(&r[0]);
  for (int k = 1; k < nt; k++)
    if (started[k])
      pthread_join(t[k], NULL);
}

/* The host's reference sweeps: rows [y0, y1) of one sweep from in to out. */
struct sweep {
  const float *in;
  float *out;
  int w, h;
};

static void sweep_rows(void *ctx, long y0, long y1)
{
  const struct sweep *r = ctx;
  for (long y = y0; y < y1; y++)
    for (int x = 0; x < r->w; x++) {
      size_t i = (size_t)y * r->w + x;
      r->out[i] = (x == 0 || y == 0 || x == r->w - 1 || y == r->h - 1)
                      ? r->in[i]
                      : 0.25f * (r->in[i - r->w] + r->in[i + r->w] + r->in[i - 1] + r->in[i + 1]);
    }
}

/* iters sweeps of ref (tmp: scratch of its size), over the host's cores. */
static void jacobi_reference(float *ref, float *tmp, int w, int h, int iters)
{
  for (int it = 0; it < iters; it++) {
    struct sweep r = {it % 2 ? tmp : ref, it % 2 ? ref : tmp, w, h};
    on_cores(sweep_rows, &r, h, ((long)1 << 20) / w);
  }
  if (iters % 2)
    memcpy(ref, tmp, (size_t)w * h * 4);
}

/* JACOBI_BLOCKS=1, split launches over queues of distinct devices: both grids carry a BLOCK
 * distribution over the queues' devices, set before anything is written, and the host writes
 * each device's rows on its queue, so that each device holds its rows and their halo only
 * (doc/split.md, "Windows") rather than the whole grid; on NVIDIA GPUs those windows fit the
 * copy engines' memory where a whole grid of 512 MiB or more does not (doc/cluster.md). The
 * grids to use, written with g: 0 when it does not apply. */
static int jacobi_blocks(cl_mem *a, cl_mem *b, const float *g, int w, int h)
{
  const char *on = getenv("JACOBI_BLOCKS");
  if (!on || atoi(on) <= 0 || ndev > MAX_DEVS)
    return 0;
  cl_device_id qd[MAX_DEVS];
  for (cl_uint i = 0; i < ndev; i++) {
    CHECK(clGetCommandQueueInfo(queues[i], CL_QUEUE_DEVICE, sizeof qd[i], &qd[i], NULL));
    for (cl_uint j = 0; j < i; j++)
      if (qd[j] == qd[i])
        return 0;
  }
  size_t n = (size_t)w * h;
  *a = buffer(n * 4, NULL);
  *b = buffer(n * 4, NULL);
  cl_tutti_distribution d = {CL_TUTTI_DIST_BLOCK, 2, sizeof(float), {(size_t)h, (size_t)w, 0},
                             {0, 0, 0}, ndev, qd};
  CHECK(clSetBufferDistributionTUTTI(*a, &d));
  CHECK(clSetBufferDistributionTUTTI(*b, &d));
  for (cl_uint i = 0; i < ndev; i++) {
    size_t r0 = (size_t)h * i / ndev, r1 = (size_t)h * (i + 1) / ndev;
    CHECK(clEnqueueWriteBuffer(queues[i], *a, CL_FALSE, r0 * w * 4, (r1 - r0) * w * 4, g + r0 * w,
                               0, NULL, NULL));
  }
  finish_all();
  return 1;
}

static void jacobi(int scale)
{
  int w = 256, h = 128 * scale, iters = getenv("JACOBI_ITERS") ? atoi(getenv("JACOBI_ITERS")) : 10;
  /* Untimed sweeps first, as many each way (a to b, b to a) as SPLIT_WARMUPS says. */
  int warm = 2 * warmups();
  size_t n = (size_t)w * h;
  float *g = malloc(n * 4), *ref = malloc(n * 4), *tmp = malloc(n * 4), *out = malloc(n * 4);
  for (size_t i = 0; i < n; i++)
    g[i] = (float)((i * 7919) % 1000) * 0.01f;
  memcpy(ref, g, n * 4);
  jacobi_reference(ref, tmp, w, h, warm + iters);
  cl_kernel k = kernel("jacobi");
  size_t gws[2] = {(size_t)w, (size_t)h}, lws[2] = {64, 1};
  double t[2] = {0, 0};
  int ok = 1;
  for (int split = first_run; split < 1 + have_split; split++) {
    cl_mem a, b;
    if (!split || !jacobi_blocks(&a, &b, g, w, h)) {
      a = buffer(n * 4, g);
      b = buffer(n * 4, NULL);
    }
    CHECK(clSetKernelArg(k, 2, sizeof w, &w));
    CHECK(clSetKernelArg(k, 3, sizeof h, &h));
    /* Warm-up sweeps, each followed by clFinish of every queue: builds, first transfers,
     * and what a grid pays the first time a device reads its halo (a window widened, staging
     * or a peer's memory mapped: doc/split.md), in both directions. They are the solve's
     * first sweeps: the timed ones go on from there, and the reference counts them. */
    for (int it = 0; it < warm; it++) {
      CHECK(clSetKernelArg(k, 0, sizeof a, it % 2 ? &b : &a));
      CHECK(clSetKernelArg(k, 1, sizeof a, it % 2 ? &a : &b));
      launch(k, split, 2, gws, lws);
      finish_all();
    }
    double t0 = now();
    for (int it = 0; it < iters; it++) {
      CHECK(clSetKernelArg(k, 0, sizeof a, it % 2 ? &b : &a));
      CHECK(clSetKernelArg(k, 1, sizeof a, it % 2 ? &a : &b));
      launch(k, split, 2, gws, lws);
    }
    /* The sweeps, not the gathering of the grid afterwards. */
    finish_all();
    t[split] = now() - t0;
    CHECK(clEnqueueReadBuffer(queues[0], iters % 2 ? b : a, CL_TRUE, 0, n * 4, out, 0, NULL, NULL));
    ok &= close_enough(out, ref, n, split ? "jacobi split" : "jacobi whole");
    clReleaseMemObject(a);
    clReleaseMemObject(b);
  }
  report("jacobi", ok, t[0], t[1]);
  clReleaseKernel(k);
  free(g), free(ref), free(tmp), free(out);
}

static void matmul(int scale)
{
  /* MATMUL_K: the inner dimension (default 80); larger makes the product compute-bound. */
  const char *inner = getenv("MATMUL_K");
  int n = 96 * scale, kk = inner && atoi(inner) > 0 ? atoi(inner) : 80, m = 64;
  float *A = malloc((size_t)n * kk * 4), *B = malloc((size_t)kk * m * 4);
  float *C = malloc((size_t)n * m * 4), *ref = malloc((size_t)n * m * 4);
  for (int i = 0; i < n * kk; i++)
    A[i] = (float)(i % 13) - 6.0f;
  for (int i = 0; i < kk * m; i++)
    B[i] = (float)(i % 7) * 0.5f;
  /* The host checks every row up to 65536 rows, then an evenly spread sample of them. */
  int step = n > 65536 ? n / 65536 : 1;
  for (int i = 0; i < n; i += step)
    for (int j = 0; j < m; j++) {
      float s = 0.0f;
      for (int t = 0; t < kk; t++)
        s += A[(size_t)i * kk + t] * B[t * m + j];
      ref[(size_t)i * m + j] = s;
    }
  cl_mem dA = buffer((size_t)n * kk * 4, A), dB = buffer((size_t)kk * m * 4, B);
  cl_mem dC = buffer((size_t)n * m * 4, NULL);
  cl_kernel k = kernel("matmul");
  CHECK(clSetKernelArg(k, 0, sizeof dA, &dA));
  CHECK(clSetKernelArg(k, 1, sizeof dB, &dB));
  CHECK(clSetKernelArg(k, 2, sizeof dC, &dC));
  CHECK(clSetKernelArg(k, 3, sizeof n, &n));
  CHECK(clSetKernelArg(k, 4, sizeof kk, &kk));
  CHECK(clSetKernelArg(k, 5, sizeof m, &m));
  size_t gws[2] = {(size_t)m, (size_t)n};
  double t[2] = {0, 0};
  int ok = 1;
  int reps = getenv("MATMUL_REPS") ? atoi(getenv("MATMUL_REPS")) : 1;
  for (int split = first_run; split < 1 + have_split; split++) {
    warm_up(k, split, 2, gws, NULL);
    double t0 = now();
    for (int r = 0; r < (reps > 0 ? reps : 1); r++)
      launch(k, split, 2, gws, NULL);
    /* The product, not the gathering of C afterwards (as the other apps). */
    finish_all();
    t[split] = now() - t0;
    memset(C, 0, (size_t)n * m * 4);
    CHECK(clEnqueueReadBuffer(queues[0], dC, CL_TRUE, 0, (size_t)n * m * 4, C, 0, NULL, NULL));
    for (int i = 0; i < n; i += step)
      ok &= close_enough(C + (size_t)i * m, ref + (size_t)i * m, (size_t)m,
                         split ? "matmul split" : "matmul whole");
  }
  report("matmul", ok, t[0], t[1]);
  clReleaseKernel(k);
  clReleaseMemObject(dA), clReleaseMemObject(dB), clReleaseMemObject(dC);
  free(A), free(B), free(C), free(ref);
}

static void histogram(int scale)
{
  size_t n = 262144 * (size_t)scale;
  int nbins = 61;
  cl_uint *x = malloc(n * 4);
  int ref[61] = {0}, hist[61];
  for (size_t i = 0; i < n; i++) {
    x[i] = (cl_uint)((i * 2654435761u) >> 7);
    ref[x[i] % nbins] += 2; /* launched twice: the second adds to the first */
  }
  cl_mem X = buffer(n * 4, x);
  cl_kernel k = kernel("histogram");
  CHECK(clSetKernelArg(k, 0, sizeof X, &X));
  CHECK(clSetKernelArg(k, 2, sizeof nbins, &nbins));
  double t[2] = {0, 0};
  int ok = 1;
  for (int split = first_run; split < 1 + have_split; split++) {
    cl_mem H = buffer(sizeof hist, (int[61]){0});
    CHECK(clSetKernelArg(k, 1, sizeof H, &H));
    launch(k, split, 1, &n, NULL);
    finish_all();
    double t0 = now();
    launch(k, split, 1, &n, NULL);
    CHECK(clEnqueueReadBuffer(queues[0], H, CL_TRUE, 0, sizeof hist, hist, 0, NULL, NULL));
    t[split] = now() - t0;
    if (part_n <= 1 && memcmp(hist, ref, sizeof ref)) {
      printf("split: histogram %s differs from the host's\n", split ? "split" : "whole");
      ok = 0;
    }
    clReleaseMemObject(H);
  }
  report("histogram", ok, t[0], t[1]);
  clReleaseKernel(k);
  clReleaseMemObject(X);
  free(x);
}

static void kmeans(int scale)
{
  int n = 32768 * scale, d = 4, kc = 8, iters = 5;
  int *pts = malloc((size_t)n * d * 4), cent[32], ref[32], counts[8];
  cl_long sums[32];
  for (int i = 0; i < n * d; i++)
    pts[i] = (int)(((unsigned)i * 2654435761u) >> 20) % 1000;
  for (int i = 0; i < kc * d; i++)
    cent[i] = pts[i];
  /* Host reference: Lloyd's iterations in integers, the sums in 64 bits as the kernel's. */
  memcpy(ref, cent, sizeof ref);
  for (int it = 0; it < iters; it++) {
    long s[32] = {0};
    int c[8] = {0};
    for (int i = 0; i < n; i++) {
      int best = 0;
      long bestd = -1;
      for (int q = 0; q < kc; q++) {
        long dist = 0;
        for (int t = 0; t < d; t++) {
          long e = pts[i * d + t] - ref[q * d + t];
          dist += e * e;
        }
        if (bestd < 0 || dist < bestd)
          bestd = dist, best = q;
      }
      for (int t = 0; t < d; t++)
        s[best * d + t] += pts[i * d + t];
      c[best]++;
    }
    for (int q = 0; q < kc; q++)
      for (int t = 0; t < d; t++)
        if (c[q])
          ref[q * d + t] = (int)(s[q * d + t] / c[q]);
  }
  cl_mem P = buffer((size_t)n * d * 4, pts);
  cl_kernel k = kernel("kmeans");
  CHECK(clSetKernelArg(k, 0, sizeof P, &P));
  CHECK(clSetKernelArg(k, 4, sizeof n, &n));
  CHECK(clSetKernelArg(k, 5, sizeof d, &d));
  CHECK(clSetKernelArg(k, 6, sizeof kc, &kc));
  double t[2] = {0, 0};
  int ok = 1;
  size_t gws = (size_t)n;
  for (int split = first_run; split < 1 + have_split; split++) {
    int c[32];
    memcpy(c, cent, sizeof c);
    cl_mem Cn = buffer(sizeof c, NULL), S = buffer(sizeof sums, NULL), N = buffer(sizeof counts, NULL);
    CHECK(clSetKernelArg(k, 1, sizeof Cn, &Cn));
    CHECK(clSetKernelArg(k, 2, sizeof S, &S));
    CHECK(clSetKernelArg(k, 3, sizeof N, &N));
    warm_up(k, split, 1, &gws, NULL); /* its sums are overwritten below */
    double t0 = now();
    for (int it = 0; it < iters; it++) {
      static const cl_long zero[32];
      CHECK(clEnqueueWriteBuffer(queues[0], Cn, CL_FALSE, 0, sizeof c, c, 0, NULL, NULL));
      CHECK(clEnqueueWriteBuffer(queues[0], S, CL_FALSE, 0, sizeof sums, zero, 0, NULL, NULL));
      CHECK(clEnqueueWriteBuffer(queues[0], N, CL_FALSE, 0, sizeof counts, zero, 0, NULL, NULL));
      launch(k, split, 1, &gws, NULL);
      CHECK(clEnqueueReadBuffer(queues[0], S, CL_FALSE, 0, sizeof sums, sums, 0, NULL, NULL));
      CHECK(clEnqueueReadBuffer(queues[0], N, CL_TRUE, 0, sizeof counts, counts, 0, NULL, NULL));
      for (int q = 0; q < kc; q++)
        for (int x = 0; x < d; x++)
          if (counts[q])
            c[q * d + x] = (int)(sums[q * d + x] / counts[q]);
    }
    t[split] = now() - t0;
    if (part_n <= 1 && memcmp(c, ref, sizeof ref)) {
      printf("split: kmeans %s centroids differ from the host's\n", split ? "split" : "whole");
      ok = 0;
    }
    clReleaseMemObject(Cn), clReleaseMemObject(S), clReleaseMemObject(N);
  }
  report("kmeans", ok, t[0], t[1]);
  clReleaseKernel(k);
  clReleaseMemObject(P);
  free(pts);
}

/* The host's reference step of the sampled bodies [a, b) (body i = sample * step), summed in
 * double. A device sums the n accelerations in float, one after another: each addition may
 * round by a float epsilon of the partial sum, and each term by a few of its own (slack: the
 * epsilon times the partial sums' magnitudes and four times the terms'). On this lattice of
 * bodies the partial sums drift alike, so the roundings add up (a bound of some sqrt(n)
 * roundings of the terms failed at 2M bodies); a part's bodies missing from the sum still
 * move it far past this slack (doc/testing.md, "Figures behind the code"). */
struct bodies {
  const cl_float4 *pos, *vel;
  cl_float4 *rp, *rv, *sp, *sv; /* sp, sv: the slack of each position and velocity */
  int n, step;
  float dt;
};

static void bodies_reference(void *ctx, long a, long b)
{
  const struct bodies *r = ctx;
  const cl_float4 *pos = r->pos, *vel = r->vel;
  float dt = r->dt;
  for (long s = a; s < b; s++) {
    long i = s * r->step;
    double a[3] = {0, 0, 0}, mag[3] = {0, 0, 0}, partial[3] = {0, 0, 0};
    for (int j = 0; j < r->n; j++) {
      float dx = pos[j].s[0] - pos[i].s[0], dy = pos[j].s[1] - pos[i].s[1], dz = pos[j].s[2] - pos[i].s[2];
      float r2 = dx * dx + dy * dy + dz * dz + 0.01f;
      float inv = pos[j].s[3] / (r2 * sqrtf(r2));
      double t[3] = {(double)dx * inv, (double)dy * inv, (double)dz * inv};
      for (int c = 0; c < 3; c++)
        a[c] += t[c], mag[c] += fabs(t[c]), partial[c] += fabs(a[c]);
    }
    for (int c = 0; c < 3; c++) {
      r->rv[i].s[c] = (float)(vel[i].s[c] + a[c] * dt);
      r->rp[i].s[c] = (float)(pos[i].s[c] + (double)r->rv[i].s[c] * dt);
      r->sv[i].s[c] = (float)(FLT_EPSILON * (partial[c] + 4 * mag[c]) * dt);
      r->sp[i].s[c] = r->sv[i].s[c] * dt;
    }
    r->rv[i].s[3] = 0, r->sv[i].s[3] = 0;
    r->rp[i].s[3] = pos[i].s[3], r->sp[i].s[3] = 0;
  }
}

static void nbody(int scale)
{
  /* Work grows with n squared. */
  int n = ((int)(2048 * sqrt((double)scale)) + 63) / 64 * 64;
  float dt = 0.01f;
  cl_float4 *pos = malloc(n * sizeof *pos), *vel = malloc(n * sizeof *vel);
  cl_float4 *rp = malloc(n * sizeof *rp), *rv = malloc(n * sizeof *rv), *out = malloc(n * sizeof *out);
  cl_float4 *sp = malloc(n * sizeof *sp), *sv = malloc(n * sizeof *sv);
  for (int i = 0; i < n; i++) {
    pos[i] = (cl_float4){{(float)(i % 17), (float)(i % 23) * 0.5f, (float)(i % 31) * 0.25f, 1.0f + (i % 3)}};
    vel[i] = (cl_float4){{0, 0, 0, 0}};
  }
  /* The host checks every body up to 8192 bodies, then an evenly spread sample of 2048 (the
   * host's reference of 2048 bodies among a million takes seconds). */
  int step = n > 8192 ? n / 2048 : 1;
  struct bodies b = {pos, vel, rp, rv, sp, sv, n, step, dt};
  on_cores(bodies_reference, &b, (n + step - 1) / step, 64);
  cl_mem P = buffer(n * sizeof *pos, pos), V = buffer(n * sizeof *vel, vel);
  cl_mem NP = buffer(n * sizeof *pos, NULL), NV = buffer(n * sizeof *vel, NULL);
  cl_kernel k = kernel("nbody");
  CHECK(clSetKernelArg(k, 0, sizeof P, &P));
  CHECK(clSetKernelArg(k, 1, sizeof V, &V));
  CHECK(clSetKernelArg(k, 2, sizeof NP, &NP));
  CHECK(clSetKernelArg(k, 3, sizeof NV, &NV));
  CHECK(clSetKernelArg(k, 4, sizeof n, &n));
  CHECK(clSetKernelArg(k, 5, sizeof dt, &dt));
  size_t gws = (size_t)n;
  double t[2] = {0, 0};
  int ok = 1;
  for (int split = first_run; split < 1 + have_split; split++) {
    warm_up(k, split, 1, &gws, NULL);
    double t0 = now();
    launch(k, split, 1, &gws, NULL);
    finish_all();
    t[split] = now() - t0;
    CHECK(clEnqueueReadBuffer(queues[0], NP, CL_TRUE, 0, n * sizeof *out, out, 0, NULL, NULL));
    for (int i = 0; i < n; i += step)
      ok &= close_within(out[i].s, rp[i].s, sp[i].s, 4, split ? "nbody split positions" : "nbody whole positions");
    CHECK(clEnqueueReadBuffer(queues[0], NV, CL_TRUE, 0, n * sizeof *out, out, 0, NULL, NULL));
    for (int i = 0; i < n; i += step)
      ok &= close_within(out[i].s, rv[i].s, sv[i].s, 4, split ? "nbody split velocities" : "nbody whole velocities");
  }
  report("nbody", ok, t[0], t[1]);
  clReleaseKernel(k);
  clReleaseMemObject(P), clReleaseMemObject(V), clReleaseMemObject(NP), clReleaseMemObject(NV);
  free(pos), free(vel), free(rp), free(rv), free(sp), free(sv), free(out);
}

int main(int argc, char **argv)
{
  const char *app = argc > 1 ? argv[1] : "all";
  int scale = argc > 2 ? atoi(argv[2]) : 1;
  if (scale < 1)
    scale = 1;
  cl_platform_id plats[8];
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(8, plats, &np));
  cl_platform_id plat = NULL;
  for (cl_uint i = 0; i < np && !plat; i++) {
    char ext[1024] = "";
    clGetPlatformInfo(plats[i], CL_PLATFORM_EXTENSIONS, sizeof ext, ext, NULL);
    if (strstr(ext, "cl_tutti_split"))
      plat = plats[i];
  }
  if (!plat || getenv("SPLIT_PLAIN")) {
    /* Whole launches only, on the first device. */
    have_split = 0;
    plat = plat ? plat : plats[0];
  }
  const char *part = getenv("SPLIT_PART");
  if (part && *part) {
    char tail = 0;
    if (have_split || sscanf(part, "%u/%u%c", &part_k, &part_n, &tail) != 2 || part_n < 1 ||
        part_k >= part_n) {
      fprintf(stderr, "split: SPLIT_PART=%s: K/N with K < N, on plain launches only "
              "(SPLIT_PLAIN=1 or a platform without cl_tutti_split)\n", part);
      return 2;
    }
  }
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, MAX_DEVS, devs, &ndev));
  if (!have_split)
    ndev = 1;
  first_run = have_split && getenv("SPLIT_ONLY") && atoi(getenv("SPLIT_ONLY"));
  clGetDeviceInfo(devs[0], CL_DEVICE_NAME, sizeof first_name, first_name, NULL);
  cl_int err;
  ctx = clCreateContext(NULL, ndev, devs, NULL, NULL, &err);
  CHECK(err);
  cl_uint nq = ndev, per = 1;
  if (getenv("SPLIT_QUEUES") && atoi(getenv("SPLIT_QUEUES")) > 0) {
    nq = (cl_uint)atoi(getenv("SPLIT_QUEUES"));
    nq = nq > MAX_DEVS ? MAX_DEVS : nq;
  } else if (getenv("SPLIT_PER_DEVICE") && atoi(getenv("SPLIT_PER_DEVICE")) > 0) {
    per = (cl_uint)atoi(getenv("SPLIT_PER_DEVICE"));
    nq = ndev * per > MAX_DEVS ? MAX_DEVS / per * per : ndev * per;
  }
  /* SPLIT_QUEUES: all on the first device; else `per` in a row on each device. */
  for (cl_uint i = 0; i < nq; i++) {
    queues[i] = clCreateCommandQueue(ctx, devs[nq == ndev * per ? i / per : 0], 0, &err);
    CHECK(err);
  }
  ndev = nq;
  /* SPLIT_NOPRAGMA=1: the kernels without their annotations (each `#pragma tutti` line and
   * its continuations blanked), for Tutti to derive them (doc/split.md). */
  char *source = strdup(split_source);
  if (getenv("SPLIT_NOPRAGMA") && atoi(getenv("SPLIT_NOPRAGMA")))
    for (char *line = strstr(source, "#pragma tutti"); line; line = strstr(line, "#pragma tutti")) {
      char *end = line, prev = 0;
      while (*end && (*end != '\n' || prev == '\\')) {
        prev = *end;
        *end++ = ' ';
      }
      line = end;
    }
  prog = clCreateProgramWithSource(ctx, 1, (const char **)&source, NULL, &err);
  free(source);
  CHECK(err);
  if (clBuildProgram(prog, 0, NULL, NULL, NULL, NULL) != CL_SUCCESS) {
    char log[4096] = "";
    clGetProgramBuildInfo(prog, devs[0], CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fprintf(stderr, "split: build failed:\n%s\n", log);
    return 1;
  }
  static const struct {
    const char *name;
    void (*run)(int);
  } apps[] = {{"vecadd", vecadd}, {"jacobi", jacobi},   {"matmul", matmul},
              {"histogram", histogram}, {"kmeans", kmeans}, {"nbody", nbody}};
  int ran = 0, reps = getenv("SPLIT_REPS") ? atoi(getenv("SPLIT_REPS")) : 1;
  reps = reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps;
  for (size_t i = 0; i < sizeof apps / sizeof apps[0]; i++)
    if (!strcmp(app, "all") || !strcmp(app, apps[i].name)) {
      for (int r = 0; r < reps; r++)
        apps[i].run(scale);
      ran++;
    }
  print_results();
  if (!ran) {
    fprintf(stderr, "split: unknown app '%s' (vecadd jacobi matmul histogram kmeans nbody all)\n", app);
    return 2;
  }
  for (cl_uint i = 0; i < nq; i++)
    clReleaseCommandQueue(queues[i]);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
