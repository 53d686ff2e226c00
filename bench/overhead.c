/* Tutti's cost over its backend, in one process: the same work through the backend's own
 * platform (the baseline) and through Tutti, alternating, several rounds.
 *   - kernel-bound: a compute-heavy kernel; the ratio Tutti/baseline (target: within 1%).
 *   - tiny commands: a stream of 1-work-item kernels and of 4-byte writes; the extra time
 *     per command in microseconds (target: under 2 us).
 * The loader must show both platforms: bench/run-overhead.sh sets that up.
 * Usage: overhead [--baseline NAME] [--rounds N] [--tiny N] [--heavy ITERS] [--items N]
 * (a GPU needs more work to be kernel-bound: --heavy 200000 --items 4194304) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *src =
    "__kernel void heavy(__global float *x, int iters) {\n"
    "  size_t i = get_global_id(0); float a = x[i], b = 1.0001f;\n"
    "  for (int k = 0; k < iters; k++) { a = a * b + 0.0001f; b = b * 0.99999f + 0.00001f; }\n"
    "  x[i] = a + b;\n"
    "}\n"
    "__kernel void tiny(__global int *x) { x[get_global_id(0)] += 1; }\n";

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    cl_int e_ = (x);                                                                              \
    if (e_ != CL_SUCCESS) {                                                                       \
      fprintf(stderr, "overhead: %s failed: %d (line %d)\n", #x, e_, __LINE__);                  \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

#define MAXDEV 8

/* One device of a platform in a context of its own (--devices opens one per device: PoCL 5
 * aborts in its kernel cache when one program runs on two devices of a context). */
struct setup {
  cl_context ctx;
  cl_command_queue q;
  cl_kernel heavy, tiny;
  cl_mem big, small;
};

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Device `which` of platform p. */
static void open_platform(cl_platform_id p, struct setup *s, size_t nbig, cl_uint which)
{
  cl_device_id ds[MAXDEV], d;
  cl_uint have = 0;
  cl_int err;
  CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, MAXDEV, ds, &have));
  if (have <= which) {
    fprintf(stderr, "overhead: --devices %u but the platform shows %u (POCL_DEVICES=\"pthread "
                    "pthread\" shows two)\n", which + 1, have);
    exit(1);
  }
  d = ds[which];
  s->ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
  CHECK(err);
  s->q = clCreateCommandQueue(s->ctx, d, 0, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(s->ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
  s->heavy = clCreateKernel(prog, "heavy", &err);
  CHECK(err);
  s->tiny = clCreateKernel(prog, "tiny", &err);
  CHECK(err);
  clReleaseProgram(prog);
  s->big = clCreateBuffer(s->ctx, 0, nbig * sizeof(float), NULL, &err);
  CHECK(err);
  s->small = clCreateBuffer(s->ctx, 0, 64, NULL, &err);
  CHECK(err);
  float zero = 0;
  CHECK(clEnqueueFillBuffer(s->q, s->big, &zero, sizeof zero, 0, nbig * sizeof(float), 0, NULL, NULL));
  CHECK(clEnqueueFillBuffer(s->q, s->small, &zero, sizeof zero, 0, 64, 0, NULL, NULL));
  CHECK(clFinish(s->q));
}

/* The heavy kernel on ndev devices at once (s[0..ndev-1]), n items each. */
static double run_heavy_on(struct setup *s, cl_uint ndev, size_t n, int iters)
{
  for (cl_uint i = 0; i < ndev; i++) {
    CHECK(clSetKernelArg(s[i].heavy, 0, sizeof s[i].big, &s[i].big));
    CHECK(clSetKernelArg(s[i].heavy, 1, sizeof iters, &iters));
  }
  double t = now();
  for (cl_uint i = 0; i < ndev; i++) {
    CHECK(clEnqueueNDRangeKernel(s[i].q, s[i].heavy, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clFlush(s[i].q));
  }
  for (cl_uint i = 0; i < ndev; i++)
    CHECK(clFinish(s[i].q));
  return now() - t;
}

static double run_heavy(struct setup *s, size_t n, int iters)
{
  return run_heavy_on(s, 1, n, iters);
}

static double run_tiny_kernels(struct setup *s, int count)
{
  size_t one = 1;
  CHECK(clSetKernelArg(s->tiny, 0, sizeof s->small, &s->small));
  double t = now();
  for (int i = 0; i < count; i++)
    CHECK(clEnqueueNDRangeKernel(s->q, s->tiny, 1, NULL, &one, NULL, 0, NULL, NULL));
  CHECK(clFinish(s->q));
  return (now() - t) / count;
}

static double run_tiny_writes(struct setup *s, int count)
{
  static int v = 1;
  double t = now();
  for (int i = 0; i < count; i++)
    CHECK(clEnqueueWriteBuffer(s->q, s->small, CL_FALSE, (i % 16) * sizeof(int), sizeof v, &v, 0, NULL, NULL));
  CHECK(clFinish(s->q));
  return (now() - t) / count;
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
  qsort(v, n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
  const char *baseline = NULL;
  const char *only = NULL;
  int rounds = 9, tiny = 20000, iters = 20000;
  cl_uint ndev = 1;
  size_t nheavy = 1 << 16;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--baseline") && i + 1 < argc)
      baseline = argv[++i];
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--tiny") && i + 1 < argc)
      tiny = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--heavy") && i + 1 < argc)
      iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--items") && i + 1 < argc)
      nheavy = strtoul(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--devices") && i + 1 < argc)
      ndev = (cl_uint)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc &&
             (!strcmp(argv[i + 1], "tutti") || !strcmp(argv[i + 1], "baseline")))
      only = argv[++i];
    else {
      fprintf(stderr, "usage: overhead [--baseline NAME] [--rounds N] [--tiny N] [--heavy ITERS] "
                      "[--items N] [--only tutti|baseline [--devices N]]\n");
      return 2;
    }
  }
  if (ndev < 1 || ndev > MAXDEV) {
    fprintf(stderr, "overhead: --devices takes 1 to %d\n", MAXDEV);
    return 2;
  }
  if (rounds < 1 || rounds > 99)
    rounds = 9;
  cl_platform_id ps[8], tutti = NULL, base = NULL;
  cl_uint n = 0;
  CHECK(clGetPlatformIDs(8, ps, &n));
  char tname[128] = "", bname[128] = "";
  for (cl_uint i = 0; i < n && i < 8; i++) {
    char name[128];
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (!strcmp(name, "Tutti")) {
      tutti = ps[i];
      strcpy(tname, name);
    } else if (!base && (!baseline || strstr(name, baseline))) {
      base = ps[i];
      strcpy(bname, name);
    }
  }
  if (only) {
    /* One platform alone, the kernel-bound case only: for comparing runs made apart (Tutti
     * under tutti-run, the backend without it; bench/run-binding.sh). */
    cl_platform_id p = !strcmp(only, "tutti") ? tutti : base;
    if (!p) {
      fprintf(stderr, "overhead: the loader shows no %s platform\n", only);
      return 1;
    }
    struct setup s1[MAXDEV];
    size_t share = nheavy / ndev;
    for (cl_uint i = 0; i < ndev; i++)
      open_platform(p, &s1[i], share, i);
    run_heavy_on(s1, ndev, share, 10);
    double h[99];
    for (int r = 0; r < rounds; r++)
      h[r] = run_heavy_on(s1, ndev, share, iters);
    printf("kernel-bound %s, %u device(s): %.4f s\n", only, ndev, median(h, rounds));
    fflush(stdout);
    return 0;
  }
  if (!tutti || !base) {
    fprintf(stderr, "overhead: the loader must show Tutti and the baseline platform "
                    "(found Tutti: %s, baseline: %s); see bench/run-overhead.sh\n",
            tutti ? "yes" : "no", base ? bname : "no");
    return 1;
  }
  struct setup sb, st;
  open_platform(base, &sb, nheavy, 0);
  open_platform(tutti, &st, nheavy, 0);
  /* Warm up both (first launches compile and allocate). */
  run_heavy(&sb, nheavy, 10);
  run_heavy(&st, nheavy, 10);
  run_tiny_kernels(&sb, 100);
  run_tiny_kernels(&st, 100);
  double hb[99], ht[99], kb[99], kt[99], wb[99], wt[99];
  for (int r = 0; r < rounds; r++) {
    /* Alternate which goes first, so drift hits both alike. */
    struct setup *first = r % 2 ? &st : &sb, *second = r % 2 ? &sb : &st;
    double h1 = run_heavy(first, nheavy, iters), h2 = run_heavy(second, nheavy, iters);
    double k1 = run_tiny_kernels(first, tiny), k2 = run_tiny_kernels(second, tiny);
    double w1 = run_tiny_writes(first, tiny), w2 = run_tiny_writes(second, tiny);
    hb[r] = r % 2 ? h2 : h1, ht[r] = r % 2 ? h1 : h2;
    kb[r] = r % 2 ? k2 : k1, kt[r] = r % 2 ? k1 : k2;
    wb[r] = r % 2 ? w2 : w1, wt[r] = r % 2 ? w1 : w2;
  }
  double mhb = median(hb, rounds), mht = median(ht, rounds);
  double mkb = median(kb, rounds), mkt = median(kt, rounds);
  double mwb = median(wb, rounds), mwt = median(wt, rounds);
  printf("baseline: %s; %d rounds, medians\n", bname, rounds);
  printf("kernel-bound   : baseline %8.4f s   tutti %8.4f s   ratio tutti/baseline %.4f\n", mhb,
         mht, mht / mhb);
  printf("tiny kernels   : baseline %8.3f us  tutti %8.3f us  ratio %.3f  overhead %+.3f us/command\n",
         mkb * 1e6, mkt * 1e6, mkt / mkb, (mkt - mkb) * 1e6);
  printf("tiny writes    : baseline %8.3f us  tutti %8.3f us  ratio %.3f  overhead %+.3f us/command\n",
         mwb * 1e6, mwt * 1e6, mwt / mwb, (mwt - mwb) * 1e6);
  return 0;
}
