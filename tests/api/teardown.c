/* A benchmark-like program with many programs and kernels on every device, checked, then torn
 * down in one of the orders real applications use (issue 13): the process must end cleanly
 * whatever the order, and objects never released are fine at exit.
 *
 *   teardown ORDER
 *     kernels-first   kernels, then programs, then queues; context, buffers, events left alive
 *     programs-first  programs while their kernels live (a kernel keeps its program: it is
 *                     launched again after its program's release), then kernels, then queues
 *     context-first   the context first, then buffers, kernels, programs, queues
 *     nothing         nothing released; the last launches are flushed, never waited for
 */
#include "tests/app.h"
#include <string.h>

enum { PROGRAMS = 6, KERNELS = 3, N = 4096 };

static const char *src_fmt =
    "__kernel void add%d(__global int *x, int v) { x[get_global_id(0)] += v + %d; }\n"
    "__kernel void mul%d(__global int *x, int v) { x[get_global_id(0)] *= v; }\n"
    "__kernel void shift%d(__global int *x) { x[get_global_id(0)] -= %d; }\n";

struct unit { /* one program of three kernels, and its buffer, on one device */
  cl_program prog;
  cl_kernel k[KERNELS];
  cl_mem buf;
};

static void launch(struct app *a, cl_uint d, struct unit *u, int p, cl_event *ev)
{
  size_t n = N;
  int v = p + 2;
  for (int k = 0; k < KERNELS; k++) {
    CHECK(clSetKernelArg(u->k[k], 0, sizeof u->buf, &u->buf));
    if (k < 2)
      CHECK(clSetKernelArg(u->k[k], 1, sizeof v, &v));
    CHECK(clEnqueueNDRangeKernel(a->qs[d], u->k[k], 1, NULL, &n, NULL, 0, NULL,
                                 k == KERNELS - 1 ? ev : NULL));
  }
}

/* x -> ((x + v + p) * v) - p for every element, as launch() computes it */
static int expect(int x, int p)
{
  int v = p + 2;
  return (x + v + p) * v - p;
}

static void verify(struct app *a, cl_uint d, struct unit *u, int p, int rounds)
{
  static int got[N];
  CHECK(clEnqueueReadBuffer(a->qs[d], u->buf, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
  for (int i = 0; i < N; i++) {
    int want = i;
    for (int r = 0; r < rounds; r++)
      want = expect(want, p);
    if (got[i] != want) {
      fprintf(stderr, "teardown: device %u program %d element %d: %d, expected %d\n", d, p, i,
              got[i], want);
      exit(1);
    }
  }
}

static void release_kernels(struct unit *u, size_t units)
{
  for (size_t i = 0; i < units; i++)
    for (int k = 0; k < KERNELS; k++)
      CHECK(clReleaseKernel(u[i].k[k]));
}

static void release_programs(struct unit *u, size_t units)
{
  for (size_t i = 0; i < units; i++)
    CHECK(clReleaseProgram(u[i].prog));
}

static void release_queues(struct app *a)
{
  for (cl_uint d = 0; d < a->ndev; d++)
    CHECK(clReleaseCommandQueue(a->qs[d]));
}

int main(int argc, char **argv)
{
  const char *order = argc > 1 ? argv[1] : "kernels-first";
  struct app a;
  cl_int err;
  app_open(&a);
  struct unit *u = calloc((size_t)a.ndev * PROGRAMS, sizeof *u);
  cl_event *last = calloc((size_t)a.ndev * PROGRAMS, sizeof *last);
  static int init[N];
  for (int i = 0; i < N; i++)
    init[i] = i;
  for (cl_uint d = 0; d < a.ndev; d++)
    for (int p = 0; p < PROGRAMS; p++) {
      struct unit *x = &u[d * PROGRAMS + p];
      char src[1024];
      const char *s = src;
      snprintf(src, sizeof src, src_fmt, p, p, p, p, p);
      x->prog = clCreateProgramWithSource(a.ctx, 1, &s, NULL, &err);
      CHECK(err);
      CHECK(clBuildProgram(x->prog, 1, &a.devs[d], "", NULL, NULL));
      const char *names[KERNELS] = {"add%d", "mul%d", "shift%d"};
      for (int k = 0; k < KERNELS; k++) {
        char name[32];
        snprintf(name, sizeof name, names[k], p);
        x->k[k] = clCreateKernel(x->prog, name, &err);
        CHECK(err);
      }
      x->buf = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof init, init,
                              &err);
      CHECK(err);
      launch(&a, d, x, p, &last[d * PROGRAMS + p]);
    }
  for (cl_uint d = 0; d < a.ndev; d++)
    for (int p = 0; p < PROGRAMS; p++)
      verify(&a, d, &u[d * PROGRAMS + p], p, 1);
  printf("teardown: %u device(s), %d programs each, results exact\n", a.ndev, PROGRAMS);
  fflush(stdout);

  size_t units = (size_t)a.ndev * PROGRAMS;
  if (!strcmp(order, "kernels-first")) {
    release_kernels(u, units);
    release_programs(u, units);
    release_queues(&a);
  } else if (!strcmp(order, "programs-first")) {
    release_programs(u, units);
    for (cl_uint d = 0; d < a.ndev; d++)
      for (int p = 0; p < PROGRAMS; p++)
        launch(&a, d, &u[d * PROGRAMS + p], p, NULL);
    for (cl_uint d = 0; d < a.ndev; d++)
      for (int p = 0; p < PROGRAMS; p++)
        verify(&a, d, &u[d * PROGRAMS + p], p, 2);
    release_kernels(u, units);
    release_queues(&a);
    printf("teardown: kernels launched again after their programs' release, exact\n");
  } else if (!strcmp(order, "context-first")) {
    CHECK(clReleaseContext(a.ctx));
    for (size_t i = 0; i < units; i++) {
      CHECK(clReleaseMemObject(u[i].buf));
      CHECK(clReleaseEvent(last[i]));
    }
    release_kernels(u, units);
    release_programs(u, units);
    release_queues(&a);
  } else if (!strcmp(order, "nothing")) {
    for (cl_uint d = 0; d < a.ndev; d++) {
      for (int p = 0; p < PROGRAMS; p++)
        launch(&a, d, &u[d * PROGRAMS + p], p, NULL);
      CHECK(clFlush(a.qs[d]));
    }
  } else {
    fprintf(stderr, "teardown: unknown order '%s'\n", order);
    return 2;
  }
  printf("teardown: %s done\n", order);
  return 0;
}
