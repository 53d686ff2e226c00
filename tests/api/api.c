/* API tests through the ICD loader: every entry point of the 1.2 dispatch table Tutti
 * implements, with its error cases. Prints TAP: one line per group. */
#include <stdint.h>

#include "tests/api/check.h"

int failures;

void fixture_open(struct fixture *f)
{
  memset(f, 0, sizeof *f);
  cl_uint n = 0;
  cl_platform_id ps[8];
  MUST(clGetPlatformIDs(8, ps, &n));
  for (cl_uint i = 0; i < n && i < 8; i++) {
    char name[64] = "";
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (!strcmp(name, "Tutti"))
      f->platform = ps[i];
  }
  if (!f->platform) {
    fprintf(stderr, "# the loader shows no Tutti platform (OCL_ICD_VENDORS=%s)\n",
            getenv("OCL_ICD_VENDORS"));
    exit(1);
  }
  MUST(clGetDeviceIDs(f->platform, CL_DEVICE_TYPE_ALL, 8, f->devs, &f->ndevs));
  cl_int err;
  f->ctx = clCreateContext(NULL, f->ndevs, f->devs, NULL, NULL, &err);
  MUST(err);
  for (cl_uint i = 0; i < f->ndevs; i++) {
    f->q[i] = clCreateCommandQueue(f->ctx, f->devs[i], CL_QUEUE_PROFILING_ENABLE, &err);
    MUST(err);
  }
}

void fixture_close(struct fixture *f)
{
  for (cl_uint i = 0; i < f->ndevs; i++) {
    OK(clFinish(f->q[i]));
    OK(clReleaseCommandQueue(f->q[i]));
  }
  OK(clReleaseContext(f->ctx));
}

void *fake_handle(struct fixture *f)
{
  static void *fake[16];
  fake[0] = *(void **)f->ctx;
  for (int i = 1; i < 16; i++)
    fake[i] = (void *)(uintptr_t)0x5a5a5a5a5a5a5a5aull;
  return fake;
}

cl_program build_source(struct fixture *f, const char *src)
{
  cl_int err;
  cl_program p = clCreateProgramWithSource(f->ctx, 1, &src, NULL, &err);
  MUST(err);
  err = clBuildProgram(p, 0, NULL, "", NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[4096] = "";
    clGetProgramBuildInfo(p, f->devs[0], CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fprintf(stderr, "# build failed: %s\n", log);
    exit(1);
  }
  return p;
}

static const struct {
  const char *name;
  void (*fn)(struct fixture *);
} groups[] = {
    {"platform", test_platform}, {"device", test_device},   {"context", test_context},
    {"queue", test_queue},       {"mem", test_mem},         {"program", test_program},
    {"kernel", test_kernel},     {"enqueue", test_enqueue}, {"consistency", test_consistency},
    {"event", test_event},       {"image", test_image},     {"native", test_native},
    {"subdevices", test_subdevices},
};

int main(int argc, char **argv)
{
  size_t n = sizeof groups / sizeof groups[0];
  printf("1..%zu\n", n);
  int total = 0;
  for (size_t i = 0; i < n; i++) {
    if (argc > 1 && strcmp(argv[1], groups[i].name) != 0) {
      printf("ok %zu - %s # SKIP not selected\n", i + 1, groups[i].name);
      continue;
    }
    struct fixture f;
    fixture_open(&f);
    failures = 0;
    groups[i].fn(&f);
    fixture_close(&f);
    printf("%s %zu - %s (%u device%s)\n", failures ? "not ok" : "ok", i + 1, groups[i].name,
           f.ndevs, f.ndevs == 1 ? "" : "s");
    fflush(stdout);
    total += failures;
  }
  return total ? 1 : 0;
}
