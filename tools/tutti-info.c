/* tutti-info: the Tutti platform and its device table, like `clinfo -l` plus the owning
 * rank, host and backend of every device. It reaches Tutti through the ICD loader, pointed
 * at Tutti's vendor file unless the environment already names one. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
  fprintf(f, "Usage: tutti-info [-h|--help]\n"
             "Lists the Tutti platform and every device of the job (run it under tutti-run to\n"
             "see every rank's devices), with the rank, host and backend of each.\n");
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

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
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
  if (rank != 0)
    return 0; /* one table for the whole job: rank 0 prints it */
  printf("Platform: Tutti (%s), %d rank%s\n", version, ranks, ranks == 1 ? "" : "s");
  cl_uint nd = 0;
  cl_int err = clGetDeviceIDs(tutti, CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
  if (err == CL_DEVICE_NOT_FOUND || nd == 0) {
    printf("  no devices: Tutti found no OpenCL backend (see the message above)\n");
    return 1;
  }
  cl_device_id *ds = calloc(nd, sizeof *ds);
  clGetDeviceIDs(tutti, CL_DEVICE_TYPE_ALL, nd, ds, NULL);
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
  free(ds);
  return 0;
}
