/* autosplit: an ordinary OpenCL program written for one device, with no annotation and no
 * Tutti header: eight kernels of the shapes programs are made of (vector addition, a 5-point
 * stencil in ping-pong sweeps, a matrix product, a gather through an index buffer, a scatter
 * through a permutation, a histogram with global atomics, per-work-group sums in local memory,
 * an in-place update), each launched several times on the first device's queue and checked
 * exactly against the host (integer data). Through Tutti's aggregate device
 * (TUTTI_AGGREGATE=all) every launch is split over every device of the job by what Tutti
 * derives from the kernels' code (doc/split.md, "Automatic splitting"); TUTTI_STATS says how.
 *
 * Usage: autosplit [SCALE]   (SCALE multiplies the sizes; AUTOSPLIT_REPS launches per kernel,
 * default 4). Prints "ok NAME" or "FAILED NAME: ..." per kernel and exits 1 on any failure. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source =
    "__kernel void vadd(__global const int *a, __global const int *b, __global int *c, int n)\n"
    "{ int i = get_global_id(0); if (i < n) c[i] = a[i] + b[i]; }\n"
    "\n"
    "__kernel void stencil(__global const int *in, __global int *out, int w, int h)\n"
    "{\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { out[y * w + x] = in[y * w + x]; return; }\n"
    "  out[y * w + x] = (in[y * w + x] + in[(y - 1) * w + x] + in[(y + 1) * w + x] +\n"
    "                    in[y * w + x - 1] + in[y * w + x + 1]) / 5;\n"
    "}\n"
    "\n"
    "__kernel void matmul(__global const int *A, __global const int *B, __global int *C, int n)\n"
    "{\n"
    "  int col = get_global_id(0), row = get_global_id(1), s = 0;\n"
    "  for (int t = 0; t < n; t++) s += A[row * n + t] * B[t * n + col];\n"
    "  C[row * n + col] = s;\n"
    "}\n"
    "\n"
    "__kernel void gather(__global const int *src, __global const int *idx, __global int *dst)\n"
    "{ int i = get_global_id(0); dst[i] = src[idx[i]]; }\n"
    "\n"
    "__kernel void scatter(__global const int *src, __global const int *perm, __global int *dst)\n"
    "{ int i = get_global_id(0); dst[perm[i]] = src[i] + 1; }\n"
    "\n"
    "__kernel void histogram(__global const uint *x, __global uint *bins, int nbins)\n"
    "{ atomic_inc(&bins[x[get_global_id(0)] % nbins]); }\n"
    "\n"
    "__kernel void wgsum(__global const int *x, __global int *sums, __local int *tmp)\n"
    "{\n"
    "  int l = get_local_id(0), n = get_local_size(0);\n"
    "  tmp[l] = x[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int s = n / 2; s > 0; s /= 2) {\n"
    "    if (l < s) tmp[l] += tmp[l + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (l == 0) sums[get_group_id(0)] = tmp[0];\n"
    "}\n"
    "\n"
    "__kernel void inplace(__global int *a, int k)\n"
    "{ int i = get_global_id(0); a[i] = a[i] * k + 1; }\n";

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cl_int e_ = (call);                                                                          \
    if (e_ != CL_SUCCESS) {                                                                      \
      fprintf(stderr, "autosplit: %s failed: %d (line %d)\n", #call, e_, __LINE__);             \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

static cl_context ctx;
static cl_command_queue q;
static cl_program prog;
static int reps = 4, failures;

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

static void arg(cl_kernel k, cl_uint i, size_t size, const void *v)
{
  CHECK(clSetKernelArg(k, i, size, v));
}

/* k launched `reps` times over the range (global, local). */
static void launch(cl_kernel k, cl_uint dim, const size_t *global, const size_t *local)
{
  for (int r = 0; r < reps; r++)
    CHECK(clEnqueueNDRangeKernel(q, k, dim, NULL, global, local, 0, NULL, NULL));
}

/* Compares n ints read from m with want; prints the verdict. */
static void verify(const char *name, cl_mem m, const int *want, size_t n)
{
  int *got = malloc(n * sizeof *got);
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * sizeof *got, got, 0, NULL, NULL));
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i] && !bad++)
      first = i;
  if (bad) {
    printf("FAILED %s: %zu of %zu values wrong, first at %zu: %d, expected %d\n", name, bad, n,
           first, got[first], want[first]);
    failures++;
  } else {
    printf("ok %s\n", name);
  }
  free(got);
}

static unsigned seed = 12345;
static int next_random(void)
{
  seed = seed * 1103515245u + 12345u;
  return (int)((seed >> 8) & 0xffff);
}

static void vadd(int scale)
{
  int n = 100003 * scale; /* a prime: the last work-group is partial */
  size_t local = 64, global = ((size_t)n + local - 1) / local * local;
  int *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  for (int i = 0; i < n; i++) {
    a[i] = next_random();
    b[i] = next_random();
    c[i] = a[i] + b[i];
  }
  cl_mem ma = buffer(n * 4, a), mb = buffer(n * 4, b), mc = buffer(n * 4, NULL);
  cl_kernel k = kernel("vadd");
  arg(k, 0, sizeof ma, &ma);
  arg(k, 1, sizeof mb, &mb);
  arg(k, 2, sizeof mc, &mc);
  arg(k, 3, sizeof n, &n);
  launch(k, 1, &global, &local);
  verify("vadd", mc, c, n);
  clReleaseKernel(k);
  clReleaseMemObject(ma), clReleaseMemObject(mb), clReleaseMemObject(mc);
  free(a), free(b), free(c);
}

static void stencil(int scale)
{
  int w = 256, h = 128 * scale, n = w * h, sweeps = 2 * reps;
  int *g = malloc(n * sizeof *g), *t = malloc(n * sizeof *t);
  for (int i = 0; i < n; i++)
    g[i] = next_random();
  cl_mem a = buffer(n * 4, g), b = buffer(n * 4, NULL);
  for (int s = 0; s < sweeps; s++) {
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        int i = y * w + x;
        t[i] = x == 0 || y == 0 || x == w - 1 || y == h - 1
                   ? g[i]
                   : (g[i] + g[i - w] + g[i + w] + g[i - 1] + g[i + 1]) / 5;
      }
    int *swap = g;
    g = t;
    t = swap;
  }
  cl_kernel k = kernel("stencil");
  arg(k, 2, sizeof w, &w);
  arg(k, 3, sizeof h, &h);
  size_t global[2] = {(size_t)w, (size_t)h}, local[2] = {64, 1};
  for (int s = 0; s < sweeps; s++) {
    arg(k, 0, sizeof a, s % 2 ? &b : &a);
    arg(k, 1, sizeof b, s % 2 ? &a : &b);
    CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, local, 0, NULL, NULL));
  }
  verify("stencil", a, g, n);
  clReleaseKernel(k);
  clReleaseMemObject(a), clReleaseMemObject(b);
  free(g), free(t);
}

static void matmul(int scale)
{
  int n = 64 * scale;
  int *A = malloc(n * n * sizeof *A), *B = malloc(n * n * sizeof *B), *C = malloc(n * n * sizeof *C);
  for (int i = 0; i < n * n; i++) {
    A[i] = next_random() % 16;
    B[i] = next_random() % 16;
  }
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++) {
      int s = 0;
      for (int t = 0; t < n; t++)
        s += A[r * n + t] * B[t * n + c];
      C[r * n + c] = s;
    }
  cl_mem ma = buffer(n * n * 4, A), mb = buffer(n * n * 4, B), mc = buffer(n * n * 4, NULL);
  cl_kernel k = kernel("matmul");
  arg(k, 0, sizeof ma, &ma);
  arg(k, 1, sizeof mb, &mb);
  arg(k, 2, sizeof mc, &mc);
  arg(k, 3, sizeof n, &n);
  size_t global[2] = {(size_t)n, (size_t)n}, local[2] = {16, 4};
  launch(k, 2, global, local);
  verify("matmul", mc, C, n * n);
  clReleaseKernel(k);
  clReleaseMemObject(ma), clReleaseMemObject(mb), clReleaseMemObject(mc);
  free(A), free(B), free(C);
}

/* A permutation of n (the same on every rank: the seed is fixed). */
static int *permutation(int n)
{
  int *p = malloc(n * sizeof *p);
  for (int i = 0; i < n; i++)
    p[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(((unsigned)next_random() << 8 | (unsigned)next_random()) % (unsigned)(i + 1));
    int t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p;
}

static void gather_scatter(int scale)
{
  int n = 65536 * scale;
  int *src = malloc(n * sizeof *src), *perm = permutation(n), *want = malloc(n * sizeof *want);
  for (int i = 0; i < n; i++)
    src[i] = next_random();
  cl_mem ms = buffer(n * 4, src), mp = buffer(n * 4, perm), md = buffer(n * 4, NULL);
  size_t global = (size_t)n, local = 64;
  cl_kernel g = kernel("gather"), s = kernel("scatter");
  arg(g, 0, sizeof ms, &ms);
  arg(g, 1, sizeof mp, &mp);
  arg(g, 2, sizeof md, &md);
  launch(g, 1, &global, &local);
  for (int i = 0; i < n; i++)
    want[i] = src[perm[i]];
  verify("gather", md, want, n);
  arg(s, 0, sizeof ms, &ms);
  arg(s, 1, sizeof mp, &mp);
  arg(s, 2, sizeof md, &md);
  launch(s, 1, &global, &local);
  for (int i = 0; i < n; i++)
    want[perm[i]] = src[i] + 1;
  verify("scatter", md, want, n);
  clReleaseKernel(g), clReleaseKernel(s);
  clReleaseMemObject(ms), clReleaseMemObject(mp), clReleaseMemObject(md);
  free(src), free(perm), free(want);
}

static void histogram(int scale)
{
  int n = 262144 * scale, nbins = 64;
  int *x = malloc(n * sizeof *x), *want = calloc(nbins, sizeof *want);
  for (int i = 0; i < n; i++)
    x[i] = next_random();
  for (int i = 0; i < n; i++)
    want[x[i] % nbins] += reps;
  cl_mem mx = buffer(n * 4, x), mb = buffer(nbins * 4, NULL);
  int zero = 0;
  CHECK(clEnqueueFillBuffer(q, mb, &zero, sizeof zero, 0, nbins * 4, 0, NULL, NULL));
  cl_kernel k = kernel("histogram");
  arg(k, 0, sizeof mx, &mx);
  arg(k, 1, sizeof mb, &mb);
  arg(k, 2, sizeof nbins, &nbins);
  size_t global = (size_t)n, local = 64;
  launch(k, 1, &global, &local);
  verify("histogram", mb, want, nbins);
  clReleaseKernel(k);
  clReleaseMemObject(mx), clReleaseMemObject(mb);
  free(x), free(want);
}

static void wgsum(int scale)
{
  int n = 131072 * scale, local = 128, groups = n / local;
  int *x = malloc(n * sizeof *x), *want = calloc(groups, sizeof *want);
  for (int i = 0; i < n; i++) {
    x[i] = next_random();
    want[i / local] += x[i];
  }
  cl_mem mx = buffer(n * 4, x), ms = buffer(groups * 4, NULL);
  cl_kernel k = kernel("wgsum");
  arg(k, 0, sizeof mx, &mx);
  arg(k, 1, sizeof ms, &ms);
  arg(k, 2, local * sizeof(int), NULL);
  size_t global = (size_t)n, lsize = (size_t)local;
  launch(k, 1, &global, &lsize);
  verify("wgsum", ms, want, groups);
  clReleaseKernel(k);
  clReleaseMemObject(mx), clReleaseMemObject(ms);
  free(x), free(want);
}

static void inplace(int scale)
{
  int n = 65536 * scale, factor = 3;
  int *a = malloc(n * sizeof *a);
  for (int i = 0; i < n; i++)
    a[i] = next_random();
  cl_mem ma = buffer(n * 4, a);
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < n; i++)
      a[i] = a[i] * factor + 1;
  cl_kernel k = kernel("inplace");
  arg(k, 0, sizeof ma, &ma);
  arg(k, 1, sizeof factor, &factor);
  size_t global = (size_t)n, local = 64;
  launch(k, 1, &global, &local);
  verify("inplace", ma, a, n);
  clReleaseKernel(k);
  clReleaseMemObject(ma);
  free(a);
}

int main(int argc, char **argv)
{
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  if (scale < 1)
    scale = 1;
  if (getenv("AUTOSPLIT_REPS") && atoi(getenv("AUTOSPLIT_REPS")) > 0)
    reps = atoi(getenv("AUTOSPLIT_REPS"));
  /* The first device of the first platform, as a program written for one device takes it. */
  cl_platform_id platform;
  cl_device_id device;
  CHECK(clGetPlatformIDs(1, &platform, NULL));
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &device, NULL));
  char name[256] = "";
  CHECK(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL));
  printf("autosplit on %s\n", name);
  cl_int err;
  ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  CHECK(err);
  q = clCreateCommandQueue(ctx, device, 0, &err);
  CHECK(err);
  prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  CHECK(err);
  if (clBuildProgram(prog, 1, &device, NULL, NULL, NULL) != CL_SUCCESS) {
    char log[4096] = "";
    clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fprintf(stderr, "autosplit: build failed:\n%s\n", log);
    return 1;
  }
  vadd(scale);
  stencil(scale);
  matmul(scale);
  gather_scatter(scale);
  histogram(scale);
  wgsum(scale);
  inplace(scale);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return failures ? 1 : 0;
}
