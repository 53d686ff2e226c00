/* Host programs with several threads (doc/cluster.md, "Host threads"): run by tutti-run on
 * every rank, ROUNDS times (default 50), each round with 4 host threads made afresh:
 *   - each thread builds its own program from one source (4 builds at once), makes its own
 *     queue on device t % n, its own buffer and kernel, and runs a chain of kernels and
 *     reads on it, checked against the host; the threads of distinct devices also build one
 *     program the main thread made, each for its own device, at once, and run its kernel;
 *   - a shared buffer goes round the threads: each adds its number to it on its own queue
 *     after the previous thread's kernel (its event handed over through a mutex), so the
 *     four kernels run one after another on up to four devices;
 *   - thread 0 makes a buffer, hands it to thread 1 and releases its reference while thread 1
 *     uses it; thread 1 releases the last one with its kernel and read still queued (the
 *     specification keeps a buffer while commands use it);
 *   - each thread takes the program's lock by spinning on pthread_mutex_trylock and makes a
 *     call under it: the order in which the threads got it, over all rounds, is printed as
 *     letters, so that tutti-run names a rank where it differs from rank 0's.
 * Prints one line per check; exit status 1 when any failed.
 *
 *   threads [ROUNDS] */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/api/check.h"

#define THREADS 4
#define N 4096
#define CHAIN 6

static const char *src = "__kernel void chain(__global int *x, int k) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  x[i] = x[i] * 3 + k + (int)i;\n"
                         "}\n"
                         "__kernel void add(__global int *x, int k) { x[get_global_id(0)] += k; }\n";

static cl_context ctx;
static cl_device_id devs[16];
static cl_uint ndevs;

/* The round's hand-overs between threads, under one mutex. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int turn;            /* the thread whose kernel on the shared buffer is next */
static cl_event shared_ev;  /* the last kernel on the shared buffer */
static cl_mem shared, given; /* the shared buffer; thread 0's buffer for thread 1 */
static cl_program common;    /* one program, built by each thread for its own device */
static pthread_barrier_t built;
static int failed[THREADS];
static unsigned long long got_order = 1469598103934665603ull; /* threads in lock order */

static void *work(void *arg)
{
  int t = (int)(long)arg;
  cl_device_id dev = devs[t % ndevs];
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  MUST(err);
  /* Threaded builds: every thread builds the same source at once. */
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  MUST(err);
  MUST(clBuildProgram(p, 1, &dev, "", NULL, NULL));
  cl_kernel step = clCreateKernel(p, "chain", &err);
  MUST(err);
  cl_kernel add = clCreateKernel(p, "add", &err);
  MUST(err);

  /* Own buffer, a chain of kernels, then a blocking read. */
  int *host = malloc(N * sizeof *host), *want = malloc(N * sizeof *want);
  for (int i = 0; i < N; i++)
    host[i] = want[i] = i * (t + 1);
  cl_mem mine = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * sizeof *host,
                               host, &err);
  MUST(err);
  size_t n = N;
  for (int k = 0; k < CHAIN; k++) {
    int kk = k + 10 * t;
    MUST(clSetKernelArg(step, 0, sizeof mine, &mine));
    MUST(clSetKernelArg(step, 1, sizeof kk, &kk));
    MUST(clEnqueueNDRangeKernel(q, step, 1, NULL, &n, NULL, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
      want[i] = want[i] * 3 + kk + i;
  }
  /* One program built for several devices from several threads at once (each for its own
   * device: the specification allows builds for other devices while one is under way, as
   * long as no kernel of the program exists: the kernels come once every build is done). */
  cl_kernel ck = NULL;
  if ((cl_uint)t < ndevs)
    MUST(clBuildProgram(common, 1, &dev, "", NULL, NULL));
  pthread_barrier_wait(&built);
  if ((cl_uint)t < ndevs) {
    ck = clCreateKernel(common, "add", &err);
    MUST(err);
    int five = 5;
    MUST(clSetKernelArg(ck, 0, sizeof mine, &mine));
    MUST(clSetKernelArg(ck, 1, sizeof five, &five));
    MUST(clEnqueueNDRangeKernel(q, ck, 1, NULL, &n, NULL, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
      want[i] += 5;
  }
  MUST(clEnqueueReadBuffer(q, mine, CL_TRUE, 0, N * sizeof *host, host, 0, NULL, NULL));
  if (memcmp(host, want, N * sizeof *host))
    failed[t] |= 1;

  /* The shared buffer, in thread order: each thread's kernel after the previous one's. */
  pthread_mutex_lock(&lock);
  while (turn != t)
    pthread_cond_wait(&changed, &lock);
  cl_event before = shared_ev, after;
  int k = t + 1;
  MUST(clSetKernelArg(add, 0, sizeof shared, &shared));
  MUST(clSetKernelArg(add, 1, sizeof k, &k));
  MUST(clEnqueueNDRangeKernel(q, add, 1, NULL, &n, NULL, before ? 1 : 0, before ? &before : NULL,
                               &after));
  MUST(clFlush(q));
  if (before)
    MUST(clReleaseEvent(before));
  shared_ev = after;
  turn++;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);

  /* A buffer released by its maker while another thread's commands still use it. */
  if (t == 0) {
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof *host, NULL, &err);
    MUST(err);
    int seven = 7;
    MUST(clEnqueueFillBuffer(q, b, &seven, sizeof seven, 0, N * sizeof *host, 0, NULL, NULL));
    MUST(clFinish(q));
    pthread_mutex_lock(&lock);
    given = b;
    MUST(clRetainMemObject(b)); /* thread 1's reference */
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    MUST(clReleaseMemObject(b));
  } else if (t == 1) {
    pthread_mutex_lock(&lock);
    while (!given)
      pthread_cond_wait(&changed, &lock);
    cl_mem b = given;
    pthread_mutex_unlock(&lock);
    int three = 3;
    MUST(clSetKernelArg(add, 0, sizeof b, &b));
    MUST(clSetKernelArg(add, 1, sizeof three, &three));
    MUST(clEnqueueNDRangeKernel(q, add, 1, NULL, &n, NULL, 0, NULL, NULL));
    MUST(clEnqueueReadBuffer(q, b, CL_FALSE, 0, N * sizeof *host, host, 0, NULL, NULL));
    MUST(clReleaseMemObject(b)); /* the last reference: the kernel and the read still use it */
    MUST(clFinish(q));
    for (int i = 0; i < N; i++)
      if (host[i] != 10)
        failed[t] |= 4;
  }

  /* The lock by trylock: every rank sees the threads get it in rank 0's order. */
  while (pthread_mutex_trylock(&lock) != 0)
    sched_yield();
  got_order = (got_order ^ (unsigned long long)(t + 1)) * 1099511628211ull;
  MUST(clSetKernelArg(add, 1, sizeof t, &t));
  pthread_mutex_unlock(&lock);

  MUST(clFinish(q));
  if (ck)
    MUST(clReleaseKernel(ck));
  MUST(clReleaseKernel(step));
  MUST(clReleaseKernel(add));
  MUST(clReleaseProgram(p));
  MUST(clReleaseMemObject(mine));
  MUST(clReleaseCommandQueue(q));
  free(host);
  free(want);
  return NULL;
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 50;
  cl_platform_id plat;
  MUST(clGetPlatformIDs(1, &plat, NULL));
  MUST(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 16, devs, &ndevs));
  cl_int err;
  ctx = clCreateContext(NULL, ndevs, devs, NULL, NULL, &err);
  MUST(err);
  cl_command_queue q0 = clCreateCommandQueue(ctx, devs[0], 0, &err);
  MUST(err);
  pthread_barrier_init(&built, NULL, THREADS);
  int bad = 0;
  for (int r = 0; r < rounds; r++) {
    int *host = calloc(N, sizeof *host);
    shared = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * sizeof *host, host,
                            &err);
    MUST(err);
    common = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    MUST(err);
    turn = 0;
    shared_ev = NULL;
    given = NULL;
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
      if (pthread_create(&th[t], NULL, work, (void *)(long)t) != 0) {
        fprintf(stderr, "threads: pthread_create failed\n");
        return 1;
      }
    for (int t = 0; t < THREADS; t++)
      pthread_join(th[t], NULL);
    MUST(clWaitForEvents(1, &shared_ev));
    MUST(clReleaseEvent(shared_ev));
    MUST(clEnqueueReadBuffer(q0, shared, CL_TRUE, 0, N * sizeof *host, host, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
      if (host[i] != 1 + 2 + 3 + 4)
        failed[0] |= 2;
    MUST(clReleaseMemObject(shared));
    MUST(clReleaseProgram(common));
    free(host);
    for (int t = 0; t < THREADS; t++)
      bad |= failed[t] << (3 * t);
  }
  char letters[14];
  for (int i = 0; i < 13; i++, got_order /= 26)
    letters[i] = (char)('a' + got_order % 26);
  letters[13] = 0;
  printf("%s threads: %d rounds of %d host threads over %u device(s) of this rank's platform, "
         "lock order %s\n",
         bad ? "not ok" : "ok", rounds, THREADS, ndevs, letters);
  if (bad)
    printf("# failed checks (3 bits per thread: own chain, shared buffer, given buffer): %#x\n",
           bad);
  MUST(clReleaseCommandQueue(q0));
  MUST(clReleaseContext(ctx));
  return bad ? 1 : 0;
}
