/* A program shaped like the vendor SDKs' multi-GPU samples: the data is cut into one part
 * per device, and each part is driven by a host thread of its own (its own queue, buffers
 * and kernel: write, ITERS kernels, read), the threads joined at the end; then the same work
 * driven by the main thread alone, every device's commands enqueued without blocking and
 * the queues finished one after another. Both results are checked against the host (within
 * 1e-4: a device may fuse the multiply and add); the
 * times are printed side by side (doc/testing.md).
 *
 *   multidevice [N] [ITERS]   N: elements per device (default 1 << 20), ITERS: kernels per
 *                             part (default 20) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    cl_int e_ = (x);                                                                              \
    if (e_ != CL_SUCCESS) {                                                                       \
      fprintf(stderr, "multidevice: %s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_);             \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static const char *src = "__kernel void work(__global float *x, float k) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  float v = x[i];\n"
                         "  for (int j = 0; j < 64; j++)\n"
                         "    v = v * 0.999f + k;\n"
                         "  x[i] = v;\n"
                         "}\n";

static cl_context ctx;
static cl_program prog;
static cl_device_id devs[64];
static cl_uint ndevs;
static size_t n = (size_t)1 << 20;
static int iters = 20;
static float *data, *want;

struct part {
  cl_uint d;
  cl_command_queue q;
  cl_kernel k;
  cl_mem buf;
};

static void part_open(struct part *p, cl_uint d)
{
  cl_int err;
  p->d = d;
  p->q = clCreateCommandQueue(ctx, devs[d], 0, &err);
  CHECK(err);
  p->k = clCreateKernel(prog, "work", &err);
  CHECK(err);
  p->buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof *data, NULL, &err);
  CHECK(err);
  CHECK(clSetKernelArg(p->k, 0, sizeof p->buf, &p->buf));
}

/* Enqueues a part's work; blocking: its read waits. */
static void part_enqueue(struct part *p, cl_bool blocking)
{
  float *mine = data + (size_t)p->d * n;
  CHECK(clEnqueueWriteBuffer(p->q, p->buf, CL_FALSE, 0, n * sizeof *data, mine, 0, NULL, NULL));
  for (int i = 0; i < iters; i++) {
    float k = (float)(i + 1) * 0.001f;
    CHECK(clSetKernelArg(p->k, 1, sizeof k, &k));
    CHECK(clEnqueueNDRangeKernel(p->q, p->k, 1, NULL, &n, NULL, 0, NULL, NULL));
  }
  CHECK(clEnqueueReadBuffer(p->q, p->buf, blocking, 0, n * sizeof *data, mine, 0, NULL, NULL));
}

static void part_close(struct part *p)
{
  CHECK(clReleaseMemObject(p->buf));
  CHECK(clReleaseKernel(p->k));
  CHECK(clReleaseCommandQueue(p->q));
}

static void *thread_main(void *arg)
{
  struct part *p = arg;
  part_enqueue(p, CL_TRUE);
  return NULL;
}

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void fill(void)
{
  for (size_t i = 0; i < n * ndevs; i++)
    data[i] = (float)(i % 1000) * 0.01f;
}

static int check(const char *how)
{
  for (size_t i = 0; i < n * ndevs; i++)
    if (!(fabsf(data[i] - want[i]) <= 1e-4f * fabsf(want[i]) + 1e-6f)) {
      printf("multidevice: %s: element %zu is %.9g, expected %.9g\n", how, i, data[i], want[i]);
      return 0;
    }
  return 1;
}

int main(int argc, char **argv)
{
  if (argc > 1)
    n = (size_t)atol(argv[1]);
  if (argc > 2)
    iters = atoi(argv[2]);
  if (n < 1 || iters < 1) {
    fprintf(stderr, "usage: multidevice [N] [ITERS]\n");
    return 2;
  }
  cl_platform_id plat;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 64, devs, &ndevs));
  cl_int err;
  ctx = clCreateContext(NULL, ndevs, devs, NULL, NULL, &err);
  CHECK(err);
  prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 0, NULL, "", NULL, NULL));
  data = malloc(n * ndevs * sizeof *data);
  want = malloc(n * ndevs * sizeof *want);
  struct part *parts = calloc(ndevs, sizeof *parts);
  pthread_t *th = calloc(ndevs, sizeof *th);
  if (!data || !want || !parts || !th)
    return 1;
  /* The host's answer, in the same float operations. */
  fill();
  for (size_t i = 0; i < n * ndevs; i++) {
    float v = data[i];
    for (int it = 0; it < iters; it++) {
      float k = (float)(it + 1) * 0.001f;
      for (int j = 0; j < 64; j++)
        v = v * 0.999f + k;
    }
    want[i] = v;
  }
  for (cl_uint d = 0; d < ndevs; d++)
    part_open(&parts[d], d);
  /* A first pass of each kind warms the kernels up; the second is timed. */
  double t_threads = 0, t_one = 0;
  int ok = 1;
  for (int pass = 0; pass < 2; pass++) {
    fill();
    double t0 = now();
    for (cl_uint d = 0; d < ndevs; d++)
      if (pthread_create(&th[d], NULL, thread_main, &parts[d]) != 0) {
        fprintf(stderr, "multidevice: pthread_create failed\n");
        return 1;
      }
    for (cl_uint d = 0; d < ndevs; d++)
      pthread_join(th[d], NULL);
    t_threads = now() - t0;
    ok &= check("a thread per device");
    fill();
    t0 = now();
    for (cl_uint d = 0; d < ndevs; d++)
      part_enqueue(&parts[d], CL_FALSE);
    for (cl_uint d = 0; d < ndevs; d++)
      CHECK(clFinish(parts[d].q));
    t_one = now() - t0;
    ok &= check("one thread");
  }
  printf("%s multidevice: %u device(s), %zu elements each, %d kernels: a thread per device "
         "%.3f ms, one thread %.3f ms, ratio %.2f\n",
         ok ? "ok" : "not ok", ndevs, n, iters, t_threads * 1e3, t_one * 1e3, t_one / t_threads);
  for (cl_uint d = 0; d < ndevs; d++)
    part_close(&parts[d]);
  CHECK(clReleaseProgram(prog));
  CHECK(clReleaseContext(ctx));
  free(parts);
  free(th);
  free(data);
  free(want);
  return ok ? 0 : 1;
}
