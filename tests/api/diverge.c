/* A host program that diverges on purpose: the rank named by DIVERGE_RANK (default: the
 * last one), read from the launcher's environment, enqueues one write more than the others
 * in its second round. Tutti must stop the job, naming that rank and the call. With
 * DIVERGE_MODE=build, kernels run on every device while that rank creates a kernel where
 * the others build a program: both exchange descriptions between the ranks, which must
 * not take each other's for their own (the job stops cleanly, with the divergence named).
 * With DIVERGE_MODE=thread the writes come from a thread the main thread's first thread made
 * (named "0.1.1" alike on every rank: the report names it). */
#include "tests/app.h"
#include "tests/launcher.h"

#include <pthread.h>
#include <string.h>

struct rounds {
  struct app *a;
  int rank, odd;
};

/* The rounds of writes, reads and finishes, with the divergence in the second. */
static void *writes(void *arg)
{
  struct rounds *r = arg;
  cl_uint ndev = r->a->ndev;
  cl_command_queue *qs = r->a->qs;
  cl_int err;
  enum { N = 1 << 16 };
  static int data[N], back[N];
  cl_mem buf = clCreateBuffer(r->a->ctx, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
  CHECK(err);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++)
      data[i] = i + round;
    cl_command_queue last = qs[ndev - 1];
    CHECK(clEnqueueWriteBuffer(last, buf, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL));
    if (round == 1 && r->rank == r->odd) /* the divergence */
      CHECK(clEnqueueWriteBuffer(qs[0], buf, CL_FALSE, 0, sizeof data / 2, data, 0, NULL, NULL));
    for (cl_uint d = 0; d < ndev; d++)
      CHECK(clFinish(qs[d]));
    CHECK(clEnqueueReadBuffer(qs[0], buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  }
  return NULL;
}

/* Thread "0.1": makes "0.1.1", which writes. */
static void *middle(void *arg)
{
  pthread_t t;
  if (pthread_create(&t, NULL, writes, arg) != 0 || pthread_join(t, NULL) != 0)
    exit(1);
  return NULL;
}

int main(void)
{
  const char *r = launcher_rank(), *s = launcher_size();
  int rank = r ? atoi(r) : 0, size = s ? atoi(s) : 1;
  const char *who = getenv("DIVERGE_RANK");
  int odd = who ? atoi(who) : size - 1;

  struct app a;
  app_open(&a);
  const char *mode = getenv("DIVERGE_MODE");
  if (mode && !strcmp(mode, "build")) {
    static const char *src =
        "__kernel void spin(__global int *x, int n) {\n"
        "  int v = 0;\n"
        "  for (int i = 0; i < n; i++) v = v * 3 + i;\n"
        "  x[get_global_id(0)] = v;\n"
        "}\n";
    cl_int err;
    cl_program p = clCreateProgramWithSource(a.ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(p, "spin", &err);
    CHECK(err);
    cl_mem m = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
    CHECK(err);
    int n = 1 << 22;
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    CHECK(clSetKernelArg(k, 1, sizeof n, &n));
    size_t gws = 64;
    for (cl_uint d = 0; d < a.ndev; d++) {
      CHECK(clEnqueueNDRangeKernel(a.qs[d], k, 1, NULL, &gws, NULL, 0, NULL, NULL));
      CHECK(clFlush(a.qs[d]));
    }
    /* A build that fails: its records (a negative status, a log) read as a kernel's
     * description would claim billions of arguments. */
    static const char *broken = "__kernel void broken(__global int *x) { x[0] = ; }\n";
    cl_program p2 = clCreateProgramWithSource(a.ctx, 1, &broken, NULL, &err);
    CHECK(err);
    if (rank == odd) {
      cl_kernel k2 = clCreateKernel(p, "spin", &err); /* the divergence */
      CHECK(err);
      clReleaseKernel(k2);
    } else if (clBuildProgram(p2, 0, NULL, NULL, NULL, NULL) == CL_SUCCESS) {
      fprintf(stderr, "diverge: a broken program built\n");
      return 1;
    }
    for (cl_uint d = 0; d < a.ndev; d++)
      CHECK(clFinish(a.qs[d]));
    printf("diverge: finished without being stopped\n");
    return 0;
  }
  struct rounds job = {&a, rank, odd};
  if (mode && !strcmp(mode, "thread")) {
    pthread_t t;
    if (pthread_create(&t, NULL, middle, &job) != 0 || pthread_join(t, NULL) != 0)
      return 1;
  } else {
    writes(&job);
  }
  printf("diverge: finished without being stopped\n");
  return 0;
}
