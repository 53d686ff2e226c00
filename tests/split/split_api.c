/* cl_tutti_split through the loader, under tutti-run: every error code of the annotation,
 * distribution and split-launch calls, the fallbacks to one whole launch (overlapping writes,
 * programs from binaries, no annotation), reductions of every operator and type against the
 * host, the launch's one event, and (SPLIT_DIVERGE=R) a rank that alone sets an annotation.
 * TAP output on rank 0. */
#include "tests/app.h"
#include "tests/launcher.h"

#include <CL/tutti.h>
#include <math.h>
#include <string.h>

static int count, failures, rank0 = 1;

static void ok(int cond, const char *what)
{
  count++;
  if (!cond)
    failures++;
  if (rank0)
    printf("%s %d - %s\n", cond ? "ok" : "not ok", count, what);
}

static void is(cl_int got, cl_int want, const char *what)
{
  char m[256];
  snprintf(m, sizeof m, "%s: %d (want %d)", what, got, want);
  ok(got == want, m);
}

static const char *src =
    "#pragma tutti global i => read a[i], write b[i]\n"
    "__kernel void copy(__global const int *a, __global int *b) { size_t i = get_global_id(0); b[i] = a[i] * 2; }\n"
    "__kernel void scatter(__global const int *a, __global int *b) { size_t i = get_global_id(0); b[(i * 7) % get_global_size(0)] = a[i]; }\n"
    "__kernel void plain(__global int *b) { size_t i = get_global_id(0); b[i] += 1; }\n"
    "#pragma tutti global i => readwrite a[i]\n"
    "__kernel void twice(__global int *a) { size_t i = get_global_id(0); a[i] = a[i] * 2 + 1; }\n"
    "#pragma tutti global i => read a[i-1:i+2], write b[i]\n"
    "__kernel void stencil_c(__global const int *a /* a comment: whole windows */, __global int *b)\n"
    "{ size_t i = get_global_id(0), n = get_global_size(0); b[i] = a[i] + (i ? a[i - 1] : 0) * 2 - (i + 1 < n ? a[i + 1] : 0); }\n"
    "#pragma tutti global i => read a[i-1:i+2], write b[i]\n"
    "__kernel void stencil(__global const int *a, __global int *b)\n"
    "{ size_t i = get_global_id(0), n = get_global_size(0); b[i] = a[i] + (i ? a[i - 1] : 0) * 2 - (i + 1 < n ? a[i + 1] : 0); }\n"
    "__kernel void red_int(__global const int *x, __global int *s, __global int *mn, __global int *mx, __global int *an, __global int *o, __global int *xo)\n"
    "{ size_t i = get_global_id(0); atomic_add(s, x[i]); atomic_min(mn, x[i]); atomic_max(mx, x[i]); atomic_and(an, x[i]); atomic_or(o, x[i]); atomic_xor(xo, x[i]); }\n"
    "__kernel void red_uint(__global const uint *x, __global uint *s, __global uint *mn, __global uint *mx)\n"
    "{ size_t i = get_global_id(0); atomic_add(s, x[i]); atomic_min(mn, x[i]); atomic_max(mx, x[i]); }\n"
    "/* One work-item per group writes its group's partial result: per-part copies, no atomics. */\n"
    "__kernel void red_float(__global const float *x, __global float *s, __global float *mn, __global float *mx, __global long *ls, __global ulong *ux)\n"
    "{ size_t g = get_group_id(0); if (get_local_id(0)) return; size_t n = get_local_size(0);\n"
    "  float a = 0, lo = INFINITY, hi = -INFINITY; long l = 0; ulong u = 0;\n"
    "  for (size_t j = 0; j < n; j++) { float v = x[g * n + j]; a += v; lo = fmin(lo, v); hi = fmax(hi, v); l += (long)v; u ^= (ulong)(g * n + j) << 20; }\n"
    "  s[g] = a; mn[g] = lo; mx[g] = hi; ls[g] = l; ux[g] = u; }\n"
    "#pragma tutti global i => read a[i+s], write b[i]\n"
    "__kernel void shifted(__global const int *a, __global int *b, int s) { size_t i = get_global_id(0); b[i] = a[i + s] + 1; }\n"
    "/* Work-items below `heavy` do 100 times the work of the others. */\n"
    "#pragma tutti global i => readwrite a[i]\n"
    "__kernel void skewed(__global uint *a, uint heavy)\n"
    "{ size_t i = get_global_id(0); uint v = a[i], n = i < heavy ? 4000 : 40;\n"
    "  for (uint j = 0; j < n; j++) v = v * 1103515245u + 12345u; a[i] = v; }\n";

/* Windows: buffers with a BLOCK distribution, written and read chunk by chunk on their
 * owners' queues, through sweeps of a stencil whose parts need their neighbours' edges.
 * TUTTI_STATS then shows each device holding windows of its chunks, not the buffers (checked
 * by tests/split/split.test with SPLIT_WINDOWS set, which runs this alone). */
static void windows(struct app *a, cl_program p, int whole)
{
  cl_uint first = getenv("TUTTI_AGGREGATE") ? 1 : 0, nq = a->ndev - first;
  cl_command_queue *qs = a->qs + first;
  enum { W = 1 << 18, SWEEPS = 6 };
  static int host[W], want[W], got[W], next[W];
  for (int i = 0; i < W; i++)
    host[i] = want[i] = (i * 13) % 97 - 40;
  for (int s = 0; s < SWEEPS; s++) {
    for (int i = 0; i < W; i++)
      next[i] = want[i] + (i ? want[i - 1] : 0) * 2 - (i + 1 < W ? want[i + 1] : 0);
    memcpy(want, next, sizeof want);
  }
  cl_int err;
  cl_mem X[2];
  cl_tutti_distribution d = {CL_TUTTI_DIST_BLOCK, 1, sizeof(int), {W, 0, 0}, {0, 0, 0}, nq,
                             a->devs + first};
  for (int b = 0; b < 2; b++) {
    X[b] = clCreateBuffer(a->ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK(err);
    CHECK(clSetBufferDistributionTUTTI(X[b], &d));
  }
  size_t chunk = (W + nq - 1) / nq;
  for (cl_uint q = 0; q < nq; q++) {
    size_t lo = q * chunk, hi = lo + chunk < W ? lo + chunk : W;
    CHECK(clEnqueueWriteBuffer(qs[q], X[0], CL_FALSE, lo * 4, (hi - lo) * 4, host + lo, 0, NULL, NULL));
  }
  cl_kernel k = clCreateKernel(p, "stencil", &err);
  CHECK(err);
  size_t n = W;
  for (int s = 0; s < SWEEPS; s++) {
    CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &X[s % 2]));
    CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &X[(s + 1) % 2]));
    CHECK(clEnqueueSplitNDRangeKernelTUTTI(nq, qs, k, 1, NULL, &n, NULL, 0, NULL, NULL));
  }
  cl_mem R = X[SWEEPS % 2];
  for (cl_uint q = 0; q < nq; q++) {
    size_t lo = q * chunk, hi = lo + chunk < W ? lo + chunk : W;
    CHECK(clEnqueueReadBuffer(qs[q], R, CL_TRUE, lo * 4, (hi - lo) * 4, got + lo, 0, NULL, NULL));
  }
  ok(!memcmp(got, want, sizeof got), "windows: stencil sweeps over BLOCK-distributed buffers, "
                                     "chunks written and read on their owners");
  if (whole) {
    /* Whole reads and writes on one device gather and scatter every chunk. */
    memset(got, 0, sizeof got);
    CHECK(clEnqueueReadBuffer(qs[0], R, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    ok(!memcmp(got, want, sizeof got), "windows: a whole read on the first device");
    CHECK(clEnqueueWriteBuffer(qs[nq - 1], X[0], CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
    CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &X[0]));
    CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &X[1]));
    CHECK(clEnqueueSplitNDRangeKernelTUTTI(nq, qs, k, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(qs[nq - 1], X[1], CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    int good = 1;
    for (int i = 0; i < W; i++)
      good &= got[i] == host[i] + (i ? host[i - 1] : 0) * 2 - (i + 1 < W ? host[i + 1] : 0);
    ok(good, "windows: a whole write on the last device, one sweep, a whole read there");
    /* A kernel whose parameters cannot be rewritten runs its parts on whole windows. */
    cl_kernel kc = clCreateKernel(p, "stencil_c", &err);
    CHECK(err);
    CHECK(clSetKernelArg(kc, 0, sizeof(cl_mem), &X[0]));
    CHECK(clSetKernelArg(kc, 1, sizeof(cl_mem), &X[1]));
    CHECK(clEnqueueFillBuffer(qs[0], X[1], (int[]){0}, sizeof(int), 0, sizeof host, 0, NULL, NULL));
    CHECK(clEnqueueSplitNDRangeKernelTUTTI(nq, qs, kc, 1, NULL, &n, NULL, 0, NULL, NULL));
    int got2[64];
    CHECK(clEnqueueReadBuffer(qs[0], X[1], CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    good = 1;
    for (int i = 0; i < W; i++)
      good &= got[i] == host[i] + (i ? host[i - 1] : 0) * 2 - (i + 1 < W ? host[i + 1] : 0);
    ok(good, "windows: parts of a kernel with a comment in its parameters (whole windows)");
    clReleaseKernel(kc);
    /* A sub-buffer of a distributed buffer reads its own bytes. */
    cl_buffer_region rg = {(size_t)W / 2 * 4 + 65536, sizeof got2};
    cl_mem sub = clCreateSubBuffer(X[1], CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &rg, &err);
    CHECK(err);
    CHECK(clEnqueueReadBuffer(qs[nq - 1], sub, CL_TRUE, 0, sizeof got2, got2, 0, NULL, NULL));
    ok(!memcmp(got2, got + rg.origin / 4, sizeof got2), "windows: a sub-buffer reads its own bytes");
    clReleaseMemObject(sub);
  }
  clReleaseKernel(k);
  clReleaseMemObject(X[0]);
  clReleaseMemObject(X[1]);
}

/* A kernel launched again plans again only when something it was planned from changed:
 * launches alike, then another buffer, another scalar that moves its reads, another size.
 * A plan kept too long would write the old buffer or read the old chunks. */
static void replan(struct app *a, cl_program p)
{
  cl_uint first = getenv("TUTTI_AGGREGATE") ? 1 : 0, nq = a->ndev - first;
  cl_command_queue *qs = a->qs + first;
  enum { W = 1 << 14 };
  static int host[W], got[W], zero[W];
  for (int i = 0; i < W; i++)
    host[i] = (i * 29) % 1013 - 500;
  cl_int err;
  cl_tutti_distribution d = {CL_TUTTI_DIST_BLOCK, 1, sizeof(int), {W, 0, 0}, {0, 0, 0}, nq,
                             a->devs + first};
  cl_mem A, B[2];
  A = clCreateBuffer(a->ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
  CHECK(err);
  CHECK(clSetBufferDistributionTUTTI(A, &d));
  /* Each chunk written on its owner: no rank holds the others' bytes. */
  size_t chunk = (W + nq - 1) / nq;
  for (cl_uint q = 0; q < nq; q++) {
    size_t lo = q * chunk, hi = lo + chunk < W ? lo + chunk : W;
    CHECK(clEnqueueWriteBuffer(qs[q], A, CL_FALSE, lo * 4, (hi - lo) * 4, host + lo, 0, NULL, NULL));
  }
  for (int b = 0; b < 2; b++) {
    B[b] = clCreateBuffer(a->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &err);
    CHECK(err);
    CHECK(clSetBufferDistributionTUTTI(B[b], &d));
  }
  cl_kernel k = clCreateKernel(p, "shifted", &err);
  CHECK(err);
  struct {
    int b, shift;
    size_t n;
    const char *what;
  } steps[] = {{0, 0, W / 2, "first launch"},
               {0, 0, W / 2, "the same launch again"},
               {0, W / 2, W / 2, "another shift: reads move to the upper half"},
               {1, W / 2, W / 2, "another buffer written"},
               {1, W / 4, W / 2, "another shift again"},
               {1, 0, W, "another global size"}};
  for (size_t t = 0; t < sizeof steps / sizeof steps[0]; t++) {
    int shift = steps[t].shift;
    CHECK(clSetKernelArg(k, 0, sizeof A, &A));
    CHECK(clSetKernelArg(k, 1, sizeof B[0], &B[steps[t].b]));
    CHECK(clSetKernelArg(k, 2, sizeof shift, &shift));
    CHECK(clEnqueueSplitNDRangeKernelTUTTI(nq, qs, k, 1, NULL, &steps[t].n, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(qs[nq - 1], B[steps[t].b], CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    int good = 1;
    for (size_t i = 0; i < steps[t].n; i++)
      good &= got[i] == host[i + shift] + 1;
    /* The other buffer keeps what its last launch wrote. */
    if (t == 3) {
      CHECK(clEnqueueReadBuffer(qs[0], B[0], CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
      for (size_t i = 0; i < W / 2; i++)
        good &= got[i] == host[i + W / 2] + 1;
    }
    char what[128];
    snprintf(what, sizeof what, "replanning: %s", steps[t].what);
    ok(good, what);
  }
  clReleaseKernel(k);
  clReleaseMemObject(A);
  clReleaseMemObject(B[0]);
  clReleaseMemObject(B[1]);
}

/* A buffer larger than any one device's CL_DEVICE_MAX_MEM_ALLOC_SIZE, through the aggregate
 * device (which reports its members' sum): distributed, written and read chunk by chunk on
 * the members' queues, an annotated kernel on the aggregate queue in between. */
static void big(struct app *a, cl_program p)
{
  cl_ulong member = 0, sum = 0;
  CHECK(clGetDeviceInfo(a->devs[1], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof member, &member, NULL));
  CHECK(clGetDeviceInfo(a->devs[0], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof sum, &sum, NULL));
  cl_uint nq = a->ndev - 1;
  ok(sum >= member * nq, "big: the aggregate device allocates its members' sum");
  size_t bytes = (size_t)member / 4 * 5 & ~(size_t)4095, n = bytes / 4;
  int *h = malloc(bytes);
  if (!h)
    exit(1);
  for (size_t i = 0; i < n; i++)
    h[i] = (int)(i % 100003);
  cl_int err;
  cl_mem m = clCreateBuffer(a->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  is(err, CL_SUCCESS, "big: a buffer of 1.25 times a member's largest allocation");
  cl_mem no = clCreateBuffer(a->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h, &err);
  is(err, CL_INVALID_BUFFER_SIZE, "big: not with the program's host memory");
  cl_tutti_distribution d = {CL_TUTTI_DIST_BLOCK, 1, sizeof(int), {n, 0, 0}, {0, 0, 0}, nq,
                             a->devs + 1};
  CHECK(clSetBufferDistributionTUTTI(m, &d));
  size_t chunk = (n + nq - 1) / nq;
  for (cl_uint q = 0; q < nq; q++) {
    size_t lo = q * chunk, hi = lo + chunk < n ? lo + chunk : n;
    CHECK(clEnqueueWriteBuffer(a->qs[1 + q], m, CL_TRUE, lo * 4, (hi - lo) * 4, h + lo, 0, NULL, NULL));
  }
  cl_kernel k = clCreateKernel(p, "twice", &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  CHECK(clEnqueueNDRangeKernel(a->qs[0], k, 1, NULL, &n, NULL, 0, NULL, NULL));
  memset(h, 0, bytes);
  for (cl_uint q = 0; q < nq; q++) {
    size_t lo = q * chunk, hi = lo + chunk < n ? lo + chunk : n;
    CHECK(clEnqueueReadBuffer(a->qs[1 + q], m, CL_TRUE, lo * 4, (hi - lo) * 4, h + lo, 0, NULL, NULL));
  }
  int good = 1;
  for (size_t i = 0; i < n; i++)
    good &= h[i] == (int)(i % 100003) * 2 + 1;
  ok(good, "big: an annotated kernel over it on the aggregate queue, chunks read on their owners");
  free(h);
  clReleaseKernel(k);
  clReleaseMemObject(m);
  if (no)
    clReleaseMemObject(no);
}

/* Balancing (SPLIT_BALANCE): a kernel whose first half of work-items does 100 times the
 * work of the second, launched over every queue (the aggregate device's members, with
 * TUTTI_AGGREGATE) and followed by clFinish of each, 12 times; exact against the host. The
 * parts' new weights show in TUTTI_STATS and the plan log (tests/split/split.test reads them);
 * SPLIT_BALANCE_OFF=R turns balancing off on rank R alone, a divergence. */
static void balance(struct app *a, cl_program p)
{
  enum { N = 1 << 14, ROUNDS = 12 };
  static cl_uint h[N], want[N];
  for (cl_uint i = 0; i < N; i++)
    h[i] = want[i] = i * 2654435761u;
  for (int r = 0; r < ROUNDS; r++)
    for (cl_uint i = 0; i < N; i++)
      for (cl_uint j = 0, n = i < N / 2 ? 4000 : 40; j < n; j++)
        want[i] = want[i] * 1103515245u + 12345u;
  cl_int err;
  cl_mem m = clCreateBuffer(a->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof h, h, &err);
  CHECK(err);
  cl_kernel k = clCreateKernel(p, "skewed", &err);
  CHECK(err);
  cl_uint heavy = N / 2, first = getenv("TUTTI_AGGREGATE") ? 1 : 0;
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  CHECK(clSetKernelArg(k, 1, sizeof heavy, &heavy));
  size_t n = N, local = 64;
  for (int r = 0; r < ROUNDS; r++) {
    if (first)
      CHECK(clEnqueueNDRangeKernel(a->qs[0], k, 1, NULL, &n, &local, 0, NULL, NULL));
    else
      CHECK(clEnqueueSplitNDRangeKernelTUTTI(a->ndev, a->qs, k, 1, NULL, &n, &local, 0, NULL, NULL));
    for (cl_uint q = 0; q < a->ndev; q++)
      CHECK(clFinish(a->qs[q]));
  }
  CHECK(clEnqueueReadBuffer(a->qs[first], m, CL_TRUE, 0, sizeof h, h, 0, NULL, NULL));
  ok(!memcmp(h, want, sizeof h), "balance: a skewed kernel split 12 times, exact");
  clReleaseKernel(k);
  clReleaseMemObject(m);
}

int main(void)
{
  const char *r = launcher_rank();
  int rank = r ? atoi(r) : 0;
  rank0 = rank == 0;
  const char *bal_off = getenv("SPLIT_BALANCE_OFF");
  if (bal_off && atoi(bal_off) == rank)
    setenv("TUTTI_BALANCE", "off", 1);
  struct app a;
  app_open(&a);
  if (rank0)
    printf("TAP version 13\n");
  cl_int err;
  cl_program p = clCreateProgramWithSource(a.ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
  enum { N = 4096 };
  static int in[N], out[N], want[N];
  for (int i = 0; i < N; i++)
    in[i] = (i * 37) % 1001 - 300;
  cl_mem A = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof in, in, &err);
  CHECK(err);
  cl_mem B = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
  CHECK(err);
  cl_kernel copy = clCreateKernel(p, "copy", &err);
  CHECK(err);
  size_t n = N, local = 64;
  if (getenv("SPLIT_WINDOWS") || getenv("SPLIT_BIG") || getenv("SPLIT_BALANCE")) {
    if (getenv("SPLIT_BALANCE"))
      balance(&a, p);
    else if (getenv("SPLIT_BIG"))
      big(&a, p);
    else
      windows(&a, p, 0);
    clReleaseKernel(copy);
    clReleaseMemObject(A);
    clReleaseMemObject(B);
    clReleaseProgram(p);
    app_close(&a);
    if (rank0)
      printf("1..%d\n", count);
    return failures ? 1 : 0;
  }
  windows(&a, p, 1);
  replan(&a, p);

  /* clSetKernelAnnotationTUTTI. */
  is(clSetKernelAnnotationTUTTI(NULL, "global i => read a[i]"), CL_INVALID_KERNEL, "annotation: NULL kernel");
  is(clSetKernelAnnotationTUTTI(copy, "global i => read a[i"), CL_INVALID_VALUE, "annotation: syntax error");
  is(clSetKernelAnnotationTUTTI(copy, "global i => read z[i]"), CL_INVALID_VALUE, "annotation: unknown parameter");
  is(clSetKernelAnnotationTUTTI(copy, "global i => read a[i * i]"), CL_INVALID_VALUE, "annotation: not affine");
  is(clSetKernelAnnotationTUTTI(copy, "global i => write a[i]"), CL_INVALID_VALUE, "annotation: writes a const parameter");
  is(clSetKernelAnnotationTUTTI(copy, "global i => read a[i], write b[i]"), CL_SUCCESS, "annotation: valid");

  /* Pragmas that do not parse fail the build, naming kernel, line and column. */
  const char *bad = "__kernel void fine(__global int *x) { }\n"
                    "#pragma tutti global i => read x[i], write y[i]\n"
                    "__kernel void k(__global int *x, __global int *y) { }\n";
  cl_program bp = clCreateProgramWithSource(a.ctx, 1, &bad, NULL, &err);
  CHECK(err);
  is(clBuildProgram(bp, 0, NULL, NULL, NULL, NULL), CL_SUCCESS, "pragma: valid build");
  clReleaseProgram(bp);
  bad = "__kernel void fine(__global int *x) { }\n"
        "#pragma tutti global i => read x[i], write q[i]\n"
        "__kernel void k(__global int *x, __global int *y) { }\n";
  bp = clCreateProgramWithSource(a.ctx, 1, &bad, NULL, &err);
  CHECK(err);
  is(clBuildProgram(bp, 0, NULL, NULL, NULL, NULL), CL_BUILD_PROGRAM_FAILURE, "pragma: unknown parameter fails the build");
  char log[1024] = "";
  cl_build_status st = CL_BUILD_NONE;
  clGetProgramBuildInfo(bp, a.devs[a.ndev - 1], CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
  clGetProgramBuildInfo(bp, a.devs[a.ndev - 1], CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL);
  ok(strstr(log, "#pragma tutti of kernel 'k', line 2, column 44: unknown parameter 'q'") != NULL && st == CL_BUILD_ERROR,
     "pragma: the log names the pragma, its kernel, line and column; status CL_BUILD_ERROR");
  clCreateKernel(bp, "k", &err);
  is(err, CL_INVALID_PROGRAM_EXECUTABLE, "pragma: no kernel from the failed build");
  clReleaseProgram(bp);

  /* clSetBufferDistributionTUTTI. */
  cl_tutti_distribution d = {CL_TUTTI_DIST_BLOCK, 1, sizeof(int), {N, 0, 0}, {0, 0, 0}, 0, NULL};
  is(clSetBufferDistributionTUTTI(NULL, &d), CL_INVALID_MEM_OBJECT, "distribution: NULL buffer");
  cl_buffer_region reg = {0, 1024};
  cl_mem sub = clCreateSubBuffer(B, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
  CHECK(err);
  is(clSetBufferDistributionTUTTI(sub, &d), CL_INVALID_MEM_OBJECT, "distribution: sub-buffer");
  clReleaseMemObject(sub);
  d.extents[0] = N + 1;
  is(clSetBufferDistributionTUTTI(B, &d), CL_INVALID_VALUE, "distribution: extents do not match the size");
  d.extents[0] = N;
  d.ndims = 0;
  is(clSetBufferDistributionTUTTI(B, &d), CL_INVALID_VALUE, "distribution: ndims 0");
  d.ndims = 4;
  is(clSetBufferDistributionTUTTI(B, &d), CL_INVALID_VALUE, "distribution: ndims 4");
  d.ndims = 1;
  d.kind = 9;
  is(clSetBufferDistributionTUTTI(B, &d), CL_INVALID_VALUE, "distribution: unknown kind");
  d.kind = CL_TUTTI_DIST_CYCLIC;
  is(clSetBufferDistributionTUTTI(B, &d), CL_INVALID_VALUE, "distribution: CYCLIC chunk 0");
  d.chunk[0] = 256;
  cl_device_id stranger = (cl_device_id)&d;
  d.num_devices = 1;
  d.devices = &stranger;
  is(clSetBufferDistributionTUTTI(B, &d), CL_INVALID_DEVICE, "distribution: a device outside the context");
  d.num_devices = 0;
  d.devices = NULL;
  is(clSetBufferDistributionTUTTI(B, &d), CL_SUCCESS, "distribution: CYCLIC of 256 ints");

  /* clEnqueueSplitNDRangeKernelTUTTI: its own checks, then clEnqueueNDRangeKernel's. */
  CHECK(clSetKernelArg(copy, 0, sizeof A, &A));
  is(clEnqueueSplitNDRangeKernelTUTTI(0, a.qs, copy, 1, NULL, &n, NULL, 0, NULL, NULL), CL_INVALID_VALUE, "split: no queues");
  is(clEnqueueSplitNDRangeKernelTUTTI(1, NULL, copy, 1, NULL, &n, NULL, 0, NULL, NULL), CL_INVALID_VALUE, "split: queues NULL");
  cl_command_queue badq[2] = {a.qs[0], NULL};
  is(clEnqueueSplitNDRangeKernelTUTTI(2, badq, copy, 1, NULL, &n, NULL, 0, NULL, NULL), CL_INVALID_COMMAND_QUEUE, "split: a NULL queue");
  cl_context other = clCreateContext(NULL, 1, a.devs, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue oq = clCreateCommandQueue(other, a.devs[0], 0, &err);
  CHECK(err);
  cl_command_queue mixed[2] = {a.qs[0], oq};
  is(clEnqueueSplitNDRangeKernelTUTTI(2, mixed, copy, 1, NULL, &n, NULL, 0, NULL, NULL), CL_INVALID_CONTEXT, "split: queues of two contexts");
  is(clEnqueueSplitNDRangeKernelTUTTI(1, &oq, copy, 1, NULL, &n, NULL, 0, NULL, NULL), CL_INVALID_CONTEXT, "split: kernel of another context");
  is(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, NULL, 1, NULL, &n, NULL, 0, NULL, NULL), CL_INVALID_KERNEL, "split: NULL kernel");
  is(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, copy, 1, NULL, &n, NULL, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS, "split: an argument not set");
  CHECK(clSetKernelArg(copy, 1, sizeof B, &B));
  is(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, copy, 0, NULL, &n, NULL, 0, NULL, NULL), CL_INVALID_WORK_DIMENSION, "split: work_dim 0");
  is(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, copy, 1, NULL, NULL, NULL, 0, NULL, NULL), CL_INVALID_GLOBAL_WORK_SIZE, "split: no global size");
  size_t odd = 100;
  is(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, copy, 1, NULL, &odd, &local, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE, "split: local size does not divide");
  is(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, copy, 1, NULL, &n, NULL, 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST, "split: wait list NULL with a count");
  cl_event oev = clCreateUserEvent(other, &err);
  CHECK(err);
  is(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, copy, 1, NULL, &n, NULL, 1, &oev, NULL), CL_INVALID_CONTEXT, "split: an event of another context");
  clSetUserEventStatus(oev, CL_COMPLETE);
  clReleaseEvent(oev);
  clReleaseCommandQueue(oq);
  clReleaseContext(other);

  /* A split launch following B's cyclic distribution, with an offset: one event. */
  for (int i = 0; i < N; i++)
    want[i] = i < 64 ? -1 : in[i] * 2;
  CHECK(clEnqueueWriteBuffer(a.qs[0], B, CL_TRUE, 0, 64 * sizeof(int), (int[64]){[0 ... 63] = -1}, 0, NULL, NULL));
  size_t off = 64, rest = N - 64;
  cl_event ev;
  is(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, copy, 1, &off, &rest, &local, 0, NULL, &ev), CL_SUCCESS, "split: launch with an offset");
  CHECK(clWaitForEvents(1, &ev));
  cl_int es = -1;
  cl_command_type ct = 0;
  clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL);
  ok(es == CL_COMPLETE, "split: its event completes");
  clReleaseEvent(ev);
  CHECK(clEnqueueReadBuffer(a.qs[0], B, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  ok(!memcmp(out, want, sizeof out), "split: the bytes of every part, and the untouched head");
  CHECK(clSetBufferDistributionTUTTI(B, NULL));

  /* On queues with profiling, the launch's event spans its parts: from the first part's start
   * to the last part's end, so at least one part's run (a marker alone would take ~0). */
  {
    const char *spin_src =
        "#pragma tutti global i => write b[i]\n"
        "__kernel void spin(__global int *b) { size_t i = get_global_id(0); int x = (int)i;\n"
        "  for (int k = 0; k < 20000; k++) x = (x ^ (x >> 7)) * 1103515245 + 12345; b[i] = x; }\n";
    cl_program sp = clCreateProgramWithSource(a.ctx, 1, &spin_src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(sp, 0, NULL, NULL, NULL, NULL));
    cl_kernel spin = clCreateKernel(sp, "spin", &err);
    CHECK(err);
    CHECK(clSetKernelArg(spin, 0, sizeof B, &B));
    cl_command_queue pq[64];
    for (cl_uint i = 0; i < a.ndev; i++) {
      pq[i] = clCreateCommandQueue(a.ctx, a.devs[i], CL_QUEUE_PROFILING_ENABLE, &err);
      CHECK(err);
    }
    size_t items = 256;
    CHECK(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, pq, spin, 1, NULL, &items, NULL, 0, NULL, &ev));
    CHECK(clWaitForEvents(1, &ev));
    cl_ulong t[4] = {0};
    for (int i = 0; i < 4; i++)
      CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED + i, sizeof t[i], &t[i], NULL));
    char what[160];
    snprintf(what, sizeof what, "split: the event's profiling times span the parts (queued <= "
             "submit <= start < end; ran %lld ns)", (long long)(t[3] - t[2]));
    ok(t[0] <= t[1] && t[1] <= t[2] && t[2] < t[3] && t[3] - t[2] >= 20000, what);
    clReleaseEvent(ev);
    for (cl_uint i = 0; i < a.ndev; i++)
      clReleaseCommandQueue(pq[i]);
    clReleaseKernel(spin);
    clReleaseProgram(sp);
  }

  /* Fallbacks: overlapping writes (a scatter annotated as if it were not) and no annotation
   * run whole on the first queue, correctly. */
  cl_kernel scatter = clCreateKernel(p, "scatter", &err);
  CHECK(err);
  is(clSetKernelAnnotationTUTTI(scatter, "global i => read a[i], write b[:]"), CL_SUCCESS, "fallback: annotation of a scatter");
  CHECK(clSetKernelArg(scatter, 0, sizeof A, &A));
  CHECK(clSetKernelArg(scatter, 1, sizeof B, &B));
  is(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, scatter, 1, NULL, &n, NULL, 0, NULL, &ev), CL_SUCCESS, "fallback: overlapping writes run whole");
  CHECK(clWaitForEvents(1, &ev));
  clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, NULL);
  ok(ct == CL_COMMAND_NDRANGE_KERNEL, "fallback: its event is a kernel's");
  clReleaseEvent(ev);
  CHECK(clEnqueueReadBuffer(a.qs[0], B, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  for (int i = 0; i < N; i++)
    want[(i * 7) % N] = in[i];
  ok(!memcmp(out, want, sizeof out), "fallback: the scatter's result");
  cl_kernel plain = clCreateKernel(p, "plain", &err);
  CHECK(err);
  CHECK(clSetKernelArg(plain, 0, sizeof B, &B));
  is(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, plain, 1, NULL, &n, NULL, 0, NULL, NULL), CL_SUCCESS, "fallback: no annotation runs whole");
  CHECK(clEnqueueReadBuffer(a.qs[0], B, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  int good = 1;
  for (int i = 0; i < N; i++)
    good &= out[i] == want[i] + 1;
  ok(good, "fallback: the unannotated kernel ran once");
  /* A program from binaries: no source, so no split. */
  size_t sizes[64] = {0};
  CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, a.ndev * sizeof(size_t), sizes, NULL));
  unsigned char *bins[64] = {NULL};
  for (cl_uint i = 0; i < a.ndev; i++)
    bins[i] = malloc(sizes[i]);
  CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, a.ndev * sizeof(unsigned char *), bins, NULL));
  const unsigned char *cb = bins[0];
  unsigned char *bin = bins[0];
  size_t bsize = sizes[0];
  for (cl_uint i = 1; i < a.ndev; i++)
    free(bins[i]);
  cl_program fromb = clCreateProgramWithBinary(a.ctx, 1, a.devs, &bsize, &cb, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(fromb, 0, NULL, NULL, NULL, NULL));
  cl_kernel bk = clCreateKernel(fromb, "copy", &err);
  CHECK(err);
  is(clSetKernelAnnotationTUTTI(bk, "global i => read a[i], write b[i]"), CL_SUCCESS, "binary: an annotation is kept");
  CHECK(clSetKernelArg(bk, 0, sizeof A, &A));
  CHECK(clSetKernelArg(bk, 1, sizeof B, &B));
  is(clEnqueueSplitNDRangeKernelTUTTI(1, a.qs, bk, 1, NULL, &n, NULL, 0, NULL, NULL), CL_SUCCESS, "binary: runs whole");
  CHECK(clEnqueueReadBuffer(a.qs[0], B, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  good = 1;
  for (int i = 0; i < N; i++)
    good &= out[i] == in[i] * 2;
  ok(good, "binary: the result");
  clReleaseKernel(bk);
  clReleaseProgram(fromb);
  free(bin);

  /* Reductions: int + min max & | ^, uint + min max (atomics), float + min max, long +,
   * ulong ^ (per-group partial results), equal to the host's. */
  cl_kernel ri = clCreateKernel(p, "red_int", &err);
  CHECK(err);
  is(clSetKernelAnnotationTUTTI(ri, "global i => read x[i], reduce(+) s[0], reduce(min) mn[0], reduce(max) mx[0], "
                                    "reduce(&) an[0], reduce(|) o[0], reduce(^) xo[0]"), CL_SUCCESS, "reduce: int annotation");
  int init[6] = {5, 1000, -1000, -1, 0, 0x55}, hres[6];
  memcpy(hres, init, sizeof hres);
  for (int i = 0; i < N; i++) {
    hres[0] += in[i];
    hres[1] = in[i] < hres[1] ? in[i] : hres[1];
    hres[2] = in[i] > hres[2] ? in[i] : hres[2];
    hres[4] |= in[i];
    hres[5] ^= in[i];
  }
  hres[3] = init[3];
  for (int i = 0; i < N; i++)
    hres[3] &= in[i];
  cl_mem R[6];
  CHECK(clSetKernelArg(ri, 0, sizeof A, &A));
  for (int i = 0; i < 6; i++) {
    R[i] = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(int), &init[i], &err);
    CHECK(err);
    CHECK(clSetKernelArg(ri, i + 1, sizeof R[i], &R[i]));
  }
  is(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, ri, 1, NULL, &n, &local, 0, NULL, NULL), CL_SUCCESS, "reduce: int launch");
  good = 1;
  for (int i = 0; i < 6; i++) {
    int v;
    CHECK(clEnqueueReadBuffer(a.qs[0], R[i], CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL));
    if (v != hres[i]) {
      if (rank0)
        printf("# int reduction %d: %d, want %d\n", i, v, hres[i]);
      good = 0;
    }
    clReleaseMemObject(R[i]);
  }
  ok(good, "reduce: int + min max & | ^ equal the host's (with the old value)");
  cl_kernel ru = clCreateKernel(p, "red_uint", &err);
  CHECK(err);
  is(clSetKernelAnnotationTUTTI(ru, "global i => read x[i], reduce(+) s[0], reduce(min) mn[0], reduce(max) mx[0]"), CL_SUCCESS, "reduce: uint annotation");
  cl_uint uinit[3] = {7, 0xFFFFFFFFu, 0}, ures[3];
  memcpy(ures, uinit, sizeof ures);
  for (int i = 0; i < N; i++) {
    cl_uint v = (cl_uint)in[i];
    ures[0] += v;
    ures[1] = v < ures[1] ? v : ures[1];
    ures[2] = v > ures[2] ? v : ures[2];
  }
  CHECK(clSetKernelArg(ru, 0, sizeof A, &A));
  for (int i = 0; i < 3; i++) {
    R[i] = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(cl_uint), &uinit[i], &err);
    CHECK(err);
    CHECK(clSetKernelArg(ru, i + 1, sizeof R[i], &R[i]));
  }
  CHECK(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, ru, 1, NULL, &n, &local, 0, NULL, NULL));
  good = 1;
  for (int i = 0; i < 3; i++) {
    cl_uint v;
    CHECK(clEnqueueReadBuffer(a.qs[0], R[i], CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL));
    good &= v == ures[i];
    clReleaseMemObject(R[i]);
  }
  ok(good, "reduce: uint + min max equal the host's");
  /* Floats: each group writes its own slot, so the reduction is per element over parts. */
  cl_kernel rf = clCreateKernel(p, "red_float", &err);
  CHECK(err);
  enum { G = N / 64 };
  is(clSetKernelAnnotationTUTTI(rf, "group g => read x[g*64:g*64+64], reduce(+) s[g], reduce(min) mn[g], "
                                    "reduce(max) mx[g], reduce(+) ls[g], reduce(^) ux[g]"), CL_SUCCESS, "reduce: float annotation");
  static float fx[N], fs[G], fmn[G], fmx[G];
  static cl_long lsum[G];
  static cl_ulong ux[G];
  for (int i = 0; i < N; i++)
    fx[i] = (float)in[i] * 0.125f;
  cl_mem FX = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof fx, fx, &err);
  CHECK(err);
  float finit[G];
  for (int g = 0; g < G; g++)
    finit[g] = 1.5f;
  cl_mem FR[5];
  for (int i = 0; i < 5; i++) {
    size_t sz = i < 3 ? sizeof finit : sizeof lsum;
    FR[i] = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE, sz, NULL, &err);
    CHECK(err);
    if (i < 3)
      CHECK(clEnqueueWriteBuffer(a.qs[0], FR[i], CL_TRUE, 0, sz, finit, 0, NULL, NULL));
    else
      CHECK(clEnqueueFillBuffer(a.qs[0], FR[i], (cl_long[]){3}, sizeof(cl_long), 0, sz, 0, NULL, NULL));
    CHECK(clSetKernelArg(rf, i + 1, sizeof FR[i], &FR[i]));
  }
  CHECK(clSetKernelArg(rf, 0, sizeof FX, &FX));
  CHECK(clEnqueueSplitNDRangeKernelTUTTI(a.ndev, a.qs, rf, 1, NULL, &n, &local, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(a.qs[0], FR[0], CL_TRUE, 0, sizeof fs, fs, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(a.qs[0], FR[1], CL_TRUE, 0, sizeof fmn, fmn, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(a.qs[0], FR[2], CL_TRUE, 0, sizeof fmx, fmx, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(a.qs[0], FR[3], CL_TRUE, 0, sizeof lsum, lsum, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(a.qs[0], FR[4], CL_TRUE, 0, sizeof ux, ux, 0, NULL, NULL));
  good = 1;
  for (int g = 0; g < G; g++) {
    float s = 0, lo = INFINITY, hi = -INFINITY;
    cl_long l = 0;
    cl_ulong u = 0;
    for (int j = 0; j < 64; j++) {
      float v = fx[g * 64 + j];
      s += v;
      lo = fminf(lo, v);
      hi = fmaxf(hi, v);
      l += (cl_long)v;
      u ^= (cl_ulong)(g * 64 + j) << 20;
    }
    good &= fs[g] == 1.5f + s && fmn[g] == fminf(1.5f, lo) && fmx[g] == fmaxf(1.5f, hi) &&
            lsum[g] == 3 + l && ux[g] == (3 ^ u);
  }
  ok(good, "reduce: float + min max, long +, ulong ^ per group equal the host's");
  for (int i = 0; i < 5; i++)
    clReleaseMemObject(FR[i]);
  clReleaseMemObject(FX);

  /* TUTTI_AGGREGATE: the aggregate device is listed first and alone answers
   * CL_DEVICE_TYPE_DEFAULT; its compute units and memory are its members' sums; its queue
   * reports it. */
  if (getenv("TUTTI_AGGREGATE")) {
    char name[128] = "", want_name[128];
    cl_uint cu = 0, sum_cu = 0, nd = 0;
    cl_ulong mem = 0, sum_mem = 0;
    clGetDeviceInfo(a.devs[0], CL_DEVICE_NAME, sizeof name, name, NULL);
    snprintf(want_name, sizeof want_name, "Tutti aggregate of %u devices", a.ndev - 1);
    clGetDeviceInfo(a.devs[0], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    clGetDeviceInfo(a.devs[0], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    for (cl_uint i = 1; i < a.ndev; i++) {
      cl_uint c = 0;
      cl_ulong m = 0;
      clGetDeviceInfo(a.devs[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof c, &c, NULL);
      clGetDeviceInfo(a.devs[i], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof m, &m, NULL);
      sum_cu += c;
      sum_mem += m;
    }
    ok(!strcmp(name, want_name) && cu == sum_cu && mem == sum_mem,
       "aggregate: listed first, named, compute units and memory summed");
    cl_platform_id plat;
    cl_device_id def[4];
    clGetDeviceInfo(a.devs[0], CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL);
    ok(clGetDeviceIDs(plat, CL_DEVICE_TYPE_DEFAULT, 4, def, &nd) == CL_SUCCESS && nd == 1 &&
       def[0] == a.devs[0], "aggregate: the default device");
    cl_device_id qd = NULL, cd[8] = {NULL};
    clGetCommandQueueInfo(a.qs[0], CL_QUEUE_DEVICE, sizeof qd, &qd, NULL);
    clGetContextInfo(a.ctx, CL_CONTEXT_DEVICES, sizeof cd, cd, NULL);
    ok(qd == a.devs[0] && cd[0] == a.devs[0], "aggregate: its queue and the context report it");
    /* An unannotated kernel on its queue runs whole; an annotated one is split. */
    CHECK(clEnqueueWriteBuffer(a.qs[0], B, CL_TRUE, 0, sizeof in, in, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(a.qs[0], plain, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(a.qs[0], copy, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clFinish(a.qs[0]));
    CHECK(clEnqueueReadBuffer(a.qs[0], B, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    good = 1;
    for (int i = 0; i < N; i++)
      good &= out[i] == in[i] * 2;
    ok(good, "aggregate: kernels on its queue, plain and annotated");
  }

  /* One rank alone sets an annotation: the job stops as diverged. */
  const char *dv = getenv("SPLIT_DIVERGE");
  if (dv && rank == atoi(dv))
    clSetKernelAnnotationTUTTI(plain, "global i => readwrite b[i]");
  /* Points where the hosts wait: rank 0 compares the ranks' calls there. */
  for (int round = 0; round < 3; round++) {
    CHECK(clEnqueueWriteBuffer(a.qs[0], B, CL_FALSE, 0, sizeof in, in, 0, NULL, NULL));
    CHECK(clFinish(a.qs[0]));
    CHECK(clEnqueueReadBuffer(a.qs[0], B, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  }

  clReleaseKernel(rf);
  clReleaseKernel(ru);
  clReleaseKernel(ri);
  clReleaseKernel(plain);
  clReleaseKernel(scatter);
  clReleaseKernel(copy);
  clReleaseProgram(p);
  clReleaseMemObject(A);
  clReleaseMemObject(B);
  app_close(&a);
  if (rank0)
    printf("1..%d\n", count);
  return failures ? 1 : 0;
}
