/* tutti-info: the Tutti platform and its device table, like `clinfo -l` plus the owning
 * rank, host and backend of every device. It reaches Tutti through the ICD loader, pointed
 * at Tutti's vendor file unless the environment already names one. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <stdio.h>

#include "annotations/annotation.h"
#include "annotations/derive.h"
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
  fprintf(f, "Usage: tutti-info [--check] [-h|--help]\n"
             "       tutti-info --annotate FILE.cl [-DNAME[=VALUE]] [-IDIR] [-cl-std=CLx.y]\n"
             "Lists the Tutti platform and every device of the job (run it under tutti-run to\n"
             "see every rank's devices), with the rank, host, backend and memory of each.\n"
             "  --check     also check the installation: the backends each rank found, and a\n"
             "              kernel run on every device with the data passed from device to device\n"
             "              (and so between every rank and host of the job, over MPI)\n"
             "  --annotate  print, for each kernel of FILE.cl built with the options given, the\n"
             "              #pragma tutti line Tutti derives from its code and how its launches\n"
             "              split (derived regions, merged writes), or why it runs whole: lines\n"
             "              to paste into the source and edit (needs libclang)\n");
}

/* Points the ICD loader at Tutti's vendor file: $TUTTI_ICD, else the one installed beside
 * this program (a relocated prefix), else the configured one. OCL_ICD_VENDORS wins if set. */
static void point_loader_at_tutti(void)
{
  const char *v = getenv("OCL_ICD_VENDORS");
  if (v && *v)
    return;
  char icd[4096] = "";
  const char *given = getenv("TUTTI_ICD");
  if (given && *given) {
    snprintf(icd, sizeof icd, "%s", given);
  } else {
    char exe[2048];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
      exe[n] = 0;
      char *slash = strrchr(exe, '/');
      if (slash)
        *slash = 0;
      snprintf(icd, sizeof icd, "%s/../etc/OpenCL/vendors/tutti.icd", exe);
      if (access(icd, R_OK) != 0)
        icd[0] = 0;
    }
    if (!icd[0])
      snprintf(icd, sizeof icd, "%s", TT_ICDDIR "/tutti.icd");
  }
  setenv("OCL_ICD_VENDORS", icd, 1);
  /* The Khronos loader reads library paths instead: take the one the vendor file names. */
  char lib[4096] = TT_LIBDIR "/libtutti.so";
  FILE *f = fopen(icd, "r");
  if (f) {
    if (fgets(lib, sizeof lib, f))
      lib[strcspn(lib, "\r\n")] = 0;
    fclose(f);
  }
  setenv("OCL_ICD_FILENAMES", lib, 1);
}

static const char *type_name(cl_device_type t)
{
  if (t & CL_DEVICE_TYPE_GPU)
    return "GPU";
  if (t & CL_DEVICE_TYPE_CPU)
    return "CPU";
  if (t & CL_DEVICE_TYPE_ACCELERATOR)
    return "accelerator";
  return "other";
}

static int is_tutti(cl_platform_id p)
{
  char name[64] = "";
  clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, NULL);
  return strcmp(name, "Tutti") == 0;
}

#define CHECKED(call, what)                                                                       \
  do {                                                                                            \
    cl_int e_ = (call);                                                                           \
    if (e_ != CL_SUCCESS) {                                                                       \
      if (rank == 0)                                                                              \
        printf("  FAILED: %s (error %d)\n", what, e_);                                            \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The installation check: every rank makes the same calls (Tutti's rule), rank 0 prints. */
/* Rank 0's backends and every rank's devices (a rank without one found no backend); 1 when
 * rank 0 has no backend. */
static int check_backends(cl_platform_id tutti, cl_device_id *ds, cl_uint nd, int ranks)
{
  char backends[4096] = "";
  clGetPlatformInfo(tutti, CL_PLATFORM_TUTTI_BACKENDS, sizeof backends, backends, NULL);
  int bad = 0;
  printf("\nChecks\n  backends of rank 0:\n");
  for (char *line = strtok(backends, "\n"); line; line = strtok(NULL, "\n"))
    printf("    %s\n", line);
  if (!backends[0]) {
    printf("  FAILED: rank 0 found no backend (install PoCL or a GPU driver, or set "
           "TUTTI_BACKEND_LIBS)\n");
    bad = 1;
  }
  for (int r = 0; r < ranks; r++) {
    cl_uint mine = 0;
    char host[64] = "?";
    for (cl_uint i = 0; i < nd; i++) {
      cl_int owner = -1;
      clGetDeviceInfo(ds[i], CL_DEVICE_TUTTI_RANK, sizeof owner, &owner, NULL);
      if (owner == r && mine++ == 0)
        clGetDeviceInfo(ds[i], CL_DEVICE_TUTTI_HOST, sizeof host, host, NULL);
    }
    if (mine)
      printf("  rank %d on %s: %u device%s\n", r, host, mine, mine == 1 ? "" : "s");
    else
      printf("  WARNING: rank %d has no device: it found no backend (its node lacks a driver, "
             "or TUTTI_BACKENDS left none)\n", r);
  }
  return bad;
}

static int check(cl_platform_id tutti, cl_device_id *ds, cl_uint nd, int rank, int ranks)
{
  int bad = rank == 0 ? check_backends(tutti, ds, nd, ranks) : 0;
  if (nd == 0)
    return 1;
  /* A ring through every device: write on device 0, then on each device copy the previous
   * device's buffer in (a transfer between ranks where the owners differ) and add one with
   * a kernel; the last buffer must hold the pattern plus the number of devices. */
  static const char *src =
      "__kernel void add_one(__global int *a) { a[get_global_id(0)] += 1; }\n";
  enum { N = 1 << 18 };
  static int host[N];
  for (int i = 0; i < N; i++)
    host[i] = i * 7 + 3;
  cl_int err;
  double t0 = now_ms();
  cl_context ctx = clCreateContext(NULL, nd, ds, NULL, NULL, &err);
  CHECKED(err, "creating a context of every device");
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECKED(err, "creating a program");
  err = clBuildProgram(prog, 0, NULL, NULL, NULL, NULL);
  CHECKED(err, "building a kernel for every device (a backend's compiler failed)");
  cl_kernel k = clCreateKernel(prog, "add_one", &err);
  CHECKED(err, "creating a kernel");
  cl_mem *b = calloc(nd, sizeof *b);
  cl_command_queue *q = calloc(nd, sizeof *q);
  int hops_between_ranks = 0;
  for (cl_uint i = 0; i < nd; i++) {
    q[i] = clCreateCommandQueue(ctx, ds[i], 0, &err);
    CHECKED(err, "creating a queue");
    b[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECKED(err, "creating a buffer");
    if (i == 0) {
      CHECKED(clEnqueueWriteBuffer(q[0], b[0], CL_FALSE, 0, sizeof host, host, 0, NULL, NULL),
              "writing to device 0");
    } else {
      cl_int o1 = 0, o2 = 0;
      clGetDeviceInfo(ds[i - 1], CL_DEVICE_TUTTI_RANK, sizeof o1, &o1, NULL);
      clGetDeviceInfo(ds[i], CL_DEVICE_TUTTI_RANK, sizeof o2, &o2, NULL);
      hops_between_ranks += o1 != o2;
      CHECKED(clEnqueueCopyBuffer(q[i], b[i - 1], b[i], 0, 0, sizeof host, 0, NULL, NULL),
              "copying from the previous device");
    }
    size_t global = N;
    CHECKED(clSetKernelArg(k, 0, sizeof b[i], &b[i]), "setting the kernel's argument");
    CHECKED(clEnqueueNDRangeKernel(q[i], k, 1, NULL, &global, NULL, 0, NULL, NULL),
            "running the kernel");
  }
  static int back[N];
  CHECKED(clEnqueueReadBuffer(q[nd - 1], b[nd - 1], CL_TRUE, 0, sizeof back, back, 0, NULL,
                              NULL), "reading the last device's buffer");
  double ms = now_ms() - t0;
  int wrong = 0;
  for (int i = 0; i < N; i++)
    wrong += back[i] != host[i] + (int)nd;
  if (rank == 0) {
    if (wrong)
      printf("  FAILED: a kernel on each of %u devices, the data passed along them: %d of %d "
             "values wrong\n", nd, wrong, N);
    else
      printf("  ok: a kernel on each of %u devices, %d KiB passed along them (%d times between "
             "ranks, over MPI): right, in %.1f ms\n", nd, (int)(sizeof host / 1024),
             hops_between_ranks, ms);
  }
  for (cl_uint i = 0; i < nd; i++) {
    clReleaseMemObject(b[i]);
    clReleaseCommandQueue(q[i]);
  }
  free(b);
  free(q);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  return bad || wrong;
}

/* The CUDA device of one that takes the copy engines (how: its CL_DEVICE_TUTTI_GPU_COPIES). */
static int cuda_number(const char *how)
{
  int n = -1;
  return sscanf(how, "copy engines of CUDA device %d", &n) == 1 ? n : -1;
}

/* Whether a device that takes the copy engines (how: its CL_DEVICE_TUTTI_GPU_COPIES) has
 * peer access to the one whose answer is other's: "..., without peer access to CUDA devices
 * J K" lists those it lacks. */
static bool peer_access(const char *how, const char *other)
{
  static const char lacks[] = "without peer access to CUDA devices";
  int them = cuda_number(other);
  const char *list = strstr(how, lacks);
  if (!list || them < 0)
    return true;
  for (char *p = (char *)list + sizeof lacks - 1, *end; *p; p = end) {
    long j = strtol(p, &end, 10);
    if (end == p)
      break;
    if (j == them)
      return false;
  }
  return true;
}

/* How bytes move between each pair of the job's GPUs (CL_DEVICE_TUTTI_GPU_COPIES): by the
 * copy engines between GPUs of one host that both take that path and have peer access to
 * each other, else through host memory (and MPI between ranks), with the reason. */
static void gpu_copies(const cl_device_id *ds, cl_uint nd)
{
  enum { MAX_PAIRS = 32 };
  cl_uint gpus[256], ng = 0, shown = 0, pairs = 0;
  for (cl_uint i = 0; i < nd && ng < 256; i++) {
    cl_device_type t = 0;
    clGetDeviceInfo(ds[i], CL_DEVICE_TYPE, sizeof t, &t, NULL);
    if (t & CL_DEVICE_TYPE_GPU)
      gpus[ng++] = i;
  }
  if (ng == 0)
    return;
  printf("\nCopies between GPUs\n");
  static char how[256][160], host[256][64];
  cl_int rank[256];
  for (cl_uint k = 0; k < ng; k++) {
    how[k][0] = host[k][0] = 0;
    rank[k] = 0;
    clGetDeviceInfo(ds[gpus[k]], CL_DEVICE_TUTTI_GPU_COPIES, sizeof how[k], how[k], NULL);
    clGetDeviceInfo(ds[gpus[k]], CL_DEVICE_TUTTI_HOST, sizeof host[k], host[k], NULL);
    clGetDeviceInfo(ds[gpus[k]], CL_DEVICE_TUTTI_RANK, sizeof rank[k], &rank[k], NULL);
  }
  if (ng == 1)
    printf("  dev %u: the only GPU (%s)\n", gpus[0], how[0]);
  for (cl_uint a = 0; a < ng; a++)
    for (cl_uint b = a + 1; b < ng; b++, pairs++) {
      if (shown == MAX_PAIRS)
        continue;
      shown++;
      bool engines_a = !strncmp(how[a], "copy engines", 12);
      bool engines_b = !strncmp(how[b], "copy engines", 12);
      printf("  dev %u <-> dev %u: ", gpus[a], gpus[b]);
      if (strcmp(host[a], host[b]) != 0)
        printf("through host memory and MPI (different hosts)\n");
      else if (engines_a && engines_b && peer_access(how[a], how[b]))
        printf("copy engines (dev %u: %s; dev %u: %s)\n", gpus[a], how[a] + 13, gpus[b],
               how[b] + 13);
      else if (engines_a && engines_b)
        printf("through host memory%s: CUDA devices %d and %d have no peer access (dev %u, "
               "dev %u)\n", rank[a] != rank[b] ? " and MPI" : "", cuda_number(how[a]),
               cuda_number(how[b]), gpus[a], gpus[b]);
      else {
        /* The reason of a device that does not take the copy engines. */
        cl_uint k = engines_a ? b : a;
        const char *why = strchr(how[k], ':');
        printf("through host memory%s: %s (dev %u)\n", rank[a] != rank[b] ? " and MPI" : "",
               why ? why + 2 : how[k], gpus[k]);
      }
    }
  if (pairs > shown)
    printf("  ... and %u more pairs\n", pairs - shown);
}

/* --annotate: the derived annotation of every kernel of a source file (doc/split.md,
 * "Automatic splitting"), printed as the pragma lines to paste. No OpenCL, no MPI. */
static int annotate(int argc, char **argv, int at)
{
  if (at >= argc) {
    usage(stderr);
    return 2;
  }
  const char *path = argv[at];
  char options[4096] = "";
  for (int i = at + 1; i < argc; i++) {
    if (strncmp(argv[i], "-D", 2) && strncmp(argv[i], "-I", 2) && strncmp(argv[i], "-cl-std=", 8)) {
      fprintf(stderr, "tutti-info: --annotate takes -D, -I and -cl-std options, not '%s'\n",
              argv[i]);
      return 2;
    }
    size_t n = strlen(options);
    snprintf(options + n, sizeof options - n, "%s%s", n ? " " : "", argv[i]);
  }
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "tutti-info: cannot read %s\n", path);
    return 1;
  }
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap);
  for (size_t got; text && (got = fread(text + len, 1, cap - len - 1, f)) > 0;) {
    len += got;
    if (len + 1 == cap) {
      char *g = realloc(text, cap *= 2);
      if (!g)
        free(text);
      text = g;
    }
  }
  fclose(f);
  if (!text)
    return 1;
  text[len] = 0;
  char why[512];
  const struct tt_clang *cx = tt_clang_open(getenv("TUTTI_LIBCLANG"), why, sizeof why);
  if (!cx) {
    fprintf(stderr, "tutti-info: %s: without it, Tutti merges the writes of kernels that use "
                    "no atomics (doc/split.md)\n", why);
    free(text);
    return 1;
  }
  struct tt_ann_pragma *pr = NULL;
  size_t npr = 0;
  char *src = tt_ann_strip(text, &pr, &npr);
  struct tt_derived *d = NULL;
  long nd = src ? tt_derive(cx, src, options, &d, why, sizeof why) : -1;
  if (nd < 0) {
    fprintf(stderr, "tutti-info: %s: %s\n", path, src ? why : "out of memory");
    free(src);
    free(text);
    return 1;
  }
  for (long i = 0; i < nd; i++) {
    const char *written = NULL;
    for (size_t j = 0; j < npr; j++)
      if (pr[j].kernel && !strcmp(pr[j].kernel, d[i].name))
        written = pr[j].text;
    if (written) {
      printf("// kernel %s: annotated in the source (a written annotation comes first)\n"
             "#pragma tutti kernel %s %s\n", d[i].name, d[i].name, written);
    } else if (d[i].tier == TT_TIER_WHOLE) {
      printf("// kernel %s: runs whole: %s\n", d[i].name, d[i].why);
    } else {
      printf("// kernel %s: %s%s%s\n#pragma tutti kernel %s %s\n", d[i].name,
             d[i].tier == TT_TIER_REGIONS ? "derived regions (tier 1)" : "merged writes (tier 2)",
             d[i].tier == TT_TIER_MERGED ? ": " : "", d[i].tier == TT_TIER_MERGED ? d[i].why : "",
             d[i].name, d[i].text);
    }
  }
  tt_derived_free(d, (size_t)nd);
  tt_ann_pragmas_free(pr, npr);
  free(src);
  free(text);
  return 0;
}

int main(int argc, char **argv)
{
  int do_check = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--annotate"))
      return annotate(argc, argv, i + 1);
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--check")) {
      do_check = 1;
      continue;
    }
    fprintf(stderr, "tutti-info: unknown option '%s'\n", argv[i]);
    usage(stderr);
    return 2;
  }
  point_loader_at_tutti();
  cl_uint n = 0;
  cl_platform_id ps[16];
  if (clGetPlatformIDs(16, ps, &n) != CL_SUCCESS || n == 0) {
    fprintf(stderr, "tutti-info: the ICD loader found no platform: is Tutti installed? "
                    "(OCL_ICD_VENDORS=%s)\n", getenv("OCL_ICD_VENDORS"));
    return 1;
  }
  cl_platform_id tutti = NULL;
  for (cl_uint i = 0; i < n && i < 16; i++)
    if (is_tutti(ps[i]))
      tutti = ps[i];
  if (!tutti) {
    fprintf(stderr, "tutti-info: no Tutti platform among the %u the loader found\n", n);
    return 1;
  }
  char version[128] = "";
  cl_int ranks = 1, rank = 0;
  clGetPlatformInfo(tutti, CL_PLATFORM_VERSION, sizeof version, version, NULL);
  clGetPlatformInfo(tutti, CL_PLATFORM_TUTTI_RANKS, sizeof ranks, &ranks, NULL);
  clGetPlatformInfo(tutti, CL_PLATFORM_TUTTI_RANK, sizeof rank, &rank, NULL);
  cl_uint nd = 0;
  cl_int err = clGetDeviceIDs(tutti, CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
  cl_device_id *ds = calloc(nd ? nd : 1, sizeof *ds);
  if (nd)
    clGetDeviceIDs(tutti, CL_DEVICE_TYPE_ALL, nd, ds, NULL);
  if (rank != 0) {
    /* One table for the whole job: rank 0 prints it. */
    int status = do_check ? check(tutti, ds, nd, rank, ranks) : 0;
    free(ds);
    return status;
  }
  printf("Platform: Tutti (%s), %d rank%s\n", version, ranks, ranks == 1 ? "" : "s");
  if (err == CL_DEVICE_NOT_FOUND || nd == 0) {
    printf("  no devices: Tutti found no OpenCL backend (see the message above)\n");
    if (do_check)
      check(tutti, ds, nd, rank, ranks);
    return 1;
  }
  printf("  %-4s %-5s %-20s %-8s %-12s %-9s %s\n", "dev", "rank", "host", "backend", "type",
         "memory", "name");
  for (cl_uint i = 0; i < nd; i++) {
    char name[256] = "", host[64] = "", backend[32] = "";
    cl_int owner = 0;
    cl_device_type t = 0;
    cl_ulong mem = 0;
    clGetDeviceInfo(ds[i], CL_DEVICE_NAME, sizeof name, name, NULL);
    clGetDeviceInfo(ds[i], CL_DEVICE_TUTTI_HOST, sizeof host, host, NULL);
    clGetDeviceInfo(ds[i], CL_DEVICE_TUTTI_BACKEND, sizeof backend, backend, NULL);
    clGetDeviceInfo(ds[i], CL_DEVICE_TUTTI_RANK, sizeof owner, &owner, NULL);
    clGetDeviceInfo(ds[i], CL_DEVICE_TYPE, sizeof t, &t, NULL);
    clGetDeviceInfo(ds[i], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    printf("  %-4u %-5d %-20s %-8s %-12s %6.1fGiB %s\n", i, owner, host, backend, type_name(t),
           mem / 1073741824.0, name);
  }
  gpu_copies(ds, nd);
  fflush(stdout);
  int status = do_check ? check(tutti, ds, nd, rank, ranks) : 0;
  free(ds);
  return status;
}
